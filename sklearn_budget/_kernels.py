"""Kernel evaluation shared by every estimator of the package.

All kernel values are computed by :func:`sklearn.metrics.pairwise.pairwise_kernels`
so that every kernel name it accepts, and any callable, behaves exactly as in
scikit-learn. The online engine never calls it per round: it asks for whole
blocks of rows against the support set (see ``sklearn_budget._rounds``).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import threading
from contextlib import ContextDecorator

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import dsyrk
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels
from sklearn.utils import gen_batches
from sklearn.utils._chunking import get_chunk_n_rows
from threadpoolctl import ThreadpoolController

from ._dense_rows import (
    RowIndex,
    SparseScratch,
    dense_rbf_exponents,
    kernel_block,
    sparse_rbf_exponents,
    sparse_rbf_rounds,
)
from ._pool import sparse_gram_products, symmetric_rbf_gram

__all__ = ["KERNELS", "Kernel", "resolve_gamma"]

# The BLAS libraries of the process (threadpoolctl's controllers of those
# loaded at the first pin: NumPy's and SciPy's, which importing the package
# loads), and the pin: the limit is process-wide, so it is taken by the
# first context that enters and released by the last that leaves, in
# whatever thread.
_blas_libraries = None
_pin_lock = threading.Lock()
_pin_depth = 0
_pin_saved = ()


def _pin(enter):
    """Enter (``enter=True``) or leave one context of :func:`single_blas_thread`."""
    global _blas_libraries, _pin_depth, _pin_saved
    with _pin_lock:
        if enter:
            if _pin_depth == 0:
                if _blas_libraries is None:
                    controller = ThreadpoolController().select(user_api="blas")
                    _blas_libraries = tuple(controller.lib_controllers)
                _pin_saved = tuple(lib.get_num_threads() for lib in _blas_libraries)
                for lib, n in zip(_blas_libraries, _pin_saved):
                    if n != 1:
                        lib.set_num_threads(1)
            _pin_depth += 1
            return
        _pin_depth -= 1
        if _pin_depth == 0:
            for lib, n in zip(_blas_libraries, _pin_saved):
                if n != 1:
                    lib.set_num_threads(n)


class _SingleBlasThread(ContextDecorator):
    """The context of :func:`single_blas_thread` (a class, not a generator:
    a one-row ``decision_function`` enters two)."""

    def __enter__(self):
        _pin(True)
        return self

    def __exit__(self, *exc):
        _pin(False)
        return False


_SINGLE_BLAS_THREAD = _SingleBlasThread()


def single_blas_thread():
    """Context in which BLAS runs on one thread (also a decorator).

    A BLAS product on several threads may sum its terms in another order
    than on one (OpenBLAS 0.3.30's gemm, gemv, syrk and potrf do, at the
    sizes of this package's kernel blocks): every product whose result
    enters a model or a score runs in this context, so that the bits are
    the same whatever the threads that the process allows.

    The limit is the process's: contexts nested, or entered by estimators
    fitted in concurrent threads, share one pin, released when the last of
    them leaves (one thread leaving must not unpin the others). Building
    threadpoolctl's controller inspects every loaded library (milliseconds,
    once); a pin then costs a few microseconds (the numbers of threads read
    and set through its controllers, where a ``threadpool_limits`` object
    per call costs about 20, more than a one-row ``decision_function``).
    """
    return _SINGLE_BLAS_THREAD


#: Kernel names accepted by the estimators: those of ``pairwise_kernels``
#: except ``"precomputed"``, which cannot evaluate a new row of a stream
#: against the support vectors.
KERNELS = tuple(sorted(k for k in PAIRWISE_KERNEL_FUNCTIONS if k != "precomputed"))

# Kernels defined only for non-negative dense input.
NONNEGATIVE_KERNELS = ("additive_chi2", "chi2")

# Which of gamma, degree and coef0 each named kernel takes (as in
# ``sklearn.metrics.pairwise.KERNEL_PARAMS``, which is private).
_KERNEL_ARGS = {
    "additive_chi2": (),
    "chi2": ("gamma",),
    "cosine": (),
    "laplacian": ("gamma",),
    "linear": (),
    "poly": ("gamma", "degree", "coef0"),
    "polynomial": ("gamma", "degree", "coef0"),
    "rbf": ("gamma",),
    "sigmoid": ("gamma", "coef0"),
}


def _row_sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _nonfinite_scores(X):
    return ValueError(
        "Non-finite scores: the kernel values of X with the support vectors "
        f"overflowed (largest |x|: {abs(as_matrix(X)).max():.3g}). Scale X as the training "
        "data were scaled."
    )


def _int32_indices(X):
    """``X`` with 32-bit sparse indices when they fit (a copy of the index arrays only)."""
    if not sp.issparse(X) or X.indices.dtype == np.int32 or X.nnz >= 2**31:
        return X
    X = X.tocsr(copy=False)
    out = sp.csr_matrix(X.shape, dtype=X.dtype)
    out.data = X.data
    out.indices = X.indices.astype(np.int32)
    out.indptr = X.indptr.astype(np.int32)
    return out


def resolve_gamma(gamma, X):
    """Return the numeric ``gamma`` for ``X``.

    ``"scale"`` gives ``1 / (n_features * X.var())`` and ``"auto"`` gives
    ``1 / n_features``, as in :class:`sklearn.svm.SVC`. When the variance is
    zero (for example a first ``partial_fit`` call with a single row),
    ``"scale"`` falls back to ``1.0``, again as ``SVC`` does.
    """
    if not isinstance(gamma, str):
        return float(gamma)
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return scale_gamma(entry_variance(X), X)


def entry_variance(X):
    """The variance of the entries of ``X``, dense or sparse (overflow ignored:
    :func:`scale_gamma` reports it)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if not sp.issparse(X):
            return X.var()
        # Var[X] = E[X^2] - E[X]^2 over all entries, computed without densifying.
        n = X.shape[0] * X.shape[1]
        if X.format == "csr" and X.dtype == np.float64 and X.has_canonical_format:
            # The sums of X.sum() and X.multiply(X).sum() (scipy sums the
            # stored values of a matrix in canonical form), without the
            # matrix of squares, whose sum first checks its format (a pass
            # over the indices: a fifth of the time of gamma='scale').
            data = X.data
            squares = np.square(data)
            sum_squares = squares.sum() if squares.all() else X.multiply(X).sum()
            return sum_squares / n - (data.sum() / n) ** 2
        mean = X.sum() / n
        return _squares(X).sum() / n - mean**2


def _squares(X):
    """``X.multiply(X)``, the same matrix: for float CSR rows in canonical
    form whose squares are all non-zero (none dropped), the rows with their
    entries squared, without the elementwise product's merge of the two
    operands (a millisecond for a few hundred thousand entries, once per
    ``fit`` with ``gamma='scale'``)."""
    if X.format == "csr" and X.dtype.kind == "f" and X.has_canonical_format:
        data = np.square(X.data)
        if data.all():
            return type(X)((data, X.indices, X.indptr), shape=X.shape)
    return X.multiply(X)


def scale_gamma(var, X):
    """``1 / (n_features * var)`` for ``gamma='scale'``, or a clear error.

    ``var`` is the variance of the entries of ``X``, computed with overflow
    ignored: values near the top of the float64 range make it infinite or
    NaN, for which no width exists.
    """
    if not np.isfinite(var):
        amax = abs(X).max() if X.shape[0] else 0.0
        raise ValueError(
            f"gamma='scale' is 1 / (n_features * X.var()), and the variance of X overflows "
            f"(largest |x|: {amax:.3g}). Scale the features (for example with "
            "StandardScaler), or pass a numeric gamma."
        )
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


# Kernel values in one block of the rows an expansion scores (8 MiB of them;
# see expansion_batches): each block's values are a fresh array, and at
# tens of MB (the check of a fitted model on 2,036 of a9a's rows against
# 4,000 members) the pages that the system zeroes at their first use cost
# more than the values (150 ms where they took 40, inside a fit, whose
# memory is fragmented, against 36 ms in blocks of 256 rows).
_EXPANSION_VALUES = 1 << 20
# The blocks of the bound are multiples of this many rows (see expansion_batches).
_EXPANSION_ROWS = 64


def expansion_batches(n_rows, n_members, within_working_memory=True):
    """The blocks of rows (a list of slices) in which an expansion of ``n_members``
    members scores ``n_rows`` rows: within scikit-learn's ``working_memory``
    and, where that allows more, of about ``_EXPANSION_VALUES`` kernel
    values. ``within_working_memory=False``: of about ``_EXPANSION_VALUES``
    values whatever ``working_memory`` says (blocks that a fitted model's
    values depend on, which no configuration of the process may change).

    Those blocks are ``b`` rows, the largest multiple of ``_EXPANSION_ROWS``
    whose values fit in ``_EXPANSION_VALUES`` (at least ``_EXPANSION_ROWS``
    rows), and the rows left over join the last block (which holds fewer
    than ``2 b`` rows), so that each row's score has the bits of one block
    of all the rows: BLAS's products of the values with the coefficients
    take the rows in groups (of 4 for OpenBLAS's ``dgemv``; the rows left
    over sum in another order), and a small product may take another
    kernel (OpenBLAS's small-matrix ``dgemm`` of some processors, below
    about ``10^6`` products; a block of ``b`` rows or more has about
    ``_EXPANSION_VALUES`` values times the outputs).
    """
    if n_rows == 0:
        return []
    bounded = _EXPANSION_VALUES // max(1, n_members)
    bounded = max(_EXPANSION_ROWS, bounded - bounded % _EXPANSION_ROWS)
    chunk = n_rows
    if within_working_memory:
        chunk = max(1, get_chunk_n_rows(row_bytes=8 * max(1, n_members), max_n_rows=n_rows))
    if 2 * bounded > chunk:
        return list(gen_batches(n_rows, chunk))
    return list(gen_batches(n_rows, bounded, min_batch_size=bounded))


# Rows of a block of rounds whose kernel values with each other are computed
# together (Kernel.rounds_block): the values of a row with the later rows of
# its chunk are computed though never read.
_ROUNDS_CHUNK = 32


# The widest dense rows whose pool Gram matrix is computed from differences
# (3 d flops a value, compiled) rather than from BLAS products (2 d flops,
# but BLAS's blocking and packing dominate the products of a few features).
_GRAM_DIFFERENCES_MAX = 8


class CSRRows:
    """Float64 CSR rows given by their arrays, a ``csr_matrix`` made only if asked.

    The rows of a block of rounds and the members before them, views of the
    buffers of the call's blocks (``_rounds._BlockRows``): the compiled
    kernel of sparse rbf rows reads the arrays (``data``, ``indices``,
    ``indptr``, ``shape``), and scipy's constructor of a matrix of them
    (a few tens of microseconds, a copy of views of a larger buffer) is paid
    only by the other kernels (:meth:`matrix`).
    """

    __slots__ = ("data", "indices", "indptr", "shape", "_matrix")

    def __init__(self, data, indices, indptr, shape):
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape
        self._matrix = None

    def matrix(self):
        """The rows as a ``csr_matrix``."""
        if self._matrix is None:
            self._matrix = sp.csr_matrix(
                (self.data, self.indices, self.indptr), shape=self.shape, copy=False
            )
        return self._matrix


def as_matrix(X):
    """``X``, or the ``csr_matrix`` of a :class:`CSRRows`."""
    return X.matrix() if type(X) is CSRRows else X


def _is_csr64(X):
    return sp.issparse(X) and X.format == "csr" and X.dtype == np.float64


def _sparse_rbf(X, Y, gamma, scratch=None, index=None):
    """``rbf_kernel(X, Y, gamma=gamma)`` of float64 CSR rows, the same bits.

    The operations of scikit-learn's ``euclidean_distances`` and
    ``rbf_kernel`` in their order, compiled
    (:func:`~sklearn_budget._dense_rows.sparse_rbf_exponents`), without their
    validation of the rows (validated here already) and the transposed copy
    of ``Y``: each costs a millisecond per call for high-dimensional rows,
    more than the kernel values of a block of rows against a small support
    set. The Gram matrix of rows in canonical format (the pool of the
    average) from half its products (:func:`~sklearn_budget._pool.sparse_gram_products`),
    the same bits. ``scratch``: the
    :class:`~sklearn_budget._dense_rows.SparseScratch` whose buffers, the
    output's included, several calls share (the values are then a view of
    its output), or None. ``index``: the :func:`row_index` of ``Y`` (or a
    :class:`~sklearn_budget._dense_rows.RowIndex` of the buffer whose first
    rows ``Y`` are), whose walk of ``X``'s entries gives the same
    exponents where :func:`walks_index` takes ``X``, or None.
    """
    K = None
    if index is not None and walks_index(X):
        K = index.exponents(X, Y.data, gamma, scratch)
    if K is None:
        if Y is X and scratch is None and type(X) is not CSRRows and X.has_canonical_format:
            K = sparse_gram_products(X)
            xx = K.diagonal().copy()  # the squared norms (the products' diagonal)
            dense_rbf_exponents(K, xx, xx, gamma, True)
        else:
            K = sparse_rbf_exponents(X, Y, gamma, Y is X, -1, 1, scratch)
    np.exp(K, out=K)
    return K


def _is_csr_rows(X):
    return type(X) is CSRRows or _is_csr64(X)


def _is_dense64(X):
    return type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2 and X.shape[1] > 0


def _dense_rbf(X, Y, gamma, out=None):
    """``rbf_kernel(X, Y, gamma=gamma)`` of float64 arrays, the same bits, or
    None for rows whose values could overflow.

    scikit-learn's product ``X @ Y.T`` (the same BLAS call) and squared
    norms, then its elementwise steps fused into one compiled pass
    (:func:`~sklearn_budget._dense_rows.dense_rbf_exponents`) and its
    ``exp``, without the validation of ``pairwise_kernels`` and four passes
    over the matrix: most of the time of the small blocks of the averaged
    model (the Gram matrix of its pool, hundreds of rows in low dimension).
    Only for rows whose every step stays finite (``|x.z| <= ||x|| ||z||``):
    the others, or rows that are not finite, take scikit-learn's path, its
    errors and its warnings. ``out``: a C-contiguous float64 array of
    shape ``(len(X), len(Y))`` that receives the values (BLAS's product
    written there, the same call), or None.
    """
    with np.errstate(all="ignore"):
        xx = np.einsum("ij,ij->i", X, X)
        yy = xx if Y is X else np.einsum("ij,ij->i", Y, Y)
        bound = (np.sqrt(xx.max()) + np.sqrt(yy.max())) ** 2 * (1.0 + abs(gamma))
    if not bound < 1e300:
        return None
    K = np.matmul(X, Y.T, out=out)
    dense_rbf_exponents(K, xx, yy, gamma, Y is X)
    np.exp(K, out=K)
    return K


_RESERVED_PARAMS = frozenset({"X", "Y", "metric", "filter_params", "n_jobs"})


class Kernel:
    """A kernel function with its parameters fixed.

    Parameters
    ----------
    kernel : str or callable
        One of :data:`KERNELS` or a callable ``k(x, y) -> float`` as accepted
        by :func:`~sklearn.metrics.pairwise.pairwise_kernels`.
    gamma : float
        Numeric ``gamma`` (already resolved, see :func:`resolve_gamma`).
        Ignored by kernels that do not take it.
    degree : float
        Degree of the polynomial kernel.
    coef0 : float
        Independent term of the polynomial and sigmoid kernels.
    kernel_params : dict or None
        Extra keyword arguments for a callable kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_budget.kernels import Kernel
    >>> k = Kernel("rbf", gamma=0.5)
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> k(X, X).round(3)
    array([[1.   , 0.368],
           [0.368, 1.   ]])
    >>> k.diag(X)
    array([1., 1.])
    """

    def __init__(self, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, kernel_params=None):
        # pairwise_kernels reads these names as its own arguments, not the callable's.
        reserved = sorted(_RESERVED_PARAMS.intersection(kernel_params or {}))
        if callable(kernel) and reserved:
            raise ValueError(
                f"kernel_params may not contain {', '.join(map(repr, reserved))}: "
                "sklearn.metrics.pairwise.pairwise_kernels takes these names as its "
                "own arguments. Rename that parameter of the kernel function."
            )
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params

    def _params(self):
        if callable(self.kernel):
            return dict(self.kernel_params or {})
        values = {"gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
        return {name: values[name] for name in _KERNEL_ARGS[self.kernel]}

    def __call__(self, X, Y):
        """Kernel matrix ``K[i, j] = k(X[i], Y[j])`` as a dense array.

        ``X`` and ``Y`` are 2-D arrays or scipy sparse matrices with the same
        number of columns (or :class:`CSRRows`); they must already be
        validated. Always in one job: the values are then the same bits in
        any joblib context.
        """
        sparse_rbf = self.kernel == "rbf" and _is_csr_rows(X) and _is_csr_rows(Y)
        if not sparse_rbf:
            X, Y = as_matrix(X), as_matrix(Y)
        if Y.shape[0] == 0 or X.shape[0] == 0:
            return np.zeros((X.shape[0], Y.shape[0]))
        if self.kernel in NONNEGATIVE_KERNELS:
            # The chi2 kernels are written in Cython and refuse read-only buffers.
            X = X if X.flags.writeable else X.copy()
            Y = Y if Y.flags.writeable else Y.copy()
        if self.kernel == "laplacian":
            # scikit-learn's sparse Manhattan distances take 32-bit indices only.
            X, Y = _int32_indices(X), _int32_indices(Y)
        if sparse_rbf:
            return _sparse_rbf(X, Y, self.gamma)
        if _dense_rbf_pair(self, X, Y):
            # pairwise_kernels' validation costs more than the values of the
            # small blocks the averaged model scores (its margins, its pool).
            K = _dense_rbf(X, Y, self.gamma)
            if K is not None:
                return K
        if not callable(self.kernel):
            K = self._pairwise(X, Y)
            return np.asarray(K, dtype=np.float64)
        # A callable is the user's code: check what it gives before learning from it.
        name = getattr(self.kernel, "__name__", repr(self.kernel))
        try:
            K = self._pairwise(X, Y)
            K = np.asarray(K, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"The kernel {name!r} returned values that are not numbers: {exc}"
            ) from exc
        if K.shape != (X.shape[0], Y.shape[0]):
            raise ValueError(
                f"The kernel {name!r} gave a matrix of shape {K.shape} for "
                f"{X.shape[0]} x {Y.shape[0]} rows."
            )
        if not np.isfinite(K).all():
            raise ValueError(f"The kernel {name!r} returned NaN or infinite values.")
        return K

    def rounds_block(self, Xb, Z, n_members, scratch=None):
        """The kernel values that a block of rounds reads, ``K(Xb, Z)``, and
        where those with the block's own rows are computed.

        ``Z`` is ``n_members`` members followed by the rows of ``Xb`` (each
        rows or :class:`CSRRows`). The round of row ``j`` reads its values
        with the members and with the rows of the block before it that
        joined. Returns ``(K, columns)``. For the rbf kernel of CSR rows
        (with a ``scratch``, a
        :class:`~sklearn_budget._dense_rows.SparseScratch` whose output
        buffer ``K`` then is, valid until the next block): ``K`` holds the
        values with the members and the products of each row with the
        block's rows up to it, which ``columns`` (a
        :class:`~sklearn_budget._dense_rows.BlockColumns`, that the engine
        asks before each round) makes values for the rows that joined only:
        in high dimension a value costs an exponent and an exponential, not
        much less than its products, and any of the rows before a row may
        join (:func:`~sklearn_budget._dense_rows.sparse_rbf_rounds`).
        Without numpy's ``exp`` loop (``EXP_LOOP``) the values are made
        beforehand, by chunks of ``_ROUNDS_CHUNK`` rows: row ``j`` against
        the rows of the block up to the end of its chunk, NaN beyond;
        ``columns`` is None. Every value read has the bits of
        :meth:`__call__`.
        """
        if not (self.kernel == "rbf" and _is_csr_rows(Xb) and _is_csr_rows(Z)):
            return np.ascontiguousarray(self(Xb, Z), dtype=np.float64), None
        if scratch is not None:
            rounds = sparse_rbf_rounds(Xb, Z, self.gamma, n_members, scratch)
            if rounds is not None:
                return rounds
        chunk = _ROUNDS_CHUNK
        K = sparse_rbf_exponents(Xb, Z, self.gamma, False, n_members, chunk, scratch)
        for start in range(0, Xb.shape[0], chunk):
            rows = K[start : start + chunk, : n_members + start + chunk]
            np.exp(rows, out=rows)
        return K, None

    def _pairwise(self, X, Y):
        # n_jobs=1, not None: with None, pairwise_kernels splits Y into as many
        # column blocks as joblib's active backend has workers (under the dask
        # backend, every core of the cluster, whatever parallel_config(n_jobs)
        # says), and a block's BLAS product can round differently from the
        # whole one.
        return pairwise_kernels(
            X, Y, metric=self.kernel, filter_params=False, n_jobs=1, **self._params()
        )

    def expansion(self, X, support_vectors, coef):
        """Scores ``K(X, support_vectors) @ coef.T`` of a kernel expansion.

        ``coef`` has one row per output. The kernel matrix is computed in
        blocks of rows within scikit-learn's ``working_memory`` and of
        about ``_EXPANSION_VALUES`` values (:func:`expansion_batches`), never
        whole. Raises ValueError if the scores overflow.
        """
        scores = np.empty((X.shape[0], coef.shape[0]))
        # The last block first: it is the largest (expansion_batches).
        batches = expansion_batches(X.shape[0], coef.shape[1])[::-1]
        # The sparse rbf values of several blocks in one buffer (see
        # _EXPANSION_VALUES), of the first block's size. One block as
        # __call__ computes it (a few rows against many members: from the
        # lists of the rows' entries).
        sparse_rbf = self.kernel == "rbf" and _is_csr_rows(X) and _is_csr_rows(support_vectors)
        scratch = SparseScratch(False) if sparse_rbf and len(batches) > 1 else None
        # Support vectors of many features indexed once for all the blocks
        # (row_index; the same values): a block of few rows against many
        # members (the end-of-fit check's average of the pool and the
        # members) walks its own entries only.
        index = None if scratch is None else row_index(self, support_vectors)
        # One BLAS thread: the same scores whatever the threads allowed.
        with single_blas_thread(), np.errstate(all="ignore"):  # overflow is reported below
            for sl in batches:
                # One block of all the rows is X itself (slicing sparse rows copies
                # them), unless X is the support vectors: scikit-learn takes the
                # kernel of a matrix with itself as symmetric (a callable's values
                # mirrored, the distances' diagonal zeroed), which a copy is not.
                whole = sl.stop - sl.start == X.shape[0] and X is not support_vectors
                rows = X if whole else X[sl]
                if scratch is None:
                    K = self(rows, support_vectors)
                else:
                    K = _sparse_rbf(rows, support_vectors, self.gamma, scratch, index)
                scores[sl] = K @ coef.T
                del K  # one block of values at a time
        if not np.isfinite(scores).all():
            raise _nonfinite_scores(X)
        return scores

    def abs_bound(self, diag_X, diag_Y):
        """An upper bound of ``|k(x, y)|`` over ``x`` in X and ``y`` in Y, or None.

        Takes the diagonals ``k(x, x)`` and ``k(y, y)``. Known only for
        kernels bounded by 1 and, by Cauchy-Schwarz, for the linear kernel.
        """
        if self.kernel in ("rbf", "laplacian", "chi2", "cosine"):
            return 1.0
        if self.kernel == "linear":
            mx = diag_X.max(initial=0.0)
            my = diag_Y.max(initial=0.0)
            return float(np.sqrt(mx * my))
        return None

    def diag(self, X):
        """The values ``k(x, x)`` for each row of ``X``, without a Gram matrix."""
        kernel = self.kernel
        n = X.shape[0]
        if kernel in ("rbf", "laplacian", "chi2"):
            return np.ones(n)
        X = as_matrix(X)
        if callable(kernel):
            # Through pairwise_kernels, so the callable sees rows exactly as
            # it does for the kernel matrix.
            return np.array(
                [self(X[i : i + 1], X[i : i + 1])[0, 0] for i in range(n)], dtype=np.float64
            )
        if kernel == "additive_chi2":
            return np.zeros(n)
        if kernel == "cosine":
            # sklearn's cosine kernel maps a zero row to a zero vector.
            return (_row_sq_norms(X) > 0).astype(np.float64)
        sq = _row_sq_norms(X)
        if kernel == "linear":
            return sq
        if kernel in ("poly", "polynomial"):
            return (self.gamma * sq + self.coef0) ** self.degree
        if kernel == "sigmoid":
            return np.tanh(self.gamma * sq + self.coef0)
        raise ValueError(f"Unknown kernel {kernel!r}.")  # pragma: no cover


class _KernelStateMixin:
    """Pickled state that keeps the fitted kernel (``_kernel``) as its parameters.

    The parameters are plain values, so that a file written by
    :func:`skops.io.dump` names no type of the package but the estimator's
    own: loading it asks to trust the estimator class alone (and a callable
    kernel, which is the user's code).
    """

    def __getstate__(self):
        state = dict(super().__getstate__())
        if isinstance(state.get("_kernel"), Kernel):
            state["_kernel"] = dict(vars(state["_kernel"]))
        return state

    def __setstate__(self, state):
        if isinstance(state.get("_kernel"), dict):
            state = dict(state, _kernel=Kernel(**state["_kernel"]))
        super().__setstate__(state)


def _dense_rbf_pair(kernel, X, Z):
    """Whether :func:`_dense_rbf` may compute ``kernel(X, Z)``: the rbf
    kernel of dense float64 rows of one width."""
    return kernel.kernel == "rbf" and _is_dense64(X) and _is_dense64(Z) and X.shape[1] == Z.shape[1]


def finite_pool_kernel(kernel, X, Z):
    """``kernel(X, Z)`` where its values are finite by construction, or None.

    Those of :func:`_dense_rbf` with ``gamma >= 0``: rows it takes keep every
    step finite, and the exponents are at most 0 (values in ``[0, 1]``).
    """
    if _dense_rbf_pair(kernel, X, Z) and kernel.gamma >= 0:
        return _dense_rbf(X, Z, kernel.gamma)
    return None


def indexes_rows(n_features, entries):
    """Whether rows of ``entries`` entries in ``n_features`` features take a
    :class:`~sklearn_budget._dense_rows.RowIndex`: its heads, one per
    feature, at most 8 per entry indexed (no ``O(n_features)`` array for a
    few rows of a hashed feature space)."""
    return 0 < entries and n_features <= 8 * entries


def walks_index(X):
    """Whether the rows ``X`` take their kernel values from a
    :class:`~sklearn_budget._dense_rows.RowIndex` of the other rows: at most
    half as many entries as features. Their walk of its lists then visits
    on average at most half the indexed entries, where
    :func:`~sklearn_budget._dense_rows.sparse_rbf_exponents` visits or
    indexes all of them (rows of few features, a9a's 123, take its
    transposed index instead)."""
    return 2 * (int(X.indptr[-1]) - int(X.indptr[0])) <= X.shape[1]


def row_index(kernel, Z):
    """An index of the CSR rows ``Z`` by feature, for the rbf values of
    several blocks of rows against them (:func:`band_kernel`), or None
    (another kernel, rows that :func:`indexes_rows` refuses or not in
    strictly increasing feature). Each block that :func:`walks_index`
    takes then walks its own entries, where each call of
    :func:`~sklearn_budget._dense_rows.sparse_rbf_exponents` walks or
    indexes all of ``Z``'s."""
    if kernel.kernel != "rbf" or not _is_csr_rows(Z):
        return None
    # The index's entries are positions in Z's arrays: views whose pointers
    # do not start at 0 are refused.
    entries = int(Z.indptr[-1])
    if int(Z.indptr[0]) != 0 or not indexes_rows(Z.shape[1], entries):
        return None
    index = RowIndex(Z.shape[1])
    index.extend(Z.indices, Z.indptr, Z.data, Z.shape[0])
    return index if index.usable else None


def band_kernel(kernel, X, Z, buffer, index=None):
    """``kernel(X, Z)`` written into ``buffer``, or None.

    ``buffer``: a flat float64 array of at least ``len(X) * len(Z)`` values;
    the values are a view of its start. For the bands of rows of one kernel
    block (the averaged model's projection, :func:`~sklearn_budget._averaging._projection_terms`),
    which then share one buffer instead of taking fresh pages each. The
    values of :meth:`Kernel.__call__` for the rbf kernel with ``gamma >= 0``:
    of dense rows whose every step stays finite (:func:`_dense_rbf`), and of
    CSR rows where every value is finite (its exponents, then numpy's
    ``exp``). None for any other kernel or rows: the caller's path computes,
    checks and reports them. ``index``: the :func:`row_index` of ``Z``
    (the same values), or None.
    """
    if kernel.kernel != "rbf" or not kernel.gamma >= 0 or not (X.shape[0] and Z.shape[0]):
        return None
    if _dense_rbf_pair(kernel, X, Z):
        out = buffer[: X.shape[0] * Z.shape[0]].reshape(X.shape[0], Z.shape[0])
        return _dense_rbf(X, Z, kernel.gamma, out)
    if not (_is_csr_rows(X) and _is_csr_rows(Z)):
        return None
    K = _sparse_rbf(X, Z, kernel.gamma, SparseScratch(False, buffer), index)
    return K if np.isfinite(K).all() else None


def symmetric_pool_gram(kernel, X):
    """The rbf Gram matrix of the rows ``X`` (a pool of the averaged model),
    symmetric by construction, or None.

    Dense float64 rows of at most ``_GRAM_DIFFERENCES_MAX`` features from
    their differences, as the direct path computes each value; wider ones
    from their products by BLAS's ``syrk`` (one triangle: half the products
    of ``X @ X.T``); CSR rows in canonical format from their products by
    :func:`~sklearn_budget._pool.sparse_gram_products`. The exponents and
    values of one triangle, mirrored
    (:func:`~sklearn_budget._pool.symmetric_rbf_gram`): rbf_kernel's values
    up to the rounding of their products and exponents. None for another
    kernel or other rows, ``gamma < 0``, or rows whose steps might not stay
    finite (``4 max ||x||^2 (1 + gamma) >= 1e300``): the caller's path then
    computes and checks the values. Values in ``[0, 1]``.
    """
    if kernel.kernel != "rbf" or not kernel.gamma >= 0:
        return None
    rows = None
    if _is_dense64(X):
        norms = np.einsum("ij,ij->i", X, X)
        if X.shape[1] <= _GRAM_DIFFERENCES_MAX:
            K, rows = np.empty((X.shape[0], X.shape[0])), X
        else:
            # syrk's upper triangle of X X^T in Fortran order: the lower one
            # of its C-ordered transpose, without a copy of X (X.T is Fortran).
            K = dsyrk(1.0, X.T, trans=1, lower=0).T
    elif _is_csr64(X) and X.has_canonical_format and X.shape[1]:
        K = sparse_gram_products(X)
        norms = K.diagonal()
    else:
        return None
    with np.errstate(all="ignore"):
        bound = 4.0 * norms.max(initial=0.0) * (1.0 + kernel.gamma)
    if not bound < 1e300:
        return None
    symmetric_rbf_gram(K, kernel.gamma, rows)
    return K


def kernel_values(kernel, kernel_code, X, Z):
    """``kernel(X, Z)`` as a C-contiguous float64 array, by the compiled
    formulas where the kernel has them (``kernel_code``) and both are dense:
    by differences, so rows too large for the blocked formulas stay finite."""
    if kernel_code is not None and not (sp.issparse(X) or sp.issparse(Z)) and X.shape[1]:
        return kernel_block(
            np.ascontiguousarray(X, dtype=np.float64),
            np.ascontiguousarray(Z, dtype=np.float64),
            kernel_code,
            float(kernel.gamma),
            float(kernel.degree),
            float(kernel.coef0),
        )
    return np.ascontiguousarray(kernel(X, Z), dtype=np.float64)


def block_kernel_values(kernel, kernel_code, X, Z):
    """``(K, finite)``: ``kernel(X, Z)`` by the kernel's formulas for a block
    (BLAS for dense rows), C-contiguous float64, or by :func:`kernel_values`
    (the compiled differences) where those are not finite and the kernel
    has them (huge rows); ``finite``: whether every value is."""
    with np.errstate(all="ignore"):
        K = np.ascontiguousarray(kernel(X, Z), dtype=np.float64)
        finite = np.isfinite(K).all()
        if not finite and kernel_code is not None:
            K = kernel_values(kernel, kernel_code, X, Z)
            finite = np.isfinite(K).all()
    return K, finite


def is_nonnegative_kernel(kernel):
    """Whether ``kernel`` only accepts non-negative dense input."""
    return isinstance(kernel, str) and kernel in NONNEGATIVE_KERNELS
