"""Finding, loading and negotiating with the library; NotSupportedError on an older one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import models
import ortc
from ortc._loader import api, candidate_paths
from ortc._slots import DECLARED_API_VERSION, SINCE
from ortc.conformance.wheels import fetch_library

from conftest import ROOT, run_python

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


def _load_error(code: str, env: dict[str, str] | None = None, cwd: str | None = None) -> str:
    """Run ``code`` in a fresh process; it must raise LibraryNotFoundError: its message."""
    proc = run_python("import ortc\ntry:\n" + "".join(f" {line}\n" for line in code.splitlines())
                      + "except ortc.LibraryNotFoundError as e:\n print('LNF', e)\n"
                      "else:\n print('LOADED', ortc.version())", env=env, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("LNF "), proc.stdout
    return proc.stdout[4:].strip()


@pytest.mark.parametrize("how", ["ORTC_LIBRARY", "ortc.load"])
def test_an_explicit_choice_is_never_replaced_by_a_search(how: str, tmp_path) -> None:
    # the onnxruntime package is installed here: a search would find it; a choice must not
    (tmp_path / "not_ort.so").write_bytes(b"\x7fELF garbage")
    libm = "/lib/x86_64-linux-gnu/libm.so.6"
    cases = {"/path/with/a/typo": "/path/with/a/typo: no such file",
             str(tmp_path): f"{tmp_path} is a directory, not a library file",
             str(tmp_path / "not_ort.so"): f"cannot load library '{tmp_path / 'not_ort.so'}'",
             "typo": "cannot load library 'typo'"}
    if os.path.exists(libm):
        cases[libm] = f"{libm} is not an ONNX Runtime library (it has no OrtGetApiBase)"
    for path, why in cases.items():
        if how == "ORTC_LIBRARY":
            msg = _load_error("ortc.version()", env={"ORTC_LIBRARY": path})
            assert msg.startswith(f"ORTC_LIBRARY={path}: "), msg
        else:
            msg = _load_error(f"ortc.load({path!r})", env={"ORTC_LIBRARY": ""})
            assert msg.startswith(f"ortc.load({path!r}): "), msg
        assert why in msg, (path, msg)
        assert "\n" not in msg, msg


def test_a_truncated_library_is_refused_not_loaded_into_a_crash(tmp_path) -> None:
    # dlopen maps a copy cut short and dies of SIGBUS on the missing pages (each length here
    # did, before the check): the ELF file's own headers say how long it must be
    whole = open(ortc.version().library_path, "rb").read()
    for length in (70, 1000, 100_000, len(whole) // 2, len(whole) - 1):
        path = tmp_path / f"cut{length}.so"
        path.write_bytes(whole[:length])
        msg = _load_error(f"ortc.load({str(path)!r})", env={"ORTC_LIBRARY": ""})
        assert f"{path} is truncated" in msg and f"the file has {length}" in msg, msg
    from ortc._loader import elf_truncation
    assert elf_truncation(ortc.version().library_path) is None
    assert elf_truncation(sys.executable) is None and elf_truncation(__file__) is None
    # the conformance matrix's cache of fetched libraries: a damaged copy is fetched again
    # (here the fetch of a version that does not exist fails), never handed to a runner
    cache = tmp_path / "cache"
    (cache / "onnxruntime-0.0.0").mkdir(parents=True)
    (cache / "onnxruntime-0.0.0" / "libonnxruntime.so.0.0.0").write_bytes(whole[:100_000])
    # a bare name is the system loader's to find, even when a file of that name is here
    msg = _load_error("ortc.load('cut1000.so')", env={"ORTC_LIBRARY": ""}, cwd=str(tmp_path))
    assert "looked up on the system loader's path" in msg and "./cut1000.so" in msg, msg
    with pytest.raises(RuntimeError, match="pip download onnxruntime==0.0.0 failed"):
        fetch_library("0.0.0", cache=str(cache))
    assert not list((cache / "onnxruntime-0.0.0").iterdir())


def _extensions_library() -> str:
    import glob
    from importlib import metadata

    pkg = metadata.distribution("onnxruntime-extensions").locate_file("onnxruntime_extensions")
    [lib] = glob.glob(os.path.join(str(pkg), "_extensions_pydll*.so"))
    return lib


def test_every_shared_object_ortc_has_loaded_is_checked_like_the_library(tmp_path) -> None:
    """A custom-op library, a provider's library beside ORT's and a library a provider option
    names: each cut short is refused as ortc.load refuses one (a custom-op library cut short
    killed the process with SIGBUS inside RegisterCustomOpsLibrary_V2)."""
    whole = open(_extensions_library(), "rb").read()
    cut = tmp_path / "libcut_ops.so"
    cut.write_bytes(whole[:len(whole) // 2])
    # ORT's library copied into a folder whose provider library is cut short: a GPU build
    # loads libonnxruntime_providers_shared.so from there when CUDA is appended
    folder = tmp_path / "ort"
    folder.mkdir()
    library = folder / os.path.basename(ortc.version().library_path)
    library.write_bytes(open(ortc.version().library_path, "rb").read())
    (folder / "libonnxruntime_providers_shared.so").write_bytes(whole[:100_000])
    code = f"""
import json, ortc, ortc.compat as ort
out = {{}}
def attempt(key, call):
    try:
        call()
        out[key] = "ok"
    except Exception as e:
        out[key] = [type(e).__name__, str(e)]
opts = ortc.SessionOptions()
attempt("custom ops", lambda: opts.register_custom_ops_library({str(cut)!r}))
attempt("compat custom ops", lambda: ort.SessionOptions().register_custom_ops_library({str(cut)!r}))
attempt("provider", lambda: opts.append_execution_provider("CUDAExecutionProvider"))
attempt("option", lambda: opts.append_execution_provider("QNN", {{"backend_path": {str(cut)!r}}}))
attempt("providers=", lambda: ortc.Session(b"x", providers=["TensorrtExecutionProvider"]))
print(json.dumps(out))
"""
    proc = run_python(code, env={"ORTC_LIBRARY": str(library)})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    for key, where in [("custom ops", f"custom op library {cut} is truncated"),
                       ("compat custom ops", f"custom op library {cut} is truncated"),
                       ("provider", "CUDA provider library"),
                       ("option", f"QNN option 'backend_path': {cut} is truncated"),
                       ("providers=", "TensorRT provider library")]:
        kind, text = out[key]
        assert where in text and "loading it would crash the process" in text, (key, text)
        assert kind == ("Fail" if key.startswith("compat") else "LibraryNotFoundError"), key
    assert f"{folder}/libonnxruntime_providers_shared.so is truncated" in out["provider"][1]


def test_library_not_found_says_where_it_looked_and_what_to_do() -> None:
    code = ("import ortc._loader as L\n"
            "L._PATTERNS = ('nothing_matches*',); L._DISTRIBUTIONS = ()\n"
            "L._SYSTEM_NAMES = ('libdefinitely_not_ort.so',)\n"
            "ortc.version()")
    msg = _load_error(code, env={"ORTC_LIBRARY": ""})
    assert "ORTC_LIBRARY: not set" in msg and "package onnxruntime: " in msg
    assert "libdefinitely_not_ort.so" in msg
    # a command that works today (onnxruntime is on PyPI; ortc is not)
    assert "pip install onnxruntime" in msg and "ortc.load(path)" in msg
    assert "pip install 'ortc" not in msg


def test_an_onnxruntime_wheel_too_old_to_carry_the_library_is_named(tmp_path) -> None:
    """With onnxruntime 1.17.3 installed (its wheel has no libonnxruntime: ORT is linked into
    its extension), `ortc version` said "pip install onnxruntime", which was installed. The
    first line now names the installed version and the version that has the library."""
    from ortc._loader import FIRST_WHEEL_WITH_LIBRARY

    assert FIRST_WHEEL_WITH_LIBRARY == (1, 19)
    site = tmp_path / "site"   # what pip leaves for onnxruntime 1.17.3, minus its extension
    (site / "onnxruntime" / "capi").mkdir(parents=True)
    (site / "onnxruntime" / "__init__.py").write_text("raise ImportError('never imported')\n")
    (site / "onnxruntime" / "capi" / "libonnxruntime_providers_shared.so").write_bytes(b"")
    (site / "onnxruntime-1.17.3.dist-info").mkdir()
    (site / "onnxruntime-1.17.3.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: onnxruntime\nVersion: 1.17.3\n")
    path = os.pathsep.join([str(site), ROOT, os.path.join(ROOT, "tests")])
    msg = _load_error("ortc.version()", env={"ORTC_LIBRARY": "", "PYTHONPATH": path})
    first = msg.splitlines()[0]
    assert first.startswith("no ONNX Runtime library found: onnxruntime 1.17.3 is installed, "
                            "but onnxruntime's wheels before 1.19 carry no libonnxruntime"), msg
    assert "`pip install 'onnxruntime>=1.19'`" in first and "ORTC_LIBRARY" in first, first
    assert "Searched:" in msg and "(no library)" in msg
    # the command line says the same, in one line (the places searched: --verbose)
    env = dict(os.environ, ORTC_LIBRARY="", PYTHONPATH=path)
    proc = subprocess.run([sys.executable, "-m", "ortc", "version"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 1 and proc.stdout == "", proc
    [line] = proc.stderr.splitlines()
    assert line == f"python -m ortc version: error: {first} (details: --verbose)", line
    proc = subprocess.run([sys.executable, "-m", "ortc", "version", "--verbose"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1 and "Searched:" in proc.stderr and "(no library)" in proc.stderr


def test_default_path_finds_the_wheel_without_metadata_or_importing_onnxruntime(tmp_path) -> None:
    model = tmp_path / "add.onnx"
    model.write_bytes(models.add_model())
    proc = run_python(
        "import sys, numpy as np, ortc\n"
        f"s = ortc.Session({str(model)!r})\n"
        "s.run(None, {'a': np.ones(1, np.float32), 'b': np.ones(1, np.float32)})\n"
        "print(ortc.load().source)\n"
        "print([m for m in ('importlib.metadata', 'onnxruntime', 'difflib', 'zipfile', 'email',"
        " 'argparse', 'json', 'signal', 'dataclasses', 'ortc.lora', 'threading')"
        " if m in sys.modules])",
        env={"ORTC_LIBRARY": ""})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-2:] == ["onnxruntime package", "[]"], proc.stdout


def test_build_info_is_reported() -> None:
    info = ortc.load()
    assert info.build_info.startswith("ORT Build Info:"), info.build_info


def test_second_library_in_one_process_is_refused(tmp_path) -> None:
    ortc.version()
    other = tmp_path / "libonnxruntime.so"
    other.write_bytes(b"")
    with pytest.raises(RuntimeError, match="one process uses one"):
        ortc.load(str(other))


def test_slots_read_one_by_one_are_the_typed_tables_slots() -> None:
    """The facade reads each slot when first used, as its own pointer type (or, for the slots
    cffi cannot type on their own, through the typed table): in a fresh process, every slot,
    read last slot first, has the address and the very cdata type the ``const OrtApi*`` view
    gives, and a slot unknown to ortc raises AttributeError."""
    proc = run_python(
        "from ortc._ffi import ffi\n"
        "from ortc._loader import api\n"
        "from ortc._slots import TYPED_BY_TABLE\n"
        "a = api()\n"
        "names = list(a.available)[::-1]\n"
        "mine = [getattr(a, n) for n in names]\n"
        "table = a.table\n"
        "bad = [n for n, fn in zip(names, mine) if ffi.typeof(fn) is not ffi.typeof(getattr(table, n))\n"
        "       or ffi.cast('void*', fn) != ffi.cast('void*', getattr(table, n))]\n"
        "print(len(names) > 400, bad, set(TYPED_BY_TABLE) <= set(names))\n"
        "try:\n"
        "    a.NoSuchSlot\n"
        "except AttributeError as exc:\n"
        "    print(exc)\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["True [] True", "OrtApi has no slot 'NoSuchSlot'"]


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


def test_a_wheels_folder_is_matched_by_its_file_names(tmp_path) -> None:
    """The wheel's capi folder is listed and matched by name: the versioned library first, the
    plain name after it, never a provider library, nor a name that only starts alike."""
    from ortc import _loader

    names = ["libonnxruntime.so.1.32.0", "libonnxruntime.so", "libonnxruntime.so.1.9.0",
             "libonnxruntime_providers_shared.so", "libonnxruntime.sox", "onnxruntime.dll",
             "libonnxruntime.1.32.0.dylib", "libonnxruntime.dylib", "libonnxruntime.so.providers"]
    for n in names:
        (tmp_path / n).write_bytes(b"")
    got = [os.path.basename(p) for p in _loader._capi_hits(str(tmp_path))]
    expected = {"linux": ["libonnxruntime.so.1.32.0", "libonnxruntime.so.1.9.0",
                          "libonnxruntime.so"],
                "darwin": ["libonnxruntime.1.32.0.dylib", "libonnxruntime.dylib"],
                "win32": ["onnxruntime.dll"]}
    assert got == expected.get(sys.platform, expected["linux"])
    assert _loader._capi_hits(str(tmp_path / "missing")) == []
    assert _loader._matches("libonnxruntime.so.", "libonnxruntime.so.*")
    assert not _loader._matches("libonnxruntime.dylib", "libonnxruntime.*.dylib")
