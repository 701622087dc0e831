"""Measurements behind fit's ConvergenceWarning and the average=False defaults.

(a) Every online estimator at its defaults (only ``random_state=0``) on
    every shipped data set (the draws of seed 0 of
    ``bench_defaults.py --part e``): the online mistake rate of each epoch
    of ``fit``, whether the last epoch still made updates, the epoch at
    which the ``tol`` criterion would stop ``fit`` with ``n_iter_no_change``
    1, 2 or 3 (``-``: not before ``max_iter``), the ConvergenceWarnings
    given, and the test accuracy beside the majority rate of the test set.
(b) ``average=False`` (their default) against ``average=True`` for the
    estimators whose default is False, on Banana, Waveform, DNA, Satimage,
    Pendigits and USPS 0 against the rest, seeds 0 and 1: test accuracy.

Run from the repository root::

    python benchmarks/bench_convergence.py            # (a) and (b)
    python benchmarks/bench_convergence.py --part b   # (b) only

The data are read from ``SKLEARN_BUDGET_DATA`` (default ``../shared/data``
beside the repository); nothing is downloaded.
"""

import argparse
import warnings

import numpy as np
from bench_defaults import E_SETS, e_draw, e_sources
from sklearn.exceptions import ConvergenceWarning

import sklearn_budget

AVERAGE_SETS = ["banana", "waveform", "dna", "satimage", "pendigits", "usps0"]


def draw(name, src, seed):
    """The rows of ``name`` for ``seed`` (a9a's stay sparse, as loaded)."""
    return e_draw(name, src[name], seed, quick=False)


def stop_epoch(rates, tol, n_iter_no_change):
    """The epoch after which the ``tol`` criterion of ``fit`` stops (None: never)."""
    best, no_improvement = np.inf, 0
    for epoch, rate in enumerate(rates, 1):
        no_improvement = no_improvement + 1 if rate > best - tol else 0
        best = min(best, rate)
        if no_improvement >= n_iter_no_change:
            return epoch
    return None


def epoch_rates(est, X, y):
    """Fit ``est``; the mistake rate of each epoch and the ConvergenceWarnings."""
    rates, play = [], est._play
    mistakes = est._counter_index[1]

    def recorded(Xb, *args, **kwargs):
        before = int(est._state["counters"][mistakes])
        play(Xb, *args, **kwargs)
        rates.append((int(est._state["counters"][mistakes]) - before) / Xb.shape[0])

    est._play = recorded
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    del est._play
    return rates, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def part_a(src, sets):
    names = [
        n for n in sklearn_budget.__all__ if hasattr(getattr(sklearn_budget, n), "partial_fit")
    ]
    print("(a) defaults, seed 0: epoch mistake rates, tol stop with n_iter_no_change 1/2/3")
    for name in sets:
        for est_name in names:
            est = getattr(sklearn_budget, est_name)(random_state=0)
            X, y, Xt, yt = draw(name, src, 0)
            majority = np.bincount(np.unique(yt, return_inverse=True)[1]).max() / len(yt)
            rates, caught = epoch_rates(est, X, y)
            updates = int(est._state["counters"][est._counter_index[2]]) > 0
            stops = [stop_epoch(rates, est.tol, k) for k in (1, 2, 3)]
            kinds = sorted(
                {"max_iter" if "max_iter" in str(w.message) else "majority" for w in caught}
            )
            print(
                f"{name:<9} {est_name:<27} epochs {est.n_iter_}/{est.max_iter} "
                f"{'updating' if updates else 'no update'} "
                f"rates {' '.join(f'{r:.4f}' for r in rates):<34} "
                f"stops {' '.join('-' if s is None or s >= est.max_iter else str(s) for s in stops)} "
                f"warns {','.join(kinds) or '-':<9} acc {est.score(Xt, yt):.4f} (maj {majority:.4f})",
                flush=True,
            )


def part_b(src, sets):
    names = [
        n
        for n in sklearn_budget.__all__
        if getattr(sklearn_budget, n)().get_params().get("average", True) is False
    ]
    print("(b) test accuracy with average=False / average=True")
    for name in sets:
        for seed in (0, 1):
            X, y, Xt, yt = draw(name, src, seed)
            cells = []
            for est_name in names:
                accs = []
                for average in (False, True):
                    est = getattr(sklearn_budget, est_name)(random_state=seed, average=average)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        accs.append(est.fit(X, y).score(Xt, yt))
                cells.append(f"{est_name} {accs[0]:.4f}/{accs[1]:.4f}")
            print(f"{name:<9} seed {seed}  " + "  ".join(cells), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["a", "b"], help="run one part only")
    parser.add_argument("--sets", help="comma-separated data sets (default: those of the part)")
    args = parser.parse_args()
    src = e_sources()
    chosen = args.sets.split(",") if args.sets else None
    if args.part in (None, "a"):
        part_a(src, chosen or E_SETS)
    if args.part in (None, "b"):
        part_b(src, chosen or AVERAGE_SETS)


if __name__ == "__main__":
    main()
