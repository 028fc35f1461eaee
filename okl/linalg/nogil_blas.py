"""BLAS and LAPACK calls that release the GIL, for the learners that run two threads.

``scipy.linalg.blas`` and ``scipy.linalg.lapack`` hold the GIL for the whole call (measured: two
threads each running a 2000×2000 ``dgemm`` or ``dtrmm`` through them took as long as one after the
other), so a second Python thread only overlaps with them while neither computes. The functions here
call the same routines (the pointers ``scipy.linalg.cython_blas`` / ``cython_lapack`` export, hence
bit-identical results) from numba with ``nogil=True``; they can be called from Python or from other
compiled functions, and the compiled code is cached on disk (the routines are linked by symbol name,
registered with LLVM at import).

Matrices are column-major (Fortran order, or the transpose of a C-ordered array); a view with a
leading dimension larger than its row count is accepted. Each function works in place on its output,
like the BLAS routine, and names its arguments as the reference BLAS does; flags are the constants
below (character codes: a Python string costs 4 µs per argument to pass to compiled code). The
signatures are declared (float64 only), so the functions load at import and any other dtype is refused.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from numba import types
from numba.extending import get_cython_function_address
from numba.types import float64 as f8
from numba.types import int32 as i4
from numba.types import uint8 as u1
from numba.types import void

from okl.jit import njit

# The matrices and vectors a routine only reads are declared read-only: a writable array converts to
# that type, so arrays that numpy marks read-only (Parquet columns, memory-mapped caches, a caller's
# frozen input) are accepted as well; outputs must be writable.
IN2 = types.Array(f8, 2, "A", readonly=True)
IN1 = types.Array(f8, 1, "C", readonly=True)
OUT2 = types.Array(f8, 2, "A")
OUT1 = types.Array(f8, 1, "C")

LEFT, RIGHT, LOWER, UPPER, NO_TRANS, TRANS = (ord(c) for c in "LRLUNT")
_NON_UNIT = ord("N")


def _external(library: str, name: str, nargs: int) -> types.ExternalFunction:
    """The Fortran routine ``name`` (every argument a pointer) as a function numba can call."""
    symbol = f"okl_{name}"
    llvm.add_symbol(symbol, get_cython_function_address(f"scipy.linalg.cython_{library}", name))
    return types.ExternalFunction(symbol, types.void(*[types.voidptr] * nargs))


_dgemm = _external("blas", "dgemm", 13)
_dsymm = _external("blas", "dsymm", 12)
_dsyrk = _external("blas", "dsyrk", 10)
_dtrmm = _external("blas", "dtrmm", 11)
_dgemv = _external("blas", "dgemv", 11)
_dsymv = _external("blas", "dsymv", 10)
_dsyr = _external("blas", "dsyr", 7)
_dpotrf = _external("lapack", "dpotrf", 5)
_dtrtri = _external("lapack", "dtrtri", 6)


@njit
def _ld(A: np.ndarray) -> int:
    """Leading dimension of a column-major matrix view (raises for any other layout)."""
    rows, cols = A.shape
    if rows == 0 or cols == 0:  # nothing is read (numpy gives empty arrays zero strides)
        return max(1, rows)
    if A.strides[0] != 8 or (cols > 1 and A.strides[1] < 8 * rows):
        raise ValueError("nogil_blas needs column-major matrices")
    return max(1, A.strides[1] // 8 if cols > 1 else rows)


@njit
def _chars(*flags):
    return np.array(flags, dtype=np.uint8)


@njit(void(u1, u1, f8, IN2, IN2, f8, OUT2), nogil=True)
def dgemm(transa: int, transb: int, alpha: float, A: np.ndarray, B: np.ndarray, beta: float, C: np.ndarray):
    """C ← α op(A) op(B) + β C."""
    m, n = C.shape
    k = A.shape[0] if transa == TRANS else A.shape[1]
    flags = _chars(transa, transb)
    dims = np.array([m, n, k, _ld(A), _ld(B), _ld(C)], dtype=np.int32)
    scal = np.array([alpha, beta])
    _dgemm(
        flags[0:].ctypes, flags[1:].ctypes, dims[0:].ctypes, dims[1:].ctypes, dims[2:].ctypes, scal[0:].ctypes,
        A.ctypes, dims[3:].ctypes, B.ctypes, dims[4:].ctypes, scal[1:].ctypes, C.ctypes, dims[5:].ctypes,
    )  # fmt: skip


@njit(void(u1, u1, f8, IN2, IN2, f8, OUT2), nogil=True)
def dsymm(side: int, uplo: int, alpha: float, A: np.ndarray, B: np.ndarray, beta: float, C: np.ndarray):
    """C ← α A B + β C (side ``LEFT``) or α B A + β C (``RIGHT``), A symmetric, its ``uplo`` triangle read."""
    m, n = C.shape
    flags = _chars(side, uplo)
    dims = np.array([m, n, _ld(A), _ld(B), _ld(C)], dtype=np.int32)
    scal = np.array([alpha, beta])
    _dsymm(
        flags[0:].ctypes, flags[1:].ctypes, dims[0:].ctypes, dims[1:].ctypes, scal[0:].ctypes,
        A.ctypes, dims[2:].ctypes, B.ctypes, dims[3:].ctypes, scal[1:].ctypes, C.ctypes, dims[4:].ctypes,
    )  # fmt: skip


@njit(void(u1, u1, f8, IN2, f8, OUT2), nogil=True)
def dsyrk(uplo: int, trans: int, alpha: float, A: np.ndarray, beta: float, C: np.ndarray):
    """C ← α A Aᵀ + β C (``NO_TRANS``) or α Aᵀ A + β C (``TRANS``), on C's ``uplo`` triangle."""
    n = C.shape[0]
    k = A.shape[1] if trans == NO_TRANS else A.shape[0]
    flags = _chars(uplo, trans)
    dims = np.array([n, k, _ld(A), _ld(C)], dtype=np.int32)
    scal = np.array([alpha, beta])
    _dsyrk(
        flags[0:].ctypes, flags[1:].ctypes, dims[0:].ctypes, dims[1:].ctypes, scal[0:].ctypes,
        A.ctypes, dims[2:].ctypes, scal[1:].ctypes, C.ctypes, dims[3:].ctypes,
    )  # fmt: skip


@njit(void(u1, u1, u1, f8, IN2, OUT2), nogil=True)
def dtrmm(side: int, uplo: int, transa: int, alpha: float, A: np.ndarray, B: np.ndarray):
    """B ← α op(A) B (side ``LEFT``) or α B op(A) (``RIGHT``), A triangular (non-unit diagonal)."""
    m, n = B.shape
    flags = _chars(side, uplo, transa, _NON_UNIT)
    dims = np.array([m, n, _ld(A), _ld(B)], dtype=np.int32)
    scal = np.array([alpha])
    _dtrmm(
        flags[0:].ctypes, flags[1:].ctypes, flags[2:].ctypes, flags[3:].ctypes, dims[0:].ctypes, dims[1:].ctypes,
        scal.ctypes, A.ctypes, dims[2:].ctypes, B.ctypes, dims[3:].ctypes,
    )  # fmt: skip


@njit(void(u1, f8, IN2, IN1, f8, OUT1), nogil=True)
def dgemv(trans: int, alpha: float, A: np.ndarray, x: np.ndarray, beta: float, y: np.ndarray):
    """y ← α op(A) x + β y (x and y contiguous)."""
    m, n = A.shape
    flags = _chars(trans)
    dims = np.array([m, n, _ld(A), 1], dtype=np.int32)
    scal = np.array([alpha, beta])
    _dgemv(
        flags.ctypes, dims[0:].ctypes, dims[1:].ctypes, scal[0:].ctypes, A.ctypes, dims[2:].ctypes,
        x.ctypes, dims[3:].ctypes, scal[1:].ctypes, y.ctypes, dims[3:].ctypes,
    )  # fmt: skip


@njit(void(u1, f8, IN2, IN1, f8, OUT1), nogil=True)
def dsymv(uplo: int, alpha: float, A: np.ndarray, x: np.ndarray, beta: float, y: np.ndarray):
    """y ← α A x + β y, A symmetric, its ``uplo`` triangle read (x and y contiguous)."""
    flags = _chars(uplo)
    dims = np.array([A.shape[0], _ld(A), 1], dtype=np.int32)
    scal = np.array([alpha, beta])
    _dsymv(
        flags.ctypes, dims[0:].ctypes, scal[0:].ctypes, A.ctypes, dims[1:].ctypes, x.ctypes, dims[2:].ctypes,
        scal[1:].ctypes, y.ctypes, dims[2:].ctypes,
    )  # fmt: skip


@njit(void(u1, f8, IN1, OUT2), nogil=True)
def dsyr(uplo: int, alpha: float, x: np.ndarray, A: np.ndarray):
    """A ← α x xᵀ + A on A's ``uplo`` triangle (x contiguous)."""
    flags = _chars(uplo)
    dims = np.array([A.shape[0], _ld(A), 1], dtype=np.int32)
    scal = np.array([alpha])
    _dsyr(flags.ctypes, dims[0:].ctypes, scal.ctypes, x.ctypes, dims[2:].ctypes, A.ctypes, dims[1:].ctypes)


@njit(i4(u1, OUT2), nogil=True)
def dpotrf(uplo: int, A: np.ndarray) -> int:
    """Cholesky factor of A in its ``uplo`` triangle (the other is left as it was); LAPACK's info."""
    flags = _chars(uplo)
    dims = np.array([A.shape[0], _ld(A), 0], dtype=np.int32)
    _dpotrf(flags.ctypes, dims[0:].ctypes, A.ctypes, dims[1:].ctypes, dims[2:].ctypes)
    return dims[2]


@njit(i4(u1, OUT2), nogil=True)
def dtrtri(uplo: int, A: np.ndarray) -> int:
    """Inverse of the triangular A (non-unit diagonal) in place; LAPACK's info."""
    flags = _chars(uplo, _NON_UNIT)
    dims = np.array([A.shape[0], _ld(A), 0], dtype=np.int32)
    _dtrtri(flags[0:].ctypes, flags[1:].ctypes, dims[0:].ctypes, A.ctypes, dims[1:].ctypes, dims[2:].ctypes)
    return dims[2]
