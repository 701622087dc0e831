"""The data, Bayes errors and cost counts of the Weston et al. experiments,
checked against closed forms and counts worked out by hand."""

import numpy as np
import pytest
from scipy.stats import norm

from sklearn_budget import TighterBudgetPerceptron
from sklearn_budget.reproduce import _common
from sklearn_budget.reproduce import _weston_error_sets as rwe
from sklearn_budget.reproduce import _weston_toy_batch as rwb
from sklearn_budget.reproduce import _weston_toy_online as rwo


def test_toy_bayes_error_closed_form():
    # The antiderivative of Phi(-u / s) is u Phi(-u / s) - s phi(u / s).
    m, s = rwo.TOY_MARGIN, rwo.TOY_NOISE

    def F(u):
        return u * norm.cdf(-u / s) - s * norm.pdf(u / s)

    expected = 100 * (F(1.0) - F(m)) / (1.0 - m)
    assert rwo.toy_bayes_error(True) == pytest.approx(expected, rel=1e-6)
    assert rwo.toy_bayes_error(False) == 0.0


@pytest.mark.parametrize("noisy", [False, True])
def test_toy_online_data(noisy):
    X, y = rwo.make_toy_online(200_000, noisy, random_state=0)
    assert X.shape == (200_000, 2) and set(np.unique(y)) == {-1, 1}
    assert abs(np.mean(y == 1) - 0.5) < 0.005
    assert X[:, 1].min() >= -1 and X[:, 1].max() <= 1
    bayes_errors = 100 * np.mean(np.sign(X[:, 0]) != y)
    if not noisy:
        # The gap around the Bayes rule x1 = 0.
        assert np.all(y * X[:, 0] >= rwo.TOY_MARGIN) and np.all(np.abs(X[:, 0]) <= 1)
        assert bayes_errors == 0
    else:
        # Binomial std of the rate: about 0.07 points.
        assert bayes_errors == pytest.approx(rwo.toy_bayes_error(True), abs=0.3)
    X2, y2 = rwo.make_toy_online(200_000, noisy, random_state=0)
    np.testing.assert_array_equal(X, X2)


def test_toy_batch_data():
    X, y = rwb.make_toy_batch(500, gap=0.1, random_state=0)
    assert X.shape == (500, 2) and np.all(np.abs(X) <= 1)
    offset = X[:, 1] - 0.5 * np.sin(np.pi * X[:, 0])
    assert np.all(np.abs(offset) >= 0.1)
    np.testing.assert_array_equal(y, np.where(offset > 0, 1, -1))


def test_removal_work_by_hand():
    # Updating rounds (margin <= 0): t = 1, 3, 5, 6, 8, the u-th update at t;
    # with p = 2 the 3rd, 4th and 5th updates (t = 5, 6, 8) remove a member.
    margins = [0.0, 1.0, -1.0, 2.0, -0.5, 0.0, 3.0, -2.0]
    assert rwe.removal_work(margins, 2, "support", None) == (2 * (2 + 2 + 2), 3)
    assert rwe.removal_work(margins, 2, "all", None) == (2 * (5 + 6 + 8), 3)
    assert rwe.removal_work(margins, 2, "random", 4) == (2 * (4 + 4 + 4), 3)
    assert rwe.removal_work(margins, 2, "random", 6) == (2 * (5 + 6 + 6), 3)
    # The flip cache holds the updating rounds: min(q, u) with u = 3, 4, 5.
    assert rwe.removal_work(margins, 2, "flip", 4) == (2 * (3 + 4 + 4), 3)
    assert rwe.removal_work(margins, 5, "all", None) == (0, 0)


@pytest.mark.parametrize("error_set", ["all", "support", "random", "flip"])
def test_margin_log_is_the_estimator(error_set):
    # The recording subclass plays the same stream, and its margins show the
    # estimator's updates.
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, 1, -1)
    params = dict(budget=8, beta=0.0, error_set=error_set, error_set_size=20, gamma=0.5,
                  max_iter=1, average=False, random_state=0)  # fmt: skip
    ref = TighterBudgetPerceptron(**params).partial_fit(X, y, classes=[-1, 1])
    log = rwe._MarginLog(**params)
    log._margin_log = []
    log.partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_array_equal(log.support_, ref.support_)
    np.testing.assert_array_equal(log.dual_coef_, ref.dual_coef_)
    margins = np.concatenate(log._margin_log)
    assert margins.shape == (300,)
    # A naive replay of the final decision on the first round: f = 0, an update.
    assert margins[0] == 0.0
    assert np.sum(margins <= 0) == ref.n_mistakes_
    work, removals = rwe.removal_work(margins, 8, error_set, 20)
    assert removals == ref.n_mistakes_ - 8 > 0


def test_reservoir_of_the_whole_stream_is_all_seen():
    # weston-usps-epochs evaluates removals on a reservoir of n_train rounds:
    # within the first epoch it must be the rule with every example seen.
    rng = np.random.RandomState(1)
    X = rng.normal(size=(250, 4))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=250) > 0, 1, -1)
    common = dict(budget=6, beta=0.0, gamma=0.3, max_iter=1, average=False, random_state=0)
    ref = TighterBudgetPerceptron(error_set="all", **common).partial_fit(X, y, classes=[-1, 1])
    res = TighterBudgetPerceptron(error_set="random", error_set_size=250, **common)
    res.partial_fit(X, y, classes=[-1, 1])
    assert ref.n_mistakes_ > 6  # removals happened
    np.testing.assert_array_equal(res.support_, ref.support_)
    np.testing.assert_array_equal(res.dual_coef_, ref.dual_coef_)
    assert res.n_mistakes_ == ref.n_mistakes_


def _fake_error_set_runs(errors, work):
    """Runs of weston-error-sets with the given errors per (strategy, q)."""
    runs = {}
    for (strategy, q), values in errors.items():
        runs[(f"p=4 {strategy}", q)] = [{"error": e, "work": work[strategy] * 1e6} for e in values]
    return runs


def test_error_set_claims_verdicts():
    spec = {"budgets": (4,), "q_grid": (4, 100)}
    work = {"all": 30.0, "support": 1.0, "random": 2.0, "flip": 2.0}
    low, high = [1.0, 1.1, 0.9, 1.0], [3.0, 3.1, 2.9, 3.0]
    errors = {("all", None): low, ("support", None): low, ("random", 4): high,
              ("random", 100): high, ("flip", 4): low, ("flip", 100): high}  # fmt: skip
    cheap, flip, support = rwe._error_sets_claims(spec, _fake_error_set_runs(errors, work))
    # Work 2 M against 30 M; flip and the support set 2 points lower, with a
    # standard error of 0.1 / sqrt(6) per mean: 2 / (0.1 / sqrt(3)) = 34.6 se.
    assert cheap[2] is True and flip[2] is True and support[2] is True
    assert "p=4, q=4: -34.6" in flip[1]
    # Within the noise: neither verdict can be drawn.
    noisy = [1.0, 3.0, 1.0, 3.0]
    errors = dict.fromkeys(errors, noisy)
    work["random"] = 11.0  # more than a tenth of all seen
    cheap, flip, support = rwe._error_sets_claims(spec, _fake_error_set_runs(errors, work))
    assert cheap[2] is False and flip[2] is None and support[2] is None
    lines = _common._claims_table([cheap, flip])
    assert lines[2].endswith("| **differs** |") and lines[3].endswith("| inconclusive |")
