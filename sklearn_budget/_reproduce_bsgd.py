"""The ``bsgd-table3`` experiment: Table 3 of Wang, Crammer and Vucetic (2012).

Test accuracy after one online pass of Budgeted SGD (three budget
maintenances) and of other budgeted online learners at budgets 100 and 500,
with an exact ``SVC`` as the reference. Run by ``sklearn-budget reproduce
bsgd-table3``; the output files and the command line are those of
:mod:`sklearn_budget._reproduce`.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.svm import SVC
from sklearn.utils import check_random_state

from ._bsgd import BudgetedSGDClassifier
from ._perceptron import Stoptron
from ._projectron import ProjectronPlusPlus
from ._random_budget import RandomizedBudgetPerceptron
from ._reproduce import _mean_std, _parallel, _pyplot, _save_figure, _verdict, forgetron_U
from .datasets import fetch_a9a, fetch_banana, fetch_usps, fetch_waveform, make_two_gaussians

NAME = "bsgd-table3"

METHODS = (
    "BSGD merging",
    "BSGD projection",
    "BSGD removal",
    "Projectron++",
    "Stoptron",
    "RBP",
)

# The rbf widths are those this package already uses for these data sets
# (see _reproduce.py); the regularisation is chosen on a validation split
# (see _choose_alpha), as the values of the paper could not be checked.
DATASETS = {
    "Banana": dict(
        gamma=1 / (2 * 0.7**2),
        gamma_source="sigma = 0.7, Weston et al. 2005, Table 1",
        split=(4300, 1000),
        quick_split=(600, 300),
    ),
    "Adult (a9a)": dict(
        gamma=0.02,
        gamma_source="sigma^2 = 25, Orabona et al. 2008",
        split=None,
        quick_split=(1500, 1000),
    ),
    "USPS (10 classes)": dict(
        gamma=1 / 128,
        gamma_source="width 128, Weston et al. 2005, as read in weston-usps",
        split=None,
        quick_split=(800, 400),
    ),
    "Waveform": dict(
        gamma=1 / (2 * 3.16**2),
        gamma_source="sigma = 3.16, Weston et al. 2005, Table 1",
        split=(4000, 1000),
        quick_split=(600, 300),
    ),
    "Gauss (two Gaussians)": dict(
        gamma=1.0,
        gamma_source="sigma^2 = 0.5, Orabona et al. 2008",
        split=(10000, 5000),
        quick_split=(600, 300),
    ),
}

BUDGETS = (100, 500)
ALPHA_GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)

# The numbers of the paper's Table 3 that issue 11 of this project quotes:
# test accuracy in %, one pass, budget 100 (None: LIBSVM). They could not be
# checked against the paper's text, and the table says so. No other cell of
# the paper's table is known here: those are printed "n/a".
QUOTED = {
    ("Adult (a9a)", "BSGD merging", 100): 84.55,
    ("Adult (a9a)", "BSGD projection", 100): 83.88,
    ("Adult (a9a)", "Projectron++", 100): 77.86,
    ("Adult (a9a)", "SVC", None): 84.29,
    ("Banana", "BSGD merging", 100): 90.17,
    ("Banana", "BSGD projection", 100): 90.21,
    ("Banana", "SVC", None): 90.70,
    ("USPS (10 classes)", "BSGD merging", 100): 91.76,
    ("USPS (10 classes)", "BSGD projection", 100): 89.67,
    ("USPS (10 classes)", "SVC", None): 95.27,
}


def _estimator(method, budget, gamma, alpha, seed):
    if method.startswith("BSGD"):
        return BudgetedSGDClassifier(
            budget=budget, alpha=alpha, maintenance=method.split()[1], gamma=gamma
        )
    if method == "Projectron++":
        # The hard-budget extension, with the U of the Projectron paper.
        return ProjectronPlusPlus(eta="adaptive", U=forgetron_U(budget), budget=budget, gamma=gamma)
    if method == "Stoptron":
        return Stoptron(budget=budget, gamma=gamma)
    return RandomizedBudgetPerceptron(budget=budget, gamma=gamma, random_state=seed)


def _one_pass(method, budget, gamma, alpha, seed, Xtr, ytr, Xte, yte):
    """Test accuracy (%) and support size after one pass over ``Xtr`` in its
    order, or of the ``SVC`` (``method='SVC'``, ``alpha`` its ``C``)."""
    tic = time.perf_counter()
    if method == "SVC":
        est = SVC(C=alpha, gamma=gamma).fit(Xtr, ytr)
        size = int(est.n_support_.sum())
    else:
        est = _estimator(method, budget, gamma, alpha, seed)
        est.partial_fit(Xtr, ytr, classes=np.unique(ytr))
        size = len(est.support_)
    seconds = time.perf_counter() - tic
    return {"accuracy": 100.0 * est.score(Xte, yte), "support": size, "seconds": seconds}


def _load(name, data_home):
    """``(X_train, y_train, X_test, y_test)``, or ``(X, y, None, None)`` for
    the pools that are split per run."""
    if name == "Adult (a9a)":
        X, y = fetch_a9a(subset="train", data_home=data_home, return_X_y=True)
        Xt, yt = fetch_a9a(subset="test", data_home=data_home, return_X_y=True)
        # 123 binary features: dense rows are faster, and merging needs them.
        return X.toarray(), y, Xt.toarray(), yt
    if name == "USPS (10 classes)":
        kw = dict(positive_digit=None, data_home=data_home, return_X_y=True)
        return (*fetch_usps(subset="train", **kw), *fetch_usps(subset="test", **kw))
    if name == "Gauss (two Gaussians)":
        return None, None, None, None  # drawn per run
    fetch = fetch_banana if name == "Banana" else fetch_waveform
    return (*fetch(data_home=data_home, return_X_y=True), None, None)


def _splits(name, data, n_runs, quick, rng):
    """The runs' training streams (shuffled) and test sets."""
    spec = DATASETS[name]
    n_train, n_test = spec["quick_split"] if quick else (spec["split"] or (None, None))
    X, y, Xt, yt = data
    splits = []
    for _ in range(n_runs):
        if name == "Gauss (two Gaussians)":
            X, y = make_two_gaussians(n_train + n_test, random_state=rng)
            splits.append((X[:n_train], y[:n_train], X[n_train:], y[n_train:]))
        elif Xt is None:
            perm = rng.permutation(X.shape[0])
            tr, te = perm[:n_train], perm[n_train : n_train + n_test]
            splits.append((X[tr], y[tr], X[te], y[te]))
        else:
            # A fixed test set; each run plays another order of the training rows.
            order = rng.permutation(X.shape[0])[:n_train]
            splits.append((X[order], y[order], Xt[:n_test], yt[:n_test]))
    return splits


def _choose_alpha(names, splits, gamma, budget, grid, n_folds, seed, n_jobs):
    """The regularisation of every data set, by repeated validation splits.

    BSGD with merging at the smaller budget learns, in one pass, from 80% of
    the first run's training rows in a random order and is scored on the
    other 20%, ``n_folds`` times with other orders and splits. The ``alpha``
    of ``grid`` of best mean accuracy (the smallest on ties) is used by the
    three BSGD rows and sets the SVC's ``C``. One split alone is too noisy:
    on Adult one pass at a small ``alpha`` varies by several points with
    the order of the stream.
    """
    rng = check_random_state(seed)
    tasks, keys = [], []
    for name in names:
        X, y = splits[name][0][:2]
        cut = int(0.8 * X.shape[0])
        for fold in range(n_folds):
            perm = rng.permutation(X.shape[0])
            tr, va = perm[:cut], perm[cut:]
            for alpha in grid:
                keys.append((name, alpha))
                tasks.append(
                    delayed(_one_pass)("BSGD merging", budget, gamma[name], alpha, 0,
                                       X[tr], y[tr], X[va], y[va])
                )  # fmt: skip
    folds = {}
    for (name, alpha), result in zip(keys, Parallel(n_jobs=n_jobs)(tasks)):
        folds.setdefault(name, {}).setdefault(alpha, []).append(result["accuracy"])
    scores = {name: {a: float(np.mean(acc)) for a, acc in f.items()} for name, f in folds.items()}
    chosen = {name: max(grid, key=lambda a, s=scores[name]: (s[a], -a)) for name in names}
    return chosen, scores


def _cell(results):
    mean, std = _mean_std([r["accuracy"] for r in results])
    return mean, std, f"{mean:.2f} ± {std:.2f}"


def _paper(name, method, budget, mean, std, quick):
    """The paper column and the verdict column of one cell."""
    if quick:
        return "-", "-"
    quoted = QUOTED.get((name, method, budget))
    if quoted is None:
        return "n/a", "n/a"
    return f"{quoted:.2f}*", _verdict(mean, std, quoted, 0.0)


def _table(names, budgets, runs, settings, quick):
    b1, b2 = budgets
    lines = [
        f"## Test accuracy (%) after one pass, mean ± std over {settings['n_runs']} runs",
        "",
        f"| data set | algorithm | B = {b1} (ours) | B = {b1} (paper) | ours vs paper "
        f"| B = {b2} (ours) | B = {b2} (paper) | ours vs paper |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        for method in METHODS:
            cells = []
            for B in budgets:
                mean, std, text = _cell(runs[(f"{name}: {method}", B)])
                cells += [text, *_paper(name, method, B, mean, std, quick)]
            lines.append(f"| {name} | {method} | " + " | ".join(cells) + " |")
        mean, std, text = _cell(runs[(f"{name}: SVC", None)])
        paper, verdict = _paper(name, "SVC", None, mean, std, quick)
        C = settings["datasets"][name]["C"]
        lines.append(
            f"| {name} | SVC (C = {C:.3g}, no budget) | {text} | {paper} | {verdict} | - | - | - |"
        )
    lines += [
        "",
        "*: quoted from the paper's Table 3 in issue 11 of this project; not checked "
        "against the paper's text, which was not available here. n/a: no number of the "
        "paper is known here (the paper's other cells, and the data sets whose version in "
        "the paper could not be checked: Waveform, Gauss). The paper column is LIBSVM for "
        'the SVC rows. "agrees": our mean is within twice our std (or 0.5% relative) of '
        "the quoted number, whose own spread is not known.",
        "",
        "## Settings",
        "",
        "| data set | train / test rows | rbf gamma (source) | alpha = lambda (chosen) "
        "| mean validation accuracy % per alpha | SVC C = 1 / (alpha n) | SVC support |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        s = settings["datasets"][name]
        val = ", ".join(f"{float(a):g}: {acc:.1f}" for a, acc in s["validation"].items())
        sv, _ = _mean_std([r["support"] for r in runs[(f"{name}: SVC", None)]])
        lines.append(
            f"| {name} | {s['n_train']} / {s['n_test']} | {s['gamma']:.4g}; {s['gamma_source']} "
            f"| {s['alpha']:g} | {val} | {s['C']:.3g} | {sv:.0f} |"
        )
    lines += [
        "",
        "Every learner plays one pass (`partial_fit`) over a shuffled training stream; "
        "the accuracy is that of the final hypothesis (no averaging). Runs differ by the "
        "order of the stream (Adult, USPS: fixed test sets), or by a seeded train / test "
        "split and its order (Banana, Waveform), or by a new draw of the data (Gauss). "
        "alpha was chosen per data set by BSGD with merging at B = "
        f"{budgets[0]}, trained in one pass on a random 80% of the first run's training "
        f"rows and scored on the other 20%, averaged over {settings['n_folds']} such splits "
        "(the grid and the means are shown); the three BSGD rows use it, and the SVC "
        "solves the same regularised hinge loss (with a bias) with C = 1 / (alpha n). "
        "Projectron++ uses its hard budget and U = sqrt((B + 1) / log(B + 1)) / 4 with "
        "the adaptive step; Stoptron and RBP take only the budget. The SVC runs once on "
        "fixed splits (its result does not depend on the order).",
    ]
    return lines


def _figure(out, names, budgets, runs):
    """Accuracy of every learner per data set, one panel per budget."""
    plt = _pyplot()
    if plt is None:
        return []
    fig, axes = plt.subplots(1, len(budgets), figsize=(13, 4.8), sharey=True, squeeze=False)
    x = np.arange(len(names))
    width = 0.8 / len(METHODS)
    markers = "oDsv^<"
    for ax, B in zip(axes[0], budgets):
        for i, method in enumerate(METHODS):
            acc = np.array([[r["accuracy"] for r in runs[(f"{n}: {method}", B)]] for n in names])
            xs = x - 0.4 + width * (i + 0.5)
            ax.errorbar(xs, acc.mean(axis=1), yerr=acc.std(axis=1), marker=markers[i],
                        linestyle="none", capsize=2, color=f"C{i}", label=method)  # fmt: skip
            quoted = [QUOTED.get((n, method, B)) for n in names]
            for xq, q in zip(xs, quoted):
                if q is not None:
                    ax.plot([xq], [q], marker="x", color=f"C{i}", markersize=9, linestyle="none")
        svc = [np.mean([r["accuracy"] for r in runs[(f"{n}: SVC", None)]]) for n in names]
        ax.hlines(svc, x - 0.45, x + 0.45, colors="0.2", linestyles="--", label="SVC")
        ax.set_xticks(x)
        ax.set_xticklabels([n.split(" (")[0] for n in names])
        ax.set_title(f"B = {B}")
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].set_ylabel("test accuracy (%)")
    axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize="small")
    fig.suptitle(
        "One pass, mean ± std over the runs; x: the paper's number as quoted in issue 11",
        fontsize="medium",
    )
    return [_save_figure(plt, fig, out, f"{NAME}.png")]


def run_bsgd_table3(quick, out, n_jobs, seed, data_home, progress):
    """Run the experiment; return the table lines, figures, runs and settings."""
    names = list(DATASETS)
    # All data first: a missing or damaged file fails before any run.
    data = {name: _load(name, data_home) for name in names}
    n_runs = 1 if quick else 5
    budgets = (50, 100) if quick else BUDGETS
    grid = (1e-4, 1e-3) if quick else ALPHA_GRID
    rng = check_random_state(seed)
    splits = {name: _splits(name, data[name], n_runs, quick, rng) for name in names}
    gamma = {name: DATASETS[name]["gamma"] for name in names}
    n_folds = 1 if quick else 3
    alpha, scores = _choose_alpha(names, splits, gamma, budgets[0], grid, n_folds, seed, n_jobs)
    keys, tasks = [], []
    for name in names:
        n_train = splits[name][0][0].shape[0]
        C = 1.0 / (alpha[name] * n_train)
        # The SVC does not depend on the order: one fit per distinct split.
        svc_runs = 1 if DATASETS[name]["split"] is None else n_runs
        for r in range(svc_runs):
            keys.append((f"{name}: SVC", None, r))
            tasks.append(delayed(_one_pass)("SVC", None, gamma[name], C, 0, *splits[name][r]))
        for method in METHODS:
            for B in budgets:
                for r in range(n_runs):
                    keys.append((f"{name}: {method}", B, r))
                    tasks.append(
                        delayed(_one_pass)(method, B, gamma[name], alpha[name], seed + r,
                                           *splits[name][r])
                    )  # fmt: skip
    runs = _parallel(keys, tasks, n_jobs, progress, "run", "B")
    settings = {
        "budgets": list(budgets),
        "n_runs": n_runs,
        "alpha_grid": list(grid),
        "n_folds": n_folds,
        "datasets": {
            name: {
                "n_train": int(splits[name][0][0].shape[0]),
                "n_test": int(splits[name][0][2].shape[0]),
                "gamma": gamma[name],
                "gamma_source": DATASETS[name]["gamma_source"],
                "alpha": alpha[name],
                "validation": {str(a): acc for a, acc in scores[name].items()},
                "C": 1.0 / (alpha[name] * splits[name][0][0].shape[0]),
            }
            for name in names
        },
    }
    lines = _table(names, budgets, runs, settings, quick)
    figures = _figure(out, names, budgets, runs)
    return lines, figures, runs, settings
