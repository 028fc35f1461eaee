"""``okl-data list | fetch | verify | clean`` and ``okl-run`` on real datasets."""

import gzip
import hashlib
import json
import lzma
import multiprocessing
import time

import pytest

from helpers import only_run, write_susy


def test_fetch_from_the_mirror_then_list_shows_the_cache(okl_data, mirror, tmp_path):
    data = tmp_path / "fresh"
    code, out, _ = okl_data("--data-dir", str(data), "fetch", "casp")
    assert code == 0 and "casp/all: 45,730 rows × 9" in out and "CASP.csv.xz (sha256 ok)" in out
    code, out, _ = okl_data("--data-dir", str(data), "list")
    lines = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert "all: cached" in lines["casp"] and "test: raw in mirror" in lines["cod_rna"]
    assert "all: missing" in lines["susy"] and len(lines) == 16


def test_verify_reports_a_corrupt_file_and_exits_1(okl_data, okl_run, no_data, monkeypatch):
    write_susy(no_data, monkeypatch)
    assert okl_data("fetch", "susy")[0] == 0
    code, out, _ = okl_data("verify", "susy")
    assert (
        code == 0
        and "no published sha256" in out
        and "cache" in out
        and out.endswith("all verified (2 files and caches)\n")
    )
    listed = lambda: next(line for line in okl_data("list")[1].splitlines() if line.startswith("susy "))  # noqa: E731
    assert listed().endswith("all: cached")
    x = no_data / "susy" / "cache" / "all-v2" / "x.bin"
    x.write_bytes(b"12345678")  # a truncated cache
    code, out, _ = okl_data("verify", "susy")
    assert code == 1 and "BROKEN" in out and "1 problem(s) found" in out
    # list said "cached", and every run then refused it
    assert listed().endswith(f"all: DAMAGED cache ({x}: 8 bytes, expected 43,200; okl-data fetch susy parses it again)")
    x.unlink()
    assert listed().endswith(f"all: DAMAGED cache ({x}: missing, expected 43,200; okl-data fetch susy parses it again)")
    code, _, err = okl_run("dataset=susy", "progress=false", "n=10")  # was a FileNotFoundError, as was fetch
    assert code == 2 and err.count("\n") == 1 and f"{x}: missing, expected 43,200: remove " in err
    assert okl_data("fetch", "susy")[0] == 0 and listed().endswith("all: cached")


def test_a_same_size_cache_with_a_nan_fails_verify_and_the_run_names_the_cache(okl_data, okl_run, no_data, monkeypatch):
    """The size check let it through, and the run blamed round 1 and suggested a policy no key provides. The
    run checks the cache's sha256 before its values: the source file is not to blame."""
    import numpy as np

    write_susy(no_data, monkeypatch)
    assert okl_data("fetch", "susy")[0] == 0
    cache = no_data / "susy" / "cache" / "all-v2"
    x = np.fromfile(cache / "x.bin").reshape(300, 18)
    x[11, 4] = np.nan  # data row 12
    x.tofile(cache / "x.bin")  # same size, other bytes
    code, out, _ = okl_data("verify", "susy")
    assert code == 1 and "x.bin: its content changed since it was parsed" in out and f"remove {cache}" in out
    code, _, err = okl_run("dataset=susy", "progress=false")
    assert code == 2 and err.count("\n") == 1
    assert f"{cache / 'x.bin'}: its content changed since it was parsed" in err and f"remove {cache} and it" in err
    meta = json.loads((cache / "meta.json").read_text())  # as if the parse had produced the NaN
    meta["arrays_sha256"]["x"] = hashlib.sha256((cache / "x.bin").read_bytes()).hexdigest()
    (cache / "meta.json").write_text(json.dumps(meta))
    code, _, err = okl_run("dataset=susy", "progress=false")
    assert code == 2 and err.count("\n") == 1
    assert "SUSY.csv.gz: data row 12 holds nan" in err and str(cache) in err and "missing-value" not in err


def test_fetch_parses_a_damaged_cache_again(okl_data, okl_run, no_data, monkeypatch):
    """okl-data fetch said "sha256 ok" over a cache with a flipped byte, and every run then refused it."""
    write_susy(no_data, monkeypatch)
    assert okl_data("fetch", "susy")[0] == 0
    x = no_data / "susy" / "cache" / "all-v2" / "x.bin"
    intact = x.read_bytes()
    x.write_bytes(intact[:100] + bytes([intact[100] ^ 1]) + intact[101:])
    assert okl_run("dataset=susy", "progress=false", "n=10")[0] == 2
    code, out, _ = okl_data("fetch", "susy")
    assert code == 0 and "susy/all: " in out and "x.bin: its content changed since it was parsed" in out
    assert "parsed again" in out and x.read_bytes() == intact
    assert okl_run("dataset=susy", "progress=false", "n=10")[0] == 0


def _fetch_at_once(start, out) -> None:
    """``okl-data fetch susy`` when every racer is ready; it says how it ended. Hashing a cache takes a while here, as
    a large one does, so that the racers' checks overlap."""
    from okl.cli.data import main
    from okl.data import cache

    hashed = cache.arrays_sha256

    def slow(directory):
        time.sleep(0.2)
        return hashed(directory)

    cache.arrays_sha256 = slow
    start.wait(timeout=20)
    try:
        main(["fetch", "susy"])
    except SystemExit as exc:
        out.put(exc.code)
    except BaseException as exc:  # noqa: BLE001 (reported to the test)
        out.put(f"{type(exc).__name__}: {exc}")


def test_fetches_of_a_damaged_cache_at_once_parse_it_again_once(okl_data, no_data, monkeypatch):
    """Two okl-data fetch of a damaged cache at once each removed it, one while the other hashed it or parsed it again
    (FileNotFoundError's traceback). The check and the removal are under the cache's lock."""
    write_susy(no_data, monkeypatch)
    assert okl_data("fetch", "susy")[0] == 0
    x = no_data / "susy" / "cache" / "all-v2" / "x.bin"
    intact = x.read_bytes()
    x.write_bytes(intact[:100] + bytes([intact[100] ^ 1]) + intact[101:])
    context = multiprocessing.get_context("fork")
    start, out = context.Barrier(3), context.Queue()
    racers = [context.Process(target=_fetch_at_once, args=(start, out)) for _ in range(3)]
    for racer in racers:
        racer.start()
    got = [out.get(timeout=60) for _ in racers]
    for racer in racers:
        racer.join(timeout=20)
    assert got == [0, 0, 0] and x.read_bytes() == intact
    assert okl_data("verify", "susy")[0] == 0


def test_verify_checks_your_files_caches_too(okl_data, no_data, tmp_path):
    """okl-data verify checked the catalog's caches only: with your files' caches alone on disk it said "nothing to
    verify" (exit 2), and a damaged one was never reported."""
    from okl.datasets import from_file

    path = tmp_path / "mine.csv"
    path.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{i / 10}\n" for i in range(50)))
    from_file(path, target="y")
    code, out, _ = okl_data("verify")
    assert code == 0 and f"your file {path}: cache " in out and ": ok (50 rows)" in out
    (x,) = (no_data / "file" / "cache").glob("*/x.bin")
    x.write_bytes(bytes([x.read_bytes()[0] ^ 1]) + x.read_bytes()[1:])
    code, out, _ = okl_data("verify")
    assert code == 1 and "BROKEN" in out and "its content changed since it was parsed" in out
    assert okl_data("verify", "casp")[0] == 2  # a dataset named: that dataset's files only


def test_the_offline_message_names_the_mirrors_file_and_a_missing_mirror_is_said(okl_data, okl_run, no_data, tmp_path):
    """cpusmall's first source is LIBSVM's file, which the mirror does not hold: the message named
    cpusmall/cpusmall; and a --mirror that is no folder was listed as the mirror, silently."""
    code, _, err = okl_run("dataset=cpusmall", "dataset.download=false", "progress=false")
    assert code == 2 and err.rstrip().endswith("a folder holding cpusmall/227_cpu_small.tsv.gz")
    code, out, _ = okl_data("--mirror", str(tmp_path / "nowhere"), "list")
    assert code == 0 and out.splitlines()[0].endswith("nowhere (no such folder: nothing is read from it)")


def test_verify_names_a_file_that_differs_from_the_catalog(okl_data, no_data):
    (no_data / "casp").mkdir(parents=True)
    (no_data / "casp" / "CASP.csv").write_text('"RMSD","F1"\n1,2\n')
    code, out, _ = okl_data("verify", "casp")
    assert code == 1 and "CASP.csv: MISMATCH: content " in out and "catalog 4277cfcb" in out


def test_errors_are_one_line(okl_data, no_data):
    assert okl_data("fetch", "casq")[2].startswith("okl-data: error: unknown dataset 'casq'; choose among: air,")
    code, _, err = okl_data("fetch", "casp")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("okl-data: error: dataset 'casp' is not available offline and cannot download CASP.csv")


def test_the_readme_command_ends_in_the_offline_message(okl_run, results_root, no_data):
    code, _, err = okl_run("learner=pkawv_taylor", "dataset=susy", "M=2")
    assert code == 2 and err.startswith("okl-run: error: dataset 'susy' is not available offline")
    assert "okl-data fetch susy" in err and err.count("\n") == 1 and not results_root.exists()


def test_the_readme_command_runs_on_a_file_in_susy_format(okl_run, results_root, no_data, monkeypatch):
    write_susy(no_data, monkeypatch, n=400)
    code, out, err = okl_run("learner=pkawv_taylor", "dataset=susy", "M=2", "progress=false")
    assert code == 0, err
    assert "complete, 399 rounds" in out and "average zero_one loss" in out  # rows 2..400, as the preset says


def test_a_real_dataset_runs_end_to_end_from_the_mirror(okl_run, results_root, mirror):
    code, out, err = okl_run("learner=pkrr_taylor", "dataset=cod_rna", "n=5000", "progress=false")
    assert code == 0, err
    assert "complete, 5,000 rounds" in out
    (source,) = only_run(results_root, learner="pkrr_taylor", dataset="cod_rna").manifest().dataset_files
    assert source["part"] == "test" and source["content_sha256"].startswith("58cff16d") and source["checked"]


def test_verify_checks_every_file_and_reports_unreadable_ones_in_one_line(okl_data, no_data, tmp_path):
    """An empty, truncated or mislabelled file got a traceback (EOFError, LZMAError) and stopped the check."""
    import lzma

    mirror = tmp_path / "mirror"
    (mirror / "cod-rna").mkdir(parents=True)
    (mirror / "cod-rna" / "cod-rna.t.xz").write_bytes(b"")
    (mirror / "cod-rna" / "cod-rna.xz").write_bytes(lzma.compress(b"-1 1:2\n" * 1000)[:40])
    (no_data / "ijcnn1").mkdir(parents=True)
    (no_data / "ijcnn1" / "ijcnn1.t.bz2").write_bytes(b"not bzip2 at all")
    (no_data / "casp").mkdir(parents=True)
    (no_data / "casp" / "CASP.csv").write_text('"RMSD","F1"\n1,2\n')
    code, out, err = okl_data("--mirror", str(mirror), "verify", "cod_rna", "ijcnn1", "casp")
    assert code == 1 and err == ""
    unreadable = [line for line in out.splitlines() if "UNREADABLE" in line]
    assert len(unreadable) == 3 and all(u.startswith(("cod_rna/", "ijcnn1/")) for u in unreadable)
    for line in unreadable:  # the mirror's copies are not okl's to remove: "remove it and run okl-data fetch" was said
        advice = "replace the mirror's copy" if line.startswith("cod_rna/") else "replace it, or remove it and run okl-"
        assert advice in line
    assert "casp/all" in out and "MISMATCH" in out and out.endswith("4 problem(s) found\n")


GOOD = ",".join(["1"] + ["0.5"] * 18)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (",".join(["0"] + ["0.5"] * 17 + ["abc"]), "line 2: column 18 holds 'abc', not a number"),
        (",".join(["0"] + ["0.5"] * 17 + ["nan"]), "line 2: column 18 holds 'nan', not a finite number"),
        (",".join(["0"] + ["0.5"] * 17 + ["1e400"]), "line 2: column 18 holds '1e400', not a finite number"),
        (
            ",".join(["0"] + ["0.5"] * 17 + [""]),
            "line 2: column 18 holds '', not a number: a missing value, drop or impute it",
        ),
        (",".join(["0"] + ["0.5"] * 17), "line 2: expected 19 fields, found 18"),
        (",".join(["0"] + ["0.5"] * 19), "line 2: expected 19 fields, found 20"),
    ],
)
def test_a_malformed_record_of_a_file_without_checksum_is_named_in_one_line(
    okl_data, okl_run, no_data, record, message
):
    """Every one of these ended in `internal error: AttributeError: 'HashingReader' object has no attribute
    'writable'`: the diagnosis wrapped the hashing reader in a text reader."""
    (no_data / "susy").mkdir(parents=True)
    with gzip.open(no_data / "susy" / "SUSY.csv.gz", "wt") as fh:
        fh.write(f"{GOOD}\n{record}\n{GOOD}\n")
    code, _, err = okl_data("fetch", "susy")
    assert code == 2 and err == f"okl-data: error: {no_data / 'susy' / 'SUSY.csv.gz'}: {message}\n"
    code, _, err = okl_run("dataset=susy", "progress=false")
    assert code == 2 and err == f"okl-run: error: {no_data / 'susy' / 'SUSY.csv.gz'}: {message}\n"


def test_an_empty_file_is_named_in_one_line(okl_data, no_data):
    (no_data / "susy").mkdir(parents=True)
    with gzip.open(no_data / "susy" / "SUSY.csv.gz", "wt"):
        pass
    code, _, err = okl_data("fetch", "susy")
    assert code == 2 and err.count("\n") == 1
    assert err.endswith("SUSY.csv.gz: the file holds no records: replace it, or remove it and run okl-data fetch\n")


def test_a_data_directory_that_refuses_writes_is_one_line(okl_data, okl_run, mirror, tmp_path):
    """A read-only data directory gave a traceback (okl-data fetch) or an internal OSError (okl-run). The
    directory here lies under a file, which refuses writes as a read-only one does, even for root."""
    (tmp_path / "a-file").write_text("")
    data = tmp_path / "a-file" / "data"
    expected = f"cannot write cpusmall's parsed cache in the data directory {data} (Not a directory: "
    code, _, err = okl_data("--data-dir", str(data), "fetch", "cpusmall")
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"okl-data: error: {expected}")
    assert err.endswith("): set OKL_DATA_DIR (dataset.data_dir, okl-data --data-dir) to a writable folder\n")
    code, _, err = okl_run("dataset=cpusmall", f"dataset.data_dir={data}", "progress=false")
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"okl-run: error: {expected}")


def test_verify_with_nothing_on_disk_says_so_instead_of_all_verified(okl_data, no_data):
    code, out, err = okl_data("verify", "casp")
    assert code == 2 and out == ""
    assert err == (
        f"okl-data: error: nothing to verify: no file or cache of casp is in the data directory {no_data} or the "
        "mirror (none: set OKL_DATA_MIRROR); okl-data fetch NAME obtains them\n"
    )
    assert okl_data("verify")[2].startswith("okl-data: error: nothing to verify: no file or cache of any of the 16")


def test_list_shows_a_mirror_copy_whose_checksum_differs_as_corrupt(okl_data, okl_run, no_data, tmp_path):
    """It was listed as "raw in mirror", then refused by the run that read it."""
    mirror = tmp_path / "mirror"
    (mirror / "casp").mkdir(parents=True)
    (mirror / "casp" / "CASP.csv.xz").write_bytes(lzma.compress(b'"RMSD","F1"\n1,2\n'))
    code, out, _ = okl_data("--mirror", str(mirror), "list")
    (casp,) = [line for line in out.splitlines() if line.startswith("casp ")]
    assert code == 0 and casp.endswith(
        "all: CORRUPT in mirror (CASP.csv.xz: sha256 is not the catalog's; okl-data verify casp)"
    )
    code, _, err = okl_run("dataset=casp", f"dataset.mirror={mirror}", "progress=false")
    assert code == 2 and "CASP.csv.xz: sha256 of its stored bytes is " in err and err.count("\n") == 1
    # its advice was "remove it and run okl-data fetch": the mirror is not okl's to change
    assert err.rstrip().endswith(
        "replace the mirror's copy (okl never writes there), or unset OKL_DATA_MIRROR and okl-data fetch"
    )


def test_a_truncated_file_without_a_published_checksum_is_refused_by_its_row_count(okl_data, okl_run, mirror, tmp_path):
    """cpusmall cut to 200 rows (LIBSVM's copy has no published sha256) ran as "complete, 200 rounds"."""
    data = tmp_path / "data"
    (data / "cpusmall").mkdir(parents=True)
    with gzip.open(mirror / "cpusmall" / "227_cpu_small.tsv.gz", "rt") as fh:
        records = [line.split("\t") for line in fh.read().splitlines()[1:201]]
    (data / "cpusmall" / "cpusmall").write_text(
        "".join(f"{r[-1]} " + " ".join(f"{i + 1}:{v}" for i, v in enumerate(r[:-1])) + "\n" for r in records)
    )
    expected = (
        f"{data / 'cpusmall' / 'cpusmall'}: 200 rows, but cpusmall/all has 8,192 (catalog): the file is truncated "
        "or another version and was not used (nothing was deleted): replace it, or remove it and run okl-data fetch "
        "cpusmall\n"
    )
    code, _, err = okl_data("--data-dir", str(data), "fetch", "cpusmall")
    assert code == 2 and err == f"okl-data: error: {expected}"
    code, _, err = okl_run("dataset=cpusmall", f"dataset.data_dir={data}", "progress=false")
    assert code == 2 and err == f"okl-run: error: {expected}"
    assert (data / "cpusmall" / "cpusmall").exists() and not list((data / "cpusmall").glob("cache/*"))


def test_fetch_of_several_datasets_goes_on_past_one_it_cannot_get(okl_data, no_data, monkeypatch):
    """okl-data fetch --all stopped at the first dataset neither cached, in the mirror nor downloadable (susy in
    the mirror here), leaving the mirror's others unfetched: each failure is said, the rest fetched, exit 1."""
    write_susy(no_data, monkeypatch)
    code, out, err = okl_data("fetch", "casp", "susy")
    assert code == 1 and "susy/all: " in out and "casp" not in out
    failures, summary = err.strip().splitlines()
    assert failures.startswith("okl-data: error: ") and "casp" in failures
    assert summary == "okl-data: 1 of 2 datasets not fetched: casp"
    assert okl_data("fetch", "casp")[0] == 2  # one dataset: its error alone, as before


def test_the_readmes_dataset_table_gives_the_catalogs_rows_d_task_and_preset():
    """The README gave twitter 6,000 rows and energy 10,000 (the raker preset's prefixes) where okl-data list gives the
    files' 13,813 and 18,604: each row of its table now agrees with the catalog."""
    import re
    from pathlib import Path

    from okl.data.catalog import SPECS

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    seen = set()
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        names = re.findall(r"`(\w+)`", cells[0]) if line.startswith("| `") and len(cells) == 5 else []
        if not names or not all(n in SPECS for n in names):
            continue
        shapes = re.findall(r"([\d,]+) × (\d+)", cells[1])[: len(names)]
        for name, (rows, d) in zip(names, shapes, strict=True):
            spec = SPECS[name]
            assert (int(rows.replace(",", "")), int(d), cells[2]) == (spec.n, spec.d, spec.task), name
            assert cells[3].startswith(f"`{spec.preset}`"), name
            seen.add(name)
    assert seen == set(SPECS)  # every dataset of the catalog has its row


def test_clean_removes_the_caches_no_okl_reads_and_keeps_the_rest(okl_data, no_data, tmp_path, monkeypatch):
    """Caches of another cache version (the catalog's and your files'), of an older parse revision of a csv, and
    half-written ones of parses whose process is gone were never removed; a current cache and a parse in progress
    stay, and ``--files`` removes your files' caches, which the next use parses again."""
    import os
    import shutil
    import subprocess
    import sys

    from okl.data import cache
    from okl.datasets import user_file

    source = tmp_path / "mine.csv"
    source.write_text("a,b,y\n0,1,0.5\n1,0,1.5\n1,1,2.0\n")
    user_file.from_file(source, target="y", data_dir=str(no_data))
    (current,) = user_file.caches(no_data)
    sha, fmt, revision, tag, version = current.name.split("-")
    assert (fmt, revision, version) == ("csv", f"r{user_file.PARSE_REVISION['csv']}", f"v{cache.VERSION}")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    outdated = [
        current.with_name(f"{sha}-{fmt}-{tag}-{version}"),  # before parse revisions
        current.with_name(f"{sha}-{fmt}-{revision}-{tag}-v{cache.VERSION - 1}"),  # another cache version
        no_data / "casp" / "cache" / f"all-v{cache.VERSION - 1}",
        current.with_name(f"{current.name}.tmp{int(dead.stdout)}"),
    ]
    for directory in outdated:
        shutil.copytree(current, directory)
    parsing = current.with_name(f"{current.name}.tmp{os.getpid()}")
    shutil.copytree(current, parsing)
    listed = okl_data("list")[1].splitlines()
    assert listed[-2].startswith("your files: 1 cache(s), ") and listed[-1].startswith("outdated: 4 cache(s), ")

    code, out, _ = okl_data("clean", "--dry-run")
    assert code == 0 and out.count("would remove") == 4 and all(d.is_dir() for d in outdated)
    code, out, _ = okl_data("clean")
    assert code == 0 and out.splitlines()[-1].startswith("4 cache(s) removed, ")
    assert not any(d.exists() for d in outdated) and current.is_dir() and parsing.is_dir()
    with monkeypatch.context() as patched:
        patched.setattr(user_file, "_parse", lambda *a, **k: pytest.fail("the current cache was parsed again"))
        user_file.from_file(source, target="y", data_dir=str(no_data))
    assert okl_data("clean")[1].startswith("nothing to clean")
    assert okl_data("clean", "--files")[0] == 0 and not current.exists() and parsing.is_dir()
    assert user_file.from_file(source, target="y", data_dir=str(no_data)).n == 3 and current.is_dir()


def test_clean_says_what_it_could_not_remove_and_never_follows_a_link(okl_data, no_data, tmp_path, monkeypatch):
    """A link named as an outdated cache was "removed" (rmtree refuses a link, and its error was ignored) and stayed;
    a cache this user cannot remove was "removed" too, and the exit status said all was well. A link goes itself, what
    it points to stays; a file of another program among your files' caches is no cache of yours."""
    import shutil

    from okl.data import cache

    outside = tmp_path / "outside" / f"all-v{cache.VERSION - 1}"
    outside.mkdir(parents=True)
    (outside / "keep").write_text("not okl's to remove")
    (outside / "meta.json").write_text("{}")
    (no_data / "casp" / "cache").mkdir(parents=True)
    link = no_data / "casp" / "cache" / outside.name
    link.symlink_to(outside)
    (no_data / "file" / "cache").mkdir(parents=True)
    (no_data / "file" / "cache" / "notes.txt").write_text("mine")
    code, out, _ = okl_data("clean", "--files", "--dry-run")
    assert code == 0 and out.count("would remove") == 1 and "notes.txt" not in out
    code, out, _ = okl_data("clean")
    assert code == 0 and f"removed {link}" in out
    assert not link.is_symlink() and (outside / "keep").is_file()
    assert (no_data / "file" / "cache" / "notes.txt").is_file()

    stale = no_data / "casp" / "cache" / f"all-v{cache.VERSION - 1}"
    stale.mkdir()
    (stale / "meta.json").write_text("{}")

    def refused(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(shutil, "rmtree", refused)
    code, out, _ = okl_data("clean")
    assert code == 1 and f"cannot remove {stale}: Permission denied" in out and f"removed {stale}" not in out


def test_clean_of_a_data_directory_missing_or_unreadable_is_one_line(okl_data, tmp_path, monkeypatch):
    """A --data-dir misspelt, or one this user cannot read, said "nothing to clean": its caches went unseen."""
    import os

    code, out, err = okl_data("--data-dir", str(tmp_path / "nowhere"), "clean")
    assert code == 2 and not out and err.count("\n") == 1 and "no such folder" in err
    (tmp_path / "a-file").write_text("")
    code, out, err = okl_data("--data-dir", str(tmp_path / "a-file"), "clean")
    assert code == 2 and not out and err.count("\n") == 1 and "a-file: not a folder" in err
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    code, out, err = okl_data("--data-dir", str(tmp_path), "clean", "--dry-run")
    assert code == 2 and not out and err.count("\n") == 1 and "cannot read it" in err


def test_clean_keeps_a_half_written_cache_whose_parse_holds_its_lock(okl_data, no_data, tmp_path):
    """A half-written cache of your files was removed when its pid ran no process here: a parse on another machine
    sharing the data directory (whose pid means nothing here) lost its folder mid-parse. It is kept while a process
    holds its cache's lock, and the catalog's half-written ones (``<cache>.tmp``, no pid) are removed once none does."""
    import subprocess
    import sys

    from okl.data import cache
    from okl.datasets import user_file

    source = tmp_path / "mine.csv"
    source.write_text("a,b,y\n0,1,0.5\n1,0,1.5\n1,1,2.0\n")
    user_file.from_file(source, target="y", data_dir=str(no_data))
    (current,) = user_file.caches(no_data)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    elsewhere = current.with_name(f"{current.name}.tmp{int(dead.stdout)}")
    catalogs = no_data / "casp" / "cache" / f"all-v{cache.VERSION}"
    half = catalogs.with_name(f"{catalogs.name}.tmp")
    for folder in (elsewhere, half):
        folder.mkdir(parents=True)
    with cache.parse_lock(current), cache.parse_lock(catalogs):  # as the other machine's parses hold them
        code, out, _ = okl_data("clean")
        assert code == 0 and out.startswith("nothing to clean") and elsewhere.is_dir() and half.is_dir()
    code, out, _ = okl_data("clean")
    assert code == 0 and f"removed {elsewhere}" in out and f"removed {half}" in out
    assert not elsewhere.exists() and not half.exists() and current.is_dir()


def test_clean_removes_only_what_okl_wrote(okl_data, tmp_path):
    """Caches were told by their names alone (``*/cache/*-v<n>``, ``*.tmp``): ``okl-data --data-dir`` given a folder
    that is no data directory (a project, the home folder) removed its ``build/cache/model-v1``. A cache holds its
    meta.json, and a half-written one lies beside its cache's lock."""
    from okl.data import cache

    project = tmp_path / "project"
    theirs = [project / "build" / "cache" / "model-v1", project / "build" / "cache" / "model-v2.tmp"]
    for folder in theirs:
        folder.mkdir(parents=True)
        (folder / "weights.bin").write_bytes(b"not okl's")
    okls = project / "casp" / "cache" / f"all-v{cache.VERSION - 1}"
    okls.mkdir(parents=True)
    (okls / "meta.json").write_text("{}")
    code, out, _ = okl_data("--data-dir", str(project), "clean")
    assert code == 0 and f"removed {okls}" in out and out.count("removed ") == 1
    assert all((folder / "weights.bin").is_file() for folder in theirs)


def test_verify_leaves_your_files_outdated_caches_to_clean(okl_data, no_data, tmp_path):
    """An older okl's cache of your file (another cache version: a meta without the arrays' sha256) was checked
    as this okl's and said "BROKEN: 'arrays_sha256'", exit status 1, though no run reads
    it (okl-data clean removes it)."""
    import json
    import shutil

    from okl.data import cache
    from okl.datasets import from_file

    path = tmp_path / "mine.csv"
    path.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{i / 10}\n" for i in range(50)))
    from_file(path, target="y")
    (current,) = (no_data / "file" / "cache").iterdir()
    older = current.with_name(current.name.replace(f"-v{cache.VERSION}", f"-v{cache.VERSION - 1}"))
    shutil.copytree(current, older)
    meta = json.loads((older / "meta.json").read_text())
    del meta["arrays_sha256"]
    (older / "meta.json").write_text(json.dumps(meta))
    code, out, _ = okl_data("verify")
    assert code == 0 and "BROKEN" not in out and "1 outdated cache(s) not checked (okl-data clean removes them)" in out
    assert ": ok (50 rows)" in out


def test_clean_files_keeps_a_cache_whose_lock_a_parse_holds(okl_data, no_data, tmp_path, monkeypatch):
    """--files removed your file's cache as a parse that held its lock installed it: that process then read no meta
    (None, TypeError's traceback) where the lock promised it its cache. A cache whose lock is held is kept."""
    from okl.data import cache
    from okl.datasets import user_file

    source = tmp_path / "mine.csv"
    source.write_text("a,b,y\n0,1,0.5\n1,0,1.5\n1,1,2.0\n")
    user_file.from_file(source, target="y", data_dir=str(no_data))
    (current,) = user_file.caches(no_data)
    with cache.parse_lock(current):  # as a parse that has just installed it holds it
        code, out, _ = okl_data("clean", "--files")
        assert code == 0 and f"kept {current}: a process is parsing it now" in out and current.is_dir()
        assert out.splitlines()[-1] == "0 cache(s) removed, 0.0 kB"  # the kept cache's size was counted as removed
    with monkeypatch.context() as patched:  # a lock that cannot be taken is one line, the cache kept
        patched.setattr(cache, "lock_path", lambda directory: tmp_path / "nowhere" / "x.lock")
        code, out, _ = okl_data("clean", "--files")
        assert code == 1 and f"cannot remove {current}: No such file or directory" in out and current.is_dir()
    code, out, _ = okl_data("clean", "--files")
    assert code == 0 and f"removed {current}" in out and not current.exists()
