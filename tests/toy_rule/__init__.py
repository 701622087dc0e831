"""A toy budget rule written outside the package, as ``doc/contributing.rst`` says.

The FIFO Budget Perceptron: on a prediction mistake, the oldest members
leave while the support set holds ``budget`` of them, then the example
joins with coefficient ``y_t``. Its compiled rule is ``_toy_rule.pyx``,
which cimports the engine and the rule base from ``sklearn_budget._engine``;
its estimator, :class:`FIFOBudgetPerceptron`, is a thin subclass of the
package's base class. :func:`build` compiles the rule (the test session
does, into a temporary folder: ``tests/test_new_rule.py``) and makes it
importable as ``toy_rule._toy_rule``.
"""

from ._build import build
from ._estimator import FIFOBudgetPerceptron

__all__ = ["FIFOBudgetPerceptron", "build"]
