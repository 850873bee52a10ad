"""Custom operators defined from Python: what ORT hands a kernel (info, context, outputs).

One OrtCustomOp ("Twice" in domain "ortc.test", struct version 17: V2 create/compute and shape
inference) is built from cffi callbacks. Its kernel computes ``y = LeakyRelu(x * factor + bias)``
with the LeakyRelu run through CreateOp/InvokeOp, and records what KernelInfo and KernelContext
returned so the checks can compare it with the model.
"""

from __future__ import annotations

import struct
import threading
from typing import Any, cast

from .. import models
from .._capi import WAIT, Ctx, code_name, float_custom_op, join_all, short, together
from .._registry import Fail, Known, check

CUSTOM_DOC = "https://onnxruntime.ai/docs/reference/operators/add-custom-op.html"
SLOTS = ("CreateCustomOpDomain", "CustomOpDomain_Add", "AddCustomOpDomain", "CreateOp",
         "InvokeOp", "KernelContext_ParallelFor", "ShapeInferContext_GetInputCount")

_INT_MAX = 2**31 - 1


class _Op:
    """The cffi side of one custom op; ``seen`` collects what the callbacks observed."""

    def __init__(self, ctx: Ctx, release_infer_info: bool = False,
                 use_scratch: bool = False, info_threads: int = 0) -> None:
        self.ctx = ctx
        self.use_scratch = use_scratch
        # CreateKernelV2 has this many threads read the info (and its copy) at once
        self.info_threads = info_threads
        # the info ShapeInferContext_GetInputTypeShape hands out belongs to the context
        # (kernel.infer-info-ownership): releasing it double-frees
        self.release_infer_info = release_infer_info
        # each compute records what it sees of its output and stream, with four threads
        # asking at once (kernel.preallocated-output-and-sync-stream alone: the other checks'
        # computes stay as they were)
        self.watch_outputs = False
        self.seen: dict[str, Any] = {"compute_threads": set(), "parallel": []}
        self.kernels: dict[int, dict[str, Any]] = {}
        self.op, self._keep = float_custom_op(
            ctx, b"Twice", 17, GetStartVersion=lambda _op: 1,
            GetEndVersion=lambda _op: _INT_MAX, CreateKernelV2=self._create,
            KernelComputeV2=self._compute, KernelDestroy=self._destroy,
            InferOutputShapeFn=self._infer)

    # -- helpers --

    def _status(self, exc: BaseException) -> Any:
        msg = f"{type(exc).__name__}: {exc}"[:400].encode()
        return self.ctx.api.CreateStatus(1, msg)

    def _sized_string(self, fn: Any, *args: Any) -> str:
        """The size-query protocol of KernelInfo string getters: size first, then the bytes."""
        ffi = self.ctx.ffi
        size = ffi.new("size_t*", 0)
        st = fn(*args, ffi.NULL, size)
        if st:
            self.ctx.ok(st)
        buf = ffi.new("char[]", max(size[0], 1))
        self.ctx.ok(fn(*args, buf, size))
        return cast(bytes, ffi.string(buf)).decode()

    # -- callbacks --

    def _create(self, _op: Any, _api: Any, info: Any, out: Any) -> Any:
        try:
            ctx, a, ffi = self.ctx, self.ctx.api, self.ctx.ffi
            k: dict[str, Any] = {}
            i64 = ffi.new("int64_t*")
            ctx.ok(a.KernelInfoGetAttribute_int64(info, b"factor", i64))
            k["factor"] = i64[0]
            f32 = ffi.new("float*")
            ctx.ok(a.KernelInfoGetAttribute_float(info, b"bias", f32))
            k["bias"] = f32[0]
            st = a.KernelInfoGetAttribute_int64(info, b"fail", i64)
            k["fail"] = not st and bool(i64[0])
            if st:
                ctx.status(st)
            seen: dict[str, Any] = {"factor": k["factor"], "bias": k["bias"]}
            st = a.KernelInfoGetAttribute_int64(info, b"absent", i64)
            absent = ctx.status(st)
            seen["absent_attr"] = code_name(absent[0]) if absent else "OK"
            seen["label"] = self._sized_string(a.KernelInfoGetAttribute_string, info, b"label")
            n = ffi.new("size_t*", 0)
            ctx.ok(a.KernelInfoGetAttributeArray_int64(info, b"ints", ffi.NULL, n))
            ints = ffi.new("int64_t[]", n[0])
            ctx.ok(a.KernelInfoGetAttributeArray_int64(info, b"ints", ints, n))
            seen["ints"] = list(ints)
            n[0] = 0
            ctx.ok(a.KernelInfoGetAttributeArray_float(info, b"floats", ffi.NULL, n))
            floats = ffi.new("float[]", n[0])
            ctx.ok(a.KernelInfoGetAttributeArray_float(info, b"floats", floats, n))
            seen["floats"] = list(floats)
            if ctx.has("KernelInfoGetAttribute_tensor"):
                t = ctx.out(a.KernelInfoGetAttribute_tensor, "OrtValue*", info, b"table",
                            ctx.allocator)
                seen["tensor"] = ctx.read_floats(t)
                a.ReleaseValue(t)
            if ctx.has("KernelInfoGetAttributeArray_string"):
                arr, cnt = ffi.new("char***"), ffi.new("size_t*")
                ctx.ok(a.KernelInfoGetAttributeArray_string(info, b"words", ctx.allocator, arr,
                                                            cnt))
                seen["words"] = [ctx.take_string(arr[0][i]) for i in range(cnt[0])]
                ctx.ok(a.AllocatorFree(ctx.allocator, arr[0]))
            ctx.ok(a.KernelInfo_GetInputCount(info, n))
            seen["inputs"] = n[0]
            ctx.ok(a.KernelInfo_GetOutputCount(info, n))
            seen["outputs"] = n[0]
            seen["input_name"] = self._sized_string(a.KernelInfo_GetInputName, info, 0)
            seen["output_name"] = self._sized_string(a.KernelInfo_GetOutputName, info, 0)
            for fn in (a.KernelInfo_GetInputTypeInfo, a.KernelInfo_GetOutputTypeInfo):
                ti = ctx.out(fn, "OrtTypeInfo*", info, 0)
                a.ReleaseTypeInfo(ti)
            seen["node_name"] = self._sized_string(a.KernelInfo_GetNodeName, info)
            logger = ctx.out(a.KernelInfo_GetLogger, "OrtLogger*", info)
            lvl = ffi.new("OrtLoggingLevel*")
            ctx.ok(a.Logger_GetLoggingSeverityLevel(logger, lvl))
            ctx.ok(a.Logger_LogMessage(logger, 0, b"ortc conformance kernel created",
                                       b"kernel.py", 1, b"create"))
            is_const = ffi.new("int*")
            cval = ffi.new("OrtValue**")
            ctx.ok(a.KernelInfoGetConstantInput_tensor(info, 0, is_const, cval))
            seen["input_constant"] = is_const[0]
            if ctx.has("KernelInfoGetAllocator"):
                al = ctx.out(a.KernelInfoGetAllocator, "OrtAllocator*", info, 0)
                a.ReleaseAllocator(al)
            if ctx.has("KernelInfo_GetOperatorType"):
                seen["op_type"] = self._sized_string(a.KernelInfo_GetOperatorType, info)
                seen["op_domain"] = self._sized_string(a.KernelInfo_GetOperatorDomain, info)
                since = ffi.new("int*")
                ctx.ok(a.KernelInfo_GetOperatorSinceVersion(info, since))
                seen["since"] = since[0]
                kv = ctx.out(a.KernelInfo_GetConfigEntries, "OrtKeyValuePairs*", info)
                a.ReleaseKeyValuePairs(kv)
            copy = ctx.out(a.CopyKernelInfo, "OrtKernelInfo*", info)
            k["info_copy"] = copy
            if self.info_threads:
                self.seen["info_threads"] = self._read_at_once(info, copy)
            # the built-in operator the kernel runs: LeakyRelu(alpha=0.1) on floats
            alpha = ffi.new("float*", 0.1)
            attr = ctx.out(a.CreateOpAttr, "OrtOpAttr*", b"alpha", alpha, 1, 3)
            k["tname"] = ffi.new("char[]", b"T")
            names = ffi.new("char*[]", [k["tname"]])
            values = ffi.new("ONNXTensorElementDataType[]", [1])
            k["op"] = ctx.out(a.CreateOp, "OrtOp*", info, b"LeakyRelu", b"", 16, names, values,
                              1, ffi.new("OrtOpAttr*[]", [attr]), 1, 1, 1)
            a.ReleaseOpAttr(attr)
            key = len(self.kernels) + 1
            self.kernels[key] = k
            self.seen["create"] = seen
            out[0] = ffi.cast("void*", key)
            return ffi.NULL
        except BaseException as exc:  # noqa: BLE001 - nothing may unwind into ORT
            self.seen["create_error"] = repr(exc)
            return self._status(exc)

    def _read_info(self, info: Any) -> tuple[Any, ...]:
        ctx, a, ffi = self.ctx, self.ctx.api, self.ctx.ffi
        i64, f32, n = ffi.new("int64_t*"), ffi.new("float*"), ffi.new("size_t*")
        ctx.ok(a.KernelInfoGetAttribute_int64(info, b"factor", i64))
        ctx.ok(a.KernelInfoGetAttribute_float(info, b"bias", f32))
        ctx.ok(a.KernelInfo_GetInputCount(info, n))
        newer: tuple[Any, ...] = ()
        if ctx.has("KernelInfo_GetOperatorType"):  # API 24
            since = ffi.new("int*")
            ctx.ok(a.KernelInfo_GetOperatorSinceVersion(info, since))
            entries = sorted(ctx.pairs(ctx.out(a.KernelInfo_GetConfigEntries,
                                               "OrtKeyValuePairs*", info), release=True).items())
            newer = (self._sized_string(a.KernelInfo_GetOperatorType, info),
                     self._sized_string(a.KernelInfo_GetOperatorDomain, info), since[0],
                     entries)
        if ctx.has("KernelInfoGetAttributeArray_string"):  # API 25
            arr, cnt = ffi.new("char***"), ffi.new("size_t*")
            ctx.ok(a.KernelInfoGetAttributeArray_string(info, b"words", ctx.allocator, arr, cnt))
            newer += (tuple(ctx.take_string(arr[0][i]) for i in range(cnt[0])),)
            ctx.ok(a.AllocatorFree(ctx.allocator, arr[0]))
        return (i64[0], f32[0], n[0],
                self._sized_string(a.KernelInfoGetAttribute_string, info, b"label"),
                self._sized_string(a.KernelInfo_GetNodeName, info)) + newer

    def _read_at_once(self, info: Any, copy: Any) -> dict[str, Any]:
        """Threads read ``info`` and ``copy`` together while ORT's thread waits in
        CreateKernelV2 (joined before it returns: the info lives only for the call)."""
        want = self._read_info(info)
        start = threading.Barrier(self.info_threads, timeout=WAIT)
        got: list[tuple[Any, ...]] = []
        errors: list[str] = []
        tids: set[int] = set()

        def reader(i: int) -> None:
            try:
                tids.add(threading.get_native_id())
                start.wait()
                for _ in range(25):
                    got.append(self._read_info(info if i % 2 == 0 else copy))
            except BaseException as exc:  # noqa: BLE001 - reported by the check
                errors.append(f"{type(exc).__name__}: {exc}"[:200])

        ts = [threading.Thread(target=reader, args=(i,), daemon=True)
              for i in range(self.info_threads)]
        for t in ts:
            t.start()
        try:
            join_all(ts)
        except Fail as exc:
            errors.append(exc.detail)
        return {"want": want, "reads": len(got), "wrong": sum(g != want for g in got),
                "errors": errors, "threads": len(tids - {threading.get_native_id()})}

    def _compute(self, kernel: Any, kctx: Any) -> Any:
        ctx, a, ffi = self.ctx, self.ctx.api, self.ctx.ffi
        try:
            k = self.kernels[int(ffi.cast("uintptr_t", kernel))]
            self.seen["compute_threads"].add(threading.get_native_id())
            if k["fail"]:
                return a.CreateStatus(2, b"ortc custom kernel refuses on purpose")
            n = ffi.new("size_t*")
            ctx.ok(a.KernelContext_GetInputCount(kctx, n))
            ctx.ok(a.KernelContext_GetOutputCount(kctx, n))
            x = ctx.out(a.KernelContext_GetInput, "OrtValue*", kctx, 0)
            _, dims = ctx.shape_of(x)
            count = dims[0]
            xs = ffi.cast("float*", ctx.out(a.GetTensorMutableData, "void*", x))
            shape = ffi.new("int64_t[]", dims)
            pres: list[Any] = []
            if ctx.has("KernelContext_GetPreallocatedOutput"):
                # API 30: the output the caller preallocated, if any; asked twice, to tell a
                # new value each call (the caller's to release) from the context's own
                for _ in range(2):
                    pre = ffi.new("OrtValue**")
                    st = ctx.status(a.KernelContext_GetPreallocatedOutput(kctx, 0, pre))
                    pres.append(pre[0] if not st else None)
                    self.seen["preallocated"] = (f"error {code_name(st[0])}" if st else
                                                 "NULL" if pre[0] == ffi.NULL else "a value")
            y = ctx.out(a.KernelContext_GetOutput, "OrtValue*", kctx, 0, shape, 1)
            if self.watch_outputs:
                self.seen.setdefault("outputs", []).append(self._outputs(kctx, pres, y))
            # space for x * factor + bias, wrapped as a tensor for InvokeOp: the kernel
            # allocator, or the scratch buffer (which crashes ORT <= 1.22: kernel.scratch-buffer)
            al = ctx.out(a.KernelContext_GetAllocator, "OrtAllocator*", kctx, ctx.cpu_info)
            if self.use_scratch:
                ctx.step("KernelContext_GetScratchBuffer(CPU memory info)")
                scratch = ctx.out(a.KernelContext_GetScratchBuffer, "void*", kctx,
                                  ctx.cpu_info, max(count, 1) * 4)
                ctx.step("got a scratch buffer")
            else:
                scratch = ctx.out(a.AllocatorAlloc, "void*", al, max(count, 1) * 4)
            tmp = ffi.cast("float*", scratch)

            def body(_data: Any, i: int) -> None:
                tmp[i] = xs[i] * k["factor"] + k["bias"]
                self.seen["parallel"].append((i, threading.get_native_id()))

            fn = ffi.callback("void(*)(void*, size_t)", body)
            ctx.ok(a.KernelContext_ParallelFor(kctx, fn, count, 4 if count >= 64 else 0,
                                                ffi.NULL))
            t = ctx.out(a.CreateTensorWithDataAsOrtValue, "OrtValue*", ctx.cpu_info, scratch,
                        max(count, 1) * 4, shape, 1, 1)
            try:
                ctx.ok(a.InvokeOp(kctx, k["op"], ffi.new("OrtValue*[]", [t]), 1,
                                  ffi.new("OrtValue*[]", [y]), 1), "InvokeOp")
            finally:
                a.ReleaseValue(t)
                if not self.use_scratch:
                    ctx.ok(a.AllocatorFree(al, scratch))
                a.ReleaseAllocator(al)
            logger = ctx.out(a.KernelContext_GetLogger, "OrtLogger*", kctx)
            ctx.ok(a.Logger_LogMessage(logger, 0, b"computed", b"kernel.py", 2, b"compute"))
            stream = ffi.new("void**")
            st = a.KernelContext_GetGPUComputeStream(kctx, stream)
            self.seen["gpu_stream"] = ("error" if st else
                                       "NULL" if stream[0] == ffi.NULL else "non-NULL")
            if st:
                ctx.status(st)
            return ffi.NULL
        except BaseException as exc:  # noqa: BLE001
            self.seen["compute_error"] = repr(exc)
            return self._status(exc)

    def _outputs(self, kctx: Any, pres: list[Any], y: Any) -> dict[str, Any]:
        """What one compute saw of its output: the two GetPreallocatedOutput answers (None for
        an error), whether they are the value GetOutput then gave and whether the data is the
        same memory; and (API 28) what KernelContext_GetSyncStream gave."""
        ctx, a, ffi = self.ctx, self.ctx.api, self.ctx.ffi

        def data(v: Any) -> int:
            return int(ffi.cast("uintptr_t", ctx.out(a.GetTensorMutableData, "void*", v)))

        seen: dict[str, Any] = {"y": y, "y_data": data(y)}
        if pres:
            first, second = pres
            seen["pre"] = ("error" if first is None else "NULL" if first == ffi.NULL
                           else "a value")
            seen["same_twice"] = first == second
            if first is not None and first != ffi.NULL:
                seen["pre_value"] = first
                seen["pre_is_output"] = first == y
                seen["pre_data"] = data(first)
        if ctx.has("KernelContext_GetSyncStream"):
            seen["stream"] = self._stream(kctx)
        if pres:
            # asked again now that GetOutput made the output
            box = ffi.new("OrtValue**")
            ctx.ok(a.KernelContext_GetPreallocatedOutput(kctx, 0, box))
            seen["pre_after"] = ("NULL" if box[0] == ffi.NULL else "GetOutput's value"
                                 if box[0] == y else "another value")
        seen["at_once"] = self._at_once(kctx, bool(pres))
        return seen

    def _stream(self, kctx: Any) -> str:
        ctx, ffi = self.ctx, self.ctx.ffi
        box = ffi.new("OrtSyncStream**")
        st = ctx.status(ctx.api.KernelContext_GetSyncStream(kctx, box))
        return (f"error {code_name(st[0])}" if st else
                "NULL" if box[0] == ffi.NULL else "a stream")

    def _at_once(self, kctx: Any, pre: bool) -> dict[str, Any]:
        """Four threads ask GetSyncStream and GetPreallocatedOutput at once while the compute
        waits (joined before it returns: the context lives only for the call); each answer
        is compared with the compute's own, asked just before."""
        ctx, a, ffi = self.ctx, self.ctx.api, self.ctx.ffi
        stream = ctx.has("KernelContext_GetSyncStream")
        want_stream = self._stream(kctx) if stream else None
        want_pre = ffi.NULL
        if pre:
            box = ffi.new("OrtValue**")
            ctx.ok(a.KernelContext_GetPreallocatedOutput(kctx, 0, box))
            want_pre = box[0]
        wrong: list[str] = []
        calls = [0]

        def work(i: int) -> None:
            for _ in range(20):
                if stream and self._stream(kctx) != want_stream:
                    wrong.append(f"thread {i}: stream")
                if pre:
                    box = ffi.new("OrtValue**")
                    st = ctx.status(a.KernelContext_GetPreallocatedOutput(kctx, 0, box))
                    if st or box[0] != want_pre:
                        wrong.append(f"thread {i}: preallocated output")
                calls[0] += int(stream) + int(pre)

        errors, _ = together(4, work)
        return {"calls": calls[0], "wrong": wrong[:2], "errors": errors[:2]}

    def _destroy(self, kernel: Any) -> None:
        try:
            k = self.kernels.pop(int(self.ctx.ffi.cast("uintptr_t", kernel)), None)
            if k:
                self.ctx.api.ReleaseOp(k["op"])
                self.ctx.api.ReleaseKernelInfo(k["info_copy"])
            self.seen["destroyed"] = self.seen.get("destroyed", 0) + 1
        except BaseException as exc:  # noqa: BLE001
            self.seen["destroy_error"] = repr(exc)

    def _infer(self, _op: Any, sctx: Any) -> Any:
        ctx, a, ffi = self.ctx, self.ctx.api, self.ctx.ffi
        try:
            n = ffi.new("size_t*")
            ctx.ok(a.ShapeInferContext_GetInputCount(sctx, n))
            info = ctx.out(a.ShapeInferContext_GetInputTypeShape, "OrtTensorTypeAndShapeInfo*",
                           sctx, 0)
            attr = ctx.out(a.ShapeInferContext_GetAttribute, "OrtOpAttr*", sctx, b"factor")
            val = ffi.new("int64_t*")
            got = ffi.new("size_t*")
            ctx.ok(a.ReadOpAttr(attr, 1, val, 8, got))
            ctx.ok(a.ShapeInferContext_SetOutputTypeShape(sctx, 0, info))
            if self.release_infer_info:
                self.ctx.step("releasing the info from ShapeInferContext_GetInputTypeShape")
                a.ReleaseTensorTypeAndShapeInfo(info)
            self.seen["infer"] = {"inputs": n[0], "factor": val[0]}
            return ffi.NULL
        except BaseException as exc:  # noqa: BLE001
            self.seen["infer_error"] = repr(exc)
            return self._status(exc)


def _table() -> bytes:
    return models.tensor("table", models.FLOAT, [2], struct.pack("<2f", 0.25, 0.75))


def _session(ctx: Ctx, intra: int = 1, release: bool = True, release_infer_info: bool = False,
             use_scratch: bool = False, info_threads: int = 0, **attrs: Any
             ) -> tuple[_Op, Any]:
    a = ctx.api
    op = ctx.keep(_Op(ctx, release_infer_info, use_scratch, info_threads))
    dom = ctx.out(a.CreateCustomOpDomain, "OrtCustomOpDomain*", b"ortc.test")
    ctx.defer(a.ReleaseCustomOpDomain, dom)  # after the session: deferred first, runs last
    ctx.ok(a.CustomOpDomain_Add(dom, op.op))
    so = ctx.options(intra=intra)
    ctx.ok(a.AddCustomOpDomain(so, dom))
    full = {"factor": 2, "bias": 0.5, "label": "hello", "ints": [3, 4, 5],
            "floats": [1.5, 2.5], "words": ["a", "bc"], "table": ("tensor", _table())}
    full.update(attrs)
    sess, err = ctx.try_session(models.custom_op_model(full), so)
    if err:
        raise Fail(f"session: {code_name(err[0])}: {short(err[1], 300)}"
                   + (f"; {op.seen.get('create_error') or op.seen.get('infer_error')}"
                      if op.seen.get("create_error") or op.seen.get("infer_error") else ""))
    if release:
        ctx.defer(a.ReleaseSession, sess)
    return op, sess


def _expected(xs: list[float], factor: float = 2, bias: float = 0.5) -> list[float]:
    out = []
    for v in xs:
        t = struct.unpack("<f", struct.pack("<f", v * factor + bias))[0]
        out.append(t if t >= 0 else struct.unpack("<f", struct.pack("<f", t * 0.1))[0])
    return out


@check("kernel.info-at-create", "A custom op's CreateKernelV2 reads the node's attributes "
       "(int, float, string, int/float/string lists, tensor), its input/output counts, names "
       "and types, and its node name through KernelInfo; a missing attribute is an error "
       "status.", CUSTOM_DOC, slots=SLOTS, child=True)
def info_at_create(ctx: Ctx) -> str:
    op, _ = _session(ctx)
    s = op.seen.get("create", {})
    want = {"factor": 2, "bias": 0.5, "label": "hello", "ints": [3, 4, 5],
            "floats": [1.5, 2.5], "inputs": 1, "outputs": 1, "input_name": "x",
            "output_name": "y", "node_name": "custom_node", "input_constant": 0}
    if ctx.has("KernelInfoGetAttribute_tensor"):
        want["tensor"] = [0.25, 0.75]
    if ctx.has("KernelInfoGetAttributeArray_string"):
        want["words"] = ["a", "bc"]
    if ctx.has("KernelInfo_GetOperatorType"):
        want.update(op_type="Twice", op_domain="ortc.test", since=1)
    diff = {k: (s.get(k), v) for k, v in want.items() if s.get(k) != v}
    if diff:
        raise Fail(f"(got, want): {diff}")
    if s.get("absent_attr") == "OK":
        raise Fail("reading a missing attribute succeeded")
    return f"{len(want)} facts as in the model; missing attribute: {s['absent_attr']}"


@check("kernel.info-concurrent-reads", "Inside CreateKernelV2, several threads read one "
       "OrtKernelInfo (and its CopyKernelInfo copy) at once: attributes, input count, node "
       "name, and where the library has them the operator's type, domain and since-version "
       "and the session's config entries (API 24) and a string-list attribute (API 25), all "
       "read as on the callback's own thread.",
       "onnxruntime_c_api.h (every KernelInfo getter takes a const OrtKernelInfo*)",
       slots=SLOTS, child=True, crosses=("OrtKernelInfo",))
def info_concurrent_reads(ctx: Ctx) -> str:
    op, _ = _session(ctx, info_threads=4)
    s = op.seen.get("info_threads")
    if s is None:
        raise Fail(f"CreateKernelV2 did not run the readers ({op.seen.get('create_error')})")
    if s["errors"] or s["wrong"] or s["reads"] != 100:
        raise Fail(f"{s['reads']} reads, {s['wrong']} wrong, errors {s['errors'][:2]}")
    return (f"{s['reads']} reads of {len(s['want'])} facts on {s['threads']} other threads at "
            f"once (half of the info, half of its copy): all as read by the callback")


@check("kernel.compute-and-invoke", "KernelComputeV2 reads its input and allocates its output "
       "through KernelContext, and can run a built-in operator on them with CreateOp/InvokeOp.",
       CUSTOM_DOC, slots=SLOTS, child=True)
def compute_and_invoke(ctx: Ctx) -> str:
    op, sess = _session(ctx)
    xs = [-3.0, -0.25, 0.0, 1.0]
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats(xs)}, ["y"])[0])
    if op.seen.get("compute_error"):
        raise Fail(op.seen["compute_error"])
    if got != _expected(xs):
        raise Fail(f"y = {got}, expected {_expected(xs)}")
    pre = op.seen.get("preallocated")
    return (f"y = LeakyRelu(2x + 0.5) = {got}; GPU stream on CPU: {op.seen.get('gpu_stream')}"
            + (f"; preallocated output 0 (none passed): {pre}" if pre else ""))


@check("kernel.error-status", "A status returned by KernelComputeV2 fails the Run, keeping its "
       "message.", CUSTOM_DOC, slots=SLOTS, child=True)
def error_status(ctx: Ctx) -> str:
    op, sess = _session(ctx, fail=1)
    _, err = ctx.try_run(sess, {"x": ctx.floats([1.0])}, ["y"])
    if err is None:
        raise Fail("Run succeeded")
    if "refuses on purpose" not in err[1]:
        raise Fail(f"message lost: {code_name(err[0])}: {short(err[1])}")
    if code_name(err[0]) != "INVALID_ARGUMENT":
        raise Known(f"message kept, code not: the kernel said INVALID_ARGUMENT, Run reports "
                    f"{code_name(err[0])}")
    return f"{code_name(err[0])}: {short(err[1], 100)}"


@check("kernel.parallel-for", "KernelContext_ParallelFor calls the function exactly once for "
       "every index (spread over the caller's and the intra-op pool's threads as ORT decides).",
       "onnxruntime_c_api.h KernelContext_ParallelFor", slots=SLOTS, child=True)
def parallel_for(ctx: Ctx) -> str:
    op, sess = _session(ctx, intra=2)
    xs = [float(i) for i in range(256)]
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats(xs)}, ["y"])[0])
    calls = op.seen["parallel"]
    idx = sorted(i for i, _ in calls)
    threads = {t for _, t in calls}
    if idx != list(range(256)) or got != _expected(xs):
        raise Fail(f"{len(calls)} calls, indices complete: {idx == list(range(256))}")
    return f"256 indices, each once, on {len(threads)} thread(s)"


@check("kernel.shape-inference", "A custom op's InferOutputShapeFn (struct version 17) is called "
       "while the session is created, and reads its input shape and attributes.",
       "onnxruntime_c_api.h OrtCustomOp::InferOutputShapeFn", slots=SLOTS, child=True)
def shape_inference(ctx: Ctx) -> str:
    op, _ = _session(ctx)
    got = op.seen.get("infer")
    if got != {"inputs": 1, "factor": 2}:
        raise Fail(f"inference saw {got} ({op.seen.get('infer_error')})")
    return "called at creation: 1 input, factor 2 read with ReadOpAttr"


@check("kernel.destroy-at-release", "ORT destroys every kernel it created when the session is "
       "released, before the custom-op domain may go.", CUSTOM_DOC, slots=SLOTS, child=True)
def destroy(ctx: Ctx) -> str:
    a = ctx.api
    op, sess = _session(ctx, release=False)
    ctx.run(sess, {"x": ctx.floats([1.0])}, ["y"])  # the output is released with the check
    made = len(op.kernels)
    a.ReleaseSession(sess)
    if op.kernels or op.seen.get("destroyed", 0) < made:
        raise Fail(f"{len(op.kernels)} kernels left of {made}")
    return f"{made} kernel(s) destroyed"


@check("kernel.infer-info-ownership", "The tensor info ShapeInferContext_GetInputTypeShape "
       "returns is the caller's to release (declared as an owned out-pointer, like every other "
       "Get*TypeInfo out-parameter).",
       "onnxruntime_c_api.h ShapeInferContext_GetInputTypeShape (ownership not stated)",
       crash=True, slots=SLOTS)
def infer_info_ownership(ctx: Ctx) -> str:
    op, _ = _session(ctx, release_infer_info=True)
    ctx.step("session created after releasing the info; releasing the session")
    return "no crash: the info was the caller's"


@check("kernel.scratch-buffer", "KernelContext_GetScratchBuffer with a CPU memory info gives a "
       "kernel scratch space from the provider's allocator.",
       "onnxruntime_c_api.h KernelContext_GetScratchBuffer (API 18)", crash=True,
       slots=SLOTS + ("KernelContext_GetScratchBuffer",))
def scratch_buffer(ctx: Ctx) -> str:
    op, sess = _session(ctx, use_scratch=True)
    xs = [-1.0, 2.0]
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats(xs)}, ["y"])[0])
    if got != _expected(xs):
        raise Fail(f"y = {got} ({op.seen.get('compute_error')})")
    return "scratch buffer used; result correct"


@check("kernel.preallocated-output-and-sync-stream", "Inside KernelComputeV2 on the CPU "
       "provider: KernelContext_GetSyncStream (API 28) gives NULL (no stream); "
       "KernelContext_GetPreallocatedOutput (API 30) gives NULL when the caller passed no output "
       "value to Run (until KernelContext_GetOutput made the output: then that value), and when "
       "it did, the same OrtValue on each call, which is the one GetOutput then gives, over the "
       "caller's buffer: the context's value, not a new one for the kernel to release. Four "
       "threads asking both at once during the compute get the compute's own answers.",
       "onnxruntime_c_api.h KernelContext_GetSyncStream, KernelContext_GetPreallocatedOutput "
       "(ownership of the value not stated)", slots=SLOTS + ("KernelContext_GetSyncStream",),
       child=True, crosses=("OrtKernelContext",))
def preallocated_output_and_sync_stream(ctx: Ctx) -> str:
    op, sess = _session(ctx)
    op.watch_outputs = True
    xs = [-2.0, 1.0, 3.0]
    ctx.run(sess, {"x": ctx.floats(xs)}, ["y"])
    mine = ctx.floats([0.0] * len(xs))
    got, err = ctx.try_run(sess, {"x": ctx.floats(xs)}, ["y"], preallocated=[mine])
    if err:
        raise Fail(f"Run with a preallocated output: {code_name(err[0])}: {short(err[1])}")
    if op.seen.get("compute_error"):
        raise Fail(op.seen["compute_error"])
    runs = op.seen.get("outputs", [])
    if len(runs) != 2:
        raise Fail(f"{len(runs)} computes seen, 2 runs")
    if ctx.read_floats(mine) != _expected(xs) or got[0] != mine:
        raise Fail(f"the caller's output reads {ctx.read_floats(mine)}, expected "
                   f"{_expected(xs)}; Run handed back {'it' if got[0] == mine else 'another'}")
    ffi = ctx.ffi
    mine_data = int(ffi.cast("uintptr_t", ctx.out(ctx.api.GetTensorMutableData, "void*", mine)))
    plain, given = runs
    streams = {r["stream"] for r in runs}
    if streams != {"NULL"}:
        raise Fail(f"KernelContext_GetSyncStream on the CPU provider: {sorted(streams)}")
    if given["y_data"] != mine_data:
        raise Fail("GetOutput's value is not over the caller's buffer")
    for r in runs:
        if r["at_once"]["wrong"] or r["at_once"]["errors"]:
            raise Fail(f"four threads at once during a compute: {r['at_once']}")
    said = (f"GetSyncStream: NULL on both runs; {sum(r['at_once']['calls'] for r in runs)} "
            "calls of the two from four threads at once during the computes: all as the "
            "compute's own")
    if "pre" not in plain:
        return said + "; no KernelContext_GetPreallocatedOutput in this library (API < 30)"
    if plain["pre"] != "NULL" or not plain["same_twice"]:
        raise Fail(f"no output passed: GetPreallocatedOutput gave {plain['pre']}")
    if given["pre"] != "a value":
        raise Fail(f"an output passed: GetPreallocatedOutput gave {given['pre']}")
    facts = (given["same_twice"], given["pre_is_output"], given["pre_data"] == mine_data)
    if facts != (True, True, True):
        raise Fail(f"an output passed: the same value twice {facts[0]}, GetOutput's value "
                   f"{facts[1]}, over the caller's buffer {facts[2]}")
    after = (plain["pre_after"], given["pre_after"])
    if after != ("GetOutput's value", "GetOutput's value"):
        raise Fail(f"GetPreallocatedOutput after GetOutput: {after[0]} (no output passed), "
                   f"{after[1]} (one passed)")
    return (said + "; GetPreallocatedOutput: NULL with no output passed until GetOutput made "
            "it, then GetOutput's value; with one passed, the same OrtValue on every call, the "
            "one GetOutput then gave, over the caller's buffer "
            f"(the value Run was given: "
            f"{'the same pointer' if given['pre_value'] == mine else 'another OrtValue over it'})")
