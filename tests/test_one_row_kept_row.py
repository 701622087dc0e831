"""The kernel rows of a scored event, kept for its round (progressive validation).

River's ``predict_proba_one`` / ``predict_one`` compute the kernel rows of
the event with the members and the pool of the average; the ``learn_one``
of the same event that follows takes them instead of computing them again
(``_one_row_fast.OneRow.remember`` and ``recall``). Here every model fed
predictions between its rounds is compared, bit for bit, with the model of
the same rounds played without any prediction (which computes every
kernel row anew), with whatever may make a kept row stale in between: the
row changed, another round, a block call, an interrupted call, a pickle
round trip or a clone, the parameters changed.
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_budget import _one_row
from sklearn_budget.datasets import make_two_gaussians

river = pytest.importorskip("sklearn_budget.river")

NAMES = ["Forgetron", "BudgetPerceptron", "RandomizedBudgetPerceptron", "Projectron"]


def _events(n, seed=0):
    X, y = make_two_gaussians(n, random_state=seed)
    return [({0: float(a), 1: float(b)}, bool(t == 1)) for (a, b), t in zip(X, y)]


def _assert_same_model(a, b):
    """The two river models' estimators hold the same state, bit for bit."""
    ea, eb = a.estimator_, b.estimator_
    assert ea._state.keys() == eb._state.keys()
    for key, u in ea._state.items():
        v = eb._state[key]
        assert u.dtype == v.dtype and np.array_equal(u, v), key
    assert ea._n_seen == eb._n_seen
    assert ea.n_mistakes_ == eb.n_mistakes_
    grid = np.linspace(-2.0, 2.0, 20).reshape(10, 2)
    np.testing.assert_array_equal(ea.decision_function(grid), eb.decision_function(grid))


def _kept(model):
    """Whether the model's one-row path keeps a scored row."""
    if model.estimator_ is None:
        return False
    path = _one_row._ONE_ROW.get(model.estimator_)
    return type(path) is _one_row._OneRowPath and path.fast.seen


def _predict(model, x, predict):
    if predict == "proba":
        return model.predict_proba_one(x)
    return model.predict_one(x)


@pytest.mark.parametrize("predict", ["proba", "label"])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_a_predicted_event_learns_as_an_event_never_predicted(name, average, predict):
    # ``plain`` makes the same predictions (its probability scales are
    # fitted on the same calls: each fit starts from the last one), then
    # scores another row, so that its rounds compute every kernel row.
    events = _events(900)
    params = dict(budget=20, average=average, random_state=0)
    seen = getattr(river, name)(**params)
    plain = getattr(river, name)(**params)
    kept = 0
    for x, t in events:
        out = _predict(seen, x, predict)
        assert _predict(plain, x, predict) == out
        kept += _kept(seen)
        plain.predict_one({0: x[0] + 1.0, 1: x[1]})
        seen.learn_one(x, t)
        assert not _kept(seen)  # the round forgets it
        plain.learn_one(x, t)
    # Every event after the first (which builds the model) was kept.
    assert kept == len(events) - 1
    _assert_same_model(seen, plain)


@pytest.mark.parametrize("name", NAMES)
def test_a_row_changed_after_its_prediction_is_not_taken_for_it(name):
    # The caller's dict is changed in place between the two calls (the
    # kept row is compared by value, not by identity); -0.0 for 0.0 too.
    events = _events(900, seed=1)
    seen = getattr(river, name)(budget=20, random_state=0)
    plain = getattr(river, name)(budget=20, random_state=0)
    for i, (x, t) in enumerate(events):
        x = dict(x)
        seen.predict_proba_one(x)
        if i % 3 == 1:
            x[0] += 0.5
        elif i % 3 == 2:
            x[1] = -x[1]
        elif i % 9 == 0:
            x[0] = -0.0 if x[0] == 0.0 else np.nextafter(x[0], np.inf)
        seen.learn_one(x, t)
        plain.learn_one(x, t)
    _assert_same_model(seen, plain)


@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_a_round_or_a_block_between_prediction_and_learning(name, average):
    # Another event learnt, or a block call of the estimator (played by
    # another engine, in place on the same arrays), between the prediction
    # of an event and its round: the members and the pool have changed.
    events = _events(700, seed=2)
    X = np.array([[x[0], x[1]] for x, _ in events])
    y = np.array([t for _, t in events])
    params = dict(budget=20, average=average, random_state=0)
    seen = getattr(river, name)(**params)
    plain = getattr(river, name)(**params)
    for m in (seen, plain):
        for x, t in events[:100]:
            m.learn_one(x, t)
    i = 100
    while i + 6 < len(events):
        x, t = events[i]
        seen.predict_proba_one(x)
        assert _kept(seen)
        if i % 2:
            for m in (seen, plain):
                m.learn_one(*events[i + 1])
        else:
            for m in (seen, plain):
                m.estimator_.partial_fit(X[i + 1 : i + 6], y[i + 1 : i + 6])
        for m in (seen, plain):
            m.learn_one(x, t)
        i += 7
    _assert_same_model(seen, plain)


class _FailingFold:
    """Makes the estimator's Python fold of the members that left raise
    KeyboardInterrupt once, after the round was played."""

    def __init__(self):
        self.armed = False
        self.raised = 0

    def __call__(self, fold):
        def failing(est, *args, **kwargs):
            fold(est, *args, **kwargs)
            if self.armed:
                self.armed = False
                self.raised += 1
                raise KeyboardInterrupt

        return failing


@pytest.mark.parametrize("name", ["Forgetron", "RandomizedBudgetPerceptron"])
def test_an_interrupted_round_between_prediction_and_learning(name, monkeypatch):
    # The learn_one of the predicted event is interrupted after its round
    # (undone), then played again: the undo forgets the kept row.
    events = _events(1500, seed=3)
    seen = getattr(river, name)(budget=20, random_state=0)
    plain = getattr(river, name)(budget=20, random_state=0)
    seen.learn_one(*events[0])
    plain.learn_one(*events[0])
    est_class = type(seen.estimator_)
    failing = _FailingFold()
    # Python's fold runs when the pool must grow or be compressed.
    monkeypatch.setattr(est_class, "_fold_retired", failing(est_class._fold_retired))
    for x, t in events[1:]:
        seen.predict_proba_one(x)
        failing.armed = True
        before = pickle.dumps(seen.estimator_._state)
        try:
            seen.learn_one(x, t)
        except KeyboardInterrupt:
            assert pickle.dumps(seen.estimator_._state) == before
            assert not _kept(seen)
            seen.learn_one(x, t)
        failing.armed = False
        plain.learn_one(x, t)
    assert failing.raised > 3
    _assert_same_model(seen, plain)


@pytest.mark.parametrize("how", ["pickle", "clone", "set_params"])
def test_a_new_model_between_prediction_and_learning(how):
    # A pickle round trip or a clone of the estimator is a new object,
    # without the kept row; new parameters (equal values, new objects)
    # build a new one-row path.
    events = _events(600, seed=4)
    seen = river.Forgetron(budget=20, gamma=0.75, random_state=0)
    plain = river.Forgetron(budget=20, gamma=0.75, random_state=0)
    for i, (x, t) in enumerate(events):
        seen.predict_proba_one(x)
        if i % 25 == 24:
            if how == "pickle":
                seen = pickle.loads(pickle.dumps(seen))
                assert not _kept(seen)
            elif how == "clone":
                # A clone is unfitted: it starts the stream again, as the
                # model it is compared with.
                est = clone(seen.estimator_)
                seen.estimator_ = est.partial_fit(
                    np.array([[x[0], x[1]]]), np.array([t]), classes=[False, True]
                )
                plain.estimator_ = clone(plain.estimator_).partial_fit(
                    np.array([[x[0], x[1]]]), np.array([t]), classes=[False, True]
                )
                continue
            else:
                path = _one_row.current_path(seen.estimator_)
                gamma = float(str(seen.estimator_.gamma))
                assert gamma is not seen.estimator_.gamma
                seen.estimator_.set_params(gamma=gamma)
                assert _one_row.current_path(seen.estimator_) is not path
        seen.learn_one(x, t)
        plain.learn_one(x, t)
    _assert_same_model(seen, plain)
