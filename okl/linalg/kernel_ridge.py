"""Exact online kernel ridge regression and Kernel-AWV through a growing Cholesky factor.

Notation (pkawv_jezequel2019, eq. (3)): after t rounds the learner keeps the inputs x_1..x_t, the
lower Cholesky factor L_t of K_t + λI (K_t the t×t kernel matrix) and z_t = L_t⁻¹ y_{1:t}.

For a new input x with k = (k(x_s, x))_{s<=t}, l = L_t⁻¹ k and d² = k(x, x) + λ - ||l||²:

- kernel ridge predicts  ŷ = kᵀ (K_t + λI)⁻¹ y = lᵀ z_t;
- Kernel-AWV (eq. (3)) is ridge with the extra pseudo-label 0 at x (the term f(x_t)²), which gives
  ŷ = kᵀ(K_t + λI)⁻¹y · λ / d², i.e. ridge / (1 + h) with h = (k(x,x) - ||l||²)/λ = φᵀA⁻¹φ, the same
  correction as in feature space;
- learning y appends the row (lᵀ, d) to L and z_{t+1} = (y - lᵀz_t) / d.

A block of B inputs appends B rows at once: W = L_t⁻¹ K(X_{1:t}, X_B), S = K_BB + λI - WᵀW = C Cᵀ,
and the per-round predictions are the innovations of :mod:`okl.linalg.innovations` with m = Wᵀz_t
(divided by c²/λ for AWV, c = diag C); z grows by u = C⁻¹(y - m).

Cost: O(t d + t²) per round, memory 8 t² bytes for L (stored dense). With a horizon (the rounds the run
will play) L is allocated once at its final size and its pages are mapped as rows are written, so the
process never holds more than the rows written (a factor grown by copying held the old and the new one
together: peak 2.0× the factor on cod-rna); without one it grows by 1.5× when full, or to the largest size
the available memory allows.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas, lapack, solve_triangular

from okl import system
from okl.kernels import gaussian
from okl.linalg.innovations import compile_now, one_step_ahead
from okl.warmup import warm

ROW_CHUNK = 512  # rows of L per forward-substitution step (gemm on the part left of the diagonal)
HEADROOM = 0.9  # share of the available memory a new factor may take (blocks need t×B workspace)


class KernelMemoryError(MemoryError):
    """The exact factor cannot grow any further on this machine."""


class OnlineKernelRidge:
    """State of exact online kernel ridge / Kernel-AWV with the Gaussian kernel."""

    def __init__(self, d: int, sigma: float, lam: float, awv: bool, horizon: int | None = None) -> None:
        self.sigma, self.lam, self.awv = sigma, lam, awv
        self.horizon = horizon  # the factor never grows beyond the rounds the run will play
        self.t = 0
        self.X = np.empty((0, d))
        self.L = np.empty((0, 0))
        self.z = np.empty(0)
        self._L_inv, self._inv_rows = np.empty((0, 0)), 0  # L⁻¹ for predict_many, built on first use
        warm(compile_now)

    def __getstate__(self) -> dict:
        """The state with L's written rows only: rows 0..t-1 are the first t·cap entries of the C-ordered
        buffer, handed to the pickler as one flat array over that memory (no copy; an array whose base is an
        ndarray would be pickled as its whole buffer: a factor allocated at a 200,000-round horizon is
        320 GB of mostly unwritten pages)."""
        state = self.__dict__.copy()
        t, cap = self.t, self.L.shape[1]
        state["L"] = np.frombuffer(memoryview(self.L.reshape(-1))[: t * cap], dtype=self.L.dtype)
        state["capacity"] = self.L.shape[0]
        return state

    def __setstate__(self, state: dict) -> None:
        """Back to a factor of the saved capacity (resuming holds the saved rows twice for a moment)."""
        rows, capacity = state.pop("L"), state.pop("capacity")
        self.__dict__.update(state)
        self.L = np.empty((capacity, capacity))
        self.L.reshape(-1)[: rows.size] = rows

    @staticmethod
    def state_bytes(rounds: int, d: int) -> int:
        """Memory of the state after ``rounds`` rounds: the factor L (rounds², float64), the inputs and z."""
        return 8 * rounds * (rounds + d + 1)

    # -- helpers ---------------------------------------------------------------------------------
    def _forward(self, K: np.ndarray) -> np.ndarray:
        """L_t⁻¹ K for K (t×m), by row chunks: W_a = C_a⁻¹ (K_a - L[a, :a] W[:a])."""
        t, L = self.t, self.L
        W = np.empty_like(K)
        for a in range(0, t, ROW_CHUNK):
            b = min(a + ROW_CHUNK, t)
            rhs = K[a:b] - L[a:b, :a] @ W[:a] if a else K[a:b]
            W[a:b] = solve_triangular(L[a:b, a:b], rhs, lower=True, check_finite=False)
        return W

    def _reserve(self, rows: int) -> None:
        """Make room for ``rows`` more rows in X, L and z."""
        need = self.t + rows
        cap = self.L.shape[0]
        if need <= cap:
            return
        usable = HEADROOM * system.available_memory()  # the current factor is already counted as used
        fits = int(np.sqrt(usable / 8))
        if need > fits:
            raise KernelMemoryError(
                f"the exact {need:,}×{need:,} Cholesky factor needs {8 * need * need / system.GIB:,.1f} GiB "
                f"but {usable / system.GIB:,.1f} GiB are available"
            )
        if self.horizon is not None:  # the whole horizon at once: its pages are mapped as rows are written, and
            new_cap = min(max(need, self.horizon), fits)  # no growth ever holds an old and a new factor together
        else:
            new_cap = min(max(need, int(cap * 1.5), 64), fits)  # grow by 1.5×, or as far as memory allows
        L = np.empty((new_cap, new_cap))
        L[: self.t, : self.t] = self.L[: self.t, : self.t]
        X = np.empty((new_cap, self.X.shape[1]))
        X[: self.t] = self.X[: self.t]
        z = np.empty(new_cap)
        z[: self.t] = self.z[: self.t]
        self.L, self.X, self.z = L, X, z

    def _cross(self, Xn: np.ndarray) -> np.ndarray:
        return gaussian(self.X[: self.t], Xn, self.sigma)

    # -- per round -------------------------------------------------------------------------------
    def _row(self, x: np.ndarray) -> tuple[np.ndarray, float, float]:
        """(l, d², ridge prediction) for input x."""
        l = self._forward(self._cross(x[None, :]))[:, 0]
        d2 = 1.0 + self.lam - float(l @ l)  # k(x, x) = 1 for the Gaussian kernel
        return l, d2, float(l @ self.z[: self.t])

    def predict(self, x: np.ndarray) -> float:
        return float(self.predict_many(x[None, :])[0])

    def predict_many(self, Xn: np.ndarray) -> np.ndarray:
        """Predictions at each row of Xn as the next input, without learning.

        Queried many times per round (adaptive environments), so W = L⁻¹K is a matrix product with
        the inverse factor, kept from the first query on and extended by the rows learned since (a
        triangular solve of O(t²) flops per new row; OpenBLAS's solve with few right-hand sides runs
        an order of magnitude below its matrix product). Memory: a second t×t array.
        """
        t = self.t
        if not t:
            return np.zeros(len(Xn))
        L_inv = self._inverse_factor()
        W = L_inv @ self._cross(Xn)  # t×B
        ridge = W.T @ self.z[:t]
        return ridge * self.lam / (1.0 + self.lam - np.einsum("ij,ij->j", W, W)) if self.awv else ridge

    def _inverse_factor(self) -> np.ndarray:
        """L_t⁻¹, extended from the rows computed at the last query: for L = [[L_a, 0], [B, C]],
        L⁻¹ = [[L_a⁻¹, 0], [−C⁻¹ B L_a⁻¹, C⁻¹]]."""
        t, a = self.t, self._inv_rows
        if a < t:
            L_inv = np.zeros((t, t))
            L_inv[:a, :a] = self._L_inv[:a, :a]
            C = self.L[a:t, a:t]
            L_inv[a:, :a] = -solve_triangular(C, self.L[a:t, :a] @ L_inv[:a, :a], lower=True, check_finite=False)
            L_inv[a:, a:] = solve_triangular(C, np.eye(t - a), lower=True, check_finite=False)
            self._L_inv, self._inv_rows = L_inv, t
        return self._L_inv[:t, :t]

    def update(self, x: np.ndarray, y: float) -> None:
        self._reserve(1)
        l, d2, ridge = self._row(x)
        t = self.t
        d = np.sqrt(d2)
        self.L[t, :t] = l
        self.L[t, t] = d
        self.z[t] = (y - ridge) / d
        self.X[t] = x
        self.t = t + 1

    # -- block -----------------------------------------------------------------------------------
    def predict_update_block(self, Xb: np.ndarray, y: np.ndarray) -> np.ndarray:
        B, t = len(y), self.t
        self._reserve(B)
        W = self._forward(self._cross(Xb))  # t×B
        S = gaussian(Xb, Xb, self.sigma)
        S.flat[:: B + 1] = 1.0 + self.lam
        if t:
            S = blas.dsyrk(-1.0, W, trans=1, beta=1.0, c=np.asfortranarray(S), lower=1)
        C, info = lapack.dpotrf(S, lower=1, clean=1)
        if info != 0:
            raise FloatingPointError(f"kernel block is not positive definite (dpotrf info={info})")
        c = C.diagonal().copy()
        pred, u = one_step_ahead(C, W.T @ self.z[:t], y)
        if self.awv:
            pred *= self.lam / (c * c)
        self.L[t : t + B, :t] = W.T
        self.L[t : t + B, t : t + B] = C
        self.z[t : t + B] = u
        self.X[t : t + B] = Xb
        self.t = t + B
        return pred
