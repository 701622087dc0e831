"""Iterative parameter mixing (sklearn_budget.parallel) and the loading of a
hypothesis into an estimator that it rests on.

Loading is checked against the per-sample references (a reference seeded
with the loaded members must play the rounds that follow as the estimator
does); mixing against the weighted sum of the shards' expansions; the
compression against the plain pool of tests/test_averaging.py; a whole mix
against shards trained by plain ``partial_fit`` calls. The tests of the
last section run a real local dask cluster of two worker processes: skipped
without dask and distributed, unless SKLEARN_BUDGET_REQUIRE_DASK=1.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _budget_references import Member, RefBudget, RefForgetron, RefRBP
from _instances import all_estimators, has, instances, names
from conftest import import_or_skip
from joblib import parallel_backend
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks
from test_averaging import reference_compress
from test_kernels import AllWorkersBackend  # noqa: F401 (registers the backend)
from test_mixing_reduced import reference_reduced_set

from sklearn_budget import (
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    KernelPerceptron,
    Projectron,
    ProjectronPlusPlus,
    RandomizedBudgetPerceptron,
    TighterBudgetPerceptron,
    _mixing,
)
from sklearn_budget._calibration import fit_scale
from sklearn_budget._stream import _shuffle_rng
from sklearn_budget.parallel import ParameterMixingClassifier

GAMMA = 0.5
_REQUIRE = "SKLEARN_BUDGET_REQUIRE_DASK"


def stream(n, n_classes, seed=0, d=3):
    rng = np.random.RandomState(seed)
    centers = rng.randn(n_classes, d)
    y = rng.randint(n_classes, size=n)
    return centers[y] + rng.randn(n, d), y


def expansion(m, n_classes, seed=1, d=3):
    """Random members (independent in the rbf feature space) and coefficients."""
    rng = np.random.RandomState(seed)
    R = 1 if n_classes == 2 else n_classes
    return rng.randn(m, d) * 1.5, rng.randn(R, m)


def scores(X, sv, coef):
    out = rbf_kernel(X, sv, gamma=GAMMA) @ coef.T
    return out[:, 0] if out.shape[1] == 1 else out


# Every estimator that parameter mixing trains, with a budget of 10
# (tests/_instances.py).
LOADABLE = instances("mixing", "mixable", budget=10, gamma=GAMMA)


# ----------------------------------------------------------------------
# Loading a hypothesis
# ----------------------------------------------------------------------
@pytest.mark.parametrize("est", LOADABLE, ids=repr)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_loaded_model_scores_the_expansion(est, n_classes):
    X, y = stream(200, n_classes)
    sv, coef = expansion(8, n_classes)
    est = clone(est)._load_expansion(X, np.unique(y), sv, coef, rounds=40)
    np.testing.assert_allclose(est.decision_function(X), scores(X, sv, coef), atol=1e-12)
    assert est.n_features_in_ == 3 and len(est.support_) == 8
    # The stream goes on from it, within the budget.
    est.partial_fit(X, y)
    assert len(est.support_) <= 10 and est.n_mistakes_ > 0


def seeded(ref, sv, coef, first_index):
    """The reference with the loaded members, oldest first (labels as documented)."""
    for j in range(sv.shape[0]):
        c = coef[:, j].copy()
        label = (1 if c[0] > 0 else -1) if ref.C == 1 else int(np.argmax(c))
        member = Member(first_index + j, sv[j : j + 1], label, c, 1.0)
        # Forgetron: weight sigma = ||c|| / ||v||, with ||v||^2 = 1 or 2.
        member.sigma = np.linalg.norm(c) / (1.0 if ref.C == 1 else np.sqrt(2.0))
        member.unit = c / member.sigma
        ref.members.append(member)
    return ref


@pytest.mark.parametrize(
    "case",
    ["forgetron", "forgetron-0.9", "rbp", "budget", "tighter-support"],
)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_stream_goes_on_from_a_loaded_model_as_the_reference(case, n_classes):
    X, y = stream(300, n_classes, seed=n_classes)
    classes = np.unique(y)
    sv, coef = expansion(6, n_classes, seed=5)
    budget, kw = 8, dict(kernel_params=dict(gamma=GAMMA), random_state=3)
    common = dict(gamma=GAMMA, average=False, random_state=3)
    if case.startswith("forgetron"):
        shrink = "self-tuned" if case == "forgetron" else 0.9
        est = Forgetron(budget=budget, shrink=shrink, **common)
        ref = RefForgetron(classes, budget, shrink=shrink, **kw)
        ref.Q, ref.M = 2.5, 11  # the Forgetron's history, carried by the mix
        rule_state = {"forgetron": np.array([2.5, 11.0])}
    elif case == "rbp":
        est, ref, rule_state = (
            RandomizedBudgetPerceptron(budget=budget, **common),
            RefRBP(classes, budget, **kw),
            None,
        )
    else:
        removal = "margin" if case == "budget" else "support"
        est = (
            BudgetPerceptron(budget=budget, **common)
            if case == "budget"
            else TighterBudgetPerceptron(budget=budget, error_set="support", **common)
        )
        ref, rule_state = RefBudget(classes, budget, removal=removal, **kw), None
    est._load_expansion(
        X, classes, sv, coef, index=1000 + np.arange(6), rounds=0, rule_state=rule_state
    )
    seeded(ref, sv, coef, 1000)
    est.partial_fit(X, y)
    ref.partial_fit(X, y)
    mistakes, support, ref_coef = ref.result()
    assert ref.removed >= 10
    assert est.n_mistakes_ == mistakes
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, ref_coef, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("cls", [ProjectronPlusPlus, BudgetedSGDClassifier])
def test_loaded_factor_is_that_of_the_gram_matrix_along_the_stream(cls):
    X, y = stream(300, 2)
    sv, coef = expansion(6, 2)
    kw = {"maintenance": "projection"} if cls is BudgetedSGDClassifier else {}
    est = cls(budget=8, gamma=GAMMA, average=False, **kw)
    est._load_expansion(X, [0, 1], sv, coef, rounds=50)
    for part in np.array_split(np.arange(300), 3):
        est.partial_fit(X[part], y[part])
        n = est._n
        K = rbf_kernel(est._sv, gamma=GAMMA)
        if cls is ProjectronPlusPlus:
            L = np.zeros((n, n))
            L[np.tril_indices(n)] = est._state["chol"][: n * (n + 1) // 2]
        else:
            order = est._state["order"][:n]
            L = est._state["chol"][:n, :n]
            K = K[np.ix_(order, order)]
        np.testing.assert_allclose(L @ L.T, K, atol=1e-8)


def test_loaded_bsgd_goes_on_with_the_pegasos_schedule():
    X, y = stream(1, 2)
    sv, coef = expansion(5, 2)
    est = BudgetedSGDClassifier(budget=8, alpha=0.01, gamma=GAMMA, average=False)
    est._load_expansion(X, [0, 1], sv, coef, rounds=99)
    f = scores(X, sv, coef)
    est.partial_fit(X, y)
    # Round 100 shrinks the iterate by 1 - 1/100 and steps by 1 / (alpha 100).
    expected = 0.99 * scores(X, sv, coef)
    margin = (2 * y[0] - 1) * f[0] * 0.99
    if margin < 1:
        expected = expected + (2 * y[0] - 1) / (0.01 * 100) * 1.0
    np.testing.assert_allclose(est.decision_function(X), expected, rtol=1e-12)


def test_loading_refuses_what_the_rule_cannot_hold():
    X, y = stream(50, 2)
    sv, coef = expansion(12, 2)
    est = Forgetron(budget=10, gamma=GAMMA)
    with pytest.raises(ValueError, match="do not fit in budget=10"):
        est._load_expansion(X, [0, 1], sv, coef)
    assert not hasattr(est, "classes_")
    with pytest.raises(ValueError, match="rounds >= 1"):
        BudgetedSGDClassifier(budget=20, gamma=GAMMA)._load_expansion(X, [0, 1], sv, coef)
    twice = np.vstack([sv[:3], sv[:1]])
    with pytest.raises(ValueError, match="span of the members"):
        Projectron(budget=10, gamma=GAMMA)._load_expansion(X, [0, 1], twice, coef[:, :4])


# ----------------------------------------------------------------------
# Mixing and compression against plain references
# ----------------------------------------------------------------------
def fake_results(n_classes, seed=0):
    """Shard results sharing some keys (the same rows) and with points of key -1."""
    rng = np.random.RandomState(seed)
    R = 1 if n_classes == 2 else n_classes
    pool = rng.randn(30, 3) * 1.5
    results = []
    for s in range(3):
        keys = np.concatenate([rng.choice(30, 6, replace=False), [-1, -1]])
        rows = np.vstack([pool[keys[:6]], rng.randn(2, 3)])
        results.append(
            {
                "sv": rows,
                "coef": rng.randn(R, 8),
                "keys": keys,
                "rounds": 100 + 10 * s,
                "updates": [5, 0, 15][s],
                "rule_state": {"forgetron": np.array([1.0 + s, 10.0 * s])},
            }
        )
    return results


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("mixing", ["uniform", "updates"])
def test_mix_is_the_weighted_sum_of_the_shards_functions(n_classes, mixing):
    results = fake_results(n_classes)
    mu = _mixing.mix_weights(results, mixing)
    expected_mu = [1 / 3] * 3 if mixing == "uniform" else [0.25, 0.0, 0.75]
    np.testing.assert_allclose(mu, expected_mu)
    rows, coef, keys, rounds, rule_state = _mixing.mix(results, mu)
    Xt = np.random.RandomState(9).randn(40, 3)
    expected = sum(m * scores(Xt, r["sv"], r["coef"]) for m, r in zip(mu, results))
    np.testing.assert_allclose(scores(Xt, rows, coef), expected, atol=1e-12)
    # One member per row of the training set, the new points kept apart.
    named = keys[keys >= 0]
    assert len(set(named.tolist())) == named.size and (keys == -1).sum() == 6
    assert rounds == round(sum(m * r["rounds"] for m, r in zip(mu, results)))
    np.testing.assert_allclose(
        rule_state["forgetron"], sum(m * r["rule_state"]["forgetron"] for m, r in zip(mu, results))
    )


@pytest.mark.parametrize("n_classes", [2, 3])
def test_compression_is_the_reference_pool(n_classes):
    rng = np.random.RandomState(n_classes)
    R = 1 if n_classes == 2 else n_classes
    m, budget = 45, 8
    # Members far apart for the kernel's width, where the reduced set's
    # centres fit worse than the subset (test_mixing_reduced.py): the
    # compression of the bounded average is kept as it is.
    rows, coef = rng.randn(m, 3) * 3.0, rng.randn(R, m)
    rows[7] = rows[3]  # a duplicate: never kept twice
    keys = np.arange(m) + 100
    est = Forgetron(budget=budget, gamma=GAMMA)
    kernel, code = _mixing.make_kernel(est)
    out_rows, out_coef, out_keys = _mixing.compress(kernel, code, rows, coef, keys, budget)
    functions = [(keys[j], rows[j : j + 1], coef[:, j]) for j in range(m)]
    support, ref_coef = reference_compress(functions, budget, "rbf", gamma=GAMMA)
    order = np.argsort(out_keys)
    np.testing.assert_array_equal(out_keys[order], support)
    np.testing.assert_allclose(out_coef[:, order], ref_coef, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(out_rows[order], rows[support - 100])


@pytest.mark.parametrize(
    "est",
    [
        RandomizedBudgetPerceptron(budget=8, gamma=GAMMA, average=False, random_state=0),
        Forgetron(budget=8, gamma=GAMMA, average=True),
    ],
    ids=repr,
)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("mixing", ["uniform", "updates"])
def test_one_mix_is_plain_shards_mixed_and_compressed(est, n_classes, mixing):
    X, y = stream(240, n_classes, seed=7)
    classes = np.unique(y)
    n_shards, seed = 3, 11
    clf = ParameterMixingClassifier(
        est, n_shards=n_shards, n_mixes=1, mixing=mixing, random_state=seed
    ).fit(X, y)
    # The reference: each shard a new stream of plain partial_fit calls.
    seeds = np.random.RandomState(seed).randint(np.iinfo(np.int32).max, size=n_shards)
    shards, functions, updates, bins = [], [], [], []
    for part, s in zip(np.array_split(np.arange(240), n_shards), seeds):
        order = _shuffle_rng(int(s)).permutation(part.size)
        model = clone(est).set_params(random_state=int(s))
        model.partial_fit(X[part][order], y[part][order], classes=classes)
        shards.append((model, part[order]))
        updates.append(model._state["counters"][3])
        bins.append(model._state)
    mu = np.full(n_shards, 1 / n_shards)
    if mixing == "updates":
        mu = np.array(updates) / np.sum(updates)
    total = {}
    for m, (model, rows) in zip(mu, shards):
        for j, i in enumerate(model.support_):
            key = int(rows[i])
            total[key] = total.get(key, 0.0) + m * model.dual_coef_[:, j]
    functions = [(k, X[k : k + 1], total[k]) for k in sorted(total)]
    support, coef = reference_compress(functions, 8, "rbf", gamma=GAMMA)
    # Then the reduced set (new points of key -1) where it fits better.
    keys = np.array(sorted(total))
    A = np.array([np.atleast_1d(total[k]) for k in keys])
    rows, support, coef = reference_reduced_set(X[keys], A, keys, (support, coef.T), GAMMA)
    fitted = clf.estimator_
    # Loading puts the members of a row first: both in the order of their rows.
    order, ref = np.lexsort(fitted.support_vectors_.T), np.lexsort(rows.T)
    np.testing.assert_array_equal(fitted.support_[order], support[ref])
    np.testing.assert_allclose(fitted.support_vectors_[order], rows[ref], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fitted.dual_coef_[:, order], coef[ref].T, rtol=1e-7, atol=1e-10)
    np.testing.assert_array_equal(clf.n_updates_, [updates])
    # The probabilities' bins: the shards' bins, summed.
    summed = {k: sum(b[k] for b in bins) for k in ("cal_counts", "cal_sums", "cal_n")}
    assert fitted.proba_scale_ == pytest.approx(fit_scale(summed), rel=1e-12)
    assert fitted.n_mistakes_ == sum(mdl.n_mistakes_ for mdl, _ in shards)


@pytest.mark.parametrize(
    "est",
    [
        Forgetron(budget=8, gamma=GAMMA, average=True),
        Forgetron(budget=8, gamma=GAMMA, average=False, class_weight={0: 0.0, 1: 0.0, 2: 1.0}),
        BudgetedSGDClassifier(budget=8, gamma=GAMMA, maintenance="projection", average=False),
    ],
    ids=repr,
)
@pytest.mark.parametrize("from_empty", [True, False])
def test_a_shard_of_zero_weight_plays_nothing(est, from_empty):
    X, y = stream(60, 3, seed=4)
    classes = np.unique(y)
    if from_empty:
        start = _mixing.empty_start(3, 3, sparse=False)
        scalars = np.zeros(2)  # the Forgetron's Q and M of a new stream
    else:
        sv, coef = expansion(5, 3, seed=2)
        scalars = np.array([2.5, 11.0])
        start = _mixing.next_start(
            sv, coef, np.arange(5) + 100, 40, {"forgetron": scalars}, n_total=1000
        )
        if not isinstance(est, Forgetron):
            start["rule_state"] = {}
    if est.class_weight is None:
        w = np.zeros(60)
    else:  # the shard's rows are of the classes of weight zero
        keep = y != 2
        X, y, w = X[keep], y[keep], None
    out = _mixing.train_shard(est, start, X, y, w, 0, classes, 7, 1000)
    assert out["updates"] == 0 and out["mistakes"] == 0 and out["bins"] is None
    for key in ("sv", "coef", "keys"):
        np.testing.assert_array_equal(out[key], start[key])
    assert out["rounds"] == start["rounds"]
    # The rule's scalars of the loaded model, whatever the start held.
    expected = {"forgetron": scalars} if isinstance(est, Forgetron) else {}
    assert out["rule_state"].keys() == expected.keys()
    for name in expected:
        np.testing.assert_array_equal(out["rule_state"][name], expected[name])


@pytest.mark.parametrize("mixing", ["uniform", "updates"])
def test_fit_with_a_shard_of_zero_weight(mixing):
    X, y = stream(300, 2, seed=1)
    w = np.ones(300)
    w[:100] = 0.0  # the first of three shards
    est = Forgetron(budget=10, gamma=GAMMA, average=True)
    clf = ParameterMixingClassifier(est, n_shards=3, n_mixes=2, mixing=mixing, random_state=0)
    clf.fit(X, y, sample_weight=w)
    assert (clf.n_updates_[:, 0] == 0).all() and (clf.n_updates_[:, 1:] > 0).all()
    if mixing == "updates":
        np.testing.assert_array_equal(clf.mix_weights_[:, 0], 0.0)
    # No member comes from the rows of weight zero.
    assert (clf.estimator_.support_ >= 100).all()
    assert clf.score(X[100:], y[100:]) > 0.6
    with pytest.raises(ValueError, match="non-zero|all zero"):
        clf.fit(X, y, sample_weight=np.zeros(300))


# ----------------------------------------------------------------------
# The meta-estimator
# ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def moons():
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=1200, noise=0.2, random_state=0)
    return X, y


def test_fitted_model_is_an_ordinary_estimator(moons):
    X, y = moons
    clf = ParameterMixingClassifier(
        BudgetedSGDClassifier(budget=20, gamma=2.0, average=True),
        n_shards=4,
        n_mixes=3,
        random_state=0,
    ).fit(X, y)
    model = clf.estimator_
    assert type(model) is BudgetedSGDClassifier and clf.n_mixes_ == 3
    assert clf.n_updates_.shape == (3, 4) and clf.mix_weights_.shape == (3, 4)
    assert len(model.support_) <= 20 and clf.score(X, y) > 0.85
    np.testing.assert_array_equal(clf.classes_, [0, 1])
    np.testing.assert_array_equal(clf.predict(X), model.predict(X))
    np.testing.assert_array_equal(clf.decision_function(X), model.decision_function(X))
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), clf.predict_proba(X))
    # Row indices of X (merged points: -1), and the numeric gamma of X.
    assert ((model.support_ >= -1) & (model.support_ < len(X))).all()
    assert model.gamma == 2.0
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))
    model.partial_fit(X[:100], y[:100])  # the stream goes on
    assert len(model.support_) <= 20


def test_fitted_model_exports_to_onnx(moons):
    import_or_skip("skl2onnx", "SKLEARN_BUDGET_REQUIRE_ONNX")
    rt = import_or_skip("onnxruntime", "SKLEARN_BUDGET_REQUIRE_ONNX")
    onnx = import_or_skip("sklearn_budget.onnx", "SKLEARN_BUDGET_REQUIRE_ONNX")
    X, y = moons
    clf = ParameterMixingClassifier(
        Forgetron(budget=20, gamma=2.0), n_shards=3, n_mixes=2, random_state=0
    ).fit(X, y)
    onx = onnx.to_onnx(clf.estimator_, X[:1], options={"zipmap": False})
    sess = rt.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    label, proba = sess.run(None, {sess.get_inputs()[0].name: X})
    np.testing.assert_array_equal(label, clf.predict(X))
    np.testing.assert_allclose(proba, clf.predict_proba(X), atol=1e-6)


def test_deterministic_and_independent_of_the_scheduler(moons):
    X, y = moons
    est = RandomizedBudgetPerceptron(budget=20, gamma=2.0)
    kw = dict(n_shards=4, n_mixes=3, mixing="updates", random_state=5)
    a = ParameterMixingClassifier(est, **kw).fit(X, y).estimator_
    with parallel_backend("threading", n_jobs=2):
        b = ParameterMixingClassifier(est, **kw).fit(X, y).estimator_
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    # The first mixes do not depend on n_mixes.
    seen = []
    ParameterMixingClassifier(est, **kw)._fit(X, y, None, on_mix=lambda k, m: seen.append(m))
    c = ParameterMixingClassifier(est, **{**kw, "n_mixes": 2}).fit(X, y).estimator_
    np.testing.assert_array_equal(seen[1].dual_coef_, c.dual_coef_)
    np.testing.assert_array_equal(seen[2].dual_coef_, a.dual_coef_)


def test_sparse_input_gives_the_dense_model(moons):
    X, y = moons
    est = Forgetron(budget=15, gamma=2.0, average=True)
    kw = dict(n_shards=3, n_mixes=2, random_state=1)
    dense = ParameterMixingClassifier(est, **kw).fit(X, y).estimator_
    sparse = ParameterMixingClassifier(est, **kw).fit(sp.csr_matrix(X), y).estimator_
    np.testing.assert_array_equal(dense.support_, sparse.support_)
    np.testing.assert_allclose(dense.dual_coef_, sparse.dual_coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "est, match",
    [
        (cls(), f"{cls.__name__} has no budget")
        for cls in all_estimators()
        if not has(cls, "mixable")
    ]
    + [
        (Projectron(budget=None), "Projectron has no budget"),
        (Forgetron(budget=10, average="exact"), "average='exact' is not supported"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_refuses_estimators_without_a_budget(moons, est, match):
    X, y = moons
    clf = ParameterMixingClassifier(est)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert not hasattr(clf, "estimator_")


def test_the_refusal_names_the_estimators_it_trains(moons):
    X, y = moons
    with pytest.raises(ValueError, match="has no budget") as caught:
        ParameterMixingClassifier(KernelPerceptron()).fit(X, y)
    *others, last = names("mixable")
    assert f"({', '.join(others)} or {last}, with an integer budget)" in str(caught.value)


def test_sklearn_api_and_input_errors(moons):
    X, y = moons
    clf = ParameterMixingClassifier(Forgetron(budget=10), n_shards=2, n_mixes=1, random_state=0)
    assert clone(clf).get_params()["estimator__budget"] == 10
    clf.set_params(estimator__budget=12, n_mixes=2)
    assert clf.estimator.budget == 12
    with pytest.raises(NotFittedError):
        clf.predict(X)
    with pytest.raises(ValueError, match="n_mixes"):
        ParameterMixingClassifier(Forgetron(), n_mixes=0).fit(X, y)
    with pytest.raises(ValueError, match="mixing"):
        ParameterMixingClassifier(Forgetron(), mixing="mean").fit(X, y)
    Xc, yc = X.copy(), y.copy()
    clf.fit(Xc, yc)
    np.testing.assert_array_equal(Xc, X)  # the caller's arrays are never modified
    np.testing.assert_array_equal(yc, y)
    before = clf.estimator_
    bad = X.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.fit(bad, y)
    with pytest.raises(ValueError, match="n_shards=5 is larger than n_samples=4"):
        four = np.r_[np.flatnonzero(y == 0)[:2], np.flatnonzero(y == 1)[:2]]
        clf.set_params(n_shards=5).fit(X[four], y[four])
    with pytest.raises(ValueError, match="greater than one"):
        clf.set_params(n_shards=2).fit(X, np.zeros(len(X)))
    # A failed fit leaves the fitted meta-estimator as it was.
    assert clf.estimator_ is before and clf.n_features_in_ == 2
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :1])


def test_beats_the_empty_model_on_a_multiclass_stream():
    X, y = stream(2500, 4, seed=3, d=5)
    X, Xt, y, yt = X[:1500], X[1500:], y[:1500], y[1500:]
    est = ProjectronPlusPlus(budget=40, gamma=0.2)
    clf = ParameterMixingClassifier(est, n_shards=4, n_mixes=3, random_state=0).fit(X, y)
    seq = clone(est).set_params(max_iter=3).fit(X, y)
    assert clf.score(Xt, yt) > seq.score(Xt, yt) - 0.1
    assert clf.score(Xt, yt) > 0.5


_WEIGHT_EQUIVALENCE = (
    "an update of the wrapped learners happens only on a mistake (or margin error) "
    "of the hypothesis of that moment, so a sample of integer weight w is not w "
    "repetitions of it (xfailed for the learners themselves in test_common.py); "
    "the repeated rows also move the boundaries of the shards"
)


def _expected_failed_checks(estimator):
    failing = {"check_sample_weight_equivalence_on_dense_data": _WEIGHT_EQUIVALENCE}
    if estimator.__sklearn_tags__().input_tags.sparse:
        failing["check_sample_weight_equivalence_on_sparse_data"] = _WEIGHT_EQUIVALENCE
    return failing


@parametrize_with_checks(
    [
        ParameterMixingClassifier(Forgetron(budget=10)),
        ParameterMixingClassifier(Forgetron(budget=10, average=False), mixing="updates"),
        ParameterMixingClassifier(BudgetedSGDClassifier(budget=10), n_mixes=2),
        ParameterMixingClassifier(ProjectronPlusPlus(budget=10), n_shards=2),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_backend_that_counts_every_worker_equals_local_run(moons):
    # Like joblib's dask backend, "all_workers" has two workers whatever n_jobs
    # is asked for: the shards must still compute each kernel block whole.
    X, y = moons
    est = RandomizedBudgetPerceptron(budget=15, gamma=2.0)
    kw = dict(n_shards=4, n_mixes=2, random_state=0)
    with parallel_backend("all_workers"):
        other = ParameterMixingClassifier(est, n_jobs=-1, **kw).fit(X, y).estimator_
    local = ParameterMixingClassifier(est, **kw).fit(X, y).estimator_
    np.testing.assert_array_equal(other.support_, local.support_)
    np.testing.assert_array_equal(other.dual_coef_, local.dual_coef_)


# ----------------------------------------------------------------------
# On a real local dask cluster
# ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    distributed = import_or_skip("distributed", _REQUIRE)
    import_or_skip("dask.array", _REQUIRE)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.loopback
@pytest.mark.parametrize(
    "est",
    [
        Forgetron(budget=12, gamma="scale", average=True),
        BudgetedSGDClassifier(budget=12, gamma=GAMMA, maintenance="merging", average=False),
        ProjectronPlusPlus(budget=12, gamma=GAMMA, average=False),
    ],
    ids=repr,
)
def test_dask_array_fit_equals_local_shards_bit_for_bit(client, est):
    import dask.array as da
    import distributed

    X, y = stream(900, 3, seed=2)
    w = np.random.RandomState(0).uniform(0.5, 1.5, size=900)
    kw = dict(n_mixes=3, mixing="updates", random_state=4)
    # np.array_split(900 rows, 4): chunks of 225, the numpy shards.
    Xd, yd, wd = client.persist([da.from_array(a, chunks=225) for a in (X, y, w)])
    with distributed.get_task_stream(client) as tasks:
        remote = ParameterMixingClassifier(est, **kw).fit(Xd, yd, sample_weight=wd)
    local = ParameterMixingClassifier(est, n_shards=4, **kw).fit(X, y, sample_weight=w)
    shard_tasks = [t for t in tasks.data if "train_shard" in str(t["key"])]
    assert len(shard_tasks) == 4 * remote.n_mixes_
    assert {t["worker"] for t in shard_tasks} == set(client.scheduler_info()["workers"])
    np.testing.assert_array_equal(remote.n_updates_, local.n_updates_)
    a, b = remote.estimator_, local.estimator_
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.support_vectors_, b.support_vectors_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.gamma == b.gamma and a.proba_scale_ == b.proba_scale_
    np.testing.assert_array_equal(remote.predict_proba(X), local.predict_proba(X))
    # The caller's persisted chunks are still there.
    np.testing.assert_array_equal(Xd.compute(), X)


@pytest.mark.loopback
def test_joblib_dask_backend_equals_local_run(client, moons):
    joblib = import_or_skip("joblib", _REQUIRE)
    X, y = moons
    est = RandomizedBudgetPerceptron(budget=15, gamma=2.0)
    kw = dict(n_shards=4, n_mixes=2, random_state=0)
    with joblib.parallel_backend("dask"):
        remote = ParameterMixingClassifier(est, n_jobs=-1, **kw).fit(X, y).estimator_
    local = ParameterMixingClassifier(est, **kw).fit(X, y).estimator_
    np.testing.assert_array_equal(remote.support_, local.support_)
    np.testing.assert_array_equal(remote.dual_coef_, local.dual_coef_)


@pytest.mark.loopback
def test_dask_array_needs_its_chunks_as_shards(client):
    import dask.array as da

    X, y = stream(100, 2)
    clf = ParameterMixingClassifier(Forgetron(budget=5), n_shards=3)
    with pytest.raises(ValueError, match="its 4 chunks of rows"):
        clf.fit(da.from_array(X, chunks=25), da.from_array(y, chunks=25))
    assert not hasattr(clf, "n_features_in_")


def test_a_mixed_model_has_no_member_in_the_span_of_the_others():
    # Near-duplicate rows (1e-7 apart) with large cancelling coefficients:
    # the compression may keep both, whose Gram matrix is then singular to
    # the rules that keep a factor of it (budgeted SGD's projection, the
    # Projectrons). The second is projected onto the first and dropped; the
    # function moves by at most 1e-4 |coef| sqrt(k(x, x)) per dropped member.
    rng = np.random.RandomState(0)
    base = rng.randn(6, 2)
    rows = np.vstack([base, base[:3] + 1e-7])
    coef = rng.randn(1, 9) * 100.0
    keys = np.arange(9)
    kernel, code = _mixing.make_kernel(
        BudgetedSGDClassifier(budget=20, maintenance="projection", gamma=GAMMA)
    )
    out_rows, out_coef, out_keys = _mixing.compress(kernel, code, rows, coef, keys, 20)
    assert len(out_keys) == 6
    np.testing.assert_array_equal(out_keys, np.arange(6))
    gram = rbf_kernel(out_rows, gamma=GAMMA)
    BudgetedSGDClassifier._load_factor(gram, 1e-10)  # raises if a member is in the span
    grid = rng.randn(50, 2)
    before = rbf_kernel(grid, rows, gamma=GAMMA) @ coef.T
    after = rbf_kernel(grid, out_rows, gamma=GAMMA) @ out_coef.T
    bound = 3 * 1e-4 * np.abs(coef).max()
    assert np.abs(after - before).max() <= bound
