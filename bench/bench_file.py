"""Per-call ``run()`` on a model file of your own, ortc next to onnxruntime, in one process.

    PYTHONPATH=. python bench/bench_file.py MODEL.onnx [--feed NAME=SHAPE:DTYPE[=VALUE]]...
        [--feedback OUTPUT=INPUT]... [--calls 1000] [--rounds 9] [--threads 1]

Every input gets fresh random data per call (a pool of 64 sets, as a stream of frames would),
unless ``--feed`` fixes it: ``--feed sr=:int64=16000`` (a scalar), ``--feed input=1x512:float32``.
Inputs the model declares with a known shape and a float or int type need no ``--feed``
(open dims count as 1). ``--feedback stateN=state`` feeds an output back as the next call's
input, as a recurrent model is driven (the first call gets zeros). The two bindings alternate
round by round; the medians and their ratio are printed, never asserted.

A streaming voice-activity model, as its users call it (one 512-sample frame per call, the
state fed back, the sample rate fixed; the model file comes with the ``silero-vad`` package):

    pip download --no-deps silero-vad -d /tmp/vad && cd /tmp/vad && unzip -q -o *.whl
    PYTHONPATH=. python bench/bench_file.py /tmp/vad/silero_vad/data/silero_vad.onnx \\
        --feed input=1x512:float32 --feed state=2x1x128:float32 --feed sr=:int64=16000 \\
        --feedback stateN=state
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np


def parse_feed(text: str) -> tuple[str, tuple[int, ...], np.dtype[Any], float | None]:
    """``NAME=SHAPE:DTYPE[=VALUE]``; SHAPE is ``AxBxC`` or empty for a scalar."""
    name, _, rest = text.partition("=")
    shape_text, _, rest = rest.partition(":")
    dtype_text, _, value = rest.partition("=")
    usage = f"--feed {text!r}: expected NAME=SHAPE:DTYPE[=VALUE], SHAPE as 1x512 (empty: a scalar)"
    if not name or not dtype_text:
        raise SystemExit(usage)
    try:
        shape = tuple(int(d) for d in shape_text.split("x")) if shape_text else ()
        dtype = np.dtype(dtype_text)
        number = float(value) if value else None
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"{usage} ({exc})") from None
    if any(d < 0 for d in shape):
        raise SystemExit(f"{usage} (a negative dimension)")
    return name, shape, dtype, number


def make_pool(specs: dict[str, tuple[tuple[int, ...], np.dtype[Any], float | None]],
              size: int = 64) -> list[dict[str, np.ndarray[Any, Any]]]:
    rng = np.random.default_rng(0)
    pool = []
    for _ in range(size):
        feeds = {}
        for name, (shape, dtype, value) in specs.items():
            if value is not None:
                feeds[name] = np.full(shape, value, dtype)
            elif dtype.kind == "f":
                feeds[name] = (rng.standard_normal(shape) * 0.1).astype(dtype)
            else:
                feeds[name] = rng.integers(0, 8, shape).astype(dtype)
        pool.append(feeds)
    return pool


def timer(run: Callable[[Any, dict[str, Any]], list[Any]], outputs: list[str],
          pool: list[dict[str, Any]], feedback: dict[str, str]) -> Callable[[int], float]:
    """µs per call of ``n`` calls, feeding the named outputs back."""
    back = [(outputs.index(out), inp) for out, inp in feedback.items()]

    def timed(n: int) -> float:
        carried = {inp: np.zeros_like(pool[0][inp]) for _, inp in back}
        t0 = time.perf_counter_ns()
        for i in range(n):
            feeds = pool[i & 63]
            if back:
                feeds = {**feeds, **carried}
            result = run(None, feeds)
            for index, inp in back:
                carried[inp] = result[index]
        return (time.perf_counter_ns() - t0) / n / 1000

    return timed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--feed", action="append", default=[],
                    help="NAME=SHAPE:DTYPE[=VALUE], SHAPE as 1x512 (empty for a scalar)")
    ap.add_argument("--feedback", action="append", default=[], help="OUTPUT=INPUT")
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads of both sessions")
    args = ap.parse_args(argv)

    import onnxruntime as ort

    import ortc

    sess = ortc.Session(args.model, intra_op_num_threads=args.threads)
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    ref = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    specs: dict[str, tuple[tuple[int, ...], np.dtype[Any], float | None]] = {}
    for arg in sess.inputs:
        if arg.dtype is None:
            raise SystemExit(f"input {arg.name!r} ({arg.type}): give it with --feed")
        shape = tuple(d if isinstance(d, int) else 1 for d in (arg.shape or ()))
        specs[arg.name] = (shape, arg.dtype, None)
    for text in args.feed:
        name, shape, dtype, value = parse_feed(text)
        specs[name] = (shape, dtype, value)
    feedback = dict(item.split("=", 1) for item in args.feedback)
    outputs = [o.name for o in sess.outputs]
    pool = make_pool(specs)

    first = pool[0]
    for got, want in zip(sess.run(None, first), ref.run(None, first)):
        if not np.array_equal(got, want):
            print("note: the bindings' outputs differ on the first call", file=sys.stderr)
    timers = {"ortc": timer(sess.run, outputs, pool, feedback),
              "onnxruntime": timer(ref.run, outputs, pool, feedback)}
    for t in timers.values():
        t(max(args.calls // 4, 50))  # warm-up (and ortc's learning of open output shapes)
    times: dict[str, list[float]] = {k: [] for k in timers}
    for _ in range(args.rounds):
        for key, t in timers.items():
            times[key].append(t(args.calls))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{args.model}: run() per call, median of {args.rounds} rounds of {args.calls}")
    for key, value in med.items():
        print(f"  {key:12s} {value:9.2f} µs")
    print(f"  ortc / onnxruntime: {med['ortc'] / med['onnxruntime']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
