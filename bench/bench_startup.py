"""Cold start on its own: fresh interpreters' ``import``, first Session and first run, for ortc
and onnxruntime. The measurement is bench/runner.py's ``bench_cold_start``, the same as the
cold-start rows of ``python -m ortc bench`` (one place for it).

    PYTHONPATH=. python bench/bench_startup.py [--repeats 7] [--no-onnxruntime]
    cd /tmp && PYTHONPATH=/path/to/tree python /path/to/bench/bench_startup.py   # another tree

(the children import the ortc their working folder or PYTHONPATH gives, in that order)

Each repeat starts a new interpreter per binding, the two interleaved, after one warm-up start
each (the OS file cache, the bytecode cache). With numpy already imported, a child times
``import``, the first session on the tiny Add model (default options) and its first ``run()``;
``sum`` is the three, ``cpu`` the same span in CPU time (less sensitive to a busy machine),
``process`` the child's whole wall time, interpreter start included. Both children run with
ORT's telemetry off (``ORT_DISABLE_TELEMETRY=1``, ortc's default): the same ORT work in both;
and with one OpenBLAS thread (``OPENBLAS_NUM_THREADS=1``: numpy's BLAS threads spin through the
measured span otherwise; bench/runner.py, ``cold_start_env``). Medians are printed, never
asserted (tests/test_loader.py checks what the default path imports).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_startup.py")
    ap.add_argument("--repeats", type=int, default=7, help="fresh interpreters per binding")
    ap.add_argument("--no-onnxruntime", action="store_true", help="ortc only")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats needs at least 1")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench.models import add_model
    from bench.runner import COLD_KEYS, bench_cold_start, cold_start_env

    mods = ["ortc"]
    if not args.no_onnxruntime:
        try:
            import onnxruntime  # type: ignore[import-untyped]  # noqa: F401
            mods.append("onnxruntime")
        except ImportError:
            print("onnxruntime is not installed: ortc only", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "add.onnx")
        with open(path, "wb") as f:
            f.write(add_model().model)
        cold = bench_cold_start(args.repeats, path, None, mods, cold_start_env(tmp, root=None),
                                True, lambda msg: print(msg, file=sys.stderr))
    names = {"import_ms": "import", "session_ms": "session", "first_run_ms": "run",
             "total_ms": "sum", "cpu_ms": "cpu", "numpy_ms": "numpy", "process_ms": "process"}
    for mod in mods:
        v = cold[mod]
        print(f"{mod}: median of {cold['runs']} fresh interpreters, ms: " +
              ", ".join(f"{names[k]} {v[k]:.1f}" for k in COLD_KEYS) +
              f"; modules loaded: {v['modules']}")
    if "ratio_total" in cold:
        print(f"ortc / onnxruntime, sum (paired): {cold['ratio_total']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
