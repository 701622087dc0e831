"""Command line entry point: ``sklearn-budget`` or ``python -m sklearn_budget``."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys
import time

import numpy as np


def demo(n_samples=10000, n_test=5000, budget=500, random_state=0, out=sys.stdout):
    """Train every estimator online on the synthetic set and report.

    Prints, per estimator, the online mistake rate of one pass (as in the
    Projectron paper's Table 3), the support size, and the held-out accuracy
    of the final hypothesis.
    """
    from sklearn_budget import (
        BudgetPerceptron,
        Forgetron,
        KernelPassiveAggressive,
        KernelPerceptron,
        Projectron,
        ProjectronPlusPlus,
        RandomizedBudgetPerceptron,
        Stoptron,
        TighterBudgetPerceptron,
    )
    from sklearn_budget._datasets import make_synthetic

    rng = np.random.RandomState(random_state)
    X, y = make_synthetic(n_samples, rng)
    X_test, y_test = make_synthetic(n_test, rng)
    B = budget
    # The competitor norm the Projectron paper derives from the Forgetron's budget.
    U = 0.25 * np.sqrt((B + 1) / np.log(B + 1))
    estimators = {
        "KernelPerceptron": KernelPerceptron(),
        "KernelPassiveAggressive (PA-I)": KernelPassiveAggressive(C=1.0),
        f"Stoptron (B={B})": Stoptron(budget=B),
        f"Projectron (U={U:.2f})": Projectron(eta="adaptive", U=U),
        f"ProjectronPlusPlus (U={U:.2f})": ProjectronPlusPlus(eta="adaptive", U=U),
        f"Forgetron (B={B})": Forgetron(budget=B),
        f"RandomizedBudgetPerceptron (B={B})": RandomizedBudgetPerceptron(
            budget=B, random_state=random_state
        ),
        f"BudgetPerceptron (B={B})": BudgetPerceptron(budget=B),
        f"TighterBudgetPerceptron (B={B})": TighterBudgetPerceptron(budget=B),
    }
    for est in estimators.values():
        est.set_params(gamma=1.0)
    print(
        f"Synthetic data: {n_samples} training rounds, {n_test} test rows, rbf kernel gamma=1",
        file=out,
    )
    header = (
        f"{'estimator':40s} {'online err %':>12s} {'|S|':>6s} {'test acc %':>10s} {'seconds':>8s}"
    )
    print(header, file=out)
    print("-" * len(header), file=out)
    for name, est in estimators.items():
        tic = time.perf_counter()
        est.partial_fit(X, y, classes=[-1, 1])
        elapsed = time.perf_counter() - tic
        print(
            f"{name:40s} {100 * est.n_mistakes_ / n_samples:12.2f} {len(est.support_):6d} "
            f"{100 * est.score(X_test, y_test):10.2f} {elapsed:8.2f}",
            file=out,
        )


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="sklearn-budget", description="Bounded-memory kernel online classifiers."
    )
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("demo", help="train the estimators on the synthetic set (default)")
    p.add_argument("--n-samples", type=int, default=10000)
    p.add_argument("--budget", type=int, default=500)
    p.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        demo(
            n_samples=getattr(args, "n_samples", 10000),
            budget=getattr(args, "budget", 500),
            random_state=getattr(args, "random_state", 0),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
