"""The store: the one owner of the results root and of every file inside a run directory.

- :mod:`okl.store.run`: a run directory (:class:`RunDir`: manifest, parts, held-out scores, recorded
  inputs, snapshots, lock) and :func:`find` over a results root;
- :mod:`okl.store.manifest`: a run's ``run.json`` as a typed record (:class:`Manifest`; its regret entry,
  :class:`RegretEntry`);
- :mod:`okl.store.writer`: the round writer the runner appends to (:class:`RoundWriter`, ``sink.*`` keys);
- :mod:`okl.store.cache`: per-stream caches (comparators, effective dimension);
- :mod:`okl.store.files`: atomic writes.

Readers go through :mod:`okl.results` (many runs) or :class:`RunDir` (one run).
"""

from okl.store.cache import Cache, digest
from okl.store.manifest import Manifest, RegretEntry
from okl.store.run import FINISHED, PARTITION, RunDir, find, unreadable
from okl.store.writer import RoundWriter, SinkParams

__all__ = [
    "FINISHED",
    "PARTITION",
    "Cache",
    "Manifest",
    "RegretEntry",
    "RoundWriter",
    "RunDir",
    "SinkParams",
    "digest",
    "find",
    "unreadable",
]
