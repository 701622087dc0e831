"""The river classifiers of sklearn_budget.river.

River's own checks (``river.checks``) on every class, and the promise of
the module: a stream of events gives exactly the model of the scikit-learn
estimator fed the same rows. Skipped without river, unless
SKLEARN_BUDGET_REQUIRE_RIVER=1 (then a missing river fails).
"""

import itertools
import pickle
import warnings

import _instances
import numpy as np
import pytest
from conftest import import_or_skip
from scipy.special import expit, softmax
from sklearn.metrics.pairwise import pairwise_kernels

import sklearn_budget
from sklearn_budget import _base, _one_row

river = import_or_skip("river", "SKLEARN_BUDGET_REQUIRE_RIVER")
from river import checks  # noqa: E402
from river import datasets as river_datasets  # noqa: E402

import sklearn_budget.river as sbr  # noqa: E402


def on_path(est):
    """Whether the compiled one-row path of ``est`` is built (its calls took it)."""
    return type(_one_row._ONE_ROW.get(est)) is _one_row._OneRowPath


NAMES = sbr.__all__


def average_predictions(est, X):
    """Labels and probabilities of river's averaged predictions for the rows
    ``X``: the average of the rounds played, the pool and the current
    members with their running sums, not compressed within the budget (the
    published ``dual_coef_`` is that compression); the published model
    where nothing is compressed."""
    if not getattr(est, "_bounded_pool", False):
        return est.predict(X), est.predict_proba(X)
    state, n, p = est._state, est._n, int(est._state["pool_n"][0])
    acc = state["acc"][:n] + state["alpha"][:n] * (state["scale"][1] - state["stamp"][:n])[:, None]
    rows = np.vstack([state["pool_X"][:p], state["Xs"][:n]])
    f = pairwise_kernels(X, rows, metric="rbf", gamma=est.gamma_) @ np.vstack(
        [state["pool_coef"][:p], acc]
    )
    f = f / est._t
    z = est.proba_scale_ * f
    if est._binary:
        proba = np.column_stack([expit(-z[:, 0]), expit(z[:, 0])])
        return est.classes_[(f[:, 0] > 0).astype(int)], proba
    return est.classes_[f.argmax(axis=1)], softmax(z, axis=1)


def test_every_online_estimator_has_its_river_classifier():
    # The classes are made from the package's estimators that have
    # partial_fit: module attributes of their own name, which pickle finds.
    assert NAMES == _instances.names("partial_fit")
    for name in NAMES:
        cls = getattr(sbr, name)
        assert name in dir(sbr)
        assert (cls.__module__, cls.__qualname__) == ("sklearn_budget.river", name)
        assert cls._estimator_class is getattr(sklearn_budget, name)
        model = cls(classes=(0, 1), random_state=0)
        assert type(pickle.loads(pickle.dumps(model))) is cls


# River's memory check plays 2,000 events on each binary data set: run on
# three of the classes, which share the engine (and its bounded state) with
# the others, to keep the suite short.
MEMORY_CHECKED = ("Forgetron", "Stoptron", "BudgetedSGDClassifier")


def _checks(model):
    """River's checks of ``model``."""
    for check in checks.yield_checks(model):
        if check.__name__ in model._unit_test_skips():
            continue
        if check.__name__ == "check_bounded_memory_growth" and (
            type(model).__name__ not in MEMORY_CHECKED
        ):
            continue
        yield check


@pytest.mark.parametrize("name", NAMES)
def test_river_checks(name):
    cls = getattr(sbr, name)
    for params in cls._unit_test_params():
        model = cls(**params)
        for check in _checks(model):
            with warnings.catch_warnings():
                # Winnow without a numeric gamma: nothing to warn about here.
                warnings.simplefilter("ignore", UserWarning)
                check(model.clone())


def _stream(n=300, n_features=5, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    y = np.argmax(X[:, :n_classes], axis=1) if n_classes > 2 else X[:, 0] + X[:, 1] > 0
    keys = [f"f{j}" for j in range(n_features)]
    return X, y, [dict(zip(keys, row.tolist())) for row in X]


def _sklearn_params(name, **kw):
    params = dict(random_state=0, **kw)
    if "gamma" in getattr(sklearn_budget, name)().get_params():
        params["gamma"] = 0.5
    if "budget" in getattr(sklearn_budget, name)().get_params():
        params["budget"] = 15
    return params


# With the last hypothesis, the classes of the kernel estimators learn on
# the compiled one-row path (and predict from it, with the last hypothesis);
# Winnow through partial_fit.
AVERAGE = [{}] + [{"average": a} for a in (False, True)]


@pytest.mark.parametrize("kw", AVERAGE, ids=["default", "last", "averaged"])
@pytest.mark.parametrize("name", NAMES)
def test_events_give_the_model_of_one_partial_fit_call(name, kw, monkeypatch):
    X, y, events = _stream()
    params = _sklearn_params(name, **kw)
    model = getattr(sbr, name)(**params)
    # The events played on the compiled one-row path (the round of
    # _OneRowPath.play, or the whole call in compiled code: OneRow.learn,
    # which river's learn_one makes itself, then hands the rest on to
    # learn_event).
    played = {"n": 0}
    original_event, original_guarded = _one_row.learn_event, _one_row.learn_guarded

    def learn_event(*args):
        done = original_event(*args)
        played["n"] += bool(done)
        return done

    def learn_guarded(*args):
        code = original_guarded(*args)
        played["n"] += code == 0
        return code

    monkeypatch.setattr(_one_row, "learn_event", learn_event)
    monkeypatch.setattr(_one_row, "learn_guarded", learn_guarded)
    for x, label in zip(events, y):
        model.learn_one(x, bool(label))
    ref = getattr(sklearn_budget, name)(**params).partial_fit(X, y, classes=[False, True])
    est = model.estimator_
    assert state_of(est) == state_of(ref)
    np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(X))
    labels, expected = average_predictions(ref, X[:50])
    assert [model.predict_one(x) for x in events[:20]] == labels[:20].tolist()
    proba = model.predict_proba_one(events[0])
    assert set(proba) == {False, True}
    np.testing.assert_allclose([proba[False], proba[True]], expected[0])
    got = [model.predict_proba_one(x) for x in events[:50]]
    np.testing.assert_allclose([[p[False], p[True]] for p in got], expected, rtol=1e-9, atol=1e-12)
    # The estimators of the kernel engine have its compiled one-row path;
    # the others (Winnow, FOGD, NOGD) learn through partial_fit.
    fast = _instances.has(name, "online_kernel")
    assert on_path(est) == fast
    # Every event but the first (and the few that grow the buffers).
    assert played["n"] >= len(y) - 12 if fast else played["n"] == 0


def state_of(est):
    """The fitted attributes and the counters (bitwise)."""
    names = ["support_", "dual_coef_", "n_mistakes_", "classes_", "coef_", "intercept_"]
    return pickle.dumps([getattr(est, n, None) for n in names])


@pytest.mark.parametrize("name", ["Forgetron", "ProjectronPlusPlus", "BudgetPerceptron"])
def test_declared_classes_and_features(name):
    X, y, events = _stream(n=200, n_classes=3)
    labels = np.array(["a", "b", "c"])[y]
    params = _sklearn_params(name)
    # Columns in the declared order, whatever the order of the keys.
    order = ("f4", "f2", "f0", "f1", "f3")
    model = getattr(sbr, name)(classes=("c", "a", "b"), features=order, **params)
    assert model._multiclass
    for x, label in zip(events, labels):
        model.learn_one(dict(reversed(list(x.items()))), str(label))
    cols = [int(k[1]) for k in order]
    ref = getattr(sklearn_budget, name)(**params).partial_fit(
        X[:, cols], labels, classes=["a", "b", "c"]
    )
    np.testing.assert_array_equal(model.estimator_.dual_coef_, ref.dual_coef_)
    assert model.predict_one(events[3]) == ref.predict(X[3:4, cols])[0]
    assert set(model.predict_proba_one(events[3])) == {"a", "b", "c"}
    with pytest.raises(ValueError, match="not one of the classes"):
        model.learn_one(events[0], "d")


def test_missing_features_are_zero_and_new_ones_ignored():
    model = sbr.Forgetron(gamma=0.5, random_state=0)
    model.learn_one({"b": 1.0, "a": 2.0}, True)
    model.learn_one({"a": -1.0, "b": 0.5}, False)
    assert model._columns == ("a", "b")
    ref = sklearn_budget.Forgetron(gamma=0.5, random_state=0).partial_fit(
        np.array([[2.0, 1.0], [-1.0, 0.5]]), [True, False], classes=[False, True]
    )
    x = {"a": 0.3, "z": 100.0}  # b missing (0), z not a column (ignored)
    np.testing.assert_allclose(
        model.predict_proba_one(x)[True], ref.predict_proba([[0.3, 0.0]])[0, 1]
    )


def test_bad_events_are_refused_and_leave_the_model_as_it_was():
    model = sbr.Forgetron(gamma=0.5, random_state=0)
    for x, y in river_datasets.Phishing().take(30):
        model.learn_one(x, y)
    before = pickle.dumps(model)
    key = model._columns[0]
    with pytest.raises(ValueError, match="NaN"):
        model.learn_one({key: float("nan")}, True)
    with pytest.raises(ValueError):
        model.learn_one({key: "text"}, True)
    with pytest.raises(ValueError, match="not one of the classes"):
        model.learn_one({key: 1.0}, "spam")
    assert pickle.dumps(model) == before


def test_prediction_before_any_event():
    model = sbr.KernelPerceptron(classes=(3, 1, 2))
    assert model.predict_one({"a": 1.0}) == 1
    assert model.predict_proba_one({"a": 1.0}) == {1: 1 / 3, 2: 1 / 3, 3: 1 / 3}
    assert model.estimator_ is None


@pytest.mark.parametrize("name", NAMES)
def test_defaults_learn_without_warnings_and_scale_on_the_first_event(name):
    X, y, events = _stream(n=40, n_features=4)
    model = getattr(sbr, name)()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x, label in zip(events, y):
            model.learn_one(x, bool(label))
    assert [str(w.message) for w in caught] == []
    if "gamma" in model.estimator_.get_params():
        # 1 / (n_features * variance of the first event's values), by hand.
        first = X[0]
        mean = sum(first) / 4
        var = sum((v - mean) ** 2 for v in first) / 4
        np.testing.assert_allclose(model.estimator_.gamma_, 1.0 / (4 * var), rtol=1e-12)
        # The estimator fed the same first row warns: it cannot know the rule.
        with pytest.warns(UserWarning, match="it has only 1 row"):
            getattr(sklearn_budget, name)().partial_fit(X[:1], y[:1], classes=[False, True])


def test_progressive_validation_runs():
    from river import evaluate, metrics

    model = sbr.Forgetron(budget=30, gamma=0.5, random_state=0)
    stream = itertools.islice(river_datasets.Phishing(), 300)
    metric = evaluate.progressive_val_score(stream, model, metrics.Accuracy())
    assert metric.get() > 0.7


def test_a_refused_first_event_fixes_nothing():
    model = sbr.Stoptron(gamma=0.5)
    fresh = pickle.dumps(model)
    with pytest.raises(ValueError, match="NaN"):
        model.learn_one({"a": float("nan"), "b": 1.0}, True)
    assert pickle.dumps(model) == fresh
    model.learn_one({"c": 1.0, "b": 2.0}, True)
    assert model._columns == ("b", "c")


@pytest.mark.parametrize("name", ["Forgetron", "ProjectronPlusPlus", "Projectron"])
def test_multiclass_events_on_the_compiled_path(name):
    X, y, events = _stream(n=200, n_classes=3)
    labels = np.array(["a", "b", "c"])[y]
    params = _sklearn_params(name, average=False)
    model = getattr(sbr, name)(classes=("a", "b", "c"), **params)
    for x, label in zip(events, labels):
        model.learn_one(x, str(label))
    ref = getattr(sklearn_budget, name)(**params).partial_fit(X, labels, classes=["a", "b", "c"])
    assert state_of(model.estimator_) == state_of(ref)
    assert [model.predict_one(x) for x in events] == ref.predict(X).tolist()
    got = [model.predict_proba_one(x) for x in events[:40]]
    np.testing.assert_allclose(
        [[p[c] for c in "abc"] for p in got], ref.predict_proba(X[:40]), rtol=1e-9, atol=1e-12
    )


def test_odd_values_of_events_on_the_compiled_path():
    # Values the compiled path does not convert go through partial_fit:
    # the same model as the numbers they stand for, or partial_fit's error.
    X, y, events = _stream(n=60)
    params = _sklearn_params("Forgetron", average=False)
    model = sbr.Forgetron(**params)
    for x, label in zip(events[:30], y[:30]):
        model.learn_one(x, bool(label))
    odd = []
    for x in events[30:]:
        x = dict(x)
        x["f0"] = str(x["f0"])  # a numeric string: numpy converts it
        x["f1"] = np.float32(x["f1"])
        x["f2"] = int(x["f2"] > 0)
        x["extra"] = "ignored"
        odd.append(x)
    for x, label in zip(odd, y[30:]):
        model.learn_one(x, bool(label))
    rows = np.array([[float(x[f"f{j}"]) for j in range(5)] for x in odd])
    ref = sklearn_budget.Forgetron(**params).partial_fit(X[:30], y[:30], classes=[False, True])
    ref.partial_fit(rows, y[30:])
    assert state_of(model.estimator_) == state_of(ref)
    before = pickle.dumps(model)
    for bad, match in [(float("inf"), "infinity"), (None, "NaN"), ("text", "could not|convert")]:
        with pytest.raises(ValueError, match=match):
            model.learn_one({"f0": bad}, True)
        assert model.predict_one({"f0": 1.0, "f1": 2.0}) in (False, True)
        with pytest.raises(ValueError, match=match):
            model.predict_one({"f0": bad})
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", ["Forgetron", "Stoptron", "KernelPerceptron"])
def test_averaged_predictions_on_the_compiled_path(name, n_classes, monkeypatch):
    # The average of an averaged model scores the events in compiled code,
    # its pool and members not compressed: up to rounding.
    X, y, events = _stream(n=200, n_classes=n_classes)
    labels = np.array(["a", "b", "c"])[y.astype(int)]
    classes = ("a", "b", "c")[:n_classes]
    params = _sklearn_params(name, average=True)
    model = getattr(sbr, name)(classes=classes, **params)
    for x, label in zip(events, labels):
        model.learn_one(x, str(label))
    ref = getattr(sklearn_budget, name)(**params).partial_fit(X, labels, classes=list(classes))
    answered = []
    original = _base.BaseKernelOnlineClassifier._event_scores

    def scores(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        answered.append(out is not None)
        return out

    monkeypatch.setattr(_base.BaseKernelOnlineClassifier, "_event_scores", scores)
    labels, expected = average_predictions(ref, X)
    assert [model.predict_one(x) for x in events] == labels.tolist()
    got = [model.predict_proba_one(x) for x in events[:40]]
    np.testing.assert_allclose(
        [[p[c] for c in classes] for p in got], expected[:40], rtol=1e-9, atol=1e-12
    )
    assert answered and all(answered)
