"""What the thread-rule guard costs per call, on a tiny model (``c = a + b``, one float).

    PYTHONPATH=. python bench/bench_guard.py [--rounds 21] [--calls 3000]

Variants, timed in interleaved rounds (every round runs each variant once, in a shuffled order,
so drift on a shared machine hits all of them alike); the figure per variant is the median of
its rounds, in microseconds per call, and a cost is the median of per-round differences:

* ``run raw``: the run engine's body of run() (``RunEngine.run``) with no guard at all;
* ``run strict`` / ``run off``: Session.run under each policy (the guard is the difference);
* ``binding raw`` / ``binding strict``: the bare RunWithBinding C call, and
  Session.run_with_binding with its guards (shared on the session, exclusive on the binding)
  and its run context around it;
* ``guard shared`` / ``guard exclusive``: one enter + leave on an idle guard (a token, the
  entry witnessed by the calling frame, the leave in a ``finally``), nothing else;
* ``method bare``: a method that does nothing, called unmarked; ``marked``: the same method
  marked ``@shared`` (the marker's wrapper: its object's guard entered for the call);
  ``marked arg None`` / ``marked with arg``: a method marked with a handle argument
  (``args=``), called with None (the argument-checking wrapper, no second entry) and with a
  handle (whose guard is entered too);
* ``bind Value in`` / ``bind Value out``: an IoBinding's ``bind_input`` / ``bind_output`` of a
  Value bound to that name before (what libraries that rebind every call make), marked with the
  Value as a handle argument; the output Value is held by the binding's thread (a hold on its
  guard), the case the guard's own-holds look serves.

Before the guard was rewritten (one enter/leave protocol, ``ortc._guard``) this script also
timed its lock-based entries and the lock-free shared call of a lone thread; those paths no
longer exist, and neither do their rows.

Runs happen on a worker thread: on the main thread run() also arms the Ctrl-C bridge, which is
not the guard's cost. The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import ortc  # noqa: E402
from ortc._ffi import ffi  # noqa: E402
from ortc import _guard  # noqa: E402
from ortc._guard import Guard  # noqa: E402
from ortc.threads import shared  # noqa: E402


class BenchHandle:
    """An object with a guard and do-nothing methods, bare and marked (as ortc's handles are:
    the class has ``_guard``, which is how a marker tells a handle argument)."""

    _guard: Guard | None = None

    def __init__(self) -> None:
        self._guard = Guard(True, True)

    def bare(self) -> None:
        pass

    @shared()
    def marked(self) -> None:
        pass

    @shared(args={"other": "shared"})
    def marked_with(self, other: BenchHandle | None) -> None:
        pass


def _variants() -> dict[str, Callable[[], Any]]:
    from bench.models import tiny_bound_session

    s, feeds, b = tiny_bound_session(intra_op_num_threads=1)
    api = s._api

    def binding_raw() -> None:
        status = api.RunWithBinding(s._ptr, ffi.NULL, b._ptr)
        if status:
            raise RuntimeError("RunWithBinding failed")

    guard = Guard(True, True)
    obj = object()
    next_token = _guard._next_token
    getframe = sys._getframe

    def guard_shared() -> None:
        token = next_token()
        try:
            guard.enter(token, obj, False, getframe())
        finally:
            guard.leave(token)

    def guard_exclusive() -> None:
        token = next_token()
        try:
            guard.enter(token, obj, True, getframe())
        finally:
            guard.leave(token)

    h, arg = BenchHandle(), BenchHandle()
    bv = s.io_binding()
    value_in = ortc.Value.from_array(feeds["a"])
    value_out = ortc.Value.from_array(feeds["a"].copy())
    bv.bind_input("a", value_in)
    bv.bind_output("c", value_out)

    def policy(mode: str, fn: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            ortc.set_thread_checks(mode)
            return fn()
        call.policy = mode  # type: ignore[attr-defined]
        call.fn = fn  # type: ignore[attr-defined]
        return call

    return {
        "run raw": policy("strict", lambda: s._engine.run(s._ptr, None, feeds, None, None,
                                                          False)),
        "run strict": policy("strict", lambda: s.run(None, feeds)),
        "run off": policy("off", lambda: s.run(None, feeds)),
        "binding raw": policy("strict", binding_raw),
        "binding strict": policy("strict", lambda: s.run_with_binding(b)),
        "guard shared": policy("strict", guard_shared),
        "guard exclusive": policy("strict", guard_exclusive),
        "method bare": policy("strict", h.bare),
        "marked": policy("strict", h.marked),
        "marked arg None": policy("strict", lambda: h.marked_with(None)),
        "marked with arg": policy("strict", lambda: h.marked_with(arg)),
        "bind Value in": policy("strict", lambda: bv.bind_input("a", value_in)),
        "bind Value out": policy("strict", lambda: bv.bind_output("c", value_out)),
    }


def measure(rounds: int, calls: int, seed: int = 0) -> dict[str, list[float]]:
    variants = _variants()
    times: dict[str, list[float]] = {name: [] for name in variants}
    rng = random.Random(seed)
    order = list(variants)
    for _ in range(3):  # warm-up: arenas, caches, name arrays
        for name in order:
            variants[name]()
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            v = variants[name]
            ortc.set_thread_checks(v.policy)  # type: ignore[attr-defined]
            fn = v.fn  # type: ignore[attr-defined]
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            times[name].append((time.perf_counter() - t0) / calls * 1e6)
    ortc.set_thread_checks("strict")
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args(argv)
    box: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: box.update(times=measure(args.rounds, args.calls)))
    worker.start()
    worker.join()
    if "times" not in box:
        return 1  # the worker raised (its traceback is printed above)
    times: dict[str, list[float]] = box["times"]
    med = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"ortc {ortc.__version__}, ONNX Runtime {ortc.load().version}, Python "
          f"{sys.version.split()[0]}; median of {args.rounds} interleaved rounds x "
          f"{args.calls} calls")
    for name, m in med.items():
        spread = f"{min(times[name]):.3f}..{max(times[name]):.3f}"
        print(f"  {name:<16} {m:8.3f} us/call   (rounds {spread})")

    def paired(a: str, b: str) -> float:
        # per-round differences: both variants ran within the same round, so drift cancels
        return statistics.median(x - y for x, y in zip(times[a], times[b]))

    print(f"guard cost per run() (median of per-round differences): strict "
          f"{paired('run strict', 'run raw'):+.3f} us, off {paired('run off', 'run raw'):+.3f} us")
    print(f"cost per run_with_binding over the bare C call: strict "
          f"{paired('binding strict', 'binding raw'):+.3f} us (binding exclusive + session "
          f"shared + the run context around the C call)")
    print(f"bare guard enter+leave:          shared {med['guard shared']:.3f} us, exclusive "
          f"{med['guard exclusive']:.3f} us")
    print(f"a marker's wrapper over the bare method: {paired('marked', 'method bare'):+.3f} us; "
          f"with a handle argument's check {paired('marked arg None', 'method bare'):+.3f} us, "
          f"and its entry {paired('marked with arg', 'method bare'):+.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
