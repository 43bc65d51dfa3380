"""Write ``report.json``, ``report.md`` and a self-contained ``report.html`` (atomically)."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from coordinator.report import answers, tables
from coordinator.report.plots import heatmap_png
from protocol.rounds import FederationReport
from shared.contained import write_contained
from shared.markdown import markdown_cell

SECTIONS = (
    ("Models", tables.model_rows),
    ("Per-label recall (span overlap)", tables.recall_rows),
    ("Synthetic vs gold: token F1 minus the site's gold-trained baseline", tables.delta_rows),
    ("In-site vs out-of-site generalisation (token F1)", tables.generalisation_rows),
    ("FedAvg rounds", tables.fedavg_round_rows),
    ("Sites and privacy audits", tables.audit_rows),
    ("What each site's evaluation policy lets a run learn", tables.evaluation_bound_rows),
    ("Copied or near-duplicate synthetic corpora", tables.overlap_rows),
    ("Excluded from the run", tables.exclusion_rows),
    ("Provenance", tables.provenance_rows),
)


def markdown_table(rows: list[list[str]]) -> str:
    head, *body = rows
    lines = ["| " + " | ".join(map(markdown_cell, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(markdown_cell, row)) + " |" for row in body]
    return "\n".join(lines)


def to_markdown(report: FederationReport) -> str:
    parts = ["# Cross-site de-identification report", "", "## Summary", ""]
    parts += [f"- {point}" for point in answers.summary_points(report)]
    parts += ["", markdown_table(answers.best_rows(report)), ""]
    parts.append(
        f"{len(report.sites)} site(s), {len(report.bundles)} bundle(s) accepted, "
        f"{len(report.models)} model(s), {len(report.exclusions)} exclusion(s). "
        "Values are point estimates with 95% document-bootstrap intervals."
    )
    for metric, title in tables.METRICS.items():
        parts += ["", f"## {title}", "", markdown_table(tables.matrix_rows(report, metric))]
    for title, rows in SECTIONS:
        parts += ["", f"## {title}", "", markdown_table(rows(report))]
    return "\n".join(parts) + "\n"


def html_table(rows: list[list[str]]) -> str:
    head, *body = rows
    out = ["<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body]
    return "\n".join(out) + "</table>"


STYLE = (
    "body{font-family:sans-serif;margin:2em;max-width:70em}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #bbb;padding:.25em .6em;font-size:.9em}"
    "th{background:#eee}img{display:block;margin:.5em 0}"
    ".summary{background:#f4f8f4;border:1px solid #9c9;padding:.2em 1em 1em;margin:1em 0}"
    ".summary li{margin:.3em 0}"
)


def to_html(report: FederationReport) -> str:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Cross-site report</title><style>{STYLE}</style></head><body>",
        "<h1>Cross-site de-identification report</h1>",
        "<section class='summary'><h2>Summary</h2><ul>",
        *[f"<li>{html.escape(point)}</li>" for point in answers.summary_points(report)],
        "</ul>",
        html_table(answers.best_rows(report)),
        "</section>",
    ]
    for metric, title in tables.METRICS.items():
        png = base64.b64encode(heatmap_png(report, metric)).decode("ascii")
        parts += [
            f"<h2>{html.escape(title)}</h2>",
            f"<img alt='{metric} heatmap' src='data:image/png;base64,{png}'>",
            html_table(tables.matrix_rows(report, metric)),
        ]
    for title, rows in SECTIONS:
        parts += [f"<h2>{html.escape(title)}</h2>", html_table(rows(report))]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(report: FederationReport, out_dir: Path) -> list[Path]:
    texts = {
        "report.json": report.model_dump_json(indent=2),
        "report.md": to_markdown(report),
        "report.html": to_html(report),
    }
    return [write_contained(out_dir, name, text.encode("utf-8")) for name, text in texts.items()]
