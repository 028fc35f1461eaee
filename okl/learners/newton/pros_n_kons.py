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
block is one matrix product. Played one round at a time (river's ``predict_one``/``learn_one``, ``okl-run
block=1``), a round outside a restart whose point does not join is one compiled call to predict (the embedding,
Ã⁻¹φ̃ and KORS's decision from one kernel row) and one to learn (the ONS step with that Ã⁻¹φ̃): on casp (σ = 1)
1.3-1.7 s of learner time against 0.71-0.74 s in blocks, where the calls through KORS and the map took 5.7 s.

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

import numpy as np

from okl.dictionary.kors import KORS, decide_one
from okl.dictionary.nystrom import NystromMap, embed_one
from okl.jit import njit
from okl.kernels import Kernel, kernel_row
from okl.learners.base import BlockLearner, KORSLearner, register
from okl.losses import TRAINING, curvature, derivative, excess
from okl.params import GaussianParams, KORSParams
from okl.validation import integer_at_least, one_of, positive
from okl.warmup import warm

SIZES = ("model_size", "dictionary_size", "restarts")  # the per-round diagnostics


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
        self._round: tuple | None = None  # the last _one: ((x's bytes, round), its result)
        self._buffers: tuple = (None,)  # (sizes, k, φ̃, v) of _one
        self._kernel = kernel.compiled
        empty = np.zeros(0)
        warm(_ons, np.zeros((1, 0)), np.zeros(1), empty, np.zeros((0, 0)), empty, 0, 1.0, 0.0, False, np.empty(1))
        for n, square, kors in KORS.one_stand_ins():  # a run's layouts: 1×1 is C, R⁻¹ later F
            point = np.zeros((n, d))
            one = point[0], *self._kernel, point, point, True, kors, 1.0, square, np.eye(n), *np.zeros((1, n)), 1.0
            warm(_peek_one, *one, *np.zeros((3, n)))  # compile (or load) it now, not inside timed rounds

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
            self._steps(F, y[a:b], bool(restart[a]) and self.carry_over, out[a:b])
            dims[a:b], epochs[a:b] = self.map.dim, self.restarts
        if added[-1]:
            self._pending = X[-1].copy()
        self.recorded = dict(zip(SIZES, (dims, start + np.cumsum(added), epochs), strict=True))
        return out

    def _steps(self, F: np.ndarray, y: np.ndarray, free: bool, out: np.ndarray) -> None:
        """ONS rounds in one embedding (``free``: its first round is CON-KONS's first after a carry-over)."""
        _ons(F, y, self.w, self.P, self.omega, self._loss, self.params.C, self.eta, free, out)

    def predict_one(self, x: np.ndarray) -> float:
        if self._pending is not None:  # a restart round: PROS predicts 0, CON the carried-over ω
            if not self.carry_over:
                return 0.0
            twin = NystromMap(self.d, self.map.kernel)
            twin.Z, twin.R_inv = self.map.Z, self.map.R_inv
            twin.add(self._pending)
            return float(twin.transform(x)[0][: len(self.omega)] @ self.omega)
        return self._one(x)[0]

    def learn_one(self, x: np.ndarray, y: float) -> None:
        """One round (river's ``learn_one``): outside a restart, and when x does not join the dictionary, the ONS
        step on the embedding and Ã⁻¹φ̃ its prediction computed (:meth:`_one`); else a block of one round."""
        one = None if self._pending is not None else self._one(x)
        if one is None or one[4]:
            super().learn_one(x, y)
            return
        self._round = None
        _, h_val, y_bar, p, _, phi, v = one
        _ons_step(phi, v, h_val, y_bar, y, self.w, self.P, self.omega, self._loss, self.params.C, self.eta, False)
        self.kors.skip(p)
        # ``recorded`` stays: a round outside a restart that adds no point changes no size, so the sizes the last
        # block recorded last are this round's

    def _one(self, x: np.ndarray) -> tuple:
        """The round at x outside a restart as one compiled call (:func:`_peek_one`), kept for its ``learn_one``:
        (ŷ, h, φ̃ᵀυ, p̃, joins, φ̃(x), Ã⁻¹φ̃). O(j² + jd) like a round of a block; the calls through KORS and the map
        with their numpy overhead cost 12× a block's round (pros_n_kons on casp, measured)."""
        key = (x.tobytes(), self.kors.t)
        if self._round is not None and self._round[0] == key:
            return self._round[1]
        sizes = self.kors.size, self.map.dim
        if self._buffers[0] != sizes:  # k, φ̃, v: reused from round to round
            self._buffers = sizes, np.empty(sizes[0]), np.empty(sizes[1]), np.empty(sizes[1])
        _, k, phi, v = self._buffers
        kors, nystrom = self.kors, self.map
        found = _peek_one(
            x, *self._kernel, kors.X, nystrom.Z, sizes[0] == sizes[1], kors.one(), kors.coin(), nystrom.R_inv,
            self.P, self.w, self.params.C, k, phi, v,
        )  # fmt: skip
        self._round = key, (*found, phi, v)
        return self._round[1]

    @property
    def model_size(self) -> int:
        return self.map.dim


@njit
def _ons(F, y, w, P, omega, loss, C, eta, free_first, out):
    """ONS rounds with fixed embedding; w, P (Ã⁻¹, full) and omega are updated in place."""
    v = np.empty(F.shape[1])
    for t in range(F.shape[0]):
        h_val, y_bar = _look(F[t], P, w, v)
        out[t] = _ons_step(F[t], v, h_val, y_bar, y[t], w, P, omega, loss, C, eta, free_first and t == 0)


@njit
def _look(phi, P, w, v):
    """v ← Ã⁻¹φ̃ (into v); returns (φ̃ᵀÃ⁻¹φ̃, φ̃ᵀυ)."""
    h_val, y_bar = 0.0, 0.0
    for a in range(len(phi)):
        s = 0.0
        for b in range(len(phi)):
            s += P[a, b] * phi[b]
        v[a] = s
        h_val += phi[a] * s
        y_bar += phi[a] * w[a]
    return h_val, y_bar


@njit
def _ons_step(phi, v, h_val, y_bar, y, w, P, omega, loss, C, eta, free):
    """One ONS round (Figure 1, lines 12-17) from :func:`_look`'s v, h and φ̃ᵀυ, in place; returns ŷ (``free``: the
    first round after CON-KONS carried its state over, played without projection)."""
    hz = 0.0 if free or h_val <= 0.0 else excess(y_bar, C)
    y_hat = y_bar - hz
    g = derivative(loss, y_hat, y)
    den = 1.0 + eta * g * g * h_val
    step, shrink = hz / h_val if hz != 0.0 else 0.0, eta * g * g / den
    for a in range(len(phi)):
        omega[a] = w[a] - step * v[a]
        w[a] = omega[a] - g / den * v[a]
    if shrink != 0.0:
        for a in range(len(phi)):
            for b in range(len(phi)):
                P[a, b] -= shrink * v[a] * v[b]
    return y_hat


@njit(nogil=True)
def _peek_one(x, gaussian, sigma, X, Z, shared, kors, u, R_inv, P, w, C, k, phi, v):
    """A round at x outside a restart, as one compiled call: φ̃(x) into phi (from k_Z(x), a copy of k(I, x) when the
    map holds every KORS point, ``shared``), v ← Ã⁻¹φ̃ and the prediction; then KORS's decision for x
    (:func:`~okl.dictionary.kors.decide_one` on k ← k(I, x), I = X, and the round's coin u). Returns (ŷ, h, φ̃ᵀυ, p̃,
    joins)."""
    diag = kernel_row(gaussian, sigma, x, X, k)
    if shared:
        phi[:] = k
    else:
        kernel_row(gaussian, sigma, x, Z, phi)
    embed_one(R_inv, phi)
    h_val, y_bar = _look(phi, P, w, v)
    _, p, joins = decide_one(*kors, u, diag, k)
    return (y_bar - excess(y_bar, C) if h_val > 0.0 else y_bar), h_val, y_bar, p, joins
