"""Compiled code is loaded when a run plays, never while runs are only planned (okl.warmup)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from helpers import COUNTING, play_blocks, stream
from okl import config
from okl.learners import LEARNERS
from okl.runner import execute
from okl.warmup import deferred, run_all
from test_learners import SETTINGS

# A new process counts numba's compilations and cache loads (helpers.COUNTING) while okl-reproduce plans its
# largest preset, then while three of its runs warm up as they would before playing; then while every learner is
# built as planning builds it.
COUNT = (
    COUNTING
    + """
import json, sys
counting(True)
from okl.learners import LEARNERS
from okl.reproduce import sweep
from okl.warmup import deferred, run_all
found = {}
runs = sweep.expand("pros_n_kons_table1", [])
found["plan of pros_n_kons_table1"] = [len(compiled), 0]
for run in runs[:3]:
    run.plan.warm_up()
found["its first runs played"] = [0, len(compiled) - found["plan of pros_n_kons_table1"][0]]
compiled.clear()
for name, settings in json.loads(sys.argv[1]).items():
    with deferred() as pending:
        LEARNERS.get(name)(3, horizon=100, **settings)
    found[name] = [len(compiled), len(pending)]  # compiled while built; warm-ups deferred
    compiled.clear()
print(json.dumps(found))
"""
)


def test_planning_compiles_nothing_and_the_runs_compile_what_they_use():
    done = subprocess.run(
        [sys.executable, "-c", COUNT, json.dumps(SETTINGS)], capture_output=True, text=True, timeout=600, check=True
    )
    found = json.loads(done.stdout)
    assert {name: planned for name, (planned, _) in found.items() if planned} == {}
    assert found["its first runs played"][1] > 0  # PROS-N-KONS's loops, when its run plays
    assert found["pros_n_kons"][1] > 0 and found["fogd"][1] > 0 and found["ewa"][1] > 0  # ewa: its experts'


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_deferred_warm_up_changes_no_state(name):
    X, y = stream(120, 3, seed=4)
    if "regression" not in LEARNERS.get(name).tasks:
        y = np.sign(y - y.mean())
    direct = LEARNERS.get(name)(3, horizon=120, **SETTINGS[name])
    with deferred() as pending:
        later = LEARNERS.get(name)(3, horizon=120, **SETTINGS[name])
    run_all(pending)
    assert not pending
    np.testing.assert_array_equal(play_blocks(later, X, y, [7, 50]), play_blocks(direct, X, y, [7, 50]))


def test_a_run_warms_its_learner_before_its_first_round(composed, results_root, monkeypatch):
    plan = config.plan(composed("learner=fogd", "n=50", "progress=false"))
    order = []
    plan.warm_ups.append((order.append, ("warm",)))
    play = type(plan.learner).predict_learn_block
    monkeypatch.setattr(type(plan.learner), "predict_learn_block", lambda *a: order.append("round") or play(*a))
    execute(plan, progress=False)
    assert order[:2] == ["warm", "round"] and order.count("warm") == 1
