"""The experiments of Orabona, Keshet and Caputo (2008), "The Projectron".

- ``projectron-synthetic``: Table 3 (the synthetic set of two Gaussians)
  and Figs. 1-3 for it.
- ``projectron-adult``: Table 1 and Figs. 1-3 (Adult, the a9a version).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from joblib import delayed
from sklearn.utils import check_random_state

from .._forgetron import Forgetron
from .._passive_aggressive import KernelPassiveAggressive
from .._perceptron import KernelPerceptron, Stoptron
from .._projectron import Projectron, ProjectronPlusPlus
from .._random_budget import RandomizedBudgetPerceptron
from ..datasets import fetch_a9a, make_two_gaussians
from ._common import (
    _mean_std,
    _online_run,
    _parallel,
    _pyplot,
    _save_figure,
    _verdict,
    forgetron_U,
)

# Orabona, Keshet and Caputo (2008), Tables 1 and 3: online mistakes in % of
# the rounds and support size, mean and std over 5 permutations.
PAPER_PROJECTRON = {
    "projectron-adult": {
        ("Perceptron", None): (20.99, 0.06, 6835.6, 20.28),
        ("PA-I", None): (18.11, 0.10, 12537.0, 36.2),
        ("Projectron", 1500): (20.95, 0.12, 1094.6, 16.06),
        ("Projectron++", 1500): (20.04, 0.14, 992.8, 9.73),
        ("Forgetron", 1500): (21.90, 0.23, 1500, 0),
        ("RBP", 1500): (22.05, 0.21, 1500, 0),
        ("Stoptron", 1500): (22.73, 2.82, 1500, 0),
        ("Projectron", 3000): (20.97, 0.13, 1499.6, 13.58),
        ("Projectron++", 3000): (20.16, 0.11, 1364.2, 4.76),
        ("Forgetron", 3000): (21.41, 0.13, 3000, 0),
        ("RBP", 3000): (21.49, 0.11, 3000, 0),
        ("Stoptron", 3000): (21.04, 1.54, 3000, 0),
    },
    "projectron-synthetic": {
        ("Perceptron", None): (18.80, 0.25, 1880.0, 25.12),
        ("PA-I", None): (12.58, 0.05, 3986.8, 42.83),
        ("Projectron", 1000): (18.71, 0.14, 108.6, 2.97),
        ("Projectron++", 1000): (14.09, 0.10, 104.2, 2.39),
        ("Forgetron", 1000): (18.96, 0.32, 1000, 0),
        ("RBP", 1000): (18.86, 0.29, 1000, 0),
        ("Stoptron", 1000): (17.49, 1.77, 1000, 0),
        ("Projectron", 500): (18.70, 0.21, 98.6, 3.05),
        ("Projectron++", 500): (14.23, 0.10, 98.6, 2.30),
        ("Forgetron", 500): (19.20, 0.19, 500, 0),
        ("RBP", 500): (19.27, 0.20, 500, 0),
        ("Stoptron", 500): (21.96, 4.62, 500, 0),
    },
}

# Known reasons for the differences from the papers, measured with this
# package (the commands are in the closing notes of the project's issues).
NOTES = {
    "projectron-synthetic": (
        "Measured with --random-state 0. The unbounded Perceptron and PA-I are 0.5 to 0.7 "
        "points above the paper too, so the common offset of the Perceptron-like rows is "
        "the draw of the synthetic set, not the algorithms: over 20 draws (random_state 0 "
        "to 19) the Perceptron's online error ranges from 18.41% to 19.98%. Projectron++ "
        "is below the paper because its margin-error step follows the journal version of "
        "the paper (tau capped so that the progress beta_t of Eq. 16 stays >= 0) where the "
        "conference paper skips the round when beta_t < 0; with the skip rule it makes "
        "13.98 ± 0.16% (B = 1000) and 14.07 ± 0.08% (B = 500) mistakes on the same "
        "permutations, close to the paper's 14.09% and 14.23%."
    ),
    "projectron-adult": (
        "Measured with --random-state 0. Projectron++ makes about 0.9 points fewer mistakes "
        "than the paper, with a smaller support set. Its margin-error step follows the "
        "journal version of the paper (tau capped so that the progress beta_t of Eq. 16 "
        "stays >= 0), where the conference paper skips the round when beta_t < 0. With the "
        "skip rule, on the same permutations, it makes 19.69 ± 0.14% mistakes with "
        "953.6 ± 8.0 members at B = 1500 and 19.87 ± 0.12% with 1328.6 ± 15.7 at B = 3000."
    ),
}

BOUNDED = ("Projectron", "Projectron++", "Forgetron", "RBP", "Stoptron")


def _projectron_estimator(name, budget, gamma, seed):
    if name == "Perceptron":
        return KernelPerceptron(gamma=gamma, average=False)
    if name == "PA-I":
        # C = 1 so that PA-I's step is at most the Perceptron's (Sec. 5).
        return KernelPassiveAggressive(C=1.0, loss="hinge", gamma=gamma)
    if name == "Projectron":
        return Projectron(eta="adaptive", U=forgetron_U(budget), budget=None, gamma=gamma)
    if name == "Projectron++":
        return ProjectronPlusPlus(eta="adaptive", U=forgetron_U(budget), budget=None, gamma=gamma)
    if name == "Forgetron":
        return Forgetron(budget=budget, gamma=gamma, average=False)
    if name == "RBP":
        return RandomizedBudgetPerceptron(
            budget=budget, gamma=gamma, average=False, random_state=seed
        )
    return Stoptron(budget=budget, gamma=gamma, average=False)


def _projectron_experiment(X, y, *, gamma, budgets, n_permutations, seed, n_jobs, progress):
    rows = [("Perceptron", None), ("PA-I", None)]
    rows += [(alg, B) for B in budgets for alg in BOUNDED]
    n = X.shape[0]
    rng = check_random_state(seed)
    orders = [rng.permutation(n) for _ in range(n_permutations)]
    # About 100 points per curve.
    checkpoints = np.unique(np.linspace(0, n, 101).astype(int)[1:])
    keys = [(alg, B, p) for alg, B in rows for p in range(n_permutations)]
    tasks = [
        delayed(_online_run)(
            _projectron_estimator(alg, B, gamma, seed + p), X, y, orders[p], checkpoints
        )
        for alg, B, p in keys
    ]
    runs = _parallel(keys, tasks, n_jobs, progress, "permutation", "B")
    return rows, runs, checkpoints


def _projectron_table(title, rows, runs, n, paper=None):
    """The table of one experiment; ``paper`` (None for quick runs) adds the
    paper's numbers and a verdict to each row."""
    lines = [f"## {title}", ""]
    if paper is not None:
        lines += [
            # |S| escaped: a bare "|" would split the cell.
            r"| algorithm | B | mistakes % (ours) | mistakes % (paper) | \|S\| (ours) "
            r"| \|S\| (paper) | mistakes: ours vs paper |",
            "|---|---|---|---|---|---|---|",
        ]
    else:
        lines += [
            r"| algorithm | B | mistakes % | \|S\| | seconds per run |",
            "|---|---|---|---|---|",
        ]
    for alg, B in rows:
        res = runs[(alg, B)]
        m, ms = _mean_std([100.0 * r["mistakes"][-1] / n for r in res])
        s, ss = _mean_std([r["support"][-1] for r in res])
        b = "-" if B is None else str(B)
        if paper is not None:
            pm, pms, ps, pss = paper[(alg, B)]
            lines.append(
                f"| {alg} | {b} | {m:.2f} ± {ms:.2f} | {pm:.2f} ± {pms:.2f} "
                f"| {s:.1f} ± {ss:.1f} | {ps:.1f} ± {pss:.1f} | {_verdict(m, ms, pm, pms)} |"
            )
        else:
            t = np.mean([r["seconds"] for r in res])
            lines.append(f"| {alg} | {b} | {m:.2f} ± {ms:.2f} | {s:.1f} ± {ss:.1f} | {t:.2f} |")
    return lines


# Figs. 1-3 of the Projectron paper: file name stem, x and y axis labels, and
# which axes are logarithmic. Support sizes span decades (the Projectrons
# stay near 100 while PA-I passes 4000): on a linear axis the Projectron
# curves are flat lines or vertical strokes at the left edge.
PROJECTRON_FIGURES = (
    ("fig1_error_vs_rounds", "number of samples", "average online error (%)", ""),
    ("fig2_support_vs_rounds", "number of samples", "size of the support set", "y"),
    ("fig3_error_vs_support", "size of the support set", "average online error (%)", "x"),
)

# The budget rules play the Perceptron until |S| = B, and then all keep B
# members: their curves coincide there. Distinct line styles, and markers at
# different rounds (``phase``, a fraction of the spacing between markers),
# keep each of them visible where they overlap.
_PROJECTRON_STYLES = {
    "Perceptron": dict(color="C0", linestyle="-", marker=None, phase=0),
    "PA-I": dict(color="C1", linestyle="-", marker=None, phase=0),
    "Projectron": dict(color="C2", linestyle="-", marker="o", phase=0),
    "Projectron++": dict(color="C3", linestyle="-", marker="D", phase=1 / 2),
    "Forgetron": dict(color="C4", linestyle="--", marker="v", phase=0),
    "RBP": dict(color="C5", linestyle="-.", marker="^", phase=1 / 3),
    "Stoptron": dict(color="C6", linestyle=":", marker="s", phase=2 / 3),
}


# The rules that keep exactly B members once the budget is full.
_FIXED_SIZE = ("Forgetron", "RBP", "Stoptron")
# Fig. 1's lower panels: the rules whose error stays within a point or two of
# the Perceptron's, where their curves and the Perceptron's overlap.
_NEAR_PERCEPTRON = ("Projectron", "Forgetron", "RBP", "Stoptron")
# Fig. 3: the final points of the fixed-size rules all sit at |S| = B; they
# are drawn side by side around it (factors of B, on the log axis).
_FINAL_OFFSET = {"Forgetron": 0.82, "RBP": 1.0, "Stoptron": 1.22}

_PAPER_FIGURES = {
    "fig1_error_vs_rounds": "Fig. 1",
    "fig2_support_vs_rounds": "Fig. 2",
    "fig3_error_vs_support": "Fig. 3",
}


def _projectron_figures(out, prefix, dataset, rows, runs, checkpoints, budgets):
    """Figs. 1-3 of the Projectron paper, one panel per budget of the table:
    online error and support size against rounds, and online error against
    support size. Curves are means over the permutations, with a band of one
    standard deviation either side.

    The paper draws them for Adult at B = 1500; the figure's title says which
    of them each file is. The budget rules are the Perceptron until their
    budget is full, so their curves overlap it: the Perceptron is drawn as a
    wide pale line under the others, Fig. 1 has a lower row with each rule's
    error minus the Perceptron's on the same permutations, and Fig. 3 shows
    the fixed-size rules' final errors side by side at ``|S| = B``.
    """
    plt = _pyplot()
    if plt is None:
        return []
    curves, errors = {}, {}
    for key in rows:
        err = 100.0 * np.array([r["mistakes"] for r in runs[key]]) / checkpoints
        sup = np.array([r["support"] for r in runs[key]], dtype=float)
        errors[key] = err
        curves[key] = (err.mean(axis=0), err.std(axis=0), sup.mean(axis=0), sup.std(axis=0))
    n_perm = len(runs[rows[0]])
    # Markers at about 10 points of each curve.
    every = max(1, len(checkpoints) // 10)
    paths = []
    for i, (stem, xlabel, ylabel, log) in enumerate(PROJECTRON_FIGURES):
        n_rows = 2 if i == 0 else 1
        fig, axes = plt.subplots(
            n_rows, len(budgets), figsize=(1.6 + 4.8 * len(budgets), 4.6 + 3.0 * (n_rows - 1)),
            sharey="row", sharex=i == 0, squeeze=False,
            gridspec_kw={"height_ratios": [5, 3][:n_rows]},
        )  # fmt: skip
        for col, budget in enumerate(budgets):
            ax = axes[0, col]
            keys = [(alg, B) for alg, B in rows if B in (None, budget)]
            finals = []
            for key in keys:
                err, err_std, sup, sup_std = curves[key]
                x = sup if i == 2 else checkpoints
                y, spread = (sup, sup_std) if i == 1 else (err, err_std)
                style = dict(_PROJECTRON_STYLES[key[0]])
                style["markevery"] = (int(style.pop("phase") * every), every)
                if key[0] == "Perceptron":
                    # Wide and pale, under the curves that coincide with it.
                    style.update(linewidth=6, alpha=0.35, zorder=1)
                else:
                    style.update(linewidth=1.5, zorder=2)
                if i == 2 and key[0] in _FIXED_SIZE:
                    # Until the budget is full (then the Perceptron's curve);
                    # the error at |S| = B is the marker beside B.
                    full = np.flatnonzero(sup >= budget - 0.5)
                    stop = full[0] + 1 if full.size else len(x)
                    x, y, spread = x[:stop], y[:stop], spread[:stop]
                    xf = budget * _FINAL_OFFSET[key[0]]
                    ax.errorbar([xf], [err[-1]], yerr=[err_std[-1]], color=style["color"],
                                marker=style["marker"], markersize=7, capsize=3, zorder=3,
                                linestyle="none")  # fmt: skip
                    finals.append(f"{key[0]} {err[-1]:.2f}")
                ax.plot(x, y, label=key[0], markersize=4, **style)
                ax.fill_between(x, y - spread, y + spread, color=style["color"], alpha=0.2,
                                linewidth=0)  # fmt: skip
            if finals:
                ax.text(0.98, 0.98, "final error % at |S| = B:\n" + "\n".join(finals),
                        transform=ax.transAxes, ha="right", va="top", fontsize="small",
                        bbox=dict(facecolor="white", alpha=0.8, edgecolor="0.7"))  # fmt: skip
            if "x" in log:
                ax.set_xscale("log")
            if "y" in log:
                ax.set_yscale("log")
            ax.set_title(f"B = {budget}")
            ax.grid(alpha=0.3, which="both")
            if n_rows == 2:
                _difference_panel(axes[1, col], keys, errors, checkpoints, every)
            axes[-1, col].set_xlabel(xlabel)
        axes[0, 0].set_ylabel(ylabel)
        if n_rows == 2:
            axes[1, 0].set_ylabel("minus the Perceptron's (points)")
        # Beside the panels, where it covers no curve.
        axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize="small")
        fig.suptitle(
            f"Projectron paper, {_PAPER_FIGURES[stem]} (the paper: Adult, B = 1500), on "
            f"{dataset}: mean over {n_perm} permutations, band: ± 1 std;\n"
            "the budget rules play the Perceptron (wide pale line) until |S| = B",
            fontsize="medium",
        )
        paths.append(_save_figure(plt, fig, out, f"{prefix}_{stem}.png"))
    return paths


def _difference_panel(ax, keys, errors, checkpoints, every):
    """Online error minus the Perceptron's on the same permutations."""
    perceptron = errors[("Perceptron", None)]
    ax.axhline(0.0, color=_PROJECTRON_STYLES["Perceptron"]["color"], linewidth=6, alpha=0.35)
    for key in keys:
        if key[0] not in _NEAR_PERCEPTRON:
            continue
        diff = errors[key] - perceptron
        mean, std = diff.mean(axis=0), diff.std(axis=0)
        style = dict(_PROJECTRON_STYLES[key[0]])
        style["markevery"] = (int(style.pop("phase") * every), every)
        ax.plot(checkpoints, mean, linewidth=1.5, markersize=4, **style)
        ax.fill_between(checkpoints, mean - std, mean + std, color=style["color"], alpha=0.15,
                        linewidth=0)  # fmt: skip
    ax.grid(alpha=0.3)


def _run_projectron(name, quick, out, n_jobs, seed, data_home, prog):
    if name == "projectron-synthetic":
        # sigma^2 = 0.5, so gamma = 1 / (2 sigma^2) = 1.
        n = 2000 if quick else 10000
        X, y = make_two_gaussians(n, random_state=seed)
        gamma, budgets, dataset = 1.0, (1000, 500), "synthetic"
        if quick:
            budgets = (200, 100)
    else:
        # a9a's 32561 training rows, sigma^2 = 25: gamma = 0.02.
        X, y = fetch_a9a(subset="train", data_home=data_home, return_X_y=True)
        X = X.toarray()  # 123 binary features: dense rows are faster here
        gamma, budgets, dataset = 0.02, (1500, 3000), "Adult (a9a)"
        if quick:
            X, y = X[:3000], y[:3000]
            budgets = (150, 300)
    n_perm = 2 if quick else 5
    rows, runs, checkpoints = _projectron_experiment(
        X, y, gamma=gamma, budgets=budgets, n_permutations=n_perm, seed=seed,
        n_jobs=n_jobs, progress=prog,
    )  # fmt: skip
    title = (
        f"{dataset}: {X.shape[0]} rounds, RBF gamma = {gamma:g}, {n_perm} permutations; "
        "online mistakes in % of the rounds and final support size, mean ± std"
    )
    paper = None if quick else PAPER_PROJECTRON[name]
    lines = _projectron_table(title, rows, runs, X.shape[0], paper)
    if not quick:
        lines += [
            "",
            '"agrees": the means differ by less than twice the combined std of the '
            "two columns. U = sqrt((B + 1) / log(B + 1)) / 4 for the Projectrons.",
        ]
        if seed == 0:
            lines += ["", NOTES[name]]
    figures = _projectron_figures(out, name, dataset, rows, runs, checkpoints, budgets)
    settings = {
        "dataset": dataset,
        "gamma": gamma,
        "budgets": list(budgets),
        "n_permutations": n_perm,
        "n_rounds": X.shape[0],
        "checkpoints": checkpoints.tolist(),
    }
    return lines, figures, runs, settings


def run(name, quick, out, n_jobs, seed, data_home, progress):
    """Run one experiment; return the table lines, figures, runs and settings."""
    return _run_projectron(name, quick, out, n_jobs, seed, data_home, progress)


def output_files(name):
    """The names of the PNG figures experiment ``name`` writes."""
    return [f"{name}_{stem}.png" for stem, *_ in PROJECTRON_FIGURES]
