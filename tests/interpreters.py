"""The other interpreters ortc declares (CPython 3.9, PyPy 3.9), each in a venv made once and kept
in the library cache beside the fetched libraries (``ortc.conformance.wheels.cache_dir()``).

PyPy comes from the system (``apt-get install pypy3``; ``make test`` installs it through
tools/with-pypy where it can), with numpy only (PyPy has no onnxruntime package); on a machine
without it a test fails and says how to get it, and ORTC_SKIP_PYPY=1 skips it there
explicitly, except under CI. CPython 3.9 comes from pyenv (or ``$ORTC_PYTHON39``), with
numpy, cffi and onnxruntime.

A test runs a script of its own there with ``run_script``: ortc is imported from this checkout
(PYTHONPATH), and the ONNX Runtime library is the one this process loaded (ORTC_LIBRARY), so
every interpreter runs the same library. A venv is rebuilt when its package list changes.

    python tests/interpreters.py cpython3.9      # make (or check) the venv, print its python
    python tests/interpreters.py pypy
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: what the CPython 3.9 venv holds: ortc's dependencies, and onnxruntime (its own library, and
#: its Python package for side-by-side runs)
CPYTHON39_PACKAGES = ("numpy", "cffi", "onnxruntime")


def _cache_dir() -> str:
    sys.path.insert(0, ROOT)
    try:
        from ortc.conformance import wheels
    finally:
        sys.path.remove(ROOT)
    return wheels.cache_dir()


def cached_venv(interpreter: str, name: str, packages: tuple[str, ...]) -> str:
    """The python of a venv ``name`` made by ``interpreter`` with ``packages`` (binary wheels
    only: nothing is compiled here), made on first use and kept; returns its path."""
    venv = os.path.join(_cache_dir(), name)
    python = os.path.join(venv, "bin", "python")
    ready = os.path.join(venv, ".ready")
    wanted = "\n".join(packages)
    if os.path.exists(ready):
        with open(ready, encoding="utf-8") as f:
            if f.read() == wanted:
                return python
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([interpreter, "-m", "venv", venv], check=True, timeout=300)
    subprocess.run([python, "-m", "pip", "install", "-q", "--only-binary=:all:", *packages],
                   check=True, timeout=900)
    with open(ready, "w", encoding="utf-8") as f:
        f.write(wanted)
    return python


def pypy() -> str:
    """The python of the PyPy venv (numpy only)."""
    exe = os.environ.get("ORTC_PYPY") or shutil.which("pypy3")
    ci = os.environ.get("CI", "") not in ("", "false", "0")
    if os.environ.get("ORTC_SKIP_PYPY") == "1" and not ci:
        # make test (tools/with-pypy) says on its last lines that this leg did not run
        pytest.skip("ORTC_SKIP_PYPY=1: the PyPy leg does not run on this machine")
    if exe is None:
        pytest.fail("pypy3 not found: install it (apt-get install pypy3) or point ORTC_PYPY at "
                    "one" + ("; under CI the PyPy leg never skips" if ci else
                             ", or set ORTC_SKIP_PYPY=1 to skip this test on this machine"))
    return cached_venv(exe, "pypy-venv", ("numpy",))


def cpython39_interpreter() -> str | None:
    """A CPython 3.9: ``$ORTC_PYTHON39``, else pyenv's newest 3.9, else ``python3.9`` on PATH."""
    explicit = os.environ.get("ORTC_PYTHON39")
    if explicit:
        return explicit
    roots = [os.environ.get("PYENV_ROOT") or "", os.path.expanduser("~/.pyenv")]
    found = [p for r in roots if r for p in glob.glob(os.path.join(r, "versions", "3.9.*",
                                                                   "bin", "python"))]
    if found:
        return max(found, key=lambda p: [int(x) if x.isdigit() else 0
                                         for x in p.split(os.sep)[-3].split(".")])
    return shutil.which("python3.9")


def cpython39() -> str:
    """The python of the CPython 3.9 venv; the test fails, saying how to get one, without it."""
    interpreter = cpython39_interpreter()
    if interpreter is None or not os.path.exists(interpreter):
        pytest.fail("CPython 3.9 not found (one of ortc's declared interpreters): install it with "
                    "pyenv (`pyenv install 3.9`), or point ORTC_PYTHON39 at one")
    return cached_venv(interpreter, "cpython3.9-venv", CPYTHON39_PACKAGES)


def run_script(python: str, script: str, *args: str, timeout: float = 600,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (a path under tests/) with ``python``, this checkout's ortc and this
    process's ONNX Runtime library."""
    import ortc

    full_env = dict(os.environ, ORTC_LIBRARY=ortc.version().library_path,
                    PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests"))
    full_env.update(env or {})
    return subprocess.run([python, os.path.join(ROOT, "tests", script), *args], env=full_env,
                          capture_output=True, text=True, timeout=timeout)


if __name__ == "__main__":
    if sys.argv[1:] not in (["cpython3.9"], ["pypy"]):
        raise SystemExit("usage: python tests/interpreters.py cpython3.9|pypy")
    print(cpython39() if sys.argv[1] == "cpython3.9" else pypy())
