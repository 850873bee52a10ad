"""The guard every handle carries: which threads are inside the object's calls, and whether
a new call may join them (the markers' rules, enforced per the policy in :mod:`ortc.threads`).

Also here is the process state the guard consults on every entry, kept as this module's globals
so an entry reads each with one lookup: the fork generation (a forked child's first use of an
object is refused, or rebuilds a Session) and the interpreter-exit drain (calls park, runs in
flight are terminated). :class:`Lease` holds a guard for the length of another object's call.
"""

from __future__ import annotations

import _thread
import itertools
import os
import sys
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from . import _process
from .errors import ClosedError, ConcurrentUseError, ForkedHandleError, ThreadRuleError, \
    WrongThreadError
from .threads import OFF, SERIALIZE, STRICT, in_ort_callback, policy

if TYPE_CHECKING:
    import threading

__all__ = ["Guard", "Lease", "LOCK_FREE", "survive_fork", "releasing"]

T = TypeVar("T")

_get_ident = _thread.get_ident
#: tokens of the entries a run_async job holds once its caller has handed them off
#: (:meth:`Guard.hand_off`): above any thread's ident (pthread addresses; 32-bit thread ids)
_JOB_TOKENS_FROM = 1 << 62
_job_tokens = itertools.count(_JOB_TOKENS_FROM)

#: Whether entries may skip the lock ("announce, then look": see Guard). That is sound while a
#: GIL runs one thread's bytecode at a time, which orders every update before the next read. A
#: free-threaded build gives no such order between one thread's list update and its later read
#: of an attribute another thread wrote, so there every entry takes the lock. (A free-threaded
#: interpreter whose GIL is on at import keeps it on: it can be re-enabled, not disabled.)
LOCK_FREE = bool(getattr(sys, "_is_gil_enabled", lambda: True)())

# -- fork ------------------------------------------------------------------------------------------
# A fork bumps the generation in the child; every guard remembers the generation it was made in.
# Comparing two ints is far cheaper than os.getpid() (a system call) on every call.
_generation = 0
#: this process's id, renewed in a forked child (os.getpid() is a system call per handle)
_pid = os.getpid()


_fork_survivors: list[Guard] = []


def survive_fork(guard: Guard | None) -> None:
    """Keep ``guard`` usable in forked children (for process-wide objects ORT keeps valid
    across fork, such as the env): the child gets it back idle instead of ForkedHandleError."""
    if guard is not None:
        _fork_survivors.append(guard)


def _after_fork_in_child() -> None:
    global _generation, _pid
    _generation += 1
    _pid = os.getpid()
    for guard in _fork_survivors:
        guard._renew()


_process.at_fork(_after_fork_in_child, __name__, _generation=_process.RESET, _pid=_process.RESET,
                 _fork_survivors=_process.RESET)


# -- interpreter exit ---------------------------------------------------------------------------
# A thread that is inside ORT when the interpreter finalizes must not call back into Python: ORT
# logs from C++ destructors, and a callback that cannot take the GIL any more exits the thread
# through those noexcept frames (std::terminate, measured: "terminate called without an active
# exception"). So at exit, while the GIL can still be taken, ortc parks every other thread at its
# next guarded call, stops runs in flight that have RunOptions, and waits (bounded) until no call
# and no release is inside ORT.
_exiting = False
_exit_thread = 0
#: one entry per C release in progress (append and pop are atomic: no lock on this path)
_releases_in_flight: list[int] = _process.emptied(__name__, "_releases_in_flight", [])


def _park() -> None:
    import threading

    threading.Event().wait()  # a daemon thread calling ortc after exit began: wait for the end



def _condition(lock: Any) -> threading.Condition:
    """A Condition over ``lock``, made on a guard's first wait: ``threading`` is imported here,
    since a first session has no use for it (0.7 ms of a cold start)."""
    import threading

    return threading.Condition(lock)


class releasing:
    """Context manager around a C release call: counted for the exit drain; after exit began
    the release is skipped (``__enter__`` returns False) rather than run on a thread the
    interpreter may abandon mid-call. One instance per release: ``__exit__`` uncounts only
    what its ``__enter__`` counted (a skipped release popping would take another release's
    entry, or raise IndexError from a finalizer at exit)."""

    __slots__ = ("counted",)

    def __init__(self) -> None:
        self.counted = False

    def __enter__(self) -> bool:
        if _exiting and _get_ident() != _exit_thread:
            return False
        _releases_in_flight.append(1)
        self.counted = True
        return True

    def __exit__(self, *exc: object) -> None:
        if self.counted:
            self.counted = False
            _releases_in_flight.pop()


def _drain_at_exit(limit: float = 2.0) -> None:
    global _exiting, _exit_thread
    import gc
    import time

    me = _get_ident()
    import threading  # here: a first session has no use for the module (0.7 ms of a cold start)

    if not any(t.ident != me for t in threading.enumerate()):
        return  # no other Python thread: nothing can be inside ORT
    _exit_thread = me
    _exiting = True
    guards = []
    for obj in gc.get_objects():
        if type(obj) is Guard:
            guards.append(obj)
            with obj.lock:
                obj.slow = obj.shared_slow = True  # every entry takes the slow path: it parks
    for obj in gc.get_objects():
        # the class first: any object's __getattr__ may raise (torch's CUDA backends object
        # does, without CUDA: the drain stopped there)
        if not hasattr(type(obj), "_terminate_now"):
            continue
        guard = getattr(obj, "_guard", None)
        if type(guard) is Guard and guard.users:
            obj._terminate_now()  # RunOptions of runs in flight
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and (
            _releases_in_flight or any(tuple(g.users) for g in guards)):
        time.sleep(0.002)


_process.at_exit(_process.RUNS_IN_FLIGHT, _drain_at_exit)


class Guard:
    """Per-object bookkeeping of which threads are inside the object's methods.

    ``users`` holds one entry (the thread id) per call in flight; ``owner`` is the thread inside
    an exclusive call, ``depth`` how deeply it is nested (re-entry by the same thread, e.g. from a
    callback, is allowed). ``send``/``sync`` come from the object's class.

    Every entry announces itself first (appends the caller to ``users``; an exclusive entry
    sets ``owner`` before that) and looks second; an entry that finds a conflict removes itself
    again. So of two threads entering at once, at least one sees the other: a shared entry on a
    Sync object needs no lock (it looks only for an ``owner``), exclusive and non-Sync entries
    decide under the lock, except :meth:`enter_alone`, which looks only at ``users``; without a
    GIL (:data:`LOCK_FREE` false) every entry decides under the lock. Leaving
    only removes the entry. ``list.append``/``list.remove``/``len`` and ``tuple(list)`` are each
    atomic with or without the GIL (free-threaded CPython takes the list's own lock, which also
    orders them), so a snapshot may at worst show a call that is just arriving or leaving (a
    conservative answer), never miss one that is inside. Threads that must hear about a leave
    (serialize-mode waiters, a deferred release) announce themselves in ``watch`` *before* they
    look at ``users``; a leaver removes itself *before* it reads ``watch``, so one of the two
    always sees the other. Waits are also timed, so a missed wake-up could only ever cost a
    short delay.

    Interrupts: a signal handler (Ctrl-C's KeyboardInterrupt, or an application's handler)
    runs between bytecodes, and CPython 3.11+ runs it only at a function's start, at a
    backward jump, or right after a call into C returns. So a ``users.append`` or
    ``users.remove`` is never split from its effect: an exception raised right after an
    append is undone by the ``except`` around it, and a leave done as one C call in a
    ``finally`` (``guard.users.remove(token)``, see :meth:`leave`) cannot be skipped by an
    exception raised at the start of a leave method. tests/test_misuse.py runs a run loop under
    a storm of KeyboardInterrupts and checks that no entry is left behind.
    """

    __slots__ = ("lock", "cond", "users", "owner", "depth", "creator", "gen", "pid", "send",
                 "sync", "closed", "slow", "shared_slow", "watch", "on_idle", "leased")

    #: how long a serialize-mode waiter sleeps before it looks again on its own
    wait_slice = 0.05

    def __init__(self, send: bool = True, sync: bool = True) -> None:
        # Reentrant: a garbage collection may start at an allocation made under the lock, and a
        # finalizer it runs (a Lease going away) may enter this guard again on this thread.
        self.lock = _thread.RLock()
        self.cond: threading.Condition | None = None  # made on first wait (serialize mode)
        self.users: list[int] = []
        self.owner = 0
        self.depth = 0
        self.creator = _get_ident()
        self.gen = _generation
        self.pid = _pid
        self.send = send
        self.sync = sync
        self.closed = False
        #: the fast paths do not apply: closed, or not Send (the caller's thread must be checked)
        self.slow = not send
        #: the shared fast path does not apply (as ``slow``, or not Sync)
        self.shared_slow = not send or not sync
        #: waiters plus a pending deferred release: a leaving call must take the lock and wake
        self.watch = 0
        #: called (once) when the last call leaves an object whose release was deferred
        self.on_idle: Callable[[], None] | None = None
        #: how many of the owner's entries are exclusive Leases (holds, not calls): what a
        #: borrow takes over and gives back, all of them (a Value bound as the output of two
        #: bindings is held twice by the thread that bound it)
        self.leased = 0

    def _renew(self) -> None:
        # in a forked child: the parent's threads are gone, and so are their calls and locks
        self.lock = _thread.RLock()
        self.cond = None
        self.users = []
        self.owner = self.depth = self.watch = self.leased = 0
        self.gen = _generation
        self.pid = os.getpid()

    # -- entry ---------------------------------------------------------------------------------
    def enter_shared(self, obj: Any) -> int:
        """Register a shared call by this thread; returns the token for :meth:`leave`.

        Lock-free when it can be (:data:`LOCK_FREE`): announce (append to ``users``), then look
        for an owner. An exclusive entry sets ``owner`` before it announces and looks at
        ``users`` after, so of two threads entering at once at least one sees the other.
        """
        if self.gen != _generation:
            self._after_fork(obj)
        me = _get_ident()
        if LOCK_FREE:
            users = self.users
            try:
                # An exception raised in this block (a signal handler's KeyboardInterrupt) can
                # only come after the append: see "Interrupts" in the class docstring.
                users.append(me)
                if not self.owner and not self.shared_slow:
                    return me
            except BaseException:
                users.remove(me)
                raise
            # back off (the slow path decides under the lock) with one C call, not a method
            # whose start an interrupt could stop (a closed object takes this path every time)
            users.remove(me)
            if self.watch:
                self._wake()
        else:
            with self.lock:
                if not self.owner and not self.shared_slow:
                    try:
                        self.users.append(me)
                        return me
                    except BaseException:  # an interrupt right after the append
                        self.users.remove(me)
                        raise
        return self._enter(obj, me, False)

    def enter_exclusive(self, obj: Any) -> int:
        """Register an exclusive call by this thread; returns the token for :meth:`leave`."""
        if self.gen != _generation:
            self._after_fork(obj)
        me = _get_ident()
        with self.lock:  # a with block: an interrupt cannot come between acquire and its try
            if not self.owner and not self.slow:
                users = self.users
                try:
                    self.owner = me  # claim first, then look (see enter_shared)
                    users.append(me)
                    if len(users) == 1:
                        self.depth = 1
                        return -me
                except BaseException:  # an interrupt right after the append: undo both
                    self.owner = 0
                    users.remove(me)
                    raise
                self.owner = 0
                users.remove(me)  # back off, as in enter_shared
                if self.watch:
                    self._wake()
        return self._enter(obj, me, True)

    def enter_alone(self, obj: Any) -> int:
        """Register an exclusive call on a non-Sync object without the lock when no other call
        is in flight (the bound run's binding, see :meth:`call_shared_alone`); anything else
        takes :meth:`enter_exclusive`.
        The entry does not set ``owner``: on a non-Sync object every entry announces itself in
        ``users`` before it looks there, so a second call sees this one."""
        if LOCK_FREE and not self.sync and self.gen == _generation and not self.slow:
            me = _get_ident()
            users = self.users
            try:
                users.append(me)  # as in enter_shared
                if len(users) == 1:
                    return me
            except BaseException:
                users.remove(me)
                raise
            users.remove(me)  # back off, as in enter_shared
            if self.watch:
                self._wake()
        return self.enter_exclusive(obj)

    def call_shared_alone(self, obj: Any, alone: Guard, alone_obj: Any,
                          fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` as a shared call on ``obj`` (this guard's, a Sync object) and an
        exclusive one on the non-Sync ``alone_obj``: the bound run, the session shared and its
        binding alone.

        The fast path is :meth:`enter_shared` then :meth:`enter_alone`, written out in one
        frame (announce in ``users``, then look; anything unusual backs off to those methods):
        the bound run's cost is closest to C's, and two calls and two leaves cost it 0.06 µs.
        tests/test_threads.py drives this method itself against exclusive entries.
        """
        if LOCK_FREE and self.gen == _generation and alone.gen == _generation:
            me = _get_ident()
            users = self.users
            alone_users = alone.users
            # Each append inside its try: an interrupt may surface right after the append's C
            # call returns ("Interrupts" above), and must find the finally that undoes it. (An
            # append before its try left an entry behind under a storm of KeyboardInterrupts.)
            try:
                users.append(me)
                if not self.owner and not self.shared_slow:
                    try:
                        alone_users.append(me)
                        if len(alone_users) == 1 and not alone.slow and not alone.sync:
                            return fn(*args)
                    finally:
                        alone_users.remove(me)
                        if alone.watch:
                            alone._wake()
            finally:
                users.remove(me)
                if self.watch:
                    self._wake()
        token = self.enter_shared(obj)
        try:
            alone_token = alone.enter_alone(alone_obj)
            try:
                return fn(*args)
            finally:
                if alone_token > 0:  # inline, one C call: an interrupt cannot skip it (leave)
                    try:
                        alone.users.remove(alone_token)
                    finally:
                        if alone.watch:
                            alone._wake()
                else:
                    alone.leave(alone_token)
        finally:
            if token > 0:
                try:
                    self.users.remove(token)
                finally:
                    if self.watch:
                        self._wake()
            else:
                self.leave(token)

    def _enter(self, obj: Any, me: int, exclusive: bool) -> int:
        if _exiting and me != _exit_thread:
            _park()
        mode = policy.mode
        users = self.users
        # This thread's entries: only this thread adds them; another removes one only when it
        # ends a run_async started here, which could at worst hide this call's entry from the
        # cleanup below (left behind, never removed twice).
        before = users.count(me)
        try:
            return self._enter_locked(obj, me, exclusive, mode, users)
        except BaseException:
            # a conflict, a closed object or an interrupt: leave no entry of this call behind
            if users.count(me) > before:
                if exclusive and self.owner == me and self.depth == 0:
                    self.owner = 0
                users.remove(me)
            raise

    def _enter_locked(self, obj: Any, me: int, exclusive: bool, mode: str,
                      users: list[int]) -> int:
        with self.lock:
            while True:
                if self.closed:
                    raise ClosedError(f"{type(obj).__name__} is closed")
                if not self.send and mode != OFF and me != self.creator:
                    raise WrongThreadError(
                        f"{type(obj).__name__} is not Send: it was created on thread "
                        f"{self.creator} and must only be used there (this is thread {me})")
                if mode == OFF:
                    users.append(me)
                    break
                owner = self.owner
                if owner and owner != me:
                    conflict = True
                else:
                    # Announce, then look: lock-free entries (enter_shared, enter_alone) do the
                    # same, so two entries at once cannot both miss each other.
                    if exclusive:
                        self.owner = me
                    users.append(me)
                    conflict = self._conflict(me, exclusive)
                    if conflict:
                        if exclusive:
                            self.owner = owner
                        users.remove(me)
                if not conflict:
                    break
                if mode == STRICT or in_ort_callback():
                    raise ConcurrentUseError(self._describe(obj, exclusive))
                self._wait_locked(me, exclusive)
            if exclusive and (self.owner == me or not self.owner):
                if self.depth and self.owner == me:
                    self.depth += 1
                else:
                    self.owner, self.depth = me, 1
                return -me
            return me

    def borrow(self, obj: Any, holder: int) -> int:
        """Make this thread the owner of the exclusive hold that thread ``holder`` keeps (its
        exclusive Leases, ``leased`` entries: one per binding of the Value as an output), for a
        call made on the holder's behalf: a run with an IoBinding writes the Values bound as
        its outputs, which the binding holds on the thread that bound them. Returns the thread
        to :meth:`give_back` to, 0 when nothing was borrowed (``holder`` is this thread, or
        checks are off).

        A holder in a call on the object (an entry beyond its leases) is a conflict, as for any
        entry: refused in strict mode, waited for in serialize mode. While borrowed, the
        holder's own calls conflict with the borrower's: they see another owner."""
        me = _get_ident()
        mode = policy.mode
        if holder == me or mode == OFF:
            return 0
        with self.lock:
            while True:
                if self.closed:
                    raise ClosedError(f"{type(obj).__name__} is closed")
                users = self.users
                held = self.leased
                if self.owner == holder and held and self.depth == held and \
                        tuple(users) == (holder,) * held:
                    break
                if mode == STRICT or in_ort_callback():
                    raise ConcurrentUseError(self._describe(obj, True))
                self._wait_locked(me, True)
            try:
                self._move_hold(holder, me, held)
            except KeyboardInterrupt:  # a half-moved hold is nobody's: finish it, then go on
                self._move_hold(holder, me, held)
                raise
        return holder

    def _move_hold(self, src: int, dst: int, held: int) -> None:
        """Make ``dst`` the owner of ``src``'s ``held`` lease entries; run again after an
        interrupt, it completes the move (each step looks at what is left to do)."""
        users = self.users
        self.owner = dst  # claim first, then swap the entries (see enter_shared)
        while users.count(dst) < held:
            users.append(dst)
        while src in users:
            users.remove(src)

    def give_back(self, holder: int) -> None:
        """End a :meth:`borrow`: the hold is ``holder``'s again. A no-op unless this thread
        holds ``holder``'s hold, so the step can be registered before the borrow (that a
        KeyboardInterrupt raised as the borrow returns cannot leave the hold with this
        thread, the holder's own calls refused for good)."""
        if not holder:
            return
        me = _get_ident()
        if holder == me:
            return
        with self.lock:
            held = self.leased
            if self.owner != me or holder in self.users or not held:
                return  # not borrowed (refused, waited out by an interrupt, or checks off)
            try:
                self._move_hold(me, holder, held)
            except KeyboardInterrupt:
                self._move_hold(me, holder, held)
                raise
            on_idle = self._woken_locked()
        if on_idle is not None:
            on_idle()

    def leave(self, token: int) -> None:
        """End the call registered by ``token`` (from any thread).

        A ``finally`` block that must not lose the entry to an interrupt arriving at this
        method's start leaves a shared token itself, with one C call (see "Interrupts" in the
        class docstring): ``guard.users.remove(token)``, then ``if guard.watch: guard.wake()``.
        """
        if token > 0:
            try:
                self.users.remove(token)
            finally:
                if self.watch:
                    self._wake()
            return
        # Only the owner touches depth and owner while it owns: no lock needed. Ownership
        # ends before the entry goes, so a thread that finds the entry gone finds no owner; one
        # that still sees the owner is refused or waits, which is right: the call was in flight.
        depth = self.depth - 1
        self.depth = depth
        if not depth:
            self.owner = 0
        self.users.remove(-token)
        if self.watch:
            self._wake()

    def wake(self) -> None:
        """Wake waiters (and run a deferred release) after a leave done inline (see
        :meth:`leave`)."""
        self._wake()

    def _wake(self) -> None:
        with self.lock:
            on_idle = self._woken_locked()
        if on_idle is not None:
            on_idle()

    def _woken_locked(self) -> Callable[[], None] | None:
        if self.cond is not None:
            self.cond.notify_all()
        on_idle = self.on_idle
        if on_idle is not None and not tuple(self.users):
            self.on_idle = None
            self.watch -= 1
            return on_idle
        return None

    # -- helpers -------------------------------------------------------------------------------
    def _conflict(self, me: int, exclusive: bool) -> bool:
        if self.owner and self.owner != me:
            return True
        if exclusive or not self.sync:
            users = tuple(self.users)
            return users.count(me) != len(users)
        return False

    def _wait_locked(self, me: int, exclusive: bool) -> None:
        if self.cond is None:
            self.cond = _condition(self.lock)
        self.watch += 1  # announce first, then look again (see the class docstring)
        try:
            if self._conflict(me, exclusive):
                self.cond.wait(self.wait_slice)
        finally:
            self.watch -= 1

    def _after_fork(self, obj: Any) -> None:
        """First use in a forked child: an object that can rebuild itself there (a Session,
        from its recipe: ``_rebuild_after_fork``) does so and renews this guard; any other
        object raises ForkedHandleError (ClosedError when closed)."""
        rebuild = None if self.closed else getattr(obj, "_rebuild_after_fork", None)
        if rebuild is None:
            raise self._forked(obj)
        rebuild(self)

    def _forked(self, obj: Any) -> ThreadRuleError | ClosedError:
        if self.closed:
            return ClosedError(f"{type(obj).__name__} is closed")
        return ForkedHandleError(
            f"{type(obj).__name__} was created in process {self.pid} before fork(); ORT "
            f"objects cannot be used in a forked child (pid {os.getpid()}): create a new one "
            f"there")

    def _describe(self, obj: Any, exclusive: bool) -> str:
        me = _get_ident()
        entries = {t for t in tuple(self.users) if t != me}
        others = sorted(t for t in entries if t < _JOB_TOKENS_FROM)
        name = type(obj).__name__
        if self.owner and self.owner != me:
            what = f"an exclusive call is in flight on {_on_thread(self.owner)}"
        elif not others:
            what = "a run_async run still uses it (wait for its Future)"
        else:
            what = f"another call is in flight on {', '.join(map(_on_thread, others))}" + (
                ", and a run_async run still uses it" if len(others) < len(entries) else "")
        kind = "an exclusive" if exclusive else "a shared"
        refused = _entry_call(sys._getframe(1), own=True)
        call = f"call ({refused})" if refused else "call"
        why = "" if self.sync or exclusive else f" ({name} is not Sync)"
        where = (" from inside an ORT callback (callbacks never wait)"
                 if policy.mode == SERIALIZE else "")
        return (f"{name}: {kind} {call} while {what}{why}{where}; use one object per thread, "
                f"or ortc.set_thread_checks('serialize') to make such calls wait")

    def hand_off(self, token: int) -> int:
        """Give this thread's shared entry ``token`` to a run that goes on without the thread
        (a run_async job): the entry becomes the job's, so the thread's own later calls
        conflict with it as another thread's would (a fill() of an input the run still reads),
        where as the thread's entry they passed as re-entry. Returns the job's token, for
        :meth:`leave` from whichever thread ends the job. The swap is one store into
        ``users``: an interrupt finds the entry whole, before or after it."""
        job = next(_job_tokens)
        users = self.users
        with self.lock:
            try:
                where = users.index(token)
            except ValueError:  # not there (nothing to give): the token stays the caller's
                return token
            users[where] = job
        return job

    def leave_quietly(self, token: int, later: Callable[[Callable[[], None]], None]) -> None:
        """End the shared entry ``token`` on a thread that must not run what a wake-up may
        run (ORT's, at a run_async completion: a release deferred to the last call's end):
        the entry goes now, the wake-up (waiters, that release) through ``later``."""
        try:
            self.users.remove(token)
        finally:
            if self.watch:
                later(self._wake)

    def busy_elsewhere(self) -> bool:
        """True when a thread other than the caller is inside one of the object's methods."""
        users = tuple(self.users)
        return users.count(_get_ident()) != len(users)

    def close_when_idle(self, obj: Any, release: Callable[[], None]) -> None:
        """Mark closed and release now, or when the last in-flight call leaves (per policy).

        strict: refused with :class:`ConcurrentUseError` while another thread is inside a call;
        serialize: waits for those calls; off: the release is deferred to the last of them. A
        close by a thread that is itself inside a call (a callback) is deferred likewise. In a
        forked child nothing is released (ORT's threads do not exist there): the handle is only
        marked closed.
        """
        if self.gen != _generation:
            self.closed = self.slow = self.shared_slow = True
            return
        mode = policy.mode
        me = _get_ident()
        if _exiting and me != _exit_thread:
            _park()
        with self.lock:
            if self.closed:
                return
            while mode != OFF:
                users = tuple(self.users)
                if users.count(me) == len(users):
                    break
                if mode == STRICT or in_ort_callback():
                    inside = sorted({t for t in users if t != me and t < _JOB_TOKENS_FROM})
                    raise ConcurrentUseError(
                        f"{type(obj).__name__}.close() while another thread is inside one of "
                        f"its calls" + (f" ({', '.join(map(_on_thread, inside))})" if inside
                                        else " (a run_async run)") +
                        "; close it after those calls return")
                if self.cond is None:
                    self.cond = _condition(self.lock)
                self.watch += 1
                try:
                    users = tuple(self.users)
                    if users.count(me) != len(users):
                        self.cond.wait(self.wait_slice)
                finally:
                    self.watch -= 1
                if self.closed:
                    return
            self.closed = self.slow = self.shared_slow = True
            if self.cond is not None:
                self.cond.notify_all()  # waiters must see that it is closed
            # Announce the deferred release first, then look (see the class docstring).
            self.on_idle = release
            self.watch += 1
            if tuple(self.users):
                return  # the last call to leave runs ``release``
            self.on_idle = None
            self.watch -= 1
        release()


# -- naming the calls in a conflict (the error path only) ------------------------------------
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PROTOCOL_FILES = {os.path.abspath(__file__), os.path.join(_PACKAGE, "threads.py")}


def _entry_call(frame: Any, own: bool = False) -> str | None:
    """The call into ortc that a stack is in, as its user made it ("Session.run",
    "InferenceSession.run" through ortc.compat): from the innermost frame of ortc's (this
    module's and the markers' aside), the outermost of the run of ortc frames it starts (a
    callback from ORT into user code ends the run). None when the stack is not in ortc.
    ``own``: the caller's stack, where a marked method's wrapper (threads._guarded) names the
    method it has not entered yet (read from its locals: this thread's frames only)."""
    found = None
    while frame is not None:
        code = frame.f_code
        path = code.co_filename
        if not path.startswith(_PACKAGE):
            if found is not None:
                break
        elif path not in _PROTOCOL_FILES:
            found = _qualname(code)
        elif own and code.co_name.startswith("call_"):
            fn = frame.f_locals.get("fn")
            found = getattr(fn, "__qualname__", None) or found
        frame = frame.f_back
    return found


def _qualname(code: Any) -> str:
    name: str = getattr(code, "co_qualname", None) or code.co_name  # co_qualname: 3.11+
    if ".<locals>." in name:  # a method made per instance: "C.make.<locals>.run" is C.run
        outer, _, inner = name.rpartition(".<locals>.")
        name = f"{outer.split('.')[0]}.{inner}" if "." in outer else inner
    return name


def _on_thread(ident: int) -> str:
    """``thread N``, with the ortc call that thread is in when it can be told."""
    try:
        call = _entry_call(sys._current_frames().get(ident))
    except Exception:  # noqa: BLE001 - a diagnostic only; an interpreter may lack the frames
        call = None
    return f"thread {ident} ({call})" if call else f"thread {ident}"


class Lease:
    """A call on a handle passed as an argument, held for the duration of another object's call.

    ``Lease.shared(value)`` enters ``value``'s guard as a shared call and leaves it when the lease
    is released (:meth:`release`, or when the lease is collected), so a handle in use by ORT on
    behalf of another object (a Run input, the options of a session being created) cannot be
    closed or written under it.
    """

    __slots__ = ("obj", "guard", "token")

    def __init__(self, obj: Any, exclusive: bool = False,
                 into: list[Any] | None = None) -> None:
        """``into``: the list of what a cleanup ends (a run's ``keep``, undo steps), which the
        lease joins as it is made: from the entry to the append there is no point where a
        signal handler's exception can surface (no call returns to Python code in between),
        where a lease appended by the caller could be interrupted first and left to
        ``__del__``, which another interrupt can stop (seen under a 50 µs SIGALRM storm)."""
        guard = obj._guard
        if guard is None:
            raise ClosedError(f"{type(obj).__name__} is closed")
        if exclusive:
            token = guard.enter_exclusive(obj)
            guard.leased += 1  # a hold, not a call: what Guard.borrow may take over
            self.token = token
        else:
            self.token = guard.enter_shared(obj)
        self.obj = obj
        self.guard: Guard | None = guard
        if into is not None:
            into.append(self)

    @classmethod
    def shared(cls, obj: Any, into: list[Any] | None = None) -> Lease:
        return cls(obj, False, into)

    @classmethod
    def exclusive(cls, obj: Any) -> Lease:
        return cls(obj, True)

    def hand_off(self) -> None:
        """This shared lease becomes a run_async job's (:meth:`Guard.hand_off`)."""
        guard = self.guard
        if guard is not None and self.token > 0:
            self.token = guard.hand_off(self.token)

    def end_quietly(self, later: Callable[[Callable[[], None]], None]) -> None:
        """End this shared lease now, its wake-up through ``later``
        (:meth:`Guard.leave_quietly`); :meth:`release` is then a no-op."""
        guard = self.guard
        if guard is not None and self.token > 0:
            self.guard = None
            guard.leave_quietly(self.token, later)

    def borrow_into(self, undo: list[Callable[[], None]]) -> None:
        """:meth:`Guard.borrow` of this lease's hold for this thread, its give-back appended to
        ``undo`` before the borrow starts (the give-back is a no-op for a hold not borrowed):
        an interrupt at any point leaves ``undo`` able to end what was done."""
        guard = self.guard
        if guard is None:
            raise ClosedError(f"{type(self.obj).__name__} is no longer held")
        holder = -self.token if self.token < 0 else self.token
        undo.append(partial(guard.give_back, holder))
        guard.borrow(self.obj, holder)

    def release(self) -> None:
        """End the lease (idempotent). The claim (``guard`` set to None) and the entry's
        removal follow each other with no point between them where an interrupt could be
        raised, so a cleanup retried after a KeyboardInterrupt never leaves twice."""
        guard = self.guard
        if guard is not None:
            self.guard = None
            token = self.token
            if token > 0:
                try:
                    guard.users.remove(token)
                finally:
                    if guard.watch:
                        guard._wake()
            else:
                guard.leased -= 1
                guard.leave(token)

    __call__ = release  # in a list of undo steps, a lease is the step that ends it

    def __enter__(self) -> Any:
        return self.obj

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:
        # A lease its cleanup missed (an interrupt escaped it) ends here; an exception in
        # __del__ is only printed, so an interrupt stopping the release is retried instead
        while getattr(self, "guard", None) is not None:  # None too when __init__ raised
            try:
                self.release()
            except KeyboardInterrupt:
                continue
