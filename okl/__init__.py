"""okl: an experiment runner for online kernel learning.

The package is importable without numpy side effects so that the command line can pin BLAS threads
before numpy loads. Learners live in :mod:`okl.learners`, streams in :mod:`okl.datasets`, the runner in
:mod:`okl.runner` and the results reader in :mod:`okl.results`.
"""

__version__ = "0.1.0"
