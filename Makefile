# okl — `make help` lists the targets. Everything runs in .venv, created on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: help install run test bench figures lint clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

install: $(STAMP)  ## create .venv and install okl (editable) with its dev tools

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

run: install  ## run the default experiment (pkawv_taylor on the built-in synthetic stream)
	$(VENV)/bin/okl-run

test: install  ## run the test suite (one worker per core: pytest-xdist; an idle worker takes tests queued for the other)
	$(PY) -m pytest -q -n auto --dist worksteal

bench: install  ## speed and memory of the learners (okl-bench: µs/round, wall, peak RSS; 3 fresh-process repeats) -> BENCHMARKS.md
	$(VENV)/bin/okl-bench

figures: install  ## every paper artefact whose data is here (okl-reproduce --all: runs reused) -> figures/, REPRODUCTION.md
	$(VENV)/bin/okl-reproduce --all --jobs 2

lint: install  ## ruff, and the import layers of pyproject.toml's [tool.importlinter] (ARCHITECTURE.md)
	$(VENV)/bin/ruff check okl conf tests
	$(VENV)/bin/ruff format --check okl conf tests
	$(VENV)/bin/lint-imports

clean:  ## remove the virtual environment and caches (results/ and figures/ are kept)
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
