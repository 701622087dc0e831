"""The MNIST test set, read from the IDX files of the original distribution."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import validate_params

from ._base import get_data_home
from ._parsing import _malformed, _read_gzip
from ._remote import _local_file

MNIST_DESCR = """\
MNIST (test set)
----------------

LeCun's handwritten digits: 28 x 28 grayscale images, pixel values 0 to
255, in the IDX format of the original distribution. Only the 10000 test
images are loaded: the 60000 training images are not among the files this
package knows the checksums of.

=================   ===============
Classes              10 (digits 0-9)
Samples total                 10000
Dimensionality                  784
Features             integers 0-255
=================   ===============

The Forgetron paper (Dekel, Shalev-Shwartz and Singer, 2005, Sec. 5) runs
on the 60000 training images, split into the 126 balanced binary problems
of five digits against the other five; ``sklearn-budget reproduce
forgetron-fig2`` runs them on these 10000 test images instead.

Source: http://yann.lecun.com/exdb/mnist/
"""


# IDX files: a big-endian int32 magic number (2049 for a vector of labels,
# 2051 for a stack of images), the dimensions as big-endian int32, then the
# values as unsigned bytes.
_IDX_MAGIC = {1: 2049, 3: 2051}


def _read_idx(path, ndim):
    """The array of unsigned bytes of a gzipped IDX file of ``ndim`` dimensions."""
    raw = _read_gzip(path)
    header = 4 * (1 + ndim)
    if len(raw) < header:
        raise _malformed(path, f"{len(raw)} bytes, shorter than the IDX header ({header})")
    magic, *shape = np.frombuffer(raw[:header], dtype=">i4").tolist()
    if magic != _IDX_MAGIC[ndim]:
        raise _malformed(path, f"the IDX magic number should be {_IDX_MAGIC[ndim]}, got {magic}")
    size = int(np.prod(shape))
    if len(raw) != header + size:
        raise _malformed(
            path,
            f"the header announces {' x '.join(map(str, shape))} = {size} values, "
            f"the file holds {len(raw) - header}",
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape)


def _read_mnist(images_path, labels_path):
    images = _read_idx(images_path, 3)
    labels = _read_idx(labels_path, 1)
    if images.shape[1:] != (28, 28):
        raise _malformed(images_path, f"images should be 28 x 28, got {images.shape[1:]}")
    if labels.shape[0] != images.shape[0]:
        raise _malformed(labels_path, f"{labels.shape[0]} labels for the {images.shape[0]} images")
    bad = np.flatnonzero(labels > 9)
    if bad.size:
        raise _malformed(
            labels_path, f"label {bad[0] + 1}: the digit must be 0 to 9, got {labels[bad[0]]}"
        )
    return images.reshape(images.shape[0], -1).astype(np.float64), labels.astype(np.int64)


@validate_params(
    {
        "data_home": [str, os.PathLike, None],
        "download_if_missing": ["boolean"],
        "verify_checksum": ["boolean"],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def fetch_mnist(
    *, data_home=None, download_if_missing=True, verify_checksum=True, return_X_y=False
):
    """Load the MNIST test set (classification, 10 digits).

    Download it if necessary.

    =================   ===============
    Classes              10 (digits 0-9)
    Samples total                 10000
    Dimensionality                  784
    Features             integers 0-255
    =================   ===============

    The 10000 test images of LeCun's handwritten digits, 28 x 28 pixels
    each, in the order of the original files. The 60000 training images
    are not loaded: their checksums are not pinned here.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder holding the data, laid out as
        ``<data_home>/mnist/t10k-images-idx3-ubyte.gz`` and
        ``<data_home>/mnist/t10k-labels-idx1-ubyte.gz``. By default the
        ``SKLEARN_BUDGET_DATA`` environment variable if it is set, else
        ``~/scikit_learn_data``; see
        :func:`~sklearn_budget.datasets.get_data_home`.

    download_if_missing : bool, default=True
        If False, raise an OSError if the data is not in the data home
        instead of downloading it. Downloads are always checked against
        their SHA256 checksum.

    verify_checksum : bool, default=True
        If True, check the SHA256 checksum of the files already in the data
        home on their first use in the process (and again whenever they
        change), and raise a :class:`~sklearn_budget.datasets.DataFileError`
        if it differs. Pass False to load a deliberately modified copy of the
        data; a malformed file is still rejected.

    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch object.

    Returns
    -------
    dataset : :class:`~sklearn.utils.Bunch`
        Dictionary-like object, with the following attributes.

        data : ndarray of shape (10000, 784)
            The pixel values 0 to 255 (float64), each image row by row.
        target : ndarray of shape (10000,)
            The digits 0-9 (int64).
        DESCR : str
            Description of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The two arrays above.

    Raises
    ------
    DataFileError
        If a file does not match its checksum, or is malformed (a damaged
        archive, a wrong IDX header, a size that does not match it). An
        OSError; the message names the file and the problem.
    OSError
        If a file is missing and cannot be downloaded.

    Examples
    --------
    >>> from sklearn_budget.datasets import fetch_mnist
    >>> X, y = fetch_mnist(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, y[:5].tolist()  # doctest: +SKIP
    ((10000, 784), [7, 2, 1, 0, 4])
    """
    data_home = get_data_home(data_home)
    images, labels = (
        _local_file(filename, data_home, download_if_missing, verify_checksum)
        for filename in ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz")
    )
    X, y = _read_mnist(images, labels)
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, DESCR=MNIST_DESCR)
