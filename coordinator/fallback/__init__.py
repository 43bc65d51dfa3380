"""Minimal stand-ins used until the annotator and metrics engineers' versions are merged.

They are real implementations (a token-classification trainer and the foundation metrics with
bootstrap CIs), kept deliberately small; ``coordinator/aggregate.py`` is the one place that
chooses them, so swapping in ``site_agent.annotate`` / ``shared.metrics`` is a one-line change.
"""
