"""The process-wide ORT environment, and ORT's log messages routed into Python ``logging``
(logger ``ortc.ort``; each record carries ``ort_severity``, ``ort_category``, ``ort_logid``,
and ``ort_code_location``). The messages of ORT's
own threads reach ``logging`` from a Python thread of ortc's, in order, shortly after ORT sends
them: one of ORT's threads never waits for a lock of the logging path (see :func:`_queue`).

ORT's ``OrtEnv`` is a reference-counted singleton: every CreateEnv returns the same object and
ignores its arguments after the first, and once its last reference is released ORT cannot run
anything (Run after the last ReleaseEnv segfaults: conformance check env.run-after-last-release).
ortc therefore creates it once, on first use, and never releases it; every Session keeps it.

ORT's telemetry: ONNX Runtime 1.29 and later start a telemetry uploader (a background thread
and an on-disk event cache) when the env is created, unless ``ORT_DISABLE_TELEMETRY`` is set
to 1 before. That thread makes every forked child of the process hang in ORT's exit handlers
when it exits normally (conformance check env.fork-child-exits), which breaks the fork support
ortc gives sessions. ortc therefore sets ``ORT_DISABLE_TELEMETRY=1`` in its environment before
it creates the env, unless the variable is already set (``ORT_DISABLE_TELEMETRY=0`` keeps ORT's
default). Child processes inherit the setting.
"""

from __future__ import annotations

import os
import sys
import time
import _thread
from collections import deque
from typing import TYPE_CHECKING, Any, cast

from . import _enums, _loader, _process
from ._ffi import ffi
from ._guard import survive_fork
from ._handle import Handle
from . import _interrupt
from ._interrupt import watcher
from ._status import call_out, check, ignore
from .errors import InvalidArgument
from .threads import exclusive, ort_callback, shared

_in_callback = ort_callback()

if TYPE_CHECKING:
    import logging

    from ._enums import LoggingLevel

__all__ = ["Env", "get_env", "available_providers"]

#: the ``ortc.ort`` logger ORT's messages go to. ``logging`` (2-3 ms of the import) is imported
#: when the first message arrives on a thread that called into ORT, not before: until the
#: application imports it, nothing can have configured that logger, so its level is logging's
#: default (WARNING). The drainer (ORT's own threads' messages) never imports it (see
#: :func:`_emit_queued`).
_ort_logger: logging.Logger | None = None

# Python logging's level numbers (fixed by the logging module's documentation).
_DEBUG, _INFO, _WARNING, _ERROR, _CRITICAL = 10, 20, 30, 40, 50
# ORT's severities (OrtLoggingLevel's numbers; the LoggingLevel enum is made on first use)
_ORT_VERBOSE, _ORT_INFO, _ORT_WARNING, _ORT_ERROR, _ORT_FATAL = range(5)
# ORT severity -> Python logging level.
_PY_LEVEL = {_ORT_VERBOSE: _DEBUG, _ORT_INFO: _INFO, _ORT_WARNING: _WARNING, _ORT_ERROR: _ERROR,
             _ORT_FATAL: _CRITICAL}
_LOGGING_TO_ORT = [(_DEBUG, _ORT_VERBOSE), (_INFO, _ORT_INFO), (_WARNING, _ORT_WARNING),
                   (_ERROR, _ORT_ERROR)]


def ort_logger() -> logging.Logger:
    """The ``ortc.ort`` logger (importing ``logging`` if it is not yet)."""
    global _ort_logger
    log = _ort_logger
    if log is None:
        import logging

        log = _ort_logger = logging.getLogger("ortc.ort")
    return log

_getframe = sys._getframe
_accepting_logs = True  # cleared at interpreter exit: from then on the callback does nothing


def _text(p: Any) -> str:
    return cast(bytes, ffi.string(p)).decode("utf-8", "replace") if p != ffi.NULL else ""


def _log_from_ort(_param: Any, severity: int, category: Any, logid: Any, code_location: Any,
                  message: Any) -> None:
    # Runs on whatever thread ORT logs from (caller threads and ORT's own pools), concurrently
    # and without ORT holding a lock. It must never raise into C and never wait on ortc locks.
    if not _accepting_logs:
        return
    record = (severity, _text(message), _text(category), _text(logid), _text(code_location))
    try:
        _getframe(1)
    except ValueError:  # no Python code below this call: one of ORT's own threads (see _queue)
        _queue(record)
        return
    _emit(record)


def _level_and_fields(record: tuple[int, str, str, str, str]) -> tuple[int, dict[str, Any]]:
    """A message's Python logging level and the fields its record carries (module docstring)."""
    severity, _message, category, logid, code_location = record
    return (_PY_LEVEL.get(severity, _WARNING),
            {"ort_category": category, "ort_logid": logid, "ort_code_location": code_location,
             "ort_severity": severity})


def _emit(record: tuple[int, str, str, str, str]) -> None:
    level, fields = _level_and_fields(record)
    with _in_callback:  # a handler calling ortc raises instead of waiting on a guard
        (_ort_logger or ort_logger()).log(level, "%s", record[1], extra=fields)


# ORT's own threads (its intra- and inter-op pools) do not hand their messages to logging
# themselves. Logging takes locks (each handler's, the logging module's, whatever a handler's
# code takes), and a Python thread may hold one of them while it waits inside ORT for those very
# threads: a session released by a garbage collection, or closed, inside a handler's emit
# (ReleaseSession joins the pool, whose threads log as they start), a run made under a lock a
# handler takes (Run waits for its inter-op threads, which log as the arena grows). Each such
# wait deadlocked. So a message from a thread with no Python code below the callback is queued,
# without waiting on any lock, and the drainer, a Python thread that nothing in ORT waits for,
# hands it to logging; in order (one queue, one drainer), with the ORT thread's id as the
# record's ``thread`` (``threadName`` ``ORT-<thread>``) and the time it was logged as its
# ``created``; they may reach the handlers after the call that made them has returned. Messages
# on a thread that called into ORT are logged there and then, as before (the ERROR hold below,
# a handler seeing a message while the call is still inside ORT). Telling the two apart costs a
# message from a caller thread one frame lookup (about 40 ns); a run that logs nothing pays
# nothing.
_queued: deque[tuple[tuple[int, str, str, str, str], int, float]] = deque()
#: a binary semaphore: released by a producer after each append, acquired by the drainer to
#: wait for work; releasing it never waits (an unlocked one raises, and is already a wake-up)
_queue_wake = _thread.allocate_lock()
_queue_start = _thread.allocate_lock()
_drainer_started = False
_draining = False


def _queue(record: tuple[int, str, str, str, str]) -> None:
    _queued.append((record, _thread.get_ident(), time.time()))
    if not _drainer_started:
        _start_drainer()
    try:
        _queue_wake.release()
    except RuntimeError:  # not held: the drainer is awake, or was woken already
        pass


def _start_drainer() -> None:
    global _drainer_started
    with _queue_start:  # held only to start the thread, never while waiting on anything else
        if not _drainer_started:
            _thread.start_new_thread(_drain_queued, ())
            _drainer_started = True


def _drain_queued() -> None:
    global _draining
    queued = _queued
    while True:
        _queue_wake.acquire()
        _draining = True
        while queued:
            record, ident, when = queued.popleft()
            if _accepting_logs:
                try:
                    _emit_queued(record, ident, when)
                except BaseException:  # noqa: BLE001 - as the callback's onerror: nobody to tell
                    pass
        _draining = False


def _emit_queued(record: tuple[int, str, str, str, str], ident: int, when: float) -> None:
    log = _ort_logger
    level, fields = _level_and_fields(record)
    if log is None:
        if not _logging_imported():
            # The drainer never imports: an import on this thread, cut by a fork on another,
            # leaves the module's import lock held in the child, whose own `import logging`
            # then waits for good. Nothing imported logging, so nothing configured it: the
            # message goes where logging's last-resort handler would send it.
            if level >= _WARNING and sys.stderr is not None:
                sys.stderr.write(record[1] + "\n")
                sys.stderr.flush()
            return
        log = ort_logger()  # (imported and initialized: no import lock is taken)
    if not log.isEnabledFor(level):
        return
    with _in_callback:  # as _emit: a handler calling ortc raises instead of waiting on a guard
        fn, lno, func, _ = log.findCaller()
        rec = log.makeRecord(log.name, level, fn, lno, "%s", (record[1],), None, func, fields)
        # when and where ORT logged it, not when the drainer got to it
        rec.relativeCreated -= (rec.created - when) * 1000.0
        rec.created = when
        rec.msecs = (when - int(when)) * 1000.0
        rec.thread = ident
        rec.threadName = f"ORT-{ident}"
        log.handle(rec)


def _logging_imported() -> bool:
    """Whether ``logging`` is in ``sys.modules`` and done initializing (another thread may be
    importing it right now)."""
    module = sys.modules.get("logging")
    return module is not None and \
        not getattr(getattr(module, "__spec__", None), "_initializing", False)


def _queue_after_fork_in_child() -> None:
    # the drainer is gone; the parent emits what its own threads queued
    global _queue_wake, _queue_start, _drainer_started, _draining
    _queued.clear()
    _queue_wake = _thread.allocate_lock()
    _queue_start = _thread.allocate_lock()
    _drainer_started = _draining = False


_process.at_fork(_queue_after_fork_in_child, __name__, _queued=_process.EMPTIED,
                 _queue_wake=_process.NEW, _queue_start=_process.NEW,
                 _drainer_started=_process.FORGOTTEN, _draining=_process.RESET)


def _log_failed(_kind: Any, exc: BaseException | None, _tb: Any) -> None:
    # cffi calls this for whatever escaped _log_from_ort, even an exception raised on entry to
    # it: nothing may unwind into ORT. On the main thread that is usually a signal handler's
    # exception (Ctrl-C while ORT logs): kept and raised when the ORT call returns. Elsewhere (ORT's
    # pool threads) there is no caller to raise it to.
    if exc is not None and _thread.get_ident() == _interrupt.MAIN_THREAD:
        watcher.defer(exc)


# Kept alive for the life of the process: ORT may call it until its env is destroyed.
_log_callback = ffi.callback("OrtLoggingFunction", _log_from_ort, onerror=_log_failed)


def _default_severity() -> int:
    # without logging imported nobody configured it: its default level, without importing it
    level = ort_logger().getEffectiveLevel() if "logging" in sys.modules else _WARNING
    for py_level, ort_level in _LOGGING_TO_ORT:
        if level <= py_level:
            return ort_level
    return _ORT_FATAL


class Env(Handle):
    """The ORT environment (one per process; get it with :func:`get_env`).

    Thread rules: Send and Sync. Session creation and queries are shared; changing the log
    level is exclusive. It is never released: every session and run depends on it (a Run after
    the last ReleaseEnv crashes: conformance check env.run-after-last-release), even though ORT
    can create a new one afterwards (env.recreate-after-release).
    """

    c_type = "OrtEnv"
    send = True
    sync = True
    evidence = ("one reference-counted env per process, used from every thread; it must "
                "outlive every session")

    def __init__(self, severity: LoggingLevel | int | None = None, logid: str = "ortc") -> None:
        api = _loader.api()
        self._api = api
        self._severity = _default_severity() if severity is None else int(_logging_level(severity))
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # see the module docstring
        raw = call_out(api.CreateEnvWithCustomLogger, "OrtEnv*", _log_callback, ffi.NULL,
                       self._severity, logid.encode(), context="CreateEnvWithCustomLogger")
        self._adopt(raw, None)  # never released: see the module docstring
        survive_fork(self._guard)  # process-wide: a forked child creates sessions with it too

    #: close() does nothing: the environment lives as long as the process (see the class doc)
    _process_wide = True

    @property
    def log_severity_level(self) -> LoggingLevel:
        """ORT's minimum severity for messages sent to the ``ortc.ort`` logger."""
        return _enums.LoggingLevel(self._severity)

    @log_severity_level.setter
    @exclusive("UpdateEnvWithCustomLogLevel")
    def log_severity_level(self, level: LoggingLevel | int) -> None:
        checked = _logging_level(level)  # before ORT's level changes: a refusal changes nothing
        check(self._api.UpdateEnvWithCustomLogLevel(self._ptr, int(checked)))
        self._severity = int(checked)

    @shared("GetAvailableProviders", "ReleaseAvailableProviders")
    def providers(self) -> list[str]:
        """Execution providers compiled into the library (e.g. ``["CPUExecutionProvider"]``)."""
        return available_providers()

    @shared("EnableTelemetryEvents")
    def enable_telemetry(self) -> None:
        """Allow ORT's telemetry events (a no-op on builds without telemetry, and when
        ``ORT_DISABLE_TELEMETRY=1`` was set before the env was made, which ortc does unless the
        variable was set: see the module docstring)."""
        check(self._api.EnableTelemetryEvents(self._ptr))

    @shared("DisableTelemetryEvents")
    def disable_telemetry(self) -> None:
        """Stop ORT's telemetry events."""
        check(self._api.DisableTelemetryEvents(self._ptr))


def _logging_level(level: Any) -> LoggingLevel:
    if isinstance(level, bool) or not isinstance(level, int):
        raise InvalidArgument(f"log severity: expected an ortc.LoggingLevel or an int 0-4, got "
                              f"{type(level).__name__} {level!r}")
    try:
        return _enums.LoggingLevel(level)
    except ValueError:
        members = ", ".join(f"{m.value} {m.name}" for m in _enums.LoggingLevel)
        raise InvalidArgument(f"log severity: {level!r} is not a logging level ({members})") \
            from None


_env: Env | None = None
#: the claim on the process's Env: the first appended is the one. No lock (one a signal handler's
#: exception left held would stop every later session): two threads here at once each create
#: one, which ORT counts as two references to its one environment (neither is ever released).
_envs_made: list[Env] = []


def get_env() -> Env:
    """The process's :class:`Env`, created on first use."""
    global _env
    env = _env
    if env is None:
        made = _envs_made
        made.append(Env())
        env = _env = made[0]
    return env


def available_providers() -> list[str]:
    """Execution providers this ONNX Runtime library was built with."""
    api = _loader.api()
    names = ffi.new("char***")
    count = ffi.new("int*")
    check(api.GetAvailableProviders(names, count))
    try:
        return [cast(bytes, ffi.string(names[0][i])).decode() for i in range(count[0])]
    finally:
        check(api.ReleaseAvailableProviders(names[0], count[0]))


def _quiet_at_exit() -> None:
    # ORT may log from its static destructors after Python has finalized; calling back into a
    # finalized interpreter would crash. Raise ORT's threshold and make the callback inert.
    global _accepting_logs
    # what ORT's threads logged and the drainer has not yet handed to logging: a bounded wait
    deadline = time.monotonic() + 1.0
    while (_queued or _draining) and time.monotonic() < deadline:
        time.sleep(0.005)
    _accepting_logs = False
    env = _env
    if env is not None:
        try:
            # (not logged: logging may have shut down before this step)
            ignore(env._api.UpdateEnvWithCustomLogLevel(env._ptr, _ORT_FATAL),
                   "UpdateEnvWithCustomLogLevel", log=False)
        except Exception:  # noqa: BLE001 - an old library without the slot: nothing to do
            pass


_process.at_exit(_process.QUIET_LOGGER, _quiet_at_exit)
