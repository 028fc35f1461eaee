"""The figure of each kind of artefact, drawn from finished runs (one PNG per artefact).

- ``curves``: average loss and cumulative learner time against t, log-log (pkawv_jezequel2019 Figs. 2, 4);
- ``convergence``: the same, and max_t |ŷ_t(PKAWV-Taylor) − ŷ_t(Kernel-AWV)| against M;
- ``adversary``: regret against t, each learner against its own adversary and all of them replayed on the
  sequence built against Kernel-AWV (pkawv_jezequel2019 Fig. 3);
- ``raker``: MSE(t), the normalised CPU time and, when scored, the dynamic regret (raker_shen2018 Figs. 1–2);
- ``polk``: risk, held-out error (with the Bayes error where the stream knows it) and model order against
  the samples processed (polk_koppel2019 Figs. 2, 4, 5);
- ``bars``: ours (mean ± std over seeds) beside the paper's number, per dataset (the tables).

Curves show the first seed of each arm; tables average over the seeds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from okl.reproduce.catalog import Artefact  # noqa: E402
from okl.reproduce.metrics import METRICS, Finished, Row  # noqa: E402

POINTS = 400  # log-spaced rounds drawn per curve


def draw(artefact: Artefact, rows: list[Row], replays: list[Finished], path: Path) -> Path:
    """Draw the artefact's figure from its rows (and, for the adversary, the replays) to ``path``."""
    first = [row.first for row in rows]
    fig = KINDS[artefact.draws](artefact, rows, first, replays)
    rounds = max(f.run.plan.rounds for f in first)
    names = sorted({row.dataset for row in rows})
    fig.suptitle(f"{artefact.paper} {artefact.title} — {', '.join(names)}, up to {rounds:,} rounds", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _label(f: Finished) -> str:
    learner = f.run.plan.learner.name
    text = f.run.arm if f.run.arm == learner else f"{f.run.arm} ({learner})"
    status = f.row["status"]
    return text if status == "complete" else f"{text}, {status} at {f.row['rounds']:,}"


def _sampled(f: Finished):
    df = f.rounds
    idx = np.unique(np.geomspace(1, len(df), POINTS).astype(int) - 1)
    return df.iloc[idx]


def _curves(artefact: Artefact, rows: list[Row], runs: list[Finished], replays, axes=None):
    fig, (loss, time) = plt.subplots(1, 2, figsize=(11, 4)) if axes is None else (None, axes)
    for f in runs:
        df = _sampled(f)
        loss.loglog(df.t, f.percent * df.cum_loss / df.t, label=_label(f))
        time.loglog(df.t, (df.elapsed_ns / 1e9).clip(lower=1e-6), label=_label(f))
    unit = "average loss" + ("" if runs[0].percent == 1 else " (% error)")
    loss.set(xlabel="t", ylabel=unit)
    time.set(xlabel="t", ylabel="learner time (s)")
    loss.legend(fontsize=7)
    return fig


def _convergence(artefact: Artefact, rows: list[Row], runs: list[Finished], replays):
    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    _curves(artefact, rows, runs, replays, axes[:2])
    exact = next((f.rounds.y_hat.to_numpy() for f in runs if f.run.plan.learner.name == "kernel_awv"), None)
    if exact is None:  # its run failed: the other panels are still drawn
        axes[2].text(0.5, 0.5, "no Kernel-AWV run to compare with", ha="center", transform=axes[2].transAxes)
        return fig
    gaps = sorted(
        (f.run.plan.learner.params.M, np.abs(f.rounds.y_hat.to_numpy() - exact).max())
        for f in runs
        if f.run.plan.learner.name == "pkawv_taylor"
    )
    axes[2].semilogy(*zip(*gaps, strict=True), "o-")
    axes[2].set(xlabel="M (Taylor degree)", ylabel="max_t |ŷ_t(PKAWV-Taylor) − ŷ_t(Kernel-AWV)|")
    return fig


def _adversary(artefact: Artefact, rows: list[Row], runs: list[Finished], replays: list[Finished]):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    panels = ((runs, "each learner against its own greedy adversary"), (replays, "replayed on Kernel-AWV's sequence"))
    for ax, (group, title) in zip(axes, panels, strict=True):
        for f in group:
            ax.plot(f.rounds.t, f.rounds.regret, label=_label(f))
        ax.set(xlabel="t", ylabel="regret against the oracle refit on rounds 1..t", title=title)
        ax.title.set_fontsize(9)
        ax.legend(fontsize=7)
    return fig


def _raker(artefact: Artefact, rows: list[Row], runs: list[Finished], replays):
    scored = [f for f in runs if f.run.plan.comparator is not None]
    fig, axes = plt.subplots(1, 3 if scored else 2, figsize=(16 if scored else 11, 4))
    for f in runs:
        df = f.rounds[f.rounds.t >= min(100, len(f.rounds))]  # the first rounds' MSE would set the scale
        axes[0].plot(df.t, df.cum_loss / df.t, label=_label(f))
    axes[0].set(xlabel="t", ylabel="MSE(t) = (1/t) Σ (y − ŷ)²", yscale="log")
    axes[0].legend(fontsize=7)
    seconds = {_label(f): f.row["learner_s"] for f in runs}
    slowest = max(seconds.values())
    axes[1].barh(list(seconds), [max(v / slowest, 1e-4) for v in seconds.values()])
    axes[1].set(xlabel=f"normalised CPU time (1 = {slowest:.2f} s)", xscale="log")
    axes[1].tick_params(axis="y", labelsize=7)
    for f in scored:
        axes[2].plot(f.rounds.t, f.rounds.regret, label=_label(f))
    if scored:
        axes[2].set(xlabel="t", ylabel=f"dynamic regret against {scored[0].run.plan.comparator.name}")
    return fig


def _polk(artefact: Artefact, rows: list[Row], runs: list[Finished], replays):
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for f in runs:
        df = f.rounds
        axes[0].semilogy(df.t, df.risk.rolling(250, min_periods=1).mean(), label=_label(f))
        if f.heldout is not None:
            axes[1].plot(f.heldout.t, 100 * f.heldout.test_loss, marker=".", label=_label(f))
        axes[2].plot(df.t, df.model_size, label=_label(f))
    dataset = runs[0].run.plan.dataset
    if hasattr(dataset, "bayes_error"):
        axes[1].axhline(100 * dataset.bayes_error(), color="grey", linestyle=":", label="Bayes error")
    axes[0].set(xlabel="samples processed", ylabel="risk (running mean over 250 rounds)")
    axes[1].set(xlabel="samples processed", ylabel="held-out error (%)")
    axes[2].set(xlabel="samples processed", ylabel="model order", yscale="log")
    axes[1].legend(fontsize=7)
    return fig


def _bars(artefact: Artefact, rows: list[Row], runs: list[Finished], replays):
    """Per dataset, each arm's mean ± std of the table's first metric, with the paper's number where it has one."""
    metric = artefact.metrics[0]
    names = sorted({row.dataset for row in rows})
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        shown = [row for row in rows if row.dataset == name]
        arms = [row.arm for row in shown]
        ours = [row.summary(metric) for row in shown]
        x = np.arange(len(arms))
        ax.bar(x, [m for m, _ in ours], yerr=[s for _, s in ours], label="ours (mean ± std over seeds)")
        paper = [artefact.paper_row(name, arm) for arm in arms]
        values = [np.atleast_1d(p.values[metric])[0] if p and metric in p.values else np.nan for p in paper]
        ax.plot(x, values, "k_", markersize=18, markeredgewidth=2, label="paper")
        ax.set_xticks(x, arms, rotation=60, ha="right", fontsize=7)
        ax.set(title=name, ylabel=METRICS[metric].header)
    axes[0][0].legend(fontsize=7)
    return fig


def _readings(artefact: Artefact, rows: list[Row], runs: list[Finished], replays):
    """Per reading of the data: its Bayes error, the exact batch fit's error, POLK's and BSGD's held-out error
    (means over seeds), with Table 2's numbers as lines."""
    names = list(dict.fromkeys(row.dataset for row in rows))
    bars = [("Bayes", "bayes_error", "ksvm_K0.04"), ("batch fit", "batch_error", "ksvm_K0.04")]
    bars += [("POLK", "heldout", "ksvm_K0.04"), ("BSGD", "heldout", "bsgd_B16")]
    fig, ax = plt.subplots(figsize=(10, 4))
    x = np.arange(len(names))
    for k, (label, metric, arm) in enumerate(bars):
        found = {row.dataset: row.summary(metric) for row in rows if row.arm == arm}
        values = [found[name][0] if found.get(name) else np.nan for name in names]
        ax.bar(x + (k - 1.5) * 0.2, values, width=0.2, label=label)
    for value, label in ((3.92, "paper: LIBSVM 3.92%"), (21.8, "paper: BSGD 21.8%")):
        ax.axhline(value, color="grey", linestyle=":", linewidth=1)
        ax.annotate(label, (x[-1] + 0.45, value), fontsize=7, va="bottom", ha="right")
    ax.set_xticks(x, names)
    ax.set(ylabel="error (%)", yscale="log")
    ax.legend(fontsize=7)
    return fig


def _surfaces(artefact: Artefact, rows: list[Row], runs: list[Finished], replays):
    """polk_koppel2019 Figure 3: for each (dataset, arm), the decision surface of the first seed's learner at
    the end of its stream (each grid point coloured by its predicted class), the training points by class and
    the kernel dictionary in bold black."""
    fig, axes = plt.subplots(1, len(runs), figsize=(4.5 * len(runs), 4.2), squeeze=False)
    for ax, f in zip(axes[0], runs, strict=True):
        X, y = next(f.run.plan.dataset.chunks())
        low, high = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
        gx, gy = np.meshgrid(np.linspace(low[0], high[0], 200), np.linspace(low[1], high[1], 200))
        classes = f.learner.predict_many(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
        count = int(max(classes.max(), y.max())) + 1
        levels, colours = np.arange(count + 1) - 0.5, plt.cm.tab10.colors[:count]  # class c: the c-th colour
        ax.contourf(gx, gy, classes, levels=levels, colors=colours, alpha=0.25)
        ax.contour(gx, gy, classes, levels=levels, colors="k", linewidths=0.6)
        ax.scatter(X[::5, 0], X[::5, 1], c=[colours[int(c)] for c in y[::5]], s=3)
        points = f.learner.dictionary.X
        ax.scatter(points[:, 0], points[:, 1], c="k", s=25, label=f"dictionary ({len(points)})")
        ax.set(title=f"{f.run.arm} on {f.run.dataset}", xlabel="x₁", ylabel="x₂")
        ax.legend(fontsize=7, loc="lower right")
    return fig


KINDS: dict[str, Callable] = {
    "curves": _curves,
    "convergence": _convergence,
    "adversary": _adversary,
    "raker": _raker,
    "polk": _polk,
    "bars": _bars,
    "readings": _readings,
    "surfaces": _surfaces,
}
