"""The GIL-free BLAS/LAPACK calls give the numbers of scipy's wrappers (the same routines), bit for bit."""

import numpy as np
import pytest
from scipy.linalg import blas, lapack

from okl.linalg import nogil_blas as nb

R = np.random.default_rng(0)


def fortran(*shape):
    return np.asfortranarray(R.standard_normal(shape))


def lower(n):
    return np.asfortranarray(np.tril(R.standard_normal((n, n))) + 3 * np.eye(n))


def test_dgemm_dsymm_dgemv_equal_scipy():
    A, B = fortran(9, 5), fortran(9, 4)
    C = np.zeros((5, 4), order="F")
    nb.dgemm(nb.TRANS, nb.NO_TRANS, 1.0, A, B, 0.0, C)
    assert np.array_equal(C, blas.dgemm(1.0, A, B, trans_a=1))
    P, X, C = fortran(6, 6), fortran(6, 3), fortran(6, 3)
    expected = blas.dsymm(0.5, P, X, beta=2.0, c=C, side=0, lower=0)
    nb.dsymm(nb.LEFT, nb.UPPER, 0.5, P, X, 2.0, C)
    assert np.array_equal(C, expected)
    x, y = R.standard_normal(9), R.standard_normal(5)
    expected = blas.dgemv(1.0, A, x, beta=-1.0, y=y, trans=1)
    nb.dgemv(nb.TRANS, 1.0, A, x, -1.0, y)
    assert np.array_equal(y, expected)


def test_dsyrk_updates_the_upper_triangle_only():
    W, P = fortran(6, 3), fortran(6, 6)
    expected = blas.dsyrk(-1.0, W, beta=1.0, c=P, lower=0)
    below = np.tril(P, -1).copy()
    nb.dsyrk(nb.UPPER, nb.NO_TRANS, -1.0, W, 1.0, P)
    assert np.array_equal(np.triu(P), np.triu(expected))
    assert np.array_equal(np.tril(P, -1), below)


@pytest.mark.parametrize(("side", "transa"), [(nb.LEFT, nb.NO_TRANS), (nb.RIGHT, nb.TRANS)])
def test_dtrmm_equals_scipy_on_views_with_a_larger_leading_dimension(side, transa):
    L = lower(5)
    B = np.ascontiguousarray(R.standard_normal((4, 9)))[:, :5].T if side == nb.LEFT else fortran(4, 5)
    expected = blas.dtrmm(1.0, L, np.asfortranarray(B), side=side == nb.RIGHT, lower=1, trans_a=transa == nb.TRANS)
    nb.dtrmm(side, nb.LOWER, transa, 1.0, L, B)  # B: a C-ordered block's transpose (leading dimension 9)
    assert np.array_equal(B, expected)


def test_dpotrf_and_dtrtri_equal_lapack_and_report_failure():
    W = fortran(7, 4)
    S = np.asfortranarray(W @ W.T + np.eye(7))
    expected = lapack.dpotrf(S, lower=1, clean=1)[0]
    assert nb.dpotrf(nb.LOWER, S) == 0
    assert np.array_equal(np.tril(S), expected)
    T = np.asfortranarray(np.tril(S))
    assert nb.dtrtri(nb.LOWER, T) == 0
    assert np.array_equal(T, lapack.dtrtri(np.tril(S), lower=1)[0])
    assert nb.dpotrf(nb.LOWER, np.asfortranarray(-np.eye(3))) == 1  # not positive definite at its first pivot


def test_row_major_matrices_and_other_dtypes_are_refused():
    A = np.ascontiguousarray(R.standard_normal((3, 4)))
    with pytest.raises(ValueError, match="column-major"):
        nb.dgemm(nb.NO_TRANS, nb.NO_TRANS, 1.0, A, fortran(4, 2), 0.0, np.zeros((3, 2), order="F"))
    with pytest.raises(TypeError):
        nb.dtrmm(nb.LEFT, nb.LOWER, nb.NO_TRANS, 1.0, np.eye(3, dtype=np.float32), np.eye(3, dtype=np.float32))


def test_empty_operands_are_a_no_op():
    B = np.zeros((0, 4))
    nb.dtrmm(
        nb.LEFT, nb.LOWER, nb.NO_TRANS, 1.0, np.zeros((4, 4), order="F"), B.T
    )  # numpy gives empty arrays zero strides
    assert B.shape == (0, 4)


def test_dsymv_dsyr_equal_scipy():
    P, x, y = fortran(6, 6), R.standard_normal(6), R.standard_normal(6)
    expected = blas.dsymv(0.5, P, x, beta=2.0, y=y, lower=0)
    nb.dsymv(nb.UPPER, 0.5, P, x, 2.0, y)
    assert np.array_equal(y, expected)
    expected = blas.dsyr(-0.25, x, a=P, lower=0)
    below = np.tril(P, -1).copy()
    nb.dsyr(nb.UPPER, -0.25, x, P)
    assert np.array_equal(np.triu(P), np.triu(expected)) and np.array_equal(np.tril(P, -1), below)
