"""``generate_corpus``: sample the synthetic corpus note by note, resumably.

Every note is sampled with a seed derived from (seed, prompt, sample) and saved as soon as it
ends, so a run that is interrupted and started again produces the notes it would have
produced in one go (the transformers backend samples each note with its own generator;
static-batch backends seed a batch from its first note); notes already on disk are skipped, a
torn last line is dropped and redone.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol import Corpus, Document
from shared.atomic import atomic_write_text
from shared.corpus_io.sidecar import file_sidecar, write_corpus_sidecar
from shared.errors import ConfigError
from shared.provenance import config_digest, make_provenance, sha256_tree
from site_agent.generate.backend import (
    GenerationBackend,
    NoteJob,
    backend_factory,
    note_stream,
)
from site_agent.generate.plan import GenerationPlan, Slot, allocate, slots
from site_agent.generate.settings import GenerationSettings
from site_agent.generate.store import append_documents, load_done

Progress = Callable[[int, int], None]
"""Called after each saved note with (documents done, documents planned)."""
EarlyCheck = Callable[[Sequence[Document], GenerationPlan], None]
"""Called once on the first generated documents; raises to stop the run."""


def derive_seed(*parts: int) -> int:
    """A 31-bit seed that depends on every part (stable across runs and machines)."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def as_plan(
    prompts: GenerationPlan | Sequence[str], settings: GenerationSettings
) -> GenerationPlan:
    """A plan as given, or one built from bare prompts (``samples_per_prompt`` each, else 1)."""
    if isinstance(prompts, GenerationPlan):
        return prompts
    per_prompt = settings.samples_per_prompt or 1
    return GenerationPlan(
        prompts=tuple(prompts),
        samples=allocate(len(prompts), per_prompt * len(prompts)),
        max_new_tokens=settings.max_new_tokens or settings.min_max_new_tokens,
    )


def note_jobs(pending: Sequence[Slot], plan: GenerationPlan, seed: int) -> list[NoteJob]:
    """One job per missing note, keyed by its place in ``pending``; each note's seed depends
    only on (seed, prompt, sample), so a note is the same in a resumed run."""
    return [
        NoteJob(
            key,
            plan.prompts[slot.prompt_index],
            derive_seed(seed, slot.prompt_index, slot.sample_index),
        )
        for key, slot in enumerate(pending)
    ]


def _document(slot: Slot, plan: GenerationPlan, text: str) -> Document:
    return Document(
        id=slot.doc_id,
        text=f"{plan.prompts[slot.prompt_index]}{text}",
        meta={"prompt_index": slot.prompt_index, "sample_index": slot.sample_index},
    )


@dataclass(frozen=True)
class RunHistory:
    """What the invocations of one generation run into a file have spent: wall seconds from
    each one's start to its last saved batch (a killed one counts to its last batch), and how
    many invocations saved a batch. Kept beside the file (``<file>.run.json``)."""

    digest: str
    seconds: float = 0.0
    invocations: int = 0


def resumed_summary(before: RunHistory | None, after: RunHistory | None) -> dict[str, Any]:
    """How many invocations generated this corpus and the generating seconds of those before
    this one (``stage.json``'s seconds are this invocation's only), from the partial store's
    history before and after it."""
    if after is None:
        return {}
    same = before is not None and before.digest == after.digest
    earlier = before.seconds if same and before is not None else 0.0
    return {"generation_runs": after.invocations, "seconds_earlier_runs": round(earlier, 1)}


def store_files(out_path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The names of a generation store's files: the documents and their run's history."""
    name = Path(out_path).name
    return (name, _marker(Path(name)).name)


def _marker(out_path: Path) -> Path:
    return out_path.with_name(out_path.name + ".run.json")


def run_history(out_path: str | os.PathLike[str]) -> RunHistory | None:
    """The history of the generation run whose documents are in ``out_path``; None when no
    run has started there."""
    marker = _marker(Path(out_path))
    if not marker.is_file():
        return None
    found = json.loads(marker.read_text(encoding="utf-8"))
    return RunHistory(
        str(found.get("run_digest")),
        float(found.get("seconds", 0.0)),
        int(found.get("invocations", 0)),
    )


def _save_history(out_path: Path, history: RunHistory) -> None:
    record = {"run_digest": history.digest, "seconds": history.seconds}
    atomic_write_text(_marker(out_path), json.dumps(record | {"invocations": history.invocations}))


def _check_run(out_path: Path, digest: str, replace: bool = False) -> RunHistory:
    """Refuse to append to a file that another run (other prompts or settings) started, or
    with ``replace`` start it over; the history of this run so far otherwise."""
    history = run_history(out_path)
    started = out_path.exists() and out_path.stat().st_size > 0
    if history is not None and started and history.digest != digest and replace:
        out_path.unlink()
        started = False
    if history is not None and started:
        if history.digest != digest:
            raise ConfigError(
                f"{out_path}: holds documents of another generation run (other prompts, model "
                "or settings); fix: choose a new output file or delete the old one"
            )
        return history
    history = RunHistory(digest)
    _save_history(out_path, history)
    return history


def generate_corpus(
    prompts: GenerationPlan | Sequence[str],
    model: str | os.PathLike[str],
    adapter: str | os.PathLike[str] | None,
    settings: GenerationSettings,
    out_path: str | os.PathLike[str],
    progress: Progress | None = None,
    *,
    cuda_available: bool | None = None,
    check: EarlyCheck | None = None,
    check_after: int = 0,
    replace_other_run: bool = False,
) -> Corpus:
    """Generate the planned documents into ``out_path`` (JSONL) and return them as a Corpus.

    ``check`` is called once with the documents so far and the plan, as soon as the plan's
    first ``check_after`` notes are on disk (notes end out of order; the first ones in plan
    order are the same sample whatever ends first; a resumed run checks before generating
    more; a plan smaller than that is checked at the end); it stops the run by raising. A
    file that another run (other prompts, model or settings) started is refused, or with
    ``replace_other_run`` (the pipeline's own store) started over."""
    from site_agent.models import resolve_model

    plan = as_plan(prompts, settings)
    out = Path(out_path)
    adapter_dir = Path(adapter) if adapter is not None else None
    digest = config_digest(
        {
            "plan": plan.model_dump(mode="json"),
            "model": str(model),
            # by content: a work dir moved elsewhere (the adapter with it) resumes its store
            "adapter": sha256_tree(adapter_dir) if adapter_dir is not None else None,
            "settings": settings.model_dump(mode="json"),
            "seeding": "per-note",  # stores of the earlier per-batch seeding are not resumed
        }
    )
    earlier = _check_run(out, digest, replace_other_run)
    done = load_done(out)
    if progress is not None and done:
        progress(len(done), plan.total)  # a resumed run's bar starts where the last one ended
    backend: GenerationBackend | None = None
    started = time.perf_counter()
    first = {s.doc_id for s in slots(plan)[:check_after]}  # checked in plan order, not by speed
    checked = check is None
    if not checked and first <= done.keys():  # a resumed run checks before generating more
        checked = _checked(check, done, plan)
    pending = [s for s in slots(plan) if s.doc_id not in done]
    try:
        if pending:
            backend = _open_backend(
                resolve_model(model), adapter_dir, settings, plan, cuda_available
            )
            for key, text in note_stream(backend, settings.batch_size)(
                note_jobs(pending, plan, settings.seed)
            ):
                document = _document(pending[key], plan, text)
                append_documents(out, [document])
                done[document.id] = document
                spent = earlier.seconds + time.perf_counter() - started
                _save_history(out, RunHistory(digest, spent, earlier.invocations + 1))
                if progress is not None:
                    progress(len(done), plan.total)
                if not checked and first <= done.keys():
                    checked = _checked(check, done, plan)
        if not checked:
            _checked(check, done, plan)
    finally:
        if backend is not None:
            backend.close()
    return _finish(out, plan, done, model, adapter, digest, backend, time.perf_counter() - started)


def _checked(check: EarlyCheck | None, done: dict[str, Document], plan: GenerationPlan) -> bool:
    if check is not None:
        check([done[s.doc_id] for s in slots(plan) if s.doc_id in done], plan)
    return True


def _open_backend(
    model: str | Path,
    adapter: Path | None,
    settings: GenerationSettings,
    plan: GenerationPlan,
    cuda_available: bool | None,
) -> GenerationBackend:
    if cuda_available is None:
        import torch

        cuda_available = torch.cuda.is_available()
    from site_agent.adapt.output_vocabulary import VOCABULARY_FILE
    from site_agent.generate.engine_rule import engine_for, this_host

    restricted = adapter is not None and (Path(adapter) / VOCABULARY_FILE).is_file()
    name = engine_for(settings.backend, this_host(cuda_available), restricted).name
    return backend_factory(name)(model, adapter, settings, plan.max_new_tokens)


def _finish(
    out: Path,
    plan: GenerationPlan,
    done: dict[str, Document],
    model: object,
    adapter: object,
    digest: str,
    backend: GenerationBackend | None,
    seconds: float,
) -> Corpus:
    ordered = tuple(done[s.doc_id] for s in slots(plan) if s.doc_id in done)
    notes = {"stage": "generate_corpus", "adapter": str(adapter), "seconds": f"{seconds:.2f}"}
    if backend is not None:
        notes["backend"] = backend.name
        notes["tokens_generated"] = str(getattr(backend, "tokens_generated", ""))
    corpus = Corpus(
        documents=ordered,
        provenance=make_provenance(source=str(model), config_digest=digest, notes=notes),
    )
    write_corpus_sidecar(file_sidecar(out), (), corpus.provenance)
    return corpus
