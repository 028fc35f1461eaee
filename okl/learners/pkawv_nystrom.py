"""PKAWV with Nyström projections on a KORS dictionary (pkawv_jezequel2019 §3.2, eq. (8), Theorem 6,
Appendix H Algorithm 2).

At round t, KORS (:mod:`okl.dictionary.kors`, parameters μ, ε, β) decides from x_t alone whether x_t
joins the dictionary I_t; the forecaster is PKAWV (eq. (4)) on H_t = Span{φ(x), x ∈ I_t}:

    f_t ∈ argmin_{f ∈ H_t} Σ_{s<t} (y_s − f(x_s))² + λ||f||² + f(x_t)²,      ŷ_t = f_t(x_t),

i.e. AWV on the Nyström coordinates φ̃ of :mod:`okl.dictionary.nystrom` (an orthonormal basis of
H_t, so ||f||² = ||w||²). Like Algorithm 2, a point selected at round t is in the span used to
predict round t.

Implementation: between dictionary changes the state is linear AWV on φ̃ (A⁻¹ and b, blocks through
:class:`~okl.linalg.online_ridge.OnlineRidge`, O(m²) per round for m coordinates). A new point
appends one coordinate: the past rounds' values of it update A and b through one pass over the
stored history (:mod:`okl.dictionary.history`, O(n(d + m)) once per point), never a re-solve against
the n×m matrix each round as the authors' code does. With every point in the dictionary this is
exact Kernel-AWV (a test checks it); ``pkrr_nystrom`` drops the f(x_t)² term.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from okl.dictionary.history import History
from okl.dictionary.kors import KORS
from okl.dictionary.nystrom import NystromMap
from okl.kernels import Kernel
from okl.learners.base import BlockLearner, register
from okl.learners.kernel_awv import KernelParams
from okl.linalg.online_ridge import OnlineRidge
from okl.validation import positive


@dataclass(frozen=True)
class NystromParams(KernelParams):
    """sigma, lam as Kernel-AWV; KORS's mu (RLS regularisation μ), eps (ε), beta (β) and seed."""

    mu: float = 1.0
    eps: float = 0.5
    beta: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("mu", self.mu)
        positive("eps", self.eps)
        positive("beta", self.beta)


@register("pkawv_nystrom")
class PKAWVNystrom(BlockLearner):
    """PKAWV on the span of a KORS dictionary that grows online."""

    Params = NystromParams
    awv: ClassVar[bool] = True

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        kernel = Kernel("gaussian", p.sigma)
        self.kors = KORS(d, kernel, p.mu, p.eps, p.beta, p.seed)
        self.map = NystromMap(d, kernel)
        self.ridge = OnlineRidge(0, p.lam, awv=self.awv)
        self.history = History(d, self.name)

    # -- dictionary ----------------------------------------------------------------------------------
    def _grow(self, z: np.ndarray) -> None:
        """Add z to the span: one new coordinate for the past rounds and the AWV state."""
        added = self.map.add(z)
        if added is None:
            return
        l, rho = added
        h = self.history
        k = self.map.kernel(h.X[: h.n], z[None, :])[:, 0]
        self.ridge.add_feature(*h.new_coordinate(k, l, rho))

    def _record(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> None:
        """Keep the rounds for later dictionary growth."""
        self.history.append(X, y, F)

    def _selected(self, X: np.ndarray) -> np.ndarray:
        """KORS decisions for the rounds of X (committed)."""
        return self.kors.run(X)[0]

    # -- rounds --------------------------------------------------------------------------------------
    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        start = self.kors.size
        selected = self._selected(X)
        cuts = [0, *np.flatnonzero(selected), len(y)]
        out = np.empty(len(y))
        dims = np.empty(len(y), dtype=np.int64)
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            if a == b:
                continue
            if selected[a]:
                self._grow(X[a])
            F = self.map.transform(X[a:b])
            out[a:b] = self.ridge.predict_update_block(F, y[a:b]) if self.map.dim else 0.0
            self._record(X[a:b], y[a:b], F)
            dims[a:b] = self.map.dim
        self.recorded = {"model_size": dims, "dictionary_size": start + np.cumsum(selected)}
        return out

    def predict_one(self, x: np.ndarray) -> float:
        if self.kors.peek(x)[0]:  # x joins the span before it is predicted: play the round on a copy
            return float(copy.deepcopy(self).predict_learn_block(x[None, :], np.zeros(1))[0])
        if not self.map.dim:
            return 0.0
        return self.ridge.predict(self.map.transform(x)[0])

    @property
    def model_size(self) -> int:
        return self.map.dim
