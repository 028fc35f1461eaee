"""The lower Cholesky factor of K + γI for the inputs of a whole (short) stream."""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from okl import system
from okl.errors import NumericalError, ResourceError
from okl.kernels import Kernel


def fits(n: int) -> bool:
    """Whether an n×n float64 matrix fits the budget of a state (:func:`okl.system.state_budget`)."""
    return 8 * n * n < system.state_budget()


def kernel_cholesky(X: np.ndarray, kernel: Kernel, gamma: float, what: str) -> np.ndarray:
    """L with LLᵀ = K + γI (K the kernel matrix of the rows of X), Fortran-ordered, zero above the
    diagonal; built in place (8n² bytes). ``what`` names the caller in the errors."""
    n = len(X)
    if not fits(n):
        raise ResourceError(
            f"{what} needs the {n:,}×{n:,} kernel matrix ({8 * n * n / system.GIB:,.1f} GiB), more than half the "
            f"{system.available_memory() / system.GIB:,.1f} GiB available (the other half is left for its work)"
        )
    A = kernel(X, X).T  # symmetric: its transpose is the Fortran-ordered view LAPACK works on in place
    A.flat[:: n + 1] += gamma
    L, info = lapack.dpotrf(A, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise NumericalError(f"{what}: K + γI is not positive definite at γ={gamma:g} (LAPACK info={info})")
    return L
