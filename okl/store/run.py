"""One run directory: its files, its manifest, its lock and its snapshots. Nothing else knows a path
inside a run directory.

Layout (hive-style keys, ``run`` = content hash of the run's identity)::

    <root>/learner=<key>/dataset=<key>/seed=<s>/run=<hash>/
        rounds/part-00000.parquet   the first rounds (a part closes after ``part_rows`` rows or
        rounds/part-00001.parquet   ``part_seconds`` seconds, at the end of a block)
        test.parquet                held-out scores at checkpoints (datasets with a test set)
        snapshots/part-00001.pkl    the learner and the play's position after the last closed part
        run.json                    resolved config, versions, status, rounds done, timings, analyses
        .lock                       the identity of the process playing the run (okl.store.lock)

Columns of ``rounds/``: ``t`` (1-based round), ``y``, ``y_hat``, ``loss``, ``cum_loss``, ``elapsed_ns``
(learner time, cumulative), the learner's diagnostics (``model_size``, ...), the inputs ``x_0 .. x_{d-1}``
for adaptive environments (so that the sequence can be replayed), and ``regret`` (null unless a
comparator scored the run: :mod:`okl.analyses.regret`). ``test.parquet``: ``t``, ``test_loss`` (the
task's evaluation loss averaged over the held-out set: 0-1 error for classification), ``model_size``
and ``seconds`` (scoring time).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from okl.errors import DataError
from okl.store.files import (
    TEMPORARY,
    column,
    read_json,
    read_pickle,
    temporary_writer,
    write_json,
    write_pickle,
    write_table,
)
from okl.store.lock import RunLock, describe, gone
from okl.store.manifest import Manifest
from okl.system import process_alive

MANIFEST = "run.json"
LOCK = ".lock"
ROUNDS = "rounds"
TEST = "test.parquet"
SNAPSHOTS = "snapshots"
FINISHED = ("complete", "timeout")  # a run with one of these statuses has its rounds: it is read and summarised
PARTITION = pa.schema([("learner", pa.string()), ("dataset", pa.string()), ("seed", pa.int64()), ("run", pa.string())])


@dataclass(frozen=True)
class RunDir:
    """The files of one run (``RunDir(path)``, or :meth:`at` a results root and partition keys)."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    @classmethod
    def at(cls, root: str | Path, partition: dict[str, object]) -> RunDir:
        """The run directory of these partition keys (learner, dataset, seed, run) under ``root``."""
        return cls(Path(root).joinpath(*(f"{k}={partition[k]}" for k in PARTITION.names)))

    @property
    def partition(self) -> dict[str, str]:
        """The partition keys (learner, dataset, seed, run), read from the directory names."""
        return dict(part.split("=", 1) for part in self.path.parts[-len(PARTITION.names) :])

    @property
    def root(self) -> Path:
        """The results root holding this run (and the per-stream caches)."""
        return self.path.parents[len(PARTITION.names) - 1]

    @property
    def rounds_path(self) -> Path:
        """The Parquet dataset of the rounds: ``pandas.read_parquet(run.rounds_path)`` reads them."""
        return self.path / ROUNDS

    # manifest ---------------------------------------------------------------------------------
    def manifest(self) -> Manifest | None:
        """``run.json`` (:class:`~okl.store.manifest.Manifest`), or None when the directory holds no run."""
        data = read_json(self.path / MANIFEST)
        return Manifest.from_json(data) if isinstance(data, dict) else None

    def manifest_damaged(self) -> bool:
        """Whether ``run.json`` exists but cannot be read as a manifest (truncated, edited by hand)."""
        return self.manifest() is None and (self.path / MANIFEST).exists()

    def write_manifest(self, manifest: Manifest) -> None:
        write_json(self.path / MANIFEST, manifest.to_json())

    def record(self, **entries: dict[str, Any]) -> Manifest:
        """Add post-run analyses' entries (by key) to the manifest; returns it."""
        manifest = self.manifest() or Manifest()
        manifest.analyses.update(entries)
        self.write_manifest(manifest)
        return manifest

    def status(self, manifest: Manifest | None = None) -> str | None:
        """The manifest's status (of ``manifest`` when the caller has read it), ``stopped`` for a run marked
        running whose process is gone."""
        manifest = manifest or self.manifest()
        status = manifest.status if manifest else None
        if status == "running" and not self.held():
            return "stopped"
        return status

    # rounds -----------------------------------------------------------------------------------
    def part_path(self, index: int) -> Path:
        return self.path / ROUNDS / f"part-{index:05d}.parquet"

    def parts(self, manifest: Manifest | None = None) -> list[Path]:
        """The closed parts the manifest (``manifest`` when the caller has read it) lists, in round order."""
        manifest = manifest or self.manifest()
        return [self.path / p for p in manifest.parts] if manifest else []

    def rounds(self, columns: list[str] | None = None) -> pa.Table:
        """The rounds written so far (the parts the manifest lists); DataError names a part that cannot be read."""
        parts = self.parts()
        if not parts:
            return pa.table({c: column(np.empty(0)) for c in columns or ["t"]})
        tables = [self.read_part(p, columns) for p in parts]
        try:
            return pa.concat_tables(tables)
        except pa.ArrowException as exc:  # a part whose columns differ from the first's
            raise DataError(unreadable(self.path / ROUNDS, exc)) from None

    @staticmethod
    def read_part(path: Path, columns: list[str] | None = None) -> pa.Table:
        """One Parquet file of the run (``columns`` of it); DataError when it cannot be read or lacks one of them.
        (Not ``pq.read_table``, which imports pandas, which a run never needs; ParquetFile.read leaves out a
        column the file does not have, where read_table refused.)"""
        try:
            with pq.ParquetFile(path) as part:
                table = part.read(columns=columns)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(unreadable(path, exc)) from None
        missing = [c for c in columns or () if c not in table.column_names]
        if missing:
            raise DataError(unreadable(path, ValueError(f"it has no column {', '.join(missing)}")))
        return table

    def broken_part(self, manifest: Manifest, parts: int, rounds: int) -> str | None:
        """Why the first ``parts`` parts the manifest lists do not hold rounds 1..``rounds`` (a part missing,
        truncated or unreadable: its footer is read), or None when they do."""
        total = 0
        for relative in manifest.parts[:parts]:
            try:
                total += pq.read_metadata(self.path / relative).num_rows
            except (OSError, pa.ArrowException) as exc:
                return f"its part {relative} cannot be read ({type(exc).__name__})"
        return None if total == rounds else f"its parts hold {total:,} rounds, its snapshot {rounds:,}"

    def set_column(self, name: str, values: np.ndarray) -> None:
        """Replace column ``name`` of every part with ``values`` (one per round), part by part, atomically."""
        start = 0
        for path in self.parts():
            part = self.read_part(path)
            rows = part.num_rows
            values_of_part = column(np.asarray(values[start : start + rows], dtype=np.float64))
            write_table(path, part.set_column(part.column_names.index(name), name, values_of_part))
            start += rows

    def inputs(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(X, y) of the rounds when the run recorded its inputs (adaptive environments), else None."""
        table = self.rounds()
        names = sorted((c for c in table.column_names if c.startswith("x_")), key=lambda c: int(c[2:]))
        if not names:
            return None
        X = np.column_stack([table[c].to_numpy() for c in names])
        return np.ascontiguousarray(X), table["y"].to_numpy()

    # held-out scores --------------------------------------------------------------------------
    @property
    def scored(self) -> bool:
        """Whether the run wrote held-out scores (``test.parquet``: a dataset with a test set)."""
        return (self.path / TEST).exists()

    def heldout(self) -> pa.Table | None:
        """The held-out scores at checkpoints (``t``, ``test_loss``, ``model_size``, ``seconds``), or None."""
        path = self.path / TEST
        return self.read_part(path) if path.exists() else None

    def write_heldout(self, rows: list[dict[str, float]]) -> None:
        """``test.parquet`` holding ``rows``; none removes it."""
        if not rows:
            (self.path / TEST).unlink(missing_ok=True)
            return
        write_table(self.path / TEST, pa.table({k: column([r[k] for r in rows]) for k in rows[0]}))

    # snapshots --------------------------------------------------------------------------------
    def write_snapshot(self, parts: int, state: Any) -> dict[str, str]:
        """Save ``state`` as the snapshot after ``parts`` closed parts; returns its path relative to the run
        directory and its sha256, for the manifest. The older snapshot stays until the manifest names the new
        one (:meth:`drop_snapshots` with ``keep``): a process killed in between leaves a manifest whose
        snapshot exists."""
        relative = f"{SNAPSHOTS}/part-{parts - 1:05d}.pkl"
        return {"path": relative, "sha256": write_pickle(self.path / relative, state)}

    def read_snapshot(self, entry: dict[str, Any]) -> Any:
        """The state saved by :meth:`write_snapshot`, from the manifest's ``entry`` (path and sha256). Nothing
        foreign is unpickled: a path outside the run's ``snapshots/`` or content other than the sha256 the
        manifest records raises DataError before unpickling; raises OSError or pickle's errors when unreadable."""
        folder = (self.path / SNAPSHOTS).resolve()
        path = (self.path / str(entry.get("path"))).resolve()
        if path.parent != folder or path.suffix != ".pkl":
            raise DataError(f"its snapshot {entry.get('path')} lies outside {self.path / SNAPSHOTS}")
        try:
            return read_pickle(path, entry.get("sha256"))
        except ValueError as exc:
            raise DataError(f"its snapshot {entry['path']} is not the one run.json records ({exc})") from None

    def snapshots(self) -> list[Path]:
        """The snapshot files present (at most one once a part has closed; none once the run is complete)."""
        return sorted((self.path / SNAPSHOTS).glob("*.pkl"))

    def drop_snapshots(self, keep: str | None = None) -> None:
        """Delete the snapshots, but the one at ``keep`` (a path relative to the run directory)."""
        for old in self.snapshots():
            if keep is None or old != self.path / keep:
                old.unlink(missing_ok=True)

    def keep(self, parts: int) -> None:
        """Delete every part after the first ``parts`` (a resumed run rewrites them), and what a killed attempt was
        writing (:func:`~okl.store.files.write_atomic`'s temporary files: a snapshot's was 52 MB, an exact kernel's can
        be GBs, and none was ever removed). Called as an attempt starts, under the run's lock (which okl-regret holds
        too while it writes the parts); a live process's files are kept all the same: a temporary file is named
        ``.<file>.<pid>.tmp`` (the lock's own, by a token, is kept too)."""
        for path in (self.path / ROUNDS).glob("part-*.parquet"):
            if int(path.stem.removeprefix("part-")) >= parts:
                path.unlink()
        for folder in (self.path, self.path / ROUNDS, self.path / SNAPSHOTS):
            for left in folder.glob(f".*{TEMPORARY}"):
                pid = temporary_writer(left)
                if pid is not None and not left.name.startswith(LOCK) and not process_alive(pid):
                    left.unlink(missing_ok=True)

    def clear(self) -> None:
        """Remove the rounds, held-out scores and snapshots of an earlier attempt."""
        self.keep(0)
        self.write_heldout([])
        self.drop_snapshots()

    # lock -------------------------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        """The lock file: the identity of the process playing the run (:mod:`okl.store.lock`)."""
        return self.path / LOCK

    def held(self) -> bool:
        """Whether a live process holds the run's lock."""
        found = RunLock(self.lock_path).owner()
        return found is not None and not gone(*found)

    @contextmanager
    def claim(self) -> Iterator[str | None]:
        """Hold the run's lock for this process; yield None, or the live process holding it (``process <pid>
        on <host>``).

        Identical runs of one sweep (a key that a learner ignores, e.g. ``M`` for ``krr``) or two users
        starting the same run would otherwise write the same directory at once. A lock whose owner is
        provably gone is taken over.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        lock = RunLock(self.lock_path)
        owner = lock.acquire()
        if owner is not None:
            yield describe(owner)
            return
        try:
            yield None
        finally:
            lock.release()


def unreadable(path: Path, exc: Exception) -> str:
    """One line for a part that cannot be read: which, why, and what to do."""
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return (
        f"{path}: cannot be read ({why}): run the run's okl-run command again with sink.overwrite=true to play it again"
    )


def find(root: Path, **keys: object) -> list[RunDir]:
    """The run directories under ``root`` whose partition keys (learner, dataset, seed, run) match the
    given values (None: any)."""
    pattern = "/".join(f"{k}={'*' if keys.get(k) is None else keys[k]}" for k in PARTITION.names)
    return [RunDir(p) for p in sorted(Path(root).glob(pattern)) if p.is_dir()]
