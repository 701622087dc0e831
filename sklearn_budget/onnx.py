"""Export of fitted estimators to ONNX, through skl2onnx.

Importing this module registers a converter for every estimator of the
package with skl2onnx, after which :func:`skl2onnx.to_onnx` converts them,
alone or as the last step of a :class:`~sklearn.pipeline.Pipeline`::

    import sklearn_budget.onnx  # registers the converters
    from skl2onnx import to_onnx

    onx = to_onnx(model, X[:1].astype(np.float32))

``import sklearn_budget`` alone does not import skl2onnx (it is optional
and slow to import), so this import, or a call of :func:`register`, must
come before the conversion. The extra ``onnx`` installs what is needed:
``pip install "sklearn-budget[onnx]"``. Without skl2onnx the import does
nothing and :func:`register` raises an ImportError that says so.

See :ref:`deploying` for the graphs' outputs, their options and the
formulas they compute.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from . import _onnx
from ._onnx import _IMPORT_ERROR
from ._onnx import register as _register

__all__ = ["ONNX_KERNELS", "register", "to_onnx"]

#: Kernel names whose models convert: every named kernel of the package
#: (a callable kernel does not convert).
ONNX_KERNELS = _onnx.ONNX_KERNELS


def register():
    """Register the package's converters with skl2onnx.

    Importing :mod:`sklearn_budget.onnx` already calls it when skl2onnx
    and onnx can be imported; calling it again does no harm. Afterwards
    :func:`skl2onnx.to_onnx` and :func:`skl2onnx.convert_sklearn` convert
    every estimator of the package, and pipelines that end with one.

    Raises
    ------
    ImportError
        If skl2onnx or onnx cannot be imported.
    """
    _register()


def to_onnx(model, X, **kwargs):
    """Convert a fitted estimator, or a pipeline ending with one, to ONNX.

    :func:`register` followed by :func:`skl2onnx.to_onnx`.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted estimator of the package, or a fitted pipeline whose
        steps skl2onnx can convert and whose last step is one.
    X : ndarray of shape (n_samples, n_features)
        Example rows (one is enough). Their dtype, float32 or float64,
        sets the dtype of the graph's input, of its constants and of its
        scores.
    **kwargs : dict
        Passed to :func:`skl2onnx.to_onnx`, for example
        ``options={"zipmap": False}`` or ``target_opset`` (11 or newer).

    Returns
    -------
    onx : onnx.ModelProto
        The ONNX model. Its outputs are ``label`` and ``probabilities``
        (see :ref:`deploying`).
    """
    register()
    from skl2onnx import to_onnx as _to_onnx

    return _to_onnx(model, X, **kwargs)


if _IMPORT_ERROR is None:
    register()
