"""Bounded-memory kernel online classifiers for scikit-learn."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from ._passive_aggressive import KernelPassiveAggressive
from ._perceptron import KernelPerceptron, Stoptron
from ._projectron import Projectron, ProjectronPlusPlus

__version__ = "0.1.0.dev0"

__all__ = [
    "KernelPassiveAggressive",
    "KernelPerceptron",
    "Projectron",
    "ProjectronPlusPlus",
    "Stoptron",
]
