"""The synthetic data set of the Projectron and Forgetron papers."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import check_random_state


def make_synthetic(n_samples, random_state=None):
    """Two 2-D Gaussians with labels flipped at random.

    Means (1, 1) for the positive class and (-1, -1) for the negative one,
    diagonal covariance (0.2, 2), each label flipped with probability 0.1
    (Orabona, Keshet and Caputo, 2008, Sec. 5). Labels are -1 and +1.
    Passing a RandomState instance continues its stream, so successive
    calls draw independent sets.
    """
    rng = check_random_state(random_state)
    y = np.where(rng.rand(n_samples) < 0.5, 1, -1)
    X = rng.randn(n_samples, 2) * np.sqrt([0.2, 2.0]) + y[:, None]
    return X, np.where(rng.rand(n_samples) < 0.1, -y, y)
