"""One event at a time: the cost of a one-row call, against scikit-learn and river.

A stream of events (20 features, two classes, a nonlinear boundary) is
played row by row: after a warm-up of ``--warmup`` rows (so that every
budget of ``--budget`` members is full), each estimator takes ``--calls``
one-row calls of ``partial_fit``, then of ``predict``, ``decision_function``
and ``predict_proba``, on the rows that follow, timed call by call; the
table gives the median per call and its ratio to ``SGDClassifier``
(``loss='log_loss'``, so that it has ``predict_proba``) measured in the same
run. Every online estimator appears with ``average=False`` (the last
hypothesis), and with its default ``average`` where that is another (the
average: the compiled one-row path of ``sklearn_budget._one_row`` plays both).
More columns for ``partial_fit``: the mean per call (the median hides the
rare costly calls: an averaged removal rule folds the members that leave
into the average, and every round of a checkpoint takes the average), the
same one-row calls through the per-call path of ``_play`` (the compiled
one-row path switched off: what a one-row call cost before it), and the
cost of a round inside one call of ``--calls`` rows (what the per-call cost
is to be compared with).

The second table does the same for the river classifiers of
:mod:`sklearn_budget.river` (``learn_one`` with its mean, ``predict_one``,
``predict_proba_one`` on dict events, both ``average`` settings) against
river's ``linear_model.Perceptron`` (the ratios) and ``LogisticRegression``.
Finally, profiles of one-row ``partial_fit`` calls and of ``learn_one``
show where the remaining time goes.

The whole measurement is repeated ``--repeats`` times and each cell is the
median of the repeats. The machine's load average is printed with the
tables: on a shared machine, read the ratios, not the absolute times.

Run from the repository root::

    python benchmarks/bench_streaming.py                 # a few minutes
    python benchmarks/bench_streaming.py --quick         # seconds
    python benchmarks/bench_streaming.py --out streaming.md
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import cProfile
import io
import os
import platform
import pstats
import time
import warnings
from contextlib import contextmanager

import numpy as np
from sklearn.linear_model import SGDClassifier
from threadpoolctl import threadpool_limits

import sklearn_budget
from sklearn_budget import _one_row

ESTIMATORS = [
    "KernelPerceptron",
    "Stoptron",
    "KernelPassiveAggressive",
    "Projectron",
    "ProjectronPlusPlus",
    "Forgetron",
    "RandomizedBudgetPerceptron",
    "BudgetPerceptron",
    "TighterBudgetPerceptron",
    "BudgetedSGDClassifier",
    "Winnow",
]

PARTIAL_FIT = ["partial_fit", "partial_fit mean", "via _play", "per round"]
PREDICT = ["predict", "decision_function", "predict_proba"]


def make_stream(n, n_features, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    y = (X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.3 * rng.randn(n) > 0).astype(int)
    return X, y


def make_estimator(name, budget, n_features, average=None):
    if name == "SGDClassifier":
        return SGDClassifier(loss="log_loss", random_state=0)
    cls = getattr(sklearn_budget, name)
    params = cls().get_params()
    kw = {"random_state": 0}
    if "gamma" in params:
        kw["gamma"] = 1.0 / n_features
    if "budget" in params:
        kw["budget"] = budget
    if average is not None:
        kw["average"] = average
    return cls(**kw)


def configurations(names):
    """(label, name, average) of each row: average=False, then the default if it differs."""
    rows = []
    for name in names:
        default = getattr(sklearn_budget, name)().get_params()["average"]
        rows.append((name if default is False else f"{name}(average=False)", name, False))
        if default is not False:
            rows.append((f"{name} (default average={default!r})", name, None))
    return rows


def per_call(fn, args_list, mean=False):
    """Median seconds of ``fn(*args)`` over the argument tuples (and the mean)."""
    times = np.empty(len(args_list))
    clock = time.perf_counter
    for k, args in enumerate(args_list):
        t = clock()
        fn(*args)
        times[k] = clock() - t
    if mean:
        return float(np.median(times)), float(np.mean(times))
    return float(np.median(times))


@contextmanager
def without_one_row_path():
    """One-row calls through _play, as before the compiled one-row path."""
    original = _one_row.build_path
    _one_row.build_path = lambda est: None
    try:
        yield
    finally:
        _one_row.build_path = original


def bench_sklearn(configs, X, y, warmup, calls, budget):
    rows = []
    span = range(warmup, warmup + calls)
    for label, name, average in [("SGDClassifier", "SGDClassifier", None)] + configs:
        est = make_estimator(name, budget, X.shape[1], average)
        est.partial_fit(X[:warmup], y[:warmup], classes=[0, 1])
        block = make_estimator(name, budget, X.shape[1], average)
        block.partial_fit(X[:warmup], y[:warmup], classes=[0, 1])
        slow = make_estimator(name, budget, X.shape[1], average)
        slow.partial_fit(X[:warmup], y[:warmup], classes=[0, 1])
        one = [(X[i : i + 1], y[i : i + 1]) for i in span]
        timings = dict(
            zip(["partial_fit", "partial_fit mean"], per_call(est.partial_fit, one, mean=True))
        )
        with without_one_row_path():
            timings["via _play"] = per_call(slow.partial_fit, one)
        t = time.perf_counter()
        block.partial_fit(X[warmup : warmup + calls], y[warmup : warmup + calls])
        timings["per round"] = (time.perf_counter() - t) / calls
        Xs = [(x,) for x, _ in one]
        for method in PREDICT:
            fn = getattr(est, method, None)
            timings[method] = per_call(fn, Xs) if fn is not None else np.nan
        rows.append((label, timings))
    return rows


def river_learners():
    from river import linear_model

    return {
        "river Perceptron": linear_model.Perceptron(),
        "river LogisticRegression": linear_model.LogisticRegression(),
    }


def bench_river(configs, X, y, warmup, calls, budget):
    import sklearn_budget.river as sbr

    keys = [f"x{j}" for j in range(X.shape[1])]
    events = [dict(zip(keys, row.tolist())) for row in X]
    labels = [bool(v) for v in y]
    models = dict(river_learners())
    for label, name, average in configs:
        kw = make_estimator(name, budget, X.shape[1], average).get_params()
        models[f"sklearn_budget.river.{label}"] = getattr(sbr, name)(**kw)
    rows = []
    for label, model in models.items():
        for x, t in zip(events[:warmup], labels[:warmup]):
            model.learn_one(x, t)
        span = range(warmup, warmup + calls)
        learn = [(events[i], labels[i]) for i in span]
        timings = dict(zip(["learn_one", "learn_one mean"], per_call(model.learn_one, learn, True)))
        for method in ("predict_one", "predict_proba_one"):
            timings[method] = per_call(getattr(model, method), [(events[i],) for i in span])
        rows.append((label, timings))
    return rows


def median_of(runs):
    """Each cell the median over the repeats."""
    out = []
    for k, (label, timings) in enumerate(runs[0]):
        out.append((label, {m: float(np.median([r[k][1][m] for r in runs])) for m in timings}))
    return out


def table(rows, methods, reference, ratio_to=None):
    ref = dict(rows)[reference]
    head = "| model | " + " | ".join(f"{m} (us) | ratio" for m in methods) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(methods)]
    for name, timings in rows:
        cells = []
        for m in methods:
            v = timings[m]
            base = ref[(ratio_to or {}).get(m, m)]
            cells.append(f"{v * 1e6:.1f} | {v / base:.2f}" if np.isfinite(v) else "- | -")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def profile(fn, args_list, top=12):
    prof = cProfile.Profile()
    prof.enable()
    for args in args_list:
        fn(*args)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", default="Forgetron,BudgetedSGDClassifier,ProjectronPlusPlus")
    parser.add_argument("--no-river", action="store_true", help="skip the river tables")
    parser.add_argument("--quick", action="store_true", help="few calls, a few estimators")
    parser.add_argument("--out", help="also write the tables to this Markdown file")
    args = parser.parse_args(argv)
    names = ESTIMATORS
    if args.quick:
        args.warmup, args.calls, args.repeats = 300, 200, 1
        names = ["Forgetron", "ProjectronPlusPlus", "BudgetedSGDClassifier"]
    X, y = make_stream(args.warmup + args.calls, args.features)
    warnings.simplefilter("ignore", UserWarning)
    try:
        import river  # noqa: F401
    except ImportError:
        args.no_river = True
    out = []
    with threadpool_limits(1):
        load = os.getloadavg()
        out.append(
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
            f"{args.features} features, budget {args.budget}, {args.calls} one-row calls "
            f"after {args.warmup} rows, median per call, median of {args.repeats} runs"
        )
        configs = configurations(names)
        runs = [
            bench_sklearn(configs, X, y, args.warmup, args.calls, args.budget)
            for _ in range(args.repeats)
        ]
        rows = median_of(runs)
        # Ratios: partial_fit columns to SGDClassifier.partial_fit.
        to_fit = {"via _play": "partial_fit", "per round": "partial_fit"}
        out += ["", table(rows, PARTIAL_FIT + PREDICT, "SGDClassifier", to_fit)]
        if not args.no_river:
            runs = [
                bench_river(configs, X, y, args.warmup, args.calls, args.budget)
                for _ in range(args.repeats)
            ]
            methods = ["learn_one", "learn_one mean", "predict_one", "predict_proba_one"]
            out += ["", table(median_of(runs), methods, "river Perceptron")]
        load = os.getloadavg()
        out.append(f"\nload average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print("\n".join(out), flush=True)
        span = range(args.warmup, args.warmup + args.calls)
        keys = [f"x{j}" for j in range(X.shape[1])]
        events = [(dict(zip(keys, X[i].tolist())), bool(y[i])) for i in range(len(y))]
        for name in args.profile.split(","):
            est = make_estimator(name, args.budget, args.features)
            est.partial_fit(X[: args.warmup], y[: args.warmup], classes=[0, 1])
            text = profile(est.partial_fit, [(X[i : i + 1], y[i : i + 1]) for i in span])
            print(f"\nProfile of one-row {name}().partial_fit calls (defaults):\n{text}")
            if not args.no_river:
                import sklearn_budget.river as sbr

                model = getattr(sbr, name)(**est.get_params())
                for x, t in events[: args.warmup]:
                    model.learn_one(x, t)
                text = profile(model.learn_one, events[args.warmup :])
                print(f"Profile of river {name}().learn_one (defaults):\n{text}")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
