"""The stream protocol shared by every online estimator of the package.

``fit`` plays epochs over its data, ``partial_fit`` plays its rows as the
next rounds of the stream; both validate the parameters and the input first,
refuse to go on with a stream whose fixed parameters changed, and run in one
:class:`~sklearn_budget._transaction.Transaction`, so that a call that fails
or is interrupted changes nothing. :class:`_OnlineStreamMixin` holds that
plumbing; an estimator keeps its arrays in ``_state`` (a dict, with the
``counters`` of the stream) and states its algorithm through a few hooks:

- ``_reset(X, from_partial_fit)``: start a new stream (``classes_`` is set);
- ``_play(X, y, w, index, on_block, calibrate, order)``: play rows as
  rounds, with ``y`` the class indices and ``w`` the positive sample
  weights, and ``order`` the rows of ``X`` played (None: all, in order),
  each block of rounds gathering its own (``_rounds._blocks``);
- ``_end_of_call(n_rows)``: the fitted attributes after a call;
- ``_counter_index``: where the state's ``counters`` keep the rounds, the
  mistakes and the updates of the current epoch;
- optionally ``_stream_index`` (the identifiers of the rows played),
  ``_takes_lean_rows`` and ``_nonnegative_input`` (what the input may be),
  ``_partial_fit_one_row`` (a path of its own for one-row calls), and the
  undo record's ``_lazy_undo_prefixes`` and ``_mutable_attributes``.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import operator
import warnings
from numbers import Integral
from time import perf_counter

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import unique_labels

from ._deprecation import renamed_value, user_stacklevel
from ._docstrings import _fit_doc
from ._progress import _Progress
from ._rounds import _rows, _select
from ._transaction import Transaction, WeakCache, before_change
from ._validation import (
    _check_rows,
    _class_weights,
    _lean_labels,
    _lean_rows,
    _validate_fit_input,
)

# The parameter values last found valid for each estimator (see
# _OnlineStreamMixin._validate_params), kept beside it.
_VALIDATED = WeakCache()

_PARAMETER_GETTERS = {}


# A fit warns unless its mistakes (those of the fitted model and those on the
# second half of its first epoch, see _OnlineStreamMixin._warn_if_majority_does_as_well)
# are this many standard deviations (of a binomial count of the majority's
# mistakes) below the majority's: about a 2% chance that a model no better
# than it does not warn.
_MAJORITY_Z = 2.0
# Training rows on which the fitted model is compared with the majority class.
_MAJORITY_ROWS = 2048
# Rows of the second half of the first epoch on which an average is checked,
# and the standard deviations its mistakes must be below the majority's: the
# average of the first half has learnt from half of the rows only, so its
# count overstates the fitted model's, and one deviation is asked of it.
_MAJORITY_HALF_ROWS = 1024
_MAJORITY_HALF_Z = 1.0


# Fewest rows in the second half of a first epoch for its mistakes to be
# compared with the majority class's: on fewer, the noise of the count and
# the mistakes of a model that has seen few rows say little.
_MIN_SECOND_HALF = 200


class _SecondHalf:
    """Where the second half of a first epoch starts, for its out-of-sample mistakes.

    Called after each block of rounds (``on_block``, then ``then``, the
    progress callback, if any): the count starts at the end of the first
    block that ends at or past the middle of the epoch's ``n_rows`` rounds.
    An estimator that averages its hypotheses keeps, at that point, a scorer
    of the average so far (``snapshot``, see
    ``_OnlineStreamMixin._scorer_of_the_average``).
    """

    def __init__(self, est, n_rows, then):
        self._est, self._n, self._then = est, n_rows, then
        self._rounds, self._mistakes, _ = est._counter_index
        self._origin = int(est._state["counters"][self._rounds])
        self._start = None
        self._snapshot = None

    def __call__(self):
        counters = self._est._state["counters"]
        played = int(counters[self._rounds]) - self._origin
        if self._start is None and 2 * played >= self._n:
            self._start = (played, int(counters[self._mistakes]))
            if played and self._n - played >= _MIN_SECOND_HALF:
                with warnings.catch_warnings():
                    # Said, if at all, of the fitted model.
                    warnings.simplefilter("ignore")
                    self._snapshot = self._est._scorer_of_the_average()
        if self._then is not None:
            self._then()

    def count(self, mistakes, X, order, y):
        """The second half's ``(online mistakes, X, rows, class indices,
        snapshot)`` (``mistakes``: the counter at the end of the epoch; ``X``,
        ``order``, ``y``: the rows, the epoch's order of them (see
        ``_rounds._select``) and the classes in that order; the half is
        ``X[rows]``, not gathered: only an average scores some of its rows),
        or None if it has fewer than ``_MIN_SECOND_HALF`` rows."""
        if self._start is None or self._n - self._start[0] < _MIN_SECOND_HALF:
            return None
        half = slice(self._start[0], self._n)
        return mistakes - self._start[1], X, _select(order, half), y[half], self._snapshot


def _predicted_index(scores):
    """The class index that ``predict`` gives each row of ``scores``: for two
    classes (one score per row, as a column or not) the second where the score
    is positive, otherwise the class of the highest score."""
    if scores.ndim == 1 or scores.shape[1] == 1:
        return (scores.reshape(-1) > 0).astype(np.intp)
    return np.argmax(scores, axis=1)


def _majority_misses(y):
    """Rows that always predicting the most frequent class of ``y`` misses."""
    return y.shape[0] - int(np.bincount(y).max())


def _not_fewer(n_others, n, z=_MAJORITY_Z):
    """The smallest count of mistakes on ``n`` rows that is not fewer, by ``z``
    standard deviations, than the ``n_others`` of the majority class (a
    binomial count)."""
    return n_others - z * np.sqrt(n_others * (n - n_others) / n)


def _parameter_values(estimator):
    """The values of the estimator's parameters, in the order of its constraints."""
    getter = _PARAMETER_GETTERS.get(type(estimator))
    if getter is None:
        names = tuple(type(estimator)._parameter_constraints)
        get = operator.attrgetter(*names)
        getter = get if len(names) > 1 else (lambda est: (get(est),))
        _PARAMETER_GETTERS[type(estimator)] = getter
    return getter(estimator)


def _shuffle_rng(random_state):
    """Generator of the shuffling of ``fit``.

    An integer seed gives a stream independent of ``RandomState(seed)``,
    which the algorithms' own draws use (removals, reservoir sampling), so
    that the two never replay the same numbers.
    """
    if isinstance(random_state, Integral):
        seq = np.random.SeedSequence(int(random_state)).spawn(1)[0]
        return np.random.RandomState(np.random.MT19937(seq))
    return check_random_state(random_state)


def _partial_fit_classes(estimator, classes):
    """The classes of a ``partial_fit`` call: ``(first, classes)``.

    The first call of a stream must give ``classes``; later calls may omit
    them or must repeat them. Later calls also validate the parameters
    again and check that the stream can go on.
    """
    if not hasattr(estimator, "classes_"):
        if classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        return True, unique_labels(classes)
    if classes is not None and not np.array_equal(estimator.classes_, unique_labels(classes)):
        raise ValueError(
            f"`classes={classes!r}` is not the same as on last call to "
            f"partial_fit, was: {estimator.classes_!r}"
        )
    # scikit-learn validates parameters only on the first call; a stream
    # validates them on every call.
    estimator._validate_params()
    estimator._check_stream_continues()
    return False, estimator.classes_


class _OnlineStreamMixin:
    """``fit``, ``partial_fit`` and their validation, for the online estimators.

    Comes before the estimator's other bases. See the module's docstring for
    the hooks an estimator implements.
    """

    #: Parameters fixed for the whole of a stream: they shape its state, so a
    #: stream cannot go on once they change (set by ``_reset`` in
    #: ``_stream_config``).
    _stream_params = ()

    #: Positions of the rounds played, the mistakes and the updates of the
    #: current epoch in the state's ``counters``.
    _counter_index = (0, 1, 2)

    #: Prefixes of the state arrays that only Python code changes, after the
    #: rounds: a call copies them for its undo record only if it changes them
    #: (see :func:`~sklearn_budget._transaction.before_change`).
    _lazy_undo_prefixes = ()

    #: Attributes (lists, dicts) that a call grows in place: its undo record
    #: keeps copies.
    _mutable_attributes = ()

    #: Renamed parameters, ``(new, old)``: a call that finds the old name set
    #: warns and uses its value (see :func:`~sklearn_budget._deprecation.renamed_value`).
    _renamed_parameters = ()

    # ------------------------------------------------------------------
    # Hooks
    # ------------------------------------------------------------------
    def _stream_index(self, n_rows):
        """The identifiers of the next ``n_rows`` rows of the stream (None: unused)."""
        return None

    def _takes_lean_rows(self):
        """Whether float64 rows of the fitted width are valid input as they are."""
        return True

    def _nonnegative_input(self):
        """Whether the input must be dense and non-negative."""
        return False

    def _partial_fit_one_row(self, X, y, classes):
        """Play a one-row call on a path of its own; whether it did (none here)."""
        return False

    def _epoch_limits(self):
        """``(max_iter, tol)`` of the epochs of ``fit``: the parameters', unless
        the estimator's ``fit`` chose its own count (``tol`` None then)."""
        return self.max_iter, self.tol

    def _end_of_epoch(self):
        """After each epoch of ``fit``: a reason to stop now, or None (none here)."""
        return None

    def _scorer_of_the_average(self):
        """The scores of the average of the hypotheses played so far, as a
        function of validated rows, frozen now (None: no such average here);
        for the majority-class check of ``fit``."""
        return None

    # ------------------------------------------------------------------
    # One transaction per call
    # ------------------------------------------------------------------
    def _transaction(self, deep):
        """The :class:`~sklearn_budget._transaction.Transaction` of a call
        (``deep``: the call changes the state arrays in place)."""
        return Transaction(
            self, deep, lazy=self._lazy_undo_prefixes, copied=self._mutable_attributes
        )

    def _before_change(self, prefix):
        """Copy the lazy state arrays named ``prefix*`` into the call's undo record."""
        before_change(self, prefix)

    # ------------------------------------------------------------------
    # Validation
    # ------------------------------------------------------------------
    def _validate_params(self):
        # A stream validates its parameters on every call (see
        # _partial_fit_classes): skip the values already found valid (the
        # same objects; a dict changed in place is still a dict).
        values = _parameter_values(self)
        last = _VALIDATED.get(self)
        if last is not None and all(a is b for a, b in zip(values, last)):
            return
        super()._validate_params()
        _VALIDATED[self] = values

    def _check_stream_continues(self):
        """Refuse to go on with a stream that cannot be continued exactly."""
        changed = []
        for name, old in self._stream_config.items():
            new = getattr(self, name)
            try:
                same = old is new or bool(old == new)
            except (TypeError, ValueError):
                same = False
            if not same:
                changed.append(f"{name}={old!r} -> {new!r}")
        if changed:
            raise ValueError(
                f"Parameters fixed for the stream changed since it started ({', '.join(changed)}): "
                "call fit with warm_start=False (or clone the estimator) to start a new stream."
            )

    def _validate_X(self, X, reset):
        if not reset and _lean_rows(self, X):
            return X
        return _check_rows(self, X, reset, nonneg=self._nonnegative_input())

    def _class_weights(self, classes, y):
        """Step multiplier of each class of ``classes`` (None: all one)."""
        return _class_weights(self.class_weight, classes, y)

    def _keep_weighted(self, y, w, index):
        """Rows of zero weight are dropped from the stream (never played).

        Returns the rows of ``X`` played (a slice of all of them, or their
        indices, see ``_rounds._select``: the rows are not copied) and
        their ``y``, ``w`` and ``index``.
        """
        if np.all(w > 0):
            return slice(0, w.shape[0]), y, w, index
        keep = np.flatnonzero(w > 0)
        return keep, y[keep], w[keep], None if index is None else index[keep]

    # ------------------------------------------------------------------
    # fit
    # ------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model with ``max_iter`` online epochs over ``(X, y)``.

        Unless ``warm_start=True``, the model is reset first. Each epoch plays
        the rows as a stream (reshuffled when ``shuffle=True``); fitting stops
        early after an epoch without any update, or once the epoch's mistake
        rate has stopped improving (``tol``, ``n_iter_no_change``). With
        ``average=True`` the fitted hypothesis is the average of the
        hypotheses of every round played (the online-to-batch conversion);
        with ``average='vote'``, where offered, their vote.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample: the step taken on that sample is
            multiplied by its weight (and by the weight of its class, see
            ``class_weight``), and samples of weight zero are not played at
            all.

        Returns
        -------
        self : object
            Fitted estimator.

        Warns
        -----
        FIT_WARNS
        """
        # A warm start changes the state in place; a reset replaces it.
        with self._transaction(deep=self.warm_start and hasattr(self, "_state")):
            return self._fit(X, y, sample_weight)

    fit.__doc__ = _fit_doc(fit.__doc__)

    def _check_renamed_parameters(self):
        """Warn about the deprecated names set (an error if both names are)."""
        for new, old in self._renamed_parameters:
            renamed_value(self, new, old)

    def _fit(self, X, y, sample_weight):
        self._check_renamed_parameters()
        warm = self.warm_start and hasattr(self, "_state")
        if warm:
            self._check_stream_continues()
        X, y_enc, w, classes = _validate_fit_input(self, X, y, sample_weight, None, reset=not warm)
        if warm and not np.array_equal(classes, self.classes_):
            raise ValueError(
                f"The classes of y {classes.tolist()} differ from those of the "
                f"warm-started model {self.classes_.tolist()}."
            )
        return self._fit_validated(X, y_enc, w, classes, warm)

    def _fit_validated(self, X, y_enc, w, classes, warm, rows=None):
        """``fit`` on validated input (see ``_validate_fit_input``): the rows
        ``rows`` of ``X`` (an array of row indices; None: all of them), of
        class indices ``y_enc`` and weights ``w``.

        ``rows`` lets a fit within a fit (``alpha='auto'``'s candidates)
        play a part of the caller's rows without a copy of them.
        """
        self.classes_ = classes
        if not warm:
            self._reset(X)
        rng = _shuffle_rng(self.random_state)
        # Rows are numbered after those of earlier calls of the stream (a
        # fit that starts the stream numbers them as the rows it plays).
        n_rows = y_enc.shape[0]
        keep, y_enc, w, index = self._keep_weighted(y_enc, w, self._stream_index(n_rows))
        rows = keep if rows is None else _select(rows, keep)
        second_half = self._play_epochs(X, rows, y_enc, w, index, rng, warm)
        self._end_of_call(n_rows)
        self._warn_if_majority_does_as_well(second_half, X, rows, y_enc, w)
        return self

    def _play_epochs(self, X, rows, y, w, index, rng, warm):
        """Play up to ``max_iter`` epochs over the rows ``rows`` of ``X`` (see
        ``_rounds._select``), in an order drawn from ``rng``.

        ``y``, ``w``, ``index``: those of the rows. ``warm``: whether the
        epochs go on with an earlier stream. Returns what
        the majority-class check needs of the second half of the first epoch
        (see :meth:`_SecondHalf.count`).
        """
        rounds, mistakes, updates = self._counter_index
        verbose, clock = self.verbose, perf_counter()
        n = y.shape[0]
        # The stopping rule of SGDClassifier, on the online mistake rate of
        # each epoch instead of its loss.
        max_iter, tol = self._epoch_limits()
        best_rate, no_improvement = np.inf, 0
        stop = f"played max_iter={max_iter} epochs"
        converged = False
        self.n_iter_ = 0
        for epoch in range(max_iter):
            counters = self._state["counters"]
            counters[updates] = 0
            mistakes_before = int(counters[mistakes])
            # The rows are played through their order, each block gathering
            # its own (_rounds._blocks, C-contiguous): no copy of X an epoch.
            turn = rng.permutation(n) if self.shuffle else np.arange(n)
            order = _select(rows, turn)
            progress = None
            if verbose:
                # Lines count the rounds of the epoch.
                print(f"-- Epoch {epoch + 1}", flush=True)
                origin = (int(counters[rounds]), mistakes_before)
                progress = _Progress(self, self.verbose_interval, origin, clock, n)
            within = progress if verbose >= 2 else None
            rounds_of = (y[turn], w[turn], None if index is None else index[turn])
            if epoch == 0:
                # Only the first epoch's margins are out of sample. Its
                # second half, each row predicted by a model that learnt the
                # first half but not yet the row (the hypothesis played, or
                # the average of those of the first half), estimates the error
                # on new rows (the majority-class check): counted from the
                # end of the first block past the middle.
                within = half = _SecondHalf(self, n, within)
            self._play(X, *rounds_of, on_block=within, calibrate=epoch == 0, order=order)
            if epoch == 0:
                end = int(self._state["counters"][mistakes])
                second_half = half.count(end, X, order, rounds_of[0])
            self.n_iter_ += 1
            if progress is not None:
                progress.end()
            counters = self._state["counters"]
            epoch_mistakes = int(counters[mistakes]) - mistakes_before
            reason = self._end_of_epoch()
            if reason is not None:
                stop, converged = reason, True
                break
            if counters[updates] == 0:
                stop, converged = "an epoch without updates", True
                break
            if tol is not None:
                rate = epoch_mistakes / n
                no_improvement = no_improvement + 1 if rate > best_rate - tol else 0
                best_rate = min(best_rate, rate)
                if no_improvement >= self.n_iter_no_change:
                    stop = (
                        f"the mistake rate did not improve by tol={tol} for "
                        f"{self.n_iter_no_change} epochs"
                    )
                    converged = True
                    break
        if not converged:
            self._warn_if_not_converged()
        if verbose:
            print(
                f"Stopped after {self.n_iter_} epochs ({stop}), "
                f"{perf_counter() - clock:.2f} seconds in total.",
                flush=True,
            )
        return second_half

    def _warn_if_not_converged(self):
        """``ConvergenceWarning`` of a fit that played ``max_iter`` epochs
        where the ``tol`` criterion could have stopped it.

        As SGDClassifier's. The first epoch always improves on the start, so
        the criterion needs ``n_iter_no_change + 1`` epochs at least: with
        fewer, in particular with the defaults and with a single pass
        (``max_iter=1``, an online pass rather than an iterative solver),
        reaching ``max_iter`` says nothing about convergence.
        """
        max_iter, tol = self._epoch_limits()
        if tol is None or max_iter <= self.n_iter_no_change:
            return
        warnings.warn(
            f"{type(self).__name__} played max_iter={self.max_iter} epochs and its online "
            f"mistake rate was still improving by more than tol={self.tol} within the last "
            f"n_iter_no_change={self.n_iter_no_change} epochs: increase max_iter, or set "
            "tol=None to play max_iter epochs without this check.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )

    def _second_half_reasons(self, online, X, rows, y_half, snapshot):
        """Why the second half ``X[rows]`` of the first epoch says the model may
        be no better than the majority class (see :meth:`_warn_if_majority_does_as_well`)."""
        z = _MAJORITY_Z
        if not self.get_params().get("average", False):
            mistakes, n_half = online, y_half.shape[0]
            said = (
                f"predicting each of the {n_half} rows of the second half of its first "
                f"epoch before learning from it, it made {mistakes} mistakes"
            )
        elif snapshot is not None:
            step = -(-y_half.shape[0] // _MAJORITY_HALF_ROWS)
            # Only the rows scored are gathered.
            every = slice(None, None, step)
            X_half, y_half = _rows(X, _select(rows, every)), y_half[every]
            try:
                scores = snapshot(X_half)
            except ValueError:  # scores that overflow: the fitted check tells
                return []
            mistakes, n_half, z = (
                int(np.sum(_predicted_index(scores) != y_half)),
                y_half.shape[0],
                _MAJORITY_HALF_Z,
            )
            said = (
                "the average of the hypotheses of the first half of its first epoch made "
                f"{mistakes} mistakes on {n_half} rows of the second half, which it had "
                "not learnt"
            )
        else:
            return []
        n_others = _majority_misses(y_half)
        if mistakes < _not_fewer(n_others, n_half, z):
            return []
        return [
            f"{said}, not {'significantly' if z == _MAJORITY_Z else 'clearly'} fewer than the "
            f"{n_others} of always predicting the most frequent class"
        ]

    def _predict_rows(self, X):
        """``predict`` of rows validated already (the rows of a fit, see
        :meth:`_warn_if_majority_does_as_well`)."""
        return self.predict(X)

    def _warn_if_majority_does_as_well(self, second_half, X, rows, y, w):
        """``ConvergenceWarning`` of a fitted model that does no better than
        always predicting the most frequent class.

        ``second_half``: what :meth:`_SecondHalf.count` returns (None if the
        second half of the first epoch is too short to tell, see
        ``_MIN_SECOND_HALF``); ``X``, ``rows``, ``y``, ``w``: the rows played
        (``X[rows]``, see ``_rounds._select``), their class indices and
        weights. The majority class misses the rows of the
        other classes; a model no better than it misses about as many, give
        or take the noise of a binomial count, so a count of mistakes is "not
        significantly fewer" unless it is below by ``_MAJORITY_Z`` of its
        standard deviations. Two counts are checked, each of which can fail
        alone. The first is out of sample: the mistakes on the rows of the
        second half of the first epoch of a model that learnt the first half
        but not these rows. For a last hypothesis (``average=False``) that
        model is the hypothesis played at each row (its online mistakes);
        for an average, the average of the hypotheses of the first half,
        scored on at most ``_MAJORITY_HALF_ROWS`` rows of the second half,
        whose mistakes need only be ``_MAJORITY_HALF_Z`` deviations below
        the majority's (the online mistakes say little of an average: on
        noisy data the average of a budget learner does well where its
        hypotheses, each of a few members, do not). A model that learns its
        rows by heart (a narrow kernel, several epochs) passes the second
        count and fails this one. The second count, the fitted model's mistakes on its
        training rows (at most ``_MAJORITY_ROWS`` of them, evenly spaced),
        catches a fitted model worse than the models of the first half (an
        average kept within a small budget at a narrow kernel). The mistakes
        are counted unweighted: the check is made only when every row weighs
        the same.
        """
        if not np.all(w == w[0]):
            return
        n = y.shape[0]
        step = -(-n // _MAJORITY_ROWS)
        ys = y[::step]
        with warnings.catch_warnings():
            # Validation has taken the feature names off the rows.
            warnings.filterwarnings("ignore", "X does not have valid feature names")
            fitted = self._predict_rows(_rows(X, _select(rows, slice(0, n, step))))
            fitted_mistakes = int(np.sum(fitted != self.classes_[ys]))
        reasons = []
        if second_half is not None:
            reasons.extend(self._second_half_reasons(*second_half))
        m_others = _majority_misses(ys)
        if fitted_mistakes >= _not_fewer(m_others, ys.shape[0]):
            reasons.append(
                f"its fitted model makes {fitted_mistakes} mistakes on {ys.shape[0]} of its "
                f"training rows, not significantly fewer than the {m_others} of always "
                "predicting the most frequent class"
            )
        if not reasons:
            return
        params = self.get_params(deep=False)
        remedies = [
            remedy
            for name, remedy in (
                ("budget", "a larger budget"),
                ("gamma", "another gamma (the kernel width)"),
                ("learning_rate", "another learning_rate"),
            )
            if name in params
        ]
        warnings.warn(
            f"{type(self).__name__}: {'; and '.join(reasons)}. The model may have learnt "
            f"nothing useful. Try {', '.join(remedies + ['another estimator'])}.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )

    # ------------------------------------------------------------------
    # partial_fit
    # ------------------------------------------------------------------
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Play the rows of ``(X, y)`` as the next rounds of the stream.

        ``max_iter``, ``tol`` and ``n_iter_no_change`` do not apply: each
        row is played once, and no convergence is checked (``n_mistakes_``
        counts the mistakes of the stream, to compare with the count of its
        rows outside the most frequent class). ``class_weight='balanced'``
        is refused (pass the weights as a dict).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The next rows of the stream.
        y : array-like of shape (n_samples,)
            Their labels.
        classes : array-like of shape (n_classes,), default=None
            All the classes of the stream. Required on the first call (unless
            the model was fitted with :meth:`fit`); later calls may omit it
            or must repeat it exactly.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample: the step taken on that sample is
            multiplied by its weight (and by the weight of its class, see
            ``class_weight``), and samples of weight zero are not played at
            all.

        Returns
        -------
        self : object
            The updated estimator.
        """
        if sample_weight is None and self._partial_fit_one_row(X, y, classes):
            return self
        lean = self._lean_fit_input(X, y, classes, sample_weight)
        if lean is not None:
            with self._transaction(deep=True):
                return self._partial_fit_lean(X, *lean)
        return self._partial_fit_checked(X, y, classes, sample_weight)

    def _lean_fit_input(self, X, y, classes, sample_weight):
        """``(y_enc, w)`` of a ``partial_fit`` call whose input needs no conversion.

        None when any of ``X``, ``y``, ``classes`` and ``sample_weight`` is
        not already in the form that validation would give (then the full
        validation runs, and raises where it must): see :func:`_lean_rows`
        and :func:`_lean_labels`.
        """
        if sample_weight is not None or not _lean_rows(self, X):
            return None
        labels = _lean_labels(self, y, classes, X.shape[0])
        if labels is None or not np.any(labels[1] > 0):
            return None
        return labels

    def _partial_fit_lean(self, X, y_enc, w):
        """:meth:`_partial_fit` for input that :meth:`_lean_fit_input` accepted."""
        self._validate_params()
        self._check_stream_continues()
        return self._play_next_rounds(X, y_enc, w)

    @_fit_context(prefer_skip_nested_validation=True)
    def _partial_fit_checked(self, X, y, classes, sample_weight):
        with self._transaction(deep=True):
            return self._partial_fit(X, y, classes, sample_weight)

    def _partial_fit(self, X, y, classes, sample_weight):
        if self.class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' is not supported by partial_fit: one call does "
                "not show the class frequencies of the stream. Compute the weights on a "
                "large enough sample of the stream's labels, for example "
                "weights = compute_class_weight('balanced', classes=classes, y=y_sample) "
                "(sklearn.utils.class_weight), and pass them as "
                "class_weight=dict(zip(classes, weights))."
            )
        first, classes = _partial_fit_classes(self, classes)
        X, y_enc, w, classes = _validate_fit_input(self, X, y, sample_weight, classes, first)
        if first:
            self.classes_ = classes
            self._reset(X, from_partial_fit=True)
        return self._play_next_rounds(X, y_enc, w)

    def _play_next_rounds(self, X, y_enc, w):
        """Play validated rows as the next rounds of the stream (``partial_fit``)."""
        self._check_renamed_parameters()
        index = self._stream_index(X.shape[0])
        # Lines count the rounds of the whole stream.
        progress = _Progress(self, self.verbose_interval) if self.verbose else None
        rows, y_enc, w, index = self._keep_weighted(y_enc, w, index)
        self._play(X, y_enc, w, index, on_block=progress, order=rows)
        self.n_iter_ = 1
        self._end_of_call(X.shape[0])
        return self

    def _progress_counts(self):
        """Rounds and mistakes of the stream, for the progress lines."""
        counters = self._state["counters"]
        rounds, mistakes, _ = self._counter_index
        return int(counters[rounds]), int(counters[mistakes])
