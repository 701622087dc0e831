"""Projectron and Projectron++ (Orabona, Keshet and Caputo, 2008)."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from scipy.linalg.blas import dtpsv
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseKernelOnlineClassifier
from ._deprecation import positional_until_0_3
from ._docstrings import _AVERAGE_DOC, _averaged_at_every_width, _doc
from ._rules_projection import ProjectronRule

# A new row whose squared residual after projection onto span(S) is at most
# this fraction of k(x, x) is taken to lie in span(S). Rounding alone makes
# ||delta||^2 = k(x, x) - ||P k(x, .)||^2 uncertain by a few eps * k(x, x), so
# a residual below the floor carries no information, and admitting it would
# put a pivot of that size into the Cholesky factor.
_DEPENDENCE_RTOL = 1e-10

_NOTES_DOC = """
    **Support set and projection.** On a prediction mistake the algorithm
    computes the projection of ``k(x_t, .)`` onto the span of the support
    vectors: ``d = K_S^{-1} k_t`` (Eq. 8) and the squared residual
    ``||delta_t||^2 = k(x_t, x_t) - k_t . d`` (Eq. 9). If
    ``||delta_t|| <= eta_t`` the hypothesis takes the projected step
    ``alpha += y_t d`` and the support set does not change (Eq. 10);
    otherwise ``x_t`` joins it with coefficient ``y_t``. Whatever the
    kernel, the support set stays finite for ``eta > 0`` (Theorem 1), but
    how large it grows depends on the data; ``budget`` bounds it (our
    extension, see below).

    **Numerics.** Instead of the inverse Gram matrix updated by Eq. 11, the
    estimator keeps the Cholesky factor ``L`` of ``K_S`` in packed storage.
    Adding a member appends one row ``[L^{-1} k_t, ||delta_t||]`` to ``L``,
    which is the factor form of Eq. 11, in ``O(|S|^2)`` time; the solve of
    Eq. 8 is two triangular solves, and ``||delta_t||^2`` comes from the
    first one alone. Unlike the explicit inverse, the factor does not
    accumulate the errors of past additions. As a safeguard, a row whose
    squared residual is at most ``1e-10 * k(x_t, x_t)`` is treated as lying
    in the span of the support set (``||delta_t|| = 0``), so that no pivot
    below ``1e-5 sqrt(k(x_t, x_t))`` ever enters the factor. A row with
    ``k(x_t, x_t) = 0`` (a zero row with a linear kernel) therefore never
    changes the model. The projection needs a positive definite kernel:
    with ``'sigmoid'`` a negative residual also counts as zero, and
    ``'additive_chi2'``, whose ``k(x, x)`` is 0, never learns anything.

    **eta = 0.** Only the rows that are (numerically) in the span of the
    support set are projected, and their projection is exact: the
    hypothesis is the Kernel Perceptron's on a smaller support set. With a
    linear or polynomial kernel the mistakes are those of the Kernel
    Perceptron and, with a linear kernel, ``|S| <= n_features``. With a
    Gaussian kernel the projection is exact only up to the floor above, and
    the support set grows as the Perceptron's.

    **Decision (eta scale).** ``eta`` is compared with the norm
    ``||delta_t||``, as in the paper. DOGMA, the toolbox of the first
    author, compares its ``eta`` with the *squared* residual, so its
    ``eta = 0.1`` is ``eta = sqrt(0.1)`` here for the Projectron (same
    mistakes); its Projectron++ margin rule (``l - ||delta||^2 / eta``)
    differs from the one used here.

    **Competitor-norm mode.** With ``eta='adaptive'`` the threshold of each
    mistake is set by Eq. 13,
    ``eta_t = (2 l_t - ||P k(x_t, .)||^2 - 0.5) / (2 U)``, where ``U``
    bounds the norm of the competitor; the paper's experiments use
    ``U = sqrt((B + 1) / log(B + 1)) / 4``, the value that gives the
    Forgetron with budget ``B`` the same mistake bound.

    **Multiclass.** One support set and one Cholesky factor serve every
    class; the projection ``d`` does not depend on the class. A mistake
    moves the rows of the true class ``y`` and of the best other class
    ``r`` by ``+d`` and ``-d`` (or adds ``x_t`` with ``+1`` and ``-1``).
    The tests use the norms of that change in the product of the class
    RKHSs, which are ``sqrt(2)`` times the binary ones: the row is projected
    when ``sqrt(2) ||delta_t|| <= eta_t``, and Eq. 13 reads
    ``(2 l_t - 2 ||P k(x_t, .)||^2 - 0.5) / (2 U)``. With two classes the
    estimator is exactly the binary algorithm.

    **Hard budget (extension).** With ``budget=B``, the algorithm is the
    paper's while ``|S| < B``; once ``|S| = B``, a mistake whose residual
    would add ``x_t`` takes the projected step ``alpha += y_t d`` (Eq. 10)
    instead, so the support set never exceeds ``B`` and the Gram factor
    never grows past ``B x B``. The mistake bound of the paper does not
    cover these forced projections: a small ``eta`` with a budget behaves
    like a Stoptron whose later mistakes still move the coefficients.

    **Choosing eta.** On high-dimensional data with ``gamma='scale'``
    almost every mistake lies far from the span of the support set, so a
    small ``eta`` projects almost nothing: with ``eta = 0.1`` the
    Projectron++ kept 8823 support vectors and took 28 minutes to fit the
    32561 rows of Adult (a9a). The support size falls steeply only as
    ``eta`` nears 1 (Gaussian kernel), as measured with every other
    parameter at its default (``benchmarks/bench_defaults.py``; test
    accuracy in parentheses; the first column is the first 5000 training
    rows of a9a, whose test accuracy varies by about 2 points with
    ``random_state`` alone)::

        eta    a9a (5000 rows)   USPS, 10 classes   USPS, 0 vs rest
        0.1    1839 (0.81)        884 (0.941)        151 (0.992)
        0.5     645 (0.80)        821 (0.947)        147 (0.992)
        0.6     373 (0.81)        761 (0.939)        135 (0.993)
        0.7     186 (0.80)        712 (0.942)        121 (0.989)
        0.8      75 (0.83)        623 (0.937)         87 (0.987)
        0.9      19 (0.78)        495 (0.934)         37 (0.982)

    (Projectron++ without a budget; the Projectron's support sets are
    within about 10% of these.) The defaults bound the model by
    ``budget=500`` and use ``eta=0.1`` with ``average=True``, chosen by a
    sweep of the kernel width from 0.05 to 10 times ``gamma='scale'`` on
    the shipped data sets (see "Default parameters" in the user guide).
    At a wide kernel the residual of every new row is small: the former
    defaults (``eta=0.6`` and ``0.5``, ``average=False``) kept a single
    support vector on a9a at about 0.05 times the ``'scale'`` width, the
    constant model, and their last epoch could end on a bad hypothesis.
    The finer projection fills the budget, and the average removes the
    swings of the last epochs: on all of a9a (``random_state=0``) the
    Projectron at ``budget=500`` went from 0.764 (the majority rate) to
    0.852 at that width and from 0.791 to 0.816 at 10 times it. The cost
    is a fuller support set (fit time about doubles on 3000 rows of
    a9a). With
    more than two classes the threshold applies to ``sqrt(2) ||delta_t||``
    (see **Multiclass**), so the same ``eta`` projects less. To aim at a
    target support size, fit on a few thousand rows with a few values of
    ``eta`` between 0.5 and 0.95: the support size grows with the number
    of rows, but much more slowly than the stream once ``eta`` is large.
    For a guaranteed bound, set ``budget``.

    **Sample weights** multiply the step taken on a sample (the added
    coefficient or the projected step); they do not enter the thresholds.
"""

_PLUS_NOTES_DOC = """
    **Margin errors.** On a round with ``0 < y_t f(x_t) < 1`` the
    Projectron++ takes the projected step ``alpha += tau_t y_t d``, which
    never adds a support vector (Eq. 14), with

        tau_t = min(l_t / ||P k||^2, 1, 2 (l_t - U ||delta_t||) / ||P k||^2),

    where ``l_t = 1 - y_t f(x_t)`` and ``||P k||^2 = k_t . d``, and skips the
    round when ``tau_t <= 0``. The first two terms are Eq. 17; **Decision**:
    the third caps ``tau_t`` so that the progress ``beta_t`` of Eq. 16 stays
    non-negative, instead of skipping the round when ``beta_t`` at the
    Eq. 17 step is negative, as in the journal version of the paper (JMLR
    2009) and in DOGMA. ``U`` is the ``U`` parameter with
    ``eta='adaptive'`` and ``1 / eta`` otherwise; with ``eta = 0`` only rows
    in the span of the support set take a margin step. With more than two
    classes ``||P k||^2`` and ``||delta_t||`` are replaced by their
    multiclass values ``2 ||P k||^2`` and ``sqrt(2) ||delta_t||`` (see
    above), so that ``beta_t`` is again the progress of Lemma 1.
"""

_PARAMS_DOC = """
    eta : float >= 0 or 'adaptive', default=0.1
        Projection threshold. A float is compared with the norm of the
        projection residual ``||delta_t||`` on every mistake: larger values
        give smaller support sets and more mistakes. The residual is at most
        ``sqrt(k(x_t, x_t))``, which is 1 with the Gaussian kernel: there a
        value of 1 or more never adds a support vector, so nothing is
        learned, and with other kernels ``eta`` is on the scale of the
        norms ``sqrt(k(x, x))`` of the rows. ``'adaptive'`` sets the
        threshold of each round from ``U`` by Eq. 13 of the paper. See
        "Choosing eta" in the Notes for the default.

    budget : int or None, default=500
        Hard bound on the number of support vectors (an extension of the
        paper): once the support set holds ``budget`` members, a mistake
        that would add its example takes the projected step onto the span
        of the support set instead. ``None`` is the paper's algorithm, whose
        support set is bounded only through ``eta``, and can grow to
        thousands of members on large noisy data (see "Choosing eta").

    U : float > 0, default=1.0
{U_doc}
"""

_U_DOC = """\
        Bound on the norm of the competitor. Used only with
        ``eta='adaptive'``, where it sets the threshold of each round by
        Eq. 13."""

_U_PLUS_DOC = """\
        Bound on the norm of the competitor. Used only with
        ``eta='adaptive'``, where it sets the threshold of each round by
        Eq. 13 and bounds the margin steps (which use ``U = 1 / eta``
        otherwise)."""


def _params_doc(plus):
    return _PARAMS_DOC.replace("{U_doc}", _U_PLUS_DOC if plus else _U_DOC)


class Projectron(BaseKernelOnlineClassifier):
    __doc__ = _doc(
        """Projectron: the Kernel Perceptron with a bounded support set.

    On a prediction mistake the Perceptron step ``y_t k(x_t, .)`` is
    replaced by its projection onto the span of the current support
    vectors whenever the projection error is at most ``eta``; only examples
    far from that span join the support set (Orabona, Keshet and Caputo,
    2008, Algorithm 2). The support set stays finite without a fixed
    budget, and the averaged model (``average=True``) lives on the same
    support set.

    Parameters
    ----------"""
        + _params_doc(plus=False)
        + """{common}
    Attributes
    ----------{attributes}
    See Also
    --------
    ProjectronPlusPlus : Projectron that also learns on margin errors.
    KernelPerceptron : The same algorithm without projection (``eta=0``).
    Stoptron : Kernel Perceptron that stops once its budget is full.

    Notes
    -----"""
        + _NOTES_DOC
        + """
    References
    ----------
    F. Orabona, J. Keshet and B. Caputo. "The Projectron: a Bounded Kernel-
    Based Perceptron". ICML 2008.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import Projectron
    >>> X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    >>> clf = Projectron(eta=0.3, gamma=2.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    >>> len(clf.support_) < 50
    True
    """,
        average_doc=_averaged_at_every_width(_AVERAGE_DOC),
    )

    _parameter_constraints: dict = {
        **BaseKernelOnlineClassifier._parameter_constraints,
        "eta": [Interval(Real, 0, None, closed="left"), StrOptions({"adaptive"})],
        "budget": [Interval(Integral, 1, None, closed="left"), None],
        "U": [Interval(Real, 0, None, closed="neither")],
    }

    _stream_params = BaseKernelOnlineClassifier._stream_params + ("budget",)
    _mixable = True

    # Whether margin errors are learned from (Projectron++).
    _learns_margin_errors = False

    @positional_until_0_3("eta")
    def __init__(
        self,
        *,
        eta=0.1,
        budget=500,
        U=1.0,
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
        average=True,
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
        self.eta = eta
        self.budget = budget
        self.U = U

    # ------------------------------------------------------------------
    # The Cholesky factor of K_S, stored packed: row i of the lower factor L
    # holds entries [i (i + 1) / 2, (i + 1) (i + 2) / 2) of ``chol``, which is
    # also the column-major packed storage of L^T that BLAS ``tpsv`` takes.
    # Adding a member appends a row: Eq. 11 in factor form.
    # ------------------------------------------------------------------
    def _reset_rule(self):
        self._add_state("chol", np.zeros(0), "packed")

    def _load_rule_state(self, gram, coef, rule_state):
        super()._load_rule_state(gram, coef, rule_state)
        L = self._load_factor(gram, _DEPENDENCE_RTOL)
        m = L.shape[0]
        self._state["chol"][: m * (m + 1) // 2] = L[np.tril_indices(m)]

    def _make_rule(self):
        adaptive = self.eta == "adaptive"
        return ProjectronRule(
            0.0 if adaptive else float(self.eta),
            float(self.U),
            adaptive,
            self._learns_margin_errors,
            _DEPENDENCE_RTOL,
            0 if self.budget is None else self.budget,
        )

    def _max_members(self):
        return self.budget

    @property
    def _chol(self):
        return self._state["chol"]

    def _forward(self, k):
        """``L^{-1} k`` for the factor of the current members."""
        n = self._n
        if n == 0:
            return np.zeros(0)
        return dtpsv(n, self._chol, k, lower=0, trans=1)

    def _backward(self, z):
        """``L^{-T} z``: with ``z = L^{-1} k`` this is ``d = K_S^{-1} k`` (Eq. 8)."""
        n = self._n
        if n == 0:
            return np.zeros(0)
        return dtpsv(n, self._chol, z, lower=0, trans=0)


class ProjectronPlusPlus(Projectron):
    __doc__ = _doc(
        """Projectron++: the Projectron that also learns from margin errors.

    Plays as :class:`Projectron` on prediction mistakes. On a margin error
    (``0 < y_t f(x_t) < 1``) it also takes a projected step, which changes
    the coefficients but never the support set (Orabona, Keshet and Caputo,
    2008, Sec. 4.1). It usually makes fewer mistakes than the Kernel
    Perceptron with a smaller support set than the Projectron.

    Parameters
    ----------"""
        + _params_doc(plus=True)
        + """{common}
    Attributes
    ----------{attributes}
    See Also
    --------
    Projectron : The same algorithm without the margin-error steps.
    KernelPassiveAggressive : Unbounded learning on margin errors.

    Notes
    -----"""
        + _NOTES_DOC
        + _PLUS_NOTES_DOC
        + """
    References
    ----------
    F. Orabona, J. Keshet and B. Caputo. "The Projectron: a Bounded Kernel-
    Based Perceptron". ICML 2008.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import ProjectronPlusPlus
    >>> X, y = make_moons(n_samples=200, noise=0.1, random_state=0)
    >>> clf = ProjectronPlusPlus(eta=0.3, gamma=2.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    >>> len(clf.support_) < 50
    True
    """,
        average_doc=_averaged_at_every_width(_AVERAGE_DOC),
    )

    _learns_margin_errors = True

    @positional_until_0_3("eta")
    def __init__(
        self,
        *,
        eta=0.1,
        budget=500,
        U=1.0,
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
        average=True,
        warm_start=False,
        random_state=None,
        verbose=0,
        verbose_interval=10_000,
    ):
        super().__init__(
            eta=eta,
            budget=budget,
            U=U,
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
