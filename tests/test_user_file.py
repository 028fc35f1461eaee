"""dataset=file: your own data in every format, its task, its identity (the content), its errors, end to end."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import shutil
import time

import numpy as np
import pandas as pd
import pytest
from conftest import call

from helpers import only_run
from okl import config, results
from okl.datasets import from_file, iter_file
from okl.datasets.user_file import PARSE_REVISION
from okl.errors import ConfigError, DataError

rng = np.random.default_rng(7)
X = np.round(rng.standard_normal((300, 3)), 6)
Y = np.round(np.sin(X[:, 0]) + X[:, 1], 6)


def write(path, fmt, X=X, y=Y):
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y})
    if fmt in ("csv", "tsv"):
        frame.to_csv(path, sep="," if fmt == "csv" else "\t", index=False)
    elif fmt == "parquet":
        frame.to_parquet(path)
    elif fmt == "libsvm":
        lines = [
            f"{t:.6f} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row) if v != 0)
            for row, t in zip(X, y, strict=True)
        ]
        path.write_text("\n".join(lines) + "\n")
    elif fmt == "npy":
        np.save(path, np.column_stack([X, y]))
    elif fmt == "npz":
        np.savez(path, X=X, y=y)
    return path


def stream_of(path, **keys):
    stream = from_file(path, **keys)
    parts = list(stream.chunks())
    return stream, np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "libsvm", "npy", "npz"])
def test_every_format_gives_the_file_rows(tmp_path, no_data, fmt):
    path = write(tmp_path / f"data.{fmt}", fmt)
    target = None if fmt in ("libsvm", "npy", "npz") else "y"
    stream, Xs, ys = stream_of(path, target=target)
    assert (stream.task, stream.d, stream.n) == ("regression", 3, 300)
    np.testing.assert_array_equal(Xs, X)
    np.testing.assert_array_equal(ys, Y)
    assert stream.features == (["a", "b", "c"] if target else ["x0", "x1", "x2"])


def test_a_compressed_file_and_river_style_rows(tmp_path, no_data):
    plain = write(tmp_path / "data.csv", "csv")
    packed = tmp_path / "data.csv.gz"
    with open(plain, "rb") as src, gzip.open(packed, "wb") as dst:
        shutil.copyfileobj(src, dst)
    _, Xs, ys = stream_of(packed, target="y")
    np.testing.assert_array_equal(Xs, X)
    x0, y0 = next(iter_file(plain, target="y"))
    assert x0 == {"a": X[0, 0], "b": X[0, 1], "c": X[0, 2]} and y0 == Y[0]


def test_the_task_comes_from_the_labels(tmp_path, no_data):
    labels = np.where(Y > 0, 5.0, 2.0)
    _, _, ys = stream_of(write(tmp_path / "b.csv", "csv", y=labels), target="y")
    assert set(ys) == {-1.0, 1.0} and ((ys == 1) == (labels == 5)).all()  # the larger label is +1
    stream, _, ys = stream_of(write(tmp_path / "b2.csv", "csv", y=labels), target="y", positive=[2.0])
    assert ((ys == 1) == (labels == 2)).all()
    classes = np.arange(300) % 4.0
    stream, _, ys = stream_of(write(tmp_path / "m.csv", "csv", y=classes), target="y")
    assert stream.task == "multiclass"
    np.testing.assert_array_equal(ys, classes)
    stream = from_file(write(tmp_path / "r.csv", "csv", y=classes), target="y", task="regression")
    assert stream.task == "regression"
    with pytest.raises(DataError, match="task=binary needs two distinct labels; the file has 4"):
        from_file(tmp_path / "m.csv", target="y", task="binary")
    stream, _, ys = stream_of(tmp_path / "m.csv", target="y", task="binary", positive=[2.0])  # was refused: 4 labels
    assert stream.task == "binary" and ((ys == 1) == (classes == 2)).all() and set(ys) == {-1.0, 1.0}
    # labels 1..4 ran as 5 classes, the first predictions a class 0 that no row has
    with pytest.raises(DataError, match=r"task=multiclass needs labels 0..C-1 .*; the smallest is 1: subtract 1 from"):
        from_file(write(tmp_path / "m1.csv", "csv", y=classes + 1), target="y", task="multiclass")


def test_the_content_is_the_identity_not_the_path(tmp_path, no_data, composed):
    path = write(tmp_path / "data.csv", "csv")

    def run_id(where):
        return config.plan(composed("dataset=file", f"dataset.path={where}", "dataset.target=y")).run_id

    first = run_id(path)
    moved = tmp_path / "elsewhere.csv"
    shutil.copy(path, moved)
    assert run_id(moved) == first
    write(path, "csv", y=Y + 1)
    assert run_id(path) != first


def test_one_column_of_an_npy_is_one_run_and_an_npz_takes_no_target(tmp_path, no_data, composed):
    """dataset.target=3, =-1 and none named the same column of a 4-column .npy under three run ids (three columns of
    okl-results); an .npz ran with dataset.target=foo ignored, under an id of its own."""
    path = write(tmp_path / "data.npy", "npy")

    def run_id(*target):
        return config.plan(composed("dataset=file", f"dataset.path={path}", *target)).run_id

    last = {run_id(), run_id("dataset.target=3"), run_id("dataset.target=-1")}
    first = {run_id("dataset.target=0"), run_id("dataset.target=-4")}
    assert len(last) == len(first) == 1 and last != first
    _, Xs, ys = stream_of(path, target=-4)
    np.testing.assert_array_equal(ys, X[:, 0])
    for fmt in ("npz", "libsvm"):
        with pytest.raises(ConfigError, match=r"^target: an? .* holds its labels as .*; drop target=$"):
            from_file(write(tmp_path / f"data.{fmt}", fmt), target="foo")


@pytest.mark.parametrize("parts", [None, ["train"]])
def test_a_held_out_fraction_is_the_last_rows(tmp_path, no_data, parts):
    """dataset.parts=[train] (the stream named as it is by default) keeps the held-out rows (it dropped them)."""
    stream, Xs, _ = stream_of(write(tmp_path / "data.csv", "csv"), target="y", test_fraction=0.2, parts=parts)
    X_test, y_test = stream.test_set()
    assert stream.n == 240 and len(Xs) == 240
    np.testing.assert_array_equal(X_test, X[240:])
    np.testing.assert_array_equal(y_test, Y[240:])


def test_a_held_out_set_of_the_streams_own_rows_is_refused(tmp_path, no_data):
    """A held-out score on rows the learner trained on: the training file given as its own test_path, or a held-out
    part the stream plays too (test_parts=[train]), is a one-line error."""
    path = write(tmp_path / "data.csv", "csv")
    copy = tmp_path / "copy.csv"
    copy.write_bytes(path.read_bytes())
    with pytest.raises(ConfigError, match=r"^test_path= holds the same rows as path: .*test_fraction"):
        from_file(path, target="y", test_path=str(copy))
    with pytest.raises(ConfigError, match=r"^test_parts=\[train\] is also streamed \(parts=\[train\]\)"):
        from_file(path, target="y", test_fraction=0.2, test_parts=["train"])


@pytest.mark.parametrize(
    ("content", "keys", "error", "message"),
    [
        (
            None,
            {"target": "y"},
            ConfigError,
            r"^path: no file at '.*nope.csv': give the path of your data file$",
        ),
        (
            "a,b,y\n1,2,3\n",
            {"target": "z"},
            ConfigError,
            r"^target: no column 'z' in the header of data.csv \(its columns: a, b, y\)$",
        ),
        (
            "a,b,y\n1,2,3\n",
            {},
            ConfigError,
            r"^target: name the target column of data.csv \(its columns: a, b, y\)$",
        ),
        (
            "a,y\n1,2\nx,3\n",
            {"target": "y"},
            DataError,
            r"data.csv: line 3: column 'a' holds 'x', not a number$",
        ),
        (  # what to do with labels of words
            "a,y\n1,no\n2,yes\n",
            {"target": "y"},
            DataError,
            r"data.csv: line 2: column 'y' holds 'no', not a number: encode the labels as numbers \(0/1, or 0..C-1 ",
        ),
        (  # Python's float reads 1_000, the file's parser does not: its message had no line and no column
            "a,y\n1_000,2\n",
            {"target": "y"},
            DataError,
            r"data.csv: line 2: column 'a' holds '1_000', not a number$",
        ),
        (  # the second a was dropped from the inputs without a word
            "a,a,y\n0,1,0.5\n1,0,1.5\n",
            {"target": "y"},
            DataError,
            r"data.csv: the header names column 'a' twice \(columns 1 and 2\): rename one$",
        ),
        (  # pandas' index, written by DataFrame.to_csv: the row number became a feature named ''
            ",a,y\n0,1,0.5\n1,0,1.5\n",
            {"target": "y"},
            DataError,
            r"data.csv: column 1 of the header has no name \(the index DataFrame.to_csv writes: save the file with ",
        ),
        ("", {"target": "y"}, DataError, r"data.csv: the file is empty"),
        ("a,y\n", {"target": "y"}, DataError, r"data.csv: the file holds no rows of data$"),
        ("y\n1\n2\n", {"target": "y"}, DataError, r"data.csv: no feature columns besides the target: okl learns"),
        (  # a file without a header: its first row was read as one, "no column 3 (its columns: 10, 20, 30)"
            "10,20,30\n4,5,6\n",
            {"target": 3},
            ConfigError,
            r"^target: the first line of data.csv holds numbers \(10, 20, 30...\), not a header: a CSV needs",
        ),
        (  # and where the target names one of those numbers, the first row was the header and lost, silently
            "1,2,3\n4,5,6\n7,8,9\n",
            {"target": 3},
            ConfigError,
            r"^target: the first line of data.csv holds numbers \(1, 2, 3...\), not a header: a CSV needs",
        ),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path, no_data, content, keys, error, message):
    path = tmp_path / ("nope.csv" if content is None else "data.csv")
    if content is not None:
        path.write_text(content)
    with pytest.raises(error, match=message) as raised:
        from_file(path, **keys)
    assert "\n" not in str(raised.value)


def test_a_quoted_header_name_holding_the_separator_is_one_column(tmp_path, no_data):
    """The header was split on every comma: '"price, usd"' named two features of a two-column table (the rows' parser
    read one), and iter_file failed in zip()."""
    path = tmp_path / "data.csv"
    path.write_text('"price, usd",b,"y, target"\n10,1,0.5\n20,0,1.5\n30,1,2.5\n')
    stream = from_file(path, target="y, target")
    assert stream.features == ["price, usd", "b"] and stream.d == 2
    assert list(iter_file(path, target="y, target"))[0] == ({"price, usd": 10.0, "b": 1.0}, 0.5)


def test_a_csv_cache_parsed_by_the_code_before_the_header_fix_is_parsed_again(tmp_path, no_data):
    """A cache is keyed by content, format and target: one that the code before the header fix parsed ('"price,
    usd"' read as two names, 'a,a,y' with one a dropped) was read as current. A csv's caches carry its parse
    revision, so such a cache (here: the current one renamed to the layout before, with the old names) is not read."""
    path = tmp_path / "data.csv"
    path.write_text('"price, usd",b,y\n10,1,0.5\n20,0,1.5\n')
    assert from_file(path, target="y").features == ["price, usd", "b"]
    revised = f"-csv-r{PARSE_REVISION['csv']}-"
    (fresh,) = (no_data / "file" / "cache").glob(f"*{revised}y-v*")
    old = fresh.with_name(fresh.name.replace(revised, "-csv-"))
    fresh.rename(old)
    meta = json.loads((old / "meta.json").read_text())
    (old / "meta.json").write_text(json.dumps({**meta, "features": ['"price', ' usd"']}))
    assert from_file(path, target="y").features == ["price, usd", "b"]
    assert fresh.is_dir()


def _parse_at_once(path, start, out) -> None:
    """A process that parses ``path`` into the data directory when every racer is ready; it says what it got. Removing
    a cache folder takes a while here, as on a slow disk, so that the racers' parses overlap where it matters."""
    from okl.datasets import user_file

    def slow_rmtree(folder, *args, **kwargs):
        shutil.rmtree(folder, *args, **kwargs)
        if ".tmp" not in str(folder):
            time.sleep(0.3)

    user_file.shutil = type("slow", (), {"rmtree": staticmethod(slow_rmtree)})
    start.wait(timeout=20)
    try:
        out.put(("ok", len(stream_of(path, target="y")[2])))
    except Exception as exc:  # noqa: BLE001 (reported to the test)
        out.put((type(exc).__name__, str(exc)))


def test_processes_parsing_one_new_file_at_once_share_its_cache(tmp_path, no_data):
    """Two okl-run of a new file at once: each parsed it and installed its cache by removing the one there, so one
    removed the other's as it read it (a TypeError) or could not install its own ("cannot write the parsed cache").
    They take turns on the cache's lock: the first parses, the others read its cache."""
    path = write(tmp_path / "data.csv", "csv")
    context = multiprocessing.get_context("fork")
    start, out = context.Barrier(3), context.Queue()
    racers = [context.Process(target=_parse_at_once, args=(path, start, out)) for _ in range(3)]
    for racer in racers:
        racer.start()
    got = [out.get(timeout=60) for _ in racers]
    for racer in racers:
        racer.join(timeout=20)
    assert got == [("ok", len(Y))] * 3
    (left,) = (no_data / "file" / "cache").iterdir()  # one cache, no half-written one
    assert ".tmp" not in left.name


def test_errors_from_python_name_its_keywords(tmp_path, no_data):
    """from_file(..., foo=1) said "unknown key dataset.foo", okl-run's words; okl.river says foo= already."""
    path = write(tmp_path / "data.csv", "csv")
    with pytest.raises(ConfigError, match=r"^unknown key foo= for dataset 'file'; its keys are: "):
        from_file(path, target="y", foo=1)
    with pytest.raises(ConfigError, match=r"^target: no column 'z' in the header of data.csv"):
        list(iter_file(path, target="z"))


def test_a_file_of_another_format_than_said_and_a_folder_are_one_line_errors(tmp_path, no_data):
    """A CSV as format=npy offered numpy's "load it unsafely using allow_pickle"; an .npy as format=csv listed its
    binary header as the columns; a folder was "cannot tell the format"."""
    csv, npy = write(tmp_path / "data.csv", "csv"), write(tmp_path / "data.npy", "npy")
    with pytest.raises(DataError, match=r"data.csv: not a readable npy file \(not NumPy's format: check format=\)"):
        from_file(csv, format="npy")
    with pytest.raises(DataError, match=r"data.npy: a binary file, not CSV text: check format=$"):
        from_file(npy, format="csv", target="y")
    with pytest.raises(ConfigError, match=r"^path: '.*' is a folder: give the path of your data file$"):
        from_file(tmp_path)


def test_a_table_named_txt_is_told_it_was_read_as_libsvm_by_its_suffix(tmp_path, no_data):
    """A CSV named data.txt was parsed as LIBSVM, and the errors said "not a LIBSVM/SVMlight file (set
    dataset.format)" or "drop dataset.target", never that the suffix chose LIBSVM, nor that format=csv reads it."""
    path = tmp_path / "data.txt"
    path.write_text("a,b,y\n1,2,3\n4,5,6\n")
    with pytest.raises(
        DataError,
        match=r"not a LIBSVM/SVMlight file; 'data.txt' is read as libsvm by its suffix: "
        r"format=csv \(or tsv\) reads a table$",
    ):
        from_file(path)
    with pytest.raises(
        ConfigError,
        match=r"^target: 'data.txt' is read as libsvm by its suffix; a LIBSVM file holds .*"
        r"drop target=, or set format=csv \(or tsv\) for a table with a header$",
    ):
        from_file(path, target="y")
    assert from_file(path, target="y", format="csv").d == 2
    with pytest.raises(ConfigError, match=r"^target: a LIBSVM file holds its labels as .*; drop target=$"):
        from_file(path, target="y", format="libsvm")  # said, not guessed: no word of the suffix


def test_an_npz_of_python_objects_is_a_one_line_error(tmp_path, no_data):
    """numpy refuses to unpickle it when the array is read (not when the file is opened): "internal error"."""
    path = tmp_path / "objects.npz"
    np.savez(path, X=np.array([[1, "a"]], dtype=object), y=np.ones(1))
    with pytest.raises(DataError, match=r"objects.npz: not a readable npz file \(Object arrays cannot be loaded"):
        from_file(path)


def test_a_libsvm_file_too_wide_to_make_dense_is_refused_before_it_is_parsed(tmp_path, no_data, monkeypatch):
    """100 rows with an index of 9,940,267 were made dense as they were parsed: 7.4 GiB, a MemoryError ("internal
    error") under a memory limit, or that much written to the data directory."""
    from collections import namedtuple

    from okl.errors import ResourceError

    path = tmp_path / "wide.svm"
    path.write_text("1 3:1 9940267:1\n" + "0 1:0.5 2:1\n" * 99)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda where: usage(2**40, 2**40 - 2**32, 2**32))  # 4 GiB free
    with pytest.raises(
        DataError, match=r"wide.svm: 100 rows × d = 9,940,267 take 7.4 GiB dense, more than the 4.0 GiB"
    ):
        from_file(path)
    monkeypatch.setattr(shutil, "disk_usage", lambda where: usage(2**42, 0, 2**41))
    monkeypatch.setattr("okl.system.available_memory", lambda: 2**30)
    with pytest.raises(ResourceError, match=r"wide.svm: a block of its rows, dense \(d = 9,940,267\): 7.4 GiB, more"):
        from_file(path)
    assert not any((no_data / "file" / "cache").glob("*/x.bin"))  # nothing written


def test_files_as_other_tools_write_them(tmp_path, no_data):
    """A CSV with UTF-8's byte order mark (as Excel saves it: "no column 'y' (its columns: ï»¿y, a, b)"), a column
    named by a number, an .npz held-out file beside a CSV (it was parsed as CSV), and a LIBSVM held-out file whose
    last features are zeros, so absent from its text ("3 features, but train.svm has 4"): the values written."""
    frame = pd.DataFrame({"y": Y, "a": X[:, 0], "3": X[:, 1], "c": X[:, 2]})
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbf" + frame.to_csv(index=False).encode())
    stream, Xs, ys = stream_of(path, target="y")
    np.testing.assert_array_equal(ys, Y)
    np.testing.assert_array_equal(Xs, X)
    _, Xs, ys = stream_of(path, target=3)  # dataset.target=3 reaches the dataset as an int
    np.testing.assert_array_equal(ys, X[:, 1])
    numbered = pd.DataFrame(np.column_stack([X, Y]))  # pandas' unnamed columns: a header "0,1,2,3"
    numbered.columns = numbered.columns.astype(str)
    numbered.to_csv(tmp_path / "numbered.csv", index=False)
    numbered.to_parquet(tmp_path / "numbered.parquet")
    for name in ("numbered.csv", "numbered.parquet"):
        np.testing.assert_array_equal(stream_of(tmp_path / name, target=3)[2], Y)
    train, test = write(tmp_path / "train.csv", "csv"), write(tmp_path / "test.npz", "npz", X=X[:50] * 2, y=Y[:50])
    np.testing.assert_array_equal(stream_of(train, target="y", test_path=str(test))[0].test_set()[0], X[:50] * 2)
    zeros = X.copy()
    zeros[:, 2] = 0.0  # the held-out rows' last feature: never written in LIBSVM
    train, test = write(tmp_path / "train.svm", "libsvm"), write(tmp_path / "test.svm", "libsvm", X=zeros)
    stream = stream_of(train, test_path=str(test))[0]
    np.testing.assert_array_equal(stream.test_set()[0], zeros)
    assert stream.d == 3


def test_headers_as_people_write_them(tmp_path, no_data):
    """Two targets whose names differ only in a space ("a b", "a_b") shared one cache and the second ran on the
    first's column; a UTF-8 header was read as latin-1 (target 'température' absent: "its columns: tempÃ©rature");
    spaces around the names (" a , y ") named the header's columns a and y and pandas' " a " and " y " ("no column
    'y'; its columns are  a ,  y "). Each reads the column asked for, with the names written."""
    frame = pd.DataFrame({"x": X[:, 0], "a b": Y, "a_b": X[:, 1], "température": X[:, 2]})
    path = tmp_path / "names.csv"
    path.write_bytes(frame.to_csv(index=False).encode("utf-8"))
    for target in ("a b", "a_b", "température", "a b"):  # each a cache of its own, read again
        stream, _, ys = stream_of(path, target=target)
        np.testing.assert_array_equal(ys, frame[target].to_numpy())
        assert stream.features == [c for c in frame.columns if c != target]
    spaced = tmp_path / "spaced.csv"
    spaced.write_text(" a , y , b \n" + "\n".join(f"{u} , {v} ,{w}" for u, v, w in X) + "\n")
    stream, Xs, ys = stream_of(spaced, target="y")
    np.testing.assert_array_equal(ys, X[:, 1])
    np.testing.assert_array_equal(Xs, X[:, [0, 2]])
    assert stream.features == ["a", "b"]


def test_a_libsvm_pair_takes_the_wider_files_features_and_a_later_plan_reads_no_text(tmp_path, no_data, monkeypatch):
    """A LIBSVM training file whose last feature is zero in every row (absent from its text) beside a held-out file
    that has it: the stream has the held-out file's d, the training rows a zero there ("3 features, but train.svm
    has 2" before). A later plan of the same pair finds both caches without counting a file's features again."""
    import okl.datasets.user_file as user_file

    zeros = X.copy()
    zeros[:, 2] = 0.0
    train, test = write(tmp_path / "train.svm", "libsvm", X=zeros), write(tmp_path / "test.svm", "libsvm")
    stream, Xs, _ = stream_of(train, test_path=str(test))
    assert stream.d == 3
    np.testing.assert_array_equal(Xs, zeros)
    np.testing.assert_array_equal(stream.test_set()[0], X)
    counted = []
    dimension = user_file._libsvm_dimension
    monkeypatch.setattr(user_file, "_libsvm_dimension", lambda path: counted.append(path) or dimension(path))
    again, Xs, _ = stream_of(train, test_path=str(test))
    assert again.d == 3 and counted == []
    np.testing.assert_array_equal(Xs, zeros)


def test_okl_run_on_a_file_then_on_the_edited_file(okl_run, results_root, tmp_path, no_data, capsys):
    path = write(tmp_path / "data.csv", "csv")
    args = ("dataset=file", f"dataset.path={path}", "dataset.target=y", "learner=fogd", "progress=false")
    code, out, err = okl_run(*args)
    assert code == 0 and "complete, 300 rounds" in out, err
    rounds = results.load(results_root).sort_values("t")
    np.testing.assert_array_equal(rounds["y"], Y)
    first = only_run(results_root).path
    assert "already complete" in okl_run(*args)[1]
    write(path, "csv", y=Y * 2)
    code, out, _ = okl_run(*args)
    assert code == 0 and "complete, 300 rounds" in out and "already" not in out
    assert len(results.runs(results_root)) == 2 and first.exists()
    from okl.cli import results as results_cli

    hashes = sorted(results.runs(results_root)["dataset.content_sha256"])
    code, out, _ = call(lambda: results_cli.main([]), capsys)  # the two contents are two columns, by 12 digits
    header = out.splitlines()[2]
    assert code == 0 and all(f"file [content_sha256={h[:12]}]" in header for h in hashes) and hashes[0] not in out


def test_runs_whose_setting_differs_in_type_export_to_parquet(okl_run, results_root, tmp_path, no_data, capsys):
    """dataset.target=0 (a column of a .npy) beside dataset.target=y (a CSV's): okl-results export ended in a
    traceback (pyarrow: "Expected bytes, got a 'int' object"); the column is now text, nulls kept."""
    import pandas as pd
    from conftest import call

    from okl.cli import results as results_cli

    np.save(tmp_path / "data.npy", np.column_stack([X, Y]))
    csv = write(tmp_path / "data.csv", "csv")
    for path, target in ((tmp_path / "data.npy", 0), (csv, "y")):
        code, _, err = okl_run("dataset=file", f"dataset.path={path}", f"dataset.target={target}", "progress=false")
        assert code == 0, err
    code, out, err = call(lambda: results_cli.main(["export"]), capsys)
    assert code == 0 and "Traceback" not in err, err
    table = pd.read_parquet(results_root / "runs.parquet")
    assert sorted(table["dataset.target"]) == ["0", "y"]
    from okl.tracking import _one_type_per_column

    mixed = pd.DataFrame({"sigma": pd.Series([1, 1.5, None], dtype=object), "b": [True, "x", None]})
    numbers = _one_type_per_column(mixed)  # an int beside a float stays a number; a bool beside a string is text
    assert list(numbers.sigma[:2]) == [1, 1.5] and not isinstance(numbers.sigma[0], str)
    assert list(numbers.b[:2]) == ["True", "x"] and pd.isna(numbers.b[2])


def test_a_file_sweep_under_the_joblib_launcher(okl_run, results_root, tmp_path, no_data):
    """hydra/launcher=joblib failed with "unknown dataset" for a dataset registered in the calling process only."""
    path = write(tmp_path / "data.csv", "csv")
    code, out, err = okl_run(
        "-m",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "dataset=file",
        f"dataset.path={path}",
        "dataset.target=y",
        "learner=fogd",
        "seed=0,1",
        "dataset.shuffle=true",
        f"sink.root={results_root}",  # loky's workers outlive a test and keep the OKL_RESULTS they started with
    )
    assert code == 0, err
    table = results.runs(results_root)
    assert sorted(table.seed) == [0, 1] and set(table.status) == {"complete"} and set(table.rounds) == {300}


def test_a_held_out_file_is_scaled_as_the_stream(tmp_path, no_data):
    train, test = (
        write(tmp_path / "train.svm", "libsvm"),
        write(tmp_path / "test.svm", "libsvm", X=X[:50] * 2, y=Y[:50]),
    )
    stream = from_file(train, test_path=str(test), x_scale="minmax01")
    X_test, y_test = stream.test_set()
    low, high = X.min(axis=0), X.max(axis=0)
    np.testing.assert_allclose(X_test, (X[:50] * 2 - low) / (high - low), rtol=1e-12)
    np.testing.assert_array_equal(y_test, Y[:50])
    assert stream.params.test_sha256 is not None and stream.params.test_parts == ["test"]


def test_files_pandas_and_scikit_learn_write_are_read_or_told_what_to_change(tmp_path, no_data):
    """A Parquet file with a named index was a KeyError; one with pandas' row labels saved would learn from them; an
    .npz of text labels was numpy's "could not convert string to float" with no file; a 0-based LIBSVM file
    (scikit-learn's dump_svmlight_file), a ';'-separated "CSV" and an empty cell named no fix (hunt 7b)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.0, 1.0, 0.0], "y": [0.5, 1.5, 2.5]})
    frame.set_index("a").to_parquet(tmp_path / "named.parquet")
    assert sorted(from_file(tmp_path / "named.parquet", target="y").features) == ["a", "b"]
    pq.write_table(pa.Table.from_pandas(frame.iloc[[0, 2]], preserve_index=True), tmp_path / "labels.parquet")
    with pytest.raises(DataError, match=r"column '__index_level_0__' is the index pandas saved with the DataFrame: "):
        from_file(tmp_path / "labels.parquet", target="y")
    np.savez(tmp_path / "text.npz", X=np.zeros((3, 2)), y=np.array(["a", "b", "c"]))
    with pytest.raises(DataError, match=r"text.npz: y holds <U1 values, not numbers: encode them as numbers first$"):
        from_file(tmp_path / "text.npz")
    (tmp_path / "zero.svm").write_text("1 0:1 1:2\n-1 0:2\n")
    with pytest.raises(DataError, match=r"feature index 0 is not an integer in 1..1 \(a 0-based file, as scikit"):
        from_file(tmp_path / "zero.svm")
    (tmp_path / "semi.csv").write_text("a;b;y\n1;2;3\n")
    with pytest.raises(ConfigError, match=r"its header is one column: a file separated by ';' is not CSV$"):
        from_file(tmp_path / "semi.csv", target="y")
    (tmp_path / "gap.csv").write_text("a,b,y\n1,,3\n2,1,4\n")
    with pytest.raises(DataError, match=r"line 2: column 'b' holds '', not a number: a missing value, drop or impute"):
        from_file(tmp_path / "gap.csv", target="y")


@pytest.mark.parametrize("inside", [True, False])
def test_a_file_that_cannot_be_read_is_not_told_to_change_the_data_directory(tmp_path, no_data, monkeypatch, inside):
    """Any OSError while parsing said "cannot write the parsed cache ...: set OKL_DATA_DIR", one reading your own file
    too, which no data directory mends."""
    from okl.datasets import user_file
    from okl.errors import DataError

    path = tmp_path / "mine.csv"
    path.write_text("a,y\n1,2\n")
    failed = no_data / "file" / "cache" / "x.bin" if inside else path

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(failed))

    monkeypatch.setattr(user_file, "_chunks", refused)
    with pytest.raises(DataError) as error:
        from_file(path, target="y")
    message = str(error.value)
    assert "Permission denied" in message and "\n" not in message
    assert message.startswith("cannot write the parsed cache" if inside else f"cannot read {path}")
    assert ("OKL_DATA_DIR" in message) == inside


def _frame_pair(tmp_path, fmt: str, test_columns: list[str]):
    """A training file of columns a, b, y and a held-out file of ``test_columns`` (the same rows' values by name)."""
    rng = np.random.default_rng(3)
    X = np.round(rng.standard_normal((40, 2)), 6)
    values = {"a": X[:, 0], "b": X[:, 1], "c": X[:, 1], "y": np.round(2 * X[:, 0], 6)}
    tmp_path.mkdir(exist_ok=True)
    train, test = tmp_path / f"train.{fmt}", tmp_path / f"test.{fmt}"
    for path, columns, rows in ((train, ["a", "b", "y"], slice(0, 30)), (test, test_columns, slice(30, 40))):
        frame = pd.DataFrame({c: values[c][rows] for c in columns})
        frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path, index=False)
    return train, test


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("columns", [["b", "a", "y"], ["a", "c", "y"]])
def test_a_held_out_file_with_other_feature_columns_is_refused_not_read_by_position(tmp_path, no_data, fmt, columns):
    """The held-out file was matched by its columns' count: one written b, a reached the learner as [b, a] under the
    names a, b (test loss 5.6 against 1.7 in the training file's order), and one of columns a, c scored c as b."""
    train, test = _frame_pair(tmp_path, fmt, columns)
    with pytest.raises(DataError, match=rf"^{test}: its feature columns \({columns[0]}, {columns[1]}\) are not those"):
        from_file(train, target="y", test_path=str(test))
    same = from_file(train, target="y", test_path=str(_frame_pair(tmp_path / "same", fmt, ["a", "b", "y"])[1]))
    assert same.features == ["a", "b"] and same.test_set()[0].shape == (10, 2)


@pytest.mark.parametrize("names", [["a", "b", "a"], ["a", "y", "y"]])
def test_a_parquet_file_naming_a_column_twice_is_refused_as_a_csv_is(tmp_path, no_data, names):
    """A repeated feature made every feature twice (d = 4 from a, b, a); a repeated target, an internal error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_arrays([pa.array([1.0, 2.0, 3.0])] * 3, names=names), tmp_path / "twice.parquet")
    with pytest.raises(DataError, match=rf"names column '{names[2]}' twice \(columns \d and 3\): rename one$"):
        from_file(tmp_path / "twice.parquet", target="b" if "b" in names else "y")


def test_an_npz_with_arrays_X_and_x_reads_X(tmp_path, no_data):
    """Array names were matched without case and the last one won: x over X."""
    X = np.arange(12.0).reshape(6, 2)
    np.savez(tmp_path / "both.npz", X=X, x=np.ones_like(X), y=np.arange(6.0))
    np.testing.assert_array_equal(np.concatenate([c[0] for c in from_file(tmp_path / "both.npz").chunks()]), X)


@pytest.mark.parametrize("suffix", ["csv.gz", "csv.xz"])
def test_a_compressed_file_cut_short_or_corrupt_is_a_one_line_error_about_the_file(tmp_path, no_data, suffix):
    """A .gz or .xz cut short (an interrupted copy) was an internal EOFError; a .gz with a bad CRC was blamed on the
    data directory ("set OKL_DATA_DIR to a writable folder")."""
    import lzma

    text = ("a,b,y\n" + "".join(f"{i},{i % 7},{i % 3}\n" for i in range(20000))).encode()
    data = gzip.compress(text) if suffix.endswith("gz") else lzma.compress(text)
    cut = tmp_path / f"cut.{suffix}"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=rf"^{cut}: its compressed content is cut short or corrupt \(.+\): copy or"):
        from_file(cut, target="y")
    if suffix.endswith("gz"):
        crc = bytearray(data)
        crc[-6] ^= 0xFF  # the CRC
        bad = tmp_path / "crc.csv.gz"
        bad.write_bytes(bytes(crc))
        with pytest.raises(DataError, match=rf"^{bad}: its compressed content is cut short or corrupt \(CRC"):
            from_file(bad, target="y")


def test_a_csv_whose_lines_end_in_a_carriage_return_alone_is_a_one_line_error(tmp_path, no_data):
    """Old Mac line endings made the whole file the header line: csv's "new-line character seen", internal."""
    path = tmp_path / "cr.csv"
    path.write_bytes(b"a,b,y\r1,2,3\r4,5,6\r")
    with pytest.raises(DataError, match=r"its lines end in a carriage return alone .*: save it with LF or CRLF$"):
        from_file(path, target="y")


def test_a_utf16_csv_is_named_as_text_to_save_as_utf8(tmp_path, no_data):
    """Excel's "Unicode text" (UTF-16) was called a binary file, to check dataset.format."""
    path = tmp_path / "excel.csv"
    path.write_bytes("a,y\n1,2\n3,4\n".encode("utf-16"))
    with pytest.raises(DataError, match=r"excel.csv: UTF-16 text: save it as UTF-8 \(Excel: CSV UTF-8\)$"):
        from_file(path, target="y")
