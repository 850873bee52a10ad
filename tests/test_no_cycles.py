"""No call leaves a reference cycle: what a call made and used goes when its last reference
does, with the cyclic collector off too (applications disable it for latency). A successful
call of each kind users make, and a failed one: its exception, the run's context and, through the
traceback's frames, the caller's arguments (a run's inputs, its session) go when the caller
drops the exception, not at some later collection (never, with the cyclic collector off).

A frame that raises an exception it holds in a local is on that exception's traceback: the
exception holds the frame, the frame the exception. ortc's status chokepoint, the run's check
and the deferred signal exception each raised such a local; 200 failed runs with gc disabled
left 200 errors and 200 run contexts alive."""

from __future__ import annotations

import gc
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import models
import ortc
import ortc.compat as compat

CPU = ["CPUExecutionProvider"]


@pytest.fixture
def gc_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _failing_calls() -> list[tuple[str, Callable[[], Any]]]:
    add = models.add_model()
    s = ortc.Session(add, intra_op_num_threads=1)
    cs = compat.InferenceSession(add, providers=CPU)
    one, two, three = (np.ones(n, np.float32) for n in (1, 2, 3))
    closed = ortc.Session(add)
    closed.close()
    value = ortc.Value.from_numpy(one)
    binding = s.io_binding()
    binding.bind_output("c", value)  # held by this thread: another thread's close is refused

    def close_on_another_thread() -> None:
        import threading

        failed: list[BaseException] = []

        def close() -> None:
            try:
                value.close()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                failed.append(exc)

        t = threading.Thread(target=close)
        t.start()
        t.join()
        assert isinstance(failed[0], ortc.ConcurrentUseError)
        raise failed.pop()

    return [
        ("a closed session", lambda: closed.run(None, {"a": one, "b": one})),
        ("a close the thread rules refuse", close_on_another_thread),
        ("ORT refuses the shapes", lambda: s.run(None, {"a": two, "b": three})),
        ("ORT refuses the shapes, Values", lambda: s.run_with_values(None, {"a": two, "b": three})),
        ("an unknown input", lambda: s.run(None, {"x": one})),
        ("a wrong dtype", lambda: s.run(None, {"a": one.astype(np.float64), "b": one})),
        ("bytes that are no model", lambda: ortc.Session(b"not a model")),
        ("an object array", lambda: ortc.Value.from_numpy(np.array([object()]))),
        ("compat: ORT refuses the shapes", lambda: cs.run(None, {"a": two, "b": three})),
        ("compat: a wrong dtype", lambda: cs.run(None, {"a": one.astype(np.float64), "b": one})),
        ("compat: bytes that are no model",
         lambda: compat.InferenceSession(b"not a model", providers=CPU)),
        ("compat: a missing input", lambda: cs.run(None, {"a": one})),
        ("compat: run_async of a feed its conversion refuses",
         lambda: cs.run_async(None, {"a": object(), "b": one}, lambda *_: None, None)),
        ("compat: from_dlpack of no capsule", lambda: compat.OrtValue.from_dlpack(object())),
    ]


def _succeeding_calls() -> list[tuple[str, Callable[[], Any]]]:
    add = models.add_model()
    s = ortc.Session(add, intra_op_num_threads=2)
    cs = compat.InferenceSession(add, providers=CPU)
    one = np.ones(1, np.float32)
    feeds = {"a": one, "b": one}

    def bound() -> None:
        b = s.io_binding()
        b.bind_input("a", one)
        b.bind_input("b", one)
        b.bind_output("c")
        s.run_with_binding(b)
        b.get_outputs()
        b.close()

    def values() -> None:
        v = ortc.Value.from_numpy(one)
        s.run_with_values(None, {"a": v, "b": v})[0].numpy()
        v.close()

    def compat_bound() -> None:
        b = cs.io_binding()
        b.bind_cpu_input("a", one)
        b.bind_cpu_input("b", one)
        b.bind_output("c")
        cs.run_with_iobinding(b)
        b.copy_outputs_to_cpu()

    def compat_values() -> None:
        v = compat.OrtValue.ortvalue_from_numpy(one)
        cs.run_with_ort_values(None, {"a": v, "b": v})[0].numpy()

    return [
        ("run", lambda: s.run(None, feeds)),
        ("run with a timeout", lambda: s.run(None, feeds, timeout=5)),
        ("run with run options", lambda: s.run(None, feeds, ortc.RunOptions())),
        ("Values", values),
        ("a bound run", bound),
        ("a new session and its run", lambda: ortc.Session(add).run(None, feeds)),
        ("a session closed", lambda: ortc.Session(add).close()),
        ("a session's inputs", lambda: ortc.Session(add).inputs),
        ("run_async", lambda: s.run_async(None, feeds).result()),
        ("compat: run", lambda: cs.run(None, feeds)),
        ("compat: OrtValues", compat_values),
        ("compat: IOBinding", compat_bound),
        ("compat: a new session and its run",
         lambda: compat.InferenceSession(add, providers=CPU).run(None, feeds)),
        ("compat: get_inputs",
         lambda: [i.shape for i in compat.InferenceSession(add, providers=CPU).get_inputs()]),
    ]


def test_calls_leave_no_cycle(gc_off: None) -> None:
    import time

    calls = _succeeding_calls()
    for _name, call in calls:  # warm-up, as below
        for _ in range(5):
            call()
    time.sleep(0.2)  # (run_async's completions close their runs on ortc's releaser thread)
    gc.collect()
    for name, call in calls:
        for _ in range(3):
            call()
        time.sleep(0.05)
        assert gc.collect() == 0, name


def _fail(call: Callable[[], Any]) -> None:
    with pytest.raises(Exception):  # noqa: B017 - each call's own error; only the garbage counts
        call()


def test_failed_calls_leave_no_cycle(gc_off: None) -> None:
    calls = _failing_calls()
    for _name, call in calls:  # warm-up: caches, first-use objects and the marker wrappers
        for _ in range(5):     # compiled after a few calls are not garbage of a failure
            _fail(call)
    gc.collect()
    for name, call in calls:
        for _ in range(3):
            _fail(call)
        assert gc.collect() == 0, name


def test_a_failed_run_lets_its_inputs_go_with_its_exception(gc_off: None) -> None:
    import weakref

    s = ortc.Session(models.add_model(), intra_op_num_threads=1)
    a, b = np.ones(2, np.float32), np.ones(3, np.float32)
    watch = weakref.ref(a)
    try:
        s.run(None, {"a": a, "b": b})
    except ortc.OrtError as err:
        caught: Any = err
    del a, caught
    assert watch() is None  # no cycle kept the input alive


def test_a_run_stopped_by_its_deadline_leaves_no_cycle(gc_off: None) -> None:
    s = ortc.Session(models.loop_chain_model(64), intra_op_num_threads=1)
    feeds = {"x": np.ones((64, 64), np.float32),
             "n": np.array(models.loop_iterations_for(s, 2.0, 64), np.int64)}
    for _ in range(2):
        with pytest.raises(ortc.RunTimeout):
            s.run(None, feeds, timeout=0.05)
        if _ == 0:
            gc.collect()
    assert gc.collect() == 0
