"""A model-free backend whose output is a function of (prompt, seed, sample): resume oracle."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from site_agent.generate.backend import PromptJob
from site_agent.generate.settings import GenerationSettings

OPENED: list[str] = []


class FakeBackend:
    name = "fake"

    def __init__(
        self,
        model: str | Path,
        adapter: Path | None,
        settings: GenerationSettings,
        max_new_tokens: int,
    ) -> None:
        OPENED.append(str(model))
        self.tokens_generated = 0

    def generate(self, jobs: Sequence[PromptJob]) -> list[list[str]]:
        self.tokens_generated += sum(j.n for j in jobs)
        return [[f" continuation {job.seed} #{i}" for i in range(job.n)] for job in jobs]

    def close(self) -> None:
        pass
