"""Importing the package from a source folder without its compiled modules."""

import shutil
import subprocess
import sys
from pathlib import Path

import sklearn_budget

SOURCES = Path(sklearn_budget.__file__).parent


def test_the_source_folder_without_compiled_modules_gets_a_clear_error(tmp_path):
    # The layout of a checkout after a plain (non-editable) pip install: the
    # Python sources, no extension modules, first on sys.path from its root.
    shutil.copytree(
        SOURCES, tmp_path / "sklearn_budget", ignore=shutil.ignore_patterns("*.so", "*.pyd")
    )
    # An editable install's import hook would find the compiled modules of
    # this checkout for the copy: without it, the copy is on its own, as a
    # checkout is beside a non-editable install.
    code = (
        "import sys; "
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
        "import sklearn_budget"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: sklearn_budget's compiled module 'sklearn_budget._")
    assert "you are importing sklearn_budget from its source folder" in last
    assert "python3 -m pip install -e ." in last
    assert str(tmp_path / "sklearn_budget") in last


def test_the_built_package_imports_from_elsewhere(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", "import sklearn_budget; print(sklearn_budget.__version__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == sklearn_budget.__version__
