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

``--split`` adds, in as many more fresh interpreters per binding, where each binding's start
goes, as medians: for ortc the import (Python), finding and opening the library (its first
``ortc._loader.api()``), ORT's ``CreateEnvWithCustomLogger`` and ``CreateSession`` (the slots
timed through ``Api.instrument``), the rest of the first session (ortc's Python, cffi's
first use of each slot's function type, and the other C calls: the model's inputs and outputs,
the memory info) and the first run; for onnxruntime its Python import (its import less its extension module's,
as ``-X importtime`` reports them), the extension module (ORT's library and env set-up, which
onnxruntime does at import), the first session and the first run. These children are not the
ones timed above: the timing of the slots costs microseconds, the parts are in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

#: an ortc child of ``--split``: its start, part by part (ms)
_ORTC_SPLIT = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import ortc
t1 = time.perf_counter()
from ortc import _loader
api = _loader.api()
t2 = time.perf_counter()
ort_ms = {}
def timed(name, fn):
    def call(*args):
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            ort_ms[name] = (time.perf_counter() - start) * 1e3
    return call
api.instrument(timed, ["CreateEnvWithCustomLogger", "CreateSession"])
s = ortc.Session(sys.argv[1])
t3 = time.perf_counter()
s.run(None, {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})
t4 = time.perf_counter()
env, create = ort_ms["CreateEnvWithCustomLogger"], ort_ms["CreateSession"]
print(json.dumps({"import (Python)": (t1 - t0) * 1e3, "find and open the library": (t2 - t1) * 1e3,
                  "CreateEnv (ORT)": env, "CreateSession (ORT)": create,
                  "rest of the first session": (t3 - t2) * 1e3 - env - create,
                  "first run": (t4 - t3) * 1e3, "sum": (t4 - t0) * 1e3}))
"""

#: an onnxruntime child of ``--split``, run with ``-X importtime`` (read by _ort_split)
_ORT_SPLIT = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import onnxruntime
t1 = time.perf_counter()
s = onnxruntime.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
t2 = time.perf_counter()
s.run(None, {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})
t3 = time.perf_counter()
print(json.dumps({"import": (t1 - t0) * 1e3, "first session": (t2 - t1) * 1e3,
                  "first run": (t3 - t2) * 1e3, "sum": (t3 - t0) * 1e3}))
"""

_EXTENSION = "onnxruntime.capi.onnxruntime_pybind11_state"


def _child(code: str, path: str, env: dict[str, str], flags: tuple[str, ...] = ()
           ) -> tuple[dict[str, float], str]:
    proc = subprocess.run([sys.executable, *flags, "-c", code, path], env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"start-up child failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1]), proc.stderr


def _ort_split(path: str, env: dict[str, str]) -> dict[str, float]:
    parts, importtime = _child(_ORT_SPLIT, path, env, ("-X", "importtime"))
    # "import time: self [us] | cumulative | name": the extension's cumulative time is ORT's
    # library load and env set-up; the rest of onnxruntime's import is its Python
    ext_us = next(int(line.split("|")[1]) for line in importtime.splitlines()
                  if line.rstrip().endswith(" " + _EXTENSION))
    ext = ext_us / 1e3
    return {"import (Python)": parts["import"] - ext, "extension module (ORT and its env)": ext,
            "first session": parts["first session"], "first run": parts["first run"],
            "sum": parts["sum"]}


def split(repeats: int, path: str, env: dict[str, str], mods: list[str]) -> dict[str, Any]:
    """Each binding's start, part by part: medians over ``repeats`` fresh interpreters each,
    the two bindings interleaved after a warm-up start each."""
    runs: dict[str, list[dict[str, float]]] = {m: [] for m in mods}
    take = {"ortc": lambda: _child(_ORTC_SPLIT, path, env)[0],
            "onnxruntime": lambda: _ort_split(path, env)}
    for mod in mods:
        take[mod]()
    for r in range(repeats):
        for mod in (mods if r % 2 == 0 else mods[::-1]):
            runs[mod].append(take[mod]())
    return {m: {k: statistics.median(x[k] for x in rows) for k in rows[0]}
            for m, rows in runs.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_startup.py")
    ap.add_argument("--repeats", type=int, default=7, help="fresh interpreters per binding")
    ap.add_argument("--no-onnxruntime", action="store_true", help="ortc only")
    ap.add_argument("--split", action="store_true",
                    help="also time each binding's start part by part (more interpreters)")
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
        env = cold_start_env(tmp, root=None)
        cold = bench_cold_start(args.repeats, path, None, mods, env, True,
                                lambda msg: print(msg, file=sys.stderr))
        parts = split(args.repeats, path, env, mods) if args.split else {}
    names = {"import_ms": "import", "session_ms": "session", "first_run_ms": "run",
             "total_ms": "sum", "cpu_ms": "cpu", "numpy_ms": "numpy", "process_ms": "process"}
    for mod in mods:
        v = cold[mod]
        print(f"{mod}: median of {cold['runs']} fresh interpreters, ms: " +
              ", ".join(f"{names[k]} {v[k]:.1f}" for k in COLD_KEYS) +
              f"; modules loaded: {v['modules']}")
    if "ratio_total" in cold:
        print(f"ortc / onnxruntime, sum (paired): {cold['ratio_total']:.2f}")
    for mod, figures in parts.items():
        print(f"{mod}, part by part: median of {args.repeats} more fresh interpreters, ms: " +
              ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
