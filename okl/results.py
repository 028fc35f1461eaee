"""Read runs back, at sweep scale: one row per run from the manifests, summaries over seeds, and rounds read
with column and row push-down.

>>> from okl import results
>>> runs = results.runs()                                   # one row per run (no round is read)
>>> table = results.summary()                               # mean ± std over seeds, per learner × dataset × setting
>>> rounds = results.load(learner="fogd", columns=["t", "loss"], where=results.field("t") > 1000)

Partition keys (``learner``, ``dataset``, ``seed``, ``run``) come from the hive-style directory names, so they
are columns of the result without being stored in the files. A run's settings are columns named after their
config keys (``learner.sigma``, ``dataset.preset``): the run's identity, what its run id hashes.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from okl.errors import ConfigError, DataError
from okl.store import FINISHED, PARTITION, Manifest, RegretEntry, RunDir, find, unreadable

field = ds.field  # row filters for load(where=...): field("t") > 1000, field("loss") < 1
GROUPS = ("learner", "dataset")  # the identity's groups, whose keys become the columns <group>.<key>
METRICS = ("average_loss", "learner_s")  # what summary() averages by default
DDOF = 1  # every "± std" okl prints (okl-results, REPRODUCTION.md) is the sample standard deviation over runs


def mean_std(values: Sequence[float | None]) -> tuple[float, float] | None:
    """(mean, sample std with :data:`DDOF`) of the values present (None and NaN left out); the std is NaN for
    one value; None when there is none. The one definition of "mean ± std" of okl's tables."""
    present = pd.Series([v for v in values if v is not None], dtype=float).dropna()
    return None if present.empty else (float(present.mean()), float(present.std(ddof=DDOF)))


def default_root() -> Path:
    """The results root: ``$OKL_RESULTS`` or ``results``."""
    return Path(os.environ.get("OKL_RESULTS", "results"))


def _run_dirs(root: Path, **keys: object) -> list[RunDir]:
    if not root.is_dir():
        raise ConfigError(
            f"no results root at {str(root)!r}: pass the folder okl-run wrote to (OKL_RESULTS, default results/)"
        )
    return find(root, **keys)


class SkippedRun(UserWarning):
    """A run directory left out of a reading because its manifest cannot be read."""


class LeftOut(UserWarning):
    """Runs that match a reading's filters but not its ``status`` (by default, the unfinished ones)."""


def _wanted(status: str | Sequence[str] | None) -> tuple[str, ...] | None:
    return (status,) if isinstance(status, str) else None if status is None else tuple(status)


def _manifests_with(found: list[tuple[RunDir, Manifest]], status: str | Sequence[str] | None) -> list:
    """The runs of ``found`` whose status is ``status`` (or one of them); all of them for None."""
    wanted = _wanted(status)
    return [(d, m) for d, m in found if wanted is None or m.status in wanted]


def _manifests(root: Path, status: str | Sequence[str] | None, **keys: object) -> list[tuple[RunDir, Manifest]]:
    """The run directories matching ``keys`` with their manifests (each read once), keeping the runs whose
    status is ``status`` (or one of them) when given. A run whose manifest is damaged is left out with a
    :class:`SkippedRun` warning naming it."""
    found = []
    for run_dir in _run_dirs(root, **keys):
        manifest = run_dir.manifest()
        if manifest is None:
            if run_dir.manifest_damaged():
                warnings.warn(
                    f"{run_dir.path}: its run.json is not a readable manifest, so the run is left out: "
                    f"re-run it (okl-run plays it again), or remove the directory",
                    SkippedRun,
                    stacklevel=3,
                )
            continue
        manifest.status = run_dir.status(manifest)  # "stopped": its process is gone; re-running resumes it
        found.append((run_dir, manifest))
    return _manifests_with(found, status)


def load(
    root: str | Path | None = None,
    *,
    learner: str | None = None,
    dataset: str | None = None,
    seed: int | None = None,
    run: str | None = None,
    status: str | Sequence[str] | None = FINISHED,
    columns: list[str] | None = None,
    where: ds.Expression | None = None,
) -> pd.DataFrame:
    """Rounds of the runs under ``root`` matching the filters, with the partition keys as columns.

    ``status`` keeps runs whose manifest has that status (or one of those): by default the finished runs
    (``results.FINISHED``: complete, or stopped by their ``timeout_s``), the runs :func:`summary` counts, since the
    rows carry no status and a killed or interrupted run's are a prefix of its rounds (they were mixed in, and an
    average over them counted a half-played run as a whole one); ``status=None`` reads every run's rounds.
    ``columns`` reads only those columns and ``where`` only the rows it accepts (a pyarrow expression on the
    columns, pushed down to the Parquet reader: ``field("t") > 1000``).
    """
    root = Path(root) if root is not None else default_root()
    matching = _manifests(root, None, learner=learner, dataset=dataset, seed=seed, run=run)
    kept = _manifests_with(matching, status)
    if matching and not kept:  # an empty frame would not say why
        statuses = ", ".join(sorted({m.status for _, m in matching}))
        warnings.warn(
            f"{len(matching)} run(s) match, none {'/'.join(_wanted(status))} ({statuses}): "
            f"results.load(..., status=None) reads their rounds",
            LeftOut,
            stacklevel=2,
        )
    files, firsts = [], []
    for run_dir, manifest in kept:
        parts = run_dir.parts(manifest)
        files.extend(parts)
        firsts.extend(parts[:1])
    if not files:
        return pd.DataFrame(columns=[*PARTITION.names, *(columns or [])])
    wanted = None if columns is None else [*PARTITION.names, *columns]
    try:
        # every run's columns (a run's parts share them): the first file's alone dropped raker's weight_p, the
        # Nyström learners' dictionary_size, POLK's risk..., and asking for one failed; a run without one has nulls
        schemas = [pq.read_schema(f) for f in firsts]
        schema = pa.unify_schemas([*schemas, PARTITION], promote_options="permissive")
        if unknown := [c for c in columns or () if c not in schema.names]:  # it was pyarrow's schema dump
            raise ConfigError(f"no column {unknown[0]!r} in the rounds; they have: {', '.join(schema.names)}")
        data = ds.dataset(
            [str(f) for f in files],
            schema=schema,
            format="parquet",
            partitioning=ds.partitioning(PARTITION, flavor="hive"),
            partition_base_dir=str(root),
        )
        return data.to_table(columns=wanted, filter=where).to_pandas()
    except (OSError, pa.ArrowInvalid) as exc:  # a part cut short or damaged: name it
        for path in files:
            try:
                pq.read_metadata(path)
            except (OSError, pa.ArrowInvalid) as broken:
                raise DataError(unreadable(path, broken)) from None
        raise DataError(f"{root}: cannot read its rounds ({exc})") from None


def runs(root: str | Path | None = None, *, status: str | Sequence[str] | None = None, **filters) -> pd.DataFrame:
    """One row per run, from its manifest alone: partition keys, status, rounds, ``average_loss``, timings
    (``learner_s``, ``wall_s``, ``us_per_round``), ``peak_rss_mb``, ``model_size``, the run's settings as
    ``learner.<key>`` and ``dataset.<key>`` columns, and the rest of the manifest. A run whose manifest says
    ``running`` but whose process is gone (SIGKILL, out of memory) is listed as ``stopped``."""
    root = Path(root) if root is not None else default_root()
    rows = [_row(run_dir, manifest) for run_dir, manifest in _manifests(root, status, **filters)]
    return pd.DataFrame(rows)


def _row(run_dir: RunDir, manifest: Manifest) -> dict:
    """The run's row: its manifest and the numbers derived from it, defined here once (REPRODUCTION.md and
    okl-bench read them from these rows too)."""
    rounds, learner_s = manifest.rounds, manifest.learner_s
    derived = {
        **_analyses(manifest),
        "path": str(run_dir.path),
        "us_per_round": 1e6 * learner_s / rounds if rounds and learner_s is not None else None,
        "peak_rss_mb": manifest.peak_rss_bytes / 2**20 if manifest.peak_rss_bytes else None,
        "model_size": manifest.report.get("model_size"),
    }
    return {**manifest.to_json(), **derived, **_settings(manifest)}


def _analyses(manifest: Manifest) -> dict[str, object]:
    """Each post-run analysis's number as a column of its name: ``regret`` (its entry's ``regret``) and
    ``effective_dimension`` (its entry's ``value``); and ``regret.comparator``, what the regret was scored against
    (``krr(lam=1.0, sigma=1.0)``), by which :func:`summary` tells regrets apart."""
    numbers: dict[str, object] = {}
    for key, entry in manifest.analyses.items():
        value = entry.get(key, entry.get("value"))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            numbers[key] = value
    regret = manifest.analyses.get("regret")
    if regret and "comparator" in regret:
        numbers["regret.comparator"] = RegretEntry.comparator_of(regret)
    return numbers


def _settings(manifest: Manifest) -> dict[str, object]:
    """The run's identity as columns ``<group>.<key>`` (lists and mappings as JSON text, so they can be grouped);
    runs written before the manifest held its identity give their resolved config."""
    identity = manifest.identity or manifest.config
    return {
        f"{group}.{key}": json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value
        for group in GROUPS
        for key, value in (identity.get(group) or {}).items()
        if key != "name"
    }


def varying(table: pd.DataFrame, metrics: Sequence[str] = ()) -> list[str]:
    """The settings that tell apart the runs of a sweep beyond their seeds: a ``dataset.*`` setting that takes
    more than one value among the runs on one dataset, a ``learner.*`` one among the runs of one learner on one
    dataset, and ``planned_rounds`` (seeds and the settings named ``*.seed`` aside). A null (``eta=null``: the
    learner's default rule) is a value of its own: runs at ``eta=null`` and ``eta=0.1`` are never averaged. With
    ``regret`` among ``metrics``, the comparator too (``regret.comparator``): a regret against KRR at λ = 1 and one
    against the oracle at λ = 0.001 were averaged."""
    if table.empty:
        return []
    found = []
    for group, within in (("dataset", ["dataset"]), ("learner", list(GROUPS))):
        columns = [c for c in table.columns if c.startswith(f"{group}.") and not c.endswith(".seed")]
        counts = table.groupby(within, dropna=False)[columns].nunique(dropna=False)  # null is a setting too
        found += [c for c in columns if (counts[c] > 1).any()]
    scored = "regret" in metrics and "regret.comparator" in table
    others = ["planned_rounds", *(["regret.comparator"] if scored else [])]
    counts = table.groupby(list(GROUPS), dropna=False)[others].nunique(dropna=False)
    return found + [c for c in others if (counts[c] > 1).any()]


COUNTS = ("runs", "seeds", "stopped", "rounds_min", "rounds_max")  # summary's columns between its groups and metrics


def summary(
    root: str | Path | None = None,
    *,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] = METRICS,
    status: str | Sequence[str] | None = FINISHED,
    **filters,
) -> pd.DataFrame:
    """Mean and standard deviation of ``metrics`` over the runs of each group, from the manifests alone.

    ``by`` names the grouping columns of :func:`runs` (default: learner, dataset and the :func:`varying`
    settings, so that the runs of a group differ by their seed only). Columns: the groups, ``runs``, ``seeds``,
    ``stopped`` (runs stopped at their time budget, ``timeout_s``) with ``rounds_min`` and ``rounds_max`` (the rounds
    the runs played: a stopped run played fewer than planned, and its mean is over those) and, for each metric m,
    ``m`` (mean) and ``m_std`` (sample standard deviation; NaN for one run). Only finished runs (complete, or
    stopped at their time budget) count, unless ``status`` says otherwise.
    """
    table = runs(root, status=status, **filters)
    if isinstance(by, str):  # by="learner": one column, not its letters
        by = [by]
    by = list(dict.fromkeys(by)) if by is not None else [*GROUPS, *varying(table, metrics)]  # a key twice: once
    if table.empty:
        return pd.DataFrame(columns=[*by, *COUNTS, *(f"{m}{s}" for m in metrics for s in ("", "_std"))])
    missing = [c for c in by if c not in table.columns]
    if missing:
        known = ", ".join(sorted(c for c in table.columns if not isinstance(table[c].iloc[0], (dict, list))))
        raise ConfigError(f"no column {missing[0]!r} in the runs; choose among: {known}")
    numeric = sorted(c for c in table.columns if pd.api.types.is_numeric_dtype(table[c]) and not c.endswith("seed"))
    wrong = [m for m in metrics if m not in numeric]
    if wrong and wrong[0] in table.columns and table[wrong[0]].isna().all():  # killed before its first part
        raise ConfigError(f"metric {wrong[0]!r} has no value in the {len(table)} runs matched: none has rounds saved")
    if wrong[:1] == ["regret"]:
        raise ConfigError(
            "no run matched was scored against a comparator: `okl-regret RUN_DIR` scores a run, or okl-run "
            "comparator=krr plays one scored"
        )
    if wrong:
        what = "not a number" if wrong[0] in table.columns else "not a column"
        raise ConfigError(f"metric {wrong[0]!r} is {what} in the runs; choose a numeric one: {', '.join(numeric)}")
    if shared := [c for c in by if c in metrics]:  # it would be a group's key and its mean (pandas: "already exists")
        raise ConfigError(f"{shared[0]!r} is a metric here; group by settings (learner, dataset, ...), not by a metric")
    if "dataset" in table.columns and "dataset" not in by:  # a cell of fogd's 0-1 errors and square losses: 3.19 ± 5.6
        mixed = table.groupby(by, dropna=False)["dataset"].unique()
        if (many := next((list(d) for d in mixed if len(d) > 1), None)) is not None:
            raise ConfigError(
                f"a group holds runs on {len(many)} datasets ({', '.join(map(str, many[:4]))}), whose losses do not "
                "average: add dataset to the grouping (--by ... dataset), or choose one (--dataset NAME)"
            )
    grouped = table.groupby(by, dropna=False, sort=True)
    out = grouped.agg(
        runs=("run", "size"),
        seeds=("seed", "nunique"),
        stopped=("status", lambda status: int((status == "timeout").sum())),
        rounds_min=("rounds", "min"),
        rounds_max=("rounds", "max"),
    )
    for metric in metrics:
        values = grouped[metric]
        out[metric], out[f"{metric}_std"] = values.mean(), values.std(ddof=DDOF)
    return out.reset_index()


def heldout(
    root: str | Path | None = None, *, status: str | Sequence[str] | None = FINISHED, **filters
) -> pd.DataFrame | None:
    """The held-out scores (``t``, ``test_loss``, ``model_size``, ``seconds``) of the runs matching the
    filters, with the partition keys as columns; None when none of them was scored on a held-out set. ``status`` as
    :func:`load`'s: the finished runs by default."""
    root = Path(root) if root is not None else default_root()
    frames = []
    for run_dir, _ in _manifests(root, status, **filters):
        scores = run_dir.heldout()
        if scores is not None:
            keys = {**run_dir.partition, "seed": int(run_dir.partition["seed"])}  # int64 as in runs() and load()
            frames.append(scores.to_pandas().assign(**keys))
    return pd.concat(frames, ignore_index=True) if frames else None
