# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The random generator of the rules: numpy's bit generator interface.

The rules that draw (the Randomized Budget Perceptron's removals) draw from
the bit generator of a ``RandomState`` on MT19937 as ``randint`` draws
(``randint`` in ``_random.pxd``); the one-row calls save and put back its
state without the cost of ``get_state``.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.string cimport memcpy

import numpy as np


cdef bitgen_t* mt19937_bitgen(rng):
    """The bit generator of ``rng`` if it is a ``RandomState`` on MT19937, else NULL."""
    if type(rng) is not np.random.RandomState:
        return NULL
    bit_generator = rng._bit_generator
    if type(bit_generator) is not np.random.MT19937:
        return NULL
    capsule = bit_generator.capsule
    if not PyCapsule_IsValid(capsule, "BitGenerator"):
        return NULL
    return <bitgen_t*>PyCapsule_GetPointer(capsule, "BitGenerator")


def generator_state(rng):
    """A copy of the state of ``rng``'s bit generator, or None.

    Bytes for a ``RandomState`` on MT19937 (copied without the cost of
    ``get_state``, which builds an array and a tuple), None otherwise. The
    integer draws of the rules change only this state.
    """
    cdef bitgen_t* bg = mt19937_bitgen(rng)
    if bg == NULL:
        return None
    with rng._bit_generator.lock:
        return (<char*>bg.state)[:sizeof(mt19937_state)]


def set_generator_state(rng, bytes saved):
    """Put back a state that :func:`generator_state` copied from ``rng``."""
    cdef bitgen_t* bg = mt19937_bitgen(rng)
    if bg == NULL or len(saved) != sizeof(mt19937_state):
        raise ValueError("Not a state of this generator.")
    with rng._bit_generator.lock:
        memcpy(bg.state, <const char*>saved, sizeof(mt19937_state))
