"""ortc: ONNX Runtime's C API from Python, over cffi, with its thread rules enforced.

>>> import ortc, numpy as np                                            # doctest: +SKIP
>>> sess = ortc.Session("model.onnx")                                   # doctest: +SKIP
>>> outputs = sess.run(None, {"x": np.ones((1, 3), np.float32)})        # doctest: +SKIP

The library is found on first use (see :func:`load`); ``import ortc`` itself loads nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._enums import ElementType, ErrorCode, ValueKind
from ._handle import live_handles
from ._loader import LibraryInfo, load
from .env import Env, available_providers, get_env
from .errors import (ClosedError, ConcurrentUseError, DeviceReset, EngineError, EPFail, Error,
                     Fail, ForkedHandleError, InvalidArgument, InvalidGraph, InvalidProtobuf,
                     LibraryNotFoundError, ModelLoadCanceled, ModelLoaded,
                     ModelRequiresCompilation, NoModel, NoSuchFile, NotSupportedError, OrtError,
                     OrtNotFound, OrtNotImplementedError, RuntimeException, RunTimeout, ThreadRuleError,
                     WrongThreadError)
from ._numpy_bridge import MapOutput, RunOutput
from .memory import Allocator, MemoryInfo, default_allocator
from .run_options import RunOptions
from .session import Session
from .threads import set_thread_checks, thread_checks
from .typeinfo import NodeArg, TypeInfo

if TYPE_CHECKING:  # at run time these load on first use (__getattr__ below)
    from ._enums import AllocatorType, ExecutionMode, GraphOptimizationLevel, LoggingLevel, MemType
    from ._version import VersionInfo, version
    from .binding import IoBinding
    from .lora import LoraAdapter
    from .session_options import SessionOptions
    from .metadata import ModelMetadata
    from .recipe import OptionsRecipe, RecipeError, SessionRecipe
    from .rules_table import rules
    from .sparse import SparseTensor
    from .value import Value

#: names loaded on first use, and their modules: ``import ortc`` does not pay for the rules
#: table (evidence, the slot table, the signatures), sparse tensors, IoBinding, LoRA adapters,
#: session options (a session with default options makes none), the dataclasses of
#: version(), recipes and model metadata (making a dataclass costs ~0.4 ms), the enums a first
#: session does not hand out (an IntEnum costs ~0.1 ms), nor Value (a first run makes none)
_LAZY = {"AllocatorType": "_enums", "ExecutionMode": "_enums",
         "GraphOptimizationLevel": "_enums", "LoggingLevel": "_enums", "MemType": "_enums",
         "Value": "value",
         "rules": "rules_table", "SparseTensor": "sparse", "IoBinding": "binding",
         "LoraAdapter": "lora", "SessionOptions": "session_options",
         "version": "_version", "VersionInfo": "_version", "OptionsRecipe": "recipe",
         "SessionRecipe": "recipe", "RecipeError": "recipe", "ModelMetadata": "metadata"}

__version__ = "0.1.0"

__all__ = [
    "load", "version", "VersionInfo", "LibraryInfo", "available_providers", "get_env", "Env",
    "Session", "RunOutput", "MapOutput", "SessionOptions", "RunOptions", "Value",
    "SessionRecipe", "OptionsRecipe",
    "RecipeError", "IoBinding", "MemoryInfo", "Allocator",
    "default_allocator", "SparseTensor", "LoraAdapter", "TypeInfo", "NodeArg", "ModelMetadata",
    "ElementType", "ErrorCode", "ValueKind", "LoggingLevel", "GraphOptimizationLevel",
    "ExecutionMode", "AllocatorType", "MemType",
    "set_thread_checks", "thread_checks", "live_handles", "rules",
    "Error", "OrtError", "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError",
    "RuntimeException", "InvalidProtobuf", "ModelLoaded", "OrtNotImplementedError",
    "InvalidGraph", "EPFail", "ModelLoadCanceled", "ModelRequiresCompilation", "OrtNotFound",
    "DeviceReset", "RunTimeout", "NotSupportedError", "LibraryNotFoundError", "ClosedError", "ThreadRuleError",
    "WrongThreadError", "ConcurrentUseError", "ForkedHandleError",
]


def _getattr(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        if name[:1] == "_":
            raise AttributeError(f"module 'ortc' has no attribute {name!r}")
        from ._hints import no_module_attribute  # ortc.InferenceSession -> ortc.Session

        raise no_module_attribute(name, __all__)
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later reads are plain attribute reads
    return value


if not TYPE_CHECKING:  # a type checker sees the names above, and flags any other
    __getattr__ = _getattr


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
