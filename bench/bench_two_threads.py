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
* ``cffi Run + copy + Python, spread``: the same work with the Python between the C calls
  (where ortc's run makes them), not after them;
* ``ortc run()`` and ``onnxruntime run()``: the bindings;
* ``ortc run(), checks off``: with ``ortc.set_thread_checks("off")`` (no guard decisions);
* ``ortc run(), a session per thread``: each thread its own session (nothing shared but the
  process).

``--gc-off`` disables the garbage collector, ``--switch-interval S`` sets
``sys.setswitchinterval`` for the whole script. Runs happen on worker threads (no Ctrl-C
arming). The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
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
from ortc._numpy_bridge import _Scratch, tensor_copy_or_shape  # noqa: E402
from ortc._run import COPY_OUT_MAX, RunContext  # noqa: E402


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
        tensor_copy_or_shape(api, out[0], COPY_OUT_MAX)
        api.ReleaseValue(out[0])

    def python(n: int) -> None:
        total = 0
        for i in range(n):
            total += i

    def cffi_run_copy_python() -> None:
        cffi_run_copy()
        python(120)

    scratch = _Scratch()

    def cffi_run_copy_python_spread() -> None:
        python(40)
        out = ffi.new("OrtValue*[]", 1)
        status = api.Run(ptr, ffi.NULL, in_names.ptr, values, 2, wanted.names.ptr, 1, out)
        assert not status
        python(30)
        api.GetTensorElementTypeAndShapeDataReference(out[0], scratch.elem, scratch.dims_arg,
                                                      scratch.count)
        python(20)
        api.GetTensorMutableData(out[0], scratch.data)
        python(20)
        api.ReleaseValue(out[0])
        python(10)

    local = threading.local()

    def own_session() -> None:
        mine = getattr(local, "session", None)
        if mine is None:
            mine = local.session = ortc.Session(model, intra_op_num_threads=1)
        mine.run(None, feeds)

    return [("cffi Run", cffi_run), ("cffi Run + copy", cffi_run_copy),
            ("cffi Run + copy + Python", cffi_run_copy_python),
            ("cffi Run + copy + Python, spread", cffi_run_copy_python_spread),
            ("ortc run()", lambda: sess.run(None, feeds)),
            ("ortc run(), checks off", lambda: sess.run(None, feeds)),
            ("ortc run(), a session per thread", own_session),
            ("onnxruntime run()", lambda: theirs.run(None, feeds))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30000, help="calls per thread")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--gc-off", action="store_true", help="disable the garbage collector")
    parser.add_argument("--switch-interval", type=float, default=None, metavar="S",
                        help="sys.setswitchinterval(S) for the whole run")
    args = parser.parse_args(argv)
    if args.gc_off:
        gc.disable()
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    rows = variants()
    print(f"{'variant':34s} {'1 thread/s':>11s} {'2 threads/s':>12s} {'ratio':>6s}")
    for _ in range(args.repeats):
        for name, fn in rows:
            before = ortc.set_thread_checks("off") if name.endswith("checks off") else None
            try:
                one = calls_per_second(fn, 1, args.calls)
                two = calls_per_second(fn, 2, args.calls)
            finally:
                if before is not None:
                    ortc.set_thread_checks(before)
            print(f"{name:34s} {one:11.0f} {two:12.0f} {two / one:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
