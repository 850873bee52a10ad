"""Shared claims: slots the thread rules call shared, called from several threads at once.

A slot whose verdict is "shared" (it only reads the handles it takes, or touches no object) may
overlap other such calls on the same objects. A check that calls it on one thread shows what it
does, not that calls may overlap: each check here starts its threads together (a barrier) on
objects made by the check's own thread, and compares every result with the serial one. Sizes
are small; a race these tries miss proves nothing, and the details say how many calls ran.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from .. import models
from .._capi import WAIT, Ctx, code_name, mlp_input, short, together
from .._registry import Fail, check

C_API = "https://onnxruntime.ai/docs/api/c/struct_ort_api.html"


def _verdict(errors: list[str], wrong: list[str]) -> None:
    if errors or wrong:
        raise Fail(f"errors {errors[:2]}; wrong {wrong[:2]}")


@check("shared.process-calls", "Calls that read no object or only a status, from four threads "
       "at once: GetAvailableProviders/ReleaseAvailableProviders, GetBuildInfoString, the "
       "sub-table getters (GetModelEditorApi, GetCompileApi, GetEpApi, GetTrainingApi, ...), CreateStatus with "
       "its getters and release, and the code and message of statuses made on the check's "
       "thread; every answer is the serial one.",
       f"{C_API} (a status carries an immutable code and message)", crosses=("OrtStatus",))
def process_calls(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    tables = [t for t in ("GetModelEditorApi", "GetCompileApi", "GetEpApi", "GetInteropApi",
                          "GetModelPackageApi") if ctx.has(t)]
    training = ctx.has("GetTrainingApi")
    build = ctx.has("GetBuildInfoString")

    def providers() -> list[str]:
        arr, n = ffi.new("char***"), ffi.new("int*")
        ctx.ok(a.GetAvailableProviders(arr, n), "GetAvailableProviders")
        try:
            return [ctx.c_string(arr[0][i]) for i in range(n[0])]
        finally:
            ctx.ok(a.ReleaseAvailableProviders(arr[0], n[0]), "ReleaseAvailableProviders")

    def answers() -> tuple[Any, ...]:
        return (providers(), ctx.c_string(a.GetBuildInfoString()) if build else "",
                [int(ffi.cast("uintptr_t", getattr(a, t)())) for t in tables],
                int(ffi.cast("uintptr_t", a.GetTrainingApi(a.version))) if training else 0)

    want = answers()
    made = [a.CreateStatus(1 + i % 6, f"shared status {i}".encode()) for i in range(8)]
    for st in made:
        ctx.defer(a.ReleaseStatus, st)
    wrong: list[str] = []
    rounds = 30

    def work(i: int) -> None:
        for r in range(rounds):
            got = answers()
            if got != want:
                wrong.append(f"thread {i}: {repr(got)[:100]}")
            for k, st in enumerate(made):  # one status read by every thread at once
                seen = (int(a.GetErrorCode(st)), ctx.c_string(a.GetErrorMessage(st)))
                if seen != (1 + k % 6, f"shared status {k}"):
                    wrong.append(f"thread {i}: status {k} read {seen}")
            own = a.CreateStatus(1 + r % 6, f"thread {i} round {r}".encode())
            try:
                seen = (int(a.GetErrorCode(own)), ctx.c_string(a.GetErrorMessage(own)))
            finally:
                a.ReleaseStatus(own)
            if seen != (1 + r % 6, f"thread {i} round {r}"):
                wrong.append(f"thread {i}: own status read {seen}")

    errors, _ = together(4, work)
    _verdict(errors, wrong)
    return (f"4 threads x {rounds} rounds: providers {want[0]}, build info, "
            f"{len(tables) + training} "
            f"sub-table getters, 8 shared statuses read and a status created each round: "
            "every answer as on one thread")


@check("shared.env-reads", "Slots that only read the env, from four threads at once: "
       "GetEpDevices (and the EP device getters), GetNumHardwareDevices/GetHardwareDevices, "
       "GetSharedAllocator, EnableTelemetryEvents/DisableTelemetryEvents and "
       "SetLanguageProjection; each thread also appends the CPU EP device found on the check's "
       "thread to its own options and runs a session; every answer is the serial one.",
       f"{C_API} (the env is taken as a const OrtEnv*; EP and hardware devices are const and "
       "owned by the env)", slots=("GetEpDevices",), crosses=("OrtEnv", "OrtEpDevice"))
def env_reads(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    env = ctx.env
    hardware = ctx.has("GetNumHardwareDevices", "GetHardwareDevices")
    shared_alloc = ctx.has("GetSharedAllocator")

    def devices() -> list[Any]:
        arr, n = ffi.new("const OrtEpDevice* const**"), ffi.new("size_t*")
        ctx.ok(a.GetEpDevices(env, arr, n), "GetEpDevices")
        return [arr[0][i] for i in range(n[0])]

    def answers() -> tuple[Any, ...]:
        eps = [(ctx.c_string(a.EpDevice_EpName(d)), ctx.c_string(a.EpDevice_EpVendor(d)))
               for d in devices()]
        hw: list[int] = []
        if hardware:
            n = ffi.new("size_t*")
            ctx.ok(a.GetNumHardwareDevices(env, n), "GetNumHardwareDevices")
            arr = ffi.new("const OrtHardwareDevice*[]", max(n[0], 1))
            ctx.ok(a.GetHardwareDevices(env, arr, n[0]), "GetHardwareDevices")
            hw = [int(a.HardwareDevice_Type(arr[i])) for i in range(n[0])]
        alloc = 0
        if shared_alloc:
            box = ffi.new("OrtAllocator**")
            ctx.ok(a.GetSharedAllocator(env, ctx.cpu_info, box), "GetSharedAllocator")
            alloc = int(ffi.cast("uintptr_t", box[0]))
        return eps, hw, alloc

    want = answers()
    cpu = [d for d in devices() if ctx.c_string(a.EpDevice_EpName(d)) == "CPUExecutionProvider"]
    model = models.add_model((2,))
    wrong: list[str] = []
    rounds = 20

    def work(i: int) -> None:
        for r in range(rounds):
            got = answers()
            if got != want:
                wrong.append(f"thread {i}: {repr(got)[:100]}")
            a.DisableTelemetryEvents(env) if r % 2 else a.EnableTelemetryEvents(env)
            ctx.ok(a.SetLanguageProjection(env, 0), "SetLanguageProjection")
        if cpu:
            so = ctx.options()
            ctx.ok(a.SessionOptionsAppendExecutionProvider_V2(
                so, env, ffi.new("const OrtEpDevice*[]", cpu[:1]), 1, ffi.NULL, ffi.NULL, 0),
                "SessionOptionsAppendExecutionProvider_V2")
            sess = ctx.session(model, so)
            z = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([i, 1]),
                                               "y": ctx.floats([1, 1])}, ["z"])[0])
            if z != [i + 1.0, 2.0]:
                wrong.append(f"thread {i}: z = {z}")

    errors, _ = together(4, work)
    _verdict(errors, wrong)
    eps, hw, alloc = want
    return (f"4 threads x {rounds} rounds: {len(eps)} EP devices, "
            + (f"{len(hw)} hardware devices, " if hardware else "")
            + ("the shared CPU allocator, " if alloc else "")
            + "telemetry toggles, language projection: all as on one thread"
            + ("; each thread's session on the CPU EP device runs" if cpu
               else "; no CPU EP device listed, nothing appended"))


@check("shared.create-value", "CreateValue from four threads at once, each making sequences of "
       "the same three tensors made on the check's thread: every sequence reads back the "
       "elements.", f"{C_API} (CreateValue takes the elements as const OrtValue*)",
       slots=("CreateValue",), crosses=("OrtValue",))
def create_value(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    elems = [ctx.floats([k, k + 0.5]) for k in range(3)]
    arr = ffi.new("OrtValue*[]", elems)
    wrong: list[str] = []
    rounds = 50

    def work(i: int) -> None:
        for r in range(rounds):
            seq = ctx.out(a.CreateValue, "OrtValue*", arr, 3, 2)  # ONNX_TYPE_SEQUENCE
            try:
                for k in range(3):
                    got = ctx.out(a.GetValue, "OrtValue*", seq, k, ctx.allocator)
                    try:
                        vals = ctx.read_floats(got)
                    finally:
                        a.ReleaseValue(got)
                    if vals != [k, k + 0.5]:
                        wrong.append(f"thread {i} round {r}: element {k} = {vals}")
            finally:
                a.ReleaseValue(seq)

    errors, _ = together(4, work)
    _verdict(errors, wrong)
    return f"4 threads x {rounds} sequences of one set of elements: every element reads back"


@check("shared.create-allocator", "CreateAllocator on one session from four threads at once, "
       "each allocating, freeing and releasing its allocator; then the session runs.",
       f"{C_API} (CreateAllocator takes a const OrtSession*)", slots=("CreateAllocator",),
       crosses=("OrtSession", "OrtMemoryInfo"))
def create_allocator(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.add_model((2,)))
    info = ctx.cpu_info
    rounds = 50

    def work(i: int) -> None:
        p = ffi.new("void**")
        for _ in range(rounds):
            alloc = ctx.out(a.CreateAllocator, "OrtAllocator*", sess, info)
            try:
                ctx.ok(a.AllocatorAlloc(alloc, 256, p), "AllocatorAlloc")
                ffi.cast("uint8_t*", p[0])[255] = i
                ctx.ok(a.AllocatorFree(alloc, p[0]), "AllocatorFree")
            finally:
                a.ReleaseAllocator(alloc)

    errors, _ = together(4, work)
    _verdict(errors, [])
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if got != [4.0, 6.0]:
        raise Fail(f"the session computes {got} afterwards")
    return f"4 threads x {rounds} CreateAllocator/Alloc/Free/Release on one session at once"


@check("shared.create-session-variants", "Eight threads at once create sessions of one model "
       "with one env and one SessionOptions through all four creation slots (CreateSession from "
       "a file, CreateSessionFromArray, and both WithPrepackedWeightsContainer variants sharing "
       "one container); every session computes the serial result.",
       f"{C_API} (the creation slots take const env and options; a prepacked-weights container "
       "is meant to be shared by sessions)",
       slots=("CreateSessionWithPrepackedWeightsContainer",
              "CreateSessionFromArrayWithPrepackedWeightsContainer"),
       crosses=("OrtEnv", "OrtSessionOptions", "OrtPrepackedWeightsContainer"))
def create_session_variants(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    model = models.mlp_model()
    path = os.path.join(ctx.tmpdir(), "mlp.onnx")
    with open(path, "wb") as f:
        f.write(model)
    so = ctx.options()
    box = ffi.new("OrtPrepackedWeightsContainer**")
    ctx.ok(a.CreatePrepackedWeightsContainer(box), "CreatePrepackedWeightsContainer")
    container = box[0]
    x = ctx.floats(mlp_input(3), [4, 32])
    ref = ctx.session(model, so)
    want = ctx.read_floats(ctx.run(ref, {"x": x}, ["y"])[0])
    buf = ctx.keep(ffi.from_buffer(model))
    cpath = path.encode()
    sessions: list[Any] = []
    wrong: list[str] = []

    def create(i: int) -> None:
        out = ffi.new("OrtSession**")
        kind = i % 4
        if kind == 0:
            st = a.CreateSession(ctx.env, cpath, so, out)
        elif kind == 1:
            st = a.CreateSessionFromArray(ctx.env, buf, len(model), so, out)
        elif kind == 2:
            st = a.CreateSessionWithPrepackedWeightsContainer(ctx.env, cpath, so, container,
                                                              out)
        else:
            st = a.CreateSessionFromArrayWithPrepackedWeightsContainer(
                ctx.env, buf, len(model), so, container, out)
        err = ctx.status(st)
        if err:
            raise Fail(f"variant {kind}: {code_name(err[0])}: {short(err[1])}")
        sessions.append(out[0])
        got = ctx.read_floats(ctx.run(out[0], {"x": x}, ["y"])[0])
        if got != want:
            wrong.append(f"variant {kind}: differs from the serial result")

    try:
        errors, _ = together(8, create)
    finally:
        for s in sessions:
            a.ReleaseSession(s)
        a.ReleasePrepackedWeightsContainer(container)  # after every session using it
    _verdict(errors, wrong)
    return (f"{len(sessions)} sessions created at once, two through each slot (both prepacked "
            "variants on one container); every result equals the serial one")


@check("shared.load-cancel-from-another-thread", "SessionOptionsSetLoadCancellationFlag called "
       "from another thread while CreateSession is running with those options (from inside "
       "the session's first log message) makes that creation fail as canceled; cleared, the "
       "same options create a working session.",
       f"{C_API} (the flag is meant to be set from another thread while a session is created)",
       slots=("SessionOptionsSetLoadCancellationFlag", "SetUserLoggingFunction"),
       crosses=("OrtSessionOptions",))
def load_cancel_from_another_thread(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    so = ctx.options()
    me = threading.get_native_id()
    fired: list[Any] = []

    def set_flag() -> None:
        fired.append((threading.get_native_id(),
                      ctx.status(a.SessionOptionsSetLoadCancellationFlag(so, True))))

    def log(_p: Any, _sev: int, _cat: Any, _id: Any, _loc: Any, _msg: Any) -> None:
        if not fired and threading.get_native_id() == me:
            t = threading.Thread(target=set_flag, daemon=True)
            t.start()
            t.join(WAIT)  # bounded: a setter that hangs leaves ``fired`` empty, a failure below

    cb = ctx.keep(ffi.callback("OrtLoggingFunction", log))
    ctx.ok(a.SetUserLoggingFunction(so, cb, ffi.NULL), "SetUserLoggingFunction")
    ctx.ok(a.SetSessionLogSeverityLevel(so, 0), "SetSessionLogSeverityLevel")
    sess, err = ctx.try_session(models.mlp_model(), so)
    if sess != ffi.NULL:
        a.ReleaseSession(sess)
    if not fired:
        raise Fail("no log message arrived during the creation: the flag was never set")
    setter, set_err = fired[0]
    if set_err or setter == me:
        raise Fail(f"setting the flag from thread {setter}: {set_err}")
    if not err:
        raise Fail("the creation succeeded although the flag was set during it")
    ctx.ok(a.SessionOptionsSetLoadCancellationFlag(so, False), "clearing the flag")
    again = ctx.session(models.add_model((2,)), so)
    got = ctx.read_floats(ctx.run(again, {"x": ctx.floats([1, 2]), "y": ctx.floats([1, 1])},
                                  ["z"])[0])
    if got != [2.0, 3.0]:
        raise Fail(f"after clearing: z = {got}")
    return (f"flag set from another thread during the creation: {code_name(err[0])}: "
            f"{short(err[1], 80)}; cleared: the next creation runs")
