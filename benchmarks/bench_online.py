"""One online pass of each estimator against a naive per-sample loop.

For each data set and estimator this prints: the time of ``partial_fit``
over the whole stream, the time of a naive per-sample loop that plays the
same algorithm (one ``pairwise_kernels`` call per row against the support
set), their ratio (the speed-up), the share of the engine's time spent in
kernel evaluations, and whether both made the same mistakes and kept the
same support set.

    python benchmarks/bench_online.py            # a9a (32561 rows) and synthetic (10000)
    python benchmarks/bench_online.py --quick    # 3000 rows of each
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import a9a, synthetic  # noqa: E402

from sklearn_budget import KernelPassiveAggressive, KernelPerceptron, Stoptron  # noqa: E402
from sklearn_budget._kernels import Kernel  # noqa: E402


def perceptron_step(margin, kxx, n):
    return 1.0 if margin <= 0 else 0.0


def stoptron_step(budget):
    return lambda margin, kxx, n: 1.0 if margin <= 0 and n < budget else 0.0


def pa1_step(margin, kxx, n):
    loss = 1.0 - margin
    return min(1.0, loss / kxx) if loss > 0 and kxx > 0 else 0.0


def naive_pass(X, y, step, gamma):
    """The per-sample algorithm, written plainly (binary labels +-1)."""
    n, d = X.shape
    sv = np.empty((n, d))
    alpha = np.empty(n)
    m = mistakes = 0
    support = []
    for t in range(n):
        x = X[t : t + 1]
        f = pairwise_kernels(x, sv[:m], metric="rbf", gamma=gamma)[0] @ alpha[:m] if m else 0.0
        margin = y[t] * f
        mistakes += margin <= 0
        tau = step(margin, 1.0, m)  # rbf: k(x, x) = 1
        if tau:
            sv[m], alpha[m] = x, tau * y[t]
            support.append(t)
            m += 1
    return mistakes, np.array(support)


class KernelTimer:
    """Accumulates the time spent in Kernel.__call__ while active."""

    def __enter__(self):
        self.seconds = 0.0
        self._orig = Kernel.__call__
        timer = self

        def timed(kernel, X, Y):
            tic = time.perf_counter()
            try:
                return timer._orig(kernel, X, Y)
            finally:
                timer.seconds += time.perf_counter() - tic

        Kernel.__call__ = timed
        return self

    def __exit__(self, *exc):
        Kernel.__call__ = self._orig


def bench(name, X, y, gamma):
    cases = [
        ("KernelPerceptron", KernelPerceptron(gamma=gamma), perceptron_step),
        ("Stoptron(B=500)", Stoptron(budget=500, gamma=gamma), stoptron_step(500)),
        ("KernelPassiveAggressive", KernelPassiveAggressive(C=1.0, gamma=gamma), pa1_step),
    ]
    print(f"\n{name}: {X.shape[0]} rounds, {X.shape[1]} features, rbf gamma={gamma}")
    head = (
        f"{'estimator':24s} {'|S|':>6s} {'ours s':>8s} {'naive s':>8s} "
        f"{'speed-up':>9s} {'kernel %':>9s} {'same':>5s}"
    )
    print(head)
    print("-" * len(head))
    for label, est, step in cases:
        with KernelTimer() as timer:
            tic = time.perf_counter()
            est.partial_fit(X, y, classes=[-1, 1])
            ours = time.perf_counter() - tic
        tic = time.perf_counter()
        mistakes, support = naive_pass(X, y, step, gamma)
        naive = time.perf_counter() - tic
        same = mistakes == est.n_mistakes_ and np.array_equal(support, est.support_)
        print(
            f"{label:24s} {len(est.support_):6d} {ours:8.2f} {naive:8.2f} {naive / ours:8.1f}x "
            f"{100 * timer.seconds / ours:8.1f}% {'yes' if same else 'NO':>5s}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3000 rows of each data set")
    parser.add_argument("--a9a-rows", type=int, default=None, help="rows of a9a (default: all)")
    args = parser.parse_args(argv)
    n_a9a = 3000 if args.quick else args.a9a_rows
    X, y = a9a(n_a9a)
    # The Projectron paper's Adult setting: sigma^2 = 25, i.e. gamma = 1 / (2 * 25).
    bench("a9a", X.toarray(), y, gamma=0.02)
    X, y = synthetic(3000 if args.quick else 10000, random_state=0)
    bench("synthetic", X, y, gamma=1.0)


if __name__ == "__main__":
    main()
