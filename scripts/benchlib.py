"""Shared by the benchmark scripts: one `okl-run` in its own process, under a results root of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from okl.store import RunDir, find


class RunFailed(Exception):
    """okl-run exited with an error; the message is its one-line reason (a dataset not available, ...)."""


def okl_run(overrides: list[str], root: Path, learner: str) -> tuple[dict, RunDir]:
    """Run ``okl-run progress=false learner=<learner> *overrides`` with one BLAS thread and results
    under ``root``; return (its run.json, the run directory). Raises RunFailed if it fails."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from okl.cli.run import main; main()",
            "progress=false",
            f"learner={learner}",
            *overrides,
        ],
        env={**os.environ, "OKL_RESULTS": str(root), "OPENBLAS_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise RunFailed(lines[-1] if lines else f"okl-run exited with status {done.returncode}")
    (run,) = find(Path(root), learner=learner)
    return run.manifest(), run
