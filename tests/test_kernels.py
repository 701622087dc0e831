"""The kernel module against sklearn.metrics.pairwise."""

import contextlib
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from joblib import parallel_config, register_parallel_backend
from joblib._parallel_backends import ThreadingBackend
from sklearn.metrics.pairwise import (
    PAIRWISE_KERNEL_FUNCTIONS,
    pairwise_kernels,
    polynomial_kernel,
    rbf_kernel,
)
from sklearn.svm import SVC

from sklearn_budget import KernelPerceptron, _kernels, _scoring
from sklearn_budget.kernels import KERNELS, Kernel, resolve_gamma

PARAMS = dict(gamma=0.3, degree=2, coef0=0.5)


def data(sparse, nonneg=False):
    rng = np.random.RandomState(0)
    X = rng.randn(30, 6)
    X[2] = 0.0  # a zero row (cosine maps it to zero)
    X[rng.rand(30, 6) < 0.3] = 0.0
    X = np.abs(X) if nonneg else X
    return sp.csr_matrix(X) if sparse else X


def test_every_pairwise_kernel_name_except_precomputed():
    from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS

    assert set(KERNELS) == set(PAIRWISE_KERNEL_FUNCTIONS) - {"precomputed"}


# The chi2 kernels are defined for dense input only.
CASES = [
    (name, sparse)
    for name in KERNELS
    for sparse in (False, True)
    if not (sparse and "chi2" in name)
]


@pytest.mark.parametrize("name, sparse", CASES)
def test_matrix_and_diagonal_match_pairwise_kernels(name, sparse):
    X = data(sparse, nonneg="chi2" in name)
    k = Kernel(name, **PARAMS)
    expected = pairwise_kernels(X, X, metric=name, filter_params=True, **PARAMS)
    np.testing.assert_allclose(k(X, X), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.diag(X), np.diag(expected), rtol=1e-12, atol=1e-12)


def test_callable_kernel_with_params():
    def k_fn(a, b, scale=1.0):
        return scale * float(np.dot(a, b)) + 1.0

    X = data(False)
    k = Kernel(k_fn, kernel_params={"scale": 2.0})
    expected = 2.0 * X @ X.T + 1.0
    np.testing.assert_allclose(k(X, X), expected)
    np.testing.assert_allclose(k.diag(X), np.diag(expected))
    est = KernelPerceptron(kernel=k_fn, kernel_params={"scale": 2.0}, max_iter=1)
    est.partial_fit(X[:10], np.arange(10) % 2, classes=[0, 1])
    assert est.n_mistakes_ >= 1


@pytest.mark.parametrize("name", ["n_jobs", "metric"])
def test_callable_kernel_params_reserved_by_pairwise_kernels(name):
    # pairwise_kernels would take these as its own arguments: say so, not
    # "returned values that are not numbers".
    def k_fn(a, b, **kwargs):
        return float(np.dot(a, b))

    X = data(False)
    est = KernelPerceptron(kernel=k_fn, kernel_params={name: 2})
    with pytest.raises(ValueError, match=f"kernel_params may not contain '{name}'"):
        est.fit(X[:10], np.arange(10) % 2)
    assert not hasattr(est, "classes_")


class AllWorkersBackend(ThreadingBackend):
    """Threads that, like joblib's dask backend, count every worker whatever
    ``n_jobs`` is asked for (so ``parallel_config(n_jobs=1)`` does not hold)."""

    def effective_n_jobs(self, n_jobs):
        return 2


register_parallel_backend("all_workers", AllWorkersBackend)

# joblib contexts in which pairwise_kernels(n_jobs=None) splits its work.
JOBLIB_CONTEXTS = {
    "threading-2": [dict(backend="threading", n_jobs=2)],
    "all-workers": [dict(backend="all_workers")],
    "all-workers-n_jobs-1": [dict(backend="all_workers"), dict(n_jobs=1)],
}


@pytest.mark.parametrize("context", JOBLIB_CONTEXTS, ids=str)
def test_kernel_matrix_is_computed_in_one_block_in_any_joblib_context(context, monkeypatch):
    # With n_jobs=None, pairwise_kernels splits the columns into one block
    # per worker of joblib's active backend, and a block's BLAS product may
    # round differently from the whole one: a model would depend on the
    # context it is trained in (ParameterMixingClassifier under dask).
    # (The rbf kernel of dense float64 rows is one product of the package's
    # own, outside pairwise_kernels: checked to the bit below.)
    blocks = []

    def poly(X, Y=None, **params):
        blocks.append(Y.shape[0])
        return polynomial_kernel(X, Y, **params)

    monkeypatch.setitem(PAIRWISE_KERNEL_FUNCTIONS, "poly", poly)
    X = data(False)
    with contextlib.ExitStack() as stack:
        for config in JOBLIB_CONTEXTS[context]:
            stack.enter_context(parallel_config(**config))
        K = Kernel("poly", gamma=0.3, degree=3, coef0=1.0)(X, X[:20])
        K_rbf = Kernel("rbf", gamma=0.3)(X, X[:20])
    assert blocks == [20]
    np.testing.assert_array_equal(K, polynomial_kernel(X, X[:20], degree=3, gamma=0.3, coef0=1.0))
    np.testing.assert_array_equal(K_rbf, rbf_kernel(X, X[:20], gamma=0.3))


def test_empty_sets_give_empty_matrices():
    X = data(False)
    assert Kernel("rbf", gamma=1.0)(X, X[:0]).shape == (30, 0)
    assert Kernel("rbf", gamma=1.0)(X[:0], X).shape == (0, 30)


@pytest.mark.parametrize("sparse", [False, True])
def test_gamma_scale_and_auto_match_svc(sparse):
    X = data(sparse) * 3.0
    y = np.arange(30) % 2
    for gamma in ("scale", "auto"):
        svc = SVC(gamma=gamma).fit(X, y)
        assert resolve_gamma(gamma, X) == pytest.approx(svc._gamma, rel=1e-12)
    assert resolve_gamma(0.25, X) == 0.25


def _square_cases():
    X = data(True) * 3.0
    dup = sp.csr_matrix(([1.0, 2.0, 3.0], [1, 1, 0], [0, 2, 3]), shape=(2, 3))
    unsorted = sp.csr_matrix(([1.0, 2.0, 3.0], [2, 0, 1], [0, 2, 3]), shape=(2, 3))
    tiny = X.copy()
    tiny.data[3] = 1e-200  # its square underflows to zero: scipy's product drops it
    stored_zero = X.copy()
    stored_zero.data[5] = 0.0
    # Enough entries (of spread magnitudes) for numpy's pairwise sums to
    # group them in blocks: the sums of the values, not scipy's matrices.
    rng = np.random.RandomState(4)
    large = sp.random(400, 300, density=0.2, format="csr", random_state=rng)
    large.data *= 10.0 ** rng.uniform(-6, 6, large.nnz)
    shifted = large.copy()  # a mean that weighs in the variance
    shifted.data = 1e3 + rng.uniform(0, 1, large.nnz)
    return {
        "canonical": X,
        "large": large,
        "large, shifted": shifted,
        "csr_array": sp.csr_array(X),
        "float32": X.astype(np.float32),
        "int64 indices": sp.csr_matrix(
            (X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)), shape=X.shape
        ),
        "duplicates": dup,
        "unsorted": unsorted,
        "underflow": tiny,
        "stored zero": stored_zero,
        "csc": X.tocsc(),
    }


@pytest.mark.parametrize("case", list(_square_cases()))
def test_squares_of_sparse_rows_are_scipys_product(case):
    # gamma='scale' sums the squares of the entries: the same matrix as
    # scipy's X.multiply(X), hence the same gamma (the same bits), whatever
    # the rows' form.
    from sklearn_budget._kernels import _squares, entry_variance

    X = _square_cases()[case]
    expected = sp.csr_matrix(X.multiply(X))
    got = sp.csr_matrix(_squares(X))
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(got, name), getattr(expected, name))
    n = X.shape[0] * X.shape[1]
    assert entry_variance(X) == X.multiply(X).sum() / n - (X.sum() / n) ** 2


@pytest.mark.parametrize("name, sparse", CASES)
def test_abs_bound_bounds_every_kernel_value(name, sparse):
    # The engine's candidate test relies on this bound (None: unknown).
    X = data(sparse, nonneg="chi2" in name) * 4.0
    Y = X[::-1] * 0.5
    k = Kernel(name, **PARAMS)
    for A, B in [(X, Y), (Y, X)]:
        bound = k.abs_bound(k.diag(A), k.diag(B))
        if bound is not None:
            assert np.abs(k(A, B)).max() <= bound * (1 + 1e-12)
    assert name not in ("rbf", "laplacian", "linear") or bound is not None


@pytest.mark.parametrize("name", ["laplacian", "rbf", "linear"])
def test_sparse_input_with_64_bit_indices(name):
    # scipy gives 64-bit indices to large or stacked matrices; scikit-learn's
    # sparse Manhattan distances (the laplacian kernel) accept 32-bit only.
    X = sp.random(30, 6, density=0.4, format="csr", random_state=0)
    X64 = X.copy()
    X64.indices = X64.indices.astype(np.int64)
    X64.indptr = X64.indptr.astype(np.int64)
    k = Kernel(name, gamma=0.3)
    expected = pairwise_kernels(X.toarray(), metric=name, filter_params=True, gamma=0.3)
    np.testing.assert_allclose(k(X64, X64), expected, rtol=1e-12, atol=1e-15)
    assert X64.indices.dtype == np.int64  # the caller's matrix is untouched
    clf = KernelPerceptron(kernel=name, gamma=0.3).fit(X64, np.arange(30) % 2)
    np.testing.assert_array_equal(clf.predict(X64), clf.predict(X.toarray()))


def test_single_blas_thread_limits_numpys_blas():
    # The averaged models and the rounds run their small products inside
    # single_blas_thread(), so that a model has the same bits in any process
    # (a cluster's workers run BLAS on one thread). A threadpoolctl that does
    # not find numpy's BLAS (3.1 with the OpenBLAS numpy 2 ships) applies
    # no limit, silently: the products then split their sums over threads.
    from threadpoolctl import threadpool_info

    from sklearn_budget._kernels import single_blas_thread

    np.ones((2, 2)) @ np.ones((2, 2))  # numpy's BLAS loaded
    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert blas, "threadpoolctl finds no BLAS library: it cannot limit numpy's"
    with single_blas_thread():
        assert all(
            lib["num_threads"] == 1 for lib in threadpool_info() if lib["user_api"] == "blas"
        )


def _lopsided(x, y):
    # Not symmetric: k(x, y) != k(y, x), so that a matrix of rows with
    # themselves, which scikit-learn mirrors, shows.
    x, y = (v.toarray().ravel() if sp.issparse(v) else v for v in (x, y))
    return float(x @ y + 0.5 * x[0])


@pytest.mark.parametrize("sparse", [False, True])
def test_expansion_scores_rows_as_one_block_without_a_copy(sparse):
    # Rows that fit in one block are scored as they are (slicing CSR rows
    # copies them), except the support vectors themselves: the kernel of a
    # matrix with itself is mirrored, not computed, and the scores must be
    # those of any other matrix of the same rows.
    X = data(sparse)
    S = X[:7]
    coef = np.random.RandomState(0).randn(2, 7)
    for name in ("rbf", _lopsided):
        kernel = Kernel(name, gamma=0.3)
        expected = np.asarray(kernel(X, S.copy())) @ coef.T
        np.testing.assert_array_equal(kernel.expansion(X, S, coef), expected)
        expected = np.asarray(kernel(S.copy(), S)) @ coef.T
        np.testing.assert_array_equal(kernel.expansion(S, S, coef), expected)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_rows", [256, 257, 300])
def test_expansion_computes_blocks_of_bounded_size(monkeypatch, sparse, n_rows):
    # A large expansion computes its kernel values a block of rows at a time,
    # blocks of the most multiple of 64 rows within _EXPANSION_VALUES values,
    # the rows left over joining the last (the largest, computed first),
    # where working_memory would take them all at once; the scores are those
    # of one block to round-off.
    rng = np.random.RandomState(0)
    X, S = rng.randn(n_rows, 5), rng.randn(40, 5)
    if sparse:
        X, S = sp.csr_matrix(X), sp.csr_matrix(S)
    coef = rng.randn(2, 40)
    kernel = Kernel("rbf", gamma=0.3)
    expected = rbf_kernel(X, S, gamma=0.3) @ coef.T
    monkeypatch.setattr(_kernels, "_EXPANSION_VALUES", 64 * 40 + 39)
    rows = []
    if sparse:
        original = _kernels.sparse_rbf_exponents

        def spy(A, *args):
            rows.append(A.shape[0])
            return original(A, *args)

        monkeypatch.setattr(_kernels, "sparse_rbf_exponents", spy)
    else:
        monkeypatch.setattr(
            Kernel, "__call__", lambda self, A, B: rows.append(A.shape[0]) or rbf_kernel(A, B, 0.3)
        )
    scores = kernel.expansion(X, S, coef)
    last = n_rows - 64 * (len(rows) - 1)
    assert rows == [last] + [64] * (len(rows) - 1)
    assert 64 <= last < 128 and len(rows) == n_rows // 64
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12 * np.abs(coef).sum())


def test_sparse_expansion_walks_one_index_of_the_support_vectors(monkeypatch):
    # Sparse rows of many features scored in several blocks: the support
    # vectors are indexed by feature once (row_index) and each block walks
    # its own entries; the scores are those of rbf_kernel block by block, to
    # the bit, as without the index.
    rng = np.random.RandomState(3)

    def wide(n):
        idx = np.concatenate([np.sort(rng.choice(3000, 12, replace=False)) for _ in range(n)])
        data = rng.uniform(-2, 2, idx.size)
        return sp.csr_matrix((data, idx, np.arange(0, idx.size + 1, 12)), shape=(n, 3000))

    X, S, coef = wide(300), wide(400), rng.randn(2, 400)
    kernel = Kernel("rbf", gamma=0.2)
    monkeypatch.setattr(_kernels, "_EXPANSION_VALUES", 64 * 400)
    original, made = _kernels.row_index, []
    assert original(kernel, S) is not None
    monkeypatch.setattr(_kernels, "row_index", lambda k, Z: made.append(Z) or original(k, Z))
    scores = kernel.expansion(X, S, coef)
    assert len(made) == 1 and made[0] is S
    expected = np.empty((300, 2))
    for sl in _kernels.expansion_batches(300, 400):
        expected[sl] = rbf_kernel(X[sl], S, gamma=0.2) @ coef.T
    np.testing.assert_array_equal(scores, expected)
    monkeypatch.setattr(_kernels, "row_index", lambda k, Z: None)
    np.testing.assert_array_equal(kernel.expansion(X, S, coef), scores)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_dense_expansion_takes_one_formula_for_all_its_blocks(monkeypatch):
    # Dense rows of a compiled kernel: the blocked formula or the rows'
    # differences, chosen for all the rows of the call (a block of 64 rows
    # alone would take the differences), and every block from the
    # differences where the blocked formula overflows in one of them, as
    # one block of all the rows would be.
    rng = np.random.RandomState(0)
    X, y = rng.randn(400, 50), rng.randint(0, 2, 400)
    est = KernelPerceptron(gamma=0.01, max_iter=1, random_state=0).fit(X, y)
    m = est.support_vectors_.shape[0]
    Xp = rng.randn(1000, 50)
    assert m > 100 and est._by_differences(64, m, 50)
    assert not est._by_differences(1000, m, 50)
    monkeypatch.setattr(_kernels, "_EXPANSION_VALUES", 64 * m)
    differences = []
    original = _scoring.kernel_values

    def spy(kernel, code, A, B):
        differences.append(A.shape[0])
        return original(kernel, code, A, B)

    monkeypatch.setattr(_scoring, "kernel_values", spy)
    expected = est.decision_function(Xp)
    assert differences == []
    blocked = []
    call = Kernel.__call__

    def overflowing(self, A, B):
        blocked.append(A.shape[0])
        K = call(self, A, B)
        return np.full_like(K, np.nan) if len(blocked) == 3 else K

    monkeypatch.setattr(Kernel, "__call__", overflowing)
    scores = est.decision_function(Xp)
    assert blocked == [64, 64, 64]
    assert differences == [64] * 14 + [104]
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12 * np.abs(est.dual_coef_).sum())


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("sparse", [False, True])
def test_decision_function_holds_a_bounded_block_of_kernel_values(sparse):
    # 3,000 rows against about 1,500 members are 36 MB of kernel values in one
    # block, which the default working_memory (1 GiB) allows; the blocks of an
    # expansion hold about _EXPANSION_VALUES of them (8 MiB), the last fewer
    # than twice as many.
    rng = np.random.RandomState(0)
    X = rng.randn(3000, 8)
    y = rng.randint(0, 2, 3000)  # noise: about half the rows become members
    X = sp.csr_matrix(X) if sparse else X
    est = KernelPerceptron(max_iter=1, random_state=0).fit(X, y)
    assert est.support_vectors_.shape[0] > 1000
    tracemalloc.start()
    try:
        est.decision_function(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    whole = 8 * X.shape[0] * est.support_vectors_.shape[0]
    assert whole > 4 * 8 * _kernels._EXPANSION_VALUES
    assert peak < 2.5 * 8 * _kernels._EXPANSION_VALUES
