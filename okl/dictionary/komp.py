"""Destructive kernel orthogonal matching pursuit with pre-fitting (polk_koppel2019 Algorithm 1) on an
incrementally maintained kernel dictionary.

A function f̃ = Σ_m w̃_m κ(d̃_m, ·) (w̃_m ∈ R^C for C class functions; ||f||²_H = Σ_c ||f_c||²) is
approximated on a subset S of its dictionary D̃ by its orthogonal projection, whose coefficients
u = K_SS⁻¹ K_SD̃ w̃ are eq. (20). Algorithm 1 starts from S = D̃ (u = w̃, error 0) and removes, while
the error stays within ε, the element whose removal raises the error least:

    γ_j² = ||f̃ − P_{S∖j} f̃||² = ||f̃ − P_S f̃||² + ||u_j||² / (K_SS⁻¹)_jj,

(the Schur complement of K_SS at j), then downdates u ← u_{−j} − (K_SS⁻¹)_{−j,j} u_j / (K_SS⁻¹)_jj and
K_SS⁻¹ ← (K_SS⁻¹)_{−j,−j} − (K_SS⁻¹)_{−j,j}(K_SS⁻¹)_{j,−j} / (K_SS⁻¹)_jj: O(|S|²) per removal and O(|S|C)
to score all j, never a refactorisation. :class:`KernelDictionary` keeps K_DD and K_DD⁻¹ across rounds; the
inverse is recomputed from K_DD (Cholesky) once every M rank updates, O(M²) amortised, against drift. One
compiled call does a mini-batch's appends and removals in place, each kind as a block: the mini-batch's points
are appended by one block update of K_DD⁻¹ (:func:`_append_outside`), and the removals' downdates wait and are
applied together (:func:`_prune`), so that K_DD⁻¹ is read and written a few times per mini-batch, not three
times per appended point and once per removal (at M = 5,000, 200 MB each time): POLK on 10,000 MNIST digits
at Figure 7's setting (K = 0.08, order 5,868) went from 225 to 98 s of learner time (alone on the machine), with
the same predictions, model orders and held-out errors, and risks within 2·10⁻¹⁵. Kernel rows are compiled loops
with each sum in index order (:func:`okl.kernels.kernel_row`, which the runs' bits depend on), a mini-batch's by
chunks of the dictionary that stay in cache (:func:`okl.kernels.kernel_rows`): at d = 784 they are now the largest
part (32 rows of 3,000 points: 26 against 35 ms one by one).

Choice: a new point whose residual variance r = κ(x, x) − k_xᵀK_DD⁻¹k_x is below ``tol``·κ(x, x) is
numerically in the span of D: it is not appended. Once the mini-batch's other points are appended, the
held terms are projected onto the final D together (Σ_i w_i K_DD⁻¹k_i added to the coefficients), and
their error e = Σ_i w_i ρ_i (ρ_i = φ(x_i) − P_D φ(x_i)) is counted exactly, cross terms included:
||e||² = Σ_c Σ_ij w_ic w_jc (κ(x_i, x_j) − k_iᵀK_DD⁻¹k_j). Since e ⊥ span(D), the removals' errors add to
it by Pythagoras. While ||e|| would exceed ε, the held point whose own error ||w_i||² ||ρ_i||² is largest
is appended instead, and the rest are measured again against the larger span; a point whose residual
variance is below ``FLOOR`` (10⁻¹²) is never appended (its inverse would overflow), so an ε below that
resolution (ε² < 10⁻¹² ||w||²) is met only up to it. (Projecting each point
onto D as it came and adding ||w_i||² r_i, as before, missed the cross terms: two near-duplicate points
in one mini-batch reached ||f − f̃|| = 1.21 ε.) This
keeps K_DD well conditioned: measured on multidist with K = 10⁻⁴ (ε = 0.0015), ``tol`` = 10⁻¹⁰ let
cond(K_DD) reach 10¹¹–10¹⁶ and POLK diverge (risk up to 10⁸) on 3 seeds of 3; with 10⁻⁶ it stays
below 10⁸ and the runs match those with exact deletions. Tests recompute ||f − f̃||_H from kernel
matrices.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from okl.jit import njit
from okl.kernels import Kernel, kernel_row, kernel_rows, squared_distance
from okl.linalg.nogil_blas import NO_TRANS, UPPER, dgemm, dgemv, dsyrk

TOL = 1e-6  # residual variance, relative to κ(x, x), below which a point is in the span
FLOOR = 1e-12  # residual variance below which a point is never appended, whatever the budget
DEFER = 64  # removals whose downdates of K_DD⁻¹ wait to be applied together (:func:`_prune`)


class KernelDictionary:
    """Points D (M×d), K_DD and K_DD⁻¹ (Gaussian kernel), kept in step in arrays of growing capacity:
    appending borders them, removing element j moves the last element into slot j (the order of a
    dictionary does not change the function), both in place."""

    def __init__(self, d: int, kernel: Kernel) -> None:
        if kernel.kind != "gaussian":
            raise ValueError("KernelDictionary keeps Gaussian kernels")
        self.kernel = kernel
        self.size = 0
        self._X = np.zeros((16, d))
        self._K = np.zeros((16, 16))
        self._K_inv = np.zeros((16, 16))
        self._updates = 0  # rank updates since K_inv was last recomputed

    @property
    def X(self) -> np.ndarray:  # noqa: N802 (the paper's names)
        return self._X[: self.size]

    @property
    def K(self) -> np.ndarray:  # noqa: N802 (the paper's names)
        return self._K[: self.size, : self.size]

    @property
    def K_inv(self) -> np.ndarray:  # noqa: N802 (the paper's names)
        return self._K_inv[: self.size, : self.size]

    def reserve(self, extra: int) -> None:
        """Capacity for ``extra`` more points."""
        n = len(self._X)
        if self.size + extra <= n:
            return
        n = max(2 * n, self.size + extra)
        X, K, K_inv = np.zeros((n, self._X.shape[1])), np.zeros((n, n)), np.zeros((n, n))
        M = self.size
        X[:M], K[:M, :M], K_inv[:M, :M] = self.X, self.K, self.K_inv
        self._X, self._K, self._K_inv = X, K, K_inv

    def counted(self, updates: int) -> None:
        """``updates`` rank updates were made: recompute K_DD⁻¹ from K_DD once they exceed M."""
        self._updates += updates
        if self._updates > max(self.size, 8):
            self._K_inv[: self.size, : self.size] = cho_solve(cho_factor(self.K, lower=True), np.eye(self.size))
            self._updates = 0


def komp(dictionary: KernelDictionary, W: np.ndarray, X_new: np.ndarray, W_new: np.ndarray, eps: float) -> np.ndarray:
    """Algorithm 1 on f̃ = Σ_m W[m] κ(D_m, ·) + Σ_i W_new[i] κ(X_new[i], ·) (dictionary D̃ = [D, X_new]):
    leaves the pruned dictionary in ``dictionary`` and returns its coefficients (eq. (20)), with
    ||f − f̃||_H <= ε. ``W`` (M×C) and ``W_new`` (b×C) are the coefficients of f̃."""
    dictionary.reserve(len(X_new))
    M, C = dictionary.size, W.shape[1]
    U = np.zeros((M + len(X_new), C))
    U[:M] = W
    d = dictionary
    size, updates = _komp(
        d._X, d._K, d._K_inv, M, U, np.ascontiguousarray(X_new), np.ascontiguousarray(W_new), eps, d.kernel.sigma, TOL
    )
    dictionary.size = size
    dictionary.counted(updates)
    return U[:size].copy()


@njit
def _komp(X, K, K_inv, M, U, X_new, W_new, eps, sigma, tol):
    """The work of :func:`komp` in place on the capacity arrays; returns (dictionary size, rank updates)."""
    C = U.shape[1]
    k = np.empty(X.shape[0])
    a = np.empty(X.shape[0])
    start = M
    M, held = _append_outside(X, K, K_inv, U, M, X_new, W_new, sigma, tol)
    updates = M - start
    h = np.flatnonzero(held)
    A = np.empty((len(h), X.shape[0]))
    R = np.empty((len(h), len(h)))
    err2 = _held_error(X, K_inv, M, X_new, W_new, h, sigma, k, a, A, R)
    while err2 > eps * eps:  # over the budget: keep the held term that errs most as an element, again
        p = 0
        for q in range(len(h)):
            if _norm2(W_new[h[q]]) * R[q, q] > _norm2(W_new[h[p]]) * R[p, p]:
                p = q
        if R[p, p] <= FLOOR:  # below the dictionary's resolution: appending would break K⁻¹
            break
        _residual(X, K_inv, M, X_new[h[p]], sigma, k, a)
        M = _append(X, K, K_inv, U, M, X_new[h[p]], W_new[h[p]], R[p, p], k, a)
        updates += 1
        h = np.delete(h, p)
        err2 = _held_error(X, K_inv, M, X_new, W_new, h, sigma, k, a, A, R)
    for p in range(len(h)):  # project the held terms on the final span (A holds K_DD⁻¹ k_p)
        for m in range(M):
            for c in range(C):
                U[m, c] += A[p, m] * W_new[h[p], c]
    removed = M
    M = _prune(X, K, K_inv, U, M, max(err2, 0.0), eps)
    return M, updates + removed - M


@njit
def _append_outside(X, K, K_inv, U, M, X_new, W_new, sigma, tol):
    """Append, in order, the new points outside the span (residual variance against D and the points appended
    before them above ``tol``), with their coefficients; returns (M, the mask of the points held). Decided on
    the Gram of the points' residuals against D, S = K_BB − K_BD K_DD⁻¹ K_DB (b×b): point i's residual against
    the appended J is S_ii − S_iJ S_JJ⁻¹ S_Ji, from the Cholesky factor L of S_JJ grown in order. K_DD⁻¹ is then
    bordered once, by the block inverse with B = K_DD⁻¹ K_DJ L⁻ᵀ:

        [[K_DD⁻¹ + B Bᵀ, −B L⁻¹], [−L⁻ᵀ Bᵀ, S_JJ⁻¹]],

    one matrix product for K_DD⁻¹ K_DB and one rank-|J| update (dsyrk, then the triangle copied: symmetric to the
    bit), where appending the points one by one read K_DD⁻¹ three times per point: at M = 5,000, 200 MB each."""
    b = X_new.shape[0]
    KBD = np.empty((b, M))  # row i: κ(x_i, D)
    A = np.zeros((b, M))  # row i: (K_DD⁻¹ κ(D, x_i))ᵀ
    kernel_rows(True, sigma, X_new, X[:M], KBD)
    if M and b:  # K_DD⁻¹ keeps both triangles: its transpose, column-major, is itself
        dgemm(NO_TRANS, NO_TRANS, 1.0, K_inv[:M, :M].T, KBD.T, 0.0, A.T)
    KBB = np.empty((b, b))
    S = np.empty((b, b))
    kernel_rows(True, sigma, X_new, X_new, KBB)
    for i in range(b):
        for j in range(i + 1):
            s = KBB[i, j]
            for m in range(M):
                s -= KBD[i, m] * A[j, m]
            S[i, j] = s
            S[j, i] = s
    L = np.zeros((b, b))
    J = np.empty(b, dtype=np.int64)
    held = np.zeros(b, dtype=np.bool_)
    n = 0
    for i in range(b):
        r = S[i, i]
        for q in range(n):  # row n of L, were i appended: L_J⁻¹ S_Ji
            s = S[J[q], i]
            for p in range(q):
                s -= L[q, p] * L[n, p]
            L[n, q] = s / L[q, q]
            r -= L[n, q] * L[n, q]
        if r <= tol:
            held[i] = True
            continue
        L[n, n] = math.sqrt(max(r, 1e-300))
        J[n] = i
        n += 1
    if n == 0:
        return M, held
    L_inv = np.zeros((n, n))
    for q in range(n):
        L_inv[q, q] = 1.0 / L[q, q]
        for p in range(q):
            s = 0.0
            for r in range(p, q):
                s += L[q, r] * L_inv[r, p]
            L_inv[q, p] = -s * L_inv[q, q]
    Bt = np.zeros((n, M))  # Bᵀ: row q = Σ_{p <= q} (L⁻¹)_qp (K_DD⁻¹ κ(D, x_{J_p}))ᵀ
    for q in range(n):
        for p in range(q + 1):
            f = L_inv[q, p]
            for m in range(M):
                Bt[q, m] += f * A[J[p], m]
    if M:
        dsyrk(UPPER, NO_TRANS, 1.0, Bt.T, 1.0, K_inv[:M, :M].T)  # the lower triangle of the C-ordered array
        _mirror_lower(K_inv, M)
    for q in range(n):
        for m in range(M):  # −(B L⁻¹)_mq
            s = 0.0
            for p in range(q, n):
                s += Bt[p, m] * L_inv[p, q]
            K_inv[m, M + q] = -s
            K_inv[M + q, m] = -s
            K[m, M + q] = KBD[J[q], m]
            K[M + q, m] = KBD[J[q], m]
        for p in range(q + 1):  # (S_JJ⁻¹)_qp = (L⁻ᵀ L⁻¹)_qp
            s = 0.0
            for r in range(q, n):
                s += L_inv[r, q] * L_inv[r, p]
            K_inv[M + q, M + p] = s
            K_inv[M + p, M + q] = s
            K[M + q, M + p] = KBB[J[q], J[p]]
            K[M + p, M + q] = KBB[J[q], J[p]]
        X[M + q] = X_new[J[q]]
        for c in range(U.shape[1]):
            U[M + q, c] = W_new[J[q], c]
    return M + n, held


@njit
def _prune(X, K, K_inv, U, M, err2, eps):
    """Algorithm 1's removals from the dictionary of size M (error err² so far): while the least γ_j² =
    err² + ||u_j||² / (K_SS⁻¹)_jj is within ε², remove j: u ← u − (K_SS⁻¹)_{·j} u_j / (K_SS⁻¹)_jj, K_SS⁻¹ ←
    K_SS⁻¹ − c cᵀ/α (c its column j, α = c_j), and the last element moves into slot j. Returns the new size.

    The choice reads only the diagonal and u, which each removal updates in O(MC); the column of a later removal
    is its column in K_SS⁻¹ minus the earlier removals' corrections, O(M) each; the matrix takes up to ``DEFER``
    corrections at once (one rank update, dsyrk) and the moves after them. Removing one at a time read and wrote
    K_SS⁻¹ once per removal: at M = 5,000, 200 MB each."""
    C = U.shape[1]
    while M > 0:
        at = np.arange(M)  # slot → element, as the moves so far left them
        diag = np.empty(M)
        for m in range(M):
            diag[m] = K_inv[m, m]
        cols = np.empty((DEFER, M))  # c/√α of each removal, in element order
        moved = np.empty(DEFER, dtype=np.int64)  # the slot each removal emptied
        size, r, within = M, 0, True
        while size > 0 and r < DEFER:
            slot, best = -1, np.inf
            for s in range(size):
                o = at[s]
                t = 0.0
                for c in range(C):
                    t += U[o, c] * U[o, c]
                g = err2 + t / diag[o]
                if g < best:
                    slot, best = s, g
            if best > eps * eps:
                within = False
                break
            j = at[slot]
            alpha = diag[j]
            col = K_inv[j, :M].copy()  # column j (K_SS⁻¹ is symmetric), then the earlier corrections
            for i in range(r):
                f = cols[i, j]
                for m in range(M):
                    col[m] -= f * cols[i, m]
            for s in range(size):
                o = at[s]
                if o != j:
                    f = col[o] / alpha
                    for c in range(C):
                        U[o, c] -= f * U[j, c]
                    diag[o] -= f * col[o]
            root = math.sqrt(alpha)
            for m in range(M):
                cols[r, m] = col[m] / root
            moved[r] = slot
            size -= 1
            at[slot] = at[size]
            err2 = best
            r += 1
        if r:
            dsyrk(UPPER, NO_TRANS, -1.0, cols[:r].T, 1.0, K_inv[:M, :M].T)
            _mirror_lower(K_inv, M)
            for i in range(r):  # the moves, in order, on the updated arrays
                _move(X, K, K_inv, U, moved[i], M - 1 - i)
            M -= r
        if not within or r < DEFER:
            break
    return M


@njit
def _move(X, K, K_inv, U, j, last):
    """Element ``last`` into slot j (of a dictionary of size last + 1)."""
    for m in range(last + 1):
        K[j, m] = K[last, m]
        K_inv[j, m] = K_inv[last, m]
    for m in range(last + 1):
        K[m, j] = K[m, last]
        K_inv[m, j] = K_inv[m, last]
    K[j, j] = K[last, last]
    K_inv[j, j] = K_inv[last, last]
    X[j] = X[last]
    for c in range(U.shape[1]):
        U[j, c] = U[last, c]


@njit
def _mirror_lower(A, M):
    """A[i, j] ← A[j, i] for i < j < M (the lower triangle into the upper), by tiles that stay in cache."""
    tile = 64
    for jb in range(0, M, tile):
        for ib in range(0, jb + 1, tile):
            for j in range(jb, min(jb + tile, M)):
                for i in range(ib, min(ib + tile, j)):
                    A[i, j] = A[j, i]


@njit
def _held_error(X, K_inv, M, X_new, W_new, h, sigma, k, a, A, R):
    """||Σ_p w_p ρ_p||² for the held points h, ρ_p = φ(x_p) − P_D φ(x_p) (cross terms included); fills
    A[p] = K_DD⁻¹ k_p and R_pq = <ρ_p, ρ_q> = κ(x_p, x_q) − k_pᵀ K_DD⁻¹ k_q."""
    for p in range(len(h)):
        _residual(X, K_inv, M, X_new[h[p]], sigma, k, a)
        A[p, :M] = a[:M]
        for q in range(p + 1):
            s = math.exp(-squared_distance(X_new[h[p]], X_new[h[q]]) / (2.0 * sigma * sigma))
            for m in range(M):
                s -= k[m] * A[q, m]
            R[p, q] = s
            R[q, p] = s
    err2 = 0.0
    for c in range(W_new.shape[1]):
        for p in range(len(h)):
            for q in range(len(h)):
                err2 += W_new[h[p], c] * R[p, q] * W_new[h[q], c]
    return err2


@njit
def _norm2(w):
    s = 0.0
    for c in range(len(w)):
        s += w[c] * w[c]
    return s


@njit
def _residual(X, K_inv, M, x, sigma, k, a):
    """k = κ(D, x), a = K_DD⁻¹ k (in place; one BLAS matrix-vector product, 3× the compiled loop's speed at
    M = 2,000); returns the residual variance r = κ(x, x) − kᵀa."""
    kernel_row(True, sigma, x, X[:M], k[:M])
    if M:  # K_DD⁻¹ keeps both triangles: its transpose, a column-major view of the C-ordered array, is itself
        dgemv(NO_TRANS, 1.0, K_inv[:M, :M].T, k[:M], 0.0, a[:M])
    r = 1.0
    for m in range(M):
        r -= k[m] * a[m]
    return r


@njit
def _append(X, K, K_inv, U, M, x, w, r, k, a):
    """Border K_DD and K_DD⁻¹ with x (k, a and r from :func:`_residual`) and give it coefficients w. K_DD⁻¹ gains
    c cᵀ with c = a/√r (symmetric to the bit, and no division per entry)."""
    c = a[:M] / math.sqrt(r)
    for m in range(M):
        for n in range(M):
            K_inv[m, n] += c[m] * c[n]
        K_inv[m, M] = -a[m] / r
        K_inv[M, m] = -a[m] / r
        K[m, M] = k[m]
        K[M, m] = k[m]
    K_inv[M, M] = 1.0 / r
    K[M, M] = 1.0
    X[M] = x
    for c in range(U.shape[1]):
        U[M, c] = w[c]
    return M + 1
