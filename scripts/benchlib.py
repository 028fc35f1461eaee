"""Shared by the benchmark scripts: one `okl-run` in its own process, under a results root of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def okl_run(overrides: list[str], root: Path, learner: str) -> dict:
    """Run ``okl-run progress=false learner=<learner> *overrides`` with one BLAS thread and results
    under ``root``; return its run.json."""
    subprocess.run(
        [sys.executable, "-c", "from okl.cli import main; main()", "progress=false", f"learner={learner}", *overrides],
        env={**os.environ, "OKL_RESULTS": str(root), "OPENBLAS_NUM_THREADS": "1"},
        check=True,
        capture_output=True,
    )
    (manifest,) = Path(root).glob(f"learner={learner}/*/*/*/run.json")
    return json.loads(manifest.read_text())
