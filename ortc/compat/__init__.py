"""onnxruntime's public Python API over ortc, so that onnxruntime code runs unchanged.

>>> import ortc.compat as onnxruntime                                   # doctest: +SKIP
>>> sess = onnxruntime.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])

or, for a whole program, ``python -m ortc.compat app.py`` (or :func:`install` at its start):
``import onnxruntime`` then resolves to this module. onnxruntime's own extension is never
imported. Names, defaults, exception classes and messages follow onnxruntime 1.32;
docs/COMPAT.md lists what differs and what is not provided.
"""

from __future__ import annotations

from typing import Any

from ._binding import IOBinding
from ._enums import (ArenaExtendStrategy, ExecutionMode, ExecutionOrder, GraphOptimizationLevel,
                     OrtAllocatorType, OrtDeviceMemoryType, OrtMemoryInfoDeviceType, OrtMemType,
                     OrtSparseFormat)
from ._errors import (DeviceReset, EngineError, EPFail, Fail, InvalidArgument, InvalidGraph,
                      InvalidProtobuf, ModelLoadCanceled, ModelLoaded, ModelRequiresCompilation,
                      NoModel, NoSuchFile, NotFound, NotImplemented, RuntimeException)
from ._functions import (disable_telemetry_events, enable_telemetry_events, get_all_providers,
                         get_available_providers, get_build_info, get_device,
                         get_version_string, set_default_logger_callback,
                         set_default_logger_severity,
                         set_default_logger_verbosity, set_seed)
from ._install import install, installed, make_capi
from ._options import SessionOptions, get_default_session_options
from ._run_options import LoraAdapter, RunOptions
from ._device import OrtDevice, OrtDeviceVendorId
from ._providers import check_and_normalize_provider_args
from ._ortvalue import OrtValue
from ._nodes import ModelMetadata, NodeArg
from ._session import InferenceSession
from ._sparse import SparseTensor

__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "IOBinding", "OrtValue", "OrtDevice",
    "NodeArg", "ModelMetadata", "LoraAdapter", "SparseTensor", "get_default_session_options",
    "OrtDeviceVendorId",
    "ExecutionMode", "ExecutionOrder", "GraphOptimizationLevel", "OrtAllocatorType",
    "OrtMemType", "OrtSparseFormat", "ArenaExtendStrategy", "OrtDeviceMemoryType",
    "OrtMemoryInfoDeviceType",
    "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
    "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail",
    "ModelLoadCanceled", "ModelRequiresCompilation", "NotFound", "DeviceReset",
    "get_available_providers", "get_all_providers", "get_device", "get_version_string",
    "get_build_info", "set_default_logger_callback", "set_default_logger_severity",
    "set_default_logger_verbosity",
    "enable_telemetry_events", "disable_telemetry_events", "set_seed",
    "install", "installed", "check_and_normalize_provider_args",
]

import sys as _sys

from ._errors import COLLECTION_MODULE as _COLLECTION

# the module paths onnxruntime's messages show (after install() they name this module)
for _cls in (InferenceSession, IOBinding, OrtValue, OrtDevice, SparseTensor):
    _cls.__module__ = _COLLECTION

#: onnxruntime.capi, whose onnxruntime_pybind11_state and _pybind_state are this module
capi = make_capi(_sys.modules[__name__])

#: ArenaExtendStrategy's members, which onnxruntime's extension also exports by name
kNextPowerOfTwo = ArenaExtendStrategy.kNextPowerOfTwo
kSameAsRequested = ArenaExtendStrategy.kSameAsRequested

__author__ = "Microsoft"  # onnxruntime's value: some applications print or check it


def __getattr__(name: str) -> Any:
    # the loaded library's version, read on first use (importing loads nothing)
    if name == "__version__":
        return get_version_string()
    raise AttributeError(f"module 'onnxruntime' has no attribute {name!r}")
