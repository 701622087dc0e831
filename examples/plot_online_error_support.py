"""
===============================================
Online error and support size against rounds
===============================================

The budget algorithms on the synthetic stream of the Projectron and
Forgetron papers (two overlapping Gaussians, 10% of the labels flipped), in
the style of the Projectron paper's Figs. 1 and 2. Each learner plays the
same stream once with ``partial_fit``; after each chunk we record the online
error (mistakes so far over rounds so far, every prediction made before the
label was seen) and the size of the support set.

The Kernel Perceptron keeps every mistake, so its support set grows
linearly with the stream. The Forgetron, the Randomized Budget Perceptron
and the Stoptron play the Perceptron until their budget is full, then stay
at it; the Stoptron, which stops learning there, keeps whatever hypothesis
its first ``budget`` mistakes gave it. The Projectron and Projectron++
choose their own, much smaller, support sets: they add an example only when
it is far from the span of the current ones, and the Projectron++ also
learns from margin errors, which lowers its error well below the others'.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib.pyplot as plt
import numpy as np

from sklearn_budget import (
    Forgetron,
    KernelPerceptron,
    Projectron,
    ProjectronPlusPlus,
    RandomizedBudgetPerceptron,
    Stoptron,
)
from sklearn_budget.datasets import make_two_gaussians

X, y = make_two_gaussians(n_samples=6000, noise=0.1, random_state=0)
budget, chunk = 100, 200
learners = {
    "Perceptron (unbounded)": KernelPerceptron(gamma=1.0),
    f"Forgetron (B={budget})": Forgetron(budget=budget, gamma=1.0),
    f"RBP (B={budget})": RandomizedBudgetPerceptron(budget=budget, gamma=1.0, random_state=0),
    f"Stoptron (B={budget})": Stoptron(budget=budget, gamma=1.0),
    "Projectron (eta=0.5)": Projectron(eta=0.5, gamma=1.0),
    "Projectron++ (eta=0.5)": ProjectronPlusPlus(eta=0.5, gamma=1.0),
}

# %%
# Play the stream chunk by chunk and record both curves.
rounds = np.arange(chunk, len(X) + 1, chunk)
error, support = {}, {}
for name, clf in learners.items():
    error[name], support[name] = [], []
    for stop in rounds:
        clf.partial_fit(X[stop - chunk : stop], y[stop - chunk : stop], classes=[-1, 1])
        error[name].append(clf.n_mistakes_ / stop)
        support[name].append(len(clf.support_))
    print(f"{name:24s} online error {error[name][-1]:.3f}, support {support[name][-1]}")

# %%
# The Forgetron, RBP and Stoptron coincide with the Perceptron until their
# support set is full: markers tell them apart.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
for name, marker in zip(learners, "os^vDP"):
    style = dict(marker=marker, markevery=5, markersize=5, label=name)
    ax1.plot(rounds, 100 * np.asarray(error[name]), **style)
    ax2.plot(rounds, support[name], **style)
ax1.set_xlabel("rounds")
ax1.set_ylabel("online error (%)")
ax1.set_title("Online error")
ax2.set_xlabel("rounds")
ax2.set_ylabel("support size")
ax2.set_yscale("log")
ax2.set_title("Support size")
ax2.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()
