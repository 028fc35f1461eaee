"""Where dataset files are looked for: the data directory, then a local mirror.

- ``OKL_DATA_DIR``: the data directory (default ``~/.cache/okl``), laid out ``<dir>/<dataset>/<file>``.
- ``OKL_DATA_MIRROR``: a read-only mirror with the same layout (e.g. the project's shared/datasets).
"""

from __future__ import annotations

import os
from pathlib import Path

from okl.errors import DataError


def data_dir() -> Path:
    return Path(os.environ.get("OKL_DATA_DIR") or Path.home() / ".cache" / "okl")


def locate(dataset: str, filenames: tuple[str, ...]) -> Path:
    """The first of ``filenames`` found for ``dataset``, or a one-line DataError saying where to put it."""
    roots = [data_dir()]
    if os.environ.get("OKL_DATA_MIRROR"):
        roots.append(Path(os.environ["OKL_DATA_MIRROR"]))
    for root in roots:
        for name in filenames:
            if (root / dataset / name).is_file():
                return root / dataset / name
    raise DataError(
        f"dataset {dataset!r} is not available offline: put {filenames[0]} in {data_dir() / dataset} "
        f"(OKL_DATA_DIR) or set OKL_DATA_MIRROR to a mirror holding {dataset}/{filenames[0]}"
    )
