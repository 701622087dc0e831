"""The online engine shared by every kernel estimator of the package.

An algorithm class states only its update rule (:meth:`_update`) and the
margin below which it may update (:meth:`_margin_threshold`). The engine plays
the stream exactly as the per-sample algorithm would, every prediction made
with the hypothesis of that moment, but does its kernel work in blocks:

1. For a block of ``b`` upcoming rows ``Xb`` it evaluates, in one call to
   :func:`~sklearn.metrics.pairwise.pairwise_kernels`, the matrix
   ``Kc = K(Xb, [SV; Xb])``: the block against the support vectors of the
   block start *and* against the block's own rows, so that a row that joins
   the support set during the block already has its kernel column.
2. ``F = Kc @ alpha.T`` holds the scores of every remaining row of the block
   under the current hypothesis. Each change of the hypothesis updates only
   what changed: one column for an added or removed member, one matrix-vector
   product for a change of all coefficients, a scaling for a shrink.
3. The next round that may need an update is found with a vectorised margin
   test on ``F``. The test keeps a safety tolerance far above the rounding of
   the incremental updates, and every round it selects is decided on scores
   recomputed from the current coefficients and the round's kernel row, as
   the per-sample algorithm does. Rounds it skips are neither mistakes nor
   updates, so decisions, mistakes and support sets are those of the
   per-sample algorithm. (As for any floating-point implementation, a score
   that is mathematically exactly on a decision boundary, such as
   ``f(x) = 0`` from cancelling terms, is decided by its rounding.)

Members are stored in capacity buffers; a removal moves the last member
into the freed place, so it costs O(1) per member array (O(|S|) for a cached
Gram matrix). ``support_`` is reported in order of the training stream.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    check_non_negative,
    column_or_1d,
    validate_data,
)

from ._kernels import KERNELS, Kernel, is_nonnegative_kernel, resolve_gamma

# Rows per block. Large enough for BLAS to pay, small enough that the
# incremental score updates of one block stay cheap.
_BLOCK_SIZE = 256

# Relative safety margin of the vectorised candidate test (see module doc).
# The incremental updates of one block round off by far less than this.
_CANDIDATE_RTOL = 1e-9


def _shuffle_rng(random_state):
    """Generator of the shuffling of ``fit``.

    An integer seed gives a stream independent of ``RandomState(seed)``,
    which the algorithms' own draws use (removals, reservoir sampling), so
    that the two never replay the same numbers.
    """
    if isinstance(random_state, Integral):
        seq = np.random.SeedSequence(int(random_state)).spawn(1)[0]
        return np.random.RandomState(np.random.MT19937(seq))
    return check_random_state(random_state)


def _vstack(A, B):
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    return np.concatenate([A, B], axis=0)


class _Block:
    """Kernel work of the block being played (see the module docstring)."""

    # ``prefix``: members 0..prefix-1 sit in columns 0..prefix-1 of ``Kc``,
    # so products with them use a view of ``Kc`` instead of a gather.
    # ``err``: bound on sum |term| over every term added into F in this block
    # (scores at block start, then each update); the rounding of F is
    # below eps * err, whatever was removed or shrunk since.
    __slots__ = ("Kc", "F", "diag", "index", "j", "prefix", "retired_cols", "err", "kmax")


class BaseKernelOnlineClassifier(ClassifierMixin, BaseEstimator):
    """Base class of the online kernel classifiers.

    Subclasses implement :meth:`_update` and :meth:`_margin_threshold`, and
    may override :meth:`_reset_rule`, :meth:`_on_add`, :meth:`_on_remove`,
    :meth:`_on_block_start` and :meth:`_on_block_end` to keep caches of
    their own. Inside ``_update`` they
    change the hypothesis only through :meth:`_add_member`,
    :meth:`_remove_member`, :meth:`_add_to_coef` and :meth:`_scale_coef`.
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="left")],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "average": ["boolean"],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
    }

    #: Whether the engine keeps the Gram matrix of the members (``_gram``).
    _keeps_gram = False

    #: Parameters fixed for the whole of a stream: they shape its function
    #: space or its state, so a stream cannot go on once they change.
    _stream_params = ("kernel", "gamma", "degree", "coef0", "kernel_params", "average")

    @abstractmethod
    def __init__(
        self,
        *,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        kernel_params=None,
        max_iter=5,
        shuffle=True,
        average=False,
        warm_start=False,
        random_state=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.average = average
        self.warm_start = warm_start
        self.random_state = random_state

    # ------------------------------------------------------------------
    # What an algorithm states
    # ------------------------------------------------------------------
    @abstractmethod
    def _margin_threshold(self):
        """Largest margin at which the rule may update, or None if it never will.

        Rounds with a larger margin are neither passed to :meth:`_update`
        nor counted as mistakes; ``None`` freezes the hypothesis (mistakes
        are still counted).
        """

    @abstractmethod
    def _update(self, y, f, margin, k, kxx, weight):
        """Apply the rule to the current round.

        Parameters
        ----------
        y : int
            Class of the round: ``-1`` or ``+1`` with two classes, the index
            into ``classes_`` otherwise.
        f : ndarray of shape (n_rows,)
            Scores of the round before the update (one row with two classes).
        margin : float
            Margin of the round (``y f`` or ``f_y - max_{c != y} f_c``).
        k : ndarray of shape (n_members,)
            Kernel values between the round's row and the members.
        kxx : float
            ``k(x_t, x_t)``.
        weight : float
            Sample weight of the round; steps are multiplied by it.
        """

    def _reset_rule(self):
        """Reset the state of the rule beyond the support set."""

    def _on_add(self, k, kxx):
        """Called after a member was added at position ``self._n - 1``.

        ``k`` holds its kernel values with the members before it, ``kxx`` its
        own ``k(x, x)``.
        """

    def _on_remove(self, pos, last):
        """Called before the member at ``pos`` is replaced by the one at ``last``."""

    def _on_block_start(self, Xb, yb):
        """Called once the kernel work of a block (``self._blk``) is set up."""

    def _on_block_end(self):
        """Called after the last round of a block, while ``self._blk`` is alive.

        ``self._sv`` already holds the members' rows in position order.
        """

    # ------------------------------------------------------------------
    # Helpers for update rules
    # ------------------------------------------------------------------
    def _direction(self, y, f):
        """Coefficient change of a unit Perceptron step (ALGORITHMS.md, Multiclass).

        ``[y]`` with two classes; with more, ``+1`` on row ``y`` and ``-1`` on
        the best other class ``r = argmax_{c != y} f_c`` (Crammer and Singer).
        """
        if self._binary:
            return np.array([float(y)])
        g = f.copy()
        g[y] = -np.inf
        v = np.zeros(f.shape[0])
        v[y] = 1.0
        v[int(np.argmax(g))] = -1.0
        return v

    @property
    def _direction_sq_norm(self):
        """Squared norm of :meth:`_direction` (per unit of ``k(x, x)``)."""
        return 1.0 if self._binary else 2.0

    # ------------------------------------------------------------------
    # Operations on the hypothesis (valid inside _update)
    # ------------------------------------------------------------------
    def _grow(self, need):
        cap = self._alpha.shape[1]
        if need <= cap:
            return
        new = max(need, 2 * cap, 16)
        n = self._n

        def grown(a, axis=-1, fill=0):
            shape = list(a.shape)
            shape[axis] = new
            out = np.full(shape, fill, dtype=a.dtype)
            sl = [slice(None)] * a.ndim
            sl[axis] = slice(0, n)
            out[tuple(sl)] = a[tuple(sl)]
            return out

        self._alpha = grown(self._alpha)
        self._idx = grown(self._idx)
        self._born = grown(self._born)
        self._kdiag = grown(self._kdiag)
        self._cols = grown(self._cols)
        if self.average:
            self._acc = grown(self._acc)
            self._stamp = grown(self._stamp)
        if self._keeps_gram:
            g = np.zeros((new, new))
            g[:n, :n] = self._gram[:n, :n]
            self._gram = g

    def _sync_average(self, members):
        """Bring the running sums of ``members`` up to the current round."""
        if self.average:
            t = self._t
            self._acc[:, members] += self._alpha[:, members] * (t - self._stamp[members])
            self._stamp[members] = t

    def _member_row(self, j):
        """Kernel values of block row ``j`` with the current members."""
        blk, p = self._blk, self._blk.prefix
        row = blk.Kc[j]
        if p == self._n:
            return row[:p].copy()
        return np.concatenate((row[:p], row[self._cols[p : self._n]]))

    def _add_member(self, coef):
        """Add the current row to the support set with coefficients ``coef``."""
        blk = self._blk
        j, n = blk.j, self._n
        self._grow(n + 1)
        col = blk.Kc.shape[1] - blk.Kc.shape[0] + j
        coef = np.asarray(coef, dtype=np.float64)
        k = self._member_row(j)
        if self._keeps_gram:
            self._gram[n, :n] = k
            self._gram[:n, n] = k
            self._gram[n, n] = blk.diag[j]
        self._cols[n] = col
        self._alpha[:, n] = coef
        self._idx[n] = blk.index[j]
        self._born[n] = self._t
        self._kdiag[n] = blk.diag[j]
        if self.average:
            self._acc[:, n] = 0.0
            self._stamp[n] = self._t
        self._n = n + 1
        blk.F[j + 1 :] += np.outer(blk.Kc[j + 1 :, col], coef)
        blk.err += np.abs(coef).max() * blk.kmax
        self._updated = True
        self._on_add(k, blk.diag[j])
        return n

    def _remove_member(self, pos):
        """Remove the member at position ``pos`` (the last member takes its place)."""
        blk = self._blk
        j = blk.j
        last = self._n - 1
        col = self._cols[pos]
        blk.F[j + 1 :] -= np.outer(blk.Kc[j + 1 :, col], self._alpha[:, pos])
        blk.err += np.abs(self._alpha[:, pos]).max() * blk.kmax
        blk.prefix = min(blk.prefix, pos)
        if self.average:
            # The exact average keeps what the member contributed while it
            # was in the support set (ALGORITHMS.md, Online-to-batch).
            self._sync_average([pos])
            blk.retired_cols.append(col)
            self._retired_idx.append(self._idx[pos])
            self._retired_acc.append(self._acc[:, pos].copy())
        self._on_remove(pos, last)
        arrays = [self._alpha, self._idx, self._born, self._kdiag, self._cols]
        if self.average:
            arrays += [self._acc, self._stamp]
        for a in arrays:
            a[..., pos] = a[..., last]
        if self._keeps_gram:
            g = self._gram
            g[pos, :] = g[last, :]
            g[:, pos] = g[:, last]
            g[pos, pos] = g[last, last]
        self._n = last
        self._updated = True

    def _add_to_coef(self, delta):
        """Add ``delta`` (shape ``(n_rows, n_members)``) to the coefficients."""
        blk = self._blk
        n = self._n
        self._sync_average(slice(0, n))
        self._alpha[:, :n] += delta
        rest, p = blk.Kc[blk.j + 1 :], blk.prefix
        blk.F[blk.j + 1 :] += (
            rest[:, :p] @ delta[:, :p].T + rest[:, self._cols[p:n]] @ delta[:, p:].T
        )
        blk.err += np.abs(delta).sum(axis=1).max() * blk.kmax
        self._updated = True

    def _scale_coef(self, factor):
        """Multiply every coefficient by ``factor``."""
        blk = self._blk
        n = self._n
        self._sync_average(slice(0, n))
        self._alpha[:, :n] *= factor
        blk.F[blk.j + 1 :] *= factor
        self._updated = True

    # ------------------------------------------------------------------
    # The engine
    # ------------------------------------------------------------------
    def _reset(self, X):
        """Start a new stream: empty support set, counters at zero."""
        self._kernel = Kernel(
            self.kernel,
            gamma=resolve_gamma(self.gamma, X),
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
        )
        self._gamma = self._kernel.gamma
        n_rows = 1 if self._binary else len(self.classes_)
        self._sv = X[:0].copy() if not sp.issparse(X) else sp.csr_matrix(X[:0])
        self._n = 0
        self._alpha = np.zeros((n_rows, 0))
        self._idx = np.zeros(0, dtype=np.int64)
        self._born = np.zeros(0, dtype=np.int64)
        self._kdiag = np.zeros(0)
        self._cols = np.zeros(0, dtype=np.intp)
        self._acc = np.zeros((n_rows, 0))
        self._stamp = np.zeros(0, dtype=np.int64)
        self._gram = np.zeros((0, 0))
        self._retired_sv = self._sv
        self._retired_idx = []
        self._retired_acc = []
        self._t = 0
        self._n_seen = 0
        self._interrupted = False
        self._stream_config = {name: getattr(self, name) for name in self._stream_params}
        self.n_mistakes_ = 0
        self._rng = check_random_state(self.random_state)
        self._reset_rule()

    def _margins(self, G, labels):
        """Margins of scores ``G`` (shape ``(..., n_rows, m)``) for ``labels`` (m,).

        ``y f`` with two classes, ``f_y - max_{c != y} f_c`` otherwise.
        """
        if self._binary:
            return labels * G[..., 0, :]
        idx = np.arange(labels.shape[0])
        gy = G[..., labels, idx]
        H = G.copy()
        H[..., labels, idx] = -np.inf
        return gy - H.max(axis=-2)

    def _play(self, X, y, w, index):
        """Play the rounds ``(X[i], y[i])`` in order.

        ``y`` holds ``-1/+1`` (two classes) or class indices, ``w`` the sample
        weights (all positive) and ``index`` the identifier stored in
        ``support_`` for each row.
        """
        for start in range(0, X.shape[0], _BLOCK_SIZE):
            sl = slice(start, start + _BLOCK_SIZE)
            self._play_block(X[sl], y[sl], w[sl], index[sl])

    def _play_guarded(self, X, y, w, index):
        """:meth:`_play`, marking the stream as broken if it stops half-way."""
        try:
            self._play(X, y, w, index)
        except BaseException:
            # Interrupted (KeyboardInterrupt, a failing callable kernel...):
            # the public attributes still describe the last complete call.
            self._interrupted = True
            self._blk = None
            raise

    def _play_block(self, Xb, yb, wb, index):
        b = Xb.shape[0]
        m0 = self._n
        Z = _vstack(self._sv, Xb)
        blk = self._blk = _Block()
        blk.Kc = self._kernel(Xb, Z)
        blk.diag = self._kernel.diag(Xb)
        blk.index = index
        blk.retired_cols = []
        self._cols[:m0] = np.arange(m0)
        blk.prefix = m0
        # A contiguous copy of the coefficients keeps this product in BLAS.
        blk.F = F = blk.Kc[:, :m0] @ np.ascontiguousarray(self._alpha[:, :m0].T)
        self._on_block_start(Xb, yb)
        kmax = self._kernel.abs_bound(blk.diag, np.concatenate([self._kdiag[:m0], blk.diag]))
        if kmax is None:
            kmax = np.abs(blk.Kc).max(initial=0.0)
        blk.kmax = kmax
        blk.err = np.abs(self._alpha[:, :m0]).sum(axis=1).max(initial=0.0) * kmax
        i, candidates = 0, None
        while i < b:
            thr = self._margin_threshold()
            if candidates is None:
                # Candidate rounds for the rest of the block. The rounding of
                # F is a few eps * blk.err per update, far below the
                # tolerance, so no round that needs an update (or is a
                # mistake) is skipped.
                margins = self._margins(F[i:].T, yb[i:])
                tol = _CANDIDATE_RTOL * (1.0 + np.abs(F[i:]).max(axis=1) + blk.err)
                limit = 0.0 if thr is None else max(thr, 0.0)
                candidates = i + np.flatnonzero(margins <= limit + tol)
                c = 0
            if c == candidates.size:
                self._t += b - i
                break
            j = blk.j = int(candidates[c])
            c += 1
            self._t += j - i + 1
            n = self._n
            k = self._member_row(j)
            f = self._alpha[:, :n] @ k
            yj = yb[j]
            if self._binary:
                margin = float(yj * f[0])
            else:
                margin = float(f[yj] - np.max(np.delete(f, yj)))
            if margin <= 0:
                self.n_mistakes_ += 1
            self._updated = False
            if thr is not None and margin <= thr:
                self._update(yj, f, margin, k, float(blk.diag[j]), float(wb[j]))
            if self._updated:
                self._n_updates += 1
                candidates = None
            i = j + 1
        # Keep the rows of the members (and of the retired ones) for later blocks.
        n = self._n
        self._sv = Z[self._cols[:n]]
        if blk.retired_cols:
            self._retired_sv = _vstack(self._retired_sv, Z[np.asarray(blk.retired_cols)])
        self._on_block_end()
        self._blk = None

    # ------------------------------------------------------------------
    # Validation and the public API
    # ------------------------------------------------------------------
    def _validate_X(self, X, reset):
        nonneg = is_nonnegative_kernel(self.kernel)
        X = validate_data(
            self,
            X,
            accept_sparse=False if nonneg else "csr",
            dtype=np.float64,
            reset=reset,
        )
        if nonneg:
            check_non_negative(X, f"{type(self).__name__} with kernel={self.kernel!r}")
        return X

    def _check_stream_continues(self):
        """Refuse to go on with a stream that cannot be continued exactly."""
        if self._interrupted:
            raise ValueError(
                "A previous call was interrupted in the middle of the stream, so the "
                "model's state is inconsistent: call fit with warm_start=False to start "
                "a new stream."
            )
        changed = []
        for name, old in self._stream_config.items():
            new = getattr(self, name)
            try:
                same = old is new or bool(old == new)
            except (TypeError, ValueError):
                same = False
            if not same:
                changed.append(f"{name}={old!r} -> {new!r}")
        if changed:
            raise ValueError(
                f"Parameters fixed for the stream changed since it started ({', '.join(changed)}): "
                "call fit with warm_start=False (or clone the estimator) to start a new stream."
            )

    def _validate_fit_input(self, X, y, sample_weight, classes, reset):
        """Validate everything before any state is touched."""
        # validate_data(reset=True) sets n_features_in_ and feature_names_in_
        # before the checks that follow it: a rejected call restores them.
        saved = {
            k: v for k, v in vars(self).items() if k in ("n_features_in_", "feature_names_in_")
        }
        try:
            return self._validate_fit_input_unsafe(X, y, sample_weight, classes, reset)
        except Exception:
            for name in ("n_features_in_", "feature_names_in_"):
                if name in saved:
                    setattr(self, name, saved[name])
                else:
                    vars(self).pop(name, None)
            raise

    def _validate_fit_input_unsafe(self, X, y, sample_weight, classes, reset):
        X = self._validate_X(X, reset=reset)
        check_classification_targets(y)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        if classes is None:
            classes = unique_labels(y)
        unseen = np.setdiff1d(unique_labels(y), classes)
        if unseen.size:
            raise ValueError(
                f"y contains labels {unseen.tolist()} that are not in classes={classes.tolist()}."
            )
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        if sample_weight is None:
            w = np.ones(X.shape[0])
        else:
            w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
            if not np.any(w > 0):
                raise ValueError("The sample weights are all zero: at least one must be positive.")
        y_enc = np.searchsorted(classes, y)
        if len(classes) == 2:
            y_enc = 2.0 * y_enc - 1.0
        return X, y_enc, w, classes

    def _keep_weighted(self, X, y, w, index):
        """Rows of zero weight are dropped from the stream (never played)."""
        if np.all(w > 0):
            return X, y, w, index
        keep = np.flatnonzero(w > 0)
        return X[keep], y[keep], w[keep], index[keep]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model with ``max_iter`` online epochs over ``(X, y)``.

        Unless ``warm_start=True``, the model is reset first. Each epoch plays
        the rows as a stream (reshuffled when ``shuffle=True``); fitting stops
        early after an epoch without any update. With ``average=True`` the
        fitted hypothesis is the average of the hypotheses of every round
        played (the online-to-batch conversion).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample: the step taken on that sample is
            multiplied by its weight, and samples of weight zero are not
            played at all.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        warm = self.warm_start and hasattr(self, "_alpha")
        reset = not warm
        if warm:
            self._check_stream_continues()
        X, y_enc, w, classes = self._validate_fit_input(X, y, sample_weight, None, reset=reset)
        if warm and not np.array_equal(classes, self.classes_):
            raise ValueError(
                f"The classes of y {classes.tolist()} differ from those of the "
                f"warm-started model {self.classes_.tolist()}."
            )
        self.classes_ = classes
        self._binary = len(classes) == 2
        if reset:
            self._reset(X)
        rng = _shuffle_rng(self.random_state)
        # Rows are numbered after those of earlier calls of the stream (a
        # fit that starts the stream numbers them as rows of X).
        index = self._n_seen + np.arange(X.shape[0])
        Xp, yp, wp, ip = self._keep_weighted(X, y_enc, w, index)
        self.n_iter_ = 0
        for _ in range(self.max_iter):
            self._n_updates = 0
            order = rng.permutation(Xp.shape[0]) if self.shuffle else np.arange(Xp.shape[0])
            self._play_guarded(Xp[order], yp[order], wp[order], ip[order])
            self.n_iter_ += 1
            if self._n_updates == 0:
                break
        self._n_seen += X.shape[0]
        self._publish()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Play the rows of ``(X, y)`` as the next rounds of the stream.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The next rows of the stream.
        y : array-like of shape (n_samples,)
            Their labels.
        classes : array-like of shape (n_classes,), default=None
            All the classes of the stream. Required on the first call (unless
            the model was fitted with :meth:`fit`); later calls may omit it
            or must repeat it exactly.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample: the step taken on that sample is
            multiplied by its weight, and samples of weight zero are not
            played at all.

        Returns
        -------
        self : object
            The updated estimator.
        """
        first = not hasattr(self, "classes_")
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            classes = unique_labels(classes)
        elif classes is not None:
            if not np.array_equal(self.classes_, unique_labels(classes)):
                raise ValueError(
                    f"`classes={classes!r}` is not the same as on last call to "
                    f"partial_fit, was: {self.classes_!r}"
                )
        if not first:
            self._check_stream_continues()
            classes = self.classes_
        X, y_enc, w, classes = self._validate_fit_input(X, y, sample_weight, classes, reset=first)
        if first:
            self.classes_ = classes
            self._binary = len(classes) == 2
            self._reset(X)
        index = self._n_seen + np.arange(X.shape[0])
        self._n_updates = 0
        self._play_guarded(*self._keep_weighted(X, y_enc, w, index))
        self._n_seen += X.shape[0]
        self.n_iter_ = 1
        self._publish()
        return self

    def _publish(self):
        """Set the public attributes from the internal state."""
        n = self._n
        sv, idx, coef = self._sv, self._idx[:n], self._alpha[:, :n]
        if self.average and self._t > 0:
            coef = (self._acc[:, :n] + coef * (self._t - self._stamp[:n])) / self._t
            if self._retired_idx:
                sv = _vstack(sv, self._retired_sv)
                idx = np.concatenate([idx, self._retired_idx])
                coef = np.hstack([coef, np.array(self._retired_acc).T / self._t])
            # A member that joined on the last round played took part in no
            # hypothesis of the average.
            used = np.any(coef != 0, axis=0)
            if not used.all():
                sv, idx, coef = sv[np.flatnonzero(used)], idx[used], coef[:, used]
        # One entry per training example: a row that entered the support set
        # several times (later epochs of fit) has its coefficients summed.
        uidx, first, inverse = np.unique(idx, return_index=True, return_inverse=True)
        if uidx.size != idx.size:
            merged = np.zeros((coef.shape[0], uidx.size))
            np.add.at(merged.T, inverse.ravel(), coef.T)
            coef = merged
        else:
            coef = coef[:, np.argsort(idx, kind="stable")]
        self.support_ = uidx
        self.support_vectors_ = sv[first]
        self.dual_coef_ = np.ascontiguousarray(coef)

    def decision_function(self, X):
        """Scores of the fitted hypothesis, ``f(x) = sum_i dual_coef_[:, i] k(sv_i, x)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``f(x)`` for two classes (positive means ``classes_[1]``), one
            column per class otherwise.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        scores = np.empty((X.shape[0], self.dual_coef_.shape[0]))
        # Rows per kernel block within sklearn's working_memory setting.
        chunk = get_chunk_n_rows(
            row_bytes=8 * max(1, self.dual_coef_.shape[1]), max_n_rows=X.shape[0]
        )
        for sl in gen_batches(X.shape[0], max(1, chunk)):
            scores[sl] = self._kernel(X[sl], self.support_vectors_) @ self.dual_coef_.T
        return scores[:, 0] if self._binary else scores

    def predict(self, X):
        """Predict class labels for samples in X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the score is positive and ``classes_[0]``
            otherwise (two classes); the class of the largest score otherwise.
        """
        scores = self.decision_function(X)
        if self._binary:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        nonneg = is_nonnegative_kernel(self.kernel)
        tags.input_tags.sparse = not nonneg
        tags.input_tags.positive_only = nonneg
        return tags
