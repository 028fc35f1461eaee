"""The store: parts close by rows or time at block ends and cover every round, snapshots follow them,
caches are shared safely; results.load reads many runs with typed partition keys."""

import hashlib
import json
import os
import pickle
import signal
import subprocess
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

from okl import results
from okl.errors import DataError
from okl.store import Cache, RoundWriter, RunDir


def writer(path, part_rows, part_seconds=3600.0):
    return RoundWriter(RunDir(path), part_rows, part_seconds)


def play(sink, total, block, snapshot=None):
    """Append ``total`` rows in blocks, closing parts when due, as the runner does."""
    for start in range(0, total, block):
        sink.append(rows(start, min(block, total - start)))
        if sink.due():
            sink.close_part(snapshot and (lambda start=start: snapshot(start)))


def every_part(monkeypatch):
    """A snapshot with every part, whatever the time its saving takes on a loaded machine (okl.store.writer's
    rule waits 20 times the cost of one over SNAPSHOT_FREE_S)."""
    from okl.store import writer as module

    monkeypatch.setattr(module, "SNAPSHOT_FREE_S", float("inf"))


def rows(start, m):
    t = np.arange(start + 1, start + m + 1, dtype=np.int64)
    return {
        "t": t,
        "y": t * 0.5,
        "y_hat": t * 0.25,
        "loss": np.ones(m),
        "cum_loss": t * 1.0,
        "elapsed_ns": t * 10,
        "model_size": np.full(m, 3, dtype=np.int64),
    }


def test_parts_close_at_the_first_block_end_after_part_rows_and_cover_every_round(tmp_path):
    sink = writer(tmp_path / "run", part_rows=1000)
    sink.start(learner="x")
    for start in range(0, 3500, 300):
        sink.append(rows(start, min(300, 3500 - start)))
        if sink.due():
            sink.close_part()
        on_disk = json.loads((tmp_path / "run" / "run.json").read_text())["rounds"]
        end = min(start + 300, 3500)
        assert on_disk == (end if end == 3500 else 1200 * (end // 1200))  # nothing on disk before a part closes
    sink.finish(status="complete")
    parts = sorted((tmp_path / "run" / "rounds").glob("*.parquet"))
    assert [pq.ParquetFile(p).metadata.num_rows for p in parts] == [1200, 1200, 1100]
    table = pq.read_table(tmp_path / "run" / "rounds")
    np.testing.assert_array_equal(table["t"].to_numpy(), np.arange(1, 3501))
    assert table["regret"].null_count == 3500
    m = json.loads((tmp_path / "run" / "run.json").read_text())
    assert m["status"] == "complete" and m["rounds"] == 3500 and len(m["parts"]) == 3


def test_a_kill_between_a_snapshot_and_its_manifest_leaves_the_named_snapshot(tmp_path, monkeypatch):
    """The older snapshot was deleted before the manifest named the new one: a kill in between left a
    manifest pointing at a missing file, and the run started over instead of resuming."""
    every_part(monkeypatch)
    sink = writer(tmp_path, part_rows=300)
    sink.start()
    play(sink, 600, 300, snapshot=lambda start: {"after": start + 300})
    killed = RuntimeError("killed while writing the manifest")

    def kill(self, manifest):
        raise killed

    monkeypatch.setattr(RunDir, "write_manifest", kill)
    with pytest.raises(RuntimeError):
        play(sink, 300, 300, snapshot=lambda start: {"after": 900})
    m = RunDir(tmp_path).manifest()
    assert m.snapshot["rounds"] == 600
    assert RunDir(tmp_path).read_snapshot(m.snapshot) == {"after": 600}


def test_a_part_also_closes_after_part_seconds(tmp_path):
    sink = writer(tmp_path, part_rows=10**9, part_seconds=1e-9)  # every block end is past the time limit
    sink.start()
    play(sink, 1000, 300, snapshot=lambda start: {"after": min(start + 300, 1000)})
    assert [pq.ParquetFile(p).metadata.num_rows for p in RunDir(tmp_path).parts()] == [300, 300, 300, 100]
    m = RunDir(tmp_path).manifest()
    snapshot = tmp_path / "snapshots" / "part-00003.pkl"
    assert m.snapshot == {
        "path": "snapshots/part-00003.pkl",
        "sha256": hashlib.sha256(snapshot.read_bytes()).hexdigest(),
        "rounds": 1000,
        "parts": 4,
    }
    assert RunDir(tmp_path).read_snapshot(m.snapshot) == {"after": 1000}
    assert [p.name for p in (tmp_path / "snapshots").iterdir()] == ["part-00003.pkl"]  # only the last is kept


class Planted:
    """A pickle that runs code when it is loaded (it creates the file ``path``)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_a_snapshot_outside_its_run_directory_or_other_than_recorded_is_never_unpickled(tmp_path):
    """A tampered run.json pointed its snapshot at a pickle elsewhere: the next okl-run ran its code."""
    sink = writer(tmp_path / "run", part_rows=100)
    sink.start()
    play(sink, 200, 100, snapshot=lambda start: {"after": start + 100})
    entry = RunDir(tmp_path / "run").manifest().snapshot
    planted = tmp_path / "planted.pkl"
    planted.write_bytes(pickle.dumps(Planted(tmp_path / "pwned")))
    run = RunDir(tmp_path / "run")
    for path in (str(planted), "../planted.pkl", "snapshots/../../planted.pkl", "run.json"):
        with pytest.raises(DataError, match=r"^its snapshot .* lies outside .*snapshots$"):
            run.read_snapshot({**entry, "path": path, "sha256": hashlib.sha256(planted.read_bytes()).hexdigest()})
    (tmp_path / "run" / entry["path"]).write_bytes(planted.read_bytes())  # in place, its sha256 not recorded
    with pytest.raises(DataError, match=r"^its snapshot snapshots/part-00001.pkl is not the one run.json records"):
        run.read_snapshot(entry)
    with pytest.raises(DataError, match="is not the one run.json records"):
        run.read_snapshot({"path": entry["path"]})  # a snapshot written before sha256 were recorded
    assert not (tmp_path / "pwned").exists()


def test_a_snapshot_waits_twenty_times_its_cost_and_a_kill_replays_no_more(tmp_path, monkeypatch):
    """online_krr on cod-rna spent two thirds of its wall time pickling a multi-GB factor every 15 s, and kernel_awv
    on 6,000 rounds in parts of 250 spent twice its learning time on snapshots of under a second each (its state
    grows). A snapshot is now due when the time since the last one is 1/SNAPSHOT_SHARE times the last one's cost:
    snapshots cost about 5% of the run, and a kill replays at most that interval plus a part (a budget of 5% of
    the whole attempt, spent early on a growing state, left 3,300 of 3,584 rounds to replay)."""
    from okl.store import writer as module

    clock = {"now": 0.0}
    monkeypatch.setattr(module.time, "monotonic", lambda: clock["now"])

    def closed(root, parts, gap, cost):  # part k closes `gap` s after the previous one; its snapshot "takes" cost(k) s
        sink, taken, replay = writer(root, part_rows=100), [], []
        sink.start()
        last_end, last_cost = 0.0, 0.0
        for k in range(parts):
            clock["now"] += gap
            before = clock["now"]
            sink.append(rows(100 * k, 100))
            sink.close_part(lambda k=k: clock.update(now=clock["now"] + cost(k)) or {"after": 100 * (k + 1)})
            taken.append(RunDir(root).manifest().snapshot["rounds"])
            if taken[-1] == 100 * (k + 1):  # taken now: the interval before it paid for the last one
                assert last_cost <= module.SNAPSHOT_FREE_S or before - last_end >= last_cost / module.SNAPSHOT_SHARE
                last_end, last_cost = clock["now"], cost(k)
            replay.append(clock["now"] - last_end)  # what a kill now would play again
            assert replay[-1] < last_cost / module.SNAPSHOT_SHARE + gap
        return sink, taken

    # 5 s each, parts every 10 s: part 1's, then part 11's (100 s after part 1's ended), none after
    sink, taken = closed(tmp_path, 20, 10.0, lambda k: 5.0)
    assert taken == [100] * 10 + [1100] * 10 and clock["now"] == 10 * 20 + 2 * 5
    sink.finish(lambda: {"after": 2000}, status="complete")
    assert RunDir(tmp_path).manifest().snapshot["rounds"] == 2000
    # a state that grows (kernel_awv) after 40 cheap snapshots: rarer as it grows, and never far behind (under the
    # 5%-of-the-attempt budget, the cheap ones left the first costly one to wait 12 s)
    clock["now"] = 0.0
    _, taken = closed(tmp_path / "growing", 200, 0.02, lambda k: 0.015 if k < 40 else 0.05 * (k - 39))
    assert taken[:40] == [100 * (k + 1) for k in range(40)] and 2 <= len(set(taken[40:])) < 10
    # cheap ones (a small learner's state) at every part
    clock["now"] = 0.0
    _, taken = closed(tmp_path / "cheap", 10, 0.001, lambda k: 0.01)
    assert taken == [100 * (k + 1) for k in range(10)]
    sink, _ = closed(tmp_path / "b", 3, 10.0, lambda k: 5.0)
    sink.finish(lambda: {"after": 300}, status="timeout")  # nothing buffered: the final state is still saved
    assert RunDir(tmp_path / "b").manifest().snapshot["rounds"] == 300


def test_a_part_without_a_column_asked_for_is_a_one_line_error(tmp_path):
    """pq.ParquetFile.read (which, unlike pq.read_table, imports no pandas) leaves out a column the file lacks: a
    part without ``y`` gave okl-regret a KeyError or a schema mismatch instead of the line naming the part."""
    import pyarrow.parquet as pq

    sink = writer(tmp_path, part_rows=100)
    sink.start()
    play(sink, 200, 100)
    sink.finish(status="complete")
    run = RunDir(tmp_path)
    path = run.part_path(1)
    pq.write_table(pq.read_table(path).drop_columns(["y"]), path)
    with pytest.raises(DataError, match=rf"^{path}: cannot be read \(it has no column y\): run the run's okl-run"):
        run.rounds(["t", "y"])
    with pytest.raises(DataError, match=rf"^{run.path / 'rounds'}: cannot be read \(.*\): run the run's okl-run"):
        run.rounds()  # its columns differ from the first part's
    assert run.rounds(["t"])["t"].to_pylist() == list(range(1, 201))


def test_resume_keeps_the_snapshot_parts_and_drops_later_ones(tmp_path, monkeypatch):
    every_part(monkeypatch)
    first = writer(tmp_path, part_rows=200)
    first.start(planned_rounds=1000)
    play(first, 700, 100, snapshot=lambda start: start + 100)  # parts [1..200], [201..400], [401..600]
    first.checkpoint(t=300, test_loss=1.0, model_size=3, seconds=0.0)
    first.checkpoint(t=650, test_loss=2.0, model_size=3, seconds=0.0)
    first.finish(None, status="interrupted")  # rounds 601..700 written without a snapshot
    previous = RunDir(tmp_path).manifest()
    assert previous.rounds == 700 and previous.snapshot["rounds"] == 600

    second = writer(tmp_path, part_rows=200)
    second.resume(previous, {"argv": ["again"]})
    assert second.manifest.rounds == 600 and len(RunDir(tmp_path).parts()) == 3
    assert RunDir(tmp_path).heldout()["t"].to_pylist() == [300]  # the checkpoint after the snapshot is redone
    for start in range(600, 1000, 100):
        second.append(rows(start, 100))
    second.finish(None, status="complete")
    m = RunDir(tmp_path).manifest()
    assert m.rounds == 1000 and m.resumed[0]["from_round"] == 600 and m.argv == ["again"]
    np.testing.assert_array_equal(RunDir(tmp_path).rounds(["t"])["t"].to_numpy(), np.arange(1, 1001))


def test_restart_clears_stale_parts(tmp_path):
    first = writer(tmp_path, part_rows=10)
    first.start()
    play(first, 35, 5)
    first.finish(status="interrupted")
    second = writer(tmp_path, part_rows=10)
    second.start()
    second.append(rows(0, 12))
    second.finish(status="complete")
    assert pq.read_table(tmp_path / "rounds").num_rows == 12


def test_cache_round_trips_and_leaves_no_temporary_files(tmp_path):
    cache = Cache(tmp_path, "things")
    assert cache.get_json("k") is None and cache.get_arrays("k") is None
    cache.put_json("k", {"value": 1.5})
    cache.put_arrays("k", losses=np.arange(3.0), penalty=np.float64(2.0))
    assert cache.get_json("k") == {"value": 1.5}
    saved = cache.get_arrays("k")
    np.testing.assert_array_equal(saved["losses"], np.arange(3.0))
    assert float(saved["penalty"]) == 2.0
    assert sorted(p.name for p in cache.folder.iterdir()) == ["k.json", "k.npz"]


@pytest.fixture
def two_runs(tmp_path):
    for learner, seed, status in (("a", 0, "complete"), ("b", 1, "timeout")):
        sink = writer(tmp_path / f"learner={learner}/dataset=s/seed={seed}/run=0123456789ab", part_rows=50)
        sink.start(learner=learner, seed=seed)
        play(sink, 120, 60)
        sink.finish(status=status)
    return tmp_path


def test_load_returns_all_rounds_with_partition_columns(two_runs):
    df = results.load(two_runs)
    assert len(df) == 240
    assert sorted(df.learner.unique()) == ["a", "b"]
    assert df.seed.dtype == np.int64 and df.run.iloc[0] == "0123456789ab"  # all-digit hashes stay strings
    assert results.load(two_runs, learner="b").seed.unique().tolist() == [1]
    assert len(results.load(two_runs, status="complete")) == 120
    assert list(results.load(two_runs, columns=["t"]).columns) == ["learner", "dataset", "seed", "run", "t"]
    assert results.load(two_runs, learner="zzz").empty


def test_runs_lists_manifests(two_runs):
    runs = results.runs(two_runs)
    assert sorted(runs.status) == ["complete", "timeout"] and (runs.rounds == 120).all()


def test_results_root_defaults_to_env(two_runs, monkeypatch):
    monkeypatch.setenv("OKL_RESULTS", str(two_runs))
    assert len(results.load()) == 240


def test_a_missing_results_root_is_an_error_not_an_empty_table(tmp_path):
    from okl.errors import ConfigError

    for read in (results.load, results.runs):
        with pytest.raises(ConfigError, match=r"no results root at '.*typo': pass the folder okl-run wrote to"):
            read(tmp_path / "typo")


def test_a_snapshot_streams_the_state_it_never_holds_a_second_copy(tmp_path):
    """An exact kernel's factor (6.6 GB on cod-rna) was pickled into memory first: the run peaked at twice its
    state. Written, the peak stays at the state; read back, it grows by the state once (the value itself)."""
    import numpy as np

    from okl.store.files import read_pickle, write_pickle
    from okl.system import _proc_bytes, peak_rss, reset_peak_rss

    size = 400 * 2**20
    state = {"factor": np.ones(size // 8), "view": None}
    state["view"] = state["factor"][: size // 16]
    if not reset_peak_rss():
        pytest.skip("no /proc/self/clear_refs here")
    before = _proc_bytes("/proc/self/status", "VmRSS")
    sha = write_pickle(tmp_path / "state.pkl", state)
    assert peak_rss() - before < 0.1 * size
    del state
    reset_peak_rss()
    before = _proc_bytes("/proc/self/status", "VmRSS")
    again = read_pickle(tmp_path / "state.pkl", sha)
    assert peak_rss() - before < 1.25 * size and again["view"].base is not None
    np.testing.assert_array_equal(again["factor"], 1.0)
    with pytest.raises(ValueError, match="sha256"):
        read_pickle(tmp_path / "state.pkl", "0" * 64)


def test_a_manifest_reads_back_what_it_wrote_and_run_json_files_of_before_it(tmp_path):
    """run.json as a typed record: fields by name, analyses' entries under their keys at the top level (as
    every run.json written before the record holds them), a missing field its default, a wrong name an error."""

    old = {"learner": "fogd", "status": "complete", "rounds": 7, "snapshot": None, "regret": {"regret": 1.5}}
    (tmp_path / "run.json").write_text(json.dumps(old))
    m = RunDir(tmp_path).manifest()
    assert (m.learner, m.rounds, m.snapshot, m.parts, m.analyses) == ("fogd", 7, None, [], {"regret": {"regret": 1.5}})
    m.update(status="timeout", wall_s=2.0)
    RunDir(tmp_path).write_manifest(m)
    again = json.loads((tmp_path / "run.json").read_text())
    assert again["regret"] == {"regret": 1.5} and again["status"] == "timeout" and "analyses" not in again
    assert RunDir(tmp_path).manifest() == m
    with pytest.raises(TypeError, match="not fields of a manifest: wal_s"):
        m.update(wal_s=1.0)


def test_a_column_is_the_one_pa_array_makes_and_one_dimensional():
    import pyarrow as pa

    from okl.store.files import column

    g = np.random.default_rng(0)
    for values in (g.standard_normal(7), g.integers(-5, 5, 7), np.array([np.nan, np.inf, 0.0]), [3, 1], [0.5], []):
        expected = pa.array(np.asarray(values, dtype=np.float64 if len(values) == 0 else None))
        ours = column(values)
        assert ours.type == expected.type and ours.null_count == expected.null_count == 0  # NaN a value, not null
        assert ours.to_numpy().tobytes() == expected.to_numpy().tobytes()
    X = g.standard_normal((4, 2))
    assert column(X[:, 1]).equals(pa.array(X[:, 1].copy()))  # a strided view: its values, not its buffer's
    for values in (np.array([True, False]), np.array([1.0, None])):  # booleans, nulls: pyarrow's conversion
        assert column(values).equals(pa.array(values))
    assert column(np.arange(3, dtype=">f8")).equals(pa.array(np.arange(3.0)))  # pa.array refuses other byte orders
    for values in (np.float64(1.0), X):  # a scalar is not one row
        with pytest.raises(TypeError, match=rf"^a column is one-dimensional, not {len(np.shape(values))}-dimensional"):
            column(values)


def test_a_ctrl_c_while_a_part_is_listed_writes_its_rounds_once(tmp_path):
    """close_part listed the part in the manifest, then emptied the buffer: a SIGINT landing between the two (shown
    here by the list raising it as the part is appended) left the rows in the buffer, and the run's finish wrote them
    again as the next part: rounds 2,049-3,072 twice in an interrupted run, which results.load returns. The listing
    and the emptying are one step now (the signal is delivered after them)."""
    import signal

    class Listing(list):
        def append(self, item):
            super().append(item)
            if len(self) == 1:
                signal.raise_signal(signal.SIGINT)  # as if Ctrl-C came now

    sink = writer(tmp_path / "run", part_rows=100)
    sink.start()
    sink.manifest.parts = Listing()
    sink.append(rows(0, 150))
    # Python's own Ctrl-C, whatever an earlier test of this worker left (xdist's workers ignore SIGINT)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        with pytest.raises(KeyboardInterrupt):
            sink.close_part()
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    sink.finish(status="interrupted")
    table = pq.read_table(tmp_path / "run" / "rounds")
    np.testing.assert_array_equal(np.sort(table["t"].to_numpy()), np.arange(1, 151))
    assert json.loads((tmp_path / "run" / "run.json").read_text())["rounds"] == 150


def test_a_new_attempt_removes_what_a_killed_one_was_writing(tmp_path):
    """A SIGKILL while a snapshot was written left its temporary file (52 MB; an exact kernel's can be GBs) through
    every later attempt and the run's end; an attempt's start (and a resume's) removes such leftovers of dead
    processes, not those of a live one (okl-regret writes a finished run's parts without the lock) or the lock's."""
    sink = writer(tmp_path / "run", part_rows=100)
    sink.start()
    play(sink, 300, 100, snapshot=lambda start: {"after": start + 100})
    run = tmp_path / "run"
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has now
    left = [
        run / "snapshots" / f".part-00011.pkl.{gone.pid}.tmp",
        run / "rounds" / f".part-00003.parquet.{gone.pid}.tmp",
    ]
    own = run / "rounds" / f".part-00004.parquet.{os.getpid()}.tmp"
    live = run / "rounds" / f".part-00000.parquet.{os.getppid()}.tmp"  # okl-regret rewriting a part, lock-free
    lock = run / ".lock.abc.tmp"
    for path in [*left, own, live, lock]:
        path.write_bytes(b"x" * 10)
    sink.resume(sink.manifest, {})
    assert not any(p.exists() for p in left) and own.exists() and live.exists() and lock.exists()
    left[0].write_bytes(b"x")
    writer(run, part_rows=100).start()
    assert not left[0].exists()


def test_a_complete_run_keeps_no_snapshot_taken_before_its_last_round(tmp_path, monkeypatch):
    """A run that kept no final snapshot (no analysis reads its learner) kept the last one taken on the way, at round
    4,608 of 5,000 (185 MB): of no use to anything, and a learner that is not the run's."""
    every_part(monkeypatch)
    sink = writer(tmp_path / "run", part_rows=100)
    sink.start()
    play(sink, 250, 50, snapshot=lambda start: {"after": start + 50})
    assert sink.manifest.snapshot["rounds"] == 200
    sink.finish(None, status="complete")
    assert json.loads((tmp_path / "run" / "run.json").read_text())["snapshot"] is None
    assert not list((tmp_path / "run" / "snapshots").glob("*.pkl"))
    stopped = writer(tmp_path / "stopped", part_rows=100)
    stopped.start()
    play(stopped, 250, 50, snapshot=lambda start: {"after": start + 50})
    stopped.finish(None, status="interrupted")  # one to resume from: kept
    assert json.loads((tmp_path / "stopped" / "run.json").read_text())["snapshot"]["rounds"] == 200


def test_a_finish_interrupted_as_it_drops_a_stale_snapshot_still_names_it(tmp_path, monkeypatch):
    """A Ctrl-C while finish wrote a complete run's manifest made the runner finish again as "interrupted": the
    manifest in memory had already lost its snapshot, so the rerun replayed every round (saying none was saved)."""
    every_part(monkeypatch)
    sink = writer(tmp_path / "run", part_rows=100)
    sink.start()
    play(sink, 250, 50, snapshot=lambda start: {"after": start + 50})
    write = RunDir.write_manifest
    calls = []

    def interrupted_once(self, manifest):
        if manifest.status == "complete" and not calls:  # the final manifest's write (close_part writes one before)
            calls.append(manifest.status)
            raise KeyboardInterrupt
        write(self, manifest)

    monkeypatch.setattr(RunDir, "write_manifest", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        sink.finish(None, status="complete")
    sink.finish(None, status="interrupted")
    written = json.loads((tmp_path / "run" / "run.json").read_text())
    assert written["status"] == "interrupted" and written["snapshot"]["rounds"] == 200
    assert list((tmp_path / "run" / "snapshots").glob("*.pkl"))


def test_signals_are_held_back_to_the_end_of_the_outermost_deferred_block():
    """finish (deferred by the runner) closes its last part (deferred again): the inner block's end unblocked the
    outer one's signals, and a Ctrl-C then stopped finish half done. And the thread mask it used did not hold back a
    signal sent to the process, which another thread may receive (Python still runs the handler in the main one)."""
    import threading

    from okl.system import signals_deferred

    handler = signal.signal(signal.SIGINT, signal.default_int_handler)  # an xdist worker ignores SIGINT
    helper = threading.Thread(target=threading.Event().wait, args=(2,), daemon=True)
    helper.start()  # a thread that may receive a signal sent to the process
    reached = []
    try:
        with pytest.raises(KeyboardInterrupt), signals_deferred():
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # a signal let through would be raised here
            reached.append("end of the outer block")
        assert reached == ["end of the outer block"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, handler)
