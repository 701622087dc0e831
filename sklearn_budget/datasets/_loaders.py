"""Loaders of the real data sets of the papers: Adult (a9a), USPS, Banana,
Waveform, the MNIST test set, DNA, Satimage and Pendigits."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import gzip
import io
import os
import zlib
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.io import loadmat
from sklearn.datasets import load_svmlight_file
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ._base import DataFileError, RemoteFileMetadata, _ensure_local, get_data_home

_LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
_LIBSVM_MULTICLASS = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/"
_ESL_DATASETS = "https://hastie.su.domains/ElemStatLearn/datasets/"
# LeCun's own site (yann.lecun.com/exdb/mnist) often refuses downloads; this
# mirror serves the same files (their checksums are those of the originals).
_MNIST = "https://ossci-datasets.s3.amazonaws.com/mnist/"

# Every file the fetchers read: path in the data home, canonical URL, SHA256.
# The fetchers look their files up here at call time.
REMOTE_FILES = (
    RemoteFileMetadata(
        filename="a9a/a9a",
        url=_LIBSVM_BINARY + "a9a",
        checksum="f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906",
    ),
    RemoteFileMetadata(
        filename="a9a/a9a.t",
        url=_LIBSVM_BINARY + "a9a.t",
        checksum="7d8c09f1120d9ff231d85caba98956906033f3c4d53e2b15ab7ef83710de6a76",
    ),
    RemoteFileMetadata(
        filename="usps/zip.train.gz",
        url=_ESL_DATASETS + "zip.train.gz",
        checksum="66ebf231ab51f2cf6ac1a892d0f98ccffee1079d7a5db638c1f11f366046ca16",
    ),
    RemoteFileMetadata(
        filename="usps/zip.test.gz",
        url=_ESL_DATASETS + "zip.test.gz",
        checksum="8dacc3c6e136af6c3488de9e5113a7daf140c8c2f1f0b61c54ee02f03f1a962f",
    ),
    # The Raetsch benchmark site that first distributed Banana and Waveform is
    # gone (its data now lives on in tdiethe/gunnar_raetsch_benchmark_datasets,
    # in another format). These URLs are public copies pinned to a commit: the
    # CSV export of Banana ("X1,X2,Y" header; its size and the rows checked
    # match the file of this checksum), and Waveform as a MATLAB file holding
    # `data` and `target` (a binary file not yet checked against the
    # checksum). The checksum check rejects any other content.
    RemoteFileMetadata(
        filename="banana/banana.csv",
        url=(
            "https://raw.githubusercontent.com/basarbatucan/NP-NN/"
            "409ebf3bd4b91a1ccc2bb50fdefbfabe77c30ddc/data/banana.csv"
        ),
        checksum="390a30b5037c8eb6355a34478311d8d0da776c0260f03055a771441535808959",
    ),
    RemoteFileMetadata(
        filename="waveform/waveform.mat",
        url=(
            "https://raw.githubusercontent.com/Devn913/AGMR_entropy_sparse/"
            "d2acc13cba3e83de7a38086d30bc9223b92965bc/twin_datasets/waveform.mat"
        ),
        checksum="f783135eb00109cb241f65481be36c011cc1fc13df6180d512d2a2a3488e9db3",
    ),
    RemoteFileMetadata(
        filename="mnist/t10k-images-idx3-ubyte.gz",
        url=_MNIST + "t10k-images-idx3-ubyte.gz",
        checksum="8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    ),
    RemoteFileMetadata(
        filename="mnist/t10k-labels-idx1-ubyte.gz",
        url=_MNIST + "t10k-labels-idx1-ubyte.gz",
        checksum="f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    ),
    RemoteFileMetadata(
        filename="dna/dna.scale",
        url=_LIBSVM_MULTICLASS + "dna.scale",
        checksum="03d39477c5e48415e9cd18e006efc8f7a3b5c3deaee8289a72511c35070e3cfe",
    ),
    RemoteFileMetadata(
        filename="dna/dna.scale.t",
        url=_LIBSVM_MULTICLASS + "dna.scale.t",
        checksum="d2eeed170e4e38ae2aba6aa4cd27a8ca4ecceb01a7751e8e509bb4e1a6bcef39",
    ),
    RemoteFileMetadata(
        filename="satimage/satimage.scale",
        url=_LIBSVM_MULTICLASS + "satimage.scale",
        checksum="df08755887b968a272b84247fa0b1543b8cd623442fbc1c7943144e459ef2eb6",
    ),
    RemoteFileMetadata(
        filename="satimage/satimage.scale.t",
        url=_LIBSVM_MULTICLASS + "satimage.scale.t",
        checksum="b04c60323488f5a7f571d40be5d750b279e8f3bd43729b4c109b8c013fcd8196",
    ),
    RemoteFileMetadata(
        filename="pendigits/pendigits",
        url=_LIBSVM_MULTICLASS + "pendigits",
        checksum="6e8a2f318a24d97d26a9c381642621dc955fed73ec44c4d417bd7afbb47ed67c",
    ),
    RemoteFileMetadata(
        filename="pendigits/pendigits.t",
        url=_LIBSVM_MULTICLASS + "pendigits.t",
        checksum="5ddb2f034e1c5ca8a47b8a7e78510f8a9d68015cf40a5031534c693fba9773d3",
    ),
)


def _local_file(filename, data_home, download_if_missing, verify_checksum):
    """Path of one file of `REMOTE_FILES`, downloaded first if missing."""
    for remote in REMOTE_FILES:
        if remote.filename == filename:
            return _ensure_local(remote, data_home, download_if_missing, verify_checksum)
    raise KeyError(f"{filename} is not in REMOTE_FILES")  # pragma: no cover


# Parsing. The checksum is the first line of defence, but it can be turned off
# for a modified copy, so the parsers check what they read too: every damaged
# file gives a DataFileError naming the file, the line and the problem.


def _malformed(path, problem):
    return DataFileError(
        f"Malformed data file {path}: {problem}. Delete it to download it again, or "
        "replace it with a good copy."
    )


def _shorten(text, width=40):
    return repr(text if len(text) <= width else text[:width] + "...")


def _decode(path, raw):
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        where = f"byte {raw[exc.start]:#04x} at offset {exc.start}"
        raise _malformed(path, f"not a text file ({where})") from None


def _is_data_line(line):
    # The parsers (np.loadtxt, load_svmlight_file) skip blank lines and "#" comments.
    return bool(line.split("#", 1)[0].strip())


def _line_of_row(text, row, first_line=1):
    """The line number of data row ``row`` (from 0) of ``text``, for messages."""
    rows = -1
    for number, line in enumerate(text.split("\n"), start=first_line):
        rows += _is_data_line(line)
        if rows == row:
            return number
    return None  # pragma: no cover


def _check_rows(path, text, ok, problem, first_line=1):
    """Raise on the first row where ``ok`` is False, naming its line.

    ``problem(row)`` says what is wrong with the row.
    """
    bad = np.flatnonzero(~ok)
    if bad.size:
        line = _line_of_row(text, bad[0], first_line)
        raise _malformed(path, f"line {line}: {problem(bad[0])}")


def _parse_table(path, text, n_columns, delimiter=None, first_line=1):
    """The rows of a text table of ``n_columns`` numbers each, as float64.

    ``first_line`` is the line number of the first line of ``text`` in the
    file. On a malformed table, the first bad line is looked for in Python
    (only then: np.loadtxt is much faster) to name it in the error.
    """
    if not any(_is_data_line(line) for line in text.split("\n")):
        raise _malformed(path, "no data rows")
    error = None
    try:
        table = np.loadtxt(io.StringIO(text), delimiter=delimiter, dtype=np.float64, ndmin=2)
    except ValueError as exc:
        error = exc
    if error is not None or table.shape[1] != n_columns:
        for number, line in enumerate(text.split("\n"), start=first_line):
            if not _is_data_line(line):
                continue
            fields = line.split("#", 1)[0].split(delimiter)
            if len(fields) != n_columns:
                raise _malformed(
                    path, f"line {number} has {len(fields)} fields, expected {n_columns}"
                )
            for field in fields:
                try:
                    float(field)
                except ValueError:
                    raise _malformed(
                        path, f"line {number}: {_shorten(field.strip())} is not a number"
                    ) from None
        # What np.loadtxt rejects and float() accepts, such as "1_000".
        raise _malformed(path, str(error)) from error
    finite = np.isfinite(table).all(axis=1)
    _check_rows(path, text, finite, lambda row: "a value is not finite", first_line)
    return table


def _libsvm_problem(path, n_features):
    """The first malformed line of a LIBSVM file, or None.

    load_svmlight_file names no line in its errors: this finds one.
    """
    with open(path, "rb") as f:
        text = f.read().decode("latin-1")
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        label, pairs = fields[0], fields[1:]
        try:
            float(label)
        except ValueError:
            return f"line {number}: the label {_shorten(label)} is not a number"
        previous = 0
        for pair in pairs:
            index, _, value = pair.partition(":")
            try:
                index = int(index)
                float(value)
            except ValueError:
                return f"line {number}: {_shorten(pair)} is not an index:value pair"
            if not 1 <= index <= n_features:
                return f"line {number}: feature index {index} is not in [1, {n_features}]"
            if index <= previous:
                return f"line {number}: feature index {index} follows {previous}"
            previous = index
    return None


def _label_rule(labels):
    """What the labels must be, for messages."""
    if tuple(labels) == (-1, 1):
        return "-1 or +1"
    return f"an integer from {min(labels)} to {max(labels)}"


def _read_libsvm(path, n_features, labels=(-1, 1)):
    """A LIBSVM file of ``n_features`` features whose labels are in ``labels``."""
    try:
        X, y = load_svmlight_file(path, n_features=n_features, dtype=np.float64, zero_based=False)
    except ValueError as exc:
        raise _malformed(path, _libsvm_problem(path, n_features) or str(exc)) from exc
    if X.shape[0] == 0:
        raise _malformed(path, "no data rows")
    labels_ok = np.isin(y, labels)
    finite = np.ones(X.shape[0], dtype=bool)
    if not np.isfinite(X.data).all():
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        finite[rows[~np.isfinite(X.data)]] = False
    if not (labels_ok.all() and finite.all()):
        with open(path, "rb") as f:
            text = f.read().decode("latin-1")
        rule = _label_rule(labels)
        _check_rows(path, text, labels_ok, lambda row: f"the label must be {rule}, got {y[row]:g}")
        _check_rows(path, text, finite, lambda row: "a feature value is not finite")
    return X, y


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


def _read_usps(path):
    with open(path, "rb") as f:
        # Decompressed whole, so that the CRC is checked before parsing.
        try:
            with gzip.GzipFile(fileobj=f) as archive:
                raw = archive.read()
        except (EOFError, OSError, zlib.error) as exc:
            # Truncated: EOFError; not gzip or a CRC mismatch: BadGzipFile,
            # an OSError; damaged compressed data: zlib.error.
            raise _malformed(path, f"not a valid gzip file ({exc})") from exc
    text = _decode(path, raw)
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


# ---------------------------------------------------------------------------
# The MNIST test set (the Forgetron paper's Fig. 2) and three multiclass sets
# of the BSGD paper's Table 3 (DNA, Satimage, Pendigits).

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

DNA_DESCR = """\
DNA (Statlog)
-------------

Primate splice-junction gene sequences (Statlog project): is the middle of
a 60-nucleotide window an exon/intron boundary, an intron/exon boundary or
neither? Each nucleotide is coded by three binary features, in LIBSVM's
scaled version. Labels are 1, 2 and 3.

=================   ===============
Classes                           3
Samples (train)                2000
Samples (test)                 1186
Dimensionality                  180
Features                 binary 0/1
=================   ===============

The BSGD paper (Wang, Crammer and Vucetic, 2012, Table 3) uses it.

Source: https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass.html#dna
"""

SATIMAGE_DESCR = """\
Satimage (Statlog Landsat satellite)
------------------------------------

The multi-spectral values of the 3 x 3 pixel neighbourhoods of a Landsat
image (Statlog project), in LIBSVM's scaled version: features scaled to
[-1, 1] on the training rows (the test rows reach +-1.14), labels 1 to 6
(the soil types of UCI's classes 1-5 and 7; UCI's class 6 has no rows).

=================   ===============
Classes                           6
Samples (train)                4435
Samples (test)                 2000
Dimensionality                   36
Features               real, [-1, 1]
=================   ===============

The BSGD paper (Wang, Crammer and Vucetic, 2012, Table 3) uses it.

Source: https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass.html#satimage
"""

PENDIGITS_DESCR = """\
Pendigits
---------

Pen-based recognition of handwritten digits (Alpaydin and Alimoglu): eight
(x, y) points resampled from each pen trajectory, coordinates scaled to
integers 0 to 100 (LIBSVM's unscaled version). Labels are the digits 0-9.

=================   ===============
Classes              10 (digits 0-9)
Samples (train)                7494
Samples (test)                 3498
Dimensionality                   16
Features            integers 0-100
=================   ===============

The BSGD paper (Wang, Crammer and Vucetic, 2012, Table 3, "Pen") uses it.
Divide the features by 100 before an rbf kernel.

Source: https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass.html#pendigits
"""

# IDX files: a big-endian int32 magic number (2049 for a vector of labels,
# 2051 for a stack of images), the dimensions as big-endian int32, then the
# values as unsigned bytes.
_IDX_MAGIC = {1: 2049, 3: 2051}


def _read_idx(path, ndim):
    """The array of unsigned bytes of a gzipped IDX file of ``ndim`` dimensions."""
    with open(path, "rb") as f:
        # Decompressed whole, so that the CRC is checked before parsing.
        try:
            with gzip.GzipFile(fileobj=f) as archive:
                raw = archive.read()
        except (EOFError, OSError, zlib.error) as exc:
            raise _malformed(path, f"not a valid gzip file ({exc})") from exc
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


def _fetch_libsvm(name, subset, n_features, labels, data_home, download_if_missing,
                  verify_checksum, dense=True):  # fmt: skip
    """The rows of ``subset`` of a LIBSVM data set, ``n_features`` columns
    (a dense array, or a CSR matrix if not ``dense``), and the labels (int64)."""
    data_home = get_data_home(data_home)
    # name: the training file's name in the data home; + ".t": the test file's.
    files = {"train": [name], "test": [name + ".t"], "all": [name, name + ".t"]}
    Xs, ys = [], []
    for filename in files[subset]:
        path = _local_file(filename, data_home, download_if_missing, verify_checksum)
        X, y = _read_libsvm(path, n_features=n_features, labels=labels)
        X.eliminate_zeros()  # a file may store "j:0" only to declare its width (a9a.t)
        Xs.append(X)
        ys.append(y)
    X = Xs[0] if len(Xs) == 1 else sp.vstack(Xs, format="csr")
    return X.toarray() if dense else X, np.concatenate(ys).astype(np.int64)


_MULTICLASS_PARAMS = {
    "data_home": [str, os.PathLike, None],
    "subset": [StrOptions({"train", "test", "all"})],
    "download_if_missing": ["boolean"],
    "verify_checksum": ["boolean"],
    "return_X_y": ["boolean"],
}

_MULTICLASS_DOC = """
    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder holding the data, laid out as ``<data_home>/{train}``
        and ``<data_home>/{train}.t``. By default the
        ``SKLEARN_BUDGET_DATA`` environment variable if it is set, else
        ``~/scikit_learn_data``; see
        :func:`~sklearn_budget.datasets.get_data_home`.

    subset : {{'train', 'test', 'all'}}, default='train'
        The rows to load: the {n_train} training rows, the {n_test} test
        rows, or both (the training rows, then the test rows).

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

        data : ndarray of shape (n_samples, {n_features})
            The features (float64), as a dense array.
        target : ndarray of shape (n_samples,)
            The labels, {labels} (int64).
        DESCR : str
            Description of the data set.

    (data, target) : tuple if ``return_X_y`` is True
        The two arrays above.

    Raises
    ------
    DataFileError
        If a file does not match its checksum, or is malformed (a line that
        is not LIBSVM's ``label index:value ...``, a feature index out of
        range, an unknown label). An OSError; the message names the file and
        the problem.
    OSError
        If a file is missing and cannot be downloaded.
"""


def _multiclass_doc(summary, **fields):
    return summary + _MULTICLASS_DOC.format(**fields)


@validate_params(_MULTICLASS_PARAMS, prefer_skip_nested_validation=True)
def fetch_dna(
    *,
    data_home=None,
    subset="train",
    download_if_missing=True,
    verify_checksum=True,
    return_X_y=False,
):
    X, y = _fetch_libsvm(
        "dna/dna.scale", subset, 180, (1, 2, 3), data_home, download_if_missing, verify_checksum
    )
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, DESCR=DNA_DESCR)


fetch_dna.__doc__ = (
    _multiclass_doc(
        """Load the Statlog DNA data set (classification, 3 classes).

    Download it if necessary.

    =================   ===============
    Classes                           3
    Samples (train)                2000
    Samples (test)                 1186
    Dimensionality                  180
    Features                 binary 0/1
    =================   ===============

    Splice junctions of primate genes, LIBSVM's scaled version, as used by
    the BSGD paper (Wang, Crammer and Vucetic, 2012, Table 3).
""",
        train="dna/dna.scale",
        n_train=2000,
        n_test=1186,
        n_features=180,
        labels="1, 2 or 3",
    )
    + """
    Examples
    --------
    >>> from sklearn_budget.datasets import fetch_dna
    >>> X, y = fetch_dna(return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (2000, 180)
"""
)


@validate_params(_MULTICLASS_PARAMS, prefer_skip_nested_validation=True)
def fetch_satimage(
    *,
    data_home=None,
    subset="train",
    download_if_missing=True,
    verify_checksum=True,
    return_X_y=False,
):
    X, y = _fetch_libsvm(
        "satimage/satimage.scale", subset, 36, tuple(range(1, 7)), data_home,
        download_if_missing, verify_checksum,
    )  # fmt: skip
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, DESCR=SATIMAGE_DESCR)


fetch_satimage.__doc__ = (
    _multiclass_doc(
        """Load the Statlog Satimage data set (classification, 6 classes).

    Download it if necessary.

    =================   ===============
    Classes                           6
    Samples (train)                4435
    Samples (test)                 2000
    Dimensionality                   36
    Features               real, [-1, 1]
    =================   ===============

    Landsat multi-spectral values, LIBSVM's scaled version, as used by the
    BSGD paper (Wang, Crammer and Vucetic, 2012, Table 3).
""",
        train="satimage/satimage.scale",
        n_train=4435,
        n_test=2000,
        n_features=36,
        labels="1 to 6",
    )
    + """
    Examples
    --------
    >>> from sklearn_budget.datasets import fetch_satimage
    >>> X, y = fetch_satimage(subset="test", return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (2000, 36)
"""
)


@validate_params(_MULTICLASS_PARAMS, prefer_skip_nested_validation=True)
def fetch_pendigits(
    *,
    data_home=None,
    subset="train",
    download_if_missing=True,
    verify_checksum=True,
    return_X_y=False,
):
    X, y = _fetch_libsvm(
        "pendigits/pendigits", subset, 16, tuple(range(10)), data_home, download_if_missing,
        verify_checksum,
    )  # fmt: skip
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, DESCR=PENDIGITS_DESCR)


fetch_pendigits.__doc__ = (
    _multiclass_doc(
        """Load the Pendigits data set (classification, 10 digits).

    Download it if necessary.

    =================   ===============
    Classes              10 (digits 0-9)
    Samples (train)                7494
    Samples (test)                 3498
    Dimensionality                   16
    Features            integers 0-100
    =================   ===============

    Pen trajectories of handwritten digits, LIBSVM's unscaled version (the
    "Pen" data set of the BSGD paper, Wang, Crammer and Vucetic, 2012,
    Table 3). Divide the features by 100 before an rbf kernel.
""",
        train="pendigits/pendigits",
        n_train=7494,
        n_test=3498,
        n_features=16,
        labels="the digits 0 to 9",
    )
    + """
    Examples
    --------
    >>> from sklearn_budget.datasets import fetch_pendigits
    >>> X, y = fetch_pendigits(return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (7494, 16)
"""
)
