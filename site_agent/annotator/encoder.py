"""The annotator as the pipeline stages call it: by model name, with a progress display.

``train_encoder`` resolves a registered name, folder or Hugging Face id and trains with
:func:`ner.train.train_annotator`; the annotator, train-synthetic stages use it.
``annotate_corpus`` labels a corpus with a trained folder (:func:`ner.infer.machine_annotate`);
the annotate and train-synthetic stages use it. ``resolve_backbone`` resolves a name without
fetching, for ``site-agent annotate train``. Torch loads on first call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.progress import Progress

from ner.backbone import check_backbone
from protocol import Corpus
from protocol.annotator import AnnotatorMetrics, AnnotatorRecord, AnnotatorSettings
from shared.progress import ProgressBars
from site_agent.models import resolve_model


@dataclass(frozen=True)
class TrainedEncoder:
    """An encoder folder, its ``annotator.json`` record and best validation metrics (None
    without validation)."""

    model_dir: Path
    record: AnnotatorRecord

    @property
    def best_metrics(self) -> AnnotatorMetrics | None:
        return self.record.best_metrics

    @property
    def metrics(self) -> dict[str, Any] | None:
        best = self.record.best_metrics
        return best.model_dump() if best else None


def resolve_backbone(name_or_path: str | Path) -> Path | str:
    """A local model folder, registry name or HF id, turned into what ``from_pretrained`` wants.

    An existing folder must hold a ``config.json``. Other names go to the model registry
    (``site_agent.models.resolve_model``: installed registry models become their folder, HF ids
    pass through, unknown or not-yet-fetched names raise ModelUnavailableError with the fetch
    command).
    """
    if Path(name_or_path).expanduser().exists():
        return check_backbone(name_or_path)
    return resolve_model(str(name_or_path))


def train_encoder(
    train: Corpus,
    validation: Corpus,
    base_model: str,
    settings: AnnotatorSettings,
    out_dir: Path,
    progress: Progress | None,
) -> TrainedEncoder:
    """Fine-tune ``base_model`` (a name, folder or Hugging Face id) for NER. The state after
    each epoch is kept beside ``out_dir`` (``<out_dir>.resume``) until the model is saved, so
    a stage stopped mid-training resumes after its last finished epoch."""
    from ner.train import train_annotator

    model = str(resolve_model(base_model, allow_fetch=True))
    bars = ProgressBars(progress)
    resume = out_dir.with_name(f"{out_dir.name}.resume")
    result = train_annotator(train, validation, model, settings, out_dir, bars.phase, resume)
    return TrainedEncoder(Path(result.model_dir), result.record)


def annotate_corpus(model_dir: Path, corpus: Corpus, progress: Progress | None = None) -> Corpus:
    """``corpus`` with the spans the trained annotator in ``model_dir`` finds."""
    from ner.infer import machine_annotate

    annotated: Corpus = machine_annotate(model_dir, corpus, progress=ProgressBars(progress).phase)
    return annotated
