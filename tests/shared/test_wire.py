"""One pack/unpack for every round payload; model folders survive the trip byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flwr.app import ConfigRecord, RecordDict

from protocol import LabelMapping
from protocol.rounds import CrossSiteInstruction, FedAvgInstruction, FedAvgUpdate
from shared import wire


def test_a_protocol_model_round_trips() -> None:
    mapping = LabelMapping(name="m", coarse_labels=("PER",), mapping={"NAME": "PER"})
    task = FedAvgInstruction(
        round=2, labels=("PER",), mapping=mapping, local_epochs=1, learning_rate=1e-3,
        batch_size=4, seed=13,
    )  # fmt: skip
    assert wire.unpack(wire.pack(task), FedAvgInstruction) == task


@pytest.mark.parametrize(
    "content",
    [
        RecordDict(),
        RecordDict({wire.PAYLOAD: ConfigRecord({"json": "{}"})}),
        wire.pack(FedAvgUpdate(num_examples=3)),  # another message's payload
    ],
)
def test_a_missing_or_wrong_payload_is_a_wire_error(content: RecordDict) -> None:
    with pytest.raises(wire.WireError, match="CrossSiteInstruction"):
        wire.unpack(content, CrossSiteInstruction)


def test_a_model_folder_travels_byte_for_byte(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    model = tmp_path / "model"
    model.mkdir()
    save_file(
        {"b": np.arange(3, dtype=np.int64), "a": np.ones((2, 2), np.float32)},
        model / "model.safetensors",
    )
    (model / "config.json").write_text('{"x": 1}', encoding="utf-8")
    content = wire.pack(FedAvgUpdate(num_examples=1), wire.model_records("m", model))
    out = wire.unpack_model(content, "m", tmp_path / "out")
    for name in ("model.safetensors", "config.json"):
        assert (out / name).read_bytes() == (model / name).read_bytes()
    with pytest.raises(wire.WireError, match="'other' not sent"):
        wire.unpack_model(content, "other", tmp_path / "x")


def test_a_failure_is_a_code_only() -> None:
    assert wire.error_code(wire.error_content("label_unmapped")) == "label_unmapped"
    assert wire.error_code(wire.pack(FedAvgUpdate(num_examples=1))) is None
