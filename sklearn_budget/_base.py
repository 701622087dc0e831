"""The base class of every kernel estimator of the package.

The rounds are played by compiled code (``sklearn_budget._online_fast``):
one loop for every algorithm, and one small compiled rule per algorithm
that says when to update and how (add, remove, project, scale). Python
keeps the rest, one concern per module, which the base class assembles:

- ``_stream``: ``fit`` and ``partial_fit`` (epochs, shuffling, the checks of
  a stream that goes on), shared with :class:`~sklearn_budget.Winnow`;
- ``_validation``: the input checks and their lean bypass;
- ``_transaction``: the undo of a call that fails or is interrupted;
- ``_rounds``: the round driver, the kernel paths and their cost model,
  the capacity of the member buffers;
- ``_averaging``, ``_calibration``: the average of the stream's hypotheses
  and the bins of its progressive margins;
- ``_publish``, ``_scoring``: the fitted attributes and the scores;
- ``_loading``: a model loaded from an expansion, for parameter mixing.

This module keeps the parameters, the arrays of the model's state (which
the compiled code borrows for the length of a call) and the compiled
one-row path. ``support_`` is reported in order of the training stream.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import warnings
import weakref
from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ._averaging import _AveragingMixin, _conversion, new_pool
from ._calibration import (
    _CAL_HALF,
    _CAL_LOG_RANGE,
    _CAL_MAX_MARGIN,
    _CAL_MAX_WEIGHT,
    _CalibrationMixin,
    new_bins,
)
from ._kernels import (
    KERNELS,
    NONNEGATIVE_KERNELS,
    Kernel,
    _KernelStateMixin,
    _nonfinite_scores,
    is_nonnegative_kernel,
    resolve_gamma,
)
from ._loading import _LoadingMixin
from ._online_fast import (
    KERNEL_CODES,
    Engine,
    OneRow,
    same_objects,
)
from ._publish import _PublishMixin
from ._rounds import _max_direct_members, _overflow_message, grow_members, play_rounds
from ._scoring import _ScoringMixin
from ._stream import _OnlineStreamMixin, _parameter_values
from ._transaction import _PUBLISHED, _UNDO, _load_generator, _save_generator
from ._validation import _check_rows, _label_kinds_agree

# The API page of each estimator, linked from its HTML representation
# (scikit-learn fills in the public module and the class name).
_DOC_LINK_TEMPLATE = (
    "https://sklearn-budget.readthedocs.io/en/latest/api/generated/"
    "{estimator_module}.{estimator_name}.html"
)

# Forces the kernel path ("direct" or "blocked") instead of the cost model of
# ``_rounds``: for the tests and the benchmarks only. Read by the round
# driver (through ``_play``) and by the one-row path.
_FORCE_PATH = None

# State arrays that only Python code changes, after the compiled rounds of a
# block: a call copies them for its undo record only if it changes them.
_LAZY_UNDO_PREFIXES = ("pool_", "cal_")

# The compiled one-row path of each estimator (_OneRowPath), derived from
# its state and kept beside it, never pickled.
_ONE_ROW = weakref.WeakKeyDictionary()

# Fewest rows of a first partial_fit call from which gamma='scale' is taken
# without a warning: the variance of fewer is too noisy to fix a stream's width.
_MIN_ROWS_FOR_SCALE = 30


def _caller_stacklevel():
    """``stacklevel`` of a warning, at the first frame outside this package and scikit-learn.

    The call that warns is nested in the API's wrappers; the warning
    belongs to the user's line that made the call.
    """
    import sklearn

    inside = (os.path.dirname(__file__), os.path.dirname(sklearn.__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


def _warn_if_scale_is_unreliable(X, from_partial_fit):
    """Warn when gamma='scale' is fixed for a stream from too little data."""
    n = X.shape[0]
    with np.errstate(all="ignore"):
        var = X.power(2).mean() - X.mean() ** 2 if sp.issparse(X) else X.var()
    if var > 0 and (n >= _MIN_ROWS_FOR_SCALE or not from_partial_fit):
        return
    why = (
        "its features have zero variance, so gamma falls back to 1.0"
        if var <= 0
        else (f"it has only {n} row{'' if n == 1 else 's'}")
    )
    warnings.warn(
        f"gamma='scale' is computed once, on the call that starts the stream, and {why}. "
        "The kernel width stays fixed for the whole stream: pass a numeric gamma, for "
        "example 1 / (n_features * X.var()) computed on a representative sample of the "
        "scaled data.",
        UserWarning,
        stacklevel=_caller_stacklevel(),
    )


# Named kernels that are not positive semi-definite: no feature space in
# which the average within the budget could be projected.
_INDEFINITE_KERNELS = ("sigmoid", "additive_chi2")

# ``average`` of the rules that remove members: False, True (the average
# kept within the budget) or 'exact' (the exact average, which keeps every
# member the stream ever had: for research, it grows with the stream).
REMOVAL_AVERAGE = ["boolean", StrOptions({"exact"})]


class _KernelClassifierMixin:
    """Input validation, ``predict`` and input tags shared by the kernel classifiers.

    The estimator has a ``kernel`` parameter, ``classes_`` once fitted, and a
    ``decision_function`` of shape (n,) for two classes and (n, n_classes)
    otherwise. Comes before ``ClassifierMixin`` in the bases.
    """

    def _validate_X(self, X, reset):
        return _check_rows(self, X, reset, nonneg=is_nonnegative_kernel(self.kernel))

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
        scores = self.decision_function(X)
        if len(self.classes_) == 2:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        nonneg = is_nonnegative_kernel(self.kernel)
        tags.input_tags.sparse = not nonneg
        tags.input_tags.positive_only = nonneg
        return tags


class _Uncovered:
    """A stream the one-row path does not cover, until its parameters or state change."""

    def __init__(self, est):
        self.values = _parameter_values(est)
        self.state = est._state
        self.force = _FORCE_PATH

    def valid(self, est):
        return (
            est._state is self.state
            and same_objects(_parameter_values(est), self.values)
            and _FORCE_PATH == self.force
        )


class _OneRowPath:
    """The compiled one-row path of a stream (``_online_fast.OneRow``) and what it was built for.

    Valid while the estimator's parameters are the same objects (a changed
    parameter is validated again and gets a new rule), its state holds the
    same arrays (a regrowth or an undo replaces them), and its classes and
    random generator are the same.
    """

    def __init__(self, est):
        state, kernel = est._state, est._kernel
        self.values = _parameter_values(est)
        self.force = _FORCE_PATH
        self.scale_round = None
        self.classes = est.classes_
        self.kind = est.classes_.dtype.kind
        self.codes = {c: j for j, c in enumerate(est.classes_.tolist())}
        self.binary = est._binary
        self.rng = est._rng
        self.hooks = est._one_row_hooks()
        # The bins of the margins are recorded in compiled code as
        # _calibration.record_margins records them, unless a subclass
        # records its own way.
        self.record = type(est)._record_margins is BaseKernelOnlineClassifier._record_margins
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
        self.rule = est._make_rule()
        if self.hooks == "generator":
            self.rule.set_generator(est._rng)
        limit = est._max_members()
        direct = est._direct_only or _FORCE_PATH == "direct"
        undo = [
            name
            for name in state
            if not name.startswith(_LAZY_UNDO_PREFIXES) and name not in ("counters", "scale")
        ]
        self.fast = OneRow(
            engine,
            self.rule,
            state,
            undo,
            -1 if limit is None else limit,
            sys.maxsize if direct else _max_direct_members(n_features),
            _CAL_HALF,
            *_CAL_LOG_RANGE,
            _CAL_MAX_WEIGHT,
            _CAL_MAX_MARGIN,
            est._averages,
        )

    def valid(self, est):
        return (
            same_objects(_parameter_values(est), self.values)
            and self.fast.binds(est._state)
            and est.classes_ is self.classes
            and est._rng is self.rng
            and _FORCE_PATH == self.force
        )

    def label_code(self, y):
        """The class index of the one label of ``y``, or None (the full path decides)."""
        if not _label_kinds_agree(y.dtype.kind, self.kind):
            return None
        return self.codes.get(y.item())

    def play(self, est, label, w):
        """Play the loaded row with class index ``label`` and weight ``w``; atomic."""
        fast, rule, state = self.fast, self.rule, est._state
        y = (2 * label - 1) if self.binary else label
        # k(x, x) as the blocks compute it (the call's first failure point).
        kxx = float(est._kernel.diag(fast.row)[0])
        own = vars(est)
        saved = dict(own)
        published = _PUBLISHED.pop(est, None)
        hooks, rng_state, bins, arrays = self.hooks, None, None, None
        # The undo record of what Python changes after the round of an
        # averaged model (see below), and the lengths of the exact average's lists.
        lazy = retired_lengths = None
        try:
            # The hooks may change any state array before the round.
            fast.begin(hooks == "python")
            if hooks != "none":
                rng_state = _save_generator(est._rng)
            if hooks == "python":
                arrays = dict(state)
                est._block_start(rule, fast.row, np.array([y], dtype=np.int64), None, None)
            if not self.record:
                bins = {k: a.copy() for k, a in state.items() if k.startswith("cal_")}
            if hooks == "generator":
                # The rule draws from the generator in compiled code: hold its lock.
                with est._rng._bit_generator.lock:
                    code = fast.play(y, w, kxx, est._n_seen, self.record)
            else:
                code = fast.play(y, w, kxx, est._n_seen, self.record)
            if code == 4:
                # As _checkpoint_margins raises.
                raise _nonfinite_scores(fast.row)
            if code:
                what = (
                    "Non-finite scores at row 0 of the call"
                    if code == 2
                    else "Non-finite coefficients after the call"
                )
                raise ValueError(_overflow_message(fast.row, np.array([w]), what))
            if not self.record:
                est._record_margins(
                    np.array([fast.margin]),
                    np.array([max(y, 0) if self.binary else y], dtype=np.intp),
                    np.array([w]),
                    np.array([float(state["counters"][1])]),
                )
            # Averaged models, in the order of _play: the members that left
            # are folded into the average (a removal rule's update), and at a
            # checkpoint round the average is taken. Both are Python's and
            # change only arrays that the compiled undo does not keep (the
            # pool, the checkpoint's): their undo record is _before_change's.
            retired = fast.engine.retired() if fast.averaged else None
            if retired is not None or fast.averaged and fast.checkpoint_due:
                lazy = _UNDO[est] = {"_state": dict(state), "_lazy": set()}
                retired_lengths = [len(kept) for kept in est._retired_lists()]
            if retired is not None:
                est._fold_retired(retired, None)
            if hooks == "python":
                est._block_end(rule, fast.row, None)
            if lazy is not None:
                if fast.checkpoint_due:
                    est._take_checkpoint()
                fast.rebind()
            if fast.averaged and not est._average_is_finite():
                raise ValueError(
                    _overflow_message(
                        fast.row, np.array([w]), "Non-finite averaged coefficients after the call"
                    )
                )
            est._n_seen = saved["_n_seen"] + 1
            est.n_iter_ = 1
            est.n_mistakes_ = int(state["counters"][2])
            fast.active = False  # the call is done: nothing to undo
        except BaseException:
            fast.undo()
            if arrays is not None:
                state.clear()
                state.update(arrays)
            if lazy is not None:
                for name, a in lazy["_state"].items():
                    if name.startswith(_LAZY_UNDO_PREFIXES):
                        state[name] = a
                for kept, n in zip(est._retired_lists(), retired_lengths):
                    del kept[n:]
            if bins is not None:
                for k, a in bins.items():
                    np.copyto(state[k], a)
            if rng_state is not None:
                _load_generator(est._rng, rng_state)
            own.clear()
            own.update(saved)
            if published is not None:
                _PUBLISHED[est] = published
            raise
        finally:
            if lazy is not None:
                _UNDO.pop(est, None)

    def proba_scale(self, est):
        """``est.proba_scale_``, kept until a round is played or undone.

        The scale is fitted to the bins of the margins, which change only
        with the rounds (an undo puts back the bins with the round count);
        between two rounds a stream of predictions reads it once.
        """
        t = self.fast.rounds
        if self.scale_round != t:
            self.scale = est.proba_scale_
            self.scale_round = t
        return self.scale


class BaseKernelOnlineClassifier(
    _KernelStateMixin,
    _OnlineStreamMixin,
    _AveragingMixin,
    _CalibrationMixin,
    _PublishMixin,
    _ScoringMixin,
    _LoadingMixin,
    _KernelClassifierMixin,
    ClassifierMixin,
    BaseEstimator,
):
    """Base class of the online kernel classifiers.

    Subclasses implement :meth:`_make_rule`, which returns the compiled rule
    of the algorithm, and may override :meth:`_reset_rule` to add the
    arrays of the rule's own state (:meth:`_add_state`).
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="left")],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "average": ["boolean"],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "verbose_interval": [Interval(Integral, 1, None, closed="left")],
    }

    _doc_link_module = "sklearn_budget"
    _doc_link_template = _DOC_LINK_TEMPLATE

    #: Whether the engine keeps the Gram matrix of the members.
    _keeps_gram = False

    #: Whether the rule ever removes a member.
    _removes_members = False
    #: Whether parameter mixing trains it: it loads a mixed expansion and
    #: compresses it to its ``budget`` (see ``_loading.py``).
    _mixable = False

    #: Whether the later epochs of ``fit`` mostly rescale the last hypothesis,
    #: so that the recorded margins follow its norm (see _rescale_margins).
    _epochs_rescale = False

    #: Whether the rule needs the direct kernel path (it creates members
    #: that are not rows of the stream, so have no column in a block).
    _direct_only = False

    #: Parameters fixed for the whole of a stream: they shape its function
    #: space or its state, so a stream cannot go on once they change.
    _stream_params = ("kernel", "gamma", "degree", "coef0", "kernel_params", "average")

    # The state's counters: members, rounds, mistakes, updates of the epoch.
    _counter_index = (1, 2, 3)

    _lazy_undo_prefixes = _LAZY_UNDO_PREFIXES

    _mutable_attributes = ("_member_axes", "_retired_sv", "_retired_idx", "_retired_acc")

    @abstractmethod
    def __init__(
        self,
        *,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        kernel_params=None,
        max_iter=5,
        tol=1e-3,
        n_iter_no_change=5,
        shuffle=True,
        class_weight=None,
        average=False,
        warm_start=False,
        random_state=None,
        verbose=0,
        verbose_interval=10_000,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.class_weight = class_weight
        self.average = average
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.verbose_interval = verbose_interval

    # ------------------------------------------------------------------
    # What an algorithm states
    # ------------------------------------------------------------------
    @abstractmethod
    def _make_rule(self):
        """The compiled rule (an ``_online_fast.Rule``) with the current parameters."""

    def _max_members(self):
        """Most members the rule ever holds (None: unbounded)."""
        return None

    def _reset_rule(self):
        """Add the arrays of the rule's state (see :meth:`_add_state`)."""

    def _add_state(self, name, array, member_axes=()):
        """Register an array of the model's state.

        ``member_axes`` are the axes indexed by member position (``"packed"``
        for a packed triangle), grown with the support set.
        """
        self._state[name] = array
        self._member_axes[name] = member_axes

    def _prepare_block(self, b):
        """Grow the rule's own buffers before a block of ``b`` rows; whether they moved."""
        return False

    def _block_start(self, rule, Xb, yb, Z, Kc):
        """Called before the rounds of a block (``Z``, ``Kc``: None on the direct path)."""

    def _block_end(self, rule, Xb, Z):
        """Called after the rounds of a block."""

    # ------------------------------------------------------------------
    # State
    # ------------------------------------------------------------------
    @property
    def _n(self):
        return int(self._state["counters"][0])

    @property
    def _t(self):
        return int(self._state["counters"][1])

    @property
    def _sv(self):
        """Rows of the members, in position order."""
        if self._dense:
            return self._state["Xs"][: self._n]
        return self._sv_sparse

    def _reset(self, X, from_partial_fit=False):
        """Start a new stream of the classes ``classes_``: empty support set,
        counters at zero."""
        self._binary = len(self.classes_) == 2
        if (
            self.average is True
            and self._removes_members
            and isinstance(self.kernel, str)
            and self.kernel in _INDEFINITE_KERNELS
        ):
            # The pool projects in the kernel's feature space, which these
            # kernels do not define (additive_chi2 has k(x, x) = 0: every
            # function would be projected away).
            raise ValueError(
                f"average=True keeps the average within the budget by projections in "
                f"the kernel's feature space, and kernel={self.kernel!r} is not positive "
                "semi-definite: use average=False, or average='exact' (which grows with "
                "the stream), or a positive semi-definite kernel such as 'rbf'."
            )
        if self.gamma == "scale" and isinstance(self.kernel, str):
            _warn_if_scale_is_unreliable(X, from_partial_fit)
        self._kernel = Kernel(
            self.kernel,
            gamma=resolve_gamma(self.gamma, X),
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
        )
        self.gamma_ = self._kernel.gamma
        self._kernel_code = KERNEL_CODES.get(self.kernel) if isinstance(self.kernel, str) else None
        self._dense = not sp.issparse(X)
        n_rows = 1 if self._binary else len(self.classes_)
        # The online-to-batch conversion of the stream: "last", "average" or
        # "vote" (only where the constraints of ``average`` accept it).
        self._conversion = _conversion(self.average)
        # The one-row path of an earlier stream holds its arrays: let them go.
        _ONE_ROW.pop(self, None)
        self._state, self._member_axes = {}, {}
        self._add_state("counters", np.zeros(4, dtype=np.int64))  # n, t, mistakes, updates
        # Global scale of the stored coefficients, and the averaging clock.
        self._add_state("scale", np.array([1.0, 0.0]))
        for name, array in new_bins(len(self.classes_)).items():
            self._add_state(name, array)
        if self._conversion in ("average", "exact"):
            # The averaged hypothesis of the last checkpoint (see _play):
            # empty before the first round.
            self._add_state("cal_avg_t", np.zeros(1, dtype=np.int64))
            self._add_state("cal_avg_coef", np.zeros((n_rows, 0)))
            if sp.issparse(X):
                self._add_state("cal_avg_data", np.zeros(0))
                self._add_state("cal_avg_indices", np.zeros(0, dtype=np.int64))
                self._add_state("cal_avg_indptr", np.zeros(1, dtype=np.int64))
            else:
                self._add_state("cal_avg_sv", np.zeros((0, X.shape[1])))
        self._add_state("alpha", np.zeros((0, n_rows)), (0,))
        for name in ("idx", "born", "cols"):
            self._add_state(name, np.zeros(0, dtype=np.int64), (0,))
        self._add_state("kdiag", np.zeros(0), (0,))
        if self._averages:
            self._add_state("acc", np.zeros((0, n_rows)), (0,))
            self._add_state("stamp", np.zeros(0), (0,))
        if self._bounded_pool:
            # The averaged hypothesis within the budget (see _averaging.py).
            for name, array in new_pool(n_rows).items():
                self._add_state(name, array)
            self._pool_X = X[:0] if sp.issparse(X) else np.zeros((0, X.shape[1]))
        if self._keeps_gram:
            self._add_state("gram", np.zeros((0, 0)), (0, 1))
        if self._dense:
            self._add_state("Xs", np.zeros((0, X.shape[1])), (0,))
        else:
            self._sv_sparse = sp.csr_matrix(X[:0])
        self._retired_sv = []
        self._retired_idx = []
        self._retired_acc = []
        self._n_seen = 0
        self._stream_config = {name: getattr(self, name) for name in self._stream_params}
        self.n_mistakes_ = 0
        self._rng = check_random_state(self.random_state)
        self._reset_rule()

    def _ensure_capacity(self, need):
        """Grow the member buffers to hold ``need`` members; whether they moved."""
        if not grow_members(self._state, self._member_axes, need, self._max_members()):
            return False
        _ONE_ROW.pop(self, None)  # it holds the arrays just replaced
        return True

    def _as_stream_format(self, X):
        if self._dense:
            return X.toarray() if sp.issparse(X) else np.ascontiguousarray(X)
        return X if sp.issparse(X) else sp.csr_matrix(X)

    # ------------------------------------------------------------------
    # The stream (see _stream._OnlineStreamMixin)
    # ------------------------------------------------------------------
    def _play(self, X, y, w, index, on_block=None, calibrate=True):
        """Play the rounds ``(X[i], y[i])`` in order (:func:`._rounds.play_rounds`).

        ``y`` holds the class indices, ``w`` the sample weights (all
        positive) and ``index`` the identifier stored in ``support_`` for
        each row.
        """
        if type(self)._block_start is not BaseKernelOnlineClassifier._block_start:
            self._before_change("_rng")  # the rule's own draws, if any
        play_rounds(self, X, y, w, index, on_block, calibrate, _FORCE_PATH)

    def _play_epochs(self, X, y, w, index, rng, warm):
        # The later epochs rescale the margins of this fit only (budgeted
        # SGD): those of the earlier calls of the stream wait aside.
        earlier = self._set_aside_bins(warm)
        super()._play_epochs(X, y, w, index, rng, warm)
        self._add_back_bins(earlier)

    def _stream_index(self, n_rows):
        return self._n_seen + np.arange(n_rows)

    def _end_of_call(self, n_rows):
        self._n_seen += n_rows
        self.n_mistakes_ = int(self._state["counters"][2])

    def _takes_lean_rows(self):
        return (
            self._dense and self._kernel_code is not None and self.kernel not in NONNEGATIVE_KERNELS
        )

    def _nonnegative_input(self):
        return is_nonnegative_kernel(self.kernel)

    # ------------------------------------------------------------------
    # One row at a time (the compiled one-row path)
    # ------------------------------------------------------------------
    def _partial_fit_one_row(self, X, y, classes):
        """Play a one-row call on the compiled one-row path; whether it did.

        Takes only what a few cheap tests prove valid: a float64 array of
        one finite row of the fitted width (any layout), a one-label array
        of a known class, ``classes`` absent or the stream's. Anything else,
        and any stream the path does not cover (see :meth:`_one_row_path`),
        returns False before anything changed: the caller's full path
        validates with scikit-learn's messages.
        """
        if not (
            type(X) is np.ndarray
            and X.dtype == np.float64
            and X.ndim == 2
            and X.shape[0] == 1
            and type(y) is np.ndarray
            and y.shape == (1,)
            and "_state" in vars(self)
        ):
            return False
        if (
            X.shape[1] != self.n_features_in_
            or "feature_names_in_" in vars(self)
            or classes is not None
            and not (type(classes) is np.ndarray and np.array_equal(classes, self.classes_))
        ):
            return False
        path = self._current_one_row_path()
        if path is None:
            return False
        label = path.label_code(y)
        if label is None:
            return False
        if self.class_weight is None:
            w = 1.0
        elif isinstance(self.class_weight, dict):
            w = float(self._class_weights(self.classes_, y)[label])
            if not w > 0:
                return False
        else:
            return False
        if not path.fast.load(X):
            return False
        return self._play_loaded_row(path, label, w)

    def _play_loaded_row(self, path, label, w):
        """Play the row loaded in ``path``; False (nothing changed) if it needs the full path."""
        if not path.fast.fits():
            return False
        if path.hooks == "python":
            arrays = dict(self._state)
            if self._prepare_block(1):
                # The rule's buffers need room: put them back, the full path grows them.
                self._state.clear()
                self._state.update(arrays)
                return False
        path.play(self, label, w)
        return True

    def _current_one_row_path(self):
        """The valid one-row path of this fitted stream, built if needed, or None."""
        path = _ONE_ROW.get(self)
        if path is None or not path.valid(self):
            path = self._one_row_path()
        return path if type(path) is _OneRowPath else None

    def _partial_fit_event(self, x, columns, label):
        """River's ``learn_one``: play the event ``x``, a dict of features
        (``columns`` maps a key to its column), of class index ``label``.

        Whether it was played: False, with nothing changed, where the
        one-row path does not apply or a value is not a finite number (the
        caller then takes ``partial_fit``, and its messages).
        """
        if "_state" not in vars(self) or "feature_names_in_" in vars(self):
            return False
        path = self._current_one_row_path()
        if path is None or self.class_weight is not None:
            return False
        try:
            finite = path.fast.load_dict(x, columns)
        except (TypeError, ValueError, OverflowError):
            return False
        return finite and self._play_loaded_row(path, label, 1.0)

    def _event_scores(self, x, columns, proba=False):
        """River's predictions: the scores of the event ``x`` (see
        :meth:`_partial_fit_event`), a float for two classes and a list
        otherwise, or None where the one-row path does not apply or a value
        is not a finite number (then :meth:`decision_function` decides).
        ``proba``: the list of the probabilities of ``predict_proba``
        instead (up to rounding).

        The scores of the last hypothesis, computed as the next round
        computes them, or those of the published average (averaged models):
        equal to :meth:`decision_function` up to rounding.
        """
        path = _ONE_ROW.get(self)
        if type(path) is not _OneRowPath or not path.fast.binds(self._state):
            if "_state" not in vars(self):
                return None
            try:  # a stream the one-row path covers, whose parameters are valid
                path = self._current_one_row_path()
            except Exception:
                path = None
            if path is None:
                return None
        conversion = self._conversion
        if conversion not in ("last", "average", "exact") or "feature_names_in_" in vars(self):
            return None
        try:
            if conversion == "last":
                scores = path.fast.score_dict(x, columns)
            else:
                # The published average (derived once after each change).
                scores = path.fast.expansion_dict(
                    x,
                    columns,
                    self._fitted_attribute("support_vectors_"),
                    self._fitted_attribute("dual_coef_"),
                )
            if scores is None or not proba:
                return scores
            return path.fast.proba_of_scores(path.proba_scale(self))
        except (TypeError, ValueError, OverflowError):
            return None

    def _one_row_path(self):
        """The compiled one-row path of this stream (:class:`_OneRowPath`), or None.

        Validates the parameters first (they are validated on every call of a
        stream), and raises as the full path would. None where the path does
        not apply: sparse streams, kernels without a compiled form, progress
        output.
        """
        self._validate_params()
        self._check_stream_continues()
        if (
            self.verbose
            or not self._dense
            or self._kernel_code is None
            or self.kernel in ("chi2", "additive_chi2")
            or _FORCE_PATH == "blocked"
        ):
            # Remembered until the parameters or the state change, so that
            # the one-row calls of such a stream do not ask again.
            _ONE_ROW[self] = _Uncovered(self)
            return None
        path = _ONE_ROW[self] = _OneRowPath(self)
        return path

    def _one_row_hooks(self):
        """How the one-row path plays the rule's own work of a block.

        ``"none"``: there is none (the hooks are the base class's);
        ``"generator"``: the rule draws from ``_rng`` itself
        (``set_generator``); ``"python"``: call :meth:`_prepare_block`,
        :meth:`_block_start` and :meth:`_block_end` around the round.
        """
        base = BaseKernelOnlineClassifier
        cls = type(self)
        if (
            cls._prepare_block is base._prepare_block
            and cls._block_start is base._block_start
            and cls._block_end is base._block_end
        ):
            return "none"
        return "python"
