"""Cold start: a fresh interpreter's `import numpy, ortc`, its first Session and first run.

    PYTHONPATH=. python bench/bench_startup.py [--repeats 15]
    cd /tmp && PYTHONPATH=/path/to/tree python /path/to/bench/bench_startup.py   # another tree

(the children import the ortc their working folder or PYTHONPATH gives, in that order)

Each repeat starts a new interpreter (so nothing is cached in-process; the OS file cache is
warm after the first) that times, with ``time.perf_counter``: ``import numpy``, then
``import ortc``, then ``ortc.Session(path)`` (which loads the library), then the first
``run()``; ``after_numpy`` is the sum of the last three, ``cpu_after_numpy`` the same span in
CPU time (less sensitive to a busy machine). It also reports the whole process's wall time,
interpreter start included. The
medians are printed, never asserted (tests/test_loader.py checks what the default path imports).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import time, json, sys
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
c1 = time.process_time()
import ortc
t2 = time.perf_counter()
s = ortc.Session(sys.argv[1])
t3 = time.perf_counter()
s.run(None, {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})
t4 = time.perf_counter()
c4 = time.process_time()
print(json.dumps({"cpu_after_numpy": c4 - c1, "numpy": t1 - t0, "ortc": t2 - t1, "session": t3 - t2, "run": t4 - t3,
                  "after_numpy": t4 - t1, "modules": len(sys.modules)}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_startup.py")
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench.models import add_model

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "add.onnx")
        with open(path, "wb") as f:
            f.write(add_model().model)
        rows = []
        for _ in range(args.repeats + 1):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", CHILD, path], check=True,
                                 capture_output=True, text=True).stdout
            wall = time.perf_counter() - t0
            rows.append(dict(json.loads(out.splitlines()[-1]), process=wall))
    rows = rows[1:]  # the first start warms the OS file cache
    keys = ("numpy", "ortc", "session", "run", "after_numpy", "cpu_after_numpy", "process")
    med = {k: statistics.median(r[k] for r in rows) * 1e3 for k in keys}
    print(f"median of {len(rows)} fresh interpreters, ms: " +
          ", ".join(f"{k} {med[k]:.1f}" for k in keys) +
          f"; modules loaded: {rows[0]['modules']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
