"""Online ridge regression and the AWV forecaster on explicit features, per round and in blocks.

Notation (pkawv_jezequel2019, Appendix H.1, Algorithm 1): features φ_t ∈ R^r, regularisation λ > 0,

    A_t = λ I + Σ_{s<=t} φ_s φ_sᵀ,      b_t = Σ_{s<=t} y_s φ_s.

- Online ridge (KRR on the features) predicts  ŷ_t = φ_tᵀ A_{t-1}⁻¹ b_{t-1}.
- AWV (eq. (4) restricted to the span, i.e. PKAWV) predicts  ŷ_t = φ_tᵀ A_t⁻¹ b_{t-1}.
  By Sherman–Morrison this is the ridge prediction divided by 1 + h_t with h_t = φ_tᵀ A_{t-1}⁻¹ φ_t.

The state is the inverse P = A⁻¹ (upper triangle, Fortran order) and b.

Per round (``predict`` / ``update``, compiled in :func:`predict_one` / :func:`update_one`) is Algorithm 1:
v = P φ, h = φᵀv, then P ← P - v vᵀ / (1 + h).

A block of B rounds with features Φ (B×r) and labels y is played exactly with BLAS-3 work. With
Q = P Φᵀ and S = I + Φ P Φᵀ = C Cᵀ (Cholesky, C lower with diagonal c), the unit-lower LDLᵀ factor
of S is L = C diag(c)⁻¹ and D = diag(c)². The one-step-ahead ridge predictions inside the block are
the innovations of that factorisation (:mod:`okl.linalg.innovations`):

    y - ŷ^ridge = L⁻¹ (y - Φ P b) = c ∘ C⁻¹ (y - Qᵀ b),      ŷ^AWV = ŷ^ridge / D,

because D_tt = 1 + h_t with h_t computed from every earlier round, those of the block included.
The state then moves by P ← P - W Wᵀ with W = Q C⁻ᵀ, b ← b + Φᵀ y. Predictions equal the per-round
recursion to round-off (the tests bound the gap).

Accuracy over long runs: the downdate P - W Wᵀ is applied to a symmetric positive-definite matrix
whose smallest eigenvalue stays >= 1/(λ + Σ||φ||²); measured on 10⁶ rounds of 190 Taylor features
(σ = 4, κ(A) ≈ 1e5) the predictions agree with a from-scratch solve of the normal equations to
5e-12 relative, so no periodic refactorisation is done (a test checks the 1e-8 bound on a long
stream).

Cost per round: 3r² + O(rB + B²) flops, mostly gemm/syrk (the triangular LAPACK kernels of
OpenBLAS are 4-5× slower per flop than gemm at these sizes, hence the explicit inverse); long
blocks are split evenly into sub-blocks of at most ``SUB_BLOCK`` rows. A sub-block is one compiled
call whose BLAS and LAPACK work runs without the GIL (:mod:`okl.linalg.nogil_blas`), so a learner's
second thread (the Nyström learners' embedding) runs meanwhile; the numbers are those of scipy's
wrappers, bit for bit.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas

from okl.jit import njit
from okl.linalg import nogil_blas as nb
from okl.linalg.innovations import forward
from okl.warmup import warm

# Rows per BLAS-3 step. The B×B work costs O(rB + B²) per round, so long blocks lose: measured for
# r = 10 .. 400, sub-blocks of 16-64 rows ran fastest (r = 190: 4.9 µs/round at 48 rows, 5.3 at 64, 14 at 256).
SUB_BLOCK = 48


class OnlineRidge:
    """State (A⁻¹, b) of online ridge / AWV on r features.

    Parameters
    ----------
    dim:
        Number of features r.
    lam:
        Regularisation λ > 0.
    awv:
        Predict with the AWV forecaster (True) or with online ridge (False).
    """

    def __init__(self, dim: int, lam: float, awv: bool) -> None:
        self.dim = dim
        self.lam = lam
        self.awv = awv
        self.P = np.zeros((dim, dim), order="F")  # np.eye(dim) / lam, then its Fortran copy: three r×r arrays, two
        np.fill_diagonal(self.P, 1.0 / lam)  # alive at once (6.5 GB and 18 s for the 3.3 GB state of d = 200, M = 2)
        self.b = np.zeros(dim)
        for P, Phi_t in (
            (np.eye(2, order="F"), np.zeros((3, 2)).T),
            (np.eye(2, order="F"), np.zeros((2, 1))),
            (np.eye(1), np.zeros((1, 1))),
        ):  # fmt: skip  (a run's layouts: its first rounds' are C)
            warm(_block, P, np.zeros(len(P)), Phi_t, np.zeros(Phi_t.shape[1]), awv, np.empty(Phi_t.shape[1]))
        phi, v = np.zeros(2), np.zeros(2)  # and the per-round pair on the run's Fortran-ordered P
        warm(predict_one, np.eye(2, order="F"), np.zeros(2), phi, awv, v)
        warm(update_one, np.eye(2, order="F"), np.zeros(2), phi, v, 0.0, 0.0)

    @staticmethod
    def state_bytes(dim: int) -> int:
        """Memory of the state, dominated by the r×r inverse (float64)."""
        return 8 * dim * (dim + 1)

    # -- per round (Algorithm 1) -------------------------------------------------------------------
    def predict(self, phi: np.ndarray) -> float:
        return predict_one(self.P, self.b, phi, self.awv, np.empty(self.dim))[0]

    def update(self, phi: np.ndarray, y: float) -> None:
        v = np.empty(self.dim)
        h = predict_one(self.P, self.b, phi, self.awv, v)[1]
        update_one(self.P, self.b, phi, v, h, y)

    # -- a new feature (dictionary growth) ---------------------------------------------------------
    def add_feature(self, cross: np.ndarray, square: float, target: float) -> None:
        """Append a feature whose past values ψ_s give A's new column: Σ φ_s ψ_s (``cross``),
        Σ ψ_s² (``square``) and b's new entry Σ y_s ψ_s (``target``).

        With a = ``cross`` and c = λ + ``square``, the inverse grows by its Schur complement
        s = c − aᵀPa (>= λ): P ← [[P + Pa(Pa)ᵀ/s, −Pa/s], [−(Pa)ᵀ/s, 1/s]] = [[P, 0], [0, 0]] + v vᵀ/s with
        v = [Pa; −1]. O(r²).
        """
        r = self.dim
        Pa = blas.dsymv(1.0, self.P, cross, lower=0) if r else np.zeros(0)
        s = self.lam + square - float(cross @ Pa)
        grown = np.zeros((r + 1, r + 1), order="F")
        grown[:r, :r] = self.P
        v = np.append(Pa, -1.0)  # [[P, 0], [0, 0]] + v vᵀ/s, upper triangle (one rank-one update)
        self.P = blas.dsyr(1.0 / s, v, a=grown, lower=0, overwrite_a=1)
        self.b = np.append(self.b, target)
        self.dim = r + 1

    def predict_many(self, Phi: np.ndarray) -> np.ndarray:
        """Predictions at each row of Phi (B×r) as the next round, without changing the state."""
        V = self._times_inverse(Phi)
        ridge = V @ self.b
        return ridge / (1.0 + np.einsum("ij,ij->i", Phi, V)) if self.awv else ridge

    def predict_with_features(
        self, Phi: np.ndarray, psi: np.ndarray, cross: np.ndarray, square: np.ndarray, target: np.ndarray
    ) -> np.ndarray:
        """For each row i, the prediction at features (Φ_i, ψ_i) after ``add_feature(cross[:, i],
        square[i], target[i])``, without changing the state: with P' = [[P, 0], [0, 0]] + v vᵀ/s,
        x' = (φ, ψ), b' = (b, target) and e = vᵀx' = (Pa)ᵀφ − ψ, the ridge prediction is
        φᵀPb + e (vᵀb')/s and h = φᵀPφ + e²/s. O(r²) per row."""
        Pa, V = self._times_inverse(cross.T).T, self._times_inverse(Phi)  # r×B, B×r
        s = self.lam + square - np.einsum("ij,ij->j", cross, Pa)
        e = np.einsum("ji,ij->i", Pa, Phi) - psi
        ridge = V @ self.b + e * (Pa.T @ self.b - target) / s
        return ridge / (1.0 + np.einsum("ij,ij->i", Phi, V) + e * e / s) if self.awv else ridge

    def _times_inverse(self, Phi: np.ndarray) -> np.ndarray:
        """Φ P for the rows of Φ (B×r), from the upper triangle the state keeps (dsymm: O(r²B), no copy of P)."""
        if not len(Phi) or not self.dim:
            return np.zeros((len(Phi), self.dim))
        if len(Phi) == 1:  # one round (river's predict_one): the matrix-vector product
            return blas.dsymv(1.0, self.P, Phi[0], lower=0)[None, :]
        return blas.dsymm(1.0, self.P, Phi, side=1, lower=0)

    # -- block of rounds (LDLᵀ innovations) ----------------------------------------------------------
    def predict_update_block(self, Phi: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Play the rounds of ``Phi`` (B×r) and ``y``; return the B predictions."""
        Phi, y = np.ascontiguousarray(Phi, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
        if len(y) <= SUB_BLOCK:
            return self._block(Phi, y)
        cuts = np.linspace(0, len(y), -(-len(y) // SUB_BLOCK) + 1).astype(int)  # even sub-blocks
        return np.concatenate([self._block(Phi[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)])

    def _block(self, Phi: np.ndarray, y: np.ndarray) -> np.ndarray:
        pred = np.empty(len(y))
        if _block(self.P, self.b, Phi.T, y, self.awv, pred):  # S >= I in exact arithmetic
            raise FloatingPointError("block Gram matrix is not positive definite (a corrupted state)")
        return pred


@njit(nogil=True)
def predict_one(P: np.ndarray, b: np.ndarray, phi: np.ndarray, awv: bool, v: np.ndarray) -> tuple[float, float]:
    """Algorithm 1's prediction at φ, compiled for code that plays one round: v ← Pφ (kept for
    :func:`update_one`), h = φᵀv; returns (ŷ, h), ŷ = vᵀb, divided by 1 + h for AWV."""
    if not len(phi):
        return 0.0, 0.0
    nb.dsymv(nb.UPPER, 1.0, P, phi, 0.0, v)
    h, ridge = 0.0, 0.0
    for i in range(len(phi)):
        h += phi[i] * v[i]
        ridge += v[i] * b[i]
    return (ridge / (1.0 + h) if awv else ridge), h


@njit(nogil=True)
def update_one(P: np.ndarray, b: np.ndarray, phi: np.ndarray, v: np.ndarray, h: float, y: float) -> None:
    """Algorithm 1's update in place from :func:`predict_one`'s v and h: P ← P − v vᵀ/(1 + h), b ← b + y φ."""
    if len(phi):
        nb.dsyr(nb.UPPER, -1.0 / (1.0 + h), v, P)
    for i in range(len(phi)):
        b[i] += y * phi[i]


@njit(nogil=True)
def _block(P: np.ndarray, b: np.ndarray, Phi_t: np.ndarray, y: np.ndarray, awv: bool, pred: np.ndarray) -> int:
    """One block (the module's docstring) in place on P and b, predictions into ``pred``; without the
    GIL, so a second thread runs meanwhile. Returns dpotrf's info (0: done)."""
    r, B = Phi_t.shape
    Q = np.empty((B, r)).T  # column-major r×B
    nb.dsymm(nb.LEFT, nb.UPPER, 1.0, P, Phi_t, 0.0, Q)  # P Φᵀ
    C = np.empty((B, B)).T
    nb.dgemm(nb.TRANS, nb.NO_TRANS, 1.0, Phi_t, Q, 0.0, C)  # Φ P Φᵀ
    for i in range(B):
        C[i, i] += 1.0
    info = nb.dpotrf(nb.LOWER, C)  # lower triangle read from here on
    if info:
        return info
    Qb = np.empty(B)
    nb.dgemv(nb.TRANS, 1.0, Q, b, 0.0, Qb)
    forward(C, Qb, y, pred, np.empty(B))
    if awv:
        for i in range(B):
            pred[i] /= C[i, i] * C[i, i]
    nb.dtrtri(nb.LOWER, C)
    nb.dtrmm(nb.RIGHT, nb.LOWER, nb.TRANS, 1.0, C, Q)  # W = Q C⁻ᵀ
    nb.dsyrk(nb.UPPER, nb.NO_TRANS, -1.0, Q, 1.0, P)  # P - W Wᵀ
    Phi_y = np.empty(r)
    nb.dgemv(nb.NO_TRANS, 1.0, Phi_t, y, 0.0, Phi_y)
    b += Phi_y
    return 0
