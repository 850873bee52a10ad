"""Send claims for the newer objects: graphs, compilation options, EP records, attributes.

As the send.* family in send.py: each object is made on a thread that then ends and is used
(and released, when the caller owns it) on another; where its functions take a const pointer,
several threads also read one object at once. The model editor and the compile API are
sub-tables (GetModelEditorApi, GetCompileApi): their functions are called through the table's
function pointers, by their position in it (an ABI fact: those tables only grow at the end).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from .. import models
from .._capi import Ctx, code_name, short, together
from .._registry import Fail, Skip, check
from .send import _expect, _moved, _on_thread

C_API = "https://onnxruntime.ai/docs/api/c/struct_ort_api.html"
COMPILE_API = "https://onnxruntime.ai/docs/api/c/struct_ort_compile_api.html"
EDITOR_API = "https://onnxruntime.ai/docs/api/c/struct_ort_model_editor_api.html"

#: positions in OrtCompileApi (API 22) of the functions used here, with their C types
_COMPILE = {
    "ReleaseModelCompilationOptions": (0, "void(*)(OrtModelCompilationOptions*)"),
    "CreateModelCompilationOptionsFromSessionOptions": (
        1, "OrtStatus*(*)(const OrtEnv*, const OrtSessionOptions*, "
           "OrtModelCompilationOptions**)"),
    "SetInputModelFromBuffer": (
        3, "OrtStatus*(*)(OrtModelCompilationOptions*, const void*, size_t)"),
    "SetOutputModelPath": (4, "OrtStatus*(*)(OrtModelCompilationOptions*, const char*)"),
    "SetEpContextEmbedMode": (7, "OrtStatus*(*)(OrtModelCompilationOptions*, bool)"),
    "CompileModel": (8, "OrtStatus*(*)(const OrtEnv*, const OrtModelCompilationOptions*)"),
}

#: positions in OrtModelEditorApi (API 22)
_EDITOR = {
    "CreateTensorTypeInfo": (0, "OrtStatus*(*)(const OrtTensorTypeAndShapeInfo*, OrtTypeInfo**)"),
    "CreateValueInfo": (5, "OrtStatus*(*)(const char*, const OrtTypeInfo*, OrtValueInfo**)"),
    "CreateNode": (6, "OrtStatus*(*)(const char*, const char*, const char*, const char* const*, "
                      "size_t, const char* const*, size_t, OrtOpAttr**, size_t, OrtNode**)"),
    "CreateGraph": (7, "OrtStatus*(*)(OrtGraph**)"),
    "SetGraphInputs": (8, "OrtStatus*(*)(OrtGraph*, OrtValueInfo**, size_t)"),
    "SetGraphOutputs": (9, "OrtStatus*(*)(OrtGraph*, OrtValueInfo**, size_t)"),
    "AddInitializerToGraph": (10, "OrtStatus*(*)(OrtGraph*, const char*, OrtValue*, bool)"),
    "AddNodeToGraph": (11, "OrtStatus*(*)(OrtGraph*, OrtNode*)"),
    "CreateModel": (12, "OrtStatus*(*)(const char* const*, const int*, size_t, OrtModel**)"),
    "AddGraphToModel": (13, "OrtStatus*(*)(OrtModel*, OrtGraph*)"),
    "CreateSessionFromModel": (14, "OrtStatus*(*)(const OrtEnv*, const OrtModel*, "
                                   "const OrtSessionOptions*, OrtSession**)"),
}


def _table(ctx: Ctx, getter: str, layout: dict[str, tuple[int, str]]) -> dict[str, Any]:
    """The functions of a sub-table, by name (Skip when the library has no such table)."""
    ffi = ctx.ffi
    ptr = getattr(ctx.api, getter)()
    if ptr == ffi.NULL:
        raise Skip(f"{getter} returned NULL")
    slots = ffi.cast("void**", ptr)
    return {name: ffi.cast(sig, slots[i]) for name, (i, sig) in layout.items()}


@check("send.external-initializer-info", "An OrtExternalInitializerInfo made on one thread "
       "reads back its path, offset and size and is released on another thread, after its "
       "maker has ended.", f"{C_API} (CreateExternalInitializerInfo copies the path; the "
       "getters take a const pointer)", slots=("CreateExternalInitializerInfo",),
       crosses=("OrtExternalInitializerInfo",))
def external_initializer_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    rounds = 20

    def make(r: int) -> Any:
        path = ffi.new("char[]", f"weights-{r}.bin".encode())  # freed when make returns
        return ctx.out(a.CreateExternalInitializerInfo, "OrtExternalInitializerInfo*", path,
                       64 * r, 16 + r)

    def use(info: Any, r: int) -> None:
        got = (ctx.c_string(a.ExternalInitializerInfo_GetFilePath(info)),
               int(a.ExternalInitializerInfo_GetFileOffset(info)),
               int(a.ExternalInitializerInfo_GetByteSize(info)))
        _expect(got, (f"weights-{r}.bin", 64 * r, 16 + r), "path, offset, size", r)

    _moved(rounds, make, use, a.ReleaseExternalInitializerInfo)
    return (f"{rounds} rounds: an info made on a thread that ended (its path buffer gone with "
            "it), then read and released on another; every read right")


@check("send.op-attr", "An OrtOpAttr made with CreateOpAttr on one thread reads back its value "
       "(and, from API 23, its name and type) on another thread, after its maker has ended, "
       "where four threads also read it at once before it is released.",
       f"{C_API} (ReadOpAttr and the OpAttr getters take a const OrtOpAttr*)",
       slots=("CreateOpAttr", "ReadOpAttr"), crosses=("OrtOpAttr",))
def op_attr(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    rounds = 10
    named = ctx.has("OpAttr_GetName", "OpAttr_GetType")

    def make(r: int) -> Any:
        if r % 2:
            data = ffi.new("int64_t[]", [r, r + 1, r + 2])
            return ctx.out(a.CreateOpAttr, "OrtOpAttr*", f"ints{r}".encode(), data, 3, 2)
        data = ffi.new("char[]", f"text {r}".encode())
        return ctx.out(a.CreateOpAttr, "OrtOpAttr*", f"str{r}".encode(), data,
                       len(f"text {r}"), 5)

    def read(attr: Any, r: int) -> None:
        got = ffi.new("size_t*")
        if r % 2:
            buf = ffi.new("int64_t[]", 3)
            ctx.ok(a.ReadOpAttr(attr, 2, buf, 24, got), "ReadOpAttr")
            _expect(list(buf), [r, r + 1, r + 2], "ints", r)
        else:
            buf = ffi.new("char[]", 32)
            ctx.ok(a.ReadOpAttr(attr, 5, buf, 32, got), "ReadOpAttr")
            _expect(ffi.string(buf, got[0]), f"text {r}".encode(), "string", r)
        if named:
            kind, name = ffi.new("OrtOpAttrType*"), ffi.new("char**")
            ctx.ok(a.OpAttr_GetType(attr, kind), "OpAttr_GetType")
            ctx.ok(a.OpAttr_GetName(attr, name), "OpAttr_GetName")
            _expect((int(kind[0]), ctx.c_string(name[0])),
                    (2 if r % 2 else 5, f"ints{r}" if r % 2 else f"str{r}"), "type, name", r)

    def use(attr: Any, r: int) -> None:
        read(attr, r)

        def reader(_i: int) -> None:
            for _ in range(25):
                read(attr, r)

        errors, _ = together(4, reader)
        if errors:
            raise Fail(f"round {r}: concurrent reads: {errors[:2]}")

    _moved(rounds, make, use, a.ReleaseOpAttr)
    return (f"{rounds} rounds (ints and string attributes): made on a thread that ended, read "
            f"there and by 4 threads at once, released; every read right"
            + ("" if named else " (no OpAttr_GetName/GetType before API 23: values only)"))


@check("send.model-compilation-options", "An OrtModelCompilationOptions made on one thread "
       "(from session options released right after) is given its embed mode, compiled with "
       "CompileModel and released on another thread, after its maker has ended; the compiled "
       "model runs.", f"{COMPILE_API} (options made from an env and session options, read by "
       "CompileModel)", slots=("GetCompileApi",), crosses=("OrtModelCompilationOptions",))
def model_compilation_options(ctx: Ctx) -> str:
    a = ctx.api
    fn = _table(ctx, "GetCompileApi", _COMPILE)
    model = models.add_model((2,))
    buf = ctx.keep(ctx.ffi.from_buffer(model))  # read in place at CompileModel
    folder = ctx.tmpdir()
    rounds = 3

    def make(r: int) -> Any:
        so = ctx.options(release=False)
        try:
            opts = ctx.out(fn["CreateModelCompilationOptionsFromSessionOptions"],
                           "OrtModelCompilationOptions*", ctx.env, so)
        finally:
            a.ReleaseSessionOptions(so)  # the compilation options keep their own copy
        ctx.ok(fn["SetInputModelFromBuffer"](opts, buf, len(model)), "SetInputModelFromBuffer")
        path = os.path.join(folder, f"compiled-{r}.onnx").encode()
        ctx.ok(fn["SetOutputModelPath"](opts, path), "SetOutputModelPath")
        return opts

    def use(opts: Any, r: int) -> None:
        ctx.ok(fn["SetEpContextEmbedMode"](opts, True), "SetEpContextEmbedMode")
        ctx.ok(fn["CompileModel"](ctx.env, opts), "CompileModel")
        with open(os.path.join(folder, f"compiled-{r}.onnx"), "rb") as f:
            compiled = f.read()
        sess, err = ctx.try_session(compiled)
        if err:
            raise Fail(f"round {r}: the compiled model: {code_name(err[0])}: {short(err[1])}")
        try:
            got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]),
                                                 "y": ctx.floats([r, 0.5])}, ["z"])[0])
        finally:
            a.ReleaseSession(sess)
        _expect(got, [1.0 + r, 2.5], "the compiled model's sum", r)

    _moved(rounds, make, use, fn["ReleaseModelCompilationOptions"])
    return (f"{rounds} rounds: options made (session options released at once) on a thread "
            "that ended, then set, compiled and released on another; every compiled model runs")


def _float_type_info(ctx: Ctx, fn: dict[str, Any], dims: list[int]) -> Any:
    a, ffi = ctx.api, ctx.ffi
    shape = ctx.out(a.CreateTensorTypeAndShapeInfo, "OrtTensorTypeAndShapeInfo*")
    try:
        ctx.ok(a.SetTensorElementType(shape, 1), "SetTensorElementType")
        ctx.ok(a.SetDimensions(shape, ffi.new("int64_t[]", dims), len(dims)), "SetDimensions")
        return ctx.out(fn["CreateTensorTypeInfo"], "OrtTypeInfo*", shape)
    finally:
        a.ReleaseTensorTypeAndShapeInfo(shape)


@check("send.model-editor", "Model-editor objects cross threads: value infos, a node and a "
       "graph made on one thread are read (value info names and types) and put together into a "
       "model on a second; after both have ended, two threads create sessions from that one "
       "model at once; the model is released before the sessions run, and both compute Add.",
       f"{EDITOR_API} (the graph owns what is added to it, the model owns the graph; "
       "CreateSessionFromModel takes a const OrtModel*)", slots=("GetModelEditorApi",),
       crosses=("OrtValueInfo", "OrtNode", "OrtGraph", "OrtModel"))
def model_editor(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    fn = _table(ctx, "GetModelEditorApi", _EDITOR)
    names = ("x", "y", "z")

    def make_parts() -> dict[str, Any]:
        ti = _float_type_info(ctx, fn, [2])
        try:
            infos = [ctx.out(fn["CreateValueInfo"], "OrtValueInfo*", n.encode(), ti)
                     for n in names]
        finally:
            a.ReleaseTypeInfo(ti)  # CreateValueInfo copies the type info
        x, y, z = (ffi.new("char[]", n.encode()) for n in names)  # alive during the call
        node = ctx.out(fn["CreateNode"], "OrtNode*", b"Add", b"", b"add",
                       ffi.new("char*[]", [x, y]), 2, ffi.new("char*[]", [z]), 1, ffi.NULL, 0)
        graph = ctx.out(fn["CreateGraph"], "OrtGraph*")
        return {"infos": infos, "node": node, "graph": graph}

    parts, maker = _on_thread(make_parts)

    def assemble() -> Any:
        for info, name in zip(parts["infos"], names):
            got = ffi.new("char**")
            ctx.ok(a.GetValueInfoName(info, got), "GetValueInfoName")
            tinfo = ffi.new("OrtTypeInfo**")
            ctx.ok(a.GetValueInfoTypeInfo(info, tinfo), "GetValueInfoTypeInfo")
            shape = ffi.new("OrtTensorTypeAndShapeInfo**")
            ctx.ok(a.CastTypeInfoToTensorInfo(tinfo[0], shape), "CastTypeInfoToTensorInfo")
            if ctx.c_string(got[0]) != name or ctx.info_shape(shape[0]) != (1, [2]):
                raise Fail(f"value info {name}: {ctx.c_string(got[0])}, "
                           f"{ctx.info_shape(shape[0])}")
        g = parts["graph"]
        ctx.ok(fn["SetGraphInputs"](g, ffi.new("OrtValueInfo*[]", parts["infos"][:2]), 2),
               "SetGraphInputs")
        ctx.ok(fn["SetGraphOutputs"](g, ffi.new("OrtValueInfo*[]", parts["infos"][2:]), 1),
               "SetGraphOutputs")
        ctx.ok(fn["AddNodeToGraph"](g, parts["node"]), "AddNodeToGraph")
        domain = ffi.new("char[]", b"")
        m = ctx.out(fn["CreateModel"], "OrtModel*", ffi.new("char*[]", [domain]),
                    ffi.new("int[]", [17]), 1)
        ctx.ok(fn["AddGraphToModel"](m, g), "AddGraphToModel")
        return m

    model, assembler = _on_thread(assemble)
    sessions: list[Any] = [None, None]

    def create(i: int) -> None:
        sessions[i] = ctx.out(fn["CreateSessionFromModel"], "OrtSession*", ctx.env, model,
                              ctx.options())

    try:
        errors, creators = together(2, create)
    finally:
        a.ReleaseModel(model)  # the sessions do not need it
    for s in sessions:
        if s is not None:
            ctx.defer(a.ReleaseSession, s)
    if errors:
        raise Fail(f"CreateSessionFromModel on two threads: {errors[:2]}")
    if maker == assembler or maker in creators or assembler in creators:
        raise Fail("a thread id was reused: nothing crossed")
    for i, s in enumerate(sessions):
        got = ctx.read_floats(ctx.run(s, {"x": ctx.floats([1, 2]), "y": ctx.floats([i, 3])},
                                      ["z"])[0])
        if got != [1.0 + i, 5.0]:
            raise Fail(f"session {i}: z = {got}")
    return ("3 value infos, a node and a graph made on one thread, read and assembled into a "
            "model on a second; 2 sessions created from it at once on two more; model "
            "released; both compute Add")


def _assignment(ctx: Ctx, sess: Any) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """What Session_GetEpGraphAssignmentInfo reports: (EP, [(node, domain, op type)])."""
    a, ffi = ctx.api, ctx.ffi
    subs, n = ffi.new("OrtEpAssignedSubgraph***"), ffi.new("size_t*")
    ctx.ok(a.Session_GetEpGraphAssignmentInfo(sess, subs, n), "Session_GetEpGraphAssignmentInfo")
    out = []
    for i in range(n[0]):
        sub = subs[0][i]
        ep, nodes, count = ffi.new("char**"), ffi.new("OrtEpAssignedNode***"), ffi.new("size_t*")
        ctx.ok(a.EpAssignedSubgraph_GetEpName(sub, ep), "EpAssignedSubgraph_GetEpName")
        ctx.ok(a.EpAssignedSubgraph_GetNodes(sub, nodes, count), "EpAssignedSubgraph_GetNodes")
        items = []
        for j in range(count[0]):
            node = nodes[0][j]
            got = []
            for getter in (a.EpAssignedNode_GetName, a.EpAssignedNode_GetDomain,
                           a.EpAssignedNode_GetOperatorType):
                p = ffi.new("char**")
                ctx.ok(getter(node, p), "EpAssignedNode getter")
                got.append(ctx.c_string(p[0]) if p[0] != ffi.NULL else "")
            items.append((got[0], got[1], got[2]))
        out.append((ctx.c_string(ep[0]), items))
    return out


@check("send.ep-assignment-info", "The EP-assignment records a session keeps (subgraphs and "
       "their nodes), fetched on a thread that then ended, read the same on four other threads "
       "at once while the session lives.",
       f"{C_API} (Session_GetEpGraphAssignmentInfo: records owned by the session, with "
       "session.record_ep_graph_assignment_info)", slots=("Session_GetEpGraphAssignmentInfo",),
       crosses=("OrtEpAssignedSubgraph", "OrtEpAssignedNode"))
def ep_assignment_info(ctx: Ctx) -> str:
    so = ctx.options(config={"session.record_ep_graph_assignment_info": "1"})
    sess = ctx.session(models.mlp_model(8, 3), so)
    want, maker = _on_thread(lambda: _assignment(ctx, sess))
    if not want or not any(nodes for _, nodes in want):
        raise Fail(f"no assignment recorded: {want}")
    wrong: list[str] = []

    def read(_i: int) -> None:
        for _ in range(20):
            got = _assignment(ctx, sess)
            if got != want:
                wrong.append(repr(got)[:120])

    errors, readers = together(4, read)
    if errors or wrong:
        raise Fail(f"errors {errors[:2]}, wrong reads {wrong[:2]}")
    if maker in readers:
        raise Fail("a reader had the maker's thread id")
    eps = sorted({ep for ep, _ in want})
    return (f"{len(want)} subgraphs ({', '.join(eps)}), "
            f"{sum(len(n) for _, n in want)} nodes: fetched on a thread that ended, read "
            "alike by 4 threads x 20 at once")


@check("send.device-ep-incompatibility-details", "OrtDeviceEpIncompatibilityDetails for the "
       "CPU device and the CPU provider, made on one thread, read the same on four other threads "
       "at once after its maker has ended, and are released there.",
       f"{C_API} (the getters take a const pointer; the caller releases the details)",
       slots=("GetHardwareDeviceEpIncompatibilityDetails",),
       crosses=("OrtDeviceEpIncompatibilityDetails",))
def incompatibility_details(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    n = ffi.new("size_t*")
    ctx.ok(a.GetNumHardwareDevices(ctx.env, n), "GetNumHardwareDevices")
    if not n[0]:
        raise Fail("no hardware device listed")
    devices = ffi.new("const OrtHardwareDevice*[]", n[0])
    ctx.ok(a.GetHardwareDevices(ctx.env, devices, n[0]), "GetHardwareDevices")
    rounds = 5

    def read(d: Any) -> tuple[int, str, int]:
        bits, notes, code = ffi.new("uint32_t*"), ffi.new("char**"), ffi.new("int32_t*")
        ctx.ok(a.DeviceEpIncompatibilityDetails_GetReasonsBitmask(d, bits), "GetReasonsBitmask")
        ctx.ok(a.DeviceEpIncompatibilityDetails_GetNotes(d, notes), "GetNotes")
        ctx.ok(a.DeviceEpIncompatibilityDetails_GetErrorCode(d, code), "GetErrorCode")
        return (int(bits[0]), ctx.c_string(notes[0]) if notes[0] != ffi.NULL else "",
                int(code[0]))

    first: list[tuple[int, str, int]] = []

    def make(r: int) -> Any:
        d = ctx.out(a.GetHardwareDeviceEpIncompatibilityDetails,
                    "OrtDeviceEpIncompatibilityDetails*", ctx.env, b"CPUExecutionProvider",
                    devices[0])
        first.append(read(d))
        return d

    def use(d: Any, r: int) -> None:
        wrong: list[Any] = []

        def reader(_i: int) -> None:
            for _ in range(25):
                got = read(d)
                if got != first[r]:
                    wrong.append(got)

        errors, _ = together(4, reader)
        if errors or wrong:
            raise Fail(f"round {r}: errors {errors[:2]}, wrong reads {wrong[:2]}")

    _moved(rounds, make, use, a.ReleaseDeviceEpIncompatibilityDetails)
    bits, notes, code = first[0]
    return (f"{rounds} rounds: details (reasons {bits:#x}, error code {code}, notes "
            f"{short(notes) or 'none'}) made on a thread that ended, read alike by 4 threads "
            "at once, released there")


@check("send.op", "An OrtOp made by CreateOp in a custom kernel's CreateKernelV2 (while the "
       "session is created on one thread) is run with InvokeOp by the kernel's compute from "
       "four other threads whose Runs overlap; ORT calls the caller's OrtCustomOp functions on "
       "those threads; every result is right.",
       "https://onnxruntime.ai/docs/reference/high-level-design.html (kernels are stateless, "
       f"Compute may run concurrently); {C_API} (InvokeOp takes a const OrtOp*)",
       slots=("CreateCustomOpDomain", "CustomOpDomain_Add", "AddCustomOpDomain", "CreateOp",
              "InvokeOp", "KernelContext_ParallelFor", "ShapeInferContext_GetInputCount"),
       child=True, crosses=("OrtOp", "OrtCustomOp"))
def op_in_concurrent_runs(ctx: Ctx) -> str:
    from .kernel import _expected, _session

    op, sess = _session(ctx)
    me = threading.get_native_id()
    wrong: list[str] = []

    def run(i: int) -> None:
        for k in range(10):
            xs = [float(i), float(k), 0.5 * i, -1.0]
            got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats(xs)}, ["y"])[0])
            if got != _expected(xs):
                wrong.append(f"thread {i} run {k}: {got}")

    errors, _ = together(4, run)
    if op.seen.get("compute_error"):
        raise Fail(op.seen["compute_error"])
    if errors or wrong:
        raise Fail(f"errors {errors[:2]}, wrong {wrong[:2]}")
    others = op.seen["compute_threads"] - {me}
    if len(others) < 2:
        raise Fail(f"computes ran on {len(others)} other threads only")
    return (f"40 runs on 4 threads at once invoke the one op; computes on {len(others)} "
            "threads other than the creating one; every result right")
