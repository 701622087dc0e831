"""
=============================================
Averaged against last hypothesis
=============================================

An online learner plays one hypothesis per round. To turn it into a batch
classifier, ``fit`` can return either the last hypothesis or, with
``average=True``, the average of all the hypotheses it played (the
online-to-batch conversion of Cesa-Bianchi, Conconi and Gentile, 2004).
On noisy data the last hypothesis depends heavily on the last few
mistakes, while the average smooths them out.

Each learner plays one pass over a stream of noisy examples (20% of the
labels flipped); every 250 rounds we measure the test error of its current
hypothesis, last and averaged. The exact average of the Forgetron, a
learner that removes members, involves nearly every mistake of the stream
(``average='exact'``, dotted); ``average=True`` keeps it within the budget
(dashed), by compressing the members that leave into an expansion of at
most ``budget`` members. The Projectron++, which never removes a member,
averages on its own small support set.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib.pyplot as plt
import numpy as np

from sklearn_budget import Forgetron, KernelPerceptron, ProjectronPlusPlus
from sklearn_budget.datasets import make_two_gaussians

X, y = make_two_gaussians(n_samples=4000, noise=0.2, random_state=0)
X_test, y_test = make_two_gaussians(n_samples=2000, noise=0.0, random_state=1)

makers = {
    "Kernel Perceptron": lambda average: KernelPerceptron(gamma=1.0, average=average),
    "Forgetron (B=50)": lambda average: Forgetron(budget=50, gamma=1.0, average=average),
    "Projectron++ (eta=0.5)": lambda average: ProjectronPlusPlus(
        eta=0.5, gamma=1.0, average=average
    ),
}

# %%
# The averaged and the last hypotheses come from the same online run: the
# average does not change what the learner does, only what it returns.
chunk = 250
ends = np.arange(chunk, len(X) + 1, chunk)
fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
for ax, (name, make) in zip(axes, makers.items()):
    variants = ((False, "-"), (True, "--"))
    if name.startswith("Forgetron"):
        variants += (("exact", ":"),)
    for average, style in variants:
        clf, errors = make(average), []
        for stop in ends:
            clf.partial_fit(X[stop - chunk : stop], y[stop - chunk : stop], classes=[-1, 1])
            errors.append(1 - clf.score(X_test, y_test))
        label = {False: "last", True: "averaged", "exact": "exact average"}[average]
        ax.plot(ends, 100 * np.asarray(errors), style, lw=1.8, label=label)
        print(f"{name:24s} {label:8s} test error {errors[-1]:.3f}, |S| = {len(clf.support_)}")
    ax.set_title(name)
    ax.set_xlabel("rounds")
axes[0].set_ylabel("test error on noise-free labels (%)")
axes[0].legend()
fig.tight_layout()
plt.show()
