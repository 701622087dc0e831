"""Tests of the Projectron and the Projectron++."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sklearn_budget._base
from sklearn_budget import KernelPerceptron, Projectron, ProjectronPlusPlus
from sklearn_budget._kernels import KERNELS as ALL_KERNELS

# Every test runs on both sources of kernel values (see conftest.kernel_path).
pytestmark = pytest.mark.usefixtures("kernel_path")

# Same floor as the estimator: a squared residual at most this fraction of
# k(x, x) counts as zero (x in the span of the support set).
DEPENDENCE_RTOL = 1e-10


def reference_projectron(
    X,
    y,
    classes,
    eta,
    U=1.0,
    plus=False,
    kernel="rbf",
    sample_weight=None,
    solver="solve",
    precompute=True,
    budget=None,
    **kernel_params,
):
    """Per-sample Projectron / Projectron++, written for clarity, not speed.

    Follows Algorithm 2 and Sec. 4.1 of Orabona, Keshet and Caputo (2008).
    ``d = K_S^{-1} k_t`` is found with ``np.linalg.solve`` on the Gram matrix
    (``solver="solve"``) or with the inverse kept by Eq. 11
    (``solver="eq11"``, O(|S|^2) per round, used by the benchmark). The
    kernel values come from ``pairwise_kernels``, for the whole stream at
    once (``precompute=True``) or one row at a time.
    Returns the stream positions of the support set, their coefficients (one
    row per class, or one row for two classes), the average of the
    hypotheses used in each round, and the number of mistakes.
    """
    classes = list(classes)
    binary = len(classes) == 2
    n_rows = 1 if binary else len(classes)
    s = 1.0 if binary else 2.0  # squared norm of the update direction
    w = np.ones(X.shape[0]) if sample_weight is None else sample_weight

    if precompute:  # all the kernel values at once (fast for short streams)
        gram = pairwise_kernels(X, metric=kernel, **kernel_params)

    def kern(rows, t):
        if precompute:
            return gram[rows, t]
        return pairwise_kernels(X[rows], X[t : t + 1], metric=kernel, **kernel_params)[:, 0]

    support, alpha, K, Kinv = [], np.zeros((n_rows, 0)), np.zeros((0, 0)), np.zeros((0, 0))
    acc = np.zeros((n_rows, 0))
    mistakes = 0
    for t in range(X.shape[0]):
        c = classes.index(y[t])
        k = kern(support, t) if support else np.zeros(0)
        kxx = kern([t], t)[0]
        f = alpha @ k
        acc += alpha  # the hypothesis used in this round
        if binary:
            yt = 2.0 * c - 1.0
            margin = yt * f[0]
            direction = np.array([yt])
        else:
            others = f.copy()
            others[c] = -np.inf
            r = int(np.argmax(others))
            margin = f[c] - f[r]
            direction = np.zeros(n_rows)
            direction[c], direction[r] = 1.0, -1.0
        if margin <= 0:
            mistakes += 1
        loss = 1.0 - margin
        if not (margin <= 0 or (plus and margin < 1)):
            continue
        if solver == "eq11":
            d = Kinv @ k  # Eq. 8
        else:
            d = np.linalg.solve(K, k) if support else np.zeros(0)  # Eq. 8
        pk2 = k @ d
        delta2 = kxx - pk2  # Eq. 9
        if delta2 <= DEPENDENCE_RTOL * kxx:
            delta2 = 0.0
        if margin <= 0:
            eta_t = (2 * loss - s * pk2 - 0.5) / (2 * U) if eta == "adaptive" else eta  # Eq. 13
            full = budget is not None and len(support) >= budget
            if delta2 > 0 and np.sqrt(s * delta2) > eta_t and not full:
                support.append(t)
                alpha = np.hstack([alpha, w[t] * direction[:, None]])
                acc = np.hstack([acc, np.zeros((n_rows, 1))])
                K = np.block([[K, k[:, None]], [k[None, :], np.array([[kxx]])]])
                if solver == "eq11":
                    v = np.append(d, -1.0)
                    Kinv = np.pad(Kinv, ((0, 1), (0, 1))) + np.outer(v, v) / delta2  # Eq. 11
            else:
                alpha = alpha + w[t] * np.outer(direction, d)  # Eq. 10
        elif pk2 > 0:
            Ut = U if eta == "adaptive" else (1.0 / eta if eta > 0 else np.inf)
            penalty = 0.0 if delta2 == 0 else Ut * np.sqrt(s * delta2)
            tau = min(loss / (s * pk2), 1.0, 2 * (loss - penalty) / (s * pk2))
            if tau > 0:
                alpha = alpha + w[t] * tau * np.outer(direction, d)  # Eq. 14
    average = acc / X.shape[0]
    return np.array(support, dtype=int), alpha, average, mistakes


# Kernel parameters and a fixed threshold giving both additions and
# projections on the data of ``make_stream``.
KERNELS = {
    "rbf": (dict(gamma=0.1), 0.5),
    "linear": ({}, 1.0),
    "poly": (dict(gamma=0.2, degree=2, coef0=1.0), 1.0),
}


def make_stream(n_samples, n_classes=2, sparse=False, random_state=0):
    """Continuous random data (no exact ties) with a noisy non-linear labelling."""
    rng = np.random.RandomState(random_state)
    X = rng.randn(n_samples, 8)
    y = (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.randn(n_samples) > 0).astype(int)
    if n_classes == 3:
        y += X[:, 3] > 0.8
    if sparse:
        X[rng.rand(*X.shape) < 0.4] = 0.0
        X = sp.csr_matrix(X)
    return X, np.array(["a", "b", "c"])[y]


def assert_same_model(est, support, coef, mistakes):
    assert est.n_mistakes_ == mistakes
    np.testing.assert_array_equal(est.support_, support)
    # Both sides solve with the Gram matrix of the support set, whose
    # condition number reaches 1e5 here: compare relative to the coefficients.
    scale = max(1.0, np.abs(coef).max())
    np.testing.assert_allclose(est.dual_coef_, coef, rtol=0, atol=1e-10 * scale)


@pytest.mark.parametrize("Estimator", [Projectron, ProjectronPlusPlus])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("mode", ["fixed", "adaptive"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_matches_reference(Estimator, kernel, mode, n_classes, sparse):
    # 600 rows: three blocks of the engine, with updates across the boundaries.
    X, y = make_stream(600, n_classes, sparse, random_state=n_classes)
    kernel_params, eta = KERNELS[kernel]
    eta = eta if mode == "fixed" else "adaptive"
    plus = Estimator is ProjectronPlusPlus
    classes = np.unique(y)
    support, coef, _, mistakes = reference_projectron(
        X, y, classes, eta, U=2.0, plus=plus, kernel=kernel, **kernel_params
    )
    # The stream exercises both additions and projections.
    assert 1 < len(support) < mistakes

    params = dict(eta=eta, U=2.0, kernel=kernel, average=False, **kernel_params)
    online = Estimator(**params).partial_fit(X, y, classes=classes)
    assert_same_model(online, support, coef, mistakes)

    batch = Estimator(shuffle=False, max_iter=1, **params).fit(X, y)
    assert_same_model(batch, support, coef, mistakes)

    # partial_fit split at arbitrary points equals one call.
    split = Estimator(**params)
    for chunk in np.array_split(np.arange(600), [1, 7, 300, 301, 555]):
        split.partial_fit(X[chunk], y[chunk], classes=classes)
    assert_same_model(split, support, coef, mistakes)


@pytest.mark.parametrize("Estimator", [Projectron, ProjectronPlusPlus])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("eta", [0.05, "adaptive"])
def test_hard_budget_matches_reference(Estimator, n_classes, eta):
    X, y = make_stream(600, n_classes, random_state=n_classes)
    classes = np.unique(y)
    plus = Estimator is ProjectronPlusPlus
    kw = dict(U=2.0, kernel="rbf", gamma=0.1)
    free = reference_projectron(X, y, classes, eta, plus=plus, **kw)
    budget = len(free[0]) // 2  # the budget binds
    support, coef, _, mistakes = reference_projectron(
        X, y, classes, eta, plus=plus, budget=budget, **kw
    )
    assert len(support) == budget
    est = Estimator(eta=eta, budget=budget, average=False, **kw)
    for chunk in np.array_split(np.arange(600), [5, 300, 301]):
        est.partial_fit(X[chunk], y[chunk], classes=classes)
    assert_same_model(est, support, coef, mistakes)
    assert est._state["alpha"].shape[0] <= budget  # storage never beyond it
    with pytest.raises(ValueError, match="budget"):
        est.set_params(budget=budget + 1).partial_fit(X, y)


@pytest.mark.parametrize("Estimator", [Projectron, ProjectronPlusPlus])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_short_stream_and_sample_weight(Estimator, n_classes):
    # A stream shorter than a block, with sample weights.
    X, y = make_stream(90, n_classes, random_state=5)
    w = np.random.RandomState(0).uniform(0.2, 3.0, size=90)
    classes = np.unique(y)
    plus = Estimator is ProjectronPlusPlus
    support, coef, _, mistakes = reference_projectron(
        X, y, classes, 0.5, plus=plus, sample_weight=w, gamma=0.1
    )
    est = Estimator(eta=0.5, gamma=0.1, average=False)
    est.partial_fit(X, y, classes=classes, sample_weight=w)
    assert_same_model(est, support, coef, mistakes)


@pytest.mark.parametrize("Estimator", [Projectron, ProjectronPlusPlus])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_average_keeps_support_of_last_hypothesis(Estimator, n_classes):
    X, y = make_stream(400, n_classes, random_state=1)
    classes = np.unique(y)
    plus = Estimator is ProjectronPlusPlus
    support, coef, average, _ = reference_projectron(X, y, classes, 0.5, plus=plus, gamma=0.1)
    last = Estimator(eta=0.5, gamma=0.1, average=False).partial_fit(X, y, classes=classes)
    avg = Estimator(eta=0.5, gamma=0.1, average=True).partial_fit(X, y, classes=classes)
    np.testing.assert_array_equal(avg.support_, last.support_)
    np.testing.assert_array_equal(avg.support_, support)
    np.testing.assert_allclose(
        avg.dual_coef_, average, rtol=0, atol=1e-10 * max(1.0, np.abs(average).max())
    )
    assert not np.allclose(avg.dual_coef_, last.dual_coef_)

    # fit with several epochs: the average lives on the support set of the
    # last hypothesis too, less at most the member added on the very last
    # round, which took part in no averaged hypothesis.
    last = Estimator(eta=0.5, gamma=0.1, max_iter=3, random_state=0, average=False)
    last.fit(X, y)
    avg = Estimator(eta=0.5, gamma=0.1, max_iter=3, random_state=0, average=True).fit(X, y)
    assert set(avg.support_) <= set(last.support_)
    assert len(last.support_) - len(avg.support_) <= 1


@pytest.mark.parametrize(
    "kernel, kernel_params, dim",
    [("linear", {}, 6), ("poly", dict(gamma=1.0, degree=2, coef0=1.0), 10)],
)
def test_eta_zero_is_the_perceptron(kernel, kernel_params, dim):
    # With eta = 0 only rows in the span of the support set are projected,
    # exactly, so the hypothesis is the Kernel Perceptron's. A finite
    # dimensional feature space (6 for linear on 6 features, C(3 + 2, 2) = 10
    # for the degree-2 polynomial on 3) bounds the support set.
    rng = np.random.RandomState(0)
    n_features = 6 if kernel == "linear" else 3
    X = rng.randn(1500, n_features)
    y = (X @ rng.randn(n_features) + 0.5 * X[:, 0] ** 2 + 0.5 * rng.randn(1500) > 0).astype(int)
    perceptron = KernelPerceptron(kernel=kernel, average=False, **kernel_params)
    perceptron.partial_fit(X, y, classes=[0, 1])
    est = Projectron(eta=0.0, kernel=kernel, average=False, **kernel_params)
    est.partial_fit(X, y, classes=[0, 1])
    assert est.n_mistakes_ == perceptron.n_mistakes_
    assert len(est.support_) <= dim < len(perceptron.support_)
    np.testing.assert_allclose(
        est.decision_function(X), perceptron.decision_function(X), rtol=1e-8, atol=1e-8
    )
    # The Projectron++ with eta = 0 takes margin steps only for rows in
    # span(S): a different hypothesis, the same bound on the support set.
    plus = ProjectronPlusPlus(eta=0.0, kernel=kernel, average=False, **kernel_params)
    plus.partial_fit(X, y, classes=[0, 1])
    assert len(plus.support_) <= dim
    assert plus.n_mistakes_ != est.n_mistakes_


@pytest.mark.parametrize("Estimator", [Projectron, ProjectronPlusPlus])
@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_every_kernel(Estimator, kernel):
    # Non-negative data for the chi2 kernels. The sigmoid kernel is not
    # positive definite (a negative residual counts as "in the span"), and
    # additive_chi2 has k(x, x) = 0: nothing can be learned with it.
    X, y = make_stream(300, 3, random_state=2)
    X = np.abs(X)
    est = Estimator(eta=0.2, kernel=kernel, gamma=0.1).fit(X, y)
    assert np.all(np.isfinite(est.dual_coef_))
    assert np.all(np.isfinite(est.decision_function(X)))
    if kernel == "additive_chi2":
        assert len(est.support_) == 0
    else:
        assert 0 < len(est.support_) < 300


def test_zero_kernel_diagonal_never_updates():
    # k(x, x) = 0 (zero rows, linear kernel): nothing to add or project.
    X = np.zeros((5, 3))
    est = Projectron(kernel="linear").partial_fit(X, [0, 1, 0, 1, 1], classes=[0, 1])
    assert est.n_mistakes_ == 5
    assert est.support_.size == 0


@pytest.mark.parametrize("Estimator", [Projectron, ProjectronPlusPlus])
def test_support_stops_growing(Estimator):
    # A fixed distribution on a compact set (Theorem 1) with 10% label noise,
    # rbf kernel: the support set stops growing while mistakes go on.
    rng = np.random.RandomState(0)
    X = rng.uniform(-2, 2, size=(20000, 2))
    y = np.where(X[:, 0] + np.sin(2 * X[:, 1]) > 0, 1, -1) * np.where(rng.rand(20000) < 0.1, -1, 1)
    est = Estimator(eta=0.3, gamma=1.0).partial_fit(X[:10000], y[:10000], classes=[-1, 1])
    size_10k, mistakes_10k = len(est.support_), est.n_mistakes_
    est.partial_fit(X[10000:], y[10000:])
    size_20k, mistakes_20k = len(est.support_), est.n_mistakes_
    assert mistakes_20k - mistakes_10k > 1000
    assert size_20k - size_10k <= 0.02 * size_10k
    assert size_20k < 100


def _factor(est):
    n = est._n
    L = np.zeros((n, n))
    L[np.tril_indices(n)] = est._chol[: n * (n + 1) // 2]
    return L


@pytest.mark.any_kernel_path
@pytest.mark.parametrize(
    "Estimator, eta, gamma",
    [
        (Projectron, 0.0, 1e-4),
        (Projectron, 0.0, 1.0),
        (Projectron, 0.0, 1e5),
        (ProjectronPlusPlus, 0.01, 1.0),
    ],
)
def test_long_stream_with_duplicates_stays_accurate(Estimator, eta, gamma, monkeypatch):
    # 1e5 rounds drawn from 100 points, each with an exact duplicate and
    # near duplicates at distances 1e-9 and 1e-6 (for gamma = 1e5 the latter
    # have k = 1 - 1e-7: nearly dependent additions), with 20% label noise so
    # that mistakes never stop. With eta = 0 the dependence floor is the only
    # guard against a singular Gram matrix.
    rng = np.random.RandomState(0)
    base = rng.randn(100, 2)
    pool = np.vstack([base, base, base + 1e-9 * rng.randn(100, 2), base + 1e-6 * rng.randn(100, 2)])
    labels = np.tile(np.sign(base[:, 0] * base[:, 1]), 4)
    pick = rng.randint(len(pool), size=100_000)
    X, y = pool[pick], labels[pick] * np.where(rng.rand(100_000) < 0.2, -1, 1)
    # In two dimensions the compiled loop computes the kernel values itself,
    # from coordinate differences (pinned here, whatever the cost model says).
    monkeypatch.setattr(sklearn_budget._base, "_FORCE_PATH", "direct")
    est = Estimator(eta=eta, gamma=gamma)
    for chunk in np.array_split(np.arange(len(X)), 4):
        est.partial_fit(X[chunk], y[chunk], classes=[-1, 1])
    assert est.n_mistakes_ > 20000

    # The factor is that of the Gram matrix of the support set recomputed
    # from scratch (support_ is in order of insertion: no member is removed),
    # from differences as well: pairwise_kernels' expansion
    # ||x||^2 + ||z||^2 - 2 x.z loses ~1e-16 ||x||^2 to cancellation, which
    # gamma = 1e5 turns into errors of 1e-10 on near duplicates.
    sv = est.support_vectors_
    K = np.exp(-gamma * ((sv[:, None, :] - sv[None, :, :]) ** 2).sum(axis=-1))
    L = _factor(est)
    assert np.abs(L @ L.T - K).max() <= 1e-12
    assert np.diag(L).min() ** 2 > DEPENDENCE_RTOL  # no pivot below the floor

    # Its solves d = K_S^{-1} k are backward stable: the residual is small
    # relative to |K_S| |d| + |k| however ill-conditioned K_S is (with
    # eta = 0 its condition number reaches 1e12 here).
    k = pairwise_kernels(
        est.support_vectors_, base[:50] + 1e-3 * rng.randn(50, 2), metric="rbf", gamma=gamma
    )
    d = np.column_stack([est._backward(est._forward(col)) for col in k.T])
    scale = np.abs(K).max() * np.abs(d).sum(axis=0) + np.abs(k).max(axis=0)
    residual = np.abs(K @ d - k).max(axis=0) / scale
    assert residual.max() <= 1e-13
    # K_S^{-1} K_S is the identity up to the unavoidable cond(K_S) * eps.
    n = K.shape[0]
    Kinv = np.column_stack([est._backward(est._forward(col)) for col in np.eye(n)])
    error = np.abs(Kinv @ K - np.eye(n)).max()
    assert error <= 10 * np.linalg.cond(K) * np.finfo(float).eps
    if eta > 0:
        assert error <= 1e-8  # pivots >= eta keep K_S well conditioned

    assert np.all(np.isfinite(est.dual_coef_))
    assert np.all(np.isfinite(est.decision_function(pool)))


def test_adaptive_threshold_follows_U():
    # A larger competitor norm U lowers the Eq. 13 threshold: more support vectors.
    X, y = make_stream(500, random_state=3)
    sizes = [
        len(Projectron(eta="adaptive", U=U, gamma=0.1).fit(X, y).support_) for U in (0.5, 2.0, 50.0)
    ]
    assert sizes[0] < sizes[1] < sizes[2]


@pytest.mark.parametrize("Estimator", [Projectron, ProjectronPlusPlus])
def test_grid_search_over_eta(Estimator):
    X, y = make_stream(300, random_state=4)
    pipe = make_pipeline(StandardScaler(), Estimator(gamma=0.1, random_state=0))
    search = GridSearchCV(
        pipe, {Estimator.__name__.lower() + "__eta": [0.1, 0.5, 0.9, "adaptive"]}, cv=3
    )
    search.fit(X, y)
    assert search.best_params_
    assert search.score(X, y) > 0.6


@pytest.mark.parametrize("Estimator", [Projectron, ProjectronPlusPlus])
def test_eta_one_with_rbf_never_adds_a_support_vector(Estimator):
    # ||delta_t|| <= sqrt(k(x, x)) = 1 with rbf: eta = 1 projects every
    # mistake, and from the empty set the projection is zero, so nothing is
    # learned and fit stops after one epoch without an update.
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=60, noise=0.1, random_state=0)
    est = Estimator(eta=1.0, kernel="rbf", gamma=2.0, max_iter=5).fit(X, y)
    assert est.support_.size == 0
    assert est.n_iter_ == 1


def test_projection_onto_nothing_is_not_an_update():
    # Orthogonal rows under a linear kernel: P k = 0 on every round.
    est = Projectron(eta=1.0, kernel="linear", max_iter=5, shuffle=False)
    est.fit(np.eye(3), [0, 1, 0])
    assert est.support_.size == 0
    assert est.n_iter_ == 1
