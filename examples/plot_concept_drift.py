"""
=====================================
A stream whose concept changes
=====================================

On a stream whose labelling rule changes, a learner with a fixed budget
has to forget the old rule to learn the new one. Here the first half of the
stream is the papers' two-Gaussian problem; halfway, the means of the two
classes swap (every label the old rule gives is now wrong), and at three
quarters the stream turns to a third rule, a rotation of the first by 90
degrees.

The Forgetron forgets its oldest members and the Randomized Budget
Perceptron random ones, so after each change they soon track the new rule.
The Stoptron stops learning for good once its budget is full, well before
the first change, and is stuck with what it learnt of the first rule. On
this low-dimensional problem the unbounded Kernel Perceptron adapts as
quickly as the Forgetron, but it pays with a support set that grows with
every mistake: about ten times the budget by the end of the stream.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib.pyplot as plt
import numpy as np

from sklearn_budget import Forgetron, KernelPerceptron, RandomizedBudgetPerceptron, Stoptron
from sklearn_budget.datasets import make_two_gaussians

n = 4000
X, y = make_two_gaussians(n_samples=n, noise=0.05, random_state=0)
y = y.copy()
y[n // 2 :] *= -1  # the classes swap sides
rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
X[3 * n // 4 :] = X[3 * n // 4 :] @ rotation.T  # a third rule: the first, rotated

budget = 50
learners = {
    f"Forgetron (B={budget})": Forgetron(budget=budget, gamma=1.0),
    f"RBP (B={budget})": RandomizedBudgetPerceptron(budget=budget, gamma=1.0, random_state=0),
    f"Stoptron (B={budget})": Stoptron(budget=budget, gamma=1.0),
    "Kernel Perceptron (unbounded)": KernelPerceptron(gamma=1.0),
}

# %%
# Each learner plays the stream once, in chunks of 100 rounds; the mistakes
# made on each chunk (its rows were predicted before being learned) give the
# online error of that stretch of the stream.
chunk = 100
ends = np.arange(chunk, n + 1, chunk)
error = {}
for name, clf in learners.items():
    previous, error[name] = 0, []
    for stop in ends:
        clf.partial_fit(X[stop - chunk : stop], y[stop - chunk : stop], classes=[-1, 1])
        error[name].append((clf.n_mistakes_ - previous) / chunk)
        previous = clf.n_mistakes_
    print(f"{name:30s} final support size {len(clf.support_)}")

fig, ax = plt.subplots(figsize=(9, 4.2))
for name, style in zip(learners, ["-", "--", ":", "-."]):
    ax.plot(ends, 100 * np.asarray(error[name]), style, lw=1.8, label=name)
for change in (n // 2, 3 * n // 4):
    ax.axvline(change, color="grey", lw=1)
ax.text(n // 2, 101, " classes swap", va="bottom", fontsize=9)
ax.text(3 * n // 4, 101, " rotation", va="bottom", fontsize=9)
ax.set_xlabel("rounds")
ax.set_ylabel("online error over the last 100 rounds (%)")
ax.set_ylim(0, 100)
ax.legend(loc="upper left", fontsize=8)
fig.tight_layout()
plt.show()
