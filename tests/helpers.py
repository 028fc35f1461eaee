"""Helpers shared by the tests: small streams and the two ways of playing rounds."""

from __future__ import annotations

import numpy as np


def stream(n: int, d: int, seed: int = 0, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """A small smooth regression stream with inputs in [0, scale]^d."""
    g = np.random.default_rng(seed)
    X = scale * g.random((n, d))
    y = np.sin(3 * X).sum(axis=1) / d + 0.1 * g.standard_normal(n)
    return X, y


def play_loop(learner, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The per-round protocol: predict x_t, then reveal y_t."""
    out = np.empty(len(y))
    for t in range(len(y)):
        out[t] = learner.predict_one(X[t])
        learner.learn_one(X[t], y[t])
    return out


def play_blocks(learner, X: np.ndarray, y: np.ndarray, sizes) -> np.ndarray:
    """Blocks of the given sizes (cycled) until the stream ends."""
    out, start, i = [], 0, 0
    while start < len(y):
        stop = min(start + sizes[i % len(sizes)], len(y))
        out.append(learner.predict_learn_block(X[start:stop], y[start:stop]))
        start, i = stop, i + 1
    return np.concatenate(out)


def relative_gap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))
