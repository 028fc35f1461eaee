"""The real datasets of the catalog (:mod:`okl.data.catalog`) as streams, one registry key each.

Construction reads only the catalog: the rows, d and task of the selection come from its entry, so
planning a run (its id, a sweep's expansion, ``--cfg job``, ``okl-reproduce --list``) never touches
a file. :meth:`FileDataset.open`, which the runner calls before it writes anything, obtains the files
(data directory, mirror, else download unless ``download=false``), parses them into the cache on first
use (:mod:`okl.data.cache`, which refuses a file without the catalog's rows), checks the chosen labels,
and computes the scaling statistics; any problem is a one-line error before a run starts. ``chunks()``
then streams bounded chunks from the memory-mapped cache.

Keys (``null`` takes the value of the preset, then of the dataset's catalog entry):

- ``preset``: the papers' preprocessing (:mod:`okl.data.preprocess`); the catalog gives each
  dataset its paper's preset.
- ``parts``: files to concatenate, in order (``[train, test]``); ``skip``: rows dropped at the start
  of that concatenation; ``length``: rows kept after them. Scaling statistics cover these rows.
- ``shuffle``: a seeded random permutation of those rows (``rng(seed, "dataset/<name>/shuffle")``)
  or file order. The run's ``n`` then takes a prefix of the stream.
- ``x_scale``, ``y_scale``: see :mod:`okl.data.preprocess`.
- ``positive``: raw labels mapped to +1, every other label to −1 (binary sets; on MNIST it makes a
  one-vs-rest binary task, ``[]`` keeps the 10 classes); ``target``: the target column, where the
  dataset offers a choice (parkinson, airquality).
- ``test_parts``: parts held out as a test set (``[test]``), scored at the run's checkpoints
  (:meth:`FileDataset.test_set`), scaled with the stream's statistics.
- ``seed``: the shuffle's seed. ``download``, ``mirror``, ``data_dir``: where files come from; they do
  not change the rounds, so they are not part of the run's identity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from okl.data import cache
from okl.data.catalog import SPECS, Spec
from okl.data.preprocess import PRESETS, X_SCALES, Y_SCALES, Stats, scale
from okl.data.sources import data_dir, mirror_root
from okl.datasets.base import Dataset, register
from okl.errors import ConfigError
from okl.registry import LOCAL
from okl.seeding import rng
from okl.validation import integer_at_least, one_of, seed

VALUES = 1 << 22  # values per streamed chunk (32 MiB of float64)
STATS: dict[tuple, Stats] = {}  # the selected rows' statistics, by the state of their files (Real._stats)


@dataclass(frozen=True)
class FileParams:
    """See the module docstring."""

    preset: str | None = None
    parts: list[str] | None = None
    skip: int | None = None
    length: int | None = None
    shuffle: bool | None = None
    x_scale: str | None = None
    y_scale: str | None = None
    positive: list[float] | None = None
    target: str | None = None
    test_parts: list[str] | None = None
    seed: int = 0
    download: bool = field(default=True, metadata=LOCAL)
    mirror: str | None = field(default=None, metadata=LOCAL)
    data_dir: str | None = field(default=None, metadata=LOCAL)

    def __post_init__(self) -> None:
        seed("seed", self.seed)
        for key, options in (("preset", PRESETS), ("x_scale", X_SCALES), ("y_scale", Y_SCALES)):
            if getattr(self, key) is not None:
                one_of(key, getattr(self, key), options)
        if self.skip is not None:
            integer_at_least("skip", self.skip, 0)
        if self.length is not None:
            integer_at_least("length", self.length, 1)
        if self.shuffle is not None and not isinstance(self.shuffle, bool):
            raise ConfigError(f"shuffle must be true or false (got {self.shuffle!r})")
        for key in ("parts", "test_parts"):
            value = getattr(self, key)
            if value is not None and (not value or not all(isinstance(p, str) for p in value)):
                raise ConfigError(f"{key} must be a non-empty list of part names (got {value!r})")


def _listed(parts) -> str:
    return "[" + ",".join(parts) + "]"


class FileDataset(Dataset):
    """A catalog dataset; subclasses only set ``spec`` (one per catalog entry, registered below)."""

    Params = FileParams
    spec: ClassVar[Spec]

    def __init__(self, **params) -> None:
        super().__init__(**params)
        spec, p = self.spec, self.params
        self.params = p = dataclasses.replace(p, **self._resolve(spec, p))
        streamed = [part for part in p.test_parts or () if part in p.parts]
        if streamed:  # a held-out score on rows the learner trained on
            raise ConfigError(
                f"dataset.test_parts={_listed(p.test_parts)} is also streamed (dataset.parts={_listed(p.parts)}): hold "
                f"out a part the stream does not play, or stream the others (dataset.parts="
                f"{_listed([q for q in p.parts if q not in streamed] or ['...'])})"
            )
        total = sum(spec.part(part).rows for part in p.parts)
        if p.skip >= total:
            raise ConfigError(f"dataset.skip={p.skip} leaves no rows of the {total:,} of {spec.name} {p.parts}")
        self._n = total - p.skip if p.length is None else min(p.length, total - p.skip)
        self._parts: list[cache.CachedPart] | None = None

    def open(self, scaling: tuple[Stats | None, Stats | None] | None = None) -> None:
        """Obtain, parse and check the files (once); compute the scaling statistics of the selected rows, or take
        ``scaling`` (x's and y's statistics: a held-out set is scaled as its stream)."""
        if self._parts is not None:
            return
        p = self.params
        data, mirror = data_dir(p.data_dir), mirror_root(p.mirror)
        parts = [self._load(part, data, mirror) for part in p.parts]
        self._parts, self._offsets = parts, np.cumsum([0] + [part.rows for part in parts])
        try:
            self._check_labels()
            self._x_stats = self._y_stats = None
            if scaling is not None:
                self._x_stats, self._y_stats = scaling
            elif p.x_scale not in ("none", "pixels") or p.y_scale != "none":  # one pass over the rows for both
                both = self._stats()
                self._x_stats, self._y_stats = both.columns(slice(0, self.d)), both.columns(slice(self.d, None))
        except BaseException:
            self._parts = None  # opened only once every check passed
            raise

    def _stats(self) -> Stats:
        """The statistics of the selected rows (x's columns, then y), computed once per process for each state of
        the parts' files and selection: a process that plays many runs of a dataset (okl-reproduce's workers,
        its --smoke) passed over all its rows again for each run (casp's 45,730 or mnist's 60,000, even for 200
        rounds)."""
        key = (tuple(part.state for part in self._parts), self.params.skip, self._n, VALUES)
        if key not in STATS:
            stats = Stats.of(np.column_stack((X, y)) for X, y in self._in_order())
            for column in (stats.min, stats.max, stats.mean, stats.std):
                column.flags.writeable = False  # shared by every run of the process
            STATS[key] = stats
        return STATS[key]

    def _load(self, part: str, data, mirror) -> cache.CachedPart:
        """One selected part, mapped from its cache (obtained and parsed first if need be)."""
        return cache.load(self.spec, part, self.params.target, data, mirror, self.params.download)

    @property
    def parts(self) -> list[cache.CachedPart]:
        """The selected parts, mapped from their caches (:meth:`open` on first use)."""
        self.open()
        return self._parts

    @staticmethod
    def _resolve(spec: Spec, p: FileParams) -> dict:
        """Explicit keys, else the preset's (with the dataset's departures), else the catalog's."""
        preset = p.preset or spec.preset
        values = {
            "parts": list(spec.default_parts),
            "skip": 0,
            "length": None,
            "positive": list(spec.positive),
            "target": next((getattr(s.format, "target", None) for s in spec.part(spec.default_parts[0]).sources), None),
            **PRESETS[preset],
            **spec.presets.get(preset, {}),
        }
        explicit = {k: getattr(p, k) for k in values if getattr(p, k) is not None}
        names = [part.name for part in spec.parts]
        for part in explicit.get("parts", []):
            if part not in names:
                raise ConfigError(f"dataset.parts: {spec.name} has parts {', '.join(names)} (got {part!r})")
        if "target" in explicit and explicit["target"] not in spec.targets:
            choice = f"one of {', '.join(spec.targets)}" if spec.targets else "not chosen (it has one target)"
            raise ConfigError(f"dataset.target: the target of {spec.name} is {choice} (got {explicit['target']!r})")
        if spec.task != "regression":
            if explicit.get("y_scale", "none") != "none":
                raise ConfigError(f"dataset.y_scale applies to regression targets; {spec.name} has labels")
            values["y_scale"] = "none"
        elif explicit.get("positive"):
            raise ConfigError(f"dataset.positive applies to labels; {spec.name} is a regression dataset")
        values.update(explicit)
        values["positive"] = [float(v) for v in values["positive"]]
        values["target"] = values["target"] if spec.targets else None
        return {"preset": preset, **values}

    @property
    def task(self) -> str:
        if self.spec.task == "multiclass" and self.params.positive:
            return "binary"
        return self.spec.task

    @property
    def d(self) -> int:
        return self.spec.d

    @property
    def n(self) -> int:
        return self._n

    @property
    def provenance(self) -> list[dict]:
        return [{"part": part.meta["part"], **f} for part in self.parts for f in part.meta["files"]]

    def test_set(self) -> tuple[np.ndarray, np.ndarray] | None:
        p = self.params
        if not p.test_parts:
            return None
        if not hasattr(self, "_test"):
            held = dataclasses.replace(p, parts=p.test_parts, test_parts=None, skip=0, length=None, shuffle=False)
            other = type(self)(**{f.name: getattr(held, f.name) for f in dataclasses.fields(held)})
            self.open()
            other.open(scaling=(self._x_stats, self._y_stats))  # the stream's scaling
            X, y = zip(*other.chunks(), strict=True)
            self._test = np.concatenate(X), np.concatenate(y)
        return self._test

    def _rows(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raw rows at stream positions ``idx`` (indices into the concatenated parts), as float64."""
        part_of = np.searchsorted(self._offsets, idx, side="right") - 1
        X, y = np.empty((len(idx), self.d)), np.empty(len(idx))
        for k, part in enumerate(self.parts):
            mine = part_of == k
            if mine.all():
                X[:], y[:] = part.x[idx - self._offsets[k]], part.y[idx - self._offsets[k]]
            elif mine.any():
                local = idx[mine] - self._offsets[k]
                X[mine], y[mine] = part.x[local], part.y[local]
            part.release()
        return X, y

    def _in_order(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        step = max(1024, VALUES // self.d)
        first = self.params.skip
        for start in range(first, first + self._n, step):
            yield self._rows(np.arange(start, min(start + step, first + self._n)))

    def _check_labels(self) -> None:
        if self.task != "binary":
            return
        first = self.params.skip
        labels = np.unique(np.concatenate([part.y for part in self.parts])[first : first + self._n])
        missing = sorted(set(self.params.positive) - set(labels.tolist()))
        if missing or len(labels) < 2:
            raise ConfigError(
                f"dataset.positive={self.params.positive}: {self.spec.name}'s labels are "
                f"{', '.join(f'{v:g}' for v in labels)}; choose labels that occur (the others become -1)"
            )

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        self.open()
        p = self.params
        if p.shuffle:
            order = rng(p.seed, f"dataset/{self.name}/shuffle").permutation(self._n) + p.skip
            step = max(1024, VALUES // self.d)
            pieces = (self._rows(order[s : s + step]) for s in range(0, self._n, step))
        else:
            pieces = self._in_order()
        positive = np.asarray(p.positive)
        for X, y in pieces:
            X = scale(X, p.x_scale, self._x_stats)
            if self.task == "binary":
                y = np.where(np.isin(y, positive), 1.0, -1.0)
            else:
                y = scale(y[:, None], p.y_scale, self._y_stats)[:, 0]
            yield np.ascontiguousarray(X), y


for _spec in SPECS.values():
    register(_spec.name)(
        type(_spec.name.title().replace("_", ""), (FileDataset,), {"spec": _spec, "__doc__": _spec.title})
    )
