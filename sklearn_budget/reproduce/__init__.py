"""The papers' experiments, run by ``sklearn-budget reproduce EXPERIMENT``.

One module per paper (``_projectron``, ``_weston``, ``_bsgd``,
``_forgetron``), the helpers they share (``_common``), and the registry of
the experiments with the function that runs one (``_registry``). The
imports go one way: ``_registry`` imports the paper modules, which import
``_common``.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from ._registry import EXPERIMENTS, check_output, output_files, reproduce

__all__ = ["EXPERIMENTS", "check_output", "output_files", "reproduce"]
