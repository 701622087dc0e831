"""Order of the examples in the gallery: from a first look to scaling out."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

ORDER = [
    "plot_online_error_support.py",
    "plot_decision_surfaces.py",
    "plot_accuracy_vs_budget.py",
    "plot_averaging.py",
    "plot_concept_drift.py",
    "plot_grid_search.py",
    "plot_calibration.py",
    "plot_dask.py",
    "plot_winnow_irrelevant_features.py",
]


class ExampleOrder:
    """Sort key of sphinx-gallery: the rank in ORDER, new examples last."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        rank = ORDER.index(filename) if filename in ORDER else len(ORDER)
        return (rank, filename)

    def __repr__(self):
        return "ExampleOrder"
