"""The deprecation cycle of the parameters: positional arguments and renamed parameters."""

import inspect
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

import sklearn_budget
from sklearn_budget import KernelMatchingPursuit, Projectron, Winnow

# The parameters each estimator took by position before 0.1, with a value
# other than the default (the positional spelling must give that value).
FORMERLY_POSITIONAL = {
    "BudgetedSGDClassifier": ("budget", 7),
    "BudgetPerceptron": ("budget", 7),
    "Forgetron": ("budget", 7),
    "KernelMatchingPursuit": ("budget", 7),
    "KernelPassiveAggressive": ("C", 0.5),
    "Projectron": ("eta", 0.3),
    "ProjectronPlusPlus": ("eta", 0.3),
    "RandomizedBudgetPerceptron": ("budget", 7),
    "Stoptron": ("budget", 7),
    "TighterBudgetPerceptron": ("budget", 7),
}


def blobs(n=120, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(2, size=n)
    return rng.randn(n, 3) + 2.0 * y[:, None], y


def fitted_state(est):
    """The fitted attributes, for comparisons of two models."""
    return pickle.dumps(sorted((k, v) for k, v in vars(est).items() if k.endswith("_")))


@pytest.mark.parametrize("name", sklearn_budget.__all__)
def test_every_parameter_is_keyword_only(name):
    cls = getattr(sklearn_budget, name)
    kinds = {p.kind for p in inspect.signature(cls).parameters.values()}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}
    # get_params reads the same signature.
    assert set(cls().get_params()) == set(inspect.signature(cls).parameters)


def test_the_formerly_positional_parameters_are_those_listed():
    # Any other estimator never took a positional parameter.
    assert set(FORMERLY_POSITIONAL) <= set(sklearn_budget.__all__)
    for name in set(sklearn_budget.__all__) - set(FORMERLY_POSITIONAL):
        with pytest.raises(TypeError):
            getattr(sklearn_budget, name)(1)


@pytest.mark.parametrize("name", sorted(FORMERLY_POSITIONAL))
def test_positional_argument_warns_and_gives_the_keyword_model(name):
    cls = getattr(sklearn_budget, name)
    param, value = FORMERLY_POSITIONAL[name]
    message = f"Pass {param}={value!r} as keyword argument of {name}: positional arguments"
    with pytest.warns(FutureWarning, match=message) as record:
        old = cls(value)
    # The warning points at the line of the call, not into the package.
    assert record[0].filename == __file__
    new = cls(**{param: value})
    assert old.get_params() == new.get_params()
    X, y = blobs()
    old.set_params(random_state=0), new.set_params(random_state=0)
    assert fitted_state(old.fit(X, y)) == fitted_state(new.fit(X, y))


@pytest.mark.parametrize("name", sorted(FORMERLY_POSITIONAL))
def test_clone_and_repr_do_not_warn(name):
    cls = getattr(sklearn_budget, name)
    param, value = FORMERLY_POSITIONAL[name]
    est = cls(**{param: value})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy = clone(est)
        repr(copy)
    assert copy.get_params() == est.get_params()


def test_positional_misuse_is_a_type_error():
    with pytest.raises(TypeError, match=r"at most 1 positional argument \(budget"):
        sklearn_budget.Forgetron(10, "self-tuned")
    with pytest.raises(TypeError, match="multiple values for argument 'budget'"):
        sklearn_budget.Forgetron(10, budget=20)


def test_projectron_positional_is_eta_not_budget():
    # The newcomer's trap: Projectron(100) is eta=100, which projects every
    # step. The warning says so.
    with pytest.warns(FutureWarning, match=r"Pass eta=100 as keyword"):
        est = Projectron(100)
    assert est.eta == 100 and est.budget == 500


# ----------------------------------------------------------------------
# Renamed parameters
# ----------------------------------------------------------------------
RENAMED = [
    (Winnow, "learning_rate", "eta", 0.4),
    (KernelMatchingPursuit, "budget", "n_components", 9),
]


@pytest.mark.parametrize("cls, new, old, value", RENAMED)
def test_old_name_warns_and_gives_the_new_name_model(cls, new, old, value):
    X, y = blobs()
    expected = cls(**{new: value}, random_state=0).fit(X, y)
    est = cls(**{old: value}, random_state=0)
    with pytest.warns(FutureWarning, match=f"{old} was renamed to {new} in 0.1") as record:
        est.fit(X, y)
    assert record[0].filename == __file__
    assert fitted_state(est) == fitted_state(expected)
    # The old name keeps its own value; the new one its default.
    assert est.get_params()[old] == value


@pytest.mark.parametrize("cls, new, old, value", RENAMED)
def test_both_names_are_an_error_and_change_nothing(cls, new, old, value):
    X, y = blobs()
    est = cls(**{new: value}).fit(X, y)
    before = fitted_state(est)
    est.set_params(**{old: value + 1})
    with pytest.raises(ValueError, match=f"Both {new}={value!r} and {old}={value + 1!r}"):
        est.fit(X, y)
    assert fitted_state(est) == before


@pytest.mark.parametrize("cls, new, old, value", RENAMED)
def test_the_old_name_is_validated(cls, new, old, value):
    X, y = blobs()
    with pytest.raises(InvalidParameterError, match=f"The '{old}' parameter"):
        cls(**{old: -1}).fit(X, y)


@pytest.mark.parametrize("cls, new, old, value", RENAMED)
def test_the_default_of_the_old_name_is_not_shown(cls, new, old, value):
    # "deprecated" is a hidden option: the error lists the real ones only.
    X, y = blobs()
    with pytest.raises(InvalidParameterError) as error:
        cls(**{old: "x"}).fit(X, y)
    assert "deprecated" not in str(error.value)


def test_winnow_partial_fit_warns_on_the_old_name():
    X, y = blobs()
    expected = Winnow(learning_rate=0.4).partial_fit(X, y, classes=[0, 1])
    est = Winnow(eta=0.4)
    with pytest.warns(FutureWarning, match="eta was renamed to learning_rate"):
        est.partial_fit(X[:60], y[:60], classes=[0, 1])
    with pytest.warns(FutureWarning, match="eta was renamed to learning_rate"):
        est.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(est.coef_, expected.coef_)


def test_kmp_n_components_attribute_is_deprecated():
    X, y = blobs()
    est = KernelMatchingPursuit(budget=6).fit(X, y)
    with pytest.warns(FutureWarning, match=r"n_components_ is deprecated.*len\(support_\)"):
        assert est.n_components_ == len(est.support_) == 6
    assert "n_components_" not in vars(est)


def test_meta_estimator_takes_its_estimator_by_position_only():
    # As scikit-learn's meta-estimators (BaggingClassifier, OneVsRestClassifier):
    # the wrapped estimator may come first, every other parameter by keyword.
    from sklearn_budget.parallel import ParameterMixingClassifier

    params = list(inspect.signature(ParameterMixingClassifier).parameters.values())
    assert params[0].name == "estimator"
    assert params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert {p.kind for p in params[1:]} == {inspect.Parameter.KEYWORD_ONLY}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ParameterMixingClassifier(sklearn_budget.Forgetron(budget=10))


def test_river_classifiers_take_keywords_only_and_the_new_names():
    river = pytest.importorskip("sklearn_budget.river")
    for name in river.__all__:
        params = inspect.signature(getattr(river, name)).parameters.values()
        assert {p.kind for p in params} == {inspect.Parameter.KEYWORD_ONLY}
    X, y = blobs(40)
    model = river.Winnow(learning_rate=0.4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for row, label in zip(X, y):
            model.learn_one(dict(enumerate(row)), bool(label))
    assert model.estimator_.learning_rate == 0.4
