"""BSGD: budgeted stochastic gradient descent for kernel SVMs (Wang, Crammer & Vucetic, JMLR 2012), the
online baseline of polk_koppel2019 §5 (η = 1, budgets {16, 129} on multidist).

With support vectors s_j and coefficients α_j ∈ R^C (C = 1 for the binary hinge), f = Σ_j α_j κ(s_j, ·):

    f ← (1 − ηλ) f;   if the hinge loss at (x_t, y_t) is positive: add s = x_t with
    α = η y_t (binary) or α = η (e_{y_t} − e_r), r = argmax_{c≠y_t} f_c(x_t) (multi-class, Crammer–Singer);

then, when more than B vectors are kept, budget maintenance (``maintenance``):

- ``removal``: drop the vector with the smallest ||α_j||;
- ``merging``: m = argmin_j ||α_j||; for every other n, the Gaussian-kernel merge z = h s_m + (1 − h) s_n
  with α_z = α_m κ(s_m, z) + α_n κ(s_n, z) = α_m k_mn^{(1−h)²} + α_n k_mn^{h²} (the projection of
  α_m φ(s_m) + α_n φ(s_n) on φ(z)) and h ∈ [0, 1] maximising ||α_z||² (golden-section search, 30 steps, compiled),
  whose weight degradation is ||α_m||² + ||α_n||² + 2 k_mn α_m·α_n − ||α_z||²; the n of least
  degradation is merged with m.

Step: a constant η (POLK's setting), or η_t = 1/(λt) (Pegasos, the paper's default) when ``eta`` is
null. With Pegasos steps every coefficient has the same norm, 1/(λt) (binary) or √2/(λt) (the products of
(1 − η_s λ) telescope to t_j/t), so "the smallest ||α_j||" is a tie that round-off breaks (a test shows the tie):
the vector removed or merged is then not defined by the paper, and okl does not pick one by a rule of its own
(every preset and arm steps with a constant η, where the norms differ). Classes grow with the labels seen, as
:mod:`okl.learners.budgeted.fsgd`. Per-round diagnostics:
``model_size``, ``risk`` = hinge loss + (λ/2)||f||²_H (||f||² updated exactly at each change) and ``penalty``, its
(λ/2)||f||²_H.

Example: A kernel SVM on at most ``budget`` support vectors (labels ±1 here):

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> labels = np.sign(y)
>>> learner = LEARNERS.get("bsgd")(2, sigma=0.5, budget=20, loss="hinge")
>>> errors = np.mean(np.sign(learner.predict_learn_block(X, labels)) != labels)
>>> learner.model_size, round(float(errors), 3)
(20, 0.045)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from okl.jit import njit
from okl.kernels import gaussian_scaled, half_norms
from okl.learners.base import register
from okl.learners.budgeted.expansion import KernelExpansion
from okl.losses import TRAINING, derivative, multiclass_loss, training_value
from okl.params import GaussianParams
from okl.validation import integer_at_least, one_of, positive
from okl.warmup import warm

GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class BSGDParams(GaussianParams):
    """sigma: Gaussian bandwidth σ; budget: B; eta: constant step (None: 1/(λt)); lam: λ;
    loss: hinge (binary) or multi_hinge; maintenance: removal or merging."""

    budget: int = 100
    eta: float | None = 1.0
    lam: float = 1e-6
    loss: str = "multi_hinge"
    maintenance: str = "merging"

    def __post_init__(self) -> None:
        super().__post_init__()
        integer_at_least("budget", self.budget, 1)
        if self.eta is not None:
            positive("eta", self.eta)
        positive("lam", self.lam)
        one_of("loss", self.loss, ("hinge", "multi_hinge"))
        one_of("maintenance", self.maintenance, ("removal", "merging"))


@register("bsgd")
class BSGD(KernelExpansion):
    """Kernel SVM by SGD with at most B support vectors X (coefficients W)."""

    Params = BSGDParams
    tasks = ("binary", "multiclass")
    losses_by_task = {"multiclass": "multi_hinge", "binary": "hinge"}
    revision = 1  # 1: the per-round penalty (λ/2)||f||² recorded beside the risk (the numbers are unchanged)

    def footprint(self, rounds: int) -> tuple[int, str]:
        """The buffers of B + 1 support vectors allocated before round 1: X, X/σ, one coefficient a class (two
        counted) and the half norms."""
        B = self.params.budget
        return 8 * (B + 1) * (2 * self.d + 3), f"a budget of {B:,} support vectors in d={self.d}"

    def memory_advice(self, budget: int, rounds: int) -> str:
        return f"lower learner.budget (at most {budget // (8 * (2 * self.d + 3)) - 1:,} fit)"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        self.norm2 = 0.0
        self.t = 0
        self.size = 0  # X and W are views of the first rows of buffers that hold B + 1 vectors
        self._X = np.zeros((self.params.budget + 1, d))
        self._W = np.zeros((self.params.budget + 1, self.W.shape[1]))
        # X/σ and its half squared norms, kept beside X: the Gaussian kernel against the support vectors, four times
        # a round, rescaled and summed all of them each time (at B = 3,731 on MNIST: 66 of 90 s)
        self._Xs, self._half = np.zeros_like(self._X), np.zeros(self.params.budget + 1)
        self._views()
        if self.params.maintenance == "merging":  # compile (or load) the search now, not inside timed rounds
            warm(_best_merge, np.ones(1), 1.0, np.ones(1), np.zeros(1))

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        out, loss, penalty = np.empty(len(y)), np.empty(len(y)), np.empty(len(y))
        size = np.empty(len(y), dtype=np.int64)
        for i in range(len(y)):
            out[i], loss[i], penalty[i] = self._round(X[i], y[i])
            size[i] = len(self.X)
        self.recorded = {"model_size": size, "risk": loss + penalty, "penalty": penalty}
        return out

    def __setstate__(self, state: dict) -> None:
        """X, W, Xs and half as views of their buffers again: a copy or an unpickled learner got them as arrays
        of their own, whose shrink (W *= 1 − ηλ) the buffers, and so the next round's views, then lost."""
        vars(self).update(state)
        self._views()

    def _views(self) -> None:
        self.X, self.W = self._X[: self.size], self._W[: self.size]
        self.Xs, self.half = self._Xs[: self.size], self._half[: self.size]

    def _put(self, j: int, x: np.ndarray, alpha: np.ndarray) -> None:
        """Support vector x (coefficients alpha) in slot j, with its scaled point and half squared norm."""
        self._X[j], self._W[j] = x, alpha
        self._Xs[j] = x / self.params.sigma
        self._half[j] = half_norms(self._Xs[j : j + 1])[0]

    def support_kernel(self, X: np.ndarray) -> np.ndarray:
        """The Gaussian kernel against the support vectors from the kept scaled points (the bits of the base
        class's)."""
        Xs = X / self.params.sigma
        return gaussian_scaled(Xs, half_norms(Xs), self.Xs, self.half)

    def add_classes(self, y: np.ndarray) -> None:
        super().add_classes(y)
        if self.W.shape[1] > self._W.shape[1]:
            W = np.zeros((len(self._W), self.W.shape[1]))
            W[: self.size] = self.W
            self._W = W
            self._views()

    def _insert(self, x: np.ndarray, alpha: np.ndarray) -> None:
        self._put(self.size, x, alpha)
        self.size += 1
        self._views()

    def _drop(self, j: int) -> None:
        """Remove vector j: the last one moves into its slot (the order does not change f)."""
        last = self.size - 1
        for kept in (self._X, self._W, self._Xs, self._half):
            kept[j] = kept[last]
        self.size = last
        self._views()

    def _round(self, x: np.ndarray, y: float) -> tuple[float, float, float]:
        """One SGD step; returns (prediction, loss, penalty (λ/2)||f||²), the risk's two terms before the step."""
        p = self.params
        self.add_classes(np.array([y]))
        a = self.activations(x[None, :])
        prediction = float(self.predictions(a)[0])
        if self.multiclass:
            values, G = multiclass_loss("multi_hinge", a, np.array([y]))
            loss, alpha = float(values[0]), -G[0]
        else:
            loss = float(training_value("hinge", a[0, 0], y))
            alpha = np.array([-derivative(TRAINING["hinge"], a[0, 0], y)])
        penalty = 0.5 * p.lam * self.norm2
        self.t += 1
        eta = p.eta if p.eta is not None else 1.0 / (p.lam * self.t)
        shrink = 1.0 - eta * p.lam
        self.W *= shrink
        self.norm2 *= shrink * shrink
        if loss > 0:
            alpha = eta * alpha
            self._change(x[None, :], alpha[None, :])
            self._insert(x, alpha)
            if self.size > p.budget:
                self._maintain()
        return prediction, loss, penalty

    def _change(self, P: np.ndarray, B: np.ndarray) -> None:
        """||f + Σ_k B[k] κ(P[k], ·)||² from ||f||², before f changes."""
        self.norm2 += 2.0 * np.einsum("kc,kc->", B, self.activations(P)) + np.einsum(
            "kc,kl,lc->", B, self.kernel(P, P), B
        )
        self.norm2 = max(self.norm2, 0.0)

    def _maintain(self) -> None:
        weights = np.einsum("jc,jc->j", self.W, self.W)
        m = int(np.argmin(weights))
        if self.params.maintenance == "removal":
            self._change(self.X[m : m + 1], -self.W[m : m + 1])
            self._drop(m)
            return
        others = np.delete(np.arange(len(self.X)), m)
        k = gaussian_scaled(self.Xs[m : m + 1], self.half[m : m + 1], self.Xs[others], self.half[others])[0]
        am, an = self.W[m], self.W[others]
        cross = an @ am
        h, gain = _best_merge(k, float(weights[m]), weights[others], cross)
        loss = weights[m] + weights[others] + 2.0 * k * cross - gain
        i = int(np.argmin(loss))
        n = others[i]
        z = h[i] * self.X[m] + (1.0 - h[i]) * self.X[n]
        alpha_z = am * k[i] ** ((1.0 - h[i]) ** 2) + self.W[n] * k[i] ** (h[i] ** 2)
        self._change(np.vstack([self.X[[m, n]], z]), np.vstack([-self.W[[m, n]], alpha_z]))
        self._put(m, z, alpha_z)  # z takes m's slot; n's goes
        self._drop(n)


@njit
def _merged_norm2(k: float, wm: float, wn: float, cross: float, h: float) -> float:
    """||α_z||² = wm k^{2(1−h)²} + wn k^{2h²} + 2 cross k^{(1−h)² + h²} of the merge at h."""
    a, b = k ** ((1.0 - h) ** 2), k ** (h * h)
    return wm * a * a + wn * b * b + 2.0 * cross * a * b


@njit
def _best_merge(k: np.ndarray, wm: float, wn: np.ndarray, cross: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate n: the h ∈ [0, 1] maximising ||α_z||² (30 golden-section steps) and that maximum."""
    h, best = np.empty(len(k)), np.empty(len(k))
    for n in range(len(k)):
        lo, hi = 0.0, 1.0
        for _ in range(30):
            c, d = hi - GOLDEN * (hi - lo), lo + GOLDEN * (hi - lo)
            if _merged_norm2(k[n], wm, wn[n], cross[n], c) >= _merged_norm2(k[n], wm, wn[n], cross[n], d):
                hi = d
            else:
                lo = c
        h[n] = (lo + hi) / 2
        best[n] = _merged_norm2(k[n], wm, wn[n], cross[n], h[n])
    return h, best
