"""IoBinding: binding, running, reading bound outputs; what the binding keeps alive."""

from __future__ import annotations

import struct

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Fail, Known, check

BINDING_DOC = "https://onnxruntime.ai/docs/performance/tune-performance/iobinding.html"
SLOTS = ("CreateIoBinding", "RunWithBinding", "GetBoundOutputValues")


@check("binding.run-and-read", "Inputs bound by name and an output bound to CPU memory run with "
       "RunWithBinding; GetBoundOutputNames/Values return the output.", BINDING_DOC, slots=SLOTS)
def run_and_read(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    b = ctx.out(a.CreateIoBinding, "OrtIoBinding*", sess)
    ctx.defer(a.ReleaseIoBinding, b)
    ctx.ok(a.BindInput(b, b"x", ctx.floats([1, 2])))
    ctx.ok(a.BindInput(b, b"y", ctx.floats([3, 4])))
    ctx.ok(a.BindOutputToDevice(b, b"z", ctx.cpu_info))
    if ctx.has("SynchronizeBoundInputs"):
        ctx.ok(a.SynchronizeBoundInputs(b))
    ctx.ok(a.RunWithBinding(sess, ffi.NULL, b))
    if ctx.has("SynchronizeBoundOutputs"):
        ctx.ok(a.SynchronizeBoundOutputs(b))
    buf, lens, count = ffi.new("char**"), ffi.new("size_t**"), ffi.new("size_t*")
    ctx.ok(a.GetBoundOutputNames(b, ctx.allocator, buf, lens, count))
    name = ffi.buffer(buf[0], lens[0][0])[:].decode()
    ctx.ok(a.AllocatorFree(ctx.allocator, buf[0]))
    ctx.ok(a.AllocatorFree(ctx.allocator, lens[0]))
    vals, n = ffi.new("OrtValue***"), ffi.new("size_t*")
    ctx.ok(a.GetBoundOutputValues(b, ctx.allocator, vals, n))
    got = ctx.read_floats(vals[0][0])
    for i in range(n[0]):
        a.ReleaseValue(vals[0][i])
    ctx.ok(a.AllocatorFree(ctx.allocator, vals[0]))
    a.ClearBoundInputs(b)
    a.ClearBoundOutputs(b)
    if (name, n[0], got) != ("z", 1, [4.0, 6.0]):
        raise Fail(f"bound outputs {name!r} x{n[0]}: {got}")
    return "z = [4, 6]; names and values read; cleared"


@check("binding.keeps-bound-value", "A bound input OrtValue may be released after BindInput: "
       "the binding keeps its own reference.", "observed by this check", slots=SLOTS)
def keeps_value(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    b = ctx.out(a.CreateIoBinding, "OrtIoBinding*", sess)
    ctx.defer(a.ReleaseIoBinding, b)
    x = ctx.floats([1, 2], release=False)
    ctx.ok(a.BindInput(b, b"x", x))
    a.ReleaseValue(x)
    ctx.ok(a.BindInput(b, b"y", ctx.floats([3, 4])))
    out, buf = ctx.tensor(1, [2], bytes(8))
    ctx.ok(a.BindOutput(b, b"z", out))
    ctx.ok(a.RunWithBinding(sess, ffi.NULL, b))
    got = struct.unpack("<2f", bytes(ffi.buffer(buf, 8)))
    if got != (4.0, 6.0):
        raise Fail(f"pre-bound output holds {got}")
    return "released input still used; output written into the caller's buffer"


@check("binding.unknown-name", "BindInput with a name the model lacks fails with an error "
       "status (at bind time or at run time).", "none", slots=SLOTS)
def unknown_name(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    b = ctx.out(a.CreateIoBinding, "OrtIoBinding*", sess)
    ctx.defer(a.ReleaseIoBinding, b)
    err = ctx.status(a.BindInput(b, b"nope", ctx.floats([1, 2])))
    if err:
        return f"at bind: {code_name(err[0])}: {short(err[1])}"
    ctx.ok(a.BindOutputToDevice(b, b"z", ctx.cpu_info))
    err = ctx.status(a.RunWithBinding(sess, ffi.NULL, b))
    if err is None:
        raise Known("neither BindInput nor RunWithBinding refused the unknown name")
    return f"at run: {code_name(err[0])}: {short(err[1])}"


@check("binding.bound-output-written-by-every-run", "An OrtValue bound as an output "
       "(BindOutput) is written in place by every RunWithBinding, not only the first: it is a "
       "write target for as long as it stays bound.", BINDING_DOC, slots=SLOTS)
def output_written_by_every_run(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    b = ctx.out(a.CreateIoBinding, "OrtIoBinding*", sess)
    ctx.defer(a.ReleaseIoBinding, b)
    out, buf = ctx.tensor(1, [2], bytes(8))
    ctx.ok(a.BindOutput(b, b"z", out))
    seen = []
    for xs in ([1, 2], [10, 20]):
        ctx.ok(a.BindInput(b, b"x", ctx.floats(xs)))
        ctx.ok(a.BindInput(b, b"y", ctx.floats([3, 4])))
        ctx.ok(a.RunWithBinding(sess, ffi.NULL, b))
        seen.append(struct.unpack("<2f", bytes(ffi.buffer(buf, 8))))
    if seen != [(4.0, 6.0), (13.0, 24.0)]:
        raise Fail(f"the bound output's buffer held {seen} after the two runs")
    return "the caller's buffer held [4, 6], then [13, 24]: each run wrote it"
