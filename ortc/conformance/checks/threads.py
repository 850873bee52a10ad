"""Thread claims: concurrent Run, shared RunOptions and terminate, concurrent creation,
allocators from many threads, shared vs per-thread IoBinding, RunAsync and logger threads.

Sizes are small on purpose (the matrix runs every check on every version); a race that does not
show up in these few iterations proves nothing, and the details say how many runs were tried.
"""

from __future__ import annotations

import struct
import threading
import time
from typing import Any, Callable

from .. import models
from .._capi import WAIT, Ctx, code_name, join_all, mlp_input, short
from .._registry import Fail, Known, check

RUN_DOC = ("https://onnxruntime.ai/docs/reference/high-level-design.html (multiple threads may "
           "call Run on one session); ORT #114")


def _threads(n: int, target: Callable[[int], None], timeout: float = WAIT) -> list[str]:
    """Run ``target(i)`` on ``n`` threads; the errors they raised. The joins are bounded
    (:func:`join_all`): a thread still running after ``timeout`` fails the check."""
    errors: list[str] = []

    def wrapped(i: int) -> None:
        try:
            target(i)
        except Exception as exc:  # noqa: BLE001 - collected and reported by the check
            errors.append(f"{type(exc).__name__}: {exc}"[:200])

    ts = [threading.Thread(target=wrapped, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    join_all(ts, timeout)
    return errors


@check("thread.concurrent-run", "Concurrent Run calls on one CPU session give exactly the "
       "results of serial runs.", RUN_DOC,
       crosses=("OrtSession", "OrtValue"))
def concurrent_run(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.mlp_model())
    inputs = [ctx.floats(mlp_input(s), [4, 32]) for s in range(4)]
    serial = [ctx.read_floats(ctx.run(sess, {"x": v}, ["y"])[0]) for v in inputs]
    bad: list[int] = []
    iters = 15

    def work(i: int) -> None:
        for _ in range(iters):
            got, err = _run_raw(ctx, sess, {"x": inputs[i]}, ["y"])
            if err:
                raise Fail(f"Run: {code_name(err[0])}: {err[1][:100]}")
            if ctx.read_floats(got[0]) != serial[i]:
                bad.append(i)
            a.ReleaseValue(got[0])

    errors = _threads(4, work)
    if errors:
        raise Fail("; ".join(errors))
    if bad:
        raise Fail(f"{len(bad)} of {4 * iters} concurrent runs differ from serial")
    return f"{4 * iters} concurrent runs on 4 threads match serial results"


def _run_raw(ctx: Ctx, sess: Any, feeds: dict[str, Any], outputs: list[str],
             run_options: Any = None) -> tuple[list[Any], Any]:
    """Run without registering outputs for cleanup (thread bodies release their own)."""
    ffi = ctx.ffi
    in_names = [ffi.new("char[]", k.encode()) for k in feeds]
    out_names = [ffi.new("char[]", k.encode()) for k in outputs]
    res = ffi.new("OrtValue*[]", len(outputs))
    err = ctx.status(ctx.api.Run(sess, run_options or ffi.NULL, ffi.new("char*[]", in_names),
                                 ffi.new("OrtValue*[]", list(feeds.values())), len(feeds),
                                 ffi.new("char*[]", out_names), len(outputs), res))
    return [res[i] for i in range(len(outputs))], err


@check("thread.shared-input-value", "One input OrtValue fed to concurrent Runs gives every run "
       "the right result.", ("ORT's Java test shares one input tensor across threads: "
                               "https://github.com/microsoft/onnxruntime/blob/main/java/src/"
                               "test/java/ai/onnxruntime/InferenceTest.java (testMultiThreads)"),
       crosses=("OrtSession", "OrtValue"))
def shared_input(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.mlp_model())
    x = ctx.floats(mlp_input(3), [4, 32])
    want = ctx.read_floats(ctx.run(sess, {"x": x}, ["y"])[0])
    bad: list[int] = []

    def work(i: int) -> None:
        for _ in range(15):
            got, err = _run_raw(ctx, sess, {"x": x}, ["y"])
            if err:
                raise Fail(f"Run: {err[1][:100]}")
            if ctx.read_floats(got[0]) != want:
                bad.append(i)
            a.ReleaseValue(got[0])

    errors = _threads(4, work)
    if errors or bad:
        raise Fail(f"errors {errors[:2]}, wrong results {len(bad)}")
    return "60 runs over one input value: all correct"


#: trips of the Loop each terminated Run is asked for: minutes of work on any machine (about
#: 1 µs a trip on every version 1.16-1.32 on a 2-core box), so no Run can end on its own before
#: the terminate, and finite, so Runs a library fails to stop end some day
TERMINATE_TRIPS = 300_000_000
#: CPU time each Run's thread must have spent inside Run before the terminate: it is computing
TERMINATE_BUSY = 0.02
#: what Runs a library failed to stop may still read (session, options, inputs): never released
_LEFT_RUNNING: list[Any] = []


def _thread_cpu(ident: int) -> Callable[[], float] | None:
    """A reader of the CPU time thread ``ident`` has used, or None where there is none."""
    try:
        clock = time.pthread_getcpuclockid(ident)
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return None
    return lambda: time.clock_gettime(clock)


@check("thread.shared-run-options-terminate", "One RunOptions shared by concurrent in-flight "
       "Runs: a single RunOptionsSetTerminate stops all of them with an error, and after "
       "RunOptionsUnsetTerminate the same options run normally.",
       "onnxruntime_c_api.h RunOptionsSetTerminate (callable from another thread)",
       crosses=("OrtRunOptions", "OrtSession", "OrtValue"))
def shared_terminate(ctx: Ctx) -> str:
    """No verdict depends on timing. Each Run asks a Loop for TERMINATE_TRIPS trips, which no
    machine finishes while the check waits: a Run that returns OK, or returns at all before
    SetTerminate, fails the check, and so does one still running WAIT seconds after it. The
    terminate comes once every Run's thread has used TERMINATE_BUSY of CPU inside Run (so each
    is computing; on a busy machine that only takes longer), or after 10 s without that; a Run
    not yet inside Run when the flag is set is refused with an error too, and the details say
    how many were stopped inside the Loop."""
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.loop_model(), release=False)
    ro = ctx.out(a.CreateRunOptions, "OrtRunOptions*")
    x, x_buf = ctx.tensor(models.FLOAT, [4], struct.pack("<4f", 0, 1, 2, 3), release=False)
    many, many_buf = ctx.tensor(models.INT64, [], struct.pack("<q", TERMINATE_TRIPS),
                                release=False)
    owned = [(a.ReleaseValue, many), (a.ReleaseValue, x), (a.ReleaseRunOptions, ro),
             (a.ReleaseSession, sess)]
    ts: list[threading.Thread] = []

    def cleanup() -> None:
        if any(t.is_alive() for t in ts):  # still inside ORT: leave them what they read
            _LEFT_RUNNING.append((owned, x_buf, many_buf))
            return
        for release, obj in owned:
            release(obj)

    ctx.defer(cleanup)

    three = ctx.tensor(models.INT64, [], struct.pack("<q", 3))[0]

    def three_trips(when: str) -> None:
        got, err = ctx.try_run(sess, {"x": x, "trips": three}, ["y"], ro)
        if err:
            raise Fail(f"a 3-trip Run {when}: {code_name(err[0])}: {short(err[1])}")
        if ctx.read_floats(got[0]) != [3.0, 4.0, 5.0, 6.0]:
            raise Fail(f"a 3-trip Run {when} gave {ctx.read_floats(got[0])}")

    three_trips("before the threads")
    n = 4
    started = threading.Barrier(n + 1, timeout=WAIT)
    terminating = threading.Event()
    idents: list[int] = [0] * n
    cpu0: list[float | None] = [None] * n
    called: list[float] = [0.0] * n
    # (error or None, whether it returned before SetTerminate was called, when it returned)
    outcome: list[tuple[Any, bool, float] | None] = [None] * n

    def work(i: int) -> None:
        idents[i] = threading.get_ident()
        started.wait()
        called[i] = time.perf_counter()
        cpu0[i] = time.thread_time()
        got, err = _run_raw(ctx, sess, {"x": x, "trips": many}, ["y"], ro)
        outcome[i] = (err, not terminating.is_set(), time.perf_counter())
        for v in got:
            if v != ffi.NULL:
                a.ReleaseValue(v)

    ts += [threading.Thread(target=work, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    started.wait()
    clocks = [_thread_cpu(ident) for ident in idents]
    busy: set[int] = set()
    deadline = time.monotonic() + 10.0
    while (len(busy) < n and time.monotonic() < deadline and None in outcome
           and None not in clocks):
        for i, clock in enumerate(clocks):
            c0 = cpu0[i]
            if i not in busy and clock is not None and c0 is not None:
                try:
                    if clock() - c0 >= TERMINATE_BUSY:
                        busy.add(i)
                except OSError:  # the thread has ended: its outcome says how
                    pass
        time.sleep(0.005)
    if None in clocks:  # no per-thread CPU clock here: give the Runs a moment instead
        time.sleep(0.2)
    terminating.set()
    t_term = time.perf_counter()
    ctx.ok(a.RunOptionsSetTerminate(ro), "RunOptionsSetTerminate")
    join_all(ts)
    ctx.ok(a.RunOptionsUnsetTerminate(ro), "RunOptionsUnsetTerminate")
    done = [o for o in outcome if o is not None]
    if len(done) < n:
        raise Fail(f"{n - len(done)} of {n} Run threads ended without a result")
    early = [o for o in done if o[1]]
    if early:
        raise Fail(f"{len(early)} of {n} Runs of {TERMINATE_TRIPS} trips returned before "
                   f"SetTerminate, first with "
                   + (f"{code_name(early[0][0][0])}: {short(early[0][0][1])}" if early[0][0]
                      else "OK"))
    ran_on = [o for o in done if o[0] is None]
    if ran_on:
        raise Fail(f"{len(ran_on)} of {n} Runs of {TERMINATE_TRIPS} trips returned OK after "
                   "SetTerminate: the flag did not stop them")
    three_trips("after RunOptionsUnsetTerminate")
    errs = [o[0] for o in done if o[0] is not None]
    in_loop = sum(1 for e in errs if "Loop" in e[1])
    codes = sorted({code_name(e[0]) for e in errs})
    tail = errs[0][1].split("Status Message:")[-1]
    slowest = max(o[2] for o in done) - t_term
    if len(busy) == n:
        watched = (f"each computing inside Run ({TERMINATE_BUSY * 1000:.0f} ms of its thread's "
                   "CPU)")
    elif None not in clocks:
        watched = f"{len(busy)} of {n} seen computing inside Run within 10 s"
    else:
        watched = "not seen computing (no per-thread CPU clock here)"
    ran = min(t_term - c for c in called)
    where = (f"all {n} inside the Loop" if in_loop == n else
             f"{in_loop} inside the Loop and {n - in_loop} before its first node (a Run that "
             f"enters after the flag is set is refused too)")
    return (f"{n} Runs of a {TERMINATE_TRIPS}-trip Loop sharing one RunOptions, {watched} after "
            f"{ran * 1000:.0f} ms: one SetTerminate stopped {where} within "
            f"{slowest * 1000:.0f} ms with {'/'.join(codes)} ({short(tail, 60)}); after "
            f"RunOptionsUnsetTerminate the same options run a 3-trip Loop right")


@check("thread.concurrent-create", "Concurrent CreateSession calls sharing one SessionOptions "
       "and the env all succeed and compute the same results.",
       "observed by this check (undocumented)",
       crosses=("OrtEnv", "OrtSessionOptions", "OrtValue"))
def concurrent_create(ctx: Ctx) -> str:
    a = ctx.api
    so = ctx.options()
    model = models.mlp_model()
    x = ctx.floats(mlp_input(1), [4, 32])
    results: list[list[float]] = []

    def work(_i: int) -> None:
        sess, err = ctx.try_session(model, so)
        if err:
            raise Fail(f"{code_name(err[0])}: {err[1][:100]}")
        try:
            got, err = _run_raw(ctx, sess, {"x": x}, ["y"])
            if err:
                raise Fail(err[1][:100])
            results.append(ctx.read_floats(got[0]))
            a.ReleaseValue(got[0])
        finally:
            a.ReleaseSession(sess)

    errors = _threads(4, work)
    if errors:
        raise Fail("; ".join(errors))
    if len(results) != 4 or any(r != results[0] for r in results):
        raise Fail("results differ")
    return "4 sessions created concurrently; identical results"


def _hammer(ctx: Ctx, alloc: Any, threads: int = 4, rounds: int = 1500) -> list[str]:
    a, ffi = ctx.api, ctx.ffi

    def work(i: int) -> None:
        p = ffi.new("void**")
        for r in range(rounds):
            st = a.AllocatorAlloc(alloc, 64 + (r % 7) * 32, p)
            if st:
                raise Fail(f"Alloc: {ctx.status(st)}")
            ffi.cast("uint8_t*", p[0])[0] = i
            st = a.AllocatorFree(alloc, p[0])
            if st:
                raise Fail(f"Free: {ctx.status(st)}")

    return _threads(threads, work)


@check("thread.default-allocator", "The default CPU allocator serves Alloc/Free from several "
       "threads at once without errors.",
       "onnxruntime_c_api.h GetAllocatorWithDefaultOptions (one static allocator)",
       crosses=("OrtAllocator",))
def default_allocator(ctx: Ctx) -> str:
    errors = _hammer(ctx, ctx.allocator)
    if errors:
        raise Fail("; ".join(errors))
    return "4 threads x 1500 Alloc/Free"


@check("thread.session-allocator", "A session's CPU arena allocator (CreateAllocator) serves "
       "Alloc/Free from several threads at once without errors.",
       "https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/framework/"
       "bfc_arena.h (the arena takes a lock)", slots=("CreateAllocator",),
       crosses=("OrtAllocator", "OrtSession"))
def session_allocator(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.add_model((2,)))
    alloc = ctx.out(a.CreateAllocator, "OrtAllocator*", sess, ctx.cpu_info)
    ctx.defer(a.ReleaseAllocator, alloc)
    errors = _hammer(ctx, alloc)
    if errors:
        raise Fail("; ".join(errors))
    return "4 threads x 1500 Alloc/Free"


def _bind(ctx: Ctx, b: Any, i: int) -> Any:
    """Bind thread i's inputs (x = [i, i], y = [0.5, 0.5]) and z to the CPU; the error, if
    any. The binding keeps its own references: the values are released here."""
    a = ctx.api
    x = ctx.floats([float(i), float(i)], release=False)
    y = ctx.floats([0.5, 0.5], release=False)
    try:
        for st in (a.BindInput(b, b"x", x), a.BindInput(b, b"y", y),
                   a.BindOutputToDevice(b, b"z", ctx.cpu_info)):
            if st:
                return ctx.status(st)
        return None
    finally:
        a.ReleaseValue(x)
        a.ReleaseValue(y)


def _run_bound(ctx: Ctx, sess: Any, b: Any, i: int) -> tuple[bool, Any]:
    """Run the binding and read z; True when z is thread i's result ([i + 0.5] * 2)."""
    a, ffi = ctx.api, ctx.ffi
    st = a.RunWithBinding(sess, ffi.NULL, b)
    if st:
        return False, ctx.status(st)
    vals, n = ffi.new("OrtValue***"), ffi.new("size_t*")
    st = a.GetBoundOutputValues(b, ctx.allocator, vals, n)
    if st:
        return False, ctx.status(st)
    got: list[Any]
    try:
        got = [ctx.read_floats(vals[0][k]) for k in range(n[0])]
    except Fail as exc:  # another thread's rebind left a value half made
        got = [exc.detail]
    for k in range(n[0]):
        a.ReleaseValue(vals[0][k])
    ctx.status(a.AllocatorFree(ctx.allocator, vals[0]))  # the outputs were read: released only
    return got == [[i + 0.5, i + 0.5]], None


def _binding_round(ctx: Ctx, sess: Any, b: Any, i: int) -> tuple[bool, Any]:
    """Bind thread i's input, run, read z; True when z is thread i's result."""
    err = _bind(ctx, b, i)
    if err:
        return False, err
    return _run_bound(ctx, sess, b, i)


@check("thread.shared-binding", "One IoBinding shared by threads that each bind their own "
       "input and run gives every thread its own result.",
       "observed by this check: wrong results when threads rebind and run one binding "
       "(IoBinding is not Sync); each round a barrier puts every thread's binds before any "
       "thread's run, the interleaving free-running threads reach only by chance (it once "
       "went unseen in 1600 free runs on a loaded machine); it runs in a child process because "
       "the concurrent binds and runs can corrupt ORT's heap",
       slots=("CreateIoBinding",), crash=True, crosses=("OrtIoBinding", "OrtSession"))
def shared_binding(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.add_model((2,)))
    b = ctx.out(a.CreateIoBinding, "OrtIoBinding*", sess)
    ctx.defer(a.ReleaseIoBinding, b)
    tally: list[str] = []
    rounds, nthreads = 20, 8
    gate = threading.Barrier(nthreads, timeout=WAIT)

    def work(i: int) -> None:
        try:
            for _ in range(rounds):
                gate.wait()  # the previous round's runs are all done: bind together
                err = _bind(ctx, b, i + 1)
                gate.wait()  # every thread's binds are in: run together
                if err:
                    tally.append("error")
                    continue
                ok, err = _run_bound(ctx, sess, b, i + 1)
                tally.append("error" if err else ("ok" if ok else "wrong"))
        except threading.BrokenBarrierError:
            raise Fail("another thread left the rounds") from None
        except BaseException:
            gate.abort()  # the others stop at their next wait instead of timing out
            raise

    errors = _threads(nthreads, work)
    if errors:
        raise Fail("; ".join(sorted(errors, key=lambda e: "left the rounds" in e)[:2]))
    counts = {k: tally.count(k) for k in ("ok", "wrong", "error")}
    total = nthreads * rounds
    if counts["wrong"] or counts["error"]:
        raise Known(f"{counts['wrong']} wrong and {counts['error']} failed of {total} runs "
                    f"(each round: {nthreads} threads bind, then all run): a shared IoBinding "
                    f"races (treat it as not Sync)")
    return (f"all {total} runs right although each round put {nthreads} threads' binds before "
            f"their runs")


@check("thread.per-thread-binding", "Per-thread IoBindings on one shared session give every "
       "thread its own result.", "observed by this check", slots=("CreateIoBinding",),
       crosses=("OrtSession",))
def per_thread_binding(ctx: Ctx) -> str:
    a = ctx.api
    sess = ctx.session(models.add_model((2,)))
    bad: list[str] = []

    def work(i: int) -> None:
        b = ctx.out(a.CreateIoBinding, "OrtIoBinding*", sess)
        try:
            for _ in range(100):
                ok, err = _binding_round(ctx, sess, b, i + 1)
                if not ok:
                    bad.append(str(err))
        finally:
            a.ReleaseIoBinding(b)

    errors = _threads(4, work)
    if errors or bad:
        raise Fail(f"errors {errors[:2]}, bad {len(bad)}: {bad[:2]}")
    return "400 runs, 4 bindings: all correct"


def _run_async(ctx: Ctx, intra: int) -> tuple[Any, dict[str, Any]]:
    a, ffi = ctx.api, ctx.ffi
    so = ctx.options(intra=intra)
    sess = ctx.session(models.add_model((2,)), so)
    done = threading.Event()
    seen: dict[str, Any] = {}

    def callback(_user: Any, outputs: Any, n: int, status: Any) -> None:
        try:
            seen["thread"] = threading.get_native_id()
            seen["error"] = ctx.status(status)  # the callback owns the status
            seen["values"] = (ctx.read_floats(outputs[0]) if n and outputs[0] != ffi.NULL
                              else None)
        finally:
            done.set()

    cb = ctx.keep(ffi.callback("RunAsyncCallbackFn", callback))
    names_in = ctx.keep([ffi.new("char[]", b"x"), ffi.new("char[]", b"y")])
    x = ctx.floats([1, 2])
    y = ctx.floats([3, 4])
    vals = ctx.keep(ffi.new("OrtValue*[]", [x, y]))
    out_name = ctx.keep(ffi.new("char[]", b"z"))
    outs = ctx.keep(ffi.new("OrtValue*[1]"))
    in_arr = ctx.keep(ffi.new("char*[]", names_in))
    out_arr = ctx.keep(ffi.new("char*[]", [out_name]))
    err = ctx.status(a.RunAsync(sess, ffi.NULL, in_arr, vals, 2, out_arr, 1, outs, cb,
                                ffi.NULL))
    if err is None:
        if not done.wait(20):
            raise Fail("the callback never came")
        if outs[0] != ffi.NULL:
            ctx.defer(a.ReleaseValue, outs[0])
    return err, seen


@check("thread.run-async-callback-thread", "RunAsync returns at once and calls its callback on "
       "an intra-op pool thread, not the caller's, with the outputs.",
       "onnxruntime_c_api.h RunAsync (runs in a thread owned by the intra-op pool)", slots=("RunAsync",))
def run_async(ctx: Ctx) -> str:
    err, seen = _run_async(ctx, 2)
    if err:
        raise Fail(f"RunAsync: {code_name(err[0])}: {short(err[1])}")
    if seen.get("error"):
        raise Fail(f"callback status: {seen['error']}")
    if seen.get("values") != [4.0, 6.0]:
        raise Fail(f"outputs {seen.get('values')}")
    if seen["thread"] == threading.get_native_id():
        raise Known("the callback ran on the calling thread")
    return "callback on another OS thread with z = [4, 6]"


@check("thread.run-async-needs-pool", "RunAsync on a session with intra_op_num_threads=1 is "
       "refused with an error status (there is no pool thread to run it).",
       "https://github.com/microsoft/onnxruntime/issues/17149", slots=("RunAsync",))
def run_async_intra1(ctx: Ctx) -> str:
    err, seen = _run_async(ctx, 1)
    if err is None:
        raise Known(f"accepted; the callback ran (error: {seen.get('error')})")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("thread.logger-concurrent-runs", "A session logger is called on each of several "
       "threads whose concurrent Runs log (here: a kernel error, logged at ERROR).",
       "onnxruntime/core/common/logging (sinks are called on the logging thread, unlocked); "
       "observed by this check", slots=("SetUserLoggingFunction",))
def logger_concurrent(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    seen: list[int] = []

    def log(_p: Any, _sev: int, _cat: Any, _id: Any, _loc: Any, _msg: Any) -> None:
        seen.append(threading.get_native_id())

    cb = ctx.keep(ffi.callback("OrtLoggingFunction", log))
    so = ctx.options()
    ctx.ok(a.SetUserLoggingFunction(so, cb, ffi.NULL))
    ctx.ok(a.SetSessionLogSeverityLevel(so, 3))
    t1 = models.tensor_type(models.FLOAT, ("a",))
    t2 = models.tensor_type(models.FLOAT, ("b",))
    m = models.model([models.node("Add", ["x", "y"], ["z"])],
                     [models.value_info("x", t1), models.value_info("y", t2)],
                     [models.value_info("z", models.tensor_type(models.FLOAT, None))])
    sess = ctx.session(m, so)
    x = ctx.floats([1, 2])
    y = ctx.floats([1, 2, 3])
    before = len(seen)
    callers: list[int] = []

    def work(_i: int) -> None:
        callers.append(threading.get_native_id())
        for _ in range(5):
            got, err = _run_raw(ctx, sess, {"x": x, "y": y}, ["z"])
            if err is None:
                raise Fail("the broadcasting error did not happen")

    errors = _threads(3, work)
    if errors:
        raise Fail("; ".join(errors))
    run_threads = set(seen[before:])
    hit = run_threads & set(callers)
    if len(hit) < 3:
        raise Fail(f"run-time messages came from {len(hit)} of the 3 running threads "
                   f"({len(seen) - before} messages)")
    return f"{len(seen) - before} messages, from all 3 running threads"


@check("thread.logger-pool-thread", "The env logger is also called on ORT's own threads: a "
       "RunAsync run executes on an intra-op pool thread, and what it logs reaches the logger "
       "there, not on a thread that called into ORT.",
       "https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/session/"
       "user_logging_sink.h (the sink calls the function directly)",
       slots=("RunAsync",), child=True)
def logger_pool_thread(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sink: list[int] = []

    def log(_param: Any, _severity: int, _category: Any, _logid: Any, _where: Any,
            _message: Any) -> None:
        sink.append(threading.get_native_id())

    cb = ctx.keep(ffi.callback("OrtLoggingFunction", log))
    ctx.out(a.CreateEnvWithCustomLogger, "OrtEnv*", cb, ffi.NULL, 0, b"pool")  # VERBOSE
    caller = threading.get_native_id()
    before = len(sink)
    err, seen = _run_async(ctx, 2)
    if err:
        raise Fail(f"RunAsync: {code_name(err[0])}: {short(err[1])}")
    during = sink[before:]
    pool = seen.get("thread")
    from_pool = sum(1 for t in during if t == pool)
    others = {t for t in during if t != caller}
    if not others:
        raise Known(f"{len(during)} messages during the run, all on the calling thread")
    return (f"{len(during)} messages during the run; {from_pool} on the pool thread that ran "
            f"it, {len(others)} non-caller thread(s) in all")
