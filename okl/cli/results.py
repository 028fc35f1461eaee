"""``okl-results``: compare the finished runs of a results root in one table.

One table, learner × dataset, of the mean ± std over seeds and the learner time, read from the runs' manifests
only.

Examples::

    okl-results                                   # every finished run under $OKL_RESULTS (default results/)
    okl-results --dataset casp --by learner dataset learner.lam
    okl-results --metric wall_s --root /scratch/results
    okl-results export                            # <root>/runs.parquet: one row per run (DuckDB, polars, pandas)
    okl-results export --format csv --mlflow      # <root>/runs.csv, and every run into MLflow (<root>/mlflow.db)

Each row is a learner (and each setting that differs between its runs beyond the seed, such as a swept
``learner.lam``); each column a dataset; each cell the metric's mean ± standard deviation over the row's runs,
the mean learner time, and the number of seeds when there are several. Exit status 2 on bad arguments or
when no finished run matches.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from okl.cli import command

PROG = "okl-results"


@command
def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["export"]:
        export(argv[1:])
        return
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__.splitlines()[0].split(": ", 1)[1],
        epilog=f"{PROG} export [--format csv] [--mlflow [URI]]: the finished runs as one table beside the rounds, and "
        f"into MLflow ({PROG} export --help)",
    )
    parser.add_argument("--root", type=Path, help="the results root (default: $OKL_RESULTS, else results/)")
    parser.add_argument("--learner", help="only this learner")
    parser.add_argument("--dataset", help="only this dataset")
    parser.add_argument("--by", nargs="+", metavar="KEY", help="group by these columns of okl.results.runs()")
    parser.add_argument("--metric", default="average_loss", help="the column summarised (default: average_loss)")
    parser.add_argument("--all", action="store_true", help="count every run, not only the finished ones")
    args = parser.parse_args(argv)

    from okl import results
    from okl.errors import OklError

    try:
        with _skipped_runs_said():
            table = results.summary(
                args.root,
                by=args.by,
                metrics=list(dict.fromkeys([args.metric, "learner_s"])),
                status=None if args.all else results.FINISHED,
                learner=args.learner,
                dataset=args.dataset,
            )
            if table.empty:
                raise OklError(_nothing(args.root or results.default_root(), args))
    except OklError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    print(markdown(table, args.metric))


def _nothing(where: Path, args: argparse.Namespace) -> str:
    """Why no run matched: a --learner or --dataset that names none of the runs there (with those it could name),
    no run at all, or none finished (then --all counts the others)."""
    from okl import results

    every = results.runs(where, status=None)
    for key in ("learner", "dataset"):
        wanted = getattr(args, key)
        if wanted is not None and not every.empty and wanted not in set(every[key]):
            return f"no run of {key} {wanted!r} under {str(where)!r}; its {key}s: {', '.join(sorted(set(every[key])))}"
    if every.empty:
        return f"no run under {str(where)!r}: okl-run writes its runs there (sink.root=, or OKL_RESULTS)"
    both = args.learner is not None and args.dataset is not None
    if both and every[(every.learner == args.learner) & (every.dataset == args.dataset)].empty:  # whatever the status
        learners = sorted(set(every.learner[every.dataset == args.dataset]))
        return (
            f"no run under {str(where)!r} is of learner {args.learner!r} on dataset {args.dataset!r} (on "
            f"{args.dataset}: {', '.join(learners)})"
        )
    return f"no finished run under {str(where)!r} matches; pass --all to count the unfinished ones too"


def export(argv: list[str]) -> None:
    """``okl-results export``: the runs table beside the rounds, and the runs into MLflow (okl.tracking)."""
    parser = argparse.ArgumentParser(prog=f"{PROG} export", description="write the finished runs as one table")
    parser.add_argument("--root", type=Path, help="the results root (default: $OKL_RESULTS, else results/)")
    parser.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="the table's format")
    parser.add_argument(
        "--mlflow",
        nargs="?",
        const="",
        metavar="URI",
        help="also log each run into MLflow (default store: <root>/mlflow.db)",
    )
    parser.add_argument("--figures", type=Path, help="with --mlflow: attach each drawn artefact's figure (figures/)")
    args = parser.parse_args(argv)
    if args.figures is not None and args.mlflow is None:  # it was ignored
        parser.error("--figures attaches each artefact's figure to its runs in MLflow: add --mlflow")

    from okl import tracking
    from okl.errors import OklError

    try:
        with _skipped_runs_said():
            print(f"runs table: {tracking.write_runs_table(args.root, args.format)}")
            if args.mlflow is not None:
                logged, there, attached = tracking.to_mlflow(args.root, args.mlflow or None, args.figures)
                drawn = "" if args.figures is None else f", {attached} of them with their artefact's figure"
                print(f"MLflow: {logged} runs logged, {there} already there{drawn}")
    except OklError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)


@contextlib.contextmanager
def _skipped_runs_said() -> Iterator[None]:
    """Each run the results could not read (okl.results.SkippedRun) said in one line, not as Python's warning with
    its source line; any other warning shown as Python shows it."""
    from okl import results

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", results.SkippedRun)
            yield
    finally:  # outside the recording: showwarning is its recorder inside
        for warning in caught:
            if issubclass(warning.category, results.SkippedRun):
                print(f"{PROG}: warning: {warning.message}", file=sys.stderr)
            else:
                warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)


def markdown(table: pd.DataFrame, metric: str) -> str:
    """The summary as a Markdown table: a row per learner and learner setting, a column per dataset and
    dataset setting (its length, its rounds)."""
    groups = list(table.columns[: table.columns.get_loc("runs")])  # summary() puts its groups first
    columns = [c for c in groups if c == "dataset" or c.startswith("dataset.") or c == "planned_rounds"]
    rows = [c for c in groups if c not in columns]
    cells = table.assign(cell=[_cell(r, metric) for r in table.to_dict("records")])
    if not rows:  # --by dataset alone: one row, the datasets its columns
        rows, cells["runs of"] = ["runs of"], "every learner"
    cells[rows] = cells[rows].map(_text)
    cells["column"] = [_column(r, columns) for r in cells.to_dict("records")] if columns else metric
    wide = cells.pivot(index=rows, columns="column", values="cell").reset_index().fillna("—")
    header = [str(c) for c in wide.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(str, record)) + " |" for record in wide.itertuples(index=False)]
    head = f"{metric}: mean ± std over the runs · learner time (seeds; runs too where a seed has several)"
    return f"{head}\n\n" + "\n".join(lines)


def _column(row: dict, columns: list[str]) -> str:
    """A dataset's column: its name, and its settings that vary, as ``casp [length=5000, rounds=1000]`` (the
    settings alone where ``dataset`` is not among the columns)."""
    settings = [
        f"{c.removeprefix('dataset.').replace('planned_', '')}={_text(row[c])[: 12 if c.endswith('sha256') else None]}"
        for c in columns
        if c != "dataset"
    ]  # a file's content hash by its first 12 digits (64 made every column of two files' runs unreadable)
    if "dataset" not in row:
        return ", ".join(settings)
    settings = [s for s in settings if not s.endswith("=—")]
    return row["dataset"] + (f" [{', '.join(settings)}]" if settings else "")


def _cell(row: dict, metric: str) -> str:
    mean, std = row[metric], row[f"{metric}_std"]
    text = "—" if math.isnan(mean) else f"{mean:.4g}" + ("" if std is None or math.isnan(std) else f" ± {std:.2g}")
    text += f" · {row['learner_s']:.3g} s"
    runs, seeds, stopped = row["runs"], row["seeds"], row["stopped"]
    if runs != seeds:  # runs a seed does not tell apart (a learner.seed sweep, --by leaving a setting out)
        text += f" ({runs} runs, {seeds} seed{'s' * (seeds != 1)})"
    elif seeds > 1:
        text += f" ({seeds})"
    if stopped:  # fewer rounds than its column says: the mean is over the rounds each run played
        low, high = (f"{int(row[k]):,}" for k in ("rounds_min", "rounds_max"))
        played = low if low == high else f"{low}–{high}"
        text += f" [{stopped} of {runs} stopped by timeout_s; {played} rounds played]"
    return text


def _text(value: object) -> str:
    """A setting as a cell: — when the run has no such setting, integers without their .0."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):  # every digit it has: two settings that agree to 6 digits are two rows
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)
