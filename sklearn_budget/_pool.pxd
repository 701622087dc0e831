"""Declarations of ``_pool.pyx`` shared with the compiled one-row path."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

cdef bint finite_sums(const double[:, ::1] acc, const double[:, ::1] alpha,
                      const double[::1] stamp, double clock, Py_ssize_t n,
                      const double[:, ::1] pool_coef, Py_ssize_t m) noexcept nogil
