"""The process state ortc owns, in one place: what a forked child renews, and what interpreter
exit does.

Fork: only the thread that forked goes on in the child. A lock another thread of the parent held
at that instant stays held in the child for good (a child then hung making one Value while a
thread of its parent had been making Values), that thread is gone, a pipe is shared with the
parent, a queue holds the parent's work. So every module-level lock, thread, pipe and queue of
ortc (and the objects at module level holding them) is registered here with what a forked child
gets in its place: ``NEW`` (a new lock or queue), ``EMPTIED`` (cleared in place; what
:func:`emptied` clears stays referenced, never released in the child), ``FORGOTTEN`` (a thread
of the parent: the child starts its own when it needs one), ``CLOSED`` (a pipe) or ``RESET`` (a
value describing the parent: its main thread, its runs in flight). This module is
the only caller of ``os.register_at_fork``. Its one hook first makes anew the locks registered
with :func:`lock` and empties what :func:`emptied` names, then runs the hooks of :func:`at_fork`
in the order they were registered (the order the modules were imported), each whatever another
raised: a hook may drop an object of the parent (the run options of the parent's main thread),
and that object's finalizer takes ortc's locks (a child hung there while a thread of the parent
had held one of them at the fork).
tests/test_process_state.py finds every lock, thread and queue of every ortc module (its
globals, and one level into the module-level objects of ortc's classes) and fails on one not
registered here; and holds every registered lock from another thread across a fork.

Exit: one atexit hook runs the steps modules register with :func:`at_exit`, in this order:

1. ``ASYNC_JOBS`` (ortc._callbacks): wait, bounded, for RunAsync completions still to come, and
   for those still running Python on ORT's threads, then stop the runs still going and wait for
   their completions; one arriving after the interpreter is torn down would call into a dead
   interpreter, one running then would abort the process.
2. ``RUNS_IN_FLIGHT`` (ortc._guard): park new calls, terminate the RunOptions of runs other
   threads are inside, and give them a bounded time to leave ORT and finish releases.
3. ``QUIET_LOGGER`` (ortc.env): raise ORT's log threshold and make the logging callback inert;
   ORT may log from its static destructors after Python has finalized.

A step whose module was never imported has nothing to do. A failing step does not stop the
later ones.

This module imports nothing of ortc: every other module may register here.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any, Callable, TypeVar

__all__ = ["NEW", "EMPTIED", "FORGOTTEN", "CLOSED", "RESET", "Resource", "lock", "emptied",
           "at_fork", "resources", "ASYNC_JOBS", "RUNS_IN_FLIGHT", "QUIET_LOGGER", "at_exit"]

T = TypeVar("T")

# -- fork ------------------------------------------------------------------------------------------
#: what a forked child gets in place of a registered resource
NEW = "made anew"
EMPTIED = "emptied"
FORGOTTEN = "forgotten"
CLOSED = "closed"
RESET = "reset"
_HOW = (NEW, EMPTIED, FORGOTTEN, CLOSED, RESET)


class Resource:
    """One registered piece of process state: ``owner.name`` (``owner`` a module or an object),
    what a forked child gets in its place (``how``), and the hook that does it (``by``)."""

    __slots__ = ("owner", "name", "how", "by")

    def __init__(self, owner: Any, name: str, how: str, by: Callable[[], None]) -> None:
        self.owner = owner
        self.name = name
        self.how = how
        self.by = by

    def __repr__(self) -> str:
        owner = getattr(self.owner, "__name__", None) if isinstance(self.owner, type(sys)) \
            else type(self.owner).__name__ + " object"
        by = getattr(self.by, "__qualname__", repr(self.by))
        return f"<{owner}.{self.name}: {self.how} in a forked child, by {by}>"


_resources: list[Resource] = []
#: the renewals of lock() and emptied(): run before the hooks
_first: list[Callable[[], None]] = []
_hooks: list[Callable[[], None]] = []


def _owner(owner: Any) -> Any:
    # a module registers its own globals by name, while it is being imported (it is in
    # sys.modules already)
    return sys.modules[owner] if isinstance(owner, str) else owner


def at_fork(hook: Callable[[], None], owner: Any, **how: str) -> None:
    """Run ``hook`` in every forked child; it renews the attributes of ``owner`` (a module's
    ``__name__``, or an object) named in ``how``, each as stated (``NEW``, ``EMPTIED``, ...).

    A hook registered again (it renews another owner's state too) adds what it renews and
    still runs once."""
    _declare(hook, owner, how)
    if hook not in _hooks:
        _hooks.append(hook)


def _declare(hook: Callable[[], None], owner: Any, how: dict[str, str]) -> None:
    target = _owner(owner)
    for name, what in how.items():
        if what not in _HOW:
            raise ValueError(f"{name}: {what!r} is not one of {_HOW}")
        if not hasattr(target, name) and not isinstance(target, type(sys)):
            # (a module's global may come later in its code than its registration)
            raise AttributeError(f"{type(target).__name__} has no attribute {name!r}")
    _resources.extend(Resource(target, name, what, hook) for name, what in how.items())


def lock(owner: str, name: str, make: Callable[[], T]) -> T:
    """``make()``, a lock that module ``owner`` keeps as its global ``name``; a forked child
    gets a new one there (``make()`` again)."""
    module = _owner(owner)

    def renew() -> None:
        setattr(module, name, make())

    renew.__qualname__ = f"lock({owner}.{name})"
    _declare(renew, module, {name: NEW})
    _first.append(renew)
    return make()


#: what emptied() containers held when this process was forked, still referenced: never
#: released in the child. These renewals run before the hooks, so before the child is a new
#: fork generation (_guard's hook): a handle dropped here was released in the child, where
#: ORT's release may wait for a thread or a lock of the parent (ReleaseSession of the parent's
#: idle session hung a fork pool's workers at start)
_inherited: list[Any] = []


def emptied(owner: str, name: str, container: T) -> T:
    """``container`` (a list, dict or set), which module ``owner`` keeps as its global
    ``name``; a forked child empties it in place (what it holds is the parent's, kept
    referenced in ``_inherited`` rather than released there)."""
    module = _owner(owner)

    def empty() -> None:
        held = getattr(module, name)
        _inherited.append(held.copy())
        held.clear()

    empty.__qualname__ = f"emptied({owner}.{name})"
    _declare(empty, module, {name: EMPTIED})
    _first.append(empty)
    return container


def resources() -> list[Resource]:
    """Everything registered so far, in registration order."""
    return list(_resources)


def _in_child() -> None:
    failure: BaseException | None = None
    for hook in _first + _hooks:
        try:
            hook()
        except BaseException as exc:  # noqa: BLE001 - every other renewal must still happen
            failure = failure or exc
    if failure is not None:
        raise failure  # the interpreter reports a fork hook's exception and goes on


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_child)


# -- interpreter exit ---------------------------------------------------------------------------
ASYNC_JOBS, RUNS_IN_FLIGHT, QUIET_LOGGER = 1, 2, 3
_steps: dict[int, Callable[[], None]] = {}


def at_exit(step: int, action: Callable[[], None]) -> None:
    """Make ``action`` exit step ``step`` (one of the constants above)."""
    _steps[step] = action


def _at_exit() -> None:
    for step in sorted(_steps):
        try:
            _steps[step]()
        except Exception:  # noqa: BLE001 - the next step must still run
            pass


atexit.register(_at_exit)
