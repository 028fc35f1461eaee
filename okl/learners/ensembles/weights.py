"""Exponential weights kept as log-weights, shared by EWA (:mod:`okl.learners.ensembles.ewa`), the
interval ensemble (:mod:`okl.learners.ensembles.intervals`) and AdaRaker's kernel weights.

Example:

>>> import numpy as np
>>> normalised(np.array([0.0, np.log(3.0)]))
array([0.25, 0.75])
>>> normalised(np.array([-1000.0, -1000.0]))  # no underflow: the largest log-weight is subtracted first
array([0.5, 0.5])
"""

from __future__ import annotations

import numpy as np


def normalised(log_w: np.ndarray) -> np.ndarray:
    """Weights from log-weights, normalised along the last axis (w̄ = w / Σ w, computed stably)."""
    w = np.exp(log_w - log_w.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)
