"""Hydra configuration tree, installed as the package ``okl.conf`` (see pyproject.toml)."""
