"""Winnow against a plain per-sample implementation, and its API promises."""

import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import (
    check_dataframe_column_names_consistency,
    check_param_validation,
    parametrize_with_checks,
)

import sklearn_budget._stream
from sklearn_budget._winnow import Winnow


def reference_winnow(X, y, classes, eta, balanced=True, weights=None, average=False):
    """Winnow played one row at a time with plain float weights.

    Written from the lecture notes' exponential form and the decisions of
    ``doc/decisions.rst`` ("Winnow"): weights and bias of ones, predict with
    ``w . x + b``, and on a mistake (``y score <= 0``) multiply each weight
    by ``exp(eta y x_j)`` and the bias by ``exp(eta y)``. Balanced: a
    positive and a negative copy of every weight and of the bias, updated
    with ``x`` and ``-x``. Multiclass: one such learner per class on the
    class-versus-rest labels. Returns ``(mistakes, coef, intercept)``; the
    average is over the hypotheses used to predict each round.
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    classes = list(classes)
    n, d = X.shape
    K = 1 if len(classes) == 2 else len(classes)
    weights = np.ones(n) if weights is None else weights
    wp, bp = np.ones((K, d)), np.ones(K)
    wm, bm = np.ones((K, d)), np.ones(K)
    sum_w, sum_b = np.zeros((K, d)), np.zeros(K)
    mistakes = 0
    for t in range(n):
        x, c = X[t], classes.index(y[t])
        if balanced:
            coef, bias = wp - wm, bp - bm
        else:
            coef, bias = wp, bp
        sum_w += coef
        sum_b += bias
        scores = coef @ x + bias
        if K == 1:
            labels = np.array([1.0 if c == 1 else -1.0])
            mistakes += labels[0] * scores[0] <= 0
        else:
            labels = np.where(np.arange(K) == c, 1.0, -1.0)
            mistakes += scores[c] <= max(scores[k] for k in range(K) if k != c)
        for k in range(K):
            if labels[k] * scores[k] <= 0:
                step = eta * weights[t] * labels[k]
                wp[k] *= np.exp(step * x)
                bp[k] *= np.exp(step)
                wm[k] *= np.exp(-step * x)
                bm[k] *= np.exp(-step)
    if average:
        return mistakes, sum_w / n, sum_b / n
    if balanced:
        return mistakes, wp - wm, bp - bm
    return mistakes, wp, bp


def assert_close(actual, expected, rtol=1e-12):
    """Agreement relative to the size of the expected array."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    scale = np.max(np.abs(expected))
    assert scale > 0
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


def make_stream(n, n_classes=2, n_features=6, seed=0, sparse=False, noise=0.5):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, n_features))
    if sparse:
        X[rng.rand(n, n_features) < 0.5] = 0.0
    W = rng.randn(n_classes, n_features)
    y = np.argmax(X @ W.T + noise * rng.randn(n, n_classes), axis=1)
    if n_classes == 2:
        y = np.where(y == 1, "b", "a")  # labels other than 0/1
    return X, y


def state(est):
    return pickle.dumps(sorted(vars(est).items()))


def check_against_reference(est, X, y, **kw):
    classes = np.unique(y)
    ref = reference_winnow(
        X, y, classes, est.learning_rate, est.balanced, average=est.average, **kw
    )
    assert est.n_mistakes_ == ref[0]
    # Weights and bias together: the bias alone may be exactly zero.
    assert_close(np.c_[est.coef_, est.intercept_], np.c_[ref[1], ref[2]])
    return ref


# ----------------------------------------------------------------------
# Exactness
# ----------------------------------------------------------------------
@pytest.mark.parametrize("balanced", [True, False])
@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("eta", [0.1, 0.7])
def test_matches_reference(n_classes, balanced, eta):
    X, y = make_stream(400, n_classes, seed=n_classes)
    est = Winnow(learning_rate=eta, balanced=balanced).partial_fit(X, y, classes=np.unique(y))
    ref = check_against_reference(est, X, y)
    assert 10 < ref[0] < len(y) - 10  # the stream exercises updates and quiet rounds
    assert est.coef_.shape == (1 if n_classes == 2 else n_classes, X.shape[1])


@pytest.mark.parametrize("n_classes", [2, 4])
def test_sparse_matches_dense_and_reference(n_classes):
    X, y = make_stream(400, n_classes, n_features=30, seed=7, sparse=True)
    dense = Winnow(learning_rate=0.5).partial_fit(X, y, classes=np.unique(y))
    for fmt in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        est = Winnow(learning_rate=0.5).partial_fit(fmt(X), y, classes=np.unique(y))
        assert est.n_mistakes_ == dense.n_mistakes_
        assert_close(np.c_[est.coef_, est.intercept_], np.c_[dense.coef_, dense.intercept_])
        check_against_reference(est, X, y)
    Xt = sp.csr_matrix(X[:50])
    assert_close(dense.decision_function(Xt), dense.decision_function(X[:50]))


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_split_partial_fit_matches_one_call(n_classes, average):
    X, y = make_stream(2500, n_classes, seed=3)  # crosses the 1024-row blocks
    whole = Winnow(learning_rate=0.3, average=average).partial_fit(X, y, classes=np.unique(y))
    split = Winnow(learning_rate=0.3, average=average)
    for chunk in np.array_split(np.arange(len(y)), [1, 2, 700, 1024, 1500]):
        split.partial_fit(X[chunk], y[chunk], classes=np.unique(y))
    assert split.n_mistakes_ == whole.n_mistakes_
    np.testing.assert_array_equal(split.coef_, whole.coef_)
    np.testing.assert_array_equal(split.intercept_, whole.intercept_)
    check_against_reference(whole, X, y)


@pytest.mark.parametrize("balanced", [True, False])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_average_matches_reference(n_classes, balanced, sparse):
    X, y = make_stream(400, n_classes, n_features=8, seed=11, sparse=sparse)
    Xf = sp.csr_matrix(X) if sparse else X
    est = Winnow(learning_rate=0.4, balanced=balanced, average=True)
    est.partial_fit(Xf, y, classes=np.unique(y))
    check_against_reference(est, X, y)
    # The online mistakes are those of the plain algorithm.
    plain = Winnow(learning_rate=0.4, balanced=balanced).partial_fit(Xf, y, classes=np.unique(y))
    assert est.n_mistakes_ == plain.n_mistakes_


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("average", [False, True])
def test_sample_weight_multiplies_learning_rate(n_classes, average):
    X, y = make_stream(300, n_classes, seed=5)
    w = np.random.RandomState(0).uniform(0.2, 3.0, size=len(y))
    w[::7] = 0.0  # rows of weight zero are not played
    est = Winnow(learning_rate=0.3, average=average)
    est.partial_fit(X, y, classes=np.unique(y), sample_weight=w)
    keep = w > 0
    check_against_reference(est, X[keep], y[keep], weights=w[keep])


@pytest.mark.parametrize("average", [False, True])
def test_fit_plays_shuffled_epochs(average):
    X, y = make_stream(150, 3, seed=2)
    est = Winnow(learning_rate=0.5, max_iter=3, random_state=42, average=average).fit(X, y)
    assert est.n_iter_ == 3
    rng = sklearn_budget._stream._shuffle_rng(42)
    order = np.concatenate([rng.permutation(len(y)) for _ in range(3)])
    check_against_reference(est, X[order], y[order])


def test_fit_stops_after_an_epoch_without_updates():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = (X[:, 0] > 0.1).astype(int)  # separable with a wide margin after filtering
    keep = np.abs(X[:, 0] - 0.1) > 0.3
    X, y = X[keep], y[keep]
    est = Winnow(learning_rate=1.0, max_iter=100, shuffle=False).fit(X, y)
    assert est.n_iter_ < 100
    # The last epoch made no mistake, so the one before it was the last to update.
    stream = np.tile(np.arange(len(y)), est.n_iter_)
    check_against_reference(est, X[stream], y[stream])
    assert est.score(X, y) == 1.0


def test_warm_started_fit_continues_the_stream():
    X1, y1 = make_stream(120, 3, seed=21)
    X2, y2 = make_stream(150, 3, seed=22)
    kw = dict(learning_rate=0.3, shuffle=False, max_iter=1, average=True)
    warm = Winnow(warm_start=True, **kw).fit(X1, y1).fit(X2, y2)
    stream = Winnow(**kw).partial_fit(X1, y1, classes=[0, 1, 2]).partial_fit(X2, y2)
    assert warm.n_mistakes_ == stream.n_mistakes_
    np.testing.assert_array_equal(warm.coef_, stream.coef_)
    check_against_reference(warm, np.vstack([X1, X2]), np.r_[y1, y2])


def test_learning_rate_may_change_between_calls():
    X, y = make_stream(300, 2, seed=4)
    est = Winnow(learning_rate=0.2, average=False).partial_fit(X[:150], y[:150], classes=["a", "b"])
    est.set_params(learning_rate=0.9).partial_fit(X[150:], y[150:])
    # Reference: the first rows with 0.2, the rest with 0.9 (learning_rate * weight).
    weights = np.r_[np.ones(150), np.full(150, 0.9 / 0.2)]
    ref = reference_winnow(X, y, ["a", "b"], 0.2, weights=weights)
    assert est.n_mistakes_ == ref[0]
    assert_close(est.coef_, ref[1])


def test_binary_decision_function_and_predict_agree_with_coef():
    X, y = make_stream(300, 2, seed=9)
    est = Winnow(learning_rate=0.3).fit(X, y)
    scores = est.decision_function(X)
    assert scores.shape == (len(y),)
    assert_close(scores, X @ est.coef_[0] + est.intercept_[0])
    np.testing.assert_array_equal(est.predict(X), np.where(scores > 0, "b", "a"))


def test_multiclass_predicts_the_largest_score():
    X, y = make_stream(300, 4, seed=9)
    est = Winnow(learning_rate=0.3).fit(X, y)
    scores = est.decision_function(X)
    assert scores.shape == (len(y), 4)
    assert_close(scores, X @ est.coef_.T + est.intercept_)
    np.testing.assert_array_equal(est.predict(X), np.argmax(scores, axis=1))
    assert est.score(X, y) > 0.7


def test_winnow_learns_a_sparse_target_among_irrelevant_features():
    # A disjunction of 3 of 200 boolean features: few mistakes, and the
    # relevant weights stand out.
    rng = np.random.RandomState(0)
    X = (rng.rand(3000, 200) < 0.1).astype(float)
    y = (X[:, :3].sum(axis=1) > 0).astype(int)
    est = Winnow(learning_rate=0.5).partial_fit(X, y, classes=[0, 1])
    assert est.n_mistakes_ < 100
    assert np.all(est.coef_[0, :3] > np.max(np.abs(est.coef_[0, 3:])))


# ----------------------------------------------------------------------
# Long streams and the float64 range
# ----------------------------------------------------------------------
def exact_log_weights(est):
    """Sign and log-magnitude of the hypothesis's weights and bias, from the public attributes."""
    w = np.c_[est.coef_, est.intercept_]
    with np.errstate(divide="ignore"):
        return np.sign(w), np.log(np.abs(w)) + est.log_scale_


def test_a_million_rounds_stay_finite_and_exact():
    # Unbalanced Winnow on non-negative rows: every weight and the bias are
    # positive, so every score is positive and every negative row is a
    # mistake, which divides the weights by exp(eta x). After the 20 000
    # negatives of the stream the weights are about exp(-20000): plain float
    # weights underflow to zero after a few hundred, their scores become 0
    # and every positive row turns into a mistake too.
    T, eta = 1_000_000, 1.0
    rng = np.random.RandomState(0)
    X = rng.uniform(0.98, 1.0, size=(T, 3))
    y = (rng.rand(T) > 0.02).astype(int)
    est = Winnow(learning_rate=eta, balanced=False, average=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for start in range(0, T, 250_000):
            sl = slice(start, start + 250_000)
            est.partial_fit(X[sl], y[sl], classes=[0, 1])
        scores = est.decision_function(X[:1000])
        pred = est.predict(X[:1000])
    negatives = int(np.sum(y == 0))
    assert est.n_mistakes_ == negatives
    assert np.isfinite(est.coef_).all() and np.isfinite(est.intercept_).all()
    assert np.all(scores > 0) and np.isfinite(scores).all()
    np.testing.assert_array_equal(pred, 1)
    # The weights are exact: the log of each is -eta times the sum of its
    # input over the negatives.
    expected = -eta * np.r_[X[y == 0].sum(axis=0), negatives]
    assert est.log_scale_ < -700
    sign, log_w = exact_log_weights(est)
    np.testing.assert_array_equal(sign, 1)
    np.testing.assert_allclose(log_w[0], expected, rtol=1e-12)


def noisy_stream(T, seed=1):
    rng = np.random.RandomState(seed)
    # Continuous values: no score is zero in exact arithmetic, so plain
    # float weights decide every round as exact ones do.
    X = rng.uniform(-1.0, 1.0, size=(T, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.1 > 0).astype(int)
    y[rng.rand(T) < 0.002] ^= 1
    return X, y


def test_a_million_balanced_rounds_with_weights_beyond_float64():
    # Balanced Winnow on a stream with a few flipped labels: the log-weights
    # drift together, to about 3000 after the million rounds.
    T = 1_000_000
    X, y = noisy_stream(T)
    est = Winnow(learning_rate=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for start in range(0, T, 500_000):
            sl = slice(start, start + 500_000)
            est.partial_fit(X[sl], y[sl], classes=[0, 1])
        scores = est.decision_function(X[:10000])
        pred = est.predict(X[:10000])
    assert est.log_scale_ > 2000
    assert np.isfinite(est.coef_).all() and np.isfinite(scores).all()
    assert np.max(np.abs(np.c_[est.coef_, est.intercept_])) == 1.0
    np.testing.assert_array_equal(pred, (scores > 0).astype(int))
    assert np.mean(pred == y[:10000]) > 0.9


def exact_reference_winnow(X, y, eta):
    """Binary balanced Winnow with weights of any size.

    The log-weights are plain float sums; each score is computed in decimal
    arithmetic, 50 digits and an exponent range far beyond float64, from
    the positive copies exp(theta) and the negative ones exp(-theta).
    Returns the mistakes and the sign and log of each weight (bias last).
    """
    from decimal import Context, Decimal

    ctx = Context(prec=50, Emax=10**8, Emin=-(10**8))
    theta = np.zeros(X.shape[1] + 1)
    mistakes = 0
    for x, label in zip(np.c_[X, np.ones(len(X))], np.where(y == 1, 1.0, -1.0)):
        score = Decimal(0)
        for t, v in zip(theta, x):
            w = ctx.subtract(ctx.exp(Decimal(float(t))), ctx.exp(Decimal(float(-t))))
            score = ctx.add(score, ctx.multiply(w, Decimal(float(v))))
        if int(label) * score <= 0:
            mistakes += 1
            theta += eta * label * x
    weights = [ctx.subtract(ctx.exp(Decimal(float(t))), ctx.exp(Decimal(float(-t)))) for t in theta]
    sign = np.array([float(w.compare(0)) for w in weights])
    log_w = np.array([float(ctx.ln(abs(w))) if w != 0 else -np.inf for w in weights])
    return mistakes, sign, log_w


def test_weights_beyond_float64_match_an_exact_reference():
    X, y = noisy_stream(8000)
    est = Winnow(learning_rate=5.0, average=False).partial_fit(X, y, classes=[0, 1])
    assert est.log_scale_ > 800  # beyond float64: plain weights would overflow
    mistakes, sign, log_w = exact_reference_winnow(X, y, 5.0)
    assert est.n_mistakes_ == mistakes
    got_sign, got_log = exact_log_weights(est)
    np.testing.assert_array_equal(got_sign[0], sign)
    np.testing.assert_allclose(got_log[0], log_w, rtol=1e-12)


@pytest.mark.parametrize("average", [False, True])
def test_huge_weights_match_reference(average):
    # Weights up to about exp(540), within float64 for the reference, and
    # beyond the point where the scaled weights are rescaled.
    X, y = noisy_stream(5000)
    est = Winnow(learning_rate=5.0, average=average).partial_fit(X, y, classes=[0, 1])
    assert np.abs(est.coef_).max() > 1e200
    assert est.log_scale_ == 0
    check_against_reference(est, X, y)


# scikit-learn's own finiteness check of X sums the huge features.
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
def test_overflowing_log_weights_raise_and_keep_the_model():
    X, y = make_stream(200, 2, seed=1)
    est = Winnow(learning_rate=0.3).fit(X, y)
    before = state(est)
    with pytest.raises(ValueError, match="Non-finite log-weights"):
        est.set_params(learning_rate=10.0).partial_fit(X, y, sample_weight=np.full(len(y), 1e308))
    est.set_params(learning_rate=0.3)
    assert state(est) == before
    with pytest.raises(ValueError, match="Non-finite log-weights"):
        Winnow(learning_rate=10.0).fit(X * 1e308, y)
    # Huge features give huge log-weights, published rescaled.
    big = Winnow(learning_rate=0.3).fit(X * 1e300, y)
    assert np.isfinite(big.coef_).all() and big.log_scale_ > 1e290
    np.testing.assert_array_equal(big.predict(X), big.predict(X * 1e300))


# scikit-learn's own finiteness check of X sums the huge features.
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
def test_huge_scores_raise_in_decision_function_but_not_in_predict():
    X, y = make_stream(200, 3, seed=1)
    est = Winnow(learning_rate=0.3).fit(X, y)
    signs = np.sign(X)
    # Rows whose scores, 1.7e308 (signs @ coef_.T) up to the negligible
    # intercept, are all beyond float64.
    signs = signs[np.all(np.abs(signs @ est.coef_.T) > 1.1, axis=1)]
    assert len(signs) > 20
    big = signs * 1.7e308
    with pytest.raises(ValueError, match="Non-finite scores"):
        est.decision_function(big)
    expected = np.argmax(signs @ est.coef_.T, axis=1)
    np.testing.assert_array_equal(est.predict(big), expected)
    # Two classes: the sign of the score.
    est2 = Winnow(learning_rate=0.3).fit(X, y == 1)
    signs = np.sign(X)[np.abs(np.sign(X) @ est2.coef_[0]) > 1.1]
    big = signs * 1.7e308
    expected2 = signs @ est2.coef_[0] > 0
    assert 0 < expected2.sum() < len(expected2)
    np.testing.assert_array_equal(est2.predict(big), expected2)
    with pytest.raises(ValueError, match="Non-finite scores"):
        est2.decision_function(big)


def test_predictions_survive_underflowed_weights():
    # Weights of about exp(-800) are 0 in float64: they are published
    # rescaled, and their signs are still known.
    est = Winnow(learning_rate=1.0, balanced=False, average=False)
    X = np.ones((820, 2))
    y = np.zeros(820, dtype=int)
    y[0] = 1
    est.partial_fit(X, y, classes=[0, 1])
    assert est.log_scale_ == -819.0
    np.testing.assert_array_equal(np.c_[est.coef_, est.intercept_], 1.0)
    np.testing.assert_array_equal(est.predict(np.ones((3, 2))), 1)
    np.testing.assert_array_equal(est.decision_function(np.ones((3, 2))), 3.0)


@pytest.mark.parametrize("balanced", [True, False])
def test_log_domain_scores_match_decimal_arithmetic(balanced):
    # Log-weights of up to +-3000: weights and scores far outside float64.
    from decimal import Context, Decimal

    from sklearn_budget._winnow import _log_abs, _log_scores

    ctx = Context(prec=50, Emax=10**8, Emin=-(10**8))
    rng = np.random.RandomState(0)
    theta = rng.uniform(-3000, 3000, size=(4, 6))
    vals = rng.uniform(-2, 2, size=6)
    sign, log_mag = _log_scores(*_log_abs(theta, balanced), vals)
    for k in range(4):
        score = Decimal(0)
        for t, v in zip(theta[k], vals):
            w = ctx.exp(Decimal(float(t)))
            if balanced:
                w = ctx.subtract(w, ctx.exp(Decimal(float(-t))))
            score = ctx.add(score, ctx.multiply(w, Decimal(float(v))))
        assert sign[k] == float(score.compare(0))
        np.testing.assert_allclose(log_mag[k], float(ctx.ln(abs(score))), rtol=1e-12)


# ----------------------------------------------------------------------
# Bad input and atomic calls
# ----------------------------------------------------------------------
def test_partial_fit_needs_classes_first_and_rejects_unseen_labels():
    X, y = make_stream(50, 3)
    est = Winnow()
    with pytest.raises(ValueError, match="classes must be passed"):
        est.partial_fit(X, y)
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.raises(ValueError, match=r"labels \[2\] that are not in classes"):
        est.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(est, "classes_")
    est.partial_fit(X, y, classes=[0, 1, 2])
    before = state(est)
    with pytest.raises(ValueError, match=r"labels \[7\]"):
        est.partial_fit(X[:3], [0, 7, 1])
    with pytest.raises(ValueError, match="is not the same as on last call"):
        est.partial_fit(X, y, classes=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="number of classes has to be greater than one"):
        Winnow().partial_fit(X, np.zeros(len(X)), classes=[0])
    assert state(est) == before


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_refused(bad):
    X, y = make_stream(50, 2)
    Xb = X.copy()
    Xb[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        Winnow().fit(Xb, y)
    est = Winnow().fit(X, y)
    before = state(est)
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.partial_fit(Xb, y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.predict(Xb)
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.partial_fit(sp.csr_matrix(Xb), y)
    assert state(est) == before


def test_wrong_number_of_features_and_shapes_are_refused():
    X, y = make_stream(50, 2)
    est = Winnow().fit(X, y)
    before = state(est)
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :3], y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.partial_fit(X, y[:-1])
    with pytest.raises(ValueError, match="2D array"):
        est.predict(X[0])
    with pytest.raises(ValueError, match="sample_weight"):
        est.partial_fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        est.partial_fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="non-zero|all zero"):
        est.partial_fit(X, y, sample_weight=np.zeros(len(y)))
    assert state(est) == before


@pytest.mark.parametrize(
    "param, value",
    [
        ("learning_rate", 0.0),
        ("learning_rate", np.nan),
        ("learning_rate", "1"),
        ("max_iter", 0),
        ("balanced", "yes"),
    ],
)
def test_parameters_are_validated_on_every_call(param, value):
    X, y = make_stream(60, 2)
    est = Winnow().partial_fit(X, y, classes=["a", "b"])
    before = state(est)
    est.set_params(**{param: value})
    with pytest.raises((ValueError, TypeError), match=param):
        est.partial_fit(X, y)
    with pytest.raises((ValueError, TypeError), match=param):
        est.fit(X, y)
    est.set_params(**{param: Winnow().get_params()[param]})
    assert state(est) == before


@pytest.mark.parametrize("param", ["balanced", "average"])
def test_stream_parameters_cannot_change_mid_stream(param):
    X, y = make_stream(60, 2)
    est = Winnow(warm_start=True).partial_fit(X, y, classes=["a", "b"])
    before = state(est)
    est.set_params(**{param: not getattr(est, param)})
    with pytest.raises(ValueError, match=rf"{param}=.* -> "):
        est.partial_fit(X, y)
    with pytest.raises(ValueError, match=rf"{param}=.* -> "):
        est.fit(X, y)  # warm start
    est.set_params(**{param: not getattr(est, param)})
    assert state(est) == before
    # A new stream may use any value.
    clone(est).set_params(**{param: False}).fit(X, y)


def test_warm_started_fit_refuses_other_classes():
    X, y = make_stream(60, 3)
    est = Winnow(warm_start=True).fit(X, y)
    before = state(est)
    with pytest.raises(ValueError, match="differ from those of the warm-started model"):
        est.fit(X, np.where(y == 2, 1, y))
    assert state(est) == before


@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_call_leaves_the_model_as_it_was(exc, monkeypatch):
    X, y = make_stream(3000, 3, seed=8)
    est = Winnow(average=True).partial_fit(X[:500], y[:500], classes=[0, 1, 2])
    before = state(est)
    original = Winnow._play_block
    calls = []

    def play_block(self, *args):
        calls.append(1)
        if len(calls) > 1:  # fail in the second block, after a first one played
            raise exc("stop")
        return original(self, *args)

    monkeypatch.setattr(Winnow, "_play_block", play_block)
    with pytest.raises(exc):
        est.partial_fit(X[500:], y[500:])
    assert state(est) == before
    calls.clear()
    with pytest.raises(exc):
        est.set_params(warm_start=True).fit(X, y)
    est.set_params(warm_start=False)
    assert state(est) == before
    fresh = Winnow()
    calls.clear()
    with pytest.raises(exc):
        fresh.partial_fit(X, y, classes=[0, 1, 2])
    assert state(fresh) == state(Winnow())
    monkeypatch.undo()
    # The stream goes on as if nothing happened.
    est.partial_fit(X[500:], y[500:])
    check_against_reference(est, X, y)


def test_callers_arrays_are_not_modified():
    X, y = make_stream(80, 2, sparse=True)
    A = sp.csr_matrix(X)
    A.indices = A.indices.copy()
    for i in range(A.shape[0]):  # unsorted indices
        sl = slice(A.indptr[i], A.indptr[i + 1])
        A.indices[sl], A.data[sl] = A.indices[sl][::-1].copy(), A.data[sl][::-1].copy()
    A.has_sorted_indices = False
    w = np.linspace(0.5, 2, len(y))
    saved = [pickle.dumps(a) for a in (X, y, w, A.indices, A.data, A.indptr)]
    est = Winnow(average=True, random_state=0).fit(A, y, sample_weight=w)
    est.partial_fit(X, y, sample_weight=w)
    est.decision_function(A)
    est.predict(X)
    assert [pickle.dumps(a) for a in (X, y, w, A.indices, A.data, A.indptr)] == saved
    assert not A.has_sorted_indices
    ref = Winnow(average=True, random_state=0).fit(X, y, sample_weight=w)
    assert_close(Winnow(average=True, random_state=0).fit(A, y, sample_weight=w).coef_, ref.coef_)


def test_dates_are_refused():
    X, y = make_stream(40, 2)
    with pytest.raises(TypeError, match="datetime64 or timedelta64"):
        Winnow().fit((X * 1000).astype("int64").astype("datetime64[s]"), y)


# ----------------------------------------------------------------------
# scikit-learn compatibility
# ----------------------------------------------------------------------
_MISTAKE_DRIVEN = (
    "an update happens only on a mistake of the hypothesis of that moment, so a "
    "sample of integer weight w is not equivalent to w repetitions of it "
    "(scikit-learn xfails this check for its SGD family too)"
)


# check_class_weight_classifiers weighs class 0 by 1000 on blobs of
# standard deviation 20: a mistake moves a log-weight by up to
# 0.1 * 1000 * 60, and the average of weights spread over exp(+-3000) is
# the hypothesis of the largest weights met on the stream, not a consensus.
_AVERAGE_OF_HUGE_WEIGHTS = (
    "class weight 1000 on unscaled blobs moves a log-weight by thousands per "
    "mistake: the average is that of the largest weights met, not of the stream "
    "(the last hypothesis passes)"
)


def _expected_failed_checks(est):
    failing = {
        "check_sample_weight_equivalence_on_dense_data": _MISTAKE_DRIVEN,
        "check_sample_weight_equivalence_on_sparse_data": _MISTAKE_DRIVEN,
    }
    if est.average:
        failing["check_class_weight_classifiers"] = _AVERAGE_OF_HUGE_WEIGHTS
    return failing


@parametrize_with_checks(
    [Winnow(average=False), Winnow()], expected_failed_checks=_expected_failed_checks
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_param_validation():
    check_param_validation("Winnow", Winnow())


def test_dataframe_column_names_consistency():
    pytest.importorskip("pandas")
    check_dataframe_column_names_consistency("Winnow", Winnow())


def test_constraints_list_exactly_the_constructor_parameters():
    assert set(Winnow._parameter_constraints) == set(Winnow().get_params())


# ----------------------------------------------------------------------
# class_weight, predict_proba, verbose
# ----------------------------------------------------------------------
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_class_weight_is_the_same_as_the_sample_weight(n_classes, average):
    X, y = make_stream(500, n_classes, seed=11)
    classes = np.unique(y)
    class_weight = {classes[0]: 2.5, classes[-1]: 0.4}
    per_row = np.array([class_weight.get(c, 1.0) for c in classes])[np.searchsorted(classes, y)]
    sw = np.random.RandomState(0).uniform(0.5, 2.0, size=len(y))
    est = Winnow(learning_rate=0.3, average=average, random_state=0)
    a = clone(est).set_params(class_weight=class_weight).fit(X, y, sample_weight=sw)
    b = clone(est).fit(X, y, sample_weight=sw * per_row)
    np.testing.assert_array_equal(np.c_[a.coef_, a.intercept_], np.c_[b.coef_, b.intercept_])
    assert a.n_mistakes_ == b.n_mistakes_ and a.proba_scale_ == b.proba_scale_
    # A stream whose class weights change between calls.
    a = clone(est).set_params(class_weight=class_weight).partial_fit(X[:250], y[:250], classes)
    a.set_params(class_weight=None).partial_fit(X[250:], y[250:])
    b = clone(est).partial_fit(X[:250], y[:250], classes, sample_weight=per_row[:250])
    b.partial_fit(X[250:], y[250:])
    np.testing.assert_array_equal(np.c_[a.coef_, a.intercept_], np.c_[b.coef_, b.intercept_])
    assert a.proba_scale_ == b.proba_scale_


def test_balanced_class_weight_and_its_refusal_by_partial_fit():
    X, y = make_stream(400, 2, seed=12)
    classes, counts = np.unique(y, return_counts=True)
    manual = {c: len(y) / (2 * k) for c, k in zip(classes, counts)}
    a = Winnow(class_weight="balanced", random_state=0).fit(X, y)
    b = Winnow(class_weight=manual, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    with pytest.raises(ValueError, match="class_weight='balanced' is not supported by partial_fit"):
        Winnow(class_weight="balanced").partial_fit(X, y, classes=classes)
    before = state(a)
    with pytest.raises(ValueError, match="compute_class_weight"):
        a.partial_fit(X, y)
    assert state(a) == before
    with pytest.raises(ValueError, match="times the class weights .* are all zero"):
        Winnow(class_weight={"a": 0, "b": 0}).fit(X, y)
    with pytest.raises(ValueError, match=r"class_weight has keys \['c'\]"):
        Winnow(class_weight={"c": 1.0}).fit(X, y)


def reference_margins(X, y, classes, eta):
    """The margin of every round of balanced Winnow before its update (plain floats)."""
    X = np.asarray(X, dtype=float)
    K = 1 if len(classes) == 2 else len(classes)
    theta = np.zeros((K, X.shape[1] + 1))
    margins = []
    for x, label in zip(np.c_[X, np.ones(len(X))], y):
        c = list(classes).index(label)
        scores = 2 * np.sinh(theta) @ x
        labels = np.where(np.arange(K) == c, 1.0, -1.0) if K > 1 else np.array([2.0 * c - 1])
        if K == 1:
            margins.append(labels[0] * scores[0])
        else:
            margins.append(scores[c] - np.max(np.delete(scores, c)))
        for k in np.flatnonzero(labels * scores <= 0):
            theta[k] += eta * labels[k] * x
    return np.array(margins)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_proba_scale_is_fitted_on_the_progressive_margins(n_classes):
    from sklearn_budget._calibration import fit_scale, new_bins, record_margins

    X, y = make_stream(600, n_classes, seed=13)
    classes = np.unique(y)
    est = Winnow(learning_rate=0.3)
    for start in range(0, 600, 150):  # split-invariant: the bins are additive
        est.partial_fit(X[start : start + 150], y[start : start + 150], classes=classes)
    bins = new_bins(len(classes))
    margins = reference_margins(X, y, classes, 0.3)
    cls = np.searchsorted(classes, y)
    record_margins(bins, margins, cls, np.ones(len(y)), np.arange(1.0, len(y) + 1))
    np.testing.assert_allclose(est.proba_scale_, fit_scale(bins), rtol=1e-9)
    one_call = Winnow(learning_rate=0.3).partial_fit(X, y, classes=classes)
    np.testing.assert_allclose(one_call.proba_scale_, est.proba_scale_, rtol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_predict_proba_agrees_with_predict(n_classes, sparse):
    X, y = make_stream(400, n_classes, n_features=20, seed=14, sparse=sparse)
    Xf = sp.csr_matrix(X) if sparse else X
    est = Winnow(learning_rate=0.3, random_state=0).fit(Xf, y)
    proba = est.predict_proba(Xf)
    assert proba.shape == (len(y), n_classes) and np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(Xf))
    np.testing.assert_allclose(np.exp(est.predict_log_proba(Xf)), proba, rtol=1e-12)
    assert 0 < est.proba_scale_ < np.inf


@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
def test_predict_proba_beyond_float64():
    # Rescaled weights (log_scale_ > 800) and scores beyond float64: the
    # probabilities are still finite, agree with predict and sum to one.
    X, y = noisy_stream(8000)
    est = Winnow(learning_rate=5.0).partial_fit(X, y, classes=[0, 1])
    assert est.log_scale_ > 800
    for Xq in (X[:500], X[:500] * 1e300):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            proba = est.predict_proba(Xq)
        assert np.isfinite(proba).all()
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(proba.argmax(axis=1), est.predict(Xq))
    # More classes, with scores of the huge-feature rows beyond float64.
    X3, y3 = make_stream(200, 3, seed=1)
    est3 = Winnow(learning_rate=0.3).fit(X3, y3)
    big = np.sign(X3) * 1.7e308
    proba = est3.predict_proba(big)
    assert np.isfinite(proba).all()
    np.testing.assert_array_equal(est3.classes_[proba.argmax(axis=1)], est3.predict(big))


def test_log_loss_is_near_that_of_calibrated_classifier_cv(data_home):
    # USPS 0-vs-rest, 1500 training rows: the averaged hypothesis (the
    # batch user's choice) within 15% of sigmoid calibration by 3-fold
    # cross-validation, the last one within 50%.
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.metrics import log_loss

    from sklearn_budget.datasets import fetch_usps

    X, y = fetch_usps(data_home=data_home, download_if_missing=False, return_X_y=True)
    Xt, yt = fetch_usps(
        data_home=data_home, subset="test", download_if_missing=False, return_X_y=True
    )
    X, y = X[:1500], y[:1500]
    for average, bound in [(True, 1.15), (False, 1.5)]:
        est = Winnow(average=average, random_state=0)
        ours = log_loss(yt, est.fit(X, y).predict_proba(Xt))
        cal = CalibratedClassifierCV(est, cv=3, ensemble=False).fit(X, y)
        theirs = log_loss(yt, cal.predict_proba(Xt))
        assert ours < bound * theirs, (average, ours, theirs)


PROGRESS = re.compile(
    r"^rounds: (\d+), mistakes: (\d+), mistake rate: [0-9.]+, rounds per second: \S+?"
    r"(, elapsed: [0-9.]+ seconds)?$",
    flags=re.M,
)


def test_verbose_reports_the_epochs_and_the_stream(capsys):
    X, y = make_stream(1500, 3, seed=15)
    quiet = Winnow(learning_rate=0.3, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
    loud = Winnow(learning_rate=0.3, random_state=0, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    np.testing.assert_array_equal(loud.coef_, quiet.coef_)
    assert re.findall(r"^-- Epoch (\d+)$", out, flags=re.M) == ["1", "2", "3", "4", "5"]
    lines = PROGRESS.findall(out)
    assert [int(r) for r, _, _ in lines] == [1500] * 5
    assert sum(int(m) for _, m, _ in lines) == loud.n_mistakes_
    assert all(elapsed for _, _, elapsed in lines)
    assert "Stopped after 5 epochs (played max_iter=5 epochs)" in out
    # verbose=2: also within the epochs, at the end of the 1024-row blocks.
    Winnow(learning_rate=0.3, random_state=0, verbose=2, verbose_interval=1000).fit(X, y)
    lines = PROGRESS.findall(capsys.readouterr().out)
    assert [int(r) for r, _, _ in lines] == [1024, 1500] * 5
    # partial_fit: the rounds and mistakes of the whole stream.
    est = Winnow(learning_rate=0.3, verbose=1, verbose_interval=500)
    for start in range(0, 1500, 300):
        est.partial_fit(X[start : start + 300], y[start : start + 300], classes=np.unique(y))
    lines = PROGRESS.findall(capsys.readouterr().out)
    assert [int(r) for r, _, _ in lines] == [600, 1200, 1500]
    assert int(lines[-1][1]) == est.n_mistakes_
    assert not any(elapsed for _, _, elapsed in lines)
