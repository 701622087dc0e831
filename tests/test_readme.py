"""The README's Python snippets run as written.

Each ``.. code-block:: python`` block of README.rst runs on its own, in a
fresh namespace and an empty working folder, as a reader would paste it.
"""

import importlib.util
import re
import textwrap
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.rst"


def python_blocks(text):
    """The ``.. code-block:: python`` blocks of reStructuredText ``text``:
    ``(line number of the directive, dedented code)``."""
    blocks = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not re.match(r"\s*\.\. code-block:: python\s*$", line):
            continue
        indent = len(line) - len(line.lstrip())
        body = []
        for next_line in lines[i + 1 :]:
            if next_line.strip() and len(next_line) - len(next_line.lstrip()) <= indent:
                break
            body.append(next_line)
        # Options of the directive (":caption: ...") come before a blank line.
        while body and body[0].strip().startswith(":"):
            body.pop(0)
        blocks.append((i + 1, textwrap.dedent("\n".join(body)).strip("\n") + "\n"))
    return blocks


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def test_blocks_are_found():
    text = """Intro

.. code-block:: python

    a = 1

    b = a + 1

Text again.

    .. code-block:: python
       :caption: nested

       c = 3
"""
    assert python_blocks(text) == [(3, "a = 1\n\nb = a + 1\n"), (11, "c = 3\n")]
    assert BLOCKS, "README.rst has no python code block"


def _missing_optional_module(code):
    """The first top-level module the code imports that is not installed."""
    for match in re.finditer(r"^\s*(?:from|import)\s+([\w.]+)", code, flags=re.M):
        name = match.group(1).split(".")[0]
        if importlib.util.find_spec(name) is None:
            return name
    return None


@pytest.mark.parametrize("line, code", BLOCKS, ids=[f"line {line}" for line, _ in BLOCKS])
def test_readme_snippet_runs(line, code, tmp_path, monkeypatch):
    missing = _missing_optional_module(code)
    if missing is not None:
        pytest.skip(f"the snippet needs {missing}, which is not installed")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"README.rst, block at line {line}", "exec"), {"__name__": "__main__"})
