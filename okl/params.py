"""Parameter sets shared by several learners and comparators (one owner for each set of keys).

Each is a frozen dataclass whose ``__post_init__`` checks its own keys and then its other bases'
(cooperatively), so a learner's ``Params`` can combine them: ``class NystromParams(KernelParams,
KORSParams)``.

Example:

>>> from okl.params import KernelParams
>>> KernelParams(sigma=0.5)
KernelParams(sigma=0.5, lam=1.0)
>>> KernelParams(lam=0)
Traceback (most recent call last):
okl.errors.ConfigError: lam must be a finite number > 0 (got 0)
"""

from __future__ import annotations

from dataclasses import dataclass

from okl.dictionary.kors import WEIGHTS
from okl.errors import ConfigError
from okl.validation import bandwidth, non_negative, one_of, positive, seed


def _check_bases(params: object, cls: type) -> None:
    """Run the ``__post_init__`` of the classes after ``cls`` in ``params``'s MRO."""
    after = getattr(super(cls, params), "__post_init__", None)
    if after is not None:
        after()


@dataclass(frozen=True)
class GaussianParams:
    """sigma: the bandwidth σ of the Gaussian kernel k(x, x') = exp(−‖x − x'‖²/(2σ²)) (:mod:`okl.kernels`),
    for every learner and comparator that has one. Its default is the top-level ``sigma``'s, so that a
    learner built in Python and one run by ``okl-run`` agree (the presets set each paper's σ)."""

    sigma: float = 1.0

    def __post_init__(self) -> None:
        bandwidth("sigma", self.sigma)
        _check_bases(self, GaussianParams)


@dataclass(frozen=True)
class KernelParams(GaussianParams):
    """sigma (:class:`GaussianParams`); lam: ridge regularisation λ (Kernel-AWV, KRR and their
    comparators, pkawv_jezequel2019 eq. (3))."""

    lam: float = 1.0

    def __post_init__(self) -> None:
        positive("lam", self.lam)
        super().__post_init__()


@dataclass(frozen=True)
class KORSParams:
    """KORS's keys (sketched_kons_calandriello2017 Algorithm 2): eps (accuracy ε), beta (the
    over-sampling β), kors (the weights: ``eq4`` as Eq. 4 or ``code`` as the authors' code,
    :mod:`okl.dictionary.kors`) and seed (its coins). The ridge of its leverage scores is named by each
    learner (μ in pkawv_jezequel2019, γ in the KONS papers)."""

    eps: float = 0.5
    beta: float = 1.0
    kors: str = "eq4"
    seed: int = 0

    def __post_init__(self) -> None:
        seed("seed", self.seed)
        positive("eps", self.eps)
        positive("beta", self.beta)
        one_of("kors", self.kors, WEIGHTS)
        _check_bases(self, KORSParams)


ADDED = {"added": True}  # a key added after runs existed: in a run's identity only when set (okl.registry)


def dead_zone(epsilon: float, loss: str) -> None:
    """Check ``epsilon``, the dead zone ε of the learners that take one gradient step a round on an explicit
    feature map (FOGD, NOGD: :func:`okl.learners.ogd.ogd_block`): a round whose |ŷ − y| ≤ ε takes no step. Lu et
    al.'s released regression code (the source of pros_n_kons_calandriello2017 Table 1's FOGD and NOGD rows) steps
    only when |y − f(x)| > 0.1; ε = 0, the default, steps at every round. Square loss only. Each learner declares
    the key last, as ``field(default=0.0, metadata=ADDED)``, so that earlier runs keep their ids."""
    non_negative("epsilon", epsilon)
    if epsilon and loss != "square":
        raise ConfigError(f"epsilon (a dead zone on |ŷ − y|) takes the square loss, not {loss!r}: set epsilon=0")
