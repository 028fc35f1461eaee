"""Lower-triangular matrices: a factor that grows by one row at a time, with numba solves that need no copy,
and the product with a lower-triangular matrix that code playing one round calls.

Dictionary methods (KORS, Nyström embeddings, Sketched-KONS) keep the Cholesky factor L of a matrix
over their dictionary and append a row [lᵀ, ρ] whenever a point joins. The factor lives in a
row-major array with spare capacity (grown by 1.5×, with a memory check), so a round costs the
O(m²) forward substitution and no reallocation.
"""

from __future__ import annotations

import numpy as np
from numba import uint64

from okl import system
from okl.jit import njit
from okl.warmup import warm


@njit
def forward(L: np.ndarray, m: int, b: np.ndarray) -> np.ndarray:
    """x = L[:m, :m]⁻¹ b (forward substitution on the rows of a row-major factor)."""
    x = np.empty(m)
    for i in range(m):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]
    return x


@njit
def backward_t(L: np.ndarray, m: int, b: np.ndarray) -> np.ndarray:
    """x = L[:m, :m]⁻ᵀ b (back substitution with the transpose)."""
    x = b[:m].copy()
    for i in range(m - 1, -1, -1):
        x[i] /= L[i, i]
        for j in range(i):
            x[j] -= L[i, j] * x[i]
    return x


class GrowingFactor:
    """Lower-triangular L (m×m) in a row-major buffer with spare capacity.

    Parameters
    ----------
    what:
        Name used in the memory error (``"the KORS dictionary"``).
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.m = 0
        self.L = np.zeros((0, 0))
        for solve in (forward, backward_t):  # compile (or load) them now, not inside timed rounds
            warm(solve, np.eye(1), 1, np.zeros(1))

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` more rows."""
        need = self.m + rows
        cap = self.L.shape[0]
        if need <= cap:
            return
        new_cap = max(need, int(cap * 1.5), 16)
        system.require_memory(
            8 * new_cap * new_cap,
            f"{self.what} reached {need:,} points (a {new_cap:,}×{new_cap:,} factor)",
            "use a larger regularisation (fewer points are selected) or fewer rounds (n=)",
        )
        L = np.zeros((new_cap, new_cap))
        L[: self.m, : self.m] = self.L[: self.m, : self.m]
        self.L = L

    def append(self, row: np.ndarray, diag: float) -> None:
        """Append the row [rowᵀ, diag] (row of length m)."""
        self.reserve(1)
        m = self.m
        self.L[m, :m] = row
        self.L[m, m] = diag
        self.m = m + 1

    def solve(self, b: np.ndarray) -> np.ndarray:
        """L⁻¹ b."""
        return forward(self.L, self.m, np.ascontiguousarray(b, dtype=np.float64))

    def solve_t(self, b: np.ndarray) -> np.ndarray:
        """L⁻ᵀ b."""
        return backward_t(self.L, self.m, np.ascontiguousarray(b, dtype=np.float64))


@njit(nogil=True)
def lower_times(L: np.ndarray, x: np.ndarray) -> None:
    """x ← L x for L lower triangular (m×m, read on and below its diagonal only), in place: each entry is the sum
    Σ_{k<=i} L_ik x_k taken in index order, so its bits do not depend on the vector code the compiler chooses (a
    test checks them against that sum). The one-round products of KORS (L⁻¹k(I, x), Eq. 4) and of the Nyström map
    (R⁻¹k_Z(x)); BLAS's dtrmv did them before.

    Four columns at a time, down the column-major rows below them: an entry is read and written once per four
    columns, and the indices are unsigned, which tells the compiler they are never negative (numba's handling of
    negative indices otherwise kept the loop scalar, 3× slower). Measured on this machine (µs per product, one
    core, Fortran-ordered L, against dtrmv): 0.72 against 1.15 at m = 76, 1.49 against 2.05 at m = 123, 2.38
    against 3.14 at m = 169, 4.19 against 5.35 at m = 250. Written as the lower triangle's dot products instead,
    the rows' sums only vectorize reassociated (fastmath), whose bits then depend on how the code was compiled
    (:mod:`okl.jit`, :func:`okl.kernels._squared_distances`).

    >>> L, x = np.array([[2.0, 0.0], [1.0, 3.0]]), np.array([1.0, 1.0])
    >>> lower_times(L, x); x
    array([2., 4.])
    """
    m, one, four = uint64(len(x)), uint64(1), uint64(4)
    out = np.zeros(len(x))
    k = uint64(0)
    while k + four <= m:  # columns k..k+3: their 4×4 triangle at the top, then the rows below it
        c0, c1, c2, c3 = k, k + one, k + one + one, k + four - one
        x0, x1, x2, x3 = x[c0], x[c1], x[c2], x[c3]
        out[c0] += L[c0, c0] * x0
        out[c1] = (out[c1] + L[c1, c0] * x0) + L[c1, c1] * x1
        out[c2] = ((out[c2] + L[c2, c0] * x0) + L[c2, c1] * x1) + L[c2, c2] * x2
        for i in range(c3, m):
            out[i] = (((out[i] + L[i, c0] * x0) + L[i, c1] * x1) + L[i, c2] * x2) + L[i, c3] * x3
        k += four
    while k < m:
        xk = x[k]
        for i in range(k, m):
            out[i] += L[i, k] * xk
        k += one
    x[:] = out
