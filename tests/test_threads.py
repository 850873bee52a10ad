"""Thread rules, enforced and proven.

* the guard itself, on a test-local handle (re-entry, serialize waits, strict never blocks,
  close while in flight, off mode, WrongThreadError, fork);
* every exclusive method, overlapping a call that is inside ORT (held in ORT's log callback,
  or a long MatMul chain stopped with RunOptions.terminate): ConcurrentUseError in strict mode,
  correct results in serialize mode;
* every shared method, from several threads at once, against a serial run;
* the known hazards (conformance checks thread.shared-binding, env.run-after-last-release,
  life.binding-after-session-release), shown to be prevented;
* callbacks from ORT threads.

Nothing here asserts on timing: waits are bounded only so that a bug fails instead of hanging.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import pickle
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import models
import ortc
from conftest import run_python
from ortc import LoggingLevel, _guard, threads
from ortc._ffi import ffi
from ortc._guard import Entries, Hold
from ortc._handle import Handle
from ortc.threads import exclusive, registry, shared

TIMEOUT = 60.0
ADD = models.add_model(np.float32, ["n"])
A = np.arange(4, dtype=np.float32)
B = np.full(4, 10.0, np.float32)


def idle(g: Any) -> bool:
    """No call, hold or waiter left in guard ``g`` (what every test leaves behind)."""
    return not g.calls and not g.holds and not g.on_idle and not g.waiting


@contextlib.contextmanager
def holding(obj: Any, exclusive: bool = False) -> Any:
    """``obj`` entered as an argument of a call of this thread's (Entries). The witness is the
    frame of the ``with`` statement's function: a generator's own frame is off the stack
    while it is suspended, so an entry it witnessed would count as over."""
    entries = Entries(sys._getframe(2), "holding")
    try:
        entries.enter(obj, exclusive)
        yield obj
    finally:
        entries.leave()


def wait_until(pred: Callable[[], Any], what: str) -> None:
    """Poll until ``pred()``; fail (never hang) when it does not come."""
    deadline = time.monotonic() + TIMEOUT
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.0005)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype \
            and a.shape == b.shape and bool(np.array_equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


# -- a test-local handle ---------------------------------------------------------------------

class Thing(Handle):
    """A handle with no c_type: not registered, not in the rules. Its methods run ``during``
    while inside the guard, which lets a test hold a call in flight."""

    evidence = "test double"

    def __init__(self, send: bool = True, sync: bool = True) -> None:
        self.send = send  # instance attributes: the guard reads them at _adopt
        self.sync = sync
        self.released: list[Any] = []
        self._raw = ffi.new("int*")
        self._adopt(self._raw, self.released.append)

    @shared()
    def read(self, during: Callable[[], Any] | None = None) -> str:
        if during is not None:
            during()
        return "read"

    @exclusive()
    def write(self, during: Callable[[], Any] | None = None) -> str:
        if during is not None:
            during()
        return "write"


class InFlight:
    """``call(during)`` on a new thread, held inside the guard until :meth:`finish`."""

    def __init__(self, call: Callable[[Callable[[], None]], Any]) -> None:
        self.inside = threading.Event()
        self.go = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

        def during() -> None:
            self.inside.set()
            assert self.go.wait(TIMEOUT)

        def main() -> None:
            try:
                self.result = call(during)
            except BaseException as exc:  # noqa: BLE001
                self.error = exc
            finally:
                self.inside.set()

        self.thread = threading.Thread(target=main, daemon=True)
        self.thread.start()
        assert self.inside.wait(TIMEOUT)
        if self.error is not None:
            raise self.error

    def finish(self) -> Any:
        self.go.set()
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.result


def in_thread(call: Callable[[], Any]) -> Callable[[], Any]:
    """Start ``call`` on a thread; returns a function that joins it and returns (or raises)."""
    box: dict[str, Any] = {}

    def main() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    t = threading.Thread(target=main, daemon=True)
    t.start()

    def join() -> Any:
        t.join(TIMEOUT)
        assert not t.is_alive(), "the thread did not finish"
        if "error" in box:
            raise box["error"]
        return box["result"]

    join.thread = t  # type: ignore[attr-defined]
    return join


@pytest.fixture
def things() -> Any:
    made: list[Thing] = []

    def make(**kw: Any) -> Thing:
        t = Thing(**kw)
        made.append(t)
        return t

    yield make
    ortc.set_thread_checks("off")
    for t in made:
        t.close()


# -- the guard -------------------------------------------------------------------------------

def test_thing_is_not_registered() -> None:
    assert "Thing" not in registry
    assert all(r["python"] != "ortc.Thing" for r in ortc.rules())


def test_strict_conflicts_raise_while_the_other_call_is_still_inside(things: Any) -> None:
    t = things()
    held = InFlight(t.read)
    try:
        assert t.read() == "read", "shared calls overlap on a Sync object"
        with pytest.raises(ortc.ConcurrentUseError,
                           match=r"exclusive call \(Thing\.write\) while another call"):
            t.write()
        with pytest.raises(ortc.ConcurrentUseError):
            t.close()
        assert not t.closed
        assert held.thread.is_alive(), "strict mode raised without waiting for the other call"
    finally:
        assert held.finish() == "read"
    held = InFlight(t.write)
    try:
        with pytest.raises(ortc.ConcurrentUseError, match="exclusive call is in flight"):
            t.read()
        with pytest.raises(ortc.ConcurrentUseError):
            t.write()
    finally:
        assert held.finish() == "write"
    assert t.write() == "write" and t.read() == "read"


def test_not_sync_refuses_overlapping_shared_calls(things: Any) -> None:
    t = things(sync=False)
    held = InFlight(t.read)
    try:
        with pytest.raises(ortc.ConcurrentUseError, match="not Sync"):
            t.read()
    finally:
        held.finish()
    assert t.read() == "read"


def test_reentry_by_the_same_thread_is_not_a_conflict(things: Any) -> None:
    for mode in ("strict", "serialize"):
        ortc.set_thread_checks(mode)
        t = things(sync=False)
        seen: list[str] = []
        assert t.write(lambda: seen.extend([t.read(lambda: seen.append(t.write())),
                                            t.write()])) == "write"
        assert seen == ["write", "read", "write"]
        assert t.read(lambda: seen.append(t.write())) == "read"
        # the guard is idle again
        assert idle(t._guard)


def test_serialize_waits_and_runs_in_order(things: Any) -> None:
    ortc.set_thread_checks("serialize")
    t = things()
    order: list[str] = []
    held = InFlight(lambda during: t.read(lambda: (during(), order.append("first done"))))
    try:
        join = in_thread(lambda: t.write(lambda: order.append("write runs")))
        wait_until(lambda: len(t._guard.waiting) >= 1, "the exclusive call to wait")
        assert order == [] and join.thread.is_alive()  # type: ignore[attr-defined]
    finally:
        held.finish()
    assert join() == "write"
    assert order == ["first done", "write runs"]


def test_serialize_shared_waits_for_exclusive_then_overlaps(things: Any) -> None:
    ortc.set_thread_checks("serialize")
    t = things()
    held = InFlight(t.write)
    try:
        joins = [in_thread(t.read) for _ in range(3)]
        wait_until(lambda: len(t._guard.waiting) >= 3, "three shared calls to wait")
    finally:
        held.finish()
    assert [j() for j in joins] == ["read"] * 3


def test_serialize_waiters_go_in_arrival_order(things: Any) -> None:
    """Waiters keep their place while they sleep: of calls waiting for the same call to end,
    the one that came first goes first, every time (without a place, whichever looked first
    after the wake-up went, and a waiter could be overtaken forever)."""
    ortc.set_thread_checks("serialize")
    t = things()
    for _round in range(10):
        order: list[str] = []
        held = InFlight(t.write)
        try:
            joins = []
            for name in ("first", "second", "third"):
                joins.append(in_thread(lambda name=name: t.write(lambda: order.append(name))))
                wait_until(lambda n=len(joins): len(t._guard.waiting) >= n, f"{name} to wait")
        finally:
            held.finish()
        assert [j() for j in joins] == ["write"] * 3
        assert order == ["first", "second", "third"]
        assert idle(t._guard)


def test_a_shared_call_joins_shared_calls_at_once_but_queues_behind_a_waiting_writer(
        things: Any) -> None:
    """A shared call that finds only admitted shared calls goes in without the two looks (two
    threads running one session); one that finds an exclusive call waiting queues behind it,
    as the looks would have it (serialize: the writer first, then the reader)."""
    ortc.set_thread_checks("serialize")
    t = things()
    first = InFlight(t.read)
    try:
        assert t.read() == "read" and len(t._guard.calls) == 1  # alongside, no wait
        order: list[str] = []
        writer = in_thread(lambda: t.write(lambda: order.append("write")))
        wait_until(lambda: len(t._guard.waiting) >= 1, "the writer to wait")
        reader = in_thread(lambda: t.read(lambda: order.append("read")))
        wait_until(lambda: len(t._guard.waiting) >= 2, "the reader to queue behind the writer")
        assert order == []
    finally:
        first.finish()
    assert writer() == "write" and reader() == "read"
    assert order == ["write", "read"]
    assert idle(t._guard)


def test_a_skipped_leave_is_healed_without_reading_another_threads_stack(
        things: Any, monkeypatch: Any) -> None:
    """An entry whose leave never ran (an interrupt stopped the ``finally``) is found dead from
    its frame alone while its thread lives on; a call still in flight is not. No thread reads
    another's stack for it (that read crashed CPython 3.11)."""
    ortc.set_thread_checks("strict")
    t = things()
    g = t._guard
    go_on = threading.Event()

    def enter_and_skip_the_leave() -> None:
        g.enter(_guard._next_token(), t, True, sys._getframe())  # returns still entered

    def thread_main() -> None:
        enter_and_skip_the_leave()
        assert go_on.wait(TIMEOUT)  # the thread lives on, elsewhere

    join = in_thread(thread_main)
    wait_until(lambda: g.calls, "the entry")

    def no_stack_reads() -> Any:
        raise AssertionError("another thread's stack was read")

    monkeypatch.setattr(sys, "_current_frames", no_stack_reads)
    try:
        assert t.write() == "write" and not g.calls  # the dead entry was dropped
        held = InFlight(t.write)
        try:
            with pytest.raises(ortc.ConcurrentUseError, match=r"\(Thing\.write\)"):
                t.read()  # a live entry stays, named by the call it belongs to
        finally:
            held.finish()
    finally:
        go_on.set()
        join()
    assert idle(g)


def test_a_nested_call_does_not_queue_behind_a_waiter(things: Any) -> None:
    """A thread already inside the object (a callback, a method calling another) is not sent
    to wait behind a waiter that waits for that very thread: it would wait for itself."""
    ortc.set_thread_checks("serialize")
    t = things()
    nested: list[str] = []
    waiter: list[Callable[[], Any]] = []

    def during(go_on: Callable[[], None]) -> None:
        waiter.append(in_thread(t.write))
        wait_until(lambda: t._guard.waiting, "the other thread to wait")
        nested.append(t.write())  # the same thread again, exclusive: must not wait
        go_on()

    held = InFlight(lambda go_on: t.write(lambda: during(go_on)))
    held.finish()
    assert nested == ["write"]
    assert waiter[0]() == "write"
    assert idle(t._guard)


def test_guard_stress_never_overlaps_an_exclusive_call(things: Any) -> None:
    """8 threads mixing shared and exclusive calls in serialize mode: an exclusive call is
    always alone, shared calls do overlap, and the guard ends idle."""
    ortc.set_thread_checks("serialize")
    t = things()
    lock = threading.Lock()
    inside = {"shared": 0, "exclusive": 0, "max_shared": 0}
    bad: list[str] = []

    def enter(kind: str) -> None:
        with lock:
            inside[kind] += 1
            if inside["exclusive"] > 1 or (inside["exclusive"] and inside["shared"]):
                bad.append(str(inside))
            inside["max_shared"] = max(inside["max_shared"], inside["shared"])
        time.sleep(0)
        with lock:
            inside[kind] -= 1

    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        barrier.wait()
        for j in range(300):
            if (i + j) % 7 == 0:
                t.write(lambda: enter("exclusive"))
            else:
                t.read(lambda: enter("shared"))

    joins = [in_thread(lambda i=i: work(i)) for i in range(8)]
    for j in joins:
        j()
    assert not bad, bad[:3]
    g = t._guard
    assert idle(g)


def test_lock_free_entries_never_overlap_an_exclusive_one(things: Any) -> None:
    """The lock-free shared entry (on a Sync object; on a non-Sync one every entry locks)
    against locked exclusive entries, with a tiny switch interval so threads interleave
    inside the entry code: an exclusive call is always alone. The same with the locked
    entries a free-threaded build uses (LOCK_FREE false)."""
    ortc.set_thread_checks("serialize")
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for sync in (True, False):
            t = things(sync=sync)
            g = t._guard
            lock = threading.Lock()
            inside = {"lockfree": 0, "exclusive": 0}
            bad: list[str] = []

            def enter(kind: str) -> None:
                with lock:
                    inside[kind] += 1
                    if inside["exclusive"] > 1 or (inside["exclusive"] and inside["lockfree"]) \
                            or (not sync and inside["lockfree"] > 1):
                        bad.append(str(inside))
                time.sleep(0)
                with lock:
                    inside[kind] -= 1

            def lock_free() -> None:
                with holding(t, exclusive=not sync):
                    enter("lockfree")

            barrier = threading.Barrier(6)

            def work(i: int) -> None:
                barrier.wait()
                for j in range(400):
                    if (i + j) % 5 == 0:
                        t.write(lambda: enter("exclusive"))
                    else:
                        lock_free()

            for j in [in_thread(lambda i=i: work(i)) for i in range(6)]:
                j()
            assert not bad, (sync, bad[:3])
            assert idle(g)
    finally:
        sys.setswitchinterval(old_interval)


class Runner(Thing):
    """A Thing whose ``run`` takes another Thing the way run_with_binding takes its binding:
    shared on itself, exclusive on the argument (the marker's ``args``)."""

    @shared(args={"other": "exclusive"})
    def run(self, other: Any, during: Callable[[], Any] | None = None) -> str:
        if during is not None:
            during()
        return "ran"


def test_a_marked_argument_is_held_for_the_call() -> None:
    """A method whose marker names an argument (the bound run: the session shared, the
    binding exclusive) against exclusive calls on its object and other such calls on the same
    argument, with a tiny switch interval so threads interleave inside the entries: an
    exclusive call on the object is always alone, and the argument is never entered twice."""
    ortc.set_thread_checks("serialize")
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        session, binding = Runner(), Thing(sync=False)
        lock = threading.Lock()
        inside = {"bound": 0, "exclusive": 0}
        bad: list[str] = []
        calls = [0]

        def enter(kind: str) -> None:
            with lock:
                inside[kind] += 1
                if inside["exclusive"] > 1 or (inside["exclusive"] and inside["bound"]) \
                        or inside["bound"] > 1:
                    bad.append(str(inside))
            time.sleep(0)
            with lock:
                inside[kind] -= 1
                calls[0] += kind == "bound"

        barrier = threading.Barrier(6)

        def work(i: int) -> None:
            barrier.wait()
            for j in range(400):
                if (i + j) % 5 == 0:
                    session.write(lambda: enter("exclusive"))
                else:
                    assert session.run(binding, lambda: enter("bound")) == "ran"

        for j in [in_thread(lambda i=i: work(i)) for i in range(6)]:
            j()
        assert not bad, bad[:3]
        assert calls[0] == 6 * 400 - 6 * 80
        for g in (session._guard, binding._guard):
            assert idle(g)
    finally:
        sys.setswitchinterval(old_interval)


def test_a_hold_refuses_other_threads_and_lets_a_bound_run_through(things: Any) -> None:
    """A Hold (a Value bound as an output) refuses other threads' calls in strict and in
    serialize mode alike (nobody waits on a hold), says it is a hold, lets its own thread in,
    and lets an entry made through holds (the bound run's) in from any thread."""
    value = things(sync=True)
    hold = Hold(value)
    hold.take(value)
    for mode in ("strict", "serialize"):
        ortc.set_thread_checks(mode)
        with pytest.raises(ortc.ConcurrentUseError, match="a hold, not a call"):
            in_thread(value.read)()
        with pytest.raises(ortc.ConcurrentUseError, match="a hold"):
            in_thread(value.close)()
    assert value.read() == "read" and value.write() == "write"  # the holder's own calls

    def bound_run() -> str:
        entries = Entries(sys._getframe(), "bound_run")
        try:
            entries.enter(value, True, through_holds=True)
            return "wrote"
        finally:
            entries.leave()

    assert in_thread(bound_run)() == "wrote"
    hold.release()
    hold.release()  # idempotent
    assert in_thread(value.read)() == "read"
    assert idle(value._guard)


def test_a_hold_is_refused_while_another_thread_is_inside_or_holds_and_taken_beside_its_own(
        things: Any) -> None:
    """Taking a hold looks at the calls and holds already there, as a call's entry does:
    another thread's call refuses it in strict mode (serialize mode waits for the call to
    leave), another thread's hold refuses it in both modes (nobody waits for a hold), this
    thread's own call or hold never does, and a refused hold leaves nothing behind."""
    value = things(sync=True)
    ortc.set_thread_checks("strict")
    held = InFlight(value.read)  # another thread inside a call on it
    try:
        with pytest.raises(ortc.ConcurrentUseError):
            Hold(value).take(value)
        assert not value._guard.holds
    finally:
        held.finish()
    ortc.set_thread_checks("serialize")
    held = InFlight(value.read)
    later = threading.Timer(0.2, held.finish)
    later.start()
    hold = Hold(value)
    hold.take(value)  # waits for the call
    assert not value._guard.calls  # taken once the call had left
    hold.release()
    later.join()
    for mode in ("strict", "serialize"):
        ortc.set_thread_checks(mode)
        other = in_thread(lambda: Hold(value))()
        # another thread's hold, on a thread that stays (a hold ends with its thread)
        holder = InFlight(lambda during: (other.take(value), during()))
        try:
            with pytest.raises(ortc.ConcurrentUseError, match="a hold"):
                Hold(value).take(value)
        finally:
            other.release()
            holder.finish()
        assert idle(value._guard)

    def inside_own_call() -> None:
        hold = Hold(value)
        hold.take(value)  # this thread is inside value's call (write's exclusive entry)
        hold.release()

    assert value.write(inside_own_call) == "write"
    first, second = Hold(value), Hold(value)
    first.take(value)
    second.take(value)  # a second hold of this thread's own
    first.release()
    second.release()
    assert idle(value._guard)


def test_a_hold_ends_with_its_thread() -> None:
    """A Value bound as an output on a worker thread that then ended is free for the thread
    that goes on with the binding (IoBinding is Send), as onnxruntime lets it be: its hold
    ended with the worker. It refused every other thread for good, with advice to use the
    value from a thread that no longer existed, and passed to any new thread given the ended
    one's ident. The binding's runs from the new thread still enter the value for the run."""
    s = ortc.Session(ADD, intra_op_num_threads=1)
    out = ortc.Value.from_numpy(np.zeros(4, np.float32))
    state: dict[str, Any] = {}

    def worker() -> None:
        binding = state["binding"] = s.io_binding()
        binding.bind_input("a", A)
        binding.bind_input("b", B)
        binding.bind_output("c", out)
        s.run_with_binding(binding)
        state["hold"] = binding._output_holds["c"]
        assert out._guard.holds  # held while its thread lives

    for mode in ("strict", "serialize"):
        ortc.set_thread_checks(mode)
        out.fill(np.zeros(4, np.float32))
        in_thread(worker)()
        binding, hold = state["binding"], state["hold"]
        assert not out._guard.holds and not hold.covers_this_thread()
        assert same(out.numpy(), A + B)  # read on this thread: no hold left in the way
        out.fill(np.zeros(4, np.float32))
        s.run_with_binding(binding)  # the binding, handed over, runs here
        assert same(out.numpy(), A + B)
        binding.bind_output("c", out)  # and binds the value again: this thread holds it now
        with pytest.raises(ortc.ConcurrentUseError, match="a hold"):
            in_thread(out.numpy)()
        binding.close()
        assert idle(out._guard)
    # the bare Hold: released on its thread's end, and no longer its thread's
    value = ortc.Value.from_numpy(np.zeros(4, np.float32))
    bare = Hold(value)
    in_thread(lambda: bare.take(value))()
    assert bare.guard is None and idle(value._guard)


def test_a_hold_its_ended_thread_left_is_dropped_by_the_next_call_it_stops() -> None:
    """Where a thread's local data outlives the thread (PyPy lets it go at a collection), its
    holds stay registered after it ended: the next call they refuse drops them (as a call's
    entry an interrupt left is dropped) instead of refusing it, in either mode; the Hold is
    then no longer its thread's, even for a new thread given the ended one's ident."""
    value = ortc.Value.from_numpy(np.arange(4, dtype=np.float32))
    ended: list[int] = []
    in_thread(lambda: ended.append(threading.get_ident()))()
    for mode in ("strict", "serialize"):
        ortc.set_thread_checks(mode)
        hold = Hold(value)
        hold.owner = ended[0]  # (taken on the ended thread, whose local data has not gone)
        value._guard.holds[hold.token] = ended[0]
        assert same(value.numpy(), np.arange(4, dtype=np.float32))  # not refused
        assert not value._guard.holds
        hold.owner = threading.get_ident()  # a new thread with the ended one's ident
        assert not hold.covers_this_thread()
        hold.release()
    ortc.set_thread_checks("strict")


def test_a_hold_refusal_names_the_refused_call() -> None:
    """A call refused by a hold (a Value bound as an output on another thread) names itself,
    as a call refused by a call does: what conflicted with what."""
    s = ortc.Session(ADD, intra_op_num_threads=1)
    out = ortc.Value.from_numpy(np.zeros(4, np.float32))
    binding = s.io_binding()
    binding.bind_output("c", out)  # held by this thread
    other = s.io_binding()
    for call, name in ((out.numpy, r"Value\.numpy"), (out.close, r"Value\.close"),
                       (lambda: out.shape, r"Value\.shape"),
                       (lambda: other.bind_output("c", out), r"IoBinding\.bind_output")):
        with pytest.raises(ortc.ConcurrentUseError,
                           match=rf"^Value: a call \({name}\) while it is bound as an output "
                                 rf"of an IoBinding by thread {threading.get_ident()} "
                                 rf"\(a hold, not a call"):
            in_thread(call)()
    binding.close()
    assert in_thread(out.numpy)().shape == (4,)


def test_a_marked_argument_is_refused_in_strict_mode() -> None:
    session, binding = Runner(), Thing(sync=False)
    held = InFlight(binding.write)  # another thread inside the argument
    try:
        with pytest.raises(ortc.ConcurrentUseError):
            session.run(binding)
    finally:
        held.finish()
    held = InFlight(session.write)  # an exclusive call on the object
    try:
        with pytest.raises(ortc.ConcurrentUseError):
            session.run(binding)
    finally:
        held.finish()
    assert session.run(binding) == "ran"
    assert idle(session._guard) and idle(binding._guard)


def test_strict_stress_every_call_succeeds_or_raises_at_once(things: Any) -> None:
    t = things()
    errors: list[BaseException] = []
    counts = {"ok": 0, "refused": 0}
    lock = threading.Lock()
    barrier = threading.Barrier(4)

    def work(i: int) -> None:
        barrier.wait()
        for j in range(300):
            try:
                (t.write if j % 5 == 0 else t.read)()
                with lock:
                    counts["ok"] += 1
            except ortc.ConcurrentUseError:
                with lock:
                    counts["refused"] += 1
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

    for j in [in_thread(lambda i=i: work(i)) for i in range(4)]:
        j()
    assert not errors
    assert counts["ok"] + counts["refused"] == 1200
    assert idle(t._guard)


def test_close_while_in_flight_strict_serialize_off(things: Any) -> None:
    # strict: refused, and the object stays usable
    t = things()
    held = InFlight(t.read)
    try:
        with pytest.raises(ortc.ConcurrentUseError, match="close"):
            t.close()
    finally:
        held.finish()
    assert not t.closed and t.read() == "read"

    # serialize: close waits for the call, then releases
    ortc.set_thread_checks("serialize")
    t = things()
    released_inside: list[bool] = []
    held = InFlight(lambda during: t.read(lambda: (during(),
                                                   released_inside.append(bool(t.released)))))
    try:
        join = in_thread(t.close)
        wait_until(lambda: len(t._guard.waiting) >= 1, "close() to wait")
        assert not t.closed
    finally:
        held.finish()
    join()
    assert t.closed and released_inside == [False] and len(t.released) == 1

    # off: close returns at once, new calls see ClosedError, the release waits for the call
    ortc.set_thread_checks("off")
    t = things()
    held = InFlight(t.read)
    try:
        t.close()
        assert t.closed and t.released == [], "released under a call in flight"
        with pytest.raises(ortc.ClosedError):
            t.read()
    finally:
        held.finish()
    assert len(t.released) == 1, "the deferred release ran when the call left"


def test_a_waiting_close_is_not_overtaken_by_shared_calls(things: Any) -> None:
    """serialize: a close waiting for a shared call takes its place in the waiters' queue, so
    a shared call that comes after it waits behind it and then sees the object closed. Before,
    the later shared call joined the one inside at once, and a close on a session that threads
    kept running never returned."""
    ortc.set_thread_checks("serialize")
    t = things()
    first = InFlight(t.read)
    try:
        close = in_thread(t.close)
        wait_until(lambda: len(t._guard.waiting) >= 1, "close() to wait")
        later = in_thread(t.read)  # a shared call, after the close
        wait_until(lambda: len(t._guard.waiting) >= 2 or not later.thread.is_alive(),
                   "the later call to wait or to return")
        assert later.thread.is_alive(), "a shared call overtook the waiting close"
        assert not t.closed
    finally:
        first.finish()
    close()
    with pytest.raises(ortc.ClosedError):
        later()
    assert t.closed and len(t.released) == 1 and idle(t._guard)


def test_close_from_inside_its_own_call_is_deferred(things: Any) -> None:
    t = things()
    t.read(lambda: (t.close(), None))
    assert t.closed and len(t.released) == 1


def test_waiters_see_close(things: Any) -> None:
    ortc.set_thread_checks("serialize")
    t = things()
    held = InFlight(t.write)
    try:
        join = in_thread(t.write)
        wait_until(lambda: len(t._guard.waiting) >= 1, "the second call to wait")
        ortc.set_thread_checks("off")
        t.close()  # deferred: the first call is still inside
    finally:
        held.finish()
    with pytest.raises(ortc.ClosedError):
        join()
    assert len(t.released) == 1


def test_off_mode_checks_nothing_but_closed(things: Any) -> None:
    ortc.set_thread_checks("off")
    t = things(send=False, sync=False)
    held = InFlight(t.write)
    try:
        assert t.write() == "write" and t.read() == "read"
        assert in_thread(t.read)() == "read"
    finally:
        held.finish()
    t.close()
    with pytest.raises(ortc.ClosedError):
        t.read()


def test_wrong_thread(things: Any) -> None:
    t = things(send=False)
    assert t.read() == "read" and t.write() == "write"
    for mode in ("strict", "serialize"):
        ortc.set_thread_checks(mode)
        with pytest.raises(ortc.WrongThreadError, match="not Send"):
            in_thread(t.read)()
        with pytest.raises(ortc.WrongThreadError):
            in_thread(t.write)()
    ortc.set_thread_checks("off")
    assert in_thread(t.read)() == "read"
    # a Send object is usable from any thread
    u = things()
    ortc.set_thread_checks("strict")
    assert in_thread(u.write)() == "write"


def test_policy_api() -> None:
    assert ortc.thread_checks() == "strict"
    assert ortc.set_thread_checks("serialize") == "strict"
    assert ortc.thread_checks() == "serialize"
    with pytest.raises(ValueError, match="expected one of strict, serialize, off"):
        ortc.set_thread_checks("loose")
    assert ortc.set_thread_checks("off") == "serialize"


def test_policy_from_environment() -> None:
    proc = run_python("import ortc; print(ortc.thread_checks())",
                      {"ORTC_THREAD_CHECKS": " Serialize "})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "serialize"
    proc = run_python("import ortc", {"ORTC_THREAD_CHECKS": "sometimes"})
    assert proc.returncode != 0 and "ORTC_THREAD_CHECKS='sometimes'" in proc.stderr


def test_fork_child_gets_forked_handle_error() -> None:
    """In a forked child every inherited handle but a Session raises ForkedHandleError (a
    Session is rebuilt from its recipe: tests/test_recipe.py)."""
    code = r'''
import os, sys, gc, numpy as np, ortc, models
from test_threads import Thing
s = ortc.Session(models.add_model(np.float32, ["n"]), intra_op_num_threads=1)
b = s.io_binding()
v = ortc.Value.from_numpy(np.ones(2, np.float32))
closed = ortc.RunOptions(); closed.close()
t = Thing()
a = np.ones(2, np.float32)
pid = os.fork()
if pid == 0:
    problems = []
    for name, use in [("value", lambda: v.shape), ("thing", t.read),
                      ("binding", lambda: b.bind_input("a", a))]:
        try:
            use()
            problems.append(name + ": no error")
        except ortc.ForkedHandleError:
            pass
        except BaseException as exc:
            problems.append(f"{name}: {exc!r}")
    try:
        closed.tag
        problems.append("closed: no error")
    except ortc.ClosedError:
        pass
    if s.run(None, {"a": a, "b": a})[0].tolist() != [2.0, 2.0]:
        problems.append("the inherited session, rebuilt in the child")
    b.close(); s.close(); v.close(); t.close()  # nothing of the parent's is released
    assert s.closed and t.released == []
    with ortc.Session(models.add_model(np.float32, ["n"]), intra_op_num_threads=1) as s2:
        if s2.run(None, {"a": a, "b": a})[0].tolist() != [2.0, 2.0]:
            problems.append("new session in the child")
    gc.collect()
    sys.stdout.write("; ".join(problems))
    sys.stdout.flush()
    os._exit(3 if problems else 0)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
assert s.run(None, {"a": a, "b": a})[0].tolist() == [2.0, 2.0]
print("parent ok")
'''
    proc = run_python(code)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "child 0" in proc.stdout and "parent ok" in proc.stdout, proc.stdout


def test_entries_hold_an_argument(things: Any) -> None:
    t = things()
    with holding(t):
        join = in_thread(t.write)
        with pytest.raises(ortc.ConcurrentUseError):
            join()
    assert in_thread(t.write)() == "write"
    with holding(t, exclusive=True):
        assert t.read() == "read"  # the holder re-enters freely
        with pytest.raises(ortc.ConcurrentUseError):
            in_thread(t.read)()
    t.close()
    with pytest.raises(ortc.ClosedError):
        with holding(t):
            pass


# -- holding a call inside ORT ------------------------------------------------------------

_holds: dict[int, "OrtHold"] = {}


class _HoldHandler(logging.Handler):
    """Blocks the first ORT log message of a held thread until the test lets it go."""

    def handle(self, record: logging.LogRecord) -> bool:  # type: ignore[override]
        self.emit(record)  # without Handler.handle's lock: other threads keep logging
        return True

    def emit(self, record: logging.LogRecord) -> None:
        hold = _holds.get(record.thread)  # type: ignore[arg-type]
        if hold is not None and not hold.inside.is_set():
            hold.in_ort = True
            hold.inside.set()
            hold.go.wait(TIMEOUT)


class OrtHold:
    """Run ``call()`` on a new thread and keep it inside ORT: blocked in ORT's log callback,
    which ORT invokes on the calling thread (check env.logger-caller-threads) with every ortc
    guard of the call held. Session creation always logs at VERBOSE; a run logs when its
    RunOptions has a tag."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.inside = threading.Event()
        self.go = threading.Event()
        self.in_ort = False
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, args=(call,), daemon=True)
        self.thread.start()
        assert self.inside.wait(TIMEOUT)
        if not self.in_ort:
            self.thread.join(TIMEOUT)
            raise AssertionError(f"the held call never logged from inside ORT "
                                 f"(result {self.result!r}, error {self.error!r})")

    def _main(self, call: Callable[[], Any]) -> None:
        me = threading.get_ident()
        _holds[me] = self
        try:
            self.result = call()
        except BaseException as exc:  # noqa: BLE001
            self.error = exc
        finally:
            _holds.pop(me, None)
            self.inside.set()

    def finish(self) -> Any:
        self.go.set()
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.result


@pytest.fixture
def ort_hold() -> Any:
    env = ortc.get_env()
    old = env.log_severity_level
    logger = logging.getLogger("ortc.ort")
    handler = _HoldHandler()
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    env.log_severity_level = LoggingLevel.VERBOSE
    holds: list[OrtHold] = []

    def hold(call: Callable[[], Any]) -> OrtHold:
        h = OrtHold(call)
        holds.append(h)
        return h

    try:
        yield hold
    finally:
        for h in holds:
            h.go.set()
            h.thread.join(TIMEOUT)
        ortc.set_thread_checks("strict")
        env.log_severity_level = old
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate


def _tagged() -> ortc.RunOptions:
    return ortc.RunOptions(tag="held")


def _add_session(**kw: Any) -> ortc.Session:
    kw.setdefault("intra_op_num_threads", 1)
    return ortc.Session(ADD, **kw)


def _runs_ok(s: ortc.Session) -> bool:
    return same(s.run(None, {"a": A, "b": B}), [A + B])


# -- every exclusive method against a call inside ORT ---------------------------------------

@dataclass
class Case:
    """``held`` is the call kept inside ORT; ``call`` the exclusive method on the same object;
    ``check_held``/``check`` say whether their outcomes are right."""

    obj: Any
    held: Callable[[], Any]
    call: Callable[[], Any]
    check_held: Callable[[Any], bool]
    check: Callable[[Any], bool]


def _ok(result: Any) -> bool:
    return result is None


def _session_opts_case(name: str, value: Any, check: Callable[[Any], bool] | None = None
                       ) -> Callable[[Any], Case]:
    def make(tmp_path: Any) -> Case:
        opts = ortc.SessionOptions(intra_op_num_threads=1)
        v = value(tmp_path) if callable(value) else value
        call = (lambda: setattr(opts, name, v)) if not name.startswith("!") else \
            (lambda: getattr(opts, name[1:])(*v))
        return Case(opts, lambda: ortc.Session(ADD, opts), call, _runs_ok,
                    check or (lambda r: r is None and (name.startswith("!")
                                                       or same(getattr(opts, name), v))))
    return make


def _run_options_case(name: str, value: Any, check: Callable[[ortc.RunOptions], bool]
                      ) -> Callable[[Any], Case]:
    def make(tmp_path: Any) -> Case:
        s = _add_session()
        ro = _tagged()
        call = (lambda: setattr(ro, name, value)) if not name.startswith("!") else \
            (lambda: getattr(ro, name[1:])(*value))
        return Case(ro, lambda: s.run(None, {"a": A, "b": B}, ro), call,
                    lambda r: same(r, [A + B]), lambda r: r is None and check(ro))
    return make


def _lora_case(tmp_path: Any) -> Case:
    adapter = ortc.LoraAdapter(models.lora_adapter_bytes({"bias": np.ones(3, np.float32)}))
    s = _add_session()
    ro = _tagged()
    return Case(ro, lambda: s.run(None, {"a": A, "b": B}, ro),
                lambda: ro.add_active_lora_adapter(adapter), lambda r: same(r, [A + B]),
                lambda r: r is None and any(h is adapter for h in ro._held or ()))


def _binding_case(method: str, args: tuple[Any, ...], check: Callable[[Any], bool]
                  ) -> Callable[[Any], Case]:
    def make(tmp_path: Any) -> Case:
        s = _add_session()
        b = s.io_binding()
        b.bind_input("a", A)
        b.bind_input("b", B)
        b.bind_output("c")

        def held() -> Any:
            with holding(b, exclusive=True):  # run and read back as one use of the binding
                s.run_with_binding(b, _tagged())
                return b.get_outputs()

        return Case(b, held, lambda: getattr(b, method)(*args), lambda r: same(r, [A + B]),
                    check)
    return make


def _end_profiling_case(tmp_path: Any) -> Case:
    s = _add_session(enable_profiling=True, profile_file_prefix=str(tmp_path / "profile"))
    return Case(s, lambda: s.run(None, {"a": A, "b": B}, _tagged()), s.end_profiling,
                lambda r: same(r, [A + B]), lambda path: os.path.exists(path))


def _fill_case(tmp_path: Any) -> Case:
    s = _add_session()
    v = ortc.Value.from_numpy(A.copy())
    return Case(v, lambda: s.run(None, {"a": v, "b": B}, _tagged()), lambda: v.fill(A * 3),
                lambda r: same(r, [A + B]), lambda r: r is None and same(v.numpy(), A * 3))


def _env_case(tmp_path: Any) -> Case:
    env = ortc.get_env()

    def call() -> None:
        env.log_severity_level = LoggingLevel.VERBOSE  # the fixture's level: the hold keeps working

    return Case(env, _add_session, call, _runs_ok,
                lambda r: r is None and env.log_severity_level == LoggingLevel.VERBOSE)


def _exclusive_run_case(method: str) -> Callable[[Any], Case]:
    def make(tmp_path: Any) -> Case:
        s = _add_session(intra_op_num_threads=2)  # run_async needs two intra-op threads
        s._run_exclusive = True  # as for a provider that forbids concurrent Run

        def call() -> Any:
            if method == "run":
                return s.run(None, {"a": B, "b": B})
            if method == "run_with_values":
                return [v.numpy() for v in s.run_with_values(None, {"a": B, "b": B})]
            if method == "run_async":
                return s.run_async(None, {"a": B, "b": B}).result(TIMEOUT)
            b = s.io_binding()
            b.bind_input("a", B)
            b.bind_input("b", B)
            b.bind_output("c")
            s.run_with_binding(b)
            return b.get_outputs()

        return Case(s, lambda: s.run(None, {"a": A, "b": B}, _tagged()), call,
                    lambda r: same(r, [A + B]), lambda r: same(r, [B + B]))
    return make


def _is_ort_error(r: Any) -> bool:
    return isinstance(r, ortc.OrtError)


EXCLUSIVE_CASES: dict[str, Callable[[Any], Case]] = {
    "Env.log_severity_level (set)": _env_case,
    "Session.end_profiling": _end_profiling_case,
    "Session.run (exclusive_when)": _exclusive_run_case("run"),
    "Session.run_with_values (exclusive_when)": _exclusive_run_case("run_with_values"),
    "Session.run_with_binding (exclusive_when)": _exclusive_run_case("run_with_binding"),
    "Session.run_async (exclusive_when)": _exclusive_run_case("run_async"),
    "Value.fill": _fill_case,
    "RunOptions.tag (set)": _run_options_case("tag", "other", lambda ro: ro.tag == "other"),
    "RunOptions.log_severity_level (set)": _run_options_case(
        "log_severity_level", LoggingLevel.ERROR,
        lambda ro: ro.log_severity_level == LoggingLevel.ERROR),
    "RunOptions.log_verbosity_level (set)": _run_options_case(
        "log_verbosity_level", 2, lambda ro: ro.log_verbosity_level == 2),
    "RunOptions.add_run_config_entry": _run_options_case(
        "!add_run_config_entry", ("my.key", "v"),
        lambda ro: ro.get_run_config_entry("my.key") == "v"),
    "RunOptions.add_active_lora_adapter": _lora_case,
    "IoBinding.bind_input": _binding_case("bind_input", ("a", B), _ok),
    "IoBinding.bind_output": _binding_case("bind_output", ("c",), _ok),
    "IoBinding._bind_address": _binding_case(
        "_bind_address", ("a", B.ctypes.data, B.nbytes, B.shape, 1, False), lambda r: r is True),
    "IoBinding.clear_binding_inputs": _binding_case("clear_binding_inputs", (), _ok),
    "IoBinding.clear_binding_outputs": _binding_case("clear_binding_outputs", (), _ok),
    "IoBinding.synchronize_inputs": _binding_case("synchronize_inputs", (), _ok),
    "IoBinding.synchronize_outputs": _binding_case("synchronize_outputs", (), _ok),
    "IoBinding.output_names": _binding_case("output_names", (), lambda r: r == ["c"]),
    "IoBinding.get_outputs": _binding_case("get_outputs", (), lambda r: same(r, [A + B])),
    "IoBinding.get_output_values": _binding_case(
        "get_output_values", (), lambda r: same([v.numpy() for v in r], [A + B])),
    "SessionOptions.intra_op_num_threads (set)": _session_opts_case("intra_op_num_threads", 2),
    "SessionOptions.inter_op_num_threads (set)": _session_opts_case("inter_op_num_threads", 1),
    "SessionOptions.execution_mode (set)": _session_opts_case(
        "execution_mode", ortc.ExecutionMode.SEQUENTIAL),
    "SessionOptions.graph_optimization_level (set)": _session_opts_case(
        "graph_optimization_level", ortc.GraphOptimizationLevel.ENABLE_BASIC),
    "SessionOptions.optimized_model_filepath (set)": _session_opts_case(
        "optimized_model_filepath", lambda p: str(p / "optimized.onnx")),
    "SessionOptions.enable_profiling (set)": _session_opts_case("enable_profiling", False),
    "SessionOptions.profile_file_prefix (set)": _session_opts_case(
        "profile_file_prefix", lambda p: str(p / "prof")),
    "SessionOptions.enable_mem_pattern (set)": _session_opts_case("enable_mem_pattern", False),
    "SessionOptions.enable_cpu_mem_arena (set)": _session_opts_case("enable_cpu_mem_arena", True),
    "SessionOptions.logid (set)": _session_opts_case("logid", "other"),
    "SessionOptions.log_severity_level (set)": _session_opts_case(
        "log_severity_level", LoggingLevel.VERBOSE),
    "SessionOptions.log_verbosity_level (set)": _session_opts_case("log_verbosity_level", 1),
    "SessionOptions.use_deterministic_compute (set)": _session_opts_case(
        "use_deterministic_compute", True),
    "SessionOptions.add_session_config_entry": _session_opts_case(
        "!add_session_config_entry", ("session.intra_op.allow_spinning", "0")),
    "SessionOptions.add_free_dimension_override_by_name": _session_opts_case(
        "!add_free_dimension_override_by_name", ("n", 4)),
    "SessionOptions.add_free_dimension_override": _session_opts_case(
        "!add_free_dimension_override", ("DATA_BATCH", 4)),
    "SessionOptions.add_initializer": _session_opts_case(
        "!add_initializer", ("w", np.zeros(2, np.float32))),
    "SessionOptions.add_external_initializers": _session_opts_case(
        "!add_external_initializers", ({"w": np.zeros(2, np.float32)},)),
    "SessionOptions.register_custom_ops_library": _session_opts_case(
        "!register_custom_ops_library", ("/nonexistent/libcustom.so",), _is_ort_error),
    "SessionOptions.disable_per_session_threads": _session_opts_case(
        "!disable_per_session_threads", ()),
    "SessionOptions.append_execution_provider": _session_opts_case(
        "!append_execution_provider", ("CPUExecutionProvider",)),
}


def _exclusive_methods() -> set[str]:
    out = set()
    for name, rec in registry.items():
        for meth, rule in rec.methods.items():
            if rule.kind == "exclusive":
                out.add(f"{name}.{meth}")
            elif rule.exclusive_when is not None:
                out.add(f"{name}.{meth} (exclusive_when)")
    return out


def test_every_exclusive_method_has_an_overlap_case() -> None:
    assert _exclusive_methods() == set(EXCLUSIVE_CASES)


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except ortc.ThreadRuleError:
        raise
    except BaseException as exc:  # noqa: BLE001 - an ORT error is an outcome to check
        return exc


@pytest.mark.parametrize("case", sorted(EXCLUSIVE_CASES))
def test_exclusive_method_overlapping_a_call_inside_ort(case: str, ort_hold: Any,
                                                         tmp_path: Any) -> None:
    # strict: refused at once, while the other call is still inside ORT
    c = EXCLUSIVE_CASES[case](tmp_path)
    h = ort_hold(c.held)
    try:
        with pytest.raises(ortc.ConcurrentUseError):
            in_thread(c.call)()
        assert h.thread.is_alive()
    finally:
        assert c.check_held(h.finish())
    # serialize: waits for the call inside ORT; both results are right
    ortc.set_thread_checks("serialize")
    c = EXCLUSIVE_CASES[case](tmp_path)
    h = ort_hold(c.held)
    try:
        join = in_thread(lambda: _outcome(c.call))
        wait_until(lambda: len(c.obj._guard.waiting) >= 1, "the exclusive call to wait")
    finally:
        assert c.check_held(h.finish())
    result = join()
    assert c.check(result), result


# -- the same against a slow run stopped by RunOptions.terminate ------------------------------

@pytest.fixture(scope="module")
def chain() -> Any:
    """A run that lasts until RunOptions.terminate stops it (an endless Loop of 512x512
    MatMuls): the run is in flight as long as the test needs, on any machine."""
    s = ortc.Session(models.endless_model(512), intra_op_num_threads=1)
    # read now, not by the first run between its entry on the run options and on its inputs
    # (SlowRun takes the first for the second)
    assert [a.name for a in s.inputs] == ["x"]
    yield s
    s.close()


#: how the call in flight on another thread is named: by the marked method (or the run) its
#: entry was made for, on every Python version
QUAL = r"Session\."


class SlowRun:
    """``call(run_options)`` on a thread; returns once the run holds every guard it takes (the
    RunOptions' is taken last, right before ORT's Run)."""

    def __init__(self, call: Callable[[ortc.RunOptions], Any]) -> None:
        self.ro = ortc.RunOptions()
        self.join = in_thread(lambda: call(self.ro))
        wait_until(lambda: self.ro._guard.calls, "the slow run to start")

    def stop(self) -> None:
        self.ro.terminate()
        with pytest.raises(ortc.Fail, match="terminate"):
            self.join()


def test_conflicts_name_the_calls_as_compat_users_made_them() -> None:
    import ortc.compat as rt

    sess = rt.InferenceSession(models.endless_model(64), providers=["CPUExecutionProvider"])
    ro = rt.RunOptions()
    x = np.ones((64, 64), np.float32)
    join = in_thread(lambda: sess.run(None, {"x": x}, ro))
    wait_until(lambda: ro._native._guard.calls, "the slow run to start")
    run_name = r"Session\.run"  # (the native call compat's run made: named without a stack walk)
    try:
        with pytest.raises(ortc.ConcurrentUseError,
                           match=rf"\(InferenceSession\.end_profiling\) .* thread "
                                 rf"{join.thread.ident} \({run_name}\)"):
            sess.end_profiling()
    finally:
        ro.terminate = True
        with pytest.raises(Exception, match="terminate"):
            join()


def test_a_refused_assignment_names_the_setting_not_setattr() -> None:
    """``options.tag = ...`` reaches the setter through the class's ``__setattr__`` (which
    refuses misspelt names): a refusal names the setting the user assigned, not
    ``RunOptions.__setattr__``."""
    for options, assign, name in (
            (ortc.RunOptions(), lambda o: setattr(o, "tag", "x"), r"RunOptions\.tag"),
            (ortc.SessionOptions(), lambda o: setattr(o, "intra_op_num_threads", 2),
             r"SessionOptions\.intra_op_num_threads")):
        inside, go = threading.Event(), threading.Event()

        def use(options: Any = options) -> None:
            with holding(options):
                inside.set()
                assert go.wait(TIMEOUT)

        join = in_thread(use)
        assert inside.wait(TIMEOUT)
        try:
            with pytest.raises(ortc.ConcurrentUseError, match=rf"an exclusive call \({name}\)"):
                assign(options)
        finally:
            go.set()
            join()
        assign(options)  # free again
        options.close()


def test_slow_run_refuses_exclusive_calls(chain: ortc.Session, tmp_path: Any) -> None:
    x = np.ones((512, 512), np.float32)
    v = ortc.Value.from_numpy(x)
    run = SlowRun(lambda ro: chain.run(None, {"x": v}, ro))
    # the message names the refused call and the one in flight, as the user made them
    run_there = rf"thread {run.join.thread.ident} \({QUAL}run\)"
    try:
        with pytest.raises(ortc.ConcurrentUseError,
                           match=rf"exclusive call \(Session\.end_profiling\) .*{run_there}"):
            chain.end_profiling()
        with pytest.raises(ortc.ConcurrentUseError, match=rf"Session.close\(\) .*{run_there}"):
            chain.close()
        with pytest.raises(ortc.ConcurrentUseError,
                           match=rf"^Value: an exclusive call \(Value\.fill\) .*{run_there}"):
            v.fill(x)  # an input of the run in flight
        with pytest.raises(ortc.ConcurrentUseError):
            v.close()
        with pytest.raises(ortc.ConcurrentUseError):
            run.ro.tag = "x"
        assert same(v.numpy(), x), "shared reads of the input still work"
        assert chain.inputs[0].name == "x"
    finally:
        run.stop()
    assert not chain.closed and not v.closed
    assert run.ro.tag == "" and v.shape == (512, 512)


def test_iobinding_shared_by_threads_is_refused(chain: ortc.Session) -> None:
    """Check thread.shared-binding: one IoBinding used by threads gives wrong outputs. In strict
    mode, while one thread runs it, every other thread's use is refused."""
    b = chain.io_binding()
    b.bind_input("x", np.ones((512, 512), np.float32))
    b.bind_output("y")
    run = SlowRun(lambda ro: chain.run_with_binding(b, ro))
    refused: list[str] = []
    try:
        barrier = threading.Barrier(7)

        def other(i: int) -> None:
            barrier.wait()
            for use in (lambda: b.bind_input("x", np.zeros((512, 512), np.float32)),
                        lambda: chain.run_with_binding(b), b.get_outputs, b.output_names):
                try:
                    use()
                except ortc.ConcurrentUseError:
                    refused.append(f"{i}")

        for j in [in_thread(lambda i=i: other(i)) for i in range(7)]:
            j()
    finally:
        run.stop()
    assert len(refused) == 7 * 4
    assert b.output_names() == ["y"]


# -- shared methods from several threads against a serial run -------------------------------

def _shared_cases() -> dict[str, Callable[[int, int], Any]]:
    s = ortc.Session(models.mlp_model(2, 8, "batch"), intra_op_num_threads=1)
    s2 = ortc.Session(models.mlp_model(2, 8, "batch"), intra_op_num_threads=2)

    def x(i: int, j: int) -> np.ndarray:
        return np.full((2, 8), i * 0.25 + j * 0.01, np.float32)

    def with_binding(i: int, j: int) -> Any:
        b = s.io_binding()  # one binding per thread and call (E2c)
        b.bind_input("x", x(i, j))
        b.bind_output("y")
        s.run_with_binding(b)
        return b.get_outputs()

    ro = ortc.RunOptions(tag="stress", log_severity_level=LoggingLevel.WARNING)
    ro.add_run_config_entry("my.key", "v")
    opts = ortc.SessionOptions(intra_op_num_threads=1)
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    v = ortc.Value.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    seq = ortc.Value.from_sequence([np.ones(2, np.float32), np.zeros(3, np.float32)])
    mi = ortc.MemoryInfo.cpu()
    mi2 = ortc.MemoryInfo.cpu()
    alloc = s.allocator()
    default = ortc.default_allocator()
    env = ortc.get_env()

    def alloc_free(a: ortc.Allocator) -> Callable[[int, int], Any]:
        def use(i: int, j: int) -> Any:
            addr = a.alloc(64 + i)
            ffi.cast("char*", addr)[0] = b"x"
            return a.free(addr)
        return use

    stop = ortc.RunOptions()

    return {
        "Session.run": lambda i, j: s.run(None, {"x": x(i, j)}),
        "Session.run_with_values": lambda i, j: [
            o.numpy() for o in s.run_with_values(None, {"x": x(i, j)})],
        "Session.run_with_binding": with_binding,
        "Session.run_async": lambda i, j: s2.run_async(None, {"x": x(i, j)}).result(TIMEOUT),
        "Session.io_binding": lambda i, j: type(s.io_binding()).__name__,
        "Session.allocator": lambda i, j: s.allocator().memory_info.name,
        "Session.metadata": lambda i, j: s.metadata(),
        "Session.recipe": lambda i, j: s.recipe(),
        "Session.profiling_start_ns": lambda i, j: s.profiling_start_ns(),
        "SessionOptions.recipe": lambda i, j: opts.recipe().config_entries,
        "SessionOptions.get_session_config_entry": lambda i, j: opts.get_session_config_entry(
            "session.intra_op.allow_spinning"),
        "SessionOptions.clone": lambda i, j: opts.clone().get_session_config_entry(
            "session.intra_op.allow_spinning"),
        "RunOptions.tag": lambda i, j: ro.tag,
        "RunOptions.log_severity_level": lambda i, j: ro.log_severity_level,
        "RunOptions.log_verbosity_level": lambda i, j: ro.log_verbosity_level,
        "RunOptions.get_run_config_entry": lambda i, j: ro.get_run_config_entry("my.key"),
        "RunOptions.terminate": lambda i, j: stop.terminate(),
        "RunOptions.unset_terminate": lambda i, j: stop.unset_terminate(),
        "Value.kind": lambda i, j: (v.kind, seq.kind),
        "Value.type_info": lambda i, j: (v.type_info, seq.type_info),
        "Value.is_tensor": lambda i, j: (v.is_tensor, seq.is_tensor),
        "Value.shape": lambda i, j: v.shape,
        "Value.element_type": lambda i, j: v.element_type,
        "Value.memory_info": lambda i, j: v.memory_info.name,
        "Value.numpy": lambda i, j: v.numpy().copy(),
        "Value.to_python": lambda i, j: seq.to_python(),
        "Value.__len__": lambda i, j: (len(v), len(seq)),
        "Value.has_value": lambda i, j: v.has_value(),
        "Value.__reduce__": lambda i, j: (pickle.loads(pickle.dumps(v)).numpy(),
                                          pickle.loads(pickle.dumps(seq)).to_python()),
        "Value.__dlpack__": lambda i, j: np.from_dlpack(v).copy(),
        "MemoryInfo.name": lambda i, j: mi.name,
        "MemoryInfo.device_id": lambda i, j: mi.device_id,
        "MemoryInfo.mem_type": lambda i, j: mi.mem_type,
        "MemoryInfo.allocator_type": lambda i, j: mi.allocator_type,
        "MemoryInfo.same_as": lambda i, j: mi.same_as(mi2),
        "Allocator.alloc": alloc_free(alloc),
        "Allocator.free": alloc_free(default),
        "Allocator.memory_info": lambda i, j: (alloc.memory_info.name,
                                               default.memory_info.name),
        "Allocator.stats": lambda i, j: sorted(alloc.stats()),
        "Env.providers": lambda i, j: env.providers(),
        "Env.enable_telemetry": lambda i, j: env.enable_telemetry(),
        "Env.disable_telemetry": lambda i, j: env.disable_telemetry(),
    }


def _shared_methods() -> set[str]:
    return {f"{name}.{meth}" for name, rec in registry.items()
            for meth, rule in rec.methods.items() if rule.kind == "shared"}


def test_every_shared_method_has_a_stress_case() -> None:
    assert _shared_methods() == set(_shared_cases())


def test_shared_methods_stress_matches_serial() -> None:
    """Every shared method from 4 threads at once (8 calls each), compared call by call with the
    same calls made serially first."""
    cases = _shared_cases()
    threads_n, calls = 4, 8
    for name, call in cases.items():
        serial = {(i, j): call(i, j) for i in range(threads_n) for j in range(calls)}
        barrier = threading.Barrier(threads_n)
        wrong: list[str] = []

        def work(i: int) -> None:
            barrier.wait()
            for j in range(calls):
                got = call(i, j)
                if not same(got, serial[(i, j)]):
                    wrong.append(f"{name}[{i},{j}]: {got!r} != {serial[(i, j)]!r}")

        for j in [in_thread(lambda i=i: work(i)) for i in range(threads_n)]:
            j()
        assert not wrong, wrong[:3]


def test_shared_run_stress_matches_serial() -> None:
    """Check thread.concurrent-run through ortc: 8 threads x 25 runs on one session, distinct
    inputs."""
    s = ortc.Session(models.mlp_model(3, 16, "batch"), intra_op_num_threads=1)
    xs = [np.random.default_rng(k).standard_normal((4, 16)).astype(np.float32)
          for k in range(200)]
    serial = [s.run(None, {"x": x})[0] for x in xs]
    barrier = threading.Barrier(8)
    wrong: list[int] = []

    def work(i: int) -> None:
        barrier.wait()
        for k in range(i, 200, 8):
            if not same(s.run(None, {"x": xs[k]})[0], serial[k]):
                wrong.append(k)

    for j in [in_thread(lambda i=i: work(i)) for i in range(8)]:
        j()
    assert wrong == []


def test_concurrent_session_creation_shared_options() -> None:
    """Check thread.concurrent-create through ortc: sessions created at once from one
    SessionOptions (shared) all work."""
    opts = ortc.SessionOptions(intra_op_num_threads=1)
    barrier = threading.Barrier(4)

    def make() -> Any:
        barrier.wait()
        with ortc.Session(ADD, opts) as s:
            return s.run(None, {"a": A, "b": B})

    results = [j() for j in [in_thread(make) for _ in range(4)]]
    assert all(same(r, [A + B]) for r in results)


def test_terminate_is_shared_with_running_runs(chain: ortc.Session) -> None:
    """Check thread.shared-run-options-terminate through ortc: one RunOptions used by 4 runs at
    once; terminate() from another thread (a shared call) stops every one; after
    unset_terminate() the same options run again."""
    ro = ortc.RunOptions()
    x = np.ones((512, 512), np.float32)
    joins = [in_thread(lambda: chain.run(None, {"x": x}, ro)) for _ in range(4)]
    wait_until(lambda: len(ro._guard.calls) == 4, "four runs to start")
    in_thread(ro.terminate)()
    for j in joins:
        with pytest.raises(ortc.Fail, match="terminate"):
            j()
    ro.unset_terminate()
    s = _add_session()
    assert same(s.run(None, {"a": A, "b": B}, ro), [A + B])


def test_terminate_goes_ahead_of_a_setter_or_close_waiting_for_the_runs() -> None:
    """serialize: a RunOptions setter, or its close, waits for the runs using the options;
    terminate() is what ends those runs, so it does not queue behind that waiter (it waited
    for ever, and so did the waiter and the run). It still keeps its rule: shared."""
    ortc.set_thread_checks("serialize")
    endless = ortc.Session(models.endless_model(64), intra_op_num_threads=1)
    x = np.ones((64, 64), np.float32)
    assert ortc.RunOptions.terminate.__ortc_rule__.kind == "shared"  # type: ignore[attr-defined]
    for waiter in (lambda ro: setattr(ro, "tag", "x"), lambda ro: ro.close()):
        ro = ortc.RunOptions()
        run = in_thread(lambda: endless.run(None, {"x": x}, ro))
        wait_until(lambda: ro._guard.calls, "the run to start")
        waiting = in_thread(lambda: waiter(ro))
        wait_until(lambda: ro._guard.waiting, "the setter or close to wait for the run")
        stop = in_thread(ro.terminate)
        wait_until(lambda: not stop.thread.is_alive() or len(ro._guard.waiting) > 1,
                   "terminate to return or to wait")
        assert not stop.thread.is_alive(), "terminate queued behind a waiter of the run"
        stop()
        with pytest.raises(ortc.Fail, match="terminate"):
            run()
        waiting()
        ro.close()
        assert idle(ro._guard)


# -- Session.run per execution provider ------------------------------------------------------

def test_exclusive_run_session(monkeypatch: Any, ort_hold: Any) -> None:
    """A provider that forbids concurrent Run makes run exclusive for that session."""
    monkeypatch.setitem(sys.modules["ortc.providers"].EP_CONCURRENT_RUN, "CPUExecutionProvider",
                        (False, "pretend"))
    s = _add_session()
    rules = s.thread_rules()
    assert rules["run"] == "exclusive" and "pretend" in rules["reasons"][0]
    h = ort_hold(lambda: s.run(None, {"a": A, "b": B}, _tagged()))
    try:
        with pytest.raises(ortc.ConcurrentUseError):
            in_thread(lambda: s.run(None, {"a": A, "b": B}))()
        assert s.inputs[0].name == "a"  # no guard: cached
    finally:
        assert same(h.finish(), [A + B])
    monkeypatch.undo()
    assert _add_session().thread_rules()["run"] == "shared"


# -- close while in flight, on real objects ------------------------------------------------

def test_session_close_while_running(ort_hold: Any) -> None:
    # serialize: close waits for the run
    ortc.set_thread_checks("serialize")
    s = _add_session()
    h = ort_hold(lambda: s.run(None, {"a": A, "b": B}, _tagged()))
    try:
        join = in_thread(s.close)
        wait_until(lambda: len(s._guard.waiting) >= 1, "close() to wait")
        assert not s.closed
    finally:
        assert same(h.finish(), [A + B])
    join()
    assert s.closed
    # off: close returns at once; the release waits for the run, which completes correctly
    ortc.set_thread_checks("off")
    s = _add_session()
    h = ort_hold(lambda: s.run(None, {"a": A, "b": B}, _tagged()))
    try:
        s.close()
        assert s.closed and s._ptr != ffi.NULL, "released under a run in flight"
        with pytest.raises(ortc.ClosedError):
            s.run(None, {"a": A, "b": B})
    finally:
        assert same(h.finish(), [A + B])
    assert s._ptr == ffi.NULL, "released when the run left"


def test_closing_a_run_input_value_waits_for_the_run(ort_hold: Any) -> None:
    ortc.set_thread_checks("off")
    s = _add_session()
    v = ortc.Value.from_numpy(A.copy())
    h = ort_hold(lambda: s.run(None, {"a": v, "b": B}, _tagged()))
    try:
        v.close()  # off mode: the value's release is deferred until the run lets it go
        assert v.closed and v._ptr != ffi.NULL
    finally:
        assert same(h.finish(), [A + B])
    wait_until(lambda: v._ptr == ffi.NULL, "the deferred release")


# -- the known hazards ---------------------------------------------------------------------

def test_session_works_after_everything_else_is_gone() -> None:
    """Check env.run-after-last-release: Run after the env's last release segfaults. ortc never
    releases the env: everything else closed and collected, Env.close() called, the session
    still runs (in a child process, so a crash shows as a signal)."""
    code = r'''
import gc, numpy as np, ortc, models
opts = ortc.SessionOptions(intra_op_num_threads=1)
s = ortc.Session(models.add_model(np.float32, ["n"]), opts)
ro = ortc.RunOptions(); v = ortc.Value.from_numpy(np.ones(2, np.float32))
for h in (opts, ro, v):
    h.close()
env = ortc.get_env()
env.close(); env.close()
assert not env.closed
del opts, ro, v, env
gc.collect()
a = np.ones(2, np.float32)
assert s.run(None, {"a": a, "b": a})[0].tolist() == [2.0, 2.0]
s.close(); del s; gc.collect()
assert ortc.live_handles().get("Env") == 1, ortc.live_handles()
with ortc.Session(models.add_model(np.float32, ["n"])) as s2:
    assert s2.run(None, {"a": a, "b": a})[0].tolist() == [2.0, 2.0]
print("ok")
'''
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok"


def test_iobinding_after_session_close_in_child() -> None:
    """Check life.binding-after-session-release: an IoBinding used after ReleaseSession crashes. In
    ortc, closing the session while a binding lives defers the release: the binding keeps
    working or raises ClosedError, never aborts (in a child process, so an abort shows as a
    signal)."""
    code = r'''
import gc, numpy as np, ortc, models
s = ortc.Session(models.add_model(np.float32, ["n"]), intra_op_num_threads=1)
b = s.io_binding()
a = np.ones(2, np.float32)
b.bind_input("a", a); b.bind_input("b", a); b.bind_output("c")
s.run_with_binding(b)
s.close()
assert s.closed and ortc.live_handles().get("Session") == 1
try:
    s.run_with_binding(b)
    raise SystemExit("ran on a closed session")
except ortc.ClosedError:
    pass
b.bind_input("a", a * 2)                      # the binding still works
assert b.output_names() == ["c"]
assert b.get_outputs()[0].tolist() == [2.0, 2.0]
del s; gc.collect()
b.clear_binding_inputs(); b.bind_input("a", a); b.bind_input("b", a)
b.close()
gc.collect()
assert "Session" not in ortc.live_handles(), ortc.live_handles()
try:
    b.bind_input("a", a)
    raise SystemExit("used a closed binding")
except ortc.ClosedError:
    pass
print("ok")
'''
    proc = run_python(code)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert proc.stdout.strip() == "ok"


def test_bound_run_without_run_options_is_exclusive_on_its_binding(
        monkeypatch: Any) -> None:
    """run_with_binding with no RunOptions takes the inline entry: while one thread is inside
    ORT with the binding, another thread's run or rebind of it is refused at once (strict),
    and a run of another binding of the same session goes ahead."""
    s = ortc.Session(models.loop_chain_model(512), intra_op_num_threads=1)
    n = np.array(models.loop_iterations_for(s, 1.0, 512), np.int64)  # about 1 s here
    b = s.io_binding()
    x = np.ones((512, 512), np.float32)
    b.bind_input("x", x)
    b.bind_input("n", n)
    b.bind_output("y")
    other = s.io_binding()
    other.bind_input("x", x)
    other.bind_input("n", n)
    other.bind_output("y")
    join = in_thread(lambda: s.run_with_binding(b))
    wait_until(lambda: b._guard.calls or not join.thread.is_alive(),  # type: ignore[attr-defined]
               "the bound run to start")
    refused = []
    if join.thread.is_alive():  # type: ignore[attr-defined]
        for call in (lambda: s.run_with_binding(b), lambda: b.bind_input("x", x)):
            try:
                call()
            except ortc.ConcurrentUseError:
                refused.append(True)
        s.run_with_binding(other)  # a different binding: the session itself is shared
    join()
    assert refused == [True, True], "the busy binding was not refused"
    assert same(b.get_outputs()[0], other.get_outputs()[0])
    assert idle(b._guard) and idle(s._guard)
    b.close()
    other.close()
    s.close()


def test_iobinding_shared_by_threads_serialized(monkeypatch: Any) -> None:
    """Check thread.shared-binding (wrong outputs): 8 threads share one binding, each rebinding its
    input, running and reading back, 25 times. Each call is serialized by the guard; holding the
    binding (held exclusively) makes each bind-run-read sequence one use. All 200 correct, with
    the lock-free entries and with the locked ones a free-threaded build uses."""
    ortc.set_thread_checks("serialize")
    s = ortc.Session(models.mlp_model(3, 16, "batch"), intra_op_num_threads=1)
    b = s.io_binding()
    b.bind_output("y")
    xs = [np.full((4, 16), k * 0.01, np.float32) for k in range(200)]
    expected = [s.run(None, {"x": x})[0] for x in xs]
    barrier = threading.Barrier(8)
    wrong: list[int] = []

    def work(i: int) -> None:
        barrier.wait()
        for k in range(i, 200, 8):
            with holding(b, exclusive=True):
                b.bind_input("x", xs[k])
                s.run_with_binding(b)
                got = b.get_outputs()[0]
            if not same(got, expected[k]):
                wrong.append(k)

    for j in [in_thread(lambda i=i: work(i)) for i in range(8)]:
        j()
    assert wrong == []
    assert idle(b._guard)


# -- callbacks from ORT threads ----------------------------------------------------------------

def test_log_callback_never_waits_on_a_guard(ort_hold: Any) -> None:
    """In serialize mode a call from inside an ORT callback that would have to wait raises
    instead (the callback's thread may be one ORT needs to finish the call holding the guard);
    ortc.threads.in_ort_callback() says where it runs."""
    ortc.set_thread_checks("serialize")
    s = _add_session()
    h = ort_hold(lambda: s.run(None, {"a": A, "b": B}, _tagged()))
    seen: list[Any] = []

    class CallsOrtc(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if not seen:
                seen.append(threads.in_ort_callback())
                try:
                    s.end_profiling()  # exclusive while the held run is inside
                except BaseException as exc:  # noqa: BLE001
                    seen.append(exc)

    handler = CallsOrtc()
    logging.getLogger("ortc.ort").addHandler(handler)
    try:
        other = _add_session()  # logs on this thread: the handler runs inside the callback
    finally:
        logging.getLogger("ortc.ort").removeHandler(handler)
        assert same(h.finish(), [A + B])
    assert len(seen) == 2 and seen[0] is True, seen
    assert isinstance(seen[1], ortc.ConcurrentUseError), seen
    assert "callback" in str(seen[1])
    assert _runs_ok(other) and not threads.in_ort_callback()


def test_log_callback_exceptions_reach_the_main_threads_caller_only() -> None:
    """What a log handler raises cannot unwind through ORT. On the main thread (where signal
    handlers run, so this is how Ctrl-C arrives during a logged call) it is raised once the
    ORT call returns; on any other thread it is dropped, and the call goes on."""
    from ortc._interrupt import watcher

    class Raises(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            raise KeyboardInterrupt("from a log handler")

    logger = logging.getLogger("ortc.ort")
    handler = Raises()
    env = ortc.get_env()
    old, old_level = env.log_severity_level, logger.level
    s = _add_session()
    logger.setLevel(logging.DEBUG)
    try:
        env.log_severity_level = LoggingLevel.VERBOSE
        logger.addHandler(handler)
        assert in_thread(lambda: _runs_ok(s))()  # ORT logs on that thread: dropped
        assert watcher.deferred is None
        with pytest.raises(KeyboardInterrupt, match="from a log handler"):
            _add_session()  # session creation logs on this thread
        assert watcher.deferred is None  # raised once, not again at the next call
    finally:
        logger.removeHandler(handler)
        env.log_severity_level = old
        logger.setLevel(old_level)
    assert _runs_ok(s)


def test_logging_threads_running_through_interpreter_exit() -> None:
    """Daemon threads still creating sessions and running (with VERBOSE logging) while the
    interpreter exits: no crash, no hang."""
    code = r'''
import threading, logging, numpy as np, ortc, models
logging.basicConfig(level=logging.DEBUG, handlers=[logging.NullHandler()])
ortc.get_env().log_severity_level = ortc.LoggingLevel.VERBOSE
m = models.mlp_model(2, 8, "batch")
started = threading.Barrier(5)
def spin():
    started.wait()
    while True:
        s = ortc.Session(m, intra_op_num_threads=2)
        s.run(None, {"x": np.ones((2, 8), np.float32)}, ortc.RunOptions(tag="t"))
for _ in range(4):
    threading.Thread(target=spin, daemon=True).start()
started.wait()
print("exiting")
'''
    proc = run_python(code)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert proc.stdout.strip() == "exiting"


def test_exit_drain_survives_objects_whose_getattr_raises() -> None:
    """The exit drain looks at every live object; one whose __getattr__ raises (torch's CUDA
    backends object on a CPU build does) must not stop it."""
    code = r'''
import threading, time, ortc
class Hostile:
    def __getattr__(self, name):
        raise AssertionError("no attribute " + name)
keep = Hostile()
threading.Thread(target=time.sleep, args=(2,), daemon=True).start()
print("done")
'''
    proc = run_python(code)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr[-2000:]
    assert "Exception ignored" not in proc.stderr, proc.stderr[-2000:]


def test_a_release_skipped_after_exit_began_uncounts_nothing(monkeypatch) -> None:
    """Once the exit drain began, a finalizer on another thread skips its C release; leaving
    that skipped release must not uncount anything: it raised IndexError ("Exception ignored
    from callback for ffi.gc") when no other release was in flight, and otherwise took a
    release still inside ORT off the count, so the drain could stop waiting for it."""
    from ortc import _guard

    monkeypatch.setattr(_guard, "_exiting", True)
    monkeypatch.setattr(_guard, "_exit_thread", -1)  # not this thread
    monkeypatch.setattr(_guard, "_releases_in_flight", [])
    assert _guard.release_begins() is False  # (nothing counted: nothing to uncount)
    assert _guard._releases_in_flight == []
    _guard._releases_in_flight.append(1)  # another thread's release, still inside ORT
    assert _guard.release_begins() is False
    assert _guard._releases_in_flight == [1]
    monkeypatch.setattr(_guard, "_exit_thread", threading.get_ident())
    assert _guard.release_begins() is True  # the exit thread itself still releases, counted
    assert _guard._releases_in_flight == [1, 1]
    _guard.release_ends()
    assert _guard._releases_in_flight == [1]


def test_a_refusal_read_after_the_call_in_its_way_returned_says_so() -> None:
    """The message of a refusal is composed after the refusal: when the call in its way has
    returned in between, it says so (it said a run_async run still used the object, with no
    run_async anywhere: found as a flaky message under load)."""
    from ortc._guard import Guard

    guard = Guard(False, True)
    text = guard._describe(object(), True, None, threading.get_ident(), "IoBinding.bind_input")
    assert "run_async" not in text, text
    assert "another thread's call was in flight (it has returned since)" in text, text
