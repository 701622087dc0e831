"""Probabilities from the progressive margins of the stream."""

import pickle

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_expit, softmax
from sklearn.datasets import make_blobs
from sklearn.metrics import log_loss
from sklearn.metrics.pairwise import pairwise_kernels

import sklearn_budget
from sklearn_budget._base import BaseKernelOnlineClassifier

ONLINE_KERNEL = [
    n
    for n in sklearn_budget.__all__
    if issubclass(getattr(sklearn_budget, n), BaseKernelOnlineClassifier)
]


def make(name, **kw):
    cls = getattr(sklearn_budget, name)
    params = dict(gamma=0.5, random_state=0)
    if "budget" in cls().get_params():
        params["budget"] = 15
    params.update(kw)
    return cls(**params)


def blobs(n, centers, seed=0):
    return make_blobs(n_samples=n, centers=centers, cluster_std=1.5, random_state=seed)


@pytest.mark.parametrize("name", ONLINE_KERNEL)
@pytest.mark.parametrize("centers", [2, 3])
def test_probabilities_are_the_sigmoid_or_softmax_of_the_scores(name, centers):
    X, y = blobs(300, centers)
    est = make(name).fit(X, y)
    proba = est.predict_proba(X)
    assert proba.shape == (len(y), centers)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    # Recomputed from the stored parameters, outside the estimator.
    f = pairwise_kernels(X, est.support_vectors_, metric="rbf", gamma=0.5) @ est.dual_coef_.T
    a = est.proba_scale_
    assert a > 0
    if centers == 2:
        expected = np.column_stack([expit(-a * f[:, 0]), expit(a * f[:, 0])])
    else:
        expected = softmax(a * f, axis=1)
    np.testing.assert_allclose(proba, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.predict_log_proba(X), np.log(expected), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X))


def progressive_margins(est, X, y, classes):
    """Margins of each round before its update, one partial_fit per row."""
    margins = []
    for i in range(len(y)):
        if hasattr(est, "classes_"):
            f = np.atleast_1d(est.decision_function(X[i : i + 1])[0])
        else:
            f = np.zeros(1 if len(classes) == 2 else len(classes))
        if len(classes) == 2:
            margins.append((1 if y[i] == classes[1] else -1) * f[0])
        else:
            c = list(classes).index(y[i])
            margins.append(f[c] - np.max(np.delete(f, c)))
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    return np.array(margins)


@pytest.mark.parametrize("centers", [2, 3])
@pytest.mark.parametrize("name", ["KernelPerceptron", "Forgetron", "BudgetedSGDClassifier"])
def test_scale_is_the_maximum_likelihood_on_the_progressive_margins(name, centers):
    X, y = blobs(200, centers, seed=1)
    classes = np.unique(y)
    est = make(name)
    m = progressive_margins(est, X, y, classes)
    # Platt's smoothed targets, per class; the softmax with the other
    # classes at the runner-up's score.
    counts = np.bincount(np.searchsorted(classes, y), minlength=len(classes))
    target = ((counts + 1.0) / (counts + 2.0))[np.searchsorted(classes, y)]
    offset = np.log(max(len(classes) - 1, 1))

    weight = np.arange(1, len(m) + 1)  # round t weighs t

    def nll(log_a):
        z = np.exp(log_a) * m - offset
        return -np.sum(weight * (target * log_expit(z) + (1 - target) * log_expit(-z)))

    best = np.exp(minimize_scalar(nll, bounds=(-20, 10), method="bounded").x)
    # The estimator bins the margins (bins 5% wide in |margin|).
    np.testing.assert_allclose(est.proba_scale_, best, rtol=0.03)


@pytest.mark.parametrize("name", ONLINE_KERNEL)
def test_split_stream_and_pickling_give_the_same_probabilities(name):
    X, y = blobs(400, 3, seed=2)
    one = make(name).partial_fit(X, y, classes=[0, 1, 2])
    split = make(name).partial_fit(X[:123], y[:123], classes=[0, 1, 2])
    split = pickle.loads(pickle.dumps(split))
    split.partial_fit(X[123:], y[123:])
    # The same bins; their sums differ by the rounding of their order.
    np.testing.assert_allclose(split.proba_scale_, one.proba_scale_, rtol=1e-10)
    np.testing.assert_allclose(split.predict_proba(X), one.predict_proba(X), rtol=1e-9)


def test_only_the_first_epoch_of_fit_is_out_of_sample():
    X, y = blobs(300, 2, seed=3)
    once = make("KernelPerceptron", max_iter=1, shuffle=False).fit(X, y)
    more = make("KernelPerceptron", max_iter=4, shuffle=False).fit(X, y)
    np.testing.assert_array_equal(once._state["cal_counts"], more._state["cal_counts"])
    np.testing.assert_array_equal(once._state["cal_sums"], more._state["cal_sums"])
    np.testing.assert_array_equal(once._state["cal_n"], [np.sum(y == 0), np.sum(y == 1)])


def test_probabilities_are_calibrated_on_held_out_data():
    # Overlapping blobs: the fitted probabilities beat both the constant
    # prior and the unscaled scores on held-out rows.
    X, y = make_blobs(n_samples=3000, centers=2, cluster_std=2.0, random_state=4)
    est = make("Forgetron", budget=50, gamma=0.1).fit(X[:2000], y[:2000])
    p = est.predict_proba(X[2000:])
    prior = np.full_like(p, 0.5)
    raw = np.column_stack(
        [expit(-est.decision_function(X[2000:])), expit(est.decision_function(X[2000:]))]
    )
    assert log_loss(y[2000:], p) < log_loss(y[2000:], prior) - 0.1
    assert log_loss(y[2000:], p) < log_loss(y[2000:], raw)


def test_memory_of_the_calibration_does_not_grow():
    X, y = blobs(2000, 3, seed=5)
    est = make("Forgetron")
    est.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    size = est._state["cal_counts"].nbytes + est._state["cal_sums"].nbytes
    est.partial_fit(X[100:], y[100:])
    assert est._state["cal_counts"].nbytes + est._state["cal_sums"].nbytes == size
