"""The one-row path of FOGD and NOGD (``_ogd.OneRound``): the model of the
blocks to the last bit, and atomic wherever a call stops."""

import pickle

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_budget import FourierOnlineClassifier, NystroemOnlineClassifier
from sklearn_budget._linear_online import _ROUND_PATHS

CLASSES = [FourierOnlineClassifier, NystroemOnlineClassifier]


def _data(n, n_classes, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    if n_classes == 2:
        y = (np.hypot(X[:, 0], X[:, 1]) > 1.2).astype(int)
    else:
        y = np.digitize(X[:, 0], [-0.5, 0.5])
    return X, y


def _assert_same_model(a, b, X):
    assert set(a._state) == set(b._state)
    for key, v in b._state.items():
        np.testing.assert_array_equal(a._state[key], v, err_msg=key)
    for name in ("coef_", "dual_coef_", "support_", "support_vectors_", "n_components_"):
        if hasattr(b, name):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.n_mistakes_ == b.n_mistakes_
    assert a.proba_scale_ == b.proba_scale_
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def _counting_blocks(cls, monkeypatch):
    """Count the rows played by the blocks' path (``_play_block``)."""
    rows = []
    original = cls._play_block

    def play_block(self, X, block, cls, *args):
        rows.append(cls.shape[0])
        return original(self, X, block, cls, *args)

    monkeypatch.setattr(cls, "_play_block", play_block)
    return rows


@pytest.mark.parametrize(
    "cls, rule",
    [
        (FourierOnlineClassifier, {}),
        (NystroemOnlineClassifier, {"multi_class": "ovr"}),
        (NystroemOnlineClassifier, {"multi_class": "crammer_singer"}),
        # The penalty's factor of the weights before each step, on the same round.
        (NystroemOnlineClassifier, {"multi_class": "ovr", "alpha": 0.01}),
        (NystroemOnlineClassifier, {"multi_class": "crammer_singer", "alpha": 0.01}),
    ],
)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("average", [True, False])
def test_the_compiled_round_is_a_block_of_one_row(cls, rule, n_classes, average, monkeypatch):
    X, y = _data(400, n_classes)
    params = dict(budget=25, gamma=0.5, average=average, random_state=0, **rule)
    classes = np.arange(n_classes)
    whole = cls(**params).partial_fit(X, y, classes=classes)
    rows = cls(**params).partial_fit(X[:1], y[:1], classes=classes)
    blocks = _counting_blocks(cls, monkeypatch)
    for i in range(1, len(X)):
        rows.partial_fit(X[i : i + 1], y[i : i + 1])
    monkeypatch.undo()
    _assert_same_model(rows, whole, X)
    # FOGD: every later row on the compiled round; NOGD: those after the
    # map is built (the landmarks' phase is played by the blocks).
    if cls is FourierOnlineClassifier:
        assert blocks == []
    else:
        assert whole._projection is not None
        assert 25 <= len(blocks) < 200
    assert rows in _ROUND_PATHS


@pytest.mark.parametrize("cls", CLASSES)
def test_a_changed_parameter_is_validated_and_used(cls):
    X, y = _data(300, 2)
    params = dict(budget=20, gamma=0.5, random_state=0)
    rows = cls(**params).partial_fit(X[:150], y[:150], classes=[0, 1])
    blocks = cls(**params).partial_fit(X[:150], y[:150], classes=[0, 1])
    for i in range(150, 200):
        rows.partial_fit(X[i : i + 1], y[i : i + 1])
    blocks.partial_fit(X[150:200], y[150:200])
    state = {k: v.copy() for k, v in rows._state.items()}
    rows.learning_rate = -1.0
    with pytest.raises(InvalidParameterError, match="learning_rate"):
        rows.partial_fit(X[200:201], y[200:201])
    rows.learning_rate = 1.0
    rows.budget = 21
    with pytest.raises(ValueError, match="fixed for the stream"):
        rows.partial_fit(X[200:201], y[200:201])
    rows.budget = 20
    for k, v in state.items():
        np.testing.assert_array_equal(rows._state[k], v)
    # A new learning rate takes effect from the next row, as in the blocks.
    rows.learning_rate = blocks.learning_rate = 0.3
    for i in range(200, 300):
        rows.partial_fit(X[i : i + 1], y[i : i + 1])
    blocks.partial_fit(X[200:], y[200:])
    _assert_same_model(rows, blocks, X)


def test_a_changed_multiclass_rule_is_validated_and_used():
    X, y = _data(400, 3)
    params = dict(budget=20, gamma=0.5, random_state=0, multi_class="ovr")
    streams = [NystroemOnlineClassifier(**params) for _ in range(3)]
    for clf in streams:
        clf.partial_fit(X[:200], y[:200], classes=[0, 1, 2])
    rows, blocks, kept = streams
    assert rows._projection is not None  # the rows below play the compiled round
    state = {k: v.copy() for k, v in rows._state.items()}
    rows.multi_class = "crammer-singer"
    with pytest.raises(InvalidParameterError, match="multi_class"):
        rows.partial_fit(X[200:201], y[200:201])
    for k, v in state.items():
        np.testing.assert_array_equal(rows._state[k], v)
    # The new rule takes effect from the next row, one row at a time as in
    # the blocks.
    rows.multi_class = blocks.multi_class = "crammer_singer"
    for i in range(200, 400):
        rows.partial_fit(X[i : i + 1], y[i : i + 1])
    blocks.partial_fit(X[200:], y[200:])
    _assert_same_model(rows, blocks, X)
    kept.partial_fit(X[200:], y[200:])
    assert not np.array_equal(kept.dual_coef_, blocks.dual_coef_)


@pytest.mark.parametrize("cls", CLASSES)
def test_pickles_between_one_row_calls(cls):
    X, y = _data(300, 3)
    params = dict(budget=20, gamma=0.5, random_state=0)
    whole = cls(**params).partial_fit(X, y, classes=[0, 1, 2])
    rows = cls(**params).partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    for i in range(100, 300):
        if i % 40 == 0:
            rows = pickle.loads(pickle.dumps(rows))
        rows.partial_fit(X[i : i + 1], y[i : i + 1])
    _assert_same_model(rows, whole, X)


def _interrupt_at(cls, monkeypatch, where, after):
    """Make the next one-row call raise KeyboardInterrupt ``where``: before
    (``after=False``) or after the method runs."""
    original = getattr(cls, where)
    fired = []

    def method(self, *args):
        if not fired and not after:
            fired.append(1)
            raise KeyboardInterrupt
        out = original(self, *args)
        if not fired:
            fired.append(1)
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(cls, where, method)
    return fired


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize(
    "where, after",
    [
        ("_row_features", True),  # the features computed, nothing changed yet
        ("_end_of_call", False),  # the round played, nothing published
        ("_publish", True),  # everything done but the end of the call
        ("_end_of_call", True),
    ],
)
def test_an_interrupted_round_changes_nothing(cls, where, after, monkeypatch):
    X, y = _data(260, 3)
    params = dict(budget=20, gamma=0.5, average=True, random_state=0)
    clf = cls(**params).partial_fit(X[:200], y[:200], classes=[0, 1, 2])
    clf.partial_fit(X[200:201], y[200:201])  # the path is built
    assert clf in _ROUND_PATHS
    for i in range(201, 260):
        if i % 3 == 0:
            before = {k: v.copy() for k, v in clf._state.items()}
            attrs = dict(vars(clf))
            scale = clf.proba_scale_
            fired = _interrupt_at(cls, monkeypatch, where, after)
            with pytest.raises(KeyboardInterrupt):
                clf.partial_fit(X[i : i + 1], y[i : i + 1])
            monkeypatch.undo()
            assert fired
            assert set(clf._state) == set(before) and set(vars(clf)) == set(attrs)
            for k, v in before.items():
                np.testing.assert_array_equal(clf._state[k], v, err_msg=k)
            for k, v in attrs.items():
                assert vars(clf)[k] is v, k
            assert clf.proba_scale_ == scale
        clf.partial_fit(X[i : i + 1], y[i : i + 1])
    whole = cls(**params).partial_fit(X, y, classes=[0, 1, 2])
    _assert_same_model(clf, whole, X)


@pytest.mark.parametrize("cls", CLASSES)
def test_a_row_without_a_finite_margin_fails_and_changes_nothing(cls):
    # Finite values whose features are not finite (a NaN margin, which has
    # no bin): the compiled round refuses the row before any change, and the
    # blocks' path fails on it, leaving the model as it was.
    X, y = _data(300, 2)
    params = dict(budget=20, gamma=0.5, random_state=0)
    if cls is NystroemOnlineClassifier:
        params["kernel"] = "poly"
    clf = cls(**params).partial_fit(X[:250], y[:250], classes=[0, 1])
    clf.partial_fit(X[250:251], y[250:251])
    assert clf in _ROUND_PATHS
    before = {k: v.copy() for k, v in clf._state.items()}
    attrs = dict(vars(clf))
    with pytest.raises(ValueError, match="Non-finite"):
        clf.partial_fit(np.array([[1e308, -1e308, 1e308]]), y[:1])
    for k, v in before.items():
        np.testing.assert_array_equal(clf._state[k], v, err_msg=k)
    assert set(vars(clf)) == set(attrs)
    for i in range(251, 300):
        clf.partial_fit(X[i : i + 1], y[i : i + 1])
    _assert_same_model(clf, cls(**params).partial_fit(X, y, classes=[0, 1]), X)


@pytest.mark.parametrize("cls", CLASSES)
def test_an_interruption_before_the_round_keeps_the_last_round(cls, monkeypatch):
    # Interrupted once its undo is registered, before its round: the undo
    # must not put back what the last (completed) call's round kept.
    import sklearn_budget._linear_online as lo

    X, y = _data(260, 2)
    params = dict(budget=20, gamma=0.5, random_state=0)
    clf = cls(**params).partial_fit(X[:250], y[:250], classes=[0, 1])
    clf.partial_fit(X[250:251], y[250:251])
    assert clf in _ROUND_PATHS

    class Interrupted(lo.Transaction):
        __slots__ = ()

        def on_undo(self, fn):
            super().on_undo(fn)
            raise KeyboardInterrupt

    for i in range(251, 260):
        before = {k: v.copy() for k, v in clf._state.items()}
        monkeypatch.setattr(lo, "Transaction", Interrupted)
        with pytest.raises(KeyboardInterrupt):
            clf.partial_fit(X[i : i + 1], y[i : i + 1])
        monkeypatch.undo()
        for k, v in before.items():
            np.testing.assert_array_equal(clf._state[k], v, err_msg=k)
        clf.partial_fit(X[i : i + 1], y[i : i + 1])
    _assert_same_model(clf, cls(**params).partial_fit(X, y, classes=[0, 1]), X)


def _fitted_state(clf):
    return {k: v.copy() for k, v in clf._state.items()}, dict(vars(clf))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("call", ["fit", "block", "first row", "row"])
def test_finite_rows_whose_features_overflow_are_refused(cls, call):
    # Finite values so large that the features overflow (FOGD: x . w is
    # inf - inf, cos of it NaN; NOGD with a polynomial kernel: inf kernel
    # values) would make the weights NaN without a word: every path refuses
    # them with scikit-learn's kind of error and keeps the model as it was.
    X, y = _data(300, 2)
    huge = np.array([[1e308, -1e308, 1e308]])
    params = dict(budget=20, gamma=0.5, random_state=0)
    if cls is NystroemOnlineClassifier:
        params["kernel"] = "poly"
    if call == "fit":
        clf = cls(**params)
        with pytest.raises(ValueError, match="Non-finite"):
            clf.fit(np.vstack([X, huge]), np.r_[y, 1])
        assert not hasattr(clf, "coef_") and not hasattr(clf, "_state")
        return
    clf = cls(**params).partial_fit(X[:250], y[:250], classes=[0, 1])
    if call == "row":
        clf.partial_fit(X[250:251], y[250:251])
        assert clf in _ROUND_PATHS
    state, attrs = _fitted_state(clf)
    scores = clf.decision_function(X)
    rows = huge if call != "block" else np.vstack([X[260:265], huge, X[265:270]])
    with pytest.raises(ValueError, match="Non-finite"):
        clf.partial_fit(rows, [1] * rows.shape[0])
    for k, v in state.items():
        np.testing.assert_array_equal(clf._state[k], v, err_msg=k)
    assert set(vars(clf)) == set(attrs)
    np.testing.assert_array_equal(clf.decision_function(X), scores)
    assert np.isfinite(scores).all()
    with pytest.raises(ValueError, match="Non-finite"):
        clf.decision_function(huge)


def test_a_nan_margin_has_a_bin_and_is_never_recorded():
    # The bins of the progressive margins: a NaN margin (which the callers
    # refuse first) maps to a bin inside the array, and recording it fails
    # before any bin changes.
    from sklearn_budget._calibration import MARGIN_BINS, new_bins

    bins = MARGIN_BINS.bins_of(np.array([np.nan, -np.nan, 0.5]))
    n_bins = new_bins(1)["cal_counts"].shape[1]
    assert ((0 <= bins) & (bins < n_bins)).all()
    state = new_bins(2)
    before = {k: v.copy() for k, v in state.items()}
    with pytest.raises(ValueError, match="NaN"):
        MARGIN_BINS.record(
            state["cal_counts"],
            state["cal_sums"],
            state["cal_n"],
            np.array([0.5, np.nan]),
            np.array([0, 1]),
            np.ones(2),
            np.array([1.0, 2.0]),
        )
    for k, v in before.items():
        np.testing.assert_array_equal(state[k], v, err_msg=k)


@pytest.mark.parametrize("rows", ["one", "block"])
def test_a_landmark_whose_norm_overflows_is_refused(rows):
    # An rbf row of 1e308 has finite kernel values by differences (0), so
    # the landmarks' phase would keep it, and every later score (which
    # expands ||x - z||^2) would fail: it is refused before it joins, and the
    # stream goes on as if the call had not been made.
    X, y = _data(300, 2)
    params = dict(budget=100, gamma=0.5, random_state=0)
    clf = NystroemOnlineClassifier(**params).partial_fit(X[:50], y[:50], classes=[0, 1])
    assert clf._projection is None  # still gathering landmarks
    state, attrs = _fitted_state(clf)
    huge = np.full((1, 3), 1e308)
    bad = huge if rows == "one" else np.vstack([X[50:55], huge])
    with pytest.raises(ValueError, match="Non-finite scores: the squared norm"):
        clf.partial_fit(bad, [1] * bad.shape[0])
    for k, v in state.items():
        np.testing.assert_array_equal(clf._state[k], v, err_msg=k)
    assert set(vars(clf)) == set(attrs)
    clf.partial_fit(X[50:], y[50:])
    whole = NystroemOnlineClassifier(**params).partial_fit(X[:50], y[:50], classes=[0, 1])
    _assert_same_model(clf, whole.partial_fit(X[50:], y[50:]), X)
