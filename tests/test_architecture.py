"""The import layers of pyproject.toml's [tool.importlinter] (drawn in ARCHITECTURE.md) hold, and the
learner packages are the families the registry and the docs name."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import okl.learners
from okl.learners import LEARNERS

ROOT = Path(__file__).resolve().parents[1]


def test_import_layers_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:]
    assert ", 0 broken" in done.stdout


def test_every_learner_lives_in_a_family_package():
    families = {m.name for m in pkgutil.iter_modules(okl.learners.__path__) if m.ispkg}
    for key in LEARNERS.names():
        parts = LEARNERS.get(key).__module__.split(".")
        assert parts[:2] == ["okl", "learners"] and parts[2] in families, (key, parts)
