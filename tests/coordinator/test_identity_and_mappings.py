"""Node identity bound to auth keys, merged label mappings, FedAvg's start from exported
encoders (against a hand-computed mean) and the sources ``coordinator evaluate`` accepts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save, save_file

from coordinator.aggregate.start import average_into
from coordinator.deployment.keys import register_site
from coordinator.given_models import load_given_models, resolve_source, write_models_file
from coordinator.identity import NodeBindings, identity_problem, load_bindings, write_bindings
from coordinator.mappings import merge_mappings
from protocol import LabelMapping
from shared.errors import ConfigError
from tests.bundles import good_bundle, site_keys

BINDINGS = NodeBindings({"site-a": 11, "site-b": 22})


@pytest.mark.parametrize(
    ("node", "claimed", "problem"),
    [
        (11, "site-a", None),
        (22, "site-a", "holds the SuperNode key of 'site-b' but said it is 'site-a'"),
        (33, "site-a", "authenticated with no registered site's key"),
    ],
)
def test_a_node_speaks_only_for_the_site_whose_key_it_holds(
    node: int, claimed: str, problem: str | None
) -> None:
    found = identity_problem(node, claimed, BINDINGS)
    assert (found is None) if problem is None else (problem in str(found))
    assert identity_problem(node, claimed, None) is None  # no auth, no bindings: trusted


def test_bindings_round_trip(tmp_path: Path) -> None:
    path = write_bindings(tmp_path / "b.json", {"site-b": 22, "site-a": 11})
    assert load_bindings(path) == BINDINGS and load_bindings(None) is None


def mapping(
    name: str, pairs: dict[str, str], coarse: tuple[str, ...] = ("PER", "LOC")
) -> LabelMapping:
    return LabelMapping(name=name, coarse_labels=coarse, mapping=pairs)


def test_site_mappings_merge_into_one_scheme() -> None:
    merged = merge_mappings(
        [mapping("s", {"NAME": "PER"}), mapping("s", {"CITY": "LOC", "NAME": "PER"})]
    )
    assert merged.mapping == {"NAME": "PER", "CITY": "LOC"}


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (mapping("s", {"NAME": "LOC"}), "'NAME' is mapped to 'PER' and to 'LOC'"),
        (mapping("t", {}, ("PER",)), "fix: map every site onto one coarse scheme"),
    ],
)
def test_conflicting_mappings_are_refused(second: LabelMapping, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        merge_mappings([mapping("s", {"NAME": "PER"}), second])


def test_fedavg_starts_from_the_document_weighted_mean_of_the_encoder_bodies(
    tmp_path: Path,
) -> None:
    def model(name: str, body: float, head: float, head_rows: int = 3) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        tensors = {
            "bert.layer.weight": np.full((2, 2), body, dtype=np.float32),
            "bert.position_ids": np.arange(4, dtype=np.int64),
            "classifier.weight": np.full((head_rows, 2), head, dtype=np.float32),
        }
        save_file(tensors, str(folder / "model.safetensors"))
        return folder

    initial = model("init", 0.0, 5.0)
    replaced = average_into(initial, [(model("a", 1.0, 9.0, 7), 1), (model("b", 4.0, 9.0, 5), 3)])
    weights = load_file(str(initial / "model.safetensors"))
    assert replaced == ["bert.layer.weight"]
    np.testing.assert_allclose(weights["bert.layer.weight"], np.full((2, 2), 0.25 * 1 + 0.75 * 4))
    np.testing.assert_array_equal(weights["classifier.weight"], np.full((3, 2), 5.0))  # own head
    np.testing.assert_array_equal(weights["bert.position_ids"], np.arange(4))


def test_given_sources_folder_and_verified_bundle(tmp_path: Path) -> None:
    encoder = tmp_path / "enc"
    encoder.mkdir()
    (encoder / "config.json").write_text("{}", encoding="utf-8")
    weights = save(
        {"w": np.arange(3, dtype=np.float32)}
    )  # real safetensors: the verifier reads them
    (encoder / "model.safetensors").write_bytes(weights)
    keys = site_keys(tmp_path / "keys")
    bundle = good_bundle(tmp_path, "site-x", keys, encoder_dir=encoder)
    registry = tmp_path / "registry.json"
    register_site(registry, "site-x", keys.public)
    models = write_models_file([str(encoder), f"mine={bundle}"], registry, tmp_path / "given")
    loaded = {m.info.name: m.model_dir for m in load_given_models(models)}
    assert loaded["enc"] == encoder.resolve()
    assert (loaded["mine"] / "model.safetensors").read_bytes() == weights
    (bundle / "synthetic.jsonl").write_text("{}\n", encoding="utf-8")  # tampered after signing
    with pytest.raises(ConfigError, match="does not verify"):
        resolve_source(str(bundle), registry, tmp_path / "again")


def test_evaluate_cli_names_a_bad_source_and_exits_non_zero(tmp_path: Path) -> None:
    config = tmp_path / "coordinator.toml"
    (tmp_path / "registry.json").write_text(json.dumps({"sites": {}}), encoding="utf-8")
    (tmp_path / "base").mkdir()
    config.write_text(
        '[superlink]\naddress = "127.0.0.1:1"\n[federation]\nregistry = "registry.json"\n'
        'base-model = "base"\noutput-dir = "out"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "coordinator", "evaluate", "--config", str(config), "--insecure",
         "--model", str(tmp_path / "nothing-here")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert "nothing-here" in done.stderr and "fix:" in done.stderr
