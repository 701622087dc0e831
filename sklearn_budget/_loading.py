"""Loading a hypothesis into a kernel estimator, for parameter mixing.

A copy of an estimator is made a fitted model whose hypothesis is a given
kernel expansion, as after some rounds of a stream, with the state of its
rule rebuilt from it, so that ``partial_fit`` goes on from it as the rule
would (``sklearn_budget/_mixing.py``).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import unique_labels

from ._averaging import _conversion
from ._kernels import single_blas_thread


class _LoadingMixin:
    """Make a kernel estimator the fitted model of a given expansion."""

    def _load_expansion(
        self,
        X,
        classes,
        support_vectors,
        dual_coef,
        index=None,
        rounds=0,
        rule_state=None,
        bins=None,
        n_seen=0,
        n_mistakes=0,
    ):
        """Make this estimator a fitted model whose hypothesis is an expansion.

        The hypothesis becomes ``f = sum_j dual_coef[:, j] k(support_vectors[j], .)``
        as after ``rounds`` rounds of a stream, with the state of the rule
        rebuilt from it (:meth:`_load_rule_state`), so that ``partial_fit``
        goes on from ``f`` as the rule would. The members are loaded oldest
        first in the order given. ``X``: rows in the format of the stream to
        come (they fix the width, dense or sparse, and ``gamma='scale'``;
        they are not played). ``index``: the stream index of each member
        (default -1, not a row of the stream); the rows of later calls are
        numbered from ``n_seen``. ``rule_state``: the rule's scalars of
        :meth:`_rule_summary`. With ``average`` the running average starts
        as ``f`` held for ``rounds`` rounds. ``bins``: the bins of the
        progressive margins (``cal_*`` arrays, empty by default);
        ``n_mistakes``: the mistake count. Fails without changing anything.
        """
        # The load replaces the state: the transaction records the __dict__ alone.
        with self._transaction(deep=False):
            self._load_hypothesis(
                X,
                classes,
                support_vectors,
                dual_coef,
                index,
                rounds,
                rule_state,
                bins,
                n_seen,
                n_mistakes,
            )
        return self

    def _load_hypothesis(
        self,
        X,
        classes,
        support_vectors,
        dual_coef,
        index,
        rounds,
        rule_state,
        bins,
        n_seen,
        n_mistakes,
    ):
        """:meth:`_load_expansion`, within its transaction."""
        self._validate_params()
        if _conversion(self.average) not in ("last", "average"):
            raise ValueError(
                f"average={self.average!r}: a hypothesis can be loaded only with "
                "average=False or average=True."
            )
        X = self._validate_X(X, reset=True)
        classes = unique_labels(classes)
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        self.classes_ = classes
        self._reset(X)
        if support_vectors.shape[0] == 0:
            sv = self._as_stream_format(X[:0])
        else:
            sv = self._as_stream_format(self._validate_X(support_vectors, reset=False))
        m, n_rows = sv.shape[0], self._state["alpha"].shape[1]
        coef = np.asarray(dual_coef, dtype=np.float64).reshape(n_rows, m)
        if not np.isfinite(coef).all():
            raise ValueError("The coefficients of the loaded expansion are not all finite.")
        budget = getattr(self, "budget", None)
        if budget is not None and m > budget:
            raise ValueError(f"{m} members do not fit in budget={budget}.")
        index = np.full(m, -1, dtype=np.int64) if index is None else np.asarray(index)
        rounds = int(rounds)
        if index.shape != (m,) or rounds < 0:
            raise ValueError("index must have one entry per member and rounds be >= 0.")
        gram = np.ascontiguousarray(self._kernel_matrix(sv, sv), dtype=np.float64).reshape(m, m)
        # Symmetric, as the rounds build it (each member's values with the
        # older ones, the lower triangle here, where the members are by age):
        # the rules read a member's values along its row.
        upper = np.triu_indices(m, 1)
        gram[upper] = gram.T[upper]
        wscale = self._load_scale(m, rounds)
        self._ensure_capacity(m)
        state = self._state
        state["alpha"][:m] = coef.T / wscale
        state["idx"][:m] = index
        # Older than any member the stream adds (born on rounds > ``rounds``).
        state["born"][:m] = rounds - m + 1 + np.arange(m)
        state["kdiag"][:m] = np.diag(gram)
        state["cols"][:m] = np.arange(m)
        if self._averages:
            # The running sums in true units: f held for ``rounds`` rounds,
            # each sum brought up to the clock (0) of the stream to come.
            state["acc"][:m] = coef.T * rounds
            state["stamp"][:m] = 0.0
        if self._keeps_gram:
            state["gram"][:m, :m] = gram
        if self._dense:
            state["Xs"][:m] = sv
        else:
            self._sv_sparse = sp.csr_matrix(sv)
        state["counters"][:] = (m, rounds, int(n_mistakes), 0)
        state["scale"][:] = (wscale, 0.0)
        for name, array in (bins or {}).items():
            if state[name].shape != np.shape(array):
                raise ValueError(
                    f"bins[{name!r}] has shape {np.shape(array)}, not {state[name].shape}."
                )
            state[name][...] = array
        self._load_rule_state(gram, coef, dict(rule_state or {}))
        self._n_seen = int(n_seen)
        self.n_mistakes_ = int(n_mistakes)
        self.n_iter_ = 0

    def _load_scale(self, n_members, rounds):
        """Global scale of the stored coefficients of a loaded hypothesis."""
        return 1.0

    def _load_rule_state(self, gram, coef, rule_state):
        """Rebuild the rule's own state for the members just loaded.

        ``gram``: their Gram matrix; ``coef``: their coefficients (true
        units, shape (n_rows, n_members)); ``rule_state``: the scalars of
        :meth:`_rule_summary` (empty: those of a new stream).
        """
        if rule_state:
            raise ValueError(f"{type(self).__name__} keeps no scalars {sorted(rule_state)}.")

    def _rule_summary(self):
        """The rule's scalars that a mixed hypothesis averages (name: array)."""
        return {}

    @staticmethod
    def _load_factor(gram, rtol):
        """Lower Cholesky factor of the Gram matrix of loaded members.

        Refuses members whose squared distance to the span of the earlier
        ones is at most ``rtol k(x, x)``: the rules that keep a factor never
        add such a member (they project it), and its pivot would make the
        factor singular.
        """
        L, _, dropped = independent_factor(gram, rtol)
        if dropped:
            raise ValueError(
                f"Member {dropped[0][0]} of the loaded expansion lies in the span of the "
                "members before it: compress the expansion first (see _mixing.compress)."
            )
        return L


@single_blas_thread()  # the same factor for any thread count
def independent_factor(gram, rtol):
    """The Cholesky factor of the members not in the span of those before them.

    Walks the members in order: one whose squared distance to the span of
    the members kept before it is at most ``rtol k(x, x)`` is not kept.
    Returns the lower factor ``L`` of the kept members' Gram matrix, their
    indices, and for each member not kept ``(index, beta)``: ``beta`` the
    coefficients of its projection onto the members kept before it (a
    prefix of the kept ones), ``K_kk^-1 K_k,i``.
    """
    m = gram.shape[0]
    L = np.zeros((m, m))
    kept, dropped = [], []
    for i in range(m):
        k = len(kept)
        z = np.linalg.solve(L[:k, :k], gram[i, kept]) if k else np.zeros(0)
        delta2 = gram[i, i] - z @ z
        if delta2 > rtol * gram[i, i]:
            L[k, :k] = z
            L[k, k] = np.sqrt(delta2)
            kept.append(i)
        else:
            dropped.append((i, np.linalg.solve(L[:k, :k].T, z) if k else np.zeros(0)))
    k = len(kept)
    return L[:k, :k], np.asarray(kept, dtype=np.intp), dropped
