"""Behaviour a scikit-learn user relies on: composition, persistence, errors."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _instances import all_estimators, make
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_budget import KernelPassiveAggressive, KernelPerceptron, Stoptron

# Every online kernel estimator (tests/_instances.py).
ALL = all_estimators("online_kernel")


def estimator(Est, **params):
    """An ``Est`` with ``params``, under which it takes every kernel and input."""
    return make(Est, "every_input", **params)


def blobs(n=300, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    centers = rng.randn(n_classes, 4) * 3
    y = rng.randint(n_classes, size=n)
    return centers[y] + rng.randn(n, 4), y


def state(est):
    """Everything the estimator holds, for exact before/after comparisons."""
    return pickle.dumps(sorted(vars(est).items()))


def test_pipeline_and_grid_search_over_budget_gamma_and_C():
    X, y = blobs(240)
    pipe = make_pipeline(StandardScaler(), Stoptron(random_state=0))
    grid = GridSearchCV(
        pipe, {"stoptron__budget": [5, 40], "stoptron__gamma": [0.1, 1.0]}, cv=3, n_jobs=2
    )
    grid.fit(X, y)
    assert grid.best_score_ > 0.8
    assert len(grid.best_estimator_[-1].support_) <= grid.best_params_["stoptron__budget"]
    grid = GridSearchCV(KernelPassiveAggressive(random_state=0), {"C": [0.01, 1.0]}, cv=3, n_jobs=2)
    grid.fit(X, y)
    assert set(grid.cv_results_["param_C"]) == {0.01, 1.0}


@pytest.mark.parametrize("Est", ALL, ids=lambda c: c.__name__)
def test_clone_gives_an_unfitted_copy(Est):
    est = estimator(Est, gamma=0.3, random_state=1).fit(*blobs())
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    assert not hasattr(copy, "support_")


@pytest.mark.parametrize("Est", ALL, ids=lambda c: c.__name__)
@pytest.mark.parametrize("sparse", [False, True])
def test_pickle_in_the_middle_of_a_stream_continues_identically(Est, sparse):
    X, y = blobs(900, n_classes=3, seed=4)
    X = sp.csr_matrix(X) if sparse else X
    est = estimator(Est, gamma=0.2, average=True).partial_fit(X[:333], y[:333], classes=[0, 1, 2])
    restored = pickle.loads(pickle.dumps(est))
    est.partial_fit(X[333:], y[333:])
    restored.partial_fit(X[333:], y[333:])
    assert restored.n_mistakes_ == est.n_mistakes_
    np.testing.assert_array_equal(restored.support_, est.support_)
    np.testing.assert_array_equal(restored.dual_coef_, est.dual_coef_)
    np.testing.assert_array_equal(restored.predict(X), est.predict(X))


@pytest.mark.parametrize("Est", ALL, ids=lambda c: c.__name__)
def test_multiclass_attributes_and_string_labels(Est):
    X, y = blobs(300, n_classes=3, seed=2)
    labels = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    est = estimator(Est, gamma=0.3, random_state=0).fit(X, labels)
    assert list(est.classes_) == ["setosa", "versicolor", "virginica"]
    assert est.dual_coef_.shape == (3, len(est.support_))
    assert est.support_vectors_.shape == (len(est.support_), 4)
    np.testing.assert_array_equal(est.support_vectors_, X[est.support_])
    assert est.decision_function(X).shape == (300, 3)
    assert set(est.predict(X)) <= set(est.classes_)
    assert est.score(X, labels) > 0.9


def test_binary_decision_function_and_predict_agree():
    X, y = blobs(200, seed=3)
    est = KernelPerceptron(gamma=0.3, random_state=0).fit(X, y)
    scores = est.decision_function(X)
    assert scores.shape == (200,)
    np.testing.assert_array_equal(est.predict(X), np.where(scores > 0, 1, 0))
    assert est.dual_coef_.shape == (1, len(est.support_))


def test_gamma_scale_is_fixed_on_the_first_call_of_a_stream():
    X, y = blobs(200, seed=5)
    est = KernelPerceptron().partial_fit(X[:100], y[:100], classes=[0, 1])
    expected = 1.0 / (X.shape[1] * X[:100].var())
    assert est.gamma_ == pytest.approx(expected)
    est.partial_fit(10 * X[100:], y[100:])
    assert est.gamma_ == pytest.approx(expected)
    # Constant data have no variance: 'scale' falls back to 1.0, as SVC does.
    est = KernelPerceptron().partial_fit(np.full((1, 4), 2.0), y[:1], classes=[0, 1])
    assert est.gamma_ == 1.0


def test_warm_start_continues_and_cold_start_resets():
    X, _ = blobs(300, seed=6)
    y = np.random.RandomState(0).randint(2, size=300)  # noise: mistakes in every epoch
    cold = KernelPerceptron(gamma=0.3, max_iter=1, random_state=0).fit(X, y)
    first = cold.n_mistakes_
    cold.fit(X, y)
    assert cold.n_mistakes_ == first
    warm = KernelPerceptron(gamma=0.3, max_iter=1, random_state=0, warm_start=True).fit(X, y)
    warm.fit(X, y)
    assert warm.n_mistakes_ > first


def test_first_partial_fit_needs_classes():
    X, y = blobs(20)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        KernelPerceptron().partial_fit(X, y)
    # After fit the classes are known.
    est = KernelPerceptron().fit(X, y)
    est.partial_fit(X, y)
    with pytest.raises(ValueError, match="is not the same as on last call"):
        est.partial_fit(X, y, classes=[0, 1, 2])


BAD_X = {
    "nan": (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), "NaN"),
    "inf": (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 3, np.inf, X), "infinity"),
    "n_features": (lambda X: X[:, :3], "features"),
    "empty": (lambda X: X[:0], "0 sample"),
    "3d": (lambda X: X[:, :, None], "dim 3"),
}


@pytest.mark.parametrize("Est", ALL, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", sorted(BAD_X))
def test_rejected_partial_fit_leaves_the_model_unchanged(Est, bad):
    X, y = blobs(100)
    est = estimator(Est, gamma=0.3).partial_fit(X, y, classes=[0, 1])
    before = state(est)
    make, message = BAD_X[bad]
    with pytest.raises(ValueError, match=message):
        est.partial_fit(make(X), y[: len(make(X))])
    assert state(est) == before


@pytest.mark.parametrize("Est", ALL, ids=lambda c: c.__name__)
def test_unseen_class_in_partial_fit_is_rejected_without_change(Est):
    X, y = blobs(100)
    est = estimator(Est, gamma=0.3).partial_fit(X, y, classes=[0, 1])
    before = state(est)
    y_bad = y.copy()
    y_bad[-1] = 7
    with pytest.raises(ValueError, match=r"labels \[7\] that are not in classes"):
        est.partial_fit(X, y_bad)
    assert state(est) == before


@pytest.mark.parametrize("Est", ALL, ids=lambda c: c.__name__)
def test_rejected_fit_on_fitted_model_leaves_it_unchanged(Est):
    X, y = blobs(100)
    est = estimator(Est, gamma=0.3).fit(X, y)
    before = state(est)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(np.full_like(X, np.nan), y)
    with pytest.raises(ValueError, match="number of classes has to be greater than one"):
        est.fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="weight.*zero"):
        est.fit(X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        est.partial_fit(X, y, sample_weight=-np.ones(len(y)))
    assert state(est) == before


@pytest.mark.parametrize("Est", ALL, ids=lambda c: c.__name__)
def test_predict_rejects_wrong_number_of_features(Est):
    X, y = blobs(100)
    est = estimator(Est, gamma=0.3).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but .* is expecting 4 features"):
        est.predict(X[:, :2])


@pytest.mark.parametrize("params", [{"budget": -1}, {"budget": 0}, {"budget": 2.5}])
def test_invalid_budget(params):
    X, y = blobs(20)
    with pytest.raises(InvalidParameterError, match="'budget' parameter of Stoptron"):
        Stoptron(**params).fit(X, y)


def test_continuous_targets_are_rejected():
    X, _ = blobs(20)
    with pytest.raises(ValueError, match="Unknown label type"):
        KernelPerceptron().fit(X, np.linspace(0, 1, 20))


def test_chi2_kernel_needs_non_negative_dense_data():
    X, y = blobs(50)
    with pytest.raises(ValueError, match="Negative values"):
        KernelPerceptron(kernel="chi2").fit(X, y)
    with pytest.raises(TypeError, match="dense data is required"):
        KernelPerceptron(kernel="chi2").fit(sp.csr_matrix(np.abs(X)), y)
    Xro = np.abs(X)
    Xro.flags.writeable = False
    assert KernelPerceptron(kernel="chi2", random_state=0).fit(Xro, y).score(Xro, y) > 0.8


@pytest.mark.parametrize("params", [{"average": "vote"}, {"gamma": 0.7}, {"kernel": "linear"}])
def test_stream_parameters_cannot_change_mid_stream(params):
    X, y = blobs(100)
    est = KernelPerceptron(gamma=0.3).partial_fit(X, y, classes=[0, 1])
    est.set_params(**params)
    before = state(est)
    with pytest.raises(ValueError, match="fixed for the stream changed"):
        est.partial_fit(X, y)
    with pytest.raises(ValueError, match="fixed for the stream changed"):
        est.set_params(warm_start=True).fit(X, y)
    est.set_params(warm_start=False)
    assert state(est) == before
    est.fit(X, y)  # a new stream may use them
    assert est.n_iter_ >= 1


@pytest.mark.parametrize("name", ["Stoptron", "Forgetron", "RandomizedBudgetPerceptron"])
def test_budget_is_fixed_for_a_stream(name):
    import sklearn_budget

    X, y = blobs(100)
    est = getattr(sklearn_budget, name)(budget=5, gamma=0.3).partial_fit(X, y, classes=[0, 1])
    before = state(est)
    est.set_params(budget=10)
    with pytest.raises(ValueError, match=r"budget=5 -> 10"):
        est.partial_fit(X, y)
    est.set_params(budget=5)
    assert state(est) == before


def test_rejected_fit_keeps_the_feature_attributes():
    pd = pytest.importorskip("pandas")
    X, y = blobs(100)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    est = KernelPerceptron(gamma=0.3).fit(df, y)
    before = state(est)
    with pytest.raises(ValueError, match="number of classes"):
        est.fit(X[:, :3], np.zeros(100))
    assert est.n_features_in_ == 4
    assert list(est.feature_names_in_) == ["a", "b", "c", "d"]
    assert state(est) == before


_FLAKY = {"calls": 0, "fail_after": None}


def flaky(a, b):
    """A linear kernel that fails after a number of calls (module level: it pickles)."""
    _FLAKY["calls"] += 1
    if _FLAKY["fail_after"] is not None and _FLAKY["calls"] > _FLAKY["fail_after"]:
        raise RuntimeError("kernel failed")
    return float(a @ b)


def test_a_failed_call_leaves_the_stream_as_it_was():
    X, y = blobs(600)
    _FLAKY.update(calls=0, fail_after=5000)
    est = KernelPerceptron(kernel=flaky).partial_fit(X[:40], y[:40], classes=[0, 1])
    before = state(est)
    with pytest.raises(RuntimeError, match="kernel failed"):
        est.partial_fit(X[40:], y[40:])
    assert state(est) == before
    # The stream goes on as if the failed call had never been made.
    _FLAKY["fail_after"] = None
    est.partial_fit(X[40:], y[40:])
    ref = KernelPerceptron(kernel=flaky).partial_fit(X[:40], y[:40], classes=[0, 1])
    ref.partial_fit(X[40:], y[40:])
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_array_equal(est.dual_coef_, ref.dual_coef_)
    assert est.n_mistakes_ == ref.n_mistakes_


def test_warm_fit_with_other_classes_is_rejected():
    X, y = blobs(60)
    est = KernelPerceptron(warm_start=True, gamma=0.3, random_state=0).fit(X, y)
    before = state(est)
    with pytest.raises(ValueError, match="differ from those of the warm-started model"):
        est.fit(X, np.where(y == 1, 2, 0))
    assert state(est) == before


def test_partial_fit_counts_one_iteration():
    X, y = blobs(60)
    est = KernelPerceptron(gamma=0.3, max_iter=3).fit(X, y)
    assert est.partial_fit(X, y).n_iter_ == 1


@pytest.mark.parametrize(
    "n_rows, first_call, message",
    [
        (1, "partial_fit", "zero variance"),
        (10, "partial_fit", "only 10 rows"),
        (100, "partial_fit", None),
        (10, "fit", None),
        (1, "fit", "zero variance"),
    ],
)
def test_gamma_scale_from_too_little_data_warns(n_rows, first_call, message):
    X, y = blobs(200)
    X[:, 1] = np.where(y == 1, 1.0, -1.0)  # every call sees both classes' rows
    est = KernelPerceptron(gamma="scale")
    Xs, ys = X[:n_rows], y[:n_rows]
    if n_rows == 1:  # constant features: zero variance (two rows for fit's two classes)
        Xs, ys = np.zeros((1 if first_call == "partial_fit" else 2, 4)), np.array([0, 1])[:2]
        ys = ys[: Xs.shape[0]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if first_call == "fit":
            est.fit(Xs, ys)
        else:
            est.partial_fit(Xs, ys, classes=[0, 1])
    texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    # The warning points at the line that made the call.
    assert all(w.filename == __file__ for w in caught if issubclass(w.category, UserWarning))
    if message is None:
        assert not any("gamma='scale'" in t for t in texts)
    else:
        assert any("gamma='scale'" in t and message in t for t in texts)
    # A numeric gamma never warns.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelPerceptron(gamma=0.5).partial_fit(Xs, ys, classes=[0, 1])
