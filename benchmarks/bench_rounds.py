"""Cost per round of every estimator: the current engine against the previous one.

Both engines are timed by this same script, each in a worker subprocess of its
own: the current package of the work tree ("new", ``PYTHONPATH`` = the
repository root) and the package as it was at ``--baseline-rev`` ("old",
default ``1d1d4e6``, the last pure-Python engine, unpacked with ``git archive``
into a temporary folder put on ``PYTHONPATH``). BLAS is pinned to one thread
in the workers.

Streams (one online pass with ``partial_fit``, first call passing ``classes``):

(a) ``make_two_gaussians(n_samples=10**6, random_state=0)``, 2-D, rbf gamma=1,
    in chunks of 10,000 rows. The old engine is timed on the first 10^5 rounds
    (``--old-rounds``); the unbounded KernelPerceptron and
    KernelPassiveAggressive run on the first 10^5 rounds only (their support
    set grows with the stream).
(b) the whole a9a training set (32,561 rows, sparse, 123 features), rbf
    gamma=0.02.
(c) the USPS training set (7,291 rows, dense, 256 features), digit 0 against
    the rest, rbf gamma=1/128.

For each estimator it reports rounds, seconds, microseconds and rounds per
second, the final support size and ``n_mistakes_``; for the new engine also the
"kernel work alone" (``pairwise_kernels`` of each chunk of 256 rows against a
snapshot of ``support_vectors_`` taken before the chunk, summed over the
stream; on the first 10^5 rounds of stream (a)), its share of the engine's
time, and the speed-up old/new on the rounds both engines ran. A memory table
gives, for every budget estimator, the growth of the new engine's peak resident
memory (and the ``tracemalloc`` peak) over the first 10^5 and over all 10^6
rounds of stream (a), each estimator in a worker of its own.

Run from the repository root::

    python benchmarks/bench_rounds.py                        # full run (~10 min)
    python benchmarks/bench_rounds.py --quick                # tiny sizes, seconds
    python benchmarks/bench_rounds.py --streams a --estimators Stoptron,Forgetron
    python benchmarks/bench_rounds.py --no-baseline          # new engine only, no git
    python benchmarks/bench_rounds.py --out rounds.md --json rounds.json
    python benchmarks/bench_rounds.py --average --no-baseline   # the bounded averages

``--average`` times and measures the budget estimators with ``average=True``
(the average within the budget): compare with a run without it for the
cost of the average per round.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

BUDGET = 100
UNBOUNDED = ("KernelPerceptron", "KernelPassiveAggressive")
ESTIMATORS = (
    "Stoptron",
    "Forgetron",
    "RandomizedBudgetPerceptron",
    "BudgetPerceptron",
    "TighterBudgetPerceptron",
    "Projectron",
    "ProjectronPlusPlus",
    "BudgetedSGDClassifier",
    *UNBOUNDED,
)
# Estimators the old engine does not have.
NEW_ONLY = ("BudgetedSGDClassifier",)
# Estimators whose average=True is the bounded average (they remove members).
REMOVAL = (
    "Forgetron",
    "RandomizedBudgetPerceptron",
    "BudgetPerceptron",
    "TighterBudgetPerceptron",
    "BudgetedSGDClassifier",
)

# eta of the Projectron and the Projectron++ on each stream, chosen so that |S|
# ends near the budget (100) of the other estimators. Measured once with the
# new engine over each full stream (|S| of Projectron / Projectron++):
# (a) eta 0.3: 133/133, 0.4: 111/108, 0.5: 98/96, 0.6: 86/81  -> 0.5
# (b) eta 0.3: 170/173, 0.35: 108/109, 0.36: 98/100, 0.37: 92/90, 0.4: 71/74  -> 0.36
# (c) eta 0.5: 105/105, 0.7: 100/104, 0.8: 76/85, 0.9: 46/43  -> 0.7
ETA = {"a": 0.5, "b": 0.36, "c": 0.7}

STREAMS = {
    "a": dict(title="two Gaussians (2-D)", gamma=1.0, gamma_text="1"),
    "b": dict(title="a9a train (123 sparse features)", gamma=0.02, gamma_text="0.02"),
    "c": dict(
        title="USPS train, 0 vs rest (256 dense features)", gamma=1 / 128, gamma_text="1/128"
    ),
}
CHUNK = 10_000  # rows per partial_fit call of the timed passes
KERNEL_CHUNK = 256  # rows per block of the kernel-work replay


def estimator_params(name, stream, average=False):
    """Constructor arguments (besides the kernel) of an estimator on a stream.

    ``average``: the budget estimators average (within the budget);
    otherwise every estimator returns its last hypothesis.
    """
    # The papers' algorithms unless asked (the defaults average, and bound
    # the Projectrons): the hypotheses the old engine timed.
    if name in ("Projectron", "ProjectronPlusPlus"):
        return {"eta": ETA[stream], "budget": None}
    if name in UNBOUNDED:
        return {"average": False}
    params = {"budget": BUDGET, "average": average}
    if name in ("RandomizedBudgetPerceptron", "BudgetedSGDClassifier"):
        params["random_state"] = 0
    if name == "BudgetedSGDClassifier":
        # Projection takes the sparse stream (b); merging needs dense rows.
        params["maintenance"] = "projection"
    return params


def label(name, stream, average=False):
    if name in ("Projectron", "ProjectronPlusPlus"):
        return f"{name}(eta={ETA[stream]})"
    if average and name not in UNBOUNDED:
        return f"{name}(average=True)"
    return name


# ---------------------------------------------------------------- sizes


def sizes(args):
    """Rounds of every stream and prefix, from the options."""
    if args.quick:
        return dict(
            n_a=2_000,
            n_b=2_000,
            n_c=1_000,
            old_rounds=1_000,
            unbounded_rounds=2_000,
            kernel_rounds=2_000,
            mem_prefix=200,
        )
    return dict(
        n_a=10**6,
        n_b=None,  # all 32,561 rows
        n_c=None,  # all 7,291 rows
        old_rounds=args.old_rounds,
        unbounded_rounds=args.unbounded_rounds,
        kernel_rounds=args.kernel_rounds,
        mem_prefix=10**5,
    )


# ---------------------------------------------------------------- workers


def _save(path, X, y):
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X)
        np.savez(
            path, sparse=True, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y
        )
    else:
        np.savez(path, sparse=False, X=np.ascontiguousarray(X), y=y)


def _load(path):
    import scipy.sparse as sp

    with np.load(path) as f:
        if bool(f["sparse"]):
            X = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
        else:
            X = f["X"]
        return X, f["y"]


def _make_data(stream, n):
    """The stream's rows, from the package of the new engine (local data only)."""
    from _data import a9a, synthetic, usps

    if stream == "a":
        return synthetic(n_samples=n, random_state=0)
    if stream == "b":
        return a9a(n)
    return usps(n)


def _bounds(n, chunk, checkpoints=()):
    """Chunk boundaries of a pass over n rows, with the checkpoints as boundaries too."""
    cuts = set(range(0, n, chunk)) | {c for c in checkpoints if 0 < c < n}
    return sorted(cuts) + [n]


def _n_support(est):
    sv = getattr(est, "support_vectors_", None)
    return 0 if sv is None else int(sv.shape[0])


def _timed_pass(est, X, y, classes, n, chunk, checkpoints):
    """One pass over the first n rows; seconds and state at the end and at each checkpoint."""
    bounds = _bounds(n, chunk, checkpoints)
    marks = {}
    tic = time.perf_counter()
    for i, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
        if i == 0:
            est.partial_fit(X[start:stop], y[start:stop], classes=classes)
        else:
            est.partial_fit(X[start:stop], y[start:stop])
        if stop in checkpoints:
            seconds = time.perf_counter() - tic
            marks[stop] = dict(
                rounds=stop,
                seconds=seconds,
                support_size=_n_support(est),
                n_mistakes=int(est.n_mistakes_),
            )
    seconds = time.perf_counter() - tic
    return dict(
        rounds=n,
        seconds=seconds,
        us_per_round=1e6 * seconds / n,
        rounds_per_second=n / seconds,
        support_size=_n_support(est),
        n_mistakes=int(est.n_mistakes_),
        prefixes={str(k): v for k, v in marks.items()},
    )


def _kernel_work(est, X, y, classes, n, gamma):
    """Replay in chunks of 256; time the chunk-against-support kernel blocks alone."""
    from sklearn.metrics.pairwise import pairwise_kernels

    seconds = 0.0
    for start in range(0, n, KERNEL_CHUNK):
        stop = min(start + KERNEL_CHUNK, n)
        Xc, yc = X[start:stop], y[start:stop]
        if _n_support(est):
            sv = est.support_vectors_.copy()  # the snapshot, outside the timed region
            tic = time.perf_counter()
            pairwise_kernels(Xc, sv, metric="rbf", gamma=gamma)
            seconds += time.perf_counter() - tic
        if start == 0:
            est.partial_fit(Xc, yc, classes=classes)
        else:
            est.partial_fit(Xc, yc)
    return dict(rounds=n, seconds=seconds, us_per_round=1e6 * seconds / n)


def _best_of(run, spec):
    """The fastest of repeated runs (each on a fresh estimator): short passes are noisy.

    Runs again until ``min_time`` seconds were spent or ``repeat`` runs were made.
    """
    best, spent, runs = None, 0.0, 0
    while runs < max(1, spec.get("repeat", 1)):
        tic = time.perf_counter()
        res = run()
        spent += time.perf_counter() - tic
        runs += 1
        if best is None or res["seconds"] < best["seconds"]:
            best = res
        if spent >= spec.get("min_time", 0.0):
            break
    best["runs"] = runs
    return best


def _proc_status_kb(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss():
    """Reset the kernel's high-water mark of the resident set (Linux); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _import_engine(engine, expected_dir):
    """Import sklearn_budget and check that it is the intended engine."""
    if engine == "old":
        # The repository root (inserted above) must not shadow the old package.
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
    import sklearn_budget

    where = Path(sklearn_budget.__file__).resolve().parent
    if where.parent != Path(expected_dir).resolve():
        raise RuntimeError(f"{engine} engine imported from {where}, expected {expected_dir}")
    return sklearn_budget


def _fingerprint(package):
    """A short hash of the package's source and compiled files: which engine was timed."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted(package.rglob("*")):
        if f.suffix in (".py", ".pyx", ".so", ".pyd") and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(package)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def worker(engine, spec):
    """Run one worker's share of the benchmark; return JSON-able results."""
    from threadpoolctl import threadpool_limits

    sb = _import_engine(engine, spec["package_dir"])
    info = dict(
        engine=engine,
        package=str(Path(sb.__file__).resolve().parent),
        compiled="sklearn_budget._engine" in sys.modules,
        fingerprint=_fingerprint(Path(sb.__file__).resolve().parent),
    )
    stream = spec["stream"]
    gamma = STREAMS[stream]["gamma"]
    if engine == "data":
        X, y = _make_data(stream, spec["n_rows"])
        _save(spec["data"], X, y)
        return dict(info=info, rows=int(X.shape[0]))
    X, y = _load(spec["data"])
    classes = np.unique(y)

    average = spec.get("average", False)

    def make(name):
        params = estimator_params(name, stream, average)
        return getattr(sb, name)(kernel="rbf", gamma=gamma, **params)

    out = dict(info=info, results={})
    with threadpool_limits(1):
        if engine == "mem":
            import tracemalloc

            name = spec["estimator"]
            n, prefix = spec["rounds"], spec["prefix"]
            est = make(name)
            bounds = _bounds(n, CHUNK, (prefix,))
            rss0 = _proc_status_kb("VmRSS")
            resettable = _reset_peak_rss()
            tracemalloc.start()
            marks = {}
            for i, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
                kw = {"classes": classes} if i == 0 else {}
                est.partial_fit(X[start:stop], y[start:stop], **kw)
                if stop in (prefix, n):
                    hwm = _proc_status_kb("VmHWM") if resettable else None
                    marks[str(stop)] = dict(
                        rounds=stop,
                        peak_rss_growth_kb=None if hwm is None or rss0 is None else hwm - rss0,
                        tracemalloc_peak_kb=tracemalloc.get_traced_memory()[1] / 1024,
                        support_size=_n_support(est),
                    )
            tracemalloc.stop()
            out["results"][name] = marks
            return out
        # Warm-up: first calls (lazy imports, first-use set-up) are not timed.
        for name in spec["estimators"]:
            make(name).partial_fit(X[:64], y[:64], classes=classes)
        for name in spec["estimators"]:
            n = spec["rounds"][name]
            print(
                f"  [{engine}] {stream} {label(name, stream, average)}: {n} rounds",
                file=sys.stderr,
                flush=True,
            )
            checkpoints = spec.get("checkpoints", ())
            res = _best_of(
                lambda: _timed_pass(make(name), X, y, classes, n, CHUNK, checkpoints), spec
            )
            if spec.get("kernel_rounds"):
                nk = min(n, spec["kernel_rounds"])
                res["kernel"] = _best_of(
                    lambda: _kernel_work(make(name), X, y, classes, nk, gamma), spec
                )
            out["results"][name] = res
    return out


def run_worker(engine, spec, pythonpath, tmp):
    """Run this script as a worker subprocess; its results from the JSON it prints."""
    spec_file = Path(tmp) / f"spec-{engine}-{spec['stream']}-{spec.get('estimator', 'all')}.json"
    spec_file.write_text(json.dumps(spec))
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        engine,
        "--spec",
        str(spec_file),
    ]
    proc = subprocess.run(cmd, env=env, cwd=str(ROOT), stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{engine} worker on stream {spec['stream']} failed (exit {proc.returncode})"
        )
    return json.loads(proc.stdout)


# ---------------------------------------------------------------- parent


def old_engine(rev, tmp):
    """Unpack sklearn_budget at rev into tmp/old; the folder to put on PYTHONPATH."""
    dest = Path(tmp) / "old"
    dest.mkdir()
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    archive = subprocess.Popen(
        ["git", "-C", str(ROOT), "archive", rev, "sklearn_budget"], stdout=subprocess.PIPE
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {rev} failed")
    return dest, sha


def stream_rounds(stream, names, n_rows, size):
    """Rounds of each estimator on a stream: (new engine, old engine)."""
    new, old = {}, {}
    for name in names:
        n = n_rows
        if stream == "a" and name in UNBOUNDED:
            n = min(n, size["unbounded_rounds"])
        new[name] = n
        old[name] = min(n, size["old_rounds"]) if stream == "a" else n
    return new, old


def fmt(x, spec=".2f"):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return format(x, spec)


def count(n):
    if n >= 10**4 and n % 10**4 == 0:
        exp = int(round(math.log10(n)))
        if 10**exp == n:
            return f"10^{exp}"
    return f"{n:,}"


def report(data):
    """The markdown report of the collected results."""
    cfg = data["config"]
    lines = ["# Cost per round: new engine against the old one", ""]
    new_info = data.get("engines", {}).get("new", {})
    old_info = data.get("engines", {}).get("old")
    lines.append(
        f"New engine: work tree ({'compiled' if new_info.get('compiled') else 'pure Python'}, "
        f"package files hash {new_info.get('fingerprint', '-')}). "
        + (
            f"Old engine: revision {cfg['baseline_rev']} ({cfg['baseline_sha']}, "
            f"{'compiled' if old_info and old_info.get('compiled') else 'pure Python'})."
            if cfg["baseline"]
            else "Old engine: not run (--no-baseline)."
        )
    )
    lines.append(
        "Each engine in a worker process of its own, BLAS pinned to one thread; "
        f"rbf kernel; budget {BUDGET}; `partial_fit` in chunks of {CHUNK:,} rows."
        + (
            f" Each pass is run up to {cfg['repeat']} times on a fresh estimator, until "
            f"{cfg['min_time']:g} s were spent, and the fastest run is reported."
            if cfg["repeat"] > 1
            else ""
        )
        + (" Quick run: tiny sizes, not representative." if cfg["quick"] else "")
        + (
            " The budget estimators average (`average=True`, within the budget)."
            if cfg.get("average")
            else ""
        )
    )
    versions = sorted({h for _, h in data.get("new_engine_fingerprints", [])})
    if len(versions) > 1:
        lines.append("")
        lines.append(
            f"**Warning: the work tree's engine changed during the run** ({len(versions)} "
            "versions: "
            + "; ".join(
                f"{h}: " + ", ".join(w for w, v in data["new_engine_fingerprints"] if v == h)
                for h in versions
            )
            + "). The tables mix them."
        )
    lines.append("")
    for stream in cfg["streams"]:
        sinfo = STREAMS[stream]
        rows = [r for r in data["results"] if r["stream"] == stream]
        if not rows:
            continue
        n_full = max(r["new"]["rounds"] for r in rows)
        lines.append(
            f"## Stream ({stream}): {sinfo['title']}, rbf gamma={sinfo['gamma_text']}, "
            f"{count(n_full)} rounds"
        )
        lines.append("")
        notes = []
        if stream == "a":
            unb = [r for r in rows if r["estimator"] in UNBOUNDED]
            if unb:
                notes.append(
                    f"KernelPerceptron and KernelPassiveAggressive (unbounded) run on the first "
                    f"{count(unb[0]['new']['rounds'])} rounds only: their support set grows with "
                    "the stream."
                )
            olds = [r for r in rows if r.get("old")]
            if olds:
                notes.append(
                    f"The old engine is timed on a prefix: the first "
                    f"{count(olds[0]['old']['rounds'])} rounds; its us/round is over that prefix, "
                    "and the speed-up compares it with the new engine's time over the same prefix."
                )
            kr = [r["kernel"]["rounds"] for r in rows if r.get("kernel")]
            if kr and min(kr) < n_full:
                notes.append(
                    f"Kernel work measured on the first {count(min(kr))} rounds and scaled per "
                    "round."
                )
        proj = [r for r in rows if r["estimator"] in ("Projectron", "ProjectronPlusPlus")]
        if proj:
            notes.append(
                f"Projectron eta = {ETA[stream]} on this stream (chosen so that |S| ends near "
                f"{BUDGET} on the full stream)."
            )
        notes.append(
            f"Kernel share = time of `pairwise_kernels` of each {KERNEL_CHUNK}-row chunk against "
            "a snapshot of the support set taken before the chunk, per round / new engine's time "
            "per round; new/kernel-work is its inverse. `pairwise_kernels` includes scikit-learn's "
            "input checks on every call: on small blocks (few features, small support set) they "
            "dominate, and a share above 100% means the engine does the whole round faster than "
            "that call computes its kernel values."
        )
        lines += [f"- {n}" for n in notes] + [""]
        lines.append(
            "| estimator | rounds | \\|S\\| | mistakes | new us/round | new rounds/s "
            "| kernel share | new/kernel-work | old us/round | old rounds | speed-up |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        mismatch = []
        for r in rows:
            new, old, ker = r["new"], r.get("old"), r.get("kernel")
            share = ker["us_per_round"] / new["us_per_round"] if ker else None
            inv = new["us_per_round"] / ker["us_per_round"] if ker and ker["seconds"] else None
            lines.append(
                f"| {r['label']} | {new['rounds']:,} | {new['support_size']} | "
                f"{new['n_mistakes']:,} | {fmt(new['us_per_round'])} | "
                f"{fmt(new['rounds_per_second'], ',.0f')} | "
                f"{fmt(None if share is None else 100 * share, '.0f')}% | {fmt(inv, '.1f')}x | "
                f"{fmt(old['us_per_round'] if old else None)} | "
                f"{'-' if not old else format(old['rounds'], ',')} | "
                f"{fmt(r.get('speedup'), '.1f')}{'x' if r.get('speedup') else ''} |"
            )
            if old and r.get("same_mistakes_on_prefix") is False:
                mismatch.append(r["label"])
        if any(r.get("old") for r in rows):
            lines.append("")
            lines.append(
                "Old and new engines made the same number of mistakes and kept the same |S| on "
                "the rounds both ran: "
                + ("yes for all." if not mismatch else "no for " + ", ".join(mismatch) + ".")
            )
        lines.append("")
    if data.get("memory"):
        mem = data["memory"]
        p, n = mem["prefix"], mem["rounds"]
        lines.append(
            f"## Peak memory of the new engine, stream (a): {count(p)} vs {count(n)} rounds"
        )
        lines.append("")
        lines.append(
            "Growth of the worker's peak resident set (VmHWM, reset just before the "
            "`partial_fit` loop, minus VmRSS then) and `tracemalloc` peak during the loop, "
            f"over the first {count(p)} rounds and over all {count(n)}; one worker per estimator."
        )
        lines.append("")
        lines.append(
            f"| estimator | \\|S\\| at {count(p)} / {count(n)} | peak RSS growth {count(p)} (KiB) | "
            f"peak RSS growth {count(n)} (KiB) | tracemalloc peak {count(p)} (KiB) | "
            f"tracemalloc peak {count(n)} (KiB) |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|")
        for name, m in mem["results"].items():
            a, b = m.get(str(p), {}), m.get(str(n), {})
            lines.append(
                f"| {label(name, 'a', cfg.get('average'))} | {a.get('support_size', '-')} / "
                f"{b.get('support_size', '-')} | "
                f"{fmt(a.get('peak_rss_growth_kb'), ',.0f')} | "
                f"{fmt(b.get('peak_rss_growth_kb'), ',.0f')} | "
                f"{fmt(a.get('tracemalloc_peak_kb'), ',.0f')} | "
                f"{fmt(b.get('tracemalloc_peak_kb'), ',.0f')} |"
            )
        lines.append("")
    if data.get("errors"):
        lines.append("## Not measured")
        lines.append("")
        lines += [f"- {e}" for e in data["errors"]] + [""]
    lines.append(f"Total wall time of the benchmark: {data['total_seconds']:.0f} s.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--streams", default="a,b,c", help="streams to run, among a,b,c")
    parser.add_argument(
        "--estimators", default=",".join(ESTIMATORS), help="comma-separated estimator names"
    )
    parser.add_argument("--baseline-rev", default="1d1d4e6", help="git revision of the old engine")
    parser.add_argument("--no-baseline", action="store_true", help="skip the old engine")
    parser.add_argument(
        "--old-rounds", type=int, default=100_000, help="old engine's prefix on stream (a)"
    )
    parser.add_argument(
        "--unbounded-rounds",
        type=int,
        default=100_000,
        help="prefix of stream (a) for KernelPerceptron and KernelPassiveAggressive",
    )
    parser.add_argument(
        "--kernel-rounds", type=int, default=100_000, help="prefix of the kernel-work replay"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="at most this many runs of a pass (fastest reported), until --min-time is spent",
    )
    parser.add_argument(
        "--min-time", type=float, default=2.0, help="seconds to spend repeating a short pass"
    )
    parser.add_argument(
        "--average",
        action="store_true",
        help="the budget estimators average (average=True: within the budget); no old engine",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory table")
    parser.add_argument("--out", help="also write the markdown report to this file")
    parser.add_argument("--json", help="write the raw numbers to this JSON file")
    parser.add_argument("--worker", choices=["data", "new", "old", "mem"], help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        spec = json.loads(Path(args.spec).read_text())
        json.dump(worker(args.worker, spec), sys.stdout)
        return 0

    streams = [s for s in args.streams.split(",") if s]
    names = [e for e in args.estimators.split(",") if e]
    for s in streams:
        if s not in STREAMS:
            parser.error(f"unknown stream {s!r}")
    for e in names:
        if e not in ESTIMATORS:
            parser.error(f"unknown estimator {e!r}; choose among {', '.join(ESTIMATORS)}")
    size = sizes(args)
    if args.quick:
        args.repeat = 1
    if args.average:
        # The old engine's average kept every member: nothing to compare with.
        args.no_baseline = True
    tic_all = time.perf_counter()
    data = dict(
        config=dict(
            quick=args.quick,
            streams=streams,
            estimators=names,
            baseline=not args.no_baseline,
            baseline_rev=args.baseline_rev,
            baseline_sha=None,
            eta=ETA,
            budget=BUDGET,
            average=args.average,
            chunk=CHUNK,
            kernel_chunk=KERNEL_CHUNK,
            sizes=size,
            repeat=args.repeat,
            min_time=args.min_time,
        ),
        engines={},
        results=[],
        memory=None,
        errors=[],
    )
    with tempfile.TemporaryDirectory(prefix="bench_rounds_") as tmp:
        old_dir = None
        if not args.no_baseline:
            old_dir, data["config"]["baseline_sha"] = old_engine(args.baseline_rev, tmp)
        fingerprints = []  # (worker, hash of the work tree's package it imported)
        for stream in streams:
            data_file = str(Path(tmp) / f"stream-{stream}.npz")
            # A first worker loads the stream from the work tree's package (local data only)
            # and saves it, so that every engine is fed the same rows.
            print(f"stream ({stream}): loading", file=sys.stderr, flush=True)
            dspec = dict(
                stream=stream, data=data_file, n_rows=size["n_" + stream], package_dir=str(ROOT)
            )
            n_rows = run_worker("data", dspec, ROOT, tmp)["rows"]
            new_rounds, old_rounds = stream_rounds(stream, names, n_rows, size)
            spec = dict(
                stream=stream,
                estimators=names,
                data=data_file,
                package_dir=str(ROOT),
                rounds=new_rounds,
                checkpoints=sorted(set(old_rounds.values())),
                kernel_rounds=size["kernel_rounds"] if stream == "a" else n_rows,
                repeat=args.repeat,
                min_time=args.min_time,
                average=args.average,
            )
            print(f"stream ({stream}): new engine", file=sys.stderr, flush=True)
            try:
                new = run_worker("new", spec, ROOT, tmp)
            except RuntimeError as exc:
                data["errors"].append(f"new engine, stream ({stream}): {exc}")
                continue
            data["engines"]["new"] = new["info"]
            fingerprints.append(("stream " + stream, new["info"]["fingerprint"]))
            old = None
            if old_dir is not None:
                print(f"stream ({stream}): old engine", file=sys.stderr, flush=True)
                ospec = dict(
                    spec,
                    estimators=[e for e in names if e not in NEW_ONLY],
                    package_dir=str(old_dir),
                    rounds=old_rounds,
                    checkpoints=[],
                    kernel_rounds=0,
                )
                try:
                    old = run_worker("old", ospec, old_dir, tmp)
                    data["engines"]["old"] = old["info"]
                except RuntimeError as exc:
                    data["errors"].append(f"old engine, stream ({stream}): {exc}")
            for name in names:
                rnew = new["results"][name]
                row = dict(
                    stream=stream,
                    estimator=name,
                    label=label(name, stream, args.average),
                    params=estimator_params(name, stream, args.average),
                    new={k: v for k, v in rnew.items() if k != "kernel"},
                    kernel=rnew.get("kernel"),
                    old=None,
                    speedup=None,
                )
                if old is not None and name in old["results"]:
                    rold = old["results"][name]
                    row["old"] = {k: v for k, v in rold.items() if k != "prefixes"}
                    if rold["rounds"] == rnew["rounds"]:
                        same = rnew
                        new_seconds = rnew["seconds"]
                    else:
                        same = rnew["prefixes"][str(rold["rounds"])]
                        new_seconds = same["seconds"]
                    row["speedup"] = rold["seconds"] / new_seconds
                    row["same_mistakes_on_prefix"] = (
                        same["n_mistakes"] == rold["n_mistakes"]
                        and same["support_size"] == rold["support_size"]
                    )
                data["results"].append(row)
        budget_names = [e for e in names if e not in UNBOUNDED]
        if "a" in streams and budget_names and not args.no_memory:
            mem = dict(prefix=size["mem_prefix"], rounds=size["n_a"], results={})
            for name in budget_names:
                print(f"memory: {name}", file=sys.stderr, flush=True)
                mspec = dict(
                    stream="a",
                    estimator=name,
                    data=str(Path(tmp) / "stream-a.npz"),
                    package_dir=str(ROOT),
                    rounds=size["n_a"],
                    prefix=size["mem_prefix"],
                    average=args.average,
                )
                try:
                    mout = run_worker("mem", mspec, ROOT, tmp)
                except RuntimeError as exc:
                    data["errors"].append(f"memory, {name}: {exc}")
                    continue
                mem["results"][name] = mout["results"][name]
                fingerprints.append(("memory " + name, mout["info"]["fingerprint"]))
            data["memory"] = mem
    data["new_engine_fingerprints"] = fingerprints
    data["total_seconds"] = time.perf_counter() - tic_all
    text = report(data)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1))
    return 1 if any(not e.startswith("old engine") for e in data["errors"]) else 0


if __name__ == "__main__":
    sys.exit(main())
