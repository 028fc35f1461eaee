"""The streaming runner: :mod:`~okl.runner.play` feeds the stream to the learner block by block,
:mod:`~okl.runner.lifecycle` claims, resumes, times and records a run and then runs its analyses."""

from okl.runner.lifecycle import Outcome, execute, finished

__all__ = ["Outcome", "execute", "finished"]
