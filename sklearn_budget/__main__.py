"""Command line entry point: ``sklearn-budget`` or ``python -m sklearn_budget``."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.base import clone


def demo(n_samples=10000, n_test=5000, budget=500, random_state=0, out=sys.stdout):
    """Train every estimator online on the synthetic set and report.

    Prints, per estimator, the online mistake rate of one pass (as in the
    Projectron paper's Table 3), the support size, the held-out accuracy of
    the final hypothesis, and that of the averaged hypothesis of the same
    pass (``average=True``, within the budget for the budget learners).
    """
    from sklearn_budget import (
        BudgetedSGDClassifier,
        BudgetPerceptron,
        Forgetron,
        KernelMatchingPursuit,
        KernelPassiveAggressive,
        KernelPerceptron,
        Projectron,
        ProjectronPlusPlus,
        RandomizedBudgetPerceptron,
        Stoptron,
        TighterBudgetPerceptron,
        Winnow,
    )
    from sklearn_budget.datasets import make_two_gaussians

    rng = np.random.RandomState(random_state)
    X, y = make_two_gaussians(n_samples, random_state=rng)
    X_test, y_test = make_two_gaussians(n_test, random_state=rng)
    B = budget
    # The competitor norm the Projectron paper derives from the Forgetron's budget.
    U = 0.25 * np.sqrt((B + 1) / np.log(B + 1))
    estimators = {
        "KernelPerceptron": KernelPerceptron(average=False),
        "KernelPassiveAggressive (PA-I)": KernelPassiveAggressive(C=1.0),
        f"Stoptron (B={B})": Stoptron(budget=B, average=False),
        f"Projectron (U={U:.2f})": Projectron(eta="adaptive", U=U, budget=None),
        f"ProjectronPlusPlus (U={U:.2f})": ProjectronPlusPlus(eta="adaptive", U=U, budget=None),
        f"Forgetron (B={B})": Forgetron(budget=B, average=False),
        f"RandomizedBudgetPerceptron (B={B})": RandomizedBudgetPerceptron(
            budget=B, average=False, random_state=random_state
        ),
        f"BudgetPerceptron (B={B})": BudgetPerceptron(budget=B, average=False),
        f"TighterBudgetPerceptron (B={B})": TighterBudgetPerceptron(budget=B, average=False),
        f"BudgetedSGDClassifier (B={B}, merging)": BudgetedSGDClassifier(budget=B, alpha=1e-4),
        # Batch baseline (fit, no online error) and the linear online baseline.
        f"KernelMatchingPursuit (B={B})": KernelMatchingPursuit(n_components=B),
        "Winnow (linear)": Winnow(),
    }
    for est in estimators.values():
        if "gamma" in est.get_params():
            est.set_params(gamma=1.0)
    print(
        f"Synthetic data: {n_samples} training rounds, {n_test} test rows, rbf kernel gamma=1",
        file=out,
    )
    header = (
        f"{'estimator':40s} {'online err %':>12s} {'|S|':>6s} {'test acc %':>10s} "
        f"{'averaged':>8s} {'seconds':>8s}"
    )
    print(header, file=out)
    print("-" * len(header), file=out)
    for name, est in estimators.items():
        tic = time.perf_counter()
        if hasattr(est, "partial_fit"):
            est.partial_fit(X, y, classes=[-1, 1])
            err = f"{100 * est.n_mistakes_ / n_samples:12.2f}"
        else:
            est.fit(X, y)
            err = f"{'-':>12s}"
        elapsed = time.perf_counter() - tic
        size = f"{len(est.support_):6d}" if hasattr(est, "support_") else f"{'-':>6s}"
        averaged = f"{'-':>8s}"
        if hasattr(est, "partial_fit") and "average" in est.get_params():
            avg = clone(est).set_params(average=True).partial_fit(X, y, classes=[-1, 1])
            averaged = f"{100 * avg.score(X_test, y_test):8.2f}"
        print(
            f"{name:40s} {err} {size} {100 * est.score(X_test, y_test):10.2f} {averaged} "
            f"{elapsed:8.2f}",
            file=out,
        )
    print(
        "\nThe rows are the papers' online algorithms: 'test acc %' is the last "
        "hypothesis of the pass.\nThat of a budget learner swings with the few members "
        "it holds: the Budget Perceptrons'\nremoval rule keeps the misclassified ones "
        "(Weston et al., 2005), hence their low 'test acc %'.\n'averaged' is the "
        "average of the pass's hypotheses (average=True), within the budget:\nthe "
        "default of every estimator that has an 'average' parameter, except the "
        "Projectrons,\nPassive-Aggressive and budgeted SGD.",
        file=out,
    )


DEFAULT_EXPERIMENT = "projectron-synthetic"


def _n_jobs(text):
    value = int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 workers cannot run anything; use 1, 2, ... or -1")
    return value


def main(argv=None):
    from sklearn_budget.reproduce import EXPERIMENTS

    parser = argparse.ArgumentParser(
        prog="sklearn-budget",
        description=(
            "Bounded-memory kernel online classifiers. Without a command, and "
            f"'reproduce' without an experiment, run the main job, 'reproduce "
            f"{DEFAULT_EXPERIMENT}'. Options such as --out belong to the "
            "command and go after it: "
            f"'sklearn-budget reproduce {DEFAULT_EXPERIMENT} --out DIR'."
        ),
    )
    sub = parser.add_subparsers(dest="command")
    r = sub.add_parser(
        "reproduce",
        help="run one of the papers' experiments; write a markdown table and PNG figures",
        description="Experiments: "
        + "; ".join(f"{name}: {what}" for name, what in EXPERIMENTS.items()),
    )
    # Optional, as the command itself is: both run the main job, the one the
    # README's quick start promises.
    r.add_argument(
        "experiment",
        nargs="?",
        default=DEFAULT_EXPERIMENT,
        metavar="EXPERIMENT",
        choices=[*EXPERIMENTS, "all"],
        help=f"the experiment to run, or 'all' (default: {DEFAULT_EXPERIMENT}, the main job)",
    )
    r.add_argument(
        "--quick",
        action="store_true",
        help="a short run on a subset, for smoke tests: a few seconds per experiment; "
        "its numbers are not comparable with the papers'",
    )
    r.add_argument(
        "--out",
        default="sklearn-budget-results",
        help="output folder, made if needed and checked to be writable before any experiment "
        "runs; it may be a symbolic link to a folder, but output files in it that are "
        "symbolic links are refused, never written through (default: %(default)s)",
    )
    r.add_argument(
        "--n-jobs", type=_n_jobs, default=1, help="parallel runs (joblib; -1: all cores)"
    )
    r.add_argument("--random-state", type=int, default=0)
    r.add_argument(
        "--data-home",
        help="folder of the real data sets (default: $SKLEARN_BUDGET_DATA, then "
        "~/scikit_learn_data; missing files are downloaded)",
    )
    r.add_argument("--silent", action="store_true", help="no progress lines on stderr")
    p = sub.add_parser("demo", help="train every estimator once on the synthetic set")
    p.add_argument("--n-samples", type=int, default=10000)
    p.add_argument("--budget", type=int, default=500)
    p.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(n_samples=args.n_samples, budget=args.budget, random_state=args.random_state)
        return 0
    if args.command is None:
        args = parser.parse_args(["reproduce"])
    from sklearn_budget.reproduce import check_output, reproduce

    names = list(EXPERIMENTS) if args.experiment == "all" else [args.experiment]
    try:
        # Before running anything: an experiment can take hours.
        check_output(args.out, names)
    except OSError as exc:
        print(f"sklearn-budget: error: --out: {exc}", file=sys.stderr)
        return 1
    failed = []
    for name in names:
        try:
            table, figures = reproduce(
                name,
                quick=args.quick,
                out=args.out,
                n_jobs=args.n_jobs,
                random_state=args.random_state,
                data_home=args.data_home,
                progress=None if args.silent else sys.stderr,
            )
        except OSError as exc:
            # Missing data that could not be downloaded, a data file that
            # fails its checksum or is malformed (DataFileError), an output
            # file that cannot be written: report it in one line, and go on
            # with the other experiments of 'all'.
            print(f"sklearn-budget: error: {name}: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        print(table)
        print(
            f"Written to {Path(args.out) / (name + '.md')}"
            + "".join(f"\n           {f}" for f in [*figures, Path(args.out) / (name + ".json")])
        )
    if failed:
        print(
            f"sklearn-budget: {len(failed)} of {len(names)} experiments failed: "
            + ", ".join(failed)
            + ". The real data sets are read from --data-home, $SKLEARN_BUDGET_DATA or "
            "~/scikit_learn_data.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
