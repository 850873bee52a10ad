"""Memory infos, allocators (default, session, env-registered), key-value pairs, EP devices."""

from __future__ import annotations

from typing import Any

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Fail, Known, check

ALLOC_DOC = "onnxruntime_c_api.h GetAllocatorWithDefaultOptions (returned value must not be freed)"


@check("alloc.default-same-pointer", "GetAllocatorWithDefaultOptions returns the same "
       "allocator every time.", ALLOC_DOC)
def default_same(ctx: Ctx) -> str:
    ptrs = {int(ctx.ffi.cast("uintptr_t", ctx.allocator)) for _ in range(5)}
    if len(ptrs) != 1:
        raise Fail(f"{len(ptrs)} distinct pointers")
    return "one static allocator"


@check("alloc.default-info", "The default allocator's memory info names Cpu, device id 0, "
       "default memory type, and AllocatorAlloc/Free work through it.", ALLOC_DOC)
def default_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    alloc = ctx.allocator
    mi = ctx.out(a.AllocatorGetInfo, "OrtMemoryInfo*", alloc)
    name = ffi.new("char**")
    ctx.ok(a.MemoryInfoGetName(mi, name))
    dev_id = ffi.new("int*")
    ctx.ok(a.MemoryInfoGetId(mi, dev_id))
    mtype = ffi.new("OrtMemType*")
    ctx.ok(a.MemoryInfoGetMemType(mi, mtype))
    atype = ffi.new("OrtAllocatorType*")
    ctx.ok(a.MemoryInfoGetType(mi, atype))
    p = ctx.out(a.AllocatorAlloc, "void*", alloc, 1000)
    ffi.memmove(p, b"x" * 1000, 1000)
    aligned = int(ffi.cast("uintptr_t", p)) % 64 == 0
    ctx.ok(a.AllocatorFree(alloc, p))
    got = (ctx.c_string(name[0]), dev_id[0], int(mtype[0]))
    if got != ("Cpu", 0, 0):
        raise Fail(f"info {got}")
    return f"Cpu/0/default, allocator type {int(atype[0])}; 1000 bytes, 64-byte aligned: {aligned}"


@check("alloc.memory-info", "CreateMemoryInfo('Cpu', ...) and CreateCpuMemoryInfo describe the "
       "same memory; getters return what was given.", "onnxruntime_c_api.h CreateMemoryInfo")
def memory_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    mi = ctx.out(a.CreateMemoryInfo, "OrtMemoryInfo*", b"Cpu", 0, 0, 0)
    ctx.defer(a.ReleaseMemoryInfo, mi)
    same = ffi.new("int*")
    ctx.ok(a.CompareMemoryInfo(mi, ctx.cpu_info, same))
    detail = f"CompareMemoryInfo {same[0]}"
    if ctx.has("MemoryInfoGetDeviceType"):
        dt = ffi.new("OrtMemoryInfoDeviceType*")
        a.MemoryInfoGetDeviceType(mi, dt)
        if int(dt[0]) != 0:
            raise Fail(f"device type {dt[0]}")
        detail += ", device type CPU"
    if same[0] != 0:
        raise Fail(detail)
    return detail


@check("alloc.memory-info-unknown-name", "CreateMemoryInfo with a device name ORT does not "
       "know fails with an error status.", "none")
def memory_info_unknown(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    box = ffi.new("OrtMemoryInfo**")
    err = ctx.status(a.CreateMemoryInfo(b"NoSuchDevice", 0, 0, 0, box))
    if err is None:
        a.ReleaseMemoryInfo(box[0])
        raise Known("accepted an unknown device name")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("alloc.memory-info-v2", "CreateMemoryInfo_V2 (API 23) records device type, vendor, "
       "memory type and alignment.", "onnxruntime_c_api.h CreateMemoryInfo_V2",
       slots=("CreateMemoryInfo_V2", "MemoryInfoGetDeviceMemType", "MemoryInfoGetVendorId"))
def memory_info_v2(ctx: Ctx) -> str:
    a = ctx.api
    mi = ctx.out(a.CreateMemoryInfo_V2, "OrtMemoryInfo*", b"ortc_cpu", 0, 0x1234, 0, 0, 64, 0)
    ctx.defer(a.ReleaseMemoryInfo, mi)
    got = (int(a.MemoryInfoGetDeviceMemType(mi)), int(a.MemoryInfoGetVendorId(mi)))
    if got != (0, 0x1234):
        raise Fail(f"device mem type / vendor {got}")
    return "DEFAULT memory, vendor 0x1234"


@check("alloc.session-allocator", "CreateAllocator on a CPU session gives an allocator that "
       "allocates, frees and (API 23) reports statistics.", "onnxruntime_c_api.h CreateAllocator",
       slots=("CreateAllocator",))
def session_allocator(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    alloc = ctx.out(a.CreateAllocator, "OrtAllocator*", sess, ctx.cpu_info)
    ctx.defer(a.ReleaseAllocator, alloc)  # released before the session (reverse order)
    p = ctx.out(a.AllocatorAlloc, "void*", alloc, 4096)
    ctx.ok(a.AllocatorFree(alloc, p))
    detail = "alloc/free OK"
    if ctx.has("AllocatorGetStats"):
        box = ffi.new("OrtKeyValuePairs**")
        err = ctx.status(a.AllocatorGetStats(alloc, box))
        if err:
            detail += f"; stats: {code_name(err[0])}"
        else:
            names = sorted(ctx.pairs(box[0], release=True))
            detail += f"; stats keys: {', '.join(names[:4])}{'…' if len(names) > 4 else ''}"
    return detail


@check("alloc.env-registered", "An allocator registered on the env with "
       "CreateAndRegisterAllocator serves sessions that opt in (session.use_env_allocators=1); "
       "registering the same memory twice is refused; UnregisterAllocator removes it.",
       "onnxruntime_c_api.h CreateAndRegisterAllocator", child=True,
       slots=("CreateAndRegisterAllocator", "UnregisterAllocator", "CreateArenaCfgV2"))
def env_registered(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    env = ctx.env
    keys = [ctx.keep(ffi.new("char[]", b"max_mem")), ctx.keep(ffi.new("char[]",
                                                                       b"arena_extend_strategy"))]
    vals = ffi.new("size_t[]", [0, 1])
    cfg = ctx.out(a.CreateArenaCfgV2, "OrtArenaCfg*", ffi.new("char*[]", keys), vals, 2)
    ctx.defer(a.ReleaseArenaCfg, cfg)
    cfg1 = ctx.out(a.CreateArenaCfg, "OrtArenaCfg*", 0, -1, -1, -1)
    a.ReleaseArenaCfg(cfg1)
    mi = ctx.out(a.CreateMemoryInfo, "OrtMemoryInfo*", b"Cpu", 1, 0, 0)  # arena
    ctx.defer(a.ReleaseMemoryInfo, mi)
    ctx.ok(a.CreateAndRegisterAllocator(env, mi, cfg), "CreateAndRegisterAllocator")
    second = ctx.status(a.CreateAndRegisterAllocator(env, mi, cfg))
    so = ctx.options(config={"session.use_env_allocators": "1"})
    sess = ctx.session(models.add_model((2,)), so, release=False)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    a.ReleaseSession(sess)
    ctx.ok(a.UnregisterAllocator(env, mi), "UnregisterAllocator")
    again = ctx.status(a.UnregisterAllocator(env, mi))
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    if second is None:
        raise Known("a second registration of the same memory info succeeded")
    return (f"second registration: {code_name(second[0])}; unregister twice: "
            f"{'OK' if again is None else code_name(again[0])}")


@check("alloc.key-value-pairs", "OrtKeyValuePairs (API 22) copy their keys and values, "
       "overwrite on re-add, list, and remove entries.", "onnxruntime_c_api.h CreateKeyValuePairs",
       slots=("CreateKeyValuePairs", "AddKeyValuePair", "GetKeyValue", "GetKeyValuePairs",
              "RemoveKeyValuePair", "ReleaseKeyValuePairs"))
def kvp(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    box = ffi.new("OrtKeyValuePairs**")
    a.CreateKeyValuePairs(box)
    kv = box[0]
    ctx.defer(a.ReleaseKeyValuePairs, kv)
    key = ffi.new("char[]", b"k1")
    a.AddKeyValuePair(kv, key, b"v1")
    key[0] = b"X"  # the pairs must hold a copy
    a.AddKeyValuePair(kv, b"k2", b"v2")
    a.AddKeyValuePair(kv, b"k1", b"v1b")
    a.RemoveKeyValuePair(kv, b"k2")
    items = ctx.pairs(kv)
    missing = a.GetKeyValue(kv, b"k2")
    if items != {"k1": "v1b"} or missing != ffi.NULL:
        raise Known(f"entries {items}, removed key -> "
                    f"{'NULL' if missing == ffi.NULL else ctx.c_string(missing)}")
    return "copied, overwritten, removed"


def _cpu_device(ctx: Ctx) -> Any:
    a, ffi = ctx.api, ctx.ffi
    devs = ffi.new("OrtEpDevice***")
    n = ffi.new("size_t*")
    ctx.ok(a.GetEpDevices(ctx.env, devs, n))
    for i in range(n[0]):
        d = devs[0][i]
        if ctx.c_string(a.EpDevice_EpName(d)) == "CPUExecutionProvider":
            return d, n[0]
    if n[0] == 0:
        raise Known("GetEpDevices lists no device at all (the built-in CPU provider is not an "
                    "EP device in this version)")
    raise Fail(f"no CPUExecutionProvider among {n[0]} EP devices")


@check("device.cpu-ep-device", "GetEpDevices lists the CPU provider on a CPU hardware device "
       "with vendor, metadata and options, and a session appended to it with "
       "SessionOptionsAppendExecutionProvider_V2 runs.", "onnxruntime_c_api.h GetEpDevices",
       slots=("GetEpDevices", "SessionOptionsAppendExecutionProvider_V2"))
def cpu_ep_device(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    d, count = _cpu_device(ctx)
    hw = a.EpDevice_Device(d)
    vendor = ctx.c_string(a.EpDevice_EpVendor(d))
    hw_type = int(a.HardwareDevice_Type(hw))
    hw_vendor = ctx.c_string(a.HardwareDevice_Vendor(hw))
    a.HardwareDevice_VendorId(hw)
    a.HardwareDevice_DeviceId(hw)
    a.HardwareDevice_Metadata(hw)
    a.EpDevice_EpMetadata(d)
    a.EpDevice_EpOptions(d)
    if ctx.has("EpDevice_MemoryInfo"):
        a.EpDevice_MemoryInfo(d, 0)
    if hw_type != 0:
        raise Fail(f"hardware type {hw_type}, expected CPU (0)")
    so = ctx.options()
    ctx.ok(a.SessionOptionsAppendExecutionProvider_V2(so, ctx.env, ffi.new("OrtEpDevice*[]",
                                                                           [d]), 1,
                                                      ffi.NULL, ffi.NULL, 0))
    sess = ctx.session(models.add_model((2,)), so)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    return f"{count} EP device(s); CPU by {vendor!r} on {hw_vendor!r}; session runs"


@check("device.selection-policy", "SessionOptionsSetEpSelectionPolicy(PREFER_CPU) creates a "
       "session that runs.", "onnxruntime_c_api.h SessionOptionsSetEpSelectionPolicy",
       slots=("SessionOptionsSetEpSelectionPolicy",))
def selection_policy(ctx: Ctx) -> str:
    a = ctx.api
    so = ctx.options()
    ctx.ok(a.SessionOptionsSetEpSelectionPolicy(so, 1))  # PREFER_CPU
    sess, err = ctx.try_session(models.add_model((2,)), so)
    if err:
        raise Known(f"session creation fails: {code_name(err[0])}: {short(err[1], 120)}")
    ctx.defer(a.ReleaseSession, sess)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    return "runs"


@check("device.hardware-devices", "GetNumHardwareDevices/GetHardwareDevices (API 24) list at "
       "least one CPU device.", "onnxruntime_c_api.h GetHardwareDevices",
       slots=("GetNumHardwareDevices", "GetHardwareDevices"))
def hardware_devices(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    n = ffi.new("size_t*")
    ctx.ok(a.GetNumHardwareDevices(ctx.env, n))
    devs = ffi.new("OrtHardwareDevice*[]", max(n[0], 1))
    ctx.ok(a.GetHardwareDevices(ctx.env, devs, n[0]))
    types = [int(a.HardwareDevice_Type(devs[i])) for i in range(n[0])]
    if 0 not in types:
        raise Fail(f"types {types}")
    return f"{n[0]} device(s), types {types}"


@check("device.copy-tensors", "CopyTensors (API 23) copies CPU tensors into CPU tensors.",
       "onnxruntime_c_api.h CopyTensors", slots=("CopyTensors",))
def copy_tensors(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    src = ctx.floats([1, 2, 3])
    dst = ctx.floats([0, 0, 0])
    err = ctx.status(a.CopyTensors(ctx.env, ffi.new("OrtValue*[]", [src]),
                                   ffi.new("OrtValue*[]", [dst]), ffi.NULL, 1))
    if err:
        raise Known(f"CPU to CPU refused: {code_name(err[0])}: {short(err[1])}")
    got = ctx.read_floats(dst)
    if got != [1.0, 2.0, 3.0]:
        raise Fail(f"destination {got}")
    return "copied"


@check("alloc.shared-allocator", "The CPU EP device reports its memory info "
       "(EpDevice_MemoryInfo), and GetSharedAllocator (API 23) returns the env's shared "
       "allocator for it.", "onnxruntime_c_api.h GetSharedAllocator (a default shared "
       "allocator exists for every OrtEpDevice's memory info)",
       slots=("GetSharedAllocator", "EpDevice_MemoryInfo", "GetEpDevices"))
def shared_allocator(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    d, _ = _cpu_device(ctx)
    mi = a.EpDevice_MemoryInfo(d, 0)
    box = ffi.new("OrtAllocator**")
    note = ""
    if mi == ffi.NULL:
        note = "EpDevice_MemoryInfo(CPU device, DEFAULT) is NULL; "
        mi = ctx.cpu_info
    err = ctx.status(a.GetSharedAllocator(ctx.env, mi, box))
    if err:
        raise Known(f"{note}GetSharedAllocator: {code_name(err[0])}: {short(err[1], 80)}")
    if box[0] == ffi.NULL:
        raise Known(f"{note}no shared allocator for CPU memory")
    p = ctx.out(a.AllocatorAlloc, "void*", box[0], 256)
    ctx.ok(a.AllocatorFree(box[0], p))
    if note:
        raise Known(note + "with CreateCpuMemoryInfo the shared allocator is found")
    return "found; 256 bytes allocated and freed"


@check("alloc.register-custom", "A caller-implemented OrtAllocator registered on the env with "
       "RegisterAllocator serves the sessions that opt in to env allocators.",
       "onnxruntime_c_api.h RegisterAllocator", child=True,
       slots=("RegisterAllocator", "UnregisterAllocator"))
def register_custom(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    env = ctx.env
    base = ctx.allocator
    calls = {"alloc": 0, "free": 0}
    mi = ctx.out(a.CreateMemoryInfo, "OrtMemoryInfo*", b"Cpu", 0, 0, 0)
    ctx.defer(a.ReleaseMemoryInfo, mi)

    def alloc(_this: Any, size: int) -> Any:
        calls["alloc"] += 1
        p = ffi.new("void**")
        st = a.AllocatorAlloc(base, size, p)
        return ffi.NULL if ctx.status(st) is not None else p[0]

    def free(_this: Any, p: Any) -> None:
        calls["free"] += 1
        ctx.status(a.AllocatorFree(base, p))  # inside a C callback: nothing to raise to

    fields = dict(ffi.typeof("OrtAllocator").fields)
    al = ctx.keep(ffi.new("OrtAllocator*"))
    al.version = min(ctx.api_version, 22)
    al.Alloc = ctx.keep(ffi.callback(fields["Alloc"].type, alloc))
    al.Free = ctx.keep(ffi.callback(fields["Free"].type, free))
    al.Info = ctx.keep(ffi.callback(fields["Info"].type, lambda _this: mi))
    ctx.ok(a.RegisterAllocator(env, al), "RegisterAllocator")
    so = ctx.options(config={"session.use_env_allocators": "1"})
    sess = ctx.session(models.mlp_model(), so, release=False)
    x = ctx.floats([0.1] * 64, [2, 32])
    out = ctx.run(sess, {"x": x}, ["y"])[0]
    got = ctx.read_floats(out)
    a.ReleaseValue(out)
    ctx._cleanups.pop()  # the output was released here
    a.ReleaseSession(sess)
    ctx.ok(a.UnregisterAllocator(env, mi), "UnregisterAllocator")
    if len(got) != 64:
        raise Fail("wrong output")
    if calls["alloc"] == 0:
        raise Known("registered, but the session never called it")
    return f"the Python allocator served {calls['alloc']} allocations ({calls['free']} freed)"


@check("alloc.register-v2", "CreateAndRegisterAllocatorV2 registers a CPU arena for the CPU "
       "provider that opted-in sessions use; UnregisterAllocator removes it.",
       "onnxruntime_c_api.h CreateAndRegisterAllocatorV2", child=True,
       slots=("CreateAndRegisterAllocatorV2", "UnregisterAllocator"))
def register_v2(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    env = ctx.env
    mi = ctx.out(a.CreateMemoryInfo, "OrtMemoryInfo*", b"Cpu", 1, 0, 0)
    ctx.defer(a.ReleaseMemoryInfo, mi)
    cfg = ctx.out(a.CreateArenaCfg, "OrtArenaCfg*", 0, -1, -1, -1)
    ctx.defer(a.ReleaseArenaCfg, cfg)
    ctx.ok(a.CreateAndRegisterAllocatorV2(env, b"CPUExecutionProvider", mi, cfg, ffi.NULL,
                                          ffi.NULL, 0), "CreateAndRegisterAllocatorV2")
    so = ctx.options(config={"session.use_env_allocators": "1"})
    sess = ctx.session(models.add_model((2,)), so, release=False)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    a.ReleaseSession(sess)
    ctx.ok(a.UnregisterAllocator(env, mi), "UnregisterAllocator")
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    return "registered, used, unregistered"


@check("device.selection-delegate", "An EP selection delegate "
       "(SessionOptionsSetEpSelectionPolicyDelegate) is called at session creation with the "
       "available devices, and the CPU device it picks runs the session.",
       "onnxruntime_c_api.h SessionOptionsSetEpSelectionPolicyDelegate",
       slots=("SessionOptionsSetEpSelectionPolicyDelegate", "GetEpDevices"))
def selection_delegate(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    seen: dict[str, Any] = {}

    def choose(devices: Any, n: int, _model_md: Any, _runtime_md: Any, selected: Any,
               max_selected: int, num_selected: Any, _state: Any) -> Any:
        try:
            names = [ctx.c_string(a.EpDevice_EpName(devices[i])) for i in range(n)]
            seen["offered"] = names
            k = 0
            for i, name in enumerate(names):
                if name == "CPUExecutionProvider" and k < max_selected:
                    selected[k] = devices[i]
                    k += 1
            num_selected[0] = k
            return ffi.NULL
        except BaseException as exc:  # noqa: BLE001 - nothing may unwind into ORT
            seen["error"] = repr(exc)
            return a.CreateStatus(1, b"delegate failed")

    cb = ctx.keep(ffi.callback("EpSelectionDelegate", choose))
    so = ctx.options()
    ctx.ok(a.SessionOptionsSetEpSelectionPolicyDelegate(so, cb, ffi.NULL))
    sess, err = ctx.try_session(models.add_model((2,)), so)
    if err:
        raise Known(f"session creation fails: {code_name(err[0])}: {short(err[1], 120)} "
                    f"(delegate saw {seen})")
    ctx.defer(a.ReleaseSession, sess)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if "offered" not in seen or got != [4.0, 6.0]:
        raise Fail(f"delegate saw {seen}; result {got}")
    return f"offered {seen['offered']}; CPU chosen; runs"
