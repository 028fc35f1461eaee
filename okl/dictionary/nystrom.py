"""The Nyström embedding of a growing dictionary (pros_n_kons_calandriello2017 §2, "Nyström
approximation"; the subspace H_t = Span{φ(x), x ∈ I_t} of pkawv_jezequel2019 eq. (8)).

For a dictionary Z = (z_1..z_m) with kernel matrix K_ZZ = R Rᵀ (lower Cholesky factor R), the map

    φ̃(x) = R⁻¹ k_Z(x) ∈ R^m,     φ̃(x)ᵀφ̃(x') = k_Z(x)ᵀ K_ZZ⁻¹ k_Z(x') = φ(x)ᵀ P_Z φ(x'),

gives the coordinates of the projection P_Z φ(x) in an orthonormal basis of Span{φ(z), z ∈ Z} (the
Gram–Schmidt basis of z_1, z_2, ...). The papers write Σ⁻¹Uᵀk_Z(x) with the eigendecomposition
K_ZZ = UΣ²Uᵀ; the two maps differ by an orthogonal change of basis, under which every learner here
(ridge, AWV, ONS, gradient descent) gives the same predictions, and the Cholesky basis is nested:
adding z_{m+1} appends one coordinate

    ψ(x) = (k(z_{m+1}, x) − lᵀφ̃(x)) / ρ,    l = φ̃(z_{m+1}),   ρ² = k(z_{m+1}, z_{m+1}) − ||l||²,

and leaves the first m coordinates of every point unchanged. |ψ(x)| <= 1 whatever ρ (it is the
coefficient on a unit vector of H).

Choice: a point with ρ² <= ``TOL`` (its residual below 1e-5 in RKHS norm) already lies in the span
to that accuracy; it is not added (the embedding keeps its dimension), which keeps round-off in
ψ below ~1e-10. The map stores R⁻¹ (rows appended in O(m²)), so a block of inputs is embedded by one
triangular matrix product (m² flops per input; OpenBLAS's trmm runs at gemm speed here, unlike its
triangular solve), which releases the GIL (:mod:`okl.linalg.nogil_blas`).
"""

from __future__ import annotations

import numpy as np

from okl.jit import njit
from okl.kernels import Kernel
from okl.linalg.nogil_blas import LEFT, LOWER, NO_TRANS, dtrmm
from okl.linalg.triangular import lower_times

TOL = 1e-10


class NystromMap:
    """φ̃ for the dictionary added so far."""

    def __init__(self, d: int, kernel: Kernel) -> None:
        self.kernel = kernel
        self.Z = np.zeros((0, d))
        self.R_inv = np.zeros((0, 0), order="F")  # lower triangular
        self._last: tuple[bytes, int, np.ndarray] | None = None  # the last single input's φ̃ (see transform)

    @property
    def dim(self) -> int:
        return self.R_inv.shape[0]

    def transform(self, X: np.ndarray) -> np.ndarray:
        """φ̃ of the rows of X, as a C-ordered B×m array."""
        X = np.atleast_2d(X)
        if not self.dim:
            return np.zeros((len(X), 0))
        # a round played one input at a time embeds x_t to predict, then again to learn: the second is a copy
        key = X.tobytes() if len(X) == 1 else None
        if key is not None and self._last is not None and self._last[:2] == (key, self.dim):
            return self._last[2].copy()
        K = self.kernel(X, self.Z)  # B×m, C order
        dtrmm(LEFT, LOWER, NO_TRANS, 1.0, self.R_inv, K.T)  # K ← (R⁻¹ Kᵀ)ᵀ
        if key is not None:
            self._last = (key, self.dim, K.copy())
        return K

    def residual(self, z: np.ndarray) -> tuple[np.ndarray, float]:
        """(l, ρ²) of a candidate point z."""
        l = self.transform(z)[0]
        return l, self.squared_residual(z, l)

    def squared_residual(self, z: np.ndarray, l: np.ndarray) -> float:
        """ρ² = k(z, z) − ||l||², the squared distance of φ(z) to the span, from its coordinates l = φ̃(z)."""
        return float(self.kernel.diag(z[None, :])[0] - l @ l)

    def add(self, z: np.ndarray) -> tuple[np.ndarray, float] | None:
        """Append z to the dictionary; return (l, ρ) or None if z is in the span (ρ² <= TOL)."""
        l, rho2 = self.residual(z)
        if rho2 <= TOL:
            return None
        rho = np.sqrt(rho2)
        self.append(z, l, rho)
        return l, rho

    def append(self, z: np.ndarray, l: np.ndarray, rho: float) -> None:
        """Append z, whose (l, ρ) are known (ρ² > ``TOL``), to the dictionary: R⁻¹ gains the row
        [−lᵀR⁻¹/ρ, 1/ρ]."""
        m = self.dim
        R_inv = np.zeros((m + 1, m + 1), order="F")
        R_inv[:m, :m] = self.R_inv
        R_inv[m, :m] = -(l @ self.R_inv) / rho
        R_inv[m, m] = 1.0 / rho
        self.R_inv = R_inv
        self.Z = np.vstack([self.Z, z])

    def extend(self, Z: np.ndarray) -> None:
        """Add the points of Z in order (those already in the span are skipped)."""
        for z in Z:
            self.add(z)


@njit(nogil=True)
def embed_one(R_inv, phi) -> None:
    """φ̃(x) = R⁻¹ k_Z(x) in place of k_Z(x) in ``phi``, as compiled code: the per-round twin of
    :meth:`NystromMap.transform`."""
    if len(phi):
        lower_times(R_inv, phi)
