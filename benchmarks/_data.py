"""Data sets of the benchmarks: the papers' synthetic set and the local real data."""

import os
from pathlib import Path

from sklearn.datasets import load_svmlight_file

from sklearn_budget._datasets import make_synthetic as synthetic  # noqa: F401

# ../shared/data beside the repository, unless SKLEARN_BUDGET_DATA says otherwise.
DATA_HOME = Path(
    os.environ.get("SKLEARN_BUDGET_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def a9a(n_samples=None):
    """Adult (a9a) training rows as a CSR matrix with 123 features, labels +-1."""
    X, y = load_svmlight_file(str(DATA_HOME / "a9a" / "a9a"), n_features=123)
    if n_samples is not None:
        X, y = X[:n_samples], y[:n_samples]
    return X, y.astype(int)
