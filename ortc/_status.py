"""The one chokepoint that turns an ``OrtStatus*`` into a Python exception.

Every ORT call that returns a status goes through :func:`check` (hot paths test the pointer for
NULL first and call :func:`raise_status` only on failure, or decode it with
:func:`error_from_status` when the failure is theirs to judge), or, for a best-effort call whose
failure changes nothing for the caller, :func:`ignore`. The status is released here, exactly
once, after its code and message are copied out; no other module reads or releases one
(tests/test_status.py scans the source for that, and for calls whose status is dropped).
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn, cast

from ._ffi import ffi
from ._interrupt import watcher
from ._loader import api
from .errors import OrtError, error_class_for

__all__ = ["check", "raise_status", "error_from_status", "call_out", "call_into", "ignore"]


def error_from_status(status: Any) -> OrtError:
    """Decode and release a non-NULL status; return the matching exception."""
    a = api()
    code = int(a.GetErrorCode(status))
    raw = a.GetErrorMessage(status)
    message = cast(bytes, ffi.string(raw)).decode("utf-8", "replace") if raw != ffi.NULL else ""
    a.ReleaseStatus(status)
    return error_class_for(code)(message, code)


def raise_status(status: Any, context: str | None = None) -> NoReturn:
    """Raise the exception for a non-NULL status, optionally prefixing ``context``.

    A signal handler's exception that ORT's callback could not raise during the call (see
    ``_interrupt``) wins over the status: the failure is then its context."""
    err = error_from_status(status)
    if context:
        err = type(err)(f"{context}: {err.message}", err.code)
    try:
        if watcher.deferred is not None:
            watcher.raise_deferred(err)
        raise err
    finally:
        # this frame, which the traceback holds, must not hold the exception: that cycle
        # kept the error, and through the traceback's frames the caller's arguments (a
        # failed run's inputs, its session), until a collection (none with gc disabled)
        del err


def check(status: Any, context: str | None = None) -> None:
    """Raise for a failed status; do nothing for NULL (success)."""
    if status:
        raise_status(status, context)
    if watcher.deferred is not None:
        watcher.raise_deferred()


def call_out(fn: Any, out_type: str, *args: Any, context: str | None = None) -> Any:
    """Call a creating slot ``fn(*args, &out)`` and return ``out``; a NULL result raises.

    ``out_type`` is the C type of the out-parameter's pointee, e.g. ``"OrtSession*"``.
    """
    ctype = _OUT_TYPES.get(out_type)
    if ctype is None:
        ctype = _OUT_TYPES[out_type] = ffi.typeof(out_type + "*")
    return call_into(fn, ffi.new(ctype), *args, context=context)


#: out-parameter C types of call_out by pointee type, parsed once each
_OUT_TYPES: dict[str, Any] = {}


def call_into(fn: Any, out: Any, *args: Any, context: str | None = None) -> Any:
    """:func:`call_out` with the out-parameter given (a pointer cdata its caller reuses, one
    per call in progress: read here before anything else can write it)."""
    status = fn(*args, out)
    if status:
        raise_status(status, context)
    # (a deferred signal exception is left to the next check: raised here, it would leak the
    # object just created, which the caller has not wrapped yet)
    result = out[0]
    if result == ffi.NULL:  # (never true of a number)
        name = getattr(fn, "__name__", None) or "an ORT function"
        raise OrtError(f"{context or name} returned success and a NULL "
                       f"{ffi.typeof(out).item.cname.replace(' *', '*')}")
    return result


def ignore(status: Any, what: str | None = None, log: bool = True) -> None:
    """Release the status of a best-effort call, one whose failure changes nothing for the
    caller (freeing a buffer whose contents were already copied out, stopping a run that may
    have ended, an optional field read as absent): not worth an exception, but the status must
    not leak. A failure is logged at DEBUG on ``ortc.status`` naming ``what`` (once the
    application has imported ``logging``: until then nothing can have turned DEBUG on), unless
    ``log`` is false: the watcher thread takes no lock a logging handler might hold."""
    if status:
        err = error_from_status(status)
        logging = sys.modules.get("logging") if log else None
        if logging is not None:
            logger = logging.getLogger("ortc.status")
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("%s failed, ignored: %s", what or "a best-effort ORT call", err)
