"""The round driver of the kernel estimators: blocks of rows, kernel paths, capacity.

Each round is played exactly as the per-sample algorithm plays it: the
kernel row of the round against the current members, the scores of the
current hypothesis computed afresh from the coefficients, the margin, then
the update. Only where the kernel values come from changes, chosen per
block of ``_BLOCK_SIZE`` rows by a cost model (:func:`_direct_pays`):

- **direct**: the compiled loop computes each kernel row from the stored
  member rows (dense input, built-in kernels). Cheapest in low dimension,
  where a round's kernel work is a few hundred flops.
- **blocked**: one :func:`~sklearn.metrics.pairwise.pairwise_kernels` call
  gives ``K(block, [members; block])`` (BLAS for the inner products), the
  block against the members of its start *and* against its own rows, so
  that a row that joins during the block already has its kernel column
  (for the rbf kernel of sparse rows, as products, made values before
  each round for the rows that joined: ``Kernel.rounds_block``).
  Used for high dimension, sparse input, and callable kernels.

Every call plays its rounds on one BLAS thread (:func:`play_rounds`), so
that the model has the same bits whatever threads the process allows.

Members are stored in capacity buffers that grow geometrically
(:func:`grow_members`), and never beyond ``budget + 1`` for a budget
algorithm; a removal moves the last member into the freed place.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp

from ._dense_rows import RowIndex, SparseScratch, gather_csr_rows, gather_csr_rows_into
from ._engine import Engine
from ._kernels import (
    CSRRows,
    _sparse_rbf,
    as_matrix,
    indexes_rows,
    single_blas_thread,
    walks_index,
)

# Rows per block: the unit of kernel work of the blocked path, and of the
# calls into the compiled loop (an interrupt is seen between blocks).
_BLOCK_SIZE = 256

# Cost model of a block, in nanoseconds, fitted to benchmarks/bench_crossover.py
# (2-core x86-64 machine, one BLAS thread, rbf). Direct: each kernel value
# costs a compiled loop over the features plus an exp and its share of the
# scores. Blocked: one pairwise_kernels call costs about a millisecond of
# validation and temporaries, then per kernel value a BLAS share of the
# features and a few elementwise passes. Measured crossover: about 100
# features at |S| = 100, about 16 at |S| = 1000.
_DIRECT_NS_PER_FEATURE = 0.95
_DIRECT_NS_PER_VALUE = 9.0
_BLOCKED_NS_PER_FEATURE = 0.08
_BLOCKED_NS_PER_VALUE = 9.0
_BLOCKED_NS_PER_CALL = 1_000_000.0

_INT32_MAX = np.iinfo(np.int32).max


def _direct_pays(n_members, n_rows, n_features, within_block=True):
    """Whether computing the kernel rows in the loop beats one BLAS block.

    ``within_block``: the rows are a block of rounds, whose BLAS block also
    needs their kernel values with each other (the members they may
    become); scoring rows needs only those with the members.
    """
    direct = n_members * n_rows * (n_features * _DIRECT_NS_PER_FEATURE + _DIRECT_NS_PER_VALUE)
    columns = n_members + n_rows if within_block else n_members
    blocked = _BLOCKED_NS_PER_CALL + n_rows * columns * (
        n_features * _BLOCKED_NS_PER_FEATURE + _BLOCKED_NS_PER_VALUE
    )
    return direct <= blocked


def _max_direct_members(n_features):
    """Most members for which a one-row block takes the direct path (:func:`_direct_pays`)."""
    lo, hi = 0, 1 << 40  # _direct_pays holds at lo; it is monotone in the members
    if _direct_pays(hi, 1, n_features):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _direct_pays(mid, 1, n_features) else (lo, mid)
    return lo


def _overflow_message(X, w, what):
    amax = abs(X).max() if X.shape[0] else 0.0
    wmax = np.max(w, initial=0.0)
    return (
        f"{what}: the kernel values or the coefficients overflowed (largest |x| in "
        f"the call: {amax:.3g}, largest sample_weight: {wmax:.3g}). Scale the features "
        "(for example with StandardScaler), or use a smaller gamma or smaller sample "
        "weights. The model is left as it was before the call."
    )


def _vstack(A, B):
    """The rows of ``A`` followed by those of ``B`` (rows or :class:`~._kernels.CSRRows`)."""
    A, B = as_matrix(A), as_matrix(B)
    if type(A) is sp.csr_matrix and type(B) is sp.csr_matrix and A.shape[1] == B.shape[1]:
        return _append_rows(A, B.data, B.indices, B.indptr)
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    return np.concatenate([A, B], axis=0)


def _rows(X, rows):
    """``X[rows]`` (``rows``: a slice or an array of row indices).

    For a ``csr_matrix`` the rows are gathered here, in their stored order
    (as scipy's indexing gathers them, the same matrix): scipy's indexing
    costs about a hundred microseconds a call, several times per block of
    rounds. Other rows are indexed (a slice of dense rows is a view); the
    rows of a :class:`~._kernels.CSRRows` are gathered into one (the
    recorded rows of a block, whose kernel values read the arrays).
    """
    if type(X) is CSRRows:
        rows = np.arange(*rows.indices(X.shape[0])) if isinstance(rows, slice) else rows
        rows = np.asarray(rows, dtype=np.intp)
        return CSRRows(*gather_csr_rows(X.data, X.indices, X.indptr, rows), (rows.size, X.shape[1]))
    if type(X) is not sp.csr_matrix:
        return X[rows]
    indptr = X.indptr
    if isinstance(rows, slice) and rows.step not in (None, 1):
        # A strided slice (the end-of-fit check's evenly spaced rows): by its indices.
        rows = np.arange(*rows.indices(X.shape[0]))
    if isinstance(rows, slice):
        start, stop, _ = rows.indices(X.shape[0])
        stop = max(start, stop)
        lo, hi = indptr[start], indptr[stop]
        shape = (stop - start, X.shape[1])
        idx = _index_dtype(shape, hi - lo)
        return sp.csr_matrix(
            (
                X.data[lo:hi].copy(),
                X.indices[lo:hi].astype(idx),
                (indptr[start : stop + 1] - lo).astype(idx, copy=False),
            ),
            shape=shape,
        )
    rows = np.asarray(rows, dtype=np.intp)
    data, indices, indptr = gather_csr_rows(X.data, X.indices, indptr, rows)
    shape = (rows.size, X.shape[1])
    idx = _index_dtype(shape, data.size)
    return sp.csr_matrix(
        (data, indices.astype(idx, copy=False), indptr.astype(idx, copy=False)), shape=shape
    )


def _blocks(order, n_rounds, size):
    """The blocks of ``size`` rounds of a call: ``(positions, rows)`` each,
    ``positions`` the slice of its rounds (of ``y``, ``w``, ``index``, in the
    order played) and ``rows`` its rows of ``X`` (see :func:`_select`;
    ``order``: the rows of the rounds, None for all of ``X`` in order).

    Every call of the rounds walks its rows so: ``fit`` plays each epoch
    through its order of row indices, and a block gathers its own rows (the
    same values as a copy of the shuffled rows, at the memory of a block).
    """
    for start in range(0, n_rounds, size):
        positions = slice(start, min(start + size, n_rounds))
        yield positions, positions if order is None else _select(order, positions)


def _select(rows, which):
    """``rows[which]``, for ``rows`` a slice of positive step (with its stop)
    or an array of row indices, ``which`` a slice or an array of positions.

    How the rounds name their rows of ``X`` without gathering them: an epoch
    of ``fit`` plays the rows of its order (an index array; a call of
    ``partial_fit`` all its rows, a slice), a block of rounds
    ``_select(order, slice(start, stop))`` of them, read by ``_rows(X, ...)``
    only where the block needs them (see :func:`_blocks`). A slice of a
    slice stays a slice, so that dense rows in their order are read as a
    view.
    """
    if not isinstance(rows, slice):
        return rows[which]
    if not isinstance(which, slice):
        return np.arange(rows.start, rows.stop, rows.step or 1)[which]
    within = range(rows.start, rows.stop, rows.step or 1)[which]
    return slice(within.start, within.stop, within.step)


def _stack_rows(A, X, rows):
    """``_vstack(A, _rows(X, rows))``: the rows of ``A`` followed by rows
    ``rows`` (an array of row indices) of ``X`` (rows or :class:`~._kernels.CSRRows`).

    For two ``csr_matrix`` the same matrix in one constructor, not three
    (the rows gathered, then scipy's stack): the members that leave the
    rounds of a sparse stream join the pool's rows once per segment.
    """
    csr = type(X) is sp.csr_matrix or type(X) is CSRRows
    if not (type(A) is sp.csr_matrix and csr and A.shape[1] == X.shape[1]):
        return _vstack(A, _rows(X, rows))
    return _append_rows(A, *gather_csr_rows(X.data, X.indices, X.indptr, rows))


def _append_rows(A, data, indices, ptr):
    """The ``csr_matrix`` of the rows of ``A`` followed by the CSR rows
    ``(data, indices, ptr)``, as scipy's stack makes it, in one constructor
    (scipy's ``vstack`` costs tens of microseconds more, once per block).
    """
    a = A.indptr
    shape = (A.shape[0] + ptr.size - 1, A.shape[1])
    idx = _index_dtype(shape, int(a[-1]) + int(ptr[-1]))
    # scipy's stack: the index pointers of A but its last, then those of
    # the rows, shifted by A's last one.
    indptr = np.empty(a.size + ptr.size - 1, dtype=idx)
    indptr[: a.size - 1] = a[:-1]
    indptr[a.size - 1 :] = ptr
    indptr[a.size - 1 :] += a[-1]
    return sp.csr_matrix(
        (np.concatenate([A.data, data]), np.concatenate([A.indices, indices], dtype=idx), indptr),
        shape=shape,
    )


def _new_buffer(n_rows, nnz):
    """Empty CSR buffers (values, 32-bit indices and pointers) for ``n_rows``
    rows of ``nnz`` entries in all (:func:`_put_rows` grows them)."""
    return [np.empty(nnz), np.empty(nnz, dtype=np.int32), np.zeros(n_rows + 1, dtype=np.int32)]


def _put_rows(buf, csr, rows, at):
    """Rows ``rows`` of the CSR arrays ``csr`` into the buffers ``buf`` from
    row ``at`` (after the entries of the rows before it), grown as needed."""
    if buf[2].shape[0] < at + rows.shape[0] + 1:
        buf[2] = _grown(buf[2], at + rows.shape[0] + 1, at + 1)
    if gather_csr_rows_into(*csr, rows, *buf, at) < 0:
        # Twice the room (the entries before row ``at`` kept), then written.
        keep = int(buf[2][at])
        need = keep + int(np.sum(np.diff(csr[2])[rows]))
        buf[0], buf[1] = _grown(buf[0], need, keep), _grown(buf[1], need, keep)
        gather_csr_rows_into(*csr, rows, *buf, at)


def _buffer_rows(buf, start, stop, n_features):
    """Rows ``start:stop`` of the buffers ``buf``, as the views of a :class:`~._kernels.CSRRows`."""
    data, indices, ptr = buf
    lo, hi = int(ptr[start]), int(ptr[stop])
    indptr = ptr[start : stop + 1] if lo == 0 else ptr[start : stop + 1] - lo
    return CSRRows(data[lo:hi], indices[lo:hi], indptr, (stop - start, n_features))


class _BlockRows:
    """The CSR rows of a sparse call's blocks of rounds, in two buffers reused
    from block to block.

    A block needs the rows of the members followed by its own (``Z``, for
    its kernel values) and its own (``Xb``); at its end the members are the
    rows of ``Z`` at ``cols``. Each block appends its rows after the
    members in the buffer that holds them, and gathers the members that
    stay into the other buffer, where the next block's rows follow them:
    ``Z``, ``Xb`` and the members are views of a buffer, the same matrices
    as :func:`_rows` and :func:`_vstack` give (with 32-bit indices), and no
    rows are allocated per block (fresh arrays of tens of thousands of
    entries cost page faults: a one-pass fit of issue 29's rows of 50,000
    features at a budget of 100 takes about 4% less CPU time; the same at a
    budget of 1,000). All three are :class:`~._kernels.CSRRows`, a scipy
    matrix only for the code that asks for one (a construction costs tens
    of microseconds: two a block were 15% of that fit, whose rbf kernel
    reads the arrays); the members are held so between the blocks of a
    call (``_sv_sparse``, a matrix when read through ``_sv`` and at the
    call's end).

    A view is overwritten two blocks later: rows kept across blocks are
    copied (the pool's, those of an error set, the scorer of the average).
    The buffers are the call's own: the members held before the call (which
    a failed call puts back) are never written.
    """

    def __init__(self, members, n_rows, nnz):
        self._d = members.shape[1]
        self._bufs = [_new_buffer(n_rows, nnz), _new_buffer(n_rows, nnz)]
        self._n = self._m = members.shape[0]  # members, rows of Z, in self._bufs[0]
        rows = np.arange(self._n, dtype=np.intp)
        self._put((members.data, members.indices, members.indptr), rows, 0)

    @classmethod
    def of(cls, est, X, block_size):
        """The buffers of a call on ``X``, or None where the rows are not
        float64 ``csr_matrix`` rows whose indices fit in 32 bits (then
        :func:`_rows` and :func:`_vstack` give the blocks' rows)."""
        sv = None if est._dense else est._sv
        if not (
            type(sv) is sp.csr_matrix
            and type(X) is sp.csr_matrix
            and X.dtype == sv.dtype == np.float64
            and np.intc().itemsize == 4
            and max(X.shape[1], sv.nnz + X.nnz) <= _INT32_MAX
        ):
            return None
        # Room for the members and a block (grown as needed), of rows of the
        # average row's entries.
        limit = est._max_members()
        n_rows = sv.shape[0] if limit is None else min(limit, sv.shape[0] + X.shape[0])
        n_rows = max(n_rows, sv.shape[0]) + block_size
        nnz = sv.nnz + n_rows * max(1, X.nnz // max(1, X.shape[0]))
        return cls(sv, n_rows, nnz)

    def _put(self, csr, rows, at):
        """Rows ``rows`` of the CSR arrays ``csr`` into buffer 0 from row ``at``."""
        _put_rows(self._bufs[0], csr, rows, at)

    def _views(self, start, stop):
        """Rows ``start:stop`` of buffer 0, as the views of a :class:`~._kernels.CSRRows`."""
        return _buffer_rows(self._bufs[0], start, stop, self._d)

    def block(self, X, rows):
        """``(Xb, Z)``: the rows ``rows`` of ``X`` (a slice or an array of
        row indices), and the members followed by them (a
        :class:`~._kernels.CSRRows`)."""
        if isinstance(rows, slice):
            rows = np.arange(*rows.indices(X.shape[0]), dtype=np.intp)
        else:
            rows = np.asarray(rows, dtype=np.intp)
        n = self._n
        self._m = n + rows.shape[0]
        self._put((X.data, X.indices, X.indptr), rows, n)
        return self._views(n, self._m), self._views(0, self._m)

    def keep(self, cols):
        """The members at the block's end, the rows ``cols`` of its ``Z``."""
        cols = np.asarray(cols, dtype=np.intp)
        self._bufs.reverse()
        data, indices, ptr = self._bufs[1]
        self._put((data, indices, ptr[: self._m + 1]), cols, 0)
        self._n = self._m = cols.shape[0]
        return self._views(0, self._n)


class _PoolRows:
    """The rows of an averaged sparse stream's pool during a call, in a buffer
    that the members leaving the rounds are gathered into.

    Each segment of rounds whose members left stacks the pool's rows and
    theirs (the members of the margins of its recorded rounds, then the
    pool's rows after the fold): as a ``csr_matrix``, a copy of the whole
    pool and a construction each time, 5% of an averaged one-pass fit of
    sparse rows at a budget of 100. Here the pool is a
    :class:`~._kernels.CSRRows` view of the buffer's first rows and only
    the rows that leave are copied, after them. A pool that is not the last
    view handed out (the pool at the call's start, a compressed pool) is
    first copied into a fresh buffer. Views are never written again (rows
    go after them; a full buffer is replaced by a larger copy), so that the
    pool a failed call puts back and the rows that a scorer holds stay. The
    buffers are the call's own (32-bit indices, as :class:`_BlockRows`); the
    fitted model holds a copy of the last view, not the buffer.

    The rbf kernel values of the margins' recorded rows against the last
    view (:meth:`rbf`) come from an index of the buffer's rows by feature
    that grows with it (:class:`~._dense_rows.RowIndex`), where the rows
    are high-dimensional and sparse: a segment's call then walks the
    entries of its few rows, not those of the whole pool (at a budget of
    1,000 in 50,000 features, two thirds of the time of the margins).
    """

    def __init__(self, n_features):
        self._d = n_features
        self._buf = None
        self._n = 0
        self._view = None
        self._index = None

    def extended(self, pool, Z, cols):
        """The rows of ``pool`` followed by the rows ``cols`` of ``Z`` (a
        :class:`~._kernels.CSRRows` of :class:`_BlockRows`): the rows of
        :func:`_stack_rows`, as a :class:`~._kernels.CSRRows` (a
        ``csr_matrix`` where their entries exceed 32-bit pointers)."""
        cols = np.asarray(cols, dtype=np.intp)
        fresh = pool is not self._view
        held = int(pool.indptr[-1]) if fresh else int(self._buf[2][self._n])
        size = held + int(np.sum(np.diff(Z.indptr)[cols]))
        if size > _INT32_MAX:
            # Entries beyond 32-bit pointers: scipy's stack, whose indices widen.
            self._view = self._index = None
            return _stack_rows(as_matrix(pool), Z, cols)
        if fresh:
            # Room for twice the pool and the rows that leave.
            n = pool.shape[0]
            self._index = None
            self._buf = _new_buffer(2 * (n + cols.shape[0]), 2 * size)
            rows = np.arange(n, dtype=np.intp)
            _put_rows(self._buf, (pool.data, pool.indices, pool.indptr), rows, 0)
            self._n = n
        _put_rows(self._buf, (Z.data, Z.indices, Z.indptr), cols, self._n)
        self._n += cols.shape[0]
        self._view = _buffer_rows(self._buf, 0, self._n, self._d)
        return self._view

    def rbf(self, kernel, X, members):
        """``kernel(X, members)`` for the rbf kernel of CSR rows ``X`` where
        ``members`` is the last view, from the index of the buffer's rows
        (rows of ``X`` it does not take: as :meth:`Kernel.__call__`), or
        None (another kernel or view, rows of ``X`` that :func:`~._kernels.walks_index`
        refuses, a pool too small for :func:`~._kernels.indexes_rows`)."""
        if members is None or members is not self._view or kernel.kernel != "rbf":
            return None
        data, indices, indptr = self._buf
        if not (walks_index(X) and indexes_rows(self._d, int(indptr[self._n]))):
            # Rows of few features, or a pool too small for the index's
            # heads: sparse_rbf_exponents' own index, as before.
            return None
        if self._index is None:
            self._index = RowIndex(self._d)
        self._index.extend(indices, indptr, data, self._n)
        return _sparse_rbf(X, members, kernel.gamma, index=self._index)


def _grown(a, need, keep):
    """``a`` if it holds ``need`` entries, else a copy of its first ``keep`` in twice the room."""
    if a.shape[0] >= need:
        return a
    out = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    out[:keep] = a[:keep]
    return out


def _index_dtype(shape, nnz):
    """The index type that scipy's ``csr_matrix`` constructor gives the valid
    CSR arrays of ``nnz`` entries and shape ``shape``, whatever their types:
    int32 where the shape and the entries' count fit in it.

    The arrays passed in that type spare the constructor its scan of 64-bit
    indices for values that fit in 32 bits, and its copy of them (tens of
    microseconds, at each block of rounds and each join of the pool).
    """
    if np.intc().itemsize != 4:
        return np.int64
    fits = 0 in shape or max(shape) <= _INT32_MAX
    return np.int32 if fits and nnz <= _INT32_MAX else np.int64


def _regrow(a, axes, new):
    """Copy of ``a`` with the member axes ``axes`` grown to ``new`` entries.

    ``axes="packed"`` is a packed lower triangle of ``new`` rows.
    """
    if axes == "packed":
        out = np.zeros(new * (new + 1) // 2, dtype=a.dtype)
        out[: a.shape[0]] = a
        return out
    shape = list(a.shape)
    for ax in axes:
        shape[ax] = new
    out = np.zeros(shape, dtype=a.dtype)
    out[tuple(slice(0, s) for s in a.shape)] = a
    return out


def grow_members(state, member_axes, need, limit):
    """Grow the member buffers of ``state`` to hold ``need`` members; whether they moved.

    ``member_axes``: the member axes of each array (see :func:`_regrow`);
    ``limit``: the most members the rule ever holds (None: unbounded). The
    capacity doubles, so that a stream regrows its buffers ``log`` times.
    """
    cap = state["alpha"].shape[0]
    if limit is not None:
        need = min(need, limit)
    if need <= cap:
        return False
    new = max(need, 2 * cap, 16)
    if limit is not None:
        new = min(new, limit)
    for name, axes in member_axes.items():
        if axes:
            state[name] = _regrow(state[name], axes, new)
    return True


def _uses_direct_path(est, n_members, n_rows, n_features, force):
    """Whether a block's kernel rows are computed by the compiled loop."""
    if est._direct_only:
        return True
    if not (est._dense and est._kernel_code is not None):
        return False
    if force is not None:
        return force == "direct"
    return _direct_pays(n_members, n_rows, n_features)


@single_blas_thread()
def play_rounds(est, X, y, w, index, on_block, calibrate, force, order=None):
    """Play the rounds ``(X[order[i]], y[i])`` of the kernel estimator ``est`` in order.

    ``order``: the rows of ``X`` played (an array of row indices or a slice,
    see :func:`_blocks`; None: every row, in order). ``y`` holds the class
    indices, ``w`` the sample weights (all positive) and ``index`` the
    identifier stored in ``support_`` for each round, in the order played.
    ``on_block``, if given, is called after each block, with the counters
    stored (progress output). ``calibrate``: whether the rows are seen for
    the first time, so that their margins, out of sample, feed the
    probabilities. ``force``: the kernel path of every block ("direct" or
    "blocked", for the tests and the benchmarks), or None for the cost model.

    On one BLAS thread: a product on several threads may sum in another
    order (OpenBLAS's gemm does, for the blocks' kernel values in high
    dimension; so do the products of the averaged margins and of the
    rules), and the model must be the same for any thread count.
    """
    kernel, state = est._kernel, est._state
    engine = Engine(
        state["alpha"].shape[1],
        est._averages,
        est._keeps_gram,
        est._removes_members,
        est._dense,
        est._kernel_code,
        float(kernel.gamma),
        float(kernel.degree),
        float(kernel.coef0),
        X.shape[1],
    )
    rule = est._make_rule()
    y = np.ascontiguousarray(y, dtype=np.int64)
    if est._binary:
        y = 2 * y - 1  # the rules take the labels of two classes as -1/+1
    w = np.ascontiguousarray(w, dtype=np.float64)
    index = np.ascontiguousarray(index, dtype=np.int64)
    bound = False
    # Averaged models score some rounds under the average of the rounds so
    # far (the engine gives the current members' part, the pool's is added
    # per segment of the block: _segment_margins).
    average_margins = calibrate and est._averages
    engine.cal_average = average_margins
    # Rounds that are not recorded (the later epochs of fit) change the
    # model whose scale the recorded margins fit: see _rescale_margins.
    norm_before = None if calibrate else est._model_norm()
    # The blocks' kernel buffers, allocated once per call (sparse rbf rows)
    # at its first block that computes kernel values.
    scratch = None
    # A sparse call's rows of the blocks, in reused buffers (see _BlockRows),
    # and those of an averaged model's pool (_PoolRows).
    block_rows = _BlockRows.of(est, X, _BLOCK_SIZE)
    pool_rows = None if block_rows is None or not est._averages else _PoolRows(X.shape[1])
    for sl, rows in _blocks(order, y.shape[0], _BLOCK_SIZE):
        if block_rows is None:
            Xb, Z_rows = est._as_stream_format(_rows(X, rows)), None
        else:
            Xb, Z_rows = block_rows.block(X, rows)
        b, n = Xb.shape[0], est._n
        moved = est._ensure_capacity(n + b)
        moved = est._prepare_block(b) or moved
        if moved or not bound:
            engine.bind(est._state)
            rule.bind(est._state)
            bound = True
        with np.errstate(all="ignore"):  # overflow: non-finite scores, reported
            diag = np.ascontiguousarray(kernel.diag(Xb), dtype=np.float64)
        Z = Kc = columns = None
        if not _uses_direct_path(est, n, b, X.shape[1], force):
            scratch = SparseScratch() if scratch is None else scratch
            Z = _vstack(est._sv, Xb) if Z_rows is None else Z_rows
            # Overflow shows as non-finite scores, reported by the loop.
            with np.errstate(all="ignore"):
                Kc, columns = kernel.rounds_block(Xb, Z, n, scratch)
            if est._dense and est._kernel_code is not None and not np.isfinite(Kc).all():
                # Huge rows: the values of the direct path, by differences.
                Kc = est._kernel_matrix(Xb, Z)
        engine.set_block(
            y[sl], w[sl], diag, index[sl], Kc=Kc, Xb=Xb if est._dense else None, columns=columns
        )
        est._block_start(rule, Xb, y[sl], Z, Kc)
        yb = y[sl]
        cls = (yb > 0).astype(np.intp) if est._binary else yb.astype(np.intp)
        scored = []
        pos = 0
        while pos < b:
            # The segments of the block end where the pool is due for
            # compression, so that each round sees the pool of its stream.
            room = est._pool_room() if est._averages else None
            engine.ret_limit = -1 if room is None else room
            engine.play(rule, pos, b)
            if engine.bad_row >= 0:
                row = sl.start + engine.bad_row
                raise ValueError(
                    _overflow_message(X, w, f"Non-finite scores at row {row} of the call")
                )
            end = engine.stopped_at
            engine.store_counters(est._state)
            retired = engine.retired()
            if retired is not None and not est._dense:
                # A sparse stream's members that left, as rows (the engine
                # keeps their block columns) after the pool's: stacked once,
                # for the margins and for the pool's fold.
                pool = est._pool_rows()
                if pool_rows is None:
                    rows_now = _stack_rows(pool, Z, retired[3])
                else:
                    rows_now = pool_rows.extended(pool, Z, retired[3])
                retired = retired + (rows_now,)
            if average_margins:
                scored.append(est._segment_margins(engine, Xb, yb, pos, end, retired, pool_rows))
            if retired is not None:
                est._fold_retired(retired)
                engine.clear_retired()
            pos = end
        if calibrate:
            t_end = est._t
            rounds = np.arange(t_end - b + 1, t_end + 1, dtype=np.float64)
            weights = w[sl]
            if average_margins:
                rows = np.concatenate([r for r, _ in scored])
                margins = np.concatenate([m for _, m in scored])
                cls, rounds = cls[rows], rounds[rows]
                # Each recorded round stands for the rounds between two records;
                # a weight near the float64 limit saturates to inf, as the bins'
                # sums of such weights do.
                with np.errstate(over="ignore"):
                    weights = est._margin_strides(rounds) * weights[rows]
            else:
                margins = engine.margins(b)
            est._before_change("cal_")
            est._record_margins(margins, cls, weights, rounds)
        if not est._dense:
            cols = est._state["cols"][: est._n]
            est._sv_sparse = _rows(Z, cols) if block_rows is None else block_rows.keep(cols)
        est._block_end(rule, Xb, Z)
        if on_block is not None:
            on_block()
    if not est._dense:
        # The members as a matrix (the buffers' views) for the fitted model,
        # and the pool's rows.
        est._sv_sparse = as_matrix(est._sv_sparse)
        if pool_rows is not None and type(est._pool_X) is CSRRows:
            # A copy: the views of the call's buffer (with room for up to
            # twice the pool) would keep the whole buffer in the fitted model.
            est._pool_X = as_matrix(est._pool_X).copy()
    # The last update of a call has no later round whose scores would show
    # it. The coefficients are alpha times the global scale (budgeted SGD).
    if not np.isfinite(est._state["alpha"][: est._n] * est._state["scale"][0]).all():
        raise ValueError(_overflow_message(X, w, "Non-finite coefficients after the call"))
    if not est._average_is_finite():
        raise ValueError(_overflow_message(X, w, "Non-finite averaged coefficients after the call"))
    if norm_before is not None:
        est._rescale_margins(norm_before, est._model_norm())
