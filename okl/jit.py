"""okl's compiled functions: ``numba.njit`` with numba's on-disk cache, invalidated by a change to any of okl's sources.

numba keys a cached function by the modification time and size of its own file only, and a function that calls
compiled code of another file keeps, inlined, the callee it was compiled with: after an edit or a ``git pull``
that changes ``okl/kernels.py`` alone, KOMP's loop (``okl/dictionary/komp.py``) went on running the old kernel
row from its cache (measured while changing the kernel row), silently. Here every function of okl's is cached
where numba would cache it, under one stamp of every okl file that holds compiled code (:func:`package_stamp`),
so that a change to any of them compiles all of okl's compiled code again, once (about 40 s). Functions outside
okl keep numba's own locators.

>>> import numpy as np
>>> from okl.kernels import squared_distance  # an okl function, compiled by :func:`njit`
>>> squared_distance(np.zeros(2), np.ones(2))
2.0
>>> isinstance(squared_distance._cache._impl._locator, LOCATORS), "kernels.py" in [f for f, *_ in package_stamp()]
(True, True)
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numba
from numba.core import caching

ROOT = Path(__file__).resolve().parent


@functools.cache
def package_stamp(root: Path = ROOT) -> tuple:
    """What changes when a file under ``root`` that holds compiled code (it imports this module) changes: (relative
    path, modification time in ns, size) of each, in path order. Other files (the report, the CLI) do not count:
    an edit there compiles nothing again."""
    found = []
    for path in sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts):
        if "from okl.jit import" in path.read_text(encoding="utf-8"):
            stat = path.stat()
            found.append((str(path.relative_to(root)), stat.st_mtime_ns, stat.st_size))
    return tuple(found)


class _PackageStamped:
    """A numba cache locator for okl's files only, stamped by the whole package (numba's index drops an entry
    whose stamp differs from the current one)."""

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        if not Path(py_file).resolve().is_relative_to(ROOT):
            return None
        return super().from_function(py_func, py_file)

    def get_source_stamp(self) -> tuple:
        return package_stamp()


# the same places as numba's own choice: a user-provided folder, else beside the source, else the user's cache
LOCATORS = tuple(
    type(f"Okl{base.__name__}", (_PackageStamped, base), {})
    for base in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)
)
if not any(issubclass(c, _PackageStamped) for c in caching.CacheImpl._locator_classes):
    caching.CacheImpl._locator_classes[:0] = LOCATORS


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with ``cache=True`` (as a bare decorator or with numba's arguments)."""
    return numba.njit(*args, cache=True, **kwargs)
