"""KONS: kernel online Newton step, exact (sketched_kons_calandriello2017 §3, Algorithm 1, Lemmas 1-2,
Theorem 1).

ONS in the RKHS with the oblique projection on S_t = {w : |φ_tᵀw| <= C} (eq. (1)):

    u_t = w_{t-1} − A_{t-1}⁻¹ g_{t-1},   ŷ_t = φ_tᵀ w_t = ȳ_t − h(ȳ_t),  ȳ_t = φ_tᵀ u_t,
    w_t = u_t − h(ȳ_t) / (φ_tᵀ A_{t-1}⁻¹ φ_t) · A_{t-1}⁻¹ φ_t,      A_t = A_{t-1} + η_t g_t g_tᵀ,  A_0 = αI,

with g_t = ℓ'_t(ŷ_t) φ_t and h(z) = sign(z) max{|z| − C, 0}.

Representation (equivalent to Lemmas 1-2, which write the same quantities with the rescaled kernel
matrix K̄ = D K D): u_t = Σ_s c_s φ_s over the past inputs, and A_t = αI + Ḡ Ḡᵀ with the columns
ḡ_s = √η_s ġ_s φ_s of the gradients kept (all of them for KONS). By Woodbury,

    A⁻¹ φ = (φ − Ḡ E⁻¹ Ḡᵀφ) / α,     E = αI + ḠᵀḠ = L_E L_Eᵀ,

so a round costs O(t d) for k(x_s, x_t), O(t) for ȳ_t and O(|Ḡ|²) for one forward and one back
substitution with L_E, which grows by one row per kept gradient. For KONS |Ḡ| = t: O(t²) per round.
A zero gradient adds nothing to A and is not stored.

Step size η_t (Theorem 1): η_t = σ, the curvature of Assumption 2 for the loss on [−C, C]
(:func:`okl.losses.curvature`); for the hinge loss (σ = 0) η_t = 1/(L C √t). ``eta`` overrides it.

Example: Exact KONS keeps every point; its loss against always predicting 0:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("kons")(2, sigma=0.5, alpha=1.0)
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat), mse(0 * y)
(400, 0.0213, 0.5214)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from okl import system
from okl.kernels import KINDS, Kernel
from okl.learners.base import Learner, register
from okl.linalg.triangular import GrowingFactor
from okl.losses import TRAINING, curvature, derivative, excess, lipschitz
from okl.params import GaussianParams
from okl.validation import one_of, positive
from okl.warmup import warm


@dataclass(frozen=True)
class KONSParams(GaussianParams):
    """sigma: bandwidth; alpha: regularisation α; C: prediction bound; loss; eta: step (None: Theorem 1);
    kernel: gaussian or linear."""

    alpha: float = 1.0
    C: float = 1.0
    loss: str = "square"
    eta: float | None = None
    kernel: str = "gaussian"

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("alpha", self.alpha)
        positive("C", self.C)
        one_of("loss", self.loss, TRAINING)
        if self.eta is not None:
            positive("eta", self.eta)
        one_of("kernel", self.kernel, KINDS)


@register("kons")
class KONS(Learner):
    """Exact kernel ONS; O(t²) time and memory per round."""

    Params = KONSParams
    lighter = "use sketched_kons or pros_n_kons, which sketch the gradients"

    def footprint(self, rounds: int) -> tuple[int, str]:
        """The inputs and coefficients of every round and the factor of the gradients kept (every round's, at
        worst): 8·n·(n + d + 1) bytes."""
        return 8 * rounds * (
            rounds + self.d + 1
        ), f"the inputs and the {rounds:,}×{rounds:,} gradient factor of n={rounds:,} rounds"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        self.kernel = Kernel(p.kernel, p.sigma)
        self._loss = TRAINING[p.loss]
        self._sigma_t = curvature(p.loss, p.C)
        self._lipschitz = lipschitz(p.loss, p.C)
        self.t = 0
        self.X = np.zeros((0, d))
        self.c = np.zeros(0)  # u = Σ_s c_s φ_s
        self.kept = np.zeros(0, dtype=np.int64)  # rounds whose gradient is a column of Ḡ
        self.scale = np.zeros(0)  # √η_s ġ_s of those columns
        self.E = GrowingFactor(f"{self.name}'s sketch")
        self._cache: tuple | None = None
        warm(excess, 0.0, p.C)  # the compiled pieces of a round, not inside timed rounds
        warm(derivative, self._loss, 0.0, 0.0)

    def eta(self, t: int) -> float:
        """η_t for round t (1-based)."""
        p = self.params
        if p.eta is not None:
            return p.eta
        return self._sigma_t if self._sigma_t > 0 else 1.0 / (self._lipschitz * p.C * math.sqrt(t))

    def _keep(self, x: np.ndarray, g: float, eta: float) -> bool:
        """Whether the gradient of this round joins A (KONS: every non-zero gradient)."""
        return g != 0.0

    def _evaluate(self, x: np.ndarray) -> tuple:
        """(ŷ, ȳ, h(ȳ), h_val, e) for input x: prediction and the pieces of A⁻¹φ."""
        key = (self.t, x.tobytes())
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        n, alpha = self.t, self.params.alpha
        k = self.kernel(self.X[:n], x[None, :])[:, 0] if n else np.zeros(0)
        ktt = float(self.kernel.diag(x[None, :])[0])
        y_bar = float(k @ self.c[:n])
        gphi = self.scale * k[self.kept]
        m = self.E.solve(gphi)
        h_val = (ktt - float(m @ m)) / alpha
        e = self.E.solve_t(m)  # E⁻¹ Ḡᵀφ
        hz = excess(y_bar, self.params.C)
        out = (y_bar - hz, hz, h_val, m, e)
        self._cache = (key, out)
        return out

    def predict_one(self, x: np.ndarray) -> float:
        return self._evaluate(x)[0]

    def learn_one(self, x: np.ndarray, y: float) -> None:
        y_hat, hz, h_val, m, e = self._evaluate(x)
        alpha, t = self.params.alpha, self.t
        self._reserve()
        # ω_t = u_t − h/(φᵀA⁻¹φ) A⁻¹φ, with A⁻¹φ = (φ − Σ_r scale_r φ_r e_r)/α
        coef = -hz / h_val if hz != 0.0 and h_val > 0.0 else 0.0
        g = derivative(self._loss, y_hat, y)
        eta = self.eta(t + 1)
        keep = self._keep(x, g, eta)
        den = 1.0 + eta * g * g * h_val if keep else 1.0  # A_t⁻¹φ = A_{t-1}⁻¹φ / den
        coef -= g / den  # u_{t+1} = ω_t − g A_t⁻¹ φ
        self.c[t] = coef / alpha
        if len(self.kept):
            self.c[self.kept] -= (coef / alpha) * self.scale * e
        self.X[t] = x
        if keep:
            root = math.sqrt(eta) * g
            self.E.append(root * m, math.sqrt(alpha + eta * g * g * alpha * h_val))
            self.kept = np.append(self.kept, t)
            self.scale = np.append(self.scale, root)
        self.t = t + 1
        self._cache = None

    def _reserve(self) -> None:
        if self.t < len(self.c):
            return
        cap = max(64, int(len(self.c) * 1.5))
        system.require_memory(8 * cap * (self.d + 1), f"{self.name} keeps {cap:,} inputs", "use fewer rounds (n=)")
        X, c = np.zeros((cap, self.d)), np.zeros(cap)
        X[: self.t], c[: self.t] = self.X[: self.t], self.c[: self.t]
        self.X, self.c = X, c

    @property
    def model_size(self) -> int:
        return len(self.kept)

    def diagnostics(self, rounds: int) -> dict[str, np.ndarray]:
        """The gradients kept after each of the last ``rounds`` rounds (``kept`` lists their 0-based rounds)."""
        played = np.arange(self.t - rounds, self.t)
        return {"model_size": np.searchsorted(self.kept, played, side="right")}
