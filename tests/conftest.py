"""Shared fixtures: an isolated results root, the in-process CLI, composed configs, small streams."""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads
    os.environ.setdefault(_var, "1")

import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from okl import cli


@pytest.fixture
def results_root(tmp_path, monkeypatch) -> Path:
    """A fresh results root, selected through OKL_RESULTS as a user would."""
    root = tmp_path / "results"
    monkeypatch.setenv("OKL_RESULTS", str(root))
    return root


@pytest.fixture
def okl_run(results_root, monkeypatch, capsys):
    """Call ``okl-run`` in this process; returns (exit status, stdout, stderr)."""

    def run(*overrides: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["okl-run", *overrides])
        try:
            cli.main()
            code = 0
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def composed():
    """Compose the shipped configuration with overrides (no run)."""

    def make(*overrides: str, hydra: bool = False):
        with initialize_config_module(config_module="okl.conf", version_base="1.3"):
            return compose(config_name="config", overrides=list(overrides), return_hydra_config=hydra)

    return make
