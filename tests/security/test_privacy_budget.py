"""Issue 50: the privacy accountant of a site's test split, attacked as a hostile coordinator.

Findings fixed here (each test failed before the accountant: the policy had no lifetime
budget, every run id started a fresh budget of 24 models, and figures were exact but rounded):

- the boundary attack calibrates a figure next to a rounding boundary with 24 models, then
  probes one name per model; the calibration cannot be repeated past the lifetime budget;
- the 24-model budget reset with every run id (which the coordinator's SuperLink assigns).

Inference is the probe's own rule (``test_hostile_coordinator.probe_inference``); the rest
(unpacking, the ledger, the noise, the log, the reply) is the site's real code.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from protocol import Corpus, Document, Span
from protocol.rounds import PrivacySpend
from shared import wire
from site_agent.federation.accountant import Ledger, split_key
from site_agent.federation.layout import SiteFailure
from site_agent.federation.noisy_figures import noisy_metrics, note_averaged
from site_agent.federation.policy import EvaluationPolicy
from tests.security.test_hostile_coordinator import (  # noqa: F401 (the autouse fixture)
    PRESENT,
    probe_inference,
    probes,
    scored,
    send,
    site_dir,
    split_notes,
)


def answered_and_refused(reply_content: object) -> tuple[int, list[str]]:
    reply = scored(reply_content)  # type: ignore[arg-type]
    return len(reply.metrics), sorted(reply.errors.values())


def test_the_lifetime_budget_is_not_reset_by_a_new_run_id(tmp_path: Path) -> None:
    config = site_dir(tmp_path, "[federation.evaluation]\nlifetime_models = 3\n")
    outcomes = [
        answered_and_refused(
            send(wire.CROSS_SITE, config, probes(tmp_path / f"r{run}", ["x"]), run)
        )
        for run in range(1, 6)  # five runs, five run ids, as five coordinators would send
    ]
    assert outcomes == [(1, [])] * 3 + [(0, ["privacy_budget_exhausted"])] * 2


def test_the_budget_outlives_a_restart_a_moved_split_and_a_relabelled_note(tmp_path: Path) -> None:
    config = site_dir(tmp_path, "[federation.evaluation]\nlifetime_models = 2\n")
    assert answered_and_refused(send(wire.CROSS_SITE, config, probes(tmp_path / "a", ["x"])))[0]
    moved = tmp_path / "elsewhere" / "test.jsonl"  # the same notes, another file, another label
    moved.parent.mkdir()
    rows = Path(config["test-split"]).read_text(encoding="utf-8").splitlines()
    first = json.loads(rows[0])
    first["spans"] = [dict(first["spans"][0], label="ZIP")]
    moved.write_text("\n".join([json.dumps(first), *rows[1:]]) + "\n", encoding="utf-8")
    restarted = config | {"test-split": str(moved)}
    content = probes(tmp_path / "b", ["y", "z"])
    assert answered_and_refused(send(wire.CROSS_SITE, restarted, content, run_id=9)) == (
        1,
        ["privacy_budget_exhausted"],
    )


def test_the_boundary_attacks_calibration_cannot_be_repeated_past_the_lifetime_budget(
    tmp_path: Path,
) -> None:
    """The attack's calibration takes 24 models (binary searches over vocabulary ids and
    chunk positions). Under the default policy the split's lifetime pays for 48 models, so a
    coordinator can calibrate twice over all its runs, never a third time, and has no probe
    left afterwards."""
    config = site_dir(tmp_path)
    answered, refused = 0, 0
    for run in range(1, 4):  # three calibrations, in three runs
        for half in range(2):  # 24 models in two messages (at most 16 a message)
            words = [f"cal{run}-{half}-{i}" for i in range(12)]
            content = probes(tmp_path / f"run{run}-{half}", words)
            got, codes = answered_and_refused(send(wire.CROSS_SITE, config, content, run))
            answered += got
            refused += codes.count("privacy_budget_exhausted")
    assert (answered, refused) == (48, 24)
    last = scored(send(wire.CROSS_SITE, config, probes(tmp_path / "probe", [PRESENT]), 4))
    assert last.errors == {"probe-0": "privacy_budget_exhausted"} and not last.metrics
    assert last.privacy is not None and last.privacy.models_left == 0
    assert last.privacy.epsilon_spent == pytest.approx(8.0, rel=1e-6)


def test_every_reply_states_the_spend_and_what_is_left(tmp_path: Path) -> None:
    config = site_dir(tmp_path, "[federation.evaluation]\nlifetime_models = 4\n")
    spends: list[PrivacySpend] = []
    for run in range(1, 4):
        reply = scored(send(wire.CROSS_SITE, config, probes(tmp_path / f"r{run}", ["w"]), run))
        assert reply.privacy is not None
        spends.append(reply.privacy)
    assert [s.models_scored for s in spends] == [1, 2, 3]
    assert [s.models_left for s in spends] == [3, 2, 1]
    spent = [s.epsilon_spent for s in spends]
    assert spent == sorted(spent) and spent[0] > 0
    for s in spends:
        assert s.epsilon_spent + s.epsilon_left == pytest.approx(8.0)
    log = tmp_path / "federation" / "evaluation-log.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["privacy"]["models_left"] for r in logged if "privacy" in r] == [3, 2, 1]


@pytest.mark.parametrize("damage", ["garbage", "link"])
def test_a_damaged_ledger_refuses_every_query_rather_than_starting_again(
    tmp_path: Path, damage: str
) -> None:
    config = site_dir(tmp_path)
    ledger = tmp_path / "federation" / "privacy-ledger.json"
    ledger.parent.mkdir()
    if damage == "garbage":
        ledger.write_text("{not json", encoding="utf-8")
    else:
        target = tmp_path / "elsewhere.json"
        target.write_text(json.dumps({"splits": {}}), encoding="utf-8")
        ledger.symlink_to(target)
    reply = send(wire.CROSS_SITE, config, probes(tmp_path, [PRESENT]))
    assert wire.error_code(reply) == "privacy_ledger_unreadable"  # no figures, no reset
    assert ledger.is_symlink() or ledger.read_text(encoding="utf-8") == "{not json"
    if damage == "link":
        assert json.loads((tmp_path / "elsewhere.json").read_text()) == {"splits": {}}


def test_concurrent_charges_never_spend_past_the_budget(tmp_path: Path) -> None:
    """Two messages scored at once (two threads, each with its own lock handle) take exactly
    the models the budget pays for."""
    policy = EvaluationPolicy(lifetime_models=15)
    ledger_path = tmp_path / "federation" / "privacy-ledger.json"
    outcomes: list[bool] = []

    def charge_ten() -> None:
        ledger = Ledger(ledger_path)
        for _ in range(10):
            try:
                ledger.charge("split", policy, 100)
                outcomes.append(True)
            except SiteFailure:
                outcomes.append(False)

    threads = [threading.Thread(target=charge_ten) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count(True) == 15
    assert Ledger(ledger_path).read_splits()["split"]["models"] == 15


def test_the_ledger_lock_is_not_followed_through_a_link(tmp_path: Path) -> None:
    ledger = tmp_path / "federation" / "privacy-ledger.json"
    ledger.parent.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    os.symlink(victim, ledger.with_name(ledger.name + ".lock"))
    with pytest.raises(SiteFailure) as refused:
        Ledger(ledger).charge("split", EvaluationPolicy(), 100)
    assert refused.value.code == "privacy_ledger_unreadable"
    assert victim.read_text(encoding="utf-8") == "keep me"


# --- the noise against an oracle ----------------------------------------------------------


def hand_worked() -> tuple[Corpus, Corpus]:
    """Three notes: one found exactly, one missed, one with nothing to find and nothing tagged."""
    a = Document(id="a", text="Ana vive", spans=(Span(start=0, end=3, label="PER"),))
    b = Document(id="b", text="Luis come", spans=(Span(start=0, end=4, label="PER"),))
    c = Document(id="c", text="nada aqui", spans=())
    predicted = Corpus(
        documents=(a, Document(id="b", text=b.text, spans=()), Document(id="c", text=c.text))
    )
    return Corpus(documents=(a, b, c)), predicted


def test_note_averaged_figures_match_a_hand_worked_example() -> None:
    gold, predicted = hand_worked()
    # per-note F1: 1, 0, 1 (nothing to find, nothing tagged); leakage: 0, 1, 0
    assert note_averaged(gold, predicted) == pytest.approx(
        {"token_f1": 2 / 3, "span_overlap_f1": 2 / 3, "document_leakage": 1 / 3}
    )


def test_the_released_noise_has_the_stated_spread_and_no_bias() -> None:
    gold = split_notes()
    policy = EvaluationPolicy(grid=0.0)  # presentation off, to see the noise itself
    exact = note_averaged(gold, gold)
    rng = np.random.default_rng(5)
    draws = np.array(
        [noisy_metrics(gold, gold, policy, rng).document_leakage.value for _ in range(300)]
    )
    sd = policy.noise_sd(len(gold))
    # leakage is 0 for a perfect model; clipping at 0 halves the draws, so compare the
    # unclipped half: a half-normal of scale sd has mean sd * sqrt(2 / pi)
    positive = draws[draws > 0]
    assert exact["document_leakage"] == 0.0
    assert 0.35 < len(positive) / len(draws) < 0.65
    assert positive.mean() == pytest.approx(sd * np.sqrt(2 / np.pi), rel=0.2)


def test_the_noise_is_calibrated_to_one_note_under_the_stated_budget() -> None:
    """sd = (1 / notes) / sqrt(2 rho / 3) with rho the lifetime budget's share per model,
    from epsilon = rho + 2 sqrt(rho ln(1/delta)) solved independently here."""
    policy = EvaluationPolicy(epsilon=2.0, delta=1e-5, lifetime_models=10)
    log_term = np.log(1e5)
    rho = np.roots([1.0, 2 * np.sqrt(log_term), -2.0]).real.max() ** 2  # sqrt(rho) root
    assert policy.rho() == pytest.approx(rho, rel=1e-9)
    assert policy.noise_sd(200) == pytest.approx((1 / 200) / np.sqrt(2 * rho / 10 / 3))


def test_the_split_key_ignores_ids_and_spans_but_not_texts() -> None:
    gold, predicted = hand_worked()
    renamed = Corpus(
        documents=tuple(d.model_copy(update={"id": d.id + "x"}) for d in gold.documents)
    )
    assert split_key(gold) == split_key(predicted) == split_key(renamed)
    changed = Corpus(documents=(*gold.documents[:2], Document(id="c", text="otra nota")))
    assert split_key(changed) != split_key(gold)


# --- what the operator sees ---------------------------------------------------------------


def test_site_agent_privacy_budget_shows_the_spend(tmp_path: Path) -> None:
    import subprocess

    config = site_dir(tmp_path, "[federation.evaluation]\nlifetime_models = 4\n")
    scored(send(wire.CROSS_SITE, config, probes(tmp_path / "m", ["w"])))
    site_toml = tmp_path / "join.toml"
    site_toml.write_text(
        f'[federation]\nsite-id = "site-a"\nwork-dir = "{tmp_path}"\n'
        f'test-split = "{config["test-split"]}"\n\n'
        "[federation.evaluation]\nlifetime_models = 4\n",
        encoding="utf-8",
    )
    shown = subprocess.run(
        ["site-agent", "privacy-budget", "--site-config", str(site_toml)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "(8, 1e-06)-differential privacy per note, 4 models" in shown.stdout
    assert "(the current test split): epsilon" in shown.stdout
    assert "1 models scored, 3 left" in shown.stdout
    (tmp_path / "federation" / "privacy-ledger.json").write_text("[]", encoding="utf-8")
    broken = subprocess.run(
        ["site-agent", "privacy-budget", "--site-config", str(site_toml)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        check=False,
    )
    assert broken.returncode == 5
    assert "privacy-ledger.json" in broken.stderr and "restore it from a backup" in broken.stderr


def test_joining_prints_the_spend_and_a_damaged_ledger_in_words(tmp_path: Path) -> None:
    from site_agent.federation.join import load_join_config, privacy_status

    config = site_dir(tmp_path, "[federation.evaluation]\nlifetime_models = 4\n")
    scored(send(wire.CROSS_SITE, config, probes(tmp_path / "m", ["w"])))
    site_toml = tmp_path / "join.toml"
    site_toml.write_text(
        f'[federation]\nsite-id = "site-a"\nwork-dir = "{tmp_path}"\n'
        f'test-split = "{config["test-split"]}"\n\n'
        "[federation.evaluation]\nlifetime_models = 4\n",
        encoding="utf-8",
    )
    lines = privacy_status(load_join_config(site_toml))
    assert "1 models scored, 3 left" in lines[1]
    (tmp_path / "federation" / "privacy-ledger.json").write_text("{", encoding="utf-8")
    (line,) = privacy_status(load_join_config(site_toml))
    assert "cannot be read" in line and "every evaluation will be refused" in line
