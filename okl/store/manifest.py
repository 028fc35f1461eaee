"""A run's manifest (``run.json``) as a typed record: what a run is, how far it got, what it cost.

The round writer (:mod:`okl.store.writer`) creates and updates it, post-run analyses add their entries
(:attr:`Manifest.analyses`), and every reader gets it from :meth:`okl.store.RunDir.manifest`, never as a
dict read by key. In the file the analyses' entries sit at the top level beside the fields (``"regret":
{...}``), as they always have, so that run.json files written before this record read back unchanged;
a field an older run.json lacks takes its default.

Example::

    >>> m = Manifest.from_json({"learner": "fogd", "status": "complete", "rounds": 10, "learner_s": 0.5,
    ...                         "regret": {"regret": 1.5}})
    >>> (m.rounds, m.analyses["regret"], m.to_json()["regret"])
    (10, {'regret': 1.5}, {'regret': 1.5})
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Manifest:
    """``run.json``. Partition keys: learner, dataset, seed, run (the run id). What the run is: task, loss
    (its name), planned_rounds, block, config (the resolved settings), identity (what determines the rounds),
    dataset_files and data_sha256 (the files read and their content), timeout_s. The attempt: argv, versions,
    git, blas_threads, started_at, finished_at, resumed (earlier attempts it continued), started_over (why
    a stopped run could not resume). Progress: status (running, complete, timeout, interrupted, failed),
    rounds and parts written, snapshot (path, sha256, rounds, parts of the state to resume from), error.
    Cost: average_loss, learner_s, environment_s (adaptive environments), wall_s, peak_rss_bytes, report (the
    learner's last words: model_size, ...). analyses: the post-run analyses' entries by key."""

    learner: str = ""
    dataset: str = ""
    seed: int = 0
    run: str = ""
    task: str | None = None
    loss: str | None = None
    planned_rounds: int | None = None
    block: int | None = None
    config: dict[str, Any] = field(default_factory=dict)
    identity: dict[str, Any] = field(default_factory=dict)
    dataset_files: list[dict[str, Any]] = field(default_factory=list)
    data_sha256: str | None = None
    timeout_s: float | None = None
    argv: list[str] = field(default_factory=list)
    versions: dict[str, str | None] = field(default_factory=dict)
    git: dict[str, Any] | None = None
    blas_threads: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    resumed: list[dict[str, Any]] = field(default_factory=list)
    started_over: str | None = None
    status: str = "running"
    rounds: int = 0
    parts: list[str] = field(default_factory=list)
    snapshot: dict[str, Any] | None = None
    error: str | None = None
    average_loss: float | None = None
    learner_s: float | None = None
    environment_s: float | None = None
    wall_s: float | None = None
    peak_rss_bytes: int | None = None
    report: dict[str, Any] = field(default_factory=dict)
    analyses: dict[str, dict[str, Any]] = field(default_factory=dict)

    def other_data(self, now: str | None, reader: str) -> str | None:
        """Why the dataset's files, whose content sha256 is ``now``, are not the ones ``reader`` (this run) read; None
        when they are."""
        if now == self.data_sha256:
            return None
        was = (self.data_sha256 or "not recorded")[:12]
        return f"the dataset's files hold other content than {reader} read (sha256 {(now or '')[:12]}, was {was})"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        """The record of a run.json's content; a key that is not a field is an analysis's entry."""
        names = FIELDS - {"analyses"}
        known = {k: v for k, v in data.items() if k in names and v is not None}
        return cls(**known, analyses={k: v for k, v in data.items() if k not in names and isinstance(v, dict)})

    def to_json(self) -> dict[str, Any]:
        """run.json's content: the fields, then each analysis's entry under its key."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "analyses"}
        return {**out, **self.analyses}

    def update(self, **fields: Any) -> None:
        """Set fields by name (a name that is not a field is a mistake: TypeError)."""
        unknown = set(fields) - FIELDS
        if unknown:
            raise TypeError(f"not fields of a manifest: {', '.join(sorted(unknown))}")
        for name, value in fields.items():
            setattr(self, name, value)


FIELDS = frozenset(f.name for f in dataclasses.fields(Manifest))


@dataclass(frozen=True)
class RegretEntry:
    """The manifest's ``regret`` entry (``okl-regret``, :mod:`okl.analyses.regret`): the comparator's name and
    settings, then the score. In the file the settings sit beside the score's fields (``{"comparator": "krr",
    "lam": 1.0, "rounds": 10, "regret": 2.5, ...}``), so an entry written before this record reads back the same.

    Example::

        >>> e = RegretEntry("krr", {"lam": 1.0}, rounds=10, regret=2.5, comparator_loss=3.0, penalty=0.5,
        ...                 cached=False, seconds=0.1)
        >>> RegretEntry.comparator_of(e.to_json())
        'krr(lam=1.0)'
    """

    comparator: str
    settings: dict[str, Any]
    rounds: int
    regret: float
    comparator_loss: float
    penalty: float
    cached: bool
    seconds: float

    def to_json(self) -> dict[str, Any]:
        score = {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("comparator", "settings")
        }
        return {"comparator": self.comparator, **self.settings, **score}

    @staticmethod
    def comparator_of(entry: dict[str, Any]) -> str:
        """What an entry (as in the file) was scored against, with its settings: ``krr(lam=1.0, sigma=1.0)``."""
        settings = ", ".join(f"{k}={entry[k]}" for k in sorted(entry) if k not in _REGRET_FIELDS)
        return f"{entry['comparator']}({settings})"


_REGRET_FIELDS = frozenset(f.name for f in dataclasses.fields(RegretEntry)) - {"settings"}  # the rest are settings
