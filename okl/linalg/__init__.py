"""Numerical cores shared by learners: online ridge/AWV on features, exact kernel ridge/AWV."""
