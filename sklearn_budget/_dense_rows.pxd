# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Dense rows: the compiled kernels on them, and copying one row in.

The kernels are inline here so that every module that computes kernel
values (the round loop, the rules, the averaged hypothesis) compiles the
same arithmetic into its own loops.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport exp, fabs, pow, sqrt, tanh

# The codes of KERNEL_CODES (_dense_rows.pyx).
cdef enum:
    K_LINEAR = 0
    K_POLY = 1
    K_RBF = 2
    K_SIGMOID = 3
    K_LAPLACIAN = 4
    K_COSINE = 5
    K_CHI2 = 6
    K_ADDITIVE_CHI2 = 7


cdef inline double dense_kernel(int kind, const double* x, const double* z, Py_ssize_t d,
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


cdef inline void dense_kernel_row(int kind, const double* x, const double* Z, Py_ssize_t n,
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
        out[i] = dense_kernel(kind, x, Z + i * d, d, gamma, degree, coef0)


cdef void csr_by_feature(const double[::1] data, const Py_ssize_t[::1] indices,
                         const Py_ssize_t[::1] indptr, Py_ssize_t n_rows, Py_ssize_t d,
                         Py_ssize_t[::1] first, Py_ssize_t[::1] fill, Py_ssize_t[::1] row,
                         double[::1] val) noexcept nogil
cdef object thread_heads(Py_ssize_t d)
cdef void csr_lists(const Py_ssize_t[::1] indices, const Py_ssize_t[::1] indptr,
                    Py_ssize_t n_rows, Py_ssize_t[::1] head, Py_ssize_t[::1] nxt,
                    Py_ssize_t[::1] row, Py_ssize_t base=*) noexcept nogil
cdef void empty_lists(const Py_ssize_t[::1] indices, Py_ssize_t[::1] head) noexcept nogil
cdef bint load_row(double[:, ::1] out, const double[:, :] X) noexcept
cdef bint load_event(double[:, ::1] out, dict x, dict index) except -1


cdef class BlockColumns:
    # The block's values (rows of X against Z: members, then X's rows)
    cdef double[:, ::1] K
    # The squared norms of X's rows and Z's
    cdef const double[::1] xx, zz
    cdef Py_ssize_t lower, b, n_joined
    cdef double g
    # The rows that joined, in order; whether each did, and whether its
    # round's values were made; room for a row's values
    cdef Py_ssize_t[::1] joined
    cdef unsigned char[::1] done, made
    cdef double[::1] tmp

    cdef void need(self, Py_ssize_t j) noexcept nogil
    cdef void row(self, Py_ssize_t i) noexcept nogil
    cdef void values(self, Py_ssize_t i, const Py_ssize_t* rows, Py_ssize_t n) noexcept nogil
