# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Update rules of the Budget Perceptron (Crammer, Kandola and Singer, 2004)
and of the Tighter Budget Perceptron (Weston, Bordes and Bottou, 2005).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport INFINITY
from libc.stdint cimport int64_t

import numpy as np

from ._engine cimport Engine, Rule, margin_of


cdef inline double _two_class_removal_score(double label, double f, double alpha,
                                            double kxx) noexcept nogil:
    """Margin of a member of two classes under the hypothesis without its own
    term: ``y (f(x) - alpha k(x, x))``."""
    return label * (f - alpha * kxx)


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
        cdef double a
        for i in range(e.n):
            for c in range(e.R):
                self.fS[i, c] = 0.0
        # By member l outermost: each fS[i, c] still sums its terms in the
        # order of l, and the inner loop runs along a row of the Gram matrix.
        for l in range(e.n):
            for c in range(e.R):
                a = e.alpha[l, c]
                for i in range(e.n):
                    self.fS[i, c] += a * e.gram[l, i]

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
        # Column p of the Gram matrix is the round's kernel row (add_member
        # wrote both): read contiguously.
        for l in range(e.n):
            for c in range(e.R):
                self.fS[p, c] += e.alpha[l, c] * e.k[l]

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
            return _two_class_removal_score(self.label[i], self.fS[i, 0], e.alpha[i, 0],
                                            e.kdiag[i])
        for c in range(e.R):
            self.g[c] = self.fS[i, c] - e.alpha[i, c] * e.kdiag[i]
        return margin_of(&self.g[0], self.label[i], e.R, &rr)

    cdef Py_ssize_t choose_budget(self, Engine e) noexcept nogil:
        """``argmax_j margin(f(x_j) - alpha_j k(x_j, x_j))``, ties to the oldest."""
        cdef Py_ssize_t i, best = -1
        cdef double sc, top = -INFINITY, tol = e.tie_tol(self.rtol)
        for i in range(e.n):
            if e.R == 1:  # removal_score of two classes, inlined
                sc = _two_class_removal_score(self.label[i], self.fS[i, 0], e.alpha[i, 0],
                                              e.kdiag[i])
            else:
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
                    if margin_of(&self.g[0], yE[l], R, &rr) <= tol:
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
        e.need_column(e.j)  # read by the block's later rounds (entry_kernel)

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

