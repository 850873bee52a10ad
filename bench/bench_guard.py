"""What the thread-rule guard costs per call, on a tiny model (``c = a + b``, one float).

    PYTHONPATH=. python bench/bench_guard.py [--rounds 21] [--calls 3000]

Variants, timed in interleaved rounds (every round runs each variant once, in a shuffled order,
so drift on a shared machine hits all of them alike); the figure per variant is the median of
its rounds, in microseconds per call, and a cost is the median of per-round differences:

* ``run raw``: the run engine's body of run() (``RunEngine.run``) with no guard at all;
* ``run strict`` / ``run off``: Session.run under each policy (the guard is the difference);
* ``binding raw`` / ``binding strict``: RunWithBinding through IoBinding._run without and with
  the guards (exclusive on the binding, shared on the session);
* ``guard shared`` / ``guard exclusive``: one enter + leave on an idle guard, nothing else.

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
from ortc._guard import Guard  # noqa: E402


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

    def guard_shared() -> None:
        guard.leave(guard.enter_shared(obj))

    def guard_exclusive() -> None:
        guard.leave(guard.enter_exclusive(obj))

    def policy(mode: str, fn: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            ortc.set_thread_checks(mode)
            return fn()
        call.policy = mode  # type: ignore[attr-defined]
        call.fn = fn  # type: ignore[attr-defined]
        return call

    return {
        "run raw": policy("strict", lambda: s._engine.run(s._ptr, None, feeds, None, ffi.NULL)),
        "run strict": policy("strict", lambda: s.run(None, feeds)),
        "run off": policy("off", lambda: s.run(None, feeds)),
        "binding raw": policy("strict", binding_raw),
        "binding strict": policy("strict", lambda: s.run_with_binding(b)),
        "guard shared": policy("strict", guard_shared),
        "guard exclusive": policy("strict", guard_exclusive),
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
    times = box["times"]
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
          f"shared + ortc's Python wrapper)")
    print(f"bare guard enter+leave:          shared {med['guard shared']:.3f} us, exclusive "
          f"{med['guard exclusive']:.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
