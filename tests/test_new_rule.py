"""A new rule, end to end: the toy FIFO Budget Perceptron of ``tests/toy_rule``.

The path of ``doc/contributing.rst``, walked by a rule written outside the
package: its compiled rule (``tests/toy_rule/_toy_rule.pyx``, which
cimports ``Engine`` and ``Rule`` from ``sklearn_budget._engine``) is built
by this test session, so that a compile error fails these tests (it never
skips them); its estimator is a thin subclass of
``BaseKernelOnlineClassifier``. The tests check the rule against a
per-sample reference round by round, and what the page says a new rule
then gets for nothing: split invariance, the one-row path, the budget, one
transaction per call, scikit-learn's checks, pickling, parameter mixing,
and the river class and the ONNX converter, each made by the package's own
factory.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _budget_references import Member, ReferenceOnline
from _instances import has
from conftest import import_or_skip
from sklearn.datasets import make_moons
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks
from test_common import expected_failed_checks
from test_hardening import Interrupt, state
from test_streaming import count_compiled_rounds, fitted, on_path
from toy_rule import FIFOBudgetPerceptron, build

from sklearn_budget import _base, _onnx
from sklearn_budget._engine import Rule
from sklearn_budget._rounds import _BLOCK_SIZE
from sklearn_budget._stream import _shuffle_rng
from sklearn_budget.parallel import ParameterMixingClassifier

GAMMA = 0.5


@pytest.fixture(scope="session")
def compiled_rule(tmp_path_factory):
    """The toy's compiled rule, built once per test process (a failure fails the tests)."""
    return build(tmp_path_factory.mktemp("toy_rule"))


pytestmark = pytest.mark.usefixtures("compiled_rule")


class RefFIFO(ReferenceOnline):
    """The FIFO Budget Perceptron, one row at a time (members in insertion order)."""

    def __init__(self, classes, budget, **kw):
        super().__init__(classes, **kw)
        self.budget = budget

    def threshold(self):
        return 0.0

    def update(self, index, x, label, f, margin, kxx, w):
        while len(self.members) >= self.budget:
            self.pop_member(0)  # the oldest
        self.members.append(Member(index, x, label, w * self.direction(f, label), kxx))


def make_stream(n, n_classes=2, sparse=False, seed=0, n_features=4):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_features)
    if sparse:
        X[rng.rand(n, n_features) < 0.4] = 0.0
    w = rng.randn(n_classes, n_features)
    y = np.argmax(X @ w.T + 0.8 * rng.randn(n, n_classes), axis=1)
    labels = np.array(["ant", "bee", "cat"])[:n_classes]
    return (sp.csr_matrix(X) if sparse else X), labels[y]


def reference(X, y, classes, budget, **kw):
    return RefFIFO(classes, budget, kernel_params=dict(gamma=GAMMA)).partial_fit(X, y, **kw)


def assert_same(est, ref, average=False):
    mistakes, support, coef = ref.result(average=average)
    assert est.n_mistakes_ == mistakes
    np.testing.assert_array_equal(est.support_, support)
    np.testing.assert_allclose(est.dual_coef_, coef, rtol=0, atol=1e-10)


def test_the_rule_is_compiled_against_the_engine(compiled_rule):
    assert issubclass(compiled_rule.FIFORule, Rule)
    assert type(FIFOBudgetPerceptron(3)._make_rule()) is compiled_rule.FIFORule


def test_the_test_registry_would_pick_it_by_its_traits():
    # In sklearn_budget.__all__, the loops of tests/_instances.py would
    # take it wherever these traits are asked for.
    traits = ("online_kernel", "partial_fit", "budget", "removes_members", "mixable", "average")
    assert has(FIFOBudgetPerceptron, *traits)
    assert not has(FIFOBudgetPerceptron, "votes")


# ----------------------------------------------------------------------
# The rule is the per-sample algorithm
# ----------------------------------------------------------------------
@pytest.mark.usefixtures("kernel_path")
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "n, sparse", [(70, False), (_BLOCK_SIZE + 110, False), (_BLOCK_SIZE + 110, True)]
)
def test_partial_fit_matches_the_reference(n_classes, n, sparse):
    X, y = make_stream(n, n_classes, sparse, seed=n + n_classes)
    classes = np.unique(y)
    est = FIFOBudgetPerceptron(8, gamma=GAMMA).partial_fit(X, y, classes=classes)
    ref = reference(X, y, classes, 8)
    assert ref.removed >= 5
    assert_same(est, ref)
    # The fitted model predicts with the reference's hypothesis.
    _, support, coef = ref.result()
    expected = pairwise_kernels(X, X[support], metric="rbf", gamma=GAMMA) @ coef.T
    scores = est.decision_function(X)
    np.testing.assert_allclose(scores, expected[:, 0] if n_classes == 2 else expected, atol=1e-9)


def test_fit_plays_the_shuffled_epochs_of_the_reference():
    X, y = make_stream(150, 3, seed=5)
    est = FIFOBudgetPerceptron(10, gamma=GAMMA, max_iter=3, random_state=42).fit(X, y)
    # One permutation per epoch from the shuffling stream of fit; the rows
    # keep their index in X.
    rng = _shuffle_rng(42)
    order = np.concatenate([rng.permutation(150) for _ in range(est.n_iter_)])
    assert est.n_iter_ == 3
    assert_same(est, reference(X[order], y[order], np.unique(y), 10, index=order))


def test_exact_average_and_sample_weights_match_the_reference():
    X, y = make_stream(_BLOCK_SIZE + 60, 3, seed=4)
    w = np.random.RandomState(0).uniform(0.2, 2.0, size=X.shape[0])
    w[::9] = 0.0  # rows of weight zero are not played
    classes = np.unique(y)
    est = FIFOBudgetPerceptron(10, gamma=GAMMA, average="exact")
    est.partial_fit(X, y, classes=classes, sample_weight=w)
    assert_same(est, reference(X, y, classes, 10, weights=w), average=True)
    assert len(est.support_) > 10  # the exact average keeps the members removed


# ----------------------------------------------------------------------
# What the engine gives every rule
# ----------------------------------------------------------------------
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_in_chunks_is_one_fit_pass(sparse, average):
    X, y = make_stream(700, 3, sparse, seed=11)
    kw = dict(gamma=GAMMA, average=average)
    whole = FIFOBudgetPerceptron(15, shuffle=False, max_iter=1, **kw).fit(X, y)
    split = FIFOBudgetPerceptron(15, **kw)
    for a, b in [(0, 1), (1, 2), (2, 255), (255, 257), (257, 300), (300, 700)]:
        split.partial_fit(X[a:b], y[a:b], classes=np.unique(y))
    assert split.n_mistakes_ == whole.n_mistakes_
    np.testing.assert_array_equal(split.support_, whole.support_)
    np.testing.assert_allclose(split.dual_coef_, whole.dual_coef_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("average", [False, True, "exact"])
def test_one_row_calls_give_the_model_of_one_call(average, monkeypatch):
    X, y = make_stream(600, 2, seed=1)
    classes = np.unique(y)
    one = FIFOBudgetPerceptron(12, gamma=GAMMA, average=average).partial_fit(X, y, classes=classes)
    played = count_compiled_rounds(monkeypatch)
    rows = FIFOBudgetPerceptron(12, gamma=GAMMA, average=average)
    for i in range(len(y)):
        rows.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes if i == 0 else None)
    # Both play the direct path of the same engine: bit for bit.
    assert fitted(rows) == fitted(one)
    for key in ("counters", "cal_counts", "cal_sums", "cal_n"):
        np.testing.assert_array_equal(rows._state[key], one._state[key], err_msg=key)
    # The compiled one-row path played the rows (but the first call and the
    # few that grow the member buffers).
    assert on_path(rows)
    assert played["n"] >= len(y) - 12


def test_the_support_set_never_exceeds_the_budget():
    X, y = make_stream(300, 3, seed=8)
    est = FIFOBudgetPerceptron(7, gamma=GAMMA)
    sizes = []
    for i in range(X.shape[0]):
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=np.unique(y))
        sizes.append(len(est.support_))
        assert est.dual_coef_.shape == (3, sizes[-1])
    assert max(sizes) == 7
    # Nor do its buffers: the capacity asked for is the budget.
    assert est._state["alpha"].shape[0] == 7


def test_an_interrupted_call_changes_nothing_and_can_be_replayed(monkeypatch):
    X, y = make_stream(700, 2, seed=2)
    classes = np.unique(y)
    est = FIFOBudgetPerceptron(10, gamma=GAMMA).partial_fit(X[:100], y[:100], classes=classes)
    before = state(est)
    Interrupt(monkeypatch, after=1)  # in the second block of the call
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X[100:], y[100:])
    assert state(est) == before
    monkeypatch.undo()
    est.partial_fit(X[100:], y[100:])
    ref = FIFOBudgetPerceptron(10, gamma=GAMMA).partial_fit(X, y, classes=classes)
    assert fitted(est) == fitted(ref)


class _Failure(Exception):
    pass


@pytest.mark.parametrize("average", [False, True])
def test_a_one_row_call_that_fails_after_its_update_is_undone(average, monkeypatch):
    # The recorder of the round's margin fails after the rule's update
    # (removal and addition) changed the state: the undo record of the
    # compiled path puts everything back.
    X, y = make_stream(80, 2, seed=3)
    classes = np.unique(y)
    kw = dict(gamma=GAMMA, average=average)
    est = FIFOBudgetPerceptron(5, **kw).partial_fit(X[:40], y[:40], classes=classes)
    ref = FIFOBudgetPerceptron(5, **kw).partial_fit(X[:40], y[:40], classes=classes)
    original = _base.BaseKernelOnlineClassifier._record_margins
    calls = {"n": 0}

    def record(self, *args):
        calls["n"] += 1
        if calls["n"] % 2:
            raise _Failure
        return original(self, *args)

    monkeypatch.setattr(FIFOBudgetPerceptron, "_record_margins", record)
    wrong = np.where(y == classes[0], classes[1], classes[0])
    # Averaged models record the margins of every fourth round of the stream.
    every = 4 if est._averages else 1
    for i in range(40, 80):
        before = state(est)
        if (i + 1) % every == 0:
            with pytest.raises(_Failure):
                est.partial_fit(X[i : i + 1], wrong[i : i + 1])  # a mistake: an update
            assert state(est) == before
        est.partial_fit(X[i : i + 1], y[i : i + 1])
    assert on_path(est)
    monkeypatch.undo()
    ref.partial_fit(X[40:80], y[40:80])
    assert fitted(est) == fitted(ref)


def test_pickled_mid_stream_the_stream_goes_on():
    X, y = make_stream(400, 3, seed=6)
    est = FIFOBudgetPerceptron(10, gamma=GAMMA, average=True)
    est.partial_fit(X[:200], y[:200], classes=np.unique(y))
    copy = pickle.loads(pickle.dumps(est))
    assert fitted(copy) == fitted(est)
    np.testing.assert_array_equal(copy.predict_proba(X), est.predict_proba(X))
    assert fitted(copy.partial_fit(X[200:], y[200:])) == fitted(est.partial_fit(X[200:], y[200:]))


# ----------------------------------------------------------------------
# scikit-learn's checks, and parameter mixing
# ----------------------------------------------------------------------
ESTIMATORS = [FIFOBudgetPerceptron(), FIFOBudgetPerceptron(budget=20, average=True)]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_param_validation(estimator):
    check_param_validation(type(estimator).__name__, estimator)
    assert set(estimator._parameter_constraints) == set(estimator.get_params())


@pytest.mark.parametrize("average", [False, True])
def test_parameter_mixing_trains_it(average):
    X, y = make_moons(n_samples=600, noise=0.1, random_state=0)
    clf = ParameterMixingClassifier(
        FIFOBudgetPerceptron(15, gamma=2.0, average=average),
        n_shards=3,
        n_mixes=2,
        random_state=0,
    ).fit(X, y)
    assert type(clf.estimator_) is FIFOBudgetPerceptron
    assert len(clf.estimator_.support_) <= 15
    assert clf.score(X, y) > 0.95
    clf.estimator_.partial_fit(X[:100], y[:100])  # the stream goes on
    assert len(clf.estimator_.support_) <= 15


# ----------------------------------------------------------------------
# The river class and the ONNX converter, from the package's factories
# ----------------------------------------------------------------------
@pytest.fixture
def river_class(monkeypatch):
    """The river classifier of the toy, made as ``sklearn_budget.river`` makes its own.

    Published as an attribute of this module, where pickle finds it (the
    package's are attributes of ``sklearn_budget.river``).
    """
    import_or_skip("river", "SKLEARN_BUDGET_REQUIRE_RIVER")
    from sklearn_budget.river import _river_class

    cls = _river_class(FIFOBudgetPerceptron)
    cls.__module__, cls.__qualname__ = __name__, "RiverFIFOBudgetPerceptron"
    monkeypatch.setattr(f"{__name__}.RiverFIFOBudgetPerceptron", cls, raising=False)
    return cls


def test_river_events_give_the_model_of_one_call(river_class):
    X, y = make_stream(300, 3, seed=9)
    model = river_class(classes=tuple(np.unique(y)), budget=10, gamma=GAMMA)
    for row, label in zip(X, y):
        model.learn_one({f"x{j}": v for j, v in enumerate(row)}, label)
    est = FIFOBudgetPerceptron(10, gamma=GAMMA).partial_fit(X, y, classes=np.unique(y))
    assert fitted(model.estimator_) == fitted(est)
    assert model.predict_one({f"x{j}": v for j, v in enumerate(X[0])}) == est.predict(X[:1])[0]


def test_river_checks(river_class):
    from river import checks

    model = river_class(**next(river_class._unit_test_params()))
    for check in checks.yield_checks(model):
        if check.__name__ in model._unit_test_skips():
            continue
        check(model.clone())


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_onnx_export(n_classes, average):
    require = "SKLEARN_BUDGET_REQUIRE_ONNX"
    import_or_skip("onnx", require)
    skl2onnx = import_or_skip("skl2onnx", require)
    ort = import_or_skip("onnxruntime", require)

    _onnx.register([FIFOBudgetPerceptron])
    X, y = make_stream(200, n_classes, seed=10)
    est = FIFOBudgetPerceptron(12, gamma=GAMMA, average=average).fit(X, y)
    onx = skl2onnx.to_onnx(est, X[:1], options={"zipmap": False})
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    label, proba = sess.run(None, {sess.get_inputs()[0].name: X})
    np.testing.assert_allclose(proba, est.predict_proba(X), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(label, est.predict(X))
