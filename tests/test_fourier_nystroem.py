"""FourierOnlineClassifier (FOGD) and NystroemOnlineClassifier (NOGD).

Each is checked against a per-sample reference written here as plainly as
possible (a loop over rows, the features and the kernel from their
formulas), on the same stream: the same features or landmarks, the same
hypotheses, the same mistakes.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning

from sklearn_budget import FourierOnlineClassifier, NystroemOnlineClassifier


def _data(n=300, d=3, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    r = np.hypot(X[:, 0], X[:, 1])
    y = (r > 1.2).astype(int) if n_classes == 2 else np.digitize(X[:, 0], [-0.5, 0.5])
    flip = rng.rand(n) < 0.05
    y[flip] = (y[flip] + 1) % n_classes
    return X, y


def _labels(y, classes):
    """+-1 labels of each output: one row for two classes, one per class otherwise."""
    c = np.searchsorted(classes, y)
    if len(classes) == 2:
        return (2.0 * c - 1.0)[None, :]
    return np.where(c == np.arange(len(classes))[:, None], 1.0, -1.0)


def _is_mistake(s, Yi):
    if len(s) == 1:
        return Yi[0] * s[0] <= 0
    true = int(np.argmax(Yi))
    return any(s[k] >= s[true] for k in range(len(s)) if k != true)


def _hinge_steps(s, Yi, joint):
    """The signs of the round's steps, one per output: one-vs-rest, every
    output whose margin is below 1; Crammer and Singer (``joint``, more than
    two classes), +1 on the true class and -1 on the best other one (the
    first of them) when their difference is below 1. Also returns the
    margins compared with 1."""
    if joint and len(s) > 1:
        true = int(np.argmax(Yi))
        rival = max((k for k in range(len(s)) if k != true), key=lambda k: s[k])
        margin = s[true] - s[rival]
        steps = np.zeros(len(s))
        if margin < 1:
            steps[true], steps[rival] = 1.0, -1.0
        return steps, np.array([margin])
    margins = Yi * s
    return np.where(margins < 1, Yi, 0.0), margins


def _ogd_reference(Z, Y, eta, w=None, joint=False, alpha=0.0):
    """Hinge OGD on the feature rows ``Z``: the final weights, the sum of
    the hypotheses of the rounds, the mistakes, and the closest margin to 1.
    ``alpha``: the L2 penalty, ``w <- (1 - eta alpha) w`` in every round
    before its hinge step."""
    n_out = Y.shape[0]
    w = np.zeros((n_out, Z.shape[1])) if w is None else w.copy()
    total, mistakes, closest = np.zeros_like(w), 0, np.inf
    for i in range(Z.shape[0]):
        total += w
        s = np.array([sum(w[k, j] * Z[i, j] for j in range(Z.shape[1])) for k in range(n_out)])
        mistakes += _is_mistake(s, Y[:, i])
        steps, margins = _hinge_steps(s, Y[:, i], joint)
        closest = min(closest, np.min(np.abs(margins - 1)))
        w *= 1 - eta * alpha
        for k in range(n_out):
            w[k] += eta * steps[k] * Z[i]
    return w, total, mistakes, closest


def _fourier_reference(X, y, classes, W, b, eta):
    D = W.shape[1]
    Z = np.array([[np.sqrt(2.0 / D) * np.cos(x @ W[:, j] + b[j]) for j in range(D)] for x in X])
    return _ogd_reference(Z, _labels(y, classes), eta)


def _rbf(a, c, gamma):
    return np.exp(-gamma * np.sum((a - c) ** 2))


def _nystroem_reference(X, y, classes, budget, k, gamma, eta, joint=False, penalty=0.0, epochs=1):
    """NOGD: kernel OGD adding each margin error until ``budget`` landmarks,
    then OGD on the rank-``k`` Nystroem map; ``penalty``: the L2 penalty
    ``alpha`` of the second phase, ``w <- (1 - eta alpha) w`` in every round
    before its hinge step; ``epochs``: passes over the rows in their order
    (the later ones on the map: the landmarks are held by then). Returns the
    landmarks' rows, the final dual coefficients, the mistakes, the closest
    margin to 1, and the dual coefficients of the average of the hypotheses
    of the rounds."""
    Y = _labels(y, classes)
    n_out = Y.shape[0]
    members, alpha, totals, mistakes, closest = [], [], [], 0, np.inf
    i = 0
    while i < len(X) and len(members) < budget:
        # The hypothesis of the round, summed for the average.
        totals = [t + a for t, a in zip(totals, alpha)]
        kx = np.array([_rbf(X[m], X[i], gamma) for m in members])
        s = np.array([np.dot(alpha_k, kx) if members else 0.0 for alpha_k in np.array(alpha).T])
        s = s if members else np.zeros(n_out)
        mistakes += _is_mistake(s, Y[:, i])
        steps, margins = _hinge_steps(s, Y[:, i], joint)
        closest = min(closest, np.min(np.abs(margins - 1)))
        if np.any(steps != 0):
            members.append(i)
            alpha.append(eta * steps)
            totals.append(np.zeros(n_out))
        i += 1
    alpha = np.array(alpha).T  # (n_out, members)
    if len(members) < budget:
        return np.array(members), alpha, mistakes, closest, np.array(totals).T / len(X)
    L = X[members]
    G = np.array([[_rbf(a, c, gamma) for c in L] for a in L])
    d, V = np.linalg.eigh(G)
    top = np.argsort(d)[::-1][:k]
    d, V = d[top], V[:, top]
    Z = np.array([[_rbf(a, c, gamma) for c in L] for a in X[i:]]) @ V / np.sqrt(d)
    w0 = alpha @ V * np.sqrt(d)
    w, total, more, close = _ogd_reference(Z, Y[:, i:], eta, w0, joint, penalty)
    mistakes, closest = mistakes + more, min(closest, close)
    Z = np.array([[_rbf(a, c, gamma) for c in L] for a in X]) @ V / np.sqrt(d)
    for _ in range(epochs - 1):
        w, more_total, more, close = _ogd_reference(Z, Y, eta, w, joint, penalty)
        total, mistakes, closest = total + more_total, mistakes + more, min(closest, close)
    M = (V / np.sqrt(d)).T
    averaged = (np.array(totals).T + total @ M) / (epochs * len(X))
    return np.array(members), w @ M, mistakes, closest, averaged


@pytest.mark.parametrize("n_classes", [2, 3])
def test_fourier_matches_the_reference(n_classes):
    X, y = _data(120, n_classes=n_classes)
    clf = FourierOnlineClassifier(
        budget=40, gamma=0.5, learning_rate=0.7, random_state=0, average=False
    )
    clf.partial_fit(X, y, classes=np.unique(y))
    W, b = clf.random_weights_, clf.random_offset_
    w, total, mistakes, closest = _fourier_reference(X, y, clf.classes_, W, b, 0.7)
    assert closest > 1e-8  # no hinge decision within round-off of the threshold
    np.testing.assert_allclose(clf.coef_, w, rtol=1e-10, atol=1e-12)
    assert clf.n_mistakes_ == mistakes
    avg = FourierOnlineClassifier(
        budget=40, gamma=0.5, learning_rate=0.7, random_state=0, average=True
    ).partial_fit(X, y, classes=np.unique(y))
    np.testing.assert_array_equal(avg.random_weights_, W)
    np.testing.assert_allclose(avg.coef_, total / len(X), rtol=1e-10, atol=1e-12)


def test_fourier_features_are_drawn_as_stated():
    X, y = _data(50, d=4)
    clf = FourierOnlineClassifier(budget=5000, gamma=0.3, random_state=0).fit(X, y)
    W, b = clf.random_weights_, clf.random_offset_
    assert W.shape == (4, 5000) and b.shape == (5000,)
    # N(0, 2 gamma): variance 0.6, estimated on 20,000 draws (std error ~0.006).
    assert abs(W.var() - 0.6) < 0.03 and abs(W.mean()) < 0.02
    assert b.min() >= 0 and b.max() <= 2 * np.pi
    # z(x) . z(x') estimates the rbf kernel, with error O(1 / sqrt(D)).
    Z = np.sqrt(2.0 / 5000) * np.cos(X[:6] @ W + b)
    K = np.exp(-0.3 * ((X[:6, None, :] - X[None, :6, :]) ** 2).sum(-1))
    assert np.abs(Z @ Z.T - K).max() < 0.1


# partial_fit plays the second phase on the expansion, fit on the map's
# features (three epochs here, in the rows' order): the same rounds.
@pytest.mark.parametrize("call, epochs", [("partial_fit", 1), ("fit", 3)])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("multi_class", ["ovr", "crammer_singer"])
@pytest.mark.parametrize("alpha", [0.0, 0.05])
def test_nystroem_matches_the_reference(call, epochs, n_classes, multi_class, alpha):
    X, y = _data(150, n_classes=n_classes)
    params = dict(
        budget=20,
        n_components=6,
        gamma=0.5,
        learning_rate=0.7,
        alpha=alpha,
        multi_class=multi_class,
    )
    if call == "fit":
        params.update(max_iter=epochs, tol=None, shuffle=False)
    classes = np.unique(y)
    joint = multi_class == "crammer_singer"
    members, dual, mistakes, closest, averaged = _nystroem_reference(
        X, y, classes, 20, 6, 0.5, 0.7, joint, alpha, epochs
    )
    assert closest > 1e-8
    assert len(members) == 20  # the stream reaches the second phase
    for average, expected in ((False, dual), (True, averaged)):
        clf = NystroemOnlineClassifier(**params, average=average)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if call == "fit":
                clf.fit(X, y)
            else:
                clf.partial_fit(X, y, classes=classes)
        np.testing.assert_array_equal(clf.support_, members)
        np.testing.assert_array_equal(clf.support_vectors_, X[members])
        np.testing.assert_allclose(clf.dual_coef_, expected, rtol=1e-8, atol=1e-10)
        assert clf.n_mistakes_ == mistakes and clf.n_components_ == 6


def test_crammer_singer_changes_the_rounds_of_more_than_two_classes_only():
    params = dict(budget=20, gamma=0.5, learning_rate=0.7, average=False, random_state=0)
    X, y = _data(150, n_classes=3)
    ovr = NystroemOnlineClassifier(**params, multi_class="ovr").fit(X, y)
    cs = NystroemOnlineClassifier(**params, multi_class="crammer_singer").fit(X, y)
    # Each step adds +eta to the true class and -eta to another: every
    # landmark's coefficients sum to zero over the classes (the map is
    # linear), which one-vs-rest's steps do not.
    scale = np.abs(cs.dual_coef_).max()
    assert np.abs(cs.dual_coef_.sum(axis=0)).max() < 1e-12 * scale
    assert np.abs(ovr.dual_coef_.sum(axis=0)).max() > 0.1 * np.abs(ovr.dual_coef_).max()
    # Two classes: one output, the same rounds under either rule.
    X, y = _data(150)
    ovr = NystroemOnlineClassifier(**params, multi_class="ovr").fit(X, y)
    cs = NystroemOnlineClassifier(**params, multi_class="crammer_singer").fit(X, y)
    np.testing.assert_array_equal(cs.dual_coef_, ovr.dual_coef_)
    np.testing.assert_array_equal(cs.support_, ovr.support_)


def test_nystroem_before_the_budget_is_a_kernel_expansion():
    X, y = _data(30)
    clf = NystroemOnlineClassifier(budget=500, gamma=0.5, learning_rate=0.7, average=False)
    clf.partial_fit(X, y, classes=[0, 1])
    members, dual, mistakes, *_ = _nystroem_reference(X, y, clf.classes_, 500, 100, 0.5, 0.7)
    np.testing.assert_array_equal(clf.support_, members)
    np.testing.assert_allclose(clf.dual_coef_, dual, rtol=1e-12)
    assert clf.n_mistakes_ == mistakes and clf.n_components_ == 0


def test_nystroem_with_full_rank_carries_the_expansion_over():
    # k = budget: the weights in the Nystroem space are the same function.
    X, y = _data(200)
    clf = NystroemOnlineClassifier(
        budget=15, n_components=15, gamma=0.5, learning_rate=0.5, average=False
    )
    clf.partial_fit(X[:60], y[:60], classes=[0, 1])
    # The switch happened within the call (15 margin errors in 60 rows).
    assert clf.n_components_ == 15 and len(clf.support_) == 15
    members, dual, *_ = _nystroem_reference(X[:60], y[:60], clf.classes_, 15, 15, 0.5, 0.5)
    np.testing.assert_array_equal(clf.support_, members)
    np.testing.assert_allclose(clf.dual_coef_, dual, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("cls", [FourierOnlineClassifier, NystroemOnlineClassifier])
@pytest.mark.parametrize("average", [False, True])
def test_a_stream_split_into_calls_is_one_stream(cls, average):
    X, y = _data(3000)
    params = dict(budget=30, gamma=0.5, average=average, random_state=0)
    whole = cls(**params).partial_fit(X, y, classes=[0, 1])
    parts = cls(**params)
    for a, b in [(0, 1), (1, 37), (37, 1500), (1500, 2999), (2999, 3000)]:
        parts.partial_fit(X[a:b], y[a:b], classes=[0, 1])
    assert parts.n_mistakes_ == whole.n_mistakes_
    # The features of a row are computed one row at a time, whatever its
    # block: the same model to the last bit.
    for name in ("coef_", "dual_coef_", "support_"):
        if hasattr(whole, name):
            np.testing.assert_array_equal(getattr(parts, name), getattr(whole, name))
    assert parts.proba_scale_ == whole.proba_scale_
    # fit with one epoch, unshuffled, is the same stream (NOGD: without
    # choosing its penalty on held-out rows).
    plain = {"alpha": 0.0} if cls is NystroemOnlineClassifier else {}
    fitted = cls(**params, **plain, max_iter=1, shuffle=False).fit(X, y)
    assert fitted.n_mistakes_ == whole.n_mistakes_


def test_nystroem_keeps_within_the_budget_and_each_row_once():
    X, y = _data(60)
    clf = NystroemOnlineClassifier(budget=40, gamma=0.5, max_iter=20, tol=None).fit(X, y)
    assert len(clf.support_) <= 40 and clf.support_vectors_.shape[0] == len(clf.support_)
    assert len(np.unique(clf.support_)) == len(clf.support_)
    np.testing.assert_array_equal(clf.support_vectors_, X[clf.support_])
    big = NystroemOnlineClassifier(budget=25, gamma=0.5).fit(*_data(2000))
    assert len(big.support_) == 25 and big.dual_coef_.shape == (1, 25)
    assert big.n_components_ == 25  # the rank is the budget by default


@pytest.mark.parametrize("cls", [FourierOnlineClassifier, NystroemOnlineClassifier])
def test_a_failing_call_changes_nothing(cls, monkeypatch):
    X, y = _data(3000)
    clf = cls(budget=30, gamma=0.5, average=True, random_state=0)
    clf.partial_fit(X[:500], y[:500], classes=[0, 1])
    before = {k: v.copy() for k, v in clf._state.items()}
    attrs = dict(vars(clf))
    scale = clf.proba_scale_
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X[500:], np.where(y[500:] == 1, 7, 0))
    X_bad = X[500:].copy()
    X_bad[-1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(X_bad, y[500:])
    # An interruption after the first block of rows was played.
    played = []
    original = cls._play_block

    def interrupted(self, *args):
        if played:
            raise KeyboardInterrupt
        played.append(1)
        return original(self, *args)

    monkeypatch.setattr(cls, "_play_block", interrupted)
    with pytest.raises(KeyboardInterrupt):
        clf.partial_fit(X[500:], y[500:])
    assert played
    monkeypatch.setattr(cls, "_play_block", original)
    assert set(clf._state) == set(before)
    for k, v in before.items():
        np.testing.assert_array_equal(clf._state[k], v)
    assert set(vars(clf)) == set(attrs)
    assert clf.proba_scale_ == scale
    for name in ("coef_", "dual_coef_", "support_", "n_mistakes_"):
        if name in attrs:
            np.testing.assert_array_equal(getattr(clf, name), attrs[name])


@pytest.mark.parametrize("cls", [FourierOnlineClassifier, NystroemOnlineClassifier])
def test_sparse_input_learns_as_dense(cls):
    X, y = _data(600)
    X[np.abs(X) < 0.5] = 0.0
    dense = cls(budget=30, gamma=0.5, random_state=0).partial_fit(X, y, classes=[0, 1])
    Xs = sp.csr_matrix(X)
    kept = Xs.copy()
    sparse = cls(budget=30, gamma=0.5, random_state=0).partial_fit(Xs, y, classes=[0, 1])
    assert sparse.n_mistakes_ == dense.n_mistakes_
    if cls is FourierOnlineClassifier:
        # A sparse row's features are those of its dense copy, bit for bit.
        np.testing.assert_array_equal(sparse.coef_, dense.coef_)
    else:
        # pairwise_kernels on sparse rows rounds otherwise than the compiled
        # dense formulas (1e-16 relative per kernel value); the reference's
        # margins stay 1e-8 away from the hinge threshold on this stream.
        labels = np.array([0, 1])
        *_, closest, _ = _nystroem_reference(X, y, labels, 30, 6, 0.5, dense.learning_rate)
        assert closest > 1e-8
        np.testing.assert_allclose(sparse.dual_coef_, dense.dual_coef_, rtol=1e-8, atol=1e-10)
        np.testing.assert_array_equal(sparse.support_, dense.support_)
    np.testing.assert_array_equal(sparse.predict(Xs), dense.predict(X))
    assert (Xs != kept).nnz == 0  # the caller's matrix is not modified


@pytest.mark.parametrize("cls", [FourierOnlineClassifier, NystroemOnlineClassifier])
def test_multiclass_probabilities_and_arrays_untouched(cls):
    X, y = _data(900, n_classes=3)
    X0, y0 = X.copy(), y.copy()
    clf = cls(budget=60, gamma=0.5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    assert clf.score(X, y) > 0.85
    proba = clf.predict_proba(X)
    assert proba.shape == (900, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    assert clf.decision_function(X).shape == (900, 3)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(budget=10, n_components=11), "at most budget"),
        # Each round multiplies the weights by 1 - learning_rate * alpha.
        (dict(alpha=0.5, learning_rate=2.0), "must be below 1"),
    ],
)
def test_nystroem_rejects_parameters_that_do_not_fit_together(params, match):
    X, y = _data(50)
    with pytest.raises(ValueError, match=match):
        NystroemOnlineClassifier(**params).fit(X, y)


def test_sample_weight_scales_the_step():
    X, y = _data(200)
    a = FourierOnlineClassifier(budget=20, gamma=0.5, learning_rate=0.4, random_state=0)
    b = FourierOnlineClassifier(budget=20, gamma=0.5, learning_rate=0.2, random_state=0)
    a.partial_fit(X, y, classes=[0, 1], sample_weight=np.full(200, 0.5))
    b.partial_fit(X, y, classes=[0, 1], sample_weight=np.ones(200))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)


@pytest.mark.parametrize("cls", [FourierOnlineClassifier, NystroemOnlineClassifier])
def test_one_row_calls_are_one_stream(cls, monkeypatch):
    X, y = _data(120, n_classes=3)
    params = dict(budget=15, gamma=0.5, average=True, random_state=0)
    whole = cls(**params).partial_fit(X, y, classes=[0, 1, 2])
    rows = cls(**params).partial_fit(X[:1], y[:1], classes=[0, 1, 2])
    # Every later call is played on the one-row path, not through the blocks.
    monkeypatch.setattr(cls, "_play", None)
    for i in range(1, len(X)):
        rows.partial_fit(X[i : i + 1], y[i : i + 1])
    for name in ("coef_", "dual_coef_", "support_", "n_mistakes_"):
        if hasattr(whole, name):
            np.testing.assert_array_equal(getattr(rows, name), getattr(whole, name))
    assert rows.proba_scale_ == whole.proba_scale_
    # A row the path does not take (a list) goes through validation.
    monkeypatch.undo()
    with pytest.raises(ValueError, match="not in classes"):
        rows.partial_fit(X[:1].tolist(), [5])


@pytest.mark.parametrize("cls", [FourierOnlineClassifier, NystroemOnlineClassifier])
def test_an_interrupted_one_row_call_changes_nothing(cls, monkeypatch):
    X, y = _data(200, n_classes=3)
    clf = cls(budget=15, gamma=0.5, average=True, random_state=0)
    clf.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    for i in (100, 101):  # NOGD: in the Nystroem phase
        before = {k: v.copy() for k, v in clf._state.items()}
        attrs = dict(vars(clf))

        def interrupt(self, n_rows):
            raise KeyboardInterrupt

        monkeypatch.setattr(cls, "_end_of_call", interrupt)
        with pytest.raises(KeyboardInterrupt):
            clf.partial_fit(X[i : i + 1], y[i : i + 1])
        monkeypatch.undo()
        assert set(clf._state) == set(before) and set(vars(clf)) == set(attrs)
        for k, v in before.items():
            np.testing.assert_array_equal(clf._state[k], v)
        # The row was played, then undone: playing it again gives the model
        # of an uninterrupted stream.
        clf.partial_fit(X[i : i + 1], y[i : i + 1])
    whole = cls(budget=15, gamma=0.5, average=True, random_state=0)
    whole.partial_fit(X[:102], y[:102], classes=[0, 1, 2])
    for k, v in whole._state.items():
        np.testing.assert_array_equal(clf._state[k], v)


def _narrow_width_warnings(record):
    return [w for w in record if "random features estimate" in str(w.message)]


def test_fourier_warns_when_the_kernel_is_too_narrow_for_its_features():
    # 200 Gaussian rows in 10-D: squared distances to the nearest other row
    # are about 5 or more, so at gamma=5 every kernel value between two rows
    # is below exp(-25), far under 3 / sqrt(500), the features' resolution.
    rng = np.random.RandomState(0)
    X = rng.randn(200, 10)
    y = (X[:, 0] > 0).astype(int)
    with pytest.warns(UserWarning, match="random features estimate") as record:
        FourierOnlineClassifier(gamma=5.0, max_iter=1, random_state=0).fit(X, y)
    assert len(_narrow_width_warnings(record)) == 1
    # Sparse rows are judged as the dense ones.
    with pytest.warns(UserWarning, match="random features estimate"):
        FourierOnlineClassifier(gamma=5.0, max_iter=1, random_state=0).fit(sp.csr_matrix(X), y)


def test_fourier_width_warning_spares_usable_widths_and_small_first_calls(recwarn):
    rng = np.random.RandomState(0)
    X = rng.randn(200, 10)
    y = (X[:, 0] > 0).astype(int)
    # 'scale' (0.1 here): the nearest row's kernel value is about exp(-0.5).
    FourierOnlineClassifier(max_iter=1, random_state=0).fit(X, y)
    # A first call of fewer than 100 rows shows too few neighbours to judge.
    clf = FourierOnlineClassifier(gamma=5.0, random_state=0)
    clf.partial_fit(X[:50], y[:50], classes=[0, 1])
    clf.partial_fit(X[50:], y[50:])
    # Duplicated rows are their own nearest neighbours, at kernel value 1.
    FourierOnlineClassifier(gamma=5.0, max_iter=1, random_state=0).fit(
        np.repeat(X[:100], 2, axis=0), np.repeat(y[:100], 2)
    )
    assert not _narrow_width_warnings(recwarn)


@pytest.mark.parametrize("sparse", [False, True])
def test_landmarks_are_gathered_on_chunks_of_rows(sparse, monkeypatch):
    # The landmarks' phase computes the kernel values of a chunk of rows (as
    # many as the landmarks still to come, at least _GATHER_CHUNK) with each
    # other, not those of the whole block: the same rounds, the same bits as
    # one chunk of every row.
    from sklearn_budget import _nystroem_online

    X, y = _data(n=900, d=4, n_classes=3, seed=2)
    X = sp.csr_matrix(X) if sparse else X
    shapes = []
    kernel_values = _nystroem_online.kernel_values

    def recording(kernel, code, A, B):
        shapes.append((A.shape[0], B.shape[0]))
        return kernel_values(kernel, code, A, B)

    def fit(chunk):
        monkeypatch.setattr(_nystroem_online, "_GATHER_CHUNK", chunk)
        shapes.clear()
        est = NystroemOnlineClassifier(budget=40, gamma=2.0, alpha=0.0, max_iter=2, random_state=0)
        return est.fit(X, y), list(shapes)

    monkeypatch.setattr(_nystroem_online, "kernel_values", recording)
    chunked, chunked_shapes = fit(16)
    whole, whole_shapes = fit(10**9)
    assert whole_shapes[0][0] == 900  # the first block of rounds in one chunk
    gathered = [(a, b) for a, b in chunked_shapes if b > a]  # rows against landmarks + themselves
    assert gathered and max(a for a, _ in gathered) <= 40
    for name in ("dual_coef_", "support_", "n_components_"):
        assert np.array_equal(getattr(chunked, name), getattr(whole, name))
    assert np.array_equal(chunked.decision_function(X), whole.decision_function(X))
    assert chunked.n_mistakes_ == whole.n_mistakes_


def _held_out_choice(X, y, random_state, max_iter, patience, **params):
    """``alpha='auto'`` by a plain loop: every penalty of the grid and every
    epoch count, each fit from the start on the rows that a stratified
    split of 20% (seeded by the first draw of ``random_state``) leaves, and
    scored on the held-out rows. Returns the scores (an epoch after the
    best is ``patience`` epochs old is not played: NaN) and the first best
    ``(alpha, epochs)``, and the closest a held-out prediction came to a tie."""
    from sklearn.model_selection import StratifiedShuffleSplit

    seed = np.random.RandomState(random_state).randint(np.iinfo(np.int32).max)
    split = StratifiedShuffleSplit(n_splits=1, test_size=0.2, random_state=seed)
    fit_rows, held = (np.sort(r) for r in next(split.split(X, y)))
    alphas = (0.0, 1e-5, 1e-4, 1e-3)
    scores = np.full((len(alphas), max_iter), np.nan)
    closest = np.inf  # the smallest gap between a held-out row's two best classes
    for i, alpha in enumerate(alphas):
        for epochs in range(1, max_iter + 1):
            est = NystroemOnlineClassifier(
                alpha=alpha, max_iter=epochs, tol=None, random_state=random_state, **params
            ).fit(X[fit_rows], y[fit_rows])
            scores[i, epochs - 1] = np.mean(est.predict(X[held]) == y[held])
            s = est.decision_function(X[held])
            gap = np.abs(s) if s.ndim == 1 else np.diff(np.sort(s, axis=1)[:, -2:], axis=1)
            closest = min(closest, gap.min())
            best = int(np.nanargmax(scores[i]))
            if patience is not None and epochs - 1 - best >= patience:
                break
    i, e = np.unravel_index(np.nanargmax(scores), scores.shape)
    return scores, alphas[i], e + 1, closest


@pytest.mark.parametrize(
    "n_classes, tol, extra",
    [
        (2, None, {}),
        (2, 1e-3, {}),
        (3, None, {}),
        (3, 1e-3, {}),
        # Without the average, and on a map of lower rank than the budget.
        (3, None, {"average": False, "n_components": 12}),
        # The kernel width of a fit on the candidates' rows alone.
        (2, None, {"gamma": "scale", "learning_rate": 5.0}),
    ],
)
def test_auto_alpha_chooses_as_a_loop_over_the_grid(n_classes, tol, extra):
    X, y = _data(300, n_classes=n_classes)
    # A step large enough for the penalties to matter: the choice here is
    # neither the first penalty nor the first epoch.
    params = {**dict(budget=20, gamma=0.5, learning_rate=20.0), **extra}
    est = NystroemOnlineClassifier(**params, max_iter=6, tol=tol, n_iter_no_change=2)
    est.set_params(random_state=0).fit(X, y)
    patience = None if tol is None else 2
    scores, alpha, epochs, closest = _held_out_choice(X, y, 0, 6, patience, **params)
    assert alpha > 0 and epochs > 1
    # A candidate's epoch is the model of a fit of that many epochs: the same
    # rounds, in the basis of the map's features instead of the landmarks',
    # so the same hypotheses to round-off, and, no held-out row being within
    # round-off of a tie, the same predictions and scores.
    assert closest > 1e-8
    np.testing.assert_array_equal(est.validation_scores_, scores)
    assert (est.alpha_, est.n_iter_) == (alpha, epochs)
    # Then refit on every row with the choice.
    plain = NystroemOnlineClassifier(
        **params, alpha=alpha, max_iter=epochs, tol=None, random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(est.dual_coef_, plain.dual_coef_)
    np.testing.assert_array_equal(est.support_, plain.support_)


def test_auto_alpha_choice_varies_with_the_data():
    # The choice depends on the data, not a default returned: noisy labels
    # and a large step, clean labels and the default step, choose apart
    # (here (0, 2) and (1e-4, 2)).
    X, y = _data(400)
    noisy = y.copy()
    flip = np.random.RandomState(1).rand(len(y)) < 0.25
    noisy[flip] = 1 - noisy[flip]
    kw = dict(budget=30, gamma=0.5, max_iter=8, tol=None, random_state=0)
    a = NystroemOnlineClassifier(**kw, learning_rate=8.0).fit(X, noisy)
    b = NystroemOnlineClassifier(**kw).fit(X, y)
    assert np.isfinite(a.validation_scores_).all() and np.isfinite(b.validation_scores_).all()
    assert (a.alpha_, a.n_iter_) != (b.alpha_, b.n_iter_)


def test_auto_alpha_falls_back_to_the_plain_rule_on_tiny_classes():
    # A class of one row cannot be in both parts: no choice, the rounds of
    # the paper with max_iter and tol.
    X, y = _data(60)
    y[0] = 2
    est = NystroemOnlineClassifier(budget=10, gamma=0.5, max_iter=3, random_state=0).fit(X, y)
    plain = NystroemOnlineClassifier(
        budget=10, gamma=0.5, max_iter=3, alpha=0.0, random_state=0
    ).fit(X, y)
    assert est.alpha_ == 0.0 and np.isnan(est.validation_scores_).all()
    np.testing.assert_array_equal(est.dual_coef_, plain.dual_coef_)


def test_auto_alpha_holds_out_rows_of_positive_weight():
    # Rows of weight zero are never played: split among them, the held-out
    # part could weigh nothing (a fit that failed, dividing by zero). The
    # choice is that of the rows of positive weight alone (random_state=6:
    # a split of all 60 rows held out only rows of weight zero).
    X, y = _data(60)
    sw = np.zeros(60)
    sw[np.flatnonzero(y == 0)[:4]] = sw[np.flatnonzero(y == 1)[:4]] = 1.0
    params = dict(budget=5, gamma=0.5, max_iter=3, random_state=6)
    est = NystroemOnlineClassifier(**params).fit(X, y, sample_weight=sw)
    alone = NystroemOnlineClassifier(**params).fit(X[sw > 0], y[sw > 0])
    assert np.isfinite(est.validation_scores_[0, 0])
    np.testing.assert_array_equal(est.validation_scores_, alone.validation_scores_)


def test_a_learning_rate_too_large_for_the_chosen_penalty_is_refused():
    # alpha='auto' chose 1e-4 (see above); a learning rate raised since to
    # 1e4 would multiply the weights by 1 - 1e4 * 1e-4 = 0 every round.
    X, y = _data(400)
    kw = dict(budget=30, gamma=0.5, max_iter=8, tol=None, random_state=0)
    est = NystroemOnlineClassifier(**kw).fit(X, y)
    assert est.alpha_ == 1e-4
    dual = est.dual_coef_.copy()
    est.set_params(learning_rate=1e4)
    for rows in (X[:1], X[:5]):
        with pytest.raises(ValueError, match="learning_rate \\* alpha_ = 1 must be below 1"):
            est.partial_fit(rows, y[: len(rows)])
    np.testing.assert_array_equal(est.dual_coef_, dual)
    est.set_params(learning_rate=2.0).partial_fit(X[:5], y[:5])


def test_auto_alpha_warns_of_its_input_once():
    # The choice validates the input before the final fit does: one warning.
    X, y = _data(60)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        NystroemOnlineClassifier(budget=5, max_iter=2, random_state=0).fit(X, y[:, None])
    assert [type(w.message) for w in caught].count(DataConversionWarning) == 1


def test_auto_alpha_validates_once_and_keeps_no_copy_of_the_rows(monkeypatch):
    # The choice takes the call's validated rows: validated once (not again
    # by the choice's fit of its candidates and by the final fit), and the
    # candidates' 80% of the rows played through row indices. Its memory
    # beyond a fit of one penalty is then the held-out rows' copy (0.2 X)
    # and small arrays; a copy of the candidates' rows would add 0.8 X.
    import tracemalloc

    rng = np.random.RandomState(0)
    X = rng.rand(3000, 100)
    y = (X[:, :5].sum(axis=1) > 2.5).astype(int)
    validated = []
    real_validate = NystroemOnlineClassifier._validate_X

    def validate(self, X, reset):
        if reset:
            validated.append(X.shape[0])
        return real_validate(self, X, reset)

    monkeypatch.setattr(NystroemOnlineClassifier, "_validate_X", validate)
    peaks = {}
    for alpha in ("auto", 1e-4):
        est = NystroemOnlineClassifier(budget=20, gamma=0.05, max_iter=3, alpha=alpha)
        tracemalloc.start()
        try:
            est.set_params(random_state=0).fit(X, y)
            peaks[alpha] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert validated == [3000, 3000]  # one a fit
    assert peaks["auto"] < peaks[1e-4] + 0.5 * X.nbytes


def test_auto_alpha_interrupted_keeps_nothing(monkeypatch):
    # An interruption during the choice: the model as it was, and no
    # candidates left in the module's cache.
    from sklearn_budget import _nystroem_online

    X, y = _data(100)
    est = NystroemOnlineClassifier(budget=10, max_iter=2, random_state=0).fit(X, y)
    dual = est.dual_coef_.copy()

    def interrupt(self, est):
        raise KeyboardInterrupt

    monkeypatch.setattr(_nystroem_online._Candidates, "end_of_epoch", interrupt)
    with pytest.raises(KeyboardInterrupt):
        est.fit(X[::-1], y[::-1])
    assert len(_nystroem_online._CANDIDATES) == 0
    np.testing.assert_array_equal(est.dual_coef_, dual)


def test_partial_fit_plays_the_published_rule_under_auto_alpha():
    X, y = _data(200)
    auto = NystroemOnlineClassifier(budget=20, gamma=0.5).partial_fit(X, y, classes=[0, 1])
    plain = NystroemOnlineClassifier(budget=20, gamma=0.5, alpha=0.0)
    plain.partial_fit(X, y, classes=[0, 1])
    assert auto.alpha_ == 0.0 and not hasattr(auto, "validation_scores_")
    np.testing.assert_array_equal(auto.dual_coef_, plain.dual_coef_)


def test_a_fit_that_chooses_nothing_drops_the_scores_of_the_last_choice():
    X, y = _data(200)
    est = NystroemOnlineClassifier(budget=20, gamma=0.5, max_iter=3, random_state=0).fit(X, y)
    assert est.validation_scores_.shape == (4, 3)
    est.set_params(alpha=1e-4).fit(X, y)
    assert est.alpha_ == 1e-4 and not hasattr(est, "validation_scores_")


def test_the_penalty_leaves_the_landmarks_phase_alone():
    # The penalty shrinks the weights of the map only: every penalty gathers
    # the same landmarks, with the same coefficients when the map is built,
    # which is what lets alpha='auto' play their candidates on one stream.
    X, y = _data(300, n_classes=3)
    params = dict(budget=20, gamma=0.5, learning_rate=20.0, random_state=0, average=False)
    first = [
        NystroemOnlineClassifier(**params, alpha=a).partial_fit(X[:40], y[:40], classes=[0, 1, 2])
        for a in (0.0, 1e-3)
    ]
    assert first[0].n_components_ == 0  # still gathering landmarks
    np.testing.assert_array_equal(first[0].dual_coef_, first[1].dual_coef_)
    fits = [NystroemOnlineClassifier(**params, alpha=a, max_iter=3).fit(X, y) for a in (0.0, 1e-3)]
    np.testing.assert_array_equal(fits[0].support_, fits[1].support_)
    assert not np.allclose(fits[0].dual_coef_, fits[1].dual_coef_)


def test_auto_alpha_skips_the_penalties_too_large_for_the_step():
    X, y = _data(200)
    est = NystroemOnlineClassifier(budget=20, gamma=0.5, learning_rate=2000.0, max_iter=3)
    est.set_params(random_state=0).fit(X, y)
    # 1e-3 * 2000 >= 1: no penalty step of that size, never played.
    assert np.isnan(est.validation_scores_[3]).all()
    assert not np.isnan(est.validation_scores_[:3, 0]).any()
    assert est.alpha_ < 1e-3


def test_fit_finds_the_map_of_an_earlier_switch_again(monkeypatch):
    # A fit continuing a stream that switched in an earlier call computes the
    # map again: the same bits as the map of the switch.
    from sklearn_budget._nystroem_online import _FitMap

    maps = []
    set_map = _FitMap.set

    def spy(self, est, d, V):
        set_map(self, est, d, V)
        maps.append((self.M.copy(), self.R.copy()))

    monkeypatch.setattr(_FitMap, "set", spy)
    X, y = _data(300)
    clf = NystroemOnlineClassifier(budget=20, gamma=0.5, alpha=0.0, max_iter=2, warm_start=True)
    clf.fit(X, y)
    assert clf.n_components_ == 20 and len(maps) == 1  # switched within the fit
    clf.fit(X, y)  # the stream goes on: the map is found again
    assert len(maps) == 2
    for first, again in zip(*maps):
        assert first.tobytes() == again.tobytes()
