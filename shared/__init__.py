"""Code shared by the site agent and the coordinator: corpus I/O, metrics, errors, provenance.

Nothing here imports torch or transformers at module top, so the light commands stay fast.
"""
