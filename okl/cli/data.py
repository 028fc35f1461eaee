"""``okl-data``: list, fetch and verify the real datasets of the catalog, and clean the data directory.

    okl-data list                    # every dataset: task, rows, d, preset, and where each part is
    okl-data fetch casp ijcnn1       # obtain (data dir, mirror, else download), verify, parse into the cache
    okl-data fetch --all
    okl-data verify [NAME ...]       # re-hash raw files and check the caches; exit status 1 on a mismatch
    okl-data clean [--files] [--dry-run]   # remove the caches no okl of this version reads (--files: your files' too)

``--data-dir`` and ``--mirror`` override ``OKL_DATA_DIR`` and ``OKL_DATA_MIRROR``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

from okl.cli import command

PROG = "okl-data"


@command
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=PROG, description="List, fetch and verify okl's datasets.")
    parser.add_argument("--data-dir", help="download and cache folder (default: $OKL_DATA_DIR or ~/.cache/okl)")
    parser.add_argument("--mirror", help="read-only mirror folder (default: $OKL_DATA_MIRROR)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="datasets and the state of their files")
    fetch = commands.add_parser("fetch", help="obtain, verify and cache datasets")
    fetch.add_argument("names", nargs="*", metavar="NAME")
    fetch.add_argument("--all", action="store_true", help="every dataset")
    verify = commands.add_parser("verify", help="re-hash raw files and check caches (all datasets by default)")
    verify.add_argument("names", nargs="*", metavar="NAME")
    clean = commands.add_parser("clean", help="remove the caches no okl of this version reads")
    clean.add_argument("--files", action="store_true", help="also every cache of your own files (parsed again on use)")
    clean.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")
    args = parser.parse_args(argv)

    from okl.data.catalog import SPECS
    from okl.data.sources import data_dir, mirror_root
    from okl.errors import OklError

    data, mirror = data_dir(args.data_dir), mirror_root(args.mirror)
    try:
        names = getattr(args, "names", None) or []
        unknown = sorted(set(names) - set(SPECS))
        if unknown:
            raise OklError(f"unknown dataset {unknown[0]!r}; choose among: {', '.join(sorted(SPECS))}")
        if args.command == "fetch" and not (names or args.all):
            raise OklError("name the datasets to fetch (okl-data list shows them), or pass --all")
        specs = [SPECS[n] for n in names] if names else list(SPECS.values())
        if args.command == "clean":
            code = _clean(data, args.files, args.dry_run)
        elif args.command == "verify":  # without names, your files' caches too
            code = _verify(specs, data, mirror, files=not names)
        else:
            code = {"list": _list, "fetch": _fetch}[args.command](specs, data, mirror)
    except OklError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; caches are only installed once complete", file=sys.stderr)
        sys.exit(130)
    sys.exit(code)


def _list(specs, data, mirror) -> int:
    from okl.data import cache

    found = "" if mirror is None or mirror.is_dir() else " (no such folder: nothing is read from it)"
    print(f"data dir {data}; mirror {mirror or '(none: set OKL_DATA_MIRROR)'}{found}")
    print(f"{'dataset':13} {'task':10} {'rows':>10} {'d':>4}  {'preset':11} parts")
    for spec in specs:
        states = [f"{part.name}: {cache.part_state(spec, part.name, data, mirror)}" for part in spec.parts]
        print(f"{spec.name:13} {spec.task:10} {spec.n:>10,} {spec.d:>4}  {spec.preset:11} {'; '.join(states)}")
    from okl.datasets import user_file

    stale = _outdated(data)
    if files := [c for c in user_file.caches(data) if c not in stale]:  # the outdated ones are said below, once
        print(f"your files: {len(files)} cache(s), {_size(files)} in {user_file.cache_root(data)}")
    if stale:
        print(f"outdated: {len(stale)} cache(s), {_size(stale)} (okl-data clean removes them)")
    return 0


def _outdated(data) -> list:
    """The caches under ``data`` no okl of this version reads: the catalog's and your files' (``okl-data clean``)."""
    from okl.data import cache
    from okl.datasets import user_file

    return cache.outdated(data) + user_file.outdated(data)


def _clean(data, files: bool, dry_run: bool) -> int:
    """Remove the caches no okl of this version reads (another cache version's, your files' of an older parse
    revision, and the half-written ones of parses whose process is gone); ``files``: every cache of your files too,
    which the next run of each file parses again. The mirror is never touched."""
    from okl.data import cache
    from okl.datasets import user_file
    from okl.errors import OklError

    if not data.is_dir() or not os.access(data, os.R_OK | os.X_OK):  # its caches would go unseen: "nothing to clean"
        why = "this user cannot read it" if data.is_dir() else "no such folder" if not data.exists() else "not a folder"
        raise OklError(f"data directory {data}: {why} (--data-dir or OKL_DATA_DIR names it)")
    found = set(_outdated(data))
    read = set(user_file.caches(data)) - found if files else set()  # caches a run of your file reads, under its lock
    found |= read
    if not found:
        print(f"nothing to clean in {data}" + ("" if files else " (--files also removes your files' caches)"))
        return 0
    sizes = {directory: _bytes([directory]) for directory in found}  # each cache walked once
    failed, kept = 0, set()
    for directory in sorted(found):
        size = _shown(sizes[directory])
        if dry_run:
            print(f"would remove {directory} ({size})")
            continue
        # a cache being parsed, or read as its parse ends, is kept: removed then, the parse's process read no cache
        try:
            lock = cache.parse_lock(directory, wait=False) if directory in read else contextlib.nullcontext(True)
            with lock as free:
                why = _remove(directory) if free else "a process is parsing it now"
        except OSError as exc:  # its lock cannot be taken (a data directory this user cannot write)
            free, why = True, str(exc.strerror or exc)
        if why is None:
            print(f"removed {directory} ({size})")
        elif free:
            print(f"cannot remove {directory}: {why}")
            failed += 1
        else:
            print(f"kept {directory}: {why}")
            kept.add(directory)
    if failed:
        print(f"{failed} of {len(found)} cache(s) not removed")
        return 1
    gone = found - kept  # the total is what left the disk (a kept cache's size is not)
    print(f"{len(gone)} cache(s) {'to remove' if dry_run else 'removed'}, {_shown(sum(sizes[d] for d in gone))}")
    return 0


def _remove(directory) -> str | None:
    """Remove a cache; None, else why it could not be. A symbolic link is removed itself, never what it points to
    (rmtree refused it, and it was "removed")."""
    import shutil

    try:
        if directory.is_symlink() or not directory.is_dir():
            directory.unlink()
        else:
            shutil.rmtree(directory)
    except FileNotFoundError:  # removed meanwhile (another okl-data clean)
        pass
    except OSError as exc:
        return str(exc.strerror or exc)
    return None


def _size(paths) -> str:
    """The bytes of the files under ``paths``, in kB, MB or GB."""
    return _shown(_bytes(paths))


def _bytes(paths) -> int:
    """The bytes of the files under ``paths`` (a symbolic link: none)."""
    size = 0
    for f in (f for p in paths if not p.is_symlink() for f in [p, *p.rglob("*")]):
        with contextlib.suppress(OSError):  # gone meanwhile (a parse replacing a cache, another clean)
            size += f.stat().st_size if f.is_file() else 0
    return size


def _shown(size: int) -> str:
    """A number of bytes in kB, MB or GB."""
    unit, scale = next((u, s) for u, s in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)) if size >= s or u == "kB")
    return f"{size / scale:,.1f} {unit}"


def _fetch(specs, data, mirror) -> int:
    """Each part downloaded (or found), parsed into its cache and its cache's bytes checked: a damaged cache (a
    flipped bit) is parsed again, where it was reported ready and every run then refused it. Of several datasets,
    one that cannot be had (offline, not in the mirror) is said and the others fetched (``--all`` stopped at the
    first, leaving the mirror's others unfetched): exit 1 when one failed, after the rest."""
    from okl.errors import OklError

    failed = []
    for spec in specs:
        try:
            _fetch_one(spec, data, mirror)
        except OklError as exc:
            if len(specs) == 1:
                raise
            failed.append(spec.name)
            print(f"{PROG}: error: {exc}", file=sys.stderr)
    if failed:
        print(f"{PROG}: {len(failed)} of {len(specs)} datasets not fetched: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def _fetch_one(spec, data, mirror) -> None:
    """The parts of one dataset (:func:`_fetch`)."""
    from okl.data import cache

    for part in spec.parts:
        start = time.perf_counter()
        directory = cache.build(spec, part.name, None, data, mirror, allow_download=True)
        if damaged := cache.remove_damaged(directory):
            print(f"{spec.name}/{part.name}: {damaged.partition(': remove')[0]}: parsed again")
        directory = cache.build(spec, part.name, None, data, mirror, allow_download=True)  # (current: at once)
        meta = cache.read_meta(directory)
        files = ", ".join(
            f"{f['path']} ({'sha256 ok' if f['checked'] else 'no published sha256'})" for f in meta["files"]
        )
        print(
            f"{spec.name}/{part.name}: {meta['rows']:,} rows × {meta['d']} in {directory} "
            f"({time.perf_counter() - start:.2f} s) from {files}"
        )


def _verify(specs, data, mirror, files: bool = False) -> int:
    """Each raw file re-hashed, each cache's arrays checked (:func:`_verify_cache`); ``files``: your files' caches too
    (``okl-data verify`` without names: they were never checked, and a data directory holding only them had nothing to
    verify)."""
    from okl.data import cache
    from okl.data.sources import content_sha256, find, in_mirror
    from okl.datasets import user_file
    from okl.errors import OklError

    bad, checked = 0, 0
    for spec in specs:
        for part in spec.parts:
            for source in part.sources:
                for file in source.files:
                    located = find(spec, file, data, mirror)
                    if located is None:
                        continue
                    checked += 1
                    try:
                        found = content_sha256(located.path, file.member)
                    except OklError as exc:  # empty, truncated, not the format its name says: report, go on
                        bad += 1
                        exc = in_mirror(exc) if located.origin == "mirror" else exc
                        print(f"{spec.name}/{part.name}: UNREADABLE: {exc}")
                        continue
                    if file.content_sha256 is None:
                        verdict = f"no published sha256 (content {found})"
                    elif found == file.content_sha256:
                        verdict = "ok"
                    else:
                        verdict, bad = f"MISMATCH: content {found}, catalog {file.content_sha256}", bad + 1
                    print(f"{spec.name}/{part.name}: {located.path}: {verdict}")
            for directory in cache.cache_dirs(data, spec, part.name):
                checked += 1
                bad += not _verify_cache(f"{spec.name}/{part.name}", directory)
    yours = user_file.caches(data) if files else []
    stale = set(_outdated(data)) if yours else set()
    if skipped := [d for d in yours if d in stale]:  # never read by this okl (an older one's meta: "BROKEN")
        print(f"your files: {len(skipped)} outdated cache(s) not checked (okl-data clean removes them)")
    for directory in (d for d in yours if d not in stale):
        checked += 1
        source = ((cache.read_meta(directory) or {}).get("files") or [{}])[0].get("path", "?")
        bad += not _verify_cache(f"your file {source}", directory)
    if not checked:
        what = specs[0].name if len(specs) == 1 else f"any of the {len(specs)} datasets"
        raise OklError(
            f"nothing to verify: no file or cache of {what} is in the data directory {data} or the mirror "
            f"({mirror or 'none: set OKL_DATA_MIRROR'}); okl-data fetch NAME obtains them"
        )
    print(f"all verified ({checked} files and caches)" if not bad else f"{bad} problem(s) found")
    return 1 if bad else 0


def _verify_cache(label: str, directory) -> bool:
    """Print whether a cache's arrays are the bytes parsed (their size and sha256); False when they are not."""
    from okl.data import cache

    meta = cache.read_meta(directory)
    try:
        if meta is None:
            raise ValueError(f"its meta.json is missing or unreadable: remove {directory} and it is parsed again")
        cache.CachedPart(directory, meta)
        cache.check_content(directory, meta)
        verdict = f"ok ({meta['rows']:,} rows)"
    except Exception as exc:  # noqa: BLE001 (a truncated or foreign cache: report it, keep checking)
        print(f"{label}: cache {directory}: BROKEN: {exc}")
        return False
    print(f"{label}: cache {directory}: {verdict}")
    return True
