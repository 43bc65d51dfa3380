"""The split stage: seeded, complete, source-grouped splits; pinned split files kept."""

from __future__ import annotations

from pathlib import Path

from protocol import Corpus, Document, Span
from shared.corpus_io import read_corpus, write_corpus
from shared.provenance import sha256_file
from site_agent.split.settings import CorpusSettings, SplitSettings
from site_agent.stages import split as split
from tests.console import synthesize_with


def _corpus(n: int, prefix: str = "d", sources: int = 0) -> Corpus:
    docs = tuple(
        Document(
            id=f"{prefix}{i}",
            text=f"Note {i} about Ana.",
            spans=(
                Span(start=len(f"Note {i} about "), end=len(f"Note {i} about Ana"), label="PER"),
            ),
            source=f"s{i % sources}" if sources else None,
        )
        for i in range(n)
    )
    return Corpus(documents=docs)


def test_split_is_seeded_disjoint_and_complete(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    write_corpus(_corpus(40), path)
    settings = SplitSettings(validation_fraction=0.1, test_fraction=0.2)
    files = split.write_splits(CorpusSettings(path=path), settings, tmp_path / "a")
    again = split.write_splits(CorpusSettings(path=path), settings, tmp_path / "b")
    ids = {
        k: [d.id for d in read_corpus(getattr(files, k)).documents]
        for k in ("train", "validation", "test")
    }
    assert (len(ids["train"]), len(ids["validation"]), len(ids["test"])) == (28, 4, 8)
    assert sorted(i for split in ids.values() for i in split) == sorted(f"d{i}" for i in range(40))
    assert sha256_file(files.test) == sha256_file(again.test)


def test_split_keeps_a_source_together(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    write_corpus(_corpus(60, sources=10), path)
    settings = SplitSettings(validation_fraction=0.1, test_fraction=0.2)
    files = split.write_splits(CorpusSettings(path=path), settings, tmp_path / "out")
    assert files.by_source
    where = {}
    for name in ("train", "validation", "test"):
        for doc in read_corpus(getattr(files, name)).documents:
            where.setdefault(doc.source, set()).add(name)
    assert all(len(splits) == 1 for splits in where.values())


def test_split_falls_back_to_documents_when_a_source_fits_nowhere(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    write_corpus(_corpus(60, sources=10), path)  # 6 notes per source; 5% validation is 3
    files = split.write_splits(CorpusSettings(path=path), SplitSettings(), tmp_path / "o")
    assert not files.by_source
    assert len(read_corpus(files.validation)) == 3 and len(read_corpus(files.test)) == 12


def test_split_keeps_a_pinned_test_file(tmp_path: Path) -> None:
    gold, test = tmp_path / "gold.jsonl", tmp_path / "test.jsonl"
    write_corpus(_corpus(20), gold)
    write_corpus(_corpus(5, prefix="t"), test)
    files = split.write_splits(
        CorpusSettings(path=gold, test_path=test), SplitSettings(), tmp_path / "o"
    )
    assert [d.id for d in read_corpus(files.test).documents] == [f"t{i}" for i in range(5)]
    assert len(read_corpus(files.train)) + len(read_corpus(files.validation)) == 20


def test_an_id_in_two_split_files_is_refused_at_once(tmp_path: Path) -> None:
    """Split files a site numbered from 1 each are refused by the first stage, naming the file,
    the line, the field and the fix, with nothing written (the audit joins the splits later)."""
    import pytest

    from shared.errors import CorpusFormatError

    gold, validation = tmp_path / "train.jsonl", tmp_path / "validation.jsonl"
    write_corpus(_corpus(20), gold)
    write_corpus(_corpus(5, prefix="v"), validation)
    ok = split.write_splits(CorpusSettings(path=gold, validation_path=validation), SplitSettings(),
                   tmp_path / "ok")  # fmt: skip
    assert len(read_corpus(ok.validation)) == 5
    write_corpus(_corpus(5), validation)  # d0..d4, as in train
    with pytest.raises(CorpusFormatError) as refused:
        split.write_splits(
            CorpusSettings(path=gold, validation_path=validation), SplitSettings(), tmp_path / "o"
        )
    assert refused.value.exit_code == 65 and refused.value.path == validation
    message = str(refused.value)
    assert "field 'id'" in message and "train split" in message and "fix:" in message
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
    from shared.signing import generate_signing_key

    generate_signing_key(tmp_path / "h.pem", tmp_path / "h.pub.pem")  # checked before the split
    done = synthesize_with(
        f'site_id = "h"\nwork_dir = "w"\ndevice = "cpu"\nsigning_key = "{tmp_path / "h.pem"}"\n'
        f'[corpus]\npath = "{gold}"\nvalidation_path = "{validation}"\n',
        tmp_path,
    )
    assert done.returncode == 65, done.stderr
    err = " ".join(done.stderr.split())
    assert f"{validation}:" in err and "field 'id'" in err and "unique id" in err
