"""Session queries, metadata and session options (creation's error codes: checks/create.py)."""

from __future__ import annotations

import os
import threading
from typing import Any

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Fail, Known, check
from .create import io_names, io_names_of


@check("session.io-types", "Session input/output counts, names and type infos match the "
       "model, a symbolic dim reading -1 with its name.", "none")
def io_types(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.mlp_model(width=8))
    ins, outs = io_names(ctx, sess)
    if (ins, outs) != (["x"], ["y"]):
        raise Fail(f"names {ins} {outs}")
    ti = ctx.out(a.SessionGetInputTypeInfo, "OrtTypeInfo*", sess, 0)
    ctx.defer(a.ReleaseTypeInfo, ti)
    kind = ffi.new("enum ONNXType*")
    ctx.ok(a.GetOnnxTypeFromTypeInfo(ti, kind))
    tinfo = ctx.out(a.CastTypeInfoToTensorInfo, "OrtTensorTypeAndShapeInfo*", ti)
    n = ffi.new("size_t*")
    ctx.ok(a.GetDimensionsCount(tinfo, n))
    dims = ffi.new("int64_t[]", n[0])
    ctx.ok(a.GetDimensions(tinfo, dims, n[0]))
    syms = ffi.new("char*[]", n[0])
    ctx.ok(a.GetSymbolicDimensions(tinfo, syms, n[0]))
    elem = ffi.new("ONNXTensorElementDataType*")
    ctx.ok(a.GetTensorElementType(tinfo, elem))
    got = ([dims[i] for i in range(n[0])], [ctx.c_string(syms[i]) for i in range(n[0])])
    if int(kind[0]) != 1 or int(elem[0]) != 1 or got != ([-1, 8], ["batch", ""]):
        raise Fail(f"kind {kind[0]}, elem {elem[0]}, dims/symbols {got}")
    ot = ctx.out(a.SessionGetOutputTypeInfo, "OrtTypeInfo*", sess, 0)
    a.ReleaseTypeInfo(ot)
    return "x: float [-1 (batch), 8]; y"


@check("session.options-released-early", "SessionOptions may be released right after "
       "CreateSession; the session keeps working.",
       "https://pkg.go.dev/github.com/yalue/onnxruntime_go#NewAdvancedSession")
def options_early(ctx: Ctx) -> str:
    a = ctx.api
    so = ctx.options(release=False)
    sess = ctx.session(models.add_model((2,)), so)
    a.ReleaseSessionOptions(so)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    return "runs after ReleaseSessionOptions"


@check("session.overridable-initializers", "An initializer that is also a graph input is "
       "listed as overridable (not as an input) and feeding it overrides its value.",
       "https://onnxruntime.ai/docs/api/c/struct_ort_api.html")
def overridable(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.overridable_model())
    names = io_names_of(ctx, sess, "OverridableInitializer")
    ins = io_names_of(ctx, sess, "Input")
    ti = ctx.out(a.SessionGetOverridableInitializerTypeInfo, "OrtTypeInfo*", sess, 0)
    a.ReleaseTypeInfo(ti)
    if names != ["bias"] or ins != ["x"]:
        raise Fail(f"overridable {names}, inputs {ins}")
    x = ctx.floats([0, 0, 0])
    default = ctx.read_floats(ctx.run(sess, {"x": x}, ["y"])[0])
    fed = ctx.read_floats(ctx.run(sess, {"x": x, "bias": ctx.floats([7, 8, 9])}, ["y"])[0])
    if default != [1.0, 2.0, 3.0] or fed != [7.0, 8.0, 9.0]:
        raise Fail(f"default {default}, overridden {fed}")
    return "listed apart from inputs; default [1,2,3], fed [7,8,9]"


@check("session.metadata", "SessionGetModelMetadata reports producer, graph name, domain, "
       "descriptions, version and custom keys; a missing key gives NULL and OK.", "none")
def metadata(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.metadata_model())
    md = ctx.out(a.SessionGetModelMetadata, "OrtModelMetadata*", sess)
    ctx.defer(a.ReleaseModelMetadata, md)
    alloc = ctx.allocator

    def s(fn: str) -> str:
        return ctx.take_string(ctx.out(getattr(a, fn), "char*", md, alloc))

    got = {"producer": s("ModelMetadataGetProducerName"),
           "graph": s("ModelMetadataGetGraphName"), "domain": s("ModelMetadataGetDomain"),
           "description": s("ModelMetadataGetDescription")}
    if ctx.has("ModelMetadataGetGraphDescription"):
        got["graph_description"] = s("ModelMetadataGetGraphDescription")
    ver = ffi.new("int64_t*")
    ctx.ok(a.ModelMetadataGetVersion(md, ver))
    got["version"] = str(ver[0])
    keys = ffi.new("char***")
    nkeys = ffi.new("int64_t*")
    ctx.ok(a.ModelMetadataGetCustomMetadataMapKeys(md, alloc, keys, nkeys))
    names = sorted(ctx.take_string(keys[0][i]) for i in range(nkeys[0]))
    if nkeys[0]:
        ctx.ok(a.AllocatorFree(alloc, keys[0]))
    author = ctx.take_string(ctx.out(a.ModelMetadataLookupCustomMetadataMap, "char*", md, alloc,
                                     b"author"))
    missing = ctx.out(a.ModelMetadataLookupCustomMetadataMap, "char*", md, alloc, b"nope")
    want = {"producer": "ortc-conformance", "graph": "conformance_graph",
            "domain": "org.ortc.test", "description": "model doc", "version": "7"}
    if "graph_description" in got:
        want["graph_description"] = "graph doc"
    if got != want or names != ["author", "purpose"] or author != "ortc":
        raise Fail(f"got {got}, keys {names}, author {author!r}")
    if missing != ffi.NULL:
        raise Fail("a missing key returned a string")
    return "all fields match; missing key -> NULL"


@check("session.metadata-outlives-session", "Model metadata stays readable after its session "
       "is released (it is a copy).", "onnxruntime/core/session/onnxruntime_c_api.cc "
       "(SessionGetModelMetadata copies)")
def metadata_outlives(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.metadata_model(), release=False)
    md = ctx.out(a.SessionGetModelMetadata, "OrtModelMetadata*", sess)
    ctx.defer(a.ReleaseModelMetadata, md)
    a.ReleaseSession(sess)
    name = ctx.take_string(ctx.out(a.ModelMetadataGetGraphName, "char*", md, ctx.allocator))
    if name != "conformance_graph":
        raise Fail(f"graph name {name!r}")
    return "read after ReleaseSession"


@check("session.profiling", "With profiling enabled, SessionEndProfiling returns the name of "
       "a JSON file that exists, and the start time is non-zero.",
       "https://onnxruntime.ai/docs/performance/tune-performance/profiling-tools.html")
def profiling(ctx: Ctx) -> str:
    a = ctx.api
    d = ctx.tmpdir()
    so = ctx.options()
    ctx.ok(a.EnableProfiling(so, os.path.join(d, "prof").encode()))
    sess = ctx.session(models.add_model((2,)), so)
    ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])}, ["z"])
    start = ctx.ffi.new("uint64_t*")
    ctx.ok(a.SessionGetProfilingStartTimeNs(sess, start))
    name = ctx.take_string(ctx.out(a.SessionEndProfiling, "char*", sess, ctx.allocator))
    if not os.path.exists(name):
        raise Fail(f"{name} does not exist")
    with open(name, encoding="utf-8") as f:
        head = f.read(1)
    if head != "[" or start[0] == 0:
        raise Fail(f"file starts with {head!r}, start time {start[0]}")
    ctx.ok(a.DisableProfiling(so))
    return f"{os.path.basename(name)}"


@check("session.free-dim-override", "AddFreeDimensionOverrideByName fixes a symbolic dim: the "
       "session's input type reports the value.", "none")
def free_dim(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    so = ctx.options()
    ctx.ok(a.AddFreeDimensionOverrideByName(so, b"batch", 5))
    ctx.ok(a.AddFreeDimensionOverride(so, b"DATA_BATCH", 5))  # by denotation; none in the model
    sess = ctx.session(models.mlp_model(width=8), so)
    ti = ctx.out(a.SessionGetInputTypeInfo, "OrtTypeInfo*", sess, 0)
    ctx.defer(a.ReleaseTypeInfo, ti)
    tinfo = ctx.out(a.CastTypeInfoToTensorInfo, "OrtTensorTypeAndShapeInfo*", ti)
    dims = ffi.new("int64_t[2]")
    ctx.ok(a.GetDimensions(tinfo, dims, 2))
    if list(dims) != [5, 8]:
        raise Fail(f"dims {list(dims)}")
    return "[batch, 8] -> [5, 8]"


@check("session.config-entries", "AddSessionConfigEntry values read back with "
       "HasSessionConfigEntry/GetSessionConfigEntry; a short buffer is refused with the "
       "needed size.", "onnxruntime_c_api.h GetSessionConfigEntry",
       slots=("HasSessionConfigEntry", "GetSessionConfigEntry"))
def config_entries(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    so = ctx.options()
    ctx.ok(a.AddSessionConfigEntry(so, b"session.use_env_allocators", b"0"))
    has = ffi.new("int*")
    ctx.ok(a.HasSessionConfigEntry(so, b"session.use_env_allocators", has))
    missing = ffi.new("int*")
    ctx.ok(a.HasSessionConfigEntry(so, b"session.no.such.key", missing))
    size = ffi.new("size_t*", 0)
    err = ctx.status(a.GetSessionConfigEntry(so, b"session.use_env_allocators", ffi.NULL, size))
    needed = size[0]
    buf = ffi.new("char[]", max(needed, 1))
    size[0] = needed
    ctx.ok(a.GetSessionConfigEntry(so, b"session.use_env_allocators", buf, size))
    value = ctx.c_string(buf)
    small = ffi.new("char[1]")
    size[0] = 1
    err2 = ctx.status(a.GetSessionConfigEntry(so, b"session.use_env_allocators", small, size))
    if has[0] != 1 or missing[0] != 0 or value != "0" or needed != 2:
        raise Fail(f"has {has[0]}, missing {missing[0]}, value {value!r}, size {needed}")
    detail = f"value '0', size query {needed} ({'OK' if err is None else code_name(err[0])})"
    if err2 is None:
        raise Fail("a 1-byte buffer was accepted")
    if ctx.has("GetSessionOptionsConfigEntries"):
        kv = ctx.out(a.GetSessionOptionsConfigEntries, "OrtKeyValuePairs*", so)
        v = ctx.c_string(a.GetKeyValue(kv, b"session.use_env_allocators"))
        a.ReleaseKeyValuePairs(kv)
        if v != "0":
            raise Fail(f"GetSessionOptionsConfigEntries gives {v!r}")
        detail += "; GetSessionOptionsConfigEntries agrees"
    return detail + f"; short buffer: {code_name(err2[0])}"


@check("session.clone-options", "CloneSessionOptions copies config entries; changing the clone "
       "leaves the original alone.", "none", slots=("HasSessionConfigEntry",))
def clone(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    so = ctx.options()
    ctx.ok(a.AddSessionConfigEntry(so, b"ortc.key", b"v1"))
    so2 = ctx.out(a.CloneSessionOptions, "OrtSessionOptions*", so)
    ctx.defer(a.ReleaseSessionOptions, so2)
    ctx.ok(a.AddSessionConfigEntry(so2, b"ortc.other", b"v2"))
    h1, h2, h3 = ffi.new("int*"), ffi.new("int*"), ffi.new("int*")
    ctx.ok(a.HasSessionConfigEntry(so2, b"ortc.key", h1))
    ctx.ok(a.HasSessionConfigEntry(so2, b"ortc.other", h2))
    ctx.ok(a.HasSessionConfigEntry(so, b"ortc.other", h3))
    if (h1[0], h2[0], h3[0]) != (1, 1, 0):
        raise Fail(f"clone has key {h1[0]}, other {h2[0]}; original has other {h3[0]}")
    return "independent copy"


@check("session.options-setters", "Every plain SessionOptions setter accepts a valid value and "
       "the session still gives the right result.", "https://onnxruntime.ai/docs/api/c/")
def setters(ctx: Ctx) -> str:
    a = ctx.api
    so = ctx.options()
    d = ctx.tmpdir()
    calls: list[tuple[str, tuple[Any, ...]]] = [
        ("SetSessionExecutionMode", (1,)), ("SetSessionExecutionMode", (0,)),
        ("DisableMemPattern", ()), ("EnableMemPattern", ()),
        ("DisableCpuMemArena", ()), ("EnableCpuMemArena", ()),
        ("SetSessionLogId", (b"conformance",)), ("SetSessionLogVerbosityLevel", (0,)),
        ("SetSessionLogSeverityLevel", (3,)), ("SetSessionGraphOptimizationLevel", (99,)),
        ("SetOptimizedModelFilePath", (os.path.join(d, "opt.onnx").encode(),)),
        ("DisableProfiling", ()),
    ]
    if ctx.has("SetDeterministicCompute"):
        calls.append(("SetDeterministicCompute", (True,)))
    done = []
    for name, args in calls:
        if ctx.has(name):
            ctx.ok(getattr(a, name)(so, *args), name)
            done.append(name)
    if ctx.has("GetMemPatternEnabled", "GetSessionExecutionMode"):
        mp = ctx.ffi.new("int*")
        ctx.ok(a.GetMemPatternEnabled(so, mp))
        mode = ctx.ffi.new("ExecutionMode*")
        ctx.ok(a.GetSessionExecutionMode(so, mode))
        if mp[0] != 1 or int(mode[0]) != 0:
            raise Fail(f"getters: mem pattern {mp[0]}, mode {mode[0]}")
        done.append("GetMemPatternEnabled/GetSessionExecutionMode")
    sess = ctx.session(models.add_model((2,)), so)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    wrote = os.path.exists(os.path.join(d, "opt.onnx"))
    return f"{len(done)} setters OK; optimized model written: {wrote}"


@check("create.ort-extensions-absent", "EnableOrtCustomOps on a wheel built without "
       "onnxruntime-extensions fails with an error status rather than doing nothing.", "none",
       slots=("EnableOrtCustomOps",))
def ort_extensions(ctx: Ctx) -> str:
    err = ctx.status(ctx.api.EnableOrtCustomOps(ctx.options()))
    if err is None:
        raise Known("accepted: this build includes onnxruntime-extensions")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("session.prepacked-container", "Two sessions created with one prepacked-weights "
       "container both compute correctly.", "onnxruntime_c_api.h "
       "CreateSessionFromArrayWithPrepackedWeightsContainer",
       slots=("CreatePrepackedWeightsContainer",))
def prepacked(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    box = ctx.out(a.CreatePrepackedWeightsContainer, "OrtPrepackedWeightsContainer*")
    ctx.defer(a.ReleasePrepackedWeightsContainer, box)  # after the sessions (reverse order)
    m = models.mlp_model(width=8)
    buf = ffi.from_buffer(m)
    results = []
    path = os.path.join(ctx.tmpdir(), "mlp.onnx")
    with open(path, "wb") as f:
        f.write(m)
    for i in range(2):
        so = ctx.options()
        if i == 0:
            sess = ctx.out(a.CreateSessionFromArrayWithPrepackedWeightsContainer, "OrtSession*",
                           ctx.env, buf, len(m), so, box)
        else:
            sess = ctx.out(a.CreateSessionWithPrepackedWeightsContainer, "OrtSession*",
                           ctx.env, path.encode(), so, box)
        ctx.defer(a.ReleaseSession, sess)
        x = ctx.floats([0.5] * 8, [1, 8])
        results.append(ctx.read_floats(ctx.run(sess, {"x": x}, ["y"])[0]))
    want = models.mlp_reference([[0.5] * 8], width=8)[0]
    if any(abs(p - q) > 1e-4 for r in results for p, q in zip(r, want)):
        raise Fail(f"{results} vs {want}")
    return "both sessions match the reference"


@check("session.add-initializer", "AddInitializer replaces a model initializer with a "
       "caller-owned OrtValue.", "onnxruntime_c_api.h AddInitializer (the value must outlive "
       "the session)", slots=("AddInitializer",))
def add_initializer(ctx: Ctx) -> str:
    a = ctx.api
    so = ctx.options()
    bias = ctx.floats([10, 20, 30])
    ctx.ok(a.AddInitializer(so, b"bias", bias))
    sess = ctx.session(models.overridable_model(), so)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([0, 0, 0])}, ["y"])[0])
    if got != [10.0, 20.0, 30.0]:
        raise Fail(f"got {got}")
    return "the session used the added value"


@check("session.external-initializers", "AddExternalInitializers supplies an initializer's "
       "data from a caller OrtValue.", "onnxruntime_c_api.h AddExternalInitializers",
       slots=("AddExternalInitializers",))
def external_initializers(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    t = models.tensor_type(models.FLOAT, (2,))
    init = (models._packed(1, [2]) + models._int(2, models.FLOAT) + models._bytes(8, "w")
            + models._bytes(13, models._bytes(1, "location") + models._bytes(2, "w.bin"))
            + models._bytes(13, models._bytes(1, "length") + models._bytes(2, "8"))
            + models._int(14, 1))
    m = models.model([models.node("Add", ["x", "w"], ["y"])], [models.value_info("x", t)],
                     [models.value_info("y", t)], [init])
    so = ctx.options()
    w = ctx.floats([5, 6])
    names = ffi.new("char*[]", [ctx.keep(ffi.new("char[]", b"w"))])
    vals = ffi.new("OrtValue*[]", [w])
    ctx.ok(a.AddExternalInitializers(so, names, vals, 1))
    sess = ctx.session(m, so)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 1])}, ["y"])[0])
    if got != [6.0, 7.0]:
        raise Fail(f"got {got}")
    return "external data taken from the OrtValue"


@check("session.memory-info-for-io", "SessionGetMemoryInfoForInputs/Outputs report CPU memory "
       "for every input and output of a CPU session.", "onnxruntime_c_api.h",
       slots=("SessionGetMemoryInfoForInputs", "SessionGetMemoryInfoForOutputs"))
def memory_info_io(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    ins = ffi.new("OrtMemoryInfo*[2]")
    ctx.ok(a.SessionGetMemoryInfoForInputs(sess, ins, 2))
    outs = ffi.new("OrtMemoryInfo*[1]")
    ctx.ok(a.SessionGetMemoryInfoForOutputs(sess, outs, 1))
    names = []
    for mi in list(ins) + list(outs):
        p = ffi.new("char**")
        ctx.ok(a.MemoryInfoGetName(mi, p))
        names.append(ctx.c_string(p[0]))
    if any(n != "Cpu" for n in names):
        raise Fail(f"names {names}")
    if ctx.has("SessionGetEpDeviceForInputs"):
        dev = ffi.new("OrtEpDevice*[2]")
        ctx.ok(a.SessionGetEpDeviceForInputs(sess, dev, 2))
    if ctx.has("SessionGetEpDeviceForOutputs"):
        dev = ffi.new("OrtEpDevice*[1]")
        ctx.ok(a.SessionGetEpDeviceForOutputs(sess, dev, 1))
    return "all Cpu"


@check("session.user-logging-function", "A session logger set with SetUserLoggingFunction "
       "receives that session's messages on the creating thread.",
       "onnxruntime_c_api.h SetUserLoggingFunction", slots=("SetUserLoggingFunction",))
def user_logger(ctx: Ctx) -> str:
    a = ctx.api
    seen: list[int] = []

    def log(_p: Any, _sev: int, _cat: Any, _id: Any, _loc: Any, _msg: Any) -> None:
        seen.append(threading.get_native_id())

    cb = ctx.keep(ctx.ffi.callback("OrtLoggingFunction", log))
    so = ctx.options()
    ctx.ok(a.SetUserLoggingFunction(so, cb, ctx.ffi.NULL))
    ctx.ok(a.SetSessionLogSeverityLevel(so, 0))
    sess = ctx.session(models.add_model((2,)), so, release=False)
    a.ReleaseSession(sess)
    if not seen:
        raise Fail("no message at VERBOSE")
    me = threading.get_native_id()
    return f"{len(seen)} messages, {sum(1 for t in seen if t == me)} on the creating thread"


@check("session.custom-thread-functions", "With custom create/join thread functions, ORT makes "
       "its intra-op threads through them and joins every one when the session is released.",
       "onnxruntime_c_api.h SessionOptionsSetCustomCreateThreadFn",
       slots=("SessionOptionsSetCustomCreateThreadFn", "SessionOptionsSetCustomJoinThreadFn"))
def custom_threads(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    threads: dict[int, threading.Thread] = {}
    joined: list[int] = []

    def create(_opts: Any, worker: Any, param: Any) -> Any:
        key = len(threads) + 1
        t = threading.Thread(target=lambda: worker(param), daemon=True)
        threads[key] = t
        t.start()
        return ffi.cast("OrtCustomThreadHandle", key)

    def join(handle: Any) -> None:
        key = int(ffi.cast("uintptr_t", handle))
        threads[key].join()
        joined.append(key)

    cf = ctx.keep(ffi.callback("OrtCustomCreateThreadFn", create))
    jf = ctx.keep(ffi.callback("OrtCustomJoinThreadFn", join))
    so = ctx.options(intra=3)
    ctx.ok(a.SessionOptionsSetCustomCreateThreadFn(so, cf))
    ctx.ok(a.SessionOptionsSetCustomThreadCreationOptions(so, ffi.NULL))
    ctx.ok(a.SessionOptionsSetCustomJoinThreadFn(so, jf))
    sess = ctx.session(models.mlp_model(), so, release=False)
    ctx.run(sess, {"x": ctx.floats([0.1] * 64, [2, 32])}, ["y"])
    made = len(threads)
    a.ReleaseSession(sess)
    if made == 0:
        raise Fail("the create function was never called")
    if sorted(joined) != sorted(threads):
        raise Fail(f"created {made}, joined {len(joined)}")
    return f"{made} threads created and joined"


@check("session.ep-graph-assignment", "With session.record_ep_graph_assignment_info=1, "
       "Session_GetEpGraphAssignmentInfo (API 24) reports every node assigned to the CPU "
       "provider, by name and operator type.", "onnxruntime_c_api.h "
       "Session_GetEpGraphAssignmentInfo", slots=("Session_GetEpGraphAssignmentInfo",))
def ep_assignment(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    so = ctx.options(config={"session.record_ep_graph_assignment_info": "1"})
    sess = ctx.session(models.mlp_model(width=4, layers=1), so)
    subs = ffi.new("OrtEpAssignedSubgraph***")
    n = ffi.new("size_t*")
    ctx.ok(a.Session_GetEpGraphAssignmentInfo(sess, subs, n))
    seen = []
    for i in range(n[0]):
        sub = subs[0][i]
        ep = ffi.new("char**")
        ctx.ok(a.EpAssignedSubgraph_GetEpName(sub, ep))
        nodes = ffi.new("OrtEpAssignedNode***")
        m = ffi.new("size_t*")
        ctx.ok(a.EpAssignedSubgraph_GetNodes(sub, nodes, m))
        for j in range(m[0]):
            nm, dom, op = ffi.new("char**"), ffi.new("char**"), ffi.new("char**")
            ctx.ok(a.EpAssignedNode_GetName(nodes[0][j], nm))
            ctx.ok(a.EpAssignedNode_GetDomain(nodes[0][j], dom))
            ctx.ok(a.EpAssignedNode_GetOperatorType(nodes[0][j], op))
            seen.append((ctx.c_string(ep[0]), ctx.c_string(op[0])))
    if not seen or any(ep != "CPUExecutionProvider" for ep, _ in seen):
        raise Fail(f"assignments {seen}")
    return f"{len(seen)} node(s) on CPU: {', '.join(sorted({o for _, o in seen}))}"


@check("session.external-files-in-memory", "AddExternalInitializersFromFilesInMemory serves a "
       "model's external-data file from a caller buffer. The options keep the buffer by "
       "pointer, not a copy: a session created after the buffer is overwritten reads the new "
       "bytes; a session already created copied the data and keeps its results.",
       "onnxruntime_c_api.h AddExternalInitializersFromFilesInMemory",
       slots=("AddExternalInitializersFromFilesInMemory",))
def external_in_memory(ctx: Ctx) -> str:
    import struct as st
    a, ffi = ctx.api, ctx.ffi
    t = models.tensor_type(models.FLOAT, (2,))
    init = (models._packed(1, [2]) + models._int(2, models.FLOAT) + models._bytes(8, "w")
            + models._bytes(13, models._bytes(1, "location") + models._bytes(2, "w.bin"))
            + models._bytes(13, models._bytes(1, "offset") + models._bytes(2, "0"))
            + models._bytes(13, models._bytes(1, "length") + models._bytes(2, "8"))
            + models._int(14, 1))
    m = models.model([models.node("Add", ["x", "w"], ["y"])], [models.value_info("x", t)],
                     [models.value_info("y", t)], [init])
    so = ctx.options()
    data = ctx.keep(ffi.new("char[]", st.pack("<2f", 5, 6)))
    name = ctx.keep(ffi.new("char[]", b"w.bin"))
    ctx.ok(a.AddExternalInitializersFromFilesInMemory(
        so, ffi.new("char*[]", [name]), ffi.new("char*[]", [data]), ffi.new("size_t[]", [8]),
        1))
    sess, err = ctx.try_session(m, so)
    if err:
        raise Fail(f"{code_name(err[0])}: {short(err[1], 200)}")
    ctx.defer(a.ReleaseSession, sess)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 1])}, ["y"])[0])
    if got != [6.0, 7.0]:
        raise Fail(f"got {got}")
    weights = ffi.cast("float*", data)
    weights[0], weights[1] = 50.0, 60.0  # the caller's buffer changes after the creation
    kept = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 1])}, ["y"])[0])
    later, err = ctx.try_session(m, so)
    if err:
        raise Fail(f"a second session: {code_name(err[0])}: {short(err[1], 200)}")
    ctx.defer(a.ReleaseSession, later)
    seen = ctx.read_floats(ctx.run(later, {"x": ctx.floats([1, 1])}, ["y"])[0])
    if kept != [6.0, 7.0] or seen != [51.0, 61.0]:
        raise Fail(f"after overwriting the buffer: the first session gives {kept} (its "
                   f"creation's data is [6, 7]), a new session gives {seen} (the new bytes "
                   "give [51, 61])")
    return ("w.bin read from memory; after the buffer changes the session keeps [6, 7], a new "
            "session from the options reads the new bytes [51, 61]")


@check("session.external-initializer-info", "CreateExternalInitializerInfo (API 23) keeps the "
       "path, offset and size it is given.", "onnxruntime_c_api.h CreateExternalInitializerInfo",
       slots=("CreateExternalInitializerInfo", "ExternalInitializerInfo_GetFilePath"))
def external_info(ctx: Ctx) -> str:
    a = ctx.api
    info = ctx.out(a.CreateExternalInitializerInfo, "OrtExternalInitializerInfo*",
                   b"weights.bin", 128, 4096)
    ctx.defer(a.ReleaseExternalInitializerInfo, info)
    got = (ctx.c_string(a.ExternalInitializerInfo_GetFilePath(info)),
           int(a.ExternalInitializerInfo_GetFileOffset(info)),
           int(a.ExternalInitializerInfo_GetByteSize(info)))
    if got != ("weights.bin", 128, 4096):
        raise Fail(f"got {got}")
    return "weights.bin @128, 4096 bytes"


@check("create.lora-adapter-errors", "CreateLoraAdapter on a missing file and "
       "CreateLoraAdapterFromArray on bytes that are not an adapter fail with error statuses.",
       "onnxruntime_c_api.h CreateLoraAdapter", slots=("CreateLoraAdapter",
                                                       "CreateLoraAdapterFromArray"))
def lora_errors(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    box = ffi.new("OrtLoraAdapter**")
    missing = os.path.join(ctx.tmpdir(), "absent.onnx_adapter")
    e1 = ctx.status(a.CreateLoraAdapter(missing.encode(), ffi.NULL, box))
    junk = b"not a lora adapter" * 4
    e2 = ctx.status(a.CreateLoraAdapterFromArray(ffi.from_buffer(junk), len(junk), ffi.NULL,
                                                 box))
    if e1 is None or e2 is None:
        raise Fail(f"missing file: {e1}; junk bytes: {e2}")
    return f"missing file: {code_name(e1[0])}; junk bytes: {code_name(e2[0])}"


def logged_options(ctx: Ctx, so: Any, model: bytes | None = None) -> tuple[Any, str]:
    """Create a session from ``so`` with a session logger at INFO: (the session, released when
    the check ends; the line describing its options that ORT logs at creation, or "")."""
    lines: list[str] = []
    lock = threading.Lock()

    def log(_p: Any, _sev: int, _cat: Any, _id: Any, _loc: Any, msg: Any) -> None:
        text = ctx.c_string(msg)
        if "Session Options" in text:
            with lock:
                lines.append(text)

    cb = ctx.keep(ctx.ffi.callback("OrtLoggingFunction", log))
    ctx.ok(ctx.api.SetUserLoggingFunction(so, cb, ctx.ffi.NULL), "SetUserLoggingFunction")
    ctx.ok(ctx.api.SetSessionLogSeverityLevel(so, 1), "SetSessionLogSeverityLevel(INFO)")
    sess = ctx.session(model or models.add_model((2,)), so)
    return sess, (lines[0] if lines else "")


def logged_field(line: str, name: str) -> str:
    """The value ``name:<value>`` has in a logged options line ("" when absent)."""
    at = line.find(f" {name}:")
    return line[at + len(name) + 2:].split(" ", 1)[0] if at >= 0 else ""


def add_runs(ctx: Ctx, sess: Any) -> bool:
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    return got == [4.0, 6.0]


@check("session.deterministic-compute", "SetDeterministicCompute (API 17) sets a flag of the "
       "options that each CreateSession copies into its session: the options line a session "
       "logs at creation (INFO) reads use_deterministic_compute:0 by default, 1 after "
       "SetDeterministicCompute(true), and 0 again for a session created after "
       "SetDeterministicCompute(false) on the same options, while the first session still "
       "runs; no session config entry is added (GetSessionOptionsConfigEntries, API 23).",
       "onnxruntime_c_api.h SetDeterministicCompute",
       slots=("SetDeterministicCompute", "SetUserLoggingFunction"))
def deterministic_compute(ctx: Ctx) -> str:
    a = ctx.api
    seen = []
    so = ctx.options()
    _, line = logged_options(ctx, so)
    seen.append(logged_field(line, "use_deterministic_compute"))
    ctx.ok(a.SetDeterministicCompute(so, True), "SetDeterministicCompute(true)")
    first, line = logged_options(ctx, so)
    seen.append(logged_field(line, "use_deterministic_compute"))
    ctx.ok(a.SetDeterministicCompute(so, False), "SetDeterministicCompute(false)")
    _, line = logged_options(ctx, so)
    seen.append(logged_field(line, "use_deterministic_compute"))
    if seen != ["0", "1", "0"]:
        raise Fail(f"logged use_deterministic_compute {seen} (default, true, false): expected "
                   "0, 1, 0")
    if not add_runs(ctx, first):
        raise Fail("the session made with the flag set computes wrong")
    entries = "no config-entry getter before API 23"
    if ctx.has("GetSessionOptionsConfigEntries"):
        ctx.ok(a.SetDeterministicCompute(so, True), "SetDeterministicCompute(true)")
        got = list(ctx.pairs(ctx.out(a.GetSessionOptionsConfigEntries, "OrtKeyValuePairs*", so),
                             release=True))
        if got:
            raise Fail(f"config entries after SetDeterministicCompute: {got}")
        entries = "no config entry added"
    return f"logged 0, 1, 0 (default, true, false): read at each creation; {entries}"


#: OrtEpApi entry 73 (the 74th, API 29): the getter plugin EPs read the buffer with
_GET_SOURCE_BUFFER = (73, "OrtStatus*(*)(const OrtSessionOptions*, const void**, size_t*)")


@check("session.weightless-source-buffer", "SessionOptionsSetWeightlessSourceModelBuffer (API "
       "29) refuses a NULL pointer and a zero size with INVALID_ARGUMENT, leaving what was set; "
       "it keeps the caller's pointer and size, not a copy: the EP table's getter "
       "(SessionOptionsGetWeightlessSourceModelBuffer, entry 73) reads NULL and 0 before, then "
       "the very pointer and size of the last call; CloneSessionOptions carries it from 1.32.0 "
       "(1.29.0-1.31.1: the clone reads NULL and 0); a CPU session made from the options runs.",
       "https://github.com/microsoft/onnxruntime/blob/f5725e409464214e253d35c3b30562df4b86384b/"
       "docs/design/Weightless_Mode.md",
       slots=("SessionOptionsSetWeightlessSourceModelBuffer", "GetEpApi", "CloneSessionOptions"))
def weightless_source_buffer(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    index, sig = _GET_SOURCE_BUFFER
    get = ffi.cast(sig, ffi.cast("void**", a.GetEpApi())[index])
    data, size = ffi.new("const void**"), ffi.new("size_t*")

    def read(options: Any) -> tuple[int, int]:
        data[0], size[0] = ffi.cast("void*", 1), 7  # the getter must overwrite both
        ctx.ok(get(options, data, size), "SessionOptionsGetWeightlessSourceModelBuffer")
        return int(ffi.cast("uintptr_t", data[0])), int(size[0])

    def addr(buf: Any) -> int:
        return int(ffi.cast("uintptr_t", buf))

    so = ctx.options()
    if read(so) != (0, 0):
        raise Fail(f"options never given a buffer read {read(so)}")
    first, second = ctx.keep(ffi.new("char[]", 16)), ctx.keep(ffi.new("char[]", 8))
    set_buffer = a.SessionOptionsSetWeightlessSourceModelBuffer
    ctx.ok(set_buffer(so, first, 16), "set a 16-byte buffer")
    if read(so) != (addr(first), 16):
        raise Fail(f"after setting the 16-byte buffer at {addr(first):#x}: {read(so)}")
    ctx.ok(set_buffer(so, second, 8), "set an 8-byte buffer")
    refused = [ctx.error(set_buffer(so, ffi.NULL, 8), "INVALID_ARGUMENT", "a NULL pointer"),
               ctx.error(set_buffer(so, first, 0), "INVALID_ARGUMENT", "a zero size")]
    if read(so) != (addr(second), 8):
        raise Fail(f"after a second set and two refusals: {read(so)} (the second buffer is at "
                   f"{addr(second):#x})")
    clone = ctx.out(a.CloneSessionOptions, "OrtSessionOptions*", so)
    ctx.defer(a.ReleaseSessionOptions, clone)
    carried = read(clone)
    want = (addr(second), 8) if ctx.version >= (1, 32) else (0, 0)
    if carried != want:
        raise Fail(f"the clone reads {carried}, expected {want} on {ctx.info.version}")
    sess = ctx.session(models.add_model((2,)), so)
    if not add_runs(ctx, sess):
        raise Fail("a session made from the options computes wrong")
    return (f"{refused[0]}; {refused[1]}; the getter reads the caller's pointer and size of "
            f"the last call; the clone {'carries it' if carried[1] else 'reads NULL, 0'}; "
            "the session runs")
