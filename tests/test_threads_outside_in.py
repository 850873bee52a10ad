"""Multi-threaded applications as onnxruntime users write them, run under ortc.compat and under
native ortc, and where onnxruntime's behaviour is defined, under onnxruntime too: a server's
thread pool sharing one session, a binding per thread (and one shared by mistake), feeds
changed by another thread during a run, sessions closed or dropped while threads run them,
run_async completions calling back into their session, Ctrl-C and deadlines while workers run,
per-thread session caches. Each asserts results, the error class and what its message names,
no crash (risky cases in a child process), no leak (``ortc.live_handles()``) and no hang."""

from __future__ import annotations

import concurrent.futures as cf
import gc
import json
import threading
import time
from typing import Any, Callable

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import models
import ortc
import ortc.compat
from conftest import run_python

#: a small MLP: x [batch, 64] -> y, a few microseconds a run
MLP = models.mlp_model(layers=4, width=64)
#: requests of varying batch sizes, as a server gets them
REQUESTS = [np.random.default_rng(i).standard_normal((1 + i % 5, 64)).astype(np.float32)
            for i in range(120)]
WAIT = 60  # seconds any one wait may take before the test calls it a hang


def _late_read_model(size: int = 64) -> bytes:
    """loop_chain_model (x, n -> y) with a second output ``z = x + 0 * sum(y)``: ``x`` is read
    again after the loop, at the end of the run, so what the run's input holds then shows."""
    proto = onnx.load_from_string(models.loop_chain_model(size))
    graph = proto.graph
    graph.node.extend([helper.make_node("ReduceSum", ["y"], ["s"], keepdims=1),
                       helper.make_node("Mul", ["s", "zero"], ["s0"]),
                       helper.make_node("Add", ["x", "s0"], ["z"])])
    graph.initializer.append(numpy_helper.from_array(np.array(0.0, np.float32), "zero"))
    graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [size, size]))
    return proto.SerializeToString()


class Api:
    """One of the three ways to run a model, with the calls an application makes."""

    def __init__(self, name: str) -> None:
        self.name = name

    def session(self, model: bytes, threads: int = 1) -> Any:
        if self.name == "native":
            return ortc.Session(model, intra_op_num_threads=threads)
        ort: Any = ortc.compat if self.name == "compat" else onnxruntime
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])

    def run(self, sess: Any, names: Any, feeds: Any) -> list[Any]:
        return list(sess.run(names, feeds))

    def bound_run(self, sess: Any, binding: Any, x: np.ndarray) -> np.ndarray:
        """Rebind the input and the output by name, run, copy the output out."""
        if self.name == "native":
            binding.bind_input("x", x)
            binding.bind_output("y")
            sess.run_with_binding(binding)
            out: np.ndarray = binding.get_outputs(True)[0]
            return out
        binding.bind_cpu_input("x", x)
        binding.bind_output("y")
        sess.run_with_iobinding(binding)
        out = binding.copy_outputs_to_cpu()[0]
        return out


OURS = [Api("compat"), Api("native")]
ALL = [*OURS, Api("onnxruntime")]


def _serial(api: Api, sess: Any) -> list[np.ndarray]:
    return [api.run(sess, None, {"x": r})[0] for r in REQUESTS]


def _sessions() -> int:
    return ortc.live_handles().get("Session", 0)


def _base_sessions() -> int:
    """Live sessions before a test, after a collection: sessions earlier tests left to the
    collector would otherwise go in the middle of the test and move its count."""
    gc.collect()
    return _sessions()


@pytest.mark.parametrize("api", ALL, ids=lambda a: a.name)
def test_a_thread_pool_sharing_one_session_gives_the_serial_results(api: Api) -> None:
    """A web server's pool: 8 workers, one session, a request each call; every result is
    bit-identical to the same request run alone, and to onnxruntime's."""
    sess = api.session(MLP)
    serial = _serial(api, sess)
    with cf.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda r: api.run(sess, ["y"], {"x": r})[0], REQUESTS * 3))
    for i, out in enumerate(got):
        assert out.dtype == np.float32 and np.array_equal(out, serial[i % len(REQUESTS)]), i
    reference = onnxruntime.InferenceSession(MLP, providers=["CPUExecutionProvider"])
    for r, mine in zip(REQUESTS[:10], serial):
        assert np.array_equal(reference.run(None, {"x": r})[0], mine)


@pytest.mark.parametrize("api", ALL, ids=lambda a: a.name)
def test_one_binding_per_thread_on_a_shared_session(api: Api) -> None:
    """Each worker keeps its own binding (threading.local), rebinding input and output by name
    per request: every result is the serial one."""
    sess = api.session(MLP)
    serial = _serial(api, sess)
    local = threading.local()

    def request(i: int) -> np.ndarray:
        binding = getattr(local, "binding", None)
        if binding is None:
            binding = local.binding = sess.io_binding()
        return api.bound_run(sess, binding, REQUESTS[i])

    with cf.ThreadPoolExecutor(6) as pool:
        got = list(pool.map(request, range(len(REQUESTS))))
    assert all(np.array_equal(g, s) for g, s in zip(got, serial))


_SHARED_BINDING = r"""
import collections, json, sys, concurrent.futures as cf, numpy as np, ortc, models
import test_threads_outside_in as t
api = t.Api(sys.argv[1] if len(sys.argv) > 1 else %(api)r)
sess = api.session(t.MLP)
serial = t._serial(api, sess)
binding = sess.io_binding()
errors, wrong, right = collections.Counter(), 0, 0
texts = set()
def request(i):
    global wrong, right
    try:
        out = api.bound_run(sess, binding, t.REQUESTS[i %% len(t.REQUESTS)])
    except Exception as e:
        errors[type(e).__name__ + ("/RuntimeError" if isinstance(e, RuntimeError) else "")] += 1
        texts.add(str(e))
        return
    # another request's input, bound between this thread's calls, is no corruption: the
    # result is still some request's result
    if any(out.shape == s.shape and np.array_equal(out, s) for s in serial):
        right += 1
    else:
        wrong += 1
with cf.ThreadPoolExecutor(6) as pool:
    list(pool.map(request, range(600)))
after = api.bound_run(sess, binding, t.REQUESTS[7])
print(json.dumps({"errors": errors, "wrong": wrong, "right": right,
                  "texts": sorted(texts), "after": bool(np.array_equal(after, serial[7]))}))
"""


@pytest.mark.parametrize("api", OURS, ids=lambda a: a.name)
def test_one_binding_shared_by_threads_is_refused_clearly_and_recovers(api: Api) -> None:
    """The common mistake: one binding for the whole pool. onnxruntime then gives wrong results
    and can corrupt its heap (conformance check thread.shared-binding); ortc refuses the
    overlapping calls with ConcurrentUseError (a RuntimeError, as onnxruntime's binding
    errors are) naming the binding, both calls and the fix. In a child process: nothing is
    corrupted, nothing crashes, and the binding works once one thread uses it."""
    proc = run_python(_SHARED_BINDING % {"api": api.name}, timeout=WAIT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(got["errors"]) == {"ConcurrentUseError/RuntimeError"}, got
    assert got["wrong"] == 0 and got["right"] > 0 and got["after"], got
    binding = "IOBinding" if api.name == "compat" else "IoBinding"
    for text in got["texts"]:
        assert text.startswith("IoBinding: ") and "in flight" in text, text
        assert f"{binding}." in text and "use one object per thread" in text, text
        assert "run_async" not in text, text  # (none ran: a call that returned in between)
    assert any("in flight on thread" in text for text in got["texts"]), got["texts"]


@pytest.mark.parametrize("api", ALL, ids=lambda a: a.name)
def test_feeds_changed_by_another_thread_during_a_run(api: Api) -> None:
    """Another thread rebinds the feeds dict's entry (the old array's last reference gone,
    its memory handed out again) and adds a key while the run is in flight: the run computes
    with the array it was given. A write into the fed array itself reaches the run, which
    reads the caller's memory (no copy), in onnxruntime and here alike."""
    size = 64
    sess = api.session(_late_read_model(size))
    n = np.array(models.loop_iterations_for(sess, 0.4, size), np.int64)
    for case in ("rebind", "in place"):
        fed = np.full((size, size), 7.0, np.float32)
        feeds = {"x": fed, "n": n}
        started = threading.Event()
        box: list[Any] = []

        def run() -> None:
            started.set()
            try:
                box.append(api.run(sess, ["z"], feeds)[0])
            except BaseException as e:  # noqa: BLE001 - reported below
                box.append(e)

        junk: list[np.ndarray] = []
        worker = threading.Thread(target=run)
        worker.start()
        assert started.wait(WAIT)
        time.sleep(0.1)  # the run is inside ORT, its loop going
        if case == "rebind":
            del fed
            feeds["x"] = np.full((size, size), -1.0, np.float32)
            feeds["late"] = np.ones(1, np.float32)
            junk += [np.full((size, size), 99.0, np.float32) for _ in range(50)]
            expected = 7.0
        else:
            fed[:] = 3.0
            expected = 3.0
        worker.join(WAIT)
        assert not worker.is_alive()
        [z] = box
        assert isinstance(z, np.ndarray), z
        assert np.unique(z).tolist() == [expected], (case, np.unique(z))
        del junk


def test_closing_a_native_session_while_threads_run_it() -> None:
    """close() while a pool runs the session: refused at once (strict) with
    ConcurrentUseError naming the runs and saying to close after them; every run finishes
    right; the close then releases it (no leak), and a run after it raises ClosedError. With
    'serialize' the close waits for the runs, and a run queued behind it gets ClosedError."""
    size = 64
    x = np.full((size, size), 0.01, np.float32)
    base = _base_sessions()
    sess = ortc.Session(models.loop_chain_model(size), intra_op_num_threads=1)
    n = np.array(models.loop_iterations_for(sess, 0.3, size), np.int64)
    ref = sess.run(None, {"x": x, "n": n})[0]
    with cf.ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(sess.run, None, {"x": x, "n": n}) for _ in range(3)]
        time.sleep(0.1)
        with pytest.raises(ortc.ConcurrentUseError) as info:
            sess.close()
        assert isinstance(info.value, RuntimeError)
        text = str(info.value)
        assert text.startswith("Session.close() while another thread is inside"), text
        assert "(Session.run)" in text and "close it after those calls return" in text, text
        assert all(np.array_equal(f.result(WAIT)[0], ref) for f in futures)
    sess.close()
    assert _sessions() == base
    with pytest.raises(ortc.ClosedError, match="Session is closed"):
        sess.run(None, {"x": x, "n": n})

    previous = ortc.set_thread_checks("serialize")
    try:
        sess = ortc.Session(models.loop_chain_model(size), intra_op_num_threads=1)
        with cf.ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(sess.run, None, {"x": x, "n": n}) for _ in range(2)]
            time.sleep(0.1)
            closing = pool.submit(sess.close)
            time.sleep(0.05)
            late = pool.submit(sess.run, None, {"x": x, "n": n})
            assert all(np.array_equal(f.result(WAIT)[0], ref) for f in futures)
            assert closing.result(WAIT) is None
            with pytest.raises(ortc.ClosedError):
                late.result(WAIT)
    finally:
        ortc.set_thread_checks(previous)
    assert _sessions() == base


def test_a_compat_session_replaced_or_dropped_while_threads_run_it() -> None:
    """set_providers() while a pool runs the session (onnxruntime lets the runs finish), then
    the last reference the application holds dropped while runs are in flight: every run
    gives the right result, and once they are done no session is left (gc disabled: no
    cycle keeps one)."""
    size = 64
    x = np.full((size, size), 0.01, np.float32)
    base = _base_sessions()
    gc.collect()
    gc.disable()
    try:
        sess = ortc.compat.InferenceSession(models.loop_chain_model(size),
                                            providers=["CPUExecutionProvider"])
        n = np.array(models.loop_iterations_for(sess._native, 0.2, size), np.int64)
        ref = sess.run(None, {"x": x, "n": n})[0]
        with cf.ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(sess.run, None, {"x": x, "n": n}) for _ in range(4)]
            time.sleep(0.05)
            sess.set_providers(["CPUExecutionProvider"])
            assert all(np.array_equal(f.result(WAIT)[0], ref) for f in futures)
            assert _sessions() == base + 1  # the replaced one went with its last run
            futures = [pool.submit(sess.run, None, {"x": x, "n": n}) for _ in range(4)]
            time.sleep(0.05)
            del sess
            assert all(np.array_equal(f.result(WAIT)[0], ref) for f in futures)
        del futures
        assert _sessions() == base
    finally:
        gc.enable()


@pytest.mark.parametrize("api", OURS, ids=lambda a: a.name)
def test_the_last_reference_dropped_on_a_worker_thread(api: Api) -> None:
    """The main thread hands its session to a worker and forgets it; the worker runs it and
    drops it: the session is released on that thread, at once (gc disabled)."""
    base = _base_sessions()
    gc.collect()
    gc.disable()
    try:
        sess = api.session(MLP)
        ref = api.run(sess, None, {"x": REQUESTS[0]})[0]
        box: list[Any] = [sess]
        del sess
        seen: list[Any] = []

        def work() -> None:
            s = box.pop()
            seen.append(np.array_equal(api.run(s, None, {"x": REQUESTS[0]})[0], ref))
            del s
            seen.append(_sessions())

        worker = threading.Thread(target=work)
        worker.start()
        worker.join(WAIT)
        assert seen == [True, base]
    finally:
        gc.enable()


@pytest.mark.parametrize("api", ["compat", "onnxruntime"])
def test_run_async_completions_calling_back_into_their_session(api: str) -> None:
    """onnxruntime's run_async(output_names, feeds, callback, user_data): each completion runs
    the session again (synchronously, through a binding made there, and with a new run_async),
    replaces its providers, and the last one drops the last reference to a second session,
    held only by its user_data. Everything completes with the right results, as in
    onnxruntime, and no session is left behind."""
    ort: Any = ortc.compat if api == "compat" else onnxruntime
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2  # (onnxruntime's run_async needs an intra-op pool)
    sess = ort.InferenceSession(MLP, so, providers=["CPUExecutionProvider"])
    x = REQUESTS[3]
    ref = sess.run(None, {"x": x})[0]
    base = _base_sessions()
    log: list[Any] = []
    finished = threading.Event()

    def callback(results: Any, step: int, err: str) -> None:
        try:
            log.append((step, err, np.array_equal(results[0], ref)))
            log.append(np.array_equal(sess.run(None, {"x": x})[0], ref))
            binding = sess.io_binding()
            binding.bind_cpu_input("x", x)
            binding.bind_output("y")
            sess.run_with_iobinding(binding)
            log.append(np.array_equal(binding.copy_outputs_to_cpu()[0], ref))
            if step == 2:
                sess.set_providers(["CPUExecutionProvider"])
            if step < 4:
                sess.run_async(None, {"x": x}, callback, step + 1)
            else:
                other = ort.InferenceSession(MLP, so, providers=["CPUExecutionProvider"])
                other.run_async(None, {"x": x}, last, [other])
        except BaseException as e:  # noqa: BLE001 - reported by the test
            log.append(repr(e))
            finished.set()

    def last(results: Any, holder: list[Any], err: str) -> None:
        log.append(("last", err, np.array_equal(results[0], ref)))
        holder.clear()  # the second session's last reference, inside its own completion
        finished.set()

    sess.run_async(None, {"x": x}, callback, 0)
    assert finished.wait(WAIT)
    assert log == [item for step in range(5) for item in ((step, "", True), True, True)] + \
        [("last", "", True)], log
    if api == "compat":
        deadline = time.monotonic() + WAIT
        while _sessions() > base and time.monotonic() < deadline:  # (released on ORT's thread)
            time.sleep(0.01)
        assert _sessions() == base


def test_native_run_async_completions_calling_back_into_their_session() -> None:
    """Native ortc's run_async gives a Future: a done-callback (on ORT's thread) that runs the
    session again and starts the next run_async, five deep, all right."""
    sess = ortc.Session(MLP, intra_op_num_threads=2)
    x = REQUESTS[3]
    ref = sess.run(None, {"x": x})[0]
    log: list[Any] = []
    finished = threading.Event()

    def chain(step: int) -> Callable[[Any], None]:
        def done(fut: Any) -> None:
            try:
                log.append(np.array_equal(fut.result()[0], ref))
                log.append(np.array_equal(sess.run(None, {"x": x})[0], ref))
                if step < 4:
                    sess.run_async(None, {"x": x}).add_done_callback(chain(step + 1))
                else:
                    finished.set()
            except BaseException as e:  # noqa: BLE001 - reported by the test
                log.append(repr(e))
                finished.set()
        return done

    sess.run_async(None, {"x": x}).add_done_callback(chain(0))
    assert finished.wait(WAIT)
    assert log == [True] * 10, log


_CTRL_C = r"""
import json, os, signal, sys, threading, time, concurrent.futures as cf, numpy as np
import ortc, models
api = sys.argv[1] if len(sys.argv) > 1 else %(api)r
size = 16  # short loop iterations: each worker reads the terminate flag often
model = models.loop_chain_model(size)
if api == "compat":
    import ortc.compat as ort
    so = ort.SessionOptions(); so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    shared = ort.RunOptions()
    run = lambda feeds, ro=None: sess.run(None, feeds, ro)[0]
    native = sess._native
else:
    sess = native = ortc.Session(model, intra_op_num_threads=1)
    shared = ortc.RunOptions()
    run = lambda feeds, ro=None: sess.run(None, feeds, ro)[0]
x = np.full((size, size), 0.01, np.float32)
run({"x": x, "n": np.array(10, np.int64)})  # warmed up: the timing below is the loop's
n = np.array(models.loop_iterations_for(native, 0.5, size), np.int64)
ref = run({"x": x, "n": n})
started = threading.Semaphore(0)
def work(i):
    started.release()
    t0 = time.monotonic()
    out = run({"x": x, "n": n}, shared if i %% 4 else None)
    return bool(np.array_equal(out, ref)), t0, time.monotonic()
out = {}
with cf.ThreadPoolExecutor(4) as pool:
    # 1. Ctrl-C while the main thread runs with the RunOptions the workers use too
    futures = [pool.submit(work, i) for i in range(4)]
    for _ in futures:
        started.acquire()
    threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
    t = time.monotonic()
    try:
        run({"x": x, "n": np.array(10**9, np.int64)}, shared)
        out["main"] = "not stopped"
    except KeyboardInterrupt:
        out["main"] = "KeyboardInterrupt"
    stopped = time.monotonic()
    out["stopped_within"] = stopped - t < 5
    results = [f.result(60) for f in futures]
    out["workers"] = [r[0] for r in results]
    out["overlapped"] = sum(r[1] < stopped < r[2] for r in results)
    # 2. Ctrl-C while the main thread waits for the pool
    futures = [pool.submit(work, i) for i in range(4)]
    threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        [f.result(60) for f in futures]
        out["wait"] = "not stopped"
    except KeyboardInterrupt:
        out["wait"] = "KeyboardInterrupt"
    out["workers_after_wait"] = [f.result(60)[0] for f in futures]
    # 3. the application's own signal handler raising while workers run
    class Shutdown(Exception):
        pass
    def handler(signum, frame):
        raise Shutdown()
    signal.signal(signal.SIGUSR1, handler)
    futures = [pool.submit(work, i) for i in range(4)]
    threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGUSR1)).start()
    try:
        run({"x": x, "n": n}, shared)
        time.sleep(5)
        out["own_handler"] = "not raised"
    except Shutdown:
        out["own_handler"] = "raised"
    out["workers_after_handler"] = [f.result(60)[0] for f in futures]
# 4. still usable, with the shared options too
out["after"] = bool(np.array_equal(run({"x": x, "n": n}, shared), ref))
print(json.dumps(out))
"""


@pytest.mark.parametrize("api", OURS, ids=lambda a: a.name)
def test_ctrl_c_on_the_main_thread_leaves_the_workers_runs_alone(api: str | Api) -> None:
    """Ctrl-C while the main thread runs (with RunOptions the workers' runs share), while it
    waits for a pool, and the application's own signal handler raising: the main thread gets
    its exception; every worker run overlapping it finishes with the right result (the Ctrl-C
    used to terminate the shared options, failing the workers' runs with FAIL, which
    onnxruntime never does: it does not stop runs on Ctrl-C at all)."""
    name = api.name if isinstance(api, Api) else api
    proc = run_python(_CTRL_C % {"api": name}, timeout=WAIT * 2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["main"] == "KeyboardInterrupt" and got["stopped_within"], got
    assert got["workers"] == [True] * 4 and got["overlapped"] >= 1, got
    assert got["wait"] == "KeyboardInterrupt" and got["workers_after_wait"] == [True] * 4, got
    assert got["own_handler"] == "raised" and got["workers_after_handler"] == [True] * 4, got
    assert got["after"], got


def test_a_deadline_stops_its_own_run_not_the_others_sharing_its_options() -> None:
    """A worker's run with timeout= and the RunOptions the other workers use: it raises
    RunTimeout, the others finish right (the deadline used to terminate the shared options).
    The options' own terminate() still reaches a run that has a deadline, and a run with
    terminated options fails at once, deadline or not, on any thread, until unset."""
    size = 64
    x = np.full((size, size), 0.01, np.float32)
    sess = ortc.Session(models.loop_chain_model(size), intra_op_num_threads=1)
    n = np.array(models.loop_iterations_for(sess, 0.4, size), np.int64)
    endless = np.array(10 ** 9, np.int64)
    ref = sess.run(None, {"x": x, "n": n})[0]
    shared = ortc.RunOptions(tag="shared")
    base = ortc.live_handles().get("RunOptions", 0)
    with cf.ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(sess.run, None, {"x": x, "n": n}, shared) for _ in range(3)]
        time.sleep(0.05)
        timed = pool.submit(sess.run, None, {"x": x, "n": endless}, shared, timeout=0.05)
        with pytest.raises(ortc.RunTimeout):
            timed.result(WAIT)
        assert all(np.array_equal(f.result(WAIT)[0], ref) for f in futures)

        # terminate() on the shared options stops a run on them that has a deadline too
        long_run = pool.submit(sess.run, None, {"x": x, "n": endless}, shared, timeout=WAIT)
        time.sleep(0.1)
        t = time.monotonic()
        shared.terminate()
        with pytest.raises(ortc.Fail):
            long_run.result(WAIT)
        assert time.monotonic() - t < WAIT / 2
        for kwargs in ({}, {"timeout": WAIT}):
            with pytest.raises(ortc.Fail):  # terminated options: the run fails at once
                sess.run(None, {"x": x, "n": n}, shared, **kwargs)
            with pytest.raises(ortc.Fail):
                pool.submit(sess.run, None, {"x": x, "n": n}, shared, **kwargs).result(WAIT)
        shared.unset_terminate()
        assert np.array_equal(sess.run(None, {"x": x, "n": n}, shared, timeout=WAIT)[0], ref)
    # each run's stand-in released with its run; the main thread's (kept for its next run with
    # these options) with them
    shared.close()
    assert ortc.live_handles().get("RunOptions", 0) == base - 1


def test_main_thread_runs_keep_the_shared_options_settings() -> None:
    """The main thread's runs with RunOptions of the caller's carry their settings (tag, log
    levels, config entries), also after a setter changes them between runs."""
    sess = ortc.Session(MLP, intra_op_num_threads=1)
    x = REQUESTS[0]
    ref = sess.run(None, {"x": x})[0]
    ro = ortc.RunOptions(tag="first", log_verbosity_level=1)
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert np.array_equal(sess.run(None, {"x": x}, ro)[0], ref)
    copy = ro._main_copy
    assert copy is not None and copy.tag == "first" and copy.log_verbosity_level == 1
    assert copy.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    ro.tag = "second"
    ro.log_severity_level = 3
    assert copy.closed and ro._main_copy is None
    assert np.array_equal(sess.run(None, {"x": x}, ro)[0], ref)
    assert ro._main_copy.tag == "second" and ro._main_copy.log_severity_level == 3
    ro.close()
    assert ro._main_copy is None


@pytest.mark.parametrize("api", OURS, ids=lambda a: a.name)
def test_thread_local_session_caches_are_released_with_their_threads(api: Api) -> None:
    """A session (and a binding) cached per thread in a threading.local, as per-thread caches
    do: when the pool's threads end, every one of them is released, gc disabled."""
    base = _base_sessions()
    bindings = ortc.live_handles().get("IoBinding", 0)  # (an earlier test's may be alive)
    gc.disable()
    try:
        local = threading.local()
        serial = _serial(api, api.session(MLP))

        def request(i: int) -> bool:
            sess = getattr(local, "session", None)
            if sess is None:
                sess = local.session = api.session(MLP)
                local.binding = sess.io_binding()
            out = api.bound_run(sess, local.binding, REQUESTS[i]) if i % 2 else \
                api.run(sess, None, {"x": REQUESTS[i]})[0]
            return bool(np.array_equal(out, serial[i]))

        for _ in range(2):
            with cf.ThreadPoolExecutor(4) as pool:
                assert all(pool.map(request, range(len(REQUESTS))))
            assert _sessions() == base
        threads = [threading.Thread(target=request, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
        assert _sessions() == base
        assert ortc.live_handles().get("IoBinding", 0) == bindings
    finally:
        gc.enable()


_EXIT_WITH_WORKERS_IN_RUNS = r"""
import os, sys, threading, numpy as np, ortc, ortc.compat, models
x = np.full((64, 64), 0.01, np.float32)
endless = {"x": x, "n": np.array(10 ** 9, np.int64)}
native = ortc.Session(models.loop_chain_model(64), intra_op_num_threads=1)
compat = ortc.compat.InferenceSession(models.loop_chain_model(64),
                                      providers=["CPUExecutionProvider"])

def bound():
    binding = native.io_binding()  # (one per thread)
    binding.bind_input("x", x)
    binding.bind_input("n", endless["n"])
    binding.bind_output("y")
    native.run_with_binding(binding)

def work(run):
    try:
        run()
    except Exception as e:  # the exit stops the run: its error, as for any stopped run
        os.write(1, (type(e).__name__ + "\n").encode())

for run in [lambda: native.run(None, endless), lambda: compat.run(None, endless), bound] * 2:
    threading.Thread(target=work, args=(run,), daemon=True).start()
guards = [native._guard, compat._native._guard]
while sum(len(g.calls) for g in guards) < 6:  # every run is inside its guarded call
    threading.Event().wait(0.001)
sys.exit(3)  # (a server's SIGTERM handler, say) with six daemon threads inside ORT
"""


def test_exiting_with_daemon_threads_inside_runs_given_no_run_options() -> None:
    """The process exits (sys.exit) while daemon worker threads are inside long runs to which
    they gave no RunOptions (run, compat's run, run_with_binding): the exit stops them and
    the process ends with its own status. Such runs could not be stopped: the exit went on
    into finalization with them inside ORT, under ORT's static destructors (SIGSEGV or SIGILL
    every time; onnxruntime's binding aborts)."""
    proc = run_python(_EXIT_WITH_WORKERS_IN_RUNS, timeout=WAIT)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-3000:])
    # each stopped run raises ORT's Fail; a daemon thread may be frozen by the finalization
    # before it prints it (the drain waits for the runs to leave ORT, not for the threads)
    assert set(proc.stdout.split()) <= {"Fail"}, proc.stdout
