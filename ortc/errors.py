"""The exception hierarchy of ortc.

Every exception ortc raises derives from :class:`Error`. Failures reported by ONNX Runtime
itself are :class:`OrtError` subclasses, one per ``OrtErrorCode``; each also derives from the
built-in exception a Python user would naturally catch (``ValueError`` for a bad argument,
``FileNotFoundError`` for a missing model, ...).
"""

from __future__ import annotations

from typing import ClassVar, Iterable

from ._enums import ErrorCode

__all__ = [
    "Error",
    "OrtError",
    "Fail",
    "InvalidArgument",
    "NoSuchFile",
    "NoModel",
    "EngineError",
    "RuntimeException",
    "InvalidProtobuf",
    "ModelLoaded",
    "OrtNotImplementedError",
    "InvalidGraph",
    "EPFail",
    "ModelLoadCanceled",
    "ModelRequiresCompilation",
    "OrtNotFound",
    "DeviceReset",
    "NotSupportedError",
    "LibraryNotFoundError",
    "ClosedError",
    "RunTimeout",
    "ThreadRuleError",
    "WrongThreadError",
    "ConcurrentUseError",
    "ForkedHandleError",
    "error_class_for",
]


class Error(Exception):
    """Base of every exception raised by ortc."""


class OrtError(Error):
    """A failure reported by ONNX Runtime through an ``OrtStatus``.

    ``code`` is the :class:`ortc.ErrorCode` ORT returned and ``message`` its text, unchanged.
    """

    code: ErrorCode = ErrorCode.FAIL
    #: the code a subclass stands for; ``None`` on the generic base
    _for_code: ClassVar[ErrorCode | None] = None

    def __init__(self, message: str, code: ErrorCode | int | None = None) -> None:
        if code is None:
            code = self._for_code if self._for_code is not None else ErrorCode.FAIL
        try:
            self.code = ErrorCode(code)
        except ValueError:  # a code newer than ortc: keep the number
            self.code = code  # type: ignore[assignment]
        self.message = message
        name = self.code.name if isinstance(self.code, ErrorCode) else f"code {int(code)}"
        super().__init__(f"[{name}] {message}")

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.message, int(self.code)))


def _code_class(name: str, code: ErrorCode, *bases: type, doc: str) -> type[OrtError]:
    cls = type(name, (OrtError, *bases), {"__doc__": doc, "_for_code": code, "code": code})
    cls.__module__ = __name__
    return cls


Fail = _code_class("Fail", ErrorCode.FAIL, RuntimeError, doc="ORT_FAIL: a generic failure.")
InvalidArgument = _code_class(
    "InvalidArgument", ErrorCode.INVALID_ARGUMENT, ValueError,
    doc="ORT_INVALID_ARGUMENT: a bad name, type, shape or option value.")
NoSuchFile = _code_class(
    "NoSuchFile", ErrorCode.NO_SUCHFILE, FileNotFoundError,
    doc="ORT_NO_SUCHFILE: a model or library file does not exist.")
NoModel = _code_class("NoModel", ErrorCode.NO_MODEL, RuntimeError, doc="ORT_NO_MODEL.")
EngineError = _code_class("EngineError", ErrorCode.ENGINE_ERROR, RuntimeError,
                          doc="ORT_ENGINE_ERROR: a failure inside an execution engine.")
RuntimeException = _code_class(
    "RuntimeException", ErrorCode.RUNTIME_EXCEPTION, RuntimeError,
    doc="ORT_RUNTIME_EXCEPTION: a kernel failed, or a run was terminated.")
InvalidProtobuf = _code_class(
    "InvalidProtobuf", ErrorCode.INVALID_PROTOBUF, ValueError,
    doc="ORT_INVALID_PROTOBUF: the bytes are not a valid ONNX model.")
ModelLoaded = _code_class("ModelLoaded", ErrorCode.MODEL_LOADED, RuntimeError,
                          doc="ORT_MODEL_LOADED.")
OrtNotImplementedError = _code_class(
    "OrtNotImplementedError", ErrorCode.NOT_IMPLEMENTED, NotImplementedError,
    doc="ORT_NOT_IMPLEMENTED: no kernel or feature for this request.")
InvalidGraph = _code_class("InvalidGraph", ErrorCode.INVALID_GRAPH, ValueError,
                           doc="ORT_INVALID_GRAPH: the model's graph does not validate.")
EPFail = _code_class("EPFail", ErrorCode.EP_FAIL, RuntimeError,
                     doc="ORT_EP_FAIL: an execution provider failed.")
ModelLoadCanceled = _code_class(
    "ModelLoadCanceled", ErrorCode.MODEL_LOAD_CANCELED, RuntimeError,
    doc="ORT_MODEL_LOAD_CANCELED: session creation was cancelled.")
ModelRequiresCompilation = _code_class(
    "ModelRequiresCompilation", ErrorCode.MODEL_REQUIRES_COMPILATION, RuntimeError,
    doc="ORT_MODEL_REQUIRES_COMPILATION.")
OrtNotFound = _code_class("OrtNotFound", ErrorCode.NOT_FOUND, LookupError,
                          doc="ORT_NOT_FOUND: a looked-up item does not exist.")

DeviceReset = _code_class("DeviceReset", ErrorCode.DEVICE_RESET, RuntimeError,
                          doc="ORT_DEVICE_RESET: the device was reset; recreate the session.")

_BY_CODE: dict[int, type[OrtError]] = {
    int(cls._for_code): cls  # type: ignore[arg-type]
    for cls in (Fail, InvalidArgument, NoSuchFile, NoModel, EngineError, RuntimeException,
                InvalidProtobuf, ModelLoaded, OrtNotImplementedError, InvalidGraph, EPFail,
                ModelLoadCanceled, ModelRequiresCompilation, OrtNotFound, DeviceReset)
}


def error_class_for(code: int) -> type[OrtError]:
    """The exception class for an ``OrtErrorCode`` (``OrtError`` itself for unknown codes)."""
    return _BY_CODE.get(int(code), OrtError)


class NotSupportedError(Error, NotImplementedError):
    """The loaded library is too old for the function called (its OrtApi slot is newer)."""


class LibraryNotFoundError(Error, OSError):
    """No ONNX Runtime shared library could be found or loaded.

    ``missing`` is True when the library chosen (``ortc.load(path)``, ``ORTC_LIBRARY``, the
    command line's ``--library``) does not exist: a mistake in the choice (the command line's
    usage error, exit 2), where False is a library that exists but does not load (exit 1)."""

    missing: bool = False


class ClosedError(Error, ValueError):
    """The object was closed (or its owner was) and can no longer be used."""


class RunTimeout(Error, TimeoutError):
    """A run did not finish within its ``timeout`` and was terminated."""


class ThreadRuleError(Error, RuntimeError):
    """A use that breaks the thread rules declared for an ORT object."""


class WrongThreadError(ThreadRuleError):
    """An object that is not Send was used from a thread other than the one that created it."""


class ConcurrentUseError(ThreadRuleError):
    """Two threads used an object at once in a way its rules forbid (strict mode)."""


class ForkedHandleError(ThreadRuleError):
    """An ORT object created before ``fork()`` was used in the child process."""


def closest_name(name: str, valid: Iterable[str], what: str) -> str:
    """The message for an unknown ``name`` of ``what``, suggesting the closest valid one."""
    import difflib  # only on this error path

    close = difflib.get_close_matches(name, list(valid), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown {what} {name!r}{hint}"
