"""Nystroem Online Gradient Descent (NOGD): kernel OGD, then OGD on a Nystroem map."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import row_norms

from ._base import _stream_gamma
from ._dense_rows import KERNEL_CODES
from ._docstrings import _feature_doc
from ._kernels import (
    KERNELS,
    Kernel,
    _KernelStateMixin,
    block_kernel_values,
    is_nonnegative_kernel,
    kernel_values,
    resolve_gamma,
    single_blas_thread,
)
from ._linear_online import (
    _NO_ARRAY,
    _NO_MARGINS,
    _averaged,
    _FeatureOnlineClassifier,
    _FitFeatures,
    finite_hinge_rounds,
    rows_in_working_memory,
)
from ._rounds import _rows, _select
from ._stream import _predicted_index
from ._transaction import WeakCache

# Eigenvalues of the landmarks' Gram matrix below this fraction of the
# largest are dropped from the map: their directions would be scaled by
# 1 / sqrt(eigenvalue), amplifying round-off (a landmark repeated, or one
# in the span of the others).
_RANK_RTOL = 1e-8

# The choice of ``alpha='auto'``, (alpha, epochs), for the final fit of its call.
_CHOSEN = WeakCache()

# Fewest rows whose kernel values the landmarks' phase computes at once.
_GATHER_CHUNK = 64


# The penalties that ``alpha='auto'`` chooses from: none (the rounds of the
# paper) and SGDClassifier's light grid of its alpha (the same objective:
# alpha / 2 ||f||^2 plus the mean hinge loss).
_ALPHAS = (0.0, 1e-5, 1e-4, 1e-3)

# The shared fit of the candidates of ``alpha='auto'`` (_Candidates), kept
# beside the estimator that plays it for its call only.
_CANDIDATES = WeakCache()

# The Nystroem map of the ``fit`` call under way (_FitMap), for its call only.
_FIT_MAP = WeakCache()

# The kernel values of the ``fit`` call's rows with the landmarks gathered so
# far (_LandmarkValues), for its landmarks' phase only.
_LANDMARK_VALUES = WeakCache()


class _LandmarkValues:
    """The kernel values of the rows of one ``fit`` call with the landmarks,
    kept for the epochs of its landmarks' phase.

    Until ``budget`` landmarks are held, every epoch plays kernel OGD, whose
    round needs the row's kernel values with every landmark so far: on a
    stream that never fills the budget (few hinge losses: well separated
    classes, a large budget), each epoch would compute them all again. The
    landmarks only grow during the phase, so a row's values with the first
    ``count`` landmarks stay what they were: they are kept here, and a later
    epoch computes only those with the landmarks that joined since. Only
    where a kernel value is the same bits whatever the other rows it is
    computed with (:meth:`NystroemOnlineClassifier._values_per_pair`), so
    that the rounds see the same numbers.

    ``index``: the identifiers of the call's rows, in increasing order. The
    values are an array of ``n_rows x budget`` floats at most, allocated
    when first written, held within scikit-learn's ``working_memory`` as
    :class:`~sklearn_budget._linear_online._FitFeatures` is: the rows past
    it are computed in every epoch, as without the cache.
    """

    def __init__(self, index, budget):
        self.index, self.budget = index, budget
        self.n_kept = rows_in_working_memory(len(index), budget)
        self.count = np.zeros(self.n_kept, dtype=np.intp)
        self.values = None

    def find(self, ids):
        """The positions of the rows ``ids`` in the cache (-1: not kept), the
        rows among them whose values are kept, and how many landmarks all of
        those have their values with (0: none kept)."""
        position = np.searchsorted(self.index, ids)
        position[position >= self.n_kept] = -1
        rows = np.flatnonzero(position >= 0)
        rows = rows[self.count[position[rows]] > 0]
        held = int(self.count[position[rows]].min()) if rows.size else 0
        return position, rows, held

    def keep(self, position, values):
        """Keep ``values``, those of the rows at ``position`` with the first
        ``values.shape[1]`` landmarks."""
        kept = position >= 0
        if self.values is None:
            self.values = np.empty((self.n_kept, self.budget))
        self.values[position[kept], : values.shape[1]] = values[kept]
        self.count[position[kept]] = values.shape[1]


class _FitMap:
    """The map ``M = diag(d)^-1/2 V^T`` of a ``fit`` call's stream, and ``R``
    with ``M R = I`` that takes the expansion ``beta = M^T w`` to the
    weights ``w = beta R`` of the map.

    Found once a call, from the eigendecomposition of the switch (the same
    bits when computed again for a stream that switched before the call).
    """

    def __init__(self):
        self.projection = self.M = self.R = None

    def set(self, est, d, V):
        """The map of the eigenpairs ``d, V`` of the switch of ``est``'s stream."""
        self.M = np.ascontiguousarray((V / np.sqrt(d)).T)
        self.R = V * np.sqrt(d)
        self.projection = est._projection

    def get(self, est):
        if self.projection is not est._projection:
            self.set(est, *est._eigen())
        return self.M, self.R


class _Candidates:
    """The penalties of ``alpha='auto'`` played on one stream, scored on held-out rows.

    The penalty shrinks the weights of the Nystroem phase only, so every
    penalty has the same landmarks' phase: the estimator plays it once, and,
    from the switch on, a weight vector per penalty takes the rounds of the
    same rows in the same order. Those rounds are played on the map's
    features ``z(x) = diag(d)^-1/2 V^T k(landmarks, x)`` (``rank`` values a
    row, computed once for the call's epochs) rather than on the expansion:
    the same hypotheses to round-off (``beta = M^T w``), a step costing
    ``O(rank)`` instead of ``O(budget^2)``. After every epoch each
    penalty's averaged hypothesis is scored on the held-out rows; a penalty
    stops once its best score is ``patience`` epochs old (None: never), or
    after an epoch without an update, as its own ``fit`` would.
    """

    def __init__(self, alphas, n_rows, X, y, w, patience):
        self.alphas, self.n_rows, self.patience = alphas, n_rows, patience
        self.X, self.y, self.w = X, y, w
        self.scores = [[] for _ in alphas]
        self.live = [True] * len(alphas)
        self.updates = [0] * len(alphas)
        self.weights = self.sums = self.features = None

    def switch(self, est, V, d, M):
        """At the switch: each penalty's weights of the map, from the expansion
        (``M``: the map of the fit's stream, :class:`_FitMap`)."""
        state = est._state
        t = int(state["counters"][0])
        # w = diag(d)^1/2 V^T alpha; the average's sums of the Nystroem phase
        # start from t w (see _ogd).
        w = (state["alpha"] @ V) * np.sqrt(d)
        self.weights = [w.copy() for _ in self.alphas]
        self.sums = [t * w for _ in self.alphas] if est.average else None
        self.map = M  # rank x budget
        self.values = est._landmark_values(self.X, by_block=True)  # in _switch: one thread
        self.features = _FitFeatures(np.arange(self.n_rows), d.size)
        # The epoch's updates so far, those of the landmarks' phase, are every penalty's.
        self.updates = [int(state["counters"][2])] * len(self.alphas)

    def play(self, est, X, rows, ids, cls, sw):
        """The rounds of the rows ``rows`` of ``X`` (see ``_rounds._select``)
        for every live penalty."""
        Z = self.features.features(X, rows, ids, lambda Xr: est._map_features(Xr, self.map))
        Z = np.ascontiguousarray(Z)
        state = est._state
        t0, stepped = int(state["counters"][0]), 0
        for i in np.flatnonzero(self.live):
            # Rows that overflow stop the choice as they would stop the final fit.
            _, _, updates = finite_hinge_rounds(
                Z,
                cls,
                sw,
                self.weights[i],
                _NO_ARRAY if self.sums is None else self.sums[i],
                float(est.learning_rate),
                t0,
                _NO_MARGINS,
                0,
                Z.shape[0],
                joint=est._joint_hinge(),
                shrink=1.0 - est.learning_rate * self.alphas[i],
            )
            self.updates[i] += updates
            stepped += updates
        # The rounds of the stream, counted once; its updates, those of any penalty.
        state["counters"] += (len(ids), 0, stepped)

    def end_of_epoch(self, est):
        """Score every live penalty's averaged model; a reason to stop, or None."""
        if self.weights is None:  # landmarks still joining: one model for all
            est._publish()
            shared = self._score(est._scores(self.X))
        t = int(est._state["counters"][0])
        for i in np.flatnonzero(self.live):
            if self.weights is None:
                score = shared
            else:
                w = self.weights[i]
                if self.sums is None:
                    dual = w @ self.map
                else:
                    dual = (est._state["avg_dual"] + (t * w - self.sums[i]) @ self.map) / t
                score = self._score(self.values @ dual.T)
            self.scores[i].append(score)
            age = len(self.scores[i]) - 1 - int(np.argmax(self.scores[i]))
            # (Before the switch, an epoch without updates stops the stream.)
            idle = self.weights is not None and self.updates[i] == 0
            if idle or (self.patience is not None and age >= self.patience):
                self.live[i] = False
        self.updates = [0] * len(self.alphas)
        return None if any(self.live) else "every penalty stopped"

    def _score(self, scores):
        right = _predicted_index(scores) == self.y
        return float(np.average(right, weights=self.w))


def _stack(A, B):
    """The rows of ``A`` then those of ``B`` (sparse if either is)."""
    if sp.issparse(A) or sp.issparse(B):
        return sp.vstack([sp.csr_matrix(A), sp.csr_matrix(B)], format="csr")
    return np.vstack([A, B])


class NystroemOnlineClassifier(_KernelStateMixin, _FeatureOnlineClassifier):
    """Nystroem Online Gradient Descent (NOGD): kernel OGD on a budget, then a Nystroem map.

    Online gradient descent on the hinge loss in the kernel's space (Lu,
    Hoi, Wang, Zhao and Liu, 2016, Algorithm 2): every round with
    ``y f(x) < 1`` adds ``learning_rate y k(x, .)`` to ``f``, its row
    joining the support set, until ``budget`` rows are held. Those rows are
    then the landmarks of a Nystroem map of rank ``n_components``: with
    ``K = V diag(d) V^T`` the eigendecomposition of their Gram matrix, kept
    to its ``n_components`` largest eigenvalues, ``z(x) = diag(d)^-1/2 V^T
    k(landmarks, x)``. The kernel expansion so far is carried into weights
    ``w`` of that space, and online gradient descent goes on with the
    linear rounds ``w <- w + learning_rate y z(x)`` where ``y w . z(x) < 1``.
    The hypothesis stays a kernel expansion on the landmarks
    (``dual_coef_``), so the memory is ``budget`` rows whatever the
    stream's length.

    More than two classes have one output each, learned one-vs-rest or
    with the multiclass hinge loss of Crammer and Singer (``multi_class``);
    a row joins the landmarks when its round takes a step.

    Parameters
    ----------
    budget : int, default=500
        Number of landmarks: rows of the stream kept as support vectors.

    n_components : int or None, default=None
        Rank ``k`` of the Nystroem map, at most ``budget``; None uses the
        budget, so that the expansion learned before the switch carries
        over exactly. A lower rank is a coarser approximation of the kernel,
        which saves little (``fit``'s steps and features, not the
        memory of the model, see the Notes): the paper's experiments take a
        fifth of the budget, which lost 5 points on USPS at budget 100
        (:ref:`decisions-fogd-nogd`).
        The rank used (``n_components_``) is smaller when the Gram matrix
        of the landmarks has fewer eigenvalues above ``1e-8`` times its
        largest.

    kernel : {'rbf', 'linear', 'poly', 'polynomial', 'sigmoid', 'laplacian', \
            'cosine', 'chi2', 'additive_chi2'} or callable, default='rbf'
        Kernel, as in :func:`sklearn.metrics.pairwise.pairwise_kernels`. The
        Nystroem map takes the positive eigenvalues of the landmarks' Gram
        matrix only, so a kernel that is not positive semi-definite
        (``'sigmoid'``, ``'additive_chi2'``) is approximated by its positive
        part. The chi2 kernels need dense non-negative data.

    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient for 'rbf', 'poly', 'sigmoid', 'laplacian' and
        'chi2'. ``'scale'`` uses ``1 / (n_features * X.var())`` and
        ``'auto'`` ``1 / n_features``, computed once, on the data of the
        call that starts the stream.

    degree : float, default=3
        Degree of the polynomial kernel.

    coef0 : float, default=0.0
        Independent term of the 'poly' and 'sigmoid' kernels.

    kernel_params : dict, default=None
        Extra keyword arguments for a callable kernel.

    multi_class : {'crammer_singer', 'ovr'}, default='crammer_singer'
        The hinge loss of more than two classes, in both phases.
        ``'crammer_singer'``: the multiclass hinge loss of Crammer and Singer
        (2001), as in :class:`~sklearn.svm.LinearSVC`: a round whose margin
        ``f_y(x) - max_{k != y} f_k(x)`` is below 1 steps the row's class
        ``y`` up and the best other class down (the first of them on ties),
        and no other. ``'ovr'``: one-vs-rest, as in
        :class:`~sklearn.linear_model.SGDClassifier`, a round steps every
        class ``k`` whose margin ``y_k f_k(x)`` is below 1 (``y_k`` is +1 for
        the row's class, -1 for the others). The default steps only on the
        two classes between which the row's prediction is wrong or within
        the margin; on the multiclass sets measured it was 0.6 points more
        accurate than one-vs-rest on average, from -0.1 to +1.7 by set and
        budget (:ref:`fogd-nogd`). Two classes have one output, and the same
        rounds under either. May be changed between calls.

    learning_rate : float, default=1.0
        The step ``eta`` of online gradient descent, constant over the
        stream, in both phases. For a kernel with ``k(x, x) = 1`` (rbf,
        laplacian), one step moves the margin of its row by about
        ``learning_rate`` (the Nystroem features have ``||z(x)||^2 <=
        k(x, x)``): the default takes a row at margin 0 to about the
        hinge's margin of 1, on every data set alike. For other kernels,
        divide it by the typical ``k(x, x)``. May be changed between calls,
        like a learning-rate schedule.

    alpha : float or 'auto', default='auto'
        Strength of an L2 penalty ``alpha / 2 ||w||^2`` on the weights of
        the Nystroem map, added to the hinge loss of each round of the
        second phase, as SGDClassifier's ``alpha``: every round after the
        switch first multiplies the hypothesis by ``1 - learning_rate *
        alpha`` (the step of NORMA, Kivinen, Smola and Williamson, 2004).
        The landmarks' phase plays the paper's rounds whatever the penalty
        (the same landmarks for every ``alpha``); 0 plays the rounds of the
        paper throughout. ``learning_rate * alpha`` must be below 1.
        ``'auto'``: ``fit`` chooses the penalty and the number of epochs
        together on held-out rows (see ``validation_fraction``), then plays
        that choice on all the rows; a stream that ``partial_fit`` starts
        plays the paper's rounds (``alpha_`` is 0). On the nine shipped
        sets at budgets 100 and 500 (3 seeds), against ``Nystroem +
        SGDClassifier`` tuned on a held-out fifth, NOGD was short in 12 of
        the 54 cells (by 0.60 point at most) where the 5 epochs of the
        paper's rounds were short in 18 (0.55), and 0.16 point more
        accurate on average; averaged over the seeds, short in none of the
        18 pairs of set and budget, where 5 epochs were short in 3
        (:ref:`decisions-fogd-nogd`).
        Fixed for a stream.

    validation_fraction : float, default=0.2
        With ``alpha='auto'``, the fraction of the rows of ``fit`` of
        positive weight held out, stratified by class and drawn from
        ``random_state``. Each penalty of ``(0, 1e-5, 1e-4, 1e-3)`` is
        played for up to ``max_iter`` epochs on the other rows, and the
        accuracy of its hypothesis (averaged with ``average=True``) on the
        held-out rows (weighted by ``sample_weight`` and ``class_weight``)
        measured after every epoch; the best penalty and epoch count (the first of equal scores:
        the smaller penalty, then the fewer epochs) are ``alpha_`` and
        ``n_iter_``. Where a class has too few rows to be in both parts,
        ``fit`` plays the paper's rounds (``max_iter``, ``tol``).

    max_iter : int, default=20
        Largest number of online epochs over the training data played by
        ``fit``: the most that ``alpha='auto'`` chooses. ``fit`` stops
        earlier after an epoch without any update, or by the ``tol``
        criterion.

    tol : float or None, default=1e-3
        With a given ``alpha``: the stopping criterion of ``fit`` on the
        online mistake rate of each epoch (the prediction mistakes of the
        epoch over its rounds, unweighted): ``fit`` stops once the rate of
        ``n_iter_no_change`` consecutive epochs has been above
        ``best_rate - tol``, ``best_rate`` the lowest of the earlier
        epochs; a ``fit`` that plays ``max_iter`` epochs without meeting it
        (where it can apply, ``max_iter > n_iter_no_change``) warns with a
        :class:`~sklearn.exceptions.ConvergenceWarning`. With
        ``alpha='auto'``: not None, each penalty's epochs on the held-out
        rows stop once its best score is ``n_iter_no_change`` epochs old,
        and the final fit plays the epochs chosen; None plays every
        penalty ``max_iter`` epochs. ``partial_fit`` ignores it.

    n_iter_no_change : int, default=5
        The epochs of the ``tol`` criteria above. ``partial_fit`` ignores
        it.

    shuffle : bool, default=True
        Whether ``fit`` reshuffles the training data before each epoch.

    average : bool, default=True
        If True, the fitted hypothesis (``dual_coef_``, :meth:`predict`) is
        the average of the hypotheses used in every round played (the
        online-to-batch conversion), kept exactly: every hypothesis of
        either phase is an expansion on the landmarks. The online rounds
        are not changed, and ``n_mistakes_`` still counts the mistakes of
        the hypotheses played online.
    FEATURE_AVERAGE_DEFAULT

    FEATURE_CLASS_WEIGHT

    warm_start : bool, default=False
        If True, ``fit`` continues the current stream instead of starting a
        new one. The kernel parameters, ``budget``, ``n_components`` and
        ``average`` are fixed for a stream: ``partial_fit`` and a
        warm-started ``fit`` refuse to go on after they changed.

    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling of ``fit`` (the algorithm draws nothing).

    FEATURE_VERBOSE

    Attributes
    ----------
    support_ : ndarray of shape (n_SV,)
        Positions of the landmarks in the training stream, in the order
        they joined: row indices into ``X`` after a ``fit`` that starts the
        stream; rows of later calls are numbered after those of the earlier
        calls. A row joins once, whatever the epochs.

    support_vectors_ : {ndarray, sparse matrix} of shape (n_SV, n_features)
        The landmarks (at most ``budget``).

    dual_coef_ : ndarray of shape (1, n_SV) or (n_classes, n_SV)
        Coefficients of the landmarks in the decision function
        ``K(X, support_vectors_) @ dual_coef_.T``: one row for two classes,
        one row per class otherwise. After the switch, the weights ``w``
        of the Nystroem space mapped back, ``w diag(d)^-1/2 V^T``.

    n_components_ : int
        Rank of the Nystroem map in use; 0 while the landmarks are still
        being gathered.

    gamma_ : float
        The kernel coefficient used.

    alpha_ : float
        The L2 penalty of the stream's rounds: ``alpha``, or the one that
        ``fit`` chose with ``alpha='auto'`` (0 for a stream that
        ``partial_fit`` started).

    validation_scores_ : ndarray of shape (4, max_iter)
        After a ``fit`` with ``alpha='auto'``: the held-out accuracy of the
        averaged hypothesis of each penalty of ``(0, 1e-5, 1e-4, 1e-3)``
        (rows) after each epoch (columns); NaN for the epochs not played
        (stopped, see ``tol``), and everywhere where no rows were held out.

    FEATURE_ATTRIBUTES

    See Also
    --------
    FourierOnlineClassifier : The same rounds on random Fourier features.
    sklearn.kernel_approximation.Nystroem : The batch Nystroem map, on
        landmarks drawn at random.

    Notes
    -----
    With ``alpha='auto'``, ``fit`` plays the penalties on one stream of the
    rows not held out before the final fit on all the rows: the penalty
    leaves the landmarks' phase alone, so the landmarks, the map and the
    kernel values of the rows are computed once for the four; after the
    switch, a weight vector per penalty takes each round, on the map's
    features ``z(x)`` (the same hypotheses as on the expansion, to
    round-off, at ``O(n_components_)`` a round: see below). On the shipped
    sets the choice cost 0.6 to 3.7 times the former fit of 5 epochs (CPU
    time), the final fit's epochs what they cost with a given ``alpha``.
    Where the rows not held out never fill the ``budget`` landmarks, there is
    no map to penalise: the choice is then of the epochs alone (``alpha_``
    0), even if the final fit on all the rows fills it (on USPS, digit 0
    against the rest, at ``budget=500``: 362 landmarks).

    The landmarks are the first ``budget`` rows with a margin error, not a
    random sample: they are where the hinge loss was active, as in the
    paper. The switch to the Nystroem map costs one eigendecomposition of a
    ``budget x budget`` matrix, once per stream. ``partial_fit`` plays the
    linear rounds on the weights ``w`` of the map ``z(x) = M k(landmarks,
    x)`` on the expansion ``beta = M^T w`` instead, the same function: a
    round scores in ``O(budget)`` after the kernel values
    (``O(budget * n_features)``), and an update moves ``beta`` along
    ``M^T M k(landmarks, x)`` in ``O(budget^2)``. For dense input and a
    named kernel, the kernel values and the map of a row are computed in
    compiled code, each sum in the order of the row's coordinates, so that
    a stream gives the same model, to the last bit, whatever its split into
    calls (one row at a time, as the river classes play it, included).
    Sparse input and callable kernels go through
    :func:`~sklearn.metrics.pairwise.pairwise_kernels`, whose products may
    round differently in the last bits from one block of rows to another.
    ``fit`` plays its rounds after the switch on the features ``z(x)``
    themselves, a product of BLAS per block of rows (the kernel values in
    it too, by the kernel's formulas for a block, as ``predict`` computes
    them: ten times faster than the compiled values in 784 dimensions),
    computed once for all its epochs within scikit-learn's ``working_memory``
    (``n_samples x n_components_`` floats; the rows beyond it are computed
    in every epoch): a step costs ``O(n_components_)``, where steps on the
    expansion made ``fit`` cost 4.3 and 11.9 times the Nystroem pipeline's
    on a9a at budgets 1,000 and 2,000 (now 1.4 and 1.6). The rounds are
    the same, the weights the same to round-off as on the expansion, and
    ``fit`` is deterministic; it is not the same bits as ``partial_fit`` on
    the same rows. Before the switch, ``fit`` keeps each row's kernel values
    with the landmarks for its epochs too (``n_samples x budget`` floats at
    most, within the same memory; for the named kernels, and sparse input
    with the rbf kernel): a later epoch computes only those with the
    landmarks that joined since, the same values, which halves the fit where
    the landmarks never fill the budget (USPS, digit 0 against the rest, at
    ``budget=500``).

    References
    ----------
    J. Lu, S. C. H. Hoi, J. Wang, P. Zhao and Z.-Y. Liu, "Large Scale Online
    Kernel Learning", Journal of Machine Learning Research 17(47), 2016.

    J. Kivinen, A. J. Smola and R. C. Williamson, "Online learning with
    kernels", IEEE Transactions on Signal Processing 52(8), 2004.

    C. K. I. Williams and M. Seeger, "Using the Nystroem method to speed up
    kernel machines", NIPS 2001.

    K. Crammer and Y. Singer, "On the algorithmic implementation of
    multiclass kernel-based vector machines", Journal of Machine Learning
    Research 2, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_budget import NystroemOnlineClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(400, 2)
    >>> y = (np.hypot(X[:, 0], X[:, 1]) > 1.2).astype(int)
    >>> clf = NystroemOnlineClassifier(budget=50, random_state=0).fit(X, y)
    >>> clf.support_vectors_.shape
    (50, 2)
    >>> bool(0 < clf.n_components_ <= 50)
    True
    >>> bool(clf.score(X, y) > 0.9)
    True
    >>> clf.alpha_ in (0.0, 1e-5, 1e-4, 1e-3), 1 <= clf.n_iter_ <= clf.max_iter
    (True, True)
    """

    __doc__ = _feature_doc(__doc__)

    _parameter_constraints: dict = {
        **_FeatureOnlineClassifier._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "kernel": [StrOptions(set(KERNELS)), callable],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Real],
        "kernel_params": [dict, None],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "alpha": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="left")],
        "validation_fraction": [Interval(Real, 0.0, 1.0, closed="neither")],
    }

    # Parameters fixed for the whole of a stream: they shape its state.
    _stream_params = (
        "budget",
        "n_components",
        "kernel",
        "gamma",
        "degree",
        "coef0",
        "kernel_params",
        "average",
        "alpha",
    )

    def __init__(
        self,
        *,
        budget=500,
        n_components=None,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        kernel_params=None,
        multi_class="crammer_singer",
        learning_rate=1.0,
        alpha="auto",
        validation_fraction=0.2,
        max_iter=20,
        tol=1e-3,
        n_iter_no_change=5,
        shuffle=True,
        average=True,
        class_weight=None,
        warm_start=False,
        random_state=None,
        verbose=0,
        verbose_interval=10_000,
    ):
        self.budget = budget
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.multi_class = multi_class
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.validation_fraction = validation_fraction
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle
        self.average = average
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.verbose_interval = verbose_interval

    def _nonnegative_input(self):
        return is_nonnegative_kernel(self.kernel)

    def _takes_lean_rows(self):
        return not is_nonnegative_kernel(self.kernel)

    def _validate_params(self):
        super()._validate_params()
        if self.alpha != "auto":
            self._check_penalty_step(self.alpha, "alpha")
        if self.n_components is not None and self.n_components > self.budget:
            raise ValueError(
                f"n_components={self.n_components} must be at most budget={self.budget}: "
                "the rank of a Nystroem map of budget landmarks."
            )

    def _check_stream_continues(self):
        super()._check_stream_continues()
        # The penalty that alpha='auto' chose is checked against the
        # learning rate as a given alpha is (_validate_params): the learning
        # rate may change between calls.
        self._check_penalty_step(self.alpha_, "alpha_")

    def _check_penalty_step(self, alpha, name):
        """Refuse the penalty ``alpha`` (the parameter ``name``) where the factor
        ``1 - learning_rate * alpha`` of every round would not be positive."""
        if self.learning_rate * alpha >= 1:
            raise ValueError(
                f"learning_rate * {name} = {self.learning_rate * alpha:.3g} must be below 1: "
                f"each round multiplies the weights by 1 - learning_rate * {name}."
            )

    def _shrink(self):
        # The penalty applies to the weights of the map: the landmarks' phase
        # plays the paper's rounds, the same for every penalty.
        return 1.0 if self._projection is None else 1.0 - self.learning_rate * self.alpha_

    def _epoch_limits(self):
        chosen = _CHOSEN.get(self)
        if chosen is None or chosen[1] is None:
            return self.max_iter, self.tol
        return chosen[1], None

    def _end_of_epoch(self):
        candidates = _CANDIDATES.get(self)
        return None if candidates is None else candidates.end_of_epoch(self)

    def _fit_validated(self, X, y_enc, w, classes, warm, rows=None):
        if self.alpha != "auto" or warm:
            # No choice made: scores of an earlier one would describe another fit.
            vars(self).pop("validation_scores_", None)
            return super()._fit_validated(X, y_enc, w, classes, warm, rows)
        alpha, n_iter, scores = self._select(X, y_enc, w, classes)
        _CHOSEN[self] = (alpha, n_iter)
        try:
            super()._fit_validated(X, y_enc, w, classes, warm, rows)
        finally:
            _CHOSEN.pop(self)
        self.validation_scores_ = scores
        return self

    def _select(self, X, y_enc, w, classes):
        """``alpha='auto'``: the penalty and the epochs of the best held-out score.

        Each penalty of ``_ALPHAS`` is fit, the epochs of ``max_iter`` at most,
        on the rows left by a stratified held-out ``validation_fraction``,
        its averaged model scored on those after every epoch. ``X``,
        ``y_enc``, ``w``, ``classes``: the validated input of the call (see
        ``_validate_fit_input``), whose rows are played without a copy.
        Returns the best ``(alpha, epochs)`` (the first on ties: the smaller
        penalty, then the fewer epochs) and the scores; ``(0.0, None)`` (the
        plain rule: ``max_iter`` and ``tol``) where the rows cannot be split
        so that every class is in both parts.
        """
        scores = np.full((len(_ALPHAS), self.max_iter), np.nan)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        # Rows of weight zero are never played (_keep_weighted) and would
        # score nothing: the rows of positive weight are split, so that the
        # held-out part has weight to score with.
        rows = np.flatnonzero(w > 0)
        try:
            split = StratifiedShuffleSplit(
                n_splits=1, test_size=self.validation_fraction, random_state=seed
            )
            fit_rows, held = next(split.split(np.zeros((rows.size, 1)), y_enc[rows]))
        except ValueError:  # a class of one row, or fewer held-out rows than classes
            return 0.0, None, scores
        fit_rows, held = rows[np.sort(fit_rows)], rows[np.sort(held)]
        if np.unique(y_enc[fit_rows]).size < classes.size:
            return 0.0, None, scores
        # No penalty step of learning_rate * alpha >= 1: the largest penalties
        # (_ALPHAS ascends), whose scores stay NaN.
        playable = [a for a in _ALPHAS if self.learning_rate * a < 1]
        patience = None if self.tol is None else self.n_iter_no_change
        # The candidates' stream is that of a fit on its rows alone: its
        # kernel width is theirs (gamma='scale': the variance of those rows).
        gamma = self.gamma
        if isinstance(gamma, str) and gamma == "scale":
            gamma = resolve_gamma(gamma, _rows(X, fit_rows))
        stream = clone(self).set_params(
            alpha=0.0, tol=None, class_weight=None, warm_start=False, verbose=0, gamma=gamma
        )
        stream.n_features_in_ = X.shape[1]
        candidates = _CANDIDATES[stream] = _Candidates(
            playable, len(fit_rows), _rows(X, held), y_enc[held], w[held], patience
        )
        try:
            with warnings.catch_warnings():
                # The candidates' warnings are the final fit's to give.
                warnings.simplefilter("ignore")
                stream._fit_validated(X, y_enc[fit_rows], w[fit_rows], classes, False, fit_rows)
        finally:
            # Not kept by a traceback that keeps the stream (its held-out rows).
            _CANDIDATES.pop(stream)
        for i, played in enumerate(candidates.scores):
            scores[i, : len(played)] = played
        best = np.unravel_index(np.nanargmax(scores), scores.shape)
        return _ALPHAS[best[0]], int(best[1]) + 1, scores

    def _reset(self, X, from_partial_fit=False):
        """Start a new stream: no landmark, no map."""
        chosen = _CHOSEN.get(self)
        if chosen is not None:
            self.alpha_ = chosen[0]
        else:
            self.alpha_ = 0.0 if self.alpha == "auto" else float(self.alpha)
        self.gamma_ = _stream_gamma(self.gamma, X, from_partial_fit, isinstance(self.kernel, str))
        self._kernel = Kernel(self.kernel, self.gamma_, self.degree, self.coef0, self.kernel_params)
        self._kernel_code = KERNEL_CODES.get(self.kernel) if isinstance(self.kernel, str) else None
        # The landmarks and the map are replaced, never changed in place:
        # kept outside the state, a call's undo record need not copy them.
        self._landmarks = X[:0].copy()
        self._landmark_ids = np.zeros(0, dtype=np.int64)
        # Once switched: the rank of the map and its P = V diag(d)^-1 V^T.
        self._rank, self._projection = 0, None
        self._n_seen = 0
        state = self._new_state(0)
        state["alpha"] = np.zeros((self._n_outputs(), self.budget))
        if self.average:
            state["alpha_acc"] = np.zeros_like(state["alpha"])
        self._state = state
        self._stream_config = {name: getattr(self, name) for name in self._stream_params}

    def _stream_index(self, n_rows):
        return self._n_seen + np.arange(n_rows)

    # What a one-row call sets (see _FeatureOnlineClassifier._play_one_row).
    _one_row_attributes = (
        "n_iter_",
        "n_mistakes_",
        "_n_seen",
        "dual_coef_",
        "support_",
        "support_vectors_",
        "n_components_",
    )

    def _covers_one_row(self):
        # Once the map is built: the landmarks' phase changes the landmarks.
        return self._projection is not None and super()._covers_one_row()

    def _round_projection(self):
        return self._projection

    def _joint_hinge(self):
        return self.multi_class == "crammer_singer"

    def _row_features(self, X, path):
        return self._landmark_values(X)

    # ------------------------------------------------------------------
    # The rounds
    # ------------------------------------------------------------------
    def _play_block(self, X, rows, cls, sw, index, calibrate):
        start, n = 0, cls.shape[0]
        if self._projection is None:
            # The rows are gathered only here: the rounds on the map read
            # the features of rows that fit keeps (_fit_features).
            X = _rows(X, rows)
            rows = slice(0, n)
            # A landmark whose squared norm overflows would be learnt (the
            # rounds' kernel values are computed by differences) and then
            # make every score NaN (scores expand ||x - z||^2): refused first.
            with np.errstate(over="ignore"):
                norms = row_norms(X, squared=True)
            if not np.isfinite(norms).all():
                raise ValueError(
                    "Non-finite scores: the squared norm of a row of X overflows "
                    f"(largest |x|: {abs(X).max():.3g}). Scale X as the training data were scaled."
                )
            # A chunk of rows at a time, as many as the landmarks still to
            # come (at least _GATHER_CHUNK): the kernel values of a chunk's
            # rows with each other are computed for rounds that may never be
            # played (the budget fills), whose cost grows with the chunk's
            # square. The rounds, and each value, are the same in any chunks.
            kept = _LANDMARK_VALUES.get(self)
            while start < n and len(self._landmark_ids) < self.budget:
                chunk = max(_GATHER_CHUNK, self.budget - len(self._landmark_ids))
                if kept is not None and kept.find(index[start : start + 1])[2]:
                    # A later epoch: its rows rarely join, and their values
                    # with the landmarks are kept; those with each other are
                    # mostly never read.
                    chunk = _GATHER_CHUNK
                stop = min(n, start + chunk)
                start += self._gather_landmarks(
                    X[start:stop], cls[start:stop], sw[start:stop], index[start:stop], calibrate
                )
            if len(self._landmark_ids) == self.budget:
                self._switch()
        if self._projection is not None and start < n:
            rest = _select(rows, slice(start, n))
            candidates = _CANDIDATES.get(self)
            if candidates is not None:
                candidates.play(self, X, rest, index[start:], cls[start:], sw[start:])
                return
            fit_map = _FIT_MAP.get(self)
            if fit_map is not None:
                ids = None if index is None else index[start:]
                self._play_on_map(X, rest, cls[start:], sw[start:], ids, calibrate, fit_map)
                return
            # partial_fit: the linear rounds on the weights w of the map
            # z = M k(L, x), M = diag(d)^-1/2 V^T, played on the expansion
            # beta = M^T w: f(x) = beta . k(L, x), and a step along z(x)
            # moves beta along P k(L, x) with P = M^T M, paid on updates
            # only; each row's values are computed alone (the same bits in
            # any split of the stream).
            K = self._landmark_values(_rows(X, rest))
            state = self._state
            self._hinge_rounds(
                K,
                cls[start:],
                sw[start:],
                calibrate,
                state["w"],
                state.get("acc"),
                P=self._projection,
            )

    @single_blas_thread()  # the same features and weights for any thread count
    def _play_on_map(self, X, rows, cls, sw, ids, calibrate, fit_map):
        """``fit``'s rounds of the Nystroem phase, on the features of the map
        (of the rows ``rows`` of ``X``, see ``_rounds._select``).

        The same rounds as on the expansion, to round-off: the weights
        ``w = beta R`` of the map take the steps along ``z(x) = M k(L, x)``
        (``O(n_components_)`` a step, where a step on the expansion costs
        ``O(budget^2)``), and the expansion ``beta = M^T w`` (and the
        average's sums) are brought back after the block. The features come
        from one product of BLAS a block of rows, computed once for the
        call's epochs (``_fit_features``): the model is deterministic, but
        not the same bits as a stream of ``partial_fit`` calls, which plays
        on the expansion.
        """
        M, R = fit_map.get(self)
        Z = self._fit_features(X, rows, ids, lambda Xr: self._map_features(Xr, M))
        state = self._state
        w = state["w"] @ R
        acc = None if state.get("acc") is None else state["acc"] @ R
        self._hinge_rounds(Z, cls, sw, calibrate, w, acc)
        state["w"][...] = w @ M
        if acc is not None:
            state["acc"][...] = acc @ M

    def _play_epochs(self, X, rows, y, w, index, rng, warm):
        # Only fit plays the Nystroem phase on the map's features (_play_on_map).
        _FIT_MAP[self] = _FitMap()
        if self._projection is None and self.max_iter > 1 and self._values_per_pair(X):
            _LANDMARK_VALUES[self] = _LandmarkValues(index, self.budget)
        try:
            return super()._play_epochs(X, rows, y, w, index, rng, warm)
        finally:
            _FIT_MAP.pop(self)
            _LANDMARK_VALUES.pop(self)

    def _gather_landmarks(self, X, cls, sw, index, calibrate):
        """Kernel OGD on the rows of a chunk until ``budget`` landmarks are held.

        ``index``: the rows' identifiers in the stream (``_stream_index``).
        The kernel values of the rows with the landmarks and with each
        other are computed at once; a row that already is a landmark (a
        later epoch of ``fit``) updates its own coefficient. Returns the
        row after the last one played.
        """
        m, n = len(self._landmark_ids), X.shape[0]
        kept = _LANDMARK_VALUES.get(self)
        cached, rows, held = (None, None, 0) if kept is None else kept.find(index)
        if held:
            # Of the rows whose values are kept, only those with the
            # landmarks that joined since their last epoch are computed
            # (_LandmarkValues); the other rows' values, all.
            K = np.empty((n, m + n))
            fresh = np.setdiff1d(np.arange(n), rows, assume_unique=True)
            if fresh.size:
                K[fresh] = self._kernel_values(_rows(X, fresh), _stack(self._landmarks, X))
            K[rows, :held] = kept.values[cached[rows], :held]
            K[rows, held:] = self._kernel_values(_rows(X, rows), _stack(self._landmarks[held:], X))
        else:
            K = self._kernel_values(X, _stack(self._landmarks, X))
        columns = m + np.arange(n, dtype=np.int64)
        known = np.flatnonzero(np.isin(index, self._landmark_ids))
        if known.size:
            position = {int(r): j for j, r in enumerate(self._landmark_ids)}
            columns[known] = [position[int(r)] for r in index[known]]
        state, n_out = self._state, self._n_outputs()
        alpha = np.zeros((n_out, m + n))
        alpha[:, :m] = state["alpha"][:, :m]
        acc = None
        if self.average:
            acc = np.zeros_like(alpha)
            acc[:, :m] = state["alpha_acc"][:, :m]
        end = self._hinge_rounds(
            K,
            cls,
            sw,
            calibrate,
            alpha,
            acc,
            columns=columns,
            n_members=m,
            members_left=self.budget - m,
        )
        new = np.flatnonzero((alpha[:, m : m + end] != 0).any(axis=0))
        joined = m + new.size
        state["alpha"][:, :m] = alpha[:, :m]
        state["alpha"][:, m:joined] = alpha[:, m + new]
        if self.average:
            state["alpha_acc"][:, :m] = acc[:, :m]
            state["alpha_acc"][:, m:joined] = acc[:, m + new]
        if new.size:
            self._landmarks = _stack(self._landmarks, X[new])
            self._landmark_ids = np.concatenate([self._landmark_ids, index[new]])
        if kept is not None and len(self._landmark_ids) < self.budget:
            kept.keep(cached, K[:, np.concatenate([np.arange(m), m + new])])
        return end

    @single_blas_thread()  # the same map for any thread count
    def _eigen(self):
        """The kept eigenvalues ``d`` and eigenvectors ``V`` of the landmarks' Gram matrix."""
        L = self._landmarks
        G = self._kernel_values(L, L)
        eigvals, eigvecs = np.linalg.eigh(0.5 * (G + G.T))
        order = np.argsort(eigvals)[::-1]
        k = self.budget if self.n_components is None else self.n_components
        top = order[:k]
        top = top[eigvals[top] > _RANK_RTOL * max(eigvals[order[0]], 0.0)]
        if top.size == 0:  # a zero Gram matrix: one direction, weight zero
            top = order[:1]
        return np.maximum(eigvals[top], np.finfo(float).tiny), eigvecs[:, top]

    @single_blas_thread()  # the same map for any thread count
    def _switch(self):
        """The Nystroem map of the landmarks, and the expansion carried into its weights."""
        # The landmarks' phase is over: its kernel values are not read again.
        _LANDMARK_VALUES.pop(self)
        d, V = self._eigen()
        P = (V / d) @ V.T
        self._rank, self._projection = d.size, 0.5 * (P + P.T)
        fit_map = _FIT_MAP.get(self)
        if fit_map is not None:
            fit_map.set(self, d, V)
        candidates = _CANDIDATES.get(self)
        if candidates is not None:  # played by a fit: its map is at hand
            candidates.switch(self, V, d, fit_map.M)
        state = self._state
        t = int(state["counters"][0])
        # The weights w = diag(d)^1/2 V^T alpha of the map, as the expansion
        # beta = M^T w = V V^T alpha: the expansion so far, projected on the
        # kept eigenvectors (itself at full rank).
        state["w"] = (state["alpha"] @ V) @ V.T
        if self.average:
            # The phase's hypotheses, summed as an expansion on the landmarks;
            # the sums of the next phase start from t w (see _ogd).
            state["avg_dual"] = t * state["alpha"] - state["alpha_acc"]
            state["acc"] = t * state["w"]

    def _values_per_pair(self, X):
        """Whether the kernel value of two rows is the same bits whatever the
        other rows it is computed with: the package's compiled formulas of
        dense rows, and the sparse rbf values (a sum of products per pair of
        rows, over the first row's entries in order, then elementwise steps)."""
        return self._kernel_code is not None and (not sp.issparse(X) or self.kernel == "rbf")

    def _kernel_values(self, X, Z):
        """``k(X, Z)``: for dense rows of a named kernel, by the compiled
        formulas of the package, the same bits for a row whatever its block."""
        return kernel_values(self._kernel, self._kernel_code, X, Z)

    def _landmark_values(self, X, by_block=False):
        """``k(X, landmarks)``, C-contiguous float64.

        ``by_block``: by the kernel's formulas for a block of rows (a BLAS
        product for dense rows, as ``predict`` scores them), ten times
        faster than the compiled values in a few hundred dimensions, but
        whose last bits may depend on the block; by the compiled values
        where those are not finite (huge rows).
        """
        if by_block and self._kernel_code is not None and not sp.issparse(X):
            return block_kernel_values(self._kernel, self._kernel_code, X, self._landmarks)[0]
        return np.ascontiguousarray(self._kernel_values(X, self._landmarks), dtype=np.float64)

    @single_blas_thread()  # the same features for any thread count
    def _map_features(self, X, M):
        """The features ``z(x) = M k(landmarks, x)`` of the rows ``X`` (BLAS),
        for ``fit``'s rounds on the map, whose bits depend on the block anyway."""
        return self._landmark_values(X, by_block=True) @ M.T

    # ------------------------------------------------------------------
    # The fitted model
    # ------------------------------------------------------------------
    def _end_of_call(self, n_rows):
        self._n_seen += n_rows
        super()._end_of_call(n_rows)

    def _publish(self):
        state, m = self._state, len(self._landmark_ids)
        t = int(state["counters"][0])
        if self._projection is None:
            alpha = state["alpha"][:, :m]
            if self.average:
                alpha = _averaged(alpha, state["alpha_acc"][:, :m], t)
            dual = alpha.copy()
        elif self.average:
            dual = (state["avg_dual"] + t * state["w"] - state["acc"]) / t
        else:
            dual = state["w"].copy()
        self.dual_coef_ = np.ascontiguousarray(dual)
        self.support_ = self._landmark_ids.copy()
        self.support_vectors_ = self._landmarks
        self.n_components_ = self._rank

    def _scores(self, X):
        return self._kernel.expansion(X, self.support_vectors_, self.dual_coef_)
