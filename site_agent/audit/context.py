"""What every measure and filter sees: the two corpora, the policy, and cached token arrays.

Tokenising 100k documents is the most expensive step, so each (corpus, unit) stream and each
(unit, n) :class:`GramTable` is computed once, on first use, and shared by all measures.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from protocol import Corpus
from protocol.audit import CanarySet
from shared.errors import ConfigError
from site_agent.audit.grams import GramTable, build_gram_table
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.tokens import TokenStream, token_stream, word_stream

Side = Literal["real", "synthetic"]
Unit = Literal["words", "tokens"]
ExtraSurface = str | tuple[str, str]
_BASE_N = 3  # longer n-grams are only looked up where all their 3-gram windows matched


def load_tokenizer(path: str | Path) -> Any:
    """A Hugging Face *fast* tokenizer from a local folder (never from the hub)."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot load a tokenizer ({exc}); fix: pass the folder of the generator "
            "model (with tokenizer.json)"
        ) from exc
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(
            f"{path}: tokenizer is not a fast (Rust) tokenizer; fix: save it with tokenizer.json"
        )
    return tokenizer


class AuditContext:
    """The inputs of one audit run, with lazily computed, cached token streams and n-grams."""

    def __init__(
        self,
        real: Corpus,
        synthetic: Corpus,
        policy: AuditPolicy,
        *,
        tokenizer: Any = None,
        extra_pii_surfaces: Iterable[ExtraSurface] = (),
        canaries: CanarySet | None = None,
    ) -> None:
        self.real = real
        self.synthetic = synthetic
        self.policy = policy
        self.extra_pii_surfaces = tuple(extra_pii_surfaces)
        self.canaries = canaries
        self._tokenizer = tokenizer
        self._streams: dict[tuple[Side, Unit], TokenStream] = {}
        self._tables: dict[tuple[Unit, int], GramTable] = {}

    @property
    def units(self) -> tuple[Unit, ...]:
        return ("words", "tokens") if self._tokenizer is not None else ("words",)

    @property
    def tokenizer(self) -> Any:
        if isinstance(self._tokenizer, str | Path):
            self._tokenizer = load_tokenizer(self._tokenizer)
        return self._tokenizer

    def corpus(self, side: Side) -> Corpus:
        return self.real if side == "real" else self.synthetic

    def stream(self, side: Side, unit: Unit = "words") -> TokenStream:
        key = (side, unit)
        if key not in self._streams:
            docs = self.corpus(side).documents
            with_pii = side == "real"
            if unit == "words":
                self._streams[key] = word_stream(docs, with_pii=with_pii)
            else:
                self._streams[key] = token_stream(docs, self.tokenizer, with_pii=with_pii)
        return self._streams[key]

    def gram_table(self, unit: Unit, n: int) -> GramTable:
        key = (unit, n)
        if key not in self._tables:
            base = self.gram_table(unit, _BASE_N) if n > _BASE_N else None
            self._tables[key] = build_gram_table(
                self.stream("real", unit), self.stream("synthetic", unit), n, base
            )
        return self._tables[key]
