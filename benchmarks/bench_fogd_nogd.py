"""FOGD and NOGD against the batch pipelines of random features and Nystroem.

On a9a (Adult, two classes) and USPS (ten classes), with their own test
sets, at budgets 100 and 500: ``FourierOnlineClassifier`` and
``NystroemOnlineClassifier`` (``average=True``, ``max_iter=5``, the other
parameters at their defaults) against ``RBFSampler(B)`` and ``Nystroem(B)``
each followed by ``SGDClassifier(loss='hinge', alpha=1e-5, average=True,
max_iter=20)``. Every model uses the rbf width of the package's experiments
(a9a 0.02, USPS 1/128) and seed 0; the training rows are shuffled once.
BLAS is pinned to one thread; the time is that of ``fit`` (features
included), on a shared machine.

Run from the repository root::

    python benchmarks/bench_fogd_nogd.py              # the full sets
    python benchmarks/bench_fogd_nogd.py --quick      # 3,000 training rows, seconds
    python benchmarks/bench_fogd_nogd.py --learning-rates 0.1,0.5,2   # FOGD/NOGD only
    python benchmarks/bench_fogd_nogd.py --one-row   # one-row partial_fit vs river

``--one-row`` times a stream of 3,000 one-row ``partial_fit`` calls (20
features, budget 100; the best of three; NOGD also with the penalty
``alpha=1e-4``) against river's
``linear_model.Perceptron().learn_one`` on the same events.
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import SGDClassifier
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from sklearn_budget import FourierOnlineClassifier, NystroemOnlineClassifier
from sklearn_budget.datasets import fetch_a9a, fetch_usps

GAMMA = {"a9a": 0.02, "usps": 1.0 / 128}


def load(name, n_train=None):
    kw = {"data_home": os.environ.get("SKLEARN_BUDGET_DATA"), "download_if_missing": False}
    if name == "a9a":
        X, y = fetch_a9a(subset="train", return_X_y=True, **kw)
        Xt, yt = fetch_a9a(subset="test", return_X_y=True, **kw)
    else:
        X, y = fetch_usps(subset="train", positive_digit=None, return_X_y=True, **kw)
        Xt, yt = fetch_usps(subset="test", positive_digit=None, return_X_y=True, **kw)
    order = np.random.RandomState(0).permutation(X.shape[0])[:n_train]
    return X[order], y[order], Xt, yt


def models(B, gamma, learning_rate=None):
    lr = {} if learning_rate is None else {"learning_rate": learning_rate}
    ours = {
        "FOGD": FourierOnlineClassifier(budget=B, gamma=gamma, average=True, random_state=0, **lr),
        # The rounds of the paper, five epochs: the setting of the table of
        # doc/fogd_nogd.rst (alpha='auto' is measured by bench_alternatives.py).
        "NOGD": NystroemOnlineClassifier(
            budget=B, gamma=gamma, average=True, alpha=0.0, max_iter=5, random_state=0, **lr
        ),
    }
    if learning_rate is not None:
        return ours
    sgd = dict(loss="hinge", alpha=1e-5, average=True, max_iter=20, random_state=0)
    return {
        **ours,
        "RBFSampler+SGD": make_pipeline(
            RBFSampler(gamma=gamma, n_components=B, random_state=0), SGDClassifier(**sgd)
        ),
        "Nystroem+SGD": make_pipeline(
            Nystroem(gamma=gamma, n_components=B, random_state=0), SGDClassifier(**sgd)
        ),
    }


def one_row(repeats=3):
    """Microseconds per one-row call: FOGD and NOGD ``partial_fit``, river's Perceptron."""
    from river import linear_model

    rng = np.random.RandomState(0)
    X = rng.randn(3000, 20)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    rows = [X[i : i + 1] for i in range(1, len(X))]
    labels = [y[i : i + 1] for i in range(1, len(X))]
    events = [dict(enumerate(r)) for r in X.tolist()]

    def ours(cls, **params):
        model = cls(budget=100, gamma=0.05, random_state=0, **params)
        model.partial_fit(X[:1], y[:1], classes=[0, 1])
        tic = time.perf_counter()
        for row, label in zip(rows, labels):
            model.partial_fit(row, label)
        return 1e6 * (time.perf_counter() - tic) / len(rows)

    def river():
        model = linear_model.Perceptron()
        tic = time.perf_counter()
        for x, label in zip(events, y.tolist()):
            model.learn_one(x, label)
        return 1e6 * (time.perf_counter() - tic) / len(events)

    print(f"load average: {os.getloadavg()[0]:.2f}")
    with threadpool_limits(1):
        for name, run in [
            ("FourierOnlineClassifier.partial_fit", lambda: ours(FourierOnlineClassifier)),
            ("NystroemOnlineClassifier.partial_fit", lambda: ours(NystroemOnlineClassifier)),
            # A penalty, as alpha='auto' may choose: its step on the same round.
            (
                "  the same with alpha=1e-4",
                lambda: ours(NystroemOnlineClassifier, alpha=1e-4),
            ),
            ("river Perceptron.learn_one", river),
        ]:
            print(f"{name:38s} {min(run() for _ in range(repeats)):8.1f} us per row", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3,000 training rows per set")
    parser.add_argument("--datasets", default="a9a,usps")
    parser.add_argument("--budgets", default="100,500")
    parser.add_argument(
        "--learning-rates", default=None, help="comma-separated: FOGD and NOGD at each"
    )
    parser.add_argument("--one-row", action="store_true", help="time one-row partial_fit calls")
    args = parser.parse_args(argv)
    if args.one_row:
        return one_row()
    n_train = 3000 if args.quick else None
    rates = [None]
    if args.learning_rates:
        rates = [float(r) for r in args.learning_rates.split(",")]
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(f"{'data':5s} {'B':>4s} {'model':16s} {'eta':>5s} {'test acc %':>10s} {'fit s':>7s}")
    # SGDClassifier warns at max_iter=20 on these sets; its 20 epochs are the protocol.
    warnings.simplefilter("ignore", ConvergenceWarning)
    with threadpool_limits(1):
        for name in args.datasets.split(","):
            X, y, Xt, yt = load(name, n_train)
            for B in (int(b) for b in args.budgets.split(",")):
                for rate in rates:
                    for label, model in models(B, GAMMA[name], rate).items():
                        tic = time.perf_counter()
                        model.fit(X, y)
                        seconds = time.perf_counter() - tic
                        acc = 100 * model.score(Xt, yt)
                        eta = "-" if "SGD" in label else f"{model.learning_rate:g}"
                        print(
                            f"{name:5s} {B:4d} {label:16s} {eta:>5s} {acc:10.2f} {seconds:7.2f}",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
