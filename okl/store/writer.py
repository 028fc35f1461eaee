"""The round writer: buffers per-round columns and writes them as closed Parquet parts of a run directory.

Nothing finished is lost: a part closes at the end of the first block after ``part_rows`` rows or
``part_seconds`` seconds (each part written to a temporary name and renamed), the learner's snapshot is
saved with it when one is due (SNAPSHOT_SHARE) and the manifest is rewritten, so a process killed with
SIGKILL keeps every closed part, leaves a manifest saying how far it got (status ``running``), and the run
resumes from its last snapshot, playing the parts after it again (:mod:`okl.runner.lifecycle`). Parts close
at block ends only, so where they fall never changes what the learner computes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from okl.errors import ConfigError
from okl.store.files import column, write_table
from okl.store.manifest import Manifest
from okl.store.run import ROUNDS, RunDir
from okl.system import signals_deferred
from okl.validation import integer_at_least, positive

# A part's snapshot is due when the time since the last one ended is at least its cost divided by SHARE: snapshots
# then take at most SHARE of the wall time while their cost holds (a state that grows makes the next one a little
# costlier than the interval allowed for), and a kill replays at most cost/SHARE of work plus a part. Those of at
# most FREE seconds (a small learner's state: 1-10 ms) are taken at every part, so a small learner's kill replays
# one part. Measured: online_krr on cod-rna at 26,000 rounds spent two thirds of its wall time pickling its factor
# every 15 s; kernel_awv on 6,000 rounds in parts of 250 spent 6.4 s on 24 snapshots (12-288 MB) for 3.2 s of
# learning when every snapshot under a second was free. (A budget of SHARE of the attempt's whole time, spent
# early, left a kernel_awv run with one snapshot at round 256 of 3,584 played.)
SNAPSHOT_FREE_S = 0.02
SNAPSHOT_SHARE = 0.05


@dataclass(frozen=True)
class SinkParams:
    """root: results root; part_rows, part_seconds: a part closes (with the learner's snapshot when one is due)
    at the first block end after this many rows or seconds; overwrite: redo runs already complete."""

    root: str = "results"
    part_rows: int = 100_000
    part_seconds: float = 15.0
    overwrite: bool = False

    def __post_init__(self) -> None:
        integer_at_least("part_rows", self.part_rows, 1)
        positive("part_seconds", self.part_seconds)
        if not str(self.root).strip():  # sink.root='' wrote into the current folder, silently
            raise ConfigError("root is empty: give the results folder (default: $OKL_RESULTS, else results/)")


class RoundWriter:
    """Writes one run's rounds, held-out scores, snapshots and manifest."""

    def __init__(self, run: RunDir, part_rows: int, part_seconds: float) -> None:
        self.run = run
        self.part_rows = part_rows
        self.part_seconds = part_seconds
        self.manifest = Manifest()
        self.last: dict[str, float] = {}  # last written row: t, cum_loss, elapsed_ns
        self.checkpoints: list[dict[str, float]] = []
        self._buffer: list[dict[str, np.ndarray]] = []
        self._buffered = 0
        self._closed_at = time.monotonic()
        self._snapshot_s, self._snapshot_end = 0.0, time.monotonic()  # the last snapshot's cost, and when it ended

    def start(self, **fields: Any) -> None:
        """Write the initial manifest (of ``fields``), then clear the run directory of an earlier attempt. In this
        order: a process stopped in between (Ctrl-C, a kill) left a manifest saying complete whose parts were gone
        (``sink.overwrite=true`` on a complete run), which the next okl-run skipped as done and every reader refused."""
        (self.run.path / ROUNDS).mkdir(parents=True, exist_ok=True)
        self.manifest = Manifest(**fields)
        self.run.write_manifest(self.manifest)
        self.run.clear()

    def resume(self, previous: Manifest, fields: dict[str, Any]) -> None:
        """Continue ``previous`` (a manifest with a snapshot) after its snapshot's parts: later parts and
        held-out scores are dropped, ``fields`` (this attempt's versions, argv...) replace the old ones."""
        snapshot = previous.snapshot
        kept = previous.parts[: snapshot["parts"]]
        self.run.keep(len(kept))
        resumed = [*previous.resumed, {"from_round": snapshot["rounds"], **fields}]
        self.manifest = dataclasses.replace(
            previous, **fields, status="running", parts=kept, error=None, resumed=resumed
        )
        last = self.run.read_part(self.run.path / kept[-1], columns=["t", "cum_loss", "elapsed_ns"])
        self.last = {k: float(last[k][-1].as_py()) for k in last.column_names}
        self.manifest.update(**self._written())
        heldout = self.run.heldout()
        if heldout is not None:  # a score past the snapshot is played again (none left: the file goes, else a run
            # stopped again before its next checkpoint kept scores at rounds its manifest says it never reached)
            self.checkpoints = [r for r in heldout.to_pylist() if r["t"] <= snapshot["rounds"]]
            self.run.write_heldout(self.checkpoints)
        self.run.write_manifest(self.manifest)

    def checkpoint(self, **row: float) -> None:
        """Add a held-out score (t, test_loss, model_size, seconds) and rewrite ``test.parquet``."""
        self.checkpoints.append(row)
        self.run.write_heldout(self.checkpoints)

    def append(self, columns: dict[str, np.ndarray]) -> None:
        """Add rows (all columns of equal length)."""
        self._buffer.append(columns)
        self._buffered += len(columns["t"])

    def room(self) -> int:
        """Rows the part in progress takes before it is due by its size (at least 1)."""
        return max(self.part_rows - self._buffered, 1)

    def due(self) -> bool:
        """Whether the part in progress should close now (enough rows, or enough time since the last one)."""
        return self._buffered >= self.part_rows or (
            self._buffered > 0 and time.monotonic() - self._closed_at >= self.part_seconds
        )

    def close_part(self, snapshot: Callable[[], Any] | None = None, final: bool = False) -> None:
        """Write the buffered rows as one part, then ``snapshot()`` (the state after them) when given and
        due (always when ``final``; see SNAPSHOT_SHARE), then the manifest. Safe to call again if it was
        interrupted: the buffer still holds the rows. A run resumes from its last snapshot: the parts
        after it are played again."""
        if self._buffered:
            rows = {k: np.concatenate([b[k] for b in self._buffer]) for k in self._buffer[0]}
            index = len(self.manifest.parts)
            path = self.run.part_path(index)
            columns = {k: column(v) for k, v in rows.items()}
            write_table(path, pa.table({**columns, "regret": pa.nulls(self._buffered, pa.float64())}))
            with signals_deferred():  # the part listed and the buffer emptied together: a Ctrl-C between the two
                # made the run's finish write the same rows again as the next part (rounds listed twice)
                self.manifest.parts.append(f"{ROUNDS}/{path.name}")
                self.last = {k: float(rows[k][-1]) for k in ("t", "cum_loss", "elapsed_ns")}
                self._buffer, self._buffered = [], 0
        parts = len(self.manifest.parts)
        behind = parts and (self.manifest.snapshot or {}).get("parts") != parts
        if snapshot is not None and behind and (final or self._snapshot_due()):
            start = time.monotonic()
            written = self.run.write_snapshot(parts, snapshot())
            self.manifest.snapshot = {**written, "rounds": int(self.last["t"]), "parts": parts}
            self._snapshot_end = time.monotonic()
            self._snapshot_s = self._snapshot_end - start
        self._closed_at = time.monotonic()
        self.manifest.update(**self._written())
        self.run.write_manifest(self.manifest)
        if snapshot is not None and self.manifest.snapshot:  # the manifest names the new one now
            self.run.drop_snapshots(keep=self.manifest.snapshot["path"])

    def finish(self, snapshot: Callable[[], Any] | None = None, **fields: Any) -> None:
        """Write the remaining rows and the final manifest (``status`` and any other fields).

        Rounds, average loss and learner time are those of the last row written, so the manifest agrees
        with the Parquet content whatever interrupted the run.
        """
        self.close_part(snapshot, final=True)
        taken = (self.manifest.snapshot or {}).get("rounds")
        stale = fields.get("status") == "complete" and taken is not None and taken != self.last.get("t")
        # a snapshot taken before the last round is dropped: nothing resumes a complete run, and no analysis may read
        # it (a run without analyses kept a mid-run snapshot: 185 MB of kernel_awv's at round 4,608 of 5,000); the
        # manifest in memory changes once the final one is written, so a finish interrupted here and called again
        # (as "interrupted") still names the snapshot to resume from
        final = dataclasses.replace(self.manifest, **fields, **self._written(), **({"snapshot": None} if stale else {}))
        self.run.write_manifest(final)
        self.manifest = final
        if stale:
            self.run.drop_snapshots()

    def _snapshot_due(self) -> bool:
        since = time.monotonic() - self._snapshot_end
        return self._snapshot_s <= SNAPSHOT_FREE_S or SNAPSHOT_SHARE * since >= self._snapshot_s

    def abandon(self, **fields: Any) -> None:
        """Record ``fields`` (a failed status and its reason) when the buffered rows cannot be written: the
        manifest keeps the rounds of the parts already closed. Best effort: it is a small write."""
        self.manifest.update(**{**fields, **self._written()})
        with contextlib.suppress(OSError):
            self.run.write_manifest(self.manifest)

    def _written(self) -> dict[str, Any]:
        """Rounds, average loss and learner time of the rows written so far."""
        t = int(self.last.get("t", 0))
        return {
            "rounds": t,
            "average_loss": self.last["cum_loss"] / t if t else None,
            "learner_s": self.last.get("elapsed_ns", 0) / 1e9,
        }
