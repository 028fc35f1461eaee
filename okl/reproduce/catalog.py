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
    claims:                                   # what the paper states without a number
      - {source: "Appendix G, p. 24", text: "Kernel-AWV ... leads to the best regret"}
    deviations:                               # every setting that differs from the text, and why
      - "sigma = 4 with kors=code: ..."
    replay: kernel_awv                        # optional: replay every arm on this arm's recorded sequence

A reported value is a number or ``[mean, std]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from okl.errors import ConfigError

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
    "polk_fig4_multidist",
    "polk_table2_multidist",
    "polk_fig5_mnist",
)

BENCH = (  # okl-bench
    "bench_synthetic",
    "bench_multikernel",
    "bench_casp",
    "bench_cod_rna",
    "bench_polk",
    "bench_river_casp",
    "bench_river_binary",
)


@dataclass(frozen=True)
class Reported:
    """The paper's numbers for one (dataset, arm) row, and where they are printed."""

    dataset: str
    arm: str
    source: str
    values: dict[str, float | tuple[float, float]]


@dataclass(frozen=True)
class Artefact:
    name: str
    paper: str
    title: str
    draws: str
    metrics: tuple[str, ...]
    reported: tuple[Reported, ...] = ()
    claims: tuple[dict[str, str], ...] = ()
    deviations: tuple[str, ...] = ()
    replay: str | None = None  # every arm is also replayed on the sequence this arm's run recorded

    def paper_row(self, dataset: str, arm: str) -> Reported | None:
        return next((r for r in self.reported if (r.dataset, r.arm) == (dataset, arm)), None)


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
        claims=tuple(raw.pop("claims", None) or ()),
        deviations=tuple(raw.pop("deviations", None) or ()),
        replay=raw.pop("replay", None),
    )
    if raw:
        raise ConfigError(f"artefact {name}: unknown keys {sorted(raw)} in {HERE / name}.yaml")
    return artefact


def all_artefacts() -> list[Artefact]:
    return [load(name) for name in ORDER]


def benchmarks() -> list[Artefact]:
    return [load(name) for name in BENCH]
