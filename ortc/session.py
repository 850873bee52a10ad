"""Inference sessions, their options, and per-run options.

>>> sess = ortc.Session("model.onnx", intra_op_num_threads=1)        # doctest: +SKIP
>>> [y] = sess.run(None, {"x": np.ones((1, 3), np.float32)})          # doctest: +SKIP
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import _loader
from ._enums import ElementType, ExecutionMode, GraphOptimizationLevel, LoggingLevel, ValueKind
from ._ffi import ffi
from ._handle import Handle, _tree_lock
from ._loader import Api
from ._status import call_out, check, error_from_status, ignore, raise_status
from .dtypes import STRING_KINDS, bits_for, element_type_for
from .env import Env, get_env
from ._interrupt import watcher
from .errors import ClosedError, InvalidArgument, OrtError, RunTimeout
from .providers import provider_names, session_run_rule
from .memory import Allocator, MemoryInfo, cpu_memory_info, default_allocator
from . import threads as _threads
from .threads import Lease, exclusive, shared
from .typeinfo import ModelMetadata, NodeArg, read_metadata, take_type_info
from .value import Value, array_to_ortvalue, ortvalue_to_python, scratch, tensor_to_numpy

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["Session", "SessionOptions", "RunOptions", "read_key_values", "ModelSource"]

ModelSource = Any  # str | os.PathLike | bytes | bytearray | memoryview | a binary file object


def read_key_values(api: Api, kvp: Any, release: bool) -> dict[str, str]:
    """Copy an ``OrtKeyValuePairs*`` into a dict (and release it when asked)."""
    try:
        keys = ffi.new("char***")
        values = ffi.new("char***")
        n = ffi.new("size_t*")
        api.GetKeyValuePairs(kvp, ffi.cast("const char* const**", keys),
                             ffi.cast("const char* const**", values), n)
        return {ffi.string(keys[0][i]).decode(): ffi.string(values[0][i]).decode()
                for i in range(n[0])}
    finally:
        if release:
            api.ReleaseKeyValuePairs(kvp)


def _utf8(text: Any, what: str) -> bytes:
    """``text`` as the NUL-free UTF-8 C string ORT takes, or InvalidArgument naming ``what``."""
    if not isinstance(text, str):
        raise InvalidArgument(f"{what} must be str, got {type(text).__name__}")
    try:
        data = text.encode()
    except UnicodeEncodeError as exc:
        raise InvalidArgument(f"{what} {text!r} is not encodable as UTF-8: {exc}") from None
    if b"\0" in data:
        raise InvalidArgument(f"{what} {text!r} contains a NUL byte")
    return data


def _c_strings(items: Iterable[str]) -> tuple[Any, list[Any]]:
    """A ``const char* const*`` array and the buffers it points into (keep both alive)."""
    bufs = [ffi.new("char[]", s.encode()) for s in items]
    return ffi.new("char*[]", bufs), bufs


def _bool(value: Any) -> bool:
    if not isinstance(value, (bool, int, np.bool_)):
        raise TypeError(f"expected a bool, got {type(value).__name__}")
    return bool(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"expected a non-negative int, got {value!r}")
    return int(value)


def _setting(name: str, apply: Callable[[SessionOptions, Any], None], default: Any,
             doc: str, slots: tuple[str, ...],
             convert: Callable[[Any], Any] | None = None) -> property:
    """An attribute-style option: setting it calls ORT at once; reading returns what was set
    (after ``convert``, e.g. to its enum)."""

    def get(self: SessionOptions) -> Any:
        self._check_open()
        return self._values.get(name, default)

    def put(self: SessionOptions, value: Any) -> None:
        if convert is not None:
            value = convert(value)
        apply(self, value)
        self._values[name] = value

    put.__name__ = name
    return property(get, exclusive(*slots)(put), doc=doc)


class SessionOptions(Handle):
    """How a session is built: threads, optimization, providers, config entries, ...

    Options are attributes (``opts.intra_op_num_threads = 1``) or constructor keywords
    (``SessionOptions(intra_op_num_threads=1)``); each assignment is passed to ORT at once, so a
    bad value raises there.

    Thread rules: Send, and Sync for reads: concurrent session creation with one options
    object is fine (experiment E6); every setter is exclusive. ORT copies the options into the
    session, so they may be closed right after; what they reference (initializer values,
    external buffers) is handed to the session and kept alive by it.
    """

    c_type = "OrtSessionOptions"
    send = True
    sync = True
    evidence = ("InferenceSession stores its SessionOptions by value (inference_session.h); "
                "research E6: 8 concurrent CreateSession with one options object, identical "
                "outputs; setters mutate without locks (exclusive)")

    def __init__(self, **options: Any) -> None:
        self._api = _loader.api()
        raw = call_out(self._api.CreateSessionOptions, "OrtSessionOptions*")
        self._adopt(raw, self._api.ReleaseSessionOptions)
        self._values: dict[str, Any] = {}
        self._keep: list[Any] = []  # name buffers ORT refers to (the Values are in _held)
        self._providers: list[str] = []
        self._provider_options: dict[str, dict[str, str]] = {}
        self.update(**options)

    # Initializer values: ORT refers to their OrtValues until the options (and the sessions
    # made with them, which hold them too) are released, so they are children of the options;
    # closing one meanwhile defers its release (released at once, CreateSession read freed
    # memory: found by tests/test_fuzz.py).
    _holds = True

    def _drop_references(self) -> None:
        self._keep = []  # the values themselves were let go by the release (Handle._hold)

    def update(self, **options: Any) -> SessionOptions:
        """Set several options at once; unknown names raise TypeError."""
        for key, value in options.items():
            if not isinstance(getattr(type(self), key, None), property) or \
                    getattr(type(self), key).fset is None:
                raise TypeError(f"unknown session option {key!r}")
            setattr(self, key, value)
        return self

    # -- attribute-style settings --------------------------------------------------------------
    intra_op_num_threads = _setting(
        "intra_op_num_threads",
        lambda s, v: check(s._api.SetIntraOpNumThreads(s._ptr, _count(v))), 0,
        "Threads for parallelism inside an operator (0: ORT's default).",
        ("SetIntraOpNumThreads",))
    inter_op_num_threads = _setting(
        "inter_op_num_threads",
        lambda s, v: check(s._api.SetInterOpNumThreads(s._ptr, _count(v))), 0,
        "Threads for running operators in parallel (parallel execution mode only).",
        ("SetInterOpNumThreads",))
    execution_mode = _setting(
        "execution_mode",
        lambda s, v: check(s._api.SetSessionExecutionMode(s._ptr, int(v))),
        ExecutionMode.SEQUENTIAL, "ExecutionMode.SEQUENTIAL or PARALLEL.",
        ("SetSessionExecutionMode",), ExecutionMode)
    graph_optimization_level = _setting(
        "graph_optimization_level",
        lambda s, v: check(s._api.SetSessionGraphOptimizationLevel(s._ptr, int(v))),
        GraphOptimizationLevel.ENABLE_ALL, "A GraphOptimizationLevel.",
        ("SetSessionGraphOptimizationLevel",), GraphOptimizationLevel)
    optimized_model_filepath = _setting(
        "optimized_model_filepath",
        lambda s, v: check(s._api.SetOptimizedModelFilePath(s._ptr, os.fsencode(v))), "",
        "Where ORT saves the optimized model (empty: not saved).",
        ("SetOptimizedModelFilePath",))
    enable_profiling = _setting(
        "enable_profiling",
        lambda s, v: check(
            s._api.EnableProfiling(s._ptr, os.fsencode(s._values.get("profile_file_prefix",
                                                                     "onnxruntime_profile_")))
            if _bool(v) else s._api.DisableProfiling(s._ptr)), False,
        "Write a Chrome-trace profile (see profile_file_prefix, Session.end_profiling).",
        ("EnableProfiling", "DisableProfiling"))
    profile_file_prefix = _setting(
        "profile_file_prefix",
        lambda s, v: check(s._api.EnableProfiling(s._ptr, os.fsencode(v)))
        if s._values.get("enable_profiling") else None,
        "onnxruntime_profile_", "Prefix of the profile file's name.", ("EnableProfiling",))
    enable_mem_pattern = _setting(
        "enable_mem_pattern",
        lambda s, v: check(s._api.EnableMemPattern(s._ptr) if _bool(v)
                           else s._api.DisableMemPattern(s._ptr)), True,
        "Pre-plan memory from the first run's shapes.", ("EnableMemPattern", "DisableMemPattern"))
    enable_cpu_mem_arena = _setting(
        "enable_cpu_mem_arena",
        lambda s, v: check(s._api.EnableCpuMemArena(s._ptr) if _bool(v)
                           else s._api.DisableCpuMemArena(s._ptr)), True,
        "Use an arena for CPU memory.", ("EnableCpuMemArena", "DisableCpuMemArena"))
    logid = _setting(
        "logid", lambda s, v: check(s._api.SetSessionLogId(s._ptr, str(v).encode())), "",
        "The session's id in log messages.", ("SetSessionLogId",))
    log_severity_level = _setting(
        "log_severity_level",
        lambda s, v: check(s._api.SetSessionLogSeverityLevel(s._ptr, int(v))),
        LoggingLevel.WARNING, "Minimum severity of this session's log messages.",
        ("SetSessionLogSeverityLevel",), LoggingLevel)
    log_verbosity_level = _setting(
        "log_verbosity_level",
        lambda s, v: check(s._api.SetSessionLogVerbosityLevel(s._ptr, int(v))), 0,
        "Verbosity of VERBOSE messages (debug builds of ORT).", ("SetSessionLogVerbosityLevel",))
    use_deterministic_compute = _setting(
        "use_deterministic_compute",
        lambda s, v: check(s._api.SetDeterministicCompute(s._ptr, _bool(v))), False,
        "Prefer deterministic kernels.", ("SetDeterministicCompute",))

    # -- methods -------------------------------------------------------------------------------
    @exclusive("AddSessionConfigEntry")
    def add_session_config_entry(self, key: str, value: str) -> None:
        """Set a session config entry (e.g. ``session.intra_op.allow_spinning``)."""
        check(self._api.AddSessionConfigEntry(self._ptr, _utf8(key, "config key"),
                                               _utf8(str(value), "config value")),
              f"config entry {key!r}")

    @shared("GetSessionConfigEntry", "HasSessionConfigEntry")
    def get_session_config_entry(self, key: str) -> str | None:
        """A config entry's value, or None when unset."""
        has = ffi.new("int*")
        ckey = _utf8(key, "config key")
        check(self._api.HasSessionConfigEntry(self._ptr, ckey, has))
        if not has[0]:
            return None
        size = ffi.new("size_t*")
        check(self._api.GetSessionConfigEntry(self._ptr, ckey, ffi.NULL, size))
        buf = ffi.new("char[]", size[0])
        check(self._api.GetSessionConfigEntry(self._ptr, ckey, buf, size))
        return ffi.string(buf).decode()

    @exclusive("AddFreeDimensionOverrideByName")
    def add_free_dimension_override_by_name(self, name: str, value: int) -> None:
        """Fix the symbolic dimension ``name`` to ``value``."""
        check(self._api.AddFreeDimensionOverrideByName(self._ptr, name.encode(), _count(value)))

    @exclusive("AddFreeDimensionOverride")
    def add_free_dimension_override(self, denotation: str, value: int) -> None:
        """Fix every dimension with this denotation (e.g. ``DATA_BATCH``) to ``value``."""
        check(self._api.AddFreeDimensionOverride(self._ptr, denotation.encode(), _count(value)))

    @exclusive("AddInitializer")
    def add_initializer(self, name: str, value: Value | np.ndarray[Any, Any]) -> None:
        """Replace the initializer ``name`` with ``value`` (kept alive for the session)."""
        v = value if isinstance(value, Value) else Value.from_numpy(value)
        v._check_open()
        keep = ffi.new("char[]", name.encode())
        check(self._api.AddInitializer(self._ptr, keep, v._ptr), f"initializer {name!r}")
        self._hold(v)
        self._keep.append(keep)

    @exclusive("AddExternalInitializers")
    def add_external_initializers(self, initializers: Mapping[str, Value | np.ndarray[Any, Any]]
                                  ) -> None:
        """Supply initializers stored outside the model, by name (kept alive for the session)."""
        values = [v if isinstance(v, Value) else Value.from_numpy(v)
                  for v in initializers.values()]
        names, bufs = _c_strings(initializers)
        ptrs = ffi.new("OrtValue*[]", [v._ptr for v in values])
        check(self._api.AddExternalInitializers(
            self._ptr, ffi.cast("const char* const*", names),
            ffi.cast("const OrtValue* const*", ptrs), len(values)))
        for v in values:
            self._hold(v)

    @exclusive("RegisterCustomOpsLibrary_V2")
    def register_custom_ops_library(self, path: str | os.PathLike[str]) -> None:
        """Load a shared library of custom operators."""
        check(self._api.RegisterCustomOpsLibrary_V2(self._ptr, os.fsencode(path)),
              f"custom op library {os.fspath(path)!r}")

    @exclusive("DisablePerSessionThreads")
    def disable_per_session_threads(self) -> None:
        """Use the env's global thread pools instead of per-session ones."""
        check(self._api.DisablePerSessionThreads(self._ptr))

    @exclusive("SessionOptionsAppendExecutionProvider",
               "SessionOptionsAppendExecutionProvider_CUDA_V2",
               "SessionOptionsAppendExecutionProvider_TensorRT_V2")
    def append_execution_provider(self, name: str, options: Mapping[str, Any] | None = None
                                  ) -> None:
        """Add an execution provider by name (``"CUDAExecutionProvider"``, ``"XNNPACK"``, ...)
        with string options. The CPU provider is always present as the fallback."""
        opts = {str(k): str(v) for k, v in (options or {}).items()}
        given = dict(opts)
        short, canonical = provider_names(name)
        api = self._api
        if short == "CPU":
            if "use_arena" in opts:
                self.enable_cpu_mem_arena = opts.pop("use_arena") not in ("0", "false", "False")
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
                keys, kb = _c_strings(opts)
                vals, vb = _c_strings(opts.values())
                check(update(prov, ffi.cast("const char* const*", keys),
                             ffi.cast("const char* const*", vals), len(opts)), name)
                check(append(self._ptr, prov), name)
            finally:
                release(prov)
        else:
            keys, kb = _c_strings(opts)
            vals, vb = _c_strings(opts.values())
            check(api.SessionOptionsAppendExecutionProvider(
                self._ptr, short.encode(), ffi.cast("const char* const*", keys),
                ffi.cast("const char* const*", vals), len(opts)), f"execution provider {name!r}")
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
        return new


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
    evidence = ("RunOptionsSetTerminate doc: 'can be called from another thread' "
                "(onnxruntime_c_api.h); run_options.h TerminationState mutex; C# RunOptions."
                "Terminate doc; research E3 (8 concurrent runs stopped by one terminate)")

    _holds = True  # active LoRA adapters: ORT keeps raw pointers to them

    def __init__(self, **options: Any) -> None:
        self._api = _loader.api()
        raw = call_out(self._api.CreateRunOptions, "OrtRunOptions*")
        self._adopt(raw, self._api.ReleaseRunOptions)
        for key, value in options.items():
            if key not in ("tag", "log_severity_level", "log_verbosity_level"):
                raise TypeError(f"unknown run option {key!r}")
            setattr(self, key, value)

    @property
    @shared("RunOptionsGetRunTag")
    def tag(self) -> str:
        out = ffi.new("char**")
        check(self._api.RunOptionsGetRunTag(self._ptr, ffi.cast("const char**", out)))
        return ffi.string(out[0]).decode() if out[0] != ffi.NULL else ""

    @tag.setter
    @exclusive("RunOptionsSetRunTag")
    def tag(self, value: str) -> None:
        check(self._api.RunOptionsSetRunTag(self._ptr, str(value).encode()))

    @property
    @shared("RunOptionsGetRunLogSeverityLevel")
    def log_severity_level(self) -> LoggingLevel:
        out = ffi.new("int*")
        check(self._api.RunOptionsGetRunLogSeverityLevel(self._ptr, out))
        return LoggingLevel(out[0])

    @log_severity_level.setter
    @exclusive("RunOptionsSetRunLogSeverityLevel")
    def log_severity_level(self, value: LoggingLevel | int) -> None:
        check(self._api.RunOptionsSetRunLogSeverityLevel(self._ptr, int(LoggingLevel(value))))

    @property
    @shared("RunOptionsGetRunLogVerbosityLevel")
    def log_verbosity_level(self) -> int:
        out = ffi.new("int*")
        check(self._api.RunOptionsGetRunLogVerbosityLevel(self._ptr, out))
        return int(out[0])

    @log_verbosity_level.setter
    @exclusive("RunOptionsSetRunLogVerbosityLevel")
    def log_verbosity_level(self, value: int) -> None:
        check(self._api.RunOptionsSetRunLogVerbosityLevel(self._ptr, int(value)))

    @shared("RunOptionsSetTerminate")
    def terminate(self) -> None:
        """Make every run using these options fail soon (ORT returns FAIL: :class:`ortc.Fail`);
        callable from any thread while runs are in flight."""
        check(self._api.RunOptionsSetTerminate(self._ptr))

    @shared("RunOptionsUnsetTerminate")
    def unset_terminate(self) -> None:
        """Allow runs again after :meth:`terminate`."""
        check(self._api.RunOptionsUnsetTerminate(self._ptr))

    # Used by ortc's watcher thread (Ctrl-C, deadlines): no guard, so it can never wait on a
    # lock held by the thread it is stopping; a closed object is simply skipped.
    def _terminate_now(self) -> None:
        ptr = self._ptr
        if ptr != ffi.NULL:
            self._api.RunOptionsSetTerminate(ptr)

    def _unset_now(self) -> None:
        ptr = self._ptr
        if ptr != ffi.NULL:
            self._api.RunOptionsUnsetTerminate(ptr)

    @exclusive("RunOptionsAddActiveLoraAdapter", args={"adapter": "shared"})
    def add_active_lora_adapter(self, adapter: Any) -> None:
        """Make ``adapter`` (an :class:`ortc.LoraAdapter`) active for every run using these
        options: its tensors feed the inputs of their names. The options keep it alive."""
        from .lora import _check_adapter

        _check_adapter(adapter)
        check(self._api.RunOptionsAddActiveLoraAdapter(self._ptr, adapter._ptr))
        self._hold(adapter)

    @exclusive("AddRunConfigEntry")
    def add_run_config_entry(self, key: str, value: str) -> None:
        """Set a run config entry (e.g. ``memory.enable_memory_arena_shrinkage``)."""
        check(self._api.AddRunConfigEntry(self._ptr, _utf8(key, "run config key"),
                                           _utf8(str(value), "run config value")),
              f"run config entry {key!r}")

    @shared("GetRunConfigEntry")
    def get_run_config_entry(self, key: str) -> str | None:
        """A run config entry's value, or None when unset (needs ORT 1.23)."""
        out = self._api.GetRunConfigEntry(self._ptr, _utf8(key, "run config key"))
        return ffi.string(out).decode() if out != ffi.NULL else None


#: outputs above this size are left to ORT to allocate (bytes)
_PREALLOCATE_MAX = 1 << 26


def _refused_buffer(message: str) -> bool:
    """Whether ORT refused a preallocated output for its shape (wording differs by version)."""
    return ("pre-allocated" in message or "re-use buffer" in message
            or "OrtValue provided for output" in message)


def _let_go(keep: list[Any]) -> None:
    """End the leases among what a run kept (Value inputs, in use by ORT until Run returned).
    Explicitly, not by dropping the list: PyPy finalizes objects only at a collection."""
    for held in keep:
        if type(held) is Lease:
            held.release()


def _not_run_options(run_options: Any) -> TypeError:
    return TypeError(f"run_options must be an ortc.RunOptions or None, not "
                     f"{type(run_options).__name__}")


_get_ident = threading.get_ident
_ndarray = np.ndarray
_NULL = ffi.NULL
_MAIN_THREAD = threading.main_thread().ident
_main_options: RunOptions | None = None
_main_options_lock = threading.Lock()


def _main_run_options() -> RunOptions:
    """The RunOptions used by main-thread runs that pass none (so Ctrl-C can stop them)."""
    global _main_options
    if _main_options is None:
        with _main_options_lock:
            if _main_options is None:
                _main_options = RunOptions(tag="ortc-main")
    return _main_options


class _NameArray:
    """A C array of names with its buffers (cached per session, never mutated)."""

    __slots__ = ("ptr", "bufs", "count")

    def __init__(self, names: Sequence[str]) -> None:
        self.bufs = [ffi.new("char[]", n.encode("utf-8", "surrogateescape")) for n in names]
        self.ptr = ffi.new("char*[]", self.bufs)  # owns its memory; bufs keep the strings
        self.count = len(names)


class _OutputPlan:
    """What run() needs per requested output list, computed once per session and list."""

    __slots__ = ("names", "count", "tensor", "preallocate", "stageable", "too_big")

    def __init__(self, names: _NameArray, tensor: list[bool],
                 preallocate: list[tuple[Any, ...]]) -> None:
        self.names = names
        self.count = names.count
        self.tensor = tensor
        #: (output index, dtype, element type, dims: int or (input name, axis))
        self.preallocate = preallocate
        #: every output's shape is known before the run (a _Stage may serve it)
        self.stageable = False
        #: runs whose tensors were too large to stage (past a few, staging is not tried again)
        self.too_big = 0


#: tensors up to this size may be staged (copying them costs less than a value per call)
_STAGE_MAX_BYTES = 1 << 14
#: a stage that misses this many runs in a row (shapes keep changing) is given up
_STAGE_MAX_MISSES = 8


class _Stage:
    """Per-thread buffers for one session and output list, for runs on small tensors.

    Creating and releasing an OrtValue per input and output costs more than the run itself on
    a small model (bench: ~1.7 µs a pair through cffi). A stage creates them once, over numpy
    buffers it owns: each run copies the feeds into the input buffers, makes the one Run call,
    and returns copies of the output buffers. It serves only feeds with the exact names, dtypes
    and shapes it was built for; anything else takes the general path.
    """

    def __init__(self, session: Session, plan: _OutputPlan, feeds: Mapping[str, Any],
                 arrays: list[Any]) -> None:
        api = session._api
        info = session._cpu_info_ptr
        self.run_c = api.Run
        self.busy = False
        self.misses = 0
        self.names = session._name_array(tuple(feeds))
        self.out_names = plan.names
        #: input name -> (its buffer, the dtype and shape a feed must have)
        self.inputs: dict[str, tuple[np.ndarray[Any, Any], np.dtype[Any], tuple[int, ...]]] = {}
        owned = []
        for name, data in feeds.items():
            buf = np.empty(data.shape, data.dtype)  # C order, whatever the feed's layout
            self.inputs[name] = (buf, buf.dtype, buf.shape)
            owned.append(self._value(api, info, buf, session._fast_inputs[name][1]))
        self.outputs = [np.empty(a.shape, a.dtype) for a in arrays]
        for (_, _dtype, et, _dims), buf in zip(plan.preallocate, self.outputs):
            owned.append(self._value(api, info, buf, et))
        self.owned = owned  # ffi.gc'd: released with the stage
        self.values = ffi.new("OrtValue*[]", owned[:len(self.inputs)])
        self.outvals = ffi.new("OrtValue*[]", owned[len(self.inputs):])

    @staticmethod
    def _value(api: Api, info: Any, buf: np.ndarray[Any, Any], et: int) -> Any:
        out = ffi.new("OrtValue**")
        shape = buf.shape
        check(api.CreateTensorWithDataAsOrtValue(info, ffi.from_buffer(buf), buf.nbytes, shape,
                                                 len(shape), et, out))
        return ffi.gc(out[0], api.ReleaseValue)

    def run(self, session: Session, feeds: Mapping[str, Any], run_options: RunOptions | None,
            raw_run_options: Any) -> list[Any] | None:
        """The outputs, or None when these feeds do not fit the stage."""
        inputs = self.inputs
        if type(feeds) is not dict or len(feeds) != len(inputs):
            self.misses += 1
            return None
        self.busy = True
        try:
            for name, data in feeds.items():
                spec = inputs.get(name)
                if spec is None or type(data) is not _ndarray:
                    self.misses += 1
                    return None
                buf, dtype, shape = spec
                if data.dtype is not dtype or data.shape != shape:
                    self.misses += 1
                    return None
                buf[...] = data
            if run_options is None:  # the C call itself: _call_run's frame costs 0.1-0.2 µs
                status = self.run_c(session._ptr, raw_run_options, self.names.ptr, self.values,
                                    self.names.count, self.out_names.ptr, self.out_names.count,
                                    self.outvals)
            else:
                status = session._call_run(self.names, self.values, self.out_names,
                                           self.outvals, self.out_names.count, run_options,
                                           raw_run_options)
            if status:
                raise error_from_status(status)
            self.misses = 0
            return [b.copy() for b in self.outputs]
        finally:
            self.busy = False


class Session(Handle):
    """A model loaded for inference.

    >>> sess = ortc.Session(model_bytes)                              # doctest: +SKIP
    >>> sess.inputs[0].name, sess.inputs[0].shape                     # doctest: +SKIP
    ('x', ('batch', 3))
    >>> sess.run(None, {"x": np.zeros((2, 3), np.float32)})           # doctest: +SKIP

    ``model`` is a path, the model's bytes, or a binary file object. ``options`` is a
    :class:`SessionOptions`; keyword arguments set options too (on a copy of ``options``).
    ``providers`` lists execution providers by name, or as (name, options dict) pairs.

    Thread rules: Send and Sync. ``run`` and the other run methods are shared when every
    execution provider of the session allows concurrent runs (the CPU provider does), else
    exclusive; see :meth:`thread_rules`. ``end_profiling`` is exclusive. The session keeps the
    Env alive; IoBindings and allocators made from it keep the session alive.
    """

    c_type = "OrtSession"
    send = True
    sync = True
    parents = ("OrtEnv",)
    evidence = ("ORT docs: 'multiple threads can invoke the Run() method on the same inference "
                "session object' (onnxruntime.ai/docs/api/c-api, Threading); issue #114; "
                "snnn in #19432 (Run executes on the calling thread); research E1")

    def __init__(self, model: ModelSource, options: SessionOptions | None = None, *,
                 providers: Sequence[str | tuple[str, Mapping[str, Any]]] | None = None,
                 **option_kwargs: Any) -> None:
        self._api = api = _loader.api()
        env = get_env()
        temp_options = None
        if options is not None:
            if not isinstance(options, SessionOptions):
                raise TypeError(f"options must be an ortc.SessionOptions (or keyword arguments), "
                                f"not {type(options).__name__}")
            options._check_open()
        if option_kwargs or providers:
            temp_options = options.clone() if options is not None else SessionOptions()
            temp_options.update(**option_kwargs)
            for p in providers or ():
                if isinstance(p, str):
                    temp_options.append_execution_provider(p)
                else:
                    temp_options.append_execution_provider(p[0], p[1])
            options = temp_options
        opts_ptr = options._ptr if options is not None else ffi.NULL
        leases: list[Lease] = []
        try:
            # the env and the options are in use (shared) while ORT creates the session
            leases.append(Lease(env))
            if options is not None:
                leases.append(Lease(options))
            raw = self._create(api, env, model, opts_ptr)
        finally:
            for lease in leases:
                lease.release()
            if temp_options is not None:
                temp_options.close()
        # the session refers to the initializer values too: it holds them as its parents
        keep = (*(options._held or ()), *options._keep) if options is not None else ()
        self._adopt(raw, api.ReleaseSession, (env, *keep))
        self._providers = options.providers if options is not None else []
        if "CPUExecutionProvider" not in self._providers:
            self._providers.append("CPUExecutionProvider")  # ORT's fallback, always present
        self._provider_options = dict(options._provider_options) if options is not None else {}
        # Run is shared only when every provider of the session allows concurrent runs.
        self._run_exclusive = self.thread_rules()["run"] == "exclusive"
        self._run_with_binding_c = api.RunWithBinding  # the bound run's one C call
        self._load_io()

    @staticmethod
    def _create(api: Api, env: Env, model: ModelSource, opts_ptr: Any) -> Any:
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
            if "\0" in str(path):  # C would read the path only up to the NUL
                raise InvalidArgument(f"model path {path!r} contains a NUL byte")
            return call_out(api.CreateSession, "OrtSession*", env._ptr, os.fsencode(path),
                            opts_ptr, context=f"loading model {path!r}")
        if hasattr(model, "read"):
            model = model.read()
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model) if isinstance(model, memoryview) else model
            if not data:
                raise InvalidArgument("the model is empty (0 bytes)")
            return call_out(api.CreateSessionFromArray, "OrtSession*", env._ptr,
                            ffi.from_buffer(data), len(data), opts_ptr,
                            context="loading model from bytes")
        raise TypeError(f"model must be a path, bytes or a binary file object, "
                        f"not {type(model).__name__}")

    def _load_io(self) -> None:
        api = self._api
        alloc = default_allocator()._ptr

        def args(count_slot: Any, name_slot: Any, type_slot: Any) -> list[NodeArg]:
            n = ffi.new("size_t*")
            check(count_slot(self._ptr, n))
            out = []
            for i in range(n[0]):
                raw_name = call_out(name_slot, "char*", self._ptr, i, alloc)
                try:
                    # names that are not UTF-8 round-trip as surrogate escapes (see _NameArray)
                    name = ffi.string(raw_name).decode("utf-8", "surrogateescape")
                finally:
                    ignore(api.AllocatorFree(alloc, raw_name))
                ti = take_type_info(api, call_out(type_slot, "OrtTypeInfo*", self._ptr, i))
                out.append(NodeArg(name, ti))
            return out

        self._inputs = args(api.SessionGetInputCount, api.SessionGetInputName,
                            api.SessionGetInputTypeInfo)
        self._outputs = args(api.SessionGetOutputCount, api.SessionGetOutputName,
                             api.SessionGetOutputTypeInfo)
        self._initializers = args(api.SessionGetOverridableInitializerCount,
                                  api.SessionGetOverridableInitializerName,
                                  api.SessionGetOverridableInitializerTypeInfo)
        self._feedable = {a.name: a for a in (*self._inputs, *self._initializers)}
        self._output_index = {a.name: a for a in self._outputs}
        self._tensor_outputs = frozenset(
            a.name for a in self._outputs if a.kind == ValueKind.TENSOR)
        self._optional_inputs = frozenset(
            a.name for a in self._inputs if a.kind == ValueKind.OPTIONAL)
        initializers = {a.name for a in self._initializers}
        self._required = tuple(a.name for a in self._inputs
                               if a.kind != ValueKind.OPTIONAL and a.name not in initializers)
        self._optional_outputs = frozenset(
            a.name for a in self._outputs if a.kind == ValueKind.OPTIONAL)
        self._names: dict[tuple[str, ...], _NameArray] = {}
        self._all_outputs = tuple(a.name for a in self._outputs)
        self._plans: dict[Any, _OutputPlan] = {}
        self._preallocate = True
        #: thread id -> output-list key -> _Stage (False: given up for that key)
        self._stages: dict[int, dict[Any, Any]] = {}
        self._staging = True
        self._cpu_info = cpu_memory_info()
        self._cpu_info_ptr = self._cpu_info._ptr
        # inputs that take a numpy array of one exact dtype directly: name -> (dtype, type)
        self._fast_inputs: dict[str, tuple[np.dtype[Any], int]] = {}
        for a in self._feedable.values():
            dt = a.dtype
            if a.kind == ValueKind.TENSOR and dt is not None and dt.kind not in STRING_KINDS \
                    and not bits_for(a.element_type or 0):
                self._fast_inputs[a.name] = (dt, int(a.element_type))  # type: ignore[arg-type]
        self._output_alloc = self._derive_output_shapes()

    def _drop_references(self) -> None:
        self._stages = {}  # their OrtValues are over numpy buffers: freed with them

    def _derive_output_shapes(self) -> dict[str, tuple[np.dtype[Any], int, tuple[Any, ...]]]:
        """Outputs whose shape is known before a run: fixed dims, or symbolic dims that also
        name an input's dim (ONNX requires one symbol to mean one size within a model)."""
        symbols: dict[str, tuple[str, int]] = {}
        for a in self._inputs:
            for axis, d in enumerate(a.shape or ()):
                if isinstance(d, str):
                    symbols.setdefault(d, (a.name, axis))
        out: dict[str, tuple[np.dtype[Any], int, tuple[Any, ...]]] = {}
        for a in self._outputs:
            dt = a.dtype
            if a.kind != ValueKind.TENSOR or a.shape is None or dt is None \
                    or dt.kind in STRING_KINDS or bits_for(a.element_type or 0):
                continue
            dims: list[Any] = []
            for d in a.shape:
                if isinstance(d, int):
                    dims.append(d)
                elif isinstance(d, str) and d in symbols:
                    dims.append(symbols[d])
                else:
                    break
            else:
                out[a.name] = (dt, int(a.element_type), tuple(dims))  # type: ignore[arg-type]
        return out

    # -- description ---------------------------------------------------------------------------
    @property
    def inputs(self) -> list[NodeArg]:
        """The model's inputs (name, type, dtype, shape with symbolic dims as str or None)."""
        self._check_open()
        return list(self._inputs)

    @property
    def outputs(self) -> list[NodeArg]:
        """The model's outputs."""
        self._check_open()
        return list(self._outputs)

    @property
    def overridable_initializers(self) -> list[NodeArg]:
        """Initializers that may be fed like inputs to override their stored value."""
        self._check_open()
        return list(self._initializers)

    @property
    def providers(self) -> list[str]:
        """Execution providers requested for this session, CPU (the fallback) last."""
        self._check_open()
        return list(self._providers)

    @shared("SessionGetModelMetadata", "ModelMetadataGetProducerName",
            "ModelMetadataGetCustomMetadataMapKeys")
    def metadata(self) -> ModelMetadata:
        """The model's metadata (producer, domain, description, version, custom map)."""
        md = call_out(self._api.SessionGetModelMetadata, "OrtModelMetadata*", self._ptr)
        try:
            return read_metadata(self._api, md, default_allocator()._ptr)
        finally:
            self._api.ReleaseModelMetadata(md)

    @property
    def model_metadata(self) -> ModelMetadata:
        return self.metadata()

    @shared("SessionGetProfilingStartTimeNs")
    def profiling_start_ns(self) -> int:
        out = ffi.new("uint64_t*")
        check(self._api.SessionGetProfilingStartTimeNs(self._ptr, out))
        return int(out[0])

    def thread_rules(self) -> dict[str, Any]:
        """Whether :meth:`run` may be called concurrently on this session, and why."""
        return session_run_rule(self._providers, self._provider_options)

    # -- running -------------------------------------------------------------------------------
    def _name_array(self, names: tuple[str, ...]) -> _NameArray:
        arr = self._names.get(names)
        if arr is None:
            for n in names:
                if not isinstance(n, str):
                    raise InvalidArgument(f"names must be str, got {type(n).__name__} {n!r}")
            if len(self._names) > 256:  # bound the cache for callers with ever-new name sets
                self._names.clear()
            arr = self._names[names] = _NameArray(names)
        return arr

    def _output_names(self, output_names: Sequence[str] | None) -> tuple[str, ...]:
        if output_names is None:
            return self._all_outputs
        names = tuple(output_names)
        for n in names:
            if n not in self._output_index:
                if not isinstance(n, str):
                    raise InvalidArgument(f"output names must be str, got {type(n).__name__}")
                raise InvalidArgument(f"unknown output name {n!r}; the model's outputs are "
                                      f"{list(self._output_index)}")
        return names

    def _feed_value(self, name: str, data: Any, keep: list[Any], created: list[Any]) -> Any:
        arg = self._feedable.get(name)
        if arg is None:
            if not isinstance(name, str):
                raise InvalidArgument(f"input names must be str, got {type(name).__name__}")
            raise InvalidArgument(f"unknown input name {name!r}; the model's inputs are "
                                  f"{[a.name for a in self._inputs]}")
        if isinstance(data, Value):
            keep.append(Lease(data))  # a shared use of the value until the run returns
            return data._ptr
        kind = arg.type.kind
        if kind == ValueKind.OPTIONAL and arg.type.element is not None:
            kind = arg.type.element.kind
        if kind == ValueKind.TENSOR:
            expected = arg.type.element_type
            if isinstance(data, np.ndarray) and expected is not None:
                dt = data.dtype
                try:
                    got = element_type_for(dt)
                except TypeError:
                    got = None
                if got != expected and not (expected == ElementType.STRING
                                            and dt.kind in STRING_KINDS):
                    raise InvalidArgument(
                        f"input {name!r}: expected {arg.type.type_str}, got an array of dtype "
                        f"{dt} ({got.name if got is not None else 'no ORT type'})")
            raw, buf = array_to_ortvalue(self._api, data, f"input {name!r}",
                                         expected if expected is not None and
                                         expected != ElementType.STRING and
                                         not isinstance(data, np.ndarray) else None)
            created.append(raw)
            keep.append(buf)
            return raw
        if kind == ValueKind.SEQUENCE:
            seq = arg.type.element if arg.type.kind == ValueKind.OPTIONAL else arg.type
            item = seq.element if seq is not None else None  # an empty one needs its type
            v = Value.from_sequence(data, item.element_type if item is not None
                                    and item.kind == ValueKind.TENSOR else None)
        elif kind == ValueKind.MAP:
            v = Value.from_map(data)
        elif kind == ValueKind.SPARSETENSOR:
            v = Value.from_sparse(data)
        else:
            raise InvalidArgument(f"input {name!r}: pass a Value for a {arg.type.type_str} input")
        keep.append(v)
        return v._ptr

    @shared("Run", args={"run_options": "shared"}, exclusive_when="_run_exclusive",
            inline=True)
    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
            run_options: RunOptions | None = None, *, timeout: float | None = None
            ) -> list[Any]:
        """Run the model: ``feeds`` maps input names to arrays (lists for sequences, dicts for
        maps, Values for anything); returns the outputs named (all when None), in that order:
        arrays for tensors, lists for sequences, dicts for maps, None for an empty optional.

        Outputs whose shape is known before the run (static, or from the inputs' shapes) are
        written by ORT straight into new numpy arrays; others are views over ORT's memory.

        ``timeout`` (seconds) stops the run through RunOptions.terminate and raises
        :class:`ortc.RunTimeout`; with a shared ``run_options`` every run using them stops.
        On the main thread, Ctrl-C stops a run within milliseconds and raises
        KeyboardInterrupt. The session stays usable after either.
        """
        guard = self._guard
        if guard is None:
            raise ClosedError("Session is closed")
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise _not_run_options(run_options)
        token = guard.enter_exclusive(self) if self._run_exclusive else guard.enter_shared(self)
        try:
            if timeout is not None:
                return self._run_with_deadline(output_names, feeds, run_options, timeout)
            if _get_ident() == _MAIN_THREAD and (watcher.sigint_ready
                                                 or watcher.sigint_supported()):
                return self._run_interruptible(output_names, feeds, run_options)
            return self._run(output_names, feeds, run_options, ffi.NULL)
        finally:
            guard.leave(token)

    def _run_interruptible(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
                           run_options: RunOptions | None) -> list[Any]:
        # A run on the main thread always has a RunOptions, so Ctrl-C has something to stop.
        ro = run_options if run_options is not None else (_main_options or _main_run_options())
        if watcher.interrupted:  # re-arm options a previous Ctrl-C terminated
            with watcher.sigint_lock:
                for old in watcher.interrupted:
                    old._unset_now()
                watcher.interrupted.clear()
        watcher.main_run = ro
        try:
            if run_options is None:  # ortc's private options: no guard needed
                return self._run(output_names, feeds, None, ro._ptr)
            return self._run(output_names, feeds, run_options, ffi.NULL)
        finally:
            watcher.main_run = None

    def _run_with_deadline(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
                           run_options: RunOptions | None, timeout: float) -> list[Any]:
        import time

        if not isinstance(timeout, (int, float)) or timeout != timeout or timeout < 0:
            raise ValueError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
        ro = run_options if run_options is not None else RunOptions()
        seq = watcher.add_deadline(time.monotonic() + timeout, ro)
        fired = False
        try:
            if _get_ident() == _MAIN_THREAD and (watcher.sigint_ready
                                                 or watcher.sigint_supported()):
                return self._run_interruptible(output_names, feeds, ro)
            return self._run(output_names, feeds, ro, ffi.NULL)
        except OrtError as exc:
            fired = watcher.finish_deadline(seq)
            seq = -1
            if fired:
                raise RunTimeout(f"the run did not finish within {timeout} s and was "
                                 f"terminated") from exc
            raise
        finally:
            if seq >= 0:
                fired = watcher.finish_deadline(seq)
            if run_options is None:
                ro.close()
            elif fired:
                ro.unset_terminate()

    def _run(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
             run_options: RunOptions | None, raw_run_options: Any) -> list[Any]:
        key = output_names if output_names is None or type(output_names) is tuple \
            else tuple(output_names)
        stages = self._stages.get(_get_ident())
        if stages is not None:
            stage = stages.get(key)
            if stage and not stage.busy:
                result = stage.run(self, feeds, run_options, raw_run_options)
                if result is not None:
                    return result
                if stage.misses > _STAGE_MAX_MISSES:  # shapes keep changing: stop staging
                    stages[key] = False
        plan = self._plans.get(key)
        if plan is None:
            plan = self._make_plan(output_names)
        api = self._api
        release = api.ReleaseValue
        created: list[Any] = []
        outputs: Any = None
        arrays: list[Any] = []
        keep: list[Any] = []
        # Every release below sits in a finally: KeyboardInterrupt may surface at any point
        # after Run returns (Python runs its SIGINT handler at the next bytecode check).
        try:
            in_names, values, shapes = self._prepare_inputs(feeds, created, keep)
            count = plan.count
            outputs = ffi.new("OrtValue*[]", count)
            arrays = [None] * count
            made = 0
            if plan.preallocate and self._preallocate:
                made = self._preallocate_outputs(plan, shapes, outputs, arrays, created)
            # a stage may serve the next runs when every output was preallocated here
            stage_next = plan.stageable and self._staging and made == count
            status = self._call_run(in_names, values, plan.names, outputs, count, run_options,
                                    raw_run_options)
            if status:
                err = error_from_status(status)  # releases the status
                if any(a is not None for a in arrays) and _refused_buffer(err.message):
                    # A model whose declared output shape is wrong makes ORT refuse our
                    # preallocated buffer: stop preallocating for this session, run again.
                    self._preallocate = False
                    return self._run(output_names, feeds, run_options, raw_run_options)
                raise err
            out: list[Any] = arrays
            tensor = plan.tensor
            for i in range(count):
                if arrays[i] is not None:
                    continue
                raw = outputs[i]
                if raw == ffi.NULL:
                    continue
                outputs[i] = ffi.NULL  # from here the conversion owns it
                if tensor[i]:  # declared a tensor: skip the kind queries
                    out[i] = tensor_to_numpy(api, raw, None, release)
                else:
                    out[i] = ortvalue_to_python(api, raw, None, release)
            if stage_next:
                self._stage(key, plan, feeds, arrays)
            return out
        finally:
            _let_go(keep)
            for raw in created:  # inputs, and the OrtValues over our preallocated arrays
                release(raw)
            if outputs is not None:
                for i in range(len(arrays)):
                    if outputs[i] != ffi.NULL and arrays[i] is None:
                        release(outputs[i])

    @shared("RunAsync", args={"run_options": "shared"}, exclusive_when="_run_exclusive")
    def run_async(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
                  run_options: RunOptions | None = None) -> Future[list[Any]]:
        """Start a run on ORT's intra-op thread pool and return a Future of its outputs
        (the same list :meth:`run` returns). Needs ``intra_op_num_threads`` >= 2.

        The completion runs on an ORT thread; the inputs, the run options and the session
        stay alive until it has run (closing the session meanwhile defers its release).
        ``asyncio.wrap_future`` turns the Future into an awaitable.
        """
        from ._callbacks import AsyncJob, releaser, run_async_callback

        if run_options is not None and not isinstance(run_options, RunOptions):
            raise _not_run_options(run_options)
        ro_guard = run_options._guard if run_options is not None else None
        if run_options is not None and ro_guard is None:
            raise ClosedError("RunOptions is closed")
        names = self._name_array(self._output_names(output_names))
        api = self._api
        created: list[Any] = []
        keep: list[Any] = []
        try:
            in_names, values, _shapes = self._prepare_inputs(feeds, created, keep)
        except BaseException:
            _let_go(keep)
            for raw in created:
                api.ReleaseValue(raw)
            raise
        count = names.count
        outputs = ffi.new("OrtValue*[]", count)
        tensor = [self._output_index[n].kind == ValueKind.TENSOR for n in self._output_names(
            output_names)]

        def finish(out_ptr: Any, n: int, status: Any) -> list[Any]:
            # runs on an ORT thread, once; releases everything the run needed
            try:
                if status:
                    raise error_from_status(status)
                result: list[Any] = []
                for i in range(count):
                    raw, outputs[i] = outputs[i], ffi.NULL
                    if raw == ffi.NULL:
                        result.append(None)
                    elif tensor[i]:
                        result.append(tensor_to_numpy(api, raw, None, api.ReleaseValue))
                    else:
                        result.append(ortvalue_to_python(api, raw, None, api.ReleaseValue))
                return result
            finally:
                for i in range(count):
                    if outputs[i] != ffi.NULL:
                        api.ReleaseValue(outputs[i])
                for raw in created:
                    api.ReleaseValue(raw)

        def done() -> None:  # on the ORT thread, after finish()
            if token is not None:
                ro_guard.leave(token)  # type: ignore[union-attr]
            # ending a lease may run a deferred release, and releasing the session's last
            # child may release the session: neither on ORT's own thread
            releaser.submit(lambda: _let_go(keep))
            releaser.submit(self._child_released)

        token = ro_guard.enter_shared(run_options) if ro_guard is not None else None
        # the job counts as a child: the session is not released while ORT still runs it
        with _tree_lock:
            self._children += 1
        # the feeds too: the fast path wraps their arrays without copying or keeping them
        job = AsyncJob(finish, (in_names, values, keep, outputs, run_options, self,
                                list(feeds.values())), done)
        status = api.RunAsync(self._ptr, run_options._ptr if run_options is not None else
                              ffi.NULL, in_names.ptr, values, in_names.count, names.ptr, count,
                              outputs, run_async_callback, job.handle)
        if status:
            job.abandon()
            _let_go(keep)
            for raw in created:
                api.ReleaseValue(raw)
            if token is not None:
                ro_guard.leave(token)  # type: ignore[union-attr]
            self._child_released()
            raise_status(status, "RunAsync")
        return job.future

    @shared("Run", args={"run_options": "shared"}, exclusive_when="_run_exclusive")
    def run_with_values(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
                        run_options: RunOptions | None = None) -> list[Value | None]:
        """Like :meth:`run`, but the outputs are ortc Values (no conversion)."""
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise _not_run_options(run_options)
        names = self._name_array(self._output_names(output_names))
        api = self._api
        created: list[Any] = []
        keep: list[Any] = []
        try:
            in_names, values, _shapes = self._prepare_inputs(feeds, created, keep)
            outputs = ffi.new("OrtValue*[]", names.count)
            status = self._call_run(in_names, values, names, outputs, names.count, run_options)
        finally:
            _let_go(keep)
            for raw in created:
                api.ReleaseValue(raw)
        if status:
            for i in range(names.count):
                if outputs[i] != ffi.NULL:
                    api.ReleaseValue(outputs[i])
            raise_status(status)
        out: list[Value | None] = []
        try:
            for i in range(names.count):
                raw, outputs[i] = outputs[i], ffi.NULL
                out.append(Value._own(raw) if raw != ffi.NULL else None)
        finally:
            for i in range(names.count):
                if outputs[i] != ffi.NULL:
                    api.ReleaseValue(outputs[i])
        return out

    def _prepare_inputs(self, feeds: Mapping[str, Any], created: list[Any], keep: list[Any]
                        ) -> tuple[_NameArray, Any, dict[str, tuple[int, ...]]]:
        """OrtValues for the feeds. Returns (names, values array, input shapes); every OrtValue
        made here is appended to ``created``, and what must stay alive (or leased, see
        _let_go) until Run returns to ``keep``: the caller releases both, even on an error."""
        if type(feeds) is not dict and not isinstance(feeds, Mapping):
            raise InvalidArgument(f"feeds must be a dict of input name -> array, "
                                  f"not {type(feeds).__name__}")
        if self._optional_inputs and any(feeds.get(n, 0) is None for n in self._optional_inputs):
            # an empty optional input is passed by leaving it out
            feeds = {k: v for k, v in feeds.items()
                     if not (v is None and k in self._optional_inputs)}
        for name in self._required:
            if name not in feeds:
                for given in feeds:  # a misspelt name explains a missing one best
                    if given not in self._feedable:
                        self._feed_value(given, None, [], [])  # raises "unknown input name"
                missing = [n for n in self._required if n not in feeds]
                raise InvalidArgument(f"missing input(s) {missing}: the model requires "
                                      f"{list(self._required)}, the feeds have {list(feeds)}")
        in_names = self._name_array(tuple(feeds))
        values = ffi.new("OrtValue*[]", in_names.count)
        shapes: dict[str, tuple[int, ...]] = {}
        fast = self._fast_inputs
        create = self._api.CreateTensorWithDataAsOrtValue
        info = self._cpu_info_ptr
        out = scratch.value
        i = 0
        for name, data in feeds.items():
            spec = fast.get(name)
            # fast path: an exact-dtype, C-contiguous array over its own memory, no checks left
            if spec is not None and type(data) is np.ndarray and data.dtype is spec[0] \
                    and data.flags.c_contiguous:
                shape = data.shape
                status = create(info, ffi.from_buffer(data), data.nbytes, shape, len(shape),
                                spec[1], out)
                if status:
                    raise_status(status, f"input {name!r}")
                raw = out[0]
                created.append(raw)
                values[i] = raw
                shapes[name] = shape
            else:
                values[i] = self._feed_value(name, data, keep, created)
                if isinstance(data, np.ndarray):
                    shapes[name] = data.shape
            i += 1
        return in_names, values, shapes

    def _call_run(self, in_names: _NameArray, values: Any, out_names: _NameArray, outputs: Any,
                  count: int, run_options: RunOptions | None, raw_run_options: Any = ffi.NULL
                  ) -> Any:
        if run_options is None:
            return self._api.Run(self._ptr, raw_run_options, in_names.ptr, values,
                                 in_names.count, out_names.ptr, count, outputs)
        ro_guard = run_options._guard
        if ro_guard is None:
            raise ClosedError("RunOptions is closed")
        token = ro_guard.enter_shared(run_options)
        try:
            return self._api.Run(self._ptr, run_options._ptr, in_names.ptr, values,
                                 in_names.count, out_names.ptr, count, outputs)
        finally:
            ro_guard.leave(token)

    def _stage(self, key: Any, plan: _OutputPlan, feeds: Mapping[str, Any],
               arrays: list[Any]) -> None:
        """After a run whose tensors were all small, keep per-thread buffers for the next run
        with the same input shapes (see _Stage)."""
        tid = _get_ident()
        stages = self._stages.get(tid)
        if stages is None:
            if len(self._stages) > 64:  # threads come and go: do not grow without bound
                self._stages.clear()
            stages = self._stages[tid] = {}
        old = stages.get(key)
        if old is False or (old is not None and old.busy):
            return
        fast = self._fast_inputs
        for name, data in feeds.items():
            spec = fast.get(name)
            if spec is None or type(data) is not np.ndarray or data.dtype is not spec[0]:
                return
            if data.nbytes > _STAGE_MAX_BYTES:
                self._stage_refused(plan)
                return
        if any(a.nbytes > _STAGE_MAX_BYTES for a in arrays):
            self._stage_refused(plan)
            return
        stage = _Stage(self, plan, feeds, arrays)
        if old is not None:
            stage.misses = old.misses
        stages[key] = stage

    @staticmethod
    def _stage_refused(plan: _OutputPlan) -> None:
        # A model whose tensors are large (the usual case: one shape) would try, and fail, to
        # stage after every run; past a few such runs, stop trying for this output list.
        plan.too_big += 1
        if plan.too_big > _STAGE_MAX_MISSES:
            plan.stageable = False

    def _make_plan(self, output_names: Sequence[str] | None) -> _OutputPlan:
        names = self._output_names(output_names)
        plan = _OutputPlan(self._name_array(names),
                           [self._output_index[n].kind == ValueKind.TENSOR for n in names],
                           [(i, *self._output_alloc[n]) for i, n in enumerate(names)
                            if n in self._output_alloc])
        plan.stageable = len(plan.preallocate) == plan.count > 0
        if len(self._plans) > 256:  # bound the cache for callers with ever-new name lists
            self._plans.clear()
        self._plans[None if output_names is None else tuple(output_names)] = plan
        return plan

    def _preallocate_outputs(self, plan: _OutputPlan, shapes: dict[str, tuple[int, ...]],
                             outputs: Any, arrays: list[Any], created: list[Any]) -> int:
        """Give ORT new numpy arrays for the outputs whose shape is known; returns how many."""
        made = 0
        create = self._api.CreateTensorWithDataAsOrtValue
        info = self._cpu_info_ptr
        out = scratch.value
        for index, dtype, et, dims in plan.preallocate:
            shape = []
            for d in dims:
                if type(d) is int:
                    shape.append(d)
                else:
                    source = shapes.get(d[0])
                    if source is None or len(source) <= d[1]:
                        break  # not derivable this time: ORT allocates this output
                    shape.append(source[d[1]])
            else:
                count = 1
                for d in shape:
                    count *= d
                if count * dtype.itemsize > _PREALLOCATE_MAX:
                    # a large output gains little, and a model may declare an absurd shape
                    # (found by tests/test_malformed.py): ORT allocates the real one
                    continue
                arr = np.empty(shape, dtype)
                status = create(info, ffi.from_buffer(arr), arr.nbytes, shape, len(shape), et,
                                out)
                if status:
                    raise_status(status, "preallocating an output")
                created.append(out[0])
                outputs[index] = out[0]
                arrays[index] = arr
                made += 1
        return made

    @exclusive("SessionEndProfiling")
    def end_profiling(self) -> str:
        """Stop profiling and return the profile file's path."""
        alloc = default_allocator()._ptr
        out = call_out(self._api.SessionEndProfiling, "char*", self._ptr, alloc)
        try:
            return ffi.string(out).decode()
        finally:
            ignore(self._api.AllocatorFree(alloc, out))

    @shared("CreateIoBinding")
    def io_binding(self) -> Any:
        """A new :class:`IoBinding` for this session (one per thread)."""
        from .binding import IoBinding

        return IoBinding(self)

    @shared("RunWithBinding", args={"binding": "exclusive", "run_options": "shared"},
            exclusive_when="_run_exclusive", inline=True)
    def run_with_binding(self, binding: Any, run_options: RunOptions | None = None) -> None:
        """Run with the inputs and outputs bound in ``binding`` (see :class:`IoBinding`)."""
        # The path whose cost is closest to C's, so the common case enters both guards inline,
        # lock-free, exactly as Guard.enter_shared (session) and Guard.enter_alone (binding) do:
        # announce in ``users``, then look; anything unusual backs off to the general path.
        guard = self._guard
        try:
            bguard = binding._guard
        except AttributeError:
            raise TypeError(f"run_with_binding needs an ortc.IoBinding (session.io_binding()), "
                            f"not {type(binding).__name__}") from None
        # (the binding is younger than its session: a current session means a current binding)
        if (_threads.LOCK_FREE and run_options is None and guard is not None
                and bguard is not None and not self._run_exclusive and binding._session is self
                and guard.gen == _threads._generation):
            me = _get_ident()
            users = guard.users
            users.append(me)
            if not guard.owner and not guard.shared_slow:
                try:
                    busers = bguard.users
                    busers.append(me)
                    if len(busers) == 1 and not bguard.slow:
                        try:
                            status = self._run_with_binding_c(self._ptr, _NULL, binding._ptr)
                            if status:
                                raise_status(status)
                            return
                        finally:
                            busers.remove(me)  # Guard.leave, inline
                            if bguard.watch:
                                bguard._wake()
                    bguard.leave(me)
                finally:
                    users.remove(me)
                    if guard.watch:
                        guard._wake()
            else:
                guard.leave(me)
        self._run_with_binding(binding, run_options)

    def _run_with_binding(self, binding: Any, run_options: RunOptions | None) -> None:
        guard = self._guard
        if guard is None:
            raise ClosedError("Session is closed")
        token = guard.enter_exclusive(self) if self._run_exclusive else guard.enter_shared(self)
        try:
            bguard = binding._guard
            if bguard is None:
                raise ClosedError("IoBinding is closed")
            btoken = bguard.enter_exclusive(binding)  # a binding is not Sync
            try:
                if binding._session is not self:
                    raise InvalidArgument("run_with_binding: this IoBinding belongs to another "
                                          "session")
                if run_options is None:
                    status = self._api.RunWithBinding(self._ptr, ffi.NULL, binding._ptr)
                else:
                    if not isinstance(run_options, RunOptions):
                        raise _not_run_options(run_options)
                    ro_guard = run_options._guard
                    if ro_guard is None:
                        raise ClosedError("RunOptions is closed")
                    ro_token = ro_guard.enter_shared(run_options)
                    try:
                        status = self._api.RunWithBinding(self._ptr, run_options._ptr,
                                                          binding._ptr)
                    finally:
                        ro_guard.leave(ro_token)
                if status:
                    raise_status(status)
            finally:
                bguard.leave(btoken)
        finally:
            guard.leave(token)

    @shared("CreateAllocator")
    def allocator(self, memory_info: MemoryInfo | None = None) -> Allocator:
        """An allocator of this session's (CPU arena by default); it keeps the session alive."""

        info = memory_info or cpu_memory_info()
        info._check_open()
        memory = info.name  # before the allocator exists: nothing to release if this fails
        raw = call_out(self._api.CreateAllocator, "OrtAllocator*", self._ptr, info._ptr)
        return Allocator._wrap(raw, self._api.ReleaseAllocator, (self,), memory)
