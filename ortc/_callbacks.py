"""The bridge for C calling Python: RunAsync completions.

ORT calls the completion on one of its intra-op pool threads (conformance check
thread.run-async-callback-thread), concurrently with anything else. The callback never raises
into C: every failure is stored on the job's Future.
Everything ORT reads during the run (input values and their buffers, name arrays, the output
array) and the session itself stay pinned on the job until the callback has run; the session
counts the job as a live child, so closing it meanwhile defers its release to the completion.
"""

from __future__ import annotations

import _thread
import os
import threading
import time
from concurrent.futures import CancelledError, Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Optional

from . import _process
from ._ffi import ffi
from .threads import ort_callback

__all__ = ["AsyncJob", "RunFuture", "run_async_callback", "pending_jobs", "releaser",
           "starter"]

#: the jobs in flight (set.add and discard are each one atomic step: no lock, which a Ctrl-C on
#: the main thread could leave held: see ortc/_handle.py)
_pending: set[AsyncJob] = set()
#: idents of the ORT threads inside a completion now, and whether any completion ever ran: the
#: exit drain waits for both (see _drain_at_exit)
_in_completion: set[int] = set()
_completions_seen = False


def _nothing(*_args: Any) -> Any:
    return None


class RunFuture(Future):  # type: ignore[type-arg]  # (Future is generic only from 3.9's typing)
    """The Future of one run_async run. :meth:`cancel` stops the run (``asyncio.wrap_future``'s
    awaitable cancels it when its task is cancelled): the run has run options of its own, new
    ones or a stand-in for the caller's (which other runs may share), and the cancel
    terminates those alone."""

    def __init__(self) -> None:
        super().__init__()
        #: terminates this run's own run options (set before the Future is handed out)
        self.stop: Optional[Callable[[], None]] = None

    def cancel(self) -> bool:
        # cancelled first, then stopped: a completion that comes between finds the Future
        # cancelled (and delivers nothing), never a Future that reports a stopped run's error
        stop = self.stop
        if stop is None or not super().cancel():
            return False
        stop()
        return True


class AsyncJob:
    """One RunAsync in flight: what must stay alive, and how to finish it.

    Who hands the job to ORT, or undoes it, is decided by one atomic step: popping the job's
    one-item ``claim`` list. :meth:`start` pops it and then calls RunAsync (and, should ORT
    refuse the job, undoes it itself); the caller's cleanup pops it with :meth:`claim_back`
    and undoes a job nobody started. Whatever interrupts either (a KeyboardInterrupt between
    any two instructions), the job is handed over or undone once, never both; and a job ORT
    took is finished by its completion alone."""

    def __init__(self, finish: Callable[[Any, int, Any], Any], keep: tuple[Any, ...],
                 on_done: Callable[[], None]) -> None:
        self.future = RunFuture()
        self.finish = finish
        self.keep = keep
        self.on_done = on_done
        self.handle: Any = ffi.new_handle(self)
        self.claim: list[bool] = [True]
        #: released once :meth:`start` is over (whether it handed the job over or not): a bare
        #: lock, which only the waiting thread ever blocks on (an Event's inner lock, left held
        #: by a KeyboardInterrupt in its wait, blocked the starter's set() for good under PyPy)
        self.started = _thread.allocate_lock()
        self.started.acquire()
        #: why the hand-over failed (ORT refused the job), for the caller to raise
        self.start_error: BaseException | None = None
        _pending.add(self)

    def start(self, hand_over: Callable[[], None]) -> None:
        """Call ``hand_over`` (RunAsync, and the undoing of a job ORT refused) unless the
        caller claimed the job back first; ``started`` is released either way."""
        try:
            try:
                self.claim.pop()
            except IndexError:
                return  # claimed back: undone by the caller
            try:
                hand_over()
            except BaseException as exc:  # noqa: BLE001 - the caller raises it
                self.start_error = exc
        finally:
            self.started.release()

    def claim_back(self) -> bool:
        """True for the first to ask when nobody started the job (the caller then undoes
        it); False once :meth:`start` has it."""
        try:
            self.claim.pop()
        except IndexError:
            return False
        return True

    def complete(self, outputs: Any, count: int, status: Any) -> None:
        # on an ORT pool thread: a guard conflict here (also in done-callbacks) raises, never waits
        with ort_callback():
            try:
                try:
                    result = self.finish(outputs, count, status)
                except BaseException as exc:  # noqa: BLE001 - delivered through the Future
                    self.future.set_exception(exc)
                else:
                    self.future.set_result(result)
            except InvalidStateError:
                pass  # cancelled (RunFuture.cancel stopped the run): nothing to deliver
            finally:
                self.keep = ()
                try:
                    self.on_done()
                finally:
                    # the closures hold the session and the run's context, and the handle
                    # this object: let both go now rather than at a collection
                    self.finish = self.on_done = _nothing
                    self.handle = None
                    _pending.discard(self)

    def abandon(self) -> None:
        """The run never started (RunAsync itself failed): forget the job."""
        self.keep = ()
        self.finish = self.on_done = _nothing
        self.handle = None
        _pending.discard(self)


def _on_run_async_done(user_data: Any, outputs: Any, count: int, status: Any) -> None:
    global _completions_seen
    me = _thread.get_ident()
    _in_completion.add(me)
    _completions_seen = True
    try:
        try:
            job = ffi.from_handle(user_data)
        except BaseException:  # noqa: BLE001 - nothing to report to
            return
        try:
            job.complete(outputs, count, status)
        except BaseException:  # noqa: BLE001 - never unwind into ORT's thread pool
            pass
    finally:
        _in_completion.discard(me)


#: kept for the life of the process: ORT may call it until the last job completes
run_async_callback = ffi.callback("RunAsyncCallbackFn", _on_run_async_done)


class _Worker:
    """A queue of work and the loop a daemon thread runs over it (a failure is the work's
    own: the thread goes on)."""

    def __init__(self) -> None:
        import queue

        self.queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def _loop(self) -> None:
        while True:
            fn = self.queue.get()
            try:
                fn()
            except BaseException:  # noqa: BLE001 - a failure must not kill the thread
                pass
            finally:
                # let go before waiting for the next: the last job's releases (a session's
                # _child_released) kept that session, and its memory, until another run_async
                del fn


class _Releaser(_Worker):
    """A daemon thread for work that must not run on an ORT pool thread: releasing a session
    from a completion would make its thread pool join the very thread it runs on."""

    def __init__(self) -> None:
        super().__init__()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def submit(self, fn: Callable[[], None]) -> None:
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._loop, name="ortc-releaser",
                                               daemon=True)
                self.thread.start()
        self.queue.put(fn)


releaser = _Releaser()


class _Starter(_Worker):
    """The thread that hands run_async jobs started on the main thread to ORT
    (:meth:`AsyncJob.start`): a signal handler's exception never runs on it, so nothing cuts a
    hand-over between RunAsync's return and what its status decides. No lock (the releaser's
    guards its thread's start): only the main thread submits, and a lock it held when an
    interrupt came could stay held. The thread is started before it is marked started (an
    interrupt between the two makes a second, harmless thread on the next submit, never
    none)."""

    def __init__(self) -> None:
        super().__init__()
        #: the process whose starter thread runs (0: none yet; a forked child starts its own)
        self.pid = 0

    def submit(self, fn: Callable[[], None]) -> None:
        self.queue.put(fn)  # (never blocks)
        if self.pid != os.getpid():
            _thread.start_new_thread(self._loop, ())
            self.pid = os.getpid()


starter = _Starter()


def _forget_the_parents_runs() -> None:
    # In a forked child only the forking thread exists: the parent's runs in flight go on in
    # the parent, their completions never come here. Waiting for them at exit held every such
    # child 30 s per run; their Futures stay pending here (the result is the parent's). The
    # releaser's thread is gone, and its queue (the parent's releases) is not this process's.
    _pending.clear()
    _in_completion.clear()
    releaser.__init__()  # type: ignore[misc]  # a new lock and queue, no thread
    starter.__init__()  # type: ignore[misc]


_process.at_fork(_forget_the_parents_runs, __name__, _pending=_process.EMPTIED, _in_completion=_process.EMPTIED)
_process.at_fork(_forget_the_parents_runs, releaser, lock=_process.NEW, queue=_process.NEW,
                 thread=_process.FORGOTTEN)
_process.at_fork(_forget_the_parents_runs, starter, queue=_process.NEW, pid=_process.RESET)


def pending_jobs() -> int:
    """How many RunAsync jobs are in flight."""
    return len(_pending)


#: seconds the exit waits for run_async runs in flight before it stops them
EXIT_WAIT = 30.0


def _drain_at_exit(limit: float | None = None, stopped_limit: float = 5.0) -> None:
    """Give the runs in flight, and the completions still running, ``limit`` seconds
    (:data:`EXIT_WAIT`) in all; then stop the runs still going (each through its own run
    options, as ``Future.cancel`` does: their Futures fail with ORT's error) and give their
    completions ``stopped_limit`` seconds more. A Ctrl-C during the wait stops them at once.

    A completion arriving after the interpreter is torn down would call into a dead
    interpreter (a run longer than the wait, left running, killed the process at exit with
    SIGSEGV or SIGILL). One that is still running Python when it is torn down is worse: its
    thread is ORT's, and Python 3.11 ends a thread that asks for the GIL during finalization
    with pthread_exit, whose unwinding through ORT's thread pool aborts the process ("FATAL:
    exception not rethrown"). A completion runs on after its Future is set: the Future's
    done-callbacks run there, then the job's releases (tests/test_async.py).
    """
    deadline = time.monotonic() + (EXIT_WAIT if limit is None else limit)
    try:
        for job in list(_pending):
            try:
                job.future.exception(timeout=max(0.0, deadline - time.monotonic()))
            except (TimeoutError, CancelledError, FutureTimeout):
                pass
    except BaseException:  # noqa: BLE001 - a Ctrl-C at exit: stop the runs now
        pass
    if _pending:
        for job in list(_pending):
            stop = job.future.stop
            if stop is not None:
                try:
                    stop()
                except Exception:  # noqa: BLE001 - the others must still be stopped
                    pass
        deadline = time.monotonic() + stopped_limit
        while _pending and time.monotonic() < deadline:
            time.sleep(0.001)
    while _in_completion and time.monotonic() < deadline:
        time.sleep(0.001)  # the GIL released: the completions' threads can finish
    if _completions_seen:
        # A thread that has just left a completion may still be returning through cffi,
        # waiting for the GIL it gave up at its last bytecodes: a moment without the GIL
        # lets it through before finalization starts.
        time.sleep(0.005)


_process.at_exit(_process.ASYNC_JOBS, _drain_at_exit)
