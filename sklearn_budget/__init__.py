"""Bounded-memory kernel online classifiers for scikit-learn."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

try:
    from ._bsgd import BudgetedSGDClassifier
    from ._budget_perceptron import BudgetPerceptron, TighterBudgetPerceptron
    from ._forgetron import Forgetron
    from ._fourier import FourierOnlineClassifier
    from ._matching_pursuit import KernelMatchingPursuit
    from ._nystroem_online import NystroemOnlineClassifier
    from ._passive_aggressive import KernelPassiveAggressive
    from ._perceptron import KernelPerceptron, Stoptron
    from ._projectron import Projectron, ProjectronPlusPlus
    from ._random_budget import RandomizedBudgetPerceptron
    from ._winnow import Winnow
except ModuleNotFoundError as exc:
    # A compiled module missing beside the sources: the source folder (for
    # example the repository root as the working directory) shadows the
    # installed package, as numpy and scikit-learn also detect.
    if not (exc.name or "").startswith(f"{__name__}._"):
        raise
    raise ImportError(
        f"sklearn_budget's compiled module {exc.name!r} is not in {__path__[0]}: you "
        "are importing sklearn_budget from its source folder, which has no compiled "
        "modules and shadows the installed package. Build them in place with "
        "`python3 -m pip install -e .`, or run Python from another folder."
    ) from exc

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetedSGDClassifier",
    "BudgetPerceptron",
    "Forgetron",
    "FourierOnlineClassifier",
    "KernelMatchingPursuit",
    "KernelPassiveAggressive",
    "KernelPerceptron",
    "NystroemOnlineClassifier",
    "Projectron",
    "ProjectronPlusPlus",
    "RandomizedBudgetPerceptron",
    "Stoptron",
    "TighterBudgetPerceptron",
    "Winnow",
]
