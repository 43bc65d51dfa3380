"""Load label mappings (site labels -> shared coarse scheme) and apply them to corpora.

Sites annotate with their own guidelines (MEDDOCAN has 22 labels, others have 5 or 30); the
coordinator compares models across sites only on a shared coarse scheme. A mapping is a
TOML or JSON file::

    name = "meddocan_coarse"
    coarse_labels = ["PER", "ORG", "LOC", "TIME", "ID", "MISC"]
    [mapping]
    NOMBRE_SUJETO_ASISTENCIA = "PER"

Shipped schemes live in ``shared/label_schemes/`` and can be loaded by name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from protocol import Corpus, Document, LabelMapping
from shared.config_files import read_toml
from shared.errors import ConfigError
from shared.provenance import config_digest
from shared.text_files import read_text
from shared.validation_messages import validation_lines

SCHEMES_DIR = Path(__file__).parent / "label_schemes"
_SHAPE = (
    'a mapping file holds name = "...", coarse_labels = [...] and a [mapping] table of '
    'SITE_LABEL = "COARSE_LABEL" lines'
)


def builtin_schemes() -> list[str]:
    """Names of the shipped label mappings."""
    return sorted(p.stem for p in SCHEMES_DIR.glob("*.toml"))


def _resolve(path_or_name: str | os.PathLike[str]) -> Path:
    path = Path(path_or_name)
    if path.is_file():
        return path
    if isinstance(path_or_name, str) and path_or_name in builtin_schemes():
        return SCHEMES_DIR / f"{path_or_name}.toml"
    raise ConfigError(
        f"{path}: no such label mapping file; fix: give the path of a .toml or .json mapping "
        f"or a built-in scheme name ({', '.join(builtin_schemes())})"
    )


def _parse(path: Path) -> Any:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return read_toml(path, what="label mapping", fix=f"fix: {_SHAPE}")
    text = read_text(path, what="label mapping", error=ConfigError)
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix: {_SHAPE}"
            ) from exc
    raise ConfigError(f"{path}: unknown mapping file type {suffix!r}; fix: use .toml or .json")


def load_label_mapping(path_or_name: str | os.PathLike[str]) -> LabelMapping:
    """A validated mapping from a file, or from a built-in scheme name (``meddocan_coarse``)."""
    path = _resolve(path_or_name)
    data = _parse(path)
    try:
        return LabelMapping.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            f"{path}: not a valid label mapping; fix: {_SHAPE}", problems=validation_lines(exc)
        ) from exc


def apply_mapping(
    corpus: Corpus, mapping: LabelMapping, *, unmapped: Literal["error", "drop"] = "error"
) -> Corpus:
    """The corpus with every span relabelled to the coarse scheme.

    Span labels without an entry are an error (``unmapped="error"``), or their spans are
    removed (``"drop"``, counted in the provenance notes). The result's label set is the
    whole coarse scheme, so that corpora from different sites share one label set.
    """
    used = {span.label for doc in corpus.documents for span in doc.spans}
    missing = sorted(used - mapping.mapping.keys())
    if missing and unmapped == "error":
        lines = ", ".join(f'{label} = "..."' for label in missing)
        raise ConfigError(
            f"label mapping {mapping.name!r} has no entry for corpus label(s) {missing}; "
            f"fix: add {lines} (one of {', '.join(mapping.coarse_labels)}) to its [mapping], "
            "or drop those spans"
        )
    dropped = 0
    documents = []
    for doc in corpus.documents:
        kept = [s for s in doc.spans if s.label in mapping.mapping]
        dropped += len(doc.spans) - len(kept)
        spans = tuple(s.model_copy(update={"label": mapping.mapping[s.label]}) for s in kept)
        documents.append(doc.model_copy(update={"spans": spans}))  # positions are unchanged
    notes = {
        **corpus.provenance.notes,
        "label_mapping": mapping.name,
        "label_mapping_digest": config_digest(mapping),
    }
    if dropped:
        notes["label_mapping_dropped_spans"] = f"{dropped} ({', '.join(missing)})"
    provenance = corpus.provenance.model_copy(update={"notes": notes})
    return Corpus(documents=tuple(documents), labels=mapping.coarse_labels, provenance=provenance)


def shared_labels(mapping: LabelMapping | None, corpora: Iterable[Corpus]) -> tuple[str, ...]:
    """The label space every coordinator model tags in: the coarse scheme, else the union."""
    if mapping is not None:
        return tuple(sorted(mapping.coarse_labels))
    return tuple(sorted({label for corpus in corpora for label in corpus.labels}))


def harmonise(corpus: Corpus, mapping: LabelMapping | None, labels: tuple[str, ...]) -> Corpus:
    """``corpus`` with every span label mapped (raises ``UnmappedLabelError`` on a gap).

    The label set is ``labels`` plus any label still present, so a model trained on it has a
    head over exactly ``labels`` whenever the mapping covers the corpus. Unlike
    :func:`apply_mapping`, the provenance is kept as it is: the coordinator and the sites use
    this on the fly, for training and scoring in the shared label space.
    """
    documents = [
        Document.model_validate(
            {
                **doc.model_dump(),
                "spans": [
                    {**s.model_dump(), "label": mapping.map_label(s.label) if mapping else s.label}
                    for s in doc.spans
                ],
            }
        )
        for doc in corpus.documents
    ]
    present = {span.label for doc in documents for span in doc.spans}
    return Corpus(
        documents=tuple(documents),
        labels=tuple(sorted(set(labels) | present)),
        provenance=corpus.provenance,
    )
