"""The command line as a shell sees it: one-line errors naming the problem (no tracebacks for
a user's mistake), exit 2 for usage errors and 1 for failed work, ``--version``, and usage text
that names the command as it was invoked (``ortc`` or ``python -m ortc``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
    assert ortc_cmd("--help").stdout.startswith("usage: ortc [--version] COMMAND")
    assert ortc_cmd("help", module=True).stdout.startswith(
        "usage: python -m ortc [--version] COMMAND")
    for module in (False, True):  # no command: the usage on stderr, a usage error's status
        proc = ortc_cmd(module=module)
        assert proc.returncode == 2 and not proc.stdout, proc
        assert "[--version] COMMAND" in proc.stderr.splitlines()[0], proc.stderr
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
