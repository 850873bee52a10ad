"""onnxruntime's exception classes, each also the matching ortc error class.

onnxruntime raises these from its extension module with the text
``[ONNXRuntimeError] : <code> : <CODE_NAME> : <message>``; the classes here carry the same text,
and ``except ortc.InvalidArgument`` catches them as well as ``except InvalidArgument`` does.
"""

from __future__ import annotations

import sys
import traceback
import types
from typing import Any, Callable, NoReturn, TypeVar

from ortc import ErrorCode
from ortc import errors as _e

#: the module onnxruntime's classes live in; after install() it is this package's alias
PYBIND_MODULE = "onnxruntime.capi.onnxruntime_pybind11_state"
#: where onnxruntime's Python-level classes (InferenceSession, OrtValue, ...) live
COLLECTION_MODULE = "onnxruntime.capi.onnxruntime_inference_collection"


def unpicklable(native: str) -> Callable[[Any, Any], NoReturn]:
    """A ``__reduce_ex__`` refusing as onnxruntime refuses to pickle (and so to copy, but
    where ``__copy__`` says otherwise) an object that is, or holds, its extension type
    ``native``: with its TypeError."""
    def __reduce_ex__(self: Any, protocol: Any) -> NoReturn:
        raise TypeError(f"cannot pickle '{PYBIND_MODULE}.{native}' object")
    return __reduce_ex__


_T = TypeVar("_T")


def shallow_copy(self: _T) -> _T:
    """``copy.copy`` of a Python-level onnxruntime class: a new object sharing the native
    objects (onnxruntime's copies share its extension objects the same way)."""
    new = object.__new__(type(self))
    new.__dict__.update(self.__dict__)
    return new


class _OrtStyle:
    """Mixin: str() is onnxruntime's ``[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ...``."""

    code: Any
    message: str
    #: str() is the message alone (onnxruntime raises some of its classes so: a Python error
    #: met converting the feeds, as Fail "<class 'UnicodeEncodeError'>: ...")
    plain = False

    def __str__(self) -> str:
        if self.plain:
            return self.message
        code = self.code
        name = code.name if isinstance(code, ErrorCode) else str(int(code))
        return f"[ONNXRuntimeError] : {int(code)} : {name} : {self.message}"


def _make(name: str, base: type[_e.OrtError]) -> type[_e.OrtError]:
    cls = type(name, (_OrtStyle, base), {"__doc__": f"onnxruntime's {name}; also an "
                                                    f"ortc.{base.__name__}."})
    cls.__module__ = PYBIND_MODULE
    return cls


Fail = _make("Fail", _e.Fail)
InvalidArgument = _make("InvalidArgument", _e.InvalidArgument)
NoSuchFile = _make("NoSuchFile", _e.NoSuchFile)
NoModel = _make("NoModel", _e.NoModel)
EngineError = _make("EngineError", _e.EngineError)
RuntimeException = _make("RuntimeException", _e.RuntimeException)
InvalidProtobuf = _make("InvalidProtobuf", _e.InvalidProtobuf)
ModelLoaded = _make("ModelLoaded", _e.ModelLoaded)
NotImplemented = _make("NotImplemented", _e.OrtNotImplementedError)  # noqa: A001 - ORT's name
InvalidGraph = _make("InvalidGraph", _e.InvalidGraph)
EPFail = _make("EPFail", _e.EPFail)
ModelLoadCanceled = _make("ModelLoadCanceled", _e.ModelLoadCanceled)
ModelRequiresCompilation = _make("ModelRequiresCompilation", _e.ModelRequiresCompilation)
NotFound = _make("NotFound", _e.OrtNotFound)
DeviceReset = _make("DeviceReset", _e.DeviceReset)

ALL = (Fail, InvalidArgument, NoSuchFile, NoModel, EngineError, RuntimeException,
       InvalidProtobuf, ModelLoaded, NotImplemented, InvalidGraph, EPFail, ModelLoadCanceled,
       ModelRequiresCompilation, NotFound, DeviceReset)
_BY_CODE = {int(c.code): c for c in ALL}


def ort_error(code: int, message: str) -> _e.OrtError:
    """The onnxruntime-named exception for an ORT error code and message."""
    cls = _BY_CODE.get(int(code), Fail)
    return cls(message, code)


def translate(err: BaseException, context: str | None = None) -> BaseException:
    """ortc's exception as onnxruntime would raise it: an ``OrtError`` becomes the class of
    the same name here, with ORT's own message (``context``, a prefix ortc added, removed).
    Anything else is returned unchanged."""
    if not isinstance(err, _e.OrtError) or isinstance(err, _OrtStyle):
        return err
    message = err.message
    if context and message.startswith(context + ": "):
        message = message[len(context) + 2:]
    new = ort_error(int(err.code), message)
    new.__traceback__ = err.__traceback__
    return new


def report_unraisable(obj: Any, err_msg: str) -> None:
    """Report the exception being handled as the interpreter reports one it cannot raise (as
    onnxruntime reports an exception in a callback it calls): to ``sys.unraisablehook``, as
    ``err_msg`` and ``obj``. The interpreter's own hook takes only its internal argument type
    (it raises TypeError for any other), so while that one is installed the report is written
    to stderr as it writes it."""
    kind, value, tb = sys.exc_info()
    hook = sys.unraisablehook
    if hook is not getattr(sys, "__unraisablehook__", None):
        try:
            hook(types.SimpleNamespace(exc_type=kind, exc_value=value, exc_traceback=tb,
                                       err_msg=err_msg, object=obj))
            return
        except Exception:  # noqa: BLE001 - as the interpreter does: then its own report
            pass
    stderr = sys.stderr
    if stderr is None:
        return
    try:
        stderr.write(f"{err_msg}: {obj!r}\n"
                     + "".join(traceback.format_exception(kind, value, tb)))
        stderr.flush()
    except Exception:  # noqa: BLE001 - nowhere left to report it
        pass
