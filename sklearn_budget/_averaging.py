"""The averaged hypothesis of the removal rules, kept within the budget.

The average ``f_bar = (1/T) sum_t f_t`` of the hypotheses played by a rule
that removes members (Forgetron, Randomized Budget Perceptron, the Budget
Perceptrons, budgeted SGD) is a kernel expansion over every member the
stream ever had: a member's running sum ``acc_i`` (the sum of its
coefficient over the rounds it was one) outlives the member. The exact
average therefore grows with the stream. Here it is kept bounded (the
decision "Averaging within the budget" of ``doc/decisions.rst``):

- the running sums of the current members live beside their coefficients,
  in the engine (``acc``, ``stamp``);
- each member that leaves brings its row and its running sum into a
  *pool* (``pool_*`` state arrays), appended as it is: the pool is exact
  between compressions;
- when the pool holds more than ``5 budget`` members, after the round that
  filled it, it is compressed to ``budget`` members in one step
  (:func:`compress`): a subset ``S`` is chosen, by kernel orthogonal
  matching pursuit (:func:`~sklearn_budget._pool.omp_select`) up to a
  budget of 128, among the ``2 budget`` members of largest function
  ``||acc_j|| sqrt(k(x_j, x_j))``, and by that size alone above, and the
  coefficients on ``S`` are refitted to the whole pool by ridge least
  squares. Up to a budget of 128 they fit the pool's function at the
  pool's own rows, ``c_S = (A^T A + mu I)^{-1} A^T K acc`` with ``A =
  K_{pool,S}`` and ``mu = 1e-8 n max k(x, x)^2`` (``n`` rows): those rows
  are where the stream made its updates, near the decision boundary, where
  the function's values decide the predictions, and the pool's Gram matrix
  ``K`` is at hand, as matching pursuit needs it (for the rbf kernel,
  symmetric by construction: the exponents and values of one triangle,
  mirrored, :func:`~sklearn_budget._kernels.symmetric_pool_gram`). Above,
  where only the ``budget x pool`` block is computed, they are the best approximation of
  the pool's function on the span of ``S`` in the kernel's space,
  ``c_S = (K_SS + lam I)^{-1} K_{S,pool} acc`` (``lam = 1e-8 max k(x, x)``),
  which at such budgets predicts within 0.1 point of the fit at the rows
  (the decision "Averaging within the budget" of ``doc/decisions.rst``
  gives the measurements);
- the fitted average is the pool with the current members, their running
  sums brought to the current round, compressed in the same way to at
  most ``budget`` members.

Each flush costs, above a budget of 128, one kernel block of ``budget x 5
budget`` values (computed in bands of rows of about ``2^20`` values, in
the buffer that then holds the factor, so that its memory is
``O(budget^2)``) and one Cholesky factor of ``budget x budget``; up to 128,
the pool's Gram matrix (one triangle of it for the rbf kernel), matching
pursuit among ``2 budget`` candidates and the factor: once per ``4 budget``
members that leave, ``O(budget d + budget^2)`` per removal, against
``O(budget d)`` per round for the last hypothesis itself. The flushes
happen at fixed counts of the members that left, which the stream alone
determines, so the model is the same for any split of the stream into
calls, and deterministic.

``average='exact'`` keeps every member that left in the same arrays,
never compressed.

:class:`_AveragingMixin` gives the kernel estimators the average of their
stream: the running sums of the current members, the pool, and the
averaged expansion that :meth:`_publish` makes of them.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotrf, dpotrs

from ._kernels import (
    as_matrix,
    band_kernel,
    block_kernel_values,
    expansion_batches,
    finite_pool_kernel,
    row_index,
    single_blas_thread,
    symmetric_pool_gram,
)
from ._pool import average_finite, omp_select
from ._rounds import _rows, _vstack

# The pool is compressed to the budget once it holds more than this many
# times the budget: each flush then serves 4 budget members that left.
POOL_FACTOR = 5
# Largest budget whose compression selects by orthogonal matching pursuit
# (O(pool^2 d) for the pool's Gram matrix); above, by the size of each
# member's function (O(budget pool d)). Measured (offline study of the
# averaging, USPS-10 and a9a): matching pursuit gains up to 2 points of test
# accuracy at a budget of 100, the two are within noise from 500 on.
OMP_MAX_BUDGET = 128
# Matching pursuit chooses among this many times the budget members of the
# pool, those of largest function ||acc_j|| sqrt(k(x_j, x_j)) (the members
# kept by earlier compressions among them), not among all 5 budget: the
# pursuit's O(pool budget^2) was, with the Gram matrix, most of a
# compression's time at a budget of 100 in low dimension. Measured (bounded
# average of Forgetron at budget 100, a9a, USPS-10, Banana, Waveform, three
# shuffles): no loss of test accuracy above 0.1 point, USPS-10 0.2 point
# better on average (doc/decisions.rst, "Averaging within the budget").
OMP_CANDIDATES = 2
# The ridge of the refit and the smallest residual that matching pursuit
# keeps, relative to the largest k(x, x) of the pool (the ridge of the fit
# at the pool's rows: relative to n max k(x, x)^2, the scale of A^T A).
RIDGE = 1e-8
OMP_TOL = 1e-10


def new_pool(n_rows, n_features, dense):
    """Arrays of an empty pool: member count, running sums (one row per
    member), stream indices, and the member rows for a dense stream (a
    sparse stream's rows are the estimator's ``_pool_X``)."""
    pool = {
        "pool_n": np.zeros(1, dtype=np.int64),
        "pool_coef": np.zeros((0, n_rows)),
        "pool_idx": np.zeros(0, dtype=np.int64),
    }
    if dense:
        pool["pool_X"] = np.zeros((0, n_features))
    return pool


def _kernel_block(kernel, kernel_code, X, Z, buffer=None, index=None):
    """``kernel(X, Z)`` by BLAS, or by differences where that overflows; raises
    if the values are not finite (rows too large for the kernel). The rbf
    Gram matrix of rows with themselves (``Z is X``) symmetric by
    construction. ``buffer``: a flat float64 array of at least ``len(X) *
    len(Z)`` values that may receive them (:func:`~sklearn_budget._kernels.band_kernel`),
    or None; ``index``: the :func:`~sklearn_budget._kernels.row_index` of
    ``Z`` there, or None."""
    with np.errstate(all="ignore"):
        # The compiled rbf values of dense rows, and the symmetric Gram
        # matrix of the pool, are finite by construction: no pass over the
        # block to check them (band_kernel checks those of CSR rows).
        if Z is X:
            K = symmetric_pool_gram(kernel, X)
        elif buffer is not None:
            K = band_kernel(kernel, X, Z, buffer, index)
        else:
            K = finite_pool_kernel(kernel, X, Z)
    if K is not None:
        return K
    K, finite = block_kernel_values(kernel, kernel_code, X, Z)
    if not finite:
        amax = abs(Z).max() if Z.shape[0] else 0.0
        raise ValueError(
            f"Non-finite kernel values in the averaged model (largest |x| among its rows: "
            f"{amax:.3g}). Scale the features (for example with StandardScaler), or use a "
            "smaller gamma. The model is left as it was before the call."
        )
    return K


def _ridge_solve(normal, rhs, ridge, work=None):
    """``(normal + ridge I)^{-1} rhs`` by Cholesky, or None if ``normal + ridge I``
    is not numerically positive definite or the solution is not finite.
    Only the lower triangle of the symmetric ``normal`` is read. ``work``: a
    flat float64 array of at least ``normal.size`` values for the factor
    (overwritten), or None."""
    # ``normal + ridge I`` built in Fortran order and factored in place: no
    # identity matrix and no copy by LAPACK's wrapper, which at a budget of
    # 4000 are 128 MB each. The values are those of ``normal + ridge * eye``
    # (``+ 0.0`` off the diagonal), so the factor has the same bits. The
    # LAPACK routines of scipy's ``cho_factor`` and ``cho_solve`` are called
    # directly (the same factor and solution): their wrappers' checks cost
    # as much as the factor at a budget of 100, once per compression.
    if work is None:
        a = np.add(normal, 0.0, order="F", dtype=np.float64)
    else:
        b = normal.shape[0]
        a = np.add(normal, 0.0, out=work[: b * b].reshape((b, b), order="F"))
    diag = np.arange(a.shape[0])
    a[diag, diag] = normal[diag, diag] + ridge
    factor, info = dpotrf(a, lower=True, overwrite_a=True, clean=False)
    if info > 0:  # not numerically positive definite
        return None
    if info == 0:
        out, info = dpotrs(factor, rhs, lower=True)
    if info < 0:
        raise ValueError(
            f"LAPACK reported an illegal value in argument {-info} of the ridge solve."
        )
    return out if np.isfinite(out).all() else None


def ridge_fit(normal, rhs, ridge, work=None):
    """``(normal + r I)^{-1} rhs`` for the first ``r`` of ``ridge``, 100 and
    10,000 times it whose Cholesky factor exists and gives finite values,
    or None.

    The larger ridges serve a Gram matrix that rounding leaves barely
    indefinite: a kernel only just positive semi-definite, or members (or
    centres) nearly on top of each other. ``work``: see :func:`_ridge_solve`.
    """
    for larger in (1.0, 1e2, 1e4):
        out = _ridge_solve(normal, rhs, ridge * larger, work)
        if out is not None:
            return out
    return None


def compress(rows, coef, idx, kernel, kernel_code, budget):
    """The expansion ``sum_j coef[j] k(rows[j], .)`` brought to at most ``budget`` members.

    The subset is chosen by kernel matching pursuit (``budget <= 128``) or
    by the size of each member's function, and its coefficients refitted
    by ridge least squares: at the expansion's own rows after matching
    pursuit, in the kernel's space otherwise (see the module's docstring).
    Returns ``(rows, coef, idx)`` of the kept members, in their order in
    the input.
    """
    if rows.shape[0] <= budget:
        return rows, coef, idx
    # On one BLAS thread: the same bits whatever the threads of the caller
    # (the model is deterministic), and blocks too small to gain from more.
    with single_blas_thread():
        return _compress(
            rows, np.ascontiguousarray(coef, dtype=np.float64), idx, kernel, kernel_code, budget
        )


def _compress(rows, coef, idx, kernel, kernel_code, budget):
    """:func:`compress` of more than ``budget`` members (``coef`` contiguous)."""
    with np.errstate(all="ignore"):
        kxx = np.asarray(kernel.diag(rows), dtype=np.float64)
    kmax = float(np.max(np.abs(kxx), initial=0.0))
    S = np.zeros(0, dtype=np.intp)
    work = None
    if budget <= OMP_MAX_BUDGET:
        K = _kernel_block(kernel, kernel_code, rows, rows)
        Kcoef = K @ coef  # read by matching pursuit and by the refit
        # Matching pursuit among the members of largest function only: an
        # O(candidates budget^2) pursuit (see OMP_CANDIDATES).
        C = _largest(coef, kxx, OMP_CANDIDATES * budget)
        # The candidates' values read in K where they are (no gather of
        # their block: a step of the pursuit reads one of its rows).
        S = C[omp_select(K, Kcoef[C], budget, OMP_TOL * kmax, C)]
    if S.size:
        # The pool's function fitted at the pool's own rows (the module's
        # docstring): the normal equations of min ||K_{pool,S} c - K acc||^2,
        # with K divided by max k(x, x) (the same c, and no overflow of its
        # squares where the kernel's values are huge). Not where it is 1
        # (rbf): the same values, without a pass. K_{pool,S}^T is the rows
        # K[S] of the symmetric K (no gather of columns), and its normal
        # matrix one triangle by syrk (half the products; the Cholesky
        # factor reads no other).
        At = K[S]
        if kmax != 1.0:
            At, Kcoef = At / kmax, Kcoef / kmax
        normal = dsyrk(1.0, At.T, trans=1, lower=1)
        rhs, ridge = At @ Kcoef, RIDGE * rows.shape[0]
    else:
        # Above 128, or no member with a positive residual (a kernel that
        # is not positive semi-definite): by the size of each function, and
        # the projection in the kernel's space.
        S = _largest(coef, kxx, budget)
        normal, rhs, work = _projection_terms(kernel, kernel_code, rows, coef, S)
        ridge = RIDGE * kmax
    # Not matching pursuit again where the solve fails, whose Gram matrix of
    # the whole pool would take O(pool^2) memory at a large budget.
    kept = ridge_fit(normal, rhs, ridge, work)
    if kept is None:
        warnings.warn(
            "The kernel's Gram matrix of the averaged model is not positive definite: "
            "the members kept for the average within the budget keep their own "
            "coefficients, and the others are dropped.",
            UserWarning,
            stacklevel=2,
        )
        kept = coef[S]
    return _rows(rows, S), kept, idx[S]


def _largest(coef, kxx, m):
    """The ``m`` members of largest function ``||coef_j|| sqrt(|k(x_j, x_j)|)``
    (the first on ties), in increasing order."""
    size = np.sqrt(np.einsum("ij,ij->i", coef, coef) * np.abs(kxx))
    return np.sort(np.argsort(-size, kind="stable")[:m])


def _projection_terms(kernel, kernel_code, rows, coef, S):
    """``K_SS``, ``K_{S,rows} coef`` and a work buffer for the projection onto
    the span of ``S``.

    The ``|S| x n`` kernel block is computed a band of rows of ``S`` at a
    time, the blocks of an expansion of about ``2^20`` values (at least 64
    rows: 8 to 17 MiB at a budget of 4000, within the last-level cache
    where each step of the rbf kernel reads and writes them again), all in
    one buffer, which then holds the Cholesky factor (:func:`ridge_fit`):
    no fresh pages per band. The bands do not depend on ``working_memory``
    (the model's values would). The products are those of the whole block
    up to rounding (BLAS may group the rows of a band otherwise).
    """
    n, b = rows.shape[0], S.size
    XS = _rows(rows, S)
    normal = np.empty((b, b))
    rhs = np.empty((b, coef.shape[1]))
    bands = expansion_batches(b, n, within_working_memory=False)
    work = np.empty(max(max((sl.stop - sl.start for sl in bands), default=0) * n, b * b))
    # Sparse rows of many features indexed once for all the bands, each of
    # which then walks its own entries, not all of the rows' (at a budget of
    # 4,000 in 50,000 features, 62 bands of 64 rows against 20,000 rows).
    index = row_index(kernel, rows) if len(bands) > 1 else None
    for sl in bands:
        K = _kernel_block(kernel, kernel_code, XS[sl], rows, work, index)
        rhs[sl] = K @ coef
        # Gathered into place: ``K[:, S]`` would be a temporary as large as
        # the band. "clip" (S holds columns of K, sorted positions from
        # _largest): with "raise", numpy gathers into such a temporary first,
        # to leave ``out`` as it was if an index were out of range.
        np.take(K, S, axis=1, out=normal[sl], mode="clip")
    return normal, rhs, work


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
    true units, up to the round ``stamp``); the members that leave go to the
    pool, compressed within the budget (``average=True`` with a removal
    rule) or kept whole (``average='exact'``).
    """

    @property
    def _averages(self):
        """Whether the engine keeps the running sums of the average."""
        return self._conversion in ("average", "exact")

    @property
    def _bounded_pool(self):
        """Whether the average is kept within the budget by a pool (removal rules)."""
        return self._conversion == "average" and self._removes_members

    def _pool_rows(self):
        """The member rows of the pool (dense, CSR, or during a call's rounds
        a :class:`~sklearn_budget._kernels.CSRRows` view, see
        ``_rounds._PoolRows``)."""
        n = int(self._state["pool_n"][0])
        return self._state["pool_X"][:n] if self._dense else self._pool_X

    def _pool_room(self):
        """How many members may leave before the pool is due for compression
        (None: never, the exact average)."""
        if not self._bounded_pool:
            return None
        return POOL_FACTOR * self.budget - int(self._state["pool_n"][0])

    def _fold_retired(self, retired):
        """Append the members that left (``engine.retired()``, with for a
        sparse stream the pool's rows followed by theirs) to the pool, and
        compress it if it is due.
        """
        ridx, racc, rX = retired[:3]
        self._before_change("pool_")
        state = self._state
        n, m = int(state["pool_n"][0]), ridx.shape[0]
        if self._dense:
            if state["pool_X"].shape[0] < n + m:
                cap = max(n + m, 2 * state["pool_X"].shape[0], 16)
                for name in ("pool_X", "pool_coef", "pool_idx"):
                    grown = np.zeros((cap,) + state[name].shape[1:], dtype=state[name].dtype)
                    grown[:n] = state[name][:n]
                    state[name] = grown
            state["pool_X"][n : n + m] = rX
        else:
            self._pool_X = retired[5]
            for name in ("pool_coef", "pool_idx"):
                state[name] = state[name][:n]
        if self._dense:
            state["pool_coef"][n : n + m] = racc
            state["pool_idx"][n : n + m] = ridx
        else:
            state["pool_coef"] = np.concatenate([state["pool_coef"], racc])
            state["pool_idx"] = np.concatenate([state["pool_idx"], ridx])
        state["pool_n"] = np.array([n + m], dtype=np.int64)
        if self._bounded_pool and n + m > POOL_FACTOR * self.budget:
            self._compress_pool()

    def _compress_pool(self):
        """Compress the pool to the budget (in arrays of the same capacity)."""
        state = self._state
        n = int(state["pool_n"][0])
        rows, coef, idx = compress(
            # A matrix (a sparse pool is a view of _rounds._PoolRows between
            # its folds): the rbf Gram matrix of canonical CSR rows is one
            # triangle, mirrored.
            as_matrix(self._pool_rows()),
            state["pool_coef"][:n],
            state["pool_idx"][:n],
            self._kernel,
            self._kernel_code,
            self.budget,
        )
        m = idx.shape[0]
        if self._dense:
            for name, kept in (("pool_X", rows), ("pool_coef", coef), ("pool_idx", idx)):
                new = np.zeros_like(state[name])
                new[:m] = kept
                state[name] = new
        else:
            self._pool_X = rows
            state["pool_coef"], state["pool_idx"] = np.ascontiguousarray(coef), idx
        state["pool_n"] = np.array([m], dtype=np.int64)

    def _average_is_finite(self):
        """Whether the sums of the average are finite, brought up to the
        current round as :meth:`_publish` brings them: coefficients near the
        largest float overflow in the sums of the rounds that follow."""
        if not self._averages:
            return True
        state = self._state
        return average_finite(
            state["acc"],
            state["alpha"],
            state["stamp"],
            float(state["scale"][1]),
            int(state["counters"][0]),
            state["pool_coef"],
            int(state["pool_n"][0]),
        )

    def _averaged_members(self, sv, idx, coef, compress_pool=True):
        """The members, stream indices and coefficients of the averaged hypothesis.

        ``sv``, ``idx``, ``coef``: the current members, in position order,
        with their stored coefficients (shape (n_rows, n_members)). Members
        that took part in no hypothesis of the average are left out. With
        ``compress_pool=False``, the pool and the members as they are (up
        to ``POOL_FACTOR + 1`` budgets of them), not compressed within the
        budget.
        """
        n, t, state = self._n, self._t, self._state
        # The running sums are in the coefficients' true units.
        coef = state["acc"][:n] + coef.T * (state["scale"][1] - state["stamp"][:n])[:, None]
        m = int(state["pool_n"][0])
        if m:
            sv = _vstack(self._pool_rows(), sv)
            idx = np.concatenate([state["pool_idx"][:m], idx])
            coef = np.concatenate([state["pool_coef"][:m], coef])
        # A member that joined on the last round played took part in no
        # hypothesis of the average.
        used = np.flatnonzero(np.any(coef != 0, axis=1))
        if used.size < idx.size:
            sv, idx, coef = _rows(sv, used), idx[used], coef[used]
        if self._bounded_pool and compress_pool:
            sv, coef, idx = compress(sv, coef, idx, self._kernel, self._kernel_code, self.budget)
        return sv, idx, np.ascontiguousarray(coef.T) / t

    def _stack(self, parts):
        """Rows of the stream format, stacked."""
        if self._dense:
            return np.concatenate(parts, axis=0)
        return sp.vstack(parts, format="csr")
