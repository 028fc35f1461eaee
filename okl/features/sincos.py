"""Vectorisable sin and cos in float64 (numba), for random Fourier features.

numpy's float64 sin/cos run at ~22 ns per value on this machine (scalar libm), which alone would cost
44 µs per round for FOGD with D = 1000. This kernel computes both at ~3 ns per pair with the
Cephes algorithm: reduction to [-π/4, π/4] by a three-part Cody-Waite split of π/4 (exact for
|a| < 2^29 · π/4 ≈ 4e8), then the Cephes minimax polynomials (error below 1 ulp on the reduced
interval); blocks with larger arguments fall back to numpy. The test compares with numpy over
|a| <= 1e5 to 4.5e-16 absolute.
"""

from __future__ import annotations

import numpy as np

from okl.jit import njit

_DP1 = 7.85398125648498535156e-1
_DP2 = 3.77489470793079817668e-8
_DP3 = 2.69515142907905952645e-15
_FOUR_OVER_PI = 1.2732395447351628
_LIMIT = 4.0e8


def sincos_rows(A: np.ndarray, scale: float, out: np.ndarray) -> None:
    """out[i, :D] = scale·sin(A[i]), out[i, D:] = scale·cos(A[i]) for A (n×D), out (n×2D)."""
    if A.size == 0 or (A.max() < _LIMIT and A.min() > -_LIMIT):
        _sincos_rows(A, scale, out)
    else:
        D = A.shape[1]
        np.multiply(np.sin(A), scale, out=out[:, :D])
        np.multiply(np.cos(A), scale, out=out[:, D:])


@njit(fastmath={"nnan", "ninf", "nsz", "contract", "arcp"}, error_model="numpy")
def _sincos_rows(A: np.ndarray, scale: float, out: np.ndarray) -> None:
    n, D = A.shape
    for i in range(n):  # row slices keep the inner loop vectorisable (2-D indexing is 4× slower)
        a, sin_out, cos_out = A[i], out[i, :D], out[i, D:]
        for j in range(D):
            x = a[j]
            q = np.int64(np.floor(x * _FOUR_OVER_PI))
            q += q & 1  # even multiple of π/4: x = q π/4 + z, |z| <= π/4
            qf = np.float64(q)
            z = ((x - qf * _DP1) - qf * _DP2) - qf * _DP3
            zz = z * z
            ps = z + z * zz * (
                (
                    (
                        ((1.58962301576546568060e-10 * zz - 2.50507477628578072866e-8) * zz + 2.75573136213857245213e-6)
                        * zz
                        - 1.98412698295895385996e-4
                    )
                    * zz
                    + 8.33333333332211858878e-3
                )
                * zz
                - 1.66666666666666307295e-1
            )
            pc = (
                1.0
                - 0.5 * zz
                + zz
                * zz
                * (
                    (
                        (
                            (
                                (-1.13585365213876817300e-11 * zz + 2.08757008419747316778e-9) * zz
                                - 2.75573141792967388112e-7
                            )
                            * zz
                            + 2.48015872888517045348e-5
                        )
                        * zz
                        - 1.38888888888730564116e-3
                    )
                    * zz
                    + 4.16666666666665929218e-2
                )
            )
            k = (q >> 1) & 3  # quadrant of x
            odd = (k & 1) == 1
            sv = pc if odd else ps
            cv = ps if odd else pc
            sin_out[j] = scale * sv * (1.0 - 2.0 * ((k >> 1) & 1))
            cos_out[j] = scale * cv * (1.0 - 2.0 * (((k + 1) >> 1) & 1))
