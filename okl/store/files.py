"""Atomic writes: every file of the store is written under a temporary name and renamed into place, so a
reader (or a process killed mid-write) never sees half a file. Parquet encodings: no dictionaries,
BYTE_STREAM_SPLIT for floats, DELTA_BINARY_PACKED for integers, zstd (2M rows × 5 columns, measured on the
development machine: 78.8 MB in 1.23 s with pyarrow's defaults, 44.2 MB in 0.23 s with these)."""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` then rename ``tmp`` to ``path``; the temporary name is unique per process, so
    parallel runs of a sweep filling one shared cache never write the same file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_table(path: Path, table: pa.Table) -> None:
    """One Parquet file with the encodings above."""
    encoding = {
        name: "DELTA_BINARY_PACKED" if pa.types.is_integer(col.type) else "BYTE_STREAM_SPLIT"
        for name, col in zip(table.column_names, table.columns, strict=True)
    }
    write_atomic(
        path, lambda tmp: pq.write_table(table, tmp, compression="zstd", use_dictionary=False, column_encoding=encoding)
    )


def write_json(path: Path, value: Any) -> None:
    text = json.dumps(value, indent=2, default=str)
    write_atomic(path, lambda tmp: tmp.write_text(text))


def read_json(path: Path) -> Any | None:
    """The JSON value in ``path``, or None when it is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def write_pickle(path: Path, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    write_atomic(path, lambda tmp: tmp.write_bytes(data))
