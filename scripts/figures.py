"""`make figures`: run the figure presets (complete runs are skipped) and draw them under figures/.

Each preset in conf/experiment/ carries its sweep (`hydra.sweeper.params`); this script expands the
sweep exactly as Hydra's basic sweeper does, runs `okl-run -m experiment=<name>` when some of its runs
are missing, then draws one PNG per preset from those runs only.

    python scripts/figures.py [--only NAME | --real] [--no-run] [--out figures]

``pkawv_fig3_adversary`` (Figure 3) also replays every learner on the sequence the adversary built
against Kernel-AWV and draws regret against t for both. The ``raker_fig1_*`` presets draw MSE(t), the
normalised CPU time (raker_shen2018 Figures 1–2) and the regret when the runs were scored.

``--real`` runs and draws the PKAWV Figures 2/4 presets on real data (casp, cod-rna, ijcnn1, SUSY),
skipping those whose dataset is neither cached, mirrored nor downloadable.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from hydra import compose, initialize_config_module  # noqa: E402
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper  # noqa: E402
from hydra.core.override_parser.overrides_parser import OverridesParser  # noqa: E402

from okl import config  # noqa: E402
from okl.errors import OklError  # noqa: E402
from okl.store import RunDir  # noqa: E402


def sweep(name: str) -> tuple[list[list[str]], list[str]]:
    """The override lists of preset ``name`` (one per run) and the swept keys."""
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        cfg = compose("config", overrides=[f"experiment={name}"], return_hydra_config=True)
        params = {str(k): str(v) for k, v in cfg.hydra.sweeper.params.items()}
        parsed = OverridesParser.create().parse_overrides([f"{k}={v}" for k, v in params.items()])
        combos = [c for batch in BasicSweeper.split_arguments(parsed, None) for c in batch]
        plans = [config.plan(compose("config", overrides=[f"experiment={name}", *c])) for c in combos]
    runs = {}
    for plan in plans:  # identical runs (a key the learner ignores) collapse to one directory
        runs.setdefault(plan.run_dir(), plan)
    return list(runs.items()), list(params)


def curves(run_dir: RunDir, points: int = 400) -> pd.DataFrame:
    """t, average loss and cumulative learner seconds at log-spaced rounds."""
    df = run_dir.rounds(["t", "cum_loss", "elapsed_ns", "y_hat"]).to_pandas()
    idx = np.unique(np.geomspace(1, len(df), points).astype(int) - 1)
    out = df.iloc[idx]
    return pd.DataFrame({"t": out.t, "avg_loss": out.cum_loss / out.t, "seconds": out.elapsed_ns / 1e9})


def label(plan, swept: list[str]) -> str:
    """Learner name and the swept keys it uses (``pkrr_taylor M=3``)."""
    params = dataclasses.asdict(plan.learner.params)
    shown = [
        f"{k}={params[k]:.3g}" if isinstance(params[k], float) else f"{k}={params[k]}" for k in swept if k in params
    ]
    return " ".join([plan.learner.name, *shown])


def loss_and_time(runs, swept, ax_loss, ax_time) -> None:
    for run_dir, plan in runs:
        c = curves(run_dir)
        status = run_dir.manifest()["status"]
        text = label(plan, swept) + ("" if status == "complete" else f" ({status})")
        ax_loss.loglog(c.t, c.avg_loss, label=text)
        ax_time.loglog(c.t, c.seconds.clip(lower=1e-6), label=text)
    ax_loss.set(xlabel="t", ylabel="average loss")
    ax_time.set(xlabel="t", ylabel="learner time (s)")
    ax_loss.legend(fontsize=7)


def draw(name: str, runs, swept, out: Path) -> Path:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    loss_and_time(runs, swept, *axes)
    if name == "taylor_convergence":  # prediction gap to Kernel-AWV against M
        exact = next(d.rounds().to_pandas().y_hat for d, p in runs if p.learner.name == "kernel_awv")
        gaps = sorted(
            (p.learner.params.M, np.abs(d.rounds().to_pandas().y_hat - exact).max())
            for d, p in runs
            if p.learner.name == "pkawv_taylor"
        )
        axes[1].clear()
        axes[1].semilogy(*zip(*gaps, strict=True), "o-")
        axes[1].set(xlabel="M (Taylor degree)", ylabel="max_t |ŷ_t(PKAWV-Taylor) - ŷ_t(Kernel-AWV)|")
    dataset = runs[0][1].dataset
    keys = ("preset", "x_scale", "y_scale", "shuffle", "d", "noise")  # the ones a reader needs, when present
    shown = {k: v for k, v in dataclasses.asdict(dataset.params).items() if k in keys and v is not None}
    return save(fig, f"{name}: {dataset.name}, {dataset.n:,} rounds {shown}", out / f"{name}.png")


def save(fig, title: str, path: Path) -> Path:
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def draw_raker(name: str, runs, swept, out: Path) -> Path:
    """raker_shen2018 Figures 1–2: MSE(t), the normalised CPU time (learner seconds over the slowest's)
    and, when the runs were scored against a comparator, the (dynamic) regret against t."""
    scored = [(d, p) for d, p in runs if p.comparator is not None]
    fig, axes = plt.subplots(1, 3 if scored else 2, figsize=(16 if scored else 11, 4))
    seconds = {}
    for run_dir, plan in runs:
        df = run_dir.rounds(["t", "cum_loss"]).to_pandas().sort_values("t")
        df = df[df.t >= min(100, len(df))]  # the first rounds' MSE would set the scale
        text = label(plan, swept)
        axes[0].plot(df.t, df.cum_loss / df.t, label=text)
        seconds[text] = run_dir.manifest()["learner_s"]
    axes[0].set(xlabel="t", ylabel="MSE(t) = (1/t) Σ (y − ŷ)²", yscale="log")
    axes[0].legend(fontsize=7)
    for ax in axes[:: len(axes) - 1]:
        ax.locator_params(axis="x", nbins=5)
    slowest = max(seconds.values())
    axes[1].barh(list(seconds), [v / slowest for v in seconds.values()])
    axes[1].set(xlabel=f"normalised CPU time (1 = {slowest:.2f} s)", xscale="log")
    axes[1].tick_params(axis="y", labelsize=7)
    if scored:
        for run_dir, plan in scored:
            df = run_dir.rounds(["t", "regret"]).to_pandas().sort_values("t")
            axes[2].plot(df.t, df.regret, label=label(plan, swept))
        axes[2].set(xlabel="t", ylabel=f"regret against {scored[0][1].comparator.name}")
    dataset = runs[0][1].dataset
    return save(fig, f"{name}: {dataset.name}, {dataset.n:,} rounds", out / f"{name}.png")


def replays(runs, swept: list[str], reference: RunDir) -> list[tuple[RunDir, object, list[str]]]:
    """(run dir, plan, overrides) replaying each learner of ``runs`` on the sequence ``reference`` recorded."""
    plan0 = runs[0][1]
    base = [
        "dataset=replay",
        f"dataset.run='{reference.path}'",
        f"comparator={plan0.comparator.name}",
        f"sigma={plan0.run.sigma}",
        f"lam={plan0.run.lam}",
    ]
    out = {}
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        for _, plan in runs:
            values = {k: "null" if v is None else v for k, v in dataclasses.asdict(plan.learner.params).items()}
            overrides = [*base, f"learner={plan.learner.name}", *(f"learner.{k}={v}" for k, v in values.items())]
            replay = config.plan(compose("config", overrides=overrides))
            out.setdefault(replay.run_dir(), (replay, overrides))
    return [(d, p, o) for d, (p, o) in out.items()]


def draw_regret(name: str, runs, replayed, swept, out: Path) -> Path:
    """Figure 3: regret against t, each learner against its own adversary, and all on one sequence."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    panels = (
        (runs, "each learner against its own greedy adversary"),
        (replayed, "all learners on the sequence built against kernel_awv"),
    )
    for ax, (group, title) in zip(axes, panels, strict=True):
        for run_dir, plan in group:
            df = run_dir.rounds(["t", "regret"]).to_pandas().sort_values("t")
            ax.plot(df.t, df.regret, label=label(plan, swept))
        ax.set(xlabel="t", ylabel="regret against the oracle refit on rounds 1..t", title=title)
        ax.title.set_fontsize(9)
        ax.legend(fontsize=7)
    dataset = runs[0][1].dataset
    return save(fig, f"{name}: greedy adversary, d = {dataset.d}, {dataset.n:,} rounds", out / f"{name}.png")


def replay_and_draw(name: str, runs, swept, out: Path, run_missing: bool) -> Path | None:
    """Replay every learner on the sequence the adversary built against Kernel-AWV, then draw."""
    reference = next((d for d, p in runs if p.learner.name == "kernel_awv"), None)
    if reference is None:
        return None
    replayed = replays(runs, swept, reference)
    for run_dir, _, overrides in replayed:
        if run_missing and (run_dir.manifest() or {}).get("status") != "complete":
            okl_run = [sys.executable, "-c", "from okl.cli.run import main; main()", "progress=false", *overrides]
            subprocess.run(okl_run, check=True, env=os.environ)
    present = [(d, p) for d, p, _ in replayed if (d.manifest() or {}).get("status") == "complete"]
    return draw_regret(name, runs, present, swept, out)


DRAWN = ("fig2_synthetic", "taylor_convergence", "pkawv_fig3_adversary", "raker_fig1_synthetic")  # `make figures`
REAL = (  # need the data: --real
    "pkawv_fig2_cod_rna",
    "pkawv_fig2_susy",
    "pkawv_fig4_casp",
    "pkawv_fig4_ijcnn1",
    "raker_fig1_twitter",
    "raker_fig1_tomshardware",
    "raker_fig1_energy",
    "raker_fig1_air",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=DRAWN + REAL)
    parser.add_argument("--real", action="store_true", help="the real-data presets whose datasets are available")
    parser.add_argument("--no-run", action="store_true", help="draw from existing runs only")
    parser.add_argument("--out", type=Path, default=Path("figures"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in [args.only] if args.only else REAL if args.real else DRAWN:
        try:
            runs, swept = sweep(name)
        except OklError as exc:
            if not args.real:
                raise
            print(f"{name}: skipped ({exc})")
            continue
        missing = [d for d, _ in runs if (d.manifest() or {}).get("status") not in ("complete", "timeout")]
        if missing and not args.no_run:
            print(f"{name}: running {len(missing)} of {len(runs)} runs", flush=True)
            okl_run = [sys.executable, "-c", "from okl.cli.run import main; main()", "-m", f"experiment={name}"]
            subprocess.run(okl_run, check=True, env=os.environ)
        present = [(d, p) for d, p in runs if d.parts()]
        if not present:
            print(f"{name}: no runs yet (okl-run -m experiment={name})")
            continue
        if name == "pkawv_fig3_adversary":
            print(f"{name}: {replay_and_draw(name, present, swept, args.out, not args.no_run)}")
        elif name.startswith("raker_fig1"):
            print(f"{name}: {draw_raker(name, present, swept, args.out)}")
        else:
            print(f"{name}: {draw(name, present, swept, args.out)}")


if __name__ == "__main__":
    main()
