# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Update rules of the Perceptron family: the kernel Perceptron and the
Stoptron, Passive-Aggressive, the Forgetron and the Randomized Budget
Perceptron.

Each rule changes the hypothesis only through the operations of the engine
(``_engine.pyx``).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport NAN, sqrt
from libc.stdint cimport int64_t

import numpy as np

from ._engine cimport Engine, Rule
from ._random cimport bitgen_t, mt19937_bitgen, randint

# Smallest positive normal float (the Forgetron's weights are set to zero below it).
cdef double TINY = 2.2250738585072014e-308


# ----------------------------------------------------------------------
# Kernel Perceptron, Stoptron, Passive-Aggressive
# ----------------------------------------------------------------------
cdef class PerceptronRule(Rule):
    """Add ``w y_t k(x_t, .)`` on a mistake; stop for good at ``budget`` (0: never)."""

    cdef Py_ssize_t budget

    def __init__(self, Py_ssize_t budget=0):
        self.budget = budget

    cdef double threshold(self, Engine e) noexcept nogil:
        if self.budget > 0 and e.n >= self.budget:
            return NAN
        return 0.0

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        e.direction(y)
        e.add_member(&e.v[0], weight)


cdef class PassiveAggressiveRule(Rule):
    """PA-I (``hinge``) or PA-II (``squared_hinge``) step on a positive hinge loss."""

    cdef double C
    cdef bint squared

    def __init__(self, double C, bint squared):
        self.C = C
        self.squared = squared

    cdef double threshold(self, Engine e) noexcept nogil:
        return 1.0

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        cdef double loss = 1.0 - margin, sq = e.dsq * kxx, tau
        if loss <= 0.0 or sq <= 0.0:
            return
        if self.squared:
            tau = loss / (sq + 0.5 / self.C)
        else:
            tau = min(self.C, loss / sq)
        e.direction(y)
        e.add_member(&e.v[0], weight * tau)



# ----------------------------------------------------------------------
# Forgetron
# ----------------------------------------------------------------------
cdef class ForgetronRule(Rule):
    """Add, shrink, remove the oldest (Dekel et al. Fig. 1; Sutskever's constant shrink).

    ``sigma``: weight of each member; ``unit``: its unit direction;
    ``scalars = [Q, M]``.
    """

    cdef Py_ssize_t budget
    cdef bint self_tuned
    cdef double shrink, rate
    cdef double[::1] sigma, scalars
    cdef double[:, ::1] unit

    def __init__(self, Py_ssize_t budget, bint self_tuned, double shrink, double rate):
        self.budget = budget
        self.self_tuned = self_tuned
        self.shrink = shrink
        self.rate = rate

    def bind(self, dict state):
        self.sigma = state["sigma"]
        self.unit = state["unit"]
        self.scalars = state["forgetron"]

    cdef double threshold(self, Engine e) noexcept nogil:
        return 0.0

    cdef void do_shrink(self, Engine e, double phi) noexcept nogil:
        cdef Py_ssize_t i
        e.scale(phi)
        for i in range(e.n):
            self.sigma[i] *= phi
            if 0.0 < self.sigma[i] < TINY:
                # Below any score's resolution; exact zero keeps subnormal
                # numbers, which are slow, out of the arithmetic.
                self.sigma[i] = 0.0
                e.zero_member(i)

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        cdef Py_ssize_t c, r, pos, last
        cdef double mu, s, vv, a, b, cc, phi, fr
        self.scalars[1] += 1.0                                   # M
        e.direction(y)
        # Its Gram column written only if it stays where it is (add_member).
        pos = e.add_member(&e.v[0], weight, False)               # step (1): sigma = 1
        self.sigma[pos] = 1.0
        for c in range(e.R):
            self.unit[pos, c] = e.v[c]
        if not self.self_tuned and self.shrink < 1.0:
            self.do_shrink(e, self.shrink)                       # Sutskever
        while e.n > self.budget:
            r = e.oldest()
            if self.self_tuned:                                  # step (2)
                # mu = v_r . f'(x_r), f' including x_t, from the Gram matrix:
                # its row r (symmetric by construction), read contiguously (its
                # column, a page a value at budgets of thousands, took about a
                # sixth of a one-pass fit of a9a at a budget of 4,000).
                mu = 0.0
                vv = 0.0
                for c in range(e.R):
                    fr = e.member_score(r, c)
                    mu += self.unit[r, c] * fr
                    vv += self.unit[r, c] * self.unit[r, c]
                s = self.sigma[r]
                # Psi(phi) = a phi^2 + b phi, constraint a phi^2 + b phi + c <= 0
                # with c < 0, so phi = 0 is always feasible.
                a = vv * s * s - 2.0 * s * mu
                b = 2.0 * s
                cc = self.scalars[0] - self.rate * self.scalars[1]
                if a + b + cc <= 0.0:
                    phi = 1.0
                else:
                    # The root in (0, 1], in the form stable for any sign of a.
                    phi = -2.0 * cc / (b + sqrt(max(b * b - 4.0 * a * cc, 0.0)))
                self.scalars[0] += a * phi * phi + b * phi       # Q
                if phi < 1.0:
                    self.do_shrink(e, phi)
            last = e.n - 1                                       # step (3)
            self.sigma[r] = self.sigma[last]
            for c in range(e.R):
                self.unit[r, c] = self.unit[last, c]
            e.remove_member(r)


# ----------------------------------------------------------------------
# Randomized Budget Perceptron
# ----------------------------------------------------------------------
cdef int64_t _select(int64_t* a, Py_ssize_t n, Py_ssize_t rank) noexcept nogil:
    """The ``rank``-th smallest of ``n`` distinct values (reorders ``a``)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, l
    cdef int64_t pivot, tmp
    while lo < hi:
        pivot = a[(lo + hi) // 2]
        i = lo
        l = hi
        while i <= l:
            while a[i] < pivot:
                i += 1
            while a[l] > pivot:
                l -= 1
            if i <= l:
                tmp = a[i]
                a[i] = a[l]
                a[l] = tmp
                i += 1
                l -= 1
        if rank <= l:
            hi = l
        elif rank >= i:
            lo = i
        else:
            break
    return a[rank]


cdef class RandomizedBudgetRule(Rule):
    """On a mistake with a full budget, remove the ``r``-th oldest, ``r`` uniform.

    ``r = rng.randint(budget)``, drawn one of two ways, the same numbers:

    - the draws of a block are made in advance by the Python side
      (``set_draws``), which then rewinds the generator to advance it by
      the ``used`` draws only;
    - or the rule draws each one when a removal needs it, from the bit
      generator of a ``RandomState`` (``set_generator``), as ``randint``
      does: the one-row calls, which then make no draw in advance.
    """

    cdef Py_ssize_t budget
    cdef int64_t[::1] scratch
    cdef const int64_t[::1] draws
    cdef public Py_ssize_t used
    cdef object generator   # keeps the bit generator alive while drawn from
    cdef bitgen_t* bitgen

    def __init__(self, Py_ssize_t budget):
        self.budget = budget

    def bind(self, dict state):
        self.scratch = np.zeros(state["alpha"].shape[0] + 1, dtype=np.int64)

    def set_draws(self, draws):
        self.draws = draws
        self.used = 0
        self.generator = None
        self.bitgen = NULL

    def set_generator(self, rng):
        """Draw from ``rng`` (a ``RandomState`` on MT19937) when a removal needs it."""
        self.bitgen = mt19937_bitgen(rng)
        if self.bitgen == NULL:
            raise TypeError("set_generator needs a RandomState of the MT19937 generator.")
        self.generator = rng._bit_generator
        self.used = 0

    cdef double threshold(self, Engine e) noexcept nogil:
        return 0.0

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        cdef Py_ssize_t i, r, n, pos
        cdef int64_t b
        e.direction(y)
        # n never exceeds the budget, so a removal happens at n = budget,
        # at most once a round: a block of b rows needs at most b draws.
        while e.n >= self.budget:
            n = e.n
            if self.bitgen != NULL:
                r = <Py_ssize_t>randint(self.bitgen, self.budget)
            else:
                r = self.draws[self.used]
            self.used += 1
            # The r-th member in insertion order (birth rounds are distinct).
            for i in range(n):
                self.scratch[i] = e.born[i]
            b = _select(&self.scratch[0], n, r)
            pos = 0
            while e.born[pos] != b:
                pos += 1
            e.remove_member(pos)
        e.add_member(&e.v[0], weight)

