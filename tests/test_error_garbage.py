"""A failed call leaves no reference cycle: its exception, the run's context and, through the
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
    return [
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
