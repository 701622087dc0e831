"""The averaged model of the removal rules, kept within the budget.

Each budget learner is played against its per-sample reference (which logs
the members it removes, with their running sums, in order); a plain pool
that folds those functions in with numpy solves must give the estimator's
``average=True`` model: the same support vectors and coefficients.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _budget_references import RefBudget, RefForgetron, RefRBP
from _instances import instances
from sklearn.metrics.pairwise import pairwise_kernels
from test_bsgd import KERNELS as BSGD_KERNELS
from test_bsgd import ReferenceBSGD, encode, stream

from sklearn_budget import (
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    RandomizedBudgetPerceptron,
    TighterBudgetPerceptron,
)
from sklearn_budget._averaging import POOL_RTOL
from sklearn_budget._rounds import _BLOCK_SIZE

GAMMA = 0.5
TIE = 1e-9  # the compiled pool's tie tolerance between losses

CASES = {
    "forgetron": (
        lambda B, **kw: Forgetron(budget=B, **kw),
        lambda cl, B, **kw: RefForgetron(cl, B, **kw),
    ),
    "rbp": (
        lambda B, **kw: RandomizedBudgetPerceptron(budget=B, **kw),
        lambda cl, B, **kw: RefRBP(cl, B, **kw),
    ),
    "budget": (
        lambda B, **kw: BudgetPerceptron(budget=B, max_iter=5, **kw),
        lambda cl, B, **kw: RefBudget(cl, B, **kw),
    ),
    "tighter-support": (
        lambda B, **kw: TighterBudgetPerceptron(budget=B, error_set="support", max_iter=5, **kw),
        lambda cl, B, **kw: RefBudget(cl, B, removal="support", **kw),
    ),
}

# Every rule that removes members, with a budget of 12 (tests/_instances.py).
REMOVAL_ESTIMATORS = instances("removal", "removes_members", budget=12)


def reference_pool(functions, budget, kernel, **params):
    """The bounded average by the definition, one function at a time.

    ``functions``: ``(index, row, running sum)`` in the order they reach
    the pool. A function in the pool's span (squared residual at most
    ``POOL_RTOL k(x, x)``) is projected onto it; else its row joins, and an
    overflowing pool loses the member ``q`` of least
    ``||beta_q||^2 / (K^{-1})_qq`` (ties: the first to join), whose function
    is projected onto the others. Returns the indices and summed
    coefficients (n_rows, n_members) sorted by index.
    """

    def k(A, B):
        return pairwise_kernels(A, B, metric=kernel, **params)

    pool = []  # [index, row, beta, order of joining]
    for order, (index, x, a) in enumerate(functions):
        a = np.asarray(a, dtype=float)
        if not np.any(a):
            continue
        kxx = k(x, x)[0, 0]
        if pool:
            P = np.vstack([p[1] for p in pool])
            kP = k(P, x)[:, 0]
            d = np.linalg.solve(k(P, P), kP)
            delta2 = kxx - kP @ d
        else:
            d, delta2 = np.zeros(0), kxx
        if delta2 <= POOL_RTOL * kxx:
            for p, di in zip(pool, d):
                p[2] = p[2] + di * a
            continue
        pool.append([index, x, a.copy(), order])
        if len(pool) > budget:
            P = np.vstack([p[1] for p in pool])
            G = np.linalg.inv(k(P, P))
            loss = [p[2] @ p[2] / G[i, i] for i, p in enumerate(pool)]
            low = min(loss)
            tied = [i for i in range(len(pool)) if loss[i] <= low + TIE * abs(low)]
            q = min(tied, key=lambda i: pool[i][3])
            leaving = pool.pop(q)
            rest = np.vstack([p[1] for p in pool])
            c = np.linalg.solve(k(rest, rest), k(rest, leaving[1])[:, 0])
            for p, ci in zip(pool, c):
                p[2] = p[2] + ci * leaving[2]
    pool.sort(key=lambda p: p[0])
    return np.array([p[0] for p in pool]), np.array([p[2] for p in pool]).T


def make_stream(n, n_classes, sparse=False, seed=0):
    rng = np.random.RandomState(seed)
    centers = rng.randn(n_classes, 4) * 0.6
    y = rng.randint(n_classes, size=n)
    X = centers[y] + rng.randn(n, 4)
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_bounded_average_matches_reference(case, n_classes, sparse):
    X, y = make_stream(_BLOCK_SIZE + 90, n_classes, sparse, seed=n_classes)
    classes = np.unique(y)
    budget = 8
    make, make_ref = CASES[case]
    est = make(budget, gamma=GAMMA, average=True, random_state=2)
    est.partial_fit(X, y, classes=classes)
    ref = make_ref(classes, budget, kernel_params=dict(gamma=GAMMA), random_state=2)
    ref.partial_fit(X, y)
    assert ref.removed >= 20
    live = [(m.index, m.x, np.atleast_1d(ref.sums.get(m.index, 0.0))) for m in ref.members]
    support, coef = reference_pool(ref.retired_log + live, budget, "rbf", gamma=GAMMA)
    assert est.n_mistakes_ == ref.mistakes
    assert len(est.support_) <= budget
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef / ref.rounds, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("maintenance", ["removal", "projection"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_bsgd_bounded_average_matches_reference(maintenance, n_classes):
    X, y = stream(300, n_classes, seed=4)
    kw = BSGD_KERNELS["rbf"]
    est = BudgetedSGDClassifier(budget=6, alpha=0.02, maintenance=maintenance, average=True, **kw)
    est.partial_fit(X, y, classes=np.arange(n_classes))
    ref = ReferenceBSGD(n_classes, 0.02, 6, maintenance, "rbf", kw)
    ref.play(X, encode(y, n_classes), np.arange(len(y)), average=True)
    assert len(ref.retired) >= 20
    functions = [(m.index, m.x.reshape(1, -1), m.acc) for m in ref.retired + ref.members]
    support, coef = reference_pool(functions, 6, "rbf", **kw)
    assert est.n_mistakes_ == ref.mistakes
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef / ref.t, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("est", REMOVAL_ESTIMATORS, ids=repr)
def test_average_never_exceeds_budget_along_a_stream(est):
    X, y = make_stream(1500, 3, seed=5)
    est = est.set_params(average=True, gamma=GAMMA, random_state=0)
    sizes = []
    for start in range(0, 1500, 150):
        est.partial_fit(X[start : start + 150], y[start : start + 150], classes=[0, 1, 2])
        sizes.append(len(est.support_))
        assert est.support_vectors_.shape[0] == est.dual_coef_.shape[1] == sizes[-1]
    assert max(sizes) <= est.budget
    # The pool filled: the average holds members the last hypothesis lost.
    assert sizes[-1] >= est.budget - 2
    # The exact average of the same stream keeps many more.
    exact = est.__class__(**{**est.get_params(), "average": "exact"})
    exact.fit(X, y)
    assert len(exact.support_) > 3 * est.budget
    # fit plays epochs: still bounded.
    assert len(est.fit(X, y).support_) <= est.budget


@pytest.mark.parametrize("est", REMOVAL_ESTIMATORS, ids=repr)
def test_bounded_average_is_split_invariant_and_picklable_mid_stream(est):
    X, y = make_stream(800, 3, seed=8)
    est = est.set_params(average=True, gamma=GAMMA, random_state=0)
    whole = pickle.loads(pickle.dumps(est)).partial_fit(X, y, classes=[0, 1, 2])
    split = est
    for a, b in [(0, 1), (1, 200), (200, 457), (457, 600)]:
        split.partial_fit(X[a:b], y[a:b], classes=[0, 1, 2])
    split = pickle.loads(pickle.dumps(split)).partial_fit(X[600:], y[600:])
    np.testing.assert_array_equal(split.support_, whole.support_)
    np.testing.assert_allclose(split.dual_coef_, whole.dual_coef_, rtol=0, atol=1e-12)


def test_bounded_average_close_to_exact_on_two_classes():
    # Two classes: the bounded average is as accurate as the exact one (the
    # one-point target of the benchmarks, on a small set).
    rng = np.random.RandomState(3)
    X = rng.randn(5000, 4)
    y = (np.sin(2 * X[:, 0]) + X[:, 1] + 0.5 * rng.randn(5000) > 0).astype(int)
    X, y, Xt, yt = X[:3000], y[:3000], X[3000:], y[3000:]
    for make in (
        lambda av: Forgetron(budget=100, average=av),
        lambda av: RandomizedBudgetPerceptron(budget=100, average=av),
    ):
        exact = make("exact").set_params(gamma=GAMMA, random_state=0).fit(X, y)
        bounded = make(True).set_params(gamma=GAMMA, random_state=0).fit(X, y)
        assert len(bounded.support_) <= 100 < len(exact.support_)
        assert np.mean(exact.predict(Xt) == bounded.predict(Xt)) >= 0.9
        assert bounded.score(Xt, yt) >= exact.score(Xt, yt) - 0.01


@pytest.mark.parametrize("gamma", [1e-4, 1e-3, 0.5, 50.0])
def test_pool_inverse_stays_accurate_on_ill_conditioned_streams(gamma):
    # Duplicates and near duplicates, and tiny or huge kernel widths, over a
    # long stream: the inverse Gram matrix of the pool stays the inverse.
    rng = np.random.RandomState(0)
    base = rng.randn(40, 3)
    X = np.vstack(
        [base[rng.randint(40, size=6000)] + 1e-9 * rng.randn(6000, 3), rng.randn(2000, 3)]
    )
    y = (X[:, 0] + 0.3 * rng.randn(len(X)) > 0).astype(int)
    est = Forgetron(budget=25, gamma=gamma, average=True, random_state=0).partial_fit(
        X, y, classes=[0, 1]
    )
    state = est._state
    n = int(state["pool_ints"][0])
    assert 0 < n <= 25
    G, K = state["pool_G"][:n, :n], state["pool_K"][:n, :n]
    np.testing.assert_allclose(G @ K, np.eye(n), atol=1e-6)
    assert np.isfinite(est.dual_coef_).all() and len(est.support_) <= 25
    assert np.isfinite(est.decision_function(X[:50])).all()


def test_exact_average_is_the_research_option():
    X, y = make_stream(600, 2, seed=1)
    exact = Forgetron(budget=10, gamma=GAMMA, average="exact").fit(X, y)
    last = Forgetron(budget=10, gamma=GAMMA, average=False).fit(X, y)
    assert len(exact.support_) > 10 and len(last.support_) <= 10
    with pytest.raises(ValueError, match="average"):
        Forgetron(budget=10, average="vote").fit(X, y)


def _state_bytes(est):
    """Bytes of the model's state arrays (the pool's rows included)."""
    total = sum(a.nbytes for a in est._state.values())
    rows = getattr(est, "_pool_X", None)
    if rows is not None:
        total += rows.data.nbytes if sp.issparse(rows) else rows.nbytes
    return total + sum(a.nbytes for a in getattr(est, "_retired_sv", []))


@pytest.mark.parametrize("est", REMOVAL_ESTIMATORS, ids=repr)
def test_state_does_not_grow_with_the_stream(est):
    # Once the pool is full the state keeps its size, however long the
    # stream; the exact average's grows with it.
    X, y = make_stream(12_000, 3, seed=9)
    bounded = est.set_params(average=True, gamma=GAMMA, random_state=0)
    exact = bounded.__class__(**{**bounded.get_params(), "average": "exact"})
    sizes = {}
    for name, model in (("bounded", bounded), ("exact", exact)):
        model.partial_fit(X[:3000], y[:3000], classes=[0, 1, 2])
        early = _state_bytes(model)
        model.partial_fit(X[3000:], y[3000:])
        sizes[name] = (early, _state_bytes(model))
    assert sizes["bounded"][1] == sizes["bounded"][0]
    assert sizes["exact"][1] > 1.5 * sizes["exact"][0]


@pytest.mark.parametrize("kernel", ["sigmoid", "additive_chi2"])
def test_indefinite_kernels_refuse_the_bounded_average(kernel):
    # The pool projects in the kernel's feature space; these kernels have
    # none (additive_chi2: k(x, x) = 0 would project every function away).
    X, y = make_stream(200, 2, seed=2)
    X = np.abs(X)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        Forgetron(budget=10, kernel=kernel, average=True).fit(X, y)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        BudgetPerceptron(budget=10, kernel=kernel).partial_fit(X, y, classes=[0, 1])
    assert len(Forgetron(budget=10, kernel=kernel, average="exact").fit(X, y).support_) > 10
    assert len(BudgetPerceptron(budget=10, kernel=kernel, average=False).fit(X, y).support_) <= 10
