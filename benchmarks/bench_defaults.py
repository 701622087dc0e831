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
(e) The default instance of every estimator (only ``random_state`` set)
    on every shipped real data set, over 5 seeds; the seed sets
    ``random_state`` and the training draw / split where one is drawn:
    a9a (10000 training rows drawn from the 32561, the first 5000 test
    rows), USPS 10 classes and digit 0 against the rest (3000 training rows
    drawn, full test set), banana (seeded 2000 / 1000 split), waveform
    (seeded 4000 / 1000 split), DNA, Satimage and Pendigits (their own
    train / test files; Pendigits divided by 100) and MNIST (test set only:
    3000 / 2000 drawn, pixels / 255). Per estimator x data set: median and
    minimum test accuracy over the seeds, spread (max - min), support size
    and fit time (medians), beside the majority-class rate of the test
    set. Then a small grid of the budget learners' own parameters at
    ``budget=100`` (``--grid-seeds``, 5 seeds by default; the Projectrons
    at their default ``budget=500``): ``average`` x ``max_iter``
    {1, 5} for the Forgetron, the Randomized, Budget and Tighter Budget
    Perceptrons and the Stoptron; ``alpha`` {1e-4, 1e-3, 1e-2} x
    ``average`` for BudgetedSGDClassifier; ``eta`` {0.1, 0.3, 0.5, 0.6, 0.7,
    0.9} for the Projectrons; with the best configuration per data set and the
    defaults that miss the criteria of issue 20 (3 points above the
    majority rate on every seed, spread at most 2 points on a9a, within 2
    points of the best grid configuration). KernelMatchingPursuit runs on
    the large sets (a9a, MNIST, USPS) last. Each fit's line names the
    ConvergenceWarnings it gave (``majority``: no better than the most
    frequent class; ``max_iter``). Every estimator is fitted on the
    sparse (CSR) a9a rows as loaded. Rows are printed as they finish;
    ``--n-jobs`` parallel fits (joblib); ``--max-minutes`` stops early.
(f) The width sweep: every estimator at its defaults (only ``random_state``
    and ``gamma`` set; a second setting ``budget=100`` where the default
    budget differs) on every shipped set, at ``gamma`` = {1/20, 1/5, 1, 3,
    10} x the ``'scale'`` value of the training rows (1: ``gamma='scale'``
    itself), over 3 seeds (``--seeds``). Smaller draws than (e) keep it
    affordable: 2000 training rows (DNA: its 2000), at most 2000 test rows
    (banana, waveform: 1000), from the same draws and splits; the unbounded
    learners and KernelMatchingPursuit see the first 1000 of them. Per
    estimator x setting x set: the worst test accuracy over widths and
    seeds minus the majority rate, per width the worst seed, flagged at or
    below the majority rate or less than 3 points above. ``--f-params``
    measures a candidate default (``'k=v;k=v'``; ``alpha=C/n`` is C over
    the training rows), ``--replace K`` a K times longer stream drawn with
    replacement, ``--sets``, ``--widths``, ``--n-train`` narrow the run,
    ``--out`` appends the markdown table and writes a .jsonl log of the fits
    (with the ConvergenceWarnings each fit gave: ``warn``).
(g) Where the sweep (f) found a budget learner less than 3 points above the
    majority rate (``--from-log``: the sweep's .jsonl logs), the learner's
    grid of (e) at the width of its worst cell, on the same draws and seeds
    (``--seeds``, 3): is 3 points above the majority rate reachable there?
    Per cell: the default's worst seed, the best grid setting's worst seed.

Run from the repository root::

    python benchmarks/bench_defaults.py              # (a), (b) and (c)
    python benchmarks/bench_defaults.py --part d     # the full a9a fit
    python benchmarks/bench_defaults.py --part e     # defaults x every data set
    python benchmarks/bench_defaults.py --part f     # defaults x widths x every set
    python benchmarks/bench_defaults.py --part g --from-log f.md.jsonl  # grids where (f) is low
    python benchmarks/bench_defaults.py --quick      # a fast smoke run

The data are read from ``SKLEARN_BUDGET_DATA`` (default ``../shared/data``
beside the repository); nothing is downloaded.
"""

import argparse
import ast
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _data import DATA_HOME  # noqa: E402

import sklearn_budget  # noqa: E402
from sklearn_budget import (  # noqa: E402
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    Projectron,
    ProjectronPlusPlus,
    RandomizedBudgetPerceptron,
    Stoptron,
    TighterBudgetPerceptron,
)
from sklearn_budget._kernels import resolve_gamma  # noqa: E402
from sklearn_budget.datasets import (  # noqa: E402
    fetch_a9a,
    fetch_banana,
    fetch_dna,
    fetch_mnist,
    fetch_pendigits,
    fetch_satimage,
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


# (e) ---------------------------------------------------------------------

# Cheap sets first; KernelMatchingPursuit runs on the large ones last.
E_SETS = ["banana", "dna", "satimage", "waveform", "pendigits", "usps0", "usps10", "mnist", "a9a"]
E_SLOW = {("KernelMatchingPursuit", name) for name in ("usps0", "usps10", "mnist", "a9a")}


def _e_grid():
    """(estimator class, parameters) of the grid at budget=100."""
    grid = []
    for Est in (
        Forgetron,
        RandomizedBudgetPerceptron,
        Stoptron,
        BudgetPerceptron,
        TighterBudgetPerceptron,
    ):
        for average in (False, True):
            for max_iter in (1, 5):
                grid.append((Est, dict(budget=100, average=average, max_iter=max_iter)))
    for alpha in (1e-4, 1e-3, 1e-2):
        for average in (False, True):
            grid.append((BudgetedSGDClassifier, dict(alpha=alpha, average=average)))
    # The Projectrons at their default budget, 500.
    for Est in (Projectron, ProjectronPlusPlus):
        for eta in (0.1, 0.3, 0.5, 0.6, 0.7, 0.9):
            grid.append((Est, dict(budget=500, eta=eta)))
    return grid


def e_sources():
    """The full shipped files of part (e): name -> (X, y, Xt, yt); Xt None when split."""
    kw = dict(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    src = {}
    src["a9a"] = fetch_a9a(subset="train", **kw) + fetch_a9a(subset="test", **kw)
    for name, digit in (("usps10", None), ("usps0", 0)):
        src[name] = fetch_usps(subset="train", positive_digit=digit, **kw) + fetch_usps(
            subset="test", positive_digit=digit, **kw
        )
    src["banana"] = fetch_banana(**kw) + (None, None)
    src["waveform"] = fetch_waveform(**kw) + (None, None)
    X, y = fetch_mnist(**kw)
    src["mnist"] = (X / 255.0, y, None, None)
    for name, fetch in (
        ("dna", fetch_dna),
        ("satimage", fetch_satimage),
        ("pendigits", fetch_pendigits),
    ):
        src[name] = fetch(subset="train", **kw) + fetch(subset="test", **kw)
    X, y, Xt, yt = src["pendigits"]
    src["pendigits"] = (X / 100.0, y, Xt / 100.0, yt)
    return src


E_SIZES = {  # training rows drawn, test rows (None: all, or the split's)
    "a9a": (10000, 5000),
    "usps10": (3000, None),
    "usps0": (3000, None),
    "banana": (2000, 1000),
    "waveform": (4000, 1000),
    "mnist": (3000, 2000),
}


def e_draw(name, src, seed, quick, sizes=E_SIZES):
    """Train / test rows of data set `name` for `seed` (the draw or split of part (e))."""
    X, y, Xt, yt = src
    n_train, n_test = sizes.get(name, (None, None))
    if quick:
        n_train, n_test = 300, 300
    rng = np.random.RandomState(seed)
    if Xt is None:  # a seeded split of the one file
        X, Xt, y, yt = train_test_split(
            X, y, train_size=n_train, test_size=n_test, random_state=seed, stratify=y
        )
        return X, y, Xt, yt
    if n_train is not None and n_train < X.shape[0]:
        idx = rng.choice(X.shape[0], n_train, replace=False)
        X, y = X[idx], y[idx]
    if quick:  # a random subsample of the test rows too
        idx = rng.choice(Xt.shape[0], min(n_test, Xt.shape[0]), replace=False)
        Xt, yt = Xt[idx], yt[idx]
    elif n_test is not None:
        Xt, yt = Xt[:n_test], yt[:n_test]
    return X, y, Xt, yt


def e_fit(Est, params, name, src, seed, quick):
    """One fit of part (e): (support size, fit seconds, test accuracy, majority
    rate), and the kinds of ConvergenceWarning the fit gave."""
    X, y, Xt, yt = e_draw(name, src, seed, quick)
    _, counts = np.unique(yt, return_counts=True)
    majority = counts.max() / counts.sum()
    est = Est(**params, random_state=seed)
    tic = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, y)
    except Exception as exc:  # report it, keep the other fits
        print(f"  {Est.__name__} {params} {name} seed {seed}: {exc!r}", flush=True)
        return (np.nan, np.nan, np.nan, majority), ""
    fit_time = time.perf_counter() - tic
    support = getattr(est, "support_", None)
    n_sv = np.nan if support is None else len(support)
    kinds = {
        "majority" if "most frequent class" in str(w.message) else "max_iter"
        for w in caught
        if issubclass(w.category, ConvergenceWarning)
    }
    return (n_sv, fit_time, est.score(Xt, yt), majority), ",".join(sorted(kinds))


def _fmt_params(params):
    return ",".join(f"{k}={v}" for k, v in params.items() if k != "budget") or "-"


def e_task(Est, params, name, src, seed, quick):
    """e_fit, tagged with its task for the unordered results."""
    return (Est.__name__, _fmt_params(params), name, seed), e_fit(
        Est, params, name, src, seed, quick
    )


def e_run(tasks, src, quick, n_jobs, deadline, label):
    """Run (Est, params, name, seed) tasks; print each fit as it finishes."""
    results = {}
    jobs = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
        delayed(e_task)(Est, params, name, src[name], seed, quick)
        for Est, params, name, seed in tasks
    )
    t0 = time.perf_counter()
    for (est, params, name, seed), (res, warned) in jobs:
        results.setdefault((est, params, name), {})[seed] = res
        n_sv, t, acc, maj = res
        print(
            f"  {label} {time.perf_counter() - t0:7.0f}s {name:<9} {est:<27} {params:<27} "
            f"seed {seed} |S| {n_sv:>6.0f} fit {t:7.1f}s acc {acc:.4f} (maj {maj:.4f})"
            + (f" ConvergenceWarning: {warned}" if warned else ""),
            flush=True,
        )
        if deadline is not None and time.time() > deadline:
            print(f"  {label}: deadline reached, the remaining fits are skipped", flush=True)
            break
    return results


def part_e(quick, seeds, grid_seeds, n_jobs, deadline, only, chosen=None):
    src = e_sources()
    names = E_SETS
    estimators = [getattr(sklearn_budget, n) for n in sklearn_budget.__all__]
    if chosen:
        estimators = [Est for Est in estimators if Est.__name__ in chosen]
    tasks = [
        (Est, {}, name, seed)
        for name in names
        for Est in estimators
        if (Est.__name__, name) not in E_SLOW
        for seed in seeds
    ]
    tasks += [
        (Est, {}, name, seed)
        for name in names
        for Est in estimators
        if (Est.__name__, name) in E_SLOW
        for seed in seeds
    ]
    if only == "grid":
        tasks = []
    print(
        f"(e) default instances (only random_state set), seeds {list(seeds)}, "
        f"{len(tasks)} fits, n_jobs={n_jobs}; one line per fit as it finishes",
        flush=True,
    )
    default = e_run(tasks, src, quick, n_jobs, deadline, "default")
    summ = {k: e_summary(list(v.values())) for k, v in default.items()}
    print()
    print(
        "(e) default instances: test accuracy median / min / spread over seeds, "
        "median |S| and fit time; maj = majority rate of the test set"
    )
    print(
        f"{'data':<9} {'estimator':<27} {'n':>2} {'median':>7} {'min':>7} {'spread':>7} "
        f"{'|S|':>6} {'fit s':>7} {'maj':>7} {'flags'}"
    )
    for name in names:
        for Est in estimators:
            r = summ.get((Est.__name__, "-", name))
            if r is None:
                print(f"{name:<9} {Est.__name__:<27} skipped (not run before the deadline)")
                continue
            flags = []
            if r["above"] < 0.03:
                flags.append(f"<maj+3 (worst seed {r['above'] * 100:+.1f} pts)")
            if name == "a9a" and r["spread"] > 0.02:
                flags.append("spread>2")
            print(
                f"{name:<9} {Est.__name__:<27} {r['n']:>2} {r['med']:>7.4f} {r['min']:>7.4f} "
                f"{r['spread']:>7.4f} {r['sv']:>6.0f} {r['t']:>7.1f} {r['maj']:>7.4f} "
                f"{' '.join(flags)}",
                flush=True,
            )
    if only == "defaults":
        return
    grid = [(Est, p) for Est, p in _e_grid() if not chosen or Est.__name__ in chosen]
    tasks = [
        (Est, params, name, seed) for seed in grid_seeds for name in names for Est, params in grid
    ]
    print()
    print(
        f"(e) grid at budget=100 (Projectrons: 500), seeds {list(grid_seeds)}, {len(tasks)} fits; "
        "one line per fit as it finishes",
        flush=True,
    )
    gres = e_run(tasks, src, quick, n_jobs, deadline, "grid")
    print()
    print(
        "(e) grid: mean test accuracy over the grid seeds of each configuration; best "
        "configuration per learner and data set against the default instance (its "
        "accuracy on the same seeds, and its median over all seeds)"
    )
    print(
        f"{'data':<9} {'estimator':<27} {'best configuration':<27} {'best':>7} "
        f"{'default':>7} {'def med':>7} {'gap':>6} {'within 2'}"
    )
    learners = []
    for Est, _ in grid:
        if Est.__name__ not in learners:
            learners.append(Est.__name__)
    for name in names:
        for est in learners:
            cells = {
                p: np.mean([r[2] for r in v.values()])
                for (e, p, nm), v in gres.items()
                if e == est and nm == name
            }
            if not cells:
                continue
            best = max(cells, key=cells.get)
            d = default.get((est, "-", name))
            if d:
                d_same = np.mean([d[s][2] for s in grid_seeds if s in d] or [np.nan])
                d_med = np.median([r[2] for r in d.values()])
                gap = cells[best] - d_same
                ok = "yes" if gap <= 0.02 else "NO"
                dtxt = f"{d_same:>7.4f} {d_med:>7.4f} {gap * 100:>+6.1f} {ok}"
            else:
                dtxt = "default not run"
            print(f"{name:<9} {est:<27} {best:<27} {cells[best]:>7.4f} {dtxt}", flush=True)
    print()
    print(
        "(e) grid, every configuration: test accuracy median / min / spread over the grid "
        "seeds, median |S| and fit time; * misses 3 points above the majority rate on a "
        "seed, or (a9a) a spread above 2 points"
    )
    for (e, p, nm), v in sorted(gres.items(), key=lambda kv: (names.index(kv[0][2]), kv[0][0])):
        r = e_summary(list(v.values()))
        bad = r["above"] < 0.03 or (nm == "a9a" and r["spread"] > 0.02)
        print(
            f"{nm:<9} {e:<27} {p:<27} {r['med']:>7.4f} {r['min']:>7.4f} {r['spread']:>7.4f} "
            f"{r['sv']:>6.0f} {r['t']:>7.1f} {'*' if bad else ''}",
            flush=True,
        )


def e_summary(runs):
    """Median, min, spread of accuracy; median support and fit time; majority rate."""
    runs = np.array(runs, dtype=float)
    acc = runs[:, 2]
    return dict(
        med=np.median(acc),
        min=acc.min(),
        spread=acc.max() - acc.min(),
        sv=np.median(runs[:, 0]),
        t=np.median(runs[:, 1]),
        maj=runs[:, 3].max(),
        above=(acc - runs[:, 3]).min(),
        n=len(acc),
    )


# (f) ---------------------------------------------------------------------

# Training / test rows of the width sweep per data set: part (e)'s draws and
# splits, smaller so that 5 widths x 3 seeds x every estimator stay affordable.
F_SIZES = {
    "a9a": (2000, 2000),
    "usps10": (2000, None),
    "usps0": (2000, None),
    "banana": (2000, 1000),
    "waveform": (2000, 1000),
    "mnist": (2000, 2000),
    "dna": (None, None),
    "satimage": (2000, None),
    "pendigits": (2000, 2000),
}
# Multiples of the training data's gamma='scale' value; 1 is gamma='scale' itself.
F_WIDTHS = (0.05, 0.2, 1, 3, 10)
# Learners whose cost grows with the training rows beyond a budget (the
# unbounded ones, and matching pursuit whose candidates are all the rows)
# see the first F_CAP rows of each draw.
F_CAPPED = {"KernelMatchingPursuit", "KernelPerceptron", "KernelPassiveAggressive"}
F_CAP = 1000


def f_value(text, n):
    """A parameter value of ``--f-params``: a Python literal, or ``C/n`` (C over the rows)."""
    if text.endswith("/n"):
        return float(text[:-2]) / n
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # a string option


def f_configs(estimators, extra):
    """(estimator class, parameters) of the sweep: the defaults, and ``budget=100``."""
    configs = []
    for Est in estimators:
        params = Est().get_params()
        if not set(extra) <= set(params):
            print(f"  {Est.__name__}: no parameter {sorted(set(extra) - set(params))}, skipped")
            continue
        configs.append((Est, dict(extra)))
        if params.get("budget", 100) != 100:
            configs.append((Est, dict(extra, budget=100)))
    return configs


def f_fit(Est, params, width, name, src, seed, quick, n_train, replace):
    """One fit of the sweep: (numeric gamma, training rows, test accuracy, majority rate)."""
    sizes = dict(F_SIZES)
    if n_train is not None:
        sizes[name] = (n_train, sizes[name][1])
    X, y, Xt, yt = e_draw(name, src, seed, quick, sizes)
    if Est.__name__ in F_CAPPED:
        X, y = X[:F_CAP], y[:F_CAP]
    if replace > 1:  # a stream `replace` times longer, drawn with replacement
        idx = np.random.RandomState(seed + 1000).randint(X.shape[0], size=replace * X.shape[0])
        X, y = X[idx], y[idx]
    _, counts = np.unique(yt, return_counts=True)
    majority = counts.max() / counts.sum()
    n = X.shape[0]
    params = {k: f_value(v, n) if isinstance(v, str) else v for k, v in params.items()}
    if "gamma" in Est().get_params():
        gamma = "scale" if width == 1 else width * resolve_gamma("scale", X)
        params["gamma"] = gamma
    est = Est(**params, random_state=seed)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, y)
        acc = est.score(Xt, yt)
    except Exception as exc:  # report it, keep the other fits
        print(f"  {Est.__name__} {params} {name} seed {seed}: {exc!r}", flush=True)
        acc, caught = np.nan, []
    # The fit's own ConvergenceWarnings (the collapse warning among them) and the
    # random features' narrow-width warning, once each.
    warned = list(
        dict.fromkeys(
            str(w.message)
            for w in caught
            if issubclass(w.category, ConvergenceWarning)
            or "random features estimate" in str(w.message)
        )
    )
    return getattr(est, "gamma_", np.nan), n, acc, majority, warned


def f_task(key, *args):
    return key, f_fit(*args)


def part_f(args):
    names = args.sets.split(",") if args.sets else E_SETS
    widths = [float(w) for w in args.widths.split(",")] if args.widths else F_WIDTHS
    if args.from_log:  # only the tables of earlier runs
        runs = {}
        for path in args.from_log.split(","):
            with open(path) as fh:
                for line in fh:
                    r = json.loads(line)
                    runs.setdefault(r["label"], {})[tuple(r["key"])] = (r["acc"], r["maj"])
        for label, results in runs.items():
            print(f_table(results, names, widths, label) + "\n")
        return
    src = e_sources()
    estimators = [getattr(sklearn_budget, n) for n in sklearn_budget.__all__]
    if args.estimators:
        estimators = [Est for Est in estimators if Est.__name__ in args.estimators.split(",")]
    extra = dict(kv.split("=", 1) for kv in args.f_params.split(";")) if args.f_params else {}
    configs = f_configs(estimators, extra)
    seeds = range(1 if args.quick else args.seeds or 3)
    tasks = []  # seed by seed, so that a run cut short has every cell once
    for seed in seeds:
        for name in names:
            for Est, params in configs:
                ws = widths if "gamma" in Est().get_params() else [1]
                for w in ws:
                    key = (Est.__name__, _fmt_f(params), name, w, seed)
                    tasks.append((key, Est, params, w, name, seed))
    print(
        f"(f) width sweep ({args.label}): {len(tasks)} fits, widths {widths} x 'scale', "
        f"seeds {list(seeds)}, extra parameters {extra or '-'}, rows x{args.replace}",
        flush=True,
    )
    deadline = None if args.max_minutes is None else time.time() + 60 * args.max_minutes
    jobs = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
        delayed(f_task)(
            key, Est, params, w, name, src[name], seed, args.quick, args.n_train, args.replace
        )
        for key, Est, params, w, name, seed in tasks
    )
    results = {}
    t0 = time.perf_counter()
    log = open(args.out + ".jsonl", "a") if args.out else None
    for key, (gamma, n, acc, maj, warned) in jobs:
        results[key] = (acc, maj)
        est, params, name, w, seed = key
        print(
            f"  f {time.perf_counter() - t0:6.0f}s {name:<9} {est:<27} {params:<22} "
            f"x{w:<5} seed {seed} gamma {gamma:.3g} n {n} acc {acc:.4f} (maj {maj:.4f})"
            + (" ConvergenceWarning" if warned else ""),
            flush=True,
        )
        if log:
            rec = dict(label=args.label, key=key, gamma=gamma, n=n, acc=acc, maj=maj, warn=warned)
            log.write(json.dumps(rec) + "\n")
            log.flush()
        if deadline is not None and time.time() > deadline:
            print("  f: deadline reached, the remaining fits are skipped", flush=True)
            break
    table = f_table(results, names, widths, args.label)
    print(table)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(table + "\n")


def part_g(args):
    """(g): the grid of (e) at the width where each default of (f) is lowest."""
    worst = {}
    for path in args.from_log.split(","):
        with open(path) as fh:
            for line in fh:
                r = json.loads(line)
                est, _, name, w, _ = r["key"]
                gap = 100 * (r["acc"] - r["maj"])
                if (est, name) not in worst or gap < worst[est, name][0]:
                    worst[est, name] = (gap, w)
    grid = {}
    for Est, params in _e_grid():
        grid.setdefault(Est, []).append(params)
    src = e_sources()
    seeds = range(1 if args.quick else args.seeds or 3)
    lines = [
        "#### (g) the grid at the width of the default's worst cell (points above "
        "the majority rate, worst seed)",
        "",
        "| estimator | data | width | default | best grid setting | its worst | reachable |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    for Est, settings in grid.items():
        for (est, name), (gap, w) in sorted(worst.items()):
            if est != Est.__name__ or gap >= 3:
                continue
            best = (-np.inf, None)
            for params in settings:
                fits = [
                    f_fit(Est, params, w, name, src[name], seed, args.quick, None, 1)
                    for seed in seeds
                ]
                low = min(100 * (acc - maj) for _, _, acc, maj, _ in fits)
                print(f"  g {est} {name} x{w} {_fmt_f(params)}: {low:+.1f}", flush=True)
                best = max(best, (low, _fmt_f(params)), key=lambda b: b[0])
            yes = "yes" if best[0] >= 3 else "no"
            lines.append(
                f"| {est} | {name} | x{w} | {gap:+.1f} | {best[1]} | {best[0]:+.1f} | {yes} |"
            )
    print("\n".join(lines))


def _fmt_f(params):
    return ",".join(f"{k}={v}" for k, v in params.items()) or "defaults"


def f_table(results, names, widths, label):
    """Markdown: per estimator x setting x set, the worst cell over widths and seeds."""
    cells, seeds = {}, {}
    for (est, params, name, w, seed), (acc, maj) in results.items():
        cells.setdefault((est, params, name), {}).setdefault(w, []).append(acc - maj)
        seeds.setdefault((est, params, name), set()).add(seed)
    lines = [
        f"#### (f) {label}: test accuracy minus the majority rate (points), worst over "
        "widths and seeds; per width the worst seed",
        "",
        "| estimator | setting | data | seeds | worst | "
        + " | ".join(f"x{w}" for w in widths)
        + " | flag |",
        "|---|---|---|---:|---:|" + "---:|" * len(widths) + "---|",
    ]
    order = {n: i for i, n in enumerate(names)}
    for cell, by_w in sorted(cells.items(), key=lambda kv: (*kv[0][:2], order[kv[0][2]])):
        worst = {w: np.min(v) * 100 for w, v in by_w.items()}
        low = min(worst.values())
        if np.isnan(low):
            flag = "a fit failed"
        else:
            flag = "AT/BELOW MAJORITY" if low <= 0 else ("< 3 points" if low < 3 else "")
        cols = " | ".join(f"{worst[w]:+.1f}" if w in worst else "" for w in widths)
        lines.append(f"| {' | '.join(cell)} | {len(seeds[cell])} | {low:+.1f} | {cols} | {flag} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["a", "b", "c", "d", "e", "f", "g"], action="append")
    parser.add_argument("--n-a9a", type=int, default=5000, help="a9a training rows of (a), (b)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=None, help="seeds of (e) (5), (f) (3)")
    parser.add_argument("--grid-seeds", type=int, default=5, help="seeds of (e)'s grid")
    parser.add_argument(
        "--first-seed", type=int, default=0, help="(e): the first seed (to add seeds to a run)"
    )
    parser.add_argument("--n-jobs", type=int, default=2, help="parallel fits of (e)")
    parser.add_argument(
        "--max-minutes", type=float, default=None, help="(e): stop starting fits after this long"
    )
    parser.add_argument(
        "--only", choices=["defaults", "grid"], help="(e): the default table or the grid only"
    )
    parser.add_argument(
        "--estimators", help="(e): comma-separated estimator names (default: every estimator)"
    )
    parser.add_argument("--sets", help="(f): comma-separated data sets (default: all)")
    parser.add_argument("--widths", help="(f): comma-separated multiples of 'scale'")
    parser.add_argument(
        "--f-params", help="(f): extra parameters 'k=v;k=v' (v a literal, or C/n: C over the rows)"
    )
    parser.add_argument("--n-train", type=int, help="(f): training rows of every set")
    parser.add_argument("--replace", type=int, default=1, help="(f): stream x longer (resampled)")
    parser.add_argument("--label", default="defaults", help="(f): name of the run")
    parser.add_argument(
        "--from-log", help="(f): only the tables of these .jsonl logs; (g): the sweep's logs"
    )
    parser.add_argument("--out", help="(f): append the markdown table here (and a .jsonl log)")
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
    if "e" in parts:
        deadline = None if args.max_minutes is None else time.time() + 60 * args.max_minutes
        part_e(
            args.quick,
            range(args.first_seed, args.first_seed + (1 if args.quick else args.seeds or 5)),
            range(1 if args.quick else args.grid_seeds),
            args.n_jobs,
            deadline,
            args.only,
            None if args.estimators is None else args.estimators.split(","),
        )
    if "f" in parts:
        part_f(args)
    if "g" in parts:
        part_g(args)


if __name__ == "__main__":
    main()
