"""Finding, loading and negotiating with the library; NotSupportedError on an older one."""

from __future__ import annotations

import json
import os

import pytest

import ortc
from ortc._loader import api, candidate_paths
from ortc._slots import DECLARED_API_VERSION, SINCE
from ortc.conformance.wheels import fetch_library

from conftest import run_python

# onnxruntime's own wheels carry libonnxruntime.so from 1.19 (1.16-1.18 link ORT statically
# into their Python extension); fetch_library takes 1.16.2 from a sherpa-onnx wheel.
OLD_VERSION = "1.16.2"
OLD_API = 16


def test_version_reports_library_and_api() -> None:
    v = ortc.version()
    assert os.path.exists(v.library_path) and "libonnxruntime" in v.library_path
    assert v.library_version.startswith("1.")
    assert v.library_api == int(v.library_version.split(".")[1])
    assert v.api_version == min(v.library_api, DECLARED_API_VERSION) == api().version
    assert "CPUExecutionProvider" in v.providers
    assert v.source == "onnxruntime package"
    assert str(v).startswith("ortc ")


def test_onnxruntime_module_is_never_imported() -> None:
    proc = run_python(
        "import sys, numpy as np, ortc, models\n"
        "s = ortc.Session(models.add_model())\n"
        "s.run(None, {'a': np.ones(1, np.float32), 'b': np.ones(1, np.float32)})\n"
        "print(ortc.version().library_path)\n"
        "print('onnxruntime' in sys.modules, [m for m in sys.modules if m.startswith('onnxrun')])")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "False []"


def test_import_loads_nothing() -> None:
    # no library, and none of the slow optional modules (ml_dtypes alone takes ~0.8 s)
    proc = run_python("import sys, ortc, ortc._loader as L\n"
                      "print(L._api is None, [m for m in ('ml_dtypes', 'argparse', 'json', "
                      "'concurrent.futures', 'onnxruntime') if m in sys.modules])")
    assert proc.stdout.strip() == "True []", proc.stdout + proc.stderr


def test_search_order_lists_every_place() -> None:
    cands, searched = candidate_paths()
    assert any("package onnxruntime" in s for s in searched)
    assert cands[-1][1] == "system"


def test_ortc_library_bad_path_is_reported() -> None:
    proc = run_python("import ortc\ntry:\n ortc.version()\nexcept ortc.LibraryNotFoundError as e:"
                      "\n print('LNF', e)", env={"ORTC_LIBRARY": "/nonexistent/libonnxruntime.so"})
    # A bad ORTC_LIBRARY falls through to the package, but says so when nothing works;
    # here the package exists, so loading succeeds from it.
    assert proc.returncode == 0, proc.stderr


def test_library_not_found_says_where_it_looked() -> None:
    code = ("import ortc, ortc._loader as L\n"
            "L._DISTRIBUTIONS = ()\nL._SYSTEM_NAMES = ('libdefinitely_not_ort.so',)\n"
            "try:\n ortc.version()\nexcept ortc.LibraryNotFoundError as e:\n print(e)")
    proc = run_python(code, env={"ORTC_LIBRARY": "/nonexistent/libonnxruntime.so"})
    assert "ORTC_LIBRARY=/nonexistent/libonnxruntime.so" in proc.stdout
    assert "libdefinitely_not_ort.so" in proc.stdout and "ortc.load(path)" in proc.stdout


def test_explicit_load_of_a_missing_file() -> None:
    proc = run_python("import ortc\ntry:\n ortc.load('/no/such/lib.so')\n"
                      "except ortc.LibraryNotFoundError as e:\n print('LNF', e)")
    assert proc.stdout.startswith("LNF") and "/no/such/lib.so" in proc.stdout


def test_second_library_in_one_process_is_refused(tmp_path) -> None:
    ortc.version()
    other = tmp_path / "libonnxruntime.so"
    other.write_bytes(b"")
    with pytest.raises(RuntimeError, match="one process uses one"):
        ortc.load(str(other))


def test_slot_newer_than_table_raises_not_supported() -> None:
    from ortc._loader import _unsupported

    info = api().info
    fn = _unsupported("FutureSlot", 99, info)
    with pytest.raises(ortc.NotSupportedError, match=r"FutureSlot needs ORT API 99, the loaded "
                                                     r"library has \d+"):
        fn()


@pytest.fixture(scope="module")
def old_library() -> str:
    return fetch_library(OLD_VERSION)


def test_older_library_loads_runs_and_refuses_newer_slots(old_library: str) -> None:
    code = r'''
import json, numpy as np, ortc, models
v = ortc.version()
s = ortc.Session(models.add_model(opset=17, ir_version=8))
[c] = s.run(None, {"a": np.array([1.5], np.float32), "b": np.array([2.0], np.float32)})
out = {"version": v.library_version, "api": v.api_version, "path": v.library_path,
       "source": v.source, "sum": c.tolist()}
try:
    ortc.RunOptions().get_run_config_entry("x")     # GetRunConfigEntry: API 23
except ortc.NotSupportedError as e:
    out["not_supported"] = str(e)
try:
    ortc.default_allocator().stats()                 # AllocatorGetStats: API 23
except ortc.NotSupportedError as e:
    out["not_supported_stats"] = str(e)
try:
    ortc.SessionOptions(use_deterministic_compute=True)  # SetDeterministicCompute: API 17
except ortc.NotSupportedError as e:
    out["not_supported_17"] = str(e)
print(json.dumps(out))
'''
    proc = run_python(code, env={"ORTC_LIBRARY": old_library})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["version"] == OLD_VERSION and out["api"] == OLD_API
    assert out["path"] == os.path.realpath(old_library) and out["source"] == "ORTC_LIBRARY"
    assert out["sum"] == [3.5]
    assert out["not_supported"] == (
        f"GetRunConfigEntry needs ORT API {SINCE['GetRunConfigEntry']}, the loaded library has {OLD_API} "
        f"(ONNX Runtime {OLD_VERSION} at {os.path.realpath(old_library)})")
    assert out["not_supported_17"].startswith("SetDeterministicCompute needs ORT API 17, the "
                                              "loaded library has 16")
    assert out["not_supported_stats"].startswith(
        f"AllocatorGetStats needs ORT API {SINCE['AllocatorGetStats']}, the loaded library has "
        f"{OLD_API}")
