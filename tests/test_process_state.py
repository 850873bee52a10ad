"""The process state ortc owns (ortc/_process.py): every module-level lock, thread, pipe and
queue is registered there with what a forked child gets in its place, the registry is the only
caller of os.register_at_fork, and forked children neither hang nor fail while threads of the
parent hold ortc's locks.

The enumeration and the fork with held locks run in a fresh interpreter
(tests/process_state_check.py): they import every ortc module and start ortc's threads. The
fork-with-threads run is tests/fork_threads_check.py, in this interpreter and in CPython 3.9
(tests/interpreters.py)."""

from __future__ import annotations

import ast
import json
import os
import sys
import threading
import types
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import interpreters
import models
import process_state_check
from conftest import ROOT, run_python
from ortc import _process

#: what the fork-with-threads run does: a child per fork, each given this long (seconds)
CHILDREN = 100
SECONDS_PER_CHILD = 30.0


def _check(mode: str, model: Path) -> dict[str, object]:
    proc = interpreters.run_script(sys.executable, "process_state_check.py", mode, str(model),
                                   timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def add_model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("process_state") / "add.onnx"
    path.write_bytes(models.add_model(np.float32, [4]))
    return path


def test_every_lock_thread_and_queue_of_every_module_is_registered(add_model_file: Path
                                                                    ) -> None:
    got = _check("walk", add_model_file)
    assert got["unregistered"] == [], (
        "module-level locks, threads or queues with no registration in ortc/_process.py "
        f"(register them with _process.lock, emptied or at_fork): {got['unregistered']}")
    found = got["found"]
    assert isinstance(found, list)
    # the walk sees each kind of place ortc has: module globals, an attribute of a
    # module-level object, a thread and a queue (an item of a module-level list, which ortc no
    # longer has: test_the_walk_finds_what_is_not_registered)
    for expected in ("ortc.env._queue_start (lock)",
                     "ortc._interrupt.Watcher object._wake (lock)",
                     "ortc._callbacks._Releaser object.thread (Thread)",
                     "ortc.env._queued (deque)", "ortc.conformance.coverage._lock (lock)"):
        assert expected in found, found


def test_the_walk_finds_what_is_not_registered() -> None:
    """The enumeration itself: a lock at module level, in a module-level container, and in an
    attribute (or slot) of a module-level object of a class of ortc's."""
    fake = types.ModuleType("ortc._fake_for_the_walk")

    class Holder:
        __slots__ = ("lock",)

        def __init__(self) -> None:
            self.lock = threading.Condition()

    Holder.__module__ = fake.__name__
    fake._lock = threading.Lock()  # type: ignore[attr-defined]
    fake._locks = [threading.RLock()]  # type: ignore[attr-defined]
    fake.holder = Holder()  # type: ignore[attr-defined]
    fake.outsider = threading  # a module: not walked into
    sys.modules[fake.__name__] = fake
    try:
        found = process_state_check.walk([fake.__name__])
    finally:
        del sys.modules[fake.__name__]
    assert sorted((a, t) for _, a, t in found) == [
        ("_lock", "lock"), ("_locks", "list"), ("lock", "Condition")], found


def test_only_the_registry_calls_register_at_fork() -> None:
    callers = []
    package = os.path.join(ROOT, "ortc")
    for folder, _, files in os.walk(package):
        for f in files:
            path = os.path.join(folder, f)
            if not f.endswith(".py") or path == os.path.join(package, "_process.py"):
                continue
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            callers += [f"{os.path.relpath(path, ROOT)}:{node.lineno}"
                        for node in ast.walk(tree)
                        if isinstance(node, (ast.Attribute, ast.Name))
                        and getattr(node, "attr", getattr(node, "id", None)) == "register_at_fork"]
    assert callers == [], f"register the state with ortc._process instead: {callers}"


def test_a_child_forked_while_another_thread_holds_every_registered_lock(add_model_file: Path
                                                                         ) -> None:
    """Every lock the registry renews, held by another thread at the fork, is free in the
    child; what it empties is empty; the child makes a Value and runs a session."""
    got = _check("held", add_model_file)
    locks = got["locks"]
    assert isinstance(locks, list)
    assert {"ortc.env._queue_start", "ortc._interrupt.Watcher object._wake"} <= set(locks), locks
    assert got["child_exit"] == 0, got
    assert (got.get("still_held"), got.get("not_emptied"), got.get("ran")) == ([], [], True), got


def test_the_registry_refuses_what_it_cannot_renew() -> None:
    before = len(_process.resources())
    holder = types.SimpleNamespace(lock=threading.Lock())
    with pytest.raises(ValueError, match="not one of"):
        _process.at_fork(lambda: None, holder, lock="replaced somehow")
    with pytest.raises(AttributeError, match="no attribute 'lokc'"):
        _process.at_fork(lambda: None, holder, lock=_process.NEW, lokc=_process.NEW)
    assert len(_process.resources()) == before  # nothing half registered


def test_a_failing_fork_hook_does_not_stop_the_others() -> None:
    code = """if True:
        import os, threading
        from ortc import _process
        seen = []
        holder = threading.Event()
        holder.lock = threading.Lock()
        def fails():
            raise RuntimeError("this hook fails")
        _process.at_fork(fails, holder, lock=_process.RESET)
        _process.at_fork(lambda: seen.append("after"), holder, lock=_process.NEW)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if seen == ["after"] else 3)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0"]
    assert "this hook fails" in proc.stderr  # reported by the interpreter, not lost


@pytest.mark.parametrize("which", ["this", "cpython3.9", "pypy"])
def test_forked_children_while_a_parent_thread_makes_values(which: str, add_model_file: Path
                                                            ) -> None:
    """A thread of the parent makes Values without pause while the main thread forks
    CHILDREN children; each makes a Value, runs a session made before the fork and exits
    normally, in time (a child of the unfixed registry hung: 4 of 150 here, waiting for
    ``_handle``'s tree lock while a fork hook dropped the parent's main-thread RunOptions)."""
    python = {"this": sys.executable, "cpython3.9": interpreters.cpython39,
              "pypy": interpreters.pypy}[which]
    if callable(python):
        python = python()
    proc = interpreters.run_script(python, "fork_threads_check.py", str(add_model_file),
                                   str(CHILDREN), str(SECONDS_PER_CHILD),
                                   timeout=CHILDREN * (SECONDS_PER_CHILD + 15))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    print(got["python"], Counter(map(str, got["codes"])), got["values_made"])
    if which == "cpython3.9":
        assert got["python"].startswith("CPython 3.9"), got["python"]
    if which == "pypy":
        assert got["python"].startswith("PyPy"), got["python"]
    assert got["values_made"] > 0
    assert got["codes"] == [0] * CHILDREN, (Counter(map(str, got["codes"])), proc.stderr[-3000:])
