"""The process-wide OrtEnv: ref-counting, release, re-creation, loggers, global thread pools."""

from __future__ import annotations

import threading
from typing import Any

from .. import models
from .._capi import Ctx, code_name, join_all, short
from .._registry import Fail, Known, check

CREATE_ENV_DOC = ("onnxruntime_c_api.h CreateEnv: later calls return the same instance and "
                  "ignore their arguments")


def _env(ctx: Ctx, level: int = 3, logid: bytes = b"conf") -> Any:
    return ctx.out(ctx.api.CreateEnv, "OrtEnv*", level, logid, what="CreateEnv")


def _add_once(ctx: Ctx, env: Any) -> list[float]:
    sess = ctx.session(models.add_model((2,)), env=env, release=False)
    x = ctx.floats([1.0, 2.0])
    y = ctx.floats([10.0, 20.0])
    got = ctx.read_floats(ctx.run(sess, {"x": x, "y": y}, ["z"])[0])
    ctx.api.ReleaseSession(sess)
    return got


@check("env.same-pointer", "CreateEnv called twice returns the same OrtEnv pointer.",
       CREATE_ENV_DOC)
def same_pointer(ctx: Ctx) -> str:
    first = ctx.env
    second = _env(ctx, 2, b"other")
    same = first == second
    ctx.api.ReleaseEnv(second)  # drops the extra reference only
    if not same:
        raise Fail("a second CreateEnv returned a different pointer")
    return "same pointer; the second reference was released"


@check("env.refcount",
       "With two CreateEnv references, releasing one leaves the env usable.", CREATE_ENV_DOC,
       child=True)
def refcount(ctx: Ctx) -> str:
    a = ctx.api
    e1 = _env(ctx)
    e2 = _env(ctx)
    a.ReleaseEnv(e2)
    ctx.step("released one of two references; running")
    got = _add_once(ctx, e1)
    if got != [11.0, 22.0]:
        raise Fail(f"wrong result {got}")
    return "Run works with one reference left"


@check("env.run-after-last-release",
       "Running a session after the last ReleaseEnv does not crash the process, even when the "
       "run has to grow the CPU memory arena.",
       "observed by this check; the env must outlive every session",
       crash=True)
def run_after_release(ctx: Ctx) -> str:
    a = ctx.api
    env = _env(ctx)
    sess = ctx.session(models.mlp_model(), env=env, release=False)
    small = ctx.floats([0.1] * 64, [2, 32])
    ctx.run(sess, {"x": small}, ["y"])
    a.ReleaseEnv(env)
    ctx.step("last ReleaseEnv done; Run with the same input size")
    _, err1 = ctx.try_run(sess, {"x": small}, ["y"])
    big = ctx.floats([0.1] * (4096 * 32), [4096, 32])
    ctx.step("same-size Run returned; Run with an input 2048x larger (the BFC arena must grow, "
             "and growing logs through the env's logger)")
    _, err2 = ctx.try_run(sess, {"x": big}, ["y"])
    ctx.step("both Runs returned; releasing the session")
    a.ReleaseSession(sess)
    return "no crash" + "".join(f" (Run {i} returned {e[1][:80]})" for i, e in
                                ((1, err1), (2, err2)) if e)


@check("env.recreate-after-release",
       "After the last ReleaseEnv, CreateEnv makes a new env that can create and run sessions.",
       "none", child=True)
def recreate(ctx: Ctx) -> str:
    a = ctx.api
    env = _env(ctx)
    _add_once(ctx, env)
    a.ReleaseEnv(env)
    ctx.step("released the env; creating a new one")
    env2 = _env(ctx)
    ctx.step("new env created; running")
    got = _add_once(ctx, env2)
    if got != [11.0, 22.0]:
        raise Fail(f"wrong result {got}")
    return "a new env works"


# A fresh interpreter: load the library, CreateEnv, fork; the child leaves through exit(), so
# the C exit handlers (ORT's static destructors) run; the parent reports whether it ended.
_FORK_EXIT = r"""
import os, sys, time
import ortc
from ortc._ffi import ffi
from ortc._loader import api
ortc.load(sys.argv[1])
a = api()
before = len(os.listdir("/proc/self/task"))
out = ffi.new("OrtEnv**")
st = a.CreateEnv(3, b"fork", out)
assert st == ffi.NULL, "CreateEnv failed"
started = len(os.listdir("/proc/self/task")) - before
pid = os.fork()
if pid == 0:
    sys.exit(0)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    if os.waitpid(pid, os.WNOHANG)[0]:
        print("exited", started)
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    print("hung", started)
"""

#: environment variables under which ORT's telemetry stays off by itself (ORT checks for CI):
#: a run that tests ORT's default drops them
TELEMETRY_QUIETING = ("ORT_DISABLE_TELEMETRY", "CI", "CONTINUOUS_INTEGRATION", "GITHUB_ACTIONS",
             "TF_BUILD", "GITLAB_CI", "JENKINS_URL", "TRAVIS", "CIRCLECI", "APPVEYOR",
             "BUILDKITE", "TEAMCITY_VERSION", "CODEBUILD_BUILD_ID")


def _fork_exit(ctx: Ctx, extra: dict[str, str]) -> tuple[str, str]:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in TELEMETRY_QUIETING}
    env.update(extra)
    proc = subprocess.run([sys.executable, "-c", _FORK_EXIT, ctx.info.path, "5"],
                          capture_output=True, text=True, env=env, timeout=120)
    words = proc.stdout.split()
    if proc.returncode or len(words) != 2:
        raise Fail(f"the forking process failed (exit {proc.returncode}): "
                   f"{short(proc.stderr, 300)}")
    return words[0], words[1]


@check("env.fork-child-exits",
       "A child forked after CreateEnv exits normally when it ends through exit() (ORT's exit "
       "handlers run in the child).",
       "observed by this check: on 1.29 and later the telemetry uploader ORT starts in "
       "CreateEnv (a background thread) leaves the child hanging in ORT's exit handlers; "
       "ORT_DISABLE_TELEMETRY=1 set before CreateEnv avoids it (ortc sets it, ortc/env.py)",
       child=True, timeout=300)
def fork_child_exits(ctx: Ctx) -> str:
    default, started = _fork_exit(ctx, {})
    if default == "exited":
        return f"the child exited (CreateEnv started {started} thread(s))"
    quiet, quiet_started = _fork_exit(ctx, {"ORT_DISABLE_TELEMETRY": "1"})
    raise Known(f"the child hung in exit() until killed after 5 s (CreateEnv started {started} "
                f"thread(s)); with ORT_DISABLE_TELEMETRY=1 it {quiet} (CreateEnv started "
                f"{quiet_started})")


def _logger(ctx: Ctx, sink: list[tuple[int, int, str]]) -> Any:
    def log(_param: Any, severity: int, _category: Any, _logid: Any, _where: Any,
            message: Any) -> None:
        sink.append((threading.get_native_id(), int(severity), ctx.c_string(message)[:80]))

    return ctx.keep(ctx.ffi.callback("OrtLoggingFunction", log))


@check("env.logger-first-wins",
       "The logger of the first CreateEnvWithCustomLogger receives the log; a later call's "
       "logger is never called.", CREATE_ENV_DOC, child=True)
def logger_first(ctx: Ctx) -> str:
    a = ctx.api
    first: list[Any] = []
    second: list[Any] = []
    e1 = ctx.out(a.CreateEnvWithCustomLogger, "OrtEnv*", _logger(ctx, first), ctx.ffi.NULL, 0,
                 b"first")
    e2 = ctx.out(a.CreateEnvWithCustomLogger, "OrtEnv*", _logger(ctx, second), ctx.ffi.NULL, 0,
                 b"second")
    if e1 != e2:
        raise Fail("the second call returned another env")
    _add_once(ctx, e1)
    if not first:
        raise Fail("the first logger received nothing at VERBOSE")
    if second:
        raise Fail(f"the second logger was called {len(second)} times")
    return f"first logger: {len(first)} messages; second: none"


@check("env.logger-caller-threads",
       "The env logger is called on each thread that calls into ORT, so concurrently from "
       "several threads.",
       "https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/session/"
       "user_logging_sink.h (no lock)",
       child=True)
def logger_threads(ctx: Ctx) -> str:
    a = ctx.api
    sink: list[tuple[int, int, str]] = []
    env = ctx.out(a.CreateEnvWithCustomLogger, "OrtEnv*", _logger(ctx, sink), ctx.ffi.NULL, 0,
                  b"threads")
    model = models.add_model((2,))
    errors: list[str] = []
    idents: list[int] = []

    def worker() -> None:
        idents.append(threading.get_native_id())
        try:
            so = ctx.options()
            sess, err = ctx.try_session(model, so, env=env)
            if err:
                errors.append(err[1])
            else:
                a.ReleaseSession(sess)
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    join_all(threads)
    if errors:
        raise Fail("; ".join(errors)[:300])
    callers = {tid for tid, _, _ in sink}
    hit = callers & set(idents)
    if len(hit) < 2:
        raise Fail(f"messages from {len(hit)} of the 3 creating threads")
    return f"{len(sink)} messages from {len(callers)} OS threads, {len(hit)} of them callers"


@check("env.global-thread-pools",
       "An env with global thread pools runs a session that disabled per-session threads.",
       "https://onnxruntime.ai/docs/performance/tune-performance/threading.html",
       slots=("CreateEnvWithGlobalThreadPools", "DisablePerSessionThreads"), child=True)
def global_pools(ctx: Ctx) -> str:
    a = ctx.api
    tp = ctx.out(a.CreateThreadingOptions, "OrtThreadingOptions*")
    ctx.ok(a.SetGlobalIntraOpNumThreads(tp, 2))
    ctx.ok(a.SetGlobalInterOpNumThreads(tp, 1))
    ctx.ok(a.SetGlobalSpinControl(tp, 0))
    ctx.ok(a.SetGlobalDenormalAsZero(tp))
    env = ctx.out(a.CreateEnvWithGlobalThreadPools, "OrtEnv*", 3, b"global", tp)
    a.ReleaseThreadingOptions(tp)  # copied by ORT
    so = ctx.out(a.CreateSessionOptions, "OrtSessionOptions*")
    ctx.ok(a.DisablePerSessionThreads(so))
    sess = ctx.session(models.add_model((2,)), so, env=env)
    a.ReleaseSessionOptions(so)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    return "Run on the global pools works; threading options released after creation"


@check("env.per-session-threads-need-global",
       "DisablePerSessionThreads on an env without global thread pools makes session creation "
       "fail rather than run without threads.", "none",
       slots=("DisablePerSessionThreads",), child=True)
def per_session_need_global(ctx: Ctx) -> str:
    a = ctx.api
    env = _env(ctx)
    so = ctx.options()
    ctx.ok(a.DisablePerSessionThreads(so))
    sess, err = ctx.try_session(models.add_model((2,)), so, env=env)
    if err is None:
        a.ReleaseSession(sess)
        raise Known("session creation succeeded without any thread pool")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("env.update-log-level",
       "UpdateEnvWithCustomLogLevel changes the env logger's threshold on a live env.",
       "onnxruntime_c_api.h UpdateEnvWithCustomLogLevel", slots=("UpdateEnvWithCustomLogLevel",),
       child=True)
def update_level(ctx: Ctx) -> str:
    a = ctx.api
    sink: list[Any] = []
    env = ctx.out(a.CreateEnvWithCustomLogger, "OrtEnv*", _logger(ctx, sink), ctx.ffi.NULL, 4,
                  b"level")
    _add_once(ctx, env)
    quiet = len(sink)
    ctx.ok(a.UpdateEnvWithCustomLogLevel(env, 0))
    _add_once(ctx, env)
    loud = len(sink) - quiet
    if loud == 0:
        raise Fail(f"no messages after lowering the level to VERBOSE (FATAL gave {quiet})")
    return f"FATAL: {quiet} messages; after VERBOSE: {loud}"


@check("env.telemetry-toggles", "EnableTelemetryEvents and DisableTelemetryEvents return OK.",
       "onnxruntime_c_api.h")
def telemetry(ctx: Ctx) -> str:
    a = ctx.api
    ctx.ok(a.DisableTelemetryEvents(ctx.env))
    ctx.ok(a.EnableTelemetryEvents(ctx.env))
    ctx.ok(a.DisableTelemetryEvents(ctx.env))
    if ctx.has("SetLanguageProjection"):
        ctx.ok(a.SetLanguageProjection(ctx.env, 0))  # ORT_PROJECTION_C
    return "both OK (left disabled); SetLanguageProjection(C) OK"


@check("env.create-with-options",
       "CreateEnvWithOptions (API 24) creates a working env from an options struct with a "
       "custom logger.", "onnxruntime_c_api.h OrtEnvCreationOptions",
       slots=("CreateEnvWithOptions",), child=True)
def env_with_options(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sink: list[Any] = []
    opts: Any = ffi.new("OrtEnvCreationOptions*")  # fields set by name
    opts.version = ctx.api_version
    opts.logging_severity_level = 0
    logid = ctx.keep(ffi.new("char[]", b"withopts"))
    opts.log_id = logid
    opts.custom_logging_function = _logger(ctx, sink)
    opts.custom_logging_param = ffi.NULL
    opts.threading_options = ffi.NULL
    opts.config_entries = ffi.NULL
    env = ctx.out(a.CreateEnvWithOptions, "OrtEnv*", opts)
    got = _add_once(ctx, env)
    if got != [11.0, 22.0]:
        raise Fail(f"wrong result {got}")
    if not sink:
        raise Fail("the custom logger got nothing at VERBOSE")
    return f"works; logger got {len(sink)} messages"


@check("env.global-custom-threads", "An env with global thread pools and a custom logger "
       "creates its pool threads through custom create/join functions, and sessions run on it.",
       "onnxruntime_c_api.h SetGlobalCustomCreateThreadFn", child=True,
       slots=("CreateEnvWithCustomLoggerAndGlobalThreadPools", "SetGlobalCustomCreateThreadFn",
              "SetGlobalCustomJoinThreadFn", "SetGlobalCustomThreadCreationOptions"))
def global_custom_threads(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    made: list[threading.Thread] = []

    def create(_opts: Any, worker: Any, param: Any) -> Any:
        t = threading.Thread(target=lambda: worker(param), daemon=True)
        made.append(t)
        t.start()
        return ffi.cast("OrtCustomThreadHandle", len(made))

    def join(handle: Any) -> None:
        made[int(ffi.cast("uintptr_t", handle)) - 1].join()

    cf = ctx.keep(ffi.callback("OrtCustomCreateThreadFn", create))
    jf = ctx.keep(ffi.callback("OrtCustomJoinThreadFn", join))
    tp = ctx.out(a.CreateThreadingOptions, "OrtThreadingOptions*")
    ctx.ok(a.SetGlobalIntraOpNumThreads(tp, 2))
    ctx.ok(a.SetGlobalInterOpNumThreads(tp, 1))
    ctx.ok(a.SetGlobalCustomCreateThreadFn(tp, cf))
    ctx.ok(a.SetGlobalCustomThreadCreationOptions(tp, ffi.NULL))
    ctx.ok(a.SetGlobalCustomJoinThreadFn(tp, jf))
    sink: list[Any] = []
    env = ctx.out(a.CreateEnvWithCustomLoggerAndGlobalThreadPools, "OrtEnv*",
                  _logger(ctx, sink), ffi.NULL, 3, b"custom", tp)
    a.ReleaseThreadingOptions(tp)
    so = ctx.out(a.CreateSessionOptions, "OrtSessionOptions*")
    ctx.ok(a.DisablePerSessionThreads(so))
    sess = ctx.session(models.add_model((2,)), so, env=env, release=False)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    a.ReleaseSession(sess)
    a.ReleaseSessionOptions(so)
    if not made or got != [4.0, 6.0]:
        raise Fail(f"{len(made)} threads made; result {got}")
    return f"{len(made)} pool thread(s) made by the custom function; Run works"


@check("env.thread-affinity-option", "SetGlobalIntraOpThreadAffinity accepts one processor "
       "list per pool thread beyond the caller's.",
       "onnxruntime_c_api.h SetGlobalIntraOpThreadAffinity",
       slots=("SetGlobalIntraOpThreadAffinity",))
def thread_affinity(ctx: Ctx) -> str:
    a = ctx.api
    tp = ctx.out(a.CreateThreadingOptions, "OrtThreadingOptions*")
    ctx.defer(a.ReleaseThreadingOptions, tp)
    ctx.ok(a.SetGlobalIntraOpNumThreads(tp, 2))
    ctx.ok(a.SetGlobalIntraOpThreadAffinity(tp, b"1"))
    return "'1' accepted for 2 intra-op threads"


@check("env.thread-pool-callbacks", "Thread-pool work callbacks set on the env "
       "(SetPerSessionThreadPoolCallbacks, API 25) see enqueue, start and stop of the work of a "
       "later session's intra-op pool.", "onnxruntime_c_api.h SetPerSessionThreadPoolCallbacks",
       child=True, slots=("SetPerSessionThreadPoolCallbacks",))
def pool_callbacks(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    env = _env(ctx)
    events: list[str] = []
    lock = threading.Lock()

    def note(kind: str) -> None:
        with lock:
            events.append(kind)

    def enqueue(_ctx: Any) -> Any:
        note("enqueue")
        return ffi.NULL

    fields = dict(ffi.typeof("OrtThreadPoolCallbacksConfig").fields)
    cfg = ctx.keep(ffi.new("OrtThreadPoolCallbacksConfig*"))
    cfg.version = ctx.api_version
    cfg.on_enqueue = ctx.keep(ffi.callback(fields["on_enqueue"].type, enqueue))
    cfg.on_start_work = ctx.keep(ffi.callback(fields["on_start_work"].type,
                                              lambda _c, _d: note("start")))
    cfg.on_stop_work = ctx.keep(ffi.callback(fields["on_stop_work"].type,
                                             lambda _c, _d: note("stop")))
    cfg.on_abandon = ctx.keep(ffi.callback(fields["on_abandon"].type,
                                           lambda _c, _d: note("abandon")))
    cfg.user_context = ffi.NULL
    err = ctx.status(a.SetPerSessionThreadPoolCallbacks(env, cfg))
    if err:
        if code_name(err[0]) == "NOT_IMPLEMENTED":
            raise Known(f"the slot exists but this build lacks the feature: {short(err[1])}")
        raise Fail(f"{code_name(err[0])}: {short(err[1])}")
    so = ctx.options(intra=2)
    sess = ctx.session(models.mlp_model(width=64), so, env=env)
    x = ctx.floats([0.01] * (256 * 64), [256, 64])
    for _ in range(3):
        ctx.run(sess, {"x": x}, ["y"])
    counts = {k: events.count(k) for k in ("enqueue", "start", "stop", "abandon")}
    if not counts["enqueue"] or counts["start"] != counts["stop"]:
        raise Known(f"callback counts {counts}")
    return f"callback counts {counts}"


@check("env.concurrent-create-release", "Threads that each create and release the env over "
       "and over, while another reference is held, all get the one OrtEnv and leave it usable.",
       CREATE_ENV_DOC, child=True, crosses=("OrtEnv",))
def concurrent_create_release(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    held = _env(ctx)
    seen: set[int] = set()
    errors: list[str] = []

    def worker() -> None:
        try:
            for _ in range(200):
                box = ffi.new("OrtEnv**")
                st = ctx.status(a.CreateEnv(3, b"conf", box))
                if st:
                    errors.append(st[1])
                    return
                seen.add(int(ffi.cast("uintptr_t", box[0])))
                a.ReleaseEnv(box[0])
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    join_all(threads)
    if errors:
        raise Fail("; ".join(errors)[:300])
    if seen != {int(ffi.cast("uintptr_t", held))}:
        raise Fail(f"{len(seen)} distinct env pointers")
    got = _add_once(ctx, held)
    if got != [11.0, 22.0]:
        raise Fail(f"a run on the held env gave {got}")
    return "800 create/release pairs on 4 threads: one env; a run afterwards is right"
