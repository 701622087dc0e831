"""ONNX converters of the estimators, for skl2onnx.

Every kernel estimator scores ``f(x) = K(x, support_vectors_) @ dual_coef_.T``
(with ``average='vote'``, a vote of the prefixes of that expansion; the
landmarks of :class:`~sklearn_budget.NystroemOnlineClassifier` are its
support vectors), :class:`~sklearn_budget.Winnow` scores
``x @ coef_.T + intercept_`` and
:class:`~sklearn_budget.FourierOnlineClassifier` scores
``sqrt(2 / D) cos(x @ random_weights_ + random_offset_) @ coef_.T``; the
graphs below write these formulas, and the labels and probabilities derived
from them, with standard ONNX operators. They read the public fitted
attributes only. The public entry point is :mod:`sklearn_budget.onnx`.

skl2onnx and onnx are optional: this module imports without them (the
package's doctests import every module), and :func:`register` says what to
install when they are missing.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp

try:
    from onnx import TensorProto
    from onnx.numpy_helper import from_array
    from skl2onnx import update_registered_converter
    from skl2onnx.common.data_types import (
        DoubleTensorType,
        FloatTensorType,
        Int64TensorType,
        StringTensorType,
    )
except ImportError as exc:  # pragma: no cover - exercised without the extra
    _IMPORT_ERROR = exc
else:
    _IMPORT_ERROR = None

try:  # skl2onnx's parser of classifiers, private: only used to fail early
    from skl2onnx._parse import _parse_sklearn_classifier
except ImportError:  # pragma: no cover
    _parse_sklearn_classifier = None

#: Kernels written as ONNX operators (every named kernel of the package).
ONNX_KERNELS = (
    "additive_chi2",
    "chi2",
    "cosine",
    "laplacian",
    "linear",
    "poly",
    "polynomial",
    "rbf",
    "sigmoid",
)

# The options of skl2onnx's classifiers that the converters honour.
_OPTIONS = {
    "zipmap": [True, False, "columns"],
    "nocl": [True, False],
    "output_class_labels": [False, True],
    "raw_scores": [True, False],
}


class _Graph:
    """Adds nodes and constants of one dtype to skl2onnx's container."""

    def __init__(self, scope, container, dtype):
        self.scope, self.container, self.dtype = scope, container, dtype
        self.proto = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE

    def const(self, value, dtype=None, name="c"):
        """An initializer holding ``value`` (in the graph's dtype by default)."""
        array = np.asarray(value, dtype=self.dtype if dtype is None else dtype)
        out = self.scope.get_unique_variable_name(name)
        if array.dtype == object:  # string labels, given to the container as bytes
            content = [str(s).encode("utf-8") for s in array.ravel()]
            self.container.add_initializer(out, TensorProto.STRING, list(array.shape), content)
            return out
        tensor = from_array(array, out)
        self.container.add_initializer(out, tensor.data_type, list(array.shape), tensor)
        return out

    def op(self, op_type, *inputs, out=None, domain="", **attrs):
        """Add one node; returns the name of its output (``out`` if given)."""
        if out is None:
            out = self.scope.get_unique_variable_name(op_type.lower())
        self.container.add_node(
            op_type,
            list(inputs),
            [out],
            op_domain=domain,
            name=self.scope.get_unique_operator_name(op_type),
            **attrs,
        )
        return out

    def row_sums(self, x, n_columns):
        """Sums over the last axis, as a product with ones (no opset-dependent ReduceSum)."""
        return self.op("MatMul", x, self.const(np.ones(n_columns)))


def _dense(a):
    return np.asarray(a.toarray() if sp.issparse(a) else a, dtype=np.float64)


def _kernel_matrix(g, X, model, sv):
    """Name of the ``(n, len(sv))`` kernel matrix of the input ``X`` with the rows ``sv``.

    Each kernel receives the parameters that
    :func:`sklearn.metrics.pairwise.pairwise_kernels` gives it in the
    package (``sklearn_budget._kernels``), with ``gamma`` the fitted
    ``gamma_``.
    """
    kernel = model.kernel
    m, d = sv.shape
    gamma = float(model.gamma_)

    def scaled_dot():  # gamma <x, sv> + coef0
        xy = g.op("MatMul", X, g.const(sv.T))
        return g.op("Add", g.op("Mul", xy, g.const(gamma)), g.const(float(model.coef0)))

    if kernel == "linear":
        return g.op("MatMul", X, g.const(sv.T))
    if kernel in ("poly", "polynomial"):
        return g.op("Pow", scaled_dot(), g.const(float(model.degree)))
    if kernel == "sigmoid":
        return g.op("Tanh", scaled_dot())
    if kernel == "rbf":
        # ||x||^2 - 2 <x, sv> + ||sv||^2, clipped at zero, as scikit-learn's
        # euclidean_distances computes it.
        x_sq = g.op("Reshape", g.row_sums(g.op("Mul", X, X), d), g.const([-1, 1], np.int64))
        xy = g.op("MatMul", X, g.const(-2.0 * sv.T))
        sv_sq = g.const(np.einsum("ij,ij->i", sv, sv))
        d2 = g.op("Max", g.op("Add", g.op("Add", xy, x_sq), sv_sq), g.const(0.0))
        return g.op("Exp", g.op("Mul", d2, g.const(-gamma)))
    if kernel == "cosine":
        # Rows scaled to unit norm; a zero row stays zero, as in
        # sklearn.preprocessing.normalize.
        norm = g.op("Sqrt", g.row_sums(g.op("Mul", X, X), d))
        is_zero = g.op("Equal", norm, g.const(0.0))
        norm = g.op(
            "Reshape", g.op("Where", is_zero, g.const(1.0), norm), g.const([-1, 1], np.int64)
        )
        sv_norm = np.sqrt(np.einsum("ij,ij->i", sv, sv))
        sv_unit = sv / np.where(sv_norm == 0, 1.0, sv_norm)[:, None]
        return g.op("MatMul", g.op("Div", X, norm), g.const(sv_unit.T))
    # The remaining kernels sum over features a function of each pair of
    # coordinates: an (n, n_SV, n_features) tensor.
    X3 = g.op("Reshape", X, g.const([-1, 1, d], np.int64))
    diff = g.op("Sub", X3, g.const(sv))
    if kernel == "laplacian":
        l1 = g.row_sums(g.op("Abs", diff), d)
        return g.op("Exp", g.op("Mul", l1, g.const(-gamma)))
    if kernel in ("chi2", "additive_chi2"):
        # sum (x - y)^2 / (x + y) over the coordinates where x + y != 0.
        total = g.op("Add", X3, g.const(sv))
        empty = g.op("Equal", total, g.const(0.0))
        ratio = g.op(
            "Div",
            g.op("Mul", diff, diff),
            g.op("Where", empty, g.const(1.0), total),
        )
        chi = g.row_sums(g.op("Where", empty, g.const(0.0), ratio), d)
        if kernel == "additive_chi2":
            return g.op("Neg", chi)
        return g.op("Exp", g.op("Mul", chi, g.const(-gamma)))
    raise AssertionError(kernel)  # pragma: no cover - checked by _check_exportable


def _check_exportable(model):
    """Raise a clear error for the fitted models that have no ONNX graph."""
    name = type(model).__name__
    if not hasattr(model, "classes_"):
        raise ValueError(f"This {name} instance is not fitted yet: fit it before converting it.")
    if hasattr(model, "coef_"):
        return  # Winnow, FourierOnlineClassifier: no kernel to check
    kernel = model.kernel
    if callable(kernel):
        kname = getattr(kernel, "__name__", repr(kernel))
        raise ValueError(
            f"{name} with kernel={kname!r} cannot be converted to ONNX: a callable "
            "kernel is Python code, which ONNX operators cannot express. Convertible "
            f"kernels: {', '.join(ONNX_KERNELS)}."
        )
    if kernel not in ONNX_KERNELS:
        raise ValueError(
            f"{name} with kernel={kernel!r} cannot be converted to ONNX; convertible "
            f"kernels: {', '.join(ONNX_KERNELS)}."
        )


def _label_constant(classes):
    """The class labels as an ONNX constant's values, and its output tensor type."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "iub":
        return classes.astype(np.int64), Int64TensorType
    if classes.dtype.kind == "f" and np.all(classes == np.round(classes)):
        # As skl2onnx does for its classifiers: whole-number float labels are int64.
        return classes.astype(np.int64), Int64TensorType
    if classes.dtype.kind in "UO" and all(isinstance(c, str) for c in classes):
        return classes.astype(object), StringTensorType
    raise ValueError(
        f"Class labels of dtype {classes.dtype} cannot be ONNX labels: use integers or strings."
    )


def _is_voted(model):
    return hasattr(model, "vote_dual_coef_")


def _vote_graph(g, X, model):
    """The votes of the hypotheses played online, ``average='vote'``: shape (n, n_classes).

    The hypothesis after ``k`` updates is the prefix sum of the first ``k``
    terms ``vote_dual_coef_[:, i] k(x, sv_{vote_index_[i]})`` (CumSum over
    the updates); it votes ``vote_counts_[k]`` times for the sign of its
    score (two classes) or for its first highest-scoring class, and
    abstains where its scores are all zero (see
    ``BaseKernelOnlineClassifier._votes``).
    """
    coef = np.asarray(model.vote_dual_coef_, dtype=np.float64)
    counts = np.asarray(model.vote_counts_[1:], dtype=np.float64)
    R, m = coef.shape
    # One kernel column per update (a row that joined several times repeats).
    K = _kernel_matrix(g, X, model, _dense(model.support_vectors_)[model.vote_index_])
    axis = g.const(np.array(-1, dtype=np.int64), dtype=np.int64)
    if R == 1:
        F = g.op("CumSum", g.op("Mul", K, g.const(coef[0])), axis)
        zero = g.const(0.0)
        against = g.op("Cast", g.op("Less", F, zero), to=g.proto)
        towards = g.op("Cast", g.op("Greater", F, zero), to=g.proto)
        w = g.const(counts.reshape(-1, 1))
        return g.op("Concat", g.op("MatMul", against, w), g.op("MatMul", towards, w), axis=1)
    # (n, n_classes, n_updates): the score of each class under each hypothesis.
    K3 = g.op("Reshape", K, g.const([-1, 1, m], np.int64))
    F = g.op("CumSum", g.op("Mul", K3, g.const(coef)), axis)
    winner = g.op("ArgMax", F, axis=1, keepdims=1)  # the first largest, (n, 1, m)
    # Sum over the classes of |F| as a product with ones (no ReduceSum).
    mass = g.op("MatMul", g.const(np.ones((1, R))), g.op("Abs", F))
    voting = g.op("Greater", mass, g.const(0.0))
    is_class = g.op("Equal", winner, g.const(np.arange(R).reshape(1, R, 1), dtype=np.int64))
    ballots = g.op("Cast", g.op("And", is_class, voting), to=g.proto)
    return g.op("MatMul", ballots, g.const(counts))


def _has_proba(model):
    return hasattr(model, "proba_scale_")


def shape_calculator(operator):
    """Output types of a converted estimator: label and probabilities (or scores)."""
    model = operator.raw_operator
    _check_exportable(model)
    in_type = operator.inputs[0].type
    if len(operator.inputs) != 1 or not isinstance(in_type, (FloatTensorType, DoubleTensorType)):
        raise TypeError(
            f"{type(model).__name__} converts with one float or double input tensor, "
            f"got {[type(i.type).__name__ for i in operator.inputs]}."
        )
    n = in_type.shape[0] if in_type.shape else None
    options = operator.scope_inst.get_options(model, dict(nocl=False))
    label_type = Int64TensorType
    if not options["nocl"]:
        label_type = _label_constant(model.classes_)[1]
    operator.outputs[0].type = label_type(shape=[n])
    operator.outputs[1].type = type(in_type)(shape=[n, len(model.classes_)])


def converter(scope, operator, container):
    """Write the graph of a fitted estimator (see :mod:`sklearn_budget.onnx`)."""
    model = operator.raw_operator
    _check_exportable(model)
    dtype = np.float32 if isinstance(operator.inputs[0].type, FloatTensorType) else np.float64
    g = _Graph(scope, container, dtype)
    options = container.get_options(model, dict(raw_scores=False, nocl=False))
    X = operator.inputs[0].full_name
    n_classes = len(model.classes_)
    binary = n_classes == 2

    votes = None
    if hasattr(model, "random_weights_"):  # FourierOnlineClassifier
        # sqrt(2 / D) cos(X W + b), then the linear scores of the features.
        W = np.asarray(model.random_weights_, dtype=np.float64)
        proj = g.op("Add", g.op("MatMul", X, g.const(W)), g.const(model.random_offset_))
        features = g.op("Mul", g.op("Cos", proj), g.const(np.sqrt(2.0 / W.shape[1])))
        scores = g.op("MatMul", features, g.const(np.asarray(model.coef_, dtype=np.float64).T))
    elif hasattr(model, "coef_"):  # Winnow
        scores = g.op(
            "Add",
            g.op("MatMul", X, g.const(np.asarray(model.coef_, dtype=np.float64).T)),
            g.const(model.intercept_),
        )
    elif _is_voted(model):
        # decision_function: the shares of the vote, f = (V_1 - V_0) / T for
        # two classes, V_c / T otherwise.
        votes = _vote_graph(g, X, model)
        total = float(np.sum(model.vote_counts_))
        shares = g.op("Div", votes, g.const(max(total, 1.0)))
        if binary:
            shares = g.op("MatMul", shares, g.const([[-1.0], [1.0]]))
        scores = shares
    else:
        sv = _dense(model.support_vectors_)
        K = _kernel_matrix(g, X, model, sv)
        scores = g.op("MatMul", K, g.const(np.asarray(model.dual_coef_, dtype=np.float64).T))

    # The label: classes_[f > 0] for two classes, the first largest score otherwise.
    if binary:
        index = g.op("Cast", g.op("Greater", scores, g.const(0.0)), to=TensorProto.INT64)
        index = g.op("Reshape", index, g.const([-1], np.int64))
    else:
        index = g.op("ArgMax", scores, axis=1, keepdims=0)
    label_out = operator.outputs[0].full_name
    if options["nocl"]:
        g.op("Identity", index, out=label_out)
    else:
        labels, _ = _label_constant(model.classes_)
        g.op("Gather", g.const(labels, dtype=labels.dtype, name="classes"), index, out=label_out)

    # The second output: probabilities, or the scores (raw_scores=True, or
    # a model without predict_proba), two columns [-f, f] for two classes
    # as skl2onnx's classifiers give them.
    second = operator.outputs[1].full_name
    if options["raw_scores"] or not _has_proba(model):
        if binary:
            g.op("Concat", g.op("Neg", scores), scores, axis=1, out=second)
        else:
            g.op("Identity", scores, out=second)
        return
    if votes is not None:
        # (V_c + A / C + 1) / (T + C), A = T - sum_c V_c the abstentions.
        ballots = g.op("MatMul", votes, g.const(np.ones((n_classes, 1))))
        abstained = g.op("Sub", g.const(total), ballots)
        smoothed = g.op(
            "Add", votes, g.op("Add", g.op("Div", abstained, g.const(n_classes)), g.const(1.0))
        )
        g.op("Div", smoothed, g.const(total + n_classes), out=second)
        return
    # Winnow publishes coef_ divided by exp(log_scale_) when its weights
    # pass the float range: the probabilities' scale undoes it.
    scale = float(model.proba_scale_) * float(np.exp(getattr(model, "log_scale_", 0.0)))
    if not np.isfinite(scale):
        raise ValueError(
            f"The scores of this {type(model).__name__} are beyond the float range "
            f"(log_scale_ = {model.log_scale_:.4g}): its probabilities cannot be written "
            "as a graph; export it with options={'raw_scores': True} for its scores."
        )
    a_scores = g.op("Mul", scores, g.const(scale))
    if binary:
        g.op(
            "Concat",
            g.op("Sigmoid", g.op("Neg", a_scores)),
            g.op("Sigmoid", a_scores),
            axis=1,
            out=second,
        )
    else:
        g.op("Softmax", a_scores, axis=1, out=second)


def parser(scope, model, inputs, custom_parsers=None):
    """skl2onnx's parser of classifiers, after checking that ``model`` converts.

    It declares the outputs ``label`` and ``probabilities`` and handles the
    options ``zipmap`` and ``output_class_labels``.
    """
    _check_exportable(model)
    return _parse_sklearn_classifier(scope, model, inputs, custom_parsers=custom_parsers)


def _estimators():
    """Every estimator class of the package (those of its ``__all__``)."""
    import sklearn_budget

    return tuple(getattr(sklearn_budget, name) for name in sklearn_budget.__all__)


def register(classes=None):
    """Register the converters of estimator classes with skl2onnx.

    Parameters
    ----------
    classes : iterable of classes, default=None
        The classes to register: every estimator of the package when None.
        A kernel estimator written outside the package on its base class
        converts as the package's own do (``doc/contributing.rst``).
    """
    if _IMPORT_ERROR is not None:
        raise ImportError(
            "Converting to ONNX needs skl2onnx and onnx (and onnxruntime to run the "
            'graphs): pip install "sklearn-budget[onnx]". '
            f"Import failed with: {_IMPORT_ERROR}"
        ) from _IMPORT_ERROR
    for cls in _estimators() if classes is None else classes:
        update_registered_converter(
            cls,
            f"SklearnBudget{cls.__name__}",
            shape_calculator,
            converter,
            # Without a parser, skl2onnx uses its classifiers' own (the
            # zipmap option says the model is one); ours checks the model
            # first, so that an unfitted or unconvertible model fails with
            # its own message.
            parser=None if _parse_sklearn_classifier is None else parser,
            options=_OPTIONS,
        )
