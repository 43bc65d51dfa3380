"""The encoder to fine-tune: a local model folder or a Hugging Face id, and its tokenizer.

Names are resolved before they get here (the site resolves registry names through
``site_agent.models``; the coordinator is given folders).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared.errors import ConfigError, ModelUnavailableError
from shared.safe_models import from_pretrained


def check_backbone(folder_or_id: str | Path) -> Path | str:
    """A local model folder or a Hugging Face id, as ``from_pretrained`` wants it.

    An existing folder must hold a ``config.json``. Anything else passes through as a Hugging
    Face id, which loads only from the local HF cache since runs are offline.
    """
    path = Path(folder_or_id).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(
                f"{path}: not a model folder (no config.json); fix: pass a folder written by "
                "save_pretrained, a model-registry name, or a Hugging Face model id"
            )
        return path
    return str(folder_or_id)


def load_fast_tokenizer(backbone: Path | str, align: bool = True) -> Any:
    """The backbone's *fast* tokenizer (offset mappings are needed for exact spans).

    ``align`` applies ``align_to_words`` (for fine-tuning). A trained annotator's folder is
    loaded with ``align=False``: its saved tokenizer already is what the model was trained with
    (aligned for every model trained since this step existed), and must stay exactly so.
    """
    from transformers import AutoTokenizer

    try:
        tokenizer = from_pretrained(AutoTokenizer, backbone)
    except (OSError, ValueError) as exc:
        raise ModelUnavailableError(
            f"cannot load a tokenizer from {backbone!s}: {exc}; fix: pass a local model folder "
            "or fetch the model first (`site-agent models fetch NAME`)"
        ) from exc
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(
            f"the tokenizer of {backbone!s} is a slow (Python) tokenizer; the annotator needs a "
            "fast tokenizer for character offsets; fix: save the model with its tokenizer.json"
        )
    return align_to_words(tokenizer) if align else tokenizer


METASPACE = "\u2581"
# Applied after a Metaspace pre-tokenizer: word-character runs and punctuation runs become
# separate pieces, each keeping the "▁" that marks a preceding space.
WORD_SPLIT = f"{METASPACE}?(?:\\w+|[^\\w\\s{METASPACE}]+)"


def align_to_words(tokenizer: Any) -> Any:
    """Make a SentencePiece-style tokenizer stop merging a word with adjacent punctuation.

    Metaspace pre-tokenizers (XLM-R, multilingual-e5, mT5, ...) split on whitespace only, so
    the vocabulary's pieces may straddle the word borders of ``shared.ner_tokens``: ``▁2001,``
    holds a date and the comma after it, ``:41`` a colon and the start of a postal code. One
    token then carries one prediction for two words, and even perfect predictions decode to
    wrong spans (trailing punctuation kept, entities glued to a preceding ``:`` lost); on
    MEDDOCAN dev this capped exact-span F1 at 0.943 with multilingual-e5-small. Adding a split
    after the Metaspace step keeps every token inside one word; the ``▁`` word-start marker
    is kept, so words tokenise as in pre-training and only punctuation runs are cut off.
    WordPiece (BERT) and byte-level BPE (RoBERTa, GPT-2) pre-tokenizers already split
    punctuation from words and are left as they are. Idempotent; the change is saved with the
    tokenizer, so a trained annotator tokenises the same way wherever it is loaded.
    """
    from tokenizers import Regex, pre_tokenizers

    backend = tokenizer.backend_tokenizer
    current = backend.pre_tokenizer
    if current is None:
        return tokenizer
    state = json.loads(backend.to_str()).get("pre_tokenizer") or {}
    steps = state.get("pretokenizers", [state])
    if not any(step.get("type") == "Metaspace" for step in steps):
        return tokenizer
    if any(step.get("pattern", {}).get("Regex") == WORD_SPLIT for step in steps):
        return tokenizer
    split = pre_tokenizers.Split(Regex(WORD_SPLIT), behavior="isolated")
    backend.pre_tokenizer = pre_tokenizers.Sequence([current, split])
    return tokenizer
