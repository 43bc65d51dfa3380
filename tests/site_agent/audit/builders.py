"""Small corpora for audit tests: documents built from text pieces and labelled PII pieces."""

from __future__ import annotations

import random
from typing import Any

from protocol import Corpus, Document, Span
from site_agent.audit.context import AuditContext
from site_agent.audit.measure import measure_corpus
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.source import CorpusSource

Piece = str | tuple[str, str]

FIRST = ["Ernesto", "Lucía", "Marta", "Jorge", "Inés", "Tomás", "Aurora", "Benito"]
LAST = ["Rivera", "Bueno", "Navarro", "Cuéllar", "Ortega", "Salinas", "Quiroga", "Peña"]
OTHER_FIRST = ["Alba", "Bruno", "Celia", "Dario", "Elena", "Fabio", "Gloria", "Hugo"]
OTHER_LAST = ["Arias", "Blanco", "Campos", "Duran", "Esteban", "Flores", "Garrido", "Herrera"]
_FILLER_TEXT = (
    "paciente varón ingresa por dolor abdominal con fiebre y vómitos desde hace tres días "
    "refiere antecedentes de hipertensión arterial tratada sin alergias conocidas la "
    "exploración muestra abdomen blando depresible sin signos de irritación peritoneal se "
    "solicita analítica completa y ecografía que resultan normales se pauta tratamiento"
)
FILLER = _FILLER_TEXT.split()


def make_doc(doc_id: str, *pieces: Piece, sep: str = " ") -> Document:
    """Join ``pieces`` with ``sep``; ``(text, label)`` pieces become gold spans."""
    text, spans = "", []
    for index, piece in enumerate(pieces):
        if index:
            text += sep
        if isinstance(piece, tuple):
            spans.append(Span(start=len(text), end=len(text) + len(piece[0]), label=piece[1]))
            text += piece[0]
        else:
            text += piece
    return Document(id=doc_id, text=text, spans=tuple(spans))


def corpus(*docs: Document) -> Corpus:
    return Corpus(documents=tuple(docs))


def random_note(rng: random.Random, doc_id: str, words: int = 60, other: bool = False) -> Document:
    """A filler note with a patient name, an id and a date as gold spans (``other``: names
    and years that never occur in the default notes)."""
    first, last = (OTHER_FIRST, OTHER_LAST) if other else (FIRST, LAST)
    century = "19" if other else "20"
    name = f"{rng.choice(first)} {rng.choice(last)} {rng.choice(last)}"
    pieces: list[Piece] = [
        "Nombre:",
        (name, "NOMBRE_SUJETO_ASISTENCIA"),
        ". NHC:",
        (str(rng.randint(10**6, 10**7)), "ID_SUJETO_ASISTENCIA"),
        ". Fecha de ingreso:",
        (
            f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{century}{rng.randint(10, 24)}",
            "FECHAS",
        ),
        ".",
    ]
    pieces += [" ".join(rng.choice(FILLER) for _ in range(words))]
    return make_doc(doc_id, *pieces)


def random_corpus(seed: int, n: int, prefix: str, words: int = 60, other: bool = False) -> Corpus:
    rng = random.Random(seed)
    return corpus(*(random_note(rng, f"{prefix}{i}", words, other) for i in range(n)))


def measured(real: Corpus, synthetic: Corpus, name: str, policy: AuditPolicy | None = None) -> Any:
    """The result of measure ``name`` over ``synthetic`` against ``real``."""
    context = AuditContext(real, policy or AuditPolicy())
    return measure_corpus(context, CorpusSource(synthetic)).results[name]
