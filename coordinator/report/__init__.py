"""The cross-clinic report: ``report.json`` (typed), ``report.md`` and ``report.html``."""
