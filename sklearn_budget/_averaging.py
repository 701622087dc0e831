"""The averaged hypothesis of the removal rules, kept within the budget.

The average ``f_bar = (1/T) sum_t f_t`` of the hypotheses played by a rule
that removes members (Forgetron, Randomized Budget Perceptron, the Budget
Perceptrons, budgeted SGD) is a kernel expansion over every member the
stream ever had: a member's running sum ``acc_i`` (the sum of its
coefficient over the rounds it was one) outlives the member. The exact
average therefore grows with the stream. Here it is kept bounded (the
decision "Averaging with removals" of ``doc/decisions.rst``):

- the running sums of the current members live beside their coefficients,
  in the engine (``acc``, ``stamp``);
- each member that leaves brings its running sum ``acc_r k(x_r, .)`` into a
  *pool*, an expansion of at most ``budget`` members of its own
  (:func:`~sklearn_budget._pool.fold_into_pool`): the function joins
  as a new member, or is projected onto the pool's span when it lies in it;
  when the pool overflows, the member whose removal costs least (in the
  RKHS norm, after the optimal projection of its function onto the others)
  leaves, projected onto the rest. Each step is the best approximation of
  the pool plus the new function by one fewer member given the members
  kept, in ``O(budget^2)`` time and memory;
- the fitted average is the pool with the current members' running sums
  folded into a copy of it in the same way (oldest member first), so it
  has at most ``budget`` members, and those are chosen for the average
  rather than inherited from the last hypothesis.

The pool sees the members in the order they leave, whatever the calls the
stream is split into, so the model is the same for any split of the
stream, and deterministic.

:class:`_AveragingMixin` gives the kernel estimators the average of their
stream: the running sums of the current members, the members that left
(folded into the pool, or kept whole for ``average='exact'``), and the
averaged expansion that :meth:`_publish` makes of them.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from scipy.linalg.lapack import dpotrf, dpotri

from ._kernels import kernel_values, single_blas_thread
from ._pool import fold_into_pool
from ._rounds import _vstack

# A function whose squared residual off the pool's span is below this
# fraction of k(x, x) is projected instead of joining (the part lost is at
# most 1% of its norm): it keeps the pool's Gram matrix well conditioned,
# so that its inverse, updated in place, stays accurate. Measured: at 1e-6,
# near duplicates under a wide rbf kernel give a condition number of 4e9
# and an updated inverse off by 0.4; at 1e-4, 1e6 and 3e-7, at the same
# test accuracy on USPS, Banana and a9a.
POOL_RTOL = 1e-4

# The pool's state arrays: inverse Gram matrix, Gram matrix, coefficients
# (running sums), entry order, stream index, column in the fold's kernel
# block, and [size, entries so far, changes since G was recomputed].
_POOL_ARRAYS = ("pool_G", "pool_K", "pool_beta", "pool_born", "pool_idx", "pool_src")


def new_pool(n_rows):
    """Arrays of an empty pool with ``n_rows`` coefficient rows."""
    return {
        "pool_G": np.zeros((0, 0)),
        "pool_K": np.zeros((0, 0)),
        "pool_beta": np.zeros((0, n_rows)),
        "pool_born": np.zeros(0, dtype=np.int64),
        "pool_idx": np.zeros(0, dtype=np.int64),
        "pool_src": np.zeros(0, dtype=np.int64),
        "pool_ints": np.zeros(3, dtype=np.int64),
    }


def copy_pool(state):
    """The pool's arrays of ``state``, copied."""
    return {name: state[name].copy() for name in _POOL_ARRAYS + ("pool_ints",)}


def _ensure_capacity(pool, need):
    cap = pool["pool_beta"].shape[0]
    if need <= cap:
        return
    new = max(need, 2 * cap, 16)
    for name in _POOL_ARRAYS:
        old = pool[name]
        shape = (new, new) if old.ndim == 2 and name != "pool_beta" else (new,) + old.shape[1:]
        grown = np.zeros(shape, dtype=old.dtype)
        grown[tuple(slice(0, s) for s in old.shape)] = old
        pool[name] = grown


def _recompute_inverse(pool):
    """``G = K^{-1}`` afresh from the pool's Gram matrix, by Cholesky.

    Bounds the rounding error that the in-place updates accumulate over a
    long stream. A Gram matrix that is not numerically positive definite
    (a kernel that is not, or rounding) keeps the updated inverse.
    """
    n = int(pool["pool_ints"][0])
    if n == 0:
        return
    # A small product: on one thread it does not wait for busy cores.
    with single_blas_thread():
        factor, info = dpotrf(pool["pool_K"][:n, :n], lower=1)
        if info != 0:
            return
        G, info = dpotri(factor, lower=1)
    if info != 0 or not np.isfinite(G).all():
        return
    # dpotri fills the lower triangle.
    G = np.tril(G)
    pool["pool_G"][:n, :n] = G + np.tril(G, -1).T


def fold(pool, rows, kernel, kernel_code, X, coef, index, budget):
    """Bring ``coef[j] k(X[j], .)`` into the pool, in order; returns its new rows.

    ``pool``: the arrays of :func:`new_pool` (grown and updated in place, or
    replaced by grown copies); ``rows``: the pool's member rows, in position
    order (dense or CSR); ``kernel_code``: the compiled form of the kernel
    (``KERNEL_CODES``), or None; ``coef``: running sums, shape (len(X),
    n_rows); ``index``: the stream index of each row (-1: not a row of the
    stream).
    """
    m = X.shape[0]
    if m == 0:
        return rows
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    ints = pool["pool_ints"]
    n0 = int(ints[0])
    _ensure_capacity(pool, min(budget + 1, n0 + m))
    pool["pool_src"][:n0] = np.arange(n0)
    Z = _vstack(rows, X)
    with np.errstate(all="ignore"):
        C = kernel_values(kernel, kernel_code, X, Z)
        kxx = np.ascontiguousarray(kernel.diag(X), dtype=np.float64)
    if not (np.isfinite(C).all() and np.isfinite(kxx).all() and np.isfinite(coef).all()):
        # Rows so large that their kernel values overflow (the blocked
        # formulas compute ||x||^2 + ||z||^2 - 2 x.z).
        amax = abs(Z).max() if Z.shape[0] else 0.0
        raise ValueError(
            f"Non-finite kernel values or coefficients in the averaged model (largest |x| "
            f"among its rows: {amax:.3g}). Scale the features (for example with "
            "StandardScaler), or use a smaller gamma. The model is left as it was before "
            "the call."
        )
    index = np.ascontiguousarray(index, dtype=np.int64)
    refresh_every = max(budget, 16)
    start = 0
    while start < m:
        start = fold_into_pool(
            C,
            coef,
            kxx,
            index,
            pool["pool_G"],
            pool["pool_K"],
            pool["pool_beta"],
            pool["pool_born"],
            pool["pool_idx"],
            pool["pool_src"],
            ints,
            budget,
            POOL_RTOL,
            refresh_every,
            start,
        )
        if ints[2] >= refresh_every:
            _recompute_inverse(pool)
            ints[2] = 0
    return Z[pool["pool_src"][: int(ints[0])]]


def bounded_average(pool, rows, kernel, kernel_code, X, coef, index, order, budget):
    """The members, stream indices and summed coefficients of the bounded average.

    ``X``, ``coef``, ``index``: the current members with their running sums,
    folded into a copy of ``pool`` (``rows``: its member rows) in ``order``.
    The pool itself is not changed. Divide the coefficients by the number of
    rounds for the average.
    """
    final = copy_pool(pool)
    sv = fold(final, rows, kernel, kernel_code, X[order], coef[order], index[order], budget)
    n = int(final["pool_ints"][0])
    return sv, final["pool_idx"][:n].copy(), final["pool_beta"][:n].T.copy()


def _conversion(average):
    """The online-to-batch conversion named by ``average``.

    "last", "average" (bounded by the budget for the removal rules),
    "exact" (the unbounded average of the removal rules) or "vote".
    """
    if isinstance(average, str):
        return average
    return "average" if average else "last"


class _AveragingMixin:
    """The average of the hypotheses of a kernel estimator's stream.

    The engine keeps each member's running sum ``acc`` (in the coefficients'
    true units, up to the round ``stamp``); the members that leave are
    folded into the pool (``average=True`` with a removal rule) or kept
    whole (``average='exact'``).
    """

    @property
    def _averages(self):
        """Whether the engine keeps the running sums of the average."""
        return self._conversion in ("average", "exact")

    @property
    def _bounded_pool(self):
        """Whether the average is kept within the budget by a pool (removal rules)."""
        return self._conversion == "average" and self._removes_members

    def _retired_lists(self):
        """What ``average='exact'`` keeps of the members that left (grown in place)."""
        return self._retired_idx, self._retired_acc, self._retired_sv

    def _fold_retired(self, retired, Z):
        """Keep what the members that left (``engine.retired()``) gave the
        average: folded into the pool of the bounded average, or kept whole
        for ``average='exact'``. ``Z``: the block's kernel columns (sparse)."""
        ridx, racc, rX, rcol = retired
        rX = rX if self._dense else Z[rcol]
        if self._bounded_pool:
            self._before_change("pool_")
            self._pool_X = fold(
                self._state,
                self._pool_X,
                self._kernel,
                self._kernel_code,
                rX,
                racc,
                ridx,
                self.budget,
            )
        else:
            self._retired_idx.extend(ridx)
            self._retired_acc.extend(racc)
            self._retired_sv.append(rX)

    def _average_is_finite(self):
        """Whether the sums of the average are finite, brought up to the
        current round as :meth:`_publish` brings them: coefficients near the
        largest float overflow in the sums of the rounds that follow."""
        if not self._averages:
            return True
        n, state = self._n, self._state
        with np.errstate(all="ignore"):
            acc = (
                state["acc"][:n]
                + state["alpha"][:n] * (state["scale"][1] - state["stamp"][:n])[:, None]
            )
        return bool(
            np.isfinite(acc).all()
            and np.isfinite(state.get("pool_beta", np.zeros(0))).all()
            and all(np.isfinite(a).all() for a in self._retired_acc)
        )

    def _averaged_members(self, sv, idx, coef):
        """The members, stream indices and coefficients of the averaged hypothesis.

        ``sv``, ``idx``, ``coef``: the current members, in position order,
        with their stored coefficients (shape (n_rows, n_members)). Members
        that took part in no hypothesis of the average are left out.
        """
        n, t, state = self._n, self._t, self._state
        # The running sums are in the coefficients' true units.
        coef = state["acc"][:n].T + coef * (state["scale"][1] - state["stamp"][:n])
        if self._bounded_pool:
            order = np.argsort(state["born"][:n], kind="stable")
            sv, idx, coef = bounded_average(
                state,
                self._pool_X,
                self._kernel,
                self._kernel_code,
                sv,
                coef.T,
                idx,
                order,
                self.budget,
            )
        coef = coef / t
        if self._retired_idx:
            sv = _vstack(sv, self._stack(self._retired_sv))
            idx = np.concatenate([idx, self._retired_idx])
            coef = np.hstack([coef, np.array(self._retired_acc).T / t])
        # A member that joined on the last round played took part in no
        # hypothesis of the average.
        used = np.any(coef != 0, axis=0)
        if not used.all():
            sv, idx, coef = sv[np.flatnonzero(used)], idx[used], coef[:, used]
        return sv, idx, coef

    def _stack(self, parts):
        """Rows of the stream format, stacked."""
        if self._dense:
            return np.concatenate(parts, axis=0)
        return sp.vstack(parts, format="csr")
