"""Docstring fragments shared by the kernel estimators.

The estimators' docstrings are templates: :func:`_doc` fills in the
parameters every kernel estimator has (``{common}``), their fitted
attributes (``{attributes}``) and, for the rules that remove members, how
the average stays within the budget (``{averaging}``). Texts used by one
module only stay beside its estimators.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

_COMMON_PARAMS_DOC = """
    kernel : {'rbf', 'linear', 'poly', 'polynomial', 'sigmoid', 'laplacian', \
            'cosine', 'chi2', 'additive_chi2'} or callable, default='rbf'
        Kernel, as in :func:`sklearn.metrics.pairwise.pairwise_kernels`. The
        chi2 kernels need dense non-negative data.

    gamma : {'scale', 'auto'} or float, default='scale'
        Kernel coefficient for 'rbf', 'poly', 'sigmoid', 'laplacian' and
        'chi2'. ``'scale'`` uses ``1 / (n_features * X.var())`` and
        ``'auto'`` uses ``1 / n_features``, both computed once, on the data
        of the call that starts the stream (``fit``, or the first
        ``partial_fit``), and kept for the rest of the stream.

    degree : float, default=3
        Degree of the polynomial kernel.

    coef0 : float, default=0.0
        Independent term of the 'poly' and 'sigmoid' kernels.

    kernel_params : dict, default=None
        Extra keyword arguments for a callable kernel.

MAX_ITER
STOPPING
    shuffle : bool, default=True
        Whether ``fit`` reshuffles the training data before each epoch.

    class_weight : dict, 'balanced' or None, default=None
        Step multiplier of each class, ``{class_label: weight}``: the sample
        weight of every row is multiplied by the weight of its class before
        the row is played, so the step taken on it is scaled in the same way
        (classes missing from the dict weigh 1, and the rows of a class of
        weight 0 are not played). The keys must be classes of the model.
        ``'balanced'`` sets the weights to
        ``n_samples / (n_classes * np.bincount(y))`` from the labels ``y``
        of the ``fit`` call (sample weights do not enter), as
        :func:`~sklearn.utils.class_weight.compute_class_weight` computes
        them. ``partial_fit`` refuses ``'balanced'``, since one call does not
        show the class frequencies of a stream: compute the weights on a
        large enough sample of its labels and pass them as a dict. Steps
        that already correct the margin exactly (Passive-Aggressive, MIRA,
        the Projectron's projected step) overshoot with weights far above 1,
        and the removal rules of the budget algorithms do not see the
        weights.

AVERAGE
    warm_start : bool, default=False
        If True, ``fit`` continues the current stream instead of starting a
        new one. The kernel parameters, ``average`` and the parameters that
        size the model's state (such as ``budget``) are fixed for a stream:
        ``partial_fit`` and a warm-started ``fit`` refuse to go on after
        they changed. The parameters of the steps (``C``, ``loss``, ``eta``,
        ``U``, ``beta``, ``update``, ``class_weight``) may be changed
        between calls, like a learning-rate schedule: they are validated
        again by every call and apply from its first round; so may
        ``max_iter``, ``tol``, ``n_iter_no_change``, ``shuffle`` and the
        progress output.

    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling of ``fit``RANDOM_EXTRA.

    verbose : int, default=0
        Progress output on stdout; 0 prints nothing. Each line gives the
        rounds played, the prediction mistakes made on them, their ratio,
        the support size (training rows in the current hypothesis) and the
        rounds per second. With ``verbose >= 1``, ``fit`` prints a line at
        the end of every epoch, counting the rounds and mistakes of that
        epoch (the mistake rate that ``tol`` uses), with the time since the
        start of ``fit``, and says why it stopped; ``partial_fit`` prints a
        line, counting the rounds and mistakes of the whole stream, each
        time the stream passes a multiple of ``verbose_interval`` rounds.
        That reports at a steady pace within a long call as well as over
        many short ones (one row per call), where one line per call would
        flood the output. With ``verbose >= 2``, ``fit`` also prints a
        line each time an epoch passes a multiple of ``verbose_interval``
        rounds. The rounds per second are those since the previous line of
        the call. Lines are printed between the blocks of at most 256 rows
        in which the rounds are played, never during a block, so a
        line comes at the end of the block in which the multiple falls.

    verbose_interval : int, default=10_000
        Rounds between two progress lines of ``partial_fit`` (and within the
        epochs of ``fit`` with ``verbose >= 2``), as ``verbose_interval``
        of :class:`~sklearn.mixture.GaussianMixture` counts iterations.
"""

_STOPPING_DOC = """
    tol : float or None, default=1e-3
        Stopping criterion of ``fit``, on the online mistake rate of each
        epoch: the prediction mistakes made while playing the epoch divided
        by its rounds (the rows of positive weight), unweighted. ``fit``
        stops once the rate of ``n_iter_no_change`` consecutive epochs has
        been above ``best_rate - tol``, where ``best_rate`` is the lowest
        rate of the earlier epochs of the call. ``None`` disables it;
        ``fit`` still stops after an epoch without any update. The first
        epoch always improves on the start, so the criterion stops ``fit``
        after ``n_iter_no_change + 1`` epochs at the earliest: with the
        defaults (``max_iter=5``, ``n_iter_no_change=5``) it never applies,
        and ``fit`` plays the five epochs with which the defaults were
        measured (see "Default parameters" in the user guide). Where it can
        apply (``max_iter > n_iter_no_change``), a ``fit`` that plays
        ``max_iter`` epochs without meeting it warns with a
        :class:`~sklearn.exceptions.ConvergenceWarning`, as
        :class:`~sklearn.linear_model.SGDClassifier` does; a single pass
        (``max_iter=1``) is an online pass, not an iterative solver, and
        never warns. ``partial_fit`` ignores it.

    n_iter_no_change : int, default=5
        Number of consecutive epochs without an improvement of the mistake
        rate by at least ``tol`` after which ``fit`` stops. ``partial_fit``
        ignores it.
"""

_MAX_ITER_DOC = """
    max_iter : int, default=5
        Largest number of online epochs over the training data played by
        ``fit``. ``fit`` stops earlier after an epoch without any update,
        or by the ``tol`` criterion.
"""

_AVERAGE_DOC = """
    average : bool, default=False
        If True, the fitted hypothesis is the average of the hypotheses used
        in every round played (the online-to-batch conversion), maintained
        exactly in ``O(|S|)`` per round. The online algorithm itself is not
        changed, and ``n_mistakes_`` still counts the mistakes of the
        hypotheses played online.
"""

_REMOVAL_AVERAGE_DOC = """
    average : bool or 'exact', default=False
        The online-to-batch conversion, that is the hypothesis of the fitted
        model. False: the last hypothesis of the stream. True: the average
        of the hypotheses used in every round played, kept as an expansion
        of at most ``budget`` members at every point of the stream (see
        "Averaging within the budget" in the Notes). ``'exact'``: the exact
        average, which keeps every member the stream ever had, so that the
        model and the memory grow with the stream: for research (the
        reference the bounded average approximates), not for deployment.
        The online algorithm itself is not changed, and ``n_mistakes_``
        still counts the mistakes of the hypotheses played online.
"""

_REMOVAL_AVERAGE_NOTES = """
    **Averaging within the budget.** The average of the hypotheses of a
    rule that removes members involves every member it ever had. With
    ``average=True`` each member that leaves brings its running sum (its
    coefficient summed over the rounds it was a member) into a second
    expansion of at most ``budget`` members, the pool: the function joins
    it, or is projected on the pool's span when it lies within
    ``1e-2`` of it; when the pool overflows, the member whose removal
    followed by the projection of its function on the others loses the
    least RKHS norm, ``||beta_q||^2 / (K^{-1})_qq``, leaves and is projected
    (ties: the oldest). The fitted average folds the current members into
    a copy of the pool in the same way, so it has at most ``budget``
    support vectors, chosen for the average. Each change costs
    ``O(budget^2)`` (the pool's inverse Gram matrix is updated in place,
    recomputed by Cholesky every ``budget`` changes), memory is
    ``O(budget^2)``, and the model does not depend on how the stream is
    split into calls. On two classes it is within a point of the exact
    average; with many classes and a small budget it loses more (USPS, 10
    classes, budget 100: about 4 points; ``benchmarks/bench_averaging.py``).
    The projections need a positive semi-definite kernel: with
    ``kernel='sigmoid'`` or ``'additive_chi2'``, ``average=True`` is refused
    (use ``average=False`` or ``'exact'``).
"""


def _averaged_by_default(doc):
    """The text of ``average`` with True as its default, and why.

    Parameters
    ----------
    doc : str
        One of the shared texts of ``average``, whose default is False.

    Returns
    -------
    doc : str
        The same text with ``default=True``, and the reason for the default.
    """
    return (
        doc.replace("default=False", "default=True").rstrip()
        + """
        Averaging is the default: on the shipped data sets the averaged
        hypothesis was at least as accurate as the last one, and depended
        less on the seed (see "Default parameters" in the user guide).
"""
    )


def _averaged_at_every_width(doc):
    """The text of ``average`` with True as its default, for the kernel widths.

    Parameters
    ----------
    doc : str
        One of the shared texts of ``average``, whose default is False.

    Returns
    -------
    doc : str
        The same text with ``default=True``, and the reason for the default.
    """
    return (
        doc.replace("default=False", "default=True").rstrip()
        + """
        Averaging is the default: at a kernel width far from
        ``gamma='scale'`` the last hypothesis of the stream can be a bad
        one, which the average smooths out; on the shipped data sets, from
        0.05 to 10 times the ``'scale'`` width, the averaged default stayed
        above the majority rate where the last hypothesis fell to it (see
        "Default parameters" in the user guide).
"""
    )


def _last_by_default(doc, reason):
    """The text of ``average``, whose default is False, with the reason.

    Parameters
    ----------
    doc : str
        One of the shared texts of ``average``.
    reason : str
        The reason for the default, indented as the text.

    Returns
    -------
    doc : str
        The text followed by the reason.
    """
    return doc.rstrip() + "\n" + reason.rstrip() + "\n"


_VOTE_AVERAGE_DOC = """
    average : bool or 'vote', default=False
        The online-to-batch conversion, that is the hypothesis of the fitted
        model. False: the last hypothesis of the stream. True: the average
        of the hypotheses used in every round played, maintained exactly in
        ``O(|S|)`` per round. ``'vote'``: the voted Perceptron of Freund and
        Schapire (1999). Each hypothesis played online, ``f_k`` after the
        first ``k`` updates, votes for ``sign(f_k(x))`` (with more than two
        classes, for its highest-scoring class) with as many votes as the
        rounds on which it predicted, over all the rounds played (every
        epoch of ``fit``, every ``partial_fit`` call); a hypothesis with
        ``f_k(x) = 0``, such as the empty initial one, abstains.
        :meth:`decision_function` then returns the shares of the vote and
        :meth:`predict_proba` their smoothed proportions. The vote keeps one
        count per update (``vote_counts_``), and costs
        ``O(n_updates * n_classes)`` per predicted row besides the kernel
        values with the support vectors. The online algorithm itself is not
        changed, and ``n_mistakes_`` still counts the mistakes of the
        hypotheses played online.
"""

_VOTE_ATTRIBUTES_DOC = """
    vote_index_ : ndarray of shape (n_updates,)
        With ``average='vote'``: for each update of the stream, in the order
        they were made, the position in ``support_vectors_`` of the example
        it added. A row that joined in several epochs of ``fit`` is one
        support vector, and appears here once per update.

    vote_dual_coef_ : ndarray of shape (1, n_updates) or (n_classes, n_updates)
        With ``average='vote'``: the coefficients added by each update. The
        hypothesis after ``k`` updates is
        ``f_k(x) = sum_{i < k} vote_dual_coef_[:, i] k(sv_i, x)`` with
        ``sv_i = support_vectors_[vote_index_[i]]``; ``dual_coef_`` is then
        that of the last hypothesis.

    vote_counts_ : ndarray of shape (n_updates + 1,)
        With ``average='vote'``: the number of rounds on which ``f_k`` was
        used to predict (its votes), for ``k = 0 .. n_updates``; they sum to
        the rounds played.
"""

_ATTRIBUTES_DOC = """
    classes_ : ndarray of shape (n_classes,)
        The class labels.

    support_ : ndarray of shape (n_SV,)
        Positions of the support vectors in the training stream, sorted
        increasingly: row indices into ``X`` after a ``fit`` that starts the
        stream; rows of later calls (``partial_fit``, a warm-started
        ``fit``) are numbered after those of the earlier calls.

    support_vectors_ : {ndarray, sparse matrix} of shape (n_SV, n_features)
        The support vectors.

    dual_coef_ : ndarray of shape (1, n_SV) or (n_classes, n_SV)
        Coefficients of the support vectors in the decision function: one
        row for two classes, one row per class otherwise.

    n_mistakes_ : int
        Prediction mistakes (``y f(x) <= 0``) made while training, in the
        order the rounds were played; cumulative over ``partial_fit`` calls,
        reset by ``fit`` unless ``warm_start=True``.

    gamma_ : float
        The kernel coefficient used: ``gamma`` itself when numeric, else the
        value that ``'scale'`` or ``'auto'`` resolved to on the data that
        started the stream (kept, and unused, for the kernels that take no
        ``gamma``).

    n_iter_ : int
        Number of epochs played by the last ``fit`` (1 after ``partial_fit``).

    proba_scale_ : float
        Scale ``a`` of the probabilities, ``sigmoid(a f(x))`` (two classes) or
        ``softmax(a f(x))``: fitted by maximum likelihood on the progressive
        margins of the stream (the margin of each round before its update,
        round ``t`` weighted by ``t``; the first epoch only, in ``fit``),
        summarised in fixed bins so that
        the memory does not grow with the stream. See :meth:`predict_proba`.
VOTE_ATTRIBUTES
    n_features_in_ : int
        Number of features seen during the first fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during the first fit. Defined only when `X`
        has feature names that are all strings.
"""


def _doc(
    text, random_extra="", vote=False, max_iter_doc=_MAX_ITER_DOC, average_doc=None, removal=False
):
    """Fill in the shared parts of an estimator's docstring.

    Parameters
    ----------
    text : str
        The docstring, with ``{common}`` where the shared parameters go,
        ``{attributes}`` where the shared fitted attributes go and,
        optionally, ``{averaging}`` in the Notes.
    random_extra : str, default=""
        Appended to the description of ``random_state``, for the rules that
        draw random numbers of their own.
    vote : bool, default=False
        Whether ``average`` accepts 'vote' (and the vote's attributes are
        documented).
    max_iter_doc : str, default=_MAX_ITER_DOC
        The text of ``max_iter``, for estimators with another default.
    average_doc : str, default=None
        The text of ``average``; None chooses the shared one that matches
        ``vote`` and ``removal``.
    removal : bool, default=False
        Whether the rule removes members: ``average`` then accepts 'exact',
        and ``{averaging}`` says how the average stays within the budget.

    Returns
    -------
    doc : str
        The docstring with every placeholder filled in.
    """
    if average_doc is None:
        average_doc = _VOTE_AVERAGE_DOC if vote else _AVERAGE_DOC
        if removal:
            average_doc = _REMOVAL_AVERAGE_DOC
    text = text.replace("{averaging}", _REMOVAL_AVERAGE_NOTES.strip("\n"))
    common = (
        _COMMON_PARAMS_DOC.replace("RANDOM_EXTRA", random_extra)
        .replace("MAX_ITER\n", max_iter_doc.lstrip("\n") + "\n")
        .replace("STOPPING\n", _STOPPING_DOC.lstrip("\n") + "\n")
        .replace("AVERAGE", average_doc.lstrip("\n"))
    )
    attributes = _ATTRIBUTES_DOC.replace("VOTE_ATTRIBUTES", _VOTE_ATTRIBUTES_DOC if vote else "")
    return text.replace("{common}", common).replace("{attributes}", attributes)


# The estimators on a fixed feature space (FOGD, NOGD): the parameters and
# fitted attributes they share, filled in by :func:`_feature_doc`.
_FEATURE_STOPPING_DOC = (
    _MAX_ITER_DOC
    + _STOPPING_DOC
    + """
    shuffle : bool, default=True
        Whether ``fit`` reshuffles the training data before each epoch.
"""
)

_FEATURE_AVERAGE_DEFAULT_DOC = """
        True by default, unlike the published algorithm (Lu et al., 2016),
        which returns the last hypothesis: the average holds where the last
        hypothesis falls to the majority rate (Banana at 1/20 of the
        ``'scale'`` width: FOGD -10.9 and NOGD -10.3 points against it with
        the last hypothesis, +5.8 and +6.4 with the average; 2,000 rows, 3
        seeds), and on the full sets it is within 0.1 point or better
        (NOGD on a9a at budgets 100 and 500: 0.851 and 0.853 against 0.845
        and 0.846; on USPS, 10 classes, at 100: 0.913 against 0.914).
"""

_FEATURE_CLASS_WEIGHT_DOC = """
    class_weight : dict, 'balanced' or None, default=None
        Step multiplier of each class, ``{class_label: weight}``: the
        sample weight of every row is multiplied by the weight of its class
        (classes missing from the dict weigh 1). ``'balanced'`` uses
        ``n_samples / (n_classes * np.bincount(y))`` from the labels of the
        ``fit`` call; ``partial_fit`` refuses it (pass a dict).
"""

_FEATURE_VERBOSE_DOC = """
    verbose : int, default=0
        Progress output on stdout, as for the other estimators of the
        package: with ``verbose >= 1`` a line per epoch of ``fit``, and a
        line each time a stream passes a multiple of ``verbose_interval``
        rounds in ``partial_fit``; with ``verbose >= 2`` lines within the
        epochs of ``fit`` as well. Lines come between blocks of 1024 rows.

    verbose_interval : int, default=10_000
        Rounds between two progress lines.
"""

_FEATURE_ATTRIBUTES_DOC = """
    classes_ : ndarray of shape (n_classes,)
        The class labels.

    n_mistakes_ : int
        Prediction mistakes made while training (``y f(x) <= 0``; with
        more than two classes, a true class's score not above every other
        one), cumulative over ``partial_fit`` calls.

    n_iter_ : int
        Number of epochs played by the last ``fit`` (1 after ``partial_fit``).

    proba_scale_ : float
        The scale ``a`` of the probabilities (see :meth:`predict_proba`).

    n_features_in_ : int
        Number of features seen during the first fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during the first fit. Defined only when `X`
        has feature names that are all strings.
"""


def _feature_doc(text):
    """Fill in the parameters and attributes shared by FOGD and NOGD."""
    return (
        text.replace("    FEATURE_STOPPING\n", _FEATURE_STOPPING_DOC.lstrip("\n"))
        .replace("    FEATURE_AVERAGE_DEFAULT\n", _FEATURE_AVERAGE_DEFAULT_DOC.lstrip("\n"))
        .replace("    FEATURE_CLASS_WEIGHT\n", _FEATURE_CLASS_WEIGHT_DOC.lstrip("\n"))
        .replace("    FEATURE_VERBOSE\n", _FEATURE_VERBOSE_DOC.lstrip("\n"))
        .replace("    FEATURE_ATTRIBUTES\n", _FEATURE_ATTRIBUTES_DOC.lstrip("\n"))
    )


# The Warns section of ``fit``, shared by the estimators that play epochs.
_FIT_WARNS_DOC = """\
        ConvergenceWarning
            When ``fit`` played ``max_iter`` epochs where the ``tol``
            criterion could have stopped it (see ``tol``); and when the
            mistakes of the fitted model on its training rows (at most 2048
            of them, evenly spaced) or those on the rows of the second half
            of the first epoch of a model that had learnt the first half
            only (an estimate of the error on new rows; from 200 rows in
            that half) are not significantly fewer than those of always
            predicting the most frequent class (by two standard deviations
            of that count; rows of equal weight only): then the model has
            likely learnt nothing useful. That model is the hypothesis
            played at each row for the last hypothesis (``average=False``),
            and the average of the hypotheses of the first half for an
            average (at most 1024 rows of the second half).
"""


def _fit_doc(doc):
    """``fit``'s docstring with its Warns section filled in."""
    return doc.replace("        FIT_WARNS\n", _FIT_WARNS_DOC)
