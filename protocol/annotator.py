"""The machine annotator's settings and the record it leaves beside its weights.

``AnnotatorSettings`` follows seed 000 (Appendix A, Table 9; §3.4 for 128-word chunks).
``AnnotatorRecord`` is the content of ``annotator.json`` in a trained model folder: base model,
settings and their digest, label set, per-epoch metrics and timings, and provenance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from protocol.base import SCHEMA_VERSION, ProtocolModel
from protocol.corpus import Provenance


class AnnotatorSettings(ProtocolModel):
    """How to fine-tune an encoder for NER; defaults follow seed 000.

    ``batch_size`` is the *effective* batch (16 in the paper); each optimiser step accumulates
    ``grad_accumulation`` micro-batches of ``batch_size // grad_accumulation`` chunks, which
    keeps the paper's batch while bounding memory. None picks it per device: micro-batches of 4
    on CPU (about 1 GB less peak memory than 16 for MiniLM on MEDDOCAN, and no slower; 2 were
    about 20% slower for e5-small), else 3 or 2 where 4 does not divide the batch, else the
    whole batch; the whole batch at once on CUDA. ``num_threads`` sets
    ``torch.set_num_threads``; None uses the cores that other processes leave idle, re-read
    before every epoch (``shared.threads``: all cores' busy time minus this process's own, at
    least 1), because on a shared 2-core machine an oversubscribed second thread made training
    2-6x slower. ``bf16`` runs forward/backward under
    bfloat16 autocast (weights stay fp32); None turns it on where the hardware makes it
    faster: CUDA with bf16, a CPU with AVX-512 BF16 or AMX (on an AMD EPYC with AVX-512 BF16
    and no AMX, e5-small trained about 1.8x and predicted 2.3x as fast as in float32:
    docs/results.md, "The machine annotator"; training there attends with plain matrix
    products, ``ner.loop.TRAINING_ATTENTION``).
    ``stall_restarts``: how many times a run whose best validation epoch finds no entity at
    all (stuck on "O", as seed 000 Appendix A reports) is started again with the next seed.
    ``freeze_embeddings`` keeps the input (sub-word) embedding matrix fixed. For a multilingual
    encoder it holds most of the weights (96M of 118M in e5-small: 250k rows, of which a corpus
    touches a few thousand), so freezing it removes the dense gradient and AdamW update of that
    matrix (about 30% of a CPU training step, and about 1 GB of optimiser state) and keeps the
    rows of sub-words unseen in training as pre-trained. None freezes it when it holds at least
    half of the model's parameters (pre-trained vocabularies; never a small randomly initialised
    test model, which needs to learn its embeddings). ``decoding`` turns per-word tag scores
    into tags, in validation and in machine annotation alike: ``viterbi`` takes the most
    probable well-formed IOB2 sequence, ``argmax`` each word's best tag on its own
    (``ner.decoding``).

    Sparse PHI (most notes without any, well under 1% of words inside an entity) leaves a model
    that predicts only ``O`` after a recipe counted in epochs; ``ner.recipe``
    turns the training corpus's PHI statistics into the run's :class:`TrainingRecipe`.
    ``min_steps`` makes a small corpus get at least that many optimiser steps (epochs are added,
    up to ``max_epochs``); ``phi_free_per_phi`` keeps, each epoch, that many PHI-free chunks
    per PHI-bearing chunk, drawn afresh each epoch (None: 1 when PHI-bearing chunks are under
    half of the chunks, else all); ``entity_weight`` multiplies the loss of entity tags (None:
    from the entity-word share of what one epoch sees); ``patience`` stops training after that
    many epochs without a better validation F1 (at least a quarter of the planned epochs, since
    short epochs plateau for a while between gains), once some entity was found (0: off).
    The token-classification head is new (randomly initialised) while the encoder is
    pre-trained; at the encoder's 1e-4, e5-small predicted only "O" for 30 epochs (90 steps)
    on 32-word MEDDOCAN pieces and 10x for the head cut that to 15, so a new head (not in the
    checkpoint) learns at ``head_learning_rate``; a head that comes with the model (FedAvg
    rounds) at the encoder's.
    """

    epochs: int = Field(6, ge=1, description="passes over the training chunks (min_steps may add)")
    batch_size: int = Field(16, ge=1, description="effective batch (chunks per optimiser step)")
    learning_rate: float = Field(1e-4, gt=0, description="AdamW peak learning rate")
    head_learning_rate: float | None = Field(
        None, gt=0, description="peak rate of the new classifier head; unset: 10x learning_rate"
    )
    weight_decay: float = Field(1e-5, ge=0, description="AdamW weight decay")
    warmup_ratio: float = Field(0.0, ge=0, lt=1, description="share of steps of linear warm-up")
    chunk_words: int = Field(128, ge=1, description="words per training/inference chunk")
    max_length: int = Field(512, ge=8, description="sub-word tokens per chunk at most")
    seed: int = Field(13, description="seed of initialisation and batch order")
    grad_accumulation: int | None = Field(
        None, ge=1, description="micro-batches per step; unset: per device (see the type)"
    )
    group_by_length: bool = Field(True, description="batch chunks of similar length together")
    num_threads: int | None = Field(None, ge=1, description="torch threads; unset: idle cores")
    bf16: bool | None = Field(None, description="bfloat16 autocast; unset: where native")
    eval_batch_size: int = Field(32, ge=1, description="chunks per batch in validation/inference")
    stall_restarts: int = Field(1, ge=0, description='restarts of a run stuck on "O"')
    freeze_embeddings: bool | None = Field(
        None, description="keep input embeddings fixed; unset: when they are most weights"
    )
    decoding: Literal["viterbi", "argmax"] = Field(
        "viterbi", description="per-word scores to IOB2 tags (see the type)"
    )
    min_steps: int = Field(
        300, ge=0, description="least optimiser steps; epochs are added for a small corpus"
    )
    max_epochs: int = Field(40, ge=1, description="most epochs that min_steps may add up to")
    max_steps: int | None = Field(
        None,
        ge=1,
        description="stop after this many optimiser steps (a bounded run); unset: the recipe's",
    )
    patience: int = Field(
        3, ge=0, description="stop after this many epochs without a better validation F1 (0: off)"
    )
    phi_free_per_phi: float | None = Field(
        None, ge=0, description="PHI-free chunks kept per PHI chunk each epoch; unset: by density"
    )
    entity_weight: float | None = Field(
        None, gt=0, description="loss weight of entity tags against O; unset: by density"
    )

    @model_validator(mode="after")
    def _batch_divides(self) -> AnnotatorSettings:
        if self.grad_accumulation and self.batch_size % self.grad_accumulation:
            raise ValueError(
                f"batch_size={self.batch_size} is not a multiple of "
                f"grad_accumulation={self.grad_accumulation}; fix: choose grad_accumulation "
                "among the divisors of batch_size (the effective batch stays batch_size)"
            )
        return self

    def accumulation_for(self, cuda: bool) -> int:
        """Micro-batches per optimiser step on this device (see ``grad_accumulation``)."""
        if self.grad_accumulation is not None:
            return self.grad_accumulation
        if cuda:
            return 1
        micro = next((m for m in (4, 3, 2) if self.batch_size % m == 0), self.batch_size)
        return self.batch_size // micro


class TrainingRecipe(ProtocolModel):
    """What a run did because of its training corpus (``ner.recipe``).

    ``phi_word_density`` is the share of words inside a gold entity, ``phi_chunk_share`` the
    share of training chunks holding one; ``phi_free_per_phi`` is None when every chunk is
    seen every epoch. ``reasons`` says, one line each, why each choice was made.
    """

    documents: int
    documents_without_phi: float
    words: int
    phi_words: int
    phi_word_density: float
    chunks: int
    phi_chunks: int
    phi_chunk_share: float
    sparse: bool
    phi_free_per_phi: float | None
    chunks_per_epoch: int
    entity_weight: float
    epochs: int
    steps: int
    patience: int
    reasons: tuple[str, ...] = ()


class LabelScore(ProtocolModel):
    """Word-level validation counts of one entity label (B/I ignored, label must match)."""

    support: int
    found: int
    predicted: int

    @property
    def recall(self) -> float:
        return self.found / self.support if self.support else 0.0

    @property
    def precision(self) -> float:
        return self.found / self.predicted if self.predicted else 0.0


class AnnotatorMetrics(ProtocolModel):
    """Validation scores of one epoch.

    ``precision``/``recall``/``f1`` are token-level (one unit per word, label must match, ``O``
    excluded: the paper's utility measure); ``entity_*`` are seqeval's entity-level scores on
    the same IOB2 word tags. ``support`` counts gold words inside an entity. The span scores
    (``shared.metrics``: exact/overlap micro scores, document leakage = share of documents with
    a missed gold span) are measured on the decoded spans, as machine annotation produces them.
    ``labels`` holds per-label word counts; ``confusion`` counts words by gold then predicted
    IOB2 prefix (``B``, ``I``, ``O``), which shows a model stuck on ``O`` at a glance.
    """

    precision: float
    recall: float
    f1: float
    entity_precision: float
    entity_recall: float
    entity_f1: float
    support: int
    exact_f1: float | None = None
    overlap_precision: float | None = None
    overlap_recall: float | None = None
    overlap_f1: float | None = None
    doc_leakage: float | None = None
    labels: dict[str, LabelScore] = Field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    scorer: str = "word-token micro + seqeval entity + shared.metrics spans"


class EpochRecord(ProtocolModel):
    """What one training epoch did, how long it took, and on how many CPU threads."""

    epoch: int
    train_loss: float
    train_seconds: float
    eval_seconds: float = 0.0
    metrics: AnnotatorMetrics | None = None
    threads: int | None = None


class AnnotatorRecord(ProtocolModel):
    """``annotator.json``: how a machine annotator was trained, and how well it did.

    ``base_model`` is a registry name, a Hugging Face id or ``local:<folder name>``, never a
    path (the file may leave the site inside the synthetic encoder); ``base_model_sha256``
    is the digest of the base model's files when they are on this disk. ``restarts`` counts
    runs started again because they stalled on ``O`` (each costs a whole training run);
    ``recipe`` is what the corpus's PHI statistics made the run do; ``train_mentions`` counts
    gold mentions per label in the training corpus.
    """

    schema_version: str = SCHEMA_VERSION
    base_model: str
    base_model_sha256: str | None = None
    labels: tuple[str, ...]
    tags: tuple[str, ...]
    settings: AnnotatorSettings
    settings_digest: str
    best_epoch: int
    epochs: tuple[EpochRecord, ...]
    train_chunks: int
    validation_chunks: int = 0
    device: str = "cpu"
    bf16: bool = False
    grad_accumulation: int = 1
    num_threads: int = 1
    restarts: int = 0
    stopped_early: bool = False
    recipe: TrainingRecipe | None = None
    train_mentions: dict[str, int] = Field(default_factory=dict)
    embeddings_frozen: bool = False
    timings: dict[str, float] = Field(default_factory=dict)
    provenance: Provenance = Field(default_factory=Provenance)
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def best_metrics(self) -> AnnotatorMetrics | None:
        """Validation metrics of the kept epoch (None without a validation corpus)."""
        for record in self.epochs:
            if record.epoch == self.best_epoch:
                return record.metrics
        return None


class AnnotatorResult(ProtocolModel):
    """What ``train_annotator`` returns: where the model is and its ``annotator.json`` record."""

    model_dir: Path
    record: AnnotatorRecord

    @property
    def best_metrics(self) -> AnnotatorMetrics | None:
        return self.record.best_metrics
