"""The base of every wrapper around an ORT object: ownership, lifetimes and thread rules.

A :class:`Handle` owns one ORT pointer. It is released exactly once: by :meth:`Handle.close`, by
the context manager, or by a finalizer (``ffi.gc``) when the wrapper is collected. A handle keeps
its owners (the objects it borrows from) alive as attributes of its release callable, so a child
can never outlive what it needs; a parent closed while children are alive is closed for direct
use at once and released when its last child goes. Use after close raises :class:`ClosedError`.
"""

from __future__ import annotations

import sys
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, ClassVar, TypeVar

from . import _guard
from ._ffi import ffi
from ._guard import Guard, release_begins, release_ends
from .errors import ClosedError
from .threads import register

__all__ = ["Handle", "live_handles", "live_count"]

#: PyPy frees an object only at a collection, and its collector counts only the memory it
#: allocated: a dropped Session (its thread pool and weights) or a dropped output (ORT's
#: memory) weighs nothing there, and a loop that drops them without close() grew by
#: thousands of sessions and threads, or by gigabytes, before a collection came. So ortc
#: tells it what an ORT object holds: the ``size`` of ``ffi.gc`` (PyPy adds it to the memory
#: pressure that starts a major collection; CPython ignores it)
PYPY = sys.implementation.name == "pypy"

#: the ``ortc.lifetime`` logger, once the application has imported ``logging`` (before that,
#: nothing can have turned its DEBUG on, and ortc does not import it: 2-3 ms of the import)
_lifetime_log: Any = None


def _lifetime_debug() -> Any:
    """The ``ortc.lifetime`` logger if it logs DEBUG, else None."""
    global _lifetime_log
    log = _lifetime_log
    if log is None:
        logging = sys.modules.get("logging")
        if logging is None:  # (tested first: the AttributeError below costs microseconds)
            return None
        try:
            log = _lifetime_log = logging.getLogger("ortc.lifetime")
        except AttributeError:  # still being imported by another thread
            return None
    return log if log.isEnabledFor(10) else None  # 10: logging.DEBUG


# No lock guards the counts and the deferred releases: a lock the main thread holds while a
# signal handler's exception unwinds past its release stays held for good (CPython 3.9 can skip
# a ``with`` block's exit that way: every other thread then hung on the next handle). Counts are
# lists (append and pop are each one atomic step under the GIL, CPython and PyPy alike), and a
# step that must happen once is claimed by popping a one-item list: of two threads, one wins.
#: kind -> the releasers of the live handles of that kind: adding a handle's releaser here is
#: what arms it (one step: counted and armed at once), taking it off is its last count
_live: dict[str, set[Any]] = {}


def live_handles() -> dict[str, int]:
    """How many ORT objects of each kind ortc holds right now (for finding leaks).

    >>> ortc.live_handles()  # doctest: +SKIP
    {'Session': 1, 'SessionOptions': 0, ...}
    """
    if _doomed:
        _drain()
    return {k: len(v) for k, v in tuple(_live.items()) if v}


def live_count(kind: str) -> int:
    """How many ORT objects of one kind (a Handle class's name) ortc holds right now:
    :func:`live_handles` for one kind, without the dict of all (asked at every release of a
    session on the main thread)."""
    if _doomed:
        _drain()
    return len(_live.get(kind, ()))


#: ``with ortc.Session(p) as s:`` gives ``s`` the Session type, not Any
H = TypeVar("H", bound="Handle")


class Handle:
    """Base of the ORT object wrappers. Subclasses declare their thread rules as class attributes.

    ``c_type``: the C type wrapped; ``send``/``sync``: the Rust-like markers; ``evidence``: why;
    ``parents``: the C types this object must not outlive.
    """

    c_type: ClassVar[str] = ""
    send: ClassVar[bool] = True
    sync: ClassVar[bool] = True
    evidence: ClassVar[str] = ""
    parents: ClassVar[tuple[str, ...]] = ()

    # Class-level defaults make a half-built object (its __init__ raised) safe to close and
    # to finalize: it simply owns nothing.
    _ptr: Any = ffi.NULL
    _api: Any  # the loader's Api facade, set by each subclass's constructor
    _guard: Guard | None = None
    _owners: tuple[Any, ...] = ()
    #: the releasers of the handles that need this one (made by _adopt), and one item per
    #: other child (an array over its memory, a run in flight, a binding holding it): the
    #: release waits for the last of both
    _children: set[Any] = set()
    _others: list[Any] = []
    #: the release a close deferred to the last child's end: one item, claimed by pop
    _pending: list[bool] = []
    #: a class whose objects take children after creation (bound or referenced values) sets
    #: this; they go in ``_held``, which the finalizer lets go after the release (see _hold)
    _holds: ClassVar[bool] = False
    _held: list[Handle] | None = None
    _net: Any = None
    #: an object the whole process shares (the env, the default allocator, the CPU memory
    #: info every tensor over numpy memory uses): close() does nothing, since releasing it
    #: under its other users (a with-block's exit) crashed the next of them
    _process_wide = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("c_type"):
            register(cls)

    # -- ownership -----------------------------------------------------------------------------
    def _adopt(self, raw: Any, release: Callable[[Any], None] | None,
               owners: tuple[Any, ...] = (), slots: Any = None, index: int = 0,
               size: int = 0) -> None:
        """Take ``raw``; ``release`` frees it (None: borrowed, never freed); keep ``owners`` alive.

        ``size``: about how many bytes of native memory the object holds, told to PyPy's
        collector (see :data:`PYPY`; ignored on CPython, which releases the object with its
        last reference).

        With ``slots``, ``raw`` is ``slots[index]`` (a run's output array), cleared as it is
        taken. The slot is cleared before the releaser is armed: an interrupt between the two
        leaks the value rather than releasing it twice (from the slot by the run's cleanup and
        by the finalizer).
        """
        if raw == ffi.NULL:
            raise ValueError(f"{type(self).__name__}: NULL {self.c_type}")
        self._guard = Guard(self.send, self.sync)
        self._owners = owners
        parents = tuple(o for o in owners if isinstance(o, Handle)) if owners else ()
        kind = type(self).__name__
        held: list[Handle] | None = [] if self._holds else None
        self._held = held
        self._children = set()
        self._others = []
        self._pending = []
        if _doomed:
            _drain()
        releaser = _Releaser(kind, release, parents, _guard._generation, held, raw)
        # the safety net: filed for _drain when this object goes (see _doomed)
        self._net = ffi.gc(_net_target, partial(_doomed.__setitem__, releaser))
        live = _live.get(kind)
        if live is None:
            live = _live.setdefault(kind, set())
        if slots is not None:
            slots[index] = ffi.NULL  # first: an interrupt from here on may leak, never free twice
        live.add(releaser)  # armed and counted, in one step
        for p in parents:  # the releaser takes itself off each (a parent it never reached too)
            p._children.add(releaser)
        self._ptr = ffi.gc(raw, releaser, size)
        # logged once armed: a logging handler that raises (its emit propagates to this call)
        # then fails the constructor, and the dropped object is still released
        log = _lifetime_debug()
        if log is not None:
            log.debug("+NEW %s %s", kind, hex(int(ffi.cast("uintptr_t", raw))))

    def close(self) -> None:
        """Release the ORT object now (idempotent). Children keep it alive until they go."""
        guard = self._guard
        if guard is None or guard.closed or self._process_wide:
            return
        guard.close_when_idle(self, self._release_if_childless)

    def _release_if_childless(self) -> None:
        self._pending.append(True)  # announce, then look: the last child to go may claim it
        if not self._children and not self._others:
            self._release_claimed()

    def _release_claimed(self) -> None:
        """Release now if this caller wins the claim on the deferred release."""
        try:
            self._pending.pop()
        except IndexError:
            return
        self._release_now()

    def _release_now(self) -> None:
        ptr, self._ptr = self._ptr, ffi.NULL
        if ptr != ffi.NULL:
            net = self._net
            if net is not None:
                self._net = None
                ffi.release(net)  # files the finalizer, which takes itself off as it ends
            ffi.release(ptr)  # runs the finalizer now, exactly once
        # A closed object no longer needs what it borrowed: let parents and buffers go.
        self._owners = ()
        self._drop_references()

    def _drop_references(self) -> None:
        """Forget Python references to parents and buffers (after release); see subclasses."""

    def _hold(self, child: Handle) -> None:
        """Count ``child`` as this object's child from now on: ORT refers to it through this
        object (a bound or an initializer value), so closing the child meanwhile defers its
        release. It is let go by :meth:`_unhold`, or after this object's release, whether by
        close() or by the finalizer."""
        held = self._held
        assert held is not None, f"{type(self).__name__} does not hold children"
        child._others.append(None)
        held.append(child)

    def _unhold(self, child: Handle) -> None:
        """Undo one :meth:`_hold` of ``child`` (ORT no longer refers to it)."""
        held = self._held
        if held is None:
            return
        try:
            held.remove(child)  # one step: of this and the release letting it go, one does
        except ValueError:
            return  # already let go by the release
        child._child_released()

    def _retain(self, mark: Any = None) -> None:
        """Count one more child that is not a Handle (an array over this value's memory, a run
        in flight): this object is not released until :meth:`_child_released` balances it
        (or :meth:`_unretain`, for a count made with a ``mark`` of its own: one atomic append,
        so whether it was made is whether the mark is there)."""
        self._others.append(mark)

    def _unretain(self, mark: Any) -> None:
        """Balance the count :meth:`_retain` made with ``mark``, if it was made (idempotent)."""
        try:
            self._others.remove(mark)
        except ValueError:
            return
        if self._pending and not self._children and not self._others:
            self._release_claimed()

    def _child_released(self, releaser: Any = None) -> None:
        """One child went: ``releaser``'s handle, or (None) a child counted by _retain or
        _hold."""
        if releaser is None:
            try:
                self._others.remove(None)  # (not a count made with a mark: see _retain)
            except ValueError:  # pragma: no cover - more releases than children: a bug
                pass
        else:
            self._children.discard(releaser)
        if self._pending and not self._children and not self._others:
            self._release_claimed()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called (or construction failed)."""
        return self._guard is None or self._guard.closed

    def _check_open(self) -> None:
        if self._guard is None or self._guard.closed:
            raise ClosedError(f"{type(self).__name__} is closed")

    def __enter__(self: H) -> H:
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- copies ---------------------------------------------------------------------------------
    # The default copy shares the pointer: closing one copy would free what the other uses.
    def __copy__(self) -> Any:
        return self._copy_by_value()

    def __deepcopy__(self, memo: Any) -> Any:
        return self._copy_by_value()

    def _copy_by_value(self) -> Any:
        """A new object with its own ORT object, made through the class's ``__reduce__`` when it
        has one (a picklable class rebuilds from its description); else refused."""
        cls = type(self)
        if self._process_wide:  # never released, so sharing it is safe: the one object
            return self
        if cls.__reduce__ is not Handle.__reduce__:  # (Handle's refuses, naming pickle)
            self._check_open()
            rv = self.__reduce__()
            if isinstance(rv, tuple) and len(rv) >= 2:
                new = rv[0](*rv[1])
                if len(rv) > 2 and rv[2] is not None:
                    if hasattr(new, "__setstate__"):
                        new.__setstate__(rv[2])
                    else:
                        new.__dict__.update(rv[2])
                return new
        raise TypeError(f"cannot copy an ortc.{cls.__name__}: it owns an ORT object, and a "
                        f"copy would share it; create a new {cls.__name__} instead")

    def __repr__(self) -> str:
        state = "closed" if self.closed else hex(int(ffi.cast("uintptr_t", self._ptr)))
        return f"<ortc.{type(self).__name__} {state}>"

    if not TYPE_CHECKING:  # a type checker must still flag a missing name
        def __getattr__(self, name: str) -> Any:
            # Only a name normal lookup did not find comes here: onnxruntime's names get a
            # pointer to ortc's (sess.get_inputs() -> sess.inputs); private and special names
            # (probes such as hasattr(v, "__array__")) fail at once, as without this method.
            if name[:1] == "_":
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            from ._hints import no_attribute

            raise no_attribute(self, name)

    # -- pickling: refused unless a subclass pickles by value (its own __reduce__) -----------
    #: why pickle refuses objects of this class
    _not_picklable: ClassVar[str] = ("it wraps an ORT object that exists in this process "
                                     "only")

    def __reduce_ex__(self, protocol: Any) -> Any:
        if self.closed:
            raise TypeError(f"cannot pickle a closed ortc.{type(self).__name__}")
        return self.__reduce__()

    def __reduce__(self) -> Any:
        raise TypeError(f"cannot pickle ortc.{type(self).__name__}: {self._not_picklable}")


class _Releaser:
    """The ffi.gc callback of a handle: free the pointer, then let the parents go.

    It may run more than once, and on two threads at once (the finalizer, and :func:`_drain`
    for a finalizer that a signal handler's exception stopped: see ``Handle._adopt``): the
    release is claimed (one pop), and every other step is a set or list operation that a
    second run finds done. Its entry in ``_live`` is what armed it and goes last, so a run
    that was stopped halfway is finished by the next one.
    """

    __slots__ = ("kind", "release", "parents", "generation", "held", "raw", "released",
                 "unclaimed", "finished", "__weakref__")

    def __init__(self, kind: str, release: Callable[[Any], None] | None,
                 parents: tuple[Handle, ...], generation: int, held: list[Handle] | None,
                 raw: Any) -> None:
        self.kind = kind
        self.release = release
        self.parents = parents
        self.generation = generation
        self.held = held
        self.raw = raw
        self.released = self.finished = False
        #: the release's claim (see __call__)
        self.unclaimed = [True]

    def __call__(self, ptr: Any = None) -> None:
        live = _live.get(self.kind)
        if self.finished or live is None or self not in live:
            return  # not armed (Handle._adopt), or done
        if not self.released:
            release = self.release
            # In a forked child (a new fork generation), ORT's threads are gone: releasing
            # could join threads that do not exist. Leaking there is the safe choice.
            if release is None or _guard._generation != self.generation:
                self.released = True
            else:
                allowed = release_begins()  # counted for, and skipped after, interpreter exit
                try:
                    try:
                        # the claim: one C call, so of two threads running this releaser at
                        # once (a collection's finalizer and _drain's net) one gets it
                        self.unclaimed.pop()
                    except IndexError:
                        pass
                    else:
                        self.released = True
                        if allowed:
                            release(self.raw)
                finally:
                    if allowed:
                        release_ends()
        for p in self.parents:
            if self in p._children:
                p._child_released(self)
        held = self.held
        while held:
            try:
                c = held.pop()  # one step: of this and an unhold of the same child, one does
            except IndexError:
                break
            c._child_released()
        live.discard(self)  # the last step: not live (nor armed) any more
        self.finished = True
        self.parents = ()
        self.held = None
        _doomed.pop(self, None)  # filed by the net when the handle went first: done now
        # logged last: a logging handler that raises stopped the steps above, leaving the
        # parents waiting for good (never released) and live_handles() raising at each drain
        log = _lifetime_debug()
        if log is not None:
            log.debug("-DROP %s %s", self.kind, hex(int(ffi.cast("uintptr_t", self.raw))))


#: finalizers whose run a signal handler's exception may have stopped: each handle also owns a
#: small cdata whose destructor, a C function (no Python frame, nothing to interrupt), files
#: the handle's finalizer here when the handle is collected; _drain runs them again (every
#: step is done once, so a finalizer that had finished does nothing)
_doomed: dict[Any, Any] = {}
_net_target = ffi.new("char[1]")


def _drain() -> None:
    """Finish the finalizers filed in ``_doomed``. Each stays filed until it has returned, so an
    interrupt here only delays it to the next drain."""
    doomed = _doomed  # (no lock: every step of a finalizer is claimed; two drains may run)
    while doomed:
        try:
            fn = next(iter(doomed))
        except (StopIteration, RuntimeError):  # emptied or changed meanwhile
            return
        fn()
        doomed.pop(fn, None)
