PY ?= python3

.PHONY: install demo meddocan-sites test lint types check

install:
	$(PY) -m pip install torch==2.13.0
	$(PY) -m pip install -e ".[dev]"

# Three demo hospitals each run the real pipeline; the coordinator federates their bundles.
demo: install
	site-agent demo-sites --out runs/demo-sites
	coordinator demo --sites runs/demo-sites --out runs/federation-demo

# MEDDOCAN split by journal into three sites with different label schemes, each site on the
# product's defaults. The study in the README (2026-11-25, 120 cases per site, hand-set CPU
# settings then) took about 1.5 h on 2 cores; MEDDOCAN_SITES_ARGS= keeps all 1,000 cases
# (many hours on 2 cores: each site prints its pre-flight estimate first).
MEDDOCAN_SITES_ARGS ?= --max-cases 120

meddocan-sites:
	deid-studies meddocan-sites --data ../shared/data/meddocan --out runs/meddocan-sites $(MEDDOCAN_SITES_ARGS)

# One worker per core; a test file stays on one worker, so its module fixtures are built once.
test:
	$(PY) -m pytest -q -m "not gpu" -n auto --dist loadfile

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

types:
	$(PY) -m mypy protocol shared ner site_agent coordinator studies

check: lint types test
