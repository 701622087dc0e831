"""Probabilities of the online estimators from their progressive margins.

Every round's margin is computed before the round's update, so it is out of
sample. The margins are summarised in fixed bins (memory independent of the
stream's length, additive over the calls of a stream) and one scale of the
scores is fitted to them by maximum likelihood.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.special import expit, log_expit, log_softmax

# Progressive margins are kept in fixed bins, as weighted counts and sums
# per class: memory independent of the stream's length, and additive, so the
# same for any split of a stream into calls. The bins are uniform in
# log|margin| over [1e-12, 1e12] for each sign (wider margins share the end
# bins): 5% wide whatever the scale of the scores, which differs by orders
# of magnitude between algorithms; each bin is represented by its mean.
_CAL_HALF = 1024
_CAL_BINS = 2 * _CAL_HALF
_CAL_LOG_RANGE = (np.log(1e-12), np.log(1e12))
# Smallest probability scale, relative to the largest margin.
_MIN_SCALE = 1e-6


def _fit_temperature(counts, sums, n_c):
    """Scale ``a >= 0`` of ``P(correct) = sigmoid(a * margin - log(C - 1))`` by maximum likelihood.

    The model is the softmax of ``a f`` with every other class at the
    runner-up's score (``C`` classes; a sigmoid for two). ``counts[c, b]``
    and ``sums[c, b]``: weight and weighted margin sum of the rounds of
    class ``c`` in bin ``b``; ``n_c[c]``: the rounds of class ``c``. Platt's
    smoothed targets ``(N_c + 1) / (N_c + 2)`` keep ``a`` finite when every
    margin is positive.
    """
    offset = np.log(max(counts.shape[0] - 1, 1))
    target = np.broadcast_to(((n_c + 1.0) / (n_c + 2.0))[:, None], counts.shape)
    used = counts > 0
    n, t = counts[used], target[used]
    m = sums[used] / n
    if n.size == 0 or not np.any(m):
        return _MIN_SCALE

    def slope(a):  # derivative of the concave log-likelihood, and its derivative
        p = expit(a * m - offset)
        return float(np.sum(n * (t - p) * m)), float(np.sum(n * p * (1.0 - p) * m * m))

    if slope(0.0)[0] <= 0.0:
        # Margins that carry no evidence: near-uniform probabilities, still
        # ordered as the scores (so that they agree with predict).
        return _MIN_SCALE / np.max(np.abs(m))
    lo, hi = 0.0, 1.0 / np.max(np.abs(m))
    while slope(hi)[0] > 0.0 and hi < 1e300:
        lo, hi = hi, 2.0 * hi
    # Newton's steps, kept inside the bracket [lo, hi] of the root of the slope.
    a = 0.5 * (lo + hi)
    for _ in range(200):
        g, h = slope(a)
        if g > 0.0:
            lo = a
        else:
            hi = a
        step = a + g / h if h > 0.0 else np.nan
        a_new = step if lo < step < hi else 0.5 * (lo + hi)
        if abs(a_new - a) <= 1e-12 * a_new or lo == hi:
            return a_new
        a = a_new
    return a


def record_margins(state, margins, cls, w, rounds):
    """Add the progressive margins of rounds ``rounds`` to the bins of ``state``.

    ``cls``: the class index of each round. Round ``t`` weighs ``t`` (times
    its sample weight) in the fit of the scale: later hypotheses are nearer
    the final one, whose scores the probabilities scale. The per-class
    totals of Platt's targets count rounds by their sample weight alone.
    """
    lo, hi = _CAL_LOG_RANGE
    # Margins below 1e-300 (zero included) fall in the first bin, as any
    # below 1e-12 does: flooring them avoids log(0). Few numpy calls, so that
    # a call of one row is cheap.
    size = np.maximum(np.abs(margins), 1e-300)
    u = (np.log(size) - lo) * (_CAL_HALF / (hi - lo))
    u = np.minimum(np.maximum(u, 0.0), _CAL_HALF - 1).astype(np.intp)
    bins = np.where(margins >= 0, _CAL_HALF + u, _CAL_HALF - 1 - u)
    flat = cls * _CAL_BINS + bins
    wt = w * rounds
    # Only the bins the rounds fall in are added to (a call of one row costs
    # as little as one of a block); each bin's total is summed in the order
    # of the rounds, as a bincount over all the bins sums it.
    if flat.size == 1:
        used, where = flat, np.zeros(1, dtype=np.intp)
    else:
        used, where = np.unique(flat, return_inverse=True)
    counts, sums = state["cal_counts"].reshape(-1), state["cal_sums"].reshape(-1)
    counts[used] += np.bincount(where, wt, used.size)
    sums[used] += np.bincount(where, wt * margins, used.size)
    state["cal_n"] += np.bincount(cls, w, len(state["cal_n"]))


def new_bins(n_classes):
    """The empty bins of the progressive margins of ``n_classes`` classes."""
    return {
        "cal_counts": np.zeros((n_classes, _CAL_BINS)),
        "cal_sums": np.zeros((n_classes, _CAL_BINS)),
        "cal_n": np.zeros(n_classes),
    }


def fit_scale(state):
    """The probability scale fitted to the bins of ``state``."""
    return _fit_temperature(state["cal_counts"], state["cal_sums"], state["cal_n"])


def log_probabilities(z, binary):
    """Log-probabilities of scaled scores ``z``: ``log sigmoid`` of the single
    score of two classes (shape (n,)), ``log softmax`` otherwise (shape (n, C))."""
    if binary:
        return np.column_stack([log_expit(-z), log_expit(z)])
    return log_softmax(z, axis=1)
