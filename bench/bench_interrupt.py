"""How fast a run in flight stops: Ctrl-C, a deadline, and RunOptions.terminate() from a thread.

    PYTHONPATH=. python bench/bench_interrupt.py [--repeats 7]

Each case runs a long chain of 256x256 MatMuls (seconds of work, intra-op threads 1) and stops
it part way:

* ``Ctrl-C``: a child process runs on its main thread; the parent sends SIGINT and the child
  records when KeyboardInterrupt reached Python (both read the same wall clock);
* ``deadline``: ``run(..., timeout=0.3)``; the figure is how long after the deadline
  RunTimeout was raised;
* ``terminate``: another thread calls ``RunOptions.terminate()``; the figure is from that call
  to the run's return with its error.

ORT checks the terminate flag between kernels, so the latency is about one kernel (a 256x256
MatMul here, well under a millisecond) plus ortc's watcher; the project's bound is 200 ms. The
numbers are printed, never asserted (tests/test_interrupts.py checks the behaviour).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, os.path.join(ROOT, "tests")):
    if path not in sys.path:
        sys.path.insert(0, path)

import numpy as np  # noqa: E402

import ortc  # noqa: E402

CHAIN = 4000  # MatMuls: far longer than any stop below waits

CHILD = r"""
import json, sys, time, numpy as np, ortc, models
s = ortc.Session(models.matmul_chain_model(%d, 256), intra_op_num_threads=1)
x = np.ones((256, 256), np.float32)
print("ready", flush=True)
try:
    s.run(None, {"x": x})
    outcome = "finished"
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
print(json.dumps({"outcome": outcome, "caught_at": time.time()}), flush=True)
""" % CHAIN


def ctrl_c_latency() -> float:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests"))
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise RuntimeError(proc.communicate()[1][-2000:])
    time.sleep(0.3)  # inside the run
    sent = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    result = json.loads(out.strip().splitlines()[-1])
    if result["outcome"] != "KeyboardInterrupt":
        raise RuntimeError(f"the run was not interrupted: {result} {err[-500:]}")
    return result["caught_at"] - sent


def deadline_overshoot(sess: ortc.Session, x: np.ndarray, timeout: float = 0.3) -> float:
    start = time.monotonic()
    try:
        sess.run(None, {"x": x}, timeout=timeout)
    except ortc.RunTimeout:
        return time.monotonic() - start - timeout
    raise RuntimeError("the run finished before its deadline")


def terminate_latency(sess: ortc.Session, x: np.ndarray) -> float:
    ro = ortc.RunOptions()
    box: dict[str, float] = {}

    def stop() -> None:
        time.sleep(0.3)
        box["sent"] = time.monotonic()
        ro.terminate()

    t = threading.Thread(target=stop)
    t.start()
    try:
        sess.run(None, {"x": x}, ro)
    except ortc.OrtError:
        pass
    else:
        raise RuntimeError("the run finished before terminate()")
    done = time.monotonic()
    t.join()
    ro.close()
    return done - box["sent"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args(argv)
    import models

    sess = ortc.Session(models.matmul_chain_model(CHAIN, 256), intra_op_num_threads=1)
    x = np.ones((256, 256), np.float32)
    cases = {
        "Ctrl-C (SIGINT -> KeyboardInterrupt)": ctrl_c_latency,
        "deadline (timeout -> RunTimeout)": lambda: deadline_overshoot(sess, x),
        "terminate() from a thread": lambda: terminate_latency(sess, x),
    }
    info = ortc.version()
    print(f"ortc {ortc.__version__}, ONNX Runtime {info.library_version}; "
          f"{args.repeats} repeats, ms from the stop to Python seeing it")
    for name, fn in cases.items():
        ms = [fn() * 1000 for _ in range(args.repeats)]
        print(f"  {name:<40} median {statistics.median(ms):6.2f}  max {max(ms):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
