"""Iterative parameter mixing (sklearn_budget.parallel) against sequential passes.

The estimators, all at the same budget (100 by default) and ``random_state=0``,
with the package's defaults otherwise:

- Forgetron and the Randomized Budget Perceptron (RBP) at their default
  ``average=True`` (the shards' running averages are mixed), and again with
  ``average=False`` (the last hypotheses are mixed), rows labelled by the
  ``average`` column;
- budgeted SGD with ``maintenance='projection'`` and ``'merging'``, and
  Projectron++ (``budget`` set to the same budget), at their defaults
  (``average=False`` for budgeted SGD, ``True`` for Projectron++).

Tables, printed as markdown:

1. Test accuracy after each mix of 8 shards against the sequential learner
   at the same budget: one pass (``fit`` with ``max_iter=1``), three epochs
   (``fit`` with ``max_iter=3``, ``tol=None``) and, on the real data, ``fit``
   at the estimator's defaults (``max_iter=5``, ``tol=1e-3``). On a9a (its
   32561 training rows shuffled, dense; the first 10000 test rows), USPS (10
   classes, 7291 / 2007 rows) and a synthetic stream of two 2-D Gaussians
   (``make_two_gaussians``) made chunk by chunk as a dask array of 8 chunks,
   one shard per chunk, trained on a LocalCluster (test set: 20000 rows).
2. Test accuracy after the last mix by number of shards (2, 8, 32, 128) on
   a9a and USPS; the shards run one after another in this process (the
   model does not depend on where they run).
3. Wall time of the mixing fit of the synthetic dask array on a
   ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``
   against the same fit with the 8 shards run one after another in this
   process (the array computed to numpy, ``n_shards=8``): the median over
   the repeats of the ratio (one-process time) / (cluster time), the two
   fits of a repeat run back to back; whether both give the same model (bit
   for bit); the load average (1 minute) before and after the repeats, since
   the machine may be shared; and, from one run each, the ratio of three
   sequential epochs of the plain estimator to the cluster fit.

Commands (``SKLEARN_BUDGET_DATA`` pointing to the local data; needs the
``dask`` extra, ``pip install -e ".[dask]"``)::

    python benchmarks/bench_mixing.py                               # 1e7 rows
    python benchmarks/bench_mixing.py --synthetic-rows 3000000      # as in the docs
    python benchmarks/bench_mixing.py --skip-synthetic              # tables 1-2, real data
    python benchmarks/bench_mixing.py --skip-real --synthetic-rows 3000000
    python benchmarks/bench_mixing.py --quick                       # a smoke run

Options: ``--budget`` (100), ``--mixes`` (3), ``--repeats`` (3, table 3),
``--a9a-rows`` (32561), ``--synthetic-rows`` (10**7), ``--no-synthetic-epochs``
(skips the three sequential epochs on the synthetic stream, the costliest
column), ``--skip-shards`` (table 2), ``--skip-real``, ``--skip-synthetic``.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster
from sklearn.base import clone
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _data import DATA_HOME  # noqa: E402

from sklearn_budget import (  # noqa: E402
    BudgetedSGDClassifier,
    Forgetron,
    ProjectronPlusPlus,
    RandomizedBudgetPerceptron,
)
from sklearn_budget.datasets import fetch_a9a, fetch_usps, make_two_gaussians  # noqa: E402
from sklearn_budget.parallel import ParameterMixingClassifier  # noqa: E402

N_CHUNKS = 8


def estimators(budget):
    """(label, estimator): the defaults, and average=False for Forgetron and RBP."""
    return [
        ("Forgetron", Forgetron(budget=budget, random_state=0)),
        ("Forgetron", Forgetron(budget=budget, average=False, random_state=0)),
        ("RBP", RandomizedBudgetPerceptron(budget=budget, random_state=0)),
        ("RBP", RandomizedBudgetPerceptron(budget=budget, average=False, random_state=0)),
        (
            "BSGD-proj",
            BudgetedSGDClassifier(budget=budget, maintenance="projection", random_state=0),
        ),
        ("BSGD-merge", BudgetedSGDClassifier(budget=budget, maintenance="merging", random_state=0)),
        ("Projectron++", ProjectronPlusPlus(budget=budget, random_state=0)),
    ]


def label(name, est):
    return [name, str(est.average)]


def load_a9a(n_train):
    X, y = fetch_a9a(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    Xt, yt = fetch_a9a(
        data_home=DATA_HOME, subset="test", download_if_missing=False, return_X_y=True
    )
    order = np.random.RandomState(0).permutation(X.shape[0])[:n_train]
    return X[order].toarray(), y[order], Xt.toarray()[:10000], yt[:10000]


def load_usps():
    kw = dict(data_home=DATA_HOME, positive_digit=None, download_if_missing=False, return_X_y=True)
    X, y = fetch_usps(**kw)
    Xt, yt = fetch_usps(subset="test", **kw)
    order = np.random.RandomState(0).permutation(X.shape[0])
    return X[order], y[order], Xt, yt


def synthetic_dask(n_rows, n_chunks):
    """Two 2-D Gaussians, each chunk drawn by its own task (never all in one process)."""
    size = n_rows // n_chunks

    def chunk(i, part):
        X, y = make_two_gaussians(size, random_state=1000 + i)
        return X if part == 0 else y

    Xs = [
        da.from_delayed(dask.delayed(chunk)(i, 0), shape=(size, 2), dtype=np.float64)
        for i in range(n_chunks)
    ]
    ys = [
        da.from_delayed(dask.delayed(chunk)(i, 1), shape=(size,), dtype=np.int64)
        for i in range(n_chunks)
    ]
    return da.concatenate(Xs), da.concatenate(ys)


def sequential(est, X, y, Xt, yt, max_iter):
    """Test accuracy and wall time of ``fit`` with ``max_iter`` epochs (all played)."""
    t0 = time.perf_counter()
    model = clone(est).set_params(max_iter=max_iter, tol=None).fit(X, y)
    return model.score(Xt, yt), time.perf_counter() - t0


def per_mix(est, X, y, Xt, yt, n_mixes, **kw):
    """Test accuracy after each mix (the last model stays after an early stop)."""
    accs = []
    clf = ParameterMixingClassifier(est, n_mixes=n_mixes, random_state=0, **kw)
    clf._fit(X, y, None, on_mix=lambda k, m: accs.append(m.score(Xt, yt)))
    return accs + [accs[-1]] * (n_mixes - len(accs))


def print_table(title, header, rows):
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in r]
        print("| " + " | ".join(cells) + " |")
    sys.stdout.flush()


def load():
    return f"{os.getloadavg()[0]:.1f}"


def real_data(args, ests):
    n_mixes = args.mixes
    data = {"a9a": load_a9a(args.a9a_rows), "USPS-10": load_usps()}
    for dname, (X, y, Xt, yt) in data.items():
        print(f"{dname}: {X.shape[0]} training rows, {Xt.shape[0]} test rows")
    header = ["estimator", "average", "1 pass", f"{n_mixes} epochs", "fit (defaults)"]
    header += [f"mix {k}" for k in range(1, n_mixes + 1)]
    last = {}
    for dname, (X, y, Xt, yt) in data.items():
        t0, rows = time.perf_counter(), []
        for i, (name, est) in enumerate(ests):
            one, _ = sequential(est, X, y, Xt, yt, 1)
            many, _ = sequential(est, X, y, Xt, yt, n_mixes)
            default = clone(est).fit(X, y).score(Xt, yt)
            accs = per_mix(est, X, y, Xt, yt, n_mixes, n_shards=N_CHUNKS)
            last[dname, i, N_CHUNKS] = accs[-1]
            rows.append(label(name, est) + [one, many, default] + accs)
        print_table(
            f"Table 1, {dname}: test accuracy, {N_CHUNKS} shards "
            f"({time.perf_counter() - t0:.0f} s)",
            header,
            rows,
        )
    if args.skip_shards:
        return
    counts = (2, 8, 32, 128)
    for dname, (X, y, Xt, yt) in data.items():
        t0, rows = time.perf_counter(), []
        for i, (name, est) in enumerate(ests):
            r = label(name, est)
            for S in counts:
                if (dname, i, S) not in last:
                    clf = ParameterMixingClassifier(
                        est, n_shards=S, n_mixes=n_mixes, random_state=0
                    ).fit(X, y)
                    last[dname, i, S] = clf.score(Xt, yt)
                r.append(last[dname, i, S])
            rows.append(r)
        print_table(
            f"Table 2, {dname}: test accuracy after {n_mixes} mixes by number of shards "
            f"({time.perf_counter() - t0:.0f} s)",
            ["estimator", "average"] + [str(S) for S in counts],
            rows,
        )


def synthetic(args, ests):
    n_mixes = args.mixes
    Xt, yt = make_two_gaussians(20000, random_state=1)
    header = ["estimator", "average", "1 pass", f"{n_mixes} epochs"]
    header += [f"mix {k}" for k in range(1, n_mixes + 1)]
    t_start = time.perf_counter()
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        Xd, yd = synthetic_dask(args.synthetic_rows, N_CHUNKS)
        Xd, yd = client.persist([Xd, yd])
        X, y = client.compute([Xd, yd], sync=True)
        print(f"\nsynthetic: {X.shape[0]} training rows in {N_CHUNKS} chunks, 20000 test rows")
        rows, times = [], []
        for i, (name, est) in enumerate(ests):
            accs = per_mix(est, Xd, yd, Xt, yt, n_mixes)
            with threadpool_limits(1, user_api="blas"):
                one, _ = sequential(est, X, y, Xt, yt, 1)
                many, t_many = "-", None
                if not args.no_synthetic_epochs:
                    many, t_many = sequential(est, X, y, Xt, yt, n_mixes)
            rows.append(label(name, est) + [one, many] + accs)
            # Table 3: the fits alone (no scoring), cluster then this process.
            before, ratios, cluster_times, same = load(), [], [], True
            for _ in range(args.repeats):
                clf = ParameterMixingClassifier(est, n_mixes=n_mixes, random_state=0)
                t0 = time.perf_counter()
                clf.fit(Xd, yd)
                cluster_times.append(time.perf_counter() - t0)
                with threadpool_limits(1, user_api="blas"):
                    t0 = time.perf_counter()
                    local = ParameterMixingClassifier(
                        est, n_shards=N_CHUNKS, n_mixes=n_mixes, random_state=0
                    ).fit(X, y)
                    ratios.append((time.perf_counter() - t0) / cluster_times[-1])
                same = same and all(
                    np.array_equal(getattr(local.estimator_, a), getattr(clf.estimator_, a))
                    for a in ("support_", "support_vectors_", "dual_coef_")
                )
            seq = "-" if t_many is None else f"{t_many / np.median(cluster_times):.2f}"
            times.append(
                label(name, est)
                + [clf.n_mixes_, f"{np.median(ratios):.2f}", "yes" if same else "NO", seq]
                + [f"{before} / {load()}"]
            )
            print(f"  {name} average={est.average}: done", file=sys.stderr, flush=True)
        del X, y
    print_table(
        f"Table 1, two Gaussians ({args.synthetic_rows} rows as a dask array of {N_CHUNKS} "
        f"chunks): test accuracy, one shard per chunk on the cluster",
        header,
        rows,
    )
    print_table(
        f"Table 3: wall time of the mixing fit, this process / LocalCluster of 2 workers "
        f"(median of {args.repeats}); {n_mixes} sequential epochs / cluster (1 run); "
        f"({time.perf_counter() - t_start:.0f} s)",
        [
            "estimator",
            "average",
            "mixes",
            "one process / cluster",
            "same model",
            f"{n_mixes} epochs / cluster",
            "load average before / after",
        ],
        times,
    )


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--mixes", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of table 3")
    parser.add_argument("--a9a-rows", type=int, default=32561)
    parser.add_argument("--synthetic-rows", type=int, default=10_000_000)
    parser.add_argument(
        "--no-synthetic-epochs",
        action="store_true",
        help="skip the sequential epochs on the synthetic stream",
    )
    parser.add_argument("--quick", action="store_true", help="a9a 8000 rows, 1e5 synthetic rows")
    parser.add_argument("--skip-shards", action="store_true", help="skip table 2")
    parser.add_argument("--skip-real", action="store_true", help="only the synthetic stream")
    parser.add_argument("--skip-synthetic", action="store_true", help="only a9a and USPS")
    args = parser.parse_args()
    if args.quick:
        args.a9a_rows, args.synthetic_rows = 8000, 100_000
    ests = estimators(args.budget)
    print(
        f"budget={args.budget}, {args.mixes} mixes, random_state=0; "
        f"load average at start {load()} ({os.cpu_count()} cores)"
    )
    if not args.skip_real:
        with threadpool_limits(1, user_api="blas"):
            real_data(args, ests)
    if not args.skip_synthetic:
        synthetic(args, ests)


if __name__ == "__main__":
    main()
