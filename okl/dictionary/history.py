"""The rounds played so far, kept for dictionary growth: inputs, labels and embedded features.

When the dictionary of a projected learner gains a point z, every past round gains the coordinate
ψ_s = (k(z, x_s) − lᵀφ̃_s)/ρ (:mod:`okl.dictionary.nystrom`), and the learner's statistics gain

    Σ_s φ̃_s ψ_s,      Σ_s ψ_s²,      Σ_s y_s ψ_s.

These depend on all past rounds, so the addition costs one pass over them: O(n (d + m)) for n
rounds and m coordinates, done by one fused loop that also stores ψ as the new column. Rounds
themselves never touch the past (O(m²) each). Memory: 8 n (m + d + 1) bytes, checked before growing.
"""

from __future__ import annotations

import numba
import numpy as np

from okl import system


class History:
    """Inputs X (n×d), labels y and features Φ (n×m) of the rounds played, with spare capacity."""

    def __init__(self, d: int, what: str) -> None:
        self.what = what
        self.n, self.m = 0, 0
        self.X = np.zeros((0, d))
        self.y = np.zeros(0)
        self.F = np.zeros((0, 0))

    def _grow(self, rows: int, cols: int) -> None:
        cap_n, cap_m = self.F.shape
        if rows <= cap_n and cols <= cap_m:
            return
        new_n = max(rows, int(cap_n * 1.5), 1024) if rows > cap_n else cap_n
        new_m = max(cols, int(cap_m * 1.5), 16) if cols > cap_m else cap_m
        d = self.X.shape[1]
        system.require_memory(
            8 * new_n * (new_m + d + 1),
            f"{self.what} keeps {rows:,} rounds × {cols:,} features",
            "use fewer rounds (n=) or a larger regularisation (a smaller dictionary)",
        )
        F = np.zeros((new_n, new_m))
        F[: self.n, : self.m] = self.F[: self.n, : self.m]
        self.F = F
        if new_n > len(self.X):
            X, y = np.zeros((new_n, d)), np.zeros(new_n)
            X[: self.n], y[: self.n] = self.X[: self.n], self.y[: self.n]
            self.X, self.y = X, y

    def append(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> None:
        """Record rounds (inputs, labels, features in the current embedding)."""
        n, B = self.n, len(y)
        self._grow(n + B, self.m)
        self.X[n : n + B], self.y[n : n + B], self.F[n : n + B, : self.m] = X, y, F
        self.n = n + B

    def new_coordinate(self, k: np.ndarray, l: np.ndarray, rho: float) -> tuple[np.ndarray, float, float]:
        """Append ψ = (k − Φl)/ρ as a column; return (Σ φ̃_s ψ_s, Σ ψ_s², Σ y_s ψ_s)."""
        self._grow(self.n, self.m + 1)
        cross = np.zeros(self.m)
        square, target = _new_column(self.F, self.y, self.n, self.m, k, l, rho, cross)
        self.m += 1
        return cross, square, target


@numba.njit(cache=True, fastmath=True)
def _new_column(F, y, n, m, k, l, rho, cross):
    square, target = 0.0, 0.0
    for s in range(n):
        v = k[s]
        for j in range(m):
            v -= F[s, j] * l[j]
        v /= rho
        for j in range(m):
            cross[j] += F[s, j] * v
        F[s, m] = v
        square += v * v
        target += y[s] * v
    return square, target
