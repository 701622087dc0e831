"""Budgeted Stochastic Gradient Descent (kernel Pegasos with a budget)."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import REMOVAL_AVERAGE, BaseKernelOnlineClassifier
from ._deprecation import positional_until_0_3
from ._docstrings import _REMOVAL_AVERAGE_DOC, _doc, _last_by_default
from ._rules_sgd import BudgetedSGDRule

_MAINTENANCE = {"removal": 0, "projection": 1, "merging": 2}

# alpha='auto' is 2 / n (an SVM's C = 2), capped here for short first calls.
_AUTO_ALPHA_CAP = 1e-3

# A margin-error example whose distance to the span of the support set is
# below this fraction of its norm (squared) is projected instead of added:
# the Gram factor of the projection maintenance stays regular.
_DEPENDENCE_RTOL = 1e-10


class BudgetedSGDClassifier(BaseKernelOnlineClassifier):
    __doc__ = _doc(
        """Budgeted Stochastic Gradient Descent (Wang, Crammer and Vucetic, 2012).

    Kernel Pegasos on the L2-regularised hinge loss
    ``alpha / 2 ||f||^2 + mean_t max(0, 1 - m_t)`` with a bounded support
    set. Round ``t`` (counted over the whole stream) takes the step
    ``eta_t = 1 / (alpha t)``: every coefficient shrinks by ``1 - 1/t``
    and, on a margin error (``m_t < 1``), the example joins the support set
    with coefficient ``eta_t y_t`` (times its sample weight). When the
    support set then holds ``budget + 1`` members, one budget maintenance
    step brings it back to ``budget``:

    - ``'removal'``: the member of smallest ``||alpha_j||^2 k(x_j, x_j)``
      leaves;
    - ``'projection'``: that member leaves and its function
      ``alpha_j k(x_j, .)`` is projected on the span of the others, whose
      coefficients absorb it (``O(budget^2)`` per step);
    - ``'merging'`` (rbf kernel): the member ``m`` of smallest
      ``||alpha_m||`` is merged with the partner ``n`` that loses the least
      weight, into one new point ``z = h x_m + (1 - h) x_n`` whose
      coefficients are the projection of the pair on ``k(z, .)``.

    With more than two classes the loss is the multiclass hinge of the
    largest other score (Crammer and Singer): a margin error adds
    ``+eta_t`` to the row of the true class and ``-eta_t`` to the row of the
    highest-scoring other class, on one shared support set.

    Parameters
    ----------
    budget : int, default=100
        Maximum number of support vectors.

    alpha : float or 'auto', default='auto'
        Regularisation strength (the ``lambda`` of Pegasos); the step of
        round ``t`` is ``1 / (alpha t)``. ``'auto'`` sets it once per
        stream to ``min(1e-3, 2 / n)``, where ``n`` is the number of rows
        of the call that starts the stream (the training rows of ``fit``,
        the first call of ``partial_fit``), and keeps it for the whole
        stream (``alpha_``). The hinge-loss SVM with ``C = 1 / (alpha n)``
        has the same minimiser, so a fixed ``alpha`` regularises a long
        stream ever more: a sweep of the kernel width (0.05 to 10 times
        ``gamma='scale'``) on up to 32561 rows of the shipped data sets
        found ``1e-3`` only 2.3 points above the majority rate on all of
        a9a at a wide kernel, ``2 / n`` (``C = 2``) 8.1, and ``2 / n``
        held at every width and size measured (2000 to 32561 rows, and
        streams of 20,000 rows drawn with replacement from 2000: at least
        4.8 points above the majority rate on every set); the cap
        keeps ``1e-3`` for streams started by small calls, and for a
        hypothesis loaded without rows
        (:class:`~sklearn_budget.parallel.ParallelMixing`'s shards).

    maintenance : {'merging', 'projection', 'removal'}, default='merging'
        Budget maintenance. 'merging' needs the rbf kernel; it keeps its
        members dense, and takes sparse input by densifying the rows of
        each block as the stream plays them (``support_vectors_`` is then a
        dense array).
{common}
    Attributes
    ----------{attributes}
    alpha_ : float
        The regularisation strength of the stream: ``alpha``, or its value
        for ``alpha='auto'``.

    See Also
    --------
    Forgetron : Shrinks the coefficients and removes the oldest member.
    ProjectronPlusPlus : Projects instead of adding, optionally under a
        hard budget.
    sklearn.linear_model.SGDClassifier : Linear models by SGD.

    Notes
    -----
    The shrink of every round is kept exact without touching every
    coefficient: after round ``t`` every coefficient is ``1 / (alpha t)``
    times a stored value that only additions and maintenance change.

    Decisions where the paper leaves a choice (gathered with the other
    papers' in :ref:`decisions-bsgd`):

    - Candidates of a maintenance whose scores tie (within a relative
      ``1e-9``) are decided in favour of the oldest member. Without
      projection or merging, every member's score is the same
      (``eta_t^2 k(x, x)`` times its sample weight squared), so 'removal'
      removes the oldest.
    - 'merging' maximises ``||alpha_z||^2`` over ``h`` by golden-section
      search to a tolerance of ``1e-6`` on ``h``: on ``[0, 1]`` (``z`` between
      the two points) when ``alpha_m . alpha_n >= 0``, else on ``[-1, 0]``
      (``z`` beyond ``x_n``, away from ``x_m``); comparisons within a
      relative ``1e-12`` keep the half nearer ``x_n``, so that the two
      mirror-image optima of equal coefficients (the common case, the
      shrink being uniform) are told apart by rule, not by rounding. A
      merged point is not a
      training example: its entry of ``support_`` is ``-1`` (merged members
      come after the training rows in ``support_``, ``support_vectors_`` and
      ``dual_coef_``), and ``support_vectors_`` holds the merged vector.
    - 'projection' keeps a Cholesky factor of the members' Gram matrix. A
      margin-error example already in the span of the members (its distance
      to the span below ``1e-5`` of its norm) is projected on them instead
      of added: the same function, and a regular factor.

{averaging}

    Each round costs the kernel row of the example against the support set
    plus ``O(budget)``; a maintenance step adds ``O(budget)`` (removal),
    ``O(budget^2)`` (projection) or ``O(budget (n_features + 30))``
    (merging: one golden-section search per partner). Memory is
    ``O(budget^2)`` for projection and ``O(budget n_features)`` otherwise,
    whatever the length of the stream.

    References
    ----------
    Z. Wang, K. Crammer and S. Vucetic. Breaking the curse of
    kernelization: budgeted stochastic gradient descent for large-scale SVM
    training. Journal of Machine Learning Research 13, 2012.

    S. Shalev-Shwartz, Y. Singer, N. Srebro and A. Cotter. Pegasos: primal
    estimated sub-gradient solver for SVM. Mathematical Programming 127,
    2011.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import BudgetedSGDClassifier
    >>> X, y = make_moons(n_samples=300, noise=0.1, random_state=0)
    >>> clf = BudgetedSGDClassifier(budget=30, alpha=1e-3, gamma=2.0, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> len(clf.support_) <= 30
    True
    >>> clf.score(X, y) > 0.9
    True
    """,
        removal=True,
        average_doc=_last_by_default(
            _REMOVAL_AVERAGE_DOC,
            """\
        False by default: in a measurement of both settings (test accuracy
        of the default instances on Banana, Waveform, DNA, Satimage,
        Pendigits and USPS 0 against the rest, seeds 0 and 1;
        ``benchmarks/bench_convergence.py --part b``) ``average=True`` lost
        5 to 10 points on DNA and 0.9 to 1.2 on Pendigits, and was within a
        point on the other sets.""",
        ),
    )

    _parameter_constraints: dict = {
        **BaseKernelOnlineClassifier._parameter_constraints,
        "average": REMOVAL_AVERAGE,
        "budget": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"auto"})],
        "maintenance": [StrOptions(set(_MAINTENANCE))],
    }

    # alpha fixes the scale of the stored coefficients, 1 / (alpha t).
    _stream_params = BaseKernelOnlineClassifier._stream_params + (
        "budget",
        "alpha",
        "maintenance",
    )

    _removes_members = True
    _mixable = True

    # Pegasos' hypothesis is 1 / (lambda t) times its sum of steps: the later
    # epochs of fit rescale it (see BaseKernelOnlineClassifier._rescale_margins).
    _epochs_rescale = True

    @positional_until_0_3("budget")
    def __init__(
        self,
        *,
        budget=100,
        alpha="auto",
        maintenance="merging",
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        kernel_params=None,
        max_iter=5,
        tol=1e-3,
        n_iter_no_change=5,
        shuffle=True,
        class_weight=None,
        average=False,
        warm_start=False,
        random_state=None,
        verbose=0,
        verbose_interval=10_000,
    ):
        super().__init__(
            kernel=kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            max_iter=max_iter,
            tol=tol,
            n_iter_no_change=n_iter_no_change,
            shuffle=shuffle,
            class_weight=class_weight,
            average=average,
            warm_start=warm_start,
            random_state=random_state,
            verbose=verbose,
            verbose_interval=verbose_interval,
        )
        self.budget = budget
        self.alpha = alpha
        self.maintenance = maintenance

    @property
    def _direct_only(self):
        # Merged points have no column in a kernel block.
        return self.maintenance == "merging"

    def _max_members(self):
        return self.budget + 1

    def _reset(self, X, from_partial_fit=False):
        # Fixed for the stream: the stored coefficients are in units of
        # 1 / (alpha t). Counted before merging may keep a single dense row.
        self.alpha_ = (
            min(_AUTO_ALPHA_CAP, 2.0 / X.shape[0]) if self.alpha == "auto" else float(self.alpha)
        )
        if self.maintenance == "merging":
            if self.kernel != "rbf":
                raise ValueError(
                    f"maintenance='merging' needs kernel='rbf', got kernel={self.kernel!r}: "
                    "use maintenance='projection' or 'removal' with other kernels."
                )
            if sp.issparse(X):
                X = self._dense_start(X)
        super()._reset(X, from_partial_fit)

    def _dense_start(self, X):
        """The sparse rows that start a merging stream, as the stream's dense rows.

        A merged point ``h x_m + (1 - h) x_n`` is a new point, and the
        compiled loop keeps its members dense: the stream is started dense,
        and each block of sparse rows is densified as it is played
        (``_as_stream_format``), so that the model is the one of
        ``X.toarray()``. ``gamma='scale'`` is computed on the dense rows (the
        same number as for ``X.toarray()``), which must then fit in
        ``working_memory``; any other ``gamma`` needs only the width.
        """
        if not (isinstance(self.gamma, str) and self.gamma == "scale"):
            return X[:1].toarray()
        need = X.shape[0] * X.shape[1] * 8
        limit = get_config()["working_memory"] * 2**20
        if need > limit:
            raise ValueError(
                f"maintenance='merging' computes gamma='scale' on the dense rows of the "
                f"sparse X, whose copy ({need / 2**20:.3g} MiB) exceeds working_memory "
                f"({limit / 2**20:.3g} MiB): pass a numeric gamma, pass the rows to "
                "partial_fit in smaller chunks, or raise working_memory with "
                "sklearn.config_context."
            )
        return X.toarray()

    def _reset_rule(self):
        if self.maintenance == "projection":
            self._add_state("chol", np.zeros((0, 0)), (0, 1))
            self._add_state("order", np.zeros(0, dtype=np.int64), (0,))
            self._add_state("rowof", np.zeros(0, dtype=np.int64), (0,))

    def _load_scale(self, n_members, rounds):
        # The iterate of round t is 1 / (alpha t) times the stored
        # coefficients, and the next round shrinks it by 1 - 1 / (t + 1):
        # a loaded hypothesis needs the round it stands for.
        if self.alpha == "auto":
            # A loaded hypothesis comes without the rows of a first call.
            self.alpha_ = _AUTO_ALPHA_CAP
        if rounds == 0:
            if n_members:
                raise ValueError(
                    "BudgetedSGDClassifier loads a non-empty hypothesis only with rounds >= 1."
                )
            return 1.0
        return 1.0 / (self.alpha_ * rounds)

    def _load_rule_state(self, gram, coef, rule_state):
        super()._load_rule_state(gram, coef, rule_state)
        if self.maintenance == "projection":
            L = self._load_factor(gram, _DEPENDENCE_RTOL)
            m = L.shape[0]
            self._state["chol"][:m, :m] = L
            self._state["order"][:m] = np.arange(m)
            self._state["rowof"][:m] = np.arange(m)

    def _make_rule(self):
        return BudgetedSGDRule(
            self.alpha_, self.budget, _MAINTENANCE[self.maintenance], _DEPENDENCE_RTOL
        )
