"""Helpers shared by the tests: small streams, the two ways of playing rounds, and okl-run in a child process."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from okl.learners.base import Learner
from okl.store import find


def stream(n: int, d: int, seed: int = 0, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """A small smooth regression stream with inputs in [0, scale]^d."""
    g = np.random.default_rng(seed)
    X = scale * g.random((n, d))
    y = np.sin(3 * X).sum(axis=1) / d + 0.1 * g.standard_normal(n)
    return X, y


def show(learner, X: np.ndarray, y: np.ndarray) -> None:
    """What the runner does for a ``beforehand`` learner: show it the stream before round 1 (once)."""
    if learner.beforehand and not getattr(learner, "_shown", False):
        learner.prepare(X, y if learner.beforehand == "stream" else None)
        learner.prepared()
        learner._shown = True


def play_loop(learner, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The per-round protocol (predict x_t, then reveal y_t): the base class's loop, never overridden."""
    show(learner, X, y)
    return Learner.predict_learn_block(learner, X, y)


def play_blocks(learner, X: np.ndarray, y: np.ndarray, sizes) -> np.ndarray:
    """Blocks of the given sizes (cycled) until the stream ends."""
    show(learner, X, y)
    out, start, i = [], 0, 0
    while start < len(y):
        stop = min(start + sizes[i % len(sizes)], len(y))
        out.append(learner.predict_learn_block(X[start:stop], y[start:stop]))
        start, i = stop, i + 1
    return np.concatenate(out)


def relative_gap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def write_susy(data_dir: Path, monkeypatch, n: int = 300, seed: int = 0, rows: np.ndarray | None = None) -> np.ndarray:
    """A SUSY.csv.gz in the UCI format (no header; label then 18 floats, %.18e) under data_dir/susy:
    ``rows`` (label first), else n random rows; the catalog expects its rows (:func:`expect_rows`)."""
    if rows is None:
        rng = np.random.default_rng(seed)
        rows = np.column_stack([rng.integers(0, 2, n).astype(float), rng.standard_normal((n, 18))])
    (data_dir / "susy").mkdir(parents=True, exist_ok=True)
    with gzip.open(data_dir / "susy" / "SUSY.csv.gz", "wt") as fh:
        fh.writelines(",".join(f"{v:.18e}" for v in row) + "\n" for row in rows)
    expect_rows(monkeypatch, "susy", len(rows))
    return rows


def expect_rows(monkeypatch, name: str, rows: int) -> None:
    """Make the catalog entry of dataset ``name`` (one part) expect ``rows`` rows, for a small stand-in of its
    file (the catalog's rows plan the run; a file that holds other rows is refused when the run opens it)."""
    from dataclasses import replace

    from okl.data.catalog import SPECS
    from okl.datasets import DATASETS

    spec = SPECS[name]
    (part,) = spec.parts
    small = replace(spec, parts=(replace(part, rows=rows),))
    monkeypatch.setitem(SPECS, name, small)
    monkeypatch.setattr(DATASETS.get(name), "spec", small)


def only_run(root, **keys):
    """The one run (:class:`okl.store.RunDir`) under a results root whose partition keys match ``keys``."""
    (run,) = find(root, **keys)
    return run


def spawn_run(root, *overrides):
    """okl-run in a child process (results under ``root``), which a test can signal or kill."""
    env = {**os.environ, "OKL_RESULTS": str(root)}
    return subprocess.Popen(
        [sys.executable, "-c", "from okl.cli.run import main; main()", *overrides, "progress=false"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


KILLED = 137  # the exit status of a process killed with SIGKILL


def killed_after_first_part(root, *overrides, parts=1) -> int:
    """okl-run in a forked child (results under ``root``) that dies like a SIGKILLed process (no cleanup, its
    lock left behind) as soon as a snapshot after ``parts`` parts is written; returns the child's exit status."""
    from okl.cli import run as cli
    from okl.store import RoundWriter

    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        close = RoundWriter.close_part

        def close_then_die(self, *args, **kwargs):
            close(self, *args, **kwargs)
            if (self.manifest.snapshot or {}).get("parts", 0) >= parts:
                os._exit(KILLED)

        RoundWriter.close_part = close_then_die
        os.environ["OKL_RESULTS"] = str(root)
        sys.argv = ["okl-run", *overrides, "progress=false"]
        try:
            cli.main()
        finally:
            os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def override(value) -> str:
    """A Hydra override's value for a plain Python value (lists, tuples, dicts, strings, numbers)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{override(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(override(v) for v in value) + "]"
    if isinstance(value, str):
        return f"'{value}'"
    return repr(value)


def wait_for_parts(root, count, proc, limit=60):
    """Wait until the only run under ``root`` has closed ``count`` parts (while ``proc`` is alive)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        m = [run.manifest() for run in find(root)]
        if m and m[0] and len(m[0].parts) >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError("no parts written in time")


# Python source for a new process (nothing of okl's lazily compiled code loaded yet): ``compiled`` lists the numba
# functions compiled or loaded from numba's cache (both go through Dispatcher._compile_for_args) while
# ``counting(True)`` is in force.
COUNTING = """
from numba.core import dispatcher
compiled = []
compile_for_args = dispatcher.Dispatcher._compile_for_args
def counted(self, *args, **kwargs):
    compiled.append(self.py_func.__qualname__)
    return compile_for_args(self, *args, **kwargs)
def counting(on):
    dispatcher.Dispatcher._compile_for_args = counted if on else compile_for_args
"""
