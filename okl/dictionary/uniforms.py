"""A seeded stream of uniforms addressed by round: the coin of round t is the t-th draw, whatever
the block sizes, so block execution and the per-round loop flip the same coins, and a prediction can
read the coin of the coming round without consuming it."""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 14


class Uniforms:
    """U[0, 1) draws of ``generator``, read by absolute index (forward only)."""

    def __init__(self, generator: np.random.Generator) -> None:
        self.generator = generator
        self.start = 0  # index of buf[0]
        self.buf = np.empty(0)

    def take(self, index: int, count: int) -> np.ndarray:
        """Draws number ``index`` .. ``index + count - 1``; earlier indices may be forgotten."""
        if index < self.start:
            raise IndexError(f"uniform {index} was already discarded")
        drop = index - self.start
        if drop:
            self.buf = self.buf[drop:]
            self.start = index
        missing = count - len(self.buf)
        if missing > 0:
            self.buf = np.concatenate([self.buf, self.generator.random(max(missing, CHUNK))])
        return self.buf[:count]
