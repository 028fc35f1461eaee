"""okl-run end to end: Parquet and run.json content, errors, timeouts, interruptions, sweeps."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from helpers import only_run, spawn_run, wait_for_parts
from okl import results
from okl.errors import ConfigError
from okl.learners import LEARNERS
from okl.store import find
from okl.system import process_start

FAST = ("dataset.length=3000", "progress=false")


def test_a_run_hides_the_objects_before_it_from_the_collector_only_while_it_plays(okl_run, monkeypatch):
    """The rounds play with the objects alive before them (imports, the learner) frozen out of the collector's sight
    (a full collection, set off by the few tuples a round played alone makes, went through them all: a fifth of
    pkrr_nystrom's per-round time on casp), and the collector has them back once the run ends."""
    import gc

    from okl.runner import lifecycle

    seen, play = [], lifecycle.play
    monkeypatch.setattr(lifecycle, "play", lambda *a, **k: seen.append(gc.get_freeze_count()) or play(*a, **k))
    assert gc.get_freeze_count() == 0
    assert okl_run("dataset.length=300", "progress=false", "block=1", "learner=pkrr_nystrom")[0] == 0
    assert seen and seen[0] > 1000 and gc.get_freeze_count() == 0


def test_default_run_writes_rounds_and_manifest(okl_run, results_root):
    code, out, err = okl_run(*FAST)
    assert code == 0, err
    run_dir = only_run(results_root)
    assert run_dir.path.relative_to(results_root).parts[:3] == ("learner=pkawv_taylor", "dataset=synthetic", "seed=0")
    assert str(run_dir.rounds_path) in out and "average square loss" in out
    m = run_dir.manifest()
    assert m.status == "complete" and m.rounds == m.planned_rounds == 3000
    assert m.config["learner"] == {"name": "pkawv_taylor", "M": 2, "sigma": 1.0, "lam": 1.0}
    assert m.versions["numpy"] and m.blas_threads == 1 and m.peak_rss_bytes > 0
    assert {"wall_s", "learner_s", "started_at", "finished_at", "git", "seed"} <= set(m.to_json())
    df = pd.read_parquet(run_dir.rounds_path)
    assert list(df.columns) == ["t", "y", "y_hat", "loss", "cum_loss", "elapsed_ns", "model_size", "regret"]
    np.testing.assert_array_equal(df.t, np.arange(1, 3001))
    np.testing.assert_allclose(df.loss, (df.y - df.y_hat) ** 2, rtol=0, atol=0)
    np.testing.assert_allclose(df.cum_loss, np.cumsum(df.loss), rtol=1e-12)
    assert (np.diff(df.elapsed_ns) >= 0).all() and df.elapsed_ns.iloc[-1] > 0
    assert (df.model_size == 45).all()  # C(8+2, 2) features for d = 8
    assert df.regret.isna().all()
    assert m.average_loss == pytest.approx(df.loss.mean(), rel=1e-12)
    assert f"{m.average_loss:.6g}" in out


def test_binary_stream_reports_zero_one_error(okl_run, results_root):
    code, _, err = okl_run(*FAST, "dataset.task=binary", "learner=fogd")
    assert code == 0, err
    df = results.load()
    expected = (df.y * df.y_hat <= 0).astype(float)
    np.testing.assert_array_equal(df.loss, expected)
    assert only_run(results_root).manifest().loss == "zero_one"
    assert set(df.y) == {-1.0, 1.0}


def test_same_config_and_seed_give_identical_parquet(okl_run, tmp_path, monkeypatch):
    tables = []
    for root in ("a", "b"):
        monkeypatch.setenv("OKL_RESULTS", str(tmp_path / root))
        assert okl_run(*FAST, "learner=fogd")[0] == 0
        tables.append(pq.read_table(only_run(tmp_path / root).rounds_path).drop_columns(["elapsed_ns"]))
    assert tables[0].equals(tables[1])


def test_block_size_and_per_round_loop_agree(okl_run, results_root):
    for block in (1, 64, 1000):
        assert okl_run(*FAST, "dataset.length=600", f"block={block}", "sink.overwrite=true")[0] == 0
        run_dir = only_run(results_root)
        df = pd.read_parquet(run_dir.rounds_path)
        if block == 1:
            reference = df.y_hat.to_numpy()
        np.testing.assert_allclose(df.y_hat, reference, rtol=1e-10, atol=1e-13)


def test_rounds_played_one_by_one_are_recorded_in_groups_as_if_each_alone(okl_run, results_root, monkeypatch):
    """block = 1 scores and records its rounds in groups (okl.runner.play.ROUNDS): the rows, the parts (closed at
    part_rows) and the held-out scores (at their checkpoints, inside a group) are those of groups of one round."""
    from okl.runner import play

    args = ("learner=polk", "dataset=multidist", "n=1000", "checkpoints=3", "block=1", "sink.part_rows=150")
    recorded = []
    for group, group_ns in ((64, play.ROUNDS_NS), (1, play.ROUNDS_NS), (256, 1)):  # 1 ns: a round per group
        monkeypatch.setattr(play, "ROUNDS", group)
        monkeypatch.setattr(play, "ROUNDS_NS", group_ns)
        assert okl_run(*args, "progress=false", "sink.overwrite=true")[0] == 0
        run = only_run(results_root)
        parts = [pq.read_table(p).num_rows for p in sorted((run.path / "rounds").glob("part-*.parquet"))]
        heldout = pd.read_parquet(run.path / "test.parquet").drop(columns=["seconds"])
        recorded.append((parts, pd.read_parquet(run.rounds_path).drop(columns=["elapsed_ns"]), heldout))
    for parts, rounds, heldout in recorded:
        assert parts == [150] * 6 + [100]
        pd.testing.assert_frame_equal(rounds, recorded[0][1])
        pd.testing.assert_frame_equal(heldout, recorded[0][2])
    checkpoints = list(recorded[0][2].t)
    assert len(checkpoints) == 3 and checkpoints[-1] == 1000 and any(t % 64 for t in checkpoints)  # inside groups


def test_complete_runs_are_skipped_and_overwrite_redoes_them(okl_run, results_root):
    assert okl_run(*FAST)[0] == 0
    code, out, _ = okl_run(*FAST)
    assert code == 0 and "already complete" in out
    code, out, _ = okl_run(*FAST, "sink.overwrite=true")
    assert code == 0 and "already complete" not in out


def test_a_ctrl_c_as_an_overwrite_starts_leaves_no_complete_run_without_its_rounds(okl_run, results_root, monkeypatch):
    """sink.overwrite=true cleared a complete run's parts, then wrote its new manifest: a Ctrl-C (or a kill) in between
    left run.json saying complete over no parts, so the next okl-run skipped it as done and results.load refused it."""
    from okl.store import RunDir

    assert okl_run(*FAST, "sink.part_rows=1000")[0] == 0
    clear = RunDir.clear

    def clear_then_ctrl_c(self):
        clear(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(RunDir, "clear", clear_then_ctrl_c)
    assert okl_run(*FAST, "sink.part_rows=1000", "sink.overwrite=true")[0] == 130
    monkeypatch.setattr(RunDir, "clear", clear)
    assert only_run(results_root).manifest().status != "complete"
    with pytest.warns(results.LeftOut):  # the unfinished run's rounds are not read
        assert results.load().empty
    code, out, _ = okl_run(*FAST, "sink.part_rows=1000")
    assert code == 0 and "already complete" not in out and len(results.load()) == 3000


def test_sweep_writes_one_directory_per_run(okl_run, results_root):
    code, out, err = okl_run("-m", "learner=pkrr_taylor,fogd", "seed=0,1", *FAST)
    assert code == 0, err
    runs = results.runs()
    assert sorted(zip(runs.learner, runs.seed, strict=True)) == [
        ("fogd", 0),
        ("fogd", 1),
        ("pkrr_taylor", 0),
        ("pkrr_taylor", 1),
    ]
    assert (runs.status == "complete").all()
    rounds = results.load()
    assert len(rounds) == 4 * 3000 and set(rounds.columns) >= {"learner", "dataset", "seed", "run", "t", "loss"}
    assert rounds.seed.dtype == np.int64


def test_joblib_sweep_runs_in_parallel_with_one_blas_thread_per_worker(okl_run, results_root):
    # sink.root named: loky's workers outlive a test and keep the OKL_RESULTS they started with
    code, _, err = okl_run(
        "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "seed=0,1", f"sink.root={results_root}", *FAST
    )
    assert code == 0, err
    runs = results.runs()
    assert sorted(runs.seed) == [0, 1] and (runs.status == "complete").all()
    assert (runs.blas_threads == 1).all()


def test_submitit_sweep_runs_each_job_in_its_own_process_and_a_rerun_reuses_them(okl_run, results_root, tmp_path):
    """The cluster path (``hydra/launcher=slurm`` extends submitit) through submitit's local executor."""
    sweep = (
        "-m",
        "hydra/launcher=submitit_local",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "learner=fogd,pkawv_taylor",
    )
    code, _, err = okl_run(*sweep, "n=300", "progress=false")
    assert code == 0, err
    runs = results.runs()
    assert sorted(runs.learner) == ["fogd", "pkawv_taylor"] and (runs.status == "complete").all()
    assert (runs.blas_threads == 1).all()
    for run in find(results_root):
        assert "submitit" in run.manifest().argv[0]  # played by a submitit job, not by this process
    logs = sorted((tmp_path / "sweep" / ".submitit").glob("*/*_log.out"))
    assert len(logs) == 2 and all("complete, 300 rounds" in log.read_text() for log in logs)
    started = sorted(run.manifest().started_at for run in find(results_root))
    assert okl_run(*sweep, "n=300", "progress=false")[0] == 0
    assert sorted(run.manifest().started_at for run in find(results_root)) == started  # complete runs are reused


def test_timeout_keeps_the_rounds_played(okl_run, results_root):
    code, out, _ = okl_run("learner=online_krr", "timeout_s=0.3", "progress=false")
    assert code == 0 and "timeout" in out
    m = only_run(results_root).manifest()
    assert m.status == "timeout" and 0 < m.rounds < m.planned_rounds
    assert m.learner_s >= 0.3
    assert len(results.load()) == m.rounds
    code, out, _ = okl_run("learner=online_krr", "timeout_s=0.2", "progress=false")  # a smaller budget: nothing to redo
    assert "already timeout" in out and only_run(results_root).manifest().rounds == m.rounds
    code, out, _ = okl_run("learner=online_krr", "timeout_s=0.6", "progress=false")  # a larger one: resumed, further
    assert f"timeout (resumed from round {m.rounds:,})" in out
    assert only_run(results_root).manifest().rounds > m.rounds


def test_non_finite_predictions_fail_with_the_round_and_keep_earlier_rounds(okl_run, results_root):
    code, _, err = okl_run(*FAST, "learner=fogd", "learner.eta=50")
    assert code == 2
    assert err.startswith("okl-run: error: fogd predicted ") and err.count("\n") == 1
    assert "a non-finite loss: check its step size" in err
    m = only_run(results_root).manifest()
    assert m.status == "failed" and "non-finite loss" in m.error
    assert f"at round {m.rounds + 1:,}," in err  # every round before the bad one is kept
    df = results.load(status=None)  # a failed run: not among the finished
    assert len(df) == m.rounds > 0 and np.isfinite(df.cum_loss).all()


def test_non_finite_predictions_on_a_binary_stream_fail_though_their_zero_one_loss_is_finite(okl_run, results_root):
    # fogd's weights overflow to nan by round 3: nan * y <= 0 is False, a zero-one loss of 0 (a correct round)
    code, out, err = okl_run(*FAST, "dataset.task=binary", "learner=fogd", "learner.eta=1e200")
    assert code == 2, out
    assert err.startswith("okl-run: error: fogd predicted nan at round ") and err.count("\n") == 1
    assert "a non-finite prediction: check its step size" in err
    m = only_run(results_root).manifest()
    assert m.status == "failed" and 0 < m.rounds < 10
    df = results.load(status=None)
    assert len(df) == m.rounds and np.isfinite(df.y_hat).all()


@pytest.mark.filterwarnings("error::RuntimeWarning")  # numpy warned of bsgd's norm before the one line of its failure
def test_a_non_finite_diagnostic_fails_the_run_though_its_predictions_are_finite(okl_run, results_root):
    # BSGD's first step 1/(λ·1) = 1e300 overflows ||f||²: its risk was written as nan and merging chose by nan
    code, out, err = okl_run(
        *FAST, "dataset.task=binary", "learner=bsgd", "learner.loss=hinge", "learner.eta=null", "learner.lam=1e-300"
    )
    assert code == 2, out
    assert err.startswith("okl-run: error: bsgd predicted ") and err.count("\n") == 1
    assert "with a non-finite risk (" in err and "check its step size" in err
    m = only_run(results_root).manifest()
    assert m.status == "failed" and m.rounds == 1 and "(1 round saved in " in err and "failed, 1 round in " in out
    df = results.load(status=None)
    assert len(df) == m.rounds and np.isfinite(df[["risk", "penalty"]]).all(axis=None)


BAD_INPUTS = [
    (
        ["learner=pkawv_tayler"],
        "unknown learner 'pkawv_tayler'; choose one of: " + ", ".join(LEARNERS.names()),
    ),
    (["dataset=nope"], "unknown dataset 'nope'; choose one of:"),
    (["M=abc"], "bad value in 'M=abc': Value 'abc' of type 'str' could not be converted to Integer"),
    (["learner.gamma=1"], "unknown key 'learner.gamma' (valid keys here: M, lam, name, sigma)"),
    (
        ["-m", "learner=fogd,nogd", "learner.eta=0.5"],
        "unknown key 'learner.eta' (valid keys here: M, lam, name, sigma); with -m it is checked against the default "
        "choices before the sweep: the swept ones take it, write ++learner.eta=0.5",
    ),
    (
        ["--multi", "learner=fogd,nogd", "learner.eta=0.5"],  # Hydra's abbreviation of --multirun
        "choices before the sweep: the swept ones take it, write ++learner.eta=0.5",
    ),
    (["+learner.gamma=1"], "unknown key learner.gamma for learner 'pkawv_taylor'; its keys are: M, lam, sigma"),
    (["foo=1"], "unknown key 'foo'"),
    (["sigma=0"], "sigma must be a finite number > 0 (got 0.0)"),
    (["lam=-1"], "lam must be a finite number > 0 (got -1.0)"),
    (["learner.sigma=-2"], "learner 'pkawv_taylor': sigma must be a finite number > 0 (got -2.0)"),
    (["n=0"], "n must be an integer >= 1 (got 0)"),
    (["block=0"], "block must be an integer >= 1"),
    (["M=5", "dataset.d=22"], "pkawv_taylor: d=22, M=5 gives 80,730 Taylor features"),
    (["learner=fogd", "learner.loss=hing"], "learner 'fogd': loss must be one of hinge, logistic, square"),
    (["kors=h2"], "kors must be one of code, eq4 (got 'h2')"),
    (["learner=pros_n_kons", "learner.kors=paper"], "learner 'pros_n_kons': kors must be one of code, eq4"),
    (["M="], "bad value in 'M='"),
    (["M=0"], "M must be an integer >= 1 (got 0)"),
    (["learner.M=0"], "learner 'pkawv_taylor': M must be an integer >= 1 (got 0)"),
    (["--cfg", "job", "-m", "learner=fogd,online_krr"], "drop -m to print one run's configuration"),
    (["variant=matlab"], "variant must be one of code, paper (got 'matlab')"),
    (["learner="], "learner"),
    (
        ["learner=raker", "sigma=2"],
        "learner 'raker' does not use the top-level sigma=2.0: set learner.sigma2, its list of Gaussian widths σ²",
    ),
    (["learner=adamkl", "sigma=1.0"], "learner 'adamkl' does not use the top-level sigma=1.0: set learner.sigma2"),
    (["learner=raker", "lam=0.1"], "learner 'raker' does not use the top-level lam=0.1: set learner.lam (its own"),
    (["learner=fogd", "M=3"], "learner 'fogd' does not use the top-level M=3: drop M= (its keys: sigma, D, eta,"),
    (["learner=fogd", "kors=code"], "learner 'fogd' does not use the top-level kors=code: drop kors="),
    (  # it said "set learner.lam", which was set
        ["learner=raker", "learner.lam=0.5", "lam=0.1"],
        "learner 'raker' does not use the top-level lam=0.1: drop lam=, learner.lam=0.5 is what it uses",
    ),
    (
        ["learner=pkawv_taylor,fogd"],
        "Ambiguous value for argument 'learner=pkawv_taylor,fogd': a comma list is a sweep, add -m to run one job "
        "per value (okl-run -m learner=pkawv_taylor,fogd)",
    ),
    (["+foo=1"], "unknown top-level key 'foo'; the top-level keys are sink, M, sigma, lam, seed, n, timeout_s,"),
    (
        ["seed=1180591620717411303424"],
        "seed must be an integer in 0..9,223,372,036,854,775,807 (got 1180591620717411303424)",
    ),
    (["learner=fogd", "learner.seed=-1"], "learner 'fogd': seed must be an integer in 0..9,223,372,036,854,775,807"),
    (
        ["dataset.seed=9223372036854775808"],
        "dataset 'synthetic': seed must be an integer in 0..9,223,372,036,854,775,807",
    ),
    # yes/no keys took any string: "maybe" redid a complete run, and gave fogd a run id of its own
    (["sink.overwrite=maybe"], "sink 'parquet': overwrite takes true or false (got 'maybe')"),
    (["learner=fogd", "learner.orthogonal=maybe"], "learner 'fogd': orthogonal takes true or false (got 'maybe')"),
    (["learner=fsgd", "learner.diminishing=1"], "learner 'fsgd': diminishing takes true or false (got 1)"),
    # a path Hydra's grammar cannot read unquoted: its parser's words alone, or "add -m" for a comma
    (
        ["dataset=file", "dataset.path=~/data (1).csv"],
        "; quote a path with spaces, '~', brackets or other special characters: 'dataset.path=\"...\"'",
    ),
    (["dataset=file", "dataset.path=d,v2.csv"], "add -m to run one job per value (okl-run -m dataset.path=d,v2.csv)"),
    (["dataset=file", "dataset.path=d,v2.csv"], "; or quote a path that holds a comma: 'dataset.path=\"my,file.csv\"'"),
    (["learner=fogd,nogd", "sink.root=/tmp/a,b"], "(okl-run -m learner=fogd,nogd)"),
    # "internal error: TypeError: 'int' object is not iterable", "...: ValueError: Config group override must be..."
    (["learner=raker", "learner.sigma2=1"], "learner 'raker': sigma2 takes a list of numbers, e.g. [1] (got 1)"),
    (["learner=null"], "learner=null: a config group takes one of its names, not null (okl-run --help lists them)"),
    (  # "internal error: ValueError: n_jobs == 0 in Parallel has no meaning"
        ["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=0", "seed=0,1"],
        "hydra.launcher.n_jobs=0 runs no job: set the jobs to run at once (1 or more), or -1 for one per core",
    ),
    (["sink.root=''"], "sink 'parquet': root is empty: give the results folder (default: $OKL_RESULTS, else results/)"),
    (
        ["dataset.target=température"],
        "; quote a value that holds letters other than a-z: dataset.target='\"température\"'",
    ),
]


def test_multirun_written_after_an_override_sweeps(okl_run, results_root):
    """okl-run progress=false -m seed=0,1 was argparse's "unrecognized arguments: seed=0,1"."""
    code, _, err = okl_run("progress=false", "-m", "learner=fogd", "n=50", "seed=0,1")
    assert code == 0, err
    assert sorted(results.load(columns=["t"]).seed.unique()) == [0, 1]


def test_a_sweep_given_a_sink_root_writes_nothing_outside_it(okl_run, results_root, tmp_path, monkeypatch):
    """okl-run -m ... sink.root=X wrote its sweep's folder to ./results/.sweeps (from OKL_RESULTS, unset here) in the
    working directory, a read-only or shared one as well."""
    monkeypatch.delenv("OKL_RESULTS")
    work, root = tmp_path / "work", tmp_path / "mine"
    work.mkdir()
    monkeypatch.chdir(work)
    code, _, err = okl_run("progress=false", "-m", "learner=fogd", "n=50", "seed=0,1", f"sink.root={root}")
    assert code == 0, err
    assert list(work.iterdir()) == [] and len(list((root / ".sweeps").iterdir())) == 1
    assert sorted(results.runs(root).seed) == [0, 1]


def test_the_largest_seed_is_a_partition_key_the_results_read_back(okl_run, results_root):
    """seed=2**70 was accepted, and then okl.results.load failed for the whole root (seeds are int64 there)."""
    assert okl_run("learner=fogd", "n=50", "seed=9223372036854775807", "progress=false")[0] == 0
    assert okl_run("learner=fogd", "n=50", "progress=false")[0] == 0
    rounds = results.load(columns=["t"])
    assert sorted(set(rounds.seed)) == [0, 2**63 - 1] and len(rounds) == 100


@pytest.mark.parametrize(("overrides", "message"), BAD_INPUTS)
def test_bad_input_gives_one_line(okl_run, results_root, overrides, message):
    code, out, err = okl_run(*overrides, "progress=false")
    assert code == 2
    assert err.startswith("okl-run: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not results_root.exists()  # nothing ran, nothing written


@pytest.mark.parametrize(
    "overrides",
    [
        ["-m", "learner=fogd,nogd", "learner.etaa=0.5"],  # no learner has it
        ["-m", "seed=0,1", "learner.gamma=1"],  # no config group is swept
        ["-m", "learner=pkawv_taylor,fogd", "learner.M=5", "n=20"],  # the default has it: fogd's job refuses it
    ],
)
def test_the_plus_plus_hint_is_given_only_where_it_works(okl_run, results_root, overrides):
    code, _, err = okl_run(*overrides, "progress=false")
    assert code != 0 and "unknown key" in err and "++" not in err, err
    assert err.strip().splitlines()[-1].startswith("okl-run: error: ")


def test_a_key_only_the_swept_learners_have_reaches_each_of_them_with_plus_plus(okl_run, results_root):
    """The hint of the error above works: ++learner.eta=0.5 with -m runs fogd and nogd at η = 0.5 (the default
    learner has no eta)."""
    code, _, err = okl_run("-m", "learner=fogd,nogd", "++learner.eta=0.5", "n=50", "progress=false")
    assert code == 0, err
    runs = {r.manifest().learner: r.manifest().config["learner"]["eta"] for r in find(results_root)}
    assert runs == {"fogd": 0.5, "nogd": 0.5}


def test_a_sweep_runs_a_shared_key_where_it_is_read_and_notes_where_it_is_not(okl_run, results_root):
    code, out, err = okl_run("-m", "learner=pkrr_taylor,fogd", "lam=1,0.1", "n=50", "progress=false")
    assert code == 0, err
    note = "okl-run: note: learner 'fogd' does not use the top-level lam={}: set learner.lam (its own, default 0.0)"
    assert note.format("1.0") in err and note.format("0.1") in err and "pkrr_taylor' does not use" not in err
    lams = {run.manifest().identity["learner"]["lam"] for run in find(results_root, learner="pkrr_taylor")}
    assert lams == {1.0, 0.1} and len(find(results_root, learner="fogd")) == 1  # fogd's two jobs are one run


@pytest.mark.parametrize(
    ("sig", "status", "code"), [(signal.SIGINT, "interrupted", 130), (signal.SIGTERM, "interrupted", 143)]
)
def test_interrupted_run_saves_finished_rounds(tmp_path, sig, status, code):
    proc = spawn_run(tmp_path, "learner=kernel_awv", "n=20000", "sink.part_rows=500", "block=100")
    wait_for_parts(tmp_path, 2, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and "interrupted" in err and "Traceback" not in err
    assert err.endswith("okl-run: interrupted; the rounds played so far are saved (the same command resumes)\n")
    m = only_run(tmp_path).manifest()
    assert m.status == status and m.rounds >= 1000
    df = results.load(tmp_path, status=None)  # an interrupted run: not among the finished
    np.testing.assert_array_equal(df.t, np.arange(1, m.rounds + 1))


def test_killed_run_keeps_its_closed_parts_readable(tmp_path):
    proc = spawn_run(tmp_path, "learner=kernel_awv", "n=20000", "sink.part_rows=500", "block=100")
    wait_for_parts(tmp_path, 2, proc)
    proc.kill()
    proc.communicate(timeout=60)
    run_dir = only_run(tmp_path)
    m = run_dir.manifest()
    assert m.status == "running" and m.rounds == 500 * len(m.parts) >= 1000
    assert set(results.runs(tmp_path).status) == {"stopped"}  # not "running": its process is gone
    df = results.load(tmp_path, status=None)  # a killed run: not among the finished
    assert len(df) >= m.rounds  # a part closed after the manifest was read may add rows
    np.testing.assert_array_equal(df.t, np.arange(1, len(df) + 1))


def test_a_run_held_by_a_live_process_is_skipped_and_a_stale_lock_is_taken_over(okl_run, results_root, composed):
    """A stale lock whose pid belonged to another live process made every re-run skip with exit 0."""
    from okl import config
    from okl.store.lock import identity

    run_dir = config.plan(composed(*FAST)).run_dir()
    run_dir.path.mkdir(parents=True)
    parent = {**identity(), "pid": os.getppid(), "start": process_start(os.getppid())}  # a live process, not us
    run_dir.lock_path.write_text(json.dumps(parent))
    code, out, err = okl_run(*FAST)
    assert code == 75 and not out and err.count("\n") == 1
    assert f"skipped, process {os.getppid()} on {parent['host']} is running it in {run_dir.path}; run the " in err
    assert run_dir.manifest() is None
    run_dir.lock_path.write_text(json.dumps({**parent, "start": parent["start"] + 1}))  # its pid, reused since
    code, out, _ = okl_run(*FAST)
    assert code == 0 and "complete, 3,000 rounds" in out
    assert not run_dir.lock_path.exists()


def test_okl_debug_shows_the_traceback_of_a_users_error(okl_run, results_root, monkeypatch):
    """OKL_DEBUG=1 okl-run sigma=0 printed the one line still, where the README and the module promise the
    traceback."""
    code, _, err = okl_run("sigma=0", "progress=false")
    assert code == 2 and err.count("\n") == 1 and "sigma must be" in err
    monkeypatch.setenv("OKL_DEBUG", "1")
    with pytest.raises(ConfigError, match="sigma must be"):
        okl_run("sigma=0", "progress=false")


def test_help_lists_groups_and_learners(okl_run):
    code, out, _ = okl_run("--help")
    assert code == 0
    assert out.startswith("okl-run: play an online kernel learner")
    from okl.learners import LEARNERS

    assert f"learner: {', '.join(LEARNERS.names())}" in out and "$OKL_RESULTS" in out
    import dataclasses

    from okl.config import RunConfig

    scalars = [
        f.name for f in dataclasses.fields(RunConfig) if f.name not in ("dataset", "learner", "sink", "comparator")
    ]
    assert f"(top-level keys: {' '.join(scalars)})" in out  # progress and analyses were missing
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert [key for key in scalars if f"| `{key}` |" not in readme] == []  # checkpoints was missing


def test_file_system_errors_are_one_line_and_a_full_disk_leaves_a_failed_manifest(okl_run, results_root, monkeypatch):
    """They were "internal error: OSError", and a full disk left run.json saying running forever."""
    import errno

    from okl.store import writer

    results_root.parent.mkdir(parents=True, exist_ok=True)
    results_root.write_text("a file, not a folder")
    code, _, err = okl_run(*FAST)
    assert code == 2 and err.count("\n") == 1 and "cannot write" in err and "OKL_RESULTS" in err
    code, _, err = okl_run("-m", *FAST, "seed=0,1")  # Hydra makes the sweep's folder there first: "internal error"
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"okl-run: error: cannot write {results_root}/.sweeps")
    assert "Not a directory; set OKL_RESULTS (or sink.root) to a writable folder" in err
    results_root.unlink()

    real, calls = writer.write_table, []

    def fills_up(path, table):
        calls.append(path)
        if len(calls) > 2 and path.name.startswith("part-"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, table)

    monkeypatch.setattr(writer, "write_table", fills_up)
    code, _, err = okl_run(*FAST, "sink.part_rows=500")
    assert code == 2 and err.count("\n") == 1 and "No space left on device" in err
    m = only_run(results_root).manifest()
    assert m.status == "failed" and "No space left on device" in m.error and m.rounds >= 1000
    np.testing.assert_array_equal(results.load(results_root, status=None).t, np.arange(1, m.rounds + 1))  # two parts
    too_long = OSError(36, "File name too long", "x.csv")
    monkeypatch.setattr("okl.config.plan", lambda *a, **k: (_ for _ in ()).throw(too_long))
    code, _, err = okl_run(*FAST)  # an OSError elsewhere is not the results root's: the file and what the system said
    assert code == 2 and err == "okl-run: error: x.csv: File name too long\n"


def test_a_defect_while_writing_the_last_rows_leaves_a_failed_manifest(okl_run, results_root, monkeypatch):
    """A column the store could not convert (a TypeError raised while finishing) left run.json saying "running"."""
    from okl.store import writer

    real = writer.column

    def defect(values):
        if len(values) < 1000:  # the last part's columns
            raise TypeError("not a column")
        return real(values)

    monkeypatch.setattr(writer, "column", defect)
    code, _, err = okl_run(*FAST, "n=2500", "sink.part_rows=1000", "block=500")
    assert code != 0 and "okl-run: error: internal error: TypeError: not a column" in err
    m = only_run(results_root).manifest()
    assert m.status == "failed" and m.error == "TypeError: not a column" and m.rounds == 2000
    # the same when it is raised by the second finish, after a Ctrl-C that came just before the first one's mask
    calls = []

    def interrupted_then_defect(self, *args, **kwargs):
        calls.append(args)
        raise KeyboardInterrupt if len(calls) == 1 else TypeError("not a column")

    monkeypatch.setattr(writer.RoundWriter, "finish", interrupted_then_defect)
    code, _, err = okl_run(*FAST, "n=2500", "sink.part_rows=1000", "block=500", "seed=1")
    m = only_run(results_root, seed=1).manifest()
    assert len(calls) == 2 and m.status == "failed" and m.error == "TypeError: not a column"


@pytest.mark.parametrize("argv", [["okl-data", "list"], ["okl-run", "--help"], ["okl-results", "--help"]])
def test_a_closed_pipe_ends_a_command_quietly(argv, tmp_path):
    """``okl-data list | head`` ended in a BrokenPipeError traceback: the reader is gone before the first line."""
    read, write = os.pipe()
    os.close(read)
    script = Path(sys.executable).parent / argv[0]
    done = subprocess.run([str(script), *argv[1:]], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write)
    assert done.stderr == "" and done.returncode in (141, 0)  # 0: argparse's --help ignores the failed write
    assert done.returncode == 141 or argv[1] == "--help"


def test_a_config_file_that_is_not_yaml_is_a_one_line_error_naming_its_line(okl_run, tmp_path):
    """A user's --config-dir learner with an interpolation inside a flow mapping was an "internal error"."""
    (tmp_path / "conf" / "learner").mkdir(parents=True)
    bad = tmp_path / "conf" / "learner" / "mine.yaml"
    bad.write_text("name: fogd\nD: {a: ${sigma}}\n")
    code, _, err = okl_run("--config-dir", str(tmp_path / "conf"), "learner=mine", "n=10")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"okl-run: error: cannot read {bad}, line 2, column 9: expected ',' or '}}', but got '{{'")
    assert "internal error" not in err


def test_a_run_imports_neither_pandas_nor_the_scipy_it_does_not_use(tmp_path):
    """okl-run's start-up is paid by every job of a sweep and every okl-run of the suite: pandas (0.3-0.4 s, which
    pyarrow's ``pa.array`` imported to check its argument's type), scipy.optimize (the adversary's) and scipy.io
    (MATLAB files) were imported by runs that never used them; a resumed run read its last part with
    ``pq.read_table``, which imports pandas. A run that times out and is resumed with held-out checkpoints writes
    and reads every kind of table the store has."""
    code = (
        "import sys\nfrom okl.cli.run import main\nmain()\n"
        "print(sorted({'pandas', 'scipy.optimize', 'scipy.io'} & set(sys.modules)))"
    )
    argv = ["learner=polk", "dataset=multidist", "dataset.length=600", "checkpoints=6", "sink.part_rows=50"]
    for budget, status in (("timeout_s=1e-9", "timeout"), ("timeout_s=null", "complete")):
        done = subprocess.run(
            [sys.executable, "-c", code, *argv, budget, "progress=false"],
            env={**os.environ, "OKL_RESULTS": str(tmp_path)},
            capture_output=True,
        )
        assert done.stdout.decode().splitlines()[-1] == "[]", done.stderr.decode()
        assert only_run(tmp_path).manifest().status == status
    assert only_run(tmp_path).manifest().resumed and len(only_run(tmp_path).heldout()) == 6


def test_a_complete_run_asked_for_other_checkpoints_says_it_kept_its_own(okl_run, results_root):
    """checkpoints is outside a run's identity: a complete run is kept, and said to be kept with its 5 held-out scores
    where 10 were asked (it said "already complete", its test.parquet silently holding 5)."""
    keys = ("dataset=multidist", "learner=polk", "n=200", "progress=false")
    assert okl_run(*keys, "checkpoints=5")[0] == 0
    code, out, _ = okl_run(*keys, "checkpoints=10")
    assert code == 0 and "(played with checkpoints=5, not 10: sink.overwrite=true plays it again)" in out
    assert okl_run(*keys, "checkpoints=5")[1].rstrip().endswith("(sink.overwrite=true to redo it)")
    # block is outside the id of a learner whose numbers do not depend on it: block=1's per-round timings were asked
    code, out, _ = okl_run(*keys, "checkpoints=5", "block=1")
    assert code == 0 and "(played with block=256, not 1 (numbers equal to roundoff, timings not): sink." in out
    # a time budget asked of a complete run was ignored without a word
    code, out, _ = okl_run(*keys, "checkpoints=5", "timeout_s=0.01")
    assert code == 0 and re.search(
        r"\(played with no time budget, not timeout_s=0.01 \([\d.e-]+ s of learner time\)", out
    )


def test_a_ctrl_c_of_a_parallel_sweep_says_its_runs_keep_their_last_saved_part():
    """joblib's workers are stopped at once: a run keeps its rounds up to its last closed part, where the line said
    every round played was saved (hunt 9: 23,552 of 25,000 kept)."""
    from okl.cli.run import _kept

    assert _kept(["-m", "seed=0,1"]) == _kept(["hydra/launcher=basic"]) == "the rounds played so far are saved"
    for launcher in ("joblib", "slurm"):
        assert "up to its last saved part" in _kept(["-m", f"hydra/launcher={launcher}", "seed=0,1"])
