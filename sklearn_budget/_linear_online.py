"""Online gradient descent on the hinge loss in an explicit feature space.

The common part of :class:`~sklearn_budget.FourierOnlineClassifier` and
:class:`~sklearn_budget.NystroemOnlineClassifier` (Lu, Hoi, Wang, Zhao and
Liu, "Large Scale Online Kernel Learning", JMLR 17(47), 2016): each maps a
row ``x`` to ``budget``-sized features ``z(x)`` and plays the linear rounds
``w_k <- w_k + eta y_k z(x)`` whenever ``y_k w_k . z(x) < 1`` (one-vs-rest;
with more than two classes, NOGD can take Crammer and Singer's multiclass
hinge loss instead, see ``_joint_hinge``). The features
are computed per block of rows with BLAS; the rounds are played one after
the other in compiled code (``sklearn_budget._ogd``).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn import get_config
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import _DOC_LINK_TEMPLATE
from ._calibration import MARGIN_BINS, fit_scale, log_probabilities, new_bins, record_margins
from ._ogd import OneRound, hinge_rounds
from ._one_row import event_row
from ._one_row_fast import same_entries
from ._rounds import _blocks, _rows, _select
from ._stream import _OnlineStreamMixin, _parameter_values, _predicted_index
from ._transaction import Transaction, WeakCache, published
from ._validation import _label_kinds_agree, _lean_labels, _lean_rows

# Rows whose features are computed at once (a block of n x budget values).
_BLOCK_SIZE = 1024

_NO_ARRAY = np.empty((0, 0))
_NO_MARGINS = np.empty(0)

# The one-row path of each estimator (_RoundPath), derived from its state and
# kept beside it, never pickled.
_ROUND_PATHS = WeakCache()

# The features of the rows of the ``fit`` call under way (_FitFeatures),
# kept beside the estimator for that call only: scratch, not state.
_FIT_FEATURES = WeakCache()


def finite_hinge_rounds(Z, *args, **kwargs):
    """``_ogd.hinge_rounds`` on the features ``Z``: ``(end, mistakes, updates)``,
    or a ValueError where the rounds stopped at a row whose scores are not
    finite (nothing of the call is kept: its transaction puts the state back)."""
    end, mistakes, updates, nonfinite = hinge_rounds(Z, *args, **kwargs)
    if nonfinite:
        raise ValueError(
            "Non-finite scores: the features of a row of X overflowed (largest "
            f"|feature|: {np.abs(Z[end]).max():.3g}). Scale X as the training data were scaled."
        )
    return end, mistakes, updates


def _averaged(w, acc, t):
    """The average of the hypotheses of rounds ``1 .. t``: ``(t w - acc) / t``
    (see ``sklearn_budget._ogd``)."""
    return w - acc / t if t > 0 else w.copy()


class _BinUndo:
    """The undo of the bins of the margins that a few rounds change.

    Registered with the call's transaction, it puts back the bins of the
    rounds' margins (the lazy state arrays ``cal_*`` are not copied then).
    """

    def __init__(self, state, transaction):
        self.state, self.transaction = state, transaction

    def keep(self, cls, margins):
        """Keep the bins that the rounds of classes ``cls`` and ``margins`` change."""
        counts, sums, totals = (self.state[k] for k in ("cal_counts", "cal_sums", "cal_n"))
        for c, b in zip(cls.tolist(), MARGIN_BINS.bins_of(margins).tolist()):
            saved = (counts[c, b], sums[c, b], totals[c])

            def undo(c=c, b=b, saved=saved):
                counts[c, b], sums[c, b], totals[c] = saved

            self.transaction.on_undo(undo)


def rows_in_working_memory(n_rows, width):
    """How many of ``n_rows`` rows of ``width`` floats scikit-learn's
    ``working_memory`` holds."""
    return min(n_rows, int(get_config()["working_memory"] * 2**20) // (8 * width))


class _FitFeatures:
    """The features of the rows of one ``fit`` call, computed once for its epochs.

    Every epoch of ``fit`` plays the same rows, reshuffled. Where a row's
    features stay the same over the call (FOGD's random features; NOGD's
    kernel values with its landmarks, once they are fixed) and are the same
    bits whatever the block of rows they are computed in, a later epoch
    reads them here instead of computing them again: the rounds see the
    same numbers.

    ``index``: the identifiers of the call's rows (``_stream_index``), in
    increasing order; a row is found by its identifier, whatever the order
    of the epoch. ``width``: the most features of a row. The cache is an
    array of ``n_rows x width`` floats at most, allocated when it is first
    written (as many columns as ``compute`` gives), held
    within scikit-learn's ``working_memory``: the rows of the call's first
    positions that fit in it are kept, the others computed in every epoch,
    as without the cache.
    """

    def __init__(self, index, width):
        self.index, self.width = index, width
        self.n_kept = rows_in_working_memory(len(index), width)
        self.values = self.known = None

    def features(self, X, rows, ids, compute):
        """``compute(X[rows])``, the features of the rows ``rows`` of ``X``
        (see ``_rounds._select``), of identifiers ``ids``, read from the
        cache where it holds them, and only the others' rows gathered
        (``compute`` gives at most ``width`` features a row, the same
        number every call)."""
        if self.known is None:
            self.known = np.zeros(self.n_kept, dtype=bool)
        position = np.searchsorted(self.index, ids)
        kept = position < self.n_kept
        held = np.zeros(len(ids), dtype=bool)
        held[kept] = self.known[position[kept]]
        if self.values is not None and held.all():  # every epoch after the second
            return self.values.take(position, axis=0)
        if held.any():
            Z = np.empty((len(ids), self.values.shape[1]))
            Z[held] = self.values[position[held]]
            missing = np.flatnonzero(~held)
            Z[missing] = compute(_rows(X, _select(rows, missing)))
        else:
            Z, missing = compute(_rows(X, rows)), np.arange(len(ids))
            if self.values is None:
                self.values = np.empty((self.n_kept, Z.shape[1]))
        new = missing[kept[missing]]
        self.values[position[new]] = Z[new]
        self.known[position[new]] = True
        return Z


class _RoundPath:
    """The one-row path of a stream: its compiled round and what it was built for.

    Built after the parameters were validated and found fixed for the stream
    (as every call validates them), it is valid while they are the same
    objects, and the state, the classes and the features' map
    (``_round_projection``) the same: one-row calls then skip that
    validation, and play their round on the bound arrays
    (``_ogd.OneRound``), whose undo is what the round changes.
    """

    def __init__(self, est):
        self.names = tuple(type(est)._parameter_constraints)
        self.values = _parameter_values(est)
        self.config = est._stream_config
        self.state = est._state
        self.classes = est.classes_
        self.kind = est.classes_.dtype.kind
        self.codes = {c: j for j, c in enumerate(est.classes_.tolist())}
        self.projection = est._round_projection()
        self.round = OneRound(est._state, MARGIN_BINS, self.projection, est._joint_hinge())

    def valid(self, est):
        return (
            same_entries(vars(est), self.names, self.values)
            and est._state is self.state
            and est._stream_config is self.config
            and est.classes_ is self.classes
            and self.round.binds(est._state, est._round_projection())
        )

    def label_code(self, y, classes):
        """The class index of the one label of the array ``y`` (``classes``:
        None or the stream's), or None where ``_lean_labels`` would not take it."""
        if classes is not None and not (
            type(classes) is np.ndarray and np.array_equal(classes, self.classes)
        ):
            return None
        if type(y) is not np.ndarray or y.shape != (1,):
            return None
        if not _label_kinds_agree(y.dtype.kind, self.kind):
            return None
        return self.codes.get(y.item())


class _FeatureOnlineClassifier(_OnlineStreamMixin, ClassifierMixin, BaseEstimator):
    """Hinge-loss online gradient descent on features of a fixed size.

    Subclasses define ``_reset(X, from_partial_fit)`` (a new stream, its
    state from :meth:`_new_state`), ``_play_block(X, rows, cls, sw, index,
    calibrate)`` (a block of rounds, on the rows ``rows`` of ``X``, see
    ``_rounds._select``, through :meth:`_hinge_rounds`),
    ``_publish()`` (the fitted attributes) and ``_scores(X)``.
    """

    _doc_link_module = "sklearn_budget"
    _doc_link_template = _DOC_LINK_TEMPLATE

    _parameter_constraints: dict = {
        "budget": [Interval(Integral, 1, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="neither")],
        "learning_rate": [Interval(Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "average": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "verbose_interval": [Interval(Integral, 1, None, closed="left")],
    }

    # The state's counters: rounds, mistakes, updates of the epoch.
    _counter_index = (0, 1, 2)

    # The bins of the margins are copied for a call's undo record only when
    # the rounds change them.
    _lazy_undo_prefixes = ("cal_",)

    def _n_outputs(self):
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    def _new_state(self, n_weights):
        """The state of a new stream with ``n_weights`` weights per output."""
        shape = (self._n_outputs(), n_weights)
        state = {
            "w": np.zeros(shape),
            "counters": np.zeros(3, dtype=np.int64),  # rounds, mistakes, updates
            **new_bins(len(self.classes_)),
        }
        if self.average:
            state["acc"] = np.zeros(shape)
        return state

    def _play(self, X, y, w, index=None, on_block=None, calibrate=True, order=None):
        """Play the rounds ``(X[order[i]], y[i])`` in order, by blocks of rows
        (``order``: None for every row of ``X``, in order)."""
        if calibrate:
            self._before_change("cal_")
        for sl, rows in _blocks(order, y.shape[0], _BLOCK_SIZE):
            ids = None if index is None else index[sl]
            self._play_block(
                X, rows, np.ascontiguousarray(y[sl], dtype=np.int64), w[sl], ids, calibrate
            )
            if on_block is not None:
                on_block()

    def _stream_index(self, n_rows):
        # The rows' positions in the call: what _FitFeatures knows them by.
        return np.arange(n_rows)

    def _play_epochs(self, X, rows, y, w, index, rng, warm):
        # Only fit plays rows more than once: its features are kept for its
        # epochs, and dropped with the call, however it ends.
        cache = _FitFeatures(index, self.budget) if self.max_iter > 1 else None
        if cache is None or cache.n_kept == 0:
            return super()._play_epochs(X, rows, y, w, index, rng, warm)
        _FIT_FEATURES[self] = cache
        try:
            return super()._play_epochs(X, rows, y, w, index, rng, warm)
        finally:
            _FIT_FEATURES.pop(self)

    def _fit_features(self, X, rows, ids, compute):
        """``compute(X[rows])``: the features of the rows ``rows`` of ``X``
        (see ``_rounds._select``), of identifiers ``ids`` (None: not to be
        kept), read from the features kept by the ``fit`` call under way
        where it holds them (see :class:`_FitFeatures`): the rows of
        features read are not gathered.

        ``compute`` must give a row the same bits whatever the other rows of
        ``X``: a row's features are computed in one block and read in others.
        """
        cache = _FIT_FEATURES.get(self)
        if cache is None or ids is None:
            return compute(_rows(X, rows))
        return cache.features(X, rows, ids, compute)

    def _partial_fit_one_row(self, X, y, classes):
        """A one-row ``partial_fit`` call without the plumbing of blocks.

        Only for input that validation would not change (the lean bypass of
        ``sklearn_budget._validation``); anything else, and a first call,
        goes through the full path and its messages. Returns whether it
        played the row.
        """
        if not (type(X) is np.ndarray and X.shape[0] == 1 and _lean_rows(self, X)):
            return False
        path = _ROUND_PATHS.get(self)
        if path is not None and path.valid(self):
            label = path.label_code(y, classes)
            if label is None:
                return False
            self._play_one_row(X, label, 1.0, path)
            return True
        labels = _lean_labels(self, y, classes, 1)
        if labels is None or not labels[1][0] > 0:
            return False
        self._play_one_row(X, int(labels[0][0]), float(labels[1][0]))
        return True

    def _partial_fit_event(self, x, columns, label):
        """River's ``learn_one``: play the event ``x``, a dict of features
        (``columns`` maps a key to its column), of class index ``label``.

        The row is converted as river's classifiers convert it, and the label
        is the class index that ``_lean_labels`` finds for it (the caller's
        labels are the sorted ``classes_``), with a weight of 1: the call of
        ``partial_fit(row, [classes_[label]])``, without validating the label
        again. Returns whether it played the event: False, with nothing
        changed, where the row is not one that ``partial_fit`` takes as it
        is, or ``class_weight`` is set (the caller then calls ``partial_fit``,
        and its messages).
        """
        if (
            self.class_weight is not None
            or "_state" not in vars(self)
            or self.classes_.dtype.kind not in "iubU"  # labels _lean_labels takes
        ):
            return False
        try:
            X = event_row(x, columns, self.n_features_in_)
        except (TypeError, ValueError, OverflowError):
            return False
        path = _ROUND_PATHS.get(self)
        if path is None or not path.valid(self):
            if not _lean_rows(self, X):
                return False
            path = None
        elif not (
            # What remains of _lean_rows' tests for a row of event_row (a
            # C-contiguous float64 row of the fitted width).
            "feature_names_in_" not in vars(self)
            and self._takes_lean_rows()
            and path.round.finite(X)
        ):
            return False
        self._play_one_row(X, label, 1.0, path)
        return True

    def _event_scores(self, x, columns, proba=False):
        """River's predictions take ``decision_function`` here (None)."""
        return None

    # What a one-row call on the compiled round sets in ``__dict__`` (its
    # transaction records these alone).
    _one_row_attributes = ("n_iter_", "n_mistakes_")

    def _round_projection(self):
        """The ``P`` of the rounds of one row (see ``_ogd.hinge_rounds``)."""
        return None

    def _joint_hinge(self):
        """Whether the rounds of more than two classes take Crammer and
        Singer's multiclass hinge loss rather than one-vs-rest."""
        return False

    def _shrink(self):
        """The factor of the weights before each round's step (1: no penalty)."""
        return 1.0

    def _covers_one_row(self):
        """Whether a row's round is the compiled one (``_ogd.OneRound``) now."""
        return self.class_weight is None

    def _row_features(self, X, path):
        """The features of the one validated row ``X``, for ``path.round``."""
        raise NotImplementedError

    def _round_path(self):
        """The valid one-row path of the stream (:class:`_RoundPath`), or None.

        Validates the parameters and that the stream can go on first, as
        every call does (and raises as it does).
        """
        path = _ROUND_PATHS.get(self)
        if path is not None and path.valid(self):
            return path
        self._validate_params()
        self._check_stream_continues()
        if not self._covers_one_row():
            return None
        path = _ROUND_PATHS[self] = _RoundPath(self)
        return path

    def _play_one_row(self, X, label, w, path=None):
        """Play the validated row ``X`` of class index ``label`` and weight
        ``w``; atomic.

        On the compiled round where the stream has one (a block of one row,
        to the last bit), else by the blocks' path. ``path``: the stream's
        valid :class:`_RoundPath` when the caller has just found it, else
        None.
        """
        if path is None:
            path = self._round_path()
        if path is not None:
            Z = self._row_features(X, path)
            one = path.round
            # What the last call's round kept is not this call's to undo
            # (set before the undo is registered, so that no interruption
            # finds it registered with the last call's record).
            one.active = False
            with Transaction(self, attributes=self._one_row_attributes) as transaction:
                transaction.on_undo(one.undo)
                if one.play(Z, label, w, float(self.learning_rate), self._shrink()):
                    self.n_iter_ = 1
                    self._end_of_call(1)
                    return
        with self._transaction(deep=True) as transaction:
            self._validate_params()
            self._check_stream_continues()
            index = self._stream_index(1)
            # The row changes one bin of the margins: its undo keeps that
            # bin's values rather than a copy of every bin.
            cls, sw = np.array([label], dtype=np.int64), np.array([w], dtype=np.float64)
            self._play_block(X, slice(0, 1), cls, sw, index, _BinUndo(self._state, transaction))
            self.n_iter_ = 1
            self._end_of_call(1)

    def _hinge_rounds(self, Z, cls, sw, calibrate, W, acc, start=0, stop=None, **kernel_mode):
        """Play rows ``start .. stop`` of the features ``Z`` on the weights ``W``
        (``acc``: the sums of the average, or None), recording their margins
        (``calibrate``: True, or a :class:`_BinUndo` to tell first) and
        counting them; returns the row after the last one played (see
        ``_ogd.hinge_rounds``)."""
        state = self._state
        t0 = int(state["counters"][0])
        margins = np.zeros(Z.shape[0]) if calibrate else _NO_MARGINS
        Z = np.ascontiguousarray(Z, dtype=np.float64)
        end, mistakes, updates = finite_hinge_rounds(
            Z,
            cls,
            sw,
            W,
            _NO_ARRAY if acc is None else acc,
            float(self.learning_rate),
            t0 - start,
            margins,
            start,
            Z.shape[0] if stop is None else stop,
            joint=self._joint_hinge(),
            shrink=self._shrink(),
            **kernel_mode,
        )
        if calibrate and end > start:
            rounds = np.arange(t0 + 1, t0 + 1 + end - start, dtype=np.float64)
            # The bins clip margins to their range as they record them.
            m = margins[start:end]
            if isinstance(calibrate, _BinUndo):
                calibrate.keep(cls[start:end], m)
            record_margins(state, m, cls[start:end], sw[start:end], rounds)
        state["counters"] += (end - start, mistakes, updates)
        return end

    # ------------------------------------------------------------------
    # The fitted model
    # ------------------------------------------------------------------
    def _end_of_call(self, n_rows):
        self.n_mistakes_ = int(self._state["counters"][1])
        self._publish()

    @property
    def proba_scale_(self):
        # Fitted to the bins of the margins on first access after a call
        # that changed them, and cached beside the estimator.
        if "_state" not in vars(self):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'proba_scale_'")
        cache = published(self)
        if "proba_scale_" not in cache:
            cache["proba_scale_"] = fit_scale(self._state)
        return cache["proba_scale_"]

    def _checked_scores(self, X):
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self._scores(X)

    def decision_function(self, X):
        """Scores of the fitted hypothesis.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The score for two classes (positive means ``classes_[1]``), one
            column per class otherwise.
        """
        scores = self._checked_scores(X)
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X):
        """Predict class labels for samples in X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the score is positive and ``classes_[0]``
            otherwise (two classes); the class of the largest score otherwise.
        """
        # Scored first: an unfitted model raises NotFittedError there.
        scores = self._checked_scores(X)
        return self.classes_[_predicted_index(scores)]

    def predict_proba(self, X):
        """Probability estimates from the progressive margins of the stream.

        Every round's margin is computed before the round's update, so it
        is out of sample; ``proba_scale_`` is fitted on them by maximum
        likelihood (the first epoch only, in ``fit``), as for the other
        estimators of the package. The probabilities are ``sigmoid(a f(x))``
        for two classes and ``softmax(a f(x))`` otherwise, ``f`` the
        scores of :meth:`decision_function`, so that they agree with
        :meth:`predict`. With ``average=True`` the margins are still those
        of the hypotheses played online.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probability of each class, in the order of ``classes_``.
        """
        return np.exp(self.predict_log_proba(X))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probability of each class, in the order of ``classes_``.
        """
        scores = self._checked_scores(X)
        z = self.proba_scale_ * scores
        binary = len(self.classes_) == 2
        return log_probabilities(z[:, 0] if binary else z, binary)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
