"""Probabilities from the progressive margins against CalibratedClassifierCV.

Every online kernel estimator has ``predict_proba``: a scale fitted on the
margins of the stream, each computed before its round's update (see
``BaseKernelOnlineClassifier.predict_proba``). This script compares it, on
the test sets of a9a (Adult) and USPS (10 classes), with scikit-learn's
``CalibratedClassifierCV(est, cv=3, ensemble=False)`` (Platt's sigmoid fitted
on out-of-fold scores, then the estimator refitted on all the rows): accuracy,
log loss, Brier score (mean squared error of the probability vector against
the one-hot label), the ratio of the log losses, and the accuracy of
``StackingClassifier([('e', est)], final_estimator=LogisticRegression(),
stack_method='predict_proba')`` against the estimator alone.

Every online estimator is run with its defaults except ``budget`` (where it
has one), ``random_state=0`` and ``average`` (passed explicitly, both values
for the removal rules and the Kernel Perceptron). The targets flagged: log
loss at most 1.1 times that of CalibratedClassifierCV (``LL``), stacking
accuracy not below the estimator's own (``STACK``).

    python benchmarks/bench_calibration.py                  # a9a 8000 rows, USPS 3000
    python benchmarks/bench_calibration.py --only Forgetron  # names containing it
    python benchmarks/bench_calibration.py --figure doc/images/reliability.png

``--figure`` also draws the reliability diagrams (top-label confidence
against accuracy, in bins of equal width) of the test sets, for the
estimators of ``FIGURE``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import StackingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _data import DATA_HOME  # noqa: E402

from sklearn_budget import (  # noqa: E402
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
from sklearn_budget.datasets import fetch_a9a, fetch_usps  # noqa: E402

# Training rows of each data set (the first ones of the training file).
N_TRAIN = {"a9a": 8000, "usps": 3000}

# Log loss allowed, relative to CalibratedClassifierCV around the same estimator.
LL_RATIO = 1.1

# The estimators of the reliability diagrams.
FIGURE = (
    "Forgetron(average=True)",
    "BudgetPerceptron(average=True)",
    "ProjectronPlusPlus",
    "BudgetedSGDClassifier",
)


def load(name, n_train):
    kw = dict(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    if name == "a9a":
        X, y = fetch_a9a(subset="train", **kw)
        Xt, yt = fetch_a9a(subset="test", **kw)
    else:
        X, y = fetch_usps(subset="train", positive_digit=None, **kw)
        Xt, yt = fetch_usps(subset="test", positive_digit=None, **kw)
    return X[:n_train], y[:n_train], Xt, yt


def brier(y, proba, classes):
    onehot = (np.asarray(y)[:, None] == classes[None, :]).astype(float)
    return float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))


def estimators(budget):
    """Default instances, with the budget and ``average`` given explicitly."""
    out = {}
    for cls, averages in (
        (Forgetron, (False, True)),
        (RandomizedBudgetPerceptron, (False, True)),
        (BudgetPerceptron, (False, True)),
        (TighterBudgetPerceptron, (False, True)),
        (Stoptron, (False,)),
        (Projectron, (False,)),
        (ProjectronPlusPlus, (False,)),
        (KernelPerceptron, (False, True)),
        (KernelPassiveAggressive, (False,)),
        (BudgetedSGDClassifier, (False,)),
    ):
        for average in averages:
            params = {"random_state": 0, "average": average}
            if "budget" in cls().get_params():
                params["budget"] = budget
            name = cls.__name__ + (f"(average={average})" if len(averages) > 1 else "")
            out[name] = cls(**params)
    out["Winnow"] = Winnow(random_state=0)
    out["KernelMatchingPursuit"] = KernelMatchingPursuit(budget=budget)
    return out


def scores(model, Xt, yt):
    proba = model.predict_proba(Xt)
    classes = model.classes_
    return (
        accuracy_score(yt, classes[proba.argmax(axis=1)]),
        log_loss(yt, proba, labels=classes),
        brier(yt, proba, classes),
        proba,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--datasets", default="a9a,usps")
    parser.add_argument("--n-train", type=int, default=None, help="training rows of every set")
    parser.add_argument("--only", default=None, help="estimators whose name contains one of these")
    parser.add_argument("--no-stacking", action="store_true")
    parser.add_argument("--figure", default=None, help="write the reliability diagrams here")
    args = parser.parse_args(argv)
    rows, curves = [], {}
    header = (
        "| data | estimator | acc | log loss | Brier | scale | CCV acc | CCV log loss "
        "| CCV Brier | LL ratio | stack acc | stack - acc | fit s | flags |"
    )
    print(header)
    print("|" + "---|" * header.count(" | ") + "---|")
    for data in args.datasets.split(","):
        n_train = args.n_train or N_TRAIN[data]
        X, y, Xt, yt = load(data, n_train)
        for name, est in estimators(args.budget).items():
            if args.only and not any(part in name for part in args.only.split(",")):
                continue
            if name == "Winnow" and X.min() < 0:
                continue  # Winnow takes non-negative features only
            with threadpool_limits(limits=1, user_api="blas"):
                tic = time.perf_counter()
                model = clone(est).fit(X, y)
                elapsed = time.perf_counter() - tic
                acc, ll, br, proba = scores(model, Xt, yt)
                cal = CalibratedClassifierCV(clone(est), cv=3, ensemble=False).fit(X, y)
                cacc, cll, cbr, cproba = scores(cal, Xt, yt)
                sacc = np.nan
                if not args.no_stacking:
                    stack = StackingClassifier(
                        [("e", clone(est))],
                        final_estimator=LogisticRegression(),
                        stack_method="predict_proba",
                    ).fit(X, y)
                    sacc = accuracy_score(yt, stack.predict(Xt))
            scale = getattr(model, "proba_scale_", np.nan)
            flags = []
            if ll > LL_RATIO * cll:
                flags.append("LL")
            if sacc < acc:
                flags.append("STACK")
            classes = model.classes_
            curves[data, name, "ours"] = reliability(yt, proba, classes)
            curves[data, name, "CalibratedClassifierCV"] = reliability(yt, cproba, classes)
            rows.append((data, name, acc, ll, br, scale, cacc, cll, cbr, ll / cll, sacc))
            print(
                f"| {data} | {name} | {acc:.4f} | {ll:.4f} | {br:.4f} | {scale:.3g} | {cacc:.4f} "
                f"| {cll:.4f} | {cbr:.4f} | {ll / cll:.3f} | {sacc:.4f} | {sacc - acc:+.4f} "
                f"| {elapsed:.1f} | {' '.join(flags)} |",
                flush=True,
            )
    failed = [r for r in rows if r[9] > LL_RATIO or r[10] < r[2]]
    print(f"\n{len(failed)} of {len(rows)} rows miss a target.")
    if args.figure:
        draw(
            {k: v for k, v in curves.items() if k[1] in FIGURE},
            args.figure,
            {d: args.n_train or N_TRAIN[d] for d in args.datasets.split(",")},
        )


def reliability(y, proba, classes, n_bins=10):
    """Mean top-label confidence, accuracy and count in bins of equal width."""
    top = proba.max(axis=1)
    correct = classes[proba.argmax(axis=1)] == np.asarray(y)
    # The top label's probability is at least 1/C: bin [1/C, 1].
    low = 1.0 / len(classes)
    edges = np.linspace(low, 1.0, n_bins + 1)
    which = np.clip(np.searchsorted(edges, top, side="right") - 1, 0, n_bins - 1)
    count = np.bincount(which, minlength=n_bins)
    filled = count > 0
    conf = np.bincount(which, weights=top, minlength=n_bins)[filled] / count[filled]
    acc = np.bincount(which, weights=correct, minlength=n_bins)[filled] / count[filled]
    return conf, acc, count[filled]


def draw(curves, path, n_train):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(key[0] for key in curves))
    names = list(dict.fromkeys(key[1] for key in curves))
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.2 * len(datasets), 5.8), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, data in zip(axes[0], datasets):
        low = min(conf.min() for (d, _, _), (conf, _, _) in curves.items() if d == data)
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls=":", label="perfectly calibrated")
        for color, name in zip(colors, names):
            for how, style, marker in (("ours", "-", "o"), ("CalibratedClassifierCV", "--", "s")):
                conf, acc, count = curves[data, name, how]
                label = f"{name}, {'ours' if how == 'ours' else 'CalibratedClassifierCV(cv=3)'}"
                ax.plot(conf, acc, ls=style, color=color, lw=1.4, label=label)
                # Marker area grows with the number of test rows in the bin.
                ax.scatter(conf, acc, s=8 + 60 * count / count.max(), color=color, marker=marker)
        low = max(0.0, min(low, 0.5) - 0.05)
        ax.set_xlim(low, 1.005)
        ax.set_ylim(low, 1.005)
        ax.set_xlabel("predicted probability of the predicted class")
        ax.set_ylabel("fraction correct")
        ax.set_title(f"{data} (first {n_train[data]} training rows), test set")
        ax.grid(alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.17, 1, 1))
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
