"""What the averaged model costs against the last hypothesis, as the budget grows.

For each budget, on the first rows of a9a (one pass, Forgetron, gamma=0.02):

- ``size``: the support set of the last hypothesis at the end (below the
  budget when the pass makes fewer mistakes);
- ``last``: the fit of the last hypothesis (``average=False``);
- ``avg``: the fit of the average within the budget (``average=True``), and
  its ratio to ``last``;
- ``kernel``: the kernel values the rounds need, alone (each row against
  ``budget`` members, in blocks of 256 rows): the floor of any kernel
  learner of that budget;
- ``nystroem``: a Nystroem map of ``budget`` components and a linear SGD
  classifier, one pass, the batch alternative of the same size;
- ``1st``/``2nd predict``: ``decision_function`` on 1,000 rows right after the
  averaged fit, then again (the first pays for any publication left to it).

``--ratios`` prints instead the matrix of the averaged fit's CPU time over
the last hypothesis's, one pass, at budgets 100, 500, 1000 and 4000: the
Forgetron on the first 12,000 rows of a9a (CSR, ``gamma=0.02``), on the
USPS-10 training set (``gamma='scale'``) and on 200,000 rounds of the 2-D
stream of ``make_two_gaussians`` in one ``partial_fit`` (default
``gamma``), and the Randomized Budget Perceptron and the Budget Perceptron
on that stream; each cell the ratio of the medians of ``--repeat`` fits of
each, alternated in one process (at least 3), after one fit of each at the
smallest budget.

``--accuracy`` prints instead the test accuracy of Forgetron (its defaults,
``gamma='scale'``, ``random_state=0``) with the average and with the last
hypothesis on a9a (10,000 training rows, 5,000 test rows), USPS-10 (3,000
training rows, the test set), Banana and Waveform (4,000 training rows of a
seeded permutation, the rest for testing), at budgets 100 and 500.
``--matching-pursuit-max B`` compresses the average by matching pursuit up
to a budget of B only (the package's B is 128), by the projection above:
``--accuracy --matching-pursuit-max 64`` gives the accuracy of the
projection at budget 100.

Run with one BLAS thread, for example::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_budget_scaling.py --quick
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_budget_scaling.py --dense
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_budget_scaling.py --accuracy
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_budget_scaling.py --ratios

``--quick``: budgets 100, 500 and 1000 only; ``--dense``: the a9a rows as a
dense array (the direct kernel path where it pays) instead of CSR;
``--plot FILE``: both layouts, one after the other, and a log-log figure of
the microseconds per round (fit time over rows) against the budget, of the
averaged fit, the last hypothesis, the kernel values alone and the Nystroem
pipeline, saved to FILE (needs matplotlib); ``--repeat N``: the fastest of N
timings of the fits and of the kernel values (the Nystroem fit is timed
once). The figure of the documentation::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_budget_scaling.py \\
        --repeat 3 --plot doc/images/budget_scaling.png
"""

import argparse
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

from sklearn_budget import BudgetPerceptron, Forgetron, RandomizedBudgetPerceptron, _averaging
from sklearn_budget.datasets import (
    fetch_a9a,
    fetch_banana,
    fetch_usps,
    fetch_waveform,
    make_two_gaussians,
)

GAMMA = 0.02


def _timed(fn, repeat=1):
    """Seconds of the fastest of `repeat` calls (the least disturbed by other jobs)."""
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _kernel_alone(X, budget):
    """Seconds for the kernel values of every row against ``budget`` members."""
    members = X[:budget]
    start = time.perf_counter()
    for s in range(0, X.shape[0], 256):
        rbf_kernel(X[s : s + 256], members, gamma=GAMMA)
    return time.perf_counter() - start


def scaling(budgets, n_rows, dense, repeat=1):
    """Print the table for one layout and return its microseconds per round."""
    # At this width the Forgetron's last hypothesis does no better than the
    # majority class on these rows, and says so by a ConvergenceWarning at
    # every fit: the table times it all the same, without the warnings.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _scaling(budgets, n_rows, dense, repeat)


def _scaling(budgets, n_rows, dense, repeat):
    X, y = fetch_a9a(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    X, y = X[:n_rows], y[:n_rows]
    Xt = X[-1000:]
    if dense:
        X, Xt = X.toarray(), Xt.toarray()
    print(f"a9a, {n_rows} rows, {'dense' if dense else 'CSR'}, Forgetron(gamma={GAMMA}), one pass")
    # A first fit pays for the process's warm-up outside the table.
    Forgetron(budget=budgets[0], gamma=GAMMA, max_iter=1).fit(X[:1000], y[:1000])
    print(
        f"{'budget':>7} {'size':>6} {'last s':>8} {'avg s':>8} {'avg/last':>9} {'kernel s':>9} "
        f"{'nystroem s':>11} {'1st predict ms':>15} {'2nd predict ms':>15}"
    )
    curves = {"avg": [], "last": [], "kernel": [], "nystroem": []}
    for budget in budgets:
        kw = dict(gamma=GAMMA, max_iter=1, random_state=0)
        last = Forgetron(budget=budget, average=False, **kw)
        t_last, _ = _timed(lambda: last.fit(X, y), repeat)
        t_avg, est = _timed(lambda: Forgetron(budget=budget, average=True, **kw).fit(X, y), repeat)
        first, _ = _timed(lambda: est.decision_function(Xt))
        second, _ = _timed(lambda: est.decision_function(Xt))
        t_kernel, _ = _timed(lambda: _kernel_alone(X, budget), repeat)
        nystroem = make_pipeline(
            Nystroem(gamma=GAMMA, n_components=budget, random_state=0),
            SGDClassifier(max_iter=1, tol=None, random_state=0),
        )
        t_nys, _ = _timed(lambda: nystroem.fit(X, y))
        print(
            f"{budget:>7} {last.support_vectors_.shape[0]:>6} {t_last:>8.2f} {t_avg:>8.2f} "
            f"{t_avg / t_last:>9.2f} {t_kernel:>9.2f} "
            f"{t_nys:>11.2f} {1e3 * first:>15.1f} {1e3 * second:>15.1f}",
            flush=True,
        )
        for key, seconds in zip(curves, (t_avg, t_last, t_kernel, t_nys)):
            curves[key].append(1e6 * seconds / n_rows)
    return curves


def plot(budgets, n_rows, path, repeat):
    """Draw microseconds per round against the budget, CSR and dense, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = {
        "avg": "averaged (default)",
        "last": "last hypothesis",
        "kernel": "kernel values alone",
        "nystroem": "Nystroem + SGD, one pass",
    }
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, dense in zip(axes, (False, True)):
        curves = scaling(budgets, n_rows, dense, repeat)
        for key, marker in zip(labels, "osv^"):
            ax.loglog(budgets, curves[key], marker=marker, label=labels[key])
        ax.set_title(f"a9a, {n_rows:,} rows, {'dense' if dense else 'sparse (CSR)'}")
        ax.set_xlabel("budget")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("microseconds per round")
    axes[0].legend()
    fig.suptitle(f"Forgetron(gamma={GAMMA}), one pass")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"saved {path}")


def _sets():
    home = dict(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    Xtr, ytr = fetch_a9a(subset="train", **home)
    Xte, yte = fetch_a9a(subset="test", **home)
    Xtr, ytr, Xte, yte = Xtr[:10000], ytr[:10000], Xte[:5000], yte[:5000]
    if Xte.shape[1] < Xtr.shape[1]:
        Xte = sp.csr_matrix((Xte.data, Xte.indices, Xte.indptr), shape=(5000, Xtr.shape[1]))
    yield "a9a", Xtr, ytr, Xte, yte
    Xtr, ytr = fetch_usps(subset="train", positive_digit=None, **home)
    Xte, yte = fetch_usps(subset="test", positive_digit=None, **home)
    yield "USPS-10", Xtr[:3000], ytr[:3000], Xte, yte
    for name, fetch in (("Banana", fetch_banana), ("Waveform", fetch_waveform)):
        X, y = fetch(**home)
        perm = np.random.RandomState(0).permutation(X.shape[0])
        yield name, X[perm[:4000]], y[perm[:4000]], X[perm[4000:]], y[perm[4000:]]


def accuracy(budgets):
    print(f"{'set':>9} {'budget':>7} {'average':>8} {'last':>7} {'fit s (avg)':>12}")
    for name, Xtr, ytr, Xte, yte in _sets():
        for budget in budgets:
            kw = dict(budget=budget, gamma="scale", random_state=0)
            t_avg, avg = _timed(lambda: Forgetron(average=True, **kw).fit(Xtr, ytr))
            last = Forgetron(average=False, **kw).fit(Xtr, ytr)
            print(
                f"{name:>9} {budget:>7} {avg.score(Xte, yte):>8.4f} "
                f"{last.score(Xte, yte):>7.4f} {t_avg:>12.2f}"
            )


def _ratio_cells():
    """The rows of the ratio matrix: ``(label, estimator class, fit(est))``."""
    home = dict(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    X, y = fetch_a9a(**home)
    X, y = X[:12_000], y[:12_000]
    yield "a9a, Forgetron", Forgetron, dict(gamma=GAMMA, max_iter=1), lambda e: e.fit(X, y)
    Xu, yu = fetch_usps(subset="train", positive_digit=None, **home)
    yield "USPS-10, Forgetron", Forgetron, dict(max_iter=1), lambda e: e.fit(Xu, yu)
    Xs, ys = make_two_gaussians(200_000, random_state=0)
    classes = np.unique(ys)
    for name, cls in (
        ("Forgetron", Forgetron),
        ("Randomized Budget P.", RandomizedBudgetPerceptron),
        ("Budget Perceptron", BudgetPerceptron),
    ):
        yield f"2-D, {name}", cls, {}, lambda e: e.partial_fit(Xs, ys, classes=classes)


def _cpu_seconds(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def ratios(budgets, repeat):
    """Print the averaged fit's CPU time over the last hypothesis's, per set and budget."""
    repeat = max(repeat, 3)
    print(f"averaged / last, one pass, CPU time, medians of {repeat} alternated fits")
    print(f"{'':<28}" + "".join(f"{b:>8}" for b in budgets))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for label, cls, kw, fit in _ratio_cells():
            # A first fit of each at the smallest budget pays for the first
            # use of the row's code paths outside the matrix.
            for average in (True, False):
                fit(cls(budget=budgets[0], average=average, random_state=0, **kw))
            cells = []
            for budget in budgets:
                times = {True: [], False: []}
                for _ in range(repeat):
                    for average in (True, False):
                        est = cls(budget=budget, average=average, random_state=0, **kw)
                        times[average].append(_cpu_seconds(lambda: fit(est)))
                cells.append(np.median(times[True]) / np.median(times[False]))
            print(f"{label:<28}" + "".join(f"{c:>8.2f}" for c in cells), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="budgets 100, 500 and 1000 only")
    parser.add_argument("--dense", action="store_true", help="dense rows instead of CSR")
    parser.add_argument("--rows", type=int, default=12_000, help="rows of a9a (default 12000)")
    parser.add_argument("--accuracy", action="store_true", help="the accuracy table instead")
    parser.add_argument("--ratios", action="store_true", help="the averaged/last matrix instead")
    parser.add_argument("--plot", metavar="FILE", help="both layouts, drawn to FILE")
    parser.add_argument(
        "--repeat", type=int, default=1, help="fits timed, fastest kept (--ratios: medians, >= 3)"
    )
    parser.add_argument(
        "--matching-pursuit-max",
        type=int,
        metavar="B",
        help="the largest budget compressed by matching pursuit (default 128)",
    )
    args = parser.parse_args()
    if args.matching_pursuit_max is not None:
        _averaging.OMP_MAX_BUDGET = args.matching_pursuit_max
    if args.accuracy:
        accuracy([100, 500])
        return
    if args.ratios:
        ratios([100, 500, 1000, 4000], args.repeat)
        return
    budgets = [100, 500, 1000] if args.quick else [100, 500, 1000, 2000, 4000]
    if args.plot:
        plot(budgets, args.rows, args.plot, args.repeat)
        return
    scaling(budgets, args.rows, args.dense, args.repeat)


if __name__ == "__main__":
    main()
