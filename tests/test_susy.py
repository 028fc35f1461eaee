"""The SUSY stream on a small file in SUSY's exact format; the offline message when it is absent."""

import numpy as np
import pytest

from helpers import write_susy
from okl.datasets.susy import Susy
from okl.errors import DataError


@pytest.fixture
def susy_file(tmp_path, monkeypatch):
    rows = write_susy(tmp_path)
    monkeypatch.setenv("OKL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("OKL_DATA_MIRROR", raising=False)
    return rows


def test_stream_reads_labels_and_features_in_file_order(susy_file):
    ds = Susy(length=250)
    X, y = (np.concatenate(parts) for parts in zip(*ds.chunks(), strict=True))
    np.testing.assert_array_equal(X, susy_file[:250, 1:])
    np.testing.assert_array_equal(y, np.where(susy_file[:250, 0] == 1, 1.0, -1.0))
    assert (ds.task, ds.d, ds.n) == ("binary", 18, 250)


def test_mirror_is_used_when_the_data_dir_lacks_the_file(susy_file, tmp_path, monkeypatch):
    monkeypatch.setenv("OKL_DATA_MIRROR", str(tmp_path))
    monkeypatch.setenv("OKL_DATA_DIR", str(tmp_path / "empty"))
    assert Susy().path == tmp_path / "susy" / "SUSY.csv.gz"


def test_absent_file_is_a_one_line_offline_error(tmp_path, monkeypatch):
    monkeypatch.setenv("OKL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("OKL_DATA_MIRROR", raising=False)
    with pytest.raises(
        DataError, match="dataset 'susy' is not available offline: put SUSY.csv.gz in .*OKL_DATA_MIRROR"
    ):
        Susy()


def test_the_readme_command_ends_in_the_offline_message(okl_run, results_root, tmp_path, monkeypatch):
    monkeypatch.setenv("OKL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("OKL_DATA_MIRROR", raising=False)
    code, _, err = okl_run("learner=pkawv_taylor", "dataset=susy", "M=2")
    assert code == 2 and err.startswith("okl-run: error: dataset 'susy' is not available offline")
    assert err.count("\n") == 1 and not results_root.exists()


def test_the_readme_command_runs_when_the_file_is_there(okl_run, results_root, susy_file):
    code, out, err = okl_run("learner=pkawv_taylor", "dataset=susy", "M=2", "progress=false")
    assert code == 0, err
    assert "complete, 300 rounds" in out and "average zero_one loss" in out
