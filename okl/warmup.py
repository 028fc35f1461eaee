"""Compiled code loaded before a run's clock starts, and not while a run is only planned.

A learner calls its numba functions once at construction on tiny arrays with the layouts of a run (:func:`warm`),
so that compiling them, or loading them from numba's cache, is not timed inside its first rounds. Planning also
constructs every learner (:func:`okl.config.plan` validates the run and names it), and on a machine whose numba
cache is empty that compilation took ``okl-reproduce pros_n_kons_table1``'s plan of 260 runs 17 s (measured;
it compiles the PROS-N-KONS family's loops) where it needs none. Within :func:`deferred`, warm-ups are collected
instead of called; the runner calls them before round 1 (:meth:`okl.config.Plan.warm_up`). A warm-up only
compiles: it never changes the state of the object it was made for, so calling it later gives the same run.

>>> calls = []
>>> with deferred() as pending:
...     warm(calls.append, "compiled")
>>> calls, len(pending)
([], 1)
>>> run_all(pending); calls
['compiled']
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

_PENDING: contextvars.ContextVar[list | None] = contextvars.ContextVar("okl_warm_ups", default=None)


def warm(fn: Callable[..., Any], *args: Any) -> None:
    """Call ``fn(*args)`` to compile it now, or, within :func:`deferred`, keep the call for later."""
    pending = _PENDING.get()
    if pending is None:
        fn(*args)
    else:
        pending.append((fn, args))


@contextlib.contextmanager
def deferred() -> Iterator[list[tuple[Callable[..., Any], tuple]]]:
    """Collect the warm-ups made inside the block into the list it yields (:func:`run_all` calls them)."""
    pending: list[tuple[Callable[..., Any], tuple]] = []
    token = _PENDING.set(pending)
    try:
        yield pending
    finally:
        _PENDING.reset(token)


def run_all(pending: list[tuple[Callable[..., Any], tuple]]) -> None:
    """Call the warm-ups :func:`deferred` collected, in order, once."""
    while pending:
        fn, args = pending.pop(0)
        fn(*args)
