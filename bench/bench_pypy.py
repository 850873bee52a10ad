"""ortc's per-call cost under PyPy next to CPython, on the tiny model (``c = a + b``, one float).

    PYTHONPATH=. python bench/bench_pypy.py [--pypy PATH] [--rounds 15]

Run with CPython: it builds the model (onnx is a CPython package), then times ``run()`` (a
fresh input array from a pool each call) and the bound path in a CPython child and a PyPy child,
one after the other, each after a JIT warm-up. PyPy gets its numpy from the venv that
tests/test_pypy.py makes (or ``--pypy`` names an interpreter that has numpy), and the library
CPython's ortc loaded (ORTC_LIBRARY). onnxruntime's own binding does not run on PyPy, so there
is no onnxruntime column. The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def measure(model_path: str, rounds: int) -> str:
    """Time this interpreter (the child's side)."""
    import numpy as np

    import ortc

    with open(model_path, "rb") as f:
        sess = ortc.Session(f.read(), intra_op_num_threads=1)
    rng = np.random.default_rng(0)
    pool = [{"a": rng.random(1, dtype=np.float32), "b": rng.random(1, dtype=np.float32)}
            for _ in range(64)]
    binding = sess.io_binding()
    x, y = np.ones(1, np.float32), np.empty(1, np.float32)
    binding.bind_input("a", x)
    binding.bind_input("b", x)
    binding.bind_output("c", y)

    def t_run(n: int) -> float:
        t0 = time.perf_counter_ns()
        for i in range(n):
            sess.run(None, pool[i & 63])
        return (time.perf_counter_ns() - t0) / n / 1000

    def t_bound(n: int) -> float:
        t0 = time.perf_counter_ns()
        for i in range(n):
            sess.run_with_binding(binding)
        return (time.perf_counter_ns() - t0) / n / 1000

    for _ in range(5):  # JIT warm-up
        t_run(20000)
        t_bound(20000)
    runs, bounds = [], []
    for _ in range(rounds):
        runs.append(t_run(20000))
        bounds.append(t_bound(20000))
    return (f"{sys.implementation.name:8} run() {statistics.median(runs):5.2f} µs   "
            f"bound {statistics.median(bounds):5.2f} µs   (medians of {rounds} rounds x 20000)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pypy", help="a PyPy interpreter with numpy (default: the test's venv)")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--measure", help=argparse.SUPPRESS)  # child mode: the model's path
    args = p.parse_args(argv)
    if args.measure:
        print(measure(args.measure, args.rounds))
        return 0

    sys.path.insert(0, ROOT)
    import ortc
    from bench.models import add_model
    from ortc.conformance import wheels

    pypy = args.pypy or os.path.join(wheels.cache_dir(), "pypy-venv", "bin", "python")
    if not os.path.exists(pypy):
        print(f"no PyPy at {pypy}: run tests/test_pypy.py once (it makes that venv), or pass "
              f"--pypy", file=sys.stderr)
        return 2
    env = dict(os.environ, ORTC_LIBRARY=ortc.version().library_path,
               PYTHONPATH=ROOT + (os.pathsep + os.environ["PYTHONPATH"]
                                  if os.environ.get("PYTHONPATH") else ""))
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "tiny.onnx")
        with open(model, "wb") as f:
            f.write(add_model().model)
        print(f"Add [1], intra-op threads 1, ONNX Runtime {ortc.version().library_version}")
        for exe in (sys.executable, pypy):
            out = subprocess.run([exe, os.path.abspath(__file__), "--measure", model,
                                  "--rounds", str(args.rounds)], env=env, capture_output=True,
                                 text=True, timeout=900)
            if out.returncode:
                print(out.stderr[-2000:], file=sys.stderr)
                return 1
            print("  " + out.stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
