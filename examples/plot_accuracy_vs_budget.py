"""
===============================
Test accuracy against budget
===============================

How much accuracy does a budget cost? Each budget algorithm is trained with
``fit`` (five online epochs, averaged) at budgets from 5 to 200 support
vectors on a 10-feature classification problem, and scored on a held-out
test set. The unbounded Kernel Perceptron (averaged too) and an exact
:class:`~sklearn.svm.SVC` with the same kernel give the references, drawn
as horizontal lines.

The Projectron++ is given a hard budget; below it, it would stop adding
members on its own. The removal algorithms are averaged as well, and their
averages stay within the budget too: the members that leave the online
learner are folded into a second expansion of at most ``budget`` members
(see :ref:`online_to_batch`), so the averages of the Forgetron and the RBP
keep part of what the removed members taught them. Every model drawn here
has at most ``budget`` support vectors.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from sklearn_budget import (
    BudgetedSGDClassifier,
    Forgetron,
    KernelPerceptron,
    ProjectronPlusPlus,
    RandomizedBudgetPerceptron,
    Stoptron,
)

X, y = make_classification(
    n_samples=2400,
    n_features=10,
    n_informative=6,
    n_redundant=2,
    flip_y=0.05,
    class_sep=0.8,
    random_state=0,
)
X = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
gamma = 0.1
common = dict(gamma=gamma, average=True, random_state=0)
budgets = [5, 10, 20, 50, 100, 200]
makers = {
    "Projectron++": lambda b: ProjectronPlusPlus(eta=0.1, budget=b, **common),
    "Forgetron": lambda b: Forgetron(budget=b, **common),
    "RBP": lambda b: RandomizedBudgetPerceptron(budget=b, **common),
    "Stoptron": lambda b: Stoptron(budget=b, **common),
    "Budgeted SGD (merging)": lambda b: BudgetedSGDClassifier(budget=b, alpha=1e-3, **common),
}

# %%
# Fit every estimator at every budget.
accuracy = {
    name: [make(b).fit(X_train, y_train).score(X_test, y_test) for b in budgets]
    for name, make in makers.items()
}
perceptron = KernelPerceptron(**common).fit(X_train, y_train)
svc = SVC(gamma=gamma).fit(X_train, y_train)
for name, acc in accuracy.items():
    print(f"{name:24s} " + " ".join(f"{a:.3f}" for a in acc))

fig, ax = plt.subplots(figsize=(8, 4.5))
for name, marker in zip(makers, "osd^v"):
    ax.plot(budgets, accuracy[name], marker=marker, label=name)
ax.axhline(
    svc.score(X_test, y_test),
    color="k",
    ls="--",
    lw=1,
    label=f"SVC ({len(svc.support_)} support vectors)",
)
ax.axhline(
    perceptron.score(X_test, y_test),
    color="grey",
    ls=":",
    lw=1.5,
    label=f"Kernel Perceptron ({len(perceptron.support_)} support vectors)",
)
ax.set_xscale("log")
ax.set_xticks(budgets, [str(b) for b in budgets])
ax.set_xlabel("budget")
ax.set_ylabel("test accuracy")
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()
