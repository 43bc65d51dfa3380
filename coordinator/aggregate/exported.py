"""The sites' own exported encoders (trained on their synthetic corpus) as model folders."""

from __future__ import annotations

from pathlib import Path

from coordinator.aggregate.built_model import BuiltModel
from coordinator.verified_bundle import VerifiedBundle
from protocol.rounds import TrainedModel
from shared.bundle_verify import ENCODER_PREFIX
from shared.contained import contained_path, write_contained
from shared.transport import record_to_safetensors_bytes


def exported_encoders(bundles: dict[str, VerifiedBundle], out_root: Path) -> list[BuiltModel]:
    """Each site's exported synthetic-trained encoder (``encoder/`` files), as a model folder.

    These tag in the site's own labels; cross-site evaluation maps their predictions.
    """
    built = []
    for site, bundle in sorted(bundles.items()):
        weights = {n: w for n, w in bundle.weights.items() if n.startswith(ENCODER_PREFIX)}
        if not weights or not any(n.endswith("/config.json") for n in bundle.files):
            continue
        model_dir = contained_path(out_root, f"export-{site}")
        for name, data in bundle.files.items():
            if name.startswith(ENCODER_PREFIX):
                write_contained(model_dir, name.removeprefix(ENCODER_PREFIX), data)
        for name, (record, header) in weights.items():
            data = record_to_safetensors_bytes(record, header)
            write_contained(model_dir, name.removeprefix(ENCODER_PREFIX), data)
        info = TrainedModel(
            name=f"export:{site}",
            kind="export",
            trained_on=(site,),
            n_training_documents=bundle.accepted.n_documents,
        )
        built.append(BuiltModel(info, model_dir))
    return built
