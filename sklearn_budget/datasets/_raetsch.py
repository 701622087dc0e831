"""Banana and Waveform, two benchmarks of Raetsch, Onoda and Mueller (2001)."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import numpy as np
from scipy.io import loadmat
from sklearn.utils import Bunch
from sklearn.utils._param_validation import validate_params

from ._base import get_data_home
from ._parsing import _check_rows, _decode, _malformed, _parse_table, _shorten
from ._remote import _local_file

BANANA_DESCR = """\
Banana
------

The two-dimensional "banana" benchmark of Raetsch, Onoda and Mueller (2001,
"Soft margins for AdaBoost"): two overlapping classes of banana-shaped
clusters, which a linear classifier cannot separate. Labels are -1 (2924
rows) and +1 (2376).

=================   ===============
Classes                           2
Samples total                  5300
Dimensionality                    2
Features                       real
=================   ===============

The benchmark comes as one pool of 5300 rows; Raetsch's 100 splits of
400 training and 4900 test rows are not included. Weston, Bordes and
Bottou (2005) train on 4000 rows and test on the other 1300: draw such
splits with a seed (``sklearn.model_selection.train_test_split``).
"""


WAVEFORM_DESCR = """\
Waveform
--------

Breiman's waveform data (Breiman et al., 1984, "Classification and
regression trees") in the benchmark version of Raetsch, Onoda and Mueller
(2001): 21 noisy features of three waveform classes, reduced to class 1
against the two others, with standardized features. Labels are +1 (1647
rows) and -1 (3353).

=================   ===============
Classes                           2
Samples total                  5000
Dimensionality                   21
Features                       real
=================   ===============

The benchmark comes as one pool of 5000 rows. Weston, Bordes and Bottou
(2005) train on 4000 rows and test on the other 1000: draw such splits with
a seed (``sklearn.model_selection.train_test_split``).
"""


def _read_banana(path):
    with open(path, "rb") as f:
        text = _decode(path, f.read())
    # Header "X1,X2,Y", then one row per sample.
    header, _, body = text.partition("\n")
    if [name.strip().strip('"').upper() for name in header.split(",")] != ["X1", "X2", "Y"]:
        raise _malformed(path, f"line 1 should be the header 'X1,X2,Y', got {_shorten(header)}")
    table = _parse_table(path, body, 3, delimiter=",", first_line=2)
    labels = table[:, 2]
    _check_rows(
        path,
        body,
        np.isin(labels, (-1, 1)),
        lambda row: f"the label must be -1 or +1, got {labels[row]:g}",
        first_line=2,
    )
    return table[:, :2], labels.astype(np.int64)


@validate_params(
    {
        "data_home": [str, os.PathLike, None],
        "download_if_missing": ["boolean"],
        "verify_checksum": ["boolean"],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def fetch_banana(
    *, data_home=None, download_if_missing=True, verify_checksum=True, return_X_y=False
):
    """Load the Banana data set (binary classification).

    Download it if necessary.

    =================   ===============
    Classes                           2
    Samples total                  5300
    Dimensionality                    2
    Features                       real
    =================   ===============

    The two-dimensional benchmark of Raetsch, Onoda and Mueller (2001), one
    pool of 5300 rows. Weston, Bordes and Bottou (2005) train on 4000 rows
    and test on the other 1300; Raetsch's own 400/4900 splits are not
    included: draw seeded splits, as in the example below.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder holding the data, laid out as
        ``<data_home>/banana/banana.csv``. By default the
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

        data : ndarray of shape (5300, 2)
            The features (float64).
        target : ndarray of shape (5300,)
            The labels, -1 or +1 (int64).
        DESCR : str
            Description of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The two arrays above.

    Raises
    ------
    DataFileError
        If a file does not match its checksum, or is malformed (a damaged
        archive, a row of the wrong length, a field that is not a number).
        An OSError; the message names the file and the problem.
    OSError
        If a file is missing and cannot be downloaded.

    Examples
    --------
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_budget.datasets import fetch_banana
    >>> X, y = fetch_banana(return_X_y=True)  # doctest: +SKIP
    >>> X_train, X_test, y_train, y_test = train_test_split(
    ...     X, y, train_size=4000, test_size=1300, random_state=0)  # doctest: +SKIP
    """
    data_home = get_data_home(data_home)
    path = _local_file("banana/banana.csv", data_home, download_if_missing, verify_checksum)
    X, y = _read_banana(path)
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, DESCR=BANANA_DESCR)


def _describe(value):
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"a {type(value).__name__}"


def _is_numeric(value):
    return isinstance(value, np.ndarray) and (
        np.issubdtype(value.dtype, np.integer) or np.issubdtype(value.dtype, np.floating)
    )


def _read_waveform(path):
    with open(path, "rb") as f:
        try:
            mat = loadmat(f)
        except Exception as exc:
            # A damaged file fails anywhere in scipy.io, with many types:
            # MatReadError, ValueError, IndexError, OSError, zlib.error...
            raise _malformed(
                path, f"not a readable MATLAB file ({type(exc).__name__}: {exc})"
            ) from exc
    variables = sorted(key for key in mat if not key.startswith("__"))
    missing = [key for key in ("data", "target") if key not in mat]
    if missing:
        raise _malformed(
            path,
            f"no variable {' or '.join(map(repr, missing))} (it holds {variables or 'none'})",
        )
    X, y = mat["data"], mat["target"]
    if not (_is_numeric(X) and X.ndim == 2 and X.shape[0] > 0 and X.shape[1] == 21):
        raise _malformed(
            path, f"'data' should be a numeric matrix of 21 columns, got {_describe(X)}"
        )
    n_samples = X.shape[0]
    if not (_is_numeric(y) and y.size == n_samples and max(y.shape) == n_samples):
        raise _malformed(
            path, f"'target' should be a numeric vector of {n_samples} labels, got {_describe(y)}"
        )
    X, y = X.astype(np.float64), y.ravel()
    for name, values, ok, what in [
        ("data", X[:, 0], np.isfinite(X).all(axis=1), "a value is not finite"),
        ("target", y, np.isin(y, (-1, 1)), "the label must be -1 or +1"),
    ]:
        bad = np.flatnonzero(~ok)
        if bad.size:
            raise _malformed(path, f"row {bad[0] + 1} of '{name}': {what}, got {values[bad[0]]:g}")
    return X, y.astype(np.int64)


@validate_params(
    {
        "data_home": [str, os.PathLike, None],
        "download_if_missing": ["boolean"],
        "verify_checksum": ["boolean"],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def fetch_waveform(
    *, data_home=None, download_if_missing=True, verify_checksum=True, return_X_y=False
):
    """Load the Waveform data set (binary classification).

    Download it if necessary.

    =================   ===============
    Classes                           2
    Samples total                  5000
    Dimensionality                   21
    Features                       real
    =================   ===============

    Breiman's waveform data in the benchmark version of Raetsch, Onoda and
    Mueller (2001): class 1 against the two others, standardized features,
    one pool of 5000 rows. Weston, Bordes and Bottou (2005) train on 4000
    rows and test on the other 1000: draw seeded splits, as in the example
    below.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder holding the data, laid out as
        ``<data_home>/waveform/waveform.mat``. By default the
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

        data : ndarray of shape (5000, 21)
            The standardized features (float64).
        target : ndarray of shape (5000,)
            The labels, +1 for class 1 and -1 for the others (int64).
        DESCR : str
            Description of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The two arrays above.

    Raises
    ------
    DataFileError
        If a file does not match its checksum, or is malformed (a damaged
        archive, a row of the wrong length, a field that is not a number).
        An OSError; the message names the file and the problem.
    OSError
        If a file is missing and cannot be downloaded.

    Examples
    --------
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn_budget.datasets import fetch_waveform
    >>> X, y = fetch_waveform(return_X_y=True)  # doctest: +SKIP
    >>> X_train, X_test, y_train, y_test = train_test_split(
    ...     X, y, train_size=4000, test_size=1000, random_state=0)  # doctest: +SKIP
    """
    data_home = get_data_home(data_home)
    path = _local_file("waveform/waveform.mat", data_home, download_if_missing, verify_checksum)
    X, y = _read_waveform(path)
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, DESCR=WAVEFORM_DESCR)
