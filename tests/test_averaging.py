"""The averaged model of the removal rules, kept within the budget.

Each budget learner is played against its per-sample reference (which logs
the members it removes, with their running sums and rounds, in order); a
plain pool written here with numpy (append the members that leave; past
five budgets, keep a subset chosen by kernel matching pursuit or by the
size of each member's function, refitted by least squares) must give the
estimator's ``average=True`` model: the same support vectors and
coefficients.
"""

import itertools
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _budget_references import RefBudget, RefForgetron, RefRBP
from _instances import instances
from scipy.linalg import cholesky
from sklearn import config_context
from sklearn.base import clone
from sklearn.metrics.pairwise import pairwise_kernels
from test_bsgd import KERNELS as BSGD_KERNELS
from test_bsgd import ReferenceBSGD, encode, stream

from sklearn_budget import (
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    RandomizedBudgetPerceptron,
    TighterBudgetPerceptron,
    _averaging,
)
from sklearn_budget._kernels import Kernel
from sklearn_budget._rounds import _BLOCK_SIZE

GAMMA = 0.5

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


def reference_compress(functions, budget, kernel, method=None, **params):
    """The expansion ``sum_j a_j k(x_j, .)`` within ``budget`` members, by the
    definition: keep ``S``, chosen greedily (matching pursuit: the member
    whose function, off the span of those kept, best matches the residual
    ``f - P_S f``; members with a residual below ``1e-10 max k(x, x)``
    never) or by ``||a_j|| sqrt(k(x_j, x_j))``, then the least-squares
    coefficients: after matching pursuit (among the ``2 budget`` members of
    largest ``||a_j|| sqrt(k(x_j, x_j))``), those of ``f``'s values at the
    rows, ``argmin ||K[:, S] c - K a||^2 + 1e-8 n max k(x, x)^2 ||c||^2``;
    by size, those of the projection, ``(K_SS + 1e-8 max k(x, x) I)^{-1} K_S: a``.

    ``functions``: ``(index, row, a)``. Returns the indices and coefficients
    (n_rows, n_members) sorted by index.
    """
    idx = np.array([f[0] for f in functions])
    X = np.vstack([f[1] for f in functions])
    A = np.array([np.atleast_1d(f[2]) for f in functions], dtype=float)
    K = pairwise_kernels(X, metric=kernel, **params)
    kmax = np.abs(np.diag(K)).max()
    if len(functions) <= budget:
        S, coef = np.arange(len(functions)), A
    else:
        if method is None:
            method = "omp" if budget <= 128 else "size"
        if method == "size":
            size = np.sqrt((A**2).sum(axis=1) * np.diag(K))
            S = np.sort(np.argsort(-size, kind="stable")[:budget])
        else:
            # Among the 2 budget members of largest ||a_j|| sqrt(k(x_j, x_j)).
            size = np.sqrt((A**2).sum(axis=1) * np.diag(K))
            candidates = set(np.argsort(-size, kind="stable")[: 2 * budget].tolist())
            S = []
            for _ in range(budget):
                best, pick = -1.0, None
                for j in sorted(candidates):
                    if j in S:
                        continue
                    # The part of k(x_j, .) off the span of the kept members.
                    if S:
                        w = np.linalg.solve(K[np.ix_(S, S)], K[S, j])
                        resid = K[j, j] - K[S, j] @ w
                        proj = A.T @ K[:, S] @ np.linalg.solve(K[np.ix_(S, S)], K[S, j])
                    else:
                        resid, proj = K[j, j], 0.0
                    if resid <= 1e-10 * kmax:
                        continue
                    # <f - P_S f, k(x_j, .) - P_S k(x_j, .)>
                    inner = A.T @ K[:, j] - proj
                    gain = (inner @ inner) / resid
                    if gain > best:
                        best, pick = gain, j
                if pick is None:
                    break
                S.append(pick)
            S = np.sort(S)
        if method == "size":
            coef = np.linalg.solve(K[np.ix_(S, S)] + 1e-8 * kmax * np.eye(S.size), K[S] @ A)
        else:
            # Ridge least squares as an augmented system, solved by lstsq
            # (another route than the estimator's normal equations).
            mu = 1e-8 * len(functions) * kmax**2
            system = np.vstack([K[:, S], np.sqrt(mu) * np.eye(S.size)])
            target = np.vstack([K @ A, np.zeros((S.size, A.shape[1]))])
            coef = np.linalg.lstsq(system, target, rcond=None)[0]
    order = np.argsort(idx[S], kind="stable")
    return idx[S][order], coef[order].T


def reference_pool(retired, live, budget, kernel, **params):
    """The bounded average by the definition: the members that left
    (``retired``: ``(index, row, running sum, round)`` in order) join the
    pool; after a round that leaves more than ``5 budget``, it is compressed
    (:func:`reference_compress`); the published average is the pool with
    the current members (``live``: ``(index, row, running sum)``)
    compressed in the same way. Returns indices and summed coefficients."""
    pool = []
    for j, (index, x, a, t) in enumerate(retired):
        pool.append((index, x, np.atleast_1d(a)))
        last_of_round = j + 1 == len(retired) or retired[j + 1][3] != t
        if last_of_round and len(pool) > 5 * budget:
            support, coef = reference_compress(pool, budget, kernel, **params)
            rows = {index: x for index, x, _ in pool}
            pool = [(i, rows[i], c) for i, c in zip(support, coef.T)]
    functions = [f for f in pool + list(live) if np.any(f[2])]
    return reference_compress(functions, budget, kernel, **params)


class _RoundLog(list):
    """A reference's list of the members that left, which notes the round
    of each (``clock()``) in ``rounds``."""

    def __init__(self, clock):
        super().__init__()
        self.clock, self.rounds = clock, []

    def append(self, item):
        super().append(item)
        self.rounds.append(self.clock())


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
    X, y = make_stream(2 * _BLOCK_SIZE + 90, n_classes, sparse, seed=n_classes)
    classes = np.unique(y)
    budget = 8
    make, make_ref = CASES[case]
    est = make(budget, gamma=GAMMA, average=True, random_state=2)
    est.partial_fit(X, y, classes=classes)
    ref = make_ref(classes, budget, kernel_params=dict(gamma=GAMMA), random_state=2)
    ref.retired_log = log = _RoundLog(lambda: ref.rounds)
    ref.partial_fit(X, y)
    # The pool was compressed at least once.
    assert ref.removed > 5 * budget
    live = [(m.index, m.x, np.atleast_1d(ref.sums.get(m.index, 0.0))) for m in ref.members]
    retired = [(*f, t) for f, t in zip(log, log.rounds)]
    support, coef = reference_pool(retired, live, budget, "rbf", gamma=GAMMA)
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
    ref.retired = log = _RoundLog(lambda: ref.t)
    ref.play(X, encode(y, n_classes), np.arange(len(y)), average=True)
    assert len(ref.retired) > 5 * 6
    retired = [(m.index, m.x.reshape(1, -1), m.acc, t) for m, t in zip(log, log.rounds)]
    live = [(m.index, m.x.reshape(1, -1), m.acc) for m in ref.members]
    support, coef = reference_pool(retired, live, 6, "rbf", **kw)
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


def uncompressed_average(est):
    """Rows and coefficients (n_members, n_rows) of the average of the rounds
    played: the pool and the current members, their running sums brought
    to the last round, divided by the rounds."""
    state, n, p = est._state, est._n, int(est._state["pool_n"][0])
    acc = state["acc"][:n] + state["alpha"][:n] * (state["scale"][1] - state["stamp"][:n])[:, None]
    rows = np.vstack([est._pool_rows(), est._sv])
    return rows, np.vstack([state["pool_coef"][:p], acc]) / est._t


def rkhs_norm(rows, coef, gamma):
    return np.sqrt(max(np.einsum("ic,ij,jc->", coef, rbf(rows, rows, gamma), coef), 0.0))


def rbf(A, B, gamma):
    return pairwise_kernels(A, B, metric="rbf", gamma=gamma)


@pytest.mark.parametrize("gamma", [1e-4, 1e-3, 0.5, 50.0])
def test_compression_of_ill_conditioned_pools(gamma):
    # Duplicates and near duplicates, and tiny or huge kernel widths, over a
    # long stream: the refit stays finite, it is the ridge least-squares fit
    # of the uncompressed average's values at its own rows (its objective at
    # most that of the projection on the same members, one candidate of
    # the minimum), its function does not blow up (RKHS norm) and, where the
    # pool's span is nearly one of few members (a wide kernel), it is nearly
    # exact.
    rng = np.random.RandomState(0)
    base = rng.randn(40, 3)
    X = np.vstack(
        [base[rng.randint(40, size=6000)] + 1e-9 * rng.randn(6000, 3), rng.randn(2000, 3)]
    )
    y = (X[:, 0] + 0.3 * rng.randn(len(X)) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Cholesky failure
        est = Forgetron(budget=25, gamma=gamma, average=True, random_state=0)
        est.partial_fit(X, y, classes=[0, 1])
    assert len(est.support_) <= 25
    assert np.isfinite(est.dual_coef_).all()
    assert np.isfinite(est.decision_function(X[:50])).all()
    rows, coef = uncompressed_average(est)
    assert rows.shape[0] > 25  # the pool holds more than the published model
    S, c = est.support_vectors_, est.dual_coef_.T
    values, A = rbf(rows, rows, gamma) @ coef, rbf(rows, S, gamma)
    projection = np.linalg.solve(rbf(S, S, gamma) + 1e-8 * np.eye(len(S)), A.T @ coef)
    mu = 1e-8 * rows.shape[0]  # k(x, x) = 1

    def objective(c):
        return np.sum((A @ c - values) ** 2) + mu * np.sum(c**2)

    assert objective(c) <= objective(projection) * (1 + 1e-6)
    assert rkhs_norm(S, c, gamma) <= 1.1 * rkhs_norm(rows, coef, gamma)
    if gamma <= 1e-3:
        assert np.linalg.norm(A @ c - values) <= 1e-3 * np.linalg.norm(values)


@pytest.mark.parametrize("method", ["omp", "size"])
def test_compression_is_the_reference(method, monkeypatch):
    # Both selections against the numpy definition (the size of each
    # member's function is the rule above 128 members).
    if method == "size":
        monkeypatch.setattr(_averaging, "OMP_MAX_BUDGET", 0)
    rng = np.random.RandomState(1)
    rows, coef = rng.randn(60, 3), rng.randn(60, 2)
    rows[7] = rows[3]  # a duplicate
    idx = np.arange(60) + 10
    kernel = Kernel("rbf", gamma=GAMMA)
    kept, c, kidx = _averaging.compress(rows, coef, idx, kernel, 0, 12)
    functions = [(idx[j], rows[j : j + 1], coef[j]) for j in range(60)]
    support, ref_coef = reference_compress(functions, 12, "rbf", method=method, gamma=GAMMA)
    assert kidx.size <= 12
    np.testing.assert_array_equal(kidx, support)
    np.testing.assert_allclose(c.T, ref_coef, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(kept, rows[support - 10])


def test_projection_blocks_are_bands_of_bounded_size(monkeypatch):
    # Above 128 members the budget x pool block is computed in bands of rows,
    # the blocks of an expansion (about 2^20 values; here 64 rows of 600
    # values, the rows left over joining the last band): at a budget of 4000
    # the whole block and its temporaries took about 1 GB. The result is
    # still the reference's.
    from sklearn_budget import _kernels

    monkeypatch.setattr(_averaging, "OMP_MAX_BUDGET", 0)
    monkeypatch.setattr(_kernels, "_EXPANSION_VALUES", 64 * 600)
    shapes = []

    block = _averaging._kernel_block

    def recording(kernel, kernel_code, X, Z, buffer=None, index=None):
        shapes.append((X.shape[0], Z.shape[0]))
        return block(kernel, kernel_code, X, Z, buffer, index)

    monkeypatch.setattr(_averaging, "_kernel_block", recording)
    rng = np.random.RandomState(2)
    rows, coef, budget = rng.randn(600, 3), rng.randn(600, 2), 150
    # A kernel width at which 150 of these rows are well conditioned: the
    # coefficients are compared, not only the function.
    kernel = Kernel("rbf", gamma=2.0)
    kept, c, kidx = _averaging.compress(rows, coef, np.arange(600), kernel, 0, budget)
    assert [m for m, _ in shapes] == [64, 86] and all(n == 600 for _, n in shapes)
    # The same bands, hence the same model, whatever working_memory says
    # (0.05 MiB: blocks of 10 rows of 600 values for an expansion).
    shapes.clear()
    with config_context(working_memory=0.05):
        same = _averaging.compress(rows, coef, np.arange(600), kernel, 0, budget)
    assert [m for m, _ in shapes] == [64, 86]
    for a, b in zip(same, (kept, c, kidx)):
        np.testing.assert_array_equal(a, b)
    functions = [(j, rows[j : j + 1], coef[j]) for j in range(600)]
    support, ref_coef = reference_compress(functions, budget, "rbf", method="size", gamma=2.0)
    np.testing.assert_array_equal(kidx, support)
    np.testing.assert_allclose(c.T, ref_coef, rtol=1e-7, atol=1e-10)


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
    rows = vars(est).get("_pool_X")
    return total + (0 if rows is None else rows.data.nbytes)


@pytest.mark.parametrize("est", REMOVAL_ESTIMATORS, ids=repr)
def test_state_does_not_grow_with_the_stream(est):
    # The pool holds at most five budgets of members, plus those of a round,
    # however long the stream; the exact average's grows with it.
    X, y = make_stream(12_000, 3, seed=9)
    bounded = est.set_params(average=True, gamma=GAMMA, random_state=0)
    exact = bounded.__class__(**{**bounded.get_params(), "average": "exact"})
    sizes = {}
    for name, model in (("bounded", bounded), ("exact", exact)):
        model.partial_fit(X[:3000], y[:3000], classes=[0, 1, 2])
        early = _state_bytes(model)
        model.partial_fit(X[3000:], y[3000:])
        sizes[name] = (early, _state_bytes(model))
    # Members, pool (rows, sums, indices) and the bins: the pool's capacity
    # at most twice 5 budgets plus a round's members.
    B, d, R = bounded.budget, X.shape[1], 3
    members = (B + 2) * (d + 2 * R + 8) * 8 + (B + 2) ** 2 * 8
    pool = 2 * (5 * B + B + 2) * (d + R + 1) * 8
    bins = 2 * 3 * 2048 * 8 * 2
    assert sizes["bounded"][1] <= members + pool + bins
    assert sizes["exact"][1] > 1.5 * sizes["exact"][0]


def test_memory_is_flat_over_a_long_stream_at_a_large_budget():
    # A budget of 1000 (selection by size): the pool is compressed every
    # 4000 members that leave, and its arrays stop growing.
    rng = np.random.RandomState(0)
    X = rng.randn(40_000, 3)
    y = rng.randint(2, size=40_000)  # noise: members leave on most rounds
    est = RandomizedBudgetPerceptron(budget=1000, gamma=GAMMA, average=True, random_state=0)
    est.partial_fit(X[:20_000], y[:20_000], classes=[0, 1])
    capacity = {k: a.shape for k, a in est._state.items() if k.startswith("pool_")}
    sizes = []
    for start in range(20_000, 40_000, 5000):
        est.partial_fit(X[start : start + 5000], y[start : start + 5000])
        sizes.append(int(est._state["pool_n"][0]))
        assert {k: a.shape for k, a in est._state.items() if k.startswith("pool_")} == capacity
    assert max(sizes) <= 5 * 1000 and capacity["pool_X"][0] <= 2 * 5 * 1000 + 4
    assert len(est.support_) <= 1000


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


@pytest.mark.parametrize(
    "est",
    [
        Forgetron(budget=12, gamma=GAMMA, average=True, random_state=0),
        BudgetedSGDClassifier(
            budget=12, maintenance="projection", gamma=GAMMA, average=True, random_state=0
        ),
    ],
    ids=repr,
)
def test_sparse_and_dense_streams_give_the_same_average(est):
    # The pool keeps CSR rows as they are and compresses them with the
    # sparse kernel: the same model as the dense stream, up to the rounding
    # of the kernel values (the previous pool differed by 2e-7 for
    # budgeted SGD with projection).
    X, y = make_stream(2000, 3, seed=4)
    dense = clone(est).fit(X, y)
    sparse = clone(est).fit(sp.csr_matrix(X), y)
    assert dense._state["pool_n"][0] > 0
    np.testing.assert_array_equal(sparse.support_, dense.support_)
    np.testing.assert_allclose(sparse.dual_coef_, dense.dual_coef_, rtol=0, atol=1e-9)


def test_an_indefinite_gram_matrix_keeps_the_chosen_members_own_sums():
    # A kernel whose Gram matrix is negative definite: no ridge makes a
    # Cholesky factor, so the members chosen keep their own sums, with a
    # warning (the named indefinite kernels are refused before that).
    def negative_rbf(a, b):  # pairwise_kernels calls it on two rows
        return -np.exp(-GAMMA * ((a - b) ** 2).sum())

    rng = np.random.RandomState(3)
    rows, coef = rng.randn(30, 2), rng.randn(30, 1)
    kernel = Kernel(negative_rbf)
    with pytest.warns(UserWarning, match="not positive definite"):
        kept, c, idx = _averaging.compress(rows, coef, np.arange(30), kernel, None, 8)
    assert idx.size == 8
    np.testing.assert_array_equal(c, coef[idx])
    np.testing.assert_array_equal(kept, rows[idx])


def test_finite_pool_kernel_gives_rbf_kernels_bits_or_none():
    # The compiled rbf values of dense rows, which _kernel_block does not
    # check again: rbf_kernel's bits where they apply (gamma >= 0, rows whose
    # every step stays finite), None elsewhere (the kernel's other paths,
    # whose values are checked).
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._kernels import finite_pool_kernel

    rng = np.random.RandomState(3)
    X, Z = rng.randn(30, 4), rng.randn(20, 4)
    for gamma in (0.0, 0.3, 40.0):
        for Y in (X, Z):
            got = finite_pool_kernel(Kernel("rbf", gamma=gamma), X, Y)
            assert np.array_equal(got, rbf_kernel(X, Y, gamma=gamma))
            assert got.flags.c_contiguous and np.isfinite(got).all()
    assert finite_pool_kernel(Kernel("rbf", gamma=-0.3), X, Z) is None
    assert finite_pool_kernel(Kernel("rbf", gamma=0.3), 1e160 * X, Z) is None
    sparse = sp.csr_matrix(X), sp.csr_matrix(Z)
    assert finite_pool_kernel(Kernel("rbf", gamma=0.3), *sparse) is None
    assert finite_pool_kernel(Kernel("laplacian", gamma=0.3), X, Z) is None
    # Values that overflow (a negative gamma) are still refused.
    with pytest.raises(ValueError, match="Non-finite kernel values"):
        _averaging._kernel_block(Kernel("rbf", gamma=-1e3), None, X, Z)


def test_band_kernel_writes_the_kernels_values_into_the_buffer():
    # The bands of the projection's block share one buffer: each band's
    # values are a view of its start, the bits of Kernel.__call__ (rbf_kernel
    # for dense and for CSR rows), or None where another path computes them.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._kernels import band_kernel

    rng = np.random.RandomState(5)
    X, Z = rng.randn(7, 6), rng.randn(40, 6)
    Xs = sp.random(7, 300, density=0.05, format="csr", random_state=rng)
    Zs = sp.random(40, 300, density=0.05, format="csr", random_state=rng)
    buffer = np.full(7 * 40 + 3, np.nan)
    start = buffer.__array_interface__["data"][0]
    # Few rows against many (the CSR lists of X walked with Z's entries) and
    # as many rows as columns (an index of Z's entries by feature).
    for A, B in ((X, Z), (Xs, Zs), (Zs[:7], Xs[:5])):
        for gamma in (0.0, 0.3, 40.0):
            got = band_kernel(Kernel("rbf", gamma=gamma), A, B, buffer)
            assert got.__array_interface__["data"][0] == start
            assert got.shape == (A.shape[0], B.shape[0])
            assert np.array_equal(got, rbf_kernel(A, B, gamma=gamma))
            assert np.array_equal(got, Kernel("rbf", gamma=gamma)(A, B))
    rbf = Kernel("rbf", gamma=0.3)
    assert band_kernel(Kernel("rbf", gamma=-0.3), X, Z, buffer) is None
    assert band_kernel(rbf, 1e160 * X, Z, buffer) is None
    assert band_kernel(Kernel("laplacian", gamma=0.3), X, Z, buffer) is None
    assert band_kernel(rbf, Xs, Zs.toarray(), buffer) is None
    assert band_kernel(rbf, X.astype(np.float32), Z, buffer) is None
    assert band_kernel(rbf, X[:0], Z, buffer) is None
    assert band_kernel(rbf, Xs, Zs[:0], buffer) is None
    # CSR rows whose exponents overflow: None, and _kernel_block reports them.
    huge = sp.csr_matrix(1e200 * Xs.toarray()), sp.csr_matrix(1e200 * Zs.toarray())
    assert band_kernel(Kernel("rbf", gamma=0.3), *huge, buffer) is None
    with pytest.raises(ValueError, match="Non-finite kernel values"):
        _averaging._kernel_block(Kernel("rbf", gamma=0.3), None, *huge, buffer)


@pytest.mark.parametrize("sparse", [False, True])
def test_projection_bands_share_one_buffer_with_the_factor(monkeypatch, sparse):
    # Every band of the projection's block is written into one buffer, which
    # the Cholesky factor then overwrites: no fresh pages per band. The
    # model is the reference's.
    from sklearn_budget import _kernels

    monkeypatch.setattr(_averaging, "OMP_MAX_BUDGET", 0)
    monkeypatch.setattr(_kernels, "_EXPANSION_VALUES", 64 * 600)
    buffers, works = [], []
    block, solve = _averaging._kernel_block, _averaging._ridge_solve

    def recording_block(kernel, kernel_code, X, Z, buffer=None, index=None):
        K = block(kernel, kernel_code, X, Z, buffer, index)
        buffers.append(buffer)
        assert np.shares_memory(K, buffer)
        return K

    def recording_solve(normal, rhs, ridge, work=None):
        works.append(work)
        out = solve(normal, rhs, ridge, work)
        # The factor is in the buffer: the lower Cholesky factor of
        # normal + ridge I, in Fortran order (LAPACK's, in place).
        b = normal.shape[0]
        factor = np.tril(work[: b * b].reshape((b, b), order="F"))
        expected = cholesky(np.tril(normal) + np.tril(normal, -1).T + ridge * np.eye(b), lower=True)
        np.testing.assert_allclose(factor, expected, rtol=1e-10, atol=1e-12)
        return out

    monkeypatch.setattr(_averaging, "_kernel_block", recording_block)
    monkeypatch.setattr(_averaging, "_ridge_solve", recording_solve)
    rng = np.random.RandomState(4)
    rows, coef, budget = rng.randn(600, 3), rng.randn(600, 2), 150
    if sparse:
        rows = sp.csr_matrix(rows)
    kernel = Kernel("rbf", gamma=2.0)
    kept, c, kidx = _averaging.compress(rows, coef, np.arange(600), kernel, None, budget)
    assert len(buffers) == 2 and all(b is buffers[0] for b in buffers + works)
    # The larger of the largest band (86 rows of 600 values) and the factor.
    assert buffers[0].size == max(86 * 600, budget * budget)
    dense_rows = rows.toarray() if sparse else rows
    functions = [(j, dense_rows[j : j + 1], coef[j]) for j in range(600)]
    support, ref_coef = reference_compress(functions, budget, "rbf", method="size", gamma=2.0)
    np.testing.assert_array_equal(kidx, support)
    np.testing.assert_allclose(c.T, ref_coef, rtol=1e-7, atol=1e-10)


def test_projection_bands_of_sparse_rows_walk_an_index_of_the_pool(monkeypatch):
    # High-dimensional sparse rows: the pool is indexed by feature once for
    # all the bands (row_index), each band walking its own entries; the
    # compression is the same bits as without the index, and the bands'
    # values those of rbf_kernel.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget import _kernels

    monkeypatch.setattr(_averaging, "OMP_MAX_BUDGET", 0)
    monkeypatch.setattr(_kernels, "_EXPANSION_VALUES", 64 * 700)
    rng = np.random.RandomState(6)
    indices = np.concatenate([np.sort(rng.choice(20_000, 15, replace=False)) for _ in range(700)])
    rows = sp.csr_matrix(
        (rng.uniform(0.1, 3.0, indices.size), indices, np.arange(0, indices.size + 1, 15)),
        shape=(700, 20_000),
    )
    coef = rng.randn(700, 2)
    kernel = Kernel("rbf", gamma=0.05)
    indexed, bands = [], []
    index_of, block = _averaging.row_index, _averaging._kernel_block

    def recording_index(kernel, Z):
        index = index_of(kernel, Z)
        indexed.append(index)
        return index

    def recording_block(kernel, kernel_code, X, Z, buffer=None, index=None):
        K = block(kernel, kernel_code, X, Z, buffer, index)
        bands.append(index is not None)
        np.testing.assert_array_equal(K, rbf_kernel(X, Z, gamma=0.05))
        return K

    monkeypatch.setattr(_averaging, "row_index", recording_index)
    monkeypatch.setattr(_averaging, "_kernel_block", recording_block)
    with_index = _averaging.compress(rows, coef, np.arange(700), kernel, None, 300)
    assert len(indexed) == 1 and indexed[0] is not None and bands == [True] * 4
    monkeypatch.setattr(_averaging, "row_index", lambda kernel, Z: None)
    without = _averaging.compress(rows, coef, np.arange(700), kernel, None, 300)
    for a, b in zip(with_index, without):
        a, b = (a.toarray(), b.toarray()) if sp.issparse(a) else (a, b)
        np.testing.assert_array_equal(a, b)


def test_symmetric_rbf_gram_is_one_triangle_mirrored():
    # The pool's rbf Gram matrix from given products: the exponents of the
    # lower triangle by scikit-learn's formula, their exp, mirrored; every
    # size up to the packing's edge cases (one and two rows).
    from sklearn_budget._pool import symmetric_rbf_gram

    rng = np.random.RandomState(5)
    for n in (1, 2, 3, 17, 40):
        X = rng.randn(n, 3) * rng.choice([0.1, 1.0, 10.0])
        P = X @ X.T
        xx = np.diag(P)
        gamma = 0.4
        exponent = np.maximum((-2.0 * P + xx[:, None]) + xx[None, :], 0.0) * -gamma
        np.fill_diagonal(exponent, 0.0)
        expected = np.tril(np.exp(exponent))
        expected += np.tril(expected, -1).T
        K = P.copy()
        K[np.triu_indices(n, 1)] = np.nan  # never read
        symmetric_rbf_gram(K, gamma)
        assert np.array_equal(K, K.T)
        # One exp of the same exponent, possibly by another of numpy's loops.
        np.testing.assert_array_max_ulp(K, expected, maxulp=1)
        # From the rows: the squared differences summed in feature order,
        # for one feature and more (the sum's first and last terms are
        # written in passes of their own).
        for d in (1, 2, 3, 8):
            Xd = rng.randn(n, d) * rng.choice([0.1, 1.0, 10.0])
            squares = np.zeros((n, n))
            for a in range(d):
                squares += (Xd[:, None, a] - Xd[None, :, a]) ** 2
            expected = np.exp(np.tril(squares * -gamma))
            expected = np.tril(expected) + np.tril(expected, -1).T
            K = np.full((n, n), np.nan)  # never read
            symmetric_rbf_gram(K, gamma, Xd)
            assert np.array_equal(K, K.T)
            np.testing.assert_array_max_ulp(K, expected, maxulp=1)
    with pytest.raises(ValueError, match="square"):
        symmetric_rbf_gram(np.zeros((2, 3)), 0.4)
    with pytest.raises(ValueError, match="shape"):
        symmetric_rbf_gram(np.zeros((2, 2)), 0.4, np.zeros((3, 2)))


def test_symmetric_pool_gram_is_the_rbf_kernel_up_to_rounding():
    # Dense rows (from differences or products by syrk) and CSR rows: symmetric, rbf_kernel's
    # values within the rounding of the products and the exponents (a few
    # ulps of ||x||^2 + ||z||^2 per unit of exponent), None where the
    # caller's checked path applies.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._kernels import symmetric_pool_gram

    rng = np.random.RandomState(6)
    # Dense rows of 5 features (from differences), of 12 (BLAS products).
    for X, gamma in itertools.product(
        (rng.randn(60, 5) * 3.0, rng.randn(60, 12)), (0.0, 0.05, 2.0)
    ):
        norms = (X**2).sum(axis=1)
        expected = rbf_kernel(X, X, gamma=gamma)
        bound = 64 * np.finfo(float).eps * gamma * (norms[:, None] + norms[None, :])
        for rows in (X, sp.csr_matrix(X)):
            K = symmetric_pool_gram(Kernel("rbf", gamma=gamma), rows)
            assert K.flags.c_contiguous and np.array_equal(K, K.T)
            assert np.all(np.abs(K - expected) <= bound * np.maximum(K, expected))
            assert np.all(np.diag(K) == 1.0)
    X = rng.randn(60, 5)
    assert symmetric_pool_gram(Kernel("rbf", gamma=-0.3), X) is None
    assert symmetric_pool_gram(Kernel("rbf", gamma=0.3), 1e160 * X) is None
    assert symmetric_pool_gram(Kernel("laplacian", gamma=0.3), X) is None
    unsorted = sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 2])), (1, 2))
    assert not unsorted.has_canonical_format
    assert symmetric_pool_gram(Kernel("rbf", gamma=0.3), unsorted) is None


def test_omp_select_approximates_a_function_beyond_its_candidates():
    # Matching pursuit among some members (the candidates) of a function
    # with others too: it reads <f, k(x_j, .)> of the candidates only, and
    # keeps the written-out pursuit's choice; a budget of one keeps the
    # largest <f, k(x_j, .)>^2 / k(x_j, x_j) of the products given.
    from sklearn.metrics.pairwise import rbf_kernel
    from test_exactness import _omp_reference

    from sklearn_budget._pool import omp_select

    rng = np.random.RandomState(4)
    X = rng.randn(50, 2)
    K = rbf_kernel(X, X, gamma=0.7)
    C = np.sort(rng.choice(50, 20, replace=False))
    KC = np.ascontiguousarray(K[np.ix_(C, C)])
    for R in (1, 2):
        coef = rng.randn(50, R)
        for budget in (1, 5, 20):
            expected = _omp_reference(KC, K[C] @ coef, budget, 1e-10)
            assert np.array_equal(omp_select(KC, K[C] @ coef, budget, 1e-10), expected)
            # The candidates named in the whole Gram matrix: the same choice,
            # read where the values are.
            assert np.array_equal(omp_select(K, K[C] @ coef, budget, 1e-10, C), expected)
    other = K @ rng.randn(50, 1)
    assert omp_select(K, other, 1, 1e-10).tolist() == [np.argmax(other[:, 0] ** 2)]
    with pytest.raises(ValueError, match="rows"):
        omp_select(K, other[:10], 3, 1e-10)
    with pytest.raises(ValueError, match="candidates must be rows of K"):
        omp_select(K, other[:2], 1, 1e-10, np.array([0, 50]))
    with pytest.raises(ValueError, match="square"):
        omp_select(K[:10], other[:10], 1, 1e-10)
