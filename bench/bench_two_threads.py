"""One session, one thread against two: calls per second on the tiny model (``c = a + b``, one
float), for onnxruntime, ortc and bare cffi loops, so a drop with two threads can be told apart
from what the binding adds.

    PYTHONPATH=. python bench/bench_two_threads.py [--calls 30000] [--repeats 2]

Rows (each timed with one worker thread, then two, on one session; the ratio is two threads'
total calls per second over one thread's):

* ``cffi Run``: ORT's Run through cffi with prepared arguments, the output released: the floor;
* ``cffi Run + copy``: the same plus the output's type and shape, a copy into a new array
  (what ortc's run does after Run: three more C calls, each releasing the GIL);
* ``cffi Run + copy + Python``: the same plus about 10 µs of pure-Python work holding the GIL
  (the size of ortc's own work around a tiny run);
* ``ortc run()`` and ``onnxruntime run()``: the bindings.

Runs happen on worker threads (no Ctrl-C arming). The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import ortc  # noqa: E402
from bench.models import add_model  # noqa: E402
from ortc._ffi import ffi  # noqa: E402
from ortc._numpy_bridge import tensor_copy_or_shape  # noqa: E402
from ortc._run import RunContext  # noqa: E402


def calls_per_second(fn: Callable[[], Any], threads: int, calls: int) -> float:
    def work() -> None:
        for _ in range(calls):
            fn()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return threads * calls / (time.perf_counter() - start)


def variants() -> list[tuple[str, Callable[[], Any]]]:
    import onnxruntime as ort

    model = add_model().model
    sess = ortc.Session(model, intra_op_num_threads=1)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    theirs = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    a = np.ones(1, np.float32)
    feeds = {"a": a, "b": a}
    engine = sess._engine
    api = engine.api
    wanted = engine.output_list(None)
    context = RunContext(api.ReleaseValue, None, "bench")  # holds the inputs' values
    in_names, values = engine.prepare_inputs(feeds, context)
    ptr = sess._ptr

    def cffi_run() -> None:
        out = ffi.new("OrtValue*[]", 1)
        status = api.Run(ptr, ffi.NULL, in_names.ptr, values, 2, wanted.names.ptr, 1, out)
        assert not status
        api.ReleaseValue(out[0])

    def cffi_run_copy() -> None:
        out = ffi.new("OrtValue*[]", 1)
        status = api.Run(ptr, ffi.NULL, in_names.ptr, values, 2, wanted.names.ptr, 1, out)
        assert not status
        tensor_copy_or_shape(api, out[0], 1 << 14)
        api.ReleaseValue(out[0])

    def cffi_run_copy_python() -> None:
        cffi_run_copy()
        total = 0
        for i in range(120):
            total += i

    return [("cffi Run", cffi_run), ("cffi Run + copy", cffi_run_copy),
            ("cffi Run + copy + Python", cffi_run_copy_python),
            ("ortc run()", lambda: sess.run(None, feeds)),
            ("onnxruntime run()", lambda: theirs.run(None, feeds))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30000, help="calls per thread")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    rows = variants()
    print(f"{'variant':28s} {'1 thread/s':>11s} {'2 threads/s':>12s} {'ratio':>6s}")
    for _ in range(args.repeats):
        for name, fn in rows:
            one = calls_per_second(fn, 1, args.calls)
            two = calls_per_second(fn, 2, args.calls)
            print(f"{name:28s} {one:11.0f} {two:12.0f} {two / one:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
