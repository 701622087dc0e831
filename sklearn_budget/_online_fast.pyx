# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Compiled round loop and update rules of the online kernel classifiers.

One loop, :meth:`Engine.play`, plays the rounds of a block without the GIL:
kernel row of the round, scores, margin, mistake count, and, when the rule's
margin threshold says so, the rule's update. Each algorithm is a small
:class:`Rule` subclass (as scikit-learn's SGD loop takes a ``LossFunction``)
that changes the hypothesis only through the engine's operations:
:meth:`Engine.add_member`, :meth:`Engine.remove_member`,
:meth:`Engine.replace_member`, :meth:`Engine.add_rank_one`,
:meth:`Engine.scale` and :meth:`Engine.zero_member`.

Coefficients are stored in units of a global scale ``wscale`` (1 unless a
rule sets it): the hypothesis is ``wscale * sum_i alpha_i k(x_i, .)``, so a
rule whose every coefficient shrinks on every round (Pegasos' ``1 - 1/t``)
changes one number instead of ``|S|``. The operations take and leave
coefficients in these stored units.

Every array is owned by the Python estimator (so that it pickles and can be
inspected); the engine and the rules only borrow typed views of them for
one call, and the Python side grows them before a block so that no
allocation happens inside the loop.

Kernel values come from one of two sources, chosen per block by the
Python side (``sklearn_budget._base``):

- *direct*: computed here from the member rows, for dense input and the
  kernels below; cheapest in low dimension;
- *blocked*: read from a matrix ``Kc = K(block, [members; block])``
  computed by :func:`sklearn.metrics.pairwise.pairwise_kernels` (BLAS), for
  high dimension, sparse input and callable kernels.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.math cimport INFINITY, NAN, exp, fabs, isfinite, isnan, log, pow, sqrt, tanh
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcpy

import numpy as np

#: Kernels with a compiled form (the ``direct`` path).
KERNEL_CODES = {
    "linear": 0,
    "poly": 1,
    "polynomial": 1,
    "rbf": 2,
    "sigmoid": 3,
    "laplacian": 4,
    "cosine": 5,
    "chi2": 6,
    "additive_chi2": 7,
}

cdef enum:
    K_LINEAR = 0
    K_POLY = 1
    K_RBF = 2
    K_SIGMOID = 3
    K_LAPLACIAN = 4
    K_COSINE = 5
    K_CHI2 = 6
    K_ADDITIVE_CHI2 = 7

# Smallest positive normal float (the Forgetron's weights are set to zero below it).
cdef double TINY = 2.2250738585072014e-308


# ----------------------------------------------------------------------
# The random generator of the rules: numpy's bit generator interface
# ----------------------------------------------------------------------
# The C interface of numpy's bit generators (numpy/random/bitgen.h, the
# documented way to draw from them in compiled code), declared here so
# that the build needs no numpy headers.
ctypedef struct bitgen_t:
    void* state
    uint64_t (*next_uint64)(void* st) noexcept nogil
    uint32_t (*next_uint32)(void* st) noexcept nogil
    double (*next_double)(void* st) noexcept nogil
    uint64_t (*next_raw)(void* st) noexcept nogil

# The state of numpy's MT19937 (numpy/random/src/mt19937/mt19937.h).
ctypedef struct mt19937_state:
    uint32_t key[624]
    int pos


cdef bitgen_t* _mt19937_bitgen(rng):
    """The bit generator of ``rng`` if it is a ``RandomState`` on MT19937, else NULL."""
    if type(rng) is not np.random.RandomState:
        return NULL
    bit_generator = rng._bit_generator
    if type(bit_generator) is not np.random.MT19937:
        return NULL
    capsule = bit_generator.capsule
    if not PyCapsule_IsValid(capsule, "BitGenerator"):
        return NULL
    return <bitgen_t*>PyCapsule_GetPointer(capsule, "BitGenerator")


cdef inline uint64_t _randint(bitgen_t* bg, Py_ssize_t high) noexcept nogil:
    """``RandomState.randint(high)``: masked rejection on 32-bit draws, as numpy
    draws a range below 2**32 (``random_bounded_uint64_fill``, masked)."""
    cdef uint64_t rng = <uint64_t>(high - 1), mask = rng
    cdef uint32_t val
    if rng == 0:
        return 0
    if rng == 0xFFFFFFFFUL:
        return bg.next_uint32(bg.state)
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    val = bg.next_uint32(bg.state) & <uint32_t>mask
    while val > rng:
        val = bg.next_uint32(bg.state) & <uint32_t>mask
    return val


def generator_state(rng):
    """A copy of the state of ``rng``'s bit generator, or None.

    Bytes for a ``RandomState`` on MT19937 (copied without the cost of
    ``get_state``, which builds an array and a tuple), None otherwise. The
    integer draws of the rules change only this state.
    """
    cdef bitgen_t* bg = _mt19937_bitgen(rng)
    if bg == NULL:
        return None
    with rng._bit_generator.lock:
        return (<char*>bg.state)[:sizeof(mt19937_state)]


def set_generator_state(rng, bytes saved):
    """Put back a state that :func:`generator_state` copied from ``rng``."""
    cdef bitgen_t* bg = _mt19937_bitgen(rng)
    if bg == NULL or len(saved) != sizeof(mt19937_state):
        raise ValueError("Not a state of this generator.")
    with rng._bit_generator.lock:
        memcpy(bg.state, <const char*>saved, sizeof(mt19937_state))


cdef double _dense_kernel(int kind, const double* x, const double* z, Py_ssize_t d,
                          double gamma, double degree, double coef0) noexcept nogil:
    """``k(x, z)`` for two dense rows, as ``pairwise_kernels`` defines it."""
    cdef Py_ssize_t a
    cdef double s = 0.0, u, v, nx, nz
    if kind == K_RBF:
        for a in range(d):
            u = x[a] - z[a]
            s += u * u
        return exp(-gamma * s)
    if kind == K_LINEAR:
        for a in range(d):
            s += x[a] * z[a]
        return s
    if kind == K_POLY:
        for a in range(d):
            s += x[a] * z[a]
        return pow(gamma * s + coef0, degree)
    if kind == K_SIGMOID:
        for a in range(d):
            s += x[a] * z[a]
        return tanh(gamma * s + coef0)
    if kind == K_LAPLACIAN:
        for a in range(d):
            s += fabs(x[a] - z[a])
        return exp(-gamma * s)
    if kind == K_COSINE:
        nx = 0.0
        nz = 0.0
        for a in range(d):
            s += x[a] * z[a]
            nx += x[a] * x[a]
            nz += z[a] * z[a]
        # sklearn normalises the rows first; a zero row stays zero.
        if nx == 0.0 or nz == 0.0:
            return 0.0
        return s / (sqrt(nx) * sqrt(nz))
    # chi2 and additive_chi2: terms with x + z = 0 count as 0.
    for a in range(d):
        v = x[a] + z[a]
        if v != 0.0:
            u = x[a] - z[a]
            s += u * u / v
    if kind == K_CHI2:
        return exp(-gamma * s)
    return -s


cdef inline void _dense_kernel_row(int kind, const double* x, const double* Z, Py_ssize_t n,
                                   Py_ssize_t d, double gamma, double degree, double coef0,
                                   double* out) noexcept nogil:
    """``out[i] = k(x, Z[i])`` for the ``n`` contiguous rows of ``Z`` (``d`` features)."""
    cdef Py_ssize_t i, a
    cdef const double* z
    cdef double s, u
    if kind == K_RBF:
        # The common case in two passes: distances, then the exps, which
        # the processor can then overlap.
        for i in range(n):
            z = Z + i * d
            s = 0.0
            for a in range(d):
                u = x[a] - z[a]
                s += u * u
            out[i] = -gamma * s
        for i in range(n):
            out[i] = exp(out[i])
        return
    for i in range(n):
        out[i] = _dense_kernel(kind, x, Z + i * d, d, gamma, degree, coef0)


cdef inline int64_t _next_checkpoint(int64_t t) noexcept nogil:
    """``_calibration.next_checkpoint``: multiples of ``2^(bit_length(t) - 4)``."""
    cdef int64_t step = 1, u = t
    cdef int bits = 0
    while u > 0:
        bits += 1
        u >>= 1
    if bits > 4:
        step = (<int64_t>1) << (bits - 4)
    return (t // step + 1) * step


cdef class Engine:
    """State of one call: borrowed views of the estimator's arrays."""

    # Configuration
    cdef Py_ssize_t R          # coefficient rows: 1 with two classes
    cdef bint binary, average, keep_gram, dense, removes
    cdef double dsq            # squared norm of a unit update direction
    cdef int kind
    cdef double gamma, degree, coef0
    cdef Py_ssize_t d

    # Counters (written back by ``counters``)
    cdef public Py_ssize_t n
    cdef public int64_t t, n_mistakes, n_updates
    cdef bint updated
    # Row of the block whose scores were not finite (-1: none)
    cdef public Py_ssize_t bad_row

    # Members, in position order
    cdef double[:, ::1] alpha  # (cap, R)
    cdef double[:, ::1] acc    # (cap, R): running sums of the average
    cdef double[:, ::1] gram   # (cap, cap)
    cdef double[:, ::1] Xs     # (cap, d): rows of the members (dense streams)
    cdef int64_t[::1] idx, born, cols
    cdef double[::1] kdiag, stamp
    # Global scale of the coefficients, and the averaging clock: the sum of
    # the scales of the rounds played (the round count while the scale is 1)
    cdef public double wscale, clock
    cdef double[::1] scale_state

    # The block being played
    cdef bint direct
    cdef const double[:, ::1] Kc   # blocked: K(block, [members at start; block])
    cdef const double[:, ::1] Xb   # dense rows of the block
    cdef const double[::1] diag, w
    cdef const int64_t[::1] yb, index
    cdef Py_ssize_t j, m0

    # The round: kernel row with the members (kept in step with every
    # addition and removal), scores, best other class, unit direction
    cdef double[::1] k, f, v
    cdef Py_ssize_t r

    # Margin of each round of the block (the progressive margins)
    cdef double[::1] mout

    # Members removed during this call (for the exact average)
    cdef public Py_ssize_t n_ret
    cdef int64_t[::1] ret_idx, ret_col
    cdef double[:, ::1] ret_acc, ret_X

    # Undo record of a one-row call (see OneRow): the state arrays that a
    # round may change are copied just before the first change, so that a
    # round without an update copies nothing.
    cdef bint ckpt_armed, ckpt_taken
    cdef list ckpt_arrays           # (source, copy) pairs, kept alive here
    cdef Py_ssize_t n_ckpt
    cdef char* ckpt_src[64]
    cdef char* ckpt_dst[64]
    cdef Py_ssize_t ckpt_len[64]

    def __init__(self, Py_ssize_t n_rows, bint average, bint keep_gram, bint removes,
                 bint dense, kernel_code, double gamma, double degree, double coef0,
                 Py_ssize_t n_features):
        self.R = n_rows
        self.binary = n_rows == 1
        self.dsq = 1.0 if n_rows == 1 else 2.0
        self.average = average
        self.keep_gram = keep_gram
        self.removes = removes
        self.dense = dense
        self.kind = -1 if kernel_code is None else kernel_code
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.d = n_features
        self.f = np.zeros(n_rows)
        self.v = np.zeros(n_rows)

    def bind(self, dict state):
        """Take views of the (possibly regrown) arrays of ``state``."""
        self.alpha = state["alpha"]
        self.idx = state["idx"]
        self.born = state["born"]
        self.kdiag = state["kdiag"]
        self.cols = state["cols"]
        if self.average:
            self.acc = state["acc"]
            self.stamp = state["stamp"]
        if self.keep_gram:
            self.gram = state["gram"]
        if self.dense:
            self.Xs = state["Xs"]
        self.k = np.zeros(self.alpha.shape[0] + 1)
        c = state["counters"]
        self.n, self.t, self.n_mistakes, self.n_updates = c[0], c[1], c[2], c[3]
        self.scale_state = state["scale"]
        self.wscale, self.clock = self.scale_state[0], self.scale_state[1]

    def store_counters(self, state):
        c = state["counters"]
        c[0], c[1], c[2], c[3] = self.n, self.t, self.n_mistakes, self.n_updates
        s = state["scale"]
        s[0], s[1] = self.wscale, self.clock

    def set_block(self, y, w, diag, index, Kc=None, Xb=None):
        """Rows of the next block: ``Kc`` for the blocked path, ``Xb`` (dense)."""
        cdef Py_ssize_t b = y.shape[0]
        if self.mout is None or self.mout.shape[0] < b:
            self.mout = np.zeros(b)
        self.yb = y
        self.w = w
        self.diag = diag
        self.index = index
        self.direct = Kc is None
        if Xb is not None:
            self.Xb = Xb
        if Kc is not None:
            self.Kc = Kc
            self.m0 = self.n
            for i in range(self.n):
                self.cols[i] = i
        self.n_ret = 0
        # Removals in a block are at most the members at its start plus the
        # additions, one per round; replacements one per round.
        self.reserve_retired(self.n + 2 * b)

    cdef void reserve_retired(self, Py_ssize_t m):
        """Room for ``m`` removed members in the record of :meth:`retired`."""
        if self.average and self.removes:
            self.ret_idx = np.zeros(m, dtype=np.int64)
            self.ret_col = np.zeros(m, dtype=np.int64)
            self.ret_acc = np.zeros((m, self.R))
            self.ret_X = np.zeros((m if self.dense else 0, self.d))

    def margins(self, Py_ssize_t b):
        """Margins of the first ``b`` rounds of the block, before their updates."""
        return np.asarray(self.mout[:b]).copy()

    def retired(self):
        """Stream index, running sum and row (or block column) of each removed member."""
        m = self.n_ret
        if not self.average or m == 0:
            return None
        return (
            np.asarray(self.ret_idx[:m]).copy(),
            np.asarray(self.ret_acc[:m]).copy(),
            np.asarray(self.ret_X[:m]).copy() if self.dense else None,
            np.asarray(self.ret_col[:m]).copy(),
        )

    # ------------------------------------------------------------------
    # The loop
    # ------------------------------------------------------------------
    def play(self, Rule rule, Py_ssize_t start, Py_ssize_t stop):
        """Play rows ``start:stop`` of the block (without the GIL).

        Stops at the first row whose scores are not finite (overflow of the
        kernel values or of the coefficients) and sets ``bad_row``.
        """
        self.bad_row = -1
        with nogil:
            self._play(rule, start, stop)

    cdef void _play(self, Rule rule, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        cdef Py_ssize_t jj
        cdef double margin, thr
        cdef int64_t y
        for jj in range(start, stop):
            self.j = jj
            self.t += 1
            self.clock += self.wscale   # the hypothesis of this round
            self.kernel_row()
            self.scores()
            if not self.finite_scores():
                self.bad_row = jj
                return
            y = self.yb[jj]
            margin = self.margin(y)
            self.mout[jj] = margin
            if margin <= 0.0:
                self.n_mistakes += 1
            if self.ckpt_armed and rule.round_changes_state:
                self.checkpoint()
            rule.on_round(self, y)
            thr = rule.threshold(self)
            if not isnan(thr) and margin <= thr:
                if self.ckpt_armed:
                    self.checkpoint()
                self.updated = False
                rule.update(self, y, margin, self.diag[jj], self.w[jj])
                if self.updated:
                    self.n_updates += 1

    cdef void checkpoint(self) noexcept nogil:
        """Copy the registered state arrays into the undo record (once per call)."""
        cdef Py_ssize_t i
        for i in range(self.n_ckpt):
            memcpy(self.ckpt_dst[i], self.ckpt_src[i], self.ckpt_len[i])
        self.ckpt_armed = False
        self.ckpt_taken = True

    cdef inline double kernel(self, const double* x, const double* z) noexcept nogil:
        return _dense_kernel(self.kind, x, z, self.d, self.gamma, self.degree, self.coef0)

    cdef void kernel_row(self) noexcept nogil:
        cdef Py_ssize_t i, n = self.n, j = self.j
        if not self.direct:
            for i in range(n):
                self.k[i] = self.Kc[j, self.cols[i]]
            return
        if n > 0:
            _dense_kernel_row(self.kind, &self.Xb[j, 0], &self.Xs[0, 0], n, self.d,
                              self.gamma, self.degree, self.coef0, &self.k[0])

    cdef void scores(self) noexcept nogil:
        cdef Py_ssize_t i, c, R = self.R
        cdef double ki
        for c in range(R):
            self.f[c] = 0.0
        if R == 1:
            for i in range(self.n):
                self.f[0] += self.alpha[i, 0] * self.k[i]
        else:
            for i in range(self.n):
                ki = self.k[i]
                for c in range(R):
                    self.f[c] += self.alpha[i, c] * ki
        if self.wscale != 1.0:
            for c in range(R):
                self.f[c] *= self.wscale

    cdef bint finite_scores(self) noexcept nogil:
        cdef Py_ssize_t c
        for c in range(self.R):
            if not isfinite(self.f[c]):
                return False
        return True

    cdef double margin_of(self, const double* g, int64_t y, Py_ssize_t* r) noexcept nogil:
        """``y g`` (two classes) or ``g_y - max_{c != y} g_c`` with its argmax ``r``."""
        cdef Py_ssize_t c
        cdef double best = -INFINITY
        if self.binary:
            return y * g[0]
        r[0] = -1
        for c in range(self.R):
            if c != y and (r[0] < 0 or g[c] > best):
                best = g[c]
                r[0] = c
        return g[y] - best

    cdef double margin(self, int64_t y) noexcept nogil:
        return self.margin_of(&self.f[0], y, &self.r)

    cdef void direction(self, int64_t y) noexcept nogil:
        """Unit Perceptron step into ``v`` (ALGORITHMS.md, Multiclass)."""
        cdef Py_ssize_t c
        if self.binary:
            self.v[0] = <double>y
            return
        for c in range(self.R):
            self.v[c] = 0.0
        self.v[y] = 1.0
        self.v[self.r] = -1.0

    # ------------------------------------------------------------------
    # Operations on the hypothesis
    # ------------------------------------------------------------------
    cdef inline void sync(self, Py_ssize_t i) noexcept nogil:
        """Bring the running sum of member ``i`` up to the current round."""
        cdef Py_ssize_t c
        cdef double dt = self.clock - self.stamp[i]
        if dt != 0.0:
            for c in range(self.R):
                self.acc[i, c] += self.alpha[i, c] * dt
            self.stamp[i] = self.clock

    cdef void sync_all(self) noexcept nogil:
        cdef Py_ssize_t i
        if self.average:
            for i in range(self.n):
                self.sync(i)

    cdef Py_ssize_t add_member(self, const double* coef, double scale) noexcept nogil:
        """Add the round's row with coefficients ``scale * coef``; returns its position."""
        cdef Py_ssize_t i, c, a, pos = self.n, j = self.j
        for c in range(self.R):
            self.alpha[pos, c] = scale * coef[c]
        self.idx[pos] = self.index[j]
        self.born[pos] = self.t
        self.kdiag[pos] = self.diag[j]
        if self.average:
            for c in range(self.R):
                self.acc[pos, c] = 0.0
            self.stamp[pos] = self.clock
        if self.keep_gram:
            for i in range(pos):
                self.gram[pos, i] = self.k[i]
                self.gram[i, pos] = self.k[i]
            self.gram[pos, pos] = self.diag[j]
        if self.dense:
            for a in range(self.d):
                self.Xs[pos, a] = self.Xb[j, a]
        if not self.direct:
            self.cols[pos] = self.m0 + j
        self.k[pos] = self.diag[j]
        self.n = pos + 1
        self.updated = True
        return pos

    cdef void retire(self, Py_ssize_t pos) noexcept nogil:
        """Keep what member ``pos`` contributed to the average while it was one.

        The exact average of ALGORITHMS.md (Online-to-batch) keeps members
        that leave the support set.
        """
        cdef Py_ssize_t c, a, m = self.n_ret
        self.sync(pos)
        self.ret_idx[m] = self.idx[pos]
        self.ret_col[m] = self.cols[pos]
        for c in range(self.R):
            self.ret_acc[m, c] = self.acc[pos, c]
        if self.dense:
            for a in range(self.d):
                self.ret_X[m, a] = self.Xs[pos, a]
        self.n_ret = m + 1

    cdef void replace_member(self, Py_ssize_t pos, const double* x, const double* coef,
                             double kxx) noexcept nogil:
        """Member ``pos`` becomes the point ``x`` with coefficients ``coef``.

        ``x`` need not be a row of the stream: its index is -1. Dense
        streams on the direct path only, without a kept Gram matrix.
        """
        cdef Py_ssize_t c, a
        if self.average:
            self.retire(pos)
            for c in range(self.R):
                self.acc[pos, c] = 0.0
            self.stamp[pos] = self.clock
        for c in range(self.R):
            self.alpha[pos, c] = coef[c]
        for a in range(self.d):
            self.Xs[pos, a] = x[a]
        self.idx[pos] = -1
        self.born[pos] = self.t
        self.kdiag[pos] = kxx
        self.k[pos] = self.kernel(&self.Xb[self.j, 0], x)
        self.updated = True

    cdef void remove_member(self, Py_ssize_t pos) noexcept nogil:
        """Remove member ``pos``; the last member takes its place."""
        cdef Py_ssize_t i, c, a, last = self.n - 1
        if self.average:
            self.retire(pos)
        for c in range(self.R):
            self.alpha[pos, c] = self.alpha[last, c]
            if self.average:
                self.acc[pos, c] = self.acc[last, c]
        if self.average:
            self.stamp[pos] = self.stamp[last]
        self.idx[pos] = self.idx[last]
        self.born[pos] = self.born[last]
        self.kdiag[pos] = self.kdiag[last]
        self.cols[pos] = self.cols[last]
        self.k[pos] = self.k[last]
        if self.dense:
            for a in range(self.d):
                self.Xs[pos, a] = self.Xs[last, a]
        if self.keep_gram:
            for i in range(last + 1):
                self.gram[pos, i] = self.gram[last, i]
            for i in range(last + 1):
                self.gram[i, pos] = self.gram[i, last]
            self.gram[pos, pos] = self.gram[last, last]
        self.n = last
        self.updated = True

    cdef void add_rank_one(self, const double* u, const double* dvec) noexcept nogil:
        """``alpha[i, c] += dvec[i] * u[c]`` for every member."""
        cdef Py_ssize_t i, c
        self.sync_all()
        for i in range(self.n):
            for c in range(self.R):
                self.alpha[i, c] += dvec[i] * u[c]
        self.updated = True

    cdef void scale(self, double phi) noexcept nogil:
        """Multiply every coefficient by ``phi``."""
        cdef Py_ssize_t i, c
        self.sync_all()
        for i in range(self.n):
            for c in range(self.R):
                self.alpha[i, c] *= phi
        self.updated = True

    cdef void zero_member(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t c
        if self.average:
            self.sync(i)
        for c in range(self.R):
            self.alpha[i, c] = 0.0
        self.updated = True

    cdef Py_ssize_t oldest(self) noexcept nogil:
        cdef Py_ssize_t i, best = 0
        for i in range(1, self.n):
            if self.born[i] < self.born[best]:
                best = i
        return best

    cdef double tie_tol(self, double rtol) noexcept nogil:
        """``rtol (1 + max_c sum_i |alpha_ic| max_i |k(x_i, x_i)|)``: the size of the hypothesis."""
        cdef Py_ssize_t i, c
        cdef double l1, best = 0.0, kmax = 0.0
        for c in range(self.R):
            l1 = 0.0
            for i in range(self.n):
                l1 += fabs(self.alpha[i, c])
            if l1 > best:
                best = l1
        for i in range(self.n):
            if fabs(self.kdiag[i]) > kmax:
                kmax = fabs(self.kdiag[i])
        return rtol * (1.0 + best * kmax)


cdef class Rule:
    """Update rule of one algorithm (the base class never updates)."""

    # Whether ``on_round`` changes state arrays (then a one-row call's undo
    # record is taken before it, not only before an update).
    cdef bint round_changes_state

    def bind(self, dict state):
        """Take views of the rule's arrays in ``state`` (after any regrowth)."""

    cdef double threshold(self, Engine e) noexcept nogil:
        """Largest margin at which the rule may update; NaN freezes the hypothesis."""
        return NAN

    cdef void on_round(self, Engine e, int64_t y) noexcept nogil:
        """Called on every round, before the threshold test."""

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        pass


# ----------------------------------------------------------------------
# Kernel Perceptron, Stoptron, Passive-Aggressive
# ----------------------------------------------------------------------
cdef class PerceptronRule(Rule):
    """Add ``w y_t k(x_t, .)`` on a mistake; stop for good at ``budget`` (0: never)."""

    cdef Py_ssize_t budget

    def __init__(self, Py_ssize_t budget=0):
        self.budget = budget

    cdef double threshold(self, Engine e) noexcept nogil:
        if self.budget > 0 and e.n >= self.budget:
            return NAN
        return 0.0

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        e.direction(y)
        e.add_member(&e.v[0], weight)


cdef class PassiveAggressiveRule(Rule):
    """PA-I (``hinge``) or PA-II (``squared_hinge``) step on a positive hinge loss."""

    cdef double C
    cdef bint squared

    def __init__(self, double C, bint squared):
        self.C = C
        self.squared = squared

    cdef double threshold(self, Engine e) noexcept nogil:
        return 1.0

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        cdef double loss = 1.0 - margin, sq = e.dsq * kxx, tau
        if loss <= 0.0 or sq <= 0.0:
            return
        if self.squared:
            tau = loss / (sq + 0.5 / self.C)
        else:
            tau = min(self.C, loss / sq)
        e.direction(y)
        e.add_member(&e.v[0], weight * tau)


# ----------------------------------------------------------------------
# Projectron and Projectron++
# ----------------------------------------------------------------------
cdef class ProjectronRule(Rule):
    """Projection on mistakes (Eqs. 8-11, 13) and on margin errors (Eq. 14, ++).

    ``chol`` holds the Cholesky factor ``L`` of the members' Gram matrix in
    packed rows: row ``i`` at ``[i (i + 1) / 2, (i + 1) (i + 2) / 2)``.
    """

    cdef double eta, U, rtol
    cdef bint adaptive, plus
    cdef Py_ssize_t budget  # 0: none
    cdef double[::1] chol, z, dvec, u

    def __init__(self, double eta, double U, bint adaptive, bint plus, double rtol,
                 Py_ssize_t budget=0):
        self.eta = eta
        self.U = U
        self.adaptive = adaptive
        self.plus = plus
        self.rtol = rtol
        self.budget = budget

    def bind(self, dict state):
        self.chol = state["chol"]
        m = state["alpha"].shape[0] + 1
        self.z = np.zeros(m)
        self.dvec = np.zeros(m)
        self.u = np.zeros(state["alpha"].shape[1])

    cdef double threshold(self, Engine e) noexcept nogil:
        return 1.0 if self.plus else 0.0

    cdef void forward(self, Py_ssize_t n, const double* k) noexcept nogil:
        """``z = L^{-1} k``."""
        cdef Py_ssize_t i, l, off
        cdef double s
        for i in range(n):
            off = i * (i + 1) // 2
            s = k[i]
            for l in range(i):
                s -= self.chol[off + l] * self.z[l]
            self.z[i] = s / self.chol[off + i]

    cdef void backward(self, Py_ssize_t n) noexcept nogil:
        """``dvec = L^{-T} z``, so that ``dvec = K_S^{-1} k`` (Eq. 8)."""
        cdef Py_ssize_t i, l, off
        cdef double di
        for i in range(n):
            self.dvec[i] = self.z[i]
        for i in range(n - 1, -1, -1):
            off = i * (i + 1) // 2
            di = self.dvec[i] / self.chol[off + i]
            self.dvec[i] = di
            for l in range(i):
                self.dvec[l] -= self.chol[off + l] * di

    cdef void projected_step(self, Engine e, Py_ssize_t n, double scale) noexcept nogil:
        cdef Py_ssize_t c
        self.backward(n)
        for c in range(e.R):
            self.u[c] = scale * e.v[c]
        e.add_rank_one(&self.u[0], &self.dvec[0])

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        # Norms of the update direction in the product of the class RKHSs are
        # sqrt(s) times those of k(x_t, .) (s = 2 with several classes).
        cdef double s = e.dsq, loss = 1.0 - margin, pk2 = 0.0, delta2, eta_t
        cdef double penalty, p, tau
        cdef Py_ssize_t i, n = e.n, off
        self.forward(n, &e.k[0])
        for i in range(n):
            pk2 += self.z[i] * self.z[i]   # ||P k(x_t, .)||^2 = k_t . d
        delta2 = kxx - pk2                 # Eq. 9
        if delta2 <= self.rtol * kxx:
            delta2 = 0.0                   # x_t is in span(S) up to rounding
        e.direction(y)
        if margin <= 0.0:
            if self.adaptive:
                eta_t = (2.0 * loss - s * pk2 - 0.5) / (2.0 * self.U)   # Eq. 13
            else:
                eta_t = self.eta
            # With a hard budget (our extension), a full support set takes the
            # projected step instead of an addition, whatever eta_t says.
            if (delta2 > 0.0 and (eta_t < 0.0 or s * delta2 > eta_t * eta_t)
                    and (self.budget == 0 or n < self.budget)):
                e.add_member(&e.v[0], weight)
                # Eq. 11 in factor form: append the row [z, ||delta_t||].
                off = n * (n + 1) // 2
                for i in range(n):
                    self.chol[off + i] = self.z[i]
                self.chol[off + n] = sqrt(delta2)
            elif pk2 > 0.0:
                self.projected_step(e, n, weight)                        # Eq. 10
            return
        # A margin error of the Projectron++ (Sec. 4.1).
        if pk2 <= 0.0 or loss <= 0.0:
            return
        if delta2 == 0.0:
            penalty = 0.0
        elif self.adaptive:
            penalty = self.U * sqrt(s * delta2)
        elif self.eta > 0.0:
            penalty = sqrt(s * delta2) / self.eta
        else:
            return  # U = 1 / eta is infinite: only rows in span(S) are learned
        # Eq. 17, capped so that the progress beta_t of Eq. 16 stays >= 0,
        # divided last so that a tiny p = ||P k||^2 cannot overflow.
        p = s * pk2
        tau = min(min(loss, p), 2.0 * (loss - penalty)) / p
        if tau > 0.0:
            self.projected_step(e, n, weight * tau)                      # Eq. 14


# ----------------------------------------------------------------------
# Forgetron
# ----------------------------------------------------------------------
cdef class ForgetronRule(Rule):
    """Add, shrink, remove the oldest (Dekel et al. Fig. 1; Sutskever's constant shrink).

    ``sigma``: weight of each member; ``unit``: its unit direction;
    ``scalars = [Q, M]``.
    """

    cdef Py_ssize_t budget
    cdef bint self_tuned
    cdef double shrink, rate
    cdef double[::1] sigma, scalars
    cdef double[:, ::1] unit

    def __init__(self, Py_ssize_t budget, bint self_tuned, double shrink, double rate):
        self.budget = budget
        self.self_tuned = self_tuned
        self.shrink = shrink
        self.rate = rate

    def bind(self, dict state):
        self.sigma = state["sigma"]
        self.unit = state["unit"]
        self.scalars = state["forgetron"]

    cdef double threshold(self, Engine e) noexcept nogil:
        return 0.0

    cdef void do_shrink(self, Engine e, double phi) noexcept nogil:
        cdef Py_ssize_t i
        e.scale(phi)
        for i in range(e.n):
            self.sigma[i] *= phi
            if 0.0 < self.sigma[i] < TINY:
                # Below any score's resolution; exact zero keeps subnormal
                # numbers, which are slow, out of the arithmetic.
                self.sigma[i] = 0.0
                e.zero_member(i)

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        cdef Py_ssize_t c, i, r, pos, last
        cdef double mu, s, vv, a, b, cc, phi, fr
        self.scalars[1] += 1.0                                   # M
        e.direction(y)
        pos = e.add_member(&e.v[0], weight)                      # step (1): sigma = 1
        self.sigma[pos] = 1.0
        for c in range(e.R):
            self.unit[pos, c] = e.v[c]
        if not self.self_tuned and self.shrink < 1.0:
            self.do_shrink(e, self.shrink)                       # Sutskever
        while e.n > self.budget:
            r = e.oldest()
            if self.self_tuned:                                  # step (2)
                # mu = v_r . f'(x_r), f' including x_t, from the Gram matrix.
                mu = 0.0
                vv = 0.0
                for c in range(e.R):
                    fr = 0.0
                    for i in range(e.n):
                        fr += e.alpha[i, c] * e.gram[i, r]
                    mu += self.unit[r, c] * fr
                    vv += self.unit[r, c] * self.unit[r, c]
                s = self.sigma[r]
                # Psi(phi) = a phi^2 + b phi, constraint a phi^2 + b phi + c <= 0
                # with c < 0, so phi = 0 is always feasible.
                a = vv * s * s - 2.0 * s * mu
                b = 2.0 * s
                cc = self.scalars[0] - self.rate * self.scalars[1]
                if a + b + cc <= 0.0:
                    phi = 1.0
                else:
                    # The root in (0, 1], in the form stable for any sign of a.
                    phi = -2.0 * cc / (b + sqrt(max(b * b - 4.0 * a * cc, 0.0)))
                self.scalars[0] += a * phi * phi + b * phi       # Q
                if phi < 1.0:
                    self.do_shrink(e, phi)
            last = e.n - 1                                       # step (3)
            self.sigma[r] = self.sigma[last]
            for c in range(e.R):
                self.unit[r, c] = self.unit[last, c]
            e.remove_member(r)


# ----------------------------------------------------------------------
# Randomized Budget Perceptron
# ----------------------------------------------------------------------
cdef int64_t _select(int64_t* a, Py_ssize_t n, Py_ssize_t rank) noexcept nogil:
    """The ``rank``-th smallest of ``n`` distinct values (reorders ``a``)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, l
    cdef int64_t pivot, tmp
    while lo < hi:
        pivot = a[(lo + hi) // 2]
        i = lo
        l = hi
        while i <= l:
            while a[i] < pivot:
                i += 1
            while a[l] > pivot:
                l -= 1
            if i <= l:
                tmp = a[i]
                a[i] = a[l]
                a[l] = tmp
                i += 1
                l -= 1
        if rank <= l:
            hi = l
        elif rank >= i:
            lo = i
        else:
            break
    return a[rank]


cdef class RandomizedBudgetRule(Rule):
    """On a mistake with a full budget, remove the ``r``-th oldest, ``r`` uniform.

    ``r = rng.randint(budget)``, drawn one of two ways, the same numbers:

    - the draws of a block are made in advance by the Python side
      (``set_draws``), which then rewinds the generator to advance it by
      the ``used`` draws only;
    - or the rule draws each one when a removal needs it, from the bit
      generator of a ``RandomState`` (``set_generator``), as ``randint``
      does: the one-row calls, which then make no draw in advance.
    """

    cdef Py_ssize_t budget
    cdef int64_t[::1] scratch
    cdef const int64_t[::1] draws
    cdef public Py_ssize_t used
    cdef object generator   # keeps the bit generator alive while drawn from
    cdef bitgen_t* bitgen

    def __init__(self, Py_ssize_t budget):
        self.budget = budget

    def bind(self, dict state):
        self.scratch = np.zeros(state["alpha"].shape[0] + 1, dtype=np.int64)

    def set_draws(self, draws):
        self.draws = draws
        self.used = 0
        self.generator = None
        self.bitgen = NULL

    def set_generator(self, rng):
        """Draw from ``rng`` (a ``RandomState`` on MT19937) when a removal needs it."""
        self.bitgen = _mt19937_bitgen(rng)
        if self.bitgen == NULL:
            raise TypeError("set_generator needs a RandomState of the MT19937 generator.")
        self.generator = rng._bit_generator
        self.used = 0

    cdef double threshold(self, Engine e) noexcept nogil:
        return 0.0

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        cdef Py_ssize_t i, r, n, pos
        cdef int64_t b
        e.direction(y)
        # n never exceeds the budget, so a removal happens at n = budget,
        # at most once a round: a block of b rows needs at most b draws.
        while e.n >= self.budget:
            n = e.n
            if self.bitgen != NULL:
                r = <Py_ssize_t>_randint(self.bitgen, self.budget)
            else:
                r = self.draws[self.used]
            self.used += 1
            # The r-th member in insertion order (birth rounds are distinct).
            for i in range(n):
                self.scratch[i] = e.born[i]
            b = _select(&self.scratch[0], n, r)
            pos = 0
            while e.born[pos] != b:
                pos += 1
            e.remove_member(pos)
        e.add_member(&e.v[0], weight)


# ----------------------------------------------------------------------
# Budget Perceptron and Tighter Budget Perceptron
# ----------------------------------------------------------------------
cdef class BudgetRule(Rule):
    """Weston et al. Fig. 1 with the removal of Crammer et al. (``tighter=False``)
    or of Fig. 3 on the support set (``tighter=True``).

    ``fS`` holds the scores ``f(x_j)`` of the members, kept current from the
    Gram matrix and recomputed exactly every ``max(budget, 16)`` changes;
    ``label`` their labels; ``ints = [changes since the last refresh]``.
    """

    cdef Py_ssize_t budget
    cdef double beta, C, rtol
    cdef int step_kind  # 0: perceptron, 1: mira, 2: nobias_svm
    cdef bint tighter
    cdef double[:, ::1] fS
    cdef int64_t[::1] label, ints
    cdef double[::1] g, score

    def __init__(self, Py_ssize_t budget, double beta, int step_kind, double C,
                 double rtol, bint tighter):
        self.budget = budget
        self.beta = beta
        self.step_kind = step_kind
        self.C = C
        self.tighter = tighter
        self.rtol = rtol

    def bind(self, dict state):
        self.fS = state["fS"]
        self.label = state["label"]
        self.ints = state["budget_ints"]
        self.score = np.zeros(state["alpha"].shape[0] + 1)
        self.g = np.zeros(state["alpha"].shape[1])

    cdef double threshold(self, Engine e) noexcept nogil:
        return 1.0 if self.step_kind == 2 else self.beta

    cdef double step(self, Engine e, double margin, double kxx) noexcept nogil:
        """Step of Weston et al., Fig. 2."""
        cdef double sq, boundary
        if self.step_kind == 0 or (self.step_kind == 1 and e.n == 0):
            return 1.0
        sq = e.dsq * kxx
        if sq <= 0.0:
            return 0.0
        # A margin on the boundary of the step (0 for MIRA, 1 for No-Bias-SVM)
        # up to rounding gives a step of zero, not one of rounding noise.
        boundary = 0.0 if self.step_kind == 1 else 1.0
        if margin >= boundary - e.tie_tol(self.rtol):
            return 0.0
        if self.step_kind == 1:
            return min(1.0, -margin / sq)
        return min(self.C, (1.0 - margin) / sq)

    cdef void refresh(self, Engine e) noexcept nogil:
        cdef Py_ssize_t i, l, c
        for i in range(e.n):
            for c in range(e.R):
                self.fS[i, c] = 0.0
            for l in range(e.n):
                for c in range(e.R):
                    self.fS[i, c] += e.alpha[l, c] * e.gram[l, i]

    cdef void on_add(self, Engine e) noexcept nogil:
        cdef Py_ssize_t i, l, c, p = e.n - 1
        self.ints[0] += 1
        if self.ints[0] >= max(self.budget, 16):
            # Exact refresh, O(budget^2) every budget changes.
            self.refresh(e)
            self.ints[0] = 0
            return
        for i in range(p):
            for c in range(e.R):
                self.fS[i, c] += e.alpha[p, c] * e.k[i]
        for c in range(e.R):
            self.fS[p, c] = 0.0
        for l in range(e.n):
            for c in range(e.R):
                self.fS[p, c] += e.alpha[l, c] * e.gram[l, p]

    cdef void remove(self, Engine e, Py_ssize_t pos) noexcept nogil:
        cdef Py_ssize_t i, c, last = e.n - 1
        for i in range(e.n):
            for c in range(e.R):
                self.fS[i, c] -= e.alpha[pos, c] * e.gram[pos, i]
        for c in range(e.R):
            self.fS[pos, c] = self.fS[last, c]
        self.label[pos] = self.label[last]
        self.ints[0] += 1
        e.remove_member(pos)

    cdef double removal_score(self, Engine e, Py_ssize_t i) noexcept nogil:
        """Margin of member ``i`` under the hypothesis without its own term."""
        cdef Py_ssize_t c, rr = 0
        if e.R == 1:
            return self.label[i] * (self.fS[i, 0] - e.alpha[i, 0] * e.kdiag[i])
        for c in range(e.R):
            self.g[c] = self.fS[i, c] - e.alpha[i, c] * e.kdiag[i]
        return e.margin_of(&self.g[0], self.label[i], &rr)

    cdef Py_ssize_t choose_budget(self, Engine e) noexcept nogil:
        """``argmax_j margin(f(x_j) - alpha_j k(x_j, x_j))``, ties to the oldest."""
        cdef Py_ssize_t i, best = -1
        cdef double sc, top = -INFINITY, tol = e.tie_tol(self.rtol)
        for i in range(e.n):
            sc = self.removal_score(e, i)
            self.score[i] = sc
            if sc > top:
                top = sc
        for i in range(e.n):
            if self.score[i] >= top - tol and (best < 0 or e.born[i] < e.born[best]):
                best = i
        return best

    cdef Py_ssize_t count_errors(self, Engine e, Py_ssize_t m, const double* KE,
                                 Py_ssize_t ke_stride, const double* fE,
                                 const int64_t* yE) noexcept nogil:
        """Errors left on the ``m`` entries of E by removing each member (into ``errors``).

        ``KE[i * ke_stride + k]`` is ``k(x_i, e_k)``, ``fE[k * R + c]`` the
        score of entry ``k``. Returns the oldest member of fewest errors.
        """
        cdef Py_ssize_t i, l, c, R = e.R, best = -1
        cdef Py_ssize_t rr = 0
        cdef int64_t cnt, fewest = -1
        cdef double tol = e.tie_tol(self.rtol), kv, a0
        for i in range(e.n):
            cnt = 0
            if R == 1:
                a0 = e.alpha[i, 0]
                for l in range(m):
                    if yE[l] * (fE[l] - a0 * KE[i * ke_stride + l]) <= tol:
                        cnt += 1
            else:
                for l in range(m):
                    kv = KE[i * ke_stride + l]
                    for c in range(R):
                        self.g[c] = fE[l * R + c] - e.alpha[i, c] * kv
                    if e.margin_of(&self.g[0], yE[l], &rr) <= tol:
                        cnt += 1
            if fewest < 0 or cnt < fewest or (cnt == fewest and e.born[i] < e.born[best]):
                fewest = cnt
                best = i
        return best

    cdef Py_ssize_t choose(self, Engine e) noexcept nogil:
        if not self.tighter:
            return self.choose_budget(e)
        # Fig. 3 with E the support set (Eq. 3): KE is the Gram matrix.
        return self.count_errors(e, e.n, &e.gram[0, 0], e.gram.shape[1],
                                 &self.fS[0, 0], &self.label[0])

    cdef void begin_update(self, Engine e, int64_t y) noexcept nogil:
        pass

    cdef void end_update(self, Engine e) noexcept nogil:
        pass

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        cdef double tau = self.step(e, margin, kxx)
        cdef Py_ssize_t pos
        if not tau > 0.0:
            return
        e.direction(y)
        self.begin_update(e, y)
        while e.n >= self.budget:                           # Fig. 1, step 1
            self.remove(e, self.choose(e))
        pos = e.add_member(&e.v[0], weight * tau)           # steps 2-4
        self.label[pos] = y
        self.on_add(e)
        self.end_update(e)


cdef class TighterRule(BudgetRule):
    """Fig. 3 with an evaluation set other than the support set (Sec. 3.2).

    Entry ``e`` of E has its label ``E_lab[e]`` and its kernel values with
    the members ``E_K[i, e]``, kept current as members come and go. Kernel
    values of a new member with the entries are computed here from the
    entries' rows ``E_X`` (dense input, compiled kernel), or else read from
    the block matrix (entries from this block's rows, ``E_blk``) or from
    ``KEb = K(entries at the block start, block)`` (``E_src``).
    ``E_ints = [|E|, rounds offered to the reservoir]``.
    """

    cdef int mode  # 1: all, 2: random, 3: flip
    cdef Py_ssize_t q
    cdef bint use_ex
    cdef double[:, ::1] E_K, E_X, fE
    cdef int64_t[::1] E_lab, E_born, E_flips, E_pred, E_src, E_blk, E_ints
    cdef const int64_t[::1] slots
    cdef const double[:, ::1] KEb

    def __init__(self, Py_ssize_t budget, double beta, int step_kind, double C, double rtol,
                 int mode, Py_ssize_t q, bint use_ex):
        super().__init__(budget, beta, step_kind, C, rtol, True)
        self.mode = mode
        self.q = q
        self.use_ex = use_ex
        self.round_changes_state = True  # the entries of E

    def bind(self, dict state):
        super().bind(state)
        self.E_K = state["E_K"]
        self.E_lab = state["E_lab"]
        self.E_born = state["E_born"]
        self.E_flips = state["E_flips"]
        self.E_pred = state["E_pred"]
        self.E_src = state["E_src"]
        self.E_blk = state["E_blk"]
        self.E_ints = state["E_ints"]
        self.E_X = state["E_X"]
        self.fE = np.zeros((self.E_K.shape[1], state["alpha"].shape[1]))

    def set_block(self, slots, KEb):
        self.slots = slots
        self.KEb = KEb

    cdef double entry_kernel(self, Engine e, Py_ssize_t ent) noexcept nogil:
        """``k(x_t, e_ent)`` for the row of the current round."""
        if self.use_ex:
            return e.kernel(&e.Xb[e.j, 0], &self.E_X[ent, 0])
        if self.E_blk[ent] >= 0:
            return e.Kc[e.j, e.m0 + self.E_blk[ent]]
        return self.KEb[self.E_src[ent], e.j]

    cdef void put_entry(self, Engine e, Py_ssize_t slot, int64_t y) noexcept nogil:
        """The current round becomes entry ``slot`` of E."""
        cdef Py_ssize_t i, a
        self.E_lab[slot] = y
        for i in range(e.n):
            self.E_K[i, slot] = e.k[i]
        if self.use_ex:
            for a in range(e.d):
                self.E_X[slot, a] = e.Xb[e.j, a]
        self.E_src[slot] = -1
        self.E_blk[slot] = e.j

    cdef void on_round(self, Engine e, int64_t y) noexcept nogil:
        cdef Py_ssize_t s, m = self.E_ints[0]
        if self.mode == 1:
            self.put_entry(e, m, y)
            self.E_ints[0] = m + 1
        elif self.mode == 2:
            # Algorithm R, slots drawn by the Python side for the block.
            s = self.slots[e.j]
            if s >= 0:
                if s == m:
                    self.E_ints[0] = m + 1
                self.put_entry(e, s, y)

    cdef void move_entry(self, Engine e, Py_ssize_t dst, Py_ssize_t src) noexcept nogil:
        cdef Py_ssize_t i, a
        self.E_lab[dst] = self.E_lab[src]
        self.E_born[dst] = self.E_born[src]
        self.E_flips[dst] = self.E_flips[src]
        self.E_pred[dst] = self.E_pred[src]
        self.E_src[dst] = self.E_src[src]
        self.E_blk[dst] = self.E_blk[src]
        for i in range(e.n):
            self.E_K[i, dst] = self.E_K[i, src]
        if self.use_ex:
            for a in range(e.d):
                self.E_X[dst, a] = self.E_X[src, a]

    cdef void begin_update(self, Engine e, int64_t y) noexcept nogil:
        cdef Py_ssize_t l, best = -1, m = self.E_ints[0]
        cdef double rate, low = INFINITY
        if self.mode != 3:
            return
        if m >= self.q:
            # Evict the older entry of smallest flip rate (Fig. 5, read as
            # keeping those that flip most), ties to the oldest.
            for l in range(m):
                rate = <double>self.E_flips[l] / <double>(e.t - self.E_born[l])
                if best < 0 or rate < low or (rate == low and self.E_born[l] < self.E_born[best]):
                    low = rate
                    best = l
            m -= 1
            self.move_entry(e, best, m)
        self.put_entry(e, m, y)
        self.E_born[m] = e.t
        self.E_flips[m] = 0
        self.E_pred[m] = -2  # set after this update
        self.E_ints[0] = m + 1

    cdef void scores_on_E(self, Engine e) noexcept nogil:
        cdef Py_ssize_t i, l, c, m = self.E_ints[0], R = e.R
        cdef double a
        for l in range(m):
            for c in range(R):
                self.fE[l, c] = 0.0
        for i in range(e.n):
            for c in range(R):
                a = e.alpha[i, c]
                for l in range(m):
                    self.fE[l, c] += a * self.E_K[i, l]

    cdef void end_update(self, Engine e) noexcept nogil:
        cdef Py_ssize_t l, c, best, m = self.E_ints[0]
        cdef int64_t pred
        if self.mode != 3:
            return
        self.scores_on_E(e)
        for l in range(m):
            if e.binary:
                pred = 1 if self.fE[l, 0] > 0.0 else 0
            else:
                best = 0
                for c in range(1, e.R):
                    if self.fE[l, c] > self.fE[l, best]:
                        best = c
                pred = best
            if self.E_pred[l] != -2 and pred != self.E_pred[l]:
                self.E_flips[l] += 1
            self.E_pred[l] = pred

    cdef void on_add(self, Engine e) noexcept nogil:
        cdef Py_ssize_t l, p = e.n - 1
        BudgetRule.on_add(self, e)
        for l in range(self.E_ints[0]):
            self.E_K[p, l] = self.entry_kernel(e, l)

    cdef void remove(self, Engine e, Py_ssize_t pos) noexcept nogil:
        cdef Py_ssize_t l, last = e.n - 1
        for l in range(self.E_ints[0]):
            self.E_K[pos, l] = self.E_K[last, l]
        BudgetRule.remove(self, e, pos)

    cdef Py_ssize_t choose(self, Engine e) noexcept nogil:
        self.scores_on_E(e)
        return self.count_errors(e, self.E_ints[0], &self.E_K[0, 0], self.E_K.shape[1],
                                 &self.fE[0, 0], &self.E_lab[0])


# ----------------------------------------------------------------------
# Budgeted Stochastic Gradient Descent
# ----------------------------------------------------------------------
cdef enum:
    MAINTAIN_REMOVAL = 0
    MAINTAIN_PROJECTION = 1
    MAINTAIN_MERGING = 2

# Relative tolerance under which two candidates of a budget maintenance tie
# (and the oldest is taken): the engine's scaled coefficients and a per-round
# rescaling agree to a few ulps, never to the last bit.
cdef double MAINTAIN_TIE = 1e-9
# 1 / golden ratio
cdef double INV_PHI = 0.6180339887498949
# Relative tolerance of the golden-section comparisons
cdef double GSS_TIE = 1e-12


cdef class BudgetedSGDRule(Rule):
    """Pegasos on the regularised hinge loss with budget maintenance.

    Wang, Crammer and Vucetic (2012), Alg. 1: round ``t`` shrinks every
    coefficient by ``1 - 1/t`` and, on a margin error (``m_t < 1``), adds
    ``x_t`` with step ``1 / (lambda t)``. The coefficients after round ``t``
    are ``1 / (lambda t)`` times integers-plus-maintenance, so the engine's
    global scale is set to ``1 / (lambda t)`` and the stored coefficients
    never change with the shrink.

    Projection keeps the Cholesky factor ``chol`` of the members' Gram
    matrix in full rows, in an order of its own: factor row ``i`` belongs to
    the member at position ``order[i]``, and ``rowof`` is the inverse map.
    """

    cdef double lam, rtol
    cdef Py_ssize_t budget
    cdef int maintenance
    cdef double[:, ::1] chol
    cdef int64_t[::1] order, rowof
    cdef double[::1] z, g, dvec, u, sc, xz

    def __init__(self, double lam, Py_ssize_t budget, int maintenance, double rtol):
        self.lam = lam
        self.budget = budget
        self.maintenance = maintenance
        self.rtol = rtol

    def bind(self, dict state):
        m = state["alpha"].shape[0] + 1
        if self.maintenance == MAINTAIN_PROJECTION:
            self.chol = state["chol"]
            self.order = state["order"]
            self.rowof = state["rowof"]
        self.z = np.zeros(m)
        self.g = np.zeros(m)
        self.dvec = np.zeros(m)
        self.sc = np.zeros(m)
        self.u = np.zeros(state["alpha"].shape[1])
        self.xz = np.zeros(state["Xs"].shape[1] if "Xs" in state else 0)

    cdef double threshold(self, Engine e) noexcept nogil:
        return 1.0

    cdef void on_round(self, Engine e, int64_t y) noexcept nogil:
        # The shrink of round t: f_{t+1} = (1 - 1/t) f_t (+ the step), which
        # makes every coefficient 1 / (lambda t) times its stored value.
        e.wscale = 1.0 / (self.lam * <double>e.t)

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        cdef Py_ssize_t p
        if margin >= 1.0:
            return
        e.direction(y)
        # In stored units the step 1 / (lambda t) is 1.
        if self.maintenance == MAINTAIN_PROJECTION:
            self.add_factored(e, kxx, weight)
        else:
            e.add_member(&e.v[0], weight)
        if e.n <= self.budget:
            return
        if self.maintenance == MAINTAIN_MERGING:
            self.merge(e)
            return
        p = self.smallest(e)
        if self.maintenance == MAINTAIN_PROJECTION:
            self.project_out(e, p)
        else:
            e.remove_member(p)

    cdef Py_ssize_t oldest_within(self, Engine e, Py_ssize_t n, double low) noexcept nogil:
        """Oldest of the candidates whose score ``sc`` ties the lowest, ``low``."""
        cdef Py_ssize_t i, best = -1
        cdef double cut = low + MAINTAIN_TIE * fabs(low)
        for i in range(n):
            if self.sc[i] <= cut and (best < 0 or e.born[i] < e.born[best]):
                best = i
        return best

    cdef Py_ssize_t smallest(self, Engine e) noexcept nogil:
        """``argmin_j ||alpha_j||^2 k(x_j, x_j)``, ties to the oldest."""
        cdef Py_ssize_t i, c
        cdef double s, low = INFINITY
        for i in range(e.n):
            s = 0.0
            for c in range(e.R):
                s += e.alpha[i, c] * e.alpha[i, c]
            s *= e.kdiag[i]
            self.sc[i] = s
            if s < low:
                low = s
        return self.oldest_within(e, e.n, low)

    # -- projection -----------------------------------------------------
    cdef void add_factored(self, Engine e, double kxx, double weight) noexcept nogil:
        """Add ``x_t`` and its row of the factor; project it if it is in span(S)."""
        cdef Py_ssize_t i, l, c, n = e.n, pos
        cdef double s, pk2 = 0.0, delta2
        for i in range(n):
            s = e.k[self.order[i]]
            for l in range(i):
                s -= self.chol[i, l] * self.z[l]
            self.z[i] = s / self.chol[i, i]
            pk2 += self.z[i] * self.z[i]
        delta2 = kxx - pk2
        if delta2 <= self.rtol * kxx:
            # k(x_t, .) is in the span of the members up to rounding: its
            # projection is the same function, and keeps the factor regular.
            if pk2 > 0.0:
                self.backward(n)
                for i in range(n):
                    self.dvec[self.order[i]] = self.g[i]
                for c in range(e.R):
                    self.u[c] = weight * e.v[c]
                e.add_rank_one(&self.u[0], &self.dvec[0])
            return
        pos = e.add_member(&e.v[0], weight)
        for l in range(n):
            self.chol[n, l] = self.z[l]
        self.chol[n, n] = sqrt(delta2)
        self.order[n] = pos
        self.rowof[pos] = n

    cdef void backward(self, Py_ssize_t n) noexcept nogil:
        """``g = L^{-T} z``."""
        cdef Py_ssize_t i, l
        cdef double gi
        for i in range(n):
            self.g[i] = self.z[i]
        for i in range(n - 1, -1, -1):
            gi = self.g[i] / self.chol[i, i]
            self.g[i] = gi
            for l in range(i):
                self.g[l] -= self.chol[i, l] * gi

    cdef void project_out(self, Engine e, Py_ssize_t p) noexcept nogil:
        """Remove member ``p`` and spread its coefficients on the others.

        The projection of ``k(x_p, .)`` on the span of the rest has
        coefficients ``d = K_rest^{-1} k_rest(x_p) = -G_rest,p / G_p,p`` with
        ``G = K^{-1}`` (the block inverse): column ``p`` of ``G`` costs two
        triangular solves with the factor, O(|S|^2).
        """
        cdef Py_ssize_t i, l, c, n = e.n, q = self.rowof[p], last
        cdef double s, gq
        for i in range(q):
            self.z[i] = 0.0
        self.z[q] = 1.0 / self.chol[q, q]
        for i in range(q + 1, n):
            s = 0.0
            for l in range(q, i):
                s -= self.chol[i, l] * self.z[l]
            self.z[i] = s / self.chol[i, i]
        self.backward(n)
        gq = self.g[q]
        for i in range(n):
            self.dvec[self.order[i]] = -self.g[i] / gq
        self.dvec[p] = 0.0
        for c in range(e.R):
            self.u[c] = e.alpha[p, c]
        e.add_rank_one(&self.u[0], &self.dvec[0])
        self.delete_row(n, q)
        # The engine moves its last member into the freed position.
        last = n - 1
        e.remove_member(p)
        if p != last:
            self.order[self.rowof[last]] = p
            self.rowof[p] = self.rowof[last]

    cdef void delete_row(self, Py_ssize_t n, Py_ssize_t q) noexcept nogil:
        """Factor of the Gram matrix without factor row ``q`` (Givens rotations).

        Dropping row ``q`` of ``L`` leaves rows ``q..n-2`` one entry past the
        diagonal; rotating columns ``(j, j + 1)`` from the right keeps
        ``L L^T`` and zeroes those entries, O((n - q)^2).
        """
        cdef Py_ssize_t i, j, l
        cdef double a, b, r, cs, sn, xv, yv
        for i in range(q, n - 1):
            for l in range(i + 2):
                self.chol[i, l] = self.chol[i + 1, l]
            self.order[i] = self.order[i + 1]
            self.rowof[self.order[i]] = i
        for j in range(q, n - 1):
            a = self.chol[j, j]
            b = self.chol[j, j + 1]
            r = sqrt(a * a + b * b)
            cs = a / r
            sn = b / r
            for i in range(j, n - 1):
                xv = self.chol[i, j]
                yv = self.chol[i, j + 1]
                self.chol[i, j] = cs * xv + sn * yv
                self.chol[i, j + 1] = cs * yv - sn * xv
            self.chol[j, j] = r
            self.chol[j, j + 1] = 0.0
        for l in range(n):
            self.chol[n - 1, l] = 0.0

    # -- merging --------------------------------------------------------
    cdef double merged_norm2(self, double lk, double h, double am2, double an2,
                             double amn) noexcept nogil:
        """``||alpha_z||^2`` for ``z = h x_m + (1 - h) x_n`` (``lk = log k(x_m, x_n)``)."""
        cdef double km = exp(lk * (1.0 - h) * (1.0 - h)), kn = exp(lk * h * h)
        return am2 * km * km + an2 * kn * kn + 2.0 * amn * km * kn

    cdef double best_h(self, double lk, double am2, double an2, double amn) noexcept nogil:
        """Golden-section search of the ``h`` that maximises ``||alpha_z||^2``.

        On ``[0, 1]`` when the coefficient rows do not point apart; else on
        ``[-1, 0]``, beyond ``x_n`` away from ``x_m`` (ALGORITHMS.md, BSGD).
        """
        cdef double a = 0.0, b = 1.0, c, d, fc, fd
        if amn < 0.0:
            a = -1.0
            b = 0.0
        c = b - INV_PHI * (b - a)
        d = a + INV_PHI * (b - a)
        fc = self.merged_norm2(lk, c, am2, an2, amn)
        fd = self.merged_norm2(lk, d, am2, an2, amn)
        while b - a > 1e-6:
            # Equal norms make the function symmetric about h = 1/2 (the
            # common case: the shrink is uniform); near-ties keep the half
            # nearer x_n, so that rounding never picks the mode.
            if fc >= fd - GSS_TIE * fabs(fd):
                b = d
                d = c
                fd = fc
                c = b - INV_PHI * (b - a)
                fc = self.merged_norm2(lk, c, am2, an2, amn)
            else:
                a = c
                c = d
                fc = fd
                d = a + INV_PHI * (b - a)
                fd = self.merged_norm2(lk, d, am2, an2, amn)
        return 0.5 * (a + b)

    cdef void merge(self, Engine e) noexcept nogil:
        """Merge the smallest member with the partner of least weight degradation."""
        cdef Py_ssize_t m = self.smallest(e), i, a, c, nn, n = e.n, last
        cdef double am2 = 0.0, an2, amn, d2, diff, h, lk, low = INFINITY, km, kn
        for c in range(e.R):
            am2 += e.alpha[m, c] * e.alpha[m, c]
        for i in range(n):
            self.sc[i] = INFINITY
            if i == m:
                continue
            an2 = 0.0
            amn = 0.0
            for c in range(e.R):
                an2 += e.alpha[i, c] * e.alpha[i, c]
                amn += e.alpha[m, c] * e.alpha[i, c]
            d2 = 0.0
            for a in range(e.d):
                diff = e.Xs[m, a] - e.Xs[i, a]
                d2 += diff * diff
            lk = -e.gamma * d2
            h = self.best_h(lk, am2, an2, amn)
            # ||a_m k_m + a_n k_n - a_z k_z||^2 with a_z the projection.
            self.sc[i] = (am2 + an2 + 2.0 * exp(lk) * amn
                          - self.merged_norm2(lk, h, am2, an2, amn))
            self.g[i] = h
            if self.sc[i] < low:
                low = self.sc[i]
        nn = self.oldest_within(e, n, low)
        h = self.g[nn]
        d2 = 0.0
        for a in range(e.d):
            diff = e.Xs[m, a] - e.Xs[nn, a]
            d2 += diff * diff
            self.xz[a] = h * e.Xs[m, a] + (1.0 - h) * e.Xs[nn, a]
        lk = -e.gamma * d2
        km = exp(lk * (1.0 - h) * (1.0 - h))
        kn = exp(lk * h * h)
        for c in range(e.R):
            self.u[c] = e.alpha[m, c] * km + e.alpha[nn, c] * kn
        last = n - 1
        e.remove_member(nn)
        if m == last:
            m = nn
        e.replace_member(m, &self.xz[0], &self.u[0], 1.0)


# ----------------------------------------------------------------------
# Bounded averaging (ALGORITHMS.md, "Bounded averaging")
# ----------------------------------------------------------------------
def kernel_block(const double[:, ::1] X, const double[:, ::1] Z, kernel_code, double gamma,
                 double degree, double coef0):
    """``K(X, Z)`` for dense rows and a kernel of ``KERNEL_CODES``.

    For the small blocks of the averaged model, where the validation of
    ``pairwise_kernels`` costs more than the kernel values; computed from
    differences, so that huge rows give the values the round loop gives.
    """
    cdef Py_ssize_t i, l, m = X.shape[0], p = Z.shape[0], d = X.shape[1]
    cdef int kind = kernel_code
    out = np.zeros((m, p))
    cdef double[:, ::1] K = out
    with nogil:
        for i in range(m):
            for l in range(p):
                K[i, l] = _dense_kernel(kind, &X[i, 0], &Z[l, 0], d, gamma, degree, coef0)
    return out


# Relative tolerance under which two members' compression losses tie (and
# the one that entered first leaves).
cdef double POOL_TIE = 1e-9


def fold_into_pool(const double[:, ::1] C, const double[:, ::1] coef, const double[::1] kxx,
                   const int64_t[::1] index, double[:, ::1] G, double[:, ::1] K,
                   double[:, ::1] beta, int64_t[::1] born, int64_t[::1] idx, int64_t[::1] src,
                   int64_t[::1] ints, Py_ssize_t budget, double rtol, Py_ssize_t refresh_every,
                   Py_ssize_t start):
    """Add the functions ``coef[j] k(x_j, .)``, in order from row ``start``, to
    the pool expansion ``sum_i beta[i] k(p_i, .)`` of at most ``budget`` members.

    A function in the span of the pool (residual ``delta2 <= rtol k(x_j, x_j)``)
    is projected onto it; otherwise ``x_j`` joins, and if the pool then holds
    ``budget + 1`` members, the member whose removal followed by the projection
    of its function onto the others loses the least RKHS norm,
    ``||beta_q||^2 / G_qq``, leaves and is projected (ties: the oldest).

    ``G`` is the inverse of the pool's Gram matrix ``K``, updated in
    ``O(budget^2)`` per change. ``C[j, c]`` is ``k(x_j, .)`` at column ``c`` of
    the block: the pool's members at the start of the call own the columns
    ``0 .. n0 - 1`` (their ``src``), row ``l`` of the call the column ``n0 + l``.
    ``ints = [n, entries so far, changes since G was last recomputed]``.

    Returns the next row to fold: before ``coef.shape[0]`` when ``G`` is due
    to be recomputed from ``K`` (every ``refresh_every`` changes), which
    bounds the rounding error that the updates accumulate.
    """
    cdef Py_ssize_t m = coef.shape[0], R = coef.shape[1], n0 = C.shape[1] - m
    cdef Py_ssize_t j, i, l, c, q, n, nxt = m
    cdef double delta2, s, inv, low, cut, di, gi, aa, gqq, gn, rq
    cdef bint nonzero
    # The pool never holds more members than the rows of G.
    cdef double[::1] k = np.zeros(G.shape[0] + 1)
    cdef double[::1] d = np.zeros(G.shape[0] + 1)
    cdef double[::1] g = np.zeros(G.shape[0] + 1)
    cdef double[::1] lossv = np.zeros(G.shape[0] + 1)
    cdef double[::1] bq = np.zeros(R)
    with nogil:
        for j in range(start, m):
            nonzero = False
            aa = 0.0
            for c in range(R):
                if coef[j, c] != 0.0:
                    nonzero = True
                aa = aa + coef[j, c] * coef[j, c]
            if not nonzero:
                continue
            n = ints[0]
            for i in range(n):
                k[i] = C[j, src[i]]
                d[i] = 0.0
            # d = G k as a sum of rows (G is symmetric): no reduction chain,
            # so the inner loop vectorises.
            for l in range(n):
                s = k[l]
                for i in range(n):
                    d[i] += G[l, i] * s
            delta2 = kxx[j]
            for i in range(n):
                delta2 = delta2 - k[i] * d[i]
            if delta2 <= rtol * kxx[j]:
                # In the span up to rounding: the projection is the function.
                for i in range(n):
                    for c in range(R):
                        beta[i, c] += d[i] * coef[j, c]
                continue
            inv = 1.0 / delta2
            ints[1] += 1
            if n < budget:
                # Join: the block inverse of the grown Gram matrix (Projectron, Eq. 11).
                for i in range(n):
                    di = d[i] * inv
                    for l in range(n):
                        G[i, l] += di * d[l]
                    G[i, n] = -di
                    G[n, i] = -di
                    K[i, n] = k[i]
                    K[n, i] = k[i]
                G[n, n] = inv
                K[n, n] = kxx[j]
                for c in range(R):
                    beta[n, c] = coef[j, c]
                born[n] = ints[1] - 1
                idx[n] = index[j]
                src[n] = n0 + j
                ints[0] = n + 1
                ints[2] += 1
            else:
                # The pool with x_j would hold budget + 1 members: one leaves.
                # The compression loss of each, ||beta_q||^2 over the squared
                # norm of the residual of its kernel function off the others'
                # span (1 / G_qq), from the grown inverse's diagonal without
                # forming it: G_qq + d_q^2 / delta2, and delta2 for x_j.
                low = aa * delta2
                for i in range(n):
                    s = 0.0
                    for c in range(R):
                        s = s + beta[i, c] * beta[i, c]
                    lossv[i] = s / (G[i, i] + d[i] * inv * d[i])
                    if lossv[i] < low:
                        low = lossv[i]
                cut = low + POOL_TIE * fabs(low)
                q = -1
                for i in range(n):
                    if lossv[i] <= cut and (q < 0 or born[i] < born[q]):
                        q = i
                if q < 0:
                    # x_j itself leaves (the youngest, it loses ties): joining
                    # and removing it is projecting its function, and G is
                    # left as it was.
                    for i in range(n):
                        for c in range(R):
                            beta[i, c] += d[i] * coef[j, c]
                else:
                    # Member q leaves and x_j takes its place, in one pass
                    # over G: the grown inverse (as above) minus g g^T / g_qq,
                    # g its column q (block elimination).
                    for i in range(n):
                        g[i] = G[i, q] + d[i] * inv * d[q]
                    gn = -d[q] * inv
                    gqq = g[q]
                    # beta_rest += beta_q K_rest^{-1} k_rest(p_q) = -beta_q g_rest / g_qq
                    for c in range(R):
                        bq[c] = beta[q, c]
                    for i in range(n):
                        rq = g[i] / gqq
                        for c in range(R):
                            beta[i, c] -= rq * bq[c]
                    for i in range(n):
                        di = d[i] * inv
                        gi = g[i] / gqq
                        for l in range(n):
                            G[i, l] += di * d[l] - gi * g[l]
                    # Row and column q now belong to x_j.
                    for l in range(n):
                        s = -d[l] * inv - gn * g[l] / gqq
                        G[q, l] = s
                        G[l, q] = s
                        K[q, l] = k[l]
                        K[l, q] = k[l]
                    G[q, q] = inv - gn * gn / gqq
                    K[q, q] = kxx[j]
                    for c in range(R):
                        beta[q, c] = coef[j, c] - gn / gqq * bq[c]
                    born[q] = ints[1] - 1
                    idx[q] = index[j]
                    src[q] = n0 + j
                    ints[2] += 2
            if ints[2] >= refresh_every:
                nxt = j + 1
                break
    return nxt


# ----------------------------------------------------------------------
# One round at a time
# ----------------------------------------------------------------------
cdef class OneRow:
    """The Engine and Rule of a dense stream, kept for its one-row calls.

    A one-row call would otherwise pay, per row, for what a call of many
    rows pays once: building the engine and the rule, binding them to the
    state arrays, copying every array for the undo record, and numpy calls
    to record the margin. Here they are bound once, to a row buffer of the
    direct kernel path, and each call writes the row, plays its round and
    records its margin, all in compiled code.

    The object is valid while the state arrays it is bound to are the
    same objects (:meth:`binds`): a regrowth or an undo replaces them, and
    the Python side then builds another. The parameters of the rule are
    fixed at construction (the Python side rebuilds on any change). It is
    never pickled: it is derived from the state.

    ``undo_names``: the state arrays a round may change, copied into the
    undo record just before the round's first change (none if the round
    changes nothing); :meth:`undo` puts back everything of the last
    :meth:`play`, the margin's bin and the counters included.

    ``averaged``: the margin recorded is the row's margin under the
    averaged hypothesis of the last checkpoint (``cal_avg_*``, as
    ``_checkpoint_margins`` computes it), not the online one. The Python
    side folds the members that left (``engine.retired()``) and takes the
    checkpoints (``checkpoint_due``), which replace state arrays that only
    Python changes: :meth:`rebind` then follows them.
    """

    cdef public Engine engine
    cdef public Rule rule
    cdef dict state
    cdef list names, arrays, copies
    cdef double[:, ::1] xb
    cdef double[::1] wb, db
    cdef int64_t[::1] yb, ib
    cdef int64_t[::1] counters
    cdef double[::1] scale
    cdef double[::1] cal_counts, cal_sums, cal_n
    cdef Py_ssize_t limit, max_direct, n_bins
    cdef double cal_half, cal_lo, cal_factor, cal_max_weight, cal_max_margin
    # The averaged hypothesis of the last checkpoint (averaged models)
    cdef public bint averaged
    cdef int64_t[::1] cal_avg_t
    cdef const double[:, ::1] avg_coef   # (R, m)
    cdef const double[:, ::1] avg_sv     # (m, d)
    cdef double[::1] avg_k, avg_f
    #: Whether the round played is a checkpoint (averaged models).
    cdef public bint checkpoint_due
    # Undo record of the last play
    cdef public bint active
    cdef int64_t old_counters[4]
    cdef double old_scale[2]
    cdef bint recorded
    cdef Py_ssize_t bin_at, cls_at
    cdef double old_count, old_sum, old_n
    #: Margin of the last round played.
    cdef public double margin

    def __init__(self, Engine engine, Rule rule, dict state, list undo_names,
                 Py_ssize_t limit, Py_ssize_t max_direct, Py_ssize_t cal_half,
                 double cal_lo, double cal_hi, double cal_max_weight,
                 double cal_max_margin, bint averaged=False):
        cdef Py_ssize_t i
        self.engine = engine
        self.rule = rule
        self.state = state
        self.averaged = averaged
        self.limit = limit
        self.max_direct = max_direct
        self.cal_half = <double>cal_half
        self.n_bins = 2 * cal_half
        self.cal_lo = cal_lo
        # As record_margins computes it: _CAL_HALF / (hi - lo).
        self.cal_factor = cal_half / (cal_hi - cal_lo)
        self.cal_max_weight = cal_max_weight
        self.cal_max_margin = cal_max_margin
        self.xb = np.zeros((1, engine.d))
        self.wb = np.zeros(1)
        self.db = np.zeros(1)
        self.yb = np.zeros(1, dtype=np.int64)
        self.ib = np.zeros(1, dtype=np.int64)
        self.counters = state["counters"]
        self.scale = state["scale"]
        self.rebind()
        engine.bind(state)
        rule.bind(state)
        engine.set_block(self.yb, self.wb, self.db, self.ib, Kc=None, Xb=self.xb)
        # A round removes at most every member and the row (and replaces one).
        engine.reserve_retired(engine.alpha.shape[0] + 2)
        if len(undo_names) > 64:
            raise ValueError("Too many state arrays for the undo record.")
        self.copies = []
        for i, name in enumerate(undo_names):
            src = state[name]
            if not src.flags.c_contiguous:
                raise ValueError(f"State array {name!r} is not contiguous.")
            dst = np.empty_like(src)
            self.copies.append((src, dst))
            engine.ckpt_src[i] = <char*><size_t>src.ctypes.data
            engine.ckpt_dst[i] = <char*><size_t>dst.ctypes.data
            engine.ckpt_len[i] = src.nbytes
        engine.n_ckpt = len(undo_names)
        engine.ckpt_arrays = self.copies
        self.active = False

    def rebind(self):
        """Follow the arrays of the state that only Python changes (the bins,
        the average of the last checkpoint, the pool), replaced after a round."""
        state = self.state
        self.names = list(state)
        self.arrays = [state[name] for name in self.names]
        self.cal_counts = state["cal_counts"].reshape(-1)
        self.cal_sums = state["cal_sums"].reshape(-1)
        self.cal_n = state["cal_n"]
        if self.averaged:
            self.cal_avg_t = state["cal_avg_t"]
            self.avg_coef = state["cal_avg_coef"]
            self.avg_sv = state["cal_avg_sv"]
            m = self.avg_coef.shape[1]
            if self.avg_k is None or self.avg_k.shape[0] < m:
                self.avg_k = np.zeros(max(m, 1))
            self.avg_f = np.zeros(self.engine.R)

    def binds(self, dict state):
        """Whether ``state`` holds exactly the arrays this object is bound to."""
        cdef Py_ssize_t i
        if state is not self.state or len(state) != len(self.names):
            return False
        for i in range(len(self.names)):
            if state.get(self.names[i]) is not self.arrays[i]:
                return False
        return True

    def fits(self):
        """Whether the next round needs neither more room nor the blocked path."""
        cdef Py_ssize_t n = self.counters[0], need = n + 1
        if self.limit >= 0 and need > self.limit:
            need = self.limit
        if self.averaged and _next_checkpoint(self.cal_avg_t[0]) <= self.counters[1]:
            return False  # checkpoints passed by rounds not recorded: _play takes them
        return need <= self.engine.alpha.shape[0] and n <= self.max_direct

    def load(self, const double[:, :] X):
        """Copy the one row of ``X``; False if it is not finite (nothing is played)."""
        cdef Py_ssize_t a, d = self.xb.shape[1]
        cdef double v
        cdef bint ok = True
        if X.shape[0] != 1 or X.shape[1] != d:
            return False
        for a in range(d):
            v = X[0, a]
            ok = ok and isfinite(v)
            self.xb[0, a] = v
        return ok

    def load_dict(self, dict x, dict index):
        """Copy the features of ``x`` into the row at the columns ``index``
        names (0 where missing, keys not in ``index`` ignored); False if a
        value is not finite. Raises (TypeError...) on a value that is not a
        number, which the caller hands to the full conversion."""
        cdef Py_ssize_t a, d = self.xb.shape[1]
        cdef double v
        cdef bint ok = True
        for a in range(d):
            self.xb[0, a] = 0.0
        for key, value in x.items():
            j = index.get(key)
            if j is not None:
                v = <double>value
                ok = ok and isfinite(v)
                self.xb[0, <Py_ssize_t>j] = v
        return ok

    @property
    def row(self):
        """The row buffer, shape (1, n_features) (read by the kernel's ``diag``)."""
        return np.asarray(self.xb)

    cdef void sync(self) noexcept:
        """The engine's counters from the state (other calls may have played)."""
        cdef Engine e = self.engine
        e.n = self.counters[0]
        e.t = self.counters[1]
        e.n_mistakes = self.counters[2]
        e.n_updates = self.counters[3]
        e.wscale = self.scale[0]
        e.clock = self.scale[1]

    def begin(self, bint eager):
        """Start the undo record of a call: :meth:`undo` puts back what
        follows. ``eager``: copy the state arrays now (the caller changes
        them before :meth:`play`), not just before the round's first change.
        """
        cdef Engine e = self.engine
        cdef Py_ssize_t i
        self.active = True
        self.recorded = False
        for i in range(4):
            self.old_counters[i] = self.counters[i]
        self.old_scale[0] = self.scale[0]
        self.old_scale[1] = self.scale[1]
        e.ckpt_taken = False
        e.ckpt_armed = e.n_ckpt > 0
        if eager and e.ckpt_armed:
            e.checkpoint()

    def play(self, int64_t y, double w, double kxx, int64_t index, bint record):
        """Play the loaded row as the next round of the stream (after :meth:`begin`).

        ``y``: -1/+1 or the class index; ``w`` its weight (positive);
        ``kxx``: ``k(x, x)``; ``index``: its number in the stream.
        ``record``: add its margin to the bins of the probabilities (as
        ``_calibration.record_margins``). Returns 0, or 2 if the scores were
        not finite (nothing changed), 3 if the coefficients are not finite
        after the update, 4 if the scores under the average of the last
        checkpoint are not (for both, call :meth:`undo`).
        """
        cdef Engine e = self.engine
        cdef Py_ssize_t i, c, R = e.R, u_bin, b, flat, cls
        cdef double margin, size, u, wt
        if not self.active:
            raise RuntimeError("play without begin")
        self.sync()
        self.yb[0] = y
        self.wb[0] = w
        self.db[0] = kxx
        self.ib[0] = index
        e.bad_row = -1
        e.n_ret = 0
        with nogil:
            e._play(self.rule, 0, 1)
        e.ckpt_armed = False
        if e.bad_row >= 0:
            return 2
        if e.ckpt_taken:
            # The coefficients in their true units: a finite stored value
            # times a global scale above 1 may still overflow.
            for i in range(e.n):
                for c in range(R):
                    if not isfinite(e.alpha[i, c] * e.wscale):
                        return 3
        self.counters[0] = e.n
        self.counters[1] = e.t
        self.counters[2] = e.n_mistakes
        self.counters[3] = e.n_updates
        self.scale[0] = e.wscale
        self.scale[1] = e.clock
        margin = e.mout[0]
        if self.averaged:
            margin = self.average_margin(y)
            if not isfinite(margin):
                return 4
            self.checkpoint_due = e.t == _next_checkpoint(e.t - 1)
        self.margin = margin
        if record:
            # record_margins for one round: the bin of log|margin|, then the
            # weight w t and the weighted margin added to it, and w to the
            # total of the class (each a bincount of one term: 0 + the term).
            size = fabs(margin)
            if size < 1e-300:
                size = 1e-300
            u = (log(size) - self.cal_lo) * self.cal_factor
            if u < 0.0:
                u = 0.0
            if u > self.cal_half - 1.0:
                u = self.cal_half - 1.0
            u_bin = <Py_ssize_t>u
            if margin >= 0.0:
                b = <Py_ssize_t>self.cal_half + u_bin
            else:
                b = <Py_ssize_t>self.cal_half - 1 - u_bin
            cls = (y > 0) if R == 1 else y
            flat = cls * self.n_bins + b
            # The clips of record_margins.
            if w > self.cal_max_weight:
                w = self.cal_max_weight
            if margin > self.cal_max_margin:
                margin = self.cal_max_margin
            elif margin < -self.cal_max_margin:
                margin = -self.cal_max_margin
            wt = w * <double>e.t
            self.bin_at = flat
            self.cls_at = cls
            self.old_count = self.cal_counts[flat]
            self.old_sum = self.cal_sums[flat]
            self.old_n = self.cal_n[cls]
            self.cal_counts[flat] += 0.0 + wt
            self.cal_sums[flat] += 0.0 + wt * margin
            self.cal_n[cls] += 0.0 + w
            self.recorded = True
        return 0

    cdef double average_margin(self, int64_t y) noexcept:
        """Margin of the loaded row under the average of the last checkpoint
        (0 before the first; NaN if a score is not finite)."""
        cdef Engine e = self.engine
        cdef Py_ssize_t i, c, m = self.avg_coef.shape[1], r
        cdef double s
        if m == 0:
            return 0.0
        _dense_kernel_row(e.kind, &self.xb[0, 0], &self.avg_sv[0, 0], m, e.d,
                          e.gamma, e.degree, e.coef0, &self.avg_k[0])
        for c in range(e.R):
            s = 0.0
            for i in range(m):
                s += self.avg_coef[c, i] * self.avg_k[i]
            if not isfinite(s):
                return NAN
            self.avg_f[c] = s
        return e.margin_of(&self.avg_f[0], y, &r)

    def undo(self):
        """Put back everything the last :meth:`play` changed (nothing if none is active)."""
        cdef Engine e = self.engine
        cdef Py_ssize_t i
        if not self.active:
            return
        if e.ckpt_taken:
            for i in range(e.n_ckpt):
                memcpy(e.ckpt_src[i], e.ckpt_dst[i], e.ckpt_len[i])
            e.ckpt_taken = False
        for i in range(4):
            self.counters[i] = self.old_counters[i]
        self.scale[0] = self.old_scale[0]
        self.scale[1] = self.old_scale[1]
        if self.recorded:
            self.cal_counts[self.bin_at] = self.old_count
            self.cal_sums[self.bin_at] = self.old_sum
            self.cal_n[self.cls_at] = self.old_n
            self.recorded = False
        self.active = False

    @property
    def rounds(self):
        """Rounds of the stream played (the state's count)."""
        return self.counters[1]

    def expansion_dict(self, dict x, dict index, const double[:, ::1] sv,
                       const double[:, ::1] coef):
        """Scores of the event ``x`` under the expansion ``coef @ k(sv, x)``
        (the published average of an averaged model: ``support_vectors_``,
        ``dual_coef_``), with the kernel of the stream computed as the
        rounds compute it. As :meth:`score_dict`: a float for two classes,
        else a list; None if a value or a score is not finite."""
        cdef Engine e = self.engine
        cdef Py_ssize_t c, i, m = sv.shape[0]
        cdef double s
        cdef double[::1] k
        if not self.load_dict(x, index):
            return None
        if m > 0:
            k = np.empty(m)
            _dense_kernel_row(e.kind, &self.xb[0, 0], &sv[0, 0], m, e.d,
                              e.gamma, e.degree, e.coef0, &k[0])
        for c in range(e.R):
            s = 0.0
            for i in range(m):
                s += coef[c, i] * k[i]
            if not isfinite(s):
                return None
            e.f[c] = s
        if e.R == 1:
            return e.f[0]
        return [e.f[c] for c in range(e.R)]

    def proba_of_scores(self, double scale):
        """The probabilities of the scores just computed (by :meth:`score_dict`
        or :meth:`expansion_dict`) with the probability scale ``scale``: the
        sigmoid of the scaled score of two classes, the softmax of several,
        as a list."""
        cdef Engine e = self.engine
        cdef Py_ssize_t c
        cdef double z, ez, p, top, total
        if e.R == 1:
            z = scale * e.f[0]
            ez = exp(-fabs(z))
            p = 1.0 / (1.0 + ez)
            return [ez * p, p] if z >= 0.0 else [p, ez * p]
        top = -INFINITY
        for c in range(e.R):
            z = scale * e.f[c]
            self.engine.v[c] = z
            if z > top:
                top = z
        total = 0.0
        for c in range(e.R):
            self.engine.v[c] = exp(self.engine.v[c] - top)
            total += self.engine.v[c]
        return [self.engine.v[c] / total for c in range(e.R)]

    def score_dict(self, dict x, dict index):
        """Scores of the event ``x`` (loaded as :meth:`load_dict` loads it)
        under the current hypothesis, in the engine's arithmetic: the scores
        its next round would compute. A float for two classes, else a list;
        None if a value or a score is not finite."""
        cdef Engine e = self.engine
        cdef Py_ssize_t c
        if not self.load_dict(x, index):
            return None
        self.sync()
        e.j = 0
        e.kernel_row()
        e.scores()
        if not e.finite_scores():
            return None
        if e.R == 1:
            return e.f[0]
        return [e.f[c] for c in range(e.R)]


def same_objects(tuple a, tuple b):
    """Whether ``a`` and ``b`` hold the same objects, position by position."""
    cdef Py_ssize_t i
    if len(a) != len(b):
        return False
    for i in range(len(a)):
        if a[i] is not b[i]:
            return False
    return True


# ----------------------------------------------------------------------
# The scale of the probabilities (_calibration._fit_temperature): refitted
# whenever the bins change, so after every event of a stream that predicts
# between its updates; the loops over the bins in use cost a few
# microseconds, where NumPy's calls cost a hundred.
# ----------------------------------------------------------------------
cdef inline double _expit(double x) noexcept nogil:
    if x >= 0.0:
        return 1.0 / (1.0 + exp(-x))
    cdef double e = exp(x)
    return e / (1.0 + e)


cdef void _slope(double a, const double* n, const double* t, const double* m,
                 Py_ssize_t k, double offset, double* g, double* h) noexcept nogil:
    """Derivative of the concave log-likelihood at ``a`` (``g``), and its own (``-h``)."""
    cdef Py_ssize_t i
    cdef double p, gs = 0.0, hs = 0.0
    for i in range(k):
        p = _expit(a * m[i] - offset)
        gs += n[i] * (t[i] - p) * m[i]
        hs += n[i] * p * (1.0 - p) * m[i] * m[i]
    g[0] = gs
    h[0] = hs


def fit_temperature(const double[:, ::1] counts, const double[:, ::1] sums,
                    const double[::1] n_c, double start, double min_scale):
    """Maximum-likelihood scale of the bins; ``start <= 0`` or NaN: no warm start.

    The steps of :func:`sklearn_budget._calibration._fit_temperature`, which
    documents the model: the bracket of the root of the slope (from
    ``1 / max |m|``, or by steps of 1.25 from ``start``), then Newton's steps
    kept inside it.
    """
    cdef Py_ssize_t C = counts.shape[0], B = counts.shape[1], c, b, k = 0, it
    cdef double offset = log(<double>(C - 1 if C > 2 else 1))
    cdef double[::1] n = np.empty(C * B), t = np.empty(C * B), m = np.empty(C * B)
    cdef double target, mmax = 0.0, g, h, lo, hi, a, a_new, step
    cdef bint any_m = False, warm
    for c in range(C):
        target = (n_c[c] + 1.0) / (n_c[c] + 2.0)
        for b in range(B):
            if counts[c, b] > 0.0:
                n[k] = counts[c, b]
                t[k] = target
                m[k] = sums[c, b] / counts[c, b]
                if m[k] != 0.0:
                    any_m = True
                if fabs(m[k]) > mmax:
                    mmax = fabs(m[k])
                k += 1
    if k == 0 or not any_m:
        return min_scale
    _slope(0.0, &n[0], &t[0], &m[0], k, offset, &g, &h)
    if g <= 0.0:
        # No evidence in the margins: near-uniform probabilities, still
        # ordered as the scores.
        return min_scale / mmax
    lo, hi = 0.0, 1.0 / mmax
    warm = isfinite(start) and start > 0.0
    if warm:
        _slope(start, &n[0], &t[0], &m[0], k, offset, &g, &h)
        if g > 0.0:
            lo, hi = start, 1.25 * start
            _slope(hi, &n[0], &t[0], &m[0], k, offset, &g, &h)
            if g > 0.0:
                warm = False
            while g > 0.0 and hi < 1e300:
                lo, hi = hi, 1.25 * hi
                _slope(hi, &n[0], &t[0], &m[0], k, offset, &g, &h)
        else:
            lo, hi = 0.8 * start, start
            _slope(lo, &n[0], &t[0], &m[0], k, offset, &g, &h)
            while g <= 0.0 and lo > 1e-300:
                lo, hi = 0.8 * lo, lo
                _slope(lo, &n[0], &t[0], &m[0], k, offset, &g, &h)
            if not lo > 1e-300:
                lo = 0.0
    _slope(hi, &n[0], &t[0], &m[0], k, offset, &g, &h)
    while g > 0.0 and hi < 1e300:
        lo, hi = hi, 2.0 * hi
        _slope(hi, &n[0], &t[0], &m[0], k, offset, &g, &h)
    a = start if warm and lo <= start <= hi else 0.5 * (lo + hi)
    for it in range(200):
        _slope(a, &n[0], &t[0], &m[0], k, offset, &g, &h)
        if g > 0.0:
            lo = a
        else:
            hi = a
        step = a + g / h if h > 0.0 else NAN
        a_new = step if lo < step < hi else 0.5 * (lo + hi)
        if fabs(a_new - a) <= 1e-12 * a_new or lo == hi:
            return a_new
        a = a_new
    return a
