"""River classifiers on the engine of the package (optional extra ``river``).

Each class of this module is a :class:`river.base.Classifier` that learns
from one event at a time, ``learn_one(x, y)`` with ``x`` a dict of
features, and predicts with ``predict_one`` and ``predict_proba_one``. It
holds the scikit-learn estimator of the same name with the same
parameters, and feeds it each event as a one-row ``partial_fit`` call: the
model after a stream of events is the model of the scikit-learn estimator
fed the same rows, bit for bit.

Features are mapped to columns once, on the first ``learn_one`` (the keys of
that event, sorted, unless ``features`` names them): a feature missing from
a later event is 0, a key that is not a column is ignored. Labels are those
of ``classes``, or ``False`` and ``True`` (a binary classifier, as river's
own) when it is None.

The kernel width ``gamma='scale'`` (the default) is fixed by the first
event, the only data the stream has then: ``1 / (n_features * v)`` with
``v`` the variance of that event's feature values (1.0 when they are all
equal). The estimator's warning that a scale from so few rows is unreliable
is not repeated here, where that rule is the documented one: pass a numeric
``gamma`` for a width computed on more data.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import warnings

try:
    from river import base as _river_base
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "sklearn_budget.river needs the river package: pip install 'sklearn-budget[river]'."
    ) from exc

import numpy as np

import sklearn_budget as _sklearn_budget
from sklearn_budget import _one_row
from sklearn_budget._base import BaseKernelOnlineClassifier as _KernelBase

# The hooks of the kernel estimators for river (``_base``) call the compiled
# one-row path (``_one_row.learn_event``, ``event_scores``), whose common
# call is whole in compiled code (``learn_guarded``, ``proba_guarded``):
# while an estimator's hooks are these, the classifiers below make that call
# themselves, without the two Python calls on the way (about a tenth of an
# event of progressive validation). Asked at each event: a hook replaced
# later is called.
_KERNEL_LEARN = _KernelBase._partial_fit_event
_KERNEL_SCORES = _KernelBase._event_scores

# A river classifier feeds its estimator one-row ``partial_fit`` calls: every
# estimator of the package that has the method has one, of the same name
# (made at the end of the module); the batch KernelMatchingPursuit has none.
__all__ = sorted(
    name
    for name in _sklearn_budget.__all__
    if hasattr(getattr(_sklearn_budget, name), "partial_fit")
)


class _RiverClassifier(_river_base.Classifier):
    """A scikit-learn estimator of the package, fed one event at a time.

    Subclasses set ``_estimator_class``; their ``__init__`` takes the
    parameters of that class plus ``classes`` and ``features``.
    """

    _estimator_class = None

    def __init__(self, classes=None, features=None, **params):
        self.classes = classes
        self.features = features
        for name, value in params.items():
            setattr(self, name, value)
        self.estimator_ = None
        self._fast_labels = False
        labels = (False, True) if classes is None else sorted(set(classes))
        if len(labels) < 2:
            raise ValueError(f"classes must hold at least two labels; got {classes!r}.")
        self._labels = np.array(labels)
        # The position of each label, and the one-row label array of each
        # (views of the sorted labels: what partial_fit validates cheaply).
        # The labels as Python objects, in the order of the estimator's classes.
        self._label_list = self._labels.tolist()
        self._label_index = {label: j for j, label in enumerate(self._label_list)}
        self._label_rows = [self._labels[j : j + 1] for j in range(len(labels))]
        self._columns = None if features is None else tuple(features)
        self._column_index = None
        if self._columns is not None:
            self._set_columns(self._columns)

    @property
    def _multiclass(self):
        return len(self._labels) > 2

    def _set_columns(self, columns):
        self._columns = tuple(columns)
        self._column_index = {key: j for j, key in enumerate(self._columns)}
        if len(self._column_index) != len(self._columns):
            raise ValueError(f"features has repeated names: {self._columns!r}.")

    def _row(self, x):
        """The event ``x`` as a one-row float64 array of the model's columns."""
        return _one_row.event_row(x, self._column_index, len(self._columns))

    def learn_one(self, x, y):
        """Play the event ``(x, y)`` as the next round of the stream.

        Parameters
        ----------
        x : dict
            The features of the event: numbers keyed by feature name.
        y : object
            Its label, one of ``classes`` (``False`` or ``True`` when
            ``classes`` is None).
        """
        j = self._label_index.get(y)
        if j is None:
            raise ValueError(
                f"The label {y!r} is not one of the classes {self._labels.tolist()}: "
                "declare every label of the stream with classes=."
            )
        estimator = self.estimator_
        if estimator is not None:
            # The compiled one-row path reads the dict itself; anything it
            # does not take (a value that is not a finite number, a stream
            # it does not cover) goes through partial_fit and its messages.
            columns = self._column_index
            if not self._fast_labels:
                fast = False
            elif type(estimator)._partial_fit_event is _KERNEL_LEARN:
                code = _one_row.learn_guarded(_one_row._PATHS, estimator, x, columns, j)
                fast = code == 0 or _one_row.learn_event(estimator, x, columns, j, code)
            else:
                fast = estimator._partial_fit_event(x, columns, j)
            if not fast:
                estimator.partial_fit(self._row(x), self._label_rows[j])
            return
        # The first event: the columns are fixed only once it is learnt.
        declared = self._columns is not None
        if not declared:
            try:
                columns = sorted(x)
            except TypeError:  # keys that do not compare: their order of arrival
                columns = list(x)
            self._set_columns(columns)
        try:
            names = inspect.signature(self._estimator_class).parameters
            estimator = self._estimator_class(**{name: getattr(self, name) for name in names})
            with warnings.catch_warnings():
                # gamma='scale' from the first event is this module's rule.
                warnings.filterwarnings(
                    "ignore", message="gamma='scale' is computed once", category=UserWarning
                )
                estimator.partial_fit(self._row(x), self._label_rows[j], classes=self._labels)
        except BaseException:
            if not declared:
                self._columns = self._column_index = None
            raise
        self.estimator_ = estimator
        # The positions of the labels are those of the estimator's classes.
        self._fast_labels = hasattr(estimator, "_partial_fit_event") and np.array_equal(
            estimator.classes_, self._labels
        )

    def predict_proba_one(self, x):
        """Probability of each class for the event ``x``.

        Parameters
        ----------
        x : dict
            The features of the event.

        Returns
        -------
        proba : dict
            Probability of each label of ``classes``: those of the
            estimator's ``predict_proba``, uniform before any event was
            learnt.
        """
        labels = self._label_list
        if self.estimator_ is None:
            return dict.fromkeys(labels, 1.0 / len(labels))
        estimator = self.estimator_
        columns = self._column_index
        if not self._fast_labels:
            proba = None
        elif type(estimator)._event_scores is _KERNEL_SCORES:
            # The common call gives the dict itself.
            proba = _one_row.proba_guarded(_one_row._PATHS, estimator, x, columns, labels)
            if proba is not None:
                return proba
            proba = _one_row.event_scores(estimator, x, columns, True, guarded=True)
        else:
            proba = estimator._event_scores(x, columns, True)
        if proba:
            return dict(zip(labels, proba))
        row = self._row(x)
        if hasattr(estimator, "predict_proba"):
            proba = estimator.predict_proba(row)[0].tolist()
        else:  # an estimator without probabilities: its prediction is certain
            proba = (estimator.predict(row)[0] == self._labels).astype(float).tolist()
        return dict(zip(labels, proba))

    def predict_one(self, x):
        """The predicted label of the event ``x``.

        Parameters
        ----------
        x : dict
            The features of the event.

        Returns
        -------
        label : object
            The estimator's ``predict``; the first label of ``classes``
            before any event was learnt.
        """
        if self.estimator_ is None:
            return self._labels.tolist()[0]
        scores = self._scores(x)
        if scores is not None:
            # As predict: classes_[1] on a positive score, else the first
            # class of the highest score.
            if type(scores) is float:
                j = int(scores > 0)
            else:
                j = max(range(len(scores)), key=scores.__getitem__)
            return self._label_list[j]
        return self.estimator_.predict(self._row(x))[0].item()

    def _scores(self, x):
        """The estimator's scores of ``x`` on its compiled one-row path, or None."""
        if not self._fast_labels:
            return None
        return self.estimator_._event_scores(x, self._column_index)

    @classmethod
    def _unit_test_params(cls):
        params = {"random_state": 0}
        names = inspect.signature(cls._estimator_class).parameters
        if "gamma" in names:
            params["gamma"] = 1.0
        if "budget" in names:
            params["budget"] = 20
        yield params


def _river_class(estimator_class):
    """The river classifier of ``estimator_class``, with its parameters."""
    name = estimator_class.__name__
    signature = inspect.signature(estimator_class)
    own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in signature.parameters.values()]
    extra = [
        inspect.Parameter("classes", inspect.Parameter.KEYWORD_ONLY, default=None),
        inspect.Parameter("features", inspect.Parameter.KEYWORD_ONLY, default=None),
    ]
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)

    def __init__(self, *, classes=None, features=None, **params):
        unknown = sorted(set(params) - set(signature.parameters))
        if unknown:
            raise TypeError(f"{name}() got unexpected keyword arguments {unknown}.")
        params = {n: params.get(n, p.default) for n, p in signature.parameters.items()}
        _RiverClassifier.__init__(self, classes=classes, features=features, **params)

    __init__.__signature__ = inspect.Signature([self_param, *extra, *own])
    __init__.__qualname__ = f"{name}.__init__"
    doc = f"""River classifier of :class:`sklearn_budget.{name}`.

    Learns from one event at a time (``learn_one(x, y)`` with ``x`` a dict of
    features) with the engine and the parameters of
    :class:`sklearn_budget.{name}`: the model after a stream of events is
    that of ``{name}(**params).partial_fit`` fed the same rows in one call.

    Parameters
    ----------
    classes : tuple or None, default=None
        Every label of the stream, fixed from the start. None: a binary
        classifier of the labels ``False`` and ``True``, as river's own. A
        label outside them is refused by ``learn_one``.

    features : tuple or None, default=None
        The feature names, in the order of the model's columns. None: the
        keys of the first event learnt, sorted (in their order of arrival
        when they do not compare). A feature missing from an event is 0; a
        key that is not a column is ignored.

    **params
        The parameters of :class:`sklearn_budget.{name}`, with the same
        defaults and meaning; ``gamma='scale'``, where the estimator has
        ``gamma``, is computed on the first event learnt (see
        :mod:`sklearn_budget.river`), without a warning.

    Attributes
    ----------
    estimator_ : sklearn_budget.{name} or None
        The scikit-learn estimator fed the events; None before the first.

    See Also
    --------
    sklearn_budget.{name} : The scikit-learn estimator of the same model.

    Examples
    --------
    >>> from river import datasets
    >>> from sklearn_budget.river import {name}
    >>> model = {name}(random_state=0)
    >>> for x, y in datasets.Phishing().take(100):
    ...     model.learn_one(x, y)
    >>> model.predict_one(x) in (False, True)
    True
    """
    cls = type(
        name,
        (_RiverClassifier,),
        {
            "__init__": __init__,
            "__doc__": doc,
            "__module__": __name__,
            "_estimator_class": estimator_class,
        },
    )
    return cls


# Made here rather than written out, one line per estimator, so that a new
# estimator of the package has its river classifier without an edit: each is
# a module attribute of its own name, as pickle and autodoc need
# (``__module__`` and ``__qualname__`` point here).
globals().update({name: _river_class(getattr(_sklearn_budget, name)) for name in __all__})
