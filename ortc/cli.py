"""The ``version``, ``info`` and ``run`` subcommands of ``python -m ortc``."""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

import ortc


def main_version(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m ortc version")
    ap.add_argument("--library", help="load this libonnxruntime instead of searching")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    if args.library:
        ortc.load(args.library)
    v = ortc.version()
    if args.json:
        print(json.dumps(v.__dict__ | {"providers": list(v.providers)}, indent=2))
    else:
        print(v)
        for line in ortc.load().searched:
            print("  searched:", line)
    return 0


def main_info(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m ortc info")
    ap.add_argument("model")
    args = ap.parse_args(argv)
    with ortc.Session(args.model) as sess:
        for title, items in (("inputs", sess.inputs), ("outputs", sess.outputs),
                             ("overridable initializers", sess.overridable_initializers)):
            print(f"{title}:")
            for a in items:
                print(f"  {a.name}: {a.type.type_str} {list(a.shape) if a.shape is not None else ''}")
        md = sess.metadata()
        print("metadata:", json.dumps(md.__dict__, ensure_ascii=False))
    return 0


def _random_input(arg: ortc.NodeArg, rng: np.random.Generator) -> Any:
    shape = [d if isinstance(d, int) else 1 for d in (arg.shape or ())]
    dt = arg.dtype
    if dt is None:
        raise SystemExit(f"input {arg.name}: cannot make random data for {arg.type.type_str}")
    if dt.kind == "O":
        return np.full(shape, "a", dtype=object)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    return rng.standard_normal(shape).astype(dt) if dt.kind in "fc" else \
        rng.integers(0, 10, shape).astype(dt)


def main_run(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m ortc run")
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    given = dict(item.split("=", 1) for item in args.input)
    with ortc.Session(args.model) as sess:
        feeds = {a.name: np.load(given[a.name]) if a.name in given else _random_input(a, rng)
                 for a in sess.inputs}
        for arg, out in zip(sess.outputs, sess.run(None, feeds)):
            print(f"{arg.name} =", out)
    return 0
