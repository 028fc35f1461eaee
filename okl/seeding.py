"""Independent random streams per component, derived from one integer seed.

Two components given the same seed (say the synthetic stream and FOGD's frequencies) must not draw
the same numbers, so each one names its stream: ``rng(seed, "fogd")``. The stream is
``SeedSequence(seed, spawn_key=(crc32(name), *more))``: stable across runs, platforms and versions.
"""

from __future__ import annotations

import zlib

import numpy as np


def rng(seed: int, name: str, *more: int) -> np.random.Generator:
    key = (zlib.crc32(name.encode()), *more)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))
