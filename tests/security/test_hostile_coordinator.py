"""Issue 30, the site side: a hostile coordinator, through the real ClientApp and handlers.

The probe: the coordinator sends "models" that each tag one candidate word as a name and reads
the per-label recall and F1 the site sends back; a real name gives recall > 0, an absent one 0.
The site's evaluation policy (``[federation.evaluation]``) must answer with noise calibrated to
one note (differential privacy; the budget across runs is tested in test_privacy_budget.py),
answer at most ``max_models_per_run`` probes per run, log every model it scored with the
guarantee, and refuse every coordinator number beyond ``[federation.limits]`` by name. Inference
is replaced by the probe's own rule (tag every occurrence of its word); everything around it
(unpacking, limits, scoring, the policy, the log, the reply) is the site's real code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flwr.app import Context, Message, RecordDict
from flwr.supercore.task_identity import TaskIdentity
from safetensors.numpy import save_file

from protocol import Corpus, Document, Span
from protocol.rounds import CrossSiteInstruction, CrossSiteReply, FedAvgInstruction
from shared import wire
from shared.corpus_io import write_corpus
from site_agent import client_app
from site_agent.federation import handlers

NAMES = [f"Nombre{i:02d}" for i in range(59)] + ["Zacarias"]  # each mentioned once
PRESENT, ABSENT = "Zacarias", "Wenceslao"
LABELS = ("PERSON", "ZIP")


def note(i: int, name: str) -> Document:
    text = f"Paciente {name} ingresa el dia {i}."
    start = text.index(name)
    return Document(
        id=f"t{i}", text=text, spans=(Span(start=start, end=start + len(name), label="PERSON"),)
    )


def split_notes(n_names: int = len(NAMES)) -> Corpus:
    docs = [note(i, name) for i, name in enumerate(NAMES[:n_names])]
    zip_text = "Domicilio en 28001 Madrid."
    docs.append(Document(id="zip", text=zip_text, spans=(Span(start=13, end=18, label="ZIP"),)))
    return Corpus(documents=tuple(docs))


def site_dir(tmp_path: Path, policy: str = "", n_names: int = len(NAMES)) -> dict[str, str]:
    """A site folder with a test split and (optionally) a site.toml; its node config."""
    write_corpus(split_notes(n_names), tmp_path / "test.jsonl")
    config = tmp_path / "site.toml"
    config.write_text(policy, encoding="utf-8")
    return {
        "site-id": "site-a",
        "site-dir": str(tmp_path),
        "test-split": str(tmp_path / "test.jsonl"),
        "site-config": str(config),
    }


def probe_model(folder: Path, word: str, label: str = "PERSON", pad_bytes: int = 16) -> Path:
    """A "model" that tags one word: a real safetensors file and the word it tags."""
    folder.mkdir(parents=True)
    save_file({"w": np.zeros(pad_bytes // 4, dtype=np.float32)}, str(folder / "model.safetensors"))
    (folder / "probe.json").write_text(json.dumps({"word": word, "label": label}))
    return folder


@pytest.fixture(autouse=True)
def probe_inference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inference of a probe model: every whole-word occurrence of its word gets its label."""

    def annotate(model_dir: Path, corpus: Corpus) -> Corpus:
        probe = json.loads((model_dir / "probe.json").read_text())
        pattern = re.compile(rf"\b{re.escape(probe['word'])}\b")
        return Corpus(
            documents=tuple(
                Document(
                    id=d.id,
                    text=d.text,
                    spans=tuple(
                        Span(start=m.start(), end=m.end(), label=probe["label"])
                        for m in pattern.finditer(d.text)
                    ),
                )
                for d in corpus.documents
            )
        )

    monkeypatch.setattr(handlers, "annotate", annotate)


def send(
    message_type: str, config: dict[str, str], content: RecordDict, run_id: int = 1
) -> RecordDict:
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = run_id, 7, 1
    message = Message(content, dst_node_id=7, message_type=message_type)
    context = Context(
        run_id=run_id, node_id=7, node_config=config, state=RecordDict(), run_config={}
    )
    return client_app.app(message, context).content


def probes(tmp_path: Path, words: list[str], **instruction: Any) -> RecordDict:
    records: dict[str, Any] = {}
    for i, word in enumerate(words):
        records |= wire.model_records(f"probe-{i}", probe_model(tmp_path / f"m{i}-{word}", word))
    task = {"labels": LABELS, "bootstrap": 0, "seed": 0, "include_baseline": False}
    task |= instruction
    return wire.pack(CrossSiteInstruction(models=tuple(records_names(words)), **task), records)


def records_names(words: list[str]) -> list[str]:
    return [f"probe-{i}" for i in range(len(words))]


def scored(reply: RecordDict) -> CrossSiteReply:
    assert wire.error_code(reply) is None, wire.error_code(reply)
    return wire.unpack(reply, CrossSiteReply)


# --- the probe, under the default policy --------------------------------------------------


def test_a_probes_figures_carry_noise_far_larger_than_one_notes_effect(tmp_path: Path) -> None:
    """Sent twice with the same seed, the same probe gets other figures (the noise is the
    site's, not the coordinator's), and the stated noise dwarfs what one note can change."""
    config = site_dir(tmp_path)
    first = scored(send(wire.CROSS_SITE, config, probes(tmp_path / "a", [PRESENT] * 3)))
    again = scored(send(wire.CROSS_SITE, config, probes(tmp_path / "b", [PRESENT])))
    figures = [*(first.metrics[f"probe-{i}"] for i in range(3)), again.metrics["probe-0"]]
    # Released figures are clipped to [0, 1] and rounded, so two noisy draws of one probe can
    # coincide by chance (it happened: both F1 clipped to 0, the same rounded leakage); four
    # draws that all coincide would mean no noise.
    assert len({m.model_dump_json() for m in figures}) >= 2, "the same probe, the same figures"
    assert first.privacy is not None and first.privacy.mechanism == "gaussian"
    one_note = 1 / len(split_notes())
    assert first.privacy.noise_sd > 5 * one_note


@pytest.mark.parametrize("mechanism", ["gaussian", "none"])
def test_a_single_mention_labels_recall_is_never_returned(tmp_path: Path, mechanism: str) -> None:
    config = site_dir(tmp_path, f'[federation.evaluation]\nmechanism = "{mechanism}"\n')
    zip_probe = probe_model(tmp_path / "zip-probe", "28001", "ZIP")
    content = wire.pack(
        CrossSiteInstruction(
            models=("zip",), labels=LABELS, bootstrap=0, seed=0, include_baseline=False
        ),
        wire.model_records("zip", zip_probe),
    )
    metrics = scored(send(wire.CROSS_SITE, config, content)).metrics["zip"]
    assert "ZIP" not in metrics.label_recall  # one gold mention < min_support


def test_a_split_too_small_to_hide_a_mention_returns_nothing(tmp_path: Path) -> None:
    config = site_dir(tmp_path, n_names=5)
    reply = send(wire.CROSS_SITE, config, probes(tmp_path, [PRESENT]))
    assert wire.error_code(reply) == "insufficient_support"


# --- the budget and the log ---------------------------------------------------------------


def test_at_most_the_budget_of_probes_is_answered_per_run(tmp_path: Path) -> None:
    config = site_dir(tmp_path, "[federation.evaluation]\nmax_models_per_run = 3\n")
    answered, refused = 0, 0
    for batch in (["a1", "a2"], ["a3", "a4"], ["a5"]):  # three messages of one run
        reply = scored(send(wire.CROSS_SITE, config, probes(tmp_path / batch[0], batch)))
        answered += len(reply.metrics)
        refused += sum(code == "evaluation_budget_exhausted" for code in reply.errors.values())
    assert (answered, refused) == (3, 2)
    fresh = scored(send(wire.CROSS_SITE, config, probes(tmp_path / "b", ["b1"]), run_id=2))
    assert set(fresh.metrics) == {"probe-0"}  # the budget is per run


def test_every_scored_model_is_logged_with_its_hash_figures_and_the_bound(tmp_path: Path) -> None:
    config = site_dir(tmp_path)
    reply = scored(send(wire.CROSS_SITE, config, probes(tmp_path, [PRESENT, ABSENT])))
    log = tmp_path / "federation" / "evaluation-log.jsonl"
    assert log.is_file(), "no evaluation log"
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert "(8, 1e-06)-differential privacy for every note" in rows[0]["bound"]
    assert "no per-label recall" in rows[0]["bound"]
    assert reply.evaluation_bound == rows[0]["bound"]  # the report prints what the log says
    logged = {r["model"]: r for r in rows[1:]}
    assert set(logged) == {"probe-0", "probe-1"}
    for name, row in logged.items():
        assert re.fullmatch(r"[0-9a-f]{64}", row["sha256"])
        assert row["metrics"] == reply.metrics[name].model_dump(mode="json")
    assert [logged[n]["privacy"]["models_scored"] for n in ("probe-0", "probe-1")] == [1, 2]
    assert reply.privacy is not None and reply.privacy.models_scored == 2


# --- bounds on every coordinator number ---------------------------------------------------


def cross_site(**task: Any) -> Callable[[Path], RecordDict]:
    return lambda tmp: probes(tmp, [PRESENT], **task)


def many_models(tmp: Path) -> RecordDict:
    names = tuple(f"m{i}" for i in range(100))
    return wire.pack(CrossSiteInstruction(models=names, labels=LABELS, bootstrap=0, seed=0))


def big_model(tmp: Path) -> RecordDict:
    folder = probe_model(tmp / "big", PRESENT, pad_bytes=2 * 1024 * 1024)
    return wire.pack(
        CrossSiteInstruction(models=("big",), labels=LABELS, bootstrap=0, seed=0),
        wire.model_records("big", folder),
    )


def fedavg(**changes: Any) -> Callable[[Path], RecordDict]:
    def build(tmp: Path) -> RecordDict:
        task = {"round": 1, "labels": LABELS, "local_epochs": 1, "learning_rate": 1e-4}
        task |= {"batch_size": 8, "seed": 0} | changes
        model = probe_model(tmp / "global", PRESENT)
        return wire.pack(FedAvgInstruction(**task), wire.model_records(wire.GLOBAL_MODEL, model))

    return build


CS, FA = wire.CROSS_SITE, wire.FEDAVG_TRAIN
ONE_MB, TINY = (
    "[federation.limits]\nmax_model_mb = 1\n",
    "[federation.limits]\nmax_model_mb = 1e-6\n",
)
MANY_LABELS = tuple(f"L{i}" for i in range(1000))
BOUNDS = [
    # (row, message type, message, site.toml, the named refusal)
    ("bootstrap resamples", CS, cross_site(bootstrap=10**7), "", "max_bootstrap_exceeded"),
    ("number of models", CS, many_models, "", "max_models_exceeded"),
    ("labels", CS, cross_site(labels=MANY_LABELS), "", "max_labels_exceeded"),
    ("model size", CS, big_model, ONE_MB, "max_model_mb_exceeded"),
    ("local epochs", FA, fedavg(local_epochs=10**6), "", "max_local_epochs_exceeded"),
    ("batch size", FA, fedavg(batch_size=10**7), "", "max_batch_size_exceeded"),
    ("learning rate", FA, fedavg(learning_rate=1e6), "", "max_learning_rate_exceeded"),
    ("global model size", FA, fedavg(), TINY, "max_model_mb_exceeded"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("message_type", "build", "policy", "code"),
    [row[1:] for row in BOUNDS],
    ids=[row[0] for row in BOUNDS],
)
def test_a_number_beyond_the_sites_limits_is_refused_by_name(
    tmp_path: Path,
    message_type: str,
    build: Callable[[Path], RecordDict],
    policy: str,
    code: str,
) -> None:
    config = site_dir(tmp_path, policy)
    assert wire.error_code(send(message_type, config, build(tmp_path))) == code


def test_an_invalid_site_policy_refuses_rather_than_falling_back(tmp_path: Path) -> None:
    config = site_dir(tmp_path, "[federation.evaluation]\ngrid = -1\n")
    reply = send(wire.CROSS_SITE, config, probes(tmp_path, [PRESENT]))
    assert wire.error_code(reply) == "site_policy_invalid"
