"""What a run costs under each SIGINT disposition a process may have: Python's default handler
(ortc installs its Ctrl-C bridge, and a main-thread run passes run options Ctrl-C can stop),
SIGINT ignored (a background job of a shell script, ``nohup ... &``), and a handler of the
user's own (servers, CLIs). In the last two ortc leaves SIGINT alone, and each main-thread run
asks again whether it may bridge it (the user may restore Python's handler).

    PYTHONPATH=. python bench/bench_handlers.py [--rounds 5] [--calls 20000]

Each round starts one fresh interpreter per disposition (the order rotating from round to round:
the disposition is the process's, and the bridge, once installed, stays), which times the tiny
Add model's ``run()`` (one array for both inputs) and its bound run on the main thread, and
the check a main-thread ``run()`` makes of whether it may bridge Ctrl-C
(``Watcher.ctrl_c_ready``, asked by ``RunContext.arm``): the best of 7 repeats of ``--calls`` calls each. Medians over
rounds are printed, never asserted. Processes differ by a few per cent in their per-call times
(docs/PERFORMANCE.md, "How it measures"), more than the dispositions' own differences in
``run()``: compare the check, or many rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

DISPOSITIONS = ("default", "ignored", "handler")

_CHILD = r"""
import json, signal, sys, timeit
import numpy as np
disposition, calls = sys.argv[1], int(sys.argv[2])
if disposition == "ignored":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
elif disposition == "handler":
    signal.signal(signal.SIGINT, lambda signum, frame: None)
else:
    signal.signal(signal.SIGINT, signal.default_int_handler)
import ortc
from ortc._interrupt import watcher
from bench.models import tiny_bound_session
sess, feeds, binding = tiny_bound_session(intra_op_num_threads=1)
for _ in range(2000):
    sess.run(None, feeds)
    sess.run_with_binding(binding)
def best(fn):
    return min(timeit.repeat(fn, number=calls, repeat=7)) / calls * 1e6
print(json.dumps({"run": best(lambda: sess.run(None, feeds)),
                  "bound": best(lambda: sess.run_with_binding(binding)),
                  "check": best(watcher.ctrl_c_ready) * 1e3,
                  "bridged": watcher.sigint_ready}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_handlers.py")
    ap.add_argument("--rounds", type=int, default=5, help="fresh interpreters per disposition")
    ap.add_argument("--calls", type=int, default=20000, help="calls per timed repeat")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        ap.error("--rounds and --calls need at least 1")
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    got: dict[str, list[dict[str, float]]] = {d: [] for d in DISPOSITIONS}
    for r in range(args.rounds):
        k = r % len(DISPOSITIONS)
        for disposition in DISPOSITIONS[k:] + DISPOSITIONS[:k]:
            proc = subprocess.run([sys.executable, "-c", _CHILD, disposition, str(args.calls)],
                                  env=env, capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                print(proc.stderr[-3000:], file=sys.stderr)
                return 1
            got[disposition].append(json.loads(proc.stdout.splitlines()[-1]))
    for disposition, rows in got.items():
        bridged = {bool(x["bridged"]) for x in rows}
        print(f"{disposition}: Ctrl-C bridged {'yes' if bridged == {True} else 'no'}; median of "
              f"{len(rows)} interpreters, µs per call: run() "
              f"{statistics.median(x['run'] for x in rows):.2f}, bound "
              f"{statistics.median(x['bound'] for x in rows):.2f}; the check a main-thread run "
              f"makes, ns: {statistics.median(x['check'] for x in rows):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
