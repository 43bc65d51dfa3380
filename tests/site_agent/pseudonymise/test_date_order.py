"""A corpus's own date order wins over its Faker locale: a UK clinic that set ``en_US`` writes
13/03/2019, so its 06/11/2025 is 6 November and its surrogates stay day-first, in the
pseudonymised copy and in the template mode's fills alike."""

from __future__ import annotations

import pytest

from protocol import Corpus, Document, Span
from site_agent.generate.fill import fill_templates, shape_pool
from site_agent.generate.placeholders import read_template
from site_agent.pseudonymise.corpus import pseudonymise_corpus
from site_agent.pseudonymise.dates import corpus_month_first
from site_agent.pseudonymise.settings import PseudonymiseSettings


@pytest.mark.parametrize(
    ("surfaces", "month_first"),
    [
        (["13/03/2019", "06/11/2025", "12 August 2019"], False),
        (["03/13/2019", "7/22/2020", "06/11/2025"], True),
        (["01/02/2020", "06/11/2025"], None),  # nothing tells
        (["2016-04-25", "2019-12-13"], None),  # year first (ISO): not a day/month vote
        (["10:45", "3 de marzo de 2016", "Jan 13 2020"], None),  # times and month names
        (["13/03/2019", "03/13/2019"], None),  # disagree: the locale decides
        (["13.3.", "25/12", "7/22/2020"] + ["14/01/2001"] * 17, False),  # 19 of 20: day-first
        ([], None),
    ],
)
def test_the_corpus_order_from_the_dates_that_tell(
    surfaces: list[str], month_first: bool | None
) -> None:
    assert corpus_month_first(surfaces) is month_first


def _dated(texts: list[str]) -> Corpus:
    docs = []
    for i, date in enumerate(texts):
        text = f"Seen on {date} in clinic."
        docs.append(
            Document(id=f"d{i}", text=text, spans=(Span(start=8, end=8 + len(date), label="DATE"),))
        )
    return Corpus(documents=tuple(docs))


def _orders(corpus: Corpus) -> list[tuple[int, int]]:
    pairs = []
    for doc in corpus.documents:
        first, second, _ = doc.surface(doc.spans[0]).split("/")
        pairs.append((int(first), int(second)))
    return pairs


US = PseudonymiseSettings(locale="en_US")


def test_a_day_first_corpus_keeps_day_first_surrogates_under_en_us() -> None:
    corpus = _dated(["13/03/2019"] + ["06/11/2025"] * 40)
    moved = _orders(pseudonymise_corpus(corpus, US).corpus)
    assert all(month <= 12 for _, month in moved)  # the second number stays the month
    assert any(day > 12 for day, _ in moved)  # and the shifts did reach days past 12


def test_without_evidence_the_locale_still_decides() -> None:
    corpus = _dated(["06/11/2025"] * 40)
    us = _orders(pseudonymise_corpus(corpus, US).corpus)
    assert all(month <= 12 for month, _ in us) and any(day > 12 for _, day in us)
    spain = _orders(pseudonymise_corpus(corpus, PseudonymiseSettings(locale="es_ES")).corpus)
    assert all(month <= 12 for _, month in spain) and any(day > 12 for day, _ in spain)


def test_template_fills_follow_the_training_notes_order() -> None:
    """The shapes come from the pseudonymised training notes; their order, not the locale's,
    decides how every filled date is written, on the first fill and on refills alike."""
    pool = shape_pool(_dated(["13/03/2019", "06/11/2025", "14/02/2020"]))
    template = read_template("Seen on {{DATE:1}} and {{DATE:2}}.", frozenset(pool))
    filled = fill_templates(
        [(f"syn-{i}", template) for i in range(40)], pool, US, seed=5, attempts=1
    )
    dates = [n.document.surface(s) for n in filled for s in n.document.spans]
    pairs = [tuple(int(x) for x in d.split("/")[:2]) for d in dates]
    assert all(month <= 12 for _, month in pairs)
    assert any(day > 12 for day, _ in pairs)
