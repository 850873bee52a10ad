"""OrtApi slot coverage: which slots a test run (pytest + conformance kit) really calls.

With ``ORTC_SLOT_COVERAGE=FILE`` set, :func:`install_from_env` wraps every slot of the facade
with a counter (``api().instrument``); :func:`flush` appends the names seen since the last flush
to FILE as one JSON line (several processes may share the file: each line is written with one
``O_APPEND`` write under ``flock``). Conformance children install it themselves and flush
before every step, so a crashing child still reports what it called.

:func:`report` reads FILE and classifies the slots up to a given API version: covered, not
applicable on a CPU-only build (with the reason), and not covered.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from .. import _process

__all__ = ["ENV_VAR", "install_from_env", "install", "flush", "read", "report",
           "NOT_ON_CPU", "UNCOVERED_REASONS"]

ENV_VAR = "ORTC_SLOT_COVERAGE"

_seen: set[str] = set()
_flushed: set[str] = set()
_lock = _process.lock(__name__, "_lock", threading.Lock)
_path: str | None = None
_undo: Any = None


def _wrap(name: str, fn: Any) -> Any:
    """A counting stand-in for slot ``fn`` that is itself a C function pointer of the same type.

    Other instrumentation (tests/test_fault_injection.py) reads the slot's C type with
    ``ffi.typeof``, so the stand-in is a cffi callback (C calls back into Python, which calls
    the real slot) rather than a Python function.
    """
    from .._ffi import ffi

    seen = _seen  # bound now: finalizers may call slots after module globals are cleared

    def counted(*args: Any) -> Any:
        if name not in seen:
            seen.add(name)  # set.add is atomic; a lost race only repeats the add
        return fn(*args)

    try:
        return ffi.callback(ffi.typeof(fn), counted)
    except TypeError:  # not a cdata function (an earlier Python-level wrapper)
        counted.__name__ = name
        return counted


def install(path: str) -> None:
    """Count slot calls in this process and report them to ``path``.

    When ortc has not loaded its library yet, the counting starts when it does (the facade is
    instrumented as it is built), so installing early does not choose the library.
    """
    global _path, _undo
    from .. import _loader

    if _undo is not None:
        return
    _path = path
    import atexit
    atexit.register(flush)
    if _loader._api is not None:
        _undo = _loader._api.instrument(_wrap)
        return
    original = _loader._open

    def open_and_count(*args: Any, **kwargs: Any) -> Any:
        global _undo
        facade = original(*args, **kwargs)
        _undo = facade.instrument(_wrap)
        return facade

    _loader._open = open_and_count
    _undo = lambda: setattr(_loader, "_open", original)  # noqa: E731


def install_from_env() -> bool:
    path = os.environ.get(ENV_VAR)
    if path:
        install(path)
        return True
    return False


def flush() -> None:
    """Append the slots first seen since the last flush to the coverage file."""
    if _path is None:
        return
    with _lock:
        new = sorted(_seen - _flushed)
        if not new:
            return
        _flushed.update(new)
        line = (json.dumps({"pid": os.getpid(), "slots": new}) + "\n").encode()
        fd = os.open(_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            try:
                import fcntl
                fcntl.flock(fd, fcntl.LOCK_EX)
            except (ImportError, OSError):
                pass
            os.write(fd, line)
        finally:
            os.close(fd)


def read(path: str) -> set[str]:
    """Every slot name recorded in ``path``."""
    names: set[str] = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                names.update(json.loads(line)["slots"])
    return names


# Slots that cannot do their job in a CPU-only build, by family; the reason is printed in the
# report. A slot here that a test calls anyway still counts as covered.
_FAMILIES: list[tuple[str, tuple[str, ...]]] = [
    ("GPU/accelerator execution-provider options (the EP is not in a CPU build)", (
        "SessionOptionsAppendExecutionProvider_CUDA", "SessionOptionsAppendExecutionProvider_ROCM",
        "SessionOptionsAppendExecutionProvider_OpenVINO",
        "SessionOptionsAppendExecutionProvider_TensorRT", "SetCurrentGpuDeviceId",
        "GetCurrentGpuDeviceId", "SessionOptionsAppendExecutionProvider_TensorRT_V2",
        "CreateTensorRTProviderOptions", "UpdateTensorRTProviderOptions",
        "GetTensorRTProviderOptionsAsString", "ReleaseTensorRTProviderOptions",
        "SessionOptionsAppendExecutionProvider_CUDA_V2", "CreateCUDAProviderOptions",
        "UpdateCUDAProviderOptions", "GetCUDAProviderOptionsAsString",
        "ReleaseCUDAProviderOptions", "SessionOptionsAppendExecutionProvider_MIGraphX",
        "SessionOptionsAppendExecutionProvider_CANN", "CreateCANNProviderOptions",
        "UpdateCANNProviderOptions", "GetCANNProviderOptionsAsString",
        "ReleaseCANNProviderOptions", "SessionOptionsAppendExecutionProvider_Dnnl",
        "CreateDnnlProviderOptions", "UpdateDnnlProviderOptions",
        "GetDnnlProviderOptionsAsString", "ReleaseDnnlProviderOptions",
        "CreateROCMProviderOptions", "UpdateROCMProviderOptions",
        "GetROCMProviderOptionsAsString", "ReleaseROCMProviderOptions",
        "UpdateTensorRTProviderOptionsWithValue", "GetTensorRTProviderOptionsByName",
        "UpdateCUDAProviderOptionsWithValue", "GetCUDAProviderOptionsByName",
        "SessionOptionsAppendExecutionProvider_OpenVINO_V2",
        "SessionOptionsAppendExecutionProvider_VitisAI", "KernelContext_GetGPUComputeStream",
        "KernelContext_GetResource", "SetEpDynamicOptions", "SessionReleaseCapturedGraph",
        "CreateSyncStreamForEpDevice", "SyncStream_GetHandle", "ReleaseSyncStream",
        "RunOptionsSetSyncStream", "KernelContext_GetSyncStream",
    )),
    ("needs an OrtGraph/OrtNode/OrtValueInfo view, which only a plugin EP (OrtEpApi) hands out "
     "(the model-editor objects the conformance kit builds go to their graph and model)", (
        "ReleaseValueInfo", "ReleaseNode", "ReleaseGraph", "ValueInfo_GetValueProducer", "ValueInfo_GetValueNumConsumers",
        "ValueInfo_GetValueConsumers", "ValueInfo_GetInitializerValue",
        "ValueInfo_GetExternalInitializerInfo", "ValueInfo_IsRequiredGraphInput",
        "ValueInfo_IsOptionalGraphInput", "ValueInfo_IsGraphOutput",
        "ValueInfo_IsConstantInitializer", "ValueInfo_IsFromOuterScope", "Graph_GetName",
        "Graph_GetModelPath", "Graph_GetOnnxIRVersion", "Graph_GetNumOperatorSets",
        "Graph_GetOperatorSets", "Graph_GetNumInputs", "Graph_GetInputs", "Graph_GetNumOutputs",
        "Graph_GetOutputs", "Graph_GetNumInitializers", "Graph_GetInitializers",
        "Graph_GetNumNodes", "Graph_GetNodes", "Graph_GetParentNode", "Graph_GetGraphView",
        "Node_GetId", "Node_GetName", "Node_GetOperatorType", "Node_GetDomain",
        "Node_GetSinceVersion", "Node_GetNumInputs", "Node_GetInputs", "Node_GetNumOutputs",
        "Node_GetOutputs", "Node_GetNumImplicitInputs", "Node_GetImplicitInputs",
        "Node_GetNumAttributes", "Node_GetAttributes", "Node_GetAttributeByName",
        "OpAttr_GetTensorAttributeAsOrtValue",
        "Node_GetNumSubgraphs", "Node_GetSubgraphs", "Node_GetGraph", "Node_GetEpName",
        "Graph_GetModelMetadata",
    )),
    ("plugin-EP / EP-device machinery with no plugin EP library to register in a CPU wheel", (
        "RegisterExecutionProviderLibrary", "UnregisterExecutionProviderLibrary",
        "GetModelCompatibilityForEpDevices", "CreateSharedAllocator", "ReleaseSharedAllocator",
    )),
    ("custom-ops shared library or registration function (needs a compiled .so)", (
        "RegisterCustomOpsLibrary", "RegisterCustomOpsLibrary_V2",
        "RegisterCustomOpsUsingFunction",
    )),
    ("compiled-model (EPContext) flow of an EP that compiles; none on CPU", (
        "GetCompatibilityInfoFromModel", "GetCompatibilityInfoFromModelBytes",
        "SessionOptionsSetWeightlessSourceModelBuffer",
    )),
]

NOT_ON_CPU: dict[str, str] = {name: reason for reason, names in _FAMILIES for name in names}

#: why an applicable slot is still uncovered (filled in as the reasons are established)
UNCOVERED_REASONS: dict[str, str] = {
    "RunOptionsAddActiveLoraAdapter": "needs a valid LoRA adapter file (ORT's flatbuffers "
                                      "format, written by onnxruntime's Python tooling); only "
                                      "the error paths of CreateLoraAdapter* are checked",
}


def report(covered: set[str], upto: int | None = None) -> dict[str, Any]:
    """Coverage of the slots added up to API ``upto`` (default: every declared slot), as a
    dict for JSON/Markdown."""
    from .._slots import DECLARED_API_VERSION, SLOTS

    if upto is None:
        upto = DECLARED_API_VERSION
    slots = [(n, v) for n, v in SLOTS if v <= upto]
    applicable = [n for n, _ in slots if n not in NOT_ON_CPU or n in covered]
    hit = [n for n in applicable if n in covered]
    missing = [n for n in applicable if n not in covered]
    not_cpu = [n for n, _ in slots if n in NOT_ON_CPU and n not in covered]
    return {
        "upto": upto,
        "total": len(slots),
        "applicable": len(applicable),
        "covered": len(hit),
        "percent": round(100.0 * len(hit) / max(len(applicable), 1), 1),
        "missing": {n: UNCOVERED_REASONS.get(n, "not called by any test yet") for n in missing},
        "not_on_cpu": {n: NOT_ON_CPU[n] for n in not_cpu},
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m ortc.conformance.coverage FILE [--upto N] [--json]``: print the report."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m ortc.conformance.coverage")
    ap.add_argument("file")
    ap.add_argument("--upto", type=int, default=None,
                    help="count the slots up to this API version (default: all declared)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    rep = report(read(args.file), args.upto)
    if args.json:
        print(json.dumps(rep, indent=1))
        return 0
    print(f"slots up to API {rep['upto']}: {rep['total']}; not usable on a CPU-only build: "
          f"{len(rep['not_on_cpu'])}; covered {rep['covered']} of {rep['applicable']} "
          f"({rep['percent']}%)")
    for name, why in sorted(rep["missing"].items()):
        print(f"  not called: {name}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
