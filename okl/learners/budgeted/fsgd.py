"""FSGD: functional stochastic gradient descent in a Gaussian RKHS (polk_koppel2019 §3.1, eqs.
(12)–(14); NORMA, Kivinen et al. 2004), with mini-batches as POLK's §5.

C class functions f_c = Σ_m W[m, c] κ(d_m, ·) share one dictionary D (C = 1 for the scalar losses).
Mini-batch k holds rounds (k−1)b + 1..kb; every round in it is predicted by f_k, then

    f̃_{k+1} = (1 − η_k λ) f_k − (η_k / b) Σ_{i ∈ batch} ∇_f ℓ(f_k(x_i), y_i) κ(x_i, ·)       (12), (17)
    D̃_{k+1} = [D_k, x_i ...],   W̃_{k+1} = [(1 − η_k λ) W_k; −(η_k / b) ∂ℓ_i/∂f ...]          (14), (18)

and FSGD keeps f̃ (the dictionary grows by b per batch: model order t); POLK
(:mod:`okl.learners.budgeted.polk`) prunes it. Steps: η_k = η (constant) or η/k (``diminishing``, Table 1),
with η_k λ < 1.

Mini-batches (``batch_step``): the paper states (17)–(18) for one sample, whose new weight is −η ℓ'(f(x_t), y_t),
and runs "mini-batches of 32" (§5.3) without writing the batch's step. ``mean`` (the default, above) averages the
batch's gradients: each new point weighs −(η/b) ℓ'. ``sum`` gives each point of the batch (18)'s own weight −η ℓ'
(b stochastic steps taken from the same f_k, the shrink applied once). The two differ by b in the new weights
only; they matter for POLK, whose KOMP budget ε = K η^{3/2} is set against η: on MNIST at §5.3's η = 24 and
K = 0.16 (ε = 18.8), ``mean`` weighs each new point at most 24/32 = 0.75 and KOMP prunes every one (an empty
model), ``sum`` keeps them (polk_fig5_mnist, deviation ``batch_step``).

Losses (``loss``): ``square``, ``hinge``, ``logistic`` (one function; :mod:`okl.losses`) or
``multi_hinge`` (26) / ``multi_logistic`` (28) (labels 0..C−1; the prediction is argmax_c f_c(x)).
Choices: the regulariser is Algorithm 2's shrink (1 − ηλ), i.e. (λ/2)Σ_c||f_c||² for every loss
(eq. (26) writes λΣ_c||f_c||²: its λ is half ours); the number of classes grows with the largest
label seen, new classes starting at f_c = 0, and the multi-class losses range over the classes seen: round t
predicts among the classes of y_1..y_{t−1} and its loss and gradient range over those of y_1..y_t, in a block as
round by round (a block that took every class of its mini-batch at once predicted, at round t, a class first
seen at t or later, and gave the mini-batch's first rounds gradients against classes not yet seen).

Per-round diagnostics: ``model_size`` (dictionary size M), ``risk``, the training objective
ℓ(f(x_t), y_t) + (λ/2) Σ_c ||f_c||²_H of the model that predicted round t, and ``penalty``, its (λ/2) Σ_c ||f_c||²_H
(the risk less the loss: with (18)'s weight per point on MNIST it is most of the risk, polk_fig7_mnist).

Example: Without a budget the expansion keeps every point:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("fsgd")(2, sigma=0.5, eta=0.3, loss="square")
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat)
(400, 0.0216)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from okl.errors import ConfigError
from okl.learners.base import register
from okl.learners.budgeted.expansion import KernelExpansion
from okl.losses import MULTICLASS, TRAINING, derivative, multiclass_loss, training_value
from okl.params import GaussianParams
from okl.validation import integer_at_least, non_negative, one_of, positive

LOSSES = (*TRAINING, *MULTICLASS)


@dataclass(frozen=True)
class FSGDParams(GaussianParams):
    """sigma: Gaussian bandwidth σ (κ = exp(−||x − x'||²/(2σ²))); eta: step η; lam: λ; loss;
    batch: mini-batch size b; diminishing: η_k = η/k instead of η; batch_step: ``mean`` (a new point weighs
    −(η/b) ℓ') or ``sum`` (each point (18)'s −η ℓ'), see the module."""

    eta: float = 1.0
    lam: float = 1e-6
    loss: str = "multi_hinge"
    batch: int = 1
    diminishing: bool = False
    batch_step: str = field(default="mean", metadata={"added": True})  # in a run's identity only when set

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("eta", self.eta)
        non_negative("lam", self.lam)
        one_of("loss", self.loss, LOSSES)
        integer_at_least("batch", self.batch, 1)
        one_of("batch_step", self.batch_step, ("mean", "sum"))
        if self.eta * self.lam >= 1:
            raise ConfigError(
                f"eta·lam must be < 1 (Table 1's step-size condition η < 1/λ; got {self.eta * self.lam:g})"
            )


@register("fsgd")
class FSGD(KernelExpansion):
    """Functional SGD: the dictionary keeps every point."""

    Params = FSGDParams
    lighter = "use polk, whose KOMP step keeps the dictionary small"
    revision = 2  # 1: a block's rounds see the classes of the labels before them only (the module's "Choices");
    # 2: the per-round penalty (λ/2)Σ_c||f_c||² is recorded beside the risk (the numbers are unchanged)

    def footprint(self, rounds: int) -> tuple[int, str]:
        """Every input and its coefficient, copied when the dictionary grows: 16·n·(d + 1) bytes (one class)."""
        return 16 * rounds * (self.d + 1), f"a dictionary of the {rounds:,} inputs of n={rounds:,} rounds"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)  # the dictionary D = X, coefficients W (M×C)
        self.norm2 = 0.0  # Σ_c ||f_c||²_H
        self.k = 0  # mini-batches done
        self.pending_X, self.pending_G = [], []  # the current mini-batch: inputs, loss gradients
        self.pending_A = []  # and the activations f_k(x_i)

    @property
    def eta(self) -> float:
        """η_k of the current mini-batch."""
        return self.params.eta / (self.k + 1) if self.params.diminishing else self.params.eta

    def _loss(self, A: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.multiclass:
            return multiclass_loss(self.params.loss, A, y)
        code = TRAINING[self.params.loss]
        G = np.array([derivative(code, a, t) for a, t in zip(A[:, 0], y, strict=True)]).reshape(-1, 1)
        return training_value(self.params.loss, A[:, 0], y), G

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        B, b = len(y), self.params.batch
        out, risk, penalty, size = np.empty(B), np.empty(B), np.empty(B), np.empty(B, dtype=np.int64)
        start = 0
        while start < B:
            stop = min(B, start + b - sum(map(len, self.pending_X)))  # up to the end of the mini-batch
            before = self.W.shape[1]
            self.add_classes(y[start:stop])
            A = predicted = learned = self.activations(X[start:stop])
            if self.W.shape[1] > before:  # classes first seen in this chunk: each round sees those up to its own
                seen = np.maximum(before, np.maximum.accumulate(y[start:stop].astype(np.int64)) + 1)
                predicted, learned = _unseen(A, np.concatenate([[before], seen[:-1]])), _unseen(A, seen)
            out[start:stop] = self.predictions(predicted)
            values, G = self._loss(learned, y[start:stop])
            penalty[start:stop] = 0.5 * self.params.lam * self.norm2
            risk[start:stop] = values + penalty[start:stop]
            self.pending_X.append(X[start:stop])
            self.pending_G.append(G)
            self.pending_A.append(A)
            size[start:stop] = len(self.X)
            if sum(map(len, self.pending_X)) == b:
                self._step()
                size[stop - 1] = len(self.X)
            start = stop
        self.recorded = {"model_size": size, "risk": risk, "penalty": penalty}
        return out

    def _step(self) -> None:
        """The mini-batch's update (18), then :meth:`project`."""
        eta, b = self.eta, self.params.batch
        shrink = 1.0 - eta * self.params.lam
        X_new = np.vstack(self.pending_X)
        A, G = (np.vstack(_pad(part, self.W.shape[1])) for part in (self.pending_A, self.pending_G))
        W_new = -(eta / b if self.params.batch_step == "mean" else eta) * G
        # ||f̃||² = s²||f||² + 2s Σ_i w_i·f(x_i) + Σ_ij w_i·w_j κ(x_i, x_j)
        self.norm2 = (
            shrink * shrink * self.norm2
            + 2.0 * shrink * np.einsum("ic,ic->", W_new, A)
            + np.einsum("ic,ij,jc->", W_new, self.kernel(X_new, X_new), W_new)
        )
        self.project(shrink * self.W, X_new, W_new)
        self.k += 1
        self.pending_X, self.pending_G, self.pending_A = [], [], []

    def project(self, W: np.ndarray, X_new: np.ndarray, W_new: np.ndarray) -> None:
        """Set f_{k+1} from f̃ = Σ W[m] κ(D_m, ·) + Σ W_new[i] κ(X_new[i], ·): FSGD keeps it whole."""
        self.X = np.vstack([self.X, X_new])
        self.W = np.vstack([W, W_new])


def _unseen(A: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """A with −∞ in the classes row i had not seen (c >= seen[i]): out of its argmax, its hinge's max over c ≠ y and its
    softmax (exp(−∞) = 0 adds nothing: the values and gradients of the classes seen are those of the round played
    alone)."""
    return np.where(np.arange(A.shape[1])[None, :] < seen[:, None], A, -np.inf)


def _pad(parts: list[np.ndarray], C: int) -> list[np.ndarray]:
    """The mini-batch's segments with zero columns for classes that appeared after them."""
    return [np.hstack([a, np.zeros((len(a), C - a.shape[1]))]) if a.shape[1] < C else a for a in parts]
