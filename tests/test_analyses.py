"""Post-run analyses never hold a run hostage: the run is complete once its rounds are written, Ctrl-C
stops an analysis at once, and running the command again computes only what is missing."""

import contextlib
import os
import signal
import subprocess
import sys
import time

from helpers import only_run, spawn_run
from okl.dictionary import effective_dimension as deff
from okl.store import find

ARGS = ["learner=pkrr_nystrom", "n=6000"]  # the exact d_eff of 6,000 rounds takes seconds


def wait_for_status(root, status, proc, limit=120):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if any(run.status() == status for run in find(root)):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError(f"the run never became {status}")


def test_ctrl_c_stops_the_effective_dimension_at_once_and_the_run_stays_complete(tmp_path, okl_run, monkeypatch):
    proc = spawn_run(tmp_path, *ARGS)
    wait_for_status(tmp_path, "complete", proc)
    time.sleep(0.5)  # inside the analysis
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    stopped = time.monotonic() - start  # judged against the whole analysis below (a fixed bound failed under load)
    assert proc.returncode == 130 and "Traceback" not in err
    assert "complete, 6,000 rounds" in out and "effective dimension" in out and "run the command again" in out
    m = only_run(tmp_path).manifest()
    assert m.status == "complete" and m.rounds == 6000 and "effective_dimension" not in m.analyses

    parts = [p.stat().st_mtime_ns for p in only_run(tmp_path).parts()]
    monkeypatch.setenv("OKL_RESULTS", str(tmp_path))
    start = time.monotonic()
    code, out, err = okl_run(*ARGS, "progress=true")
    assert code == 0 and "already complete" in out  # not played again
    assert stopped < (time.monotonic() - start) / 2, "the analysis did not stop at once"  # ~0.1 of it, idle
    assert "effective dimension, exact on 6,000 rounds" in err  # its progress line
    m = only_run(tmp_path).manifest()
    entry = m.analyses["effective_dimension"]
    assert entry["method"] == "exact" and entry["rounds"] == 6000
    assert [p.stat().st_mtime_ns for p in only_run(tmp_path).parts()] == parts
    assert m.snapshot is None and not only_run(tmp_path).snapshots()


def test_analyses_false_plays_the_rounds_only_and_a_later_run_computes_them(okl_run, results_root, monkeypatch):
    """An unasked exact d_eff took 50× a run's 3 s with no key to turn it off; analyses=false skips it, keeps the
    final learner for it, and is not part of the run's identity: the same command with analyses=true computes it."""
    monkeypatch.setattr(deff, "EXACT_UP_TO", 1000)  # the Nyström estimate: it reads the learner the run left
    code, out, err = okl_run("learner=pkrr_nystrom", "n=3000", "progress=true", "analyses=false")
    assert code == 0 and "complete, 3,000 rounds" in out and "effective dimension" not in err, err
    run = only_run(results_root)
    assert "effective_dimension" not in run.manifest().analyses and run.manifest().snapshot is not None
    code, out, err = okl_run("learner=pkrr_nystrom", "n=3000", "progress=true")
    assert code == 0 and "already complete" in out and "effective dimension, Nyström estimate" in err
    assert only_run(results_root).path == run.path and run.manifest().analyses["effective_dimension"]["value"] > 0


def test_an_effective_dimension_too_large_for_memory_uses_the_nystrom_estimate(okl_run, results_root, monkeypatch):
    monkeypatch.setattr(deff, "EXACT_UP_TO", 1000)
    code, out, err = okl_run("learner=pkrr_nystrom", "n=3000", "progress=true")
    assert code == 0, err
    assert "effective dimension, Nyström estimate on the dictionary (3,000 rounds" in err
    entry = only_run(results_root).manifest().analyses["effective_dimension"]
    assert entry["method"] == "nystrom" and entry["value"] > 0 and entry["dictionary"] > 0


def test_a_finished_run_saves_its_learner_only_for_the_analyses_that_read_it(okl_run, results_root, monkeypatch):
    """kernel_awv on 6,000 rounds pickled its 288 MB state at the end only to delete it: without post-run analyses
    the last part has no snapshot, nor with regret (it plays the comparator, not the learner); with the effective
    dimension of a KORS learner (its dictionary), the learner is saved for it."""
    from okl.store import RunDir

    written, write = [], RunDir.write_snapshot
    monkeypatch.setattr(RunDir, "write_snapshot", lambda run, k, state: written.append(k) or write(run, k, state))
    args = ["n=300", "sink.part_rows=100", "block=50", "progress=false"]  # three parts; the first one's snapshot
    # is always taken, the second's when due (under load it may wait: okl.store.writer), the last's as asked
    assert okl_run("learner=pkrr_taylor", *args)[0] == 0
    assert written[0] == 1 and 3 not in written
    written.clear()
    assert okl_run("learner=pkrr_taylor", *args, "seed=1", "comparator=krr")[0] == 0
    assert written[0] == 1 and 3 not in written
    written.clear()
    assert okl_run("learner=pkrr_nystrom", *args)[0] == 0
    assert written[0] == 1 and written[-1] == 3


def test_an_analysis_child_dies_with_its_parent_killed(tmp_path):
    """The analysis runs in a forked child that ignores Ctrl-C (its parent stops it): a `kill -9` of okl-run left it
    computing on for minutes, with GBs, beside the rerun's own."""
    from okl.system import process_alive

    pid_file = tmp_path / "child.pid"
    script = (
        "import os, time\n"
        "from okl.analyses.base import in_child\n"
        f"in_child(lambda: (open({str(pid_file)!r}, 'w').write(str(os.getpid())), time.sleep(60)), 'x', False)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        for _ in range(600):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        child = int(pid_file.read_text())
        assert process_alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        for _ in range(100):
            if not process_alive(child):
                break
            time.sleep(0.05)
        assert not process_alive(child)
    finally:
        parent.kill()
        with contextlib.suppress(ProcessLookupError, UnboundLocalError):
            os.kill(child, signal.SIGKILL)
