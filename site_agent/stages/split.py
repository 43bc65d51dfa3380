"""Stage 1, split: the gold corpus becomes train / validation / test JSONL files.

Splits the site already made (``validation_path``, ``test_path``) are kept as they are;
whatever is still missing is carved out of the main corpus with a seeded split that keeps
all documents of one ``source`` together. The test file is read again only by the final
evaluation in ``train-synthetic``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol import Corpus, Document
from protocol.site_config import CorpusSection, SiteConfig, SplitSection
from shared.corpus_io import read_corpus, write_corpus
from shared.errors import UsageError
from site_agent.stages.base import Stage, StageContext, StageOutput

MIN_GROUPS = 6


@dataclass(frozen=True)
class SplitFiles:
    train: Path
    validation: Path
    test: Path


def _groups(docs: Sequence[Document], by_source: bool) -> list[list[Document]]:
    if by_source:
        grouped: dict[str, list[Document]] = {}
        for doc in docs:
            grouped.setdefault(doc.source or doc.id, []).append(doc)
        if len(grouped) >= MIN_GROUPS:
            return [grouped[k] for k in sorted(grouped)]
    return [[doc] for doc in docs]


def carve(
    docs: Sequence[Document], want: int, seed: int, by_source: bool
) -> tuple[list[Document], list[Document]]:
    """(rest, carved): whole groups, shuffled with ``seed``, until ``want`` documents."""
    groups = _groups(docs, by_source)
    random.Random(seed).shuffle(groups)
    want = max(1, want)
    carved: list[Document] = []
    rest: list[Document] = []
    for group in groups:
        (carved if len(carved) < want else rest).extend(group)
    if not rest:
        raise UsageError(
            f"only {len(docs)} documents: nothing is left for training after carving "
            f"{want}; fix: use a larger corpus or smaller split fractions"
        )
    return rest, carved


def _subset(corpus: Corpus, docs: list[Document]) -> Corpus:
    order = {d.id: i for i, d in enumerate(corpus.documents)}
    docs = sorted(docs, key=lambda d: order[d.id])
    return Corpus(documents=tuple(docs), labels=corpus.labels, provenance=corpus.provenance)


def split_gold_corpus(corpus: CorpusSection, settings: SplitSection, out_dir: Path) -> SplitFiles:
    """Write ``train.jsonl``, ``validation.jsonl`` and ``test.jsonl`` into ``out_dir``."""
    gold = read_corpus(corpus.path, corpus.format)
    docs: list[Document] = list(gold.documents)
    total = len(docs)
    if corpus.test_path is not None:
        test = read_corpus(corpus.test_path, corpus.format)
    else:
        want = round(settings.test_fraction * total)
        docs, carved = carve(docs, want, settings.seed, settings.group_by_source)
        test = _subset(gold, carved)
    if corpus.validation_path is not None:
        validation = read_corpus(corpus.validation_path, corpus.format)
    else:
        want = round(settings.validation_fraction * total)
        docs, carved = carve(docs, want, settings.seed + 1, settings.group_by_source)
        validation = _subset(gold, carved)
    files = SplitFiles(
        out_dir / "train.jsonl", out_dir / "validation.jsonl", out_dir / "test.jsonl"
    )
    write_corpus(_subset(gold, docs), files.train)
    write_corpus(validation, files.validation)
    write_corpus(test, files.test)
    return files


def _settings(config: SiteConfig) -> dict[str, Any]:
    return {"split": config.split, "format": config.corpus.format}


def _sources(config: SiteConfig) -> dict[str, Path]:
    named = {
        "corpus": config.corpus.path,
        "validation": config.corpus.validation_path,
        "test": config.corpus.test_path,
    }
    return {k: p for k, p in named.items() if p is not None}


def _run(ctx: StageContext) -> StageOutput:
    files = split_gold_corpus(ctx.config.corpus, ctx.config.split, ctx.stage_dir)
    counts = {
        name: len(read_corpus(getattr(files, name))) for name in ("train", "validation", "test")
    }
    return StageOutput(
        artifacts={"train": files.train, "validation": files.validation, "test": files.test},
        summary={f"{k}_documents": v for k, v in counts.items()},
    )


STAGE = Stage(
    name="split",
    run=_run,
    settings=_settings,
    sources=_sources,
    description="gold corpus -> train / validation / test",
)
