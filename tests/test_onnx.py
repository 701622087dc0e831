"""ONNX export (sklearn_budget.onnx): onnxruntime gives what the estimators give.

Skipped without skl2onnx, onnx and onnxruntime, unless
SKLEARN_BUDGET_REQUIRE_ONNX=1 (then missing them fails).

Tolerances. The graph computes the scores in its input's dtype. A score
``f(x) = sum_i a_i k(x, sv_i)`` may cancel, so its error is relative to the
sum of the absolute values of its terms, ``S(x) = sum_i |a_i k(x, sv_i)|``
(``sum_j |w_j x_j| + |b|`` for Winnow): the scores must agree within
``rtol * (|f(x)| + S(x))``, with ``rtol = 1e-5`` in float32 and ``1e-10`` in
float64. A label may differ only on a row whose deciding margin (``|f|``, or
the gap between the two largest scores) is within that tolerance; the
probabilities, whose slope in ``f`` is at most ``proba_scale_``, must agree
within ``rtol * (1 + proba_scale_ * S(x))``.
"""

import os
import subprocess
import sys

import _instances
import numpy as np
import pytest
from conftest import import_or_skip
from scipy.special import expit, softmax
from sklearn.datasets import make_classification
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from sklearn_budget import (
    BudgetPerceptron,
    Forgetron,
    FourierOnlineClassifier,
    KernelMatchingPursuit,
    KernelPerceptron,
    Winnow,
)

_REQUIRE = "SKLEARN_BUDGET_REQUIRE_ONNX"
import_or_skip("onnx", _REQUIRE)
import_or_skip("skl2onnx", _REQUIRE)
ort = import_or_skip("onnxruntime", _REQUIRE)

from skl2onnx import to_onnx  # noqa: E402

import sklearn_budget.onnx as sb_onnx  # noqa: E402

RTOL = {np.float32: 1e-5, np.float64: 1e-10}


def make(cls, **kw):
    """``cls`` with the parameters of the ONNX tests (tests/_instances.py)."""
    return _instances.make(cls, "onnx", **{"random_state": 0, "budget": 12, **kw})


# Every estimator at its defaults (BudgetPerceptron's is averaged), the
# averaged hypothesis of a rule that removes members, and a vote.
ESTIMATORS = _instances.instances("onnx", random_state=0, budget=12)
NAMES = [
    type(e).__name__
    + {True: "(average=True)", "vote": "(average='vote')"}.get(e.get_params().get("average"), "")
    for e in ESTIMATORS
]
KERNELS = list(sb_onnx.ONNX_KERNELS)


def data(n_classes, n=90, seed=0):
    X, y = make_classification(
        n_samples=n,
        n_features=4,
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=seed,
    )
    # Features on different scales, for the scaler of the pipelines.
    return X * np.array([1.0, 3.0, 0.5, 2.0]) + 1.0, y


def run(onx, X, dtype):
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: X.astype(dtype)})


def abs_terms(est, X):
    """``S(x)``: the sum of the absolute terms of each score (see the module docstring)."""
    if isinstance(est, Winnow):
        return np.abs(X) @ np.abs(est.coef_).T + np.abs(est.intercept_)
    if isinstance(est, FourierOnlineClassifier):
        # The error of cos(p) is that of its argument p = x W + b, relative
        # to |x| |W| + |b|: each feature's term is bounded with it.
        W, b = est.random_weights_, est.random_offset_
        size = 1 + np.abs(X) @ np.abs(W) + np.abs(b)
        return np.sqrt(2.0 / W.shape[1]) * size @ np.abs(est.coef_).T
    K = pairwise_kernels(
        X,
        est.support_vectors_,
        metric=est.kernel,
        filter_params=True,
        gamma=est.gamma_,
        degree=est.degree,
        coef0=est.coef0,
    )
    return np.abs(K) @ np.abs(est.dual_coef_).T


def voted_clear_rows(est, X, rtol):
    """Rows on which no hypothesis of a vote is within ``rtol`` of changing its ballot.

    For such rows the graph's votes, in either dtype, must be exactly the
    estimator's.
    """
    K = pairwise_kernels(
        X, est.support_vectors_, metric=est.kernel, filter_params=True, gamma=est.gamma_
    )[:, est.vote_index_]
    terms = K[:, None, :] * est.vote_dual_coef_[None]  # (n, n_classes or 1, n_updates)
    F, S = np.cumsum(terms, axis=2), np.cumsum(np.abs(terms), axis=2)
    tol = rtol * S.max(axis=1)
    clear = np.all((np.abs(F) > rtol * S) | (S == 0), axis=1)
    if F.shape[1] > 1:
        top2 = np.sort(F, axis=1)[:, -2:]
        clear &= (top2[:, 1] - top2[:, 0] > 2 * tol) | (tol == 0)
    return clear.all(axis=1)


def check_outputs(model, X, dtype):
    """Convert ``model`` (an estimator or a pipeline), run it, compare with scikit-learn."""
    est = model[-1] if hasattr(model, "steps") else model
    Xt = model[:-1].transform(X) if hasattr(model, "steps") else X
    rtol = RTOL[dtype]
    binary = len(est.classes_) == 2
    has_proba = hasattr(est, "predict_proba")

    onx = to_onnx(model, X[:1].astype(dtype), options={id(est): {"zipmap": False}})
    label, second = run(onx, X, dtype)
    assert second.dtype == dtype
    onx_raw = to_onnx(
        model, X[:1].astype(dtype), options={id(est): {"zipmap": False, "raw_scores": True}}
    )
    label_raw, raw = run(onx_raw, X, dtype)
    np.testing.assert_array_equal(label_raw, label)
    if not has_proba:
        np.testing.assert_array_equal(raw, second)

    f = est.decision_function(Xt)
    F = np.column_stack([-f, f]) if binary else f
    assert raw.shape == F.shape
    if isinstance(est.get_params().get("average"), str):
        # A vote: shares of whole ballots, equal on the rows where no
        # hypothesis is near a change of ballot (most of them).
        clear = voted_clear_rows(est, Xt, rtol)
        assert clear.mean() > 0.8
        np.testing.assert_allclose(raw[clear], F[clear], rtol=rtol, atol=rtol)
        np.testing.assert_array_equal(label[clear], model.predict(X)[clear])
        np.testing.assert_allclose(second[clear], model.predict_proba(X)[clear], rtol=rtol)
        return onx
    S = abs_terms(est, Xt)
    tol = rtol * (np.abs(F) + (np.column_stack([S, S]) if binary else S))
    err = np.abs(raw - F)
    assert np.all(err <= tol), f"scores off by {(err / np.maximum(tol, 1e-300)).max():.3g} tol"

    # Labels: equal wherever the decision is clear within the tolerance.
    if binary:
        margin, margin_tol = np.abs(f), tol[:, 1]
    else:
        top2 = np.sort(f, axis=1)[:, -2:]
        margin, margin_tol = top2[:, 1] - top2[:, 0], 2 * tol.max(axis=1)
    clear = margin > margin_tol
    np.testing.assert_array_equal(label[clear], model.predict(X)[clear])
    assert set(label) <= set(est.classes_)

    if has_proba:
        p = model.predict_proba(X)
        S_row = S[:, 0] if binary else S.max(axis=1)
        ptol = rtol * (1 + est.proba_scale_ * S_row)[:, None]
        assert second.shape == p.shape
        assert np.all(np.abs(second - p) <= ptol)
    return onx


@pytest.mark.parametrize("est", ESTIMATORS, ids=NAMES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_estimator_outputs_match(est, n_classes):
    X, y = data(n_classes)
    alone = est.__class__(**est.get_params())
    alone.fit(StandardScaler().fit_transform(X), y)
    pipe = make_pipeline(StandardScaler(), est.__class__(**est.get_params())).fit(X, y)
    Xs = StandardScaler().fit(X).transform(X)
    for dtype in (np.float32, np.float64):
        check_outputs(alone, Xs, dtype)
        check_outputs(pipe, X, dtype)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("cls", [KernelPerceptron, KernelMatchingPursuit], ids=lambda c: c.__name__)
def test_kernel_outputs_match(kernel, n_classes, cls):
    X, y = data(n_classes)
    # The chi2 kernels take non-negative input; the sigmoid kernel wants a
    # small gamma to stay out of saturation.
    scaler = MinMaxScaler() if "chi2" in kernel else StandardScaler()
    gamma = 0.1 if kernel == "sigmoid" else "scale"
    params = dict(kernel=kernel, gamma=gamma, degree=2, coef0=1.0)
    if cls is KernelPerceptron:
        params.update(max_iter=2, random_state=0)
    else:
        params.update(budget=15)
    alone = cls(**params).fit(scaler.fit_transform(X), y)
    pipe = make_pipeline(scaler, cls(**params)).fit(X, y)
    for dtype in (np.float32, np.float64):
        check_outputs(alone, scaler.fit(X).transform(X), dtype)
        check_outputs(pipe, X, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pipeline_with_encoder(dtype):
    """Scaled numeric columns and one-hot categories, then the estimator."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.RandomState(0)
    X = np.hstack([rng.randn(120, 3), rng.randint(0, 3, size=(120, 2))])
    y = (X[:, 0] + (X[:, 3] == 1) > 0.3).astype(int)
    columns = ColumnTransformer(
        [
            ("num", StandardScaler(), [0, 1, 2]),
            ("cat", OneHotEncoder(sparse_output=False, handle_unknown="ignore"), [3, 4]),
        ]
    )
    model = make_pipeline(columns, Forgetron(budget=15, random_state=0)).fit(X, y)
    check_outputs(model, X, dtype)


def test_options_zipmap_nocl_class_labels_and_string_labels():
    X, y = data(3)
    names = np.array(["ant", "bee", "cat"])[y]
    est = Forgetron(budget=12, random_state=0).fit(X, names)
    X32 = X.astype(np.float32)
    proba = est.predict_proba(X)

    # zipmap (the default): one {class: probability} dict per row.
    label, maps = run(to_onnx(est, X32[:1]), X, np.float32)
    np.testing.assert_array_equal(label, est.predict(X))
    assert list(maps[0]) == ["ant", "bee", "cat"]
    got = np.array([[m[c] for c in est.classes_] for m in maps])
    np.testing.assert_allclose(got, proba, atol=1e-5)

    # zipmap="columns": one output per class.
    outputs = run(to_onnx(est, X32[:1], options={"zipmap": "columns"}), X, np.float32)
    np.testing.assert_allclose(np.column_stack(outputs[1:]), proba, atol=1e-5)

    # nocl: the index of the class; output_class_labels: the classes.
    opts = {"zipmap": False, "nocl": True}
    index, _ = run(to_onnx(est, X32[:1], options=opts), X, np.float32)
    assert index.dtype == np.int64
    opts = {"zipmap": False, "output_class_labels": True}
    label, _, classes = run(to_onnx(est, X32[:1], options=opts), X, np.float32)
    np.testing.assert_array_equal(classes, est.classes_)
    np.testing.assert_array_equal(classes[index], label)

    # The public helper, on float64.
    label, p = run(sb_onnx.to_onnx(est, X[:1], options={"zipmap": False}), X, np.float64)
    np.testing.assert_array_equal(label, est.predict(X))
    np.testing.assert_allclose(p, proba, rtol=1e-10, atol=1e-12)


def test_sparse_support_vectors_and_boolean_labels():
    import scipy.sparse as sp

    X, y = data(2)
    X = StandardScaler().fit_transform(X)
    est = Forgetron(budget=12, random_state=0).fit(sp.csr_matrix(X), y.astype(bool))
    assert sp.issparse(est.support_vectors_)
    label, p = run(to_onnx(est, X[:1], options={"zipmap": False}), X, np.float64)
    np.testing.assert_array_equal(label.astype(bool), est.predict(X))
    np.testing.assert_allclose(p, est.predict_proba(X), rtol=1e-10, atol=1e-12)


def test_probabilities_are_the_formula():
    """The documented formula, outside the estimator: what the graph computes."""
    X, y = data(2)
    X = StandardScaler().fit_transform(X)
    est = BudgetPerceptron(budget=12).fit(X, y)
    K = pairwise_kernels(X, est.support_vectors_, metric="rbf", gamma=est.gamma_)
    f = K @ est.dual_coef_[0]
    a = est.proba_scale_
    _, p = run(to_onnx(est, X[:1], options={"zipmap": False}), X, np.float64)
    np.testing.assert_allclose(p, np.column_stack([expit(-a * f), expit(a * f)]), rtol=1e-10)
    X3, y3 = data(3)
    est3 = BudgetPerceptron(budget=12).fit(X3, y3)
    K3 = pairwise_kernels(X3, est3.support_vectors_, metric="rbf", gamma=est3.gamma_)
    f3 = K3 @ est3.dual_coef_.T
    _, p3 = run(to_onnx(est3, X3[:1], options={"zipmap": False}), X3, np.float64)
    np.testing.assert_allclose(p3, softmax(est3.proba_scale_ * f3, axis=1), rtol=1e-10)


@pytest.mark.parametrize("cls", _instances.all_estimators("votes"), ids=lambda c: c.__name__)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_voted_outputs_match(cls, n_classes, kernel):
    X, y = data(n_classes)
    X = StandardScaler().fit_transform(X)
    est = make(cls, average="vote", kernel=kernel, max_iter=3).fit(X, y)
    if cls is KernelPerceptron:  # rows that joined again: repeated kernel columns
        assert len(est.vote_index_) > est.support_vectors_.shape[0]
    for dtype in (np.float32, np.float64):
        check_outputs(est, X, dtype)


def test_callable_kernel_is_refused_by_name():
    def my_kernel(a, b):
        return float(np.dot(a, b))

    X, y = data(2, n=30)
    est = KernelPerceptron(kernel=my_kernel, max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="kernel='my_kernel' cannot be converted to ONNX"):
        to_onnx(est, X[:1].astype(np.float32))


def test_unfitted_model_is_refused():
    with pytest.raises(ValueError, match="not fitted"):
        to_onnx(Forgetron(), np.zeros((1, 3), dtype=np.float32))


def test_importing_the_package_does_not_import_skl2onnx():
    code = (
        "import sys, sklearn_budget; sys.exit('skl2onnx' in sys.modules or 'onnx' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], env=dict(os.environ)).returncode == 0
