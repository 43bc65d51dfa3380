"""The sites' own exported encoders (trained on their synthetic corpus) as model folders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from coordinator.aggregate.built_model import BuiltModel
from coordinator.verified_bundle import VerifiedBundle
from protocol.rounds import TrainedModel
from shared.bundle_verify import ENCODER_CARD, ENCODER_PREFIX
from shared.contained import contained_path, write_contained
from shared.safe_models import check_model_source
from shared.transport import record_to_safetensors_bytes


def exported_encoders(
    bundles: dict[str, VerifiedBundle],
    out_root: Path,
    on_failure: Callable[[str, Exception], None] | None = None,
) -> list[BuiltModel]:
    """Each site's exported synthetic-trained encoder (``encoder/`` files), as a model folder.

    These tag in the site's own labels; cross-site evaluation maps their predictions. The
    site's ``encoder/README.md`` is not copied: the coordinator writes the card of every model
    it built from its own records (``coordinator/report/model_cards.py``). A folder
    that cannot be written, or that ``shared.safe_models`` refuses, is left out and passed to
    ``on_failure`` (without it, the error propagates).
    """
    built = []
    for site, bundle in sorted(bundles.items()):
        try:
            model = _exported(site, bundle, out_root)
        except Exception as exc:
            if on_failure is None:
                raise
            on_failure(site, exc)
            continue
        if model is not None:
            built.append(model)
    return built


def _exported(site: str, bundle: VerifiedBundle, out_root: Path) -> BuiltModel | None:
    weights = {n: w for n, w in bundle.weights.items() if n.startswith(ENCODER_PREFIX)}
    if not weights or not any(n.endswith("/config.json") for n in bundle.files):
        return None
    model_dir = contained_path(out_root, f"export-{site}")
    for name, data in bundle.files.items():
        if name.startswith(ENCODER_PREFIX) and name != ENCODER_CARD:  # the card is ours to write
            write_contained(model_dir, name.removeprefix(ENCODER_PREFIX), data)
    for name, (record, header) in weights.items():
        data = record_to_safetensors_bytes(record, header)
        write_contained(model_dir, name.removeprefix(ENCODER_PREFIX), data)
    check_model_source(model_dir)  # raises UnsafeModel: no code, no auto_map, a known type
    info = TrainedModel(
        name=f"export:{site}",
        kind="export",
        trained_on=(site,),
        n_training_documents=bundle.accepted.n_documents,
    )
    return BuiltModel(info, model_dir)
