"""The run plan, computed once per run: the generator recipe this corpus and machine get, the
generation budget, each stage's estimated hours and peak memory, and the refusal of a run that
will not fit. Written as ``run-plan.json`` before any stage runs; the adapt and generate
stages apply it and never compute it again.

Dependencies run one way: the training split and the machine give the recipe
(``site_agent/adapt/recipe.py``), the recipe and the unit costs (``site_agent/adapt/cost.py``)
give the price (``site_agent/plan/estimate.py``); ``site_agent/plan/memory.py`` is the memory
model, ``site_agent/plan/apply.py`` applies the plan where ``site.toml`` is silent and
``site_agent/plan/artifact.py`` writes and reads the file.
"""
