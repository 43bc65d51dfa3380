"""Lexical diversity: unique Snowball stems per word token (seed paper 000, section 4.6).

Word tokens are runs of letters (``[^\\W\\d_]+``): numbers and punctuation are left out so
that dates, record numbers and the like do not pass for vocabulary. Every token is stemmed
with NLTK's Snowball stemmer for the corpus language (no NLTK data download is needed), and
diversity is ``unique stems / tokens``, over the whole corpus and averaged per document.
The corpus-level value falls as a corpus grows, so compare corpora of similar size.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shared.errors import UsageError

WORD = re.compile(r"[^\W\d_]+")

LANGUAGE_CODES = {
    "da": "danish",
    "de": "german",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "it": "italian",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "sv": "swedish",
}

FUNCTION_WORDS = {
    "english": {"the", "and", "of", "to", "in", "with", "was", "is", "for", "on"},
    "spanish": {"de", "la", "el", "que", "y", "en", "los", "con", "por", "del"},
    "swedish": {"och", "att", "det", "som", "på", "är", "med", "för", "av", "har"},
    "german": {"der", "die", "und", "das", "nicht", "mit", "ist", "von", "den", "auf"},
    "french": {"le", "les", "et", "des", "est", "une", "dans", "pour", "du", "au"},
    "portuguese": {"de", "o", "que", "e", "do", "da", "em", "um", "com", "não"},
    "italian": {"il", "di", "che", "e", "la", "per", "un", "della", "con", "non"},
    "dutch": {"de", "het", "een", "en", "van", "is", "dat", "op", "met", "niet"},
}


def words(text: str) -> list[str]:
    """Lower-cased letter-only word tokens."""
    return [w.lower() for w in WORD.findall(text)]


def guess_language(texts: Iterable[str], sample: int = 200) -> str:
    """The language whose common function words occur most often in the first texts."""
    counts: Counter[str] = Counter()
    for n, text in enumerate(texts):
        if n >= sample:
            break
        counts.update(words(text))
    scores = {lang: sum(counts[w] for w in vocab) for lang, vocab in FUNCTION_WORDS.items()}
    best = max(scores, key=lambda lang: scores[lang])
    return best if scores[best] > 0 else "english"


def resolve_language(language: str | None, texts: Sequence[str]) -> str:
    """A Snowball language name from a name, an ISO 639-1 code, or (None) the texts."""
    from nltk.stem.snowball import SnowballStemmer

    if language is None:
        return guess_language(texts)
    name = LANGUAGE_CODES.get(language.lower(), language.lower())
    if name not in SnowballStemmer.languages or name == "porter":
        allowed = sorted(set(SnowballStemmer.languages) - {"porter"})
        raise UsageError(
            f"no Snowball stemmer for language {language!r}; allowed: {allowed} "
            f"or codes {sorted(LANGUAGE_CODES)}; fix: pass --language with one of them"
        )
    return name


@dataclass(frozen=True)
class Diversity:
    """Corpus-level and mean per-document diversity, and the number of word tokens."""

    language: str
    n_tokens: int
    corpus: float
    mean_document: float


def lexical_diversity(texts: Sequence[str], language: str | None = None) -> Diversity:
    """Unique stems / tokens over the corpus and averaged over documents with words."""
    from nltk.stem.snowball import SnowballStemmer

    name = resolve_language(language, texts)
    stemmer = SnowballStemmer(name)
    cache: dict[str, str] = {}
    all_stems: set[str] = set()
    n_tokens = 0
    per_document: list[float] = []
    for text in texts:
        tokens = words(text)
        if not tokens:
            continue
        stems = set()
        for token in tokens:
            stem = cache.get(token)
            if stem is None:
                stem = cache[token] = stemmer.stem(token)
            stems.add(stem)
        all_stems |= stems
        n_tokens += len(tokens)
        per_document.append(len(stems) / len(tokens))
    return Diversity(
        language=name,
        n_tokens=n_tokens,
        corpus=len(all_stems) / n_tokens if n_tokens else 0.0,
        mean_document=sum(per_document) / len(per_document) if per_document else 0.0,
    )
