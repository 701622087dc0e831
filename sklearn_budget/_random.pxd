# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The random generator of the rules: numpy's bit generator interface.

The C interface of numpy's bit generators (numpy/random/bitgen.h, the
documented way to draw from them in compiled code), declared here so that
the build needs no numpy headers.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.stdint cimport uint32_t, uint64_t

ctypedef struct bitgen_t:
    void* state
    uint64_t (*next_uint64)(void* st) noexcept nogil
    uint32_t (*next_uint32)(void* st) noexcept nogil
    double (*next_double)(void* st) noexcept nogil
    uint64_t (*next_raw)(void* st) noexcept nogil

# The state of numpy's MT19937 (numpy/random/src/mt19937/mt19937.h).
ctypedef struct mt19937_state:
    uint32_t key[624]
    int pos


cdef bitgen_t* mt19937_bitgen(rng)


cdef inline uint64_t randint(bitgen_t* bg, Py_ssize_t high) noexcept nogil:
    """``RandomState.randint(high)``: masked rejection on 32-bit draws, as numpy
    draws a range below 2**32 (``random_bounded_uint64_fill``, masked)."""
    cdef uint64_t rng = <uint64_t>(high - 1), mask = rng
    cdef uint32_t val
    if rng == 0:
        return 0
    if rng == 0xFFFFFFFFUL:
        return bg.next_uint32(bg.state)
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    val = bg.next_uint32(bg.state) & <uint32_t>mask
    while val > rng:
        val = bg.next_uint32(bg.state) & <uint32_t>mask
    return val
