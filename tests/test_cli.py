"""The command line: its parsers, the demo, and ``reproduce`` as a user runs it.

Errors, data homes and the output folder; the experiments themselves are
tested in ``test_reproduce.py``.
"""

import argparse
import errno
import hashlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.io import loadmat, savemat

import sklearn_budget
import sklearn_budget.datasets
from sklearn_budget import __main__ as cli
from sklearn_budget import reproduce as rp
from sklearn_budget.__main__ import demo, main
from sklearn_budget.datasets import _remote
from sklearn_budget.reproduce import _common, _registry


@pytest.fixture
def data_env(monkeypatch, data_home):
    # The experiments find the local data through the environment, as a user's.
    monkeypatch.setenv("SKLEARN_BUDGET_DATA", data_home)
    return data_home


def test_demo_reports_every_estimator():
    out = io.StringIO()
    demo(n_samples=600, n_test=300, budget=50, out=out)
    table, note = out.getvalue().split("\n\n")
    lines = table.splitlines()
    rows = {line.split(" (")[0].split()[0]: line.split() for line in lines[3:]}
    assert set(rows) == set(sklearn_budget.__all__)
    for name, fields in rows.items():
        acc = float(fields[-3])
        assert 0 < acc <= 100
        if name != "KernelMatchingPursuit":  # batch: no online mistakes, no average
            assert 0 < float(fields[-5]) < 60
            # The averaged hypothesis of the same pass.
            assert 0 < float(fields[-2]) <= 100
        if fields[-4] != "-":  # "-": no support set (a linear model)
            size = int(fields[-4])
            if "B=50" in " ".join(fields):
                assert size <= 50
    # The low accuracies of the Budget Perceptrons' last hypotheses are explained.
    assert "Budget" in note and "averaged" in note


def test_demo_prints_a_progress_line_per_estimator(monkeypatch):
    # The matching pursuit, whose fit keeps the n x n kernel matrix, is fitted
    # on the first DEMO_KMP_ROWS rows, and the table and the note say so.
    monkeypatch.setattr(cli, "DEMO_KMP_ROWS", 200)
    out, progress = io.StringIO(), io.StringIO()
    demo(n_samples=400, n_test=200, budget=30, out=out, progress=progress)
    lines = progress.getvalue().splitlines()
    n = len(sklearn_budget.__all__)
    assert len(lines) == n
    for i, line in enumerate(lines, start=1):
        assert re.fullmatch(rf"\[ ?{i}/{n}\] \w+( \(.*\))?: .+ \.\.\. \d+\.\d\d s", line), line
    (kmp,) = [line for line in lines if "KernelMatchingPursuit" in line]
    assert "KernelMatchingPursuit (B=30, 200 rows): batch fit ..." in kmp
    table, note = out.getvalue().split("\n\n")
    (row,) = [line for line in table.splitlines() if line.startswith("KernelMatchingPursuit")]
    assert "(B=30, 200 rows)" in row and int(row.split()[-4]) <= 30
    assert "first 200 training rows only" in note
    # No progress lines unless asked for; all the rows when fewer than DEMO_KMP_ROWS.
    out = io.StringIO()
    demo(n_samples=100, n_test=50, budget=10, out=out)
    assert "[ 1/" not in out.getvalue() and "rows only" not in out.getvalue()
    assert "KernelMatchingPursuit (B=10) " in out.getvalue()


def test_module_entry_point_runs_the_demo():
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_budget", "demo", "--n-samples", "300", "--budget", "20"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "ProjectronPlusPlus" in result.stdout
    # The progress lines go to stderr, the table to stdout.
    assert "ProjectronPlusPlus (U=" in result.stderr and "[14/14] Winnow" in result.stderr
    assert "..." not in result.stdout


def _actions(parser, path=("sklearn-budget",)):
    """Every action of ``parser`` and of its commands' parsers, with its parser's path."""
    for action in parser._actions:
        yield path, action
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:  # the commands' lines in the help
                yield path, choice
            for name, sub in action.choices.items():
                yield from _actions(sub, (*path, name))


def test_every_option_has_a_help_text():
    parser, commands = cli._parser()
    seen = set()
    for path, action in _actions(parser):
        name = " ".join(path) + " " + (action.option_strings or [action.dest])[0]
        assert action.help and action.help != argparse.SUPPRESS, f"{name} has no help text"
        seen.add(name)
    assert {"sklearn-budget reproduce --random-state", "sklearn-budget demo --budget"} <= seen
    assert set(commands) == {"reproduce", "demo"}


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            ["--out", "results"],
            "--out goes after the command: options belong to 'reproduce' (after its "
            "EXPERIMENT) or to 'demo'. Did you mean 'sklearn-budget reproduce "
            "projectron-synthetic --out results'?",
        ),
        (
            ["--n-jobs", "2", "reproduce", "weston-usps"],
            "Did you mean 'sklearn-budget reproduce weston-usps --n-jobs 2'?",
        ),
        (["--budget", "20", "demo"], "Did you mean 'sklearn-budget demo --budget 20'?"),
        (["--n-jobs", "2", "demo"], "--n-jobs is an option of 'reproduce', not of 'demo'."),
        (["--nope"], "unrecognized arguments: --nope: neither 'reproduce' nor 'demo' has it."),
        (["demo", "--out", "x"], "sklearn-budget demo: error: unrecognized arguments: --out x"),
        (
            ["reproduce", "--nope"],
            "sklearn-budget reproduce: error: unrecognized arguments: --nope",
        ),
    ],
)
def test_misplaced_options_say_where_they_go(argv, says, capsys, no_experiment):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert says in " ".join(err.split()), err
    assert not no_experiment


def test_reproduce_command_line_quick(tmp_path):
    # The installed entry point, as a user runs it, with two workers.
    result = subprocess.run(
        [
            sys.executable, "-m", "sklearn_budget", "reproduce", "projectron-synthetic",
            "--quick", "--out", str(tmp_path), "--n-jobs", "2",
        ],
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    assert "| Projectron++ | 200 |" in result.stdout
    assert "[projectron-synthetic] 24/24 runs" in result.stderr
    assert (tmp_path / "projectron-synthetic.md").is_file()
    assert len(list(tmp_path.glob("projectron-synthetic_fig*.png"))) == 3


def test_reproduce_rejects_unknown_experiments(tmp_path, capsys):
    with pytest.raises(ValueError, match="Unknown experiment 'nope'"):
        rp.reproduce("nope", out=tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "nope"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["reproduce"]])
def test_without_arguments_the_main_job_runs_on_its_default(argv, monkeypatch):
    # 'sklearn-budget' and 'sklearn-budget reproduce' both run the main job.
    calls = []
    monkeypatch.setattr(rp, "reproduce", lambda name, **kw: calls.append((name, kw)) or ("", []))
    assert main(argv) == 0
    assert calls == [
        (
            "projectron-synthetic",
            dict(
                quick=False,
                out="sklearn-budget-results",
                n_jobs=1,
                random_state=0,
                data_home=None,
                progress=sys.stderr,
            ),
        )
    ]


def test_missing_data_is_a_clear_command_line_error(tmp_path, capsys):
    # An empty data home and no network (the suite's guard): one line naming the
    # data home, exit status 1, no traceback.
    empty = tmp_path / "empty"
    status = main(["reproduce", "weston-banana", "--quick", "--silent", "--data-home", str(empty),
                   "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith("sklearn-budget: error:") and str(empty) in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()
    assert not empty.exists()  # the failed download cleaned up after itself


# The experiments that draw their own data.
NO_DATA = ("projectron-synthetic", "weston-toy-online", "weston-toy-batch")


def test_reproduce_all_reports_every_failure(tmp_path, capsys):
    out = tmp_path / "out"
    status = main(["reproduce", "all", "--quick", "--silent", "--out", str(out),
                   "--data-home", str(tmp_path / "empty")])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 1
    # The synthetic experiment needs no data: it ran, and the others were tried.
    assert (out / "projectron-synthetic.md").is_file()
    assert "9 of 12 experiments failed" in captured.err
    for name in rp.EXPERIMENTS:
        if name in NO_DATA:
            assert (out / f"{name}.md").is_file()
        else:
            assert f"sklearn-budget: error: {name}:" in captured.err


def test_bad_arguments_are_rejected(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "projectron-synthetic", "--n-jobs", "0"])
    assert exc.value.code == 2 and "0 workers" in capsys.readouterr().err
    with pytest.raises(ValueError, match="random_state must be an int"):
        rp.reproduce("projectron-synthetic", quick=True, out=tmp_path, random_state=None)
    assert not list(tmp_path.iterdir())


def test_data_home_option_reaches_the_loaders(tmp_path, data_home, monkeypatch):
    monkeypatch.delenv("SKLEARN_BUDGET_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no default data home either
    status = main(["reproduce", "weston-banana", "--quick", "--silent", "--data-home", data_home,
                   "--out", str(tmp_path / "out")])  # fmt: skip
    assert status == 0
    assert (tmp_path / "out" / "weston-banana.md").is_file()


# ---------------------------------------------------------------------------
# Damaged data on the command line: one error line each, no traceback


def _damaged_home(tmp_path, data_home):
    """A data home with a damaged copy of every file the experiments read."""
    home = tmp_path / "damaged"
    for filename in ("a9a", "usps", "banana", "waveform"):
        (home / filename).mkdir(parents=True)
    shared = Path(data_home)
    (home / "a9a/a9a").write_bytes(b"abc 3:1\n")  # a ValueError before
    train = (shared / "usps/zip.train.gz").read_bytes()
    (home / "usps/zip.train.gz").write_bytes(train[: len(train) // 2])  # an EOFError
    (home / "usps/zip.test.gz").write_bytes((shared / "usps/zip.test.gz").read_bytes())
    (home / "banana/banana.csv").write_bytes(b"X1,X2,Y\n")  # an IndexError
    target = loadmat(shared / "waveform/waveform.mat")["target"]
    savemat(home / "waveform/waveform.mat", {"target": target})  # a KeyError
    return home


DAMAGED = {
    "projectron-adult": "a9a/a9a",
    "weston-usps": "usps/zip.train.gz",
    "weston-banana": "banana/banana.csv",
    "weston-waveform": "waveform/waveform.mat",
}


def _error_lines(err):
    return [line for line in err.splitlines() if line.startswith("sklearn-budget: error:")]


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damaged_data_is_a_one_line_error(name, tmp_path, data_home, capsys):
    home = _damaged_home(tmp_path, data_home)
    path = home / DAMAGED[name]
    status = main(["reproduce", name, "--quick", "--silent", "--data-home", str(home),
                   "--out", str(tmp_path / "out")])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""
    assert "Traceback" not in captured.err
    (line,) = _error_lines(captured.err)
    assert line.startswith(f"sklearn-budget: error: {name}: The data file {path} does not match")
    assert hashlib.sha256(path.read_bytes()).hexdigest() in line
    assert not (tmp_path / "out").exists()


def test_malformed_data_matching_its_checksum_is_a_one_line_error(
    monkeypatch, tmp_path, data_home, capsys
):
    # A parse error reaches the command line as a checksum error does: give the
    # header-only file the checksum it has, as a wrong table entry would.
    home = _damaged_home(tmp_path, data_home)
    path = home / "banana/banana.csv"
    checksum = hashlib.sha256(path.read_bytes()).hexdigest()
    table = [
        r._replace(checksum=checksum) if r.filename == "banana/banana.csv" else r
        for r in _remote.REMOTE_FILES
    ]
    monkeypatch.setattr(_remote, "REMOTE_FILES", tuple(table))
    status = main(["reproduce", "weston-banana", "--quick", "--silent", "--data-home", str(home),
                   "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err
    assert _error_lines(err) == [
        f"sklearn-budget: error: weston-banana: Malformed data file {path}: no data rows. "
        "Delete it to download it again, or replace it with a good copy."
    ]


def test_reproduce_all_goes_on_past_damaged_data(tmp_path, data_home, capsys):
    home = _damaged_home(tmp_path, data_home)
    out = tmp_path / "out"
    status = main(["reproduce", "all", "--quick", "--silent", "--out", str(out),
                   "--data-home", str(home)])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 1 and "Traceback" not in captured.err
    assert (out / "projectron-synthetic.md").is_file()
    assert "9 of 12 experiments failed" in captured.err
    lines = _error_lines(captured.err)
    assert len(lines) == 9
    damaged = [*DAMAGED.items()]
    for name in ("weston-usps-noise", "weston-usps-epochs", "weston-error-sets"):
        damaged.append((name, DAMAGED["weston-usps"]))
    # bsgd-table3 reads all its data before running: Banana first.
    damaged.append(("bsgd-table3", DAMAGED["weston-banana"]))
    # forgetron-fig2 reads Adult (a9a and a9a.t), then MNIST.
    damaged.append(("forgetron-fig2", DAMAGED["projectron-adult"]))
    for name, filename in damaged:
        prefix = f"sklearn-budget: error: {name}: The data file {home / filename} does not"
        assert sum(line.startswith(prefix) for line in lines) == 1


# ---------------------------------------------------------------------------
# The output folder: checked before running, never written through links


@pytest.fixture
def no_experiment(monkeypatch):
    """Record the experiments started instead of running them."""
    calls = []
    monkeypatch.setattr(rp, "reproduce", lambda name, **kw: calls.append(name) or ("", []))
    return calls


def _bad_out(tmp_path, kind):
    a_file = tmp_path / "a_file"
    a_file.write_text("keep")
    if kind == "a file":
        return a_file, "exists and is not a folder"
    if kind == "under a file":
        return a_file / "out", f"cannot be made: {a_file} is not a folder"
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    return tmp_path / "link", "exists and is a broken symbolic link"


@pytest.mark.parametrize("kind", ["a file", "under a file", "a broken link"])
@pytest.mark.parametrize("experiment", ["weston-banana", "all"])
def test_out_is_checked_before_any_experiment(kind, experiment, tmp_path, no_experiment, capsys):
    out, reason = _bad_out(tmp_path, kind)
    status = main(["reproduce", experiment, "--quick", "--silent", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and no_experiment == []
    assert err == f"sklearn-budget: error: --out: the output folder {out} {reason}.\n"
    assert (tmp_path / "a_file").read_text() == "keep"


@pytest.mark.parametrize("exists", [True, False])
def test_unwritable_out_is_refused_before_running(
    exists, tmp_path, monkeypatch, no_experiment, capsys
):
    # As root, or on a read-only file system, permissions do not tell: the
    # check tries to make a file. Here that attempt fails.
    def refuse(**kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(_registry.tempfile, "TemporaryFile", refuse)
    out = tmp_path / "out" if exists else tmp_path / "new" / "out"
    if exists:
        out.mkdir()
    status = main(["reproduce", "all", "--quick", "--silent", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and no_experiment == []
    where = "is not writable" if exists else f"cannot be made in {tmp_path}"
    reason = f"the output folder {out} {where}: Permission denied."
    assert err == f"sklearn-budget: error: --out: {reason}\n"
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    "experiment, filename",
    [
        ("weston-banana", "weston-banana.md"),
        ("weston-banana", "weston-banana.json"),
        ("weston-banana", "weston-banana.png"),
        ("projectron-synthetic", "projectron-synthetic_fig3_error_vs_support.png"),
        ("all", "weston-usps-noise.json"),
    ],
)
@pytest.mark.parametrize("target_exists", [True, False])
def test_symlinked_output_files_are_refused(
    experiment, filename, target_exists, tmp_path, data_env, capsys
):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    if target_exists:
        victim.write_text("keep")
    (out / filename).symlink_to(victim)
    status = main(["reproduce", experiment, "--quick", "--silent", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith(
        f"sklearn-budget: error: --out: refusing to write {out / filename}: it is a symbolic "
        f"link (to {victim})"
    )
    assert len(err.splitlines()) == 1
    # Refused before running: nothing written, through the link or beside it.
    assert victim.read_text() == "keep" if target_exists else not victim.exists()
    assert sorted(p.name for p in out.iterdir()) == [filename]


def test_out_may_be_a_symlink_to_a_folder(tmp_path, data_env):
    # The user's own choice of folder, such as a link to scratch space.
    real = tmp_path / "scratch"
    real.mkdir()
    (tmp_path / "out").symlink_to(real)
    status = main(["reproduce", "weston-banana", "--quick", "--silent",
                   "--out", str(tmp_path / "out")])  # fmt: skip
    assert status == 0
    assert sorted(p.name for p in real.iterdir()) == sorted(rp.output_files("weston-banana"))


def test_output_writer_never_follows_links(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (out / "t.md").symlink_to(victim)
    with pytest.raises(OSError, match="is a symbolic link"):
        _common._write_output(out, "t.md", lambda f: f.write(b"new"))
    # A link made after the check (a race) is replaced, not written through.
    monkeypatch.setattr(_common, "_check_target", lambda path: None)
    path = _common._write_output(out, "t.md", lambda f: f.write(b"new"))
    assert victim.read_text() == "keep"
    assert not path.is_symlink() and path.read_bytes() == b"new"
    assert sorted(p.name for p in out.iterdir()) == ["t.md"]  # no temporary file left


def test_output_writer_leaves_nothing_on_failure_and_usual_modes(tmp_path):
    def fail(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        _common._write_output(tmp_path, "t.md", fail)
    assert list(tmp_path.iterdir()) == []
    path = _common._write_output(tmp_path, "t.md", lambda f: f.write(b"x"))
    if os.name == "posix":
        umask = os.umask(0o022)
        os.umask(umask)
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0o600
