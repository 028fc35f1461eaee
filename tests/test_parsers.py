"""Parsers on small files with the edge cases of real ones, against arrays written out by hand."""

import io
import struct

import numpy as np
import pytest

from okl.data import parsers
from okl.data.catalog import Delimited, Idx, Libsvm
from okl.errors import DataError


def libsvm(text: str | bytes, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    data = text.encode() if isinstance(text, str) else text
    chunks = list(parsers.libsvm(io.BytesIO(data), d, "f.svm"))
    return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])


def test_libsvm_sparse_rows_out_of_order_comments_blank_lines_crlf_and_exponents():
    text = (
        "# a comment line\r\n"
        "+1 3:0.5 1:-2e-3\r\n"
        "\r\n"
        "-1.0 4:1E+2   2:7 # trailing comment\n"
        "   \n"
        "1\n"  # a row with no features at all
        "-1 1:.25 2:-0 3:3.5e0 4:1"  # no newline at the end
    )
    X, y = libsvm(text)
    np.testing.assert_array_equal(y, [1, -1, 1, -1])
    np.testing.assert_array_equal(X, [[-2e-3, 0, 0.5, 0], [0, 7, 0, 100], [0, 0, 0, 0], [0.25, -0.0, 3.5, 1]])


def test_libsvm_blocks_cut_anywhere_give_the_whole_file(monkeypatch):
    g = np.random.default_rng(0)
    rows = [
        f"{g.choice([-1, 1])} " + " ".join(f"{j}:{g.standard_normal():.17g}" for j in sorted(g.choice(9, 4, False) + 1))
        for _ in range(200)
    ]
    text = "\n".join(rows) + "\n"
    whole = libsvm(text, d=9)
    monkeypatch.setattr(parsers, "BLOCK", 37)  # blocks end mid-line; each is cut at its last newline
    pieces = libsvm(text, d=9)
    np.testing.assert_array_equal(whole[0], pieces[0])
    np.testing.assert_array_equal(whole[1], pieces[1])
    assert float(rows[0].split()[1].split(":")[1]) in whole[0][0]  # values parse as Python's float does


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1 1:2 1:3", "line 3: a feature index is repeated"),
        ("1 5:2", r"line 3: feature index 5 is not an integer in 1..4"),
        ("1 0:2", r"line 3: feature index 0 is not an integer in 1..4"),
        ("1 1.5:2", r"line 3: feature index 1.5 is not an integer in 1..4"),
        ("1 2:abc", r"line 3: 'abc' is not a number"),
        ("1 2: 3", r"line 3: expected index:value with no space around ':'"),
        ("1 2", r"line 3: expected a label followed by index:value pairs"),
        ("1:2 3:4", r"line 3: expected a label followed by index:value pairs"),
        ("1 2:nan", r"line 3: a value is not finite"),
    ],
)
def test_libsvm_malformed_line_names_file_line_and_what_was_expected(line, message):
    with pytest.raises(DataError, match=f"^f.svm: {message}"):
        libsvm(f"1 1:1\n\n{line}\n-1 2:1\n")


def delimited(text: str, fmt: Delimited) -> tuple[np.ndarray, np.ndarray]:
    chunks = list(parsers.delimited(lambda: io.BytesIO(text.encode("latin-1")), fmt, "f.csv"))
    return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])


def test_csv_quoted_header_crlf_exponents_and_column_choice():
    text = '"RMSD","F1","F2"\r\n17.284,13558.3,4.3e-1\r\n\r\n6.021,6191.96,-1E2\r\n'
    X, y = delimited(text, Delimited(target="RMSD"))
    np.testing.assert_array_equal(y, [17.284, 6.021])
    np.testing.assert_array_equal(X, [[13558.3, 0.43], [6191.96, -100.0]])
    X, y = delimited(text, Delimited(target="F1", drop=("F2",)))
    np.testing.assert_array_equal(X, [[17.284], [6.021]])


def test_semicolon_decimal_comma_blank_records_and_missing_sentinel():
    text = "Date;A;B;C;;\r\n1/1;2,5;-200;3;;\r\n;;;;;\r\n1/2;1,5;4;-2,5e1;;\r\n"
    fmt = Delimited(sep=";", decimal=",", target="C", drop=("Date", "Unnamed: 4", "Unnamed: 5"), missing=-200.0)
    X, y = delimited(text, Delimited(**{**fmt.__dict__, "blank_records": True}))
    np.testing.assert_array_equal(X, [[1.5, 4.0]])  # the record holding -200 is dropped, the empty one skipped
    np.testing.assert_array_equal(y, [-25.0])


def test_headerless_columns_are_reordered_to_the_canonical_layout():
    X, y = delimited("1,2,3,9\n4,5,6,8\n", Delimited(header=False, target=3, features=(2, 0, 1)))
    np.testing.assert_array_equal(X, [[3, 1, 2], [6, 4, 5]])
    np.testing.assert_array_equal(y, [9, 8])


def test_float32_artifacts_are_restored_to_the_shortest_decimal():
    X, y = delimited("a\tb\tt\n3.4000000953674316\t172076\t90\n", Delimited(sep="\t", target="t", float32=True))
    np.testing.assert_array_equal(X, [[3.4, 172076.0]])
    assert X[0, 0] == float("3.4") and y[0] == 90


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("1,2", "line 4: expected 3 fields, found 2"),
        ("1,2,3,4", "line 4: expected 3 fields, found 4"),
        ("1,x,3", "line 4: column 'b' holds 'x', not a number"),
        ("1,inf,3", "line 4: column 'b' holds 'inf', not a finite number"),
        ("1,,3", "line 4: column 'b' holds '', not a number"),
    ],
)
def test_csv_malformed_record_names_file_line_and_what_was_expected(row, message):
    with pytest.raises(DataError, match=f"^f.csv: {message}"):
        delimited(f"a,b,c\n1,2,3\n4,5,6\n{row}\n7,8,9\n", Delimited(target="a"))


def test_records_that_all_have_one_field_more_than_the_header_are_an_error():
    """pandas took the first column as an index and shifted every value by one column (found by hypothesis)."""
    with pytest.raises(DataError, match="^f.csv: line 2: expected 2 fields, found 3$"):
        delimited("a,b\n1,2,3\n4,5,6\n", Delimited(target="a"))


def idx_files(images: np.ndarray, labels: np.ndarray, magic: int = 0x803) -> tuple[io.BytesIO, io.BytesIO]:
    head = struct.pack(">4I", magic, *images.shape)
    return io.BytesIO(head + images.tobytes()), io.BytesIO(struct.pack(">2I", 0x801, len(labels)) + labels.tobytes())


def test_idx_images_and_labels(monkeypatch):
    monkeypatch.setattr(parsers, "ROWS", 3)
    images = np.arange(7 * 2 * 3, dtype=np.uint8).reshape(7, 2, 3)
    labels = np.array([5, 0, 4, 1, 9, 2, 1], dtype=np.uint8)
    files = idx_files(images, labels)
    chunks = list(parsers.parse(Idx(), [lambda f=f: f for f in files], ["img", "lab"]))
    assert [len(c[1]) for c in chunks] == [3, 3, 1]
    np.testing.assert_array_equal(np.concatenate([c[0] for c in chunks]), images.reshape(7, 6))
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), labels)


def test_idx_wrong_magic_or_truncated_file_is_a_clear_error():
    images, labels = np.zeros((2, 2, 2), np.uint8), np.zeros(2, np.uint8)
    with pytest.raises(DataError, match=r"^img: IDX magic number 0x801, expected 0x803"):
        list(parsers.idx(*idx_files(images, labels, magic=0x801), ["img", "lab"]))
    img, lab = idx_files(images, labels)
    short = io.BytesIO(img.getvalue()[:-3])
    with pytest.raises(DataError, match=r"^img: the file ends early"):
        list(parsers.idx(short, lab, ["img", "lab"]))


def test_a_libsvm_format_in_the_catalog_goes_to_the_libsvm_parser():
    chunks = list(parsers.parse(Libsvm(2), [lambda: io.BytesIO(b"1 2:3\n")], ["f"]))
    np.testing.assert_array_equal(chunks[0][0], [[0, 3]])
