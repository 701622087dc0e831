"""Bad input, hostile parameters and interrupted calls, over every estimator.

Each group below is a promise of the API: the caller's arrays are never
modified; finite input gives finite output or a clear error; parameters are
validated on every call; a call that fails or is interrupted leaves the
model exactly as it was; dates are not features.
"""

import pickle
import warnings

import _instances
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

import sklearn_budget
from sklearn_budget._kernels import Kernel


def make(name, **kw):
    """The estimator ``name`` with the parameters under which it takes every input."""
    params = {"gamma": 0.5, "random_state": 0, "budget": 8, **kw}
    return _instances.make(name, "every_input", **params)


# The online kernel estimators (Winnow and Kernel Matching Pursuit have
# the same promises checked in their own test files).
ALL = _instances.names("online_kernel")
BUDGETED = _instances.names("online_kernel", "budget")


def data(n=60, n_features=3, seed=0, n_classes=2):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    y = (X[:, 0] > 0).astype(int) if n_classes == 2 else np.argmax(X, axis=1)
    return X, y


def state(est):
    """Everything the estimator holds, for exact before/after comparisons."""
    return pickle.dumps(sorted(vars(est).items()))


def unsorted_csr(X):
    """A CSR matrix with the indices of every row in decreasing order."""
    A = sp.csr_matrix(X)
    for i in range(A.shape[0]):
        s = slice(A.indptr[i], A.indptr[i + 1])
        A.indices[s] = A.indices[s][::-1].copy()
        A.data[s] = A.data[s][::-1].copy()
    A.has_sorted_indices = False
    assert not A.has_sorted_indices
    return A


# ----------------------------------------------------------------------
# 1. The caller's data are never modified
# ----------------------------------------------------------------------
FORMATS = ["dense", "fortran", "float32", "csr-unsorted", "csr-duplicates", "list"]


def as_format(X, fmt):
    if fmt == "dense":
        return X.copy()
    if fmt == "fortran":
        return np.asfortranarray(X)
    if fmt == "float32":
        return X.astype(np.float32)
    if fmt == "csr-unsorted":
        return unsorted_csr(X)
    if fmt == "csr-duplicates":
        # Every entry stored twice, as two halves: a non-canonical matrix.
        A = sp.csr_matrix(X)
        indptr = 2 * A.indptr
        indices = np.empty(2 * A.nnz, dtype=A.indices.dtype)
        data = np.empty(2 * A.nnz)
        for i in range(A.shape[0]):
            s = slice(A.indptr[i], A.indptr[i + 1])
            indices[indptr[i] : indptr[i + 1]] = np.tile(A.indices[s], 2)
            data[indptr[i] : indptr[i + 1]] = np.tile(A.data[s] / 2, 2)
        M = sp.csr_matrix((data, indices, indptr), shape=X.shape)
        assert not M.has_canonical_format
        return M
    return X.tolist()


def snapshot(X):
    if sp.issparse(X):
        return (X.indices.copy(), X.indptr.copy(), X.data.copy(), X.has_sorted_indices)
    return pickle.dumps(X)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ALL)
def test_caller_arrays_are_not_modified(name, fmt):
    X, y = data()
    Xf = as_format(X, fmt)
    w = np.linspace(0.5, 2.0, len(y))
    before, y0, w0 = snapshot(Xf), y.copy(), w.copy()
    est = make(name)
    est.fit(Xf, y, sample_weight=w)
    est.partial_fit(Xf, y, sample_weight=w)
    est.decision_function(Xf)
    est.predict(Xf)
    fresh = make(name).partial_fit(Xf, y, classes=[0, 1])
    fresh.score(Xf, y)
    after = snapshot(Xf)
    if sp.issparse(Xf):
        for a, b in zip(before[:3], after[:3]):
            np.testing.assert_array_equal(a, b)
        assert before[3] == after[3]
    else:
        assert before == after
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(w, w0)


# ----------------------------------------------------------------------
# 2. Finite input: finite output or a clear error
# ----------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1e150, 1e200, 1e300])
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("name", ALL)
def test_huge_features_give_finite_scores_or_a_clear_error(name, kernel, scale):
    X, y = data()
    est = make(name, kernel=kernel).fit(X, y)
    before = state(est)
    try:
        est.partial_fit(X * scale, y)
    except ValueError as exc:
        assert "Non-finite" in str(exc)
        assert state(est) == before
    else:
        assert np.isfinite(est.dual_coef_).all()
    try:
        scores = est.decision_function(X * scale)
    except ValueError as exc:
        assert "Non-finite" in str(exc)
    else:
        assert np.isfinite(scores).all()


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("name", ALL + ["KernelMatchingPursuit"])
def test_a_scale_that_overflows_is_a_clear_error_without_numpy_warnings(name, fmt):
    # The variance of a row of 1e300 overflows float64: gamma='scale' has
    # no value, which the error says before numpy can warn about it.
    X, y = data()
    X[0, 0] = 1e300
    X = sp.csr_matrix(X) if fmt == "csr" else X
    est = getattr(sklearn_budget, name)(gamma="scale")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match=r"variance of X overflows \(largest \|x\|: 1e\+300\)"):
            est.fit(X, y)
    assert [str(w.message) for w in caught] == []
    assert not hasattr(est, "classes_")


# Every kind of seed that random_state takes: RandomState on any bit
# generator (only MT19937 has the legacy state tuple), an int, None.
SEEDS = {
    "int": lambda: 0,
    "None": lambda: None,
    "MT19937": lambda: np.random.RandomState(0),
    "PCG64": lambda: np.random.RandomState(np.random.PCG64(0)),
    "Philox": lambda: np.random.RandomState(np.random.Philox(0)),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ALL)
def test_no_warning_with_any_kind_of_seed(name, seed):
    X, y = data()
    est = getattr(sklearn_budget, name)(budget=8) if name in BUDGETED else None
    est = est or getattr(sklearn_budget, name)()
    est.set_params(random_state=SEEDS[seed]())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # Not about seeds: a Stoptron of 8 members may fit these 60 rows no
        # better than the majority class, and says so (test_convergence.py).
        warnings.filterwarnings("ignore", ".*always predicting the most frequent class")
        est.fit(X, y)
        est.partial_fit(X, y)
        est.partial_fit(X[:1], y[:1])
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("name", ALL)
def test_huge_sample_weights_give_finite_coefficients_or_a_clear_error(name):
    X, y = data()
    est = make(name, kernel="linear")
    with np.errstate(all="ignore"):
        try:
            est.fit(X, y, sample_weight=np.full(len(y), 1e308))
        except ValueError as exc:
            assert "Non-finite" in str(exc)
            with pytest.raises(NotFittedError):
                est.predict(X)
            return
    assert np.isfinite(est.dual_coef_).all()
    assert np.isfinite(est.decision_function(X)).all()


def nan_kernel(a, b):
    return np.nan


def inf_kernel(a, b):
    return np.inf


def none_kernel(a, b):
    return None


def text_kernel(a, b):
    return "one"


@pytest.mark.parametrize(
    "kernel, message",
    [
        (nan_kernel, "NaN or infinite"),
        (inf_kernel, "NaN or infinite"),
        (none_kernel, "NaN or infinite"),  # pairwise_kernels stores None as NaN
        (text_kernel, "not numbers"),
    ],
)
@pytest.mark.parametrize("name", ALL)
def test_a_callable_kernel_returning_garbage_is_named(name, kernel, message):
    X, y = data(20)
    est = make(name, kernel=kernel)
    with pytest.raises(ValueError, match=rf"kernel '{kernel.__name__}'.*{message}"):
        est.fit(X, y)
    with pytest.raises(NotFittedError):
        est.predict(X)


def test_a_kernel_matrix_of_the_wrong_shape_is_refused(monkeypatch):
    k = Kernel(lambda a, b: float(a @ b))
    monkeypatch.setattr(
        sklearn_budget._kernels, "pairwise_kernels", lambda X, Y, **kw: np.zeros((1, 1))
    )
    with pytest.raises(ValueError, match="shape"):
        k(np.zeros((3, 2)), np.zeros((4, 2)))


# ----------------------------------------------------------------------
# 3. Parameters are validated on every call, and those of the stream fixed
# ----------------------------------------------------------------------
BAD_PARAMS = [
    ("KernelPassiveAggressive", "C", -1.0),
    ("KernelPassiveAggressive", "C", np.nan),
    ("KernelPassiveAggressive", "C", "1"),
    ("KernelPassiveAggressive", "loss", "foo"),
    ("Projectron", "eta", -0.1),
    ("Projectron", "eta", "x"),
    ("ProjectronPlusPlus", "U", 0.0),
    ("BudgetPerceptron", "beta", np.nan),
    ("BudgetPerceptron", "update", "foo"),
    ("BudgetPerceptron", "C", 0.0),
    ("TighterBudgetPerceptron", "update", "foo"),
    ("Forgetron", "shrink", 1.5),
    ("KernelPerceptron", "max_iter", 0),
    ("Stoptron", "gamma", -1.0),
]


@pytest.mark.parametrize("name, param, value", BAD_PARAMS)
def test_partial_fit_validates_parameters_on_every_call(name, param, value):
    X, y = data()
    est = make(name).partial_fit(X, y, classes=[0, 1])
    before = state(est)
    est.set_params(**{param: value})
    with pytest.raises((ValueError, TypeError), match=param):
        est.partial_fit(X, y)
    with pytest.raises((ValueError, TypeError), match=param):
        est.fit(X, y)
    est.set_params(**{param: make(name).get_params()[param]})
    assert state(est) == before


@pytest.mark.parametrize("value", [5, 1, 9, 10**10])
@pytest.mark.parametrize("name", BUDGETED)
def test_budget_cannot_change_mid_stream(name, value):
    X, y = data()
    est = make(name).partial_fit(X, y, classes=[0, 1])
    before = state(est)
    est.set_params(budget=value)
    with pytest.raises(ValueError, match=rf"budget=8 -> {value}"):
        est.partial_fit(X, y)
    est.set_params(budget=8)
    assert state(est) == before


@pytest.mark.parametrize(
    "name, param, value",
    [
        ("KernelPassiveAggressive", "C", 0.1),
        ("Projectron", "eta", 0.7),
        ("BudgetPerceptron", "beta", 0.5),
    ],
)
def test_step_parameters_may_change_between_calls(name, param, value):
    # Documented as a schedule: the next call plays with the new value.
    X, y = data(120)
    est = make(name).partial_fit(X[:60], y[:60], classes=[0, 1])
    est.set_params(**{param: value}).partial_fit(X[60:], y[60:])
    assert est.n_mistakes_ > 0


@pytest.mark.parametrize("name", BUDGETED)
def test_a_huge_budget_allocates_nothing_upfront(name):
    X, y = data()
    est = make(name, budget=10**10).fit(X, y)
    # Capacity grows with the rows played (doubling, blocks cut at the
    # checkpoints of the averaged models' probabilities), never with the budget.
    assert est._state["alpha"].shape[0] <= 4 * len(y) + 16
    assert est.score(X, y) > 0.5


# ----------------------------------------------------------------------
# 4. A call that fails or is interrupted changes nothing
# ----------------------------------------------------------------------
class Interrupt:
    """Make ``Kernel.diag`` (called once per block of rows) raise on its n-th call."""

    def __init__(self, monkeypatch, after, exc=KeyboardInterrupt):
        self.calls = 0
        original = Kernel.diag

        def diag(kernel, X):
            self.calls += 1
            if self.calls > after:
                raise exc("stop")
            return original(kernel, X)

        monkeypatch.setattr(Kernel, "diag", diag)


@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("name", ALL)
def test_interrupted_fit_keeps_the_previous_model(name, warm, monkeypatch):
    X, y = data(700)
    est = make(name, warm_start=warm, max_iter=2).fit(X[:100], y[:100])
    before, pred = state(est), est.predict(X)
    Interrupt(monkeypatch, after=2)  # the third block of the call
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    assert state(est) == before
    np.testing.assert_array_equal(est.predict(X), pred)


@pytest.mark.parametrize("name", ALL)
def test_interrupted_partial_fit_can_be_replayed(name, monkeypatch):
    X, y = data(700)
    est = make(name).partial_fit(X[:100], y[:100], classes=[0, 1])
    before = state(est)
    interrupt = Interrupt(monkeypatch, after=1)
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X[100:], y[100:])
    assert state(est) == before
    monkeypatch.undo()
    del interrupt
    est.partial_fit(X[100:], y[100:])
    ref = make(name).partial_fit(X[:100], y[:100], classes=[0, 1]).partial_fit(X[100:], y[100:])
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_, rtol=0, atol=1e-12)
    assert est.n_mistakes_ == ref.n_mistakes_


@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError, MemoryError])
@pytest.mark.parametrize("name", ALL)
def test_a_failed_first_call_leaves_the_estimator_unfitted(name, exc, monkeypatch):
    X, y = data(700)
    est = make(name)
    Interrupt(monkeypatch, after=1, exc=exc)
    with pytest.raises(exc):
        est.partial_fit(X, y, classes=[0, 1])
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert not hasattr(est, "classes_")
    assert state(est) == state(make(name))


# ----------------------------------------------------------------------
# 5. Dates are not features
# ----------------------------------------------------------------------
@pytest.mark.parametrize("unit", ["datetime64[s]", "timedelta64[ms]"])
@pytest.mark.parametrize("name", ALL)
def test_dates_are_refused(name, unit):
    X, y = data()
    Xd = (X * 1000).astype("int64").astype(unit)
    with pytest.raises(TypeError, match="datetime64 or timedelta64"):
        make(name).fit(Xd, y)
    est = make(name).fit(X, y)
    before = state(est)
    with pytest.raises(TypeError, match="datetime64 or timedelta64"):
        est.partial_fit(Xd, y)
    with pytest.raises(TypeError, match="datetime64 or timedelta64"):
        est.predict(Xd)
    assert state(est) == before


def test_a_dataframe_with_a_date_column_is_refused():
    pd = pytest.importorskip("pandas")
    X, y = data()
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["when"] = pd.Timestamp("2026-01-01") + pd.to_timedelta(np.arange(len(y)), unit="D")
    with pytest.raises(TypeError, match="datetime64 or timedelta64"):
        make("KernelPerceptron").fit(df, y)


# ----------------------------------------------------------------------
# 6. The same promises on one-row calls (the lean path of small calls)
# ----------------------------------------------------------------------
def _stream_of_rows(name, n=40):
    X, y = data(n)
    est = make(name).partial_fit(X[:20], y[:20], classes=[0, 1])
    for i in range(20, n):
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    return est, X, y


@pytest.mark.parametrize("name", ALL)
def test_bad_one_row_calls_are_refused_and_change_nothing(name):
    est, X, y = _stream_of_rows(name)
    before, row = state(est), X[:1].copy()
    bad = [
        (np.array([[np.nan, 0.0, 0.0]]), y[:1], "NaN"),
        (np.array([[np.inf, 0.0, 0.0]]), y[:1], "infinity"),
        (X[:1, :2].copy(), y[:1], "features"),
        (np.array([["a", "b", "c"]], dtype=object), y[:1], "convert|could not"),
        (row, np.array([7]), "not in classes"),
        (row, np.array([0.5]), "Unknown label type"),
        (row, np.array([0, 1]), "inconsistent numbers of samples"),
        (row, y[:1], "classes="),  # classes that differ from the stream's
    ]
    for Xb, yb, message in bad:
        classes = [0, 2] if message == "classes=" else None
        with pytest.raises(ValueError, match=message):
            est.partial_fit(Xb, yb, classes=classes)
        assert state(est) == before
    for Xb, _, message in bad[:4]:
        for method in (est.predict, est.decision_function, est.predict_proba):
            with pytest.raises(ValueError, match=message):
                method(Xb)
    assert state(est) == before


@pytest.mark.parametrize("name", ALL)
def test_one_row_calls_take_any_layout_and_dtype_unchanged(name):
    X, y = data(40)
    reference, _, _ = _stream_of_rows(name)
    wide = np.asfortranarray(np.repeat(X, 2, axis=1))  # every other column: strided rows
    readonly = X.copy()
    readonly.flags.writeable = False
    formats = {
        "float32": lambda i: X[i : i + 1].astype(np.float32),
        "int-valued object": lambda i: X[i : i + 1].astype(object),
        "list": lambda i: X[i : i + 1].tolist(),
        "strided": lambda i: wide[i : i + 1, ::2],
        "read-only": lambda i: readonly[i : i + 1],
    }
    if name != "BudgetedSGDClassifier":
        formats["csr"] = lambda i: sp.csr_matrix(X[i : i + 1])
    for fmt, row in formats.items():
        est = make(name).partial_fit(X[:20], y[:20], classes=[0, 1])
        rows = [row(i) for i in range(20, 40)]
        copies = [pickle.dumps(r) if not sp.issparse(r) else r.toarray().tobytes() for r in rows]
        for i, r in zip(range(20, 40), rows):
            est.partial_fit(r, y[i : i + 1])
            est.decision_function(r)
        after = [pickle.dumps(r) if not sp.issparse(r) else r.toarray().tobytes() for r in rows]
        assert after == copies, fmt
        if fmt == "float32":
            continue  # rounded rows: another stream
        np.testing.assert_array_equal(est.support_, reference.support_, err_msg=fmt)
        np.testing.assert_allclose(
            est.dual_coef_, reference.dual_coef_, rtol=1e-12, atol=1e-12, err_msg=fmt
        )


@pytest.mark.parametrize("name", ALL)
def test_one_row_calls_keep_feature_names(name):
    pd = pytest.importorskip("pandas")
    X, y = data(30)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    est = make(name).partial_fit(frame.iloc[:20], y[:20], classes=[0, 1])
    est.partial_fit(frame.iloc[20:21], y[20:21])
    with pytest.warns(UserWarning, match="feature names"):
        est.partial_fit(X[21:22], y[21:22])
    with pytest.warns(UserWarning, match="feature names"):
        est.predict(X[21:22])
    with pytest.raises(ValueError, match="feature names"):
        est.predict(frame.iloc[:1, ::-1])


@pytest.mark.parametrize("name", ALL)
def test_an_interrupted_one_row_call_changes_nothing(name, monkeypatch):
    est, X, y = _stream_of_rows(name)
    est.partial_fit(X[:1], 1 - y[:1])
    before, pred = state(est), est.decision_function(X)
    Interrupt(monkeypatch, after=0)
    for i in range(5):
        with pytest.raises(KeyboardInterrupt):
            est.partial_fit(X[i : i + 1], 1 - y[i : i + 1])
        assert state(est) == before
    monkeypatch.undo()
    np.testing.assert_array_equal(est.decision_function(X), pred)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "linear"])
@pytest.mark.parametrize("name", ALL)
def test_a_huge_row_is_refused_or_predicted_as_it_was_learnt(name, kernel):
    # The blocked kernel formula of rbf gives inf - inf for a row of 1e308;
    # training (by differences) and prediction must agree about such a row.
    est, X, y = _stream_of_rows(name)
    est = make(name, kernel=kernel).partial_fit(X, y, classes=[0, 1])
    huge = np.full((1, 3), 1e308)
    before = state(est)
    try:
        for label in (0, 1, 0):
            est.partial_fit(huge, [label])
    except ValueError as exc:
        assert "overflow" in str(exc) or "Non-finite" in str(exc)
        assert state(est) == before
        return
    scores = est.decision_function(np.vstack([X, X]))  # the blocked path too
    assert np.isfinite(scores).all()
    np.testing.assert_allclose(est.decision_function(X[:1]), scores[:1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["Forgetron", "RandomizedBudgetPerceptron", "KernelPerceptron"])
def test_an_average_that_would_overflow_is_refused_in_blocks(name):
    # The running sums of the average grow with the rounds after a huge
    # coefficient: the call that would make them overflow is refused, and
    # leaves the model as it was, so that the published average stays finite.
    X, y = data()
    classes = np.unique(y)
    est = make(name, average=True).partial_fit(X[:40], y[:40], classes=classes)
    est.set_params(class_weight={classes[0]: 1.0, classes[1]: 1e308})
    with np.errstate(all="ignore"):
        for start in range(40, len(y), 7):
            before = pickle.dumps(est)
            try:
                est.partial_fit(X[start : start + 7], y[start : start + 7])
            except ValueError as exc:
                assert "Non-finite" in str(exc)
                assert pickle.dumps(est) == before
            assert np.isfinite(est.dual_coef_).all()
