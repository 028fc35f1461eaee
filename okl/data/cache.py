"""The parsed cache: each part of a dataset parsed once into flat binary arrays, then memory-mapped.

Layout, under the data directory (:mod:`okl.data.sources`)::

    <dataset>/cache/<part>[-<target>]-v<VERSION>/
        x.bin      X, rows × d, C order (float64; uint8 for MNIST pixels)
        y.bin      y, raw labels or targets (float64; uint8 for MNIST)
        meta.json  rows, d, dtypes, the source file, its content sha256, the sha256 of x.bin and
                   y.bin (``okl-data verify`` checks them), parse time, and the parsing format; a
                   cache whose format is no longer the catalog's is parsed again

Row-major flat arrays (not Parquet) because a shuffled stream gathers whole rows at random: one
contiguous read per row, straight from the page cache. A part is parsed in bounded chunks written as
they come, into a temporary directory renamed into place when the content hash has been checked; a
cache is never replaced by a failed parse. Readers map the files and drop their pages after each
chunk (``madvise``), so streaming 5M SUSY rows stays far below 2 GB of resident memory. A mapped part is
checked when a dataset first opens it in a process (one pass: the sha256 of its arrays against meta.json,
and non-finite values), so a damaged cache (a flipped bit) is named before any round is played.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import mmap
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from okl.data import parsers
from okl.data.catalog import File, Format, Spec
from okl.data.sources import (
    HashingReader,
    Located,
    check_mirror_copy,
    download,
    find,
    mismatch,
    open_content,
    progress,
)
from okl.errors import DataError

VERSION = 2  # 2: meta.json records the arrays' sha256
SCAN = 1 << 20  # values checked at a time
CHECKED: set[tuple] = set()  # caches (and their files' inode, size and times) this process has checked


def cache_dir(data: Path, spec: Spec, part: str, target: str | None) -> Path:
    suffix = f"-{''.join(c if c.isalnum() else '_' for c in target)}" if target else ""
    return data / spec.name / "cache" / f"{part}{suffix}-v{VERSION}"


def outdated(data: Path) -> list[Path]:
    """The cache directories under ``data`` that no okl of this version reads: another :data:`VERSION`'s (every
    cache's name ends in ``-v<VERSION>``, the catalog's datasets' and your files' alike; :func:`is_cache`), and the
    catalog's half-written ones (``<cache>.tmp``, beside their cache's lock) whose parse is no longer under way
    (:func:`parse_running`). ``okl-data clean``."""
    found = []
    for directory in sorted(data.glob("*/cache/*-v*")):
        version = directory.name.rpartition("-v")[2]
        other = version.isdigit() and int(version) != VERSION and is_cache(directory)
        parsed = directory.with_suffix("")
        cut_short = (  # a parse's, gone
            version.endswith(".tmp")
            and directory.is_dir()
            and lock_path(parsed).is_file()
            and not parse_running(parsed)
        )
        if other or cut_short:
            found.append(directory)
    return found


def is_cache(directory: Path) -> bool:
    """Whether ``directory`` is a parsed cache (a folder holding its meta.json, of any version), not a folder of
    another program whose name looks like one (``okl-data clean --data-dir`` given a folder that is no data
    directory)."""
    return directory.is_dir() and (directory / "meta.json").is_file()


def parse_running(directory: Path) -> bool:
    """Whether a process holds the lock of the cache ``directory`` (:func:`parse_lock`): a parse of it is under way,
    here or on another machine sharing the data directory (whose pids mean nothing here). ``okl-data clean``."""
    try:
        with open(lock_path(directory)) as lock:  # (not created: without one, nothing holds it)
            return not _locked(lock, wait=False)
    except FileNotFoundError:
        return False
    except OSError:  # it cannot be told: a parse may be under way
        return True


def read_meta(directory: Path) -> dict | None:
    try:
        meta = json.loads((directory / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if meta.get("version") == VERSION else None


def parsing(source_format: Format, target: str | None) -> Format:
    """The format a part is parsed with when ``target`` is chosen (None: the catalog's); where the format
    names no feature columns, the catalog's target becomes a feature."""
    if target is None or target == source_format.target:
        return source_format
    return dataclasses.replace(source_format, target=target)


def current(directory: Path, spec: Spec, part: str) -> dict | None:
    """The cache's meta if it was parsed with a format the catalog still gives ``part``, else None."""
    meta = read_meta(directory)
    formats = [repr(parsing(s.format, meta["target"])) for s in spec.part(part).sources] if meta else []
    return meta if meta and meta.get("format") in formats else None


def locate(spec: Spec, part: str, data: Path, mirror: Path | None) -> tuple[int, list[Located]] | None:
    """The first source of ``part`` whose files are all on disk: (source index, located files)."""
    for i, source in enumerate(spec.part(part).sources):
        found = [find(spec, f, data, mirror) for f in source.files]
        if all(found):
            return i, found
    return None


def cache_dirs(data: Path, spec: Spec, part: str) -> list[Path]:
    """Cache directories of ``part`` (one per target column)."""
    return sorted((data / spec.name / "cache").glob(f"{part}*-v{VERSION}"))


def part_state(spec: Spec, part: str, data: Path, mirror: Path | None) -> str:
    """``cached`` (its arrays have the sizes parsed: ``okl-data verify`` checks their bytes), ``DAMAGED cache`` (an
    array truncated or gone: every run would refuse it), ``raw in data`` / ``raw in mirror`` (parsed on first use),
    ``CORRUPT in mirror`` (a mirror copy whose stored bytes are not the catalog's: it would be refused) or
    ``missing`` (to download)."""
    caches = [(d, meta) for d in cache_dirs(data, spec, part) if (meta := current(d, spec, part))]
    if caches:
        wrong = [w for d, meta in caches if (w := wrong_size(d, meta))]
        if len(wrong) < len(caches):
            return "cached"
        return f"DAMAGED cache ({wrong[0]}; okl-data fetch {spec.name} parses it again)"
    if found := locate(spec, part, data, mirror):
        for file in found[1]:
            try:
                check_mirror_copy(file)  # cheap: the stored (compressed) bytes
            except DataError:
                return f"CORRUPT in mirror ({file.path.name}: sha256 is not the catalog's; okl-data verify {spec.name})"
        return f"raw in {found[1][0].origin}"
    return "missing"


def on_disk(spec: Spec, data: Path, mirror: Path | None) -> bool:
    """Every part of the dataset is cached or its raw files are in the data directory or the mirror."""
    return all(part_state(spec, part.name, data, mirror) != "missing" for part in spec.parts)


def offline(spec: Spec, part: str, why: str = "") -> DataError:
    sources = spec.part(part).sources  # the mirror's copy where a source has one (cpusmall's LIBSVM file has none)
    file = next((s for s in sources if s.files[0].mirror), None) or next(s for s in sources if s.files[0].urls)
    file = file.files[0]
    where = file.mirror or f"{spec.name}/{file.name}"
    return DataError(
        f"dataset {spec.name!r} is not available offline{why}: run `okl-data fetch {spec.name}` when online, "
        f"or set OKL_DATA_MIRROR (or dataset.mirror) to a folder holding {where}"
    )


def obtain(spec: Spec, part: str, data: Path, mirror: Path | None, allow_download: bool) -> tuple[int, list[Located]]:
    """Files of a source of ``part``: on disk, else downloaded from the first source that has URLs."""
    found = locate(spec, part, data, mirror)
    if found:
        return found
    sources = spec.part(part).sources
    i = next((i for i, s in enumerate(sources) if all(f.urls for f in s.files)), None)
    if not allow_download or i is None:
        raise offline(spec, part)
    try:
        return i, [_downloaded(spec, f, data) for f in sources[i].files]
    except DataError as exc:
        if str(exc).startswith("cannot download"):
            raise offline(spec, part, f" and {exc}") from None
        raise


def build(spec: Spec, part: str, target: str | None, data: Path, mirror: Path | None, allow_download: bool) -> Path:
    """Parse ``part`` into its cache directory (if it is not there yet) and return the directory.

    Processes that need the same cache at once (the runs of a parallel sweep) take turns on a lock file
    (:func:`lock_path`): the first parses, the others then find it current. Without the lock, two MNIST runs
    started together deleted each other's half-written cache."""
    directory = cache_dir(data, spec, part, target)
    if current(directory, spec, part):
        return directory
    try:
        with parse_lock(directory):
            if current(directory, spec, part):  # another process built it while this one waited
                return directory
            return _parse(spec, part, target, directory, data, mirror, allow_download)
    except OSError as exc:  # reading errors are DataErrors already: this is the data directory refusing a write
        raise DataError(
            f"cannot write {spec.name}'s parsed cache in the data directory {data} ({exc.strerror or exc}: "
            f"{exc.filename or directory}): set OKL_DATA_DIR (dataset.data_dir, okl-data --data-dir) "
            f"to a writable folder"
        ) from None


def _downloaded(spec: Spec, file: File, data: Path) -> Located:
    """``file`` in the data directory, downloaded under a lock of its own unless it is there by then: the caches of two
    targets of one dataset (parkinson's, airquality's) read one download under two cache locks, and two processes
    building them at once wrote one ``.part`` together (the second's hash read a file the first had renamed)."""
    path = data / spec.name / file.name
    path.parent.mkdir(parents=True, exist_ok=True)
    with _held(path.with_name(f".{file.name}.lock")):
        return find(spec, file, data, None) or download(spec, file, data)


def expected_rows(spec: Spec, part: str) -> int | None:
    """The rows a parse of ``part`` must give: the catalog's count (every source holds the same records)."""
    return spec.part(part).rows


def lock_path(directory: Path) -> Path:
    """The lock file of a cache directory: beside the dataset's files, not among its caches."""
    return directory.parent.parent / f".{directory.name}.lock"


@contextlib.contextmanager
def parse_lock(directory: Path, wait: bool = True) -> Iterator[bool]:
    """Hold the lock of the cache ``directory`` (:func:`lock_path`; OSError when the data directory refuses it):
    processes that need the same cache at once take turns, and each looks for it again once it has the lock.
    ``wait=False``: yield False at once, holding nothing, when another process holds it."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    with _held(lock_path(directory), wait) as free:
        yield free


@contextlib.contextmanager
def _held(lock_file: Path, wait: bool = True) -> Iterator[bool]:
    """Hold the exclusive lock of ``lock_file`` (made if absent, kept after: another process may be waiting on it) until
    the block ends; ``wait=False``: yield False at once, holding nothing, when another process holds it."""
    with open(lock_file, "a") as lock:
        yield _locked(lock, wait)


def _locked(lock, wait: bool) -> bool:
    """Take the exclusive lock of the open file ``lock`` (released when it closes); without ``wait``, False at once
    when another process holds it."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _parse(
    spec: Spec, part: str, target: str | None, directory: Path, data: Path, mirror: Path | None, allow_download: bool
) -> Path:
    index, located = obtain(spec, part, data, mirror, allow_download)
    source = spec.part(part).sources[index]
    for file in located:
        check_mirror_copy(file)
    fmt = parsing(source.format, target)
    readers: list[HashingReader] = []

    bar = progress(f"parsing {spec.name}/{part}", None)

    def opener(file: Located):
        def first_pass():
            counted = bar if not readers else None  # the first pass; a diagnosis reads the file again
            readers.append(HashingReader(open_content(file.path, file.file.member), file.path, counted))
            return readers[-1]

        return first_pass

    openers = [opener(f) for f in located]
    names = [str(f.path) for f in located]
    tmp = directory.with_name(directory.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    start = time.perf_counter()
    try:
        rows, d, dtypes, arrays = write_arrays(parsers.parse(fmt, openers, names), tmp)
        hashes = [r.finish() for r in readers[: len(located)]]
        for file, found in zip(located, hashes, strict=True):
            if file.file.content_sha256 and found != file.file.content_sha256:
                raise mismatch(file.path, "content", found, file.file.content_sha256)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        bar.close()
        for reader in readers:
            reader.close()
    if rows == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise DataError(f"{names[0]}: no rows")
    expected = expected_rows(spec, part)
    if expected is not None and rows != expected:  # the check of the files without a published sha256
        shutil.rmtree(tmp, ignore_errors=True)
        raise DataError(
            f"{', '.join(names)}: {rows:,} rows, but {spec.name}/{part} has {expected:,} (catalog): the file is "
            f"truncated or another version and was not used (nothing was deleted): replace it, or remove it and "
            f"run okl-data fetch {spec.name}"
        )
    meta = {
        "version": VERSION,
        "dataset": spec.name,
        "part": part,
        "target": target,
        "format": repr(fmt),
        "rows": rows,
        "d": d,
        "dtypes": dtypes,
        "files": [
            {"path": str(f.path), "origin": f.origin, "content_sha256": h, "checked": bool(f.file.content_sha256)}
            for f, h in zip(located, hashes, strict=True)
        ],
        "arrays_sha256": arrays,
        "note": source.note,
        "parse_s": round(time.perf_counter() - start, 3),
    }
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
    shutil.rmtree(directory, ignore_errors=True)  # a stale cache of another version
    tmp.replace(directory)
    return directory


def write_arrays(chunks, directory: Path) -> tuple[int, int, dict[str, str], dict[str, str]]:
    """Write x.bin and y.bin; returns rows, d, dtypes and the files' sha256."""
    rows, d, dtypes = 0, None, {}
    hx, hy = hashlib.sha256(), hashlib.sha256()
    with open(directory / "x.bin", "wb") as fx, open(directory / "y.bin", "wb") as fy:
        for X, y in chunks:
            d = X.shape[1] if d is None else d
            dtypes = {"x": X.dtype.str, "y": y.dtype.str}
            bx, by = np.ascontiguousarray(X).tobytes(), np.ascontiguousarray(y).tobytes()
            fx.write(bx)
            fy.write(by)
            hx.update(bx)
            hy.update(by)
            rows += len(y)
    return rows, d or 0, dtypes, {"x": hx.hexdigest(), "y": hy.hexdigest()}


def arrays_sha256(directory: Path) -> dict[str, str]:
    """The sha256 of a cache's x.bin and y.bin as they are on disk now."""
    out = {}
    for key in ("x", "y"):
        with open(directory / f"{key}.bin", "rb") as fh:
            out[key] = hashlib.file_digest(fh, "sha256").hexdigest()
    return out


def check_content(directory: Path, meta: dict, found: dict[str, str] | None = None) -> None:
    """Raise DataError when the arrays are not what was parsed: another size or gone, or (``found``: their
    sha256, read from disk when None) other bytes."""
    if wrong := wrong_size(directory, meta):
        raise DataError(f"{wrong}: remove {directory} and it is parsed again")
    found = arrays_sha256(directory) if found is None else found
    for key, recorded in meta["arrays_sha256"].items():
        if found[key] != recorded:
            raise DataError(
                f"{directory / f'{key}.bin'}: its content changed since it was parsed (sha256 {found[key][:12]}…, "
                f"recorded {recorded[:12]}…): remove {directory} and it is parsed again"
            )


def remove_damaged(directory: Path) -> str | None:
    """Remove the cache at ``directory`` if its arrays are not the bytes that were parsed (:func:`check_content`);
    returns why, or None when it is sound or gone. Under the cache's lock (:func:`parse_lock`): two ``okl-data fetch``
    of a damaged cache at once each removed it, one while the other hashed it or parsed it again (a traceback)."""
    with parse_lock(directory):
        meta = read_meta(directory)
        if meta is None:  # gone (another process removed it): the caller parses it again
            return None
        try:
            check_content(directory, meta)
        except DataError as exc:
            shutil.rmtree(directory, ignore_errors=True)
            return str(exc)
    return None


def wrong_size(directory: Path, meta: dict) -> str:
    """What is wrong with the sizes of a cache's x.bin and y.bin against its meta (rows × d of its dtypes): ``""``
    when both are right, else the first's path and sizes (a copy cut short, a file deleted)."""
    for key, shape in (("x", (meta["rows"], meta["d"])), ("y", (meta["rows"],))):
        path = directory / f"{key}.bin"
        expected = int(np.prod(shape)) * np.dtype(meta["dtypes"][key]).itemsize
        size = path.stat().st_size if path.is_file() else None
        if size != expected:
            return f"{path}: {'missing' if size is None else f'{size:,} bytes'}, expected {expected:,}"
    return ""


@dataclass
class CachedPart:
    """A part mapped from its cache: ``x`` (rows × d) and ``y``; ``release()`` drops resident pages."""

    directory: Path
    meta: dict

    def __post_init__(self) -> None:
        if wrong := wrong_size(self.directory, self.meta):  # both arrays, once, before either is mapped
            raise DataError(f"{wrong}: remove {self.directory}")
        rows, d = self.meta["rows"], self.meta["d"]
        self._maps = []
        self.x = self._map("x.bin", self.meta["dtypes"]["x"], (rows, d))
        self.y = self._map("y.bin", self.meta["dtypes"]["y"], (rows,))

    def _map(self, name: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
        path = self.directory / name
        with open(path, "rb") as fh:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self._maps.append(mapped)
        return np.frombuffer(mapped, dtype=dtype).reshape(shape)

    @property
    def rows(self) -> int:
        return self.meta["rows"]

    @property
    def state(self) -> tuple:
        """The state of the part's files on disk (folder, then inode, size and modification time of each array):
        what a result computed from the arrays in this process is kept under."""
        files = [os.stat(self.directory / f"{k}.bin") for k in ("x", "y")]
        return (self.directory, *((f.st_ino, f.st_size, f.st_mtime_ns) for f in files))

    def check(self) -> None:
        """Raise DataError when the arrays are not the bytes that were parsed (a flipped bit: their sha256 is
        recorded in meta.json) or hold NaN or inf (naming the first such row of the source file). One pass
        over the mapped files, once per process for each state of the files on disk."""
        key = self.state
        if key in CHECKED:
            return
        hx, bad = hashlib.sha256(), None
        step = max(1, SCAN // max(1, self.x.shape[1]))
        for a in range(0, self.rows, step):
            hx.update(self.x[a : a + step])
            if bad is None and self.x.dtype.kind == "f":
                rows = ~np.isfinite(self.x[a : a + step]).all(axis=1) | ~np.isfinite(self.y[a : a + step])
                bad = a + int(np.argmax(rows)) if rows.any() else None
        found = {"x": hx.hexdigest(), "y": hashlib.sha256(self.y).hexdigest()}
        values = None if bad is None else np.concatenate((self.x[bad], [self.y[bad]]))
        self.release()
        check_content(self.directory, self.meta, found)
        if values is not None:
            source = self.meta["files"][0]["path"]
            raise DataError(
                f"{source}: data row {bad + 1:,} holds {values[~np.isfinite(values)][0]} (cache {self.directory}): "
                f"run `okl-data verify {self.meta['dataset']}`, and remove the cache to parse the file again"
            )
        CHECKED.add(key)

    def release(self) -> None:
        for mapped in self._maps:
            mapped.madvise(mmap.MADV_DONTNEED)


def load(spec: Spec, part: str, target: str | None, data: Path, mirror: Path | None, allow_download: bool):
    """The cached part, parsed first if needed."""
    directory = build(spec, part, target, data, mirror, allow_download)
    part = CachedPart(directory, read_meta(directory))
    part.check()
    return part
