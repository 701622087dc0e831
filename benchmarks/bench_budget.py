"""Benchmarks of the budget-removal algorithms.

(a) Speed-up of ``partial_fit`` over one pass against the per-sample
    references of ``tests/_budget_references.py`` (identical mistakes are
    checked), on the synthetic set and on Adult (a9a).
(b) A noisy 2-D problem in the spirit of Weston, Bordes and Bottou (2005),
    Fig. 7: overlapping classes, linear kernel, one online epoch; test error
    of the Perceptron, the Budget Perceptron and the Tighter Budget
    Perceptron at small budgets.

Run ``python benchmarks/bench_budget.py`` (``--quick`` for a fast smoke run;
``--part a`` etc. for one part). The Projectron paper's Table 3 rows of the
Forgetron, RBP and Stoptron are ``sklearn-budget reproduce projectron-synthetic``,
and Weston et al.'s Figs. 9-12 are the ``weston-*`` experiments of that command.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from _budget_references import RefBudget, RefForgetron, RefRBP  # noqa: E402
from _data import a9a, synthetic  # noqa: E402

from sklearn_budget import (  # noqa: E402
    BudgetPerceptron,
    Forgetron,
    KernelPerceptron,
    RandomizedBudgetPerceptron,
    TighterBudgetPerceptron,
)


def speedup(n_rows, budget, quick):
    datasets = [("synthetic", *synthetic(n_rows, random_state=0), 1.0)]
    try:
        X, y = a9a(n_rows)
        datasets.append(("a9a", X, y, 0.02))  # sigma^2 = 25, as in the paper
    except OSError as exc:  # pragma: no cover
        print(f"a9a not available ({exc}); skipped")
    cases = [
        (
            "Forgetron",
            lambda g: Forgetron(budget=budget, gamma=g),
            lambda cl, g: RefForgetron(cl, budget, kernel_params={"gamma": g}),
        ),
        (
            "RandomizedBudgetPerceptron",
            lambda g: RandomizedBudgetPerceptron(budget=budget, gamma=g, random_state=0),
            lambda cl, g: RefRBP(cl, budget, kernel_params={"gamma": g}, random_state=0),
        ),
        (
            "BudgetPerceptron",
            lambda g: BudgetPerceptron(budget=budget, average=False, gamma=g),
            lambda cl, g: RefBudget(cl, budget, kernel_params={"gamma": g}),
        ),
        (
            "TighterBudgetPerceptron(support)",
            lambda g: TighterBudgetPerceptron(budget=budget, average=False, gamma=g),
            lambda cl, g: RefBudget(cl, budget, removal="support", kernel_params={"gamma": g}),
        ),
        (
            "TighterBudgetPerceptron(random)",
            lambda g: TighterBudgetPerceptron(
                budget=budget,
                error_set="random",
                error_set_size=2 * budget,
                average=False,
                gamma=g,
                random_state=0,
            ),
            lambda cl, g: RefBudget(
                cl,
                budget,
                removal="random",
                q=2 * budget,
                kernel_params={"gamma": g},
                random_state=0,
            ),
        ),
    ]
    print(
        f"\n(a) partial_fit, one pass of {n_rows} rows, budget={budget}: time of the per-sample reference / time of the estimator"
    )
    print(
        f"{'data':10s} {'estimator':34s} {'mistakes':>9s} {'ref s':>8s} {'est s':>8s} {'speed-up':>9s}"
    )
    for name, X, y, gamma in datasets:
        classes = np.unique(y)
        for label, make, make_ref in cases:
            t0 = time.perf_counter()
            est = make(gamma).partial_fit(X, y, classes=classes)
            t_est = time.perf_counter() - t0
            t0 = time.perf_counter()
            ref = make_ref(classes, gamma).partial_fit(X, y)
            t_ref = time.perf_counter() - t0
            same = (
                "" if ref.mistakes == est.n_mistakes_ else f"  MISMATCH (reference {ref.mistakes})"
            )
            print(
                f"{name:10s} {label:34s} {est.n_mistakes_:9d} {t_ref:8.2f} {t_est:8.3f} {t_ref / t_est:8.1f}x{same}"
            )


def noisy_2d(n, rng):
    """Two classes overlapping along x1 (Gaussian noise in that dimension only);
    the Bayes rule is sign(x1), through the origin, so a linear kernel without
    bias can represent it."""
    y = np.where(rng.rand(n) < 0.5, 1, -1)
    X = np.column_stack([y + 0.8 * rng.randn(n), rng.uniform(-3, 3, n)])
    return X, y


def tighter_vs_budget(budgets, n_runs, n_train):
    print(
        f"\n(b) Noisy 2-D toy problem (Weston et al. 2005, Fig. 7 style): linear kernel, one epoch of "
        f"{n_train} points, test error % on 20000 points, mean +- std over {n_runs} draws"
    )
    bayes = []
    results = {}
    for run in range(n_runs):
        rng = np.random.RandomState(run)
        X, y = noisy_2d(n_train, rng)
        Xt, yt = noisy_2d(20000, rng)
        bayes.append(100.0 * np.mean(np.sign(Xt[:, 0]) != yt))
        kp = KernelPerceptron(kernel="linear", max_iter=1, shuffle=False).fit(X, y)
        results.setdefault(("Perceptron", None), []).append(
            (100.0 * (1 - kp.score(Xt, yt)), len(kp.support_))
        )
        for B in budgets:
            for name, est in [
                (
                    "BudgetPerceptron",
                    BudgetPerceptron(
                        budget=B, kernel="linear", max_iter=1, shuffle=False, average=False
                    ),
                ),
                (
                    "Tighter (E=all)",
                    TighterBudgetPerceptron(
                        budget=B,
                        error_set="all",
                        kernel="linear",
                        max_iter=1,
                        shuffle=False,
                        average=False,
                    ),
                ),
                (
                    "Tighter (E=support)",
                    TighterBudgetPerceptron(
                        budget=B, kernel="linear", max_iter=1, shuffle=False, average=False
                    ),
                ),
            ]:
                est.fit(X, y)
                results.setdefault((name, B), []).append(
                    (100.0 * (1 - est.score(Xt, yt)), len(est.support_))
                )
    print(f"Bayes error: {np.mean(bayes):.2f} %")
    print(f"{'algorithm':22s} {'budget':>7s} {'test error %':>16s} {'support':>8s}")
    for (name, B), vals in results.items():
        err = np.array([v[0] for v in vals])
        sv = np.mean([v[1] for v in vals])
        print(
            f"{name:22s} {str(B if B else '-'):>7s} {err.mean():8.2f} +- {err.std():5.2f} {sv:8.1f}"
        )


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument(
        "--part", choices=["a", "b"], action="append", help="parts to run (default: all)"
    )
    parser.add_argument(
        "--rows", type=int, default=None, help="rows of the speed-up runs (default 3000, quick 600)"
    )
    parser.add_argument("--budget", type=int, default=100, help="budget of the speed-up runs")
    args = parser.parse_args()
    parts = args.part or ["a", "b"]
    if "a" in parts:
        speedup(args.rows or (600 if args.quick else 3000), args.budget, args.quick)
    if "b" in parts:
        if args.quick:
            tighter_vs_budget([10, 50], n_runs=3, n_train=1000)
        else:
            tighter_vs_budget([5, 10, 20, 50, 100], n_runs=10, n_train=1000)


if __name__ == "__main__":
    main()
