"""ortc under PyPy 3.9 (one of its targets): tests/pypy_check.py runs in a PyPy interpreter
with numpy only, on models built here, and must give what CPython's ortc gives.

PyPy and its venv (numpy, a binary wheel, in the library cache) come from tests/interpreters.py:
on a machine without PyPy the test fails and says how to get it; ORTC_SKIP_PYPY=1 skips it
there explicitly, except under CI. The library is the one this process loaded (ORTC_LIBRARY):
PyPy has no onnxruntime package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import interpreters
import models
import pypy_check
import ortc
from conftest import ROOT


@pytest.fixture(scope="module")
def pypy_python() -> str:
    """A PyPy venv with numpy (made once, in the cache next to the fetched libraries)."""
    return interpreters.pypy()


def test_ortc_under_pypy(pypy_python: str, tmp_path) -> None:
    built = {
        "add": models.add_model(np.float32, [4]),
        "add_n": models.add_model(np.float32, ["n"]),
        "strings": models.identity_model(np.str_, (3,)),
        "sequence": models.sequence_construct_model(np.float32),
        "zipmap": models.zipmap_model(),
        "chain": models.endless_model(),
        "mlp": models.mlp_model(3, 16),
    }
    for name, data in built.items():
        (tmp_path / f"{name}.onnx").write_bytes(data)
    a = np.arange(4, dtype=np.float32)
    b = np.full(4, 10.0, np.float32)
    add = ortc.Session(built["add"])
    expected = {"add": add.run(None, {"a": a, "b": b})[0].tolist()}
    (tmp_path / "expected.json").write_text(json.dumps(expected))
    compat_expected = pypy_check.compat_outputs(str(tmp_path))  # CPython's, through ortc.compat

    # PyPy sizes its nursery (and its collection thresholds with it) from the CPU cache the
    # machine reports: on one reporting a 300 MB cache (a 150 MB nursery) none of the 200
    # dropped sessions nor of the 950 MB of dropped outputs below was collected. The bounds
    # hold for the common nursery of a few MB; the collector's policy is PyPy's, set here as
    # a user would (README, PyPy)
    env = dict(os.environ, ORTC_LIBRARY=ortc.version().library_path, PYTHONPATH=ROOT,
               PYPY_GC_NURSERY="4MB")
    proc = subprocess.run([pypy_python, os.path.join(ROOT, "tests", "pypy_check.py"),
                           str(tmp_path)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(got, indent=1))

    assert got["implementation"] == "PyPy"
    assert got["library_version"] == ortc.version().library_version
    assert got["add_run"] == expected["add"] == [10.0, 11.0, 12.0, 13.0]
    assert got["add_run_staged"] == (a + 2 + b).tolist()
    assert got["add_bound"] == expected["add"]
    assert got["zero_copy"] == [True, True]
    assert got["value_input_let_go"] == [[], True]
    assert got["strings"] == ["a", "bé", "a\0b"]
    assert got["sequence"] == [a.tolist(), b.tolist(), a.tolist()]
    assert got["map"] == [{"10": 0.1, "20": 0.2, "30": 0.7}]
    assert got["wrong_dtype"].startswith("InvalidArgument"), got["wrong_dtype"]
    assert got["closed"] == "ClosedError"
    # the second call on the busy binding was refused; terminate() then stopped the run
    refused, run = got["shared_binding"]
    assert refused == "ConcurrentUseError" and run not in ("finished", "bind_input allowed"), \
        got["shared_binding"]
    assert got["concurrent_runs"] is True
    assert got["hold_of_ended_thread"] == expected["add"], got["hold_of_ended_thread"]
    assert got["hold_of_dropped_binding"] == [expected["add"], True], \
        got["hold_of_dropped_binding"]
    assert got["pickle_and_fork"] == [expected["add"], expected["add"]]
    assert got["dlpack"] == ["float64", True, "float64", True]
    assert got["repeated_runs"] == 0, got["repeated_runs"]
    # PyPy frees a dropped object only at a collection; close() and with-blocks release at
    # once (the session and its thread pool), and what is dropped is counted for PyPy's
    # collector, so a loop that drops sessions or ORT-allocated outputs stays bounded
    assert got["sessions_closed_at_once"] == [0, 0], got["sessions_closed_at_once"]
    live, threads = got["dropped_sessions"]
    assert live <= 64 and threads <= 64 * (os.cpu_count() or 1), got["dropped_sessions"]
    assert isinstance(got["dropped_outputs"], dict), got["dropped_outputs"]
    assert all(mb < 400 for mb in got["dropped_outputs"].values()), got["dropped_outputs"]
    # an onnxruntime application through ortc.compat: the same bytes as under CPython
    assert got["compat_app"] == compat_expected
    assert got["handles_released"] == {}


def test_bench_pypy_runs(pypy_python: str) -> None:
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_pypy.py"),
                           "--pypy", pypy_python, "--rounds", "1"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [x.split() for x in proc.stdout.splitlines() if "run()" in x]
    assert [x[0] for x in lines] == ["cpython", "pypy"], proc.stdout
    for words in lines:
        assert float(words[2]) > 0 and float(words[5]) > 0, words
