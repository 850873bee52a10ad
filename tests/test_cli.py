"""The command line as a shell sees it: one-line errors naming the problem (no tracebacks for
a user's mistake), exit 2 for usage errors and 1 for failed work, ``--version``, and usage text
that names the command as it was invoked (``ortc`` or ``python -m ortc``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import models
import ortc
from conftest import ROOT

ORTC = os.path.join(os.path.dirname(sys.executable), "ortc")   # the console script


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests"))
    env.pop("ORTC_LIBRARY", None)
    return env


def ortc_cmd(*args: str, module: bool = False, cwd: str | None = None
             ) -> subprocess.CompletedProcess[str]:
    exe = [sys.executable, "-m", "ortc"] if module else [ORTC]
    return subprocess.run([*exe, *args], capture_output=True, text=True, env=_env(),
                          cwd=cwd, timeout=120)


@pytest.fixture(scope="module")
def add_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("cli") / "add.onnx"
    path.write_bytes(models.add_model(np.float32, [3]))
    return str(path)


def one_line_error(proc: subprocess.CompletedProcess[str], code: int, start: str,
                   *words: str) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(start + ": error: "), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_console_script_exists() -> None:
    assert os.access(ORTC, os.X_OK), f"{ORTC}: pip install -e . makes it"


def test_version_flag() -> None:
    for module in (False, True):
        proc = ortc_cmd("--version", module=module)
        assert proc.returncode == 0 and proc.stdout == f"ortc {ortc.__version__}\n", proc


def test_usage_names_the_command_as_invoked() -> None:
    assert ortc_cmd("--help").stdout.startswith("usage: ortc [--version] [--verbose] COMMAND")
    assert ortc_cmd("help", module=True).stdout.startswith(
        "usage: python -m ortc [--version] [--verbose] COMMAND")
    for module in (False, True):  # no command: the usage on stderr, a usage error's status
        proc = ortc_cmd(module=module)
        assert proc.returncode == 2 and not proc.stdout, proc
        assert "[--version] [--verbose] COMMAND" in proc.stderr.splitlines()[0], proc.stderr
    proc = ortc_cmd("info", "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: ortc info "), proc.stdout
    proc = ortc_cmd("rules", "--help", module=True)
    assert proc.stdout.startswith("usage: python -m ortc rules "), proc.stdout


def test_usage_errors_exit_2_in_one_line(add_path: str, tmp_path: Path) -> None:
    one_line_error(ortc_cmd("info", "missing.onnx"), 2, "ortc info", "missing.onnx: no such file")
    one_line_error(ortc_cmd("info", str(tmp_path)), 2, "ortc info", "is a directory")
    one_line_error(ortc_cmd("info"), 2, "ortc info", "required: model")
    one_line_error(ortc_cmd("infoo"), 2, "ortc", "unknown command 'infoo'",
                   "did you mean 'info'?")
    one_line_error(ortc_cmd("run", add_path, "--input", "a"), 2, "ortc run", "NAME=FILE.npy")
    one_line_error(ortc_cmd("run", add_path, "--input", "a=none.npy"), 2, "ortc run",
                   "none.npy: no such file")
    np.save(tmp_path / "z.npy", np.ones(3, np.float32))
    one_line_error(ortc_cmd("run", add_path, "--input", f"z={tmp_path / 'z.npy'}"), 2,
                   "ortc run", "the model has no such input", "inputs: a, b")
    # found from outside: numpy's texts named neither the option nor the input, and exit 1
    one_line_error(ortc_cmd("run", add_path, "--seed", "-1"), 2, "ortc run",
                   "argument --seed: must be 0 or more, got -1")
    one_line_error(ortc_cmd("run", add_path, "--seed", "x"), 2, "ortc run",
                   "argument --seed: expected an integer of 0 or more, got 'x'")
    one_line_error(ortc_cmd("run", add_path, "--input", f"a={add_path}"), 2, "ortc run",
                   f"--input a: {add_path} is not a .npy file")
    np.save(tmp_path / "objects.npy", np.array([{"k": 1}], dtype=object), allow_pickle=True)
    one_line_error(ortc_cmd("run", add_path, "--input", f"a={tmp_path / 'objects.npy'}"), 2,
                   "ortc run", "is not a .npy file of one array of numbers, bools or text")
    seq = tmp_path / "seq.onnx"
    seq.write_bytes(models.sequence_identity_model())
    one_line_error(ortc_cmd("run", str(seq)), 2, "ortc run", "ortc run feeds tensors only",
                   "seq(tensor(float))")
    one_line_error(ortc_cmd("rules", "--format", "yaml"), 2, "ortc rules", "invalid choice")
    one_line_error(ortc_cmd("version", "--library", "typo"), 2, "ortc version",
                   "--library typo: cannot load library")
    one_line_error(ortc_cmd("conformance", "--bogus", module=True), 2,
                   "python -m ortc conformance", "unrecognized arguments: --bogus")
    # one mode's options given to the other were ignored (--list with --matrix downloaded)
    one_line_error(ortc_cmd("conformance", "--output", "x.md"), 2, "ortc conformance",
                   "--output goes with --matrix")
    one_line_error(ortc_cmd("conformance", "--coverage", "c.json"), 2, "ortc conformance",
                   "--coverage goes with --matrix")
    one_line_error(ortc_cmd("conformance", "--matrix", "1.20", "--list"), 2,
                   "ortc conformance", "--list lists the checks of one library")
    # options of one library were ignored by --matrix (it ran every check and exited 0)
    for option in (["--library", "/nonexistent"], ["--markdown", str(tmp_path / "x.md")],
                   ["--quiet"]):
        one_line_error(ortc_cmd("conformance", "--matrix", "1.19.2", *option), 2,
                       "ortc conformance", f"{option[0]} is not used with --matrix")
    assert not (tmp_path / "x.md").exists()
    # an empty version list wrote a table without columns and exited 0
    for spec in (",", " , ", ""):
        one_line_error(ortc_cmd("conformance", "--matrix", spec), 2, "ortc conformance",
                       "no version given")
    one_line_error(ortc_cmd("conformance", "--matrix", "1.19.2", "--only", "nosuch."), 2,
                   "ortc conformance", "--only nosuch.: no check matches")


def test_failed_work_exits_1_in_one_line(add_path: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    one_line_error(ortc_cmd("info", str(bad)), 1, "ortc info", "INVALID_PROTOBUF",
                   str(bad))
    np.save(tmp_path / "a64.npy", np.ones(3))   # float64 for a float input: ORT refuses
    one_line_error(ortc_cmd("run", add_path, "--input", f"a={tmp_path / 'a64.npy'}"), 1,
                   "ortc run", "input 'a'", "float64")
    # ORT's own message over several lines is one line too (nothing of it dropped)
    np.save(tmp_path / "a2.npy", np.ones(2, np.float32))   # [2] for a [3] input
    one_line_error(ortc_cmd("run", add_path, "--input", f"a={tmp_path / 'a2.npy'}"), 1,
                   "ortc run", "Got invalid dimensions for input: a", "index: 0 Got: 2 Expected: 3")


def test_commands_that_work(add_path: str, tmp_path: Path) -> None:
    proc = ortc_cmd("info", add_path)
    assert proc.returncode == 0 and "a: tensor(float) [3]" in proc.stdout, proc
    np.save(tmp_path / "a.npy", np.arange(3, dtype=np.float32))
    proc = ortc_cmd("run", add_path, "--input", f"a={tmp_path / 'a.npy'}")
    assert proc.returncode == 0 and proc.stdout.startswith("c = ["), proc
    proc = ortc_cmd("version")
    assert proc.returncode == 0 and proc.stdout.startswith(f"ortc {ortc.__version__}: "), proc
    assert "  build: ORT Build Info" in proc.stdout


@pytest.mark.parametrize("args", [("rules", "--format", "json"), ("--version",)])
def test_a_closed_pipe_is_not_an_error(args: tuple[str, ...]) -> None:
    # the reader closes its end before the command writes (`ortc ... | head -0`)
    proc = subprocess.Popen([ORTC, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(), text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0 and err == "", err


def test_one_exit_status_per_kind_of_failure_however_the_library_is_named(tmp_path: Path
                                                                           ) -> None:
    """The same missing library exited 2 through --library and 1 through ORTC_LIBRARY: a
    library that does not exist is a usage error (2) and one that exists but does not load
    failed work (1), for every command and both ways of naming it."""
    garbage = tmp_path / "garbage.so"
    garbage.write_bytes(b"\x7fELF garbage")
    for name, code in (("/no/such/libonnxruntime.so", 2), ("typo", 2), (str(tmp_path), 2),
                       (str(garbage), 1)):
        for command in ("version", "conformance"):
            extra = ["--only", "status."] if command == "conformance" else []
            by_option = ortc_cmd(command, "--library", name, *extra)
            env = dict(_env(), ORTC_LIBRARY=name)
            by_env = subprocess.run([ORTC, command, *extra], capture_output=True, text=True,
                                    env=env, timeout=120)
            for proc, how in ((by_option, f"--library {name}"), (by_env, f"ORTC_LIBRARY={name}")):
                one_line_error(proc, code, f"ortc {command}", how)


def test_verbose_gives_the_details_an_error_line_leaves_out(tmp_path: Path) -> None:
    """Errors are one line; --verbose (before the command or among its options) adds the
    rest: here a file that is no library, whose loader error is one line anyway, and an
    unexpected error's traceback."""
    garbage = tmp_path / "garbage.so"
    garbage.write_bytes(b"\x7fELF garbage")
    for args in (["--verbose", "version", "--library", str(garbage)],
                 ["version", "--library", str(garbage), "--verbose"]):
        proc = ortc_cmd(*args)
        assert proc.returncode == 1 and proc.stderr.startswith("ortc version: error: "), proc
    proc = ortc_cmd("version", "--help")
    assert "--verbose" in proc.stdout
    # a long message: its first line, then the rest with --verbose
    from ortc import _cmdline

    import io
    import contextlib

    for verbose, want in ((False, "ortc x: error: first (details: --verbose)\n"),
                          (True, "ortc x: error: first\nsecond\nthird\n")):
        _cmdline.VERBOSE = verbose
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                _cmdline.error("ortc x", "first\nsecond\nthird")
        finally:
            _cmdline.VERBOSE = False
        assert err.getvalue() == want


@pytest.mark.parametrize("command", ["version", "info", "run", "rules", "conformance", "bench"])
def test_help_works_for_every_subcommand(command: str) -> None:
    for module in (False, True):
        proc = ortc_cmd(command, "--help", module=module)
        prog = "python -m ortc" if module else "ortc"
        assert proc.returncode == 0 and proc.stderr == "", (command, proc.stderr)
        assert proc.stdout.startswith(f"usage: {prog} {command} "), (command, proc.stdout)


def test_help_of_bench_from_a_wheel_needs_no_bench_folder(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    from ortc import __main__ as entry

    monkeypatch.setattr(entry, "_source_checkout", lambda: None)  # as from a wheel
    assert entry.main(["bench", "--help"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("usage: ") and "bench [OPTIONS]" in out.out and out.err == ""
    assert entry.main(["bench", "--smoke"]) == 2  # running it still needs the checkout
    assert "needs a source checkout" in capsys.readouterr().err


def test_quiet_conformance_still_prints_the_summary_line() -> None:
    proc = ortc_cmd("conformance", "--only", "status.", "--quiet")
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    assert re.fullmatch(r"\d+ checks in [\d.]+ s: \d+ pass, 0 fail, .*", line), line


@pytest.mark.parametrize("spec", ["foo", "1.19.x", "latest", "1,2", "v1.20.1"])
def test_matrix_refuses_a_non_version_before_downloading(spec: str, tmp_path: Path) -> None:
    env = dict(_env(), ORTC_LIB_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run([ORTC, "conformance", "--matrix", f"1.20.1,{spec}"],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path),
                          timeout=120)
    one_line_error(proc, 2, "ortc conformance", "is not an onnxruntime version")
    assert proc.stdout == "" and not (tmp_path / "cache").exists()
    assert list(tmp_path.iterdir()) == []  # no report either


def _fake_pip(calls: list[dict[str, Any]], stderr: str, returncode: int = 1) -> Any:
    def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(dict(kwargs, cmd=cmd))
        return subprocess.CompletedProcess(cmd, returncode, "" if kwargs.get("stdout") else None,
                                           stderr)
    return run


def test_matrix_unknown_version_leaves_no_report_and_no_cache_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """--matrix 9.9.9 relayed pip's output, wrote an empty report and left an empty cache
    folder: now one line says there is no such release, and nothing is left behind."""
    from ortc.conformance import cli, wheels

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(wheels.subprocess, "run", _fake_pip(calls, (
        "ERROR: Could not find a version that satisfies the requirement onnxruntime==9.9.9 "
        "(from versions: 1.19.0, 1.32.0)\nERROR: No matching distribution found for "
        "onnxruntime==9.9.9\n")))
    monkeypatch.setenv("ORTC_LIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--matrix", "9.9.9"]) == 1
    out = capsys.readouterr().out
    assert out == ("[9.9.9] fetching ... cannot fetch: pip download onnxruntime==9.9.9 failed: "
                   "no such release for this platform on the package index\n"
                   "no version ran: no report written\n"), out
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())  # no report, no cache
    assert len(calls) == 1


@pytest.mark.parametrize("terminal", [True, False])
def test_matrix_download_progress_only_on_a_terminal(terminal: bool, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from ortc.conformance import cli, wheels

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(wheels.subprocess, "run", _fake_pip(calls, "ERROR: offline\n"))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: terminal)
    monkeypatch.setenv("ORTC_LIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--matrix", "1.20.1"]) == 1
    [call] = calls
    # on a terminal pip draws its progress on the terminal (its stdout is ours); else quiet
    assert (call["stdout"] is None) is terminal and ("--quiet" not in call["cmd"]) is terminal
    assert call["stderr"] == subprocess.PIPE  # its errors are read either way
    assert "failed: ERROR: offline" in capsys.readouterr().out
