"""What users hit in ORT's issue tracker, as checks: a session released while another thread is
in Run, memory growth when Run is called from many short-lived threads, concurrent session
creation with a custom-op domain in the shared options, two sessions sharing an env-registered
arena at once, two Runs inside one custom kernel's compute at once, and the EP-selection
delegate entered by several creating threads at once.

Concurrency inside a callback is counted with :class:`_Gauge`: each thread that enters waits
(the GIL released) until the number of threads it looks for are inside, or a hold time passes.
An overlap the library allows therefore shows on every run, and a library that serializes the
callback shows one thread at a time; neither verdict depends on timing luck.
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
import time
from typing import Any, Optional

from .. import models
from .._capi import WAIT, Ctx, code_name, float_custom_op, join_all, mlp_input, short, \
    together
from .._registry import Fail, Known, NotSeen, check
from .threads import TERMINATE_TRIPS, _run_raw, _thread_cpu

CUSTOM_DOC = "https://onnxruntime.ai/docs/reference/operators/add-custom-op.html"
OP_SLOTS = ("CreateCustomOpDomain", "CustomOpDomain_Add", "AddCustomOpDomain",
            "KernelContext_GetInput", "KernelContext_GetOutput")

_INT_MAX = 2**31 - 1


class _Gauge:
    """Counts the threads inside a callback at once (``most``). An entering thread waits, the
    GIL released, until ``want`` threads have been inside together or ``hold`` seconds pass."""

    def __init__(self, want: int, hold: float) -> None:
        self.want, self.hold = want, hold
        self.cond = threading.Condition()
        self.inside = self.most = self.entries = 0
        self.tids: set[int] = set()

    def __enter__(self) -> None:
        with self.cond:
            self.inside += 1
            self.entries += 1
            self.most = max(self.most, self.inside)
            self.tids.add(threading.get_native_id())
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.most >= self.want, timeout=self.hold)

    def __exit__(self, *_exc: Any) -> None:
        with self.cond:
            self.inside -= 1
            self.cond.notify_all()


class _CopyOp:
    """A custom op built from cffi callbacks (struct version 16, so every library of the matrix
    takes it): y = x for float tensors, its compute optionally counted by a :class:`_Gauge`."""

    def __init__(self, ctx: Ctx, name: bytes = b"Copy", gauge: Optional[_Gauge] = None) -> None:
        self.ctx, self.gauge = ctx, gauge
        self.created = self.destroyed = self.computed = 0
        self.errors: list[str] = []
        self.op, self._keep = float_custom_op(
            ctx, name, 16, CreateKernelV2=self._create, KernelComputeV2=self._compute,
            KernelDestroy=self._destroy)

    def _create(self, _op: Any, _api: Any, _info: Any, out: Any) -> Any:
        self.created += 1
        out[0] = self.ctx.ffi.cast("void*", self.created)
        return self.ctx.ffi.NULL

    def _destroy(self, _kernel: Any) -> None:
        self.destroyed += 1

    def _compute(self, _kernel: Any, kctx: Any) -> Any:
        ctx, a, ffi = self.ctx, self.ctx.api, self.ctx.ffi
        try:
            if self.gauge is not None:
                with self.gauge:
                    self._copy(kctx)
            else:
                self._copy(kctx)
            self.computed += 1
            return ffi.NULL
        except BaseException as exc:  # noqa: BLE001 - nothing may unwind into ORT
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            return a.CreateStatus(1, f"{type(exc).__name__}: {exc}"[:300].encode())

    def _copy(self, kctx: Any) -> None:
        ctx, a, ffi = self.ctx, self.ctx.api, self.ctx.ffi
        x = ctx.out(a.KernelContext_GetInput, "OrtValue*", kctx, 0)
        _, dims = ctx.shape_of(x)
        n = 1
        for d in dims:
            n *= d
        y = ctx.out(a.KernelContext_GetOutput, "OrtValue*", kctx, 0,
                    ffi.new("int64_t[]", dims or [1]), len(dims))
        if n:
            ffi.memmove(ctx.out(a.GetTensorMutableData, "void*", y),
                        ctx.out(a.GetTensorMutableData, "void*", x), 4 * n)


def _copy_options(ctx: Ctx, op: _CopyOp, domain: str, intra: int = 1) -> Any:
    """Session options holding a new custom-op domain ``domain`` with ``op`` in it (the domain
    is released after everything the check made, as ORT requires)."""
    a = ctx.api
    dom = ctx.out(a.CreateCustomOpDomain, "OrtCustomOpDomain*", domain.encode())
    ctx.defer(a.ReleaseCustomOpDomain, dom)
    ctx.ok(a.CustomOpDomain_Add(dom, op.op), "CustomOpDomain_Add")
    so = ctx.options(intra=intra)
    ctx.ok(a.AddCustomOpDomain(so, dom), "AddCustomOpDomain")
    return so


def _floats_of(ctx: Ctx, value: Any) -> list[float]:
    return ctx.read_floats(value)


# ---- 1. a session released while another thread is in Run ----

@check("thread.release-session-during-run", "ReleaseSession called while another thread is "
       "inside Run on that session waits for the Run to end before it frees the session.",
       "onnxruntime_c_api.h ReleaseSession (no rule stated; a session in use must not be "
       "released: the user-reported crashes of a release during Run)",
       crash=True, timeout=40.0, crosses=("OrtSession", "OrtRunOptions", "OrtValue"))
def release_session_during_run(ctx: Ctx) -> str:
    """A Run of a Loop no machine finishes in minutes is in flight (its thread has used CPU
    inside Run) when another thread calls ReleaseSession. If the release is still blocked
    2 s later, it waits; if it returns while the Run is still inside, it did not. The Run is
    then stopped through its RunOptions' terminate flag; what it does after a release that
    did not wait (an error, a crash on the freed session) is the finding."""
    a = ctx.api
    ctx.poison_freed_memory()  # a Run inside a freed session reads poison, the same each time
    sess = ctx.session(models.loop_model(), release=False)
    # never released: a Run left inside a freed session may still read them
    ro = ctx.out(a.CreateRunOptions, "OrtRunOptions*")
    x, _ = ctx.tensor(models.FLOAT, [4], struct.pack("<4f", 0, 1, 2, 3), release=False)
    many, _ = ctx.tensor(models.INT64, [], struct.pack("<q", TERMINATE_TRIPS), release=False)
    run: dict[str, Any] = {}
    cpu0: list[float] = []

    def runner() -> None:
        cpu0.append(time.thread_time())
        got, err = _run_raw(ctx, sess, {"x": x, "trips": many}, ["y"], ro)
        run["err"] = err
        run["at"] = time.monotonic()

    rt = threading.Thread(target=runner, daemon=True)
    rt.start()
    clock = None
    deadline = time.monotonic() + 10.0
    while rt.ident is None or not cpu0:
        time.sleep(0.002)
    clock = _thread_cpu(rt.ident)
    while time.monotonic() < deadline and "at" not in run:
        if clock is None:
            time.sleep(0.3)
            break
        try:
            if clock() - cpu0[0] >= 0.05:
                break
        except OSError:
            break
        time.sleep(0.005)
    if "at" in run:
        raise Fail(f"the {TERMINATE_TRIPS}-trip Run ended before the release: "
                   f"{run['err'] and short(run['err'][1])}")
    ctx.step("ReleaseSession on another thread while the Run is inside the Loop")
    released: dict[str, Any] = {}

    def releaser() -> None:
        t0 = time.monotonic()
        a.ReleaseSession(sess)
        released["ms"] = (time.monotonic() - t0) * 1000
        released["run_inside"] = "at" not in run

    rel = threading.Thread(target=releaser, daemon=True)
    rel.start()
    rel.join(2.0)
    blocked = rel.is_alive()
    ctx.step("ReleaseSession " + ("still blocked after 2 s" if blocked else
                                  f"returned after {released.get('ms', 0):.0f} ms") +
             "; stopping the Run with RunOptionsSetTerminate")
    ctx.ok(a.RunOptionsSetTerminate(ro), "RunOptionsSetTerminate")
    join_all([rt, rel], 15.0)
    ctx.step("both threads ended")
    err = run.get("err")
    ended = (f"{code_name(err[0])}: {short(err[1].split('Status Message:')[-1], 80)}"
             if err else "OK")
    if blocked and released.get("ms", 0) >= 2000 and not released.get("run_inside"):
        return (f"ReleaseSession blocked until the Run ended ({released['ms']:.0f} ms), the "
                f"Run ended with {ended}")
    if released.get("run_inside"):
        raise Known(f"ReleaseSession did not wait: it returned after {released['ms']:.0f} ms "
                    "while the Run was still inside the session; stopped by its RunOptions, "
                    f"the Run on the freed session then returned {ended} (no crash this time: "
                    "freed memory was read)")
    raise Known(f"ReleaseSession returned after {released.get('ms', 0):.0f} ms, the Run "
                f"ended first ({ended})")


# ---- 2. memory growth when Run is called from many short-lived threads ----

#: runs per measured batch
SHORT_LIVED_RUNS = 300
#: growth per thread (resident bytes, after malloc_trim) above which the threads' growth is
#: not noise: 4 KiB, one page, a thread's leftovers each; 300 threads then grow 1.2 MiB
#: where the one-thread batch and a second batch of threads stay under a few hundred KiB
SHORT_LIVED_BOUND = 4096


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _trimmed_rss() -> int:
    """Resident bytes after glibc returned what it can (free heap tops and arena pages)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return _rss()


@check("thread.short-lived-threads-memory", f"Run called once from each of "
       f"{SHORT_LIVED_RUNS} short-lived threads (one after another) grows the process's "
       f"resident memory by less than {SHORT_LIVED_BOUND // 1024} KiB per thread beyond what "
       f"the same {SHORT_LIVED_RUNS} Runs on one thread grow it.",
       "users report memory growth when Run is called from new threads (thread-local state "
       "per calling thread); none stated by ORT",
       child=True, timeout=120.0, crosses=("OrtSession", "OrtValue"))
def short_lived_threads_memory(ctx: Ctx) -> str:
    """Measured in a fresh process, resident size after malloc_trim: a warm-up (Runs on this
    thread and on 50 short-lived threads, so glibc's per-thread arenas exist), then N Runs on
    one thread, then two batches of N threads that each run once and end. Growth per thread
    is the second batch's (the first may still fill arenas); above the bound in both batches
    it is a leak per thread, not noise."""
    a = ctx.api
    sess = ctx.session(models.mlp_model(), ctx.options(intra=1))
    x = ctx.floats(mlp_input(2), [4, 32])
    errors: list[str] = []

    def once() -> None:
        got, err = _run_raw(ctx, sess, {"x": x}, ["y"])
        if err:
            errors.append(f"{code_name(err[0])}: {short(err[1])}")
            return
        a.ReleaseValue(got[0])

    def threads(n: int) -> None:
        for _ in range(n):
            t = threading.Thread(target=once, daemon=True)
            t.start()
            t.join(WAIT)
            if t.is_alive():
                raise Fail("a Run on a short-lived thread did not end")

    def runs(n: int) -> None:
        for _ in range(n):
            once()

    def one_thread(n: int) -> None:
        t = threading.Thread(target=runs, args=(n,), daemon=True)
        t.start()
        join_all([t], WAIT * 4)

    n = SHORT_LIVED_RUNS
    for _ in range(50):
        once()
    threads(50)
    one_thread(50)
    r0 = _trimmed_rss()
    one_thread(n)
    r1 = _trimmed_rss()
    threads(n)
    r2 = _trimmed_rss()
    threads(n)
    r3 = _trimmed_rss()
    if errors:
        raise Fail(f"{len(errors)} Runs failed: {errors[0]}")
    base = r1 - r0
    first, second = (r2 - r1) - base, (r3 - r2) - base
    bound = SHORT_LIVED_BOUND * n
    said = (f"{n} Runs on one thread grew {base / 1024:+.0f} KiB; {n} short-lived threads "
            f"grew {(r2 - r1) / 1024:+.0f} KiB, {n} more {(r3 - r2) / 1024:+.0f} KiB "
            f"({second / n:+.0f} B per thread beyond one thread's; bound "
            f"{SHORT_LIVED_BOUND} B)")
    if first > bound and second > bound:
        raise Known("memory grows with every new calling thread: " + said)
    return said


# ---- 3. concurrent creation with a custom-op domain in the shared options ----

#: rounds of concurrent creation, each with a domain no session of the process has used:
#: the race showed in about one creation of 400 to 1200 on 1.19-1.32 (more threads a round
#: showed it less: their creations spread out more)
DOMAIN_ROUNDS = 300
DOMAIN_THREADS = 4


@check("thread.create-with-custom-op-domain", f"{DOMAIN_THREADS} threads at once create "
       "sessions from one SessionOptions holding a custom-op domain new to the process: all "
       "succeed and compute right.",
       "https://github.com/microsoft/onnxruntime/blob/c343143a49ca8fe39dd54c11a90febfa1cdd4d45"
       "/onnxruntime/core/session/inference_session.h#L268 (adding custom-op domains at "
       "session creation is marked not thread-safe); CreateCustomRegistry in "
       "onnxruntime/core/session/custom_ops.cc looks a domain up in ONNX's process-wide "
       "domain-version table and adds it when absent, with no lock held across the two",
       slots=OP_SLOTS, crash=True, timeout=90.0,
       crosses=("OrtSessionOptions", "OrtCustomOpDomain", "OrtEnv"))
def create_with_custom_op_domain(ctx: Ctx) -> str:
    """Each round adds a new domain name: the process-wide table of domain versions is
    looked up and filled on a session's first use of a domain, which is where concurrent
    creations can meet. A creation error, a wrong result or a crash is the race showing; none
    in every round is no verdict (not seen)."""
    a = ctx.api
    op = ctx.keep(_CopyOp(ctx))
    xs = [1.5, -2.0, 0.25]
    failed: list[str] = []
    wrong: list[list[float]] = []
    made = 0
    for r in range(DOMAIN_ROUNDS):
        domain = f"ortc.race{r}"
        so = _copy_options(ctx, op, domain)
        model = models.custom_op_model({}, domain=domain, op="Copy")
        x = ctx.floats(xs)
        ctx.step(f"round {r}: {DOMAIN_THREADS} creations at once with domain {domain}")

        def create(_i: int) -> None:
            nonlocal made
            sess, err = ctx.try_session(model, so)
            if err:
                failed.append(f"{code_name(err[0])}: {short(err[1], 140)}")
                return
            made += 1
            try:
                got, err = _run_raw(ctx, sess, {"x": x}, ["y"])
                if err:
                    failed.append(f"Run: {code_name(err[0])}: {short(err[1], 140)}")
                    return
                ys = _floats_of(ctx, got[0])
                a.ReleaseValue(got[0])
                if ys != xs:
                    wrong.append(ys)
            finally:
                a.ReleaseSession(sess)

        errors, _ = together(DOMAIN_THREADS, create)
        if errors:
            raise Fail(f"round {r}: {errors[0]}")
    total = DOMAIN_ROUNDS * DOMAIN_THREADS
    if op.errors:
        raise Fail(f"the kernel failed: {op.errors[0]}")
    if failed or wrong:
        raise Known(f"{len(failed)} of {total} concurrent creations or their Runs failed"
                    + (f", first: {failed[0]}" if failed else "")
                    + (f"; {len(wrong)} wrong results" if wrong else ""))
    raise NotSeen(f"{total} creations ({DOMAIN_ROUNDS} rounds of {DOMAIN_THREADS} threads at "
                  "once, each round a domain new to the process): all succeeded and copied "
                  "right; the race ORT warns of did not show")


# ---- 4. two sessions sharing an env-registered allocator, at once ----

@check("thread.env-allocator-two-sessions", "Two sessions that use one arena registered on "
       "the env (CreateAndRegisterAllocator, session.use_env_allocators=1) run at once from "
       "four threads: every result equals the serial one.",
       "onnxruntime_c_api.h CreateAndRegisterAllocator (shared between sessions; no thread "
       "rule stated)",
       slots=("CreateAndRegisterAllocator", "UnregisterAllocator"), crash=True, timeout=60.0,
       crosses=("OrtSession", "OrtValue", "OrtEnv"))
def env_allocator_two_sessions(ctx: Ctx) -> str:
    a = ctx.api
    env = ctx.env
    mi = ctx.out(a.CreateMemoryInfo, "OrtMemoryInfo*", b"Cpu", 1, 0, 0)  # arena, default
    ctx.defer(a.ReleaseMemoryInfo, mi)
    cfg = ctx.out(a.CreateArenaCfg, "OrtArenaCfg*", 0, -1, -1, -1)
    ctx.defer(a.ReleaseArenaCfg, cfg)
    ctx.ok(a.CreateAndRegisterAllocator(env, mi, cfg), "CreateAndRegisterAllocator")
    ctx.defer(lambda: ctx.status(a.UnregisterAllocator(env, mi)))  # after the sessions
    so = ctx.options(config={"session.use_env_allocators": "1"})
    sessions = [ctx.session(models.mlp_model(), so) for _ in range(2)]

    inputs = [ctx.floats(mlp_input(10 + i), [4, 32]) for i in range(4)]
    serial = [ctx.read_floats(ctx.run(sessions[i % 2], {"x": inputs[i]}, ["y"])[0])
              for i in range(4)]
    bad: list[int] = []
    iters = 20
    ctx.step("4 threads running 2 sessions that share the env's arena")

    def work(i: int) -> None:
        for _ in range(iters):
            got, err = _run_raw(ctx, sessions[i % 2], {"x": inputs[i]}, ["y"])
            if err:
                raise Fail(f"Run: {code_name(err[0])}: {short(err[1])}")
            if ctx.read_floats(got[0]) != serial[i]:
                bad.append(i)
            a.ReleaseValue(got[0])

    errors, tids = together(4, work)
    if errors:
        raise Fail("; ".join(errors[:2]))
    if bad:
        raise Known(f"{len(bad)} of {4 * iters} concurrent runs differ from the serial ones")
    return (f"{4 * iters} runs on 2 sessions from {len(tids)} threads at once, sharing the "
            f"env's arena: all equal the serial results")


# ---- 5. two Runs inside one custom kernel's compute at once ----

@check("kernel.overlapping-compute", "Two Runs at once on one session enter the same custom "
       "kernel's KernelComputeV2 together: ORT does not serialize a kernel's compute, so a "
       "kernel's state must be safe to use from several threads.", CUSTOM_DOC,
       slots=OP_SLOTS, child=True, timeout=60.0, crosses=("OrtSession", "OrtValue"))
def overlapping_compute(ctx: Ctx) -> str:
    gauge = _Gauge(want=2, hold=3.0)
    op = ctx.keep(_CopyOp(ctx, gauge=gauge))
    so = _copy_options(ctx, op, "ortc.overlap")
    sess = ctx.session(models.custom_op_model({}, domain="ortc.overlap", op="Copy"), so)
    a = ctx.api
    inputs = [[float(i), float(i) + 0.5] for i in range(2)]
    values = [ctx.floats(v) for v in inputs]
    wrong: list[int] = []

    def work(i: int) -> None:
        got, err = _run_raw(ctx, sess, {"x": values[i]}, ["y"])
        if err:
            raise Fail(f"Run: {code_name(err[0])}: {short(err[1])}")
        if ctx.read_floats(got[0]) != inputs[i]:
            wrong.append(i)
        a.ReleaseValue(got[0])

    errors, _ = together(2, work)
    if errors or op.errors or wrong:
        raise Fail(f"errors {(errors + op.errors)[:2]}, wrong results {len(wrong)}")
    kernels = f"{op.created} kernel instance(s) for the one node"
    if gauge.most >= 2:
        return (f"both Runs were inside one kernel's compute at once ({kernels}, compute "
                f"on {len(gauge.tids)} threads)")
    raise Known(f"ORT serialized the compute: one Run at a time inside it ({kernels}; each "
                f"entry waited {gauge.hold:.0f} s for the other)")


# ---- 6. the EP-selection delegate entered by several creating threads ----

DELEGATE_THREADS = 4


@check("device.selection-delegate-concurrent", f"{DELEGATE_THREADS} threads at once creating "
       "sessions from one SessionOptions enter its EP-selection delegate together: ORT does "
       "not serialize the delegate, so it and its state must be safe to call from several "
       "threads.", "onnxruntime_c_api.h SessionOptionsSetEpSelectionPolicyDelegate (no thread "
       "rule stated)",
       slots=("SessionOptionsSetEpSelectionPolicyDelegate", "GetEpDevices"), child=True,
       timeout=60.0, crosses=("OrtSessionOptions",))
def selection_delegate_concurrent(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    gauge = _Gauge(want=DELEGATE_THREADS, hold=3.0)
    problems: list[str] = []

    def choose(devices: Any, n: int, _model_md: Any, _runtime_md: Any, selected: Any,
               max_selected: int, num_selected: Any, _state: Any) -> Any:
        try:
            with gauge:
                k = 0
                for i in range(n):
                    name = ctx.c_string(a.EpDevice_EpName(devices[i]))
                    if name == "CPUExecutionProvider" and k < max_selected:
                        selected[k] = devices[i]
                        k += 1
                num_selected[0] = k
            return ffi.NULL
        except BaseException as exc:  # noqa: BLE001 - nothing may unwind into ORT
            problems.append(repr(exc)[:200])
            return a.CreateStatus(1, b"delegate failed")

    cb = ctx.keep(ffi.callback("EpSelectionDelegate", choose))
    so = ctx.options()
    ctx.ok(a.SessionOptionsSetEpSelectionPolicyDelegate(so, cb, ffi.NULL))
    model = models.add_model((2,))
    failed: list[str] = []

    def create(_i: int) -> None:
        sess, err = ctx.try_session(model, so)
        if err:
            failed.append(f"{code_name(err[0])}: {short(err[1], 100)}")
        else:
            a.ReleaseSession(sess)

    errors, _ = together(DELEGATE_THREADS, create)
    if errors or problems:
        raise Fail(f"{(errors + problems)[:2]}")
    made = (f"{DELEGATE_THREADS - len(failed)} of {DELEGATE_THREADS} creations succeeded"
            + (f" (the failures: {failed[0]})" if failed else ""))
    if gauge.entries == 0:
        raise Fail(f"the delegate was never called; {made}")
    if gauge.most >= 2:
        return (f"{gauge.most} of {DELEGATE_THREADS} creating threads were inside the delegate "
                f"at once ({gauge.entries} calls); {made}")
    raise Known(f"ORT serialized the delegate: one creating thread inside it at a time "
                f"({gauge.entries} calls); {made}")
