PY ?= python3

.PHONY: install demo test lint types check

install:
	$(PY) -m pip install torch==2.13.0
	$(PY) -m pip install -e ".[dev]"

demo: install
	site-agent synthesize --demo --work-dir runs/demo-site
	coordinator demo --out runs/federation-demo

test:
	$(PY) -m pytest -q -m "not gpu"

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

types:
	$(PY) -m mypy protocol shared site_agent coordinator

check: lint types test
