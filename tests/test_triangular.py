"""The product with a lower-triangular matrix of the one-round paths (KORS's L⁻¹k, the Nyström map's R⁻¹k)."""

import numpy as np
import pytest
from scipy.linalg import blas

from okl.linalg.triangular import lower_times


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("m", [*range(14), 170])
def test_lower_times_is_each_rows_sum_in_index_order_bit_for_bit_and_reads_no_entry_above_the_diagonal(m, order):
    """Each entry is Σ_{k<=i} L_ik x_k summed left to right, whatever the block of four columns an entry falls in and
    whatever vector code runs it (its bits cannot depend on how the code was compiled); the entries above the
    diagonal hold noise, which must not count; BLAS's dtrmv agrees to round-off."""
    rng = np.random.default_rng(m)
    L, x = np.array(rng.standard_normal((m, m)), order=order), rng.standard_normal(m)
    ours = x.copy()
    lower_times(L, ours)
    in_order = np.zeros(m)
    for i in range(m):
        for k in range(i + 1):
            in_order[i] += L[i, k] * x[k]
    assert np.array_equal(ours, in_order)
    if m:
        np.testing.assert_allclose(ours, blas.dtrmv(np.asfortranarray(np.tril(L)), x, lower=1), rtol=1e-12, atol=1e-12)
