"""okl-reproduce and okl-bench: the artefacts' presets and files agree, the sweep expands as okl-run -m,
the whole path runs on short prefixes (--smoke), failures are isolated, bad input is one line."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import call

from helpers import only_run
from okl import config
from okl.cli import bench as bench_cli
from okl.cli import reproduce as cli
from okl.reproduce import catalog, pipeline, report, sweep
from okl.store import find

CONF = Path(__file__).resolve().parents[1] / "conf" / "experiment"


def reproduce(capsys, *argv):
    return call(lambda: cli.main(list(argv)), capsys)


def test_every_preset_is_an_artefact_and_every_artefact_a_preset():
    presets = [p.stem for p in CONF.glob("*.yaml")]
    assert sorted(catalog.ORDER + catalog.BENCH) == sorted(presets)


@pytest.mark.parametrize("name", catalog.ORDER + catalog.BENCH)
def test_artefact_names_only_arms_and_datasets_of_its_preset(name):
    """A reported row or the replayed arm that names no run of the preset would never be shown."""
    artefact = catalog.load(name)
    combos = sweep.combinations(name, [])
    arms = {o.split("=", 1)[1] for c in combos for o in c if o.startswith(sweep.ARM)}
    datasets = set(sweep.datasets(name, []))
    assert {(r.dataset, r.arm) for r in artefact.reported} <= {(d, a) for d in datasets for a in arms}
    assert artefact.replay is None or artefact.replay in arms
    for row in artefact.reported:
        assert set(row.values) <= set(artefact.metrics), (row.arm, row.values)


def test_sweep_expands_the_runs_okl_run_m_writes(okl_run, results_root):
    code, _, err = okl_run("-m", "experiment=pkawv_taylor_convergence", "n=30", "progress=false")
    assert code == 0, err
    written = {str(r.path) for r in find(results_root)}
    runs = sweep.expand("pkawv_taylor_convergence", ["n=30"])
    assert {str(r.plan.run_dir().path) for r in runs} == written and len(written) == 7 * 5  # 7 arms, 5 seeds
    arms = ["kernel_awv", *(f"taylor{m}" for m in range(1, 7))]
    assert [(r.arm, r.seed) for r in runs] == [(a, s) for a in arms for s in range(5)]


def test_planning_hides_the_older_objects_from_the_collector_only_while_it_plans(no_data, monkeypatch):
    """sweep.expand freezes the objects that were there before it (a full collection went through the imports'
    200,000 during planning) and hands them back to the collector when it returns, so a caller's objects are
    not kept from it for good; a process that froze objects itself keeps them frozen."""
    import gc

    from okl import config

    seen, plan = [], config.plan
    monkeypatch.setattr(config, "plan", lambda cfg: seen.append(gc.get_freeze_count()) or plan(cfg))
    assert gc.get_freeze_count() == 0
    sweep.expand("pros_n_kons_table1", ["seed=0", "dataset=casp", "arm/pros_n_kons=pros_n_kons"])
    assert seen and min(seen) > 0 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        sweep.expand("pros_n_kons_table1", ["seed=0", "dataset=casp", "arm/pros_n_kons=pros_n_kons"])
        assert gc.get_freeze_count() > 0.9 * frozen  # (frozen objects freed meanwhile leave the count)
    finally:
        gc.unfreeze()


def test_seeds_set_on_one_composition_reach_stream_and_learner(no_data):
    runs = sweep.expand("pros_n_kons_table1", ["seed=range(0,3)", "dataset=casp", "arm/pros_n_kons=pros_n_kons"])
    assert [(r.seed, r.plan.dataset.params.seed, r.plan.learner.params.seed) for r in runs] == [
        (s, s, s) for s in range(3)
    ]
    assert len({r.plan.run_id for r in runs}) == 3
    assert not no_data.exists()  # planned from the catalog: casp is neither read nor downloaded


def test_every_artefact_plans_its_runs_without_reading_data(no_data):
    """Table 2's preset (every arm on cod-rna and ijcnn1, 5 seeds) expands with no dataset anywhere, one distinct run
    per combination of its sweep; its runs plan the catalog's rounds (cod-rna.t alone, ijcnn1's two parts) as they
    will play them."""
    runs = sweep.expand("pros_n_kons_table2", [])
    assert len(runs) == len(sweep.combinations("pros_n_kons_table2", [])) > 200
    assert {r.plan.rounds for r in runs} == {271_617, 141_691}
    assert not no_data.exists()


@pytest.mark.slow
def test_smoke_draws_every_available_artefact_and_reuses_its_runs(mirror, results_root, tmp_path, capsys):
    out = tmp_path / "figures"
    absent = {a.name: pipeline.absent_data(a, pipeline.Options()) for a in catalog.all_artefacts()}
    skipped = {name for name, datasets in absent.items() if datasets}  # SUSY, unless a test cached a stand-in
    code, stdout, _ = reproduce(capsys, "--all", "--smoke", "--out", str(out))
    assert code == 0, stdout
    for name in skipped:
        assert f"skipped {name}: data absent: okl-data fetch {' '.join(absent[name])}" in stdout
    for name in set(catalog.ORDER) - skipped:
        assert (out / f"{name}.png").stat().st_size > 10_000, name
    assert f"{len(catalog.ORDER) - len(skipped)} of {len(catalog.ORDER)} drawn" in stdout
    report = (out / "REPRODUCTION.md").read_text()
    assert all(f"## {name}:" in report for name in catalog.ORDER)
    # the scoreboard first, printed at the end of the run too: every claim of every artefact counted once
    board = report.split("## Scoreboard: what reproduces\n", 1)[1].split("\nFailing claims:", 1)[0]
    assert "|" not in report.split("## Scoreboard")[0] and board in stdout
    rows = [line for line in board.splitlines() if line.startswith("| ") and "**all" not in line]
    counts = {line.split(" | ")[1].removesuffix(" (okl's experiment)"): line for line in rows}
    lists = report.split("Failing claims:", 1)[1].split("\n| artefact |")[0]
    failing, unresolved = lists.split("Claims our seeds do not resolve")
    for artefact in catalog.all_artefacts():
        cells = [int(c) for c in counts[artefact.name].strip("| ").split(" | ")[2:]]
        claims, checked, holds, partly, fails, not_resolved, not_run, not_checkable = cells
        papers = [c for c in artefact.claims if not c.own]  # okl's readings are shown, not counted
        assert claims == len(papers) == checked + not_run + not_checkable, artefact.name
        assert checked == holds + partly + fails + not_resolved
        assert not_checkable == sum(not c.checks for c in papers)
        assert artefact.name not in skipped or not_run == claims - not_checkable
        assert ("(okl's experiment)" in counts[artefact.name]) == artefact.own
        named = (f"- {artefact.name}: “", f"- {artefact.name} (okl's experiment): “")
        assert sum(line.startswith(named) for line in failing.splitlines()) == fails
        assert sum(line.startswith(named) for line in unresolved.splitlines()) == not_resolved
    for total in (line for line in board.splitlines() if "**all" in line):  # the paper's figures only
        paper = total.split(" | ")[0].strip("| ")
        figures = [a for a in catalog.all_artefacts() if a.paper == paper and not a.own]
        assert f"**all {len(figures)} of the paper's**" in total
        assert int(total.strip("| ").split(" | ")[2]) == sum(not c.own for a in figures for c in a.claims)
    # a verdict agrees with the runs it names: AdaRaker (the text's rules) holds as lowest only if it is
    raker = (out / "raker_fig1_synthetic.md").read_text()
    cells = [line.split(" | ") for line in raker.splitlines() if line.startswith("| synthetic |")]
    losses = {c[1]: float(c[4]) for c in cells}
    lowest = min(losses, key=losses.get) == "adaraker"
    claim = next(line for line in raker.splitlines() if line.startswith("- Raker achieves competitive"))
    assert f"AdaRaker, text: synthetic: loss adaraker {losses['adaraker']:.4g} |" in claim
    assert ("but adaraker ≥" not in claim) == lowest and (claim.split(" — ")[1].startswith("**holds**") <= lowest)
    # ours beside the paper's numbers, with their source
    table1 = (out / "pros_n_kons_table1.md").read_text()
    casp = next(line for line in table1.splitlines() if line.startswith("| casp | pros_n_kons |"))
    assert "0.06773 ± 0.00105" in casp and "Table 1" in casp
    # 8 arms, 7 replays: the ablation kernel_awv_search3x20 changes the adversary, so it is not replayed
    assert json.loads((out / "pkawv_fig3_adversary.json").read_text())["runs"] == 15
    # its runs play its own smoke_rounds (the paper's n = 80: its adversary's search is the costly part), the
    # other artefacts' runs SMOKE_ROUNDS
    adversary = catalog.load("pkawv_fig3_adversary")
    for artefact, rounds in ((adversary, 80), (catalog.load("pkawv_taylor_convergence"), pipeline.SMOKE_ROUNDS)):
        runs = sweep.expand(artefact.name, pipeline.Options.make(None, True).overrides_of(artefact))
        assert {r.plan.run_dir().manifest().rounds for r in runs} == {rounds}, artefact.name
    # a second pass runs nothing: every run (and replay) is reused
    code, stdout, _ = reproduce(capsys, "pkawv_fig3_adversary", "pros_n_kons_table1", "--smoke", "--out", str(out))
    assert code == 0 and "playing" not in stdout and stdout.count("all done before (reused)") == 3


def test_a_failing_run_is_listed_and_the_other_artefacts_still_drawn(results_root, tmp_path, capsys, monkeypatch):
    from okl import runner

    execute = runner.execute

    def broken(plan, progress):
        if plan.learner.name == "kernel_awv":
            raise RuntimeError("TypingError: numba cannot type this\nand a second line")
        return execute(plan, progress)

    monkeypatch.setattr(runner, "execute", broken)
    out = tmp_path / "figures"
    argv = ["pkawv_taylor_convergence", "polk_fig4_multidist", "--smoke", "--out", str(out)]
    code, stdout, _ = reproduce(capsys, *argv)
    assert code == 1
    failed = [line for line in stdout.splitlines() if line.startswith("FAILED")]
    assert failed == [
        "FAILED pkawv_taylor_convergence: kernel_awv on synthetic, seed 0: RuntimeError: TypingError: numba "
        "cannot type this"
    ]
    assert (out / "polk_fig4_multidist.png").exists()
    assert "second line" not in stdout and "Traceback" not in stdout


def test_a_report_holding_other_artefacts_is_never_cut_down_to_the_ones_drawn_here(
    results_root, tmp_path, monkeypatch, capsys
):
    """A fresh checkout has the committed REPRODUCTION.md but no figures/ (not in git): reproducing one artefact
    rebuilt the report from figures/ alone and dropped every other section. It now writes figures/REPRODUCTION.md
    and says why; --report names the file to replace; the same holds for okl-bench's BENCHMARKS.md."""
    monkeypatch.chdir(tmp_path)
    committed = "# Reproduction\n\n## pkawv_taylor_convergence: old\n\nold\n\n## polk_fig3_multidist: kept\n\nkept\n"
    Path("REPRODUCTION.md").write_text(committed)
    code, stdout, _ = reproduce(capsys, "pkawv_taylor_convergence")
    assert code == 0 and Path("REPRODUCTION.md").read_text() == committed
    assert stdout.startswith(
        "REPRODUCTION.md holds 1 artefact with no section under figures/ (polk_fig3_multidist), which rebuilding "
        "it from figures/ would drop: this report goes to figures/REPRODUCTION.md"
    )
    written = Path("figures/REPRODUCTION.md").read_text()
    assert "## pkawv_taylor_convergence:" in written and "](pkawv_taylor_convergence.png)" in written
    code, stdout, _ = reproduce(capsys, "pkawv_taylor_convergence", "--no-run", "--report", "REPRODUCTION.md")
    text = Path("REPRODUCTION.md").read_text()
    assert code == 0 and "kept" not in text and "](figures/pkawv_taylor_convergence.png)" in text
    Path("BENCHMARKS.md").write_text("# Benchmarks\n\n## bench_polk: x\n\n## bench_casp: y\n")
    out = Path("figures/bench")
    assert report.target(None, Path("BENCHMARKS.md"), out, ["bench_polk"], catalog.BENCH)[0] == out / "BENCHMARKS.md"
    assert report.target(None, Path("BENCHMARKS.md"), out, ["bench_polk", "bench_casp"], catalog.BENCH)[1] == ""


def test_a_section_cut_short_is_left_out_of_the_report_not_a_traceback(results_root, tmp_path, capsys):
    """A section's summary was written in place after its text: one cut short (a Ctrl-C as it was written) or not
    written yet (another okl-reproduce drawing into the same folder) was json's or the file system's traceback in
    every okl-reproduce after. Sections are written whole, the summary first, and one not whole is left out."""
    out = tmp_path / "figures"
    assert reproduce(capsys, "pkawv_taylor_convergence", "--smoke", "--out", str(out))[0] == 0
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left
    (out / "raker_fig1_synthetic.md").write_text("## raker_fig1_synthetic: half\n")
    (out / "raker_fig1_synthetic.json").write_text('{"runs": 3, "comp')  # cut short
    (out / "polk_fig2_multidist.md").write_text("## polk_fig2_multidist: no summary yet\n")
    code, stdout, err = reproduce(capsys, "pkawv_taylor_convergence", "--smoke", "--no-run", "--out", str(out))
    assert code == 0 and "Traceback" not in err
    text = (out / "REPRODUCTION.md").read_text()
    assert "## pkawv_taylor_convergence:" in text and "half" not in text and "no summary yet" not in text


def test_no_run_draws_nothing_new_and_says_what_is_missing(results_root, tmp_path, capsys):
    code, stdout, _ = reproduce(capsys, "polk_fig4_multidist", "--smoke", "--no-run", "--out", str(tmp_path))
    assert code == 1 and "2 of 2 runs missing (--no-run: not played)" in stdout
    assert "no finished runs to draw (okl-reproduce polk_fig4_multidist --smoke runs them)" in stdout  # not the full
    assert not find(results_root)


def test_absent_data_is_skipped_with_the_fetch_command(no_data, results_root, tmp_path, capsys):
    code, stdout, _ = reproduce(capsys, "pkawv_fig4_casp", "--smoke", "--out", str(tmp_path))
    assert code == 0
    assert "skipped pkawv_fig4_casp: data absent: okl-data fetch casp (or set OKL_DATA_MIRROR)" in stdout
    assert "Not drawn here: data absent" in (tmp_path / "REPRODUCTION.md").read_text()


def test_a_skipped_section_is_written_again_and_only_a_drawn_one_is_kept(tmp_path):
    """write_skipped kept any section an earlier okl-reproduce left, its own skipped one too: an artefact whose data
    is absent kept the claims, reason and counts of the first time it was skipped, after its file changed. A drawn
    section (data absent here, drawn elsewhere) is kept."""
    from okl.reproduce.checks import Claim

    artefact = catalog.load("pkawv_fig2_susy")
    report.write_skipped(artefact, "data absent: okl-data fetch susy", tmp_path)
    claim = Claim("§9", "A sentence added to the artefact since.", not_checkable="a reason")
    edited = dataclasses.replace(artefact, claims=(*artefact.claims, claim))
    report.write_skipped(edited, "data absent: okl-data fetch susy (or set OKL_DATA_MIRROR)", tmp_path)
    text = (tmp_path / "pkawv_fig2_susy.md").read_text()
    assert "A sentence added to the artefact since." in text and "(or set OKL_DATA_MIRROR)" in text
    summary = json.loads((tmp_path / "pkawv_fig2_susy.json").read_text())
    assert sum(summary["verdicts"].values()) == len(edited.claims)
    drawn = {"runs": 8, "compute_s": 1.0, "status": "drawn"}
    report.write_section(artefact, "## drawn elsewhere\n", drawn, tmp_path, report.verdicts(artefact, []))
    report.write_skipped(edited, "data absent: okl-data fetch susy", tmp_path)
    assert (tmp_path / "pkawv_fig2_susy.md").read_text() == "## drawn elsewhere\n"


def test_list_names_every_artefact_with_its_data(no_data, capsys):
    code, stdout, _ = reproduce(capsys, "--list")
    assert not no_data.exists()  # nothing read, nothing downloaded
    lines = stdout.splitlines()
    assert code == 0 and [line.split()[0] for line in lines] == list(catalog.ORDER)
    assert re.search(r"^pkawv_fig3_adversary .*\[adversary\]; data here$", stdout, re.M)
    assert re.search(r"^pros_n_kons_table2 .*; data absent: okl-data fetch cod_rna ijcnn1$", stdout, re.M)
    code, stdout, _ = reproduce(capsys, "--list", "pros_n_kons_table2", "pkawv_fig3_adversary")  # every one, before
    assert code == 0 and [line.split()[0] for line in stdout.splitlines()] == [
        "pros_n_kons_table2",
        "pkawv_fig3_adversary",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope"], "unknown artefact 'nope'; choose among: pkawv_fig2_cod_rna,"),
        ([], "name the artefacts to reproduce (okl-reproduce --list shows them), or pass --all"),
        (["--all", "nosuch", "--no-run"], "--all reproduces every artefact: drop nosuch, or drop --all"),  # played all
        (["--all", "--seeds", "0"], "--seeds and --jobs take a positive number"),
        (["--list", "nosuch"], "unknown artefact 'nosuch'; choose among"),  # every artefact was listed, exit 0
        (["--all", "--smoke", "--seeds", "2"], "--smoke plays one seed per run: drop --seeds"),  # seed 0 only, unsaid
    ],
)
def test_bad_arguments_are_one_line(capsys, argv, message):
    code, stdout, stderr = reproduce(capsys, *argv)
    assert code == 2 and stderr.startswith(f"okl-reproduce: error: {message}") and stderr.count("\n") == 1


def test_okl_bench_smoke_with_repeats_is_refused(capsys, tmp_path):
    """okl-bench --smoke --repeats 3 played each case once without a word."""
    code, stdout, stderr = call(lambda: bench_cli.main(["--smoke", "--repeats", "3", "--out", str(tmp_path)]), capsys)
    assert code == 2 and stdout == "" and stderr.count("\n") == 1
    assert stderr.startswith("okl-bench: error: --smoke plays each case once: drop --repeats")


@pytest.mark.parametrize("name", ["nosuch", "pkawv_fig2_synthetic"])
def test_okl_bench_names_the_benchmarks_for_an_unknown_case(capsys, name, tmp_path):
    """okl-bench nosuch listed the paper artefacts (okl-reproduce's), which okl-bench does not run."""
    code, stdout, stderr = call(lambda: bench_cli.main([name, "--out", str(tmp_path)]), capsys)
    assert code == 2 and stdout == ""
    assert stderr == f"okl-bench: error: {name!r} is not a benchmark; choose among: {', '.join(catalog.BENCH)}\n"


def test_bench_smoke_writes_its_table_from_fresh_processes(mirror, tmp_path, capsys, monkeypatch):
    """The planning line is timed by test_okl_bench_times_the_planning_of_the_largest_preset (two fresh processes
    planning its runs): here it only has to reach the report."""
    planning = "Planning the largest preset: timed by its own test."
    monkeypatch.setattr(bench_cli, "planning", lambda: planning)
    monkeypatch.chdir(tmp_path)  # no --out: a smoke section goes to figures/bench/smoke/, never to figures/bench/
    out = tmp_path / "figures" / "bench" / "smoke"
    code, stdout, _ = call(lambda: bench_cli.main(["bench_synthetic", "bench_polk", "--smoke"]), capsys)
    assert code == 0, stdout
    assert not list((tmp_path / "figures" / "bench").glob("*.md"))
    text = (out / "BENCHMARKS.md").read_text()
    assert f"\n{planning}\n" in text
    row = next(line for line in text.splitlines() if line.startswith("| synthetic | pkawv_taylor2 |"))
    assert "| 255 |" in row  # the authors' code, beside ours
    assert (out / "bench_polk.png").exists()
    assert "| multidist | polk | polk | 0 |" in text  # --smoke: one seed, one repeat
    _per_round_lines(text)


def test_bench_repeats_plays_each_run_that_many_times_in_fresh_processes(tmp_path, capsys, monkeypatch):
    """okl-bench --repeats (make bench: 3) had no test: each case's runs played --repeats times, each under a scratch
    root of its own, the table's numbers their mean ± std."""
    monkeypatch.setattr(bench_cli, "planning", lambda: "planning: not timed here")
    monkeypatch.setattr(bench_cli, "per_round", lambda *a, **k: "per round: not timed here")
    code, stdout, _ = call(lambda: bench_cli.main(["bench_polk", "--repeats", "2", "--out", str(tmp_path)]), capsys)
    assert code == 0, stdout
    text = (tmp_path / "BENCHMARKS.md").read_text()
    assert "played 2 times, each run" in text
    rows = [line for line in text.splitlines() if line.startswith("| multidist | polk | polk | 0–2 (×2) |")]
    assert len(rows) == 1 and " ± " in rows[0]  # three seeds, each played twice
    assert "| bench_polk | okl | Speed of POLK (Multi-KSVM) on multidist, seeds 0-2 | 6 |" in text  # 3 seeds × 2


def _per_round_lines(text: str) -> None:
    """BENCHMARKS.md's per-round lines (``okl-bench --smoke``: one pair of runs on 2,000 rounds): learner times of
    block=1 and of the blocks, read from the runs' manifests, and their ratio."""
    lines = text.split("Per-round path (river's `predict_one`/`learn_one`):\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(lines) == len(bench_cli.PER_ROUND)
    for line, learner in zip(lines, bench_cli.PER_ROUND, strict=True):
        found = re.fullmatch(
            rf"- `okl-run {' '.join(learner)} dataset=casp n=2000 block=1`: ([\d.]+) s of learner time against "
            r"([\d.]+) s in its blocks, ([\d.]+)× \(medians of 1\)\.",
            line,
        )
        assert found, line
        one, blocks, ratio = map(float, found.groups())
        assert blocks > 0 and ratio == pytest.approx(one / blocks, rel=0.02, abs=0.06)


def test_make_targets_call_the_tested_commands():
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert re.search(r"^figures:.*\n\t\$\(VENV\)/bin/okl-reproduce --all", makefile, re.M)
    assert re.search(r"^bench:.*\n\t\$\(VENV\)/bin/okl-bench$", makefile, re.M)


def test_peak_rss_of_a_spawned_run_is_its_own_not_its_parents():
    """Linux keeps the rusage maximum across exec: runs spawned by a 1.6 GB okl-bench reported 1.6 GB."""
    import subprocess
    import sys

    held = bytearray(400 * 2**20)
    held[::4096] = b"\x01" * len(held[::4096])  # resident
    code = "from okl.system import peak_rss; print(peak_rss())"
    child = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert child < 200 * 2**20 and len(held) == 400 * 2**20


def test_peak_rss_of_a_run_is_its_own_not_its_processes(okl_run, results_root):
    """A worker of okl-reproduce plays many runs: FOGD was recorded at 5.2 GB after a KRR run in the same worker."""
    from okl.system import peak_rss

    held = bytearray(600 * 2**20)
    held[::4096] = b"\x01" * len(held[::4096])  # resident, then freed: the process's peak stays above 600 MB
    del held
    before = peak_rss()
    code, _, err = okl_run("learner=fogd", "n=2000", "progress=false")
    assert code == 0, err
    recorded = only_run(results_root).manifest().peak_rss_bytes
    assert recorded < before - 400 * 2**20


def test_the_pool_starts_the_longest_expected_run_first_and_takes_runs_submitted_meanwhile(results_root):
    from okl.reproduce import execute

    runs = sweep.expand("pkawv_taylor_convergence", ["n=30"])
    pool = execute.Pool(jobs=1, say=lambda *args, **kwargs: None)
    for cost, run in enumerate(runs[:3]):
        pool.submit(run, cost, seconds=cost)
    order = []
    for tag, played in pool.results():
        assert played.status == "complete"
        order.append(tag)
        if tag == 2:  # a replay phase joins the queue while the pool plays
            pool.submit(runs[3], "late", seconds=1.5)
    assert order == [2, "late", 1, 0] and pool.finished == pool.submitted == 4
    assert 0 < pool.utilisation <= 1
    # each run was planned afresh where it played: no trained learner (kernel_awv's grows) outlives its run
    assert [r.arm for r in runs[:4]] == ["kernel_awv"] * 4 and all(r.plan.learner.model_size == 0 for r in runs[:4])
    pool.submit(runs[4], "one artefact", seconds=1)  # two artefacts sharing a run: played once, told to both
    pool.submit(runs[4], "another", seconds=1)
    assert [(tag, played.status) for tag, played in pool.results()] == [
        ("one artefact", "complete"),
        ("another", "complete"),
    ]
    assert pool.submitted == pool.finished == 5


def test_a_dead_worker_is_a_one_line_failure_of_the_runs_it_held_not_a_traceback(results_root):
    """An out-of-memory kill broke the process pool: BrokenProcessPool ended the whole reproduction."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from okl.reproduce import execute

    class Dead:  # every run's worker dies
        def submit(self, fn, *args):
            future = Future()
            future.set_exception(BrokenProcessPool("A process in the process pool was terminated abruptly"))
            return future

        def shutdown(self, cancel_futures=False):
            pass

    runs = sweep.expand("pkawv_taylor_convergence", ["n=30"])[:3]
    pool = execute.Pool(jobs=2, say=lambda *args, **kwargs: None)
    pool._executor.shutdown()
    pool._executor, pool._new_executor = Dead(), Dead
    for cost, run in enumerate(runs):
        pool.submit(run, cost, seconds=cost)
    got = [(tag, played.status, played.line) for tag, played in pool.results()]
    assert sorted(tag for tag, _, _ in got) == [0, 1, 2]
    assert {(status, line) for _, status, line in got} == {("failed", execute.WORKER_DIED)}


def test_artefacts_sharing_runs_play_them_once_in_the_pool(results_root, tmp_path, capsys):
    """polk_fig2 and polk_table2 share two runs: both copies went to the pool, and the one that found the other
    playing was reported as FAILED."""
    argv = ["polk_fig2_multidist", "polk_table2_multidist", "--smoke", "--jobs", "2", "--out", str(tmp_path)]
    code, stdout, _ = reproduce(capsys, *argv)
    assert code == 0 and "FAILED" not in stdout, stdout
    assert re.search(
        r"^pool: 7 runs on 2 workers, \d+% busy: the runs took [\d,]+ s in the workers", stdout, re.M
    )  # 6 + 3, 2 shared


def test_all_artefacts_share_one_pool_and_it_reports_its_use(results_root, tmp_path, capsys):
    argv = ["pkawv_taylor_convergence", "polk_fig4_multidist", "--smoke", "--jobs", "2", "--out", str(tmp_path)]
    code, stdout, _ = reproduce(capsys, *argv)
    assert code == 0, stdout
    assert re.search(r"^pool: 9 runs on 2 workers, \d+% busy: the runs took [\d,]+ s in the workers", stdout, re.M)
    assert (tmp_path / "pkawv_taylor_convergence.png").exists() and (tmp_path / "polk_fig4_multidist.png").exists()


def test_okl_results_and_the_report_print_the_same_mean_and_std_for_the_same_runs(results_root, tmp_path, capsys):
    """One definition of each number (okl.results): the same runs give the same mean ± std (sample std) and the
    same µs/round in both."""
    from okl import results

    code, stdout, _ = reproduce(capsys, "pkawv_taylor_convergence", "--seeds", "3", "--out", str(tmp_path))
    assert code == 0, stdout
    assert (tmp_path / "REPRODUCTION.md").is_file()  # --out holds the report too (it overwrote ./REPRODUCTION.md)
    table = results.summary(results_root, metrics=("average_loss", "us_per_round"))
    taylor3 = table[(table.learner == "pkawv_taylor") & (table["learner.M"] == 3)].iloc[0]
    assert taylor3.seeds == 3
    runs = results.runs(results_root, learner="pkawv_taylor")
    losses = runs[runs["learner.M"] == 3].average_loss
    assert taylor3.average_loss_std == pytest.approx(losses.std(ddof=1)) and losses.std(ddof=0) < losses.std(ddof=1)
    section = (tmp_path / "pkawv_taylor_convergence.md").read_text()
    row = next(line for line in section.splitlines() if line.startswith("| synthetic | taylor3 |"))
    assert f"{taylor3.average_loss:.4g} ± {taylor3.average_loss_std:.2g}" in row


def test_an_ablation_meant_to_diverge_is_reported_where_it_stopped_not_as_a_failure(
    mirror, results_root, tmp_path, capsys
):
    """raker_code_eta05 (the code's rule at §4's eta = 0.5) diverges on Twitter: the section says where and
    why beside ours, and the reproduction succeeds."""
    argv = ["raker_fig1_twitter", "--seeds", "1", "--out", str(tmp_path), "--report", str(tmp_path / "R.md")]
    code, stdout, _ = reproduce(capsys, *argv)
    assert code == 0 and "FAILED" not in stdout, stdout
    section = (tmp_path / "raker_fig1_twitter.md").read_text()
    deviation = next(line for line in section.splitlines() if line.startswith("- `code_eta`:"))
    assert re.search(
        r"Measured \(.*\): twitter: raker_code_eta05 stopped at round [\d,]+ \(seed 0\): raker predicted nan", deviation
    )
    assert "check its step size" not in deviation  # the runner's advice to its user is not a finding of the report


def test_figure_3_draws_the_learner_the_run_ended_with(okl_run, results_root):
    """A finished run keeps no state: Figure 3's learner is played again from the run's configuration, and it is
    the run's (its dictionary, its last prediction); its dictionary's distance to the modes is measured against the
    stream's points' (in σ, 0.91 "held" on the §5.2 draw where the stream's points lie at 0.93σ)."""
    from okl.reproduce.metrics import METRICS, Finished

    (run,) = sweep.expand(
        "polk_fig3_multidist", ["seed=0", "dataset=multidist_radius", "arm/polk_multidist=ksvm_K0.04"]
    )
    assert okl_run(*run.overrides, "progress=false")[0] == 0
    finished = Finished(run)
    rounds = finished.rounds
    assert finished.learner.model_size == rounds.model_size.iloc[-1]
    X_test, y_test = run.plan.dataset.test_set()
    assert finished.heldout.t.iloc[-1] == rounds.t.iloc[-1]  # scored after the last round
    assert np.mean(finished.learner.predict_many(X_test) != y_test) == finished.heldout.test_loss.iloc[-1]
    dataset = run.plan.dataset
    means = dataset.means.reshape(-1, 2)
    nearest = lambda P: np.sqrt(((P[:, None] - means[None]) ** 2).sum(-1)).min(axis=1)  # noqa: E731
    stream = np.concatenate([X for X, _ in dataset.chunks()])[: run.plan.rounds]  # against the stream's own points
    expected = nearest(finished.learner.dictionary.X).mean() / nearest(stream).mean()
    assert METRICS["dictionary_to_modes"].value(finished) == pytest.approx(expected)
    tail = rounds.iloc[-round(0.05 * len(rounds)) :]  # Table 3's risk in its two terms (polk_fig7_mnist, penalty)
    assert METRICS["penalty_tail"].value(finished) == pytest.approx(tail.penalty.mean()) and tail.penalty.min() > 0
    assert METRICS["risk_loss_tail"].value(finished) == pytest.approx((tail.risk - tail.penalty).mean())


def test_a_long_run_in_a_worker_shows_its_progress(results_root, monkeypatch):
    """okl-reproduce printed nothing during a 5-minute run: every PROGRESS_EVERY seconds, each run playing in a
    worker gets a line with the rounds its manifest has saved."""
    from okl.reproduce import execute

    monkeypatch.setattr(execute, "PROGRESS_EVERY", 0.3)
    overrides = ("learner=kernel_awv", "n=6000", "sink.part_rows=250", "block=50")
    run = sweep.Run(overrides, config.plan(sweep.compose_config(list(overrides))), "kernel_awv")
    said = []
    pool = execute.Pool(jobs=2, say=lambda *args, **kwargs: said.append(" ".join(map(str, args))))
    pool.submit(run, "only", seconds=1)
    assert [played.status for _, played in pool.results()] == ["complete"]
    pool.close()
    lines = [line for line in said if line.startswith("  … kernel_awv on synthetic, seed 0: ")]
    saved = [int(re.search(r": ([\d,]+) of 6,000 rounds saved", line)[1].replace(",", "")) for line in lines]
    assert any(0 < s < 6000 for s in saved) and saved == sorted(saved)


def test_a_smoke_artefact_reproduces_through_submitit_jobs(results_root, tmp_path, capsys):
    """okl-reproduce --launcher submitit_local: each missing run is a submitit job (a process of its own, as a
    SLURM job would be), then the artefact is drawn as usual."""
    argv = ["polk_fig3_multidist", "--smoke", "--jobs", "2", "--launcher", "submitit_local", "--out", str(tmp_path)]
    code, out, err = call(lambda: cli.main(argv), capsys)
    assert code == 0, err
    runs = list(find(results_root))
    assert len(runs) == 4 and all(r.manifest().status == "complete" for r in runs)
    assert all("submitit" in r.manifest().argv[0] for r in runs)  # played by a submitit job, not this process
    assert "1 of 1 drawn" in out and (tmp_path / "polk_fig3_multidist.png").is_file()
    assert len([job for job in (tmp_path / ".submitit").iterdir() if job.name.isdigit()]) == 4  # one job per run


def test_okl_bench_times_the_planning_of_the_largest_preset(no_data):
    """BENCHMARKS.md's planning line: two fresh processes, the second reading the compositions the first kept."""
    line = bench_cli.planning()
    found = re.fullmatch(
        r"Planning the largest preset, `okl-reproduce pros_n_kons_table1` \((\d+) runs, no data read\): "
        r"([\d.]+) s on a new machine, ([\d.]+) s once its compositions are kept \(`~/.cache/okl-compose/`\)\.",
        line,
    )
    assert found, line
    assert int(found[1]) == max(len(sweep.combinations(p.name, [])) for p in catalog.all_artefacts())
    assert not no_data.exists()


def test_okl_bench_skips_the_per_round_line_without_casp(no_data):
    assert bench_cli.per_round() == (
        "Per-round path: skipped, casp is not here (okl-data fetch casp, or set OKL_DATA_MIRROR)."
    )


def test_a_runs_expected_cost_reads_the_history_of_its_dataset_by_name_not_by_its_label():
    """A river stream's runs are labelled by stream (``Phishing``) in reports; the results name the dataset
    ``river``, and the pool's cost model reads the history under that name."""
    overrides = ("dataset=river", "dataset.stream=datasets.Phishing", "learner=fogd", "learner.eta=0.1")
    run = sweep.Run(overrides, config.plan(sweep.compose_config(list(overrides))), "fogd")
    assert run.dataset == "Phishing"
    history = {("fogd", "river"): 2e-3, ("fogd", ""): 1e-6}
    assert pipeline._expected_seconds(run, history) == pytest.approx(2e-3 * run.plan.rounds)


def test_unusable_out_and_report_paths_are_one_line_before_any_run(capsys, tmp_path, monkeypatch):
    """A folder given as --report, a --report in a missing folder, a file given as --out: tracebacks, okl-bench's after
    every case had played. Each is one line before anything runs (no run is started: pipeline.reproduce_all fails)."""
    monkeypatch.setattr(pipeline, "reproduce_all", lambda *a, **k: pytest.fail("a run started"))
    afile = tmp_path / "afile"
    afile.write_text("")
    cases = [
        (cli, ["raker_fig1_synthetic", "--no-run", "--report", str(tmp_path)], f"--report {tmp_path} is a folder"),
        (cli, ["raker_fig1_synthetic", "--no-run", "--out", str(afile)], f"--out {afile} is a file"),
        (bench_cli, ["bench_synthetic", "--smoke", "--report", str(tmp_path / "no" / "B.md")], "there is no folder"),
        (bench_cli, ["bench_synthetic", "--smoke", "--out", str(afile)], f"--out {afile} is a file"),
    ]
    for module, argv, message in cases:
        code, _, err = call(lambda module=module, argv=argv: module.main(argv), capsys)
        assert code == 2 and message in err and err.count("\n") == 1, err
