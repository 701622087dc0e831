"""Kernel Passive-Aggressive classifier (PA, PA-I, PA-II)."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

from sklearn.utils._param_validation import Interval, StrOptions

from ._deprecation import positional_until_0_3
from ._docstrings import _VOTE_AVERAGE_DOC, _averaged_at_every_width, _doc
from ._perceptron import KernelPerceptron
from ._rules_perceptron import PassiveAggressiveRule


class KernelPassiveAggressive(KernelPerceptron):
    __doc__ = _doc(
        """Kernel Passive-Aggressive classifier (Crammer et al., 2006).

    Whenever the hinge loss ``l_t = max(0, 1 - y_t f(x_t))`` is positive,
    the example joins the support set with coefficient ``tau_t y_t``:

    - ``loss='hinge'`` (PA-I): ``tau = min(C, l_t / k(x_t, x_t))``;
    - ``loss='squared_hinge'`` (PA-II): ``tau = l_t / (k(x_t, x_t) + 1 / (2C))``;
    - ``C=np.inf`` gives the plain PA step ``l_t / k(x_t, x_t)`` for both.

    The step is multiplied by the sample weight, as in
    :class:`sklearn.linear_model.PassiveAggressiveClassifier`. An example
    with ``k(x_t, x_t) = 0`` (a zero row under a linear kernel) leaves the
    model unchanged. With more than two classes the margin is
    ``f_y - max_{c != y} f_c`` and the step moves the rows of ``y`` and of
    the best other class; it then solves the same problem on that
    direction, whose squared norm is ``2 k(x_t, x_t)``, so ``k(x_t, x_t)``
    is replaced by ``2 k(x_t, x_t)`` in the formulas above.

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness: the largest step (PA-I), or the weight of the
        squared slack (PA-II). ``np.inf`` gives plain PA.

    loss : {'hinge', 'squared_hinge'}, default='hinge'
        ``'hinge'`` for PA-I, ``'squared_hinge'`` for PA-II.
{common}
    Attributes
    ----------{attributes}
    See Also
    --------
    sklearn.linear_model.PassiveAggressiveClassifier : The linear version.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import KernelPassiveAggressive
    >>> X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    >>> clf = KernelPassiveAggressive(C=1.0, gamma=2.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    """,
        vote=True,
        average_doc=_averaged_at_every_width(_VOTE_AVERAGE_DOC),
    )

    _parameter_constraints: dict = {
        **KernelPerceptron._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="right")],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
    }

    @positional_until_0_3("C")
    def __init__(
        self,
        *,
        C=1.0,
        loss="hinge",
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
        self.C = C
        self.loss = loss

    def _make_rule(self):
        return PassiveAggressiveRule(float(self.C), self.loss == "squared_hinge")
