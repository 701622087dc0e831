# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Update rules of the projection family: the Projectron and the Projectron++
(Orabona, Keshet and Caputo, 2008).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport sqrt
from libc.stdint cimport int64_t

import numpy as np

from ._engine cimport Engine, Rule


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

