"""Session options: how a session is built (threads, optimization, providers, config entries).

>>> opts = ortc.SessionOptions(intra_op_num_threads=1)              # doctest: +SKIP
>>> opts.graph_optimization_level = ortc.GraphOptimizationLevel.ENABLE_BASIC  # doctest: +SKIP

Each setting is a property built by :func:`_setting` from one row: its name, the ORT call that
applies it, its default and the C functions it uses (for the thread-rules table). Names the
class does not define are refused, so a misspelt option cannot be stored and ignored.
"""

from __future__ import annotations

import os
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterable, Mapping, NoReturn, TypeVar, \
    Union, cast, overload

import numpy as np

from . import _loader, _process
from ._cstr import INT32, INT64, UNSET, c_enum, c_integer, c_strings, config_value, fspath, \
    given_options, key_value_arrays, utf8
from ._enums import ExecutionMode, GraphOptimizationLevel, LoggingLevel
from ._ffi import ffi
from ._handle import Handle
from ._status import call_out, check
from .errors import InvalidArgument, closest_name
from .providers import provider_names
from .threads import exclusive, shared
from .value import Value

if TYPE_CHECKING:
    from .recipe import OptionsRecipe

__all__ = ["SessionOptions", "Setting", "StrPath"]

#: a file system path as options take it
StrPath = Union[str, "os.PathLike[str]"]

_Set = TypeVar("_Set", contravariant=True)
_Get = TypeVar("_Get", covariant=True)


class Setting(Generic[_Set, _Get]):
    """What a type checker sees of a SessionOptions attribute: assigned a ``_Set``, read as a
    ``_Get`` (``opts.execution_mode = 1`` reads back ``ExecutionMode.PARALLEL``), so a misspelt
    option or a wrongly typed value is a type error before it is a run-time one. At run time
    each setting is a property (:func:`_setting`)."""

    @overload
    def __get__(self, obj: None, owner: Any) -> Setting[_Set, _Get]: ...
    @overload
    def __get__(self, obj: object, owner: Any) -> _Get: ...
    def __get__(self, obj: object, owner: Any) -> Any:  # never called: _setting makes properties
        raise NotImplementedError

    def __set__(self, obj: object, value: _Set) -> None:
        raise NotImplementedError


def _bool(value: Any, what: str = "") -> bool:
    """A switch's value as it is applied and read back: True or False (2 read back as 2)."""
    if not isinstance(value, (bool, int, np.bool_)):
        raise TypeError(f"expected a bool, got {type(value).__name__}")
    return bool(value)


def _number(value: Any, what: str, low: int, high: int) -> int:
    """A plain integer setting's value: a member of one of ortc's enums is refused (TypeError),
    as c_enum refuses one of another enum: ``SessionOptions(intra_op_num_threads=
    ExecutionMode.PARALLEL)``, keywords mixed up, ran with one thread."""
    if isinstance(value, IntEnum) and type(value).__module__.split(".")[0] in ("ortc",
                                                                               _COMPAT_ENUMS):
        raise TypeError(f"{what}: expected an int, got {type(value).__name__}.{value.name}")
    return c_integer(value, what, low, high)


#: the module ortc.compat's enums say they are from (onnxruntime's), split as above
_COMPAT_ENUMS = "onnxruntime"


def _count(value: Any, what: str) -> int:
    return _number(value, what, 0, INT64[1])


#: the most threads a pool may be asked for: ORT creates what it is told, and an absurd count
#: (2**20) under an address-space limit crashes CreateSession (docs/RELIABILITY.md)
MAX_THREADS = 1 << 14


def _thread_count(value: Any, what: str) -> int:
    return _number(value, f"{what} (a thread count; 0: ORT chooses)", 0, MAX_THREADS)


def _kept_as_given(check_value: Callable[[Any, str], Any], name: str
                   ) -> Callable[[Any, str], Any]:
    """A setting's check that keeps the value as given (and reads it back as given):
    ``check_value`` (fspath, utf8) only refuses what ORT cannot take."""
    def check_setting(value: Any, what: str) -> Any:
        check_value(value, name)
        return value
    return check_setting


def _member_of(enum: type[IntEnum]) -> Callable[[Any, str], IntEnum]:
    return lambda value, what: c_enum(value, enum, what)


def _setting(name: str, apply: Callable[[SessionOptions, Any], None], default: Any,
             doc: str, slots: tuple[str, ...],
             convert: Callable[[Any, str], Any] | None = None) -> Any:
    """An attribute-style option: setting it calls ORT at once; reading returns what was set
    (after ``convert(value, what)``, which checks it: e.g. to its enum)."""

    def get(self: SessionOptions) -> Any:
        self._check_open()
        return self._values.get(name, default)

    def put(self: SessionOptions, value: Any) -> None:
        _set(self, name, value)

    put.__name__ = name
    put.__qualname__ = f"SessionOptions.{name}"  # (what tracebacks and conflicts name)
    _ROWS[name] = (apply, convert)
    return property(get, exclusive(*slots)(put), doc=doc)


#: each setting's (apply, convert) by name (the attributes _setting makes, BareOptions)
_ROWS: dict[str, tuple[Callable[[Any, Any], None], Callable[[Any, str], Any] | None]] = {}


def _convert(name: str, value: Any) -> Any:
    """``value`` checked and converted as setting ``name`` takes it."""
    convert = _ROWS[name][1]
    return convert(value, f"session option {name}") if convert is not None else value


def _set(target: Any, name: str, value: Any) -> None:
    """Set setting ``name`` on ``target`` (a SessionOptions, or a BareOptions: the setters read
    its _api, _ptr and _values only) and record the value it took."""
    value = _convert(name, value)
    _ROWS[name][0](target, value)
    target._values[name] = value


def _apply_profile_prefix(opts: SessionOptions, prefix: bytes) -> None:
    # checked when set (fspath above); passed to ORT now only when profiling is on
    if opts._values.get("enable_profiling"):
        check(opts._api.EnableProfiling(opts._ptr, prefix))


class SessionOptions(Handle):
    """How a session is built: threads, optimization, providers, config entries, ...

    Options are attributes (``opts.intra_op_num_threads = 1``) or constructor keywords
    (``SessionOptions(intra_op_num_threads=1)``); each assignment is passed to ORT at once, so a
    bad value raises there.

    Thread rules: Send, and Sync for reads: concurrent session creation with one options
    object is fine (conformance check thread.concurrent-create), except with custom-op
    domains, whose registration ORT marks not thread-safe; every setter is exclusive. ORT
    copies the options into the session, so they may be closed right after; what they reference
    (initializer values, external buffers) is handed to the session and kept alive by it.
    """

    c_type = "OrtSessionOptions"
    send = True
    sync = True
    evidence = ("read by concurrent session creations (not with custom-op domains); copied "
                "into each session; setters change it without a lock (exclusive)")

    def __init__(self, *, intra_op_num_threads: int = UNSET, inter_op_num_threads: int = UNSET,
                 execution_mode: ExecutionMode | int = UNSET,
                 graph_optimization_level: GraphOptimizationLevel | int = UNSET,
                 optimized_model_filepath: StrPath = UNSET, enable_profiling: bool = UNSET,
                 profile_file_prefix: StrPath = UNSET, enable_mem_pattern: bool = UNSET,
                 enable_cpu_mem_arena: bool = UNSET, logid: str = UNSET,
                 log_severity_level: LoggingLevel | int = UNSET, log_verbosity_level: int = UNSET,
                 use_deterministic_compute: bool = UNSET, **unknown: NoReturn) -> None:
        # each keyword is an attribute below (the same names and types); ``unknown`` is typed
        # NoReturn so that a type checker flags a misspelt one, which raises TypeError here
        options = given_options(locals(), unknown)
        self._api = _loader.api()
        raw = call_out(self._api.CreateSessionOptions, "OrtSessionOptions*")
        self._adopt(raw, self._api.ReleaseSessionOptions)
        self._values: dict[str, Any] = {}
        self._keep: list[Any] = []  # name buffers ORT refers to (the Values are in _held)
        self._providers: list[str] = []
        self._provider_options: dict[str, dict[str, str]] = {}
        self._record = OptionsRecord()  # what recipe() and pickling replay
        self._update(options)

    # Initializer values: ORT refers to their OrtValues until the options (and the sessions
    # made with them, which hold them too) are released, so they are children of the options;
    # closing one meanwhile defers its release (released at once, CreateSession read freed
    # memory: found by tests/test_fuzz.py).
    _holds = True

    def _drop_references(self) -> None:
        self._keep = []  # the values themselves were let go by the release (Handle._hold)
        self._record = OptionsRecord()  # its arrays may view those values

    def update(self, *, intra_op_num_threads: int = UNSET, inter_op_num_threads: int = UNSET,
               execution_mode: ExecutionMode | int = UNSET,
               graph_optimization_level: GraphOptimizationLevel | int = UNSET,
               optimized_model_filepath: StrPath = UNSET, enable_profiling: bool = UNSET,
               profile_file_prefix: StrPath = UNSET, enable_mem_pattern: bool = UNSET,
               enable_cpu_mem_arena: bool = UNSET, logid: str = UNSET,
               log_severity_level: LoggingLevel | int = UNSET, log_verbosity_level: int = UNSET,
               use_deterministic_compute: bool = UNSET, **unknown: NoReturn) -> SessionOptions:
        """Set several options at once. Every name and value is checked before any is
        applied: an unknown name raises TypeError naming the closest valid one, a bad value
        its error, and nothing changes."""
        return self._update(given_options(locals(), unknown))

    @staticmethod
    def _converted(settings: Mapping[str, Any]) -> dict[str, Any]:
        """``settings`` checked and converted as the attributes of those names convert what
        they are given (the same errors), not applied: for keywords checked before a
        session is made with them (ortc.compat)."""
        return {name: _convert(name, value) for name, value in settings.items()}

    def _update(self, options: Mapping[str, Any]) -> SessionOptions:
        for key in options:
            if key not in _SETTINGS:
                raise TypeError(closest_name(key, _SETTINGS, "session option"))
        self._converted(options)  # every value checked before any is applied, too
        for key, value in options.items():
            setattr(self, key, value)
        return self

    if not TYPE_CHECKING:  # hidden from type checkers, which then flag a misspelt option
        def __setattr__(self, name: str, value: Any) -> None:
            # A misspelt option (opts.enable_mem_reuse = False) must not be stored and ignored.
            if name.startswith("_") or name in _SETTINGS:
                object.__setattr__(self, name, value)
            elif hasattr(type(self), name):
                raise AttributeError(f"SessionOptions.{name} cannot be assigned")
            else:
                from ._hints import ORT_NAMES, no_attribute

                if name in ORT_NAMES["SessionOptions"]:  # opts.use_per_session_threads = False
                    raise no_attribute(self, name)
                raise AttributeError(closest_name(name, _SETTINGS, "session option"))

    # -- attribute-style settings --------------------------------------------------------------
    intra_op_num_threads: Setting[int, int] = _setting(
        "intra_op_num_threads",
        lambda s, v: check(s._api.SetIntraOpNumThreads(s._ptr, v)), 0,
        "Threads for parallelism inside an operator (0: ORT's default).",
        ("SetIntraOpNumThreads",), _thread_count)
    inter_op_num_threads: Setting[int, int] = _setting(
        "inter_op_num_threads",
        lambda s, v: check(s._api.SetInterOpNumThreads(s._ptr, v)), 0,
        "Threads for running operators in parallel (parallel execution mode only).",
        ("SetInterOpNumThreads",), _thread_count)
    execution_mode: Setting[ExecutionMode | int, ExecutionMode] = _setting(
        "execution_mode",
        lambda s, v: check(s._api.SetSessionExecutionMode(s._ptr, int(v))),
        ExecutionMode.SEQUENTIAL, "ExecutionMode.SEQUENTIAL or PARALLEL.",
        ("SetSessionExecutionMode",), _member_of(ExecutionMode))
    graph_optimization_level: Setting[GraphOptimizationLevel | int,
                                      GraphOptimizationLevel] = _setting(
        "graph_optimization_level",
        lambda s, v: check(s._api.SetSessionGraphOptimizationLevel(s._ptr, int(v))),
        GraphOptimizationLevel.ENABLE_ALL, "A GraphOptimizationLevel.",
        ("SetSessionGraphOptimizationLevel",), _member_of(GraphOptimizationLevel))
    optimized_model_filepath: Setting[StrPath, StrPath] = _setting(
        "optimized_model_filepath",
        lambda s, v: check(s._api.SetOptimizedModelFilePath(
            s._ptr, fspath(v, "optimized_model_filepath"))), "",
        "Where ORT saves the optimized model (empty: not saved).",
        ("SetOptimizedModelFilePath",), _kept_as_given(fspath, "optimized_model_filepath"))
    enable_profiling: Setting[bool, bool] = _setting(
        "enable_profiling",
        lambda s, v: check(
            s._api.EnableProfiling(s._ptr, fspath(s._values.get("profile_file_prefix",
                                                                 "onnxruntime_profile_"),
                                                "profile_file_prefix"))
            if v else s._api.DisableProfiling(s._ptr)), False,
        "Write a Chrome-trace profile (see profile_file_prefix, Session.end_profiling).",
        ("EnableProfiling", "DisableProfiling"), _bool)
    profile_file_prefix: Setting[StrPath, StrPath] = _setting(
        "profile_file_prefix",
        lambda s, v: _apply_profile_prefix(s, fspath(v, "profile_file_prefix")),
        "onnxruntime_profile_", "Prefix of the profile file's name.", ("EnableProfiling",),
        _kept_as_given(fspath, "profile_file_prefix"))
    enable_mem_pattern: Setting[bool, bool] = _setting(
        "enable_mem_pattern",
        lambda s, v: check(s._api.EnableMemPattern(s._ptr) if v
                           else s._api.DisableMemPattern(s._ptr)), True,
        "Pre-plan memory from the first run's shapes.", ("EnableMemPattern", "DisableMemPattern"),
        _bool)
    enable_cpu_mem_arena: Setting[bool, bool] = _setting(
        "enable_cpu_mem_arena",
        lambda s, v: check(s._api.EnableCpuMemArena(s._ptr) if v
                           else s._api.DisableCpuMemArena(s._ptr)), True,
        "Use an arena for CPU memory.", ("EnableCpuMemArena", "DisableCpuMemArena"), _bool)
    logid: Setting[str, str] = _setting(
        "logid", lambda s, v: check(s._api.SetSessionLogId(s._ptr, utf8(v, "logid"))), "",
        "The session's id in log messages.", ("SetSessionLogId",), _kept_as_given(utf8, "logid"))
    log_severity_level: Setting[LoggingLevel | int, LoggingLevel] = _setting(
        "log_severity_level",
        lambda s, v: check(s._api.SetSessionLogSeverityLevel(s._ptr, int(v))),
        LoggingLevel.WARNING, "Minimum severity of this session's log messages.",
        ("SetSessionLogSeverityLevel",), _member_of(LoggingLevel))
    log_verbosity_level: Setting[int, int] = _setting(
        "log_verbosity_level",
        lambda s, v: check(s._api.SetSessionLogVerbosityLevel(s._ptr, v)), 0,
        "Verbosity of VERBOSE messages (debug builds of ORT).", ("SetSessionLogVerbosityLevel",),
        lambda v, what: _number(v, what, *INT32))
    use_deterministic_compute: Setting[bool, bool] = _setting(
        "use_deterministic_compute",
        lambda s, v: check(s._api.SetDeterministicCompute(s._ptr, v)), False,
        "Prefer deterministic kernels.", ("SetDeterministicCompute",), _bool)

    # -- methods -------------------------------------------------------------------------------
    @exclusive("AddSessionConfigEntry")
    def add_session_config_entry(self, key: str, value: str) -> None:
        """Set a session config entry (e.g. ``session.intra_op.allow_spinning``).

        ``session.use_ort_model_bytes_directly`` and ``..._for_initializers`` make ORT read an
        ORT-format model given as bytes in place for the session's life: a Session keeps the
        bytes object it was given (a bytearray or memoryview: its copy) until it is released."""
        text = config_value(value, f"config entry {key!r}: the value")
        check(self._api.AddSessionConfigEntry(self._ptr, utf8(key, "config key"),
                                               utf8(text, "config value")),
              f"config entry {key!r}")
        self._record.config[key] = text

    @shared("GetSessionConfigEntry", "HasSessionConfigEntry")
    def get_session_config_entry(self, key: str) -> str | None:
        """A config entry's value, or None when unset."""
        has = ffi.new("int*")
        ckey = utf8(key, "config key")
        check(self._api.HasSessionConfigEntry(self._ptr, ckey, has))
        if not has[0]:
            return None
        size = ffi.new("size_t*")
        check(self._api.GetSessionConfigEntry(self._ptr, ckey, ffi.NULL, size))
        buf = ffi.new("char[]", size[0])
        check(self._api.GetSessionConfigEntry(self._ptr, ckey, buf, size))
        return cast(bytes, ffi.string(buf)).decode()

    @exclusive("AddFreeDimensionOverrideByName")
    def add_free_dimension_override_by_name(self, name: str, value: int) -> None:
        """Fix the symbolic dimension ``name`` to ``value`` (once: ORT keeps a name's first
        override, so another value for it raises InvalidArgument)."""
        size = _count(value, f"free dimension {name!r}")
        self._refuse_another_override("name", name, size)
        check(self._api.AddFreeDimensionOverrideByName(
            self._ptr, utf8(name, "free dimension name"), size))
        self._record.free_dimensions[("name", name)] = size

    @exclusive("AddFreeDimensionOverride")
    def add_free_dimension_override(self, denotation: str, value: int) -> None:
        """Fix every dimension with this denotation (e.g. ``DATA_BATCH``) to ``value`` (once,
        as by name)."""
        size = _count(value, f"free dimension denotation {denotation!r}")
        self._refuse_another_override("denotation", denotation, size)
        check(self._api.AddFreeDimensionOverride(
            self._ptr, utf8(denotation, "dimension denotation"), size))
        self._record.free_dimensions[("denotation", denotation)] = size

    def _refuse_another_override(self, kind: str, name: str, size: int) -> None:
        # ORT applies a name's first override and ignores later ones: a second value would be
        # ignored by this session and, recorded, taken by one made from the recipe
        first = self._record.free_dimensions.get((kind, name))
        if first is not None and first != size:
            raise InvalidArgument(f"free dimension {kind} {name!r} is overridden to {first} "
                                  f"already (ORT keeps the first override): {size} refused")

    @exclusive("AddInitializer", args={"value": "shared"})
    def add_initializer(self, name: str, value: Value | np.ndarray[Any, Any]) -> None:
        """Replace the initializer ``name`` with ``value`` (kept alive for the session).

        A numpy array is shared, not copied (as onnxruntime shares an OrtValue's memory): ORT
        reads the initializer from the array's memory for as long as the session lives, so
        writing into the array later changes what the session computes (where ORT did not
        copy the weight itself, e.g. into a prepacked form), and a pickle of the options or
        of the session carries the array's contents as they are when it is pickled. Pass
        ``array.copy()`` to keep the two apart. An array numpy cannot hand over as it is (not
        C-contiguous, another byte order) is copied once, and that copy is what is shared."""
        v = value if isinstance(value, Value) else Value.from_numpy(value)
        v._check_open()
        v._require_tensor(f"initializer {name!r}")  # an empty optional crashed AddInitializer
        keep = ffi.new("char[]", utf8(name, "initializer name"))
        check(self._api.AddInitializer(self._ptr, keep, v._ptr), f"initializer {name!r}")
        self._hold(v)
        self._keep.append(keep)
        self._record.initializers.append((name, _recorded(value, v), int(v.element_type)))

    @exclusive("AddExternalInitializers")
    def add_external_initializers(self, initializers: Mapping[str, Value | np.ndarray[Any, Any]]
                                  ) -> None:
        """Supply initializers stored outside the model, by name (kept alive for the session).
        Numpy arrays are shared with the session, as in :meth:`add_initializer`."""
        values = [v if isinstance(v, Value) else Value.from_numpy(v)
                  for v in initializers.values()]
        for name, v in zip(initializers, values):
            v._check_open()
            v._require_tensor(f"initializer {name!r}")  # an empty optional crashed ORT
        names, bufs = c_strings(initializers, "initializer name")
        ptrs = ffi.new("OrtValue*[]", [v._ptr for v in values])
        check(self._api.AddExternalInitializers(
            self._ptr, names,
            ffi.cast("const OrtValue* const*", ptrs), len(values)))
        for v in values:
            self._hold(v)
        self._record.external.append(tuple(
            (name, _recorded(given, v), int(v.element_type))
            for (name, given), v in zip(initializers.items(), values)))

    @exclusive("RegisterCustomOpsLibrary_V2")
    def register_custom_ops_library(self, path: str | os.PathLike[str]) -> None:
        """Load a shared library of custom operators (a file cut short is refused, as
        :func:`ortc.load` refuses one: loading it would kill the process)."""
        cpath = fspath(path, "custom op library")
        given = os.fsdecode(os.fspath(path))  # a bare name is left to dlopen's search path
        _loader.refuse_truncated(given, "custom op library")
        check(self._api.RegisterCustomOpsLibrary_V2(self._ptr, cpath),
              f"custom op library {os.fspath(path)!r}")
        self._record.libraries.append(os.path.abspath(given) if os.sep in given else given)

    @exclusive("DisablePerSessionThreads")
    def disable_per_session_threads(self) -> None:
        """Use the env's global thread pools instead of per-session ones."""
        check(self._api.DisablePerSessionThreads(self._ptr))
        self._record.per_session_threads = False

    @exclusive("SessionOptionsAppendExecutionProvider",
               "SessionOptionsAppendExecutionProvider_CUDA_V2",
               "SessionOptionsAppendExecutionProvider_TensorRT_V2")
    def append_execution_provider(self, name: str, options: Mapping[str, Any] | None = None
                                  ) -> None:
        """Add an execution provider by name (``"CUDAExecutionProvider"``, ``"XNNPACK"``, ...)
        with string options. The CPU provider is always present as the fallback."""
        opts = _provider_options(name, options)
        given = dict(opts)
        short, canonical = provider_names(name)
        api = self._api
        _refuse_truncated_provider_libraries(api, short, opts)
        if short == "CPU":
            if "use_arena" in opts:
                switch = opts.pop("use_arena")
                if switch not in _SWITCHES:  # "off", "no": no word ORT reads is left unread
                    raise InvalidArgument(f"CPUExecutionProvider option 'use_arena': expected "
                                          f"'1' or '0' ('true' or 'false'), got {switch!r}")
                self.enable_cpu_mem_arena = _SWITCHES[switch]
            if opts:
                raise InvalidArgument(f"CPUExecutionProvider: unknown options {sorted(opts)}")
        elif short in ("CUDA", "TensorRT"):
            kind = short
            create = getattr(api, f"Create{kind}ProviderOptions")
            update = getattr(api, f"Update{kind}ProviderOptions")
            append = getattr(api, f"SessionOptionsAppendExecutionProvider_{kind}_V2")
            release = getattr(api, f"Release{kind}ProviderOptions")
            c_type = "OrtCUDAProviderOptionsV2*" if kind == "CUDA" else \
                "OrtTensorRTProviderOptionsV2*"
            prov = call_out(create, c_type, context=name)
            try:
                keys, vals, _bufs = key_value_arrays(opts, f"{name} option")
                check(update(prov, keys, vals, len(opts)), name)
                check(append(self._ptr, prov), name)
            finally:
                release(prov)
        else:
            keys, vals, _bufs = key_value_arrays(opts, f"{name} option")
            check(api.SessionOptionsAppendExecutionProvider(
                self._ptr, utf8(short, "execution provider"), keys, vals, len(opts)),
                f"execution provider {name!r}")
        if canonical not in self._providers:
            self._providers.append(canonical)
        self._provider_options[canonical] = given

    @property
    def providers(self) -> list[str]:
        """Providers appended so far, in priority order (CPU, the fallback, not listed)."""
        return list(self._providers)

    @shared("CloneSessionOptions")
    def clone(self) -> SessionOptions:
        """An independent copy (the referenced initializers are shared, not copied)."""
        new = SessionOptions.__new__(SessionOptions)
        new._api = self._api
        raw = call_out(self._api.CloneSessionOptions, "OrtSessionOptions*", self._ptr)
        new._adopt(raw, self._api.ReleaseSessionOptions)
        new._values = dict(self._values)
        new._keep = list(self._keep)
        for value in self._held or ():
            new._hold(value)
        new._providers = list(self._providers)
        new._provider_options = {k: dict(v) for k, v in self._provider_options.items()}
        new._record = self._record.copy()
        return new

    # -- recipes and pickling (see ortc/recipe.py) ---------------------------------------------
    @shared()
    def recipe(self) -> OptionsRecipe:
        """Every setting made so far, as plain immutable data (initializers as read-only
        arrays over the same memory); ``SessionOptions.from_recipe`` replays it."""
        from .recipe import OptionsRecipe

        return OptionsRecipe(*self._record.freeze(self._values, self._providers,
                                                  self._provider_options))

    @classmethod
    def from_recipe(cls, recipe: OptionsRecipe) -> SessionOptions:
        """New options with every setting of ``recipe`` applied (each checked again)."""
        from .recipe import OptionsRecipe, apply_options

        if not isinstance(recipe, OptionsRecipe):
            raise TypeError(f"expected an ortc OptionsRecipe, not {type(recipe).__name__}")
        opts = cls()
        try:
            return apply_options(recipe, opts)  # type: ignore[no-any-return]
        except BaseException:
            opts.close()
            raise

    def __reduce__(self) -> tuple[Any, ...]:
        # by value: the settings, not the ORT object (pickling a closed one raises ClosedError)
        return (_options_from_recipe, (self.recipe(),))


#: the names settable as attributes or keywords
_SETTINGS = frozenset(k for k, v in vars(SessionOptions).items()
                      if isinstance(v, property) and v.fset is not None)


def _recorded(given: Any, value: Value) -> np.ndarray[Any, Any]:
    """The array a recipe keeps for an initializer: the user's own array when one was given
    (no new reference to the Value), else a view of the Value (it defers its release)."""
    from .recipe import frozen_array

    return frozen_array(given if isinstance(given, np.ndarray) else value.numpy())


def _options_from_recipe(recipe: OptionsRecipe) -> SessionOptions:
    """Unpickling: new options from a checked recipe (see ortc/recipe.py)."""
    return SessionOptions.from_recipe(recipe)


# -- what SessionOptions records as it is set ---------------------------------------------------
# (plain data only: the recipe dataclasses are made from it on demand, so that a session that
# never asks for its recipe does not import ortc.recipe: making its two dataclasses was 0.8 ms
# of the cold start)

#: providers ORT loads from a shared library beside its own when one is first appended
#: (``libonnxruntime_providers_<name>.so``, after ``libonnxruntime_providers_shared.so``)
_PROVIDER_LIBRARIES = {"cuda": "cuda", "tensorrt": "tensorrt", "openvino": "openvino",
                       "migraphx": "migraphx", "vitisai": "vitisai", "qnn": "qnn",
                       "cann": "cann", "dnnl": "dnnl", "rocm": "rocm",
                       "nvtensorrtrtx": "nv_tensorrt_rtx"}
#: provider options whose values name shared objects the provider loads (';' between several)
_LIBRARY_OPTIONS = ("backend_path", "trt_engine_decryption_lib_path",
                    "trt_extra_plugin_lib_paths")


def _refuse_truncated_provider_libraries(api: Any, short: str, opts: Mapping[str, Any]) -> None:
    """The shared objects appending provider ``short`` makes ORT load go through the checks
    ortc.load makes (a file cut short kills the process inside dlopen)."""
    for key in _LIBRARY_OPTIONS:
        for path in str(opts.get(key, "")).split(";"):
            _loader.refuse_truncated(path, f"{short} option {key!r}:")
    suffix = _PROVIDER_LIBRARIES.get(short.lower())
    if suffix is not None:
        folder = os.path.dirname(api.info.path)
        for file in ("libonnxruntime_providers_shared.so", f"libonnxruntime_providers_{suffix}.so"):
            _loader.refuse_truncated(os.path.join(folder, file), f"{short} provider library")


class OptionsRecord:
    """The mutable log a SessionOptions keeps next to its ORT object (one per options object;
    ``clone`` copies it). ``freeze`` copies it into the fields of an OptionsRecipe, in order."""

    __slots__ = ("config", "free_dimensions", "initializers", "external", "libraries",
                 "per_session_threads")

    def __init__(self) -> None:
        self.config: dict[str, str] = {}
        self.free_dimensions: dict[tuple[str, str], int] = {}
        self.initializers: list[tuple[str, np.ndarray[Any, Any], int]] = []
        self.external: list[tuple[tuple[str, np.ndarray[Any, Any], int], ...]] = []
        self.libraries: list[str] = []
        self.per_session_threads = True

    def copy(self) -> OptionsRecord:
        new = OptionsRecord()  # the arrays are shared: they are read-only views
        new.config = dict(self.config)
        new.free_dimensions = dict(self.free_dimensions)
        new.initializers = list(self.initializers)
        new.external = list(self.external)
        new.libraries = list(self.libraries)
        new.per_session_threads = self.per_session_threads
        return new

    def freeze(self, values: Mapping[str, Any], providers: Iterable[str],
               provider_options: Mapping[str, Mapping[str, str]]) -> tuple[Any, ...]:
        """The OptionsRecipe fields (settings, config entries, free dimensions, initializers,
        external initializers, custom-op libraries, per-session threads, providers)."""
        return (_frozen_settings(values),
                tuple(self.config.items()),
                tuple((kind, name, size) for (kind, name), size in self.free_dimensions.items()),
                tuple(self.initializers),
                tuple(self.external),
                tuple(self.libraries),
                self.per_session_threads,
                tuple((p, tuple(sorted(provider_options.get(p, {}).items())))
                      for p in providers))


class BareOptions:
    """Keyword settings applied to a bare ORT options object for session creation
    (``Session(model, intra_op_num_threads=1)``): checked, converted and applied as the
    SessionOptions attributes of those names do, without that class's handle, guard and
    record, which cost as much again as the rest of a small model's session. Nothing changes
    it once made: ORT only reads options while it makes a session, and several creations may
    read one at once (conformance check thread.concurrent-create), so :func:`bare_options`
    keeps one per settings for the sessions made with them. The ORT object goes with the last
    reference (a creation in progress holds one)."""

    __slots__ = ("_api", "_ptr", "_values", "frozen")

    def __init__(self, api: Any, settings: Mapping[str, Any]) -> None:
        self._api = api
        self._values: dict[str, Any] = {}
        self._ptr = ffi.gc(call_out(api.CreateSessionOptions, "OrtSessionOptions*"),
                           api.ReleaseSessionOptions)
        try:
            for name, value in settings.items():
                _set(self, name, value)
        except BaseException:
            ffi.release(self._ptr)
            raise
        #: the OptionsRecipe fields of these settings (as OptionsRecord.freeze makes them)
        self.frozen: tuple[Any, ...] = (_frozen_settings(self._values), *_NOTHING_FROZEN)


#: BareOptions by their settings (name, the value's type, the value; in the order given), for
#: settings whose every value converts alike every time (_converts_alike): an object of
#: another type could convert otherwise next time (an ``__index__`` over changing state).
#: Bounded: past _BARE_MAX the keep restarts
_bare: dict[tuple[Any, ...], BareOptions] = _process.emptied(__name__, "_bare", {})
_BARE_MAX = 16
_IMMUTABLE = (int, bool, float, str)
#: what the settings' checks convert an int-like value with (c_integer, _bool, _plain)
_INT_CONVERSIONS = ("__index__", "__int__", "__bool__")


def _converts_alike(kind: type) -> bool:
    """Whether every value of type ``kind`` is checked and converted by its value alone: the
    builtins, and IntEnums whose conversions are int's (ortc's, onnxruntime's, a library's).
    Not an Enum of another kind, nor an IntEnum defining a conversion of its own: either
    converts however its methods say (a member's ``__index__`` may count), so equal members
    must be converted anew each time, as a new options object would."""
    if kind in _IMMUTABLE:
        return True
    return issubclass(kind, IntEnum) and all(
        getattr(kind, name) is getattr(int, name) for name in _INT_CONVERSIONS)


def bare_options(api: Any, settings: Mapping[str, Any]) -> BareOptions:
    """The BareOptions of ``settings``: the one made before for equal settings whose values
    convert alike every time (a session made per call converts and applies them once), else
    new ones."""
    key = tuple([(name, type(value), value) for name, value in settings.items()])
    if not all([_converts_alike(t) for _, t, _ in key]):
        return BareOptions(api, settings)
    bare = _bare.get(key)
    if bare is None:
        bare = BareOptions(api, settings)
        if len(_bare) >= _BARE_MAX:
            _bare.clear()
        _bare[key] = bare
    return bare


def _frozen_settings(values: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The OptionsRecipe field of the settings ``values`` (name -> value as set)."""
    return tuple([(k, _plain(v)) for k, v in values.items()])


def _plain(value: Any) -> Any:
    # IntEnums become ints, paths str: a recipe refers to no class but the builtins
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (os.PathLike, bytes)):
        return os.fsdecode(os.fspath(value))
    return value


#: an empty record's OptionsRecipe fields after the settings: what options set by keywords
#: alone record beside their values (frozen once: every such session's recipe has them)
_NOTHING_FROZEN = OptionsRecord().freeze({}, (), {})[1:]


_SWITCHES = {"1": True, "0": False, "true": True, "false": False, "True": True, "False": False}


def _provider_options(name: str, options: Any) -> dict[str, str]:
    """A provider's options as the strings ORT takes: str keys; str, int or float values.
    ``None`` and bools are refused rather than written as words ORT reads as neither on nor
    off (``{"use_arena": None}`` left the arena on without a word: found from outside)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"{name}: provider options must be a mapping of str to str, not "
                        f"{type(options).__name__}")
    out = {}
    for k, v in options.items():
        if not isinstance(k, str):
            raise TypeError(f"{name}: provider option names must be str, got {k!r}")
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise TypeError(f"{name} option {k!r}: expected a str or a number (switches "
                            f"are '1' or '0'), got {type(v).__name__} {v!r}")
        out[k] = str(v)
    return out

