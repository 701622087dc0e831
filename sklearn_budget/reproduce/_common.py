"""Helpers shared by the experiments of :mod:`sklearn_budget.reproduce`.

Parallel runs with progress lines, online passes with checkpoints, summary
statistics and verdicts, markdown cells, figures, and the output writer that
never writes through a symbolic link. This module imports no other module of
the package's reproduction code: every experiment module imports it.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from joblib import Parallel
from sklearn.base import clone


def forgetron_U(budget):
    """The competitor norm for which the Forgetron with this budget has its bound.

    The Projectron paper sets the Projectron's ``U`` from the budget ``B`` of
    the algorithms it is compared with: ``U = sqrt((B + 1) / log(B + 1)) / 4``.
    """
    return 0.25 * np.sqrt((budget + 1) / np.log(budget + 1))


@dataclass
class _Progress:
    """Prints one line per finished run on stderr, with the elapsed time."""

    name: str
    total: int
    stream: object = None
    done: int = 0
    start: float = field(default_factory=time.perf_counter)

    def step(self, what):
        self.done += 1
        if self.stream is not None:
            elapsed = time.perf_counter() - self.start
            print(
                f"[{self.name}] {self.done}/{self.total} runs ({elapsed:.0f} s): {what}",
                file=self.stream,
                flush=True,
            )


def _parallel(keys, tasks, n_jobs, progress, unit, size_name):
    """Run the delayed ``tasks`` with joblib and group the results by setting.

    ``keys[i]`` is ``(algorithm, size, run)`` for ``tasks[i]``; each finished
    task is reported to ``progress``. Returns ``{(algorithm, size): [results
    in run order]}``.
    """
    progress.total = len(tasks)
    runs = {}
    # Results come back in order while the workers keep running.
    out = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    for (alg, size, r), result in zip(keys, out):
        runs.setdefault((alg, size), []).append(result)
        setting = alg if size is None else f"{alg} {size_name}={size}"
        progress.step(f"{setting}, {unit} {r + 1}")
    return runs


def _online_run(estimator, X, y, order, checkpoints):
    """One online pass over ``X[order]``; mistakes and support at checkpoints.

    ``partial_fit`` on consecutive chunks plays the same stream as one call,
    so the curves cost nothing beyond the pass itself.
    """
    est = clone(estimator)
    classes = np.unique(y)
    mistakes, support = [], []
    tic = time.perf_counter()
    start = 0
    for stop in checkpoints:
        rows = order[start:stop]
        est.partial_fit(X[rows], y[rows], classes=classes)
        mistakes.append(est.n_mistakes_)
        support.append(len(est.support_))
        start = stop
    elapsed = time.perf_counter() - tic
    return {
        "mistakes": np.asarray(mistakes),
        "support": np.asarray(support),
        "seconds": elapsed,
    }


def _mean_std(values):
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std()


def _verdict(ours, ours_std, paper, paper_std):
    """A word on how our mean compares with the paper's, given both spreads."""
    spread = np.hypot(ours_std, paper_std)
    diff = ours - paper
    if abs(diff) <= max(2 * spread, 1e-9 + 0.005 * abs(paper)):
        return "agrees"
    return f"{'higher' if diff > 0 else 'lower'} by {abs(diff):.2f}"


def _check_target(path):
    """Refuse to write ``path`` if it is a symbolic link or not a regular file."""
    if path.is_symlink():
        raise OSError(
            f"refusing to write {path}: it is a symbolic link (to {os.readlink(path)}), and "
            "writing through it would overwrite its target. Remove the link, or choose "
            "another output folder."
        )
    if os.path.lexists(path) and not path.is_file():
        raise OSError(f"cannot write {path}: it exists and is not a regular file.")


def _write_output(out, filename, write):
    """Write the output file ``out/filename`` with ``write(binary file)``.

    The folder is made only when there are results to write into it. The
    content goes to a new file (``O_EXCL``, which never follows a link), then
    takes the final name by a rename, which replaces a link rather than
    writing through it: even a link made while the experiment ran cannot
    redirect the output. A link there beforehand is refused, as in
    :func:`check_output`, so that the user learns of it.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / filename
    _check_target(path)
    tmp = out / f".{filename}.{secrets.token_hex(6)}.part"
    # Mode 0o666 less the umask, as for any new file (mkstemp's would be 0o600).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _save_figure(plt, fig, out, filename):
    fig.tight_layout()
    try:
        return _write_output(out, filename, lambda f: fig.savefig(f, format="png", dpi=100))
    finally:
        plt.close(fig)


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _se(values):
    """Mean and standard error of the mean."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return values.mean(), 0.0
    return values.mean(), values.std(ddof=1) / np.sqrt(values.size)


def _errors_of(runs, key):
    """The test errors of the runs of ``key``, as an array."""
    return np.array([r["error"] for r in runs[key]])


def _range_cell(values, fmt=".2f"):
    v = np.asarray(values, dtype=float)
    return f"{v.mean():{fmt}} [{v.min():{fmt}}, {v.max():{fmt}}]"


def _md(text):
    """``text`` as a markdown table cell: a literal ``|`` (as in ``|S|``)
    would end the cell, so it is escaped."""
    return str(text).replace("|", "\\|")


def _claims_table(claims):
    """The paper's claims beside ours: ``(claim, ours, holds)`` triples;
    ``holds`` is None when the measured differences are within the noise."""
    lines = ["| the paper says | we measure | verdict |", "|---|---|---|"]
    for claim, ours, holds in claims:
        word = {True: "agrees", False: "**differs**", None: "inconclusive"}[holds]
        lines.append(f"| {_md(claim)} | {_md(ours)} | {word} |")
    return lines
