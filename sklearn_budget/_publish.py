"""The fitted attributes of the kernel estimators, derived from their state.

``support_``, ``support_vectors_``, ``dual_coef_``, ``proba_scale_`` and,
for ``average='vote'``, the hypotheses of the vote are derived from the
state when first read after a call that changed it, not by every call: the
average within the budget compresses the pool and the current members
(``O(budget^2 n_features)``), and a stream of one-row calls would pay it per
row. A call of at least ``budget`` rounds publishes that average before it
returns (:meth:`_PublishMixin._publish_now`), so that its first prediction
costs what the next ones do; shorter calls leave it to the first read. They
are cached beside the estimator (:func:`~sklearn_budget._transaction.published`),
so that reading them does not change its ``__dict__``; every call that
changes the model drops them.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from functools import partial

import numpy as np
import scipy.sparse as sp

from ._calibration import SCALE_HINTS, fit_scale
from ._transaction import published


def _fitted_property(name):
    """A fitted attribute derived from the state on first access after a change."""

    def get(self):
        return self._fitted_attribute(name)

    get.__name__ = name
    return property(get)


class _PublishMixin:
    """The fitted attributes of a kernel estimator, published from its state."""

    support_ = _fitted_property("support_")
    support_vectors_ = _fitted_property("support_vectors_")
    dual_coef_ = _fitted_property("dual_coef_")
    proba_scale_ = _fitted_property("proba_scale_")
    vote_index_ = _fitted_property("vote_index_")
    vote_dual_coef_ = _fitted_property("vote_dual_coef_")
    vote_counts_ = _fitted_property("vote_counts_")

    def _fitted_attribute(self, name):
        """The fitted attribute ``name``, derived from the state and cached."""
        if "_state" not in vars(self) or (name.startswith("vote_") and self._conversion != "vote"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if name == "proba_scale_":
            return self._proba_scale(partial(fit_scale, self._state))
        cache = published(self)
        if name not in cache:
            cache.update(self._publish())
        return cache[name]

    def _proba_scale(self, fit):
        """``proba_scale_``, cached until the state changes: else ``fit(start)``
        of the bins, from the last scale fitted on the stream (None at first),
        which it then becomes."""
        cache = published(self)
        scale = cache.get("proba_scale_")
        if scale is None:
            scale = cache["proba_scale_"] = SCALE_HINTS[self] = fit(SCALE_HINTS.get(self))
        return scale

    def _publish_now(self):
        """Derive and cache the fitted attributes of the model (inside the
        call's transaction, which puts the old ones back if it fails)."""
        published(self).update(self._publish())

    def _publish(self):
        """The fitted attributes that the state determines, as a dict."""
        n, t, state = self._n, self._t, self._state
        sv, idx, coef = self._sv, state["idx"][:n], state["alpha"][:n].T
        if self._averages and t > 0:
            sv, idx, coef = self._averaged_members(sv, idx, coef)
        elif state["scale"][0] != 1.0:
            coef = coef * state["scale"][0]
        # One entry per training example: a row that entered the support set
        # several times (later epochs of fit) has its coefficients summed.
        # Members that are not rows of the stream (index -1) come last.
        rows, new = np.flatnonzero(idx >= 0), np.flatnonzero(idx < 0)
        order = np.argsort(idx[rows], kind="stable")
        uidx = idx[rows][order]
        if uidx.size < 2 or (uidx[1:] != uidx[:-1]).all():
            # Every row entered once (always so within partial_fit): no merge.
            first, inverse = order, np.empty_like(order)
            inverse[order] = np.arange(order.size)
            coef_rows = coef[:, rows[order]]
        else:
            uidx, first, inverse = np.unique(idx[rows], return_index=True, return_inverse=True)
            merged = np.zeros((coef.shape[0], uidx.size))
            np.add.at(merged.T, inverse.ravel(), coef[:, rows].T)
            coef_rows = merged
        keep = np.concatenate([rows[first], new])
        out = {"support_": np.concatenate([uidx, idx[new]])}
        if self._conversion == "vote":
            # The column of each member among the support vectors.
            column = np.empty(idx.size, dtype=np.intp)
            column[rows] = inverse.ravel()
            column[new] = uidx.size + np.arange(new.size)
            out.update(self._publish_vote(column, coef))
        coef = np.hstack([coef_rows, coef[:, new]])
        sv = sv[keep]
        out["support_vectors_"] = sv if sp.issparse(sv) else np.ascontiguousarray(sv)
        out["dual_coef_"] = np.ascontiguousarray(coef)
        return out

    def _publish_vote(self, column, coef):
        """The hypotheses played and their counts, for ``average='vote'``.

        Offered only by rules that never change a member once it has joined
        and never remove one: every update appends a member (a row that errs
        again in a later epoch joins again), so the hypothesis played after
        ``k`` updates is the sum over the first ``k`` members in position
        order. ``born`` holds the round of each update, which that round's
        hypothesis still predicted: the counts are the differences of the
        rounds of consecutive updates, one number per hypothesis.
        """
        return {
            "vote_index_": column,
            "vote_dual_coef_": np.ascontiguousarray(coef),
            "vote_counts_": np.diff(self._state["born"][: self._n], prepend=0, append=self._t),
        }
