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
            budget=budget, gamma=gamma, max_iter=1, random_state=0
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
    args = parser.parse_args(argv)
    n_train = 3000 if args.quick else None
    rows = []
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


if __name__ == "__main__":
    main()
