"""A non-editable install runs from another directory: conf/ travels as the package okl.conf."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import only_run

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_install_runs_outside_the_checkout(tmp_path):
    wheel_dir, site, work, src = tmp_path / "wheel", tmp_path / "site", tmp_path / "elsewhere", tmp_path / "src"
    work.mkdir()
    # a clean copy: setuptools builds in the source tree, where a stale build/ would ship deleted modules
    skip = shutil.ignore_patterns(".*", "build", "*.egg-info", "results", "figures", "multirun", "__pycache__")
    shutil.copytree(REPO, src, ignore=skip)
    build = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        str(wheel_dir),
        str(src),
    ]
    subprocess.run(build, check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = wheel_dir.glob("okl-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(site), "OKL_RESULTS": str(work / "out")}
    where = subprocess.run(
        [sys.executable, "-c", "import okl, okl.conf; print(okl.__file__); print(okl.conf.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(path.startswith(str(site)) for path in where)  # not the checkout
    # every module of the checkout is in the wheel and imports from it; every config file travels too
    modules = sorted(
        ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for path in (REPO / "okl").rglob("*.py")
    )
    check = "import importlib, sys; print('\\n'.join(importlib.import_module(m).__file__ for m in sys.argv[1:]))"
    imported = subprocess.run(
        [sys.executable, "-c", check, *modules], cwd=work, env=env, capture_output=True, text=True
    )
    assert imported.returncode == 0, imported.stderr
    assert len(imported.stdout.split()) == len(modules) and all(
        path.startswith(str(site)) for path in imported.stdout.split()
    )
    configs = {path.relative_to(REPO / "conf") for path in (REPO / "conf").rglob("*.yaml")}
    assert configs and configs == {
        path.relative_to(site / "okl" / "conf") for path in (site / "okl" / "conf").rglob("*.yaml")
    }
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from okl.cli.run import main; main()",
            "learner=pkrr_taylor",
            "n=500",
            "progress=false",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    run = only_run(work / "out", learner="pkrr_taylor", dataset="synthetic", seed=0)
    assert run.status() == "complete"


def test_the_test_extra_holds_every_extra_and_make_installs_it():
    """``pip install -e '.[test]'`` (the name the README's test command relies on) gives the suite every extra."""
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    wanted = sorted(set(extras) - {"test"})
    (bundled,) = (r for r in extras["test"] if r.startswith("okl["))
    assert sorted(bundled[4:-1].split(",")) == wanted
    assert {"pytest", "pytest-xdist", "hypothesis"} <= {r.split(">")[0].split("=")[0] for r in extras["test"]}
    assert "-e '.[test]'" in (REPO / "Makefile").read_text()
