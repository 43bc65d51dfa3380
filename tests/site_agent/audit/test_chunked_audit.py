"""The audit streams the synthetic corpus a chunk of notes at a time; its results must not
depend on the chunk size. One note at a time, a few, or the whole corpus in one chunk, from
memory or from a JSONL file: the same report, the same kept notes byte for byte.

The corpus exercises every measure and filter, with duplicates and near-duplicates whose
pairs straddle chunk boundaries, so a result that leaked across chunks would show.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from protocol import Corpus, Document
from protocol.audit import AuditReport, CanarySet, MembershipCanarySet
from shared.corpus_io import read_corpus, write_corpus
from site_agent.audit.corpus_audit import AUDITED_CORPUS, run_audit
from site_agent.audit.kept_counts import KeptCounts
from site_agent.audit.policy import AuditPolicy, FilterSettings, MembershipSettings
from site_agent.canaries.identifiers import plant_canaries
from site_agent.canaries.membership import make_membership_canaries
from site_agent.canaries.settings import CanarySettings
from tests.tiny_models import tiny_tokenizer

from .builders import random_corpus

POLICY = AuditPolicy(membership=MembershipSettings(bootstrap_samples=50, exposure_candidates=50))


def _edit(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    words[rng.randrange(len(words) // 2, len(words))] = "cambio"
    return " ".join(words)


def _synthetic(real: Corpus, canaries: CanarySet, members: MembershipCanarySet) -> Corpus:
    """Clean notes, with leaks of every kind the filters drop and repeats far apart."""
    rng = random.Random(4)
    docs = list(random_corpus(42, 30, "s", words=70, other=True).documents)
    copy, near = real.documents[3], real.documents[5]
    carrier = next(d for d in real.documents if d.id == canaries.canaries[0].document_id)
    leaks = [
        copy.text.upper(),  # exact copy of a real note (case ignored)
        _edit(near.text, rng),  # near copy of a real note
        real.documents[8].text[:90] + " " + docs[0].text,  # a real name and id
        f"Control. {canaries.canaries[0].value} {carrier.text[-60:]}",  # a canary
        *(f"{docs[1].text} {m.secret}" for m in members.members[:3]),  # secrets written
    ]
    for i, text in enumerate(leaks):
        docs.insert(3 + 4 * i, Document(id=f"leak{i}", text=text))
    for i, source in enumerate((2, 9, 2, 20)):  # repeats, exact and near, across chunks
        text = docs[source].text if i % 2 == 0 else _edit(docs[source].text, rng)
        docs.insert(len(docs) - 3 * i, Document(id=f"again{i}", text=text))
    return Corpus(documents=tuple(docs))


@pytest.fixture(scope="module")
def corpora() -> dict[str, Any]:
    real = random_corpus(41, 30, "r", words=60)
    planted, canaries = plant_canaries(real, 4, seed=2)
    _, members = make_membership_canaries(planted, CanarySettings(count=40, seed=6))
    return {
        "real": planted,
        "synthetic": _synthetic(planted, canaries, members),
        "canaries": canaries,
        "members": members,
    }


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory, corpora: dict[str, Any]) -> Path:
    path = tmp_path_factory.mktemp("tok")
    texts = [d.text for d in corpora["real"].documents]
    tiny_tokenizer(texts, "causal").save_pretrained(path)
    return path


def _audit(
    corpora: dict[str, Any], tokenizer: Path, out: Path, chunk: int, from_file: bool
) -> tuple[dict[str, Any], bytes, dict[str, Any]]:
    synthetic: Corpus | Path = corpora["synthetic"]
    if from_file:
        synthetic = out.parent / f"{out.name}-input.jsonl"
        write_corpus(corpora["synthetic"], synthetic)
    report = run_audit(
        corpora["real"],
        synthetic,
        POLICY,
        out,
        canaries=corpora["canaries"],
        membership_canaries=corpora["members"],
        tokenizer=tokenizer,
        chunk_documents=chunk,
    )
    assert AuditReport.model_validate_json((out / "audit.json").read_text()) == report
    compared = report.model_dump(mode="json", exclude={"created_at", "timings_s"})
    sidecar = json.loads((out / f"{AUDITED_CORPUS}.provenance.json").read_text())
    del sidecar["provenance"]["created_at"]
    return compared, (out / AUDITED_CORPUS).read_bytes(), sidecar


@pytest.fixture(scope="module")
def whole(
    corpora: dict[str, Any], tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], bytes, dict[str, Any]]:
    """The audit with every note in one chunk."""
    out = tmp_path_factory.mktemp("whole") / "out"
    return _audit(corpora, tokenizer_dir, out, len(corpora["synthetic"]), from_file=False)


def test_the_corpus_exercises_every_filter_and_measure(whole: tuple) -> None:
    report, kept, _ = whole
    for reason in (
        "exact_duplicate_real",
        "near_duplicate_real",
        "canary",
        "pii_echo",
        "exact_duplicate_synthetic",
        "near_duplicate_synthetic",
    ):
        assert report["dropped_by_reason"][reason] > 0, reason
    assert report["flagged_by_reason"]["sensitive_ngram"] > 0
    measures = report["measures"]
    assert measures["membership"]["before"]["secrets_reproduced"] > 0
    canaries = measures["canaries"]
    assert canaries["before"]["context_5grams_found"] > canaries["after"]["context_5grams_found"]
    before, after = measures["ngram_recall"]["before"], measures["ngram_recall"]["after"]
    for unit in ("words", "tokens"):  # the dropped notes held n-grams no kept note holds
        assert after[unit]["3"]["shared_ngrams"] < before[unit]["3"]["shared_ngrams"]
    assert 0 < report["n_kept_documents"] < report["n_input_documents"]
    assert kept.count(b"\n") == report["n_kept_documents"]


@pytest.mark.parametrize(("chunk", "from_file"), [(1, False), (4, False), (7, True), (10**6, True)])
def test_chunk_size_and_source_change_nothing(
    corpora: dict[str, Any],
    tokenizer_dir: Path,
    whole: tuple,
    tmp_path: Path,
    chunk: int,
    from_file: bool,
) -> None:
    report, kept, sidecar = _audit(corpora, tokenizer_dir, tmp_path / "out", chunk, from_file)
    assert report == whole[0]
    assert kept == whole[1]
    assert sidecar == whole[2]


def test_counts_after_filtering_equal_an_audit_of_the_kept_notes_alone(
    corpora: dict[str, Any], tokenizer_dir: Path, whole: tuple, tmp_path: Path
) -> None:
    """The corpus counts after filtering subtract the dropped notes; the oracle counts the
    kept notes from scratch."""
    kept = read_corpus_bytes(whole[1], tmp_path / "kept.jsonl")
    unfiltered = POLICY.model_copy(update={"filters": FilterSettings(enabled=())})
    alone = run_audit(
        corpora["real"],
        kept,
        unfiltered,
        tmp_path / "alone",
        canaries=corpora["canaries"],
        tokenizer=tokenizer_dir,
        chunk_documents=5,
    )
    after = whole[0]["measures"]
    for name in ("ngram_recall", "canaries", "pii_echo"):
        assert alone.measures[name]["before"] == after[name]["after"], name


def read_corpus_bytes(data: bytes, path: Path) -> Corpus:
    path.write_bytes(data)
    return read_corpus(path)


def test_kept_counts_answer_only_the_subsets_they_were_taken_for() -> None:
    counts = KeptCounts(3)
    counts.add(np.array([0, 0, 2]))
    counts.add(np.array([2]))
    everyone = np.ones(4, dtype=bool)
    assert counts.of(everyone).tolist() == [2, 0, 2]
    kept = np.array([True, False, True, True])
    with pytest.raises(ValueError, match="another subset"):
        counts.of(kept)  # the dropped note was not subtracted yet
    counts.subtract(np.array([2]), ~kept)
    assert counts.of(kept).tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match="another subset"):
        counts.of(everyone)
