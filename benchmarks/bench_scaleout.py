"""The three scale-out recipes of doc/scale_out.rst, timed against local runs.

A local dask cluster of two worker processes (one thread each) against the
same computation in this process:

1. ``dask_ml.wrappers.Incremental`` streaming the chunks of a dask array
   (a9a, dense, 8 chunks) against a local loop of ``partial_fit``: the rounds
   are sequential either way, so the cluster can only add the cost of moving
   the model from task to task; what it buys is data that never has to fit
   in this process.
2. ``GridSearchCV`` under ``joblib.parallel_backend('dask')`` against the
   default backend, sequential (``n_jobs=None``) and on two loky processes
   (``n_jobs=2``): independent fits, which parallelise.
3. Prediction of a large dask array with ``ParallelPostFit`` (``predict``)
   and ``map_blocks`` (``decision_function``) against ``predict`` on the
   whole array in this process (one BLAS thread, as each dask worker has).

Every recipe is also checked to give exactly the local result.

    python benchmarks/bench_scaleout.py            # a9a 32561 rows, 200000 rows to predict
    python benchmarks/bench_scaleout.py --quick    # 8000 rows, 100000 rows to predict

Needs the ``dask`` extra (``pip install -e ".[dask]"``).
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import dask.array as da
import numpy as np
from dask_ml.wrappers import Incremental, ParallelPostFit
from distributed import Client, LocalCluster, wait
from joblib import parallel_backend
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _data import a9a  # noqa: E402

from sklearn_budget import Forgetron  # noqa: E402

N_CHUNKS = 8


def _import_package():
    import sklearn_budget  # noqa: F401


def best_time(func, repeat):
    """Smallest wall time of ``repeat`` calls, and the last result."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def bench_incremental(X, y, repeat):
    classes = np.unique(y)
    chunk = -(-X.shape[0] // N_CHUNKS)
    Xd = da.from_array(X, chunks=(chunk, X.shape[1])).persist()
    yd = da.from_array(y, chunks=chunk).persist()
    wait([Xd, yd])
    estimator = Forgetron(budget=100, gamma=0.05)

    def local():
        model = clone(estimator)
        for start in range(0, X.shape[0], chunk):
            model.partial_fit(X[start : start + chunk], y[start : start + chunk], classes=classes)
        return model

    runs = iter(range(repeat))

    def cluster():
        # The graph's keys hash the model: a new random_state for each run (the
        # Forgetron draws nothing) keeps the cluster from reusing the last result.
        model = clone(estimator).set_params(random_state=next(runs))
        return Incremental(model, shuffle_blocks=False).fit(Xd, yd, classes=classes)

    t_local, m_local = best_time(local, repeat)
    t_cluster, inc = best_time(cluster, repeat)
    same = np.array_equal(inc.estimator_.dual_coef_, m_local.dual_coef_) and np.array_equal(
        inc.estimator_.support_, m_local.support_
    )
    return t_local, t_cluster, same


def bench_grid_search(X, y, repeat):
    grid = {"budget": [50, 100, 200], "average": [False, True]}
    search = GridSearchCV(Forgetron(gamma=0.05, random_state=0), grid, cv=3)

    def fit(**params):
        return clone(search).set_params(**params).fit(X, y)

    t_seq, ref = best_time(fit, repeat)
    with parallel_backend("loky"):
        t_loky, _ = best_time(lambda: fit(n_jobs=2), repeat)
    with parallel_backend("dask"):
        t_dask, on_cluster = best_time(fit, repeat)
    same = all(
        np.array_equal(on_cluster.cv_results_[k], ref.cv_results_[k])
        for k in ref.cv_results_
        if k.endswith("test_score")
    )
    return t_seq, t_loky, t_dask, same, len(ref.cv_results_["params"]) * 3


def bench_prediction(X, y, n_rows, repeat):
    model = Forgetron(budget=100, gamma=0.05).fit(X, y)
    chunk = n_rows // 16
    # Made and kept on the workers: the timings below do not move the data.
    Xd = da.random.RandomState(0).random_sample((n_rows, X.shape[1]), chunks=(chunk, X.shape[1]))
    Xd = (Xd < np.asarray(X.mean(axis=0)).ravel()).astype(np.float64).persist()
    wait(Xd)
    X_local = Xd.compute()

    blocks = range(0, n_rows, chunk)
    with threadpool_limits(limits=1, user_api="blas"):
        t_local, _ = best_time(lambda: model.predict(X_local), repeat)
        t_local_df, expected_df = best_time(lambda: model.decision_function(X_local), repeat)
        # Each worker computes its blocks as this process computes the same
        # blocks (with one BLAS thread); other batches change the BLAS calls,
        # hence at most the last bits.
        blockwise = np.concatenate([model.predict(X_local[i : i + chunk]) for i in blocks])
        blockwise_df = np.concatenate(
            [model.decision_function(X_local[i : i + chunk]) for i in blocks]
        )
    ppf = ParallelPostFit(estimator=model)
    t_ppf, predicted = best_time(lambda: ppf.predict(Xd).compute(), repeat)
    t_blocks, scores = best_time(
        lambda: Xd.map_blocks(model.decision_function, drop_axis=1, dtype=np.float64).compute(),
        repeat,
    )
    same = np.array_equal(predicted, blockwise) and np.array_equal(scores, blockwise_df)
    return t_local, t_ppf, t_local_df, t_blocks, same, np.abs(scores - expected_df).max()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller data, one repetition")
    args = parser.parse_args()
    n_train = 8000 if args.quick else None
    n_predict = 100_000 if args.quick else 200_000
    repeat = 1 if args.quick else 3

    X, y = a9a(n_train)
    X = X.toarray()
    # The training rows go to the cluster in the graph of from_array (tens of
    # MB): fine on one machine, which is what this script measures.
    warnings.filterwarnings("ignore", message="Sending large graph")
    print(f"a9a: {X.shape[0]} rows, {X.shape[1]} features (dense); best of {repeat} runs")
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        # Workers import the package once, before any timing.
        client.run(_import_package)
        print("cluster: 2 worker processes, 1 thread each\n")

        t_local, t_cluster, same = bench_incremental(X, y, repeat)
        print(f"1. Incremental, Forgetron(budget=100), {N_CHUNKS} chunks")
        print(f"   local partial_fit loop  {t_local:8.2f} s")
        print(
            f"   Incremental on cluster  {t_cluster:8.2f} s   local/cluster = {t_local / t_cluster:.2f}   same model: {same}\n"
        )

        t_seq, t_loky, t_dask, same, n_fits = bench_grid_search(X[:3000], y[:3000], repeat)
        print(f"2. GridSearchCV, {n_fits} fits of Forgetron on 3000 rows")
        print(f"   default, n_jobs=None    {t_seq:8.2f} s")
        print(
            f"   loky, n_jobs=2          {t_loky:8.2f} s   sequential/loky = {t_seq / t_loky:.2f}"
        )
        print(
            f"   dask backend            {t_dask:8.2f} s   sequential/dask = {t_seq / t_dask:.2f}   same cv_results_: {same}\n"
        )

        t_local, t_ppf, t_local_df, t_blocks, same, diff = bench_prediction(X, y, n_predict, repeat)
        print(f"3. Prediction of {n_predict} rows (16 chunks), Forgetron(budget=100)")
        print(f"   local predict           {t_local:8.2f} s")
        print(f"   ParallelPostFit.predict {t_ppf:8.2f} s   local/cluster = {t_local / t_ppf:.2f}")
        print(f"   local decision_function {t_local_df:8.2f} s")
        print(
            f"   map_blocks(decision_f.) {t_blocks:8.2f} s   local/cluster = {t_local_df / t_blocks:.2f}   same results: {same}"
        )
        print(f"   (largest difference to one local call on the whole array: {diff:.1e})")


if __name__ == "__main__":
    main()
