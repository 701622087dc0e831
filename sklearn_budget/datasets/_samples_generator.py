"""Generators of the synthetic data sets of the papers."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, validate_params


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "noise": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_two_gaussians(n_samples=10000, *, noise=0.1, random_state=None):
    """Generate two 2-D Gaussians with labels flipped at random.

    The synthetic set of the Projectron paper (Orabona, Keshet and Caputo,
    2008, Sec. 5) and of the Forgetron paper: each label is +1 or -1 with
    probability 1/2; a sample of label +1 is drawn from a Gaussian of mean
    ``(1, 1)``, a sample of label -1 from one of mean ``(-1, -1)``, both with
    diagonal covariance ``diag(0.2, 2)``; then each label is flipped with
    probability `noise`. The classes overlap, so no classifier is perfect on
    it, and the flipped labels are noise that a budget algorithm should not
    spend its support set on.

    The numbers drawn are part of the specification: for a given random
    state, the labels, then the features, then the flips are drawn in that
    order, so that published results on this set can be reproduced, and
    `noise` changes only which labels are flipped, not the features.

    Parameters
    ----------
    n_samples : int, default=10000
        The number of samples. The papers use 10000.

    noise : float, default=0.1
        The probability with which each label is flipped. The papers use 0.1.

    random_state : int, RandomState instance or None, default=None
        Determines random number generation. Pass an int for reproducible
        output across multiple function calls. Passing a RandomState instance
        continues its stream, so that successive calls with the same instance
        draw independent sets (for example a training set and then a test
        set).

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The generated samples.

    y : ndarray of shape (n_samples,)
        The integer labels, -1 or +1, after the flips.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_budget.datasets import make_two_gaussians
    >>> X, y = make_two_gaussians(random_state=0)
    >>> X.shape, y.shape
    ((10000, 2), (10000,))
    >>> np.unique(y)
    array([-1,  1])
    >>> rng = np.random.RandomState(0)
    >>> X_train, y_train = make_two_gaussians(1000, random_state=rng)
    >>> X_test, y_test = make_two_gaussians(500, random_state=rng)
    >>> X_test.shape
    (500, 2)
    """
    rng = check_random_state(random_state)
    # Do not change these draws, their order or their shapes: they pin the
    # data set that the benchmarks and the published numbers are computed on.
    y = np.where(rng.rand(n_samples) < 0.5, 1, -1)
    X = rng.randn(n_samples, 2) * np.sqrt([0.2, 2.0]) + y[:, None]
    return X, np.where(rng.rand(n_samples) < noise, -y, y)
