"""The greedy adversary of pkawv_jezequel2019 Appendix G (Figure 3).

At round t the adversary chooses (x_t, y_t) ∈ [−a, a]^d × [−B, B] to maximise the learner's regret
(eq. (1)) against the kernel-ridge oracle refit on the rounds so far plus the candidate:

    R_t(x, y) = Σ_{s<t} (ŷ_s − y_s)² + (ŷ_t(x) − y)² − L_t(x, y),

where ŷ_t(x) is the learner's prediction at x (a pure query) and L_t(x, y) the oracle's loss on
its t rounds (:mod:`okl.linalg.ridge_oracle`; Gaussian kernel σ, ridge λ; σ = λ = 1 in the paper).
The first sum does not depend on the candidate, and for fixed x the rest is a quadratic in y, so
y is solved in closed form: the best of ±B and the clipped vertex. x is searched as the paper
does, with scipy's bounded optimiser (L-BFGS-B) from random starts:

- ``screen`` uniform points of the box are scored in one batch and the ``starts`` best start
  L-BFGS-B (at most ``maxiter`` iterations each);
- gradients are forward differences (step ``1e-6``, backward at the upper bound), all d + 1 points
  scored in one batch, so that a batch costs one t×t by t×(d+1) product in the oracle and one
  batched query of the learner.

The oracle is incremental (O(t²) per candidate and per round instead of a refit), which is what
lets n = 1000 rounds run in about a minute per learner (``make bench``); the paper stopped at n = 80.
Coins come from ``rng(seed, "adversary", t)``: the sequence is a deterministic function of the
seed and of the learner's predictions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from okl.datasets.base import Environment, Generated, register
from okl.errors import ConfigError
from okl.kernels import Kernel
from okl.linalg.ridge_oracle import RidgeOracle
from okl.seeding import rng
from okl.validation import integer_at_least, positive, seed

STEP = 1e-6


@dataclass(frozen=True)
class AdversaryParams:
    """d: input dimension; length: rounds; sigma, lam: the oracle's Gaussian bandwidth and ridge;
    x_bound, y_bound: the box [−x_bound, x_bound]^d and labels in [−y_bound, y_bound]; screen,
    starts, maxiter: the search (random points scored, L-BFGS-B starts, iterations each); seed."""

    d: int = 5
    length: int = 1000
    sigma: float = 1.0
    lam: float = 1.0
    x_bound: float = 1.0
    y_bound: float = 1.0
    screen: int = 64
    starts: int = 2
    maxiter: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        seed("seed", self.seed)
        for key in ("d", "length", "screen", "starts", "maxiter"):
            integer_at_least(key, getattr(self, key), 1)
        for key in ("sigma", "lam", "x_bound", "y_bound"):
            positive(key, getattr(self, key))
        if self.starts > self.screen:
            raise ConfigError(f"starts={self.starts} exceeds screen={self.screen}: starts are the best screened points")


@register("adversary")
class Adversary(Environment, Generated):
    """Greedy regret-maximising adversary against the kernel-ridge oracle."""

    Params = AdversaryParams

    def __init__(self, **params) -> None:
        super().__init__(**params)
        p = self.params
        self.oracle = RidgeOracle(p.d, Kernel("gaussian", p.sigma), p.lam)
        self.chosen_gain: list[float] = []  # (ŷ_t − y_t)² − (L_t − L_{t−1}) of each chosen round

    def gain(self, query: Callable[[np.ndarray], np.ndarray], X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each candidate x: max_y (ŷ(x) − y)² − L_t(x, y) + L_{t−1}, and the maximising y."""
        B = self.params.y_bound
        p = query(X)
        terms, _ = self.oracle.terms(X)
        o = self.oracle
        c = o.lam**2 * (terms.uu + 1.0) / terms.s**2  # the y² coefficient of L_t is c, of the gain 1 − c
        with np.errstate(divide="ignore", invalid="ignore"):
            vertex = (p - o.lam**2 * terms.uw / terms.s - c * terms.m) / (1.0 - c)
        vertex = np.where(c > 1.0, np.clip(vertex, -B, B), B)  # concave in y: the vertex may win
        Y = np.stack([np.full_like(p, -B), np.full_like(p, B), vertex])
        G = (p - Y) ** 2 - o.loss_after(terms, Y) + o.loss
        best = np.argmax(G, axis=0)
        cols = np.arange(len(p))
        return G[best, cols], Y[best, cols]

    def choose(self, query: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, float]:
        p = self.params
        g = rng(p.seed, "adversary", self.oracle.t)
        a = p.x_bound
        screen = g.uniform(-a, a, (p.screen, p.d))
        values, _ = self.gain(query, screen)
        best_x, best = screen[np.argmax(values)], float(values.max())
        from scipy.optimize import minimize  # here, not at the top: okl-run's start-up does not pay for scipy.optimize

        for x0 in screen[np.argsort(-values, kind="stable")[: p.starts]]:
            res = minimize(
                lambda x: self._negative(query, x),
                x0,
                jac=True,
                method="L-BFGS-B",
                bounds=[(-a, a)] * p.d,
                options={"maxiter": p.maxiter},
            )
            if -res.fun > best:
                best_x, best = np.clip(res.x, -a, a), -float(res.fun)
        value, y = self.gain(query, best_x[None, :])
        self.chosen_gain.append(float(value[0]))
        self.oracle.add(best_x, float(y[0]))
        return best_x, float(y[0])

    def _negative(self, query, x: np.ndarray) -> tuple[float, np.ndarray]:
        """−gain at x and its forward-difference gradient, from one batch of d + 1 points."""
        a = self.params.x_bound
        h = np.where(x + STEP <= a, STEP, -STEP)
        P = np.vstack([x, x + np.diag(h)])
        values, _ = self.gain(query, P)
        return -float(values[0]), -(values[1:] - values[0]) / h
