"""Data sets of the benchmarks: the papers' synthetic set and the local real data."""

import os
from pathlib import Path

from sklearn_budget.datasets import fetch_a9a, fetch_usps
from sklearn_budget.datasets import make_two_gaussians as synthetic  # noqa: F401

# ../shared/data beside the repository, unless SKLEARN_BUDGET_DATA says otherwise.
DATA_HOME = Path(
    os.environ.get("SKLEARN_BUDGET_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def a9a(n_samples=None):
    """Adult (a9a) training rows as a CSR matrix with 123 features, labels +-1."""
    # The benchmarks read local data only: no download behind their back.
    X, y = fetch_a9a(data_home=DATA_HOME, download_if_missing=False, return_X_y=True)
    if n_samples is not None:
        X, y = X[:n_samples], y[:n_samples]
    return X, y


def usps(n_samples=None, positive_digit=0):
    """USPS training rows (dense, 256 features in [-1, 1]): `positive_digit` against the rest."""
    X, y = fetch_usps(
        subset="train",
        data_home=DATA_HOME,
        positive_digit=positive_digit,
        download_if_missing=False,
        return_X_y=True,
    )
    if n_samples is not None:
        X, y = X[:n_samples], y[:n_samples]
    return X, y
