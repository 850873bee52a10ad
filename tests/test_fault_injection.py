"""Fault injection: every ORT call an ortc operation makes is made to fail, one at a time.

For each operation below, a first run records (through ``api().instrument``) which OrtApi slots
it calls. Then, for each slot that returns an ``OrtStatus*`` and each of its first few calls,
the operation runs again with that one call replaced by a failure (a status made with
CreateStatus, the original not called). The operation must raise the exception class of the
injected code, and nothing created before the failure may leak:

* ``ortc.live_handles()`` is back to its value before the operation (after gc);
* every raw ORT object created during the operation (values made inside ``Session.run``, type
  infos, shape infos, metadata, statuses, allocator buffers, ...) is released: a recorder pairs
  each creating call's out-pointer with the Release / AllocatorFree call that frees it.

The few places where ortc deliberately carries on after a failed call (a cleanup free, an
optional query) are listed in TOLERATED with the reason; even there the status must be released.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import models
import ortc
from ortc import ElementType, ErrorCode, SparseTensor
from ortc._ffi import ffi
from ortc._loader import api
from ortc.errors import error_class_for

F32 = np.float32
MAX_OCCURRENCES = 3  # fail each of the first N calls of a slot within one operation

# -- raw object accounting ---------------------------------------------------------------------

#: slots that create an owned object into their last (pointer-to-pointer) argument
CREATES = {
    "CreateSessionOptions", "CloneSessionOptions", "CreateRunOptions", "CreateSession",
    "CreateSessionFromArray", "CreateIoBinding", "CreateMemoryInfo", "CreateCpuMemoryInfo",
    "CreateAllocator", "CreateTensorWithDataAsOrtValue", "CreateTensorAsOrtValue",
    "CreateValue", "CreateSparseTensorAsOrtValue", "GetValue", "SessionGetInputTypeInfo",
    "SessionGetOutputTypeInfo", "SessionGetOverridableInitializerTypeInfo", "GetTypeInfo",
    "GetSequenceElementType", "GetMapValueType", "GetOptionalContainedTypeInfo",
    "GetTensorTypeAndShape", "GetSparseTensorValuesTypeAndShape",
    "GetSparseTensorIndicesTypeShape", "SessionGetModelMetadata", "AllocatorGetStats",
    "CreateCUDAProviderOptions", "CreateTensorRTProviderOptions", "CreateKeyValuePairs",
    # allocator memory (freed with AllocatorFree)
    "SessionGetInputName", "SessionGetOutputName", "SessionGetOverridableInitializerName",
    "ModelMetadataGetProducerName", "ModelMetadataGetGraphName", "ModelMetadataGetDomain",
    "ModelMetadataGetDescription", "ModelMetadataGetGraphDescription",
    "ModelMetadataLookupCustomMetadataMap", "SessionEndProfiling", "AllocatorAlloc",
}
RELEASES = {
    "ReleaseValue", "ReleaseTypeInfo", "ReleaseTensorTypeAndShapeInfo", "ReleaseModelMetadata",
    "ReleaseSession", "ReleaseSessionOptions", "ReleaseRunOptions", "ReleaseIoBinding",
    "ReleaseMemoryInfo", "ReleaseAllocator", "ReleaseStatus", "ReleaseKeyValuePairs",
    "ReleaseCUDAProviderOptions", "ReleaseTensorRTProviderOptions",
}


def _caller() -> str:
    """file:line function of the ortc code that called the slot."""
    f = sys._getframe(2)
    while f is not None and os.path.basename(os.path.dirname(f.f_code.co_filename)) != "ortc":
        f = f.f_back
    if f is None:
        return "?"
    return f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno} {f.f_code.co_name}"


class Recorder:
    """Counts slot calls, fails one chosen call, and pairs creations with releases."""

    def __init__(self, fail: tuple[str, int] | None = None, code: int = 1) -> None:
        self.calls: list[tuple[str, str]] = []  # (slot, calling site)
        self.counts: Counter[str] = Counter()
        self.fail = fail
        self.code = code
        self.injected = False
        self.live: dict[int, str] = {}  # pointer -> the slot that made it
        self.status_slots: set[str] = set()
        self.create_status = api().CreateStatus  # the original, taken before instrumenting

    def _born(self, ptr: Any, what: str) -> None:
        p = int(ffi.cast("uintptr_t", ptr))
        if p:
            self.live[p] = what

    def _freed(self, ptr: Any) -> None:
        self.live.pop(int(ffi.cast("uintptr_t", ptr)), None)

    def wrap(self, name: str, original: Any) -> Callable[..., Any]:
        returns_status = ffi.typeof(original).result.cname == "struct OrtStatus *"

        def call(*args: Any) -> Any:
            self.calls.append((name, _caller()))
            self.counts[name] += 1
            if name == "AllocatorFree":
                self._freed(args[1])  # counted as freed even when it fails: ortc tried
            elif name == "ReleaseAvailableProviders":
                self._freed(args[0])
            if returns_status:
                self.status_slots.add(name)
                if self.fail == (name, self.counts[name]):
                    self.injected = True
                    status = self.create_status(self.code, f"injected into {name}".encode())
                    self._born(status, f"status injected into {name} at {_caller()}")
                    return status
            if name in RELEASES:
                self._freed(args[0])
            result = original(*args)
            if returns_status and result != ffi.NULL:
                self._born(result, f"status from {name} at {_caller()}")
                return result
            if name in CREATES:
                self._born(args[-1][0], f"{name} at {_caller()}")
            elif name == "Run":  # outputs: ORT fills the NULL entries
                outs, n = args[7], args[6]
                for i in range(n):
                    self._born(outs[i], "Run output")
            elif name == "GetBoundOutputValues":
                arr, n = args[2][0], args[3][0]
                if arr != ffi.NULL:
                    self._born(arr, "GetBoundOutputValues array")
                    for i in range(n):
                        self._born(arr[i], "bound output value")
            elif name == "GetBoundOutputNames":
                if args[4][0]:
                    self._born(args[2][0], "GetBoundOutputNames buffer")
                    self._born(args[3][0], "GetBoundOutputNames lengths")
            elif name == "ModelMetadataGetCustomMetadataMapKeys":
                keys, n = args[2][0], args[3][0]
                if keys != ffi.NULL:
                    self._born(keys, "metadata keys array")
                    for i in range(n):
                        self._born(keys[i], "metadata key")
            elif name == "GetAvailableProviders":
                self._born(args[0][0], "provider names")
            return result

        return call

    def __enter__(self) -> Recorder:
        self.undo = api().instrument(self.wrap)
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def leaks(self) -> list[str]:
        return sorted(self.live.values())


# -- the operations ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Op:
    name: str
    setup: Callable[[], tuple[Any, ...]]
    action: Callable[..., Any]


def _model(name: str) -> bytes:
    return _MODELS[name]()


_MODELS: dict[str, Callable[[], bytes]] = {
    "add": lambda: models.add_model(F32, ["n"]),
    "fixed": lambda: models.identity_model(models.T.FLOAT, [2, 3]),
    "mlp": lambda: models.mlp_model(2, 8),
    "str": lambda: models.identity_model(models.T.STRING, [2]),
    "int4": lambda: models.identity_model(models.T.INT4, [4]),
    "zipmap": lambda: models.zipmap_model(),
    "seqat": lambda: models.sequence_at_model(),
    "dictvec": lambda: models.dict_vectorizer_model(),
    "opt": lambda: models.optional_input_model(),
    "optout": lambda: models.optional_model(),
    "meta": lambda: models.metadata_model(),
    "overridable": lambda: models.overridable_initializer_model(),
    "mlp_external": lambda: _mlp_external(),
}
_CACHE: dict[str, bytes] = {}


def mb(name: str) -> bytes:
    if name not in _CACHE:
        _CACHE[name] = _model(name)
    return _CACHE[name]


def sess(name: str, **kw: Any) -> ortc.Session:
    return ortc.Session(mb(name), intra_op_num_threads=1, **kw)


def nothing() -> tuple[Any, ...]:
    return ()


_TMP = tempfile.mkdtemp(prefix="ortc-fi-")
_MODEL_FILE = os.path.join(_TMP, "add.onnx")


def _feeds(name: str) -> dict[str, Any]:
    return {
        "add": {"a": np.arange(3, dtype=F32), "b": np.ones(3, F32)},
        "fixed": {"x": np.ones((2, 3), F32)},
        "mlp": {"x": np.ones((2, 8), F32)},
        "str": {"x": np.array(["a", "é"], dtype=object)},
        "int4": {"x": np.array([1, -2, 3, -4], dtype=models.ml_dtypes.int4)},
        "zipmap": {"x": np.ones((2, 3), F32)},
        "seqat": {"seq": [np.ones(2, F32), np.zeros(3, F32)], "i": np.array(1, np.int64)},
        "dictvec": {"x": {1: 2.0, 5: 3.0}},
        "opt": {"opt": np.ones(2, F32)},
        "optout": {"x": np.ones(2, F32)},
        "overridable": {"x": np.ones(3, F32), "bias": np.zeros(3, F32)},
    }[name]


def _run_op(model: str, **kw: Any) -> Op:
    return Op(f"Session.run[{model}{',' + ','.join(kw) if kw else ''}]",
              lambda: (sess(model),), lambda s: s.run(None, _feeds(model), **kw))


def _binding_full(s: ortc.Session) -> Any:
    b = s.io_binding()
    b.bind_input("x", np.ones((2, 3), F32))
    b.bind_output("y", np.empty((2, 3), F32))
    s.run_with_binding(b)
    out = (b.output_names(), b.get_outputs(), b.get_output_values())
    b.synchronize_inputs()
    b.synchronize_outputs()
    b.clear_binding_inputs()
    b.clear_binding_outputs()
    return out


def _binding_device(s: ortc.Session) -> Any:
    b = s.io_binding()
    b.bind_input("x", ortc.Value.from_numpy(np.ones((2, 3), F32)))
    b.bind_output("y")
    s.run_with_binding(b, ortc.RunOptions())
    return b.get_outputs(), b.get_output_values()


def _value_reads(v: ortc.Value) -> Any:
    return (v.kind, v.type_info, v.is_tensor, v.has_value(), v.to_python(), repr(v), len(v))


def _tensor_reads(v: ortc.Value) -> Any:
    return (v.shape, v.element_type, v.dtype, v.numpy(), v.memory_info.name, v.to_python())


def _memory_info() -> Any:
    m = ortc.MemoryInfo("Cpu")
    c = ortc.MemoryInfo.cpu()
    return m.name, m.device_id, m.mem_type, m.allocator_type, m == c, repr(c)


def _allocator(s: ortc.Session) -> Any:
    a = s.allocator()
    p = a.alloc(128)
    a.free(p)
    return a.stats(), a.memory_info.name


def _run_options() -> Any:
    ro = ortc.RunOptions(tag="t", log_severity_level=2, log_verbosity_level=0)
    ro.add_run_config_entry("k", "v")
    ro.terminate()
    ro.unset_terminate()
    return ro.tag, ro.log_severity_level, ro.log_verbosity_level, ro.get_run_config_entry("k")


def _options() -> Any:
    o = ortc.SessionOptions(intra_op_num_threads=1, inter_op_num_threads=1, execution_mode=1,
                            graph_optimization_level=1, enable_mem_pattern=False,
                            enable_cpu_mem_arena=False, logid="fi", log_severity_level=2,
                            log_verbosity_level=0, use_deterministic_compute=True,
                            enable_profiling=False)
    o.add_session_config_entry("session.intra_op.allow_spinning", "0")
    o.add_free_dimension_override_by_name("n", 3)
    o.add_free_dimension_override("DATA_BATCH", 1)
    o.disable_per_session_threads()
    o.append_execution_provider("CPUExecutionProvider", {"use_arena": "1"})
    c = o.clone()
    return o.get_session_config_entry("session.intra_op.allow_spinning"), c


def _initializers() -> Any:
    o = ortc.SessionOptions(intra_op_num_threads=1)
    o.add_initializer("b0", np.full(8, 0.5, F32))
    o.add_external_initializers({"b1": np.zeros(8, F32)})
    with ortc.Session(mb("mlp_external"), o) as s:
        return s.run(None, _feeds("mlp"))


def _mlp_external() -> bytes:
    """The MLP with initializer b1 stored "outside" the model (supplied by the options)."""
    import onnx
    from onnx import external_data_helper

    m = onnx.load_from_string(models.mlp_model(2, 8))
    for t in m.graph.initializer:
        if t.name == "b1":
            external_data_helper.set_external_data(t, location="not_there.bin", length=32)
            t.ClearField("raw_data")
    return m.SerializeToString()


def _profiling() -> Any:
    s = ortc.Session(mb("add"), enable_profiling=True, intra_op_num_threads=1,
                     profile_file_prefix=os.path.join(_TMP, "prof"))
    s.run(None, _feeds("add"))
    s.profiling_start_ns()
    path = s.end_profiling()
    os.unlink(path)
    return path


def _env() -> Any:
    env = ortc.get_env()
    level = env.log_severity_level
    env.log_severity_level = level
    return ortc.available_providers(), env.providers()


def _write_model_file() -> tuple[Any, ...]:
    with open(_MODEL_FILE, "wb") as f:
        f.write(mb("add"))
    return ()


OPS: list[Op] = [
    Op("SessionOptions(every setter)", nothing, _options),
    Op("SessionOptions initializers + Session", nothing, _initializers),
    Op("Session(bytes)", nothing, lambda: sess("add")),
    Op("Session(path)", _write_model_file, lambda: ortc.Session(_MODEL_FILE)),
    Op("Session(providers=...)", nothing,
       lambda: ortc.Session(mb("add"), providers=[("CPUExecutionProvider", {"use_arena": "0"})],
                            intra_op_num_threads=1)),
    # (a session reads its inputs and outputs on first use: described here)
    Op("Session(seq/map inputs and outputs)", nothing,
       lambda: [(s.inputs, s.outputs) for s in (sess("zipmap"), sess("seqat"), sess("dictvec"))]),
    Op("Session(optional input and output)", nothing,
       lambda: [(s.inputs, s.outputs) for s in (sess("opt"), sess("optout"))]),
    Op("Session(overridable initializer)", nothing,
       lambda: sess("overridable").overridable_initializers),
    Op("Session.metadata", lambda: (sess("meta"),), lambda s: s.metadata()),
    _run_op("add"),
    _run_op("fixed"),
    _run_op("str"),
    _run_op("int4"),
    _run_op("zipmap"),
    _run_op("seqat"),
    _run_op("dictvec"),
    _run_op("opt"),
    _run_op("optout"),
    _run_op("overridable"),
    _run_op("add", timeout=60),
    Op("Session.run[add,run_options]", lambda: (sess("add"), ortc.RunOptions()),
       lambda s, ro: s.run(None, _feeds("add"), ro)),
    Op("Session.run_with_values[add]", lambda: (sess("add"),),
       lambda s: s.run_with_values(None, _feeds("add"))),
    Op("Session.run_with_values[zipmap]", lambda: (sess("zipmap"),),
       lambda s: [v.to_python() for v in s.run_with_values(None, _feeds("zipmap"))]),
    Op("IoBinding (arrays)", lambda: (sess("fixed"),), _binding_full),
    Op("IoBinding (Values, device outputs)", lambda: (sess("fixed"),), _binding_device),
    Op("Session.allocator", lambda: (sess("add"),), _allocator),
    Op("profiling", nothing, _profiling),
    Op("Value.from_numpy + reads", nothing,
       lambda: _tensor_reads(ortc.Value.from_numpy(np.ones((2, 3), F32)))),
    Op("Value strings", nothing,
       lambda: _tensor_reads(ortc.Value.from_numpy(np.array(["a", "bc"], dtype=object)))),
    Op("Value int4", nothing,
       lambda: _tensor_reads(ortc.Value.from_numpy(np.array([1, 2, 3],
                                                            dtype=models.ml_dtypes.int4)))),
    Op("Value.from_sequence + reads", nothing,
       lambda: _value_reads(ortc.Value.from_sequence([np.ones(2, F32), np.zeros(1, F32)]))),
    Op("Value.from_map + reads", nothing,
       lambda: _value_reads(ortc.Value.from_map({1: 2.0, 3: 4.0}))),
    Op("Value.from_map (str keys)", nothing,
       lambda: _value_reads(ortc.Value.from_map({"a": 2.0}))),
    Op("Value sparse COO", nothing,
       lambda: ortc.Value.from_sparse(SparseTensor.coo((3, 4), np.ones(2, F32),
                                                       [1, 6])).to_python()),
    Op("Value sparse CSR", nothing,
       lambda: ortc.Value.from_sparse(SparseTensor.csr((2, 3), np.ones(3, F32), [0, 2, 1],
                                                       [0, 2, 3])).to_python()),
    Op("MemoryInfo", nothing, _memory_info),
    Op("RunOptions", nothing, _run_options),
    Op("Env and providers", nothing, _env),
]

#: (operation, slot) pairs where ortc carries on after a failed call, and why
TOLERATED: dict[tuple[str, str], str] = {}
#: slots whose failure ortc ignores everywhere, and why
TOLERATED_SLOTS: dict[str, str] = {
    "GetDenotationFromTypeInfo": "a denotation is optional metadata: none is read as ''",
    "AllocatorFree": "a failed free during cleanup: raising or carrying on are both fine",
}


# -- the tests ------------------------------------------------------------------------------------

def _warm() -> None:
    """Process-wide singletons are made on first use: make them before any baseline."""
    ortc.get_env()
    ortc.memory.cpu_memory_info()
    ortc.default_allocator()
    s = sess("add")
    s.run(None, _feeds("add"))
    s.run(None, _feeds("add"), timeout=60)
    s.close()


def _settle(baseline: dict[str, int]) -> dict[str, int]:
    live = ortc.live_handles()
    if live != baseline:
        gc.collect()
        live = ortc.live_handles()
    return live


def execute(op: Op, rec: Recorder) -> BaseException | None:
    """Set up (not recorded), run the action and drop everything (recorded). Sessions made
    again from one model share its description (ortc.session._DESCRIPTIONS), and the process
    keeps bare options per settings (session_options._bare) and OrtValues over caller memory
    (_run._value_caches), bounded caches: emptied first, so that every execution makes what
    the discovering one made and a failure injected there is reached, and emptied again
    before the end, so that what they kept is released while it is recorded (what is left
    then is a leak)."""
    _empty_caches()
    objs = op.setup()
    error: BaseException | None = None
    with rec:
        try:
            result = op.action(*objs)
            del result
        except BaseException as exc:  # noqa: BLE001 - compared by the caller
            error = exc
            exc.__traceback__ = None  # frames would keep the operation's objects alive
        for o in objs:
            close = getattr(o, "close", None)
            if close is not None:
                close()
        del objs
        _empty_caches()
        gc.collect()
    return error


def _empty_caches() -> None:
    ortc.session._DESCRIPTIONS.clear()
    ortc.session_options._bare.clear()
    ortc._run._value_caches.clear()


def discover(op: Op) -> Recorder:
    rec = Recorder()
    err = execute(op, rec)
    assert err is None, f"{op.name} fails without injection: {err!r}"
    assert not rec.leaks(), f"{op.name} leaks without injection: {rec.leaks()}"
    return rec


CODES = [c for c in ErrorCode if c != ErrorCode.OK]


def injections(rec: Recorder) -> list[tuple[str, int]]:
    """(slot, n): fail the n-th call of the slot; the first few calls from each call site."""
    nth: Counter[str] = Counter()
    per_site: Counter[tuple[str, str]] = Counter()
    out = []
    for name, site in rec.calls:
        nth[name] += 1
        if name not in rec.status_slots:
            continue
        per_site[name, site] += 1
        if per_site[name, site] <= MAX_OCCURRENCES:
            out.append((name, nth[name]))
    return out


PATHS: dict[str, int] = {}
@pytest.mark.parametrize("op", OPS, ids=[o.name for o in OPS])
def test_every_failing_call_raises_and_leaks_nothing(op: Op) -> None:
    _warm()
    gc.collect()
    baseline = ortc.live_handles()
    plan = injections(discover(op))
    assert plan, f"{op.name} calls no status-returning slot"
    problems = []
    for n, (slot, k) in enumerate(plan):
        code = CODES[n % len(CODES)]
        rec = Recorder(fail=(slot, k), code=int(code))
        err = execute(op, rec)
        where = f"{op.name}: failing call {k} of {slot} ({code.name})"
        live = _settle(baseline)
        if not rec.injected:
            continue  # the op took another path this time (e.g. a cache hit): nothing to check
        if err is None:
            if (op.name, slot) not in TOLERATED and slot not in TOLERATED_SLOTS:
                problems.append(f"{where}: no exception")
        elif type(err) is not error_class_for(code):
            problems.append(f"{where}: raised {type(err).__name__}: {err}")
        leaks = rec.leaks()
        if leaks:
            problems.append(f"{where}: leaked {leaks}")
        if live != baseline:
            problems.append(f"{where}: live handles {live}, before {baseline}")
    PATHS[op.name] = len(plan)
    assert not problems, "\n".join(problems)


def test_the_recorder_sees_leaks_and_wrong_classes() -> None:
    """The checks above can fail: an unreleased status and a raw value are reported."""
    rec = Recorder()
    out = ffi.new("OrtValue**")
    with rec:
        a = api()
        st = a.CreateTensorAsOrtValue(ortc.default_allocator()._ptr, [2], 1,
                                      int(ElementType.FLOAT), out)
        assert st == ffi.NULL
        leaked = a.CreateMemoryInfo(b"NoSuchDevice", 0, 0, 0, ffi.new("OrtMemoryInfo**"))
    assert leaked != ffi.NULL
    assert any(x.startswith("CreateTensorAsOrtValue") for x in rec.leaks())
    assert any(x.startswith("status from CreateMemoryInfo") for x in rec.leaks())
    a.ReleaseStatus(leaked)
    a.ReleaseValue(out[0])
