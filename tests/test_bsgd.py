"""BudgetedSGDClassifier against a plain per-sample Pegasos with budget maintenance."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from sklearn_budget import BudgetedSGDClassifier
from sklearn_budget._rounds import _BLOCK_SIZE

pytestmark = pytest.mark.usefixtures("kernel_path")

TIE = 1e-9
INV_PHI = (np.sqrt(5.0) - 1.0) / 2.0


class RefMember:
    def __init__(self, index, x, coef, born, kxx):
        self.index, self.x, self.coef, self.born, self.kxx = index, x, coef, born, kxx
        self.acc = np.zeros_like(coef)


class ReferenceBSGD:
    """Pegasos, written out: every coefficient multiplied by (1 - 1/t) on
    every round, members in a list, kernel values from pairwise_kernels,
    linear algebra from numpy."""

    def __init__(self, n_classes, lam, budget, maintenance, kernel, kernel_kw, rtol=1e-10):
        self.R = 1 if n_classes == 2 else n_classes
        self.lam, self.budget, self.maintenance = lam, budget, maintenance
        self.kernel, self.kernel_kw, self.rtol = kernel, kernel_kw, rtol
        self.members, self.retired = [], []
        self.t = self.mistakes = 0

    def k(self, A, B):
        return pairwise_kernels(
            np.atleast_2d(A), np.atleast_2d(B), metric=self.kernel, **self.kernel_kw
        )

    def scores(self, X):
        if not self.members:
            return np.zeros((len(X), self.R))
        K = self.k(X, np.array([m.x for m in self.members]))
        return K @ np.array([m.coef for m in self.members])

    def margin(self, f, y):
        if self.R == 1:
            return y * f[0], None
        others = [c for c in range(self.R) if c != y]
        r = others[int(np.argmax(f[others]))]
        return f[y] - f[r], r

    @staticmethod
    def oldest_of_lowest(members, scores):
        low = min(scores)
        tied = [i for i, s in enumerate(scores) if s <= low + TIE * abs(low)]
        return min(tied, key=lambda i: members[i].born)

    def play(self, X, y, index, weights=None, average=False):
        kdiag = np.diag(self.k(X, X))
        for j in range(len(X)):
            x, yt, w = X[j], y[j], 1.0 if weights is None else weights[j]
            self.t += 1
            t = self.t
            if self.members:
                kS = self.k(np.array([m.x for m in self.members]), x)[:, 0]
                f = kS @ np.array([m.coef for m in self.members])
            else:
                f = np.zeros(self.R)
            m, r = self.margin(f, yt)
            self.mistakes += m <= 0
            if average:
                for mem in self.members:
                    mem.acc += mem.coef
            for mem in self.members:
                mem.coef = mem.coef * (1.0 - 1.0 / t)
            if m >= 1:
                continue
            v = np.array([float(yt)]) if self.R == 1 else np.zeros(self.R)
            if self.R > 1:
                v[yt], v[r] = 1.0, -1.0
            step = w * v / (self.lam * t)
            if self.maintenance == "projection" and self.members:
                S = np.array([mem.x for mem in self.members])
                d = np.linalg.solve(self.k(S, S), kS)
                if kdiag[j] - kS @ d <= self.rtol * kdiag[j]:
                    for mem, di in zip(self.members, d):
                        mem.coef = mem.coef + di * step
                    continue
            self.members.append(RefMember(index[j], x.copy(), step, t, kdiag[j]))
            if len(self.members) > self.budget:
                getattr(self, self.maintenance)()
        return self

    def norms(self):
        return [float(mem.coef @ mem.coef) * mem.kxx for mem in self.members]

    def retire(self, mem):
        self.retired.append(mem)

    def removal(self):
        p = self.oldest_of_lowest(self.members, self.norms())
        self.retire(self.members.pop(p))

    def projection(self):
        p = self.oldest_of_lowest(self.members, self.norms())
        gone = self.members.pop(p)
        S = np.array([mem.x for mem in self.members])
        d = np.linalg.solve(self.k(S, S), self.k(S, gone.x)[:, 0])
        for mem, di in zip(self.members, d):
            mem.coef = mem.coef + di * gone.coef
        self.retire(gone)

    def merging(self):
        gamma = self.kernel_kw["gamma"]
        mi = self.oldest_of_lowest(self.members, [float(m.coef @ m.coef) for m in self.members])
        a_m = self.members[mi]

        def norm2(lk, h, am2, an2, amn):
            km, kn = np.exp(lk * (1 - h) ** 2), np.exp(lk * h * h)
            return am2 * km * km + an2 * kn * kn + 2 * amn * km * kn

        def search(lk, am2, an2, amn):
            a, b = (0.0, 1.0) if amn >= 0 else (-1.0, 0.0)
            c, d = b - INV_PHI * (b - a), a + INV_PHI * (b - a)
            fc, fd = norm2(lk, c, am2, an2, amn), norm2(lk, d, am2, an2, amn)
            while b - a > 1e-6:
                if fc >= fd - 1e-12 * abs(fd):
                    b, d, fd = d, c, fc
                    c = b - INV_PHI * (b - a)
                    fc = norm2(lk, c, am2, an2, amn)
                else:
                    a, c, fc = c, d, fd
                    d = a + INV_PHI * (b - a)
                    fd = norm2(lk, d, am2, an2, amn)
            return 0.5 * (a + b)

        degradation, hs = [], []
        for i, a_n in enumerate(self.members):
            if i == mi:
                degradation.append(np.inf)
                hs.append(None)
                continue
            lk = -gamma * float(np.sum((a_m.x - a_n.x) ** 2))
            am2, an2 = float(a_m.coef @ a_m.coef), float(a_n.coef @ a_n.coef)
            amn = float(a_m.coef @ a_n.coef)
            h = search(lk, am2, an2, amn)
            degradation.append(am2 + an2 + 2 * np.exp(lk) * amn - norm2(lk, h, am2, an2, amn))
            hs.append(h)
        ni = self.oldest_of_lowest(self.members, degradation)
        a_n, h = self.members[ni], hs[ni]
        z = h * a_m.x + (1 - h) * a_n.x
        coef = a_m.coef * self.k(a_m.x, z)[0, 0] + a_n.coef * self.k(a_n.x, z)[0, 0]
        for i in sorted([mi, ni], reverse=True):
            self.retire(self.members.pop(i))
        self.members.append(RefMember(-1, z, coef, self.t, self.k(z, z)[0, 0]))


def stream(n, n_classes, seed=0, n_features=4):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    y = rng.randint(n_classes, size=n)
    X[:, 0] += 1.5 * (y - (n_classes - 1) / 2)
    return X, y


def encode(y, n_classes):
    return 2 * y - 1 if n_classes == 2 else y


def assert_matches(est, ref, X_test, average=False):
    assert est.n_mistakes_ == ref.mistakes
    rows = [m for m in ref.members if m.index >= 0]
    merged = [m for m in ref.members if m.index < 0]
    if not average:
        np.testing.assert_array_equal(
            est.support_, sorted(m.index for m in rows) + [-1] * len(merged)
        )
    # The decision function of the whole hypothesis (the merged points'
    # coordinates agree to the golden-section tolerance).
    if average:
        members = ref.members + ref.retired
        coef = np.array([m.acc for m in members]) / ref.t
        K = pairwise_kernels(
            X_test, np.array([m.x for m in members]), metric=ref.kernel, **ref.kernel_kw
        )
        expected = K @ coef
    else:
        expected = ref.scores(X_test)
    got = est.decision_function(X_test).reshape(len(X_test), -1)
    rtol = 1e-4 if est.maintenance == "merging" else 1e-8
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


KERNELS = {"rbf": {"gamma": 0.5}, "linear": {}, "poly": {"gamma": 0.3, "degree": 2, "coef0": 1.0}}


def check_partial_fit_matches_reference(maintenance, n_classes, n):
    X, y = stream(n, n_classes)
    kw = KERNELS["rbf"]
    est = BudgetedSGDClassifier(budget=8, alpha=0.05, maintenance=maintenance, **kw)
    est.partial_fit(X, y, classes=np.arange(n_classes))
    ref = ReferenceBSGD(n_classes, 0.05, 8, maintenance, "rbf", kw)
    ref.play(X, encode(y, n_classes), np.arange(n))
    assert_matches(est, ref, stream(40, n_classes, seed=1)[0])
    assert len(est.support_) <= 8


@pytest.mark.parametrize("maintenance", ["removal", "projection"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("n", [60, _BLOCK_SIZE + 50])
def test_partial_fit_matches_reference(maintenance, n_classes, n):
    check_partial_fit_matches_reference(maintenance, n_classes, n)


# Merging always takes the direct path: merged points have no block column.
@pytest.mark.any_kernel_path
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("n", [60, _BLOCK_SIZE + 50])
def test_merging_matches_reference(n_classes, n):
    check_partial_fit_matches_reference("merging", n_classes, n)


@pytest.mark.parametrize("maintenance", ["removal", "projection"])
@pytest.mark.parametrize("kernel", ["linear", "poly"])
@pytest.mark.parametrize("sparse", [False, True])
def test_other_kernels_and_sparse_input(maintenance, kernel, sparse):
    X, y = stream(150, 3, seed=2, n_features=6)
    kw = KERNELS[kernel]
    est = BudgetedSGDClassifier(budget=5, alpha=0.1, maintenance=maintenance, kernel=kernel, **kw)
    est.partial_fit(sp.csr_matrix(X) if sparse else X, y, classes=[0, 1, 2])
    ref = ReferenceBSGD(3, 0.1, 5, maintenance, kernel, kw)
    ref.play(X, y, np.arange(len(y)))
    assert_matches(est, ref, stream(30, 3, seed=3, n_features=6)[0])


@pytest.mark.parametrize("maintenance", ["removal", "projection"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_exact_average_matches_reference(maintenance, n_classes):
    check_average_matches_reference(maintenance, n_classes)


@pytest.mark.any_kernel_path
@pytest.mark.parametrize("n_classes", [2, 3])
def test_merging_exact_average_matches_reference(n_classes):
    check_average_matches_reference("merging", n_classes)


def check_average_matches_reference(maintenance, n_classes):
    X, y = stream(200, n_classes, seed=4)
    kw = KERNELS["rbf"]
    est = BudgetedSGDClassifier(
        budget=6, alpha=0.02, maintenance=maintenance, average="exact", **kw
    )
    est.partial_fit(X, y, classes=np.arange(n_classes))
    ref = ReferenceBSGD(n_classes, 0.02, 6, maintenance, "rbf", kw)
    ref.play(X, encode(y, n_classes), np.arange(len(y)), average=True)
    assert_matches(est, ref, stream(30, n_classes, seed=5)[0], average=True)


def test_sample_weight_scales_the_step():
    X, y = stream(120, 2, seed=6)
    w = np.random.RandomState(0).uniform(0.2, 3.0, size=len(y))
    kw = KERNELS["rbf"]
    est = BudgetedSGDClassifier(budget=7, alpha=0.05, maintenance="projection", **kw)
    est.partial_fit(X, y, classes=[0, 1], sample_weight=w)
    ref = ReferenceBSGD(2, 0.05, 7, "projection", "rbf", kw)
    ref.play(X, 2 * y - 1, np.arange(len(y)), weights=w)
    assert_matches(est, ref, X[:30])


@pytest.mark.any_kernel_path
@pytest.mark.parametrize("maintenance", ["removal", "projection", "merging"])
def test_split_partial_fit_and_pickling_mid_stream(maintenance):
    X, y = stream(300, 3, seed=7)
    one = BudgetedSGDClassifier(budget=10, alpha=0.01, maintenance=maintenance, gamma=0.5)
    one.partial_fit(X, y, classes=[0, 1, 2])
    split = BudgetedSGDClassifier(budget=10, alpha=0.01, maintenance=maintenance, gamma=0.5)
    split.partial_fit(X[:77], y[:77], classes=[0, 1, 2])
    split = pickle.loads(pickle.dumps(split))
    split.partial_fit(X[77:], y[77:])
    np.testing.assert_array_equal(one.support_, split.support_)
    np.testing.assert_allclose(one.support_vectors_, split.support_vectors_, rtol=0, atol=0)
    np.testing.assert_allclose(one.dual_coef_, split.dual_coef_, rtol=0, atol=0)
    assert one.n_mistakes_ == split.n_mistakes_


@pytest.mark.any_kernel_path
def test_two_classes_are_the_binary_algorithm():
    # The binary rule (one row, y in {-1, +1}) against the same stream with
    # labels flipped: the decision function changes sign, nothing else.
    X, y = stream(200, 2, seed=8)
    a = BudgetedSGDClassifier(budget=6, alpha=0.05, maintenance="merging", gamma=0.5)
    b = clone(a)
    a.partial_fit(X, y, classes=[0, 1])
    b.partial_fit(X, 1 - y, classes=[0, 1])
    assert a.dual_coef_.shape[0] == 1
    np.testing.assert_allclose(a.decision_function(X), -b.decision_function(X), rtol=1e-12)


@pytest.mark.any_kernel_path
def test_merged_points_are_new_vectors_with_index_minus_one():
    X, y = stream(300, 2, seed=9)
    est = BudgetedSGDClassifier(budget=5, alpha=0.01, gamma=0.5, max_iter=1, shuffle=False)
    est.fit(X, y)
    merged = est.support_ < 0
    assert merged.any()
    assert len(est.support_) == 5
    # A merged point lies on the line through two training rows, not on a row.
    for z in est.support_vectors_[merged]:
        assert np.min(np.abs(X - z).sum(axis=1)) > 0


@pytest.mark.any_kernel_path
def test_merging_refuses_other_kernels():
    X, y = stream(50, 2)
    with pytest.raises(ValueError, match="kernel='rbf'"):
        BudgetedSGDClassifier(kernel="linear").fit(X, y)
    est = BudgetedSGDClassifier(kernel="poly")
    with pytest.raises(ValueError, match="kernel='rbf'"):
        est.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(est, "classes_")


def assert_same_model(a, b):
    """The same fitted model, to the last bit (members, coefficients, scale)."""
    assert a.gamma_ == b.gamma_
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.support_vectors_, b.support_vectors_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)


@pytest.mark.any_kernel_path
@pytest.mark.parametrize("gamma", ["scale", 0.05])
def test_merging_on_sparse_rows_is_the_model_of_the_dense_rows(data_home, gamma):
    # The default estimator on the CSR matrix that fetch_a9a returns:
    # merging keeps dense members and densifies the rows as it plays them,
    # with gamma='scale' computed on the same dense rows.
    from sklearn_budget.datasets import fetch_a9a

    X, y = fetch_a9a(data_home=data_home, download_if_missing=False, return_X_y=True)
    X, y = X[:1500], y[:1500]
    assert sp.issparse(X)
    sparse = BudgetedSGDClassifier(budget=30, gamma=gamma, random_state=0).fit(X, y)
    dense = BudgetedSGDClassifier(budget=30, gamma=gamma, random_state=0).fit(X.toarray(), y)
    assert (sparse.support_ == -1).any()  # points were merged
    assert isinstance(sparse.support_vectors_, np.ndarray)
    assert_same_model(sparse, dense)
    np.testing.assert_array_equal(sparse.decision_function(X), dense.decision_function(X))
    # Chunks of sparse rows, then one sparse row, as the dense stream does.
    a, b = (
        BudgetedSGDClassifier(budget=30, gamma=gamma),
        BudgetedSGDClassifier(budget=30, gamma=gamma),
    )
    for start in range(0, 1500, 500):
        a.partial_fit(X[start : start + 500], y[start : start + 500], classes=[-1, 1])
        b.partial_fit(X[start : start + 500].toarray(), y[start : start + 500], classes=[-1, 1])
    a.partial_fit(X[:1], y[:1])
    b.partial_fit(X[:1].toarray(), y[:1])
    assert_same_model(a, b)


def test_merging_on_sparse_rows_too_large_for_the_scale_is_refused():
    X, y = stream(300, 2, n_features=2)
    X = sp.csr_matrix(X)
    est = BudgetedSGDClassifier(budget=10)
    # 300 x 2 float64 is 4,800 bytes (0.00458 MiB): over a working memory of 0.004 MiB.
    with config_context(working_memory=0.004):
        message = r"copy \(0.00458 MiB\) exceeds working_memory \(0.004 MiB\)"
        with pytest.raises(ValueError, match=message):
            est.fit(X, y)
        assert not hasattr(est, "classes_")
        # A numeric gamma needs only the width of the rows.
        est.set_params(gamma=0.5).fit(X, y)
    assert len(est.support_) <= 10


@pytest.mark.any_kernel_path
@pytest.mark.parametrize("maintenance", ["removal", "projection", "merging"])
def test_budget_and_memory_stay_bounded(maintenance):
    X, y = stream(3000, 3, seed=10)
    est = BudgetedSGDClassifier(budget=12, alpha=1e-3, maintenance=maintenance, gamma=0.5)
    for start in range(0, len(y), 500):
        est.partial_fit(X[start : start + 500], y[start : start + 500], classes=[0, 1, 2])
        assert len(est.support_) <= 12
        assert all(a.shape[0] <= 13 for a in est._state.values() if a.ndim and a.shape[0] > 4)
    assert np.isfinite(est.dual_coef_).all()


@pytest.mark.any_kernel_path
def test_projection_on_ill_conditioned_data():
    # Duplicates and near duplicates: the factor stays regular, the rows
    # in the span are projected, nothing overflows.
    rng = np.random.RandomState(0)
    base = rng.randn(20, 2)
    X = np.vstack([base, base, base + 1e-9 * rng.randn(20, 2)] * 5)
    y = (X[:, 0] > 0).astype(int)
    for gamma in (1e-4, 1.0, 1e4):
        est = BudgetedSGDClassifier(budget=15, alpha=1e-3, maintenance="projection", gamma=gamma)
        est.fit(X, y)
        assert len(est.support_) <= 15
        assert np.isfinite(est.decision_function(X)).all()
        L = est._state["chol"][: est._n, : est._n]
        assert np.all(np.diag(L) > 0)


@pytest.mark.any_kernel_path
def test_removal_without_weights_removes_the_oldest():
    X, y = stream(400, 2, seed=11)
    est = BudgetedSGDClassifier(budget=10, alpha=1e-2, maintenance="removal", gamma=0.5)
    est.partial_fit(X, y, classes=[0, 1])
    # Every member has the same |coefficient|: the last ten margin errors stay.
    ref = ReferenceBSGD(2, 1e-2, 10, "removal", "rbf", {"gamma": 0.5})
    ref.play(X, 2 * y - 1, np.arange(400))
    idx = [m.index for m in ref.members]
    assert idx == sorted(idx)
    np.testing.assert_array_equal(est.support_, idx)


@pytest.mark.any_kernel_path
def test_pipeline_grid_search_over_budget_alpha_and_maintenance():
    X, y = make_blobs(n_samples=240, centers=3, cluster_std=2.0, random_state=0)
    pipe = make_pipeline(StandardScaler(), BudgetedSGDClassifier(random_state=0, max_iter=2))
    grid = GridSearchCV(
        pipe,
        {
            "budgetedsgdclassifier__budget": [10, 30],
            "budgetedsgdclassifier__alpha": [1e-3, 1e-1],
            "budgetedsgdclassifier__maintenance": ["removal", "projection", "merging"],
        },
        cv=3,
    )
    grid.fit(X, y)
    assert len(grid.cv_results_["params"]) == 12
    # Overlapping blobs: an exact SVM is the yardstick.
    svm = cross_val_score(make_pipeline(StandardScaler(), SVC()), X, y, cv=3).mean()
    assert grid.best_score_ >= svm - 0.03
    assert (
        len(grid.best_estimator_[-1].support_) <= grid.best_params_["budgetedsgdclassifier__budget"]
    )


@pytest.mark.any_kernel_path
def test_stream_parameters_are_fixed():
    X, y = stream(60, 2)
    est = BudgetedSGDClassifier(budget=5).partial_fit(X, y, classes=[0, 1])
    for name, value in [("alpha", 1e-2), ("maintenance", "removal"), ("budget", 6)]:
        bad = clone(est).set_params(**{name: value})
        bad.__dict__.update(
            {k: v for k, v in est.__dict__.items() if k.endswith("_") or k.startswith("_")}
        )
        with pytest.raises(ValueError, match="fixed for the stream"):
            bad.partial_fit(X, y)
