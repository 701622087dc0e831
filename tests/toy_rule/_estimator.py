"""The estimator of the toy FIFO Budget Perceptron: a thin subclass of the base class."""

import importlib
from numbers import Integral

from sklearn.utils._param_validation import Interval

from sklearn_budget._base import REMOVAL_AVERAGE, BaseKernelOnlineClassifier
from sklearn_budget._docstrings import _doc


class FIFOBudgetPerceptron(BaseKernelOnlineClassifier):
    __doc__ = _doc(
        """FIFO Budget Perceptron: the kernel Perceptron that forgets its oldest members.

    On a prediction mistake, if the support set already holds ``budget``
    examples, the oldest of them is removed; then the example joins with
    coefficient ``y_t`` (times its sample weight). A toy of the tests, the
    Forgetron without its shrinking (Dekel, Shalev-Shwartz and Singer,
    2008, with ``phi = 1``).

    Parameters
    ----------
    budget : int, default=100
        Maximum number of support vectors.
{common}
    Attributes
    ----------{attributes}
    Notes
    -----
{averaging}
    """,
        removal=True,
    )

    _parameter_constraints: dict = {
        **BaseKernelOnlineClassifier._parameter_constraints,
        # Removals: no voted conversion; the exact average may be asked for.
        "average": REMOVAL_AVERAGE,
        "budget": [Interval(Integral, 1, None, closed="left")],
    }

    # The budget sizes the state: a stream cannot go on once it changes.
    _stream_params = BaseKernelOnlineClassifier._stream_params + ("budget",)
    _removes_members = True
    _mixable = True

    def __init__(
        self,
        budget=100,
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
        average=False,
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

    def _max_members(self):
        # The rule removes before it adds: never more than the budget.
        return self.budget

    def _make_rule(self):
        # The compiled module exists once toy_rule.build() has made it.
        compiled = importlib.import_module(f"{__package__}._toy_rule")
        return compiled.FIFORule(self.budget)
