# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Dense rows: the compiled kernels on them, and copying one row in.

The kernels (``dense_kernel``, ``dense_kernel_row``, in ``_dense_rows.pxd``)
give the kernel values of the *direct* path of the round loop, computed
from differences of the rows; :func:`kernel_block` gives the same values
for a block of rows, row by row, so that every kernel value of a dense
stream has one arithmetic.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport isfinite

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
