"""The generated layer is a pure function of include/*.h and is committed up to date."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, ROOT)
import build_ffi  # noqa: E402


def test_generated_files_are_fresh() -> None:
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "build_ffi.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_detects_a_stale_file(tmp_path) -> None:
    for rel in ("build_ffi.py", "include/ortc_types.h", "include/ortc_api.h"):
        os.makedirs(tmp_path / os.path.dirname(rel), exist_ok=True)
        shutil.copy(os.path.join(ROOT, rel), tmp_path / rel)
    os.makedirs(tmp_path / "ortc")
    for name in ("_ffi.py", "_slots.py", "_enums.py", "_signatures.py"):
        shutil.copy(os.path.join(ROOT, "ortc", name), tmp_path / "ortc" / name)
    with open(tmp_path / "ortc" / "_slots.py", "a") as f:
        f.write("# hand edit\n")
    proc = subprocess.run([sys.executable, str(tmp_path / "build_ffi.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "_slots.py" in proc.stdout
    assert "_signatures.py" not in proc.stdout  # only the edited file is stale


def test_headers_are_valid_c() -> None:
    proc = subprocess.run(["gcc", "-fsyntax-only", "-std=c11", "-Wall", "-Wextra", "-Werror",
                           "-I", os.path.join(ROOT, "include"), "-x", "c",
                           os.path.join(ROOT, "include", "ortc_api.h")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_slot_table_matches_known_abi_facts() -> None:
    from ortc._slots import SLOTS, SINCE

    names = [n for n, _ in SLOTS]
    # Version boundaries from ORT's static_asserts: API 1 ends at ReleaseCustomOpDomain (101).
    assert names[:3] == ["CreateStatus", "GetErrorCode", "GetErrorMessage"]
    assert names.index("ReleaseCustomOpDomain") == 101 and SINCE["ReleaseCustomOpDomain"] == 1
    assert SINCE["HasValue"] == 10
    assert SINCE["GetTensorElementTypeAndShapeDataReference"] >= 23
    since = [v for _, v in SLOTS]
    assert since == sorted(since), "slots must be declared in version order"


def test_parser_takes_the_slot_name_not_a_parameter_name() -> None:
    slots = build_ffi.parse_slots(
        "struct OrtApi {\n/* @api 1 */\nvoid (*Outer)(int x, void (*fn)(void*, size_t));\n};")
    assert slots == [("Outer", 1)]


def test_enums_drop_prefixes() -> None:
    from ortc import ElementType, ErrorCode

    assert ElementType.FLOAT == 1 and ElementType.STRING == 8 and ElementType.BFLOAT16 == 16
    assert ErrorCode.INVALID_ARGUMENT == 2 and ErrorCode.NO_SUCHFILE == 3


def test_signatures_keep_const_and_pointer_depth() -> None:
    from ortc._signatures import SIGNATURES
    from ortc._slots import SLOTS

    assert list(SIGNATURES) == [name for name, _ in SLOTS]
    assert SIGNATURES["Run"][:2] == ("OrtSession*", "const OrtRunOptions*")
    assert SIGNATURES["GetEpDevices"] == ("const OrtEnv*", "const OrtEpDevice* const**", "size_t*")
    assert SIGNATURES["GetModelPackageApi"] == ()
    assert SIGNATURES["SessionOptionsSetEpContextDataReadFunc"] == (
        "OrtSessionOptions*", "OrtReadNamedBufferFunc", "void*")
    assert build_ffi.parse_signatures(
        "struct OrtApi {\n/* @api 1 */\nvoid (*F)(const OrtEnv* env, void (*cb)(void*, int));\n};"
    ) == {"F": ("const OrtEnv*", "void (*)(void*, int)")}
