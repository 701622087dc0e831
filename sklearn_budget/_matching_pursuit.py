"""Kernel Matching Pursuit (Vincent and Bengio, 2002), the batch baseline."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real
from time import perf_counter

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular
from sklearn import get_config
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.deprecation import deprecated
from sklearn.utils.validation import check_is_fitted

from ._base import (
    _DOC_LINK_TEMPLATE,
    BaseKernelOnlineClassifier,
    _KernelClassifierMixin,
)
from ._calibration import fit_scale, log_probabilities, new_bins, record_margins
from ._deprecation import (
    DEPRECATED,
    DEPRECATED_CONSTRAINT,
    positional_until_0_3,
    renamed_value,
)
from ._kernels import (
    KERNELS,
    Kernel,
    _KernelStateMixin,
    resolve_gamma,
    scale_gamma,
    single_blas_thread,
)
from ._transaction import Transaction
from ._validation import _check_targets

# A column whose squared distance to the span of the chosen columns is at
# most this fraction of its squared norm is taken to lie in that span (the
# Projectron's floor): its coefficient would be set by rounding noise.
_DEPENDENCE_RTOL = 1e-10

# Rows whose leave-one-out denominator ``1 - h`` is at most this are
# interpolated by the fit: their left-out residual is rounding noise
# divided by nearly zero, so they give no margin to the probability scale.
_LOO_FLOOR = 1e-6

# Greedy steps between two progress lines with verbose=1.
_VERBOSE_STEPS = 10

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


def _resolve_gamma(gamma, X, w):
    """``resolve_gamma``, with ``'scale'`` on the variance of ``X`` weighted by ``w``.

    Each row weighs its sample weight, so that a row of integer weight is the
    same as that many copies of it (None: every row weighs one).
    """
    if w is None or not (isinstance(gamma, str) and gamma == "scale"):
        return resolve_gamma(gamma, X)
    p = w / w.sum()
    with np.errstate(over="ignore", invalid="ignore"):  # reported by scale_gamma
        if sp.issparse(X):
            # E[x^2] - E[x]^2 over the entries, without densifying.
            mean = float(p @ np.asarray(X.mean(axis=1)).ravel())
            var = float(p @ np.asarray(X.multiply(X).mean(axis=1)).ravel()) - mean**2
        else:
            mean = float(p @ X.mean(axis=1))
            var = float(p @ ((X - mean) ** 2).mean(axis=1))
    return scale_gamma(var, X)


class _KernelRows:
    """The rows ``k(x_j, .)`` of the training Gram matrix, on demand.

    ``pool``: the rows kept, computed once (None: none, every row asked for
    is computed afresh, in blocks that fit in ``working_memory``). Only the
    rows of the pool are candidates when there is one: all of them when the
    Gram matrix fits in ``working_memory``, else a random subset that does
    (see :meth:`KernelMatchingPursuit._pool`). With ``sqrt_w``, entry ``i``
    of every row is multiplied by ``sqrt(w_i)``: inner products of rows with
    a residual so scaled are the weighted ones. ``progress(done, total)``,
    if given, is called after each block of pool rows computed.
    """

    def __init__(self, kernel, X, pool, sqrt_w=None, progress=None):
        self.kernel, self.X, self.sqrt_w = kernel, X, sqrt_w
        self.pool, self.K, self.sq_norms = pool, None, None
        if pool is None:
            return
        n = X.shape[0]
        if pool.size == n:
            # The whole matrix in one call (kernels such as rbf treat
            # k(X, X) specially: an exact zero distance on the diagonal).
            self.K = _check_finite(kernel(X, X), X)
            if sqrt_w is not None:
                self.K *= sqrt_w
        else:
            self.K = np.empty((pool.size, n))
            # Ten blocks: progress lines, and temporaries a tenth of the pool.
            for sl in gen_batches(pool.size, max(1, -(-pool.size // 10))):
                self.K[sl] = self._block(pool[sl])
                if progress is not None:
                    progress(sl.stop, pool.size)
        self.position = np.full(n, -1, dtype=np.intp)
        self.position[pool] = np.arange(pool.size)
        self.sq_norms = np.einsum("ij,ij->i", self.K, self.K)

    def candidates(self):
        """The rows that may be chosen: a boolean mask over the training rows."""
        mask = np.zeros(self.X.shape[0], dtype=bool)
        mask[slice(None) if self.pool is None else self.pool] = True
        return mask

    def _block(self, rows):
        Kb = _check_finite(self.kernel(self.X[rows], self.X), self.X)
        return Kb if self.sqrt_w is None else Kb * self.sqrt_w

    def row(self, j):
        if self.K is not None:
            return self.K[self.position[j]].copy()
        return self._block(slice(j, j + 1))[0]

    def gains(self, rows, R):
        """``||k_j^T R||^2 / ||k_j||^2`` for each ``j`` in ``rows``; NaN for a zero row."""
        if self.K is not None:
            # Every row of the pool is a candidate here; indexing K first
            # would copy it.
            corr = self.K @ R
            gains = _ratio(np.einsum("ij,ij->i", corr, corr), self.sq_norms, self.X)
            return gains[self.position[rows]]
        n = self.X.shape[0]
        chunk = get_chunk_n_rows(row_bytes=8 * n, max_n_rows=rows.size)
        out = np.empty(rows.size)
        for sl in gen_batches(rows.size, max(1, chunk)):
            Kb = self._block(rows[sl])
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


def _matching_pursuit(rows, Y, n_steps, backfit, n_candidates, tol, rng, report=None):
    """Greedy least-squares fit of the targets ``Y`` on kernel rows.

    Returns the chosen row indices (in the order of their first selection),
    their coefficients (one row each, one column per target), the number
    of greedy steps taken, the residual ``R`` of the training targets, the
    diagonal of the fit's hat matrix (see :func:`_hat_diagonal`) and why
    fitting stopped. ``report(step, n_support, R)``, if given, is called
    after every step.
    """
    n, n_targets = Y.shape
    R = Y.copy()  # the residual of the training targets
    threshold = tol * float(np.sum(Y * Y))
    selectable = rows.candidates()
    support, steps = [], []
    stop = "reached the budget"
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
            stop = "no candidate left"
            break
        gain = rows.gains(cand, R)
        zero = np.isnan(gain)
        selectable[cand[zero]] = False
        gain[zero] = -np.inf
        chosen = None
        while True:
            i = int(np.argmax(gain))
            if not gain[i] > threshold:
                stop = (
                    "no candidate reduces the loss by more than tol"
                    if np.isfinite(gain[i])
                    else "no candidate left outside the span of the chosen ones"
                )
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
            steps.append(chosen)
        n_iter += 1
        if report is not None:
            report(n_iter, len(support), R)
    support = np.asarray(support, dtype=np.intp)
    if backfit:
        k = support.size
        alpha = solve_triangular(T[:k, :k], Z[:k], lower=False) if k else Z[:0]
        leverage = np.einsum("ij,ij->j", Q[:k], Q[:k])
    else:
        alpha = coef[support]
        leverage = _hat_diagonal(np.array([rows.row(j) for j in steps]).reshape(-1, n))
    return support, alpha, n_iter, R, leverage, stop


def _hat_diagonal(Phi):
    """Diagonal of the hat matrix of basic matching pursuit on the columns ``Phi``.

    ``Phi`` holds the column of each step, in order (one per row). Step
    ``t`` projects the residual off the unit vector ``q_t``, so the residual
    is ``M Y`` with ``M = (I - q_T q_T^T) ... (I - q_1 q_1^T)`` and the fitted
    values are ``H Y`` with ``H = I - M``. Unrolling the product,
    ``H = sum_{a,b} S_ab q_a q_b^T`` where ``S`` is unit lower triangular
    with row ``t`` equal to ``-(q_t . q_{<t}) S`` on the earlier steps (the
    compact form of a product of reflections, here of projections): the
    diagonal costs ``O(n_samples * n_steps^2)``.
    """
    if Phi.shape[0] == 0:
        return np.zeros(Phi.shape[1])
    U = Phi / np.linalg.norm(Phi, axis=1, keepdims=True)
    G = U @ U.T
    S = np.eye(len(U))
    for t in range(1, len(U)):
        S[t, :t] = -G[t, :t] @ S[:t, :t]
    return np.einsum("ai,ai->i", U, S @ U)


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
    rows. The number of steps, ``budget``, bounds the size of the
    model. It is the batch baseline of Weston, Bordes and Bottou (2005,
    Fig. 4) for the budget Perceptrons: the Tighter Budget Perceptron
    removes members by the same kind of criterion, the training error.

    Parameters
    ----------
    budget : int, default=100
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
        ``fit`` (with ``sample_weight``, the variance weighs each row by its
        weight, as if repeated).

    degree : float, default=3
        Degree of the polynomial kernel.

    coef0 : float, default=0.0
        Independent term of the 'poly' and 'sigmoid' kernels.

    kernel_params : dict, default=None
        Extra keyword arguments for a callable kernel.

    n_candidates : int, default=None
        Number of training examples considered at each step. None considers
        every one while the ``n_samples x n_samples`` Gram matrix fits in
        ``working_memory``, and past it the ``m`` examples whose kernel rows
        fit in it, drawn at random once (from ``random_state``) and kept
        (see Notes). An integer draws that many candidates at random
        (without replacement, anew at each step, from ``random_state``) and
        takes the best of them: a step then costs ``n_candidates *
        n_samples`` kernel evaluations instead of ``n_samples ** 2``, for
        large data sets; ``n_candidates=n_samples`` is the search over every
        example at any size, its kernel rows computed afresh at each step.

    tol : float, default=0.0
        Fitting stops early when the score of the best candidate of a step,
        ``||k_j^T R||^2 / ||k_j||^2`` (the decrease of the training squared
        loss that fitting its coefficient alone brings), is at most ``tol``
        times the loss of the zero function (``n_samples`` times the number
        of target columns). With ``0.0``, it stops only when no candidate
        reduces the loss at all.

    class_weight : dict, 'balanced' or None, default=None
        Weight of each class in the squared loss: ``{class_label: weight}``
        multiplies the sample weights of that class's rows (classes not
        listed weigh 1). ``'balanced'`` uses
        ``n_samples / (n_classes * np.bincount(y))``, computed on the ``y``
        given to ``fit``. None weighs every class 1.

    random_state : int, RandomState instance or None, default=None
        Seeds the draws of candidates: those of ``n_candidates``, or the
        pool of candidates past ``working_memory``. Pass an int for
        reproducible output across multiple function calls.

    verbose : int, default=0
        With 1, ``fit`` prints a line every 10 greedy steps (the step, the
        support size and the training squared loss, also relative to that
        of the zero function) and why it stopped, and, past
        ``working_memory``, the pool of candidates and the progress of
        their kernel rows; with 2 or more, a line every step.

    n_components : int, default="deprecated"
        The former name of ``budget``.

        .. deprecated:: 0.1
           ``n_components`` was renamed to ``budget`` in 0.1 and will be
           removed in 0.3.

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

        .. deprecated:: 0.1
           ``n_components_`` is deprecated in 0.1 and will be removed in
           0.3: use ``len(support_)``.

    gamma_ : float
        The kernel coefficient used: ``gamma`` itself when numeric, else the
        value that ``'scale'`` or ``'auto'`` resolved to on the data that
        started the stream (kept, and unused, for the kernels that take no
        ``gamma``).

    n_iter_ : int
        Number of greedy steps taken. Equal to ``len(support_)`` for
        backfitting; may exceed it for basic, which can select an example
        again.

    proba_scale_ : float
        The scale ``a`` of the probabilities ``sigmoid(a f(x))`` (two
        classes) or ``softmax(a f(x))``, fitted on the leave-one-out scores
        of the training rows (see Notes).

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

    **Memory and cost.** With ``n_candidates=None``, the full
    ``n_samples x n_samples`` Gram matrix is computed once and kept when it
    fits in scikit-learn's ``working_memory`` (see
    :func:`sklearn.config_context`; 1 GiB holds it up to 11,585 rows).
    Past it, the candidates are the ``m = working_memory / (8 n_samples)``
    examples whose kernel rows fit in it, drawn at random once, and their
    rows are kept: the dictionary is restricted to a random subset of the
    training rows, which shrinks smoothly from every row as ``n_samples``
    grows, and a step costs ``O(m n_samples)`` products instead of
    ``n_samples ** 2`` kernel values computed afresh. On a9a (100 steps, a
    shared 2-core machine at load average 12 to 17), 8,000 rows took 8.5
    to 14 s, 16,000 rows 31 s and 20,000 rows 21 s, where the search over
    every row of 16,000 took about 12 s a step. With an integer
    ``n_candidates``, the kernel rows of the candidates are computed
    afresh at each step, in
    blocks of rows that fit in ``working_memory``, and only the chosen
    columns are kept (``n_samples x n_SV`` for backfitting): a step costs
    ``O(n_candidates * n_samples)`` kernel evaluations and products.

    **Sample weights.** ``sample_weight`` (times ``class_weight``) weighs
    each row in the squared loss: the greedy scores become
    ``(k_j^T W r)^2 / (k_j^T W k_j)`` and the coefficients the weighted least
    squares fit, which is the fit of the rows and targets scaled by
    ``sqrt(w_i)``. A row of integer weight ``m`` is then the same as ``m``
    copies of it (up to rounding, and to ties between candidates); rows of
    weight zero are dropped, so they are not candidates either.

    **Probabilities.** The scores on the training rows are in sample, and
    too confident to scale the probabilities by. Given the chosen examples,
    the fitted values are a linear function of the targets, ``H Y``, and the
    score that row ``i`` would get from the fit without it is
    ``y_i - r_i / (1 - h_ii)`` (``r`` the training residual): exact for the
    least squares of backfitting (the PRESS residuals), the usual
    approximation for basic, whose ``H`` is a product of projections. The
    diagonal of ``H`` costs ``O(n_samples * n_SV)`` for backfitting (from the
    orthonormal factor kept by the fit) and ``O(n_samples * n_iter_^2)`` for
    basic; no kernel matrix beyond the fit's is needed. The selection
    itself, which saw every row, is not redone (refitting it on folds would
    cost several fits, and score other models than the one returned).
    With weights, one copy of a row of integer weight (the whole of a row of
    weight below one) is left out, so that integer weights still equal
    repeated rows. Rows the fit interpolates (``1 - h_ii`` at most
    ``1e-6``) are skipped. ``proba_scale_`` is then fitted by maximum
    likelihood on these out-of-sample scores, as the online estimators fit
    theirs on their progressive margins: ``P(correct) = sigmoid(a m_i -
    log(C - 1))`` with ``m_i`` the left-out score of the true class minus
    the largest other one (``C`` classes), with Platt's smoothed targets.
    When no row is left (the fit interpolates every row), the scale is tiny
    and the probabilities nearly uniform, still ordered as the scores.

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
    >>> clf = KernelMatchingPursuit(budget=20, gamma=2.0).fit(X, y)
    >>> len(clf.support_)
    20
    >>> clf.score(X, y) > 0.95
    True
    >>> proba = clf.predict_proba(X[:3])
    >>> proba.shape
    (3, 2)
    >>> bool((proba.argmax(axis=1) == clf.predict(X[:3])).all())
    True
    """

    _doc_link_module = "sklearn_budget"
    _doc_link_template = _DOC_LINK_TEMPLATE

    _parameter_constraints: dict = {
        "budget": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"backfitting", "basic"})],
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="left")],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "n_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_components": [Interval(Integral, 1, None, closed="left"), DEPRECATED_CONSTRAINT],
    }

    @positional_until_0_3("budget")
    def __init__(
        self,
        *,
        budget=100,
        method="backfitting",
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        kernel_params=None,
        n_candidates=None,
        tol=0.0,
        class_weight=None,
        random_state=None,
        verbose=0,
        n_components=DEPRECATED,
    ):
        self.budget = budget
        self.method = method
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_candidates = n_candidates
        self.tol = tol
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
        self.n_components = n_components

    # The class weights of the online estimators: multipliers of the
    # sample weights of each class, validated alike.
    _class_weights = BaseKernelOnlineClassifier._class_weights

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model by greedy kernel matching pursuit on ``(X, y)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample in the squared loss, of the greedy
            selection and of the least-squares fit alike (times the weight
            of its class, see ``class_weight``). An integer weight counts as
            that many copies of the sample; samples of weight zero are not
            used at all, not even as candidates.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        # A failed fit leaves the estimator as it was (validate_data has
        # already set n_features_in_ when a later check fails): the fit
        # replaces the fitted attributes, so the record of its __dict__ is
        # the whole undo. One BLAS thread: the same model for any thread count.
        with Transaction(self), single_blas_thread():
            return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight):
        budget = renamed_value(self, "budget", "n_components")
        X = self._validate_X(X, reset=True)
        y, classes, w = _check_targets(X, y, sample_weight, None)
        y_ind = np.searchsorted(classes, y)
        class_weight = self._class_weights(classes, y)
        if class_weight is not None:
            w = w * class_weight[y_ind]
            if not np.any(w > 0):
                raise ValueError(
                    f"The sample weights times the class weights (class_weight="
                    f"{self.class_weight!r}) are all zero: at least one must be positive."
                )
        # Rows of weight zero take no part: neither in the loss nor as candidates.
        keep = np.flatnonzero(w > 0)
        X, y_ind, w = X[keep], y_ind[keep], w[keep]
        n = X.shape[0]
        if len(classes) == 2:
            Y = (2.0 * y_ind - 1.0).reshape(-1, 1)
        else:
            Y = -np.ones((n, len(classes)))
            Y[np.arange(n), y_ind] = 1.0
        # The weighted loss sum_i w_i ||y_i - f(x_i)||^2 is the plain one of
        # the rows and targets scaled by sqrt(w_i).
        sqrt_w = None if np.all(w == 1.0) else np.sqrt(w)
        Yw = Y if sqrt_w is None else Y * sqrt_w[:, None]
        kernel = Kernel(
            self.kernel,
            gamma=_resolve_gamma(self.gamma, X, None if sqrt_w is None else w),
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
        )
        rng = check_random_state(self.random_state)
        pool = None if self.n_candidates is not None else self._pool(n, rng)
        report = self._reporter(float(np.sum(Yw * Yw)), budget) if self.verbose else None
        with np.errstate(all="ignore"):  # overflow is reported by _check_finite
            rows = _KernelRows(kernel, X, pool, sqrt_w, report and report.pool)
            support, alpha, n_iter, R, leverage, stop = _matching_pursuit(
                rows,
                Yw,
                budget,
                self.method == "backfitting",
                self.n_candidates,
                self.tol,
                rng,
                report,
            )
        if not np.isfinite(alpha).all():
            raise ValueError(
                "Non-finite coefficients: the kernel values are too large. Scale the "
                "features (for example with StandardScaler) or use a smaller gamma."
            )
        if self.verbose:
            print(
                f"Stopped after {n_iter} steps ({stop}), "
                f"{perf_counter() - report.clock:.2f} seconds in total.",
                flush=True,
            )
        self.classes_ = classes
        self._kernel = kernel
        self.gamma_ = kernel.gamma
        self.support_ = keep[support]
        sv = X[support]
        self.support_vectors_ = sv if sp.issparse(sv) else np.ascontiguousarray(sv)
        self.dual_coef_ = np.ascontiguousarray(alpha.T)
        self.n_iter_ = int(n_iter)
        if sqrt_w is not None:
            R = R / sqrt_w[:, None]
        self.proba_scale_ = _loo_scale(Y, y_ind, w, R, leverage)
        return self

    def _pool(self, n, rng):
        """The candidate rows of ``n_candidates=None``, whose kernel rows are kept.

        Every row when the ``n x n`` Gram matrix fits in ``working_memory``.
        Otherwise the ``m = working_memory / (8 n)`` rows whose kernel rows
        fit in it, drawn at random once: each step then costs the product
        of those rows with the residual, not ``n ** 2`` kernel values
        computed afresh, so that the time of a fit grows smoothly with
        ``n`` past the limit, and the pool shrinks from every row smoothly
        too: the dictionary of kernel functions is restricted to a random
        subset of the training rows.
        """
        limit = get_config()["working_memory"] * 2**20
        m = min(n, max(1, int(limit // (8 * n))))
        if m == n:
            return np.arange(n)
        if self.verbose:
            print(
                f"The Gram matrix of {n} rows ({8 * n * n / 2**20:.0f} MiB) exceeds "
                f"working_memory ({limit / 2**20:.0f} MiB): the candidates are {m} rows "
                "drawn at random, whose kernel rows fit in it.",
                flush=True,
            )
        return np.sort(rng.choice(n, size=m, replace=False))

    # TODO(0.3): remove.
    @deprecated("n_components_ is deprecated in 0.1 and will be removed in 0.3: use len(support_).")
    @property
    def n_components_(self):
        return len(self.support_)

    def _reporter(self, zero_loss, last):
        """The progress callback of the greedy steps (``verbose > 0``), the
        last of which is step ``last``."""
        every = 1 if self.verbose >= 2 else _VERBOSE_STEPS

        def report(step, n_support, R):
            if step % every and step != last:
                return
            loss = float(np.sum(R * R))
            print(
                f"step: {step}, support size: {n_support}, training loss: {loss:.6g}, "
                f"relative to the zero function: {loss / max(zero_loss, 1e-300):.4f}, "
                f"elapsed: {perf_counter() - report.clock:.2f} seconds",
                flush=True,
            )

        def pool(done, total):
            print(
                f"kernel rows of the candidates: {done} of {total}, "
                f"elapsed: {perf_counter() - report.clock:.2f} seconds",
                flush=True,
            )

        report.clock = perf_counter()
        report.pool = pool
        return report

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

    def predict_proba(self, X):
        """Probability estimates from the leave-one-out scores of the fit.

        ``sigmoid(a f(x))`` for two classes and ``softmax(a f(x))``
        otherwise, with ``a = proba_scale_`` fitted by maximum likelihood on
        the leave-one-out scores of the training rows (see Notes), so that
        they agree with :meth:`predict`.

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
        check_is_fitted(self)
        scores = self.proba_scale_ * self.decision_function(X)
        return log_probabilities(scores, len(self.classes_) == 2)


def _loo_scale(Y, y_ind, w, R, leverage):
    """Probability scale fitted on the leave-one-out scores of the training rows.

    ``R``: residuals of the targets ``Y`` (unscaled), ``leverage``: diagonal
    of the hat matrix in the rows scaled by ``sqrt(w)``, so ``leverage / w``
    is the leverage of one unit of weight. Leaving out a weight of
    ``u = min(w, 1)`` (one copy of a row of integer weight, the whole of a
    lighter row) gives the residual ``R / (1 - u * leverage / w)``.
    """
    denom = 1.0 - np.minimum(w, 1.0) * leverage / w
    ok = denom > _LOO_FLOOR
    F = Y[ok] - R[ok] / denom[ok, None]  # the scores of the left-out rows
    cls = y_ind[ok]
    if Y.shape[1] == 1:
        margins = (2.0 * cls - 1.0) * F[:, 0]
    else:
        rows = np.arange(cls.size)
        true = F[rows, cls]
        F[rows, cls] = -np.inf
        margins = true - F.max(axis=1)
    bins = new_bins(max(Y.shape[1], 2))
    record_margins(bins, margins, cls, w[ok], np.ones(cls.size))
    return float(fit_scale(bins))
