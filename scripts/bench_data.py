"""Dataset benchmark: first parse into the cache, then a cached load streamed end to end.

Each measurement runs in a fresh process (peak RSS is per process): ``parse`` builds the cache from the
raw file, ``stream`` constructs the dataset from the cache (statistics pass included) and reads every
chunk of the preprocessed, shuffled stream. Datasets: cod-rna.t and ijcnn1 (train + test) from the
mirror (``OKL_DATA_MIRROR``, default ../shared/datasets), and a SUSY stand-in: 10⁶ synthetic rows
written in SUSY's exact format (headerless CSV.gz, label then 18 features).

    python scripts/bench_data.py [--susy-rows 1000000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

MIRROR = Path(__file__).resolve().parents[2] / "shared" / "datasets"

PROBE = """
import json, resource, sys, time
from okl.data import cache
from okl.datasets import DATASETS
from okl.data.catalog import SPECS
from okl.data.sources import data_dir, mirror_root
name, stage = sys.argv[1], sys.argv[2]
start = time.perf_counter()
rows = 0
if stage == "parse":
    for part in SPECS[name].default_parts:
        rows += cache.read_meta(cache.build(SPECS[name], part, None, data_dir(), mirror_root(), False))["rows"]
else:
    for X, y in DATASETS.get(name)().chunks():
        rows += len(y)
print(json.dumps({"s": time.perf_counter() - start, "rows": rows,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(name: str, stage: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, name, stage], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr.strip().splitlines()[-1])
    return json.loads(out.stdout)


def write_susy_standin(path: Path, rows: int) -> None:
    """Rows in SUSY's format: a 0/1 label then 18 floats, written in pages (bounded memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    g = np.random.default_rng(0)
    with gzip.open(path, "wt", compresslevel=1) as fh:
        for start in range(0, rows, 100_000):
            m = min(100_000, rows - start)
            page = np.column_stack([g.integers(0, 2, m), g.standard_normal((m, 18))])
            np.savetxt(fh, page, fmt=["%.1f"] + ["%.18e"] * 18, delimiter=",")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--susy-rows", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "OKL_DATA_DIR": tmp, "OKL_DATA_MIRROR": os.environ.get("OKL_DATA_MIRROR", str(MIRROR))}
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        write_susy_standin(Path(tmp) / "susy" / "SUSY.csv.gz", args.susy_rows + 1)  # the preset skips row 1
        print(f"{'dataset':10} {'stage':7} {'rows':>10} {'seconds':>8} {'peak RSS':>9}")
        for name in ("cod_rna", "ijcnn1", "susy"):
            for stage in ("parse", "stream"):
                r = measure(name, stage, env)
                print(f"{name:10} {stage:7} {r['rows']:>10,} {r['s']:>8.2f} {r['rss_mb']:>6.0f} MB", flush=True)


if __name__ == "__main__":
    main()
