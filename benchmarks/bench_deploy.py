"""Deployment costs: prediction latency and model size, in and out of Python's stack.

On a9a (Adult: 32,561 training rows, 16,281 test rows, 123 binary
features), ``Forgetron(budget=100)`` and ``BudgetedSGDClassifier(budget=100)``
are compared with an exact rbf ``SVC`` fit on the first ``--svc-rows``
training rows (about the accuracy of the budget models at a fraction of
their training cost; its accuracy is in the table). Every model uses the rbf
kernel with ``gamma=0.02``, the width the package's experiments use on a9a.

Latency, per model and per way of predicting the probabilities:

- ``sklearn``: the estimator's ``predict_proba`` and ``decision_function``
  (for ``SVC``, probabilities by Platt scaling:
  ``CalibratedClassifierCV(SVC(), ensemble=False)``, what scikit-learn 1.9
  recommends in place of ``SVC(probability=True)``; its decision function
  is the SVC's);
- ``onnxruntime`` float32 and float64: the graph of
  :mod:`sklearn_budget.onnx` (skl2onnx's own converters for the SVC), in an
  ``InferenceSession`` with one thread;
- ``numpy``: the formula of the fitted attributes (doc/deploying.rst),
  written in a few lines of NumPy.

Rows are dense float arrays, as an ONNX graph takes them; the models are
fit on the same dense rows. "1 row" is the
median over ``--repeat`` calls with one test row each; "1000 rows" the
fastest of five calls on 1000 test rows, per row. BLAS runs on one thread
(threadpoolctl) and onnxruntime on one thread, so that the ratios compare
the code, not the cores. Ratios are against the ``sklearn`` time of the same
model.

Size: the bytes of the pickled estimator and of the ONNX graphs (float32
and float64), and the number of support vectors.

Run from the repository root::

    python benchmarks/bench_deploy.py                # a few minutes on 2 cores
    python benchmarks/bench_deploy.py --quick        # small subsets, seconds
    python benchmarks/bench_deploy.py --out deploy.md
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import os
import pickle
import platform
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import DATA_HOME  # noqa: E402
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from sklearn_budget import BudgetedSGDClassifier, Forgetron  # noqa: E402
from sklearn_budget.datasets import fetch_a9a  # noqa: E402

GAMMA = 0.02


def load(quick):
    kw = dict(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    X, y = fetch_a9a(subset="train", **kw)
    X_test, y_test = fetch_a9a(subset="test", **kw)
    if quick:
        X, y, X_test, y_test = X[:3000], y[:3000], X_test[:2000], y_test[:2000]
    # Dense rows: an ONNX graph takes dense tensors only.
    return X.toarray(), y, X_test.toarray(), y_test


def numpy_proba(est):
    """``predict_proba`` of a binary rbf model from its fitted attributes, in NumPy."""
    sv = est.support_vectors_
    sv = np.asarray(sv.toarray() if hasattr(sv, "toarray") else sv)
    sv_sq = np.einsum("ij,ij->i", sv, sv)
    coef, gamma, a = est.dual_coef_[0], est.gamma_, est.proba_scale_

    def proba(X):
        d2 = np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ sv.T + sv_sq
        f = np.exp(-gamma * np.maximum(d2, 0.0)) @ coef
        p1 = 1.0 / (1.0 + np.exp(-a * f))
        return np.column_stack([1.0 - p1, p1])

    return proba


def onnx_session(model, X, dtype):
    """An onnxruntime session (one thread) of ``model``'s graph, and its size in bytes."""
    import onnxruntime as ort
    from skl2onnx import to_onnx

    import sklearn_budget.onnx  # noqa: F401 (registers the converters)

    onx = to_onnx(model, X[:1].astype(dtype), options={id(model): {"zipmap": False}})
    blob = onx.SerializeToString()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(blob, opts, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name

    def proba(X):
        return sess.run(None, {name: X.astype(dtype, copy=False)})[1]

    return proba, len(blob)


def time_one_row(fn, X, repeat):
    times = []
    for i in range(repeat):
        row = X[i % len(X)][None, :]
        t0 = time.perf_counter()
        fn(row)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def time_rows(fn, X):
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        fn(X)
        best = min(best, time.perf_counter() - t0)
    return best / len(X)


def us(seconds):
    return f"{seconds * 1e6:.1f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small subsets (seconds)")
    parser.add_argument("--svc-rows", type=int, default=4000, help="training rows of the SVC")
    parser.add_argument("--repeat", type=int, default=300, help="one-row calls timed")
    parser.add_argument("--out", help="also write the report (markdown) to this file")
    args = parser.parse_args(argv)

    X, y, X_test, y_test = load(args.quick)
    X_block = X_test[:1000]
    svc_rows = min(args.svc_rows, X.shape[0])
    models = {
        "Forgetron(budget=100)": Forgetron(budget=100, gamma=GAMMA, random_state=0),
        "BudgetedSGDClassifier(budget=100)": BudgetedSGDClassifier(
            budget=100, gamma=GAMMA, random_state=0
        ),
        f"SVC (fit on {svc_rows} rows)": CalibratedClassifierCV(SVC(gamma=GAMMA), ensemble=False),
    }

    latency, sizes = [], []
    with threadpool_limits(limits=1):
        for name, model in models.items():
            t0 = time.perf_counter()
            svc = isinstance(model, CalibratedClassifierCV)
            if svc:
                model.fit(X[:svc_rows], y[:svc_rows])
            else:
                model.fit(X, y)
            fit_s = time.perf_counter() - t0
            acc = float((model.predict(X_test) == y_test).mean())
            inner = model.calibrated_classifiers_[0].estimator if svc else model
            ways = {
                "sklearn predict_proba": model.predict_proba,
                "sklearn decision_function": inner.decision_function,
            }
            onnx_bytes = {}
            for dtype in (np.float32, np.float64):
                fn, onnx_bytes[dtype] = onnx_session(model, X_test, dtype)
                # skl2onnx's SVC graph computes in float32 whatever its input.
                exact = dtype is np.float64 and not svc
                np.testing.assert_allclose(
                    fn(X_block), model.predict_proba(X_block), atol=1e-8 if exact else 1e-4
                )
                ways[f"onnxruntime {np.dtype(dtype).name}"] = fn
            if not svc:
                fn = numpy_proba(model)
                np.testing.assert_allclose(fn(X_block), model.predict_proba(X_block), rtol=1e-9)
                ways["numpy formula"] = fn
            base_one = base_block = None
            for way, fn in ways.items():
                one = time_one_row(fn, X_test, args.repeat)
                block = time_rows(fn, X_block)
                if base_one is None:
                    base_one, base_block = one, block
                latency.append(
                    (
                        name,
                        way,
                        us(one),
                        f"{one / base_one:.2f}",
                        us(block),
                        f"{block / base_block:.2f}",
                    )
                )
            n_sv = inner.support_vectors_.shape[0]
            sizes.append(
                (
                    name,
                    f"{acc:.4f}",
                    f"{fit_s:.1f}",
                    str(n_sv),
                    str(len(pickle.dumps(model))),
                    str(onnx_bytes[np.float32]),
                    str(onnx_bytes[np.float64]),
                )
            )

    import onnxruntime
    import skl2onnx
    import sklearn

    lines = [
        "# Deployment: latency and size on a9a",
        "",
        f"{X.shape[0]} training rows, {X_test.shape[0]} test rows, 123 features; rbf, gamma={GAMMA}.",
        f"Python {platform.python_version()}, scikit-learn {sklearn.__version__}, "
        f"skl2onnx {skl2onnx.__version__}, onnxruntime {onnxruntime.__version__}, "
        f"numpy {np.__version__}; one BLAS and one onnxruntime thread; "
        f"load average {os.getloadavg()[0]:.2f}.",
        "",
        "## Latency (microseconds per row; ratio to sklearn predict_proba of the same model)",
        "",
        "| model | predictor | 1 row (us) | ratio | 1000 rows (us/row) | ratio |",
        "|---|---|---:|---:|---:|---:|",
        *("| " + " | ".join(r) + " |" for r in latency),
        "",
        "## Size and accuracy",
        "",
        "| model | test accuracy | fit (s) | support vectors | pickle (bytes) | ONNX float32 (bytes) | ONNX float64 (bytes) |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *("| " + " | ".join(r) + " |" for r in sizes),
    ]
    report = "\n".join(lines)
    print(report)
    if args.out:
        Path(args.out).write_text(report + "\n")


if __name__ == "__main__":
    main()
