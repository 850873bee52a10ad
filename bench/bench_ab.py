"""Two checkouts of ortc against each other on the per-call rows, in warm processes taking turns.

    PYTHONPATH=. .venv/bin/python bench/bench_ab.py BASE_TREE NEW_TREE [--rounds 31]
        [--rows run,run3,values,bound] [--calls 2000] [--python PATH]

Each tree runs in a process of its own (its checkout first on sys.path), made once and warmed;
the parent then asks them in turn for a round of calls of each row, the order of the two
swapped every round, so both see the same minutes of the machine. A row's ratio is NEW over
BASE, round medians paired per round, median over the rounds, for the wall time and for the
process's CPU time. Giving the same tree twice is the A/A: how far its ratios land from 1 is
this run's noise band.

Rows (the tiny Add model of bench/models.py, [1]-shaped float32 inputs from a pool of 16):
``run`` Session.run with fresh arrays; ``run3`` the same on a model with three outputs (a + b,
a * b, a - b); ``values`` run_with_values; ``bound`` run_with_binding over one binding.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = ("run", "run3", "values", "bound")


def _child() -> None:
    """A tree's process: build the sessions, warm up, then time the rows the parent names."""
    import numpy as np
    from onnx import helper

    import ortc
    from bench import runner
    from bench.models import _build, add_model

    three = _build([helper.make_node("Add", ["a", "b"], ["c"]),
                    helper.make_node("Mul", ["a", "b"], ["d"]),
                    helper.make_node("Sub", ["a", "b"], ["e"])],
                   {"a": (1,), "b": (1,)}, {"c": (1,), "d": (1,), "e": (1,)})
    rng = np.random.default_rng(0)
    pool = [{k: rng.random(1, dtype=np.float32) for k in ("a", "b")} for _ in range(16)]
    one = ortc.Session(add_model().model, intra_op_num_threads=1)
    many = ortc.Session(three, intra_op_num_threads=1)
    binding = one.io_binding()
    binding.bind_input("a", pool[0]["a"])
    binding.bind_input("b", pool[0]["b"])
    binding.bind_output("c", np.empty(1, np.float32))
    rows: dict[str, Callable[[int], list[int]]] = {
        "run": lambda n: runner._t_run(one, pool, 15, n),
        "run3": lambda n: runner._t_run(many, pool, 15, n),
        "values": lambda n: runner._t_run_with_values(one, pool, 15, n),
        "bound": lambda n: runner._t_ortc_bound(one, [binding] * 16, 15, n),
    }
    for timed in rows.values():
        timed(500)
    cpu = time.thread_time_ns
    print("ready", flush=True)
    for line in sys.stdin:
        name, calls = line.split()
        n = int(calls)
        start = cpu()
        times = rows[name](n)
        used = cpu() - start
        print(statistics.median(times) / 1e3, used / n / 1e3, flush=True)


def _start(tree: str, python: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    proc = subprocess.Popen([python, os.path.abspath(__file__), "--child"], cwd=tree, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.kill()
        raise SystemExit(f"{tree}: its process did not start (printed {line!r})")
    return proc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rows", default=",".join(ROWS))
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    rows = args.rows.split(",")
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}: choose from {','.join(ROWS)}")
    procs = [_start(args.base, args.python), _start(args.new, args.python)]
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    try:
        for r in range(args.rounds):
            order = procs if r % 2 == 0 else procs[::-1]
            for row in rows:
                for proc in order:
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{row} {args.calls}\n")
                    proc.stdin.flush()
                    wall, cpu = map(float, proc.stdout.readline().split())
                    results.setdefault((row, procs.index(proc)), []).append((wall, cpu))
    finally:
        for proc in procs:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=60)
    print(f"{args.rounds} rounds of {args.calls} calls; µs per call (medians), NEW / BASE "
          f"paired per round")
    print(f"{'row':<8}{'base':>9}{'new':>9}{'new/base':>10}{'base cpu':>10}{'new cpu':>9}"
          f"{'new/base':>10}")
    for row in rows:
        base, new = results[(row, 0)], results[(row, 1)]
        ratio: list[Any] = [statistics.median(b[k] / a[k] for a, b in zip(base, new))
                            for k in (0, 1)]
        print(f"{row:<8}{statistics.median(a[0] for a in base):9.2f}"
              f"{statistics.median(b[0] for b in new):9.2f}{ratio[0]:10.3f}"
              f"{statistics.median(a[1] for a in base):10.2f}"
              f"{statistics.median(b[1] for b in new):9.2f}{ratio[1]:10.3f}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        _child()
    else:
        sys.exit(main())
