"""Where a ``run()`` spends its time: inside ORT's Run, and around it (the binding's part).

    PYTHONPATH=. python bench/bench_overhead.py [--rounds 15] [--calls 300]

For each case, ortc's ``Session.run`` is timed per call over a loop (fresh input arrays cycled
from a pool of four, as users and bench/runner.py feed them) while the ``Run`` slot is wrapped
(``Api.instrument``) to time the C call itself; "around" is the difference: everything the
binding does in Python per call plus the GIL hand-offs. Each round also times the same loop
unwrapped ("plain"): the wrapper's own cost is "total" minus "plain". Means, not medians: the
total is a loop mean, so the inside is one too. Medians over rounds. Cases:

* ``add staged``: the tiny model through a stage (the default: one C call per run);
* ``add general``: the same model with stages off (values, preallocated output, Run, releases);
* ``matmul 16x64x64 general``: the general path on a small MatMul;
* ``matmul 64x256x256 lane``, ``mlp 3x512 b32 lane``: the bench's rows as ortc runs them (a
  lane: tensors too large to stage, inputs and outputs in place, one C call per run);
* ``... general``: the same two with stages and lanes off (a larger kernel between runs leaves
  the binding's Python objects out of the CPU caches: "around" grows with the kernel).

A case that names a stage or a lane checks that one served its runs.

Intra-op threads 1, main thread. The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import ortc  # noqa: E402
from ortc._loader import api  # noqa: E402

from bench.models import BenchModel, add_model, matmul_model, mlp_model  # noqa: E402


def _cases() -> list[tuple[str, BenchModel, str | None]]:
    """(name, model, the class that must serve the runs: "Stage", "Lane", or None for the
    general path, with stages and lanes off)."""
    matmul, mlp = matmul_model(), mlp_model()
    return [("add staged", add_model(), "Stage"), ("add general", add_model(), None),
            ("matmul 16x64x64 general", matmul_model(16, 64, 64), None),
            ("matmul 64x256x256 lane", matmul, "Lane"),
            ("matmul 64x256x256 general", matmul, None),
            ("mlp 3x512 b32 lane", mlp, "Lane"), ("mlp 3x512 b32 general", mlp, None)]


def measure(model: BenchModel, served_by: str | None, rounds: int, calls: int
            ) -> tuple[float, float, float]:
    """(µs per call unwrapped, in all, inside Run): medians over rounds of loop means."""
    rng = np.random.default_rng(0)
    pool = [{k: rng.random(s, dtype=np.float32) for k, s in model.inputs.items()}
            for _ in range(4)]
    inside: list[float] = []
    clock = time.perf_counter

    def timed(_name: str, run: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            t0 = clock()
            status = run(*args)
            inside.append(clock() - t0)
            return status
        return call

    # Two sessions: the plain one runs while the slot is not wrapped, the timed one while it is
    # (the general path reads the slot at each call; a stage keeps the one it was made with,
    # so each session's stage is made, and stays, on its side).
    plain_sess = ortc.Session(model.model, intra_op_num_threads=1)
    timed_sess = ortc.Session(model.model, intra_op_num_threads=1)
    for sess in (plain_sess, timed_sess):
        sess._engine.stages.active = served_by is not None

    def loop(sess: ortc.Session) -> float:
        for i in range(calls // 10):  # warm: caches, learned shapes, stages
            sess.run(None, pool[i % 4])
        if served_by is not None:
            served = sess._engine.stages.by_thread[threading.get_ident()].get(None)
            if type(served).__name__ != served_by:
                raise RuntimeError(f"runs served by {served!r}, not a {served_by}")
        inside.clear()
        t0 = clock()
        for i in range(calls):
            sess.run(None, pool[i % 4])
        return (clock() - t0) / calls * 1e6

    plains, totals, insides = [], [], []
    try:
        for _ in range(rounds):
            plains.append(loop(plain_sess))
            if inside:
                raise RuntimeError("the plain session's runs went through the wrapper")
            undo = api().instrument(timed, ["Run"])
            try:
                totals.append(loop(timed_sess))
            finally:
                undo()
            insides.append(statistics.fmean(inside) * 1e6)
    finally:
        plain_sess.close()
        timed_sess.close()
    return statistics.median(plains), statistics.median(totals), statistics.median(insides)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_overhead.py")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.calls < 10:
        ap.error("--rounds needs at least 1 and --calls at least 10")
    print(f"{'case':<26} {'plain':>9} {'total':>9} {'inside Run':>11} {'around':>8}"
          "   (µs per call)")
    for name, model, served_by in _cases():
        plain, total, inside = measure(model, served_by, args.rounds, args.calls)
        print(f"{name:<26} {plain:9.2f} {total:9.2f} {inside:11.2f} {total - inside:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
