"""PKAWV with a dictionary built beforehand (pkawv_jezequel2019 §3.2, "Beforehand known features",
Corollary 8).

The inputs x_1..x_n are known in advance and only the labels are revealed online: KORS (μ, ε, β)
runs over all inputs before round 1 and PKAWV uses the fixed subspace H = Span{φ(x), x ∈ I_n}, i.e.
AWV on fixed Nyström coordinates (O(m²) per round, no history kept). The runner shows the inputs
first (``beforehand = "inputs"``) and counts that pass as learner time.

Example: The dictionary is built from the inputs before round 1 and stays fixed:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("pkawv_nystrom_beforehand")(2, sigma=0.5, lam=1.0, seed=0)
>>> learner.prepare(X, None); learner.prepared()
>>> before = learner.model_size
>>> y_hat = learner.predict_learn_block(X, y)
>>> before == learner.model_size, mse(y_hat)
(True, 0.0364)
"""

from __future__ import annotations

import numpy as np

from okl.learners.base import register
from okl.learners.nystrom.pkawv_nystrom import PKAWVNystrom
from okl.linalg.online_ridge import OnlineRidge


@register("pkawv_nystrom_beforehand")
class PKAWVNystromBeforehand(PKAWVNystrom):
    """PKAWV on the span of a KORS dictionary of all the inputs."""

    beforehand = "inputs"

    def prepare(self, X: np.ndarray, y: np.ndarray | None) -> None:
        self.kors.run(X)

    def prepared(self) -> None:
        self.map.extend(self.kors.X)
        self.ridge = OnlineRidge(self.map.dim, self.params.lam, awv=self.awv)  # no rounds played yet
        self._record_sizes()

    def _record(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> None:
        """The span is fixed: nothing to keep."""

    def predict_one(self, x: np.ndarray) -> float:
        """The span is fixed: Algorithm 1's prediction at φ̃(x)."""
        return self.ridge.predict(self.map.transform(x)[0]) if self.map.dim else 0.0

    def learn_one(self, x: np.ndarray, y: float) -> None:
        if self.map.dim:
            self.ridge.update(self.map.transform(x)[0], y)

    def next_block(self, t: int, block: int) -> int:
        """No history pass to amortise: the configured blocks."""
        return block

    def _selected(self, X: np.ndarray) -> np.ndarray:
        return np.zeros(len(X), dtype=bool)

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        """Predictions at the rows of X as the coming round: the span is fixed, so a query is projected
        on it (no query joins the dictionary, unlike the online learner's)."""
        return self.ridge.predict_many(self.map.transform(X)) if self.map.dim else np.zeros(len(X))
