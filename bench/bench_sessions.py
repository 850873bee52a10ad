"""How much one session of a model differs from another, and how much the order of the timed
loops moves them: the two effects the runner's rounds are built against (a shuffled order per
round, three sessions per binding behind each ``run()`` path; docs/PERFORMANCE.md).

    PYTHONPATH=. python bench/bench_sessions.py [--model vad|matmul|mlp] [--sessions 4]
        [--order fixed|shuffled] [--rounds 21] [--calls 200]

Makes ``--sessions`` sessions of the model per binding (ortc and, when installed, onnxruntime;
``intra_op_num_threads=1``), then for each round times ``--calls`` calls of ``run()`` on every
session, the sessions in the same order every round (``fixed``) or in a new seeded shuffle each
round (``shuffled``). Prints each session's median over rounds of its per-call median, in µs,
with the page faults per call (a fresh output array faulting in new pages would show here), and
each binding's spread; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
from typing import Any


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_sessions.py")
    ap.add_argument("--model", choices=("vad", "matmul", "mlp"), default="vad")
    ap.add_argument("--sessions", type=int, default=4, help="sessions per binding")
    ap.add_argument("--order", choices=("fixed", "shuffled"), default="shuffled")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--calls", type=int, default=200, help="calls per session per round")
    args = ap.parse_args(argv)
    if min(args.sessions, args.rounds, args.calls) < 1:
        ap.error("--sessions, --rounds and --calls need at least 1")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import ortc
    from bench.models import matmul_model, mlp_model, vad_model
    from bench.runner import loop_for

    model = {"vad": vad_model, "matmul": matmul_model, "mlp": mlp_model}[args.model]()
    sessions: list[tuple[str, Any]] = [
        (f"ortc {i}", ortc.Session(model.model, intra_op_num_threads=1))
        for i in range(args.sessions)]
    try:
        import onnxruntime as ort  # type: ignore[import-untyped]

        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sessions += [(f"onnxruntime {i}", ort.InferenceSession(
            model.model, so, providers=["CPUExecutionProvider"])) for i in range(args.sessions)]
    except ImportError:
        print("onnxruntime is not installed: ortc only", file=sys.stderr)
    pool = [model.feeds(seed=i) for i in range(8)]
    loop = loop_for(model)  # the runner's loops: a stream feeds back

    def timed(sess: Any, n: int) -> float:
        return statistics.median(loop(sess, pool, len(pool) - 1, n)) / 1e3

    for _, sess in sessions:
        timed(sess, 20)
    shuffle = random.Random(0).shuffle
    per: dict[str, list[float]] = {name: [] for name, _ in sessions}
    faults = dict.fromkeys(per, 0)
    for _ in range(args.rounds):
        order = list(sessions)
        if args.order == "shuffled":
            shuffle(order)
        for name, sess in order:
            before = resource.getrusage(resource.RUSAGE_SELF)
            per[name].append(timed(sess, args.calls))
            after = resource.getrusage(resource.RUSAGE_SELF)
            faults[name] += (after.ru_minflt - before.ru_minflt) + (after.ru_majflt
                                                                    - before.ru_majflt)
    medians = {name: statistics.median(v) for name, v in per.items()}
    print(f"{model.label}, {args.sessions} sessions per binding, {args.order} order, "
          f"{args.rounds} rounds of {args.calls} calls; µs per call:")
    for name, v in medians.items():
        print(f"  {name}: {v:.2f} ({faults[name] / (args.rounds * args.calls):.2f} page faults "
              f"per call)")
    for binding in ("ortc", "onnxruntime"):
        got = [v for name, v in medians.items() if name.startswith(binding + " ")]
        if got:
            print(f"{binding}: {min(got):.2f}-{max(got):.2f} "
                  f"(spread {100 * (max(got) / min(got) - 1):.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
