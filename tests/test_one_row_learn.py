"""River's learn_one whole in compiled code (``_one_row_fast.OneRow.learn``),
and predict_proba_one where the probability scale is kept (``proba_event``).

Where no Python takes part in a round (no hooks of the rule, the compiled
recorder and fold, no class weights, a kernel whose ``k(x, x)`` is 1), a
``learn_one`` call is played by one compiled call: the checks of the stream,
the round, the fold, the test of the average and the counters. Here it is
compared, bit for bit, with the general path of the same calls
(``_OneRowPath.play`` in its transaction); interrupted after each of its
steps (``OneRow.interrupt_at``, a hook of the tests), it changes nothing;
anything its checks do not cover goes the general way. The compiled
probabilities are those of the general path, to the last bit.
"""

import pickle
import signal

import numpy as np
import pytest
from conftest import import_or_skip
from test_streaming import count_compiled_rounds

import sklearn_budget
from sklearn_budget import _base, _one_row, _transaction
from sklearn_budget._kernels import Kernel

river = import_or_skip("river", "SKLEARN_BUDGET_REQUIRE_RIVER")
import sklearn_budget.river as sbr  # noqa: E402

# The river classes whose default streams the compiled call plays.
GUARDED = [
    "BudgetPerceptron",
    "BudgetedSGDClassifier",
    "Forgetron",
    "KernelPassiveAggressive",
    "KernelPerceptron",
    "Projectron",
    "ProjectronPlusPlus",
    "Stoptron",
]


def _events(n, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    if n_classes == 2:
        y = (X[:, 0] * X[:, 1] > 0).tolist()
    else:
        y = np.argmax(X, axis=1).tolist()
    return X, y, [dict(zip("abc", row.tolist())) for row in X]


def _model(name, n_classes=2, **kw):
    params = dict(random_state=0, gamma=0.5, **kw)
    if "budget" in getattr(sklearn_budget, name)().get_params():
        params["budget"] = 12
    classes = None if n_classes == 2 else tuple(range(n_classes))
    return getattr(sbr, name)(classes=classes, **params), params


def _progressive(model, y, events, published_every=0):
    """Progressive validation of ``model`` on the events: the probabilities
    of each event before it is learnt; every ``published_every`` events the
    published model is read (and cached) in between."""
    out = []
    for i, (x, label) in enumerate(zip(events, y)):
        out.append(model.predict_proba_one(x))
        model.learn_one(x, label)
        if published_every and i % published_every == 0:
            est = model.estimator_
            out.append(pickle.dumps([est.support_vectors_, est.dual_coef_, est.proba_scale_]))
    return out


def _assert_same_estimator(a, b):
    """The two estimators are the same, bit for bit: every state array whole
    (the rows past the counts included) and every other attribute."""
    assert a._state.keys() == b._state.keys()
    for key, u in a._state.items():
        v = b._state[key]
        assert u.dtype == v.dtype and np.array_equal(u, v), key
    rest = {k: v for k, v in vars(a).items() if k != "_state"}
    assert pickle.dumps(sorted(rest.items())) == pickle.dumps(
        sorted((k, v) for k, v in vars(b).items() if k != "_state")
    )


def _averages(name):
    """The values of ``average`` of the estimator ``name`` (the exact
    average is for rules that remove members)."""
    try:
        getattr(sklearn_budget, name)(average="exact")._validate_params()
    except ValueError:
        return [False, True]
    return [False, True, "exact"]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "name, average", [(name, average) for name in GUARDED for average in _averages(name)]
)
def test_the_compiled_call_is_the_general_path_to_the_last_bit(
    name, average, n_classes, monkeypatch
):
    X, y, events = _events(400, n_classes)
    fast, params = _model(name, n_classes, average=average)
    # The general path's round, counted: the compiled call does not take it.
    played = count_compiled_rounds(monkeypatch)
    got = _progressive(fast, y, events, published_every=37)
    # The compiled call played the events; the general path only the first
    # rounds that grow the arrays and those whose pool must grow or be
    # compressed (then the compiled call undoes its round and hands it on).
    assert played["n"] < 40
    assert _one_row._ONE_ROW.get(fast.estimator_).fast.guarded
    compiled = played["n"]
    # The same calls on the general path alone.
    monkeypatch.setattr(_one_row, "learn_guarded", lambda *args: -1)
    monkeypatch.setattr(_one_row, "proba_guarded", lambda *args: None)
    slow, _ = _model(name, n_classes, average=average)
    assert _progressive(slow, y, events, published_every=37) == got
    assert played["n"] - compiled >= len(y) - 12
    _assert_same_estimator(fast.estimator_, slow.estimator_)
    # And the model of one call of the same rows (its probability scale is
    # fitted from another start: not compared).
    labels = np.array(y)
    ref = getattr(sklearn_budget, name)(**params)
    ref.partial_fit(X, labels, classes=np.unique(labels) if n_classes > 2 else [False, True])
    for attr in ("support_vectors_", "dual_coef_", "support_", "n_mistakes_"):
        assert np.array_equal(getattr(fast.estimator_, attr), getattr(ref, attr)), attr


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "name, average",
    [("Forgetron", False), ("Forgetron", True), ("KernelPerceptron", True), ("Stoptron", False)],
)
def test_the_compiled_probabilities_are_the_general_paths(name, average, n_classes, monkeypatch):
    # predict_proba_one in compiled code where the scale of the rounds
    # played is kept (the scale is fitted by the Python side after each
    # round that changes the bins: every round, or every fourth of an
    # averaged model), then as the general path computes them, on the same
    # model: the same floats.
    X, y, events = _events(300, n_classes)
    model, _ = _model(name, n_classes, average=average)
    compiled = 0
    for x, label in zip(events, y):
        got = model.predict_proba_one(x)
        if model.estimator_ is not None:
            est, columns = model.estimator_, model._column_index
            compiled += _one_row.proba_guarded(_one_row._PATHS, est, x, columns) is not None
            with monkeypatch.context() as m:
                m.setattr(_one_row, "proba_guarded", lambda *args: None)
                assert model.predict_proba_one(x) == got
            assert model.predict_proba_one(x) == got
        model.learn_one(x, label)
    assert compiled > 0.9 * len(y)


def test_a_state_whose_entries_moved_is_bound_again():
    # The compiled calls check the state's entries in the order recorded
    # (OneRow.binds): the same arrays in another order are refused, the path
    # is bound again, and the events give what they give on an untouched
    # model; an array replaced is refused as well.
    X, y, events = _events(120)
    moved, _ = _model("Forgetron", average=True)
    kept, _ = _model("Forgetron", average=True)
    outputs = {id(moved): [], id(kept): []}
    for i, (x, label) in enumerate(zip(events, y)):
        if i == 60:
            state = moved.estimator_._state
            fast = _one_row._ONE_ROW.get(moved.estimator_).fast
            assert fast.binds(state)
            state["alpha"] = state.pop("alpha")  # the same array, last
            assert not fast.binds(state)
            state["alpha"] = state["alpha"].copy()
            assert not fast.binds(state)
        for model in (moved, kept):
            outputs[id(model)].append(model.predict_proba_one(x))
            model.learn_one(x, label)
    assert outputs[id(moved)] == outputs[id(kept)]
    assert _one_row._ONE_ROW.get(moved.estimator_).fast.binds(moved.estimator_._state)
    _assert_same_estimator(moved.estimator_, kept.estimator_)


def test_river_probabilities_need_a_label_per_class():
    X, y, events = _events(30, n_classes=3)
    model, _ = _model("Forgetron", n_classes=3)
    for x, label in zip(events, y):
        model.learn_one(x, label)
    est, columns = model.estimator_, model._column_index
    labels = [0, 1, 2]
    proba = _one_row.proba_guarded(_one_row._PATHS, est, events[0], columns, labels)
    # The list of the same call, keyed by the labels in their order.
    listed = _one_row.proba_guarded(_one_row._PATHS, est, events[0], columns)
    assert list(proba) == labels and list(proba.values()) == listed
    assert listed == pytest.approx(est.predict_proba(X[:1])[0].tolist(), rel=1e-9)
    with pytest.raises(ValueError, match="3 labels expected; got 2"):
        _one_row.proba_guarded(_one_row._PATHS, est, events[0], columns, labels[:2])


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler during the test (a runner may install another)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize(
    "name, average, step",
    [
        ("Forgetron", False, 1),
        ("BudgetPerceptron", False, 1),
        ("Forgetron", True, 1),
        ("Forgetron", True, 2),
        ("Forgetron", True, 3),
        ("BudgetPerceptron", True, 2),
        ("Projectron", True, 3),
        ("BudgetedSGDClassifier", "exact", 2),
        ("Forgetron", True, 4),
        ("BudgetPerceptron", False, 4),
    ],
)
def test_an_interrupt_in_the_compiled_call_changes_nothing(name, average, step, python_sigint):
    # The compiled call interrupted after its step ``step`` (1: the round
    # and its margin recorded, 2: the members that left folded into the
    # pool, 3: the average tested; 4: a SIGINT that arrives during the call,
    # whose handler Python would otherwise run only after the call returned,
    # the event learnt) undoes everything: the state arrays, the
    # estimator's attributes, the published attributes and the kept row of
    # the prediction; played again, the events give the model of one call.
    X, y, events = _events(300, seed=step)
    model, params = _model(name, average=average)
    model.learn_one(events[0], y[0])
    interrupted = 0
    for i in range(1, len(y)):
        model.predict_proba_one(events[i])
        est = model.estimator_
        if i % 3 == 0:
            est.dual_coef_  # published, and cached beside the estimator
        cache = _transaction._PUBLISHED.get(est)
        before = pickle.dumps(sorted(vars(est).items()))
        path = _one_row.current_path(est)
        path.fast.interrupt_at = step
        try:
            model.learn_one(events[i], y[i])
        except KeyboardInterrupt:
            interrupted += 1
            assert pickle.dumps(sorted(vars(est).items())) == before
            assert _transaction._PUBLISHED.get(est) is cache
            assert not path.fast.seen and not path.fast.active
            path.fast.interrupt_at = 0
            model.learn_one(events[i], y[i])
        else:  # the general path played it (growth, a pool to compress)
            path.fast.interrupt_at = 0
        # A completed call drops the published attributes (the compiled call
        # leaves an empty cache in their entry, another call none).
        assert not _transaction._PUBLISHED.get(est)
    assert interrupted > len(y) - 40
    ref = getattr(sklearn_budget, name)(**params).partial_fit(X, y, classes=[False, True])
    for key, a in ref._state.items():
        b = model.estimator_._state[key]
        assert np.array_equal(a[: len(b)], b[: len(a)]), key
    for attr in ("support_vectors_", "dual_coef_", "support_", "n_mistakes_"):
        assert np.array_equal(getattr(model.estimator_, attr), getattr(ref, attr)), attr


def _played_by_the_compiled_call(model, x, label):
    """Whether ``learn_one`` of the event was played by the compiled call
    (the general path's round not called)."""
    original = _one_row._OneRowPath.play
    calls = []

    def play(self, *args):
        calls.append(1)
        return original(self, *args)

    _one_row._OneRowPath.play = play
    try:
        model.learn_one(x, label)
    finally:
        _one_row._OneRowPath.play = original
    return not calls


def test_what_the_compiled_call_does_not_check_goes_the_general_way(monkeypatch):
    X, y, events = _events(200)
    model, _ = _model("Forgetron", average=True)
    for x, label in zip(events[:100], y[:100]):
        model.learn_one(x, label)
    est = model.estimator_
    assert _played_by_the_compiled_call(model, events[100], y[100])
    # A kernel whose diag is not Kernel's own is asked for k(x, x).
    asked = []
    original = Kernel.diag
    monkeypatch.setattr(Kernel, "diag", lambda k, X: asked.append(1) or original(k, X))
    assert not _played_by_the_compiled_call(model, events[101], y[101]) and asked
    monkeypatch.undo()
    assert _played_by_the_compiled_call(model, events[102], y[102])
    # A forced path of the tests.
    monkeypatch.setattr(_base, "_FORCE_PATH", "direct")
    assert not _played_by_the_compiled_call(model, events[103], y[103])
    monkeypatch.undo()
    # A parameter set again (a new object): validated, a new path.
    path = _one_row.current_path(est)
    est.set_params(gamma=float(str(est.gamma)))
    assert not _played_by_the_compiled_call(model, events[104], y[104])
    assert _one_row.current_path(est) is not path
    assert _played_by_the_compiled_call(model, events[105], y[105])
    # Values that are not floats: converted by the general path.
    odd = {"a": str(events[106]["a"]), "b": np.float32(events[106]["b"]), "c": 1}
    assert not _played_by_the_compiled_call(model, odd, y[106])
    assert _played_by_the_compiled_call(model, events[107], y[107])
    # The state replaced under the path (an undone regrowth does so).
    est._state = dict(est._state)
    assert not _played_by_the_compiled_call(model, events[108], y[108])
    assert _played_by_the_compiled_call(model, events[109], y[109])
    # Class weights: the general path's weight of each label.
    est.set_params(class_weight={False: 1.0, True: 2.0})
    assert not _played_by_the_compiled_call(model, events[110], y[110])
    assert not _played_by_the_compiled_call(model, events[111], y[111])


def test_rules_with_their_own_python_or_draws_are_not_guarded():
    # Randomized removals draw from the generator; the tighter budget
    # perceptron's rule has Python hooks: their calls take the general path.
    X, y, events = _events(60)
    for name in ("RandomizedBudgetPerceptron", "TighterBudgetPerceptron"):
        model, _ = _model(name)
        for x, label in zip(events, y):
            model.learn_one(x, label)
        assert not _one_row._ONE_ROW.get(model.estimator_).fast.guarded
        assert not _played_by_the_compiled_call(model, events[0], y[0])


@pytest.mark.parametrize("average, big", [(False, 1.7e308), (True, 8e307), (True, 1.7e308)])
def test_a_failed_compiled_call_raises_as_the_general_path_and_changes_nothing(
    average, big, monkeypatch
):
    # Coefficients made huge by hand: the scores of a round, or the sums of
    # the average after it, overflow. The compiled call undoes its round and
    # raises the general path's error; the model stays as it was.
    X, y, events = _events(300)
    messages = []
    for fast in (True, False):
        model, _ = _model("Forgetron", average=average)
        for x, label in zip(events[:50], y[:50]):
            model.learn_one(x, label)
        state = model.estimator_._state
        n = int(state["counters"][0])
        state["alpha"][:n] = np.sign(state["alpha"][:n]) * big
        if not fast:
            monkeypatch.setattr(_one_row, "learn_guarded", lambda *args: -1)
        out = []
        est = model.estimator_
        for x, label in zip(events[50:], y[50:]):
            # (The general path's undo puts back the attributes it set at
            # the end of the estimator's __dict__: compared in name order.)
            before = pickle.dumps(sorted(vars(est).items()))
            try:
                model.learn_one(x, label)
            except ValueError as exc:
                out.append(str(exc))
                assert pickle.dumps(sorted(vars(est).items())) == before
        messages.append(out)
        assert _one_row._ONE_ROW.get(model.estimator_).fast.guarded
    assert messages[0] == messages[1]
    assert messages[0] and all("Non-finite" in m for m in messages[0])
