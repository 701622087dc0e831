"""Benchmarks of the Projectron and the Projectron++.

(a) Speed: one online pass (``partial_fit``) over the first rows of a9a and
    over the synthetic set of the paper, against the per-sample reference
    implementation of the tests (inverse Gram matrix kept by Eq. 11, one
    kernel row per round), checking that both make the same mistakes.
(b) Table 3 of Orabona, Keshet and Caputo (2008): synthetic set of 10000
    samples, Gaussian kernel with sigma^2 = 0.5 (gamma = 1), eta set each
    round by Eq. 13 with U = sqrt((B + 1) / log(B + 1)) / 4 for B = 1000 and
    B = 500, over 5 random permutations.

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
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from _data import a9a, synthetic  # noqa: E402
from test_projectron import reference_projectron  # noqa: E402

from sklearn_budget import KernelPerceptron, Projectron, ProjectronPlusPlus  # noqa: E402

# Table 3 of the paper: (mistakes % mean, std, support size mean, std).
PAPER_TABLE_3 = {
    ("Perceptron", None): (18.80, 0.25, 1880.0, 25.12),
    ("Projectron", 1000): (18.71, 0.14, 108.6, 2.97),
    ("Projectron++", 1000): (14.09, 0.10, 104.2, 2.39),
    ("Projectron", 500): (18.70, 0.21, 98.6, 3.05),
    ("Projectron++", 500): (14.23, 0.10, 98.6, 2.30),
}


def forgetron_U(B):
    """The competitor norm for which the Forgetron with budget B has its bound."""
    return 0.25 * np.sqrt((B + 1) / np.log(B + 1))


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


def table_3(n_permutations):
    X, y = synthetic(10000, random_state=0)
    rng = np.random.RandomState(0)
    orders = [rng.permutation(len(y)) for _ in range(n_permutations)]
    print(f"\nTable 3: synthetic set, 10000 samples, gamma = 1, {n_permutations} permutations")
    print(
        f"{'':<14}{'B':>6}  {'% mistakes (ours)':>19}  {'(paper)':>15}  "
        f"{'|S| (ours)':>16}  {'(paper)':>16}"
    )
    rows = [("Perceptron", None)] + [
        (name, B) for B in (1000, 500) for name in ("Projectron", "Projectron++")
    ]
    for name, B in rows:
        rates, sizes = [], []
        for order in orders:
            if B is None:
                est = KernelPerceptron(gamma=1.0)
            else:
                Estimator = Projectron if name == "Projectron" else ProjectronPlusPlus
                est = Estimator(eta="adaptive", U=forgetron_U(B), gamma=1.0)
            est.partial_fit(X[order], y[order], classes=[-1, 1])
            rates.append(100.0 * est.n_mistakes_ / len(y))
            sizes.append(len(est.support_))
        p = PAPER_TABLE_3[(name, B)]
        print(
            f"{name:<14}{'-' if B is None else B:>6}  "
            f"{np.mean(rates):8.2f}% +- {np.std(rates):5.2f}  "
            f"{p[0]:7.2f}% +- {p[1]:4.2f}  {np.mean(sizes):7.1f} +- {np.std(sizes):5.2f}  "
            f"{p[2]:7.1f} +- {p[3]:5.2f}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-a9a", type=int, default=10000, help="rows of a9a in the speed test")
    parser.add_argument(
        "--n-synthetic", type=int, default=10000, help="rows of the synthetic set in the speed test"
    )
    parser.add_argument("--permutations", type=int, default=5, help="permutations for Table 3")
    parser.add_argument(
        "--quick", action="store_true", help="2000 rows per speed test, 2 permutations"
    )
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.n_a9a, args.n_synthetic, args.permutations = 2000, 2000, 2

    if not args.skip_speed:
        print("Speed of one online pass (eta='adaptive'), estimator vs per-sample reference")
        X, y = synthetic(args.n_synthetic, random_state=0)
        speed(f"synthetic n={args.n_synthetic}", X, y, gamma=1.0, U=forgetron_U(1000))
        # The paper's a9a setting: sigma^2 = 25, B = 1500.
        X, y = a9a(args.n_a9a)
        speed(f"a9a n={args.n_a9a} (CSR)", X, y, gamma=1.0 / 50.0, U=forgetron_U(1500))
    if not args.skip_table:
        table_3(args.permutations)


if __name__ == "__main__":
    main()
