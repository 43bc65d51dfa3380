"""The privacy audit that gates export: measure, filter, decide.

``run_audit`` measures n-gram recall, nearest-real ROUGE, duplicates, PII echo and canaries,
drops risky documents and judges the policy's rules; ``require_passing_audit`` is the export
gate that refuses any corpus not covered by a passing report.
"""

from site_agent.audit.binding import AuditBinding
from site_agent.audit.gate import require_passing_audit
from site_agent.audit.policy import AuditPolicy, PolicyRule, load_policy
from site_agent.audit.run import AUDITED_CORPUS, run_audit

__all__ = [
    "AUDITED_CORPUS",
    "AuditBinding",
    "AuditPolicy",
    "PolicyRule",
    "load_policy",
    "require_passing_audit",
    "run_audit",
]
