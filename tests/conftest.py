"""Shared fixtures: an isolated results root, the in-process CLI, composed configs, small streams."""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads
    os.environ.setdefault(_var, "1")

import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from okl.cli import data as data_cli
from okl.cli import run as cli

URLOPEN = urllib.request.urlopen  # the real one, for the tests' loopback servers


def pytest_collection_modifyitems(items) -> None:
    """The slow tests first: pytest-xdist hands tests out in this order, so the longest (the smoke reproduction,
    about two minutes) starts at once instead of ending the run alone on one worker."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def fresh_home(tmp_path_factory) -> Path:
    """An empty home for the session, as on a new machine (matplotlib's font cache is built once in it)."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture(autouse=True)
def fresh_machine(fresh_home, tmp_path, monkeypatch) -> None:
    """Every test sees what a new user's machine has: an empty home, data directory and results root, no
    dataset mirror and no network but loopback, also in the processes it starts (a proxy that refuses).
    Tests that need real data take :func:`mirror` (skipped without it) or write small files themselves."""
    monkeypatch.setenv("HOME", str(fresh_home))
    for var in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "OKL_DATA_MIRROR", "OKL_BLAS_THREADS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OKL_DATA_DIR", str(tmp_path / "okl-data"))
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "okl-results"))
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.setenv(var, REFUSED)
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    monkeypatch.setattr("okl.data.sources.urllib.request.urlopen", _loopback_only)


REFUSED = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused at once


def _loopback_only(url, *args, **kwargs):
    host = urllib.parse.urlsplit(getattr(url, "full_url", url)).hostname
    if host not in ("127.0.0.1", "localhost"):
        raise OSError(f"network unreachable (tests): {url}")
    return URLOPEN(url, *args, **kwargs)


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


# The dataset mirror the ``mirror`` fixture selects: OKL_DATA_MIRROR as the suite starts (read before
# :func:`fresh_machine` hides it from every test), else the project's shared/datasets beside the checkout.
MIRROR = Path(os.environ.get("OKL_DATA_MIRROR") or Path(__file__).resolve().parents[2] / "shared" / "datasets")


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
def no_data() -> Path:
    """The test's empty data directory (``OKL_DATA_DIR``, see :func:`fresh_machine`): every real dataset is
    absent and cannot be downloaded."""
    return Path(os.environ["OKL_DATA_DIR"])
