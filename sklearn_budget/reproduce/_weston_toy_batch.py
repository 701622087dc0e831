"""Epochs to convergence on nonlinear 2-D toy data (Weston, Bordes and
Bottou, 2005, Fig. 8): ``weston-toy-batch``.

The Perceptron and the two budget rules, played until an epoch makes no
update, against the hard-margin SVM and two kinds of Kernel Matching
Pursuit.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np
from joblib import delayed
from sklearn.svm import SVC
from sklearn.utils import check_random_state

from .._budget_perceptron import BudgetPerceptron, TighterBudgetPerceptron
from .._matching_pursuit import KernelMatchingPursuit
from .._perceptron import KernelPerceptron
from ._common import _claims_table, _parallel, _pyplot, _range_cell, _save_figure

# The paper follows Vincent and Bengio's 2-D illustration without giving the
# data. Our reading: TOY_BATCH["n_train"] points uniform on [-1, 1]^2,
# labelled by the side of the curve x2 = 0.5 sin(pi x1), with the points
# closer than TOY_BATCH["gap"] (vertically) to it left out so that the data
# are separable; a Gaussian kernel exp(-gamma ||x - x'||^2). The online rules
# replay the data in a fixed order until an epoch makes no update.

TOY_BATCH = dict(
    n_train=100, gap=0.1, gamma=1.0, svc_C=1e6, budget=10, max_epochs=100, n_runs=20,
    kmp_basic_steps=400, kmp_max=60, narrow=(1.0, 2.0, 4.0, 8.0),
)  # fmt: skip


def make_toy_batch(n_samples, gap=0.1, random_state=None):
    """Separable 2-D data on either side of the curve x2 = 0.5 sin(pi x1)."""
    rng = check_random_state(random_state)
    X = np.empty((0, 2))
    while X.shape[0] < n_samples:
        cand = rng.uniform(-1.0, 1.0, (2 * n_samples, 2))
        keep = np.abs(_toy_batch_offset(cand)) >= gap
        X = np.vstack([X, cand[keep]])
    X = X[:n_samples]
    return X, np.where(_toy_batch_offset(X) > 0, 1, -1)


def _toy_batch_offset(X):
    return X[:, 1] - 0.5 * np.sin(np.pi * X[:, 0])


def _train_error(est, X, y):
    return 100.0 * np.mean(est.predict(X) != y)


def _toy_batch_fit(alg, spec, X, y):
    """Fit one algorithm; returns the estimator and its record."""
    gamma = spec["gamma"]
    rec = {"epochs": None, "converged": None, "gamma": gamma}
    if alg == "SVC":
        est = SVC(C=spec["svc_C"], gamma=gamma).fit(X, y)
        sv = est.support_
    elif alg.startswith("KMP"):
        method = alg.split()[1]
        rec["epochs"] = None
        if method == "backfitting":
            # The smallest number of steps with zero training error: the
            # greedy path does not depend on the number of steps asked for.
            for k in range(1, spec["kmp_max"] + 1):
                est = KernelMatchingPursuit(budget=k, method=method, gamma=gamma).fit(X, y)
                if _train_error(est, X, y) == 0:
                    break
        else:
            rec["first_zero"] = None
            # The paper reports basic KMP after 400 steps; its training error
            # is not monotone in the steps, so the steps with zero error are
            # looked for on a grid of every 10 steps only (for the cost).
            for k in range(10, spec["kmp_basic_steps"], 10):
                est = KernelMatchingPursuit(budget=k, method=method, gamma=gamma).fit(X, y)
                if _train_error(est, X, y) == 0:
                    rec["first_zero"] = k
                    break
            est = KernelMatchingPursuit(
                budget=spec["kmp_basic_steps"], method=method, gamma=gamma
            ).fit(X, y)
        rec["epochs"] = int(est.n_iter_)  # greedy steps
        rec["converged"] = _train_error(est, X, y) == 0
        sv = est.support_
    else:
        # Multi-epoch training; a rule that does not converge is retried with
        # a narrower kernel, as the paper did for the Budget Perceptron.
        for factor in spec["narrow"] if alg != "Perceptron" else (1.0,):
            common = dict(gamma=gamma * factor, max_iter=spec["max_epochs"], tol=None,
                          shuffle=False, average=False)  # fmt: skip
            if alg == "Perceptron":
                est = KernelPerceptron(**common)
            elif alg == "Budget":
                est = BudgetPerceptron(budget=spec["budget"], beta=0.0, **common)
            else:
                est = TighterBudgetPerceptron(budget=spec["budget"], beta=0.0, error_set="all",
                                              **common)  # fmt: skip
            est.fit(X, y)
            converged = _train_error(est, X, y) == 0 and est.n_iter_ < spec["max_epochs"]
            if converged:
                break
        # The last epoch of a converged fit only checks: it makes no update.
        rec.update(epochs=int(est.n_iter_) - 1 if converged else int(est.n_iter_),
                   converged=bool(converged), gamma=gamma * factor)  # fmt: skip
        sv = est.support_
    rec.update(
        error=_train_error(est, X, y),
        support=len(sv),
        sv=np.asarray(sv),
        # How far the chosen examples are from the true boundary (vertically).
        distance=float(np.mean(np.abs(_toy_batch_offset(X[sv])))) if len(sv) else 0.0,
    )
    return est, rec


TOY_BATCH_ALGS = ("Perceptron", "Budget", "Tighter", "SVC", "KMP basic", "KMP backfitting")


def _toy_batch_run(alg, spec, X, y, keep):
    tic = time.perf_counter()
    est, rec = _toy_batch_fit(alg, spec, X, y)
    rec["seconds"] = time.perf_counter() - tic
    if keep:
        rec["_estimator"] = est  # for the figure; not part of the records
    return rec


def _run_toy_batch(quick, out, n_jobs, seed, progress):
    spec = dict(TOY_BATCH)
    if quick:
        spec.update(n_runs=1, max_epochs=20, kmp_basic_steps=100, kmp_max=30, narrow=(1.0, 4.0))
    rng = check_random_state(seed)
    draws = [make_toy_batch(spec["n_train"], spec["gap"], rng) for _ in range(spec["n_runs"])]
    keys, tasks = [], []
    # The Tighter rule first: the costliest.
    for alg in ("Tighter", *[a for a in TOY_BATCH_ALGS if a != "Tighter"]):
        for r, (X, y) in enumerate(draws):
            keys.append((alg, None, r))
            tasks.append(delayed(_toy_batch_run)(alg, spec, X, y, r == 0))
    runs = _parallel(keys, tasks, n_jobs, progress, "draw", "p")
    models = {alg: runs[(alg, None)][0].pop("_estimator") for alg in TOY_BATCH_ALGS}
    lines = _toy_batch_table(spec, runs)
    figures = _toy_batch_figure(out, spec, draws[0], models, runs)
    settings = {key: (list(val) if isinstance(val, tuple) else val) for key, val in spec.items()}
    return lines, figures, runs, settings


_BATCH_LABELS = {
    "Perceptron": "Perceptron",
    "Budget": "Budget Perceptron (p = 10)",
    "Tighter": "Tighter Budget Perceptron (p = 10)",
    "SVC": "SVM (hard margin)",
    "KMP basic": "basic KMP",
    "KMP backfitting": "backfitting KMP",
}

# Fig. 8 and Sec. 4.2: epochs (greedy steps for KMP), support size, and
# whether the training error reaches zero.
PAPER_TOY_BATCH = {
    "Perceptron": "14 epochs, 19 SVs, separates",
    "Budget": "26 epochs, 10 SVs, separates (with a narrower kernel)",
    "Tighter": "22 epochs, 10 SVs, separates",
    "SVC": "10 SVs",
    "KMP basic": "> 400 steps, 37 SVs, training error not zero",
    "KMP backfitting": "as sparse as the SVM (10 SVs)",
}


def _toy_batch_table(spec, runs):
    first = {alg: runs[(alg, None)][0] for alg in TOY_BATCH_ALGS}
    lines = [
        "## The first draw (the figure)",
        "",
        f"{spec['n_train']} points uniform on [-1, 1]^2, labelled by the side of x2 = 0.5 "
        f"sin(pi x1), none closer than {spec['gap']} to it; Gaussian kernel gamma = "
        f"{spec['gamma']:g}; the online rules replay the data in one fixed order (beta = 0) "
        f"for at most {spec['max_epochs']} epochs, until an epoch makes no update; the "
        "Tighter rule evaluates removals on every round played (all epochs). A budget "
        "rule that does not converge is retried with gamma multiplied by "
        f"{', '.join(f'{w:g}' for w in spec['narrow'][1:])} (a narrower kernel), as the "
        "paper did for the Budget Perceptron; the epochs are those of the last width "
        "tried. KMP: backfitting, the first number of greedy "
        f"steps (at most {spec['kmp_max']}) with zero training error; basic, "
        f"{spec['kmp_basic_steps']} steps (the paper's 400).",
        "",
        "| algorithm | epochs (KMP: steps) | support size | training error % | gamma "
        "| mean distance of the SVs to the boundary | paper (Fig. 8) |",
        "|---|---|---|---|---|---|---|",
    ]
    for alg in TOY_BATCH_ALGS:
        r = first[alg]
        epochs = "-" if r["epochs"] is None else str(r["epochs"])
        if r["converged"] is False:
            epochs += " (not converged)"
        lines.append(
            f"| {_BATCH_LABELS[alg]} | {epochs} | {r['support']} | {r['error']:.1f} "
            f"| {r['gamma']:g} | {r['distance']:.3f} | {PAPER_TOY_BATCH[alg]} |"
        )
    n = len(runs[("SVC", None)])
    lines += [
        "",
        f"The data points are at a mean distance of about {_mean_distance(spec):.2f} from "
        "the boundary (at least the gap).",
        "",
        f"## Over {n} draws of the data",
        "",
        "| algorithm | converged (zero training error) | epochs or steps, mean [min, max] "
        "| support size, mean [min, max] | training error %, mean | kernel narrowed |",
        "|---|---|---|---|---|---|",
    ]
    for alg in TOY_BATCH_ALGS:
        res = runs[(alg, None)]
        conv = [r["converged"] for r in res]
        epochs = [r["epochs"] for r in res if r["epochs"] is not None and r["converged"]]
        narrowed = sum(r["gamma"] != spec["gamma"] for r in res)
        lines.append(
            f"| {_BATCH_LABELS[alg]} | "
            + ("-" if conv[0] is None else f"{sum(conv)} of {n}")
            + f" | {_range_cell(epochs, '.1f') if epochs else '-'} "
            f"| {_range_cell([r['support'] for r in res], '.1f')} "
            f"| {np.mean([r['error'] for r in res]):.2f} | {narrowed} of {n} |"
        )
    lines += ["", "## The paper's claims (first draw)", ""]
    lines += _claims_table(_toy_batch_claims(first, runs))
    return lines


def _mean_distance(spec):
    # Uniform points with |offset| >= gap: a quick Monte Carlo, fixed seed.
    X, _ = make_toy_batch(20000, spec["gap"], 0)
    return float(np.mean(np.abs(_toy_batch_offset(X))))


def _toy_batch_claims(first, runs):
    p, b, t = first["Perceptron"], first["Budget"], first["Tighter"]
    svc, basic, back = first["SVC"], first["KMP basic"], first["KMP backfitting"]
    online = [first[a]["distance"] for a in ("Perceptron", "Budget", "Tighter", "SVC")]
    return [
        ("The Perceptron is not as sparse as the SVM: 19 SVs (SVM: 10), 14 epochs",
         f"{p['support']} SVs (SVM: {svc['support']}), {p['epochs']} epochs",
         p["support"] > svc["support"]),
        ("The Tighter Budget Perceptron separates the data with 10 SVs (22 epochs)",
         f"{'separates' if t['converged'] else 'does not separate'} with {t['support']} SVs "
         f"in {t['epochs']} epochs (gamma {t['gamma']:g})",
         bool(t["converged"]) and t["gamma"] == first["SVC"]["gamma"]),
        ("The Budget Perceptron separates with 10 SVs (26 epochs) after narrowing the kernel",
         f"{'separates' if b['converged'] else 'does not separate'} with {b['support']} SVs "
         f"in {b['epochs']} epochs (gamma {b['gamma']:g})",
         bool(b["converged"])),
        ("Backfitting KMP is as sparse as the SVM",
         f"zero training error with {back['support']} SVs (SVM: {svc['support']})",
         bool(back["converged"]) and back["support"] <= svc["support"] + 1),
        ("Basic KMP has not reached zero error after 400 steps, with 37 SVs",
         f"training error {basic['error']:.1f}% after {basic['epochs']} steps, "
         f"{basic['support']} SVs; zero error "
         + ("never seen" if basic["first_zero"] is None else
            f"first seen after {basic['first_zero']} steps")
         + " (checked every 10 steps)",
         not basic["converged"] and basic["first_zero"] is None),
        ("All the algorithms but KMP choose SVs close to the margin",
         f"mean distance to the boundary: {max(online):.3f} at most for the Perceptrons and "
         f"the SVM; KMP basic {basic['distance']:.3f}, backfitting {back['distance']:.3f}",
         max(online) < min(basic["distance"], back["distance"])),
    ]  # fmt: skip


def _toy_batch_figure(out, spec, draw, models, runs):
    """Decision surfaces of the first draw, the chosen examples squared."""
    plt = _pyplot()
    if plt is None:
        return []
    X, y = draw
    fig, axes = plt.subplots(2, 3, figsize=(13.5, 9))
    g = np.linspace(-1.05, 1.05, 161)
    G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    for ax, alg in zip(axes.ravel(), TOY_BATCH_ALGS):
        est, rec = models[alg], runs[(alg, None)][0]
        f = est.decision_function(G).reshape(g.size, g.size)
        ax.contourf(g, g, f > 0, levels=[-0.5, 0.5, 1.5], colors=["#dde6f3", "#f6dddd"])
        ax.contour(g, g, f, levels=[0.0], colors="k", linewidths=1.5)
        ax.plot(g, 0.5 * np.sin(np.pi * g), color="0.5", linestyle="--", linewidth=1)
        for label, color in ((-1, "C0"), (1, "C3")):
            m = y == label
            ax.scatter(X[m, 0], X[m, 1], s=14, color=color, linewidth=0)
        sv = rec["sv"]
        ax.scatter(X[sv, 0], X[sv, 1], s=90, marker="s", facecolors="none", edgecolors="k",
                   linewidths=1.2)  # fmt: skip
        what = "steps" if alg.startswith("KMP") else "epochs"
        detail = "" if rec["epochs"] is None else f", {rec['epochs']} {what}"
        if rec["gamma"] != spec["gamma"]:
            detail += f", gamma {rec['gamma']:g}"
        ax.set_title(f"{_BATCH_LABELS[alg]}\n{rec['support']} SVs{detail}, "
                     f"error {rec['error']:.0f}%", fontsize="small")  # fmt: skip
        ax.set_xlim(-1.05, 1.05)
        ax.set_ylim(-1.05, 1.05)
    fig.suptitle(
        "Nonlinear 2-D data, Gaussian kernel: decision surface (black), true boundary "
        "(dashed), chosen examples (squares)",
        fontsize="medium",
    )
    return [_save_figure(plt, fig, out, "weston-toy-batch.png")]
