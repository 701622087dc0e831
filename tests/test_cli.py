"""The command line's default job."""

import io
import subprocess
import sys

import sklearn_budget
from sklearn_budget.__main__ import demo


def test_demo_reports_every_estimator():
    out = io.StringIO()
    demo(n_samples=600, n_test=300, budget=50, out=out)
    lines = out.getvalue().splitlines()
    rows = {line.split(" (")[0].split()[0]: line.split() for line in lines[3:]}
    assert set(rows) == set(sklearn_budget.__all__)
    for name, fields in rows.items():
        err, size, acc = float(fields[-4]), int(fields[-3]), float(fields[-2])
        assert 0 < err < 60 and 0 < acc <= 100
        if "B=50" in " ".join(fields):
            assert size <= 50


def test_module_entry_point_runs_the_demo():
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_budget", "demo", "--n-samples", "300", "--budget", "20"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "ProjectronPlusPlus" in result.stdout
