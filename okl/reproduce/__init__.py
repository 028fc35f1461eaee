"""Reproduction of the papers' artefacts (``okl-reproduce``) and the benchmarks (``okl-bench``).

An artefact is a preset, ``conf/experiment/<name>.yaml`` (its runs: datasets, learners as arms of the
config group ``arm/``, seeds), and a file ``okl/reproduce/artefacts/<name>.yaml`` (what the paper shows
and reports: :mod:`~okl.reproduce.catalog`). :mod:`~okl.reproduce.sweep` expands the preset's sweep as
``okl-run -m`` does, :mod:`~okl.reproduce.execute` plays the missing runs through the normal runner,
:mod:`~okl.reproduce.metrics` reads them back through :mod:`okl.results`, :mod:`~okl.reproduce.checks`
judges the paper's claims over them, :mod:`~okl.reproduce.figures` draws and :mod:`~okl.reproduce.report`
writes the tables, the verdicts, the scoreboard and REPRODUCTION.md;
:mod:`~okl.reproduce.pipeline` chains them for one artefact.
"""
