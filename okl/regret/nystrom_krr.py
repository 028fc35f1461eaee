"""``comparator=nystrom_krr``: kernel ridge in hindsight on m Nyström centres, for long streams.

    f = argmin_{f ∈ Span{φ(z_1..z_m)}} Σ_{s<=n} (f(x_s) − y_s)² + λ||f||²,

with centres drawn uniformly without replacement from the stream (``rng(seed, "nystrom_krr")``;
all rounds when m >= n, which gives ``krr`` exactly). In the orthonormal Nyström coordinates
φ̃ (:mod:`okl.dictionary.nystrom`), f = wᵀφ̃ with w = (ΦᵀΦ + λI)⁻¹Φᵀy and λ||f||² = λ||w||². Two
passes over the stream in row blocks: O(n m (d + m)) flops and O(m² + ROWS·m) memory, so that 10⁶
rounds with m = 1000 take a few minutes and a few hundred MB besides the stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from okl.dictionary.nystrom import NystromMap
from okl.params import KernelParams
from okl.regret.base import Comparator, register
from okl.seeding import rng
from okl.validation import integer_at_least, seed

ROWS = 8192


@dataclass(frozen=True)
class NystromKRRParams(KernelParams):
    """sigma, lam; m: number of centres; seed: their draw."""

    m: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        seed("seed", self.seed)
        super().__post_init__()
        integer_at_least("m", self.m, 1)


@register("nystrom_krr")
class NystromKRR(Comparator):
    """Kernel ridge on the span of m centres of the stream."""

    Params = NystromKRRParams

    def losses(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        p, n = self.params, len(y)
        centres = np.sort(rng(p.seed, "nystrom_krr").permutation(n)[: p.m])
        nmap = NystromMap(X.shape[1], self.kernel)
        nmap.extend(X[centres])
        G, b = np.zeros((nmap.dim, nmap.dim)), np.zeros(nmap.dim)
        for a in range(0, n, ROWS):
            F = nmap.transform(X[a : a + ROWS])
            G += F.T @ F
            b += F.T @ y[a : a + ROWS]
        G.flat[:: nmap.dim + 1] += p.lam
        w = cho_solve(cho_factor(G, lower=True), b)
        out = np.empty(n)
        for a in range(0, n, ROWS):
            out[a : a + ROWS] = (nmap.transform(X[a : a + ROWS]) @ w - y[a : a + ROWS]) ** 2
        return out, float(p.lam * w @ w)
