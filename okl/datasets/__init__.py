"""Datasets. Every module of this package is imported, so a new stream joins by adding a module
with a ``@register("key")`` class and a ``conf/dataset/key.yaml`` file."""

from okl.datasets.base import DATASETS, Dataset, register
from okl.registry import import_all

import_all(__name__, __path__)

__all__ = ["DATASETS", "Dataset", "register"]
