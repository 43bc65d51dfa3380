"""The adapted generator as a plain transformers folder: base weights with the LoRA adapter
folded in (for engines that cannot apply an adapter themselves, and vLLM's merge mode).

An adapter trained for the ``tagged`` or ``template`` mode carries its own tokenizer: the
base vocabulary plus the mode's tags or placeholders as whole tokens, whose embedding rows
the adapter trained. The base model is resized to that tokenizer before the adapter loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.safe_models import from_pretrained

TOKENIZER_FILE = "tokenizer_config.json"


def adds_tokens(adapter: Path | None) -> bool:
    """Whether ``adapter`` brings tokens of its own (a tokenizer saved beside it)."""
    return adapter is not None and (Path(adapter) / TOKENIZER_FILE).is_file()


def tokenizer_source(model: str | Path, adapter: Path | None) -> str | Path:
    """Where the generator's tokenizer is: the adapter's when it adds tokens, else the base's."""
    return adapter if adapter is not None and adds_tokens(adapter) else model


def load_adapted(
    model: str | Path, adapter: Path | None, full_width: bool = False, **load_kwargs: Any
) -> tuple[Any, Any]:
    """(tokenizer, base model with ``adapter`` merged in); the base is resized to the
    adapter's vocabulary first when the adapter adds tokens, and its output layer restricted
    to the adapter's ``vocabulary.json`` when it has one (``full_width``: widened back after
    the merge, for engines that mask to the set themselves)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from site_agent.adapt.output_vocabulary import (
        expand_output_layer,
        read_vocabulary,
        restrict_output_layer,
    )

    tokenizer = from_pretrained(AutoTokenizer, tokenizer_source(model, adapter))
    loaded: Any = from_pretrained(AutoModelForCausalLM, model, **load_kwargs)
    if adapter is None:
        return tokenizer, loaded
    from peft import PeftModel

    if adds_tokens(adapter):
        loaded.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    vocabulary = read_vocabulary(adapter)
    full_head = loaded.get_output_embeddings()
    if vocabulary is not None:
        restrict_output_layer(loaded, vocabulary)
    merged = PeftModel.from_pretrained(loaded, adapter).merge_and_unload()
    if vocabulary is not None and full_width:  # a tied head is the (merged) embedding
        expand_output_layer(merged, vocabulary, full_head.weight)
    return tokenizer, merged


def merge_adapter(model: str | Path, adapter: Path, out_dir: Path) -> Path:
    """Fold ``adapter`` into ``model``'s weights; save weights and tokenizer in ``out_dir``
    (a restricted output layer widened back to the full vocabulary)."""
    tokenizer, merged = load_adapted(model, adapter, full_width=True, dtype="auto")
    merged.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir
