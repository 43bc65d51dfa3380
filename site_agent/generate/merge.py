"""The adapted generator as a plain transformers folder: base weights with the LoRA adapter
folded in (for engines that cannot apply an adapter themselves, and vLLM's merge mode).

An adapter trained for the ``tagged`` or ``template`` mode carries its own tokenizer: the
base vocabulary plus the mode's tags or placeholders as whole tokens, whose embedding rows
the adapter trained. The base model is resized to that tokenizer before the adapter loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TOKENIZER_FILE = "tokenizer_config.json"


def adds_tokens(adapter: Path | None) -> bool:
    """Whether ``adapter`` brings tokens of its own (a tokenizer saved beside it)."""
    return adapter is not None and (Path(adapter) / TOKENIZER_FILE).is_file()


def tokenizer_source(model: str | Path, adapter: Path | None) -> str | Path:
    """Where the generator's tokenizer is: the adapter's when it adds tokens, else the base's."""
    return adapter if adapter is not None and adds_tokens(adapter) else model


def load_adapted(model: str | Path, adapter: Path | None, **load_kwargs: Any) -> tuple[Any, Any]:
    """(tokenizer, base model with ``adapter`` merged in); the base is resized to the
    adapter's vocabulary first when the adapter adds tokens."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_source(model, adapter))
    loaded: Any = AutoModelForCausalLM.from_pretrained(model, **load_kwargs)
    if adapter is None:
        return tokenizer, loaded
    from peft import PeftModel

    if adds_tokens(adapter):
        loaded.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    return tokenizer, PeftModel.from_pretrained(loaded, adapter).merge_and_unload()


def merge_adapter(model: str | Path, adapter: Path, out_dir: Path) -> Path:
    """Fold ``adapter`` into ``model``'s weights; save weights and tokenizer in ``out_dir``."""
    tokenizer, merged = load_adapted(model, adapter, dtype="auto")
    merged.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir
