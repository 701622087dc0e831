# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The pool of the bounded average: the members that leave the support set,
compressed within the budget (``_averaging.py`` documents the method;
``doc/online_to_batch.rst`` and ``doc/decisions.rst``, Averaging with
removals, the choice).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport fabs
from libc.stdint cimport int64_t

import numpy as np

# Relative tolerance under which two members' compression losses tie (and
# the one that entered first leaves).
cdef double POOL_TIE = 1e-9


def fold_into_pool(const double[:, ::1] C, const double[:, ::1] coef, const double[::1] kxx,
                   const int64_t[::1] index, double[:, ::1] G, double[:, ::1] K,
                   double[:, ::1] beta, int64_t[::1] born, int64_t[::1] idx, int64_t[::1] src,
                   int64_t[::1] ints, Py_ssize_t budget, double rtol, Py_ssize_t refresh_every,
                   Py_ssize_t start):
    """Add the functions ``coef[j] k(x_j, .)``, in order from row ``start``, to
    the pool expansion ``sum_i beta[i] k(p_i, .)`` of at most ``budget`` members.

    A function in the span of the pool (residual ``delta2 <= rtol k(x_j, x_j)``)
    is projected onto it; otherwise ``x_j`` joins, and if the pool then holds
    ``budget + 1`` members, the member whose removal followed by the projection
    of its function onto the others loses the least RKHS norm,
    ``||beta_q||^2 / G_qq``, leaves and is projected (ties: the oldest).

    ``G`` is the inverse of the pool's Gram matrix ``K``, updated in
    ``O(budget^2)`` per change. ``C[j, c]`` is ``k(x_j, .)`` at column ``c`` of
    the block: the pool's members at the start of the call own the columns
    ``0 .. n0 - 1`` (their ``src``), row ``l`` of the call the column ``n0 + l``.
    ``ints = [n, entries so far, changes since G was last recomputed]``.

    Returns the next row to fold: before ``coef.shape[0]`` when ``G`` is due
    to be recomputed from ``K`` (every ``refresh_every`` changes), which
    bounds the rounding error that the updates accumulate.
    """
    cdef Py_ssize_t m = coef.shape[0], R = coef.shape[1], n0 = C.shape[1] - m
    cdef Py_ssize_t j, i, l, c, q, n, nxt = m
    cdef double delta2, s, inv, low, cut, di, gi, aa, gqq, gn, rq
    cdef bint nonzero
    # The pool never holds more members than the rows of G.
    cdef double[::1] k = np.zeros(G.shape[0] + 1)
    cdef double[::1] d = np.zeros(G.shape[0] + 1)
    cdef double[::1] g = np.zeros(G.shape[0] + 1)
    cdef double[::1] lossv = np.zeros(G.shape[0] + 1)
    cdef double[::1] bq = np.zeros(R)
    with nogil:
        for j in range(start, m):
            nonzero = False
            aa = 0.0
            for c in range(R):
                if coef[j, c] != 0.0:
                    nonzero = True
                aa = aa + coef[j, c] * coef[j, c]
            if not nonzero:
                continue
            n = ints[0]
            for i in range(n):
                k[i] = C[j, src[i]]
                d[i] = 0.0
            # d = G k as a sum of rows (G is symmetric): no reduction chain,
            # so the inner loop vectorises.
            for l in range(n):
                s = k[l]
                for i in range(n):
                    d[i] += G[l, i] * s
            delta2 = kxx[j]
            for i in range(n):
                delta2 = delta2 - k[i] * d[i]
            if delta2 <= rtol * kxx[j]:
                # In the span up to rounding: the projection is the function.
                for i in range(n):
                    for c in range(R):
                        beta[i, c] += d[i] * coef[j, c]
                continue
            inv = 1.0 / delta2
            ints[1] += 1
            if n < budget:
                # Join: the block inverse of the grown Gram matrix (Projectron, Eq. 11).
                for i in range(n):
                    di = d[i] * inv
                    for l in range(n):
                        G[i, l] += di * d[l]
                    G[i, n] = -di
                    G[n, i] = -di
                    K[i, n] = k[i]
                    K[n, i] = k[i]
                G[n, n] = inv
                K[n, n] = kxx[j]
                for c in range(R):
                    beta[n, c] = coef[j, c]
                born[n] = ints[1] - 1
                idx[n] = index[j]
                src[n] = n0 + j
                ints[0] = n + 1
                ints[2] += 1
            else:
                # The pool with x_j would hold budget + 1 members: one leaves.
                # The compression loss of each, ||beta_q||^2 over the squared
                # norm of the residual of its kernel function off the others'
                # span (1 / G_qq), from the grown inverse's diagonal without
                # forming it: G_qq + d_q^2 / delta2, and delta2 for x_j.
                low = aa * delta2
                for i in range(n):
                    s = 0.0
                    for c in range(R):
                        s = s + beta[i, c] * beta[i, c]
                    lossv[i] = s / (G[i, i] + d[i] * inv * d[i])
                    if lossv[i] < low:
                        low = lossv[i]
                cut = low + POOL_TIE * fabs(low)
                q = -1
                for i in range(n):
                    if lossv[i] <= cut and (q < 0 or born[i] < born[q]):
                        q = i
                if q < 0:
                    # x_j itself leaves (the youngest, it loses ties): joining
                    # and removing it is projecting its function, and G is
                    # left as it was.
                    for i in range(n):
                        for c in range(R):
                            beta[i, c] += d[i] * coef[j, c]
                else:
                    # Member q leaves and x_j takes its place, in one pass
                    # over G: the grown inverse (as above) minus g g^T / g_qq,
                    # g its column q (block elimination).
                    for i in range(n):
                        g[i] = G[i, q] + d[i] * inv * d[q]
                    gn = -d[q] * inv
                    gqq = g[q]
                    # beta_rest += beta_q K_rest^{-1} k_rest(p_q) = -beta_q g_rest / g_qq
                    for c in range(R):
                        bq[c] = beta[q, c]
                    for i in range(n):
                        rq = g[i] / gqq
                        for c in range(R):
                            beta[i, c] -= rq * bq[c]
                    for i in range(n):
                        di = d[i] * inv
                        gi = g[i] / gqq
                        for l in range(n):
                            G[i, l] += di * d[l] - gi * g[l]
                    # Row and column q now belong to x_j.
                    for l in range(n):
                        s = -d[l] * inv - gn * g[l] / gqq
                        G[q, l] = s
                        G[l, q] = s
                        K[q, l] = k[l]
                        K[l, q] = k[l]
                    G[q, q] = inv - gn * gn / gqq
                    K[q, q] = kxx[j]
                    for c in range(R):
                        beta[q, c] = coef[j, c] - gn / gqq * bq[c]
                    born[q] = ints[1] - 1
                    idx[q] = index[j]
                    src[q] = n0 + j
                    ints[2] += 2
            if ints[2] >= refresh_every:
                nxt = j + 1
                break
    return nxt
