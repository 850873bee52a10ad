"""Run checks in this process (or in children for crash-type ones) and collect Results."""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Iterable

from ._registry import Check, Outcome, Result

__all__ = ["run_checks", "library_dict", "missing_slots"]


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
               progress: Callable[[int, int, Check, Result | None], None] | None = None
               ) -> list[Result]:
    todo = list(checks)
    results: list[Result] = []
    for i, chk in enumerate(todo):
        if progress:
            progress(i, len(todo), chk, None)
        res = run_one(chk)
        results.append(res)
        if progress:
            progress(i + 1, len(todo), chk, res)
    return results
