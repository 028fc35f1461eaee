"""The console scripts: ``okl-run`` (:mod:`okl.cli.run`), ``okl-data`` (:mod:`okl.cli.data`) and
``okl-regret`` (:mod:`okl.cli.regret`)."""
