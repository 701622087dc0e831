"""The Tighter Budget Perceptron with up to 10 epochs on USPS, digit 0
against the rest (Weston, Bordes and Bottou, 2005, the multi-epoch curve
of Fig. 9): ``weston-usps-epochs``.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np
from joblib import delayed

from .._budget_perceptron import TighterBudgetPerceptron
from .._perceptron import KernelPerceptron
from ._common import _claims_table, _errors_of, _parallel, _pyplot, _range_cell, _save_figure
from ._weston_cache import WESTON, _weston_splits

# The grid goes on to 150: the Perceptron keeps about 140 members after
# several epochs (about 100 after one).
USPS_EPOCHS = dict(grid=(10, 20, 35, 50, 85, 120, 150), max_epochs=10)


def _usps_epochs_run(kind, p, epochs, gamma, seed, Xtr, ytr, Xte, yte):
    tic = time.perf_counter()
    common = dict(gamma=gamma, max_iter=epochs, tol=None, shuffle=True, random_state=seed,
                  average=False)  # fmt: skip
    if kind == "Perceptron":
        est = KernelPerceptron(**common)
    elif epochs == 1:
        # Fig. 3 as stated, as in weston-usps: every example seen so far.
        est = TighterBudgetPerceptron(budget=p, beta=0.0, error_set="all", **common)
    else:
        # A reservoir of as many rounds as there are training rows: in the
        # first epoch it holds every round seen, exactly as 'all'; afterwards
        # a uniform sample of the rounds played, so that later epochs cost no
        # more than the first (with 'all', the set and the kernel values
        # cached with it would grow to max_epochs times the training set).
        est = TighterBudgetPerceptron(budget=p, beta=0.0, error_set="random",
                                      error_set_size=Xtr.shape[0], **common)  # fmt: skip
    if epochs == 1:
        # One pass in the run's own order, as weston-usps.
        est.partial_fit(Xtr, ytr, classes=[-1, 1])
        n_epochs, converged = 1, False
    else:
        est.fit(Xtr, ytr)
        n_epochs = int(est.n_iter_)
        converged = n_epochs < epochs or est.score(Xtr, ytr) == 1.0
    return {
        "error": 100.0 * (1.0 - est.score(Xte, yte)),
        "support": len(est.support_),
        "epochs": n_epochs,
        "converged": bool(converged),
        "seconds": time.perf_counter() - tic,
    }


def _run_usps_epochs(quick, out, n_jobs, seed, data_home, progress):
    spec = dict(WESTON["weston-usps"], **USPS_EPOCHS)
    if quick:
        spec.update(n_runs=2, grid=(10, 60), max_epochs=3)
    splits = _weston_splits("weston-usps", spec, quick, seed, data_home)
    E = spec["max_epochs"]
    keys, tasks = [], []
    # The costliest first: several epochs at small caches.
    for epochs in (E, 1):
        for p in spec["grid"]:
            for r, s in enumerate(splits):
                keys.append((f"Tighter {epochs} epochs", p, r))
                tasks.append(delayed(_usps_epochs_run)("Tighter", p, epochs, spec["gamma"],
                                                       seed + r, *s))  # fmt: skip
    for epochs in (E, 1):
        for r, s in enumerate(splits):
            keys.append((f"Perceptron {epochs} epochs", None, r))
            tasks.append(delayed(_usps_epochs_run)("Perceptron", None, epochs, spec["gamma"],
                                                   seed + r, *s))  # fmt: skip
    runs = _parallel(keys, tasks, n_jobs, progress, "run", "p")
    lines = _usps_epochs_table(spec, splits, runs)
    figures = _usps_epochs_figure(out, spec, runs)
    settings = {key: spec[key] for key in ("dataset", "gamma", "grid", "n_runs", "max_epochs")}
    settings.update(n_train=splits[0][0].shape[0], n_test=splits[0][2].shape[0],
                    error_set_one_epoch="all", error_set_epochs="random, q = n_train")  # fmt: skip
    return lines, figures, runs, settings


def _usps_epochs_table(spec, splits, runs):
    E = spec["max_epochs"]
    n_train, n_test = splits[0][0].shape[0], splits[0][2].shape[0]
    lines = [
        f"## Test error of the Tighter Budget Perceptron, one epoch and up to {E} epochs",
        "",
        f"{spec['dataset']}: {n_train} training rows, {n_test} test rows, RBF gamma = "
        f"{spec['gamma']:.4g}, {len(splits)} runs (training orders). Test error in %, mean "
        f"[min, max] over the runs. One epoch: the run's order, as in weston-usps. Up to {E} "
        "epochs: `fit` reshuffles every epoch and stops after an epoch without updates. The "
        "evaluation set of the removals is every example seen for one epoch "
        "(`error_set='all'`); for several epochs it is a reservoir of as many rounds as "
        f"there are training rows (`error_set='random'`, q = {n_train}), which in the first "
        "epoch holds every round seen, as 'all' does, and afterwards a uniform sample of "
        "the rounds played (an example may be there more than once). With 'all' the "
        "evaluation set, and its cached kernel values, would grow with every epoch.",
        "",
        f"| cache size p | 1 epoch | up to {E} epochs | epochs played, mean [min, max] "
        "| runs converged |",
        "|---|---|---|---|---|",
    ]
    for p in spec["grid"]:
        multi = runs[(f"Tighter {E} epochs", p)]
        lines.append(
            f"| {p} | {_range_cell(_errors_of(runs, ('Tighter 1 epochs', p)))} "
            f"| {_range_cell([r['error'] for r in multi])} "
            f"| {_range_cell([r['epochs'] for r in multi], '.1f')} "
            f"| {sum(r['converged'] for r in multi)} of {len(multi)} |"
        )
    lines += [
        "",
        "| reference | test error % | support size | epochs played |",
        "|---|---|---|---|",
    ]
    for epochs in (1, E):
        res = runs[(f"Perceptron {epochs} epochs", None)]
        lines.append(
            f"| Perceptron, {'1 epoch' if epochs == 1 else f'up to {E} epochs'} "
            f"| {_range_cell([r['error'] for r in res])} "
            f"| {np.mean([r['support'] for r in res]):.1f} "
            f"| {_range_cell([r['epochs'] for r in res], '.1f')} |"
        )
    lines += ["", "## The paper's claims", "", *_claims_table(_usps_epochs_claims(spec, runs))]
    return lines


def _usps_epochs_claims(spec, runs):
    E, grid = spec["max_epochs"], spec["grid"]
    one = {p: _errors_of(runs, ("Tighter 1 epochs", p)).mean() for p in grid}
    multi = {p: _errors_of(runs, (f"Tighter {E} epochs", p)).mean() for p in grid}
    epochs = [r["epochs"] for p in grid for r in runs[(f"Tighter {E} epochs", p)]]
    conv = [r["converged"] for p in grid for r in runs[(f"Tighter {E} epochs", p)]]
    perc_multi = _errors_of(runs, (f"Perceptron {E} epochs", None)).mean()
    small = grid[0]
    big = grid[-1]
    return [
        (f"The Tighter rule typically converges before {E} epochs",
         f"{sum(conv)} of {len(conv)} runs converged; {np.mean(epochs):.1f} epochs on average",
         2 * sum(conv) > len(conv)),
        ("For small caches, several epochs perform about as one epoch",
         f"p = {small}: {one[small]:.2f}% (1 epoch) and {multi[small]:.2f}% (up to {E})",
         abs(one[small] - multi[small]) <= max(0.25 * one[small], 0.3)),
        (f"The largest cache reaches the Perceptron with {E} epochs",
         f"p = {big}: {multi[big]:.2f}%; Perceptron up to {E} epochs: {perc_multi:.2f}%",
         abs(multi[big] - perc_multi) <= 0.3),
        ("... which is slightly better than any cache size with one epoch",
         f"best one-epoch error {min(one.values()):.2f}% (p = {min(one, key=one.get)})",
         perc_multi < min(one.values())),
    ]  # fmt: skip


def _usps_epochs_figure(out, spec, runs):
    plt = _pyplot()
    if plt is None:
        return []
    E = spec["max_epochs"]
    grid = np.asarray(spec["grid"])
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for key, label, marker in (
        ("Tighter 1 epochs", "Tighter Budget Perceptron, 1 epoch", "o"),
        (f"Tighter {E} epochs", f"Tighter Budget Perceptron, up to {E} epochs", "D"),
    ):
        e = np.array([_errors_of(runs, (key, p)) for p in grid])
        mean = e.mean(axis=1)
        ax.errorbar(grid, mean, yerr=[mean - e.min(axis=1), e.max(axis=1) - mean],
                    marker=marker, capsize=3, label=label)  # fmt: skip
    for epochs, style in ((1, "--"), (E, ":")):
        res = runs[(f"Perceptron {epochs} epochs", None)]
        e = np.mean([r["error"] for r in res])
        s = np.mean([r["support"] for r in res])
        what = "1 epoch" if epochs == 1 else f"up to {E} epochs"
        ax.axhline(e, linestyle=style, color="C2" if epochs == 1 else "C4",
                   label=f"Perceptron, {what} ({s:.0f} SVs)")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("cache size p (support vectors)")
    ax.set_ylabel("test error (%)")
    ax.set_title(spec["dataset"])
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    return [_save_figure(plt, fig, out, "weston-usps-epochs.png")]
