"""The package list, found rather than written out, so that a new module or learner family cannot be left out
of a wheel: every package under okl/ (YAML-only folders such as okl/reproduce/artefacts included) and the
top-level conf/ installed as the package okl.conf, which Hydra reads as pkg://okl.conf. Everything else
is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

SKIP = ["*__pycache__*"]

setup(
    packages=[
        *find_namespace_packages(include=["okl", "okl.*"], exclude=SKIP),
        "okl.conf",
        "hydra_plugins.okl_sweeper",
        *(f"okl.conf.{p}" for p in find_namespace_packages(where="conf", exclude=SKIP)),
    ],
    package_dir={"okl.conf": "conf"},
)
