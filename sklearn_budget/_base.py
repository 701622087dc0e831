"""The online engine shared by every kernel estimator of the package.

The rounds are played by compiled code (``sklearn_budget._engine``):
one loop for every algorithm, and one small compiled rule per algorithm
that says when to update and how (add, remove, project, scale). This module
keeps what belongs to Python: parameter and input validation, the
scikit-learn API, the fitted attributes, and the arrays of the model's
state, which the compiled code borrows for the length of a call.

Each round is played exactly as the per-sample algorithm plays it: the
kernel row of the round against the current members, the scores of the
current hypothesis computed afresh from the coefficients, the margin, then
the update. Only where the kernel values come from changes, chosen per
block of ``_BLOCK_SIZE`` rows by a cost model (:func:`_direct_pays`):

- **direct**: the compiled loop computes each kernel row from the stored
  member rows (dense input, built-in kernels). Cheapest in low dimension,
  where a round's kernel work is a few hundred flops.
- **blocked**: one :func:`~sklearn.metrics.pairwise.pairwise_kernels` call
  gives ``K(block, [members; block])`` (BLAS for the inner products), the
  block against the members of its start *and* against its own rows, so
  that a row that joins during the block already has its kernel column.
  Used for high dimension, sparse input, and callable kernels.

Members are stored in capacity buffers that grow geometrically, and never
beyond ``budget + 1`` for a budget algorithm; a removal moves the last member
into the freed place. ``support_`` is reported in order of the training
stream.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import warnings
import weakref
from abc import abstractmethod
from contextlib import nullcontext
from numbers import Integral, Real
from time import perf_counter

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    check_non_negative,
    column_or_1d,
    validate_data,
)

from . import _one_row
from ._averaging import bounded_average, fold, kernel_values, new_pool
from ._calibration import (
    SCALE_HINTS,
    fit_scale,
    log_probabilities,
    new_bins,
    record_margins,
    rescale_bins,
)
from ._dense_rows import KERNEL_CODES
from ._engine import Engine
from ._kernels import (
    KERNELS,
    Kernel,
    _KernelStateMixin,
    _nonfinite_scores,
    is_nonnegative_kernel,
    resolve_gamma,
    single_blas_thread,
)
from ._margins import expansion_margins, next_checkpoint
from ._progress import _Progress
from ._random import generator_state, set_generator_state

# The API page of each estimator, linked from its HTML representation
# (scikit-learn fills in the public module and the class name).
_DOC_LINK_TEMPLATE = (
    "https://sklearn-budget.readthedocs.io/en/latest/api/generated/"
    "{estimator_module}.{estimator_name}.html"
)

# Rows per block: the unit of kernel work of the blocked path, and of the
# calls into the compiled loop (an interrupt is seen between blocks).
_BLOCK_SIZE = 256

# Forces the kernel path ("direct" or "blocked") instead of the cost model:
# for the tests and the benchmarks only.
_FORCE_PATH = None

# Cost model of a block, in nanoseconds, fitted to benchmarks/bench_crossover.py
# (2-core x86-64 machine, one BLAS thread, rbf). Direct: each kernel value
# costs a compiled loop over the features plus an exp and its share of the
# scores. Blocked: one pairwise_kernels call costs about a millisecond of
# validation and temporaries, then per kernel value a BLAS share of the
# features and a few elementwise passes. Measured crossover: about 100
# features at |S| = 100, about 16 at |S| = 1000.
_DIRECT_NS_PER_FEATURE = 0.95
_DIRECT_NS_PER_VALUE = 9.0
_BLOCKED_NS_PER_FEATURE = 0.08
_BLOCKED_NS_PER_VALUE = 9.0
_BLOCKED_NS_PER_CALL = 1_000_000.0

# Largest block product run on BLAS threads: smaller ones are faster on one
# thread than on threads that compete with other work on a busy machine.
_SINGLE_THREAD_FLOPS = 5e7


# What the estimators derive from their state, kept beside them rather than
# in their ``__dict__``: the fitted attributes (computed on first access after
# a call that changed the state, see ``_fitted_attribute``), the parameter
# values last validated, and the undo record of the call in progress. Their
# ``__dict__`` then holds the state alone, whatever was read from it.
_PUBLISHED = weakref.WeakKeyDictionary()
_VALIDATED = weakref.WeakKeyDictionary()
_UNDO = weakref.WeakKeyDictionary()

# State arrays that only Python code changes, after the compiled rounds of a
# block: a call copies them for its undo record only if it changes them.
_LAZY_UNDO_PREFIXES = ("pool_", "cal_")


def _direct_pays(n_members, n_rows, n_features):
    """Whether computing the block's kernel rows in the loop beats one BLAS block."""
    direct = n_members * n_rows * (n_features * _DIRECT_NS_PER_FEATURE + _DIRECT_NS_PER_VALUE)
    blocked = _BLOCKED_NS_PER_CALL + n_rows * (n_members + n_rows) * (
        n_features * _BLOCKED_NS_PER_FEATURE + _BLOCKED_NS_PER_VALUE
    )
    return direct <= blocked


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


def _reject_datetime(X):
    """Dates and durations are not features: refuse them instead of casting."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and not isinstance(dtypes, np.dtype):
        kinds = [getattr(d, "kind", "O") for d in dtypes]
    else:
        kinds = [getattr(getattr(X, "dtype", None), "kind", "f")]
    if any(k in "mM" for k in kinds):
        raise TypeError(
            "X has datetime64 or timedelta64 values, which are not numeric features: "
            "convert them to numbers first (for example seconds since a reference date)."
        )


def _check_targets(X, y, sample_weight, classes):
    """Validate ``y``, ``classes`` and ``sample_weight`` against validated ``X``.

    Returns ``y`` as a 1-D array, the classes (those of ``y`` when ``classes``
    is None) and the sample weights as float64 (ones when None). Shared by
    every estimator that learns from a stream.
    """
    check_classification_targets(y)
    y = column_or_1d(y, warn=True)
    check_consistent_length(X, y)
    if classes is None:
        classes = unique_labels(y)
    unseen = np.setdiff1d(unique_labels(y), classes)
    if unseen.size:
        raise ValueError(
            f"y contains labels {unseen.tolist()} that are not in classes={classes.tolist()}."
        )
    if len(classes) < 2:
        raise ValueError(
            f"The number of classes has to be greater than one; got {len(classes)} class"
        )
    if sample_weight is None:
        w = np.ones(X.shape[0])
    else:
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if not np.any(w > 0):
            raise ValueError("The sample weights are all zero: at least one must be positive.")
    return y, classes, w


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


def _overflow_message(X, w, what):
    amax = abs(X).max() if X.shape[0] else 0.0
    wmax = np.max(w, initial=0.0)
    return (
        f"{what}: the kernel values or the coefficients overflowed (largest |x| in "
        f"the call: {amax:.3g}, largest sample_weight: {wmax:.3g}). Scale the features "
        "(for example with StandardScaler), or use a smaller gamma or smaller sample "
        "weights. The model is left as it was before the call."
    )


def _vstack(A, B):
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    return np.concatenate([A, B], axis=0)


def _regrow(a, axes, new):
    """Copy of ``a`` with the member axes ``axes`` grown to ``new`` entries.

    ``axes="packed"`` is a packed lower triangle of ``new`` rows.
    """
    if axes == "packed":
        out = np.zeros(new * (new + 1) // 2, dtype=a.dtype)
        out[: a.shape[0]] = a
        return out
    shape = list(a.shape)
    for ax in axes:
        shape[ax] = new
    out = np.zeros(shape, dtype=a.dtype)
    out[tuple(slice(0, s) for s in a.shape)] = a
    return out


# Named kernels that are not positive semi-definite: no feature space in
# which the average within the budget could be projected.
_INDEFINITE_KERNELS = ("sigmoid", "additive_chi2")

# ``average`` of the rules that remove members: False, True (the average
# kept within the budget) or 'exact' (the exact average, which keeps every
# member the stream ever had: for research, it grows with the stream).
REMOVAL_AVERAGE = ["boolean", StrOptions({"exact"})]


def _conversion(average):
    """The online-to-batch conversion named by ``average``.

    "last", "average" (bounded by the budget for the removal rules),
    "exact" (the unbounded average of the removal rules) or "vote".
    """
    if isinstance(average, str):
        return average
    return "average" if average else "last"


def _label_kinds_agree(kind, classes_kind):
    """Whether labels of dtype kind ``kind`` compare with classes of kind
    ``classes_kind`` as validation would convert them (integers, or the
    same kind of booleans or strings)."""
    return kind in "iu" and classes_kind in "iu" or kind == classes_kind and kind in "bU"


def _lean_labels(estimator, y, classes, n_rows):
    """``(y_enc, w)`` for labels that validation would not change, else None.

    ``y`` must be an array of ``n_rows`` known classes of the kind of
    ``classes_``, ``classes`` None or the stream's, and ``class_weight``
    None or a dict; ``y_enc`` are the class indices, ``w`` the weight of
    each row's class. None otherwise: the full validation runs, and raises
    where it must (an unseen class, for one).
    """
    classes_ = estimator.classes_
    if classes is not None and not (
        type(classes) is np.ndarray and np.array_equal(classes, classes_)
    ):
        return None
    if type(y) is not np.ndarray or y.shape != (n_rows,):
        return None
    if not _label_kinds_agree(y.dtype.kind, classes_.dtype.kind):
        return None
    y_enc = np.searchsorted(classes_, y)
    if y_enc.max() >= len(classes_) or not (classes_[y_enc] == y).all():
        return None
    if estimator.class_weight is None:
        return y_enc, np.ones(n_rows)
    if isinstance(estimator.class_weight, dict):
        return y_enc, estimator._class_weights(classes_, y)[y_enc]
    return None


def _check_rows(estimator, X, reset, nonneg):
    """Validate ``X`` as float64 rows (``validate_data``), dense or CSR.

    ``nonneg``: the kernel takes dense non-negative input only. Sparse input
    comes back in canonical form, copied if it was not: sparse products sort
    the indices in place, and the caller's matrix is never modified.
    """
    _reject_datetime(X)
    X = validate_data(
        estimator,
        X,
        accept_sparse=False if nonneg else "csr",
        dtype=np.float64,
        reset=reset,
    )
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if nonneg:
        name = type(estimator).__name__
        check_non_negative(X, f"{name} with kernel={estimator.kernel!r}")
    return X


def _fitted_property(name):
    """A fitted attribute derived from the state on first access after a change."""

    def get(self):
        return self._fitted_attribute(name)

    get.__name__ = name
    return property(get)


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


def _save_generator(rng):
    """The state of ``rng`` for an undo record.

    A copy of the bit generator's state where there is one (a RandomState
    on MT19937: ``get_state`` costs tens of microseconds), else ``get_state``.
    """
    saved = generator_state(rng)
    return ("bytes", saved) if saved is not None else ("numpy", rng.get_state())


def _load_generator(rng, saved):
    """Put back a state that :func:`_save_generator` saved."""
    kind, value = saved
    if kind == "bytes":
        set_generator_state(rng, value)
    else:
        rng.set_state(value)


class BaseKernelOnlineClassifier(
    _KernelStateMixin, _KernelClassifierMixin, ClassifierMixin, BaseEstimator
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

    #: Whether the later epochs of ``fit`` mostly rescale the last hypothesis,
    #: so that the recorded margins follow its norm (see _rescale_margins).
    _epochs_rescale = False

    #: Whether the rule needs the direct kernel path (it creates members
    #: that are not rows of the stream, so have no column in a block).
    _direct_only = False

    #: Parameters fixed for the whole of a stream: they shape its function
    #: space or its state, so a stream cannot go on once they change.
    _stream_params = ("kernel", "gamma", "degree", "coef0", "kernel_params", "average")

    # The fitted attributes that the state determines are derived from it
    # when first read after a call that changed it, not by every call: with
    # the bounded average that costs O(budget^3), and a stream of one-row
    # calls would pay it per row. Reading them does not change ``__dict__``.
    support_ = _fitted_property("support_")
    support_vectors_ = _fitted_property("support_vectors_")
    dual_coef_ = _fitted_property("dual_coef_")
    proba_scale_ = _fitted_property("proba_scale_")
    vote_index_ = _fitted_property("vote_index_")
    vote_dual_coef_ = _fitted_property("vote_dual_coef_")
    vote_counts_ = _fitted_property("vote_counts_")

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

    # ------------------------------------------------------------------
    # State
    # ------------------------------------------------------------------
    @property
    def _averages(self):
        """Whether the engine keeps the running sums of the average."""
        return self._conversion in ("average", "exact")

    @property
    def _bounded_pool(self):
        """Whether the average is kept within the budget by a pool (removal rules)."""
        return self._conversion == "average" and self._removes_members

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
        """Start a new stream: empty support set, counters at zero."""
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
        _one_row.forget(self)
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
        cap = self._state["alpha"].shape[0]
        limit = self._max_members()
        if limit is not None:
            need = min(need, limit)
        if need <= cap:
            return False
        new = max(need, 2 * cap, 16)
        if limit is not None:
            new = min(new, limit)
        for name, axes in self._member_axes.items():
            if axes:
                self._state[name] = _regrow(self._state[name], axes, new)
        _one_row.forget(self)  # it holds the arrays just replaced
        return True

    # ------------------------------------------------------------------
    # Playing the stream
    # ------------------------------------------------------------------
    def _as_stream_format(self, X):
        if self._dense:
            return X.toarray() if sp.issparse(X) else np.ascontiguousarray(X)
        return X if sp.issparse(X) else sp.csr_matrix(X)

    def _play(self, X, y, w, index, on_block=None, calibrate=True):
        """Play the rounds ``(X[i], y[i])`` in order.

        ``y`` holds ``-1/+1`` (two classes) or class indices, ``w`` the sample
        weights (all positive) and ``index`` the identifier stored in
        ``support_`` for each row. ``on_block``, if given, is called after
        each block, with the counters stored (progress output).
        ``calibrate``: whether the rows are seen for the first time, so that
        their margins, out of sample, feed the probabilities.
        """
        kernel, state = self._kernel, self._state
        engine = Engine(
            state["alpha"].shape[1],
            self._averages,
            self._keeps_gram,
            self._removes_members,
            self._dense,
            self._kernel_code,
            float(kernel.gamma),
            float(kernel.degree),
            float(kernel.coef0),
            X.shape[1],
        )
        rule = self._make_rule()
        y = np.ascontiguousarray(y, dtype=np.int64)
        w = np.ascontiguousarray(w, dtype=np.float64)
        index = np.ascontiguousarray(index, dtype=np.int64)
        bound = False
        # The averaged hypothesis scores the rows it has not seen: it is taken
        # at checkpoints of the round counter, which no block crosses.
        average_margins = calibrate and self._averages
        # Rounds that are not recorded (the later epochs of fit) change the
        # model whose scale the recorded margins fit: see _rescale_margins.
        norm_before = None if calibrate else self._model_norm()
        if average_margins and next_checkpoint(int(self._state["cal_avg_t"][0])) <= self._t:
            # Checkpoints passed by rounds that were not recorded (later
            # epochs of fit): the rows to come are scored by today's average.
            self._take_checkpoint()
        start = 0
        while start < X.shape[0]:
            stop = min(start + _BLOCK_SIZE, X.shape[0])
            if average_margins:
                stop = min(stop, start + next_checkpoint(self._t) - self._t)
            sl = slice(start, stop)
            start = stop
            Xb = self._as_stream_format(X[sl])
            b, n = Xb.shape[0], self._n
            moved = self._ensure_capacity(n + b)
            moved = self._prepare_block(b) or moved
            if moved or not bound:
                engine.bind(self._state)
                rule.bind(self._state)
                bound = True
            with np.errstate(all="ignore"):  # overflow: non-finite scores, reported
                diag = np.ascontiguousarray(kernel.diag(Xb), dtype=np.float64)
            direct = self._dense and self._kernel_code is not None
            if self._direct_only:
                direct = True
            elif direct and _FORCE_PATH is not None:
                direct = _FORCE_PATH == "direct"
            elif direct:
                direct = _direct_pays(n, b, X.shape[1])
            Z = Kc = None
            if not direct:
                Z = _vstack(self._sv, Xb)
                small = b * Z.shape[0] * X.shape[1] < _SINGLE_THREAD_FLOPS
                # Overflow shows as non-finite scores, reported by the loop.
                with single_blas_thread() if small else nullcontext(), np.errstate(all="ignore"):
                    Kc = np.ascontiguousarray(kernel(Xb, Z), dtype=np.float64)
                if self._dense and self._kernel_code is not None and not np.isfinite(Kc).all():
                    # Huge rows: the values of the direct path, by differences.
                    Kc = self._kernel_matrix(Xb, Z)
            engine.set_block(y[sl], w[sl], diag, index[sl], Kc=Kc, Xb=Xb if self._dense else None)
            if type(self)._block_start is not BaseKernelOnlineClassifier._block_start:
                self._before_change("_rng")  # the rule's own draws, if any
            self._block_start(rule, Xb, y[sl], Z, Kc)
            engine.play(rule, 0, b)
            if engine.bad_row >= 0:
                row = sl.start + engine.bad_row
                raise ValueError(
                    _overflow_message(X, w, f"Non-finite scores at row {row} of the call")
                )
            engine.store_counters(self._state)
            if calibrate:
                t_end = self._t
                rounds = np.arange(t_end - b + 1, t_end + 1, dtype=np.float64)
                yb = y[sl]
                cls = (yb > 0).astype(np.intp) if self._binary else yb.astype(np.intp)
                margins = engine.margins(b)
                if average_margins:
                    margins = self._checkpoint_margins(Xb, yb)
                self._before_change("cal_")
                self._record_margins(margins, cls, w[sl], rounds)
            retired = engine.retired()
            if retired is not None:
                self._fold_retired(retired, Z)
            if not self._dense:
                self._sv_sparse = Z[self._state["cols"][: self._n]]
            self._block_end(rule, Xb, Z)
            if average_margins and self._t == next_checkpoint(self._t - b):
                self._take_checkpoint()
            if on_block is not None:
                on_block()
        # The last update of a call has no later round whose scores would show
        # it. The coefficients are alpha times the global scale (budgeted SGD).
        if not np.isfinite(self._state["alpha"][: self._n] * self._state["scale"][0]).all():
            raise ValueError(_overflow_message(X, w, "Non-finite coefficients after the call"))
        if not self._average_is_finite():
            raise ValueError(
                _overflow_message(X, w, "Non-finite averaged coefficients after the call")
            )
        if norm_before is not None:
            self._rescale_margins(norm_before, self._model_norm())

    def _average_is_finite(self):
        """Whether the sums of the average are finite, brought up to the
        current round as :meth:`_publish` brings them: coefficients near the
        largest float overflow in the sums of the rounds that follow."""
        if not self._averages:
            return True
        n, state = self._n, self._state
        with np.errstate(all="ignore"):
            acc = (
                state["acc"][:n]
                + state["alpha"][:n] * (state["scale"][1] - state["stamp"][:n])[:, None]
            )
        return bool(
            np.isfinite(acc).all()
            and np.isfinite(state.get("pool_beta", np.zeros(0))).all()
            and all(np.isfinite(a).all() for a in self._retired_acc)
        )

    def _fold_retired(self, retired, Z):
        """Keep what the members that left (``engine.retired()``) gave the
        average: folded into the pool of the bounded average, or kept whole
        for ``average='exact'``. ``Z``: the block's kernel columns (sparse)."""
        ridx, racc, rX, rcol = retired
        rX = rX if self._dense else Z[rcol]
        if self._bounded_pool:
            self._before_change("pool_")
            self._pool_X = fold(
                self._state,
                self._pool_X,
                self._kernel,
                self._kernel_code,
                rX,
                racc,
                ridx,
                self.budget,
            )
        else:
            self._retired_idx.extend(ridx)
            self._retired_acc.extend(racc)
            self._retired_sv.append(rX)

    def _retired_lists(self):
        """What ``average='exact'`` keeps of the members that left (grown in place)."""
        return self._retired_idx, self._retired_acc, self._retired_sv

    def _record_margins(self, margins, cls, w, rounds):
        """Add a block's progressive margins to the bins of the probabilities.

        The margins of the online hypotheses, or with averaging those of the
        averaged hypothesis of the last checkpoint (:meth:`_checkpoint_margins`).
        """
        record_margins(self._state, margins, cls, w, rounds)

    def _take_checkpoint(self):
        """Keep the averaged hypothesis of now, which scores the rounds to come.

        The arrays are replaced, never changed in place, so that the undo
        record of a call keeps the old ones. ``O(budget * n_features)``
        memory with the bounded average.
        """
        fitted = self._publish()
        sv, state = fitted["support_vectors_"], self._state
        state["cal_avg_t"] = np.array([self._t], dtype=np.int64)
        state["cal_avg_coef"] = fitted["dual_coef_"]
        if sp.issparse(sv):
            sv = sp.csr_matrix(sv)
            state["cal_avg_data"], state["cal_avg_indices"], state["cal_avg_indptr"] = (
                sv.data.copy(),
                sv.indices.astype(np.int64),
                sv.indptr.astype(np.int64),
            )
        else:
            state["cal_avg_sv"] = np.ascontiguousarray(sv, dtype=np.float64)

    def _checkpoint_margins(self, Xb, yb):
        """Margins of rows ``Xb`` (labels ``yb``, coded as for the rounds) under
        the averaged hypothesis of the last checkpoint, which has not seen them."""
        state = self._state
        coef = state["cal_avg_coef"]
        if coef.shape[1] == 0:
            return np.zeros(Xb.shape[0])
        if "cal_avg_sv" in state:
            sv = state["cal_avg_sv"]
        else:
            sv = sp.csr_matrix(
                (state["cal_avg_data"], state["cal_avg_indices"], state["cal_avg_indptr"]),
                shape=(coef.shape[1], self.n_features_in_),
            )
        # The kernel values of _kernel_matrix, then the scores and margins
        # of the compiled one-row path (summed in the order of the members).
        with np.errstate(all="ignore"):  # overflow: non-finite scores, reported
            K = np.ascontiguousarray(self._kernel_matrix(Xb, sv), dtype=np.float64)
        margins = expansion_margins(K, coef, np.ascontiguousarray(yb, dtype=np.int64))
        if margins is None:
            raise _nonfinite_scores(Xb)
        return margins

    def _model_norm(self):
        """RKHS norm of the fitted hypothesis (all classes), or None where
        the recorded margins are not rescaled with it (see :meth:`_rescale_margins`)."""
        if not self._epochs_rescale or self._conversion != "last" or self._t == 0:
            return None
        fitted = self._publish()
        sv, coef = fitted["support_vectors_"], fitted["dual_coef_"]
        if coef.shape[1] == 0:
            return 0.0
        gram = self._kernel_matrix(sv, sv)
        return float(np.sqrt(max(np.einsum("ci,ij,cj->", coef, gram, coef), 0.0)))

    def _rescale_margins(self, before, after):
        """Bring the recorded margins to the model after rounds that were not
        recorded (the later epochs of ``fit``, whose rows were seen before).

        Only for the rules whose later epochs rescale the last hypothesis
        (``_epochs_rescale``: budgeted SGD's ``1 / (lambda t)``): the margins
        are multiplied by the ratio of the model's norms, as if each had been
        taken on the new model. Elsewhere the norm also moves without the
        confidence (measured, ``doc/probabilities.rst``: the Perceptrons'
        last hypothesis on overlapping classes, every average), and the
        first epoch's margins are kept as they are.
        """
        if before is None or after is None or not before > 0 or not after > 0:
            return
        self._before_change("cal_")
        rescale_bins(self._state, after / before)

    def _prepare_block(self, b):
        """Grow the rule's own buffers before a block of ``b`` rows; whether they moved."""
        return False

    def _block_start(self, rule, Xb, yb, Z, Kc):
        """Called before the rounds of a block (``Z``, ``Kc``: None on the direct path)."""

    def _block_end(self, rule, Xb, Z):
        """Called after the rounds of a block."""

    def _snapshot(self, deep):
        """What :meth:`_restore` needs to undo a call (``deep``: the call may
        change the state arrays in place).

        The arrays that the compiled rounds change are copied; those that
        only Python code changes after the rounds (the pool of the bounded
        average, the bins of the probabilities) are copied by
        :meth:`_before_change` only when a call is about to change them.
        The random generator keeps its identity: its state is rewound.
        """
        snap = dict(vars(self))
        if deep and "_state" in snap:
            snap["_state"] = {
                name: a if name.startswith(_LAZY_UNDO_PREFIXES) else a.copy()
                for name, a in self._state.items()
            }
            snap["_member_axes"] = dict(self._member_axes)
            for name in ("_retired_sv", "_retired_idx", "_retired_acc"):
                snap[name] = list(snap[name])
            snap["_lazy"] = set()
        return snap

    def _before_change(self, prefix):
        """Copy the arrays named ``prefix*`` into the undo record of the call
        (``"_rng"``: the state of the random generator, which costs tens of
        microseconds to read, so is saved only by calls that draw)."""
        snap = _UNDO.get(self)
        if snap is None or "_lazy" not in snap or prefix in snap["_lazy"]:
            return
        if prefix == "_rng":
            snap["_rng_state"] = _save_generator(self._rng)
            snap["_lazy"].add(prefix)
            return
        for name, a in snap["_state"].items():
            if name.startswith(prefix) and a is self._state.get(name):
                snap["_state"][name] = a.copy()
        snap["_lazy"].add(prefix)

    def _restore(self, snap):
        rng_state = snap.pop("_rng_state", None)
        snap.pop("_lazy", None)
        vars(self).clear()
        vars(self).update(snap)
        if rng_state is not None:
            _load_generator(self._rng, rng_state)

    def _atomic(self, method, deep, *args):
        """Run ``method``; if it fails or is interrupted, undo everything it did.

        A call on a fitted model leaves it exactly as it was (the same stream
        can go on); a failed first call leaves the estimator unfitted.
        """
        published = _PUBLISHED.pop(self, None)
        snap = _UNDO[self] = self._snapshot(deep)
        try:
            return method(*args)
        except BaseException:
            self._restore(snap)
            if published is not None:
                _PUBLISHED[self] = published
            raise
        finally:
            _UNDO.pop(self, None)

    def _validate_params(self):
        # A stream validates its parameters on every call (see
        # _partial_fit_classes): skip the values already found valid (the
        # same objects; a dict changed in place is still a dict).
        values = tuple(getattr(self, name) for name in self._parameter_constraints)
        last = _VALIDATED.get(self)
        if last is not None and all(a is b for a, b in zip(values, last)):
            return
        super()._validate_params()
        _VALIDATED[self] = values

    # ------------------------------------------------------------------
    # Validation and the public API
    # ------------------------------------------------------------------
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

    def _validate_fit_input(self, X, y, sample_weight, classes, reset):
        """Validate everything before any state is touched."""
        # validate_data(reset=True) sets n_features_in_ and feature_names_in_
        # before the checks that follow it: a rejected call restores them.
        saved = {
            k: v for k, v in vars(self).items() if k in ("n_features_in_", "feature_names_in_")
        }
        try:
            return self._validate_fit_input_unsafe(X, y, sample_weight, classes, reset)
        except Exception:
            for name in ("n_features_in_", "feature_names_in_"):
                if name in saved:
                    setattr(self, name, saved[name])
                else:
                    vars(self).pop(name, None)
            raise

    def _validate_fit_input_unsafe(self, X, y, sample_weight, classes, reset):
        X = self._validate_X(X, reset=reset)
        y, classes, w = _check_targets(X, y, sample_weight, classes)
        y_enc = np.searchsorted(classes, y)
        class_weight = self._class_weights(classes, y)
        if class_weight is not None:
            w = w * class_weight[y_enc]
            if not np.any(w > 0):
                raise ValueError(
                    f"The sample weights times the class weights (class_weight="
                    f"{self.class_weight!r}) are all zero: at least one must be positive."
                )
        if len(classes) == 2:
            y_enc = 2.0 * y_enc - 1.0
        return X, y_enc, w, classes

    def _class_weights(self, classes, y):
        """Step multiplier of each class of ``classes`` (None: all one)."""
        if self.class_weight is None:
            return None
        if isinstance(self.class_weight, str):  # 'balanced', refused by partial_fit
            return compute_class_weight(self.class_weight, classes=classes, y=y)
        known = set(classes.tolist())
        unknown = [key for key in self.class_weight if key not in known]
        if unknown:
            raise ValueError(
                f"class_weight has keys {unknown} that are not classes of the model: "
                f"classes={classes.tolist()}."
            )
        try:
            weights = np.array(
                [self.class_weight.get(c, 1.0) for c in classes.tolist()], dtype=np.float64
            )
        except (TypeError, ValueError):
            weights = np.array([np.nan])
        if not np.all(np.isfinite(weights) & (weights >= 0)):
            raise ValueError(
                "The values of class_weight must be finite non-negative numbers; got "
                f"class_weight={self.class_weight!r}."
            )
        return weights

    def _keep_weighted(self, X, y, w, index):
        """Rows of zero weight are dropped from the stream (never played)."""
        if np.all(w > 0):
            return X, y, w, index
        keep = np.flatnonzero(w > 0)
        return X[keep], y[keep], w[keep], index[keep]

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
        """
        # A warm start changes the state in place; a reset replaces it.
        deep = self.warm_start and hasattr(self, "_state")
        return self._atomic(self._fit, deep, X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        warm = self.warm_start and hasattr(self, "_state")
        reset = not warm
        if warm:
            self._check_stream_continues()
        X, y_enc, w, classes = self._validate_fit_input(X, y, sample_weight, None, reset=reset)
        if warm and not np.array_equal(classes, self.classes_):
            raise ValueError(
                f"The classes of y {classes.tolist()} differ from those of the "
                f"warm-started model {self.classes_.tolist()}."
            )
        self.classes_ = classes
        self._binary = len(classes) == 2
        if reset:
            self._reset(X)
        rng = _shuffle_rng(self.random_state)
        # Rows are numbered after those of earlier calls of the stream (a
        # fit that starts the stream numbers them as rows of X).
        index = self._n_seen + np.arange(X.shape[0])
        Xp, yp, wp, ip = self._keep_weighted(X, y_enc, w, index)
        verbose, clock = self.verbose, perf_counter()
        # The stopping rule of SGDClassifier, on the online mistake rate of
        # each epoch instead of its loss.
        best_rate, no_improvement = np.inf, 0
        stop = f"played max_iter={self.max_iter} epochs"
        self.n_iter_ = 0
        # The later epochs rescale the margins recorded (budgeted SGD, see
        # _rescale_margins): those of this fit only. The bins of the earlier
        # calls of a warm-started stream are set aside (new arrays: the undo
        # record keeps the old ones) and added back after the epochs.
        earlier = None
        if warm and self.max_iter > 1 and self._epochs_rescale and self._conversion == "last":
            earlier = {k: self._state[k] for k in ("cal_counts", "cal_sums")}
            for k, a in earlier.items():
                self._state[k] = np.zeros_like(a)
        for epoch in range(self.max_iter):
            counters = self._state["counters"]
            counters[3] = 0  # updates of this epoch
            mistakes = int(counters[2])
            order = rng.permutation(Xp.shape[0]) if self.shuffle else np.arange(Xp.shape[0])
            progress = None
            if verbose:
                # Lines count the rounds of the epoch.
                print(f"-- Epoch {epoch + 1}", flush=True)
                progress = _Progress(
                    self, self.verbose_interval, (self._t, mistakes), clock, Xp.shape[0]
                )
            within = progress if verbose >= 2 else None
            # Only the first epoch's margins are out of sample.
            self._play(
                Xp[order], yp[order], wp[order], ip[order], on_block=within, calibrate=epoch == 0
            )
            self.n_iter_ += 1
            if progress is not None:
                progress.end()
            counters = self._state["counters"]
            rate = (int(counters[2]) - mistakes) / Xp.shape[0]
            if counters[3] == 0:
                stop = "an epoch without updates"
                break
            if self.tol is not None:
                no_improvement = no_improvement + 1 if rate > best_rate - self.tol else 0
                best_rate = min(best_rate, rate)
                if no_improvement >= self.n_iter_no_change:
                    stop = (
                        f"the mistake rate did not improve by tol={self.tol} for "
                        f"{self.n_iter_no_change} epochs"
                    )
                    break
        if verbose:
            print(
                f"Stopped after {self.n_iter_} epochs ({stop}), "
                f"{perf_counter() - clock:.2f} seconds in total.",
                flush=True,
            )
        if earlier is not None:
            for k, a in earlier.items():
                self._state[k] = self._state[k] + a
        self._n_seen += X.shape[0]
        self.n_mistakes_ = int(self._state["counters"][2])
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Play the rows of ``(X, y)`` as the next rounds of the stream.

        ``max_iter``, ``tol`` and ``n_iter_no_change`` do not apply: each
        row is played once. ``class_weight='balanced'`` is refused (pass the
        weights as a dict).

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
        if sample_weight is None and _one_row.partial_fit_one_row(self, X, y, classes):
            return self
        lean = self._lean_fit_input(X, y, classes, sample_weight)
        if lean is not None:
            return self._atomic(self._partial_fit_lean, True, X, *lean)
        return self._partial_fit_checked(X, y, classes, sample_weight)

    # ------------------------------------------------------------------
    # One event at a time (river, sklearn_budget/_one_row.py)
    # ------------------------------------------------------------------
    def _partial_fit_event(self, x, columns, label):
        """River's ``learn_one`` on the compiled one-row path: whether it
        played the event (:func:`~sklearn_budget._one_row.learn_event`)."""
        return _one_row.learn_event(self, x, columns, label)

    def _event_scores(self, x, columns, proba=False):
        """River's predictions on the compiled one-row path, or None
        (:func:`~sklearn_budget._one_row.event_scores`)."""
        return _one_row.event_scores(self, x, columns, proba)

    @_fit_context(prefer_skip_nested_validation=True)
    def _partial_fit_checked(self, X, y, classes, sample_weight):
        return self._atomic(self._partial_fit, True, X, y, classes, sample_weight)

    def _lean_rows(self, X):
        """``X`` itself if validation would return it unchanged, else None.

        What a few cheap tests prove for a fitted stream: a C-contiguous
        float64 array of the fitted width, finite, where no feature names
        are expected and the kernel takes any real input. Anything else
        goes through ``validate_data`` and its messages.
        """
        if (
            type(X) is np.ndarray
            and X.dtype == np.float64
            and X.ndim == 2
            and X.flags.c_contiguous
            and X.shape[0] > 0
            and "_state" in vars(self)
            and X.shape[1] == self.n_features_in_
            and "feature_names_in_" not in vars(self)
            and self._dense
            and self._kernel_code is not None
            and self.kernel not in ("chi2", "additive_chi2")
            and np.isfinite(X).all()
        ):
            return X
        return None

    def _lean_fit_input(self, X, y, classes, sample_weight):
        """``(y_enc, w)`` of a ``partial_fit`` call whose input needs no conversion.

        None when any of ``X``, ``y``, ``classes`` and ``sample_weight`` is
        not already in the form that validation would give (then the full
        validation runs, and raises where it must). The labels must be an
        array of known classes of the same kind as ``classes_``.
        """
        if sample_weight is not None or self._lean_rows(X) is None:
            return None
        labels = _lean_labels(self, y, classes, X.shape[0])
        if labels is None or not np.any(labels[1] > 0):
            return None
        y_enc, w = labels
        if len(self.classes_) == 2:
            y_enc = 2.0 * y_enc - 1.0
        return y_enc, w

    def _partial_fit_lean(self, X, y_enc, w):
        """:meth:`_partial_fit` for input that :meth:`_lean_fit_input` accepted."""
        self._validate_params()
        self._check_stream_continues()
        return self._play_next_rounds(X, y_enc, w)

    def _play_next_rounds(self, X, y_enc, w):
        """Play validated rows as the next rounds of the stream (``partial_fit``)."""
        index = self._n_seen + np.arange(X.shape[0])
        # Lines count the rounds of the whole stream.
        progress = _Progress(self, self.verbose_interval) if self.verbose else None
        self._play(*self._keep_weighted(X, y_enc, w, index), on_block=progress)
        self._n_seen += X.shape[0]
        self.n_iter_ = 1
        self.n_mistakes_ = int(self._state["counters"][2])
        return self

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
        X, y_enc, w, classes = self._validate_fit_input(X, y, sample_weight, classes, reset=first)
        if first:
            self.classes_ = classes
            self._binary = len(classes) == 2
            self._reset(X, from_partial_fit=True)
        return self._play_next_rounds(X, y_enc, w)

    def _fitted_attribute(self, name):
        """The fitted attribute ``name``, derived from the state and cached."""
        if "_state" not in vars(self) or (name.startswith("vote_") and self._conversion != "vote"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        cache = _PUBLISHED.get(self)
        if cache is None:
            cache = _PUBLISHED[self] = {}
        if name not in cache:
            if name == "proba_scale_":
                cache[name] = fit_scale(self._state, SCALE_HINTS.get(self))
                SCALE_HINTS[self] = cache[name]
            else:
                cache.update(self._publish())
        return cache[name]

    def _publish(self):
        """The fitted attributes that the state determines, as a dict."""
        n, t, state = self._n, self._t, self._state
        wscale, clock = state["scale"]
        sv, idx, coef = self._sv, state["idx"][:n], state["alpha"][:n].T
        if self._averages and t > 0:
            # The running sums are in the coefficients' true units.
            coef = state["acc"][:n].T + coef * (clock - state["stamp"][:n])
            if self._bounded_pool:
                order = np.argsort(state["born"][:n], kind="stable")
                sv, idx, coef = bounded_average(
                    state,
                    self._pool_X,
                    self._kernel,
                    self._kernel_code,
                    sv,
                    coef.T,
                    idx,
                    order,
                    self.budget,
                )
            coef = coef / t
            if self._retired_idx:
                sv = _vstack(sv, self._stack(self._retired_sv))
                idx = np.concatenate([idx, self._retired_idx])
                coef = np.hstack([coef, np.array(self._retired_acc).T / t])
            # A member that joined on the last round played took part in no
            # hypothesis of the average.
            used = np.any(coef != 0, axis=0)
            if not used.all():
                sv, idx, coef = sv[np.flatnonzero(used)], idx[used], coef[:, used]
        elif wscale != 1.0:
            coef = coef * wscale
        # One entry per training example: a row that entered the support set
        # several times (later epochs of fit) has its coefficients summed.
        # Members that are not rows of the stream (index -1) come last.
        rows, new = np.flatnonzero(idx >= 0), np.flatnonzero(idx < 0)
        order = np.argsort(idx[rows], kind="stable")
        uidx = idx[rows][order]
        if uidx.size < 2 or (uidx[1:] != uidx[:-1]).all():
            # Every row entered once (always so within partial_fit): no merge.
            first, inverse = order, np.empty_like(order)
            inverse[order] = np.arange(order.size)
            coef_rows = coef[:, rows[order]]
        else:
            uidx, first, inverse = np.unique(idx[rows], return_index=True, return_inverse=True)
            merged = np.zeros((coef.shape[0], uidx.size))
            np.add.at(merged.T, inverse.ravel(), coef[:, rows].T)
            coef_rows = merged
        keep = np.concatenate([rows[first], new])
        out = {"support_": np.concatenate([uidx, idx[new]])}
        if self._conversion == "vote":
            # The column of each member among the support vectors.
            column = np.empty(idx.size, dtype=np.intp)
            column[rows] = inverse.ravel()
            column[new] = uidx.size + np.arange(new.size)
            out.update(self._publish_vote(column, coef))
        coef = np.hstack([coef_rows, coef[:, new]])
        sv = sv[keep]
        out["support_vectors_"] = sv if sp.issparse(sv) else np.ascontiguousarray(sv)
        out["dual_coef_"] = np.ascontiguousarray(coef)
        return out

    def _publish_vote(self, column, coef):
        """The hypotheses played and their counts, for ``average='vote'``.

        Offered only by rules that never change a member once it has joined
        and never remove one: every update appends a member (a row that errs
        again in a later epoch joins again), so the hypothesis played after
        ``k`` updates is the sum over the first ``k`` members in position
        order. ``born`` holds the round of each update, which that round's
        hypothesis still predicted: the counts are the differences of the
        rounds of consecutive updates, one number per hypothesis.
        """
        return {
            "vote_index_": column,
            "vote_dual_coef_": np.ascontiguousarray(coef),
            "vote_counts_": np.diff(self._state["born"][: self._n], prepend=0, append=self._t),
        }

    def _stack(self, parts):
        if self._dense:
            return np.concatenate(parts, axis=0)
        return sp.vstack(parts, format="csr")

    def decision_function(self, X):
        """Scores of the fitted hypothesis, ``f(x) = sum_i dual_coef_[:, i] k(sv_i, x)``.

        With ``average='vote'`` (offered by the estimators whose hypotheses
        played are the prefixes of their updates), the shares of the vote of
        the hypotheses ``f_k`` played online, each weighted by the number of
        rounds ``c_k`` it predicted (``vote_counts_``): for two classes
        ``sum_k c_k sign(f_k(x)) / sum_k c_k``, in ``[-1, 1]``; otherwise,
        for each class, the fraction of the rounds whose hypothesis has it
        as its highest-scoring class. A hypothesis with ``f_k(x) = 0`` (the
        empty initial one, or one whose kernel values at ``x`` vanish)
        abstains, so the fractions may sum to less than one.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``f(x)`` for two classes (positive means ``classes_[1]``), one
            column per class otherwise.
        """
        if "_state" not in vars(self):
            check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        if self._conversion == "vote":
            votes = self._votes(X) / max(self.vote_counts_.sum(), 1)
            return votes[:, 1] - votes[:, 0] if self._binary else votes
        scores = self._expansion(X, self.support_vectors_, self.dual_coef_)
        return scores[:, 0] if self._binary else scores

    def _validate_X(self, X, reset):
        if not reset and self._lean_rows(X) is not None:
            return X
        return super()._validate_X(X, reset)

    def _kernel_matrix(self, X, Z):
        """``K(X, Z)``, computed as the rounds compute it where that pays.

        For a compiled kernel on dense rows, the values come from the
        differences of the rows (as in the direct path of the rounds) when
        that is cheaper than one ``pairwise_kernels`` call (few rows, low
        dimension), or when the blocked formula overflows: the rbf
        expansion ``||x||^2 + ||z||^2 - 2 x.z`` gives ``inf - inf`` for a
        huge member that the rounds, and so the model, handle.
        """
        code = self._kernel_code
        if code is None or sp.issparse(X) or sp.issparse(Z) or not (X.shape[0] and Z.shape[0]):
            return self._kernel(X, Z)
        if not _direct_pays(Z.shape[0], X.shape[0], X.shape[1]):
            with np.errstate(all="ignore"):  # overflow: recomputed below
                K = self._kernel(X, Z)
            if np.isfinite(K).all():
                return K
        return kernel_values(self._kernel, code, X, Z)

    def _expansion(self, X, support_vectors, coef):
        """Scores ``K(X, support_vectors) @ coef.T``, in blocks of rows (see
        :meth:`_kernel_matrix`); raises ValueError if they overflow."""
        if self._kernel_code is None or sp.issparse(X):
            return self._kernel.expansion(X, support_vectors, coef)
        n = X.shape[0]
        chunk = n
        if n * max(1, coef.shape[1]) > 65536:
            chunk = get_chunk_n_rows(row_bytes=8 * max(1, coef.shape[1]), max_n_rows=n)
        scores = np.empty((n, coef.shape[0]))
        with np.errstate(all="ignore"):  # overflow is reported below
            for start in range(0, n, max(1, chunk)):
                sl = slice(start, start + max(1, chunk))
                scores[sl] = self._kernel_matrix(X[sl], support_vectors) @ coef.T
        if not np.isfinite(scores).all():
            raise _nonfinite_scores(X)
        return scores

    def _votes(self, X):
        """Rounds whose hypothesis votes for each class, shape (n_samples, n_classes).

        The voted Perceptron of Freund and Schapire (1999). The hypothesis
        after ``k`` updates is the sum of the first ``k`` terms
        ``vote_dual_coef_[:, i] k(sv_{vote_index_[i]}, x)``, so one kernel
        row with the support vectors and a cumulative sum over the updates
        give every ``f_k(x)``: ``O(n_updates * n_classes)`` per row beyond
        the kernel row. ``f_k`` casts ``vote_counts_[k]`` votes, for
        ``sign(f_k(x))`` or its highest-scoring class (ties to the first, as
        in :meth:`predict`); ``f_k(x) = 0``, always the case for the empty
        ``f_0``, abstains.
        """
        counts = self.vote_counts_[1:].astype(np.float64)
        coef = self.vote_dual_coef_
        R, m = coef.shape
        votes = np.zeros((X.shape[0], len(self.classes_)))
        # Per row: the kernel values, the prefix sums of every class and the
        # temporaries of the tally.
        row_bytes = 8 * (self.support_vectors_.shape[0] + (R + 4) * m + 1)
        chunk = get_chunk_n_rows(row_bytes=row_bytes, max_n_rows=X.shape[0])
        for sl in gen_batches(X.shape[0], max(1, chunk)):
            with np.errstate(all="ignore"):  # overflow is reported below
                K = self._kernel_matrix(X[sl], self.support_vectors_)[:, self.vote_index_]
                # F[c][:, k] is f_{k+1, c}(x): prefix sums over the updates.
                F = [np.cumsum(K * coef[c], axis=1) for c in range(R)]
            # A prefix sum that overflows stays infinite or NaN to the end.
            if m and not all(np.isfinite(Fc[:, -1]).all() for Fc in F):
                raise _nonfinite_scores(X)
            if self._binary:
                votes[sl, 1] = (F[0] > 0) @ counts
                votes[sl, 0] = (F[0] < 0) @ counts
                continue
            # The first highest-scoring class of each hypothesis (as argmax),
            # or R where it abstains; then the votes of each row by class.
            winner, best, voting = np.zeros(K.shape, dtype=np.intp), F[0].copy(), F[0] != 0
            for c in range(1, R):
                np.copyto(winner, c, where=F[c] > best)
                np.maximum(best, F[c], out=best)
                voting |= F[c] != 0
            winner[~voting] = R
            winner += (R + 1) * np.arange(K.shape[0])[:, None]
            weights = np.broadcast_to(counts, K.shape).ravel()
            tally = np.bincount(winner.ravel(), weights, minlength=K.shape[0] * (R + 1))
            votes[sl] = tally.reshape(-1, R + 1)[:, :R]
        return votes

    def predict_proba(self, X):
        """Probability estimates from the progressive margins of the stream.

        Every round's margin ``m_t`` is computed before the round's update,
        so it is out of sample. ``proba_scale_`` is fitted on them by maximum
        likelihood as ``P(correct) = sigmoid(a m_t - log(C - 1))`` with ``C``
        classes (Platt scaling without an intercept, with Platt's smoothed
        targets; round ``t`` weighs ``t``, so that the hypotheses nearer the
        final one count more; in ``fit``, the first epoch only, whose rows
        are unseen, rescaled by the ratio of the norms of the final model
        and of the model after that epoch). With ``average=True`` the
        margins are those of the averaged hypothesis, taken at checkpoints
        of the stream, on the rows that follow each (see the user guide,
        "Probabilities"). The probabilities are
        ``sigmoid(a f(x))`` for two classes and ``softmax(a f(x))`` otherwise,
        so that they agree with :meth:`predict`.

        With ``average='vote'`` they are the shares of the vote instead (see
        :meth:`decision_function`), smoothed: with ``C`` classes, ``T`` the
        rounds played, ``V_c`` the rounds whose hypothesis votes for class
        ``c`` and ``A`` those whose hypothesis abstains,
        ``P(c) = (V_c + A / C + 1) / (T + C)`` (the abstentions shared
        equally, then Laplace's rule of succession). No probability is zero,
        and they are ordered as the vote, so that they agree with
        :meth:`predict`. ``proba_scale_`` does not enter: they are the
        proportions of a vote, not calibrated probabilities (for those, see
        :class:`~sklearn.calibration.CalibratedClassifierCV`).

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
        """Logarithm of :meth:`predict_proba`, computed without underflow.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probability of each class, in the order of ``classes_``.
        """
        if "_state" not in vars(self):
            check_is_fitted(self)
        if self._conversion == "vote":
            votes = self._votes(self._validate_X(X, reset=False))
            # The abstentions are shared equally, then each class gets one
            # vote more (Laplace's rule of succession): never zero, ordered
            # as the shares of decision_function.
            n_classes, total = votes.shape[1], self.vote_counts_.sum()
            abstained = total - votes.sum(axis=1, keepdims=True)
            return np.log(votes + abstained / n_classes + 1.0) - np.log(total + n_classes)
        scores = self.proba_scale_ * self.decision_function(X)
        return log_probabilities(scores, self._binary)

    # ------------------------------------------------------------------
    # Loading a hypothesis (parameter mixing, sklearn_budget/_mixing.py)
    # ------------------------------------------------------------------
    def _load_expansion(
        self,
        X,
        classes,
        support_vectors,
        dual_coef,
        index=None,
        rounds=0,
        rule_state=None,
        bins=None,
        n_seen=0,
        n_mistakes=0,
    ):
        """Make this estimator a fitted model whose hypothesis is an expansion.

        The hypothesis becomes ``f = sum_j dual_coef[:, j] k(support_vectors[j], .)``
        as after ``rounds`` rounds of a stream, with the state of the rule
        rebuilt from it (:meth:`_load_rule_state`), so that ``partial_fit``
        goes on from ``f`` as the rule would. The members are loaded oldest
        first in the order given. ``X``: rows in the format of the stream to
        come (they fix the width, dense or sparse, and ``gamma='scale'``;
        they are not played). ``index``: the stream index of each member
        (default -1, not a row of the stream); the rows of later calls are
        numbered from ``n_seen``. ``rule_state``: the rule's scalars of
        :meth:`_rule_summary`. With ``average`` the running average starts
        as ``f`` held for ``rounds`` rounds. ``bins``: the bins of the
        progressive margins (``cal_*`` arrays, empty by default);
        ``n_mistakes``: the mistake count. Fails without changing anything.
        """
        return self._atomic(
            self._load_expansion_unsafe,
            False,
            X,
            classes,
            support_vectors,
            dual_coef,
            index,
            rounds,
            rule_state,
            bins,
            n_seen,
            n_mistakes,
        )

    def _load_expansion_unsafe(
        self,
        X,
        classes,
        support_vectors,
        dual_coef,
        index,
        rounds,
        rule_state,
        bins,
        n_seen,
        n_mistakes,
    ):
        self._validate_params()
        if self._conversion_of_params() not in ("last", "average"):
            raise ValueError(
                f"average={self.average!r}: a hypothesis can be loaded only with "
                "average=False or average=True."
            )
        X = self._validate_X(X, reset=True)
        classes = unique_labels(classes)
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        self.classes_ = classes
        self._binary = len(classes) == 2
        self._reset(X)
        if support_vectors.shape[0] == 0:
            sv = self._as_stream_format(X[:0])
        else:
            sv = self._as_stream_format(self._validate_X(support_vectors, reset=False))
        m, n_rows = sv.shape[0], self._state["alpha"].shape[1]
        coef = np.asarray(dual_coef, dtype=np.float64).reshape(n_rows, m)
        if not np.isfinite(coef).all():
            raise ValueError("The coefficients of the loaded expansion are not all finite.")
        budget = getattr(self, "budget", None)
        if budget is not None and m > budget:
            raise ValueError(f"{m} members do not fit in budget={budget}.")
        index = np.full(m, -1, dtype=np.int64) if index is None else np.asarray(index)
        rounds = int(rounds)
        if index.shape != (m,) or rounds < 0:
            raise ValueError("index must have one entry per member and rounds be >= 0.")
        gram = np.ascontiguousarray(self._kernel_matrix(sv, sv), dtype=np.float64).reshape(m, m)
        wscale = self._load_scale(m, rounds)
        self._ensure_capacity(m)
        state = self._state
        state["alpha"][:m] = coef.T / wscale
        state["idx"][:m] = index
        # Older than any member the stream adds (born on rounds > ``rounds``).
        state["born"][:m] = rounds - m + 1 + np.arange(m)
        state["kdiag"][:m] = np.diag(gram)
        state["cols"][:m] = np.arange(m)
        if self._averages:
            # The running sums in true units: f held for ``rounds`` rounds,
            # each sum brought up to the clock (0) of the stream to come.
            state["acc"][:m] = coef.T * rounds
            state["stamp"][:m] = 0.0
        if self._keeps_gram:
            state["gram"][:m, :m] = gram
        if self._dense:
            state["Xs"][:m] = sv
        else:
            self._sv_sparse = sp.csr_matrix(sv)
        state["counters"][:] = (m, rounds, int(n_mistakes), 0)
        state["scale"][:] = (wscale, 0.0)
        for name, array in (bins or {}).items():
            if state[name].shape != np.shape(array):
                raise ValueError(
                    f"bins[{name!r}] has shape {np.shape(array)}, not {state[name].shape}."
                )
            state[name][...] = array
        self._load_rule_state(gram, coef, dict(rule_state or {}))
        self._n_seen = int(n_seen)
        self.n_mistakes_ = int(n_mistakes)
        self.n_iter_ = 0
        return self

    def _conversion_of_params(self):
        return _conversion(self.average)

    def _load_scale(self, n_members, rounds):
        """Global scale of the stored coefficients of a loaded hypothesis."""
        return 1.0

    def _load_rule_state(self, gram, coef, rule_state):
        """Rebuild the rule's own state for the members just loaded.

        ``gram``: their Gram matrix; ``coef``: their coefficients (true
        units, shape (n_rows, n_members)); ``rule_state``: the scalars of
        :meth:`_rule_summary` (empty: those of a new stream).
        """
        if rule_state:
            raise ValueError(f"{type(self).__name__} keeps no scalars {sorted(rule_state)}.")

    def _rule_summary(self):
        """The rule's scalars that a mixed hypothesis averages (name: array)."""
        return {}

    @staticmethod
    def _load_factor(gram, rtol):
        """Lower Cholesky factor of the Gram matrix of loaded members.

        Refuses members whose squared distance to the span of the earlier
        ones is at most ``rtol k(x, x)``: the rules that keep a factor never
        add such a member (they project it), and its pivot would make the
        factor singular.
        """
        m = gram.shape[0]
        L = np.zeros((m, m))
        for i in range(m):
            z = np.linalg.solve(L[:i, :i], gram[i, :i]) if i else np.zeros(0)
            delta2 = gram[i, i] - z @ z
            if not delta2 > rtol * gram[i, i]:
                raise ValueError(
                    f"Member {i} of the loaded expansion lies in the span of the members "
                    "before it: compress the expansion first (see _mixing.compress)."
                )
            L[i, :i] = z
            L[i, i] = np.sqrt(delta2)
        return L
