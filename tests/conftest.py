"""Shared fixtures: an isolated results root, the in-process CLI, composed configs, small streams."""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads
    os.environ.setdefault(_var, "1")

import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from helpers import allow_small_susy
from okl.cli import data as data_cli
from okl.cli import run as cli


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
        return call(cli.main, capsys)

    return run


@pytest.fixture
def okl_data(capsys):
    """Call ``okl-data`` in this process; returns (exit status, stdout, stderr)."""
    return lambda *argv: call(lambda: data_cli.main(list(argv)), capsys)


def call(main, capsys) -> tuple[int, str, str]:
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def composed():
    """Compose the shipped configuration with overrides (no run)."""

    def make(*overrides: str, hydra: bool = False):
        with initialize_config_module(config_module="okl.conf", version_base="1.3"):
            return compose(config_name="config", overrides=list(overrides), return_hydra_config=hydra)

    return make


MIRROR = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.fixture(scope="session")
def session_data(tmp_path_factory) -> Path:
    """One data directory (downloads and parsed caches) for the whole session: each file is parsed once."""
    return tmp_path_factory.mktemp("okl-data")


@pytest.fixture
def mirror(session_data, monkeypatch) -> Path:
    """The project's dataset mirror (``shared/datasets``) selected by OKL_DATA_MIRROR, with the session's
    data directory; skipped where the mirror is absent."""
    if not (MIRROR / "SOURCES.md").is_file():
        pytest.skip(f"the dataset mirror is absent ({MIRROR})")
    monkeypatch.setenv("OKL_DATA_MIRROR", str(MIRROR))
    monkeypatch.setenv("OKL_DATA_DIR", str(session_data))
    return MIRROR


@pytest.fixture
def no_data(tmp_path, monkeypatch) -> Path:
    """An empty data directory, no mirror, no network: every real dataset is absent (and SUSY's catalog row count
    is not required: the tests write small SUSY files, helpers.write_susy)."""
    allow_small_susy(monkeypatch)
    monkeypatch.setenv("OKL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("OKL_DATA_MIRROR", raising=False)
    monkeypatch.setattr("okl.data.sources.urllib.request.urlopen", _offline)
    return tmp_path / "data"


def _offline(url, timeout=None):
    raise OSError("network unreachable (tests)")
