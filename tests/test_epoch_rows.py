"""The epochs of ``fit`` play the rows through their order, never a copy of them.

Each block of rounds gathers its own rows (``_rounds._blocks``): the peak
memory of a fit is that of a block beyond ``X``, whatever the epochs; and the
later epochs of FOGD and NOGD, which read the features kept by the call, do
not gather rows at all. That the rows are played in the order of the
shuffling stream is what the reference tests check (for example
``test_new_rule.py::test_fit_plays_the_shuffled_epochs_of_the_reference``).
"""

import tracemalloc
import warnings

import numpy as np
import pytest

from sklearn_budget import (
    Forgetron,
    FourierOnlineClassifier,
    NystroemOnlineClassifier,
    _linear_online,
    _nystroem_online,
)
from sklearn_budget._rounds import _blocks, _select

# Rows of 300 features: the rows of a block (256 or 1024 of them) and the
# per-row arrays of the call (labels, weights, order) are a fraction of X.
N_ROWS, N_FEATURES = 3000, 300


def _data():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((N_ROWS, N_FEATURES))
    y = (X[:, 0] + 0.3 * rng.standard_normal(N_ROWS) > 0).astype(int)
    return X, y


ESTIMATORS = [
    # The kernel estimators' driver (_rounds.play_rounds), on the direct path.
    Forgetron(budget=10, gamma=0.003, max_iter=5, tol=None, random_state=0),
    # The features' estimators: FOGD, NOGD with a given penalty.
    FourierOnlineClassifier(budget=8, gamma=0.003, max_iter=5, tol=None, random_state=0),
    NystroemOnlineClassifier(budget=10, alpha=0.0, gamma=0.003, max_iter=5, tol=None),
]


@pytest.mark.parametrize(
    "est, zeros",
    [pytest.param(est, False, id=type(est).__name__) for est in ESTIMATORS]
    + [pytest.param(ESTIMATORS[1], True, id="FourierOnlineClassifier-zero-weights")],
)
def test_fit_allocates_no_copy_of_the_rows(est, zeros):
    X, y = _data()
    # Rows of weight zero are not played: nor are the others copied.
    w = np.where(np.arange(N_ROWS) % 10 == 0, 0.0, 1.0) if zeros else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a fit's convergence says nothing here
        tracemalloc.start()
        try:
            est.fit(X, y, sample_weight=w)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert est.n_iter_ == 5
    # A shuffled copy of X an epoch (the earlier driver) peaked above 3 X:
    # two epochs' copies, and the temporaries. A block's rows and the
    # majority check's (at most 2048 rows scored a chunk at a time) stay
    # below one X.
    assert peak < X.nbytes


@pytest.mark.parametrize("cls", [FourierOnlineClassifier, NystroemOnlineClassifier])
def test_later_epochs_of_kept_features_gather_no_rows(cls, monkeypatch):
    X, y = _data()
    X, y = X[:1500, :20], y[:1500]
    gathered = []
    for module in (_linear_online, _nystroem_online):
        original = module._rows

        def counting(X, rows, original=original):
            out = original(X, rows)
            gathered.append(out.shape[0])
            return out

        monkeypatch.setattr(module, "_rows", counting)
    params = {"alpha": 0.0} if cls is NystroemOnlineClassifier else {}
    counts = []
    for max_iter in (1, 2, 4):
        gathered.clear()
        est = cls(budget=20, gamma=0.01, max_iter=max_iter, tol=None, random_state=0, **params)
        est.fit(X, y)
        assert est.n_iter_ == max_iter
        counts.append(sum(gathered))
    # The first epoch reads every row; the second the rows whose features
    # are not kept yet (NOGD's rows of the landmarks' phase, played on the
    # kernel expansion), a few at most; the later ones none: they read the
    # kept features.
    assert counts[0] >= X.shape[0]
    assert counts[0] <= counts[1] <= counts[0] + 2 * est.budget
    assert counts[2] == counts[1]


def test_blocks_name_the_rows_of_the_order():
    order = np.array([4, 0, 3, 1, 2])
    blocks = list(_blocks(order, 5, 2))
    assert [positions for positions, _ in blocks] == [slice(0, 2), slice(2, 4), slice(4, 5)]
    assert [rows.tolist() for _, rows in blocks] == [[4, 0], [3, 1], [2]]
    # Without an order, the rows are the positions: slices (views of dense rows).
    assert [rows for _, rows in _blocks(None, 5, 2)] == [slice(0, 2), slice(2, 4), slice(4, 5)]
    # A slice of a slice is a slice; positions in a slice are row indices.
    assert _select(slice(3, 9), slice(2, None, 2)) == slice(5, 9, 2)
    assert _select(slice(3, 9), np.array([0, 5])).tolist() == [3, 8]
    assert _select(order, slice(1, None, 2)).tolist() == [0, 1]
