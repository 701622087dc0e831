# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Dense rows: the compiled kernels on them, and copying one row in.

The kernels (``dense_kernel``, ``dense_kernel_row``, in ``_dense_rows.pxd``)
give the kernel values of the *direct* path of the round loop, computed
from differences of the rows; :func:`kernel_block` gives the same values
for a block of rows, row by row, so that every kernel value of a dense
stream has one arithmetic. :func:`sparse_rbf_exponents` gives the
exponents of the rbf kernel of CSR rows, as scikit-learn computes them (in
the buffers of a :class:`SparseScratch` across the blocks of a call);
:func:`sparse_rbf_rounds` the values a block of rounds reads, those of its
rows with each other made as the rounds read them (:class:`BlockColumns`,
with numpy's own ``exp`` loop: :data:`EXP_LOOP`), and
:func:`dense_rbf_exponents` those of dense rows from their products;
:func:`gather_csr_rows` copies CSR rows, as the blocks gather their members,
and :func:`gather_csr_rows_into` into the reused buffers of a call's blocks.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport NAN, isfinite
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy

import threading

import numpy as np

#: Kernels with a compiled form (the ``direct`` path).
KERNEL_CODES = {
    "linear": K_LINEAR,
    "poly": K_POLY,
    "polynomial": K_POLY,
    "rbf": K_RBF,
    "sigmoid": K_SIGMOID,
    "laplacian": K_LAPLACIAN,
    "cosine": K_COSINE,
    "chi2": K_CHI2,
    "additive_chi2": K_ADDITIVE_CHI2,
}


def kernel_block(const double[:, ::1] X, const double[:, ::1] Z, kernel_code, double gamma,
                 double degree, double coef0):
    """``K(X, Z)`` for dense rows and a kernel of ``KERNEL_CODES``.

    For the small blocks of the averaged model, where the validation of
    ``pairwise_kernels`` costs more than the kernel values; computed from
    differences, so that huge rows give the values the round loop gives.
    """
    cdef Py_ssize_t i, m = X.shape[0], p = Z.shape[0], d = X.shape[1]
    cdef int kind = kernel_code
    out = np.zeros((m, p))
    cdef double[:, ::1] K = out
    if p == 0:
        return out
    with nogil:
        for i in range(m):
            dense_kernel_row(kind, &X[i, 0], &Z[0, 0], p, d, gamma, degree, coef0, &K[i, 0])
    return out


cdef extern from *:
    """
    /* The head of numpy's PyUFuncObject (numpy/ufuncobject.h, public and
       the same in numpy 1.x and 2.x) up to the type signatures of its loops. */
    typedef void (*sb_ufunc_loop)(char **, const Py_ssize_t *, const Py_ssize_t *, void *);
    typedef struct {
        PyObject_HEAD
        int nin, nout, nargs;
        int identity;
        sb_ufunc_loop *functions;
        void *const *data;
        int ntypes;
        int reserved1;
        const char *name;
        const char *types;
    } sb_ufunc_head;
    """
    ctypedef void (*sb_ufunc_loop)(char**, const Py_ssize_t*, const Py_ssize_t*,
                                   void*) noexcept nogil
    ctypedef struct sb_ufunc_head:
        int nin, nout, ntypes
        sb_ufunc_loop* functions
        void** data
        const char* types


# numpy's own float64 loop of ``np.exp``, called from compiled code: the
# values of a block's rows with the rows that joined (BlockColumns) are
# made in the round loop, and must be the bits that ``np.exp`` gives every
# other kernel value of a sparse stream.
cdef sb_ufunc_loop _exp_loop = NULL
cdef void* _exp_data = NULL


cdef inline void _unary_in_place(sb_ufunc_loop loop, void* data, double* x,
                                 Py_ssize_t n) noexcept nogil:
    """``x[:n] = f(x[:n])`` by a ufunc's float64 loop ``loop`` (contiguous, in place)."""
    cdef char* args[2]
    cdef Py_ssize_t dims[1]
    cdef Py_ssize_t steps[2]
    if n <= 0:
        return
    args[0] = <char*>x
    args[1] = <char*>x
    dims[0] = n
    steps[0] = steps[1] = sizeof(double)
    loop(args, dims, steps, data)


cdef void exp_in_place(double* x, Py_ssize_t n) noexcept nogil:
    """``x[:n] = np.exp(x[:n])``, by numpy's loop (:func:`_find_exp_loop`)."""
    _unary_in_place(_exp_loop, _exp_data, x, n)


def _find_exp_loop():
    """Take the loop that ``np.exp`` runs on float64 (the first of its
    ``dd`` loops, as numpy resolves it), and keep it only if it gives the
    bits of ``np.exp`` on probes over the whole range of the exponents
    (where it underflows and overflows, on -0.0, infinities and NaN too),
    in pieces of 1 to 40 values one after the other (every length of a
    loop's tail, at every alignment). Returns whether it is kept: without
    it, blocks of rounds make all the values of their rows with each other
    beforehand."""
    global _exp_loop, _exp_data
    if type(np.exp) is not np.ufunc:
        return False
    cdef sb_ufunc_head* u = <sb_ufunc_head*><void*>np.exp
    cdef int i, num = np.dtype(np.float64).num
    cdef sb_ufunc_loop loop = NULL
    cdef void* data = NULL
    if not (u.nin == 1 and u.nout == 1):
        return False
    for i in range(u.ntypes):
        if u.types[2 * i] == num and u.types[2 * i + 1] == num:
            loop, data = u.functions[i], u.data[i]
            break
    if loop == NULL:
        return False
    rng = np.random.RandomState(0)
    probe = np.concatenate([
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-320, -1e-320, -745.2, -708.4, 709.7, 710.0],
        np.linspace(-760.0, 720.0, 2_000),
        -rng.exponential(5.0, 2_000),
        rng.standard_normal(500) * 1e-6,
    ])
    with np.errstate(all="ignore"):
        expected = np.exp(probe)
    cdef double[::1] got = probe.copy()
    cdef Py_ssize_t start = 0, n = 1, total = got.shape[0]
    while start < total:
        # Pieces of lengths 1, 2, ..., 40, 1, ... at every offset.
        n = min(n, total - start)
        _unary_in_place(loop, data, &got[start], n)
        start += n
        n = n % 40 + 1
    if not np.array_equal(np.asarray(got).view(np.int64), expected.view(np.int64)):
        return False
    # Set once, at import (the data first: a loop is never seen without it).
    _exp_data = data
    _exp_loop = loop
    return True


#: Whether a block of rounds makes the values of its rows with the rows
#: that joined as the rounds read them (:class:`BlockColumns`).
EXP_LOOP = _find_exp_loop()


# The heads of the lists of the calls without a scratch (a kernel matrix of
# a few rows against a pool, the pool's Gram matrix): one array per thread,
# all -1 between calls, where a new array of n_features heads filled with -1
# at each call cost more than the index of a few rows.
_thread_heads = threading.local()


cdef object thread_heads(Py_ssize_t d):
    """This thread's heads of lists by feature, at least ``d`` of them, all
    -1: the call that takes them empties its lists before it returns (no
    Python code runs while they hold entries, so one call holds them at a
    time)."""
    heads = getattr(_thread_heads, "heads", None)
    if heads is None or heads.shape[0] < d:
        heads = _thread_heads.heads = np.full(d, -1, dtype=np.intp)
    return heads


cdef class SparseScratch:
    """Buffers of :func:`sparse_rbf_exponents` kept from one call to the next.

    The blocks of rounds of one call of ``fit`` or ``partial_fit`` ask for
    the kernel values of a block against the members block after block;
    allocating the index of the members' entries by feature and the output
    on each call costs page faults and ``O(n_features)`` initialisations
    that exceed the kernel values themselves for high-dimensional rows. One
    instance serves one call (it is not shared between threads). The output
    of a call is a view of ``out``, overwritten by the next call.

    ``out``: a flat float64 buffer for the outputs (grown like the others
    where a call needs more), or None.
    """

    cdef object head, nxt, row, first, fill, val, out
    cdef Py_ssize_t spare, base
    # A block of rounds (``chunk=0``): its rows' squared norms and the
    # members', which its BlockColumns reads.
    cdef object block_norms

    def __init__(self, bint reused=True, out=None):
        # Buffers that grow for later calls take twice what is asked.
        self.spare = 2 if reused else 1
        # The heads of the lists, offset by ``base`` (see csr_lists): a call
        # moves ``base`` past its entries rather than emptying the heads it
        # set, a pass of scattered writes (a fifth of the time of a block of
        # the issue's rows at a budget of 1,000).
        self.head = np.empty(0, dtype=np.intp)  # all below base between calls
        self.base = 0
        self.first = np.empty(0, dtype=np.intp)
        self.fill = self.first
        self.nxt = self.row = self.first
        self.val = np.empty(0)
        self.out = np.empty(0) if out is None else out

    cdef object output(self, Py_ssize_t n, Py_ssize_t m):
        if self.out.shape[0] < n * m:
            self.out = np.empty(self.spare * n * m)
        return self.out[: n * m].reshape(n, m)

    cdef int reserve(self, Py_ssize_t d, Py_ssize_t nnz, bint lists) except -1:
        """Room for an index of ``nnz`` entries in ``d`` features."""
        if lists and self.head.shape[0] < d:
            self.head = np.full(d, -1, dtype=np.intp)
        if not lists and self.first.shape[0] < d + 1:
            self.first = np.empty(d + 1, dtype=np.intp)
            self.fill = np.empty(d, dtype=np.intp)
        if self.row.shape[0] < nnz:
            self.row = np.empty(self.spare * nnz, dtype=np.intp)
        if lists and self.nxt.shape[0] < nnz:
            self.nxt = np.empty(self.spare * nnz, dtype=np.intp)
        if not lists and self.val.shape[0] < nnz:
            self.val = np.empty(self.spare * nnz)
        return 0


def sparse_rbf_exponents(X, Z, double gamma, bint same, Py_ssize_t lower=-1,
                         Py_ssize_t chunk=1, SparseScratch scratch=None):
    """``-gamma ||x - z||^2`` for the float64 CSR rows of ``X`` and ``Z``, the
    bits of scikit-learn's ``rbf_kernel`` before its ``exp``.

    Its arithmetic in its order: the squared norms summed along each row;
    the products ``x . z`` as ``csr_matmul_csr_to_dense`` sums them (in the
    order of ``x``'s entries, over the rows of ``Z`` holding each feature in
    increasing order), from ``Z`` transposed here, or, when ``Z`` has at
    most two entries per feature on average, from linked lists of its
    entries by feature (no ``O(n_features)`` pass over the features with
    ``scratch``, no copy of ``Z``); then ``(-2 x.z + ||x||^2) + ||z||^2``,
    negatives set to zero, zero on the diagonal if ``same`` (``Z`` is
    ``X``), times ``-gamma``. The two indexes visit the same entries in the
    same order: they differ only in speed (the lists' walk reads scattered
    entries, the transposed copy costs passes over all the features). A few
    rows of ``X`` against many of ``Z`` (``lower < 0``, see :func:`_walk_z`)
    take lists of ``X``'s entries instead, walked with ``Z``'s
    (:func:`_exponents_by_z`): the same products in the same order.

    ``lower >= 0``: ``Z`` is ``lower`` members followed by the rows of
    ``X`` (a block of rounds, which reads row ``i`` against the rows before
    it only); row ``i`` is computed against the members and the rows of
    ``X`` up to the end of its chunk of ``chunk`` rows, NaN beyond. With
    ``chunk=0``, rows ``i`` and those before it take their products only,
    not yet made exponents (:func:`sparse_rbf_rounds` makes values of those
    that the rounds read), the rest is left unset; the values with the
    members are then made: exponents and numpy's ``exp``.

    ``scratch``: a :class:`SparseScratch` whose buffers the call reuses;
    the result is then a view of its output buffer.
    """
    if chunk == 0 and (lower < 0 or _exp_loop == NULL):
        raise ValueError("chunk=0 needs a block of rounds (lower >= 0) and EXP_LOOP.")
    cdef const double[::1] xd = np.ascontiguousarray(X.data, dtype=np.float64)
    cdef const Py_ssize_t[::1] xi = np.asarray(X.indices, dtype=np.intp)
    cdef const Py_ssize_t[::1] xp = np.asarray(X.indptr, dtype=np.intp)
    cdef const double[::1] zd = np.ascontiguousarray(Z.data, dtype=np.float64)
    cdef const Py_ssize_t[::1] zi = np.asarray(Z.indices, dtype=np.intp)
    cdef const Py_ssize_t[::1] zp = np.asarray(Z.indptr, dtype=np.intp)
    cdef Py_ssize_t n = X.shape[0], m = Z.shape[0], i, j, e, f, k, lim = m
    cdef double a, g = -gamma
    cdef Py_ssize_t d = X.shape[1], nnz = zi.shape[0], p
    cdef bint lists = nnz <= 2 * d, shared = scratch is None
    cdef double[::1] xx = np.zeros(n)
    cdef double[::1] zz = xx if same else np.zeros(m)
    with nogil:
        csr_sq_norms(xd, xp, xx)
        if not same:
            csr_sq_norms(zd, zp, zz)
    if lower < 0 and not same and _walk_z(xi, xp, zi, zp, d):
        return _exponents_by_z(
            xd, xi, xp, zd, zi, zp, xx, zz, d, g, None if shared else scratch.output(n, m)
        )
    if shared:
        scratch = SparseScratch(False)
        if lists:
            scratch.head = thread_heads(d)  # all -1 between calls: base 0
    scratch.reserve(d, nnz, lists)
    cdef Py_ssize_t base = scratch.base
    out = scratch.output(n, m)
    cdef double[:, ::1] K = out
    # Lists: head[k] - base the first entry of Z in feature k (negative: none), nxt[e]
    # the next. Transposed: the entries of feature k at first[k]:first[k + 1].
    cdef Py_ssize_t[::1] head = scratch.head, nxt = scratch.nxt, row = scratch.row
    cdef Py_ssize_t[::1] first = scratch.first, fill = scratch.fill
    cdef double[::1] val = scratch.val
    with nogil:
        if lists:
            csr_lists(zi, zp, m, head, nxt, row, base)
        else:
            csr_by_feature(zd, zi, zp, m, d, first, fill, row, val)
        for i in range(n):
            if lower >= 0:
                lim = min(m, lower + (i // chunk + 1) * chunk if chunk else lower + i + 1)
            for j in range(lim):
                K[i, j] = 0.0
            if chunk != 0:
                for j in range(lim, m):
                    K[i, j] = NAN
            for f in range(xp[i], xp[i + 1]):
                a = xd[f]
                if lists:
                    e = head[xi[f]] - base
                    while e >= 0 and row[e] < lim:
                        K[i, row[e]] += a * zd[e]
                        e = nxt[e]
                else:
                    # A feature's entries run in increasing row: those
                    # before ``lim`` are a prefix (the same products).
                    k = xi[f]
                    p = first[k]
                    while p < first[k + 1] and row[p] < lim:
                        K[i, row[p]] += a * val[p]
                        p += 1
            if chunk != 0:
                rbf_exponents(&K[i, 0], lim, i, xx[i], &zz[0], same, g)
            elif lower > 0:
                rbf_exponents(&K[i, 0], lower, i, xx[i], &zz[0], same, g)
                exp_in_place(&K[i, 0], lower)
        if lists and shared:
            empty_lists(zi, head)
    if lists and not shared:
        scratch.base = base + nnz  # the lists of this call, all below it
    if chunk == 0:
        scratch.block_norms = (xx, zz)
    return out


def sparse_rbf_rounds(X, Z, double gamma, Py_ssize_t lower, SparseScratch scratch not None):
    """The rbf kernel values that a block of rounds reads, ``K(X, Z)`` for
    ``Z`` the ``lower`` members followed by the rows of ``X``, as the
    rounds read them: ``(K, columns)``, or None where :data:`EXP_LOOP` is
    False. ``K`` is a view of the output of ``scratch`` (a
    :class:`SparseScratch`), which also keeps the rows' squared norms for
    ``columns``.

    ``K[i, :lower]`` are the values with the members. The values with the
    rows of the block, ``K[i, lower + j]`` for ``j <= i``, hold the products
    ``x_i . x_j``: a round reads those of the rows that joined before it
    only, and :class:`BlockColumns` makes them values for those rows alone
    (the engine asks it at each round). About half the rows join where half
    the rounds are mistakes; making every product a value beforehand (a
    row may join) cost, at a budget of 100 and 256 rows a block, 144
    exponentials a row besides the 100 of the members. Every value read has
    the bits of :func:`sparse_rbf_exponents` followed by ``np.exp``: the
    same products (its own loop) and the same exponents.
    """
    if _exp_loop == NULL:
        return None
    out = sparse_rbf_exponents(X, Z, gamma, False, lower, 0, scratch)
    return out, BlockColumns(out, scratch, gamma, lower)


cdef class BlockColumns:
    """The values of a block of rounds' rows with those of its rows that
    join the members, made from their products as the rounds read them
    (:func:`sparse_rbf_rounds`).

    Row ``j`` joins at its round (:meth:`need`: a rule may also keep it, as
    the Tighter Budget Perceptron's error set does, and read its value at
    that round); each later round ``i`` reads ``K[i, lower + j]``, which
    :meth:`row` makes a value before the round, for every row that joined
    so far (those that left the members since too: they cost little, and
    their values are never read). A value is made once, from the product
    ``x_i . x_j``, by ``rbf_exponents``' expression and numpy's ``exp``; a
    row's values are made once (:meth:`row` again does nothing).
    """

    def __init__(self, K, SparseScratch scratch, double gamma, Py_ssize_t lower):
        if _exp_loop == NULL or scratch.block_norms is None:
            raise ValueError("BlockColumns takes the output of sparse_rbf_rounds.")
        xx, zz = scratch.block_norms
        if not (K.ndim == 2 and xx.shape[0] == K.shape[0]
                and zz.shape[0] == K.shape[1] == lower + K.shape[0]):
            raise ValueError(
                f"K of shape {K.shape} is not a block of {xx.shape[0]} rows against "
                f"{lower} members and the block."
            )
        self.K = K
        self.xx, self.zz = xx, zz
        self.lower = lower
        self.b = K.shape[0]
        self.g = -gamma
        self.joined = np.empty(self.b, dtype=np.intp)
        self.n_joined = 0
        self.done = np.zeros(self.b, dtype=np.uint8)
        self.made = np.zeros(self.b, dtype=np.uint8)
        self.tmp = np.empty(self.b)

    def join(self, Py_ssize_t j):
        """:meth:`need` from Python (the tests): row ``j`` joins."""
        if not 0 <= j < self.b:
            raise IndexError(f"row {j} of a block of {self.b}")
        self.need(j)

    def read(self, Py_ssize_t i):
        """:meth:`row` from Python (the tests): row ``i``'s round."""
        if not 0 <= i < self.b:
            raise IndexError(f"row {i} of a block of {self.b}")
        self.row(i)

    cdef void need(self, Py_ssize_t j) noexcept nogil:
        """Row ``j`` joins at its round (or a rule keeps it): the later
        rounds read its column, and the round itself ``K[j, lower + j]``
        (made now, once)."""
        if self.done[j]:
            return
        self.done[j] = 1
        self.joined[self.n_joined] = j
        self.n_joined += 1
        self.tmp[0] = self.K[j, self.lower + j]
        self.values(j, &self.joined[self.n_joined - 1], 1)
        self.K[j, self.lower + j] = self.tmp[0]

    cdef void row(self, Py_ssize_t i) noexcept nogil:
        """Before row ``i``'s round: its values with the rows that joined."""
        cdef Py_ssize_t q, n = self.n_joined
        if self.made[i]:
            return
        self.made[i] = 1
        if n == 0:
            return
        for q in range(n):
            self.tmp[q] = self.K[i, self.lower + self.joined[q]]
        self.values(i, &self.joined[0], n)
        for q in range(n):
            self.K[i, self.lower + self.joined[q]] = self.tmp[q]

    cdef void values(self, Py_ssize_t i, const Py_ssize_t* rows, Py_ssize_t n) noexcept nogil:
        """``tmp[:n]``, products of row ``i`` with the rows ``rows[:n]`` of
        the block, made their values: ``rbf_exponents``' expression for
        each, then numpy's ``exp``."""
        cdef Py_ssize_t q
        cdef double v, xxi = self.xx[i]
        for q in range(n):
            v = (-2.0 * self.tmp[q] + xxi) + self.zz[self.lower + rows[q]]
            self.tmp[q] = (0.0 if v < 0.0 else v) * self.g
        exp_in_place(&self.tmp[0], n)


# The fewest entries of Z per entry of X for _exponents_by_z.
_WALK_Z_RATIO = 4


cdef bint _walk_z(const Py_ssize_t[::1] xi, const Py_ssize_t[::1] xp,
                  const Py_ssize_t[::1] zi, const Py_ssize_t[::1] zp, Py_ssize_t d) noexcept:
    """Whether :func:`_exponents_by_z` gives the products: rows of X with
    at most two entries per feature on average (its lists) and at least
    ``_WALK_Z_RATIO`` times fewer entries than Z's, and the rows of both in
    strictly increasing feature (sorted, no duplicates; checked in one pass
    over the entries of each, a fraction of the lists' cost)."""
    cdef Py_ssize_t nx = xi.shape[0], nz = zi.shape[0]
    if nx == 0 or nx > 2 * d or _WALK_Z_RATIO * nx > nz:
        return False
    return _strictly_sorted(xi, xp) and _strictly_sorted(zi, zp)


cdef bint _strictly_sorted(const Py_ssize_t[::1] indices, const Py_ssize_t[::1] indptr) noexcept nogil:
    """Whether each row's indices strictly increase."""
    cdef Py_ssize_t i, e
    for i in range(indptr.shape[0] - 1):
        for e in range(indptr[i] + 1, indptr[i + 1]):
            if indices[e] <= indices[e - 1]:
                return False
    return True


cdef object _exponents_by_z(const double[::1] xd, const Py_ssize_t[::1] xi,
                            const Py_ssize_t[::1] xp, const double[::1] zd,
                            const Py_ssize_t[::1] zi, const Py_ssize_t[::1] zp,
                            const double[::1] xx, const double[::1] zz, Py_ssize_t d,
                            double g, out):
    """:func:`sparse_rbf_exponents` of a few rows ``X`` against many ``Z``
    (an averaged model's recorded rows against its pool), the same bits,
    from linked lists of X's entries by feature walked with Z's entries:
    the lists of the small side, their cost (scattered writes, then a pass
    that empties them) that of X's entries rather than Z's.

    The same products in the same order: ``x_i . z_j`` adds ``x_ik z_jk``
    over their common features ``k`` in increasing ``k`` either way, for
    rows in strictly increasing feature (:func:`_walk_z`), where the other
    index adds them in the order of ``x_i``'s entries. ``xx``, ``zz``: the
    rows' squared norms. ``out``: an ``(n, m)`` array that receives the
    exponents (a scratch's output), or None.
    """
    cdef Py_ssize_t n = xp.shape[0] - 1, m = zp.shape[0] - 1, nnz = xi.shape[0], i, j, e, f
    cdef double b
    if out is None:
        out = np.zeros((n, m))
    else:
        out[...] = 0.0
    cdef double[:, ::1] K = out
    cdef Py_ssize_t[::1] head = thread_heads(d)  # all -1 between calls
    cdef Py_ssize_t[::1] nxt = np.empty(nnz, dtype=np.intp), row = np.empty(nnz, dtype=np.intp)
    with nogil:
        csr_lists(xi, xp, n, head, nxt, row)
        for j in range(m):
            for f in range(zp[j], zp[j + 1]):
                b = zd[f]
                e = head[zi[f]]
                while e >= 0:
                    K[row[e], j] += xd[e] * b
                    e = nxt[e]
        empty_lists(xi, head)
        for i in range(n):
            rbf_exponents(&K[i, 0], m, i, xx[i], &zz[0], False, g)
    return out



cdef class RowIndex:
    """Linked lists by feature of the entries of CSR rows that a buffer
    gathers one after the other, kept from one call to the next.

    The pool of an averaged model of sparse rows grows during a call by the
    members that leave (``_rounds._PoolRows``), and the margins of each
    segment of rounds need the kernel values of a few recorded rows against
    all of it. :func:`sparse_rbf_exponents` indexes or walks every entry of
    the pool at each such call (at a budget of 1,000 in 50,000 features,
    most of the time of those margins); here the pool's entries are indexed
    once, as they arrive, and a call walks the lists of the few rows'
    entries only. The exponents are the same bits: each ``x . z`` adds its
    products over the common features in increasing feature, as
    :func:`sparse_rbf_exponents` adds them for rows in strictly increasing
    feature, which :meth:`extend` checks (:attr:`usable` turns False
    otherwise), then the same exponents (``rbf_exponents``) from norms
    summed in the same order.

    The heads take ``n_features`` entries: for rows where that is small
    against the entries indexed (the caller decides).
    """

    cdef object head, nxt, row, norms, out
    cdef readonly Py_ssize_t n_rows
    cdef readonly bint usable

    def __init__(self, Py_ssize_t n_features):
        self.head = np.full(n_features, -1, dtype=np.intp)
        self.nxt = np.empty(0, dtype=np.intp)
        self.row = self.nxt
        self.norms = np.empty(0)
        self.out = np.empty(0)
        self.n_rows = 0
        self.usable = True

    def extend(self, indices, indptr, data, Py_ssize_t n_rows):
        """Index the rows of the buffer up to ``n_rows`` (those from
        :attr:`n_rows` on: rows indexed already are not read again, and
        fewer rows than indexed change nothing); its arrays are
        ``indices``, ``indptr`` (positions of entries from the buffer's
        start: ``indptr[0]`` is 0) and ``data``."""
        cdef Py_ssize_t r, e, k, first = self.n_rows
        if int(indptr[0]) != 0:
            raise ValueError(f"indptr must start at 0, not {int(indptr[0])}.")
        if n_rows <= first or not self.usable:
            return
        cdef Py_ssize_t lo = int(indptr[first]), hi = int(indptr[n_rows])
        # The new rows' entries, their positions from ``lo``.
        cdef const Py_ssize_t[::1] idx = np.asarray(indices[lo:hi], dtype=np.intp)
        cdef const Py_ssize_t[::1] ptr = np.asarray(indptr[first : n_rows + 1], dtype=np.intp) - lo
        cdef const double[::1] val = np.ascontiguousarray(data[lo:hi], dtype=np.float64)
        if not _strictly_sorted(idx, ptr):
            self.usable = False
            return
        if self.nxt.shape[0] < hi:
            size = max(hi, 2 * self.nxt.shape[0])
            self.nxt = _grown_intp(self.nxt, size, lo)
            self.row = _grown_intp(self.row, size, lo)
        if self.norms.shape[0] < n_rows:
            norms = np.empty(max(n_rows, 2 * self.norms.shape[0]))
            norms[:first] = self.norms[:first]
            self.norms = norms
        cdef Py_ssize_t[::1] head = self.head, nxt = self.nxt, row = self.row
        cdef double[::1] zz = self.norms
        cdef double s
        with nogil:
            for r in range(n_rows - first):
                # The squared norm as csr_sq_norms sums it.
                s = 0.0
                for e in range(ptr[r], ptr[r + 1]):
                    s += val[e] * val[e]
                    k = idx[e]
                    nxt[lo + e] = head[k]
                    head[k] = lo + e
                    row[lo + e] = first + r
                zz[first + r] = s
        self.n_rows = n_rows

    def exponents(self, X, data, double gamma, SparseScratch scratch=None):
        """``-gamma ||x - z||^2`` of the float64 CSR rows ``X`` against the
        rows indexed (the buffer's values ``data``): the bits of
        :func:`sparse_rbf_exponents`; None if the rows of ``X``, or those
        indexed (:attr:`usable`), are not in strictly increasing feature.
        ``scratch``: the :class:`SparseScratch` whose output receives them,
        as :func:`sparse_rbf_exponents` would, or None (a buffer of the index,
        reused by the next call)."""
        cdef const double[::1] xd = np.ascontiguousarray(X.data, dtype=np.float64)
        cdef const Py_ssize_t[::1] xi = np.asarray(X.indices, dtype=np.intp)
        cdef const Py_ssize_t[::1] xp = np.asarray(X.indptr, dtype=np.intp)
        cdef const double[::1] zd = data
        cdef Py_ssize_t n = X.shape[0], m = self.n_rows, i, j, f, e
        cdef double a, g = -gamma
        if X.shape[1] != self.head.shape[0]:
            raise ValueError(
                f"X has {X.shape[1]} features, the rows indexed {self.head.shape[0]}."
            )
        if not (self.usable and _strictly_sorted(xi, xp)):
            return None
        if scratch is not None:
            out = scratch.output(n, m)
        else:
            if self.out.shape[0] < n * m:
                self.out = np.empty(2 * n * m)
            out = self.out[: n * m].reshape(n, m)
        if m == 0:
            return out
        cdef double[:, ::1] K = out
        cdef double[::1] xx = np.zeros(n)
        cdef const Py_ssize_t[::1] head = self.head, nxt = self.nxt, row = self.row
        cdef const double[::1] zz = self.norms
        with nogil:
            csr_sq_norms(xd, xp, xx)
            for i in range(n):
                for j in range(m):
                    K[i, j] = 0.0
                for f in range(xp[i], xp[i + 1]):
                    a = xd[f]
                    e = head[xi[f]]
                    while e >= 0:
                        K[i, row[e]] += a * zd[e]
                        e = nxt[e]
                rbf_exponents(&K[i, 0], m, i, xx[i], &zz[0], False, g)
        return out


cdef object _grown_intp(a, Py_ssize_t size, Py_ssize_t keep):
    """A copy of ``a``'s first ``keep`` entries in ``size`` entries."""
    out = np.empty(size, dtype=np.intp)
    out[:keep] = a[:keep]
    return out

def gather_csr_rows(data, indices, indptr, rows):
    """The data, column indices and index pointers of the CSR rows ``rows``
    (an array of row indices in ``[0, n_rows)``, unchecked) of
    ``(data, indices, indptr)``,
    in their stored order: the arrays of scipy's row indexing, with their
    types, copied a row at a time (the blocks of rounds gather their
    members once per block).
    """
    data = np.ascontiguousarray(data)
    indices = np.ascontiguousarray(indices)
    cdef const Py_ssize_t[::1] ptr = np.ascontiguousarray(indptr, dtype=np.intp)
    cdef const Py_ssize_t[::1] r = np.ascontiguousarray(rows, dtype=np.intp)
    cdef Py_ssize_t n = r.shape[0], i, first, size
    out_ptr = np.empty(n + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] op = out_ptr
    op[0] = 0
    for i in range(n):
        op[i + 1] = op[i] + ptr[r[i] + 1] - ptr[r[i]]
    out_data = np.empty(op[n], dtype=data.dtype)
    out_indices = np.empty(op[n], dtype=indices.dtype)
    cdef unsigned char[::1] od = out_data.view(np.uint8)
    cdef unsigned char[::1] oi = out_indices.view(np.uint8)
    cdef const unsigned char[::1] sd = data.view(np.uint8)
    cdef const unsigned char[::1] si = indices.view(np.uint8)
    cdef Py_ssize_t ds = data.itemsize, js = indices.itemsize
    with nogil:
        for i in range(n):
            first, size = ptr[r[i]], op[i + 1] - op[i]
            if size > 0:
                memcpy(&od[op[i] * ds], &sd[first * ds], size * ds)
                memcpy(&oi[op[i] * js], &si[first * js], size * js)
    return out_data, out_indices, out_ptr.astype(indptr.dtype, copy=False)


ctypedef fused index_t:
    int32_t
    int64_t


ctypedef fused pointer_t:
    int32_t
    int64_t


def gather_csr_rows_into(const double[::1] data, const index_t[::1] indices,
                         const pointer_t[::1] indptr, const Py_ssize_t[::1] rows,
                         double[::1] out_data, int32_t[::1] out_indices,
                         int32_t[::1] out_ptr, Py_ssize_t at):
    """Copy the CSR rows ``rows`` (row indices in ``[0, n_rows)``,
    unchecked) of ``(data, indices, indptr)`` into the CSR buffers
    ``(out_data, out_indices, out_ptr)`` as their rows ``at``,
    ``at + 1``, ..., after the entries of the rows before ``at``
    (``out_ptr[at]``): the values of :func:`gather_csr_rows`, in buffers
    reused from block to block. The caller checks that the column indices
    and the entries' count fit in 32 bits.

    Returns the end of the entries written, or -1, having written nothing,
    if ``out_data`` and ``out_indices`` cannot hold them (``out_ptr`` must
    hold ``at + rows.shape[0] + 1`` pointers).
    """
    cdef Py_ssize_t n = rows.shape[0], i, r, e, q, end = out_ptr[at]
    for i in range(n):
        r = rows[i]
        end += indptr[r + 1] - indptr[r]
    if end > out_data.shape[0] or end > out_indices.shape[0]:
        return -1
    with nogil:
        q = out_ptr[at]
        for i in range(n):
            r = rows[i]
            if indptr[r + 1] > indptr[r]:
                memcpy(&out_data[q], &data[indptr[r]], (indptr[r + 1] - indptr[r]) * sizeof(double))
            if index_t is int32_t:
                if indptr[r + 1] > indptr[r]:
                    memcpy(&out_indices[q], &indices[indptr[r]],
                           (indptr[r + 1] - indptr[r]) * sizeof(int32_t))
                q += indptr[r + 1] - indptr[r]
            else:
                for e in range(indptr[r], indptr[r + 1]):
                    out_indices[q] = <int32_t>indices[e]
                    q += 1
            out_ptr[at + i + 1] = <int32_t>q
    return end


cdef inline void rbf_exponents(double* k, Py_ssize_t m, Py_ssize_t i, double xxi,
                               const double* zz, bint same, double g) noexcept nogil:
    """Row ``i`` of products ``k[j] = x_i . z_j`` made the rbf exponents,
    in the order of scikit-learn's ``euclidean_distances`` and ``rbf_kernel``:
    ``(-2 x.z + ||x||^2) + ||z||^2``, negatives set to zero, zero on the
    diagonal if ``same``, times ``g = -gamma``."""
    cdef Py_ssize_t j
    cdef double v
    for j in range(m):  # without branches, so that the compiler vectorizes it
        v = (-2.0 * k[j] + xxi) + zz[j]
        # NaN and -0.0 kept, as numpy's maximum keeps them.
        k[j] = (0.0 if v < 0.0 else v) * g
    if same and i < m:
        k[i] = 0.0 * g


def dense_rbf_exponents(double[:, ::1] K, const double[::1] xx, const double[::1] zz,
                        double gamma, bint same):
    """The products ``K = X @ Z.T`` of dense rows made, in place, the
    exponents of scikit-learn's ``rbf_kernel`` (``xx``, ``zz``: the squared
    norms of the rows of ``X`` and ``Z``; ``same``: ``Z`` is ``X``)."""
    cdef Py_ssize_t i, m = K.shape[1]
    if m == 0:
        return
    with nogil:
        for i in range(K.shape[0]):
            rbf_exponents(&K[i, 0], m, i, xx[i], &zz[0], same, -gamma)


cdef void csr_by_feature(const double[::1] data, const Py_ssize_t[::1] indices,
                         const Py_ssize_t[::1] indptr, Py_ssize_t n_rows, Py_ssize_t d,
                         Py_ssize_t[::1] first, Py_ssize_t[::1] fill, Py_ssize_t[::1] row,
                         double[::1] val) noexcept nogil:
    """The entries of CSR rows grouped by feature, a stable counting sort (as
    scipy's csr_tocsc): feature ``k``'s at ``first[k]:first[k + 1]``, in
    increasing row (``row``), with their values (``val``); ``fill``: room
    for ``d + 1`` places."""
    cdef Py_ssize_t e, j, k, p
    for k in range(d + 1):
        first[k] = 0
    for e in range(indptr[n_rows]):
        first[indices[e] + 1] += 1
    for k in range(d):
        first[k + 1] += first[k]
        fill[k] = first[k]
    for j in range(n_rows):
        for e in range(indptr[j], indptr[j + 1]):
            k = indices[e]
            p = fill[k]
            fill[k] = p + 1
            row[p] = j
            val[p] = data[e]


cdef void csr_lists(const Py_ssize_t[::1] indices, const Py_ssize_t[::1] indptr,
                    Py_ssize_t n_rows, Py_ssize_t[::1] head, Py_ssize_t[::1] nxt,
                    Py_ssize_t[::1] row, Py_ssize_t base=0) noexcept nogil:
    """The entries of CSR rows in linked lists by feature: ``head[k] - base``
    the first entry of feature ``k`` (negative: none; ``head`` all below
    ``base`` on entry), ``nxt[e]`` the next (-1: the last), ``row[e]`` the
    row of entry ``e``. Pushed last to first: each list runs in increasing
    row, and within a row in the stored order (the order of
    :func:`csr_by_feature`'s groups), with no pass over all the features.

    ``base``: heads of entries offset so that those of an earlier call
    (below its ``base`` plus its entries) read as none, without a pass that
    empties them (:class:`SparseScratch`); 0 for heads emptied to -1."""
    cdef Py_ssize_t e, j, k, h
    for j in range(n_rows - 1, -1, -1):
        for e in range(indptr[j + 1] - 1, indptr[j] - 1, -1):
            k = indices[e]
            h = head[k] - base
            nxt[e] = h if h >= 0 else -1
            head[k] = base + e
            row[e] = j


cdef void empty_lists(const Py_ssize_t[::1] indices, Py_ssize_t[::1] head) noexcept nogil:
    """The heads of the features of the entries ``indices`` set back to -1
    (the lists of :func:`csr_lists` with base 0 emptied for the next call
    on this thread's heads)."""
    cdef Py_ssize_t e
    for e in range(indices.shape[0]):
        head[indices[e]] = -1


cdef void csr_sq_norms(const double[::1] data, const Py_ssize_t[::1] indptr,
                       double[::1] out) noexcept nogil:
    """The squared norm of each CSR row added to ``out`` (zeros), its
    entries' squares summed in their stored order."""
    cdef Py_ssize_t i, e
    for i in range(indptr.shape[0] - 1):
        for e in range(indptr[i], indptr[i + 1]):
            out[i] += data[e] * data[e]


cdef bint load_row(double[:, ::1] out, const double[:, :] X) noexcept:
    """Copy the one row of ``X`` into ``out[0]``; False if ``X`` is not one
    row of that width or a value is not finite."""
    cdef Py_ssize_t a, d = out.shape[1]
    cdef double v
    cdef bint ok = True
    if X.shape[0] != 1 or X.shape[1] != d:
        return False
    for a in range(d):
        v = X[0, a]
        ok = ok and isfinite(v)
        out[0, a] = v
    return ok


cdef bint load_event(double[:, ::1] out, dict x, dict index) except -1:
    """Copy the features of the event ``x`` into ``out[0]`` at the columns
    ``index`` names (0 where missing, keys not in ``index`` ignored); False
    if a value is not finite. Raises (TypeError...) on a value that is not
    a number."""
    cdef Py_ssize_t a, d = out.shape[1]
    cdef double v
    cdef bint ok = True
    for a in range(d):
        out[0, a] = 0.0
    for key, value in x.items():
        j = index.get(key)
        if j is not None:
            v = <double>value
            ok = ok and isfinite(v)
            out[0, <Py_ssize_t>j] = v
    return ok
