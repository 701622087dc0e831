"""Fourier Online Gradient Descent (FOGD): random Fourier features, then hinge OGD."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ._base import _caller_stacklevel, _stream_gamma
from ._docstrings import _feature_doc
from ._kernels import Kernel, single_blas_thread
from ._linear_online import _averaged, _FeatureOnlineClassifier
from ._ogd import cosine_features, csr_row_products, row_products


def row_products_any(X, M):
    """``X @ M`` for dense or CSR ``X``, each row summed in the order of its
    coordinates (``sklearn_budget._ogd``): the same bits whatever the block."""
    M = np.ascontiguousarray(M, dtype=np.float64)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return csr_row_products(
            np.ascontiguousarray(X.data, dtype=np.float64),
            X.indices.astype(np.int64),
            X.indptr.astype(np.int64),
            M,
        )
    return row_products(np.ascontiguousarray(X, dtype=np.float64), M)


def fourier_features(X, random_weights, random_offset):
    """``sqrt(2 / D) cos(X @ random_weights + random_offset)``, ``D`` features.

    The random Fourier features of Rahimi and Recht (2007): for
    ``random_weights ~ N(0, 2 gamma)`` and ``random_offset ~ U[0, 2 pi]``,
    ``z(x) . z(x')`` is an unbiased estimate of ``exp(-gamma ||x - x'||^2)``.
    """
    Z = row_products_any(X, random_weights)
    cosine_features(Z, np.ascontiguousarray(random_offset), np.sqrt(2.0 / Z.shape[1]))
    # Finite values so large that ``x . w`` overflows give cos(inf) = NaN,
    # which would turn the weights NaN without a word. The features are at
    # most sqrt(2 / D) in size, so their sum is finite exactly when they all are.
    if not np.isfinite(Z.sum()):
        raise ValueError(
            "Non-finite features: the random Fourier features of X overflowed "
            f"(largest |x|: {abs(X).max():.3g}). Scale X as the training data were scaled."
        )
    return Z


# Rows of the call that starts a stream on which the width is judged: at
# least the first, at most the second.
_WIDTH_ROWS = (100, 256)


def _warn_if_too_narrow(X, gamma, n_random):
    """Warn when the rbf kernel is too narrow for ``n_random`` random features.

    ``z(x) . z(x')`` estimates ``k(x, x')`` with a standard deviation of
    about ``1 / sqrt(D)`` where ``k`` is small (each of the ``D`` products
    ``2 cos(w . x + b) cos(w . x' + b)`` has variance close to 1). Where a
    row's nearest other row has a kernel value below three such deviations,
    the features cannot tell its neighbours from rows far away, and the
    model learns noise (on the shipped sets at 10 times the ``'scale'``
    width, test accuracy 13 to 24 points below the majority rate).
    """
    if X.shape[0] < _WIDTH_ROWS[0]:
        return
    sample = X[: _WIDTH_ROWS[1]]
    K = Kernel("rbf", gamma=gamma)(sample, sample)
    np.fill_diagonal(K, -np.inf)
    nearest = float(np.median(K.max(axis=1)))
    error = 1.0 / np.sqrt(n_random)
    if nearest >= 3.0 * error:
        return
    warnings.warn(
        f"With gamma={gamma:.3g}, a row's nearest other row has a kernel value of "
        f"{nearest:.2g} (the median over the first {sample.shape[0]} rows), and budget="
        f"{n_random} random features estimate kernel values to about 1/sqrt(budget) = "
        f"{error:.2g}: the features cannot tell near rows from far ones, and the model "
        "may do worse than always predicting the most frequent class. Use a smaller "
        "gamma, a larger budget (the error falls as 1/sqrt(budget)), or "
        "NystroemOnlineClassifier, whose landmarks compute the kernel exactly.",
        UserWarning,
        stacklevel=_caller_stacklevel(),
    )


class FourierOnlineClassifier(_FeatureOnlineClassifier):
    """Fourier Online Gradient Descent (FOGD): a kernel classifier on random features.

    The rbf kernel ``exp(-gamma ||x - x'||^2)`` is approximated by the inner
    product of ``budget`` random Fourier features (Rahimi and Recht, 2007),
    ``z(x) = sqrt(2 / budget) cos(W x + b)`` with the rows of ``W`` drawn
    from ``N(0, 2 gamma I)`` and ``b`` uniform on ``[0, 2 pi]``, and online
    gradient descent on the hinge loss is played in that space: on every
    round where ``y w . z(x) < 1``, ``w <- w + learning_rate y z(x)`` (Lu,
    Hoi, Wang, Zhao and Liu, 2016, Algorithm 1). The memory is the
    ``budget`` features and their weights, whatever the stream's length; a
    round costs ``O(budget * n_features)`` (the features) plus
    ``O(budget)`` per output (the round itself).

    More than two classes are learned one-vs-rest, as in
    :class:`~sklearn.linear_model.SGDClassifier`: every class has its
    weights, updated on each round where its own margin is below 1.

    Parameters
    ----------
    budget : int, default=500
        Number of random Fourier features ``D``: the memory of the model
        (``D`` weights per output, and the ``D x n_features`` random
        weights). The approximation of the kernel improves as
        ``1 / sqrt(D)``.

    gamma : {'scale', 'auto'} or float, default='scale'
        Coefficient of the rbf kernel that the features approximate.
        ``'scale'`` uses ``1 / (n_features * X.var())`` and ``'auto'``
        ``1 / n_features``, computed once, on the data of the call that
        starts the stream, and kept for the rest of the stream.

    learning_rate : float, default=1.0
        The step ``eta`` of online gradient descent, constant over the
        stream. The features have ``||z(x)||^2`` close to 1 (the kernel's
        ``k(x, x) = 1``) whatever the data's scale and width, so one step
        moves the margin of its row by about ``learning_rate``: the default
        takes a row at margin 0 to about the hinge's margin of 1, on every
        data set alike (see :ref:`decisions-fogd-nogd` for the measurements
        around it). May be changed between calls, like a learning-rate
        schedule.

    FEATURE_STOPPING

    average : bool, default=True
        If True, the fitted hypothesis (``coef_``, :meth:`predict`) is the
        average of the hypotheses used in every round played (the
        online-to-batch conversion), kept exactly at the cost of the
        updates. The online rounds are not changed, and ``n_mistakes_``
        still counts the mistakes of the hypotheses played online.
    FEATURE_AVERAGE_DEFAULT

    FEATURE_CLASS_WEIGHT

    warm_start : bool, default=False
        If True, ``fit`` continues the current stream instead of starting a
        new one. ``budget``, ``gamma``, ``average`` and ``random_state``
        are fixed for a stream: ``partial_fit`` and a warm-started ``fit``
        refuse to go on after they changed.

    random_state : int, RandomState instance or None, default=None
        Seeds the random features (drawn when the stream starts) and the
        shuffling of ``fit``.

    FEATURE_VERBOSE

    Attributes
    ----------
    coef_ : ndarray of shape (1, budget) or (n_classes, budget)
        Weights of the random features: one row for two classes, one row
        per class otherwise. The scores are
        ``fourier_features(X) @ coef_.T``.

    random_weights_ : ndarray of shape (n_features, budget)
        The random frequencies ``W.T``, drawn from ``N(0, 2 gamma_)``.

    random_offset_ : ndarray of shape (budget,)
        The random phases ``b``, uniform on ``[0, 2 pi]``.

    gamma_ : float
        The kernel coefficient used.

    FEATURE_ATTRIBUTES

    See Also
    --------
    NystroemOnlineClassifier : The same rounds on a Nystroem map of
        ``budget`` landmarks taken from the stream.
    sklearn.kernel_approximation.RBFSampler : The same features, for a
        batch pipeline.

    Notes
    -----
    The model has no bias, as in the paper (and as the kernel estimators
    of the package). Sparse input is taken as is: the features need only
    ``X @ random_weights_``. The features of a row are computed one row at
    a time, in compiled code, each sum in the order of the row's
    coordinates (zeros skipped): a row has the same features, to the last
    bit, whatever the block of rows it comes in and whether it is sparse or
    dense, so a stream gives the same model whatever its split into calls
    (one row at a time, as the river classes play it, included), and the
    same for sparse and dense input. On sparse data this costs
    ``O(nnz(x) * budget)`` per row. ``fit`` computes a row's features once
    for all its epochs, keeping them within scikit-learn's
    ``working_memory`` (``n_samples x budget`` floats; the rows beyond it
    are computed in every epoch).

    Random features estimate each kernel value with an error of about
    ``1 / sqrt(budget)``: at a narrow kernel, where a row's nearest other
    row has a smaller kernel value, the model learns noise and can do
    worse than always predicting the most frequent class. The call that
    starts a stream (with at least 100 rows) warns when the median over its
    first 256 rows of a row's largest kernel value with another row is
    below ``3 / sqrt(budget)`` (see :ref:`fogd-nogd`).

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel
    machines", NIPS 2007.

    J. Lu, S. C. H. Hoi, J. Wang, P. Zhao and Z.-Y. Liu, "Large Scale Online
    Kernel Learning", Journal of Machine Learning Research 17(47), 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_budget import FourierOnlineClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(400, 2)
    >>> y = (np.hypot(X[:, 0], X[:, 1]) > 1.2).astype(int)
    >>> clf = FourierOnlineClassifier(budget=200, random_state=0).fit(X, y)
    >>> clf.coef_.shape
    (1, 200)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    __doc__ = _feature_doc(__doc__)

    _parameter_constraints: dict = {**_FeatureOnlineClassifier._parameter_constraints}

    # Parameters fixed for the whole of a stream: they shape its features.
    _stream_params = ("budget", "gamma", "average", "random_state")

    def __init__(
        self,
        *,
        budget=500,
        gamma="scale",
        learning_rate=1.0,
        max_iter=5,
        tol=1e-3,
        n_iter_no_change=5,
        shuffle=True,
        average=True,
        class_weight=None,
        warm_start=False,
        random_state=None,
        verbose=0,
        verbose_interval=10_000,
    ):
        self.budget = budget
        self.gamma = gamma
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.average = average
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.verbose_interval = verbose_interval

    def _reset(self, X, from_partial_fit=False):
        """Start a new stream: draw the features, every weight at zero."""
        gamma = _stream_gamma(self.gamma, X, from_partial_fit)
        _warn_if_too_narrow(X, gamma, self.budget)
        self.gamma_ = gamma
        rng = check_random_state(self.random_state)
        D = self.budget
        # Kept outside the state: never changed in place, so a call's undo
        # record need not copy them.
        self.random_weights_ = rng.normal(0.0, np.sqrt(2.0 * self.gamma_), (X.shape[1], D))
        self.random_offset_ = rng.uniform(0.0, 2.0 * np.pi, D)
        self._state = self._new_state(D)
        self._stream_config = {name: getattr(self, name) for name in self._stream_params}

    # What a one-row call sets (see _FeatureOnlineClassifier._play_one_row).
    _one_row_attributes = ("n_iter_", "n_mistakes_", "coef_")

    def _row_features(self, X, path):
        # fourier_features of one row, in the round's buffer.
        D = self.random_offset_.shape[0]
        return path.round.fourier(
            X,
            np.ascontiguousarray(self.random_weights_, dtype=np.float64),
            np.ascontiguousarray(self.random_offset_),
            math.sqrt(2.0 / D),
        )

    def _features(self, X):
        return fourier_features(X, self.random_weights_, self.random_offset_)

    def _play_block(self, X, rows, cls, sw, index, calibrate):
        # A row's features are the same bits in any block (fourier_features).
        Z = self._fit_features(X, rows, index, self._features)
        self._hinge_rounds(Z, cls, sw, calibrate, self._state["w"], self._state.get("acc"))

    def _publish(self):
        state = self._state
        if self.average:
            self.coef_ = _averaged(state["w"], state["acc"], int(state["counters"][0]))
        else:
            self.coef_ = state["w"].copy()

    @single_blas_thread()  # the same scores for any thread count
    def _scores(self, X):
        return self._features(X) @ self.coef_.T
