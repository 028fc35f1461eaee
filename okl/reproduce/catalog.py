"""The paper artefacts okl reproduces: one YAML file per artefact in ``okl/reproduce/artefacts/``.

An artefact ``<name>`` is the preset ``conf/experiment/<name>.yaml`` (every run: datasets, learners as
arms, seeds) plus its file here, which says what the paper shows and reports:

.. code-block:: yaml

    paper: pros_n_kons_calandriello2017      # a key of REFERENCES.md
    title: Table 1, regression                # the artefact, as the paper names it
    draws: bars                               # the figure's kind (okl.reproduce.figures.KINDS)
    metrics: [loss, model_size, learner_s]    # the table's columns (okl.reproduce.metrics.METRICS)
    reported:                                 # the paper's numbers, one row per (dataset, arm)
      - {dataset: casp, arm: pros_n_kons, source: "Table 1, p. 8", loss: [0.06773, 0.00105], model_size: 21}
    tolerance: {k: 1, relative: 0.1}          # when ours reproduces a paper number (checks.Tolerance); null: no marks
    claims:                                   # what the paper states, each with its checks (okl.reproduce.checks)
      - source: "Appendix G, p. 24"
        text: "Kernel-AWV ... leads to the best regret"
        checks: [{kind: order, metric: regret, arms: [kernel_awv, [taylor2, fogd]]}]
        explained_by: adversary_search        # the deviation that would explain a failure
      - {source: "Table 2", text: "LIBSVM 3.92%", not_checkable: "a batch solver okl does not run"}
      - source: "okl's reading of Table 3, not the paper's text"
        own: true                             # okl's reading: its verdict shown, outside the paper's totals
        text: "Read as the loss alone, Table 3's risks ..."
        checks: [{kind: paper, metric: risk_loss_tail, arms: [polk], reported_as: risk_tail}]
    deviations:                               # every setting that differs from the text, and why
      - "sigma = 4 with kors=code: ..."
      - id: adversary_search                  # named by claims; ablation: an arm run with the paper's setting
        text: "..."
        ablation: {arm: b_kons_C1, instead_of: b_kons, metric: loss}   # fails: true if it is to diverge;
        # brackets: true if the paper's unstated setting lies between ours and this one (checks.Paper)
    uncovered:                                # the paper's results no run covers, and why
      - {what: "Table 1, slice and year", why: "..."}
    replay: kernel_awv                        # optional: replay every arm but the ablations on this arm's sequence
    smoke_rounds: 80                          # optional: the rounds of a run under --smoke (default: SMOKE_ROUNDS)

A reported value is a number or ``[mean, std]``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from okl.errors import ConfigError
from okl.reproduce.checks import Claim, Paper, Tolerance, Verdict, parse

HERE = Path(__file__).parent / "artefacts"

ORDER = (  # the order of --list, --all and REPRODUCTION.md: paper by paper, as their artefacts are numbered
    "pkawv_fig2_cod_rna",
    "pkawv_fig2_susy",
    "pkawv_fig2_synthetic",
    "pkawv_fig3_adversary",
    "pkawv_taylor_convergence",
    "pkawv_fig4_casp",
    "pkawv_fig4_ijcnn1",
    "pros_n_kons_table1",
    "pros_n_kons_table2",
    "raker_fig1_twitter",
    "raker_fig1_tomshardware",
    "raker_fig1_energy",
    "raker_fig1_air",
    "raker_fig1_synthetic",
    "polk_fig2_multidist",
    "polk_fig3_multidist",
    "polk_fig4_multidist",
    "polk_table2_multidist",
    "polk_multidist_readings",
    "polk_fig5_mnist",
    "polk_fig7_mnist",
    "polk_order_mnist",
)

BENCH = (  # okl-bench
    "bench_synthetic",
    "bench_multikernel",
    "bench_casp",
    "bench_cod_rna",
    "bench_polk",
    "bench_river_casp",
    "bench_river_binary",
    "bench_river_bundled",
    "bench_river_bundled_binary",
)


OKL = "okl"  # the ``paper`` of okl's own benchmarks: their claims are okl's targets, their reported rows references


@dataclass(frozen=True)
class Reported:
    """The paper's numbers for one (dataset, arm) row, and where they are printed."""

    dataset: str
    arm: str
    source: str
    values: dict[str, float | tuple[float, float]]


@dataclass(frozen=True)
class Deviation:
    """A setting that differs from the paper's text; ``ablation``: the arm run with the paper's setting
    instead, and the arm of ours it replaces (the report prints both)."""

    text: str
    id: str = ""
    ablation: tuple[str, str] | None = None  # (arm with the paper's setting, our arm)
    metric: str | None = None  # what the ablation is compared on (default: the artefact's first metric)
    fails: bool = False  # the ablation is expected to stop (diverge): the report says where, not a failure
    brackets: bool = False  # the paper's unstated setting is taken to lie between ours and the ablation's: a number
    # of ours outside the paper's ± is explained where the ablation's lies across the paper's or within its ±
    # (checks.Paper)


@dataclass(frozen=True)
class Artefact:
    name: str
    paper: str
    title: str
    draws: str
    metrics: tuple[str, ...]
    reported: tuple[Reported, ...] = ()
    claims: tuple[Claim, ...] = ()
    deviations: tuple[Deviation, ...] = ()
    uncovered: tuple[tuple[str, str], ...] = ()  # (the paper's result, why no run covers it)
    tolerance: Tolerance | None = Tolerance()  # None: the reported numbers are references, not marked
    replay: str | None = None  # every arm is also replayed on the sequence this arm's run recorded
    own: bool = False  # okl's own experiment (a stream or a diagnostic the paper has not): outside the paper's totals
    smoke_rounds: int | None = None  # --smoke plays this many rounds per run (None: pipeline.SMOKE_ROUNDS)

    def paper_row(self, dataset: str, arm: str) -> Reported | None:
        return next((r for r in self.reported if (r.dataset, r.arm) == (dataset, arm)), None)

    @property
    def paper_values(self) -> dict[tuple[str, str], dict]:
        return {(r.dataset, r.arm): r.values for r in self.reported}

    def on_paper(self, claim: Claim) -> Verdict | None:
        """``claim`` checked on the paper's own printed numbers (:meth:`Claim.on_paper`); None for okl's own
        targets, whose reported rows are another program's references."""
        return None if self.paper == OKL else claim.on_paper(self.paper_values)

    @property
    def ablation_arms(self) -> set[str]:
        """The arms run with a paper's setting where ours differs (its deviations' ablations)."""
        return {d.ablation[0] for d in self.deviations if d.ablation}

    @property
    def failing_arms(self) -> set[str]:
        """The ablation arms expected to stop on an error (a diverging step): reported, not failures."""
        return {d.ablation[0] for d in self.deviations if d.ablation and d.fails}

    def deviation(self, id: str) -> Deviation | None:
        return next((d for d in self.deviations if d.id == id), None)


def load(name: str) -> Artefact:
    """The artefact ``name``; a ConfigError naming the known ones if there is none."""
    if name not in ORDER + BENCH:
        raise ConfigError(f"unknown artefact {name!r}; choose among: {', '.join(ORDER)} (okl-reproduce --list)")
    return _load(name)


@cache
def _load(name: str) -> Artefact:
    raw = yaml.safe_load((HERE / f"{name}.yaml").read_text())
    reported = []
    for row in raw.pop("reported", None) or []:
        keys = {k: row.pop(k) for k in ("dataset", "arm", "source")}
        values = {k: tuple(v) if isinstance(v, list) else float(v) for k, v in row.items()}
        reported.append(Reported(**keys, values=values))
    artefact = Artefact(
        name=name,
        paper=raw.pop("paper"),
        title=raw.pop("title"),
        draws=raw.pop("draws"),
        metrics=tuple(raw.pop("metrics")),
        reported=tuple(reported),
        claims=tuple(
            _claim(c, f"{HERE / name}.yaml, claim {i + 1}") for i, c in enumerate(raw.pop("claims", None) or ())
        ),
        deviations=tuple(_deviation(d) for d in raw.pop("deviations", None) or ()),
        uncovered=tuple((u["what"], u["why"]) for u in raw.pop("uncovered", None) or ()),
        tolerance=_tolerance(raw.pop("tolerance", {})),
        replay=raw.pop("replay", None),
        smoke_rounds=raw.pop("smoke_rounds", None),
        own=bool(raw.pop("own", False)),
    )
    if raw:
        raise ConfigError(f"artefact {name}: unknown keys {sorted(raw)} in {HERE / name}.yaml")
    artefact = dataclasses.replace(artefact, claims=tuple(_with_ablations(c, artefact) for c in artefact.claims))
    ids = {d.id for d in artefact.deviations}
    for claim in artefact.claims:
        if claim.explained_by and claim.explained_by not in ids:
            raise ConfigError(f"artefact {name}: claim explained_by {claim.explained_by!r} names no deviation id")
    return artefact


def _with_ablations(claim: Claim, artefact: Artefact) -> Claim:
    """The claim with its paper checks given the artefact's bracketing ablations on their metric (:class:`Paper`):
    a number of ours outside the paper's ± is explained where such an ablation lies across the paper's."""
    checks = tuple(
        dataclasses.replace(
            check,
            ablations=tuple(
                (d.ablation[1], d.ablation[0], d.id or d.ablation[0])
                for d in artefact.deviations
                if d.ablation and d.brackets and (d.metric or artefact.metrics[0]) == check.metric
            ),
        )
        if isinstance(check, Paper)
        else check
        for check in claim.checks
    )
    return dataclasses.replace(claim, checks=checks)


def _tolerance(raw: dict | None) -> Tolerance | None:
    return None if raw is None else Tolerance(**raw)


def _claim(raw: dict, where: str) -> Claim:
    raw = dict(raw)
    checks = tuple(parse(c, where) for c in raw.pop("checks", None) or ())
    try:
        claim = Claim(checks=checks, **raw)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if bool(claim.checks) == bool(claim.not_checkable):
        raise ConfigError(
            f"{where}: give the claim checks, or not_checkable: why no run can decide it (one of the two)"
        )
    return claim


def _deviation(raw: str | dict) -> Deviation:
    if isinstance(raw, str):
        return Deviation(raw.strip())
    ablation = raw.get("ablation") or {}
    pair = (ablation["arm"], ablation["instead_of"]) if ablation else None
    return Deviation(
        raw["text"].strip(),
        raw.get("id", ""),
        pair,
        ablation.get("metric"),
        ablation.get("fails", False),
        ablation.get("brackets", False),
    )


def all_artefacts() -> list[Artefact]:
    return [load(name) for name in ORDER]


def benchmarks() -> list[Artefact]:
    return [load(name) for name in BENCH]
