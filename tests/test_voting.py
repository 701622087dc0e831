"""The voted conversion (average='vote') against a plain per-sample vote.

The reference plays the stream one row at a time, keeps a full copy of
every hypothesis it plays with the number of rounds it predicted, and votes
by evaluating each copy from scratch: nothing is shared with the prefix
sums of the estimators.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _budget_references import GROWING_CASES, pa_rule
from _instances import all_estimators, has, names
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_budget import (
    KernelPassiveAggressive,
    KernelPerceptron,
    Stoptron,
)
from sklearn_budget._rounds import _BLOCK_SIZE

GAMMA = 0.5


# The rules whose hypotheses are nested (the unbounded PA, C = inf, is in
# test_exactness.py).
CASES = {key: GROWING_CASES[key] for key in ("perceptron", "stoptron", "pa1", "pa2")}


def make_stream(n, n_classes, sparse, seed=0, n_features=4):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    if sparse:
        X[rng.rand(n, n_features) < 0.4] = 0.0
    w = rng.randn(n_classes, n_features)
    y = np.argmax(X @ w.T + 0.8 * rng.randn(n, n_classes), axis=1)
    labels = np.array(["ant", "bee", "cat"])[:n_classes]
    return (sp.csr_matrix(X) if sparse else X), labels[y]


def play(X, y, classes, step, weights=None, kernel="rbf", kernel_kw=None):
    """Per-sample online learner that keeps every hypothesis it plays.

    Returns the hypotheses as ``(rounds, coefficients)`` copies, where
    ``rounds`` are the rows of ``X`` that joined (the first hypothesis is
    empty), and for each the number of rounds on which it predicted.
    """
    kernel_kw = dict(gamma=GAMMA) if kernel_kw is None else kernel_kw
    K = pairwise_kernels(X, metric=kernel, **kernel_kw)
    classes = list(classes)
    R = 1 if len(classes) == 2 else len(classes)
    weights = np.ones(X.shape[0]) if weights is None else weights
    hypotheses, counts = [([], [])], [0]
    for t in range(X.shape[0]):
        rows, coefs = hypotheses[-1]
        f = np.array(coefs).T @ K[t, rows] if rows else np.zeros(R)
        counts[-1] += 1  # this hypothesis predicts round t
        c = classes.index(y[t])
        if R == 1:
            s = 1.0 if c == 1 else -1.0
            margin, direction, sq = s * f[0], np.array([s]), 1.0
        else:
            others = [i for i in range(R) if i != c]
            r = others[int(np.argmax(f[others]))]
            margin = f[c] - f[r]
            direction = np.zeros(R)
            direction[c], direction[r] = 1.0, -1.0
            sq = 2.0
        tau = step(margin, sq * K[t, t], len(rows))
        if tau:
            hypotheses.append((rows + [t], coefs + [weights[t] * tau * direction]))
            counts.append(0)
    return hypotheses, np.array(counts)


def vote(hypotheses, counts, X_played, X, n_classes, kernel="rbf", kernel_kw=None):
    """Votes for each class: every hypothesis evaluated on its own."""
    kernel_kw = dict(gamma=GAMMA) if kernel_kw is None else kernel_kw
    K = pairwise_kernels(X, X_played, metric=kernel, **kernel_kw)
    votes = np.zeros((X.shape[0], n_classes))
    for (rows, coefs), c in zip(hypotheses, counts):
        if not rows:
            continue  # the empty hypothesis is 0 everywhere: it abstains
        F = K[:, rows] @ np.array(coefs)
        for i in range(X.shape[0]):
            if n_classes == 2:
                if F[i, 0] > 0:
                    votes[i, 1] += c
                elif F[i, 0] < 0:
                    votes[i, 0] += c
            elif np.any(F[i] != 0):
                votes[i, int(np.argmax(F[i]))] += c
    return votes


def assert_votes_as_reference(est, votes, total, X):
    """Shares, labels and probabilities of the estimator from the reference's votes."""
    n_classes = votes.shape[1]
    if n_classes == 2:
        shares = (votes[:, 1] - votes[:, 0]) / total
        labels = est.classes_[(shares > 0).astype(int)]
    else:
        shares = votes / total
        labels = est.classes_[np.argmax(shares, axis=1)]
    np.testing.assert_allclose(est.decision_function(X), shares, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(est.predict(X), labels)
    # The documented smoothing: abstentions shared, then one vote more each.
    abstained = total - votes.sum(axis=1, keepdims=True)
    proba = (votes + abstained / n_classes + 1.0) / (total + n_classes)
    np.testing.assert_allclose(est.predict_proba(X), proba, rtol=1e-10)
    log_proba = est.predict_log_proba(X)
    assert np.isfinite(log_proba).all()
    np.testing.assert_array_equal(est.classes_[np.argmax(log_proba, axis=1)], labels)


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_vote_matches_reference(case, n_classes, sparse):
    make, step = CASES[case]
    X, y = make_stream(_BLOCK_SIZE + 40, n_classes, sparse, seed=n_classes)
    classes = np.unique(y)
    est = make(gamma=GAMMA, average="vote").partial_fit(X, y, classes=classes)
    hypotheses, counts = play(X, y, classes, step)
    assert len(hypotheses) > 10
    np.testing.assert_array_equal(est.vote_counts_, counts)
    assert est.vote_counts_.sum() == X.shape[0]
    rows, coefs = hypotheses[-1]
    np.testing.assert_array_equal(est.support_[est.vote_index_], rows)
    np.testing.assert_allclose(est.vote_dual_coef_, np.array(coefs).T, rtol=1e-10, atol=1e-12)
    X_test, _ = make_stream(60, n_classes, sparse, seed=99)
    votes = vote(hypotheses, counts, X, X_test, n_classes)
    assert_votes_as_reference(est, votes, counts.sum(), X_test)


@pytest.mark.parametrize(
    "kernel, kernel_kw", [("linear", {}), ("poly", dict(gamma=0.3, degree=2, coef0=1.0))]
)
def test_vote_with_other_kernels(kernel, kernel_kw):
    X, y = make_stream(150, 3, False, seed=4)
    classes = np.unique(y)
    est = KernelPassiveAggressive(kernel=kernel, average="vote", **kernel_kw)
    est.partial_fit(X, y, classes=classes)
    step = pa_rule(1.0, "hinge")
    hypotheses, counts = play(X, y, classes, step, kernel=kernel, kernel_kw=kernel_kw)
    votes = vote(hypotheses, counts, X, X, 3, kernel=kernel, kernel_kw=kernel_kw)
    assert_votes_as_reference(est, votes, counts.sum(), X)


@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("case", ["perceptron", "pa1"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_fit_votes_over_every_epoch_with_weights(case, n_classes):
    make, step = CASES[case]
    n = 120
    X, y = make_stream(n, n_classes, False, seed=5 + n_classes)
    classes = np.unique(y)
    rng = np.random.RandomState(0)
    w = rng.uniform(0.2, 2.0, size=n)
    w[::9] = 0.0  # rows never played
    class_weight = {classes[0]: 1.5}
    est = make(gamma=GAMMA, max_iter=3, tol=None, random_state=42, average="vote")
    est.set_params(class_weight=class_weight).fit(X, y, sample_weight=w)
    assert est.n_iter_ == 3
    # The epochs of fit: the kept rows, one permutation per epoch from the
    # shuffling stream spawned from seed 42.
    kept = np.flatnonzero(w > 0)
    shuffle = np.random.RandomState(np.random.MT19937(np.random.SeedSequence(42).spawn(1)[0]))
    order = kept[np.concatenate([shuffle.permutation(kept.size) for _ in range(3)])]
    weights = w * np.where(y == classes[0], 1.5, 1.0)
    hypotheses, counts = play(X[order], y[order], classes, step, weights=weights[order])
    np.testing.assert_array_equal(est.vote_counts_, counts)
    assert est.vote_counts_.sum() == 3 * kept.size
    rows, coefs = hypotheses[-1]
    np.testing.assert_array_equal(est.support_[est.vote_index_], order[rows])
    np.testing.assert_allclose(est.vote_dual_coef_, np.array(coefs).T, rtol=1e-10, atol=1e-12)
    # Rows that erred in several epochs joined the vote once per update.
    assert est.vote_index_.size > est.support_.size
    votes = vote(hypotheses, counts, X[order], X, n_classes)
    assert_votes_as_reference(est, votes, counts.sum(), X)


@pytest.mark.parametrize("sparse", [False, True])
def test_split_partial_fit_and_pickling_give_the_same_vote(sparse):
    X, y = make_stream(600, 3, sparse, seed=11)
    classes = np.unique(y)
    whole = KernelPerceptron(gamma=GAMMA, average="vote").partial_fit(X, y, classes=classes)
    split = KernelPerceptron(gamma=GAMMA, average="vote")
    for a, b in [(0, 1), (1, 2), (2, 255), (255, 257), (257, 300)]:
        split.partial_fit(X[a:b], y[a:b], classes=classes)
    split = pickle.loads(pickle.dumps(split))
    split.partial_fit(X[300:], y[300:])
    np.testing.assert_array_equal(split.vote_counts_, whole.vote_counts_)
    np.testing.assert_array_equal(split.vote_index_, whole.vote_index_)
    np.testing.assert_allclose(split.vote_dual_coef_, whole.vote_dual_coef_, rtol=0, atol=1e-12)
    X_test, _ = make_stream(80, 3, sparse, seed=12)
    np.testing.assert_array_equal(split.decision_function(X_test), whole.decision_function(X_test))


def test_warm_started_fit_continues_the_vote():
    X1, y1 = make_stream(100, 2, False, seed=21)
    X2, y2 = make_stream(130, 2, False, seed=22)
    classes = np.unique(y1)
    kw = dict(gamma=GAMMA, shuffle=False, max_iter=1, average="vote")
    warm = KernelPassiveAggressive(warm_start=True, **kw).fit(X1, y1).fit(X2, y2)
    X, y = np.vstack([X1, X2]), np.concatenate([y1, y2])
    hypotheses, counts = play(X, y, classes, pa_rule(1.0, "hinge"))
    np.testing.assert_array_equal(warm.vote_counts_, counts)
    assert_votes_as_reference(warm, vote(hypotheses, counts, X, X, 2), counts.sum(), X)


def test_vote_plays_the_same_stream_as_the_last_hypothesis():
    X, y = make_stream(300, 3, False, seed=3)
    last = KernelPerceptron(gamma=GAMMA, random_state=0, average=False).fit(X, y)
    voted = KernelPerceptron(gamma=GAMMA, random_state=0, average="vote").fit(X, y)
    assert voted.n_mistakes_ == last.n_mistakes_
    np.testing.assert_array_equal(voted.support_, last.support_)
    np.testing.assert_array_equal(voted.dual_coef_, last.dual_coef_)
    # The sum of every update is the last hypothesis.
    summed = np.zeros_like(last.dual_coef_)
    np.add.at(summed.T, voted.vote_index_, voted.vote_dual_coef_.T)
    np.testing.assert_allclose(summed, last.dual_coef_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_hypotheses_that_vanish_abstain(n_classes):
    X, y = make_stream(100, n_classes, False, seed=8)
    est = Stoptron(budget=10, gamma=GAMMA, average="vote").fit(X, y)
    # Far from every member the rbf kernel values underflow to zero: every
    # hypothesis is 0 there, so nobody votes.
    far = np.full((2, X.shape[1]), 1e3)
    shares = est.decision_function(far)
    np.testing.assert_array_equal(shares, np.zeros_like(shares))
    np.testing.assert_array_equal(est.predict(far), est.classes_[[0, 0]])
    np.testing.assert_allclose(est.predict_proba(far), 1.0 / n_classes, rtol=1e-12)


@pytest.mark.any_kernel_path
def test_counts_do_not_grow_with_rounds_without_updates():
    # Noise labels: the Stoptron fills its budget of 3 within the first
    # rounds and never updates again; the vote keeps 4 counts however long
    # the stream, and the model does not grow.
    rng = np.random.RandomState(0)
    X, y = rng.randn(40_000, 2), np.where(rng.rand(40_000) < 0.5, -1, 1)
    est = Stoptron(budget=3, gamma=GAMMA, average="vote")
    est.partial_fit(X[:10_000], y[:10_000], classes=[-1, 1])
    size = len(pickle.dumps(est))
    est.partial_fit(X[10_000:], y[10_000:])
    assert est.vote_counts_.shape == (4,)
    assert est.vote_counts_.sum() == 40_000
    assert len(pickle.dumps(est)) == size


@pytest.mark.parametrize(
    "Est",
    [cls for cls in all_estimators("average") if not has(cls, "votes")],
    ids=lambda c: c.__name__,
)
def test_vote_is_refused_where_the_hypotheses_are_not_prefixes(Est):
    X, y = make_stream(30, 2, False)
    with pytest.raises(InvalidParameterError, match="'average' parameter"):
        Est(average="vote").fit(X, y)


def test_every_estimator_that_votes_is_checked_against_the_reference():
    # The estimators that take average='vote' (the others are refused above)
    # are those whose nested hypotheses the per-sample references play.
    assert set(names("votes")) == {type(make()).__name__ for make, _ in CASES.values()}


def test_the_conversion_is_fixed_for_a_stream_and_refit_drops_the_vote():
    X, y = make_stream(60, 2, False)
    est = KernelPerceptron(gamma=GAMMA, average="vote").fit(X, y)
    with pytest.raises(ValueError, match="average='vote' -> False"):
        est.set_params(average=False).partial_fit(X, y)
    assert hasattr(est, "vote_counts_")
    est.fit(X, y)
    assert not hasattr(est, "vote_counts_")
    # The scores of the last hypothesis again, not shares of a vote.
    K = pairwise_kernels(X, est.support_vectors_, metric="rbf", gamma=GAMMA)
    coef = est.dual_coef_[0]
    # The two sums of the same terms differ by rounding: at most a few ulps
    # of the sum of their sizes (a vote's shares would differ by far more).
    bound = 1e-12 * (np.abs(K) @ np.abs(coef))
    assert np.all(np.abs(est.decision_function(X) - K @ coef) <= bound)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_overflowing_kernel_values_raise_instead_of_voting(n_classes):
    X, y = make_stream(80, n_classes, False, seed=13)
    est = KernelPerceptron(kernel="poly", gamma=0.5, average="vote").fit(X, y)
    huge = np.full((3, X.shape[1]), 1e120)
    for method in (est.decision_function, est.predict, est.predict_proba):
        with pytest.raises(ValueError, match="Non-finite scores"):
            method(huge)
