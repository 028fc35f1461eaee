"""Learners on random Fourier features: FOGD (gradient descent in the feature space)."""
