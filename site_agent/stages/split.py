"""Stage 1, split: the gold corpus becomes train / validation / test JSONL files.

Splits the site already made (``validation_path``, ``test_path``) are kept as they are;
whatever is still missing is carved out of the main corpus with a seeded split that keeps
all documents of one ``source`` together. The test file is read again only by the final
evaluation in ``train-synthetic``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol import Corpus
from shared.corpus_io import read_corpus, require_documents, write_corpus
from shared.errors import UsageError
from site_agent.config import SiteConfig
from site_agent.pipeline.stage import Stage, StageContext, StageOutput
from site_agent.split.by_source import split_corpus
from site_agent.split.settings import CorpusSettings, SplitSettings
from site_agent.split.shared_ids import refuse_shared_ids

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class SplitFiles:
    """The three split files and whether the split kept sources together."""

    train: Path
    validation: Path
    test: Path
    by_source: bool


def wanted_fractions(corpus: CorpusSettings, settings: SplitSettings) -> dict[str, float]:
    """Fractions of the main corpus for the splits the site did not provide as files."""
    fractions = {"validation": settings.validation_fraction, "test": settings.test_fraction}
    if corpus.validation_path is not None:
        del fractions["validation"]
    if corpus.test_path is not None:
        del fractions["test"]
    return {"train": 1.0 - sum(fractions.values()), **fractions}


def split_with_fallback(
    gold: Corpus, fractions: dict[str, float], settings: SplitSettings
) -> tuple[dict[str, Corpus], bool]:
    """Split by source when asked; if a split comes out empty, split by document instead."""
    parts = split_corpus(
        gold, fractions, seed=settings.seed, group_by_source=settings.group_by_source
    )
    if settings.group_by_source and any(len(c) == 0 for c in parts.values()):
        return split_corpus(gold, fractions, seed=settings.seed, group_by_source=False), False
    return parts, settings.group_by_source


def split_gold(
    corpus: CorpusSettings, settings: SplitSettings, gold: Corpus | None = None
) -> tuple[dict[str, Corpus], bool]:
    """The splits carved out of the gold corpus (deterministic): ``gold`` when the caller has
    already read ``corpus.path``, else the file as it is on disk now."""
    if gold is None:
        gold = require_documents(read_corpus(corpus.path, corpus.format), corpus.path)
    return split_with_fallback(gold, wanted_fractions(corpus, settings), settings)


def training_split(config: SiteConfig) -> Corpus:
    """The real training text this site's config gives: re-derived from the gold corpus file,
    so that an export can check the work dir's ``train.jsonl`` against it."""
    return split_gold(config.corpus, config.split)[0]["train"]


def split_sizes(config: SiteConfig, gold: Corpus | None = None) -> tuple[Corpus, int, int]:
    """The training split, and how many notes the validation and test splits will hold (the
    site's own files where it gives them), as the split stage will write them; ``gold`` is
    the corpus file's content when the caller has already read it."""
    parts, _ = split_gold(config.corpus, config.split, gold)
    corpus = config.corpus
    sizes = {
        name: len(read_corpus(path, corpus.format)) if path is not None else len(parts[name])
        for name, path in (("validation", corpus.validation_path), ("test", corpus.test_path))
    }
    return parts["train"], sizes["validation"], sizes["test"]


def write_splits(corpus: CorpusSettings, settings: SplitSettings, out_dir: Path) -> SplitFiles:
    """Write ``train.jsonl``, ``validation.jsonl``, ``test.jsonl``; say if grouped by source."""
    parts, grouped = split_gold(corpus, settings)
    gold_size = sum(len(part) for part in parts.values())
    if corpus.validation_path is not None:
        parts["validation"] = read_corpus(corpus.validation_path, corpus.format)
    if corpus.test_path is not None:
        parts["test"] = read_corpus(corpus.test_path, corpus.format)
    refuse_shared_ids(parts, corpus)
    empty = [name for name, part in parts.items() if len(part) == 0]
    if empty:
        raise UsageError(
            f"{corpus.path}: {gold_size} documents leave the {', '.join(empty)} split(s) "
            "empty; fix: use a larger corpus, raise the split fractions, or give "
            "corpus.validation_path / corpus.test_path"
        )
    train, validation, test = (out_dir / f"{name}.jsonl" for name in SPLITS)
    files = SplitFiles(train, validation, test, by_source=grouped)
    for name in SPLITS:
        write_corpus(parts[name], getattr(files, name))
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


def _split_stage(ctx: StageContext) -> StageOutput:
    files = write_splits(ctx.config.corpus, ctx.config.split, ctx.stage_dir)
    counts = {name: len(read_corpus(getattr(files, name))) for name in SPLITS}
    return StageOutput(
        artifacts={name: getattr(files, name) for name in SPLITS},
        summary={**{f"{k}_documents": v for k, v in counts.items()}, "by_source": files.by_source},
    )


STAGE = Stage(
    name="split",
    run=_split_stage,
    settings=_settings,
    sources=_sources,
    description="gold corpus -> train / validation / test",
)
