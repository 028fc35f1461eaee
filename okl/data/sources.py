"""Raw files: where they are looked for, how they are opened, hashed and downloaded.

- The data directory (``dataset.data_dir``, else ``OKL_DATA_DIR``, else ``~/.cache/okl``) holds
  ``<dataset>/<file>`` as downloaded, and the parsed cache (:mod:`okl.data.cache`).
- A mirror (``dataset.mirror``, else ``OKL_DATA_MIRROR``) is a read-only folder such as the project's
  ``shared/datasets``: each file is looked up at its catalog path there (``cod-rna/cod-rna.t.xz``),
  else at ``<dataset>/<file>``. It is read in place, never copied.
- Compressed files (.gz, .bz2, .xz, and a member of a .zip) are decompressed while they are read.

A download goes to ``<file>.part`` and is renamed only after its content hash matched the catalog,
so a failed or corrupt download never replaces a good file.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import http.client
import io
import lzma
import os
import sys
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from okl.data.catalog import File, Spec
from okl.errors import DataError

READ = 1 << 20


def data_dir(override: str | None = None) -> Path:
    return Path(override or os.environ.get("OKL_DATA_DIR") or Path.home() / ".cache" / "okl")


def mirror_root(override: str | None = None) -> Path | None:
    root = override or os.environ.get("OKL_DATA_MIRROR")
    return Path(root) if root else None


@dataclass(frozen=True)
class Located:
    """A file found on disk; ``origin`` is ``data`` (the data directory) or ``mirror``."""

    file: File
    path: Path
    origin: str


def find(spec: Spec, file: File, data: Path, mirror: Path | None) -> Located | None:
    """The file in the data directory, else in the mirror, else None."""
    if (data / spec.name / file.name).is_file():
        return Located(file, data / spec.name / file.name, "data")
    if mirror is not None:
        for path in (file.mirror, f"{spec.name}/{file.name}"):
            if path and (mirror / path).is_file():
                return Located(file, mirror / path, "mirror")
    return None


# What a decompressor raises on an empty, truncated or mislabelled file.
CORRUPT = (EOFError, gzip.BadGzipFile, lzma.LZMAError, zlib.error, zipfile.BadZipFile)  # a compressed file cut short
UNREADABLE = (OSError, *CORRUPT)  # or corrupt, and what opening or reading any file raises


REPLACE = "replace it, or remove it and run okl-data fetch"  # a file of the data directory
REPLACE_IN_MIRROR = "replace the mirror's copy (okl never writes there), or unset OKL_DATA_MIRROR and okl-data fetch"


def in_mirror(exc: DataError) -> DataError:
    """``exc`` about a file of the mirror: its advice is the mirror's (removing the file is not okl's to suggest)."""
    return DataError(str(exc).replace(REPLACE, REPLACE_IN_MIRROR))


def unreadable(path: Path, exc: BaseException) -> DataError:
    what = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DataError(
        f"{path}: cannot be read ({what}): it is empty, truncated or not the format its name says; {REPLACE}"
    )


def open_content(path: Path, member: str | None = None, name: str | None = None) -> BinaryIO:
    """A binary stream of the decompressed content of ``path``, by the suffix of ``name`` (default: its own)."""
    suffix = Path(name or path).suffix
    try:
        return _open(path, suffix, member)
    except UNREADABLE as exc:
        raise unreadable(path, exc) from None


def _open(path: Path, suffix: str, member: str | None) -> BinaryIO:
    if suffix == ".gz":
        return gzip.open(path, "rb")
    if suffix == ".bz2":
        return bz2.open(path, "rb")
    if suffix == ".xz":
        return lzma.open(path, "rb")
    if suffix == ".zip":
        archive = zipfile.ZipFile(path)
        names = archive.namelist()
        if member not in names:
            raise DataError(f"{path}: the archive has no {member!r} (it holds {', '.join(names)})")
        return archive.open(member)
    return open(path, "rb")


class HashingReader(io.RawIOBase):
    """A readable binary stream over the content of ``path`` (``stream``) that hashes every byte read through
    it (and counts them on ``bar``, a :func:`progress` counter, when given); a decompression error becomes a
    one-line :class:`DataError` naming the file. A full :class:`io.RawIOBase`, so that text wrappers (the
    delimited parser's diagnosis) accept it."""

    def __init__(self, stream: BinaryIO, path: Path, bar=None) -> None:
        super().__init__()
        self.stream, self.path, self.sha, self.bar = stream, path, hashlib.sha256(), bar

    def read(self, size: int = -1) -> bytes:
        try:
            data = self.stream.read(size)
        except UNREADABLE as exc:
            raise unreadable(self.path, exc) from None
        self.sha.update(data)
        if self.bar is not None:
            self.bar.update(len(data))
        return data

    def readinto(self, buffer) -> int:
        try:
            n = self.stream.readinto(buffer)
        except UNREADABLE as exc:
            raise unreadable(self.path, exc) from None
        self.sha.update(memoryview(buffer)[:n])
        if self.bar is not None:
            self.bar.update(n)
        return n

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.stream.close()
        super().close()

    def finish(self) -> str:
        """Read what the parser left (so the hash covers the whole content) and return the hex digest."""
        while self.read(READ):
            pass
        return self.sha.hexdigest()


def sha256_of(path: Path) -> str:
    """The sha256 of a file's stored bytes; a file that cannot be read (permissions, an I/O error) is a one-line
    DataError naming it, not an OSError that callers would take for the data directory refusing a write."""
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        raise unreadable(path, exc) from None


def content_sha256(path: Path, member: str | None = None, name: str | None = None) -> str:
    with open_content(path, member, name) as stream:
        return HashingReader(stream, path).finish()


def mismatch(path: Path, what: str, found: str, expected: str) -> DataError:
    return DataError(
        f"{path}: sha256 of its {what} is {found} but the catalog expects {expected}; the file was not used "
        f"(nothing was deleted): {REPLACE}"
    )


def check_mirror_copy(located: Located) -> None:
    """The mirror's stored bytes against the catalog (cheap: the compressed file)."""
    expected = located.file.mirror_sha256
    if located.origin == "mirror" and expected and located.path.name == Path(located.file.mirror or "").name:
        found = sha256_of(located.path)
        if found != expected:
            raise in_mirror(mismatch(located.path, "stored bytes", found, expected))


def download(spec: Spec, file: File, data: Path) -> Located:
    """Fetch ``file`` from its URLs into the data directory; verify its content hash before keeping it.

    The bytes go to ``<name>.part``, which an interrupted download leaves behind: the next attempt asks the
    server for the rest only (an HTTP range request; a server that ignores it sends the whole file again).
    Progress (bytes, rate) goes to stderr: a bar on a terminal, a line every few seconds otherwise."""
    target = data / spec.name / file.name
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    errors = []
    for url in file.urls:
        try:
            _fetch(url, partial, file.name)
        except (OSError, http.client.HTTPException) as exc:
            errors.append(f"{url}: {getattr(exc, 'reason', None) or exc or type(exc).__name__}")
            continue
        if file.content_sha256:
            found = content_sha256(partial, file.member, file.name)
            if found != file.content_sha256:
                partial.unlink()
                raise DataError(
                    f"download of {url} has content sha256 {found} but the catalog expects "
                    f"{file.content_sha256}; it was discarded and {target} was left as it was"
                )
        partial.replace(target)
        return Located(file, target, "data")
    kept = (
        f"; the {partial.stat().st_size:,} bytes received are kept in {partial} and the next fetch resumes"
        if (partial.exists() and partial.stat().st_size)
        else ""
    )
    raise DataError(f"cannot download {file.name} ({'; '.join(errors) or 'no URL is known'}){kept}")


def _fetch(url: str, partial: Path, name: str) -> None:
    """Download ``url`` into ``partial``, after the bytes it already holds when the server honours a range."""
    have = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        resumed = have and response.status == 206
        length = response.headers.get("Content-Length")
        total = (have if resumed else 0) + int(length) if length and length.isdigit() else None
        with open(partial, "ab" if resumed else "wb") as out, progress(name, total, have if resumed else 0) as bar:
            while chunk := response.read(READ):
                out.write(chunk)
                bar.update(len(chunk))
        if total is not None and partial.stat().st_size < total:
            raise http.client.IncompleteRead(b"", total - partial.stat().st_size)


def progress(name: str, total: int | None, done: int = 0):
    """A byte counter on stderr for a download or a parse, shown once it has lasted a while (a quick one, or
    one that fails at once, prints nothing): tqdm's bar on a terminal after 1 s, else a line every 10 s."""
    from tqdm import tqdm

    terminal = sys.stderr.isatty()
    return tqdm(
        total=total,
        initial=done,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=name,
        file=sys.stderr,
        mininterval=0.5 if terminal else 10.0,
        delay=1.0 if terminal else 10.0,
        ascii=not terminal,
        dynamic_ncols=terminal,
    )
