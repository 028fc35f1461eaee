"""Regret scoring: fill a run's Parquet column ``regret`` against a comparator, caching the comparator.

The comparator depends on the stream only, so its per-round losses are cached per stream
(:class:`okl.store.Cache` ``comparators``), the key a sha256 of the rounds' inputs and labels (bytes) and
the comparator's name and parameters: every learner run on the same stream (or replayed on the same
adversarial sequence) reuses it, whatever dataset config produced it.

regret_t = cum_loss_t − Σ_{s<=t} ℓ_s fills the column, and the manifest gets a ``regret`` entry:
comparator, parameters, rounds, final regret, comparator loss, λ||f||², seconds and whether the
comparator came from the cache. The inputs come from the run's recorded columns ``x_*`` (adaptive
environments), from the caller, or from the run's dataset config, checked against the recorded labels.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from okl.analyses.base import Analysis
from okl.config import Plan
from okl.datasets import DATASETS
from okl.errors import ConfigError, DataError, ResourceError
from okl.learners import Learner
from okl.registry import identity
from okl.regret.base import Comparator
from okl.store import FINISHED, Cache, Manifest, RegretEntry, RunDir, digest
from okl.system import blas_limited

KEY = "regret"


class Regret(Analysis):
    """The run's regret against the plan's comparator (``comparator=``)."""

    key = KEY

    def wanted(self, plan: Plan) -> bool:
        return plan.comparator is not None

    def current(self, entry: dict[str, Any] | None, plan: Plan, rounds: int) -> bool:
        return matches(entry, plan.comparator, rounds)

    def describe(self, plan: Plan, rounds: int) -> str:
        return f"regret against {plan.comparator.name} on {rounds:,} rounds"

    def compute(self, plan: Plan, run: RunDir, learner: Learner, rounds: int) -> dict[str, Any]:
        X = None if plan.dataset.adaptive else plan.inputs(rounds)
        try:
            return entry(run, plan.comparator, X)
        except (ConfigError, DataError) as exc:
            raise type(exc)(f"regret not computed: {exc} (the run is saved in {run.path})") from None


def score_run(run: RunDir, comparator: Comparator) -> dict[str, Any]:
    """Fill ``regret`` in ``run`` and record the manifest's entry; return it (``okl-regret``). The run's lock is held
    meanwhile, as its runner holds it: an okl-run resuming the run (a timed-out run given a larger ``timeout_s``) or
    computing its post-run analyses rewrote its parts and manifest under the scoring (pyarrow's traceback, and a run
    left with a regret column in its first parts only and no regret entry)."""
    if run.manifest() is None:
        raise ConfigError(no_run(run))
    try:
        with run.claim() as owner:
            if owner is not None:
                raise DataError(
                    f"run {str(run.path)!r} is held by {owner}, which plays, analyses or scores it: score it "
                    f"once that process has finished"
                )
            with blas_limited():  # as okl-run scores it (the column's bits depend on BLAS's threads)
                result = entry(run, comparator)
            run.record(**{KEY: result})
            return result
    except OSError as exc:  # a results root this user cannot write (the column and run.json are written in place),
        # or a file it reads (the run's parts, its dataset's)
        where = Path(exc.filename) if exc.filename else run.path
        if where.resolve().is_relative_to(run.path.resolve()):
            raise ResourceError(
                f"{where}: {exc.strerror or exc}; okl-regret reads the run's parts and writes the regret column into "
                f"them and run.json, in place: score a copy of the run that you can write"
            ) from None
        raise ResourceError(f"cannot read {where}: {exc.strerror or exc}") from None


def no_run(run: RunDir) -> str:
    return f"no run at {str(run.path)!r}: give a run directory (one holding run.json)"


def entry(run: RunDir, comparator: Comparator, X: np.ndarray | None = None) -> dict[str, Any]:
    """Fill the column ``regret`` of ``run``; return the manifest entry (not recorded). ``X``: the inputs of
    the rounds played (else recorded or rebuilt)."""
    manifest = run.manifest()
    if manifest is None:
        raise ConfigError(no_run(run))
    if manifest.task != "regression":
        raise ConfigError(
            f"comparator {comparator.name!r} scores the square loss of regression streams; "
            f"run {str(run.path)!r} is {manifest.task}"
        )
    status = "stopped" if manifest.status == "running" else manifest.status  # its caller holds the run's lock
    if status not in FINISHED:
        raise DataError(
            f"run {str(run.path)!r} is {status}, not finished: run its okl-run command again to finish it, then "
            f"score it"
        )
    n = manifest.rounds
    if n == 0:
        raise DataError(f"run {str(run.path)!r} has no rounds to score")
    table = run.rounds(["y", "cum_loss"])
    y, cum_loss = table["y"].to_numpy(), table["cum_loss"].to_numpy()
    X = _inputs(run, manifest, n, y) if X is None else X[:n]

    t0 = time.perf_counter()
    ell, penalty, cached = _cached_losses(comparator, X, y, Cache(run.root, "comparators"))
    regret = cum_loss - np.cumsum(ell)
    run.set_column("regret", regret)
    return RegretEntry(
        comparator.name,
        identity(comparator.params),
        rounds=n,
        regret=float(regret[-1]),
        comparator_loss=float(ell.sum()),
        penalty=penalty,
        cached=cached,
        seconds=time.perf_counter() - t0,
    ).to_json()


def matches(entry: dict | None, comparator: Comparator, rounds: int) -> bool:
    """Whether a manifest's ``regret`` entry is this comparator's on ``rounds`` rounds."""
    want = {"comparator": comparator.name, **identity(comparator.params), "rounds": rounds}
    return entry is not None and all(entry.get(k) == v for k, v in want.items())


def _inputs(run: RunDir, manifest: Manifest, n: int, y: np.ndarray) -> np.ndarray:
    """The run's inputs: recorded, or replayed from its dataset config and checked against the content its files
    had (the run's data sha256: an edited file's inputs with the same labels were scored silently) and its labels."""
    recorded = run.inputs()
    if recorded is not None:
        return recorded[0]
    node = dict(manifest.config["dataset"])
    dataset = DATASETS.get(node.pop("name"))(**node)
    changed = manifest.data_sha256 and manifest.other_data(dataset.content_sha256, f"run {str(run.path)!r}")
    if changed:  # (a run from before data_sha256 was recorded: its labels are checked below)
        raise DataError(f"{changed}: rerun it (sink.overwrite=true) before scoring")
    chunks = list(dataset.head(n)) or [(np.zeros((0, dataset.d)), np.zeros(0))]
    X = np.concatenate([Xc for Xc, _ in chunks]).astype(np.float64)
    y_again = np.concatenate([yc for _, yc in chunks]).astype(np.float64)
    if len(y_again) != n or not np.array_equal(y_again, y):
        raise DataError(
            f"the dataset of run {str(run.path)!r} no longer gives the labels it recorded: "
            f"rerun it (sink.overwrite=true) before scoring"
        )
    return X


def _cached_losses(
    comparator: Comparator, X: np.ndarray, y: np.ndarray, cache: Cache
) -> tuple[np.ndarray, float, bool]:
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    key = digest(X.tobytes(), y.tobytes(), {"name": comparator.name, **identity(comparator.params)})
    saved = cache.get_arrays(key)
    if saved is not None:
        return saved["losses"], float(saved["penalty"]), True
    ell, penalty = comparator.losses(X, y)
    cache.put_arrays(key, losses=ell, penalty=np.float64(penalty))
    return ell, penalty, False
