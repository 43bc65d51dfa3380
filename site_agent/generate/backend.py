"""One interface for synthesis backends, and the registry that picks one.

Backends live in their own modules (``hf_backend``, ``vllm_backend``) and are imported only
when chosen, so vLLM is never imported on a machine that will not use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from shared.errors import ConfigError
from shared.registry import Registry
from site_agent.generate.settings import GenerationSettings


@dataclass(frozen=True)
class PromptJob:
    """Sample ``n`` continuations of ``prompt`` with sampler seed ``seed``."""

    prompt: str
    n: int
    seed: int


def sample_rows(jobs: Sequence[PromptJob]) -> list[str]:
    """One prompt row per requested sample, job after job."""
    return [job.prompt for job in jobs for _ in range(job.n)]


def per_job(jobs: Sequence[PromptJob], texts: Sequence[str]) -> list[list[str]]:
    """Texts of :func:`sample_rows` handed back job by job."""
    grouped, start = [], 0
    for job in jobs:
        grouped.append(list(texts[start : start + job.n]))
        start += job.n
    return grouped


@dataclass(frozen=True)
class NoteJob:
    """One note: the caller's ``key``, its prompt, its own sampler seed, optionally its own
    token budget (backends that batch statically use the run's)."""

    key: int
    prompt: str
    seed: int
    max_new_tokens: int | None = None


class GenerationBackend(Protocol):
    """Generates continuations (prompt text excluded) for a batch of jobs, in job order.

    A backend that batches continuously also has ``notes(jobs)``, which yields ``(key,
    continuation)`` for each :class:`NoteJob` as it ends (see :func:`note_stream`)."""

    name: str

    def generate(self, jobs: Sequence[PromptJob]) -> list[list[str]]: ...

    def close(self) -> None: ...


NoteStream = Callable[[Sequence[NoteJob]], Iterator[tuple[int, str]]]


def in_batches(
    generate: Callable[[Sequence[PromptJob]], list[list[str]]], batch_size: int
) -> NoteStream:
    """Notes written by a static-batch ``generate``, ``batch_size`` at a time (each job one
    sample with its note's seed; a backend seeds a batch from its first job)."""

    def stream(jobs: Sequence[NoteJob]) -> Iterator[tuple[int, str]]:
        for start in range(0, len(jobs), batch_size):
            chunk = jobs[start : start + batch_size]
            texts = generate([PromptJob(job.prompt, 1, job.seed) for job in chunk])
            yield from ((job.key, outs[0]) for job, outs in zip(chunk, texts, strict=True))

    return stream


def note_stream(backend: GenerationBackend, batch_size: int) -> NoteStream:
    """The backend's continuous batching where it has one, else its static batches."""
    notes: NoteStream | None = getattr(backend, "notes", None)
    return notes if notes is not None else in_batches(backend.generate, batch_size)


class BackendFactory(Protocol):
    def __call__(
        self,
        model: str | Path,
        adapter: Path | None,
        settings: GenerationSettings,
        max_new_tokens: int,
    ) -> GenerationBackend: ...


def _hf() -> BackendFactory:
    from site_agent.generate.hf_backend import HFBackend

    return HFBackend


def _ctranslate2() -> BackendFactory:
    from site_agent.generate.ct2_backend import CT2Backend

    return CT2Backend


def _vllm() -> BackendFactory:
    from site_agent.generate.vllm_backend import VLLMBackend

    return VLLMBackend


def _openvino() -> BackendFactory:
    from site_agent.generate.openvino_backend import OpenVINOBackend

    return OpenVINOBackend


BACKENDS: Registry[Callable[[], BackendFactory]] = Registry("generation backend")
"""Backend name -> a function that imports the engine (heavy: torch, vllm) and returns its
factory, so choosing a backend imports nothing."""
RESTRICTED_VOCABULARY: dict[str, bool] = {}
"""Per backend: whether it samples an adapter with a restricted output vocabulary (its own
fact, given when it registers; the recipe and the generate stage ask it)."""
REFILLS: dict[str, bool] = {}
"""Per backend: whether a finished note's row is refilled at once (continuous batching), so
a note costs its own length rather than its batch's longest (the pre-flight prices it so)."""


def register_backend(
    name: str,
    factory: Callable[[], BackendFactory],
    *,
    restricted_vocabulary: bool = True,
    refills: bool = False,
) -> None:
    """Register ``factory`` (which returns a BackendFactory when called) under ``name``;
    ``restricted_vocabulary``: whether the backend can sample an adapter whose output layer
    keeps only the corpus's tokens (``[adapt] vocabulary = "corpus"``); ``refills``: whether
    it batches continuously."""
    BACKENDS.add(name, factory, replace=True)
    RESTRICTED_VOCABULARY[name] = restricted_vocabulary
    REFILLS[name] = refills


register_backend("hf", _hf, refills=True)  # site_agent.generate.refill
register_backend("ctranslate2", _ctranslate2, restricted_vocabulary=False)
register_backend("vllm", _vllm, refills=True)  # masks the full layer to the adapter's token set
register_backend("openvino", _openvino, restricted_vocabulary=False)


def refills(engine: str) -> bool:
    """Whether the backend ``engine`` batches continuously (``REFILLS``)."""
    return REFILLS.get(engine, False)


def samples_restricted(engine: str) -> bool:
    """Whether the backend ``engine`` samples an adapter with a restricted output vocabulary."""
    return RESTRICTED_VOCABULARY.get(engine, True)


def refuse_restricted(engine: str, adapter: Path | None) -> None:
    """ConfigError when ``adapter`` restricts the output vocabulary and the backend ``engine``
    cannot sample within it (it would sample tokens its site never wrote)."""
    from site_agent.adapt.output_vocabulary import VOCABULARY_FILE

    if samples_restricted(engine) or adapter is None:
        return
    if (Path(adapter) / VOCABULARY_FILE).is_file():
        raise ConfigError(
            f"{Path(adapter) / VOCABULARY_FILE}: the adapter restricts the output vocabulary "
            f"([adapt] vocabulary = 'corpus'), which the {engine} backend cannot honour; "
            "fix: set [generation] backend = 'hf' (or 'vllm'), or adapt with "
            "[adapt] vocabulary = 'full'"
        )


def backend_factory(name: str) -> BackendFactory:
    return BACKENDS.get(name)()
