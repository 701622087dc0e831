"""The ConvergenceWarning of fit: max_iter reached, and no better than the majority class."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _instances import all_estimators, make
from sklearn.datasets import make_blobs, make_moons
from sklearn.exceptions import ConvergenceWarning

from sklearn_budget import BudgetPerceptron, Forgetron, KernelPerceptron, Winnow

# Every estimator that plays epochs (those with partial_fit).
ONLINE = all_estimators("partial_fit")


def moons(n=300, noise=0.1, seed=0):
    return make_moons(n_samples=n, noise=noise, random_state=seed)


def noise_labels(n=500, minority=0.2, seed=0):
    """Labels unrelated to the features, a fraction ``minority`` of class 1.

    The rows take 9 distinct values, about 55 rows each, so that no model
    can learn the labels by heart either: at every value the most frequent
    label is 0, and the best any model can do is the majority's mistakes.
    """
    rng = np.random.RandomState(seed)
    y = (rng.rand(n) < minority).astype(int)
    X = rng.randint(3, size=(n, 2)).astype(float)
    return X, y


def convergence_warnings(est, X, y, **fit_params):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y, **fit_params)
    return [w for w in record if issubclass(w.category, ConvergenceWarning)]


# ----------------------------------------------------------------------
# max_iter reached before the tol criterion
# ----------------------------------------------------------------------
@pytest.mark.parametrize("Est", [KernelPerceptron, Winnow])
def test_max_iter_reached_while_improving_warns(Est):
    # tol=0: an epoch improves unless its mistake rate is above the best one;
    # on moons the second epoch of the Perceptron makes fewer mistakes than
    # the first, so a criterion of one epoch without improvement is not met.
    X, y = moons(noise=0.1)
    est = Est(max_iter=2, n_iter_no_change=1, tol=0.0, random_state=0)
    with pytest.warns(ConvergenceWarning, match="played max_iter=2 epochs") as record:
        est.fit(X, y)
    assert record[0].filename == __file__
    assert est.n_iter_ == 2


@pytest.mark.parametrize(
    "params",
    [
        # The defaults: the criterion cannot stop five epochs (it needs six).
        {},
        # A single online pass.
        {"max_iter": 1, "n_iter_no_change": 1, "tol": 0.0},
        # No criterion.
        {"max_iter": 2, "n_iter_no_change": 1, "tol": None},
    ],
)
@pytest.mark.parametrize("Est", [KernelPerceptron, Winnow])
def test_no_warning_where_the_criterion_cannot_stop_fit(Est, params):
    X, y = moons(noise=0.3)
    est = Est(**params, random_state=0)
    assert convergence_warnings(est, X, y) == []
    assert est.n_iter_ == est.max_iter


@pytest.mark.parametrize("Est", [KernelPerceptron, Winnow])
def test_no_warning_when_the_criterion_stops_fit(Est):
    # tol=1: every epoch after the first is "no improvement", so fit stops
    # after 1 + n_iter_no_change epochs (Winnow gained tol in 0.1).
    X, y = moons(noise=0.3)
    est = Est(max_iter=10, n_iter_no_change=2, tol=1.0, random_state=0)
    assert convergence_warnings(est, X, y) == []
    assert est.n_iter_ == 3


def test_no_warning_after_an_epoch_without_updates():
    # Separable, well apart: the Perceptron stops after an epoch without mistakes.
    X = np.r_[np.full((20, 2), -3.0), np.full((20, 2), 3.0)]
    y = np.r_[np.zeros(20), np.ones(20)]
    est = KernelPerceptron(kernel="linear", max_iter=10, n_iter_no_change=1, random_state=0)
    assert convergence_warnings(est, X, y) == []
    assert est.n_iter_ < 10


def test_partial_fit_does_not_warn():
    X, y = noise_labels()
    est = Forgetron(budget=10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.partial_fit(X, y, classes=[0, 1])
    # The same rows would warn as a fit (see below).
    assert convergence_warnings(Forgetron(budget=10, max_iter=1, random_state=0), X, y)


# ----------------------------------------------------------------------
# No better than the majority class
# ----------------------------------------------------------------------
@pytest.mark.parametrize("Est", ONLINE)
def test_labels_unrelated_to_the_features_warn(Est):
    # 20% of class 1 at random (99 rows of 500): always predicting class 0
    # makes 99 mistakes, an online learner on labels it cannot predict more
    # (or, collapsed to the majority class, about as many).
    X, y = noise_labels()
    assert np.sum(y == 1) == 99
    # At every value of the rows, class 0 is the more frequent.
    _, value, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    assert np.all(np.bincount(value.ravel(), weights=y) < counts / 2)
    est = make(Est, random_state=0)
    found = convergence_warnings(est, X, y)
    assert len(found) == 1
    message = str(found[0].message)
    assert "not significantly fewer than the 99 of always predicting the most" in message
    assert found[0].filename == __file__
    assert "another estimator" in message
    if "budget" in est.get_params():
        assert "a larger budget" in message


def test_budget_perceptron_on_noisy_imbalanced_data_warns():
    # 10% of flipped labels on top of a 75 / 25 split by a line: the Budget
    # Perceptron's removal rule keeps the misclassified members.
    rng = np.random.RandomState(1)
    X = rng.randn(2000, 2)
    y = (X[:, 0] > 0.67).astype(int)
    flip = rng.rand(len(y)) < 0.1
    y[flip] = 1 - y[flip]
    est = BudgetPerceptron(budget=10, average=False, random_state=0)
    found = convergence_warnings(est, X, y)
    assert len(found) == 1 and "most frequent class" in str(found[0].message)


@pytest.mark.parametrize("Est", ONLINE)
def test_a_learnable_problem_does_not_warn(Est):
    X, y = moons(noise=0.1)
    est = make(Est, random_state=0)
    assert convergence_warnings(est, X, y) == []
    assert est.score(X, y) > 0.75


def test_unequal_weights_are_not_compared():
    # The mistakes are counted unweighted: with class weights the majority
    # rate of the weighted rows is another number, and nothing is said.
    X, y = noise_labels()
    est = Forgetron(budget=10, class_weight="balanced", random_state=0)
    assert convergence_warnings(est, X, y) == []
    assert convergence_warnings(Forgetron(budget=10, random_state=0), X, y)


@pytest.mark.parametrize(
    "average, expected",
    [
        # The count starts after the block of 256 rounds that ends past the middle.
        (False, "each of the 488 rows of the second half of its first epoch"),
        (
            True,
            "the average of the hypotheses of the first half of its first epoch made "
            r"\d+ mistakes on 488 rows of the second half, which it had not learnt",
        ),
    ],
)
def test_a_model_that_learns_its_rows_by_heart_warns(average, expected):
    # Distinct rows and labels unrelated to them: at a narrow kernel the
    # Perceptron learns every row by heart over the epochs (its later epochs
    # make few mistakes; its average too, no worse in sample), but predicting
    # the rows of the second half of the first epoch, not learnt yet, the
    # hypothesis of each round (the last hypothesis) or the average of the
    # first half (the average) does no better than the majority class.
    rng = np.random.RandomState(0)
    X = rng.randn(1000, 5)
    y = (rng.rand(1000) < 0.2).astype(int)
    est = KernelPerceptron(gamma=50.0, max_iter=5, average=average, random_state=0)
    found = convergence_warnings(est, X, y)
    assert est.score(X, y) > 0.99
    assert len(found) == 1
    message = str(found[0].message)
    assert re.search(expected, message)
    assert "its fitted model" not in message


def test_a_fitted_model_worse_than_its_online_rounds_warns(monkeypatch):
    # The online rounds learn the moons; a fitted model that predicts the
    # majority class alone (as an average compressed too far can) is caught
    # by its own mistakes, counted on at most 2048 evenly spaced rows.
    X, y = moons(n=5000, noise=0.1)
    est = KernelPerceptron(max_iter=1, random_state=0)
    # The check predicts the validated rows through _predict_rows (predict
    # without its validation of X).
    monkeypatch.setattr(est, "_predict_rows", lambda rows: np.zeros(rows.shape[0], dtype=int))
    found = convergence_warnings(est, X, y)
    assert len(found) == 1
    message = str(found[0].message)
    # 5000 rows, every third: 1667 of them.
    sample = y[::3]
    assert sample.shape[0] == 1667
    expected = f"its fitted model makes {np.sum(sample != 0)} mistakes on 1667 of its training rows"
    assert expected in message
    assert "first epoch" not in message


def noisy_line(n=4000, flip=0.2, seed=1):
    """A linear rule on 2 features, a third of the rows in class 1, and a
    fraction ``flip`` of the labels flipped."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 2)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0.6).astype(int)
    flipped = rng.rand(n) < flip
    y[flipped] = 1 - y[flipped]
    return X, y


def test_an_average_is_judged_by_its_own_mistakes_not_by_the_rounds():
    # With 10 members and a fifth of the labels flipped, the hypotheses
    # played online do no better than the majority class (the last
    # hypothesis warns), while their average learns the rule: the online
    # mistakes do not count against it.
    X, y = noisy_line()
    majority = max(y.mean(), 1 - y.mean())
    last = Forgetron(budget=10, average=False, random_state=0)
    found = convergence_warnings(last, X, y)
    assert len(found) == 1
    assert "predicting each of the" in str(found[0].message)
    averaged = Forgetron(budget=10, average=True, random_state=0)
    assert convergence_warnings(averaged, X, y) == []
    assert averaged.score(X, y) > majority + 0.1


@pytest.mark.parametrize("Est", [Forgetron, BudgetPerceptron])
def test_the_average_judged_is_frozen_when_taken(Est):
    # The average of the first half is taken at the middle of the first
    # epoch and scored after the epoch: the rounds in between, which move
    # and replace the members in place, must not change it. Cut at each of
    # 40 points, before the first removal and after it.
    X, y = make_blobs(n_samples=600, centers=3, cluster_std=3.0, random_state=0)
    for cut in range(20, 60):
        est = Est(budget=30, gamma=0.1, random_state=0)
        est.partial_fit(X[:cut], y[:cut], classes=np.unique(y))
        scorer = est._scorer_of_the_average()
        before = scorer(X)
        est.partial_fit(X[cut:], y[cut:])
        assert np.array_equal(scorer(X), before), cut


def test_the_average_judged_is_that_of_the_stream_cut_there():
    X, y = make_blobs(n_samples=600, centers=3, cluster_std=3.0, random_state=0)
    est = KernelPerceptron(gamma=0.1, random_state=0)
    est.partial_fit(X[:300], y[:300], classes=np.unique(y))
    # The exact average of that moment: the fitted model of a stream cut
    # there (the budget learners' is that average compressed).
    scores = est._scorer_of_the_average()(X)
    np.testing.assert_allclose(scores, est.decision_function(X), rtol=1e-10, atol=1e-10)


def test_the_average_of_the_first_half_scores_evenly_spaced_rows_of_the_second(monkeypatch):
    # 3000 CSR rows played in order: the second half starts after the block
    # of 256 rounds that ends past the middle (row 1536), and its 1464 rows
    # are scored every second one (at most 1024), as scipy's slicing gives them.
    rng = np.random.RandomState(0)
    X = sp.random(3000, 40, density=0.2, format="csr", random_state=rng)
    y = (rng.rand(3000) < 0.5).astype(int)
    scored = []
    est = Forgetron(budget=20, max_iter=1, shuffle=False, random_state=0)
    take = est._scorer_of_the_average

    def recording_scorer():
        scorer = take()
        return lambda rows: scored.append(rows) or scorer(rows)

    monkeypatch.setattr(est, "_scorer_of_the_average", recording_scorer)
    convergence_warnings(est, X, y)
    (rows,) = scored
    expected = X[1536::2]
    assert rows.shape == (732, 40) and sp.issparse(rows)
    assert np.array_equal(rows.toarray(), expected.toarray())
