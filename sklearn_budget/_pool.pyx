# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""The greedy selection of the pool of the bounded average (``_averaging.py``
documents the pool; ``doc/decisions.rst``, Averaging with removals, the
choice), the products of the Gram matrix of its sparse rows, and the test
that the sums of the average are finite, which every call (one-row calls
included) makes after its rounds.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport isfinite, sqrt
from libc.string cimport memmove

from ._dense_rows cimport csr_by_feature, csr_lists, empty_lists, thread_heads

import numpy as np


cdef extern from *:
    """
    /* Row s of the factor L (rows of n values) minus its rows q < s, each
       times its value at column p: row s = (((row s - row q * x_q) - row
       q+1 * x_q+1) - ...), eight rows per pass over row s (an eighth of
       its loads and stores; the same operations in the same order as one
       row per pass): most of matching pursuit's time at a budget of 100.
       The same arithmetic in every build (no fused multiply-add: neither
       the default target nor AVX2 has one); where GCC and glibc can choose
       at load time, an AVX2 copy runs on processors that have it, four
       values per instruction instead of two (measured: a quarter less time
       for the whole pursuit). No AVX-512 copy: that instruction set has a
       fused multiply-add, which GCC contracts these products into (other
       bits), and the copy was no faster. */
    #if defined(__GNUC__)
    #define SB_RESTRICT __restrict__
    #elif defined(_MSC_VER)
    #define SB_RESTRICT __restrict
    #else
    #define SB_RESTRICT
    #endif
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
        && defined(__linux__) && defined(__GLIBC__)
    __attribute__((target_clones("avx2", "default")))
    #endif
    static void sb_pool_subtract_rows(double *L, Py_ssize_t n, Py_ssize_t s,
                                      Py_ssize_t p)
    {
        double *SB_RESTRICT row = L + s * n;
        Py_ssize_t q = 0, j;
        for (; q + 8 <= s; q += 8) {
            const double *SB_RESTRICT a = L + q * n;
            const double *SB_RESTRICT b = a + n;
            const double *SB_RESTRICT c = b + n;
            const double *SB_RESTRICT d = c + n;
            const double *SB_RESTRICT e = d + n;
            const double *SB_RESTRICT f = e + n;
            const double *SB_RESTRICT g = f + n;
            const double *SB_RESTRICT h = g + n;
            const double x = a[p], x1 = b[p], x2 = c[p], x3 = d[p];
            const double x4 = e[p], x5 = f[p], x6 = g[p], x7 = h[p];
            for (j = 0; j < n; j++)
                row[j] = (((((((row[j] - a[j] * x) - b[j] * x1) - c[j] * x2) - d[j] * x3)
                          - e[j] * x4) - f[j] * x5) - g[j] * x6) - h[j] * x7;
        }
        for (; q < s; q++) {
            const double *SB_RESTRICT a = L + q * n;
            const double x = a[p];
            for (j = 0; j < n; j++)
                row[j] -= a[j] * x;
        }
    }

    /* The first of the largest of g[0:n] above -1.0 (-1: none), as a
       scan with a strict ">": four running maxima of interleaved members
       (four chains of comparisons, not one), then the largest of them and,
       among equal ones, the first member. NaN is never taken. */
    static Py_ssize_t sb_pool_first_max(const double *g, Py_ssize_t n)
    {
        double b[4] = {-1.0, -1.0, -1.0, -1.0};
        Py_ssize_t at[4] = {-1, -1, -1, -1};
        Py_ssize_t j = 0, k, p = -1;
        double best = -1.0;
        for (; j + 4 <= n; j += 4)
            for (k = 0; k < 4; k++)
                if (g[j + k] > b[k]) {
                    b[k] = g[j + k];
                    at[k] = j + k;
                }
        for (; j < n; j++)  /* later than every member before */
            if (g[j] > b[0]) {
                b[0] = g[j];
                at[0] = j;
            }
        for (k = 0; k < 4; k++)
            if (at[k] >= 0 && (b[k] > best || (b[k] == best && at[k] < p))) {
                best = b[k];
                p = at[k];
            }
        return p;
    }

    /* One coefficient row (R = 1): the residuals and the correlations
       after direction l (projection a), and the next step's gains, -1.0
       where the residual is at most tol; in passes without branches. */
    static void sb_pool_update_one(const double *SB_RESTRICT l, double a,
                                   double *SB_RESTRICT resid,
                                   double *SB_RESTRICT r,
                                   double *SB_RESTRICT gains, double tol,
                                   Py_ssize_t n)
    {
        Py_ssize_t j;
        for (j = 0; j < n; j++) {
            resid[j] -= l[j] * l[j];
            r[j] -= l[j] * a;
            gains[j] = (0.0 + r[j] * r[j]) / resid[j];
        }
        /* A second pass: a division under a condition is not vectorized. */
        for (j = 0; j < n; j++)
            gains[j] = resid[j] > tol ? gains[j] : -1.0;
    }
    """
    void sb_pool_subtract_rows(double* L, Py_ssize_t n, Py_ssize_t s, Py_ssize_t p) noexcept nogil
    Py_ssize_t sb_pool_first_max(const double* g, Py_ssize_t n) noexcept nogil
    void sb_pool_update_one(const double* l, double a, double* resid, double* r, double* gains,
                            double tol, Py_ssize_t n) noexcept nogil


def omp_select(const double[:, ::1] K, Kcoef, Py_ssize_t budget, double tol, candidates=None):
    """Members kept by kernel orthogonal matching pursuit, in increasing order.

    ``K`` is the Gram matrix of the candidates ``x_j`` and ``Kcoef`` the
    inner products ``<f, k(x_j, .)>`` of the function to approximate with
    them (one row per candidate, one column per coefficient row; ``f`` may
    have members that are not candidates). Each step keeps the candidate
    ``p`` whose kernel function, made orthogonal to those kept
    (Gram-Schmidt, as a pivoted Cholesky factor of ``K``), removes most of
    the residual of ``f``: the largest ``||<f - P_S f, k(x_j, .)>||^2 /
    resid_j`` with ``resid_j`` the squared norm of the part of ``k(x_j, .)``
    off the span of the kept ones (Pati, Rezaiifar and Krishnaprasad, 1993,
    orthogonal matching pursuit; in a kernel space as Vincent and Bengio,
    2002, kernel matching pursuit with back-fitting). A candidate whose
    residual is at most ``tol`` adds nothing to the span and is never kept,
    so the kept ones' Gram matrix stays positive definite. Stops at
    ``budget`` members or when no candidate adds to the span. ``O(n
    budget^2)`` time for ``n`` candidates.

    ``candidates``: the rows of ``K`` that are the candidates, when ``K``
    is the Gram matrix of more rows (``Kcoef`` then has a row per
    candidate, and the positions returned are in ``candidates``): the
    pursuit reads the candidates' values where they are, as from
    ``K[np.ix_(candidates, candidates)]``, without gathering that block
    (most of it is never read: a step reads one row).
    """
    cdef Py_ssize_t n, R
    cdef Py_ssize_t s, j, c, p, m = 0
    cdef double gain, piv
    if K.shape[1] != K.shape[0]:
        raise ValueError(f"K has shape ({K.shape[0]}, {K.shape[1]}), not a square matrix.")
    rows = np.arange(K.shape[0]) if candidates is None else np.ascontiguousarray(
        candidates, dtype=np.intp
    )
    if rows.size and not (0 <= rows.min() and rows.max() < K.shape[0]):
        raise ValueError(f"candidates must be rows of K, in [0, {K.shape[0]}).")
    cdef const Py_ssize_t[::1] cand = rows
    n = cand.shape[0]
    budget = min(budget, n)
    # <f - P_S f, k(x_j, .)>, from <f, k(x_j, .)>, updated in place below.
    cdef double[:, ::1] r = np.array(Kcoef, dtype=np.float64, order="C", ndmin=2)
    if r.shape[0] != n:
        raise ValueError(f"Kcoef has {r.shape[0]} rows, for {n} candidates.")
    R = r.shape[1]
    cdef double[:, ::1] L = np.empty((max(budget, 1), n))
    cdef double[::1] resid = np.empty(n)
    cdef double[::1] gains = np.empty(n)
    cdef double[::1] proj = np.zeros(R)
    chosen = np.empty(budget, dtype=np.intp)
    cdef Py_ssize_t[::1] out = chosen
    for j in range(n):
        resid[j] = K[cand[j], cand[j]]
    with nogil:
        # The gains of the first step; each step computes those of the next
        # in its pass over the members (the same arithmetic as one pass of
        # its own: the sum from 0.0, then the division).
        for j in range(n):
            gain = 0.0
            for c in range(R):
                gain += r[j, c] * r[j, c]
            gains[j] = gain / resid[j] if resid[j] > tol else -1.0
        for s in range(budget):
            # The first of the largest gains among the candidates: members
            # kept, or whose residual is at most tol, have the gain -1.0,
            # below every candidate's (>= 0; NaN is never taken).
            p = sb_pool_first_max(&gains[0], n)
            if p < 0:
                break
            # The new orthonormal direction, as column s of the factor
            # (stored as row s, so that every loop runs along a row).
            piv = sqrt(resid[p])
            for j in range(n):
                L[s, j] = K[cand[p], cand[j]]
            # The kept directions subtracted in the order of q.
            sb_pool_subtract_rows(&L[0, 0], n, s, p)
            for j in range(n):
                L[s, j] /= piv
            # <f, e_s> for the new direction e_s = (k(x_p, .) - P_S k(x_p,
            # .)) / piv: <f - P_S f, k(x_p, .)> / piv, as f - P_S f is
            # orthogonal to the span of the kept ones; no pass over f's
            # members (some of which are not candidates).
            for c in range(R):
                proj[c] = r[p, c] / piv
            out[s] = p
            m = s + 1
            # The residuals, the correlations and the next step's gains,
            # without branches (vectorized); the kept members' gains -1.0.
            if R == 1:
                sb_pool_update_one(&L[s, 0], proj[0], &resid[0], &r[0, 0], &gains[0], tol, n)
            else:
                for j in range(n):
                    resid[j] -= L[s, j] * L[s, j]
                    gain = 0.0
                    for c in range(R):
                        r[j, c] -= L[s, j] * proj[c]
                        gain += r[j, c] * r[j, c]
                    gains[j] = gain / resid[j] if resid[j] > tol else -1.0
            for c in range(m):
                gains[out[c]] = -1.0
    return np.sort(chosen[:m])


def sparse_gram_products(X):
    """The products ``X @ X.T`` of float64 CSR rows in canonical format (sorted
    indices, no duplicates), the bits of
    :func:`~sklearn_budget._dense_rows.sparse_rbf_exponents` before its
    exponents: ``x_i . x_j`` summed from 0.0 in the order of ``x_i``'s
    entries, over the rows holding each feature in increasing order.

    In canonical format ``x_j . x_i`` sums the same products (one per shared
    feature; a product of two floats is the same either way round) in the
    same order (increasing feature): only ``j <= i`` is summed, and mirrored.
    Half the products of the pool's Gram matrix, most of the time of a
    compression of the average of sparse rows at a budget of 100. The
    diagonal is the rows' squared norms, summed as that function sums them.
    """
    cdef const double[::1] xd = np.ascontiguousarray(X.data, dtype=np.float64)
    cdef const Py_ssize_t[::1] xi = np.asarray(X.indices, dtype=np.intp)
    cdef const Py_ssize_t[::1] xp = np.asarray(X.indptr, dtype=np.intp)
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], nnz = xi.shape[0]
    cdef Py_ssize_t i, f, k, p, e
    cdef double a
    out = np.zeros((n, n))
    cdef double[:, ::1] K = out
    # The index of sparse_rbf_exponents, chosen as it chooses: linked lists
    # of the entries by feature (head[k] the first, this thread's heads;
    # nxt[e] the next) where the rows have at most two entries per feature
    # on average (high dimension: no pass over all the features; the
    # products of 501 rows of 60 entries in 50,000 features in 0.7 of the
    # time), else the entries of feature k at first[k]:first[k + 1] (a
    # stable counting sort; fill[k]: its next free place). Both visit a
    # feature's entries in increasing row.
    cdef bint lists = nnz <= 2 * d
    cdef Py_ssize_t[::1] row = np.empty(nnz, dtype=np.intp)
    cdef Py_ssize_t[::1] head, nxt, first, fill
    cdef double[::1] val
    if lists:
        head = thread_heads(d)
        nxt = np.empty(nnz, dtype=np.intp)
    else:
        first = np.zeros(d + 1, dtype=np.intp)
        fill = np.empty(d + 1, dtype=np.intp)
        val = np.empty(nnz)
    with nogil:
        if lists:
            csr_lists(xi, xp, n, head, nxt, row)
        else:
            csr_by_feature(xd, xi, xp, n, d, first, fill, row, val)
        for i in range(n):
            for f in range(xp[i], xp[i + 1]):
                a = xd[f]
                k = xi[f]
                if lists:
                    e = head[k]
                    while e >= 0 and row[e] <= i:
                        K[i, row[e]] += a * xd[e]
                        e = nxt[e]
                else:
                    p = first[k]
                    while p < first[k + 1] and row[p] <= i:
                        K[i, row[p]] += a * val[p]
                        p += 1
        if lists:
            empty_lists(xi, head)  # for the next call
        mirror_lower(K)
    return out


cdef void mirror_lower(double[:, ::1] K) noexcept nogil:
    """The lower triangle of the square ``K`` copied to its upper triangle,
    in tiles of 16 x 16, each read along its rows and written along its
    columns within a few cache lines (a column at a time, each value a
    cache line of its own, took as long as the products of a sparse Gram
    matrix)."""
    cdef Py_ssize_t n = K.shape[0], t, u, i, j
    for t in range(0, n, 16):
        for u in range(0, t + 1, 16):
            for i in range(t, min(t + 16, n)):
                for j in range(u, min(u + 16, i)):
                    K[j, i] = K[i, j]


def symmetric_rbf_gram(double[:, ::1] K, double gamma, X=None):
    """The rbf Gram matrix of a pool's rows, in place in ``K``, symmetric by
    construction.

    From the products ``K[i, j] = x_i . x_j`` (``j <= i`` read; the
    diagonal: the squared norms), the exponent of ``j <= i`` is
    scikit-learn's, in its order, ``(-2 x_i.x_j + ||x_i||^2) + ||x_j||^2``,
    negatives set to zero, 0 on the diagonal, times ``-gamma``. Given the
    dense rows ``X`` instead (``K``'s values not read), it is that of the
    direct path's kernel (``dense_kernel``), ``-gamma sum_a (x_ia -
    x_ja)^2`` summed in feature order: for rows of a few features, where a
    BLAS product is mostly overhead. The value at ``j > i`` is that at
    ``(j, i)``: half the exponents and half the ``exp`` of the whole matrix
    (whose two triangles differ by the rounding of the order of the two
    norms), most of the time of the Gram matrix of a pool of low
    dimension. The exponents are packed row after row at the front of
    ``K``'s own memory (row ``i`` at ``i (i + 1) / 2``, which trails its
    read at ``i n``: every product is read before its place is written; no
    second matrix), numpy's vectorized ``exp`` runs over them in one call,
    and each row goes back to its place, last row first (its place is after
    every packed row before it), then is mirrored.
    """
    cdef Py_ssize_t n = K.shape[0], i, j, a, off, d = 0
    cdef double g = -gamma, v, c
    cdef double* P
    cdef const double[:, ::1] XT
    if K.shape[1] != n:
        raise ValueError(f"K has shape ({n}, {K.shape[1]}), not a square matrix.")
    if X is not None:
        # Feature after feature: each loop below runs along the rows.
        XT = np.ascontiguousarray(np.asarray(X, dtype=np.float64).T)
        d = XT.shape[0]
        if XT.shape[1] != n or d == 0:
            raise ValueError(f"X has shape {np.shape(X)}, not ({n}, n_features > 0).")
    if n == 0:
        return
    cdef double[::1] xx = np.empty(n)
    P = &K[0, 0]
    with nogil:
        if d:
            # The sum from 0.0 in feature order, times g: its first term
            # written (0.0 + v * v is v * v), its last added with the product
            # by g: d passes over the row, not d + 2, the same bits.
            for i in range(n):
                off = i * (i + 1) // 2
                c = XT[0, i]
                for j in range(i):
                    v = c - XT[0, j]
                    P[off + j] = v * v
                for a in range(1, d - 1):
                    c = XT[a, i]
                    for j in range(i):
                        v = c - XT[a, j]
                        P[off + j] += v * v
                if d > 1:
                    c = XT[d - 1, i]
                    for j in range(i):
                        v = c - XT[d - 1, j]
                        P[off + j] = (P[off + j] + v * v) * g
                else:
                    for j in range(i):
                        P[off + j] *= g
                P[off + i] = 0.0 * g
        else:
            for i in range(n):  # the norms, before any packed row covers them
                xx[i] = P[i * n + i]
            for i in range(n):
                off = i * (i + 1) // 2
                for j in range(i):
                    v = (-2.0 * P[i * n + j] + xx[i]) + xx[j]
                    # NaN and -0.0 kept, as numpy's maximum keeps them.
                    P[off + j] = (0.0 if v < 0.0 else v) * g
                P[off + i] = 0.0 * g
    packed = np.asarray(K).reshape(-1)[: n * (n + 1) // 2]
    np.exp(packed, out=packed)
    with nogil:
        for i in range(n - 1, 0, -1):
            memmove(&P[i * n], &P[i * (i + 1) // 2], (i + 1) * sizeof(double))
        mirror_lower(K)


cdef bint finite_sums(const double[:, ::1] acc, const double[:, ::1] alpha,
                      const double[::1] stamp, double clock, Py_ssize_t n,
                      const double[:, ::1] pool_coef, Py_ssize_t m) noexcept nogil:
    """Whether the running sums of the first ``n`` members, brought to the
    averaging clock (``acc + alpha (clock - stamp)``, as the average is
    published), and the pool's first ``m`` sums are all finite."""
    cdef Py_ssize_t i, c, R = acc.shape[1]
    cdef double dt
    for i in range(n):
        dt = clock - stamp[i]
        for c in range(R):
            if not isfinite(acc[i, c] + alpha[i, c] * dt):
                return False
    for i in range(m):
        for c in range(R):
            if not isfinite(pool_coef[i, c]):
                return False
    return True


def average_finite(acc, alpha, stamp, double clock, Py_ssize_t n, pool_coef, Py_ssize_t m):
    """:func:`finite_sums` of arrays (in ``O((n + m) R)``, without the
    temporaries of the same test in numpy, which a one-row call would pay
    per round)."""
    return finite_sums(np.ascontiguousarray(acc, dtype=np.float64),
                       np.ascontiguousarray(alpha, dtype=np.float64),
                       np.ascontiguousarray(stamp, dtype=np.float64), clock, n,
                       np.ascontiguousarray(pool_coef, dtype=np.float64), m)
