"""Read runs back: the rounds of many runs as one DataFrame, and their manifests.

>>> from okl import results
>>> rounds = results.load(learner="pkawv_taylor", dataset="synthetic")   # one row per round
>>> runs = results.runs()                                                 # one row per run

Partition keys (``learner``, ``dataset``, ``seed``, ``run``) come from the hive-style directory
names, so they are columns of the result without being stored in the files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds

from okl.errors import ConfigError
from okl.store import PARTITION, RunDir, find


def default_root() -> Path:
    """The results root: ``$OKL_RESULTS`` or ``results``."""
    return Path(os.environ.get("OKL_RESULTS", "results"))


def _run_dirs(root: Path, **keys: object) -> list[RunDir]:
    if not root.is_dir():
        raise ConfigError(
            f"no results root at {str(root)!r}: pass the folder okl-run wrote to (OKL_RESULTS, default results/)"
        )
    return find(root, **keys)


def load(
    root: str | Path | None = None,
    *,
    learner: str | None = None,
    dataset: str | None = None,
    seed: int | None = None,
    run: str | None = None,
    status: str | None = None,
    columns: list[str] | None = None,
) -> pd.DataFrame:
    """Rounds of the runs under ``root`` matching the filters, with the partition keys as columns.

    ``status`` keeps runs whose manifest has that status (e.g. ``"complete"``).
    """
    root = Path(root) if root is not None else default_root()
    files = []
    for run_dir in _run_dirs(root, learner=learner, dataset=dataset, seed=seed, run=run):
        if status is not None and run_dir.status() != status:
            continue
        files.extend(run_dir.parts())
    if not files:
        return pd.DataFrame(columns=[*PARTITION.names, *(columns or [])])
    data = ds.dataset(
        [str(f) for f in files],
        format="parquet",
        partitioning=ds.partitioning(PARTITION, flavor="hive"),
        partition_base_dir=str(root),
    )
    wanted = None if columns is None else [*PARTITION.names, *columns]
    return data.to_table(columns=wanted).to_pandas()


def runs(root: str | Path | None = None, **filters) -> pd.DataFrame:
    """One row per run: partition keys, status, rounds, average loss, timings and the config. A run whose
    manifest says ``running`` but whose process is gone (SIGKILL, out of memory) is listed as ``stopped``."""
    root = Path(root) if root is not None else default_root()
    rows = []
    for run_dir in _run_dirs(root, **filters):
        manifest = run_dir.manifest()
        if manifest is None:
            continue
        manifest["status"] = run_dir.status()  # "stopped": its process is gone; re-running the command resumes it
        rows.append({**manifest, "path": str(run_dir.path)})
    return pd.DataFrame(rows)


def heldout(root: str | Path | None = None, **filters) -> pd.DataFrame | None:
    """The held-out scores (``t``, ``test_loss``, ``model_size``, ``seconds``) of the runs matching the
    filters, with the partition keys as columns; None when none of them was scored on a held-out set."""
    root = Path(root) if root is not None else default_root()
    frames = []
    for run_dir in _run_dirs(root, **filters):
        scores = run_dir.heldout()
        if scores is not None:
            frames.append(scores.assign(**run_dir.partition))
    return pd.concat(frames, ignore_index=True) if frames else None
