"""The same model and the same scores whatever the number of BLAS threads.

A BLAS product run on several threads may sum its terms in another order
than on one (OpenBLAS's gemm does for the kernel blocks of high-dimensional
dense rows): the estimators run theirs on one thread, so that a fit under
two threads gives the bits of the fit under one. The conftest pins one
thread for the whole session; these tests allow two inside it.
"""

import os

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from sklearn_budget import (
    Forgetron,
    KernelMatchingPursuit,
    KernelPerceptron,
    NystroemOnlineClassifier,
    ProjectronPlusPlus,
    Winnow,
)


@pytest.fixture(scope="module")
def two_threads():
    """Skip (not pass) where two BLAS threads do not exist to compare with one."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: two BLAS threads would not run in parallel")
    with threadpool_limits(limits=2, user_api="blas"):
        counts = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    if not counts or max(counts) < 2:
        pytest.skip("the BLAS library cannot run two threads here")


def _stream(n_rows, n_features, seed=0, n_classes=2):
    """Dense rows, noisy labels: many updates, so that the support set grows
    and, in high dimension, the kernel blocks are large BLAS products."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((n_rows, n_features))
    s = X @ rng.standard_normal(n_features) + 3 * rng.standard_normal(n_rows)
    y = np.digitize(s, np.quantile(s, np.arange(1, n_classes) / n_classes))
    return X, 2 * y - 1 if n_classes == 2 else y


def _fitted(make, X, y, X_new, partial):
    est = make()
    if partial:
        half = X.shape[0] // 2
        est.partial_fit(X[:half], y[:half], classes=[-1, 1])
        est.partial_fit(X[half:], y[half:])
    else:
        est.fit(X, y)
    out = {"state." + k: v for k, v in est._state.items() if isinstance(v, np.ndarray)}
    out["support_vectors_"] = est.support_vectors_
    out["dual_coef_"] = est.dual_coef_
    out["decision_function"] = est.decision_function(X_new)
    out["predict_proba"] = est.predict_proba(X_new)
    return out


@pytest.mark.parametrize("partial", [False, True], ids=["fit", "partial_fit"])
@pytest.mark.parametrize(
    "make",
    [
        # The Projectron++'s running sums differed in their last bits
        # between one and two threads (its kernel blocks, 1000 features).
        lambda: ProjectronPlusPlus(random_state=0),
        # Compressions of the averaged model's pool (4 budget members that
        # left each), and the averaged margins of the probabilities.
        lambda: Forgetron(budget=20, average=True, random_state=0),
        lambda: KernelPerceptron(average=False, random_state=0),
    ],
    ids=["ProjectronPlusPlus", "Forgetron-averaged", "KernelPerceptron"],
)
def test_same_bits_with_one_or_two_blas_threads(two_threads, make, partial):
    X, y = _stream(700, 1000)
    X_new = _stream(50, 1000, seed=1)[0]
    with threadpool_limits(limits=1, user_api="blas"):
        one = _fitted(make, X, y, X_new, partial)
    with threadpool_limits(limits=2, user_api="blas"):
        two = _fitted(make, X, y, X_new, partial)
    assert one.keys() == two.keys()
    differ = [name for name in one if not np.array_equal(one[name], two[name])]
    assert not differ, f"different bits with two BLAS threads: {differ}"


def test_the_pin_holds_until_the_last_context_leaves(two_threads):
    # Estimators fitted in concurrent threads share the process's limit:
    # one leaving its context must not give the other BLAS threads back.
    from sklearn_budget._kernels import single_blas_thread

    def threads():
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    with threadpool_limits(limits=2, user_api="blas"):
        outer, inner = single_blas_thread(), single_blas_thread()
        outer.__enter__()
        inner.__enter__()
        outer.__exit__(None, None, None)
        assert threads() == {1}
        inner.__exit__(None, None, None)
        assert threads() == {2}


@pytest.mark.parametrize(
    "make, n_rows, n_features, n_classes",
    [
        # Its fit's products (the selection's correlations, the refit).
        (lambda: KernelMatchingPursuit(budget=150, random_state=0), 700, 1000, 3),
        # The scores of three classes, one product of 1500 features.
        (lambda: Winnow(random_state=0), 500, 1500, 3),
        # The eigenvectors and products of its map, once 300 landmarks are held.
        (lambda: NystroemOnlineClassifier(budget=300, random_state=0), 800, 20, 2),
    ],
    ids=["KernelMatchingPursuit", "Winnow", "NystroemOnlineClassifier"],
)
def test_same_fitted_attributes_with_one_or_two_blas_threads(
    two_threads, make, n_rows, n_features, n_classes
):
    X, y = _stream(n_rows, n_features, n_classes=n_classes)
    X_new = _stream(300, n_features, seed=1)[0]
    fitted = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            est = make().fit(X, y)
            coef = est.coef_ if hasattr(est, "coef_") else est.dual_coef_
            fitted.append([coef, est.decision_function(X_new), est.predict_proba(X_new)])
    names = ["coefficients", "decision_function", "predict_proba"]
    differ = [name for name, a, b in zip(names, *fitted) if not np.array_equal(a, b)]
    assert not differ, f"different bits with two BLAS threads: {differ}"
