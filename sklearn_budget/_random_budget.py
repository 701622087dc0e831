"""The Randomized Budget Perceptron."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

from sklearn.utils._param_validation import Interval

from ._base import REMOVAL_AVERAGE
from ._deprecation import positional_until_0_3
from ._docstrings import _REMOVAL_AVERAGE_DOC, _averaged_by_default, _doc
from ._perceptron import KernelPerceptron
from ._random import generator_state, set_generator_state
from ._rules_perceptron import RandomizedBudgetRule


class RandomizedBudgetPerceptron(KernelPerceptron):
    __doc__ = _doc(
        """Randomized Budget Perceptron (Cavallanti, Cesa-Bianchi and Gentile, 2007).

    The kernel Perceptron with a budget: on a prediction mistake, if the
    support set already holds ``budget`` examples, one of them, drawn
    uniformly at random, is removed; then the example joins the support set
    with coefficient ``y_t`` (times its sample weight). With more than two
    classes the update is the multiclass Perceptron's, on one shared support
    set; the removal does not look at the classes.

    Parameters
    ----------
    budget : int, default=100
        Maximum number of support vectors.
{common}
    Attributes
    ----------{attributes}
    See Also
    --------
    Forgetron : Shrinks the coefficients and removes the oldest member.
    BudgetPerceptron : Removes the member best classified without itself.
    Stoptron : Stops learning once the budget is full.

    Notes
    -----
    The removed member is drawn as ``r = rng.randint(budget)`` from a
    ``numpy.random.RandomState`` seeded by ``random_state`` when the stream
    starts, and ``r`` is read as a rank in *insertion order*: the ``r``-th
    oldest member is removed. Members are stored in another order
    internally, so this convention is what makes a run reproducible by any
    implementation that keeps its members in insertion order. The generator
    is drawn from only when a removal happens and persists across
    ``partial_fit`` calls.

    Sutskever (2009) shows that the random removal is an unbiased
    (noisy) gradient step of an L2 regulariser, which gives the algorithm
    its mistake bound.

{averaging}

    Each update costs ``O(budget)`` besides the kernel row of the example;
    memory is ``O(budget)`` whatever the length of the stream.

    References
    ----------
    G. Cavallanti, N. Cesa-Bianchi and C. Gentile. Tracking the best
    hyperplane with a simple budget Perceptron. Machine Learning 69, 2007.

    I. Sutskever. A simpler unified analysis of budget Perceptrons. ICML 2009.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import RandomizedBudgetPerceptron
    >>> X, y = make_moons(n_samples=300, noise=0.1, random_state=0)
    >>> clf = RandomizedBudgetPerceptron(budget=30, gamma=2.0, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> len(clf.support_) <= 30
    True
    >>> clf.score(X, y) > 0.8
    True
    """,
        random_extra=" and, when the stream starts, the generator of the random removals",
        removal=True,
        average_doc=_averaged_by_default(_REMOVAL_AVERAGE_DOC),
    )

    _stream_params = KernelPerceptron._stream_params + ("budget",)

    _parameter_constraints: dict = {
        **KernelPerceptron._parameter_constraints,
        # Removals: the hypotheses played are not the prefixes of the
        # updates, so there is no voted conversion.
        "average": REMOVAL_AVERAGE,
        "budget": [Interval(Integral, 1, None, closed="left")],
    }

    @positional_until_0_3("budget")
    def __init__(
        self,
        *,
        budget=100,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        kernel_params=None,
        max_iter=5,
        tol=1e-3,
        n_iter_no_change=5,
        shuffle=True,
        class_weight=None,
        average=True,
        warm_start=False,
        random_state=None,
        verbose=0,
        verbose_interval=10_000,
    ):
        super().__init__(
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            max_iter=max_iter,
            tol=tol,
            n_iter_no_change=n_iter_no_change,
            shuffle=shuffle,
            class_weight=class_weight,
            average=average,
            warm_start=warm_start,
            random_state=random_state,
            verbose=verbose,
            verbose_interval=verbose_interval,
        )
        self.budget = budget

    _removes_members = True
    _mixable = True

    def _max_members(self):
        return self.budget + 1

    def _make_rule(self):
        return RandomizedBudgetRule(self.budget)

    def _block_start(self, rule, Xb, yb, Z, Kc):
        # One draw per possible removal; _block_end keeps only those used.
        # The generator is rewound from a copy of its bit generator's state
        # where there is one: get_state costs tens of microseconds a block.
        rng = self._rng
        self._rng_at_block = generator_state(rng)
        if self._rng_at_block is None:
            # legacy=False: the legacy tuple exists only for MT19937, and
            # asking it of another bit generator (PCG64...) warns.
            self._rng_at_block = rng.get_state(legacy=False)
        rule.set_draws(rng.randint(self.budget, size=Xb.shape[0]))

    def _block_end(self, rule, Xb, Z):
        rng, saved = self._rng, self._rng_at_block
        if isinstance(saved, bytes):
            set_generator_state(rng, saved)
        else:
            rng.set_state(saved)
        if rule.used:
            rng.randint(self.budget, size=rule.used)
        del self._rng_at_block
