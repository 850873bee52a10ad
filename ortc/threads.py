"""Thread rules as code: the markers, the policy and the guard every handle carries.

Markers, in Rust's terms:

* class level: ``send`` (may be used from a thread other than its creator) and ``sync``
  (several threads may be inside its shared methods at once), each with an ``evidence`` string;
* method level: :func:`shared` (``&self``: may overlap other shared calls) and
  :func:`exclusive` (``&mut self``: needs sole access to the object).

The :class:`Guard` enforces them according to the policy (``strict``, ``serialize``, ``off``),
set with :func:`set_thread_checks` or the ``ORTC_THREAD_CHECKS`` environment variable. The guard
is a small lock plus counters, so it is correct without the GIL, and in strict mode it never
waits for another thread's ORT call: a conflict raises at once.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from .errors import ClosedError, ConcurrentUseError, ForkedHandleError, WrongThreadError

__all__ = [
    "shared",
    "exclusive",
    "Guard",
    "MethodRule",
    "set_thread_checks",
    "thread_checks",
    "registry",
    "STRICT",
    "SERIALIZE",
    "OFF",
]

STRICT = "strict"
SERIALIZE = "serialize"
OFF = "off"
_POLICIES = (STRICT, SERIALIZE, OFF)

F = TypeVar("F", bound=Callable[..., Any])

_get_ident = threading.get_ident


class _Policy:
    """The process-wide policy; a plain attribute read on the hot path."""

    __slots__ = ("mode",)

    def __init__(self) -> None:
        mode = os.environ.get("ORTC_THREAD_CHECKS", STRICT).strip().lower() or STRICT
        if mode not in _POLICIES:
            raise ValueError(f"ORTC_THREAD_CHECKS={mode!r}: expected one of {', '.join(_POLICIES)}")
        self.mode = mode


policy = _Policy()


def set_thread_checks(mode: str) -> str:
    """Set the thread-rule policy (``"strict"``, ``"serialize"`` or ``"off"``); returns the old one.

    strict: a forbidden overlap raises :class:`ConcurrentUseError`, a non-Send object used from
    another thread raises :class:`WrongThreadError`. serialize: forbidden overlaps wait for each
    other instead. off: no thread checks (use-after-close and fork checks stay on).
    """
    if mode not in _POLICIES:
        raise ValueError(f"thread check policy {mode!r}: expected one of {', '.join(_POLICIES)}")
    old, policy.mode = policy.mode, mode
    return old


def thread_checks() -> str:
    """The current thread-rule policy."""
    return policy.mode


@dataclass(frozen=True)
class MethodRule:
    """How one method uses its object: ``shared`` or ``exclusive``, and the C functions it calls."""

    kind: str
    c_functions: tuple[str, ...] = ()
    #: other handle arguments and how they are used, e.g. {"binding": "exclusive"}
    args: tuple[tuple[str, str], ...] = ()
    #: a shared method that becomes exclusive when this instance attribute is true
    #: (Session.run on an execution provider that forbids concurrent runs)
    exclusive_when: str | None = None


def _mark(kind: str, c_functions: tuple[str, ...], args: dict[str, str] | None,
          exclusive_when: str | None = None, inline: bool = False) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        rule = MethodRule(kind, tuple(c_functions), tuple(sorted((args or {}).items())),
                          exclusive_when)
        if inline:  # the method enters and leaves the guard itself (hot paths)
            fn.__ortc_rule__ = rule  # type: ignore[attr-defined]
            return fn
        guarded = _guarded(fn, kind == "exclusive", exclusive_when)
        guarded.__ortc_rule__ = rule  # type: ignore[attr-defined]
        return guarded  # type: ignore[return-value]

    return decorate


def shared(*c_functions: str, args: dict[str, str] | None = None,
           exclusive_when: str | None = None, inline: bool = False) -> Callable[[F], F]:
    """Mark a method as shared (Rust ``&self``): it may overlap other shared calls.

    ``exclusive_when`` names a boolean instance attribute that, when true, makes the call
    exclusive for that instance (e.g. a session whose execution provider forbids concurrent
    runs). ``inline=True`` records the rule but leaves the guard to the method itself, for hot
    paths that cannot afford a second Python frame.
    """
    return _mark("shared", c_functions, args, exclusive_when, inline)


def exclusive(*c_functions: str, args: dict[str, str] | None = None) -> Callable[[F], F]:
    """Mark a method as exclusive (Rust ``&mut self``): no other call may overlap it."""
    return _mark("exclusive", c_functions, args)


def _guarded(fn: Callable[..., Any], is_exclusive: bool,
             exclusive_when: str | None = None) -> Callable[..., Any]:
    import functools

    if exclusive_when is not None:
        @functools.wraps(fn)
        def call_conditional(self: Any, *args: Any, **kwargs: Any) -> Any:
            guard = self._guard
            if getattr(self, exclusive_when):
                token = guard.enter_exclusive(self)
            else:
                token = guard.enter_shared(self)
            try:
                return fn(self, *args, **kwargs)
            finally:
                guard.leave(token)

        return call_conditional

    if is_exclusive:
        @functools.wraps(fn)
        def call_exclusive(self: Any, *args: Any, **kwargs: Any) -> Any:
            guard = self._guard
            token = guard.enter_exclusive(self)
            try:
                return fn(self, *args, **kwargs)
            finally:
                guard.leave(token)

        return call_exclusive

    @functools.wraps(fn)
    def call_shared(self: Any, *args: Any, **kwargs: Any) -> Any:
        guard = self._guard
        token = guard.enter_shared(self)
        try:
            return fn(self, *args, **kwargs)
        finally:
            guard.leave(token)

    return call_shared


class Guard:
    """Per-object bookkeeping of who is inside the object's methods.

    ``users`` maps a thread id to how deep that thread is inside shared calls; ``owner`` is the
    thread inside an exclusive call (re-entry by the same thread, e.g. from a callback, is
    allowed). ``send``/``sync`` come from the object's class.
    """

    __slots__ = ("lock", "cond", "users", "owner", "depth", "creator", "pid", "send", "sync",
                 "closed", "on_idle")

    def __init__(self, send: bool, sync: bool) -> None:
        self.lock = threading.Lock()
        self.cond: threading.Condition | None = None  # made on first wait (serialize mode)
        self.users: dict[int, int] = {}
        self.owner = 0
        self.depth = 0
        self.creator = _get_ident()
        self.pid = os.getpid()
        self.send = send
        self.sync = sync
        self.closed = False
        #: called (once) when the last call leaves an object whose release was deferred
        self.on_idle: Callable[[], None] | None = None

    # -- entry ---------------------------------------------------------------------------------
    def _precheck(self, obj: Any, mode: str) -> int:
        if self.closed:
            raise ClosedError(f"{type(obj).__name__} is closed")
        if self.pid != os.getpid():
            raise ForkedHandleError(
                f"{type(obj).__name__} was created in process {self.pid} before fork(); "
                f"ORT objects cannot be used in a forked child: create a new one there")
        me = _get_ident()
        if not self.send and mode != OFF and me != self.creator:
            raise WrongThreadError(
                f"{type(obj).__name__} is not Send: it was created on thread {self.creator} "
                f"and must only be used there (this is thread {me})")
        return me

    def enter_shared(self, obj: Any) -> int:
        mode = policy.mode
        me = self._precheck(obj, mode)
        with self.lock:
            if mode != OFF:
                while self._shared_conflict(me):
                    if mode == STRICT:
                        raise ConcurrentUseError(self._describe(obj, "shared"))
                    self._wait()
                    if self.closed:
                        raise ClosedError(f"{type(obj).__name__} is closed")
            users = self.users
            users[me] = users.get(me, 0) + 1
        return me

    def enter_exclusive(self, obj: Any) -> int:
        mode = policy.mode
        me = self._precheck(obj, mode)
        with self.lock:
            if mode != OFF:
                while self._exclusive_conflict(me):
                    if mode == STRICT:
                        raise ConcurrentUseError(self._describe(obj, "exclusive"))
                    self._wait()
                    if self.closed:
                        raise ClosedError(f"{type(obj).__name__} is closed")
            if mode != OFF:
                if self.owner == me:
                    self.depth += 1
                else:
                    self.owner, self.depth = me, 1
            users = self.users
            users[me] = users.get(me, 0) + 1
        return me

    def leave(self, me: int) -> None:
        with self.lock:
            users = self.users
            n = users[me] - 1
            if n:
                users[me] = n
            else:
                del users[me]
            if self.owner == me:
                self.depth -= 1
                if not self.depth:
                    self.owner = 0
            if self.cond is not None:
                self.cond.notify_all()
            idle = not users and self.on_idle is not None
            on_idle = self.on_idle if idle else None
            if idle:
                self.on_idle = None
        if on_idle is not None:
            on_idle()

    # -- helpers -------------------------------------------------------------------------------
    def _shared_conflict(self, me: int) -> bool:
        if self.owner and self.owner != me:
            return True
        if not self.sync:
            return any(t != me for t in self.users)
        return False

    def _exclusive_conflict(self, me: int) -> bool:
        if self.owner and self.owner != me:
            return True
        return any(t != me for t in self.users)

    def _wait(self) -> None:
        if self.cond is None:
            self.cond = threading.Condition(self.lock)
        self.cond.wait()

    def _describe(self, obj: Any, kind: str) -> str:
        others = sorted(t for t in self.users if t != _get_ident())
        what = "an exclusive call" if self.owner else "another call"
        why = "" if self.sync else f" ({type(obj).__name__} is not Sync)"
        return (f"{type(obj).__name__}: a {kind} call while {what} is in flight on thread(s) "
                f"{others or [self.owner]}{why}; use one object per thread, or "
                f"ortc.set_thread_checks('serialize') to make such calls wait")

    def busy_elsewhere(self) -> bool:
        """True when a thread other than the caller is inside one of the object's methods."""
        me = _get_ident()
        with self.lock:
            return any(t != me for t in self.users)

    def close_when_idle(self, obj: Any, release: Callable[[], None]) -> None:
        """Mark closed and release now, or when the last in-flight call leaves (per policy)."""
        mode = policy.mode
        me = _get_ident()
        with self.lock:
            if self.closed:
                return
            busy = any(t != me for t in self.users)
            if busy and mode == STRICT:
                raise ConcurrentUseError(
                    f"{type(obj).__name__}.close() while another thread is inside one of its "
                    f"calls; close it after those calls return")
            while busy and mode == SERIALIZE:
                self._wait()
                busy = any(t != me for t in self.users)
            self.closed = True
            if self.users:  # off mode, or the caller itself is inside a call: defer
                self.on_idle = release
                return
        release()


@dataclass
class _ClassRecord:
    cls: type
    c_type: str
    send: bool
    sync: bool
    evidence: str
    parents: tuple[str, ...]
    methods: dict[str, MethodRule] = field(default_factory=dict)


#: every handle class, registered by its definition (see _handle.Handle.__init_subclass__)
registry: dict[str, _ClassRecord] = {}


def register(cls: type) -> None:
    methods: dict[str, MethodRule] = {}
    for klass in reversed(cls.__mro__):
        for name, attr in vars(klass).items():
            fn = attr.fget if isinstance(attr, property) else attr
            rule = getattr(fn, "__ortc_rule__", None)
            if rule is not None:
                methods[name] = rule
            if isinstance(attr, property) and attr.fset is not None:
                rule = getattr(attr.fset, "__ortc_rule__", None)
                if rule is not None:
                    methods[name + " (set)"] = rule
    registry[cls.__name__] = _ClassRecord(
        cls=cls, c_type=cls.c_type, send=cls.send, sync=cls.sync,  # type: ignore[attr-defined]
        evidence=cls.evidence, parents=tuple(cls.parents), methods=methods,  # type: ignore[attr-defined]
    )
