"""Raker and AdaRaker as the authors' released MATLAB code runs them (``variant=code``).

raker_shen2018's Figure 1 was made with the authors' code, which differs from the text (§2–§3.1) in its
features, its steps and both of its weight rules. ``learner=raker learner.variant=code`` and
``learner=adaraker learner.variant=code`` (or the top-level ``variant=code``) follow the code; the
default ``paper`` follows the text (:mod:`okl.learners.multikernel.raker`, :mod:`okl.learners.multikernel.adaraker`).

Features. For each value s of ``sigma2`` (the code's ``sigma``), the D frequencies are
V = Diag(c) · s · Q: Q stacks the Q factors of the QR decompositions of independent d×d Gaussian
matrices (rows cut to D; no sign correction, as the code's ``qr``), and c_j = √χ²₁ per row (one degree of
freedom, where orthogonal random features use χ_d). s *multiplies* the frequencies: an inverse bandwidth,
where the text's σ² divides them. z(x) = [sin(Vx); cos(Vx)] with no 1/√D, so ||z(x)||² = D.

Raker (one instance; step η, by default 0.05 since the text's 0.5 diverges here
(``okl.learners.multikernel.raker.STEPS``), λ = 0.01, and the code's β = 0.5). Each round, with
f_p = w_pᵀ z_p(x_t) and θ the kernel weights (θ_p = 1/P at the start):

    ŷ_t = Σ_p θ_p f_p / Σ_p θ_p                                   (θ before this round's update)
    w_p ← (1 − ηλ/10) w_p − (η/10) · (−2 (y_t − f_p) z_p)            (the code's per-kernel step)
    e_p = (y_t − f_p)²,  m = (max e + min e)/2,  r = (max e − min e)/2
    θ_p ← θ_p · β^((e_p − m + 10⁻¹²)/(r + 10⁻¹²)) + 10⁻¹²,   θ ← θ/Σθ only when max θ > 10¹⁰

The exponent lies in [−1, 1] (−1 for the best kernel, +1 for the worst): with β < 1 the best kernel's
weight doubles and the worst one's halves each round whatever the size of the errors. Equal errors give
the exponent 1 for every kernel, so the normalised weights do not move (up to the 10⁻¹²).

AdaRaker. T rounds (the run's horizon) give N = ⌊log₂ T⌋ + 1 levels k = 1..N. Level k is a Raker instance
(above) with step η_k = min(0.1/S, 0.1/√(S^k)), S = 2, which starts learning at round 2^{k−1} + 1 (level
1 at round 1) and is never restarted: its w and θ carry over (the code's reset is commented out). What
restarts is its ensemble weight: a_k ← η_k at every round t with (t − 1) ≡ 0 mod S^{k−1}, before the
prediction. With F_k the active levels' predictions,

    ŷ_t = Σ_{k active} a_k F_k / Σ_{k ≤ N} a_k
    a_k ← a_k · β'^((e_k − m + 10⁻¹⁰)/(r + 10⁻¹⁰)) + 10⁻¹⁰  (active k),   a ← a / Σ a,

with e_k = (y_t − F_k)², m and r over the active levels, and β' the step of the highest active level.
Choices where the code is ambiguous or incidental:

- The denominator sums every level's weight, the levels not yet started included, whose weights start
  at 1 (the code's ``act_w(k) = 1``) and are normalised with the others: until a level starts, its
  weight pulls ŷ towards 0. This is the code's behaviour, kept.
- Levels beyond N (a stream longer than the horizon it was planned for) start with weight 0.
- The code computes N and the active count as ⌊log t / log S⌋ + 1 in floating point; here as the
  bit length of t, the same integer for every t (checked for powers of 2 up to 2³⁹).
- The code scores AdaRaker by an MSE whose first error it sets to 1; the runner records the learner's
  true losses.
- eta and eta0 (the text's rates) do not apply: ``variant=code`` refuses values other than the
  defaults, since the code's rates above are what it reproduces.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from okl.errors import ConfigError
from okl.features.random_fourier import RandomFourierFeatures, embed
from okl.jit import njit
from okl.learners.base import BlockLearner, Learner
from okl.learners.ensembles.intervals import LEVELS, bit_lengths
from okl.seeding import rng

BETA = 0.5  # the code's kernel-weight base (``all_beta``)
S = 2  # the code's interval growth factor


def code_features(d: int, D: int, scale: float, seed: int, kernel: int) -> RandomFourierFeatures:
    """The code's feature map for one kernel: V = Diag(√χ²₁) · scale · Q, z = [sin(Vx); cos(Vx)]."""
    g = rng(seed, "raker_code", kernel)
    blocks = [np.linalg.qr(g.standard_normal((d, d)))[0] for _ in range(-(-D // d))]
    c = np.sqrt(g.chisquare(1, D))
    return RandomFourierFeatures.from_frequencies(c[:, None] * scale * np.vstack(blocks)[:D], normalise=False)


class CodeEnsembleMixin(BlockLearner):
    """What the code variants share: construction (``setup`` builds the state), the kernels' feature
    maps, and the block protocol around a compiled loop (``_rounds``). The registered ``raker`` and
    ``adaraker`` classes build a subclass of theirs with this mixin first when ``variant=code``."""

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        Learner.__init__(self, d, horizon=horizon, **params)
        self.setup()

    @abstractmethod
    def setup(self) -> None:
        """Build the state from ``self.params`` (and ``self.horizon``)."""

    @abstractmethod
    def _rounds(self, Z: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        """Play the rounds of features Z (B × P × 2D) and labels y; predictions into ``out``."""

    def _init_features(self) -> None:
        p = self.params
        self.features = [code_features(self.d, p.D, s, p.seed, i) for i, s in enumerate(p.sigma2)]

    def _embed(self, X: np.ndarray) -> np.ndarray:
        return embed(self.features, X)

    def predict_one(self, x: np.ndarray) -> float:
        return float(self.predict_many(x[None, :])[0])

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = np.empty(len(y))
        self._rounds(self._embed(X), np.ascontiguousarray(y, dtype=np.float64), out)
        self.recorded = {"model_size": self.sizes(len(y))}
        return out

    def sizes(self, rounds: int) -> np.ndarray:
        """The model size after each of the last ``rounds`` rounds (constant, unless the variant grows)."""
        return np.full(rounds, self.model_size, dtype=np.int64)


class RakerCode(CodeEnsembleMixin):
    """Raker as the authors' code runs it (one instance, step ``eta``)."""

    def setup(self) -> None:
        p = self.params
        self._init_features()
        P = len(p.sigma2)
        self.w = np.zeros((P, 2 * p.D))
        self.theta = np.full(P, 1.0 / P)
        _instance_rounds(np.zeros((0, P, 2 * p.D)), np.zeros(0), self.w, self.theta, p.eta, p.lam, np.zeros(0))

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        f = np.einsum("bpi,pi->bp", self._embed(X), self.w)
        return f @ self.theta / self.theta.sum()

    def _rounds(self, Z: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        _instance_rounds(Z, y, self.w, self.theta, self.params.eta, self.params.lam, out)

    @property
    def model_size(self) -> int:
        return self.w.size


class AdaRakerCode(CodeEnsembleMixin):
    """AdaRaker as the authors' code runs it: never-restarted Raker levels, restarted level weights."""

    def setup(self) -> None:
        p = self.params
        if not self.horizon:
            raise ConfigError(
                "adaraker variant=code sizes its level weights by the number of rounds (the code's "
                "floor(log2 T) + 1 levels), which is unknown here: give the horizon"
            )
        self._init_features()
        P = len(p.sigma2)
        self.t = 0
        self.w = np.zeros((LEVELS, P, 2 * p.D))
        self.theta = np.full((LEVELS, P), 1.0 / P)
        self.a = np.zeros(LEVELS)
        self.a[: int(self.horizon).bit_length()] = 1.0  # the code's act_w(1:N) = 1
        self.eta = np.minimum(0.1 / S, 0.1 / np.sqrt(float(S) ** np.arange(1, LEVELS + 1)))  # level k = j + 1
        _levels_rounds(np.zeros((0, P, 2 * p.D)), np.zeros(0), 0, self.w, self.theta, self.a, self.eta, p.lam,
                       np.zeros(0))  # fmt: skip

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        t = self.t + 1
        active = active_levels(t)
        a = self.a.copy()
        restart = [j for j in range(active) if (t - 1) % (1 << j) == 0]
        a[restart] = self.eta[restart]
        f = np.einsum("bpi,jpi->bjp", self._embed(X), self.w[:active])
        F = np.einsum("bjp,jp->bj", f, self.theta[:active] / self.theta[:active].sum(axis=1, keepdims=True))
        return F @ a[:active] / a.sum()

    def _rounds(self, Z: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        _levels_rounds(Z, y, self.t, self.w, self.theta, self.a, self.eta, self.params.lam, out)
        self.t += len(y)

    @property
    def model_size(self) -> int:
        return active_levels(max(self.t, 1)) * self.w.shape[1] * self.w.shape[2]

    def sizes(self, rounds: int) -> np.ndarray:
        played = self.t - rounds + np.arange(1, rounds + 1)
        return bit_lengths(np.maximum(played - 1, 1)) * self.w.shape[1] * self.w.shape[2]  # active_levels


def active_levels(t: int) -> int:
    """The code's number of active levels at round t: ⌊log₂(t − 1)⌋ + 1, and 1 at t = 1."""
    return max(t - 1, 1).bit_length()


@njit
def _raker_round(z, y, w, theta, eta, lam):
    """One round of the code's Raker instance on features z (P × 2D): returns ŷ, updates w and θ."""
    P, dim = w.shape
    err = np.empty(P)
    num, den = 0.0, 0.0
    keep, step = 1.0 - eta * lam / 10.0, eta / 10.0
    for p in range(P):
        f = 0.0
        for i in range(dim):
            f += z[p, i] * w[p, i]
        err[p] = (y - f) ** 2
        num += f * theta[p]
        den += theta[p]
        g = -2.0 * (y - f)
        for i in range(dim):
            w[p, i] = keep * w[p, i] - step * g * z[p, i]
    _ratio_update(err, theta, BETA, 1e-12, P)
    if theta.max() > 1e10:
        theta /= theta.sum()
    return num / den


@njit
def _ratio_update(err, weights, base, tiny, n):
    """weights[k] ← weights[k] · base^((e_k − m + tiny)/(r + tiny)) + tiny for k < n: the code's rule."""
    top, low = err[:n].max(), err[:n].min()
    mid, half = (top + low) / 2.0, (top - low) / 2.0
    for k in range(n):
        weights[k] = weights[k] * base ** ((err[k] - mid + tiny) / (half + tiny)) + tiny


@njit
def _instance_rounds(Z, y, w, theta, eta, lam, out):
    for b in range(Z.shape[0]):
        out[b] = _raker_round(Z[b], y[b], w, theta, eta, lam)


@njit
def _levels_rounds(Z, y, t0, w, theta, a, eta, lam, out):
    """Rounds t0 + 1, ...: restart the level weights, play the active levels, mix, update the weights."""
    err = np.empty(a.shape[0])
    F = np.empty(a.shape[0])
    for b in range(Z.shape[0]):
        t = t0 + b + 1
        active = 1  # active_levels(t)
        while (1 << active) <= t - 1:
            active += 1
        for j in range(active):
            if (t - 1) % (1 << j) == 0:
                a[j] = eta[j]
            F[j] = _raker_round(Z[b], y[b], w[j], theta[j], eta[j], lam)
            err[j] = (F[j] - y[b]) ** 2
        num = 0.0
        for j in range(active):
            num += a[j] * F[j]
        out[b] = num / a.sum()
        _ratio_update(err, a, eta[active - 1], 1e-10, active)
        a /= a.sum()
