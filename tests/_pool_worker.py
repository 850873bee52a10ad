"""Worker functions for tests/test_process_pools.py, importable by spawned children.

``SESSION`` is a module-level session, made when this module is imported: in the test process
before it forks (children inherit it and rebuild it from its recipe on first use), and again by
each spawned child when it imports this module.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

import models
import ortc
import ortc.session as session_module

MODEL = models.mlp_model(3, 16, "batch")
SESSION = ortc.Session(MODEL, intra_op_num_threads=1)


def infer(x: np.ndarray) -> tuple[int, np.ndarray]:
    """Run the module-level session (the pid says which process ran it)."""
    return os.getpid(), SESSION.run(None, {"x": x})[0]


def infer_with(args: tuple[ortc.Session, np.ndarray]) -> np.ndarray:
    """Run a session that came as an argument (pickled to spawned children)."""
    sess, x = args
    return sess.run(None, {"x": x})[0]


INSTALLED: list[ortc.Session] = []


def install(session: ortc.Session) -> None:
    """A pool initializer: the session arrives once per worker process and stays."""
    INSTALLED.append(session)


def infer_installed(x: np.ndarray) -> tuple[int, int, np.ndarray]:
    """Run the installed session: (pid, sessions installed in this worker, output)."""
    return os.getpid(), len(INSTALLED), INSTALLED[0].run(None, {"x": x})[0]


def first_use_from_threads(x: np.ndarray, threads: int = 8) -> tuple[int, int, list[Any]]:
    """In a fresh forked child: ``threads`` threads use the inherited session at once; returns
    (pid, how many sessions were created, their outputs)."""
    created = []
    original = session_module._create_session

    def counting(*args: Any, **kwargs: Any) -> Any:
        created.append(1)
        return original(*args, **kwargs)

    session_module._create_session = counting
    barrier = threading.Barrier(threads)

    def work(_: int) -> np.ndarray:
        barrier.wait()
        return SESSION.run(None, {"x": x})[0]

    try:
        with ThreadPoolExecutor(threads) as pool:
            outs = list(pool.map(work, range(threads)))
    finally:
        session_module._create_session = original
    return os.getpid(), len(created), outs


def use_inherited(kind: str) -> str:
    """In a forked child: what using an inherited object of ``kind`` raises ("" if nothing)."""
    try:
        if kind == "binding":
            BINDING.bind_input("x", np.zeros((1, 16), np.float32))
        elif kind == "value":
            VALUE.numpy()
        elif kind == "options":
            OPTIONS.intra_op_num_threads = 1
        elif kind == "run_options":
            RUN_OPTIONS.tag = "child"
        elif kind == "allocator":
            ALLOCATOR.stats()
        elif kind == "memory_info":
            MEMORY_INFO.name
        elif kind == "env":
            ortc.get_env().providers()
        elif kind == "closed-session":
            CLOSED.run(None, {"x": np.zeros((1, 16), np.float32)})
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        return type(exc).__name__
    return ""


BINDING = SESSION.io_binding()
VALUE = ortc.Value.from_numpy(np.ones(3, np.float32))
OPTIONS = ortc.SessionOptions()
RUN_OPTIONS = ortc.RunOptions()
ALLOCATOR = SESSION.allocator()
MEMORY_INFO = ortc.MemoryInfo("Cpu")
CLOSED = ortc.Session(MODEL)
CLOSED.close()


BUILDS: list[int] = []


def infer_counting_builds(args: tuple[ortc.Session, np.ndarray]) -> tuple[int, int, np.ndarray]:
    """A task that brings its session and lets it go when it ends: (pid, sessions this worker
    built so far, output)."""
    if not BUILDS:  # first task in this worker: count the builds from here on
        BUILDS.append(0)
        original = session_module._create_session

        def counting(*a: Any, **k: Any) -> Any:
            BUILDS[0] += 1
            return original(*a, **k)

        session_module._create_session = counting
    sess, x = args
    y = sess.run(None, {"x": x})[0]
    return os.getpid(), BUILDS[0], y
