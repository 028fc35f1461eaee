"""Parsers: raw files (already decompressed, as binary streams) to chunks of (X, y).

Each parser reads its input in bounded pieces and yields ``(X, y)`` chunks, X with the canonical
column order of the dataset (:mod:`okl.data.catalog`), y the raw label or target. Every value
must be finite; a malformed record is a :class:`~okl.errors.DataError` naming the file, the line and
what was expected.

- LIBSVM (:func:`libsvm`): vectorised over blocks of ~4 MiB of text: the tokens of a block are split
  by bytes.split, located with numpy, and converted by numpy's correctly rounded string-to-float
  cast. Indices may come in any order; absent features are 0; ``#`` starts a comment; blank lines
  and CRLF endings are accepted; a repeated index or an index outside 1..d is an error.
- Delimited text (:func:`delimited`): pandas' C reader in chunks (quoted headers, CRLF, scientific
  notation, decimal commas); on a failure the file is scanned again line by line to name the line.
- IDX (:func:`idx`) and MATLAB (:func:`mat`): the MNIST and Raker files.
"""

from __future__ import annotations

import csv
import io
import re
import struct
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from okl.data.catalog import Delimited, Format, Idx, Libsvm, Mat
from okl.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

BLOCK = 1 << 22  # bytes of text per LIBSVM block
ROWS = 1 << 16  # rows per delimited chunk
_SEPARATORS = np.zeros(256, dtype=bool)
_SEPARATORS[[ord(c) for c in " \t\r\n\x0b\x0c:"]] = True

Chunks = Iterator[tuple[np.ndarray, np.ndarray]]
Opener = Callable[[], BinaryIO]


def parse(fmt: Format, openers: list[Opener], names: list[str]) -> Chunks:
    """Chunks of (X, y) of the files opened by ``openers`` (one per file of the source)."""
    if isinstance(fmt, Libsvm):
        return libsvm(openers[0](), fmt.d, names[0])
    if isinstance(fmt, Delimited):
        return delimited(openers[0], fmt, names[0])
    if isinstance(fmt, Idx):
        return idx(openers[0](), openers[1](), names)
    if isinstance(fmt, Mat):
        return mat(openers[0](), fmt, names[0])
    raise TypeError(f"no parser for {fmt!r}")


# LIBSVM ---------------------------------------------------------------------------------------------


def libsvm(stream: BinaryIO, d: int, name: str) -> Chunks:
    """Rows ``label i:v i:v ...`` in blocks cut at line ends; line numbers count from 1."""
    line, rest = 1, b""
    while True:
        block = stream.read(BLOCK)
        data = rest + block
        if block:
            cut = data.rfind(b"\n") + 1
            data, rest = data[:cut], data[cut:]
        if data:
            X, y = _libsvm_block(data, line, d, name)
            if len(y):
                yield X, y
            line += data.count(b"\n")
        if not block:
            return


def _libsvm_block(data: bytes, first_line: int, d: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    if b"#" in data:
        data = re.sub(rb"#[^\n]*", b"", data)
    raw = np.frombuffer(data, dtype=np.uint8)
    sep = _SEPARATORS[raw]
    starts = np.flatnonzero(~sep & np.concatenate(([True], sep[:-1])))
    line_of = np.cumsum(raw == 10) - (raw == 10)  # 0-based line of each byte
    tok_line = line_of[starts]
    first = np.flatnonzero(np.concatenate(([True], tok_line[1:] != tok_line[:-1]))) if len(starts) else starts
    lines, count = tok_line[first], np.diff(np.append(first, len(starts)))
    colons = np.flatnonzero(raw == ord(":"))

    def fail(line: int, what: str):
        raise DataError(f"{name}: line {first_line + int(line):,}: {what}")

    loose = (colons == 0) | (colons + 1 >= len(raw))
    loose[~loose] = sep[colons[~loose] - 1] | sep[colons[~loose] + 1]
    if loose.any():
        fail(line_of[colons[np.argmax(loose)]], "expected index:value with no space around ':'")
    per_line = np.bincount(np.searchsorted(lines, line_of[colons]), minlength=len(lines))
    bad = (count % 2 == 0) | (per_line != (count - 1) // 2)
    if bad.any():
        fail(lines[np.argmax(bad)], "expected a label followed by index:value pairs")
    tokens = data.replace(b":", b" ").split()
    try:
        values = np.array(tokens, dtype=np.bytes_).astype(np.float64)
    except ValueError:
        k = next(i for i, t in enumerate(tokens) if not is_float(t))
        fail(tok_line[k], f"{tokens[k].decode(errors='replace')!r} is not a number")
    rank = np.repeat(np.arange(len(lines)), count)
    k = np.arange(len(tokens)) - first[rank]
    pos, val = k % 2 == 1, (k % 2 == 0) & (k > 0)
    index, row = values[pos], rank[pos]
    wrong = (index != np.floor(index)) | (index < 1) | (index > d)
    if wrong.any():
        j = np.argmax(wrong)
        zero = (
            " (a 0-based file, as scikit-learn's dump_svmlight_file writes by default: save it with zero_based=False)"
        )
        fail(lines[row[j]], f"feature index {index[j]:g} is not an integer in 1..{d}{zero if index[j] == 0 else ''}")
    flat = row * d + index.astype(np.int64) - 1
    order = np.sort(flat)
    repeated = order[1:] == order[:-1]
    if repeated.any():
        fail(lines[order[np.argmax(repeated)] // d], "a feature index is repeated")
    X = np.zeros((len(lines), d))
    X.reshape(-1)[flat] = values[val]
    y = values[first]
    _finite(X, y, lambda r: f"line {first_line + int(lines[r]):,}", name)
    return X, y


def is_float(token: bytes | str) -> bool:
    """Whether a text token reads as a number."""
    try:
        float(token)
    except ValueError:
        return False
    return True


def _finite(X: np.ndarray, y: np.ndarray, where: Callable[[int], str], name: str) -> None:
    ok = np.isfinite(X).all(axis=1) & np.isfinite(y)
    if not ok.all():
        raise DataError(f"{name}: {where(int(np.argmin(ok)))}: a value is not finite (nan or inf)")


# Delimited text -------------------------------------------------------------------------------------


def delimited(opener: Opener, fmt: Delimited, name: str, encoding: str = "latin-1", strip: bool = False) -> Chunks:
    """Chunks of a delimited file; on a malformed record, one line naming it (see :func:`_diagnose`). ``strip``: the
    header's names without the spaces around them (a user's " a , y " names columns a and y)."""
    import pandas as pd  # here, not at the top: every okl command imports this module, few read text files

    used = None if fmt.features is None else [fmt.target, *fmt.features]
    if used is None and fmt.drop:
        drop = set(fmt.drop)
        used = lambda column: column not in drop  # noqa: E731
    try:
        reader = pd.read_csv(
            opener(),
            sep=fmt.sep,
            decimal=fmt.decimal,
            header=0 if fmt.header else None,
            usecols=used,
            dtype=np.float64,
            chunksize=ROWS,
            encoding=encoding,
        )
    except pd.errors.EmptyDataError:
        raise DataError(f"{name}: the file holds no records: replace it, or remove it and run okl-data fetch") from None
    try:
        with reader:
            for frame in reader:
                if not isinstance(frame.index, pd.RangeIndex):  # pandas took a first column as the index
                    raise ValueError("records with one more field than the header")  # located by _diagnose
                if strip:
                    frame.columns = [str(c).strip() for c in frame.columns]
                yield _columns(frame, fmt, name)
    except (ValueError, pd.errors.ParserError) as exc:
        _diagnose(opener, fmt, name, encoding)
        raise DataError(f"{name}: cannot parse: {str(exc).splitlines()[0]}") from None


def _columns(frame: pd.DataFrame, fmt: Delimited, name: str) -> tuple[np.ndarray, np.ndarray]:
    if fmt.target not in frame.columns:
        raise DataError(f"{name}: no column {fmt.target!r}; its columns are {', '.join(map(str, frame.columns))}")
    if fmt.blank_records:
        frame = frame.dropna(how="all")
    if fmt.missing is not None:
        frame = frame[~(frame == fmt.missing).any(axis=1)]
    features = fmt.features if fmt.features is not None else [c for c in frame.columns if c != fmt.target]
    X = frame[list(features)].to_numpy(dtype=np.float64)
    y = frame[fmt.target].to_numpy(dtype=np.float64)
    if fmt.float32:
        X, y = _shortest_float32(X), _shortest_float32(y)
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise ValueError("non-finite value")  # located by _diagnose
    return np.ascontiguousarray(X), y


def _shortest_float32(values: np.ndarray) -> np.ndarray:
    """Values that are float32 numbers become the shortest decimal that rounds to them (3.4000000953674316
    -> 3.4); the others are left alone."""
    single = values.astype(np.float32)
    exact = single.astype(np.float64) == values
    return np.where(exact, single.astype(str).astype(np.float64), values)


def _diagnose(opener: Opener, fmt: Delimited, name: str, encoding: str) -> None:
    """Scan the file record by record and raise a DataError for the first malformed one, if any."""
    with io.TextIOWrapper(opener(), encoding=encoding, errors="replace", newline="") as text:
        rows = csv.reader(text, delimiter=fmt.sep)
        header = next(rows, None) if fmt.header else None
        header = header and [column or f"Unnamed: {i}" for i, column in enumerate(header)]  # pandas' names
        width = None
        for record in rows:
            if not record or (fmt.blank_records and not "".join(record)):
                continue
            width = width or (len(header) if header else len(record))
            where = f"{name}: line {rows.line_num:,}"
            if len(record) != width:
                raise DataError(f"{where}: expected {width} fields, found {len(record)}")
            columns = header or list(range(width))
            for column, field in zip(columns, record, strict=True):
                if column in fmt.drop or (fmt.features is not None and column not in (fmt.target, *fmt.features)):
                    continue
                try:
                    if "_" in field:  # Python's float reads 1_000, the parser does not (a message with no line)
                        raise ValueError(field)
                    value = float(field.replace(fmt.decimal, "."))
                except ValueError:
                    missing = field.strip() in ("", "NA", "NaN", "nan", "null", "None")
                    fix = (
                        ": a missing value, drop or impute it" if missing
                        else ": encode the labels as numbers (0/1, or 0..C-1 for C classes)" if column == fmt.target
                        else ""
                    )  # fmt: skip
                    raise DataError(f"{where}: column {column!r} holds {field!r}, not a number{fix}") from None
                if not np.isfinite(value):
                    raise DataError(f"{where}: column {column!r} holds {field!r}, not a finite number")


# IDX and MATLAB -------------------------------------------------------------------------------------


def idx(images: BinaryIO, labels: BinaryIO, names: list[str]) -> Chunks:
    """LeCun's IDX: images (magic 0x803, n×rows×cols bytes) and labels (magic 0x801, n bytes)."""
    n, *shape = _idx_header(images, 3, names[0])
    (m,) = _idx_header(labels, 1, names[1])
    if m != n:
        raise DataError(f"{names[1]}: {m:,} labels for {n:,} images in {names[0]}")
    y = np.frombuffer(_exactly(labels, n, names[1]), dtype=np.uint8)
    width = int(np.prod(shape))
    for start in range(0, n, ROWS):
        rows = min(ROWS, n - start)
        X = np.frombuffer(_exactly(images, rows * width, names[0]), dtype=np.uint8).reshape(rows, width)
        yield X, y[start : start + rows]


def _idx_header(stream: BinaryIO, dims: int, name: str) -> tuple[int, ...]:
    magic = struct.unpack(">I", _exactly(stream, 4, name))[0]
    if magic != 0x800 + dims:
        raise DataError(f"{name}: IDX magic number {magic:#x}, expected {0x800 + dims:#x} (unsigned bytes, {dims}-d)")
    return struct.unpack(f">{dims}I", _exactly(stream, 4 * dims, name))


def _exactly(stream: BinaryIO, size: int, name: str) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise DataError(f"{name}: the file ends early (expected {size:,} more bytes, found {len(data):,})")
    return data


def mat(stream: BinaryIO, fmt: Mat, name: str) -> Chunks:
    """One chunk: ``X`` transposed to T×d and ``y`` flattened."""
    import scipy.io  # here, not at the top: as pandas in :func:`delimited`

    try:
        content = scipy.io.loadmat(io.BytesIO(stream.read()))
        X, y = np.asarray(content[fmt.x_key], dtype=np.float64).T, np.asarray(content[fmt.y_key], np.float64)
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{name}: not a MATLAB file with {fmt.x_key!r} and {fmt.y_key!r} ({exc})") from None
    if y.size != len(X):
        raise DataError(f"{name}: {y.size:,} targets for {len(X):,} rows")
    y = y.reshape(-1)
    _finite(X, y, lambda r: f"row {r + 1:,}", name)
    yield np.ascontiguousarray(X), y
