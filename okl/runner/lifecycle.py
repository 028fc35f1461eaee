"""The life of a run: claim its directory, decide whether to skip, resume or start it, play it under
signal handling, record its status, then run its post-run analyses.

A run stops at ``n`` rounds, at the end of the stream, when the learner's cumulative time exceeds
``timeout_s`` (checked after each block, so a run may exceed it by one block), on Ctrl-C or SIGTERM,
or on an error; in every case the rounds finished so far are written and ``run.json`` records the
status (``complete``, ``timeout``, ``interrupted``, ``failed``). The run is complete once its rounds
are written; its analyses (:mod:`okl.analyses`) follow and can be interrupted without undoing it.

Resuming: closed parts come with a snapshot of the learner and the play's position
(:class:`okl.store.RoundWriter`: every part while snapshots are cheap; otherwise once the time since the
last one is twenty times what it cost, so snapshots take about 5% of the time and a kill replays no more).
Running the same command again continues a run that was killed (``running`` with its process gone),
``interrupted``, ``failed`` (a full disk; a run whose own numbers failed fails again where it did), or timed out
under a smaller budget than asked now, from its last snapshot; the
rounds are bit-identical to an uninterrupted run's (timings aside). It
starts over instead when the code, ``block``, ``checkpoints`` or the content of the dataset's files
changed since (``data_sha256`` in run.json), when the snapshot cannot be read or is not the one run.json
records, for adaptive environments (their choices are not snapshot) and with ``sink.overwrite=true``.
BLAS runs on one thread (threadpoolctl) unless ``OKL_BLAS_THREADS`` says otherwise.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from tqdm import tqdm

from okl import analyses
from okl.analyses import heldout
from okl.config import Plan
from okl.errors import DataError, Interrupted, OklError, ResourceError
from okl.runner.play import Position, Stop, Timeout, play, prepare
from okl.store import Manifest, RoundWriter, RunDir
from okl.system import (
    blas,
    blas_limited,
    git_state,
    older_objects_frozen,
    peak_rss,
    reset_peak_rss,
    signals_deferred,
    source_digest,
    tune_allocator,
    versions,
)

# "running": we hold the lock, so its process is gone; "failed": a disk that was full, say (a run that failed by its own
# numbers fails again where it did, from its snapshot); a run on a full disk started over, its saved rounds cleared
RESUMABLE = ("running", "interrupted", "timeout", "failed")


@dataclass
class Outcome:
    """What a run did: its status, rounds, average loss and where its files are."""

    status: str
    rounds: int
    average_loss: float | None
    run: RunDir
    learner_s: float = 0.0
    error: str | None = None
    skipped: bool = False
    signum: int = signal.SIGINT  # the signal that interrupted the run
    resumed_from: int | None = None  # the round a resumed run started after
    started_over: str | None = None  # why a stopped run was played again from round 1 (none saved, or not usable)
    unfinished: str | None = None  # the post-run analysis a signal stopped (the run itself is saved)
    regret: dict | None = None  # the manifest's regret entry, when a comparator scored the run
    kept: str | None = None  # a run kept as it was: the setting outside its identity it was played with otherwise

    @property
    def played(self) -> str:
        """The rounds the run holds, in words: "1 round", "2,000 rounds"."""
        return f"{self.rounds:,} round{'s' * (self.rounds != 1)}"

    def failure(self) -> str:
        """A failed run's one line: its error, and where the rounds it played before it are saved."""
        return f"{self.error} ({self.played} saved in {self.run.path})"

    def summary(self, plan: Plan) -> str:
        what = f"{plan.learner.name} on {plan.dataset.name} (seed {plan.run.seed})"
        if self.skipped and self.status == "running":
            return f"{what}: skipped, {self.error} in {self.run.path}"
        regret = "" if self.regret is None else f", regret {self.regret['regret']:.6g} ({self.regret['comparator']})"
        if self.skipped:
            redo = f"{self.kept}: sink.overwrite=true plays it again" if self.kept else "sink.overwrite=true to redo it"
            return f"{what}: already {self.status}{regret} in {self.run.path} ({redo}){self._unfinished()}"
        loss = "n/a" if self.average_loss is None else f"{self.average_loss:.6g}"
        resumed = "" if self.resumed_from is None else f" (resumed from round {self.resumed_from:,})"
        if self.started_over:
            resumed = f" (started over: {self.started_over})"
        return (
            f"{what}: {self.status}{resumed}, {self.played} in {self.learner_s:.2f} s, "
            f"average {plan.loss[0]} loss {loss}{regret} -> {self.run.rounds_path}{self._unfinished()}"
        )

    def _unfinished(self) -> str:
        return (
            "" if self.unfinished is None else f"; {self.unfinished}: interrupted, run the command again to compute it"
        )


def execute(plan: Plan, progress: bool, observe: Callable[[int, float], None] | None = None) -> Outcome:
    """Run ``plan`` to completion (or timeout / interruption / failure), then its analyses; return its outcome.
    ``observe(t, average loss)`` is called after each block; raising :class:`~okl.runner.play.Stop` ends the run
    there with status ``pruned`` (its rounds kept; a tuning study's pruner, :mod:`okl.tune`)."""
    run = plan.run_dir()
    if not finished(plan):
        plan.dataset.open()  # files obtained and checked (a one-line error) before anything is written
    try:
        with run.claim() as owner:
            if owner is not None:
                return Outcome("running", 0, None, run, skipped=True, error=f"{owner} is running it")
            previous = run.manifest()
            if previous and _done(previous, plan) and not plan.sink.overwrite:
                outcome = Outcome(previous.status, previous.rounds, previous.average_loss, run, skipped=True)
                was, kept = previous.config.get("checkpoints"), []
                if was != plan.run.checkpoints and run.scored:  # its held-out scores
                    kept.append(f"checkpoints={was}, not {plan.run.checkpoints}")
                if previous.block is not None and previous.block != plan.run.block:  # outside the id: its timings
                    block = f"block={previous.block}, not {plan.run.block}"
                    kept.append(f"{block} (numbers equal to roundoff, timings not)")
                budget = plan.run.timeout_s
                if budget is not None and previous.timeout_s != budget:  # outside the id: the budget asked was ignored
                    was = "no time budget" if previous.timeout_s is None else f"timeout_s={previous.timeout_s:g}"
                    kept.append(f"{was}, not timeout_s={budget:g} ({previous.learner_s:.3g} s of learner time)")
                outcome.kept = f"played with {'; '.join(kept)}" if kept else None
                learner = _final_learner(run, previous, plan)
            else:
                outcome, learner = _played(plan, run, previous, progress, observe), plan.learner
            if outcome.status in ("complete", "timeout") and outcome.rounds and plan.run.analyses:
                try:
                    with blas_limited(), _sigterm_as_interrupt():  # (its regret column: the rounds' threads)
                        manifest = analyses.run_pending(plan, run, learner, progress)
                except KeyboardInterrupt as exc:
                    outcome.unfinished = getattr(exc, "analysis", "an analysis")
                    outcome.signum = getattr(exc, "signum", signal.SIGINT)
                    return outcome
                outcome.regret = manifest.analyses.get("regret") if plan.comparator is not None else None
                if outcome.status == "complete" and manifest.snapshot:  # nothing left to resume or analyse
                    run.drop_snapshots()
                    manifest.snapshot = None
                    run.write_manifest(manifest)
            return outcome
    except OSError as exc:  # a results root that is a file, read-only, on a full disk
        raise ResourceError(unwritable(exc, run)) from None


def unwritable(exc: OSError, run: RunDir) -> str:
    where = exc.filename or run.path
    return (
        f"cannot write {where}: {exc.strerror or exc}; set OKL_RESULTS (or sink.root) to a writable folder "
        f"with free space"
    )


def finished(plan: Plan) -> bool:
    """The run of ``plan`` is done: :func:`execute` would not play it again (complete, or timed out under at
    least the budget asked for now, and ``sink.overwrite`` not set)."""
    previous = plan.run_dir().manifest()
    return bool(previous) and _done(previous, plan) and not plan.sink.overwrite


def _done(previous: Manifest, plan: Plan) -> bool:
    """A run is not redone if it completed, or timed out under at least the budget asked for now."""
    if previous.status == "complete":
        return True
    if previous.status != "timeout" or plan.run.timeout_s is None or previous.timeout_s is None:
        return False
    return previous.timeout_s >= plan.run.timeout_s


def _code(attempt: dict[str, Any]) -> dict[str, Any]:
    """What the code that wrote a snapshot must equal for it to be resumed (from an attempt's versions and
    git state, read once per run: ``git`` takes about 16 ms), and the digest of okl's sources (uncommitted edits
    included: :func:`~okl.system.source_digest`)."""
    return {
        "okl": attempt["versions"]["okl"],
        "commit": (attempt["git"] or {}).get("commit"),
        "source": source_digest(),
    }


def _resumable(
    plan: Plan, run: RunDir, previous: Manifest | None, code: dict[str, Any], data: str | None
) -> tuple[dict | None, str | None]:
    """The snapshot to resume ``previous`` from (or None to start over), and why a stopped run with a
    snapshot starts over (None when it resumes or has nothing to resume). ``data``: the content sha256 of
    the dataset's files now, which must be the stopped run's."""
    if previous is None or previous.status not in RESUMABLE:
        return None, None
    if plan.dataset.adaptive:  # (it was told that its first snapshot comes with its first part)
        return None, "an adaptive environment's run keeps no snapshot (it chooses each round from the learner's play)"
    if not previous.snapshot:  # it started over without a word
        return None, "the stopped run had saved no snapshot yet (the first comes with its first part of rounds)"
    if plan.sink.overwrite:
        return None, "sink.overwrite=true"
    if previous.block != plan.run.block:
        return None, f"block={plan.run.block}, the stopped run used {previous.block}"
    if previous.config.get("checkpoints") != plan.run.checkpoints:
        return None, f"checkpoints={plan.run.checkpoints}, the stopped run used {previous.config.get('checkpoints')}"
    if changed := previous.other_data(data, "the stopped run"):
        return None, changed
    broken = run.broken_part(previous, previous.snapshot["parts"], previous.snapshot["rounds"])
    if broken:
        return None, broken
    try:
        state = run.read_snapshot(previous.snapshot)
    except DataError as exc:  # not the snapshot run.json names: never unpickled
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 (unreadable, or its classes changed: start over)
        return None, f"its snapshot could not be read ({type(exc).__name__})"
    if state.get("code") != code:
        return None, f"its snapshot was written by other code ({state.get('code')}, now {code})"
    return state, None


def _final_learner(run: RunDir, manifest: Manifest, plan: Plan):
    """The learner as a finished run left it (its last snapshot) for analyses still to be done; the
    configured (untrained) learner when there is none."""
    if manifest.snapshot and any(a.needs_learner for a in analyses.pending(plan, manifest)):
        try:
            return run.read_snapshot(manifest.snapshot)["learner"]
        except Exception:  # noqa: BLE001 (unreadable: the analyses that need it say so)
            pass
    return plan.learner


def _played(plan: Plan, run: RunDir, previous: Manifest | None, progress: bool, observe=None) -> Outcome:
    tune_allocator()
    plan.warm_up()  # compiled code loaded outside the run's clock and its peak
    reset_peak_rss()  # the run's own peak, whatever the process did before (a worker plays many runs)
    writer = RoundWriter(run, plan.sink.part_rows, plan.sink.part_seconds)
    attempt = {
        "timeout_s": plan.run.timeout_s,
        "argv": sys.argv,
        "versions": versions(),
        "git": git_state(),
        "started_at": _now(),
    }
    code = _code(attempt)
    data = plan.dataset.content_sha256
    state, started_over = _resumable(plan, run, previous, code, data)
    if state is not None:
        plan.learner, position = state["learner"], state["position"]
        writer.resume(previous, attempt)
    else:
        position = Position(checkpoints=heldout.checkpoints(plan))
        writer.start(
            **plan.partition,
            task=plan.dataset.task,
            dataset_files=plan.dataset.provenance,
            data_sha256=data,
            loss=plan.loss[0],
            planned_rounds=plan.rounds,
            block=plan.run.block,
            config=plan.config,
            identity=plan.identity,
            started_over=started_over,
            **attempt,
        )
    # a resumed run's wall time and peak memory are those of its attempts up to the snapshot it resumed from and of
    # this one, as its learner time (a resumed run's wall_s was its last attempt's, below its learner_s)
    before = (state or {}).get("cost", {"wall_s": 0.0, "peak_rss_bytes": 0})
    wall = time.perf_counter()

    def cost() -> dict[str, float]:
        spent = before["wall_s"] + time.perf_counter() - wall
        return {"wall_s": spent, "peak_rss_bytes": max(before["peak_rss_bytes"], peak_rss())}

    snapshot = (
        None
        if plan.dataset.adaptive
        else lambda: {"learner": plan.learner, "position": position, "code": code, "cost": cost()}
    )
    status, error, signum = "complete", None, signal.SIGINT
    bar = tqdm(
        total=plan.rounds, initial=position.t, unit="round", unit_scale=True, disable=not progress, file=sys.stderr
    )
    try:
        # numpy's warnings of a diverging learner (an overflowing norm) came before the one line of its failure
        with blas_limited(), _sigterm_as_interrupt(), older_objects_frozen(), np.errstate(all="ignore"):
            writer.manifest.blas_threads = max((p["num_threads"] for p in blas().info()), default=None)
            if state is None:
                prepare(plan, position)
            try:
                play(plan, writer, position, bar, snapshot, observe)
            except Timeout:
                status = "timeout"
            except Stop:  # its observer ended it (a pruned trial): the rounds played are kept
                status = "pruned"
    except KeyboardInterrupt as exc:
        status, signum = "interrupted", getattr(exc, "signum", signal.SIGINT)
    except OklError as exc:
        status, error = "failed", str(exc)
    except OSError as exc:  # a part could not be written (a full disk): the rounds before it are kept
        status, error = "failed", unwritable(exc, run)
    except Exception as exc:
        status, error = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        bar.close()
        fields = {"error": error, **cost(), "finished_at": _now()}
        if plan.dataset.adaptive:
            fields["environment_s"] = position.environment_ns / 1e9
        # the learner as the rows written leave it, for a larger timeout_s or the analyses that read it; a complete
        # run without them drops its snapshots at once (kernel_awv on 6,000 rounds wrote 288 MB in 1.1 s to delete
        # them)
        final = snapshot if status == "timeout" or (status == "complete" and analyses.keep_learner(plan)) else None
        with signals_deferred():
            try:
                try:
                    writer.finish(final, status=status, **fields, report=plan.learner.report())
                except KeyboardInterrupt:  # tripped just before the mask: finish again, it is idempotent
                    status = "interrupted" if status == "complete" else status
                    writer.finish(None, status=status, **fields, report=plan.learner.report())
            except OSError as exc:  # the last rows could not be written (a full disk): say so in run.json
                status, error = "failed", unwritable(exc, run)
                writer.abandon(status=status, **{**fields, "error": error})
            except Exception as exc:  # a defect of ours: run.json says failed, not running, and the error is raised
                writer.abandon(status="failed", **{**fields, "error": f"{type(exc).__name__}: {exc}"})
                raise
    m = writer.manifest
    return Outcome(
        status,
        m.rounds,
        m.average_loss,
        run,
        m.learner_s,
        error,
        signum=signum,
        resumed_from=previous.snapshot["rounds"] if state is not None else None,
        started_over=started_over,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM (e.g. a scheduler ending the job) like Ctrl-C; the exit status says which it was."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["Outcome", "execute"]
