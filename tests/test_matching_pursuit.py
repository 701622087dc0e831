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
    est = KernelMatchingPursuit(12, method=method, kernel=kernel, gamma=gamma, coef0=1.0)
    est.fit(X, y)
    K = gram(X, X, kernel, gamma)
    support, coef, steps = naive_kmp(K, targets(y), 12, method)

    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)
    assert est.n_iter_ == steps == 12
    assert est.n_components_ == len(support)
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
    est = KernelMatchingPursuit(40, method="basic", gamma=0.5).fit(X, y)
    support, coef, steps = naive_kmp(
        pairwise_kernels(X, metric="rbf", gamma=0.5), targets(y), 40, "basic"
    )
    assert est.n_iter_ == steps == 40
    assert est.n_components_ == len(support) <= 10
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_tol_stops_like_the_reference(method):
    X, y = data()
    est = KernelMatchingPursuit(30, method=method, gamma=0.5, tol=0.01).fit(X, y)
    K = pairwise_kernels(X, metric="rbf", gamma=0.5)
    support, coef, steps = naive_kmp(K, targets(y), 30, method, tol=0.01)
    assert 0 < est.n_iter_ == steps < 30
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_a_shorter_fit_is_a_prefix_of_a_longer_one(method):
    X, y = data(n_classes=3)
    short = KernelMatchingPursuit(5, method=method, gamma=0.5).fit(X, y)
    long = KernelMatchingPursuit(15, method=method, gamma=0.5).fit(X, y)
    np.testing.assert_array_equal(long.support_[: short.n_components_], short.support_)
    # The training squared loss never increases with more steps.
    Y = targets(y)
    losses = [
        np.sum((Y - est.decision_function(X)) ** 2)
        for est in (
            KernelMatchingPursuit(k, method=method, gamma=0.5).fit(X, y) for k in (1, 5, 15)
        )
    ]
    assert losses[0] > losses[1] > losses[2]


def test_backfitting_interpolates_once_every_row_is_chosen():
    # Well separated rows: the Gram matrix is well conditioned, so the
    # least-squares fit on all of them reproduces the targets.
    X, y = data(n=15)
    est = KernelMatchingPursuit(100, gamma=2.0).fit(X, y)
    assert est.n_components_ == est.n_iter_ == 15
    np.testing.assert_allclose(est.decision_function(X), targets(y)[:, 0], atol=1e-6)


# ----------------------------------------------------------------------
# Memory: the blocked path and the candidate subsets
# ----------------------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_blocked_kernel_rows_give_the_same_model(method, n_classes):
    X, y = data(n_classes=n_classes)
    ref = KernelMatchingPursuit(12, method=method, gamma=0.5).fit(X, y)
    # 1e-3 MiB holds 3 kernel rows of 40 values, not the 40 x 40 matrix.
    calls = []
    original = Kernel.__call__

    def spy(kernel, A, B):
        calls.append(A.shape[0])
        return original(kernel, A, B)

    with config_context(working_memory=1e-3), pytest.MonkeyPatch.context() as mp:
        mp.setattr(Kernel, "__call__", spy)
        est = KernelMatchingPursuit(12, method=method, gamma=0.5).fit(X, y)
    assert max(calls) <= 3
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
    # The full Gram matrix is computed once when it fits.
    calls.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Kernel, "__call__", spy)
        KernelMatchingPursuit(12, method=method, gamma=0.5).fit(X, y)
    assert calls == [40]


@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_candidate_subsets_match_the_reference_with_the_same_draws(method):
    X, y = data(n_classes=3)
    est = KernelMatchingPursuit(10, method=method, gamma=0.5, n_candidates=7, random_state=3)
    est.fit(X, y)
    rng = np.random.RandomState(3)

    def candidates(step, selectable):
        return sorted(rng.choice(selectable, size=7, replace=False))

    K = pairwise_kernels(X, metric="rbf", gamma=0.5)
    support, coef, _ = naive_kmp(K, targets(y), 10, method, candidates=candidates)
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)


def test_candidate_subsets_are_reproducible_by_random_state():
    X, y = data(n=80)
    fits = [
        KernelMatchingPursuit(10, gamma=0.5, n_candidates=5, random_state=s).fit(X, y)
        for s in (0, 0, 1)
    ]
    np.testing.assert_array_equal(fits[0].support_, fits[1].support_)
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
    assert not np.array_equal(fits[0].support_, fits[2].support_)
    # As many candidates as rows: the full search.
    full = KernelMatchingPursuit(10, gamma=0.5).fit(X, y)
    every = KernelMatchingPursuit(10, gamma=0.5, n_candidates=80, random_state=0).fit(X, y)
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
        est = KernelMatchingPursuit(100, gamma=2.0).fit(Xd, yd)
    # Each distinct point at most once, every one of them in the end.
    assert est.n_components_ == 15
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
        est = KernelMatchingPursuit(60, method=method, gamma=1.0).fit(Xd, yd)
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
    est = KernelMatchingPursuit(30, kernel=kernel, gamma=0.5).fit(X, y)
    assert est.n_components_ == est.n_iter_ == rank
    assert 0 not in est.support_
    K = gram(X, X, kernel, 0.5, coef0=0.0)
    support, coef, _ = naive_kmp(K, targets(y), rank, "backfitting")
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef.T, rtol=1e-8, atol=1e-10)
    basic = KernelMatchingPursuit(30, method="basic", kernel=kernel, gamma=0.5).fit(X, y)
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
    est = KernelMatchingPursuit(200, method=method, gamma=gamma).fit(X, y)
    assert np.isfinite(est.dual_coef_).all()
    assert np.isfinite(est.decision_function(X)).all()
    assert len(np.unique(est.support_)) == est.n_components_


def test_sparse_input_gives_the_dense_model():
    X, y = data(n_classes=3)
    X[np.abs(X) < 0.5] = 0.0
    dense = KernelMatchingPursuit(10, gamma=0.5).fit(X, y)
    est = KernelMatchingPursuit(10, gamma=0.5).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(est.support_, dense.support_)
    np.testing.assert_allclose(est.dual_coef_, dense.dual_coef_, rtol=1e-8, atol=1e-10)
    assert sp.issparse(est.support_vectors_)
    np.testing.assert_allclose(est.decision_function(X), dense.decision_function(X), atol=1e-10)


def test_gamma_scale_is_that_of_svc():
    X, y = data()
    est = KernelMatchingPursuit(5).fit(X, y)
    assert est.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()))
    ref = KernelMatchingPursuit(5, gamma=1.0 / (X.shape[1] * X.var())).fit(X, y)
    np.testing.assert_array_equal(est.support_, ref.support_)


# ----------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------
def test_bad_input_gets_sklearn_errors_and_leaves_the_model():
    X, y = data()
    est = KernelMatchingPursuit(5, gamma=0.5).fit(X, y)
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
            est = KernelMatchingPursuit(5, gamma=0.5, n_candidates=n_candidates, random_state=0)
            est.fit(Xf, y).predict(Xf)
            assert snapshot(Xf) == before
            np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("scale", [1e80, 1e150, 1e300])
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("method", ["basic", "backfitting"])
def test_huge_features_give_a_finite_model_or_a_clear_error(method, kernel, scale):
    X, y = data()
    est = KernelMatchingPursuit(5, method=method, kernel=kernel, gamma=0.5).fit(X, y)
    before = state(est)
    try:
        est.fit(X * scale, y)
    except ValueError as exc:
        assert "Non-finite" in str(exc)
        assert state(est) == before
    else:
        # Not an empty model from overflowed scores.
        assert est.n_components_ == 5
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
    est = KernelMatchingPursuit(5, kernel=nan_kernel)
    with pytest.raises(ValueError, match="kernel 'nan_kernel'.*NaN or infinite"):
        est.fit(X, y)
    with pytest.raises(NotFittedError):
        est.predict(X)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, MemoryError])
def test_an_interrupted_fit_keeps_the_previous_model(exc, monkeypatch):
    X, y = data()
    est = KernelMatchingPursuit(5, gamma=0.5).fit(X[:20], y[:20])
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
    fresh = KernelMatchingPursuit(5, gamma=0.5)
    with config_context(working_memory=1e-3), pytest.raises(exc):
        fresh.fit(X, y)
    assert state(fresh) == state(KernelMatchingPursuit(5, gamma=0.5))


def test_string_labels_and_pickle():
    X, y = data(n_classes=3)
    labels = np.array(["ant", "bee", "cat"])[y]
    est = KernelMatchingPursuit(8, gamma=0.5).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, ["ant", "bee", "cat"])
    assert est.decision_function(X).shape == (len(y), 3)
    assert set(est.predict(X)) <= set(est.classes_)
    ref = KernelMatchingPursuit(8, gamma=0.5).fit(X, y)
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


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_param_validation(estimator):
    check_param_validation(type(estimator).__name__, clone(estimator))


def test_constraints_list_exactly_the_constructor_parameters():
    est = KernelMatchingPursuit()
    assert set(est._parameter_constraints) == set(est.get_params())
