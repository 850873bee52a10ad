"""What ortc does when the interpreter exits: one atexit hook running the steps in this order.

1. ``ASYNC_JOBS`` (ortc._callbacks): wait, bounded, for RunAsync completions still to come, and
   for those still running Python on ORT's threads; one arriving after the interpreter is torn
   down would call into a dead interpreter, one running then would abort the process.
2. ``RUNS_IN_FLIGHT`` (ortc._guard): park new calls, terminate the RunOptions of runs other
   threads are inside, and give them a bounded time to leave ORT and finish releases.
3. ``QUIET_LOGGER`` (ortc.env): raise ORT's log threshold and make the logging callback inert;
   ORT may log from its static destructors after Python has finalized.

Modules register their step when they are imported; a step whose module was never imported
has nothing to do. A failing step does not stop the later ones.
"""

from __future__ import annotations

import atexit
from typing import Callable

__all__ = ["ASYNC_JOBS", "RUNS_IN_FLIGHT", "QUIET_LOGGER", "register"]

ASYNC_JOBS, RUNS_IN_FLIGHT, QUIET_LOGGER = 1, 2, 3
_steps: dict[int, Callable[[], None]] = {}


def register(step: int, action: Callable[[], None]) -> None:
    """Make ``action`` exit step ``step`` (one of the constants above)."""
    _steps[step] = action


def _at_exit() -> None:
    for step in sorted(_steps):
        try:
            _steps[step]()
        except Exception:  # noqa: BLE001 - the next step must still run
            pass


atexit.register(_at_exit)
