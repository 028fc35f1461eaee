"""``dataset=file``: your own data file as a stream, with the keys of every real dataset.

    okl-run dataset=file dataset.path=mydata.csv dataset.target=y

Formats (``dataset.format``, ``auto``: by the file's suffix, after a ``.gz``/``.bz2``/``.xz``): ``csv`` and
``tsv`` with a header line (``target``: the target column's name), ``parquet`` (``target``: a column
name), ``libsvm`` (SVMlight: ``label index:value ...``, d = the largest index), ``npy`` (a 2-D array;
``target``: a column index, default the last column) and ``npz`` (arrays ``X`` and ``y``).

The file is parsed once into the memory-mapped, hashed cache of the catalog datasets
(:mod:`okl.data.cache`), under ``<data dir>/file/cache/<content sha256[:20]>-<format>[-r<parse revision>]-<target>...``
(``PARSE_REVISION``: a cache of an older parser is parsed again, and left on disk): planning a run reads the cache's
meta (rows, d) and the labels (for the task), so the first plan of a new file parses it, later ones do not.
The run's identity holds the file's content sha256 (``content_sha256``, set by okl), not its path: an
edited file is a new run, a moved one is the same run.

Task (``dataset.task``, ``auto``): two distinct labels make a binary stream (the larger one is +1 unless
``dataset.positive`` says otherwise), integer labels 0..C−1 with 2 < C ≤ ``MAX_CLASSES`` a multiclass one,
anything else a regression. Preprocessing: ``x_scale``, ``y_scale``, ``shuffle``, ``skip``, ``length`` as for
the catalog datasets (:mod:`okl.datasets.real`; default: raw values in file order), and a held-out set,
scored at the run's checkpoints: ``test_path`` (a second file of the same format) or ``test_fraction`` (the
last share of the file's rows; the stream is the rows before them).

Example::

    >>> import numpy as np, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "data.csv"
    >>> _ = path.write_text("a,b,y\\n0,1,0.5\\n1,0,1.5\\n1,1,2.0\\n")
    >>> stream = from_file(path, target="y", data_dir=str(path.parent))
    >>> (stream.task, stream.d, stream.n)
    ('regression', 2, 3)
    >>> next(stream.chunks())[1]
    array([0.5, 1.5, 2. ])
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from okl import system
from okl.data import cache, parsers
from okl.data.catalog import Delimited, Part, Spec
from okl.data.sources import CORRUPT, data_dir, open_content
from okl.datasets.base import register
from okl.datasets.real import FileDataset, FileParams
from okl.errors import ConfigError, DataError, OklError, in_python_words
from okl.registry import LOCAL, build_params
from okl.validation import one_of

FORMATS = ("auto", "csv", "tsv", "parquet", "libsvm", "npy", "npz")
SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".npy": "npy",
    ".npz": "npz",
    ".svm": "libsvm",
    ".libsvm": "libsvm",
    ".svmlight": "libsvm",
    ".txt": "libsvm",
}
TASKS = ("auto", "regression", "binary", "multiclass")
OWN_LABELS = {  # the formats whose files say which values are the labels
    "npz": "an .npz holds its labels as the array y",
    "libsvm": "a LIBSVM file holds its labels as the first field of each line",
}
MAX_CLASSES = 100  # integer labels 0..C-1 with more classes are read as a regression target
ROWS = 1 << 16  # rows per chunk of the array formats
# A format's parse revision, in its caches' names, so that a cache parsed by older code is parsed again: csv and tsv
# 2, the header read as the rows are (it was split on every separator: '"price, usd",b,y' named three columns of a
# two-feature table, 'a,a,y' dropped the second a from the inputs)
# parquet 1, npz 1: a Parquet file naming a column twice is refused (each feature was read twice); an .npz holding
# X and x reads X (x had been read)
PARSE_REVISION = {"csv": 2, "tsv": 2, "parquet": 1, "npz": 1}


@dataclass(frozen=True)
class UserFileParams(FileParams):
    """The keys of :class:`~okl.datasets.real.FileParams` and: ``path`` (the file), ``format``, ``task``,
    ``test_path`` or ``test_fraction`` (a held-out set), and ``content_sha256`` / ``test_sha256``, the files'
    content hashes, which okl sets (they, not the paths, are the run's identity)."""

    preset: str | None = "none"
    path: str = field(default="", metadata=LOCAL)
    format: str = "auto"
    task: str = "auto"
    test_path: str | None = field(default=None, metadata=LOCAL)
    test_fraction: float | None = None
    content_sha256: str | None = None
    test_sha256: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        one_of("format", self.format, FORMATS)
        one_of("task", self.task, TASKS)
        if self.test_fraction is not None and not 0 < self.test_fraction < 1:
            raise ConfigError(f"test_fraction must be between 0 and 1 (got {self.test_fraction!r})")
        if self.test_fraction is not None and self.test_path:
            raise ConfigError("give test_path or test_fraction, not both")


@register("file")
class UserFile(FileDataset):
    """The stream of a user's file (see the module)."""

    Params = UserFileParams

    def __init__(self, **params) -> None:
        p = build_params("dataset", "file", UserFileParams, params)
        if not p.path or p.path == "???":
            raise ConfigError(
                "dataset=file needs the file: dataset.path=<a CSV/TSV with a header, Parquet, LIBSVM, .npy or .npz>"
            )
        data = data_dir(p.data_dir)
        fmt = _format(p.format, p.path, "dataset.path")
        guessed = p.format == "auto" and _suffix(p.path) == ".txt"  # LIBSVM by its name, or a table
        if p.target is not None and fmt in OWN_LABELS:  # it was ignored, under a run id of its own
            if guessed:
                raise ConfigError(
                    f"dataset.target: {_by_suffix(p.path, fmt)}; {OWN_LABELS[fmt]}; drop dataset.target, or set "
                    "dataset.format=csv (or tsv) for a table with a header"
                )
            raise ConfigError(f"dataset.target: {OWN_LABELS[fmt]}; drop dataset.target")
        try:
            train = _cached(Path(p.path), fmt, p.target, data, "dataset.path")
        except DataError as exc:  # a table named .txt failed as LIBSVM: say how its format was told, and the fix
            if not guessed:
                raise
            raise DataError(
                f"{exc.args[0]}; {_by_suffix(p.path, fmt)}: dataset.format=csv (or tsv) reads a table"
            ) from None
        if fmt == "npy" and p.target is not None:  # target=3, =-1 and none are one column of a 4-column array: one id
            index = int(p.target) % (train.meta["d"] + 1)
            p = dataclasses.replace(p, target=None if index == train.meta["d"] else str(index))
        held = None
        if p.test_path:  # its own format (an .npz beside a CSV); a LIBSVM pair's absent last features are zeros
            test_fmt = _format(p.format, p.test_path, "dataset.test_path")
            width = train.meta["d"] if test_fmt == "libsvm" else None
            held = _cached(Path(p.test_path), test_fmt, p.target, data, "dataset.test_path", width)
            if fmt == test_fmt == "libsvm" and held.meta["d"] > train.meta["d"]:
                train = _cached(Path(p.path), fmt, p.target, data, "dataset.path", held.meta["d"])
        if p.test_fraction is not None:
            train, held = _split(train, p.test_fraction)
        if held is not None and held.meta["d"] != train.meta["d"]:
            raise DataError(f"{p.test_path}: {held.meta['d']} features, but {p.path} has {train.meta['d']}")
        if p.test_path and {fmt, test_fmt} <= NAMED and held.meta["features"] != train.meta["features"]:
            raise DataError(  # read by position, a held-out file of columns b,a was scored as a,b: silently wrong
                f"{p.test_path}: its feature columns ({_listed(held.meta['features'])}) are not those of {p.path} "
                f"({_listed(train.meta['features'])}) in that order: write the held-out file with the same columns"
            )
        self._cached = {"train": train, **({"test": held} if held is not None else {})}
        labels = np.concatenate([part.y for part in self._cached.values()])
        if p.task == "binary" and p.positive and len(np.unique(labels)) > 2:  # positive splits the labels in two:
            task = "multiclass"  # one label set against the rest, as without task= (FileDataset.task); was refused
        else:
            task = _task(p.task, labels, p.path)
        self.spec = Spec(
            name="file",
            title=p.path,
            task=task,
            d=train.meta["d"],
            parts=tuple(Part(name, part.rows, ()) for name, part in self._cached.items()),
            default_parts=("train",),
            preset="none",
            positive=(float(labels.max()),) if task == "binary" else (),
            targets=(p.target,) if p.target is not None else (),
        )
        if p.test_path and held.meta["files"][0]["content_sha256"] == train.meta["files"][0]["content_sha256"]:
            raise ConfigError(
                "dataset.test_path holds the same rows as dataset.path: a held-out score on them would be on the "
                "training rows; give another file, or dataset.test_fraction=0.2 to hold out the last rows"
            )
        held_out = ["test"] if held is not None and "test" not in (p.parts or []) else None  # parts=[test]: test_set's
        resolved = dataclasses.replace(
            p,
            parts=p.parts or ["train"],
            test_parts=p.test_parts if p.test_parts is not None else held_out,
            content_sha256=train.meta["files"][0]["content_sha256"],
            test_sha256=held.meta["files"][0]["content_sha256"] if held is not None and p.test_path else None,
        )
        super().__init__(**{f.name: getattr(resolved, f.name) for f in dataclasses.fields(resolved)})

    def _load(self, part: str, data, mirror) -> cache.CachedPart:
        return self._cached[part]

    @property
    def features(self) -> list[str]:
        """The feature columns' names (the header's, for CSV/TSV and Parquet; ``x0``, ``x1``... otherwise)."""
        return self._cached["train"].meta["features"]


def from_file(path: str | Path, **keys) -> UserFile:
    """The stream of a file, from Python: ``from_file("mydata.csv", target="y", x_scale="standardize")``
    (the keys of ``dataset=file``); ``chunks()`` yields its (X, y) in bounded pieces."""
    try:
        stream = UserFile(path=str(path), **keys)
        stream.open()
    except OklError as exc:  # "unknown key dataset.foo": the keywords of this call
        raise in_python_words(exc, "dataset") from None
    return stream


def iter_file(path: str | Path, **keys) -> Iterator[tuple[dict[str, float], float | bool]]:
    """The rows of a file as river streams them, ``(x, y)`` with x a dict by feature name:
    ``for x, y in iter_file("mydata.csv", target="y"): model.learn_one(x, y)`` (the keys of ``dataset=file``).
    Binary labels come as river's True/False (the positive class True), which river's classifiers and
    :class:`okl.river.Classifier` take (okl's ±1, which they refused, is the stream's own: ``from_file``)."""
    stream = from_file(path, **keys)
    names = stream.features
    binary = stream.task == "binary"
    for X, y in stream.chunks():
        for row, label in zip(X.tolist(), y.tolist(), strict=True):
            yield dict(zip(names, row, strict=True)), (label > 0 if binary else label)


def _format(fmt: str, path: str, key: str) -> str:
    """``dataset.format``, else the format of ``path`` (the value of ``key``) by its suffix."""
    if Path(path).expanduser().is_dir():
        raise ConfigError(f"{key}: {path!r} is a folder: give the path of your data file")
    if fmt != "auto":
        return fmt
    found = SUFFIXES.get(_suffix(path))
    if found is None:
        raise ConfigError(
            f"{key}: cannot tell the format of {Path(path).name!r} from its name: set dataset.format to "
            f"one of {', '.join(FORMATS[1:])}"
        )
    return found


def _suffix(path: str) -> str:
    """The suffix that tells a file's format (compression's aside), lower case; "" for none."""
    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() not in (".gz", ".bz2", ".xz")]
    return suffixes[-1] if suffixes else ""


def _by_suffix(path: str, fmt: str) -> str:
    """How the format was told, for an error where a guess from the name may be wrong (a CSV named .txt)."""
    return f"{Path(path).name!r} is read as {fmt} by its suffix"


def _task(task: str, y: np.ndarray, path: str) -> str:
    values = np.unique(y)
    integer = bool(np.all(values == np.round(values)))
    if task == "auto":
        if len(values) == 2:
            return "binary"
        if integer and 2 < len(values) <= MAX_CLASSES and values[0] == 0 and values[-1] == len(values) - 1:
            return "multiclass"
        return "regression"
    if task == "binary" and len(values) != 2:
        raise DataError(f"{path}: dataset.task=binary needs two distinct labels; the file has {len(values):,}")
    if task == "multiclass" and not (integer and values[0] >= 0):
        raise DataError(f"{path}: dataset.task=multiclass needs labels 0..C-1 (class indices); the file has others")
    if task == "multiclass" and values[0] != 0:  # labels 1..C: a class 0 no row has, predicted at first
        raise DataError(
            f"{path}: dataset.task=multiclass needs labels 0..C-1 (class indices); the smallest is {values[0]:g}: "
            f"subtract {values[0]:g} from the labels"
        )
    return task


def _cached(
    path: Path, fmt: str, target: str | None, data: Path, key: str, width: int | None = None
) -> cache.CachedPart:
    """The file parsed into its cache (once per content, format, parse revision and target), mapped and checked.
    ``width``: a LIBSVM file's d at least (a file whose last features are all zeros has fewer in its text than the
    other file of its pair): its own d when that is as large (one cache), else ``width`` (a cache of its own). The
    text is read for its d only when no cache answers."""
    path = path.expanduser()
    if not path.is_file():
        raise ConfigError(f"{key}: no file at {str(path)!r}: give the path of your data file")
    with open(path, "rb") as fh:
        sha = hashlib.file_digest(fh, "sha256").hexdigest()
    tag = "default" if target is None else re.sub(r"\W", "_", str(target))
    if target is not None and tag != str(target):  # "a b" and "a_b" are two columns: two caches
        tag += "-" + hashlib.sha256(str(target).encode()).hexdigest()[:8]
    revision = f"-r{PARSE_REVISION[fmt]}" if fmt in PARSE_REVISION else ""
    stem = f"{sha[:20]}-{fmt}{revision}-{tag}"
    directory = cache_root(data) / f"{stem}-v{cache.VERSION}"
    meta, d = cache.read_meta(directory), None
    if width is not None and (meta is None or meta["d"] < width):
        wide = directory.with_name(f"{stem}-d{width}-v{cache.VERSION}")
        if (widened := cache.read_meta(wide)) is not None:
            directory, meta = wide, widened
        elif meta is not None or (d := _libsvm_dimension(path)) < width:
            directory, meta, d = wide, None, width
    if meta is None:  # parsed under the cache's lock: two processes parsing one new file at once removed each
        # other's cache as they installed their own (a TypeError, or "cannot write the parsed cache")
        try:
            with cache.parse_lock(directory):
                meta = cache.read_meta(directory)  # another process parsed it while this one waited
                if meta is None:
                    _parse(path, sha, fmt, target, directory, d)
                    meta = cache.read_meta(directory)
        except OSError as exc:
            raise _unwritable(path, directory, exc) from None
    if meta["d"] == 0:
        raise DataError(f"{path}: no feature columns besides the target: okl learns the target from features")
    part = cache.CachedPart(directory, meta)
    part.check()
    return part


def cache_root(data: Path) -> Path:
    """The folder of your files' caches, one per content, format, parse revision and target (:func:`_cached`)."""
    return data / "file" / "cache"


def caches(data: Path) -> list[Path]:
    """The caches of your files (folders: not those a parse is still writing, nor a file of another program)."""
    return sorted(p for p in cache_root(data).glob("*") if ".tmp" not in p.name and p.is_dir())


def outdated(data: Path) -> list[Path]:
    """Caches of your files that this okl never reads: parsed under an older parse revision of their format
    (``PARSE_REVISION``), or half written by a parse whose process is gone (``<cache>.tmp<pid>``). A cache's name is
    ``<sha256[:20]>-<format>[-r<revision>]-<target tag>...-v<version>`` and a tag holds no ``-`` of its own before its
    hash suffix, so its third field is the revision of a format that has one. ``okl-data clean``."""
    found = []
    for directory in sorted(cache_root(data).glob("*")):
        name, _, pid = directory.name.partition(".tmp")
        if pid:
            # its process gone, and no parse of its cache under way on another machine sharing the data directory
            if (
                pid.isdigit()
                and not system.process_alive(int(pid))
                and not cache.parse_running(directory.with_name(name))
            ):
                found.append(directory)
            continue
        fields = name.split("-")
        fmt = fields[1] if len(fields) > 1 else ""
        older = fmt in PARSE_REVISION and (len(fields) < 5 or fields[2] != f"r{PARSE_REVISION[fmt]}")
        if older and cache.is_cache(directory):
            found.append(directory)
    return found


def _parse(path: Path, sha: str, fmt: str, target: str | None, directory: Path, d: int | None = None) -> None:
    tmp = directory.with_name(f"{directory.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    names: list[str] = []  # the feature columns' names, where the format has them
    try:
        tmp.mkdir(parents=True)
        if fmt == "libsvm":  # one pass over the text for its lines and d (d given: a held-out pair's wider one)
            lines, found = _libsvm_shape(path)
            d = d or found
            _dense_fits(path, lines, d, tmp)
        rows, d, dtypes, arrays = cache.write_arrays(_chunks(path, fmt, target, names, d), tmp)
        if rows == 0:
            raise DataError(f"{path}: the file holds no rows of data")
        meta = {
            "version": cache.VERSION,
            "dataset": "file",
            "part": path.name,
            "target": target,
            "format": fmt,
            "rows": rows,
            "d": d,
            "dtypes": dtypes,
            "files": [{"path": str(path), "origin": "user", "content_sha256": sha, "checked": True}],
            "arrays_sha256": arrays,
            "features": names or [f"x{i}" for i in range(d)],
        }
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        shutil.rmtree(directory, ignore_errors=True)  # (its caller holds the cache's lock)
        tmp.replace(directory)
    except CORRUPT as exc:  # gzip's bad CRC is an OSError: it was blamed on the data directory; a cut file, internal
        what = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(
            f"{path}: its compressed content is cut short or corrupt ({what}): copy or write it again"
        ) from None
    except OSError as exc:
        failed = Path(exc.filename).resolve() if exc.filename else None
        if failed is not None and not failed.is_relative_to(directory.parent.resolve()):  # your file, not the cache
            raise DataError(f"cannot read {failed}: {exc.strerror or exc}") from None
        raise _unwritable(path, directory, exc) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _unwritable(path: Path, directory: Path, exc: OSError) -> DataError:
    return DataError(
        f"cannot write the parsed cache of {path} in {directory.parent} ({exc.strerror or exc}): set "
        f"OKL_DATA_DIR (or dataset.data_dir) to a writable folder"
    )


def _chunks(
    path: Path, fmt: str, target: str | None, names: list[str], d: int | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    name = str(path)
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        columns, skip, encoding = _header(path, sep)
        target = None if target is None else str(target)  # a column named 3 is target=3
        # a first line of numbers is a row of data (with target=3, "1,2,3" had become the header and its row was
        # lost), unless it is pandas' header of unnamed columns, 0,1,2...
        numbered = [str(i) for i in range(len(columns))]
        if columns != numbered and all(parsers.is_float(c) for c in columns):
            raise ConfigError(
                f"dataset.target: the first line of {path.name} holds numbers ({', '.join(columns[:4])}...), not a "
                f"header: a {fmt.upper()} needs a header line naming its columns (if this is one, rename its "
                "columns; or save the file as .npy and give the target's column index)"
            )
        if target is None or target not in columns:
            what = "name the target column" if target is None else f"no column {target!r} in the header"
            other = next((c for c in ";|\t," if len(columns) == 1 and c in columns[0] and c != sep), None)
            hint = f"; its header is one column: a file separated by {other!r} is not {fmt.upper()}" if other else ""
            raise ConfigError(f"dataset.target: {what} of {path.name} (its columns: {', '.join(columns)}){hint}")
        names.extend(c for c in columns if c != target)
        opener = lambda: _past(open_content(path), skip)  # noqa: E731
        yield from parsers.delimited(opener, Delimited(sep=sep, target=target), name, encoding, strip=True)
    elif fmt == "parquet":
        yield from _parquet(path, target, names)
    elif fmt == "libsvm":
        yield from parsers.libsvm(open_content(path), d, name)  # d: _parse's, from its pass over the text
    else:
        yield from _arrays(path, fmt, target)


NAMED = {"csv", "tsv", "parquet"}  # formats whose feature columns have names (a held-out file's must match them)
BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, which Excel writes before a CSV's header


def _header(path: Path, sep: str) -> tuple[list[str], int, str]:
    """The header's column names (without the spaces around them), the bytes to skip before it (a byte order mark)
    and the file's encoding: UTF-8 where the header reads as UTF-8 (température, not tempÃ©rature), else latin-1."""
    with open_content(path) as fh:
        raw = fh.readline()
    skip = len(BOM) if raw.startswith(BOM) else 0
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):  # Excel's "Unicode text": text, not the binary file it was called
        raise DataError(f"{path}: UTF-16 text: save it as UTF-8 (Excel: CSV UTF-8)")
    if b"\x00" in raw:  # an .npy, a Parquet file... read as text: its "columns" were its binary header
        raise DataError(f"{path}: a binary file, not {'CSV' if sep == ',' else 'TSV'} text: check dataset.format")
    try:
        line, encoding = raw[skip:].decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        line, encoding = raw[skip:].decode("latin-1"), "latin-1"
    line = line.rstrip("\r\n")
    if "\r" in line:  # no LF: the whole file was its "first line" (csv's "new-line character seen", an internal error)
        raise DataError(f"{path}: its lines end in a carriage return alone (old Mac text): save it with LF or CRLF")
    if not line:
        raise DataError(f"{path}: the file is empty (a header line and rows of numbers were expected)")
    columns = [c.strip() for c in next(csv.reader([line], delimiter=sep))]  # quotes as the rows' parser reads them
    for i, column in enumerate(columns):  # split on every comma, '"price, usd"' was two columns and names shifted
        if not column:
            raise DataError(
                f"{path}: column {i + 1} of the header has no name (the index DataFrame.to_csv writes: save the file "
                "with index=False, or name the column)"
            )
    _named_once(path, columns)
    return columns, skip, encoding


def _named_once(path: Path, columns: list[str]) -> None:
    """Refuse a table that names a column twice: a CSV's second "a" was dropped from the inputs, silently; a Parquet
    file's made every feature twice (and a second target column, an internal error)."""
    for i, column in enumerate(columns):
        if columns.index(column) != i:
            raise DataError(
                f"{path}: the header names column {column!r} twice (columns {columns.index(column) + 1} "
                f"and {i + 1}): rename one"
            )


def _listed(names: list[str], most: int = 6) -> str:
    return ", ".join(names[:most]) + (f", ... ({len(names)} in all)" if len(names) > most else "")


def _past(fh, skip: int):
    """``fh`` after its first ``skip`` bytes."""
    fh.read(skip)
    return fh


def _parquet(path: Path, target: str | None, names: list[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    try:
        table = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise DataError(f"{path}: not a readable Parquet file ({exc})") from None
    columns = table.schema_arrow.names
    _named_once(path, columns)
    target = None if target is None else str(target)  # a column named 3 is target=3
    if target is None or target not in columns:
        what = "name the target column" if target is None else f"no column {target!r}"
        raise ConfigError(f"dataset.target: {what} of {path.name} (its columns: {', '.join(columns)})")
    for column in table.schema_arrow:
        if not (
            pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_boolean(column.type)
        ):
            raise DataError(f"{path}: column {column.name!r} holds {column.type}, not numbers: drop or encode it")
    if index := next((c for c in columns if c.startswith("__index_level_")), None):  # its row labels, as a feature
        raise DataError(
            f"{path}: column {index!r} is the index pandas saved with the DataFrame: save it with index=False, or "
            "reset_index() first to keep it as a named column"
        )
    features, done = [c for c in columns if c != target], 0
    names.extend(features)
    for batch in table.iter_batches(batch_size=ROWS):
        frame = batch.to_pandas(ignore_metadata=True)  # a named index is one of the file's columns (it was a KeyError)
        X, y = np.ascontiguousarray(frame[features].to_numpy(np.float64)), frame[target].to_numpy(np.float64)
        yield _finite(X, y, path, done)
        done += len(y)


def _libsvm_dimension(path: Path) -> int:
    """The largest feature index of a LIBSVM file (its d): one pass over its text."""
    return _libsvm_shape(path)[1]


def _libsvm_shape(path: Path) -> tuple[int, int]:
    """The lines and the largest feature index (d) of a LIBSVM file: one pass over its text."""
    largest, lines = 0, 0
    with open_content(path) as fh:
        for block in iter(lambda: fh.read(parsers.BLOCK), b""):
            lines += block.count(b"\n")
            found = re.findall(rb"(\d+):", block)
            if found:
                largest = max(largest, max(map(int, found)))
    if largest == 0:
        raise DataError(f"{path}: no 'index:value' pairs: not a LIBSVM/SVMlight file")
    return lines, largest


def _dense_fits(path: Path, lines: int, d: int, where: Path) -> None:
    """Refuse a LIBSVM file of ``lines`` rows whose rows, made dense (okl's learners read dense inputs), would not fit
    the data directory's free space, or one block of its text, so made, the memory: 100 rows with an index of
    9,940,267 took 7.4 GiB, and ended in a MemoryError."""
    dense = max(lines, 1) * d * 8
    free = shutil.disk_usage(where).free
    advice = "keep fewer features (hashing, a projection) before okl reads the file"
    if dense > free:
        raise DataError(
            f"{path}: {lines:,} rows × d = {d:,} take {dense / 2**30:,.1f} GiB dense, more than the "
            f"{free / 2**30:,.1f} GiB free in {where}: {advice}"
        )
    per_block = dense * min(1.0, parsers.BLOCK / max(1, path.stat().st_size))
    system.require_memory(int(per_block), f"{path}: a block of its rows, dense (d = {d:,})", advice)


def _arrays(path: Path, fmt: str, target: str | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    try:
        loaded = np.load(path, mmap_mode="r" if fmt == "npy" else None, allow_pickle=False)
    except (OSError, ValueError) as exc:  # numpy reads other bytes as a pickle, and offers to unpickle them: never
        why = "not NumPy's format: check dataset.format" if "pickle" in str(exc) else str(exc).splitlines()[0]
        raise DataError(f"{path}: not a readable {fmt} file ({why})") from None
    if fmt == "npz":
        keys = {k.lower(): k for k in loaded.files}
        if not {"x", "y"} <= set(keys):
            raise DataError(f"{path}: an .npz needs arrays X and y (it holds {', '.join(loaded.files)})")
        keys |= {k.lower(): k for k in ("X", "y") if k in loaded.files}  # X and x both there: X (x had won, silently)
        try:
            X, y = loaded[keys["x"]], loaded[keys["y"]]
        except ValueError as exc:  # an array of Python objects (text, mixed types), which okl never unpickles
            raise DataError(f"{path}: not a readable npz file ({str(exc).splitlines()[0]})") from None
    else:
        if loaded.ndim != 2 or loaded.shape[1] < 2:
            raise DataError(f"{path}: an .npy must hold a 2-D array with the target as one column")
        column = -1 if target is None else _column(target, loaded.shape[1])
        y = loaded[:, column]
        X = np.delete(loaded, column % loaded.shape[1], axis=1)
    if X.ndim != 2 or y.shape != (len(X),):
        raise DataError(f"{path}: X must be rows × features and y one value per row (got {X.shape} and {y.shape})")
    for name, array in (("X", X), ("y", y)):  # text: numpy's "could not convert string to float", with no file
        if array.dtype.kind not in "biuf":
            raise DataError(f"{path}: {name} holds {array.dtype} values, not numbers: encode them as numbers first")
    for start in range(0, len(y), ROWS):
        Xc, yc = np.asarray(X[start : start + ROWS], np.float64), np.asarray(y[start : start + ROWS], np.float64)
        yield _finite(np.ascontiguousarray(Xc), yc, path, start)


def _finite(X: np.ndarray, y: np.ndarray, path: Path, start: int) -> tuple[np.ndarray, np.ndarray]:
    """(X, y), unless a value is missing, NaN or infinite: then a one-line error naming its row."""
    bad = ~(np.isfinite(X).all(axis=1) & np.isfinite(y))
    if bad.any():
        raise DataError(
            f"{path}: data row {start + int(np.argmax(bad)) + 1:,} has a missing or non-finite value: drop or impute it"
        )
    return X, y


def _column(target: str, columns: int) -> int:
    try:
        index = int(target)
    except ValueError:
        raise ConfigError(
            f"dataset.target: an .npy has no column names; give the target's index (got {target!r})"
        ) from None
    if not -columns <= index < columns:
        raise ConfigError(f"dataset.target: column {index} is outside the array's {columns} columns")
    return index


def _split(part: cache.CachedPart, fraction: float) -> tuple[cache.CachedPart, cache.CachedPart]:
    """The rows before the last ``fraction`` of the file, and those last rows (at least one each)."""
    held = min(part.rows - 1, max(1, round(fraction * part.rows)))
    if part.rows < 2:
        raise DataError(f"{part.meta['files'][0]['path']}: one row cannot be split into a stream and a test set")
    cut = part.rows - held
    return _rows(part, 0, cut, "train"), _rows(part, cut, part.rows, "test")


def _rows(part: cache.CachedPart, start: int, stop: int, name: str) -> cache.CachedPart:
    out = copy.copy(part)
    out.x, out.y = part.x[start:stop], part.y[start:stop]
    out.meta = {**part.meta, "rows": stop - start, "part": name}
    return out
