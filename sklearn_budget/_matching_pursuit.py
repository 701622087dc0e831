"""Kernel Matching Pursuit (Vincent and Bengio, 2002), the batch baseline."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular
from sklearn import get_config
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from ._base import _DOC_LINK_TEMPLATE, _KernelClassifierMixin
from ._kernels import (
    KERNELS,
    Kernel,
    _KernelStateMixin,
    resolve_gamma,
)

# A column whose squared distance to the span of the chosen columns is at
# most this fraction of its squared norm is taken to lie in that span (the
# Projectron's floor): its coefficient would be set by rounding noise.
_DEPENDENCE_RTOL = 1e-10

_OVERFLOW_MESSAGE = (
    "Non-finite values: the kernel values on the training data, or their "
    "products, overflowed (largest |x|: {amax:.3g}). Scale the features (for example with "
    "StandardScaler) or use a smaller gamma."
)


def _check_finite(K, X):
    if not np.isfinite(K).all():
        amax = abs(X).max() if X.shape[0] else 0.0
        raise ValueError(_OVERFLOW_MESSAGE.format(amax=amax))
    return K


class _KernelRows:
    """The rows ``k(x_j, .)`` of the training Gram matrix, on demand.

    The whole matrix is computed once when it fits in scikit-learn's
    ``working_memory`` (and every row is a candidate); otherwise the rows
    asked for are computed afresh, in blocks that fit in it.
    """

    def __init__(self, kernel, X, cache):
        self.kernel, self.X = kernel, X
        self.K = _check_finite(kernel(X, X), X) if cache else None
        self.sq_norms = np.einsum("ij,ij->i", self.K, self.K) if cache else None

    def row(self, j):
        if self.K is not None:
            return self.K[j].copy()
        return _check_finite(self.kernel(self.X[j : j + 1], self.X), self.X)[0]

    def gains(self, rows, R):
        """``||k_j^T R||^2 / ||k_j||^2`` for each ``j`` in ``rows``; NaN for a zero row."""
        if self.K is not None:
            # Every row is a candidate here; indexing K first would copy it.
            corr = self.K @ R
            return _ratio(np.einsum("ij,ij->i", corr, corr), self.sq_norms, self.X)[rows]
        n = self.X.shape[0]
        chunk = get_chunk_n_rows(row_bytes=8 * n, max_n_rows=rows.size)
        out = np.empty(rows.size)
        for sl in gen_batches(rows.size, max(1, chunk)):
            Kb = _check_finite(self.kernel(self.X[rows[sl]], self.X), self.X)
            corr = Kb @ R
            sq_norms = np.einsum("ij,ij->i", Kb, Kb)
            out[sl] = _ratio(np.einsum("ij,ij->i", corr, corr), sq_norms, self.X)
        return out


def _ratio(num, den, X):
    # Finite kernel values whose squares overflow would make every gain NaN
    # and the model silently empty.
    _check_finite(num, X)
    _check_finite(den, X)
    # A zero (or subnormal) row cannot be scaled to fit anything.
    ok = den >= np.finfo(np.float64).tiny
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=ok)
    return out


def _matching_pursuit(rows, Y, n_steps, backfit, n_candidates, tol, rng):
    """Greedy least-squares fit of the targets ``Y`` on kernel rows.

    Returns the chosen row indices (in the order of their first selection),
    their coefficients (one row each, one column per target) and the number
    of greedy steps taken.
    """
    n, n_targets = Y.shape
    R = Y.copy()  # the residual of the training targets
    threshold = tol * float(np.sum(Y * Y))
    selectable = np.ones(n, dtype=bool)
    support = []
    if backfit:
        # Y ~ Phi A with Phi = Q T (thin QR of the chosen columns): Q (k x n,
        # one column of Phi per row) is orthonormal, T upper triangular, and
        # Z = Q Y; T is also the Cholesky factor of Phi^T Phi. Each addition
        # appends a row to Q and Z and a column to T, and keeps R = Y - Q^T Z.
        cap = min(n_steps, n, 64)
        Q, T, Z = np.empty((cap, n)), np.zeros((cap, cap)), np.empty((cap, n_targets))
    else:
        coef = np.zeros((n, n_targets))
        in_support = np.zeros(n, dtype=bool)
    n_iter = 0
    while n_iter < n_steps:
        cand = np.flatnonzero(selectable)
        if n_candidates is not None and n_candidates < cand.size:
            cand = np.sort(rng.choice(cand, size=n_candidates, replace=False))
        if cand.size == 0:
            break
        gain = rows.gains(cand, R)
        zero = np.isnan(gain)
        selectable[cand[zero]] = False
        gain[zero] = -np.inf
        chosen = None
        while True:
            i = int(np.argmax(gain))
            if not gain[i] > threshold:
                break
            j = int(cand[i])
            phi = rows.row(j)
            if not backfit:
                chosen = j
                break
            # Backfitting never takes a column twice: the residual is
            # orthogonal to every chosen one.
            selectable[j] = False
            k = len(support)
            # Classical Gram-Schmidt applied twice: orthogonal to working precision.
            v = Q[:k] @ phi
            q = phi - v @ Q[:k]
            v2 = Q[:k] @ q
            q -= v2 @ Q[:k]
            v += v2
            rho2 = float(q @ q)
            if rho2 > _DEPENDENCE_RTOL * float(phi @ phi):
                chosen = j
                break
            gain[i] = -np.inf  # in the span of the chosen columns: skip it
        if chosen is None:
            break
        if backfit:
            if k == Q.shape[0]:
                new = min(2 * k, n_steps, n)
                Q = np.concatenate([Q, np.empty((new - k, n))])
                T = np.pad(T, ((0, new - k), (0, new - k)))
                Z = np.concatenate([Z, np.empty((new - k, n_targets))])
            rho = np.sqrt(rho2)
            Q[k] = q / rho
            T[:k, k] = v
            T[k, k] = rho
            Z[k] = Q[k] @ R
            R -= np.outer(Q[k], Z[k])
            support.append(chosen)
        else:
            c = (phi @ R) / (phi @ phi)
            R -= np.outer(phi, c)
            if not in_support[chosen]:
                in_support[chosen] = True
                support.append(chosen)
            coef[chosen] += c
        n_iter += 1
    support = np.asarray(support, dtype=np.intp)
    if backfit:
        k = support.size
        alpha = solve_triangular(T[:k, :k], Z[:k], lower=False) if k else Z[:0]
    else:
        alpha = coef[support]
    return support, alpha, n_iter


class KernelMatchingPursuit(
    _KernelStateMixin, _KernelClassifierMixin, ClassifierMixin, BaseEstimator
):
    """Kernel Matching Pursuit classifier (Vincent and Bengio).

    A batch, greedy, sparse kernel least-squares fit of the labels coded as
    ``-1/+1``. Starting from the zero function, each step takes the training
    example ``x_j`` whose kernel function ``k(x_j, .)`` most reduces the
    squared loss of the residual on the training set, ``||r - c k_j||^2``
    with the best ``c``: the ``j`` maximising ``(k_j . r)^2 / ||k_j||^2``,
    where ``k_j`` is the vector of the ``k(x_j, x_i)`` over the training
    rows. The number of steps, ``n_components``, bounds the size of the
    model. It is the batch baseline of Weston, Bordes and Bottou (2005,
    Fig. 4) for the budget Perceptrons: the Tighter Budget Perceptron
    removes members by the same kind of criterion, the training error.

    Parameters
    ----------
    n_components : int, default=100
        Number of greedy steps, hence the largest number of support
        vectors. Fewer are taken when fitting stops early (see ``tol``).

    method : {'backfitting', 'basic'}, default='backfitting'
        ``'basic'`` fits only the coefficient of the example added,
        ``c = k_j . r / ||k_j||^2``, and keeps the earlier ones; an example
        may be selected again, its coefficient then grows by the new ``c``.
        ``'backfitting'`` re-solves all the coefficients by least squares on
        the chosen kernel columns after each addition (see Notes).

    kernel : {'rbf', 'linear', 'poly', 'polynomial', 'sigmoid', 'laplacian', \
            'cosine', 'chi2', 'additive_chi2'} or callable, default='rbf'
        Kernel, as in :func:`sklearn.metrics.pairwise.pairwise_kernels`. The
        chi2 kernels need dense non-negative data.

    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient for 'rbf', 'poly', 'sigmoid', 'laplacian' and
        'chi2'. ``'scale'`` uses ``1 / (n_features * X.var())`` and
        ``'auto'`` uses ``1 / n_features``, computed on the data given to
        ``fit``.

    degree : float, default=3
        Degree of the polynomial kernel.

    coef0 : float, default=0.0
        Independent term of the 'poly' and 'sigmoid' kernels.

    kernel_params : dict, default=None
        Extra keyword arguments for a callable kernel.

    n_candidates : int, default=None
        Number of training examples considered at each step. None considers
        every one. An integer draws that many candidates at random (without
        replacement, anew at each step, from ``random_state``) and takes the
        best of them: a step then costs ``n_candidates * n_samples`` kernel
        evaluations instead of ``n_samples ** 2``, for large data sets.

    tol : float, default=0.0
        Fitting stops early when the score of the best candidate of a step,
        ``||k_j^T R||^2 / ||k_j||^2`` (the decrease of the training squared
        loss that fitting its coefficient alone brings), is at most ``tol``
        times the loss of the zero function (``n_samples`` times the number
        of target columns). With ``0.0``, it stops only when no candidate
        reduces the loss at all.

    random_state : int, RandomState instance or None, default=None
        Seeds the draws of candidates when ``n_candidates`` is set. Pass an
        int for reproducible output across multiple function calls.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.

    support_ : ndarray of shape (n_SV,)
        Row indices in ``X`` of the support vectors, in the order in which
        they were first selected (not sorted, unlike the online
        estimators of the package: the order is what the greedy search
        found most useful first).

    support_vectors_ : {ndarray, sparse matrix} of shape (n_SV, n_features)
        The support vectors, in the order of ``support_``.

    dual_coef_ : ndarray of shape (1, n_SV) or (n_classes, n_SV)
        Coefficients of the support vectors in the decision function: one
        row for two classes, one row per class otherwise.

    n_components_ : int
        Number of support vectors, ``len(support_)``.

    gamma_ : float
        The kernel coefficient used: ``gamma`` itself when numeric, else the
        value that ``'scale'`` or ``'auto'`` resolved to on the data that
        started the stream (kept, and unused, for the kernels that take no
        ``gamma``).

    n_iter_ : int
        Number of greedy steps taken. Equal to ``n_components_`` for
        backfitting; may exceed it for basic, which can select an example
        again.

    n_features_in_ : int
        Number of features seen during ``fit``.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    TighterBudgetPerceptron : Online budget Perceptron that removes the
        member whose removal least increases the training error.
    sklearn.svm.SVC : Kernel SVM, whose support vectors lie near the margin.

    Notes
    -----
    **Targets.** Two classes: one target column, ``+1`` for ``classes_[1]``
    and ``-1`` for ``classes_[0]``; the prediction is the sign of the
    decision function. More classes: one-vs-rest targets, one column per
    class (``+1`` for the class, ``-1`` for the others), fitted on *shared*
    kernel columns: a step selects the example that most reduces the
    squared loss summed over all the columns, ``||k_j^T R||^2 / ||k_j||^2``
    with ``R`` the residual matrix, and each class gets its own
    coefficient. The prediction is the class of the largest score. Ties
    between candidates go to the lowest row index. There is no bias term,
    as in the algorithm of Weston et al. (Fig. 4).

    **Backfitting.** The example is selected with the residual of the
    current least-squares fit, then every coefficient is fitted again
    (Vincent and Bengio's "back-fitting", which signal processing calls
    orthogonal matching pursuit). As that residual is orthogonal to the
    chosen columns, this is also the selection with the residual orthogonal
    to them. Vincent and Bengio's "pre-fitting", which scores each
    candidate by the loss *after* the refit, is not implemented. The fit is
    updated incrementally: a thin QR factorisation of the chosen columns
    (whose triangular factor is the Cholesky factor of their normal matrix)
    gains one column per step by Gram-Schmidt orthogonalisation, applied
    twice, in O(n_samples * n_SV); the coefficients are one triangular
    solve at the end. A column whose squared distance to the span of the
    chosen ones is at most ``1e-10`` times its squared norm (an exact or
    near duplicate of a chosen example, or any column once the kernel's
    numerical rank is exhausted) is skipped for good, and the next best
    candidate is tried; fitting stops when none is left.

    **Basic.** As in matching pursuit, an example already chosen may be
    chosen again; Weston et al. (Sec. 4.2) report that on their 2-D problem
    basic KMP cycles through the same examples and still makes training
    errors after 400 steps, with 37 support vectors. Examples whose kernel
    column is zero are never selected, by either method.

    **Memory and cost.** The full ``n_samples x n_samples`` Gram matrix is
    computed once and kept only when it fits in scikit-learn's
    ``working_memory`` (see :func:`sklearn.config_context`) and every
    example is a candidate. Otherwise the kernel rows of the candidates are
    computed afresh at each step, in blocks of rows that fit in it, and
    only the chosen columns are kept (``n_samples x n_SV`` for
    backfitting). A step costs ``O(n_candidates * n_samples)`` kernel
    evaluations and products.

    **No partial_fit.** Each step compares every candidate against the
    residual on the *whole* training set, and backfitting re-fits every
    coefficient on it: the model is not a function of a stream seen once,
    so there is no online version. For bounded memory on a stream, see the
    budget Perceptrons.

    References
    ----------
    P. Vincent and Y. Bengio. "Kernel Matching Pursuit". Machine Learning,
    48(1-3):165-187, 2002.

    J. Weston, A. Bordes and L. Bottou. "Online (and Offline) on an Even
    Tighter Budget". AISTATS 2005.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import KernelMatchingPursuit
    >>> X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    >>> clf = KernelMatchingPursuit(n_components=20, gamma=2.0).fit(X, y)
    >>> clf.n_components_
    20
    >>> clf.score(X, y) > 0.95
    True
    """

    _doc_link_module = "sklearn_budget"
    _doc_link_template = _DOC_LINK_TEMPLATE

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"backfitting", "basic"})],
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="left")],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "n_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=100,
        *,
        method="backfitting",
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        kernel_params=None,
        n_candidates=None,
        tol=0.0,
        random_state=None,
    ):
        self.n_components = n_components
        self.method = method
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_candidates = n_candidates
        self.tol = tol
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model by greedy kernel matching pursuit on ``(X, y)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        # A failed fit leaves the estimator as it was (validate_data has
        # already set n_features_in_ when a later check fails).
        saved = dict(vars(self))
        try:
            return self._fit(X, y)
        except BaseException:
            vars(self).clear()
            vars(self).update(saved)
            raise

    def _fit(self, X, y):
        X = self._validate_X(X, reset=True)
        check_classification_targets(y)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        classes, y_ind = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        n = X.shape[0]
        if len(classes) == 2:
            Y = (2.0 * y_ind - 1.0).reshape(-1, 1)
        else:
            Y = -np.ones((n, len(classes)))
            Y[np.arange(n), y_ind] = 1.0
        kernel = Kernel(
            self.kernel,
            gamma=resolve_gamma(self.gamma, X),
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
        )
        cache = self.n_candidates is None and 8.0 * n * n <= get_config()["working_memory"] * 2**20
        with np.errstate(all="ignore"):  # overflow is reported by _check_finite
            rows = _KernelRows(kernel, X, cache)
            support, alpha, n_iter = _matching_pursuit(
                rows,
                Y,
                self.n_components,
                self.method == "backfitting",
                self.n_candidates,
                self.tol,
                check_random_state(self.random_state),
            )
        if not np.isfinite(alpha).all():
            raise ValueError(
                "Non-finite coefficients: the kernel values are too large. Scale the "
                "features (for example with StandardScaler) or use a smaller gamma."
            )
        self.classes_ = classes
        self._kernel = kernel
        self.gamma_ = kernel.gamma
        self.support_ = support
        sv = X[support]
        self.support_vectors_ = sv if sp.issparse(sv) else np.ascontiguousarray(sv)
        self.dual_coef_ = np.ascontiguousarray(alpha.T)
        self.n_components_ = int(support.size)
        self.n_iter_ = int(n_iter)
        return self

    def decision_function(self, X):
        """Scores of the fitted hypothesis, ``f(x) = sum_i dual_coef_[:, i] k(sv_i, x)``.

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
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        scores = self._kernel.expansion(X, self.support_vectors_, self.dual_coef_)
        return scores[:, 0] if len(self.classes_) == 2 else scores
