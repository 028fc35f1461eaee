"""POLK: parsimonious online learning with kernels (polk_koppel2019 Algorithm 2).

FSGD's mini-batch step (:mod:`okl.learners.budgeted.fsgd`, eqs. (17)–(18)) followed by destructive KOMP
(Algorithm 1, :func:`okl.dictionary.komp.komp`): f_{k+1} is the sparsest greedy approximation of f̃_{k+1}
on a subset of D̃_{k+1} with ||f_{k+1} − f̃_{k+1}||_H <= ε_k, its coefficients the projection (20).
Budget (Table 1): ε = K η^{3/2} with a constant step (finite model order), ε_k = K η_k² with the
diminishing one (Table 1 writes ε_k = η_k²; K = 1 gives it). ε = 0 keeps every point: FSGD.

MNIST (§5.3): with the paper's σ̃² = 4, η = 24, K = 0.16 (pixels in [0, 1], averaged mini-batch
gradients), ε = Kη^{3/2} = 18.8 exceeds the norm of every mini-batch's update, so KOMP removes it all:
measured model order 0 and 90% error over the 60,000 rounds. The preset ``polk_fig5_mnist`` uses σ² = 25
and K ∈ {0.02, 0.03} instead (measured: 4.7% held-out error with 305 points, 7.9% with 88).

The dictionary's K_DD and K_DD⁻¹ are kept incrementally (:class:`okl.dictionary.komp.KernelDictionary`),
so a mini-batch costs O(b M² + b M d) plus O(M²) per pruned element, never O(M³) from scratch, in a few passes
over K_DD⁻¹ (its appends and its removals each as one BLAS update: :mod:`okl.dictionary.komp`).

Numerical resolution: a budget far below the scale of f makes KOMP keep points whose residual
variance is tiny, and K_DD numerically singular. Measured on 3,000 multidist rounds (σ̃² = 0.6, η = 6,
b = 32): K ≤ 10⁻⁵ drove max (K_DD⁻¹)_jj to 6·10¹⁰–6·10¹⁸ (cond(K_DD) 3·10¹²–2·10¹⁶) and the risk away
from FSGD's by up to 70, while K ≥ 10⁻⁴ stayed below 3·10⁶ (cond ≤ 1.2·10⁸) and within 4·10⁻⁴ of it.
Since cond(K_DD) >= max_j (K_DD⁻¹)_jj (the diagonal of K_DD is 1), a dictionary whose K_DD⁻¹ has a
diagonal entry above ``SINGULAR`` (10⁹) stops the run with a :class:`~okl.errors.NumericalError`
that says to raise K (or to set K = 0, FSGD without pruning), instead of letting it drift.

Example: KOMP prunes FSGD's expansion to a few points at a small loss:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> keys = dict(sigma=0.5, eta=0.3, loss="square", batch=4)
>>> polk = LEARNERS.get("polk")(2, K=0.01, **keys); fsgd = LEARNERS.get("fsgd")(2, **keys)
>>> mse(polk.predict_learn_block(X, y)), mse(fsgd.predict_learn_block(X, y))
(0.0564, 0.0564)
>>> polk.model_size, fsgd.model_size
(38, 400)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from okl.dictionary.komp import KernelDictionary, komp
from okl.errors import NumericalError
from okl.learners.base import register
from okl.learners.budgeted.fsgd import FSGD, FSGDParams
from okl.validation import non_negative
from okl.warmup import warm

SINGULAR = 1e9  # max (K_DD⁻¹)_jj beyond which K_DD is numerically singular (cond(K_DD) is at least as large)


@dataclass(frozen=True)
class POLKParams(FSGDParams):
    """sigma, eta, lam, loss, batch, diminishing as FSGD; K: the parsimony constant of ε."""

    K: float = 0.04

    def __post_init__(self) -> None:
        super().__post_init__()
        non_negative("K", self.K)


@register("polk")
class POLK(FSGD):
    """FSGD with KOMP pruning to the budget ε."""

    Params = POLKParams

    def footprint(self, rounds: int) -> None:
        """KOMP prunes the dictionary to the budget ε: its size is not known before the rounds."""
        return None

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        self.dictionary = KernelDictionary(d, self.kernel)
        warm(komp, self.dictionary, np.zeros((0, 1)), np.zeros((0, d)), np.zeros((0, 1)), 1.0)  # compile; adds nothing

    @property
    def eps(self) -> float:
        """ε_k of the current mini-batch."""
        return self.params.K * self.eta ** (2.0 if self.params.diminishing else 1.5)

    def project(self, W: np.ndarray, X_new: np.ndarray, W_new: np.ndarray) -> None:
        if self.eps == 0.0:
            super().project(W, X_new, W_new)
            return
        self.W = komp(self.dictionary, W, X_new, W_new, self.eps)
        if self.dictionary.size and self.dictionary.K_inv.diagonal().max() > SINGULAR:
            raise NumericalError(
                f"POLK's dictionary became numerically singular (cond(K_DD) > {SINGULAR:.0e}): the budget "
                f"eps = {self.eps:.3g} is below what KOMP resolves on these points; raise K "
                f"(K={self.params.K:g} now), or set K=0 for FSGD without pruning"
            )
        self.X = self.dictionary.X
        self.norm2 = float(np.vdot(self.W, self.dictionary.K @ self.W))  # Σ_c w_cᵀ K w_c, one BLAS product
