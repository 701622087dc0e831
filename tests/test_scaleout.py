"""The scale-out recipes of doc/scale_out.rst on a real local dask cluster.

One cluster of two worker processes serves the module. Each recipe must give
exactly what the same computation gives in this process: the models travel
between processes as pickles, so these tests also check that a model goes on
with its stream after a round trip. Skipped without dask, distributed and
dask-ml, unless SKLEARN_BUDGET_REQUIRE_DASK=1 (then missing them fails).
"""

import os

import numpy as np
import pytest
from conftest import import_or_skip
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from sklearn_budget import Forgetron, RandomizedBudgetPerceptron
from sklearn_budget.datasets import fetch_a9a

_REQUIRE = "SKLEARN_BUDGET_REQUIRE_DASK"
da = import_or_skip("dask.array", _REQUIRE)
distributed = import_or_skip("distributed", _REQUIRE)
joblib = import_or_skip("joblib", _REQUIRE)
wrappers = import_or_skip("dask_ml.wrappers", _REQUIRE)

# The cluster's processes talk over the loopback interface (conftest.py).
pytestmark = pytest.mark.loopback

N_ROWS, N_CHUNKS = 4000, 8


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def a9a(data_home):
    """The first rows of a9a, dense (dask arrays of sparse chunks are not
    what dask-ml's wrappers expect)."""
    X, y = fetch_a9a(data_home=data_home, return_X_y=True, download_if_missing=False)
    return X[:N_ROWS].toarray(), y[:N_ROWS]


def test_cluster_runs_in_other_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2 and os.getpid() not in pids.values()


@pytest.mark.parametrize(
    "estimator",
    [Forgetron(budget=100), RandomizedBudgetPerceptron(budget=100, random_state=0)],
    ids=lambda e: type(e).__name__,
)
def test_incremental_equals_local_partial_fit(client, a9a, estimator):
    X, y = a9a
    classes = np.unique(y)
    chunk = N_ROWS // N_CHUNKS
    Xd = da.from_array(X, chunks=(chunk, X.shape[1]))
    yd = da.from_array(y, chunks=chunk)
    assert Xd.numblocks == (N_CHUNKS, 1)

    with distributed.get_task_stream(client) as tasks:
        inc = wrappers.Incremental(clone(estimator), shuffle_blocks=False)
        inc.fit(Xd, yd, classes=classes)
    # Each block's partial_fit was a task of the cluster: keys ("fit-<token>", i),
    # with i = -1 for the unfitted model.
    keys = [t["key"] for t in tasks.data if isinstance(t["key"], tuple)]
    fits = sorted(key[1] for key in keys if key[0].startswith("fit-") and key[1] >= 0)
    assert fits == list(range(N_CHUNKS))

    local = clone(estimator)
    for start in range(0, N_ROWS, chunk):
        local.partial_fit(X[start : start + chunk], y[start : start + chunk], classes=classes)

    model = inc.estimator_
    assert model.n_mistakes_ == local.n_mistakes_ > 0
    np.testing.assert_array_equal(model.support_, local.support_)
    np.testing.assert_array_equal(model.dual_coef_, local.dual_coef_)
    np.testing.assert_array_equal(model.support_vectors_, local.support_vectors_)
    np.testing.assert_array_equal(model.predict(X), local.predict(X))


def _non_timing_results(search):
    return {key: value for key, value in search.cv_results_.items() if "time" not in key}


def test_grid_search_dask_backend_equals_default(client, a9a):
    X, y = a9a[0][:900], a9a[1][:900]
    grid = {"budget": [20, 50], "average": [False, True]}
    search = GridSearchCV(Forgetron(max_iter=2, random_state=0), grid, cv=3)
    local = clone(search).fit(X, y)
    with distributed.get_task_stream(client) as tasks, joblib.parallel_backend("dask"):
        on_cluster = clone(search).fit(X, y)
    # The fits ran on both workers.
    assert len({t["worker"] for t in tasks.data}) == 2

    expected, got = _non_timing_results(local), _non_timing_results(on_cluster)
    assert got.keys() == expected.keys()
    assert "split2_test_score" in got and "params" in got
    for key, value in expected.items():
        if key == "params" or key.startswith("param_"):
            assert list(got[key]) == list(value), key
        else:
            np.testing.assert_array_equal(got[key], value, err_msg=key)
    assert on_cluster.best_params_ == local.best_params_
    np.testing.assert_array_equal(
        on_cluster.best_estimator_.dual_coef_, local.best_estimator_.dual_coef_
    )


def _blockwise(func, X, chunk):
    return np.concatenate([func(X[start : start + chunk]) for start in range(0, len(X), chunk)])


def test_parallel_prediction_equals_local(client, a9a):
    X, y = a9a
    model = Forgetron(budget=100).fit(X, y)
    # Made on the workers, so that the graph does not carry the data.
    chunk = 2_000
    Xd = da.random.RandomState(0).random_sample((16_000, X.shape[1]), chunks=(chunk, X.shape[1]))
    Xd = (Xd < X.mean(axis=0)).astype(np.float64)  # binary features, as a9a's
    X_local = Xd.compute()

    with distributed.get_task_stream(client) as tasks:
        predicted = wrappers.ParallelPostFit(estimator=model).predict(Xd)
        assert isinstance(predicted, da.Array)
        predicted = predicted.compute()
        scores = Xd.map_blocks(model.decision_function, drop_axis=1, dtype=np.float64).compute()
    assert len({t["worker"] for t in tasks.data}) == 2

    # Each worker computes its blocks as this process computes the same blocks.
    np.testing.assert_array_equal(predicted, _blockwise(model.predict, X_local, chunk))
    np.testing.assert_array_equal(scores, _blockwise(model.decision_function, X_local, chunk))
    # Other batches change the BLAS calls, hence at most the last bits.
    np.testing.assert_allclose(scores, model.decision_function(X_local), rtol=1e-12, atol=1e-12)
    assert np.unique(predicted).size == 2  # both classes predicted: a real check
