"""One event at a time: one-row calls give the model of one call, bit for bit.

A one-row ``partial_fit`` takes a lean path (cheap validation of ready
input, an undo record of what the call can change, fitted attributes
derived on first access): the tests below check that it changes nothing
of what the model is.
"""

import pickle

import numpy as np
import pytest
from sklearn.utils.validation import check_is_fitted

import sklearn_budget
from sklearn_budget import _base

ALL = sorted(
    n
    for n in sklearn_budget.__all__
    if issubclass(getattr(sklearn_budget, n), _base.BaseKernelOnlineClassifier)
)


def make(name, **kw):
    cls = getattr(sklearn_budget, name)
    params = dict(gamma=0.3, random_state=0)
    if "budget" in cls().get_params():
        params["budget"] = 12
    params.update(kw)
    return cls(**params)


def stream(n=1000, n_features=4, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    if n_classes == 2:
        y = (X[:, 0] * X[:, 1] + 0.3 * rng.randn(n) > 0).astype(int)
    else:
        y = np.argmax(X[:, :n_classes] + 0.5 * rng.randn(n, n_classes), axis=1)
    return X, y


def fitted(est):
    names = ["support_", "dual_coef_", "support_vectors_", "n_mistakes_", "vote_counts_"]
    return [getattr(est, n, None) for n in names]


CASES = [(name, {}) for name in ALL] + [
    ("Forgetron", {"average": True}),
    ("BudgetPerceptron", {"average": True}),
    ("ProjectronPlusPlus", {"average": True}),
    ("KernelPerceptron", {"average": "vote"}),
    ("RandomizedBudgetPerceptron", {"average": True}),
]


@pytest.mark.parametrize("name, kw", CASES, ids=[f"{n}-{kw}" for n, kw in CASES])
def test_one_row_calls_give_the_model_of_one_call(name, kw):
    n_classes = 3 if name == "Projectron" else 2
    X, y = stream(n_classes=n_classes)
    classes = np.unique(y)
    one = make(name, **kw).partial_fit(X, y, classes=classes)
    rows = make(name, **kw)
    for i in range(len(y)):
        rows.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes if i == 0 else None)
    # The engine is deterministic and both take the direct path: bit for bit.
    assert pickle.dumps(fitted(rows)) == pickle.dumps(fitted(one))
    np.testing.assert_array_equal(rows._state["counters"], one._state["counters"])
    # The margins' bins are summed in the order of the calls: equal up to rounding.
    np.testing.assert_allclose(rows.proba_scale_, one.proba_scale_, rtol=1e-10)
    # One-row predictions are those of the batch, row by row.
    batch = one.decision_function(X[:50])
    single = np.concatenate([rows.decision_function(X[i : i + 1]) for i in range(50)])
    np.testing.assert_allclose(single, batch, rtol=1e-12, atol=1e-12)


def test_fit_then_one_row_calls_continue_the_stream():
    X, y = stream(400)
    a = make("Forgetron", warm_start=True).fit(X[:200], y[:200])
    b = make("Forgetron", warm_start=True).fit(X[:200], y[:200])
    a.partial_fit(X[200:], y[200:])
    for i in range(200, 400):
        b.partial_fit(X[i : i + 1], y[i : i + 1])
    assert pickle.dumps(fitted(a)) == pickle.dumps(fitted(b))


def test_reading_the_fitted_attributes_changes_nothing():
    X, y = stream(100)
    est = make("Forgetron", average=True).partial_fit(X, y, classes=[0, 1])
    before = pickle.dumps(sorted(vars(est).items()))
    check_is_fitted(est)
    coef, scale = est.dual_coef_, est.proba_scale_
    assert est.support_vectors_.shape[0] == coef.shape[1]
    est.predict_proba(X[:3])
    assert pickle.dumps(sorted(vars(est).items())) == before
    assert "support_" not in vars(est)
    # Cached until the next call changes the state; then derived afresh.
    assert est.dual_coef_ is coef and est.proba_scale_ == scale
    est.partial_fit(X[:1], 1 - y[:1])
    assert est.dual_coef_ is not coef
    assert len(est.support_) == est.dual_coef_.shape[1] == est.support_vectors_.shape[0]


def test_fitted_attributes_are_missing_before_fit_and_survive_pickling():
    est = make("Stoptron")
    assert not hasattr(est, "support_") and not hasattr(est, "proba_scale_")
    assert not hasattr(make("Stoptron", average=True), "vote_counts_")
    X, y = stream(100)
    est.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(est, "vote_counts_")
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.dual_coef_, est.dual_coef_)
    loaded.partial_fit(X[:1], y[:1])
    est.partial_fit(X[:1], y[:1])
    np.testing.assert_array_equal(loaded.dual_coef_, est.dual_coef_)


def test_parameters_are_validated_again_after_they_change():
    X, y = stream(50)
    est = make("KernelPassiveAggressive").partial_fit(X, y, classes=[0, 1])
    est.partial_fit(X[:1], y[:1])
    est.C = -1.0
    with pytest.raises(ValueError, match="C"):
        est.partial_fit(X[:1], y[:1])
    est.C = 1.0
    est.partial_fit(X[:1], y[:1])


def test_labels_of_any_kind_take_the_lean_path():
    X, y = stream(60)
    for labels in (np.array(["no", "yes"]), np.array([False, True]), np.array([-3, 5])):
        one = make("Forgetron").partial_fit(X, labels[y], classes=labels)
        rows = make("Forgetron").partial_fit(X[:1], labels[y[:1]], classes=labels)
        for i in range(1, len(y)):
            rows.partial_fit(X[i : i + 1], labels[y[i : i + 1]])
        np.testing.assert_array_equal(rows.dual_coef_, one.dual_coef_)
        assert rows.predict(X[:1])[0] == one.predict(X[:1])[0]
