"""Forgetron, Randomized Budget Perceptron, Budget and Tighter Budget Perceptron.

The estimators are compared with the per-sample references of
``_budget_references.py``: same mistakes, same support set, same
coefficients.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from _budget_references import CASES, _last
from _instances import instances
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_budget import (
    BudgetPerceptron,
    Forgetron,
    RandomizedBudgetPerceptron,
    TighterBudgetPerceptron,
)
from sklearn_budget._rounds import _BLOCK_SIZE

# Every test runs on both sources of kernel values (see conftest.kernel_path).
pytestmark = pytest.mark.usefixtures("kernel_path")

GAMMA = 0.5


def make_stream(n, n_classes, sparse=False, seed=0, n_features=4, noise=0.8):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    if sparse:
        X[rng.rand(n, n_features) < 0.4] = 0.0
    w = rng.randn(n_classes, n_features)
    y = np.argmax(X @ w.T + noise * rng.randn(n, n_classes), axis=1)
    labels = np.array(["ant", "bee", "cat"])[:n_classes]
    return (sp.csr_matrix(X) if sparse else X), labels[y]


def reference(case, X, y, classes, budget, seed=0, weights=None, kernel="rbf", kernel_params=None):
    ref = CASES[case][1](
        classes,
        budget,
        kernel=kernel,
        kernel_params=dict(gamma=GAMMA) if kernel_params is None else kernel_params,
        random_state=seed,
    )
    return ref.partial_fit(X, y, weights=weights)


def assert_same(est, ref, average=False):
    mistakes, support, coef = ref.result(average=average)
    assert est.n_mistakes_ == mistakes
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef, rtol=0, atol=1e-10)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "n, sparse", [(70, False), (_BLOCK_SIZE + 110, False), (_BLOCK_SIZE + 110, True)]
)
def test_partial_fit_matches_reference(case, n_classes, n, sparse):
    X, y = make_stream(n, n_classes, sparse, seed=n + n_classes)
    classes = np.unique(y)
    budget = 8
    est = CASES[case][0](budget, gamma=GAMMA, random_state=3).partial_fit(X, y, classes=classes)
    ref = reference(case, X, y, classes, budget, seed=3)
    assert ref.removed >= 5
    assert_same(est, ref)
    # The fitted model predicts with the reference's hypothesis.
    _, support, coef = ref.result()
    expected = pairwise_kernels(X, X[support], metric="rbf", gamma=GAMMA) @ coef.T
    scores = est.decision_function(X)
    np.testing.assert_allclose(scores, expected[:, 0] if n_classes == 2 else expected, atol=1e-9)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_fit_one_epoch_matches_reference(case, n_classes):
    X, y = make_stream(_BLOCK_SIZE + 40, n_classes, seed=1)
    est = CASES[case][0](10, gamma=GAMMA, shuffle=False, max_iter=1, random_state=0).fit(X, y)
    assert_same(est, reference(case, X, y, np.unique(y), 10, seed=0))


@pytest.mark.parametrize("case", sorted(CASES))
def test_exact_average_and_weights_match_reference(case):
    X, y = make_stream(_BLOCK_SIZE + 60, 3, seed=4)
    w = np.random.RandomState(0).uniform(0.2, 2.0, size=X.shape[0])
    w[::9] = 0.0  # rows of weight zero are not played
    classes = np.unique(y)
    est = CASES[case][0](10, gamma=GAMMA, average="exact", random_state=1)
    est.partial_fit(X, y, classes=classes, sample_weight=w)
    ref = reference(case, X, y, classes, 10, seed=1, weights=w)
    assert_same(est, ref, average=True)
    # The exact average keeps members that were removed.
    assert len(est.support_) > 10


@pytest.mark.parametrize("case", ["forgetron", "budget", "tighter-support", "tighter-random"])
@pytest.mark.parametrize(
    "kernel, params", [("linear", {}), ("poly", dict(gamma=0.5, degree=2, coef0=1.0))]
)
def test_other_kernels_match_reference(case, kernel, params):
    X, y = make_stream(200, 2, seed=6)
    classes = np.unique(y)
    est = CASES[case][0](8, kernel=kernel, random_state=0, **params).partial_fit(
        X, y, classes=classes
    )
    ref = reference(case, X, y, classes, 8, kernel=kernel, kernel_params=params)
    assert_same(est, ref)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_splits_give_the_same_model(case, sparse):
    X, y = make_stream(700, 3, sparse, seed=11)
    classes = np.unique(y)
    make = CASES[case][0]
    whole = make(15, gamma=GAMMA, average=True, random_state=0).partial_fit(X, y, classes=classes)
    split = make(15, gamma=GAMMA, average=True, random_state=0)
    for a, b in [(0, 1), (1, 2), (2, 255), (255, 257), (257, 300), (300, 700)]:
        split.partial_fit(X[a:b], y[a:b], classes=classes)
    assert split.n_mistakes_ == whole.n_mistakes_
    np.testing.assert_array_equal(split.support_, whole.support_)
    np.testing.assert_allclose(split.dual_coef_, whole.dual_coef_, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda seed: RandomizedBudgetPerceptron(budget=10, gamma=GAMMA, random_state=seed),
        lambda seed: TighterBudgetPerceptron(
            budget=10,
            error_set="random",
            error_set_size=20,
            average=False,
            gamma=GAMMA,
            random_state=seed,
        ),
    ],
    ids=["rbp", "tighter-random"],
)
def test_random_state_controls_the_removals(make):
    X, y = make_stream(400, 2, seed=2)
    classes = np.unique(y)
    a = make(0).partial_fit(X, y, classes=classes)
    b = make(0).partial_fit(X, y, classes=classes)
    c = make(1).partial_fit(X, y, classes=classes)
    assert a.n_mistakes_ == b.n_mistakes_
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert not np.array_equal(a.support_, c.support_)


@pytest.mark.any_kernel_path
@pytest.mark.parametrize("case", sorted(CASES))
def test_support_never_exceeds_budget(case):
    X, y = make_stream(300, 3, seed=8)
    classes = np.unique(y)
    est = CASES[case][0](7, gamma=GAMMA, random_state=0)
    sizes = []
    for i in range(X.shape[0]):
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
        sizes.append(len(est.support_))
        assert est.dual_coef_.shape == (3, sizes[-1])
    assert max(sizes) == 7


def _state_nbytes(est):
    total = 0
    for value in vars(est).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif sp.issparse(value):
            total += value.data.nbytes + value.indices.nbytes + value.indptr.nbytes
    return total


MEMORY_CASES = {
    **{
        name: make
        for name, (make, _) in CASES.items()
        if name not in ("tighter-all", "tighter-flip")
    },
    "tighter-flip": lambda B, **kw: TighterBudgetPerceptron(
        budget=B, error_set="flip", error_set_size=40, **_last(kw)
    ),
}


@pytest.mark.any_kernel_path
@pytest.mark.parametrize("case", sorted(MEMORY_CASES))
def test_memory_does_not_grow_with_the_stream(case):
    # The state has the same size after 50k and after 100k rounds.
    rng = np.random.RandomState(0)
    est = MEMORY_CASES[case](20, gamma=GAMMA, random_state=0)
    sizes = []
    for chunk in range(10):
        X = rng.randn(10_000, 2)
        y = np.where(X[:, 0] + 0.5 * rng.randn(10_000) > 0, "a", "b")
        est.partial_fit(X, y, classes=["a", "b"])
        if chunk in (4, 9):
            sizes.append(_state_nbytes(est))
    assert est.n_mistakes_ > 10_000
    assert sizes[0] == sizes[1]


def test_tighter_all_keeps_every_round():
    # The documented exception: error_set='all' grows with the stream.
    X, y = make_stream(600, 2, seed=0)
    est = TighterBudgetPerceptron(
        budget=5, error_set="all", average=False, gamma=GAMMA
    ).partial_fit(X[:300], y[:300], classes=np.unique(y))
    assert est._state["E_ints"][0] == 300  # entries of E
    est.partial_fit(X[300:], y[300:])
    assert est._state["E_ints"][0] == 600


def test_mira_starts_with_a_perceptron_step():
    X = np.array([[0.0, 0.0], [0.0, 0.0]])
    est = BudgetPerceptron(budget=5, update="mira", average=False, gamma=1.0).partial_fit(
        X, [0, 1], classes=[0, 1]
    )
    # Round 1: empty hypothesis, step 1. Round 2: f = -1, step min(1, 1/1) = 1.
    np.testing.assert_allclose(est.dual_coef_, [[-1.0, 1.0]])


def test_forgetron_self_tuned_constraint():
    # Q never exceeds 15/32 of the mistakes, and the weights stay in (0, 1].
    X, y = make_stream(3000, 2, seed=5, noise=2.0)
    est = Forgetron(budget=20, gamma=GAMMA).partial_fit(X, y, classes=np.unique(y))
    assert 0 < est._Q <= 15 / 32 * est._M
    sigma = est._sigma[: est._n]
    assert np.all((sigma > 0) & (sigma <= 1))
    assert np.any(sigma < 1)


def test_forgetron_small_shrink_stays_finite():
    # 0.05^300 underflows: the weights of the oldest members become exactly
    # zero rather than subnormal, and nothing becomes NaN or inf.
    X, y = make_stream(4000, 2, seed=5)
    est = Forgetron(budget=300, shrink=0.05, gamma=GAMMA, average=False)
    est.partial_fit(X, y, classes=np.unique(y))
    a = np.abs(est.dual_coef_)
    assert np.all(np.isfinite(a))
    assert a.max() == 0.05  # the newest member, shrunk once
    assert np.any(a == 0)
    assert a[a > 0].min() >= np.finfo(np.float64).tiny


def test_budget_perceptron_removes_best_classified_member():
    # Two far-apart groups: the member whose removal keeps it best
    # classified is the duplicate of an already present point.
    X = np.array([[0.0], [0.0], [5.0], [0.1]])
    y = np.array([0, 0, 1, 0])
    est = BudgetPerceptron(budget=2, beta=10.0, average=False, kernel="rbf", gamma=1.0).partial_fit(
        X, y, classes=[0, 1]
    )
    # Rounds 1 and 2 (duplicates) fill the budget; round 3 removes the older
    # of the two tied duplicates; round 4 has margin < beta and removes the
    # remaining duplicate (score 0 vs the far point's negative score).
    np.testing.assert_array_equal(est.support_, [2, 3])


# Every rule that removes members (tests/_instances.py).
GRID_ESTIMATORS = instances("grid", "removes_members")


@pytest.mark.parametrize("estimator", GRID_ESTIMATORS, ids=repr)
def test_grid_search_over_budget_in_a_pipeline(estimator):
    X, y = make_stream(300, 2, seed=0, noise=0.3)
    pipe = make_pipeline(StandardScaler(), estimator.set_params(gamma=GAMMA, random_state=0))
    name = pipe.steps[-1][0]
    search = GridSearchCV(pipe, {f"{name}__budget": [2, 30]}, cv=3).fit(X, y)
    assert search.best_params_[f"{name}__budget"] == 30
    assert len(search.best_estimator_[-1].support_) <= 30
    assert search.best_score_ > 0.75


def test_tighter_counts_margins_within_the_tie_tolerance_as_errors():
    # Row 0 is far from the others: without its own term its score is
    # exp(-25) ~ 1e-11 > 0, below the documented tie tolerance, so removing
    # it would count as an error on E; removing row 1 leaves none, so row 1
    # (not the older row 0) is removed.
    X = np.array([[5.0], [0.0], [0.1], [0.2]])
    y = np.array([1, 1, 1, 1])
    est = TighterBudgetPerceptron(
        budget=3, beta=10.0, error_set="support", average=False, gamma=1.0
    )
    est.partial_fit(X, y, classes=[0, 1])
    np.testing.assert_array_equal(est.support_, [0, 2, 3])
