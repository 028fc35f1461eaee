"""The rounds played so far, kept for dictionary growth: inputs x_s, labels y_s and embedded features φ̃_s.

When the dictionary of a projected learner gains points z_1..z_k (:mod:`okl.dictionary.nystrom`: the
Cholesky factor of K_ZZ gains rows [L, T] with T lower triangular), every past round gains the k
coordinates

    ψ_s = T⁻¹ (k_new(x_s) − L φ̃_s),      i.e.   Ψᵀ = T⁻¹ (K(Z_new, X) − L Φᵀ)   (k×n),

and the learner's statistics gain Φᵀ Ψ, Ψᵀ Ψ and Ψᵀ y. These depend on every past round, so an
addition costs one pass over the n×m history, O(n m k) flops for k points added together: two matrix
products per block of ``ROWS`` rounds, the block staying in cache between them (one pass over memory).
One point (k = 1: a round played alone that joins, or a block that adds one point) is one compiled loop
per block instead (:func:`_one_point`): its kernel row from the squared distances, then both products
on ``CHUNK`` rounds at a time, which stay in the core's own cache (a third of the numpy pass's time at
n = 45,730, m = 169, where the kernel's row norms alone took half). Rounds themselves never touch the past.

Storage: Φᵀ in blocks of ``ROWS`` rounds, each an (m capacity)×ROWS C-ordered array, so new
coordinates fill spare rows of each block (untouched spare rows take no memory; a block is copied
only when its capacity doubles) and the products above run as wide, cache-friendly matrix products.
Memory: 8 n (m + d + 1) bytes, checked before each block is allocated or grown.

Rounds recorded one at a time (:meth:`History.append_one`) are staged: their features wait in a small
round-major array and enter the block ``STAGE`` rounds at a time (and before anything reads the blocks),
since writing one round's m features into Φᵀ touches m cache lines (6 µs a round at m = 151, a fifth of
the per-round path's time).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from okl import system
from okl.jit import njit
from okl.kernels import Kernel, kernel_row
from okl.linalg.nogil_blas import NO_TRANS, TRANS, dgemv
from okl.warmup import warm

ROWS = 4096  # rounds per block (4096 × 1000 coordinates: 33 MB, within L3)
STAGE = 64  # rounds of features staged by append_one before they enter a block
CHUNK = 512  # rounds of a block that :func:`_one_point` keeps in cache between its two products


class History:
    """Inputs X (n×d), labels y and features Φ (n×m) of the rounds played, by blocks of ``ROWS`` rounds."""

    def __init__(self, d: int, what: str) -> None:
        self.d, self.what = d, what
        self.n, self.m = 0, 0
        self.blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (X, y, Φᵀ) per ROWS rounds
        # the last one-point pass of coordinate_stats (a prediction at a point joining the dictionary): the
        # learning round that adds that point reuses it instead of a second pass (river's predict_one, learn_one)
        # when it adds the same point with the same L and T⁻¹ (a predict_many in between embeds it otherwise)
        self._last: tuple | None = None
        self._stage = np.zeros((STAGE, 0))  # features of the last ``_staged`` rounds, not yet in their block
        self._staged = 0
        self._room = 0  # rounds the stage takes before the next flush (0: nothing staged yet, or just flushed)
        self._rows: tuple = ()  # (X, y, first row) of the block the staged rounds go to
        # compile (or load) the one-round code now, not inside timed rounds (its first call took ~50 ms)
        one, none = np.zeros((1, d)), np.zeros(0)
        warm(_record_one, one, np.zeros(1), np.zeros((STAGE, 0)), 0, 0, one[0], 0.0, none)
        warm(_one_point, True, 1.0, one[0], none, 1.0, one, np.zeros(1), np.zeros((1, 1)), 0, np.zeros(1), none)

    def __getstate__(self) -> dict:
        """A snapshot without the last prediction's pass (recomputed if ever needed)."""
        return {**vars(self), "_last": None}

    def _flush(self) -> None:
        """Write the staged rounds' features into their block (every reader of the blocks calls this first)."""
        if self._staged:
            i, r = divmod(self.n - self._staged, ROWS)
            self.blocks[i][2][: self.m, r : r + self._staged] = self._stage[: self._staged].T
            self._staged = 0
        self._room = 0

    def _require(self, nbytes: int, rows: int, cols: int) -> None:
        system.require_memory(
            nbytes,
            f"{self.what} keeps {rows:,} rounds × {cols:,} features",
            "use fewer rounds (n=) or a larger regularisation (a smaller dictionary)",
        )

    def _capacity(self, cols: int) -> int:
        return max(64, 2 * cols)

    def _block(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Block i, allocated when it is the next one."""
        if i == len(self.blocks):
            self._require(8 * ROWS * (self.m + self.d + 1), self.n + ROWS, self.m)
            self.blocks.append((np.zeros((ROWS, self.d)), np.zeros(ROWS), np.zeros((self._capacity(self.m), ROWS))))
        return self.blocks[i]

    def append(self, X: np.ndarray, y: np.ndarray, F: np.ndarray) -> None:
        """Record rounds: inputs, labels and their features in the current embedding (B×m). A block of one round
        (a point joining when rounds are played alone) is staged (:meth:`append_one`) rather than written into m
        rows of Φᵀ, which cost 0.5 ms a round (measured on casp, m = 169)."""
        if len(y) == 1:
            self.append_one(X[0], y[0], F[0])
            return
        self._flush()
        done = 0
        while done < len(y):
            i, r = divmod(self.n, ROWS)
            Xb, yb, Pb = self._block(i)
            take = min(ROWS - r, len(y) - done)
            Xb[r : r + take], yb[r : r + take] = X[done : done + take], y[done : done + take]
            Pb[: self.m, r : r + take] = F[done : done + take].T
            done += take
            self.n += take

    def append_one(self, x: np.ndarray, y: float, phi: np.ndarray) -> None:
        """Record one round (the per-round path of :meth:`append`): staged, so that most rounds are one compiled
        call. The stage takes at most ``STAGE`` rounds and never crosses a block's end; it is flushed by the next
        round once full, and by anything that reads the blocks."""
        j = self._staged
        if j == self._room:  # the stage is full, or was flushed: start the next one
            self._flush()
            i, r = divmod(self.n, ROWS)
            Xb, yb, _ = self._block(i)
            if self._stage.shape[1] != self.m:
                self._stage = np.zeros((STAGE, self.m))
            self._rows, self._room, j = (Xb, yb, r), min(STAGE, ROWS - r), 0
        Xb, yb, r = self._rows
        _record_one(Xb, yb, self._stage, r + j, j, x, y, phi)
        self.n += 1
        self._staged = j + 1

    def add_coordinates(
        self, kernel: Kernel, Z: np.ndarray, L: np.ndarray, T_inv: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Append the k coordinates Ψᵀ = T⁻¹ (K(Z, X) − L Φᵀ) of the points Z (k×d; L: k×m, T⁻¹: k×k)
        to every round kept; return (Φᵀ Ψ, Ψᵀ Ψ, Ψᵀ y)."""
        self._flush()
        m, k = self.m, len(Z)
        last, self._last = self._last, None
        self._widen(m + k)
        if last is not None and last[:2] == (self.n, m) and all(map(np.array_equal, last[2], (Z, L, T_inv))):
            for (_, _, Pb), Psi_t in zip(self.blocks, last[3], strict=True):  # the prediction's pass: no second
                Pb[m : m + 1, : Psi_t.shape[1]] = Psi_t
            stats = last[4]
        else:
            stats = self.coordinate_stats(kernel, Z, L, T_inv, store=True)
        self.m = m + k
        return stats

    def _widen(self, rows: int) -> None:
        """Room for ``rows`` coordinates in every block (a block's capacity doubles when it fills)."""
        grown = {i for i, (_, _, Pb) in enumerate(self.blocks) if len(Pb) < rows}
        self._require(8 * ROWS * self._capacity(rows) * len(grown), self.n, rows)
        for i in grown:
            Xb, yb, Pb = self.blocks[i]
            wider = np.zeros((self._capacity(rows), ROWS))
            wider[: self.m] = Pb[: self.m]
            self.blocks[i] = (Xb, yb, wider)

    def coordinate_stats(
        self, kernel: Kernel, Z: np.ndarray, L: np.ndarray, T_inv: np.ndarray, store: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Φᵀ Ψ, Ψᵀ Ψ, Ψᵀ y) of the coordinates the points Z would add; ``store`` writes Ψ into the
        blocks' spare rows (which :meth:`add_coordinates` provides), else nothing changes. The blocks
        are split in two halves, summed on two threads (one BLAS thread each) and then added: the
        split depends on the number of blocks only, so the sums are deterministic."""
        self._flush()
        half = len(self.blocks) // 2
        kept: list[np.ndarray] = [] if not store and len(Z) == 1 else None  # Ψ of one point, for its addition
        if half == 0:  # one block: nothing to split (0 + x is x, so the sums are the split's)
            stats = self._stats(range(len(self.blocks)), kernel, Z, L, T_inv, store, kept)
        else:
            later = _helper().submit(self._stats, range(half, len(self.blocks)), kernel, Z, L, T_inv, store)
            first = self._stats(range(half), kernel, Z, L, T_inv, store, kept)
            second = later.result()
            stats = tuple(a + b for a, b in zip(first, second, strict=True))
            if kept is not None:
                kept += second[3]
        if kept is not None:
            self._last = (self.n, self.m, (Z.copy(), L.copy(), T_inv.copy()), kept, stats[:3])
        return stats[:3]

    def _stats(self, blocks: range, kernel: Kernel, Z, L, T_inv, store: bool, kept: list | None = None) -> tuple:
        """The sums over ``blocks``, and the blocks' Ψ (in ``kept``, else returned as the fourth item)."""
        m, k = self.m, len(Z)
        cross, gram, target = np.zeros((m, k)), np.zeros((k, k)), np.zeros(k)
        parts = kept if kept is not None else []
        for i in blocks:
            Xb, yb, Pb = self.blocks[i]
            used = min(ROWS, self.n - i * ROWS)
            if k == 1:
                psi = Pb[m, :used] if store else np.empty(used)
                sums = _one_point(*kernel.compiled, Z[0], L[0], T_inv[0, 0], Xb, yb, Pb, m, psi, cross[:, 0])
                gram[0, 0] += sums[0]
                target[0] += sums[1]
                if not store:
                    parts.append(psi[None, :])
                continue
            Phi_t = Pb[:m, :used]
            Psi_t = T_inv @ (kernel(Z, Xb[:used]) - L @ Phi_t)
            cross += Phi_t @ Psi_t.T
            gram += Psi_t @ Psi_t.T
            target += Psi_t @ yb[:used]
            if store:
                Pb[m : m + k, :used] = Psi_t
            elif k == 1:
                parts.append(Psi_t)
        return cross, gram, target, parts


@njit
def _record_one(Xb, yb, stage, r, j, x, y, phi):
    """Round r of a block ← (x, y), and its features φ̃ into row j of the stage, as one compiled call (three
    numpy assignments cost 2 µs a round)."""
    Xb[r, :] = x
    yb[r] = y
    stage[j, :] = phi


@njit(nogil=True)
def _one_point(gaussian, sigma, z, l, t_inv, Xb, yb, Pb, m, psi, cross):
    """One point's coordinate over a block's first len(ψ) rounds: ψ_s = t⁻¹ (k(z, x_s) − lᵀφ̃_s) into ``psi``,
    Φᵀψ added to ``cross``; returns (ψᵀψ, ψᵀy) (the block's share of :meth:`History.coordinate_stats` for
    k = 1). Rounds go by ``CHUNK``: a chunk's features are read from memory once and then from cache. The sums
    are in round order: reassociated ones (fastmath) compiled to other vector code in a process that loaded the
    kernel row from numba's cache than in one that compiled it, and the runs' last bits differed
    (:func:`okl.kernels._squared_distances`)."""
    used = len(psi)
    kernel_row(gaussian, sigma, z, Xb[:used], psi)
    gram, target = 0.0, 0.0
    for a in range(0, used, CHUNK):
        b = min(a + CHUNK, used)
        Phi = Pb[:m, a:b].T  # (b − a)×m, column-major
        part = psi[a:b]
        dgemv(NO_TRANS, -1.0, Phi, l, 1.0, part)  # (BLAS returns at once when m = 0: t⁻¹ is applied here)
        for s in range(a, b):
            psi[s] *= t_inv
            gram += psi[s] * psi[s]
            target += psi[s] * yb[s]
        dgemv(TRANS, 1.0, Phi, part, 1.0, cross)
    return gram, target


_HELPER: list[ThreadPoolExecutor] = []  # the one thread that sums the second half (started on first use)


def _helper() -> ThreadPoolExecutor:
    """The process's helper thread, kept between calls (a thread started per call cost the per-round path of
    the Nyström learners most of its time); a forked child starts its own."""
    if not _HELPER:
        _HELPER.append(ThreadPoolExecutor(1, thread_name_prefix="okl-history"))
    return _HELPER[0]


os.register_at_fork(after_in_child=_HELPER.clear)
