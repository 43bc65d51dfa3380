"""What each audit rule and filter protects against, in one sentence each, for the review page.

Keyed by the audit's own names (a rule's measure, the first part of its metric; a filter's
name as ``DroppedDocument.reasons`` carries it), so a new measure or filter that has no entry
here still shows, with its own description from the policy.
"""

from __future__ import annotations

PROTECTS: dict[str, str] = {
    "ngram_recall": "runs of words copied from real notes, the way an identifier leaks "
    "together with its context",
    "pii_echo": "a real patient's identifier, or a surrogate the generator saw in training, "
    "written out in a synthetic note",
    "nearest_real": "a synthetic note that reproduces a large part of one real patient's note",
    "duplicates": "a real note leaving verbatim or nearly so",
    "canaries": "memorisation: fake identifiers planted in the training notes coming back out",
    "membership": "an outsider telling, from the export alone, whether a given note was in "
    "the training data",
    "corpus": "an empty or broken release",
}
"""Measure name -> what its rules protect against."""

DROPPED_BECAUSE: dict[str, str] = {
    "exact_duplicate_real": "a copy of a real note",
    "near_duplicate_real": "a near-copy of a real note",
    "canary": "holds a canary planted in the training notes",
    "pii_echo": "holds a real identifier or a surrogate the generator saw",
    "sensitive_ngram": "shares a run of words holding an identifier with a real note",
    "rouge_recall": "reproduces much of one real note (ROUGE recall over the limit)",
    "exact_duplicate_synthetic": "a copy of another synthetic note",
    "near_duplicate_synthetic": "a near-copy of another synthetic note",
}
"""Filter name -> why a note it marked was dropped."""

COMPARISON_WORDS = {"<=": "at most", "<": "below", ">=": "at least", ">": "above", "==": "exactly"}


def protects(metric: str) -> str:
    """What the rule over ``metric`` protects against ("" when its measure has no entry)."""
    return PROTECTS.get(metric.split(".", 1)[0], "")


def dropped_because(reason: str) -> str:
    return DROPPED_BECAUSE.get(reason, reason.replace("_", " "))
