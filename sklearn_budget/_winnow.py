"""Winnow: a linear online classifier with multiplicative updates."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted

from ._base import _DOC_LINK_TEMPLATE
from ._calibration import fit_scale, log_probabilities, new_bins, record_margins
from ._deprecation import DEPRECATED, DEPRECATED_CONSTRAINT, renamed_value
from ._docstrings import _MAX_ITER_DOC, _STOPPING_DOC, _fit_doc
from ._kernels import single_blas_thread
from ._rounds import _blocks, _rows
from ._stream import _OnlineStreamMixin
from ._transaction import published

# Rows whose bias column and norms are built at once.
_BLOCK_SIZE = 1024

# Most rows scored at once between two updates (the run grows while no
# update happens and shrinks after one).
_MAX_RUN = 512

# A class's weights are stored as log-weights and used scaled by exp(-g).
# An update may raise them up to exp(_HEADROOM) above that scale before the
# class is rescaled, so a scaled weight stays below exp(300) ~ 1e130.
_HEADROOM = 300.0

# A scaled score is trusted when its size exceeds _TINY times
# (||x||_1 + nnz(x)): the weights and products lost to underflow (at most
# 5e-324 each) are then below 1e-33 of it. Rows with a larger |x| than
# _HUGE_X, whose products with the scaled weights could overflow, are always
# scored in the log domain.
_TINY = 1e-290
_HUGE_X = 1e100

# Progressive margins beyond this size are recorded at it: the bins of the
# probability scale end at 1e12, and a bin's sum of margins must stay finite.
_MARGIN_CAP = 1e13

# Largest log of a scaled score given to the probabilities (e^690 ~ 1e300):
# beyond it every probability is 0 or 1 anyway.
_LOG_SCORE_CAP = 690.0

# Largest log-weight published as is: beyond it (or below its negative),
# coef_ and intercept_ are rescaled (see log_scale_).
_PUBLISH_RANGE = 700.0


def _log_abs_diff(p, m):
    """Log-magnitude and sign of ``exp(p) - exp(m)``, without forming either."""
    d = p - m
    d[np.isnan(d)] = 0.0  # both -inf: a zero weight
    with np.errstate(divide="ignore"):
        log_mag = np.maximum(p, m) + np.log(-np.expm1(-np.abs(d)))
    sign = np.sign(d)
    log_mag[sign == 0] = -np.inf
    return log_mag, sign


def _log_abs(theta, balanced):
    """Log-magnitude and sign of the effective weights of the log-weights ``theta``.

    Unbalanced, the weight is ``exp(theta)``; balanced, it is
    ``exp(theta) - exp(-theta)`` (the positive copy minus the negative one).
    """
    if not balanced:
        return theta, np.ones_like(theta)
    return _log_abs_diff(theta, -theta)


def _scaled(theta, g, balanced):
    """Effective weights of the log-weights ``theta`` times ``exp(-g)``.

    The caller ensures the result cannot overflow (see ``_HEADROOM``).
    """
    if g == 0.0:
        return 2.0 * np.sinh(theta) if balanced else np.exp(theta)
    log_mag, sign = _log_abs(theta, balanced)
    return sign * np.exp(log_mag - g)


def _log_scores(log_mag, sign, vals):
    """Sign and log-magnitude of the scores of one row, computed in the log domain.

    ``log_mag`` and ``sign`` (one row per class) describe the weights of the
    row's non-zero coordinates, whose values are ``vals``. Every term is
    divided by the largest one before summing, so nothing overflows and the
    largest term never underflows, whatever the size of the weights.
    """
    terms = log_mag + np.log(np.abs(vals))
    top = terms.max(axis=1, initial=-np.inf)
    top[~np.isfinite(top)] = 0.0  # all weights zero: the score is 0
    s = (sign * np.exp(terms - top[:, None])) @ np.sign(vals)
    with np.errstate(divide="ignore"):
        return np.sign(s), np.log(np.abs(s)) + top


def _order_key(sign, log_mag):
    """With ``sign``, a key that orders scores given as sign and log-magnitude."""
    return np.where(sign > 0, log_mag, np.where(sign < 0, -log_mag, 0.0))


def _argmax_exact(sign, log_mag):
    """Row-wise argmax (first on ties) of scores given as sign and log-magnitude."""
    key = _order_key(sign, log_mag)
    best = sign.max(axis=1, keepdims=True)
    return np.where(sign == best, key, -np.inf).argmax(axis=1)


def _is_strict_max(c, sign, log_mag):
    """Whether score ``c`` is larger than every other one (a tie is not)."""
    key = _order_key(sign, log_mag)
    others = np.arange(len(sign)) != c
    beats = (sign[others] > sign[c]) | ((sign[others] == sign[c]) & (key[others] >= key[c]))
    return not beats.any()


def _overflow_message(what):
    return (
        f"{what}: a log-weight of Winnow (a sum of learning_rate * sample_weight * x over the "
        "mistakes) left the float64 range. Scale the features (for example with "
        "StandardScaler or MaxAbsScaler), or use a smaller learning_rate or smaller sample "
        "weights. The model is left as it was before the call."
    )


def _margins(scores, y, g):
    """Margins of rounds whose class ``y`` has the ``scores`` (a column each).

    ``g``: the log-scale of each class's scores (None: the scores are true
    ones). The margin is ``+-`` the score for two classes (one row), else
    the true class's score minus the largest other one.
    """
    if g is not None and any(g):
        with np.errstate(divide="ignore", over="ignore"):
            log_size = np.log(np.abs(scores)) + np.asarray(g)[:, None]
            scores = np.sign(scores) * np.exp(np.minimum(log_size, _LOG_SCORE_CAP))
    if scores.shape[0] == 1:
        margins = np.where(y == 1, scores[0], -scores[0])
    else:
        cols = np.arange(scores.shape[1])
        others = scores.copy()
        others[y, cols] = -np.inf
        margins = scores[y, cols] - others.max(axis=0)
    return margins


def _accumulate(state, k, idx, t, balanced):
    """Add the current weights of class ``k`` at ``idx`` to their sums up to round ``t``."""
    at = slice(None) if idx is None else idx
    theta, stamp = state["theta"][k, at], state["stamp"][k]
    rounds = np.log(t - stamp[at])
    acc = state["acc_plus"][k]
    acc[at] = np.logaddexp(acc[at], theta + rounds)
    if balanced:
        acc = state["acc_minus"][k]
        acc[at] = np.logaddexp(acc[at], rounds - theta)
    stamp[at] = t


def _rescale(state, k, balanced):
    """Choose the scale of class ``k`` from its largest weight, and rescale it."""
    theta = state["theta"][k]
    log_mag, _ = _log_abs(theta, balanced)
    top = np.max(log_mag)
    # Keep g = 0 (the cheaper scaling) while the weights are moderate.
    g = float(top) if np.isfinite(top) and abs(top) > _HEADROOM / 2 else 0.0
    state["g"][k] = g
    state["u"][k] = _scaled(theta, g, balanced)
    state["bound"][k] = np.max(np.abs(theta)) if balanced else np.max(theta)


@single_blas_thread()  # the same bits for any thread count
def _play_block(state, X, Y, y, w, calibrate, learning_rate, balanced, average):
    """Play a block of rounds on the arrays of ``state``.

    ``Y`` holds the labels +-1 of each class (a row each), ``y`` the class
    indices; ``learning_rate``, ``balanced`` and ``average``: the parameters.
    """
    theta, u, g, bound = state["theta"], state["u"], state["g"], state["bound"]
    n_rows, n_coords = theta.shape
    binary = n_rows == 1
    n = X.shape[0]
    # The bias is one more coordinate, of value 1 in every row.
    sparse = sp.issparse(X)
    if sparse:
        X1 = sp.hstack([X, np.ones((n, 1))], format="csr")
        indptr, indices, data = X1.indptr, X1.indices, X1.data
        size = np.abs(data)
        l1 = np.add.reduceat(size, indptr[:-1])  # every row has its bias entry
        largest = np.maximum.reduceat(size, indptr[:-1])
        nnz = np.diff(indptr)
    else:
        X1 = np.hstack([X, np.ones((n, 1))])
        size = np.abs(X1)
        l1, largest, nnz = size.sum(axis=1), size.max(axis=1), n_coords
    trust = _TINY * (l1 + nnz)
    trust[largest > _HUGE_X] = np.inf

    t0, mistakes, updates = int(state["counters"][0]), 0, 0
    # Python copies of the scales and bounds (written back by _rescale
    # and at the end of the block): cheaper to use per round.
    gs, bounds = g.tolist(), bound.tolist()
    same_scale = binary or min(gs) == max(gs)
    largest = largest.tolist()
    trust_r = trust.tolist()
    # The margin of each round before its update (progressive, out of sample).
    margins = np.zeros(n) if calibrate else None
    run, i = 16, 0
    while i < n:
        # Scores of the next rows with the current weights: they hold
        # until the first row that is not clearly right.
        j = min(n, i + run)
        if sparse:
            a, b = indptr[i], indptr[j]
            scores = np.add.reduceat(u[:, indices[a:b]] * data[a:b], indptr[i:j] - a, axis=1)
        else:
            scores = u @ X1[i:j].T
        right = Y[:, i:j] * scores > trust[i:j]
        ok = right[0] if binary else right.all(axis=0)
        f = int(ok.argmin())
        if calibrate:
            # Up to the first row not clearly right, the weights are
            # those each row is predicted with; a row scored exactly
            # below gets its exact margin.
            last = j if ok[f] else i + f + 1
            if binary and gs[0] < _LOG_SCORE_CAP:  # the common case, kept cheap
                scale = np.exp(gs[0]) if gs[0] else 1.0
                margins[i:last] = (Y[0, i:last] * scale) * scores[0, : last - i]
            else:
                margins[i:last] = _margins(scores[:, : last - i], y[i:last], gs)
        if ok[f]:
            i, run = j, min(2 * run, _MAX_RUN)
            continue
        r, run = i + f, min(max(4, 2 * (f + 1)), _MAX_RUN)
        if sparse:
            idx = indices[indptr[r] : indptr[r + 1]]
            vals = data[indptr[r] : indptr[r + 1]]
        else:
            idx, vals = None, X1[r]
        # A trusted score that is not clearly right is wrong.
        if binary:
            trusted = abs(float(scores[0, f])) > trust_r[r]
            exact = not trusted
            if trusted:
                wrong, mistake = (0,), True
        else:
            s = scores[:, f]
            trusted = np.abs(s) > trust_r[r]
            exact = not (same_scale and trusted.all())
            if not exact:
                wrong = np.flatnonzero(~right[:, f])
                mistake = s[y[r]] <= np.max(np.delete(s, y[r]))
        if exact:
            # Exact decision in the log domain, then a rescale of the
            # classes whose scaled weights could not score this row.
            cols = np.arange(n_coords) if idx is None else idx
            nz = vals != 0
            sign, log_mag = _log_scores(*_log_abs(theta[:, cols[nz]], balanced), vals[nz])
            if calibrate:
                true = sign * np.exp(np.minimum(log_mag, _LOG_SCORE_CAP))
                margins[r] = _margins(true[:, None], y[r : r + 1], None)[0]
            wrong = np.flatnonzero(Y[:, r] * sign <= 0)
            if binary:
                mistake = wrong.size > 0
            else:
                mistake = not _is_strict_max(y[r], sign, log_mag)
            bound[:] = bounds
            for k in np.flatnonzero(~np.atleast_1d(trusted)):
                _rescale(state, k, balanced)
            gs, bounds = g.tolist(), bound.tolist()
            same_scale = binary or min(gs) == max(gs)
        t = t0 + r + 1  # rounds of the stream, this one included
        mistakes += bool(mistake)
        for k in wrong:
            step = learning_rate * w[r] * Y[k, r]
            if average:
                _accumulate(state, k, idx, t, balanced)
            if idx is None:
                new = theta[k]
                new += step * vals
            else:
                theta[k, idx] += step * vals
                new = theta[k, idx]
            # An upper bound on the log-weights, cheaper than their max.
            bounds[k] += abs(step) * largest[r]
            if bounds[k] - gs[k] > _HEADROOM:
                bound[:] = bounds
                _rescale(state, k, balanced)
                gs, bounds = g.tolist(), bound.tolist()
                same_scale = binary or min(gs) == max(gs)
            elif idx is None:
                u[k] = _scaled(new, gs[k], balanced)
            else:
                u[k, idx] = _scaled(new, gs[k], balanced)
            updates += 1
        i = r + 1
    bound[:] = bounds
    if calibrate:
        rounds = np.arange(t0 + 1, t0 + n + 1, dtype=np.float64)
        margins = np.clip(np.nan_to_num(margins), -_MARGIN_CAP, _MARGIN_CAP)
        record_margins(state, margins, y.astype(np.intp), w, rounds)
    state["counters"] += (n, mistakes, updates)


@single_blas_thread()  # the same bits for any thread count
def _hypothesis_scores(X, coef, intercept, log_mag_w, sign_w):
    """Scores of a hypothesis, and exact ones for the rows that need them.

    ``coef`` and ``intercept``: the published weights; ``log_mag_w`` and
    ``sign_w``: the same in the log domain (the last column is the bias).
    Returns ``(scores, rows, sign, log_mag)``: ``scores`` from the float64
    coefficients, and for the ``rows`` where one of them is not finite or
    too small to trust, every score as sign and log-magnitude.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        scores = safe_sparse_dot(X, coef.T, dense_output=True) + intercept
        if sp.issparse(X):
            l1 = np.asarray(abs(X).sum(axis=1)).ravel()
            nnz = np.diff(X.indptr)
        else:
            l1, nnz = np.abs(X).sum(axis=1), X.shape[1]
        trust = _TINY * (l1 + nnz + 1)
        ok = np.isfinite(scores) & (np.abs(scores) > trust[:, None])
    rows = np.flatnonzero(~ok.all(axis=1))
    n_rows, bias = log_mag_w.shape[0], X.shape[1]
    sign, log_mag = np.empty((rows.size, n_rows)), np.empty((rows.size, n_rows))
    for pos, r in enumerate(rows):
        if sp.issparse(X):
            sl = slice(X.indptr[r], X.indptr[r + 1])
            idx, vals = X.indices[sl], X.data[sl]
        else:
            idx = np.flatnonzero(X[r])
            vals = X[r, idx]
        nz = vals != 0
        idx, vals = np.append(idx[nz], bias), np.append(vals[nz], 1.0)
        sign[pos], log_mag[pos] = _log_scores(log_mag_w[:, idx], sign_w[:, idx], vals)
    return scores, rows, sign, log_mag


def _published_weights(state, balanced, average):
    """Log-magnitude and sign of the published weights (the last column is the bias).

    The weights of the hypothesis, or with ``average`` of the average of the
    hypotheses of every round played, from the log-domain sums.
    """
    theta, t = state["theta"], int(state["counters"][0])
    if not (average and t > 0):
        return _log_abs(theta, balanced)
    with np.errstate(divide="ignore"):
        rounds = np.log(t - state["stamp"])
    p = np.logaddexp(state["acc_plus"], theta + rounds) - np.log(t)
    if not balanced:
        return p, np.ones_like(p)
    m = np.logaddexp(state["acc_minus"], rounds - theta) - np.log(t)
    return _log_abs_diff(p, m)


_NOTES_DOC = """
    The update follows the lecture notes "Online learning: Perceptron and
    Winnow": on a mistake with the wrong prediction ``yhat``,
    ``w <- w * exp(-learning_rate yhat x)`` and ``b <- b exp(-learning_rate yhat)``, from
    weights and bias of ones. A score of exactly zero counts as a
    mistake (the notes' ``sign(0)`` is not defined), and the update then
    uses ``yhat = -y``, so every mistake moves the weights towards ``y``.

    **Balanced form.** The notes replace ``x`` by ``[x; -x]``. Here the bias
    input ``1`` is doubled as well, giving a positive and a negative bias:
    a single positive bias would push every score towards the positive
    class. Since both copies start at one and move by opposite amounts, the
    negative copy is always the inverse of the positive one, and the
    effective weight is ``2 sinh(theta)`` for the log-weight ``theta`` of
    the positive copy. The very first example is therefore always a
    mistake (score 0), as for the Perceptron.

    **Log-domain storage.** The weights are stored as their logarithms, so
    that no weight overflows or underflows over a long stream. Scores are
    computed with the weights scaled by a per-class factor ``exp(-g)``
    chosen to keep them in range; a round whose scaled score is too small
    to trust (the weights underflowed) or whose features are huge is scored
    exactly in the log domain instead, each term divided by the largest
    before summing. The decisions of training and :meth:`predict` are
    therefore right whatever the size of the weights. Their size does grow
    without bound on streams that are not separable once ``learning_rate`` is not
    small (for example to ``exp(3000)`` after a million rounds at ``learning_rate=1``
    with 0.2% of flipped labels): the log-weights drift up together, mostly
    as a common factor of all the weights, on which no prediction depends.
    Such weights are published rescaled (see ``log_scale_``). :meth:`decision_function` returns
    ``X @ coef_.T + intercept_``, and raises a ``ValueError`` when a score
    overflows float64 (features far larger than the training data), where
    :meth:`predict` still compares the scores exactly. A call fails, leaving
    the model as it was, only if a log-weight itself overflows.

    **Multiclass.** One weight vector per class, each trained on the
    class-versus-rest labels of every round; :meth:`predict` returns the
    class of the largest score.

    **Sample weights** multiply ``learning_rate`` for their row (times the weight of
    its class, ``class_weight``); rows of weight zero are not played at all.

    **Probabilities.** Each round's margin is recorded before the round's
    update, so it is out of sample, in fixed bins (memory independent of
    the stream, the same for any split of it into calls), and one scale of
    the scores is fitted to them: the calibration of the kernel estimators
    of the package. The scores of huge weights are handled in the log
    domain, as :meth:`predict` handles them.

    **Averaging** (``average=True``) uses the hypothesis in force when each
    round is predicted, as the other estimators of the package do. Each
    weight's running sum over rounds is kept in the log domain and brought
    up to date only when the weight changes (the timestamp trick), so a
    round costs no more than without averaging.

    The round loop is written in Python over NumPy: between two updates
    the scores of many rows are computed at once, since they share the
    weights; a mistake costs a few NumPy calls over the row's non-zero
    features.

    **A linear model.** Winnow has no kernel: on data that no hyperplane
    separates it stays near the majority rate whatever its parameters. On
    the 2-D Banana set (5 seeds of the package's measurement of defaults,
    "Default parameters" in the user guide) its test accuracy has median
    0.472 and minimum 0.430 against a majority rate of 0.552 (on Adult,
    a9a: median 0.849). Its strength is many features of which few matter
    (its mistake bound grows only with the logarithm of the number of
    features); for a non-linear boundary, map the features first (for
    example with
    :class:`~sklearn.kernel_approximation.Nystroem` in a pipeline) or use
    a kernel estimator.
"""


class Winnow(_OnlineStreamMixin, ClassifierMixin, BaseEstimator):
    __doc__ = (
        """Winnow: a linear online classifier with multiplicative updates.

    Winnow predicts ``sign(w . x + b)`` with positive weights, all ones at
    the start, and on each prediction mistake (``y (w . x + b) <= 0``,
    labels in ``{-1, +1}``) multiplies every weight by
    ``exp(learning_rate * y * x_j)`` and the bias by ``exp(learning_rate * y)`` (Littlestone,
    1988, in the exponential form of the lecture notes "Online learning:
    Perceptron and Winnow"). Features with no bearing on the target are winnowed out
    geometrically fast, so its mistakes grow only with the logarithm of the
    number of irrelevant features, where the Perceptron's grow linearly.

    With ``balanced=True`` (the default) the model keeps a positive and a
    negative copy of every weight and of the bias, and its effective
    weights are their differences, which can be negative. More than two
    classes are learned one-vs-rest, as in
    :class:`~sklearn.linear_model.SGDClassifier`.

    Parameters
    ----------
    learning_rate : float, default=0.1
        The log of a weight moves by ``learning_rate * y * x_j`` on a
        mistake (times the sample weight). It is not scale-free, so scale
        the features, for example to ``[-1, 1]``. The default was measured
        as a safe choice on such data (USPS digits, Adult, Gaussian blobs),
        where larger values can cost much accuracy; on sparse boolean data
        with many irrelevant features, values from 0.5 to 1 make fewer
        mistakes. For small ``learning_rate`` the effective weights stay nearly linear
        in the log-weights and Winnow behaves much like the Perceptron. May
        be changed between calls of a stream, like a learning-rate schedule.

    balanced : bool, default=True
        Whether to learn on ``[x, 1, -x, -1]`` instead of ``[x, 1]``, so that
        the effective weights and bias can be negative. Without it, the
        weights and the bias stay positive: on non-negative data every score
        is then positive.

MAX_ITER
STOPPING
    shuffle : bool, default=True
        Whether ``fit`` reshuffles the training data before each epoch.

    average : bool, default=True
        If True, the fitted hypothesis (``coef_``, ``intercept_``,
        :meth:`predict`) is the average of the hypotheses used in every
        round played (the online-to-batch conversion), maintained exactly
        at the cost of the updates. The online algorithm itself is not
        changed, and ``n_mistakes_`` still counts the mistakes of the
        hypotheses played online. Averaging is the default: the last
        hypothesis of the epochs can end on a bad one, which the average
        smooths out; on the shipped data sets (3 seeds) it raised the
        worst test accuracy above the majority rate from -9.9 to +6.8
        points on Adult (a9a) and from +36.4 to +57.0 on Satimage, and was
        as good or better on the others (see "Default parameters" in the
        user guide). On Banana, where no hyperplane beats the majority
        class, neither setting helps.

    class_weight : dict, 'balanced' or None, default=None
        Step multiplier of each class, ``{class_label: weight}``: the sample
        weight of every row is multiplied by the weight of its class before
        the row is played, so ``learning_rate`` on it is scaled in the same way
        (classes missing from the dict weigh 1, and the rows of a class of
        weight 0 are not played). The keys must be classes of the model.
        ``'balanced'`` sets the weights to
        ``n_samples / (n_classes * np.bincount(y))`` from the labels ``y``
        of the ``fit`` call (sample weights do not enter), as
        :func:`~sklearn.utils.class_weight.compute_class_weight` computes
        them. ``partial_fit`` refuses ``'balanced'``, since one call does not
        show the class frequencies of a stream: compute the weights on a
        large enough sample of its labels and pass them as a dict. As the
        other parameters of a step, it may change between calls of a stream.

    warm_start : bool, default=False
        If True, ``fit`` continues the current stream instead of starting a
        new one. ``balanced`` and ``average`` are fixed for a stream:
        ``partial_fit`` and a warm-started ``fit`` refuse to go on after
        they changed.

    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling of ``fit``.

    verbose : int, default=0
        Progress output on stdout; 0 prints nothing. Each line gives the
        rounds played, the prediction mistakes made on them, their ratio
        and the rounds per second. With ``verbose >= 1``, ``fit`` prints a
        line at the end of every epoch, counting the rounds and mistakes of
        that epoch, with the time since the start of ``fit``, and says why
        it stopped; ``partial_fit`` prints a line, counting the rounds and
        mistakes of the whole stream, each time the stream passes a
        multiple of ``verbose_interval`` rounds. With ``verbose >= 2``,
        ``fit`` also prints a line each time an epoch passes a multiple of
        ``verbose_interval`` rounds. Lines are printed between the blocks of
        1024 rows in which the rounds are played, so a line comes at the end
        of the block in which the multiple falls.

    verbose_interval : int, default=10_000
        Rounds between two progress lines of ``partial_fit`` (and within the
        epochs of ``fit`` with ``verbose >= 2``).

    eta : float, default="deprecated"
        The former name of ``learning_rate``.

        .. deprecated:: 0.1
           ``eta`` was renamed to ``learning_rate`` in 0.1 (``eta`` is the
           projection threshold of the Projectrons) and will be removed in
           0.3.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Effective weights of the features in the original feature space
        (balanced: positive copy minus negative copy): one row for two
        classes, one row per class otherwise.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        Effective bias of each row of ``coef_``.

    log_scale_ : float
        ``coef_`` and ``intercept_`` are the weights of the hypothesis
        divided by ``exp(log_scale_)``. It is 0 unless the largest weight is
        beyond ``exp(700)`` or below ``exp(-700)``; then it is the log of that
        weight, so that the largest entry of ``coef_`` and ``intercept_`` is
        1 in size. One factor serves every class, so the signs and the order
        of the scores, hence :meth:`predict`, are those of the hypothesis.

    classes_ : ndarray of shape (n_classes,)
        The class labels.

    n_mistakes_ : int
        Prediction mistakes made while training, in the order the rounds
        were played: rounds where ``y f(x) <= 0`` (two classes), or where
        the score of the true class is not larger than every other score
        (more classes). Cumulative over ``partial_fit`` calls, reset by
        ``fit`` unless ``warm_start=True``.

    n_iter_ : int
        Number of epochs played by the last ``fit`` (1 after ``partial_fit``).

    proba_scale_ : float
        The scale ``a`` of the probabilities, ``sigmoid(a f(x))`` (two
        classes) or ``softmax(a f(x))`` with ``f`` the scores of the
        hypothesis, fitted by maximum likelihood on the progressive margins
        of the stream (see :meth:`predict_proba`).

    n_features_in_ : int
        Number of features seen during the first fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during the first fit. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    KernelPerceptron : The additive-update counterpart (with
        ``kernel='linear'``: the Perceptron without a bias).
    sklearn.linear_model.Perceptron : The linear Perceptron, with a bias.
    sklearn.linear_model.SGDClassifier : Linear models by SGD, one-vs-rest
        for more than two classes as here.

    Notes
    -----
NOTES

    References
    ----------
    N. Littlestone, "Learning quickly when irrelevant attributes abound: a
    new linear-threshold algorithm", Machine Learning 2(4), 1988.

    "Online learning: Perceptron and Winnow", lecture notes (the update,
    the initial weights of ones and the balanced form used here).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_budget._winnow import Winnow
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randint(0, 2, size=(300, 50)).astype(float)
    >>> y = (X[:, 0] + X[:, 1] + X[:, 2] >= 2).astype(int)
    >>> clf = Winnow(learning_rate=0.5, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    >>> bool(np.all(np.abs(clf.coef_[0, 3:]) < np.abs(clf.coef_[0, :3]).min()))
    True
    >>> proba = clf.predict_proba(X[:3])
    >>> proba.shape
    (3, 2)
    >>> bool((clf.classes_[proba.argmax(axis=1)] == clf.predict(X[:3])).all())
    True
    """.replace("MAX_ITER\n", _MAX_ITER_DOC.lstrip("\n") + "\n")
        .replace("STOPPING\n", _STOPPING_DOC.lstrip("\n") + "\n")
        .replace("NOTES\n", _NOTES_DOC.strip("\n") + "\n")
    )

    _doc_link_module = "sklearn_budget"
    _doc_link_template = _DOC_LINK_TEMPLATE

    _parameter_constraints: dict = {
        "learning_rate": [Interval(Real, 0.0, None, closed="neither")],
        "balanced": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "average": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "verbose_interval": [Interval(Integral, 1, None, closed="left")],
        "eta": [Interval(Real, 0.0, None, closed="neither"), DEPRECATED_CONSTRAINT],
    }

    _renamed_parameters = (("learning_rate", "eta"),)

    # Parameters fixed for the whole of a stream: they shape its state.
    _stream_params = ("balanced", "average")

    # The state's counters: rounds, mistakes, updates of the epoch.
    _counter_index = (0, 1, 2)

    # Only the bins of the margins are left out of a call's undo record
    # until the rounds change them.
    _lazy_undo_prefixes = ("cal_",)

    def __init__(
        self,
        *,
        learning_rate=0.1,
        balanced=True,
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
        eta=DEPRECATED,
    ):
        self.learning_rate = learning_rate
        self.balanced = balanced
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
        self.eta = eta

    # ------------------------------------------------------------------
    # State
    # ------------------------------------------------------------------
    def _reset(self, X, from_partial_fit=False):
        """Start a new stream of the classes ``classes_``: every weight and bias at one."""
        n_rows = 1 if len(self.classes_) == 2 else len(self.classes_)
        shape = (n_rows, X.shape[1] + 1)  # the last column is the bias
        theta = np.zeros(shape)
        self._state = {
            "theta": theta,  # log-weights (balanced: of the positive copies)
            "g": np.zeros(n_rows),  # log of each class's scale
            # Upper bound on each class's log-weights (balanced: their size).
            "bound": np.zeros(n_rows),
            "u": _scaled(theta, 0.0, self.balanced),  # weights times exp(-g)
            "counters": np.zeros(3, dtype=np.int64),  # rounds, mistakes, updates
            **new_bins(len(self.classes_)),  # the progressive margins
        }
        if self.average:
            # Log of the sum over rounds of each (positive, negative) weight,
            # up to the round in "stamp".
            self._state["acc_plus"] = np.full(shape, -np.inf)
            if self.balanced:
                self._state["acc_minus"] = np.full(shape, -np.inf)
            self._state["stamp"] = np.zeros(shape, dtype=np.int64)
        self._stream_config = {name: getattr(self, name) for name in self._stream_params}

    # ------------------------------------------------------------------
    # Playing the stream
    # ------------------------------------------------------------------
    def _play(self, X, y, w, index=None, on_block=None, calibrate=True, order=None):
        """Play the rounds ``(X[order[i]], y[i])`` in order.

        ``y`` holds class indices and ``w`` the sample weights (all positive);
        ``index`` is not used (Winnow keeps no rows); ``order``: the rows of
        ``X`` played (None: all, in order). ``on_block``, if given,
        is called after each block (progress output). ``calibrate``: whether
        the rows are seen for the first time, so that their margins, out of
        sample, feed the probabilities.
        """
        if calibrate:
            self._before_change("cal_")
        n_rows = self._state["theta"].shape[0]
        if n_rows == 1:
            Y = (2.0 * y - 1.0)[None, :]
        else:
            Y = np.where(y == np.arange(n_rows)[:, None], 1.0, -1.0)
        for sl, rows in _blocks(order, y.shape[0], _BLOCK_SIZE):
            # Overflow only comes with non-finite log-weights, reported below.
            with np.errstate(over="ignore", invalid="ignore"):
                self._play_block(_rows(X, rows), Y[:, sl], y[sl], w[sl], calibrate)
            if not np.isfinite(self._state["theta"]).all():
                raise ValueError(_overflow_message("Non-finite log-weights"))
            if on_block is not None:
                on_block()

    def _play_block(self, X, Y, y, w, calibrate):
        """Play a block of rounds; ``Y`` holds the labels +-1 of each class (a row each)."""
        _play_block(
            self._state,
            X,
            Y,
            y,
            w,
            calibrate,
            float(renamed_value(self, "learning_rate", "eta", warn=False)),
            self.balanced,
            self.average,
        )

    def _end_of_call(self, n_rows):
        self._publish()

    def _publish(self):
        """Set the public attributes from the state."""
        log_mag, sign = _published_weights(self._state, self.balanced, self.average)
        # Weights beyond float64 (or all below it) are published divided by
        # one factor, the same for every class, that makes the largest 1.
        top = np.max(log_mag)
        scale = float(top) if np.isfinite(top) and abs(top) > _PUBLISH_RANGE else 0.0
        log_mag = log_mag - scale
        weights = sign * np.exp(log_mag)
        # The published hypothesis in the log domain, for exact predictions.
        self._log_mag, self._sign = log_mag, sign
        self.coef_ = np.ascontiguousarray(weights[:, :-1])
        self.intercept_ = weights[:, -1].copy()
        self.log_scale_ = scale
        self.n_mistakes_ = int(self._state["counters"][1])

    @property
    def proba_scale_(self):
        # Fitted to the bins of the margins on first access after a call
        # that changed them, and cached beside the estimator, as the kernel
        # estimators do: a stream of one-row calls does not refit it per row.
        if "_state" not in vars(self):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'proba_scale_'")
        cache = published(self)
        if "proba_scale_" not in cache:
            cache["proba_scale_"] = fit_scale(self._state)
        return cache["proba_scale_"]

    # ------------------------------------------------------------------
    # The public API
    # ------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Fit the model with ``max_iter`` online epochs over ``(X, y)``.

        Unless ``warm_start=True``, the model is reset first. Each epoch plays
        the rows as a stream (reshuffled when ``shuffle=True``); fitting stops
        early after an epoch without any update, or once the epoch's mistake
        rate has stopped improving (``tol``, ``n_iter_no_change``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample: it multiplies ``learning_rate`` on that sample
            (with the weight of its class, see ``class_weight``), and
            samples of weight zero are not played at all.

        Returns
        -------
        self : object
            Fitted estimator.

        Warns
        -----
        FIT_WARNS
        """
        return super().fit(X, y, sample_weight)

    fit.__doc__ = _fit_doc(fit.__doc__)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Play the rows of ``(X, y)`` as the next rounds of the stream.

        ``max_iter``, ``tol`` and ``n_iter_no_change`` do not apply: each
        row is played once, and no convergence is checked.
        ``class_weight='balanced'`` is refused (pass the weights as a dict).

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
            Weight of each sample: it multiplies ``learning_rate`` on that sample
            (with the weight of its class, see ``class_weight``), and
            samples of weight zero are not played at all.

        Returns
        -------
        self : object
            The updated estimator.
        """
        return super().partial_fit(X, y, classes, sample_weight)

    def _scores(self, X):
        """:func:`_hypothesis_scores` of the published hypothesis."""
        return _hypothesis_scores(X, self.coef_, self.intercept_, self._log_mag, self._sign)

    def decision_function(self, X):
        """Scores ``X @ coef_.T + intercept_`` of the fitted hypothesis.

        They are the scores of the hypothesis divided by
        ``exp(log_scale_)`` (1 unless the weights leave the float64 range).

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
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        scores, rows, sign, log_mag = self._scores(X)
        with np.errstate(over="ignore"):
            scores[rows] = sign * np.exp(log_mag)
        if not np.isfinite(scores).all():
            raise ValueError(
                "Non-finite scores: a score of X exceeds the float64 range (largest |x|: "
                f"{abs(X).max():.3g}). predict still compares the scores exactly; scale X as "
                "the training data were scaled to get finite scores."
            )
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X):
        """Predict class labels for samples in X.

        The signs and the order of the scores are computed exactly, even
        where the scores themselves exceed the float64 range.

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
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        scores, rows, sign, log_mag = self._scores(X)
        if len(self.classes_) == 2:
            positive = scores[:, 0] > 0
            positive[rows] = sign[:, 0] > 0
            return self.classes_[positive.astype(int)]
        best = np.argmax(scores, axis=1)
        best[rows] = _argmax_exact(sign, log_mag)
        return self.classes_[best]

    def predict_proba(self, X):
        """Probability estimates from the progressive margins of the stream.

        Every round's margin ``m_t`` is computed before the round's update,
        so it is out of sample. ``proba_scale_`` is fitted on them by maximum
        likelihood as ``P(correct) = sigmoid(a m_t - log(C - 1))`` with ``C``
        classes (Platt scaling without an intercept, with Platt's smoothed
        targets; round ``t`` weighs ``t`` times its sample weight, so that
        the hypotheses nearer the final one count more; in ``fit``, the
        first epoch only, whose rows are unseen), as for the kernel
        estimators of the package. The probabilities are
        ``sigmoid(a f(x))`` for two classes and ``softmax(a f(x))``
        otherwise, ``f`` the scores of the hypothesis (``decision_function``
        times ``exp(log_scale_)``), so that they agree with :meth:`predict`.
        With ``average=True`` the margins are still those of the hypotheses
        played online, whose scores are on the scale of the average's.

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

        The scores of a row beyond ``1e300`` (the weights of a long stream,
        or huge features) are all divided by the factor that brings the
        largest to ``1e300``: their order is kept, and every probability is
        0 or 1 there anyway.

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
        X = self._validate_X(X, reset=False)
        scores, rows, sign, log_mag = self._scores(X)
        a = self.proba_scale_
        with np.errstate(over="ignore", invalid="ignore"):
            z = a * scores
        if self.log_scale_ != 0.0 or rows.size or not np.isfinite(z).all():
            # The scores in the log domain, the rescaling of coef_ undone.
            with np.errstate(divide="ignore", invalid="ignore"):
                log_size = np.log(np.abs(scores))
                zsign = np.sign(scores)
            log_size[rows], zsign[rows] = log_mag, sign
            log_size += np.log(a) + self.log_scale_
            # Rows beyond the cap are divided by one factor: their order is
            # kept, and their probabilities are 0 or 1 anyway.
            top = np.max(log_size, axis=1, keepdims=True)
            log_size -= np.where(top > _LOG_SCORE_CAP, top - _LOG_SCORE_CAP, 0.0)
            z = zsign * np.exp(log_size)
        binary = len(self.classes_) == 2
        return log_probabilities(z[:, 0] if binary else z, binary)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
