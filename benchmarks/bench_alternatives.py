"""Our budgeted estimators at their defaults against what practitioners use instead.

On the nine shipped data sets, at budgets 100 and 500, every estimator of
the package that takes a ``budget`` is fit at its defaults (only
``budget``, the rbf ``gamma`` and ``random_state=0`` given) and compared,
at equal memory, with ``Nystroem(n_components=budget)`` and
``RBFSampler(n_components=budget)`` each followed by a linear
``SGDClassifier``, and with an exact ``SVC`` as the unbounded ceiling.

Protocol:

- Data: the loaders and splits of part (e) of ``bench_defaults.py`` (seed
  0, or ``--seed``), with the full training sets: a9a (32,561 training / 16,281 test rows,
  sparse), USPS ten classes and digit 0 against the rest (7,291 / 2,007),
  DNA (2,000 / 1,186), Satimage (4,435 / 2,000), Pendigits (7,494 / 3,498,
  divided by 100) with their own test sets; seeded stratified splits of
  Banana (4,300 / 1,000), Waveform (4,000 / 1,000) and the MNIST test set
  (8,000 / 2,000, pixels / 255). The training rows are shuffled once
  (the same seed, which is also every model's ``random_state``).
- rbf width: one ``gamma`` per data set for every kernel model: the
  widths of the package's experiments where there is one (a9a 0.02, USPS
  1/128, Banana 1/(2 0.7^2), Waveform 1/(2 3.16^2)), else the ``'scale'``
  value of the training rows, computed once.
- Ours: no tuning, the defaults are the protocol (NOGD's default ``fit``
  chooses its penalty and epochs on held-out rows itself: that choice is
  in its fit time, and in the result's ``fitted``). The alternatives get the
  light grid ``GRIDS`` (their best: for the linear SGD, ``alpha`` and
  ``average``): each combination is fit on the first 80% of
  the shuffled training rows and scored on the other 20%; the best is refit
  on all the training rows, which is the fit timed. The SVC is tuned the
  same way where the training set has at most ``SVC_TUNE_MAX`` rows, else
  fit once with C = 1; it runs after every budgeted model, the smallest
  sets first, so that a run cut short (``--max-minutes``) loses the SVC of
  the largest sets only.
- Timing: BLAS pinned to one thread (threadpoolctl), one process, fits one
  after the other; seconds of the final fit; prediction time per test row
  (``predict`` on the whole test set, the fastest of three). Times are as
  measured on a shared machine (the report gives the load average): ratios
  within a run are the evidence, not seconds.
- Memory: support vectors or components, and the bytes of the pickled
  fitted model.

Each result is appended to the JSON file (``--json``) as soon as it is
measured: ``--from-json`` writes the report and the figures of a run, even a
partial one, and ``--resume`` skips the settings the file already holds.

Run from the repository root::

    python benchmarks/bench_alternatives.py --json alternatives.json --out alternatives.md \\
        --figures doc/images/alternatives
    python benchmarks/bench_alternatives.py --quick          # 300 rows a set, a smoke run
    python benchmarks/bench_alternatives.py --datasets banana,dna --budgets 50,100
    python benchmarks/bench_alternatives.py --from-json alternatives.json --out a.md
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import itertools
import json
import os
import pickle
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from bench_defaults import e_draw, e_sources  # noqa: E402
from scipy import sparse  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.kernel_approximation import Nystroem, RBFSampler  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.svm import SVC  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sklearn_budget import (  # noqa: E402
    BudgetedSGDClassifier,
    BudgetPerceptron,
    Forgetron,
    FourierOnlineClassifier,
    KernelMatchingPursuit,
    NystroemOnlineClassifier,
    Projectron,
    ProjectronPlusPlus,
    RandomizedBudgetPerceptron,
    Stoptron,
    TighterBudgetPerceptron,
)
from sklearn_budget._kernels import resolve_gamma  # noqa: E402

# The cheap sets first; a9a, the largest, last.
DATASETS = {
    "dna": "DNA",
    "banana": "Banana",
    "waveform": "Waveform",
    "satimage": "Satimage",
    "usps0": "USPS-0",  # digit 0 against the rest
    "usps10": "USPS-10",
    "pendigits": "Pendigits",
    "mnist": "MNIST",  # its test set
    "a9a": "a9a",
}
# Training / test rows drawn by e_draw (None: the whole file, or a split's default).
SIZES = {
    "banana": (4300, 1000),
    "waveform": (4000, 1000),
    "mnist": (8000, 2000),
}
# The widths of the package's experiments; the other sets take 'scale'.
WIDTHS = {
    "a9a": 0.02,
    "usps10": 1 / 128,
    "usps0": 1 / 128,
    "banana": 1 / (2 * 0.7**2),
    "waveform": 1 / (2 * 3.16**2),
}
OURS = {
    "BudgetedSGD": BudgetedSGDClassifier,
    "BudgetPerceptron": BudgetPerceptron,
    "TighterBudgetPerceptron": TighterBudgetPerceptron,
    "Forgetron": Forgetron,
    "RBP": RandomizedBudgetPerceptron,
    "Stoptron": Stoptron,
    "Projectron": Projectron,
    "Projectron++": ProjectronPlusPlus,
    "FOGD": FourierOnlineClassifier,
    "NOGD": NystroemOnlineClassifier,
    "KernelMatchingPursuit": KernelMatchingPursuit,
}
# The stream protocol: one pass of partial_fit over the shuffled training rows.
STREAM = " (1 pass)"
STREAMED = tuple(f"{m}{STREAM}" for m in OURS if m != "KernelMatchingPursuit")
CHUNK = 1000
ALTERNATIVES = ("Nystroem + SGD", "RBFSampler + SGD")
REFERENCE = "Nystroem + SGD"  # the one-line alternative the recommendation must match
MODELS = (*OURS, *ALTERNATIVES, "SVC", *STREAMED)

# The tuned parameters of each alternative and their values: every
# combination is tried. The linear SGD tunes its averaging too: neither
# setting is the better on every set.
_SGD_GRID = {"sgdclassifier__alpha": (1e-5, 1e-4, 1e-3), "sgdclassifier__average": (False, True)}
GRIDS = {
    "Nystroem + SGD": _SGD_GRID,
    "RBFSampler + SGD": _SGD_GRID,
    "SVC": {"C": (1.0, 10.0, 100.0)},
}
SVC_TUNE_MAX = 10_000


def make_model(name, budget, gamma, seed=0):
    """The unfitted model ``name`` at ``budget`` (ignored by the SVC)."""
    if name.removesuffix(STREAM) in OURS:
        return OURS[name.removesuffix(STREAM)](budget=budget, gamma=gamma, random_state=seed)
    if name == "SVC":
        return SVC(gamma=gamma)
    sgd = SGDClassifier(max_iter=20, tol=None, random_state=seed)
    Map = Nystroem if name == "Nystroem + SGD" else RBFSampler
    return make_pipeline(Map(gamma=gamma, n_components=budget, random_state=seed), sgd)


def load(name, src, quick, seed=0):
    """Shuffled training rows, test rows and the rbf width of a data set."""
    X, y, Xt, yt = e_draw(name, src, seed=seed, quick=quick, sizes=SIZES)
    order = np.random.RandomState(seed).permutation(X.shape[0])
    X, y = X[order], y[order]
    if sparse.issparse(Xt):
        # a9a's test file is read with 64-bit indices, which SVC refuses.
        Xt = sparse.csr_matrix(
            (Xt.data, Xt.indices.astype(np.int32), Xt.indptr.astype(np.int32)), shape=Xt.shape
        )
    gamma = WIDTHS[name] if name in WIDTHS else resolve_gamma("scale", X)
    return X, y, Xt, yt, gamma


def n_support(model):
    """Support vectors, components, or random features."""
    if hasattr(model, "steps"):
        return int(model.steps[0][1].n_components)
    if hasattr(model, "support_vectors_"):
        return int(model.support_vectors_.shape[0])
    return int(model.budget)  # FOGD: its random features


def model_bytes(r):
    """Bytes of the float64 numbers that predicting needs, rows counted dense.

    A kernel expansion keeps its support vectors and one coefficient per
    member and output; Nystroem its components, the ``B x B`` normalisation
    and the linear weights; random features (RBFSampler, FOGD) the
    ``n_features x B`` weights, the offsets and the linear weights. One
    output for two classes, one per class otherwise. The pickle holds more:
    the state that lets a stream go on (``pickle_bytes``). Intercepts are
    not counted.
    """
    d, k, S = r["n_features"], r["n_outputs"], r["support"]
    name = r["model"].removesuffix(STREAM)
    if name == "Nystroem + SGD":
        numbers = S * d + S * S + S * k
    elif name in ("RBFSampler + SGD", "FOGD"):
        numbers = d * S + S + S * k
    elif name == "SVC":  # one-vs-one: n_classes - 1 coefficients per member
        numbers = S * d + S * max(k - 1, 1)
    else:
        numbers = S * d + S * k
    return 8 * numbers


def tune(name, model, X, y):
    """The chosen parameters (or None) and the validation accuracy of every combination."""
    if name not in GRIDS or (name == "SVC" and X.shape[0] > SVC_TUNE_MAX):
        return None, {}
    grid = [dict(zip(GRIDS[name], values)) for values in itertools.product(*GRIDS[name].values())]
    cut = int(0.8 * X.shape[0])
    scores = []
    for params in grid:
        est = clone(model).set_params(**params).fit(X[:cut], y[:cut])
        scores.append(100.0 * est.score(X[cut:], y[cut:]))
    # The best; on ties the first of the grid.
    best = max(range(len(grid)), key=lambda i: (scores[i], -i))
    return grid[best], {_fmt_params(p): v for p, v in zip(grid, scores)}


def measure(name, budget, data, seed=0):
    X, y, Xt, yt, gamma = data
    model = make_model(name, budget, gamma, seed)
    params, scores = tune(name, model, X, y)
    model.set_params(**(params or {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tic = time.perf_counter()
        if name.endswith(STREAM):
            classes = np.unique(y)
            for start in range(0, X.shape[0], CHUNK):
                model.partial_fit(
                    X[start : start + CHUNK], y[start : start + CHUNK], classes=classes
                )
        else:
            model.fit(X, y)
        train = time.perf_counter() - tic
    # The fastest of three predictions: the least disturbed by other jobs.
    predict = np.inf
    for _ in range(3):
        tic = time.perf_counter()
        pred = model.predict(Xt)
        predict = min(predict, time.perf_counter() - tic)
    return dict(
        model=name,
        budget=budget,
        gamma=float(gamma),
        params=params,
        validation=scores,
        accuracy=100.0 * float(np.mean(pred == yt)),
        # What the fit chose for itself, where it chooses (NOGD's alpha='auto').
        fitted={a: float(getattr(model, a)) for a in ("alpha_", "n_iter_") if hasattr(model, a)},
        train_seconds=train,
        predict_us_per_row=1e6 * predict / Xt.shape[0],
        support=n_support(model),
        pickle_bytes=len(pickle.dumps(model)),
        # The progressive (online) error of a one-pass stream: each row
        # predicted before it was learned.
        online_error=(100.0 * model.n_mistakes_ / X.shape[0] if name.endswith(STREAM) else None),
        warnings=sorted({f"{w.category.__name__}: {str(w.message)[:120]}" for w in caught}),
    )


def settings(datasets, budgets, models):
    """(data set, model, budget) in the order of the run: the SVCs last, small sets first."""
    budgeted = [(ds, m, B) for ds in datasets for m in models if m != "SVC" for B in budgets]
    return budgeted + [(ds, "SVC", None) for ds in datasets if "SVC" in models]


def run(todo, quick, json_path, results, deadline, seed=0, progress=sys.stderr):
    """Measure the settings ``todo`` in order, appending to ``results`` (and the file)."""
    src, loaded = None, {}
    for ds, name, budget in todo:
        if deadline is not None and time.time() > deadline:
            print(f"deadline reached: {ds} {name} B={budget} and after skipped", file=progress)
            break
        if ds not in loaded:
            src = src or e_sources()
            loaded[ds] = load(ds, src[ds], quick, seed)
        tic = time.perf_counter()
        with threadpool_limits(limits=1, user_api="blas"):
            res = measure(name, budget, loaded[ds], seed)
        X, Xt = loaded[ds][0], loaded[ds][2]
        n_classes = len(np.unique(loaded[ds][1]))
        res.update(
            dataset=ds,
            n_train=int(X.shape[0]),
            n_test=int(Xt.shape[0]),
            n_features=int(X.shape[1]),
            n_outputs=1 if n_classes == 2 else n_classes,
        )
        res["model_bytes"] = model_bytes(res)
        results.append(res)
        if json_path:
            save(json_path, results)
        print(
            f"[{ds}] {name} B={budget}: {res['accuracy']:.2f}% fit {res['train_seconds']:.1f} s "
            f"({time.perf_counter() - tic:.0f} s with tuning), load {os.getloadavg()[0]:.1f}",
            file=progress,
            flush=True,
        )
    return results


def save(path, results, config=None):
    """Write the results (and the configuration, kept from the file when not given)."""
    path = Path(path)
    if config is None:
        config = json.loads(path.read_text())["config"] if path.exists() else {}
    path.write_text(json.dumps(dict(config=config, results=results), indent=1))


def _by(results):
    return {(r["dataset"], r["model"], r["budget"]): r for r in results}


def _sig(value):
    """Three significant digits, without an exponent."""
    return f"{value:.3g}" if value < 1000 else f"{value:.0f}"


def _kib(results):
    return [
        dict(r, pickle_bytes=r["pickle_bytes"] / 1024, model_bytes=r["model_bytes"] / 1024)
        for r in results
    ]


def _fmt_params(params):
    if not params:
        return "-"
    return ", ".join(
        f"{k.split('__')[-1]}={v if isinstance(v, bool) else format(v, 'g')}"
        for k, v in params.items()
    )


def table(results):
    """Markdown: every measurement."""
    lines = [
        "| data set | model | budget | tuned | test acc % | fit s | predict us / row "
        "| SVs / components | model KiB | pickle KiB |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        b = "-" if r["budget"] is None else str(r["budget"])
        lines.append(
            f"| {DATASETS[r['dataset']]} | {r['model']} | {b} | {_fmt_params(r['params'])} "
            f"| {r['accuracy']:.2f} | {r['train_seconds']:.2f} | {r['predict_us_per_row']:.1f} "
            f"| {r['support']} | {r['model_bytes'] / 1024:.0f} | {r['pickle_bytes'] / 1024:.0f} |"
        )
    return lines


def grid_table(results, budget=None, stream=False, value="accuracy", fmt="{:.1f}"):
    """RST grid of one measured value: models (of one protocol) x data sets.

    With ``budget`` None, a column per data set and budget; else the
    columns of that budget alone (and the SVC's).
    """
    by = _by(results)
    datasets = [d for d in DATASETS if any(r["dataset"] == d for r in results)]
    budgets = sorted({r["budget"] for r in results if r["budget"] is not None})
    budgets = budgets if budget is None else [budget]
    models = [
        m
        for m in MODELS
        if m.endswith(STREAM) == stream
        and any(r["model"] == m and r[value] is not None for r in results)
    ]
    head = [DATASETS[d] if budget else f"{DATASETS[d]} {B}" for d in datasets for B in budgets]
    rows = [["model", *head]]
    for m in models:
        cells = []
        for d in datasets:
            for B in budgets:
                r = by.get((d, m, None if m == "SVC" else B))
                cells.append(
                    "" if r is None else fmt(r[value]) if callable(fmt) else fmt.format(r[value])
                )
        rows.append([m, *cells])
    return _rst_grid(rows)


def _rst_grid(rows):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    rule = " ".join("=" * w for w in widths)
    fmt = [" ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return [rule, fmt[0], rule, *fmt[1:], rule]


def against_reference(results, names):
    """Per model ``names``: accuracy minus the reference's in every cell."""
    by = _by(results)
    out = {}
    for name in [m for m in names if any(r["model"] == m for r in results)]:
        diffs = {}
        for (ds, m, B), r in by.items():
            ref = by.get((ds, REFERENCE, B))
            if m == name and ref is not None:
                diffs[(ds, B)] = r["accuracy"] - ref["accuracy"]
        if diffs:
            out[name] = diffs
    return out


def summary(results, names):
    """Plain statements: each of ``names`` against the reference, cell by cell."""
    lines = []
    cmp = against_reference(results, names)
    ranked = sorted(
        cmp, key=lambda m: (sum(d < 0 for d in cmp[m].values()), -np.mean(list(cmp[m].values())))
    )
    for name in ranked:
        diffs = cmp[name]
        short = {k: d for k, d in diffs.items() if d < 0}
        text = ", ".join(
            f"{ds} B={B} ({d:+.1f})" for (ds, B), d in sorted(short.items(), key=lambda kv: kv[1])
        )
        lines.append(
            f"- **{name}**: at least as accurate as {REFERENCE} in {len(diffs) - len(short)} of "
            f"{len(diffs)} cells, mean difference {np.mean(list(diffs.values())):+.2f} points; "
            f"short in: {text or 'none'}."
        )
    return lines


def report(results, config):
    seconds = config.get("seconds")
    lines = [
        "# Budgeted estimators at their defaults against the alternatives",
        "",
        f"Seed {config.get('seed', 0)}. Ours: defaults, only budget, gamma and random_state given. Alternatives tuned on "
        "the last 20% of the shuffled training rows, refit on all; grids: "
        + "; ".join(
            f"{m}: " + " x ".join(f"{p.split('__')[-1]} in {list(g)}" for p, g in grid.items())
            for m, grid in GRIDS.items()
        )
        + f" (the SVC beyond {SVC_TUNE_MAX} training rows is fit once with C = 1). "
        "BLAS on one thread; times measured on a shared 2-core machine.",
        "",
        *table(results),
        "",
        *[
            line
            for B in config.get("budgets", [])
            for value, title, fmt in (
                ("accuracy", "test accuracy (%)", "{:.1f}"),
                ("train_seconds", "fit time (s)", _sig),
                ("predict_us_per_row", "prediction time per test row (us)", _sig),
                ("model_bytes", "model (KiB of float64 numbers predicting needs)", "{:.0f}"),
                ("pickle_bytes", "pickled model (KiB)", "{:.0f}"),
            )
            for line in (
                f"## Budget {B}: {title}",
                "",
                *grid_table(
                    results if not value.endswith("bytes") else _kib(results),
                    B,
                    value=value,
                    fmt=fmt,
                ),
                "",
            )
        ],
        f"## Against {REFERENCE} at equal memory (points of test accuracy)",
        "",
        *summary(results, OURS),
        "",
        "## The stream protocol: one pass of partial_fit (chunks of "
        f"{CHUNK} rows), test accuracy (%)",
        "",
        *grid_table(results, stream=True),
        "",
        "Online error (%) of that pass, each row predicted before it was learned:",
        "",
        *grid_table(results, stream=True, value="online_error"),
        "",
        "Fit time (s) of that pass:",
        "",
        *grid_table(results, stream=True, value="train_seconds", fmt=_sig),
        "",
        f"Against {REFERENCE} (fit on all the rows) at equal memory:",
        "",
        *summary(results, STREAMED),
        "",
        f"Wall time {seconds if seconds is None else round(seconds)} s; load average (1 min) "
        f"{config.get('load_before')} at the start, {config.get('load_after')} at the end.",
    ]
    return "\n".join(lines) + "\n"


def figures(results, prefix):
    """``prefix``_memory.png and ``prefix``_time.png: accuracy against bytes and fit time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    datasets = [d for d in DATASETS if any(r["dataset"] == d for r in results)]
    models = [m for m in MODELS if not m.endswith(STREAM) and any(r["model"] == m for r in results)]
    budgets = sorted({r["budget"] for r in results if r["budget"] is not None})
    cmap = plt.get_cmap("tab20")
    styles = {}
    for i, m in enumerate(models):
        if m in OURS:
            styles[m] = dict(color=cmap(i % 20), marker="os^vD<>phX*"[i % 11], linestyle="-")
        else:  # the alternatives stand out: black and grey, dashed
            color = {"Nystroem + SGD": "k", "RBFSampler + SGD": "0.5", "SVC": "r"}[m]
            styles[m] = dict(color=color, marker="s", linestyle="--", linewidth=2)
    for key, xlabel, suffix in (
        ("model_bytes", "model (KiB)", "memory"),
        ("train_seconds", "fit time (s)", "time"),
    ):
        ncols = min(3, len(datasets))
        nrows = -(-len(datasets) // ncols)
        fig, axes = plt.subplots(
            nrows, ncols, figsize=(4.3 * ncols + 2.6, 3.4 * nrows), squeeze=False
        )
        for ax, ds in zip(axes.flat, datasets):
            accs = []
            for m in models:
                rows = sorted(
                    (r for r in results if r["dataset"] == ds and r["model"] == m),
                    key=lambda r: r["budget"] or 0,
                )
                if not rows:
                    continue
                xs = [r[key] / (1024 if key == "model_bytes" else 1) for r in rows]
                ys = [r["accuracy"] for r in rows]
                accs += ys
                ax.plot(xs, ys, label=m, markersize=5, **styles[m])
            # A model far below the others would squash them: clip and say so.
            accs = sorted(accs)
            bottom = max(accs[0], accs[-1] - 2.5 * (accs[-1] - accs[len(accs) // 2]) - 1)
            low = sorted(
                {
                    r["model"]
                    for r in results
                    if r["dataset"] == ds and r["model"] in models and r["accuracy"] < bottom
                }
            )
            ax.set_ylim(bottom, accs[-1] + 0.15 * (accs[-1] - bottom) + 0.1)
            if low:
                ax.text(0.02, 0.02, "off the bottom: " + ", ".join(low), transform=ax.transAxes,
                        va="bottom", fontsize="xx-small", wrap=True)  # fmt: skip
            ax.set_title(DATASETS[ds], fontsize="medium")
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.grid(alpha=0.3, which="both")
        for ax in axes.flat[len(datasets) :]:
            ax.set_visible(False)
        for ax in axes[-1]:
            ax.set_xlabel(xlabel)
        for ax in axes[:, 0]:
            ax.set_ylabel("test accuracy (%)")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="center right", fontsize="small")
        fig.suptitle(
            f"Test accuracy against {xlabel.split(' (')[0]}; lines join budgets "
            + ", ".join(str(b) for b in budgets)
            + " (SVC: one point, unbounded)",
            fontsize="medium",
        )
        fig.tight_layout(rect=(0, 0, 1 - 2.5 / fig.get_figwidth(), 1))
        fig.savefig(f"{prefix}_{suffix}.png", dpi=80)
        plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="300 rows a set: a smoke run")
    parser.add_argument(
        "--datasets", default=",".join(DATASETS), help="among " + ",".join(DATASETS)
    )
    parser.add_argument("--budgets", default="100,500")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seeds the split (Banana, Waveform, MNIST), the shuffle and every random_state",
    )
    parser.add_argument("--models", default=",".join(MODELS), help="among " + ",".join(MODELS))
    parser.add_argument("--json", help="append each result to this JSON file as it is measured")
    parser.add_argument("--resume", action="store_true", help="skip the settings --json holds")
    parser.add_argument("--max-minutes", type=float, help="start no fit after this long")
    parser.add_argument(
        "--from-json", help="write the report and figures of this JSON file instead of running"
    )
    parser.add_argument("--out", help="write the markdown report to this file")
    parser.add_argument(
        "--figures", help="write PREFIX_memory.png and PREFIX_time.png (needs matplotlib)"
    )
    args = parser.parse_args(argv)
    datasets = [d for d in args.datasets.split(",") if d]
    models = [m for m in args.models.split(",") if m]
    for d in datasets:
        if d not in DATASETS:
            parser.error(f"unknown data set {d!r}; choose among {', '.join(DATASETS)}")
    for m in models:
        if m not in MODELS:
            parser.error(f"unknown model {m!r}; choose among {', '.join(MODELS)}")
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        write_outputs(saved["results"], saved["config"], args)
        return 0
    results = []
    if args.resume and args.json and Path(args.json).exists():
        results = json.loads(Path(args.json).read_text())["results"]
    done = {(r["dataset"], r["model"], r["budget"]) for r in results}
    todo = [s for s in settings(datasets, budgets, models) if s not in done]
    config = dict(quick=args.quick, budgets=budgets, seed=args.seed, load_before=os.getloadavg()[0])
    if args.json:
        save(args.json, results, config)
    tic = time.perf_counter()
    deadline = None if args.max_minutes is None else time.time() + 60 * args.max_minutes
    run(todo, args.quick, args.json, results, deadline, args.seed)
    config.update(seconds=time.perf_counter() - tic, load_after=os.getloadavg()[0])
    if args.json:
        save(args.json, results, config)
    write_outputs(results, config, args)
    return 0


def write_outputs(results, config, args):
    for r in results:  # the sizes as this version of the script counts them
        r["model_bytes"] = model_bytes(r)
    text = report(results, config)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if args.figures:
        figures(results, args.figures)


if __name__ == "__main__":
    sys.exit(main())
