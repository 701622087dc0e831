"""Kernel evaluation shared by the estimators of sklearn-budget."""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

from ._kernels import KERNELS, Kernel, resolve_gamma

__all__ = ["KERNELS", "Kernel", "resolve_gamma"]
