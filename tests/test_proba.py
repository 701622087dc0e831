"""Probabilities from the progressive margins of the stream."""

import pickle

import _instances
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_expit, softmax
from sklearn.datasets import make_blobs
from sklearn.metrics import log_loss
from sklearn.metrics.pairwise import pairwise_kernels

from sklearn_budget._calibration import new_bins, record_margins

ONLINE_KERNEL = _instances.names("online_kernel")


def make(name, **kw):
    return _instances.make(name, **{"gamma": 0.5, "random_state": 0, "budget": 15, **kw})


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
    est = make(name, average=False)
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


def rkhs_norm(est):
    K = pairwise_kernels(est.support_vectors_, metric="rbf", gamma=0.5)
    return np.sqrt(np.einsum("ci,ij,cj->", est.dual_coef_, K, est.dual_coef_))


@pytest.mark.parametrize("centers", [2, 3])
def test_only_the_first_epoch_of_fit_is_out_of_sample(centers):
    X, y = blobs(300, centers, seed=3)
    once = make("KernelPerceptron", average=False, max_iter=1, shuffle=False).fit(X, y)
    more = make("KernelPerceptron", average=False, max_iter=4, shuffle=False).fit(X, y)
    for name in ("cal_counts", "cal_sums"):
        np.testing.assert_array_equal(once._state[name], more._state[name])
    np.testing.assert_array_equal(once._state["cal_n"], np.bincount(y))


@pytest.mark.parametrize("centers", [2, 3])
def test_budgeted_sgd_brings_the_first_epoch_to_the_final_model(centers):
    # The later epochs record nothing: the first epoch's margins, brought to
    # the final model by the ratio of the norms of the two models.
    X, y = blobs(300, centers, seed=3)
    name, average = "BudgetedSGDClassifier", False
    once = make(name, average=average, max_iter=1, shuffle=False, tol=None).fit(X, y)
    more = make(name, average=average, max_iter=4, shuffle=False, tol=None).fit(X, y)
    assert more.n_iter_ == 4
    np.testing.assert_array_equal(once._state["cal_n"], np.bincount(y))
    np.testing.assert_array_equal(more._state["cal_n"], np.bincount(y))
    np.testing.assert_allclose(
        more._state["cal_counts"].sum(axis=1), once._state["cal_counts"].sum(axis=1), rtol=1e-12
    )
    ratio = rkhs_norm(more) / rkhs_norm(once)
    assert abs(np.log(ratio)) > 0.05  # the test shows the rescaling
    np.testing.assert_allclose(
        more._state["cal_sums"].sum(), ratio * once._state["cal_sums"].sum(), rtol=1e-9
    )
    # Bins whose scaled means meet are merged (5% wide).
    np.testing.assert_allclose(more.proba_scale_, once.proba_scale_ / ratio, rtol=1e-3)


def test_the_bounded_average_keeps_the_first_epochs_margins():
    X, y = blobs(300, 2, seed=3)
    once = make("Forgetron", average=True, max_iter=1, tol=None).fit(X, y)
    more = make("Forgetron", average=True, max_iter=3, tol=None).fit(X, y)
    for name in ("cal_counts", "cal_sums", "cal_n"):
        np.testing.assert_array_equal(once._state[name], more._state[name])


def _margin(f, label, classes):
    if len(classes) == 2:
        return (1 if label == classes[1] else -1) * f[0]
    c = list(classes).index(label)
    return f[c] - np.max(np.delete(f, c))


def averaged_margins(make_model, X, y, classes):
    """Margins of the rounds ``t % 4 == 0`` under the average of the
    hypotheses of rounds ``1..t``, from public models of a stream played one
    row at a time: the exact average of rounds ``1..t-1`` (``average`` of
    ``make_model`` exact) and the last hypothesis of round ``t``, before
    its update (the same rule, ``average=False``)."""
    avg, last = make_model(None), make_model(False)
    rounds, margins = [], []
    for i in range(len(y)):
        t = i + 1
        if t % 4 == 0:
            f_avg = np.atleast_1d(avg.decision_function(X[i : i + 1])[0])
            f_last = np.atleast_1d(last.decision_function(X[i : i + 1])[0])
            rounds.append(t)
            margins.append(_margin(((t - 1) * f_avg + f_last) / t, y[i], classes))
        for model in (avg, last):
            model.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    return np.array(rounds), np.array(margins)


# The averages that are exact: no removals, or average='exact'.
EXACT_AVERAGES = {
    "KernelPerceptron": True,
    "Forgetron": "exact",
    "BudgetedSGDClassifier": "exact",
}


@pytest.mark.parametrize("centers", [2, 3])
@pytest.mark.parametrize("name", sorted(EXACT_AVERAGES))
def test_averaged_models_record_the_margins_of_the_average(name, centers):
    X, y = blobs(300, centers, seed=6)
    classes = np.unique(y)

    def make_model(average):
        return make(name, average=EXACT_AVERAGES[name] if average is None else average)

    rounds, m = averaged_margins(make_model, X, y, classes)
    est = make_model(None).partial_fit(X, y, classes=classes)
    # The same bins as the reference margins give, with round t weighing
    # 4 t (every fourth round is recorded).
    bins = new_bins(len(classes))
    cls = np.searchsorted(classes, y[rounds - 1])
    record_margins(bins, m, cls, np.full(rounds.size, 4.0), rounds.astype(float))
    np.testing.assert_array_equal(est._state["cal_counts"] > 0, bins["cal_counts"] > 0)
    np.testing.assert_allclose(est._state["cal_counts"], bins["cal_counts"], rtol=1e-12)
    np.testing.assert_allclose(est._state["cal_sums"], bins["cal_sums"], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(est._state["cal_n"], 4 * np.bincount(cls, minlength=centers))
    # Not the online hypotheses' margins.
    online = progressive_margins(make(name, average=False), X, y, classes)
    assert not np.allclose(online[rounds - 1], m)


@pytest.mark.parametrize("name", ["Forgetron", "KernelPerceptron", "TighterBudgetPerceptron"])
@pytest.mark.parametrize("sparse", [False, True])
def test_averaged_margins_are_split_invariant_and_pickle(name, sparse):
    X, y = blobs(700, 3, seed=7)
    if sparse:
        X = sp.csr_matrix(X)
    one = make(name, average=True).partial_fit(X, y, classes=[0, 1, 2])
    split = make(name, average=True)
    for a, b in ((0, 1), (1, 17), (17, 300), (300, 301), (301, 700)):
        split.partial_fit(X[a:b], y[a:b], classes=[0, 1, 2])
        split = pickle.loads(pickle.dumps(split))
    for key in ("cal_counts", "cal_sums", "cal_n"):
        np.testing.assert_allclose(split._state[key], one._state[key], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(split.proba_scale_, one.proba_scale_, rtol=1e-12)


def test_a_failed_call_leaves_the_bins_and_the_pool_as_they_were():
    # Overlapping classes: many members leave for the pool.
    rng = np.random.RandomState(8)
    X, y = rng.randn(600, 2), rng.randint(3, size=600)
    est = make("Forgetron", average=True).partial_fit(X[:100], y[:100], classes=[0, 1, 2])

    def kept(est):
        n = int(est._state["pool_n"][0])
        out = {k: a.copy() for k, a in est._state.items() if k.startswith("cal_")}
        out.update({k: est._state[k][:n].copy() for k in ("pool_X", "pool_coef", "pool_idx")})
        return out

    before = kept(est)
    folded = []
    original = est._fold_retired

    def interrupted(*args):
        original(*args)
        folded.append(1)
        if len(folded) == 2:
            raise KeyboardInterrupt

    est._fold_retired = interrupted
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X[100:], y[100:])
    del est._fold_retired
    assert len(folded) == 2
    after = kept(est)
    assert sorted(after) == sorted(before)
    for k, a in before.items():
        np.testing.assert_array_equal(after[k], a, err_msg=k)
    # The stream goes on as if the call had not been made.
    est.partial_fit(X[100:], y[100:])
    ref = make("Forgetron", average=True).partial_fit(X, y, classes=[0, 1, 2])
    np.testing.assert_allclose(est._state["cal_sums"], ref._state["cal_sums"], rtol=1e-12)
    np.testing.assert_array_equal(est.dual_coef_, ref.dual_coef_)


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


@pytest.mark.parametrize("average", [False, True])
def test_memory_of_the_calibration_does_not_grow(average):
    X, y = blobs(4000, 3, seed=5)
    est = make("Forgetron", average=average)

    def size():
        return sum(a.nbytes for k, a in est._state.items() if k.startswith("cal_"))

    est.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    sizes = []
    for start in range(100, 4000, 300):
        est.partial_fit(X[start : start + 300], y[start : start + 300])
        sizes.append(size())
    # The bins alone: the average scores the rounds from the model's own
    # pool and members.
    assert max(sizes) <= 2 * 3 * 2048 * 8 + 3 * 8


@pytest.mark.parametrize("name", ["Forgetron", "BudgetedSGDClassifier", "KernelPerceptron"])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("rows", [1, 3])
def test_huge_sample_weights_keep_the_probabilities_finite(name, average, rows):
    # w t and w t m overflowed the bins (inf, then a NaN scale) for sample
    # weights near the largest double; one-row calls take the compiled path.
    X, y = blobs(200, 2, seed=6)
    est = make(name, average=average).fit(X, y)
    for start in range(0, 6, rows):
        est.partial_fit(
            X[start : start + rows], y[start : start + rows], sample_weight=[1e308] * rows
        )
    assert np.isfinite(est.proba_scale_) and est.proba_scale_ > 0
    p = est.predict_proba(X)
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    for name_ in ("cal_counts", "cal_sums", "cal_n"):
        assert np.isfinite(est._state[name_]).all()


@pytest.mark.parametrize("n_classes", [2, 3, 10])
def test_the_fitted_scale_is_the_maximum_likelihood_from_any_start(n_classes):
    # Random bins: the compiled solver's root, cold or warm-started from far
    # below or above it, maximises the binned likelihood (a plain scalar
    # search over the same likelihood is the reference).
    from sklearn_budget._calibration import _fit_temperature

    rng = np.random.RandomState(n_classes)
    counts, sums = np.zeros((n_classes, 2048)), np.zeros((n_classes, 2048))
    for _ in range(300):
        c, b = rng.randint(n_classes), rng.randint(2048)
        w, m = rng.uniform(0.1, 10.0), rng.randn() + 0.8
        counts[c, b] += w
        sums[c, b] += w * m
    n_c = rng.uniform(10, 100, n_classes)
    used = counts > 0
    n, m = counts[used], sums[used] / counts[used]
    t = np.broadcast_to(((n_c + 1) / (n_c + 2))[:, None], counts.shape)[used]
    offset = np.log(max(n_classes - 1, 1))

    def nll(a):
        z = a * m - offset
        return -np.sum(n * (t * log_expit(z) + (1 - t) * log_expit(-z)))

    ref = minimize_scalar(nll, bounds=(0.0, 100.0), method="bounded", options={"xatol": 1e-10})
    cold = _fit_temperature(counts, sums, n_c)
    np.testing.assert_allclose(cold, ref.x, rtol=1e-6)
    for start in (1e-6 * cold, 0.9 * cold, 1.1 * cold, 1e6 * cold):
        np.testing.assert_allclose(_fit_temperature(counts, sums, n_c, start), cold, rtol=1e-10)


def test_a_warm_started_fit_rescales_only_its_own_margins():
    # Budgeted SGD's later epochs carry the margins recorded by the fit's
    # first epoch to the final model (a ratio of norms); those that earlier
    # calls of the stream recorded are theirs, and stay as they were.
    X, y = blobs(600, 2, seed=7)
    est = make("BudgetedSGDClassifier", max_iter=3, tol=None, warm_start=True)
    est.fit(X[:300], y[:300])
    earlier = {k: est._state[k].copy() for k in ("cal_counts", "cal_sums")}
    alone = pickle.loads(pickle.dumps(est))
    for k in earlier:
        alone._state[k][:] = 0.0
    est.fit(X[300:], y[300:])
    alone.fit(X[300:], y[300:])
    for k in earlier:
        np.testing.assert_allclose(est._state[k], earlier[k] + alone._state[k], rtol=1e-12)
