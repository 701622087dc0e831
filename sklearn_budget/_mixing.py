"""Iterative parameter mixing of budgeted kernel models.

The steps of :class:`sklearn_budget.parallel.ParameterMixingClassifier`,
kept free of any scheduler so that the same functions run in this process,
in joblib workers or on a dask cluster:

- :func:`train_shard`: a copy of the estimator, loaded with the mixed model
  (``BaseKernelOnlineClassifier._load_expansion``), plays one pass over its
  shard; it returns its function (support rows, coefficients and a *key* per
  member), its round count, its number of updates and the bins of its
  progressive margins;
- :func:`mix`: the weighted sum of the shards' functions, as one expansion
  over the union of their members (members with the same key are the same
  point: their coefficients are summed);
- :func:`compress`: the expansion brought back within the budget: the
  subset of the compression of the bounded average
  (:func:`sklearn_budget._averaging.compress`), then, for the rbf kernel
  up to a budget of 128, a *reduced set* of new points (weighted Lloyd
  steps from that subset) where it fits the mixed function better at the
  expansion's rows.

A member's key is the index of its row in the training set, ``n_total + j``
for member ``j`` of the model the shards started from when it is not a row
(a merged point of budgeted SGD), or -1 for a point that a shard created.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ._averaging import OMP_MAX_BUDGET, RIDGE, _kernel_block, ridge_fit
from ._averaging import compress as _compress
from ._calibration import new_bins
from ._dense_rows import KERNEL_CODES
from ._kernels import Kernel, single_blas_thread
from ._loading import independent_factor
from ._stream import _shuffle_rng

# The additive bins of the progressive margins (summed over the shards).
_BINS = tuple(new_bins(2))


def empty_start(n_features, n_rows, sparse):
    """The model every shard starts from on the first mix: no member, round 0."""
    rows = sp.csr_matrix((0, n_features)) if sparse else np.zeros((0, n_features))
    return {
        "sv": rows,
        "coef": np.zeros((n_rows, 0)),
        "keys": np.zeros(0, dtype=np.int64),
        "rounds": 0,
        "rule_state": {},
    }


def train_shard(estimator, start, X, y, sample_weight, offset, classes, seed, n_total):
    """One pass of a copy of ``estimator`` over a shard, from the model ``start``.

    ``X``, ``y``, ``sample_weight``: the shard's rows, rows ``offset`` to
    ``offset + len(X)`` of the training set of ``n_total`` rows. ``seed``:
    the copy's ``random_state`` and, when the estimator shuffles, the order
    of the pass. Returns a dict (see the module's docstring).
    """
    X = X.tocsr() if sp.issparse(X) else np.asarray(X)
    y = np.asarray(y)
    n, m = X.shape[0], start["sv"].shape[0]
    est = clone(estimator).set_params(random_state=seed, warm_start=False)
    sample = X[:1]
    if n == 0:
        sample = sp.csr_matrix((1, X.shape[1])) if sp.issparse(X) else np.zeros((1, X.shape[1]))
    # Loaded members are numbered after the shard's rows (which partial_fit
    # numbers 0..n-1), so that both map back to their keys.
    est._load_expansion(
        sample,
        classes,
        start["sv"],
        start["coef"],
        index=n + np.arange(m),
        rounds=start["rounds"],
        rule_state=start["rule_state"],
    )
    if n == 0 or not _plays_a_row(estimator, y, sample_weight, classes):
        # Nothing to play (rows of weight zero are never played): the shard's
        # function is the one it started from, with the rule's scalars of
        # the loaded model (those of a new stream on the first mix).
        return {
            **{k: start[k] for k in ("sv", "coef", "keys", "rounds")},
            "rule_state": est._rule_summary(),
            "updates": 0,
            "mistakes": 0,
            "rows": 0,
            "bins": None,
        }
    order = _shuffle_rng(seed).permutation(n) if estimator.shuffle else np.arange(n)
    w = None if sample_weight is None else np.asarray(sample_weight)[order]
    est.partial_fit(X[order], y[order], sample_weight=w)
    support = est.support_
    keys = np.full(support.shape, -1, dtype=np.int64)
    own = (support >= 0) & (support < n)
    keys[own] = offset + order[support[own]]
    loaded = support >= n
    keys[loaded] = start["keys"][support[loaded] - n]
    state = est._state
    return {
        "sv": est.support_vectors_,
        "coef": est.dual_coef_,
        "keys": keys,
        "rounds": est._t,
        "rule_state": est._rule_summary(),
        "updates": int(state["counters"][3]),
        "mistakes": int(state["counters"][2]),
        "rows": n,
        "bins": {k: state[k].copy() for k in _BINS},
    }


def _plays_a_row(estimator, y, sample_weight, classes):
    """Whether a row of the shard has a positive weight times the weight of its class."""
    w = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, np.float64)
    if isinstance(estimator.class_weight, dict):
        per_class = np.array([estimator.class_weight.get(c, 1.0) for c in classes.tolist()])
        w = w * per_class[np.searchsorted(classes, y)]
    return bool(np.any(w > 0))


def mix_weights(results, mixing):
    """Weight of each shard's function: uniform, or its share of the updates."""
    S = len(results)
    if mixing == "updates":
        updates = np.array([r["updates"] for r in results], dtype=np.float64)
        if updates.sum() > 0:
            return updates / updates.sum()
    return np.full(S, 1.0 / S)


def _stack(parts):
    if any(sp.issparse(p) for p in parts):
        return sp.vstack([sp.csr_matrix(p) for p in parts], format="csr")
    return np.concatenate(parts, axis=0)


def mix(results, weights):
    """``sum_s weights[s] f_s`` as one expansion: ``(rows, coef, keys)``.

    Members with the same key (>= 0) are merged, their coefficients summed
    in the order of the shards; they come first, sorted by key, then the
    members of key -1 in the order of the shards. Also returns the mixed
    round count (the weighted mean, rounded) and the weighted mean of the
    rules' scalars.
    """
    rows = _stack([r["sv"] for r in results])
    coef = np.hstack([w * r["coef"] for w, r in zip(weights, results)])
    keys = np.concatenate([r["keys"] for r in results])
    named = np.flatnonzero(keys >= 0)
    unnamed = np.flatnonzero(keys < 0)
    ukeys, first, inverse = np.unique(keys[named], return_index=True, return_inverse=True)
    merged = np.zeros((coef.shape[0], ukeys.size))
    np.add.at(merged.T, inverse.ravel(), coef[:, named].T)
    take = np.concatenate([named[first], unnamed])
    out_rows = rows[take]
    out_coef = np.hstack([merged, coef[:, unnamed]])
    out_keys = np.concatenate([ukeys, keys[unnamed]]).astype(np.int64)
    rounds = int(np.rint(sum(w * r["rounds"] for w, r in zip(weights, results))))
    rule_state = {}
    for name in results[0]["rule_state"]:
        rule_state[name] = sum(w * r["rule_state"][name] for w, r in zip(weights, results))
    return out_rows, out_coef, out_keys, rounds, rule_state


def make_kernel(estimator):
    """The kernel of ``estimator``'s parameters (``gamma`` numeric) and its compiled code."""
    kernel = Kernel(
        estimator.kernel,
        gamma=estimator.gamma,
        degree=estimator.degree,
        coef0=estimator.coef0,
        kernel_params=estimator.kernel_params,
    )
    code = KERNEL_CODES.get(estimator.kernel) if isinstance(estimator.kernel, str) else None
    return kernel, code


#: A mixed member within this fraction of ``k(x, x)`` (squared) of the span
#: of the members before it is projected onto them: 100 times the
#: tolerance at which the rules that keep a factor of their members' Gram
#: matrix (the Projectrons, budgeted SGD's projection) refuse to load one.
_MIXING_DEPENDENCE_RTOL = 1e-8


#: Most Lloyd steps of the reduced set (they stop earlier once no member
#: changes its centre). On USPS-10 and a9a at a budget of 100, 36 of the
#: 38 mixes of the estimators of benchmarks/bench_mixing.py reached a fixed
#: point within 10 steps, the other two within 13.
_LLOYD_STEPS = 10


@single_blas_thread()  # the same mixed model for any thread count
def compress(kernel, kernel_code, rows, coef, keys, budget):
    """The expansion ``(rows, coef, keys)`` brought within ``budget`` members.

    First the compression of the pool of the bounded average
    (:func:`~sklearn_budget._averaging.compress`): a subset chosen by kernel
    matching pursuit (up to a budget of 128) or by the size of each
    member's function, its coefficients refitted by ridge least squares to
    the whole expansion. Then, for the rbf kernel up to a budget of 128,
    the reduced set of :func:`_reduced_set` replaces the subset where it
    fits the expansion's function better at the expansion's rows. Other
    kernels (whose values are not a function of the Euclidean distance
    alone) and larger budgets (whose refit is in the kernel's space, not at
    the rows) keep the subset. Then :func:`independent`. Returns ``(rows,
    coef, keys)``; the subset's members are in their order in the input,
    the new points of the reduced set have the key -1.
    """
    out_rows, out_coef, out_keys = _compress(
        rows, np.ascontiguousarray(coef.T), keys, kernel, kernel_code, budget
    )
    if (
        rows.shape[0] > budget
        and out_rows.shape[0] > 0
        and budget <= OMP_MAX_BUDGET
        and kernel.kernel == "rbf"
    ):
        with single_blas_thread():
            out_rows, out_coef, out_keys = _reduced_set(
                kernel, kernel_code, rows, coef, keys, out_rows, out_coef, out_keys
            )
    return independent(kernel, kernel_code, out_rows, np.ascontiguousarray(out_coef.T), out_keys)


def _reduced_set(kernel, kernel_code, rows, coef, keys, sub_rows, sub_coef, sub_keys):
    """New points for the expansion, or the subset ``sub_*`` if they fit it worse.

    The reduced-set approach (Burges, "Simplified support vector decision
    rules", ICML 1996; Schoelkopf et al., "Input space versus feature
    space in kernel-based methods", IEEE TNN 1999): the function
    ``f = sum_j a_j k(x_j, .)`` is approximated by ``sum_b c_b k(z_b, .)``
    over points ``z_b`` that need not be members. For the rbf kernel, whose
    values fall with the distance, the centres are those of weighted
    k-means of the members, each weighted by ``||a_j||`` (a member's part
    in ``f``): Lloyd steps (at most :data:`_LLOYD_STEPS`, from the subset
    as the initial centres), each ``O(budget m d)``. The coefficients are
    then the ridge least-squares fit of ``f`` at the members' rows, as the
    subset's (``argmin ||K(X, Z) c - K a||^2 + 1e-8 m ||c||^2``, ``m``
    members). The centres are kept only if their residual at the rows is
    below the subset's, so a mix is never fitted worse than by the subset.
    A centre that is one member alone keeps its row and key; the others get
    the key -1. ``coef``: shape (n_rows, m); ``sub_coef``: (n_sub, n_rows),
    as :func:`~sklearn_budget._averaging.compress` gives it.
    """
    scale = np.abs(coef).max(initial=0.0)
    if not 0 < scale < np.inf:
        return sub_rows, sub_coef, sub_keys
    # Divided by the largest coefficient first: no overflow of the squares.
    weights = np.sqrt(np.einsum("ij,ij->j", coef / scale, coef / scale))
    weights /= weights.max()
    centres, centre_keys = _lloyd(rows, keys, weights, sub_rows, sub_keys)
    # The function at the members' rows, by blocks of columns: O(m budget)
    # kernel values held at a time.
    m, step = rows.shape[0], sub_rows.shape[0]
    target = np.zeros((m, coef.shape[0]))
    for j in range(0, m, step):
        target += (
            _kernel_block(kernel, kernel_code, rows, rows[j : j + step]) @ coef[:, j : j + step].T
        )
    sub_fit = _kernel_block(kernel, kernel_code, rows, sub_rows) @ sub_coef
    A = _kernel_block(kernel, kernel_code, rows, centres)
    new_coef = ridge_fit(A.T @ A, A.T @ target, RIDGE * m)
    if new_coef is None or not np.linalg.norm(A @ new_coef - target) < np.linalg.norm(
        sub_fit - target
    ):
        return sub_rows, sub_coef, sub_keys
    return centres, new_coef, centre_keys


def _lloyd(rows, keys, weights, centres, centre_keys):
    """Weighted Lloyd steps from ``centres``: ``(centres, keys)`` after them.

    Each member goes to its nearest centre (the first of equals), each
    centre with members of positive weight to their weighted mean, the
    others stay where they are. A mean of one member of positive weight is
    that member (its row bit for bit, ``(w / w) x`` is ``x``) and keeps its key;
    a mean of several has the key -1. Dense or CSR ``rows`` (the centres
    then CSR, nonzero where one of their members is): each mean summed in
    the order of the members; the distances of the assignments by BLAS
    (dense) or sparse products (CSR), whose roundings can differ where two
    centres are nearly equally near.
    """
    sparse = sp.issparse(rows)
    centres = sp.csr_matrix(centres) if sparse else np.array(centres, dtype=np.float64)
    centre_keys = np.array(centre_keys, dtype=np.int64)
    k, m = centres.shape[0], rows.shape[0]
    positive = weights > 0
    labels = None
    for _ in range(_LLOYD_STEPS):
        # ||x - z||^2 less ||x||^2, the same for every centre of a member.
        # Rows near the largest floats overflow it: their assignments are
        # then arbitrary (argmin takes the first NaN), the means stay means
        # of finite rows, and _reduced_set keeps the subset unless the
        # centres fit better.
        with np.errstate(all="ignore"):
            if sparse:
                norms = np.asarray(centres.multiply(centres).sum(axis=1)).ravel()
                dist = norms[None, :] - 2.0 * (rows @ centres.T).toarray()
            else:
                dist = np.einsum("ij,ij->i", centres, centres)[None, :] - 2.0 * (rows @ centres.T)
        new = np.argmin(dist, axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        mass = np.bincount(labels, weights=weights, minlength=k)
        moved = mass > 0
        # The means as one sparse product: row b holds w_j / mass_b at its
        # members j; a centre that stays takes its own row.
        take = np.flatnonzero(positive)
        means = sp.csr_matrix(
            (weights[take] / mass[labels[take]], (labels[take], take)), shape=(k, m)
        )
        stay = sp.diags((~moved).astype(np.float64))
        centres = means @ rows + stay @ centres
        centres = centres.tocsr() if sparse else np.asarray(centres)
        count = np.bincount(labels[take], minlength=k)
        centre_keys[moved] = -1
        alone = take[count[labels[take]] == 1]
        centre_keys[labels[alone]] = keys[alone]
    return centres, centre_keys


def independent(kernel, kernel_code, rows, coef, keys):
    """The expansion with no member in the span of the members before it.

    Each member whose squared distance to the span of the earlier kept ones
    is at most ``_MIXING_DEPENDENCE_RTOL k(x, x)`` is projected onto them,
    as the rules that keep a factor project such a row: its coefficients
    are added to theirs through the projection of ``k(x, .)``, which moves
    the function by at most ``1e-4 ||coef|| sqrt(k(x, x))``, and it is
    dropped. Every mixed model can then be loaded by every rule.
    ``coef``: shape (n_rows, n_members).
    """
    m = rows.shape[0]
    K = _kernel_block(kernel, kernel_code, rows, rows) if m > 1 else None
    if K is None or not np.all(np.diag(K) > 0):
        # One member, or a kernel that is not positive definite (which the
        # rules that keep a factor refuse): nothing to project onto.
        return rows, coef, np.asarray(keys).copy()
    coef = np.array(coef, dtype=np.float64)
    _, kept, dropped = independent_factor(K, _MIXING_DEPENDENCE_RTOL)
    for i, beta in dropped:
        # P k(x_i, .) = sum_j beta_j k(x_j, .) over the members kept before it.
        coef[:, kept[: beta.size]] += coef[:, [i]] * beta
    return rows[kept], np.ascontiguousarray(coef[:, kept]), np.asarray(keys)[kept].copy()


def next_start(rows, coef, keys, rounds, rule_state, n_total):
    """The model the shards of the next mix start from (keys of non-rows renamed)."""
    keys = np.where((keys >= 0) & (keys < n_total), keys, n_total + np.arange(keys.size))
    return {
        "sv": rows,
        "coef": coef,
        "keys": keys.astype(np.int64),
        "rounds": rounds,
        "rule_state": rule_state,
    }


def sum_bins(results):
    """The bins of the progressive margins of every shard, summed (they are additive)."""
    bins = [r["bins"] for r in results if r["bins"] is not None]
    if not bins:
        return None
    return {name: sum(b[name] for b in bins) for name in bins[0]}
