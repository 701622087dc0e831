"""The accounting of benchmarks/bench_alternatives.py: model sizes and the comparison."""

import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_alternatives as ba  # noqa: E402


def _predicting_arrays(name, model):
    """The arrays that predicting needs, read from the fitted model (intercepts aside)."""
    if name == "Nystroem + SGD":
        nystroem, sgd = model[0], model[-1]
        return nystroem.components_, nystroem.normalization_, sgd.coef_
    if name == "RBFSampler + SGD":
        sampler, sgd = model[0], model[-1]
        return sampler.random_weights_, sampler.random_offset_, sgd.coef_
    if name == "FOGD":
        return model.random_weights_, model.random_offset_, model.coef_
    return model.support_vectors_, model.dual_coef_


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "name", ["Forgetron", "Projectron", "NOGD", "FOGD", "Nystroem + SGD", "RBFSampler + SGD", "SVC"]
)
def test_model_bytes_counts_what_predicting_needs(name, n_classes):
    X, y = make_classification(
        n_samples=200, n_features=7, n_informative=4, n_classes=n_classes, random_state=0
    )
    model = ba.make_model(name, budget=20, gamma=0.1).fit(X, y)
    record = dict(
        model=name,
        support=ba.n_support(model),
        n_features=7,
        n_outputs=1 if n_classes == 2 else n_classes,
    )
    expected = 8 * sum(a.size for a in _predicting_arrays(name, model))
    assert ba.model_bytes(record) == expected
    # The stream protocol counts the same model.
    assert ba.model_bytes(dict(record, model=name + ba.STREAM)) == expected


def _row(dataset, model, budget, accuracy):
    return dict(dataset=dataset, model=model, budget=budget, accuracy=accuracy)


def test_against_reference_cell_by_cell():
    results = [
        _row("dna", "Nystroem + SGD", 100, 90.0),
        _row("dna", "Nystroem + SGD", 500, 93.0),
        _row("banana", "Nystroem + SGD", 100, 88.0),
        _row("dna", "Forgetron", 100, 91.5),
        _row("dna", "Forgetron", 500, 92.0),
        _row("banana", "Forgetron", 100, 88.0),
        _row("banana", "Forgetron", 500, 99.0),  # no reference cell: not compared
        _row("dna", "SVC", None, 95.0),
    ]
    diffs = ba.against_reference(results, ba.OURS)
    assert list(diffs) == ["Forgetron"]
    assert diffs["Forgetron"] == pytest.approx(
        {("dna", 100): 1.5, ("dna", 500): -1.0, ("banana", 100): 0.0}
    )
    (line,) = ba.summary(results, ba.OURS)
    assert "in 2 of 3 cells" in line
    assert "short in: dna B=500 (-1.0)" in line


def test_grid_table_rows_and_columns():
    results = [
        dict(_row("dna", "Forgetron", 100, 91.54), predict_us_per_row=2.0),
        dict(_row("a9a", "Forgetron", 100, 84.0), predict_us_per_row=1234.5),
        dict(_row("dna", "SVC", None, 95.0), predict_us_per_row=250.0),
    ]
    lines = ba.grid_table(results, 100)
    assert lines[1].split() == ["model", "DNA", "a9a"]
    assert lines[3].split() == ["Forgetron", "91.5", "84.0"]
    assert lines[4].split() == ["SVC", "95.0"]  # no a9a cell: left empty
    times = ba.grid_table(results, 100, value="predict_us_per_row", fmt=ba._sig)
    assert times[3].split() == ["Forgetron", "2", "1234"]
    assert np.all([line.startswith("=") for line in (lines[0], lines[2], lines[-1])])
