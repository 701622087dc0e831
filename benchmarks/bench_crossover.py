"""Where computing kernel rows in the compiled loop beats BLAS blocks.

The engine gets its kernel values from one of two paths (see
``sklearn_budget._rounds``): *direct*, the compiled loop computes each row from
the member rows; *blocked*, ``pairwise_kernels`` computes a block of rows
against the members with BLAS. This script times one round of both, for a
range of dimensions and support sizes, and the path the cost model picks.

A Stoptron whose budget is full never updates again, so each of its rounds
costs exactly one kernel row against ``|S|`` members plus the scores: the
quantity the cost model predicts. Gaussian data, rbf kernel, one BLAS thread.

    python benchmarks/bench_crossover.py            # d = 2 .. 512, |S| = 100 and 1000
    python benchmarks/bench_crossover.py --quick
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import sklearn_budget._base as engine  # noqa: E402
import sklearn_budget._rounds as driver  # noqa: E402
from sklearn_budget import Stoptron  # noqa: E402


def time_path(path, X, y, n_members, repeats):
    """Microseconds per round of a full Stoptron on ``path`` (best of ``repeats``)."""
    engine._FORCE_PATH = path
    try:
        est = Stoptron(budget=n_members, gamma=1.0 / X.shape[1])
        # Fill the budget: labels drawn at random make every early round a mistake.
        est.partial_fit(X[: 4 * n_members], y[: 4 * n_members], classes=[-1, 1])
        assert len(est.support_) == n_members
        rest = X[4 * n_members :], y[4 * n_members :]
        best = np.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            est.partial_fit(*rest)
            best = min(best, time.perf_counter() - t0)
        return 1e6 * best / rest[0].shape[0]
    finally:
        engine._FORCE_PATH = None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and rounds")
    args = parser.parse_args(argv)
    dims = [2, 8, 32, 128] if args.quick else [2, 4, 8, 16, 32, 64, 128, 256, 512]
    sizes = [100] if args.quick else [100, 1000]
    rounds = 1024 if args.quick else 4096
    rng = np.random.RandomState(0)
    print("| |S| | d | direct us/round | blocked us/round | faster | cost model picks |")
    print("|---|---|---|---|---|---|")
    with threadpool_limits(limits=1, user_api="blas"):
        for n in sizes:
            for d in dims:
                m = 4 * n + rounds
                X = rng.randn(m, d)
                y = np.where(rng.rand(m) < 0.5, -1, 1)
                direct = time_path("direct", X, y, n, repeats=3)
                blocked = time_path("blocked", X, y, n, repeats=3)
                faster = "direct" if direct < blocked else "blocked"
                pick = "direct" if driver._direct_pays(n, driver._BLOCK_SIZE, d) else "blocked"
                print(
                    f"| {n} | {d} | {direct:.2f} | {blocked:.2f} | {faster} | {pick} |", flush=True
                )


if __name__ == "__main__":
    main()
