"""The base class of every kernel estimator of the package.

The rounds are played by compiled code (``sklearn_budget._engine``):
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
from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from . import _one_row
from ._averaging import _AveragingMixin, _conversion, new_pool
from ._calibration import (
    _CalibrationMixin,
    new_bins,
)
from ._dense_rows import KERNEL_CODES
from ._kernels import (
    KERNELS,
    NONNEGATIVE_KERNELS,
    Kernel,
    _KernelStateMixin,
    as_matrix,
    entry_variance,
    is_nonnegative_kernel,
    resolve_gamma,
    scale_gamma,
)
from ._loading import _LoadingMixin
from ._publish import _PublishMixin
from ._rounds import grow_members, play_rounds
from ._scoring import _ScoringMixin
from ._stream import _OnlineStreamMixin, _predicted_index
from ._validation import _check_rows

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


def _stream_gamma(gamma, X, from_partial_fit, named_kernel=True):
    """The numeric ``gamma`` of a stream that the rows ``X`` start; for
    ``'scale'`` of a named kernel, with a warning when they are too few to fix it."""
    if not (isinstance(gamma, str) and gamma == "scale" and named_kernel):
        return resolve_gamma(gamma, X)
    var = entry_variance(X)
    _warn_if_scale_is_unreliable(var, X.shape[0], from_partial_fit)
    return scale_gamma(var, X)


def _warn_if_scale_is_unreliable(var, n, from_partial_fit):
    """Warn when gamma='scale' is fixed for a stream from too little data
    (``var``: the variance of the entries of the ``n`` rows of the call)."""
    if not np.isfinite(var):
        return  # an overflow: scale_gamma raises the error that says so
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
        # Scored first: an unfitted model raises NotFittedError there.
        scores = self.decision_function(X)
        return self.classes_[_predicted_index(scores)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        nonneg = is_nonnegative_kernel(self.kernel)
        tags.input_tags.sparse = not nonneg
        tags.input_tags.positive_only = nonneg
        return tags


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

    _mutable_attributes = ("_member_axes",)

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
        """The compiled rule (an ``_engine.Rule``) with the current parameters."""

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
        # Between the blocks of a call, the buffers' views (_rounds._BlockRows).
        self._sv_sparse = as_matrix(self._sv_sparse)
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
        self._kernel = Kernel(
            self.kernel,
            gamma=_stream_gamma(self.gamma, X, from_partial_fit, isinstance(self.kernel, str)),
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
        _one_row.forget(self)
        self._state, self._member_axes = {}, {}
        self._add_state("counters", np.zeros(4, dtype=np.int64))  # n, t, mistakes, updates
        # Global scale of the stored coefficients, and the averaging clock.
        self._add_state("scale", np.array([1.0, 0.0]))
        for name, array in new_bins(len(self.classes_)).items():
            self._add_state(name, array)
        self._add_state("alpha", np.zeros((0, n_rows)), (0,))
        for name in ("idx", "born", "cols"):
            self._add_state(name, np.zeros(0, dtype=np.int64), (0,))
        self._add_state("kdiag", np.zeros(0), (0,))
        if self._averages:
            self._add_state("acc", np.zeros((0, n_rows)), (0,))
            self._add_state("stamp", np.zeros(0), (0,))
        if self._averages:
            # The members that left, for the average (see _averaging.py).
            for name, array in new_pool(n_rows, X.shape[1], self._dense).items():
                self._add_state(name, array)
            if not self._dense:
                self._pool_X = sp.csr_matrix(X[:0])
        if self._keeps_gram:
            self._add_state("gram", np.zeros((0, 0)), (0, 1))
        if self._dense:
            self._add_state("Xs", np.zeros((0, X.shape[1])), (0,))
        else:
            self._sv_sparse = sp.csr_matrix(X[:0])
        self._n_seen = 0
        self._stream_config = {name: getattr(self, name) for name in self._stream_params}
        self.n_mistakes_ = 0
        self._rng = check_random_state(self.random_state)
        self._reset_rule()

    def _ensure_capacity(self, need):
        """Grow the member buffers to hold ``need`` members; whether they moved."""
        if not grow_members(self._state, self._member_axes, need, self._max_members()):
            return False
        _one_row.forget(self)  # it holds the arrays just replaced
        return True

    def _as_stream_format(self, X):
        X = as_matrix(X)
        if self._dense:
            return X.toarray() if sp.issparse(X) else np.ascontiguousarray(X)
        return X if sp.issparse(X) else sp.csr_matrix(X)

    # ------------------------------------------------------------------
    # The stream (see _stream._OnlineStreamMixin)
    # ------------------------------------------------------------------
    def _play(self, X, y, w, index, on_block=None, calibrate=True, order=None):
        """Play the rounds ``(X[order[i]], y[i])`` in order (:func:`._rounds.play_rounds`).

        ``y`` holds the class indices, ``w`` the sample weights (all
        positive) and ``index`` the identifier stored in ``support_`` for
        each round; ``order``: the rows of ``X`` played (None: all, in order).
        """
        if type(self)._block_start is not BaseKernelOnlineClassifier._block_start:
            self._before_change("_rng")  # the rule's own draws, if any
        play_rounds(self, X, y, w, index, on_block, calibrate, _FORCE_PATH, order)

    def _play_epochs(self, X, rows, y, w, index, rng, warm):
        # The later epochs rescale the margins of this fit only (budgeted
        # SGD): those of the earlier calls of the stream wait aside.
        earlier = self._set_aside_bins(warm)
        second_half = super()._play_epochs(X, rows, y, w, index, rng, warm)
        self._add_back_bins(earlier)
        return second_half

    def _predict_rows(self, X):
        # The scores of decision_function without its validation of X (half
        # a millisecond for the end-of-fit check's rows of a wide CSR input,
        # rows of the validated X): the same predictions.
        return self.classes_[_predicted_index(self._scores(X))]

    def _scorer_of_the_average(self):
        if not self._averages or self._t == 0:
            return None
        # The pool and the members as they are: scoring them (up to
        # POOL_FACTOR + 1 budgets of them) on the rows checked costs less than
        # compressing them (O(budget^3)). A copy: the members may be a view
        # of the rows that the rounds go on changing.
        n, state = self._n, self._state
        sv, _, coef = self._averaged_members(
            self._sv, state["idx"][:n], state["alpha"][:n].T, compress_pool=False
        )
        sv = sv.copy()
        return lambda X: self._expansion(X, sv, coef)

    def _stream_index(self, n_rows):
        return self._n_seen + np.arange(n_rows)

    def _end_of_call(self, n_rows):
        self._n_seen += n_rows
        self.n_mistakes_ = int(self._state["counters"][2])
        if self._bounded_pool and n_rows * self.n_iter_ >= self.budget:
            # The average within the budget, published now rather than by
            # the first prediction. Its compression costs about what
            # ``budget`` rounds do (O(budget^2 d)): a call of fewer rounds (a
            # one-row call, a small chunk of a stream) leaves it to the first
            # read, which a stream of such calls may never make.
            self._publish_now()

    def _takes_lean_rows(self):
        return (
            self._dense and self._kernel_code is not None and self.kernel not in NONNEGATIVE_KERNELS
        )

    def _nonnegative_input(self):
        return is_nonnegative_kernel(self.kernel)

    # ------------------------------------------------------------------
    # One row at a time (the compiled one-row path, ``_one_row.py``)
    # ------------------------------------------------------------------
    def _partial_fit_one_row(self, X, y, classes):
        """Play a one-row call on the compiled one-row path; whether it did
        (:func:`~sklearn_budget._one_row.partial_fit_one_row`)."""
        return _one_row.partial_fit_one_row(self, X, y, classes)

    def _partial_fit_event(self, x, columns, label):
        """River's ``learn_one`` on the compiled one-row path: whether it
        played the event (:func:`~sklearn_budget._one_row.learn_event`)."""
        return _one_row.learn_event(self, x, columns, label)

    def _event_scores(self, x, columns, proba=False):
        """River's predictions on the compiled one-row path, or None
        (:func:`~sklearn_budget._one_row.event_scores`)."""
        return _one_row.event_scores(self, x, columns, proba)
