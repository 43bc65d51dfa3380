"""The review page's HTML: sections in the order a privacy officer reads them, every piece of
text escaped, no script, no external resource (styles inline in the page)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from html import escape

from protocol import Document
from protocol.audit import RuleResult
from site_agent.review.facts import ReleaseFacts, label_counts
from site_agent.review.nearest import RealIndex
from site_agent.review.spend import SpendLine
from site_agent.review.summary import approval_sentence, summary_sentences
from site_agent.review.words import COMPARISON_WORDS, dropped_because, protects

PALETTE = ("#ffd6a5", "#caffbf", "#9bf6ff", "#bdb2ff", "#ffc6ff", "#fdffb6", "#a0c4ff",
           "#ffadad", "#d0f4de", "#e4c1f9")  # fmt: skip
KIND_WORDS = {
    "synthetic_corpus": "the synthetic notes and their identifier spans",
    "audit_report": "the audit's figures (real note ids replaced by keyed hashes)",
    "site_report": "the encoder's test scores, per label, and the shapes (never the values) of "
    "the test identifiers it misses",
    "encoder_weights": "encoder trained on the synthetic notes",
}
STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;
background:#f6f6f4;line-height:1.45}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:1.8rem;margin:.2em 0}h2{font-size:1.3rem;margin:1.6em 0 .5em;
border-bottom:2px solid #d6d6d0;padding-bottom:.2em}
.local{background:#fff3cd;border:1px solid #e0c36c;padding:8px 12px;border-radius:6px}
.summary{background:#fff;border-left:5px solid #3a7d44;padding:10px 18px;border-radius:4px}
.summary.blocked{border-left-color:#b3261e}
table{border-collapse:collapse;background:#fff;margin:.4em 0 1em;font-size:.92rem}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eeeeea}td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#3a7d44;font-weight:600}.fail{color:#b3261e;font-weight:600}
.note{white-space:pre-wrap;background:#fff;border:1px solid #ddd;border-radius:4px;
padding:8px 10px;font-size:.9rem;overflow-wrap:anywhere}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.pair h4{margin:.3em 0;font-size:.9rem;color:#555}
mark{border-radius:3px;padding:0 2px}
mark.shared{background:#ffe066;box-shadow:inset 0 -2px 0 #d4a200}
mark .tag{font-size:.7em;color:#333;margin-left:3px;vertical-align:super}
.legend span{display:inline-block;margin:2px 6px 2px 0;padding:0 6px;border-radius:3px}
.bar{display:inline-block;height:.8em;background:#7aa6d6;vertical-align:middle}
.bar.real{background:#b9b9b3}
code{background:#eeeeea;padding:1px 4px;border-radius:3px;overflow-wrap:anywhere}
"""


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], numeric: set[int]) -> str:
    """A table of already-escaped cells; columns in ``numeric`` are right-aligned."""
    head = "".join(f"<th>{h}</th>" for h in header)

    def cell(i: int, content: str) -> str:
        return f'<td class="num">{content}</td>' if i in numeric else f"<td>{content}</td>"

    body = "".join(
        "<tr>" + "".join(cell(i, c) for i, c in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return ""


def _figure(value: float | None) -> str:
    if value is None:
        return "not measured"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:.3f}"


def label_colours(labels: Iterable[str]) -> dict[str, str]:
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(sorted(set(labels)))}


def marked_note(text: str, marks: Sequence[tuple[int, int, str]], colours: dict[str, str]) -> str:
    """``text`` escaped, with each ``(start, end, label)`` range inside a <mark>; a label of
    ``""`` marks a shared word."""
    out, pos = [], 0
    for start, end, label in sorted(marks):
        if start < pos:  # overlapping ranges: the first one wins
            continue
        out.append(escape(text[pos:start]))
        inner = escape(text[start:end])
        if label:
            tag = f'<span class="tag">{escape(label)}</span>'
            out.append(
                f'<mark data-label="{escape(label)}" data-start="{start}" data-end="{end}" '
                f'style="background:{colours.get(label, "#ddd")}">{inner}{tag}</mark>'
            )
        else:
            out.append(f'<mark class="shared">{inner}</mark>')
        pos = end
    out.append(escape(text[pos:]))
    return f'<div class="note">{"".join(out)}</div>'


def _summary(facts: ReleaseFacts) -> str:
    items = "".join(f"<li>{escape(s)}</li>" for s in summary_sentences(facts))
    blocked = "" if facts.audit.passed else " blocked"
    return (
        f'<section id="summary"><h2>Summary</h2><div class="summary{blocked}"><ul>{items}</ul>'
        "</div></section>"
    )


def _what_leaves(facts: ReleaseFacts) -> str:
    manifest = facts.manifest
    files = _table(
        ["file", "what it is", "size"],
        ([escape(a.name), escape(KIND_WORDS.get(a.kind, a.kind)), _size(a.size_bytes)]
         for a in manifest.artifacts),
        {2},
    )  # fmt: skip
    synthetic, real = label_counts(facts.exported), label_counts(facts.real)
    total_s, total_r = sum(synthetic.values()) or 1, sum(real.values()) or 1
    rows = []
    for label in sorted(set(synthetic) | set(real), key=lambda x: (-synthetic[x], x)):
        s, r = synthetic[label] / total_s, real[label] / total_r
        rows.append([
            escape(label), f"{synthetic[label]:,}", f"{s:.1%}", f"{real[label]:,}", f"{r:.1%}",
            f'<span class="bar" style="width:{s * 160:.0f}px"></span><br>'
            f'<span class="bar real" style="width:{r * 160:.0f}px"></span>',
        ])  # fmt: skip
    mix = _table(
        ["label", "synthetic spans", "share", "real spans", "share", "synthetic / real"],
        rows, {1, 2, 3, 4},
    )  # fmt: skip
    encoder = (
        "Yes: an encoder trained on these synthetic notes only (weights and its model card)."
        if facts.sends_encoder
        else "No encoder goes with this bundle."
    )
    return (
        '<section id="what-leaves"><h2>What leaves</h2>'
        f"<p>Bundle <code>{escape(facts.bundle_dir.name)}</code>: "
        f"{manifest.n_documents:,} synthetic notes, {len(manifest.artifacts)} files, "
        f"{_size(sum(a.size_bytes for a in manifest.artifacts))} in all.</p>{files}"
        f"<h3>Label mix</h3><p>Identifier spans by label in the exported notes against the "
        f"real training notes ({len(facts.real):,} notes, which stay here).</p>{mix}"
        f"<h3>Encoder</h3><p>{escape(encoder)}</p></section>"
    )


def _rule_row(rule: RuleResult, descriptions: dict[str, str]) -> list[str]:
    verdict = (
        '<span class="pass">holds</span>' if rule.passed else '<span class="fail">fails</span>'
    )
    limit = f"{COMPARISON_WORDS.get(rule.comparison, rule.comparison)} {_figure(rule.threshold)}"
    return [
        escape(rule.name), _figure(rule.measured), escape(limit), verdict,
        escape(descriptions.get(rule.name, "") or rule.explanation),
        escape(protects(rule.metric)),
    ]  # fmt: skip


def _flat(figures: object, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(figures, dict):
        return [row for k, v in figures.items() for row in _flat(v, f"{prefix}{k}.")]
    if isinstance(figures, bool) or not isinstance(figures, int | float):
        return []
    return [(prefix.rstrip("."), _figure(float(figures)))]


def _audit(facts: ReleaseFacts, spend: dict[str, list[SpendLine]]) -> str:
    policy_rules = facts.audit.policy.get("rules", [])
    descriptions = {
        str(r.get("name")): str(r.get("description", ""))
        for r in policy_rules if isinstance(r, dict)
    }  # fmt: skip
    rules = _table(
        ["rule", "figure", "limit", "verdict", "what must hold", "protects against"],
        (_rule_row(r, descriptions) for r in facts.audit.rules),
        {1},
    )
    measures = facts.measures("after") | {
        "membership": facts.measures("before").get("membership", {})
    }
    planted = []
    for name in ("canaries", "membership"):
        planted += [[escape(f"{name}.{k}"), v] for k, v in _flat(measures.get(name, {}))]
    canaries = _table(["figure", "value"], planted, {1}) if planted else ""
    if not any(f.startswith("membership.") for f, _ in planted):
        canaries += "<p>No membership figures: no membership canaries were planted in this run.</p>"
    if not any(f.startswith("canaries.") for f, _ in planted):
        canaries += "<p>No identifier canaries were planted in this run.</p>"
    if spend:
        accountant = "".join(
            f"<h4>{escape(name)}</h4>"
            + _table(["figure", "value", "meaning"],
                     ([escape(x.figure), escape(x.value), escape(x.meaning)] for x in lines), {1})
            for name, lines in spend.items()
        )  # fmt: skip
    else:
        accountant = (
            "<p>No accountant had figures to show, so this page cannot say what the "
            "federation's evaluations of the test split have spent (this is not a spend of "
            "zero).</p>"
        )
    return (
        f'<section id="audit"><h2>Audit</h2><p>Policy <code>{escape(facts.audit.policy_name)}'
        f"</code>: {len(facts.audit.rules)} rules over {facts.audit.n_input_documents:,} "
        f"generated notes, {facts.audit.n_kept_documents:,} kept.</p>{rules}"
        f"<h3>Canaries and membership</h3>{canaries}"
        f"<h3>Evaluation accountant</h3>{accountant}</section>"
    )


def _sample(facts: ReleaseFacts, n: int, seed: int) -> str:
    documents = list(facts.exported.documents)
    chosen = random.Random(seed).sample(documents, min(n, len(documents)))
    colours = label_colours(s.label for d in documents for s in d.spans)
    legend = "".join(
        f'<span style="background:{c}">{escape(label)}</span>' for label, c in colours.items()
    )
    notes = "".join(
        f'<h4 data-doc="{escape(d.id)}">note {escape(d.id)}</h4>'
        + marked_note(d.text, [(s.start, s.end, s.label) for s in d.spans], colours)
        for d in chosen
    )
    return (
        f'<section id="sample"><h2>Sample</h2><p>{len(chosen)} of the {len(documents):,} '
        f"exported notes, drawn with seed {seed}; the identifiers the generator filled in are "
        f'highlighted by label.</p><p class="legend">{legend}</p>{notes}</section>'
    )


def _dropped_one(document: Document, reasons: Sequence[str], index: RealIndex) -> str:
    why = "; ".join(f"<code>{escape(r)}</code>: {escape(dropped_because(r))}" for r in reasons)
    near = index.nearest(document.text)
    ours = marked_note(
        document.text, [(a, b, "") for a, b in near.synthetic_marks] if near else [], {}
    )
    if near is None:
        theirs = "<p>No real notes to compare with.</p>"
        title = "nearest real note"
    else:
        theirs = marked_note(near.real.text, [(a, b, "") for a, b in near.real_marks], {})
        runs = f"{near.shared_runs} shared run{'' if near.shared_runs == 1 else 's'} of words"
        title = f"nearest real note {escape(near.real.id)} ({runs})"
    return (
        f'<article class="dropped" data-doc="{escape(document.id)}"><h3>note '
        f'{escape(document.id)}</h3><p>Dropped by {why}.</p><div class="pair"><div><h4>'
        f"dropped synthetic note</h4>{ours}</div><div><h4>{title}</h4>{theirs}</div></div>"
        "</article>"
    )


def _dropped(facts: ReleaseFacts) -> str:
    dropped = facts.audit.dropped_documents
    head = '<section id="dropped"><h2>Dropped</h2>'
    if not dropped:
        return head + "<p>The audit dropped no note.</p></section>"
    generated = {d.id: d for d in facts.generated.documents}
    index = RealIndex(facts.real.documents)
    parts = [_dropped_one(generated[d.id], d.reasons, index) for d in dropped if d.id in generated]
    missing = len(dropped) - len(parts)
    note = (
        f"<p>{missing} dropped note(s) are no longer in the generated corpus.</p>"
        if missing
        else ""
    )
    return (
        f"{head}<p>Every note the audit dropped ({len(dropped):,}), the filter that dropped it "
        "(the first named) and the real note nearest it, shared runs of three or more words "
        f"marked. Local only: real notes never leave.</p>{note}{''.join(parts)}</section>"
    )


def _approval(facts: ReleaseFacts) -> str:
    return (
        f'<section id="approval"><h2>Approval</h2><p>{escape(approval_sentence(facts))}</p>'
        f"<p>Bundle content SHA-256 (what an approval names): <code>{facts.content_sha256}"
        "</code></p></section>"
    )


def render_page(
    facts: ReleaseFacts, spend: dict[str, list[SpendLine]], sample: int = 5, seed: int = 0
) -> str:
    """The whole page."""
    site = escape(facts.manifest.site_id)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Release review: {site}</title><style>{STYLE}</style></head><body><main>"
        f"<h1>Release review</h1><p>Site <code>{site}</code>, bundle built "
        f"{facts.manifest.created_at:%Y-%m-%d %H:%M} UTC by deid-synth "
        f"{escape(facts.manifest.tool_version)}.</p>"
        '<p class="local"><strong>Local only.</strong> This page shows real notes beside the '
        "synthetic ones. It is written in the work dir, outside the outbox and the bundle, and "
        "is never exported; do not send it.</p>"
        f"{_summary(facts)}{_what_leaves(facts)}{_audit(facts, spend)}"
        f"{_sample(facts, sample, seed)}{_dropped(facts)}{_approval(facts)}"
        "</main></body></html>\n"
    )
