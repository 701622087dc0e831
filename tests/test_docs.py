"""The repository's documentation points only at the repository."""

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The team's private notes (the spec of the algorithms, ALGORITHMS.md, and
# the rest of the folder ../shared beside the checkout) are not part of the
# repository: a reference to them is a dead end for every reader. The
# decisions they record are stated in doc/decisions.rst. ``../shared/data``
# is allowed: it is the documented default data home of the test suite and
# the benchmarks (tests/conftest.py, benchmarks/_data.py), not a reference.
FORBIDDEN = re.compile(rb"ALGORITHMS\.md|\.\./shared(?!/data\b)")

# What is not the repository's own files (git's data, environments, caches,
# build products), when git cannot list them.
_NOT_SOURCES = {
    ".git", ".venv", ".ruff_cache", ".pytest_cache", "__pycache__", "build", "dist", "_build",
    "auto_examples",
}  # fmt: skip


def _repository_files():
    """The files of the repository: tracked, or new and not ignored by git."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout (an unpacked source distribution): walk it.
        files = []
        for folder, subfolders, names in os.walk(ROOT):
            subfolders[:] = [
                name
                for name in subfolders
                if name not in _NOT_SOURCES and not name.endswith(".egg-info")
            ]
            files += [Path(folder, name).relative_to(ROOT) for name in names if name != ".git"]
        return files
    return [Path(name) for name in listed.decode().split("\0") if name]


def test_no_reference_to_the_private_notes():
    here = Path(__file__).resolve()
    found = []
    for relative in _repository_files():
        path = ROOT / relative
        if relative.parts[:2] == ("doc", "_build") or path.resolve() == here:
            continue
        if not path.is_file():  # deleted from the work tree, not yet from the index
            continue
        for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
            if FORBIDDEN.search(line):
                found.append(f"{relative}:{number}: {line.decode(errors='replace').strip()}")
    assert not found, (
        "These lines point outside the repository (state the decision in "
        "doc/decisions.rst, or cite the paper's equation, instead):\n" + "\n".join(found)
    )


def test_the_api_reference_has_every_estimator():
    # The one entry a new estimator adds to the documentation (the river
    # classifiers' page is made from ``sklearn_budget.river.__all__``).
    import sklearn_budget

    text = (ROOT / "doc" / "api" / "index.rst").read_text(encoding="utf-8")
    section = text[: text.index(":mod:`sklearn_budget.parallel`")]
    entries = set(re.findall(r"^   (\w+)$", section, flags=re.M))
    assert set(sklearn_budget.__all__) <= entries
