"""Results at sweep scale: one row per run from the manifests alone, summaries over seeds grouped by the
settings a sweep varies, rounds read with column and row push-down, and the okl-results table."""

import json

import numpy as np
import pyarrow.dataset
import pyarrow.parquet
import pytest
from conftest import call

from okl import results
from okl.cli import results as results_cli
from okl.store import RunDir, find

SWEEP = ("-m", "learner=pkrr_taylor,fogd", "lam=1,0.1", "seed=0,1,2", "n=300")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """12 runs: pkrr_taylor at two λ and fogd (whose lam does not follow the top-level one) at three seeds."""
    root = tmp_path_factory.mktemp("sweep")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("OKL_RESULTS", str(root))
    monkeypatch.setattr("sys.argv", ["okl-run", *SWEEP])
    from okl.cli import run

    try:
        run.main()
    except SystemExit as exc:
        assert exc.code in (0, None)
    finally:
        monkeypatch.undo()
    return root


def test_runs_have_a_row_per_run_with_its_settings_and_timings(sweep):
    table = results.runs(sweep)
    assert len(table) == 9  # fogd's three seeds are the same runs for both λ
    assert set(table.loc[table.learner == "pkrr_taylor", "learner.lam"]) == {1.0, 0.1}
    np.testing.assert_allclose(table.us_per_round, 1e6 * table.learner_s / table.rounds)
    assert (table.peak_rss_mb > 10).all() and (table.model_size > 0).all()


def test_summary_is_the_mean_and_std_over_seeds_of_each_setting(sweep):
    table = results.runs(sweep)
    summary = results.summary(sweep)
    assert list(summary.columns[:3]) == ["learner", "dataset", "learner.lam"]  # the seeds' keys are not groups
    assert len(summary) == 3 and (summary.seeds == 3).all()
    for row in summary.to_dict("records"):
        same = table[(table.learner == row["learner"]) & (table["learner.lam"] == row["learner.lam"])]
        assert row["average_loss"] == pytest.approx(same.average_loss.mean())
        assert row["average_loss_std"] == pytest.approx(np.std(same.average_loss, ddof=1))
        assert row["learner_s"] == pytest.approx(same.learner_s.mean())
    by_learner = results.summary(sweep, by=["learner"], metrics=["wall_s"])
    assert list(by_learner.columns) == ["learner", *results.COUNTS, "wall_s", "wall_s_std"]
    assert (summary.stopped == 0).all() and (summary.rounds_min == summary.rounds_max).all()
    assert by_learner.set_index("learner").runs.to_dict() == {"fogd": 3, "pkrr_taylor": 6}


def test_runs_stopped_by_their_time_budget_are_counted_with_the_rounds_they_played(okl_run, results_root, capsys):
    """Three kernel_awv runs with timeout_s=0.3 stopped at 768, 512 and 1,024 of 20,000 rounds: okl-results showed
    "0.01504 ± 0.0024 · 0.341 s (3)" under the 20,000 planned rounds, a mean over runs of other lengths, unmarked."""
    for seed in (0, 1, 2):
        assert okl_run("learner=fogd", "n=300", f"seed={seed}", "progress=false")[0] == 0
    later = sorted(find(results_root), key=lambda r: r.partition["seed"])[1:]
    for run_dir, rounds in zip(later, (120, 200), strict=True):
        manifest = json.loads((run_dir.path / "run.json").read_text())  # as a run stopped by its budget leaves it
        (run_dir.path / "run.json").write_text(json.dumps({**manifest, "status": "timeout", "rounds": rounds}))
    (row,) = results.summary(results_root).to_dict("records")
    assert (row["runs"], row["stopped"], row["rounds_min"], row["rounds_max"]) == (3, 2, 120, 300)
    code, out, _ = call(lambda: results_cli.main([]), capsys)
    assert code == 0 and " (3) [2 of 3 stopped by timeout_s; 120–300 rounds played] |" in out


def test_a_null_setting_is_a_setting_of_its_own_never_averaged_with_a_set_one(okl_run, results_root):
    """fogd at eta=null (1/√n) and at eta=0.1, seed 0 both: they showed as one row "0.1341 ± 0.0095"."""
    for eta in ("null", "0.1"):
        assert okl_run("learner=fogd", f"learner.eta={eta}", "n=300", "progress=false")[0] == 0
    summary = results.summary(results_root)
    assert "learner.eta" in summary.columns and len(summary) == 2 and (summary.runs == 1).all()
    assert summary["learner.eta"].isna().sum() == 1 and summary.average_loss_std.isna().all()


def test_okl_results_tables_that_were_tracebacks(okl_run, results_root, capsys):
    """Two λ that agree to 6 digits were one label, and the pivot failed ("Index contains duplicate entries"); --by
    with dataset keys alone left no row key (IndexError), and --by learner planned_rounds labelled every column ""."""
    assert okl_run("-m", "learner=pkrr_taylor", "lam=0.12345671,0.12345674", "n=100", "progress=false")[0] == 0
    code, out, _ = call(lambda: results_cli.main([]), capsys)
    assert code == 0 and "| pkrr_taylor | 0.12345671 |" in out and "| pkrr_taylor | 0.12345674 |" in out
    code, out, _ = call(lambda: results_cli.main(["--by", "dataset"]), capsys)
    assert code == 0 and out.splitlines()[2] == "| runs of | synthetic |"
    assert out.splitlines()[4].startswith("| every learner | ") and out.splitlines()[4].endswith(
        " s (2 runs, 1 seed) |"
    )
    code, out, _ = call(lambda: results_cli.main(["--by", "learner", "planned_rounds"]), capsys)
    assert code == 0 and out.splitlines()[2] == "| learner | rounds=100 |"


def test_okl_results_says_skipped_runs_in_one_line_and_passes_other_warnings_on(capsys):
    """A warning of another kind met while the runs are read is shown once, as Python shows it (re-shown inside the
    recording, it was recorded again, without end)."""
    import warnings

    from okl.results import SkippedRun

    with pytest.warns(DeprecationWarning, match="^a library's$") as shown, results_cli._skipped_runs_said():
        warnings.warn("run 7: unreadable", SkippedRun, stacklevel=1)
        warnings.warn("a library's", DeprecationWarning, stacklevel=1)
    assert len(shown) == 1
    assert capsys.readouterr().err == "okl-results: warning: run 7: unreadable\n"


def test_summaries_read_no_rounds(sweep, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a round file was read")

    monkeypatch.setattr(pyarrow.parquet, "read_table", refuse)
    monkeypatch.setattr(pyarrow.dataset, "dataset", refuse)
    assert len(results.summary(sweep)) == 3


def test_each_manifest_is_read_once(sweep, monkeypatch):
    reads = []
    manifest = RunDir.manifest
    monkeypatch.setattr(RunDir, "manifest", lambda self: reads.append(self.path) or manifest(self))
    results.load(sweep, status="complete", columns=["t"])
    assert len(reads) == len(set(reads)) == 9


def test_load_pushes_columns_and_row_filters_down(sweep):
    everything = results.load(sweep, learner="fogd")
    late = results.load(sweep, learner="fogd", columns=["t", "loss"], where=results.field("t") > 250)
    assert list(late.columns) == ["learner", "dataset", "seed", "run", "t", "loss"]
    assert len(late) == 3 * 50 and (late.t > 250).all()
    expected = everything[everything.t > 250].sort_values(["seed", "t"]).loss.to_numpy()
    np.testing.assert_array_equal(late.sort_values(["seed", "t"]).loss.to_numpy(), expected)


def test_okl_results_prints_the_comparison_table(sweep, capsys, monkeypatch):
    monkeypatch.setenv("OKL_RESULTS", str(sweep))
    code, out, _ = call(lambda: results_cli.main([]), capsys)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[2] == "| learner | learner.lam | synthetic |"
    summary = results.summary(sweep)
    for row in summary.to_dict("records"):
        mean, std = row["average_loss"], row["average_loss_std"]
        cell = f"{mean:.4g} ± {std:.2g} · {row['learner_s']:.3g} s (3)"
        lam = f"{row['learner.lam']:g}"
        assert f"| {row['learner']} | {lam} | {cell} |" in lines
    code, out, _ = call(lambda: results_cli.main(["--by", "learner", "dataset", "--learner", "fogd"]), capsys)
    (fogd,) = results.summary(sweep, learner="fogd").to_dict("records")
    cell = f"{fogd['average_loss']:.4g} ± {fogd['average_loss_std']:.2g} · {fogd['learner_s']:.3g} s (3)"
    assert code == 0 and out.strip().splitlines()[2:] == ["| learner | synthetic |", "|---|---|", f"| fogd | {cell} |"]


def test_a_cell_of_more_runs_than_seeds_says_how_many_of_each(sweep, capsys, monkeypatch):
    """--by leaving out the swept learner.lam puts each seed's runs at every λ in one cell: it read "(3)", as if 3 seeds
    made the mean ± std."""
    monkeypatch.setenv("OKL_RESULTS", str(sweep))
    code, out, _ = call(lambda: results_cli.main(["--by", "learner", "dataset"]), capsys)
    table = results.summary(sweep, by=["learner", "dataset"]).to_dict("records")
    mixed = [row for row in table if row["runs"] != row["seeds"]]
    assert code == 0 and mixed
    for row in mixed:
        assert f"s ({row['runs']} runs, {row['seeds']} seeds) |" in out.split(f"| {row['learner']} |")[1].split("\n")[0]


def test_okl_results_summarises_another_metric_for_one_dataset(sweep, capsys, monkeypatch):
    monkeypatch.setenv("OKL_RESULTS", str(sweep))
    code, out, _ = call(lambda: results_cli.main(["--metric", "wall_s", "--dataset", "synthetic"]), capsys)
    assert code == 0 and out.startswith("wall_s: mean ± std over the runs")
    (fogd,) = results.summary(sweep, learner="fogd", metrics=["wall_s", "learner_s"]).to_dict("records")
    assert f"| fogd | 0 | {fogd['wall_s']:.4g} ± {fogd['wall_s_std']:.2g} · {fogd['learner_s']:.3g} s (3) |" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--by", "colour"], "no column 'colour' in the runs; choose among: "),
        (["--learner", "nope"], "no run of learner 'nope' under "),  # was "... or pass --all", with or without --all
        (["--dataset", "synthtic", "--all"], "no run of dataset 'synthtic' under "),
        (["--by", "average_loss"], "'average_loss' is a metric here; group by settings"),  # was a traceback
        (["--by", "learner", "learner_s"], "'learner_s' is a metric here; group by settings"),
        (["--root", "/nonexistent/okl"], "no results root at '/nonexistent/okl'"),
    ],
)
def test_okl_results_errors_are_one_line(sweep, capsys, monkeypatch, argv, message):
    monkeypatch.setenv("OKL_RESULTS", str(sweep))
    code, out, err = call(lambda: results_cli.main(argv), capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"okl-results: error: {message}") and err.count("\n") == 1


def test_a_learner_and_a_dataset_never_run_together_are_named_with_the_learners_of_that_dataset(
    okl_run, results_root, capsys
):
    """Both exist, never together: the message said "no finished run matches; pass --all", and with --all only that
    nothing matched both."""
    assert okl_run("learner=fogd", "n=100", "progress=false")[0] == 0
    assert okl_run("learner=polk", "dataset=multidist", "n=100", "progress=false")[0] == 0
    for extra in ([], ["--all"]):
        code, _, err = call(
            lambda extra=extra: results_cli.main(["--learner", "fogd", "--dataset", "multidist", *extra]), capsys
        )
        assert code == 2 and err.count("\n") == 1
        assert err.startswith("okl-results: error: no run under ") and err.endswith(
            " is of learner 'fogd' on dataset 'multidist' (on multidist: polk)\n"
        )


def test_a_grouping_that_would_average_runs_of_several_datasets_is_refused(okl_run, results_root, capsys):
    """--by learner averaged fogd's losses on different datasets into one cell (0-1 errors with square losses: "3.191 ±
    5.6 (5 runs, 1 seed)"); grouping by dataset too, or choosing one, is fine."""
    assert okl_run("learner=fogd", "n=100", "progress=false")[0] == 0
    assert okl_run("learner=fogd", "dataset=alternating", "n=100", "progress=false")[0] == 0
    code, out, err = call(lambda: results_cli.main(["--by", "learner"]), capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("okl-results: error: a group holds runs on 2 datasets (") and "--by ... dataset" in err
    assert len(results.summary(by=["learner", "dataset"])) == 2
    assert len(results.summary(by=["learner"], dataset="alternating")) == 1


def test_a_key_named_twice_or_as_a_string_groups_once(sweep):
    """okl-results --by learner learner printed a traceback ("cannot insert learner, already exists"), and
    summary(by="learner") grouped by the columns 'l', 'e', ..."""
    once = results.summary(sweep, by=["learner"])
    assert results.summary(sweep, by=["learner", "learner"]).equals(once)
    assert results.summary(sweep, by="learner").equals(once)


def test_okl_results_summarises_the_regret_of_runs_scored_by_a_comparator(okl_run, results_root, capsys):
    """--metric regret printed a traceback (the manifest holds the regret entry as a mapping)."""
    assert okl_run("learner=pkrr_taylor", "n=200", "comparator=krr", "progress=false")[0] == 0
    assert okl_run("learner=fogd", "n=200", "progress=false")[0] == 0  # not scored: no regret
    (scored,) = [m for m in map(RunDir.manifest, find(results_root)) if "regret" in m.analyses]
    code, out, err = call(lambda: results_cli.main(["--metric", "regret"]), capsys)
    assert code == 0 and err == ""
    assert f"| pkrr_taylor | {scored.analyses['regret']['regret']:.4g} · " in out and "| fogd | — · " in out
    code, out, err = call(lambda: results_cli.main(["--metric", "status"]), capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("okl-results: error: metric 'status' is not a number in the runs; choose a numeric one: ")
    assert "regret" in err and "average_loss" in err


def test_a_run_with_a_damaged_manifest_is_named_when_left_out(okl_run, results_root, capsys):
    assert okl_run("learner=fogd", "n=200", "progress=false")[0] == 0
    assert okl_run("learner=pkrr_taylor", "n=200", "progress=false")[0] == 0
    (damaged,) = find(results_root, learner="fogd")
    (damaged.path / "run.json").write_text('{"status": "compl')
    code, out, err = call(lambda: results_cli.main([]), capsys)
    assert code == 0 and "| pkrr_taylor |" in out and "| fogd |" not in out
    warning = (
        f"okl-results: warning: {damaged.path}: its run.json is not a readable manifest, so the run is left out: "
        "re-run it (okl-run plays it again), or remove the directory\n"
    )
    assert err == warning
    code, out, err = call(lambda: results_cli.main(["export"]), capsys)  # it printed Python's warning and its line
    assert code == 0 and err == warning
    # no run scored: "metric 'regret' is not a column" named no way to score one; --figures without --mlflow did nothing
    code, out, err = call(lambda: results_cli.main(["--metric", "regret"]), capsys)
    assert code == 2 and err.startswith(warning + "okl-results: error: no run matched was scored against a comparator")
    code, out, err = call(lambda: results_cli.main(["export", "--figures", "figures"]), capsys)
    assert code == 2 and err.rstrip().endswith(
        "--figures attaches each artefact's figure to its runs in MLflow: add --mlflow"
    )
    (killed,) = find(results_root, learner="pkrr_taylor")  # as a run killed before its first part: no loss yet
    manifest = json.loads((killed.path / "run.json").read_text())
    (killed.path / "run.json").write_text(json.dumps({**manifest, "status": "running", "average_loss": None}))
    code, out, err = call(lambda: results_cli.main(["--all"]), capsys)  # it said "is not a number in the runs"
    assert code == 2 and "error: metric 'average_loss' has no value in the 1 runs matched: none has rounds saved" in err
    with pytest.warns(results.SkippedRun, match="run.json is not a readable manifest"):
        assert set(results.runs().learner) == {"pkrr_taylor"}


def test_load_reads_every_runs_columns_with_nulls_where_a_run_has_none(okl_run, results_root):
    """The rounds' columns came from the first file alone: raker's weight_p and the Nyström learners'
    dictionary_size were dropped from the root's table, and asking for one failed with a schema dump."""
    for learner in ("fogd", "raker", "pkawv_nystrom"):
        assert okl_run(f"learner={learner}", "n=200", "progress=false")[0] == 0
    rounds = results.load(results_root)
    assert {"weight_0", "weight_2", "dictionary_size"} <= set(rounds.columns) and len(rounds) == 600
    weights = results.load(results_root, columns=["t", "weight_0"]).groupby("learner").weight_0.count()
    assert weights.to_dict() == {"fogd": 0, "pkawv_nystrom": 0, "raker": 200}
    alone = results.load(results_root, learner="raker")
    np.testing.assert_array_equal(alone.weight_0, rounds[rounds.learner == "raker"].sort_values("t").weight_0)


def test_okl_results_help_names_its_export_command(capsys):
    """The README documents okl-results export; okl-results --help did not mention it."""
    code, out, _ = call(lambda: results_cli.main(["--help"]), capsys)
    assert code == 0 and "okl-results export [--format csv] [--mlflow [URI]]" in " ".join(out.split())


def test_heldout_seeds_merge_with_the_runs_and_an_unknown_column_names_the_columns(okl_run, results_root):
    """results.heldout gave seed as text (a merge with runs() failed: str and int64), and load(columns=["nope"])
    dumped pyarrow's schema as if the files were damaged."""
    assert okl_run("dataset=multidist", "learner=polk", "n=200", "checkpoints=2", "progress=false")[0] == 0
    merged = results.heldout(results_root).merge(results.runs(results_root)[["run", "seed"]], on=["run", "seed"])
    assert len(merged) == 2 and merged.seed.dtype == np.int64
    from okl.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^no column 'nope' in the rounds; they have: t, y, y_hat, loss, "):
        results.load(results_root, columns=["nope"])


def test_load_reads_the_finished_runs_unless_told_otherwise(okl_run, tmp_path, monkeypatch):
    """A killed run's rounds are a prefix of its stream, and the rows carry no status: ``load()`` mixed them in with
    the finished runs' (an average over them counted a half-played run as a whole one)."""
    from helpers import KILLED, killed_after_first_part

    root = tmp_path / "mixed"
    args = ["learner=fogd", "n=600", "block=64", "sink.part_rows=128", "checkpoints=0", "progress=false"]
    assert killed_after_first_part(root, *args, "seed=1") == KILLED
    monkeypatch.setenv("OKL_RESULTS", str(root))
    assert okl_run(*args, "seed=0")[0] == 0
    table = results.runs(root)
    assert sorted(table.status) == ["complete", "stopped"]
    played = table.set_index("seed").rounds.to_dict()
    assert played[0] == 600 and 0 < played[1] < 600
    assert results.load(root).groupby("seed").size().to_dict() == {0: 600}
    assert results.load(root, status=None).groupby("seed").size().to_dict() == played
    assert len(results.load(root, status="stopped")) == played[1]
    stopped = results.runs(root).set_index("seed").run[1]
    with pytest.warns(results.LeftOut, match=r"^1 run\(s\) match, none complete/timeout \(stopped\): .*status=None"):
        assert results.load(root, run=stopped).empty
    score = {"test_loss": 0.5, "model_size": 1.0, "seconds": 0.0}
    for run_dir in find(root):
        run_dir.write_heldout([{"t": 64, **score}])
    assert results.heldout(root).seed.tolist() == [0]
    assert sorted(results.heldout(root, status=None).seed) == [0, 1]
