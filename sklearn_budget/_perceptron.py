"""Kernel Perceptron and Stoptron."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseKernelOnlineClassifier
from ._deprecation import positional_until_0_3
from ._docstrings import _VOTE_AVERAGE_DOC, _averaged_by_default, _doc
from ._rules_perceptron import PerceptronRule


class KernelPerceptron(BaseKernelOnlineClassifier):
    __doc__ = _doc(
        """Kernel Perceptron (Rosenblatt).

    On each prediction mistake the example joins the support set with
    coefficient ``y_t`` (times its sample weight). The support set grows
    without bound; see :class:`Stoptron` and the budget algorithms for
    bounded versions. With more than two classes, a mistake adds ``+1`` to
    the row of the true class and ``-1`` to the row of the highest-scoring
    other class, on one shared support set.

    Parameters
    ----------{common}
    Attributes
    ----------{attributes}
    See Also
    --------
    Stoptron : Kernel Perceptron that stops once its budget is full.
    KernelPassiveAggressive : Passive-Aggressive updates on margin errors.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import KernelPerceptron
    >>> X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    >>> clf = KernelPerceptron(gamma=2.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    >>> voted = KernelPerceptron(gamma=2.0, average="vote", random_state=0).fit(X, y)
    >>> voted.score(X, y) > 0.9
    True
    """,
        vote=True,
        average_doc=_averaged_by_default(_VOTE_AVERAGE_DOC),
    )

    _parameter_constraints: dict = {
        **BaseKernelOnlineClassifier._parameter_constraints,
        # The voted conversion needs the hypotheses played to be the
        # prefixes of the updates: no member changes or leaves once added.
        "average": ["boolean", StrOptions({"vote"})],
    }

    def __init__(
        self,
        *,
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

    def _make_rule(self):
        return PerceptronRule(0)


class Stoptron(KernelPerceptron):
    __doc__ = _doc(
        """Stoptron: the Kernel Perceptron stopped at a budget.

    Plays as :class:`KernelPerceptron` until the support set holds
    ``budget`` examples, then never updates again (it still predicts, and
    counts its mistakes). A baseline of the Projectron paper (Orabona,
    Keshet and Caputo, 2008, Sec. 5).

    Parameters
    ----------
    budget : int, default=100
        Maximum number of support vectors.
{common}
    Attributes
    ----------{attributes}
    See Also
    --------
    KernelPerceptron : The same algorithm without a budget.

    Notes
    -----
    **What the budget costs.** The Stoptron learns from its first
    ``budget`` mistakes only, so its model is decided by the first rows of
    the stream: on noisy data a small budget can leave it near the
    majority rate, whatever the seed happens to put first. On Adult (a9a:
    10,000 training rows drawn, 5 seeds, ``budget=100``) its test accuracy
    has median 0.765, minimum 0.636 and a spread of 16 points (majority
    rate 0.766), and no combination of ``average`` and ``max_iter`` does
    better; ``budget=500`` gives a median of 0.805 (minimum 0.782) and
    ``budget=2000`` 0.818 (minimum 0.794). Averaging, the default, helps
    where the first mistakes suffice (see "Default parameters" in the user
    guide). Use the Stoptron as the baseline it is, or with a budget large
    enough for the data.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import Stoptron
    >>> X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    >>> clf = Stoptron(budget=20, gamma=2.0, random_state=0).fit(X, y)
    >>> len(clf.support_) <= 20
    True
    """,
        vote=True,
        average_doc=_averaged_by_default(_VOTE_AVERAGE_DOC),
    )

    _parameter_constraints: dict = {
        **KernelPerceptron._parameter_constraints,
        "budget": [Interval(Integral, 1, None, closed="left")],
    }

    _stream_params = KernelPerceptron._stream_params + ("budget",)
    _mixable = True

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

    def _make_rule(self):
        # Once |S| = budget the rule never updates again.
        return PerceptronRule(self.budget)
