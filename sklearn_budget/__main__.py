"""Command line entry point: ``sklearn-budget`` or ``python -m sklearn_budget``."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.base import clone

DEFAULT_EXPERIMENT = "projectron-synthetic"

#: Training rows of the demo's KernelMatchingPursuit. Its fit keeps the
#: ``n x n`` kernel matrix and compares every row with the residual at each
#: of its steps: on the demo's 10000 rows that is 800 MB and minutes, for a
#: batch baseline that the demo only shows beside the online learners.
DEMO_KMP_ROWS = 2000


def _projectron_settings(B):
    # The competitor norm the Projectron paper derives from the Forgetron's
    # budget, unbounded support (as in its Table 3).
    U = 0.25 * np.sqrt((B + 1) / np.log(B + 1))
    return {"eta": "adaptive", "U": U, "budget": None}


#: The demo's settings of the estimators whose defaults it does not use, by
#: class name: a function of the budget. Every other estimator of the
#: package's ``__all__`` joins the demo with its defaults.
DEMO_SETTINGS = {
    "BudgetedSGDClassifier": lambda B: {"alpha": 1e-4},
    "Projectron": _projectron_settings,
    "ProjectronPlusPlus": _projectron_settings,
}


def _demo_estimator(cls, budget, random_state):
    """The demo's instance of ``cls``: the demo's budget, width and seed, the
    last hypothesis (the averaged one is a second pass), then the settings
    of DEMO_SETTINGS; every other parameter at its default."""
    params = cls().get_params()
    settings = {"budget": budget, "gamma": 1.0, "average": False, "random_state": random_state}
    settings = {key: value for key, value in settings.items() if key in params}
    settings.update(DEMO_SETTINGS.get(cls.__name__, lambda B: {})(budget))
    return cls(**settings)


def _demo_label(class_name, est):
    """The estimator's row label: its name and its bound on the support."""
    params = est.get_params()
    bound = params.get("budget")
    if bound is not None:
        return f"{class_name} (B={bound})"
    if params.get("U") is not None:
        return f"{class_name} (U={params['U']:.2f})"
    return class_name


def demo(n_samples=10000, n_test=5000, budget=500, random_state=0, out=sys.stdout, progress=None):
    """Train every estimator online on the synthetic set and report.

    Prints, per estimator, the online mistake rate of one pass (as in the
    Projectron paper's Table 3), the support size, the held-out accuracy of
    the final hypothesis, and that of the averaged hypothesis of the same
    pass (``average=True``, within the budget for the budget learners).
    :class:`~sklearn_budget.KernelMatchingPursuit`, a batch method, is
    fitted on the first ``DEMO_KMP_ROWS`` training rows only.

    Parameters
    ----------
    n_samples : int, default=10000
        Training rounds.
    n_test : int, default=5000
        Held-out rows.
    budget : int, default=500
        Budget of the budget learners and components of the matching pursuit.
    random_state : int, default=0
        Seed of the data and of the randomized learners.
    out : file-like, default=sys.stdout
        Where the table goes, once every estimator is fitted.
    progress : file-like, default=None
        Where a line per estimator goes as it is fitted (what, and how long
        it took); None prints none.
    """
    import sklearn_budget
    from sklearn_budget.datasets import make_two_gaussians

    rng = np.random.RandomState(random_state)
    X, y = make_two_gaussians(n_samples, random_state=rng)
    X_test, y_test = make_two_gaussians(n_test, random_state=rng)
    B = budget
    kmp_rows = min(n_samples, DEMO_KMP_ROWS)
    estimators = {}
    for class_name in sklearn_budget.__all__:
        est = _demo_estimator(getattr(sklearn_budget, class_name), B, random_state)
        label = _demo_label(class_name, est)
        if not hasattr(est, "partial_fit") and kmp_rows < n_samples:
            label = label[:-1] + f", {kmp_rows} rows)"
        estimators[label] = est
    header = (
        f"{'estimator':40s} {'online err %':>12s} {'|S|':>6s} {'test acc %':>10s} "
        f"{'averaged':>8s} {'seconds':>8s}"
    )
    rows = []
    for i, (name, est) in enumerate(estimators.items(), start=1):
        online = hasattr(est, "partial_fit")
        averaged_too = online and "average" in est.get_params()
        if progress is not None:
            what = f"one online pass over {n_samples} rows" if online else "batch fit"
            what += ", then the averaged pass" if averaged_too else ""
            print(f"[{i:2d}/{len(estimators)}] {name}: {what} ...", end="", file=progress)
            progress.flush()
        tic = time.perf_counter()
        if online:
            est.partial_fit(X, y, classes=[-1, 1])
            err = f"{100 * est.n_mistakes_ / n_samples:12.2f}"
        else:
            est.fit(X[:kmp_rows], y[:kmp_rows])
            err = f"{'-':>12s}"
        elapsed = time.perf_counter() - tic
        size = f"{len(est.support_):6d}" if hasattr(est, "support_") else f"{'-':>6s}"
        averaged = f"{'-':>8s}"
        if averaged_too:
            avg = clone(est).set_params(average=True).partial_fit(X, y, classes=[-1, 1])
            averaged = f"{100 * avg.score(X_test, y_test):8.2f}"
        if progress is not None:
            print(f" {time.perf_counter() - tic:.2f} s", file=progress, flush=True)
        rows.append(
            f"{name:40s} {err} {size} {100 * est.score(X_test, y_test):10.2f} {averaged} "
            f"{elapsed:8.2f}"
        )
    print(
        f"Synthetic data: {n_samples} training rounds, {n_test} test rows, rbf kernel gamma=1",
        file=out,
    )
    print(header, file=out)
    print("-" * len(header), file=out)
    print("\n".join(rows), file=out)
    kmp_note = ""
    if kmp_rows < n_samples:
        kmp_note = (
            f"\nKernelMatchingPursuit, a batch method whose fit keeps the n x n kernel matrix, "
            f"is fitted on\nthe first {kmp_rows} training rows only, to keep the demo to "
            "seconds and its memory small."
        )
    not_averaged = [
        name
        for name in sklearn_budget.__all__
        if getattr(sklearn_budget, name)().get_params().get("average", True) is False
    ]
    print(
        "\nThe rows are the papers' online algorithms: 'test acc %' is the last "
        "hypothesis of the pass.\nThat of a budget learner swings with the few members "
        "it holds: the Budget Perceptrons'\nremoval rule keeps the misclassified ones "
        "(Weston et al., 2005), hence their low 'test acc %'.\n'averaged' is the "
        "average of the pass's hypotheses (average=True), within the budget:\nthe "
        "default of every estimator that has an 'average' parameter, except\n"
        + ", ".join(not_averaged)
        + ".\n'seconds' is the time of the first pass (of the fit for the batch methods)."
        + kmp_note,
        file=out,
    )


def _n_jobs(text):
    value = int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 workers cannot run anything; use 1, 2, ... or -1")
    return value


def _parser():
    """The parser of the command line and those of its commands, by name."""
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
    sub = parser.add_subparsers(
        dest="command",
        help=f"the command (default: reproduce {DEFAULT_EXPERIMENT}, the main job); "
        "'sklearn-budget COMMAND --help' gives its options",
    )
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
    r.add_argument(
        "--random-state",
        type=int,
        default=0,
        help="seed of the permutations, splits and label noise of the runs; the papers' "
        "tables in the documentation use the default (default: %(default)s)",
    )
    r.add_argument(
        "--data-home",
        help="folder of the real data sets (default: $SKLEARN_BUDGET_DATA, then "
        "~/scikit_learn_data; missing files are downloaded)",
    )
    r.add_argument("--silent", action="store_true", help="no progress lines on stderr")
    d = sub.add_parser(
        "demo",
        help="train every estimator once on the synthetic set and print a table",
        description="Train every estimator once on the synthetic set (two Gaussians, rbf "
        "kernel gamma=1): the online error of one pass, the support size, and the test "
        "accuracy of the last and of the averaged hypothesis. KernelMatchingPursuit, a "
        f"batch method, is fitted on the first {DEMO_KMP_ROWS} rows only.",
    )
    d.add_argument(
        "--n-samples",
        type=int,
        default=10000,
        help="training rounds (default: %(default)s; 5000 test rows)",
    )
    d.add_argument(
        "--budget",
        type=int,
        default=500,
        help="budget of the budget learners, components of KernelMatchingPursuit "
        "(default: %(default)s)",
    )
    d.add_argument(
        "--random-state",
        type=int,
        default=0,
        help="seed of the data and of the randomized learners (default: %(default)s)",
    )
    d.add_argument("--silent", action="store_true", help="no progress line per estimator on stderr")
    return parser, {"reproduce": r, "demo": d}


def _check_option_order(parser, commands, argv):
    """Refuse, with the command line to type, options given before the command.

    The options belong to a command, so argparse would take the value of
    such an option for the command (``invalid choice: 'results'``).
    """
    where = next((i for i, token in enumerate(argv) if token in commands), len(argv))
    early = [t for t in argv[:where] if t.startswith("-") and t not in ("-h", "--help")]
    if not early:
        return
    option = early[0].split("=")[0]
    command = argv[where] if where < len(argv) else "reproduce"
    owners = [name for name, p in commands.items() if option in p._option_string_actions]
    message = (
        f"{option} goes after the command: options belong to 'reproduce' (after its "
        "EXPERIMENT) or to 'demo'."
    )
    if command in owners:
        fixed = [*argv[where:], *argv[:where]]
        if where == len(argv):
            fixed = ["reproduce", DEFAULT_EXPERIMENT, *argv]
        message += f" Did you mean 'sklearn-budget {' '.join(fixed)}'?"
    elif owners:
        message += f" {option} is an option of '{owners[0]}', not of '{command}'."
    else:
        message = f"unrecognized arguments: {option}: neither 'reproduce' nor 'demo' has it."
    parser.error(
        message + " See 'sklearn-budget reproduce --help' and 'sklearn-budget demo --help'."
    )


def main(argv=None):
    parser, commands = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    _check_option_order(parser, commands, argv)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # Said by the command's parser, whose usage lists the options it has.
        commands[args.command or "reproduce"].error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "demo":
        demo(
            n_samples=args.n_samples,
            budget=args.budget,
            random_state=args.random_state,
            progress=None if args.silent else sys.stderr,
        )
        return 0
    if args.command is None:
        args = parser.parse_args(["reproduce"])
    from sklearn_budget.reproduce import EXPERIMENTS, check_output, reproduce

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
