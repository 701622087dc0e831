"""The shortcuts of the one-row path give what the slow path gives.

Each shortcut that saves work per round (``_one_row.py``,
``_one_row_fast.pyx``, ``_pool.pyx``) is compared here with the computation
it replaces, bit for bit.
"""

import math
import pickle

import _instances
import numpy as np
import pytest

from sklearn_budget import _one_row
from sklearn_budget._pool import average_finite


def numpy_average_finite(acc, alpha, stamp, clock, n, pool_coef, m):
    """The test of finite averaged sums as numpy computes it (the slow path)."""
    with np.errstate(all="ignore"):
        sums = acc[:n] + alpha[:n] * (clock - stamp[:n])[:, None]
    return bool(np.isfinite(sums).all() and np.isfinite(pool_coef[:m]).all())


def test_average_finite_on_hand_made_sums():
    acc = np.array([[1.0, -2.0], [3.0, 4.0], [np.inf, 0.0]])
    alpha = np.array([[0.5, 0.5], [1e300, 1.0], [0.0, 0.0]])
    stamp = np.array([1.0, 2.0, 0.0])
    pool = np.array([[1.0, 1.0], [np.nan, 0.0]])
    # The third member and the second pool row are beyond the counts.
    assert average_finite(acc, alpha, stamp, 2.0, 2, pool, 1) is True
    # 1e300 * (1e10 - 2) overflows in the second member's sum.
    assert average_finite(acc, alpha, stamp, 1e10, 2, pool, 1) is False
    assert average_finite(acc, alpha, stamp, 2.0, 3, pool, 1) is False
    assert average_finite(acc, alpha, stamp, 2.0, 2, pool, 2) is False
    assert average_finite(acc, alpha, stamp, 2.0, 0, pool, 0) is True


def test_average_finite_is_the_numpy_test():
    rng = np.random.RandomState(0)
    for trial in range(200):
        n, m, R = rng.randint(0, 6), rng.randint(0, 6), rng.randint(1, 4)
        acc = rng.randn(n + 2, R) * 10.0 ** rng.randint(0, 309, size=(n + 2, R))
        alpha = rng.randn(n + 2, R) * 10.0 ** rng.randint(0, 309, size=(n + 2, R))
        stamp = rng.randint(0, 100, size=n + 2).astype(float)
        pool = rng.randn(m + 1, R)
        if trial % 3 == 0:
            pool[rng.randint(m + 1), rng.randint(R)] = rng.choice([np.inf, -np.inf, np.nan])
        clock = float(rng.choice([100.0, 1e10]))
        args = (acc, alpha, stamp, clock, n, pool, m)
        assert average_finite(*args) is numpy_average_finite(*args)


def averaged_stream(name, n=300, kernel="rbf"):
    rng = np.random.RandomState(0)
    X = rng.randn(n, 3)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    est = _instances.make(name, random_state=0, gamma=0.5, budget=10, kernel=kernel)
    est.partial_fit(X[:1], y[:1], classes=[0, 1])
    for i in range(1, n):
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    return est, X, y


@pytest.mark.parametrize("name", ["Forgetron", "RandomizedBudgetPerceptron"])
def test_the_compiled_test_of_the_average_is_the_estimators(name):
    est, _, _ = averaged_stream(name)
    path = _one_row.current_path(est)
    assert path is not None and path.fast.averaged
    assert int(est._state["pool_n"][0]) > 0
    assert path.fast.average_finite() is True
    assert est._average_is_finite() is True
    # A member's sum that overflows once brought to the clock, then a pool
    # sum that is not finite: both tests see them.
    alpha = est._state["alpha"]
    saved = alpha[0].copy()
    alpha[0] = 1e308
    assert path.fast.average_finite() is False
    assert est._average_is_finite() is False
    alpha[0] = saved
    pool = est._state["pool_coef"]
    pool[0, 0] = np.nan
    assert path.fast.average_finite() is False
    assert est._average_is_finite() is False


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("name", ["FourierOnlineClassifier", "NystroemOnlineClassifier"])
def test_river_events_of_the_feature_estimators_are_one_row_calls(name, average, monkeypatch):
    # River's events of FOGD and NOGD skip the validation of their label:
    # the model of one-row partial_fit calls of the same rows, bit for bit,
    # and every event but the first takes that path.
    sbr = pytest.importorskip("sklearn_budget.river")
    rng = np.random.RandomState(0)
    X = rng.randn(300, 3)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    labels = np.array(["no", "yes"])[y]
    params = dict(random_state=0, budget=20, gamma=0.5, average=average)
    model = getattr(sbr, name)(classes=("no", "yes"), **params)
    cls = type(model)._estimator_class
    played = []
    original = cls._play_one_row

    def play(self, *args):
        played.append(1)
        return original(self, *args)

    monkeypatch.setattr(cls, "_play_one_row", play)
    for row, label in zip(X, labels):
        model.learn_one({"a": row[0], "b": row[1], "c": row[2]}, str(label))
    events = len(played)
    ref = cls(**params)
    ref.partial_fit(X[:1], labels[:1], classes=np.array(["no", "yes"]))
    for i in range(1, len(X)):
        ref.partial_fit(X[i : i + 1], labels[i : i + 1])
    assert events == len(X) - 1
    assert len(played) == 2 * len(X) - 2  # the reference's one-row calls
    est = model.estimator_
    for key, a in ref._state.items():
        np.testing.assert_array_equal(est._state[key], a, err_msg=key)
    np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(X))
    np.testing.assert_array_equal(est.predict_proba(X), ref.predict_proba(X))


def test_odd_and_bad_river_events_of_a_feature_estimator():
    # Values the event path does not take go through partial_fit: the
    # model of the numbers they stand for, or partial_fit's error with the
    # model left as it was.
    sbr = pytest.importorskip("sklearn_budget.river")
    rng = np.random.RandomState(1)
    X = rng.randn(60, 2)
    y = X[:, 0] > 0
    model = sbr.FourierOnlineClassifier(random_state=0, budget=10, gamma=0.5)
    ref = sbr.FourierOnlineClassifier(random_state=0, budget=10, gamma=0.5)
    for i, (row, label) in enumerate(zip(X, y)):
        plain = {"f0": float(row[0]), "f1": float(row[1])}
        odd = {"f0": str(row[0]), "f1": np.float32(row[1]), "extra": "ignored"}
        if i >= 30:
            plain["f1"] = float(np.float32(row[1]))
        model.learn_one(odd if i >= 30 else plain, bool(label))
        ref.learn_one(plain, bool(label))
    for key, a in ref.estimator_._state.items():
        np.testing.assert_array_equal(model.estimator_._state[key], a, err_msg=key)
    before = pickle.dumps(model)
    for bad, match in [(float("inf"), "infinity"), (None, "NaN|float"), ("text", "convert")]:
        with pytest.raises((ValueError, TypeError), match=match):
            model.learn_one({"f0": bad}, True)
    assert pickle.dumps(model) == before


# The removal rules: with the average, the members that leave a one-row
# call's round are appended to the pool of the average in compiled code
# (OneRow.fold) while the pool has room and is not due for compression.
REMOVING = _instances.names("removes_members")


def _fold_stream(name, average, monkeypatch, compiled):
    """A one-row stream of ``name``, the compiled fold on or off, and how
    many folds Python made (``_fold_retired``)."""
    calls = {"n": 0}
    cls = type(_instances.make(name))
    original = cls._fold_retired

    def fold(self, *args):
        calls["n"] += 1
        return original(self, *args)

    with monkeypatch.context() as m:
        m.setattr(cls, "_fold_retired", fold)
        if compiled:
            # A wrapped _fold_retired turns the compiled fold off: back on.
            init = _one_row._OneRowPath.__init__

            def init_on(self, est):
                init(self, est)
                self.fold = True

            m.setattr(_one_row._OneRowPath, "__init__", init_on)
        rng = np.random.RandomState(3)
        X = rng.randn(600, 3)
        y = (X[:, 0] * X[:, 1] > 0).astype(int)
        est = _instances.make(name, random_state=0, gamma=0.5, budget=10, average=average)
        est.partial_fit(X[:1], y[:1], classes=[0, 1])
        for i in range(1, len(y)):
            est.partial_fit(X[i : i + 1], y[i : i + 1])
        assert type(_one_row._ONE_ROW.get(est)) is _one_row._OneRowPath
    return est, X, calls["n"]


@pytest.mark.parametrize("average", [True, "exact"])
@pytest.mark.parametrize("name", REMOVING)
def test_the_compiled_fold_is_the_python_fold(name, average, monkeypatch):
    fast, X, fast_folds = _fold_stream(name, average, monkeypatch, compiled=True)
    slow, _, slow_folds = _fold_stream(name, average, monkeypatch, compiled=False)
    # The slow path folds every removal in Python; the compiled one only
    # those that grow or compress the pool.
    assert slow_folds > 50
    assert fast_folds < slow_folds / 4
    assert fast._state.keys() == slow._state.keys()
    for key, a in slow._state.items():
        # Every array whole, the rows of the pool beyond its count included.
        b = fast._state[key]
        assert a.dtype == b.dtype and np.array_equal(a, b), key
    for attr in ("support_vectors_", "dual_coef_", "support_", "proba_scale_"):
        assert np.array_equal(getattr(fast, attr), getattr(slow, attr)), attr
    np.testing.assert_array_equal(fast.decision_function(X), slow.decision_function(X))


class _FailingFast:
    """A one-row path's compiled object whose test of the average raises
    KeyboardInterrupt after every other round that folded members into
    the pool in compiled code (a failure after the fold)."""

    def __init__(self, fast, est, counts):
        object.__setattr__(self, "_fast", fast)
        object.__setattr__(self, "_est", est)
        object.__setattr__(self, "_counts", counts)

    def __getattr__(self, name):
        return getattr(self._fast, name)

    def __setattr__(self, name, value):
        setattr(self._fast, name, value)

    def begin(self, eager):
        self._counts["folded"] = False
        self._fast.begin(eager)

    def fold(self):
        before = int(self._est._state["pool_n"][0])
        done = self._fast.fold()
        self._counts["folded"] = done and int(self._est._state["pool_n"][0]) > before
        return done

    def average_finite(self):
        finite = self._fast.average_finite()
        _fail_after_fold(self._counts)
        return finite


def _fail_after_fold(counts):
    """Raise KeyboardInterrupt on every other round that folded in compiled
    code (the second attempt of a call goes through)."""
    if counts["folded"]:
        counts["fail"] = not counts["fail"]
        if counts["fail"]:
            counts["undone"] += 1
            raise KeyboardInterrupt


def _xor_stream(name, average, seed, n_rows, n_first):
    """Rows of an xor rule; the estimator after the first ``n_first`` of
    them, and a reference fitted on all of them in one call."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n_rows, 3)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    params = dict(random_state=0, gamma=0.5, budget=10, average=average)
    est = _instances.make(name, **params).partial_fit(X[:n_first], y[:n_first], classes=[0, 1])
    ref = _instances.make(name, **params).partial_fit(X, y, classes=[0, 1])
    return X, y, est, ref


@pytest.mark.parametrize("average", [True, "exact"])
@pytest.mark.parametrize("name", REMOVING)
def test_an_interrupt_after_the_compiled_fold_undoes_the_round(name, average, monkeypatch):
    # The compiled fold has appended the members that left to the pool
    # (in place) when the call is interrupted: the round and the fold are
    # undone, every array whole as it was, and played again the rows give
    # the model of one call.
    X, y, est, ref = _xor_stream(name, average, seed=4, n_rows=400, n_first=50)
    counts = {"folded": False, "fail": False, "undone": 0}
    # Rules with hooks of their own test the average in Python: it fails there.
    test = type(est)._average_is_finite

    def average_is_finite(self):
        finite = test(self)
        _fail_after_fold(counts)
        return finite

    monkeypatch.setattr(type(est), "_average_is_finite", average_is_finite)
    for i in range(50, 400):
        while True:
            before = pickle.dumps(sorted(vars(est).items()))
            path = _one_row.current_path(est)
            if type(path.fast) is not _FailingFast:
                path.fast = _FailingFast(path.fast, est, counts)
            try:
                est.partial_fit(X[i : i + 1], y[i : i + 1])
                break
            except KeyboardInterrupt:
                assert pickle.dumps(sorted(vars(est).items())) == before
    assert counts["undone"] > 20
    monkeypatch.undo()
    for key, a in ref._state.items():
        b = est._state[key]
        assert np.array_equal(a[: len(b)], b[: len(a)]), key
    for attr in ("support_vectors_", "dual_coef_", "support_"):
        assert np.array_equal(getattr(est, attr), getattr(ref, attr)), attr


@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "poly"])
def test_the_diagonal_of_a_one_row_call(kernel, monkeypatch):
    # Where k(x, x) is 1 for every row, a one-row call does not ask the
    # kernel: the value it would give, and the model of the calls that ask.
    from sklearn_budget._kernels import Kernel

    rng = np.random.RandomState(5)
    X = rng.randn(300, 3) * np.array([1.0, 1e3, 1e-3])
    y = (X[:, 0] > 0).astype(int)
    if kernel in _one_row._UNIT_DIAGONAL:
        np.testing.assert_array_equal(Kernel(kernel, gamma=0.7).diag(X), np.ones(len(X)))
    X = X / 1e3
    params = dict(random_state=0, kernel=kernel, gamma=0.5, budget=10, degree=2)

    def rows():
        est = _instances.make("Forgetron", **params)
        est.partial_fit(X[:1], y[:1], classes=[0, 1])
        for i in range(1, len(y)):
            est.partial_fit(X[i : i + 1], y[i : i + 1])
        return est, _one_row.current_path(est)

    fast, path = rows()
    assert path.kxx == (1.0 if kernel != "poly" else None)
    # A stand-in for Kernel.diag is asked.
    asked = []
    original = Kernel.diag
    monkeypatch.setattr(Kernel, "diag", lambda k, X: asked.append(1) or original(k, X))
    fast.partial_fit(X[:1], y[:1])
    assert asked
    monkeypatch.undo()
    fast, path = rows()
    monkeypatch.setattr(_one_row, "_UNIT_DIAGONAL", ())
    slow, path = rows()
    assert path.kxx is None
    for key, a in slow._state.items():
        assert np.array_equal(fast._state[key], a), key
    one = _instances.make("Forgetron", **params).partial_fit(X, y, classes=[0, 1])
    for attr in ("support_vectors_", "dual_coef_", "support_"):
        assert np.array_equal(getattr(fast, attr), getattr(one, attr)), attr


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("name", ["Forgetron", "RandomizedBudgetPerceptron", "BudgetPerceptron"])
def test_an_interrupt_at_the_end_of_a_one_row_call_changes_nothing(name, average):
    # The transaction of a one-row call records the attributes the call
    # sets (_one_row._ATTRIBUTES) where no Python code of the rule takes
    # part: an interrupt after the last of them is set puts everything back.
    X, y, est, ref = _xor_stream(name, average, seed=6, n_rows=200, n_first=20)
    est.partial_fit(X[20:21], y[20:21])
    interrupted = 0
    for i in range(21, 200):
        # (An undone fold that grew or compressed the pool puts back its
        # arrays: the path is built again.)
        path = _one_row.current_path(est)
        assert (path.attributes is _one_row._ATTRIBUTES) == (path.hooks != "python")
        before = pickle.dumps(sorted(vars(est).items()))
        fast, path.fast = path.fast, _InterruptAtTheEnd(path.fast)
        with pytest.raises(KeyboardInterrupt):
            est.partial_fit(X[i : i + 1], y[i : i + 1])
        interrupted += 1
        assert pickle.dumps(sorted(vars(est).items())) == before
        path.fast = fast
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    assert interrupted == 179
    for attr in ("support_vectors_", "dual_coef_", "support_", "n_mistakes_"):
        assert np.array_equal(getattr(est, attr), getattr(ref, attr)), attr


class _InterruptAtTheEnd:
    """A one-row path's compiled object that raises KeyboardInterrupt when
    the call marks itself done (its last step)."""

    def __init__(self, fast):
        object.__setattr__(self, "_fast", fast)

    def __getattr__(self, name):
        return getattr(self._fast, name)

    def __setattr__(self, name, value):
        if name == "active" and value is False:
            raise KeyboardInterrupt
        setattr(self._fast, name, value)


def _scale_by_the_steps(counts, sums, n_c, start, min_scale, ends=None):
    """The scale of ``_margins.fit_temperature``, step by step in Python,
    every slope computed anew: the computation its memory of the last
    slopes replaces (the same IEEE operations, so the same bits).
    ``ends``: a list to which the fit appends how Newton's steps ended."""
    C = counts.shape[0]
    offset = math.log(C - 1 if C > 2 else 1)
    n, t, m = [], [], []
    for c in range(C):
        target = (n_c[c] + 1.0) / (n_c[c] + 2.0)
        for b in range(counts.shape[1]):
            if counts[c, b] > 0.0:
                n.append(float(counts[c, b]))
                t.append(target)
                m.append(float(sums[c, b] / counts[c, b]))
    if not n or not any(v != 0.0 for v in m):
        return min_scale
    mmax = max(abs(v) for v in m)

    def slope(a):
        gs = hs = 0.0
        for ni, ti, mi in zip(n, t, m):
            x = a * mi - offset
            if x >= 0.0:
                p = 1.0 / (1.0 + math.exp(-x))
            else:
                e = math.exp(x)
                p = e / (1.0 + e)
            gs += ni * (ti - p) * mi
            hs += ni * p * (1.0 - p) * mi * mi
        return gs, hs

    g, h = slope(0.0)
    if g <= 0.0:
        return min_scale / mmax
    lo, hi = 0.0, 1.0 / mmax
    warm = math.isfinite(start) and start > 0.0
    if warm:
        g, h = slope(start)
        if g > 0.0:
            lo, hi = start, 1.25 * start
            g, h = slope(hi)
            if g > 0.0:
                warm = False
            while g > 0.0 and hi < 1e300:
                lo, hi = hi, 1.25 * hi
                g, h = slope(hi)
        else:
            lo, hi = 0.8 * start, start
            g, h = slope(lo)
            while g <= 0.0 and lo > 1e-300:
                lo, hi = 0.8 * lo, lo
                g, h = slope(lo)
            if not lo > 1e-300:
                lo = 0.0
    g, h = slope(hi)
    while g > 0.0 and hi < 1e300:
        lo, hi = hi, 2.0 * hi
        g, h = slope(hi)
    a = start if warm and lo <= start <= hi else 0.5 * (lo + hi)
    for _ in range(200):
        g, h = slope(a)
        if g > 0.0:
            lo = a
        else:
            hi = a
        step = a + g / h if h > 0.0 else math.nan
        a_new = step if lo < step < hi or step == a else 0.5 * (lo + hi)
        if abs(a_new - a) <= 1e-12 * a_new or lo == hi:
            if ends is not None:
                ends.append("no step" if step == a else "converged")
            return a_new
        a = a_new
    return a


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_scale_remembers_its_slopes_to_the_last_bit(n_classes):
    # The fit of the probability scale evaluates each slope once, where the
    # bracket and Newton's first step come back to a point: the scale of
    # the steps that evaluate every slope anew, bit for bit, cold and from
    # starts below, at and above the root (the hints of a stream).
    from sklearn_budget._margins import fit_temperature

    rng = np.random.RandomState(7)
    X = rng.randn(1500, 2)
    y = np.argmax(X @ rng.randn(2, n_classes) + rng.randn(1500, n_classes), axis=1)
    est = _instances.make("Forgetron", random_state=0, gamma=0.5, budget=20)
    est.partial_fit(X, y, classes=np.arange(n_classes))
    bins = [est._state[k] for k in ("cal_counts", "cal_sums", "cal_n")]
    root = fit_temperature(*bins, np.nan, 1e-6)
    assert root == _scale_by_the_steps(*bins, np.nan, 1e-6)
    for start in [root, 0.5 * root, 0.99 * root, 1.01 * root, 3 * root, 1e-9, 1e9]:
        assert fit_temperature(*bins, start, 1e-6) == _scale_by_the_steps(*bins, start, 1e-6)


def _sparse_bins(n_classes, used, values):
    """Bins of ``n_classes`` classes, 0 but at the flat indices ``used``."""
    rng = np.random.RandomState(3)
    counts = np.zeros((n_classes, 2048))
    sums = np.zeros((n_classes, 2048))
    counts.flat[used] = values
    sums.flat[used] = rng.randn(len(used)) * np.maximum(values, 1.0)
    return counts, sums, np.arange(1.0, n_classes + 1.0) * 50


@pytest.mark.parametrize(
    "used, values",
    [
        # The first and last bins of each class, the edges of the blocks
        # the scan skips (16 bins), a lone bin in a block.
        ([0, 15, 16, 31, 1000, 2047, 2048, 2063, 3000, 4095], None),
        # A bin whose count is -0.0 (bits not zero, not counted), one that
        # is subnormal (counted), one negative (not counted).
        ([5, 17, 18, 900, 2100], [-0.0, 5e-324, -3.0, 2.0, 7.0]),
        # A single bin, and none.
        ([2047], None),
        ([], None),
    ],
)
def test_the_scan_of_the_scale_keeps_the_bins_of_a_test_of_each(used, values):
    # fit_temperature skips the blocks of bins whose bits are all zero: the
    # scale of the steps that test every bin, bit for bit.
    from sklearn_budget._margins import fit_temperature

    rng = np.random.RandomState(0)
    values = rng.uniform(0.5, 40.0, len(used)) if values is None else np.array(values)
    for n_classes in (2, 3):
        flat = [i for i in used if i < n_classes * 2048]
        bins = _sparse_bins(n_classes, flat, values[: len(flat)])
        for start in [np.nan, 0.3, 3.0]:
            expected = _scale_by_the_steps(*bins, start, 1e-6)
            assert fit_temperature(*bins, start, 1e-6) == expected


def test_a_newton_step_that_rounds_to_nothing_ends_the_fit():
    # The fits of the scale along a progressive validation, from the last
    # scale: the steps in Python, bit for bit, some of them ending on a
    # Newton step that rounds to nothing (step == a), which used to bisect
    # some thirty more times.
    from sklearn_budget._calibration import SCALE_HINTS
    from sklearn_budget._margins import fit_temperature
    from sklearn_budget.datasets import make_two_gaussians
    from sklearn_budget.river import Forgetron

    X, y = make_two_gaussians(1000, random_state=0)
    model = Forgetron(budget=20, random_state=0)
    ends = []
    for row, label in zip(X, y.tolist()):
        x = {0: float(row[0]), 1: float(row[1])}
        est = model.estimator_
        if est is not None and est._state["counters"][1] % 4 == 0:
            bins = [est._state[k] for k in ("cal_counts", "cal_sums", "cal_n")]
            start = SCALE_HINTS.get(est, np.nan)
            expected = _scale_by_the_steps(*bins, start, 1e-6, ends)
            assert fit_temperature(*bins, start, 1e-6) == expected
        model.predict_proba_one(x)
        model.learn_one(x, label == 1)
    assert ends.count("no step") >= 5
    assert ends.count("converged") >= 5


@pytest.mark.parametrize("n_classes", [2, 3])
def test_river_refits_the_scale_as_proba_scale_does(n_classes, monkeypatch):
    # predict_proba_one refits the scale on the compiled path's bins: the
    # value est.proba_scale_ publishes, from the same start (the last scale
    # of the stream), at every refit of a progressive validation.
    from sklearn_budget._calibration import SCALE_HINTS, fit_scale
    from sklearn_budget.river import Forgetron

    rng = np.random.RandomState(1)
    X = rng.randn(300, 2)
    y = np.argmax(X @ rng.randn(2, n_classes) + 0.5 * rng.randn(300, n_classes), axis=1)
    model = Forgetron(budget=10, classes=tuple(range(n_classes)), random_state=0)
    refits = 0
    # The refits are the compiled call's (OneRow.proba_event), not Python's,
    # and a learnt event keeps the entry of the published attributes (its
    # weak reference), which the next refit fills.
    python_fits = []
    original = _one_row._OneRowPath._published_scale

    def published_scale(path, est):
        python_fits.append(est)
        return original(path, est)

    monkeypatch.setattr(_one_row._OneRowPath, "_published_scale", published_scale)
    entries, refs, kept = _one_row._transaction._PUBLISHED.entries, [], 0
    for row, label in zip(X, y.tolist()):
        x = {0: float(row[0]), 1: float(row[1])}
        est, path = model.estimator_, None
        if est is not None:
            start = SCALE_HINTS.get(est)
            path = _one_row._ONE_ROW.get(est)
            t = None if path is None else path.fast.scale_round
            expected = fit_scale(est._state, start)
        model.predict_proba_one(x)
        if path is not None and path.fast.scale_round != t:
            refits += 1
            assert path.fast.scale_value == expected
            assert SCALE_HINTS[est] == expected
            assert _one_row._transaction.published(est)["proba_scale_"] == expected
        model.learn_one(x, label)
        entry = entries.get(id(model.estimator_))
        if entry is not None:
            kept += 1
            if not any(ref is entry[0] for ref in refs):
                refs.append(entry[0])
    assert refits > 50
    assert len(python_fits) <= 1
    # The calls that grow the buffers (Python's transaction) drop it.
    assert kept > 250 and len(refs) <= 10


@pytest.mark.parametrize("rows", [4, 1, 0])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("name", ["Forgetron", "BudgetPerceptron"])
def test_the_journal_of_the_gram_matrix_undoes_the_round(name, average, rows, monkeypatch):
    # A one-row call journals the rows and columns of the Gram matrix that
    # its round overwrites instead of copying the matrix; past
    # GRAM_JOURNAL_ROWS of them it copies the matrix (rows=1: after the
    # first, rows=0: before any). Every call interrupted at its end puts
    # back the matrix whole, the entries past the members included.
    from sklearn_budget import _one_row_fast

    monkeypatch.setattr(_one_row_fast, "GRAM_JOURNAL_ROWS", rows)
    X, y, est, ref = _xor_stream(name, average, seed=8, n_rows=300, n_first=20)
    assert est._keeps_gram
    _one_row.forget(est)  # built again with the journal's size
    changed = 0
    for i in range(20, 300):
        path = _one_row.current_path(est)
        gram = est._state["gram"].copy()
        before = pickle.dumps(sorted(vars(est).items()))
        fast, path.fast = path.fast, _InterruptAtTheEnd(path.fast)
        with pytest.raises(KeyboardInterrupt):
            est.partial_fit(X[i : i + 1], y[i : i + 1])
        assert pickle.dumps(sorted(vars(est).items())) == before
        path.fast = fast
        est.partial_fit(X[i : i + 1], y[i : i + 1])
        changed += not np.array_equal(est._state["gram"], gram)
    # The rounds that changed the matrix were undone once each.
    assert changed > 30
    for key, a in ref._state.items():
        b = est._state[key]
        assert np.array_equal(a[: len(b)], b[: len(a)]), key
    for attr in ("support_vectors_", "dual_coef_", "support_", "n_mistakes_"):
        assert np.array_equal(getattr(est, attr), getattr(ref, attr)), attr


def test_the_weak_cache_is_a_weak_key_dictionary_of_estimators():
    # The caches kept beside the estimators (the published attributes, the
    # undo records, the one-row paths) behave as WeakKeyDictionary does for
    # objects compared by identity: an entry goes with its object, even
    # when another object then takes the same id.
    import gc

    from sklearn_budget._transaction import WeakCache

    cache = WeakCache()
    a, b = _instances.make("Forgetron"), _instances.make("Forgetron")
    cache[a] = 1
    cache[b] = 2
    cache[a] = 3  # replaced, one entry
    assert (cache[a], cache.get(b), len(cache)) == (3, 2, 2)
    assert a in cache and cache.get(object()) is None and cache.get(object(), 4) == 4
    assert cache.pop(b) == 2 and b not in cache and cache.pop(b, 5) == 5
    cache[b] = 6  # set again after a pop: dropped with b all the same
    for _ in range(50):
        del b
        gc.collect()
        assert len(cache) == 1
        b = _instances.make("Forgetron")  # may take the id of the last one
        assert b not in cache and cache.get(b) is None
        cache[b] = 7
    del a, b
    gc.collect()
    assert len(cache) == 0
    with pytest.raises(KeyError):
        cache[object()]


@pytest.mark.parametrize("n_bins", [5, 16, 37, 2048 + 9])
def test_the_scan_of_the_scale_tests_the_bins_past_the_last_block(n_bins):
    # The blocks the scan skips have 16 bins; the bins past the last whole
    # block (n_bins % 16 of them) are tested one by one: the scale of the
    # steps that test every bin, bit for bit, the last bin of each class in
    # use, and empty classes.
    from sklearn_budget._margins import fit_temperature

    rng = np.random.RandomState(n_bins)
    for n_classes in (2, 3):
        counts = np.zeros((n_classes, n_bins))
        sums = np.zeros((n_classes, n_bins))
        used = rng.rand(n_classes, n_bins) < 0.2
        used[0, -1] = True
        used[-1] = False  # an empty class
        counts[used] = rng.uniform(0.5, 40.0, used.sum())
        sums[used] = counts[used] * rng.uniform(-3.0, 3.0, used.sum())
        n_c = rng.uniform(1.0, 50.0, n_classes)
        for start in [np.nan, 0.3, 3.0]:
            expected = _scale_by_the_steps(counts, sums, n_c, start, 1e-6)
            assert fit_temperature(counts, sums, n_c, start, 1e-6) == expected
