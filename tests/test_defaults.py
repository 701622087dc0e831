"""The defaults chosen to hold at every kernel width, and their documented rules."""

import inspect

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_budget import (
    BudgetedSGDClassifier,
    Forgetron,
    FourierOnlineClassifier,
    KernelPassiveAggressive,
    NystroemOnlineClassifier,
    Projectron,
    ProjectronPlusPlus,
    TighterBudgetPerceptron,
)
from sklearn_budget._winnow import Winnow
from sklearn_budget.datasets import fetch_dna


def default(cls, name):
    return inspect.signature(cls).parameters[name].default


@pytest.mark.parametrize(
    "cls, name, value, doc",
    [
        (Projectron, "average", True, "average : bool, default=True"),
        (Projectron, "eta", 0.1, "default=0.1"),
        (ProjectronPlusPlus, "average", True, "average : bool, default=True"),
        (ProjectronPlusPlus, "eta", 0.1, "default=0.1"),
        (TighterBudgetPerceptron, "max_iter", 1, "max_iter : int, default=1"),
        (Forgetron, "max_iter", 1, "max_iter : int, default=1"),
        (FourierOnlineClassifier, "average", True, "average : bool, default=True"),
        (NystroemOnlineClassifier, "average", True, "average : bool, default=True"),
        (Winnow, "average", True, "average : bool, default=True"),
        (KernelPassiveAggressive, "average", True, "average : bool or 'vote', default=True"),
        (BudgetedSGDClassifier, "alpha", "auto", "alpha : float or 'auto', default='auto'"),
    ],
)
def test_default_value_and_its_documentation(cls, name, value, doc):
    assert default(cls, name) == value
    assert cls().get_params()[name] == value
    assert doc in cls.__doc__


def test_averaged_defaults_give_their_reason():
    for cls in (Projectron, ProjectronPlusPlus, KernelPassiveAggressive):
        assert "Averaging is the default" in cls.__doc__
        assert "``average=True`` was\n        never more" not in cls.__doc__
    assert "Averaging is the default" in Winnow.__doc__


def test_projectron_default_fills_the_budget_at_a_wide_kernel():
    # The reason for eta=0.1: at a wide kernel (gamma far below 'scale')
    # every residual is small, and eta=0.6 keeps a single support vector.
    # Two blobs whose Bayes rate is 0.75 (centres 2 apart, std 1.5).
    X, y = make_blobs(n_samples=400, centers=[[-1, 0], [1, 0]], cluster_std=1.5, random_state=0)
    with pytest.warns(ConvergenceWarning, match="nothing useful"):
        former = Projectron(eta=0.6, average=False, gamma=0.003, random_state=0).fit(X, y)
    assert len(former.support_) == 1
    assert former.score(X, y) == 0.5
    new = Projectron(gamma=0.003, random_state=0).fit(X, y)
    assert len(new.support_) > 1
    assert new.score(X, y) > 0.7


def stream(n, seed=0):
    X, y = make_blobs(n_samples=n, centers=3, cluster_std=2.0, random_state=seed)
    return X, y


def same_model(a, b):
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.n_mistakes_ == b.n_mistakes_


def test_auto_alpha_of_fit_is_two_over_the_training_rows():
    X, y = stream(4000)
    kw = dict(budget=20, max_iter=2, random_state=0)
    est = BudgetedSGDClassifier(**kw).fit(X, y)
    assert est.alpha_ == 5e-4
    same_model(est, BudgetedSGDClassifier(alpha=5e-4, **kw).fit(X, y))
    # A fit starts a new stream: its own rows decide.
    assert est.fit(X[:2500], y[:2500]).alpha_ == 8e-4


def test_auto_alpha_is_capped_for_short_first_calls():
    X, y = stream(3000)
    est = BudgetedSGDClassifier(budget=20, random_state=0).fit(X[:300], y[:300])
    assert est.alpha_ == 1e-3  # 2 / 300 is above the cap
    # A stream begun by small partial_fit calls keeps 1e-3 throughout.
    est = BudgetedSGDClassifier(budget=20)
    for chunk in np.array_split(np.arange(3000), 30):
        est.partial_fit(X[chunk], y[chunk], classes=[0, 1, 2])
        assert est.alpha_ == 1e-3
    ref = BudgetedSGDClassifier(budget=20, alpha=1e-3)
    for chunk in np.array_split(np.arange(3000), 30):
        ref.partial_fit(X[chunk], y[chunk], classes=[0, 1, 2])
    same_model(est, ref)


def test_auto_alpha_is_fixed_by_the_first_call_whatever_the_split():
    X, y = stream(4000)
    kw = dict(budget=20, shuffle=False, max_iter=1, gamma=0.1)
    fitted = BudgetedSGDClassifier(**kw).fit(X, y)
    one_call = BudgetedSGDClassifier(**kw).partial_fit(X, y, classes=[0, 1, 2])
    assert fitted.alpha_ == one_call.alpha_ == 5e-4
    same_model(fitted, one_call)
    # The first call decides: 2 / 2500, kept by the calls that follow.
    split = BudgetedSGDClassifier(**kw)
    for chunk in np.array_split(np.arange(4000), [2500, 2501, 3700]):
        split.partial_fit(X[chunk], y[chunk], classes=[0, 1, 2])
        assert split.alpha_ == 8e-4
    same_model(split, BudgetedSGDClassifier(alpha=8e-4, **kw).fit(X, y))


def test_explicit_alpha_is_used_as_given():
    X, y = stream(4000)
    est = BudgetedSGDClassifier(budget=20, alpha=1e-2, max_iter=1).fit(X, y)
    assert est.alpha_ == 1e-2


def test_auto_alpha_is_refused_in_other_spellings():
    X, y = stream(100)
    with pytest.raises(ValueError, match="'alpha' parameter"):
        BudgetedSGDClassifier(alpha="Auto").fit(X, y)


def test_auto_alpha_of_a_loaded_hypothesis_is_the_cap():
    # ParallelMixing's shards start from a loaded hypothesis: no first call
    # of rows sizes alpha there, whatever the rows that set gamma='scale'.
    X, y = stream(4000)
    est = BudgetedSGDClassifier(budget=20)._load_expansion(
        X, [0, 1, 2], X[:3], np.eye(3), rounds=10
    )
    assert est.alpha_ == 1e-3
    # The loaded coefficients are 1 / (alpha t) times the stored ones.
    np.testing.assert_allclose(est._state["scale"][0], 1.0 / (1e-3 * 10), rtol=1e-15)


def test_forgetron_default_holds_at_a_narrow_kernel(data_home):
    # DNA (3 classes, 180 binary features) at 3 times the 'scale' width: the
    # average of five epochs kept within 100 members fell below the majority
    # rate (0.45 against 0.51 on the test rows); the one-pass default does not.
    kw = dict(data_home=data_home, download_if_missing=False, return_X_y=True)
    X, y = fetch_dna(subset="train", **kw)
    Xt, yt = fetch_dna(subset="test", **kw)
    X, y = X[:2000], y[:2000]
    gamma = 3.0 / (X.shape[1] * X.var())
    majority = np.bincount(np.unique(yt, return_inverse=True)[1]).max() / len(yt)
    est = Forgetron(gamma=gamma, random_state=0).fit(X, y)
    assert est.score(Xt, yt) > majority + 0.03
