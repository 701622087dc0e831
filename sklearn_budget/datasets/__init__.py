"""Data sets of the papers: a synthetic generator and loaders of the real data.

The loaders read their files from a data home folder (see
:func:`get_data_home`) and download the missing ones, checking their SHA256
checksums.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from ._base import get_data_home
from ._loaders import fetch_a9a, fetch_banana, fetch_usps, fetch_waveform
from ._samples_generator import make_two_gaussians

__all__ = [
    "fetch_a9a",
    "fetch_banana",
    "fetch_usps",
    "fetch_waveform",
    "get_data_home",
    "make_two_gaussians",
]
