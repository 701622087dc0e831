"""Smoke test of benchmarks/bench_rounds.py: a quick run of the new engine only, untimed."""

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ESTIMATORS = ["Stoptron", "Forgetron"]


def test_bench_rounds_quick(tmp_path):
    out = tmp_path / "rounds.json"
    md = tmp_path / "rounds.md"
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "bench_rounds.py"),
        "--quick",
        "--no-baseline",
        "--streams",
        "a",
        "--estimators",
        ",".join(ESTIMATORS),
        "--json",
        str(out),
        "--out",
        str(md),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]

    data = json.loads(out.read_text())
    rows = data["results"]
    assert [r["estimator"] for r in rows] == ESTIMATORS
    for r in rows:
        assert r["stream"] == "a"
        new = r["new"]
        assert new["rounds"] > 0
        assert 0 < new["support_size"] <= 100  # budget estimators
        assert 0 <= new["n_mistakes"] <= new["rounds"]
        for key in ("seconds", "us_per_round", "rounds_per_second"):
            assert math.isfinite(new[key]) and new[key] > 0
        kernel = r["kernel"]
        assert kernel["rounds"] > 0
        assert math.isfinite(kernel["seconds"]) and kernel["seconds"] >= 0
        assert r["old"] is None  # --no-baseline
    assert set(data["memory"]["results"]) == set(ESTIMATORS)
    assert not data["errors"]

    text = md.read_text()
    assert text.strip() == proc.stdout.strip()
    for name in ESTIMATORS:
        assert f"| {name} |" in text
