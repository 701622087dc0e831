"""Saving and loading models: pickle, joblib and skops (doc/persistence.rst).

A loaded model must be the same model, attribute for attribute (the private
state of the stream included), and must go on with its stream exactly as
the original does.
"""

import io
import pickle

import _instances
import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import import_or_skip
from sklearn.datasets import make_classification

from sklearn_budget import (
    BudgetedSGDClassifier,
    Forgetron,
    KernelMatchingPursuit,
    KernelPassiveAggressive,
    KernelPerceptron,
    Projectron,
    Winnow,
)
from sklearn_budget.kernels import Kernel


def _skops_io():
    """skops.io, or skip the test (pickle and joblib do not need it)."""
    return import_or_skip("skops.io", "SKLEARN_BUDGET_REQUIRE_SKOPS")


ALL = _instances.all_estimators()

# Every public estimator on dense two-class data, and a few on sparse input
# and on three classes.
CASES = [(cls, "binary", False) for cls in ALL] + [
    (Forgetron, "binary", True),
    (Winnow, "binary", True),
    (KernelPassiveAggressive, "multiclass", True),
    (BudgetedSGDClassifier, "multiclass", False),
    (Projectron, "multiclass", False),
    (KernelMatchingPursuit, "multiclass", False),
    (Winnow, "multiclass", False),
]


def _case_id(case):
    cls, classes, sparse = case
    return f"{cls.__name__}-{classes}-{'sparse' if sparse else 'dense'}"


def _data(classes, sparse):
    """Rows to fit, rows to go on with the stream, rows to predict."""
    n_classes = 2 if classes == "binary" else 3
    X, y = make_classification(
        n_samples=360,
        n_features=8,
        n_informative=4,
        n_classes=n_classes,
        flip_y=0.05,
        random_state=0,
    )
    if sparse:
        X[np.abs(X) < 0.8] = 0.0
        X = sp.csr_matrix(X)
    return (X[:160], y[:160]), (X[160:280], y[160:280]), X[280:]


def _make(cls):
    # A fixed seed: with random_state=None the draws of a stream come from
    # numpy's global generator, which a file holds a snapshot of.
    return _instances.make(cls, random_state=0)


def _type_name(obj):
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _types_to_trust(estimator):
    """The estimator's class, and scipy's CSR class if it holds sparse rows.

    skops trusts scipy's sparse base class but not its concrete formats;
    every other value of the state is of a type that skops trusts by
    default (numpy arrays and generators, builtins).
    """
    types = [_type_name(estimator)]
    if sp.issparse(getattr(estimator, "support_vectors_", None)):
        types.append(_type_name(estimator.support_vectors_))
    return types


def _assert_same(a, b, path="model"):
    """Deep equality of two states: same types, same values, bit for bit."""
    assert type(a) is type(b), path
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            _assert_same(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        np.testing.assert_array_equal(a, b, err_msg=path)
    elif sp.issparse(a):
        assert a.format == b.format and a.shape == b.shape, path
        for part in ("data", "indices", "indptr"):
            _assert_same(getattr(a, part), getattr(b, part), f"{path}.{part}")
    elif isinstance(a, np.random.RandomState):
        _assert_same(a.get_state(legacy=False), b.get_state(legacy=False), path)
    elif isinstance(a, Kernel):
        _assert_same(vars(a), vars(b), path)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), path
    else:
        assert a == b, path


def _assert_same_model(original, loaded, X_test):
    _assert_same(vars(original), vars(loaded))
    for method in ("predict", "decision_function", "predict_proba"):
        if hasattr(original, method):
            _assert_same(getattr(original, method)(X_test), getattr(loaded, method)(X_test))


def _pickle(estimator, tmp_path):
    return pickle.loads(pickle.dumps(estimator))


def _joblib(estimator, tmp_path):
    path = tmp_path / "model.joblib"
    joblib.dump(estimator, path)
    return joblib.load(path)


def _skops(estimator, tmp_path):
    sio = _skops_io()
    return sio.loads(sio.dumps(estimator), trusted=_types_to_trust(estimator))


ROUND_TRIPS = [_pickle, _joblib, _skops]


@pytest.mark.parametrize("round_trip", ROUND_TRIPS, ids=lambda f: f.__name__[1:])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_round_trip_gives_the_same_model_and_stream(case, round_trip, tmp_path):
    cls, classes, sparse = case
    (X, y), (X_more, y_more), X_test = _data(classes, sparse)
    original = _make(cls).fit(X, y)
    loaded = round_trip(original, tmp_path)
    assert loaded is not original
    _assert_same_model(original, loaded, X_test)

    if not hasattr(original, "partial_fit"):  # a batch method
        return
    mistakes = original.n_mistakes_
    original.partial_fit(X_more, y_more)
    loaded.partial_fit(X_more, y_more)
    # The stream went on (this is no comparison of two idle models)...
    assert original.n_mistakes_ > mistakes
    # ...in the same way on both.
    _assert_same_model(original, loaded, X_test)


@pytest.mark.parametrize("round_trip", ROUND_TRIPS, ids=lambda f: f.__name__[1:])
def test_round_trip_of_a_stream_started_with_partial_fit(round_trip, tmp_path):
    # Mid-stream, with averaging: the running sums travel too.
    (X, y), (X_more, y_more), X_test = _data("multiclass", False)
    original = Forgetron(budget=30, average=True)
    for start in range(0, 160, 40):
        original.partial_fit(X[start : start + 40], y[start : start + 40], classes=[0, 1, 2])
    loaded = round_trip(original, tmp_path)
    _assert_same_model(original, loaded, X_test)
    original.partial_fit(X_more, y_more)
    loaded.partial_fit(X_more, y_more)
    _assert_same_model(original, loaded, X_test)


@pytest.mark.parametrize("round_trip", ROUND_TRIPS, ids=lambda f: f.__name__[1:])
@pytest.mark.parametrize("cls", [Forgetron, KernelMatchingPursuit, Winnow])
def test_round_trip_of_an_unfitted_estimator(cls, round_trip, tmp_path):
    estimator = cls()
    loaded = round_trip(estimator, tmp_path)
    assert vars(loaded) == vars(estimator)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_skops_asks_to_trust_the_estimator_class_only(case):
    cls, classes, sparse = case
    (X, y), _, _ = _data(classes, sparse)
    estimator = _make(cls).fit(X, y)
    sio = _skops_io()
    data = sio.dumps(estimator)
    expected = [_type_name(estimator)]
    if sparse and cls is not Winnow:  # Winnow keeps no rows
        expected.append("scipy.sparse._csr.csr_matrix")
    assert sorted(sio.get_untrusted_types(data=data)) == sorted(expected)
    # Nothing is loaded without trusting it.
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException):
        sio.loads(data)


def test_file_holds_the_kernel_as_plain_parameters():
    # The fitted kernel is stored as a dict of its parameters, the reason why
    # skops need not trust the package's Kernel class.
    (X, y), _, _ = _data("binary", False)
    estimator = KernelPerceptron(kernel="poly", degree=2, gamma=0.5).fit(X, y)
    state = estimator.__getstate__()
    assert state["_kernel"] == {
        "kernel": "poly",
        "gamma": 0.5,
        "degree": 2,
        "coef0": 0.0,
        "kernel_params": None,
    }
    assert isinstance(estimator._kernel, Kernel)  # the live estimator is untouched
    loaded = pickle.loads(pickle.dumps(estimator))
    assert isinstance(loaded._kernel, Kernel)
    assert vars(loaded._kernel) == vars(estimator._kernel)


def _manhattan_similarity(x, z):
    return float(np.exp(-np.abs(x - z).sum()))


def test_callable_kernel_is_a_type_to_trust():
    # A callable kernel is code: skops lists it, next to the estimator.
    sio = _skops_io()
    (X, y), (X_more, y_more), X_test = _data("binary", False)
    estimator = KernelPerceptron(kernel=_manhattan_similarity).fit(X[:60], y[:60])
    data = sio.dumps(estimator)
    function = f"{__name__}._manhattan_similarity"
    assert sorted(sio.get_untrusted_types(data=data)) == sorted([_type_name(estimator), function])
    loaded = sio.loads(data, trusted=[_type_name(estimator), function])
    _assert_same_model(estimator, loaded, X_test)


def test_loading_does_not_touch_the_original():
    (X, y), _, X_test = _data("binary", False)
    estimator = Projectron(random_state=0).fit(X, y)
    before = pickle.dumps(estimator)
    pickle.dumps(estimator)
    joblib.dump(estimator, io.BytesIO())
    _skops_io().dumps(estimator)
    _assert_same_model(pickle.loads(before), estimator, X_test)
