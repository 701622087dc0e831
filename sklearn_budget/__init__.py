"""Bounded-memory kernel online classifiers for scikit-learn."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

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
