"""
=====================================================
Tuning budget and gamma in a pipeline
=====================================================

The estimators are ordinary scikit-learn estimators: they go in a
:class:`~sklearn.pipeline.Pipeline` behind a scaler, and
:class:`~sklearn.model_selection.GridSearchCV` tunes their parameters like
any others'. Here a Forgetron is tuned over its ``budget`` and the rbf
kernel's ``gamma`` by 3-fold cross-validation; the heat map shows the mean
validation accuracy of each pair.

Here the kernel width matters far more than the budget: too wide a kernel
(small ``gamma``) cannot bend the boundary around the moons, whatever the
budget. With ``average=True`` the Forgetron's averaged model also keeps
the members it removed, which makes small budgets go a long way; without
it (``average=False``) the same grid shows a clearer gain from larger
budgets, at a lower accuracy overall.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_budget import Forgetron

X, y = make_moons(n_samples=1500, noise=0.3, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

pipe = make_pipeline(StandardScaler(), Forgetron(average=True, random_state=0))
param_grid = {
    "forgetron__budget": [5, 10, 20, 50, 100],
    "forgetron__gamma": [0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0],
}
search = GridSearchCV(pipe, param_grid, cv=3).fit(X_train, y_train)
print("best parameters:", search.best_params_)
print(
    f"validation accuracy {search.best_score_:.3f}, test accuracy "
    f"{search.score(X_test, y_test):.3f}"
)

# %%
# Mean validation accuracy of every pair of the grid.
budgets, gammas = param_grid["forgetron__budget"], param_grid["forgetron__gamma"]
scores = search.cv_results_["mean_test_score"].reshape(len(budgets), len(gammas))

fig, ax = plt.subplots(figsize=(7, 4))
im = ax.imshow(scores, cmap="viridis", origin="lower", aspect="auto")
for i in range(len(budgets)):
    for j in range(len(gammas)):
        color = "k" if scores[i, j] > scores.mean() else "w"
        ax.text(j, i, f"{scores[i, j]:.2f}", ha="center", va="center", color=color, fontsize=9)
ax.set_xticks(np.arange(len(gammas)), [str(g) for g in gammas])
ax.set_yticks(np.arange(len(budgets)), [str(b) for b in budgets])
ax.set_xlabel("gamma")
ax.set_ylabel("budget")
fig.colorbar(im, ax=ax, label="mean validation accuracy")
ax.set_title("Forgetron in a pipeline: 3-fold cross-validation")
fig.tight_layout()
plt.show()
