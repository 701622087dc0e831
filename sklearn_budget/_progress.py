"""Progress lines of ``fit`` and ``partial_fit`` with ``verbose > 0``.

Lines are printed on stdout between blocks of rows of the engine's Python
loop, never from the compiled loop, so they cost nothing per round.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from time import perf_counter

import numpy as np


def _support_size(est):
    """Members of the current hypothesis, as ``support_`` counts them.

    A row that joined several times (later epochs of ``fit``) counts once,
    and every member that is no row of the stream (index -1: the merged
    members of budget maintenance) counts for itself, so that without
    ``average`` this is ``len(support_)`` once published.
    """
    idx = est._state["idx"][: est._n]
    rows = idx[idx >= 0]
    return int(np.unique(rows).size + (idx.size - rows.size))


def _counts(est):
    """Rounds and mistakes of the stream so far.

    An estimator whose state is not the online engine's gives them with
    ``_progress_counts()``.
    """
    if hasattr(est, "_progress_counts"):
        return est._progress_counts()
    counters = est._state["counters"]
    return int(counters[1]), int(counters[2])


def _size_text(est):
    """The support size part of a line; empty for a model without support vectors."""
    if "idx" not in est._state:
        return ""
    return f"support size: {_support_size(est)}, "


def _rate(rounds, seconds):
    return rounds / seconds if seconds > 0 else float("inf")


class _Progress:
    """Prints the counts of rounds and mistakes played since ``origin``.

    ``origin`` is the position of the stream's counters from which the lines
    count: the start of an epoch for ``fit``, zero (the whole stream) for
    ``partial_fit``. Called between blocks, it prints a line each time the
    rounds counted pass a multiple of ``interval``; the rounds per second of
    a line are those since the previous line of the call (or its start).
    ``last``: rounds after which :meth:`end` prints the closing line instead.
    """

    def __init__(self, est, interval, origin=(0, 0), clock=None, last=None):
        self.est = est
        self.interval = interval
        self.t0, self.m0 = origin
        self.clock = clock  # start of fit, for the elapsed time
        self.last = last
        self.start = self.mark_time = perf_counter()
        self.done = self.mark_rounds = self.rounds()[0]

    def rounds(self):
        rounds, mistakes = _counts(self.est)
        return rounds - self.t0, mistakes - self.m0

    def __call__(self):
        rounds, mistakes = self.rounds()
        if rounds // self.interval > self.done // self.interval and rounds != self.last:
            now = perf_counter()
            self.line(rounds, mistakes, _rate(rounds - self.mark_rounds, now - self.mark_time))
            self.mark_rounds, self.mark_time = rounds, now
        self.done = rounds

    def end(self):
        """The line that closes an epoch: its rate is over the whole epoch."""
        rounds, mistakes = self.rounds()
        self.line(rounds, mistakes, _rate(rounds, perf_counter() - self.start))
        return rounds, mistakes

    def line(self, rounds, mistakes, speed):
        text = (
            f"rounds: {rounds}, mistakes: {mistakes}, "
            f"mistake rate: {mistakes / max(rounds, 1):.4f}, "
            f"{_size_text(self.est)}rounds per second: {speed:.0f}"
        )
        if self.clock is not None:
            text += f", elapsed: {perf_counter() - self.clock:.2f} seconds"
        print(text, flush=True)
