"""The metrics sink: per-round Parquet parts and a ``run.json`` manifest per run directory.

Layout (hive-style keys, ``run`` = content hash of the run's identity)::

    <root>/learner=<key>/dataset=<key>/seed=<s>/run=<hash>/
        rounds/part-00000.parquet   rounds 1 .. part_rows
        rounds/part-00001.parquet   ...
        test.parquet                held-out scores at checkpoints (datasets with a test set)
        run.json                    resolved config, versions, status, rounds done, timings, peak RSS

``rounds/`` is a Parquet dataset: ``pandas.read_parquet(run_dir / "rounds")`` reads one run,
:func:`okl.results.load` many.

Columns: ``t`` (1-based round), ``y``, ``y_hat``, ``loss``, ``cum_loss``, ``elapsed_ns`` (learner
time, cumulative), the learner's diagnostics (``model_size``, ...), the inputs ``x_0 .. x_{d-1}``
for adaptive environments (so that the sequence can be replayed), and ``regret`` (null unless a
comparator scored the run: :mod:`okl.regret.score`). ``test.parquet``: ``t``, ``test_loss`` (the
task's evaluation loss averaged over the held-out set: 0-1 error for classification), ``model_size``
and ``seconds`` (scoring time), rewritten after every checkpoint.

Nothing finished is lost: rows are buffered in memory and written as closed parts of ``part_rows``
rows (each written to a temporary name and renamed), the manifest is rewritten after every part, so
a process killed with SIGKILL loses at most the rows of the part in progress and leaves a manifest
saying how far it got (status ``running``). Encodings follow the measurements in the project notes:
no dictionaries, BYTE_STREAM_SPLIT for floats, DELTA_BINARY_PACKED for integers, zstd.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from okl.registry import Registry
from okl.validation import integer_at_least

SINKS = Registry("sink")
MANIFEST = "run.json"
LOCK = ".lock"  # the pid of the process playing the run
ROUNDS = "rounds"
TEST = "test.parquet"
PART_GLOB = f"{ROUNDS}/part-*.parquet"


@dataclass(frozen=True)
class ParquetParams:
    """root: results root; part_rows: rows per Parquet part; overwrite: redo complete runs."""

    root: str = "results"
    part_rows: int = 100_000
    overwrite: bool = False

    def __post_init__(self) -> None:
        integer_at_least("part_rows", self.part_rows, 1)


def read_manifest(run_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((Path(run_dir) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def lock_owner(run_dir: Path) -> int:
    """The pid written in the run's lock file, 0 when there is none."""
    try:
        return int((Path(run_dir) / LOCK).read_text() or 0)
    except (OSError, ValueError):
        return 0


def _write_atomic(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)


@SINKS.register("parquet")
class ParquetSink:
    """Buffers per-round columns and writes them as bounded Parquet parts."""

    Params = ParquetParams

    def __init__(self, run_dir: Path, part_rows: int) -> None:
        self.run_dir = Path(run_dir)
        self.part_rows = part_rows
        self.manifest: dict[str, Any] = {}
        self.last: dict[str, float] = {}  # last written row: t, cum_loss, elapsed_ns
        self._buffer: list[dict[str, np.ndarray]] = []
        self._buffered = 0

    def start(self, manifest: dict[str, Any]) -> None:
        """Create (or clear) the run directory and write the initial manifest."""
        (self.run_dir / ROUNDS).mkdir(parents=True, exist_ok=True)
        for stale in [*self.run_dir.glob(PART_GLOB), self.run_dir / TEST]:
            stale.unlink(missing_ok=True)
        self.manifest = {**manifest, "status": "running", "rounds": 0, "parts": []}
        self._write_manifest()
        self.checkpoints: list[dict[str, float]] = []

    def checkpoint(self, **row: float) -> None:
        """Add a held-out score (t, test_loss, model_size, seconds) and rewrite ``test.parquet``."""
        self.checkpoints.append(row)
        table = pa.table({k: [r[k] for r in self.checkpoints] for k in row})
        write_part(self.run_dir / TEST, table)

    def append(self, columns: dict[str, np.ndarray]) -> None:
        """Add rows (all columns of equal length); closes parts as they fill."""
        self._buffer.append(columns)
        self._buffered += len(columns["t"])
        if self._buffered >= self.part_rows:
            self._flush(final=False)

    def finish(self, **fields: Any) -> None:
        """Write the remaining rows and the final manifest (``status`` and any other fields).

        Rounds, average loss and learner time are those of the last row written, so the manifest
        agrees with the Parquet content whatever interrupted the run. Safe to call again if it was
        interrupted itself: the buffer holds exactly the rows not yet written.
        """
        self._flush(final=True)
        self.manifest.update(fields, **self._written())
        self._write_manifest()

    def _written(self) -> dict[str, Any]:
        """Rounds, average loss and learner time of the rows written so far."""
        t = int(self.last.get("t", 0))
        return {
            "rounds": t,
            "average_loss": self.last["cum_loss"] / t if t else None,
            "learner_s": self.last.get("elapsed_ns", 0) / 1e9,
        }

    def abandon(self, **fields: Any) -> None:
        """Record ``fields`` (a failed status and its reason) when the buffered rows cannot be written: the
        manifest keeps the rounds of the parts already closed. Best effort: it is a small write."""
        self.manifest.update(fields, **self._written())
        with contextlib.suppress(OSError):
            self._write_manifest()

    def _flush(self, final: bool) -> None:
        if not self._buffer:
            return
        rows = {k: np.concatenate([b[k] for b in self._buffer]) for k in self._buffer[0]}
        self._buffer = [rows]
        while self._buffered >= self.part_rows or (final and self._buffered):
            n = min(self.part_rows, self._buffered)
            self._write_part({k: v[:n] for k, v in rows.items()})
            rows = {k: v[n:] for k, v in rows.items()}  # the buffer always holds exactly the unwritten rows
            self._buffered -= n
            self._buffer = [rows] if self._buffered else []
        self._write_manifest()

    def _write_part(self, columns: dict[str, np.ndarray]) -> None:
        n = len(columns["t"])
        path = self.run_dir / ROUNDS / f"part-{len(self.manifest['parts']):05d}.parquet"
        write_part(path, pa.table({**columns, "regret": pa.nulls(n, pa.float64())}))
        self.manifest["parts"].append(f"{ROUNDS}/{path.name}")
        self.last = {k: float(columns[k][-1]) for k in ("t", "cum_loss", "elapsed_ns")}
        self.manifest["rounds"] = int(self.last["t"])

    def _write_manifest(self) -> None:
        write_manifest(self.run_dir, self.manifest)


def write_part(path: Path, table: pa.Table) -> None:
    """Write one Parquet part atomically, with the encodings above."""
    encoding = {
        name: "DELTA_BINARY_PACKED" if pa.types.is_integer(col.type) else "BYTE_STREAM_SPLIT"
        for name, col in zip(table.column_names, table.columns, strict=False)
    }
    _write_atomic(
        path, lambda tmp: pq.write_table(table, tmp, compression="zstd", use_dictionary=False, column_encoding=encoding)
    )


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Rewrite ``run.json`` atomically."""
    text = json.dumps(manifest, indent=2, default=str)
    _write_atomic(Path(run_dir) / MANIFEST, lambda tmp: tmp.write_text(text))
