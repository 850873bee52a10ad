"""onnxruntime's module functions, from what the C API can tell."""

from __future__ import annotations

import logging
import operator
from typing import Any, Callable, cast

import ortc
from ortc._ffi import ffi
from ortc._loader import api

from ._errors import NotImplemented as OrtNotImplemented
from ._errors import report_unraisable

#: every provider name onnxruntime 1.32 knows of, whether or not this build has it (what its
#: get_all_providers() returns; the C API has no query for it)
ALL_PROVIDERS = (
    "TensorrtExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider",
    "OpenVINOExecutionProvider", "DnnlExecutionProvider", "VitisAIExecutionProvider",
    "QNNExecutionProvider", "NnapiExecutionProvider", "VSINPUExecutionProvider",
    "JsExecutionProvider", "CoreMLExecutionProvider", "DmlExecutionProvider",
    "RknpuExecutionProvider", "WebNNExecutionProvider", "WebGpuExecutionProvider",
    "XnnpackExecutionProvider", "CANNExecutionProvider", "AzureExecutionProvider",
    "CPUExecutionProvider",
)
#: the names onnxruntime 1.32's session takes (a build without one skips it); it refuses the
#: others with "Unknown Provider Type", two of get_all_providers()' names among them
KNOWN_PROVIDERS = frozenset(ALL_PROVIDERS) - {"JsExecutionProvider", "WebNNExecutionProvider"}
_GPU_PROVIDERS = ("CUDAExecutionProvider", "TensorrtExecutionProvider", "ROCMExecutionProvider",
                  "MIGraphXExecutionProvider", "DmlExecutionProvider")

_verbosity = 0


def get_available_providers() -> list[str]:
    return ortc.available_providers()


def get_all_providers() -> list[str]:
    return list(ALL_PROVIDERS)


def get_device() -> str:
    """"GPU" when the library has a GPU provider, else "CPU". onnxruntime reports the device
    its wheel was built for; the C API has no such query, so it is derived from the providers."""
    available = ortc.available_providers()
    return "GPU" if any(p in available for p in _GPU_PROVIDERS) else "CPU"


def get_version_string() -> str:
    return ortc.load().version


def get_build_info() -> str:
    text = api().GetBuildInfoString()
    return cast(bytes, ffi.string(text)).decode() if text != ffi.NULL else ""


def _severity(function: str, severity: Any) -> int:
    """onnxruntime's checks of a default-logger severity: an integer (pybind takes anything
    with ``__index__``, a bool too; TypeError otherwise), 0 to 4 (RuntimeError otherwise)."""
    try:
        level = operator.index(severity)
    except TypeError:
        raise TypeError(f"{function}(): incompatible function arguments: severity must be an "
                        f"int, not {type(severity).__name__} {severity!r}") from None
    if not 0 <= level <= 4:
        raise RuntimeError("Invalid logging severity. 0:Verbose, 1:Info, 2:Warning, 3:Error, "
                           "4:Fatal")
    return level


def _integer(function: str, value: Any, bits: int) -> int:
    """``value`` as onnxruntime's binding converts a C integer argument: anything with
    ``__index__`` (a bool too) that fits; its TypeError otherwise (not int()'s parsing of
    "3" or truncation of 2.5)."""
    try:
        number = operator.index(value)
    except TypeError:
        number = None
    if number is None or not -2**(bits - 1) <= number < 2**(bits - 1):
        raise TypeError(f"{function}(): incompatible function arguments: an int{bits} is "
                        f"expected, not {type(value).__name__} {value!r}")
    return number


def set_default_logger_severity(severity: int) -> None:
    ortc.get_env().log_severity_level = _severity("set_default_logger_severity", severity)


def set_default_logger_verbosity(verbosity: int) -> None:
    """Recorded only: the C API sets verbosity per session and per run, not for the default
    logger (SessionOptions.log_verbosity_level and RunOptions.log_verbosity_level work)."""
    global _verbosity
    _verbosity = _integer("set_default_logger_verbosity", verbosity, 32)


def enable_telemetry_events() -> None:
    ortc.get_env().enable_telemetry()


def disable_telemetry_events() -> None:
    ortc.get_env().disable_telemetry()


def set_seed(seed: int) -> None:
    _integer("set_seed", seed, 64)  # a wrong argument is a TypeError first, as there
    raise OrtNotImplemented("set_seed: the C API has no global random seed; give random "
                            "operators a 'seed' attribute in the model instead", 9)


_PY_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR,
              4: logging.CRITICAL}


class _CallbackHandler(logging.Handler):
    """Hands ORT's log records (ortc routes them to the ``ortc.ort`` logger, with ORT's fields
    as extras) to an onnxruntime-style callback."""

    def __init__(self, callback: Callable[[int, str, str, str, str], Any]) -> None:
        super().__init__()
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.callback(getattr(record, "ort_severity", 2), getattr(record, "ort_category", ""),
                          getattr(record, "ort_logid", ""),
                          getattr(record, "ort_code_location", ""), record.getMessage())
        except Exception:  # noqa: BLE001 - reported as onnxruntime reports it
            report_unraisable(self.callback, "Exception ignored in the ORT logging callback")


_installed: _CallbackHandler | None = None
_saved: tuple[int, bool] = (logging.NOTSET, True)


def set_default_logger_callback(callback: Callable[[int, str, str, str, str], Any] | None,
                                severity: int = 2) -> None:
    """``callback(severity, category, logid, code_location, message)`` receives ORT's log
    messages instead of the default sink (here: Python ``logging``, logger ``ortc.ort``);
    ``None`` restores that. Installing one sets the default severity."""
    global _installed, _saved
    severity = _severity("set_default_logger_callback", severity)
    if callback is not None and not callable(callback):  # onnxruntime's check, after that one
        raise RuntimeError("callback must be a callable")
    logger = logging.getLogger("ortc.ort")
    if _installed is not None:
        logger.removeHandler(_installed)
        logger.setLevel(_saved[0])
        logger.propagate = _saved[1]
        _installed = None
    if callback is None:
        return
    _saved = (logger.level, logger.propagate)
    _installed = _CallbackHandler(callback)
    logger.addHandler(_installed)
    logger.setLevel(_PY_LEVELS[severity])
    logger.propagate = False  # the callback replaces the default sink
    ortc.get_env().log_severity_level = severity
