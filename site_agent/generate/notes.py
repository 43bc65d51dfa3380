"""The generate stage's plain function: sample the planned notes from the adapted generator,
check early that it writes PHI, and read them back as the generation mode does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.progress import Progress

from protocol import Corpus, Document
from shared.progress import ProgressBars
from site_agent.canaries.membership import is_membership_canary
from site_agent.generate.modes import GenerationMode, Labelled, SeedNotes
from site_agent.generate.phi_rate import PhiRateCheck, check_phi_rate, real_rate
from site_agent.generate.plan import GenerationPlan, plan_for_model
from site_agent.generate.prompts import prompt_renderer
from site_agent.generate.settings import GenerationSettings

PARTIAL_FILE = "generation.partial.jsonl"  # the generator's resumable store


def generate_notes(
    adapter_dir: Path,
    validation: Corpus,
    seeds: SeedNotes,
    base_model: str,
    settings: GenerationSettings,
    mode: GenerationMode,
    out_dir: Path,
    progress: Progress | None = None,
    checks: list[PhiRateCheck] | None = None,
) -> tuple[Labelled, int]:
    """Sample the planned notes from ``base_model`` + adapter and read them as the mode does;
    returns the synthetic corpus (with what reading found) and the number of prompts. Resumes
    from a partial store in ``out_dir``. After ``phi_check_after`` notes the PHI the generator
    wrote is checked against the training notes' (a PhiRateError stops the run); the check
    is appended to ``checks``."""
    from site_agent.generate.resumable import generate_corpus
    from site_agent.models import resolve_model

    model = str(resolve_model(base_model, allow_fetch=True))
    render = prompt_renderer(mode, seeds.surrogates)
    notes = sum(not is_membership_canary(d) for d in seeds.train.documents)  # canaries aside
    plan = plan_for_model(validation, notes, model, settings, render)
    bars = ProgressBars(progress, "generated notes")
    real = real_rate(
        Corpus(documents=tuple(d for d in seeds.train.documents if not is_membership_canary(d)))
    )

    def check(docs: Sequence[Document], planned: GenerationPlan) -> None:
        found = check_phi_rate(
            mode, real, docs, planned.prompts, seeds.labels, settings.min_phi_rate,
            settings.max_phi_rate,
        )  # fmt: skip
        if found is not None and checks is not None:
            checks.append(found)

    raw = generate_corpus(
        plan, model, adapter_dir, settings, out_dir / PARTIAL_FILE, bars.count,
        check=check if settings.min_phi_rate > 0 else None, check_after=settings.phi_check_after,
        replace_other_run=True,  # the stage's own store, kept across re-runs
    )  # fmt: skip
    return mode.label(raw, seeds, settings), len(plan.prompts)
