"""The documentation's claims of what each estimator offers, against the code.

The README's table of capabilities (one column per capability, one row per
estimator that lacks one: every estimator it does not name has them all;
``doc/choosing.rst`` includes it) is parsed and every estimator of the
package is checked against it, capability by capability: an attribute, a
tiny fit on dense and CSR input, the signatures,
``sklearn_budget.river.__all__`` and the ONNX registry of
``sklearn_budget/_onnx.py``. The list of extras in ``doc/install.rst`` and
the README's table of experiments are checked against ``pyproject.toml``
and the command's registry.
"""

import ast
import importlib.util
import inspect
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import sklearn_budget
from sklearn_budget import BudgetedSGDClassifier, _onnx

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.rst"
START, END = ".. capabilities-start", ".. capabilities-end"


def simple_table(text, header=True):
    """The header (None without one) and the rows of the first
    reStructuredText simple table of ``text``, as lists of stripped cells.

    The columns are the spans of the ``=`` runs of the table's border; a
    row's last cell runs to the end of its line.
    """
    lines = text.splitlines()
    borders = [i for i, line in enumerate(lines) if re.fullmatch(r"=+( +=+)+", line)]
    assert len(borders) >= 2 + header, "no simple table"
    starts = [m.start() for m in re.finditer(r"=+", lines[borders[0]])]

    def cells(line):
        bounds = [*starts[1:], None]
        return [line[a:b].strip() for a, b in zip(starts, bounds)]

    first, last = borders[header], borders[1 + header]
    rows = [cells(line) for line in lines[first + 1 : last] if line.strip()]
    return (cells(lines[borders[0] + 1]) if header else None), rows


def _plain(cell):
    """A cell without literal markup and footnote references."""
    return re.sub(r"\s*\[#[\w-]*\]_", "", cell).replace("``", "").strip()


def capability_table():
    """``{estimator name: {capability: True or False}}`` from the README."""
    text = README.read_text(encoding="utf-8")
    assert text.count(START) == 1 and text.count(END) == 1
    header, rows = simple_table(text[text.index(START) : text.index(END)])
    header = [_plain(h) for h in header]
    table = {}
    for row in rows:
        values = [_plain(c) for c in row[1:]]
        assert set(values) <= {"yes", "no"}, row
        table[_plain(row[0])] = dict(zip(header[1:], (v == "yes" for v in values)))
    return header[1:], table


def test_simple_table_parser():
    text = """
====== ===== ============
name   a     ``b_``
====== ===== ============
``X``  yes   no [#n]_
Y      no    yes
====== ===== ============
"""
    header, rows = simple_table(text)
    assert header == ["name", "a", "``b_``"]
    assert rows == [["``X``", "yes", "no [#n]_"], ["Y", "no", "yes"]]
    _, rows = simple_table("== ===\na  b c\n   d\n== ===\n", header=False)
    assert rows == [["a", "b c"], ["", "d"]]
    assert _plain("no [#n]_") == "no" and _plain("``support_``") == "support_"


CAPABILITIES, TABLE = capability_table()


def claimed(name):
    """The capabilities that the README claims for ``name``: its row, or
    all of them for an estimator that the table does not name."""
    return TABLE.get(name, dict.fromkeys(CAPABILITIES, True))


def test_the_table_names_estimators_that_lack_a_capability():
    # A row is an exception to "every estimator offers all of them".
    assert set(TABLE) <= set(sklearn_budget.__all__)
    for name, row in TABLE.items():
        assert not all(row.values()), f"{name} has every capability: drop its row"
    assert CAPABILITIES == [
        "partial_fit",
        "predict_proba",
        "decision_function",
        "support_",
        "sparse X",
        "sample_weight",
        "river",
        "ONNX",
    ]


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = (X[:, 0] + 0.3 * rng.randn(40) > 0).astype(int)
    return X, y


def _river_names():
    """``sklearn_budget.river.__all__``, read from the source without river."""
    if importlib.util.find_spec("river") is not None:
        import sklearn_budget.river

        return set(sklearn_budget.river.__all__)
    tree = ast.parse((ROOT / "sklearn_budget" / "river.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    raise AssertionError("sklearn_budget/river.py has no __all__")


def _fit(cls, X, y, **kwargs):
    return cls().fit(X, y, **kwargs)


def check_partial_fit(cls, X, y):
    if not hasattr(cls, "partial_fit"):
        return False
    est = cls()
    if "gamma" in est.get_params():
        est.set_params(gamma=1.0)  # 'scale' warns on a first call of 20 rows
    est.partial_fit(X[:20], y[:20], classes=[0, 1]).partial_fit(X[20:], y[20:])
    return est.predict(X).shape == y.shape


def check_predict_proba(cls, X, y):
    est = _fit(cls, X, y)
    if not hasattr(est, "predict_proba"):
        return False
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # The most probable class is the predicted one (documented everywhere).
    assert (est.classes_[proba.argmax(axis=1)] == est.predict(X)).all()
    return True


def check_decision_function(cls, X, y):
    est = _fit(cls, X, y)
    if not hasattr(est, "decision_function"):
        return False
    assert est.decision_function(X).shape == y.shape
    return True


def check_support(cls, X, y):
    est = _fit(cls, X, y)
    if not hasattr(est, "support_"):
        return False
    support = np.asarray(est.support_)
    assert support.dtype.kind == "i" and ((0 <= support) & (support < len(X))).all()
    return True


def check_sparse(cls, X, y):
    try:
        est = _fit(cls, sp.csr_matrix(X), y)
    except (TypeError, ValueError) as exc:
        assert "sparse" in str(exc)
        return False
    assert est.predict(sp.csr_matrix(X)).shape == y.shape
    return True


def check_sample_weight(cls, X, y):
    methods = [m for m in ("fit", "partial_fit") if hasattr(cls, m)]
    accepts = ["sample_weight" in inspect.signature(getattr(cls, m)).parameters for m in methods]
    assert len(set(accepts)) == 1, f"{cls.__name__}: sample_weight in some of {methods} only"
    if accepts[0]:
        _fit(cls, X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))
    return accepts[0]


def check_river(cls, X, y):
    return cls.__name__ in _river_names()


def check_onnx(cls, X, y):
    registered = cls in _onnx._estimators()
    if importlib.util.find_spec("skl2onnx") is not None:
        import skl2onnx

        import sklearn_budget.onnx  # noqa: F401  (registers the converters)

        try:
            alias = skl2onnx.get_model_alias(cls)
        except KeyError:
            alias = None
        assert (alias == f"SklearnBudget{cls.__name__}") == registered
    return registered


CHECKS = {
    "partial_fit": check_partial_fit,
    "predict_proba": check_predict_proba,
    "decision_function": check_decision_function,
    "support_": check_support,
    "sparse X": check_sparse,
    "sample_weight": check_sample_weight,
    "river": check_river,
    "ONNX": check_onnx,
}


@pytest.mark.parametrize("capability", CAPABILITIES)
@pytest.mark.parametrize("name", sklearn_budget.__all__)
def test_each_claim_is_true(name, capability, data):
    cls = getattr(sklearn_budget, name)
    has = claimed(name)[capability]
    assert CHECKS[capability](cls, *data) == has, (
        f"README.rst says {name} {'has' if has else 'has no'} {capability}"
    )


def test_the_note_on_sparse_input_is_true(data):
    # Budgeted SGD's default maintenance keeps dense members; the others sparse ones.
    X, y = data
    assert BudgetedSGDClassifier().maintenance == "merging"
    est = BudgetedSGDClassifier(budget=10).fit(sp.csr_matrix(X), y)
    assert isinstance(est.support_vectors_, np.ndarray)
    for maintenance in ("removal", "projection"):
        est = BudgetedSGDClassifier(budget=10, maintenance=maintenance).fit(sp.csr_matrix(X), y)
        assert sp.issparse(est.support_vectors_)


def test_the_user_guide_includes_the_table():
    text = (ROOT / "doc" / "choosing.rst").read_text(encoding="utf-8")
    assert f".. include:: ../README.rst\n   :start-after: {START}\n   :end-before: {END}\n" in text


def _extras():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


def test_install_page_lists_every_extra():
    text = (ROOT / "doc" / "install.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"^``([\w-]+)``\n    \S", text, flags=re.M))
    assert listed == _extras()


def test_readme_lists_every_experiment():
    from sklearn_budget.reproduce import EXPERIMENTS

    text = README.read_text(encoding="utf-8")
    section = text[text.index("Reproducing the papers\n---") : text.index("Data sets\n---")]
    _, rows = simple_table(section, header=False)
    names = [_plain(row[0]) for row in rows if row[0]]
    assert names == [*EXPERIMENTS, "all"]
