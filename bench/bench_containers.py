"""Outputs and inputs that are not plain tensors, against onnxruntime: the sequences, maps and
string tensors that scikit-learn classifiers (skl2onnx's ZipMap: a dict per row), text models
and sequence operators hand over.

    PYTHONPATH=. python bench/bench_containers.py [--rounds 7] [--seconds 0.2]

Each case runs one model through onnxruntime, ortc.compat and ortc (`run()`, the same feeds),
the three taking turns round by round; per round each binding runs the case for about
``--seconds`` and its µs per call is the mean; printed are the medians over rounds and each
binding's ratio to onnxruntime, paired per round. The outputs are compared with onnxruntime's
before timing. Cases (tests/models.py builds the models):

* ``zipmap int, N rows``: ZipMap of a float [N, 3] to a sequence of N maps int64 -> float;
* ``zipmap str, N rows``: the same with string labels;
* ``split to sequence, N``: SplitToSequence of a float [N, 4] into N tensors;
* ``concat from sequence, N``: a list of N float [1, 4] arrays fed as a sequence;
* ``string identity, N``: N strings in, the same N out;
* ``dict vectorizer``: a dict of four int64 -> float fed as a map.

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
for path in (ROOT, os.path.join(ROOT, "tests")):
    if path not in sys.path:
        sys.path.insert(0, path)

import models  # noqa: E402  (tests/models.py)
import ortc  # noqa: E402
import ortc.compat  # noqa: E402

Case = tuple[str, bytes, dict[str, Any]]


def cases() -> list[Case]:
    rng = np.random.default_rng(0)
    out: list[Case] = []
    for rows in (1, 100):
        x = rng.random((rows, 3), np.float32)
        out.append((f"zipmap int, {rows} rows", models.zipmap_model((10, 20, 30)), {"x": x}))
        out.append((f"zipmap str, {rows} rows", models.zipmap_model(("cat", "dog", "bird")),
                    {"x": x}))
    for n in (3, 100):
        out.append((f"split to sequence, {n}", models.split_to_sequence_model(),
                    {"x": rng.random((n, 4), np.float32)}))
        out.append((f"concat from sequence, {n}", models.concat_from_sequence_model(),
                    {"seq": [rng.random((1, 4), np.float32) for _ in range(n)]}))
    for n in (100, 10000):
        words = np.array([f"word{i}" for i in range(n)], dtype=object)
        out.append((f"string identity, {n}", models.identity_model(np.str_, [n]), {"x": words}))
    out.append(("dict vectorizer", models.dict_vectorizer_model(),
                {"x": {1: 1.0, 2: 2.0, 3: 3.0, 5: 5.0}}))
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and \
            bool(np.array_equal(a, b))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and \
            all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _mean_us(fn: Callable[[], Any], seconds: float) -> float:
    fn()
    n = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while True:
        fn()
        n += 1
        t = time.perf_counter()
        if t >= end:
            return (t - t0) / n * 1e6


def main(argv: list[str] | None = None) -> int:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.2)
    args = parser.parse_args(argv)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    cso = ortc.compat.SessionOptions()
    cso.intra_op_num_threads = 1
    print(f"{'case':28s} {'onnxruntime µs':>15s} {'compat':>8s} {'ortc':>8s}   "
          f"(medians over {args.rounds} rounds; compat and ortc: paired ratio to onnxruntime)")
    for name, model, feeds in cases():
        runs = {
            "onnxruntime": ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run,
            "compat": ortc.compat.InferenceSession(model, cso,
                                                   providers=["CPUExecutionProvider"]).run,
            "ortc": ortc.Session(model, intra_op_num_threads=1).run,
        }
        want = runs["onnxruntime"](None, feeds)
        for binding in ("compat", "ortc"):
            got = runs[binding](None, feeds)
            if not _same(want, got):
                raise SystemExit(f"{name}: {binding}'s outputs differ from onnxruntime's")
        times: dict[str, list[float]] = {b: [] for b in runs}
        for r in range(args.rounds):
            order = list(runs) if r % 2 else list(runs)[::-1]
            for binding in order:
                times[binding].append(_mean_us(lambda: runs[binding](None, feeds), args.seconds))
        ratios = {b: statistics.median(t / o for t, o in zip(times[b], times["onnxruntime"]))
                  for b in ("compat", "ortc")}
        print(f"{name:28s} {statistics.median(times['onnxruntime']):15.1f} "
              f"{ratios['compat']:7.2f}x {ratios['ortc']:7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
