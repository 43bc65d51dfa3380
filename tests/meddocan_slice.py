"""A site of the 30 shortest MEDDOCAN training notes with tiny models built from them: the
whole pipeline in seconds, for tests that run it for real."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shared.signing import generate_signing_key
from site_agent.config import deep_merge
from tests.tiny_models import tiny_causal_lm, tiny_encoder

# DEID_SYNTH_TEST_DEVICE=auto runs these sites as a GPU site runs (device and quantization
# chosen by the toolkit: QLoRA and the annotator on CUDA where it is visible); unset, on the CPU
# in full precision, as CI runs them
AUTO_DEVICE = os.environ.get("DEID_SYNTH_TEST_DEVICE") == "auto"


def hospital_case(label: str) -> str:
    """A MEDDOCAN label as another hospital's annotators might write it (issue 46: labels are
    data): ``NOMBRE_SUJETO_ASISTENCIA`` -> ``Nombre-Sujeto-Asistencia``."""
    return "-".join(word.capitalize() for word in label.split("_"))


def _relabelled(line: str, relabel: Callable[[str], str]) -> str:
    note = json.loads(line)
    for span in note["spans"]:
        span["label"] = relabel(span["label"])
    return json.dumps(note, ensure_ascii=False)


def slice_site(
    root: Path,
    meddocan_dir: Path,
    site_id: str,
    relabel: Callable[[str], str] | None = None,
    **tables: Any,
) -> tuple[dict[str, Any], Path]:
    """(site config as a dict, the signing key's public half); ``tables`` merge over the base
    (one annotator epoch, LoRA at 2 x 64 on the CPU, canaries off unless asked for);
    ``relabel`` rewrites every label of the slice (``hospital_case``)."""
    rows = (meddocan_dir / "train.jsonl").read_text(encoding="utf-8").splitlines()
    lines = sorted(rows, key=lambda line: len(json.loads(line)["text"]))[:30]  # the shortest
    if relabel is not None:
        lines = [_relabelled(line, relabel) for line in lines]
    corpus = root / "slice.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts = [json.loads(line)["text"] for line in lines]
    private, public = root / "keys" / "site.pem", root / "keys" / "site.pub.pem"
    generate_signing_key(private, public)
    base = {
        "site_id": site_id,
        "language": "es",
        "device": "auto" if AUTO_DEVICE else "cpu",
        "work_dir": str(root / "work"),
        "signing_key": str(private),
        "corpus": {"path": str(corpus)},
        "split": {"validation_fraction": 0.2, "test_fraction": 0.2},
        "annotator": {
            "base_model": str(tiny_encoder(root / "encoder", texts)),
            "min_validation_recall": 0.0,
            "training": {"epochs": 1, "batch_size": 8, "min_steps": 0},
        },
        "adapt": {
            "base_model": str(tiny_causal_lm(root / "generator", texts)),
            "batch_size": 2,
            "max_length": 64,
            "quantization": "auto" if AUTO_DEVICE else "none",
        },
    }
    return deep_merge(base, tables), public
