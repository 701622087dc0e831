"""Budget Perceptron (Crammer, Kandola and Singer) and Tighter Budget Perceptron
(Weston, Bordes and Bottou)."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import _vstack
from ._perceptron import KernelPerceptron, _doc

# Scores of the removal rules that differ by less than this (relative to the
# size of the hypothesis, sum_i |alpha_i| max_i k(x_i, x_i)) are ties, and a
# margin that small counts as an error: below it the order of the floating
# point operations decides, not the algorithm.
_TIE_RTOL = 1e-9

# Largest number of entries of the candidates x classes x evaluation set
# array built at once by the multiclass error count.
_CHUNK = 1 << 21

_UPDATE_DOC = """
    budget : int, default=100
        Maximum number of support vectors (the cache limit ``p``).

    beta : float, default=0.0
        Margin: the rule updates on rounds with ``y_t f(x_t) <= beta``.
        Not used with ``update='nobias_svm'``, which updates on margin
        errors (``beta = 1`` in the paper).

    update : {'perceptron', 'mira', 'nobias_svm'}, default='perceptron'
        Step ``tau`` of the new member (its coefficient is ``tau y_t``;
        Weston et al., Fig. 2), with ``m_t = y_t f(x_t)``:

        - ``'perceptron'``: ``tau = 1``;
        - ``'mira'``: ``tau = min(1, max(0, -m_t / k(x_t, x_t)))``;
        - ``'nobias_svm'``: ``tau = min(C, max(0, (1 - m_t) / k(x_t, x_t)))``.

    C : float, default=1.0
        Largest step of ``update='nobias_svm'``; not used otherwise.
"""

_UPDATE_NOTES = """
    A round with a step of 0 changes nothing: nothing is removed and
    nothing is added. The step is computed from the scores before the
    removal. Sample weights multiply the step.

    MIRA's step is 0 whenever ``f(x_t) = 0``, so from the empty hypothesis
    it would never start. **Decision**: while the support set is empty,
    ``update='mira'`` takes the Perceptron step ``tau = 1``; afterwards it
    follows the formula, whose step may still be 0.

    With more than two classes, the margin is ``m_t = f_y - max_{c != y}
    f_c``, the step moves the row of ``y`` up and the row of the best other
    class down (Crammer and Singer), and ``k(x_t, x_t)`` is replaced by the
    squared norm of that direction, ``2 k(x_t, x_t)``, in the MIRA and
    No-Bias-SVM steps; with two classes everything is the binary rule.
"""


class _BaseBudgetPerceptron(KernelPerceptron):
    """Update rules of the Budget Perceptrons; subclasses choose the member
    to remove (``_removal_choice``).

    The engine keeps the Gram matrix of the members, from which ``_fS``, the
    scores ``f(x_j)`` of the members, is kept current: ``O(budget)`` per
    insertion or removal, recomputed exactly every ``budget`` changes so
    that rounding cannot accumulate.
    """

    _parameter_constraints: dict = {
        **KernelPerceptron._parameter_constraints,
        "budget": [Interval(Integral, 1, None, closed="left")],
        "beta": [Interval(Real, 0.0, None, closed="left")],
        "update": [StrOptions({"perceptron", "mira", "nobias_svm"})],
        "C": [Interval(Real, 0.0, None, closed="neither")],
    }

    _keeps_gram = True
    _stream_params = KernelPerceptron._stream_params + ("budget",)

    def __init__(
        self,
        budget=100,
        *,
        beta=0.0,
        update="perceptron",
        C=1.0,
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
        super().__init__(
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            max_iter=max_iter,
            shuffle=shuffle,
            average=average,
            warm_start=warm_start,
            random_state=random_state,
        )
        self.budget = budget
        self.beta = beta
        self.update = update
        self.C = C

    # ------------------------------------------------------------------
    # Per-member state: scores f(x_j) and labels y_j
    # ------------------------------------------------------------------
    def _reset_rule(self):
        n_rows = self._alpha.shape[0]
        self._fS = np.zeros((n_rows, self.budget))
        # -1/+1 with two classes, the class index otherwise.
        self._label = np.zeros(self.budget, dtype=np.int64)
        self._n_changes = 0

    def _on_add(self, k, kxx):
        n = self._n
        p = n - 1
        self._n_changes += 1
        if self._n_changes >= max(self.budget, 16):
            # Exact refresh, O(budget^2) every budget changes: O(budget) amortised.
            self._fS[:, :n] = self._alpha[:, :n] @ self._gram[:n, :n]
            self._n_changes = 0
            return
        self._fS[:, :p] += np.outer(self._alpha[:, p], k)
        self._fS[:, p] = self._alpha[:, :n] @ self._gram[:n, p]

    def _on_remove(self, pos, last):
        n = self._n
        self._fS[:, :n] -= np.outer(self._alpha[:, pos], self._gram[pos, :n])
        self._fS[:, pos] = self._fS[:, last]
        self._label[pos] = self._label[last]
        self._n_changes += 1

    # ------------------------------------------------------------------
    # Helpers of the removal rules
    # ------------------------------------------------------------------
    def _tie_tol(self):
        n = self._n
        l1 = np.abs(self._alpha[:, :n]).sum(axis=1).max(initial=0.0)
        kmax = np.abs(self._kdiag[:n]).max(initial=0.0)
        return _TIE_RTOL * (1.0 + l1 * kmax)

    def _oldest_of(self, mask):
        """Position of the oldest member among ``mask`` (the tie rule)."""
        cands = np.flatnonzero(mask)
        return int(cands[np.argmin(self._born[cands])])

    # ------------------------------------------------------------------
    # The rule
    # ------------------------------------------------------------------
    def _margin_threshold(self):
        return 1.0 if self.update == "nobias_svm" else float(self.beta)

    def _step(self, margin, kxx):
        """Step of Weston et al., Fig. 2 (see the class docstring)."""
        if self.update == "perceptron" or (self.update == "mira" and self._n == 0):
            return 1.0
        sq = self._direction_sq_norm * kxx
        if sq <= 0.0:
            return 0.0
        # A margin on the boundary of the step (0 for MIRA, 1 for No-Bias-SVM)
        # up to rounding gives a step of zero: a step of rounding noise would
        # otherwise evict a member for a coefficient of 1e-16.
        boundary = 0.0 if self.update == "mira" else 1.0
        if margin >= boundary - self._tie_tol():
            return 0.0
        if self.update == "mira":
            return min(1.0, -margin / sq)
        return min(float(self.C), (1.0 - margin) / sq)

    def _update(self, y, f, margin, k, kxx, weight):
        tau = self._step(margin, kxx)
        if not tau > 0.0:
            return
        direction = self._direction(y, f)
        self._begin_update(y)
        while self._n >= self.budget:  # Fig. 1, step 1
            self._remove_member(self._removal_choice())
        pos = self._add_member(weight * tau * direction)  # steps 2-4
        self._label[pos] = int(y)
        self._end_update()

    def _begin_update(self, y):
        """Called on an updating round before any removal."""

    def _end_update(self):
        """Called at the end of an updating round."""

    def _removal_choice(self):
        raise NotImplementedError


class BudgetPerceptron(_BaseBudgetPerceptron):
    __doc__ = _doc(
        """Budget Perceptron (Crammer, Kandola and Singer, 2004).

    The kernel Perceptron with a margin and a cache limit, as given in
    Weston, Bordes and Bottou (2005, Fig. 1). On a round with
    ``y_t f(x_t) <= beta``, if the support set already holds ``budget``
    members, the member ``j`` that stays best classified without its own
    contribution is removed,

    ``j = argmax_j y_j (f(x_j) - alpha_j k(x_j, x_j))``,

    then the example joins with coefficient ``tau y_t``, ``tau`` given by
    ``update``. The scores ``f(x_j)`` of the members are kept current from
    their Gram matrix, so the removal costs ``O(budget)``.

    Parameters
    ----------{update}{common}
    Attributes
    ----------{attributes}
    See Also
    --------
    TighterBudgetPerceptron : Removes the member whose removal leaves the
        fewest errors, more robust to label noise.
    Forgetron : Shrinks the coefficients and removes the oldest member.
    RandomizedBudgetPerceptron : Removes a uniformly drawn member.

    Notes
    -----{update_notes}
    With more than two classes the removal score of member ``j`` is its
    margin under the hypothesis without its own term: with
    ``g = f(x_j) - alpha_j k(x_j, x_j)`` (one value per class),
    ``g_{y_j} - max_{c != y_j} g_c``; with two classes it is the formula
    above.

    **Decision (ties)**: scores within ``1e-9`` (relative to
    ``sum_i |alpha_i| max_i k(x_i, x_i)``) of the best are ties, and the
    oldest of them (the first to enter the support set) is removed.

    With ``average=True`` the averaged hypothesis keeps the exact
    contribution of every member that was ever in the support set, so it
    may have more than ``budget`` support vectors.

    Memory is ``O(budget^2)`` (the Gram matrix of the members) whatever the
    length of the stream.

    References
    ----------
    K. Crammer, J. Kandola and Y. Singer. Online classification on a budget.
    NIPS 2003.

    J. Weston, A. Bordes and L. Bottou. Online (and offline) on an even
    tighter budget. AISTATS 2005.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import BudgetPerceptron
    >>> X, y = make_moons(n_samples=300, noise=0.1, random_state=0)
    >>> clf = BudgetPerceptron(budget=30, gamma=2.0, random_state=0).fit(X, y)
    >>> len(clf.support_) <= 30
    True
    >>> clf.score(X, y) > 0.8
    True
    """.replace("{update}", _UPDATE_DOC).replace("{update_notes}", _UPDATE_NOTES)
    )

    def _removal_choice(self):
        n = self._n
        G = self._fS[:, :n] - self._alpha[:, :n] * self._kdiag[:n]
        score = self._margins(G, self._label[:n])
        return self._oldest_of(score >= score.max() - self._tie_tol())


class TighterBudgetPerceptron(_BaseBudgetPerceptron):
    __doc__ = _doc(
        """Tighter Budget Perceptron (Weston, Bordes and Bottou, 2005).

    The :class:`BudgetPerceptron` with another removal rule (Fig. 3): the
    member removed is the one whose removal leaves the fewest errors on an
    evaluation set ``E``,

    ``j = argmin_j #{k in E : y_k (f(x_k) - alpha_j k(x_j, x_k)) <= 0}``.

    Removing members by the errors they cause, rather than by their margin,
    keeps the support set away from mislabelled examples, so the rule stays
    accurate on noisy problems where the Budget Perceptron degrades.

    Parameters
    ----------{update}
    error_set : {'support', 'all', 'random', 'flip'}, default='support'
        The evaluation set ``E`` (Sec. 3.2):

        - ``'support'``: the support set itself (Eq. 3);
        - ``'all'``: every round played so far, the current one included
          (Fig. 3). Its memory and time grow with the stream;
        - ``'random'``: a uniform sample of ``error_set_size`` rounds (Eq.
          4), kept by reservoir sampling;
        - ``'flip'``: the ``error_set_size`` examples whose prediction
          flips most often (Fig. 5).

    error_set_size : int, default=None
        Size ``q`` of the ``'random'`` and ``'flip'`` evaluation sets;
        ``None`` means ``budget``. Not used by ``'support'`` and ``'all'``.
{common}
    Attributes
    ----------{attributes}
    See Also
    --------
    BudgetPerceptron : Removes the member best classified without itself.
    Forgetron : Shrinks the coefficients and removes the oldest member.
    RandomizedBudgetPerceptron : Removes a uniformly drawn member.

    Notes
    -----{update_notes}
    The kernel values between the members and ``E`` are cached (they come
    from the engine's block kernel matrices, plus one kernel matrix per
    block between ``E`` and the block's rows), so a removal costs
    ``O(budget |E|)`` and no kernel evaluation. Memory is
    ``O(budget (budget + |E|))``: bounded by ``budget`` and
    ``error_set_size``, except for ``error_set='all'``, whose evaluation set
    (and its kernel cache) grows with every round played; with
    ``error_set='all'`` each round also costs time proportional to the
    number of rounds so far.

    Decisions:

    - An error is a margin ``<= 0`` on ``E`` (with more than two classes,
      ``g_{y_k} - max_{c != y_k} g_c <= 0``), the mistake of the online
      protocol. Margins within ``1e-9`` (relative to
      ``sum_i |alpha_i| max_i k(x_i, x_i)``) of zero count as errors, so the
      count does not depend on rounding.
    - **Ties**: among members leaving the same number of errors, the oldest
      (the first to enter the support set) is removed.
    - ``'support'``: ``E`` is the support set before the current example is
      inserted.
    - ``'random'``: the reservoir (Vitter's Algorithm R) is offered every
      round played, the current one before its removal decision: the
      ``s``-th round fills slot ``s`` while ``s <= q``, afterwards
      ``r = rng.randint(s)`` is drawn and the round replaces slot ``r`` if
      ``r < q``. ``rng`` is a ``numpy.random.RandomState`` seeded by
      ``random_state`` when the stream starts.
    - ``'flip'``: only updating rounds are inserted (Sec. 3.2), before the
      removal decision. When ``E`` then holds more than ``q`` examples,
      the example with the *smallest* flip rate among the older ones is
      evicted (the text keeps those that flip most; Fig. 5's ``argmax`` is
      read as a typo), ties going to the oldest. The flip rate is the
      number of times the predicted label of the example changed, after
      the round it entered, divided by the rounds since it entered.
    - Examples of several epochs of ``fit`` are separate rounds: ``'all'``
      and ``'random'`` may hold the same example more than once.

    With ``average=True`` the averaged hypothesis keeps the exact
    contribution of every member that was ever in the support set, so it
    may have more than ``budget`` support vectors.

    References
    ----------
    J. Weston, A. Bordes and L. Bottou. Online (and offline) on an even
    tighter budget. AISTATS 2005.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import TighterBudgetPerceptron
    >>> X, y = make_moons(n_samples=300, noise=0.1, random_state=0)
    >>> clf = TighterBudgetPerceptron(budget=30, gamma=2.0, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> len(clf.support_) <= 30
    True
    >>> clf.score(X, y) > 0.8
    True
    """.replace("{update}", _UPDATE_DOC).replace("{update_notes}", _UPDATE_NOTES),
        random_extra=(
            " and, when the stream starts, the generator of the reservoir of ``error_set='random'``"
        ),
    )

    _stream_params = _BaseBudgetPerceptron._stream_params + ("error_set", "error_set_size")

    _parameter_constraints: dict = {
        **_BaseBudgetPerceptron._parameter_constraints,
        "error_set": [StrOptions({"support", "all", "random", "flip"})],
        "error_set_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        budget=100,
        *,
        beta=0.0,
        update="perceptron",
        C=1.0,
        error_set="support",
        error_set_size=None,
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
        super().__init__(
            budget=budget,
            beta=beta,
            update=update,
            C=C,
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            max_iter=max_iter,
            shuffle=shuffle,
            average=average,
            warm_start=warm_start,
            random_state=random_state,
        )
        self.error_set = error_set
        self.error_set_size = error_set_size

    # ------------------------------------------------------------------
    # The evaluation set E
    #
    # Between blocks, E is stored as its rows ``_E_X`` and the kernel values
    # ``_E_KS`` between the members (in position order) and those rows.
    # During a block an entry of E is either one of those rows (``src < P``)
    # or a row of the block (``src = P + i``). Kernel values of block rows
    # come from the engine's ``Kc``; those between the stored rows and
    # members that joined during the block from one kernel matrix between
    # ``_E_X`` and the block, computed at most once per block.
    # ------------------------------------------------------------------
    def _reset_rule(self):
        super()._reset_rule()
        self._q = self.budget if self.error_set_size is None else self.error_set_size
        self._E_X = self._sv  # no rows, in the format of the stream
        self._E_KS = np.zeros((0, 0))
        self._E_src = np.zeros(0, dtype=np.int64)
        self._E_lab = np.zeros(0, dtype=np.int64)
        self._E_born = np.zeros(0, dtype=np.int64)  # 'flip': round of entry
        self._E_flips = np.zeros(0, dtype=np.int64)  # 'flip': label changes
        self._E_pred = np.zeros(0, dtype=np.int64)  # 'flip': last prediction
        self._E_seen = 0  # 'random': rounds offered to the reservoir

    def _on_block_start(self, Xb, yb):
        if self.error_set == "support":
            return
        b = Xb.shape[0]
        self._E_Xb, self._E_yb = Xb, yb
        self._E_P = self._E_src.shape[0]
        self._E_m0 = self._n
        self._E_KEb = None
        self._E_next = 0  # next block row to offer ('all', 'random')
        if self.error_set == "random":
            # Algorithm R, drawn for the whole block at once (one draw per
            # round past the q-th, in stream order).
            s = self._E_seen + np.arange(1, b + 1)
            slot = np.where(s <= self._q, s - 1, -1)
            late = s > self._q
            r = self._rng.randint(0, s[late]) if late.any() else np.zeros(0, dtype=np.int64)
            slot[late] = np.where(r < self._q, r, -1)
            self._E_slot = slot
            self._E_seen += b

    def _E_advance(self, j):
        """Offer the block rows up to ``j`` to E ('all' and 'random')."""
        P = self._E_P
        rows = np.arange(self._E_next, j + 1)
        self._E_next = j + 1
        if rows.size == 0:
            return
        if self.error_set == "all":
            self._E_src = np.concatenate([self._E_src, P + rows])
            self._E_lab = np.concatenate([self._E_lab, self._E_yb[rows].astype(np.int64)])
            return
        for i in rows[self._E_slot[rows] >= 0]:
            slot = self._E_slot[i]
            if slot == self._E_src.shape[0]:
                self._E_src = np.append(self._E_src, P + i)
                self._E_lab = np.append(self._E_lab, int(self._E_yb[i]))
            else:
                self._E_src[slot] = P + i
                self._E_lab[slot] = int(self._E_yb[i])

    def _E_stored_kernel(self, e, cols):
        """K(stored rows ``e``, members at columns ``cols``) of the block.

        The result has shape ``(len(e), len(cols))``.
        """
        m0 = self._E_m0
        K = np.empty((e.shape[0], cols.shape[0]))
        old = cols < m0
        # Columns below m0 are the positions of the members at the block start.
        K[:, old] = self._E_KS[np.ix_(cols[old], e)].T
        new = ~old
        if new.any():
            if self._E_KEb is None:
                self._E_KEb = self._kernel(self._E_X, self._E_Xb)
            K[:, new] = self._E_KEb[np.ix_(e, cols[new] - m0)]
        return K

    def _E_kernel(self):
        """K(members, E) of the current round, shape (n, |E|)."""
        n = self._n
        cols = self._cols[:n]
        src = self._E_src
        P = self._E_P
        K = np.empty((src.shape[0], n))
        stored = src < P
        if stored.any():
            K[stored] = self._E_stored_kernel(src[stored], cols)
        if not stored.all():
            K[~stored] = self._blk.Kc[np.ix_(src[~stored] - P, cols)]
        return K.T

    def _on_block_end(self):
        if self.error_set == "support":
            return
        if self.error_set in ("all", "random"):
            self._E_advance(self._E_Xb.shape[0] - 1)
        src = self._E_src
        # Store E's rows and their kernel values with the members for the
        # blocks to come.
        self._E_KS = np.ascontiguousarray(self._E_kernel())
        Z = self._E_X
        if not (src < self._E_P).all():
            Z = _vstack(Z, self._E_Xb)
        self._E_X = Z[src]
        self._E_src = np.arange(src.shape[0])
        self._E_Xb = self._E_yb = self._E_KEb = None

    # ------------------------------------------------------------------
    # 'flip': insertion, eviction and prediction tracking
    # ------------------------------------------------------------------
    def _begin_update(self, y):
        if self.error_set != "flip":
            return
        t = self._t
        if self._E_src.shape[0] >= self._q:
            # Evict the older example with the smallest flip rate (Fig. 5).
            rate = self._E_flips / (t - self._E_born)
            keep = np.ones(rate.shape[0], dtype=bool)
            i = np.flatnonzero(rate == rate.min())
            keep[i[np.argmin(self._E_born[i])]] = False
            self._E_src = self._E_src[keep]
            self._E_lab = self._E_lab[keep]
            self._E_born = self._E_born[keep]
            self._E_flips = self._E_flips[keep]
            self._E_pred = self._E_pred[keep]
        self._E_src = np.append(self._E_src, self._E_P + self._blk.j)
        self._E_lab = np.append(self._E_lab, int(y))
        self._E_born = np.append(self._E_born, t)
        self._E_flips = np.append(self._E_flips, 0)
        self._E_pred = np.append(self._E_pred, -2)  # set after this update

    def _end_update(self):
        if self.error_set != "flip":
            return
        n = self._n
        F = self._alpha[:, :n] @ self._E_kernel()
        pred = (F[0] > 0).astype(np.int64) if self._binary else np.argmax(F, axis=0)
        seen = self._E_pred != -2
        self._E_flips += seen & (pred != self._E_pred)
        self._E_pred = pred

    # ------------------------------------------------------------------
    # Removal
    # ------------------------------------------------------------------
    def _removal_choice(self):
        n = self._n
        if self.error_set == "support":
            KE, fE, yE = self._gram[:n, :n], self._fS[:, :n], self._label[:n]
        else:
            if self.error_set != "flip":
                self._E_advance(self._blk.j)
            KE = self._E_kernel()
            fE = self._alpha[:, :n] @ KE
            yE = self._E_lab
        tol = self._tie_tol()
        alpha = self._alpha[:, :n]
        if self._binary:
            # margins[j, k] = y_k (f(x_k) - alpha_j k(x_j, x_k))
            errors = (yE * (fE[0] - alpha[0][:, None] * KE) <= tol).sum(axis=1)
        else:
            m = KE.shape[1]
            step = max(1, _CHUNK // max(1, alpha.shape[0] * m))
            errors = np.empty(n, dtype=np.int64)
            for s in range(0, n, step):
                G = fE[None] - alpha.T[s : s + step, :, None] * KE[s : s + step, None, :]
                errors[s : s + step] = (self._margins(G, yE) <= tol).sum(axis=1)
        return self._oldest_of(errors == errors.min())
