"""Which language a corpus is written in, from its function words, for ``site-agent init``.

Why function words and not a language-identification package: the languages that matter here
are the ones ``init`` can give a surrogate locale (``DEFAULT_LOCALES``), clinical notes are
full of articles, prepositions and conjunctions even when terse, and counting them is
deterministic, needs no model file and no dependency (``langdetect`` is unmaintained and
random unless seeded; the fastText-based detectors download or ship a model). The detector
refuses rather than guesses: too few function words, or two languages too close (Danish and
Norwegian share most of theirs), and the operator is asked to say.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from shared.errors import UsageError

FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the and of to in was with for is on at by he she his her were had has from "
        "that this not an as or which after been are there but it no",
        "es": "de en a no el la los las del y que con por para se una al su sus fue como sin "
        "lo le más pero años presenta desde sobre este esta entre hasta tras",
        "pt": "de a e no o os as do da dos das em na nos com para que um uma foi não ao seu "
        "sua como sem mais pelo pela também após este esta",
        "it": "in a no il lo gli di del della dei e che con per un una è non al alla sono si come "
        "senza più dopo nel nella questo anche stato",
        "fr": "en le les de des du et un une que qui avec pour par dans sur est au aux il elle "
        "ne pas plus sans été cette ce",
        "de": "in der die das und ist mit von den dem des ein eine zu im auf für nicht bei nach "
        "wurde sich auch es als wird keine",
        "nl": "in de het een en van is met op te voor niet zijn werd bij naar aan ook dat die "
        "geen na door er",
        "sv": "och att det som en på är av för med till den har inte om ett var vid efter "
        "utan hon han eller kan blev",
        "da": "og at det som en på er af for med til den har ikke om et var ved efter uden "
        "hun han eller kan blev",
        "no": "og at det som en på er av for med til den har ikke om et var ved etter uten "
        "hun han eller kan ble",
        "fi": "ja on ei oli se hän että kun myös tai mutta joka ovat olla sekä vain jälkeen "
        "ilman kanssa mukaan siitä niin",
    }.items()
}
"""The commonest function words of each language ``init`` has a surrogate locale for."""

SHARED_BY: Counter[str] = Counter(w for words in FUNCTION_WORDS.values() for w in words)
"""How many languages list each word: a shared word (Spanish and French ``de``) counts for
each of them by that fraction, so the lead comes from the words that tell them apart."""

MIN_SHARE = 0.05
"""At least this share of the words must be the winner's function words (prose: 30-50%)."""
MIN_LEAD = 1.5
"""The winner must have this many times the runner-up's function-word hits."""
MIN_HITS = 20
"""Fewer function-word hits than this is too little text to tell."""

WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class LanguageGuess:
    """What the function words say: the language (None when they cannot tell) and why."""

    language: str | None
    words: int
    hits: dict[str, int]

    def share(self, language: str) -> float:
        return self.hits.get(language, 0) / self.words if self.words else 0.0

    def ranked(self) -> list[tuple[str, int]]:
        return sorted(self.hits.items(), key=lambda item: (-item[1], item[0]))

    def explain(self) -> str:
        """``23% of 1,204 words are en function words; next es (2%)``."""
        ranked = self.ranked()
        if not ranked or not self.words:
            return f"{self.words:,} words, none of them a function word of {sorted(FUNCTION_WORDS)}"
        (first, _), rest = ranked[0], ranked[1:]
        said = f"{self.share(first):.0%} of {self.words:,} words are {first} function words"
        if rest:
            said += f"; next {rest[0][0]} ({self.share(rest[0][0]):.0%})"
        return said


def detect_language(texts: Iterable[str], max_words: int = 50_000) -> LanguageGuess:
    """Count each language's function words over the first ``max_words`` words of ``texts``."""
    counts: Counter[str] = Counter()
    words = 0
    for text in texts:
        for word in WORD.findall(text.lower()):
            counts[word] += 1
            words += 1
        if words >= max_words:
            break
    hits = {
        lang: round(sum(counts[w] / SHARED_BY[w] for w in vocabulary))
        for lang, vocabulary in FUNCTION_WORDS.items()
    }
    hits = {lang: n for lang, n in hits.items() if n}
    guess = LanguageGuess(None, words, hits)
    ranked = guess.ranked()
    if not ranked:
        return guess
    first, best = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    if best >= MIN_HITS and guess.share(first) >= MIN_SHARE and best >= MIN_LEAD * runner_up:
        return LanguageGuess(first, words, hits)
    return guess


def corpus_language_from_text(corpus: Path) -> LanguageGuess:
    """The language of the notes at ``corpus``; a UsageError naming the file and the fix when
    the corpus is not there or its function words cannot tell."""
    from shared.corpus_io import read_corpus

    if not corpus.exists():
        raise UsageError(
            f"{corpus}: no corpus there to tell its language from; fix: pass --corpus with "
            "the site's notes, or say the language with --language (en, es, sv...)"
        )
    guess = detect_language(d.text for d in read_corpus(corpus).documents)
    if guess.language is None:
        raise UsageError(
            f"{corpus}: cannot tell the notes' language ({guess.explain()}; it takes at least "
            f"{MIN_HITS} function words, {MIN_SHARE:.0%} of the words, and {MIN_LEAD}x the "
            "next language's); fix: say it with --language (en, es, sv...)"
        )
    return guess
