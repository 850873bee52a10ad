"""Stopping runs in flight: Ctrl-C on the main thread, and per-call deadlines.

A run blocks inside ORT with the GIL released, so Python's SIGINT handler only runs after Run
returns, which for a long model may be minutes. ORT's way to stop a run early is
RunOptionsSetTerminate on the RunOptions the run uses (it may be called from any thread). So:

* Deadlines: one daemon thread (the watcher) keeps the pending (deadline, RunOptions) and
  terminates each one whose time has come.
* Ctrl-C: Python's C-level signal handler writes the signal number to the wakeup fd
  (signal.set_wakeup_fd). The watcher reads that fd, and when SIGINT arrives while the main
  thread is inside a run, terminates that run's RunOptions. Python then raises
  KeyboardInterrupt in the main thread as usual once Run returns. Bytes are forwarded to a
  wakeup fd installed before ours (asyncio's), so its signal handling keeps working.

The watcher never takes a lock that a running thread may hold while inside ORT, and nothing
here takes a lock on a thread a signal handler's exception can reach (the main thread): such an
exception landing between a lock's acquire and its release (or inside the pure-Python
``threading.Condition``) would leave it held, and the watcher, or the next run, waiting for good.
What the main thread and the watcher share is handed over by atomic steps instead: a new deadline
is appended to the watcher's inbox (the pending list is the watcher's own), a deadline's outcome is
whoever appends to it first (:class:`Deadline`), the RunOptions a Ctrl-C terminated are appended
to ``interrupted`` after their terminate, and each step the main thread takes can be taken again
when an interrupt cut it short.

* Signal handlers inside ORT's callbacks: while the main thread is inside ORT, ORT may call back
  into Python on that thread (its logger, when a run fails or a session is built), and CPython
  runs pending signal handlers there. What such a handler raises (KeyboardInterrupt from Ctrl-C,
  SystemExit from a SIGTERM handler, an alarm's TimeoutError) cannot unwind through C: it is
  kept (:meth:`Watcher.defer`) and raised when the ORT call returns (:meth:`Watcher.raise_deferred`,
  from the status chokepoint and the run entry), as it would have been without the callback.
"""

from __future__ import annotations

import _thread
import os
import sys
import time
from select import select as _select  # (here: see Watcher._loop)
from typing import TYPE_CHECKING, Any

from . import _process

if TYPE_CHECKING:
    import threading
    import signal
else:
    try:  # the C module under `signal`, loaded at interpreter start (CPython and PyPy): the
        import _signal as signal  # `signal` module adds three IntEnums, 0.4 ms of `import ortc`
    except ImportError:  # pragma: no cover - another implementation
        import signal

__all__ = ["Watcher", "watcher", "MAIN_THREAD", "main_thread_after_fork"]

#: the main thread's ident: the thread Python runs signal handlers on, whose runs Ctrl-C stops.
#: A child forked from another thread has that thread as its main thread (Python runs signal
#: handlers there): :meth:`Watcher.after_fork_in_child` renews this, and every module that copies
#: it renews its copy in its own fork hook (:func:`main_thread_after_fork`).
def _main_thread_at_import() -> int:
    # `threading` is not imported for this (0.7 ms of a cold start, and nothing on a first
    # session's path needs it): when it is not loaded yet, it would take this thread for the
    # main one if imported now, and so does this
    loaded = sys.modules.get("threading")
    ident: int = loaded.main_thread().ident if loaded is not None else _thread.get_ident()
    return ident


MAIN_THREAD = _main_thread_at_import()


def main_thread_after_fork() -> int:
    """The child's main thread after a fork: the thread that forked."""
    return _thread.get_ident()


#: the two outcomes a :class:`Deadline` can have
FIRED = "fired"
CANCELLED = "cancelled"


class Deadline(list[str]):
    """One run's deadline: the list of who claimed it, whose first item is the outcome.

    The watcher appends FIRED when the time has come, the run appends CANCELLED when it ends;
    ``list.append`` is one atomic step, so exactly one of the two wins and the outcome is kept
    where a retry sees it (a run whose finish an interrupt cut short appends again and reads the
    same first item). ``terminated`` is set once the winning watcher's terminate is done: a run
    that lost waits for it before re-arming its options (a terminate after the re-arm would
    leave them terminated)."""

    __slots__ = ("when", "run_options", "terminated")

    def __init__(self, when: float, run_options: Any) -> None:
        super().__init__()
        self.when = when
        self.run_options = run_options
        self.terminated = False

    # identity, as any object's: two deadlines with the same claims are not the same deadline
    __hash__ = object.__hash__  # type: ignore[assignment]
    __eq__ = object.__eq__


class Watcher:
    def __init__(self) -> None:
        #: a binary semaphore the watcher sleeps on when there is no signal pipe to select on:
        #: held while nobody asked it to look again; released (never waited on) by whoever adds
        #: a deadline or installs the pipe. Only the watcher acquires it (made released: the
        #: first wait returns at once, and the watcher looks again)
        self._wake = _thread.allocate_lock()
        #: deadlines added and not yet taken into its pending list by the watcher (append,
        #: pop: atomic)
        self._inbox: list[Deadline] = []
        #: the deadlines the watcher waits for, touched by the watcher thread alone
        self._pending: list[Deadline] = []
        #: one token per process, popped by the watcher thread that runs: a second thread
        #: (started when an interrupt came between a start and its mark) finds none and ends
        self._runner: list[bool] = [True]
        #: the process the watcher thread runs in (a forked child starts its own), 0 for none
        self._thread_pid = 0
        self._sig_r = self._sig_w = -1
        self._forward_fd = -1
        #: the Ctrl-C bridge is installed
        self.sigint_ready = False
        #: the SIGINT handler the bridge was last declined for (the user's own, or SIG_IGN, as
        #: in a background job): while it stays, a main-thread run's check is one C call
        self._declined_for: Any = None
        #: the RunOptions of the run the main thread is inside, if any
        self.main_run: Any = None
        #: RunOptions terminated by Ctrl-C that must be re-armed before their next use: the
        #: watcher appends each after its terminate, :meth:`rearm` removes each after its re-arm
        self.interrupted: list[Any] = []
        #: one item while the watcher handles a Ctrl-C (it may have read ``main_run`` and not
        #: yet listed its terminate in ``interrupted``)
        self.sigint_busy: list[int] = []
        #: what a callback on the main thread raised (a signal handler's exception), to be raised
        #: once the ORT call it interrupted returns
        self.deferred: BaseException | None = None

    # -- the thread ----------------------------------------------------------------------------
    def _start(self) -> None:
        # A bare thread: threading.Thread.start() waits until the new thread has run, which on a
        # busy machine took 5 ms of the first Session (the OS had to schedule it first). The
        # loop needs nothing threading.Thread adds; like a daemon thread, it is not joined at
        # exit. No lock: the thread is started before it is marked started, so an interrupt
        # between the two (or two threads here at once) makes a second thread, which finds the
        # runner token taken and ends; never none.
        if self._thread_pid != os.getpid():
            _thread.start_new_thread(self._loop, ())
            self._thread_pid = os.getpid()

    def after_fork_in_child(self) -> None:
        # Only the forking thread survives a fork: the watcher thread is gone and its lock may
        # have been held at that instant. The parent's deadlines belong to the parent's runs.
        global MAIN_THREAD
        MAIN_THREAD = main_thread_after_fork()
        self._wake = _thread.allocate_lock()
        self._inbox = []
        self._runner = [True]
        # what belonged to the parent's other threads' calls: a Ctrl-C deferred in a callback
        # of the parent's main thread, options its Ctrl-C terminated
        self.deferred = None
        self.interrupted = []
        self.sigint_busy = []  # (the parent's watcher is not in this process)
        self._pending = []
        self.main_run = None
        self._thread_pid = 0  # the next deadline or Ctrl-C bridge starts the child's own
        if self._sig_r >= 0:
            # The pipe is shared with the parent: each process's watcher would read the other's
            # Ctrl-C (a child's run went on after its SIGINT while the parent's watcher took the
            # byte). Give the wakeup fd back; the child's first run installs a pipe of its own.
            try:
                _real_set_wakeup_fd(self._forward_fd)
            except (ValueError, OSError):
                return  # the wakeup fd still writes into the pipe: keep it open, shared
            _chain_set_wakeup_fd(False)
            for fd in (self._sig_r, self._sig_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._sig_r = self._sig_w = self._forward_fd = -1
            self.sigint_ready = False

    def _loop(self) -> None:
        # (no import here: a fork while this thread imported a module left the child's own
        # import of it waiting for good on that module's import lock, which the fork copied
        # held)
        try:
            self._runner.pop()
        except IndexError:
            return  # another watcher thread runs in this process
        pending = self._pending
        inbox = self._inbox
        while True:
            while inbox:
                pending.append(inbox.pop())
            now = time.monotonic()
            for deadline in pending:
                if not deadline and deadline.when <= now:
                    self._fire(deadline)
            # the settled ones go (fired, or cancelled: their runs ended in time); a run has
            # at most one deadline pending, so the scan is over the runs in flight
            pending[:] = [d for d in pending if not d]
            timeout = min(d.when for d in pending) - now if pending else None
            if self._sig_r < 0:
                # no signal pipe: sleep on the wake semaphore (a new deadline releases it)
                self._wake.acquire(True, -1 if timeout is None else min(timeout, 3600.0))
                continue
            # With a signal pipe, sleep in select so SIGINT wakes us; cap the sleep so new
            # deadlines are picked up (add_deadline also writes a byte to wake us).
            wait = 0.5 if timeout is None else min(timeout, 0.5)
            try:
                ready, _, _ = _select([self._sig_r], [], [], wait)
            except (OSError, ValueError):
                continue
            if ready:
                try:
                    data = os.read(self._sig_r, 512)
                except OSError:
                    continue
                signals = data.replace(b"\0", b"")  # (a NUL is add_deadline's wake-up: ours)
                if signals and self._forward_fd >= 0:
                    try:
                        os.write(self._forward_fd, signals)
                    except OSError:
                        pass
                if signal.SIGINT in data:
                    self._on_sigint()

    @staticmethod
    def _fire(deadline: Deadline) -> None:
        """(On the watcher thread.) Terminate a deadline's run unless the run ended first."""
        deadline.append(FIRED)
        if deadline[0] is FIRED:
            try:
                _terminate(deadline.run_options)
            finally:
                deadline.terminated = True

    def _on_sigint(self) -> None:
        # An application that installed its own SIGINT handler after ours decides what Ctrl-C
        # means: its handler runs once the run returns, and the run is left to finish.
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return
        # counted while this thread has the main run's options in hand: a run ending
        # meanwhile waits for the terminate, then re-arms (end_main_run)
        self.sigint_busy.append(1)
        try:
            ro = self.main_run
            if ro is not None:
                # terminated first, listed after: a re-arm that finds it listed comes after the
                # terminate, never before it
                _terminate(ro)
                self.interrupted.append(ro)
        finally:
            self.sigint_busy.pop()

    def end_main_run(self, outer: Any) -> None:
        """(On the main thread, as a run ends.) The run's options are no longer the ones a
        Ctrl-C stops (``outer``'s are again: a run a signal handler started inside another).
        A Ctrl-C the watcher took before that, whose terminate may still be on its way, is
        waited for, and whatever a Ctrl-C terminated is re-armed at once (other threads may
        share the options). Idempotent: an interrupted end is done again."""
        self.main_run = outer
        while self.sigint_busy:  # (a few microseconds, while the watcher terminates)
            time.sleep(0.0002)
        if self.interrupted:
            self.rearm()

    def rearm(self) -> None:
        """Allow runs again on the RunOptions that Ctrl-C terminated (on the main thread).

        Each is taken off the list only after its re-arm, so a rearm an interrupt cut short
        leaves the rest listed for the next one (a re-arm done twice is harmless); one the
        watcher lists meanwhile is re-armed too, or left listed for the next run."""
        interrupted = self.interrupted
        while interrupted:
            try:
                ro = interrupted[0]
            except IndexError:  # a signal handler's run re-armed the rest meanwhile
                return
            ro._unset_now()
            try:
                interrupted.remove(ro)  # the first listing of it: one its re-arm covers
            except ValueError:
                pass

    # -- exceptions raised inside callbacks ---------------------------------------------------
    def defer(self, exc: BaseException) -> None:
        """Keep what a callback raised on the main thread (the first one wins: a second Ctrl-C
        during the same call adds nothing)."""
        if self.deferred is None:
            self.deferred = exc

    def raise_deferred(self, failure: BaseException | None = None) -> None:
        """Raise (once) what a callback on the main thread deferred, if anything; ``failure``,
        the ORT call's own error, becomes its context."""
        exc, self.deferred = self.deferred, None
        if exc is not None:
            if failure is not None:
                exc.__context__ = failure
            try:
                raise exc
            finally:  # (see _status.raise_status: no frame keeps what its traceback holds)
                del exc, failure

    # -- deadlines -----------------------------------------------------------------------------
    @staticmethod
    def deadline(when: float, run_options: Any) -> Deadline:
        """A deadline for ``run_options`` at ``when`` (time.monotonic), not yet armed: the run
        keeps it first, then arms it (:meth:`add_deadline`), so an interrupt between the two
        leaves nothing armed that the run does not know of."""
        return Deadline(when, run_options)

    def add_deadline(self, deadline: Deadline) -> None:
        """Arm ``deadline``: the watcher terminates its options when the time comes. One already
        past (``timeout=0``) terminates them now, before the run starts, so that such a run
        always ends in RunTimeout (left to the watcher, a fast run often won the race)."""
        if deadline.when <= time.monotonic():
            deadline.append(FIRED)
            if deadline[0] is FIRED:
                _terminate(deadline.run_options)
                deadline.terminated = True
            return
        self._start()
        self._inbox.append(deadline)
        if self._wake.locked():
            try:
                self._wake.release()
            except RuntimeError:  # released by another thread meanwhile: awake already
                pass
        if self._sig_w >= 0:
            try:
                os.write(self._sig_w, b"\0")  # wake select() to see the new deadline
            except OSError:
                pass

    def finish_deadline(self, deadline: Deadline) -> bool:
        """End ``deadline`` as its run ends; True when it fired (the run was terminated by it).

        Idempotent, so a finish an interrupt cut short is simply done again. The options are
        let go at once, the watcher dropping a cancelled deadline from its pending list at its
        next look (``run(timeout=3600)`` in a loop must not keep an hour of RunOptions
        alive)."""
        deadline.append(CANCELLED)
        if deadline[0] is CANCELLED:
            deadline.run_options = None
            return False
        # The watcher's: wait until its terminate is done, so a re-arm comes after it. (An
        # immediate deadline's terminate was this thread's own; a forked child has no watcher
        # to wait for: a terminate it had not done before the fork is not this process's.)
        while not deadline.terminated and self._thread_pid == os.getpid():
            time.sleep(0.0002)
        return True

    # -- Ctrl-C --------------------------------------------------------------------------------
    def ctrl_c_ready(self) -> bool:
        """Whether Ctrl-C can stop a run on the main thread: the bridge is installed (by the
        first main-thread run that asks: a Session installs nothing) and nothing has taken the
        wakeup fd from it (see :func:`_chained_set_wakeup_fd`). False when the application
        handles SIGINT itself (its handler decides what Ctrl-C means) or the bridge cannot be
        installed."""
        if self.sigint_ready:
            return True
        handler = signal.getsignal(signal.SIGINT)
        if handler is self._declined_for:
            # Every main-thread run asks again (the user may restore Python's handler): the
            # whole test below took 280 ns a run, this one 90 (bench/bench_handlers.py)
            return False
        if _thread.get_ident() != MAIN_THREAD:
            return False
        if handler is not signal.default_int_handler:
            self._declined_for = handler
            return False  # the user handles SIGINT themselves; leave it alone
        # The pipe is made once and kept (also by uninstall): code that makes a Session per
        # call installs and uninstalls the bridge every time, and making a pipe and handing it
        # to the watcher thread cost more than the session (docs/PERFORMANCE.md)
        new_pipe = self._sig_w < 0
        if new_pipe:
            r, w = os.pipe()
            os.set_blocking(w, False)
        else:
            r, w = self._sig_r, self._sig_w
        try:
            old = _real_set_wakeup_fd(w)
        except (ValueError, OSError):
            if new_pipe:
                os.close(r)
                os.close(w)
            return False
        self._forward_fd = old
        self._sig_r, self._sig_w = r, w
        _chain_set_wakeup_fd(True)
        self.sigint_ready = True
        self._start()
        if new_pipe and self._wake.locked():  # the watcher may sleep without the pipe: wake it
            try:
                self._wake.release()
            except RuntimeError:  # released meanwhile: it looks again anyway
                pass
        return True

    def uninstall(self) -> None:
        """Give the wakeup fd back to whoever ortc took it from (or chained it for), and the
        application its own ``set_wakeup_fd``; on the main thread only (where Python allows
        setting it): when the last Session is closed there, and at exit. ortc's pipe stays
        open for the next install (nothing writes into it meanwhile)."""
        if not self.sigint_ready or _thread.get_ident() != MAIN_THREAD:
            return
        try:
            _real_set_wakeup_fd(self._forward_fd)
        except (ValueError, OSError):
            return  # the fd it had is gone: ours stays, harmless
        _chain_set_wakeup_fd(False)
        self.sigint_ready = False
        self._forward_fd = -1
        self.main_run = None


#: Python's own set_wakeup_fd, whatever ortc puts in its place
_real_set_wakeup_fd = signal.set_wakeup_fd


def _chained_set_wakeup_fd(fd: int, *, warn_on_full_buffer: bool = True) -> int:
    """``signal.set_wakeup_fd`` while ortc's Ctrl-C bridge holds the wakeup fd.

    Another part of the application (asyncio, whenever it adds or removes a signal handler)
    setting the wakeup fd would silently take it from the bridge, and Ctrl-C would stop no
    run. Confirming at every run that the fd is still ortc's costs ~0.9 us (Python checks a
    new fd with two system calls: docs/PERFORMANCE.md); instead the bridge stays installed
    and the fd given here becomes the one it forwards every byte to, so both work. Returns
    the fd the caller had set before, as Python's would; a bad fd is refused as Python
    refuses it."""
    if not watcher.sigint_ready:
        return _real_set_wakeup_fd(fd, warn_on_full_buffer=warn_on_full_buffer)
    if _thread.get_ident() != MAIN_THREAD:
        raise ValueError("set_wakeup_fd only works in main thread of the main interpreter")
    fd = int(fd)
    if fd != -1:
        os.fstat(fd)  # OSError for a closed fd, as Python's
        if os.get_blocking(fd):
            raise ValueError(f"the fd {fd} must be in non-blocking mode")
    old, watcher._forward_fd = watcher._forward_fd, fd
    return old


def _chain_set_wakeup_fd(on: bool) -> None:
    """Put :func:`_chained_set_wakeup_fd` in place of Python's (``on``) or back. Both the C
    module and ``signal`` (when imported: it copied the C module's names) are changed, each
    only if it still holds what ortc expects there."""
    mine, real = _chained_set_wakeup_fd, _real_set_wakeup_fd
    for name in ("_signal", "signal"):
        module = sys.modules.get(name)
        if module is None:
            continue
        current = getattr(module, "set_wakeup_fd", None)
        if on and current is real:
            module.set_wakeup_fd = mine  # type: ignore[attr-defined]
        elif not on and current is mine:
            module.set_wakeup_fd = real  # type: ignore[attr-defined]


def _terminate(run_options: Any) -> None:
    try:
        run_options._terminate_now()
    except Exception:  # noqa: BLE001 - a closed RunOptions: nothing left to stop
        pass


watcher = Watcher()
_process.at_fork(watcher.after_fork_in_child, __name__, MAIN_THREAD=_process.RESET)
_process.at_fork(watcher.after_fork_in_child, watcher, _wake=_process.NEW,
                 _inbox=_process.EMPTIED, _runner=_process.RESET,
                 _thread_pid=_process.FORGOTTEN, _sig_r=_process.CLOSED, _sig_w=_process.CLOSED,
                 _forward_fd=_process.RESET, sigint_ready=_process.RESET, _pending=_process.EMPTIED,
                 interrupted=_process.EMPTIED, sigint_busy=_process.EMPTIED,
                 main_run=_process.RESET, deferred=_process.RESET)
