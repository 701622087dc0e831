"""The ``bsgd-table3`` experiment: Table 3 of Wang, Crammer and Vucetic (2012).

Test accuracy after one online pass of Budgeted SGD (three budget
maintenances) and of other budgeted online learners at budgets 100 and 500,
with an exact ``SVC`` as the reference.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC
from sklearn.utils import check_random_state

from .._bsgd import BudgetedSGDClassifier
from .._perceptron import Stoptron
from .._projectron import ProjectronPlusPlus
from .._random_budget import RandomizedBudgetPerceptron
from ..datasets import (
    fetch_a9a,
    fetch_banana,
    fetch_dna,
    fetch_pendigits,
    fetch_satimage,
    fetch_usps,
    fetch_waveform,
    make_two_gaussians,
)
from ._common import _mean_std, _parallel, _pyplot, _save_figure, _verdict, forgetron_U

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
# (see _projectron.py and _weston_cache.py); the regularisation is chosen on validation splits
# (see _choose), as the values of the paper could not be checked.
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
    # No width of these from the papers here: a multiple of scikit-learn's
    # "scale" rule, gamma = 1 / (d Var(X)) on the training rows (gamma=None
    # below), chosen on validation splits as the paper cross-validated its
    # widths (see _choose).
    "DNA": dict(gamma=None, split=None, quick_split=(600, 300)),
    "Satimage": dict(gamma=None, split=None, quick_split=(600, 300)),
    "Pendigits": dict(gamma=None, split=None, quick_split=(800, 400)),
}

BUDGETS = (100, 500)
ALPHA_GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
# Multiples of the "scale" width tried for the data sets without a width of
# their own: on Satimage "scale" itself costs the SVC 1.5 points and BSGD 3
# to 5 (doc/reproduce.rst, the BSGD paper's Table 3).
GAMMA_FACTORS = (1, 2, 4, 8)
BSGD_METHODS = METHODS[:3]
# One SVC fit on Adult takes minutes: its C follows BSGD merging's alpha.
SVC_FROM_MERGING = ("Adult (a9a)",)

# The paper's Table 3 (Wang, Crammer and Vucetic, 2012) as issue 23 of this
# project gives it: test accuracy in %, one pass, 5 shuffles, at budgets 100
# and 500; hyper-parameters chosen by 10-fold cross-validation. Its columns
# "MP+stop" and "MP+random" are margin-Perceptron versions of the Stoptron
# and the RBP; its Projectron++ threshold was tuned so that the final support
# size equals the budget. The LIBSVM column is the SVC row here.
PAPER_COLUMNS = ("Projectron++", "Stoptron", "RBP", "BSGD removal", "BSGD projection",
                 "BSGD merging")  # fmt: skip
_PAPER_ROWS = {
    "Banana": ("88.36 / 86.76", "88.07 / 89.77", "87.54 / 88.36", "85.63 / 89.92",
               "90.21 / 90.40", "90.17 / 89.46", 90.70),
    "Gauss (two Gaussians)": ("76.06 / 75.17", "74.10 / 79.68", "75.68 / 77.26",
                              "79.13 / 80.70", "81.25 / 81.33", "81.22 / 81.34", 81.62),
    "Adult (a9a)": ("77.86 / 79.80", "80.00 / 81.68", "79.78 / 80.40", "78.84 / 81.67",
                    "83.88 / 83.84", "84.55 / 83.93", 84.29),
    "DNA": ("82.94 / 90.11", "73.56 / 91.23", "73.87 / 87.84", "78.63 / 91.48",
            "86.53 / 92.26", "93.13 / 92.42", 95.32),
    "Satimage": ("84.47 / 88.66", "82.34 / 88.68", "82.51 / 87.25", "81.09 / 86.77",
                 "87.69 / 88.86", "87.53 / 89.77", 91.55),
    "USPS (10 classes)": ("81.40 / 92.02", "79.11 / 90.78", "78.06 / 90.10", "80.16 / 89.44",
                          "89.67 / 92.61", "91.76 / 92.91", 95.27),
    "Pendigits": ("93.33 / 95.78", "88.27 / 97.78", "87.77 / 97.20", "91.84 / 97.6",
                  "96.19 / 97.58", "97.06 / 97.63", 98.23),
    "Waveform": ("80.75 / 83.56", "81.04 / 83.76", "79.94 / 81.61", "78.43 / 84.38",
                 "85.63 / 86.18", "86.71 / 86.63", 85.83),
}  # fmt: skip


def _paper_table(rows):
    table = {}
    for name, cells in rows.items():
        for method, cell in zip(PAPER_COLUMNS, cells):
            for budget, value in zip(BUDGETS, cell.split(" / ")):
                table[(name, method, budget)] = float(value)
        table[(name, "SVC", None)] = cells[-1]
    return table


#: ``{(data set, method, budget): accuracy %}``; budget None for LIBSVM.
PAPER = _paper_table(_PAPER_ROWS)

# Our data is not the paper's problem: the paper's Waveform has 2 million
# rows and 3 classes, ours is the binary 5000-row benchmark. Its numbers are
# shown, without a verdict.
OTHER_PROBLEM = ("Waveform",)


# The paper's margin Perceptrons, for diagnosis (``cell``): not in the table,
# whose Stoptron and RBP rows are the Perceptron versions.
MARGIN_METHODS = ("MP+stop", "MP+random")


class _MarginPerceptron:
    """MP+stop or MP+random of the paper's Table 3, on two classes.

    The rbf kernel Perceptron with the update ``f += y k(x, .)`` whenever
    the margin ``y f(x)`` is at most ``beta``, played one row at a time. Once
    ``budget`` members are held, MP+stop makes no more updates, and MP+random
    first removes the member of rank ``rng.randint(budget)`` in insertion
    order, the draws of ``RandomizedBudgetPerceptron`` (its Notes): at
    ``beta = 0`` these are our ``Stoptron`` and ``RandomizedBudgetPerceptron``
    with ``average=False``, draw for draw (``test_reproduce.py``).
    """

    def __init__(self, method, budget, gamma, beta, seed):
        self.method, self.budget, self.gamma = method, budget, gamma
        self.beta, self.seed = beta, seed

    def _scores(self, X):
        return rbf_kernel(X, self.support_vectors_, gamma=self.gamma) @ self.coef_

    def partial_fit(self, X, y, classes):
        if len(classes) != 2:
            raise ValueError(f"{self.method} here takes two classes; got {len(classes)}.")
        self.classes_ = np.asarray(classes)
        signs = np.where(y == self.classes_[1], 1.0, -1.0)
        rng = check_random_state(self.seed)
        members = []  # rows of X, oldest first
        for t, x in enumerate(X):
            rows = X[members]
            f = signs[members] @ np.exp(-self.gamma * ((rows - x) ** 2).sum(axis=1))
            if signs[t] * f > self.beta:
                continue
            if len(members) == self.budget:
                if self.method == "MP+stop":
                    continue
                del members[rng.randint(self.budget)]
            members.append(t)
        self.support_ = np.array(members, dtype=int)
        self.support_vectors_ = X[self.support_]
        self.coef_ = signs[self.support_]
        return self

    def predict(self, X):
        return self.classes_[(self._scores(X) > 0).astype(int)]

    def score(self, X, y):
        return float(np.mean(self.predict(X) == y))


def _estimator(method, budget, gamma, alpha, seed):
    if method.startswith("BSGD"):
        return BudgetedSGDClassifier(
            budget=budget, alpha=alpha, maintenance=method.split()[1], gamma=gamma
        )
    if method == "Projectron++":
        # The hard-budget extension, with the U of the Projectron paper.
        return ProjectronPlusPlus(eta="adaptive", U=forgetron_U(budget), budget=budget, gamma=gamma)
    if method == "Stoptron":
        return Stoptron(budget=budget, gamma=gamma, average=False)
    if method in MARGIN_METHODS:
        return _MarginPerceptron(method, budget, gamma, alpha, seed)
    return RandomizedBudgetPerceptron(budget=budget, gamma=gamma, average=False, random_state=seed)


def _one_pass(method, budget, gamma, alpha, seed, Xtr, ytr, Xte, yte):
    """Test accuracy (%) and support size after one pass over ``Xtr`` in its
    order, or of the ``SVC`` (``method='SVC'``, ``alpha`` its ``C``); for
    MP+stop and MP+random, ``alpha`` is the margin ``beta``."""
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


def _gamma(name, X):
    """The rbf gamma of a data set: the literature's, or scikit-learn's
    ``'scale'`` on the training rows ``X``."""
    gamma = DATASETS[name]["gamma"]
    return gamma if gamma is not None else float(1.0 / (X.shape[1] * X.var()))


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
    if name in ("DNA", "Satimage", "Pendigits"):
        fetch = {"DNA": fetch_dna, "Satimage": fetch_satimage, "Pendigits": fetch_pendigits}[name]
        kw = dict(data_home=data_home, return_X_y=True)
        X, y, Xt, yt = (*fetch(subset="train", **kw), *fetch(subset="test", **kw))
        if name == "Pendigits":
            X, Xt = X / 100.0, Xt / 100.0  # coordinates 0-100 to [0, 1]
        return X, y, Xt, yt
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
            # Quick runs: a random part of the test set (some are sorted by class).
            test = rng.permutation(Xt.shape[0])[:n_test] if quick else slice(None)
            splits.append((X[order], y[order], Xt[test], yt[test]))
    return splits


def _choose(names, splits, gamma, budget, grid, factors, n_folds, seed, n_jobs):
    """The rbf width and every learner's regularisation, by validation splits.

    Each learner plays one pass over a random 80% of the first run's
    training rows and is scored on the other 20%, ``n_folds`` times with
    other orders and splits (one split alone is too noisy: on Adult one
    pass at a small ``alpha`` varies by several points with the order of
    the stream). First the width of the data sets without one of their own
    (``gamma[name] is None``): BSGD with merging at the smaller budget over
    ``factors`` times the "scale" width and every ``alpha`` of ``grid``,
    for each BSGD maintenance: its width of best mean accuracy is kept (the
    smaller factor on ties); merging's is the data set's, for the other
    learners. Then the ``alpha`` of each maintenance at its width, and the
    SVC's (``C = 1 / (alpha n)``, on the first split only; Adult's follows
    merging), are those of best mean accuracy, the smallest on ties. The
    paper chose every hyper-parameter of every learner by cross-validation;
    sharing merging's alpha and width cost BSGD with removal up to 25
    points (Pendigits) and, with projection, up to 5 (DNA).

    Returns ``(factor, alpha, validation)``: per data set, the width factor
    and the ``alpha`` of each BSGD maintenance and of ``'SVC'``, and the
    mean validation accuracies.
    """
    rng = check_random_state(seed)
    folds = {}
    for name in names:
        X = splits[name][0][0]
        cut = int(0.8 * X.shape[0])
        perms = [rng.permutation(X.shape[0]) for _ in range(n_folds)]
        folds[name] = [(p[:cut], p[cut:]) for p in perms]

    def scores(plan):
        tasks, keys = [], []
        for name, method, factor, alpha, n_use in plan:
            X, y = splits[name][0][:2]
            for tr, va in folds[name][:n_use]:
                keys.append((name, method, factor, alpha))
                value = 1.0 / (alpha * tr.size) if method == "SVC" else alpha
                tasks.append(
                    delayed(_one_pass)(method, budget, gamma[name] * factor, value, 0,
                                       X[tr], y[tr], X[va], y[va])
                )  # fmt: skip
        acc = {}
        for key, result in zip(keys, Parallel(n_jobs=n_jobs)(tasks)):
            acc.setdefault(key, []).append(result["accuracy"])
        return {key: float(np.mean(a)) for key, a in acc.items()}

    def best(score, name, method, factor):
        return max(grid, key=lambda a: (score[(name, method, factor, a)], -a))

    def best_at(name, method, factor):
        return max(score_width[(name, method, factor, a)] for a in grid)

    tried = {name: factors if DATASETS[name]["gamma"] is None else (1,) for name in names}
    score_width = scores(
        [(n, m, f, a, n_folds) for n in names for m in BSGD_METHODS for f in tried[n] for a in grid]
    )
    factor = {
        n: {m: max(tried[n], key=lambda f, n=n, m=m: (best_at(n, m, f), -f)) for m in BSGD_METHODS}
        for n in names
    }
    # The other learners, the SVC included, take merging's width.
    plan = [
        (n, "SVC", factor[n]["BSGD merging"], a, 1)
        for n in names
        if n not in SVC_FROM_MERGING
        for a in grid
    ]
    score = {**scores(plan), **score_width}
    chosen, validation = {}, {}
    for n in names:
        factor[n]["SVC"] = factor[n]["BSGD merging"]
        methods = (*BSGD_METHODS, *(() if n in SVC_FROM_MERGING else ("SVC",)))
        chosen[n] = {m: best(score, n, m, factor[n][m]) for m in methods}
        chosen[n].setdefault("SVC", chosen[n]["BSGD merging"])
        validation[n] = {
            "width": {m: {str(f): best_at(n, m, f) for f in tried[n]} for m in BSGD_METHODS},
            **{m: {str(a): score[(n, m, factor[n][m], a)] for a in grid} for m in methods},
        }
    return factor, chosen, validation


def _width_source(factor):
    """How a width chosen by validation is written in the Settings."""
    others = ", ".join(
        f"{m.split()[1]} x{factor[m]:g}"
        for m in BSGD_METHODS[1:]
        if factor[m] != factor[BSGD_METHODS[0]]
    )
    own = f"; {others}" if others else ""
    return f"{factor[BSGD_METHODS[0]]:g} / (d Var(X)) on the training rows, by validation{own}"


def _cell(results):
    mean, std = _mean_std([r["accuracy"] for r in results])
    return mean, std, f"{mean:.2f} ± {std:.2f}"


def _paper(name, method, budget, mean, std, quick):
    """The paper column and the verdict column of one cell."""
    if quick:
        return "-", "-"
    paper = PAPER.get((name, method, budget))
    if paper is None:
        return "n/a", "n/a"
    if name in OTHER_PROBLEM:
        return f"{paper:.2f}", "other data"
    return f"{paper:.2f}", _verdict(mean, std, paper, 0.0)


def _summary(names, budgets, runs, quick):
    """How many cells of each data set agree with the paper."""
    if quick:
        return []
    lines = ["| data set | cells that agree | ours higher | ours lower | other data |",
             "|---|---|---|---|---|"]  # fmt: skip
    for name in names:
        words = []
        for method in (*METHODS, "SVC"):
            for B in (None,) if method == "SVC" else budgets:
                mean, std, _ = _cell(runs[(f"{name}: {method}", B)])
                words.append(_paper(name, method, B, mean, std, quick)[1].split()[0])
        counts = [sum(w == key for w in words) for key in ("agrees", "higher", "lower", "other")]
        lines.append(f"| {name} | " + " | ".join(map(str, counts)) + " |")
    return lines


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
        "The paper column: the paper's Table 3 as issue 23 of this project gives it "
        "(LIBSVM for the SVC rows; the paper's text is not among this project's sources, "
        "so the numbers are not checked against it). "
        '"agrees": our mean is within twice our std (or 0.5% relative) of the paper\'s '
        'number, whose own spread is not known; "other data": our Waveform is the '
        "binary 5000-row benchmark, the paper's has 2 million rows and 3 classes. "
        "Our Gauss is the two Gaussians of the Projectron paper, which need not be the "
        "BSGD paper's Gauss: compare its SVC row with LIBSVM's before the others. "
        "How our rows relate to the paper's columns: our Stoptron and RBP are the "
        "Perceptron versions (update on mistakes), the paper's MP+stop and MP+random "
        "update on margin errors; our Projectron++ has a hard budget and the threshold "
        "of the Projectron paper (below), where the paper tuned its threshold so that "
        "the final support size equals the budget; the paper chose every "
        "hyper-parameter by 10-fold cross-validation, we choose each learner's alpha on "
        "validation splits, and the rbf width too where no paper gives one (the Settings).",
        "",
        *_summary(names, budgets, runs, quick),
        "",
        "## Settings",
        "",
        "| data set | train / test rows | rbf gamma (source) "
        "| alpha = lambda: merging, projection, removal, SVC (chosen) "
        "| mean validation accuracy % of merging: best per width factor; per alpha "
        "| SVC C = 1 / (alpha n) | SVC support |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        s = settings["datasets"][name]
        val = s["validation"]
        widths = ", ".join(
            f"x{float(f):g}: {acc:.1f}" for f, acc in val["width"]["BSGD merging"].items()
        )
        alphas = ", ".join(f"{float(a):g}: {acc:.1f}" for a, acc in val["BSGD merging"].items())
        chosen = ", ".join(f"{s['alpha'][m]:g}" for m in (*BSGD_METHODS, "SVC"))
        sv, _ = _mean_std([r["support"] for r in runs[(f"{name}: SVC", None)]])
        lines.append(
            f"| {name} | {s['n_train']} / {s['n_test']} | {s['gamma']:.4g}; {s['gamma_source']} "
            f"| {chosen} | {widths}; {alphas} | {s['C']:.3g} | {sv:.0f} |"
        )
    lines += [
        "",
        "Every learner plays one pass (`partial_fit`) over a shuffled training stream; "
        "the accuracy is that of the final hypothesis (no averaging). Runs differ by the "
        "order of the stream (Adult, USPS, DNA, Satimage, Pendigits: fixed test sets), "
        "or by a seeded train / test "
        "split and its order (Banana, Waveform), or by a new draw of the data (Gauss). "
        "Hyper-parameters come from validation: one pass on a random 80% of the first "
        "run's training rows, scored on the other 20%, averaged over "
        f"{settings['n_folds']} such splits. Where no paper gives the rbf width (DNA, "
        "Satimage, Pendigits), each BSGD maintenance at B = "
        f"{budgets[0]} takes the multiple of the 'scale' rule "
        f"({', '.join(f'x{f:g}' for f in settings['gamma_factors'])}) of its best "
        "validation accuracy over the alpha grid, and the other learners merging's "
        "(the width shown). Each BSGD maintenance takes its own alpha of the grid at its "
        "width, and the SVC, which solves the same regularised hinge loss (with a bias) with "
        "C = 1 / (alpha n), takes the alpha of its best accuracy on the first split "
        "(Adult's SVC takes merging's alpha: one fit takes minutes). "
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
    width = 3.0 + 0.75 * len(names) * len(budgets)
    fig, axes = plt.subplots(1, len(budgets), figsize=(width, 4.8), sharey=True, squeeze=False)
    x = np.arange(len(names))
    width = 0.8 / len(METHODS)
    markers = "oDsv^<"
    for ax, B in zip(axes[0], budgets):
        for i, method in enumerate(METHODS):
            acc = np.array([[r["accuracy"] for r in runs[(f"{n}: {method}", B)]] for n in names])
            xs = x - 0.4 + width * (i + 0.5)
            ax.errorbar(xs, acc.mean(axis=1), yerr=acc.std(axis=1), marker=markers[i],
                        linestyle="none", capsize=2, color=f"C{i}", label=method)  # fmt: skip
            quoted = [PAPER.get((n, method, B)) for n in names]
            for xq, q in zip(xs, quoted):
                if q is not None:
                    ax.plot([xq], [q], marker="x", color=f"C{i}", markersize=9, linestyle="none")
        svc = [np.mean([r["accuracy"] for r in runs[(f"{n}: SVC", None)]]) for n in names]
        ax.hlines(svc, x - 0.45, x + 0.45, colors="0.2", linestyles="--", label="SVC")
        ax.set_xticks(x)
        ax.set_xticklabels([n.split(" (")[0] for n in names], rotation=30, ha="right")
        ax.set_title(f"B = {B}")
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].set_ylabel("test accuracy (%)")
    axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize="small")
    fig.suptitle(
        "One pass, mean ± std over the runs; x: the paper's number (Table 3)",
        fontsize="medium",
    )
    return [_save_figure(plt, fig, out, f"{NAME}.png")]


def cell(
    name, method, budget=None, *, alpha=1e-3, gamma_factor=1.0, beta=0.0, data_home=None, seed=0
):
    """One cell of the table at a given ``alpha`` and width, for diagnosis.

    The five training streams and test sets are those of ``sklearn-budget
    reproduce bsgd-table3 --random-state seed`` (the data sets before
    ``name`` are loaded to draw them); the rbf gamma is ``gamma_factor``
    times the data set's own (its paper's, or the "scale" rule's). For
    ``method='SVC'``, ``C = 1 / (alpha n)``. ``method`` may also be one of
    the paper's margin Perceptrons, ``'MP+stop'`` or ``'MP+random'``
    (two classes), which update when the margin is at most ``beta``.

    Returns
    -------
    mean, std : float
        Test accuracy (%) over the runs, as in the table.
    """
    names = list(DATASETS)
    rng = check_random_state(seed)
    for other in names[: names.index(name) + 1]:
        splits = _splits(other, _load(other, data_home), 5, False, rng)
    gamma = _gamma(name, splits[0][0]) * gamma_factor
    n_runs = 1 if method == "SVC" and DATASETS[name]["split"] is None else len(splits)
    acc = []
    for r in range(n_runs):
        if method == "SVC":
            value = 1.0 / (alpha * splits[r][0].shape[0])
        else:
            value = beta if method in MARGIN_METHODS else alpha
        acc.append(_one_pass(method, budget, gamma, value, seed + r, *splits[r])["accuracy"])
    mean, std = _mean_std(acc)
    return float(mean), float(std)


def run(name, quick, out, n_jobs, seed, data_home, progress):
    """Run the experiment; return the table lines, figures, runs and settings."""
    names = list(DATASETS)
    # All data first: a missing or damaged file fails before any run.
    data = {name: _load(name, data_home) for name in names}
    n_runs = 1 if quick else 5
    budgets = (50, 100) if quick else BUDGETS
    grid = (1e-4, 1e-3) if quick else ALPHA_GRID
    rng = check_random_state(seed)
    splits = {name: _splits(name, data[name], n_runs, quick, rng) for name in names}
    gamma0 = {name: _gamma(name, splits[name][0][0]) for name in names}
    n_folds = 1 if quick else 3
    factors = (1, 4) if quick else GAMMA_FACTORS
    factor, alpha, validation = _choose(
        names, splits, gamma0, budgets[0], grid, factors, n_folds, seed, n_jobs
    )
    # The width of each BSGD maintenance, and merging's for the other learners.
    gamma = {
        name: {m: gamma0[name] * factor[name].get(m, factor[name]["BSGD merging"]) for m in
               (*METHODS, "SVC")}
        for name in names
    }  # fmt: skip
    keys, tasks = [], []
    for name in names:
        n_train = splits[name][0][0].shape[0]
        C = 1.0 / (alpha[name]["SVC"] * n_train)
        # The SVC does not depend on the order: one fit per distinct split.
        svc_runs = 1 if DATASETS[name]["split"] is None else n_runs
        for r in range(svc_runs):
            keys.append((f"{name}: SVC", None, r))
            tasks.append(
                delayed(_one_pass)("SVC", None, gamma[name]["SVC"], C, 0, *splits[name][r])
            )
        for method in METHODS:
            # Stoptron, RBP and Projectron++ take no alpha.
            a = alpha[name].get(method, alpha[name]["BSGD merging"])
            for B in budgets:
                for r in range(n_runs):
                    keys.append((f"{name}: {method}", B, r))
                    tasks.append(
                        delayed(_one_pass)(method, B, gamma[name][method], a, seed + r,
                                           *splits[name][r])
                    )  # fmt: skip
    runs = _parallel(keys, tasks, n_jobs, progress, "run", "B")
    settings = {
        "budgets": list(budgets),
        "n_runs": n_runs,
        "alpha_grid": list(grid),
        "gamma_factors": list(factors),
        "n_folds": n_folds,
        "datasets": {
            name: {
                "n_train": int(splits[name][0][0].shape[0]),
                "n_test": int(splits[name][0][2].shape[0]),
                "gamma": gamma[name]["BSGD merging"],
                "gamma_factor": factor[name],
                "gamma_source": DATASETS[name].get("gamma_source", _width_source(factor[name])),
                "alpha": alpha[name],
                "validation": validation[name],
                "C": 1.0 / (alpha[name]["SVC"] * splits[name][0][0].shape[0]),
            }
            for name in names
        },
    }
    lines = _table(names, budgets, runs, settings, quick)
    figures = _figure(out, names, budgets, runs)
    return lines, figures, runs, settings


def output_files(name):
    """The names of the PNG figures the experiment writes."""
    return [f"{NAME}.png"]
