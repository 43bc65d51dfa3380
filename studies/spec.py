"""The experiment file (TOML): which site, which studies, which conditions, how many repeats.

```toml
[experiment]
name = "meddocan"
site = "meddocan-site.toml"        # relative to this file
repeats = 3
repeat_by = "training"             # training | seed | split | fold (see ExperimentSettings)
[experiment.overrides]             # dotted site.toml keys, for every run
"annotator.training.epochs" = 2

[[study]]
name = "augmentation"
title = "Seed 002 Table 5: augmentation by epochs"
set = { regime = "augmentation" }  # knobs every condition of the study shares
vary = { synthetic_fraction = [0.0, 0.25, 0.5, 0.75, 0.9] }   # a grid
```

A knob is a field of :class:`Condition` or, when it holds a dot, a site.toml key
(``"generation.mode"``, ``"adapt.base_model"``). Errors name the file, the field and the fix.
"""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from protocol.base import ProtocolModel
from shared.errors import ConfigError
from shared.text_files import read_text
from shared.validation_messages import config_lines


class ExperimentSpecError(ConfigError):
    """An experiment file does not parse or validate; lines name ``file: [field] problem; fix``."""


Regime = Literal["synthetic-only", "real-only", "augmentation", "fixed-n", "compute-matched"]


class Condition(ProtocolModel):
    """One point of a study: how the training set is built, and which site settings change.

    * ``synthetic-only``: the audited synthetic corpus, ``synthetic_amount`` x the training
      split (seed 000).
    * ``real-only``: the real training documents.
    * ``augmentation``: every real document plus synthetic ones so that the synthetic share is
      ``synthetic_fraction`` (more exposure as it grows; seed 002 design A).
    * ``fixed-n``: ``fixed_n`` documents (unset: the real pool), ``real_fraction`` of them
      real and the rest synthetic (seed 002 design B).
    * ``compute-matched``: ``steps`` optimiser steps for every condition; the mix holds
      ``synthetic_fraction`` synthetic chunks, drawn with replacement when a pool runs short
      (real-only is oversampled; seed 002 Table 8).

    ``adapt_fraction`` / ``annotator_fraction``: share of the real training split used to adapt
    the generator (0: no adaptation) and to train the machine annotator (which is also the
    real pool of the regimes). ``data_fraction`` sets both (seed 000 Table 1).

    ``synthetic_source``: ``audited`` trains on the synthetic notes the privacy audit kept (what
    a site may export); ``unfiltered`` on every machine-annotated synthetic note, so the two
    together give the utility cost of the gate (issue 14). Varying an audit policy threshold
    (``"audit.policy.filters.rouge_threshold"``) traces the privacy-utility curve.
    """

    regime: Regime = "synthetic-only"
    synthetic_amount: float = Field(4.0, gt=0, le=50, description="x the training split")
    synthetic_fraction: float | None = Field(None, ge=0.0, lt=1.0)
    real_fraction: float | None = Field(None, gt=0.0, le=1.0)
    fixed_n: int | None = Field(None, ge=1)
    steps: int | None = Field(None, ge=1)
    adapt_fraction: float = Field(1.0, ge=0.0, le=1.0)
    annotator_fraction: float = Field(1.0, gt=0.0, le=1.0)
    synthetic_source: Literal["audited", "unfiltered"] = "audited"
    overrides: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _split_knobs(cls, data: Any) -> Any:
        """Dotted knobs are site.toml overrides; ``data_fraction`` sets both fractions."""
        if not isinstance(data, dict):
            return data
        out: dict[str, Any] = {"overrides": dict(data.get("overrides", {}))}
        for key, value in data.items():
            if key == "overrides":
                continue
            if "." in key:
                out["overrides"][key] = value
            elif key == "data_fraction":
                out.setdefault("adapt_fraction", value)
                out.setdefault("annotator_fraction", value)
            else:
                out[key] = value
        return out

    @model_validator(mode="after")
    def _regime_knobs(self) -> Condition:
        needs = {
            "augmentation": ("synthetic_fraction",),
            "fixed-n": ("real_fraction",),
            "compute-matched": ("synthetic_fraction", "steps"),
        }.get(self.regime, ())
        missing = [name for name in needs if getattr(self, name) is None]
        if missing:
            raise ValueError(
                f"regime {self.regime!r} needs {', '.join(missing)}; fix: set it in the study's "
                "`set` or `vary` table"
            )
        return self

    def label(self) -> str:
        """A short readable name of what this condition sets (for run ids and tables)."""
        shown = self.model_dump(exclude_defaults=True, exclude={"overrides"})
        parts = [f"{k}={v}" for k, v in shown.items()]
        parts += [f"{k}={v}" for k, v in sorted(self.overrides.items())]
        return ",".join(parts) or "default"


class Study(ProtocolModel):
    """A set of conditions compared in one table (and one plot)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str = ""
    set: dict[str, Any] = Field(default_factory=dict)
    vary: dict[str, list[Any]] = Field(default_factory=dict)
    conditions: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _something_to_run(self) -> Study:
        empty = [k for k, v in self.vary.items() if not v]
        if empty:
            raise ValueError(f"vary lists {empty} are empty; fix: give each at least one value")
        return self

    def expand(self, defaults: dict[str, Any]) -> list[Condition]:
        """Every condition: the grid of ``vary`` (or the single ``set`` point), then the
        explicit ``conditions``, each over ``defaults`` < ``set``."""
        base = {**defaults, **self.set}
        points: list[dict[str, Any]] = []
        if self.vary or not self.conditions:
            keys = list(self.vary)
            for values in itertools.product(*(self.vary[k] for k in keys)):
                points.append({**base, **dict(zip(keys, values, strict=True))})
        points += [{**base, **extra} for extra in self.conditions]
        return [Condition.model_validate(p) for p in points]

    def varied(self) -> list[str]:
        """The knobs this study varies (the columns of its table)."""
        keys = list(self.vary)
        for extra in self.conditions:
            keys += [k for k in extra if k not in keys]
        return keys


class ExperimentSettings(ProtocolModel):
    """``[experiment]``: the site, the repeats and what every run shares."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    site: Path = Field(description="site.toml, relative to the experiment file")
    repeats: int = Field(1, ge=1, le=20)
    repeat_by: Literal["training", "seed", "split", "fold"] = Field(
        "training",
        description="training: only the final encoder's seed and draws (the synthetic pool is "
        "shared, seed 002); seed: every seed (annotator, adapter, generation); split: every "
        "seed and a fresh random split; fold: k-fold cross-validation with k = repeats over "
        "the training and test notes (the validation notes stay; seed 000)",
    )
    bootstrap_resamples: int = Field(1000, ge=0, description="document resamples per run (0: off)")
    tiny_models: bool = Field(False, description="build tiny test models (CI and --quick only)")
    max_test_documents: int | None = Field(None, ge=1, description="cap on the test split")
    max_corpus_documents: int | None = Field(
        None, ge=4, description="a seeded sample of the gold corpus, before the split"
    )
    overrides: dict[str, Any] = Field(default_factory=dict)
    defaults: dict[str, Any] = Field(default_factory=dict)


class ExperimentSpec(ProtocolModel):
    """The whole experiment file."""

    experiment: ExperimentSettings
    study: list[Study] = Field(min_length=1)
    quick: dict[str, Any] = Field(
        default_factory=dict, description="[experiment] values that --quick replaces"
    )

    @model_validator(mode="after")
    def _unique_studies(self) -> ExperimentSpec:
        names = [s.name for s in self.study]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"study names {twice} appear twice; fix: give each study its own name")
        return self


QUICK_DEFAULTS: dict[str, Any] = {"tiny_models": True, "repeats": 1, "bootstrap_resamples": 50}
"""What ``--quick`` changes in any experiment file before its own ``[quick]`` table."""


def nest(dotted: dict[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}`` (site.toml overrides as a partial config)."""
    out: dict[str, Any] = {}
    for key, value in dotted.items():
        *parents, leaf = key.split(".")
        table = out
        for part in parents:
            table = table.setdefault(part, {})
        table[leaf] = value
    return out


def parse_spec(data: dict[str, Any], source: str) -> ExperimentSpec:
    """Validate ``data``; every condition is expanded once here so bad knobs fail early."""
    try:
        spec = ExperimentSpec.model_validate(data)
    except ValidationError as exc:
        raise ExperimentSpecError("\n".join(config_lines(exc, source))) from None
    for index, study in enumerate(spec.study):
        try:
            study.expand(spec.experiment.defaults)
        except ValidationError as exc:
            lines = config_lines(exc, f"{source}: [study -> {index} ({study.name})]")
            raise ExperimentSpecError("\n".join(lines)) from None
    return spec


def load_experiment(path: Path, quick: bool = False) -> tuple[ExperimentSpec, Path]:
    """The validated spec and the site.toml it names (resolved against the file's folder).

    ``quick`` shrinks any file (:data:`QUICK_DEFAULTS`), then applies its ``[quick]`` table
    over ``[experiment]``.
    """
    if not path.is_file():
        raise ExperimentSpecError(
            f"{path}: no such experiment file; fix: pass a TOML file such as "
            "the shipped quick.toml (`deid-studies specs` lists them)"
        )
    text = read_text(path, what="experiment file", error=ExperimentSpecError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentSpecError(f"{path}: not valid TOML ({exc}); fix the syntax") from None
    if quick:
        table = data.get("experiment", {})
        data = {**data, "experiment": {**table, **QUICK_DEFAULTS, **data.get("quick", {})}}
    spec = parse_spec(data, str(path))
    site = spec.experiment.site
    site = site if site.is_absolute() else (path.parent / site).resolve()
    if not site.is_file():
        raise ExperimentSpecError(
            f"{path}: [experiment -> site] {site} does not exist; fix: point it at a site.toml "
            "(relative to the experiment file)"
        )
    return spec, site
