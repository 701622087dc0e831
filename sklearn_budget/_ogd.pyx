# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The rounds of online gradient descent on the hinge loss, and their features.

The random Fourier features of a row are computed here one row at a time
(the kernel values of NOGD by the package's compiled formulas), each sum in
the order of the row's coordinates, so that they are the same, to the last
bit, whatever the block of rows they come in: a stream gives the same model
whatever its split into calls, and a sparse row the features of its dense
copy (a zero coordinate is skipped). The rounds themselves are sequential:
each round's scores with the current weights, its progressive margin, and
the update ``w_k <- w_k + step * phi(x)`` of every class row ``k`` whose
margin ``Y_k f_k(x)`` is below 1 (one-vs-rest, as SGDClassifier's hinge
loss). With more than two classes and the multiclass hinge loss of Crammer
and Singer (2001), a round whose margin ``f_y(x) - max_{k != y} f_k(x)`` is
below 1 updates two rows instead: ``w_y`` by ``+step * phi(x)`` and the
best other class's by ``-step * phi(x)`` (the first of them on ties).

With averaging, ``acc_k`` gathers ``t * step * phi(x)`` over the updates at
round ``t``, so that the hypotheses used in rounds ``1 .. T`` sum to
``T w - acc`` (the update of round ``s`` is in the hypotheses of the
``T - s`` rounds after it).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from libc.math cimport cos, isfinite
from libc.stdint cimport int64_t
from libc.string cimport memcpy

from ._margins cimport MarginBins


cdef inline double _margin(const double[::1] s, Py_ssize_t n_out, Py_ssize_t cls,
                           double y_bin) noexcept nogil:
    """The margin of a round: ``y f(x)`` (one row), else the true class's
    score minus the largest other one."""
    if n_out == 1:
        return y_bin * s[0]
    return s[cls] - s[_rival(s, n_out, cls)]


cdef inline Py_ssize_t _rival(const double[::1] s, Py_ssize_t n_out,
                              Py_ssize_t cls) noexcept nogil:
    """The class of the largest score other than ``cls``'s (the first on
    ties); the scores are finite."""
    cdef Py_ssize_t k, best = -1
    for k in range(n_out):
        if k != cls and (best < 0 or s[k] > s[best]):
            best = k
    return best


cdef (Py_ssize_t, long long, long long, bint) _rounds(
    const double[:, ::1] Z,
    const int64_t[::1] cls,
    const double[::1] sw,
    double[:, ::1] W,
    double[:, ::1] acc,
    double eta,
    long long t0,
    double[::1] margins,
    Py_ssize_t start,
    Py_ssize_t stop,
    const int64_t[::1] columns,
    Py_ssize_t n_members,
    Py_ssize_t members_left,
    const double[:, ::1] P,
    bint joint,
    double shrink,
    double[::1] s,
    double[::1] q,
    MarginBins bins,
    double* counts,
    double* sums,
    double* totals,
    double* kept,
):
    """The rounds of :func:`hinge_rounds`; with ``bins``, each round's margin
    is also recorded in the bins ``counts``, ``sums`` and ``totals`` as
    ``_calibration.record_margins`` records it (the bin's values before it
    in ``kept``, unless NULL: flat index, count, sum, class total). A round
    whose scores are not finite (features that overflowed: its margin has no
    bin, and its step would make the weights NaN) stops the rounds before
    it changes anything (the fourth value returned). ``s`` and ``q``: room for a row's scores (one per
    output) and, with ``P``, for its step (``D`` values). ``joint``: the
    multiclass hinge loss of Crammer and Singer instead of one-vs-rest."""
    cdef Py_ssize_t n = Z.shape[0], D = Z.shape[1], n_out = W.shape[0], n_w = W.shape[1]
    cdef Py_ssize_t i, j, k, c, col, flat, rival = -1
    cdef bint binary = n_out == 1, average = acc.shape[0] > 0, nonfinite = False
    cdef bint record = margins.shape[0] > 0, kernel_mode = columns is not None
    cdef bint updated, mistake, project = P is not None, in_bins = bins is not None
    cdef bint pairwise = joint and n_out > 1
    cdef double y_k, step, t, dot, z, m, old
    cdef long long mistakes = 0, updates = 0
    cdef const double* direction
    if stop < 0:
        stop = n
    i = start
    with nogil:
        while i < stop:
            if kernel_mode and members_left == 0:
                break
            for k in range(n_out):
                dot = 0.0
                for j in range(D):
                    dot = dot + W[k, j] * Z[i, j]
                s[k] = dot
                if not isfinite(dot):
                    nonfinite = True
            if nonfinite:
                break
            if binary:
                mistake = (2.0 * cls[i] - 1.0) * s[0] <= 0.0
            else:
                mistake = False
                for k in range(n_out):
                    if k != cls[i] and s[k] >= s[cls[i]]:
                        mistake = True
            if pairwise:
                # The best other class, found once: the margin is read from it.
                rival = _rival(s, n_out, cls[i])
                m = s[cls[i]] - s[rival]
            elif record or in_bins:
                m = _margin(s, n_out, cls[i], 2.0 * cls[i] - 1.0)
            if record:
                margins[i] = m
            t = <double>(t0 + i + 1)
            if in_bins:
                # As record_margins records it (add_at clips the margin to the
                # bins' range; flat_bin puts wider ones in the end bins).
                flat = bins.flat_bin(m, cls[i])
                if kept != NULL:
                    kept[0] = <double>flat
                    kept[1] = counts[flat]
                    kept[2] = sums[flat]
                    kept[3] = totals[cls[i]]
                bins.add_at(counts, sums, totals, flat, cls[i], m, sw[i], t)
            if shrink != 1.0:
                # The step of the L2 penalty (alpha / 2) ||f||^2, before the
                # hinge's: f <- (1 - eta alpha) f (NORMA). The average's sums
                # take the change made, as they take an update's.
                for k in range(n_out):
                    for j in range(n_w):
                        old = W[k, j]
                        W[k, j] = shrink * old
                        if average:
                            acc[k, j] += t * (W[k, j] - old)
            updated = False
            for k in range(n_out):
                if binary:
                    y_k = 2.0 * cls[i] - 1.0
                else:
                    y_k = 1.0 if k == cls[i] else -1.0
                if pairwise:
                    if m >= 1.0 or (k != cls[i] and k != rival):
                        continue
                elif y_k * s[k] >= 1.0:
                    continue
                step = eta * sw[i] * y_k
                if kernel_mode:
                    col = columns[i]
                    W[k, col] += step
                    if average:
                        acc[k, col] += t * step
                    updated = True
                    continue
                direction = &Z[i, 0]
                if project:
                    if not updated:
                        # q = P Z[i], each sum in the order of the coordinates.
                        for j in range(D):
                            q[j] = 0.0
                        for c in range(D):
                            z = Z[i, c]
                            if z != 0.0:
                                for j in range(D):
                                    q[j] += z * P[c, j]
                    direction = &q[0]
                updated = True
                for j in range(D):
                    W[k, j] += step * direction[j]
                if average:
                    for j in range(D):
                        acc[k, j] += (t * step) * direction[j]
            mistakes += mistake
            updates += updated
            if updated and kernel_mode and columns[i] >= n_members:
                members_left -= 1
            i += 1
    return i, mistakes, updates, nonfinite


def hinge_rounds(
    const double[:, ::1] Z,
    const int64_t[::1] cls,
    const double[::1] sw,
    double[:, ::1] W,
    double[:, ::1] acc,
    double eta,
    long long t0,
    double[::1] margins,
    Py_ssize_t start=0,
    Py_ssize_t stop=-1,
    const int64_t[::1] columns=None,
    Py_ssize_t n_members=0,
    Py_ssize_t members_left=-1,
    const double[:, ::1] P=None,
    bint joint=False,
    double shrink=1.0,
):
    """Play the rounds ``start .. stop`` of the rows ``Z`` (their features).

    ``cls``: the class index of each row; ``sw``: its positive sample
    weight; ``W``: the weights (one row for two classes, one per class
    otherwise), changed in place; ``acc``: the sums of the average (an
    empty array without averaging); ``t0``: the rounds played before row 0;
    ``margins``: where each round's margin goes (an empty array: none).

    With ``columns`` given, the rows are kernel values with candidate
    members and the step of row ``i`` goes to the single coefficient
    ``columns[i]`` (kernel online gradient descent) instead of along
    ``Z[i]``: a new member when ``columns[i] >= n_members``, else a member
    the row already is. The rounds then stop after the update that makes
    ``members_left`` new members.

    With ``P`` given (a symmetric ``D x D`` matrix), the step of row ``i``
    goes along ``P @ Z[i]``, computed once for the row if it updates:
    online gradient descent on ``w`` in the space of features ``M z`` is
    the same function as these rounds on ``W = M^T w`` with
    ``P = M^T M``, which score a row in ``O(D)`` and pay ``O(D^2)`` on
    updates only.

    With ``joint`` and more than two classes, a round updates the true
    class and the best other one when its multiclass margin is below 1
    (Crammer and Singer's hinge loss) instead of every class whose
    one-vs-rest margin is (see the module's docstring).

    With ``shrink`` other than 1, every round first multiplies the weights
    by ``shrink`` (``1 - eta alpha``, the step of an L2 penalty), whether
    or not its hinge loss steps.

    Returns ``(end, mistakes, updates, nonfinite)``: the round after the
    last one played, the prediction mistakes, the rounds with an update, and
    whether the rounds stopped at row ``end`` because its scores are not
    finite (its features overflowed).
    """
    return _rounds(
        Z, cls, sw, W, acc, eta, t0, margins, start, stop, columns, n_members,
        members_left, P, joint, shrink, np.empty(W.shape[0]),
        np.empty(Z.shape[1] if P is not None else 0),
        None, NULL, NULL, NULL, NULL,
    )


cdef void _row_products(const double[:, ::1] A, const double[:, ::1] M,
                        double[:, ::1] out) noexcept nogil:
    """``out += A @ M``, each row's sums in the order of its coordinates (zeros skipped)."""
    cdef Py_ssize_t n = A.shape[0], m = A.shape[1], k = M.shape[1], i, r, j, c, end
    # Rows summed together: each row of M is read once per tile of rows
    # rather than once per row, and every row's sums keep their order.
    cdef Py_ssize_t tile = 8
    cdef double a
    i = 0
    while i < n:
        end = min(i + tile, n)
        for j in range(m):
            for r in range(i, end):
                a = A[r, j]
                if a != 0.0:
                    for c in range(k):
                        out[r, c] += a * M[j, c]
        i = end


def row_products(const double[:, ::1] A, const double[:, ::1] M):
    """``A @ M``, each row's sums in the order of its coordinates (zeros skipped)."""
    out_arr = np.zeros((A.shape[0], M.shape[1]))
    cdef double[:, ::1] out = out_arr
    with nogil:
        _row_products(A, M, out)
    return out_arr


def csr_row_products(const double[::1] data, const int64_t[::1] indices,
                     const int64_t[::1] indptr, const double[:, ::1] M):
    """``A @ M`` for ``A`` in CSR form (sorted indices), as :func:`row_products`."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, k = M.shape[1], i, p, c
    cdef double a
    out_arr = np.zeros((n, k))
    cdef double[:, ::1] out = out_arr
    with nogil:
        for i in range(n):
            for p in range(indptr[i], indptr[i + 1]):
                a = data[p]
                if a != 0.0:
                    for c in range(k):
                        out[i, c] += a * M[indices[p], c]
    return out_arr


cdef void _cosine(double[:, ::1] P, const double[::1] offset, double scale) noexcept nogil:
    cdef Py_ssize_t n = P.shape[0], k = P.shape[1], i, c
    for i in range(n):
        for c in range(k):
            P[i, c] = scale * cos(P[i, c] + offset[c])


def cosine_features(double[:, ::1] P, const double[::1] offset, double scale):
    """``scale * cos(P + offset)`` in place (libm's cos, element by element)."""
    with nogil:
        _cosine(P, offset, scale)


cdef class OneRound:
    """The round of one row at a time on the arrays of a stream, and its undo.

    Bound once to the state's weights ``w`` (and ``acc``), its ``counters``
    and the bins of its margins (``cal_*``), and to ``P`` (see
    :func:`hinge_rounds`), it plays a row's round by the loop of the blocks,
    recording the margin in the bins as ``_calibration.record_margins``
    does, without the conversions of a call of :func:`hinge_rounds`. Each
    :meth:`play` keeps what the round changes (the weights, the counters,
    the margin's bin) until the next one, so that :meth:`undo` puts it back.

    Parameters
    ----------
    state : dict
        The stream's state arrays.
    bins : MarginBins
        The recorder of the margins (``_calibration.MARGIN_BINS``).
    P : ndarray of shape (D, D) or None
        The projection of the steps (NOGD), or None.
    joint : bool
        The multiclass hinge loss of Crammer and Singer instead of
        one-vs-rest (see :func:`hinge_rounds`).
    """

    cdef readonly object w_array, acc_array, counters_array, features
    cdef object bins_arrays, P_array
    cdef double[:, ::1] W, acc, saved_W, saved_acc, counts, sums, z
    cdef const double[:, ::1] P
    cdef double[::1] totals, no_margins, sw, s, q
    cdef int64_t[::1] counters, cls
    cdef MarginBins bins
    cdef double kept[4]
    cdef long long saved_counters[3]
    cdef public bint active
    cdef readonly bint joint
    cdef bint average

    def __init__(self, dict state, MarginBins bins, P=None, bint joint=False):
        self.w_array = state["w"]
        self.acc_array = state.get("acc")
        self.counters_array = state["counters"]
        self.bins_arrays = (state["cal_counts"], state["cal_sums"], state["cal_n"])
        self.W = self.w_array
        self.average = self.acc_array is not None
        self.acc = self.acc_array if self.average else np.empty((0, 0))
        self.saved_W = np.empty_like(self.w_array)
        self.saved_acc = np.empty_like(self.acc_array) if self.average else np.empty((0, 0))
        self.counters = self.counters_array
        self.counts, self.sums, self.totals = self.bins_arrays
        self.bins = bins
        self.P_array = P
        self.P = P
        self.features = np.zeros((1, self.W.shape[1]))
        self.z = self.features
        self.no_margins = np.empty(0)
        self.s = np.empty(self.W.shape[0])
        self.q = np.empty(self.W.shape[1] if P is not None else 0)
        self.sw = np.empty(1)
        self.cls = np.empty(1, dtype=np.int64)
        self.active = False
        self.joint = joint

    def binds(self, dict state, P=None):
        """Whether the state holds the arrays bound here, and ``P`` is the one bound."""
        counts, sums, totals = self.bins_arrays
        return (
            state.get("w") is self.w_array
            and state.get("acc") is self.acc_array
            and state.get("counters") is self.counters_array
            and state.get("cal_counts") is counts
            and state.get("cal_sums") is sums
            and state.get("cal_n") is totals
            and P is self.P_array
        )

    def finite(self, const double[:, ::1] X):
        """Whether every value of ``X`` is finite."""
        cdef Py_ssize_t i, j
        for i in range(X.shape[0]):
            for j in range(X.shape[1]):
                if not isfinite(X[i, j]):
                    return False
        return True

    def fourier(self, const double[:, ::1] X, const double[:, ::1] M,
                const double[::1] offset, double scale):
        """The random Fourier features of the one row ``X`` (``fourier_features``),
        in the buffer ``features``, which it returns."""
        cdef Py_ssize_t c
        if X.shape[0] != 1 or X.shape[1] != M.shape[0] or M.shape[1] != self.z.shape[1] \
                or offset.shape[0] != self.z.shape[1]:
            raise ValueError("The row, the random weights and the features do not agree in shape.")
        with nogil:
            for c in range(self.z.shape[1]):
                self.z[0, c] = 0.0
            _row_products(X[:1], M, self.z)
            _cosine(self.z, offset, scale)
        return self.features

    def play(self, const double[:, ::1] Z, int64_t label, double w, double eta,
             double shrink=1.0):
        """Play the round of the row ``Z`` (its features, one row), class index
        ``label``, weight ``w``, step ``eta`` and factor ``shrink`` of the
        weights before the step (see :func:`hinge_rounds`): the counters and
        the bins as a block of one row leaves them. False, with nothing
        changed, where the round's scores are not finite (the blocks' path
        raises the error).
        """
        cdef Py_ssize_t end
        cdef long long mistakes, updates
        cdef bint nonfinite
        cdef Py_ssize_t size = self.W.shape[0] * self.W.shape[1]
        if Z.shape[0] != 1 or Z.shape[1] != self.W.shape[1]:
            raise ValueError("The features of the row do not agree with the weights in shape.")
        self.cls[0] = label
        self.sw[0] = w
        memcpy(&self.saved_W[0, 0], &self.W[0, 0], size * sizeof(double))
        if self.average:
            memcpy(&self.saved_acc[0, 0], &self.acc[0, 0], size * sizeof(double))
        self.saved_counters[0] = self.counters[0]
        self.saved_counters[1] = self.counters[1]
        self.saved_counters[2] = self.counters[2]
        self.active = True
        end, mistakes, updates, nonfinite = _rounds(
            Z, self.cls, self.sw, self.W, self.acc, eta, self.counters[0], self.no_margins,
            0, 1, None, 0, -1, self.P, self.joint, shrink, self.s, self.q, self.bins,
            &self.counts[0, 0], &self.sums[0, 0], &self.totals[0], self.kept,
        )
        if nonfinite:
            self.active = False
            return False
        self.counters[0] += 1
        self.counters[1] += mistakes
        self.counters[2] += updates
        return True

    def undo(self):
        """Put back what the last :meth:`play` changed, unless done with (``active``)."""
        cdef Py_ssize_t size = self.W.shape[0] * self.W.shape[1], flat, n_bins
        if not self.active:
            return
        memcpy(&self.W[0, 0], &self.saved_W[0, 0], size * sizeof(double))
        if self.average:
            memcpy(&self.acc[0, 0], &self.saved_acc[0, 0], size * sizeof(double))
        self.counters[0] = self.saved_counters[0]
        self.counters[1] = self.saved_counters[1]
        self.counters[2] = self.saved_counters[2]
        flat = <Py_ssize_t>self.kept[0]
        n_bins = self.counts.shape[1]
        self.counts[flat // n_bins, flat % n_bins] = self.kept[1]
        self.sums[flat // n_bins, flat % n_bins] = self.kept[2]
        self.totals[flat // n_bins] = self.kept[3]
        self.active = False
