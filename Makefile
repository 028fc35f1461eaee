# okl — `make help` lists the targets. Everything runs in .venv, created on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: help install run test bench figures figures-real lint clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

install: $(STAMP)  ## create .venv and install okl (editable) with its dev tools

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@

run: install  ## run the default experiment (pkawv_taylor on the built-in synthetic stream)
	$(VENV)/bin/okl-run

test: install  ## run the test suite
	$(PY) -m pytest -q

bench: install  ## speed and memory benchmarks (µs/round, peak RSS; dataset parse and cached-stream times; adversary, comparators; raker, adaraker; polk)
	$(PY) scripts/bench.py
	$(PY) scripts/bench_data.py
	$(PY) scripts/bench_kons.py
	$(PY) scripts/bench_adversary.py
	$(PY) scripts/bench_raker.py
	$(PY) scripts/bench_polk.py

figures: install  ## run the figure presets (complete runs are skipped) and draw figures/
	$(PY) scripts/figures.py
	$(PY) scripts/polk_figures.py

figures-real: install  ## PKAWV Figures 2/4 on the real datasets that are available (OKL_DATA_MIRROR or okl-data fetch)
	$(PY) scripts/figures.py --real

lint: install  ## ruff, and the import layers of pyproject.toml's [tool.importlinter] (ARCHITECTURE.md)
	$(VENV)/bin/ruff check okl conf tests scripts
	$(VENV)/bin/ruff format --check okl conf tests scripts
	$(VENV)/bin/lint-imports

clean:  ## remove the virtual environment and caches (results/ and figures/ are kept)
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
