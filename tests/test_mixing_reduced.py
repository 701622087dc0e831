"""The reduced set of parameter mixing's compression (sklearn_budget._mixing).

Against a reference written out member by member (Lloyd steps by explicit
distances and means, the coefficients by ``numpy.linalg.lstsq`` on the
augmented ridge system, another route than the compression's normal
equations), and its guards: never more than the budget, never a worse fit
at the rows than the subset, finite where the kernel is degenerate, and the
subset alone (bit for bit) where it does not apply.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _instances import instances
from sklearn.metrics.pairwise import rbf_kernel
from test_averaging import reference_compress

from sklearn_budget import Forgetron, _mixing
from sklearn_budget._averaging import compress as averaging_compress
from sklearn_budget.parallel import ParameterMixingClassifier

GAMMA = 0.5


def reference_reduced_set(X, A, keys, sub, gamma, steps=10):
    """The reduced set by the definition, or the subset if it fits worse.

    ``X`` (m, d) and ``A`` (m, n_rows): the expansion's members and
    coefficients; ``keys`` theirs; ``sub``: the subset ``(keys, coef)``
    (coef of shape (n_sub, n_rows)). Weighted k-means of the members (weight
    ``||a_j|| / max ||a||``) from the subset's rows, at most ``steps`` Lloyd
    steps (stopping when no member changes its centre); the ridge fit of the
    expansion's values at its rows,
    ``argmin ||K(X, Z) c - K a||^2 + 1e-8 m ||c||^2``; kept if its residual
    is below the subset's. Returns ``(rows, keys, coef)``.
    """
    m = X.shape[0]
    w = np.sqrt((A**2).sum(axis=1))
    w = w / w.max()
    position = {k: j for j, k in enumerate(keys.tolist())}
    Z = np.array([X[position[k]] for k in sub[0]], dtype=float)
    zkeys = np.array(sub[0])
    labels = None
    for _ in range(steps):
        new = np.array([int(np.argmin([((x - z) ** 2).sum() for z in Z])) for x in X])
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        for b in range(Z.shape[0]):
            members = [j for j in range(m) if labels[j] == b and w[j] > 0]
            if not members:
                continue
            Z[b] = sum(w[j] * X[j] for j in members) / sum(w[j] for j in members)
            zkeys[b] = keys[members[0]] if len(members) == 1 else -1
    F = rbf_kernel(X, X, gamma=gamma) @ A
    system = np.vstack([rbf_kernel(X, Z, gamma=gamma), np.sqrt(1e-8 * m) * np.eye(Z.shape[0])])
    coef = np.linalg.lstsq(system, np.vstack([F, np.zeros((Z.shape[0], A.shape[1]))]), rcond=None)[
        0
    ]
    sub_rows = np.array([X[position[k]] for k in sub[0]])
    residual = np.linalg.norm(rbf_kernel(X, Z, gamma=gamma) @ coef - F)
    sub_residual = np.linalg.norm(rbf_kernel(X, sub_rows, gamma=gamma) @ sub[1] - F)
    if residual < sub_residual:
        return Z, zkeys, coef
    return sub_rows, np.array(sub[0]), sub[1]


def blobs(n_blobs, per_blob, n_classes, seed=0, spread=0.15):
    """Members in tight groups, each group's coefficients of one sign: a
    function that a few new points (the groups' centres) fit better than a
    few of its members."""
    rng = np.random.RandomState(seed)
    R = 1 if n_classes == 2 else n_classes
    centres = rng.randn(n_blobs, 3) * 3.0
    rows = np.repeat(centres, per_blob, axis=0) + spread * rng.randn(n_blobs * per_blob, 3)
    signs = rng.choice([-1.0, 1.0], size=(R, n_blobs))
    coef = np.repeat(signs, per_blob, axis=1) * rng.uniform(0.5, 1.5, (R, n_blobs * per_blob))
    return rows, coef


def rbf_compress(rows, coef, keys, budget, gamma=GAMMA):
    kernel, code = _mixing.make_kernel(Forgetron(budget=budget, gamma=gamma))
    return _mixing.compress(kernel, code, rows, coef, keys, budget)


def residual(rows, coef, out_rows, out_coef, gamma=GAMMA):
    """The compressed function's distance to the expansion's at its rows."""
    F = rbf_kernel(rows, rows, gamma=gamma) @ coef.T
    return np.linalg.norm(rbf_kernel(rows, out_rows, gamma=gamma) @ out_coef.T - F)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_reduced_set_is_the_reference(n_classes):
    rows, coef = blobs(6, 8, n_classes)
    m, budget = rows.shape[0], 6
    keys = np.arange(m) + 100
    out_rows, out_coef, out_keys = rbf_compress(rows, coef, keys, budget)
    sub = reference_compress(
        [(keys[j], rows[j : j + 1], coef[:, j]) for j in range(m)], budget, "rbf", gamma=GAMMA
    )
    ref_rows, ref_keys, ref_coef = reference_reduced_set(
        rows, coef.T, keys, (sub[0], sub[1].T), GAMMA
    )
    # The new points are taken here (the reference's choice), as -1.
    assert np.all(ref_keys == -1)
    np.testing.assert_array_equal(out_keys, ref_keys)
    np.testing.assert_allclose(out_rows, ref_rows, rtol=1e-12, atol=1e-14)
    # The two solutions of the ridge problem (normal equations by Cholesky,
    # lstsq on the augmented system): their difference is bounded by the
    # condition number of the normal matrix times the rounding of its terms.
    A = rbf_kernel(rows, ref_rows, gamma=GAMMA)
    cond = np.linalg.cond(A.T @ A + 1e-8 * m * np.eye(budget))
    assert cond < 1e6
    err = np.linalg.norm(out_coef.T - ref_coef) / np.linalg.norm(ref_coef)
    assert err <= 1e-13 * cond
    # And the fit at the rows is much better than the subset's.
    sub_rows = rows[sub[0] - 100]
    assert residual(rows, coef, out_rows, out_coef) < 0.5 * residual(rows, coef, sub_rows, sub[1])


def test_the_subset_is_kept_where_the_new_points_fit_worse():
    # Members far apart for the kernel's width (97% of the pairs with
    # k(x, x') < 1e-5, none above 0.34): a centre
    # that moves to a mean of several is far from each of them, and fits
    # the function worse at the rows. The subset of the bounded average is
    # kept (the reference's choice too), then independent leaves it as is.
    rng = np.random.RandomState(3)
    rows, coef = rng.randn(45, 3) * 3.0, rng.randn(3, 45)
    keys = np.arange(45) + 100
    gamma = 2.0
    out_rows, out_coef, out_keys = rbf_compress(rows, coef, keys, 8, gamma)
    functions = [(keys[j], rows[j : j + 1], coef[:, j]) for j in range(45)]
    sub = reference_compress(functions, 8, "rbf", gamma=gamma)
    _, ref_keys, _ = reference_reduced_set(rows, coef.T, keys, (sub[0], sub[1].T), gamma)
    np.testing.assert_array_equal(ref_keys, sub[0])
    np.testing.assert_array_equal(out_keys, sub[0])
    np.testing.assert_array_equal(out_rows, rows[sub[0] - 100])
    np.testing.assert_allclose(out_coef, sub[1], rtol=1e-7, atol=1e-10)


def test_deterministic_and_within_the_budget():
    rows, coef = blobs(10, 12, 3, seed=5, spread=0.5)
    keys = np.arange(rows.shape[0])
    first = rbf_compress(rows, coef, keys, 7)
    second = rbf_compress(rows.copy(), coef.copy(), keys.copy(), 7)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    for budget in (1, 2, 7, 30, 119):
        out_rows, out_coef, out_keys = rbf_compress(rows, coef, keys, budget)
        assert out_rows.shape[0] == out_coef.shape[1] == out_keys.size <= budget


def test_the_callers_arrays_are_left_as_they_were():
    rows, coef = blobs(5, 6, 2)
    keys = np.arange(30)
    saved = rows.copy(), coef.copy(), keys.copy()
    rbf_compress(rows, coef, keys, 5)
    for a, b in zip((rows, coef, keys), saved):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "case", ["duplicates", "one point", "gamma 1e-9", "gamma 1e9", "coef 1e150", "coef 1e-300"]
)
def test_finite_and_never_a_worse_fit_than_the_subset(case):
    rows, coef = blobs(6, 8, 3, seed=2)
    gamma = GAMMA
    if case == "duplicates":
        rows[10:30] = rows[10]
    elif case == "one point":
        rows[:] = rows[0]
    elif case.startswith("gamma"):
        gamma = float(case.split()[1])
    else:
        coef = coef * float(case.split()[1])
    keys = np.arange(rows.shape[0])
    out_rows, out_coef, out_keys = rbf_compress(rows, coef, keys, 6, gamma)
    assert out_rows.shape[0] <= 6 and np.isfinite(out_rows).all() and np.isfinite(out_coef).all()
    # The reduced set itself, before the members in the span of others are
    # dropped: its fit at the rows is never worse than the subset's.
    kernel, code = _mixing.make_kernel(Forgetron(budget=6, gamma=gamma))
    sub = averaging_compress(rows, np.ascontiguousarray(coef.T), keys, kernel, code, 6)
    red_rows, red_coef, _ = _mixing._reduced_set(kernel, code, rows, coef, keys, *sub)
    assert red_rows.shape[0] <= 6 and np.isfinite(red_coef).all()
    assert residual(rows, coef, red_rows, red_coef.T, gamma) <= residual(
        rows, coef, sub[0], sub[1].T, gamma
    )
    if case in ("duplicates", "coef 1e150"):
        # Here the centres fit better and are taken (elsewhere the subset is
        # returned as it is, and the comparison above is of equals).
        assert red_rows is not sub[0]
        assert residual(rows, coef, red_rows, red_coef.T, gamma) < residual(
            rows, coef, sub[0], sub[1].T, gamma
        )


def test_rows_near_the_largest_floats_warn_of_nothing():
    # ||z||^2 - 2 x.z of the assignments overflows: no RuntimeWarning, a
    # finite model within the budget.
    rows, coef = blobs(6, 8, 3, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out_rows, out_coef, _ = rbf_compress(rows * 1e154, coef, np.arange(rows.shape[0]), 6)
    assert out_rows.shape[0] <= 6 and np.isfinite(out_rows).all() and np.isfinite(out_coef).all()


@pytest.mark.parametrize(
    "kernel, budget",
    [("laplacian", 6), ("poly", 6), ("sigmoid", 6), ("rbf", 129), (lambda a, b: a @ b + 1.0, 6)],
    ids=["laplacian", "poly", "sigmoid", "rbf-above-128", "callable"],
)
def test_the_subset_alone_where_the_reduced_set_does_not_apply(kernel, budget):
    # Today's compression bit for bit: the bounded average's, then independent.
    rows, coef = blobs(9, 20, 3, seed=4)
    rows = rows / 3.0
    keys = np.arange(rows.shape[0])
    est = Forgetron(budget=budget, kernel=kernel, gamma=0.1, degree=2)
    k, code = _mixing.make_kernel(est)
    out = _mixing.compress(k, code, rows, coef, keys, budget)
    sub = averaging_compress(rows, np.ascontiguousarray(coef.T), keys, k, code, budget)
    expected = _mixing.independent(k, code, sub[0], np.ascontiguousarray(sub[1].T), sub[2])
    for a, b in zip(out, expected):
        np.testing.assert_array_equal(a, b)


def test_sparse_rows_give_the_dense_reduced_set():
    rows, coef = blobs(6, 8, 3)
    rows[:, 1] = 0.0  # a column of zeros: the centres' nonzeros are their members'
    keys = np.arange(rows.shape[0])
    dense = rbf_compress(rows, coef, keys, 6)
    sparse = rbf_compress(sp.csr_matrix(rows), coef, keys, 6)
    assert sp.issparse(sparse[0]) and np.all(dense[2] == -1)
    np.testing.assert_array_equal(sparse[2], dense[2])
    np.testing.assert_allclose(sparse[0].toarray(), dense[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sparse[1], dense[1], rtol=1e-9, atol=1e-12)


def test_a_lone_member_keeps_its_row_and_key():
    # Two groups and one member far from both: with 3 centres, the far one
    # is a centre of one member, its own row bit for bit.
    rows, coef = blobs(2, 10, 2, seed=6)
    rows = np.vstack([rows, [[40.0, 40.0, 40.0]]])
    coef = np.hstack([coef, [[2.0]]])
    keys = np.arange(21) + 7
    kernel, code = _mixing.make_kernel(Forgetron(budget=3, gamma=GAMMA))
    sub = averaging_compress(rows, np.ascontiguousarray(coef.T), keys, kernel, code, 3)
    assert 27 in sub[2]
    centres, centre_keys = _mixing._lloyd(rows, keys, np.ones(21), sub[0], sub[2])
    lone = np.flatnonzero(centre_keys == 27)
    assert lone.size == 1
    np.testing.assert_array_equal(centres[lone[0]], rows[20])
    assert np.sum(centre_keys == -1) == 2


@pytest.mark.parametrize(
    "est", instances("mixing", "mixable", budget=12, gamma=GAMMA, random_state=0), ids=repr
)
def test_mixes_of_new_points_load_and_go_on(est):
    # The new points (key -1) are loaded by every rule that mixing trains,
    # the ones that keep a factor of their members' Gram matrix included,
    # mix after mix; the fitted model goes on with partial_fit.
    rng = np.random.RandomState(0)
    y = rng.randint(3, size=900)
    X = rng.randn(3, 4)[y] * 2.0 + rng.randn(900, 4)
    clf = ParameterMixingClassifier(est, n_shards=6, n_mixes=3, random_state=0).fit(X, y)
    fitted = clf.estimator_
    assert np.any(fitted.support_ == -1)
    assert fitted.support_vectors_.shape[0] <= 12
    assert clf.score(X, y) > 0.8
    fitted.partial_fit(X[:50], y[:50])
    assert np.isfinite(fitted.decision_function(X)).all()
