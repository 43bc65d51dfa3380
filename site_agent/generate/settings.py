"""``[generation]``: how many notes to sample and how; defaults follow the seed study
(nucleus p=0.95, t=1.0, a corpus four times the training split)."""

from __future__ import annotations

import pkgutil
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from protocol.base import ProtocolModel

MAX_PROMPT_WORDS = 32
"""The longest prompt: an exported note is prompt + continuation, so a prompt is real text that
leaves unless the audit drops it; kept to an opening, never most of a note."""


def _mode_files() -> tuple[str, ...]:
    folder = Path(__file__).with_name("modes")
    return tuple(sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if m.name != "base"))


GENERATION_MODES = _mode_files()
"""The built-in modes: one file each in ``generate/modes/``, named as the mode it registers
(a test keeps the two equal, and equal to the plain imports in ``modes/__init__.py``); read
from the folder so that validating ``site.toml`` does not import the modes and the engines
they use. A mode registered from elsewhere (``register_mode``) is one file and no edit here."""
PLUGIN_MODES: set[str] = set()
"""Modes registered from elsewhere (``register_mode``): valid in ``site.toml`` too."""


class GenerationSettings(ProtocolModel):
    """Sampling from the adapted generator, prompted by the first words of validation notes.

    ``mode`` decides where the synthetic notes' spans come from (``generate/modes/``):
    ``annotate`` (seed 000) the gold-trained annotator labels plain generated notes;
    ``tagged`` (seed 003) the generator writes ``<LABEL>...</LABEL>`` tags that become the
    spans; ``template`` (seed 002) the generator writes ``{{LABEL:n}}`` placeholders that a
    local filler turns into surrogates, so no identifier ever reaches the generator.

    Give either ``amount`` (synthetic documents as a multiple of the training split; 4.0 in
    the seed study, 0.05 and 1.0 in its ablations) or ``samples_per_prompt``, not both.
    ``max_new_tokens`` unset means: the longest validation document in the generator's
    tokens, but at least ``min_max_new_tokens``.
    """

    mode: str = Field(
        "template",
        description="template | annotate | tagged: where the spans come from (template: the "
        "best measured mode, 89-95% of the gold annotator on MEDDOCAN against 23-67% for "
        "annotate; docs/results.md)",
    )
    tag_errors: Literal["repair", "reject"] = Field(
        "repair",
        description="tagged: drop malformed tags and keep the note (repair) or drop the note",
    )
    pii_fraction: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="template: share of notes with at least one identifier; unset: as generated",
    )
    near_duplicate_jaccard: float = Field(
        0.9,
        gt=0.0,
        le=1.0,
        description="template: word 3-gram Jaccard at which a note duplicates a seed or kept note",
    )
    amount: float | None = Field(4.0, gt=0, description="synthetic documents per training document")
    samples_per_prompt: int | None = Field(
        None, ge=1, description="notes sampled from each prompt (instead of amount)"
    )
    max_documents: int | None = Field(None, ge=1, description="cap on the synthetic corpus size")
    prompt_words: int = Field(
        3,
        ge=1,
        le=MAX_PROMPT_WORDS,
        description="opening words of a validation note per prompt (real text in every note "
        f"made from it; at most {MAX_PROMPT_WORDS})",
    )
    phi_prompt_share: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="share of prompts that open at a validation note's first identifier (its "
        "prompt_words words before it and the identifier); unset: the recipe's (the real "
        "notes' share of notes with PHI when under half of them hold any, else none)",
    )
    min_phi_rate: float = Field(
        0.25,
        ge=0.0,
        description="template and tagged: stop after phi_check_after notes when the generator "
        "wrote fewer PHI mentions of the scheme's labels per 1,000 words than this share of the "
        "real notes' (0: no check at all)",
    )
    max_phi_rate: float | None = Field(
        5.0,
        gt=0.0,
        description="template and tagged: stop after phi_check_after notes when the generator "
        "wrote more PHI mentions of the scheme's labels per 1,000 words than this multiple of "
        "the real notes' (unset: no upper bound)",
    )
    phi_check_after: int = Field(
        32, ge=1, description="notes generated before the PHI rate is checked"
    )
    top_p: float = Field(0.95, gt=0.0, le=1.0, description="nucleus sampling mass")
    temperature: float = Field(1.0, gt=0.0, description="sampling temperature")
    top_k: int = Field(0, ge=0, description="top-k filtering; 0 disables it")
    min_new_tokens: int = Field(10, ge=0, description="shortest continuation in tokens")
    max_new_tokens: int | None = Field(
        None, ge=1, description="longest continuation in tokens; unset: the longest validation note"
    )
    min_max_new_tokens: int = Field(
        50, ge=1, description="floor of max_new_tokens when it is derived from the validation notes"
    )
    backend: str = Field(
        "auto",
        description="auto (vLLM on CUDA; on a CPU transformers where bf16 is native, "
        "CTranslate2 where it is not and is installed, transformers for an adapter with the "
        "corpus vocabulary), or a registered backend: hf | ctranslate2 | vllm",
    )
    nucleus: Literal["partial", "sort"] = Field(
        "partial",
        description=(
            "hf: exact top-p from a partial selection (partial) or transformers' full sort (sort); "
            "the sampled distribution is the same"
        ),
    )
    ct2_compute_type: str = Field(
        "auto", description="ctranslate2: compute type (auto: int8 on CPU, int8_float16 on CUDA)"
    )
    batch_size: int = Field(
        8,
        ge=1,
        description="notes in flight: transformers refills a finished note's row at once "
        "(continuous batching); static-batch backends write this many notes per batch",
    )
    cpu_threads: int | None = Field(
        None,
        ge=1,
        description="threads on CPU; unset: the cores other processes leave idle, per batch",
    )
    seed: int = Field(13, description="seed of every sampled note (per document, resumable)")
    lora_mode: Literal["request", "merge"] = Field(
        "request", description="vLLM: pass the adapter per request, or merge it into the weights"
    )
    vllm_gpu_memory_utilization: float = Field(
        0.85, gt=0.0, le=1.0, description="vLLM: share of GPU memory it may take"
    )

    @field_validator("mode")
    @classmethod
    def _registered_mode(cls, mode: str) -> str:
        known = [*GENERATION_MODES, *sorted(PLUGIN_MODES)]
        if mode not in known:
            raise ValueError(
                f"unknown generation mode {mode!r}; allowed: {known}; fix: use one of them"
            )
        return mode

    @model_validator(mode="after")
    def _phi_band(self) -> GenerationSettings:
        if self.max_phi_rate is not None and self.max_phi_rate < self.min_phi_rate:
            raise ValueError(
                f"max_phi_rate {self.max_phi_rate} < min_phi_rate {self.min_phi_rate}: no PHI "
                "rate could pass; fix: raise max_phi_rate or lower min_phi_rate"
            )
        return self

    @model_validator(mode="after")
    def _one_amount(self) -> GenerationSettings:
        if self.samples_per_prompt is not None and self.amount is not None:
            if "amount" in self.model_fields_set:
                raise ValueError(
                    "both amount and samples_per_prompt are set; fix: keep only one of them"
                )
            object.__setattr__(self, "amount", None)
        if self.samples_per_prompt is None and self.amount is None:
            raise ValueError("neither amount nor samples_per_prompt is set; fix: set one")
        if self.max_new_tokens is not None and self.min_new_tokens > self.max_new_tokens:
            raise ValueError(
                f"min_new_tokens {self.min_new_tokens} > max_new_tokens {self.max_new_tokens}; "
                "fix: raise max_new_tokens or lower min_new_tokens"
            )
        return self
