"""A run's numbers do not depend on whether numba compiled okl's code in this process or loaded it from its cache,
and what a learner's rounds run is compiled (or loaded) when it is built, never inside its timed rounds.

Measured before this test existed: with reassociated sums (fastmath) in the kernel row, POLK, the Nyström and the
KONS learners gave other last bits in the first process on a machine (which compiles and fills the cache) than
in every later one (which loads the callee from the cache and compiles only what is missing): a resumed run no
longer matched a clean one, and the same command gave two Parquet contents. And on a new machine (an empty
cache) the per-round path of pkrr_nystrom spent 3.1 of its 3.45 s learner time on casp's first 3,000 rounds
compiling what its warm-ups missed (the first rounds' 1×1 matrices are C-ordered, the later ones Fortran).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import COUNTING
from test_learners import SETTINGS

# Every learner at its small test setting, in blocks and round by round, on one stream: a digest of its predictions.
PLAY = (
    COUNTING
    + """
import hashlib, json, sys
import numpy as np
from helpers import play_blocks, play_loop
from okl.learners import LEARNERS
settings = json.loads(sys.argv[1])
g = np.random.default_rng(3)
found = {}
for name, s in settings.items():
    learner = LEARNERS.get(name)
    X = g.random((400, 3))
    y = np.sin(3 * X).sum(1)
    if "regression" not in learner.tasks:
        y = np.sign(y - y.mean())
    in_blocks, by_rounds = learner(3, horizon=400, **s), learner(3, horizon=400, **s)  # warmed up as built
    counting(True)
    blocks = play_blocks(in_blocks, X, y, [64, 7])
    rounds = play_loop(by_rounds, X, y)
    counting(False)
    found[name] = [hashlib.sha256(blocks.tobytes() + rounds.tobytes()).hexdigest(), sorted(set(compiled))]
    compiled.clear()
print(json.dumps(found))
"""
)


@pytest.mark.slow
def test_the_first_process_on_a_machine_and_the_later_ones_give_the_same_bits(tmp_path):
    env = {"PYTHONPATH": str(Path(__file__).parent), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}

    def play() -> dict[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", PLAY, json.dumps(SETTINGS)],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=900,
            check=True,
        )
        return json.loads(done.stdout)

    compiled = play()  # an empty cache: everything compiled here, and kept
    assert any((tmp_path / "numba").rglob("*.nbc"))
    loaded = play()  # the cache filled: loaded, and what is missing compiled beside loaded callees
    assert {name for name in SETTINGS if compiled[name][0] != loaded[name][0]} == set()
    # and what a learner's rounds run was compiled (or loaded) as it was built, not inside its timed rounds
    assert {name: late for name, (_, late) in compiled.items() if late} == {}
