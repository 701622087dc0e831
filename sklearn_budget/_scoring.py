"""Scores of the kernel estimators: the decision function, the vote, the probabilities.

The published expansion scores new rows with the kernel values computed as
the rounds compute them where that pays (:meth:`_ScoringMixin._kernel_matrix`),
so that a model predicts the rows it learnt as it learnt them. Their products
run on one BLAS thread, so that the scores have the same bits whatever the
threads the process allows (a product on threads may sum in another order).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils.validation import check_is_fitted

from ._calibration import log_probabilities
from ._kernels import (
    CSRRows,
    _nonfinite_scores,
    expansion_batches,
    kernel_values,
    single_blas_thread,
)
from ._rounds import _direct_pays


class _ScoringMixin:
    """``decision_function`` and the probabilities of a kernel estimator."""

    def decision_function(self, X):
        """Scores of the fitted hypothesis, ``f(x) = sum_i dual_coef_[:, i] k(sv_i, x)``.

        With ``average='vote'`` (offered by the estimators whose hypotheses
        played are the prefixes of their updates), the shares of the vote of
        the hypotheses ``f_k`` played online, each weighted by the number of
        rounds ``c_k`` it predicted (``vote_counts_``): for two classes
        ``sum_k c_k sign(f_k(x)) / sum_k c_k``, in ``[-1, 1]``; otherwise,
        for each class, the fraction of the rounds whose hypothesis has it
        as its highest-scoring class. A hypothesis with ``f_k(x) = 0`` (the
        empty initial one, or one whose kernel values at ``x`` vanish)
        abstains, so the fractions may sum to less than one.

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
        if "_state" not in vars(self):
            check_is_fitted(self)
        return self._scores(self._validate_X(X, reset=False))

    def _scores(self, X):
        """:meth:`decision_function` of rows validated already."""
        if self._conversion == "vote":
            votes = self._votes(X) / max(self.vote_counts_.sum(), 1)
            return votes[:, 1] - votes[:, 0] if self._binary else votes
        scores = self._expansion(X, self.support_vectors_, self.dual_coef_)
        return scores[:, 0] if self._binary else scores

    @single_blas_thread()
    def _kernel_matrix(self, X, Z, by_differences=None):
        """``K(X, Z)``, computed as the rounds compute it where that pays.

        For a compiled kernel on dense rows, the values come from the
        differences of the rows (as in the direct path of the rounds) when
        that is cheaper than one ``pairwise_kernels`` call (few rows, low
        dimension), or when the blocked formula overflows: the rbf
        expansion ``||x||^2 + ||z||^2 - 2 x.z`` gives ``inf - inf`` for a
        huge member that the rounds, and so the model, handle.

        ``by_differences``: the choice made for a call of which ``X`` is a
        block of rows (:meth:`_expansion`): True, from the differences;
        False, by the blocked formula, or None where it overflows. None
        (the default): chosen here, with the fallback above.
        """
        code = self._kernel_code
        sparse = sp.issparse(X) or sp.issparse(Z) or type(X) is CSRRows or type(Z) is CSRRows
        if code is None or sparse or not (X.shape[0] and Z.shape[0]):
            return self._kernel(X, Z)
        chosen = by_differences
        if chosen is None:
            chosen = self._by_differences(X.shape[0], Z.shape[0], X.shape[1])
        if not chosen:
            with np.errstate(all="ignore"):  # overflow: recomputed below
                K = self._kernel(X, Z)
            if np.isfinite(K).all():
                return K
            if by_differences is not None:
                return None
        return kernel_values(self._kernel, code, X, Z)

    @staticmethod
    def _by_differences(n_rows, n_members, n_features):
        """Whether :meth:`_kernel_matrix` computes the values of ``n_rows``
        dense rows with ``n_members`` rows (of a compiled kernel) from their
        differences, without trying one ``pairwise_kernels`` call first."""
        return _direct_pays(n_members, n_rows, n_features, within_block=False)

    @single_blas_thread()
    def _expansion(self, X, support_vectors, coef):
        """Scores ``K(X, support_vectors) @ coef.T``, in blocks of rows (see
        :meth:`_kernel_matrix`); raises ValueError if they overflow."""
        if self._kernel_code is None or sp.issparse(X):
            return self._kernel.expansion(X, support_vectors, coef)
        n = X.shape[0]
        batches = [slice(0, n)]
        if n * max(1, coef.shape[1]) > 65536:
            batches = expansion_batches(n, coef.shape[1])
        scores = np.empty((n, coef.shape[0]))
        # Every block by the formula that one block of all the rows would
        # take: the differences where they pay for all the rows, or where
        # the blocked formula overflows in any block (then all are redone).
        first = self._by_differences(n, support_vectors.shape[0], X.shape[1])
        with np.errstate(all="ignore"):  # overflow is reported below
            for by_differences in (first, True):
                for sl in batches:
                    K = self._kernel_matrix(X[sl], support_vectors, by_differences)
                    if K is None:
                        break
                    scores[sl] = K @ coef.T
                    del K  # one block of values at a time
                else:
                    break
        if not np.isfinite(scores).all():
            raise _nonfinite_scores(X)
        return scores

    @single_blas_thread()
    def _votes(self, X):
        """Rounds whose hypothesis votes for each class, shape (n_samples, n_classes).

        The voted Perceptron of Freund and Schapire (1999). The hypothesis
        after ``k`` updates is the sum of the first ``k`` terms
        ``vote_dual_coef_[:, i] k(sv_{vote_index_[i]}, x)``, so one kernel
        row with the support vectors and a cumulative sum over the updates
        give every ``f_k(x)``: ``O(n_updates * n_classes)`` per row beyond
        the kernel row. ``f_k`` casts ``vote_counts_[k]`` votes, for
        ``sign(f_k(x))`` or its highest-scoring class (ties to the first, as
        in :meth:`predict`); ``f_k(x) = 0``, always the case for the empty
        ``f_0``, abstains.
        """
        counts = self.vote_counts_[1:].astype(np.float64)
        coef = self.vote_dual_coef_
        R, m = coef.shape
        votes = np.zeros((X.shape[0], len(self.classes_)))
        # Per row: the kernel values, the prefix sums of every class and the
        # temporaries of the tally.
        row_bytes = 8 * (self.support_vectors_.shape[0] + (R + 4) * m + 1)
        chunk = get_chunk_n_rows(row_bytes=row_bytes, max_n_rows=X.shape[0])
        for sl in gen_batches(X.shape[0], max(1, chunk)):
            with np.errstate(all="ignore"):  # overflow is reported below
                K = self._kernel_matrix(X[sl], self.support_vectors_)[:, self.vote_index_]
                # F[c][:, k] is f_{k+1, c}(x): prefix sums over the updates.
                F = [np.cumsum(K * coef[c], axis=1) for c in range(R)]
            # A prefix sum that overflows stays infinite or NaN to the end.
            if m and not all(np.isfinite(Fc[:, -1]).all() for Fc in F):
                raise _nonfinite_scores(X)
            if self._binary:
                votes[sl, 1] = (F[0] > 0) @ counts
                votes[sl, 0] = (F[0] < 0) @ counts
                continue
            # The first highest-scoring class of each hypothesis (as argmax),
            # or R where it abstains; then the votes of each row by class.
            winner, best, voting = np.zeros(K.shape, dtype=np.intp), F[0].copy(), F[0] != 0
            for c in range(1, R):
                np.copyto(winner, c, where=F[c] > best)
                np.maximum(best, F[c], out=best)
                voting |= F[c] != 0
            winner[~voting] = R
            winner += (R + 1) * np.arange(K.shape[0])[:, None]
            weights = np.broadcast_to(counts, K.shape).ravel()
            tally = np.bincount(winner.ravel(), weights, minlength=K.shape[0] * (R + 1))
            votes[sl] = tally.reshape(-1, R + 1)[:, :R]
        return votes

    def predict_proba(self, X):
        """Probability estimates from the progressive margins of the stream.

        Every round's margin ``m_t`` is computed before the round's update,
        so it is out of sample. ``proba_scale_`` is fitted on them by maximum
        likelihood as ``P(correct) = sigmoid(a m_t - log(C - 1))`` with ``C``
        classes (Platt scaling without an intercept, with Platt's smoothed
        targets; round ``t`` weighs ``t``, so that the hypotheses nearer the
        final one count more; in ``fit``, the first epoch only, whose rows
        are unseen, rescaled by the ratio of the norms of the final model
        and of the model after that epoch). With ``average=True`` the
        margins are those of every fourth round up to round 8192, then of a
        stride doubled at each doubling of the round count, under the
        average of the hypotheses up to it (see the user guide,
        "Probabilities"). The
        probabilities are
        ``sigmoid(a f(x))`` for two classes and ``softmax(a f(x))`` otherwise,
        so that they agree with :meth:`predict`.

        With ``average='vote'`` they are the shares of the vote instead (see
        :meth:`decision_function`), smoothed: with ``C`` classes, ``T`` the
        rounds played, ``V_c`` the rounds whose hypothesis votes for class
        ``c`` and ``A`` those whose hypothesis abstains,
        ``P(c) = (V_c + A / C + 1) / (T + C)`` (the abstentions shared
        equally, then Laplace's rule of succession). No probability is zero,
        and they are ordered as the vote, so that they agree with
        :meth:`predict`. ``proba_scale_`` does not enter: they are the
        proportions of a vote, not calibrated probabilities (for those, see
        :class:`~sklearn.calibration.CalibratedClassifierCV`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probability of each class, in the order of ``classes_``.
        """
        return np.exp(self.predict_log_proba(X))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, computed without underflow.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probability of each class, in the order of ``classes_``.
        """
        if "_state" not in vars(self):
            check_is_fitted(self)
        if self._conversion == "vote":
            votes = self._votes(self._validate_X(X, reset=False))
            # The abstentions are shared equally, then each class gets one
            # vote more (Laplace's rule of succession): never zero, ordered
            # as the shares of decision_function.
            n_classes, total = votes.shape[1], self.vote_counts_.sum()
            abstained = total - votes.sum(axis=1, keepdims=True)
            return np.log(votes + abstained / n_classes + 1.0) - np.log(total + n_classes)
        scores = self.proba_scale_ * self.decision_function(X)
        return log_probabilities(scores, self._binary)
