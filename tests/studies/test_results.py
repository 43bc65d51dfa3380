"""A run's privacy figures come from its audit report: the seed-000 definitions first."""

from __future__ import annotations

from protocol.audit import AuditReport
from studies.results import privacy_figures


def report(measures: dict[str, object], passed: bool = True) -> AuditReport:
    return AuditReport(
        tool_version="t",
        config_digest="c",
        real_corpus_sha256="r",
        input_corpus_sha256="i",
        audited_corpus_sha256="a",
        n_input_documents=10,
        n_kept_documents=8,
        measures=measures,
        passed=passed,
    )


def test_figures_after_filtering_generator_tokens_before_words() -> None:
    figures = privacy_figures(
        report(
            {
                "ngram_recall": {
                    "before": {"tokens": {"5": {"sensitive_recall": 0.9, "recall": 0.9}}},
                    "after": {
                        "words": {"5": {"sensitive_recall": 0.2, "recall": 0.3}},
                        "tokens": {"5": {"sensitive_recall": 0.1, "recall": 0.4}},
                    },
                },
                "nearest_real": {"after": {"rouge_3": {"max": 0.8}, "rouge_5": {"max": 0.5}}},
                "pii_echo": {
                    "after": {"identifying_documents": 2, "identifying_documents_gold": 1}
                },
            },
            passed=False,
        )
    )
    assert figures == {
        "audit_passed": 0.0,
        "kept_documents": 8.0,
        "sensitive_5gram_recall": 0.1,
        "5gram_recall": 0.4,
        "nearest_rouge_max": 0.5,
        "pii_echo_documents": 1.0,  # real gold strings echoed, not surrogates
    }


def test_words_stand_in_when_the_generator_tokens_were_not_counted() -> None:
    figures = privacy_figures(
        report({"ngram_recall": {"after": {"words": {"5": {"sensitive_recall": 0.25}}}}})
    )
    assert figures["sensitive_5gram_recall"] == 0.25
    assert "nearest_rouge_max" not in figures
    older = privacy_figures(report({"pii_echo": {"after": {"identifying_documents": 3}}}))
    assert older["pii_echo_documents"] == 3.0
