"""Preprocessing of the real datasets: the papers' presets and the scaling options they are made of.

Scaling statistics are computed over the rows the stream uses (the selected parts, after ``skip`` and
``length``, before shuffling), as the papers' code does over the loaded file. Options:

``x_scale`` (each feature):
    ``minmax01``: (x − min)/(max − min) ∈ [0, 1];  ``minmax11``: 2·minmax01 − 1 ∈ [−1, 1];
    ``standardize``: (x − mean)/std (population std);  ``pixels``: x/255 (grey levels);  ``none``.
    A constant feature maps to the lower end of the range (0, −1) or to 0 when standardised (as
    scikit-learn's scalers do), where the papers' formula would divide by zero.
``y_scale`` (regression targets only; labels of classification sets are mapped to ±1, or kept as
    class indices for multiclass): ``max``: y / max(y);  ``pkawv_csv``: c ↦ (2c − 1)/max(2c − 1);
    ``minmax01``, ``minmax11``, ``standardize``, ``none`` as above.

Presets (``dataset.preset``; a dataset may depart from them, see its catalog entry):

``pkawv``
    The PKAWV authors' released code (Remjez/kernel-online-learning), which produced Figures 2–4:
    features min-max scaled to [0, 1] over the whole loaded data; for the CSV datasets the first
    column c becomes y = 2c − 1 (SUSY's 0/1 labels become ±1; casp's RMSD becomes (2c − 1)/max, in
    about [−0.024, 1]), every y is then divided by max(y) (±1 labels unchanged); a seeded random
    permutation. SUSY: rows 2..1,000,001, since their loader took the headerless file's first row as
    a header and read 10⁶ rows.
``pkawv_paper``
    The same with x ∈ [−1, 1], as the paper's text states.
``pros_n_kons``
    PROS-N-KONS §5 (after Lu et al. 2016): x ∈ [0, 1], regression y ∈ [0, 1], labels ±1, shuffled.
``raker``
    Raker §4: x and y ∈ [0, 1], in time order (no shuffle). The authors' .mat files are already
    scaled, so their entries scale nothing and take the paper's prefix lengths (Twitter 6,000,
    energy 10,000).
``polk``
    POLK §5: pixels scaled to the unit interval (x/255), shuffled.
``none``
    Raw values in file order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from okl.errors import DataError

X_SCALES = ("none", "minmax01", "minmax11", "standardize", "pixels")
Y_SCALES = ("none", "max", "pkawv_csv", "minmax01", "minmax11", "standardize")

PRESETS: dict[str, dict[str, object]] = {
    "pkawv": {"x_scale": "minmax01", "y_scale": "max", "shuffle": True},
    "pkawv_paper": {"x_scale": "minmax11", "y_scale": "max", "shuffle": True},
    "pros_n_kons": {"x_scale": "minmax01", "y_scale": "minmax01", "shuffle": True},
    "raker": {"x_scale": "minmax01", "y_scale": "minmax01", "shuffle": False},
    "polk": {"x_scale": "pixels", "y_scale": "none", "shuffle": True},
    "none": {"x_scale": "none", "y_scale": "none", "shuffle": False},
}


@dataclass(frozen=True)
class Stats:
    """Per-column min, max, mean and population std of a matrix seen in row chunks."""

    min: np.ndarray
    max: np.ndarray
    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def of(cls, chunks: Iterable[np.ndarray]) -> Stats:
        lo = hi = shift = s1 = s2 = None
        n = 0
        for chunk in chunks:
            if shift is None:
                shift, lo, hi = chunk[0].copy(), chunk.min(axis=0), chunk.max(axis=0)
                s1, s2 = np.zeros_like(shift), np.zeros_like(shift)
            lo, hi = np.minimum(lo, chunk.min(axis=0)), np.maximum(hi, chunk.max(axis=0))
            centred = chunk - shift
            s1 += centred.sum(axis=0)
            s2 += (centred * centred).sum(axis=0)
            n += len(chunk)
        mean = s1 / n
        return cls(lo, hi, shift + mean, np.sqrt(np.maximum(s2 / n - mean * mean, 0.0)))

    def columns(self, which: slice) -> Stats:
        """The statistics of some of the columns."""
        return Stats(self.min[which], self.max[which], self.mean[which], self.std[which])


def scale(values: np.ndarray, how: str, stats: Stats) -> np.ndarray:
    """``values`` scaled by ``how`` (an ``x_scale`` or ``y_scale`` option) with the stream's ``stats``."""
    if how == "none":
        return values
    if how in ("minmax01", "minmax11"):
        span = stats.max - stats.min
        unit = (values - stats.min) / np.where(span > 0, span, 1.0)
        return unit if how == "minmax01" else 2.0 * unit - 1.0
    if how == "standardize":
        return (values - stats.mean) / np.where(stats.std > 0, stats.std, 1.0)
    if how == "pixels":
        return values / 255.0
    top = stats.max if how == "max" else 2.0 * stats.max - 1.0  # max(2c − 1) = 2 max(c) − 1 exactly
    if not np.all(top > 0):
        raise DataError(
            f"y_scale={how} divides by max = {float(np.min(top)):g}, which is not > 0: choose another y_scale"
        )
    return (values if how == "max" else 2.0 * values - 1.0) / top
