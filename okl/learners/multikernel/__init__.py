"""Multi-kernel learners of raker_shen2018: Raker and AdaRaker (the text and the authors' code), the
OMKL and AdaMKL baselines and their single-kernel expert RBF-OGD."""
