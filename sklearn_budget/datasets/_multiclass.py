"""Three multiclass sets of the BSGD paper's Table 3 (Wang, Crammer and
Vucetic, 2012), in their LIBSVM versions: DNA, Satimage and Pendigits."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import os

from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions, validate_params

from ._libsvm import _fetch_libsvm

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
