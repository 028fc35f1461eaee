"""Property-based tests (hypothesis) of the LIBSVM and CSV parsers: random valid files, in every spelling
the formats allow, parse to the values they were written from; a random corruption of one record is a
one-line error naming the file and that record's line."""

import csv
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okl.data import parsers
from okl.data.catalog import Delimited
from okl.errors import DataError

SETTINGS = settings(  # derandomized: the same examples on every run
    max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
values = st.floats(allow_nan=False, allow_infinity=False, width=64)
spellings = st.sampled_from(
    [lambda v: repr(float(v)), lambda v: f"{v:.17g}", lambda v: f"{v:.17e}", lambda v: f"{v:.17E}"]
)


@st.composite
def libsvm_files(draw):
    """(text, X, y, line of each row): rows in random index order, with blank and comment lines, tabs or
    runs of spaces, LF or CRLF, every number spelled so that it reads back exactly."""
    d = draw(st.integers(1, 6))
    n = draw(st.integers(1, 25))
    spell, newline = draw(spellings), draw(st.sampled_from(["\n", "\r\n"]))
    X, y = np.zeros((n, d)), np.zeros(n)
    lines, where = [], []
    for i in range(n):
        for _ in range(draw(st.integers(0, 2))):
            lines.append(draw(st.sampled_from(["", "   ", "# a comment", "\t"])))
        y[i] = draw(values)
        columns = draw(st.permutations(range(d)))[: draw(st.integers(0, d))]
        pairs = []
        for j in columns:
            X[i, j] = draw(values)
            pairs.append(f"{j + 1}:{spell(X[i, j])}")
        gap = draw(st.sampled_from([" ", "  ", "\t"]))
        comment = draw(st.sampled_from(["", " # trailing"]))
        lines.append(gap.join([spell(y[i]), *pairs]) + comment)
        where.append(len(lines))
    text = newline.join(lines) + draw(st.sampled_from(["", newline]))
    return text, X, y, where


def parse_libsvm(text: str, d: int):
    chunks = list(parsers.libsvm(io.BytesIO(text.encode()), d, "f.svm"))
    return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])


@SETTINGS
@given(libsvm_files())
def test_random_libsvm_files_parse_to_the_values_written(file):
    text, X, y, _ = file
    got_X, got_y = parse_libsvm(text, X.shape[1])
    np.testing.assert_array_equal(got_y, y)
    np.testing.assert_array_equal(got_X, X)


LIBSVM_CORRUPTIONS = [  # (replacement of a row, given d), each one malformed
    lambda d: "abc 1:1",
    lambda d: "1 0:2",
    lambda d: f"1 {d + 1}:2",
    lambda d: "1 1:2 1:3",
    lambda d: "1 1:x",
    lambda d: "1 1:",
    lambda d: "1 1: 2",
    lambda d: "1 1:inf",
    lambda d: "1 1:nan",
    lambda d: "1 2",
]


@SETTINGS
@given(libsvm_files(), st.data())
def test_a_corrupted_libsvm_row_is_a_one_line_error_naming_its_line(file, data):
    text, X, _, where = file
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    row = data.draw(st.integers(0, len(where) - 1))
    corrupt = data.draw(st.sampled_from(LIBSVM_CORRUPTIONS))(X.shape[1])
    lines[where[row] - 1] = corrupt
    with pytest.raises(DataError) as error:
        parse_libsvm(newline.join(lines), X.shape[1])
    message = str(error.value)
    assert message.startswith(f"f.svm: line {where[row]}:") and "\n" not in message


@st.composite
def csv_files(draw):
    """(text, Delimited, X, y): a header, the target in any column, separator ',' or ';' or tab, LF or
    CRLF, quoted or bare header names, blank lines between records."""
    columns = draw(st.integers(2, 6))
    n = draw(st.integers(1, 25))
    sep = draw(st.sampled_from([",", ";", "\t"]))
    spell, newline = draw(spellings), draw(st.sampled_from(["\n", "\r\n"]))
    names = [f"c{j}" for j in range(columns)]
    target = draw(st.integers(0, columns - 1))
    quote = draw(st.booleans())
    table = np.array([[draw(values) for _ in range(columns)] for _ in range(n)])
    lines = [sep.join(f'"{c}"' if quote else c for c in names)]
    where = []
    for i in range(n):
        if draw(st.booleans()) and i:
            lines.append("")
        lines.append(sep.join(spell(v) for v in table[i]))
        where.append(len(lines))
    text = newline.join(lines) + newline
    keep = [j for j in range(columns) if j != target]
    return text, Delimited(sep=sep, target=names[target]), table[:, keep], table[:, target], where


def direct_csv(text: str, fmt: Delimited):
    """The reference: Python's csv module and float(), row by row."""
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=fmt.sep) if r]
    header, body = rows[0], np.array([[float(v) for v in r] for r in rows[1:]])
    t = header.index(fmt.target)
    return np.delete(body, t, axis=1), body[:, t]


def parse_csv(text: str, fmt: Delimited):
    chunks = list(parsers.delimited(lambda: io.BytesIO(text.encode()), fmt, "f.csv"))
    return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])


@SETTINGS
@given(csv_files())
def test_random_csv_files_parse_like_a_direct_reader(file):
    text, fmt, X, y, _ = file
    got_X, got_y = parse_csv(text, fmt)
    direct_X, direct_y = direct_csv(text, fmt)
    np.testing.assert_array_equal(got_X, direct_X)
    np.testing.assert_array_equal(got_y, direct_y)
    np.testing.assert_array_equal(got_X, X)
    np.testing.assert_array_equal(got_y, y)


CSV_CORRUPTIONS = [  # (fields of a record) -> a malformed record
    lambda fields, sep: sep.join(fields[:-1]),
    lambda fields, sep: sep.join([*fields, "1"]),
    lambda fields, sep: sep.join(["x", *fields[1:]]),
    lambda fields, sep: sep.join(["inf", *fields[1:]]),
    lambda fields, sep: sep.join(["", *fields[1:]]),
]


@SETTINGS
@given(csv_files(), st.data())
def test_a_corrupted_csv_record_is_a_one_line_error_naming_its_line(file, data):
    text, fmt, _, _, where = file
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    row = data.draw(st.integers(0, len(where) - 1))
    corrupt = data.draw(st.sampled_from(CSV_CORRUPTIONS))
    lines[where[row] - 1] = corrupt(lines[where[row] - 1].split(fmt.sep), fmt.sep)
    with pytest.raises(DataError) as error:
        parse_csv(newline.join(lines), fmt)
    message = str(error.value)
    assert message.startswith(f"f.csv: line {where[row]}:") and "\n" not in message
