"""The estimators of the package and the instances the tests play.

One registry for every test that loops over estimators, as scikit-learn's
``sklearn/utils/_test_common/instance_generator.py``: the estimator classes
are those of ``sklearn_budget.__all__``, picked by trait
(:func:`all_estimators`), so that a new estimator joins every loop without
an edit of the tests; :func:`make` and :func:`instances` build them with the
parameters of ``TEST_PARAMS``, per estimator and per kind of test. An
estimator without an entry for a kind is tested at its defaults (with the
budget, width and seed that the test gives every estimator that takes them).
"""

import inspect

from sklearn.utils._param_validation import InvalidParameterError

import sklearn_budget
from sklearn_budget._base import BaseKernelOnlineClassifier


def _takes(cls, name):
    return name in inspect.signature(cls).parameters


def _votes(cls):
    """Whether ``average='vote'`` is valid: the hypotheses are the prefixes of the updates."""
    if not _takes(cls, "average"):
        return False
    try:
        cls(average="vote")._validate_params()
    except InvalidParameterError:
        return False
    return True


#: What a test may ask of the estimators it loops over, each a predicate of the class.
TRAITS = {
    # The kernel classifiers of the online engine (a support set, a state, partial_fit).
    "online_kernel": lambda cls: issubclass(cls, BaseKernelOnlineClassifier),
    # The online learners: those that have partial_fit (all but the batch ones).
    "partial_fit": lambda cls: hasattr(cls, "partial_fit"),
    # A `budget` parameter: a bound on the support set (None for no bound, where allowed).
    "budget": lambda cls: _takes(cls, "budget"),
    # The rule removes members from the support set (the Stoptron only stops adding).
    "removes_members": lambda cls: getattr(cls, "_removes_members", False),
    # ParameterMixingClassifier trains it (sklearn_budget.parallel).
    "mixable": lambda cls: getattr(cls, "_mixable", False),
    # An `average` parameter: an online-to-batch conversion.
    "average": lambda cls: _takes(cls, "average"),
    # average='vote' is valid.
    "votes": _votes,
}


def has(estimator, *traits):
    """Whether ``estimator`` (a class, its name or an instance) has every trait."""
    if isinstance(estimator, str):
        estimator = getattr(sklearn_budget, estimator)
    cls = estimator if isinstance(estimator, type) else type(estimator)
    unknown = set(traits) - set(TRAITS)
    if unknown:
        raise KeyError(f"Unknown traits {sorted(unknown)}; known: {sorted(TRAITS)}.")
    return all(TRAITS[trait](cls) for trait in traits)


def all_estimators(*traits):
    """The estimator classes of the package with every one of ``traits``, sorted by name."""
    classes = (getattr(sklearn_budget, name) for name in sorted(sklearn_budget.__all__))
    return [cls for cls in classes if has(cls, *traits)]


def names(*traits):
    """The names of :func:`all_estimators` (test ids, or arguments of :func:`make`)."""
    return [cls.__name__ for cls in all_estimators(*traits)]


#: The test parameters of an estimator, by kind of test: a list of parameter
#: sets, the first being the one :func:`make` uses, all of them yielded by
#: :func:`instances`. An estimator or a kind missing here means ``[{}]``.
#: Kinds:
#:
#: - ``checks``: the instances of scikit-learn's checks (tests/test_common.py):
#:   the defaults first (what a user gets), then configurations of note.
#: - ``removal``: the bounded average of the removal rules (tests/test_averaging.py).
#: - ``mixing``: a hypothesis loaded for parameter mixing (tests/test_mixing.py).
#: - ``progress``: verbose output and class weights (tests/test_progress.py).
#: - ``grid``: a grid search over the budget in a pipeline (tests/test_budget.py).
#: - ``onnx``: the export to ONNX (tests/test_onnx.py).
#: - ``every_input``: parameters with which the estimator takes every kernel,
#:   sparse input and a callable kernel (tests/test_hardening.py).
TEST_PARAMS = {
    "BudgetedSGDClassifier": {
        "checks": [
            {},
            {"budget": 20, "maintenance": "projection"},
            {"budget": 20, "maintenance": "removal", "average": True},
            {"budget": 20, "alpha": 1e-2, "average": True},
            {"budget": 20, "maintenance": "merging", "average": True},
        ],
        "removal": [{"maintenance": m} for m in ("removal", "projection", "merging")],
        "mixing": [
            {"maintenance": "removal", "average": False},
            {"maintenance": "projection", "average": False},
            {"maintenance": "merging", "average": True},
        ],
        "progress": [{"budget": 15}],
        # Merging (the default) loses little of the members it merges: on
        # the grid's data a budget of 2 is as good as 30.
        "grid": [{"maintenance": "projection"}],
        # Merging (the default) takes only the rbf kernel and dense input.
        "every_input": [{"maintenance": "projection"}],
    },
    "BudgetPerceptron": {
        # The Budget Perceptron degrades with more epochs on overlapping
        # classes (Weston et al. 2005), such as the blobs of
        # check_classifiers_train: its defaults play one averaged epoch. The
        # last hypothesis of one epoch stays above the check's accuracy
        # threshold too.
        "checks": [
            {},
            {"budget": 50, "max_iter": 1, "average": False},
            {"budget": 50, "update": "mira", "max_iter": 1, "average": False},
        ],
        "mixing": [{"average": False}],
        "progress": [{"budget": 15, "max_iter": 5, "average": False}],
        "grid": [{"budget": 50, "update": "mira", "max_iter": 1, "average": False}],
    },
    "Forgetron": {
        # The last hypothesis of a small budget on the overlapping blobs of
        # check_classifiers_train swings with the stream order; the average
        # (the online-to-batch conversion) is what a batch user should take.
        "checks": [{}, {"budget": 20, "average": True}, {"budget": 20, "shrink": 0.9}],
        "removal": [{}, {"shrink": 0.9}],
        "mixing": [{"average": False}, {"average": True}],
        "progress": [{"budget": 15}],
        "grid": [{"budget": 20}],
        "onnx": [{}, {"average": True}],
    },
    # Its other configurations are checked in tests/test_matching_pursuit.py.
    "KernelMatchingPursuit": {
        "onnx": [{"budget": 12}],
    },
    "FourierOnlineClassifier": {
        "checks": [{}, {"average": False}],
        "onnx": [{}, {"average": False}],
    },
    "KernelPassiveAggressive": {
        "checks": [
            {},
            {"average": False},
            {"loss": "squared_hinge", "kernel": "linear"},
            {"average": "vote"},
        ],
    },
    "KernelPerceptron": {
        "checks": [{}, {"kernel": "chi2"}, {"average": "vote"}],
        "onnx": [{}, {"average": "vote"}],
    },
    "NystroemOnlineClassifier": {
        "checks": [
            {},
            {"budget": 20, "average": True},
            {"budget": 20, "n_components": 20, "kernel": "laplacian"},
        ],
        "onnx": [{}, {"average": True}],
    },
    "Projectron": {
        "checks": [{}, {"eta": 0.6, "average": False}, {"eta": "adaptive"}],
        "progress": [{"eta": 0.3}],
    },
    "ProjectronPlusPlus": {
        "checks": [{}, {"eta": 0.5, "average": False}, {"eta": "adaptive"}],
        "mixing": [{"average": True}],
        "progress": [{"eta": 0.3}],
    },
    "RandomizedBudgetPerceptron": {
        "checks": [{}, {"budget": 20, "average": True}],
        "mixing": [{"average": False}],
        "progress": [{"budget": 15}],
        "grid": [{"budget": 20}],
    },
    "Stoptron": {
        "checks": [{}, {"budget": 50}, {"budget": 50, "average": "vote"}],
        "progress": [{"budget": 15}],
    },
    "TighterBudgetPerceptron": {
        "checks": [
            {},
            {"budget": 50, "max_iter": 1, "average": False},
            {"budget": 20, "error_set": "all", "max_iter": 5, "average": False},
            {"budget": 20, "error_set": "random", "max_iter": 5, "average": False},
            {
                "budget": 20,
                "error_set": "flip",
                "update": "nobias_svm",
                "max_iter": 5,
                "average": False,
            },
        ],
        "removal": [{}, {"error_set": "random"}],
        "mixing": [{"error_set": "flip", "average": False}],
        "progress": [{"budget": 15, "max_iter": 5, "average": False}],
        "grid": [
            {"budget": 20, "error_set": "all", "max_iter": 5, "average": False},
            {
                "budget": 20,
                "error_set": "flip",
                "update": "nobias_svm",
                "max_iter": 5,
                "average": False,
            },
        ],
    },
    "Winnow": {
        "onnx": [{"learning_rate": 0.3}],
    },
}


def _params(cls, kind):
    """The parameter sets of ``cls`` for tests of ``kind`` (its defaults: ``[{}]``)."""
    if kind is None:
        return [{}]
    return TEST_PARAMS.get(cls.__name__, {}).get(kind, [{}])


def _build(cls, common, params):
    """``cls`` with ``params``, over those of ``common`` it takes (None: not given)."""
    taken = {n: v for n, v in common.items() if v is not None and _takes(cls, n)}
    return cls(**{**taken, **params})


def make(estimator, kind=None, *, budget=None, gamma=None, random_state=None, **params):
    """An instance of ``estimator`` (a class or its name) for a test of ``kind``.

    Its parameters are, by increasing precedence: ``budget``, ``gamma`` and
    ``random_state``, each where the estimator takes it (None: its default);
    the first parameter set of ``TEST_PARAMS`` for ``kind`` (None: none);
    ``params``, which the estimator must take.
    """
    cls = getattr(sklearn_budget, estimator) if isinstance(estimator, str) else estimator
    common = {"budget": budget, "gamma": gamma, "random_state": random_state}
    return _build(cls, common, {**_params(cls, kind)[0], **params})


def instances(kind, *traits, budget=None, gamma=None, random_state=None):
    """Every instance of the estimators with ``traits`` for tests of ``kind``.

    One per parameter set of ``TEST_PARAMS`` (an estimator without an entry:
    its defaults), estimators by name; ``budget``, ``gamma`` and
    ``random_state`` as in :func:`make`.
    """
    common = {"budget": budget, "gamma": gamma, "random_state": random_state}
    return [
        _build(cls, common, params)
        for cls in all_estimators(*traits)
        for params in _params(cls, kind)
    ]
