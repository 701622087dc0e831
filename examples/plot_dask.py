"""
=====================================================
Scaling out with dask
=====================================================

``partial_fit`` lets a model learn from data that never fit in memory at
once. With `dask <https://www.dask.org>`_, a dask array holds the data in
chunks (on disk, or spread over a cluster), and dask-ml's
:class:`~dask_ml.wrappers.Incremental` feeds them to ``partial_fit`` one
after the other. A stream is sequential, so training is too, but
prediction is not: :class:`~dask_ml.wrappers.ParallelPostFit` predicts
every chunk in parallel with the fitted model.

The example runs on dask's synchronous scheduler, so it needs no cluster;
the same code runs on a ``distributed`` cluster.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import dask
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from dask_ml.wrappers import Incremental, ParallelPostFit

from sklearn_budget import Forgetron
from sklearn_budget.datasets import make_two_gaussians

X, y = make_two_gaussians(n_samples=20_000, noise=0.1, random_state=0)
X_test, y_test = make_two_gaussians(n_samples=20_000, noise=0.1, random_state=1)
# Ten chunks of 2000 rows: in practice, files or partitions of a table.
dX, dy = da.from_array(X, chunks=(2000, 2)), da.from_array(y, chunks=2000)
dX_test = da.from_array(X_test, chunks=(2000, 2))

# %%
# Training: ``Incremental`` calls ``partial_fit`` on each chunk in turn,
# passing ``classes`` along.
dask.config.set(scheduler="synchronous")
inc = Incremental(Forgetron(budget=100, gamma=1.0), shuffle_blocks=False)
inc.fit(dX, dy, classes=[-1, 1])
model = inc.estimator_
print(f"{model.n_mistakes_} online mistakes over {len(X)} rounds, |S| = {len(model.support_)}")

# The model is the one a plain loop over the same chunks gives.
reference = Forgetron(budget=100, gamma=1.0)
for start in range(0, len(X), 2000):
    reference.partial_fit(X[start : start + 2000], y[start : start + 2000], classes=[-1, 1])
assert np.array_equal(reference.dual_coef_, model.dual_coef_)

# %%
# Prediction: ``ParallelPostFit`` maps ``predict`` and ``predict_proba``
# over the chunks; nothing is computed until ``.compute()``.
clf = ParallelPostFit(model)
proba = clf.predict_proba(dX_test)[:, 1].compute()
y_pred = clf.predict(dX_test).compute()
print(f"test accuracy {np.mean(y_pred == y_test):.3f}")

fig, ax = plt.subplots(figsize=(7, 5))
sc = ax.scatter(X_test[::10, 0], X_test[::10, 1], c=proba[::10], cmap="RdBu", s=8, vmin=0, vmax=1)
sv = model.support_vectors_
ax.scatter(sv[:, 0], sv[:, 1], s=50, facecolors="none", edgecolors="k", label="support vectors")
fig.colorbar(sc, ax=ax, label="predicted probability of class +1")
ax.set_title("Forgetron (B=100) trained chunk by chunk from a dask array")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()
