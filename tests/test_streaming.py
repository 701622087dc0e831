"""One event at a time: one-row calls give the model of one call, bit for bit.

A one-row ``partial_fit`` takes a lean path (cheap validation of ready
input, an undo record of what the call can change, fitted attributes
derived on first access), and, where it applies, the compiled one-row path
(``_one_row._OneRowPath``: the engine and the rule kept between calls, the
margin recorded in compiled code): the tests below check that they change
nothing of what the model is.
"""

import pickle

import _instances
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

import sklearn_budget
from sklearn_budget import _base, _one_row


def on_path(est):
    """Whether the compiled one-row path of ``est`` is built (its calls took it)."""
    return type(_one_row._ONE_ROW.get(est)) is _one_row._OneRowPath


def count_compiled_rounds(monkeypatch):
    """A counter of the rounds played on the compiled one-row path."""
    played = {"n": 0}
    original = _one_row._OneRowPath.play

    def play(self, *args):
        played["n"] += 1
        return original(self, *args)

    monkeypatch.setattr(_one_row._OneRowPath, "play", play)
    return played


ALL = _instances.names("online_kernel")


def make(name, **kw):
    return _instances.make(name, **{"random_state": 0, "gamma": 0.3, "budget": 12, **kw})


def stream(n=1000, n_features=4, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    if n_classes == 2:
        y = (X[:, 0] * X[:, 1] + 0.3 * rng.randn(n) > 0).astype(int)
    else:
        y = np.argmax(X[:, :n_classes] + 0.5 * rng.randn(n, n_classes), axis=1)
    return X, y


def fitted(est):
    """The fitted attributes, each pickled (bytes: equal bit for bit)."""
    names = ["support_", "dual_coef_", "support_vectors_", "n_mistakes_", "vote_counts_"]
    return [pickle.dumps(getattr(est, n, None)) for n in names]


# Every online estimator with the last hypothesis, with its defaults, and
# averaged: all on the compiled one-row path.
CASES = (
    [(name, {"average": False}) for name in ALL]
    + [(name, {}) for name in ALL]
    + [(name, {"average": True}) for name in ALL]
    + [
        ("KernelPerceptron", {"average": "vote"}),
        ("Stoptron", {"average": "vote"}),
        ("Forgetron", {"average": "exact"}),
    ]
)


@pytest.mark.parametrize("name, kw", CASES, ids=[f"{n}-{kw}" for n, kw in CASES])
def test_one_row_calls_give_the_model_of_one_call(name, kw, monkeypatch):
    n_classes = 3 if name == "Projectron" else 2
    X, y = stream(n_classes=n_classes)
    classes = np.unique(y)
    one = make(name, **kw).partial_fit(X, y, classes=classes)
    played = count_compiled_rounds(monkeypatch)
    rows = make(name, **kw)
    for i in range(len(y)):
        rows.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes if i == 0 else None)
    # The engine is deterministic and both take the direct path: bit for bit.
    assert fitted(rows) == fitted(one)
    np.testing.assert_array_equal(rows._state["counters"], one._state["counters"])
    # The margins' bins are recorded round after round, whatever the calls
    # (and the averages score a row as a block does): the same bins.
    for key in ("cal_counts", "cal_sums", "cal_n"):
        np.testing.assert_array_equal(rows._state[key], one._state[key], err_msg=key)
    assert rows.proba_scale_ == one.proba_scale_
    # One-row predictions are those of the batch, row by row.
    batch = one.decision_function(X[:50])
    single = np.concatenate([rows.decision_function(X[i : i + 1]) for i in range(50)])
    np.testing.assert_allclose(single, batch, rtol=1e-12, atol=1e-12)
    # The compiled one-row path played the rows (but the first call, and the
    # few that grow the member buffers).
    assert on_path(rows)
    assert played["n"] >= len(y) - 12


def test_fit_then_one_row_calls_continue_the_stream():
    X, y = stream(400)
    a = make("Forgetron", warm_start=True).fit(X[:200], y[:200])
    b = make("Forgetron", warm_start=True).fit(X[:200], y[:200])
    a.partial_fit(X[200:], y[200:])
    for i in range(200, 400):
        b.partial_fit(X[i : i + 1], y[i : i + 1])
    assert fitted(a) == fitted(b)


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


def _without_one_row_path(monkeypatch):
    """Make every stream take the lean path of _play instead of the compiled one."""
    monkeypatch.setattr(_one_row, "build_path", lambda est: None)


def _one_row_stream(est, X, y, classes):
    est.partial_fit(X[:1], y[:1], classes=classes)
    for i in range(1, len(y)):
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    return est


@pytest.mark.parametrize("name", ALL)
def test_the_compiled_path_records_the_bins_of_record_margins(name, monkeypatch):
    # Not only the model: the bins of the margins, bit for bit, are those
    # of one-row calls through _play and _calibration.record_margins.
    n_classes = 3 if name == "Projectron" else 2
    X, y = stream(400, n_classes=n_classes)
    classes = np.unique(y)
    fast = _one_row_stream(make(name, average=False), X, y, classes)
    assert on_path(fast)
    _without_one_row_path(monkeypatch)
    lean = _one_row_stream(make(name, average=False), X, y, classes)
    assert not on_path(lean)
    for key in ("cal_counts", "cal_sums", "cal_n", "counters", "scale"):
        np.testing.assert_array_equal(fast._state[key], lean._state[key], err_msg=key)
    assert fitted(fast) == fitted(lean)
    assert fast.proba_scale_ == lean.proba_scale_


def test_margins_at_the_edges_of_the_bins_are_binned_as_numpy_bins_them():
    # The bins are computed in compiled code (_margins.MarginBins, for the
    # blocks and the one-row path alike) with the C library's log; numpy's
    # may differ in the last bit. Margins at and next to the edges of the
    # bins, zero, subnormal and huge: the bins of the formula in numpy.
    from sklearn_budget._calibration import (
        _CAL_HALF,
        _CAL_LOG_RANGE,
        _bin_of,
        new_bins,
        record_margins,
    )

    lo, hi = _CAL_LOG_RANGE
    edges = np.exp(lo + np.arange(_CAL_HALF + 1) * (hi - lo) / _CAL_HALF)
    sizes = np.concatenate(
        [edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf), [0.0, 5e-324, 1e-300, 1e300]]
    )
    margins = np.concatenate([sizes, -sizes])
    u = (np.log(np.maximum(np.abs(margins), 1e-300)) - lo) * (_CAL_HALF / (hi - lo))
    u = np.minimum(np.maximum(u, 0.0), _CAL_HALF - 1).astype(np.intp)
    np.testing.assert_array_equal(
        _bin_of(margins), np.where(margins >= 0, _CAL_HALF + u, _CAL_HALF - 1 - u)
    )
    est = make("Stoptron", average=False, budget=10**6)
    X, y = stream(40)
    est.partial_fit(X, y, classes=[0, 1])
    fast = _one_row._ONE_ROW.get(est) or _one_row.build_path(est)
    state = est._state
    expected = new_bins(2)
    for t, m in enumerate(margins, 1):
        record_margins(expected, np.array([m]), np.array([1]), np.array([1.0]), np.array([t]))
    # Each margin through the compiled recording: rounds with that margin.
    got = fast.fast
    for key in expected:
        state[key][...] = 0.0
    engine_margins = []
    for t, m in enumerate(margins, 1):
        state["counters"][1] = t - 1
        got.begin(False)
        got.load(X[:1])
        # A stream whose score is m: a one-member hypothesis with k(x, x) = 1.
        state["counters"][0] = 1
        state["alpha"][0, 0] = m
        state["Xs"][0] = X[0]
        state["scale"][0] = 1.0
        assert got.play(1, 1.0, 1.0, 0, True) == 0
        engine_margins.append(got.margin)
        state["counters"][0] = 1
        got.active = False
    np.testing.assert_array_equal(engine_margins, margins)
    for key in expected:
        np.testing.assert_array_equal(state[key][1], expected[key][1], err_msg=key)


@pytest.mark.parametrize("budget", [1, 2, 3, 16, 17])
def test_random_removals_draw_the_numbers_of_one_call(budget):
    # The one-row path draws each removal's number in compiled code, from
    # the bit generator, as randint(budget) draws it: rejection of masked
    # 32-bit draws (budget 17 rejects half of them).
    X, y = stream(600)
    kw = dict(average=False, budget=budget)
    one = make("RandomizedBudgetPerceptron", **kw).partial_fit(X, y, classes=[0, 1])
    rows = _one_row_stream(make("RandomizedBudgetPerceptron", **kw), X, y, [0, 1])
    assert _one_row._ONE_ROW[rows].hooks == "generator"
    assert fitted(rows) == fitted(one)
    a, b = rows._rng.get_state(), one._rng.get_state()
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2:] == b[2:]
    # And the stream goes on identically from either.
    rows.partial_fit(X[:100], y[:100])
    one.partial_fit(X[:100], y[:100])
    assert fitted(rows) == fitted(one)


def test_random_removals_with_another_bit_generator():
    # A RandomState on another bit generator: the hooks of the blocks, with
    # get_state for the undo record.
    X, y = stream(300)

    def est():
        rng = np.random.RandomState(np.random.PCG64(0))
        return make("RandomizedBudgetPerceptron", average=False, random_state=rng)

    one = est().partial_fit(X, y, classes=[0, 1])
    rows = _one_row_stream(est(), X, y, [0, 1])
    assert _one_row._ONE_ROW[rows].hooks == "python"
    assert fitted(rows) == fitted(one)


def state_of(est):
    return pickle.dumps(sorted(vars(est).items()))


FAST = [n for n in ALL]
# The last hypothesis, and the average (the default of most).
AVERAGED = [(n, a) for n in ALL for a in (False, True)]
AVERAGED_IDS = [f"{n}-average={a}" for n, a in AVERAGED]


@pytest.mark.parametrize("name, average", AVERAGED, ids=AVERAGED_IDS)
def test_bad_one_row_calls_on_the_compiled_path(name, average):
    X, y = stream(60, n_features=3)
    est = make(name, average=average).partial_fit(X[:40], y[:40], classes=[0, 1])
    est.partial_fit(X[40:41], y[40:41])
    assert on_path(est)
    before = state_of(est)
    row = X[41:42].copy()
    bad = [
        (np.array([[np.nan, 0.0, 0.0]]), y[:1], "NaN"),
        (np.array([[0.0, -np.inf, 0.0]]), y[:1], "infinity"),
        (X[:1, :2].copy(), y[:1], "features"),
        (np.array([["a", "b", "c"]], dtype=object), y[:1], "convert|could not"),
        (row, np.array([7]), "not in classes"),
        (row, np.array(["a"]), "not in classes|Unknown label"),
        (row, np.array([0.5]), "Unknown label type"),
        (row, np.array([0, 1]), "inconsistent numbers of samples"),
        (sp.csr_matrix(X[:1, :2]), y[:1], "features"),
    ]
    for Xb, yb, message in bad:
        with pytest.raises(ValueError, match=message):
            est.partial_fit(Xb, yb)
        assert state_of(est) == before
        with pytest.raises(ValueError, match=message):
            est.partial_fit(Xb, yb, classes=np.array([0, 1]))
        assert state_of(est) == before
    with pytest.raises(ValueError, match="classes="):
        est.partial_fit(row, y[:1], classes=np.array([0, 2]))
    assert state_of(est) == before


@pytest.mark.parametrize("name", FAST)
def test_any_one_row_layout_gives_the_same_model(name):
    # dtype, layout, read-only, lists, sparse: the values of the rows, not
    # their form, make the model; the caller's rows are never changed.
    X, y = stream(60, n_features=3)
    reference = make(name, average=False).partial_fit(X, y, classes=[0, 1])
    wide = np.asfortranarray(np.repeat(X, 2, axis=1))
    readonly = X.copy()
    readonly.flags.writeable = False
    formats = {
        "C": lambda i: X[i : i + 1].copy(),
        "strided": lambda i: wide[i : i + 1, ::2],
        "fortran": lambda i: np.asfortranarray(X[i : i + 1]),
        "read-only": lambda i: readonly[i : i + 1],
        "list": lambda i: X[i : i + 1].tolist(),
        "labels as list": lambda i: X[i : i + 1].copy(),
        "int32 labels": lambda i: X[i : i + 1].copy(),
    }
    if name != "BudgetedSGDClassifier":  # merging takes dense input only
        formats["csr"] = lambda i: sp.csr_matrix(X[i : i + 1])
    for fmt, row in formats.items():
        est = make(name, average=False).partial_fit(X[:20], y[:20], classes=[0, 1])
        for i in range(20, 60):
            r = row(i)
            copy = pickle.dumps(r.toarray() if sp.issparse(r) else r)
            label = y[i : i + 1]
            if fmt == "labels as list":
                label = label.tolist()
            elif fmt == "int32 labels":
                label = label.astype(np.int32)
            est.partial_fit(r, label)
            assert pickle.dumps(r.toarray() if sp.issparse(r) else r) == copy, fmt
        if fmt == "csr":
            # A sparse row of a dense stream: converted, the same values.
            np.testing.assert_allclose(est.dual_coef_, reference.dual_coef_, rtol=1e-12)
            continue
        assert fitted(est) == fitted(reference), fmt


class _FailingMargins(Exception):
    pass


@pytest.mark.parametrize("name, average", AVERAGED, ids=AVERAGED_IDS)
def test_a_failure_after_the_round_undoes_it(name, average, monkeypatch):
    # The round has changed the state arrays when the hook that records its
    # margin fails: everything is put back, and the stream goes on.
    X, y = stream(80, n_features=3)
    est = make(name, average=average).partial_fit(X[:40], y[:40], classes=[0, 1])
    ref = make(name, average=average).partial_fit(X[:40], y[:40], classes=[0, 1])
    calls = {"n": 0}
    original = _base.BaseKernelOnlineClassifier._record_margins

    def record(self, *args):
        calls["n"] += 1
        if calls["n"] % 2:
            raise _FailingMargins
        return original(self, *args)

    monkeypatch.setattr(type(est), "_record_margins", record)
    # Averaged models record every fourth round of the stream.
    every = 4 if est._averages else 1
    for i in range(40, 80):
        before = state_of(est)
        if (i + 1) % every == 0:
            with pytest.raises(_FailingMargins):
                est.partial_fit(X[i : i + 1], 1 - y[i : i + 1])  # a mistake: an update
            assert state_of(est) == before
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    assert on_path(est)
    monkeypatch.undo()
    ref.partial_fit(X[40:80], y[40:80])
    assert fitted(est) == fitted(ref)


# The removal rules: with the average, the members that leave are folded
# into the average after the compiled round (Python's work).
REMOVING = _instances.names("removes_members")


@pytest.mark.parametrize("average", [True, "exact"])
@pytest.mark.parametrize("name", REMOVING)
def test_an_interrupt_in_the_fold_undoes_the_round(name, average, monkeypatch):
    # Each fold of the members that left into the pool of the average (and
    # each compression of the pool) is interrupted once after it changed the
    # model: the call is undone entirely (the compiled round, the pool), and
    # played again it gives the model of one call.
    X, y = stream(300)
    est = make(name, average=average).partial_fit(X[:100], y[:100], classes=[0, 1])
    ref = make(name, average=average).partial_fit(X, y, classes=[0, 1])
    played = count_compiled_rounds(monkeypatch)
    base = _base.BaseKernelOnlineClassifier
    calls = {"_fold_retired": 0}

    def interrupted(what):
        original = getattr(base, what)

        def method(self, *args):
            original(self, *args)
            calls[what] += 1
            if calls[what] % 2:
                raise KeyboardInterrupt

        return method

    for what in calls:
        monkeypatch.setattr(base, what, interrupted(what))
    undone = 0
    for i in range(100, 300):
        before = state_of(est)
        while True:
            try:
                est.partial_fit(X[i : i + 1], y[i : i + 1])
                break
            except KeyboardInterrupt:
                assert state_of(est) == before
                undone += 1
    assert calls["_fold_retired"] > 10
    assert undone == sum((n + 1) // 2 for n in calls.values())
    assert played["n"] > 200
    monkeypatch.undo()
    assert fitted(est) == fitted(ref)
    np.testing.assert_allclose(est.proba_scale_, ref.proba_scale_, rtol=1e-10)


@pytest.mark.parametrize("name", ALL)
def test_the_averaged_compiled_path_records_the_margins_of_the_average(name, monkeypatch):
    # Averaged: every fourth row's recorded margin is its margin under the
    # average of the rounds so far, as _play records it: the same
    # computation (_margins.average_margin), so the same bins, bit for bit.
    n_classes = 3 if name == "Projectron" else 2
    X, y = stream(300, n_classes=n_classes)
    classes = np.unique(y)
    fast = _one_row_stream(make(name, average=True), X, y, classes)
    assert on_path(fast)
    _without_one_row_path(monkeypatch)
    lean = _one_row_stream(make(name, average=True), X, y, classes)
    assert not on_path(lean)
    for key in (
        "cal_counts",
        "cal_sums",
        "cal_n",
        "counters",
        "scale",
        "pool_n",
    ):
        np.testing.assert_array_equal(fast._state[key], lean._state[key], err_msg=key)
    assert fitted(fast) == fitted(lean)


@pytest.mark.parametrize("name, average", AVERAGED, ids=AVERAGED_IDS)
def test_non_finite_coefficients_on_the_compiled_path_change_nothing(name, average):
    X, y = stream(60, n_features=3)
    est = make(name, average=average).partial_fit(X[:30], y[:30], classes=[0, 1])
    est.set_params(class_weight={0: 1.0, 1: 1e308})
    for i in range(30, 60):
        before = state_of(est)
        try:
            est.partial_fit(X[i : i + 1], np.array([1]))
        except ValueError as exc:
            assert "Non-finite" in str(exc)
            assert state_of(est) == before
    # The sums of the average overflow with the rounds that follow a huge
    # coefficient: such a call is refused too.
    assert np.isfinite(est.dual_coef_).all()


@pytest.mark.parametrize("name", ["KernelPassiveAggressive", "Forgetron", "ProjectronPlusPlus"])
def test_parameters_changed_between_one_row_calls_take_effect(name):
    X, y = stream(200)
    param, values = {
        "KernelPassiveAggressive": ("C", [1.0, 0.1, 3.0]),
        "Forgetron": ("shrink", ["self-tuned"]),  # a stream parameter: refused below
        "ProjectronPlusPlus": ("eta", [0.5, 0.05, 2.0]),
    }[name]
    rows = make(name, average=False).partial_fit(X[:50], y[:50], classes=[0, 1])
    ref = make(name, average=False).partial_fit(X[:50], y[:50], classes=[0, 1])
    for k, value in enumerate(values):
        sl = slice(50 + 50 * k, 100 + 50 * k)
        rows.set_params(**{param: value})
        ref.set_params(**{param: value})
        for i in range(sl.start, sl.stop):
            rows.partial_fit(X[i : i + 1], y[i : i + 1])
        ref.partial_fit(X[sl], y[sl])
    assert fitted(rows) == fitted(ref)
    if name == "Forgetron":
        rows.set_params(shrink=0.5)
        with pytest.raises(ValueError, match="fixed for the stream"):
            rows.partial_fit(X[:1], y[:1])
    rows.set_params(**{param: -1.0})
    with pytest.raises(ValueError, match=param):
        rows.partial_fit(X[:1], y[:1])


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("name", ["Forgetron", "RandomizedBudgetPerceptron", "Projectron"])
def test_pickled_mid_stream_the_one_row_path_is_rebuilt(name, average):
    X, y = stream(300)
    one = make(name, average=average).partial_fit(X, y, classes=[0, 1])
    rows = _one_row_stream(make(name, average=average), X[:150], y[:150], [0, 1])
    assert "OneRow" not in repr(vars(rows))
    rows = pickle.loads(pickle.dumps(rows))
    assert not on_path(rows)
    for i in range(150, 300):
        rows.partial_fit(X[i : i + 1], y[i : i + 1])
    assert on_path(rows)
    assert fitted(rows) == fitted(one)


def test_a_fit_between_one_row_calls_starts_afresh():
    X, y = stream(200)
    est = make("Forgetron", average=False)
    _one_row_stream(est, X[:100], y[:100], [0, 1])
    est.fit(X[100:], y[100:])
    _one_row_stream(est, X[:100], y[:100], [0, 1])
    ref = make("Forgetron", average=False).fit(X[100:], y[100:])
    ref.partial_fit(X[:100], y[:100])
    assert fitted(est) == fitted(ref)


WINNOW = [{}, {"average": True}, {"balanced": True, "class_weight": {0: 2.0}}]


@pytest.mark.parametrize("kw", WINNOW)
def test_winnow_one_row_calls_give_the_model_of_one_call(kw):
    X, y = stream(500, n_features=6)
    one = sklearn_budget.Winnow(**kw).partial_fit(X, y, classes=[0, 1])
    rows = _one_row_stream(sklearn_budget.Winnow(**kw), X, y, [0, 1])
    names = ["coef_", "intercept_", "log_scale_", "n_mistakes_"]
    assert pickle.dumps([getattr(rows, n) for n in names]) == pickle.dumps(
        [getattr(one, n) for n in names]
    )
    np.testing.assert_array_equal(rows._state["theta"], one._state["theta"])
    np.testing.assert_allclose(rows.proba_scale_, one.proba_scale_, rtol=1e-10)


def test_winnow_bad_one_row_calls_change_nothing():
    X, y = stream(60, n_features=3)
    est = sklearn_budget.Winnow().partial_fit(X, y, classes=[0, 1])
    before = state_of(est)
    for Xb, yb, message in [
        (np.array([[np.nan, 0.0, 0.0]]), y[:1], "NaN"),
        (X[:1, :2].copy(), y[:1], "features"),
        (X[:1].copy(), np.array([7]), "not in classes"),
        (X[:1].copy(), np.array([0.5]), "Unknown label type"),
    ]:
        with pytest.raises(ValueError, match=message):
            est.partial_fit(Xb, yb)
        assert state_of(est) == before


@pytest.mark.parametrize(
    "name", ["Forgetron", "RandomizedBudgetPerceptron", "BudgetedSGDClassifier"]
)
def test_calls_of_fewer_rounds_than_the_budget_leave_the_average_to_the_first_read(
    name, monkeypatch
):
    # Publishing the average within the budget compresses its pool (about
    # the cost of `budget` rounds): calls of fewer rounds leave it to the
    # first read, longer calls and fits publish before they return. The
    # model read is the same either way.
    publishes = []
    cls = type(make(name))
    original = cls._publish

    def counting(self):
        publishes.append(self._n_seen)
        return original(self)

    monkeypatch.setattr(cls, "_publish", counting)
    X, y = stream(400)
    chunks = make(name, average=True)
    for start in range(0, 400, 10):  # 10 rows a call, budget 12
        chunks.partial_fit(X[start : start + 10], y[start : start + 10], classes=[0, 1])
    assert publishes == []
    read = fitted(chunks)
    assert publishes == [400]
    whole = make(name, average=True).partial_fit(X, y, classes=[0, 1])
    assert publishes == [400, 400]  # published by the call itself
    assert fitted(whole) == read
    publishes.clear()
    fitted(whole)
    assert publishes == []
    fit = make(name, average=True, max_iter=1).fit(X[:100], y[:100])
    assert publishes == [100]
    fitted(fit)
    assert publishes == [100]
