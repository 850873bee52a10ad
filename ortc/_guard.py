"""The guard every handle carries, and the one way in and out of it.

A :class:`Guard` records the calls in flight on one object and decides whether a new call may
join them (the markers' rules, per the policy in :mod:`ortc.threads`). Code enters it in one of
two ways, both here:

* :func:`guarded` wraps a marked method: the object's own entry plus one for every handle
  argument the marker names in ``args=``, held for the length of the call;
* :class:`Entries` is the same for a call that decides at run time what it holds (a run's
  input Values, a bound run's Values, a run_async job's holds).

A :class:`Hold` is not a call: a Value bound as an IoBinding's output, written by every run with
that binding. Other threads' calls on it are refused while it is bound (in serialize mode too:
a hold can last forever, so nobody waits for one).

Interrupts: a signal handler may raise (KeyboardInterrupt) between any two instructions, on
CPython and on PyPy alike. So no step relies on where an interpreter checks for signals:

* a call's token is made before its entry, and the entry is made inside the ``try`` whose
  ``finally`` leaves it: an interrupt during the entry finds the exit;
* leaving is ``dict.pop(token, None)``: idempotent, whatever was or was not entered;
* an entry records the frame of the call that made it, and counts only while that frame is
  executing. An interrupt that stops a ``finally`` before its leave (possible at any
  instruction) leaves an entry whose frame has returned: the next conflict finds it dead and
  drops it (:meth:`Guard._heal`). A stale entry can thus delay nothing and refuse nothing.
  Whether a frame still executes is asked of the frame itself (:func:`_returned`); no thread
  ever reads another thread's stack (walking it made CPython 3.11 crash: a frame object made
  for another thread's frame can outlive the frame it was made for).

Also here is the process state every entry consults, as module globals: the fork generation (a
forked child's first use of an object is refused, or rebuilds a Session) and the
interpreter-exit drain (calls park, runs in flight are terminated).
"""

from __future__ import annotations

import _thread
import itertools
import linecache
import os
import sys
import weakref
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, Callable, Dict, Tuple, TypeVar

from . import _process
from .errors import ClosedError, ConcurrentUseError, ForkedHandleError, ThreadRuleError, \
    WrongThreadError
from .threads import OFF, SERIALIZE, STRICT, in_ort_callback, policy, use_wrapper_factory

if TYPE_CHECKING:
    import threading

__all__ = ["Guard", "Entries", "Hold", "guarded", "survive_fork", "release_begins",
           "release_ends"]

T = TypeVar("T")

_get_ident = _thread.get_ident
_allocate_lock = _thread.allocate_lock
_getframe = sys._getframe
#: a call's token, made before its entry (see the module docstring)
_next_token = itertools.count(1).__next__
#: owners that are run_async jobs rather than threads: above any thread ident
_JOBS_FROM = 1 << 62
_next_job = itertools.count(_JOBS_FROM).__next__

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
# next guarded call, stops runs in flight (a run given no RunOptions has the workers' own), and
# waits (bounded) until no call and no release is inside ORT.
_exiting = False
_exit_thread = 0
#: one entry per C release in progress (append and pop are atomic: no lock on this path)
_releases_in_flight: list[int] = _process.emptied(__name__, "_releases_in_flight", [])


def _park() -> None:
    import threading

    threading.Event().wait()  # a daemon thread calling ortc after exit began: wait for the end


def release_begins() -> bool:
    """Count a C release that is about to run, for the exit drain; False (nothing counted: the
    caller skips the release) once exit began, on any thread but the exit's own, rather than run
    it on a thread the interpreter may abandon mid-call. A True answer is balanced by
    :func:`release_ends` in a ``finally``. (Two calls, not a context manager: one runs per
    handle released, and a ``with`` costs four times as much.)"""
    if _exiting and _get_ident() != _exit_thread:
        return False
    _releases_in_flight.append(1)
    return True


def release_ends() -> None:
    """Uncount the release :func:`release_begins` counted."""
    _releases_in_flight.pop()


def _drain_at_exit(limit: float = 2.0) -> None:
    global _exiting, _exit_thread
    import gc
    import threading
    import time

    me = _get_ident()
    if not any(t.ident != me for t in threading.enumerate()):
        return  # no other Python thread: nothing can be inside ORT
    _exit_thread = me
    _exiting = True
    guards = [obj for obj in gc.get_objects() if type(obj) is Guard]  # (entries now park)
    for obj in gc.get_objects():
        # the class first: any object's __getattr__ may raise (torch's CUDA backends object
        # does, without CUDA: the drain stopped there)
        if not hasattr(type(obj), "_terminate_now"):
            continue
        guard = getattr(obj, "_guard", None)
        if type(guard) is Guard and (guard.busy() or obj._stop_at_exit):
            obj._terminate_now()  # RunOptions of runs in flight, and those of runs given none
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and (
            _releases_in_flight or any(g.busy() for g in guards)):
        time.sleep(0.002)


_process.at_exit(_process.RUNS_IN_FLIGHT, _drain_at_exit)


#: an entry: (owner: a thread ident or a job id, exclusive, witness: the frame of the marked
#: call that made it, the Entries that made it, or None, admitted: False while it is looking or
#: waiting)
_Entry = Tuple[int, bool, Any, bool]


class Guard:
    """Which calls are inside one object, and whether a new one may join them.

    ``calls`` maps each call's token to its entry (owner, exclusive, witness); ``holds`` maps a
    :class:`Hold`'s token to the thread that holds it. There is no lock: a lock the main
    thread holds while a signal handler's exception unwinds past its release stays held for
    good (CPython 3.9 can skip a ``with`` block's exit that way; seen under a storm of
    KeyboardInterrupts). Every step is one dict operation instead, each atomic under the GIL
    (CPython and PyPy alike). A call is admitted in two looks:

    1. it stores itself as waiting, then looks: an admitted call in the way, or an older
       (smaller token) waiting one, sends it back to wait: waiters go in token order, so one
       waiter cannot be overtaken forever by calls that keep coming;
    2. it marks itself admitted, then looks again at the admitted calls only, and goes back to
       waiting if one is in the way. This look alone keeps two conflicting calls apart: of two
       admitted calls, the later to mark itself sees the other (tokens are made before the
       entry, so their order is not the order of arrival: the first look only orders waiters).

    A serialize-mode waiter keeps its waiting entry while it sleeps (its place in the queue).
    Re-entry by the same owner (a callback on the calling thread, a nested call) is never a
    conflict, and never waits for a waiter. ``send``/``sync`` come from the object's class.
    """

    __slots__ = ("calls", "holds", "creator", "gen", "pid", "send", "sync", "closed",
                 "on_idle", "waiting")

    #: how long a serialize-mode waiter sleeps, at most, before it looks again
    wait_slice = 0.02

    def __init__(self, send: bool = True, sync: bool = True) -> None:
        self.calls: Dict[int, _Entry] = {}
        self.holds: Dict[int, int] = {}
        self.creator = _get_ident()
        self.gen = _generation
        self.pid = _pid
        self.send = send
        self.sync = sync
        self.closed = False
        #: the release a close deferred to the last call's exit: one item, taken by pop (the
        #: one atomic claim: of the leavers and the closer that see the object idle, one runs it)
        self.on_idle: list[Callable[[], None]] = []
        #: a lock per serialize-mode waiter, while it sleeps: a leave releases them (wakes the
        #: waiters up; a waiter sleeping out its pause while the object was free starved the
        #: queue behind it). Only its waiter ever blocks on one: no thread holds a lock another
        #: thread needs
        self.waiting: list[Any] = []

    def _renew(self) -> None:
        # in a forked child: the parent's threads are gone, and so are their calls
        self.calls = {}
        self.holds = {}
        self.waiting = []
        self.gen = _generation
        self.pid = os.getpid()

    # -- entry and exit -------------------------------------------------------------------------
    def enter(self, token: int, obj: Any, exclusive: bool, witness: Any, owner: int = 0,
              through_holds: bool = False, ahead: bool = False) -> None:
        """Enter a call registered as ``token`` (made by the caller before this call, which it
        passes to :meth:`leave` in a ``finally``). ``witness``: what the entry lives as long as
        (the calling frame; see the module docstring). ``owner``: a run_async job's id, for an
        entry that is the job's rather than the thread's. ``through_holds``: the bound run's
        entry on a Value the binding holds. ``ahead``: a shared call that goes ahead of the
        calls waiting in serialize mode instead of queueing behind them (a marker's
        ``ahead_of_waiters``: RunOptions.terminate, which ends the runs a waiting setter or
        close waits for; queued behind them, it waited for ever, and so did they)."""
        if self.gen != _generation:
            self._after_fork(obj)
        me = owner or _get_ident()
        calls = self.calls
        calls[token] = (me, exclusive, witness, True)  # admitted, then look (the second look)
        if not self.closed and not _exiting and \
                (self.send or me == self.creator or me >= _JOBS_FROM):
            # only this owner's own calls and holds (alone, the usual case; a run entering a
            # Value it also binds, a nested call): never a conflict, in any mode. (A hold
            # added or dropped between the two reads of ``holds`` makes the counts differ: the
            # full admission then decides.)
            holds = self.holds
            mine = not holds or through_holds or \
                list(holds.values()).count(me) == len(holds)
            if len(calls) == 1:
                if mine:
                    return
            else:
                entries = tuple(calls.values())
                if mine and all(e[0] == me for e in entries):
                    return
                # a shared call among admitted shared ones (concurrent runs of one session):
                # both looks would find nothing in its way, no waiter to queue behind
                if not exclusive and self.sync and not holds and \
                        not any(e[1] or not e[3] for e in entries):
                    return
        calls.pop(token, None)
        self._enter(token, obj, me, exclusive, witness, through_holds, ahead)

    def leave(self, token: int) -> None:
        """End the call registered as ``token``, from any thread; a token not (or no longer)
        entered is a no-op, so a ``finally`` may always call this."""
        calls = self.calls
        calls.pop(token, None)
        if self.waiting:
            self._wake()
        if self.on_idle and not calls:
            self._run_deferred_release()

    def _enter(self, token: int, obj: Any, me: int, exclusive: bool, witness: Any,
               through_holds: bool, ahead: bool) -> None:
        if _exiting and me != _exit_thread:
            _park()
        self._admit(self.calls, token, (me, exclusive, witness), obj, me, exclusive,
                    through_holds, ahead)

    def _admit(self, table: dict[int, Any], token: int, entry: Any, obj: Any, me: int,
               exclusive: bool, through_holds: bool, ahead: bool = False) -> None:
        """Store ``entry`` under ``token`` in ``table`` (``calls`` or ``holds``) once nothing
        stands in its way (the two looks of the class docstring; a hold, which never waits
        behind a waiter, needs the second only, as does a call ``ahead`` of the waiters:
        see :meth:`enter`);
        then refuse (strict mode, a hold in the way, inside a callback) or wait in place and
        look again (serialize)."""
        mode = policy.mode
        pause = 0.0005
        healed_at = 0.0
        is_call = table is self.calls
        first_look = is_call and not ahead
        waiting = (*entry, False) if is_call else entry
        admitted = (*entry, True) if is_call else entry
        while True:
            if self.closed:
                self._withdraw(table, token)
                raise ClosedError(f"{type(obj).__name__} is closed")
            if not self.send and mode != OFF and me != self.creator and me < _JOBS_FROM:
                self._withdraw(table, token)
                raise WrongThreadError(
                    f"{type(obj).__name__} is not Send: it was created on thread "
                    f"{self.creator} and must only be used there (this is thread {me})")
            if mode == OFF:
                table[token] = admitted
                return
            table[token] = waiting
            why = self._conflict(me, exclusive, through_holds, token, False) if first_look \
                else None
            if why is None:
                table[token] = admitted
                why = self._conflict(me, exclusive, through_holds, token, True)
                if why is None:
                    if self.closed:  # closed meanwhile: the closer may not have seen this entry
                        continue
                    return
                table[token] = waiting
            if pause >= healed_at and self._heal():  # (not at every look)
                healed_at = pause * 8
                continue  # a stale entry was the conflict: look again
            if mode == STRICT or why == "hold" or in_ort_callback():
                self._withdraw(table, token)
                raise ConcurrentUseError(self._describe(obj, exclusive, why, me))
            if not is_call:
                table.pop(token, None)  # a hold waits outside: nobody queues behind a hold
            pause = self._pause(pause)

    def _withdraw(self, table: dict[int, Any], token: int) -> None:
        """Take back an entry that will not be admitted (and run a release it was delaying)."""
        table.pop(token, None)
        if self.on_idle and not self.calls:
            self._run_deferred_release()

    def _pause(self, pause: float) -> float:
        """A serialize-mode waiter's sleep, until a leave wakes it or ``pause`` seconds pass;
        returns the next pause (growing to wait_slice)."""
        wake = _allocate_lock()
        wake.acquire()
        self.waiting.append(wake)
        try:
            wake.acquire(True, pause)
        finally:
            try:
                self.waiting.remove(wake)
            except ValueError:  # (gone with a fork's renewal)
                pass
        return min(pause * 2, self.wait_slice)

    def _wake(self) -> None:
        """Wake every sleeping waiter: something it waited for may have left."""
        for wake in tuple(self.waiting):
            try:
                wake.release()
            except RuntimeError:  # already woken
                pass

    def _conflict(self, me: int, exclusive: bool, through_holds: bool, token: int,
                  admitted_only: bool) -> str | None:
        """Why a call (or hold) by ``me`` cannot join the entries: "call", "hold", or None. The
        first look (``admitted_only`` false) also counts the waiters older than ``token``,
        unless ``me`` is already inside (a nested call does not queue behind a waiter)."""
        sync = self.sync
        entries = tuple(self.calls.items())
        queue = not admitted_only and not any(
            e[0] == me and e[3] for t, e in entries if t != token)
        for other, (owner, excl, _, admitted) in entries:
            if owner != me and (exclusive or excl or not sync) and \
                    (admitted or queue and other < token):
                return "call"
        if not through_holds:
            for holder in tuple(self.holds.values()):
                if holder != me:
                    return "hold"
        return None

    def _heal(self) -> bool:
        """Drop the entries whose call is over (its frame has returned, its job has ended)
        although nothing left them: a signal handler's exception stopped their exit; and the
        holds of threads that have ended (their release goes with the thread's local data,
        which PyPy lets go only at a collection: until then the hold refused every other
        thread). True when one was dropped."""
        dead = []
        for token, (_owner, _, witness, _admitted) in tuple(self.calls.items()):
            if witness is None:
                continue
            if not witness.alive() if type(witness) is Entries else _returned(witness):
                dead.append(token)
        for token in dead:
            self.calls.pop(token, None)
        holds = self.holds
        if holds:
            alive = sys._current_frames()  # (the threads that run: an ended thread holds nothing)
            for token, holder in tuple(holds.items()):
                if holder not in alive:
                    holds.pop(token, None)
                    dead.append(token)
            if _COLLECT_FOR_HOLDS and holds and not holds.keys() <= _swept:
                dead += _sweep_holds(holds)
        if dead and self.waiting:
            self._wake()
        if dead and self.on_idle and not self.calls:
            self._run_deferred_release()
        return bool(dead)

    def current(self) -> bool:
        """Whether the object is open and was made in this process (not inherited through a
        fork, where its first entry renews or refuses it): what code that reads only Python
        state of the object needs to know, with no entry."""
        return not self.closed and self.gen == _generation

    def busy(self) -> bool:
        """True while a call (other than one an interrupt cut off) is inside."""
        if not self.calls:
            return False
        self._heal()
        return bool(self.calls)

    def busy_elsewhere(self) -> bool:
        """True when an owner other than the calling thread is inside one of the object's
        methods."""
        me = _get_ident()
        if all(e[0] == me for e in tuple(self.calls.values())):
            return False
        self._heal()
        return any(e[0] != me for e in tuple(self.calls.values()))

    # -- holds ---------------------------------------------------------------------------------
    def hold(self, token: int, obj: Any) -> None:
        """Register a hold by this thread (see :class:`Hold`): refused while another owner's
        call is inside (waited for in serialize mode: that is a call) or another hold is."""
        if self.gen != _generation:
            self._after_fork(obj)
        me = _get_ident()
        holds = self.holds
        holds[token] = me  # stored, then look (as a call's entry: the later of two sees both)
        if not self.closed and not _exiting and (self.send or me == self.creator) and \
                list(holds.values()).count(me) == len(holds) and (
                    not self.calls or
                    all(e[0] == me or not e[3] for e in tuple(self.calls.values()))):
            return  # only this thread's own calls and holds, and waiters (a hold never queues)
        holds.pop(token, None)
        self._admit(holds, token, me, obj, me, True, False)

    def unhold(self, token: int) -> None:
        """End a hold (idempotent)."""
        self.holds.pop(token, None)
        if self.waiting:
            self._wake()

    # -- close ---------------------------------------------------------------------------------
    def close_when_idle(self, obj: Any, release: Callable[[], None]) -> None:
        """Mark closed and release now, or when the last call in flight leaves (per policy).

        strict: refused with :class:`ConcurrentUseError` while another owner's call is inside;
        serialize: waits for those calls, in the waiters' queue as an exclusive call (calls that
        come later wait behind it, and then see it closed: shared calls that kept coming
        starved a close that only looked); off: the release is deferred to the last of them. A
        close by a thread that is itself inside a call (a callback) is deferred likewise. A hold
        by another thread refuses the close in strict and serialize mode. In a forked child
        nothing is released (ORT's threads do not exist there): the handle is only marked
        closed.
        """
        if self.gen != _generation:
            self.closed = True
            return
        mode = policy.mode
        me = _get_ident()
        if _exiting and me != _exit_thread:
            _park()
        pause = 0.0005
        token = _next_token()  # its place in the queue, once it waits
        calls = self.calls
        try:
            while mode != OFF:
                if self.closed:
                    return
                # a close conflicts with any other owner's call, shared or not, but for the
                # waiters queued behind it, and with any other owner's hold
                why = "call" if any(e[0] != me and (e[3] or t < token)
                                    for t, e in tuple(calls.items())) else (
                    "hold" if any(h != me for h in tuple(self.holds.values())) else None)
                if why is None:
                    break
                if self._heal():
                    continue
                if mode == STRICT or why == "hold" or in_ort_callback():
                    raise ConcurrentUseError(self._describe_close(obj, why, me))
                if token not in calls:
                    calls[token] = (me, True, Entries(_getframe(), f"{type(obj).__name__}.close"),
                                    False)
                pause = self._pause(pause)
            if self.closed:
                return
            self.on_idle.append(release)  # announce the deferred release, then close, then look
            self.closed = True
        finally:
            if calls.pop(token, None) is not None and self.waiting:
                self._wake()  # the calls queued behind this close (refused: they go on)
        if self.waiting:
            self._wake()  # (they raise ClosedError)
        if not self.calls or not self._heal() and not self.calls:
            self._run_deferred_release()
        # else: the last call to leave runs it (Guard.leave)

    def _run_deferred_release(self) -> None:
        try:
            release = self.on_idle.pop()  # the claim: one caller runs it
        except IndexError:
            return
        release()

    # -- fork ----------------------------------------------------------------------------------
    def _after_fork(self, obj: Any) -> None:
        """First use in a forked child: an object that can rebuild itself there (a Session,
        from its recipe: ``_rebuild_after_fork``) does so and renews this guard; any other
        object raises ForkedHandleError (ClosedError when closed)."""
        rebuild = None if self.closed else getattr(obj, "_rebuild_after_fork", None)
        if rebuild is None:
            raise self._forked(obj)
        rebuild(self)

    def renewed_in_this_process(self) -> bool:
        """True once this guard belongs to the current fork generation."""
        return self.gen == _generation

    def _forked(self, obj: Any) -> ThreadRuleError | ClosedError:
        if self.closed:
            return ClosedError(f"{type(obj).__name__} is closed")
        return ForkedHandleError(
            f"{type(obj).__name__} was created in process {self.pid} before fork(); ORT "
            f"objects cannot be used in a forked child (pid {os.getpid()}): create a new one "
            f"there")

    # -- messages ------------------------------------------------------------------------------
    def _others(self, me: int) -> tuple[list[int], bool]:
        owners = {e[0] for e in tuple(self.calls.values()) if e[0] != me}
        return sorted(o for o in owners if o < _JOBS_FROM), any(o >= _JOBS_FROM for o in owners)

    def _on_thread(self, ident: int) -> str:
        """``thread N``, with the call its oldest entry here belongs to when it can be told."""
        for _token, (owner, _, witness, _admitted) in sorted(tuple(self.calls.items())):
            if owner == ident:
                call = _witness_call(witness)
                if call:
                    return f"thread {ident} ({call})"
        return f"thread {ident}"

    def _describe(self, obj: Any, exclusive: bool, why: str | None, me: int,
                  refused: str | None = None) -> str:
        """What a refused call (``refused``: its name, else read from this thread's stack)
        conflicted with."""
        name = type(obj).__name__
        if refused is None:
            refused = _entry_call(sys._getframe(1))
        call = f"call ({refused})" if refused else "call"
        if why == "hold":
            holders = sorted({h for h in tuple(self.holds.values()) if h != me})
            return (f"{name}: a {call} while it is bound as an output of an IoBinding by "
                    f"{', '.join(f'thread {h}' for h in holders)} (a hold, not a call: every "
                    f"run with that binding writes it), so other threads may not use it; "
                    f"unbind it (clear_binding_outputs) or use it from that thread")
        threads, job = self._others(me)
        excl = [e[0] for e in tuple(self.calls.values()) if e[1] and e[0] != me]
        if excl and excl[0] < _JOBS_FROM:
            what = f"an exclusive call is in flight on {self._on_thread(excl[0])}"
        elif threads:
            what = f"another call is in flight on {', '.join(map(self._on_thread, threads))}" + (
                ", and a run_async run still uses it" if job else "")
        elif job:
            what = "a run_async run still uses it (wait for its Future)"
        else:  # (read after the refusal: the call in the way returned in between)
            what = "another thread's call was in flight (it has returned since)"
        kind = "an exclusive" if exclusive else "a shared"
        why_not = "" if self.sync or exclusive else f" ({name} is not Sync)"
        where = (" from inside an ORT callback (callbacks never wait)"
                 if policy.mode == SERIALIZE else "")
        return (f"{name}: {kind} {call} while {what}{why_not}{where}; use one object per "
                f"thread, or ortc.set_thread_checks('serialize') to make such calls wait")

    def _describe_close(self, obj: Any, why: str, me: int) -> str:
        name = type(obj).__name__
        if why == "hold":
            return self._describe(obj, True, why, me, f"{name}.close")
        threads, _job = self._others(me)
        return (f"{name}.close() while another thread is inside one of its calls" +
                (f" ({', '.join(map(self._on_thread, threads))})" if threads else
                 " (a run_async run)") + "; close it after those calls return")


#: code flags of generators and coroutines: their frames are never asked (clearing a suspended
#: one would close it), and never are witnesses
_SUSPENDABLE = 0x20 | 0x80 | 0x100 | 0x200  # GENERATOR, COROUTINE, ITERABLE_COROUTINE, ASYNC_GEN


def _returned(frame: FrameType) -> bool:
    """Whether a witness frame's call has returned (by value or by exception), asked of the
    frame, from any thread: ``frame.clear()`` refuses a frame that is still executing (the
    documented behaviour of CPython 3.9 to 3.13 and PyPy), and on one that has returned it
    only drops its locals (those of a guard wrapper or a run: nothing a user reads). Never a
    walk of another thread's stack."""
    if frame.f_code.co_flags & _SUSPENDABLE:
        return False
    try:
        frame.clear()
    except RuntimeError:
        return False
    return True


# -- the one way in: a call's entries -------------------------------------------------------------
class Entries:
    """The guard entries one call makes beyond a marked method's own (a run's input Values and
    options, a bound run's Values), left together by :meth:`leave` (idempotent, from any
    thread). Each is registered here before it is entered, so :meth:`leave` finds every entry
    an interrupt may have cut short.

    The object is its entries' witness (see the module docstring): they live while ``frame``
    executes, a frame that does for the whole call (not a generator's). ``call`` names the
    call in other threads' conflict messages ("Session.run").

    A run_async job's entries (``job=True``) are owned by the job, not the thread: the caller's
    own later calls conflict with them as another thread's would. They live while the calling
    frame executes until :meth:`accept` (ORT took the run), then until :meth:`leave`.
    """

    __slots__ = ("held", "frame", "call", "owner", "accepted", "done")

    def __init__(self, frame: FrameType | None, call: str, job: bool = False) -> None:
        self.held: list[tuple[Guard, int]] = []
        self.frame = frame
        self.call = call
        self.owner = _next_job() if job else 0
        self.accepted = False
        self.done = False

    def enter(self, obj: Any, exclusive: bool = False, through_holds: bool = False) -> None:
        """Enter ``obj``'s guard for this call (a ClosedError when it is closed)."""
        guard = obj._guard
        if guard is None:
            raise ClosedError(f"{type(obj).__name__} is closed")
        token = _next_token()
        self.held.append((guard, token))
        guard.enter(token, obj, exclusive, self, self.owner, through_holds)

    def accept(self) -> None:
        """The job's run is in ORT's hands: its entries live until :meth:`leave`."""
        self.accepted = True

    def alive(self) -> bool:
        """(As the entries' witness.) Whether they still belong to a call."""
        if self.done:
            return False
        if self.accepted:
            return True
        frame = self.frame
        return frame is not None and not _returned(frame)

    def leave(self) -> None:
        """Leave every entry (idempotent: a retry after an interrupt does no harm). The frame
        is let go after: it holds this object among its locals."""
        self.done = True
        for guard, token in self.held:
            guard.leave(token)
        self.frame = None

    def leave_quietly(self, later: Callable[[Callable[[], None]], None]) -> None:
        """Leave every entry now, on a thread that must not run what a wake-up may run (ORT's,
        at a run_async completion: a release deferred to the last call's end); the wake-ups
        go through ``later``."""
        self.done = True
        for guard, token in self.held:
            guard.calls.pop(token, None)
            if guard.waiting:
                guard._wake()
            if guard.on_idle and not guard.calls:
                later(guard._run_deferred_release)
        self.frame = None


#: PyPy, which counts no references, ends a dropped IoBinding's holds (Hold.__del__) only at a
#: collection: until then a Value bound as its output refused every other thread, telling
#: them to unbind it through a binding nothing could reach. A hold of another thread about to
#: refuse a call is checked by one collection first (once a hold: ``_swept``, its tokens)
_COLLECT_FOR_HOLDS = sys.implementation.name == "pypy"
_swept: set[int] = set()


def _sweep_holds(holds: dict[int, int]) -> list[int]:
    """(PyPy) Collect, so that the holds of the bindings nobody can reach end; their
    tokens."""
    me = _get_ident()
    held = [t for t, holder in tuple(holds.items()) if holder != me]
    if not held or _swept.issuperset(held):
        return []
    import gc

    gc.collect()
    if len(_swept) > 4096:
        _swept.clear()
    gone = [t for t in held if t not in holds]
    _swept.update(t for t in held if t in holds)
    return gone


class _HoldsOfOneThread:
    """The holds one thread took (each by a weak reference: the IoBinding that records a hold
    keeps it), released when the thread ends: this object is that thread's local data, which
    the interpreter drops then (on the ending thread, before its ident can be reused, on
    CPython; at the next collection on PyPy). A hold outliving its thread refused every
    other thread for good (a Value bound on a worker thread and read on the main thread once
    the worker ended, or a binding handed over), and passed to whichever new thread got the
    ended one's ident."""

    __slots__ = ("refs",)

    def __init__(self) -> None:
        self.refs: set[weakref.ref[Hold]] = set()

    def add(self, hold: Hold) -> None:
        refs = self.refs
        # (a reference goes with its hold; the callback keeps the set, not this object: a
        # hold must not keep its thread's data alive)
        refs.add(weakref.ref(hold, refs.discard))

    def __del__(self) -> None:
        for ref in tuple(self.refs):
            hold = ref()
            if hold is not None:
                hold.release()


#: each thread's :class:`_HoldsOfOneThread`, as ``holds`` (made by its first hold)
_thread_data = _thread._local()


class Hold:
    """A hold on ``obj`` by this thread that is not a call (a Value bound as an IoBinding's
    output, which every run with the binding writes): other threads' calls on it are refused
    from :meth:`take` until :meth:`release` (idempotent) or the end of the thread (the runs
    with the binding then enter the Value for the run only, from whichever thread runs it).
    A bound run enters such a Value with ``through_holds``. Made before it is taken, so its
    holder can list it first: a hold an interrupt cut off from its holder would refuse every
    other thread until a collection found it (PyPy collects such an object late)."""

    __slots__ = ("guard", "token", "owner", "__weakref__")

    def __init__(self, obj: Any) -> None:
        guard = obj._guard
        if guard is None:
            raise ClosedError(f"{type(obj).__name__} is closed")
        self.guard: Guard | None = guard
        self.token = _next_token()
        self.owner = _get_ident()

    def take(self, obj: Any) -> None:
        """Hold ``obj`` (the object this hold was made for), or raise as its guard refuses."""
        guard = self.guard
        if guard is None:
            raise ClosedError(f"{type(obj).__name__} is closed")
        guard.hold(self.token, obj)
        try:
            mine = _thread_data.holds
        except AttributeError:
            mine = _thread_data.holds = _HoldsOfOneThread()
        mine.add(self)

    def covers_this_thread(self) -> bool:
        """Whether a call by the calling thread on the held object needs no entry of its own
        to keep other threads out: the hold is this thread's and still held, so it already
        refuses every other thread's call (and a thread's own calls never conflict). Not a
        hold the guard dropped for its ended thread (:meth:`Guard._heal`), whose ident a new
        thread may have."""
        guard = self.guard
        return guard is not None and self.owner == _get_ident() and self.token in guard.holds

    def release(self) -> None:
        guard, self.guard = self.guard, None
        if guard is not None:
            guard.unhold(self.token)

    def __del__(self) -> None:
        guard = getattr(self, "guard", None)
        if guard is not None:
            guard.holds.pop(self.token, None)


# -- the marker wrappers ---------------------------------------------------------------------------
# A marked method gets a general wrapper at once: ``(self, *a, **k)``, its arguments packed and
# unpacked at every call, which costs more than the guard's own entry and exit. After a few calls
# through its class it compiles the method's own wrapper, with the method's parameters, and puts
# it in the class in its place (docs/PERFORMANCE.md, "the marker wrappers"): compiling every
# marked method at import cost `import ortc` 6-10 ms, and most methods are called rarely. Both
# wrappers make the same entries in the same order. The compiled one's template is _WRAPPER; its
# own names start with ``_m_``, which no marked method's parameter may.
_WRAPPER = """
def {name}({params}):
    _m_guard = {self}._guard
    if _m_guard is None:
        raise _m_ClosedError(f"{{type({self}).__name__}} is closed")
{arg_tokens}    _m_token = _m_next_token()
    try:
        _m_guard.enter(_m_token, {self}, {exclusive}, _m_getframe(){ahead})
{arg_entries}        return _m_fn({call})
    finally:
        _m_guard.leave(_m_token)
{arg_leaves}"""

#: one handle argument's entry (the call's frame is its witness, as it is the object's): its
#: guard is kept before its token is made, so a token that is set always has its guard
_ARG_ENTRY = """\
        if {arg} is not None and hasattr(type({arg}), "_guard"):
            _m_{arg}_guard = {arg}._guard
            if _m_{arg}_guard is None:
                raise _m_ClosedError(f"{{type({arg}).__name__}} is closed")
            _m_{arg}_token = _m_next_token()
            _m_{arg}_guard.enter(_m_{arg}_token, {arg}, {exclusive}, _m_getframe())
"""
_ARG_LEAVE = """\
        if _m_{arg}_token:
            _m_{arg}_guard.leave(_m_{arg}_token)
"""

#: the calls a marked method makes through its general wrapper before the next compiles its own
#: (a method called once, as most are in a short program, is never compiled: a compile costs
#: about 150 us, a call through the general wrapper about 0.3 us more than through its own)
_CALLS_BEFORE_COMPILING = 3

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


def guarded(fn: Callable[..., Any], exclusive: bool, exclusive_when: str | None,
            args: tuple[tuple[str, int, bool], ...], ahead: bool = False
            ) -> Callable[..., Any]:
    """``fn`` (a method) entered as a marked call: shared or exclusive on its object
    (exclusive while the instance attribute ``exclusive_when`` is true), and on each handle
    argument ``args`` names, as (parameter name, position after self, exclusive), for the
    length of the call. An argument that is None or not a handle is left to ``fn``.
    ``ahead``: a shared call with no handle arguments that goes ahead of waiting calls
    (:meth:`Guard.enter`)."""
    if ahead and (exclusive or exclusive_when is not None or args):
        raise TypeError(f"{fn.__qualname__}: only a plain shared method goes ahead of waiters")
    import functools

    if any(name.startswith("_m_") for name in
           fn.__code__.co_varnames[:fn.__code__.co_argcount + fn.__code__.co_kwonlyargcount]):
        raise TypeError(f"{fn.__qualname__}: a marked method's parameter names may not start "
                        f"with '_m_' (the marker's wrapper uses them)")
    name = fn.__qualname__
    #: one item per call left before a call compiles this method's own wrapper (popped: the
    #: call that takes the last one compiles)
    uncompiled = [True] * _CALLS_BEFORE_COMPILING

    def compile_in_place(obj: Any, general: Callable[..., Any]) -> None:
        try:
            uncompiled.pop()
        except IndexError:
            return
        if uncompiled:
            return
        # the class that holds this wrapper as the method (a property's accessor keeps it)
        for klass in type(obj).__mro__:
            if vars(klass).get(fn.__name__) is general:
                break
        else:
            return
        own = compiled_wrapper(fn, exclusive, exclusive_when, args, ahead)
        own.__ortc_rule__ = getattr(general, "__ortc_rule__", None)  # type: ignore[attr-defined]
        setattr(klass, fn.__name__, own)

    if not args and exclusive_when is None:
        @functools.wraps(fn)
        def call(self: Any, *a: Any, **k: Any) -> Any:
            if uncompiled:
                compile_in_place(self, call)
            guard = self._guard
            if guard is None:
                raise ClosedError(f"{type(self).__name__} is closed")
            token = _next_token()
            try:
                guard.enter(token, self, exclusive, _getframe(), 0, False, ahead)
                return fn(self, *a, **k)
            finally:
                guard.leave(token)

        return _named(call, name)

    first = min(position for _, position, _ in args) if args else 1 << 30

    @functools.wraps(fn)
    def call_with_args(self: Any, *a: Any, **k: Any) -> Any:
        if uncompiled:
            compile_in_place(self, call_with_args)
        guard = self._guard
        if guard is None:
            raise ClosedError(f"{type(self).__name__} is closed")
        token = _next_token()
        held = None  # the arguments' (guard, token)s, each listed before it is entered
        try:
            # (the frame is never kept in a local of its own: that would be a reference cycle
            # through the frame's locals, garbage for the collector at every call)
            guard.enter(token, self, exclusive or (exclusive_when is not None and
                                                   bool(getattr(self, exclusive_when))),
                        _getframe())
            for arg_name, position, arg_exclusive in args if k or len(a) > first else ():
                value = a[position] if len(a) > position else k.get(arg_name)
                if value is not None and hasattr(type(value), "_guard"):
                    arg_guard = value._guard
                    if arg_guard is None:
                        raise ClosedError(f"{type(value).__name__} is closed")
                    if held is None:
                        held = []
                    arg_token = _next_token()
                    held.append((arg_guard, arg_token))
                    # the call's frame is the witness of these entries as of its own
                    arg_guard.enter(arg_token, value, arg_exclusive, _getframe())
            return fn(self, *a, **k)
        finally:
            guard.leave(token)
            if held is not None:
                for arg_guard, arg_token in held:
                    arg_guard.leave(arg_token)

    return _named(call_with_args, name)


def compiled_wrapper(fn: Callable[..., Any], exclusive: bool, exclusive_when: str | None,
                     args: tuple[tuple[str, int, bool], ...], ahead: bool = False
                     ) -> Callable[..., Any]:
    """The wrapper :func:`guarded` describes, compiled from _WRAPPER with ``fn``'s own
    parameters (no packing of the arguments per call)."""
    import functools

    code = fn.__code__
    positional = code.co_argcount
    names = code.co_varnames[:positional + code.co_kwonlyargcount]
    defaults = fn.__defaults__ or ()
    first_default = positional - len(defaults)
    kw_defaults = fn.__kwdefaults__ or {}
    params = [name if i < first_default else f"{name}=_m_defaults[{i - first_default}]"
              for i, name in enumerate(names[:positional])]
    call = list(names[:positional])
    extra = iter(code.co_varnames[len(names):])  # *args, then **kwargs, when it takes them
    if code.co_flags & _CO_VARARGS:
        var = next(extra)
        params.append("*" + var)
        call.append("*" + var)
    elif len(names) > positional:
        params.append("*")
    for name in names[positional:]:
        params.append(f"{name}=_m_kw_defaults[{name!r}]" if name in kw_defaults else name)
        call.append(f"{name}={name}")
    if code.co_flags & _CO_VARKEYWORDS:
        var = next(extra)
        params.append("**" + var)
        call.append("**" + var)
    source = _WRAPPER.format(
        name=fn.__name__, self=names[0], params=", ".join(params), call=", ".join(call),
        exclusive=repr(exclusive) if exclusive_when is None else
        f"{exclusive!r} or bool({names[0]}.{exclusive_when})",
        ahead=", 0, False, True" if ahead else "",
        arg_tokens="".join(f"    _m_{a}_token = 0\n" for a, _, _ in args),
        arg_entries="".join(_ARG_ENTRY.format(arg=a, exclusive=x) for a, _, x in args),
        arg_leaves="".join(_ARG_LEAVE.format(arg=a) for a, _, _ in args))
    namespace: dict[str, Any] = {
        "_m_fn": fn, "_m_ClosedError": ClosedError, "_m_next_token": _next_token,
        "_m_getframe": _getframe, "_m_defaults": fn.__defaults__,
        "_m_kw_defaults": fn.__kwdefaults__}
    filename = f"<ortc marker of {fn.__qualname__}>"
    exec(compile(source, filename, "exec"), namespace)
    # (tracebacks show the wrapper's lines: the cache entry has no file, so nothing expires it)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return _named(functools.wraps(fn)(namespace[fn.__name__]), fn.__qualname__)


#: id of each marked method's wrapper code -> (the code, the method's name): a wrapper frame (an
#: entry's witness) names its call in conflict messages from its code alone, on every Python
#: version (by identity: code objects of two wrappers compare equal)
_WRAPPED: dict[int, tuple[CodeType, str]] = {}


def _wrapped_name(code: CodeType) -> str | None:
    found = _WRAPPED.get(id(code))
    return found[1] if found is not None and found[0] is code else None


def _named(wrapper: Callable[..., Any], qualname: str) -> Callable[..., Any]:
    """``wrapper`` with a code object of its own, named after the method it wraps (tracebacks
    then show ``run`` where they showed ``call``)."""
    code = wrapper.__code__.replace(co_name=qualname.rpartition(".")[2])
    if sys.version_info >= (3, 11):
        code = code.replace(co_qualname=qualname)
    wrapper.__code__ = code
    _WRAPPED[id(code)] = (code, qualname)
    return wrapper


use_wrapper_factory(guarded)


# -- naming the calls in a conflict (the error path only) ------------------------------------
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PROTOCOL_FILES = {os.path.abspath(__file__), os.path.join(_PACKAGE, "threads.py")}


def _entry_call(frame: Any) -> str | None:
    """The call into ortc that this thread's stack is in, as its user made it ("Session.run",
    "InferenceSession.run" through ortc.compat): from the innermost frame of ortc's (this
    module's and the markers' aside, a marked method's wrapper named by its method), the
    outermost of the run of ortc frames it starts (a callback from ORT into user code ends
    the run). None when the stack is not in ortc. This thread's own stack only. A
    ``__setattr__`` (options checking an assignment's name) is not what its user called: the
    setter it reached is ("RunOptions.tag" for ``run_options.tag = ...``)."""
    found = None
    while frame is not None:
        code = frame.f_code
        path = code.co_filename
        wrapped = _wrapped_name(code)
        if wrapped is not None:
            found = wrapped
        elif not path.startswith(_PACKAGE):
            if found is not None:
                break
        elif path not in _PROTOCOL_FILES and (found is None or code.co_name != "__setattr__"):
            found = _qualname(code)
        frame = frame.f_back
    return found


def _witness_call(witness: Any) -> str | None:
    """The call an entry belongs to, read from its witness without touching any stack."""
    if type(witness) is Entries:
        return witness.call
    if type(witness) is FrameType:
        return _wrapped_name(witness.f_code)
    return None


def _qualname(code: Any) -> str:
    name: str = getattr(code, "co_qualname", None) or code.co_name  # co_qualname: 3.11+
    if ".<locals>." in name:  # a method made per instance: "C.make.<locals>.run" is C.run
        outer, _, inner = name.rpartition(".<locals>.")
        name = f"{outer.split('.')[0]}.{inner}" if "." in outer else inner
    return name
