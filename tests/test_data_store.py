"""Obtaining files (data directory, mirror, download), checksums, and the parsed cache."""

import gzip
import hashlib
import http.server
import json
import threading
import time
import urllib.request
from functools import partial

import numpy as np
import pytest

from helpers import write_susy
from okl.data import cache, parsers
from okl.data.catalog import SPECS, Delimited, File, Part, Source, Spec
from okl.data.sources import open_content
from okl.datasets import DATASETS, real
from okl.datasets.real import FileDataset
from okl.errors import DataError

URLOPEN = urllib.request.urlopen
CSV = b"t,a,b\n1.5,2,3\n-0.5,4,5e-1\n2.5,6,7\n"


def toy_spec(url: str | None = None, sha: str | None = None, name: str = "toy") -> Spec:
    file = File("toy.csv.gz", urls=(url,) if url else (), content_sha256=sha)
    part = Part("all", 3, (Source((file,), Delimited(target="t")),))
    return Spec(name, "toy", "regression", 2, (part,), ("all",), "none")


def toy_dataset(spec: Spec, **params) -> FileDataset:
    return type("Toy", (FileDataset,), {"spec": spec, "name": spec.name})(**params)


@pytest.fixture
def server(tmp_path, no_data, monkeypatch):
    """A local HTTP server over tmp_path/www (the only place the network reaches): downloads, offline."""
    monkeypatch.setattr("okl.data.sources.urllib.request.urlopen", URLOPEN)
    root = tmp_path / "www"
    root.mkdir()
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_download_verifies_the_content_hash_then_caches_the_parse(server, no_data):
    root, base = server
    (root / "toy.csv.gz").write_bytes(gzip.compress(CSV))
    spec = toy_spec(f"{base}/toy.csv.gz", hashlib.sha256(CSV).hexdigest())
    ds = toy_dataset(spec)
    assert ds.n == 3 and not (no_data / "toy").exists()  # planned from the catalog: nothing read yet
    ds.open()
    assert (no_data / "toy" / "toy.csv.gz").is_file()
    X, y = next(ds.chunks())
    np.testing.assert_array_equal(X, [[2, 3], [4, 0.5], [6, 7]])
    np.testing.assert_array_equal(y, [1.5, -0.5, 2.5])


def test_corrupt_download_is_discarded_and_the_good_file_kept(server, no_data):
    root, base = server
    (root / "toy.csv.gz").write_bytes(gzip.compress(CSV + b"9,9,9\n"))
    spec = toy_spec(f"{base}/toy.csv.gz", hashlib.sha256(CSV).hexdigest())
    with pytest.raises(
        DataError, match=r"download of .*toy.csv.gz has content sha256 [0-9a-f]{64} but the catalog expects"
    ):
        cache.obtain(spec, "all", no_data, None, allow_download=True)
    assert [p.name for p in (no_data / "toy").iterdir()] == [".toy.csv.gz.lock"]  # the .part is gone: the lock stays


def test_checksum_mismatch_refuses_the_file_names_both_hashes_and_deletes_nothing(no_data):
    good = hashlib.sha256(CSV).hexdigest()
    spec = toy_spec(sha=good)
    path = no_data / "toy" / "toy.csv.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(CSV.replace(b"2.5", b"2.6")))
    bad = hashlib.sha256(CSV.replace(b"2.5", b"2.6")).hexdigest()
    with pytest.raises(DataError) as err:
        toy_dataset(spec).open()
    assert str(err.value).startswith(f"{path}: sha256 of its content is {bad} but the catalog expects {good}")
    assert "\n" not in str(err.value)
    assert path.is_file()
    assert not list((no_data / "toy" / "cache").iterdir())  # the partial cache was removed


def test_mirror_copy_with_wrong_stored_hash_is_refused(tmp_path, no_data, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "casp").mkdir(parents=True)
    (mirror / "casp" / "CASP.csv.xz").write_bytes(b"not the staged file")
    monkeypatch.setenv("OKL_DATA_MIRROR", str(mirror))
    with pytest.raises(
        DataError, match=r"CASP.csv.xz: sha256 of its stored bytes is [0-9a-f]{64} but the catalog expects 8854e15e"
    ):
        DATASETS.get("casp")().open()
    assert (mirror / "casp" / "CASP.csv.xz").read_bytes() == b"not the staged file"


def test_absent_dataset_is_one_line_naming_the_fetch_command_and_the_mirror_variable(no_data):
    with pytest.raises(DataError) as err:
        DATASETS.get("cod_rna")().open()
    message = str(err.value)
    assert message.startswith("dataset 'cod_rna' is not available offline and cannot download cod-rna.t")
    assert "okl-data fetch cod_rna" in message and "OKL_DATA_MIRROR" in message and "cod-rna/cod-rna.t.xz" in message
    assert "\n" not in message


def test_without_download_no_network_is_tried(no_data, monkeypatch):
    monkeypatch.setattr("okl.data.sources.urllib.request.urlopen", pytest.fail)
    with pytest.raises(DataError, match=r"^dataset 'susy' is not available offline: run `okl-data fetch susy`"):
        DATASETS.get("susy")(download=False).open()


def test_cache_holds_exactly_the_raw_parse_and_is_reused(no_data, monkeypatch):
    rows = write_susy(no_data, monkeypatch, n=700)
    spec = SPECS["susy"]
    directory = cache.build(spec, "all", None, no_data, None, allow_download=False)
    part = cache.CachedPart(directory, cache.read_meta(directory))
    raw = list(
        parsers.parse(
            spec.part("all").sources[0].format, [lambda: open_content(no_data / "susy" / "SUSY.csv.gz")], ["s"]
        )
    )
    np.testing.assert_array_equal(part.x, np.concatenate([c[0] for c in raw]))
    np.testing.assert_array_equal(part.y, np.concatenate([c[1] for c in raw]))
    np.testing.assert_array_equal(part.x, rows[:, 1:])
    monkeypatch.setattr(parsers, "parse", pytest.fail)  # a second use reads the cache only
    assert cache.build(spec, "all", None, no_data, None, allow_download=False) == directory
    meta = cache.read_meta(directory)
    assert meta["rows"] == 700 and meta["files"][0]["checked"] is False  # SUSY publishes no checksum


def test_processes_needing_one_cache_take_turns_and_parse_it_once(no_data, monkeypatch):
    """Two MNIST runs of a parallel sweep parsed the same cache at once and deleted each other's files."""
    import fcntl

    write_susy(no_data, monkeypatch, n=300)
    spec = SPECS["susy"]
    directory = cache.cache_dir(no_data, spec, "all", None)
    directory.parent.mkdir(parents=True)
    parses = []
    parse = parsers.parse
    monkeypatch.setattr(parsers, "parse", lambda *a: parses.append(1) or parse(*a))
    built = []
    with open(cache.lock_path(directory), "a") as held:  # another process is parsing
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = threading.Thread(target=lambda: built.append(cache.build(spec, "all", None, no_data, None, False)))
        waiting.start()
        waiting.join(timeout=1.0)
        assert waiting.is_alive() and not parses and not list(directory.parent.glob("*.tmp"))
        cache._parse(spec, "all", None, directory, no_data, None, False)  # the holder finishes its parse
    waiting.join()
    assert built == [directory] and len(parses) == 1  # the waiting one found the cache current
    assert cache.current(directory, spec, "all")["rows"] == 300


def test_a_cache_parsed_with_another_format_is_parsed_again(no_data, monkeypatch):
    """A catalog change to a part's format (columns, target) must not be served from an old cache."""
    write_susy(no_data, monkeypatch, n=300)
    spec = SPECS["susy"]
    directory = cache.build(spec, "all", None, no_data, None, allow_download=False)
    meta = cache.read_meta(directory)
    assert meta["format"] == repr(spec.part("all").sources[0].format)
    (directory / "meta.json").write_text(json.dumps({**meta, "format": "Delimited(features=('old',))"}))
    assert cache.current(directory, spec, "all") is None
    calls, parse = [], parsers.parse
    monkeypatch.setattr(parsers, "parse", lambda *a: calls.append(1) or parse(*a))
    cache.build(spec, "all", None, no_data, None, allow_download=False)
    assert calls == [1] and cache.current(directory, spec, "all") is not None


def test_chunked_stream_equals_whole_file_loading(no_data, monkeypatch):
    rows = write_susy(no_data, monkeypatch, n=5000)

    whole = DATASETS.get("susy")(preset="none")
    X, y = (np.concatenate(c) for c in zip(*whole.chunks(), strict=True))
    np.testing.assert_array_equal(X, rows[:, 1:])
    np.testing.assert_array_equal(y, np.where(rows[:, 0] == 1, 1.0, -1.0))
    monkeypatch.setattr(real, "VALUES", 18 * 1024)  # 1,024-row chunks
    for shuffle in (False, True):
        one = DATASETS.get("susy")(preset="pkawv", shuffle=shuffle)
        monkeypatch.setattr(real, "VALUES", 1 << 30)
        big = [c for c in one.chunks()]
        monkeypatch.setattr(real, "VALUES", 18 * 1024)
        small = [c for c in one.chunks()]
        assert len(big) == 1 and len(small) == 5
        for a, b in zip(big[0], (np.concatenate(c) for c in zip(*small, strict=True)), strict=True):
            np.testing.assert_array_equal(a, b)


def test_the_scaling_statistics_are_computed_once_per_process_for_each_state_of_the_files(no_data, monkeypatch):
    """okl-reproduce --smoke passed over all of a dataset's rows for each of its 200-round runs."""
    write_susy(no_data, monkeypatch, n=3000)
    of, passes = real.Stats.of, []
    monkeypatch.setattr(real.Stats, "of", lambda chunks: passes.append(1) or of(chunks))

    def stream(**kw):
        return [np.concatenate(c) for c in zip(*DATASETS.get("susy")(preset="pkawv", **kw).chunks(), strict=True)]

    first, again = stream(), stream()
    assert len(passes) == 1  # standardized with the statistics of the first pass
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    stream(length=2000)
    assert len(passes) == 2  # other rows selected: their own statistics
    write_susy(no_data / "other", monkeypatch, n=3000, seed=1)
    monkeypatch.setenv("OKL_DATA_DIR", str(no_data / "other"))
    other = stream()
    assert len(passes) == 3 and not np.array_equal(other[0], first[0])  # other files: computed again


def test_shuffle_is_a_seeded_permutation_of_file_order(no_data, monkeypatch):
    write_susy(no_data, monkeypatch, n=3000)

    def stream(**kw):
        return [np.concatenate(c) for c in zip(*DATASETS.get("susy")(preset="none", **kw).chunks(), strict=True)]

    plain, a, b, c = stream(), stream(shuffle=True, seed=1), stream(shuffle=True, seed=1), stream(shuffle=True, seed=2)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[0], plain[0])
    order = np.lexsort(a[0].T)
    np.testing.assert_array_equal(a[0][order], plain[0][np.lexsort(plain[0].T)])


def test_a_flipped_bit_in_a_cache_is_caught_before_any_round_is_played(no_data, okl_run, monkeypatch):
    """A cache with one flipped bit (a value became 9.75e80) was used without a word; only okl-data verify
    noticed. The check runs once per process for each state of the files."""
    rows = write_susy(no_data, monkeypatch, n=300)
    DATASETS.get("susy")().open()  # parsed and checked
    directory = cache.cache_dir(no_data, SPECS["susy"], "all", None)
    x = directory / "x.bin"
    data = bytearray(x.read_bytes())
    data[8 * 5 + 6] ^= 0x10  # one bit of the exponent of row 0's sixth feature: a finite value still
    x.write_bytes(bytes(data))
    assert np.isfinite(np.frombuffer(bytes(data), dtype=np.float64)).all()
    assert np.frombuffer(bytes(data), dtype=np.float64)[5] != rows[0, 6]
    message = (
        rf"^{x}: its content changed since it was parsed \(sha256 .*\): remove {directory} and it is parsed again$"
    )
    with pytest.raises(DataError, match=message):
        DATASETS.get("susy")().open()
    code, out, err = okl_run("dataset=susy", "learner=fogd", "n=100", "progress=false")
    assert code == 2 and not out and err.count("\n") == 1 and f"{x}: its content changed since it was parsed" in err


def test_a_file_that_cannot_be_read_is_named_not_taken_for_a_data_directory_refusing_writes(tmp_path):
    """An unreadable mirror copy (permissions, an I/O error) surfaced as "cannot write ... parsed cache"."""
    from okl.data.sources import sha256_of

    unreadable = tmp_path / "CASP.csv.xz"
    unreadable.mkdir()  # reading it raises IsADirectoryError, an OSError, as EIO or EACCES would
    with pytest.raises(DataError, match=rf"^{unreadable}: cannot be read \(.*\): it is empty, truncated or not"):
        sha256_of(unreadable)


class RangeServer(http.server.BaseHTTPRequestHandler):
    """Serves ``body`` with HTTP range support; the first ``cut_once`` requests end after ``cut`` bytes (a
    dropped connection). ``ranges`` records each request's Range header."""

    body, cut, cut_once, ranges = b"", 0, 0, []

    def do_GET(self):
        wanted = self.headers.get("Range")
        type(self).ranges.append(wanted)
        start = int(wanted.removeprefix("bytes=").rstrip("-")) if wanted else 0
        data = self.body[start:]
        self.send_response(206 if wanted else 200)
        self.send_header("Content-Length", str(len(data)))
        if wanted:
            self.send_header("Content-Range", f"bytes {start}-{len(self.body) - 1}/{len(self.body)}")
        self.end_headers()
        if type(self).cut_once > 0:
            type(self).cut_once -= 1
            self.wfile.write(data[: self.cut])
            self.wfile.flush()
            self.connection.shutdown(2)  # the connection drops mid-transfer
            return
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_an_interrupted_download_resumes_where_it_stopped(no_data, monkeypatch):
    """SUSY is 2.4 GB: a dropped connection kept nothing. The received bytes stay in the .part file, the next
    fetch asks for the rest only (an HTTP range), and the whole is checked against the catalog's sha256."""
    monkeypatch.setattr("okl.data.sources.urllib.request.urlopen", URLOPEN)
    body = gzip.compress(CSV * 2000)
    handler = type("Handler", (RangeServer,), {"body": body, "cut": len(body) // 3, "cut_once": 1, "ranges": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/toy.csv.gz"
        spec = toy_spec(url, hashlib.sha256(CSV * 2000).hexdigest())
        with pytest.raises(DataError, match=r"are kept in .*toy.csv.gz.part and the next fetch resumes"):
            cache.obtain(spec, "all", no_data, None, allow_download=True)
        assert (no_data / "toy" / "toy.csv.gz.part").stat().st_size == len(body) // 3
        _, (found,) = cache.obtain(spec, "all", no_data, None, allow_download=True)
        assert found.path.read_bytes() == body and handler.ranges == [None, f"bytes={len(body) // 3}-"]
        assert not (no_data / "toy" / "toy.csv.gz.part").exists()
    finally:
        httpd.shutdown()


def test_two_processes_needing_one_download_fetch_it_once(no_data, monkeypatch):
    """parkinson's and airquality's targets are caches of their own over one raw file: two runs building two
    targets at once (a sweep over dataset.target) took two cache locks and downloaded into one ``.part`` together,
    and the second hashed a file the first had renamed ("cannot download"). The download has a lock of its own:
    the second waits for it and reads the first's file (one request)."""
    monkeypatch.setattr("okl.data.sources.urllib.request.urlopen", URLOPEN)
    body = gzip.compress(CSV * 2000)
    slow = type("Slow", (RangeServer,), {"body": body, "ranges": []})

    def do_get(self):  # the body in ten pieces 30 ms apart: both fetches start while the first is under way
        type(self).ranges.append(self.headers.get("Range"))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for k in range(10):
            self.wfile.write(body[k * len(body) // 10 : (k + 1) * len(body) // 10])
            self.wfile.flush()
            time.sleep(0.03)

    slow.do_GET = do_get
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), slow)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        spec = toy_spec(
            f"http://127.0.0.1:{httpd.server_address[1]}/toy.csv.gz", hashlib.sha256(CSV * 2000).hexdigest()
        )
        start, found = threading.Barrier(2), []

        def fetch():
            start.wait()
            found.append(cache.obtain(spec, "all", no_data, None, allow_download=True)[1][0].path.read_bytes())

        threads = [threading.Thread(target=fetch) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert found == [body, body] and slow.ranges == [None]
        assert not (no_data / "toy" / "toy.csv.gz.part").exists()
    finally:
        httpd.shutdown()
