"""Stage 7, the privacy audit: measure, filter, decide.

``run.run_audit`` measures n-gram recall, nearest-real ROUGE, duplicates, PII echo, canary
exposure and membership inference (``registry``: one measure per module), drops risky
documents (``filters``) and judges the policy's rules (``policy``, ``rules``), writing the
report (``report``) that the audit stage seals (``seal``). The export gate that reads it is
``site_agent.export.gate``. Importers use the submodules; importing this package loads
nothing heavy (``site_agent.config`` reads ``settings``).
"""
