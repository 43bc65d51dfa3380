"""Models an operator gives ``coordinator evaluate`` to score at every site, no training.

A source is a model folder (``config.json`` + weights), an export bundle folder (its
``encoder/`` is taken once the bundle verifies with its site's registered key), or a Hugging
Face id (downloaded into the Hugging Face cache unless already there). Each becomes a model
folder under ``out_dir``; ``models.json`` lists them for the ServerApp.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from coordinator.aggregate.built_model import BuiltModel
from coordinator.deployment.keys import load_registry
from protocol.export import MANIFEST
from protocol.rounds import TrainedModel
from shared.atomic import atomic_write_text
from shared.bundle_folder import read_bundle_folder
from shared.bundle_verify import ENCODER_PREFIX, BundleRejected, parse_manifest, verify_bundle_bytes
from shared.contained import contained_path, write_contained
from shared.errors import ConfigError, VerificationError
from shared.ner_tokens import iob2_labels

MODELS_FILE = "models.json"
_HF_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def _registered_key(site_id: str, registry: Path) -> Ed25519PublicKey:
    keys = load_registry(registry).sites.get(site_id)
    if keys is None:
        raise ConfigError(
            f"bundle of {site_id!r}: that site is not in {registry}; fix: coordinator keys "
            f"register --site-id {site_id} ..."
        )
    public = serialization.load_pem_public_key(keys.signing_public_key_pem.encode())
    if not isinstance(public, Ed25519PublicKey):
        raise ConfigError(f"{registry}: the key of {site_id!r} is not Ed25519")
    return public


def bundle_encoder(bundle_dir: Path, registry: Path, out_root: Path) -> tuple[str, Path]:
    """The encoder of a bundle that verifies with its site's registered key."""
    try:
        site_id = parse_manifest((bundle_dir / MANIFEST).read_bytes()).site_id
        bundle = read_bundle_folder(bundle_dir)
        verify_bundle_bytes(bundle, _registered_key(site_id, registry), site_id)
    except (BundleRejected, VerificationError, OSError) as exc:
        raise ConfigError(f"{bundle_dir}: the bundle does not verify ({exc})") from exc
    files = {n: d for n, d in bundle.artifacts.items() if n.startswith(ENCODER_PREFIX)}
    if not any(n.endswith("/config.json") for n in files):
        raise ConfigError(f"{bundle_dir}: the bundle has no exported encoder/")
    out_dir = contained_path(out_root, f"export-{site_id}")
    for name, data in files.items():
        write_contained(out_dir, name.removeprefix(ENCODER_PREFIX), data)
    return f"export:{site_id}", out_dir


def hub_model(repo_id: str) -> Path:
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id))
    except Exception as exc:
        raise ConfigError(
            f"{repo_id}: not a local folder and not downloadable ({type(exc).__name__}); fix: "
            "give a model folder, a bundle folder or a Hugging Face id you can reach"
        ) from exc


def resolve_source(source: str, registry: Path, out_root: Path) -> tuple[str, Path]:
    """``(name, model folder)`` for one ``--model`` value, ``[NAME=]SOURCE``."""
    name, _, text = source.rpartition("=") if "=" in source else ("", "", source)
    path = Path(text).expanduser()
    if (path / MANIFEST).is_file():
        found, folder = bundle_encoder(path, registry, out_root)
    elif (path / "config.json").is_file():
        found, folder = path.name, path.resolve()
    elif _HF_ID.match(text) and not path.exists():
        found, folder = text, hub_model(text)
    else:
        raise ConfigError(
            f"--model {source}: not a model folder (config.json), a bundle folder "
            "(manifest.json) or a Hugging Face id; fix: check the path"
        )
    return name or found, folder


def write_models_file(sources: list[str], registry: Path, out_root: Path) -> Path:
    """Resolve every source and list them in ``models.json`` (names must differ)."""
    models: dict[str, str] = {}
    for source in sources:
        name, folder = resolve_source(source, registry, out_root)
        if name in models:
            raise ConfigError(f"two models named {name!r}; fix: name them, --model NAME=SOURCE")
        models[name] = str(folder)
    path = out_root / MODELS_FILE
    atomic_write_text(path, json.dumps(models, indent=2))
    return path


def load_given_models(path: Path) -> list[BuiltModel]:
    models = json.loads(path.read_text(encoding="utf-8"))
    return [
        BuiltModel(
            TrainedModel(name=name, kind="given", trained_on=(), n_training_documents=0),
            Path(folder),
        )
        for name, folder in models.items()
    ]


def tags_in(labels: tuple[str, ...], model_dir: Path) -> bool:
    """Whether the model already tags in ``labels`` (else its output is mapped at the site)."""
    ours = set(iob2_labels(labels))
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    return set((config.get("id2label") or {}).values()) <= ours
