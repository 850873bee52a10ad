"""Run one check in a fresh process, so a crash is a recorded result and not the runner's end.

The parent (:func:`run_in_child`) starts ``python -c BOOT`` with the library path and the check
id. The child prints ``STEP <text>`` lines as it goes and ``RESULT <json>`` at the end; when it
dies by a signal instead, the parent reports the signal and the last step reached.

BOOT registers a bare ``ortc`` package object before importing ``ortc.conformance.child``, so the
child skips ``ortc/__init__.py`` (which imports numpy and ml_dtypes, about a second on a busy
machine); it needs only the loader, the generated cffi module and this package.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

from ._registry import Check, Outcome, Result

__all__ = ["run_in_child", "main"]

BOOT = (
    "import os, sys, types\n"
    "root = sys.argv[1]\n"
    "if 'ortc' not in sys.modules:\n"
    "    pkg = types.ModuleType('ortc')\n"
    "    pkg.__path__ = [os.path.join(root, 'ortc')]\n"
    "    pkg.__file__ = os.path.join(root, 'ortc', '__init__.py')\n"
    "    sys.modules['ortc'] = pkg\n"
    "sys.path.insert(0, root)\n"
    "from ortc.conformance.child import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def _root() -> str:
    # the folder that holds the ortc package
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def run_in_child(chk: Check, library: str) -> Result:
    """Run ``chk`` in a child process against ``library`` and turn what happened into a Result."""
    env = dict(os.environ)
    env["ORTC_LIBRARY"] = library
    env.pop("PYTHONFAULTHANDLER", None)  # no traceback dump: the signal is the result
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", BOOT, _root(), "--library", library, chk.id]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=chk.timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode()
        steps = [ln[5:] for ln in out.splitlines() if ln.startswith("STEP ")]
        # For a crash-type claim a hang is the same kind of finding as a crash (ORT 1.16 hangs
        # where 1.32 aborts): recorded, not a failure of the kit.
        return Result(chk.id, chk.claim, "known" if chk.crash else "fail", chk.evidence,
                      time.perf_counter() - t0,
                      f"child hung: timed out after {chk.timeout:.0f} s"
                      + (f" after step: {steps[-1]}" if steps else ""), chk.test,
                      {"signal": "hang"} if chk.crash else {})
    seconds = time.perf_counter() - t0
    steps = [ln[5:] for ln in out.splitlines() if ln.startswith("STEP ")]
    results = [ln[7:] for ln in out.splitlines() if ln.startswith("RESULT ")]
    if results:
        data = json.loads(results[-1])
        return Result(chk.id, chk.claim, data["status"], chk.evidence, seconds, data["detail"],
                      chk.test)
    last = f" after step: {steps[-1]}" if steps else ""
    tail = " | ".join(ln.strip() for ln in err.strip().splitlines()[-2:])[-300:]
    if rc < 0:
        what = f"child killed by {_signal_name(-rc)}{last}"
        if tail:
            what += f" (stderr: {tail})"
        return Result(chk.id, chk.claim, "known" if chk.crash else "fail", chk.evidence,
                      seconds, what, chk.test, {"signal": _signal_name(-rc)})
    return Result(chk.id, chk.claim, "fail", chk.evidence, seconds,
                  f"child exited with status {rc} and no result{last}"
                  + (f" (stderr: {tail})" if tail else ""), chk.test)


def main(argv: list[str]) -> int:
    from . import coverage
    from .._loader import load
    from ._capi import Ctx
    from .checks import by_id

    library = argv[argv.index("--library") + 1]
    check_id = argv[-1]
    load(library)
    coverage.install_from_env()
    chk = by_id(check_id)
    ctx = Ctx(in_child=True)
    status, detail = "pass", ""
    try:
        detail = chk.func(ctx) or ""
    except Outcome as exc:
        status, detail = exc.status, exc.detail
    except Exception as exc:  # noqa: BLE001 - any other exception is an unexpected failure
        status, detail = "fail", f"{type(exc).__name__}: {exc}"
    finally:
        ctx.close()
    coverage.flush()
    data: dict[str, Any] = {"status": status, "detail": detail}
    sys.stdout.write("RESULT " + json.dumps(data) + "\n")
    sys.stdout.flush()
    # Leave without running ORT's static destructors or Python's teardown: some checks leave
    # ORT in a state (env released, objects leaked on purpose) where a normal exit may crash.
    os._exit(0)
