"""Thread rules as code: the markers, the policy and ORT's callbacks.

Markers, in Rust's terms:

* class level: ``send`` (may be used from a thread other than its creator) and ``sync``
  (several threads may be inside its shared methods at once), each with an ``evidence`` string;
* method level: :func:`shared` (``&self``: may overlap other shared calls) and
  :func:`exclusive` (``&mut self``: needs sole access to the object).

Each handle's guard (:class:`ortc._guard.Guard`) enforces them according to the policy
(``strict``, ``serialize``, ``off``), set with :func:`set_thread_checks` or the
``ORTC_THREAD_CHECKS`` environment variable. The guard is a small lock plus counters, so it is
correct without the GIL, and in strict mode it never waits for another thread's ORT call: a
conflict raises at once. The class registry here is what the rules table reads.
"""

from __future__ import annotations

import os
import _thread
from typing import Any, Callable, TypeVar

from ._record import Record

__all__ = [
    "shared",
    "exclusive",
    "MethodRule",
    "ort_callback",
    "in_ort_callback",
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


# MethodRule and _ClassRecord are made at import by every marked class; as dataclasses they cost
# 0.45 ms and 0.3 ms of `import ortc` (dataclass code generation), as a NamedTuple 0.14 ms, as
# these 0.02 and 0.01.


class MethodRule(Record):
    """How one method uses its object: ``shared`` or ``exclusive``, and the C functions it calls."""

    __slots__ = ("kind", "c_functions", "args", "exclusive_when")
    kind: str
    c_functions: tuple[str, ...]
    #: other handle arguments and how they are used, e.g. {"binding": "exclusive"}
    args: tuple[tuple[str, str], ...]
    #: a shared method that becomes exclusive when this instance attribute is true
    #: (Session.run on an execution provider that forbids concurrent runs)
    exclusive_when: str | None

    def __init__(self, kind: str, c_functions: tuple[str, ...] = (),
                 args: tuple[tuple[str, str], ...] = (), exclusive_when: str | None = None
                 ) -> None:
        self._init(kind, c_functions, args, exclusive_when)


#: the guard's wrapper factory (ortc._guard.guarded), which that module hands over here as it is
#: imported: the guard is built on this module, so this one cannot import it
_wrapper_factory: Callable[[Callable[..., Any], bool, str | None,
                            tuple[tuple[str, int, bool], ...], bool],
                           Callable[..., Any]] | None = None


def use_wrapper_factory(factory: Callable[..., Callable[..., Any]]) -> None:
    """Called once by :mod:`ortc._guard`: the factory that makes a marked method's wrapper."""
    global _wrapper_factory
    _wrapper_factory = factory


def _mark(kind: str, c_functions: tuple[str, ...], args: dict[str, str] | None,
          exclusive_when: str | None = None, ahead: bool = False) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        rule = MethodRule(kind, tuple(c_functions), tuple(sorted((args or {}).items())),
                          exclusive_when)
        if _wrapper_factory is None:
            raise RuntimeError("ortc._guard is not imported: markers are for handle classes")
        guarded_fn = _wrapper_factory(fn, kind == "exclusive", exclusive_when,
                                      _argument_uses(fn, args or {}), ahead)
        guarded_fn.__ortc_rule__ = rule  # type: ignore[attr-defined]
        return guarded_fn  # type: ignore[return-value]

    return decorate


def _argument_uses(fn: Callable[..., Any], args: dict[str, str]
                   ) -> tuple[tuple[str, int, bool], ...]:
    """(name, position after self, exclusive) of each handle argument a marker names: the
    wrapper enters their guards for the call."""
    code = fn.__code__
    params = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
    uses = []
    for name, use in sorted(args.items()):
        if name not in params:
            raise TypeError(f"{fn.__qualname__}: the marker names argument {name!r}, which "
                            f"the method does not take")
        if use not in ("shared", "exclusive"):
            raise ValueError(f"{fn.__qualname__}: argument {name!r} is {use!r}; expected "
                             f"'shared' or 'exclusive'")
        position = params.index(name)
        if position >= code.co_argcount - 1:
            position = 1 << 30  # keyword-only: never positional
        uses.append((name, position, use == "exclusive"))
    return tuple(uses)


def shared(*c_functions: str, args: dict[str, str] | None = None,
           exclusive_when: str | None = None, ahead_of_waiters: bool = False
           ) -> Callable[[F], F]:
    """Mark a method as shared (Rust ``&self``): it may overlap other shared calls.

    ``args`` names the handle arguments the call uses and how (``"shared"`` or
    ``"exclusive"``): their guards are entered for the call too. ``exclusive_when`` names a
    boolean instance attribute that, when true, makes the call exclusive for that instance
    (e.g. a session whose execution provider forbids concurrent runs).
    ``ahead_of_waiters``: in serialize mode the call does not queue behind waiting calls (a
    call that ends what they wait for: ``RunOptions.terminate``); the rule is the same.
    """
    return _mark("shared", c_functions, args, exclusive_when, ahead_of_waiters)


def exclusive(*c_functions: str, args: dict[str, str] | None = None) -> Callable[[F], F]:
    """Mark a method as exclusive (Rust ``&mut self``): no other call may overlap it."""
    return _mark("exclusive", c_functions, args)


# -- callbacks -------------------------------------------------------------------------------------
_callback_state = _thread._local()


class ort_callback:
    """Context manager for code that ORT calls back into (logger, RunAsync completion, kernels).

    Inside it, a guard never waits, even in serialize mode: the thread running the callback may
    be one of ORT's pool threads working for the very call that holds the guard, so waiting could
    deadlock. A conflict raises :class:`ConcurrentUseError` instead (re-entry by the thread that
    holds the guard is still allowed).
    """

    __slots__ = ()

    def __enter__(self) -> None:
        _callback_state.depth = getattr(_callback_state, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _callback_state.depth -= 1


def in_ort_callback() -> bool:
    """True while the calling thread runs inside an :class:`ort_callback` block."""
    return getattr(_callback_state, "depth", 0) > 0


class _ClassRecord:
    """A handle class's thread rules as registered (the rules table reads them)."""

    __slots__ = ("cls", "c_type", "send", "sync", "evidence", "parents", "methods")

    def __init__(self, cls: type, c_type: str, send: bool, sync: bool, evidence: str,
                 parents: tuple[str, ...], methods: dict[str, MethodRule]) -> None:
        self.cls = cls
        self.c_type = c_type
        self.send = send
        self.sync = sync
        self.evidence = evidence
        self.parents = parents
        self.methods = methods

    def __repr__(self) -> str:
        return f"_ClassRecord({self.cls.__name__}, send={self.send}, sync={self.sync})"


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
