"""One module per ``site-agent`` command; each exposes ``register(app)``."""
