"""Run options: a tag, log levels, config entries, LoRA adapters, and termination; and the
checks every run entry point makes of the ``run_options`` it is given.

>>> ro = ortc.RunOptions(tag="batch-7")                             # doctest: +SKIP
>>> sess.run(None, feeds, ro)           # ro.terminate() from another thread stops it  # doctest: +SKIP
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, NoReturn, cast

from . import _enums, _loader, _process
from ._cstr import INT32, UNSET, c_enum, c_integer, config_value, given_options, utf8
from ._ffi import ffi
from ._handle import Handle
from ._status import call_out, check, ignore
from .errors import closest_name
from .threads import exclusive, shared

if TYPE_CHECKING:
    from ._enums import LoggingLevel

__all__ = ["RunOptions", "checked_run_options", "checked_timeout", "main_run_options"]

#: ORT's run log severity until one is set: the session's level applies
_UNSET_SEVERITY = -1


class RunOptions(Handle):
    """Options for one or many runs: a tag, log levels, config entries, and termination.

    Thread rules: Send and Sync. One RunOptions may serve many concurrent runs;
    :meth:`terminate` and :meth:`unset_terminate` are shared and meant to be called from another
    thread while runs are in flight. Setters are exclusive (they must not overlap a run that
    reads the options).
    """

    c_type = "OrtRunOptions"
    send = True
    sync = True
    evidence = ("read by every run that uses it; terminate may be set from any thread while "
                "runs are in flight; other setters are exclusive")

    _holds = True  # active LoRA adapters: ORT keeps raw pointers to them
    #: whether terminate() was called last (not unset_terminate()): a stand-in starts so
    _terminated = False
    #: the stand-in the main thread's runs with these options use (made on first need; see
    #: :meth:`_stand_in`)
    _main_copy: RunOptions | None = None
    #: terminated by the exit drain whether or not a run is using it (worker_run_options)
    _stop_at_exit = False

    def __init__(self, *, tag: str = UNSET,
                 log_severity_level: LoggingLevel | int | None = UNSET,
                 log_verbosity_level: int = UNSET, **unknown: NoReturn) -> None:
        # each keyword is an attribute below (the same names and types); ``unknown`` is typed
        # NoReturn so that a type checker flags a misspelt one, which raises TypeError here
        options = given_options(locals(), unknown)
        self._api = _loader.api()
        raw = call_out(self._api.CreateRunOptions, "OrtRunOptions*")
        self._adopt(raw, self._api.ReleaseRunOptions)
        self._config: dict[str, str] = {}  # run config entries, for pickling by value
        #: the stand-ins in use (:meth:`_stand_in`): terminate() reaches them too
        self._copies: list[RunOptions] = []
        for key in options:  # every name checked before any is applied
            if key not in _SETTINGS:
                raise TypeError(closest_name(key, _SETTINGS, "run option"))
        for key, value in options.items():
            setattr(self, key, value)

    if not TYPE_CHECKING:  # hidden from type checkers, which then flag a misspelt option
        def __setattr__(self, name: str, value: Any) -> None:
            # ``ro.terminate = True`` would replace the method and stop nothing: refuse it, and
            # any misspelt setting, instead of storing it.
            if name.startswith("_") or name in _SETTINGS:
                object.__setattr__(self, name, value)
            elif name in ("terminate", "unset_terminate"):
                raise AttributeError(f"RunOptions.{name} is a method, not a flag: call "
                                     f"run_options.{name}() (from any thread)")
            elif hasattr(type(self), name):
                raise AttributeError(f"RunOptions.{name} cannot be assigned")
            else:
                from ._hints import ORT_NAMES, no_attribute

                if name in ORT_NAMES["RunOptions"]:  # ro.logid = "x"
                    raise no_attribute(self, name)
                raise AttributeError(closest_name(name, _SETTINGS, "run option"))

    @property
    @shared("RunOptionsGetRunTag")
    def tag(self) -> str:
        out = ffi.new("char**")
        check(self._api.RunOptionsGetRunTag(self._ptr, ffi.cast("const char**", out)))
        return cast(bytes, ffi.string(out[0])).decode() if out[0] != ffi.NULL else ""

    @tag.setter
    @exclusive("RunOptionsSetRunTag")
    def tag(self, value: str) -> None:
        self._forget_main_copy()
        check(self._api.RunOptionsSetRunTag(self._ptr, utf8(value, "run tag")))

    @property
    @shared("RunOptionsGetRunLogSeverityLevel")
    def log_severity_level(self) -> LoggingLevel | None:
        """The runs' log severity; None until set (runs log at their session's level)."""
        out = ffi.new("int*")
        check(self._api.RunOptionsGetRunLogSeverityLevel(self._ptr, out))
        # ORT keeps -1 until it is set: read as a LoggingLevel, the fresh options' value raised
        return None if out[0] < 0 else _enums.LoggingLevel(out[0])

    @log_severity_level.setter
    @exclusive("RunOptionsSetRunLogSeverityLevel")
    def log_severity_level(self, value: LoggingLevel | int | None) -> None:
        self._forget_main_copy()
        if value is None:  # back to unset (what the getter reads as None)
            level = _UNSET_SEVERITY
        else:
            level = int(c_enum(value, _enums.LoggingLevel, "run option log_severity_level"))
        check(self._api.RunOptionsSetRunLogSeverityLevel(self._ptr, level))

    @property
    @shared("RunOptionsGetRunLogVerbosityLevel")
    def log_verbosity_level(self) -> int:
        out = ffi.new("int*")
        check(self._api.RunOptionsGetRunLogVerbosityLevel(self._ptr, out))
        return int(out[0])

    @log_verbosity_level.setter
    @exclusive("RunOptionsSetRunLogVerbosityLevel")
    def log_verbosity_level(self, value: int) -> None:
        self._forget_main_copy()
        check(self._api.RunOptionsSetRunLogVerbosityLevel(
            self._ptr, c_integer(value, "run option log_verbosity_level", *INT32)))

    # (ahead of waiters: it ends the runs that a waiting setter or close waits for)
    @shared("RunOptionsSetTerminate", ahead_of_waiters=True)
    def terminate(self) -> None:
        """Make every run using these options fail soon (ORT returns FAIL: :class:`ortc.Fail`);
        callable from any thread while runs are in flight."""
        self._terminate_now(checked=True)

    @shared("RunOptionsUnsetTerminate")
    def unset_terminate(self) -> None:
        """Allow runs again after :meth:`terminate`."""
        self._unset_now(checked=True)

    # The bodies of terminate() and unset_terminate(), also used unguarded by ortc's watcher
    # thread (Ctrl-C, deadlines), so that it can never wait on a lock held by the thread it is
    # stopping, and by a run for its stand-in: a closed object is simply skipped. ``checked``:
    # a failure raises (a caller's call, a run's thread); else it is ignored (the watcher, the
    # exit drain: nobody to raise to).
    def _terminate_now(self, checked: bool = False) -> None:
        ptr = self._ptr
        if ptr != ffi.NULL:
            status = self._api.RunOptionsSetTerminate(ptr)
            if checked:
                check(status)
            else:
                ignore(status, "RunOptionsSetTerminate", log=False)
            self._terminate_copies()  # (the exit drain's runs in flight use stand-ins too)

    def _terminate_copies(self) -> None:
        """After ORT's terminate of these: the stand-ins in use (:meth:`_stand_in`) too. The
        flag first, then the stand-ins: a run making one meanwhile links it before it reads
        the flag, so one of the two terminates it."""
        self._terminated = True
        for copy in tuple(self._copies):
            copy._terminate_now()

    def _unset_now(self, checked: bool = False) -> None:
        ptr = self._ptr
        if ptr != ffi.NULL:
            # (idempotent: the watcher's re-arm after Ctrl-C or a deadline may be done again)
            status = self._api.RunOptionsUnsetTerminate(ptr)
            if checked:
                check(status)
            else:
                ignore(status, "RunOptionsUnsetTerminate", log=False)
            self._terminated = False

    # -- stand-ins: what a deadline or Ctrl-C terminates in place of options others share ----
    def _stand_in(self, main: bool) -> RunOptions:
        """Options with these settings for one run that a deadline (or, ``main``, Ctrl-C on
        the main thread) may stop without stopping the other runs using these: ORT's terminate
        flag belongs to the options, and the caller's options may serve other threads' runs
        (a Ctrl-C failed them all). :meth:`terminate` reaches the stand-in too, and one made
        while these are terminated starts terminated. The main thread's is made once and kept
        (until a setter changes these); another is the run's own, given back with
        :meth:`_drop_copy`. Called inside a run that holds these options (so no setter runs
        meanwhile)."""
        if main:
            copy = self._main_copy
            if copy is None:
                made = self._copy_settings()
                # (a signal handler's run on the main thread may make one meanwhile: the first
                # stored is kept)
                copy = self.__dict__.setdefault("_main_copy", made)
                if copy is made:
                    self._copies.append(made)
                else:
                    made.close()
            # what a Ctrl-C or an earlier terminate() left (on the run's thread: a failure
            # is the run's to raise, not to ignore as the watcher's re-arm does)
            copy._unset_now(checked=True)
        else:
            copy = self._copy_settings()
            self._copies.append(copy)
        if self._terminated:  # linked first, read after: see _terminate_copies()
            copy._terminate_now(checked=True)
        return copy

    def _copy_settings(self) -> RunOptions:
        """New options with these settings: tag, log levels, config entries, LoRA adapters."""
        severity = ffi.new("int*")  # -1 until set (ORT's "use the session's level")
        check(self._api.RunOptionsGetRunLogSeverityLevel(self._ptr, severity))
        copy = RunOptions(tag=self.tag, log_verbosity_level=self.log_verbosity_level)
        if severity[0] >= 0:
            copy.log_severity_level = int(severity[0])
        for key, value in self._config.items():
            copy.add_run_config_entry(key, value)
        for adapter in tuple(self._held or ()):  # (what these hold: their active adapters)
            # (not add_active_lora_adapter: an adapter closed since, whose release these
            # options defer, is still ORT's to use, and the copy defers it as well)
            check(self._api.RunOptionsAddActiveLoraAdapter(copy._ptr, adapter._ptr))
            copy._hold(adapter)
        return copy

    def _drop_copy(self, copy: RunOptions, close: bool = True) -> None:
        """Take a stand-in that :meth:`_stand_in` made off the list (its run is over) and
        release it, unless ``close`` is False (a run_async's Future took it for its cancel:
        it goes with the Future)."""
        try:
            self._copies.remove(copy)
        except ValueError:
            pass
        if close:
            copy.close()

    def _forget_main_copy(self) -> None:
        """Drop the main thread's stand-in: these settings change (in a setter, which no run
        overlaps), or these options are released."""
        copy = self.__dict__.pop("_main_copy", None)
        if copy is not None:
            self._drop_copy(copy)

    def _drop_references(self) -> None:
        self._forget_main_copy()

    @exclusive("RunOptionsAddActiveLoraAdapter", args={"adapter": "shared"})
    def add_active_lora_adapter(self, adapter: Any) -> None:
        """Make ``adapter`` (an :class:`ortc.LoraAdapter`) active for every run using these
        options: its tensors feed the inputs of their names. The options keep it alive."""
        from .lora import check_adapter  # a first session does not import lora

        check_adapter(adapter)
        self._forget_main_copy()
        check(self._api.RunOptionsAddActiveLoraAdapter(self._ptr, adapter._ptr))
        self._hold(adapter)

    @exclusive("AddRunConfigEntry")
    def add_run_config_entry(self, key: str, value: str) -> None:
        """Set a run config entry (e.g. ``memory.enable_memory_arena_shrinkage``)."""
        text = config_value(value, f"run config entry {key!r}: the value")
        self._forget_main_copy()
        check(self._api.AddRunConfigEntry(self._ptr, utf8(key, "run config key"),
                                           utf8(text, "run config value")),
              f"run config entry {key!r}")
        self._config[key] = text

    @shared("GetRunConfigEntry")
    def get_run_config_entry(self, key: str) -> str | None:
        """A run config entry's value, or None when unset (needs ORT 1.23)."""
        out = self._api.GetRunConfigEntry(self._ptr, utf8(key, "run config key"))
        return cast(bytes, ffi.string(out)).decode() if out != ffi.NULL else None

    def __reduce__(self) -> tuple[Any, ...]:
        # by value: tag, log levels and config entries (not the terminate flag, a run state)
        if self._held:
            raise TypeError("cannot pickle ortc.RunOptions with active LoRA adapters: the "
                            "adapters are ORT objects of this process; add them again after "
                            "unpickling")
        severity = ffi.new("int*")  # -1 until set (ORT's "use the session's level")
        check(self._api.RunOptionsGetRunLogSeverityLevel(self._ptr, severity))
        return (_run_options_from_state, (self.tag, int(severity[0]), self.log_verbosity_level,
                                          tuple(self._config.items())))


def _run_options_from_state(tag: Any, severity: Any, verbosity: Any, config: Any) -> RunOptions:
    """Unpickling: new RunOptions from checked plain state."""
    if not (type(tag) is str and type(severity) is int and type(verbosity) is int
            and type(config) is tuple
            and all(type(e) is tuple and len(e) == 2 and type(e[0]) is str
                    and type(e[1]) is str for e in config)):
        raise TypeError("malformed pickled RunOptions: expected (str, int, int, "
                        "((str, str), ...))")
    ro = RunOptions(tag=tag, log_verbosity_level=verbosity)
    if severity >= 0:
        ro.log_severity_level = severity
    for key, value in config:
        ro.add_run_config_entry(key, value)
    return ro


#: the names settable as attributes or keywords
_SETTINGS = frozenset(k for k, v in vars(RunOptions).items()
                      if isinstance(v, property) and v.fset is not None)


def checked_run_options(run_options: Any) -> Any:
    """``run_options`` if it is None or a RunOptions, else TypeError. Every run entry point
    calls this first; whether the options are still open is checked where the run enters
    their guard (a closed one raises ClosedError there, after the feeds were checked)."""
    if run_options is None or type(run_options) is RunOptions or \
            isinstance(run_options, RunOptions):
        return run_options
    raise TypeError(f"run_options must be an ortc.RunOptions or None, not "
                    f"{type(run_options).__name__}")


def checked_timeout(timeout: Any) -> float | None:
    """``timeout`` as float seconds if it is None or a real number >= 0 (numpy's scalars too,
    as computed timeouts often are), else ValueError; a bool is not a number of seconds."""
    if timeout is None:
        return None
    if type(timeout) is float:
        seconds = timeout
    elif isinstance(timeout, numbers.Real) and not isinstance(timeout, bool):
        try:
            seconds = float(timeout)
        except OverflowError:  # an int beyond float: as good as forever
            seconds = float("inf")
    else:
        seconds = float("nan")
    if not seconds >= 0:  # nan too
        raise ValueError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
    return seconds + 0.0  # -0.0 is 0.0 ("did not finish within -0.0 s")


_main_options: RunOptions | None = None
#: the claim on the main thread's RunOptions: the first appended is the one (list.append is one
#: atomic step: no lock, which a signal handler's exception could leave held)
_main_options_made: list[RunOptions] = []


def main_run_options() -> RunOptions:
    """The RunOptions of main-thread runs that pass none, so Ctrl-C has something to stop."""
    global _main_options
    options = _main_options
    if options is None:
        # A signal handler that runs a model while the main thread is in here makes its own
        # and may claim first: both then use the first one claimed (the other is dropped).
        made = _main_options_made
        made.append(RunOptions(tag="ortc-main"))
        options = _main_options = made[0]
    return options


#: the RunOptions of runs on other threads that pass none (see :func:`worker_run_options`)
_worker_options: RunOptions | None = None
_worker_options_made: list[RunOptions] = []


def worker_run_options() -> RunOptions:
    """The RunOptions of runs off the main thread that pass none, one for them all: the exit
    drain (ortc._guard) terminates it. A run with no options could not be stopped, and one
    still inside ORT when the interpreter finalized ran on under ORT's static destructors
    (SIGSEGV at ``sys.exit`` with daemon threads in long runs)."""
    global _worker_options
    options = _worker_options
    if options is None:
        mine = RunOptions(tag="ortc-worker")
        mine._stop_at_exit = True
        made = _worker_options_made
        made.append(mine)
        options = _worker_options = made[0]  # threads racing here all use the first claimed
        if options is not mine:  # (nobody else has it: released now, not kept for good)
            made.remove(mine)
            mine.close()
    return options


def _main_options_after_fork() -> None:
    # The child's main thread is the one that forked, and the parent's options may be in any
    # state at that instant (terminated by a Ctrl-C its main thread's run has not yet re-armed):
    # the child makes its own on first use (the parent's are not released there, _handle).
    global _main_options, _main_options_made, _worker_options, _worker_options_made
    _main_options = None
    _main_options_made = []
    _worker_options = None
    _worker_options_made = []


_process.at_fork(_main_options_after_fork, __name__, _main_options=_process.RESET,
                 _main_options_made=_process.RESET, _worker_options=_process.RESET,
                 _worker_options_made=_process.RESET)
