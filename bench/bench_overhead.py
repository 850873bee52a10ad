"""Where a ``run()`` spends its time: inside ORT's Run, and around it (the binding's part).

    PYTHONPATH=. python bench/bench_overhead.py [--rounds 15] [--calls 300]
    PYTHONPATH=. python bench/bench_overhead.py --crossover 4 16 64 128 256 1024

For each case, ortc's ``Session.run`` is timed per call over a loop (fresh input arrays cycled
from a pool of four, as users and bench/runner.py feed them) while the ``Run`` slot is wrapped
(``Api.instrument``) to time the C call itself; "around" is the difference: everything the
binding does in Python per call (the guard, the run context, the inputs' OrtValues, taking the
outputs and releasing what the run held) plus the GIL hand-offs. Each round also times the
same loop unwrapped ("plain"): the wrapper's own cost is "total" minus "plain". Means, not
medians: the total is a loop mean, so the inside is one too. Medians over rounds.

Every run is the one path ortc has (ORT allocates the outputs, ``ortc._run``); what differs is
how an output tensor comes out: an output of at most ``COPY_OUT_MAX`` bytes is copied into a
new array ("copy-out"), a larger one is handed out as a view of ORT's memory ("view"). Cases:

* ``add copy-out``: the tiny model (one float) as ortc runs it;
* ``add view``: the same with the copy threshold lowered, so its output is viewed;
* ``matmul 16x64x64 copy-out``: a small MatMul (a 4 KiB output: copied);
* ``matmul 64x256x256 view``, ``mlp 3x512 b32 view``: the bench's rows as ortc runs them (64
  KiB outputs: viewed);
* ``... copy-out``: the same two with the threshold raised, so their outputs are copied (a
  larger kernel between runs leaves the binding's Python objects out of the CPU caches:
  "around" grows with the kernel).

Each case checks that its outputs came out as it says (an array of its own, or a view).
Before the run core was rewritten this script compared runs through a "stage" or a "lane"
with the general path; those no longer exist, and neither do their rows.

Intra-op threads 1, main thread. The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import ortc  # noqa: E402
from ortc import _run  # noqa: E402
from ortc._loader import api  # noqa: E402

from bench.models import BenchModel, add_model, matmul_model, mlp_model  # noqa: E402

#: a copy threshold no output reaches (every output copied), and one every output passes
_COPY_ALL = 1 << 62
_VIEW_ALL = -1


def _cases() -> list[tuple[str, BenchModel, bool]]:
    """(name, model, whether its outputs are copied out rather than viewed)."""
    matmul, mlp = matmul_model(), mlp_model()
    return [("add copy-out", add_model(), True), ("add view", add_model(), False),
            ("matmul 16x64x64 copy-out", matmul_model(16, 64, 64), True),
            ("matmul 64x256x256 view", matmul, False),
            ("matmul 64x256x256 copy-out", matmul, True),
            ("mlp 3x512 b32 view", mlp, False), ("mlp 3x512 b32 copy-out", mlp, True)]


def _threshold(model: BenchModel, copied: bool) -> int:
    """The COPY_OUT_MAX a case runs with: ortc's own when it gives the case's way out, else
    one that forces it."""
    sess = ortc.Session(model.model, intra_op_num_threads=1)
    try:
        feeds = {k: np.zeros(s, np.float32) for k, s in model.inputs.items()}
        largest = max(a.nbytes for a in sess.run(None, feeds))
    finally:
        sess.close()
    if (largest <= _run.COPY_OUT_MAX) == copied:
        return _run.COPY_OUT_MAX
    return _COPY_ALL if copied else _VIEW_ALL


def _check_outputs(outputs: list[Any], copied: bool) -> None:
    for out in outputs:
        # a copied-out output owns its memory; a view's memory is ORT's value, kept by its base
        if bool(out.flags.owndata) != copied:
            raise RuntimeError(f"an output came out {'as a view' if copied else 'copied'}, not "
                               f"{'copied' if copied else 'as a view'}")


def measure(model: BenchModel, copied: bool, rounds: int, calls: int
            ) -> tuple[float, float, float]:
    """(µs per call unwrapped, in all, inside Run): medians over rounds of loop means."""
    rng = np.random.default_rng(0)
    pool = [{k: rng.random(s, dtype=np.float32) for k, s in model.inputs.items()}
            for _ in range(4)]
    inside: list[float] = []
    clock = time.perf_counter

    def timed(_name: str, run: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            t0 = clock()
            status = run(*args)
            inside.append(clock() - t0)
            return status
        return call

    # The engine reads the Run slot from the Api facade at every call, so one session serves
    # both loops: unwrapped, then wrapped.
    sess = ortc.Session(model.model, intra_op_num_threads=1)

    def loop() -> float:
        for i in range(calls // 10):  # warm: caches, name arrays, ORT's arena
            _check_outputs(sess.run(None, pool[i % 4]), copied)
        inside.clear()
        t0 = clock()
        for i in range(calls):
            sess.run(None, pool[i % 4])
        return (clock() - t0) / calls * 1e6

    plains, totals, insides = [], [], []
    default = _run.COPY_OUT_MAX
    _run.COPY_OUT_MAX = _threshold(model, copied)  # read at every run: set for this case only
    try:
        for _ in range(rounds):
            plains.append(loop())
            if inside:
                raise RuntimeError("the plain loop's runs went through the wrapper")
            undo = api().instrument(timed, ["Run"])
            try:
                totals.append(loop())
            finally:
                undo()
            if len(inside) != calls:
                raise RuntimeError(f"{len(inside)} timed Run calls for {calls} runs")
            insides.append(statistics.fmean(inside) * 1e6)
    finally:
        _run.COPY_OUT_MAX = default
        sess.close()
    return statistics.median(plains), statistics.median(totals), statistics.median(insides)


def crossover(kib: list[int], rounds: int, calls: int) -> None:
    """Where copying an output out starts to cost more than viewing it: ``run()`` of
    ``c = a + b`` over float32 vectors whose output has each size in ``kib``, every output
    copied, then every output viewed (the two loops alternated per round; medians of loop
    means). COPY_OUT_MAX sits where the copy stops winning."""
    print(f"{'output':>8} {'copied':>9} {'viewed':>9}   (µs per run() call; COPY_OUT_MAX "
          f"{_run.COPY_OUT_MAX // 1024} KiB)")
    default = _run.COPY_OUT_MAX
    try:
        for size in kib:
            model = add_model((size * 256,))
            sess = ortc.Session(model.model, intra_op_num_threads=1)
            rng = np.random.default_rng(0)
            pool = [{k: rng.random(s, dtype=np.float32) for k, s in model.inputs.items()}
                    for _ in range(4)]
            times: dict[int, list[float]] = {_COPY_ALL: [], _VIEW_ALL: []}
            for _ in range(rounds):
                for limit, samples in times.items():
                    _run.COPY_OUT_MAX = limit
                    for i in range(calls // 10):
                        _check_outputs(sess.run(None, pool[i % 4]), limit == _COPY_ALL)
                    t0 = time.perf_counter()
                    for i in range(calls):
                        sess.run(None, pool[i % 4])
                    samples.append((time.perf_counter() - t0) / calls * 1e6)
            sess.close()
            print(f"{size:>5} KiB {statistics.median(times[_COPY_ALL]):9.2f} "
                  f"{statistics.median(times[_VIEW_ALL]):9.2f}")
    finally:
        _run.COPY_OUT_MAX = default


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_overhead.py")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--crossover", type=int, nargs="+", metavar="KIB",
                    help="instead of the cases: copy against view for outputs of these sizes")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.calls < 10:
        ap.error("--rounds needs at least 1 and --calls at least 10")
    if args.crossover:
        crossover(args.crossover, args.rounds, args.calls)
        return 0
    print(f"{'case':<26} {'plain':>9} {'total':>9} {'inside Run':>11} {'around':>8}"
          "   (µs per call)")
    for name, model, copied in _cases():
        plain, total, inside = measure(model, copied, args.rounds, args.calls)
        print(f"{name:<26} {plain:9.2f} {total:9.2f} {inside:11.2f} {total - inside:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
