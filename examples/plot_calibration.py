"""
=====================================================
Reliability of ``predict_proba``
=====================================================

The online kernel estimators turn their scores into probabilities with one
scale fitted on the margins the stream produced before each update, at no
extra pass over the data (see the user guide's page on probabilities).
Here we compare, on a synthetic problem, the reliability diagram of a
Projectron++'s own ``predict_proba`` with that of
:class:`~sklearn.calibration.CalibratedClassifierCV`, which fits a sigmoid
on held-out scores of three cross-fitted copies of the model.

A reliable classifier's curve follows the diagonal: among the test points
given a probability of about 0.7, about 70% are positive. The Brier score
(lower is better) sums up calibration and accuracy.

Both are close to the diagonal. The model's own probabilities are a little
under-confident (their curve is steeper than the diagonal): the scale was
fitted on the margins of the hypotheses played online, which erred more
often than the averaged model that predicts here. The calibrated wrapper
fits its sigmoid on held-out scores of the final kind of model instead, at
the cost of three more fits and three models to keep.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib.pyplot as plt
from sklearn.calibration import CalibratedClassifierCV, CalibrationDisplay
from sklearn.datasets import make_classification
from sklearn.metrics import brier_score_loss
from sklearn.model_selection import train_test_split

from sklearn_budget import ProjectronPlusPlus

X, y = make_classification(
    n_samples=6000, n_features=8, n_informative=4, flip_y=0.1, class_sep=0.7, random_state=0
)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

own = ProjectronPlusPlus(eta=0.3, gamma=0.1, average=True, random_state=0)
calibrated = CalibratedClassifierCV(
    ProjectronPlusPlus(eta=0.3, gamma=0.1, average=True, random_state=0),
    method="sigmoid",
    cv=3,
)
models = {"predict_proba": own, "CalibratedClassifierCV (sigmoid, cv=3)": calibrated}

# %%
# Fit both and draw their reliability diagrams, with the histogram of the
# predicted probabilities below.
fig, (ax, ax_hist) = plt.subplots(
    2, 1, figsize=(6.5, 7), gridspec_kw={"height_ratios": [2, 1]}, sharex=True
)
for (name, model), marker in zip(models.items(), "os"):
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test)[:, 1]
    brier = brier_score_loss(y_test, proba)
    CalibrationDisplay.from_predictions(
        y_test, proba, n_bins=10, name=f"{name}, Brier {brier:.3f}", marker=marker, ax=ax
    )
    ax_hist.hist(proba, bins=20, range=(0, 1), histtype="step", lw=2, label=name)
    print(f"{name:40s} Brier score {brier:.4f}, accuracy {model.score(X_test, y_test):.3f}")
print(f"scale fitted on the stream: proba_scale_ = {own.proba_scale_:.3f}")
ax.set_title("Reliability diagram, Projectron++")
ax.set_xlabel("")
ax.legend(loc="upper left", fontsize=8)
ax_hist.set_xlabel("predicted probability of the positive class")
ax_hist.set_ylabel("test points")
fig.tight_layout()
plt.show()
