# Configuration of the Sphinx documentation of sklearn-budget.
#
# Build (from the repository root, after ``pip install -e ".[docs]"``):
#
#     python3 -m sphinx -W --keep-going -b html doc doc/_build/html
#
# The build is offline: intersphinx links to Python, NumPy, SciPy and
# scikit-learn are only made when SKLEARN_BUDGET_INTERSPHINX=1 asks for them
# (it fetches their inventories).

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The package of this checkout, not an installed copy elsewhere.
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))  # gallery_order

import sklearn_budget  # noqa: E402

project = "sklearn-budget"
author = "The sklearn-budget developers"
copyright = "The sklearn-budget developers"
version = release = sklearn_budget.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinx_design",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
default_role = "literal"

# API reference: one page per object, at api/generated/<module>.<name>.html.
autosummary_generate = True
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

if os.environ.get("SKLEARN_BUDGET_INTERSPHINX") == "1":
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "scipy": ("https://docs.scipy.org/doc/scipy", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
    }

# The examples are run by the build; they draw with matplotlib's Agg backend.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "gallery_order.ExampleOrder",
    "doc_module": ("sklearn_budget",),
    "backreferences_dir": "api/generated/backreferences",
    "abort_on_example_error": True,
    "remove_config_comments": True,
    "min_reported_time": 1,
    "write_computation_times": True,
}

html_theme = "pydata_sphinx_theme"
html_title = f"sklearn-budget {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {
    page: []
    for page in (
        "index",
        "install",
        "reproduce",
        "performance",
        "contributing",
        "changelog",
        "references",
    )
}


def _write_reproduce_help():
    """Write the help of ``sklearn-budget reproduce`` for reproduce.rst."""
    import contextlib
    import io

    from sklearn_budget.__main__ import main

    os.environ["COLUMNS"] = "79"  # argparse wraps to the terminal's width
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        main(["reproduce", "--help"])
    out = HERE / "generated"
    out.mkdir(exist_ok=True)
    (out / "reproduce_help.txt").write_text(buffer.getvalue())


_write_reproduce_help()


def _write_river_api():
    """Write the API page of the river classifiers from
    ``sklearn_budget.river.__all__``, so that a new estimator needs no entry
    of its own there."""
    import sklearn_budget.river

    title = ":mod:`sklearn_budget.river`: river classifiers"
    entries = "".join(f"   {name}\n" for name in sklearn_budget.river.__all__)
    out = HERE / "generated"
    out.mkdir(exist_ok=True)
    (out / "river_api.rst").write_text(
        f"{title}\n{'=' * len(title)}\n\n"
        ".. currentmodule:: sklearn_budget.river\n\n"
        "Every estimator of the package that learns online, as a river\n"
        "classifier learning from one event (a dict of features) at a time (the\n"
        "``river`` extra); see :ref:`river`. The list is made from\n"
        "``sklearn_budget.river.__all__`` when the documentation is built.\n\n"
        ".. autosummary::\n   :toctree: ../api/generated/\n   :template: class.rst\n\n" + entries
    )


_write_river_api()
