"""The outcome of adaptation: the saved adapter and ``adapt.json`` (provenance and losses)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from protocol import Provenance
from protocol.base import ProtocolModel
from shared.atomic import atomic_directory, atomic_write_text
from shared.provenance import make_provenance
from site_agent.adapt.quantization import LoadPlan
from site_agent.adapt.recipe import GeneratorRecipe
from site_agent.adapt.settings import AdaptSettings

if TYPE_CHECKING:
    from site_agent.adapt.output_vocabulary import OutputVocabulary

RESULT_FILE = "adapt.json"
ADAPTER_DIR = "adapter"


class AdaptResult(ProtocolModel):
    """Where the adapter is and how it was made."""

    adapter_dir: Path
    base_model: str
    run_digest: str
    settings: AdaptSettings
    quantization: str
    device: str
    dtype: str
    plan_reason: str
    steps: int
    steps_per_epoch: int
    epochs_completed: float
    resumed_from_step: int | None = None
    documents: int
    training_windows: int
    training_rows: int | None = Field(
        None, description="rows per epoch: windows, or packed rows of windows"
    )
    training_tokens: int | None = Field(None, description="tokens per epoch, padding excluded")
    phi_windows: int | None = Field(None, description="windows holding PHI (markers or a PHI note)")
    seen_windows: int | None = Field(
        None, description="windows per epoch after PHI-bearing ones were repeated"
    )
    recipe: GeneratorRecipe | None = Field(
        None, description="the generator recipe and one reason per choice (pre-flight's)"
    )
    trainable_parameters: int
    losses: tuple[float, ...] = ()
    seconds: float
    train_seconds: float
    seconds_per_step: float | None = None
    tokens_per_second: float | None = Field(
        None, description="training tokens (no padding) per second of the training loop"
    )
    vocabulary_size: int | None = Field(
        None, description="rows of the restricted output layer (None: the full vocabulary)"
    )
    vocabulary_sha256: str | None = Field(None, description="hash of vocabulary.json's ids")
    provenance: Provenance = Field(default_factory=Provenance)

    @property
    def final_loss(self) -> float | None:
        return self.losses[-1] if self.losses else None


def read_result(out: Path, digest: str) -> AdaptResult | None:
    """A finished result for this exact run, so a re-run is a no-op."""
    path = out / RESULT_FILE
    if not path.is_file():
        return None
    result = AdaptResult.model_validate(json.loads(path.read_text(encoding="utf-8")))
    if result.run_digest != digest or not (result.adapter_dir / "adapter_config.json").is_file():
        return None
    return result


@dataclass(frozen=True)
class TrainingText:
    """How much text the adapter trained on, per epoch."""

    documents: int
    windows: int
    rows: int | None = None
    tokens: int | None = None
    phi_windows: int | None = None
    seen_windows: int | None = None


@dataclass(frozen=True)
class TrainingRun:
    """How the training loop went: its losses, steps and time."""

    losses: list[float]
    steps: int
    steps_per_epoch: int
    resumed_from: int | None
    seconds: float
    train_seconds: float

    @property
    def trained_steps(self) -> int:
        """Steps this process ran (a resumed run's earlier steps excluded)."""
        return self.steps - (self.resumed_from or 0)

    def tokens_per_second(self, tokens: int | None) -> float | None:
        if not tokens or not self.trained_steps or self.train_seconds <= 0:
            return None
        epochs = self.trained_steps / self.steps_per_epoch
        return round(tokens * epochs / self.train_seconds, 1)

    def figures(self, tokens: int | None) -> dict[str, Any]:
        """The loop's fields of :class:`AdaptResult` (``tokens``: training tokens per epoch)."""
        trained = self.trained_steps
        return {
            "steps": self.steps,
            "steps_per_epoch": self.steps_per_epoch,
            "epochs_completed": round(self.steps / self.steps_per_epoch, 4),
            "resumed_from_step": self.resumed_from,
            "losses": tuple(round(x, 6) for x in self.losses),
            "seconds": round(self.seconds, 3),
            "train_seconds": round(self.train_seconds, 3),
            "seconds_per_step": round(self.train_seconds / trained, 4) if trained else None,
            "tokens_per_second": self.tokens_per_second(tokens),
        }


def save_adapter(
    out: Path, model: Any, tokenizer: Any = None, vocabulary: OutputVocabulary | None = None
) -> Path:
    """The adapter folder, written atomically; a tokenizer only when the adapter added tokens
    (else it is the base model's, and vLLM warns on per-LoRA tokenizers); ``vocabulary.json``
    when the output layer is restricted."""
    adapter_dir = out / ADAPTER_DIR
    with atomic_directory(adapter_dir) as tmp:
        # Added tokens travel as their trained rows (PEFT trainable tokens), not as whole
        # embedding matrices: the base is resized to the tokenizer when the adapter loads.
        model.save_pretrained(tmp, save_embedding_layers=False)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        if vocabulary is not None:
            from site_agent.adapt.output_vocabulary import write_vocabulary

            write_vocabulary(tmp, vocabulary)
    return adapter_dir


def finish(
    out: Path,
    model: Any,
    settings: AdaptSettings,
    plan: LoadPlan,
    base_ref: str,
    digest: str,
    text: TrainingText,
    run: TrainingRun,
    tokenizer: Any = None,
    recipe: GeneratorRecipe | None = None,
    vocabulary: OutputVocabulary | None = None,
) -> AdaptResult:
    """Save the adapter atomically, write ``adapt.json``, drop the checkpoints."""
    adapter_dir = save_adapter(out, model, tokenizer, vocabulary)
    result = AdaptResult(
        adapter_dir=adapter_dir.resolve(),
        base_model=base_ref,
        run_digest=digest,
        settings=settings,
        quantization=plan.quantization,
        device=plan.device,
        dtype=plan.dtype,
        plan_reason=plan.reason,
        documents=text.documents,
        training_windows=text.windows,
        training_rows=text.rows,
        training_tokens=text.tokens,
        phi_windows=text.phi_windows,
        seen_windows=text.seen_windows,
        recipe=recipe,
        trainable_parameters=sum(p.numel() for p in model.parameters() if p.requires_grad),
        **run.figures(text.tokens),
        vocabulary_size=len(vocabulary) if vocabulary is not None else None,
        vocabulary_sha256=vocabulary.sha256 if vocabulary is not None else None,
        provenance=make_provenance(
            source=base_ref, config_digest=digest, notes={"stage": "adapt_generator"}
        ),
    )
    atomic_write_text(out / RESULT_FILE, result.model_dump_json(indent=2) + "\n")
    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    return result
