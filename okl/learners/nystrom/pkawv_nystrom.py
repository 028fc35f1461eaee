"""PKAWV with Nyström projections on a KORS dictionary (pkawv_jezequel2019 §3.2, eq. (8), Theorem 6,
Appendix H Algorithm 2).

At round t, KORS (:mod:`okl.dictionary.kors`, parameters μ, ε, β) decides from x_t alone whether x_t
joins the dictionary I_t; the forecaster is PKAWV (eq. (4)) on H_t = Span{φ(x), x ∈ I_t}:

    f_t ∈ argmin_{f ∈ H_t} Σ_{s<t} (y_s − f(x_s))² + λ||f||² + f(x_t)²,      ŷ_t = f_t(x_t),

i.e. AWV on the Nyström coordinates φ̃ of :mod:`okl.dictionary.nystrom` (an orthonormal basis of
H_t, so ||f||² = ||w||²). Like Algorithm 2, a point selected at round t is in the span used to
predict round t.

Implementation: between dictionary changes the state is linear AWV on φ̃ (A⁻¹ and b, blocks through
:class:`~okl.linalg.online_ridge.OnlineRidge`, O(m²) per round for m coordinates). KORS reads inputs
only, so a block first settles its dictionary additions; their coordinates are then appended to all
past rounds in one pass over the stored history (:mod:`okl.dictionary.history`, O(n m k) flops for k
points, as matrix products), and each joins A and b at its own round, with its statistics over every
earlier round (past blocks from that pass, this block's rows from the block's features). This is
never a re-solve against the n×m matrix each round as the authors' code does. Blocks grow with t
(``next_block``), so the passes are few. With every point in the dictionary this is
exact Kernel-AWV (a test checks it); ``pkrr_nystrom`` drops the f(x_t)² term.

One round at a time (river's ``predict_one``/``learn_one``, ``okl-run block=1``): a round whose point does not
join is one compiled call to predict (KORS's Eq. 4 on L⁻¹k(I, x), φ̃(x) = R⁻¹k_Z(x) from the same kernel row,
the ridge's v = A⁻¹φ̃) and one to learn (Algorithm 1's rank-one update with that v), O(m² + md) as in a block;
a round whose point joins adds it from that same call's kernel row, projection and embedding (KORS's new row of
L, the map's l = φ̃(x), ψ(x) = ρ), and its one pass over the history (O(nm), which a block shares between all the
points it adds) serves both its prediction and its addition. The floor of a round that adds no point is its four
matrix-vector products, each a pass over an m×m triangle in the core's cache (a block does the same work as
matrix products): the two triangular ones (:func:`~okl.linalg.triangular.lower_times`, 2.4 µs each at m = 169),
Pφ̃ (2.9 µs) and the rank-one update (2.8 µs). Measured on casp's 45,730 rounds (pkrr, σ = λ = 1, one process,
three alternating pairs, at ``lower_times``'s commit): the 45,561 rounds that add no point 0.67-0.71 s (0.72-0.79
s with BLAS's triangular product), the 169 that add one 0.18-0.21 s, nearly all of it their passes over the history
(0.15 s in the predictions), against 0.26-0.28 s for the whole stream in blocks. Earlier, on casp (pkrr,
σ = λ = 1, m = 169 at the end, ``okl-bench``'s per-round line, idle machine): 7.0 s of learner time with calls
through KORS, the map and the ridge, 1.4-1.6 s with the compiled calls, against 0.3-0.4 s in blocks; then (in
one process, a loaded machine, against the commit before) a joining round taken from its prediction: CPU
2.29-2.40 → 2.04-2.21 s, the 169 joining rounds 0.64-1.01 → 0.48-0.77 s.

The floor of the per-round path, measured on casp (pkrr, σ = λ = 1, one process, the older objects frozen as
``okl-run`` does, three runs, a machine whose blocks took 0.31-0.45 s in the same process): the compiled calls
alone (:func:`_peek_one`, then ``update_one``, KORS's skip and the history's record, no Python around them) take
0.60-0.66 s for the rounds that add no point, the joining rounds 0.24-0.26 s, so 2.5-3.0× the blocks' 0.31-0.33 s
before any Python is counted; through ``predict_one``/``learn_one`` the rounds that add no point took 0.78-0.92 s
(with the checks of the inputs, the key of the round and the calls' frames), and ``okl-bench``'s per-round line
reads 3.5× (BENCHMARKS.md). A round's matrix-vector products are
bound by the core's cache bandwidth where the block's matrix products are bound by its arithmetic, so rounds played
one by one stay near 3× the blocks whatever their Python costs.

Two threads: while the ridge plays SUB rounds, a second thread embeds the next SUB (kernel rows, the
triangular product, and the new coordinates' statistics over them) and records the last ones in the
history; the history pass and KORS's products are split between the two threads too. The BLAS calls
on these paths release the GIL (:mod:`okl.linalg.nogil_blas`; scipy's wrappers hold it, which had
left the two threads taking turns). Each thread keeps one BLAS thread and the work is split the same
way whatever the timing, so results are deterministic, and bit-identical to one thread's. Measured
on the 271,617 rounds of cod-rna (pkrr, σ = λ = 1, ``okl-run``, three alternating pairs): 14.0-14.9 s
with the GIL held against 10.4-11.1 s without; the ridge (3m² flops per round at this machine's
single-core gemm speed) is then the critical path. OpenBLAS with 2 threads instead took 31-34 s.

Example: The KORS dictionary keeps a few of the 400 points:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("pkawv_nystrom")(2, sigma=0.5, lam=1.0, seed=0)
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat)
(76, 0.0357)
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from okl.dictionary.history import History
from okl.dictionary.kors import KORS, decide_one
from okl.dictionary.nystrom import TOL, NystromMap, embed_one
from okl.jit import njit
from okl.kernels import Kernel, kernel_row
from okl.learners.base import BlockLearner, KORSLearner, register
from okl.linalg.online_ridge import OnlineRidge, predict_one, update_one
from okl.params import KernelParams, KORSParams
from okl.validation import positive
from okl.warmup import warm

SIZES = ("model_size", "dictionary_size")  # the per-round diagnostics
SUB = 512  # rounds embedded at a time (their features stay in cache)
LONGEST = 131072  # rounds per block at most (see ``next_block``)


@dataclass(frozen=True)
class NystromParams(KORSParams, KernelParams):
    """sigma, lam as Kernel-AWV; KORS's keys (:class:`~okl.params.KORSParams`) and mu, the ridge μ of its
    leverage scores."""

    mu: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("mu", self.mu)


@register("pkawv_nystrom")
class PKAWVNystrom(KORSLearner, BlockLearner):
    """PKAWV on the span of a KORS dictionary that grows online."""

    Params = NystromParams
    awv: ClassVar[bool] = True

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        kernel = Kernel("gaussian", p.sigma)
        self.kors = KORS(d, kernel, p.mu, p.eps, p.beta, p.seed, weights=p.kors)
        self.map = NystromMap(d, kernel)
        self.ridge = OnlineRidge(0, p.lam, awv=self.awv)
        self.history = History(d, self.name)
        self._pending: tuple | None = None  # the last _one: ((x's bytes, round), its result)
        self._buffers: tuple = (None,)  # (sizes, the arguments of _peek_one after the round's x and coin)
        self._kernel = kernel.compiled
        warm(self._load_one)

    def _load_one(self) -> None:
        """Compile (or load) the one-round code now, with the array layouts of a run, not inside timed rounds
        (loading it took the first rounds of a run 60 ms; compiling it on a new machine, 1.4 s). A run's first
        rounds have 1×1 matrices, which numpy calls C-ordered, the later ones Fortran-ordered ones."""
        x = np.zeros(self.d)
        for n, square, kors in KORS.one_stand_ins():
            _peek_one(x, 1.0, *self._kernel, np.zeros((n, self.d)), np.zeros((n, self.d)), True, kors, square, square,
                      np.zeros(n), self.awv, np.zeros(n), np.zeros(n), np.zeros(n))  # fmt: skip
            update_one(square, np.zeros(n), np.zeros(n), np.zeros(n), 0.0, 0.0)

    # -- dictionary ----------------------------------------------------------------------------------
    def _selected(self, X: np.ndarray) -> np.ndarray:
        """KORS decisions for the rounds of X (committed)."""
        return self.kors.run(X)[0]

    def _extend(self, X: np.ndarray, selected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add the selected points to the span, in order; return the rows that added a coordinate and
        the first m₀ entries of their Cholesky rows (L, k×m₀)."""
        m0 = self.map.dim
        rows, L = [], []
        for a in np.flatnonzero(selected):
            added = self.map.add(X[a])
            if added is not None:
                rows.append(a)
                L.append(added[0][:m0])
        return np.array(rows, dtype=np.int64), np.array(L).reshape(len(rows), m0)

    def _record(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> None:
        """Keep the rounds for later dictionary growth."""
        self.history.append(X, y, F)

    # -- rounds --------------------------------------------------------------------------------------
    def next_block(self, t: int, block: int) -> int:
        """Blocks grow with t (as many rounds as played so far, at most ``LONGEST``): a block that adds
        to the dictionary costs one pass over the history, so the run makes O(log n + n/LONGEST) passes
        (12 on the 271,617 rounds of cod-rna)."""
        return max(block, min(t, LONGEST))

    def learn_one(self, x: np.ndarray, y: float) -> None:
        """One round (river's ``learn_one``): the ridge's rank-one update (Algorithm 1) on the embedding its
        prediction computed (:meth:`_one`); a point that joins first grows KORS, the map and the ridge from what that
        prediction computed (:meth:`_join_one`). With an empty span, a block of one round."""
        one = self._one(x)
        if one is None:
            X = x[None, :]
            self._play_block(X, np.array([y], dtype=np.float64), self._selected(X))
            return
        self._pending = None
        _, h, p, joins = one
        w, phi, v = self._buffers[1][-3:]
        if joins:
            self._join_one(x, y, p, phi, w, v, h)
            return
        update_one(self.ridge.P, self.ridge.b, phi, v, h, y)
        self.kors.skip(p)
        self.history.append_one(x, y, phi)
        # ``recorded`` stays: the sizes it ends with (the last block's, or a round that added a point) are this
        # round's, since a round that adds no point changes neither size

    def _join_one(
        self, x: np.ndarray, y: float, p: float, phi: np.ndarray, w: np.ndarray, v: np.ndarray, h: float
    ) -> None:
        """A round whose point x joins KORS's dictionary, played alone: the block path's steps for one round
        (:meth:`_play_block`), from what its prediction computed. KORS gains x with its projection w = L⁻¹k(I, x);
        if x leaves the span (ρ² > TOL), the map gains it with l = φ̃(x), the ridge gains the coordinate ψ with its
        statistics over the past rounds (the prediction's pass over the history, reused:
        :meth:`~okl.dictionary.history.History.add_coordinates`, which may refuse for memory: it runs before anything
        else changes), and the round is played on (φ̃(x), ψ(x) = ρ). O(m² + nm) as the block of one round, without
        its three more kernel rows and projections of x. A point that stays in the span (ρ² <= TOL) is played on the
        prediction's v = A⁻¹φ̃ and h."""
        rho2 = self.map.squared_residual(x, phi)
        rho = float(np.sqrt(rho2)) if rho2 > TOL else 0.0
        if rho:
            new = x[None, :], phi[None, :], np.array([[1.0 / rho]])
            cross, gram, target = self.history.add_coordinates(self.map.kernel, *new)
        self.kors.join_one(x, w, p)
        if rho:
            self.map.append(x, phi, rho)
            self.ridge.add_feature(cross[:, 0], gram[0, 0], target[0])
            phi = np.append(phi, rho)
            v = np.empty(len(phi))
            h = predict_one(self.ridge.P, self.ridge.b, phi, self.awv, v)[1]
        update_one(self.ridge.P, self.ridge.b, phi, v, h, y)
        self.history.append_one(x, y, phi)
        self._record_sizes()

    def _record_sizes(self) -> None:
        """``recorded`` as one round's: the map's and KORS's sizes now."""
        self.recorded = {key: np.array([size]) for key, size in zip(SIZES, (self.map.dim, self.kors.size), strict=True)}

    def _one(self, x: np.ndarray) -> tuple | None:
        """The coming round at x as one compiled call (:func:`_peek_one`), kept for its ``learn_one``: (ŷ, h, p̃, joins)
        with h = φ̃ᵀv of Algorithm 1 and KORS's p̃, in the current span, and in the buffers the call wrote (the last
        three of ``_buffers[1]``) KORS's projection w = L⁻¹k(I, x), φ̃(x) and the ridge's v = A⁻¹φ̃ (ŷ is not the
        prediction when x joins and leaves the span: :meth:`predict_one`); None when the span is empty. O(m² + md),
        the cost of a round of a block; the calls through KORS, the map and the ridge, each with its numpy overhead,
        cost 5× more (see the module). The call's other arguments change only when the dictionary grows (every array
        they hold is replaced then, and only then), so they are kept with the sizes they were taken at."""
        key = (x.tobytes(), self.kors.t)
        pending = self._pending
        if pending is not None and pending[0] == key:
            return pending[1]
        kors, nystrom, one = self.kors, self.map, None
        sizes = kors.size, nystrom.dim
        if sizes[1]:
            if self._buffers[0] != sizes:
                self._buffers = sizes, self._arguments(sizes)
            one = _peek_one(x, kors.coin(), *self._buffers[1])
        self._pending = key, one
        return one

    def _arguments(self, sizes: tuple[int, int]) -> tuple:
        """The arguments of :func:`_peek_one` after the round's x and coin, for a dictionary of these sizes (KORS's,
        the map's), with new buffers w, φ̃, v."""
        kors, nystrom, ridge = self.kors, self.map, self.ridge
        shared = sizes[0] == sizes[1]  # the map holds every KORS point (it skips those in the span)
        w, phi, v = np.empty(sizes[0]), np.empty(sizes[1]), np.empty(sizes[1])
        return (
            *self._kernel,
            kors.X,
            nystrom.Z,
            shared,
            kors.one(),
            nystrom.R_inv,
            ridge.P,
            ridge.b,
            self.awv,
            w,
            phi,
            v,
        )

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self._play_block(X, y, self._selected(X))

    def _play_block(self, X: np.ndarray, y: np.ndarray, selected: np.ndarray) -> np.ndarray:
        """Decide the block's dictionary first (KORS reads inputs only: ``selected``), extend the past rounds
        by all the new coordinates in one pass, then play the rounds in order, adding coordinate j to the state
        at its round at[j] with its statistics over every earlier round."""
        size, m0 = self.kors.size - int(selected.sum()), self.map.dim
        at, L = self._extend(X, selected)
        k = len(at)
        if k:  # statistics of the new coordinates over the past blocks; this block's rows are added below
            new = self.map.Z[m0:], L, self.map.R_inv[m0:, m0:]
            cross, gram, target = self.history.add_coordinates(self.map.kernel, *new)
            inner, inner_y = np.zeros((m0 + k, k)), np.zeros(k)
        out = np.zeros(len(y))
        j, recorded = 0, None  # new coordinates in the state; the last recording's future
        # a thread embeds (and records) one sub-block while the ridge plays another; a block of one sub-block (the
        # per-round path, river's learn_one) has nothing to overlap: a thread per round cost 90% of its time
        with ThreadPoolExecutor(1) if len(y) > SUB else _Inline() as pool:
            ahead = pool.submit(self._embed, X, y, 0, at, m0)
            for a in range(0, len(y), SUB):
                b = min(a + SUB, len(y))
                F, part, part_y = ahead.result()
                if b < len(y):
                    ahead = pool.submit(self._embed, X, y, b, at, m0)
                if j < k:
                    inner[:, j:] += part
                    inner_y[j:] += part_y
                start = a
                while j < k and at[j] < b:
                    self._play(F[start - a : at[j] - a, : m0 + j], y[start : at[j]], out[start : at[j]])
                    self.ridge.add_feature(
                        np.concatenate([cross[:, j], gram[:j, j]]) + inner[: m0 + j, j],
                        gram[j, j] + inner[m0 + j, j],
                        target[j] + inner_y[j],
                    )
                    start, j = at[j], j + 1
                self._play(F[start - a :, : m0 + j], y[start:b], out[start:b])
                if recorded is not None:  # done by now (queued before the embedding above); raises its error
                    recorded.result()
                recorded = pool.submit(self._record, X[a:b], y[a:b], F)
            if recorded is not None:
                recorded.result()
        self.recorded = dict(
            zip(
                SIZES,
                (m0 + np.searchsorted(at, np.arange(len(y)), side="right"), size + np.cumsum(selected)),
                strict=True,
            )
        )
        return out

    def _embed(self, X: np.ndarray, y: np.ndarray, a: int, at: np.ndarray, m0: int) -> tuple[np.ndarray, ...]:
        """Features F of the rounds a..a+SUB of the block, and each new coordinate j's statistics over
        those rounds that precede its round at[j] (ψ_j against every feature, and against y), for the
        coordinates not yet in the state at round a."""
        b = min(a + SUB, len(y))
        F = self.map.transform(X[a:b])
        j = int(np.searchsorted(at, a))
        mask = F[:, m0 + j :] * (np.arange(a, b)[:, None] < at[None, j:])
        return F, F.T @ mask, y[a:b] @ mask

    def _play(self, F: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        if len(y) and F.shape[1]:
            out[:] = self.ridge.predict_update_block(F, y)

    def predict_one(self, x: np.ndarray) -> float:
        one = self._one(x)
        if one is None:
            return float(self.predict_many(x[None, :])[0])
        y_hat, _, _, joins = one
        if not joins:
            return y_hat
        phi = self._buffers[1][-2]
        rho2 = self.map.squared_residual(x, phi)
        return float(self._with_new_coordinates(x[None, :], phi[None, :], np.array([rho2]))[0]) if rho2 > TOL else y_hat

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        """Predictions at the rows of X as the coming round. A row that KORS would add joins the span
        before it is predicted (:meth:`_with_new_coordinates`)."""
        F = self.map.transform(X)
        out = self.ridge.predict_many(F) if self.map.dim else np.zeros(len(X))
        rho2 = self.map.kernel.diag(X) - np.einsum("ij,ij->i", F, F)
        join = np.flatnonzero((rho2 > TOL) & self.kors.peek_many(X))
        if len(join):
            out[join] = self._with_new_coordinates(X[join], F[join], rho2[join])
        return out

    def _with_new_coordinates(self, X: np.ndarray, F: np.ndarray, rho2: np.ndarray) -> np.ndarray:
        """Predictions at the rows of X (features F, squared residuals ρ² > TOL), each as if it had joined the
        span: its coordinate ψ(x_s) = (k(x, x_s) − lᵀφ̃(x_s))/ρ over the past rounds (one pass over the history,
        nothing stored) gives the ridge its would-be new feature, and ψ(x) = ρ, with l = φ̃(x)."""
        rho = np.sqrt(rho2)
        cross, gram, target = self.history.coordinate_stats(self.map.kernel, X, F, np.diag(1.0 / rho))
        return self.ridge.predict_with_features(F, rho, cross, gram.diagonal(), target)

    @property
    def model_size(self) -> int:
        return self.map.dim


@njit(nogil=True)
def _peek_one(x, u, gaussian, sigma, X, Z, shared, kors, R_inv, P, b, awv, w, phi, v):
    """KORS's decision for x as the coming round with its coin u (:func:`~okl.dictionary.kors.decide_one` on
    w ← k(I, x), I = X), then φ̃(x) into phi (:func:`~okl.dictionary.nystrom.embed_one` on k_Z(x): a copy of k(I, x) when
    the map holds every KORS point, ``shared``) and the ridge's prediction (v ← Pφ̃,
    :func:`~okl.linalg.online_ridge.predict_one`), in one call: (ŷ, h, p̃, joins), w left holding L⁻¹k(I, x) (for
    :meth:`~okl.dictionary.kors.KORS.join_one`). When x joins and leaves the span, ŷ is that of the span before
    (:meth:`PKAWVNystrom.predict_one` gives the prediction)."""
    diag = kernel_row(gaussian, sigma, x, X, w)
    if shared:
        phi[:] = w
    else:
        kernel_row(gaussian, sigma, x, Z, phi)
    _, p, joins = decide_one(*kors, u, diag, w)
    embed_one(R_inv, phi)
    y_hat, h = predict_one(P, b, phi, awv, v)
    return y_hat, h, p, joins


class _Inline:
    """An executor that runs each call when it is submitted (the sequential twin of ThreadPoolExecutor(1))."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def submit(self, fn, /, *args) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - raised where the result is read, as from a thread
            future.set_exception(exc)
        return future
