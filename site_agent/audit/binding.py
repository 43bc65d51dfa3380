"""Is this audit *this site's* audit? Everything ``audit.json`` claims, recomputed at export.

A passing ``audit.json`` is only worth something if it compared this site's real training
text with the synthetic corpus the site generated, under the site's own policy. The gate
therefore trusts none of the report's hashes, thresholds or verdicts: it hashes the files on
disk again, re-judges the site policy's rules on the report's measured figures, and checks
that the exported corpus is exactly the audit's input minus the documents it lists as
dropped. Each refusal names its rule:

- ``audit_seal``: the report is not byte for byte what this site's audit stage sealed;
- ``audit_real_corpus``: the report compared against other real text than this run's split;
- ``audit_synthetic_input``: the report audited another corpus than this run's synthetic one;
- ``audit_settings``: policy, tokenizer, PII surrogates or canaries differ from the site's;
- ``audit_verdict``: a rule, threshold, figure or verdict does not follow from the site policy;
- ``audit_document_accounting``: the audited corpus is not the input minus the dropped list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol import Corpus
from protocol.audit import AuditReport, CanarySet, RuleResult
from shared.corpus_io import read_corpus
from shared.errors import ExportRefusedError
from site_agent.audit.digest import corpus_sha256
from site_agent.audit.membership_canaries import load_membership_canaries
from site_agent.audit.policy import AuditPolicy
from site_agent.audit.rules import evaluate, flatten
from site_agent.audit.run import audit_settings_digest
from site_agent.audit.seal import SEAL_FILE, seal_holds

RERUN = "re-run the audit stage (site-agent synthesize --from audit); do not edit audit.json"


@dataclass(frozen=True)
class AuditBinding:
    """What this site's audit must have compared, named by the files now on disk.

    ``real`` is the real training text the audit stage reads (``split.train``), ``synthetic``
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


def refuse(rule: str, message: str, fix: str) -> ExportRefusedError:
    return ExportRefusedError(f"export refused by rule {rule!r}: {message}; fix: {fix}")


def _check_hash(rule: str, what: str, path: Path, claimed: str) -> Corpus:
    corpus = read_corpus(path)
    actual = corpus_sha256(corpus)
    if actual != claimed:
        raise refuse(
            rule,
            f"audit.json names {what} with content digest {claimed[:16]}…, but {path} "
            f"(the file this run uses) has {actual[:16]}…: the audit compared other data",
            RERUN,
        )
    return corpus


def _canaries(path: Path | None) -> CanarySet | None:
    if path is None or not path.is_file() or not path.stat().st_size:
        return None
    return CanarySet.model_validate_json(path.read_text(encoding="utf-8"))


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
        _canaries(binding.canaries),
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
    """The site policy's rules judged on the report's figures; refuse on any disagreement."""
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
    failing = [r.name for r in derived if not r.passed]
    if failing or not report.passed:
        raise refuse(
            "audit_verdict",
            f"judged under the site policy the audit fails rule(s) {failing}"
            if failing
            else "audit.json says failed although every rule holds",
            "regenerate or filter more strictly, then re-run the audit",
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


def check_seal(report_path: Path, report: AuditReport, binding: AuditBinding) -> None:
    """With a seal key: the report is byte for byte what this site's audit stage wrote."""
    if binding.seal_key is None:
        return
    if not seal_holds(report_path, report.audited_corpus_sha256, binding.seal_key):
        raise refuse(
            "audit_seal",
            f"{report_path} does not carry this site's audit seal ({SEAL_FILE}): it was "
            "edited after the audit stage wrote it, or written by another tool or site "
            "(`site-agent audit` output is for inspection and never clears an export)",
            RERUN,
        )


def check_binding(report: AuditReport, audited_corpus: Path, binding: AuditBinding) -> None:
    """Refuse unless ``report`` is this site's audit of this run's data under its policy."""
    _check_hash(
        "audit_real_corpus", "the real training text", binding.real, report.real_corpus_sha256
    )
    synthetic = _check_hash(
        "audit_synthetic_input",
        "the synthetic corpus it audited",
        binding.synthetic,
        report.input_corpus_sha256,
    )
    policy = binding.policy
    if not isinstance(policy, AuditPolicy):
        policy = AuditPolicy.model_validate(dict(policy))
    check_settings(report, binding, policy)
    rejudge(report, policy)
    check_accounting(report, synthetic, read_corpus(audited_corpus, "jsonl"))
