"""Runs for other tools: one runs table beside the rounds, and MLflow (``okl-results export``).

- :func:`write_runs_table`: ``<root>/runs.parquet`` (or ``.csv``), one row per finished run: its partition keys,
  settings (``learner.<key>``, ``dataset.<key>``) and metrics, the columns of :func:`okl.results.runs` (nested
  values as JSON text), so that DuckDB, polars or pandas join it to the rounds (``<root>/learner=*/...``) on
  ``run``.
- :func:`to_mlflow`: each finished run as an MLflow run (the ``mlflow`` extra: ``pip install 'okl[mlflow]'``)
  in an experiment named ``okl``: its settings as params, its final metrics, its average loss after each
  round as a metric history of at most ``HISTORY`` steps, tagged ``okl.run_id``, and with ``figures`` (the
  folder okl-reproduce draws into) the figure of each drawn artefact the run belongs to; a run exported before is
  skipped, so exporting again adds only the new runs. The default store is ``sqlite:///<root>/mlflow.db``
  (MLflow's file store is deprecated); ``mlflow ui --backend-store-uri sqlite:///<root>/mlflow.db`` shows it.

Example::

    >>> import okl.tracking  # doctest: +SKIP
    >>> okl.tracking.write_runs_table("results")  # doctest: +SKIP
    PosixPath('results/runs.parquet')
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from okl import results
from okl.errors import OklError
from okl.store.files import write_atomic

HISTORY = 1000  # steps of a run's loss curve in MLflow, evenly spaced over its rounds
METRICS = ("average_loss", "learner_s", "wall_s", "us_per_round", "peak_rss_mb", "model_size", "regret")
EXPERIMENT = "okl"
TAG = "okl.run_id"


def runs_table(root: str | Path | None = None) -> pd.DataFrame:
    """The finished runs under ``root``, one row each, nested values as JSON text (a flat, typed table)."""
    table = results.runs(root, status=results.FINISHED)
    for column in table.columns:
        if table[column].map(lambda v: isinstance(v, dict | list)).any():
            table[column] = table[column].map(lambda v: v if v is None or v != v else json.dumps(v, sort_keys=True))
    return table


def write_runs_table(root: str | Path | None = None, fmt: str = "parquet") -> Path:
    """Write :func:`runs_table` as ``<root>/runs.<fmt>`` (parquet or csv); returns its path."""
    root = Path(root) if root is not None else results.default_root()
    table = runs_table(root)
    if table.empty:
        raise OklError(f"no finished run under {str(root)!r}: nothing to export")
    path = root / f"runs.{fmt}"
    frame = table if fmt == "csv" else _one_type_per_column(table)
    save = frame.to_csv if fmt == "csv" else frame.to_parquet
    try:  # a read-only or full results root gave pyarrow's traceback (and could leave half a table)
        write_atomic(path, lambda tmp: save(tmp, index=False))
    except OSError as exc:
        raise OklError(
            f"cannot write {path}: {exc.strerror or exc}; export from a results root you can write "
            "to (--root), or free some space"
        ) from None
    return path


def _one_type_per_column(table: pd.DataFrame) -> pd.DataFrame:
    """A setting whose runs hold values of different types (``dataset.target=4`` for a .npy file beside
    ``dataset.target=y`` for a CSV file) as text, which Parquet's typed columns can hold; nulls stay null."""
    out = table.copy()
    for column in [c for c in out.columns if out[c].dtype.kind == "O"]:
        kinds = {_kind(v) for v in out[column] if not _null(v)}
        if len(kinds) > 1:
            out[column] = [None if _null(v) else str(v) for v in out[column]]
    return out


def _kind(v) -> object:
    """Integers and floats are one kind (Parquet holds them as doubles: sigma=1 beside sigma=1.5 stays numeric)."""
    return "number" if isinstance(v, int | float | np.number) and not isinstance(v, bool) else type(v)


def _null(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


def default_uri(root: Path) -> str:
    return f"sqlite:///{root.resolve() / 'mlflow.db'}"


def to_mlflow(
    root: str | Path | None = None, uri: str | None = None, figures: Path | None = None
) -> tuple[int, int, int]:
    """Log each finished run not yet in the MLflow store ``uri``; returns (logged, already there, figures attached).
    A run an earlier export left unfinished (stopped while logging it) is deleted there and logged again."""
    try:
        from mlflow import MlflowClient
        from mlflow.entities import Metric, Param
    except ImportError:
        raise OklError("the MLflow export needs the mlflow extra: pip install 'okl[mlflow]'") from None
    drawn = _figures(figures) if figures is not None else {}  # before anything is logged: a wrong folder is refused
    root = Path(root) if root is not None else results.default_root()
    table = results.runs(root, status=results.FINISHED)
    if table.empty:
        raise OklError(f"no finished run under {str(root)!r}: nothing to export")
    client = MlflowClient(uri or default_uri(root))
    found = client.get_experiment_by_name(EXPERIMENT)
    experiment = (
        found.experiment_id
        if found
        else client.create_experiment(EXPERIMENT, artifact_location=(root.resolve() / "mlartifacts").as_uri())
    )
    there = set()
    for found_run in client.search_runs([experiment], max_results=50_000):
        if TAG not in found_run.data.tags:
            continue
        if found_run.info.status == "FINISHED":
            there.add(found_run.data.tags[TAG])
        else:  # an export stopped inside it (Ctrl-C): half logged, and it was "already there" to every later export
            client.delete_run(found_run.info.run_id)
    logged = attached = 0
    for row in table.to_dict("records"):
        if row["run"] in there:
            continue
        run = client.create_run(
            experiment,
            run_name=f"{row['learner']} on {row['dataset']}, seed {row['seed']}",
            tags={TAG: row["run"], "okl.path": row["path"], "okl.status": row["status"]},
        )
        params = [Param(k, str(v)) for k, v in row.items() if k.startswith(("learner.", "dataset.")) and v == v]
        params += [Param("seed", str(row["seed"])), Param("rounds", str(row["rounds"]))]
        finals = [Metric(k, float(row[k]), 0, 0) for k in METRICS if row.get(k) is not None and row[k] == row[k]]
        for start in range(0, len(params), 100):  # MLflow takes at most 100 params per batch
            client.log_batch(run.info.run_id, params=params[start : start + 100])
        curve = _curve(root, row["run"])
        for start in range(0, len(finals) + len(curve), 1000):
            client.log_batch(run.info.run_id, metrics=[*finals, *curve][start : start + 1000])
        if row["run"] in drawn:
            client.log_artifact(run.info.run_id, str(drawn[row["run"]]))
            attached += 1
        client.set_terminated(run.info.run_id)
        logged += 1
    return logged, len(table) - logged, attached


def _figures(folder: Path) -> dict[str, Path]:
    """Run id -> the figure of an artefact it belongs to, for the artefacts drawn in ``folder`` (<name>.png): the runs
    it was drawn from, as its summary beside it (<name>.json) names them (a --smoke figure: the smoke runs, which the
    preset's ids missed), else the runs of its preset. A folder that does not exist, or holds no artefact's figure,
    is an error (the export said nothing, and attached nothing)."""
    from okl.reproduce import catalog, sweep

    if not folder.is_dir():
        raise OklError(f"--figures {folder}: no such folder (okl-reproduce draws its figures into figures/)")
    out: dict[str, Path] = {}
    for artefact in catalog.all_artefacts():
        png, summary = folder / f"{artefact.name}.png", folder / f"{artefact.name}.json"
        if png.is_file():
            drawn = json.loads(summary.read_text()).get("run_ids") if summary.is_file() else None
            for run_id in drawn or (run.plan.run_id for run in sweep.expand(artefact.name, [])):
                out.setdefault(run_id, png)
    if not out:
        raise OklError(f"--figures {folder}: no artefact's figure (<artefact>.png, okl-reproduce --list) is there")
    return out


def _curve(root: Path, run: str) -> list:
    """The run's average loss after round t, at most ``HISTORY`` rounds evenly spaced (the last included)."""
    from mlflow.entities import Metric

    rounds = results.load(root, run=run, columns=["t", "cum_loss"]).sort_values("t")
    t, cum = rounds["t"].to_numpy(), rounds["cum_loss"].to_numpy()
    keep = np.unique(np.linspace(0, len(t) - 1, min(HISTORY, len(t))).round().astype(int))
    return [Metric("loss_curve", float(cum[i] / t[i]), 0, int(t[i])) for i in keep]
