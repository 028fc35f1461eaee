"""The protocol of a post-run analysis, and how one runs.

An analysis reads a finished run (complete or timed out) and records one entry in its manifest under
``key``: the run is complete as soon as its rounds are written, and an analysis never holds it hostage.
Each one runs in a child process while the parent shows its progress, so Ctrl-C (or SIGTERM) stops it at
once, frees its memory and leaves the run complete; running the command again computes what is missing
(a run already complete is not played again). What depends on the stream only is cached per stream
(:class:`okl.store.Cache`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from tqdm import tqdm

from okl.config import Plan
from okl.learners import Learner
from okl.store import RunDir
from okl.system import die_with_parent


class Analysis(ABC):
    """One post-run analysis: whether a run wants it, whether its recorded entry is current, and how to
    compute the entry."""

    key: ClassVar[str]  # the manifest entry it writes
    needs_learner: ClassVar[bool] = False  # whether compute reads the learner as the run left it (its last snapshot)

    @abstractmethod
    def wanted(self, plan: Plan) -> bool:
        """Whether runs of this plan get this analysis."""

    @abstractmethod
    def current(self, entry: dict[str, Any] | None, plan: Plan, rounds: int) -> bool:
        """Whether a recorded entry is this analysis's result on ``rounds`` rounds."""

    @abstractmethod
    def describe(self, plan: Plan, rounds: int) -> str:
        """What it is about to compute (shown while it runs)."""

    @abstractmethod
    def compute(self, plan: Plan, run: RunDir, learner: Learner, rounds: int) -> dict[str, Any]:
        """The entry, from the first ``rounds`` rounds and, when ``needs_learner``, the learner as the run left it
        (otherwise the configured one). Runs in a child process: it may write the run's files, not its manifest."""


def in_child(work: Callable[[], Any], label: str, progress: bool) -> Any:
    """``work()`` in a forked child process; shows ``label`` and the elapsed time while it runs. Ctrl-C kills
    the child at once (and raises KeyboardInterrupt here); an error in the child is raised here."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_serve, args=(send, work, os.getpid()), daemon=True)
    bar = tqdm(desc=label, bar_format="{desc}: {elapsed}", disable=not progress, file=sys.stderr)
    child.start()
    send.close()
    try:
        while not receive.poll(0.2):
            if not child.is_alive() and not receive.poll(0):
                raise RuntimeError(f"{label}: the analysis process died (exit status {child.exitcode})")
            bar.refresh()
        ok, value = receive.recv()
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        bar.close()
    if not ok:
        raise value
    return value


def _serve(send, work: Callable[[], Any], parent: int) -> None:
    die_with_parent(parent)  # a parent killed by SIGKILL cannot stop it
    for signum in (signal.SIGINT, signal.SIGTERM):  # the parent stops the child (Ctrl-C reaches both)
        signal.signal(signum, signal.SIG_IGN)
    try:
        result = (True, work())
    except Exception as exc:  # noqa: BLE001 (handed to the parent, which raises it)
        result = (False, exc)
    try:
        send.send(result)
    except Exception as exc:  # noqa: BLE001 (an exception that does not pickle)
        send.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
