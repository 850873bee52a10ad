"""Where a new session's time goes, per session made, run once and dropped (the pattern of code
that makes a session per call), on the tiny model (``c = a + b``, one float):

    PYTHONPATH=. python bench/bench_first_run.py [--sessions 300]

* ``make / first run / drop``: for ortc, ortc.compat and onnxruntime, the medians of each
  step, the three bindings taking turns session by session (a machine that changes speed
  changes all three alike), and each binding's whole (make + first run + drop) over
  onnxruntime's, paired per turn (against the mean of onnxruntime's sessions before and after
  it);
* ortc's first run taken apart (each step forced on its own, in the order a first run meets
  it): the inputs and outputs read from ORT (``inputs``), the run engine, the provider rule
  that says whether runs are exclusive, the output list and the input names (C arrays), then
  the first run with all of those in place, and a second run.

Medians in µs; printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import ortc  # noqa: E402
from bench.models import add_model  # noqa: E402


def _median_us(samples: list[float]) -> float:
    return sorted(samples)[len(samples) // 2] * 1e6


def steps(makers: dict[str, Callable[[], Any]], feeds: dict[str, Any], sessions: int
          ) -> dict[str, dict[str, float]]:
    """Each maker's session made, run once and dropped, the makers taking turns; per maker the
    medians (µs) of each step and ``ratio``: its whole over onnxruntime's (the maker named
    ``onnxruntime``), paired per turn."""
    pc = time.perf_counter
    times: dict[str, dict[str, list[float]]] = {
        name: {"make": [], "first run": [], "drop": [], "whole": []} for name in makers}

    def one(name: str) -> float:
        t0 = pc()
        sess = makers[name]()
        t1 = pc()
        sess.run(None, feeds)
        t2 = pc()
        del sess
        t3 = pc()
        steps = times[name]
        steps["make"].append(t1 - t0)
        steps["first run"].append(t2 - t1)
        steps["drop"].append(t3 - t2)
        steps["whole"].append(t3 - t0)
        return t3 - t0

    others = [n for n in makers if n != "onnxruntime"]
    ratios: dict[str, list[float]] = {n: [] for n in others}
    for name in makers:  # a warm-up turn
        one(name)
    for turn in range(sessions):
        before = one("onnxruntime")
        wholes = {n: one(n) for n in (others if turn % 2 else others[::-1])}
        after = one("onnxruntime")
        for n, whole in wholes.items():
            ratios[n].append(whole / ((before + after) / 2))
    result = {name: {k: _median_us(v) for k, v in steps.items()}
              for name, steps in times.items()}
    for name, r in ratios.items():
        result[name]["ratio"] = sorted(r)[len(r) // 2]
    result["onnxruntime"]["ratio"] = 1.0
    return result


def first_run_parts(model: bytes, feeds: dict[str, Any], sessions: int) -> dict[str, float]:
    pc = time.perf_counter
    times: dict[str, list[float]] = {}

    def timed(name: str, fn: Callable[[], Any]) -> None:
        t0 = pc()
        fn()
        times.setdefault(name, []).append(pc() - t0)

    names = tuple(feeds)
    for _ in range(sessions):
        sess = ortc.Session(model, intra_op_num_threads=1)
        timed("inputs and outputs read", lambda: sess.inputs)
        timed("run engine", lambda: sess._engine)
        timed("provider rule", lambda: sess._run_exclusive)
        engine = sess._engine
        timed("output list", lambda: engine.output_list(None))
        timed("input names", lambda: engine.input_names(names))
        timed("first run (the above in place)", lambda: sess.run(None, feeds))
        timed("second run", lambda: sess.run(None, feeds))
        del sess
    return {k: _median_us(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    args = parser.parse_args(argv)
    model = add_model().model
    a = np.ones(1, np.float32)
    feeds = {"a": a, "b": a}
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    import ortc.compat as compat

    compat_so = compat.SessionOptions()
    compat_so.intra_op_num_threads = 1
    rows = steps({
        "ortc": lambda: ortc.Session(model, intra_op_num_threads=1),
        "compat": lambda: compat.InferenceSession(model, compat_so,
                                                  providers=["CPUExecutionProvider"]),
        "onnxruntime": lambda: ort.InferenceSession(
            model, so, providers=["CPUExecutionProvider"])}, feeds, args.sessions)
    print(f"{'binding':12s} {'make':>8s} {'first run':>10s} {'drop':>8s} {'whole':>8s} "
          f"{'ratio':>6s}   (µs, medians; ratio: whole over onnxruntime's, paired per turn)")
    for name, r in rows.items():
        print(f"{name:12s} {r['make']:8.1f} {r['first run']:10.1f} {r['drop']:8.1f} "
              f"{r['whole']:8.1f} {r['ratio']:6.3f}")
    print("ortc's first run, step by step (µs, medians):")
    for name, us in first_run_parts(model, feeds, args.sessions).items():
        print(f"  {name:32s} {us:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
