"""Progress output (verbose), the tol stopping rule and class weights."""

import pickle
import re

import numpy as np
import pytest
from _instances import instances, names
from sklearn.base import clone
from sklearn.metrics import recall_score
from sklearn.utils._param_validation import InvalidParameterError

import sklearn_budget
from sklearn_budget import Forgetron, KernelPerceptron

GAMMA = 0.5

# Every online kernel estimator (tests/_instances.py).
ALL = instances("progress", "online_kernel", gamma=GAMMA)
IDS = [type(e).__name__ for e in ALL]

LINE = re.compile(
    r"rounds: (\d+), mistakes: (\d+), mistake rate: ([0-9.]+), support size: (\d+), "
    r"rounds per second: (\S+?)(?:, elapsed: ([0-9.]+) seconds)?$"
)


def blobs(n=1000, n_classes=2, seed=0, spread=1.5, weights=None):
    rng = np.random.RandomState(seed)
    centers = rng.randn(n_classes, 2) * 2
    y = rng.choice(n_classes, size=n, p=weights)
    return centers[y] + spread * rng.randn(n, 2), y


def state(est):
    return pickle.dumps(sorted(vars(est).items()))


def parse(out):
    """(rounds, mistakes, rate, support size, has elapsed) of every progress line."""
    rows = []
    for text in out.splitlines():
        m = LINE.match(text)
        if m:
            rows.append(
                (int(m[1]), int(m[2]), float(m[3]), int(m[4]), m[6] is not None),
            )
    return rows


def naive_perceptron(X, y, epochs):
    """Binary kernel Perceptron played row by row (rbf, GAMMA), no shuffling.

    Returns, for every round, the cumulative mistakes and the number of
    distinct rows in the support set after the round.
    """
    s = np.where(y == 1, 1.0, -1.0)
    sv = np.empty((len(y) * epochs, X.shape[1]))
    coef = np.empty(len(y) * epochs)
    n, mistakes, seen, per_round = 0, 0, set(), []
    for _ in range(epochs):
        for i in range(len(y)):
            f = coef[:n] @ np.exp(-GAMMA * ((sv[:n] - X[i]) ** 2).sum(axis=1))
            if s[i] * f <= 0:
                mistakes += 1
                sv[n], coef[n] = X[i], s[i]
                n += 1
                seen.add(i)
            per_round.append((mistakes, len(seen)))
    return np.array(per_round)


# ----------------------------------------------------------------------
# verbose
# ----------------------------------------------------------------------
def test_fit_prints_one_line_per_epoch_with_the_reference_counts(capsys):
    X, y = blobs(300, seed=1)
    est = KernelPerceptron(gamma=GAMMA, max_iter=3, shuffle=False, tol=None, verbose=1)
    est.fit(X, y)
    out = capsys.readouterr().out
    ref = naive_perceptron(X, y, 3)
    assert est.n_iter_ == 3
    assert re.findall(r"^-- Epoch (\d+)$", out, flags=re.M) == ["1", "2", "3"]
    lines = parse(out)
    assert len(lines) == 3
    ends = ref[[299, 599, 899]]
    starts = np.r_[0, ends[:-1, 0]]
    for (rounds, mistakes, rate, support, elapsed), end, start in zip(lines, ends, starts):
        assert rounds == 300
        assert mistakes == end[0] - start  # the epoch's mistakes
        assert rate == pytest.approx(mistakes / 300, abs=5e-5)
        assert support == end[1]
        assert elapsed
    assert sum(line[1] for line in lines) == est.n_mistakes_ == ref[-1, 0]
    assert lines[-1][3] == len(est.support_)
    assert "Stopped after 3 epochs (played max_iter=3 epochs)" in out


def test_fit_with_verbose_2_also_reports_within_epochs(capsys):
    X, y = blobs(1000, seed=2)
    # The last hypothesis: an averaged model also ends blocks at the
    # checkpoints of its probabilities.
    est = KernelPerceptron(
        gamma=GAMMA,
        max_iter=2,
        shuffle=False,
        tol=None,
        verbose=2,
        verbose_interval=300,
        average=False,
    )
    est.fit(X, y)
    lines = parse(capsys.readouterr().out)
    ref = naive_perceptron(X, y, 2)
    # Blocks end at 256, 512, 768 and 1000 rows: 300 and 600 are passed in the
    # blocks ending at 512 and 768; the end of the epoch has its own line.
    assert [line[0] for line in lines] == [512, 768, 1000] * 2
    epoch_start = [0, 0, 0, ref[999, 0], ref[999, 0], ref[999, 0]]
    at = [511, 767, 999, 1511, 1767, 1999]
    assert [line[1] for line in lines] == list(ref[at, 0] - epoch_start)
    assert [line[3] for line in lines] == list(ref[at, 1])


def test_partial_fit_reports_every_interval_of_the_stream(capsys):
    X, y = blobs(1300, seed=3)
    est = KernelPerceptron(gamma=GAMMA, verbose=1, verbose_interval=100, average=False)
    for start in range(0, 300, 30):  # many short calls
        est.partial_fit(X[start : start + 30], y[start : start + 30], classes=[0, 1])
    short = parse(capsys.readouterr().out)
    est.partial_fit(X[300:], y[300:])  # one long call
    long = parse(capsys.readouterr().out)
    ref = naive_perceptron(X, y, 1)
    assert [line[0] for line in short] == [120, 210, 300]
    # Blocks of the long call end at 556, 812, 1068 and 1300 rounds.
    assert [line[0] for line in long] == [556, 812, 1068, 1300]
    for rounds, mistakes, _, support, elapsed in short + long:
        assert (mistakes, support) == tuple(ref[rounds - 1])  # counts of the stream
        assert not elapsed
    assert long[-1][1] == est.n_mistakes_
    assert long[-1][3] == len(est.support_)


@pytest.mark.parametrize("est", ALL, ids=IDS)
def test_verbose_0_prints_nothing_and_verbose_changes_no_result(est, capsys):
    X, y = blobs(600, n_classes=3, seed=4)
    quiet = clone(est).set_params(random_state=0, max_iter=3).fit(X, y)
    quiet.partial_fit(X[:300], y[:300])
    assert capsys.readouterr().out == ""
    loud = clone(est).set_params(random_state=0, max_iter=3, verbose=2, verbose_interval=100)
    loud.fit(X, y).partial_fit(X[:300], y[:300])
    out = capsys.readouterr().out
    assert "-- Epoch 1" in out and parse(out)
    np.testing.assert_array_equal(loud.support_, quiet.support_)
    np.testing.assert_array_equal(loud.dual_coef_, quiet.dual_coef_)
    assert loud.n_mistakes_ == quiet.n_mistakes_


def test_stop_without_updates_is_reported(capsys):
    X = np.array([[0.0, 0.0], [3.0, 3.0]])
    est = KernelPerceptron(gamma=GAMMA, max_iter=10, verbose=1).fit(X, [0, 1])
    assert est.n_iter_ == 2
    assert "Stopped after 2 epochs (an epoch without updates)" in capsys.readouterr().out


# ----------------------------------------------------------------------
# tol / n_iter_no_change
# ----------------------------------------------------------------------
def expected_stop(rates, tol, n_iter_no_change):
    """The epoch after which the rule stops (None: it never does)."""
    best, count = np.inf, 0
    for epoch, rate in enumerate(rates, start=1):
        count = count + 1 if rate > best - tol else 0
        best = min(best, rate)
        if count >= n_iter_no_change:
            return epoch
    return None


def test_tol_stops_on_an_exact_plateau():
    # The same point with both labels: every epoch makes two mistakes and two
    # updates (mistake rate 1.0), so only tol can stop it.
    X = np.zeros((2, 2))
    y = np.array([0, 1])
    kw = dict(gamma=GAMMA, max_iter=20, shuffle=False)
    est = KernelPerceptron(tol=1e-3, n_iter_no_change=3, **kw).fit(X, y)
    assert est.n_iter_ == 4  # the first epoch improves on the start, three do not
    assert est.n_mistakes_ == 8
    est = KernelPerceptron(tol=None, **kw).fit(X, y)
    assert est.n_iter_ == 20
    assert est.n_mistakes_ == 40
    # As in SGDClassifier, only a rate above best - tol fails to improve: with
    # tol=0 an equal rate counts as an improvement.
    assert KernelPerceptron(tol=0.0, n_iter_no_change=1, **kw).fit(X, y).n_iter_ == 20


@pytest.mark.parametrize("tol, n_iter_no_change", [(1e-3, 3), (0.0, 2), (0.05, 1)])
def test_tol_stops_where_the_rule_on_the_printed_rates_does(tol, n_iter_no_change, capsys):
    X, y = blobs(300, seed=5, spread=3.0)  # overlapping classes: mistakes in every epoch
    kw = dict(gamma=GAMMA, max_iter=40, shuffle=False, verbose=1)
    full = KernelPerceptron(tol=None, **kw).fit(X, y)
    assert full.n_iter_ == 40  # no epoch is free of updates
    rates = [mistakes / rounds for rounds, mistakes, *_ in parse(capsys.readouterr().out)]
    # The rates are those of the reference implementation.
    ref = naive_perceptron(X, y, 40)[299::300, 0]
    np.testing.assert_array_equal(np.diff(np.r_[0, ref]) / 300, rates)
    stop = expected_stop(rates, tol, n_iter_no_change)
    assert stop is not None and stop < 40
    est = KernelPerceptron(tol=tol, n_iter_no_change=n_iter_no_change, **kw).fit(X, y)
    assert est.n_iter_ == stop
    assert est.n_mistakes_ == ref[stop - 1]
    out = capsys.readouterr().out
    assert f"Stopped after {stop} epochs (the mistake rate did not improve by tol={tol}" in out


def test_default_tol_never_stops_the_default_five_epochs():
    X, y = blobs(300, seed=5, spread=3.0)
    est = KernelPerceptron(gamma=GAMMA, random_state=0).fit(X, y)
    assert est.n_iter_ == 5
    np.testing.assert_array_equal(
        est.dual_coef_, KernelPerceptron(gamma=GAMMA, random_state=0, tol=None).fit(X, y).dual_coef_
    )


def test_partial_fit_ignores_tol():
    X = np.zeros((2, 2))
    est = KernelPerceptron(gamma=GAMMA, tol=1e3, n_iter_no_change=1)
    for _ in range(5):
        est.partial_fit(X, [0, 1], classes=[0, 1])
    assert est.n_mistakes_ == 10
    assert est.n_iter_ == 1


# ----------------------------------------------------------------------
# class_weight
# ----------------------------------------------------------------------
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("est", ALL, ids=IDS)
def test_class_weight_is_the_same_as_the_sample_weight(est, n_classes):
    X, y = blobs(400, n_classes=n_classes, seed=6)
    weights = {0: 2.5, 1: 0.4, 2: 1.7}
    class_weight = {c: weights[c] for c in range(n_classes) if c != 1 or n_classes == 3}
    per_row = np.array([class_weight.get(c, 1.0) for c in range(n_classes)])[y]
    sw = np.random.RandomState(0).uniform(0.5, 2.0, size=len(y))
    est = clone(est).set_params(random_state=0, max_iter=2)
    a = clone(est).set_params(class_weight=class_weight).fit(X, y, sample_weight=sw)
    b = clone(est).fit(X, y, sample_weight=sw * per_row)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.n_mistakes_ == b.n_mistakes_
    # A stream whose class weights change between calls (a step parameter).
    a = clone(est).set_params(class_weight=class_weight)
    a.partial_fit(X[:200], y[:200], classes=np.arange(n_classes))
    a.set_params(class_weight=None).partial_fit(X[200:], y[200:])
    b = clone(est).partial_fit(X[:200], y[:200], np.arange(n_classes), per_row[:200])
    b.partial_fit(X[200:], y[200:])
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_array_equal(a.support_, b.support_)


def test_class_weight_with_string_labels():
    X, y = blobs(300, seed=7)
    labels = np.array(["ham", "spam"])[y]
    a = KernelPerceptron(gamma=GAMMA, class_weight={"spam": 3.0}, random_state=0).fit(X, labels)
    b = KernelPerceptron(gamma=GAMMA, random_state=0).fit(X, labels, sample_weight=1 + 2.0 * y)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)


def test_a_class_of_weight_zero_is_not_played():
    X, y = blobs(300, seed=8)
    est = KernelPerceptron(gamma=GAMMA, class_weight={0: 0.0}, random_state=0).fit(X, y)
    assert np.all(y[est.support_] == 1)
    with pytest.raises(ValueError, match="times the class weights .* are all zero"):
        KernelPerceptron(class_weight={0: 0.0, 1: 0.0}).fit(X, y)


def test_balanced_weights_are_the_inverse_class_frequencies():
    X, y = blobs(400, seed=9, weights=[0.9, 0.1])
    counts = np.bincount(y)
    manual = {c: len(y) / (2 * counts[c]) for c in (0, 1)}
    a = KernelPerceptron(gamma=GAMMA, class_weight="balanced", random_state=0).fit(X, y)
    b = KernelPerceptron(gamma=GAMMA, class_weight=manual, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-12)
    np.testing.assert_array_equal(a.support_, b.support_)


@pytest.mark.parametrize(
    "est",
    [KernelPerceptron(gamma=GAMMA), Forgetron(budget=30, gamma=GAMMA)],
    ids=["KernelPerceptron", "Forgetron"],
)
def test_balanced_improves_the_recall_of_the_minority_class(est):
    X, y = blobs(2000, seed=10, spread=2.5, weights=[0.92, 0.08])
    Xt, yt = X[1000:], y[1000:]
    X, y = X[:1000], y[:1000]
    plain = clone(est).set_params(random_state=0).fit(X, y)
    balanced = clone(est).set_params(random_state=0, class_weight="balanced").fit(X, y)
    r_plain = recall_score(yt, plain.predict(Xt))
    r_balanced = recall_score(yt, balanced.predict(Xt))
    assert r_balanced > r_plain + 0.1


def test_partial_fit_refuses_balanced():
    X, y = blobs(100)
    est = KernelPerceptron(class_weight="balanced")
    with pytest.raises(ValueError, match="class_weight='balanced' is not supported by partial_fit"):
        est.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(est, "classes_")
    est = KernelPerceptron(gamma=GAMMA, class_weight="balanced").fit(X, y)
    before = state(est)
    with pytest.raises(ValueError, match="compute_class_weight"):
        est.partial_fit(X, y)
    assert state(est) == before


@pytest.mark.parametrize(
    "class_weight, message",
    [
        ({0: 1.0, 5: 2.0}, r"class_weight has keys \[5\] that are not classes"),
        ({"0": 2.0}, r"class_weight has keys \['0'\]"),
        ({0: -1.0}, "finite non-negative"),
        ({0: np.nan}, "finite non-negative"),
        ({0: "heavy"}, "finite non-negative"),
    ],
)
def test_bad_class_weight_dicts_are_refused_without_change(class_weight, message):
    X, y = blobs(100)
    est = KernelPerceptron(gamma=GAMMA).partial_fit(X, y, classes=[0, 1])
    before = state(est)
    est.set_params(class_weight=class_weight)
    with pytest.raises(ValueError, match=message):
        est.partial_fit(X, y)
    with pytest.raises(ValueError, match=message):
        est.set_params(warm_start=True).fit(X, y)
    est.set_params(class_weight=None, warm_start=False)
    assert state(est) == before
    with pytest.raises(ValueError, match=message):
        KernelPerceptron(class_weight=class_weight).fit(X, y)


@pytest.mark.parametrize(
    "param, value",
    [
        ("tol", -1.0),
        ("n_iter_no_change", 0),
        ("verbose", -1),
        ("verbose_interval", 0),
        ("class_weight", "auto"),
    ],
)
def test_new_parameters_are_validated(param, value):
    X, y = blobs(50)
    with pytest.raises(InvalidParameterError, match=param):
        KernelPerceptron(**{param: value}).fit(X, y)


ONLINE_KERNEL = names("online_kernel")


@pytest.mark.parametrize("name", ONLINE_KERNEL)
def test_every_estimator_takes_the_new_parameters(name):
    params = getattr(sklearn_budget, name)().get_params()
    assert params["tol"] == 1e-3
    assert params["n_iter_no_change"] == 5
    assert params["class_weight"] is None
    assert params["verbose"] == 0
    assert params["verbose_interval"] == 10_000


@pytest.mark.parametrize("verbose", [1, 2])
def test_support_size_counts_merged_members(verbose, capsys):
    # Budget maintenance by merging creates members that are no rows of the
    # stream (they share the index -1): each one counts.
    from sklearn_budget import BudgetedSGDClassifier

    X, y = blobs(800, seed=12, spread=2.5)
    est = BudgetedSGDClassifier(
        budget=20, maintenance="merging", gamma=GAMMA, max_iter=2, random_state=0, verbose=verbose
    )
    est.set_params(verbose_interval=300).fit(X, y)
    lines = parse(capsys.readouterr().out)
    assert np.sum(est.support_ < 0) > 1  # merged members were made
    assert lines[-1][3] == len(est.support_) == 20
    est.partial_fit(X, y)
    lines = parse(capsys.readouterr().out)
    assert lines and lines[-1][3] == len(est.support_) == 20
