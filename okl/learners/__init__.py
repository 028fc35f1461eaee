"""Learners, one subpackage per family (``awv``, ``nystrom``, ``random_features``, ``newton``,
``multikernel``, ``budgeted``, ``ensembles``). Every module is imported, so a new learner joins by adding a
module with a ``@register("key")`` class and a ``conf/learner/key.yaml`` file."""

from okl.learners.base import LEARNERS, Learner, register
from okl.registry import import_all

import_all(__name__, __path__)

__all__ = ["LEARNERS", "Learner", "register"]
