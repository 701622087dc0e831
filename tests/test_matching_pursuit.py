"""Kernel Matching Pursuit against a naive full-Gram implementation."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from sklearn_budget._kernels import Kernel
from sklearn_budget._matching_pursuit import KernelMatchingPursuit


def targets(y):
    """-1/+1 target columns: one for two classes, one per class otherwise."""
    classes = np.unique(y)
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def gram(A, B, kernel, gamma, coef0=1.0):
    if kernel == "linear":
        return A @ B.T
    extra = {"degree": 3, "coef0": coef0} if kernel == "poly" else {}
    return pairwise_kernels(A, B, metric=kernel, gamma=gamma, **extra)


def naive_kmp(K, Y, n_steps, method, tol=0.0, candidates=None):
    """The greedy loop written out, on the full Gram matrix ``K``.

    ``candidates(step, selectable)`` may restrict the rows looked at in a step.
    Returns the chosen rows (in order of first choice), their coefficients
    (n_SV x n_targets) and the number of steps.
    """
    n = K.shape[0]
    R = Y.copy()
    chosen, coef = [], {}
    steps = 0
    for step in range(n_steps):
        selectable = [j for j in range(n) if method == "basic" or j not in chosen]
        if candidates is not None:
            selectable = candidates(step, selectable)
        best, best_gain = None, -np.inf
        for j in selectable:
            col = K[:, j]
            if col @ col == 0:
                continue
            gain = np.sum((col @ R) ** 2) / (col @ col)
            if gain > best_gain:
                best, best_gain = j, gain
        if best is None or best_gain <= tol * np.sum(Y**2):
            break
        steps += 1
        if best not in coef:
            chosen.append(best)
            coef[best] = np.zeros(Y.shape[1])
        if method == "basic":
            col = K[:, best]
            c = (col @ R) / (col @ col)
            coef[best] = coef[best] + c
            R = R - np.outer(col, c)
        else:
            Phi = K[:, chosen]
            A = np.linalg.lstsq(Phi, Y, rcond=None)[0]
            coef = dict(zip(chosen, A))
            R = Y - Phi @ A
    return np.array(chosen, dtype=int), np.array([coef[j] for j in chosen]), steps


def data(n=40, n_features=3, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    if n_classes == 2:
        y = (X[:, 0] * X[:, 1] > 0).astype(int)
    else:
        y = np.argmax(X[:, :n_classes] + 0.5 * rng.randn(n, n_classes), axis=1)
    return X, y


def state(est):
    return pickle.dumps(sorted(vars(est).items()))


# ----------------------------------------------------------------------
# Agreement with the naive reference
# ----------------------------------------------------------------------
@pytest.mark.parametrize("kernel, gamma", [("rbf", 0.5), ("laplacian", 0.3), ("poly", 0.2)])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_matches_naive_reference(method, n_classes, kernel, gamma):
    X, y = data(n_classes=n_classes)
    Xt, _ = data(n=15, n_classes=n_classes, seed=1)
    est = KernelMatchingPursuit(budget=12, method=method, kernel=kernel, gamma=gamma, coef0=1.0)
    est.fit(X, y)
    K = gram(X, X, kernel, gamma)
    support, coef, steps = naive_kmp(K, targets(y), 12, method)

    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)
    assert est.n_iter_ == steps == 12
    assert len(est.support_) == len(support)
    np.testing.assert_array_equal(est.support_vectors_, X[support])
    np.testing.assert_array_equal(est.classes_, np.unique(y))
    assert est.dual_coef_.shape == (1 if n_classes == 2 else n_classes, len(support))

    scores = gram(Xt, X[support], kernel, gamma) @ coef
    if n_classes == 2:
        scores = scores[:, 0]
        expected = est.classes_[(scores > 0).astype(int)]
    else:
        expected = est.classes_[np.argmax(scores, axis=1)]
    np.testing.assert_allclose(est.decision_function(Xt), scores, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(est.predict(Xt), expected)


def test_basic_selects_an_example_again():
    # More steps than rows: basic matching pursuit must come back to chosen
    # examples and add to their coefficients.
    X, y = data(n=10)
    est = KernelMatchingPursuit(budget=40, method="basic", gamma=0.5).fit(X, y)
    support, coef, steps = naive_kmp(
        pairwise_kernels(X, metric="rbf", gamma=0.5), targets(y), 40, "basic"
    )
    assert est.n_iter_ == steps == 40
    assert len(est.support_) == len(support) <= 10
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_tol_stops_like_the_reference(method):
    X, y = data()
    est = KernelMatchingPursuit(budget=30, method=method, gamma=0.5, tol=0.01).fit(X, y)
    K = pairwise_kernels(X, metric="rbf", gamma=0.5)
    support, coef, steps = naive_kmp(K, targets(y), 30, method, tol=0.01)
    assert 0 < est.n_iter_ == steps < 30
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_a_shorter_fit_is_a_prefix_of_a_longer_one(method):
    X, y = data(n_classes=3)
    short = KernelMatchingPursuit(budget=5, method=method, gamma=0.5).fit(X, y)
    long = KernelMatchingPursuit(budget=15, method=method, gamma=0.5).fit(X, y)
    np.testing.assert_array_equal(long.support_[: len(short.support_)], short.support_)
    # The training squared loss never increases with more steps.
    Y = targets(y)
    losses = [
        np.sum((Y - est.decision_function(X)) ** 2)
        for est in (
            KernelMatchingPursuit(budget=k, method=method, gamma=0.5).fit(X, y) for k in (1, 5, 15)
        )
    ]
    assert losses[0] > losses[1] > losses[2]


def test_backfitting_interpolates_once_every_row_is_chosen():
    # Well separated rows: the Gram matrix is well conditioned, so the
    # least-squares fit on all of them reproduces the targets.
    X, y = data(n=15)
    est = KernelMatchingPursuit(budget=100, gamma=2.0).fit(X, y)
    assert len(est.support_) == est.n_iter_ == 15
    np.testing.assert_allclose(est.decision_function(X), targets(y)[:, 0], atol=1e-6)


# ----------------------------------------------------------------------
# Memory: the blocked path and the candidate subsets
# ----------------------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_blocked_kernel_rows_give_the_same_model(method, n_classes):
    X, y = data(n_classes=n_classes)
    ref = KernelMatchingPursuit(budget=12, method=method, gamma=0.5).fit(X, y)
    # 1e-3 MiB holds 3 kernel rows of 40 values, not the 40 x 40 matrix:
    # every row a candidate (n_candidates=40), the rows are computed afresh.
    calls = []
    original = Kernel.__call__

    def spy(kernel, A, B):
        calls.append(A.shape[0])
        return original(kernel, A, B)

    with config_context(working_memory=1e-3), pytest.MonkeyPatch.context() as mp:
        mp.setattr(Kernel, "__call__", spy)
        est = KernelMatchingPursuit(budget=12, method=method, gamma=0.5, n_candidates=40).fit(X, y)
    assert max(calls) <= 3
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
    # The full Gram matrix is computed once when it fits.
    calls.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Kernel, "__call__", spy)
        KernelMatchingPursuit(budget=12, method=method, gamma=0.5).fit(X, y)
    assert calls == [40]


@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_candidate_subsets_match_the_reference_with_the_same_draws(method):
    X, y = data(n_classes=3)
    est = KernelMatchingPursuit(budget=10, method=method, gamma=0.5, n_candidates=7, random_state=3)
    est.fit(X, y)
    rng = np.random.RandomState(3)

    def candidates(step, selectable):
        return sorted(rng.choice(selectable, size=7, replace=False))

    K = pairwise_kernels(X, metric="rbf", gamma=0.5)
    support, coef, _ = naive_kmp(K, targets(y), 10, method, candidates=candidates)
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_past_working_memory_the_candidates_are_a_pool_kept_in_memory(method):
    # 40 rows: the 40 x 40 Gram matrix (12,800 bytes) does not fit in
    # 3,200 bytes, which hold the kernel rows of 10 rows.
    X, y = data(n_classes=3)
    calls = []
    original = Kernel.__call__

    def spy(kernel, A, B):
        calls.append(A.shape[0])
        return original(kernel, A, B)

    with config_context(working_memory=3200 / 2**20), pytest.MonkeyPatch.context() as mp:
        mp.setattr(Kernel, "__call__", spy)
        est = KernelMatchingPursuit(budget=8, method=method, gamma=0.5, random_state=3).fit(X, y)
    # The pool's rows once, in blocks of a tenth; none computed again by the steps.
    assert calls == [1] * 10
    pool = sorted(np.random.RandomState(3).choice(40, size=10, replace=False))
    assert set(est.support_) <= set(pool)
    # The greedy search over the pool, written out on the full Gram matrix.
    K = pairwise_kernels(X, metric="rbf", gamma=0.5)
    support, coef, steps = naive_kmp(
        K, targets(y), 8, method, candidates=lambda step, rows: [j for j in rows if j in pool]
    )
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)
    assert est.n_iter_ == steps
    # Reproducible by random_state; another seed, another pool.
    with config_context(working_memory=3200 / 2**20):
        again = KernelMatchingPursuit(budget=8, method=method, gamma=0.5, random_state=3).fit(X, y)
        other = KernelMatchingPursuit(budget=8, method=method, gamma=0.5, random_state=4).fit(X, y)
    np.testing.assert_array_equal(again.dual_coef_, est.dual_coef_)
    assert not np.array_equal(other.support_, est.support_)


def test_the_pool_is_every_row_up_to_the_limit():
    # 12,800 bytes hold the 40 x 40 Gram matrix: the exact search, in one call.
    X, y = data()
    ref = KernelMatchingPursuit(budget=12, gamma=0.5).fit(X, y)
    with config_context(working_memory=12800 / 2**20):
        est = KernelMatchingPursuit(budget=12, gamma=0.5).fit(X, y)
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_array_equal(est.dual_coef_, ref.dual_coef_)
    with config_context(working_memory=12799 / 2**20):
        pooled = KernelMatchingPursuit(budget=12, gamma=0.5, random_state=0).fit(X, y)
    assert pooled.n_components_ == 12


def test_verbose_reports_the_pool(capsys):
    X, y = data()
    with config_context(working_memory=3200 / 2**20):
        KernelMatchingPursuit(budget=3, gamma=0.5, random_state=0, verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("The Gram matrix of 40 rows (0 MiB) exceeds working_memory")
    assert "the candidates are 10 rows drawn at random" in lines[0]
    assert [line.split(",")[0] for line in lines[1:11]] == [
        f"kernel rows of the candidates: {k} of 10" for k in range(1, 11)
    ]
    assert lines[11].startswith("step: 3,")


def test_candidate_subsets_are_reproducible_by_random_state():
    X, y = data(n=80)
    fits = [
        KernelMatchingPursuit(budget=10, gamma=0.5, n_candidates=5, random_state=s).fit(X, y)
        for s in (0, 0, 1)
    ]
    np.testing.assert_array_equal(fits[0].support_, fits[1].support_)
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
    assert not np.array_equal(fits[0].support_, fits[2].support_)
    # As many candidates as rows: the full search.
    full = KernelMatchingPursuit(budget=10, gamma=0.5).fit(X, y)
    every = KernelMatchingPursuit(budget=10, gamma=0.5, n_candidates=80, random_state=0).fit(X, y)
    np.testing.assert_array_equal(full.support_, every.support_)
    np.testing.assert_allclose(full.dual_coef_, every.dual_coef_, rtol=1e-8, atol=1e-10)


# ----------------------------------------------------------------------
# Degenerate columns
# ----------------------------------------------------------------------
@pytest.mark.parametrize("blocked", [False, True])
def test_duplicate_rows_are_skipped_by_backfitting(blocked):
    X, y = data(n=15)
    Xd, yd = np.vstack([X, X, X[:5]]), np.r_[y, y, y[:5]]
    with config_context(working_memory=1e-3 if blocked else 1024):
        # Every row a candidate, computed afresh when blocked.
        est = KernelMatchingPursuit(budget=100, gamma=2.0, n_candidates=len(yd)).fit(Xd, yd)
    # Each distinct point at most once, every one of them in the end.
    assert len(est.support_) == 15
    assert len(np.unique(est.support_ % 15)) == 15
    np.testing.assert_allclose(est.decision_function(Xd), targets(yd)[:, 0], atol=1e-6)
    # The coefficients are the least-squares fit on the chosen columns.
    Phi = pairwise_kernels(Xd, Xd[est.support_], metric="rbf", gamma=2.0)
    coef = np.linalg.lstsq(Phi, targets(yd), rcond=None)[0]
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)


def test_duplicate_rows_with_both_labels():
    X, y = data(n=20)
    Xd, yd = np.vstack([X, X]), np.r_[y, 1 - y]
    for method in ("basic", "backfitting"):
        est = KernelMatchingPursuit(budget=60, method=method, gamma=1.0).fit(Xd, yd)
        assert np.isfinite(est.dual_coef_).all()
        # Opposite labels on the same point: the best fit there is zero.
        np.testing.assert_allclose(est.decision_function(X), 0.0, atol=1e-6)


@pytest.mark.parametrize(
    "kernel, n_features, rank",
    [("linear", 2, 2), ("poly", 3, 10)],  # the homogeneous cubics of 3 variables
)
def test_a_rank_deficient_kernel_stops_at_its_rank(kernel, n_features, rank):
    # Backfitting stops once the chosen columns span the kernel's feature
    # space, with the least-squares fit; a zero row is never chosen.
    X, y = data(n=40, n_features=n_features)
    X[0] = 0.0
    est = KernelMatchingPursuit(budget=30, kernel=kernel, gamma=0.5).fit(X, y)
    assert len(est.support_) == est.n_iter_ == rank
    assert 0 not in est.support_
    K = gram(X, X, kernel, 0.5, coef0=0.0)
    support, coef, _ = naive_kmp(K, targets(y), rank, "backfitting")
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)
    basic = KernelMatchingPursuit(budget=30, method="basic", kernel=kernel, gamma=0.5).fit(X, y)
    assert basic.n_iter_ == 30 and 0 not in basic.support_


@pytest.mark.parametrize("gamma", [1e-6, 1e6])
@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_ill_conditioned_problems_stay_finite(method, gamma):
    # Exact and near duplicates with both labels; the Gram matrix all ones
    # (1e-6) or the identity (1e6).
    rng = np.random.RandomState(0)
    base = np.abs(rng.randn(30, 3))
    X = np.vstack([base, base, base + 1e-12 * rng.rand(30, 3), base[:5]])
    y = np.r_[np.arange(30) % 2, 1 - np.arange(30) % 2, np.arange(30) % 2, np.zeros(5, int)]
    est = KernelMatchingPursuit(budget=200, method=method, gamma=gamma).fit(X, y)
    assert np.isfinite(est.dual_coef_).all()
    assert np.isfinite(est.decision_function(X)).all()
    assert len(np.unique(est.support_)) == len(est.support_)


def test_sparse_input_gives_the_dense_model():
    X, y = data(n_classes=3)
    X[np.abs(X) < 0.5] = 0.0
    dense = KernelMatchingPursuit(budget=10, gamma=0.5).fit(X, y)
    est = KernelMatchingPursuit(budget=10, gamma=0.5).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(est.support_, dense.support_)
    np.testing.assert_allclose(est.dual_coef_, dense.dual_coef_, rtol=1e-8, atol=1e-10)
    assert sp.issparse(est.support_vectors_)
    np.testing.assert_allclose(est.decision_function(X), dense.decision_function(X), atol=1e-10)


def test_gamma_scale_is_that_of_svc():
    X, y = data()
    est = KernelMatchingPursuit(budget=5).fit(X, y)
    assert est.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()))
    ref = KernelMatchingPursuit(budget=5, gamma=1.0 / (X.shape[1] * X.var())).fit(X, y)
    np.testing.assert_array_equal(est.support_, ref.support_)


# ----------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------
def test_bad_input_gets_sklearn_errors_and_leaves_the_model():
    X, y = data()
    est = KernelMatchingPursuit(budget=5, gamma=0.5).fit(X, y)
    before = state(est)
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(Xnan, y)
    with pytest.raises(ValueError, match="infinity"):
        est.fit(np.where(Xnan == Xnan, X, np.inf), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(X, y[:-1])
    with pytest.raises(ValueError, match="greater than one"):
        est.fit(X, np.zeros(len(y)))
    # Fails after validate_data has set n_features_in_ to 5.
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(np.hstack([X, X[:, :2]]), y[:-1])
    with pytest.raises(ValueError, match="Unknown label type"):
        est.fit(X, np.linspace(0, 1, len(y)))
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        est.predict(Xnan)
    assert state(est) == before
    with pytest.raises(NotFittedError):
        KernelMatchingPursuit().predict(X)


def test_caller_arrays_are_not_modified():
    X, y = data()
    unsorted = sp.csr_matrix(X)
    for i in range(unsorted.shape[0]):
        s = slice(unsorted.indptr[i], unsorted.indptr[i + 1])
        unsorted.indices[s] = unsorted.indices[s][::-1].copy()
        unsorted.data[s] = unsorted.data[s][::-1].copy()
    unsorted.has_sorted_indices = False

    def snapshot(A):
        if sp.issparse(A):
            return pickle.dumps((A.indices, A.indptr, A.data, A.has_sorted_indices))
        return pickle.dumps(A)

    for Xf in (X.copy(), np.asfortranarray(X), X.astype(np.float32), unsorted):
        for n_candidates in (None, 10):
            before, y0 = snapshot(Xf), y.copy()
            est = KernelMatchingPursuit(
                budget=5, gamma=0.5, n_candidates=n_candidates, random_state=0
            )
            est.fit(Xf, y).predict(Xf)
            assert snapshot(Xf) == before
            np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("scale", [1e80, 1e150, 1e300])
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_huge_features_give_a_finite_model_or_a_clear_error(method, kernel, scale):
    X, y = data()
    est = KernelMatchingPursuit(budget=5, method=method, kernel=kernel, gamma=0.5).fit(X, y)
    before = state(est)
    try:
        est.fit(X * scale, y)
    except ValueError as exc:
        assert "Non-finite" in str(exc)
        assert state(est) == before
    else:
        # Not an empty model from overflowed scores.
        assert len(est.support_) == 5
        assert np.isfinite(est.dual_coef_).all()
    try:
        scores = est.decision_function(X * scale)
    except ValueError as exc:
        assert "Non-finite" in str(exc)
    else:
        assert np.isfinite(scores).all()


def nan_kernel(a, b):
    return np.nan


def test_a_callable_kernel_returning_nan_is_named():
    X, y = data(20)
    est = KernelMatchingPursuit(budget=5, kernel=nan_kernel)
    with pytest.raises(ValueError, match="kernel 'nan_kernel'.*NaN or infinite"):
        est.fit(X, y)
    with pytest.raises(NotFittedError):
        est.predict(X)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, MemoryError])
def test_an_interrupted_fit_keeps_the_previous_model(exc, monkeypatch):
    X, y = data()
    # Every row a candidate, computed afresh at every step past 1e-3 MiB.
    est = KernelMatchingPursuit(budget=5, gamma=0.5, n_candidates=40).fit(X[:20], y[:20])
    before = state(est)
    calls = []
    original = Kernel.__call__

    def interrupt(kernel, A, B):
        calls.append(1)
        if len(calls) > 3:
            raise exc("stop")
        return original(kernel, A, B)

    monkeypatch.setattr(Kernel, "__call__", interrupt)
    with config_context(working_memory=1e-3), pytest.raises(exc):
        est.fit(X, y)
    assert state(est) == before
    calls.clear()
    fresh = KernelMatchingPursuit(budget=5, gamma=0.5, n_candidates=40)
    with config_context(working_memory=1e-3), pytest.raises(exc):
        fresh.fit(X, y)
    assert state(fresh) == state(KernelMatchingPursuit(budget=5, gamma=0.5, n_candidates=40))


def test_string_labels_and_pickle():
    X, y = data(n_classes=3)
    labels = np.array(["ant", "bee", "cat"])[y]
    est = KernelMatchingPursuit(budget=8, gamma=0.5).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, ["ant", "bee", "cat"])
    assert est.decision_function(X).shape == (len(y), 3)
    assert set(est.predict(X)) <= set(est.classes_)
    ref = KernelMatchingPursuit(budget=8, gamma=0.5).fit(X, y)
    np.testing.assert_array_equal(est.support_, ref.support_)
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))


def test_dates_are_refused():
    X, y = data()
    with pytest.raises(TypeError, match="datetime64 or timedelta64"):
        KernelMatchingPursuit().fit((X * 1000).astype("int64").astype("datetime64[s]"), y)


def test_no_partial_fit():
    assert not hasattr(KernelMatchingPursuit(), "partial_fit")


# ----------------------------------------------------------------------
# scikit-learn API
# ----------------------------------------------------------------------
ESTIMATORS = [
    KernelMatchingPursuit(),
    KernelMatchingPursuit(method="basic"),
    KernelMatchingPursuit(n_candidates=10, random_state=0),
    KernelMatchingPursuit(kernel="chi2"),
]


def expected_failed_checks(estimator):
    failing = {}
    if estimator.method == "backfitting":
        failing["check_class_weight_classifiers"] = (
            "least squares with as many components as training rows interpolates "
            "every row whatever its weight (see "
            "test_class_weight_check_passes_when_the_model_cannot_interpolate)"
        )
    if estimator.kernel == "chi2":
        negative = (
            "the check's blobs have negative features, which the chi2 kernel refuses "
            "(the check ignores the positive_only tag)"
        )
        failing["check_class_weight_classifiers"] = negative
        failing["check_decision_proba_consistency"] = negative
    return failing


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_param_validation(estimator):
    check_param_validation(type(estimator).__name__, clone(estimator))


def test_constraints_list_exactly_the_constructor_parameters():
    est = KernelMatchingPursuit()
    assert set(est._parameter_constraints) == set(est.get_params())


# ----------------------------------------------------------------------
# sample_weight, class_weight, probabilities, verbose
# ----------------------------------------------------------------------
@pytest.mark.parametrize("method", ["backfitting", "basic"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_integer_weights_are_repeated_rows(method, n_classes):
    # gamma='scale' on the weighted variance, the greedy scores and the
    # least squares weighted, and one copy left out for the probabilities:
    # the same model as the repeated rows (rows of weight 0 are dropped).
    X, y = data(60, n_classes=n_classes, seed=3)
    w = np.random.RandomState(1).randint(0, 4, size=len(y))
    est = KernelMatchingPursuit(budget=12, method=method)
    a = clone(est).fit(X, y, sample_weight=w)
    b = clone(est).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert a.gamma_ == pytest.approx(b.gamma_, rel=1e-12)
    np.testing.assert_array_equal(a.support_vectors_, b.support_vectors_)
    assert np.all(w[a.support_] > 0)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-8)
    assert a.proba_scale_ == pytest.approx(b.proba_scale_, rel=1e-8)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-8)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_class_weight_is_the_same_as_the_sample_weight(n_classes):
    X, y = data(60, n_classes=n_classes, seed=4)
    class_weight = {0: 2.5, 1: 0.4}
    sw = np.random.RandomState(0).uniform(0.5, 2.0, size=len(y))
    per_row = np.array([class_weight.get(c, 1.0) for c in range(n_classes)])[y]
    a = KernelMatchingPursuit(budget=10, class_weight=class_weight).fit(X, y, sample_weight=sw)
    b = KernelMatchingPursuit(budget=10).fit(X, y, sample_weight=sw * per_row)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.proba_scale_ == b.proba_scale_
    counts = np.bincount(y)
    manual = {c: len(y) / (n_classes * counts[c]) for c in range(n_classes)}
    a = KernelMatchingPursuit(budget=10, class_weight="balanced").fit(X, y)
    b = KernelMatchingPursuit(budget=10, class_weight=manual).fit(X, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-10)
    with pytest.raises(ValueError, match="times the class weights .* are all zero"):
        KernelMatchingPursuit(class_weight={0: 0.0}).fit(X, y, sample_weight=(y == 0) * 1.0)
    with pytest.raises(ValueError, match=r"class_weight has keys \[7\]"):
        KernelMatchingPursuit(class_weight={7: 1.0}).fit(X, y)


def test_weighted_fit_is_the_weighted_least_squares_of_the_naive_loop():
    X, y = data(50, seed=5)
    w = np.random.RandomState(2).uniform(0.2, 3.0, size=len(y))
    est = KernelMatchingPursuit(budget=8, gamma=0.5).fit(X, y, sample_weight=w)
    # The naive loop on the rows and targets scaled by sqrt(w).
    s = np.sqrt(w)
    K = gram(X, X, "rbf", 0.5) * s[:, None]
    support, coef, _ = naive_kmp(K, targets(y) * s[:, None], 8, "backfitting")
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8)


def test_class_weight_check_passes_when_the_model_cannot_interpolate():
    # check_class_weight_classifiers with fewer components than rows: class
    # 0 (weight 1000 against 1e-4) takes at least 87% of the predictions.
    from sklearn.datasets import make_blobs
    from sklearn.model_selection import train_test_split

    for n_centers in (2, 3):
        X, y = make_blobs(centers=n_centers, random_state=0, cluster_std=20)
        X, Xt, y, yt = train_test_split(X, y, test_size=0.5, random_state=0)
        weights = {c: 1e-4 for c in range(n_centers)} | {0: 1000}
        est = KernelMatchingPursuit(budget=10, class_weight=weights).fit(X, y)
        assert np.mean(est.predict(Xt) == 0) > 0.87
        # The default's 100 components fit the light rows too (the xfail).
        full = KernelMatchingPursuit(class_weight=weights).fit(X, y)
        assert np.mean(full.predict(Xt) == 0) < 0.87


def fit_internals(X, y, w, n_components, method, gamma=0.5):
    """The residual, hat diagonal and chosen rows of the weighted fit."""
    from sklearn_budget._matching_pursuit import _KernelRows, _matching_pursuit

    s = np.sqrt(w)
    rows = _KernelRows(Kernel("rbf", gamma=gamma), X, np.arange(len(X)), s)
    support, alpha, n_iter, R, leverage, _ = _matching_pursuit(
        rows, targets(y) * s[:, None], n_components, method == "backfitting", None, 0.0, None
    )
    return support, R / s[:, None], leverage


def test_leave_one_out_scores_are_those_of_the_refit_without_the_row():
    # Backfitting: y_i - r_i / (1 - u h_ii / w_i) is the score of row i from
    # the weighted least squares on the same columns with a weight u = min(w_i, 1)
    # less on row i (the whole row when w_i < 1, one copy when w_i >= 1).
    X, y = data(40, seed=6)
    w = np.r_[np.full(20, 3.0), np.full(20, 0.5)]
    support, R, leverage = fit_internals(X, y, w, 10, "backfitting")
    Y = targets(y)[:, 0]
    K = gram(X, X[support], "rbf", 0.5)
    u = np.minimum(w, 1.0)
    loo = Y - R[:, 0] / (1.0 - u * leverage / w)
    for i in [0, 5, 19, 20, 33]:
        v = w.copy()
        v[i] -= u[i]
        s = np.sqrt(v)
        A = np.linalg.lstsq(K * s[:, None], Y * s, rcond=None)[0]
        assert loo[i] == pytest.approx(K[i] @ A, rel=1e-8, abs=1e-10)


def test_hat_diagonal_of_basic_is_that_of_the_product_of_projections():
    X, y = data(30, seed=7)
    w = np.ones(len(y))
    from sklearn_budget._matching_pursuit import _hat_diagonal

    Phi = gram(X[[3, 8, 3, 12, 8]], X, "rbf", 0.5)
    M = np.eye(len(y))
    for phi in Phi:
        q = phi / np.linalg.norm(phi)
        M = M - np.outer(q, q @ M)
    np.testing.assert_allclose(_hat_diagonal(Phi), np.diag(np.eye(len(y)) - M), atol=1e-12)
    # And the fitted values of basic are that smoother applied to the targets.
    support, R, leverage = fit_internals(X, y, w, 15, "basic")
    assert np.all(leverage >= -1e-12) and np.all(leverage <= 1 + 1e-12)


@pytest.mark.parametrize("method", ["backfitting", "basic"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_proba_agrees_with_predict(method, n_classes):
    X, y = data(120, n_classes=n_classes, seed=8)
    est = KernelMatchingPursuit(budget=15, method=method).fit(X, y)
    for A in (X, sp.csr_matrix(X)):
        proba = est.predict_proba(A)
        assert proba.shape == (len(y), n_classes) and np.isfinite(proba).all()
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(A))
        np.testing.assert_allclose(np.exp(est.predict_log_proba(A)), proba, rtol=1e-12)
    assert 0.1 < est.proba_scale_ < 100


def test_probabilities_of_an_interpolating_fit_are_nearly_uniform():
    # Every row chosen: no row has an out-of-sample score.
    X, y = data(20, seed=9)
    est = KernelMatchingPursuit(budget=50, gamma=5.0).fit(X, y)
    assert est.score(X, y) == 1.0
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba, 0.5, atol=1e-4)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(X))


def test_log_loss_is_near_that_of_calibrated_classifier_cv(data_home):
    # USPS 0-vs-rest, 1500 training rows: within 15% of sigmoid calibration
    # by 3-fold cross-validation around the same estimator.
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.metrics import log_loss

    from sklearn_budget.datasets import fetch_usps

    X, y = fetch_usps(data_home=data_home, download_if_missing=False, return_X_y=True)
    Xt, yt = fetch_usps(
        data_home=data_home, subset="test", download_if_missing=False, return_X_y=True
    )
    X, y = X[:1500], y[:1500]
    est = KernelMatchingPursuit(budget=50)
    ours = log_loss(yt, est.fit(X, y).predict_proba(Xt))
    cal = CalibratedClassifierCV(est, cv=3, ensemble=False).fit(X, y)
    theirs = log_loss(yt, cal.predict_proba(Xt))
    assert ours < 1.15 * theirs, (ours, theirs)


def test_sample_weight_is_routed_in_a_pipeline():
    from sklearn import config_context as config
    from sklearn.metrics import accuracy_score, make_scorer
    from sklearn.model_selection import cross_validate
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = data(90, seed=10)
    w = np.random.RandomState(3).randint(1, 3, size=len(y)).astype(float)
    with config(enable_metadata_routing=True):
        pipe = make_pipeline(
            StandardScaler().set_fit_request(sample_weight=False),
            KernelMatchingPursuit(budget=8)
            .set_fit_request(sample_weight=True)
            .set_score_request(sample_weight=True),
        )
        routed = pipe.fit(X, y, sample_weight=w)[-1]
        # An explicit weighted scorer: scikit-learn 1.6 does not route the
        # weights of the default scorer through the pipeline's score.
        scorer = make_scorer(accuracy_score).set_score_request(sample_weight=True)
        scores = cross_validate(pipe, X, y, cv=3, scoring=scorer, params={"sample_weight": w})
    direct = KernelMatchingPursuit(budget=8).fit(
        StandardScaler().fit_transform(X), y, sample_weight=w
    )
    np.testing.assert_array_equal(routed.dual_coef_, direct.dual_coef_)
    unweighted = KernelMatchingPursuit(budget=8).fit(StandardScaler().fit_transform(X), y)
    assert not np.array_equal(routed.dual_coef_, unweighted.dual_coef_)
    assert len(scores["test_score"]) == 3


def test_verbose_reports_the_steps(capsys):
    X, y = data(80, seed=11)
    quiet = KernelMatchingPursuit(budget=25).fit(X, y)
    assert capsys.readouterr().out == ""
    loud = KernelMatchingPursuit(budget=25, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    np.testing.assert_array_equal(loud.dual_coef_, quiet.dual_coef_)
    lines = [line for line in out.splitlines() if line.startswith("step:")]
    assert [int(line.split(",")[0].split()[1]) for line in lines] == [10, 20, 25]
    losses = [float(line.split("training loss: ")[1].split(",")[0]) for line in lines]
    assert losses == sorted(losses, reverse=True)
    assert "Stopped after 25 steps (reached the budget)" in out
    KernelMatchingPursuit(budget=5, verbose=2).fit(X, y)
    out = capsys.readouterr().out
    assert [line.split(",")[0] for line in out.splitlines()[:5]] == [
        f"step: {k}" for k in range(1, 6)
    ]
    # Stopping early says why.
    KernelMatchingPursuit(budget=100, gamma=5.0, verbose=1).fit(X[:10], y[:10])
    assert "Stopped after 10 steps (no candidate" in capsys.readouterr().out
