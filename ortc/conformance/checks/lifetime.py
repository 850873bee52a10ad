"""Lifetimes across a parent's release, each in a child process (several of them crash).

Each check poisons the memory freed by the release (:meth:`Ctx.poison_freed_memory`) before it
uses what outlived its parent: a use after free then reads the same bytes on every run. Without
that, ``life.binding-after-session-release`` on 1.16.2 returned an error, crashed or spun
forever from one run to the next, by where address randomisation had put the heap.
"""

from __future__ import annotations

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Fail, check


def _poisoned(ctx: Ctx) -> str:
    """Poison what is freed from now on; the words the step and the detail say it with."""
    return ("freed memory poisoned but for small blocks" if ctx.poison_freed_memory()
            else "freed memory not poisoned (no M_PERTURB in this C library)")


@check("life.output-after-session-release", "A Run output stays readable, unchanged, after "
       "its session is released (CPU provider).",
       "observed by this check (CPU outputs hold their allocator); not promised by the docs",
       crash=True)
def output_after_release(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.add_model((2,)), release=False)
    out = ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])}, ["z"])[0]
    poison = _poisoned(ctx)
    a.ReleaseSession(sess)
    ctx.step(f"session released ({poison}); reading the output")
    got = ctx.read_floats(out)
    if got != [4.0, 6.0]:
        raise Fail(f"output now {got} ({poison})")
    return f"readable and unchanged ({poison})"


@check("life.binding-after-session-release", "Using an IoBinding after its session is "
       "released does not crash the process.",
       "observed by this check; the binding holds a reference into the session",
       crash=True, slots=("CreateIoBinding",))
def binding_after_release(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.chain_model(24, 256), release=False)
    b = ctx.out(a.CreateIoBinding, "OrtIoBinding*", sess)
    x = ctx.floats([0.1] * (256 * 256), [256, 256])
    ctx.ok(a.BindInput(b, b"x", x))
    poison = _poisoned(ctx)
    a.ReleaseSession(sess)
    ctx.step(f"session released ({poison}); BindInput('x') again on the orphaned binding")
    err = ctx.status(a.BindInput(b, b"x", x))
    ctx.step("BindInput returned; releasing the binding")
    a.ReleaseIoBinding(b)
    return (f"no crash ({poison})"
            + (f": {code_name(err[0])}: {short(err[1], 80)}" if err else ""))


@check("life.allocator-after-session-release", "Allocating from a session allocator "
       "(CreateAllocator) after the session is released does not crash the process.",
       "onnxruntime_c_api.h CreateAllocator (the allocator becomes invalid with the session)",
       crash=True, slots=("CreateAllocator",))
def allocator_after_release(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)), release=False)
    alloc = ctx.out(a.CreateAllocator, "OrtAllocator*", sess, ctx.cpu_info)
    poison = _poisoned(ctx)
    a.ReleaseSession(sess)
    ctx.step(f"session released ({poison}); AllocatorAlloc on its allocator")
    p = ffi.new("void**")
    err = ctx.status(a.AllocatorAlloc(alloc, 64, p))
    if err is None:
        ctx.step("allocated; freeing")
        ctx.ok(a.AllocatorFree(alloc, p[0]))
    ctx.step("releasing the allocator")
    a.ReleaseAllocator(alloc)
    return (f"no crash ({poison})"
            + (f": {code_name(err[0])}" if err else "; the allocation worked"))


@check("life.session-value-after-session-release", "A tensor allocated from a session "
       "allocator stays usable after the session and the allocator are released.",
       "onnxruntime_c_api.h CreateAllocator (allocations must go before the session)",
       crash=True, slots=("CreateAllocator",))
def value_after_release(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)), release=False)
    alloc = ctx.out(a.CreateAllocator, "OrtAllocator*", sess, ctx.cpu_info)
    dims = ffi.new("int64_t[]", [2])
    val = ctx.out(a.CreateTensorAsOrtValue, "OrtValue*", alloc, dims, 1, 1)
    p = ctx.out(a.GetTensorMutableData, "void*", val)
    ffi.cast("float*", p)[0] = 3.5
    poison = _poisoned(ctx)
    a.ReleaseAllocator(alloc)
    a.ReleaseSession(sess)
    ctx.step(f"session and allocator released ({poison}); reading, then releasing the value")
    got = ctx.read_floats(val)[0]
    a.ReleaseValue(val)
    if got != 3.5:
        raise Fail(f"read {got} ({poison})")
    return f"no crash ({poison}); value readable and released"
