"""Input validation of the online estimators, and its one fast bypass.

Every call of a stream validates its input with scikit-learn's checks and
messages, except input that a few cheap tests prove valid as it is (the
lean bypass, :func:`_lean_rows` and :func:`_lean_labels`): a fitted stream
of float64 rows of its width and labels of its classes, the input of a
stream of small calls, whose full validation would cost more than its
rounds.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    check_non_negative,
    column_or_1d,
    validate_data,
)


def _reject_datetime(X):
    """Dates and durations are not features: refuse them instead of casting."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and not isinstance(dtypes, np.dtype):
        kinds = [getattr(d, "kind", "O") for d in dtypes]
    else:
        kinds = [getattr(getattr(X, "dtype", None), "kind", "f")]
    if any(k in "mM" for k in kinds):
        raise TypeError(
            "X has datetime64 or timedelta64 values, which are not numeric features: "
            "convert them to numbers first (for example seconds since a reference date)."
        )


def _check_rows(estimator, X, reset, nonneg):
    """Validate ``X`` as float64 rows (``validate_data``), dense or CSR.

    ``nonneg``: the kernel takes dense non-negative input only. Sparse input
    comes back in canonical form, copied if it was not: sparse products sort
    the indices in place, and the caller's matrix is never modified.
    """
    _reject_datetime(X)
    X = validate_data(
        estimator,
        X,
        accept_sparse=False if nonneg else "csr",
        dtype=np.float64,
        reset=reset,
    )
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if nonneg:
        name = type(estimator).__name__
        check_non_negative(X, f"{name} with kernel={estimator.kernel!r}")
    return X


def _check_targets(X, y, sample_weight, classes):
    """Validate ``y``, ``classes`` and ``sample_weight`` against validated ``X``.

    Returns ``y`` as a 1-D array, the classes (those of ``y`` when ``classes``
    is None) and the sample weights as float64 (ones when None). Shared by
    every estimator that learns from a stream.
    """
    check_classification_targets(y)
    y = column_or_1d(y, warn=True)
    check_consistent_length(X, y)
    # One unique_labels for both uses: each costs about a quarter of a
    # millisecond for a few thousand labels, on every fit.
    seen = unique_labels(y)
    classes = seen if classes is None else classes
    unseen = np.setdiff1d(seen, classes)
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
    return y, classes, w


def _class_weights(class_weight, classes, y):
    """Step multiplier of each class of ``classes`` (None: all one).

    ``class_weight``: the parameter, None, ``'balanced'`` (computed from the
    labels ``y``) or a dict whose keys must be classes.
    """
    if class_weight is None:
        return None
    if isinstance(class_weight, str):  # 'balanced', refused by partial_fit
        return compute_class_weight(class_weight, classes=classes, y=y)
    known = set(classes.tolist())
    unknown = [key for key in class_weight if key not in known]
    if unknown:
        raise ValueError(
            f"class_weight has keys {unknown} that are not classes of the model: "
            f"classes={classes.tolist()}."
        )
    try:
        weights = np.array([class_weight.get(c, 1.0) for c in classes.tolist()], dtype=np.float64)
    except (TypeError, ValueError):
        weights = np.array([np.nan])
    if not np.all(np.isfinite(weights) & (weights >= 0)):
        raise ValueError(
            "The values of class_weight must be finite non-negative numbers; got "
            f"class_weight={class_weight!r}."
        )
    return weights


def _validate_fit_input(estimator, X, y, sample_weight, classes, reset):
    """``(X, y_enc, w, classes)`` of a call that learns, validated before any change.

    ``y_enc`` holds the class index of each row and ``w`` its sample weight
    times the weight of its class (``estimator._class_weights``).
    """
    X = estimator._validate_X(X, reset=reset)
    y, classes, w = _check_targets(X, y, sample_weight, classes)
    y_enc = np.searchsorted(classes, y)
    class_weight = estimator._class_weights(classes, y)
    if class_weight is not None:
        w = w * class_weight[y_enc]
        if not np.any(w > 0):
            raise ValueError(
                f"The sample weights times the class weights (class_weight="
                f"{estimator.class_weight!r}) are all zero: at least one must be positive."
            )
    return X, y_enc, w, classes


def _lean_rows(estimator, X):
    """Whether validation would return ``X`` unchanged: the lean bypass of rows.

    What a few cheap tests prove for a fitted stream: a C-contiguous float64
    array of the fitted width, finite, where no feature names are expected
    and the estimator takes such rows as they are
    (``estimator._takes_lean_rows()``). Anything else goes through
    ``validate_data`` and its messages.
    """
    return bool(
        type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.flags.c_contiguous
        and X.shape[0] > 0
        and "_state" in vars(estimator)
        and X.shape[1] == estimator.n_features_in_
        and "feature_names_in_" not in vars(estimator)
        and estimator._takes_lean_rows()
        and np.isfinite(X).all()
    )


def _label_kinds_agree(kind, classes_kind):
    """Whether labels of dtype kind ``kind`` compare with classes of kind
    ``classes_kind`` as validation would convert them (integers, or the
    same kind of booleans or strings)."""
    return kind in "iu" and classes_kind in "iu" or kind == classes_kind and kind in "bU"


def _lean_labels(estimator, y, classes, n_rows):
    """``(y_enc, w)`` for labels that validation would not change, else None.

    ``y`` must be an array of ``n_rows`` known classes of the kind of
    ``classes_``, ``classes`` None or the stream's, and ``class_weight``
    None or a dict; ``y_enc`` are the class indices, ``w`` the weight of
    each row's class. None otherwise: the full validation runs, and raises
    where it must (an unseen class, for one).
    """
    classes_ = estimator.classes_
    if classes is not None and not (
        type(classes) is np.ndarray and np.array_equal(classes, classes_)
    ):
        return None
    if type(y) is not np.ndarray or y.shape != (n_rows,):
        return None
    if not _label_kinds_agree(y.dtype.kind, classes_.dtype.kind):
        return None
    y_enc = np.searchsorted(classes_, y)
    if y_enc.max() >= len(classes_) or not (classes_[y_enc] == y).all():
        return None
    if estimator.class_weight is None:
        return y_enc, np.ones(n_rows)
    if isinstance(estimator.class_weight, dict):
        return y_enc, estimator._class_weights(classes_, y)[y_enc]
    return None
