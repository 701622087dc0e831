# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The compiled rule of the toy FIFO Budget Perceptron (``tests/test_new_rule.py``).

Written as a rule of the package is (``doc/contributing.rst``), but outside
the package: it cimports the engine and the rule base from
``sklearn_budget._engine`` and changes the hypothesis only through the
engine's operations.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.stdint cimport int64_t

from sklearn_budget._engine cimport Engine, Rule


cdef class FIFORule(Rule):
    """On a mistake, remove the oldest members while the budget is full, then add the row."""

    cdef Py_ssize_t budget

    def __init__(self, Py_ssize_t budget):
        self.budget = budget

    cdef double threshold(self, Engine e) noexcept nogil:
        return 0.0  # a mistake: margin <= 0

    cdef void update(self, Engine e, int64_t y, double margin, double kxx,
                     double weight) noexcept nogil:
        e.direction(y)
        # Removing first keeps at most ``budget`` members at every moment,
        # which is the capacity the estimator asks for (``_max_members``).
        while e.n >= self.budget:
            e.remove_member(e.oldest())
        e.add_member(&e.v[0], weight)
