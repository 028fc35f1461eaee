"""okl's learners as river estimators (``pip install 'okl[river]'``): :class:`Regressor` and :class:`Classifier`."""

from okl.river.estimators import Classifier, Regressor

__all__ = ["Classifier", "Regressor"]
