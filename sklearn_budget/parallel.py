"""Training one budgeted model on several workers: iterative parameter mixing."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    get_tags,
    validate_data,
)

from . import _mixing
from ._averaging import _conversion
from ._kernels import is_nonnegative_kernel, resolve_gamma
from ._transaction import Transaction
from ._validation import _reject_datetime

__all__ = ["ParameterMixingClassifier"]

# Shards of numpy or scipy input when n_shards is None.
_DEFAULT_SHARDS = 8


def _is_mixable(estimator_class):
    """Whether parameter mixing trains ``estimator_class``.

    The estimators that carry ``_mixable`` load a hypothesis given as an
    expansion (``_load_expansion``) and have a ``budget`` to compress the
    mixed expansion to; the others (unbounded or batch learners) do not.
    """
    return getattr(estimator_class, "_mixable", False)


def _mixable_estimators():
    """Names of the package's estimators that parameter mixing trains, sorted."""
    import sklearn_budget

    return sorted(
        name for name in sklearn_budget.__all__ if _is_mixable(getattr(sklearn_budget, name))
    )


def _is_dask_array(X):
    return type(X).__module__.startswith("dask.") and hasattr(X, "chunks")


class ParameterMixingClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Train a budgeted kernel classifier on shards in parallel, by parameter mixing.

    Iterative parameter mixing (McDonald, Hall and Mann, 2010) for the
    budget learners of the package: the rows are split into shards; on each
    *mix*, a copy of ``estimator`` starts on every shard from the current
    mixed model and plays one pass over its shard (in a shuffled order when
    ``estimator.shuffle``), all shards in parallel; the shards' functions
    are then averaged (uniformly, or weighted by their numbers of updates),
    and the average, an expansion over the union of the shards' support
    sets, is compressed back to ``estimator.budget`` members. After
    ``n_mixes`` mixes, or a mix in which no shard updated, the mixed model
    is an ordinary fitted estimator of the wrapped class, ``estimator_``.

    A pass over a shard is as costly as a pass of the sequential learner
    over the same rows, so ``S`` shards on ``S`` workers play an epoch about
    ``S`` times faster; the mixed model is not the model of a sequential
    pass: in the measurements it is no more accurate than the averaged
    hypothesis of a sequential run of the Forgetron or the Randomized
    Budget Perceptron after the same number of epochs, and less accurate
    with many small shards (see :ref:`scale_out_mixing` for the measured
    differences).

    Parameters
    ----------
    estimator : estimator object
        A budget learner of the package (:class:`~sklearn_budget.Forgetron`,
        :class:`~sklearn_budget.RandomizedBudgetPerceptron`,
        :class:`~sklearn_budget.BudgetPerceptron`,
        :class:`~sklearn_budget.TighterBudgetPerceptron`,
        :class:`~sklearn_budget.Stoptron`,
        :class:`~sklearn_budget.Projectron` or
        :class:`~sklearn_budget.ProjectronPlusPlus` with a ``budget``, or
        :class:`~sklearn_budget.BudgetedSGDClassifier`), with
        ``average=False`` or ``True``. Learners without a budget are refused:
        the union of the shards' support sets would grow with every mix.

    n_shards : int, default=None
        Number of shards of numpy or scipy input: its rows, in order, split
        into that many parts of near-equal size (:func:`numpy.array_split`;
        shuffle rows that are ordered, for example by class, first). None
        means 8. A dask array is split by its chunks of rows, one shard per
        chunk: ``n_shards`` must then be None or the number of chunks
        (rechunk the array to change it).

    n_mixes : int, default=5
        Most mixes, that is epochs over the training set. Fitting stops
        earlier after a mix in which no shard updated its model (the mixed
        model would not change).

    mixing : {'uniform', 'updates'}, default='uniform'
        Weights of the shards' functions in the mix: equal, or proportional
        to the number of updates each shard made in the mix (uniform when
        none made any).

    n_jobs : int, default=None
        Shards of numpy or scipy input trained at once, by
        :class:`joblib.Parallel` (so that
        ``joblib.parallel_backend('dask')`` sends them to a dask cluster).
        None means 1 unless in a :func:`joblib.parallel_backend` context.
        Shards of a dask array run on the cluster of the current
        ``dask.distributed`` client, each where its chunk lives; ``n_jobs``
        does not apply to them.

    random_state : int, RandomState instance or None, default=None
        Draws the ``random_state`` of the shards' copies (one per shard and
        mix), which also seeds the order in which a copy plays its shard.
        The fitted model is a deterministic function of ``random_state``
        and of the shard layout, whatever the scheduler, the number of jobs
        or the machines the shards run on.

    Attributes
    ----------
    estimator_ : estimator object
        The mixed model: a fitted estimator of the class of ``estimator``,
        with the parameters of ``estimator`` except ``gamma`` (the numeric
        width, resolved once on the whole training set when ``'scale'`` or
        ``'auto'``) and ``class_weight='balanced'`` (the weights of the whole
        training set, as a dict). Its ``support_`` holds row indices of the
        training set (-1 for points that are not rows, such as merged points
        of budgeted SGD); it can go on with ``partial_fit``.

    classes_ : ndarray of shape (n_classes,)
        The class labels.

    n_features_in_ : int
        Number of features seen during ``fit``.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    n_mixes_ : int
        Mixes played.

    n_updates_ : ndarray of shape (n_played, n_shards)
        Updates of each shard's model in each mix (``n_played`` is
        ``n_mixes_``).

    mix_weights_ : ndarray of shape (n_played, n_shards)
        Weight of each shard's function in each mix.

    See Also
    --------
    dask_ml.wrappers.Incremental : Plays the chunks of a dask array in
        order, as one sequential stream.

    Notes
    -----
    **The shards' start.** A copy is put in the state of a hypothesis equal
    to the mixed model with the rule's own state rebuilt from it (the
    factor of the members' Gram matrix of the Projectron and of budgeted
    SGD's projection, the weights and unit directions of the Forgetron's
    members, the members' scores and labels of the Budget Perceptrons; the
    evaluation set of :class:`~sklearn_budget.TighterBudgetPerceptron`
    starts empty), as after ``T`` rounds, with ``T`` the weighted mean of
    the shards' round counts of the last mix: the next round of budgeted
    SGD shrinks by ``1 - 1/(T + 1)`` and steps by ``1 / (alpha (T + 1))``
    (``alpha='auto'`` is ``1e-3`` there: a loaded hypothesis has no first
    call whose rows would size it).
    The Forgetron's sums ``Q`` and ``M`` are the weighted means of the
    shards'. The loaded members are the oldest, in the order they joined
    the compressed model.

    **Averaging.** With ``average=True``, a shard's function is its averaged
    hypothesis, the running average started as the mixed model held for
    ``T`` rounds: after mix ``k`` the mixed model is an average over the
    rounds of all the mixes so far, and each shard starts from it. The
    average covers the hypotheses that predicted the shard's rounds, not the
    one its last update made: a shard that plays a single row returns the
    model it started from, so shards of very few rows barely move an
    averaged mix.

    **Weights.** Rows of weight zero (sample weight times class weight) are
    not played; a shard without a row of positive weight returns the model
    it started from, with no update.

    **Compression.** The mixed expansion is compressed to at most
    ``budget`` members as the bounded average of the removal rules
    compresses its pool: a subset chosen by kernel matching pursuit (up to
    a budget of 128) or by the size of each member's function, whose
    coefficients are refitted by ridge least squares to the whole mixed
    function, at its own rows after matching pursuit and in the kernel's
    space otherwise. With the rbf kernel, up to a budget of 128, a *reduced
    set* of new points then takes the subset's place where it fits the
    mixed function better at its rows: the centres of weighted k-means of
    the members (each weighted by the norm of its coefficients; at most 10
    Lloyd steps from the subset), their coefficients refitted in the same
    way. Such a point is no training row: its index in ``support_`` is -1.
    A member whose function is numerically in the span of the others kept
    is then dropped, its part carried by them.

    **Probabilities.** The bins of the progressive margins are additive:
    ``estimator_`` has the sum of the shards' bins of the last mix, whose
    margins were those of hypotheses near the final one, each out of
    sample for its shard. ``n_mistakes_`` of ``estimator_`` counts the
    mistakes of that mix.

    References
    ----------
    R. McDonald, K. Hall and G. Mann. Distributed training strategies for
    the structured perceptron. NAACL 2010.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_budget import Forgetron
    >>> from sklearn_budget.parallel import ParameterMixingClassifier
    >>> X, y = make_moons(n_samples=600, noise=0.1, random_state=0)
    >>> clf = ParameterMixingClassifier(
    ...     Forgetron(budget=30, gamma=2.0), n_shards=4, n_mixes=3, random_state=0
    ... ).fit(X, y)
    >>> len(clf.estimator_.support_) <= 30
    True
    >>> clf.score(X, y) > 0.8
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "decision_function"])],
        "n_shards": [Interval(Integral, 1, None, closed="left"), None],
        "n_mixes": [Interval(Integral, 1, None, closed="left")],
        "mixing": [StrOptions({"uniform", "updates"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator,
        *,
        n_shards=None,
        n_mixes=5,
        mixing="uniform",
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_shards = n_shards
        self.n_mixes = n_mixes
        self.mixing = mixing
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------
    def _check_estimator(self):
        est = self.estimator
        name = type(est).__name__
        budget = getattr(est, "budget", None) if "budget" in est.get_params() else None
        if not _is_mixable(type(est)) or not isinstance(budget, Integral):
            *others, last = _mixable_estimators()
            raise ValueError(
                f"ParameterMixingClassifier compresses the mixed model to the budget of the "
                f"estimator, and {name} has no budget: use a budget learner "
                f"({', '.join(others)} or {last}, with an integer budget)."
            )
        est._validate_params()
        if _conversion(est.average) not in ("last", "average"):
            raise ValueError(
                f"average={est.average!r} is not supported by ParameterMixingClassifier: "
                "use average=False or average=True (the shards' averages are mixed)."
            )

    def _prepared(self, gamma_of, y, classes):
        """The estimator the shards copy: numeric gamma, class weights as a dict."""
        est = clone(self.estimator)
        params = {"warm_start": False, "verbose": 0}
        if isinstance(est.gamma, str) and isinstance(est.kernel, str):
            params["gamma"] = gamma_of(est.gamma)
        if isinstance(est.class_weight, str):
            weights = compute_class_weight(est.class_weight, classes=classes, y=y)
            params["class_weight"] = dict(zip(classes.tolist(), weights.tolist()))
        return est.set_params(**params)

    def fit(self, X, y, sample_weight=None):
        """Fit the mixed model on shards of ``(X, y)``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data. A dask array is trained shard by shard where its
            chunks live, through the current ``dask.distributed`` client.
        y : array-like or dask array of shape (n_samples,)
            Target values.
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Weight of each sample (see ``fit`` of the wrapped estimator).

        Returns
        -------
        self : object
            Fitted meta-estimator.
        """
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight, on_mix=None):
        """:meth:`fit`; ``on_mix(k, estimator)``, if given, sees the mixed model
        after each mix ``k`` (for the benchmarks)."""
        self._validate_params()
        self._check_estimator()
        # A failed fit leaves the meta-estimator as it was.
        with Transaction(self):
            if _is_dask_array(X):
                self._fit_dask(X, y, sample_weight, on_mix)
            else:
                self._fit_local(X, y, sample_weight, on_mix)
        return self

    def _fit_local(self, X, y, sample_weight, on_mix):
        _reject_datetime(X)
        nonneg = is_nonnegative_kernel(self.estimator.kernel)
        X = validate_data(
            self, X, accept_sparse=False if nonneg else "csr", dtype=np.float64, reset=True
        )
        check_classification_targets(y)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        classes = unique_labels(y)
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        w = None
        if sample_weight is not None:
            w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
            # Older scikit-learn accepts weights that are all zero.
            if not np.any(w > 0):
                raise ValueError("The sample weights are all zero: at least one must be positive.")
        n = X.shape[0]
        n_shards = _DEFAULT_SHARDS if self.n_shards is None else self.n_shards
        if n_shards > n:
            raise ValueError(f"n_shards={n_shards} is larger than n_samples={n}.")
        bounds = np.cumsum([0] + [len(p) for p in np.array_split(np.arange(n), n_shards)])
        est = self._prepared(lambda g: resolve_gamma(g, X), y, classes)
        shards = [
            (X[a:b], y[a:b], None if w is None else w[a:b], a)
            for a, b in zip(bounds[:-1], bounds[1:])
        ]

        def run(start, seeds):
            return Parallel(n_jobs=self.n_jobs)(
                delayed(_mixing.train_shard)(est, start, Xs, ys, ws, a, classes, seed, n)
                for (Xs, ys, ws, a), seed in zip(shards, seeds)
            )

        self._mix_loop(run, est, classes, n, X.shape[1], sp.issparse(X), len(shards), on_mix)

    def _fit_dask(self, X, y, sample_weight, on_mix):
        import dask.array as da
        from distributed import get_client

        try:
            client = get_client()
        except ValueError as exc:
            raise ValueError(
                "A dask array is trained where its chunks live, through a "
                "dask.distributed Client: start one (distributed.Client()), or pass "
                "X.compute() to train in this process."
            ) from exc
        if X.ndim != 2:
            raise ValueError(f"Expected a 2D dask array, got {X.ndim} dimension(s).")
        X = X.rechunk({1: -1})
        n, d = X.shape
        chunks = X.chunks[0]
        if self.n_shards is not None and self.n_shards != len(chunks):
            raise ValueError(
                f"n_shards={self.n_shards}, but a dask array is split by its {len(chunks)} "
                "chunks of rows: pass n_shards=None, or rechunk the array."
            )
        y = da.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(f"y must have shape ({n},), got {y.shape}.")
        y = y.rechunk((chunks,))
        y_all = np.asarray(y.compute())
        check_classification_targets(y_all)
        classes = unique_labels(y_all)
        if len(classes) < 2:
            raise ValueError(
                f"The number of classes has to be greater than one; got {len(classes)} class"
            )
        parts = [list(X.to_delayed().ravel()), list(y.to_delayed().ravel())]
        if sample_weight is not None:
            sw = da.asarray(sample_weight)
            if sw.shape != (n,):
                raise ValueError(f"sample_weight must have shape ({n},), got {sw.shape}.")
            parts.append(list(sw.rechunk((chunks,)).to_delayed().ravel()))

        def gamma_of(g):
            if g == "auto":
                return 1.0 / d
            var = float(X.var().compute())
            return 1.0 / (d * var) if var > 0 else 1.0

        est = self._prepared(gamma_of, y_all, classes)
        del y_all
        # The chunks are computed once, and stay on the workers that hold them.
        futures = [client.compute(p) for p in parts]
        if sample_weight is None:
            futures.append([None] * len(chunks))
        fX, fy, fw = futures
        offsets = np.concatenate([[0], np.cumsum(chunks)])
        sparse = getattr(X, "_meta", None) is not None and sp.issparse(X._meta)

        def run(start, seeds):
            tasks = [
                client.submit(
                    _mixing.train_shard,
                    est,
                    start,
                    fX[s],
                    fy[s],
                    fw[s],
                    int(offsets[s]),
                    classes,
                    int(seeds[s]),
                    n,
                    pure=False,
                )
                for s in range(len(chunks))
            ]
            return client.gather(tasks)

        # The chunks' futures are released with the last reference to them (not
        # cancelled: the keys of a persisted array are the caller's too).
        self.n_features_in_ = d
        vars(self).pop("feature_names_in_", None)
        self._mix_loop(run, est, classes, n, d, sparse, len(chunks), on_mix)

    def _mix_loop(self, run, est, classes, n_total, n_features, sparse, n_shards, on_mix):
        n_rows = 1 if len(classes) == 2 else len(classes)
        start = _mixing.empty_start(n_features, n_rows, sparse)
        kernel, code = _mixing.make_kernel(est)
        rng = check_random_state(self.random_state)
        updates, weights = [], []
        results = None
        for k in range(self.n_mixes):
            # One row of seeds per mix: the first k mixes do not depend on n_mixes.
            seeds = rng.randint(np.iinfo(np.int32).max, size=n_shards)
            results = run(start, seeds)
            mu = _mixing.mix_weights(results, self.mixing)
            updates.append([r["updates"] for r in results])
            weights.append(mu)
            rows, coef, keys, rounds, rule_state = _mixing.mix(results, mu)
            rows, coef, keys = _mixing.compress(kernel, code, rows, coef, keys, est.budget)
            start = _mixing.next_start(rows, coef, keys, rounds, rule_state, n_total)
            if on_mix is not None or k == self.n_mixes - 1 or not sum(updates[-1]):
                model = self._mixed_model(est, classes, start, results, n_total, n_features)
                if on_mix is not None:
                    on_mix(k + 1, model)
            if not sum(updates[-1]):
                break
        self.estimator_ = model
        self.n_mixes_ = len(updates)
        self.n_updates_ = np.array(updates, dtype=np.int64)
        self.mix_weights_ = np.array(weights)

    def _mixed_model(self, est, classes, start, results, n_total, n_features):
        """The fitted estimator whose hypothesis is the mixed model ``start``."""
        model = clone(est).set_params(random_state=self.estimator.random_state)
        rows, keys = start["sv"], start["keys"]
        sample = rows
        if rows.shape[0] == 0:
            sample = (
                sp.csr_matrix((1, n_features)) if sp.issparse(rows) else np.zeros((1, n_features))
            )
        index = np.where(keys < n_total, keys, -1)
        model._load_expansion(
            sample,
            classes,
            rows,
            start["coef"],
            index=index,
            rounds=start["rounds"],
            rule_state=start["rule_state"],
            bins=_mixing.sum_bins(results),
            n_seen=n_total,
            n_mistakes=sum(r["mistakes"] for r in results),
        )
        return model

    # ------------------------------------------------------------------
    # The fitted model
    # ------------------------------------------------------------------
    @property
    def classes_(self):
        """The class labels of the mixed model."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.classes_

    def _rows(self, X):
        check_is_fitted(self, "estimator_")
        nonneg = is_nonnegative_kernel(self.estimator_.kernel)
        return validate_data(
            self, X, accept_sparse=False if nonneg else "csr", dtype=np.float64, reset=False
        )

    def decision_function(self, X):
        """Scores of the mixed model (see ``estimator_.decision_function``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Scores, one column per class for more than two classes.
        """
        X = self._rows(X)
        return self.estimator_.decision_function(X)

    def predict(self, X):
        """Predict class labels with the mixed model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        X = self._rows(X)
        return self.estimator_.predict(X)

    def predict_proba(self, X):
        """Probability estimates of the mixed model (see ``estimator_.predict_proba``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probability of each class, in the order of ``classes_``.
        """
        X = self._rows(X)
        return self.estimator_.predict_proba(X)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probability of each class, in the order of ``classes_``.
        """
        X = self._rows(X)
        return self.estimator_.predict_log_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.positive_only = inner.input_tags.positive_only
        return tags
