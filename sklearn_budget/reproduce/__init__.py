"""The papers' experiments, run by ``sklearn-budget reproduce EXPERIMENT``.

One module per paper (``_projectron``, ``_weston``, ``_bsgd``,
``_forgetron``; ``_weston`` runs Weston et al.'s experiments from one module
each, ``_weston_*``), the helpers they share (``_common``), and the registry
of the experiments with the function that runs one (``_registry``). The
imports go one way: ``_registry`` imports the paper modules, which import
``_common`` (and ``_weston`` its experiments' modules, which import
``_common`` and, for the USPS ones, ``_weston_cache``).
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from ._registry import EXPERIMENTS, check_output, output_files, reproduce

__all__ = ["EXPERIMENTS", "check_output", "output_files", "reproduce"]
