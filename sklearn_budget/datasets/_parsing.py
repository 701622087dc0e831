"""Checked parsing of the data files.

The checksum is the first line of defence, but it can be turned off for a
modified copy, so the readers check what they read too: every damaged file
gives a :class:`~sklearn_budget.datasets.DataFileError` naming the file, the
line and the problem."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import gzip
import io
import zlib

import numpy as np

from ._base import DataFileError


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


def _read_gzip(path):
    """The decompressed bytes of a gzip file."""
    with open(path, "rb") as f:
        # Decompressed whole, so that the CRC is checked before parsing.
        try:
            with gzip.GzipFile(fileobj=f) as archive:
                return archive.read()
        except (EOFError, OSError, zlib.error) as exc:
            # Truncated: EOFError; not gzip or a CRC mismatch: BadGzipFile,
            # an OSError; damaged compressed data: zlib.error.
            raise _malformed(path, f"not a valid gzip file ({exc})") from exc


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
