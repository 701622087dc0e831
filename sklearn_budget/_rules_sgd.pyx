# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Update rule of Budgeted Stochastic Gradient Descent (Wang, Crammer and
Vucetic, 2012): Pegasos with budget maintenance by removal, projection or
merging.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport INFINITY, exp, fabs, sqrt
from libc.stdint cimport int64_t

import numpy as np

from ._engine cimport Engine, Rule


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
        ``[-1, 0]``, beyond ``x_n`` away from ``x_m`` (``doc/decisions.rst``,
        Budgeted SGD: Merging).
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

