"""Data sets of the papers: a synthetic generator and loaders of the real data.

The loaders read their files from a data home folder (see
:func:`get_data_home`) and download the missing ones. Every file is checked
against its SHA256 checksum (once per process, unless
``verify_checksum=False``) and parsed with checks: a corrupted, malformed or
altered file raises a :class:`DataFileError` naming it.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from ._adult import fetch_a9a
from ._base import DataFileError, get_data_home
from ._mnist import fetch_mnist
from ._multiclass import fetch_dna, fetch_pendigits, fetch_satimage
from ._raetsch import fetch_banana, fetch_waveform
from ._samples_generator import make_two_gaussians
from ._usps import fetch_usps

__all__ = [
    "DataFileError",
    "fetch_a9a",
    "fetch_banana",
    "fetch_dna",
    "fetch_mnist",
    "fetch_pendigits",
    "fetch_satimage",
    "fetch_usps",
    "fetch_waveform",
    "get_data_home",
    "make_two_gaussians",
]
