"""The filters: each marks synthetic documents to drop, and its name is the reason reported.

Filters run in the policy's order; a document is counted under the first reason that drops
it (``dropped_by_reason``), while ``flagged_by_reason`` counts every document each filter
marked, whether or not an earlier filter had already dropped it.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from shared.errors import ConfigError
from site_agent.audit.canary_exposure import CanaryResult
from site_agent.audit.duplicates import DuplicateResult
from site_agent.audit.nearest_real import NearestRealResult
from site_agent.audit.pii_echo import PiiEchoResult
from site_agent.audit.quasi_identifiers import QuasiIdentifierResult
from site_agent.audit.registry import FilterInput, register_filter

T = TypeVar("T")

EXPLANATIONS = {
    "exact_duplicate_real": "same normalised word sequence as a real training document",
    "near_duplicate_real": "near-duplicate (shingle Jaccard >= threshold) of a real document",
    "canary": "contains a planted canary identifier",
    "pii_echo": "contains an identifying PII string: a real gold string of the training "
    "corpus, or a surrogate of the pseudonymised training text (see PII echo for which)",
    "quasi_identifier": "holds two gold details of one real note (date, age, town ...), or a "
    "gold detail found in a single real note",
    "sensitive_ngram": "shares with the real corpus an n-gram holding much of an identifier",
    "rouge_recall": "reproduces too much of one real document (max ROUGE-N recall)",
    "exact_duplicate_synthetic": "same normalised word sequence as an earlier kept document",
    "near_duplicate_synthetic": "near-duplicate of an earlier kept synthetic document",
}


def _result(given: FilterInput, name: str, kind: type[T]) -> T:
    result = given.results.get(name)
    if not isinstance(result, kind):
        raise ConfigError(f"a filter needs the {name!r} measure; fix: add it to policy.measures")
    return result


@register_filter("exact_duplicate_real")
def exact_duplicate_real(given: FilterInput) -> np.ndarray:
    return _result(given, "duplicates", DuplicateResult).exact_real


@register_filter("near_duplicate_real")
def near_duplicate_real(given: FilterInput) -> np.ndarray:
    return _result(given, "duplicates", DuplicateResult).near_real


@register_filter("canary")
def canary(given: FilterInput) -> np.ndarray:
    result = given.results.get("canaries")
    if isinstance(result, CanaryResult):
        return result.docs_with_canary()
    return np.zeros(len(given.alive), dtype=bool)


@register_filter("pii_echo")
def pii_echo(given: FilterInput) -> np.ndarray:
    return _result(given, "pii_echo", PiiEchoResult).identifying_docs()


@register_filter("quasi_identifier")
def quasi_identifier(given: FilterInput) -> np.ndarray:
    return _result(given, "quasi_identifiers", QuasiIdentifierResult).flagged


@register_filter("sensitive_ngram")
def sensitive_ngram(given: FilterInput) -> np.ndarray:
    return given.ngrams.flagged()


@register_filter("rouge_recall")
def rouge_recall(given: FilterInput) -> np.ndarray:
    settings = given.context.policy.filters
    result = _result(given, "nearest_real", NearestRealResult)
    return result.max_rouge(settings.rouge_n) > settings.rouge_threshold


@register_filter("exact_duplicate_synthetic")
def exact_duplicate_synthetic(given: FilterInput) -> np.ndarray:
    return _result(given, "duplicates", DuplicateResult).synthetic_duplicates(given.alive, False)


@register_filter("near_duplicate_synthetic")
def near_duplicate_synthetic(given: FilterInput) -> np.ndarray:
    return _result(given, "duplicates", DuplicateResult).synthetic_duplicates(given.alive, True)
