"""The page's opening: what the bundle releases and what the audit found, in sentences."""

from __future__ import annotations

from collections import Counter

from site_agent.review.facts import ReleaseFacts
from site_agent.review.words import dropped_because


def _what_goes(facts: ReleaseFacts) -> str:
    manifest = facts.manifest
    extras = []
    if facts.sends_encoder:
        extras.append("an encoder trained on them only")
    if any(a.kind == "site_report" for a in manifest.artifacts):
        extras.append(
            "the test scores of that encoder (numbers, and shapes such as dd/dd/dddd of "
            "the identifiers it misses, never their values)"
        )
    also = f", with {' and '.join(extras)}" if extras else ""
    return (
        f"Site {manifest.site_id} would send {manifest.n_documents:,} synthetic notes{also}, "
        "and the audit report; no real note, gold annotation or gold-trained model leaves."
    )


def _audit_verdict(facts: ReleaseFacts) -> str:
    audit = facts.audit
    dropped = len(audit.dropped_documents)
    first = Counter(d.reasons[0] for d in audit.dropped_documents if d.reasons)
    why = "; ".join(f"{n} by {r}: {dropped_because(r)}" for r, n in first.most_common())
    dropped_said = f"dropped {dropped:,} ({why})" if dropped else "dropped none"
    said = f"The audit read {audit.n_input_documents:,} generated notes and {dropped_said}. "
    if audit.passed:
        return said + f"All {len(audit.rules)} rules hold on the notes that are left."
    return said + (
        f"Rule(s) {', '.join(audit.failed_rules)} fail: this bundle cannot leave, whatever "
        "the approval says."
    )


def _canaries(facts: ReleaseFacts) -> list[str]:
    after, before = facts.measures("after"), facts.measures("before")
    said = []
    canaries = after.get("canaries", {})
    if isinstance(canaries.get("found"), int | float):
        planted = canaries.get("planted")
        of = f" of the {int(planted)} planted" if isinstance(planted, int | float) else ""
        found = int(canaries["found"])
        said.append(
            f"None{of} canaries (fake identifiers planted in the training notes) came back."
            if found == 0
            else f"{found}{of} canaries came back in the exported notes."
        )
    membership = before.get("membership", {})
    auc = membership.get("auc")
    if isinstance(auc, int | float):
        said.append(
            f"An attacker holding only the export tells planted notes from kept-out ones with "
            f"ROC AUC {auc:.2f} (0.50 is a coin toss)."
        )
    return said


def approval_sentence(facts: ReleaseFacts) -> str:
    if facts.approved is not None and facts.approved.approval is not None:
        approval = facts.approved.approval
        return (
            f"Approved by {approval.reviewer} on {approval.approved_at:%Y-%m-%d at %H:%M} UTC; "
            "the approved bundle is in the outbox."
        )
    if facts.waiting:
        return (
            "This bundle waits for your approval and nothing has left. To release it, run: "
            f"site-agent approve {facts.bundle_dir} --by YOUR_NAME --site-config SITE_TOML"
        )
    return (
        "This site does not require an approval ([export] require_approval is off): the "
        "bundle is already in the outbox, where the federation can collect it."
    )


def summary_sentences(facts: ReleaseFacts) -> list[str]:
    return [_what_goes(facts), _audit_verdict(facts), *_canaries(facts), approval_sentence(facts)]
