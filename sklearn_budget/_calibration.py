"""Probabilities of the online estimators from their progressive margins.

Every round's margin is computed before the round's update, so it is out of
sample. The margins are summarised in fixed bins (memory independent of the
stream's length, additive over the calls of a stream) and one scale of the
scores is fitted to them by maximum likelihood.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import weakref

import numpy as np

from ._margins import MarginBins, fit_temperature
from ._margins import log_probabilities as _log_probabilities

# The last scale fitted for each estimator: the next fit starts from it (a
# one-row update moves it little). Kept beside the estimator, not in it, so
# that reading ``proba_scale_`` does not change the estimator.
SCALE_HINTS = weakref.WeakKeyDictionary()

# Progressive margins are kept in fixed bins, as weighted counts and sums
# per class: memory independent of the stream's length, and additive, so the
# same for any split of a stream into calls. The bins are uniform in
# log|margin| over [1e-12, 1e12] for each sign (wider margins share the end
# bins): 5% wide whatever the scale of the scores, which differs by orders
# of magnitude between algorithms; each bin is represented by its mean.
_CAL_HALF = 1024
_CAL_BINS = 2 * _CAL_HALF
_CAL_LOG_RANGE = (np.log(1e-12), np.log(1e12))
# What the bins take of a round, so that no finite input overflows them:
# sample weights above _CAL_MAX_WEIGHT count as that weight, and margins as
# wide as the end bins' edge (1e12) at most, as they share those bins.
_CAL_MAX_WEIGHT = 1e250
_CAL_MAX_MARGIN = 1e12
# The layout of the bins and their one recorder, in compiled code: the
# blocks of rounds (record_margins) and the compiled one-row path record
# each round with it, one round after the other.
MARGIN_BINS = MarginBins(_CAL_HALF, *_CAL_LOG_RANGE, _CAL_MAX_WEIGHT, _CAL_MAX_MARGIN)
# Smallest probability scale, relative to the largest margin.
_MIN_SCALE = 1e-6


def _fit_temperature(counts, sums, n_c, start=None):
    """Scale ``a >= 0`` of ``P(correct) = sigmoid(a * margin - log(C - 1))`` by maximum likelihood.

    The model is the softmax of ``a f`` with every other class at the
    runner-up's score (``C`` classes; a sigmoid for two). ``counts[c, b]``
    and ``sums[c, b]``: weight and weighted margin sum of the rounds of
    class ``c`` in bin ``b``; ``n_c[c]``: the rounds of class ``c``. Platt's
    smoothed targets ``(N_c + 1) / (N_c + 2)`` keep ``a`` finite when every
    margin is positive. ``start``: a scale near the root (the last one
    fitted on the stream), from which the bracket is found in a step or two
    (the root is the same, up to the solver's tolerance).
    """
    return fit_temperature(
        np.ascontiguousarray(counts, dtype=np.float64),
        np.ascontiguousarray(sums, dtype=np.float64),
        np.ascontiguousarray(n_c, dtype=np.float64),
        np.nan if start is None else float(start),
        _MIN_SCALE,
    )


def record_margins(state, margins, cls, w, rounds):
    """Add the progressive margins of rounds ``rounds`` to the bins of ``state``.

    ``cls``: the class index of each round. Round ``t`` weighs ``t`` (times
    its sample weight) in the fit of the scale: later hypotheses are nearer
    the final one, whose scores the probabilities scale. The per-class
    totals of Platt's targets count rounds by their sample weight alone.
    """
    # Each round is added to its bin in turn (MARGIN_BINS), so that the bins
    # are the same, to the last bit, for any split of the stream into calls.
    MARGIN_BINS.record(
        state["cal_counts"],
        state["cal_sums"],
        state["cal_n"],
        np.ascontiguousarray(margins, dtype=np.float64),
        np.ascontiguousarray(cls, dtype=np.int64),
        np.ascontiguousarray(w, dtype=np.float64),
        np.ascontiguousarray(rounds, dtype=np.float64),
    )


def rescale_bins(state, factor):
    """Multiply the margins of the bins of ``state`` by ``factor > 0``.

    Each bin's mean is scaled and its count and mean move to the bin of the
    new mean (the fit of the scale uses only the counts and the means, so it
    sees exactly the scaled margins).
    """
    if not (np.isfinite(factor) and factor > 0) or factor == 1.0:
        return
    counts, sums = state["cal_counts"], state["cal_sums"]
    used = counts > 0
    cls, old = np.nonzero(used)
    n, s = counts[used], sums[used] * factor
    bins = _bin_of(s / n)
    counts[:] = 0.0
    sums[:] = 0.0
    np.add.at(counts, (cls, bins), n)
    np.add.at(sums, (cls, bins), s)


def _bin_of(margins):
    """The bin of each margin within its class's bins (as :func:`record_margins` bins it)."""
    return MARGIN_BINS.bins_of(np.ascontiguousarray(margins, dtype=np.float64))


def new_bins(n_classes):
    """The empty bins of the progressive margins of ``n_classes`` classes."""
    return {
        "cal_counts": np.zeros((n_classes, _CAL_BINS)),
        "cal_sums": np.zeros((n_classes, _CAL_BINS)),
        "cal_n": np.zeros(n_classes),
    }


def fit_scale(state, start=None):
    """The probability scale fitted to the bins of ``state`` (``start``: see
    :func:`_fit_temperature`)."""
    return _fit_temperature(state["cal_counts"], state["cal_sums"], state["cal_n"], start)


def log_probabilities(z, binary):
    """Log-probabilities of scaled scores ``z``: ``log sigmoid`` of the single
    score of two classes (shape (n,)), ``log softmax`` otherwise (shape (n, C)).

    Computed as the compiled one-row path computes the probabilities of an
    event (``_margins.log_proba``).
    """
    z = np.ascontiguousarray(z, dtype=np.float64)
    return _log_probabilities(z.reshape(z.shape[0], 1 if binary else -1))
