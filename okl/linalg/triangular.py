"""A lower-triangular factor that grows by one row at a time, with numba solves that need no copy.

Dictionary methods (KORS, Nyström embeddings, Sketched-KONS) keep the Cholesky factor L of a matrix
over their dictionary and append a row [lᵀ, ρ] whenever a point joins. The factor lives in a
row-major array with spare capacity (grown by 1.5×, with a memory check), so a round costs the
O(m²) forward substitution and no reallocation.
"""

from __future__ import annotations

import numpy as np

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
