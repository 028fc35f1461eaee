"""Datasets. Every module of this package is imported, so a new stream joins by adding a module
with a ``@register("key")`` class and a ``conf/dataset/key.yaml`` file."""

from okl.datasets.base import DATASETS, Dataset, register
from okl.registry import import_all

import_all(__name__, __path__)

from okl.datasets.user_file import from_file, iter_file  # noqa: E402  (your own data: dataset=file)

__all__ = ["DATASETS", "Dataset", "from_file", "iter_file", "register"]
