"""A stopped run resumes from its last snapshot and ends bit-identical to an uninterrupted run (timings
aside): killed with SIGKILL (its manifest says running, its process is gone), interrupted, or timed out
(tests/test_cli.py): every registered learner, and EWA over every kind of expert, after a kill at its first
closed part; one learner of each family killed mid-way at a real SIGKILL. It starts over when resuming
would not be exact."""

import json
import pickle
import signal

import pandas as pd
import pytest

from helpers import KILLED, killed_after_first_part, only_run, override, spawn_run, wait_for_parts, write_susy
from okl import results
from okl.errors import DataError
from okl.learners import LEARNERS
from test_learners import SETTINGS

FAMILIES = {  # family: (overrides, rounds, part_rows), long enough that the kill lands mid-way
    "awv/ridge": (["learner=pkrr_taylor"], 100_000, 500),
    "random features": (["learner=fogd"], 60_000, 500),
    "KORS dictionary": (["learner=pkrr_nystrom"], 6_000, 300),
    "KONS": (["learner=pros_n_kons"], 4_000, 300),
    "POLK (held-out checkpoints)": (["learner=polk", "dataset=multidist"], 60_000, 500),
    "AdaRaker": (["learner=adaraker"], 300_000, 500),
}


def learner_overrides(name):
    """okl-run overrides for the learner ``name`` with the common tests' small settings, on a stream of its task."""
    task = "regression" if "regression" in LEARNERS.get(name).tasks else "binary"
    return [
        f"learner={name}",
        f"dataset.task={task}",
        *(f"++learner.{k}={override(v)}" for k, v in SETTINGS[name].items()),
    ]


def ewa_overrides(task):
    """EWA over one expert of every kind that is online and learns ``task``."""
    experts = [
        {"name": name, **SETTINGS[name]}
        for name in LEARNERS.names()
        if name != "ewa" and LEARNERS.get(name).beforehand is None and task in LEARNERS.get(name).tasks
    ]
    return ["learner=ewa", f"dataset.task={task}", f"++learner.experts={override(experts)}"]


CASES = {name: learner_overrides(name) for name in LEARNERS.names()} | {
    f"ewa over every {task} expert": ewa_overrides(task) for task in ("regression", "binary")
}


@pytest.mark.parametrize("case", CASES)
def test_every_learner_resumes_bit_identically_after_a_kill_at_its_first_part(case, okl_run, tmp_path, monkeypatch):
    """A snapshot that copied a learner's views apart from its buffers (bsgd's support vectors) resumed as
    "complete" with other predictions in most rows."""
    args = [*CASES[case], "n=600", "block=64", "sink.part_rows=128", "checkpoints=0", "progress=false"]
    assert killed_after_first_part(tmp_path / "killed", *args) == KILLED
    killed = only_run(tmp_path / "killed").manifest()
    snapshot = killed.snapshot["rounds"]
    assert killed.status == "running" and 0 < snapshot == killed.rounds < 600

    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "killed"))
    code, out, err = okl_run(*args)
    assert code == 0 and f"complete (resumed from round {snapshot:,})" in out, err
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "clean"))
    assert okl_run(*args)[0] == 0
    (a, _), (b, _) = content(tmp_path / "killed"), content(tmp_path / "clean")
    assert len(b) == 600 and list(a.columns) == list(b.columns)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def content(root):
    """The run's rounds and held-out scores without the timings."""
    run = only_run(root)
    rounds = run.rounds().to_pandas().drop(columns=["elapsed_ns"])
    heldout = run.heldout()
    return rounds, None if heldout is None else heldout.to_pandas().drop(columns=["seconds"])


def stop(root, sig, overrides):
    proc = spawn_run(root, *overrides)
    wait_for_parts(root, 2, proc)
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    m = only_run(root).manifest()
    assert m.status in ("running", "interrupted") and m.rounds < m.planned_rounds, "stopped too late"
    return m


@pytest.mark.parametrize("family", FAMILIES)
def test_a_killed_run_resumes_bit_identically(family, okl_run, tmp_path, monkeypatch):
    overrides, rounds, part_rows = FAMILIES[family]
    length = "dataset.length" if "dataset=multidist" in overrides else "n"
    args = [*overrides, f"{length}={rounds}", f"sink.part_rows={part_rows}", "progress=false"]
    killed = stop(tmp_path / "killed", signal.SIGKILL, args)
    snapshot = killed.snapshot["rounds"]  # the first part's at least; a later one when it was due (a state that
    # costs over 20 ms to save waits 20 times its cost: under load, KORS's second part had none)
    assert killed.status == "running" and snapshot >= part_rows and len(killed.parts) >= 2

    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "killed"))
    code, out, err = okl_run(*args)
    assert code == 0, err
    assert f"complete (resumed from round {snapshot:,})" in out, out
    resumed = only_run(tmp_path / "killed").manifest()
    assert resumed.resumed[0]["from_round"] == snapshot and resumed.snapshot is None
    assert not only_run(tmp_path / "killed").snapshots()  # complete: nothing left to resume

    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "clean"))
    assert okl_run(*args)[0] == 0
    (a, test_a), (b, test_b) = content(tmp_path / "killed"), content(tmp_path / "clean")
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    if test_b is not None:
        pd.testing.assert_frame_equal(test_a, test_b, check_exact=True)


def test_a_stopped_run_without_a_snapshot_says_it_starts_over(okl_run, results_root):
    """A run killed before its first part was played again from round 1 without a word."""
    assert okl_run("learner=fogd", "n=300", "progress=false")[0] == 0
    path = only_run(results_root).path / "run.json"
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps({**manifest, "status": "interrupted", "snapshot": None}))  # as a kill -9 leaves it
    code, out, _ = okl_run("learner=fogd", "n=300", "progress=false")
    assert code == 0 and "complete (started over: the stopped run had saved no snapshot yet" in out


def test_an_interrupted_run_resumes_and_a_changed_block_starts_over(okl_run, tmp_path, monkeypatch):
    args = ["learner=pkrr_taylor", "n=100000", "sink.part_rows=500", "progress=false"]
    interrupted = stop(tmp_path / "a", signal.SIGINT, args)
    assert interrupted.status == "interrupted" and interrupted.rounds >= interrupted.snapshot["rounds"]
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "a"))
    code, out, _ = okl_run(*args)
    assert code == 0 and f"(resumed from round {interrupted.snapshot['rounds']:,})" in out

    stop(tmp_path / "b", signal.SIGKILL, args)
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "b"))
    code, out, _ = okl_run(*args, "block=128")  # other block boundaries: resuming would not be exact
    assert code == 0 and "resumed" not in out and "complete (started over: block=128, the stopped run used " in out
    restarted = only_run(tmp_path / "b").manifest()
    assert not restarted.resumed and restarted.started_over.startswith("block=128")
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "c"))
    assert okl_run(*args, "block=128")[0] == 0
    pd.testing.assert_frame_equal(content(tmp_path / "b")[0], content(tmp_path / "c")[0], check_exact=True)

    # okl's sources edited since the stop, at the same commit (an editable install's uncommitted change): it resumed
    # the rounds of the old code under the new and ended "complete"
    stop(tmp_path / "d", signal.SIGKILL, args)
    from okl.runner import lifecycle

    monkeypatch.setattr(lifecycle, "source_digest", lambda: "0" * 64)
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "d"))
    code, out, _ = okl_run(*args)
    assert (
        code == 0 and "resumed" not in out and "complete (started over: its snapshot was written by other code" in out
    )


def test_a_run_json_pointing_its_snapshot_elsewhere_starts_over_without_unpickling_it(okl_run, results_root):
    """A tampered results root ran arbitrary code on the next okl-run."""
    from test_store import Planted

    args = ["learner=pkrr_taylor", "n=600", "block=64", "sink.part_rows=128", "progress=false"]
    assert killed_after_first_part(results_root, *args) == KILLED
    run = only_run(results_root)
    planted = results_root / "planted.pkl"
    planted.write_bytes(pickle.dumps(Planted(results_root / "pwned")))
    manifest = run.manifest()
    manifest.snapshot = {**manifest.snapshot, "path": str(planted)}
    run.write_manifest(manifest)
    code, out, err = okl_run(*args)
    assert code == 0, err
    assert f"complete (started over: its snapshot {planted} lies outside {run.path / 'snapshots'})" in out
    assert not (results_root / "pwned").exists() and only_run(results_root).manifest().rounds == 600


def test_a_run_resumed_on_other_data_starts_over_and_says_why(okl_run, results_root, no_data, monkeypatch):
    """A run started on one copy of a dataset and resumed with another held rounds of both."""
    write_susy(no_data, monkeypatch, n=600, seed=0)
    write_susy(no_data / "other", monkeypatch, n=600, seed=1)
    args = ["learner=pkrr_taylor", "dataset=susy", "n=500", "block=64", "sink.part_rows=128", "progress=false"]
    assert killed_after_first_part(results_root, *args) == KILLED
    stopped = only_run(results_root).manifest()
    assert len(stopped.data_sha256) == 64
    monkeypatch.setenv("OKL_DATA_DIR", str(no_data / "other"))
    code, out, err = okl_run(*args)
    assert code == 0, err
    assert "complete (started over: the dataset's files hold other content than the stopped run read (sha256 " in out
    assert f", was {stopped.data_sha256[:12]})" in out
    finished = only_run(results_root).manifest()
    assert finished.rounds == 500 and not finished.resumed
    assert finished.data_sha256 not in (None, stopped.data_sha256)

    monkeypatch.setenv("OKL_DATA_DIR", str(no_data))  # the same content: it resumes
    assert killed_after_first_part(results_root, *args, "sink.overwrite=true") == KILLED
    code, out, _ = okl_run(*args)
    assert code == 0 and "complete (resumed from round " in out


@pytest.mark.parametrize("part", [0, 1])
def test_a_stopped_run_with_a_truncated_part_starts_over_and_ends_complete_and_readable(
    part, okl_run, results_root, tmp_path, monkeypatch
):
    """A truncated middle part ended up in a run marked complete; a truncated last part failed every
    resume with ArrowInvalid."""
    args = ["learner=pkrr_taylor", "n=600", "block=64", "sink.part_rows=128", "progress=false"]
    assert killed_after_first_part(results_root, *args, parts=2) == KILLED
    run = only_run(results_root)
    path = run.part_path(part)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    code, out, err = okl_run(*args)
    assert code == 0, err
    assert f"complete (started over: its part rounds/{path.name} cannot be read (ArrowInvalid))" in out
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "clean"))
    assert okl_run(*args)[0] == 0
    pd.testing.assert_frame_equal(content(results_root)[0], content(tmp_path / "clean")[0], check_exact=True)


def test_okl_regret_and_results_refuse_a_run_not_finished_and_name_a_corrupt_part(okl_run, results_root, capsys):
    """okl-regret on a run still playing exited 0 (the run then finished with regret in some rows); on a
    corrupt part it printed a traceback."""
    from okl.cli.regret import main as regret_main

    args = ["learner=pkrr_taylor", "n=600", "block=64", "sink.part_rows=128", "progress=false"]
    assert killed_after_first_part(results_root, *args) == KILLED
    run = only_run(results_root)
    with pytest.raises(SystemExit) as exc:
        regret_main([str(run.path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert f"okl-regret: error: run '{run.path}' is stopped, not finished: run its okl-run command again" in err
    assert okl_run(*args)[0] == 0
    path = run.part_path(1)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(SystemExit) as exc:
        regret_main([str(run.path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert f"okl-regret: error: {path}: cannot be read (" in err and "with sink.overwrite=true to play it again" in err
    with pytest.raises(DataError, match=rf"^{path}: cannot be read \(.*\): run the run's okl-run command again with"):
        results.load(results_root)


def test_a_run_that_failed_on_a_full_disk_resumes_from_its_snapshot(okl_run, tmp_path, monkeypatch):
    """A run stopped by a full disk ("failed", its parts and snapshot saved) was played again from round 1 on the rerun,
    its saved rounds cleared without a word; it resumes like a killed run, to the same numbers."""
    args = ["learner=pkrr_taylor", "n=100000", "sink.part_rows=500", "progress=false"]
    stopped = stop(tmp_path / "a", signal.SIGKILL, args)
    path = only_run(tmp_path / "a").path / "run.json"
    error = "cannot write rounds/part-00003.parquet: No space left on device; set OKL_RESULTS ..."
    path.write_text(json.dumps({**json.loads(path.read_text()), "status": "failed", "error": error}))
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "a"))
    code, out, _ = okl_run(*args)
    assert code == 0 and f"complete (resumed from round {stopped.snapshot['rounds']:,})" in out, out
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path / "b"))
    assert okl_run(*args)[0] == 0
    pd.testing.assert_frame_equal(content(tmp_path / "a")[0], content(tmp_path / "b")[0], check_exact=True)


def test_an_adaptive_run_stopped_says_why_it_starts_over(okl_run, results_root):
    """An adversary's run keeps no snapshot (it chooses each round from the learner): its rerun said that the stopped
    run "had saved no snapshot yet (the first comes with its first part of rounds)"."""
    args = ["learner=pkawv_taylor", "dataset=adversary", "n=60", "analyses=false", "progress=false"]
    assert okl_run(*args)[0] == 0
    path = only_run(results_root).path / "run.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "status": "interrupted"}))
    code, out, _ = okl_run(*args)
    assert code == 0 and "complete (started over: an adaptive environment's run keeps no snapshot" in out, out


def test_a_resumed_runs_wall_time_counts_its_earlier_attempts(okl_run, results_root):
    """wall_s was the last attempt's alone while learner_s adds every attempt's rounds: a run resumed after its time
    budget ended with 3.4 s of wall time for 4.7 s of learner time."""
    args = ["learner=kons", "n=2000", "analyses=false", "progress=false"]
    assert okl_run(*args, "timeout_s=0.5")[0] == 0
    first = only_run(results_root).manifest()
    assert first.status == "timeout" and first.rounds < 2000
    code, out, _ = okl_run(*args)
    assert code == 0 and "resumed from round" in out, out
    done = only_run(results_root).manifest()
    assert done.status == "complete" and done.wall_s >= done.learner_s > first.learner_s
    assert done.peak_rss_bytes > 0  # the larger of this attempt's and the earlier ones' up to the snapshot


def test_a_resumed_run_keeps_no_held_out_score_past_its_snapshot(results_root):
    """Scores at checkpoints past the snapshot are played again; with none before it, test.parquet was left as the
    killed attempt wrote it, so a run stopped again before its next checkpoint kept scores at rounds it never
    reached by its manifest."""
    from okl.store import RoundWriter

    assert killed_after_first_part(results_root, "learner=fogd", "n=600", "block=64", "sink.part_rows=128") == KILLED
    run = only_run(results_root)
    previous = run.manifest()
    past = previous.snapshot["rounds"] + 64
    run.write_heldout([{"t": past, "test_loss": 0.5, "model_size": 1.0, "seconds": 0.0}])
    RoundWriter(run, 128, 60.0).resume(previous, {})
    assert run.heldout() is None
    run.write_heldout([{"t": t, "test_loss": 0.5, "model_size": 1.0, "seconds": 0.0} for t in (64, past)])
    RoundWriter(run, 128, 60.0).resume(run.manifest(), {})
    assert run.heldout().column("t").to_pylist() == [64]
