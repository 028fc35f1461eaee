"""UCI SUSY (Baldi, Sadowski, Whiteson 2014): 5,000,000 rows, binary, 18 features.

File format: ``SUSY.csv.gz``, no header, one row per event: the label (1.0 signal, 0.0 background)
then 18 floats. Labels are mapped to ±1 (the PKAWV experiments regress on ±1 labels and report the
0-1 error); features are streamed as they are in file order, ``length`` rows at most.

The file is read from the data directory or the mirror (:mod:`okl.datasets.files`); nothing is
downloaded here. Checksums, caching and the papers' preprocessing presets (min-max scaling, the
PKAWV loader's header quirk, shuffling) belong to the dataset layer that builds on this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from okl.datasets.base import Dataset, register
from okl.datasets.files import locate
from okl.errors import DataError
from okl.validation import integer_at_least

ROWS, FEATURES, CHUNK = 5_000_000, 18, 1 << 16


@dataclass(frozen=True)
class SusyParams:
    """length: rows to stream, in file order (at most the 5,000,000 of the file)."""

    length: int = ROWS

    def __post_init__(self) -> None:
        integer_at_least("length", self.length, 1)


@register("susy")
class Susy(Dataset):
    """The SUSY stream; fails at construction, before anything runs, if the file is absent."""

    Params = SusyParams

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self.path = locate("susy", ("SUSY.csv.gz", "SUSY.csv"))

    @property
    def task(self) -> str:
        return "binary"

    @property
    def d(self) -> int:
        return FEATURES

    @property
    def n(self) -> int:
        return min(self.params.length, ROWS)

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        reader = pd.read_csv(self.path, header=None, dtype=np.float64, chunksize=CHUNK, nrows=self.n)
        try:
            for frame in reader:
                values = frame.to_numpy()
                if values.shape[1] != FEATURES + 1:
                    raise DataError(f"{self.path}: expected {FEATURES + 1} columns, found {values.shape[1]}")
                yield np.ascontiguousarray(values[:, 1:]), np.where(values[:, 0] > 0.5, 1.0, -1.0)
        except (ValueError, pd.errors.ParserError) as exc:
            raise DataError(f"{self.path}: cannot parse: {str(exc).splitlines()[0]}") from None
