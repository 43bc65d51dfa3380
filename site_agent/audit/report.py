"""``audit.json`` for machines and ``audit.md`` for the site's privacy officer.

Both carry figures, thresholds, document ids and hashes only, never text of real documents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol.audit import AUDIT_JSON, AuditReport
from shared.atomic import atomic_write_text
from site_agent.audit.filters import EXPLANATIONS

AUDIT_MD = "audit.md"

METHOD = """\
## What was measured

- **n-gram recall** (corpus level): the share of the distinct n-grams of the real training
  corpus (R) that also occur anywhere in the synthetic corpus, |R ∩ S| / |R|. The *sensitive*
  variant counts only the n-grams that overlap a gold PII span (R*). Words are lower-cased runs
  of letters and digits; "tokens" are the generator's own sub-word tokens.
- **Nearest real documents**: for each synthetic document, the most similar real documents by
  BM25 (k1 = {k1}, b = {b}), plus every real document that could share more than the ROUGE
  threshold with it; then ROUGE-N recall: the share of that real document's n-grams that the
  synthetic document reproduces (1.0 = the real document is copied entirely).
- **Duplicates**: exact (same words in the same order, ignoring case and punctuation) and near
  (Jaccard similarity >= {dup} of {shingle}-word shingles, MinHash/LSH then exact check).
- **PII echo**: every gold PII string of the real corpus (at least {min_chars} characters)
  searched in the synthetic corpus as whole words with an Aho-Corasick automaton, ignoring
  case and punctuation. A string found in the text of many real documents (a city, "un
  mes"), a single word (a first name), a common phrase, a postal code or a date on its own
  is counted but not treated as identifying; full names, addresses, e-mail addresses, ids
  and phone numbers are. The surrogates that replaced the real PII in the generator's
  training text are searched too and always count as identifying; they are reported apart
  (*surrogate only*): such an echo shows that the generator memorised its training text,
  not that a real identity left the site.
- **Canaries** (when planted): unique fake identifiers planted in the training copy; any that
  reappear show memorisation.
- **Membership inference** (when membership canaries were made): see its section above.

*Before* = the synthetic corpus as generated; *after* = the audited corpus that may be exported.
"""


def write_report(report: AuditReport, out_dir: Path) -> None:
    atomic_write_text(out_dir / AUDIT_JSON, report.model_dump_json(indent=2) + "\n")
    atomic_write_text(out_dir / AUDIT_MD, render_markdown(report))


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{int(value):,}" if value.is_integer() and abs(value) >= 1 else f"{value:.4f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def _rules(report: AuditReport) -> list[str]:
    written = {r.get("name"): r for r in report.policy.get("rules", [])}
    meaning = {name: r.get("description", "") for name, r in written.items()}
    stage = {name: r.get("stage", "after") for name, r in written.items()}
    rows = [
        [
            r.name,
            meaning.get(r.name, ""),
            f"{r.metric} ({stage.get(r.name, 'after')})",
            r.measured,
            f"{r.comparison} {r.threshold:g}",
            "pass" if r.passed else "**FAIL**",
        ]
        for r in report.rules
    ]
    header = [
        "rule",
        "what it protects",
        "figure (before / after filtering)",
        "measured",
        "required",
        "result",
    ]
    lines = ["## Rules", "", *_table(header, rows)]
    if report.skipped_rules:
        lines += [f"Not applicable (figure not measured): {', '.join(report.skipped_rules)}.", ""]
    return lines


def _dropped(report: AuditReport) -> list[str]:
    rows = [
        [
            reason,
            report.dropped_by_reason.get(reason, 0),
            report.flagged_by_reason.get(reason, 0),
            EXPLANATIONS.get(reason, ""),
        ]
        for reason in report.dropped_by_reason
    ]
    head = [
        "## Documents",
        "",
        f"{report.n_input_documents:,} synthetic documents audited, "
        f"{report.n_kept_documents:,} kept, "
        f"{report.n_input_documents - report.n_kept_documents:,} dropped. A document is counted "
        "under the first reason that dropped it; *flagged* counts every document a filter "
        "marked.",
        "",
    ]
    return head + _table(["reason", "dropped", "flagged", "meaning"], rows)


def _ngram(measures: dict[str, Any]) -> list[str]:
    if "ngram_recall" not in measures:
        return []
    before, after = measures["ngram_recall"]["before"], measures["ngram_recall"]["after"]
    rows = [
        [
            unit,
            n,
            fig["real_ngrams"],
            fig["recall"],
            after[unit][n]["recall"],
            fig["sensitive_recall"],
            after[unit][n]["sensitive_recall"],
            fig.get("identifying_recall", "n/a"),
            after[unit][n].get("identifying_recall", "n/a"),
        ]
        for unit, by_n in before.items()
        for n, fig in by_n.items()
    ]
    header = [
        "unit",
        "n",
        "real n-grams",
        "recall before",
        "recall after",
        "sensitive before",
        "sensitive after",
        "identifying before",
        "identifying after",
    ]
    note = (
        "Sensitive: real n-grams overlapping a gold span at all (the paper's measure). "
        "Identifying: those holding at least the filter's share of one identifier's "
        "characters; the filter and the gate's 10-gram rules count these."
    )
    return ["## n-gram recall", "", note, "", *_table(header, rows)]


def _nearest(measures: dict[str, Any]) -> list[str]:
    if "nearest_real" not in measures:
        return []
    before, after = measures["nearest_real"]["before"], measures["nearest_real"]["after"]
    sizes = [k for k in before if k.startswith("rouge_")]
    rows = [
        [k, before[k]["mean"], before[k]["max"], after[k]["mean"], after[k]["max"]] for k in sizes
    ]
    lines = ["## Nearest real documents (max ROUGE-N recall per synthetic document)", ""]
    lines += _table(["measure", "mean before", "max before", "mean after", "max after"], rows)
    pairs = after["highest_risk_pairs"]
    if pairs:
        lines += ["Highest-risk pairs still in the export (ids only):", ""]
        keys = list(pairs[0])
        lines += _table(keys, [[p[k] for k in keys] for p in pairs])
    return lines


def _flat_section(title: str, name: str, measures: dict[str, Any]) -> list[str]:
    if name not in measures:
        return []
    before, after = measures[name]["before"], measures[name]["after"]
    rows = [[k, before[k], after[k]] for k in before if not isinstance(before[k], dict | list)]
    lines = [f"## {title}", "", *_table(["figure", "before", "after"], rows)]
    if name == "pii_echo":
        lines += _echo_origins(after)
        by_label = [
            [
                label,
                v["occurrences"],
                v["identifying_occurrences"],
                after["by_label"][label]["identifying_occurrences"],
            ]
            for label, v in before["by_label"].items()
            if v["occurrences"]
        ]
        if by_label:
            lines += _table(
                ["label", "echoes before", "identifying before", "identifying after"], by_label
            )
    return lines


def _echo_origins(after: dict[str, Any]) -> list[str]:
    """Which identifying echoes were real PII and which only the pipeline's own surrogates."""
    if "identifying_documents_gold" not in after:
        return []
    return [
        f"In the exported corpus, {after['identifying_documents_gold']:,} documents contain a "
        "real gold PII string of the training corpus and "
        f"{after['identifying_documents_surrogate_only']:,} contain only surrogates (fake PII "
        "the generator saw in the pseudonymised training text, not a real identity).",
        "",
    ]


MEMBERSHIP_METHOD = """\
Could someone holding only the exported synthetic corpus tell which notes the generator was
trained on? To test it, the site made {total:,} *canary* notes, each ending in a surrogate name
and a secret of random words, planted {members:,} of them in the generator's training text and
kept the other {non_members:,} out (they never left the site's private file). An adversary
scores every canary secret from the synthetic text alone, in two ways: the longest run of
the secret's words that a synthetic document contains (*n-gram match*) and how much more
likely a word-trigram model fit to the synthetic text finds the secret than single-word
frequencies explain (*likelihood ratio*). If the generator did not memorise its training
text, planted and kept-out canaries score alike: the ROC AUC is about 0.5 and the true
positive rate at a 1% false positive rate about 0.01. An AUC near 1.0, or any secret written
out in full, means the generator memorised training notes, real ones included. *Exposure*
ranks each secret among {candidates:,} random secrets of the same kind: about 1.4 bits on
average by chance, {max_exposure:.1f} bits when a secret ranks first. Intervals are 95%
bootstrap intervals over the canaries.
"""


def _membership(measures: dict[str, Any]) -> list[str]:
    if "membership" not in measures:
        return []
    before, after = measures["membership"]["before"], measures["membership"]["after"]
    exposure = before["exposure"]
    lines = [
        "## Membership inference on planted canaries",
        "",
        MEMBERSHIP_METHOD.format(
            total=before["members"] + before["non_members"],
            members=before["members"],
            non_members=before["non_members"],
            candidates=exposure["candidates"],
            max_exposure=exposure["max_possible"],
        ),
    ]
    rows = []
    for name in before["attacks"]:
        for stage, figures in (("before", before), ("after", after)):
            attack = figures["attacks"][name]
            rows.append(
                [
                    name,
                    stage,
                    _interval(attack, "auc"),
                    _interval(attack, "tpr_at_1pct_fpr"),
                    _interval(attack, "tpr_at_0_1pct_fpr"),
                ]
            )
    lines += _table(["attack", "corpus", "ROC AUC", "TPR at 1% FPR", "TPR at 0.1% FPR"], rows)
    figures = [
        ["secrets written in full (planted / kept out)", "secrets_reproduced"],
        ["mean exposure of planted secrets (bits)", "exposure.members_mean"],
        ["highest exposure of a planted secret (bits)", "exposure.members_max"],
        ["mean exposure of kept-out secrets (bits)", "exposure.non_members_mean"],
    ]
    table = [[label, _pick(before, key), _pick(after, key)] for label, key in figures]
    table[0][1:] = [_reproduced(before), _reproduced(after)]
    return lines + _table(["figure", "before", "after"], table)


def _interval(figures: dict[str, Any], name: str) -> str:
    return (
        f"{figures[name]:.3f} [{figures[name + '_ci_low']:.3f}, {figures[name + '_ci_high']:.3f}]"
    )


def _pick(figures: dict[str, Any], dotted: str) -> Any:
    for key in dotted.split("."):
        figures = figures[key]
    return figures


def _reproduced(figures: dict[str, Any]) -> str:
    return (
        f"{figures['secrets_reproduced']:,} ({figures['members_reproduced']:,} / "
        f"{figures['non_members_reproduced']:,})"
    )


def render_markdown(report: AuditReport) -> str:
    verdict = "PASSED" if report.passed else "FAILED: " + ", ".join(report.failed_rules)
    policy = report.policy
    lines = [
        "# Privacy audit of a synthetic corpus",
        "",
        f"**Verdict: {verdict}**",
        "",
        f"- date: {report.created_at:%Y-%m-%d %H:%M} UTC; tool version {report.tool_version}",
        f"- policy: {report.policy_name} (config digest `{report.config_digest[:16]}…`)",
        "- real text the generator saw (training + validation): sha256 "
        f"`{report.real_corpus_sha256[:16]}…`",
        f"- synthetic corpus audited: sha256 `{report.input_corpus_sha256[:16]}…`",
        f"- exportable corpus `{report.audited_corpus_file}`: "
        f"sha256 `{report.audited_corpus_sha256}`",
        "",
    ]
    lines += _rules(report) + _dropped(report) + _ngram(report.measures) + _nearest(report.measures)
    lines += _flat_section("Duplicates", "duplicates", report.measures)
    lines += _flat_section("PII echo", "pii_echo", report.measures)
    lines += _flat_section("Quasi-identifiers", "quasi_identifiers", report.measures)
    lines += _flat_section("Canaries", "canaries", report.measures)
    lines += _membership(report.measures)
    settings = (
        policy.get("nearest_real", {}),
        policy.get("duplicates", {}),
        policy.get("pii_echo", {}),
    )
    lines.append(
        METHOD.format(
            k1=settings[0].get("k1"),
            b=settings[0].get("b"),
            dup=settings[1].get("threshold"),
            shingle=settings[1].get("shingle"),
            min_chars=settings[2].get("min_chars"),
        )
    )
    return "\n".join(lines)
