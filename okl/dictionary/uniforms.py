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
        """Draws number ``index`` .. ``index + count - 1``; earlier indices may be forgotten (they are dropped
        when the buffer is refilled, not at every call: a round played alone reads one draw, and slicing the
        buffer each time cost it as much as the rest of the read)."""
        if index < self.start:
            raise IndexError(f"uniform {index} was already discarded")
        i = index - self.start
        missing = i + count - len(self.buf)
        if missing > 0:
            self.buf = np.concatenate([self.buf[i:], self.generator.random(max(missing, CHUNK))])
            self.start, i = index, 0
        return self.buf[i : i + count]

    def at(self, index: int) -> float:
        """Draw number ``index`` alone (a round played alone reads its coin this way: a third of the cost of
        ``take(index, 1)[0]``, which builds a view)."""
        i = index - self.start
        if 0 <= i < len(self.buf):
            return self.buf[i]
        return self.take(index, 1)[0]
