"""Sink parts are bounded and complete; results.load reads many runs with typed partition keys."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from okl import results
from okl.sink import ParquetSink


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


def test_parts_are_bounded_and_cover_every_round(tmp_path):
    sink = ParquetSink(tmp_path / "run", part_rows=1000)
    sink.start({"learner": "x"})
    for start in range(0, 3500, 300):
        sink.append(rows(start, min(300, 3500 - start)))
        on_disk = json.loads((tmp_path / "run" / "run.json").read_text())["rounds"]
        assert on_disk == 1000 * ((start + 300) // 1000 if start + 300 <= 3500 else 3)
    sink.finish(status="complete")
    parts = sorted((tmp_path / "run" / "rounds").glob("*.parquet"))
    assert [pq.ParquetFile(p).metadata.num_rows for p in parts] == [1000, 1000, 1000, 500]
    table = pq.read_table(tmp_path / "run" / "rounds")
    np.testing.assert_array_equal(table["t"].to_numpy(), np.arange(1, 3501))
    assert table["regret"].null_count == 3500
    m = json.loads((tmp_path / "run" / "run.json").read_text())
    assert m["status"] == "complete" and m["rounds"] == 3500 and len(m["parts"]) == 4


def test_restart_clears_stale_parts(tmp_path):
    first = ParquetSink(tmp_path, part_rows=10)
    first.start({})
    first.append(rows(0, 35))
    first.finish(status="interrupted")
    second = ParquetSink(tmp_path, part_rows=10)
    second.start({})
    second.append(rows(0, 12))
    second.finish(status="complete")
    assert pq.read_table(tmp_path / "rounds").num_rows == 12


@pytest.fixture
def two_runs(tmp_path):
    for learner, seed, status in (("a", 0, "complete"), ("b", 1, "timeout")):
        sink = ParquetSink(tmp_path / f"learner={learner}/dataset=s/seed={seed}/run=0123456789ab", part_rows=50)
        sink.start({"learner": learner, "seed": seed})
        sink.append(rows(0, 120))
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
