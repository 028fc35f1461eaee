"""The Makefile's targets a user types, played end to end at small size (``make test`` is this suite; ``make bench``
and ``make figures`` are okl-bench's and okl-reproduce's commands, played by tests/test_reproduce.py at smoke size)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from okl.store import find

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed here")


def make(target: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """``make TARGET`` in the checkout, with this interpreter's environment as its venv (never installed again)."""
    prefix = Path(sys.executable).parent.parent
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), f"VENV={prefix}", "-o", f"{prefix}/.installed", target],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path), **env},
        timeout=300,
    )


def test_make_help_lists_every_target_with_what_it_does(tmp_path):
    done = make("help", tmp_path)
    assert done.returncode == 0, done.stderr
    listed = dict(line.split("\t", 1) for line in done.stdout.splitlines())
    phony = re.search(r"^\.PHONY: (.*)$", (REPO / "Makefile").read_text(), re.M)[1].split()
    assert sorted(listed) == sorted(phony) and all(listed.values())


def test_make_run_plays_the_readmes_default_experiment(tmp_path):
    """The README's first command: a real experiment on the built-in stream, no download."""
    done = make("run", tmp_path, OKL_RESULTS=str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    assert re.search(r"^pkawv_taylor on synthetic \(seed 0\): complete, 200,000 rounds in ", done.stdout, re.M)
    (run,) = find(tmp_path / "results")
    assert run.manifest().status == "complete" and run.manifest().rounds == 200_000


def test_make_lint_passes_on_the_checkout(tmp_path):
    done = make("lint", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 2 kept, 0 broken." in done.stdout
