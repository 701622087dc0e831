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
loss).

With averaging, ``acc_k`` gathers ``t * step * phi(x)`` over the updates at
round ``t``, so that the hypotheses used in rounds ``1 .. T`` sum to
``T w - acc`` (the update of round ``s`` is in the hypotheses of the
``T - s`` rounds after it).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from libc.math cimport INFINITY, cos
from libc.stdint cimport int64_t


cdef inline double _margin(const double[::1] s, Py_ssize_t n_out, Py_ssize_t cls,
                           double y_bin) noexcept nogil:
    """The margin of a round: ``y f(x)`` (one row), else the true class's
    score minus the largest other one."""
    cdef Py_ssize_t k
    cdef double best
    if n_out == 1:
        return y_bin * s[0]
    best = -INFINITY
    for k in range(n_out):
        if k != cls and s[k] > best:
            best = s[k]
    return s[cls] - best


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

    Returns ``(end, mistakes, updates)``: the round after the last one
    played, the prediction mistakes and the rounds with an update.
    """
    cdef Py_ssize_t n = Z.shape[0], D = Z.shape[1], n_out = W.shape[0]
    cdef Py_ssize_t i, j, k, c, col
    cdef bint binary = n_out == 1, average = acc.shape[0] > 0
    cdef bint record = margins.shape[0] > 0, kernel_mode = columns is not None
    cdef bint updated, mistake, project = P is not None
    cdef double y_k, step, t, dot, z
    cdef long long mistakes = 0, updates = 0
    cdef double[::1] s = np.empty(n_out)
    cdef double[::1] q = np.empty(D if project else 0)
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
            if binary:
                mistake = (2.0 * cls[i] - 1.0) * s[0] <= 0.0
            else:
                mistake = False
                for k in range(n_out):
                    if k != cls[i] and s[k] >= s[cls[i]]:
                        mistake = True
            if record:
                margins[i] = _margin(s, n_out, cls[i], 2.0 * cls[i] - 1.0)
            t = <double>(t0 + i + 1)
            updated = False
            for k in range(n_out):
                if binary:
                    y_k = 2.0 * cls[i] - 1.0
                else:
                    y_k = 1.0 if k == cls[i] else -1.0
                if y_k * s[k] >= 1.0:
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
    return i, mistakes, updates


def row_products(const double[:, ::1] A, const double[:, ::1] M):
    """``A @ M``, each row's sums in the order of its coordinates (zeros skipped)."""
    cdef Py_ssize_t n = A.shape[0], m = A.shape[1], k = M.shape[1], i, r, j, c, end
    # Rows summed together: each row of M is read once per tile of rows
    # rather than once per row, and every row's sums keep their order.
    cdef Py_ssize_t tile = 8
    cdef double a
    out_arr = np.zeros((n, k))
    cdef double[:, ::1] out = out_arr
    with nogil:
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


def cosine_features(double[:, ::1] P, const double[::1] offset, double scale):
    """``scale * cos(P + offset)`` in place (libm's cos, element by element)."""
    cdef Py_ssize_t n = P.shape[0], k = P.shape[1], i, c
    with nogil:
        for i in range(n):
            for c in range(k):
                P[i, c] = scale * cos(P[i, c] + offset[c])
