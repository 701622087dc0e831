"""The fast engine against a plain per-sample implementation.

The reference below is written from the papers and ``doc/decisions.rst``
with no batching at all: one row at a time, scores from ``pairwise_kernels``
against the members kept in insertion order. The estimators must make the
same mistakes, keep the same support set and reach the same coefficients.
"""

import _instances
import numpy as np
import pytest
import scipy.sparse as sp
from _budget_references import GROWING_CASES, perceptron_rule, stoptron_rule
from sklearn.metrics.pairwise import pairwise_kernels

from sklearn_budget import Forgetron, KernelPassiveAggressive, KernelPerceptron, Stoptron
from sklearn_budget._rounds import _BLOCK_SIZE

# Every test runs on both sources of kernel values (see conftest.kernel_path).
pytestmark = pytest.mark.usefixtures("kernel_path")

KERNEL_PARAMS = {
    "rbf": dict(gamma=0.5),
    "linear": dict(),
    "poly": dict(gamma=0.5, degree=2, coef0=1.0),
}


def reference_run(X, y, classes, rule, kernel, kernel_kw, weights=None, index=None, average=False):
    """Per-sample kernel online learner.

    ``rule(margin, kxx, n_members)`` returns the step ``tau`` (0 or None: no
    update) of the round. Returns ``(mistakes, support_index, coef)`` with the
    support sorted by index and duplicated indices summed, as the estimators
    report them.
    """
    n = X.shape[0]
    classes = list(classes)
    C = 1 if len(classes) == 2 else len(classes)
    index = np.arange(n) if index is None else index
    weights = np.ones(n) if weights is None else weights
    members = []  # [stream index, row, coefficient vector]
    sums = {}  # average: sum over rounds of each member's coefficients
    mistakes = rounds = 0
    for t in range(n):
        x = X[t : t + 1]
        if members:
            S = (
                sp.vstack([m[1] for m in members])
                if sp.issparse(X)
                else np.vstack([m[1] for m in members])
            )
            k = pairwise_kernels(x, S, metric=kernel, **kernel_kw)[0]
            f = np.array([m[2] for m in members]).T @ k
        else:
            f = np.zeros(C)
        rounds += 1
        if average:
            for pos, m in enumerate(members):
                sums.setdefault(m[0], np.zeros(C))
                sums[m[0]] = sums[m[0]] + m[2]
        c = classes.index(y[t])
        if C == 1:
            s = 1.0 if c == 1 else -1.0
            margin = s * f[0]
            direction = np.array([s])
            sq = 1.0
        else:
            others = [f[i] for i in range(C) if i != c]
            r = [i for i in range(C) if i != c][int(np.argmax(others))]
            margin = f[c] - f[r]
            direction = np.zeros(C)
            direction[c], direction[r] = 1.0, -1.0
            sq = 2.0
        if margin <= 0:
            mistakes += 1
        kxx = pairwise_kernels(x, x, metric=kernel, **kernel_kw)[0, 0]
        tau = rule(margin, sq * kxx, len(members))
        if tau:
            members.append([index[t], x, weights[t] * tau * direction])
    if average:
        total = {}
        for key, val in sums.items():
            total[key] = total.get(key, 0) + val / rounds
        support = np.array(sorted(total))
        coef = np.array([total[i] for i in support]).T.reshape(C, -1)
        return mistakes, support, coef
    total = {}
    for i, _, a in members:
        total[i] = total.get(i, 0) + a
    support = np.array(sorted(total), dtype=int)
    coef = np.array([total[i] for i in support]).T.reshape(C, -1)
    return mistakes, support, coef


CASES = GROWING_CASES


def make_stream(n, n_classes, sparse, seed=0, n_features=5):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    if sparse:
        X[rng.rand(n, n_features) < 0.4] = 0.0
    w = rng.randn(n_classes, n_features)
    y = np.argmax(X @ w.T + 0.8 * rng.randn(n, n_classes), axis=1)
    labels = np.array(["ant", "bee", "cat", "dog"])[:n_classes]
    return (sp.csr_matrix(X) if sparse else X), labels[y]


def assert_same(est, ref):
    mistakes, support, coef = ref
    assert est.n_mistakes_ == mistakes
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef, rtol=0, atol=1e-10)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kernel", sorted(KERNEL_PARAMS))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n", [40, _BLOCK_SIZE + 90])
def test_partial_fit_matches_reference(case, kernel, n_classes, sparse, n):
    make, rule = CASES[case]
    X, y = make_stream(n, n_classes, sparse, seed=n + n_classes)
    classes = np.unique(y)
    est = make(kernel=kernel, **KERNEL_PARAMS[kernel]).partial_fit(X, y, classes=classes)
    ref = reference_run(X, y, classes, rule, kernel, KERNEL_PARAMS[kernel])
    assert ref[1].size > 0
    assert_same(est, ref)
    # The fitted model predicts with exactly the reference's hypothesis.
    S = X[ref[1]]
    expected = pairwise_kernels(X, S, metric=kernel, **KERNEL_PARAMS[kernel]) @ ref[2].T
    scores = est.decision_function(X)
    np.testing.assert_allclose(scores, expected[:, 0] if n_classes == 2 else expected, atol=1e-9)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_average_matches_reference(case, n_classes):
    make, rule = CASES[case]
    X, y = make_stream(_BLOCK_SIZE + 60, n_classes, False, seed=3)
    classes = np.unique(y)
    est = make(gamma=0.5, average=True).partial_fit(X, y, classes=classes)
    ref = reference_run(X, y, classes, rule, "rbf", dict(gamma=0.5), average=True)
    assert_same(est, ref)


def test_updates_at_block_edges():
    # Rows far from all others have kernel values that underflow to zero, so
    # f = 0 there and the Perceptron must err: rounds 0, b - 1, b, 2b - 1.
    b = _BLOCK_SIZE
    X, y = make_stream(2 * b + 5, 2, False, seed=7)
    far = [0, b - 1, b, 2 * b - 1]
    X[far] += 1e3 * np.arange(1, 5)[:, None]
    classes = np.unique(y)
    ref = reference_run(X, y, classes, perceptron_rule, "rbf", dict(gamma=0.5))
    assert set(far) <= set(ref[1].tolist())
    est = KernelPerceptron(gamma=0.5, average=False).partial_fit(X, y, classes=classes)
    assert_same(est, ref)


@pytest.mark.parametrize("case", ["perceptron", "pa1", "stoptron"])
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_splits_give_the_same_model(case, sparse):
    make, _ = CASES[case]
    X, y = make_stream(700, 3, sparse, seed=11)
    classes = np.unique(y)
    whole = make(gamma=0.5, average=True).partial_fit(X, y, classes=classes)
    split = make(gamma=0.5, average=True)
    for a, b in [(0, 1), (1, 2), (2, 255), (255, 257), (257, 300), (300, 700)]:
        split.partial_fit(X[a:b], y[a:b], classes=classes)
    assert split.n_mistakes_ == whole.n_mistakes_
    np.testing.assert_array_equal(split.support_, whole.support_)
    np.testing.assert_allclose(split.dual_coef_, whole.dual_coef_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("average", [False, True])
def test_fit_plays_shuffled_epochs(case, average):
    make, rule = CASES[case]
    X, y = make_stream(150, 2, False, seed=5)
    classes = np.unique(y)
    est = make(gamma=0.5, max_iter=3, random_state=42, average=average).fit(X, y)
    # The same epochs played by the reference: one permutation per epoch
    # from the shuffling stream of seed 42 (spawned from it, so independent
    # of the algorithms' RandomState(42)), rows identified by their index.
    rng = np.random.RandomState(np.random.MT19937(np.random.SeedSequence(42).spawn(1)[0]))
    order = np.concatenate([rng.permutation(150) for _ in range(est.n_iter_)])
    ref = reference_run(
        X[order], y[order], classes, rule, "rbf", dict(gamma=0.5), index=order, average=average
    )
    assert_same(est, ref)


def test_fit_stops_after_an_epoch_without_update():
    X = np.array([[-2.0, 0.0], [2.0, 0.0]] * 10)
    y = np.array([0, 1] * 10)
    est = KernelPerceptron(kernel="linear", max_iter=50, shuffle=False, average=False).fit(X, y)
    assert est.n_iter_ == 2  # one epoch with the first mistake, one clean
    assert est.n_mistakes_ == 1


def test_sample_weight_scales_steps_and_zero_weight_drops_rows():
    X, y = make_stream(300, 2, False, seed=9)
    classes = np.unique(y)
    w = np.random.RandomState(0).uniform(0.1, 3.0, size=300)
    w[::7] = 0.0
    est = KernelPerceptron(gamma=0.5, average=False)
    est.partial_fit(X, y, classes=classes, sample_weight=w)
    keep = w > 0
    ref = reference_run(
        X[keep],
        y[keep],
        classes,
        perceptron_rule,
        "rbf",
        dict(gamma=0.5),
        weights=w[keep],
        index=np.flatnonzero(keep),
    )
    assert_same(est, ref)


def test_fit_equals_partial_fit_without_shuffle():
    X, y = make_stream(400, 3, True, seed=2)
    a = KernelPassiveAggressive(gamma=0.5, shuffle=False, max_iter=1).fit(X, y)
    b = KernelPassiveAggressive(gamma=0.5).partial_fit(X, y, classes=np.unique(y))
    assert a.n_mistakes_ == b.n_mistakes_
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=0, atol=1e-12)


@pytest.mark.any_kernel_path
def test_average_stays_exact_over_a_million_rounds():
    # Separable 1-D data: the Stoptron fills its budget in the first rounds
    # and is never wrong again, so member i, added after round t_i with
    # coefficient a_i, has exact average a_i (T - t_i) / T after T rounds.
    T = 1_000_000
    rng = np.random.RandomState(0)
    y = np.where(rng.rand(T) < 0.5, -1, 1)
    X = (y * (1.0 + rng.rand(T)))[:, None]
    est = Stoptron(budget=3, kernel="linear", average=True)
    for start in range(0, T, 250_000):
        est.partial_fit(X[start : start + 250_000], y[start : start + 250_000], classes=[-1, 1])
    ref = reference_run(X[:50], y[:50], [-1, 1], stoptron_rule(3), "linear", {})
    assert est.n_mistakes_ == ref[0]
    np.testing.assert_array_equal(est.support_, ref[1])
    expected = ref[2] * (T - (ref[1] + 1)) / T
    np.testing.assert_allclose(est.dual_coef_, expected, rtol=1e-13, atol=0)


def test_removed_large_member_cannot_hide_a_later_mistake():
    # A member of weight 2**40 leaves rounding of its own size in the block
    # scores after it is removed; the mistake on the last row (true score
    # -2.4e-5) must still be found.
    from sklearn_budget import Forgetron

    u = np.spacing(2.0**40)
    X = np.eye(5, 4)
    X[4] = [1, 0.6 * u, 0.6 * u, 1.3 * u]
    y = np.array([1, 1, 1, -1, 1])
    w = np.array([2.0**40, 1, 1, 1, 1])
    members, mistakes = [], 0  # remove-the-oldest Perceptron, per sample
    for t in range(5):
        f = sum(a * (X[i] @ X[t]) for i, a in members)
        if y[t] * f <= 0:
            mistakes += 1
            members = (members + [(t, w[t] * y[t])])[-3:]
    assert mistakes == 5
    est = Forgetron(budget=3, shrink=1.0, kernel="linear", average=False)
    est.partial_fit(X, y, classes=[-1, 1], sample_weight=w)
    assert est.n_mistakes_ == mistakes
    np.testing.assert_array_equal(est.support_, [i for i, _ in members])


@pytest.mark.parametrize("case", ["perceptron", "pa1"])
def test_warm_started_fit_continues_the_stream(case):
    make, _ = CASES[case]
    X1, y1 = make_stream(120, 3, False, seed=21)
    X2, y2 = make_stream(150, 3, False, seed=22)
    kw = dict(gamma=0.5, shuffle=False, max_iter=1)
    warm = make(warm_start=True, **kw).fit(X1, y1).fit(X2, y2)
    stream = make(**kw).partial_fit(X1, y1, classes=np.unique(y1)).partial_fit(X2, y2)
    # Rows of the second fit are numbered after those of the first.
    assert warm.support_.max() >= 120
    np.testing.assert_array_equal(warm.support_, stream.support_)
    np.testing.assert_allclose(warm.dual_coef_, stream.dual_coef_, rtol=0, atol=1e-12)
    X = np.vstack([X1, X2])
    np.testing.assert_allclose(warm.decision_function(X), stream.decision_function(X), atol=1e-12)


def test_scoring_rows_take_blas_where_the_rounds_would_not():
    # The rounds' cost model counts a block's kernel values with itself
    # (the members its rows may become); scoring rows needs only those with
    # the members, so 2,000 rows of 784 features against 100 members go to
    # one BLAS product, not to the loop over the features (13 times slower
    # there, benchmarks/bench_alternatives.py on MNIST).
    from sklearn_budget._rounds import _direct_pays

    assert _direct_pays(100, 2000, 784)
    assert not _direct_pays(100, 2000, 784, within_block=False)
    # One row against a few members in two dimensions stays in the loop.
    assert _direct_pays(10, 1, 2, within_block=False)


def _messy_csr(rng, n_rows, n_features, index_dtype):
    """CSR rows with unsorted and repeated column indices, of all magnitudes."""
    data, indices, indptr = [], [], [0]
    for _ in range(n_rows):
        k = rng.randint(0, 8)
        indices.extend(rng.randint(0, n_features, k))
        data.extend(rng.standard_normal(k) * rng.choice([1e-3, 1.0, 1e3]))
        indptr.append(len(indices))
    X = sp.csr_matrix(
        (np.array(data, dtype=float), np.array(indices, dtype=index_dtype), np.array(indptr)),
        shape=(n_rows, n_features),
    )
    X.has_sorted_indices = False
    X.has_canonical_format = False
    return X


@pytest.mark.parametrize("same", [False, True])
def test_sparse_rbf_gives_the_bits_of_rbf_kernel(same):
    # The rbf kernel of CSR rows is computed without scikit-learn's
    # validation and transposed copy: the same values to the bit, the zero
    # distance of a row to itself (X is Y) included.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._kernels import Kernel

    rng = np.random.RandomState(0)
    for trial in range(40):
        # Rows of many more features than entries take the linked lists.
        d = rng.randint(1, 400) if trial % 4 < 2 else rng.randint(5_000, 20_000)
        if trial % 2:
            X = _messy_csr(rng, rng.randint(1, 12), d, np.int32)
            Y = X if same else _messy_csr(rng, rng.randint(1, 12), d, np.int64)
        else:
            X = sp.random(rng.randint(1, 30), d, density=0.1, format="csr", random_state=rng) * 7.0
            Y = X if same else sp.random(17, d, density=0.3, format="csr", random_state=rng)
        got = Kernel("rbf", gamma=0.3)(X, Y)
        assert np.array_equal(got, rbf_kernel(X, Y, gamma=0.3))
        if same:
            assert np.all(np.diag(got) == 1.0)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sparse_rbf_of_few_rows_against_many_gives_the_bits_of_rbf_kernel(index_dtype):
    # A few rows against many (an averaged model's recorded rows against its
    # pool) take the lists of the few rows' entries, walked by the many's:
    # the same products in the same order for rows in increasing feature,
    # hence rbf_kernel's bits, on values of all magnitudes, with empty rows,
    # a lone shared feature, duplicate rows, in high and low dimension; rows
    # out of order or with repeated features take the other index.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._kernels import CSRRows, Kernel

    rng = np.random.RandomState(3)
    kernel = Kernel("rbf", gamma=0.3)

    def random_rows(n, d, k):  # n rows of up to k distinct features each, sorted
        idx = [np.unique(rng.randint(0, d, rng.randint(0, k + 1))) for _ in range(n)]
        indptr = np.concatenate([[0], np.cumsum([i.size for i in idx])])
        data = rng.uniform(0.5, 1.5, indptr[-1])
        return sp.csr_matrix((data, np.concatenate(idx), indptr), shape=(n, d))

    for trial in range(30):
        if trial % 3:  # high dimension: few shared features
            d, n, k = rng.randint(5_000, 50_000), rng.randint(1, 20), 60
        else:  # low: many shared features, summed in order
            d, n, k = rng.randint(20, 300), rng.randint(1, 6), 60
        X = random_rows(n, d, min(k, d // 3))
        Y = random_rows(rng.randint(60, 300), d, min(k, d // 3))
        X.data *= 10.0 ** rng.uniform(-3, 3, X.nnz)
        Y.data = rng.standard_normal(Y.nnz) * 10.0 ** rng.uniform(-3, 3, Y.nnz)
        if X.shape[0] > 2:
            X[1] = 0.0  # an empty row
            X.eliminate_zeros()
            Y[:3] = X[:3]  # rows shared by the two sides: distance 0
        for M in (X, Y):
            M.indices, M.indptr = M.indices.astype(index_dtype), M.indptr.astype(index_dtype)
        if trial % 5 == 4:
            X = _messy_csr(rng, 4, d, index_dtype)  # unsorted and repeated: the other index
        expected = rbf_kernel(X, Y, gamma=0.3)
        assert np.array_equal(kernel(X, Y), expected)
        # The rows as the rounds hold them (views of a buffer's arrays).
        rows = CSRRows(X.data, X.indices, X.indptr, X.shape)
        assert np.array_equal(kernel(rows, Y), expected)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sparse_gram_from_half_its_products_gives_the_bits_of_rbf_kernel(index_dtype):
    # The Gram matrix of canonical CSR rows (the averaged model's pool) sums
    # the products below the diagonal only and mirrors them: the same bits
    # as scikit-learn's rbf_kernel and as the rectangular path, on real
    # values of all magnitudes, whose exponents are not symmetric in their
    # bits (only the products are), with empty rows and a lone feature, in
    # low and high dimension (the two indexes of the entries by feature).
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._dense_rows import sparse_rbf_exponents
    from sklearn_budget._kernels import Kernel
    from sklearn_budget._pool import sparse_gram_products

    rng = np.random.RandomState(1)
    asymmetric = 0
    for trial in range(12):
        n, d = rng.randint(1, 120), rng.randint(1, 60)
        X = sp.random(n, d, density=rng.uniform(0.02, 0.6), format="csr", random_state=rng)
        X.data = rng.standard_normal(X.nnz) * rng.choice([1e-3, 0.3, 1.0], X.nnz)
        if trial % 3 == 0:
            X = sp.vstack([X, sp.csr_matrix((2, d))], format="csr")  # empty rows
        X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
        assert X.has_canonical_format
        products = sparse_gram_products(X)
        assert np.array_equal(products, products.T)
        got = Kernel("rbf", gamma=0.3)(X, X)
        assert np.array_equal(got, rbf_kernel(X, X, gamma=0.3))
        rectangular = sparse_rbf_exponents(X, X, 0.3, True)
        np.exp(rectangular, out=rectangular)
        assert np.array_equal(got, rectangular)
        asymmetric += not np.array_equal(got, got.T)
    assert asymmetric  # the case that mirroring the values would get wrong
    # High dimension (at most two entries per feature on average): the
    # products from linked lists of the entries, not the counting sort.
    for trial in range(6):
        n, d = rng.randint(2, 120), rng.randint(2_000, 20_000)
        X = sp.random(n, d, density=rng.uniform(2, 20) / d, format="csr", random_state=rng)
        X.data = rng.standard_normal(X.nnz) * rng.choice([1e-3, 0.3, 1.0], X.nnz)
        X = sp.vstack([X, sp.csr_matrix((1, d)), X[:3]], format="csr")  # repeated rows
        X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
        assert X.has_canonical_format and X.nnz <= 2 * d
        products = sparse_gram_products(X)
        assert np.array_equal(products, products.T)
        got = Kernel("rbf", gamma=0.3)(X, X)
        assert np.array_equal(got, rbf_kernel(X, X, gamma=0.3))


@pytest.mark.parametrize("same", [False, True])
def test_dense_rbf_gives_the_bits_and_warnings_of_rbf_kernel(same):
    # The rbf kernel of dense float64 rows of the averaged model's pool is
    # computed without pairwise_kernels' validation, its elementwise steps
    # in one compiled pass: the same values to the bit (the zero distance of a row to itself
    # when X is Y included), and for rows that overflow scikit-learn's own
    # path, with its warnings.
    import warnings

    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._kernels import Kernel, _dense_rbf

    rng = np.random.RandomState(0)
    for trial in range(60):
        d = rng.randint(1, 60)
        scale = [1e-3, 1.0, 40.0, 1e160][trial % 4]
        X = scale * rng.standard_normal((rng.randint(1, 40), d))
        X[rng.randint(X.shape[0])] = X[0]  # equal rows: distance 0, or rounded below
        Y = X if same else scale * rng.standard_normal((rng.randint(1, 30), d))
        if trial % 5 == 0:
            Y = Y if same else np.asfortranarray(Y)
        gamma = [0.02, 0.7, 5.0][trial % 3]
        with warnings.catch_warnings(record=True) as expected_warned:
            warnings.simplefilter("always")
            expected = rbf_kernel(X, Y, gamma=gamma)
        # Every kernel matrix of the package, the pool's blocks included.
        with warnings.catch_warnings(record=True) as got_warned:
            warnings.simplefilter("always")
            got = Kernel("rbf", gamma=gamma)(X, Y)
        assert np.array_equal(got, expected, equal_nan=True)
        assert [str(w.message) for w in got_warned] == [str(w.message) for w in expected_warned]
        if same:
            assert np.all(np.diag(got) == 1.0)
        # The compiled pass gave them, unless they overflow.
        assert (_dense_rbf(X, Y, gamma) is None) == (scale > 1e100)
    # Rows sklearn refuses keep its error.
    X = np.array([[0.0, np.nan]])
    with pytest.raises(ValueError, match="NaN"):
        Kernel("rbf", gamma=1.0)(X, X)


def test_rounds_block_of_sparse_rows_gives_the_values_the_rounds_read():
    # A block of rounds reads row j against the members and the block's rows
    # up to j: those values are rbf_kernel's to the bit; the others, never
    # read, are NaN and only beyond the row's chunk.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._dense_rows import SparseScratch
    from sklearn_budget._kernels import _ROUNDS_CHUNK, Kernel

    rng = np.random.RandomState(3)
    for n_members, b in [(0, 1), (5, 70), (40, 2 * _ROUNDS_CHUNK), (1, _ROUNDS_CHUNK + 1)]:
        members = sp.random(n_members, 300, density=0.05, format="csr", random_state=rng)
        Xb = _messy_csr(rng, b, 300, np.int32)
        Z = sp.vstack([members, Xb], format="csr")
        got, columns = Kernel("rbf", gamma=0.7).rounds_block(Xb, Z, n_members)
        assert columns is None  # no scratch: all beforehand
        full = rbf_kernel(Xb, Z, gamma=0.7)
        for j in range(b):
            end = n_members + (j // _ROUNDS_CHUNK + 1) * _ROUNDS_CHUNK
            assert np.array_equal(got[j, :end], full[j, :end])
            assert np.isnan(got[j, end:]).all()
    # Other kernels: the whole block.
    linear = Kernel("linear")
    K, columns = linear.rounds_block(Xb, Z, n_members, SparseScratch())
    assert columns is None and np.array_equal(K, linear(Xb, Z))


@pytest.mark.any_kernel_path
def test_sparse_rbf_with_reused_buffers_gives_the_bits_of_rbf_kernel():
    # The blocks of a call reuse one SparseScratch: its index of the
    # members' entries (linked lists, emptied after each call, or the
    # transposed copy, by the entries per feature) and its output buffer,
    # for blocks and member sets that grow and shrink. Each call's values
    # are rbf_kernel's to the bit, and a call leaves nothing that changes
    # the next one (the same values as a call with fresh buffers).
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._dense_rows import EXP_LOOP, SparseScratch, sparse_rbf_exponents
    from sklearn_budget._kernels import _ROUNDS_CHUNK, Kernel

    rng = np.random.RandomState(11)
    scratch = SparseScratch()
    kernel = Kernel("rbf", gamma=0.4)
    d = 2_000
    seen_lists = seen_transposed = False
    for trial in range(80):
        n_members, b = rng.randint(0, 120), rng.randint(1, 90)
        # Few entries per feature (the lists) or many (the transposed copy).
        density = [0.001, 0.02, 0.1][trial % 3]
        members = sp.random(n_members, d, density=density, format="csr", random_state=rng)
        if trial % 4 == 0:
            Xb = _messy_csr(rng, b, d, np.int32)  # unsorted, repeated, empty rows
        else:
            Xb = sp.random(b, d, density=density, format="csr", random_state=rng)
            Xb[rng.randint(b)] = 0.0  # an empty row
            Xb.eliminate_zeros()
            if b > 1:
                Xb[1] = Xb[0]  # a duplicate row: distance 0
        Z = sp.vstack([members, Xb], format="csr")
        lists = Z.nnz <= 2 * d
        seen_lists, seen_transposed = seen_lists or lists, seen_transposed or not lists
        got, columns = kernel.rounds_block(Xb, Z, n_members, scratch)
        # The values with the block's rows as the rounds read them: a third
        # of the rows join at their round, and the later rows read them.
        assert (columns is not None) == EXP_LOOP
        joins = np.flatnonzero(rng.rand(b) < 0.35)
        for j in range(b if EXP_LOOP else 0):
            columns.read(j)
            if j in joins:
                columns.join(j)
        got = got.copy()
        fresh, none = kernel.rounds_block(Xb, Z, n_members)
        assert none is None
        full = rbf_kernel(Xb, Z, gamma=0.4)
        for j in range(b):
            end = min(Z.shape[0], n_members + (j // _ROUNDS_CHUNK + 1) * _ROUNDS_CHUNK)
            assert np.array_equal(fresh[j, :end], full[j, :end])
            assert np.isnan(fresh[j, end:]).all()
            # What the round of row j reads: the members, the rows that
            # joined before it, and its own value if it joins (an error set
            # reads it).
            read = np.concatenate([np.arange(n_members), n_members + joins[joins <= j]])
            assert np.array_equal(got[j, read], full[j, read])
        # Whole matrices (no block of rounds) with the same buffers.
        K = sparse_rbf_exponents(Xb, Z, 0.4, False, scratch=scratch)
        np.exp(K, out=K)
        assert np.array_equal(K, full)
    assert seen_lists and seen_transposed


def test_rows_of_csr_are_those_of_scipy_indexing():
    # The rounds gather CSR rows themselves (slices of the call, the members
    # of a block): the same data, indices and pointers as scipy's indexing.
    from sklearn_budget._rounds import _rows

    rng = np.random.RandomState(5)
    for trial in range(60):
        n = rng.randint(0, 20)
        X = sp.random(n, 40, density=rng.uniform(0, 0.5), format="csr", random_state=rng)
        if trial % 2:
            X = _messy_csr(rng, n, 40, np.int64)
        picks = rng.randint(0, n, rng.randint(0, 30)) if n else np.zeros(0, dtype=int)
        strided = slice(rng.randint(0, n + 1), rng.randint(0, n + 3), rng.choice([2, 3, 7, -1, -2]))
        for rows in (slice(rng.randint(0, n + 1), rng.randint(0, n + 3)), strided, picks):
            got, expected = _rows(X, rows), X[rows]
            assert type(got) is type(expected) and got.shape == expected.shape
            for name in ("data", "indices", "indptr"):
                a, b = getattr(got, name), getattr(expected, name)
                assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_stacked_rows_of_csr_are_those_of_scipy_vstack():
    # The members that leave a sparse stream's rounds join the pool's rows
    # in one construction: the matrix of scipy's vstack of the pool's rows
    # and the rows gathered by scipy's indexing, to the data, indices,
    # pointers and their types.
    from sklearn_budget._rounds import _stack_rows, _vstack

    rng = np.random.RandomState(6)
    for trial in range(60):
        n, m = rng.randint(0, 20), rng.randint(1, 20)
        A = sp.random(n, 40, density=rng.uniform(0, 0.5), format="csr", random_state=rng)
        X = sp.random(m, 40, density=rng.uniform(0, 0.5), format="csr", random_state=rng)
        if trial % 3 == 1:
            X = _messy_csr(rng, m, 40, np.int64)
        if trial % 3 == 2:
            A = _messy_csr(rng, n, 40, np.int64)
        picks = (rng.randint(0, m, rng.randint(0, 30)), np.arange(m)[::-1], np.arange(m))
        for rows in picks:
            got = _stack_rows(A, X, rows)
            expected = sp.vstack([A, X[rows]], format="csr")
            if rows.size == m and (rows == np.arange(m)).all():
                # The members and the block of rounds: the same stack.
                got = _vstack(A, X)
            assert type(got) is type(expected) and got.shape == expected.shape
            for name in ("data", "indices", "indptr"):
                a, b = getattr(got, name), getattr(expected, name)
                assert a.dtype == b.dtype and np.array_equal(a, b), name
    # Dense rows: the stack of the rows.
    A, X = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    assert np.array_equal(_stack_rows(A, X, [4, 0, 4]), np.vstack([A, X[[4, 0, 4]]]))


def test_block_rows_in_reused_buffers_are_those_of_scipy_indexing():
    # A sparse call's blocks gather their rows after the members' in one of
    # two buffers, and the members that stay into the other (_BlockRows):
    # through blocks that grow the buffers, shrink and grow the members, the
    # block's rows, the members followed by them and the members kept (all
    # CSRRows) are scipy's indexing of the rows, to the data, indices and
    # pointers.
    from sklearn_budget._kernels import CSRRows
    from sklearn_budget._rounds import _BlockRows

    rng = np.random.RandomState(8)
    X = _messy_csr(rng, 400, 60, np.int64)
    X.data[:] = rng.standard_normal(X.nnz)
    rows = _BlockRows(X[[3, 3, 0]], 4, 3)  # room for too few: grown as needed
    members = np.array([3, 3, 0])
    for trial in range(40):
        block = rng.randint(0, 400, rng.randint(0, 40)) if trial % 3 else slice(7, 7 + trial)
        Xb, Z = rows.block(X, block)
        picked = np.arange(400)[block]
        stacked = np.concatenate([members, picked])
        for got, expected in [(Xb, X[picked]), (Z, X[stacked])]:
            assert got.shape == expected.shape
            for name in ("data", "indices", "indptr"):
                assert np.array_equal(getattr(got, name), getattr(expected, name)), name
        cols = rng.permutation(stacked.size)[: rng.randint(0, 30)]
        kept = rows.keep(cols)
        members = stacked[cols]
        expected = X[members]
        assert type(kept) is CSRRows and kept.shape == expected.shape
        for name in ("data", "indices", "indptr"):
            a, b = getattr(kept, name), getattr(expected, name)
            assert a.dtype == np.int32 or name == "data"
            assert np.array_equal(a, b), name


def test_pool_rows_in_a_buffer_are_scipys_stack_of_the_pool_and_the_rows_that_left():
    # The members that leave an averaged sparse stream's rounds are gathered
    # after the pool's rows in one buffer (_PoolRows): through folds that
    # grow the buffer and pools replaced (a compression, another call), each
    # result is scipy's stack of the pool and the rows that left, to the
    # data, indices and pointers, and every view handed out earlier keeps
    # its values.
    from sklearn_budget._kernels import CSRRows, as_matrix
    from sklearn_budget._rounds import _BlockRows, _PoolRows

    rng = np.random.RandomState(9)
    X = _messy_csr(rng, 300, 50, np.int64)
    blocks = _BlockRows(X[[4, 1]], 300, 600)
    _, Z = blocks.block(X, np.arange(300))  # the members, then every row of X
    rows_of_Z = np.r_[4, 1, np.arange(300)]
    buffer = _PoolRows(X.shape[1])
    pool, pool_rows = X[[7, 7, 2]], [7, 7, 2]
    handed = []
    for trial in range(60):
        if trial in (20, 41):  # a pool replaced: a compressed one, gathered
            kept = rng.permutation(len(pool_rows))[:3]
            pool = X[np.asarray(pool_rows)[kept]]
            pool_rows = list(np.asarray(pool_rows)[kept])
        cols = rng.randint(0, Z.shape[0], rng.randint(0, 12))
        got = buffer.extended(pool, Z, cols)
        pool_rows = pool_rows + list(rows_of_Z[cols])
        expected = sp.vstack([as_matrix(pool), X[rows_of_Z[cols]]], format="csr")
        assert type(got) is CSRRows and got.shape == expected.shape
        for name in ("data", "indices", "indptr"):
            assert np.array_equal(getattr(got, name), getattr(expected, name)), name
        handed.append((got, [getattr(got, n).copy() for n in ("data", "indices", "indptr")]))
        pool = got
    for view, arrays in handed:
        for name, a in zip(("data", "indices", "indptr"), arrays):
            assert np.array_equal(getattr(view, name), a), name


def _wide_rows(rng, n_rows, n_features=3_000, nnz=12):
    """Canonical CSR rows of ``nnz`` entries in many features, values of
    magnitudes 1e-3 to 30 (of either sign), and some rows without entries."""
    indices = [np.sort(rng.choice(n_features, nnz, replace=False)) for _ in range(n_rows)]
    counts = np.where(rng.uniform(size=n_rows) < 0.05, 0, nnz)
    indices = np.concatenate([i[:c] for i, c in zip(indices, counts)])
    data = rng.standard_normal(indices.size) * rng.choice([1e-3, 1.0, 30.0], indices.size)
    indptr = np.r_[0, np.cumsum(counts)]
    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_features))


def test_row_index_gives_the_bits_of_sparse_rbf_exponents():
    # The index of a buffer's rows by feature, extended as rows arrive,
    # gives the exponents of sparse_rbf_exponents against the rows indexed,
    # and exp of them the values of scikit-learn's rbf_kernel, to the bit.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._dense_rows import RowIndex, sparse_rbf_exponents

    rng = np.random.RandomState(5)
    Z, X = _wide_rows(rng, 400), _wide_rows(rng, 40)
    X[3] = Z[7]  # a row of the pool: the exponent 0
    X.eliminate_zeros()
    data, indices, indptr = Z.data, Z.indices.astype(np.int32), Z.indptr.astype(np.int32)
    index = RowIndex(Z.shape[1])
    for m in (0, 0, 1, 2, 57, 58, 300, 400):
        index.extend(indices, indptr, data, m)
        assert index.n_rows == m
        got = index.exponents(X, data, 0.07)
        assert np.array_equal(got, sparse_rbf_exponents(X, Z[:m], 0.07, False))
        if m:
            assert np.array_equal(np.exp(got), rbf_kernel(X, Z[:m], gamma=0.07))
    # Rows not in strictly increasing feature: no exponents.
    unsorted = sp.csr_matrix((np.ones(2), np.array([5, 2]), np.array([0, 2])), shape=(1, 3_000))
    assert index.exponents(unsorted, data, 0.07) is None
    index = RowIndex(3_000)
    index.extend(unsorted.indices, unsorted.indptr, unsorted.data, 1)
    assert not index.usable and index.exponents(X, unsorted.data, 0.07) is None
    with pytest.raises(ValueError, match="3000 features, the rows indexed 2999"):
        RowIndex(2_999).exponents(X, data, 0.07)
    with pytest.raises(ValueError, match="indptr must start at 0"):
        RowIndex(3_000).extend(indices, indptr[5:], data, 10)


def test_row_index_only_for_sparse_rows_of_many_features():
    # row_index: for the rbf kernel of CSR rows in strictly increasing
    # feature with at least one entry per 8 features (its heads); None
    # otherwise. The rows walked through it (walks_index) have at most half
    # as many entries as features: a9a's blocks of 123 features do not.
    from sklearn_budget._kernels import Kernel, row_index, walks_index

    rng = np.random.RandomState(1)
    Z, rbf = _wide_rows(rng, 200), Kernel("rbf", gamma=0.1)
    index = row_index(rbf, Z)
    assert index is not None and index.n_rows == 200
    assert row_index(Kernel("laplacian", gamma=0.1), Z) is None
    assert row_index(rbf, Z.toarray()) is None
    assert row_index(rbf, Z[:0]) is None
    # The fewest rows whose entries take 3,000 heads at 8 each at most.
    k = int(np.searchsorted(8 * Z.indptr, 3_000))
    assert 8 * Z[: k - 1].nnz < 3_000 <= 8 * Z[:k].nnz
    assert row_index(rbf, Z[: k - 1]) is None and row_index(rbf, Z[:k]) is not None
    unsorted = sp.csr_matrix((np.ones(2), np.array([5, 2]), np.array([0, 2])), shape=(1, 3_000))
    assert row_index(rbf, unsorted) is None
    k = int(np.searchsorted(2 * Z.indptr, 3_000, side="right"))  # the most rows walked
    assert 2 * Z[: k - 1].nnz <= 3_000 < 2 * Z[:k].nnz
    assert walks_index(Z[: k - 1]) and not walks_index(Z[:k])
    assert not walks_index(sp.csr_matrix(rng.uniform(size=(2, 4))))


def test_pool_rows_give_the_rbf_values_of_their_last_view():
    # The margins' kernel values against the pool (_PoolRows.rbf): through
    # folds that grow the buffer and pools replaced, the values of
    # rbf_kernel against the last view, to the bit; None for another view,
    # another kernel, or rows with more entries than half the features.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._kernels import Kernel, as_matrix
    from sklearn_budget._rounds import _BlockRows, _PoolRows

    rng = np.random.RandomState(8)
    X = _wide_rows(rng, 300)
    _, Z = _BlockRows(X[:0], 300, 600).block(X, np.arange(300))
    buffer, rbf = _PoolRows(X.shape[1]), Kernel("rbf", gamma=0.05)
    pool, used = X[[7, 9, 2]], 0
    for trial in range(40):
        if trial in (15, 31):  # a pool replaced (a compression): a fresh index
            pool = X[rng.permutation(300)[:5]]
        view = buffer.extended(pool, Z, rng.randint(0, 300, rng.randint(0, 12)))
        rows = X[rng.randint(0, 300, rng.randint(1, 9))]
        got = buffer.rbf(rbf, rows, view)
        if got is not None:
            used += 1
            assert np.array_equal(got, rbf_kernel(rows, as_matrix(view), gamma=0.05))
        assert buffer.rbf(rbf, rows, pool) is None  # not the last view
        assert buffer.rbf(Kernel("laplacian", gamma=0.05), rows, view) is None
        pool = view
    assert used >= 25  # not for the first, smallest pools: the heads would exceed 8 per entry
    dense = sp.csr_matrix(rng.uniform(size=(50, 4)))  # rows of all 4 features
    buffer = _PoolRows(4)
    _, Zd = _BlockRows(dense[:0], 50, 400).block(dense, np.arange(50))
    view = buffer.extended(dense[:1], Zd, np.arange(1, 20))
    assert buffer.rbf(rbf, dense[:2], view) is None  # 8 entries in 4 features
    one = sp.csr_matrix((np.array([0.5, 2.0]), np.array([0, 3]), np.array([0, 2])), shape=(1, 4))
    assert np.array_equal(buffer.rbf(rbf, one, view), rbf_kernel(one, dense[:20], gamma=0.05))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_margins_of_an_averaged_sparse_stream_are_those_without_the_index(monkeypatch):
    # The margins of the recorded rounds against the pool, from the index of
    # its rows (_PoolRows.rbf), give the model and the probabilities the
    # same bits as the kernel values computed afresh at each segment.
    from sklearn_budget import _rounds

    rng = np.random.RandomState(2)
    X = _wide_rows(rng, 2_500, n_features=4_000, nnz=20)
    y = np.where(X @ rng.standard_normal(X.shape[1]) > 0, 1, 0)

    def fit():
        est = Forgetron(budget=30, gamma=0.05, random_state=0, max_iter=2, tol=None)
        est.fit(X[:1_500], y[:1_500]).partial_fit(X[1_500:], y[1_500:])
        return est

    calls = []
    rbf = _rounds._PoolRows.rbf

    def counted(self, *args):
        K = rbf(self, *args)
        calls.append(K is not None)
        return K

    monkeypatch.setattr(_rounds._PoolRows, "rbf", counted)
    indexed = fit()
    assert sum(calls) > 10  # the index served the margins
    monkeypatch.setattr(_rounds._PoolRows, "rbf", lambda self, *args: None)
    afresh = fit()
    for name, value in afresh._state.items():
        assert np.array_equal(indexed._state[name], value), name
    assert np.array_equal(indexed.predict_proba(X[:300]), afresh.predict_proba(X[:300]))


def test_pool_rows_beyond_32_bit_pointers_are_scipys_stack(monkeypatch):
    # Where the entries of the pool and the rows that leave would not fit in
    # 32-bit pointers, the rows are stacked by scipy (here with the limit
    # lowered to a few hundred entries); at the limit they still go to the
    # buffer, and after a stack by scipy the buffer serves again.
    import sklearn_budget._rounds as rounds
    from sklearn_budget._kernels import CSRRows, as_matrix

    rng = np.random.RandomState(3)
    X = sp.random(200, 30, density=0.3, format="csr", random_state=rng)
    _, Z = rounds._BlockRows(X[:0], 200, 2000).block(X, np.arange(200))
    buffer = rounds._PoolRows(X.shape[1])
    pool = buffer.extended(X[:3], Z, np.arange(3, 6))
    assert type(pool) is CSRRows
    held, added = int(pool.indptr[-1]), int(X[6:40].nnz)
    assert 0 < held and 0 < added
    monkeypatch.setattr(rounds, "_INT32_MAX", held + added)  # exactly at the limit
    at_limit = buffer.extended(pool, Z, np.arange(6, 40))
    assert type(at_limit) is CSRRows
    assert np.array_equal(as_matrix(at_limit).toarray(), X[:40].toarray())
    monkeypatch.setattr(rounds, "_INT32_MAX", held + added - 1)  # one entry beyond
    beyond = buffer.extended(pool, Z, np.arange(6, 40))
    assert type(beyond) is sp.csr_matrix
    assert np.array_equal(beyond.toarray(), X[:40].toarray())
    monkeypatch.undo()
    again = buffer.extended(beyond, Z, np.arange(40, 45))
    assert type(again) is CSRRows
    assert np.array_equal(as_matrix(again).toarray(), X[:45].toarray())


def test_an_averaged_sparse_stream_keeps_its_pool_rows_and_a_failed_call_its_pool():
    # Between the calls the pool's rows are a csr_matrix of the rows of X at
    # the pool's stream indices (the members that left, or those a
    # compression kept); a call that fails puts the pool back as it was.
    rng = np.random.RandomState(4)
    X = sp.random(1_500, 400, density=0.03, format="csr", random_state=rng)
    y = rng.randint(0, 2, X.shape[0])
    est = Forgetron(budget=20, gamma=0.1, random_state=0).fit(X[:700], y[:700])

    def check_pool():
        n = int(est._state["pool_n"][0])
        pool, ref = est._pool_X, X[est._state["pool_idx"][:n]]
        assert type(pool) is sp.csr_matrix and pool.shape == ref.shape
        for name in ("data", "indices", "indptr"):
            assert np.array_equal(getattr(pool, name), getattr(ref, name)), name
            # Not views of a larger buffer of the call.
            array = root = getattr(pool, name)
            while isinstance(root.base, np.ndarray):
                root = root.base
            assert root.nbytes == array.nbytes, name

    check_pool()
    est.partial_fit(X[700:1_000], y[700:1_000])
    check_pool()
    _an_interrupted_call_keeps(est, X[1_000:], y[1_000:], lambda: est._pool_X)


def _an_interrupted_call_keeps(est, X, y, rows_of):
    """Interrupt ``est.partial_fit(X, y)`` at the end of its second block: the rows
    that ``rows_of()`` gives are the same object with the same arrays
    after, and the scores the same."""
    before = rows_of()
    saved = [a.copy() for a in (before.data, before.indices, before.indptr)]
    scores = est.decision_function(X[:50])
    calls = []

    def failing_block_end(*args):
        calls.append(1)
        if len(calls) == 2:  # the second block: after the first one's rows moved
            raise RuntimeError("interrupted")

    est._block_end = failing_block_end
    with pytest.raises(RuntimeError, match="interrupted"):
        est.partial_fit(X, y)
    del est._block_end
    assert rows_of() is before
    for a, b in zip((before.data, before.indices, before.indptr), saved):
        assert np.array_equal(a, b)
    assert np.array_equal(est.decision_function(X[:50]), scores)


@pytest.mark.parametrize("average", [False, True])
def test_members_of_a_sparse_stream_are_its_rows_and_a_call_keeps_earlier_ones(average):
    # The members of a sparse stream are views of the buffers of the call's
    # blocks: after blocks of removals they are the rows of X at their
    # stream indices, a later call never writes the rows of the members
    # before it, and a call that fails leaves them as they were.
    rng = np.random.RandomState(2)
    X = sp.random(1_700, 500, density=0.02, format="csr", random_state=rng)
    y = rng.randint(0, 2, X.shape[0])
    est = Forgetron(budget=30, gamma=0.1, average=average, random_state=0)
    est.fit(X[:900], y[:900])
    assert est.n_mistakes_ > 4 * est.budget  # removals in most blocks

    def check_members():
        sv, ref = est._sv, X[est._state["idx"][: est._n]]
        for name in ("data", "indices", "indptr"):
            assert np.array_equal(getattr(sv, name), getattr(ref, name)), name

    check_members()
    before = est._sv
    saved = [a.copy() for a in (before.data, before.indices, before.indptr)]
    est.partial_fit(X[900:1_100], y[900:1_100])
    check_members()
    for a, b in zip((before.data, before.indices, before.indptr), saved):
        assert np.array_equal(a, b)
    _an_interrupted_call_keeps(est, X[1_100:], y[1_100:], lambda: est._sv)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_index_type_is_the_one_scipy_chooses(index_dtype):
    # The CSR rows of the rounds and of the pool are built with their index
    # arrays already in the type scipy's constructor would give them: int32
    # where the shape and the entries fit, also for 64-bit input, and int64
    # where a dimension does not fit (an empty matrix takes int32).
    from sklearn_budget._rounds import _index_dtype

    big = 2**31
    for shape, nnz in [
        ((3, 5), 4),
        ((0, 5), 0),
        ((3, big - 1), 2),
        ((3, big), 2),
        ((big, 3), 0),
        ((0, big + 7), 0),
        ((1, 1), 0),
    ]:
        indptr = np.zeros(shape[0] + 1, dtype=index_dtype) if shape[0] < 10 else None
        if indptr is None:
            # Too many rows to build: scipy's choice from the shape alone.
            expected = np.int64
        else:
            indptr[1:] = nnz
            indices = np.zeros(nnz, dtype=index_dtype)
            X = sp.csr_matrix((np.ones(nnz), indices, indptr), shape=shape)
            expected = X.indices.dtype
            assert X.indptr.dtype == expected
        assert np.dtype(_index_dtype(shape, nnz)) == expected, shape


def _omp_reference(K, Kcoef, budget, tol):
    """Kernel orthogonal matching pursuit written out in Python, each sum in
    the order of omp_select (``_pool.pyx``): the selection it must give.
    ``Kcoef``: the inner products <f, k(x_j, .)> with the candidates."""
    n, R = Kcoef.shape
    budget = min(budget, n)
    L = np.zeros((max(budget, 1), n))
    r = Kcoef.copy()
    resid = np.diag(K).copy()
    taken = np.zeros(n, dtype=bool)
    chosen = []
    for s in range(budget):
        # The gain of each candidate, its sum over the outputs in their
        # order; the first of the largest gains is kept.
        gains = {
            j: sum((r[j, c] * r[j, c] for c in range(R)), 0.0) / resid[j]
            for j in range(n)
            if not taken[j] and resid[j] > tol
        }
        if not gains:
            break
        p = max(gains, key=lambda j: (gains[j], -j))
        row = K[p].copy()
        for q in range(s):
            row -= L[q] * L[q, p]
        L[s] = row / np.sqrt(resid[p])
        # <f, e_s> = <f - P_S f, k(x_p, .)> / sqrt(resid_p)
        proj = r[p] / np.sqrt(resid[p])
        resid -= L[s] * L[s]
        r -= L[s][:, None] * proj[None, :]
        taken[p] = True
        chosen.append(p)
    return np.sort(np.array(chosen, dtype=np.intp))


def test_omp_select_is_the_written_out_pursuit():
    # The compiled Gram-Schmidt step subtracts several kept directions per
    # pass over the new one, and the first of the largest gains is found
    # along interleaved members: the same arithmetic and the same choice,
    # so the same members kept, over budgets below and above the eight
    # directions of a pass.
    from sklearn.metrics.pairwise import rbf_kernel

    from sklearn_budget._pool import omp_select

    rng = np.random.RandomState(7)
    for trial in range(12):
        n = rng.randint(1, 60)
        X = rng.standard_normal((n, rng.randint(1, 4))) * rng.choice([0.3, 1.0, 3.0])
        X[rng.randint(n)] = X[0]  # a repeated row: a residual of zero
        K = rbf_kernel(X, X, gamma=rng.uniform(0.05, 2.0))
        coef = rng.standard_normal((n, rng.choice([1, 3])))
        for budget in (1, 3, 4, 9, 30):
            expected = _omp_reference(K, K @ coef, budget, 1e-10)
            assert np.array_equal(omp_select(K, K @ coef, budget, 1e-10), expected)
    # Equal gains: members whose kernel functions are orthogonal (rows far
    # apart), with coefficients of a few values; the first of the largest
    # is kept, wherever it falls among the interleaved members.
    for n in range(1, 14):
        K = np.eye(n)
        coef = rng.choice([1.0, 2.0, -2.0], size=(n, 1))
        for budget in (1, 2, 5, n):
            expected = _omp_reference(K, K @ coef, budget, 1e-10)
            assert np.array_equal(omp_select(K, K @ coef, budget, 1e-10), expected)


def _member_score(alpha, gram, n, i):
    """sum_m alpha_m k(x_m, x_i) over the first ``n`` members, term by term in
    the order of m (Python floats: one rounding per product and per sum)."""
    out = [0.0] * alpha.shape[1]
    for m in range(n):
        for c in range(alpha.shape[1]):
            out[c] += float(alpha[m, c]) * float(gram[m, i])
    return out


@pytest.mark.parametrize("n_classes", [2, 3])
def test_budget_perceptron_member_scores_are_the_sums_of_their_definition(n_classes):
    # The Budget Perceptron keeps the members' scores f(x_i) = sum_m
    # alpha_m k(x_m, x_i): exactly recomputed every max(budget, 16) changes,
    # and a new member's computed afresh. Both must be these sums, term by
    # term in the order of m, to the bit.
    from sklearn_budget import BudgetPerceptron

    X, y = make_stream(600, n_classes, sparse=False, seed=11)
    est = BudgetPerceptron(budget=16, gamma=0.5, average=False, random_state=0)
    classes = np.unique(y)
    refreshes = fresh = 0
    for start in range(0, X.shape[0], 5):
        est.partial_fit(X[start : start + 5], y[start : start + 5], classes=classes)
        state = est._state
        n, t = int(state["counters"][0]), int(state["counters"][1])
        alpha, gram, fS = state["alpha"], state["gram"], state["fS"]
        if state["budget_ints"][0] == 0 and n:
            refreshes += 1
            for i in range(n):
                assert list(fS[i]) == _member_score(alpha, gram, n, i)
        elif n and state["born"][n - 1] == t:
            fresh += 1
            assert list(fS[n - 1]) == _member_score(alpha, gram, n, n - 1)
    assert refreshes and fresh


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", ["Forgetron", "BudgetPerceptron", "TighterBudgetPerceptron"])
def test_the_members_gram_matrix_is_symmetric_to_the_bit(name, sparse):
    # The rules read a member's kernel values along its row of the Gram
    # matrix (contiguous), the engine moves a removed member's column from
    # its row: both need k(x_i, x_j) and k(x_j, x_i) to be the same bits,
    # through additions, removals and a loaded start. A loaded expansion's
    # values are the rounds': each member's with the older ones (the lower
    # triangle of the kernel matrix, members oldest first).
    import sklearn_budget

    X, y = make_stream(400, 3, sparse, seed=5)
    est = getattr(sklearn_budget, name)(budget=12, gamma=0.7, average=False, random_state=0)
    sv = X[:9]
    coef = np.random.RandomState(0).standard_normal((3, 9))
    est._load_expansion(X, np.unique(y), sv, coef, rounds=30)
    gram = est._state["gram"][:9, :9]
    # The values as the estimator computes a kernel matrix (for dense rows
    # of few features, from their differences, as the rounds do).
    rows = est._as_stream_format(sv)
    lower = np.tril(est._kernel_matrix(rows, rows))
    assert np.array_equal(np.tril(gram), lower)
    assert np.array_equal(gram, gram.T)
    removals = 0
    for start in range(0, X.shape[0], 7):
        est.partial_fit(X[start : start + 7], y[start : start + 7])
        n = int(est._state["counters"][0])
        gram = est._state["gram"][:n, :n]
        assert np.array_equal(gram, gram.T), start
        removals += n == 12
    assert removals > 20


@pytest.mark.parametrize(
    "make",
    [
        lambda: Forgetron(budget=20, average=False, random_state=0),
        lambda: Forgetron(budget=20, average=True, random_state=0),
        lambda: KernelPerceptron(average="vote", random_state=0),
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_the_end_of_fit_check_predicts_what_predict_does(make, sparse):
    # The majority-class check scores rows of the validated X without
    # validating them again: predict's classes, row by row.
    rng = np.random.RandomState(3)
    X = rng.standard_normal((300, 6)) * (rng.uniform(size=(300, 6)) < 0.5)
    y = rng.randint(0, 3, 300)
    X = sp.csr_matrix(X) if sparse else X
    est = make().fit(X, y)
    rows = X[::3]
    assert np.array_equal(est._predict_rows(rows), est.predict(rows))


_LAZY_CASES = [
    est
    for est in _instances.instances(
        "every_input", "online_kernel", budget=25, gamma=0.05, random_state=0
    )
    if "kernel" not in est.get_params() or est.get_params()["kernel"] == "rbf"
] + [
    _instances.make(
        "TighterBudgetPerceptron", budget=25, gamma=0.05, random_state=0, error_set=error_set
    )
    for error_set in ("all", "random", "flip")
]


@pytest.mark.parametrize("est", _LAZY_CASES, ids=lambda est: repr(est))
def test_block_values_computed_as_rows_join_are_those_computed_beforehand(est, monkeypatch):
    # A block of sparse rounds computes its rows' values with the rows that
    # join (or that an error set keeps) when they do (BlockColumns); the
    # model, the counts and the scores are the bits of a fit whose blocks
    # compute them all beforehand.
    from sklearn.base import clone

    from sklearn_budget import _kernels
    from sklearn_budget._dense_rows import EXP_LOOP

    rng = np.random.RandomState(4)
    X = _wide_rows(rng, 1_300, n_features=3_000, nnz=15)
    y = np.argmax(X @ rng.standard_normal((X.shape[1], 3)), axis=1) % 2

    def fit():
        model = clone(est).fit(X[:700], y[:700])
        return model.partial_fit(X[700:], y[700:])

    served = []
    rounds = _kernels.sparse_rbf_rounds

    def counted(*args):
        out = rounds(*args)
        served.append(out is not None)
        return out

    monkeypatch.setattr(_kernels, "sparse_rbf_rounds", counted)
    lazy = fit()
    assert sum(served) >= 5 if EXP_LOOP else not any(served)
    monkeypatch.setattr(_kernels, "sparse_rbf_rounds", lambda *args: None)
    beforehand = fit()
    for name, value in beforehand._state.items():
        assert np.array_equal(lazy._state[name], value, equal_nan=True), name
    assert lazy.n_mistakes_ == beforehand.n_mistakes_
    assert np.array_equal(lazy.decision_function(X[:200]), beforehand.decision_function(X[:200]))


@pytest.mark.parametrize("error_set", ["all", "random", "flip"])
def test_error_sets_of_sparse_rows_do_not_depend_on_the_split(error_set):
    # An entry of the error set is read by the later rows of its block as
    # the block computes its rows' values, and by the rows of later blocks
    # and calls from the kernel of the block against the entries: both
    # (row, entry), the same bits, so the model is that of one call
    # wherever the calls end (split in the middle of a block, one row).
    from sklearn_budget import TighterBudgetPerceptron

    rng = np.random.RandomState(0)
    X = sp.random(700, 50, density=0.05, format="csr", random_state=rng)
    y = rng.randint(0, 2, 700)

    def play(splits):
        est = TighterBudgetPerceptron(
            budget=30, gamma=1.0, error_set=error_set, error_set_size=50, random_state=0
        )
        bounds = [0, *splits, X.shape[0]]
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            est.partial_fit(X[lo:hi], y[lo:hi], classes=[0, 1])
        return est

    whole = play([])
    n, m = whole._n, int(whole._state["E_ints"][0])
    assert m > 10
    for splits in ([300], [100, 500], [1]):
        split = play(splits)
        assert split._n == n and int(split._state["E_ints"][0]) == m
        assert np.array_equal(split._state["E_K"][:n, :m], whole._state["E_K"][:n, :m])
        assert np.array_equal(split._state["alpha"][:n], whole._state["alpha"][:n])
        assert np.array_equal(split.decision_function(X), whole.decision_function(X))
