"""Benchmarks of the Projectron and the Projectron++.

Speed: one online pass (``partial_fit``) over the first rows of a9a and
    over the synthetic set of the paper, against the per-sample reference
    implementation of the tests (inverse Gram matrix kept by Eq. 11, one
    kernel row per round), checking that both make the same mistakes.

The paper's Tables 1 and 3 are ``sklearn-budget reproduce projectron-adult``
and ``sklearn-budget reproduce projectron-synthetic``.

Run from the repository root::

    python benchmarks/bench_projectron.py            # full run
    python benchmarks/bench_projectron.py --quick    # a fast check
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from _data import a9a, synthetic  # noqa: E402
from test_projectron import reference_projectron  # noqa: E402

from sklearn_budget import Projectron, ProjectronPlusPlus  # noqa: E402
from sklearn_budget.reproduce._common import forgetron_U  # noqa: E402


def speed(name, X, y, gamma, U):
    classes = np.unique(y)
    X_ref = X.toarray() if hasattr(X, "toarray") else X
    for Estimator, plus in [(Projectron, False), (ProjectronPlusPlus, True)]:
        est = Estimator(eta="adaptive", U=U, gamma=gamma)
        tic = time.perf_counter()
        est.partial_fit(X, y, classes=classes)
        t_est = time.perf_counter() - tic
        tic = time.perf_counter()
        support, _, _, mistakes = reference_projectron(
            X_ref,
            y,
            classes,
            "adaptive",
            U=U,
            plus=plus,
            gamma=gamma,
            solver="eq11",
            precompute=False,
        )
        t_ref = time.perf_counter() - tic
        same = mistakes == est.n_mistakes_ and np.array_equal(support, est.support_)
        print(
            f"{name:<22} {Estimator.__name__:<20} |S|={len(est.support_):5d} "
            f"mistakes={est.n_mistakes_:6d} estimator {t_est:7.2f} s  reference {t_ref:7.2f} s  "
            f"speed-up x{t_ref / t_est:6.1f}  identical={same}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-a9a", type=int, default=10000, help="rows of a9a in the speed test")
    parser.add_argument(
        "--n-synthetic", type=int, default=10000, help="rows of the synthetic set in the speed test"
    )
    parser.add_argument("--quick", action="store_true", help="2000 rows per speed test")
    args = parser.parse_args()
    if args.quick:
        args.n_a9a, args.n_synthetic = 2000, 2000

    print("Speed of one online pass (eta='adaptive'), estimator vs per-sample reference")
    X, y = synthetic(args.n_synthetic, random_state=0)
    speed(f"synthetic n={args.n_synthetic}", X, y, gamma=1.0, U=forgetron_U(1000))
    # The paper's a9a setting: sigma^2 = 25, B = 1500.
    X, y = a9a(args.n_a9a)
    speed(f"a9a n={args.n_a9a} (CSR)", X, y, gamma=1.0 / 50.0, U=forgetron_U(1500))


if __name__ == "__main__":
    main()
