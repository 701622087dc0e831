"""Probabilities from the progressive margins against CalibratedClassifierCV.

Every online kernel estimator has ``predict_proba``: a scale fitted on the
margins of the stream, each computed before its round's update (see
``BaseKernelOnlineClassifier.predict_proba``). This script compares it, on
the test sets of a9a (Adult) and USPS (10 classes), with scikit-learn's
``CalibratedClassifierCV(method='sigmoid', cv=3)`` wrapped around the same
estimator: Brier score (mean squared error of the probability vector),
log loss, accuracy and the time of ``fit``.

    python benchmarks/bench_calibration.py            # a9a 32561 rows, USPS 7291
    python benchmarks/bench_calibration.py --quick    # 3000 training rows each
    python benchmarks/bench_calibration.py --n-train 8000 --figure doc/images/reliability.png

``--figure`` also draws the reliability diagrams (top-label confidence
against accuracy, in bins of equal width) of the test sets.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.metrics import accuracy_score, log_loss
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _data import DATA_HOME  # noqa: E402

from sklearn_budget import BudgetedSGDClassifier, Forgetron, ProjectronPlusPlus  # noqa: E402
from sklearn_budget.datasets import fetch_a9a, fetch_usps  # noqa: E402


def load(name, n_train):
    if name == "a9a":
        kw = dict(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
        X, y = fetch_a9a(subset="train", **kw)
        Xt, yt = fetch_a9a(subset="test", **kw)
        gamma = 0.05
    else:
        kw = dict(
            data_home=DATA_HOME, positive_digit=None, download_if_missing=False, return_X_y=True
        )
        X, y = fetch_usps(subset="train", **kw)
        Xt, yt = fetch_usps(subset="test", **kw)
        gamma = 1.0 / 64
    if n_train is not None:
        rng = np.random.RandomState(0)
        keep = rng.permutation(X.shape[0])[:n_train]
        X, y = X[keep], y[keep]
    return X, y, Xt, yt, gamma


def brier(y, proba, classes):
    onehot = (np.asarray(y)[:, None] == classes[None, :]).astype(float)
    return float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))


def estimators(gamma, budget):
    return {
        f"Forgetron(B={budget}, average)": Forgetron(
            budget=budget, gamma=gamma, average=True, max_iter=2, random_state=0
        ),
        f"ProjectronPlusPlus(budget={budget})": ProjectronPlusPlus(
            eta=0.1, budget=budget, gamma=gamma, max_iter=1, random_state=0
        ),
        f"BudgetedSGD(B={budget}, merging)": BudgetedSGDClassifier(
            budget=budget, alpha=1e-4, gamma=gamma, max_iter=1, random_state=0
        ),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--datasets", default="a9a,usps")
    parser.add_argument("--n-train", type=int, default=None, help="first training rows only")
    parser.add_argument("--figure", default=None, help="write the reliability diagrams here")
    args = parser.parse_args(argv)
    n_train = 3000 if args.quick else args.n_train
    rows = []
    curves = {}
    for data in args.datasets.split(","):
        X, y, Xt, yt, gamma = load(data, n_train)
        for name, est in estimators(gamma, args.budget).items():
            for how in ("ours", "CalibratedClassifierCV"):
                model = est if how == "ours" else CalibratedClassifierCV(est, cv=3)
                if "merging" in name and hasattr(X, "toarray"):
                    Xf, Xtf = X.toarray(), Xt.toarray()
                else:
                    Xf, Xtf = X, Xt
                with threadpool_limits(limits=1, user_api="blas"):
                    tic = time.perf_counter()
                    model.fit(Xf, y)
                    elapsed = time.perf_counter() - tic
                    proba = model.predict_proba(Xtf)
                classes = model.classes_
                curves[data, name, how] = reliability(yt, proba, classes)
                rows.append(
                    (
                        data,
                        name,
                        how,
                        brier(yt, proba, classes),
                        log_loss(yt, proba, labels=classes),
                        accuracy_score(yt, classes[proba.argmax(axis=1)]),
                        elapsed,
                    )
                )
                print(
                    f"| {data} | {name} | {how} | {rows[-1][3]:.4f} | {rows[-1][4]:.4f} "
                    f"| {rows[-1][5]:.4f} | {elapsed:.1f} |",
                    flush=True,
                )
    print()
    print("| data | estimator | probabilities | Brier | log loss | accuracy | fit s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.4f} | {r[4]:.4f} | {r[5]:.4f} | {r[6]:.1f} |")
    if args.figure:
        draw(curves, args.figure, n_train)


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
        rows = "all" if n_train is None else f"first {n_train}"
        ax.set_title(f"{data} ({rows} training rows), test set")
        ax.grid(alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.17, 1, 1))
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
