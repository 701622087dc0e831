"""The averaged hypothesis of the removal rules, kept within the budget.

The average ``f_bar = (1/T) sum_t f_t`` of the hypotheses played by a rule
that removes members (Forgetron, Randomized Budget Perceptron, the Budget
Perceptrons, budgeted SGD) is a kernel expansion over every member the
stream ever had: a member's running sum ``acc_i`` (the sum of its
coefficient over the rounds it was one) outlives the member. The exact
average therefore grows with the stream. Here it is kept bounded
(ALGORITHMS.md, "Bounded averaging"):

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
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from scipy.linalg.lapack import dpotrf, dpotri

from ._dense_rows import kernel_block
from ._kernels import single_blas_thread
from ._pool import fold_into_pool

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


def _stack(A, B):
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    return np.concatenate([A, B], axis=0)


def kernel_values(kernel, kernel_code, X, Z):
    """``kernel(X, Z)`` as a C-contiguous float64 array, by the compiled
    formulas where the kernel has them (``kernel_code``) and both are dense:
    by differences, so rows too large for the blocked formulas stay finite."""
    if kernel_code is not None and not (sp.issparse(X) or sp.issparse(Z)) and X.shape[1]:
        return kernel_block(
            np.ascontiguousarray(X, dtype=np.float64),
            np.ascontiguousarray(Z, dtype=np.float64),
            kernel_code,
            float(kernel.gamma),
            float(kernel.degree),
            float(kernel.coef0),
        )
    return np.ascontiguousarray(kernel(X, Z), dtype=np.float64)


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
    Z = _stack(rows, X)
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
