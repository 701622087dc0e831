"""The averaged model within the budget, against the exact average and the last hypothesis.

For every learner that removes members (Forgetron, Randomized Budget
Perceptron, Budget and Tighter Budget Perceptrons, budgeted SGD with each
maintenance) and budgets 100 and 500, one pass (``max_iter=1``, shuffled,
``random_state=0``) over each data set, fitted three times on the same
stream: ``average=False`` (the last hypothesis), ``average='exact'`` (the
unbounded exact average) and ``average=True`` (the average kept within the
budget). Prints test accuracy, support size, fit time (and its ratio to the
last hypothesis's) and the peak memory that ``fit`` allocated (tracemalloc).

Data: a9a (all 32561 training rows, tested on the 16281 test rows, rbf
``gamma=0.02``), USPS 10 classes (7291 / 2007), Banana (seeded split of
4000 / 1300) and Waveform (class 1 against the rest, 4000 / 1000), with
``gamma='scale'`` except on a9a.

Run from the repository root::

    python benchmarks/bench_averaging.py                 # everything
    python benchmarks/bench_averaging.py --data banana usps10 --budgets 100
    python benchmarks/bench_averaging.py --quick         # a fast smoke run

The data are read from ``SKLEARN_BUDGET_DATA`` (default ``../shared/data``
beside the repository); nothing is downloaded.
"""

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _data import DATA_HOME  # noqa: E402

from sklearn_budget import (  # noqa: E402
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    RandomizedBudgetPerceptron,
    TighterBudgetPerceptron,
)
from sklearn_budget.datasets import (  # noqa: E402
    fetch_a9a,
    fetch_banana,
    fetch_usps,
    fetch_waveform,
)

ESTIMATORS = {
    "Forgetron": lambda B: Forgetron(budget=B),
    "RBP": lambda B: RandomizedBudgetPerceptron(budget=B),
    "BudgetPerceptron": lambda B: BudgetPerceptron(budget=B),
    "Tighter": lambda B: TighterBudgetPerceptron(budget=B),
    "BSGD removal": lambda B: BudgetedSGDClassifier(budget=B, maintenance="removal"),
    "BSGD projection": lambda B: BudgetedSGDClassifier(budget=B, maintenance="projection"),
    "BSGD merging": lambda B: BudgetedSGDClassifier(budget=B, maintenance="merging"),
}
DATA = ["a9a", "usps10", "banana", "waveform"]
GAMMA = {"a9a": 0.02}


def load(name, quick):
    kw = dict(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    if name == "a9a":
        X, y = fetch_a9a(subset="train", **kw)
        Xt, yt = fetch_a9a(subset="test", **kw)
    elif name == "usps10":
        X, y = fetch_usps(subset="train", positive_digit=None, **kw)
        Xt, yt = fetch_usps(subset="test", positive_digit=None, **kw)
    else:
        X, y = (fetch_banana if name == "banana" else fetch_waveform)(**kw)
        X, Xt, y, yt = train_test_split(X, y, train_size=4000, random_state=0, stratify=y)
    if quick:
        return X[:1500], y[:1500], Xt[:1000], yt[:1000]
    return X, y, Xt, yt


def run(make, average, data, gamma):
    X, y, Xt, yt = data
    est = make().set_params(average=average, max_iter=1, random_state=0, gamma=gamma)
    tracemalloc.start()
    start = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "accuracy": float(est.score(Xt, yt)),
        "support": int(len(est.support_)),
        "seconds": seconds,
        "peak_mb": peak / 2**20,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=DATA, choices=DATA)
    parser.add_argument("--budgets", nargs="+", type=int, default=[100, 500])
    parser.add_argument("--estimators", nargs="+", default=list(ESTIMATORS))
    parser.add_argument("--quick", action="store_true", help="1500 training rows, budget 50")
    parser.add_argument("--json", help="write the measurements to this file")
    args = parser.parse_args(argv)
    budgets = [50] if args.quick else args.budgets
    results = []
    print(
        "| data | estimator | budget | last | exact (support) | bounded (support) "
        "| bounded - exact | fit s: last / exact / bounded | bounded / last "
        "| peak MB: last / exact / bounded |"
    )
    print("|" + "---|" * 10)
    for name in args.data:
        data = load(name, args.quick)
        gamma = GAMMA.get(name, "scale")
        for est_name in args.estimators:
            for B in budgets:
                r = {
                    av: run(lambda: ESTIMATORS[est_name](B), av, data, gamma)
                    for av in (False, "exact", True)
                }
                last, exact, bounded = r[False], r["exact"], r[True]
                print(
                    f"| {name} | {est_name} | {B} | {last['accuracy']:.4f} "
                    f"| {exact['accuracy']:.4f} ({exact['support']}) "
                    f"| {bounded['accuracy']:.4f} ({bounded['support']}) "
                    f"| {bounded['accuracy'] - exact['accuracy']:+.4f} "
                    f"| {last['seconds']:.2f} / {exact['seconds']:.2f} / {bounded['seconds']:.2f} "
                    f"| {bounded['seconds'] / last['seconds']:.2f} "
                    f"| {last['peak_mb']:.1f} / {exact['peak_mb']:.1f} / {bounded['peak_mb']:.1f} |",
                    flush=True,
                )
                results.append(
                    {
                        "data": name,
                        "estimator": est_name,
                        "budget": B,
                        "last": last,
                        "exact": exact,
                        "bounded": bounded,
                    }
                )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
