"""The core's protocols under any interpreter ortc declares: run by tests/test_core_protocols.py
under this CPython, CPython 3.9 and PyPy 3.9 (numpy only, no onnx: models come as files).

    python tests/core_check.py CASE ADD_MODEL ENDLESS_MODEL

CASE is one of:

* ``storm``: a SIGALRM every 300 µs raises KeyboardInterrupt while the main thread runs
  ``run``, ``run_with_values`` (with RunOptions and a Value fed) and ``run_with_binding`` (with
  a Value bound as an output) in turn; afterwards no guard may count a call in flight, every
  exception must have been the KeyboardInterrupt, and another thread must be able to close
  everything.
* ``wakeup``: after ortc's first main-thread run, asyncio installs a signal handler (which sets
  the signal wakeup fd); a Ctrl-C (SIGINT from another thread) must still stop a run of a model
  that never ends, and asyncio's handler must still run for its own signal.
* ``async_setup``: run_async fails at every step between its start and ORT's RunAsync (an
  error injected there); nothing it took may stay in use, and the session's release may not be
  held back.
* ``async_interrupt``: a Ctrl-C (SIGINT) arrives the moment ORT's RunAsync has taken the job,
  before run_async has looked at its status; the run must still complete on ORT's thread and
  give everything back (nothing in use, no child left, no job pending), and the session must
  run again and be released after close.
* ``arguments``: a handle argument a marker names is held for the call: another thread closing
  the RunOptions of a run in flight is refused (strict mode), and the run ends normally.

Prints one JSON object: the interpreter and what the case found.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import sys
import threading
import time
from typing import Any

import numpy as np

import ortc


def python_name() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


def storm(add_model: str) -> dict[str, Any]:
    s = ortc.Session(add_model, intra_op_num_threads=1)
    one = np.ones(4, np.float32)
    v = ortc.Value.from_numpy(one)
    out = ortc.Value.from_numpy(np.zeros(4, np.float32))
    ro = ortc.RunOptions()
    b = s.io_binding()
    b.bind_input("a", one)
    b.bind_input("b", one)
    b.bind_output("c", out)
    # a second binding rebound to Values every call: the marker's entries on a handle
    # argument (the bound Value; the output Value its thread holds)
    rebound = s.io_binding()
    v2 = ortc.Value.from_numpy(one.copy())
    out2 = ortc.Value.from_numpy(np.zeros(4, np.float32))

    def work(k: int) -> None:
        m = k % 4
        if m == 0:
            s.run(None, {"a": one, "b": one})
        elif m == 1:
            s.run_with_values(None, {"a": v, "b": one}, ro)
        elif m == 2:
            s.run_with_binding(b)
        else:
            rebound.bind_input("a", v2)
            rebound.bind_input("b", v2)
            rebound.bind_output("c", out2)
            s.run_with_binding(rebound)

    armed = [False]

    def handler(signum: int, frame: Any) -> None:
        if armed[0]:  # one interrupt per call: the loop's own except clause is not tested
            armed[0] = False
            raise KeyboardInterrupt

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.0003, 0.0003)
    counts = {"completed": 0, "interrupted": 0}
    others: list[str] = []
    t0 = time.time()
    k = 0
    while time.time() - t0 < 3.0 or (min(counts.values()) < 300 and time.time() - t0 < 60):
        k += 1
        try:
            armed[0] = True
            work(k)
            armed[0] = False
            counts["completed"] += 1
        except KeyboardInterrupt:
            armed[0] = False
            counts["interrupted"] += 1
        except BaseException as exc:  # noqa: BLE001 - what the test counts
            armed[0] = False
            others.append(f"{type(exc).__name__}: {exc}")
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    busy = {name: obj._guard.busy() for name, obj in
            (("session", s), ("value", v), ("out", out), ("run_options", ro), ("binding", b),
             ("rebound", rebound), ("value2", v2), ("out2", out2))}
    right = s.run(None, {"a": one, "b": one})[0].tolist() == [2.0] * 4
    closed: list[str] = []

    def closer() -> None:
        try:
            for obj in (rebound, v2, out2, b, ro, v, out, s):
                obj.close()
            closed.append("ok")
        except BaseException as exc:  # noqa: BLE001
            closed.append(f"{type(exc).__name__}: {exc}")

    t = threading.Thread(target=closer, daemon=True)
    t.start()
    t.join(30)
    if t.is_alive():  # say where it hangs, and end: a hung thread would keep the process
        import faulthandler

        faulthandler.dump_traceback(all_threads=True)
        print(json.dumps({"python": python_name(), **counts, "closed": ["hung"]}), flush=True)
        os._exit(1)
    return {**counts, "others": others[:5], "busy": busy, "right": right,
            "closed": closed or ["hung"]}


def wakeup(add_model: str, endless_model: str) -> dict[str, Any]:
    import asyncio

    s = ortc.Session(add_model, intra_op_num_threads=1)
    one = np.ones(4, np.float32)
    s.run(None, {"a": one, "b": one})  # ortc's Ctrl-C bridge is in place from here
    loop = asyncio.new_event_loop()
    got: list[int] = []
    loop.add_signal_handler(signal.SIGUSR1, lambda: got.append(signal.SIGUSR1))
    endless = ortc.Session(endless_model, intra_op_num_threads=1)
    x = np.ones((256, 256), np.float32)

    def ctrl_c() -> None:
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=ctrl_c)
    started = time.monotonic()
    t.start()
    outcome = "finished"
    try:
        endless.run(None, {endless.inputs[0].name: x}, timeout=60)
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    except ortc.RunTimeout:
        outcome = "RunTimeout"
    took = time.monotonic() - started
    t.join()
    os.kill(os.getpid(), signal.SIGUSR1)  # asyncio's own signal still reaches its handler
    loop.run_until_complete(asyncio.sleep(0.3))
    loop.remove_signal_handler(signal.SIGUSR1)
    loop.close()
    return {"outcome": outcome, "seconds": round(took, 2),
            "asyncio_handler": got == [signal.SIGUSR1]}


def _async_objects(add_model: str) -> tuple[ortc.Session, np.ndarray[Any, Any], ortc.Value,
                                             ortc.RunOptions]:
    """What the run_async cases run with: a session with an intra-op pool (RunAsync needs
    one), an input array, a Value over it and RunOptions."""
    s = ortc.Session(add_model, intra_op_num_threads=2)
    one = np.ones(4, np.float32)
    return s, one, ortc.Value.from_numpy(one), ortc.RunOptions()


def _sessions_released() -> bool:
    """Whether every Session is released within 20 s (a completion lets its session go on
    ortc's releaser thread)."""
    deadline = time.monotonic() + 20
    while ortc.live_handles().get("Session", 0) and time.monotonic() < deadline:
        time.sleep(0.01)
    return ortc.live_handles().get("Session", 0) == 0


def async_setup(add_model: str) -> dict[str, Any]:
    from ortc import _run

    s, one, v, ro = _async_objects(add_model)
    engine = s._engine
    found: dict[str, Any] = {}
    real_prepare = engine.prepare_inputs
    real_async = engine.api.RunAsync
    real_deadline = _run.watcher.add_deadline

    class Injected(Exception):
        pass

    def failing_prepare(*args: Any) -> Any:
        result = real_prepare(*args)
        raise Injected("after the inputs were made")

    def failing_run_async(*args: Any) -> Any:
        raise Injected("in place of RunAsync")

    def failing_deadline(*args: Any) -> Any:
        raise Injected("arming the deadline")

    for step in ("prepare", "run_async", "deadline"):
        if step == "prepare":
            engine.prepare_inputs = failing_prepare  # type: ignore[method-assign]
        elif step == "run_async":
            engine.api.RunAsync = failing_run_async
        else:
            _run.watcher.add_deadline = failing_deadline  # type: ignore[method-assign]
        try:
            s.run_async(None, {"a": v, "b": one}, ro, timeout=30)
            found[step] = "no error"
        except Injected as exc:
            found[step] = type(exc).__name__
        finally:
            engine.prepare_inputs = real_prepare  # type: ignore[method-assign]
            engine.api.RunAsync = real_async
            _run.watcher.add_deadline = real_deadline  # type: ignore[method-assign]
        found[step + "_busy"] = [name for name, obj in (("value", v), ("run_options", ro),
                                                        ("session", s)) if obj._guard.busy()]
        found[step + "_children"] = len(s._children) + len(s._others)
    found["works"] = s.run_async(None, {"a": v, "b": one}, ro).result(30)[0].tolist()
    s.close()
    found["released"] = _sessions_released()
    return found


def async_interrupt(add_model: str) -> dict[str, Any]:
    s, one, v, ro = _async_objects(add_model)
    engine = s._engine
    real_async = engine.api.RunAsync
    found: dict[str, Any] = {}
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def run_async_then_sigint(*args: Any) -> Any:
        status = real_async(*args)  # ORT has the job (or refused it) from here
        os.kill(os.getpid(), signal.SIGINT)
        return status

    engine.api.RunAsync = run_async_then_sigint
    found["outcome"] = "no KeyboardInterrupt"
    try:
        try:
            s.run_async(None, {"a": v, "b": one}, ro)
            deadline = time.monotonic() + 10  # the SIGINT is handled by here at the latest
            while time.monotonic() < deadline:
                time.sleep(0.005)
        finally:
            engine.api.RunAsync = real_async
    except KeyboardInterrupt:
        found["outcome"] = "KeyboardInterrupt"
    from ortc._callbacks import pending_jobs

    deadline = time.monotonic() + 30
    while (pending_jobs() or s._children or s._others) and time.monotonic() < deadline:
        time.sleep(0.01)
    found["pending"] = pending_jobs()
    found["busy"] = [name for name, obj in (("value", v), ("run_options", ro), ("session", s))
                     if obj._guard.busy()]
    found["children"] = len(s._children) + len(s._others)
    v.close()  # free: the interrupted run's entry on it has ended
    found["works"] = s.run_async(None, {"a": one, "b": one}, ro).result(30)[0].tolist()
    s.close()
    found["released"] = _sessions_released()
    return found


def arguments(endless_model: str) -> dict[str, Any]:
    s = ortc.Session(endless_model, intra_op_num_threads=1)
    ro = ortc.RunOptions()
    x = np.ones((256, 256), np.float32)
    ended: list[str] = []

    def run() -> None:
        try:
            s.run(None, {s.inputs[0].name: x}, ro)
            ended.append("finished")
        except ortc.Error as exc:
            ended.append(type(exc).__name__)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 30
    while not ro._guard.calls and time.monotonic() < deadline:
        time.sleep(0.001)
    try:
        ro.close()
        close = "closed under the run"
    except ortc.ConcurrentUseError:
        close = "ConcurrentUseError"
    ro.terminate()
    t.join(30)
    after = ro.closed
    ro.close()
    return {"close": close, "closed_meanwhile": after, "run": ended,
            "closed_after": ro.closed}


def main() -> None:
    case, add_model, endless_model = sys.argv[1:4]
    result: dict[str, Any] = {"python": python_name()}
    if case == "storm":
        result.update(storm(add_model))
    elif case == "wakeup":
        result.update(wakeup(add_model, endless_model))
    elif case == "async_setup":
        result.update(async_setup(add_model))
    elif case == "async_interrupt":
        result.update(async_interrupt(add_model))
    elif case == "arguments":
        result.update(arguments(endless_model))
    else:
        raise SystemExit(f"unknown case {case!r}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
