"""Per-stream caches under the results root: what depends on the stream only (a comparator's losses,
the effective dimension) is computed once and shared by every run on that stream.

    <root>/.cache/<kind>/<key>.json | .npz

``key`` is a sha256 of what determines the value; writes are atomic and unique per process, so the runs
of a parallel sweep can fill one cache at once.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from okl.store.files import read_json, write_atomic, write_json

CACHE = ".cache"


def digest(*parts: bytes | dict[str, Any]) -> str:
    """A short sha256 of byte strings and JSON-able dictionaries."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else json.dumps(part, sort_keys=True).encode())
    return h.hexdigest()[:20]


class Cache:
    """The cache of one kind of value (``Cache(root, "effective_dimension")``)."""

    def __init__(self, root: str | Path, kind: str) -> None:
        self.folder = Path(root) / CACHE / kind

    def get_json(self, key: str) -> Any | None:
        return read_json(self.folder / f"{key}.json")

    def put_json(self, key: str, value: Any) -> None:
        write_json(self.folder / f"{key}.json", value)

    def get_arrays(self, key: str) -> dict[str, np.ndarray] | None:
        path = self.folder / f"{key}.npz"
        if not path.exists():
            return None
        with np.load(path) as saved:
            return dict(saved)

    def put_arrays(self, key: str, **arrays: np.ndarray) -> None:
        def write(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)

        write_atomic(self.folder / f"{key}.npz", write)
