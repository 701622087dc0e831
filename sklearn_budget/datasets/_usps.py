"""The USPS digits, in the version of The Elements of Statistical Learning."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os
from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ._base import get_data_home
from ._parsing import _check_rows, _decode, _parse_table, _read_gzip
from ._remote import _local_file

USPS_DESCR = """\
USPS digits
-----------

Handwritten digits scanned from envelopes by the U.S. Postal Service,
deslanted and size-normalized to 16 x 16 grayscale images with values in
[-1, 1] (the version of Hastie, Tibshirani and Friedman, The Elements of
Statistical Learning, "zip" data; LeCun et al., 1990).

=================   ===============
Classes              10 (digits 0-9)
Samples (train)                7291
Samples (test)                 2007
Dimensionality                  256
Features            real, [-1, 1]
=================   ===============

The training set has 1194 zeros, the test set 359. Weston, Bordes and
Bottou (2005, "Online (and offline) on an even tighter budget") classify
digit 0 against the rest (their Table 1 lists 7329 training and 2000 test
rows, another version of the data), also with 10% of the training labels
flipped.

Source: https://hastie.su.domains/ElemStatLearn/datasets/zip.info.txt
"""


def _read_usps(path):
    text = _decode(path, _read_gzip(path))
    # Whitespace-separated text: the digit (as a float), then 256 values.
    table = _parse_table(path, text, 257)
    digits = table[:, 0]
    _check_rows(
        path,
        text,
        np.isin(digits, np.arange(10)),
        lambda row: f"the first field, the digit, must be 0 to 9, got {digits[row]:g}",
    )
    return table[:, 1:], digits.astype(np.int64)


@validate_params(
    {
        "data_home": [str, os.PathLike, None],
        "subset": [StrOptions({"train", "test", "all"})],
        "positive_digit": [Interval(Integral, 0, 9, closed="both"), None],
        "label_noise": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
        "download_if_missing": ["boolean"],
        "verify_checksum": ["boolean"],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def fetch_usps(
    *,
    data_home=None,
    subset="train",
    positive_digit=0,
    label_noise=0.0,
    random_state=None,
    download_if_missing=True,
    verify_checksum=True,
    return_X_y=False,
):
    """Load the USPS digits (binary one-against-the-rest or 10 classes).

    Download them if necessary.

    =================   ===============
    Classes                     2 or 10
    Samples (train)                7291
    Samples (test)                 2007
    Dimensionality                  256
    Features            real, [-1, 1]
    =================   ===============

    16 x 16 grayscale images of handwritten digits with values in [-1, 1]
    (the "zip" data of The Elements of Statistical Learning). Weston,
    Bordes and Bottou (2005) classify digit 0 against the rest (on a
    7329/2000 version of the data), and again after flipping 10% of the
    training labels: here that is
    ``fetch_usps(subset='train', label_noise=0.1)`` for training and
    ``fetch_usps(subset='test')`` for testing. Experiments apply the label
    noise to the training subset only, and measure test errors on clean
    labels.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder holding the data, laid out as
        ``<data_home>/usps/zip.train.gz`` and ``<data_home>/usps/zip.test.gz``.
        By default the ``SKLEARN_BUDGET_DATA`` environment variable if it is
        set, else ``~/scikit_learn_data``; see
        :func:`~sklearn_budget.datasets.get_data_home`.

    subset : {'train', 'test', 'all'}, default='train'
        The rows to load: the 7291 training rows, the 2007 test rows, or both
        (the training rows, then the test rows).

    positive_digit : int in [0, 9] or None, default=0
        The digit of the positive class: the target is +1 for the rows of
        this digit and -1 for the others. If None, the target is the digit
        itself (10 classes).

    label_noise : float in [0, 1), default=0.0
        The fraction of labels to flip: exactly ``round(label_noise *
        n_samples)`` rows, drawn uniformly without replacement, have their
        binary label negated. Only allowed in the binary case
        (`positive_digit` not None).

    random_state : int, RandomState instance or None, default=None
        Determines which labels are flipped when `label_noise` > 0. Pass an
        int for reproducible output across multiple function calls.

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

        data : ndarray of shape (n_samples, 256)
            The pixel values in [-1, 1] (float64), row by row.
        target : ndarray of shape (n_samples,)
            The labels (int64): -1 or +1, after the flips, if `positive_digit`
            is an int; the digit 0-9 if it is None.
        digits : ndarray of shape (n_samples,)
            The digit 0-9 of each row (int64), whatever the target.
        noisy : ndarray of shape (n_samples,)
            Boolean mask of the rows whose label was flipped.
        DESCR : str
            Description of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The two arrays above.

    Raises
    ------
    ValueError
        If `label_noise` > 0 and `positive_digit` is None.
    DataFileError
        If a file does not match its checksum, or is malformed (a damaged
        archive, a row of the wrong length, a field that is not a number).
        An OSError; the message names the file and the problem.
    OSError
        If a file is missing and cannot be downloaded.

    Examples
    --------
    >>> from sklearn_budget.datasets import fetch_usps
    >>> train = fetch_usps(label_noise=0.1, random_state=0)  # doctest: +SKIP
    >>> train.data.shape, int(train.noisy.sum())  # doctest: +SKIP
    ((7291, 256), 729)
    >>> X_test, y_test = fetch_usps(subset='test', return_X_y=True)  # doctest: +SKIP
    """
    if positive_digit is None and label_noise > 0:
        raise ValueError(
            "label_noise flips binary labels: it needs a positive_digit, got "
            f"positive_digit=None and label_noise={label_noise}."
        )
    data_home = get_data_home(data_home)
    files = {
        "train": ["usps/zip.train.gz"],
        "test": ["usps/zip.test.gz"],
        "all": ["usps/zip.train.gz", "usps/zip.test.gz"],
    }
    parts = [
        _read_usps(_local_file(filename, data_home, download_if_missing, verify_checksum))
        for filename in files[subset]
    ]
    X = np.concatenate([part[0] for part in parts])
    digits = np.concatenate([part[1] for part in parts])
    n_samples = digits.shape[0]

    noisy = np.zeros(n_samples, dtype=bool)
    if positive_digit is None:
        y = digits.copy()
    else:
        y = np.where(digits == positive_digit, 1, -1).astype(np.int64)
        n_flips = int(round(label_noise * n_samples))
        if n_flips:
            rng = check_random_state(random_state)
            noisy[rng.choice(n_samples, size=n_flips, replace=False)] = True
            y[noisy] = -y[noisy]
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, digits=digits, noisy=noisy, DESCR=USPS_DESCR)
