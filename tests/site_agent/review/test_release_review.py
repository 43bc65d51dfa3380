"""``site-agent review`` and ``[export] require_approval`` on a real tiny pipeline (30 short
MEDDOCAN notes, tiny models, template mode): the page's sections, its highlighted identifiers
against the exported corpus, the dropped notes beside their nearest real notes (and in no
exported file); the export waits, the approval is signed in, the coordinator verifies it and
refuses a tampered one."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from coordinator.collect.phase import unpack_received
from coordinator.collect.verify import BundleRejected, verify_received_bundle
from coordinator.deployment.keys import load_registry, register_site
from coordinator.report.tables import approval_cell
from protocol.audit import AuditReport
from shared.corpus_io import read_corpus
from site_agent.config import SiteConfig, build_site_config
from site_agent.export.approval import ApprovalPending, waiting_bundle
from site_agent.federation.bundle import pack_bundle
from site_agent.stages.pipeline import run_pipeline, stage_artifact
from tests.bundles import raw_received
from tests.meddocan_slice import slice_site

REPO = Path(__file__).resolve().parents[3]
SECTIONS = ["summary", "what-leaves", "audit", "sample", "dropped", "approval"]


@pytest.fixture(scope="module")
def site(
    meddocan_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[SiteConfig, Path, Path]:
    """(config, its site.toml, the public key) of a pipeline whose export waits for approval.
    ROUGE-3 recall above 0 drops the notes that open with a real note's header, so the audit
    drops some notes and keeps others."""
    root = tmp_path_factory.mktemp("review-site")
    data, public = slice_site(
        root,
        meddocan_dir,
        "review-site",
        adapt={"max_steps": 2},
        generation={"mode": "template", "min_phi_rate": 0.0, "samples_per_prompt": 2,
                    "max_new_tokens": 24, "max_documents": 8},
        audit={"canaries": 2, "policy": {"filters": {"rouge_n": 3, "rouge_threshold": 0.0}}},
        export={"accept_degenerate": "tiny test models", "require_approval": True},
    )  # fmt: skip
    (root / "site.toml").write_text(tomli_w.dumps(data), encoding="utf-8")
    config = build_site_config(data)
    run_pipeline(config)
    return config, root / "site.toml", public


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "250"}
    return subprocess.run(
        [shutil.which("site-agent") or "site-agent", *args],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip


class PageNotes(HTMLParser):
    """Each note box of the page: the document it shows, its text, and its marks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[str] = []
        self.section = ""
        self.doc = ""
        self.notes: list[dict[str, Any]] = []
        self.note: dict[str, Any] | None = None
        self.mark: dict[str, Any] | None = None
        self.in_tag = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section":
            self.section = str(a["id"])
            self.sections.append(self.section)
        elif tag in ("h4", "article") and "data-doc" in a:
            self.doc = str(a["data-doc"])
        elif tag == "div" and a.get("class") == "note":
            self.note = {"section": self.section, "doc": self.doc, "text": "", "marks": []}
        elif tag == "mark" and self.note is not None:
            self.mark = {**a, "at": len(self.note["text"]), "text": ""}
        elif tag == "span" and a.get("class") == "tag":
            self.in_tag = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self.in_tag:
            self.in_tag = False
        elif tag == "mark" and self.mark is not None and self.note is not None:
            self.note["marks"].append(self.mark)
            self.mark = None
        elif tag == "div" and self.note is not None:
            self.notes.append(self.note)
            self.note = None

    def handle_data(self, data: str) -> None:
        if self.note is None or self.in_tag:
            return
        self.note["text"] += data
        if self.mark is not None:
            self.mark["text"] += data


@pytest.fixture(scope="module")
def page(site: tuple[SiteConfig, Path, Path]) -> tuple[str, PageNotes]:
    """The page ``site-agent review`` wrote (the console script, once), and its notes."""
    config, _, _ = site
    done = _cli("review", "--work-dir", str(config.work_dir), "--sample", "4")
    assert done.returncode == 0, done.stderr
    page = config.work_dir / "review" / "release-review.html"
    assert str(page) in " ".join(done.stderr.split())
    html = page.read_text(encoding="utf-8")
    parsed = PageNotes()
    parsed.feed(html)
    return html, parsed


def test_the_page_has_its_sections_and_nothing_external(page: tuple[str, PageNotes]) -> None:
    html, parsed = page
    assert parsed.sections == SECTIONS
    assert "<title>Release review" in html and "<h1>Release review</h1>" in html
    assert not re.search(r"<script|<link|<img|<iframe|\bsrc=|\bhref=|url\(|@import", html, re.I)
    summary = html[html.index('id="summary"') : html.index('id="what-leaves"')]
    assert "would send" in summary and "waits for your approval" in summary
    assert "canaries" in summary  # two were planted; none came back


def test_the_highlighted_identifiers_are_the_exported_spans(
    site: tuple[SiteConfig, Path, Path], page: tuple[str, PageNotes]
) -> None:
    config, _, _ = site
    _, parsed = page
    bundle = stage_artifact(config.work_dir, "export", "bundle")
    assert bundle is not None
    exported = {d.id: d for d in read_corpus(bundle / "synthetic.jsonl").documents}
    sample = [n for n in parsed.notes if n["section"] == "sample"]
    assert len(sample) == min(4, len(exported))
    assert sum(len(n["marks"]) for n in sample) > 0  # the template filler's identifiers
    for note in sample:
        doc = exported[note["doc"]]
        assert note["text"] == doc.text
        spans = {(s.start, s.end, s.label) for s in doc.spans}
        assert len(note["marks"]) == len(spans)
        for mark in note["marks"]:
            start, end = int(mark["data-start"]), int(mark["data-end"])
            assert (start, end, mark["data-label"]) in spans
            assert mark["text"] == doc.text[start:end] and mark["at"] == start


def test_every_dropped_note_is_shown_beside_a_real_one_and_exported_nowhere(
    site: tuple[SiteConfig, Path, Path], page: tuple[str, PageNotes]
) -> None:
    config, _, _ = site
    _, parsed = page
    report_path = stage_artifact(config.work_dir, "audit", "report")
    generated_path = stage_artifact(config.work_dir, "annotate", "corpus")
    real_path = stage_artifact(config.work_dir, "split", "train")
    assert report_path and generated_path and real_path
    report = AuditReport.model_validate_json(report_path.read_text())
    dropped_ids = [d.id for d in report.dropped_documents]
    assert dropped_ids and report.n_kept_documents > 0  # the policy drops some, keeps some
    generated = {d.id: d for d in read_corpus(generated_path).documents}
    real = {d.text for d in read_corpus(real_path).documents}
    shown = [n for n in parsed.notes if n["section"] == "dropped"]
    assert [n["doc"] for n in shown[::2]] == dropped_ids  # each: synthetic, then its real note
    for synthetic, nearest in zip(shown[::2], shown[1::2], strict=True):
        assert synthetic["text"] == generated[synthetic["doc"]].text
        assert nearest["text"] in real
        assert synthetic["marks"] and nearest["marks"]  # the shared words, on both sides
        for mark in synthetic["marks"]:
            assert mark["text"].lower() in nearest["text"].lower()
    # no dropped note's text in any file that is exported or waits to be
    exported_files = [p for p in (config.work_dir / "outbox").rglob("*") if p.is_file()]
    bundle = stage_artifact(config.work_dir, "export", "bundle")
    assert bundle is not None
    exported_files += [p for p in bundle.rglob("*") if p.is_file()]
    assert exported_files
    for path in exported_files:
        content = path.read_bytes()
        for doc_id in dropped_ids:
            assert generated[doc_id].text.encode("utf-8") not in content, (path, doc_id)
            assert json.dumps(generated[doc_id].text).encode() not in content, (path, doc_id)


def test_require_approval_end_to_end(site: tuple[SiteConfig, Path, Path], tmp_path: Path) -> None:
    config, toml, public = site
    outbox = config.work_dir / "outbox"
    bundle = stage_artifact(config.work_dir, "export", "bundle")
    assert bundle is not None and waiting_bundle(bundle, outbox) == bundle
    assert not outbox.exists() or not any(outbox.glob("*/manifest.json"))
    waits = _cli("synthesize", "--site-config", str(toml))
    assert waits.returncode == ApprovalPending.exit_code, waits.stderr
    said = " ".join(waits.stderr.split())
    assert "waits for its release approval" in said and "site-agent approve" in said
    assert not outbox.exists() or not any(outbox.glob("*/manifest.json"))  # nothing left

    done = _cli("approve", str(bundle), "--by", "Dr. Ana Ruiz", "--site-config", str(toml))
    assert done.returncode == 0, done.stderr
    approved = outbox / bundle.name
    manifest = json.loads((approved / "manifest.json").read_text())
    assert manifest["approval"]["reviewer"] == "Dr. Ana Ruiz"
    assert waiting_bundle(bundle, outbox) is None

    register_site(tmp_path / "registry.json", config.site_id, public)
    registry = load_registry(tmp_path / "registry.json")
    verified = verify_received_bundle(
        unpack_received(pack_bundle(approved)), config.site_id, registry
    )
    assert verified.accepted.approval is not None
    assert approval_cell(verified.accepted.approval).startswith("Dr. Ana Ruiz, ")

    tampered = tmp_path / "tampered" / bundle.name
    shutil.copytree(approved, tampered)
    text = (tampered / "manifest.json").read_text().replace("Dr. Ana Ruiz", "Dr. Nobody")
    (tampered / "manifest.json").write_text(text)
    with pytest.raises(BundleRejected) as refused:
        verify_received_bundle(raw_received(tampered), config.site_id, registry)
    assert refused.value.reason == "bad_signature"
