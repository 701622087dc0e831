"""The reader of LIBSVM-format files, and the loading of a set of them."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from ._base import get_data_home
from ._parsing import _check_rows, _malformed, _shorten
from ._remote import _local_file


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
