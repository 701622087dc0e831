"""The rounds whose margins averaged models record for the probability scale."""

import numpy as np
import pytest
from conftest import import_or_skip
from test_hardening import state

import sklearn_budget
from sklearn_budget import _calibration, _one_row
from sklearn_budget._dense_rows import KERNEL_CODES, kernel_block
from sklearn_budget._margins import average_margins, last_recorded, margin_weights, recorded_rows
from sklearn_budget.datasets import make_two_gaussians

# Written out: stride 4 up to round 8192, then doubled at each doubling of
# the round count.
REFERENCE = {
    stride: range(start + stride, stop + 1, stride)
    for stride, start, stop in [
        (4, 0, 8192),
        (8, 8192, 16384),
        (16, 16384, 32768),
        (32, 32768, 65536),
    ]
}
N_REFERENCE = 65536


def reference_weights(n):
    """The weight of the margin of each of rounds 1..n (0: not recorded)."""
    weights = np.zeros(n + 1)
    for stride, rounds in REFERENCE.items():
        weights[[t for t in rounds if t <= n]] = stride
    return weights[1:]


def test_the_schedule_is_the_written_out_reference():
    weights = margin_weights(np.arange(1, N_REFERENCE + 1, dtype=np.int64))
    np.testing.assert_array_equal(weights, reference_weights(N_REFERENCE))
    # 2048 records at stride 4, then 1024 per octave.
    assert np.count_nonzero(weights) == 2048 + 3 * 1024
    # Each record stands for the rounds since the one before it.
    recorded = np.flatnonzero(weights) + 1
    np.testing.assert_array_equal(np.diff(recorded, prepend=0), weights[recorded - 1])
    # Far on: round 2^40 is in the octave (2^39, 2^40], stride 4 * 2^27.
    np.testing.assert_array_equal(
        margin_weights(np.array([2**40, 2**40 - 2**29, 2**40 - 2**28], dtype=np.int64)),
        [2.0**29, 2.0**29, 0.0],
    )


@pytest.mark.parametrize(
    "t, last",
    [
        (0, 0),
        (3, 0),
        (4, 4),
        (8191, 8188),
        (8192, 8192),
        (8199, 8192),
        (8200, 8200),
        (16399, 16384),
        (16400, 16400),
        (65535, 65504),
    ],
)
def test_the_last_recorded_round(t, last):
    assert last_recorded(t) == last


@pytest.mark.parametrize(
    "first, n, rows",
    [
        (1, 20, [3, 7, 11, 15, 19]),  # rounds 4, 8, ..., 20
        (5, 3, []),  # rounds 5..7
        (8190, 40, [2, 10, 18, 26, 34]),  # 8192 at stride 4, then every 8th
        (16380, 30, [4, 20]),  # 16384 at stride 8, then 16400 at stride 16
    ],
)
def test_the_recorded_rows_of_a_segment(first, n, rows):
    got = recorded_rows(first, n)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, rows)


def test_average_margins_of_a_segment_by_hand():
    # One feature, linear kernel: a pool member x=1 of running sum 2, and a
    # member x=3 of running sum 5 that left at round 11, so that it is in
    # the pool of rounds 12 on only. Rows x = 1, 2, 1 at rounds 10, 11, 12.
    args = (
        np.array([0, 1, 2]),
        10,
        np.array([[0.0], [0.0], [4.0]]),  # the current members' part
        np.array([1, -1, 1]),
        np.array([[2.0]]),
        np.array([[5.0]]),
        np.array([11]),
    )
    X, pool_X, ret_X = np.array([[1.0], [2.0], [1.0]]), np.array([[1.0]]), np.array([[3.0]])
    expected = [2.0 / 10, -4.0 / 11, (2.0 + 15.0 + 4.0) / 12]
    code = KERNEL_CODES["linear"]
    direct = average_margins(*args, X=X, pool_X=pool_X, ret_X=ret_X, kernel_code=code)
    np.testing.assert_array_equal(direct, expected)
    K = np.array([[1.0, 3.0], [2.0, 6.0], [1.0, 3.0]])
    np.testing.assert_array_equal(average_margins(*args, K=K), expected)
    # A row skipped (position 1 not recorded): the others keep their rounds.
    skip = (np.array([0, 2]),) + args[1:]
    np.testing.assert_array_equal(average_margins(*skip, K=K[[0, 2]]), [expected[0], expected[2]])
    # An overflowing score: None.
    huge = args[:4] + (np.array([[1e308]]),) + args[5:]
    assert average_margins(*huge, X=X * 1e10, pool_X=pool_X, ret_X=ret_X, kernel_code=code) is None


@pytest.mark.parametrize("kernel", ["rbf", "poly", "laplacian"])
def test_average_margins_computes_kernel_blocks_values(kernel):
    # The kernel values of dense rows computed in the call are kernel_block's
    # (those of _kernel_matrix for few rows): the same margins as from them.
    rng = np.random.default_rng(0)
    n0, m, d, R, n = 7, 4, 3, 3, 9
    X, pool_X, ret_X = rng.normal(size=(n, d)), rng.normal(size=(n0, d)), rng.normal(size=(m, d))
    rows = np.array([0, 2, 3, 7])
    args = (
        rows,
        100,
        rng.normal(size=(n, R)),
        rng.integers(0, R, n),
        rng.normal(size=(n0, R)),
        rng.normal(size=(m, R)),
        np.array([100, 102, 102, 106]),
    )
    params = dict(kernel_code=KERNEL_CODES[kernel], gamma=0.7, degree=3.0, coef0=1.0)
    direct = average_margins(*args, X=X, pool_X=pool_X, ret_X=ret_X, **params)
    K = kernel_block(X[rows], np.concatenate([pool_X, ret_X]), params["kernel_code"], 0.7, 3.0, 1.0)
    np.testing.assert_array_equal(direct, average_margins(*args, K=K))


def stream(n):
    X, y = make_two_gaussians(n, random_state=3)
    return X, y


def recorded_rounds(est, monkeypatch, fit):
    """The rounds and weights that the blocks hand to the bins during ``fit``."""
    seen = []
    original = _calibration._CalibrationMixin._record_margins

    def record(self, margins, cls, w, rounds):
        seen.append((np.array(rounds), np.array(w)))
        return original(self, margins, cls, w, rounds)

    monkeypatch.setattr(type(est), "_record_margins", record)
    fit()
    monkeypatch.undo()
    return np.concatenate([r for r, _ in seen]), np.concatenate([w for _, w in seen])


BINS = ("cal_counts", "cal_sums", "cal_n")


@pytest.mark.parametrize("name", ["Forgetron", "BudgetPerceptron"])
def test_a_long_stream_records_the_rounds_of_the_schedule(name, monkeypatch):
    # Past 2 * 8192 rounds: three strides. The stream whole, in chunks of
    # several sizes, and one row at a time (the compiled one-row path):
    # the same recorded rounds, bins and scale, to the last bit.
    n = 20000
    X, y = stream(n)
    classes = np.unique(y)

    def make():
        return getattr(sklearn_budget, name)(budget=20, gamma=0.5, random_state=0)

    whole = make()
    rounds, w = recorded_rounds(
        whole, monkeypatch, lambda: whole.partial_fit(X, y, classes=classes)
    )
    expected = reference_weights(n)
    np.testing.assert_array_equal(rounds, np.flatnonzero(expected) + 1)
    np.testing.assert_array_equal(w, expected[expected > 0])
    # The bins' total weight: the rounds of the stream, up to the last stride.
    assert whole._state["cal_n"].sum() == 20000 - 20000 % 16

    chunks = make()
    bounds = [0, 1, 3000, 8190, 8197, 8200, 12001, 16385, n]
    for a, b in zip(bounds[:-1], bounds[1:]):
        chunks.partial_fit(X[a:b], y[a:b], classes=classes)

    rows = make()
    rows.partial_fit(X[:9000], y[:9000], classes=classes)
    for i in range(9000, n):
        rows.partial_fit(X[i : i + 1], y[i : i + 1])
    assert type(_one_row._ONE_ROW.get(rows)) is _one_row._OneRowPath

    for other in (chunks, rows):
        for key in BINS:
            np.testing.assert_array_equal(other._state[key], whole._state[key], err_msg=key)
        assert other.proba_scale_ == whole.proba_scale_
        np.testing.assert_array_equal(other.predict_proba(X[:50]), whole.predict_proba(X[:50]))


class _Failure(Exception):
    pass


def test_a_failed_one_row_call_on_a_wider_stride_leaves_the_model(monkeypatch):
    # Past round 8192 a one-row call records its margin on every 8th round
    # only, weighted by 8: the failure of that record (the Python recorder,
    # a subclass's) undoes the whole call, and the stream goes on as if the
    # call had not been made.
    X, y = stream(8300)
    classes = np.unique(y)
    kw = dict(budget=20, gamma=0.5, random_state=0)
    est = sklearn_budget.Forgetron(**kw).partial_fit(X[:8180], y[:8180], classes=classes)
    original = _calibration._CalibrationMixin._record_margins
    recorded = []

    def record(self, margins, cls, w, rounds):
        recorded.append((int(rounds[0]), float(w[0])))
        if len(recorded) % 2:
            raise _Failure
        return original(self, margins, cls, w, rounds)

    monkeypatch.setattr(sklearn_budget.Forgetron, "_record_margins", record)
    for i in range(8180, 8300):
        before = state(est)
        if (i + 1) % 4 == 0 and ((i + 1) <= 8192 or (i + 1) % 8 == 0):
            with pytest.raises(_Failure):
                est.partial_fit(X[i : i + 1], y[i : i + 1])
            assert state(est) == before
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    assert type(_one_row._ONE_ROW.get(est)) is _one_row._OneRowPath
    # Each recorded round twice (the failed call, then the call again).
    expected = [(t, 4.0) for t in range(8184, 8193, 4)] + [(t, 8.0) for t in range(8200, 8301, 8)]
    assert recorded == [r for r in expected for _ in range(2)]
    monkeypatch.undo()
    ref = sklearn_budget.Forgetron(**kw).partial_fit(X, y, classes=classes)
    for key in BINS:
        np.testing.assert_array_equal(est._state[key], ref._state[key], err_msg=key)
    assert est.proba_scale_ == ref.proba_scale_


def test_river_events_past_the_first_stride_record_the_same_bins():
    # River's learn_one plays each event in compiled code (OneRow.learn):
    # past round 8192 it records the rounds of the schedule as a call of
    # many rows does.
    import_or_skip("river", "SKLEARN_BUDGET_REQUIRE_RIVER")
    import sklearn_budget.river as sbr

    n = 17000
    X, y = stream(n)
    kw = dict(budget=20, gamma=0.5, random_state=0)
    model = sbr.Forgetron(classes=(-1, 1), **kw)
    for row, label in zip(X.tolist(), y.tolist()):
        model.learn_one(dict(enumerate(row)), label)
    assert type(_one_row._ONE_ROW.get(model.estimator_)) is _one_row._OneRowPath
    whole = sklearn_budget.Forgetron(**kw).partial_fit(X, y, classes=[-1, 1])
    for key in BINS:
        np.testing.assert_array_equal(model.estimator_._state[key], whole._state[key], err_msg=key)
    assert model.estimator_.proba_scale_ == whole.proba_scale_
