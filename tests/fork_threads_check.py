"""Forked children while a thread of the parent makes Values: run by tests/test_process_state.py
under this CPython and CPython 3.9 (numpy only, no onnx: the model comes as a file).

    python tests/fork_threads_check.py MODEL CHILDREN SECONDS_PER_CHILD

MODEL adds its float32 inputs ``a`` and ``b`` of shape [4]. A thread of the parent makes and
drops Values (``ortc.Value.from_numpy``) without pause, while the main thread forks CHILDREN
children one after another; each makes one Value, runs a session the parent made before the
fork (rebuilt in the child), and exits the normal way (interpreter exit: ortc's exit steps run
too). A child still running after SECONDS_PER_CHILD prints every thread's stack (faulthandler)
and exits 1; the parent kills one that is still there 10 s later. Prints one JSON object: the
interpreter, the exit code of each child (a kill is "killed"), how many Values the thread made.
"""

from __future__ import annotations

import faulthandler
import json
import os
import platform
import signal
import sys
import threading
import time
from typing import Any

import numpy as np

import ortc


def _child(session: ortc.Session, a: np.ndarray[Any, Any], limit: float) -> int:
    faulthandler.dump_traceback_later(limit, exit=True)
    value = ortc.Value.from_numpy(a)
    if value.numpy().tolist() != a.tolist():
        return 3
    out = session.run(None, {"a": a, "b": a})[0]
    return 0 if out.tolist() == (a + a).tolist() else 4


def _wait(pid: int, limit: float) -> int | str:
    deadline = time.monotonic() + limit + 10.0
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "killed"
        time.sleep(0.002)


def main(model: str, children: int, limit: float) -> dict[str, Any]:
    session = ortc.Session(model, intra_op_num_threads=1)
    a = np.arange(4, dtype=np.float32)
    session.run(None, {"a": a, "b": a})
    stop = threading.Event()
    made = [0]

    def make_values() -> None:
        x = np.ones(16, np.float32)
        while not stop.is_set():
            ortc.Value.from_numpy(x)  # made, then released as it goes
            made[0] += 1

    # The thread gives up the GIL in every C call into ORT, where it holds none of ortc's locks:
    # with the default switch interval (5 ms) the main thread nearly always forks there. A short
    # one makes it fork at any point of the thread's loop, as a busier process would.
    sys.setswitchinterval(1e-5)
    maker = threading.Thread(target=make_values, daemon=True)
    maker.start()
    while made[0] < 100:
        time.sleep(0.001)
    codes: list[int | str] = []
    for _ in range(children):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                code = _child(session, a, limit)
            except BaseException:  # noqa: BLE001 - reported by the exit code and stderr
                import traceback

                traceback.print_exc()
                code = 5
            sys.exit(code)  # the normal exit: ortc's exit steps run in the child too
        codes.append(_wait(pid, limit))
    stop.set()
    maker.join()
    return {"python": f"{platform.python_implementation()} {platform.python_version()}",
            "codes": codes, "values_made": made[0]}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))))
