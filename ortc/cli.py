"""The ``version``, ``info`` and ``run`` subcommands of ``ortc`` (``python -m ortc``)."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import numpy as np

import ortc
from ._cmdline import UsageError, _Parser, prog


def _model_path(path: str) -> str:
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory, not a model file")
    return path


def _load_library(path: str | None) -> None:
    # a library that does not exist is a usage error, one that does not load failed work,
    # as through ORTC_LIBRARY (ortc._cmdline.run_command decides both)
    if path:
        ortc.load(path, _how=f"--library {path}")


def main_version(argv: list[str]) -> int:
    ap = _Parser(prog=prog("version"), description="Print the ONNX Runtime library ortc loads.")
    ap.add_argument("--library", help="load this libonnxruntime instead of searching")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    _load_library(args.library)
    v = ortc.version()
    info = ortc.load()
    if args.json:
        print(json.dumps(dict(v.__dict__, providers=list(v.providers),
                              build_info=info.build_info), indent=2))
    else:
        print(v)
        if info.build_info:
            print("  build:", info.build_info)
        for line in info.searched:
            print("  searched:", line)
    return 0


def main_info(argv: list[str]) -> int:
    ap = _Parser(prog=prog("info"), description="Describe a model: inputs, outputs, metadata.")
    ap.add_argument("model")
    args = ap.parse_args(argv)
    with ortc.Session(_model_path(args.model)) as sess:
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
        if arg.type.kind != ortc.ValueKind.TENSOR:  # a .npy file holds one array, not these
            raise UsageError(f"input {arg.name}: ortc run feeds tensors only, this input is a "
                             f"{arg.type.type_str}; run the model from Python (ortc.Session)")
        raise UsageError(f"input {arg.name}: cannot make random data for {arg.type.type_str}; "
                         f"give it with --input {arg.name}=FILE.npy")
    if dt.kind == "O":
        return np.full(shape, "a", dtype=object)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    return rng.standard_normal(shape).astype(dt) if dt.kind in "fc" else \
        rng.integers(0, 10, shape).astype(dt)


def _seed(text: str) -> int:
    """--seed: numpy's generators take 0 or more."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer of 0 or more, got {text!r}"
                                         ) from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {seed}")
    return seed


def _load_npy(name: str, path: str) -> Any:
    """The array in a .npy file given for input ``name``; a file that is not one is a usage
    error naming both (numpy's own text named neither)."""
    try:
        return np.load(path, allow_pickle=False)
    except ValueError:  # not .npy (numpy then speaks of pickles), or an object array
        raise UsageError(f"--input {name}: {path} is not a .npy file of one array of numbers, "
                         f"bools or text (numpy.save writes one)") from None
    except (OSError, EOFError) as exc:
        raise UsageError(f"--input {name}: {path}: cannot read it ({exc})") from None


def _given_inputs(items: list[str]) -> dict[str, str]:
    given: dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--input {item!r}: expected NAME=FILE.npy")
        if not os.path.isfile(path):
            raise UsageError(f"--input {name}: {path}: no such file")
        given[name] = path
    return given


def main_run(argv: list[str]) -> int:
    ap = _Parser(prog=prog("run"),
                 description="Run a model on random or .npy inputs and print the outputs.")
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--seed", type=_seed, default=0)
    args = ap.parse_args(argv)
    given = _given_inputs(args.input)
    rng = np.random.default_rng(args.seed)
    with ortc.Session(_model_path(args.model)) as sess:
        names = [a.name for a in sess.inputs]
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise UsageError(f"--input {unknown[0]}: the model has no such input "
                             f"(inputs: {', '.join(names) or 'none'})")
        feeds = {a.name: _load_npy(a.name, given[a.name]) if a.name in given else
                 _random_input(a, rng) for a in sess.inputs}
        for arg, out in zip(sess.outputs, sess.run(None, feeds)):
            print(f"{arg.name} =", out)
    return 0
