# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The progressive margins and the probabilities made of them.

One compiled implementation of each step, for every path of the rounds
(the blocks of ``_base._play``, the one-row path of ``_one_row.py``), so
that a stream records the same bins whatever calls it is split into:

- :class:`MarginBins`: the bin of a margin and the recording of a round's
  margin into the bins (``_calibration.record_margins`` documents them);
- :func:`margin_weights`, :func:`last_recorded`, :func:`recorded_rows`:
  the rounds whose margins averaged models record, and their weights (the
  schedule of the engine, ``_engine.pxd``'s ``cal_weight``);
- :func:`average_margins`: the margins of the recorded rows of a segment
  of rounds under the averaged hypothesis of their rounds, the pool's part
  summed in the order of its members (the kernel values of dense rows
  computed here, in one call per segment);
- :func:`fit_temperature`: the scale of the probabilities fitted to the
  bins;
- :func:`log_probabilities`: the probabilities of scaled scores, the
  sigmoid of two classes and the softmax of several.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport INFINITY, NAN, exp, fabs, isfinite, isnan, log, log1p, signbit
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy

import numpy as np

from ._dense_rows cimport dense_kernel_row
from ._engine cimport cal_last, cal_weight, margin_of


# ----------------------------------------------------------------------
# The bins of the margins
# ----------------------------------------------------------------------
cdef class MarginBins:
    """The layout of the bins of the progressive margins, and their recorder.

    ``2 * half`` bins per class, uniform in ``log|margin|`` over
    ``[exp(lo), exp(hi)]`` for each sign (narrower and wider margins share
    the end bins); a round adds its weight times its round number, and that
    times its margin, to its bin, and its weight to its class's total.
    Weights above ``max_weight`` count as ``max_weight``, margins beyond
    ``max_margin`` as ``max_margin``, so that no finite input overflows.

    Parameters
    ----------
    half : int
        Bins of each sign.
    lo, hi : float
        Logarithms of the smallest and largest margin sizes told apart.
    max_weight, max_margin : float
        The clipping bounds of the weights and of the margins.
    """

    def __init__(self, Py_ssize_t half, double lo, double hi, double max_weight,
                 double max_margin):
        self.half = half
        self.n_bins = 2 * half
        self.lo = lo
        self.factor = half / (hi - lo)
        self.max_weight = max_weight
        self.max_margin = max_margin

    cdef Py_ssize_t flat_bin(self, double margin, Py_ssize_t cls) noexcept nogil:
        """Index of the bin of ``margin`` in the flattened bins of class ``cls``.

        Margins below 1e-300 (zero included) fall in the first bin, as any
        below ``exp(lo)`` does: flooring them avoids log(0).
        """
        cdef double size = fabs(margin), u
        cdef Py_ssize_t b
        if size < 1e-300:
            size = 1e-300
        u = (log(size) - self.lo) * self.factor
        if not u >= 0.0:
            # NaN too (a NaN margin, which the callers refuse first): never an
            # index outside the bins.
            u = 0.0
        if u > self.half - 1.0:
            u = self.half - 1.0
        b = <Py_ssize_t>u
        b = self.half + b if margin >= 0.0 else self.half - 1 - b
        return cls * self.n_bins + b

    cdef void add_at(self, double* counts, double* sums, double* totals, Py_ssize_t flat,
                     Py_ssize_t cls, double margin, double w, double t) noexcept nogil:
        """Record round ``t`` of class ``cls``, weight ``w`` and margin
        ``margin`` in its bin ``flat`` (of :meth:`flat_bin`)."""
        cdef double wt
        if w > self.max_weight:
            w = self.max_weight
        if margin > self.max_margin:
            margin = self.max_margin
        elif margin < -self.max_margin:
            margin = -self.max_margin
        wt = w * t
        counts[flat] += wt
        sums[flat] += wt * margin
        totals[cls] += w

    def record(self, double[:, ::1] counts, double[:, ::1] sums, double[::1] totals,
               const double[::1] margins, const int64_t[::1] cls, const double[::1] w,
               const double[::1] rounds):
        """Add the rounds, in order, to the bins ``counts`` and ``sums`` (one row
        per class) and to the totals of the classes ``totals``.

        Each bin is summed round after round, so that the bins of a stream
        are the same, to the last bit, for any split of it into calls.
        """
        cdef Py_ssize_t i, c, n = margins.shape[0], n_classes = totals.shape[0]
        if (
            counts.shape[0] != n_classes or sums.shape[0] != n_classes
            or counts.shape[1] != self.n_bins or sums.shape[1] != self.n_bins
            or cls.shape[0] != n or w.shape[0] != n or rounds.shape[0] != n
        ):
            raise ValueError("The bins, the classes and the rounds do not agree in shape.")
        for i in range(n):
            if not 0 <= cls[i] < n_classes:
                raise ValueError(f"Class index {cls[i]} is not below {n_classes}.")
            if isnan(margins[i]):
                raise ValueError("A margin to record is NaN: the bins are left as they were.")
        with nogil:
            for i in range(n):
                c = cls[i]
                self.add_at(&counts[0, 0], &sums[0, 0], &totals[0],
                            self.flat_bin(margins[i], c), c, margins[i], w[i], rounds[i])

    def bins_of(self, const double[::1] margins):
        """The bin of each margin (within its class's row of bins)."""
        cdef Py_ssize_t i
        out = np.empty(margins.shape[0], dtype=np.intp)
        cdef Py_ssize_t[::1] bins = out
        with nogil:
            for i in range(margins.shape[0]):
                bins[i] = self.flat_bin(margins[i], 0)
        return out


# ----------------------------------------------------------------------
# Margins under the average
# ----------------------------------------------------------------------
cdef bint average_scores(const double[:, ::1] coef, const double* k, Py_ssize_t m,
                         const double* live, double t, double* f) noexcept nogil:
    """``f = (sum_{i < m} coef[i] k[i] + live) / t``: the scores of the
    average of ``t`` hypotheses (``coef``: one row per member of the pool,
    summed in their order; ``live``: the current members' part, from the
    engine); False if one is not finite."""
    cdef Py_ssize_t c, i, R = coef.shape[1]
    cdef double s
    for c in range(R):
        s = 0.0
        for i in range(m):
            s += coef[i, c] * k[i]
        s = (s + live[c]) / t
        if not isfinite(s):
            return False
        f[c] = s
    return True


cdef double average_margin(const double[:, ::1] coef, const double* k, Py_ssize_t m,
                           const double* live, double t, int64_t y,
                           double* f) noexcept nogil:
    """The margin of label ``y`` (coded as for the rounds) under the scores
    of :func:`average_scores` (left in ``f``); NaN if one is not finite."""
    cdef Py_ssize_t r
    if not average_scores(coef, k, m, live, t, f):
        return NAN
    return margin_of(f, y, coef.shape[1], &r)


def average_margins(const int64_t[::1] rows, int64_t first_round, const double[:, ::1] live,
                    const int64_t[::1] y, const double[:, ::1] pool_coef,
                    const double[:, ::1] ret_coef, const int64_t[::1] ret_t, K=None, X=None,
                    pool_X=None, ret_X=None, int kernel_code=-1, double gamma=0.0,
                    double degree=0.0, double coef0=0.0):
    """Margins of rows of a segment of rounds under the averages of their
    rounds (:func:`average_margin`), the pool's part summed in its order.

    The pool of row ``i``'s round holds the pool's members at the segment's
    start followed by the members that left during the segment before that
    round (``ret_t < round``), as the pool holds them when the rounds are
    played one at a time.

    Parameters
    ----------
    rows : ndarray of shape (n_rows,)
        Increasing positions of the rows within the segment (of ``live``,
        ``y``, ``X``); the round of position ``r`` is ``first_round + r``,
        the number of hypotheses averaged.
    first_round : int
        The round of the segment's first row.
    live : ndarray of shape (n_segment, n_coef_rows)
        The current members' part of each row's scores (summed running sums).
    y : ndarray of shape (n_segment,)
        The labels, -1/+1 or class indices.
    pool_coef : ndarray of shape (n_pool, n_coef_rows)
        The running sums of the pool's members at the segment's start: one
        column for two classes, one per class otherwise.
    ret_coef : ndarray of shape (n_retired, n_coef_rows)
        Those of the members that left during the segment, in their order.
    ret_t : ndarray of shape (n_retired,)
        The round at which each left (nondecreasing).
    K : ndarray of shape (n_rows, n_pool + n_retired), default=None
        The kernel values of the rows with the pool's members then the
        members that left. None: computed here from the dense rows ``X``
        (of the segment), ``pool_X`` and ``ret_X`` by the compiled kernel
        ``kernel_code``, each value as ``kernel_block`` computes it.

    Returns
    -------
    margins : ndarray of shape (n_rows,) or None
        None if a score is not finite.
    """
    cdef Py_ssize_t i, r, j = 0, n = rows.shape[0], R = live.shape[1]
    cdef Py_ssize_t n0 = pool_coef.shape[0], m = ret_coef.shape[0], d = 0
    cdef bint finite = True, direct = K is None
    cdef double t
    cdef const double[:, ::1] Kv
    cdef const double[:, ::1] Xv
    cdef const double[:, ::1] Pv
    cdef const double[:, ::1] Rv
    # The pool's running sums then those of the members that left: the
    # members of the pool as the rounds see it, in its order.
    cdef double[:, ::1] coef = np.empty((n0 + m, R))
    if n0:
        memcpy(&coef[0, 0], &pool_coef[0, 0], n0 * R * sizeof(double))
    if m:
        memcpy(&coef[n0, 0], &ret_coef[0, 0], m * R * sizeof(double))
    # The kernel row of the direct path (one value more: &k[0] is valid
    # without members).
    cdef double[::1] k = np.zeros(n0 + m + 1)
    if direct:
        Xv, Pv, Rv = X, pool_X, ret_X
        d = Xv.shape[1]
    else:
        Kv = K
    out = np.zeros(n)
    cdef double[::1] margins = out
    cdef double[::1] f = np.empty(max(R, 1))
    with nogil:
        for i in range(n):
            r = rows[i]
            t = <double>(first_round + r)
            # ``searchsorted(ret_t, round, "left")``: the rows' rounds increase.
            while j < m and ret_t[j] < first_round + r:
                j += 1
            if direct:
                if n0:
                    dense_kernel_row(kernel_code, &Xv[r, 0], &Pv[0, 0], n0, d, gamma, degree,
                                     coef0, &k[0])
                if m:
                    dense_kernel_row(kernel_code, &Xv[r, 0], &Rv[0, 0], m, d, gamma, degree,
                                     coef0, &k[n0])
                margins[i] = average_margin(coef, &k[0], n0 + j, &live[r, 0], t, y[r], &f[0])
            else:
                margins[i] = average_margin(coef, &Kv[i, 0] if Kv.shape[1] else &k[0],
                                            n0 + j, &live[r, 0], t, y[r], &f[0])
            if isnan(margins[i]):
                finite = False
                break
    return out if finite else None


def recorded_rows(int64_t first_round, Py_ssize_t n):
    """Positions ``r`` among the ``n`` rounds from ``first_round`` whose
    margins an averaged model records (``cal_weight(first_round + r) > 0``),
    in increasing order."""
    cdef Py_ssize_t r, count = 0
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] rows = out
    for r in range(n):
        if cal_weight(first_round + r):
            rows[count] = r
            count += 1
    return out[:count]


def margin_weights(const int64_t[::1] rounds):
    """The weight of each round's margin in the bins of an averaged model:
    its stride where the schedule records it, 0 where it does not.

    Parameters
    ----------
    rounds : ndarray of shape (n_rounds,)
        Round indices of the stream, from 1.

    Returns
    -------
    weights : ndarray of shape (n_rounds,)
    """
    cdef Py_ssize_t i
    out = np.zeros(rounds.shape[0])
    cdef double[::1] weights = out
    for i in range(rounds.shape[0]):
        weights[i] = <double>cal_weight(rounds[i])
    return out


def last_recorded(int64_t t):
    """The last round up to round ``t`` whose margin an averaged model
    records (0: none): it changes exactly at the recorded rounds."""
    return cal_last(t)


# ----------------------------------------------------------------------
# The probabilities of scaled scores
# ----------------------------------------------------------------------
cdef inline double _log_expit(double x) noexcept nogil:
    """``log(1 / (1 + exp(-x)))`` without overflow (scipy's ``log_expit``)."""
    if x < 0.0:
        return x - log1p(exp(x))
    return -log1p(exp(-x))


cdef void log_proba(const double* z, Py_ssize_t R, double* out) noexcept nogil:
    """Log-probabilities of the scaled scores ``z``: ``log sigmoid(-z), log
    sigmoid(z)`` of the single score of two classes (``R = 1``, two values
    out), else the log-softmax of the ``R`` scores."""
    cdef Py_ssize_t c
    cdef double top = -INFINITY, total = 0.0
    if R == 1:
        out[0] = _log_expit(-z[0])
        out[1] = _log_expit(z[0])
        return
    for c in range(R):
        if z[c] > top:
            top = z[c]
    if not isfinite(top):
        top = 0.0
    for c in range(R):
        out[c] = z[c] - top
        total += exp(out[c])
    total = log(total)
    for c in range(R):
        out[c] -= total


def log_probabilities(const double[:, ::1] z):
    """Log-probabilities of scaled scores ``z``, shape (n, 1) for two classes
    (``log sigmoid`` of the score and of its opposite: shape (n, 2) out) or
    (n, n_classes) (``log softmax``, the same shape out)."""
    cdef Py_ssize_t i, n = z.shape[0], R = z.shape[1]
    out = np.empty((n, 2 if R == 1 else R))
    cdef double[:, ::1] lp = out
    if n == 0:
        return out
    with nogil:
        for i in range(n):
            log_proba(&z[i, 0], R, &lp[i, 0])
    return out


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
    cdef double x, p = 0.0, gs = 0.0, hs = 0.0, last = NAN
    for i in range(k):
        x = a * m[i] - offset
        # _expit is a function of x alone: the same x (bits, sign included)
        # gives the same p. At a = 0, where the fit starts, x is the same
        # for every bin (a * m = +-0): one exp instead of one per bin.
        if not (x == last and signbit(x) == signbit(last)):
            p = _expit(x)
            last = x
        gs += n[i] * (t[i] - p) * m[i]
        hs += n[i] * p * (1.0 - p) * m[i] * m[i]
    g[0] = gs
    h[0] = hs


cdef struct _Slopes:
    # The bins in use (as _slope takes them) and the last points evaluated
    const double* n
    const double* t
    const double* m
    Py_ssize_t k
    double offset
    double a[3]
    double g[3]
    double h[3]
    int size, last


cdef void _slope_at(_Slopes* s, double a, double* g, double* h) noexcept nogil:
    """:func:`_slope` at ``a``, remembering its last three points: the
    bracket and Newton's first step come back to points just evaluated (the
    same arithmetic on the same ``a``: the same values)."""
    cdef int i
    for i in range(s.size):
        if s.a[i] == a and signbit(s.a[i]) == signbit(a):
            g[0] = s.g[i]
            h[0] = s.h[i]
            return
    _slope(a, s.n, s.t, s.m, s.k, s.offset, g, h)
    s.last = (s.last + 1) % 3
    s.a[s.last] = a
    s.g[s.last] = g[0]
    s.h[s.last] = h[0]
    if s.size < 3:
        s.size += 1


# The bins scanned at once for one that is not +0.0 (see _used_bins).
cdef enum:
    _SCAN_BLOCK = 16


cdef inline Py_ssize_t _take_bins(const double* counts, const double* sums, Py_ssize_t start,
                                  Py_ssize_t stop, double target, double* n, double* t,
                                  double* m, Py_ssize_t k) noexcept nogil:
    """Append the bins ``start:stop`` whose count is positive to ``n``,
    ``t``, ``m`` from position ``k`` (see :func:`_used_bins`); returns the new count."""
    cdef Py_ssize_t b
    for b in range(start, stop):
        if counts[b] > 0.0:
            n[k] = counts[b]
            t[k] = target
            m[k] = sums[b] / counts[b]
            k += 1
    return k


cdef Py_ssize_t _used_bins(const double* counts, const double* sums, Py_ssize_t B,
                           double target, double* n, double* t, double* m) noexcept nogil:
    """The bins of one class whose count is positive, in their order: their
    counts ``n``, the class's ``target`` in ``t`` and their mean margins
    ``m``; returns how many.

    Most of the bins of a stream stay empty. A block of bins whose bits
    are all zero holds only +0.0, which fails ``> 0``: skipping it keeps
    exactly the bins, in the same order, that testing every bin keeps (the
    other blocks, and the last ``B % _SCAN_BLOCK`` bins, are tested bin by
    bin), whatever the bins hold. The blocks have a constant length, so that
    the compiler unrolls and vectorizes their test (a third of the
    instructions of a refit of the 2-D stream's scale with a variable one).
    """
    cdef Py_ssize_t j, k = 0, start = 0, full = B - B % _SCAN_BLOCK
    cdef uint64_t bits, word
    while start < full:
        bits = 0
        for j in range(_SCAN_BLOCK):
            memcpy(&word, &counts[start + j], sizeof(double))
            bits |= word
        if bits != 0:
            k = _take_bins(counts, sums, start, start + _SCAN_BLOCK, target, n, t, m, k)
        start += _SCAN_BLOCK
    return _take_bins(counts, sums, full, B, target, n, t, m, k)


cdef double fit_scale(const double* counts, const double* sums, const double* n_c,
                      Py_ssize_t C, Py_ssize_t B, double start, double min_scale,
                      double* work) noexcept nogil:
    """:func:`fit_temperature` of the bins ``counts`` and ``sums`` (``C``
    rows of ``B``, C-ordered) and the class totals ``n_c``; ``work``: room
    for ``3 * C * B`` doubles."""
    cdef Py_ssize_t c, i, k = 0, it
    cdef double offset = log(<double>(C - 1 if C > 2 else 1))
    # The bins in use: their weights, targets and mean margins.
    cdef double* n = work
    cdef double* t = &work[C * B]
    cdef double* m = &work[2 * C * B]
    cdef _Slopes slopes
    cdef double mmax = 0.0, g, h, lo, hi, a, a_new, step
    cdef bint any_m = False, warm
    for c in range(C):
        k += _used_bins(&counts[c * B], &sums[c * B], B, (n_c[c] + 1.0) / (n_c[c] + 2.0),
                        &n[k], &t[k], &m[k])
    for i in range(k):
        if m[i] != 0.0:
            any_m = True
        if fabs(m[i]) > mmax:
            mmax = fabs(m[i])
    if k == 0 or not any_m:
        return min_scale
    slopes.n, slopes.t, slopes.m, slopes.k, slopes.offset = n, t, m, k, offset
    slopes.size = 0
    slopes.last = -1
    _slope_at(&slopes, 0.0, &g, &h)
    if g <= 0.0:
        # No evidence in the margins: near-uniform probabilities, still
        # ordered as the scores.
        return min_scale / mmax
    lo, hi = 0.0, 1.0 / mmax
    warm = isfinite(start) and start > 0.0
    if warm:
        _slope_at(&slopes, start, &g, &h)
        if g > 0.0:
            lo, hi = start, 1.25 * start
            _slope_at(&slopes, hi, &g, &h)
            if g > 0.0:
                warm = False
            while g > 0.0 and hi < 1e300:
                lo, hi = hi, 1.25 * hi
                _slope_at(&slopes, hi, &g, &h)
        else:
            lo, hi = 0.8 * start, start
            _slope_at(&slopes, lo, &g, &h)
            while g <= 0.0 and lo > 1e-300:
                lo, hi = 0.8 * lo, lo
                _slope_at(&slopes, lo, &g, &h)
            if not lo > 1e-300:
                lo = 0.0
    _slope_at(&slopes, hi, &g, &h)
    while g > 0.0 and hi < 1e300:
        lo, hi = hi, 2.0 * hi
        _slope_at(&slopes, hi, &g, &h)
    a = start if warm and lo <= start <= hi else 0.5 * (lo + hi)
    for it in range(200):
        _slope_at(&slopes, a, &g, &h)
        if g > 0.0:
            lo = a
        else:
            hi = a
        step = a + g / h if h > 0.0 else NAN
        # A step that rounds to nothing (step == a, the end of the bracket
        # just moved there) has converged: bisecting instead would take some
        # thirty more slopes to end within round-off of the same root.
        a_new = step if lo < step < hi or step == a else 0.5 * (lo + hi)
        if fabs(a_new - a) <= 1e-12 * a_new or lo == hi:
            return a_new
        a = a_new
    return a


def fit_temperature(const double[:, ::1] counts, const double[:, ::1] sums,
                    const double[::1] n_c, double start, double min_scale):
    """Maximum-likelihood scale of the bins; ``start <= 0`` or NaN: no warm start.

    The steps of :func:`sklearn_budget._calibration._fit_temperature`, which
    documents the model: the bracket of the root of the slope (from
    ``1 / max |m|``, or by steps of 1.25 from ``start``), then Newton's steps
    kept inside it.
    """
    cdef Py_ssize_t C = counts.shape[0], B = counts.shape[1]
    if sums.shape[0] != C or sums.shape[1] != B or n_c.shape[0] != C:
        raise ValueError("The bins and the classes do not agree in shape.")
    cdef double[::1] work = np.empty(max(3 * C * B, 1))
    if C * B == 0:
        return min_scale
    cdef double scale
    with nogil:
        scale = fit_scale(&counts[0, 0], &sums[0, 0], &n_c[0], C, B, start, min_scale, &work[0])
    return scale
