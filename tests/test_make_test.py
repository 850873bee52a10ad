"""`make test` on a machine without PyPy (tools/with-pypy): it installs pypy3 where it can;
where it cannot it runs the rest and says so on its last lines; under CI it fails instead.

A machine without pypy3 is simulated with a PATH of links to the few tools needed, none of
them pypy3 (and apt-get only where the test provides a stand-in).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "tools", "with-pypy")
SHOW_ENV = ("import os, shutil; print('skip=%s pypy=%s' % (os.environ.get('ORTC_SKIP_PYPY'), "
            "shutil.which('pypy3') is not None)); raise SystemExit(3)")


def _bin_without_pypy(tmp_path: Path) -> Path:
    """A folder of links to the tools `make test` uses, none of which is pypy3 or apt-get."""
    out = tmp_path / "bin"
    out.mkdir()
    for tool in ("bash", "sh", "env", "id", "make", "dirname", "cat", "rm", "touch"):
        found = shutil.which(tool)
        if found:
            (out / tool).symlink_to(found)
    return out


def _env(bindir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ORTC_PYPY", "ORTC_SKIP_PYPY", "CI", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")
           and not k.startswith("PYTEST_")}
    env.update(PATH=str(bindir), **extra)
    return env


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_without_pypy_and_apt_the_rest_runs_and_the_last_lines_say_so(tmp_path: Path) -> None:
    bindir = _bin_without_pypy(tmp_path)
    proc = _run([SCRIPT, sys.executable, "-c", SHOW_ENV], _env(bindir))
    assert proc.returncode == 3, proc.stderr   # the command's own exit status is kept
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "skip=1 pypy=False"
    assert "the PyPy leg (tests/test_pypy.py) did NOT run" in lines[-2]
    assert "no apt-get" in lines[-2] and "ORTC_PYPY" in lines[-1]


def test_under_ci_a_missing_pypy_fails(tmp_path: Path) -> None:
    bindir = _bin_without_pypy(tmp_path)
    ok = "import os; assert os.environ.get('ORTC_SKIP_PYPY') is None; print('ran')"
    for extra in ({"CI": "true"}, {"CI": "true", "ORTC_SKIP_PYPY": "1"}):
        proc = _run([SCRIPT, sys.executable, "-c", ok], _env(bindir, **extra))
        assert proc.returncode == 1, (extra, proc.stdout, proc.stderr)
        assert proc.stdout.strip() == "ran"   # the rest still runs, without the skip
        assert proc.stderr.strip().splitlines()[-1].startswith(
            "FAILED: the PyPy leg did not run"), proc.stderr


def test_under_ci_a_skip_request_is_ignored_where_pypy_exists(tmp_path: Path) -> None:
    bindir = _bin_without_pypy(tmp_path)
    (bindir / "pypy3").symlink_to(shutil.which("pypy3") or sys.executable)
    proc = _run([SCRIPT, sys.executable, "-c", SHOW_ENV],
                _env(bindir, CI="true", ORTC_SKIP_PYPY="1"))
    assert proc.returncode == 3, proc.stderr       # the command's status, no failure added
    assert proc.stdout.strip() == "skip=None pypy=True"
    assert "ORTC_SKIP_PYPY=1 is ignored under CI" in proc.stderr


def test_missing_pypy_is_installed_with_apt_get(tmp_path: Path) -> None:
    real = shutil.which("pypy3") or sys.executable   # any executable stands in for PyPy here
    bindir = _bin_without_pypy(tmp_path)
    log = tmp_path / "apt.log"
    (bindir / "apt-get").write_text(
        f"#!/bin/sh\necho \"$@\" >> {log}\n"
        f"case \"$*\" in *install*pypy3*) {shutil.which('ln')} -s {real} {bindir}/pypy3;; esac\n")
    (bindir / "apt-get").chmod(0o755)
    (bindir / "id").unlink()
    (bindir / "id").write_text("#!/bin/sh\necho 0\n")   # as root
    (bindir / "id").chmod(0o755)
    proc = _run([SCRIPT, sys.executable, "-c", SHOW_ENV], _env(bindir, CI="true"))
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.strip() == "skip=None pypy=True"
    assert "install -y -q pypy3" in log.read_text()
    assert "installing Debian's pypy3" in proc.stderr


def test_ortc_pypy_that_is_not_a_file_is_an_error(tmp_path: Path) -> None:
    proc = _run([SCRIPT, "true"], _env(_bin_without_pypy(tmp_path), ORTC_PYPY="/no/pypy3"))
    assert proc.returncode == 2 and "ORTC_PYPY=/no/pypy3" in proc.stderr


@pytest.mark.parametrize("ci", [False, True])
def test_make_test_without_pypy(tmp_path: Path, ci: bool) -> None:
    """The real thing: `make test` on the PyPy tests, on a PATH without pypy3 or apt-get."""
    bindir = _bin_without_pypy(tmp_path)
    if not (bindir / "make").exists():
        pytest.fail("make is not installed")
    env = _env(bindir, **({"CI": "true"} if ci else {}))
    # -o: use the .venv as it is (its stamp may be older than an edited pyproject.toml)
    proc = _run(["make", "--no-print-directory", "-o", ".venv/.installed-test", "test", f"PY={sys.executable}",
                 "TESTS=tests/test_pypy.py"], env)
    out = proc.stdout + proc.stderr
    if ci:
        assert proc.returncode != 0, out
        assert "2 errors" in proc.stdout or "2 failed" in proc.stdout, out
        assert "under CI the PyPy leg never skips" in proc.stdout, out
        assert proc.stderr.strip().splitlines()[-2].startswith("FAILED: the PyPy leg did not run")
    else:
        assert proc.returncode == 0, out
        assert "2 skipped" in proc.stdout, out
        last = proc.stdout.strip().splitlines()[-2:]
        assert "did NOT run" in last[0] and "rerun" in last[1], last
