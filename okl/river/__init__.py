"""okl's learners as river estimators (``pip install 'okl[river]'``): :class:`Regressor`, :class:`Classifier`
(binary) and :class:`MultiClassifier`."""

from okl.river.estimators import Classifier, MultiClassifier, Regressor

__all__ = ["Classifier", "MultiClassifier", "Regressor"]
