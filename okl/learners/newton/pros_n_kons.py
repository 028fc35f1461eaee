"""PROS-N-KONS (pros_n_kons_calandriello2017 §3, Figure 1; Theorems 1-2; Tables 1-2).

KONS run exactly in the Nyström embedding of a KORS dictionary (γ, ε, β), restarted whenever the
dictionary changes. In epoch j the map φ̃(x) = Σ_j⁻¹U_jᵀΦ_jᵀφ(x) ∈ R^j is fixed and each round is an
ONS step in R^j (Figure 1, lines 12-17):

    υ_t = ω_{t-1} − Ã_{t-1}⁻¹ g̃_{t-1},    ω_t = υ_t − h(φ̃_tᵀυ_t) / (φ̃_tᵀÃ_{t-1}⁻¹φ̃_t) · Ã_{t-1}⁻¹φ̃_t,
    ŷ_t = φ̃_tᵀω_t,   g̃_t = ℓ'_t(ŷ_t) φ̃_t,   Ã_t = Ã_{t-1} + η_t g̃_t g̃_tᵀ.

Reset (lines 6-10): at the round after KORS added a point (z_{t-1} = 1, the paper's condition), the
map is rebuilt on the new dictionary, Ã_{t-1} = αI and ω_t = 0, so that round predicts 0.

Choices: the embedding is the Cholesky basis of :mod:`okl.dictionary.nystrom` (an orthogonal change
of basis of Σ⁻¹Uᵀ; ONS is invariant under it).

Step η_t: Figure 1 lists "step-sizes η_t" as its input but prints the update with σ_t/2, while
Theorems 1-2 hold "if η_t ≥ σ" and §3 calls each round "an exact KONS update", whose Theorem 1 sets
η_t = σ (:mod:`okl.learners.newton.kons`). Choice: η_t = σ, the curvature of Assumption 2 for the loss on
[−C, C] (:func:`okl.losses.curvature`; 1/(8C²) for the square loss, Theorem 2's value); σ_t/2 would
break the theorems' condition. It also reproduces Table 1 (preset ``pros_n_kons_table1``, 10
seeds): casp 0.0677, cadata 0.0308, cpusmall 0.0233 against the paper's 0.0677, 0.0310, 0.0249, where
σ/2 gives 0.0693, 0.0326, 0.0264. ``eta`` replaces σ by a constant.

The hinge loss, which the paper trains its classifiers with (§5), has σ = 0, outside its Theorem 1;
Figure 1 read literally is then projected gradient descent with step 1/α (100 at α = 0.01). Choice: η =
1 for σ = 0 (Ã then accumulates the gradients, a full-matrix AdaGrad-like step). Measured on the first
40,000 rounds of ijcnn1 (α = γ = 0.01, C = 1): error 34% with η = 0, 25% with KONS's 1/(LC√t), 12.2% /
10.9% / 10.9% with η = 0.3 / 1 / 3 (the paper: 10.73% on the whole stream); B-KONS on cod-rna (C = 10):
4.6% / 4.8% / 5.7% with η = 0.1 / 1 / 10 (the paper: 4.57%). With the hinge, C = 1 confines every
prediction to the margin and the projection then undoes most steps (B-KONS on cod-rna: 25.9%); Table
2's script uses C = 10 and η = 0.1 (its ``HINGE_ETA`` gives the measurements). A round costs O(j d +
j²) (embedding, one matrix-vector product, one rank-one update) in a compiled loop; the embedding of a
block is one matrix product.

Variants: ``con_kons`` maps the state into the new embedding instead of resetting; ``b_kons``
stops growing the dictionary at J_max.

Example: KONS in the Nyström embedding of a KORS dictionary, restarted when it grows:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("pros_n_kons")(2, sigma=0.5, alpha=1.0, gamma=0.5, seed=0)
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat), mse(0 * y)
(90, 0.3273, 0.5214)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numba
import numpy as np

from okl.dictionary.kors import KORS
from okl.dictionary.nystrom import NystromMap
from okl.kernels import Kernel
from okl.learners.base import BlockLearner, KORSLearner, register
from okl.losses import TRAINING, curvature, derivative, excess
from okl.params import GaussianParams, KORSParams
from okl.validation import integer_at_least, one_of, positive


@dataclass(frozen=True)
class ProsNKonsParams(GaussianParams, KORSParams):
    """sigma: bandwidth; alpha: ONS regularisation α; gamma, eps, beta: KORS's γ, ε, β; C: prediction
    bound; loss; eta: constant step η_t (None: σ of Assumption 2, and 1 when σ = 0); budget: J_max
    (None: none); kors: KORS's weights (``eq4`` or ``code``, :mod:`okl.dictionary.kors`); seed."""

    alpha: float = 1.0
    gamma: float = 1.0
    C: float = 1.0
    loss: str = "square"
    eta: float | None = None
    budget: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        for key in ("alpha", "gamma", "C"):
            positive(key, getattr(self, key))
        one_of("loss", self.loss, TRAINING)
        if self.eta is not None:
            positive("eta", self.eta)
        if self.budget is not None:
            integer_at_least("budget", self.budget, 1)


@register("pros_n_kons")
class ProsNKons(KORSLearner, BlockLearner):
    """KONS in a KORS Nyström embedding, restarted when the dictionary grows."""

    Params = ProsNKonsParams
    carry_over: ClassVar[bool] = False  # CON-KONS maps the state into the new embedding instead

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        kernel = Kernel("gaussian", p.sigma)
        self.kors = KORS(d, kernel, p.gamma, p.eps, p.beta, p.seed, budget=p.budget, weights=p.kors)
        self.map = NystromMap(d, kernel)
        sigma = curvature(p.loss, p.C)
        self.eta = p.eta if p.eta is not None else sigma if sigma > 0 else 1.0
        self._loss = TRAINING[p.loss]
        self.w = np.zeros(0)  # υ for the next round, before projection
        self.omega = np.zeros(0)  # ω of the last round
        self.P = np.zeros((0, 0))  # Ã⁻¹
        self.restarts = 0
        self._pending: np.ndarray | None = None  # input added by KORS at the last round
        _ons(np.zeros((1, 0)), np.zeros(1), self.w, self.P, self.omega, 0, 1.0, 0.0, False, np.empty(1))

    def _reset(self) -> None:
        """Dictionary changed (z_{t-1} = 1): new embedding, then reset (PROS) or carry the state over (CON)."""
        grew = self.map.add(self._pending) is not None
        self._pending = None
        self.restarts += 1
        j, alpha = self.map.dim, self.params.alpha
        if self.carry_over:
            if grew:  # old coordinates are unchanged; the new direction starts at 0 with Ã = α there (or 0)
                P = np.zeros((j, j))
                P[:-1, :-1], P[-1, -1] = self.P, self._new_direction(alpha)
                self.P, self.omega = P, np.append(self.omega, 0.0)
            self.w = self.omega.copy()
        else:
            self.P, self.w, self.omega = np.eye(j) / alpha, np.zeros(j), np.zeros(j)

    def _new_direction(self, alpha: float) -> float:
        """Ã⁻¹ on a new direction of the embedding when the state is carried over (CON-KONS)."""
        return 1.0 / alpha

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        B, start = len(y), self.kors.size
        added = self.kors.run(X)[0]
        restart = np.concatenate(([self._pending is not None], added[:-1]))
        cuts = [0, *np.flatnonzero(restart[1:]) + 1, B]
        out = np.empty(B)
        dims, epochs = np.empty(B, dtype=np.int64), np.empty(B, dtype=np.int64)
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            if a == b:
                continue
            if restart[a]:
                if self._pending is None:
                    self._pending = X[a - 1]
                self._reset()
            F = self.map.transform(X[a:b])
            free = bool(restart[a]) and self.carry_over
            _ons(F, y[a:b], self.w, self.P, self.omega, self._loss, self.params.C, self.eta, free, out[a:b])
            dims[a:b], epochs[a:b] = self.map.dim, self.restarts
        if added[-1]:
            self._pending = X[-1].copy()
        self.recorded = {"model_size": dims, "dictionary_size": start + np.cumsum(added), "restarts": epochs}
        return out

    def predict_one(self, x: np.ndarray) -> float:
        if self._pending is not None:  # a restart round: PROS predicts 0, CON the carried-over ω
            if not self.carry_over:
                return 0.0
            twin = NystromMap(self.d, self.map.kernel)
            twin.Z, twin.R_inv = self.map.Z, self.map.R_inv
            twin.add(self._pending)
            return float(twin.transform(x)[0][: len(self.omega)] @ self.omega)
        phi = self.map.transform(x)[0]
        v = self.P @ phi
        h_val, y_bar = float(phi @ v), float(phi @ self.w)
        return y_bar - excess(y_bar, self.params.C) if h_val > 0 else y_bar

    @property
    def model_size(self) -> int:
        return self.map.dim


@numba.njit(cache=True)
def _ons(F, y, w, P, omega, loss, C, eta, free_first, out):
    """ONS rounds with fixed embedding; w, P (Ã⁻¹, full) and omega are updated in place."""
    j = F.shape[1]
    v = np.empty(j)
    for t in range(F.shape[0]):
        phi = F[t]
        h_val, y_bar = 0.0, 0.0
        for a in range(j):
            s = 0.0
            for b in range(j):
                s += P[a, b] * phi[b]
            v[a] = s
            h_val += phi[a] * s
            y_bar += phi[a] * w[a]
        hz = 0.0 if (free_first and t == 0) or h_val <= 0.0 else excess(y_bar, C)
        y_hat = y_bar - hz
        out[t] = y_hat
        g = derivative(loss, y_hat, y[t])
        den = 1.0 + eta * g * g * h_val
        step, shrink = hz / h_val if hz != 0.0 else 0.0, eta * g * g / den
        for a in range(j):
            omega[a] = w[a] - step * v[a]
            w[a] = omega[a] - g / den * v[a]
        if shrink != 0.0:
            for a in range(j):
                for b in range(j):
                    P[a, b] -= shrink * v[a] * v[b]
