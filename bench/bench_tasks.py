"""A session shipped with each task, in one process: what a pool worker does per task.

    PYTHONPATH=. python bench/bench_tasks.py [--width 16] [--rounds 30]

A task is simulated without the pool (its scheduling is the same for every binding): ortc's
is ``pickle.loads`` of a pickled Session and one ``run()``; onnxruntime's sessions do not
pickle, so its users ship the model's bytes and make an InferenceSession in each task, and so
does ortc.compat's row. Two ways a worker treats a finished task's session:

* ``dropped``: the task's arguments and results go when it ends (ProcessPoolExecutor's and
  multiprocessing.Pool's workers), so the next task finds nothing of the last one's;
* ``kept``: the worker still holds the previous task's session when the next one starts.

The model is tests/models.py's three-layer MLP (``--width`` wide, a batch of four rows),
intra-op threads 1; the three bindings take turns task by task. Printed: each row's median
µs per task and its ratio to onnxruntime's. The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, os.path.join(ROOT, "tests")):
    if path not in sys.path:
        sys.path.insert(0, path)

import models  # noqa: E402  (tests/models.py)
import ortc  # noqa: E402
import ortc.compat as compat  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    model = models.mlp_model(3, args.width, "batch")
    x = np.random.default_rng(0).standard_normal((4, args.width)).astype(np.float32)
    with ortc.Session(model, intra_op_num_threads=1) as s:
        session_blob = pickle.dumps(s, protocol=5)
    bytes_blob = pickle.dumps(model, protocol=5)

    def bytes_task(binding: Any) -> Callable[[], tuple[Any, Any]]:
        """A task of onnxruntime's idiom in ``binding`` (onnxruntime or ortc.compat): the
        model's bytes unpickled, a new session, one run."""
        def task() -> tuple[Any, Any]:
            so = binding.SessionOptions()
            so.intra_op_num_threads = 1
            s = binding.InferenceSession(pickle.loads(bytes_blob), so,
                                         providers=["CPUExecutionProvider"])
            return s, s.run(None, {"x": x})[0]
        return task

    ort_task, compat_task = bytes_task(ort), bytes_task(compat)

    def ortc_task() -> tuple[Any, Any]:
        s = pickle.loads(session_blob)
        return s, s.run(None, {"x": x})[0]

    tasks: dict[str, Callable[[], tuple[Any, Any]]] = {
        "onnxruntime, bytes + new session": ort_task,
        "ortc.compat, bytes + new session": compat_task,
        "ortc, the Session shipped": ortc_task}
    want = ort_task()[1]
    for name, task in tasks.items():
        if not np.array_equal(task()[1], want):
            raise SystemExit(f"{name}: the outputs differ from onnxruntime's")
    print(f"{'worker':8s} {'task':34s} {'µs':>9s} {'/ onnxruntime':>14s}   (medians of "
          f"{args.rounds} tasks each, MLP width {args.width})")
    for mode in ("dropped", "kept"):
        times: dict[str, list[float]] = {name: [] for name in tasks}
        held: dict[str, Any] = {}
        for r in range(args.rounds):
            for name in (list(tasks) if r % 2 else list(tasks)[::-1]):
                t0 = time.perf_counter()
                session, out = tasks[name]()
                if mode == "kept":
                    held[name] = session  # until this binding's next task
                del session, out
                times[name].append(time.perf_counter() - t0)
        held.clear()
        gc.collect()
        base = statistics.median(times["onnxruntime, bytes + new session"])
        for name in tasks:
            m = statistics.median(times[name])
            print(f"{mode:8s} {name:34s} {m * 1e6:9.0f} {m / base:13.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
