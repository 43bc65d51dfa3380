"""Stage 9, export: signed bundles (``bundle``), built behind the one export gate (``gate``),
and their verification (``verify``).

Importers use the submodules; importing this package loads nothing heavy
(``site_agent.config`` reads ``settings``).
"""
