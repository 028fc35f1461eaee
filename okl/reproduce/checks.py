"""Claims as checks: each paper claim of an artefact carries checks over its results table, evaluated on every
reproduction, and gets a computed verdict with the numbers that decided it.

The results table holds, per (dataset, arm), the finished runs, one per seed (:class:`Cell`: a metric over the
whole run, or read at a round). A check is declared in the artefact's file under its claim:

.. code-block:: yaml

    claims:
      - source: "§4, Figure 1"
        text: "AdaRaker consistently yields the lowest MSE"
        explained_by: raker_rules          # the deviation that would explain a failure (else "unexplained")
        checks:
          - {kind: order, metric: loss, arms: [adaraker, [raker, omkl, adamkl]]}
      - source: "Table 2"
        text: "LIBSVM 3.92% error"
        not_checkable: "a batch solver okl does not run"

The kinds (``lower`` is better unless ``better: higher``):

- ``order``: ``arms`` is a list of groups (an arm or a list of arms); every arm of a group beats every arm of
  the later groups, on each dataset. Two arms run on two or more seeds in common are compared by seed: the mean of
  the paired differences must be resolved by our seeds, by a two-sided paired t-test at ``LEVEL`` (|mean| >
  t(1 − LEVEL/2, n − 1) × its standard error), and a pair they do not resolve does not hold, with that as its
  computed cause (:attr:`Outcome.unresolved`); arms without two seeds in common (one seed, a paper's printed numbers)
  are compared by their means over seeds;
- ``paper``: ours within the artefact's tolerance of every number the paper reports for ``metric`` (``k``
  times its ±, or the relative tolerance where it prints none), for ``arms`` (default: every reported arm); a
  number outside is explained where a deviation's ablation declared ``brackets`` lands across the paper's, or
  as not resolved by our seeds where a two-sided one-sample t-test of our seeds' values against the paper's mean
  does not reject at ``LEVEL`` (our mean's confidence interval holds the paper's number) and our seeds vary no
  more than the paper's runs (our s.d. within ``k`` times its ±: a wider spread is a gap of its own, said in the
  cell, and leaves the number unexplained). The paper's number may come from elsewhere than the arm's reported row
  for ``metric``: ``reported_as`` (another metric of the row, where ours is a reading of it: Table 3's risk against
  our risk less its penalty), ``against`` (another arm's row: an arm at the text's settings) or ``value`` (a number
  no reported row holds: a caption's, or a cell's second number);
- ``ratio``: mean(``arm``) / mean(``over``) within ``[at_least, at_most]``, each limit held to a two-sided
  one-sample t-test of the ratios per seed (the seeds both ran) against it: a limit they do not resolve does not
  hold, with that as its computed cause (:func:`_judged`); one seed: the means decide;
- ``seeds``: ``arm`` beats ``over`` in at least ``share`` of the seeds both ran, paired by seed;
- ``bound``: the mean of every arm of ``arms`` within ``[at_least, at_most]``, each limit held to a t-test of
  the arm's seeds' values against it as a ratio's is;
- ``trend``: along ``arms`` (a parameter growing), the mean, or with ``towards`` its distance to that arm's
  (``metric: y_hat``: the largest prediction gap max_t |ŷ_t − ŷ_t(towards)|, per seed), never rises and ends
  below where it starts; it falls on some steps only: partly.

Arms that played different numbers of rounds are compared at the rounds all of them reached: the metric is
read at that round from the stored rounds (loss, learner time, regret, model size), not the runs' totals.
Each check gives an outcome per dataset; a claim holds when every outcome of its checks holds, fails when every
outcome fails, and holds partly otherwise: some outcome holds, in full or in part (a trend on some of its steps, some
of a table's cells), which the verdict names ("holds on d1", or "no part holds in full"). A claim whose every outcome
fails only by differences our seeds do not resolve (:attr:`Outcome.unresolved`) is "not resolved", not "fails": our
runs cannot tell. It is not run when none of its arms ran.

The same checks also run on the paper's own numbers (:meth:`Claim.on_paper`): the ``order``, ``ratio``, ``bound``
and ``trend`` checks read only means, so they can be evaluated on the means the artefact's ``reported`` list
copies from the paper's tables. That tells a reader whether a claim that fails here also fails on the paper's
own tables (its text and its tables disagree), or only on ours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from okl.errors import ConfigError

VERDICTS = ("holds", "partly", "fails", "not resolved", "not run", "not checkable")
LEVEL = 0.05  # of the t-tests by which checks tell whether our seeds resolve a difference (:class:`Difference`)
# the metrics a run's stored rounds give at any round t, with the column that gives them
ROUNDWISE = {"loss": "cum_loss", "learner_s": "elapsed_ns", "regret": "regret", "model_size": "model_size"}


class Cell(Protocol):
    """One finished run of a (dataset, arm): its seed, its rounds, its metrics."""

    seed: int
    played: int  # rounds played

    def value(self, metric: str) -> float | None:
        """The metric over the whole run."""

    def at(self, metric: str, t: int) -> float | None:
        """A metric of :data:`ROUNDWISE` after round ``t`` (read from the stored rounds)."""

    def series(self, column: str, t: int) -> np.ndarray:
        """A column of the stored rounds 1..t."""


Results = Mapping[tuple[str, str], Sequence[Cell]]  # (dataset, arm) -> runs in seed order


@dataclass(frozen=True)
class Tolerance:
    """How far ours may be from a paper's number and count as reproducing it: ``k`` times the paper's ±,
    or ``relative`` to the number where the paper prints no ±."""

    k: float = 1.0
    relative: float = 0.1

    def inside(self, ours: float, paper: float | tuple[float, float]) -> bool:
        mean, std = (paper, None) if isinstance(paper, float | int) else paper
        width = self.k * std if std else self.relative * abs(mean)
        return abs(ours - mean) <= width + 1e-12 * abs(mean)

    def describe(self) -> str:
        return f"within {self.k:g}× the paper's ± (±{100 * self.relative:g}% where it prints none)"


@dataclass(frozen=True)
class Outcome:
    """A check on one dataset: holds, partly, fails, or not run (the arms it names have no runs)."""

    dataset: str
    status: str
    numbers: str
    causes: tuple[str, ...] | None = None  # a part that did not hold: the deviations whose ablations explain it all
    unresolved: bool = False  # a part that did not hold: not resolved by our seeds, all or what no ablation explains


@dataclass(frozen=True)
class Check:
    kind: str
    metric: str = "loss"
    better: str = "lower"
    label: str = ""  # which part of the claim, printed before its numbers
    datasets: tuple[str, ...] = ()  # the datasets the claim is about (default: every dataset of the results)

    def evaluate(self, results: Results, reported: Mapping, tolerance: Tolerance) -> list[Outcome]:
        """One outcome per dataset of the results (of ``datasets``, when given)."""
        names = self.datasets or datasets(results)
        return [self._one(results, d, reported, tolerance) for d in names]

    def _one(self, results: Results, dataset: str, reported: Mapping, tolerance: Tolerance) -> Outcome:
        raise NotImplementedError

    def beats(self, a: float, b: float) -> bool:
        return a < b if self.better == "lower" else a > b


def datasets(results: Results) -> list[str]:
    return list(dict.fromkeys(d for d, _ in results))


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.4g}"


@dataclass(frozen=True)
class Values:
    """The means over seeds of arms' metric on one dataset, at the rounds all of them reached."""

    means: dict[str, float]
    rounds: int | None = None  # the matched round, when the arms played different numbers of rounds
    unequal: tuple[int, int] | None = None  # whole runs of unequal lengths (a metric with no per-round value)

    def where(self) -> str:
        if self.unequal:
            return f" over whole runs of {self.unequal[0]:,} to {self.unequal[1]:,} rounds (no per-round value)"
        return f" at {self.rounds:,} rounds" if self.rounds else ""


def _runs(results: Results, dataset: str, arms: Sequence[str]) -> dict[str, Sequence[Cell]] | None:
    runs = {a: results.get((dataset, a), ()) for a in arms}
    return runs if all(runs.values()) else None


def _matched(runs: Mapping[str, Sequence[Cell]], metric: str) -> int | None:
    """The round all ``runs`` reached, when they played different numbers of rounds and the metric can be
    read at a round (else None: whole runs)."""
    played = {c.played for cells in runs.values() for c in cells}
    return min(played) if len(played) > 1 and metric in ROUNDWISE else None


def _unequal(runs: Mapping[str, Sequence[Cell]]) -> tuple[int, int] | None:
    played = {c.played for cells in runs.values() for c in cells}
    return (min(played), max(played)) if len(played) > 1 else None


def _value(cell: Cell, metric: str, t: int | None) -> float | None:
    """A run's ``metric`` (after round ``t``); None when it has none, a NaN included: left out of a check's means and
    pairs as out of the table's (:func:`okl.results.mean_std`), where a NaN had made the mean NaN and an order fail."""
    v = cell.value(metric) if t is None else cell.at(metric, t)
    return None if v is None or v != v else v


def values(results: Results, dataset: str, arms: Sequence[str], metric: str, matched: bool = True) -> Values | None:
    """The arms' means over seeds on ``dataset``, compared at the rounds all of them reached (``matched``; else
    each over its whole runs: against a paper's number or a bound); None if an arm has no run there."""
    runs = _runs(results, dataset, arms)
    if runs is None:
        return None
    t = _matched(runs, metric) if matched else None
    means = {}
    for arm, cells in runs.items():
        present = [v for v in (_value(c, metric, t) for c in cells) if v is not None]
        if not present:
            return None
        means[arm] = float(np.mean(present))
    return Values(means, t, _unequal(runs) if matched and t is None and metric not in ROUNDWISE else None)


def _not_run(dataset: str, arms: Sequence[str], results: Results) -> Outcome:
    absent = [a for a in arms if not results.get((dataset, a))]
    return Outcome(dataset, "not run", f"{dataset}: no finished runs of {', '.join(absent) or 'the arms'}")


def _undecided(dataset: str, arms: Sequence[str], results: Results, metric: str) -> Outcome:
    """Not run: an arm has no finished run there, or the runs hold no finite ``metric`` (or no seed in common)."""
    if any(not results.get((dataset, a)) for a in arms):
        return _not_run(dataset, arms, results)
    return Outcome(dataset, "not run", f"{dataset}: no finite {metric} in common to the runs of {', '.join(arms)}")


def _groups(arms: Sequence[str | Sequence[str]]) -> list[list[str]]:
    return [[a] if isinstance(a, str) else list(a) for a in arms]


@dataclass(frozen=True)
class Order(Check):
    arms: tuple = ()

    def _one(self, results, dataset, reported, tolerance):
        groups = _groups(self.arms)
        flat = [a for g in groups for a in g]
        got = values(results, dataset, flat, self.metric)
        if got is None:
            return _undecided(dataset, flat, results, self.metric)
        m = got.means
        runs = _runs(results, dataset, flat)
        pairs = [(a, b) for i, g in enumerate(groups) for a in g for h in groups[i + 1 :] for b in h]
        judged = [(a, b, self._paired(runs[a], runs[b], got.rounds)) for a, b in pairs]
        broken = [(a, b, d) for a, b, d in judged if not (self.beats(m[a], m[b]) if d is None else d.beats)]
        shown = " | ".join(", ".join(f"{a} {_fmt(m[a])}" for a in g) for g in groups)
        text = f"{dataset}: {self.metric}{got.where()} {shown}"
        if broken:
            sign = "≥" if self.better == "lower" else "≤"
            text += "; but " + ", ".join(
                f"{a} {sign} {b}" if d is None
                else f"{a} {sign} {b} ({d.text(a, b)})" if d.resolved
                else f"{a} ≈ {b}, not resolved by our seeds ({d.text(a, b)})"
                for a, b, d in broken[:3]
            )  # fmt: skip
            text += "…" if len(broken) > 3 else ""
        elif paired := [(a, b, d) for a, b, d in judged if d is not None]:  # the comparison that decided it
            # the smallest |t| (not the smallest gap), and of pairs of one |t| (the same on every seed: infinite) the
            # smallest gap: the first pair was named, the farthest apart of them on Raker's Twitter
            a, b, d = min(paired, key=lambda p: (p[2].margin, abs(p[2].mean)))
            text += f"; least separated by seed (smallest |t|): {d.text(a, b)}"
        unresolved = bool(broken) and all(d is not None and not d.resolved for _, _, d in broken)
        return Outcome(dataset, "fails" if broken else "holds", text, unresolved=unresolved)

    def _paired(self, a: Sequence[Cell], b: Sequence[Cell], t: int | None) -> Difference | None:
        """a against b over the seeds both ran (None: fewer than two, compared by means instead)."""
        return Difference.of([x - y for x, y in by_seed(a, b, self.metric, t)], self.better == "lower")


def by_seed(a: Sequence[Cell], b: Sequence[Cell], metric: str, t: int | None) -> list[tuple[float, float]]:
    """(a's, b's) ``metric`` on each seed both ran and scored, in seed order: an order's pairs, a ratio's per seed, a
    share of seeds won."""
    mine = {c.seed: v for c in a if (v := _value(c, metric, t)) is not None}
    theirs = {c.seed: v for c in b if (v := _value(c, metric, t)) is not None}
    return [(mine[s], theirs[s]) for s in sorted(mine.keys() & theirs.keys())]


@dataclass(frozen=True)
class Difference:
    """Differences over n seeds (an order check's a − b paired by seed, or ours − the paper's number): their mean
    and its standard error, read by a two-sided t-test at :data:`LEVEL`."""

    mean: float
    se: float
    n: int
    lower: bool  # lower is better

    @classmethod
    def of(cls, d: Sequence[float], lower: bool = True) -> Difference | None:
        """None for fewer than two values, or a NaN or infinite one (no noise to speak of: the means decide)."""
        d = np.asarray(d, dtype=float)
        if len(d) < 2 or not np.isfinite(d).all():
            return None
        return cls(float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))), len(d), lower)

    @property
    def sd(self) -> float:
        """The differences' standard deviation over the seeds."""
        return self.se * float(np.sqrt(self.n))

    @property
    def critical(self) -> float:
        """t(1 − LEVEL/2, n − 1) (scipy.special, imported here: 0.3 s that planning a preset does not pay)."""
        from scipy.special import stdtrit

        return float(stdtrit(self.n - 1, 1 - LEVEL / 2))

    @property
    def constant(self) -> bool:
        """Every seed gives the same difference (to rounding: a learner and data that the seed does not change)."""
        return self.se <= 1e-9 * abs(self.mean)

    @property
    def margin(self) -> float:
        """|mean| in standard errors (inf when every seed gives the same nonzero difference)."""
        return np.inf if self.mean and self.constant else abs(self.mean) / self.se if self.se else 0.0

    @property
    def resolved(self) -> bool:
        """Resolved by our seeds: |t| above the critical value, or the same difference on every seed (an exact
        tie, 0 on each seed, included: it is no noise either, and a tie does not beat)."""
        return self.constant or self.margin > self.critical

    @property
    def beats(self) -> bool:
        return self.resolved and self.mean != 0 and (self.mean < 0) == self.lower

    def text(self, a: str, b: str) -> str:
        if self.constant:
            return f"{a} − {b} {self.mean:+.3g} on each of {self.n} seeds"
        return (
            f"{a} − {b} {self.mean:+.3g} ± {self.se:.2g} s.e. over {self.n} seeds, "
            f"|t| {self.margin:.3g} {'>' if self.resolved else '≤'} {self.critical:.3g}"
        )


@dataclass(frozen=True)
class Paper(Check):
    """Ours within the paper's ± (:class:`Tolerance`). A number outside is explained by a deviation when its
    ablation brackets the paper's: the paper's mean lies between ours and the ablation arm's, or the ablation arm's
    is within the paper's ±, so the setting the deviation names moves our number across or onto the paper's
    (``ablations``: (our arm, ablation arm, deviation id) of the artefact's deviations on this metric, set when the
    artefact is loaded). A % error (``loss`` on a binary stream) outside is explained too where ours and the paper's
    both do no better than the stream's majority class (:data:`NO_SKILL`): neither learns it, so the gap between them
    says nothing of the algorithm (Table 2's α = γ = 1 rows on ijcnn1: 9.65 and 9.70 against the 9.57% of its
    positives)."""

    arms: tuple = ()
    k: float | None = None  # instead of the artefact's tolerance
    relative: float | None = None
    ablations: tuple[tuple[str, str, str], ...] = ()
    against: str = ""  # the arm whose reported numbers ``arms`` are held to (an arm at the text's settings, which the
    # paper's table prints under the algorithm's row: Table 1's #SV at σ = 8 and Eq. 4)
    value: float | None = None  # the paper's number ``arms`` are held to, where no reported row holds it (a cell's
    # second number: Table 2's L-BFGS beside LIBSVM, one batch fit of ours for both; a caption's: Figure 7's 2.6%)
    reported_as: str = ""  # the reported rows' metric ours is held to, when ours is another reading of it

    def tolerance(self, default: Tolerance | None) -> Tolerance:
        """What this check judges by: its own k or relative, else the artefact's; the table marks the paper's
        numbers of its metric by the same (:func:`marking`)."""
        default = default or Tolerance()
        return Tolerance(self.k or default.k, self.relative or default.relative)

    def _one(self, results, dataset, reported, tolerance):
        tol = self.tolerance(tolerance)
        key = self.reported_as or self.metric
        if self.against or self.value is not None:
            theirs = {key: self.value} if self.value is not None else reported.get((dataset, self.against), {})
            reported = {(dataset, arm): theirs for arm in self.arms}
        rows = [
            (arm, v[key])
            for (d, arm), v in reported.items()
            if d == dataset and key in v and (not self.arms or arm in self.arms)
        ]
        inside, outside, absent, causes, unresolved, unexplained = [], [], [], set(), 0, 0
        for arm, paper in rows:
            got = values(results, dataset, [arm], self.metric, matched=False)
            if got is None:
                absent.append(arm)
                continue
            ours = got.means[arm]
            cell = f"{arm} {_fmt(ours)} vs {paper_text(paper)}"
            if tol.inside(ours, paper):
                inside.append(cell)
                continue
            bracket = self._bracket(results, dataset, arm, ours, paper, tol)
            # the majority-class rate is an error's: a model order or a time is never 'no better' than it
            error = self.metric == "loss" and not bracket
            rate = no_skill(results[(dataset, arm)], ours, float(np.atleast_1d(paper)[0])) if error else None
            spread = None if bracket or rate is not None else self._spread(results, dataset, arm, paper)
            if bracket:
                causes.add(bracket[0])
                cell += f" ({bracket[1]})"
            elif rate is not None:
                causes.add(NO_SKILL)
                cell += f" (both {NO_BETTER.format(' ' + _fmt(rate))}: neither learns)"
            elif spread is not None and not spread.resolved:
                std = paper[1] if isinstance(paper, tuple) else None
                cell += f" (not resolved by our seeds: {spread.text(arm, 'paper')}"
                if std and spread.sd <= tol.k * std:
                    unresolved += 1
                    cell += ")"
                else:  # our runs vary more than the paper's: a gap of its own
                    unexplained += 1
                    times = "" if tol.k == 1 else f"{tol.k:g}× "
                    cell += (
                        f"; but our s.d. {spread.sd:.3g} exceeds {times}the paper's ± {std:g})"
                        if std
                        else "; the paper prints no ± to set our s.d. against)"
                    )
            else:
                unexplained += 1
            outside.append(cell)
        checked = len(inside) + len(outside)
        if not checked:  # no run, or runs without the metric (a column an older revision did not record)
            if absent:
                return _undecided(dataset, absent, results, self.metric)
            return Outcome(dataset, "not run", f"{dataset}: no finished runs of a reported arm")
        status = "holds" if not outside else "fails" if not inside else "partly"
        text = f"{dataset}: {len(inside)} of {checked} {self.metric} inside"
        text += f": {', '.join(inside)}" if inside else ""
        text += f"; outside: {', '.join(outside)}" if outside else ""
        explained = outside and not unexplained  # every number outside: bracketed by an ablation, or not resolved
        bracketed = tuple(sorted(causes)) if explained and causes else None
        return Outcome(dataset, status, text, bracketed, bool(explained and unresolved))

    def _spread(self, results, dataset: str, arm: str, paper: float | tuple[float, float]) -> Difference | None:
        """Our seeds' values of ``arm`` less the paper's mean: their t-test says whether our runs tell them apart."""
        mean = float(np.atleast_1d(paper)[0])
        ours = [_value(c, self.metric, None) for c in results.get((dataset, arm), ())]
        return Difference.of([v - mean for v in ours if v is not None])

    def _bracket(
        self, results, dataset: str, arm: str, ours: float, paper: float | tuple[float, float], tol: Tolerance
    ) -> tuple[str, str] | None:
        """The first deviation whose ablation of ``arm`` brackets the paper's number on ``dataset`` (its mean lies
        between ours and the ablation's, or the ablation's is within its ±): (its id, the numbers that show it). An
        ablation that learns nothing (:func:`constant_error`) brackets nothing: a paper's number between ours and
        the majority-class rate says nothing of the setting the deviation names. Unless the paper's learns nothing
        too (its number at or above the rate, as ours is not): then the ablation reproduces the paper's outcome, a
        run that learns nothing, and shows the setting it names is what separates ours from it (Table 2's NOGD on
        ijcnn1: the paper's 9.55 within 1% of the rate 9.574, ours 9.30 learns, and NOGD with Lu et al.'s smaller step
        9.575)."""
        mean = float(np.atleast_1d(paper)[0])
        for ours_arm, ablation, id in self.ablations:
            if ours_arm != arm:
                continue
            got = values(results, dataset, [ablation], self.metric, matched=False)
            if got is None:
                continue
            theirs = got.means[ablation]
            cells = results[(dataset, ablation)]
            if self.metric == "loss" and (rate := no_skill(cells, theirs)) is not None:
                if no_skill(cells, mean) is not None and no_skill(cells, ours) is None:
                    both = f"it and the paper's {NO_BETTER.format(' ' + _fmt(rate))}: neither learns"
                    return id, f"{ablation} {_fmt(theirs)}: `{id}`; {both}"
                continue
            if min(ours, theirs) <= mean <= max(ours, theirs) or tol.inside(theirs, paper):
                return id, f"{ablation} {_fmt(theirs)}: `{id}`"
        return None


def constant_error(cell: Cell) -> float | None:
    """The % error of the best constant prediction on a binary run's labels (the majority-class rate), read from its
    stored rounds; None for other labels, or a cell with no labels stored."""
    try:
        y = cell.series("y", cell.played)
    except (AttributeError, KeyError, ValueError):
        return None
    labels = np.unique(y)
    return 100 * float(min(np.mean(y == labels[0]), np.mean(y == labels[-1]))) if len(labels) == 2 else None


NO_SKILL = "no skill"  # the cause :class:`Paper` gives a % error outside where ours and the paper's both learn nothing
SKILL = 0.99  # a % error at or above this fraction of the majority-class rate learns nothing (:func:`no_skill`)
NO_BETTER = "within 1% of the majority-class rate{} or above it"  # a cell's words ("at or above" was false: 9.55)


def no_skill(cells: Sequence[Cell], *errors: float) -> float | None:
    """The majority-class rate of the runs' stream when every mean % error of ``errors`` does no better than the
    majority class (within 1% of its rate, or worse); else None."""
    rate = constant_error(cells[0]) if cells else None
    return rate if rate is not None and min(errors) >= SKILL * rate else None


def marking(claims: Sequence[Claim], metric: str, default: Tolerance | None) -> Tolerance | None:
    """The tolerance the paper's numbers of ``metric`` are marked ✓/✗ by in the tables: that of the claims' paper
    check of ``metric`` (one owner: a number the check found inside is never marked ✗ beside it), else the
    artefact's."""
    for claim in claims:
        for check in claim.checks:
            if isinstance(check, Paper) and check.metric == metric:
                return check.tolerance(default)
    return default


def paper_text(value: float | tuple[float, float] | None) -> str:
    """The paper's number (or mean ± std) as it prints it; — for none."""
    return "—" if value is None else " ± ".join(f"{v:g}" for v in np.atleast_1d(value))


@dataclass(frozen=True)
class Ratio(Check):
    arm: str = ""
    over: str = ""
    at_least: float | None = None
    at_most: float | None = None

    def _one(self, results, dataset, reported, tolerance):
        got = values(results, dataset, [self.arm, self.over], self.metric)
        if got is None:
            return _undecided(dataset, [self.arm, self.over], results, self.metric)
        a, b = got.means[self.arm], got.means[self.over]
        ratio = a / b if b else float("inf")
        runs = _runs(results, dataset, [self.arm, self.over])
        per_seed = [x / y for x, y in by_seed(runs[self.arm], runs[self.over], self.metric, got.rounds) if y]
        # the seeds' ratios decide where there are two or more (the test's numbers): the ratio of the means can lie on
        # the other side of a limit when the denominators vary across seeds, or when an arm ran seeds the other did not
        decided = float(np.mean(per_seed)) if len(per_seed) >= 2 else ratio
        ok, noise = _judged(decided, per_seed, self.at_least, self.at_most, "ratio per seed")
        shown = _ratio(ratio, self.at_least, self.at_most)
        text = f"{dataset}: {self.metric} {self.arm}/{self.over} = {_fmt(a)}/{_fmt(b)} = {shown}{got.where()}"
        text += f" ({_bounds(self.at_least, self.at_most)})" + (f", {noise}" if noise else "")
        if not noise and _within(decided, self.at_least, self.at_most) != _within(ratio, self.at_least, self.at_most):
            where = "inside" if ok else "outside"
            text += f", but {_ratio(decided, self.at_least, self.at_most)} per seed (mean of {len(per_seed)}), {where}"
        return Outcome(dataset, "holds" if ok else "fails", text, unresolved=bool(noise))


def _within(x: float, lo: float | None, hi: float | None) -> bool:
    return (lo is None or x >= lo) and (hi is None or x <= hi)


def _judged(
    mean: float, per_seed: Sequence[float], lo: float | None, hi: float | None, what: str = "ours"
) -> tuple[bool, str]:
    """Whether a mean over seeds meets the bounds, as our seeds resolve it: (holds, "" or why not resolved). Each
    bound is a t-test of the seeds' values against it (:class:`Difference`, as an order's pairs are): a mean on either
    side that the seeds do not separate from the bound does not hold, and is said to be not resolved (a bound
    read on means alone held 0.953 ± 0.068 "at most 1" over 5 seeds). With fewer than two seeds the mean decides."""
    for bound, above in ((lo, True), (hi, False)):
        if bound is None:
            continue
        d = Difference.of([v - bound for v in per_seed], lower=not above)
        if d is not None and not d.resolved:
            return False, f"not resolved by our seeds ({d.text(what, f'{bound:g}')})"
    return _within(mean, lo, hi), ""


def _ratio(x: float, lo: float | None, hi: float | None) -> str:
    """x to 3 significant digits, or as many more as show which side of the bounds it lies on (1.0008 against
    0.9999 to 1.0001 printed "1", inside the bounds, beside a verdict that it is outside)."""
    for digits in range(3, 17):
        shown = f"{x:.{digits}g}"
        if _within(float(shown), lo, hi) == _within(x, lo, hi):
            return shown
    return repr(x)


def _bounds(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f"asked: {lo:g} to {hi:g}"
    return f"asked: ≥ {lo:g}" if lo is not None else f"asked: ≤ {hi:g}"


@dataclass(frozen=True)
class Bound(Check):
    arms: tuple = ()
    at_least: float | None = None
    at_most: float | None = None

    def _one(self, results, dataset, reported, tolerance):
        got = values(results, dataset, list(self.arms), self.metric, matched=False)
        if got is None:
            return _undecided(dataset, list(self.arms), results, self.metric)
        runs = _runs(results, dataset, list(self.arms))
        judged = {
            a: _judged(
                v, [x for c in runs[a] if (x := _value(c, self.metric, None)) is not None], self.at_least, self.at_most
            )
            for a, v in got.means.items()
        }
        ok = [a for a, (held, _) in judged.items() if held]
        status = "holds" if len(ok) == len(self.arms) else "fails" if not ok else "partly"
        shown = ", ".join(f"{a} {_fmt(v)}" for a, v in got.means.items())
        noise = [f"{a} {why}" for a, (_, why) in judged.items() if why]
        text = f"{dataset}: {self.metric}{got.where()} {shown} ({_bounds(self.at_least, self.at_most)})"
        text += "; " + "; ".join(noise) if noise else ""
        failing = [a for a in self.arms if a not in ok]
        return Outcome(dataset, status, text, unresolved=bool(failing) and all(judged[a][1] for a in failing))


@dataclass(frozen=True)
class Seeds(Check):
    arm: str = ""
    over: str = ""
    share: float = 1.0

    def _one(self, results, dataset, reported, tolerance):
        runs = _runs(results, dataset, [self.arm, self.over])
        if runs is None:
            return _not_run(dataset, [self.arm, self.over], results)
        t = _matched(runs, self.metric)
        scored = by_seed(runs[self.arm], runs[self.over], self.metric, t)
        if not scored:
            return _undecided(dataset, [self.arm, self.over], results, self.metric)
        won = sum(self.beats(a, b) for a, b in scored)
        ok = won >= self.share * len(scored)
        where = f" at {t:,} rounds" if t else ""
        text = (
            f"{dataset}: {self.arm} beats {self.over} on {self.metric}{where} in {won} of {len(scored)} seeds "
            f"(asked: {100 * self.share:g}%)"
        )
        return Outcome(dataset, "holds" if ok else "fails", text)


@dataclass(frozen=True)
class Trend(Check):
    arms: tuple = ()
    towards: str | None = None

    def _one(self, results, dataset, reported, tolerance):
        arms = [*self.arms, *([self.towards] if self.towards else [])]
        runs = _runs(results, dataset, arms)
        if runs is None:
            return _not_run(dataset, arms, results)
        if self.metric == "y_hat":
            t = min(c.played for cells in runs.values() for c in cells)
            path = [_gap(runs[a], runs[self.towards], t) for a in self.arms]
            what = f"largest prediction gap to {self.towards} over {t:,} rounds"
        else:
            got = values(results, dataset, arms, self.metric)
            if got is None:  # an arm without runs there, or without the metric (no regret scored, ...)
                return _undecided(dataset, arms, results, self.metric)
            m = got.means
            path = [abs(m[a] - m[self.towards]) if self.towards else m[a] for a in self.arms]
            what = f"|{self.metric} − {self.towards}'s {_fmt(m[self.towards])}|" if self.towards else self.metric
            what += got.where()
        if any(v is None or not np.isfinite(v) for v in path):  # no seed both ran, or a NaN
            return _undecided(dataset, arms, results, self.metric)
        falls = [b <= a for a, b in zip(path, path[1:], strict=False)]
        status = "holds" if all(falls) and path[-1] < path[0] else "fails" if path[-1] >= path[0] else "partly"
        shown = ", ".join(f"{a} {_fmt(v)}" for a, v in zip(self.arms, path, strict=True))
        text = f"{dataset}: {what}: {shown}"
        if status == "partly":
            text += f" (rises on {len(falls) - sum(falls)} of {len(falls)} steps)"
        return Outcome(dataset, status, text)


def _gap(cells: Sequence[Cell], reference: Sequence[Cell], t: int) -> float | None:
    """max_t |ŷ_t − ŷ_t(reference)| over rounds 1..t, averaged over the seeds both ran (None: no such seed)."""
    ref = {c.seed: c for c in reference}
    gaps = [np.abs(c.series("y_hat", t) - ref[c.seed].series("y_hat", t)).max() for c in cells if c.seed in ref]
    return float(np.mean(gaps)) if gaps else None


REQUIRED = {
    "order": ("arms",),
    "ratio": ("arm", "over"),
    "bound": ("arms",),
    "seeds": ("arm", "over"),
    "trend": ("arms",),
}
KINDS: dict[str, type[Check]] = {
    "order": Order,
    "paper": Paper,
    "ratio": Ratio,
    "bound": Bound,
    "seeds": Seeds,
    "trend": Trend,
}


def _paper_number(raw: Mapping, where: str) -> None:
    """A paper check's number comes from one place (its arms' rows, another arm's, a metric of theirs, or a value);
    ``value`` a number, and with ``against`` or ``value`` the arms it holds to it."""
    value, given = raw.get("value"), [k for k in ("against", "value", "reported_as") if raw.get(k) is not None]
    if len(set(given) & {"against", "value"}) > 1 or ("value" in given and "reported_as" in given):
        raise ConfigError(
            f"{where}: check paper takes its number from one of against, value, reported_as: not {', '.join(given)}"
        )
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise ConfigError(f"{where}: check paper's value is the paper's number, not {value!r}")
    if {"against", "value"} & set(given) and not raw.get("arms"):
        raise ConfigError(f"{where}: check paper with {given[0]} needs arms (the arms held to that number)")


def parse(raw: Mapping, where: str) -> Check:
    """A check from its declaration in an artefact's file; a ConfigError saying what to change otherwise."""
    raw = dict(raw)
    kind = raw.pop("kind", None)
    if kind not in KINDS:
        raise ConfigError(f"{where}: check kind {kind!r} unknown; choose among: {', '.join(KINDS)}")
    cls = KINDS[kind]
    known = {f.name for f in cls.__dataclass_fields__.values()} - {"kind"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{where}: check {kind} takes {', '.join(sorted(known))}, not {', '.join(unknown)}")
    missing = [k for k in REQUIRED.get(kind, ()) if not raw.get(k)]
    if missing or (kind == "trend" and raw.get("metric") == "y_hat" and not raw.get("towards")):
        raise ConfigError(
            f"{where}: check {kind} needs {', '.join(missing) or 'towards (the arm y_hat is compared to)'}"
        )
    if kind == "paper":
        _paper_number(raw, where)
    if raw.get("better", "lower") not in ("lower", "higher"):
        raise ConfigError(f"{where}: better is lower or higher, not {raw['better']!r}")
    for key in ("arms", "datasets"):
        if key in raw:
            raw[key] = tuple(a if isinstance(a, str) else tuple(a) for a in raw[key])
    return cls(kind=kind, **raw)


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict and the numbers that decided it."""

    status: str  # one of VERDICTS
    numbers: str = ""
    where: str = ""  # partly: on which datasets (or parts) it holds
    failed: tuple[str, ...] = ()  # the parts that did not hold ("<label> on <dataset>")
    causes: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (part, the deviations whose ablations explain it all)
    unresolved: tuple[str, ...] = ()  # the parts that did not hold only unresolved (:attr:`Outcome.unresolved`)

    def line(self) -> str:
        head = f"**{self.status}**" + (f" ({self.where})" if self.where else "")
        return head + (f": {self.numbers}" if self.numbers else "")


@dataclass(frozen=True)
class _Printed:
    """A paper's printed numbers for one (dataset, arm) as a cell of the results table: their means; no seed
    or round of their own."""

    values: Mapping
    seed: int = 0
    played: int = 0

    def value(self, metric: str) -> float | None:
        number = self.values.get(metric)
        return None if number is None else float(np.atleast_1d(number)[0])

    def at(self, metric: str, t: int) -> float | None:
        return None

    def series(self, column: str, t: int) -> np.ndarray:
        raise ValueError(f"the paper prints no rounds ({column})")


def printed(reported: Mapping) -> Results:
    """The paper's numbers (``reported``: (dataset, arm) -> metric -> mean or (mean, std)) as a results table."""
    return {key: (_Printed(values),) for key, values in reported.items()}


def on_means(check: Check) -> bool:
    """Whether ``check`` reads only means (so it can be evaluated on a paper's printed numbers)."""
    return isinstance(check, Order | Ratio | Bound) or (isinstance(check, Trend) and check.metric != "y_hat")


@dataclass(frozen=True)
class Claim:
    source: str
    text: str
    checks: tuple[Check, ...] = ()
    not_checkable: str = ""  # why no check over our runs can decide it
    explained_by: str = ""  # the id of the deviation that explains a failure
    explains: tuple[str, ...] = ()  # the labels of the checks it concerns (none: every check of the claim)
    own: bool = False  # okl's reading of the paper, not a sentence of it: verdict shown, outside the paper's totals

    def __post_init__(self) -> None:
        """A verdict names its parts by label and dataset: two checks of one label on one dataset would share a
        part's name, so an explanation of one would cover the other."""
        object.__setattr__(self, "explains", tuple(self.explains))
        if unknown := set(self.explains) - {c.label for c in self.checks}:
            raise ConfigError(f"explains names no check's label: {', '.join(sorted(unknown))}")
        for i, a in enumerate(self.checks):
            for b in self.checks[i + 1 :]:
                shared = not (a.datasets and b.datasets) or set(a.datasets) & set(b.datasets)
                if a.label == b.label and shared:
                    raise ConfigError(
                        f"two checks share the label {a.label!r} on the same datasets; give each its own label "
                        "(a verdict names its parts by label and dataset)"
                    )

    def concerns(self, part: str) -> bool:
        """Whether the candidate cause (``explained_by``) concerns the verdict's part (named "<label> on <dataset>"):
        a run-time deviation was offered for an error ratio too."""
        return not self.explains or any(part == label or part.startswith(f"{label} on ") for label in self.explains)

    def verdict(self, results: Results, reported: Mapping, tolerance: Tolerance, absent: str = "") -> Verdict:
        """The claim's verdict over ``results``; ``absent``: the artefact's data is not here (its fetch command)."""
        if not self.checks:
            return Verdict("not checkable", self.not_checkable)
        if absent:
            return Verdict("not run", absent)
        parts = [(c, o) for c in self.checks for o in c.evaluate(results, reported, tolerance)]
        return combine(parts)

    def on_paper(self, reported: Mapping) -> Verdict | None:
        """The claim's checks that read means (:func:`on_means`), evaluated on the paper's own printed numbers
        where it prints every arm they compare; None when it prints none of them."""
        table = printed(reported)
        parts = [
            (c, o)
            for c in self.checks
            if on_means(c)
            for o in c.evaluate(table, reported, Tolerance())
            if o.status != "not run"
        ]
        return combine(parts) if parts else None


def combine(parts: Sequence[tuple[Check, Outcome]]) -> Verdict:
    """A claim's verdict from its checks' outcomes per dataset. A claim holds only where every part of it was
    decided and held: a part not run makes one that held elsewhere 'partly' (never 'holds'), and is named."""
    ran = [(c, o) for c, o in parts if o.status != "not run"]
    numbers = "; ".join((f"{c.label}: " if c.label else "") + o.numbers for c, o in parts)
    if not ran:
        return Verdict("not run", numbers)
    statuses = {o.status for _, o in ran}
    missing = [_part(c, o) for c, o in parts if o.status == "not run"]
    failed = tuple(_part(c, o) for c, o in ran if o.status in ("fails", "partly"))
    causes = tuple((_part(c, o), o.causes) for c, o in ran if o.status in ("fails", "partly") and o.causes)
    unresolved = tuple(_part(c, o) for c, o in ran if o.status in ("fails", "partly") and o.unresolved)
    if statuses == {"holds"} and not missing:
        return Verdict("holds", numbers)
    if statuses == {"fails"}:
        noise = set(unresolved) == set(failed) and not causes  # every part that ran: within our seeds' noise
        where = f"not run {', '.join(missing)}" if missing else ""
        return Verdict("not resolved" if noise else "fails", numbers, where, failed, causes, unresolved)
    held = [_part(c, o) for c, o in ran if o.status == "holds"]
    where = "holds " + ", ".join(held) if held else "no part holds in full"
    where += f"; not run {', '.join(missing)}" if missing else ""
    return Verdict("partly", numbers, where, failed, causes, unresolved)


def _part(check: Check, outcome: Outcome) -> str:
    return (check.label + " " if check.label else "") + f"on {outcome.dataset}"


def tally(verdicts: Sequence[Verdict]) -> dict[str, int]:
    return {v: sum(x.status == v for x in verdicts) for v in VERDICTS}
