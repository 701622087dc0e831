"""The table of issue 29 (the cost of the averaged hypothesis), one row at a time.

Each row measures, for the installed ``sklearn_budget``, one line of the
table filed in the issue:

- ``a9a-100``, ``a9a-1000``: a9a's first rows, ``Forgetron(budget=B,
  gamma=0.02, max_iter=1)``, fit then a first ``decision_function`` on 1,000
  rows, averaged over last (the ratio of the two times);
- ``a9a-full``: ``Forgetron(budget=1000, max_iter=1)`` one epoch on a9a,
  averaged and last (seconds);
- ``bsgd``: ``BudgetedSGDClassifier(budget=1000, max_iter=1)`` on a9a as a
  dense array, ``average=True`` and ``False`` (seconds);
- ``sparse-100``, ``sparse-1000``: random CSR rows (50,000 columns, 60
  non-zeros each), ``Forgetron(budget=B, max_iter=1)`` one pass: the last and
  the averaged microseconds per round as multiples of the kernel work alone
  (``rbf_kernel`` of blocks of 1,000 rows against ``B`` rows);
- ``predict``: the first and the second ``decision_function`` on the 2,000
  training rows after an averaged fit with ``budget=500`` (milliseconds);
- ``nystroem``: the default ``Forgetron(budget=500)`` against a Nystroem map
  (500 components, the same gamma) and an averaged hinge SGD of 20 epochs:
  fit seconds, their ratio and the test accuracies on a9a's test set;
- ``stream``: a one-pass ``partial_fit`` of the 2-D stream of two Gaussians
  (``make_two_gaussians``), ``budget=100``, default instances (averaged) and
  ``average=False``: microseconds per round of Forgetron, the Randomized
  Budget Perceptron and the Budget Perceptron;
- ``river``: ``learn_one`` of the default ``sklearn_budget.river.Forgetron``
  and of river's ``linear_model.Perceptron`` on the 2-D stream as dicts
  (microseconds per event), timed on a second model of each after one
  stream of the same events on a first, so that the one-time costs of the
  process (the first compression's scan of the loaded libraries by
  threadpoolctl, about 30 ms) are not counted per event;
- ``progressive``: ``predict_proba_one`` then ``learn_one`` per event, the
  same two models, the same way (microseconds per event);
- ``mixing``: ``ParameterMixingClassifier`` of ``BudgetedSGDClassifier(
  budget=100, maintenance='projection')`` on 8 shards of the 2-D stream:
  test accuracy after each of three mixes, and of three sequential epochs;
- ``memory``: averaged ``Forgetron(budget=1000)`` fed the 2-D stream by
  ``partial_fit`` in chunks of 10,000 rows: the bytes of the numpy arrays it
  holds, and of its pickle, after 10% of the rounds and after all of them.

``--compare BEFORE_PYTHON AFTER_PYTHON`` runs every row under each
interpreter in turn (one subprocess per row and interpreter, the two of a
row back to back, so that both see the same load) and prints the merged
markdown table. Run with one BLAS thread and from outside the repository
(so that the interpreter imports its installed package)::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 SKLEARN_BUDGET_DATA=...
    python benchmarks/bench_issue_table.py                  # this interpreter
    python benchmarks/bench_issue_table.py --row stream     # one row
    python benchmarks/bench_issue_table.py --quick --compare OLD/bin/python NEW/bin/python

``--quick`` shrinks the costly rows (the sizes are printed in the labels).
For the a9a rows of Forgetron, the sparse rows and the first prediction,
``--repeat R`` times each fit (and the kernel work) R times in turn and
reports the medians (each a9a row first fits both models once on 1,000
rows, so that no timing pays the process's first use of a code path), and
``--sparse-rows N`` plays N rows rather than 5,000: the ratios at growing
N tell the cost of each round from the costs of each call (validation,
the checks and the average published at the end of ``fit``)::

    python benchmarks/bench_issue_table.py --row sparse-100 --repeat 5 --sparse-rows 50000

``--matching-pursuit-max B`` compresses the average by matching pursuit up
to a budget of B only, by the projection above (the package's B is 128): a
study of what the average costs at budget 100 without the pool's Gram
matrix (``bench_budget_scaling.py --accuracy`` takes the same option, for
what it costs in accuracy)::

    python benchmarks/bench_issue_table.py --row sparse-100 --repeat 5 --matching-pursuit-max 64
"""

import argparse
import os
import pickle
import subprocess
import time
import warnings

import numpy as np
import scipy.sparse as sp
from _data import DATA_HOME
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import SGDClassifier
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline

from sklearn_budget import (
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    RandomizedBudgetPerceptron,
    _averaging,
)
from sklearn_budget.datasets import fetch_a9a, make_two_gaussians

FULL = dict(
    repeat=1,
    a9a_rows=12_000,
    full_rows=None,
    sparse_rows=5_000,
    nystroem_rows=None,
    stream=200_000,
    events=5_000,
    progressive=2_000,
    mixing=80_000,
    memory=1_000_000,
)
QUICK = dict(
    repeat=1,
    a9a_rows=12_000,
    full_rows=8_000,
    sparse_rows=2_000,
    nystroem_rows=10_000,
    stream=50_000,
    events=2_000,
    progressive=500,
    mixing=20_000,
    memory=100_000,
)


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _a9a(n_rows=None, subset="train"):
    X, y = fetch_a9a(subset=subset, data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    return (X, y) if n_rows is None else (X[:n_rows], y[:n_rows])


def _rows_label(n_rows):
    return "full a9a" if n_rows is None else f"a9a {n_rows:,} rows"


def _avg_and_last(make, fit, X, repeat):
    """Median seconds of ``fit(make(average))`` for the average and the last
    hypothesis, ``repeat`` of each alternated, after one fit of each on the
    first 1,000 rows: the first fit of a process (with ``--compare``, each
    row's) pays the first use of its code paths (the averaged fit, timed
    first, used to pay them alone: 12,000 rows of a9a at budget 100 took
    0.06 s against 0.02, 2.7 times, where alternated fits after a warm-up
    take 0.044 s against 0.023, 1.9 times)."""
    for average in (True, False):
        fit(make(average), X[:1000])
    times = {True: [], False: []}
    for _ in range(repeat):
        for average in (True, False):
            est = make(average)
            times[average].append(_timed(lambda: fit(est, X))[0])
    return {k: float(np.median(v)) for k, v in times.items()}


def _medians(size):
    return f", medians of {size['repeat']}" if size["repeat"] > 1 else ""


def row_a9a(size, budget):
    X, y = _a9a(size["a9a_rows"])
    t = _avg_and_last(
        lambda average: Forgetron(
            budget=budget, gamma=0.02, max_iter=1, average=average, random_state=0
        ),
        lambda est, X: est.fit(X, y[: X.shape[0]]).decision_function(X[:1000]),
        X,
        size["repeat"],
    )
    label = (
        f"a9a {size['a9a_rows']:,} rows, Forgetron(budget={budget}), fit + 1st predict, "
        f"avg/last{_medians(size)}"
    )
    return label, f"{t[True] / t[False]:.2f}x ({t[True]:.3f} s / {t[False]:.3f} s)"


def row_a9a_full(size):
    X, y = _a9a(size["full_rows"])
    t = _avg_and_last(
        lambda average: Forgetron(budget=1000, max_iter=1, average=average, random_state=0),
        lambda est, X: est.fit(X, y[: X.shape[0]]),
        X,
        size["repeat"],
    )
    label = (
        f"{_rows_label(size['full_rows'])}, Forgetron(budget=1000, max_iter=1), avg vs last"
        f"{_medians(size)}"
    )
    return label, f"{t[True]:.2f} s vs {t[False]:.2f} s ({t[True] / t[False]:.2f}x)"


def row_bsgd(size):
    # Dense: the default maintenance, merging, builds new points and refuses CSR.
    X, y = _a9a(size["full_rows"])
    X = X.toarray()
    t = {}
    for average in (True, False):
        est = BudgetedSGDClassifier(budget=1000, max_iter=1, average=average, random_state=0)
        t[average], _ = _timed(lambda: est.fit(X, y))
    label = (
        f"{_rows_label(size['full_rows'])} dense, BudgetedSGD(budget=1000, max_iter=1), avg vs last"
    )
    return label, f"{t[True]:.1f} s vs {t[False]:.1f} s ({t[True] / t[False]:.1f}x)"


def _sparse_rows(n_rows, n_features=50_000, nnz=60, seed=0):
    rng = np.random.RandomState(seed)
    indices = np.concatenate(
        [np.sort(rng.choice(n_features, nnz, replace=False)) for _ in range(n_rows)]
    )
    data = rng.uniform(0.0, 1.0, n_rows * nnz)
    indptr = np.arange(0, n_rows * nnz + 1, nnz)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_features))
    y = np.where(X @ rng.standard_normal(n_features) > 0, 1, -1)
    return X, y


def _kernel_work(X, members, gamma):
    start = time.perf_counter()
    for s in range(0, X.shape[0], 1000):
        rbf_kernel(X[s : s + 1000], members, gamma=gamma)
    return time.perf_counter() - start


def row_sparse(size, budget):
    # ``repeat`` times each fit and the kernel work in turn, and keeps the
    # medians: one fit of a few thousand rows is as noisy as its ratio's gap
    # to the target on a shared machine.
    n_rows = size["sparse_rows"]
    X, y = _sparse_rows(n_rows)
    times = {True: [], False: []}
    kernels = []
    for _ in range(size["repeat"]):
        for average in (True, False):
            est = Forgetron(budget=budget, max_iter=1, average=average, random_state=0)
            with warnings.catch_warnings():
                # A random hyperplane in 50,000 features: from a few thousand
                # rows the models learn little, as their ConvergenceWarning
                # says. The row measures their cost.
                warnings.simplefilter("ignore", ConvergenceWarning)
                times[average].append(_timed(lambda: est.fit(X, y))[0])
        kernels.append(_kernel_work(X, X[:budget], est.gamma_))
    t = {k: float(np.median(v)) for k, v in times.items()}
    kernel = float(np.median(kernels))
    us = {k: 1e6 * v / n_rows for k, v in t.items()}
    label = (
        f"sparse {n_rows:,} rows d=50,000 nnz=60, Forgetron(budget={budget}) one pass, "
        "last / avg vs kernel work"
        + (f" (medians of {size['repeat']})" if size["repeat"] > 1 else "")
    )
    cell = (
        f"last {t[False] / kernel:.2f}x, avg {t[True] / kernel:.2f}x "
        f"({us[False]:.1f} / {us[True]:.1f} us/round, kernel {1e6 * kernel / n_rows:.2f})"
    )
    return label, cell


def row_predict(size):
    # Each of ``repeat`` fits is followed by two predictions; the medians of
    # the firsts and of the seconds (one pair of a few milliseconds each is
    # as noisy as the ratio's target, 1.5).
    X, y = _a9a(2000)
    first, second = [], []
    for _ in range(size["repeat"]):
        est = Forgetron(budget=500, gamma=0.02, max_iter=1, random_state=0).fit(X, y)
        first.append(_timed(lambda: est.decision_function(X))[0])
        second.append(_timed(lambda: est.decision_function(X))[0])
    first, second = np.median(first), np.median(second)
    label = f"1st vs 2nd predict after averaged fit (a9a 2,000 rows, budget=500{_medians(size)})"
    return label, f"{1e3 * first:.1f} ms then {1e3 * second:.1f} ms ({first / second:.2f}x)"


def _scale_gamma(X):
    # gamma='scale' as scikit-learn's SVC: 1 / (n_features * X.var()).
    mean = X.mean()
    var = X.multiply(X).mean() - mean**2 if sp.issparse(X) else X.var()
    return 1.0 / (X.shape[1] * var)


def row_nystroem(size):
    X, y = _a9a(size["nystroem_rows"])
    Xt, yt = _a9a(subset="test")
    if Xt.shape[1] < X.shape[1]:
        Xt = sp.csr_matrix((Xt.data, Xt.indices, Xt.indptr), shape=(Xt.shape[0], X.shape[1]))
    forgetron = Forgetron(budget=500, random_state=0)
    pipe = make_pipeline(
        Nystroem(n_components=500, gamma=_scale_gamma(X), random_state=0),
        SGDClassifier(loss="hinge", average=True, max_iter=20, random_state=0),
    )
    t_f, _ = _timed(lambda: forgetron.fit(X, y))
    t_n, _ = _timed(lambda: pipe.fit(X, y))
    label = f"{_rows_label(size['nystroem_rows'])}, default Forgetron(budget=500) vs Nystroem+SGD"
    cell = (
        f"{t_f:.1f} s vs {t_n:.1f} s ({t_f / t_n:.1f}x), "
        f"{forgetron.score(Xt, yt):.3f} vs {pipe.score(Xt, yt):.3f}"
    )
    return label, cell


def row_stream(size):
    n = size["stream"]
    X, y = make_two_gaussians(n, random_state=0)
    classes = np.unique(y)
    parts = []
    for cls in (Forgetron, RandomizedBudgetPerceptron, BudgetPerceptron):
        us = {}
        for average in (True, False):
            est = cls(budget=100, random_state=0, **({} if average else {"average": False}))
            t, _ = _timed(lambda: est.partial_fit(X, y, classes=classes))
            us[average] = 1e6 * t / n
        parts.append(f"{us[True]:.1f} (last {us[False]:.1f})")
    label = f"2-D stream {n:,} rounds, B=100, us/round: Forgetron, RBP, BudgetPerceptron"
    return label, ", ".join(parts)


def _river_events(n):
    X, y = make_two_gaussians(n, random_state=0)
    return [({0: float(a), 1: float(b)}, bool(t == 1)) for (a, b), t in zip(X, y)]


def _river_models():
    from river.linear_model import Perceptron

    from sklearn_budget.river import Forgetron as RiverForgetron

    return RiverForgetron(), Perceptron()


def _learn(model, events):
    for x, t in events:
        model.learn_one(x, t)


def _progressive(model, events):
    for x, t in events:
        model.predict_proba_one(x)
        model.learn_one(x, t)


def _per_event(loop, events):
    """Microseconds per event of ``loop`` on a fresh instance of each of the
    two models, after a first run on other instances (one-time costs)."""
    for model in _river_models():
        loop(model, events)
    out = []
    for model in _river_models():
        start = time.perf_counter()
        loop(model, events)
        out.append(1e6 * (time.perf_counter() - start) / len(events))
    return out


def row_river(size):
    events = _river_events(size["events"])
    out = _per_event(_learn, events)
    label = f"river learn_one, {len(events):,} events of the 2-D stream: Forgetron vs Perceptron"
    return label, f"{out[0]:.1f} us vs {out[1]:.1f} us"


def row_progressive(size):
    events = _river_events(size["progressive"])
    out = _per_event(_progressive, events)
    label = f"river progressive validation, {len(events):,} events: Forgetron vs Perceptron"
    return label, f"{out[0]:.1f} us vs {out[1]:.1f} us"


def row_mixing(size):
    from sklearn_budget.parallel import ParameterMixingClassifier

    n = size["mixing"]
    X, y = make_two_gaussians(n, random_state=0)
    Xt, yt = make_two_gaussians(20_000, random_state=1)
    est = BudgetedSGDClassifier(budget=100, maintenance="projection", random_state=0)
    mix = ParameterMixingClassifier(est, n_shards=8, n_mixes=3, random_state=0)
    accs = []
    # _fit's hook sees the mixed model after each mix (as benchmarks/bench_mixing.py).
    mix._fit(X, y, None, on_mix=lambda k, m: accs.append(m.score(Xt, yt)))
    seq = est.set_params(max_iter=3, tol=None).fit(X, y).score(Xt, yt)
    label = f"mixing BSGD projection, 2-D stream {n:,} rows, 8 shards: each mix vs sequential"
    return label, ", ".join(f"{a:.3f}" for a in accs) + f" vs {seq:.3f}"


def _array_bytes(obj, seen=None, depth=0):
    """Bytes of the numpy arrays reachable from ``obj`` through attributes and containers."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 6:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if sp.issparse(obj):
        return sum(
            _array_bytes(getattr(obj, a, None), seen, depth + 1)
            for a in ("data", "indices", "indptr")
        )
    if isinstance(obj, dict):
        items = obj.values()
    elif isinstance(obj, (list, tuple)):
        items = obj
    elif hasattr(obj, "__dict__"):
        items = vars(obj).values()
    else:
        return 0
    return sum(_array_bytes(v, seen, depth + 1) for v in items)


def row_memory(size):
    n = size["memory"]
    est = Forgetron(budget=1000, random_state=0)
    sizes = []
    chunk = 10_000
    checkpoints = {n // 10, n}
    for start in range(0, n, chunk):
        X, y = make_two_gaussians(chunk, random_state=start // chunk)
        est.partial_fit(X, y, classes=[-1, 1])
        if start + chunk in checkpoints:
            sizes.append((start + chunk, _array_bytes(est), len(pickle.dumps(est))))
    label = f"memory, averaged Forgetron(budget=1000), 2-D stream, partial_fit by {chunk:,}"
    cell = "; ".join(
        f"{r:,} rounds: arrays {a / 1e3:.0f} kB, pickle {p / 1e3:.0f} kB" for r, a, p in sizes
    )
    return label, cell


ROWS = {
    "a9a-100": lambda s: row_a9a(s, 100),
    "a9a-1000": lambda s: row_a9a(s, 1000),
    "a9a-full": row_a9a_full,
    "bsgd": row_bsgd,
    "sparse-100": lambda s: row_sparse(s, 100),
    "sparse-1000": lambda s: row_sparse(s, 1000),
    "predict": row_predict,
    "nystroem": row_nystroem,
    "stream": row_stream,
    "river": row_river,
    "progressive": row_progressive,
    "mixing": row_mixing,
    "memory": row_memory,
}


def compare(pythons, rows, options):
    print("| what | before | after |\n|---|---|---|", flush=True)
    for name in rows:
        cells, label = [], name
        for python in pythons:
            cmd = [python, os.path.abspath(__file__), "--row", name] + options
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode:
                cells.append("failed: " + done.stderr.strip().splitlines()[-1])
                continue
            label, cell = done.stdout.strip().splitlines()[-1].strip("| ").split(" | ")
            cells.append(cell)
        print(f"| {label} | {cells[0]} | {cells[1]} |", flush=True)


def _positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller costly rows")
    parser.add_argument("--row", action="append", choices=list(ROWS), help="only these rows")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="two pythons")
    parser.add_argument(
        "--repeat",
        type=_positive,
        default=1,
        help="a9a, sparse and predict rows: medians of this many fits",
    )
    parser.add_argument("--sparse-rows", type=_positive, help="the sparse rows: this many rows")
    parser.add_argument(
        "--matching-pursuit-max",
        type=_positive,
        metavar="B",
        help="the largest budget compressed by matching pursuit (a study of the average's cost)",
    )
    args = parser.parse_args()
    if args.matching_pursuit_max:
        _averaging.OMP_MAX_BUDGET = args.matching_pursuit_max
    rows = args.row or list(ROWS)
    if args.compare:
        options = ["--quick"] if args.quick else []
        options += ["--repeat", str(args.repeat)]
        if args.sparse_rows:
            options += ["--sparse-rows", str(args.sparse_rows)]
        if args.matching_pursuit_max:
            options += ["--matching-pursuit-max", str(args.matching_pursuit_max)]
        compare(args.compare, rows, options)
        return
    size = dict(QUICK if args.quick else FULL, repeat=args.repeat)
    if args.sparse_rows:
        size["sparse_rows"] = args.sparse_rows
    for name in rows:
        label, cell = ROWS[name](size)
        print(f"| {label} | {cell} |", flush=True)


if __name__ == "__main__":
    main()
