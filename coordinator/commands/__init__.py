"""One module per ``coordinator`` command; each exposes ``register(app)``."""
