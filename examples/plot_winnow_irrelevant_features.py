"""
===========================================================
Winnow and the Perceptron when irrelevant features abound
===========================================================

The target is a disjunction of ``k = 5`` boolean features: a row is
positive when any of the five is on. Every other feature is irrelevant, and
we add more and more of them. Each learner plays one pass over a stream of
4000 rows, predicting each row before learning from it, and we count its
mistakes.

Winnow updates its weights multiplicatively, so the weights of irrelevant
features shrink geometrically: its mistakes grow with the logarithm of the
number of features (Littlestone, 1988). The Perceptron's additive updates
give every active feature the same push, and its mistakes grow roughly in
proportion to the number of features (until the stream is too short to
show it). The Perceptron here is the linear Kernel Perceptron of the
package, given a constant feature to play the part of a bias.

With the default ``learning_rate=0.1`` the effective weights of Winnow stay nearly
linear in its log-weights for a long time, and it sits between the two;
``learning_rate=1`` shows the multiplicative behaviour fully.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib.pyplot as plt
import numpy as np

from sklearn_budget import KernelPerceptron
from sklearn_budget._winnow import Winnow

k, n_rounds, seeds = 5, 4000, range(2)
# Each feature is on with probability p, chosen so that half the rows are
# positive: (1 - p) ** k = 1 / 2.
p = 1 - 0.5 ** (1 / k)
n_features = [10, 20, 50, 100, 200, 500, 1000, 2000]

learners = {
    "Winnow, learning_rate=1": lambda: Winnow(learning_rate=1.0),
    "Winnow, learning_rate=0.1 (default)": lambda: Winnow(),
    "Perceptron": lambda: KernelPerceptron(kernel="linear"),
}
mistakes = {name: [] for name in learners}
for d in n_features:
    counts = {name: [] for name in learners}
    for seed in seeds:
        rng = np.random.RandomState(seed)
        X = (rng.rand(n_rounds, d) < p).astype(float)
        y = (X[:, :k].sum(axis=1) > 0).astype(int)
        for name, make in learners.items():
            # The Kernel Perceptron has no bias: a constant feature gives it one.
            Xs = np.c_[X, np.ones(n_rounds)] if name == "Perceptron" else X
            est = make().partial_fit(Xs, y, classes=[0, 1])
            counts[name].append(est.n_mistakes_)
    for name in learners:
        mistakes[name].append(np.mean(counts[name]))

print(f"Mistakes in one pass over {n_rounds} rounds (mean over {len(seeds)} streams)")
print(f"{'features':>8} " + " ".join(f"{name:>26}" for name in learners))
for i, d in enumerate(n_features):
    print(f"{d:>8} " + " ".join(f"{mistakes[name][i]:>26.1f}" for name in learners))

fig, ax = plt.subplots(figsize=(6, 4))
for name, marker in zip(learners, "osd"):
    ax.plot(n_features, mistakes[name], marker=marker, label=name)
ax.set_xscale("log")
ax.set_xlabel("number of features (5 relevant)")
ax.set_ylabel("online mistakes in one pass")
ax.set_title("A 5-feature disjunction among irrelevant features")
ax.legend()
fig.tight_layout()
plt.show()
