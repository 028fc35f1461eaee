"""Score a run: fill its Parquet column ``regret`` against a comparator, caching the comparator.

The comparator depends on the stream only, so its per-round losses are cached under
``<results root>/.comparators/<key>.npz``, the key a sha256 of the rounds' inputs and labels (bytes)
and the comparator's name and parameters: every learner run on the same stream (or replayed on the
same adversarial sequence) reuses it, whatever dataset config produced it.

The run's parts are rewritten one by one (each atomically) with regret_t = cum_loss_t − Σ_{s<=t} ℓ_s,
and ``run.json`` gets a ``regret`` entry: comparator, parameters, rounds, final regret, comparator
loss, λ||f||², seconds and whether the comparator came from the cache. The inputs come from the
run's recorded columns ``x_*`` (adaptive environments), from the caller, or from the run's dataset
config, checked against the recorded labels.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from okl.datasets import DATASETS
from okl.datasets.replay import recorded_inputs
from okl.errors import ConfigError, DataError
from okl.registry import identity
from okl.regret.base import Comparator
from okl.sink import read_manifest, write_manifest, write_part

CACHE = ".comparators"


def score_run(run_dir: Path, comparator: Comparator, X: np.ndarray | None = None, root: Path | None = None) -> dict:
    """Fill ``regret`` in the run at ``run_dir``; return the manifest's ``regret`` entry.

    ``X``: the inputs of the rounds played (else recorded or rebuilt); ``root``: the results root
    holding the comparator cache (default: the run's, four levels up).
    """
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise ConfigError(f"no run at {str(run_dir)!r}: give a run directory (one holding run.json)")
    if manifest.get("task") != "regression":
        raise ConfigError(
            f"comparator {comparator.name!r} scores the square loss of regression streams; "
            f"run {str(run_dir)!r} is {manifest.get('task')}"
        )
    n = int(manifest.get("rounds") or 0)
    if n == 0:
        raise DataError(f"run {str(run_dir)!r} has no rounds to score")
    parts = [run_dir / p for p in manifest["parts"]]
    table = pa.concat_tables([pq.read_table(p, columns=["t", "y", "cum_loss"]) for p in parts])
    y, cum_loss = table["y"].to_numpy(), table["cum_loss"].to_numpy()
    X = _inputs(run_dir, manifest, n, y) if X is None else X[:n]

    t0 = time.perf_counter()
    root = Path(root) if root is not None else run_dir.parents[3]
    ell, penalty, cached = _cached_losses(comparator, X, y, root / CACHE)
    regret = cum_loss - np.cumsum(ell)
    start = 0
    for path in parts:
        part = pq.read_table(path)
        rows = part.num_rows
        column = pa.array(regret[start : start + rows], type=pa.float64())
        write_part(path, part.set_column(part.column_names.index("regret"), "regret", column))
        start += rows
    entry = {
        "comparator": comparator.name,
        **identity(comparator.params),
        "rounds": n,
        "regret": float(regret[-1]),
        "comparator_loss": float(ell.sum()),
        "penalty": penalty,
        "cached": cached,
        "seconds": time.perf_counter() - t0,
    }
    manifest["regret"] = entry
    write_manifest(run_dir, manifest)
    return entry


def matches(entry: dict | None, comparator: Comparator, rounds: int) -> bool:
    """Whether a manifest's ``regret`` entry is this comparator's on ``rounds`` rounds."""
    want = {"comparator": comparator.name, **identity(comparator.params), "rounds": rounds}
    return entry is not None and all(entry.get(k) == v for k, v in want.items())


def _inputs(run_dir: Path, manifest: dict[str, Any], n: int, y: np.ndarray) -> np.ndarray:
    """The run's inputs: recorded, or replayed from its dataset config and checked against its labels."""
    recorded = recorded_inputs(run_dir)
    if recorded is not None:
        return recorded[0]
    node = dict(manifest["config"]["dataset"])
    dataset = DATASETS.get(node.pop("name"))(**node)
    chunks = list(dataset.head(n)) or [(np.zeros((0, dataset.d)), np.zeros(0))]
    X = np.concatenate([Xc for Xc, _ in chunks]).astype(np.float64)
    y_again = np.concatenate([yc for _, yc in chunks]).astype(np.float64)
    if len(y_again) != n or not np.array_equal(y_again, y):
        raise DataError(
            f"the dataset of run {str(run_dir)!r} no longer gives the labels it recorded: "
            f"rerun it (sink.overwrite=true) before scoring"
        )
    return X


def _cached_losses(comparator: Comparator, X: np.ndarray, y: np.ndarray, cache: Path) -> tuple[np.ndarray, float, bool]:
    key = hashlib.sha256()
    key.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    key.update(np.ascontiguousarray(y, dtype=np.float64).tobytes())
    key.update(json.dumps({"name": comparator.name, **identity(comparator.params)}, sort_keys=True).encode())
    path = cache / f"{key.hexdigest()[:20]}.npz"
    if path.exists():
        with np.load(path) as saved:
            return saved["losses"], float(saved["penalty"]), True
    ell, penalty = comparator.losses(np.ascontiguousarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64))
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.npz")
    np.savez(tmp, losses=ell, penalty=penalty)
    os.replace(tmp, path)
    return ell, penalty, False
