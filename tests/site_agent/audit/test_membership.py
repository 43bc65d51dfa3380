"""Membership inference on the synthetic corpus alone: the index against a slow oracle, the
attack on planted leaks, its null behaviour on clean corpora, the rules and audit.md."""

from __future__ import annotations

import math
import os
import random
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from protocol import Corpus, Document
from protocol.audit import MembershipCanarySet
from shared.corpus_io import write_corpus
from shared.errors import ExportRefusedError
from site_agent.audit.corpus_audit import run_audit
from site_agent.audit.membership import (
    build_index,
    lm_ratio_scores,
    membership_result,
    ngram_match_scores,
    secret_matrix,
)
from site_agent.audit.policy import AuditPolicy, MembershipSettings
from site_agent.canaries.membership import make_membership_canaries
from site_agent.canaries.settings import CanarySettings
from site_agent.export.gate import AuditBinding, check_settings
from site_agent.privacy.reference import words
from site_agent.privacy.tokens import word_stream
from tests.site_agent.audit.builders import FILLER, random_corpus

TRAIN = random_corpus(11, 30, "note-", words=40)
REPO = Path(__file__).resolve().parents[3]
FAST = MembershipSettings(bootstrap_samples=200, exposure_candidates=200)


def canaries(count: int = 100, seed: int = 3) -> MembershipCanarySet:
    return make_membership_canaries(TRAIN, CanarySettings(count=count, seed=seed))[1]


def clean_synthetic(seed: int, n: int = 120) -> Corpus:
    """Notes like the training ones that never saw a canary."""
    return random_corpus(seed, n, f"syn{seed}-", words=50)


def leaky_synthetic(record: MembershipCanarySet, share: float = 0.5) -> Corpus:
    """Clean notes plus notes that repeat ``share`` of the member secrets (or most of them)."""
    docs = list(clean_synthetic(1).documents)
    rng = random.Random(0)
    for i, canary in enumerate(record.members[: int(len(record.members) * share)]):
        secret = canary.secret.split()
        said = secret if i % 2 else secret[:-1]  # some written in full, some nearly
        filler = " ".join(rng.choice(FILLER) for _ in range(20))
        docs.append(
            Document(id=f"leak-{i}", text=f"{filler} {canary.identifier}: {' '.join(said)}")
        )
    return Corpus(documents=tuple(docs))


# -- the index against a slow oracle ------------------------------------------------------


def slow_match(secret: str, docs: list[Document]) -> float:
    target = secret.split()
    best = 0
    for doc in docs:
        text = words(doc.text)
        for i in range(len(target)):
            for j in range(i + 1, len(target) + 1):
                run = target[i:j]
                if any(text[k : k + len(run)] == run for k in range(len(text))):
                    best = max(best, len(run))
    return best / len(target)


def slow_lm_ratio(secret: str, docs: list[Document], weights: tuple[float, ...]) -> float:
    streams = [words(d.text) for d in docs]
    uni = Counter(w for s in streams for w in s)
    bi = Counter(tuple(s[i : i + 2]) for s in streams for i in range(len(s) - 1))
    tri = Counter(tuple(s[i : i + 3]) for s in streams for i in range(len(s) - 2))
    total = sum(uni.values()) + len(uni) + 1
    target, score = secret.split(), 0.0
    for i in range(1, len(target)):
        p_uni = (uni[target[i]] + 1) / total
        mass, weight = weights[0] * p_uni, weights[0]
        if uni[target[i - 1]]:
            mass += weights[1] * bi[tuple(target[i - 1 : i + 1])] / uni[target[i - 1]]
            weight += weights[1]
        if i >= 2 and bi[tuple(target[i - 2 : i])]:
            mass += weights[2] * tri[tuple(target[i - 2 : i + 1])] / bi[tuple(target[i - 2 : i])]
            weight += weights[2]
        score += math.log(mass / weight) - math.log(p_uni)
    return score


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_index_scores_equal_the_slow_definitions(seed: int) -> None:
    record = canaries(40, seed)
    synthetic = leaky_synthetic(record).documents[-40:]  # partly leaky, partly clean
    kept = np.random.default_rng(seed).random(len(synthetic)) < 0.7
    secrets = [c.secret for c in record.canaries]
    index = build_index(word_stream(list(synthetic)), secret_matrix(secrets))
    kept_docs = [d for d, k in zip(synthetic, kept, strict=True) if k]
    weights = FAST.lm_weights
    for n in range(1, index.secret_words + 1):  # occurrences counted in kept documents only
        slow = Counter(
            tuple(w[i : i + n])
            for w in map(words, (d.text for d in kept_docs))
            for i in range(len(w) - n + 1)
        )
        expected = [
            [slow[tuple(s.split()[i : i + n])] for i in range(len(s.split()) - n + 1)]
            for s in secrets
        ]
        assert index.counts(n, kept)[index.grams[n - 1]].tolist() == expected
    assert ngram_match_scores(index, kept) == pytest.approx(
        [slow_match(s, kept_docs) for s in secrets]
    )
    # the vocabulary size is the full corpus's in both
    index_all = build_index(word_stream(kept_docs), secret_matrix(secrets))
    assert lm_ratio_scores(index_all, np.ones(len(kept_docs), bool), weights) == pytest.approx(
        [slow_lm_ratio(s, kept_docs, weights) for s in secrets]
    )


# -- the attack -----------------------------------------------------------------------------


def test_a_corpus_repeating_member_secrets_is_caught_and_fails_the_gate(tmp_path: Path) -> None:
    record = canaries()
    synthetic = leaky_synthetic(record)
    report = run_audit(TRAIN, synthetic, AuditPolicy(), tmp_path, membership_canaries=record)
    before = report.measures["membership"]["before"]
    assert before["auc"] > 0.7 and before["auc_ci_low"] > 0.6
    assert before["members_reproduced"] == len(record.members) // 4
    assert before["non_members_reproduced"] == 0
    assert before["exposure"]["members_mean"] > before["exposure"]["non_members_mean"] + 1
    failed = set(report.failed_rules)
    assert {"membership_secrets_reproduced", "membership_auc"} <= failed
    assert not report.passed


def test_a_clean_corpus_passes_and_its_auc_interval_holds_one_half(tmp_path: Path) -> None:
    record = canaries(200)
    report = run_audit(
        TRAIN, clean_synthetic(5), AuditPolicy(), tmp_path, membership_canaries=record
    )
    after = report.measures["membership"]["after"]
    assert after["secrets_reproduced"] == 0
    for attack in after["attacks"].values():
        assert attack["auc_ci_low"] <= 0.5 <= attack["auc_ci_high"]
    rules = {r.name: r for r in report.rules}
    assert rules["membership_auc"].passed and rules["membership_secrets_reproduced"].passed


def test_on_clean_corpora_the_attack_is_at_chance() -> None:
    """Across independent canary draws and clean corpora (fixed seeds) the AUC averages 0.5,
    its 95% interval holds 0.5 nearly always, and TPR at 1% FPR stays near 1%."""
    aucs, covered, tprs = [], 0, []
    runs = 16
    for seed in range(runs):
        record = canaries(100, seed + 100)
        stream = word_stream(list(clean_synthetic(seed + 200, 60).documents))
        figures = membership_result(stream, record, FAST).figures(np.ones(60, bool))
        for attack in figures["attacks"].values():
            aucs.append(attack["auc"])
            covered += attack["auc_ci_low"] <= 0.5 <= attack["auc_ci_high"]
            tprs.append(attack["tpr_at_1pct_fpr"])
    # 32 AUCs of 50 v 50 under the null: sd of the mean about 0.041 / sqrt(32) * ~1.4
    assert abs(np.mean(aucs) - 0.5) < 0.03
    assert covered >= 0.8 * len(aucs)
    assert np.mean(tprs) < 0.06


def test_no_membership_canaries_skips_the_rules(tmp_path: Path) -> None:
    report = run_audit(TRAIN, clean_synthetic(5, 20), AuditPolicy(), tmp_path)
    assert "membership" not in report.measures
    assert {"membership_auc", "membership_secrets_reproduced"} <= set(report.skipped_rules)


def test_audit_md_explains_membership_for_a_privacy_officer(tmp_path: Path) -> None:
    record = canaries()
    run_audit(TRAIN, leaky_synthetic(record), AuditPolicy(), tmp_path, membership_canaries=record)
    text = (tmp_path / "audit.md").read_text()
    assert "## Membership inference on planted canaries" in text
    assert "100 *canary* notes" in text and "planted 50 of them" in text
    assert "| ngram_match | before |" in text and "| lm_ratio | after |" in text
    assert "membership_auc" in text and "**FAIL**" in text
    assert "| membership.secrets_reproduced (before) |" in text  # judged before filtering
    assert "| membership.auc (after) |" in text
    assert not any(c.secret in text for c in record.canaries)  # figures only, no secrets
    report_json = (tmp_path / "audit.json").read_text()
    assert not any(c.secret in report_json or c.identifier in report_json for c in record.canaries)


def test_the_gate_refuses_an_audit_made_with_other_canaries(tmp_path: Path) -> None:
    record = canaries(40)
    write_corpus(TRAIN, tmp_path / "train.jsonl")
    synthetic = clean_synthetic(5, 20)
    write_corpus(synthetic, tmp_path / "synthetic.jsonl")
    report = run_audit(TRAIN, synthetic, AuditPolicy(), tmp_path / "a", membership_canaries=record)
    mine = tmp_path / "membership.json"
    mine.write_text(record.model_dump_json())
    binding = AuditBinding(
        real=tmp_path / "train.jsonl",
        synthetic=tmp_path / "synthetic.jsonl",
        policy=AuditPolicy(),
        membership_canaries=mine,
    )
    check_settings(report, binding, AuditPolicy())  # the same record: accepted
    mine.write_text(canaries(40, seed=9).model_dump_json())
    with pytest.raises(ExportRefusedError, match="audit_settings"):
        check_settings(report, binding, AuditPolicy())


def _site_agent_audit(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["site-agent", "audit", "--real", str(tmp_path / "train.jsonl"), "--out",
         str(tmp_path / "out"), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )  # fmt: skip


def test_console_script_attacks_membership_canaries_and_exits_3_on_a_leak(tmp_path: Path) -> None:
    record = canaries(40)
    write_corpus(TRAIN, tmp_path / "train.jsonl")
    write_corpus(leaky_synthetic(record), tmp_path / "synthetic.jsonl")
    (tmp_path / "membership.json").write_text(record.model_dump_json())
    done = _site_agent_audit(
        tmp_path,
        "--synthetic", str(tmp_path / "synthetic.jsonl"),
        "--membership-canaries", str(tmp_path / "membership.json"),
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "membership_auc" in done.stderr or "membership_auc" in done.stdout
    assert "Membership inference" in (tmp_path / "out" / "audit.md").read_text()


def test_console_script_refuses_a_file_that_is_not_a_membership_record(tmp_path: Path) -> None:
    write_corpus(TRAIN, tmp_path / "train.jsonl")
    (tmp_path / "membership.json").write_text("")
    done = _site_agent_audit(
        tmp_path,
        "--synthetic", str(tmp_path / "train.jsonl"),
        "--membership-canaries", str(tmp_path / "membership.json"),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "not a membership canaries file" in done.stderr and "fix:" in done.stderr
