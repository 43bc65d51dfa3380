"""Site labels -> Presidio entity names, through the label families every stage shares.

Presidio names its entities ``PERSON``, ``LOCATION``, ``DATE_TIME``, ``PHONE_NUMBER``,
``EMAIL_ADDRESS``... (its predefined recognizers and anonymizer operators use these names). A
site label resolves to its family (``shared.label_families.label_family``) and the family to
one entity below; a label of no family keeps its own name, upper-cased, so nothing a model
finds is dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol import Corpus, LabelMapping
from shared.label_families import label_family

PRESIDIO_ENTITIES: dict[str, str] = {
    "name": "PERSON",
    "relative": "PERSON",
    "email": "EMAIL_ADDRESS",
    "phone": "PHONE_NUMBER",
    "url": "URL",
    "id": "ID",
    "date": "DATE_TIME",
    "age": "AGE",
    "sex": "GENDER",
    "care_site": "ORGANIZATION",
    "country": "LOCATION",
    "street": "LOCATION",
    "place": "LOCATION",
    "profession": "PROFESSION",
}
"""Label family -> Presidio entity name (documented as a table in ``docs/presidio.md``)."""

MAPPING_NAME = "presidio-entities"


def presidio_entity(label: str) -> str:
    """The Presidio entity a site label denotes (``NOMBRE_SUJETO_ASISTENCIA`` -> ``PERSON``)."""
    family = label_family(label)
    return PRESIDIO_ENTITIES.get(family, label.upper()) if family else label.upper()


def presidio_mapping(labels: Iterable[str]) -> LabelMapping:
    """A label mapping from ``labels`` onto the Presidio entities they denote.

    Presidio entity names map to themselves, so a corpus already in Presidio's names (what the
    analyzer returns) passes through unchanged.
    """
    mapping = {label: presidio_entity(label) for label in labels}
    mapping.update({entity: entity for entity in set(mapping.values())})
    return LabelMapping(
        name=MAPPING_NAME, coarse_labels=tuple(sorted(set(mapping.values()))), mapping=mapping
    )


def to_presidio_entities(corpus: Corpus) -> Corpus:
    """``corpus`` with every span label replaced by the Presidio entity it denotes."""
    from shared.metrics.pairing import map_labels

    seen = {s.label for doc in corpus.documents for s in doc.spans}
    return map_labels(corpus, presidio_mapping(seen | set(corpus.labels)))
