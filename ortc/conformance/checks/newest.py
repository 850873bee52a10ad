"""The slots API 31 and API 32 added, and where the OrtApi table ends.

No public 1.31/1.32 C header states these slots' contracts yet, so each check records what the
libraries do: what a slot does with NULL arguments and what it returns on a CPU build.
"""

from __future__ import annotations

from typing import Any, cast

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Fail, check

PKG_README = ("https://github.com/microsoft/onnxruntime/tree/main/onnxruntime/core/session/"
              "model_package")
OBSERVED = "observed on the released libraries (no public header for API 31/32 yet)"


@check("api31.ep-context-read-func", "SessionOptionsSetEpContextDataReadFunc (API 31) refuses "
       "NULL options with INVALID_ARGUMENT; it accepts a read callback, and a NULL callback "
       "(which clears it) with any state; a CPU session over a model without EP-context nodes "
       "never calls the callback and runs.", OBSERVED,
       slots=("SessionOptionsSetEpContextDataReadFunc",))
def ep_context_read_func(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    null = ctx.error(a.SessionOptionsSetEpContextDataReadFunc(ffi.NULL, ffi.NULL, ffi.NULL),
                     "INVALID_ARGUMENT", "NULL options")
    calls: list[bytes] = []

    def read(state: Any, name: Any, allocator: Any, buffer: Any, size: Any) -> Any:
        calls.append(cast(bytes, ffi.string(name)))
        return ffi.NULL

    cb = ctx.keep(ffi.callback("OrtReadNamedBufferFunc", read))
    so = ctx.options()
    ctx.ok(a.SessionOptionsSetEpContextDataReadFunc(so, cb, ffi.NULL), "set the callback")
    ctx.ok(a.SessionOptionsSetEpContextDataReadFunc(so, ffi.NULL, ffi.cast("void*", 1)),
           "clear with a NULL callback and a non-NULL state")
    ctx.ok(a.SessionOptionsSetEpContextDataReadFunc(so, cb, ffi.NULL), "set it again")
    sess = ctx.session(models.add_model((2,)), so)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    if calls:
        raise Fail(f"the callback was called for {calls} on a model without EP-context nodes")
    return f"NULL options: {null}; set, cleared, set; session runs; callback not called"


@check("api31.model-package-api", "GetModelPackageApi (API 31) takes no arguments and returns "
       "the same non-NULL table on every call of a CPU build.", PKG_README,
       slots=("GetModelPackageApi",))
def model_package_api(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    tables = {int(ffi.cast("uintptr_t", a.GetModelPackageApi())) for _ in range(3)}
    if tables == {0}:
        raise Fail("NULL")
    if len(tables) != 1:
        raise Fail(f"{len(tables)} distinct tables")
    return "one non-NULL table"


def _cpu_ep_device(ctx: Ctx) -> Any:
    a, ffi = ctx.api, ctx.ffi
    devs = ffi.new("OrtEpDevice***")
    n = ffi.new("size_t*")
    ctx.ok(a.GetEpDevices(ctx.env, devs, n))
    for i in range(n[0]):
        if ctx.c_string(a.EpDevice_EpName(devs[0][i])) == "CPUExecutionProvider":
            return devs[0][i]
    raise Fail(f"no CPUExecutionProvider among {n[0]} EP devices")


@check("api32.ep-device-memory-capacity", "EpDevice_GetMemoryCapacity (API 32) refuses a NULL "
       "device and two NULL outputs with INVALID_ARGUMENT; for the CPU provider's EP device it "
       "returns NOT_IMPLEMENTED and leaves both outputs untouched.", OBSERVED,
       slots=("EpDevice_GetMemoryCapacity", "GetEpDevices"))
def ep_device_memory_capacity(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    first, second = ffi.new("size_t*", 12345), ffi.new("size_t*", 12345)
    null_dev = ctx.error(a.EpDevice_GetMemoryCapacity(ffi.NULL, 0, first, second),
                         "INVALID_ARGUMENT", "NULL device")
    dev = _cpu_ep_device(ctx)
    null_outs = ctx.error(a.EpDevice_GetMemoryCapacity(dev, 0, ffi.NULL, ffi.NULL),
                          "INVALID_ARGUMENT", "two NULL outputs")
    cpu = []
    for mem_type in (0, 5):  # OrtDeviceMemoryType DEFAULT, HOST_ACCESSIBLE
        for outs in ((first, second), (first, ffi.NULL), (ffi.NULL, second)):
            st = ctx.status(a.EpDevice_GetMemoryCapacity(dev, mem_type, *outs))
            if st is None:
                raise Fail(f"CPU device, memory type {mem_type}: OK with outputs "
                           f"{first[0]}, {second[0]} (a new behaviour: record it)")
            cpu.append(f"{code_name(st[0])}: {short(st[1], 80)}")
    if any(not c.startswith("NOT_IMPLEMENTED") for c in cpu) or (first[0], second[0]) != (
            12345, 12345):
        raise Fail(f"CPU device: {sorted(set(cpu))}; outputs {first[0]}, {second[0]}")
    return f"NULL device: {null_dev}; NULL outputs: {null_outs}; CPU device: {cpu[0]}"


@check("ver.table-length", "ortc declares no more OrtApi slots than the library's table holds: "
       "the interop table (GetInteropApi, API 24), a static table the library lays out after "
       "OrtApi, starts at or after the end of the slots ortc declares up to the library's "
       "API version; the gap is not always zero, so this bounds the table's length.",
       OBSERVED, slots=("GetInteropApi",))
def table_length(ctx: Ctx) -> str:
    from ..._slots import SLOTS

    a, ffi = ctx.api, ctx.ffi
    if ctx.api_version != _library_api(ctx):
        raise Fail(f"ortc negotiated API {ctx.api_version}, the library offers "
                   f"{_library_api(ctx)}: the table end cannot be compared")
    start = int(ffi.cast("uintptr_t", a.table))
    interop = int(ffi.cast("uintptr_t", a.GetInteropApi()))
    room, rest = divmod(interop - start, ffi.sizeof("void*"))
    declared = sum(1 for _, since in SLOTS if since <= ctx.api_version)
    if interop <= start or rest or room < declared:
        raise Fail(f"the interop table starts {interop - start} bytes after OrtApi "
                   f"(room for {room} slots); ortc declares {declared} up to API "
                   f"{ctx.api_version}")
    return (f"{declared} slots declared up to API {ctx.api_version}; the interop table "
            f"follows {room - declared} pointer(s) later")


def _library_api(ctx: Ctx) -> int:
    base = ctx.api.base
    return int(ctx.c_string(base.GetVersionString()).split(".")[1])
