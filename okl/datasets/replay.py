"""Replay the sequence an adaptive environment chose in an earlier run.

``dataset=replay dataset.run=<run directory>`` reads the inputs (columns ``x_0 .. x_{d-1}``, which
the runner records for adaptive environments) and labels of that run's rounds, so that any learner
can be played on exactly the sequence another learner faced (pkawv_jezequel2019 Figure 3 compares
learners on one sequence). The task is the recorded run's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from okl.datasets.base import Dataset, register
from okl.errors import ConfigError, DataError
from okl.sink import ROUNDS, read_manifest


def recorded_inputs(run_dir: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """(X, y) of a run whose inputs were recorded, else None."""
    table = pq.read_table(Path(run_dir) / ROUNDS)
    names = sorted((c for c in table.column_names if c.startswith("x_")), key=lambda c: int(c[2:]))
    if not names:
        return None
    X = np.column_stack([table[c].to_numpy() for c in names])
    return np.ascontiguousarray(X), table["y"].to_numpy()


@dataclass(frozen=True)
class ReplayParams:
    """run: the run directory whose recorded sequence is replayed."""

    run: str = ""


@register("replay")
class Replay(Dataset):
    """The recorded rounds of an earlier run."""

    Params = ReplayParams

    def __init__(self, **params) -> None:
        super().__init__(**params)
        if self.params.run in ("", "???"):
            raise ConfigError("dataset=replay needs the run to replay: dataset.run=\"'<run directory>'\"")
        run = Path(self.params.run)
        manifest = read_manifest(run)
        if manifest is None:
            raise DataError(f"no run at {str(run)!r}: set dataset.run= to a run directory (one holding run.json)")
        recorded = recorded_inputs(run) if manifest.get("rounds") else None
        if recorded is None:
            raise DataError(
                f"run {str(run)!r} has no recorded inputs (only adaptive environments record them): "
                f"replay an adversary run, or rerun its dataset config"
            )
        self.X, self.y = recorded
        self._task = manifest["task"]

    @property
    def task(self) -> str:
        return self._task

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def n(self) -> int:
        return len(self.y)

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        yield self.X, self.y
