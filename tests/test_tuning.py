"""okl-tune (okl.tune, the optuna extra): a study on a prefix that prunes and resumes, the report on the rest."""

from __future__ import annotations

import ast
import re

import numpy as np
import pandas as pd
import pytest
from conftest import call

from okl import results
from okl.cli import tune as tune_cli
from okl.store import find


@pytest.fixture
def data_file(tmp_path, no_data):
    g = np.random.default_rng(0)
    X = g.random((1200, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.05 * g.standard_normal(1200)
    path = tmp_path / "stream.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(path, index=False)
    return path


def tune(capsys, data_file, *extra):
    argv = [
        "dataset=file", f"dataset.path={data_file}", "dataset.target=y", "learner=pkawv_taylor", "M=2",
        "lam=loguniform(1e-3,10)", "sigma=loguniform(0.05,20)", "--prefix", "600", "--seeds", "2", *extra,
    ]  # fmt: skip
    return call(lambda: tune_cli.main(argv), capsys)


def test_a_study_prunes_then_reports_its_best_values_on_the_rest(results_root, data_file, capsys):
    code, out, err = tune(capsys, data_file, "--trials", "14")
    assert code == 0, err
    trials = re.findall(r"trial #(\d+): (.*): (pruned|[\d.e+-]+)$", out, re.M)
    assert [int(n) for n, _, _ in trials] == list(range(14))
    pruned = [n for n, _, value in trials if value == "pruned"]
    assert pruned and f"best of 14 trials ({len(pruned)} pruned)" in out
    runs = results.runs(results_root, status=None)
    stopped = runs[runs.status == "pruned"]
    assert len(stopped) >= len(pruned) and (stopped.rounds < 600).all()  # a pruned trial's run ends early
    best = ast.literal_eval(re.search(r"best of [^:]*: (\{.*\}) ->", out)[1])
    report = runs[runs["dataset.skip"] == 600]
    assert len(report) == 2 and set(report.rounds) == {600}  # the rest of the stream, both seeds
    assert np.allclose(report["learner.sigma"].astype(float), best["sigma"])
    assert np.allclose(report["learner.lam"].astype(float), best["lam"])
    quoted = float(re.search(r"report on the rest of the stream .*: ([\d.e-]+)$", out, re.M)[1])
    assert quoted == pytest.approx(report.average_loss.mean(), rel=1e-5)


def test_the_same_command_continues_the_study_with_new_proposals(results_root, data_file, capsys):
    assert tune(capsys, data_file, "--trials", "4", "--pruner", "none")[0] == 0
    code, out, _ = tune(capsys, data_file, "--trials", "7", "--pruner", "none")
    assert code == 0 and "4 trials there, 3 to play" in out
    assert re.findall(r"trial #(\d+):", out) == ["4", "5", "6"]
    import optuna

    (summary,) = optuna.get_all_study_summaries(storage=f"sqlite:///{results_root.resolve() / 'okl-tune.db'}")
    study = optuna.load_study(study_name=summary.study_name, storage=f"sqlite:///{results_root / 'okl-tune.db'}")
    proposals = [tuple(t.params.values()) for t in study.trials]
    assert len(study.trials) == 7 and len(set(proposals)) == 7  # the resumed sampler did not propose again
    assert len(list(find(results_root))) >= 7 * 2  # every trial's runs are ordinary runs
    # another --seeds: its best was chosen among means over 2 seeds and over 3; now refused, nothing played
    code, out, err = tune(capsys, data_file, "--trials", "9", "--pruner", "none", "--seeds", "3")
    assert code == 2 and "trial #" not in out and err.count("\n") == 1, err
    assert f"study {summary.study_name} scores its trials over 2 seeds: pass --seeds 2 to continue it" in err


def test_a_trial_a_killed_process_left_running_is_neither_counted_nor_best(results_root, data_file, capsys):
    import optuna

    assert tune(capsys, data_file, "--trials", "3", "--pruner", "none")[0] == 0
    storage = f"sqlite:///{results_root.resolve() / 'okl-tune.db'}"
    (summary,) = optuna.get_all_study_summaries(storage=storage)
    optuna.load_study(study_name=summary.study_name, storage=storage).ask()  # the process dies: RUNNING forever
    code, out, err = tune(capsys, data_file, "--trials", "5", "--pruner", "none")
    assert code == 0, err
    assert "3 trials there, 2 to play" in out and re.findall(r"trial #(\d+):", out) == ["4", "5"]
    assert "best of 5 trials (0 pruned)" in out  # 6 in the study, one of them never ended


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["lam=loguniform(1)", "--prefix", "10"], r"'lam=loguniform\(1\)': loguniform takes two numbers, low>0 < high"),
        (["lam=beta(1,2)", "--prefix", "10"], r"'lam=beta\(1,2\)': unknown distribution 'beta'; use one of loguniform"),
        (["lam=0.1", "--prefix", "10"], r"nothing to tune: give at least one key as a distribution"),
        (
            ["lam=choice()", "--prefix", "10"],
            r"'lam=choice\(\)': choice takes one or more values: lam=choice\(a,b,...\)",
        ),
        (["lam=loguniform(1e-4,10", "--prefix", "10"], r"'lam=loguniform\(1e-4,10': close its parenthesis"),
        (
            ["lam=loguniform(1e-4,10)", "lam=uniform(0,1)", "--prefix", "10"],
            r"'lam=uniform\(0,1\)': lam is given twice; give it one distribution",
        ),
        (
            ["lam=loguniform(1e-3,1)", "--prefix", "10"],
            r"--prefix needs a dataset with dataset.skip and dataset.length",
        ),
    ],
)
def test_bad_studies_are_one_line_errors(results_root, capsys, argv, message):
    code, out, err = call(lambda: tune_cli.main(argv), capsys)
    assert code == 2 and re.search(message, err) and err.count("\n") == 1, err


def test_a_prefix_that_leaves_no_rest_stops_before_the_study_and_overrides_may_follow_the_options(
    results_root, data_file, capsys
):
    """--prefix 5000 on a 1,200-row file played every trial, then failed the report ('dataset.skip=5000 leaves no
    rows') with the study already stored; a bad override likewise. Now both stop first, nothing stored. And an
    override after the options ('... --trials 3 n=400') was 'unrecognized arguments'."""
    code, out, err = tune(capsys, data_file, "--prefix", "5000", "--trials", "3")
    assert code == 2 and "dataset.skip=5000 leaves no rows of the 1,200" in err and "trial #" not in out, err
    for bad, said in (("learner.D=0", "unknown key 'learner.D'"), ("learner.M=0", "M must be an integer >= 1")):
        code, out, err = tune(capsys, data_file, "--trials", "3", bad)
        assert code == 2 and said in err and "trial #" not in out and err.count("\n") == 1, err
    assert not (results_root / "okl-tune.db").exists()
    code, out, err = tune(capsys, data_file, "--trials", "2", "n=400", "M=int(0,3)")  # 0: a bound, never drawn
    assert code == 0 and "trial #1" in out, err
    from optuna.distributions import FloatDistribution

    from okl.tune import _inside

    assert _inside(FloatDistribution(0.0, 2.0)) == 1.0 and _inside(FloatDistribution(0.01, 1.0, log=True)) == 0.1
    code, out, err = tune(capsys, data_file, "--trials", "2", "learner=choice(pkawv_taylor,fogd)", "learner.M=2")
    assert code == 2 and "unknown key 'learner.M'" in err and "trial #" not in out, err


def test_the_report_starts_after_the_trials_rows_within_the_users_window(results_root, data_file, capsys):
    """dataset.skip=200 dataset.length=1000 --prefix 600: the trials play rows 201-800, the report rows 801-1000 (it
    played rows 601-1,200: 200 of them tuned on, and past the user's length). A prefix as long as the window stops."""
    code, out, err = tune(capsys, data_file, "--trials", "2", "--seeds", "1", "dataset.skip=200", "dataset.length=800")
    assert code == 0, err
    runs = results.runs(results_root, status=None)
    windows = {(int(s), int(n)) for s, n in zip(runs["dataset.skip"], runs["dataset.length"], strict=True)}
    assert windows == {(200, 600), (800, 200)}
    assert set(runs[runs["dataset.skip"] == 800].rounds) == {200}
    code, out, err = tune(capsys, data_file, "--trials", "2", "--seeds", "1", "dataset.length=600", "--study", "other")
    assert code == 2 and "--prefix 600 leaves no rounds of dataset.length=600 to report on" in err, err
    # past the file's end: it said "dataset.skip=1300 leaves no rows", a value of okl-tune's, not the user's
    code, out, err = tune(capsys, data_file, "--trials", "2", "--seeds", "1", "dataset.skip=700", "--study", "third")
    assert code == 2 and err.startswith("okl-tune: error: --prefix 600 leaves no rows to report on (dataset.skip=1300")
    assert err.rstrip().endswith("give a shorter --prefix") and err.count("\n") == 1


def test_values_the_learner_refuses_fail_their_trials_and_the_study_goes_on(results_root, data_file, capsys):
    """sigma=uniform(-5,6): a negative sigma aborted the study and left its trial running for good, counted as done
    by the next command (which then played fewer trials than asked). Now that trial fails, with its reason, and the
    study goes on; a study where no trial can be scored is an error."""
    argv = [
        "dataset=file", f"dataset.path={data_file}", "dataset.target=y", "learner=pkawv_taylor", "M=2",
        "sigma=uniform(-5,6)", "--prefix", "300", "--trials", "8", "--pruner", "none",
    ]  # fmt: skip
    code, out, err = call(lambda: tune_cli.main(argv), capsys)
    assert code == 0, err
    failed = re.findall(r"trial #\d+: sigma=(-[\d.e+-]+): failed \(.*sigma must be .*> 0", out)
    scored = re.findall(r"trial #\d+: sigma=([\d.e+-]+): [\d.e+-]+$", out, re.M)
    assert failed and scored and len(failed) + len(scored) == 8 and "best of 8 trials" in out
    code, out, err = call(lambda: tune_cli.main([*argv[:5], "sigma=uniform(-5,-1)", *argv[6:]]), capsys)
    assert code == 2 and "sigma must be a finite number > 0" in err and "trial #" not in out  # refused before


def test_a_study_whose_trials_all_fail_is_an_error_naming_them(results_root, data_file, capsys, monkeypatch):
    """Every trial's run failed (raker predicting NaN): okl-tune printed inf for each, "best ... -> inf", and exited
    0. Each failure is said with the run's reason, and the study ends in an error."""
    import okl.tune
    from okl.runner.lifecycle import Outcome

    played = okl.tune.runner.execute

    def failing(plan, **kw):
        outcome = played(plan, **kw)
        return Outcome("failed", 17, None, outcome.run, error="pkawv_taylor predicted nan at round 18")

    monkeypatch.setattr(okl.tune.runner, "execute", failing)
    code, out, err = tune(capsys, data_file, "--trials", "2", "--pruner", "none", "--seeds", "1")
    assert code == 2 and "no trial of study" in err and "was scored" in err and err.count("\n") == 1, err
    assert out.count("failed (its run is failed at round 17: pkawv_taylor predicted nan at round 18)") == 2


def test_a_trial_is_scored_only_on_a_run_played_to_the_end_of_its_prefix(results_root, data_file, capsys, monkeypatch):
    """timeout_s stopped trials at different rounds and scored each over the rounds it had played (the longest-played
    one came out "best"); a Ctrl-C during a trial scored its run's partial loss and went on. timeout_s is refused,
    and an interrupted run ends the study with its trial failed, never scored."""
    argv = [
        "dataset=file", f"dataset.path={data_file}", "dataset.target=y", "learner=pkawv_taylor", "M=2",
        "lam=loguniform(1e-3,10)", "--prefix", "600", "--trials", "3", "--pruner", "none",
    ]  # fmt: skip
    code, _, err = call(lambda: tune_cli.main([*argv, "timeout_s=0.05"]), capsys)
    assert code == 2 and "timeout_s stops a trial before the end of its prefix" in err
    from okl import runner
    from okl.runner.lifecycle import Outcome

    played = runner.execute

    def interrupted(plan, **kw):
        outcome = played(plan, **kw)
        return Outcome("interrupted", outcome.rounds // 2, 0.001, outcome.run)  # a partial loss, far below the rest

    monkeypatch.setattr(runner, "execute", interrupted)
    code, out, err = call(lambda: tune_cli.main(argv), capsys)
    assert code == 130 and "interrupted; the study keeps its ended trials" in err and "0.001" not in out
    import optuna

    storage = f"sqlite:///{results_root.resolve() / 'okl-tune.db'}"
    (summary,) = optuna.get_all_study_summaries(storage=storage)
    assert [t.state.name for t in optuna.load_study(study_name=summary.study_name, storage=storage).trials] == ["FAIL"]


def test_a_study_name_given_to_another_command_is_refused(results_root, data_file, capsys):
    """--study S on a second command (another learner, another space) went on the first's study and reported the
    first's best values as its own."""
    assert tune(capsys, data_file, "--trials", "2", "--pruner", "none", "--study", "S")[0] == 0
    argv = [
        "dataset=file", f"dataset.path={data_file}", "dataset.target=y", "learner=fogd",
        "sigma=uniform(0.5,2)", "--prefix", "600", "--trials", "4", "--study", "S", "--seeds", "2",
    ]  # fmt: skip
    code, out, err = call(lambda: tune_cli.main(argv), capsys)
    assert code == 2 and "study S was made by another command (" in err and "trial #" not in out


def test_a_results_root_that_is_a_file_is_one_line(tmp_path, data_file, capsys):
    """okl-tune with OKL_RESULTS (or --root) naming a file: a FileExistsError traceback."""
    afile = tmp_path / "afile"
    afile.write_text("")
    argv = ["dataset=file", f"dataset.path={data_file}", "dataset.target=y", "lam=loguniform(1e-3,1)"]
    code, _, err = call(lambda: tune_cli.main([*argv, "--prefix", "300", "--root", str(afile)]), capsys)
    assert code == 2 and f"cannot use the results root {afile}" in err and err.count("\n") == 1, err
