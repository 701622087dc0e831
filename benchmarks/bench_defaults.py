"""Measurements behind the default parameters of the Projectrons and the
Budget Perceptrons.

(a) ``eta`` of the Projectron and the Projectron++: support size, fit time
    and test accuracy against ``eta`` (everything else default) on Adult
    (a9a, the first ``--n-a9a`` training rows, tested on the first 5000
    test rows) and on USPS (10 classes and digit 0 against the rest).
(b) ``budget`` of the Projectrons (the hard bound) at ``eta`` 0.1 and 0.5,
    on the same data.
(c) ``max_iter`` and ``average`` (False, True: within the budget, 'exact':
    the unbounded exact average) of the Budget Perceptron and the Tighter
    Budget Perceptron (``budget=100``, everything else default) on a9a,
    USPS (0 against the rest), banana and waveform: test accuracy, support
    size of the model and fit time.
(d) One fit of the default ``ProjectronPlusPlus()`` on the 32561 training
    rows of a9a.

Run from the repository root::

    python benchmarks/bench_defaults.py              # (a), (b) and (c)
    python benchmarks/bench_defaults.py --part d     # the full a9a fit
    python benchmarks/bench_defaults.py --quick      # a fast smoke run

The data are read from ``SKLEARN_BUDGET_DATA`` (default ``../shared/data``
beside the repository); nothing is downloaded.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _data import DATA_HOME  # noqa: E402

from sklearn_budget import (  # noqa: E402
    BudgetPerceptron,
    Projectron,
    ProjectronPlusPlus,
    TighterBudgetPerceptron,
)
from sklearn_budget.datasets import (  # noqa: E402
    fetch_a9a,
    fetch_banana,
    fetch_usps,
    fetch_waveform,
)

ETAS = [0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9]

BUDGETS = [(0.1, 100), (0.1, 200), (0.1, 500), (0.1, 1000), (0.5, 200), (0.5, 500)]


def load(name, n_train=None, n_test=None):
    """Train and test rows of a shipped data set."""
    kw = dict(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    if name == "a9a":
        X, y = fetch_a9a(subset="train", **kw)
        Xt, yt = fetch_a9a(subset="test", **kw)
    elif name.startswith("usps"):
        digit = None if name == "usps10" else 0
        X, y = fetch_usps(subset="train", positive_digit=digit, **kw)
        Xt, yt = fetch_usps(subset="test", positive_digit=digit, **kw)
    else:
        fetch = fetch_banana if name == "banana" else fetch_waveform
        X, y = fetch(**kw)
        # Seeded split: banana as the Raetsch splits (400 train), waveform
        # 4000 / 1000.
        train_size = 400 if name == "banana" else 4000
        X, Xt, y, yt = train_test_split(X, y, train_size=train_size, random_state=0, stratify=y)
    return X[:n_train], y[:n_train], Xt[:n_test], yt[:n_test]


def measure(est, data):
    X, y, Xt, yt = data
    tic = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of max_iter
        est.fit(X, y)
    fit_time = time.perf_counter() - tic
    return len(est.support_), fit_time, est.score(Xt, yt)


def projectron_sets(n_a9a, quick):
    return {
        "a9a": load("a9a", n_a9a, 5000),
        "usps10": load("usps10", 1000 if quick else None),
        "usps0": load("usps0", 1000 if quick else None),
    }


def part_a(n_a9a, quick):
    etas = [0.1, 0.5, 0.9] if quick else ETAS
    sets = projectron_sets(n_a9a, quick)
    print("(a) eta of the Projectrons (default gamma='scale', max_iter=5)")
    print(f"{'data':<7} {'estimator':<19} {'eta':>5} {'|S|':>6} {'fit s':>8} {'test acc':>9}")
    for name, data in sets.items():
        for Est in (Projectron, ProjectronPlusPlus):
            for eta in etas:
                n_sv, t, acc = measure(Est(eta=eta, random_state=0), data)
                print(
                    f"{name:<7} {Est.__name__:<19} {eta:>5} {n_sv:>6d} {t:>8.1f} {acc:>9.4f}",
                    flush=True,
                )


def part_b(n_a9a, quick):
    budgets = BUDGETS[:2] if quick else BUDGETS
    sets = projectron_sets(n_a9a, quick)
    print("(b) budget of the Projectrons (the hard bound)")
    print(
        f"{'data':<7} {'estimator':<19} {'eta':>5} {'budget':>6} {'|S|':>6} {'fit s':>8} "
        f"{'test acc':>9}"
    )
    for name, data in sets.items():
        for Est in (Projectron, ProjectronPlusPlus):
            for eta, budget in budgets:
                n_sv, t, acc = measure(Est(eta=eta, budget=budget, random_state=0), data)
                print(
                    f"{name:<7} {Est.__name__:<19} {eta:>5} {budget:>6} {n_sv:>6d} {t:>8.1f} "
                    f"{acc:>9.4f}",
                    flush=True,
                )


def part_c(n_a9a, quick):
    names = ["a9a", "usps0", "banana", "waveform"]
    n = 1000 if quick else None
    sets = {
        name: load(name, n_a9a if name == "a9a" else n, 5000 if name == "a9a" else None)
        for name in names
    }
    # average=True: within the budget; 'exact': the unbounded exact average.
    grid = [(1, False), (1, True), (1, "exact"), (5, False), (5, True), (5, "exact")]
    seeds = [0] if quick else [0, 1, 2]
    print(
        f"(c) Budget Perceptrons, budget=100 (mean over random_state {seeds}; "
        "|S| of the model used to predict)"
    )
    print(
        f"{'data':<9} {'estimator':<24} {'max_iter':>8} {'average':>7} {'|S|':>6} "
        f"{'fit s':>7} {'test acc':>9}"
    )
    for name, data in sets.items():
        for Est in (BudgetPerceptron, TighterBudgetPerceptron):
            for max_iter, average in grid:
                runs = [
                    measure(Est(max_iter=max_iter, average=average, random_state=s), data)
                    for s in seeds
                ]
                n_sv, t, acc = np.mean(runs, axis=0)
                print(
                    f"{name:<9} {Est.__name__:<24} {max_iter:>8} {average!s:>7} "
                    f"{n_sv:>6.0f} {t:>7.1f} {acc:>9.4f}",
                    flush=True,
                )


def part_d():
    data = load("a9a", None, None)
    n_sv, t, acc = measure(ProjectronPlusPlus(random_state=0), data)
    print(
        f"(d) default ProjectronPlusPlus() on the {data[0].shape[0]} rows of a9a: "
        f"|S| = {n_sv}, fit {t:.1f} s, test accuracy {acc:.4f} "
        f"({data[2].shape[0]} test rows)"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["a", "b", "c", "d"], action="append")
    parser.add_argument("--n-a9a", type=int, default=5000, help="a9a training rows of (a), (b)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    parts = args.part or ["a", "b", "c"]
    n_a9a = 1000 if args.quick else args.n_a9a
    if "a" in parts:
        part_a(n_a9a, args.quick)
    if "b" in parts:
        part_b(n_a9a, args.quick)
    if "c" in parts:
        part_c(n_a9a, args.quick)
    if "d" in parts:
        part_d()


if __name__ == "__main__":
    main()
