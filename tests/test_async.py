"""RunAsync: results through a Future, completion on an ORT thread, lifetimes while in flight."""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import numpy as np
import pytest

import models
import ortc
from ortc._callbacks import pending_jobs


@pytest.fixture
def mlp() -> ortc.Session:
    return ortc.Session(models.mlp_model(3, 32, "batch"), intra_op_num_threads=2)


def test_run_async_matches_run(mlp) -> None:
    x = np.random.default_rng(0).standard_normal((8, 32)).astype(np.float32)
    expected = mlp.run(None, {"x": x})
    futures = [mlp.run_async(None, {"x": x}) for _ in range(8)]
    for f in futures:
        [y] = f.result(timeout=60)
        np.testing.assert_array_equal(y, expected[0])
    assert pending_jobs() == 0


def test_completion_runs_on_an_ort_thread(mlp) -> None:
    from ortc import _callbacks

    seen: list[int] = []
    real = _callbacks.AsyncJob.complete

    def spy(self, *args):  # type: ignore[no-untyped-def]
        seen.append(threading.get_ident())
        return real(self, *args)

    _callbacks.AsyncJob.complete = spy  # type: ignore[method-assign]
    try:
        mlp.run_async(None, {"x": np.ones((2, 32), np.float32)}).result(timeout=60)
    finally:
        _callbacks.AsyncJob.complete = real  # type: ignore[method-assign]
    assert seen and seen[0] != threading.get_ident()


def test_errors_arrive_through_the_future(mlp) -> None:
    f = mlp.run_async(None, {"x": np.ones((2, 31), np.float32)})
    with pytest.raises(ortc.InvalidArgument):
        f.result(timeout=60)
    with pytest.raises(ortc.InvalidArgument, match="unknown input name"):
        mlp.run_async(None, {"nope": np.ones((2, 32), np.float32)})


def test_one_intra_op_thread_is_refused_at_once() -> None:
    s = ortc.Session(models.add_model(), intra_op_num_threads=1)
    one = np.ones(1, np.float32)
    with pytest.raises(ortc.OrtError, match="RunAsync"):
        s.run_async(None, {"a": one, "b": one})
    assert pending_jobs() == 0


def test_close_while_in_flight_defers_the_release() -> None:
    from ortc._ffi import ffi

    s = ortc.Session(models.loop_chain_model(128), intra_op_num_threads=2)
    n = np.array(models.loop_iterations_for(s, 1.0, 128), np.int64)  # about 1 s here
    f = s.run_async(None, {"x": np.ones((128, 128), np.float32), "n": n})
    s.close()
    assert s.closed
    assert not f.done()  # still running: the C session must not have been released
    assert s._ptr != ffi.NULL and s._pending
    [y] = f.result(timeout=120)
    assert y.shape == (128, 128)
    for _ in range(200):  # the deferred release runs on ortc's releaser thread
        if s._ptr == ffi.NULL:
            break
        threading.Event().wait(0.05)
    assert s._ptr == ffi.NULL and not s._children and not s._others


@pytest.mark.parametrize("mode", ["strict", "serialize"])
def test_the_caller_of_run_async_cannot_write_what_the_run_reads(mode: str) -> None:
    """run_async's holds on its input Values and run options are the job's, not the calling
    thread's: the caller's own fill() of an input while the run reads it is refused (strict) or
    waits for the run (serialize), as another thread's would be. As the caller's entries they
    passed as re-entry, and the run read the new values (found from outside: 20 of 20 runs
    gave other outputs)."""
    s = ortc.Session(models.loop_chain_model(128), intra_op_num_threads=2)
    n = models.loop_iterations_for(s, 0.3, 128)
    ones = np.ones((128, 128), np.float32)
    want = s.run(None, {"x": ones, "n": np.array(n, np.int64)})[0]
    old = ortc.set_thread_checks(mode)
    try:
        x = ortc.Value.from_numpy(ones.copy())
        ro = ortc.RunOptions()
        f = s.run_async(None, {"x": x, "n": ortc.Value.from_numpy(np.array(n, np.int64))}, ro)
        assert not f.done()
        if mode == "strict":
            with pytest.raises(ortc.ConcurrentUseError, match="a run_async run still uses it"):
                x.fill(100.0)
            with pytest.raises(ortc.ConcurrentUseError):
                ro.tag = "other"  # an exclusive setter of the run's options
        else:
            # waits until the job has let go of x; the holds end just before the Future is
            # completed, so the Future may still be pending here. Had fill() not waited, the
            # run would have read 100s and the result below would differ.
            x.fill(100.0)
        np.testing.assert_array_equal(f.result(timeout=120)[0], want)
        x.fill(1.0)  # the run is over: it holds nothing (its holds end before its result)
        ro.tag = "free"
        assert x.numpy()[0, 0] == 1.0
    finally:
        ortc.set_thread_checks(old)


def test_a_run_async_input_is_free_for_any_thread_once_its_future_is_done() -> None:
    """The holds of a run_async end before its Future completes: another thread that waited
    for the result may write the input at once (found from outside: refused 136-193 times in
    200 while the holds ended on ortc's releaser thread, after the result)."""
    s = ortc.Session(models.add_model(np.float32, [3]), intra_op_num_threads=2)
    refused = []
    for _ in range(200):
        a = ortc.Value.from_numpy(np.ones(3, np.float32))
        f = s.run_async(None, {"a": a, "b": a})

        def other() -> None:
            assert f.result(timeout=30)[0].tolist() == [2, 2, 2]
            try:
                a.fill(0.0)
            except ortc.ConcurrentUseError as exc:
                refused.append(str(exc))

        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert not refused, (len(refused), refused[:1])


def test_asyncio_wrap(mlp) -> None:
    async def main() -> list[np.ndarray]:
        return await asyncio.wrap_future(mlp.run_async(None, {"x": np.ones((1, 32),
                                                                           np.float32)}))

    [y] = asyncio.run(main())
    assert y.shape == (1, 32)


def test_a_forked_child_does_not_wait_for_the_parents_runs_in_flight() -> None:
    """A run_async in flight when the process forks goes on in the parent only: its completion
    never comes in the child, which used to wait for it at exit (30 s per run). The child
    forgets the parent's runs; the parent's Future still completes."""
    from conftest import run_python

    code = r"""
import os, sys, time, numpy as np, ortc, models
from ortc._callbacks import pending_jobs
s = ortc.Session(models.loop_chain_model(64), intra_op_num_threads=2)
n = models.loop_iterations_for(s, 1.0, 64)
f = s.run_async(None, {"x": np.ones((64, 64), np.float32), "n": np.array(n, np.int64)})
pid = os.fork()
if pid == 0:
    print("child pending", pending_jobs(), flush=True)
    sys.exit(0)
end = time.monotonic() + 25  # the old drain waited 30 s for the run
while time.monotonic() < end:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print("child exited", os.waitstatus_to_exitcode(status), flush=True)
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    print("child still waiting", flush=True)
print("parent result", f.result(60)[0].shape)
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["child pending 0", "child exited 0",
                                        "parent result (64, 64)"], proc.stdout


def test_the_interpreter_waits_for_a_completion_still_running_python_at_exit() -> None:
    """A Future's done-callback runs on ORT's thread, after the result is set; when the main
    thread exits meanwhile, the exit waits for it. Without that wait the callback's thread asked
    for the GIL during finalization, Python ended it with pthread_exit, and the unwinding through
    ORT's thread pool aborted the process ("FATAL: exception not rethrown")."""
    from conftest import run_python

    code = r"""
import threading, time, numpy as np, ortc, models
s = ortc.Session(models.loop_chain_model(64), intra_op_num_threads=2)
n = models.loop_iterations_for(s, 0.3, 64)
f = s.run_async(None, {"x": np.ones((64, 64), np.float32), "n": np.array(n, np.int64)})
def busy(fut):
    on = "main" if threading.current_thread() is threading.main_thread() else "another"
    t = time.monotonic()
    while time.monotonic() - t < 0.5:  # Python, asking for the GIL again and again
        pass
    print("callback done on", on, "thread", flush=True)
f.add_done_callback(busy)
print("result", f.result(30)[0].shape, flush=True)
"""
    for _ in range(2):
        proc = run_python(code)
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
        assert sorted(proc.stdout.splitlines()) == ["callback done on another thread",
                                                    "result (64, 64)"], proc.stdout


def test_a_session_dropped_after_run_async_is_released_without_close() -> None:
    """The releaser thread kept the last job's release (the session's _child_released) while
    it waited for the next: a session dropped after its last run_async stayed alive, with its
    memory (+581 MB with a 200 MB model), until some other run_async. Dropped before the run
    completes, after, with the Future kept or not, with a failing run, or through ortc.compat:
    the session goes when its last reference does and the run is over, without a collection."""
    from conftest import run_python

    code = r"""
import gc, json, threading, time, weakref, numpy as np, ortc, ortc.compat as ort, models
gc.disable()  # no collection may be what lets it go
x = np.ones(3, np.float32)
model = models.add_model(np.float32, [3])
def released(ref):
    end = time.monotonic() + 10
    while ref() is not None and time.monotonic() < end:
        time.sleep(0.005)  # the completion ends on ORT's thread, its releases on ortc's
    return ref() is None and "Session" not in ortc.live_handles()
out = {}
s = ortc.Session(model)
f = s.run_async(None, {"a": x, "b": x})
f.result()
ref = weakref.ref(s); del s
out["after the result"] = released(ref)
s = ortc.Session(models.loop_chain_model(32), intra_op_num_threads=2)
n = models.loop_iterations_for(s, 0.3, 32)
f = s.run_async(None, {"x": np.ones((32, 32), np.float32), "n": np.array(n, np.int64)})
ref = weakref.ref(s); del s
out["alive while it runs"] = ref() is not None
f.result()
out["in flight, then done"] = released(ref)
s = ortc.Session(models.loop_chain_model(32), intra_op_num_threads=2)
f = s.run_async(None, {"x": np.ones((32, 32), np.float32), "n": np.array(n * 100, np.int64)},
                timeout=0.05)
out["failed run"] = type(f.exception(10)).__name__
ref = weakref.ref(s); del s, f
out["after a failed run"] = released(ref)
s = ortc.Session(model)
try:
    s.run_async(None, {"a": x, "b": np.ones(3, np.float64)})
except ortc.InvalidArgument:
    pass
ref = weakref.ref(s); del s
out["after a refused call"] = released(ref)
sess = ort.InferenceSession(model)
called = threading.Event()
sess.run_async(None, {"a": x, "b": x}, lambda res, data, err: called.set(), None)
called.wait(10)
ref = weakref.ref(sess._native); del sess
out["compat"] = released(ref)
print(json.dumps(out))
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    assert json.loads(proc.stdout.splitlines()[-1]) == {
        "after the result": True, "alive while it runs": True, "in flight, then done": True,
        "failed run": "RunTimeout", "after a failed run": True, "after a refused call": True,
        "compat": True}


def _long_run(seconds: float) -> tuple[ortc.Session, dict[str, np.ndarray]]:
    s = ortc.Session(models.loop_chain_model(128), intra_op_num_threads=2)
    n = models.loop_iterations_for(s, seconds, 128)
    return s, {"x": np.ones((128, 128), np.float32), "n": np.array(n, np.int64)}


def test_cancelling_the_future_of_a_run_async_stops_the_run() -> None:
    """A run_async given no run options runs under options of its own, and Future.cancel()
    terminates them: the run stops (its inputs and session let go as after any run), the
    Future is cancelled. Before, cancel() returned True and the run went on to its end."""
    import time

    s, feeds = _long_run(20.0)  # about 20 s if nothing stopped it
    f = s.run_async(None, feeds)
    time.sleep(0.2)
    t0 = time.perf_counter()
    assert f.cancel()
    assert f.cancelled()
    for _ in range(400):  # the completion, after ORT saw the terminate, lets the job go
        if pending_jobs() == 0:
            break
        time.sleep(0.025)
    assert pending_jobs() == 0
    assert time.perf_counter() - t0 < 10.0  # stopped, not run to its end
    # the session runs again, and a run_async that was not cancelled completes
    [y] = s.run_async(None, {"x": feeds["x"], "n": np.array(2, np.int64)}).result(timeout=60)
    assert y.shape == (128, 128)
    s.close()


def test_cancelling_a_run_async_on_shared_run_options_stops_it_alone() -> None:
    """With the caller's run options, which another run uses at once, cancel() stops the
    cancelled run only (it runs on a stand-in for the options): the other run completes, and
    the options still serve runs; the caller's terminate() reaches a stand-in too."""
    import time

    s, feeds = _long_run(3.0)
    ro = ortc.RunOptions(tag="shared")
    cancelled = s.run_async(None, feeds, ro)
    other = s.run_async(None, {"x": feeds["x"], "n": feeds["n"] // 10}, ro)
    time.sleep(0.1)
    assert cancelled.cancel() and cancelled.cancelled()
    [y] = other.result(timeout=120)
    assert y.shape == (128, 128) and not other.cancelled()
    [y] = s.run_async(None, {"x": feeds["x"], "n": np.array(2, np.int64)}, ro).result(60)
    assert y.shape == (128, 128)
    stopped = s.run_async(None, feeds, ro)
    time.sleep(0.1)
    ro.terminate()
    with pytest.raises(ortc.Fail):
        stopped.result(timeout=60)
    s.close()


def test_a_done_run_async_future_is_not_cancelled() -> None:
    one = np.ones(1, np.float32)
    s = ortc.Session(models.add_model(), intra_op_num_threads=2)
    f = s.run_async(None, {"a": one, "b": one})
    [c] = f.result(timeout=60)
    assert not f.cancel() and not f.cancelled() and c[0] == 2.0


def test_an_asyncio_timeout_on_a_run_async_stops_the_run() -> None:
    """``asyncio.wait_for(asyncio.wrap_future(session.run_async(...)), t)`` cancels the
    wrapped Future at the timeout, which stops the run (it went on to its end before)."""
    import time

    s, feeds = _long_run(20.0)

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.wrap_future(s.run_async(None, feeds)), 0.2)

    t0 = time.perf_counter()
    asyncio.run(main())
    for _ in range(400):
        if pending_jobs() == 0:
            break
        time.sleep(0.025)
    assert pending_jobs() == 0 and time.perf_counter() - t0 < 10.0
    s.close()


def test_cancels_racing_their_runs_completion_leak_nothing() -> None:
    """Future.cancel() of short runs, some before ORT finished, some after: each Future is
    either cancelled or holds the right result, every job ends, and no run options of the
    runs' own are left (a cancel that lost to the completion refuses; one that won stopped a
    run whose options its completion then closes)."""
    import time

    s = ortc.Session(models.add_model(), intra_op_num_threads=2)
    one = np.ones(1, np.float32)
    gc.collect()  # (what earlier tests left for the collector is not counted against this one)
    base = ortc.live_handles().get("RunOptions", 0)
    outcomes = set()
    for i in range(600):
        f = s.run_async(None, {"a": one, "b": one})
        if i % 3 == 0:
            time.sleep(0)
        if f.cancel():
            assert f.cancelled()
            outcomes.add("cancelled")
        else:
            assert f.result(timeout=30)[0][0] == 2.0
            outcomes.add("done")
    del f  # (a cancelled run's own options go with its Future)
    for _ in range(400):
        if pending_jobs() == 0 and ortc.live_handles().get("RunOptions", 0) <= base:
            break
        time.sleep(0.025)
    assert pending_jobs() == 0
    assert ortc.live_handles().get("RunOptions", 0) <= base
    s.close()


_EXIT_WITH_RUNS_IN_FLIGHT = r"""
import os, signal, sys, threading, time, numpy as np, ortc, ortc._callbacks, ortc.compat, models
mode = %(mode)r
if mode == "bounded":
    ortc._callbacks.EXIT_WAIT = 0.2  # (30 s by default)
endless = {"x": np.full((64, 64), 0.01, np.float32), "n": np.array(10 ** 9, np.int64)}
s = ortc.Session(models.loop_chain_model(64), intra_op_num_threads=2)
s.run_async(None, endless).add_done_callback(
    lambda f: os.write(1, f"native {type(f.exception()).__name__}\n".encode()))
so = ortc.compat.SessionOptions()
so.intra_op_num_threads = 2
c = ortc.compat.InferenceSession(models.loop_chain_model(64), so,
                                 providers=["CPUExecutionProvider"])
c.run_async(None, endless, lambda res, data, err: os.write(1, f"{data} {bool(err)}\n".encode()),
            "compat")
if mode == "ctrl-c":
    # a daemon timer: the exit does not wait for it, its signal comes during ortc's exit wait
    t = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    t.daemon = True
    t.start()
os.write(1, b"exiting\n")  # (one write each: the lines come from three threads)
"""


@pytest.mark.parametrize("mode", ["bounded", "ctrl-c"])
def test_the_interpreter_exits_cleanly_with_run_async_runs_that_never_end(mode: str) -> None:
    """A script that ends with run_async runs in flight that outlast the exit's wait for them
    (or is interrupted with Ctrl-C during that wait): the exit stops them, their Futures and
    onnxruntime-style callbacks get the failure, and the process exits 0. The exit used to go
    on into finalization with the runs still going: a completion then called into a dead
    interpreter (SIGSEGV or SIGILL, after a 30 s wait; a Ctrl-C just cut the wait short)."""
    from conftest import run_python

    t = time.monotonic()
    proc = run_python(_EXIT_WITH_RUNS_IN_FLIGHT % {"mode": mode}, timeout=25)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert sorted(proc.stdout.splitlines()) == ["compat True", "exiting", "native Fail"], \
        proc.stdout
    assert time.monotonic() - t < 20
