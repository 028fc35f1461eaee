"""Kernel Online Row Sampling (KORS; sketched_kons_calandriello2017 Algorithm 2, Eq. 4, Theorem 2).

KORS keeps a dictionary I_t of (index, weight 1/p̃_i) pairs. At round t it adds (t, 1) temporarily,
estimates the α-ridge leverage score of the new point with Eq. 4

    τ̃_t = (1+ε)/α · (k̄_tt − k̄_Īᵀ S (Sᵀ K̄_Ī S + αI)⁻¹ Sᵀ k̄_Ī),   S = Diag(1/√p̃_i),  p̃_t = 1 on Ī = I ∪ {t},

keeps it with probability p̃_t = min(β τ̃_t, 1), and stores it with weight 1/p̃_t. The rescaled kernel
k̄(x_i, x_j) = s_i s_j k(x_i, x_j) allows the gradient-weighted points φ̄_i = ġ_i √η_i φ_i of
Sketched-KONS (s_i = ġ_i √η_i); the other learners use s_i = 1.

Computation (O(|I|² + |I| d) per round, never O(t)): with S K̄_I S + αI = S (K̄_I + α P) S and
P = Diag(p̃_i), Eq. 4 equals (1+ε) q/(1+q) with

    q = (k̄_tt − k̄_Iᵀ (K̄_I + α P)⁻¹ k̄_I) / α      (Sherman–Morrison on the temporary point),

and KORS keeps the lower Cholesky factor L of K̄_I + α P. A point that joins appends the row
[lᵀ, √(k̄_tt + α p̃_t − ||l||²)] (α p̃_t² with ``code`` weights, below) with l = L⁻¹ k̄_I, the vector
the estimate already computed. KORS stores L⁻¹ rather than L: a block of B rounds then needs one
triangular matrix product L⁻¹ K̄(I, X_B) (OpenBLAS's trmm runs 3-4× faster per flop than its
triangular solve at these sizes; it runs without the GIL, and a large product is split between two
threads), and a new row extends L⁻¹ in O(|I|²).
The tests check the estimate against Eq. 4 evaluated directly and against exact ridge leverage
scores (τ_t ≤ τ̃_t ≤ ρ τ_t, Theorem 2(3)).

Weights (``weights``): ``eq4`` (the default) is Eq. 4 as printed, S = Diag(1/√p̃_i), so that each
point carries the weight 1/p̃_i, and L factors K̄_I + α P. ``code`` is the KORS function of the
authors' code (pkawv_jezequel2019 Appendix H.2), whose S holds 1/p̃_i, so the weight is applied twice
and L factors K̄_I + α P²: a point that joined with a small p̃_i counts for more, and fewer points
join. The published dictionary sizes follow ``code``: with the Gaussian kernel of σ = 4 on [0, 1]
inputs, β = 1, ε = 0.5 (seeds 0-1), ``code`` keeps 19-21 points on casp at γ = 1, 36-37 and 108-116
on cod-rna at γ = 1 and 0.01, 101 and 426-438 on ijcnn1, against 21, 38, 111, 100 and 436 in
pros_n_kons_calandriello2017 Tables 1-2. ``eq4`` keeps 60, 123-126, 360-382, 283-294 and 1108-1111
there, and no bandwidth brings all five near the paper (σ = 16: 29-34, 61-65, 140-144, 122-123,
320-326). Theorem 2's guarantees are proved for ``eq4``, which stays the default.

Coins are read from a seeded stream addressed by round (:mod:`okl.dictionary.uniforms`). ``budget``
caps the dictionary (B-KONS's J_max): once full, no point joins.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
from scipy.linalg import solve_triangular

from okl.dictionary.uniforms import Uniforms
from okl.jit import njit
from okl.kernels import Kernel
from okl.linalg.nogil_blas import LEFT, LOWER, NO_TRANS, dtrmm
from okl.linalg.triangular import lower_times
from okl.seeding import rng
from okl.warmup import warm


class KORS:
    """Online ridge-leverage-score dictionary.

    Parameters
    ----------
    d:
        Input dimension.
    kernel:
        The kernel k (before rescaling).
    gamma:
        RLS regularisation (α in sketched_kons, γ in pros_n_kons, μ in pkawv).
    eps, beta:
        Accuracy ε and oversampling β of Algorithm 2.
    seed, stream:
        Seed and name of the coin stream.
    budget:
        Largest dictionary (None: unbounded).
    weights:
        ``eq4`` (Eq. 4, S = Diag(1/√p̃)) or ``code`` (Appendix H.2's code, S = Diag(1/p̃)); see the module.
    """

    def __init__(
        self,
        d: int,
        kernel: Kernel,
        gamma: float,
        eps: float,
        beta: float,
        seed: int,
        stream: str = "kors",
        budget: int | None = None,
        weights: str = "eq4",
    ) -> None:
        self.d, self.kernel, self.gamma, self.eps, self.beta = d, kernel, gamma, eps, beta
        self.power = WEIGHTS[weights]  # L factors K̄_I + α P^power
        self.budget = budget if budget is not None else np.iinfo(np.int64).max
        self.coins = Uniforms(rng(seed, stream))
        self.L_inv = np.zeros((0, 0), order="F")  # inverse of the lower Cholesky factor L of K̄_I + αP
        self.X = np.zeros((0, d))
        self.scale = np.zeros(0)
        self.scaled = False  # whether a dictionary point has a scale other than 1 (Sketched-KONS)
        self.p = np.zeros(0)
        self.index = np.zeros(0, dtype=np.int64)  # round (0-based) at which each dictionary point joined
        self.t = 0  # rounds seen
        self.p_sum = 0.0  # Σ_s p̃_s (Theorem 2(2): E|I_t| = Σ p̃_s)
        warm(self.peek_many, np.zeros((1, d)))  # compile (or load) the loops now, not inside timed rounds
        warm(_join, np.zeros((2, 1)), np.zeros(2), 0, 0, np.zeros(1), 1.0, np.zeros(1))  # a point joining

    @property
    def size(self) -> int:
        return self.L_inv.shape[0]

    def report(self) -> dict[str, object]:
        """Its settings and size, for a run's manifest."""
        return {"gamma": self.gamma, "eps": self.eps, "beta": self.beta, "size": self.size, "rounds": self.t}

    def run(self, X: np.ndarray, scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play the rounds of X (B×d) in order; return (added, τ̃, p̃) per round."""
        B = len(X)
        scale = np.ones(B) if scale is None else np.ascontiguousarray(scale, dtype=np.float64)
        added, tau, p = np.zeros(B, dtype=np.bool_), np.empty(B), np.empty(B)
        with ThreadPoolExecutor(1) if B >= SPLIT else nullcontext() as pool:  # splits the products
            for a in range(0, B, BLOCK):
                b = min(a + BLOCK, B)
                self._play(X[a:b], scale[a:b], self.t + a, True, added[a:b], tau[a:b], p[a:b], pool)
        self.t += B
        self.p_sum += float(p.sum())
        return added, tau, p

    def peek_many(self, X: np.ndarray) -> np.ndarray:
        """For each row of X, whether it would join as the coming round (all read the coming round's
        coin), without playing; unscaled points."""
        B = len(X)
        _, norms, diag, _ = self._projections(X, np.ones(B), 0)
        added, tau, p = np.zeros(B, dtype=np.bool_), np.empty(B), np.empty(B)
        u = np.full(B, self.coins.take(self.t, 1)[0])
        _scan(norms, diag, u, self.gamma, self.eps, self.beta, self.budget - self.size, False, 0, added, tau, p)
        return added

    def one(self) -> tuple:
        """The arguments of :func:`decide_one` that hold this dictionary (L⁻¹, ε, β and the room the budget leaves),
        for compiled code that plays one unscaled round: they change only when a point joins, so a learner keeps
        them from round to round; the round's own coin is :meth:`coin`."""
        return self.L_inv, self.gamma, self.eps, self.beta, self.budget - self.size

    def coin(self) -> float:
        """The coming round's coin u_t, for :func:`decide_one`."""
        return self.coins.at(self.t)

    @staticmethod
    def one_stand_ins() -> Iterator[tuple[int, np.ndarray, tuple]]:
        """For the warm-ups of compiled code that takes :meth:`one`: for each layout a run's L⁻¹ has (a first
        round's 1×1, which numpy calls C-ordered, then Fortran-ordered ones), its size n, an n×n identity of that
        layout and a stand-in of ``one()`` holding it."""
        for n, square in ((1, np.eye(1)), (2, np.eye(2, order="F"))):
            yield n, square, (square, 1.0, 0.5, 1.0, 1)

    def skip(self, p: float) -> None:
        """Record the coming round as :func:`decide_one` decided it: not joining, with probability p̃ = ``p``."""
        self.t += 1
        self.p_sum += p

    def join_one(self, x: np.ndarray, w: np.ndarray, p: float) -> None:
        """Record the coming round as :func:`decide_one` decided it: the unscaled point x joins with probability
        p̃ = ``p``; ``w`` = L⁻¹ k(I, x), the projection that decision computed, gives L its new row [wᵀ, root] (the
        per-round twin of ``_play``'s join, without projecting x again)."""
        root = np.sqrt(self.kernel.diag(x[None, :])[0] + self.gamma * p**self.power - w @ w)
        self._grow(np.append(w, root)[None, :], x[None, :], np.ones(1), np.array([p]), np.array([self.t]), self.scaled)
        self.t += 1
        self.p_sum += p

    def _projections(self, X, s, spare, pool=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """(Wᵀ with ``spare`` free columns, ||W[:, b]||², k̄(x_b, x_b), scaled) for the rows of X, where
        W = L⁻¹ K̄(I, X) is one triangular product (BLAS-3). With a ``pool``, and at least ``SPLIT``
        rows and dictionary points (below, handing over costs more than it saves), the pool's thread
        computes the second half of the rows meanwhile (column by column the same numbers)."""
        B, m = len(X), self.size
        scaled = self.scaled or bool(np.any(s != 1.0))  # else K̄ = K: skip the products
        Wt = np.empty((B, m + spare))  # Wᵀ: round b's column of W is the contiguous row Wt[b]
        if m:
            h = B // 2 if pool is not None and min(B, m) >= SPLIT else B
            later = pool.submit(self._project, X[h:], s[h:], scaled) if h < B else None
            Wt[:h, :m] = self._project(X[:h], s[:h], scaled)
            if later is not None:
                Wt[h:, :m] = later.result()
        return Wt, np.einsum("ij,ij->i", Wt[:, :m], Wt[:, :m]), self.kernel.diag(X) * s * s, scaled

    def _project(self, X, s, scaled) -> np.ndarray:
        """(L⁻¹ K̄(I, X))ᵀ, C order (the GIL is released during the product)."""
        K = self.kernel(X, self.X)
        if scaled:
            K *= s[:, None] * self.scale[None, :]
        dtrmm(LEFT, LOWER, NO_TRANS, 1.0, self.L_inv, K.T)
        return K

    def _play(self, X, s, t0, commit, added, tau, p, pool) -> None:
        """Rounds t0.. of a block: W = L⁻¹ K̄(I, X), then a compiled scan that decides rounds until one
        joins; that point's kernel row against the block's later rounds appends its row to L and its
        column to Wᵀ, and the scan goes on."""
        B, m = len(X), self.size
        Wt, norms, diag, scaled = self._projections(X, s, B, pool)
        rows = np.empty((B, m + B))  # rows appended to L (lower triangle read only)
        u, m0, b = self.coins.take(t0, B), m, -1
        while True:
            b = _scan(norms, diag, u, self.gamma, self.eps, self.beta, self.budget - m, commit, b + 1, added, tau, p)
            if b == B:
                break
            k = self.kernel(X[b : b + 1], X[b + 1 :])[0]  # k̄(x_b, x_c) for the later rounds c
            if scaled:
                k *= s[b] * s[b + 1 :]
            _join(Wt, norms, m, b, k, np.sqrt(diag[b] + self.gamma * p[b] ** self.power - norms[b]), rows[m - m0])
            m += 1
        if m > m0:
            new = np.flatnonzero(added)
            self._grow(rows[: m - m0, :m], X[new], s[new], p[new], t0 + new, scaled)

    def _grow(self, rows, X, s, p, index, scaled: bool) -> None:
        """Append the points X (their rows [L₂₁, L₂₂] of L, scales, p̃ and rounds) to the dictionary."""
        self.L_inv = extend_inverse(self.L_inv, rows)
        self.X = np.concatenate([self.X, X])
        self.scale = np.concatenate([self.scale, s])
        self.scaled = scaled
        self.p = np.concatenate([self.p, p])
        self.index = np.concatenate([self.index, index])


WEIGHTS = {"eq4": 1, "code": 2}  # weights: the power of P in K̄_I + α P (see the module)
BLOCK = 256  # rounds per triangular product
SPLIT = 128  # rounds and dictionary points from which the product is split between two threads


def extend_inverse(L_inv: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Inverse of [[L, 0], [L₂₁, L₂₂]] from L⁻¹ and the new rows [L₂₁, L₂₂] (k×(m+k)).

    [[L, 0], [L₂₁, L₂₂]]⁻¹ = [[L⁻¹, 0], [−L₂₂⁻¹ L₂₁ L⁻¹, L₂₂⁻¹]]: O(k m²) for k new rows.
    """
    m, k = L_inv.shape[0], rows.shape[0]
    out = np.zeros((m + k, m + k), order="F")
    out[:m, :m] = L_inv
    L22_inv = solve_triangular(rows[:, m:], np.eye(k), lower=True, check_finite=False)
    out[m:, m:] = L22_inv
    out[m:, :m] = -L22_inv @ (rows[:, :m] @ L_inv)
    return out


@njit(nogil=True)
def _decide(norm, diag, u, gamma, eps, beta, room):
    """Eq. 4 for one round from k̄_tt (``diag``) and ||L⁻¹ k̄_I||² (``norm``), and its coin u: (τ̃, p̃, joins)."""
    q = max(diag - norm, 0.0) / gamma
    tau = (1.0 + eps) * q / (1.0 + q)
    p = min(beta * tau, 1.0)
    return tau, p, u < p and room > 0


@njit(nogil=True)
def _scan(norms, diag, u, gamma, eps, beta, room, commit, start, added, tau, p):
    """Decide rounds start.. of a block (see ``KORS._play``) until one joins (only when ``commit``
    and the budget leaves ``room``); return its index, or the block length."""
    for b in range(start, len(diag)):
        tau[b], p[b], added[b] = _decide(norms[b], diag[b], u[b], gamma, eps, beta, room)
        if added[b] and commit:
            return b
    return len(diag)


@njit(nogil=True)
def decide_one(L_inv, gamma, eps, beta, room, u, diag, w):
    """One unscaled round as compiled code (the arguments of :meth:`KORS.one`, the coin u of :meth:`KORS.coin`, then
    k(x, x) and w holding k(I, x)): w ← L⁻¹ k(I, x), then Eq. 4; returns (τ̃, p̃, joins). The per-round twin of
    ``_projections`` and ``_scan``; the round is then recorded by :meth:`KORS.skip`, or by :meth:`KORS.join_one`
    with w when it joins."""
    norm = 0.0
    if len(w):
        lower_times(L_inv, w)
        for i in range(len(w)):
            norm += w[i] * w[i]
    return _decide(norm, diag, u, gamma, eps, beta, room)


@njit(nogil=True)
def _join(Wt, norms, m, b, k, root, row):
    """Round b joins: L gains the row [W[:, b]ᵀ, root], and W the row (k̄(x_b, x_c) − W[:, b]ᵀW[:, c]) / root
    for the later rounds c (stored as column m of Wᵀ), whose norms grow accordingly."""
    for i in range(m):
        row[i] = Wt[b, i]
    row[m] = root
    for j in range(len(k)):
        c = b + 1 + j
        s = k[j]
        for i in range(m):
            s -= Wt[b, i] * Wt[c, i]
        Wt[c, m] = s / root
        norms[c] += Wt[c, m] * Wt[c, m]
