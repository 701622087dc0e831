"""The features that ``fit`` computes once for all its epochs (FOGD and NOGD).

Every epoch of ``fit`` plays the same rows: a row's random features (FOGD),
or its features of the Nystroem map once the landmarks are fixed (NOGD),
are computed the first time the row needs them and read again in the later
epochs, within scikit-learn's ``working_memory``. FOGD's rounds see the same
numbers as when every epoch computes them (each row's features are the same
bits whatever the block of rows they are computed in); NOGD's map features
come from a BLAS product of a block of rows, whose last bits may depend on
the block: its rounds are the same, its weights the same to round-off.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import config_context

from sklearn_budget import (
    FourierOnlineClassifier,
    NystroemOnlineClassifier,
    _fourier,
    _linear_online,
    _nystroem_online,
)
from sklearn_budget._dense_rows import KERNEL_CODES
from sklearn_budget._kernels import Kernel, kernel_values

# The rows of the data sets below, and a budget reached in the first epoch.
N_ROWS, BUDGET = 300, 20
# working_memory (MiB) too small for one row of features: no cache; and
# room for 50 rows of BUDGET floats: the first 50 rows of X kept, the
# others computed in every epoch.
NO_ROW, SOME_ROWS = 1e-6, 50 * 8 * BUDGET / 2**20

# The fit's majority check scores with a kernel expansion in blocks of
# working_memory, which warns when it cannot take one row.
pytestmark = pytest.mark.filterwarnings("ignore:Could not adhere to working_memory")


def _data(n=N_ROWS, d=4, n_classes=2, seed=0, sparse=False):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5][: n_classes - 1])
    flip = rng.rand(n) < 0.1
    y[flip] = (y[flip] + 1) % n_classes
    if sparse:
        X[np.abs(X) < 0.6] = 0.0
        return sp.csr_matrix(X), y
    return X, y


def _fitted(model, X, y, working_memory=None, **fit_params):
    if working_memory is None:
        return model.fit(X, y, **fit_params)
    with config_context(working_memory=working_memory):
        return model.fit(X, y, **fit_params)


def _outputs(model, X):
    """What a fit leaves: its state arrays, coefficients and scores."""
    out = {f"state_{k}": np.asarray(v) for k, v in model._state.items()}
    name = "coef_" if isinstance(model, FourierOnlineClassifier) else "dual_coef_"
    out[name] = getattr(model, name)
    out["n_mistakes_"] = np.asarray(model.n_mistakes_)
    out["n_iter_"] = np.asarray(model.n_iter_)
    out["scores"] = model.decision_function(X)
    return out


def _assert_same_bits(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        # Bit for bit: NaN nowhere, and the same bytes.
        assert a[k].tobytes() == b[k].tobytes(), k


def _assert_same_rounds(model, other, X):
    """NOGD fits whose map features were computed in other blocks of rows: the
    same landmarks and the same rounds, every update, mistake and round
    counted alike (a round decided otherwise would move the weights by a
    step, about 1e-1 here), and the weights and scores the same to round-off
    (a BLAS product's last bits may depend on its block: not bit for bit)."""
    full, out = _outputs(model, X), _outputs(other, X)
    assert other.support_.tobytes() == model.support_.tobytes()
    assert out["state_counters"].tobytes() == full["state_counters"].tobytes()
    assert out["n_mistakes_"] == full["n_mistakes_"]
    for key in ("dual_coef_", "scores"):
        scale = np.abs(full[key]).max()
        np.testing.assert_allclose(out[key], full[key], rtol=0, atol=1e-9 * scale)


def _counted(monkeypatch, module, name, counts, keep=lambda X, *others: True):
    """Count the rows given to ``module.name`` (where ``keep`` says so)."""
    original = getattr(module, name)

    def spy(*args):
        X = args[2] if name == "kernel_values" else args[0]
        if keep(*args):
            counts.append(X.shape[0])
        return original(*args)

    monkeypatch.setattr(module, name, spy)


def _pair_rbf(a, b):
    # pairwise_kernels calls a callable on each pair of rows.
    return np.exp(-0.3 * np.sum((a - b) ** 2))


NOGD_SETTINGS = [
    ("rbf", False),
    ("rbf", True),
    ("laplacian", False),
    ("poly", False),
    ("linear", True),  # sparse, not rbf: not cached
    (_pair_rbf, False),  # a callable: not cached
]


def _nogd(kernel, **params):
    # One stream per fit: the penalty given rather than chosen on held-out rows.
    params.setdefault("alpha", 0.0)
    params.setdefault("budget", BUDGET)
    return NystroemOnlineClassifier(
        kernel=kernel, gamma=0.3, tol=None, max_iter=4, random_state=0, **params
    )


def _fogd(**params):
    return FourierOnlineClassifier(
        budget=BUDGET, gamma=0.3, tol=None, max_iter=4, random_state=0, **params
    )


@pytest.mark.parametrize("kernel, sparse", NOGD_SETTINGS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_nogd_fit_learns_the_same_with_or_without_its_cache(kernel, sparse, n_classes):
    X, y = _data(n_classes=n_classes, sparse=sparse)
    model = _fitted(_nogd(kernel), X, y)
    full = _outputs(model, X)
    # A switch in the first epoch, and later epochs played after it.
    assert full["n_iter_"] == 4 and model.n_components_ > 0
    for memory in (NO_ROW, SOME_ROWS):
        _assert_same_rounds(model, _fitted(_nogd(kernel), X, y, memory), X)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_fogd_fit_gives_the_same_bits_with_or_without_its_cache(sparse, n_classes):
    X, y = _data(n_classes=n_classes, sparse=sparse)
    full = _outputs(_fitted(_fogd(), X, y), X)
    for memory in (NO_ROW, SOME_ROWS):
        _assert_same_bits(full, _outputs(_fitted(_fogd(), X, y, memory), X))


def test_the_cached_values_are_those_of_a_row_alone():
    # What FOGD's cache, and NOGD's stream split into calls, rely on: a row's
    # values do not depend on the other rows of its block.
    rng = np.random.RandomState(1)
    X, L = rng.randn(40, 5), rng.randn(BUDGET, 5)
    rows = np.array([7, 3, 31, 0, 12])
    for name, code in KERNEL_CODES.items():
        A, B = (np.abs(X), np.abs(L)) if "chi2" in name else (X, L)
        kernel = Kernel(name, gamma=0.3, degree=2, coef0=1.0)
        block = kernel_values(kernel, code, A, B)
        for r in rows:
            alone = kernel_values(kernel, code, A[r : r + 1], B)
            assert alone.tobytes() == block[r : r + 1].tobytes(), name
        # NOGD's landmarks' phase keeps a row's values with the first
        # landmarks and computes those with the later ones (_LandmarkValues).
        later = np.ascontiguousarray(block[:, 7:])
        assert kernel_values(kernel, code, A, B[7:]).tobytes() == later.tobytes(), name
    Xs, Ls = sp.csr_matrix(np.where(np.abs(X) < 0.6, 0, X)), sp.csr_matrix(L)
    rbf = Kernel("rbf", gamma=0.3)
    block = kernel_values(rbf, None, Xs, Ls)
    assert block[rows].tobytes() == kernel_values(rbf, None, Xs[rows], Ls).tobytes()
    later = np.ascontiguousarray(block[:, 7:])
    assert kernel_values(rbf, None, Xs, Ls[7:]).tobytes() == later.tobytes()
    W, b = rng.randn(5, BUDGET), rng.uniform(0, 2 * np.pi, BUDGET)
    for A in (X, Xs):
        block = _fourier.fourier_features(A, W, b)
        assert block[rows].tobytes() == _fourier.fourier_features(A[rows], W, b).tobytes()


def _count_landmark_rows(monkeypatch, counts):
    """Count the rows whose kernel values with the fixed landmarks (not
    their Gram matrix, nor the values of the landmarks' phase) are computed."""
    original = NystroemOnlineClassifier._landmark_values

    def spy(self, X, *args, **kwargs):
        counts.append(X.shape[0])
        return original(self, X, *args, **kwargs)

    monkeypatch.setattr(NystroemOnlineClassifier, "_landmark_values", spy)


@pytest.mark.parametrize("sparse", [False, True])
def test_nogd_computes_a_row_kernel_values_with_the_landmarks_once_per_fit(sparse, monkeypatch):
    X, y = _data(sparse=sparse)
    for memory, per_epoch in ((None, False), (NO_ROW, True)):
        model, counts = _nogd("rbf"), []
        _count_landmark_rows(monkeypatch, counts)
        _fitted(model, X, y, memory)
        assert model.n_iter_ == 4 and model.n_components_ == BUDGET
        if per_epoch:
            # Every epoch after the first: every row again.
            assert sum(counts) > 3 * N_ROWS
        else:
            # Every row once: those played after the switch in the first
            # epoch then, the others in the second epoch.
            assert sum(counts) == N_ROWS
    # Sparse rows of another kernel, or a callable: the map's features are
    # kept whatever the kernel (their bits are the product's of the block).
    for kernel in ["linear"] if sparse else [_pair_rbf]:
        model, counts = _nogd(kernel), []
        _count_landmark_rows(monkeypatch, counts)
        _fitted(model, X, y)
        assert sum(counts) == N_ROWS


# A callable (not cached either) plays every pair in Python: too slow here.
@pytest.mark.parametrize("kernel, sparse", [s for s in NOGD_SETTINGS if not callable(s[0])])
def test_nogd_landmarks_phase_computes_a_row_values_with_a_landmark_once(
    kernel, sparse, monkeypatch
):
    # A budget that the stream never fills: every epoch plays kernel OGD.
    X, y = _data(sparse=sparse)
    cached = kernel in ("rbf", "laplacian", "poly") and (kernel == "rbf" or not sparse)
    original = _nystroem_online.kernel_values
    gather = NystroemOnlineClassifier._gather_landmarks
    rounds = NystroemOnlineClassifier._hinge_rounds
    computed, chunks, checked = [], [], []

    def counted(kernel, code, A, Z):
        # The values computed: rows times columns (the landmarks, then the
        # rows of the chunk, which may join).
        computed.append(A.shape[0] * Z.shape[0])
        return original(kernel, code, A, Z)

    def chunk(self, A, *args):
        chunks.append((A, _nystroem_online._stack(self._landmarks, A)))
        return gather(self, A, *args)

    def the_same_values(self, K, *args, **kwargs):
        # The rounds of a chunk see every value as computed in one block.
        A, Z = chunks.pop()
        assert K.tobytes() == original(self._kernel, self._kernel_code, A, Z).tobytes()
        checked.append(A.shape[0])
        return rounds(self, K, *args, **kwargs)

    monkeypatch.setattr(_nystroem_online, "kernel_values", counted)
    monkeypatch.setattr(NystroemOnlineClassifier, "_gather_landmarks", chunk)
    monkeypatch.setattr(NystroemOnlineClassifier, "_hinge_rounds", the_same_values)
    total = {}
    # Room for the values of 100 rows with every landmark.
    some_rows = 100 * 8 * N_ROWS / 2**20
    for memory in (None, some_rows, NO_ROW):
        model = _nogd(kernel, budget=N_ROWS)
        del computed[:], checked[:]
        _fitted(model, X, y, memory)
        assert model.n_iter_ == 4 and model.n_components_ == 0
        assert sum(checked) == 4 * N_ROWS
        total[memory] = sum(computed)
        outputs = _outputs(model, X)
        if memory is None:
            full = outputs
            assert len(model.support_) > 40
        else:
            _assert_same_bits(full, outputs)
    if cached:
        # Without the cache every epoch computes a row's values with every
        # landmark; with it, a later epoch computes those with the landmarks
        # that joined since, and those with the rows of chunks of 64.
        assert total[None] < 0.6 * total[NO_ROW]
        assert total[None] < total[some_rows] < total[NO_ROW]
    else:
        assert total[None] == total[some_rows] == total[NO_ROW]


@pytest.mark.parametrize("sparse", [False, True])
def test_fogd_computes_a_row_features_once_per_fit(sparse, monkeypatch):
    X, y = _data(sparse=sparse)
    # The fit's majority check scores rows with the features too: not counted.
    monkeypatch.setattr(FourierOnlineClassifier, "_warn_if_majority_does_as_well", lambda *a: None)
    for memory, expected in (
        (None, N_ROWS),
        (SOME_ROWS, 50 + 4 * (N_ROWS - 50)),
        (NO_ROW, 4 * N_ROWS),
    ):
        counts = []
        _counted(monkeypatch, _fourier, "fourier_features", counts)
        model = _fitted(_fogd(), X, y, memory)
        assert model.n_iter_ == 4
        assert sum(counts) == expected


def test_nogd_rows_of_zero_weight_are_not_played_or_computed(monkeypatch):
    # The cache knows the rows by their place in the stream, without those
    # of zero weight.
    X, y = _data()
    weight = np.ones(N_ROWS)
    weight[::3] = 0.0
    full = _fitted(_nogd("rbf"), X, y, sample_weight=weight)
    _assert_same_rounds(full, _fitted(_nogd("rbf"), X, y, NO_ROW, sample_weight=weight), X)
    model, counts = _nogd("rbf"), []
    _count_landmark_rows(monkeypatch, counts)
    _fitted(model, X, y, sample_weight=weight)
    assert sum(counts) == N_ROWS - len(weight[::3])


@pytest.mark.parametrize("make", [_fogd, lambda: _nogd("rbf")])
def test_the_cache_goes_with_the_fit(make):
    X, y = _data()
    model = _fitted(make(), X, y)
    assert _linear_online._FIT_FEATURES.get(model) is None
    without = _fitted(make(), X, y, NO_ROW)
    assert set(vars(model)) == set(vars(without))
    assert len(pickle.dumps(model)) == len(pickle.dumps(without))


@pytest.mark.parametrize("make", [_fogd, lambda: _nogd("rbf")])
@pytest.mark.parametrize("warm_start", [False, True])
def test_a_fit_interrupted_in_a_later_epoch_changes_nothing(make, warm_start, monkeypatch):
    X, y = _data()
    model = make()
    model.set_params(warm_start=warm_start)
    model.fit(X[:150], y[:150])
    before = {k: v.copy() for k, v in model._state.items()}
    attrs = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in vars(model).items()}
    pickled = pickle.dumps(model)
    blocks = []
    original = type(model)._play_block

    def interrupted(self, X, rows, cls, *args):
        # The third epoch: rows of the cache are read by then.
        blocks.append(cls.shape[0])
        if sum(blocks) > 2 * N_ROWS:
            raise KeyboardInterrupt
        return original(self, X, rows, cls, *args)

    monkeypatch.setattr(type(model), "_play_block", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y)
    monkeypatch.setattr(type(model), "_play_block", original)
    assert _linear_online._FIT_FEATURES.get(model) is None
    assert set(model._state) == set(before)
    for k, v in before.items():
        np.testing.assert_array_equal(model._state[k], v)
    assert set(vars(model)) == set(attrs)
    for name in ("coef_", "dual_coef_", "support_", "n_mistakes_", "n_iter_"):
        if name in attrs:
            np.testing.assert_array_equal(getattr(model, name), attrs[name])
    assert pickle.dumps(model) == pickled
    # The next fit starts from that model, with a cache of its own.
    again = pickle.loads(pickled).fit(X, y)
    _assert_same_bits(_outputs(model.fit(X, y), X), _outputs(again, X))
