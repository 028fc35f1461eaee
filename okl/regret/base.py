"""The comparator protocol and its registry.

A comparator maps a stream (X, y) to the per-round losses ℓ_s of its function(s) in hindsight, so
that regret_t = cum_loss_t − Σ_{s<=t} ℓ_s, and reports λ||f||² of its final function (the first
term of the bounds of Proposition 1 and Theorem 3). Comparators use the square loss: they score
regression streams only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from okl.kernels import Kernel
from okl.params import KernelParams
from okl.registry import Registry, build_params

COMPARATORS = Registry("comparator")
register = COMPARATORS.register


class Comparator(ABC):
    """Base class. Subclasses define ``Params`` and register with ``@register(key)``."""

    name: ClassVar[str] = ""
    Params: ClassVar[type] = KernelParams
    from_dataset: ClassVar[tuple[str, ...]] = ()  # parameters that default to the run's dataset keys

    def __init__(self, **params: Any) -> None:
        self.params = build_params("comparator", self.name or type(self).__name__, self.Params, params)

    @property
    def kernel(self) -> Kernel:
        return Kernel("gaussian", self.params.sigma)

    @abstractmethod
    def losses(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        """(ℓ_s for s = 1..n, λ||f||² of the final comparator function)."""


def ridge_penalty(alpha: np.ndarray, y: np.ndarray, lam: float) -> float:
    """λ||f||² of f = Σ α_s k(x_s, ·) with α = (K + λI)⁻¹y: λαᵀKα = λ(αᵀy − λ||α||²)."""
    return float(lam * (alpha @ y - lam * alpha @ alpha))
