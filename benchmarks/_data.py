"""Data sets of the benchmarks: the papers' synthetic set and the local real data."""

import os
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.utils import check_random_state

# ../shared/data beside the repository, unless SKLEARN_BUDGET_DATA says otherwise.
DATA_HOME = Path(
    os.environ.get("SKLEARN_BUDGET_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def synthetic(n_samples=10000, random_state=0):
    """Two 2-D Gaussians, means (1, 1) and (-1, -1), covariance diag(0.2, 2),
    labels flipped with probability 0.1 (Projectron paper, Sec. 5)."""
    rng = check_random_state(random_state)
    y = np.where(rng.rand(n_samples) < 0.5, 1, -1)
    X = rng.randn(n_samples, 2) * np.sqrt([0.2, 2.0]) + y[:, None] * np.array([1.0, 1.0])
    flip = rng.rand(n_samples) < 0.1
    return X, np.where(flip, -y, y)


def a9a(n_samples=None):
    """Adult (a9a) training rows as a CSR matrix with 123 features, labels +-1."""
    X, y = load_svmlight_file(str(DATA_HOME / "a9a" / "a9a"), n_features=123)
    if n_samples is not None:
        X, y = X[:n_samples], y[:n_samples]
    return X, y.astype(int)
