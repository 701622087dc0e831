# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The round loop (:class:`Engine`) and the base of the update rules (:class:`Rule`).

Declared here so that the rules, in their modules by family, and the
one-row path ``cimport`` them, as scikit-learn's SGD losses cimport their
base. The documentation of the engine is in ``_engine.pyx``.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport INFINITY
from libc.stdint cimport int64_t

from ._dense_rows cimport BlockColumns, dense_kernel


cdef inline double margin_of(const double* g, int64_t y, Py_ssize_t R,
                             Py_ssize_t* r) noexcept nogil:
    """``y g`` (two classes: ``R = 1``) or ``g_y - max_{c != y} g_c`` with its argmax ``r``."""
    cdef Py_ssize_t c
    cdef double best = -INFINITY
    if R == 1:
        return y * g[0]
    r[0] = -1
    for c in range(R):
        if c != y and (r[0] < 0 or g[c] > best):
            best = g[c]
            r[0] = c
    return g[y] - best


# The rounds whose margins averaged models record for the probability
# scale, and their weights (``_calibration.py`` says why): each costs a
# kernel row against the pool of the average. Stride CAL_STRIDE up to round
# CAL_FIRST, then doubled at each doubling of t: CAL_FIRST / (2 CAL_STRIDE)
# records per octave, O(log t) in all. A recorded round t of stride s
# stands for rounds t - s + 1 .. t (CAL_FIRST is a multiple of 2 CAL_STRIDE,
# so the octaves start on a record), so the weights add up to the rounds
# played, up to the last stride. The rounds depend on t alone: the same
# for any split of the stream into calls.
cdef enum:
    CAL_STRIDE = 4
    CAL_FIRST = 8192


cdef inline int64_t cal_stride(int64_t t) noexcept nogil:
    """The stride of the records in the octave of round ``t >= 1``:
    ``CAL_STRIDE 2^k`` for ``CAL_FIRST 2^(k-1) < t <= CAL_FIRST 2^k``."""
    cdef int64_t q = (t - 1) // CAL_FIRST, s = CAL_STRIDE
    while q > 0:
        q >>= 1
        s <<= 1
    return s


cdef inline int64_t cal_weight(int64_t t) noexcept nogil:
    """The weight of round ``t >= 1``'s margin: its stride where it is
    recorded, 0 where it is not."""
    cdef int64_t s = cal_stride(t)
    return s if t % s == 0 else 0


cdef inline int64_t cal_last(int64_t t) noexcept nogil:
    """The last recorded round up to round ``t >= 0`` (0: none), which
    changes exactly at the recorded rounds."""
    return t - t % cal_stride(t) if t > 0 else 0


cdef class Rule


cdef class Engine:
    # Configuration
    cdef Py_ssize_t R          # coefficient rows: 1 with two classes
    cdef bint binary, average, keep_gram, dense, removes
    cdef double dsq            # squared norm of a unit update direction
    cdef int kind
    cdef double gamma, degree, coef0
    cdef Py_ssize_t d

    # Counters (written back by ``store_counters``)
    cdef public Py_ssize_t n
    cdef public int64_t t, n_mistakes, n_updates
    cdef bint updated
    # Row of the block whose scores were not finite (-1: none)
    cdef public Py_ssize_t bad_row

    # Members, in position order
    cdef double[:, ::1] alpha  # (cap, R)
    cdef double[:, ::1] acc    # (cap, R): running sums of the average
    cdef double[:, ::1] gram   # (cap, cap)
    # The member whose Gram column is not yet written (add_member with
    # column=False; -1: none): its values are its row, and ``k``
    cdef Py_ssize_t col_due
    cdef double[:, ::1] Xs     # (cap, d): rows of the members (dense streams)
    cdef int64_t[::1] idx, born, cols
    cdef double[::1] kdiag, stamp
    # Global scale of the coefficients, and the averaging clock: the sum of
    # the scales of the rounds played (the round count while the scale is 1)
    cdef public double wscale, clock
    cdef double[::1] scale_state

    # The block being played
    cdef bint direct
    cdef const double[:, ::1] Kc   # blocked: K(block, [members at start; block])
    # Makes Kc's values with the block's rows that joined before each round
    # (sparse rbf rows; None: all of Kc holds values)
    cdef BlockColumns columns
    cdef const double[:, ::1] Xb   # dense rows of the block
    cdef const double[::1] diag, w
    cdef const int64_t[::1] yb, index
    cdef Py_ssize_t j, m0

    # The round: kernel row with the members (kept in step with every
    # addition and removal), scores, best other class, unit direction
    cdef double[::1] k, f, v
    # Whether ``k`` already holds the kernel row of the next row played (the
    # one-row path computed it to score that row): the round takes it, once
    cdef bint k_ready
    cdef Py_ssize_t r

    # Margin of each round of the block (the progressive margins)
    cdef double[::1] mout
    # Averaged models: on the rounds the schedule records (``cal_weight``;
    # ``cal_average`` false: none), the current members' part of the scores
    # of the average, before the round's update (``live_average``)
    cdef public bint cal_average
    cdef double[:, ::1] aout

    # Members removed since the last ``clear_retired`` (for the pool of the
    # average), with their round; the loop stops after the round at which
    # they exceed ``ret_limit`` (-1: never), at row ``stopped_at``
    cdef public Py_ssize_t n_ret, ret_limit, stopped_at
    cdef int64_t[::1] ret_idx, ret_col, ret_t
    cdef double[:, ::1] ret_acc, ret_X

    # Undo record of a one-row call (see _one_row_fast.OneRow): the state
    # arrays that a round may change are copied just before the first
    # change, so that a round without an update copies nothing.
    cdef bint ckpt_armed, ckpt_taken
    cdef list ckpt_arrays           # (source, copy) pairs, kept alive here
    cdef Py_ssize_t n_ckpt
    cdef char* ckpt_src[64]
    cdef char* ckpt_dst[64]
    cdef Py_ssize_t ckpt_len[64]
    # Without a copy of the Gram matrix in that record (``jn_on``), the
    # rows and columns a round is about to overwrite are journaled
    # (``journal_gram``): up to ``jn_row.shape[0]`` of them, their positions
    # in ``jn_pos``; beyond, the whole matrix is copied to ``jn_backup``
    # once (``jn_full``), after the journaled changes.
    cdef bint jn_on, jn_full
    cdef Py_ssize_t jn_n
    cdef int64_t jn_pos[4]
    cdef double[:, ::1] jn_row, jn_col
    cdef double* jn_backup

    cdef void reserve_retired(self, Py_ssize_t m)
    cdef void _play(self, Rule rule, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    cdef void checkpoint(self) noexcept nogil
    cdef void journal_gram(self, Py_ssize_t pos) noexcept nogil
    cdef void kernel_row(self) noexcept nogil
    cdef void live_average(self, Py_ssize_t jj) noexcept nogil
    cdef void scores(self) noexcept nogil
    cdef void scale_scores(self) noexcept nogil
    cdef void gathered_scores(self) noexcept nogil
    cdef bint finite_scores(self) noexcept nogil
    cdef double margin(self, int64_t y) noexcept nogil
    cdef void direction(self, int64_t y) noexcept nogil
    cdef void sync_all(self) noexcept nogil
    cdef Py_ssize_t add_member(self, const double* coef, double scale,
                               bint column=*) noexcept nogil
    cdef void write_column(self, Py_ssize_t pos) noexcept nogil
    cdef double member_score(self, Py_ssize_t r, Py_ssize_t c) noexcept nogil
    cdef void need_column(self, Py_ssize_t j) noexcept nogil
    cdef void retire(self, Py_ssize_t pos) noexcept nogil
    cdef void replace_member(self, Py_ssize_t pos, const double* x, const double* coef,
                             double kxx) noexcept nogil
    cdef void remove_member(self, Py_ssize_t pos) noexcept nogil
    cdef void add_rank_one(self, const double* u, const double* dvec) noexcept nogil
    cdef void scale(self, double phi) noexcept nogil
    cdef void zero_member(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t oldest(self) noexcept nogil
    cdef double tie_tol(self, double rtol) noexcept nogil

    cdef inline double kernel(self, const double* x, const double* z) noexcept nogil:
        return dense_kernel(self.kind, x, z, self.d, self.gamma, self.degree, self.coef0)

    cdef inline void sync(self, Py_ssize_t i) noexcept nogil:
        """Bring the running sum of member ``i`` up to the current round."""
        cdef Py_ssize_t c
        cdef double dt = self.clock - self.stamp[i]
        if dt != 0.0:
            for c in range(self.R):
                self.acc[i, c] += self.alpha[i, c] * dt
            self.stamp[i] = self.clock


cdef class Rule:
    # Whether ``on_round`` changes state arrays (then a one-row call's undo
    # record is taken before it, not only before an update).
    cdef bint round_changes_state

    cdef double threshold(self, Engine e) noexcept nogil
    cdef void on_round(self, Engine e, int64_t y) noexcept nogil
    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil
