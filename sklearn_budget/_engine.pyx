# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Compiled round loop of the online kernel classifiers.

One loop, :meth:`Engine.play`, plays the rounds of a block without the GIL:
kernel row of the round, scores, margin, mistake count, and, when the rule's
margin threshold says so, the rule's update. Each algorithm is a small
:class:`Rule` subclass (as scikit-learn's SGD loop takes a ``LossFunction``),
in a module of its family (``_rules_*.pyx``), that changes the hypothesis
only through the engine's operations: :meth:`Engine.add_member`,
:meth:`Engine.remove_member`, :meth:`Engine.replace_member`,
:meth:`Engine.add_rank_one`, :meth:`Engine.scale` and
:meth:`Engine.zero_member`.

Coefficients are stored in units of a global scale ``wscale`` (1 unless a
rule sets it): the hypothesis is ``wscale * sum_i alpha_i k(x_i, .)``, so a
rule whose every coefficient shrinks on every round (Pegasos' ``1 - 1/t``)
changes one number instead of ``|S|``. The operations take and leave
coefficients in these stored units.

Every array is owned by the Python estimator (so that it pickles and can be
inspected); the engine and the rules only borrow typed views of them for
one call, and the Python side grows them before a block so that no
allocation happens inside the loop.

Kernel values come from one of two sources, chosen per block by the
Python side (``sklearn_budget._base``):

- *direct*: computed here from the member rows (``_dense_rows``), for
  dense input and the kernels with a compiled form; cheapest in low
  dimension;
- *blocked*: read from a matrix ``Kc = K(block, [members; block])``
  computed by :func:`sklearn.metrics.pairwise.pairwise_kernels` (BLAS), for
  high dimension, sparse input and callable kernels. For the rbf kernel of
  sparse rows, its values with the block's own rows hold their products
  until a round reads them: a ``BlockColumns`` makes those of the rows
  that joined the values before each round (``_dense_rows``).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport NAN, fabs, isfinite, isnan
from libc.stdint cimport int64_t
from libc.string cimport memcpy

import numpy as np

from ._dense_rows cimport dense_kernel_row


cdef class Engine:
    """State of one call: borrowed views of the estimator's arrays."""

    def __init__(self, Py_ssize_t n_rows, bint average, bint keep_gram, bint removes,
                 bint dense, kernel_code, double gamma, double degree, double coef0,
                 Py_ssize_t n_features):
        self.R = n_rows
        self.binary = n_rows == 1
        self.dsq = 1.0 if n_rows == 1 else 2.0
        self.average = average
        self.keep_gram = keep_gram
        self.removes = removes
        self.dense = dense
        self.kind = -1 if kernel_code is None else kernel_code
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.d = n_features
        self.f = np.zeros(n_rows)
        self.v = np.zeros(n_rows)
        self.ret_limit = -1
        self.col_due = -1

    def bind(self, dict state):
        """Take views of the (possibly regrown) arrays of ``state``."""
        self.alpha = state["alpha"]
        self.idx = state["idx"]
        self.born = state["born"]
        self.kdiag = state["kdiag"]
        self.cols = state["cols"]
        if self.average:
            self.acc = state["acc"]
            self.stamp = state["stamp"]
        if self.keep_gram:
            self.gram = state["gram"]
        if self.dense:
            self.Xs = state["Xs"]
        self.k = np.zeros(self.alpha.shape[0] + 1)
        c = state["counters"]
        self.n, self.t, self.n_mistakes, self.n_updates = c[0], c[1], c[2], c[3]
        self.scale_state = state["scale"]
        self.wscale, self.clock = self.scale_state[0], self.scale_state[1]

    def store_counters(self, state):
        c = state["counters"]
        c[0], c[1], c[2], c[3] = self.n, self.t, self.n_mistakes, self.n_updates
        s = state["scale"]
        s[0], s[1] = self.wscale, self.clock

    def set_block(self, y, w, diag, index, Kc=None, Xb=None, BlockColumns columns=None):
        """Rows of the next block: ``Kc`` for the blocked path, ``Xb`` (dense);
        ``columns``: the ``BlockColumns`` that makes ``Kc``'s values with the
        block's rows (their products until then) as the rounds read them,
        or None (all values already)."""
        cdef Py_ssize_t b = y.shape[0]
        if self.mout is None or self.mout.shape[0] < b:
            self.mout = np.zeros(b)
        if self.cal_average and (self.aout is None or self.aout.shape[0] < b):
            self.aout = np.zeros((b, self.R))
        self.yb = y
        self.w = w
        self.diag = diag
        self.index = index
        self.direct = Kc is None
        if Xb is not None:
            self.Xb = Xb
        self.columns = columns
        if Kc is not None:
            self.Kc = Kc
            self.m0 = self.n
            for i in range(self.n):
                self.cols[i] = i
        self.n_ret = 0
        # Removals in a block are at most the members at its start plus the
        # additions, one per round; replacements one per round.
        self.reserve_retired(self.n + 2 * b)

    cdef void reserve_retired(self, Py_ssize_t m):
        """Room for ``m`` removed members in the record of :meth:`retired`."""
        if self.average and self.removes:
            self.ret_idx = np.zeros(m, dtype=np.int64)
            self.ret_col = np.zeros(m, dtype=np.int64)
            self.ret_t = np.zeros(m, dtype=np.int64)
            self.ret_acc = np.zeros((m, self.R))
            self.ret_X = np.zeros((m if self.dense else 0, self.d))

    def margins(self, Py_ssize_t b):
        """Margins of the first ``b`` rounds of the block, before their updates."""
        return np.asarray(self.mout[:b]).copy()

    def live_averages(self, Py_ssize_t start, Py_ssize_t stop):
        """The current members' part of the averaged scores of rows ``start:stop``
        of the block (set on the rounds that ``cal_weight`` records)."""
        return np.asarray(self.aout[start:stop])

    def retired(self):
        """Stream index, running sum, row (or block column) and round of each
        member removed since :meth:`clear_retired`."""
        m = self.n_ret
        if not self.average or m == 0:
            return None
        return (
            np.asarray(self.ret_idx[:m]).copy(),
            np.asarray(self.ret_acc[:m]).copy(),
            np.asarray(self.ret_X[:m]).copy() if self.dense else None,
            np.asarray(self.ret_col[:m]).copy(),
            np.asarray(self.ret_t[:m]).copy(),
        )

    def clear_retired(self):
        """Forget the removed members (handed to the pool)."""
        self.n_ret = 0

    # ------------------------------------------------------------------
    # The loop
    # ------------------------------------------------------------------
    def play(self, Rule rule, Py_ssize_t start, Py_ssize_t stop):
        """Play rows ``start:stop`` of the block (without the GIL).

        Stops at the first row whose scores are not finite (overflow of the
        kernel values or of the coefficients) and sets ``bad_row``, or after
        the round at which the removed members exceed ``ret_limit``; the
        next row to play is then ``stopped_at`` (``stop`` otherwise).
        """
        self.bad_row = -1
        self.stopped_at = stop
        with nogil:
            self._play(rule, start, stop)

    cdef void _play(self, Rule rule, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        cdef Py_ssize_t jj
        cdef double margin, thr
        cdef int64_t y
        for jj in range(start, stop):
            self.j = jj
            self.t += 1
            self.clock += self.wscale   # the hypothesis of this round
            if self.k_ready:
                self.k_ready = False
                self.scores()
            elif self.direct:
                self.kernel_row()
                self.scores()
            else:
                if self.columns is not None:
                    self.columns.row(jj)
                self.gathered_scores()
            if not self.finite_scores():
                self.bad_row = jj
                return
            y = self.yb[jj]
            margin = self.margin(y)
            self.mout[jj] = margin
            if self.cal_average and cal_weight(self.t) > 0:
                self.live_average(jj)
            if margin <= 0.0:
                self.n_mistakes += 1
            if self.ckpt_armed and rule.round_changes_state:
                self.checkpoint()
            rule.on_round(self, y)
            thr = rule.threshold(self)
            if not isnan(thr) and margin <= thr:
                if self.ckpt_armed:
                    self.checkpoint()
                self.updated = False
                rule.update(self, y, margin, self.diag[jj], self.w[jj])
                if self.col_due >= 0:
                    # The rule kept the member it added with its column unwritten.
                    self.write_column(self.col_due)
                if self.updated:
                    self.n_updates += 1
            if 0 <= self.ret_limit < self.n_ret:
                # The pool is due for compression before the next round.
                self.stopped_at = jj + 1
                return

    cdef void checkpoint(self) noexcept nogil:
        """Copy the registered state arrays into the undo record (once per call)."""
        cdef Py_ssize_t i
        for i in range(self.n_ckpt):
            memcpy(self.ckpt_dst[i], self.ckpt_src[i], self.ckpt_len[i])
        self.ckpt_armed = False
        self.ckpt_taken = True

    cdef void journal_gram(self, Py_ssize_t pos) noexcept nogil:
        """Row and column ``pos`` of the Gram matrix are about to change:
        keep their values for the undo of a one-row call (``jn_on``)."""
        cdef Py_ssize_t i, m = self.jn_n, cap = self.gram.shape[0]
        if not self.jn_on or self.jn_full:
            return
        if m == self.jn_row.shape[0]:
            memcpy(self.jn_backup, &self.gram[0, 0], cap * cap * sizeof(double))
            self.jn_full = True
            return
        self.jn_pos[m] = pos
        for i in range(cap):
            self.jn_row[m, i] = self.gram[pos, i]
            self.jn_col[m, i] = self.gram[i, pos]
        self.jn_n = m + 1

    cdef void kernel_row(self) noexcept nogil:
        cdef Py_ssize_t i, n = self.n, j = self.j
        if not self.direct:
            for i in range(n):
                self.k[i] = self.Kc[j, self.cols[i]]
            return
        if n > 0:
            dense_kernel_row(self.kind, &self.Xb[j, 0], &self.Xs[0, 0], n, self.d,
                              self.gamma, self.degree, self.coef0, &self.k[0])

    cdef void live_average(self, Py_ssize_t jj) noexcept nogil:
        """``aout[jj] = sum_i acc_i(t) k(x_i, x_t)``: the current members' part
        of the summed hypotheses of rounds ``1..t`` at the round's row, each
        running sum brought to the round (the hypothesis of this round, not
        yet updated, included)."""
        cdef Py_ssize_t i, c
        cdef double dt, s
        for c in range(self.R):
            s = 0.0
            for i in range(self.n):
                dt = self.clock - self.stamp[i]
                s += (self.acc[i, c] + self.alpha[i, c] * dt) * self.k[i]
            self.aout[jj, c] = s

    cdef void scores(self) noexcept nogil:
        cdef Py_ssize_t i, c, R = self.R
        cdef double ki
        for c in range(R):
            self.f[c] = 0.0
        if R == 1:
            for i in range(self.n):
                self.f[0] += self.alpha[i, 0] * self.k[i]
        else:
            for i in range(self.n):
                ki = self.k[i]
                for c in range(R):
                    self.f[c] += self.alpha[i, c] * ki
        self.scale_scores()

    cdef void scale_scores(self) noexcept nogil:
        """The scores times the global scale of the coefficients (budgeted SGD)."""
        cdef Py_ssize_t c
        if self.wscale != 1.0:
            for c in range(self.R):
                self.f[c] *= self.wscale

    cdef void gathered_scores(self) noexcept nogil:
        """:meth:`kernel_row` and :meth:`scores` of a row of the blocked path
        in one pass over the members: the same values, and the same sums in
        the same order (one pass less over ``k`` and ``alpha``, a round's
        largest cost after the kernel values at large budgets)."""
        cdef Py_ssize_t i, c, R = self.R, j = self.j
        cdef double ki, s = 0.0
        if R == 1:
            # The sum in a local: the store of k[i] would otherwise reload f.
            for i in range(self.n):
                ki = self.Kc[j, self.cols[i]]
                self.k[i] = ki
                s += self.alpha[i, 0] * ki
            self.f[0] = s
        else:
            for c in range(R):
                self.f[c] = 0.0
            for i in range(self.n):
                ki = self.Kc[j, self.cols[i]]
                self.k[i] = ki
                for c in range(R):
                    self.f[c] += self.alpha[i, c] * ki
        self.scale_scores()

    cdef bint finite_scores(self) noexcept nogil:
        cdef Py_ssize_t c
        for c in range(self.R):
            if not isfinite(self.f[c]):
                return False
        return True

    cdef double margin(self, int64_t y) noexcept nogil:
        return margin_of(&self.f[0], y, self.R, &self.r)

    cdef void direction(self, int64_t y) noexcept nogil:
        """Unit Perceptron step into ``v``: ``y`` with two classes, else ``+1``
        on the true class and ``-1`` on the best other (Crammer and Singer,
        2003; ``doc/decisions.rst``, Multiclass)."""
        cdef Py_ssize_t c
        if self.binary:
            self.v[0] = <double>y
            return
        for c in range(self.R):
            self.v[c] = 0.0
        self.v[y] = 1.0
        self.v[self.r] = -1.0

    # ------------------------------------------------------------------
    # Operations on the hypothesis
    # ------------------------------------------------------------------
    cdef void sync_all(self) noexcept nogil:
        cdef Py_ssize_t i
        if self.average:
            for i in range(self.n):
                self.sync(i)

    cdef Py_ssize_t add_member(self, const double* coef, double scale,
                               bint column=True) noexcept nogil:
        """Add the round's row with coefficients ``scale * coef``; returns its position.

        ``column=False`` (a rule that removes a member right after, as the
        Forgetron does at its budget): the new member's Gram column, one
        value per row of a ``cap x cap`` matrix (a cache line each, most of
        an addition at budgets of thousands), is written only if it stays
        where it is: by :meth:`remove_member` when the member moves into the
        place freed, else after the update. Until then its values are its
        row's, and :meth:`member_score` reads them.
        """
        cdef Py_ssize_t i, c, a, pos = self.n, j = self.j
        for c in range(self.R):
            self.alpha[pos, c] = scale * coef[c]
        self.idx[pos] = self.index[j]
        self.born[pos] = self.t
        self.kdiag[pos] = self.diag[j]
        if self.average:
            for c in range(self.R):
                self.acc[pos, c] = 0.0
            self.stamp[pos] = self.clock
        if self.keep_gram:
            self.journal_gram(pos)
            for i in range(pos):
                self.gram[pos, i] = self.k[i]
            if column:
                for i in range(pos):
                    self.gram[i, pos] = self.k[i]
            else:
                self.col_due = pos
            self.gram[pos, pos] = self.diag[j]
        if self.dense:
            for a in range(self.d):
                self.Xs[pos, a] = self.Xb[j, a]
        if not self.direct:
            self.cols[pos] = self.m0 + j
            self.need_column(j)
        self.k[pos] = self.diag[j]
        self.n = pos + 1
        self.updated = True
        return pos

    cdef void write_column(self, Py_ssize_t pos) noexcept nogil:
        """Member ``pos``'s Gram column from its row (symmetric by construction)."""
        cdef Py_ssize_t i
        for i in range(self.n):
            self.gram[i, pos] = self.gram[pos, i]
        if self.col_due == pos:
            self.col_due = -1

    cdef double member_score(self, Py_ssize_t r, Py_ssize_t c) noexcept nogil:
        """``sum_i alpha[i, c] k(x_i, x_r)`` from the Gram matrix's row ``r``,
        summed in member order (a column due reads its member's row)."""
        cdef Py_ssize_t i, due = self.col_due
        cdef double s = 0.0
        for i in range(self.n):
            s += self.alpha[i, c] * (self.gram[due, r] if i == due else self.gram[r, i])
        return s

    cdef void need_column(self, Py_ssize_t j) noexcept nogil:
        """This round and the later ones of the block will read the block
        row ``j``'s column of ``Kc`` (``j`` joined the members, or a rule
        keeps it)."""
        if self.columns is not None:
            self.columns.need(j)

    cdef void retire(self, Py_ssize_t pos) noexcept nogil:
        """Keep what member ``pos`` contributed to the average while it was one.

        The exact average (``doc/decisions.rst``, Averaging with removals)
        keeps members that leave the support set; the bounded one folds
        them into its pool.
        """
        cdef Py_ssize_t c, a, m = self.n_ret
        self.sync(pos)
        self.ret_idx[m] = self.idx[pos]
        self.ret_col[m] = self.cols[pos]
        self.ret_t[m] = self.t
        for c in range(self.R):
            self.ret_acc[m, c] = self.acc[pos, c]
        if self.dense:
            for a in range(self.d):
                self.ret_X[m, a] = self.Xs[pos, a]
        self.n_ret = m + 1

    cdef void replace_member(self, Py_ssize_t pos, const double* x, const double* coef,
                             double kxx) noexcept nogil:
        """Member ``pos`` becomes the point ``x`` with coefficients ``coef``.

        ``x`` need not be a row of the stream: its index is -1. Dense
        streams on the direct path only, without a kept Gram matrix.
        """
        cdef Py_ssize_t c, a
        if self.average:
            self.retire(pos)
            for c in range(self.R):
                self.acc[pos, c] = 0.0
            self.stamp[pos] = self.clock
        for c in range(self.R):
            self.alpha[pos, c] = coef[c]
        for a in range(self.d):
            self.Xs[pos, a] = x[a]
        self.idx[pos] = -1
        self.born[pos] = self.t
        self.kdiag[pos] = kxx
        self.k[pos] = self.kernel(&self.Xb[self.j, 0], x)
        self.updated = True

    cdef void remove_member(self, Py_ssize_t pos) noexcept nogil:
        """Remove member ``pos``; the last member takes its place."""
        cdef Py_ssize_t i, c, a, last = self.n - 1
        if self.average:
            self.retire(pos)
        for c in range(self.R):
            self.alpha[pos, c] = self.alpha[last, c]
            if self.average:
                self.acc[pos, c] = self.acc[last, c]
        if self.average:
            self.stamp[pos] = self.stamp[last]
        self.idx[pos] = self.idx[last]
        self.born[pos] = self.born[last]
        self.kdiag[pos] = self.kdiag[last]
        self.cols[pos] = self.cols[last]
        self.k[pos] = self.k[last]
        if self.dense:
            for a in range(self.d):
                self.Xs[pos, a] = self.Xs[last, a]
        if self.keep_gram:
            self.journal_gram(pos)
            for i in range(last + 1):
                self.gram[pos, i] = self.gram[last, i]
            # Column ``last`` is row ``last`` (the matrix is symmetric by
            # construction), now row ``pos``: one strided pass, not two. A
            # column due (add_member) is written so, or leaves with its member.
            self.write_column(pos)
            self.gram[pos, pos] = self.gram[last, last]
            if self.col_due == last:
                self.col_due = -1
        self.n = last
        self.updated = True

    cdef void add_rank_one(self, const double* u, const double* dvec) noexcept nogil:
        """``alpha[i, c] += dvec[i] * u[c]`` for every member."""
        cdef Py_ssize_t i, c
        self.sync_all()
        for i in range(self.n):
            for c in range(self.R):
                self.alpha[i, c] += dvec[i] * u[c]
        self.updated = True

    cdef void scale(self, double phi) noexcept nogil:
        """Multiply every coefficient by ``phi``."""
        cdef Py_ssize_t i, c
        self.sync_all()
        for i in range(self.n):
            for c in range(self.R):
                self.alpha[i, c] *= phi
        self.updated = True

    cdef void zero_member(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t c
        if self.average:
            self.sync(i)
        for c in range(self.R):
            self.alpha[i, c] = 0.0
        self.updated = True

    cdef Py_ssize_t oldest(self) noexcept nogil:
        cdef Py_ssize_t i, best = 0
        for i in range(1, self.n):
            if self.born[i] < self.born[best]:
                best = i
        return best

    cdef double tie_tol(self, double rtol) noexcept nogil:
        """``rtol (1 + max_c sum_i |alpha_ic| max_i |k(x_i, x_i)|)``: the size of the hypothesis."""
        cdef Py_ssize_t i, c
        cdef double l1, best = 0.0, kmax = 0.0
        for c in range(self.R):
            l1 = 0.0
            for i in range(self.n):
                l1 += fabs(self.alpha[i, c])
            if l1 > best:
                best = l1
        for i in range(self.n):
            if fabs(self.kdiag[i]) > kmax:
                kmax = fabs(self.kdiag[i])
        return rtol * (1.0 + best * kmax)


cdef class Rule:
    """Update rule of one algorithm (the base class never updates)."""

    def bind(self, dict state):
        """Take views of the rule's arrays in ``state`` (after any regrowth)."""

    cdef double threshold(self, Engine e) noexcept nogil:
        """Largest margin at which the rule may update; NaN freezes the hypothesis."""
        return NAN

    cdef void on_round(self, Engine e, int64_t y) noexcept nogil:
        """Called on every round, before the threshold test."""

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        pass

