# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""One round at a time: the compiled part of the one-row path (``_one_row.py``).

A one-row call is a block of one row played by the engine of the blocks
(``_engine.pyx``), with the recorder and the margins of the blocks
(``_margins.pyx``); :class:`OneRow` only keeps, between the calls of a
stream, what a call of many rows builds once per call.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from cpython.dict cimport PyDict_Next, PyDict_SetItem, PyDict_Size
from cpython.exc cimport PyErr_CheckSignals, PyErr_Clear, PyErr_SetInterrupt
from cpython.list cimport PyList_GET_ITEM
from cpython.object cimport PyObject
from libc.math cimport NAN, exp, isfinite
from libc.stdint cimport int64_t
from libc.string cimport memcmp, memcpy

import numpy as np

from ._dense_rows cimport dense_kernel_row, load_event, load_row
from ._engine cimport Engine, Rule, cal_last, cal_weight
from ._margins cimport MarginBins, average_margin, average_scores, fit_scale, log_proba
from ._pool cimport finite_sums

cdef extern from "Python.h":
    PyObject* _get_item_with_error "PyDict_GetItemWithError"(object d, object key)


cdef inline PyObject* get_item(object d, object key) noexcept:
    """``d[key]`` (borrowed) or NULL, as ``PyDict_GetItem`` gives it (an
    error of the lookup is cleared), without the saving and restoring of the
    current exception that ``PyDict_GetItem`` pays on every call: none is
    pending where this module looks up, a dozen times an event."""
    cdef PyObject* value = _get_item_with_error(d, key)
    if value is NULL:
        PyErr_Clear()
    return value


# The rows and columns of the Gram matrix journaled in a round (at most 4):
# a removal and an addition write two; past them the matrix is copied.
GRAM_JOURNAL_ROWS = 4


cdef class OneRow:
    """The Engine and Rule of a dense stream, kept for its one-row calls.

    A one-row call would otherwise pay, per row, for what a call of many
    rows pays once: building the engine and the rule, binding them to the
    state arrays, copying every array for the undo record, and numpy calls
    to record the margin. Here they are bound once, to a row buffer of the
    direct kernel path, and each call writes the row, plays its round
    (:meth:`Engine._play` on a block of one row) and records its margin
    (``MarginBins``, the recorder of the blocks), all in compiled code.

    The object is valid while the state arrays it is bound to are the
    same objects (:meth:`binds`): a regrowth or an undo replaces them, and
    the Python side then builds another. The parameters of the rule are
    fixed at construction (the Python side rebuilds on any change). It is
    never pickled: it is derived from the state.

    ``undo_names``: the state arrays a round may change, copied into the
    undo record just before the round's first change (none if the round
    changes nothing); :meth:`undo` puts back everything of the last
    :meth:`play`, the margin's bin and the counters included.

    ``averaged``: the margin recorded, on the rounds of the stream that the
    schedule of the averaged margins records (``_engine.cal_weight``), is
    the row's margin under the average of the hypotheses so far, the pool's
    part and the current members' (by
    ``_margins.average_margin``, as the blocks compute it), not the online
    one. :meth:`fold` appends the members that left to the pool in place
    while it has room and is not due for compression (``pool_max``
    members); otherwise the Python side brings them (``engine.retired()``)
    into the pool, which replaces state arrays that only Python changes:
    :meth:`rebind` then follows them.

    ``max_direct``: the most members for which the engine takes the direct
    kernel path on a block of one row; ``avg_max_direct``: the most members
    of the average for which the blocks compute a row's kernel values with
    it by the compiled kernel (``_base._kernel_matrix``), compared with the
    pool's members; beyond either,
    :meth:`fits` hands the row to the blocks.
    """

    cdef public Engine engine
    cdef public Rule rule
    cdef dict state
    cdef list names, arrays, copies
    cdef double[:, ::1] xb
    cdef double[::1] wb, db
    cdef int64_t[::1] yb, ib
    cdef int64_t[::1] counters
    cdef double[::1] scale
    cdef MarginBins bins
    cdef double[::1] cal_counts, cal_sums, cal_n
    cdef double[::1] fit_work  # fit_scale's room, allocated on first use
    cdef Py_ssize_t limit, max_direct, avg_max_direct
    # The pool of the average (averaged models): members, running sums, count
    cdef public bint averaged
    cdef int64_t[::1] pool_n
    cdef double[:, ::1] pool_coef  # (capacity, R)
    cdef double[:, ::1] pool_X     # (capacity, d)
    cdef int64_t[::1] pool_idx
    cdef double[::1] avg_k, avg_f
    # The most members the pool holds before it is compressed (fold)
    cdef Py_ssize_t pool_max
    # Undo record of the last fold: the pool's count and the rows it wrote
    cdef Py_ssize_t folded, old_pool_n
    cdef double[:, ::1] old_pool_X, old_pool_coef
    cdef int64_t[::1] old_pool_idx
    # Log-probabilities of the last scores (proba_of_scores)
    cdef double[::1] log_p
    #: Whether the round played recorded its margin (averaged models: the
    #: rounds of ``cal_weight``), and the factor of its weight there (1, or
    #: the stride of an averaged model's record).
    cdef public bint cal_round
    cdef public int64_t cal_stride
    # Undo record of the last play
    cdef public bint active
    # The state arrays of the undo record, and whether the Gram matrix, the
    # last of them, is journaled instead of copied (``Engine.journal_gram``)
    cdef Py_ssize_t n_undo
    cdef bint gram_journal
    cdef int64_t old_counters[4]
    cdef double old_scale[2]
    cdef bint recorded
    cdef Py_ssize_t bin_at, cls_at
    cdef double old_count, old_sum, old_n
    #: Margin of the last round played.
    cdef public double margin
    # The row last scored (score_dict, average_dict) and what its kernel rows
    # were computed with: the members' count, the round count and the pool's
    # count then. A round of the same row that follows, with these unchanged
    # and no round, undo or rebinding in between, takes the engine's row
    # (``Engine.k_ready``) and the pool's (``avg_k``) instead of computing
    # them again (progressive validation: predict, then learn, each event).
    cdef double[::1] seen_x
    #: Whether a scored row is kept for the round that may follow.
    cdef readonly bint seen
    cdef bint seen_pool
    cdef int64_t seen_n, seen_t, seen_m
    # What :meth:`learn` checks before it plays an event (:meth:`guard`):
    # the parameters (names, values), the classes, the random generator and
    # the forced path the object was built for, the kernel's own ``diag``,
    # where the forced path is read (``_base``'s globals), and the cache
    # of the published attributes (an id -> entry dict) that a call drops.
    cdef public bint guarded
    cdef tuple g_names, g_values
    cdef object g_classes, g_rng, g_force, g_diag
    cdef dict g_globals, g_published
    cdef bint g_binary
    cdef double g_kxx
    #: The probability scale of the bins after ``scale_round`` rounds (the
    #: last recorded round for averaged models, ``cal_last``; -1: none yet),
    #: which change only with the rounds recorded (``_OneRowPath.proba_scale``).
    cdef public double scale_value
    cdef public int64_t scale_round
    # Where :meth:`proba_event` refits the scale itself (:meth:`refit_scale`):
    # the entries of the caches of the published attributes and of the last
    # scales (``WeakCache.entries``), the Python functions that make an entry
    # where there is none, and the smallest scale.
    cdef public bint refits
    cdef dict r_published, r_hints
    cdef object r_new_published, r_hint_cache
    cdef double r_min_scale
    #: Tests only: :meth:`learn` fails as an interrupt would after its step
    #: ``interrupt_at`` (1: the round, 2: the fold, 3: the test of the average),
    #: or (4) a SIGINT arrives after its last step that can fail.
    cdef public int interrupt_at

    def __init__(self, Engine engine, Rule rule, dict state, list undo_names,
                 Py_ssize_t limit, Py_ssize_t max_direct, Py_ssize_t avg_max_direct,
                 MarginBins bins, bint averaged=False,
                 Py_ssize_t pool_max=-1):
        cdef Py_ssize_t i, n_ret
        self.engine = engine
        self.rule = rule
        self.state = state
        self.averaged = averaged
        self.pool_max = pool_max
        engine.cal_average = averaged
        self.limit = limit
        self.max_direct = max_direct
        self.avg_max_direct = avg_max_direct
        self.bins = bins
        self.log_p = np.zeros(max(2, engine.R))
        self.xb = np.zeros((1, engine.d))
        self.seen_x = np.zeros(engine.d)
        self.seen = False
        self.scale_round = -1
        self.wb = np.zeros(1)
        self.db = np.zeros(1)
        self.yb = np.zeros(1, dtype=np.int64)
        self.ib = np.zeros(1, dtype=np.int64)
        self.counters = state["counters"]
        self.scale = state["scale"]
        self.rebind()
        engine.bind(state)
        rule.bind(state)
        engine.set_block(self.yb, self.wb, self.db, self.ib, Kc=None, Xb=self.xb)
        # A round removes at most every member and the row (and replaces one).
        n_ret = engine.alpha.shape[0] + 2
        engine.reserve_retired(n_ret)
        self.folded = 0
        if averaged:
            self.old_pool_X = np.zeros((n_ret, engine.d))
            self.old_pool_coef = np.zeros((n_ret, engine.R))
            self.old_pool_idx = np.zeros(n_ret, dtype=np.int64)
        if len(undo_names) > 64:
            raise ValueError("Too many state arrays for the undo record.")
        # A round changes a few rows and columns of a kept Gram matrix, the
        # largest array of the record (budget^2): they are journaled, and
        # the matrix is the last array, left out of the copy.
        self.gram_journal = engine.keep_gram and "gram" in undo_names
        if self.gram_journal:
            undo_names = [name for name in undo_names if name != "gram"] + ["gram"]
            rows = min(GRAM_JOURNAL_ROWS, 4)  # Engine.jn_pos holds 4
            engine.jn_row = np.zeros((rows, state["gram"].shape[0]))
            engine.jn_col = np.zeros((rows, state["gram"].shape[0]))
        self.copies = []
        for i, name in enumerate(undo_names):
            src = state[name]
            if not src.flags.c_contiguous:
                raise ValueError(f"State array {name!r} is not contiguous.")
            dst = np.empty_like(src)
            self.copies.append((src, dst))
            engine.ckpt_src[i] = <char*><size_t>src.ctypes.data
            engine.ckpt_dst[i] = <char*><size_t>dst.ctypes.data
            engine.ckpt_len[i] = src.nbytes
        self.n_undo = len(undo_names)
        engine.n_ckpt = self.n_undo
        engine.ckpt_arrays = self.copies
        if self.gram_journal:
            # Where the journal copies the whole matrix past its rows.
            engine.jn_backup = <double*><size_t>self.copies[self.n_undo - 1][1].ctypes.data
        self.active = False

    def rebind(self):
        """Follow the arrays of the state that only Python changes (the bins,
        the pool), replaced after a round."""
        state = self.state
        self.seen = False  # the pool's arrays may be new ones
        self.names = list(state)
        self.arrays = [state[name] for name in self.names]
        self.cal_counts = state["cal_counts"].reshape(-1)
        self.cal_sums = state["cal_sums"].reshape(-1)
        self.cal_n = state["cal_n"]
        if self.averaged:
            self.pool_n = state["pool_n"]
            self.pool_coef = state["pool_coef"]
            self.pool_X = state["pool_X"]
            self.pool_idx = state["pool_idx"]
            m = self.pool_X.shape[0]
            if self.avg_k is None or self.avg_k.shape[0] < m:
                self.avg_k = np.zeros(max(m, 1))
            if self.avg_f.shape[0] != self.engine.R:  # not allocated yet
                self.avg_f = np.zeros(self.engine.R)

    def binds(self, dict state):
        """Whether ``state`` holds exactly the arrays this object is bound to."""
        return self._binds(state)

    cdef bint _binds(self, object state) noexcept:
        # The entries in the order of the dict, without a lookup by name (two
        # calls of each event ask): as many entries, each the (key, array)
        # recorded at its position, are exactly the arrays recorded. A dict
        # whose entries moved (deleted, inserted again) is refused, and the
        # caller binds another object to it.
        cdef Py_ssize_t pos = 0, i = 0, n = len(self.names)
        cdef PyObject* key
        cdef PyObject* value
        if state is not self.state or PyDict_Size(state) != n:
            return False
        while PyDict_Next(state, &pos, &key, &value):
            if (
                i == n
                or key != PyList_GET_ITEM(self.names, i)
                or value != PyList_GET_ITEM(self.arrays, i)
            ):
                return False
            i += 1
        return i == n

    def fits(self):
        """Whether the next round needs neither more room nor the blocked path."""
        return self._fits()

    cdef bint _fits(self) noexcept:
        cdef Py_ssize_t n = self.counters[0], need = n + 1
        if self.limit >= 0 and need > self.limit:
            need = self.limit
        if self.averaged and self.pool_n[0] > self.avg_max_direct:
            # A pool whose kernel values the blocks take from BLAS.
            return False
        return need <= self.engine.alpha.shape[0] and n <= self.max_direct

    def load(self, const double[:, :] X):
        """Copy the one row of ``X``; False if it is not finite (nothing is played)."""
        return load_row(self.xb, X)

    def load_dict(self, dict x, dict index):
        """Copy the features of ``x`` into the row at the columns ``index``
        names (0 where missing, keys not in ``index`` ignored); False if a
        value is not finite. Raises (TypeError...) on a value that is not a
        number, which the caller hands to the full conversion."""
        return load_event(self.xb, x, index)

    @property
    def row(self):
        """The row buffer, shape (1, n_features) (read by the kernel's ``diag``)."""
        return np.asarray(self.xb)

    cdef void remember(self, bint pool) noexcept:
        """Keep the loaded row as the one whose kernel rows are in the
        engine's ``k`` and, if ``pool``, in ``avg_k``."""
        memcpy(&self.seen_x[0], &self.xb[0, 0], self.engine.d * sizeof(double))
        self.seen = True
        self.seen_pool = pool
        self.seen_n = self.counters[0]
        self.seen_t = self.counters[1]
        self.seen_m = self.pool_n[0] if self.averaged else 0

    cdef bint recall(self) noexcept:
        """Whether the loaded row is the one remembered, with the members,
        the rounds and the pool unchanged since; forgets it either way (the
        round that follows changes ``k``)."""
        if not self.seen:
            return False
        self.seen = False
        return (
            self.counters[0] == self.seen_n
            and self.counters[1] == self.seen_t
            and (self.pool_n[0] if self.averaged else 0) == self.seen_m
            and memcmp(&self.seen_x[0], &self.xb[0, 0], self.engine.d * sizeof(double)) == 0
        )

    cdef void sync(self) noexcept:
        """The engine's counters from the state (other calls may have played)."""
        cdef Engine e = self.engine
        e.n = self.counters[0]
        e.t = self.counters[1]
        e.n_mistakes = self.counters[2]
        e.n_updates = self.counters[3]
        e.wscale = self.scale[0]
        e.clock = self.scale[1]

    def begin(self, bint eager):
        """Start the undo record of a call: :meth:`undo` puts back what
        follows. ``eager``: copy the state arrays now (the caller changes
        them before :meth:`play`), not just before the round's first change.
        """
        self._begin(eager)

    cdef void _begin(self, bint eager) noexcept:
        cdef Engine e = self.engine
        cdef Py_ssize_t i
        self.active = True
        if eager:
            # The rule's Python hooks run before the round: they may change
            # the members whose kernel row was kept.
            self.seen = False
        self.recorded = False
        self.folded = 0
        for i in range(4):
            self.old_counters[i] = self.counters[i]
        self.old_scale[0] = self.scale[0]
        self.old_scale[1] = self.scale[1]
        # Python hooks (``eager``) may change the Gram matrix themselves: it
        # is copied then, else journaled.
        e.jn_on = self.gram_journal and not eager
        e.jn_n = 0
        e.jn_full = False
        e.n_ckpt = self.n_undo - 1 if e.jn_on else self.n_undo
        e.ckpt_taken = False
        e.ckpt_armed = e.n_ckpt > 0
        if eager and e.ckpt_armed:
            e.checkpoint()

    def play(self, int64_t y, double w, double kxx, int64_t index, bint record):
        """Play the loaded row as the next round of the stream (after :meth:`begin`).

        ``y``: -1/+1 or the class index; ``w`` its weight (positive);
        ``kxx``: ``k(x, x)``; ``index``: its number in the stream.
        ``record``: add its margin to the bins of the probabilities (as
        ``_calibration.record_margins``). Returns 0, or 2 if the scores were
        not finite (nothing changed), 3 if the coefficients are not finite
        after the update, 4 if the scores under the average are not (for
        both, call :meth:`undo`).
        """
        if not self.active:
            raise RuntimeError("play without begin")
        return self._round(y, w, kxx, index, record)

    cdef int _round(self, int64_t y, double w, double kxx, int64_t index, bint record) noexcept:
        cdef Engine e = self.engine
        cdef Py_ssize_t i, c, R = e.R, flat, cls
        cdef double margin
        cdef bint recording = record, kept
        cdef int64_t stride
        kept = self.recall()
        self.sync()
        self.yb[0] = y
        self.wb[0] = w
        self.db[0] = kxx
        self.ib[0] = index
        e.bad_row = -1
        e.n_ret = 0
        e.k_ready = kept
        with nogil:
            e._play(self.rule, 0, 1)
        e.jn_on = False
        e.k_ready = False
        e.ckpt_armed = False
        if e.bad_row >= 0:
            return 2
        if e.ckpt_taken:
            # The coefficients in their true units: a finite stored value
            # times a global scale above 1 may still overflow.
            for i in range(e.n):
                for c in range(R):
                    if not isfinite(e.alpha[i, c] * e.wscale):
                        return 3
        self.counters[0] = e.n
        self.counters[1] = e.t
        self.counters[2] = e.n_mistakes
        self.counters[3] = e.n_updates
        self.scale[0] = e.wscale
        self.scale[1] = e.clock
        margin = e.mout[0]
        self.cal_round = True
        self.cal_stride = 1
        if self.averaged:
            stride = cal_weight(e.t)
            self.cal_round = stride > 0
            self.cal_stride = stride
            recording = record and self.cal_round
            if self.cal_round:
                margin = self.average_margin(y, kept and self.seen_pool)
                if not isfinite(margin):
                    return 4
                w = w * stride
        self.margin = margin
        if recording:
            # As record_margins records the round (the undo record keeps
            # what it changes: one bin and the total of the class).
            cls = (y > 0) if R == 1 else y
            flat = self.bins.flat_bin(margin, cls)
            self.bin_at = flat
            self.cls_at = cls
            self.old_count = self.cal_counts[flat]
            self.old_sum = self.cal_sums[flat]
            self.old_n = self.cal_n[cls]
            self.bins.add_at(&self.cal_counts[0], &self.cal_sums[0], &self.cal_n[0], flat, cls,
                             margin, w, <double>e.t)
            self.recorded = True
        return 0

    cdef double average_margin(self, int64_t y, bint kept) noexcept:
        """Margin of the loaded row under the average of the rounds so far
        (NaN if a score is not finite): the pool's kernel row as
        ``_dense_rows.kernel_block`` gives it (``kept``: already in
        ``avg_k``), the current members' part from the round, then the
        margin of the blocks."""
        cdef Engine e = self.engine
        cdef Py_ssize_t m = self.pool_n[0]
        if m > 0 and not kept:
            dense_kernel_row(e.kind, &self.xb[0, 0], &self.pool_X[0, 0], m, e.d,
                             e.gamma, e.degree, e.coef0, &self.avg_k[0])
        return average_margin(self.pool_coef, &self.avg_k[0], m, &e.aout[0, 0], <double>e.t,
                              y, &self.avg_f[0])

    def fold(self):
        """Append the members that the round removed (the engine's record of
        :meth:`Engine.retired`) to the pool of the average, as
        ``_AveragingMixin._fold_retired`` appends them, and forget them.

        Only where the pool has room and is not due for compression (more
        than ``pool_max`` members): then the pool's arrays stay the same
        objects, and :meth:`undo` puts back its count and the rows written.
        Returns False, with nothing changed, where it is due or full: the
        caller then folds them the Python way.
        """
        return self._fold()

    cdef bint _fold(self) noexcept:
        cdef Engine e = self.engine
        cdef Py_ssize_t n, m = e.n_ret, i, j, c, a
        if m == 0:
            return True
        n = self.pool_n[0]
        if n + m > self.pool_X.shape[0] or (self.pool_max >= 0 and n + m > self.pool_max):
            return False
        for i in range(m):
            j = n + i
            self.old_pool_idx[i] = self.pool_idx[j]
            self.pool_idx[j] = e.ret_idx[i]
            for c in range(e.R):
                self.old_pool_coef[i, c] = self.pool_coef[j, c]
                self.pool_coef[j, c] = e.ret_acc[i, c]
            for a in range(e.d):
                self.old_pool_X[i, a] = self.pool_X[j, a]
                self.pool_X[j, a] = e.ret_X[i, a]
        self.old_pool_n = n
        self.folded = m
        self.pool_n[0] = n + m
        e.n_ret = 0
        return True

    def guard(self, tuple names, tuple values, object classes, object rng, object force,
              dict globals_, object diag, bint binary, double kxx, dict published):
        """Let :meth:`learn` play events of an estimator whose parameters
        ``names`` are the objects ``values``, whose ``classes_`` and ``_rng``
        are ``classes`` and ``rng``, whose kernel's class has ``diag`` (its
        ``k(x, x)`` is then ``kxx`` for every row) while ``globals_``'s
        ``_FORCE_PATH`` equals ``force``; ``binary``: two classes (the rounds
        take -1/+1); ``published``: the id-keyed cache of the published
        attributes. Only for a stream whose rounds need no Python: no hooks
        of the rule, the compiled recorder and fold, no class weights."""
        self.g_names = names
        self.g_values = values
        self.g_classes = classes
        self.g_rng = rng
        self.g_force = force
        self.g_globals = globals_
        self.g_diag = diag
        self.g_binary = binary
        self.g_kxx = kxx
        self.g_published = published
        self.guarded = True

    cdef bint valid_for(self, dict attrs):
        """Whether the estimator of ``__dict__`` ``attrs`` is the stream
        guarded, unchanged (:meth:`guard`), with no feature names."""
        cdef PyObject* value
        cdef object kernel
        if not self.guarded or get_item(attrs, "feature_names_in_") is not NULL:
            return False
        value = get_item(attrs, "_state")
        if value is NULL or not self._binds(<object>value):
            return False
        if not same_entries(attrs, self.g_names, self.g_values):
            return False
        value = get_item(attrs, "classes_")
        if value is NULL or value != <PyObject*>self.g_classes:
            return False
        value = get_item(attrs, "_rng")
        if value is NULL or value != <PyObject*>self.g_rng:
            return False
        value = get_item(self.g_globals, "_FORCE_PATH")
        if value is NULL or not (value == <PyObject*>self.g_force or <object>value == self.g_force):
            return False
        value = get_item(attrs, "_kernel")
        if value is NULL:
            return False
        kernel = <object>value
        return getattr(type(kernel), "diag", None) is self.g_diag

    def learn(self, object est, dict x, dict index, int64_t label):
        """River's ``learn_one``: the event ``x`` (as :meth:`load_dict`
        loads it) of class index ``label`` played as the next one-row call
        of ``est``, whole, in compiled code, where the stream is the one
        guarded (:meth:`guard`).

        The steps of ``_OneRowPath.play`` for a stream whose round needs no
        Python: the round and its margin, the fold, the test of the
        average, then the estimator's ``_n_seen``, ``n_iter_`` and
        ``n_mistakes_`` and its published attributes dropped. No Python
        code runs between the first change and the last, so that no
        interrupt can land in between; a step that fails undoes the round.

        Returns 0 (played); -1: not played, nothing changed (the event, the
        stream or the round needs the general path: a value that is not a
        finite number, more room, a pool to grow or compress); 2, 3 or 4
        (as :meth:`play`) or 5 (the average is not finite): not played,
        undone, the caller raises.
        """
        return self._learn(est, x, index, label)

    cdef int _learn(self, object est, dict x, dict index, int64_t label) except? -9:
        cdef dict attrs = est.__dict__
        cdef PyObject* value
        cdef int64_t index_, y
        cdef int code
        cdef object n_seen, n_mistakes, key, dropped = None
        cdef PyObject* entry
        cdef Engine e = self.engine
        if not self.valid_for(attrs):
            return -1
        value = get_item(attrs, "_n_seen")
        if value is NULL or type(<object>value) is not int:
            return -1
        index_ = <object>value
        try:
            if not load_event(self.xb, x, index):
                return -1
        except (TypeError, ValueError, OverflowError):
            return -1
        if not self._fits():
            return -1
        # Everything the last step sets, made before the first change.
        n_seen = index_ + 1
        key = id(est)
        # The published attributes are dropped by an empty cache in their
        # entry, whose weak reference is kept: the next refit of the scale
        # (published_scale) then finds an entry, where making one costs a
        # weak reference and Python calls.
        entry = get_item(self.g_published, key)
        if entry is not NULL and (<tuple><object>entry)[1]:
            dropped = ((<tuple><object>entry)[0], {})
        y = (2 * label - 1) if self.g_binary else label
        self._begin(False)
        code = self._round(y, 1.0, self.g_kxx, index_, True)
        if code == 0 and self.interrupt_at == 1:
            code = -2
        if code == 0 and self.averaged:
            if not self._fold():
                code = -1  # a pool to grow or compress: Python's
            elif self.interrupt_at == 2:
                code = -2
            elif not finite_sums(e.acc, e.alpha, e.stamp, e.clock, e.n, self.pool_coef,
                                 self.pool_n[0]):
                code = 5
            elif self.interrupt_at == 3:
                code = -2
        if code:
            self._undo()
            if code == -2:
                raise KeyboardInterrupt
            return code
        try:
            n_mistakes = self.counters[2]  # (may fail: no memory for an int)
            if self.interrupt_at == 4:
                PyErr_SetInterrupt()
            # Python runs a signal's handler only between bytecodes: a Ctrl-C
            # that came during the call would raise just after it returns,
            # the event learnt. Its handler runs here instead, while the call
            # can still be undone.
            PyErr_CheckSignals()
        except BaseException:
            self._undo()
            raise
        PyDict_SetItem(attrs, "_n_seen", n_seen)
        PyDict_SetItem(attrs, "n_iter_", 1)
        PyDict_SetItem(attrs, "n_mistakes_", n_mistakes)
        if dropped is not None:
            PyDict_SetItem(self.g_published, key, dropped)
        self.active = False
        return 0

    def average_finite(self):
        """Whether the sums of the average are finite after the round
        (``_AveragingMixin._average_is_finite`` on the arrays bound here)."""
        cdef Engine e = self.engine
        return finite_sums(e.acc, e.alpha, e.stamp, e.clock, e.n, self.pool_coef, self.pool_n[0])

    def undo(self):
        """Put back everything the last :meth:`play` changed (nothing if none is active)."""
        self._undo()

    cdef void _undo(self) noexcept:
        cdef Engine e = self.engine
        cdef Py_ssize_t i, c, a, n
        self.seen = False
        if not self.active:
            return
        if e.ckpt_taken:
            for i in range(e.n_ckpt):
                memcpy(e.ckpt_src[i], e.ckpt_dst[i], e.ckpt_len[i])
            e.ckpt_taken = False
        self.undo_gram()
        for i in range(4):
            self.counters[i] = self.old_counters[i]
        self.scale[0] = self.old_scale[0]
        self.scale[1] = self.old_scale[1]
        if self.folded:
            n = self.old_pool_n
            for i in range(self.folded):
                self.pool_idx[n + i] = self.old_pool_idx[i]
                for c in range(e.R):
                    self.pool_coef[n + i, c] = self.old_pool_coef[i, c]
                for a in range(e.d):
                    self.pool_X[n + i, a] = self.old_pool_X[i, a]
            self.pool_n[0] = n
            self.folded = 0
        if self.recorded:
            self.cal_counts[self.bin_at] = self.old_count
            self.cal_sums[self.bin_at] = self.old_sum
            self.cal_n[self.cls_at] = self.old_n
            self.recorded = False
        self.active = False

    cdef void undo_gram(self) noexcept:
        """Put back the Gram matrix from the journal of the round: the copy
        taken past the journal's rows, if any, then each journaled row and
        column, the last first."""
        cdef Engine e = self.engine
        cdef Py_ssize_t i, m, pos, cap
        e.jn_on = False
        if e.jn_n == 0 and not e.jn_full:
            return
        cap = e.gram.shape[0]
        if e.jn_full:
            memcpy(&e.gram[0, 0], e.jn_backup, cap * cap * sizeof(double))
        for m in range(e.jn_n - 1, -1, -1):
            pos = e.jn_pos[m]
            for i in range(cap):
                e.gram[i, pos] = e.jn_col[m, i]
                e.gram[pos, i] = e.jn_row[m, i]
        e.jn_n = 0
        e.jn_full = False

    @property
    def rounds(self):
        """Rounds of the stream played (the state's count)."""
        return self.counters[1]

    def refit_scale(self, dict published, object new_published, dict hints, object hint_cache,
                    double min_scale):
        """Let :meth:`proba_event` refit the scale when the rounds recorded
        changed it, as ``_PublishMixin._proba_scale`` refits it with
        :meth:`fit_scale`: kept in the cache of the published attributes
        (``published``: its entries; ``new_published(est)`` makes an entry),
        fitted from the last scale of the stream (``hints``, ``hint_cache``:
        ``_calibration.SCALE_HINTS``'s entries and itself), which it becomes.
        Only for an estimator whose ``proba_scale_`` is that of the mixin."""
        self.r_published = published
        self.r_new_published = new_published
        self.r_hints = hints
        self.r_hint_cache = hint_cache
        self.r_min_scale = min_scale
        self.refits = True

    cdef double published_scale(self, object est) except? -1.0:
        """``est.proba_scale_``, by the steps of ``_PublishMixin._proba_scale``
        (:meth:`refit_scale`), without the Python calls of a refit (a
        quarter of the events of an averaged stream refit it)."""
        cdef object key = id(est), cache, value
        cdef PyObject* entry = get_item(self.r_published, key)
        cdef double scale, start = NAN
        cache = self.r_new_published(est) if entry is NULL else (<tuple><object>entry)[1]
        value = cache.get("proba_scale_")
        if value is not None:
            return value
        entry = get_item(self.r_hints, key)
        if entry is not NULL:
            start = (<tuple><object>entry)[1]
        scale = self._fit_scale(start, self.r_min_scale)
        cache["proba_scale_"] = scale
        if entry is NULL:
            self.r_hint_cache[est] = scale
        else:  # WeakCache.__setitem__ on an entry: its weak reference kept
            self.r_hints[key] = ((<tuple><object>entry)[0], scale)
        return scale

    # The methods that a call of an event runs are C functions here (and
    # the Python methods below, where the Python side calls them too,
    # wrappers): a Python method call is a lookup by name and an argument
    # parse, several times an event.
    cdef object proba_event(self, object est, dict x, dict index, list labels):
        """River's ``predict_proba_one`` of ``est``: the probabilities of the
        event ``x`` (see :meth:`proba_of_scores`; with ``labels``, river's
        dict of them) with the scale of the rounds played (``scale_value``;
        refitted here if they changed it and :meth:`refit_scale` allows),
        where the stream's state is the one bound and the scores are finite;
        else None (the Python side decides, and fits the scale)."""
        cdef dict attrs = est.__dict__
        cdef PyObject* value
        cdef int64_t t = self.counters[1]
        cdef object scores
        if self.averaged:
            t = cal_last(t)
        if (
            (t != self.scale_round and not self.refits)
            or get_item(attrs, "feature_names_in_") is not NULL
        ):
            return None
        value = get_item(attrs, "_state")
        if value is NULL or not self._binds(<object>value):
            return None
        value = get_item(attrs, "_conversion")
        if value is NULL:
            return None
        conversion = <object>value
        try:
            if conversion == "last":
                scores = self._score_dict(x, index)
            elif conversion == "average" or conversion == "exact":
                scores = self._average_dict(x, index)
            else:
                return None
        except (TypeError, ValueError, OverflowError):
            return None
        if scores is None:
            return None
        if t != self.scale_round:
            self.scale_value = self.published_scale(est)
            self.scale_round = t
        return self._proba_of_scores(self.scale_value, labels)

    def average_dict(self, dict x, dict index):
        """Scores of the event ``x`` under the average of the rounds played:
        the pool and the current members with their running sums (the
        average that ``support_vectors_`` and ``dual_coef_`` bring within
        the budget), in ``O((pool + members) n_features)``, as the rounds
        compute it. As :meth:`score_dict`: a float for two classes, else a
        list; None if a value or a score is not finite."""
        return self._average_dict(x, index)

    cdef object _average_dict(self, dict x, dict index):
        cdef Engine e = self.engine
        cdef Py_ssize_t c, m
        self.seen = False
        if not load_event(self.xb, x, index):
            return None
        self.sync()
        if e.t == 0:
            for c in range(e.R):
                e.f[c] = 0.0
        else:
            e.j = 0
            e.kernel_row()
            e.live_average(0)
            m = self.pool_n[0]
            if m > 0:
                dense_kernel_row(e.kind, &self.xb[0, 0], &self.pool_X[0, 0], m, e.d,
                                 e.gamma, e.degree, e.coef0, &self.avg_k[0])
            if not average_scores(self.pool_coef, &self.avg_k[0], m, &e.aout[0, 0],
                                  <double>e.t, &e.f[0]):
                return None
            self.remember(True)
        if e.R == 1:
            return e.f[0]
        return [e.f[c] for c in range(e.R)]

    def proba_of_scores(self, double scale):
        """The probabilities of the scores just computed (by :meth:`score_dict`
        or :meth:`average_dict`) with the probability scale ``scale``, as
        ``predict_proba`` computes them (``_margins.log_proba``), as a list."""
        return self._proba_of_scores(scale, None)

    cdef object _proba_of_scores(self, double scale, list labels):
        """:meth:`proba_of_scores`, or with ``labels`` (one per class) the
        dict of each label's probability (river's ``predict_proba_one``)."""
        cdef Engine e = self.engine
        cdef Py_ssize_t c, n = 2 if e.R == 1 else e.R
        cdef dict out
        for c in range(e.R):
            e.v[c] = scale * e.f[c]
        log_proba(&e.v[0], e.R, &self.log_p[0])
        if labels is None:
            return [exp(self.log_p[c]) for c in range(n)]
        if len(labels) != n:
            raise ValueError(f"{n} labels expected; got {len(labels)}.")
        out = {}
        for c in range(n):
            out[labels[c]] = exp(self.log_p[c])
        return out

    def fit_scale(self, double start, double min_scale):
        """The probability scale fitted to the bins bound (as
        ``_margins.fit_temperature`` fits it, without its conversions)."""
        return self._fit_scale(start, min_scale)

    cdef double _fit_scale(self, double start, double min_scale) except? -1.0:
        cdef Py_ssize_t C = self.cal_n.shape[0], B = self.cal_counts.shape[0] // max(C, 1)
        if self.fit_work is None or self.fit_work.shape[0] < 3 * C * B:
            self.fit_work = np.empty(max(3 * C * B, 1))
        if C * B == 0:
            return min_scale
        return fit_scale(&self.cal_counts[0], &self.cal_sums[0], &self.cal_n[0], C, B, start,
                         min_scale, &self.fit_work[0])

    def score_dict(self, dict x, dict index):
        """Scores of the event ``x`` (loaded as :meth:`load_dict` loads it)
        under the current hypothesis, in the engine's arithmetic: the scores
        its next round would compute. A float for two classes, else a list;
        None if a value or a score is not finite."""
        return self._score_dict(x, index)

    cdef object _score_dict(self, dict x, dict index):
        cdef Engine e = self.engine
        cdef Py_ssize_t c
        self.seen = False
        if not load_event(self.xb, x, index):
            return None
        self.sync()
        e.j = 0
        e.kernel_row()
        e.scores()
        if not e.finite_scores():
            return None
        self.remember(False)
        if e.R == 1:
            return e.f[0]
        return [e.f[c] for c in range(e.R)]


def learn_guarded(dict paths, object est, dict x, dict index, int64_t label):
    """:meth:`OneRow.learn` of the one-row path of ``est`` in ``paths`` (a
    ``WeakCache``'s entries: id -> (weak reference, path)), if it has a
    guarded one; else -1, nothing done."""
    cdef PyObject* entry = get_item(paths, id(est))
    if entry is NULL:
        return -1
    fast = getattr((<object>entry)[1], "fast", None)
    if type(fast) is not OneRow:
        return -1
    return (<OneRow>fast)._learn(est, x, index, label)


def proba_guarded(dict paths, object est, dict x, dict index, list labels=None):
    """:meth:`OneRow.proba_event` of the one-row path of ``est`` in
    ``paths`` (as :func:`learn_guarded`), or None."""
    cdef PyObject* entry = get_item(paths, id(est))
    if entry is NULL:
        return None
    fast = getattr((<object>entry)[1], "fast", None)
    if type(fast) is not OneRow:
        return None
    return (<OneRow>fast).proba_event(est, x, index, labels)


def same_entries(dict attrs, tuple names, tuple values):
    """Whether the entries ``names`` of ``attrs`` (an instance's ``__dict__``)
    are the objects ``values``, position by position; False if one is missing.

    The one-row path's test that an estimator's parameters are unchanged,
    without building the tuple of their values (every one-row call asks it).
    """
    cdef Py_ssize_t i
    cdef PyObject* value
    if len(names) != len(values):
        return False
    for i in range(len(names)):
        value = get_item(attrs, names[i])
        if value is NULL or value != <PyObject*>values[i]:
            return False
    return True
