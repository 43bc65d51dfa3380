"""The site's side of a federation run: what the ClientApp does with each coordinator message.

``site_agent/client_app.py`` only wires Flower messages to these plain functions.
"""
