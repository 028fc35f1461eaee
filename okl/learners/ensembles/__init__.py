"""Aggregation of learners: exponential weights over experts (EWA) and experts on dyadic intervals
(the ensemble behind AdaRaker and AdaMKL)."""
