"""
====================================================
Decision surfaces of the budget algorithms
====================================================

Every budget algorithm of the package, and the unbounded Kernel Perceptron
for reference, trained on the same 2-D problem (two interleaving half
moons with noise) with a budget of 15 support vectors and the same rbf
kernel. Each panel shows the decision function (colour), the decision
boundary (black line), the support vectors (circled) and the accuracy on a
held-out test set.

With so few members the choice of which examples to keep shows: the
Stoptron keeps its first mistakes, the Forgetron the most recent ones with
shrunk weights, the Randomized Budget Perceptron a random sample of them.
The Budget Perceptron removes the member that is best classified without
itself, so on noisy data it ends up keeping the examples that no smooth
boundary classifies, the mislabelled ones, and can fail altogether, as
Weston, Bordes and Bottou (2005) observed; the Tighter Budget Perceptron
removes the member whose removal costs the fewest errors instead. Budgeted
SGD merges pairs of members into new points, which need not be training
examples.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib.pyplot as plt
from sklearn.datasets import make_moons
from sklearn.inspection import DecisionBoundaryDisplay
from sklearn.model_selection import train_test_split

from sklearn_budget import (
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    KernelPerceptron,
    ProjectronPlusPlus,
    RandomizedBudgetPerceptron,
    Stoptron,
    TighterBudgetPerceptron,
)

X, y = make_moons(n_samples=1000, noise=0.25, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
budget, gamma = 15, 2.0
common = dict(gamma=gamma, max_iter=5, average=False, random_state=0)
learners = {
    "Kernel Perceptron (unbounded)": KernelPerceptron(**common),
    "Stoptron": Stoptron(budget=budget, **common),
    "Forgetron": Forgetron(budget=budget, **common),
    "Randomized Budget Perceptron": RandomizedBudgetPerceptron(budget=budget, **common),
    "Budget Perceptron": BudgetPerceptron(budget=budget, **common),
    "Tighter Budget Perceptron": TighterBudgetPerceptron(budget=budget, **common),
    "Projectron++ (hard budget)": ProjectronPlusPlus(eta=0.3, budget=budget, **common),
    "Budgeted SGD (merging)": BudgetedSGDClassifier(budget=budget, alpha=1e-3, **common),
}

# %%
# ``fit`` plays five shuffled epochs over the training set; the last
# hypothesis is shown.
fig, axes = plt.subplots(2, 4, figsize=(14, 7), sharex=True, sharey=True)
for ax, (name, clf) in zip(axes.ravel(), learners.items()):
    clf.fit(X_train, y_train)
    DecisionBoundaryDisplay.from_estimator(
        clf,
        X,
        response_method="decision_function",
        cmap="RdBu",
        alpha=0.7,
        ax=ax,
        grid_resolution=150,
    )
    DecisionBoundaryDisplay.from_estimator(
        clf,
        X,
        response_method="decision_function",
        plot_method="contour",
        levels=[0],
        colors="k",
        linewidths=1.5,
        ax=ax,
        grid_resolution=150,
    )
    ax.scatter(X_train[:, 0], X_train[:, 1], c=y_train, cmap="RdBu", s=6, edgecolors="none")
    sv = clf.support_vectors_
    ax.scatter(sv[:, 0], sv[:, 1], s=60, facecolors="none", edgecolors="k", linewidths=1.2)
    acc = clf.score(X_test, y_test)
    ax.set_title(f"{name}\n|S| = {len(sv)}, test accuracy {acc:.2f}", fontsize=9)
    ax.set_xlabel("")
    ax.set_ylabel("")
fig.suptitle(f"rbf kernel, gamma = {gamma}, budget = {budget}")
fig.tight_layout()
plt.show()
