"""Run: the error codes for wrong feeds, pre-allocated outputs, RunOptions."""

from __future__ import annotations

import struct
from typing import Any

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Fail, Known, check

RUN_DOC = "https://onnxruntime.ai/docs/api/c/struct_ort_api.html (Run)"


def _add(ctx: Ctx, shape: tuple[Any, ...] = (2,)) -> Any:
    return ctx.session(models.add_model(shape))


def _expect(ctx: Ctx, sess: Any, feeds: dict[str, Any], outputs: list[str],
            expected: str | tuple[str, ...]) -> str:
    _, err = ctx.try_run(sess, feeds, outputs)
    if err is None:
        raise Fail("Run succeeded")
    names = (expected,) if isinstance(expected, str) else expected
    got = code_name(err[0])
    if got not in names:
        raise Fail(f"expected {'/'.join(names)}, got {got}: {short(err[1], 300)}")
    return f"{got}: {short(err[1])}"


@check("run.unknown-input-name", "Run with an input name the model does not have fails with "
       "INVALID_ARGUMENT.", RUN_DOC)
def unknown_input(ctx: Ctx) -> str:
    sess = _add(ctx)
    x = ctx.floats([1, 2])
    return _expect(ctx, sess, {"x": x, "y": x, "nope": x}, ["z"], "INVALID_ARGUMENT")


@check("run.unknown-output-name", "Run asking for an output the model does not have fails "
       "with INVALID_ARGUMENT.", RUN_DOC)
def unknown_output(ctx: Ctx) -> str:
    sess = _add(ctx)
    x = ctx.floats([1, 2])
    return _expect(ctx, sess, {"x": x, "y": x}, ["nope"], "INVALID_ARGUMENT")


@check("run.wrong-element-type", "Run with an int64 tensor for a float input fails with "
       "INVALID_ARGUMENT.", RUN_DOC)
def wrong_type(ctx: Ctx) -> str:
    sess = _add(ctx)
    x = ctx.floats([1, 2])
    i, _ = ctx.tensor(models.INT64, [2], struct.pack("<2q", 1, 2))
    return _expect(ctx, sess, {"x": x, "y": i}, ["z"], "INVALID_ARGUMENT")


@check("run.wrong-rank", "Run with a tensor of the wrong rank fails with INVALID_ARGUMENT.",
       RUN_DOC)
def wrong_rank(ctx: Ctx) -> str:
    sess = _add(ctx)
    x = ctx.floats([1, 2])
    y = ctx.floats([1, 2], [1, 2])
    return _expect(ctx, sess, {"x": x, "y": y}, ["z"], "INVALID_ARGUMENT")


@check("run.wrong-dim", "Run with a tensor whose fixed dimension differs fails with "
       "INVALID_ARGUMENT.", RUN_DOC)
def wrong_dim(ctx: Ctx) -> str:
    sess = _add(ctx)
    x = ctx.floats([1, 2])
    y = ctx.floats([1, 2, 3])
    return _expect(ctx, sess, {"x": x, "y": y}, ["z"], "INVALID_ARGUMENT")


@check("run.missing-input", "Run without a required input fails with INVALID_ARGUMENT.",
       RUN_DOC)
def missing_input(ctx: Ctx) -> str:
    sess = _add(ctx)
    _, err = ctx.try_run(sess, {"x": ctx.floats([1, 2])}, ["z"])
    if err is None:
        raise Fail("Run succeeded without input y")
    got = code_name(err[0])
    if got == "INVALID_ARGUMENT":
        return f"{got}: {short(err[1])}"
    if "Missing Input" in err[1]:
        raise Known(f"not validated up front: the Add kernel fails at run time with {got} "
                    f"('Missing Input: y')")
    raise Fail(f"{got}: {short(err[1], 300)}")


@check("run.duplicate-input", "Run given the same input name twice fails with an error status.",
       "none")
def duplicate_input(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = _add(ctx)
    x = ctx.floats([1, 2])
    names = [ctx.keep(ffi.new("char[]", n)) for n in (b"x", b"x", b"y")]
    out = ctx.keep(ffi.new("char[]", b"z"))
    res = ffi.new("OrtValue*[1]")
    err = ctx.status(a.Run(sess, ffi.NULL, ffi.new("char*[]", names),
                           ffi.new("OrtValue*[]", [x, x, x]), 3, ffi.new("char*[]", [out]),
                           1, res))
    if err is None:
        a.ReleaseValue(res[0])
        raise Known("accepted a duplicated input name")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("run.no-outputs", "Run asking for zero outputs fails with INVALID_ARGUMENT.", RUN_DOC)
def no_outputs(ctx: Ctx) -> str:
    sess = _add(ctx)
    x = ctx.floats([1, 2])
    _, err = ctx.try_run(sess, {"x": x, "y": x}, [])
    if err is None:
        raise Known("Run with no outputs succeeded (nothing computed is returned)")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("run.kernel-shape-error", "A shape clash found only by a kernel at run time (Add of "
       "[2] and [3] over symbolic dims) fails with RUNTIME_EXCEPTION, the code of a failing "
       "kernel.", "none")
def kernel_error(ctx: Ctx) -> str:
    t1 = models.tensor_type(models.FLOAT, ("a",))
    t2 = models.tensor_type(models.FLOAT, ("b",))
    m = models.model([models.node("Add", ["x", "y"], ["z"])],
                     [models.value_info("x", t1), models.value_info("y", t2)],
                     [models.value_info("z", models.tensor_type(models.FLOAT, None))])
    sess = ctx.session(m)
    _, err = ctx.try_run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([1, 2, 3])}, ["z"])
    if err is None:
        raise Fail("Run succeeded")
    if code_name(err[0]) != "RUNTIME_EXCEPTION":
        raise Known(f"reported as {code_name(err[0])}: {short(err[1], 100)}")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("run.null-input-value", "Run with a NULL OrtValue among the inputs fails with an error "
       "status instead of crashing.", "none", crash=True)
def null_input(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = _add(ctx)
    x = ctx.floats([1, 2])
    names = [ctx.keep(ffi.new("char[]", n)) for n in (b"x", b"y")]
    out = ctx.keep(ffi.new("char[]", b"z"))
    res = ffi.new("OrtValue*[1]")
    ctx.step("calling Run with a NULL input value")
    err = ctx.status(a.Run(sess, ffi.NULL, ffi.new("char*[]", names),
                           ffi.new("OrtValue*[]", [x, ffi.NULL]), 2,
                           ffi.new("char*[]", [out]), 1, res))
    if err is None:
        raise Fail("Run succeeded with a NULL input")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("run.preallocated-output", "A caller-allocated output tensor passed to Run is filled in "
       "place and returned as the same OrtValue.", RUN_DOC)
def preallocated(ctx: Ctx) -> str:
    sess = _add(ctx)
    out, buf = ctx.tensor(models.FLOAT, [2], bytes(8))
    got, err = ctx.try_run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])}, ["z"],
                           preallocated=[out])
    if err:
        raise Fail(f"{code_name(err[0])}: {err[1][:200]}")
    if got[0] != out:
        raise Fail("Run replaced the pre-allocated value")
    vals = struct.unpack("<2f", bytes(ctx.ffi.buffer(buf, 8)))
    if vals != (4.0, 6.0):
        raise Fail(f"buffer holds {vals}")
    return "written into the caller's buffer"


@check("run.preallocated-wrong-shape", "A pre-allocated output of the wrong shape makes Run "
       "fail with an error status.", "none")
def preallocated_wrong(ctx: Ctx) -> str:
    sess = _add(ctx)
    out, _ = ctx.tensor(models.FLOAT, [3], bytes(12))
    _, err = ctx.try_run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])}, ["z"],
                         preallocated=[out])
    if err is None:
        raise Known("accepted an output of shape [3] for a [2] result")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("run.terminate-flag", "A Run whose RunOptions has the terminate flag set fails at once; "
       "after RunOptionsUnsetTerminate the same options run normally.",
       "onnxruntime_c_api.h RunOptionsSetTerminate")
def terminate_flag(ctx: Ctx) -> str:
    a = ctx.api
    sess = _add(ctx)
    ro = ctx.out(a.CreateRunOptions, "OrtRunOptions*")
    ctx.defer(a.ReleaseRunOptions, ro)
    ctx.ok(a.RunOptionsSetTerminate(ro))
    feeds = {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])}
    _, err = ctx.try_run(sess, feeds, ["z"], ro)
    if err is None:
        raise Fail("Run succeeded with the terminate flag set")
    ctx.ok(a.RunOptionsUnsetTerminate(ro))
    got = ctx.read_floats(ctx.run(sess, feeds, ["z"], ro)[0])
    if got != [4.0, 6.0]:
        raise Fail(f"after unset: {got}")
    return f"terminated with {code_name(err[0])}: {short(err[1], 80)}; works after unset"


@check("run.run-options-roundtrip", "RunOptions tag, log severity and verbosity read back as "
       "set; a run config entry reads back with GetRunConfigEntry.",
       "onnxruntime_c_api.h RunOptions*", slots=("AddRunConfigEntry",))
def run_options(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    ro = ctx.out(a.CreateRunOptions, "OrtRunOptions*")
    ctx.defer(a.ReleaseRunOptions, ro)
    ctx.ok(a.RunOptionsSetRunTag(ro, b"tag-1"))
    ctx.ok(a.RunOptionsSetRunLogSeverityLevel(ro, 3))
    ctx.ok(a.RunOptionsSetRunLogVerbosityLevel(ro, 2))
    tag = ffi.new("char**")
    ctx.ok(a.RunOptionsGetRunTag(ro, tag))
    sev, verb = ffi.new("int*"), ffi.new("int*")
    ctx.ok(a.RunOptionsGetRunLogSeverityLevel(ro, sev))
    ctx.ok(a.RunOptionsGetRunLogVerbosityLevel(ro, verb))
    ctx.ok(a.AddRunConfigEntry(ro, b"ortc.key", b"value"))
    got = (ctx.c_string(tag[0]), sev[0], verb[0])
    if got != ("tag-1", 3, 2):
        raise Fail(f"got {got}")
    detail = "tag, severity, verbosity round-trip"
    if ctx.has("GetRunConfigEntry"):
        v = ctx.c_string(a.GetRunConfigEntry(ro, b"ortc.key"))
        missing = a.GetRunConfigEntry(ro, b"ortc.nope")
        if v != "value" or missing != ffi.NULL:
            raise Fail(f"config entry {v!r}, missing -> {missing}")
        detail += "; config entry too"
    sess = _add(ctx)
    ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])}, ["z"], ro)
    return detail


@check("run.run-profiling", "RunOptionsEnableProfiling (API 25) profiles a single Run into a "
       "file.", "onnxruntime_c_api.h RunOptionsEnableProfiling",
       slots=("RunOptionsEnableProfiling", "RunOptionsDisableProfiling"))
def run_profiling(ctx: Ctx) -> str:
    import glob
    import os
    a = ctx.api
    d = ctx.tmpdir()
    ro = ctx.out(a.CreateRunOptions, "OrtRunOptions*")
    ctx.defer(a.ReleaseRunOptions, ro)
    ctx.ok(a.RunOptionsEnableProfiling(ro, os.path.join(d, "run").encode()))
    sess = _add(ctx)
    ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])}, ["z"], ro)
    ctx.ok(a.RunOptionsDisableProfiling(ro))
    files = glob.glob(os.path.join(d, "*"))
    if not files:
        raise Known("no profile file written for the run")
    return ", ".join(os.path.basename(f) for f in files)


@check("run.output-kept-after-input-release", "Run outputs are independent values: releasing "
       "the inputs and running again does not change an earlier output.", "none")
def outputs_independent(ctx: Ctx) -> str:
    a = ctx.api
    sess = _add(ctx)
    x = ctx.floats([1, 2], release=False)
    y = ctx.floats([3, 4], release=False)
    first = ctx.run(sess, {"x": x, "y": y}, ["z"])[0]
    a.ReleaseValue(x)
    a.ReleaseValue(y)
    ctx.run(sess, {"x": ctx.floats([100, 100]), "y": ctx.floats([100, 100])}, ["z"])
    got = ctx.read_floats(first)
    if got != [4.0, 6.0]:
        raise Fail(f"first output now {got}")
    return "unchanged"
