# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The progressive margins and the probabilities made of them (``_margins.pyx``)."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.stdint cimport int64_t


cdef class MarginBins:
    cdef readonly Py_ssize_t half
    cdef Py_ssize_t n_bins
    cdef double lo, factor, max_weight, max_margin

    cdef Py_ssize_t flat_bin(self, double margin, Py_ssize_t cls) noexcept nogil
    cdef void add_at(self, double* counts, double* sums, double* totals, Py_ssize_t flat,
                     Py_ssize_t cls, double margin, double w, double t) noexcept nogil


cdef bint average_scores(const double[:, ::1] coef, const double* k, Py_ssize_t m,
                         const double* live, double t, double* f) noexcept nogil
cdef double average_margin(const double[:, ::1] coef, const double* k, Py_ssize_t m,
                           const double* live, double t, int64_t y,
                           double* f) noexcept nogil
cdef void log_proba(const double* z, Py_ssize_t R, double* out) noexcept nogil
cdef double fit_scale(const double* counts, const double* sums, const double* n_c,
                      Py_ssize_t C, Py_ssize_t B, double start, double min_scale,
                      double* work) noexcept nogil
