"""The Adult census data in LIBSVM's a9a version."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os

from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions, validate_params

from ._libsvm import _fetch_libsvm

A9A_DESCR = """\
Adult (a9a)
-----------

The UCI Adult census data as preprocessed for LIBSVM (Platt, 1998): predict
whether a person earns more than 50K USD a year from 14 attributes, coded as
123 binary features (continuous attributes quantized, categorical ones
one-hot encoded). Labels are -1 (24720 training rows) and +1 (7841).

=================   ===============
Classes                           2
Samples (train)               32561
Samples (test)                16281
Dimensionality                  123
Features            binary, sparse
=================   ===============

The Projectron paper (Orabona, Keshet and Caputo, 2008, Table 1) uses the
32561 training rows.

Source: https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#a9a
"""


@validate_params(
    {
        "data_home": [str, os.PathLike, None],
        "subset": [StrOptions({"train", "test", "all"})],
        "download_if_missing": ["boolean"],
        "verify_checksum": ["boolean"],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def fetch_a9a(
    *,
    data_home=None,
    subset="train",
    download_if_missing=True,
    verify_checksum=True,
    return_X_y=False,
):
    """Load the Adult (a9a) data set (binary classification).

    Download it if necessary.

    =================   ===============
    Classes                           2
    Samples (train)               32561
    Samples (test)                16281
    Dimensionality                  123
    Features            binary, sparse
    =================   ===============

    The UCI Adult census data as preprocessed for LIBSVM. The Projectron
    paper (Orabona, Keshet and Caputo, 2008, Table 1) uses the 32561
    training rows.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder holding the data, laid out as ``<data_home>/a9a/a9a`` and
        ``<data_home>/a9a/a9a.t``. By default the ``SKLEARN_BUDGET_DATA``
        environment variable if it is set, else ``~/scikit_learn_data``; see
        :func:`~sklearn_budget.datasets.get_data_home`.

    subset : {'train', 'test', 'all'}, default='train'
        The rows to load: the 32561 training rows, the 16281 test rows, or
        both (the training rows, then the test rows).

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

        data : sparse matrix of shape (n_samples, 123)
            The features, as a CSR matrix of float64 (values 0 and 1).
        target : ndarray of shape (n_samples,)
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
    >>> from sklearn_budget.datasets import fetch_a9a
    >>> X, y = fetch_a9a(return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (32561, 123)
    """
    # The test file may not use the last feature: the width is fixed.
    X, y = _fetch_libsvm(
        "a9a/a9a",
        subset,
        123,
        (-1, 1),
        data_home,
        download_if_missing,
        verify_checksum,
        dense=False,
    )
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, DESCR=A9A_DESCR)
