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
from typing import Any, Callable

from .. import models
from .._capi import WAIT, Ctx, code_name, mlp_input, short, together
from .._registry import Fail, check

C_API = "https://onnxruntime.ai/docs/api/c/struct_ort_api.html"


def _verdict(errors: list[str], wrong: list[str]) -> None:
    if errors or wrong:
        raise Fail(f"errors {errors[:2]}; wrong {wrong[:2]}")


def _same_on_every_thread(answers: Callable[[], Any], want: Any, rounds: int) -> None:
    """Four threads at once ask ``answers()`` ``rounds`` times each: Fail unless every answer
    is ``want`` (the one-thread answer) and no call failed."""
    wrong: list[str] = []

    def work(i: int) -> None:
        for _ in range(rounds):
            got = answers()
            if got != want:
                wrong.append(f"thread {i}: {repr(got)[:120]}")

    errors, _ = together(4, work)
    _verdict(errors, wrong)


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
       "GetSharedAllocator, EnableTelemetryEvents/DisableTelemetryEvents, "
       "SetLanguageProjection and (API 32) EpDevice_GetMemoryCapacity of the CPU EP device "
       "(which reports NOT_IMPLEMENTED, its outputs untouched); each thread also appends the CPU EP device found on the check's "
       "thread to its own options and runs a session; every answer is the serial one.",
       f"{C_API} (the env is taken as a const OrtEnv*; EP and hardware devices are const and "
       "owned by the env)", slots=("GetEpDevices",), crosses=("OrtEnv", "OrtEpDevice"))
def env_reads(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    env = ctx.env
    hardware = ctx.has("GetNumHardwareDevices", "GetHardwareDevices")
    shared_alloc = ctx.has("GetSharedAllocator")
    capacity_slot = ctx.has("EpDevice_GetMemoryCapacity")

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
        capacity = ""
        if capacity_slot:
            for d in devices():
                if ctx.c_string(a.EpDevice_EpName(d)) != "CPUExecutionProvider":
                    continue
                total, free = ffi.new("size_t*", 7), ffi.new("size_t*", 7)
                st = ctx.status(a.EpDevice_GetMemoryCapacity(d, 0, total, free))
                capacity = (f"{code_name(st[0]) if st else 'OK'}, outputs "
                            f"{(total[0], free[0]) if st else 'set'}")
        alloc = 0
        if shared_alloc:
            box = ffi.new("OrtAllocator**")
            ctx.ok(a.GetSharedAllocator(env, ctx.cpu_info, box), "GetSharedAllocator")
            alloc = int(ffi.cast("uintptr_t", box[0]))
        return eps, hw, alloc, capacity

    want = answers()
    if capacity_slot and want[3] != "NOT_IMPLEMENTED, outputs (7, 7)":
        raise Fail(f"EpDevice_GetMemoryCapacity on the CPU EP device: {want[3]} (a new "
                   "behaviour: record it)")
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
    eps, hw, alloc, capacity = want
    return (f"4 threads x {rounds} rounds: {len(eps)} EP devices, "
            + (f"{len(hw)} hardware devices, " if hardware else "")
            + ("the shared CPU allocator, " if alloc else "")
            + (f"the CPU device's memory capacity ({capacity}), " if capacity else "")
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


@check("shared.session-options-getters", "The SessionOptions getters, from four threads at "
       "once on one options object set up on the check's thread: GetSessionOptionsConfigEntries "
       "(API 23: new pairs each call, released by the caller) and, from API 27, "
       "GetSessionExecutionMode and GetMemPatternEnabled; each answer is what the setters "
       "(AddSessionConfigEntry, SetSessionExecutionMode, DisableMemPattern) stored, as on one "
       "thread.", f"{C_API} (the getters take a const OrtSessionOptions*)",
       slots=("GetSessionOptionsConfigEntries",), crosses=("OrtSessionOptions",))
def session_options_getters(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    entries = {"session.intra_op.allow_spinning": "0", "ortc.check.key": "value",
               "session.disable_prepacking": "1"}
    so = ctx.options(config=entries)
    getters = ctx.has("GetSessionExecutionMode", "GetMemPatternEnabled")
    ctx.ok(a.SetSessionExecutionMode(so, 1), "SetSessionExecutionMode(PARALLEL)")
    ctx.ok(a.DisableMemPattern(so), "DisableMemPattern")

    def answers() -> tuple[Any, ...]:
        got = ctx.pairs(ctx.out(a.GetSessionOptionsConfigEntries, "OrtKeyValuePairs*", so),
                        release=True)
        mode, pattern = -1, -1
        if getters:
            box, flag = ffi.new("ExecutionMode*"), ffi.new("int*")
            ctx.ok(a.GetSessionExecutionMode(so, box), "GetSessionExecutionMode")
            ctx.ok(a.GetMemPatternEnabled(so, flag), "GetMemPatternEnabled")
            mode, pattern = int(box[0]), flag[0]
        return got, mode, pattern

    want = answers()
    if any(want[0].get(k) != v for k, v in entries.items()):
        raise Fail(f"config entries read {want[0]}, set {entries}")
    if getters and want[1:] != (1, 0):
        raise Fail(f"execution mode {want[1]} (set PARALLEL = 1), mem pattern {want[2]} "
                   "(disabled = 0)")
    rounds = 40
    _same_on_every_thread(answers, want, rounds)
    return (f"4 threads x {rounds} rounds: {len(want[0])} config entries"
            + (", execution mode PARALLEL, mem pattern off" if getters else
               " (no API 27 getters here)") + ": all as set and as on one thread")


@check("shared.memory-info-device", "MemoryInfoGetDeviceMemType and MemoryInfoGetVendorId (API "
       "23), from four threads at once on memory infos made on the check's thread: the CPU info "
       "reads DEFAULT memory and vendor 0, and infos made by CreateMemoryInfo_V2 read back the "
       "vendor id and memory type they were made with.",
       f"{C_API} (both getters take a const OrtMemoryInfo*)",
       slots=("CreateMemoryInfo_V2", "MemoryInfoGetDeviceMemType", "MemoryInfoGetVendorId"),
       crosses=("OrtMemoryInfo",))
def memory_info_device(ctx: Ctx) -> str:
    a = ctx.api
    infos = [ctx.cpu_info]
    made = ((b"ortc_gpu", 0), (b"ortc_gpu_host", 5))  # DEFAULT, HOST_ACCESSIBLE memory
    for name, mem_type in made:
        info = ctx.out(a.CreateMemoryInfo_V2, "OrtMemoryInfo*", name, 1, 0x10DE, 0, mem_type,
                       0, 0)  # a GPU device of vendor 0x10DE, device 0
        ctx.defer(a.ReleaseMemoryInfo, info)
        infos.append(info)

    def answers() -> list[tuple[int, int]]:
        return [(int(a.MemoryInfoGetDeviceMemType(i)), int(a.MemoryInfoGetVendorId(i)))
                for i in infos]

    want = answers()
    if want != [(0, 0), (0, 0x10DE), (5, 0x10DE)]:
        raise Fail(f"(memory type, vendor) read {want}")
    rounds = 200
    _same_on_every_thread(answers, want, rounds)
    return (f"4 threads x {rounds} rounds on 3 infos: (memory type, vendor) {want} as made, "
            "as on one thread")


@check("shared.compatibility-info", "GetCompatibilityInfoFromModel and "
       "GetCompatibilityInfoFromModelBytes (API 24), from four threads at once with one "
       "allocator, one model file and one byte buffer: each returns the model's "
       "ep_compatibility_info.<EP type> metadata string as a new string from the allocator "
       "(freed by the caller), or NULL when the model has none for that EP type; NULL "
       "arguments are refused with INVALID_ARGUMENT.",
       f"{C_API} (the model is read, the string comes from the caller's allocator)",
       slots=("GetCompatibilityInfoFromModel", "GetCompatibilityInfoFromModelBytes"),
       crosses=("OrtAllocator",))
def compatibility_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    t = models.tensor_type(models.FLOAT, (1,))
    model = models.model([models.node("Identity", ["x"], ["y"])], [models.value_info("x", t)],
                         [models.value_info("y", t)],
                         metadata={"ep_compatibility_info.CPUExecutionProvider": "cpu-v1",
                                   "ep_compatibility_info.OrtcTestEP": "test-v2"})
    path = os.path.join(ctx.tmpdir(), "compat.onnx")
    with open(path, "wb") as f:
        f.write(model)
    buf = ffi.from_buffer(model)
    al = ctx.allocator
    eps = (b"CPUExecutionProvider", b"OrtcTestEP", b"AbsentEP")

    def read(ep: bytes, from_file: bool) -> str | None:
        out = ffi.new("char**")
        if from_file:
            ctx.ok(a.GetCompatibilityInfoFromModel(path.encode(), ep, al, out),
                   "GetCompatibilityInfoFromModel")
        else:
            ctx.ok(a.GetCompatibilityInfoFromModelBytes(buf, len(model), ep, al, out),
                   "GetCompatibilityInfoFromModelBytes")
        if out[0] == ffi.NULL:
            return None
        try:
            return ctx.c_string(out[0])
        finally:
            ctx.ok(a.AllocatorFree(al, out[0]), "AllocatorFree")

    def answers() -> list[str | None]:
        return [read(ep, f) for ep in eps for f in (True, False)]

    want = answers()
    if want != ["cpu-v1", "cpu-v1", "test-v2", "test-v2", None, None]:
        raise Fail(f"read {want}")
    out = ffi.new("char**")
    refused = [ctx.error(a.GetCompatibilityInfoFromModel(path.encode(), ffi.NULL, al, out),
                         "INVALID_ARGUMENT", "NULL EP type"),
               ctx.error(a.GetCompatibilityInfoFromModelBytes(ffi.NULL, 0, eps[0], al, out),
                         "INVALID_ARGUMENT", "NULL bytes")]
    rounds = 10
    _same_on_every_thread(answers, want, rounds)
    return (f"4 threads x {rounds} rounds, file and bytes: {want[::2]} as on one thread; "
            f"NULL arguments: {refused[0]}")


@check("shared.selection-policy-create", "SessionOptionsSetEpSelectionPolicy (API 22) stores "
       "the policy in the options, read by each CreateSession: with each of the seven policies "
       "(DEFAULT to MIN_OVERALL_POWER, 0-6) a CPU build's session logs ep_selection_policy:<n> "
       "at creation and runs right on the CPU build; then four threads at once create "
       "and run sessions from one options object set to PREFER_CPU, every result right; a "
       "policy set after that is what the next creation logs. On 1.22.1 a policy makes "
       "creation fail (known: no CPU EP device is offered to the policy).",
       f"{C_API} (SessionOptionsSetEpSelectionPolicy takes a non-const OrtSessionOptions*)",
       slots=("SessionOptionsSetEpSelectionPolicy", "SetUserLoggingFunction"),
       crosses=("OrtSessionOptions",))
def selection_policy_create(ctx: Ctx) -> str:
    from .._registry import Known
    from .session import add_runs, logged_field, logged_options

    a = ctx.api
    if ctx.api_version < 23:  # 1.22.1: fails for DEFAULT and PREFER_CPU, aborts for PREFER_GPU
        so = ctx.options()
        ctx.ok(a.SessionOptionsSetEpSelectionPolicy(so, 0), "policy DEFAULT")
        sess, err = ctx.try_session(models.add_model((2,)), so)
        if err is None:
            a.ReleaseSession(sess)
            raise Fail("a session with policy DEFAULT was created (a new behaviour: record it)")
        raise Known(f"policy DEFAULT: creation fails: {code_name(err[0])}: {short(err[1], 100)}")
    logged = []
    for policy in range(7):
        so = ctx.options()
        ctx.ok(a.SessionOptionsSetEpSelectionPolicy(so, policy), f"policy {policy}")
        sess, line = logged_options(ctx, so)
        logged.append(logged_field(line, "ep_selection_policy"))
        if not add_runs(ctx, sess):
            raise Fail(f"policy {policy}: the session computes wrong")
    if logged != [str(p) for p in range(7)]:
        raise Fail(f"policies 0-6 logged as {logged}")
    so = ctx.options()
    ctx.ok(a.SessionOptionsSetEpSelectionPolicy(so, 1), "policy PREFER_CPU")
    model = models.add_model((2,))
    wrong: list[str] = []
    rounds = 10

    def work(i: int) -> None:
        for _ in range(rounds):
            sess = ctx.session(model, so, release=False)
            try:
                if not add_runs(ctx, sess):
                    wrong.append(f"thread {i}: wrong result")
            finally:
                a.ReleaseSession(sess)

    errors, _ = together(4, work)
    _verdict(errors, wrong)
    ctx.ok(a.SessionOptionsSetEpSelectionPolicy(so, 0), "policy DEFAULT")
    _, line = logged_options(ctx, so)
    if logged_field(line, "ep_selection_policy") != "0":
        raise Fail(f"after setting DEFAULT the next creation logs {line[:200]!r}")
    return (f"policies 0-6 logged and run on CPU; 4 threads x {rounds} creations from one "
            "PREFER_CPU options object, all right; DEFAULT set afterwards is read by the next "
            "creation")
