"""Send claims: an object made on one thread is used and released on another.

Each check runs rounds of the same move: a thread makes the object and ends; only then does a
second thread call the C functions that take it (its getters, the calls that consume it),
compare what it reads with what the maker read or set, and release it. A thread-local cache or
a thread-affine resource inside ORT would show as a wrong read, an error or a crash here; the
thread rules cite these checks (and only checks that move objects so) for Send.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from .. import models
from .._capi import Ctx, join_all
from .._registry import Fail, Known, check
from .threads import _binding_round, _run_raw

C_API = "https://onnxruntime.ai/docs/api/c/struct_ort_api.html"


def _on_thread(fn: Callable[[], Any]) -> tuple[Any, int]:
    """Run ``fn`` on a new thread and wait until that thread has ended: (result, its id)."""
    box: dict[str, Any] = {}

    def body() -> None:
        box["tid"] = threading.get_native_id()
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
            box["error"] = exc

    t = threading.Thread(target=body, daemon=True)
    t.start()
    join_all([t])
    if "error" in box:
        raise box["error"]
    return box.get("value"), box["tid"]


def _moved(rounds: int, make: Callable[[int], Any], use: Callable[[Any, int], None],
           release: Callable[[Any], None]) -> None:
    """``rounds`` times: ``make(r)`` on a thread that then ends, ``use(obj, r)`` and
    ``release(obj)`` on a second one (release even when the use fails)."""
    for r in range(rounds):
        obj, maker = _on_thread(lambda: make(r))

        def use_then_release() -> None:
            try:
                use(obj, r)
            finally:
                release(obj)

        _, user = _on_thread(use_then_release)
        if user == maker:  # the OS reused the maker's id: nothing crossed in this round
            raise Fail(f"round {r}: the user thread had the maker's id {maker}")


def _said(rounds: int, what: str, extra: str = "") -> str:
    return (f"{rounds} rounds: {what} made on a thread that ended, then used and released on "
            f"another; every read right" + (f"; {extra}" if extra else ""))


def _expect(got: Any, want: Any, what: str, r: int) -> None:
    if got != want:
        raise Fail(f"round {r}: {what} {got!r}, expected {want!r}")


@check("send.memory-info", "An OrtMemoryInfo made on one thread is read, compared, used to "
       "create a tensor and released on another thread, after its maker has ended.",
       f"{C_API} (getters take a const OrtMemoryInfo*)", crosses=("OrtMemoryInfo",))
def memory_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    cpu = ctx.cpu_info  # made here: the reference the moved infos compare with
    rounds = 20

    def make(r: int) -> Any:
        return ctx.out(a.CreateMemoryInfo, "OrtMemoryInfo*", b"Cpu", r % 2, 0, 0)

    def use(mi: Any, r: int) -> None:
        name, dev = ffi.new("char**"), ffi.new("int*")
        mtype, atype = ffi.new("OrtMemType*"), ffi.new("OrtAllocatorType*")
        ctx.ok(a.MemoryInfoGetName(mi, name))
        ctx.ok(a.MemoryInfoGetId(mi, dev))
        ctx.ok(a.MemoryInfoGetMemType(mi, mtype))
        ctx.ok(a.MemoryInfoGetType(mi, atype))
        _expect((ctx.c_string(name[0]), dev[0], int(mtype[0]), int(atype[0])),
                ("Cpu", 0, 0, r % 2), "name, id, memory type, allocator type", r)
        if r % 2 == 0:  # same device and allocator type as CreateCpuMemoryInfo's
            same = ffi.new("int*")
            ctx.ok(a.CompareMemoryInfo(mi, cpu, same))
            _expect(same[0], 0, "CompareMemoryInfo", r)
        buf = ffi.new("float[]", [float(r), 1.5])
        dims = ffi.new("int64_t[]", [2])
        val = ctx.out(a.CreateTensorWithDataAsOrtValue, "OrtValue*", mi, buf, 8, dims, 1, 1)
        try:
            _expect(ctx.read_floats(val), [float(r), 1.5], "tensor over the moved info", r)
        finally:
            a.ReleaseValue(val)

    _moved(rounds, make, use, a.ReleaseMemoryInfo)
    return _said(rounds, "an info (device and arena types)",
                 "each made a tensor that reads back")


@check("send.status", "An OrtStatus made on one thread reads back its code and message and is "
       "released on another thread, after its maker has ended.",
       f"{C_API} (CreateStatus, GetErrorCode, GetErrorMessage)", crosses=("OrtStatus",))
def status(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    rounds = 50

    def make(r: int) -> Any:
        st = a.CreateStatus(1 + r % 6, f"moved status {r}".encode())
        if st == ffi.NULL:
            raise Fail("CreateStatus returned NULL for an error code")
        return st

    def use(st: Any, r: int) -> None:
        got = (int(a.GetErrorCode(st)), ctx.c_string(a.GetErrorMessage(st)))
        _expect(got, (1 + r % 6, f"moved status {r}"), "code and message", r)

    _moved(rounds, make, use, a.ReleaseStatus)
    return _said(rounds, "a status")


def _read_shape(ctx: Ctx, info: Any) -> tuple[int, list[int], int]:
    elem, dims = ctx.info_shape(info)
    count = ctx.ffi.new("size_t*")
    ctx.ok(ctx.api.GetTensorShapeElementCount(info, count))
    return elem, dims, count[0]


@check("send.tensor-type-and-shape-info", "An OrtTensorTypeAndShapeInfo made on one thread "
       "(built by the caller, or by GetTensorTypeAndShape from a value) is read, changed (the "
       "caller's own) and released on another thread, after its maker has ended.",
       f"{C_API} (getters take a const pointer)", crosses=("OrtTensorTypeAndShapeInfo",))
def tensor_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    value = ctx.floats([0.0] * 12, [3, 4])
    rounds = 20

    def make(r: int) -> Any:
        if r % 2:
            return ctx.out(a.GetTensorTypeAndShape, "OrtTensorTypeAndShapeInfo*", value)
        info = ctx.out(a.CreateTensorTypeAndShapeInfo, "OrtTensorTypeAndShapeInfo*")
        ctx.ok(a.SetTensorElementType(info, 11))
        ctx.ok(a.SetDimensions(info, ffi.new("int64_t[]", [r + 1, 2]), 2))
        return info

    def use(info: Any, r: int) -> None:
        if r % 2:
            _expect(_read_shape(ctx, info), (1, [3, 4], 12), "type, dims, count", r)
            return
        _expect(_read_shape(ctx, info), (11, [r + 1, 2], 2 * (r + 1)), "type, dims, count", r)
        # the same rank: a lower one leaves a stale -1 dim behind on ORT 1.32 (thread or not)
        ctx.ok(a.SetDimensions(info, ffi.new("int64_t[]", [r + 5, 3]), 2))
        _expect(_read_shape(ctx, info), (11, [r + 5, 3], 3 * (r + 5)), "after SetDimensions",
                r)

    _moved(rounds, make, use, a.ReleaseTensorTypeAndShapeInfo)
    return _said(rounds, "an info (half built by the caller, half from a value)")


@check("send.type-info", "An OrtTypeInfo made on one thread (SessionGetInputTypeInfo or "
       "GetTypeInfo of a value) is read, cast to its tensor info and released on another "
       "thread, after its maker has ended.", f"{C_API} (getters take a const OrtTypeInfo*)",
       crosses=("OrtTypeInfo",))
def type_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    value, _ = ctx.tensor(6, [4], bytes(16))  # INT32 [4]
    rounds = 20

    def make(r: int) -> Any:
        if r % 2:
            return ctx.out(a.GetTypeInfo, "OrtTypeInfo*", value)
        return ctx.out(a.SessionGetInputTypeInfo, "OrtTypeInfo*", sess, r // 2 % 2)

    def use(ti: Any, r: int) -> None:
        kind = ffi.new("enum ONNXType*")
        ctx.ok(a.GetOnnxTypeFromTypeInfo(ti, kind))
        t = ctx.out(a.CastTypeInfoToTensorInfo, "OrtTensorTypeAndShapeInfo*", ti)  # borrowed
        elem, dims, _ = _read_shape(ctx, t)
        want = (1, 6, [4]) if r % 2 else (1, 1, [2])
        _expect((int(kind[0]), elem, dims), want, "kind, element type, dims", r)

    _moved(rounds, make, use, a.ReleaseTypeInfo)
    return _said(rounds, "a type info (half from a session input, half from a value)")


@check("send.key-value-pairs", "OrtKeyValuePairs made and filled on one thread are read, "
       "added to, removed from and released on another thread, after their maker has ended.",
       f"{C_API} (CreateKeyValuePairs)", crosses=("OrtKeyValuePairs",),
       slots=("CreateKeyValuePairs", "AddKeyValuePair", "GetKeyValue", "GetKeyValuePairs",
              "RemoveKeyValuePair", "ReleaseKeyValuePairs"))
def key_value_pairs(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    rounds = 20

    def make(r: int) -> Any:
        box = ffi.new("OrtKeyValuePairs**")
        a.CreateKeyValuePairs(box)
        a.AddKeyValuePair(box[0], f"k{r}".encode(), f"v{r}".encode())
        a.AddKeyValuePair(box[0], b"common", b"made")
        return box[0]

    def use(kv: Any, r: int) -> None:
        _expect(ctx.c_string(a.GetKeyValue(kv, f"k{r}".encode())), f"v{r}", "GetKeyValue", r)
        a.AddKeyValuePair(kv, b"added", b"by the user")  # a new key: 1.22 keeps re-added ones
        a.RemoveKeyValuePair(kv, b"common")
        keys, vals, n = ffi.new("char***"), ffi.new("char***"), ffi.new("size_t*")
        a.GetKeyValuePairs(kv, keys, vals, n)
        items = {ctx.c_string(keys[0][i]): ctx.c_string(vals[0][i]) for i in range(n[0])}
        _expect(items, {f"k{r}": f"v{r}", "added": "by the user"}, "entries", r)

    _moved(rounds, make, use, a.ReleaseKeyValuePairs)
    return _said(rounds, "the pairs")


@check("send.lora-adapter", "An OrtLoraAdapter loaded on one thread is made active in "
       "RunOptions, used by a Run and released on another thread, after its maker has ended.",
       f"{C_API} (CreateLoraAdapterFromArray, RunOptionsAddActiveLoraAdapter)",
       crosses=("OrtLoraAdapter",),
       slots=("CreateLoraAdapterFromArray", "RunOptionsAddActiveLoraAdapter"))
def lora_adapter(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.overridable_model())
    data = models.LORA_BIAS_ADAPTER
    x = ctx.floats([0.0, 0.5, 1.0])
    rounds = 10

    def make(r: int) -> Any:
        return ctx.out(a.CreateLoraAdapterFromArray, "OrtLoraAdapter*", ffi.from_buffer(data),
                       len(data), ffi.NULL)

    def use(adapter: Any, r: int) -> None:
        ro = ctx.out(a.CreateRunOptions, "OrtRunOptions*")
        try:
            ctx.ok(a.RunOptionsAddActiveLoraAdapter(ro, adapter), "RunOptionsAddActiveLoraAdapter")
            got, err = _run_raw(ctx, sess, {"x": x}, ["y"], ro)
            if err:
                raise Fail(f"round {r}: Run with the adapter: {err[1][:200]}")
            try:
                _expect(ctx.read_floats(got[0]), [100.0, 200.5, 301.0], "y", r)
            finally:
                a.ReleaseValue(got[0])
        finally:
            a.ReleaseRunOptions(ro)

    _moved(rounds, make, use, a.ReleaseLoraAdapter)
    return _said(rounds, "an adapter", "each run saw the adapter's bias")


@check("send.prepacked-container", "An OrtPrepackedWeightsContainer made (and given to one "
       "session) on one thread serves another session created on a second thread, and is "
       "released there after both sessions, once its maker has ended.",
       f"{C_API} (CreateSessionFromArrayWithPrepackedWeightsContainer)",
       crosses=("OrtPrepackedWeightsContainer", "OrtSession"),
       slots=("CreatePrepackedWeightsContainer",))
def prepacked_container(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    m = models.mlp_model(width=8)
    buf = ffi.from_buffer(m)
    want = models.mlp_reference([[0.5] * 8], width=8)[0]
    x = ctx.floats([0.5] * 8, [1, 8])
    so = ctx.options()
    env = ctx.env
    rounds = 4

    def session(box: Any) -> Any:
        return ctx.out(a.CreateSessionFromArrayWithPrepackedWeightsContainer, "OrtSession*",
                       env, buf, len(m), so, box)

    def run(sess: Any, r: int) -> None:
        got, err = _run_raw(ctx, sess, {"x": x}, ["y"])
        if err:
            raise Fail(f"round {r}: Run: {err[1][:200]}")
        try:
            y = ctx.read_floats(got[0])
        finally:
            a.ReleaseValue(got[0])
        if any(abs(p - q) > 1e-4 for p, q in zip(y, want)):
            raise Fail(f"round {r}: {y} vs {want}")

    def make(r: int) -> Any:
        box = ctx.out(a.CreatePrepackedWeightsContainer, "OrtPrepackedWeightsContainer*")
        return box, session(box)

    def use(made: Any, r: int) -> None:
        box, first = made
        second = session(box)
        try:
            run(first, r)
            run(second, r)
        finally:
            a.ReleaseSession(second)

    def release(made: Any) -> None:
        a.ReleaseSession(made[1])
        a.ReleasePrepackedWeightsContainer(made[0])

    _moved(rounds, make, use, release)
    return _said(rounds, "a container", "two sessions share it and match the reference")


@check("send.threading-options", "OrtThreadingOptions made on one thread are filled, given to "
       "CreateEnvWithGlobalThreadPools and released on another thread, after their maker has "
       "ended; the env then runs a session on its global pools.",
       f"{C_API} (CreateThreadingOptions; ORT copies them at env creation)",
       crosses=("OrtThreadingOptions",), child=True,
       slots=("CreateEnvWithGlobalThreadPools", "DisablePerSessionThreads"))
def threading_options(ctx: Ctx) -> str:
    a = ctx.api
    rounds = 10  # only the last one makes the env: a process has one
    envs: list[Any] = []

    def make(r: int) -> Any:
        return ctx.out(a.CreateThreadingOptions, "OrtThreadingOptions*")

    def use(tp: Any, r: int) -> None:
        ctx.ok(a.SetGlobalIntraOpNumThreads(tp, 2))
        ctx.ok(a.SetGlobalInterOpNumThreads(tp, 1))
        ctx.ok(a.SetGlobalSpinControl(tp, 0))
        if r == rounds - 1:
            envs.append(ctx.out(a.CreateEnvWithGlobalThreadPools, "OrtEnv*", 3, b"moved", tp))

    _moved(rounds, make, use, a.ReleaseThreadingOptions)
    so = ctx.out(a.CreateSessionOptions, "OrtSessionOptions*")
    ctx.defer(a.ReleaseSessionOptions, so)
    ctx.ok(a.DisablePerSessionThreads(so))
    # without global pools this creation fails (env.per-session-threads-need-global)
    sess = ctx.session(models.add_model((2,)), so, env=envs[0])
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    _expect(got, [4.0, 6.0], "z", rounds - 1)
    return _said(rounds, "options", "the env made from the last ones runs on global pools")


def _cpu_ep_device(ctx: Ctx) -> Any:
    a, ffi = ctx.api, ctx.ffi
    devs, n = ffi.new("OrtEpDevice***"), ffi.new("size_t*")
    ctx.ok(a.GetEpDevices(ctx.env, devs, n))
    for i in range(n[0]):
        if ctx.c_string(a.EpDevice_EpName(devs[0][i])) == "CPUExecutionProvider":
            return devs[0][i]
    if n[0] == 0:
        raise Known("GetEpDevices lists no device at all (the built-in CPU provider is not an "
                    "EP device in this version)")
    raise Fail(f"no CPUExecutionProvider among {n[0]} EP devices")


def _hardware(ctx: Ctx, hw: Any) -> tuple[Any, ...]:
    a = ctx.api
    return (int(a.HardwareDevice_Type(hw)), ctx.c_string(a.HardwareDevice_Vendor(hw)),
            int(a.HardwareDevice_VendorId(hw)), int(a.HardwareDevice_DeviceId(hw)),
            ctx.pairs(a.HardwareDevice_Metadata(hw)))


@check("send.ep-device", "An OrtEpDevice found on one thread (GetEpDevices) is read and given "
       "to SessionOptionsAppendExecutionProvider_V2 on another thread, after the finder has "
       "ended; the session made there runs (the env owns EP devices: none is released).",
       f"{C_API} (GetEpDevices: const devices the env owns)", crosses=("OrtEpDevice",),
       slots=("GetEpDevices", "SessionOptionsAppendExecutionProvider_V2"))
def ep_device(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    env = ctx.env
    x, y = ctx.floats([1, 2]), ctx.floats([3, 4])
    rounds = 5

    def read(d: Any) -> tuple[Any, ...]:
        return (ctx.c_string(a.EpDevice_EpName(d)), ctx.c_string(a.EpDevice_EpVendor(d)),
                ctx.pairs(a.EpDevice_EpMetadata(d)), ctx.pairs(a.EpDevice_EpOptions(d)),
                _hardware(ctx, a.EpDevice_Device(d)))

    def make(r: int) -> Any:
        d = _cpu_ep_device(ctx)
        return d, read(d)

    def use(made: Any, r: int) -> None:
        d, seen = made
        _expect(read(d), seen, "what the finder read", r)
        so = ctx.out(a.CreateSessionOptions, "OrtSessionOptions*")
        try:
            ctx.ok(a.SessionOptionsAppendExecutionProvider_V2(
                so, env, ffi.new("OrtEpDevice*[]", [d]), 1, ffi.NULL, ffi.NULL, 0))
            sess = ctx.session(models.add_model((2,)), so, release=False)
        finally:
            a.ReleaseSessionOptions(so)
        try:
            got, err = _run_raw(ctx, sess, {"x": x, "y": y}, ["z"])
            if err:
                raise Fail(f"round {r}: Run: {err[1][:200]}")
            try:
                _expect(ctx.read_floats(got[0]), [4.0, 6.0], "z", r)
            finally:
                a.ReleaseValue(got[0])
        finally:
            a.ReleaseSession(sess)

    _moved(rounds, make, use, lambda _made: None)
    return _said(rounds, "the CPU EP device", "a session appended to it runs")


@check("send.hardware-device", "OrtHardwareDevices found on one thread (GetHardwareDevices, "
       "or EpDevice_Device before API 24) read the same type, vendor, ids and metadata on "
       "another thread, after the finder has ended (the env owns them: none is released).",
       f"{C_API} (hardware devices are const and owned by the env)",
       crosses=("OrtHardwareDevice",), slots=("GetEpDevices", "EpDevice_Device"))
def hardware_device(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    env = ctx.env
    rounds = 10
    listed = ctx.has("GetHardwareDevices", "GetNumHardwareDevices")

    def make(r: int) -> Any:
        if listed:
            n = ffi.new("size_t*")
            ctx.ok(a.GetNumHardwareDevices(env, n))
            arr = ffi.new("OrtHardwareDevice*[]", max(n[0], 1))
            ctx.ok(a.GetHardwareDevices(env, arr, n[0]))
            devs = [arr[i] for i in range(n[0])]
        else:
            devs = [a.EpDevice_Device(_cpu_ep_device(ctx))]
        return [(hw, _hardware(ctx, hw)) for hw in devs]

    def use(made: Any, r: int) -> None:
        _expect([_hardware(ctx, hw) for hw, _ in made], [seen for _, seen in made],
                "what the finder read", r)
        if 0 not in [seen[0] for _, seen in made]:
            raise Fail(f"round {r}: no CPU among types {[seen[0] for _, seen in made]}")

    _moved(rounds, make, use, lambda _made: None)
    how = "GetHardwareDevices" if listed else "EpDevice_Device"
    return _said(rounds, f"the devices ({how})")


@check("send.io-binding", "An OrtIoBinding made and bound on one thread runs, is rebound and "
       "run again, and is released on another thread, after its maker has ended; the inputs "
       "the maker bound are released there too.",
       "https://onnxruntime.ai/docs/performance/tune-performance/iobinding.html",
       crosses=("OrtIoBinding", "OrtValue"), slots=("CreateIoBinding",))
def io_binding(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    rounds = 20

    def make(r: int) -> Any:
        b = ctx.out(a.CreateIoBinding, "OrtIoBinding*", sess)
        x = ctx.floats([float(r), float(r)], release=False)
        y = ctx.floats([0.5, 0.5], release=False)
        for st in (a.BindInput(b, b"x", x), a.BindInput(b, b"y", y),
                   a.BindOutputToDevice(b, b"z", ctx.cpu_info)):
            ctx.ok(st, "bind")
        return b, x, y

    def use(made: Any, r: int) -> None:
        b = made[0]
        ctx.ok(a.RunWithBinding(sess, ffi.NULL, b), "RunWithBinding")
        vals, n = ffi.new("OrtValue***"), ffi.new("size_t*")
        ctx.ok(a.GetBoundOutputValues(b, ctx.allocator, vals, n))
        got = [ctx.read_floats(vals[0][k]) for k in range(n[0])]
        for k in range(n[0]):
            a.ReleaseValue(vals[0][k])
        ctx.ok(a.AllocatorFree(ctx.allocator, vals[0]))
        _expect(got, [[r + 0.5, r + 0.5]], "z bound by the maker", r)
        ok, err = _binding_round(ctx, sess, b, r + 100)
        if not ok:
            raise Fail(f"round {r}: rebound by the user: {err}")

    def release(made: Any) -> None:
        a.ReleaseIoBinding(made[0])
        a.ReleaseValue(made[1])
        a.ReleaseValue(made[2])

    _moved(rounds, make, use, release)
    return _said(rounds, "a binding", "the maker's bindings and the user's rebinding both run")


@check("send.value", "OrtValues made on one thread (a tensor over caller memory, one "
       "allocated by ORT, a string tensor) are read, fed to a Run and released on another "
       "thread, after their maker has ended.", f"{C_API} (CreateTensorAsOrtValue)",
       crosses=("OrtValue",))
def value(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    rounds = 20

    def make(r: int) -> Any:
        over = ctx.floats([float(r), 1.0], release=False)
        dims = ffi.new("int64_t[]", [2])
        own = ctx.out(a.CreateTensorAsOrtValue, "OrtValue*", ctx.allocator, dims, 1, 1)
        p = ffi.cast("float*", ctx.out(a.GetTensorMutableData, "void*", own))
        p[0], p[1] = 0.5, float(r)
        text = ctx.out(a.CreateTensorAsOrtValue, "OrtValue*", ctx.allocator, dims, 1, 8)
        items = [ffi.new("char[]", s.encode()) for s in (f"s{r}", "moved")]
        ctx.ok(a.FillStringTensor(text, ffi.new("char*[]", items), 2), "FillStringTensor")
        return over, own, text

    def use(vals: Any, r: int) -> None:
        over, own, text = vals
        _expect((ctx.read_floats(over), ctx.read_floats(own), ctx.strings(text)),
                ([float(r), 1.0], [0.5, float(r)], [f"s{r}", "moved"]), "contents", r)
        got, err = _run_raw(ctx, sess, {"x": over, "y": own}, ["z"])
        if err:
            raise Fail(f"round {r}: Run: {err[1][:200]}")
        try:
            _expect(ctx.read_floats(got[0]), [r + 0.5, r + 1.0], "z", r)
        finally:
            a.ReleaseValue(got[0])

    def release(vals: Any) -> None:
        for v in vals:
            a.ReleaseValue(v)

    _moved(rounds, make, use, release)
    return _said(rounds, "three values", "a Run on the moved tensors is right")


@check("send.session", "An OrtSession created on one thread runs and is released on another "
       "thread, after its creator has ended.",
       "https://onnxruntime.ai/docs/reference/high-level-design.html",
       crosses=("OrtSession",))
def session(ctx: Ctx) -> str:
    a = ctx.api
    model = models.add_model((2,))
    so = ctx.options()
    ctx.env  # noqa: B018 - made here, before the threads use it
    x, y = ctx.floats([1, 2]), ctx.floats([3, 4])
    rounds = 5

    def make(r: int) -> Any:
        return ctx.session(model, so, release=False)

    def use(sess: Any, r: int) -> None:
        got, err = _run_raw(ctx, sess, {"x": x, "y": y}, ["z"])
        if err:
            raise Fail(f"round {r}: Run: {err[1][:200]}")
        try:
            _expect(ctx.read_floats(got[0]), [4.0, 6.0], "z", r)
        finally:
            a.ReleaseValue(got[0])

    _moved(rounds, make, use, a.ReleaseSession)
    return _said(rounds, "a session")
