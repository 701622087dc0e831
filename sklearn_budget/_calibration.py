"""Probabilities of the online estimators from their progressive margins.

Every round's margin is computed before the round's update, so it is out of
sample. The margins are summarised in fixed bins (memory independent of the
stream's length, additive over the calls of a stream) and one scale of the
scores is fitted to them by maximum likelihood.

:class:`_CalibrationMixin` records the margins of a kernel estimator's
stream: those of the online hypotheses, or with averaging those of the
average of the hypotheses so far, on the rounds of a schedule: every fourth
round of the first 8192, then a stride doubled at each doubling of the
round count.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._kernels import _nonfinite_scores
from ._margins import (
    MarginBins,
    average_margins,
    fit_temperature,
    margin_weights,
    recorded_rows,
)
from ._margins import log_probabilities as _log_probabilities
from ._rounds import _rows
from ._transaction import WeakCache

# The last scale fitted for each estimator: the next fit starts from it (a
# one-row update moves it little). Kept beside the estimator, not in it, so
# that reading ``proba_scale_`` does not change the estimator.
SCALE_HINTS = WeakCache()

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
# Averaged models record the margins of the rounds of a schedule that
# depends on the round index t alone (the same rounds for any split of the
# stream into calls), each weighted by the stride it stands for: each costs
# a kernel row against the pool. Stride 4 up to round T0 = 8192, then
# doubled at each doubling of t: 1024 records per octave, so that their
# cost grows with log t, not t, while the last octaves, which dominate the
# fit of the scale (round t weighs t: an octave three times all the rounds
# before it), keep as many records each. The schedule is the engine's,
# one compiled definition (_engine.pxd's cal_weight; _margins.margin_weights
# from Python). Measured (offline study of the averaging): every 4th round
# moves the test log-loss by at most 0.02 from every round, on USPS-10,
# a9a, Banana and Waveform; the records of T0 = 8192 then move it by at
# most 0.002 from every 4th round (a9a; 2-D stream of 200,000 rounds:
# 0.0001), where T0 = 4096 moved it by up to 0.02 on USPS-10 (7,291 rows).

# The rounds of no member that left (a segment whose pool did not change).
_NO_ROUNDS = np.zeros(0, dtype=np.int64)
_NO_ROUNDS.flags.writeable = False

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
    return _log_probabilities(z.reshape(-1, 1) if binary else z)


class _CalibrationMixin:
    """The bins of the progressive margins of a kernel estimator's stream."""

    @staticmethod
    def _margin_strides(rounds):
        """Averaged models: the weight of the margin of each round of
        ``rounds`` (the stride it stands for; 0 where it is not recorded)."""
        return margin_weights(np.ascontiguousarray(rounds, dtype=np.int64))

    def _record_margins(self, margins, cls, w, rounds):
        """Add a block's progressive margins to the bins of the probabilities.

        The margins of the online hypotheses, or with averaging those of the
        averaged hypothesis of their rounds (:meth:`_segment_margins`).
        """
        record_margins(self._state, margins, cls, w, rounds)

    def _segment_margins(self, engine, Xb, yb, start, stop, retired, pool_rows=None):
        """Margins of the rounds of rows ``start:stop`` of the block that are
        recorded (:meth:`_margin_strides`) under the average
        of the hypotheses up to each round, before its update.

        The current members' part comes from the engine
        (``Engine.live_averages``); the pool's is that of the pool at the
        segment's start followed by the members that left during the segment
        before the round (``retired``: ``engine.retired()``, with for a sparse
        stream the pool's rows followed by theirs), as the pool holds them
        when the rounds are played one at a time. ``pool_rows``: the
        ``_rounds._PoolRows`` of a sparse call, whose index gives the rbf
        values against its rows (the same bits), or None. Returns the rows
        (within the block) and their margins.
        """
        first = self._t - (stop - start) + 1
        rows = recorded_rows(first, stop - start)
        if rows.size == 0:
            # Most segments of a long stream (the stride of the records grows
            # with t): no other work.
            return rows, np.zeros(0)
        state = self._state
        n0 = int(state["pool_n"][0])
        pool_coef = np.ascontiguousarray(state["pool_coef"][:n0], dtype=np.float64)
        if retired is None:
            ret_coef, ret_t = pool_coef[:0], _NO_ROUNDS
        else:
            _, ret_coef, rX, _, ret_t = retired[:5]
        args = (
            rows,
            first,
            engine.live_averages(start, stop),
            np.ascontiguousarray(yb[start:stop], dtype=np.int64),
            pool_coef,
            np.ascontiguousarray(ret_coef, dtype=np.float64),
            ret_t,
        )
        n_members, d = n0 + ret_t.size, Xb.shape[1]
        code = self._kernel_code
        if (
            self._dense
            and code is not None
            and d
            and n_members
            and self._by_differences(rows.size, n_members, d)
        ):
            # Where _kernel_matrix computes the values by differences: the
            # same values, computed in the compiled call, without
            # stacking the members or gathering the rows (most of the time
            # of a segment at a small budget).
            kernel = self._kernel
            margins = average_margins(
                *args,
                X=Xb[start:stop],
                pool_X=state["pool_X"][:n0],
                ret_X=np.zeros((0, d)) if retired is None else rX,
                kernel_code=code,
                gamma=float(kernel.gamma),
                degree=float(kernel.degree),
                coef0=float(kernel.coef0),
            )
        else:
            members = self._pool_rows()
            if retired is not None:
                members = self._stack([members, rX]) if self._dense else retired[5]
            # The kernel values of _kernel_matrix, then the scores and margins
            # of the compiled one-row path (the pool summed in its order).
            X = _rows(Xb, start + rows)
            with np.errstate(all="ignore"):  # overflow: non-finite scores, reported
                K = None if pool_rows is None else pool_rows.rbf(self._kernel, X, members)
                if K is None:
                    K = self._kernel_matrix(X, members)
            margins = average_margins(*args, K=np.ascontiguousarray(K, dtype=np.float64))
        if margins is None:
            raise _nonfinite_scores(_rows(Xb, start + rows))
        return start + rows, margins

    def _model_norm(self):
        """RKHS norm of the fitted hypothesis (all classes), or None where
        the recorded margins are not rescaled with it (see :meth:`_rescale_margins`)."""
        if not self._epochs_rescale or self._conversion != "last" or self._t == 0:
            return None
        fitted = self._publish()
        sv, coef = fitted["support_vectors_"], fitted["dual_coef_"]
        if coef.shape[1] == 0:
            return 0.0
        gram = self._kernel_matrix(sv, sv)
        return float(np.sqrt(max(np.einsum("ci,ij,cj->", coef, gram, coef), 0.0)))

    def _rescale_margins(self, before, after):
        """Bring the recorded margins to the model after rounds that were not
        recorded (the later epochs of ``fit``, whose rows were seen before).

        Only for the rules whose later epochs rescale the last hypothesis
        (``_epochs_rescale``: budgeted SGD's ``1 / (lambda t)``): the margins
        are multiplied by the ratio of the model's norms, as if each had been
        taken on the new model. Elsewhere the norm also moves without the
        confidence (measured, ``doc/probabilities.rst``: the Perceptrons'
        last hypothesis on overlapping classes, every average), and the
        first epoch's margins are kept as they are.
        """
        if before is None or after is None or not before > 0 or not after > 0:
            return
        self._before_change("cal_")
        rescale_bins(self._state, after / before)

    def _set_aside_bins(self, warm):
        """The bins of the earlier calls of a warm-started ``fit``, set aside.

        The later epochs rescale the margins recorded (budgeted SGD, see
        :meth:`_rescale_margins`): those of this fit only. The bins of the
        earlier calls are replaced by empty ones (new arrays: the undo record
        keeps the old ones) and added back by :meth:`_add_back_bins`. None
        where nothing is rescaled.
        """
        if not (warm and self.max_iter > 1 and self._epochs_rescale and self._conversion == "last"):
            return None
        earlier = {k: self._state[k] for k in ("cal_counts", "cal_sums")}
        for k, a in earlier.items():
            self._state[k] = np.zeros_like(a)
        return earlier

    def _add_back_bins(self, earlier):
        """Add the bins set aside by :meth:`_set_aside_bins` (None: none) back."""
        if earlier is not None:
            for k, a in earlier.items():
                self._state[k] = self._state[k] + a
