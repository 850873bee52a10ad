"""Run checks in this process (or in children for crash-type ones) and collect Results."""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Iterable

from ._registry import Check, Outcome, Result

__all__ = ["run_checks", "library_dict", "missing_slots", "HUNG"]

#: how a hung in-process check's detail begins (the matrix restarts its runner after one)
HUNG = "hung: no result after"


def missing_slots(chk: Check) -> list[str]:
    from .._loader import api

    a = api()
    return [s for s in chk.slots if not a.has(s)]


def library_dict() -> dict[str, Any]:
    from .._loader import api

    info = api().info
    return {"path": info.path, "version": info.version, "library_api": info.library_api,
            "api_version": info.api_version, "declared_api": info.declared_api,
            "source": info.source, "build_info": info.build_info,
            "python": sys.version.split()[0]}


def run_one(chk: Check) -> Result:
    from .._loader import api
    from ._capi import Ctx
    from .child import run_in_child

    lacking = missing_slots(chk)
    if lacking:
        from .._slots import SINCE
        need = max(SINCE[s] for s in lacking)
        return Result(chk.id, chk.claim, "skip", chk.evidence, 0.0,
                      f"needs API {need} ({', '.join(lacking)}); the library offers "
                      f"{api().version}", chk.test)
    if chk.child:
        return run_in_child(chk, api().info.path)
    t0 = time.perf_counter()
    ctx = Ctx()
    status, detail = "pass", ""
    try:
        detail = chk.func(ctx) or ""
    except Outcome as exc:
        status, detail = exc.status, exc.detail
    except Exception as exc:  # noqa: BLE001 - any other exception is an unexpected failure
        status, detail = "fail", f"{type(exc).__name__}: {exc}"
    finally:
        ctx.close()
    return Result(chk.id, chk.claim, status, chk.evidence, time.perf_counter() - t0, detail,
                  chk.test)


def run_checks(checks: Iterable[Check],
               progress: Callable[[int, int, Check, Result | None], None] | None = None,
               on_hang: Callable[[list[Result]], None] | None = None) -> list[Result]:
    """Run ``checks`` in order. An in-process check still running after its timeout cannot be
    stopped: it becomes a ``fail`` result, ``progress`` and ``on_hang`` (given the results up
    to it) are told, and the process ends with status 1, never waiting for it. A child
    check's hang is its child's timeout (:func:`ortc.conformance.child.run_in_child`)."""
    todo = list(checks)
    results: list[Result] = []
    for i, chk in enumerate(todo):
        if progress:
            progress(i, len(todo), chk, None)
        watch = None if chk.child else _Watchdog(chk, i, len(todo), results, progress, on_hang)
        try:
            res = run_one(chk)
        finally:
            if watch is not None:
                watch.cancel()
        results.append(res)
        if progress:
            progress(i + 1, len(todo), chk, res)
    return results


class _Watchdog:
    """Ends the process when the in-process check it watches outlives its timeout."""

    def __init__(self, chk: Check, index: int, total: int, results: list[Result],
                 progress: Callable[[int, int, Check, Result | None], None] | None,
                 on_hang: Callable[[list[Result]], None] | None) -> None:
        import threading

        self.chk, self.index, self.total = chk, index, total
        self.results, self.progress, self.on_hang = results, progress, on_hang
        self.lock = threading.Lock()
        self.done = False
        self.t0 = time.perf_counter()
        self.timer = threading.Timer(chk.timeout, self.fire)
        self.timer.daemon = True
        self.timer.start()

    def cancel(self) -> None:
        with self.lock:  # once fire() holds it, the process is ending: wait for that
            self.done = True
        self.timer.cancel()

    def fire(self) -> None:
        import os

        with self.lock:
            if self.done:
                return
            chk = self.chk
            res = Result(chk.id, chk.claim, "fail", chk.evidence, time.perf_counter() - self.t0,
                         f"{HUNG} {chk.timeout:.0f} s in the runner's process (its threads "
                         f"cannot be stopped: the process ended here)", chk.test)
            try:
                sys.stderr.write(f"\nortc conformance: {chk.id} {res.detail}\n")
                if self.progress:
                    self.progress(self.index + 1, self.total, chk, res)
                if self.on_hang:
                    self.on_hang(self.results + [res])
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(1)
