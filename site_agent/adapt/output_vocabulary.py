"""A restricted output vocabulary (``[adapt] vocabulary = "corpus"``): the generator's output
layer keeps only the rows of the tokens a site's synthetic notes can need.

Gemma 3's tied output layer is 262,144 x 640: more multiply-adds per token than all its
transformer blocks, and every sampler step reads the whole row. A synthetic corpus only ever
needs the tokens of its site's rendered adaptation text (mode tokens included), its prompts,
its surrogate pools and the tokenizer's special tokens. The output layer is sliced to those
rows (a copy, so a tied embedding stays whole for the input side); the model then is a
language model over that set (its softmax normalises over the kept tokens only), trained and
sampled as such: exact top-p within the set, and no token the site never wrote.

The set travels with the adapter as ``vocabulary.json`` (sorted ids and their SHA-256), so
every backend that loads the adapter samples from the same set or refuses.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.atomic import atomic_write_text
from shared.errors import ConfigError
from shared.limits import JsonLimits, LimitExceeded, parse_json

VOCABULARY_FILE = "vocabulary.json"
"""Beside ``adapter_config.json``: the kept ids of a restricted output layer."""
# an object holding one flat list of ids: a file nested deeper was not written by the adapt stage
VOCABULARY_LIMITS = JsonLimits(max_bytes=64 * 1024 * 1024, max_depth=2, max_members=4_000_000)


def ids_digest(ids: Sequence[int]) -> str:
    """SHA-256 of the sorted ids written as comma-separated decimals."""
    return hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()


@dataclass(frozen=True)
class OutputVocabulary:
    """The full-vocabulary ids the output layer keeps, ascending; row ``i`` of the restricted
    layer is full id ``ids[i]``."""

    ids: tuple[int, ...]
    full_size: int

    def __post_init__(self) -> None:
        if not self.ids:
            raise ValueError("an output vocabulary needs at least one id")
        if list(self.ids) != sorted(set(self.ids)):
            raise ValueError("output vocabulary ids must be ascending and unique")
        if self.ids[0] < 0 or self.ids[-1] >= self.full_size:
            raise ValueError(
                f"output vocabulary ids must lie in [0, {self.full_size}); "
                f"found {self.ids[0]}..{self.ids[-1]}"
            )

    @property
    def sha256(self) -> str:
        return ids_digest(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def index_of(self) -> dict[int, int]:
        """Full id -> row of the restricted layer."""
        return {full: row for row, full in enumerate(self.ids)}

    def to_restricted(self, full_ids: Iterable[int]) -> list[int]:
        """Rows of ``full_ids`` (each must be kept)."""
        index = self.index_of()
        return [index[i] for i in full_ids]

    def to_full(self, rows: Iterable[int]) -> list[int]:
        return [self.ids[r] for r in rows]

    def lookup(self) -> Any:
        """Tensor full id -> row, ``-100`` (the loss's ignore index) where not kept."""
        import torch

        table = torch.full((self.full_size,), -100, dtype=torch.long)
        table[torch.tensor(self.ids, dtype=torch.long)] = torch.arange(len(self.ids))
        return table

    def to_json(self) -> str:
        body = {"full_size": self.full_size, "sha256": self.sha256, "ids": list(self.ids)}
        return json.dumps(body) + "\n"


def corpus_vocabulary(tokenizer: Any, texts: Iterable[str]) -> OutputVocabulary:
    """Every id the tokenizer gives ``texts``, plus its special and added tokens."""
    ids: set[int] = set(tokenizer.all_special_ids)
    ids.update(int(i) for i in getattr(tokenizer, "added_tokens_decoder", {}))
    for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            ids.add(int(value))
    batch = [t for t in texts if t]
    for start in range(0, len(batch), 256):
        for row in tokenizer(batch[start : start + 256], add_special_tokens=False)["input_ids"]:
            ids.update(row)
    return OutputVocabulary(tuple(sorted(ids)), len(tokenizer))


def write_vocabulary(adapter_dir: Path, vocabulary: OutputVocabulary) -> Path:
    path = Path(adapter_dir) / VOCABULARY_FILE
    atomic_write_text(path, vocabulary.to_json())
    return path


def read_vocabulary(adapter_dir: Path | None) -> OutputVocabulary | None:
    """The adapter's restricted output vocabulary, or None when it samples the full one.
    A file whose hash does not match its ids is refused (ConfigError naming the file)."""
    if adapter_dir is None:
        return None
    path = Path(adapter_dir) / VOCABULARY_FILE
    if not path.is_file():
        return None
    try:
        body = parse_json(path.read_bytes(), VOCABULARY_LIMITS, str(path))
        vocabulary = OutputVocabulary(tuple(int(i) for i in body["ids"]), int(body["full_size"]))
    except LimitExceeded as exc:
        raise ConfigError(
            f"{path}: not a valid output vocabulary (over the cap of {exc.cap}; the adapt stage "
            "writes one object with a flat list of ids); fix: re-run the adapt stage"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{path}: not a valid output vocabulary ({exc}); fix: re-run the adapt stage"
        ) from None
    if body.get("sha256") != vocabulary.sha256:
        raise ConfigError(
            f"{path}: field sha256 does not match its ids (edited or truncated); "
            "fix: re-run the adapt stage"
        )
    return vocabulary


def restrict_output_layer(model: Any, vocabulary: OutputVocabulary) -> Any:
    """Replace ``model``'s output layer by its rows ``vocabulary.ids`` (copied, so a tied input
    embedding stays whole and untied from it); returns the new layer."""
    import torch

    head = model.get_output_embeddings()
    if head.weight.shape[0] != vocabulary.full_size:
        raise ConfigError(
            f"output vocabulary made for {vocabulary.full_size} tokens, the model has "
            f"{head.weight.shape[0]}; fix: use the base model the adapter was trained on"
        )
    keep = torch.tensor(vocabulary.ids, dtype=torch.long, device=head.weight.device)
    sliced = torch.nn.Linear(
        head.in_features,
        len(vocabulary),
        bias=head.bias is not None,
        device=head.weight.device,
        dtype=head.weight.dtype,
    )
    with torch.no_grad():
        sliced.weight.copy_(head.weight.index_select(0, keep))
        if head.bias is not None:
            sliced.bias.copy_(head.bias.index_select(0, keep))
    sliced.weight.requires_grad_(head.weight.requires_grad)
    model.set_output_embeddings(sliced)
    _untie(model)
    return sliced


def expand_output_layer(model: Any, vocabulary: OutputVocabulary, full_weight: Any) -> None:
    """The inverse for engines that need a full-width layer (vLLM, with the set passed as its
    ``allowed_token_ids``): ``full_weight``'s rows, with the kept rows taken from the restricted
    layer. Softmax over the allowed ids of this layer is the restricted model's softmax."""
    import torch

    sliced = model.get_output_embeddings()
    full = torch.nn.Linear(
        sliced.in_features,
        vocabulary.full_size,
        bias=False,
        device=sliced.weight.device,
        dtype=sliced.weight.dtype,
    )
    keep = torch.tensor(vocabulary.ids, dtype=torch.long, device=sliced.weight.device)
    with torch.no_grad():
        full.weight.copy_(full_weight)
        full.weight.index_copy_(0, keep, sliced.weight)
    model.set_output_embeddings(full)
    model.config.vocab_size = vocabulary.full_size


def _untie(model: Any) -> None:
    """Record that input and output layers are no longer tied, so neither transformers nor
    PEFT ties them again (a later ``tie_weights`` would put the full embedding back)."""
    for config in (model.config, getattr(model.config, "text_config", None)):
        if config is not None and hasattr(config, "tie_word_embeddings"):
            config.tie_word_embeddings = False
    if isinstance(getattr(model, "_tied_weights_keys", None), dict):
        model._tied_weights_keys = {}


def restricted_labels(labels: Any, lookup: Any) -> Any:
    """``labels`` (full ids, ``-100`` ignored) as rows of the restricted layer; a label outside
    the set would be ignored, but the set holds every token of the training text."""
    import torch

    return torch.where(labels >= 0, lookup[labels.clamp(min=0)], labels)


def causal_lm_loss(logits: Any, labels: Any) -> Any:
    """Mean next-token cross-entropy over labelled positions (``-100`` ignored), as
    transformers' ``ForCausalLMLoss`` computes it; ``labels`` are rows of the restricted layer."""
    import torch.nn.functional as F

    shifted = labels[:, 1:].reshape(-1)
    flat = logits[:, :-1].reshape(-1, logits.shape[-1]).float()
    return F.cross_entropy(flat, shifted, ignore_index=-100)
