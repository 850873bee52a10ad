"""Run by tests/test_process_state.py in a fresh interpreter (it imports every ortc module, and
starts ortc's threads).

    python tests/process_state_check.py walk MODEL    # the locks, threads and queues found
    python tests/process_state_check.py held MODEL    # a fork while another thread holds them

``walk`` imports every module of the ortc package (compat and conformance too), uses the
paths that make ortc's lazily made state (a run with a deadline off the main thread, a
main-thread run, RunAsync, the releaser thread), then looks at every module's globals, at
the items of module-level containers, and one level into the module-level objects of ortc's
own classes (their ``__dict__`` and ``__slots__``), for a lock, RLock, Condition, Event,
Semaphore, thread or queue. It prints one JSON object: each one found, and those of them
ortc._process has no registration for.

``held`` takes every lock ortc._process has registered (``NEW``) on another thread and forks
while that thread holds them all; the child tries each one without waiting, checks that
what is registered ``EMPTIED`` is empty, makes a Value and runs a session made before the
fork, and exits with 0 when all of that worked.
"""

from __future__ import annotations

import collections
import faulthandler
import importlib
import json
import os
import queue
import sys
import threading
import types
from typing import Any, Iterator

import numpy as np

import ortc
from ortc import _process

LOCKS = (type(threading.Lock()), type(threading.RLock()), threading.Condition, threading.Event,
         threading.Semaphore, threading.Thread, queue.Queue, queue.SimpleQueue,
         collections.deque)
CONTAINERS = (list, tuple, set, frozenset, dict)


def ortc_modules() -> list[str]:
    root = os.path.dirname(ortc.__file__)
    names = []
    for folder, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, f), os.path.dirname(root))
                name = rel[:-3].replace(os.sep, ".")
                names.append(name[:-len(".__init__")] if name.endswith(".__init__") else name)
    return sorted(names)


def _is_lock(value: Any) -> bool:
    if isinstance(value, LOCKS):
        return True
    return isinstance(value, CONTAINERS) and any(
        isinstance(v, LOCKS) for v in (value.values() if isinstance(value, dict) else value))


def _attributes(obj: Any) -> Iterator[tuple[str, Any]]:
    seen = set()
    for name, value in getattr(obj, "__dict__", {}).items():
        seen.add(name)
        yield name, value
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in seen and hasattr(obj, name):
                seen.add(name)
                yield name, getattr(obj, name)


def walk(names: list[str]) -> list[tuple[Any, str, str]]:
    """(owner, attribute, type) of every lock, thread or queue the modules ``names`` hold at
    module level: a global, an item of a global container, or an attribute of a global
    object of one of ortc's classes."""
    found: dict[tuple[int, str], tuple[Any, str, str]] = {}
    for name in names:
        module = sys.modules[name]
        for attr, value in list(vars(module).items()):
            if isinstance(value, (types.ModuleType, type, types.FunctionType)):
                continue
            if _is_lock(value):
                found[(id(module), attr)] = (module, attr, type(value).__name__)
            elif type(value).__module__.startswith("ortc"):  # one level into ortc's objects
                for inner, item in _attributes(value):
                    if _is_lock(item):
                        found[(id(value), inner)] = (value, inner, type(item).__name__)
    return list(found.values())


def _describe(owner: Any) -> str:
    return owner.__name__ if isinstance(owner, types.ModuleType) else \
        f"{type(owner).__module__}.{type(owner).__name__} object"


def _use_the_lazy_paths(model: str) -> None:
    import asyncio  # noqa: F401 - asyncio's own locks are not ortc's; loaded as an app would

    from ortc import _callbacks

    session = ortc.Session(model, intra_op_num_threads=2)  # RunAsync needs a pool thread
    feeds = {"a": np.ones(4, np.float32), "b": np.ones(4, np.float32)}
    session.run(None, feeds)  # on the main thread: the Ctrl-C bridge, its pipe and thread
    worker = threading.Thread(target=lambda: session.run(None, feeds, timeout=30))
    worker.start()  # a deadline: the watcher's wait
    worker.join()
    session.run_async(None, feeds).result(timeout=30)
    done = threading.Event()
    _callbacks.releaser.submit(done.set)  # the releaser's thread and queue
    done.wait(30)


def main_walk(model: str) -> dict[str, Any]:
    for name in ortc_modules():
        importlib.import_module(name)
    _use_the_lazy_paths(model)
    registered = {(id(r.owner), r.name) for r in _process.resources()}
    found = walk(ortc_modules())
    return {
        "found": sorted(f"{_describe(o)}.{a} ({t})" for o, a, t in found),
        "unregistered": sorted(f"{_describe(o)}.{a} ({t})" for o, a, t in found
                               if (id(o), a) not in registered),
    }


def _registered_locks() -> list[tuple[str, Any]]:
    locks = []
    for r in _process.resources():
        if r.how != _process.NEW:
            continue
        value = getattr(r.owner, r.name)
        for item in value if isinstance(value, list) else [value]:
            if hasattr(item, "acquire") and hasattr(item, "release"):
                locks.append((f"{_describe(r.owner)}.{r.name}", item))
    return locks


def main_held(model: str) -> dict[str, Any]:
    import gc

    session = ortc.Session(model, intra_op_num_threads=1)
    a = np.arange(4, dtype=np.float32)
    session.run(None, {"a": a, "b": a})
    _use_the_lazy_paths(model)
    locks = _registered_locks()
    holding, forked = threading.Event(), threading.Event()

    def hold() -> None:
        # one that is taken already stays so through the fork all the same (env's wake-up
        # semaphore is, while its drainer waits): held either way
        mine = [lk for _, lk in locks if lk.acquire(timeout=1.0)]
        holding.set()
        forked.wait()
        for lk in reversed(mine):
            lk.release()

    gc.disable()  # a finalizer in this thread would wait for the locks held over there
    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait()
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            taken = []
            for res in _process.resources():
                if res.how != _process.NEW:
                    continue
                # the lock as the child sees it now (the registry has replaced it)
                now = getattr(res.owner, res.name)
                now = now[0] if isinstance(now, list) else now
                if hasattr(now, "acquire"):
                    if now.acquire(False):
                        now.release()
                    else:
                        taken.append(f"{_describe(res.owner)}.{res.name}")
            full = [f"{_describe(res.owner)}.{res.name}" for res in _process.resources()
                    if res.how == _process.EMPTIED and len(getattr(res.owner, res.name))]
            said = {"still_held": taken, "not_emptied": full}
            os.write(w, (json.dumps(said) + "\n").encode())  # before what a held lock would stop
            faulthandler.dump_traceback_later(60, exit=True)
            value = ortc.Value.from_numpy(a)
            out = session.run(None, {"a": value.numpy(), "b": a})[0]
            os.write(w, json.dumps({"ran": out.tolist() == [0, 2, 4, 6]}).encode())
        except BaseException:  # noqa: BLE001 - reported by the exit code
            import traceback

            traceback.print_exc()
            os._exit(3)
        os._exit(0)
    os.close(w)
    forked.set()
    holder.join()
    gc.enable()
    result: dict[str, Any] = {}
    with os.fdopen(r) as child_said:
        for line in child_said:
            result.update(json.loads(line))
    _, status = os.waitpid(pid, 0)
    result.update(locks=[name for name, _ in locks], child_exit=os.waitstatus_to_exitcode(status))
    return result


if __name__ == "__main__":
    mode, model_path = sys.argv[1], sys.argv[2]
    result = main_walk(model_path) if mode == "walk" else main_held(model_path)
    print(json.dumps(result))
