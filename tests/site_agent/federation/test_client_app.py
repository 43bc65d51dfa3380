"""The ClientApp never lets text out: failures become codes, roll call sends counts only."""

from __future__ import annotations

from pathlib import Path

import pytest
from flwr.app import Context, Message, RecordDict, UserConfig
from flwr.supercore.task_identity import TaskIdentity

from protocol.rounds import RollCallReply
from shared import wire
from site_agent import client_app
from site_agent.federation import handlers
from tests.template_sites import DemoSite


def call(message_type: str, config: UserConfig, content: RecordDict | None = None) -> Message:
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 1, 1
    message = Message(content or RecordDict(), dst_node_id=7, message_type=message_type)
    context = Context(run_id=1, node_id=7, node_config=config, state=RecordDict(), run_config={})
    return client_app.app(message, context)


def everything_sent(reply: Message) -> str:
    return repr({k: dict(v) for k, v in reply.content.items()})


def test_roll_call_sends_sizes_labels_and_manifest_but_no_text(site: DemoSite) -> None:
    reply = call(wire.ROLL_CALL, {"site-id": "site-a", "site-dir": str(site.site_dir)})
    answer = wire.unpack(reply.content, RollCallReply)
    assert answer.test_split.n_documents == 12 and answer.manifest is not None
    assert answer.has_baseline
    assert "Paciente" not in everything_sent(reply)


def test_an_exception_with_text_becomes_a_code(
    site: DemoSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    def leaky(layout: object) -> RecordDict:
        raise ValueError("Paciente Ana Garcia, historia 123456")

    monkeypatch.setattr(handlers, "roll_call", leaky)
    reply = call(wire.ROLL_CALL, {"site-id": "site-a", "site-dir": str(site.site_dir)})
    assert not reply.has_error() and wire.error_code(reply.content) == "internal_error"
    assert "Ana" not in everything_sent(reply)


@pytest.mark.parametrize(
    ("config", "code"),
    [
        ({"site-id": "x"}, "bad_request"),
        ({"site-id": "x", "site-dir": "/nonexistent"}, "test_split_missing"),
    ],
)
def test_missing_setup_is_a_named_code(config: UserConfig, code: str) -> None:
    assert wire.error_code(call(wire.ROLL_CALL, config).content) == code


def test_collect_without_export_says_so(tmp_path: Path) -> None:
    reply = call(wire.COLLECT, {"site-id": "x", "site-dir": str(tmp_path)})
    assert wire.error_code(reply.content) == "no_export_bundle"


def wide_vocabulary_encoder(out_dir: Path) -> Path:
    """A tiny BERT whose input embeddings are most of its weights, so the annotator trainer
    keeps them fixed (``ner.train.fix_input_embeddings``), as it does for MiniLM and e5-small."""
    import random

    from site_agent.models.tiny import tiny_encoder

    rng = random.Random(0)
    words = {"".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=7)) for _ in range(3000)}
    return tiny_encoder(out_dir, [" ".join(sorted(words))], hidden=8, vocab_size=3000)


def test_a_fedavg_reply_sends_back_only_the_tensors_training_changed(
    site: DemoSite, tmp_path: Path, torch_threads: None
) -> None:
    from coordinator.aggregate.trainer import init_token_classifier
    from protocol.rounds import FedAvgInstruction, FedAvgUpdate
    from shared.corpus_io import read_corpus
    from shared.transport import with_unchanged

    labels = read_corpus(site.site_dir / "01-split" / "test.jsonl").labels
    base = wide_vocabulary_encoder(tmp_path / "base")
    start = init_token_classifier(base, labels, tmp_path / "global", seed=0)
    task = FedAvgInstruction(
        round=1, labels=labels, local_epochs=1, learning_rate=1e-3, batch_size=8, seed=0
    )
    content = wire.pack(task, wire.model_records(wire.GLOBAL_MODEL, start))
    reply = call(wire.FEDAVG_TRAIN, {"site-id": "site-a", "site-dir": str(site.site_dir)}, content)
    assert wire.error_code(reply.content) is None
    update = wire.unpack(reply.content, FedAvgUpdate)
    received = wire.model_weights(content, wire.GLOBAL_MODEL)
    back = wire.model_weights(reply.content, wire.GLOBAL_MODEL)
    assert received is not None and back is not None
    embeddings = "bert.embeddings.word_embeddings.weight"
    assert embeddings in update.unchanged and embeddings not in back
    assert set(back.keys()) | set(update.unchanged) == set(received.keys())
    assert all(back[name].data != received[name].data for name in back)  # all moved
    whole = with_unchanged(back, received, update.unchanged)
    assert whole is not None and list(whole.keys()) == list(received.keys())
    sent_bytes = sum(len(back[name].data) for name in back)
    assert sent_bytes < 0.5 * sum(len(received[name].data) for name in received)
