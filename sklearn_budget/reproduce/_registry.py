"""The registry of the papers' experiments and the function that runs one.

Each experiment writes a markdown table (ours beside the paper's numbers) and
PNG figures into an output folder. Runs (permutations, splits) are
independent and go to joblib workers; every run replays the exact online
algorithm, so a run's result does not depend on ``n_jobs``.

The output folder is checked before an experiment runs (:func:`check_output`),
and no output file is ever written through a symbolic link: a link at an
output path could otherwise make the experiment overwrite any file the user
can write.

The imports go one way: this module imports the paper modules, which import
only :mod:`._common` (:mod:`._weston` imports its experiments' modules).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import json
import numbers
import os
import tempfile
import time
from collections import namedtuple
from pathlib import Path

import numpy as np

from .. import __version__
from . import _bsgd, _forgetron, _projectron, _weston
from ._common import _check_target, _Progress, _write_output

#: One experiment: what it reproduces, and the module that runs it. The
#: module provides ``run(name, quick, out, n_jobs, seed, data_home,
#: progress)``, which returns the table lines, the figures, the runs and the
#: settings, and ``output_files(name)``, the names of its figures.
Experiment = namedtuple("Experiment", ["title", "module"])

_REGISTRY = {
    "projectron-synthetic": Experiment(
        "Projectron paper, Table 3 (synthetic set), with Figs. 1-3 for it", _projectron
    ),
    "projectron-adult": Experiment(
        "Projectron paper, Table 1 and Figs. 1-3 (Adult / a9a)", _projectron
    ),
    "weston-usps": Experiment("Weston et al., Fig. 9 (USPS, digit 0 vs rest)", _weston),
    "weston-usps-noise": Experiment("Weston et al., Fig. 10 (USPS with 10% label noise)", _weston),
    "weston-waveform": Experiment("Weston et al., Fig. 11 (Waveform)", _weston),
    "weston-banana": Experiment("Weston et al., Fig. 12 (Banana)", _weston),
    "weston-toy-online": Experiment(
        "Weston et al., Figs. 6 and 7 (2-D toy data, linear kernel, one epoch)", _weston
    ),
    "weston-toy-batch": Experiment(
        "Weston et al., Fig. 8 (nonlinear 2-D toy data, epochs to convergence)", _weston
    ),
    "weston-usps-epochs": Experiment(
        "Weston et al., Fig. 9, the curve with up to 10 epochs (USPS, 0 vs rest)", _weston
    ),
    "weston-error-sets": Experiment(
        "Weston et al., Fig. 13 (evaluation sets of the Tighter rule, USPS)", _weston
    ),
    "bsgd-table3": Experiment(
        "Wang, Crammer and Vucetic (2012), Table 3: one pass at budgets 100 and 500", _bsgd
    ),
    "forgetron-fig2": Experiment(
        "Forgetron paper, Fig. 2: online error against the budget (MNIST, Adult)", _forgetron
    ),
}

#: The experiments and what each reproduces, in the order of ``all``.
EXPERIMENTS = {name: experiment.title for name, experiment in _REGISTRY.items()}


def output_files(name):
    """The names of the files experiment ``name`` writes into its output folder."""
    return [f"{name}.md", f"{name}.json", *_REGISTRY[name].module.output_files(name)]


def check_output(out, names):
    """Check, before running them, that experiments can write their results.

    ``out`` must be a writable folder, or a path where one can be made (it
    is not made here: only when there are results to write into it). It may
    be a symbolic link to a folder, as chosen by the user; but none of the
    files the experiments ``names`` write into it (see :func:`output_files`)
    may be a symbolic link, or anything but a regular file.

    Raises
    ------
    OSError
        If ``out`` cannot be written, naming the path and the reason.
    """
    out = Path(out)
    if os.path.lexists(out) and not out.is_dir():
        what = "a broken symbolic link" if out.is_symlink() else "not a folder"
        raise OSError(f"the output folder {out} exists and is {what}.")
    # The folder, or its nearest existing parent, in which it would be made.
    existing = out
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OSError(f"the output folder {out} cannot be made: {existing} is not a folder.")
    try:
        # Permissions alone do not tell (a read-only file system, root): try.
        tempfile.TemporaryFile(dir=existing).close()
    except OSError as exc:
        where = "is not writable" if existing == out else f"cannot be made in {existing}"
        raise OSError(f"the output folder {out} {where}: {exc.strerror or exc}.") from exc
    if existing == out:
        for name in names:
            for filename in output_files(name):
                _check_target(out / filename)


def reproduce(name, *, quick=False, out="sklearn-budget-results", n_jobs=1, random_state=0,
              data_home=None, progress=None):  # fmt: skip
    """Run one experiment; write ``<out>/<name>.md``, its PNG figures, and
    ``<out>/<name>.json`` with the numbers of every run.

    Parameters
    ----------
    name : str
        A key of ``EXPERIMENTS``.
    quick : bool, default=False
        A short run on a subset with fewer permutations, for smoke tests.
        Its numbers are not comparable with the papers'.
    out : str or Path, default="sklearn-budget-results"
        Output folder, created if needed; checked before the experiment runs
        (see :func:`check_output`). Output files are never written through
        symbolic links.
    n_jobs : int, default=1
        joblib workers for the independent runs.
    random_state : int, default=0
        Seeds the data draw, the permutations, the splits and the noise.
    data_home : str or path-like, default=None
        Where the real data sets are, as in ``sklearn_budget.datasets``
        (default: ``$SKLEARN_BUDGET_DATA``, then ``~/scikit_learn_data``).
    progress : file-like, default=None
        Where to report each finished run (the command line passes
        ``sys.stderr``); None reports nothing.

    Returns
    -------
    table : str
        The markdown report, also written to ``<out>/<name>.md``.
    figures : list of Path
        The PNG files written (none when matplotlib is not installed).

    Raises
    ------
    OSError
        If ``out`` cannot be written (before running), or the real data
        cannot be used: missing and not downloadable, or a
        :class:`~sklearn_budget.datasets.DataFileError` for a file that does
        not match its checksum or is malformed.
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"Unknown experiment {name!r}; choose one of {sorted(EXPERIMENTS)}.")
    if not isinstance(random_state, numbers.Integral):
        raise ValueError(f"random_state must be an int, got {random_state!r}.")
    out = Path(out)
    check_output(out, [name])
    prog = _Progress(name, 0, progress)
    tic = time.perf_counter()
    head = [f"# {name}: {EXPERIMENTS[name]}", ""]
    if quick:
        head += ["**Quick run** (subset, fewer runs): not comparable with the paper.", ""]
    lines, figures, runs, settings = _REGISTRY[name].module.run(
        name, quick, out, n_jobs, random_state, data_home, prog
    )
    lines = head + lines
    lines += ["", f"Wall time {time.perf_counter() - tic:.0f} s with n_jobs={n_jobs}."]
    if figures:
        lines += ["", "Figures: " + ", ".join(f"`{p.name}`" for p in figures)]
    else:
        lines += ["", "No figures: matplotlib is not installed (`pip install matplotlib`)."]
    table = "\n".join(lines) + "\n"
    _write_output(out, f"{name}.md", lambda f: f.write(table.encode("utf-8")))
    _write_raw(out, name, quick, random_state, settings, runs)
    return table, figures


def _write_raw(out, name, quick, random_state, settings, runs):
    """Every run's numbers as JSON, for analyses beyond the table."""
    records = [
        {
            "algorithm": alg,
            "size": size,
            "run": r,
            **{key: np.asarray(val).tolist() for key, val in result.items()},
        }
        for (alg, size), results in runs.items()
        for r, result in enumerate(results)
    ]
    raw = {
        "experiment": name,
        "quick": quick,
        "random_state": int(random_state),
        "sklearn_budget_version": __version__,
        "settings": settings,
        "runs": records,
    }
    text = json.dumps(raw, indent=1)
    _write_output(out, f"{name}.json", lambda f: f.write(text.encode("utf-8")))
