"""One row at a time: the compiled one-row path of a stream.

A one-row call (``partial_fit`` with one row, river's ``learn_one``) is the
block path of ``BaseKernelOnlineClassifier._play`` with a block of one row,
plus caches that make it cheap:

- the engine and the rule of the stream, bound once to its state arrays and
  to a row buffer (:class:`~sklearn_budget._one_row_fast.OneRow`), kept
  beside the estimator while its parameters and its state are the same
  objects (:class:`_OneRowPath`);
- an undo record that copies the state arrays only when the round is about
  to change them, and keeps of the pool of the average only the rows the
  round appends (``OneRow.fold``) and of the estimator's ``__dict__`` only
  the attributes the call sets;
- validation by a few tests of input that needs no conversion; anything
  else takes the full path, and its messages;
- for river's ``learn_one``, where no Python takes part in the round, the
  whole call in one compiled call (``OneRow.learn``: the checks of the
  stream, the round, the fold, the counters, with no Python between the
  first change and the last), and for ``predict_proba_one``, the scale
  refitted there when the rounds recorded changed it (``OneRow.proba_event``).

The round is played by the engine of the blocks (``_engine.pyx``), its margin
recorded by the recorder of the blocks (``_calibration.MARGIN_BINS``), under
the averaged hypothesis as the blocks compute it
(``_margins.average_margin``), and river's probabilities are those of
``predict_proba`` (``_margins.log_proba``): the model, the bins and the
probabilities are those of a call of many rows, to the last bit.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import sys
from functools import partial

import numpy as np

# _base imports this module: its names are read when a path is used, not
# when this module is imported.
from . import _base, _rounds, _transaction, _validation
from ._averaging import _AveragingMixin
from ._calibration import _MIN_SCALE, MARGIN_BINS, SCALE_HINTS
from ._engine import Engine
from ._kernels import Kernel, _nonfinite_scores
from ._margins import last_recorded
from ._one_row_fast import OneRow, learn_guarded, proba_guarded, same_entries
from ._publish import _PublishMixin
from ._random import generator_state
from ._rounds import _max_direct_members
from ._stream import _parameter_values

# Kernels whose k(x, x) is 1 for every row (``Kernel.diag``): a one-row
# call need not ask, unless ``diag`` is not Kernel's own (a subclass's, or
# a stand-in that counts or fails its calls).
_UNIT_DIAGONAL = ("rbf", "laplacian")
_KERNEL_DIAG = Kernel.diag

# The compiled one-row path of each estimator (_OneRowPath, or _Uncovered
# where there is none), derived from its state and kept beside it, never
# pickled.
_ONE_ROW = _transaction.WeakCache()
# Its entries, as the compiled river learn_one reads them (learn_guarded).
_PATHS = _ONE_ROW.entries


def forget(estimator):
    """Let the one-row path of ``estimator`` go (a new stream, or state
    arrays replaced: it holds the old ones)."""
    _ONE_ROW.pop(estimator, None)


def _hooks(estimator, rule):
    """How the one-row path plays the rule's own work of a block.

    ``"none"``: there is none (the hooks are the base class's);
    ``"generator"``: the rule draws from ``_rng`` itself (it has
    ``set_generator``, and ``_rng`` is a ``RandomState`` on MT19937, whose
    bit generator it reads); ``"python"``: call ``_prepare_block``,
    ``_block_start`` and ``_block_end`` around the round.
    """
    base, cls = _base.BaseKernelOnlineClassifier, type(estimator)
    if all(
        getattr(cls, name) is getattr(base, name)
        for name in ("_prepare_block", "_block_start", "_block_end")
    ):
        return "none"
    if hasattr(rule, "set_generator") and generator_state(estimator._rng) is not None:
        return "generator"
    return "python"


# ----------------------------------------------------------------------
# The undo steps of a one-row call
# ----------------------------------------------------------------------
# A step is one of these functions bound (functools.partial) to what it
# puts back, registered on the call's transaction just before the change it
# undoes (``Transaction.on_undo``). Each restores what that change alone
# touches; the transaction runs them from the last to the first, then puts
# back the estimator's attributes and the lazily recorded arrays.
# What a one-row call sets in the estimator's ``__dict__`` (its transaction
# records these alone) where Python code of the rule or of a subclass plays no
# part in the round; the state dict itself is changed in place.
_ATTRIBUTES = ("_state", "_n_seen", "n_iter_", "n_mistakes_")


def _restore_arrays(state, before):
    """The arrays ``before`` of the state, under the names the rule's hooks
    may replace: all but those of the pool and the bins (see
    :func:`_restore_average`)."""
    lazy = _base._LAZY_UNDO_PREFIXES
    for name in [n for n in state if not n.startswith(lazy) and n not in before]:
        del state[name]
    state.update((n, a) for n, a in before.items() if not n.startswith(lazy))


def _restore_values(copies):
    """The values of arrays changed in place, from ``(array, copy)`` pairs."""
    for a, copy in copies:
        np.copyto(a, copy)


def _parameters(est):
    """The names of the parameters of ``est`` and their values (the same
    objects for as long as the one-row path is valid)."""
    return tuple(type(est)._parameter_constraints), _parameter_values(est)


class _Uncovered:
    """A stream the one-row path does not cover, until its parameters or state change."""

    def __init__(self, est):
        self.names, self.values = _parameters(est)
        self.state = est._state
        self.force = _base._FORCE_PATH

    def valid(self, est):
        return (
            est._state is self.state
            and same_entries(vars(est), self.names, self.values)
            and _base._FORCE_PATH == self.force
        )


class _OneRowPath:
    """The compiled one-row path of a stream (``_one_row_fast.OneRow``) and what it was built for.

    Valid while the estimator's parameters are the same objects (a changed
    parameter is validated again and gets a new rule), its state holds the
    same arrays (a regrowth or an undo replaces them), and its classes and
    random generator are the same.
    """

    def __init__(self, est):
        state, kernel = est._state, est._kernel
        self.names, self.values = _parameters(est)
        self.force = _base._FORCE_PATH
        self.own_scale = getattr(type(est), "proba_scale_", None) is _PublishMixin.proba_scale_
        self.classes = est.classes_
        self.kind = est.classes_.dtype.kind
        self.codes = {c: j for j, c in enumerate(est.classes_.tolist())}
        self.binary = est._binary
        self.rng = est._rng
        self.kxx = 1.0 if kernel.kernel in _UNIT_DIAGONAL else None
        self.rule = est._make_rule()
        self.hooks = _hooks(est, self.rule)
        if self.hooks == "generator":
            self.rule.set_generator(est._rng)
        # The bins of the margins are recorded in compiled code, by the
        # recorder of record_margins, unless a subclass records its own way.
        self.record = type(est)._record_margins is _base.BaseKernelOnlineClassifier._record_margins
        # Likewise the members that leave are folded into the pool in
        # compiled code (OneRow.fold), unless a subclass folds its own way.
        self.fold = type(est)._fold_retired is _AveragingMixin._fold_retired
        # The transaction of a call records what the call sets: _ATTRIBUTES,
        # unless Python code of the rule or of a subclass takes part.
        light = (
            self.hooks != "python"
            and self.record
            and self.fold
            and type(est)._compress_pool is _AveragingMixin._compress_pool
        )
        self.attributes = _ATTRIBUTES if light else None
        self.lazy = est._lazy_undo_prefixes
        n_features = state["Xs"].shape[1]
        engine = Engine(
            state["alpha"].shape[1],
            est._averages,
            est._keeps_gram,
            est._removes_members,
            True,
            est._kernel_code,
            float(kernel.gamma),
            float(kernel.degree),
            float(kernel.coef0),
            n_features,
        )
        limit = est._max_members()
        # The blocks' cost model for one row: the engine's kernel path (unless
        # forced), and that of the average's kernel values (_kernel_matrix).
        cost_model = _max_direct_members(n_features)
        direct = est._direct_only or _base._FORCE_PATH == "direct"
        undo = [
            name
            for name in state
            if not name.startswith(_base._LAZY_UNDO_PREFIXES) and name not in ("counters", "scale")
        ]
        # The pool's size at which it is compressed (-1: never, the exact average).
        room = est._pool_room() if est._averages else None
        pool_max = -1 if room is None else room + int(state["pool_n"][0])
        self.fast = OneRow(
            engine,
            self.rule,
            state,
            undo,
            -1 if limit is None else limit,
            sys.maxsize if direct else cost_model,
            cost_model,
            MARGIN_BINS,
            est._averages,
            pool_max,
        )
        # River's predict_proba_one refits the scale in compiled code too,
        # as _published_scale would, where proba_scale_ is the mixin's.
        if self.own_scale and type(est)._proba_scale is _PublishMixin._proba_scale:
            self.fast.refit_scale(
                _transaction._PUBLISHED.entries,
                _transaction.published,
                SCALE_HINTS.entries,
                SCALE_HINTS,
                _MIN_SCALE,
            )
        # River's learn_one plays the whole call in compiled code
        # (OneRow.learn) where no Python takes part in the round: no hooks
        # of the rule, the compiled recorder and fold, no class weights, a
        # kernel whose k(x, x) is 1.
        if (
            self.attributes is not None
            and self.hooks == "none"
            and self.kxx is not None
            and est.class_weight is None
        ):
            self.fast.guard(
                self.names,
                self.values,
                self.classes,
                self.rng,
                self.force,
                vars(_base),
                _KERNEL_DIAG,
                self.binary,
                self.kxx,
                _transaction._PUBLISHED.entries,
            )

    def valid(self, est):
        return (
            same_entries(vars(est), self.names, self.values)
            and self.fast.binds(est._state)
            and est.classes_ is self.classes
            and est._rng is self.rng
            and _base._FORCE_PATH == self.force
        )

    def label_code(self, y):
        """The class index of the one label of ``y``, or None (the full path decides)."""
        if not _validation._label_kinds_agree(y.dtype.kind, self.kind):
            return None
        return self.codes.get(y.item())

    def play(self, est, label, w):
        """Play the loaded row with class index ``label`` and weight ``w``; atomic.

        In the order of ``_play``: the rule's hooks, the compiled round (which
        records its margin), then, for averaged models, the members that left
        brought into the pool of the average. It runs in the
        transaction of every call (``_transaction.Transaction``), which puts
        back the estimator's attributes and the arrays that only Python
        changes; each change made otherwise registers its undo first: the
        compiled record (the arrays the round changes, copied just before its
        first change, the counters and the margin's bin), the generator, the
        arrays the rule's hooks replace.
        """
        fast, rule, state = self.fast, self.rule, est._state
        y = (2 * label - 1) if self.binary else label
        # k(x, x) as the blocks compute it (the call's first failure point).
        kernel = est._kernel
        if self.kxx is not None and type(kernel).diag is _KERNEL_DIAG:
            kxx = self.kxx
        else:
            kxx = float(kernel.diag(fast.row)[0])
        hooks = self.hooks
        if self.attributes is None:
            call = est._transaction(deep=False)
        else:
            call = _transaction.Transaction(est, lazy=self.lazy, attributes=self.attributes)
        with call as tx:
            fast.begin(hooks == "python")
            tx.on_undo(fast.undo)
            if hooks != "none":
                rng = est._rng
                saved = _transaction._save_generator(rng)
                tx.on_undo(partial(_transaction._load_generator, rng, saved))
            if hooks == "python":
                tx.on_undo(partial(_restore_arrays, state, dict(state)))
                est._block_start(rule, fast.row, np.array([y], dtype=np.int64), None, None)
            if not self.record:
                bins = [(a, a.copy()) for name, a in state.items() if name.startswith("cal_")]
                tx.on_undo(partial(_restore_values, bins))
            if hooks == "generator":
                # The rule draws from the generator in compiled code: hold its lock.
                with est._rng._bit_generator.lock:
                    code = fast.play(y, w, kxx, est._n_seen, self.record)
            else:
                code = fast.play(y, w, kxx, est._n_seen, self.record)
            if code:
                raise _failure(code, fast.row, w)
            if not self.record and fast.cal_round:
                est._record_margins(
                    np.array([fast.margin]),
                    np.array([max(y, 0) if self.binary else y], dtype=np.intp),
                    np.array([w * fast.cal_stride]),
                    np.array([float(state["counters"][1])]),
                )
            # Averaged models, in the order of _play: the members that left
            # go to the pool of the average (a removal rule's update). The
            # compiled fold appends them in place, undone by fast.undo; a
            # pool that must grow or be compressed is Python's, which
            # changes only the arrays the transaction records lazily.
            retired = None
            if fast.averaged and not (self.fold and fast.fold()):
                retired = fast.engine.retired()
            if retired is not None:
                tx.track_lazy_arrays()
                est._fold_retired(retired)
                fast.engine.clear_retired()
            if hooks == "python":
                est._block_end(rule, fast.row, None)
            if retired is not None:
                fast.rebind()
            # The rule's hooks may replace the arrays the engine is bound to.
            if fast.averaged and not (
                fast.average_finite() if hooks != "python" else est._average_is_finite()
            ):
                raise _failure(5, fast.row, w)
            est._n_seen += 1
            est.n_iter_ = 1
            est.n_mistakes_ = int(state["counters"][2])
            fast.active = False  # the call is done: nothing to undo

    def proba_scale(self, est):
        """``est.proba_scale_``, kept until a round is played or undone.

        The scale is fitted to the bins of the margins, which change only
        with the rounds recorded (an undo puts back the bins with the round
        count): every round, or those of the schedule of an averaged model
        (keyed by the last of them, ``last_recorded``); between two of them
        a stream of predictions reads it once.
        """
        fast = self.fast
        t = fast.rounds
        if fast.averaged:
            t = last_recorded(t)
        if fast.scale_round != t:
            fast.scale_value = self._published_scale(est)
            fast.scale_round = t
        return fast.scale_value

    def _published_scale(self, est):
        """``est.proba_scale_`` (``_PublishMixin``), fitted by the compiled
        fit on the bins this path is bound to: the same fit, from the same
        start, without the conversions of the arrays on the way."""
        if not self.own_scale:  # a subclass's own proba_scale_
            return est.proba_scale_
        return est._proba_scale(self._fit_bound_scale)

    def _fit_bound_scale(self, start):
        return self.fast.fit_scale(np.nan if start is None else start, _MIN_SCALE)


def _failure(code, row, w):
    """The error of a round that failed (``OneRow.play``'s codes; 5: the
    average's sums are not finite after it), of the row ``row`` of weight ``w``."""
    if code == 4:
        # As _segment_margins raises.
        return _nonfinite_scores(row)
    what = {
        2: "Non-finite scores at row 0 of the call",
        3: "Non-finite coefficients after the call",
        5: "Non-finite averaged coefficients after the call",
    }[code]
    return ValueError(_rounds._overflow_message(row, np.array([w]), what))


def build_path(est):
    """The compiled one-row path of the stream of ``est`` (:class:`_OneRowPath`), or None.

    Validates the parameters first (they are validated on every call of a
    stream), and raises as the full path would. None where the path does
    not apply: sparse streams, kernels without a compiled form, progress
    output.
    """
    est._validate_params()
    est._check_stream_continues()
    if (
        est.verbose
        or not est._dense
        or est._kernel_code is None
        or est.kernel in ("chi2", "additive_chi2")
        or _base._FORCE_PATH == "blocked"
    ):
        # Remembered until the parameters or the state change, so that the
        # one-row calls of such a stream do not ask again.
        _ONE_ROW[est] = _Uncovered(est)
        return None
    path = _ONE_ROW[est] = _OneRowPath(est)
    return path


def current_path(est):
    """The valid one-row path of the fitted stream of ``est``, built if needed, or None."""
    path = _ONE_ROW.get(est)
    if path is None or not path.valid(est):
        path = build_path(est)
    return path if type(path) is _OneRowPath else None


def _play_loaded_row(est, path, label, w):
    """Play the row loaded in ``path``; False (nothing changed) if it needs the full path."""
    if not path.fast.fits():
        return False
    if path.hooks == "python":
        arrays = dict(est._state)
        if est._prepare_block(1):
            # The rule's buffers need room: put them back, the full path grows them.
            est._state.clear()
            est._state.update(arrays)
            return False
    path.play(est, label, w)
    return True


def partial_fit_one_row(est, X, y, classes):
    """Play a one-row ``partial_fit`` call on the compiled one-row path; whether it did.

    Takes only what a few cheap tests prove valid: a float64 array of one
    finite row of the fitted width (any layout), a one-label array of a
    known class, ``classes`` absent or the stream's. Anything else, and any
    stream the path does not cover (see :func:`build_path`), returns False
    before anything changed: the caller's full path validates with
    scikit-learn's messages.
    """
    if not (
        type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.shape[0] == 1
        and type(y) is np.ndarray
        and y.shape == (1,)
        and "_state" in vars(est)
    ):
        return False
    if (
        X.shape[1] != est.n_features_in_
        or "feature_names_in_" in vars(est)
        or classes is not None
        and not (type(classes) is np.ndarray and np.array_equal(classes, est.classes_))
    ):
        return False
    path = current_path(est)
    if path is None:
        return False
    label = path.label_code(y)
    if label is None:
        return False
    if est.class_weight is None:
        w = 1.0
    elif isinstance(est.class_weight, dict):
        w = float(est._class_weights(est.classes_, y)[label])
        if not w > 0:
            return False
    else:
        return False
    if not path.fast.load(X):
        return False
    return _play_loaded_row(est, path, label, w)


def event_row(x, columns, n_features):
    """River's event ``x`` (a dict of features; ``columns`` maps a key to its
    column) as a one-row float64 array: 0 where a column is missing, keys
    that are not columns ignored. Raises as numpy does on a value that is
    not a number."""
    values = [0.0] * n_features
    for key, value in x.items():
        j = columns.get(key)
        if j is not None:
            values[j] = value
    return np.array([values], dtype=np.float64)


def learn_event(est, x, columns, label, code=None):
    """River's ``learn_one``: play the event ``x``, a dict of features
    (``columns`` maps a key to its column), of class index ``label``.

    Whether it was played: False, with nothing changed, where the one-row
    path does not apply or a value is not a finite number (the caller then
    takes ``partial_fit``, and its messages). ``code``: what the common
    call, ``learn_guarded(_PATHS, est, x, columns, label)``, returned to a
    caller that made it first (river's ``learn_one``); None: make it here.
    """
    # The common call, whole in compiled code (OneRow.learn), where it applies.
    if code is None:
        code = learn_guarded(_PATHS, est, x, columns, label)
    if code == 0:
        return True
    if code > 0:  # undone
        raise _failure(code, _ONE_ROW.get(est).fast.row, 1.0)
    if "_state" not in vars(est) or "feature_names_in_" in vars(est):
        return False
    path = current_path(est)
    if path is None or est.class_weight is not None:
        return False
    try:
        finite = path.fast.load_dict(x, columns)
    except (TypeError, ValueError, OverflowError):
        return False
    return finite and _play_loaded_row(est, path, label, 1.0)


def event_scores(est, x, columns, proba=False, guarded=False):
    """River's predictions: the scores of the event ``x`` (see
    :func:`learn_event`), a float for two classes and a list otherwise, or
    None where the one-row path does not apply or a value is not a finite
    number (then ``decision_function`` decides). ``proba``: the list of the
    probabilities of ``predict_proba`` instead (up to rounding);
    ``guarded``: the common call of ``proba``,
    ``proba_guarded(_PATHS, est, x, columns)``, already answered None to
    the caller (river's ``predict_proba_one``), which made it first.

    The scores of the last hypothesis, computed as the next round computes
    them, or those of the average of the rounds played (averaged models):
    the pool and the current members, not compressed, whose compression
    within the budget ``decision_function`` scores.
    """
    if proba and not guarded:
        # The common call, whole in compiled code, where the scale is kept.
        out = proba_guarded(_PATHS, est, x, columns)
        if out is not None:
            return out
    path = _ONE_ROW.get(est)
    if type(path) is not _OneRowPath or not path.fast.binds(est._state):
        if "_state" not in vars(est):
            return None
        try:  # a stream the one-row path covers, whose parameters are valid
            path = current_path(est)
        except Exception:
            path = None
        if path is None:
            return None
    conversion = est._conversion
    if conversion not in ("last", "average", "exact") or "feature_names_in_" in vars(est):
        return None
    try:
        if conversion == "last":
            scores = path.fast.score_dict(x, columns)
        else:
            scores = path.fast.average_dict(x, columns)
        if scores is None or not proba:
            return scores
        return path.fast.proba_of_scores(path.proba_scale(est))
    except (TypeError, ValueError, OverflowError):
        return None
