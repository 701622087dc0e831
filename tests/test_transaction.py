"""The one transaction of the calls that change a model (``_transaction``)."""

import numpy as np
import pytest

from sklearn_budget import _transaction
from sklearn_budget._transaction import (
    _PUBLISHED,
    _UNDO,
    Transaction,
    before_change,
    published,
)


class Model:
    """A stand-in estimator: a dict of state arrays and a list grown in place."""

    def __init__(self):
        self._state = {"alpha": np.zeros(3), "cal_bins": np.zeros(2)}
        self._rng = np.random.RandomState(0)
        self.kept = [1, 2]
        self.n_seen = 5


def change_everything(model):
    model._state["alpha"][:] = 1.0
    before_change(model, "cal_")
    model._state["cal_bins"][:] = 2.0
    before_change(model, "_rng")
    model._rng.rand(3)
    model.kept.append(3)
    model.n_seen = 6
    model.fitted_ = True


def assert_as_before_the_call(model, draws):
    """``model`` as :class:`Model` makes it, its cache as the tests set it;
    ``draws``: the first draws of a generator seeded as the model's."""
    np.testing.assert_array_equal(model._state["alpha"], np.zeros(3))
    np.testing.assert_array_equal(model._state["cal_bins"], np.zeros(2))
    np.testing.assert_array_equal(model._rng.rand(3), draws)
    assert model.kept == [1, 2] and model.n_seen == 5
    assert not hasattr(model, "fitted_")
    assert published(model) == {"support_": "cached"}
    assert model not in _UNDO


@pytest.mark.parametrize("exc", [KeyboardInterrupt, ValueError, MemoryError])
def test_a_failed_call_is_undone_exactly(exc):
    model = Model()
    published(model)["support_"] = "cached"
    draws = np.random.RandomState(0).rand(3)
    with pytest.raises(exc):
        with Transaction(model, deep=True, lazy=("cal_",), copied=("kept",)):
            assert not _PUBLISHED.get(model)  # derived values are dropped on entry
            change_everything(model)
            raise exc("stop")
    assert_as_before_the_call(model, draws)


@pytest.mark.parametrize("where", ["undo callable", "generator"])
def test_a_second_interrupt_during_the_rollback_still_undoes_everything(where, monkeypatch):
    # A Ctrl-C that lands inside the rollback of a failed call (here at its
    # first step, an undo callable, or half way, where the generator is put
    # back after the dict and the state arrays): the rollback runs again
    # from its start, and the second interrupt is raised.
    model = Model()
    published(model)["support_"] = "cached"
    draws = np.random.RandomState(0).rand(3)
    fired = []

    def interrupt_once(*args):
        if not fired:
            fired.append(1)
            raise KeyboardInterrupt("second")
        if args:  # as _load_generator; as an undo callable, nothing to undo
            load_generator(*args)

    load_generator = _transaction._load_generator
    if where == "generator":
        monkeypatch.setattr(_transaction, "_load_generator", interrupt_once)
    with pytest.raises(KeyboardInterrupt, match="second"):
        with Transaction(model, deep=True, lazy=("cal_",), copied=("kept",)) as tx:
            if where == "undo callable":
                tx.on_undo(interrupt_once)
            change_everything(model)
            raise ValueError("first")
    assert fired
    assert_as_before_the_call(model, draws)


def test_a_rollback_that_always_fails_is_tried_a_bounded_number_of_times():
    model = Model()
    calls = []

    def fail():
        calls.append(1)
        raise RuntimeError("broken undo")

    with pytest.raises(RuntimeError, match="broken undo"):
        with Transaction(model) as tx:
            tx.on_undo(fail)
            raise ValueError("first")
    assert len(calls) == _transaction._ROLLBACK_TRIES


def test_a_completed_call_keeps_its_changes():
    model = Model()
    published(model)["support_"] = "cached"
    with Transaction(model, deep=True, lazy=("cal_",), copied=("kept",)):
        change_everything(model)
    assert model._state["alpha"][0] == 1.0 and model._state["cal_bins"][0] == 2.0
    assert model.kept == [1, 2, 3] and model.fitted_
    assert model not in _PUBLISHED and model not in _UNDO


def test_lazy_arrays_are_copied_only_when_they_change():
    model = Model()
    bins = model._state["cal_bins"]
    with Transaction(model, deep=True, lazy=("cal_",)):
        record = _UNDO[model]
        assert record["_state"]["cal_bins"] is bins
        assert record["_state"]["alpha"] is not model._state["alpha"]
        before_change(model, "cal_")
        assert record["_state"]["cal_bins"] is not bins


def test_callbacks_run_in_reverse_order_before_the_entry_is_put_back():
    model = Model()
    calls = []
    with pytest.raises(KeyboardInterrupt):
        with Transaction(model) as tx:
            model.n_seen = 7
            tx.on_undo(lambda: calls.append(("first", model.n_seen)))
            tx.on_undo(lambda: calls.append(("second", model.n_seen)))
            raise KeyboardInterrupt
    assert calls == [("second", 7), ("first", 7)]
    assert model.n_seen == 5


def test_a_shallow_transaction_tracks_the_lazy_arrays_once_asked():
    model = Model()
    state, bins = model._state, model._state["cal_bins"]
    with pytest.raises(RuntimeError):
        with Transaction(model, lazy=("cal_",)) as tx:
            before_change(model, "cal_")  # not tracked yet: nothing recorded
            assert model not in _UNDO
            tx.track_lazy_arrays()
            before_change(model, "cal_")
            model._state["cal_bins"][:] = 3.0
            raise RuntimeError
    assert model._state is state
    np.testing.assert_array_equal(model._state["cal_bins"], np.zeros(2))
    assert model._state["cal_bins"] is not bins  # the copy made before the change


def test_a_transaction_of_named_attributes_puts_back_those_alone():
    # A call that sets only the attributes it names records them alone:
    # on failure they are put back (one added is removed, one removed
    # comes back), with the lazy arrays it tracked and what it published.
    model = Model()
    model.n_mistakes_ = 2
    state = model._state
    published(model)["proba_scale_"] = 1.5
    with pytest.raises(KeyboardInterrupt):
        with Transaction(
            model, lazy=("cal_",), attributes=("_state", "n_seen", "n_iter_", "n_mistakes_")
        ) as tx:
            assert model not in _PUBLISHED
            tx.track_lazy_arrays()
            before_change(model, "cal_")
            model._state["cal_bins"] = np.ones(2)
            model.n_seen = 6
            model.n_iter_ = 1
            del model.n_mistakes_
            model.unlisted = True  # not recorded: stays
            raise KeyboardInterrupt
    assert model._state is state
    np.testing.assert_array_equal(model._state["cal_bins"], np.zeros(2))
    assert (model.n_seen, model.n_mistakes_) == (5, 2)
    assert not hasattr(model, "n_iter_")
    assert model.unlisted is True
    assert published(model) == {"proba_scale_": 1.5}
    with Transaction(model, attributes=("n_seen",)):
        model.n_seen = 7
    assert model.n_seen == 7
    with pytest.raises(ValueError, match="deep"):
        Transaction(model, deep=True, attributes=("n_seen",))
