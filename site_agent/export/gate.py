"""The export gate: nothing leaves the site unless a passing audit of this site's own data
covers the exact bytes of the corpus file. This module alone decides; nothing skips it.

:func:`require_passing_audit` runs each check once, in this order, and every refusal names
its rule:

1. ``audit_report_present``, ``audit_report_valid``: there is a readable report;
2. ``audit_seal``: with a seal key, the report is byte for byte what this site's audit stage
   sealed;
3. the verdict: the report checks rules, its verdict follows from them (each rule judged
   again by ``shared.judge`` on the figure it records: a flipped verdict is refused here),
   and it passed (``audit_report_valid``, else the names of the failing rules);
4. ``audited_corpus_hash``: the corpus file is the one the audit passed (not a stale report);
5. with an :class:`AuditBinding` (the export always gives one), the binding: the report
   compared every real note this run's generator saw, training and validation (the
   prompts) alike (``audit_real_corpus``), audited this run's
   synthetic corpus (``audit_synthetic_input``), under the site's policy, tokenizer, PII
   surrogates and canaries (``audit_settings``);
6. ``audit_verdict``: the site policy's rules, judged again on the report's own figures,
   are the report's rules (no threshold, figure or verdict edited);
7. ``audit_document_accounting``: the corpus is the audit's input minus exactly the
   documents the report lists as dropped.

The gate trusts none of the report's hashes, thresholds or verdicts: it hashes the files on
disk again and re-judges the policy. A hand-edited report whose figures all agree with each
other passes 5-7 (re-measuring would mean re-auditing); the seal (2) refuses it. The finished
bundle is then checked once more by the one bundle verifier (``shared.bundle_verify``), as
the coordinator will check it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protocol import Corpus
from protocol.audit import AuditReport, RuleResult
from shared.corpus_io import read_corpus
from shared.errors import ExportRefusedError
from shared.judge import report_verdict
from shared.provenance import sha256_file
from site_agent.audit.corpus_audit import audit_settings_digest
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.reference import read_generator_reference
from site_agent.audit.rules import evaluate, flatten
from site_agent.audit.seal import SEAL_FILE, seal_holds
from site_agent.canaries.identifiers import load_canaries
from site_agent.canaries.membership import load_membership_canaries
from site_agent.privacy.digest import corpus_sha256

RERUN = "re-run the audit stage (site-agent synthesize --from audit); do not edit audit.json"


@dataclass(frozen=True)
class AuditBinding:
    """What this site's audit must have compared, named by the files now on disk.

    ``real`` is the real training text the audit stage reads (``split.train``),
    ``validation`` the validation notes whose openings prompted the generator
    (``split.validation``; the audit's reference is both, ``audit/reference.py``), ``synthetic``
    the corpus it audits (``annotate.corpus``), ``seal_key`` the site's audit sealing key
    (``seal.seal_key``: when set, ``audit.json`` must carry the audit stage's seal),
    ``policy`` the site config's ``[audit.policy]`` (its ``AuditPolicy``, or the table as a
    mapping), ``pii_surfaces`` the ``(label, surrogate)`` pairs and
    ``canaries`` and ``membership_canaries`` the canary files of the pseudonymise stage,
    ``tokenizer`` the generator tokenizer reference the audit counted tokens with.
    """

    real: Path
    synthetic: Path
    policy: AuditPolicy | Mapping[str, Any]
    pii_surfaces: tuple[tuple[str, str], ...] = ()
    canaries: Path | None = None
    membership_canaries: Path | None = None
    tokenizer: str | None = None
    seal_key: bytes | None = None
    validation: Path | None = None

    def audit_policy(self) -> AuditPolicy:
        """The site policy as an :class:`AuditPolicy` (a mapping is validated)."""
        if isinstance(self.policy, AuditPolicy):
            return self.policy
        return AuditPolicy.model_validate(dict(self.policy))


def refuse(rule: str, message: str, fix: str) -> ExportRefusedError:
    """The refusal of an export by ``rule``: what was found, and the fix."""
    return ExportRefusedError(f"export refused by rule {rule!r}: {message}; fix: {fix}")


def require_passing_audit(
    corpus_path: Path, report_path: Path | None, binding: AuditBinding | None = None
) -> AuditReport:
    """The report that clears ``corpus_path`` for export; raises ExportRefusedError otherwise.

    ``binding`` names the site's own files and policy (the export always gives one); without
    it only the report itself (its verdict and the corpus hash) is checked.
    """
    corpus_path = Path(corpus_path)
    path = report_file(corpus_path, report_path)
    report = load_report(path)
    check_seal(path, report, binding)
    check_verdict(path, report)
    check_corpus_hash(corpus_path, path, report)
    if binding is not None:
        policy = binding.audit_policy()
        synthetic = check_binding(report, binding, policy)
        rejudge(report, policy)
        check_accounting(report, synthetic, read_corpus(corpus_path, "jsonl"))
    return report


def report_file(corpus_path: Path, report_path: Path | None) -> Path:
    """``report_path``, if there is a file there."""
    if report_path is None or not Path(report_path).is_file():
        where = f"for {corpus_path}" if report_path is None else f"at {report_path}"
        raise refuse(
            "audit_report_present",
            f"no audit report {where}: nothing leaves the site without a passing privacy audit",
            "run the audit stage (site-agent synthesize --from audit)",
        )
    return Path(report_path)


def load_report(report_path: Path) -> AuditReport:
    """The report in ``report_path``, if it is one."""
    try:
        return AuditReport.model_validate_json(report_path.read_text(encoding="utf-8"))
    except (ValidationError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise refuse(
            "audit_report_valid",
            f"{report_path} is not a valid audit report ({exc})",
            "re-run the audit",
        ) from exc


def check_seal(report_path: Path, report: AuditReport, binding: AuditBinding | None) -> None:
    """With a seal key: the report is byte for byte what this site's audit stage wrote."""
    if binding is None or binding.seal_key is None:
        return
    if not seal_holds(report_path, report.audited_corpus_sha256, binding.seal_key):
        raise refuse(
            "audit_seal",
            f"{report_path} does not carry this site's audit seal ({SEAL_FILE}): it was "
            "edited after the audit stage wrote it, or written by another tool or site "
            "(`site-agent audit` output is for inspection and never clears an export)",
            RERUN,
        )


def check_verdict(report_path: Path, report: AuditReport) -> None:
    """The report checks rules, its verdict follows from them (``shared.judge``, on the
    figures it records), and it passed."""
    if not report.rules:
        raise refuse(
            "audit_report_valid",
            f"{report_path} checks no rules, so it cannot clear anything",
            "audit with a policy that has rules (the default policy does)",
        )
    verdict = report_verdict(report.rules)  # the rules judged again on their own figures
    follows = all(
        r.passed == j.passed for r, j in zip(report.rules, verdict.judgements, strict=True)
    )
    if report.passed != verdict.passed or not follows:
        raise refuse(
            "audit_report_valid",
            f"{report_path}: the verdict does not follow from its rules",
            "re-run the audit; do not edit audit.json by hand",
        )
    if not report.passed:
        failing = ", ".join(report.failed_rules)
        details = "; ".join(r.explanation for r in report.rules if not r.passed)
        raise refuse(
            failing,
            f"the privacy audit failed rule(s) {failing} ({details})",
            "regenerate or filter more strictly, then re-run the audit",
        )


def check_corpus_hash(corpus_path: Path, report_path: Path, report: AuditReport) -> None:
    """``corpus_path`` is the very file the audit passed."""
    if not corpus_path.is_file():
        raise refuse(
            "audited_corpus_hash", f"no corpus file at {corpus_path}", "export the audited corpus"
        )
    actual = sha256_file(corpus_path)
    if actual != report.audited_corpus_sha256:
        raise refuse(
            "audited_corpus_hash",
            f"{corpus_path} (sha256 {actual[:16]}…) is not the audited corpus (sha256 "
            f"{report.audited_corpus_sha256[:16]}…) named in {report_path}: the report is stale",
            "export the synthetic.audited.jsonl the audit wrote, or re-run the audit",
        )


def _check_hash(
    rule: str, what: str, path: Path, claimed: str, corpus: Corpus | None = None
) -> Corpus:
    corpus = read_corpus(path) if corpus is None else corpus
    actual = corpus_sha256(corpus)
    if actual != claimed:
        raise refuse(
            rule,
            f"audit.json names {what} with content digest {claimed[:16]}…, but {path} "
            f"(the file this run uses) has {actual[:16]}…: the audit compared other data",
            RERUN,
        )
    return corpus


def check_binding(report: AuditReport, binding: AuditBinding, policy: AuditPolicy) -> Corpus:
    """The report compared this run's real text and synthetic corpus under the site's
    settings; returns the synthetic corpus it audited."""
    where = (
        binding.real
        if binding.validation is None
        else Path(f"{binding.real} + {binding.validation}")
    )
    _check_hash(
        "audit_real_corpus",
        "the real text the generator saw (training notes and the validation notes it was "
        "prompted with)",
        where,
        report.real_corpus_sha256,
        read_generator_reference(binding.real, binding.validation),
    )
    synthetic = _check_hash(
        "audit_synthetic_input",
        "the synthetic corpus it audited",
        binding.synthetic,
        report.input_corpus_sha256,
    )
    check_settings(report, binding, policy)
    return synthetic


def check_settings(report: AuditReport, binding: AuditBinding, policy: AuditPolicy) -> None:
    """The report's policy and settings digest are those of the site config and its files."""
    if report.policy != policy.model_dump(mode="json"):
        raise refuse(
            "audit_settings",
            "the policy written in audit.json is not the site config's [audit.policy]",
            RERUN,
        )
    expected = audit_settings_digest(
        policy,
        binding.tokenizer,
        binding.pii_surfaces,
        load_canaries(binding.canaries),
        load_membership_canaries(binding.membership_canaries),
    )
    if report.config_digest != expected:
        raise refuse(
            "audit_settings",
            f"audit.json has settings digest {report.config_digest[:16]}…, the site's policy, "
            f"tokenizer, PII surrogates and canaries give {expected[:16]}…",
            RERUN,
        )


def _figures(report: AuditReport) -> dict[str, dict[str, float]]:
    stages: dict[str, dict[str, Any]] = {"before": {}, "after": {}}
    for name, value in report.measures.items():
        for stage, figures in stages.items():
            if isinstance(value, Mapping) and isinstance(value.get(stage), Mapping):
                figures[name] = value[stage]
    return {stage: flatten(figures) for stage, figures in stages.items()}


def _key(rule: RuleResult) -> tuple[object, ...]:
    return (rule.name, rule.metric, rule.measured, rule.threshold, rule.comparison, rule.passed)


def rejudge(report: AuditReport, policy: AuditPolicy) -> list[RuleResult]:
    """The site policy's rules judged on the report's figures; refuse unless they are the
    report's rules (whose verdict :func:`check_verdict` has read)."""
    derived, skipped = evaluate(policy.rules, _figures(report))
    if not derived:
        raise refuse("audit_verdict", "the site policy has no rule that applies", RERUN)
    different = [
        name
        for name, mine, theirs in _pairs(derived, report.rules)
        if mine is None or theirs is None or _key(mine) != _key(theirs)
    ]
    if different or tuple(skipped) != report.skipped_rules:
        raise refuse(
            "audit_verdict",
            f"rule(s) {different or list(skipped)} in audit.json differ from the site policy "
            "judged on the report's own figures (threshold, comparison, measured value or "
            "verdict edited, or another policy)",
            RERUN,
        )
    return derived


def _pairs(
    derived: Sequence[RuleResult], written: Sequence[RuleResult]
) -> list[tuple[str, RuleResult | None, RuleResult | None]]:
    mine = {r.name: r for r in derived}
    theirs = {r.name: r for r in written}
    if len(theirs) != len(written):
        return [("<repeated rule names>", None, None)]
    return [(name, mine.get(name), theirs.get(name)) for name in sorted(mine | theirs)]


def check_accounting(report: AuditReport, synthetic: Corpus, audited: Corpus) -> None:
    """The audited corpus is the audit's input, in order, minus exactly the dropped list."""
    dropped = {d.id for d in report.dropped_documents}
    expected = [d for d in synthetic.documents if d.id not in dropped]
    kept_figure = report.measures.get("corpus", {}).get("after", {}).get("kept_documents")
    problems = []
    if len(dropped) != len(report.dropped_documents) or not dropped <= {
        d.id for d in synthetic.documents
    }:
        problems.append("the dropped list names ids that are repeated or not in the input")
    if list(audited.documents) != expected:
        problems.append(
            f"the exported corpus has {len(audited)} documents, the input minus the "
            f"{len(dropped)} dropped leaves {len(expected)} others"
        )
    if not len(audited) == report.n_kept_documents == kept_figure:
        problems.append(
            f"kept counts disagree (corpus {len(audited)}, n_kept_documents "
            f"{report.n_kept_documents}, figure {kept_figure})"
        )
    if len(synthetic) != report.n_input_documents:
        problems.append(
            f"n_input_documents {report.n_input_documents} but the input has {len(synthetic)}"
        )
    if problems:
        raise refuse("audit_document_accounting", "; ".join(problems), RERUN)
