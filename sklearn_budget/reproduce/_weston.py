"""The experiments of Weston, Bordes and Bottou (2005), "Online (and offline)
on an even tighter budget".

- ``weston-usps``, ``weston-usps-noise``, ``weston-waveform``,
  ``weston-banana`` (Figs. 9-12): test error after one online epoch of the
  Budget and Tighter Budget Perceptrons against the cache size, with the
  Perceptron and the SVM as references.
- ``weston-toy-online`` (Figs. 6 and 7): one online epoch with a linear
  kernel on a separable 2-D problem with a small margin and on a noisy one.
- ``weston-toy-batch`` (Fig. 8): a nonlinear 2-D problem, Gaussian kernel,
  epochs until convergence, against the SVM and two kinds of Kernel
  Matching Pursuit.
- ``weston-usps-epochs`` (Fig. 9, its multi-epoch curve): the Tighter
  Budget Perceptron with up to 10 epochs on USPS, digit 0 against the rest.
- ``weston-error-sets`` (Fig. 13): the evaluation sets of the Tighter Budget
  Perceptron's removal step (Sec. 3.2) on USPS, digit 0 against the rest.

One module per experiment (``_weston_cache``, ``_weston_toy_online``,
``_weston_toy_batch``, ``_weston_epochs``, ``_weston_error_sets``); this
one runs the experiment asked for.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from ._weston_cache import WESTON, _run_cache_curve
from ._weston_epochs import _run_usps_epochs
from ._weston_error_sets import _run_error_sets
from ._weston_toy_batch import _run_toy_batch
from ._weston_toy_online import _run_toy_online

FIGURES = {
    **{name: (None,) for name in WESTON},
    "weston-toy-online": ("separable", "noisy"),
    "weston-toy-batch": (None,),
    "weston-usps-epochs": (None,),
    "weston-error-sets": (None,),
}


def output_files(name):
    """The names of the PNG figures experiment ``name`` writes."""
    return [name + ("" if part is None else f"_{part}") + ".png" for part in FIGURES[name]]


_RUNNERS = {
    **{name: _run_cache_curve for name in WESTON},
    "weston-toy-online": lambda name, quick, out, n_jobs, seed, home, prog: _run_toy_online(
        quick, out, n_jobs, seed, prog
    ),
    "weston-toy-batch": lambda name, quick, out, n_jobs, seed, home, prog: _run_toy_batch(
        quick, out, n_jobs, seed, prog
    ),
    "weston-usps-epochs": lambda name, *args: _run_usps_epochs(*args),
    "weston-error-sets": lambda name, *args: _run_error_sets(*args),
}


def run(name, quick, out, n_jobs, seed, data_home, progress):
    """Run one experiment; return the table lines, figures, runs and settings."""
    return _RUNNERS[name](name, quick, out, n_jobs, seed, data_home, progress)
