"""Learners of other libraries played as okl learners: river's models (``learner=river``)."""
