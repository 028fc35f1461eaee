"""The effective dimension of a stream, d_eff(γ) = Tr(K_n (K_n + γI)⁻¹) = Σ_i λ_i(K_n) / (λ_i(K_n) + γ)
(sketched_kons_calandriello2017 §2 and Theorem 2: the size of a KORS dictionary is O(d_eff(γ) log² n);
pros_n_kons_calandriello2017 Theorem 1: the regret of the KONS family grows with it).

- **exact** for n <= ``EXACT_UP_TO`` rounds (when the n×n matrix fits in memory): with the Cholesky
  factor K_n + γI = L Lᵀ, d_eff = n − γ Tr((K_n + γI)⁻¹) = n − γ ||L⁻¹||²_F; O(n³) flops, 8n² bytes
  (n = 20,000: 3.2 GB and about two minutes on one core).
- **nystrom** beyond: the estimate on a dictionary Z (the learner's KORS dictionary),
  K̃_n = K_nZ K_ZZ⁻¹ K_Zn = Φ Φᵀ with Φ the Nyström embedding (:mod:`okl.dictionary.nystrom`), whose
  non-zero eigenvalues are those of G = ΦᵀΦ (m×m): d̃_eff = Σ_i λ_i(G) / (λ_i(G) + γ), one pass over the
  inputs, O(n m (d + m)). Since K̃_n ⪯ K_n, d̃_eff <= d_eff; for a KORS dictionary K̃_n ⪰ (1−ε)K_n − εγI
  with high probability (Theorem 2), so d̃_eff is close from below.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy.linalg import lapack

from okl.dictionary.nystrom import NystromMap
from okl.errors import NumericalError
from okl.kernels import Kernel
from okl.linalg.kernel_cholesky import fits, kernel_cholesky

EXACT_UP_TO = 20_000
ROWS = 8192


def exact(X: np.ndarray, kernel: Kernel, gamma: float) -> float:
    """d_eff(γ) of the inputs X (n×d) from the Cholesky factor of K + γI."""
    L, info = lapack.dtrtri(kernel_cholesky(X, kernel, gamma, "d_eff"), lower=1, overwrite_c=1)
    if info != 0:
        raise NumericalError(f"K + γI is singular at γ={gamma:g} (LAPACK info={info})")
    return float(len(X) - gamma * np.einsum("ij,ij->", L, L))


def nystrom(chunks: Iterable[np.ndarray], kernel: Kernel, gamma: float, Z: np.ndarray) -> tuple[float, int]:
    """(d̃_eff(γ), dictionary dimension) of the inputs in ``chunks`` on the span of the points Z."""
    nmap = NystromMap(Z.shape[1], kernel)
    nmap.extend(Z)
    G = np.zeros((nmap.dim, nmap.dim))
    for X in chunks:
        for a in range(0, len(X), ROWS):  # bounded temporaries: ROWS × m features at a time
            F = nmap.transform(X[a : a + ROWS])
            G += F.T @ F
    lam = np.clip(np.linalg.eigvalsh(G), 0.0, None)
    return float(np.sum(lam / (lam + gamma))), nmap.dim


def can_be_exact(n: int) -> bool:
    """Whether d_eff of n rounds is computed exactly (n <= EXACT_UP_TO and the matrix fits in memory)."""
    return n <= EXACT_UP_TO and fits(n)
