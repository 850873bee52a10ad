"""Differential fuzzing of ortc's run paths against onnxruntime, over random small graphs.

ortc keeps OrtValues over the caller's arrays by address (the value cache), converts ORT's
outputs into arrays over ORT's memory, and has several run paths (run, run_with_values,
run_async, IoBinding, ortc.compat). A model or a caller can make any of these wrong, and a
fault shows as a wrong result, not an error. So this module builds random
small ONNX graphs (onnx.helper) out of what those guesses rest on, runs each over a sequence
of calls through every path, and compares every result with onnxruntime's for the same feeds:
dtype, shape and bytes (every operator used is deterministic on the CPU provider), or both
raising.

What a graph combines (each case picks some): outputs that are inputs, initializers (constant
or overridable, fed now and then), or one tensor listed as two outputs; Identity chains;
outputs of size 0 and scalars; shapes that depend on input values (NonZero, Unique with some
optional outputs left out, Compress, Slice, Reshape, Expand, Tile, ConstantOfShape, TopK,
Range, with their shapes or counts from inputs); If, Loop and Scan whose output shapes depend
on a condition or a count; sequences, maps and optionals (empty ones too) among the outputs;
string, bool and float16 tensors; output declarations that are right, missing, partial, or lie
(an input's dim name for another size, another rank, one element, now and then another element
type), and inputs sharing a symbol for sizes that differ.

How it is called: inputs' shapes stay fixed, alternate between two, or change every call (a 0
now and then); a feed is a fresh array, the same array every call (its values kept, or changed
in place between calls), one array fed to two inputs, a view, a strided or Fortran-ordered
array, an array over recycled memory (the same address with another shape), an earlier result
fed back, an ortc.Value or Python lists (native paths), in a dict whose order changes; a call
now and then has a feed of another dtype (both must refuse it, and the calls after it must be
right). The output lists asked for are all (None), a subset, a permutation, names repeated, as
lists or tuples; fixed, alternating or new every call; with run options now and then. Every
result is kept and checked again after the last call (a later call must not overwrite an
earlier call's result), arrays from run paths must be writeable and never over a feed's
memory, and every value left in a session's value cache must have its key's shape.

Paths: ``run``, ``run_with_values``, ``run_async`` (intra_op_num_threads=2), IoBinding (arrays
bound as outputs, or ORT's allocation; onnxruntime's own binding is the oracle where it can
be), three threads on one session, one session taking every native path in turn, and
ortc.compat's ``run``, ``run_with_ort_values`` and ``IOBinding``; each under ortc's tuning as
shipped, or with a value cache so small that it churns within a few calls.

The default run is short and seeded (``ORTC_DIFF_CASES``, ``ORTC_DIFF_SEED`` run more or
others). From the command line::

    python tests/test_differential.py --cases 5000 --seed 1     # a longer run, faults printed
    python tests/test_differential.py --seed 1 --case 1234 --show   # one case: its graph, calls
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:  # run as a script
    sys.path.append(ROOT)

import ortc  # noqa: E402
import ortc._run  # noqa: E402

FLOAT, INT64, F16, BOOL, STRING = TP.FLOAT, TP.INT64, TP.FLOAT16, TP.BOOL, TP.STRING
DOUBLE, INT32, UINT8 = TP.DOUBLE, TP.INT32, TP.UINT8
NUMPY: dict[int, Any] = {FLOAT: np.float32, INT64: np.int64, F16: np.float16, BOOL: np.bool_,
                         STRING: object, DOUBLE: np.float64, INT32: np.int32, UINT8: np.uint8}
NUMERIC = (FLOAT, INT64, F16)
OPSET = 18
WORDS = ["", "a", "bc", "d\u00e9f", "a longer string", "bc"]

PATHS = ("run", "values", "async", "binding", "threads", "mixed", "compat", "compat_values",
         "compat_binding")
TUNINGS = ("shipped", "eager")


# -- sizes ------------------------------------------------------------------------------------

class Dim:
    """A dimension's size per call: fixed, two in turn, or drawn anew every call (0 now and
    then). ``sizes(stream)`` is the same sequence every time it is asked for."""

    def __init__(self, name: str, kind: str, seed: list[int]) -> None:
        self.name = name
        self.kind = kind
        self.seed = seed
        rng = np.random.default_rng(seed)
        self.fixed_size = int(rng.choice([1, 2, 3, 4, 0], p=[.3, .3, .2, .12, .08]))
        self.pair = (int(rng.integers(1, 5)), int(rng.integers(0, 5)))

    @property
    def fixed(self) -> bool:
        return self.kind == "fixed"

    def sizes(self, stream: int, calls: int) -> list[int]:
        if self.kind == "fixed":
            return [self.fixed_size] * calls
        if self.kind == "alternate":
            a, b = self.pair if stream == 0 else self.pair[::-1]
            return [a if k % 2 == 0 else b for k in range(calls)]
        rng = np.random.default_rng([*self.seed, stream])
        return [int(rng.choice(6, p=[.08, .22, .22, .2, .16, .12])) for _ in range(calls)]

    def at(self, env: dict[str, int]) -> int:
        return env[self.name]

    def __repr__(self) -> str:
        return f"{self.name}:{self.kind}"


class Const:
    def __init__(self, n: int) -> None:
        self.n = n
        self.fixed = True

    def at(self, env: dict[str, int]) -> int:
        return self.n

    def __repr__(self) -> str:
        return str(self.n)


class Twice:
    def __init__(self, d: Any) -> None:
        self.d = d
        self.fixed = d.fixed

    def at(self, env: dict[str, int]) -> int:
        return 2 * int(self.d.at(env))

    def __repr__(self) -> str:
        return f"2*{self.d!r}"


@dataclass
class Tensor:
    name: str
    etype: int
    dims: Optional[list[Any]]  # None: not known before a run (a value-dependent shape)

    def shape(self, env: dict[str, int]) -> tuple[int, ...]:
        assert self.dims is not None
        return tuple(int(d.at(env)) for d in self.dims)


@dataclass
class Input:
    tensor: Tensor
    declared: Optional[list[Any]]
    #: (env, rng, feeds made so far) -> the array for one call
    make: Callable[[dict[str, int], Any, dict[str, Any]], Any]
    #: how the array is passed: fresh, same, mutate, view, strided, fortran, recycle, twice
    mode: str = "fresh"
    twin_of: Optional[str] = None


def _values(etype: int, shape: tuple[int, ...], rng: Any) -> np.ndarray:
    if etype == STRING:
        out = np.empty(shape, object)
        out.reshape(-1)[...] = [WORDS[i] for i in rng.integers(0, len(WORDS), out.size)]
        return out
    if etype == BOOL:
        return np.asarray(rng.random(shape) < 0.5)
    if etype == UINT8:
        return np.asarray(rng.integers(0, 9, shape), np.uint8)
    # small multiples of a half: exact in float16, with zeros and repeats for NonZero & co
    return np.asarray(rng.integers(-4, 5, shape) * (0.5 if etype in (FLOAT, F16, DOUBLE) else 1),
                      NUMPY[etype])


# -- the graph ---------------------------------------------------------------------------------

class Builder:
    """A random graph under construction: inputs, nodes, initializers and the outputs."""

    def __init__(self, rng: Any, seed: list[int]) -> None:
        self.rng = rng
        self.seed = seed
        self.nodes: list[Any] = []
        self.inputs: list[Input] = []
        self.inits: list[Any] = []
        self.overridable: list[str] = []  # initializers also listed as inputs
        self.outputs: list[tuple[str, Any]] = []  # (name, TypeProto without shapes)
        self.tensors: list[Tensor] = []  # what later nodes may take
        self.dims: list[Dim] = []
        self.features: set[str] = set()
        self.ml = False
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def pick(self, seq: list[Any]) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def dim(self) -> Dim:
        if self.dims and self.chance(0.5):
            return self.pick(self.dims)
        kind = self.pick(["fixed", "fixed", "alternate", "every"])
        d = Dim(f"d{len(self.dims)}", kind, [*self.seed, 100 + len(self.dims)])
        self.dims.append(d)
        return d

    def data_input(self, etype: Optional[int] = None, rank: Optional[int] = None) -> Tensor:
        if etype is None:
            etype = self.pick([FLOAT, FLOAT, FLOAT, INT64, INT64, F16, BOOL, STRING, DOUBLE,
                               INT32, UINT8])
        if rank is None:
            rank = self.pick([0, 1, 1, 2, 2, 3])
        dims = [self.dim() for _ in range(rank)]
        t = Tensor(self.fresh("x"), etype, list(dims))
        declared = self.declare_input(dims)
        self.inputs.append(Input(t, declared, lambda env, rng, feeds, t=t: _values(
            t.etype, t.shape(env), rng)))
        self.tensors.append(t)
        self.features.add(f"input {'string' if etype == STRING else TP.DataType.Name(etype)}")
        if rank == 0:
            self.features.add("scalar input")
        return t

    def declare_input(self, dims: list[Any]) -> Optional[list[Any]]:
        if self.chance(0.08):
            self.features.add("input of unknown rank")
            return None
        declared: list[Any] = []
        for d in dims:
            r = self.rng.random()
            if d.fixed and r < 0.35:
                declared.append(d.at({d.name: d.fixed_size}) if isinstance(d, Dim) else d.n)
            elif r < 0.85 or not self.dims:
                declared.append(d.name)
            elif r < 0.93:
                declared.append(None)
            else:  # another dim's symbol: one symbol for sizes that differ
                declared.append(self.pick(self.dims).name)
                self.features.add("input symbol shared by other sizes")
        return declared

    def value_input(self, prefix: str, etype: int, shape: list[int],
                    make: Callable[[dict[str, int], Any], Any]) -> str:
        """An input whose values (not its shape) an output's shape depends on."""
        name = self.fresh(prefix)
        t = Tensor(name, etype, [Const(n) for n in shape])
        declared: Optional[list[Any]] = list(shape) if not self.chance(0.2) else \
            [self.fresh("v") for _ in shape]
        self.inputs.append(Input(t, declared, lambda env, rng, feeds: make(env, rng)))
        return name

    def init(self, array: np.ndarray, prefix: str = "c") -> str:
        name = self.fresh(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op: str, ins: list[str], outs: list[str], domain: str = "", **attrs: Any
             ) -> None:
        self.nodes.append(helper.make_node(op, ins, outs, domain=domain or None, **attrs))
        self.features.add(f"op {op}")

    def add(self, t: Tensor) -> Tensor:
        self.tensors.append(t)
        return t

    def output(self, name: str, type_proto: Any) -> None:
        self.outputs.append((name, type_proto))

    def tensor_output(self, t: Tensor) -> None:
        self.output(t.name, helper.make_tensor_type_proto(t.etype, None))


def tensor_type(etype: int) -> Any:
    return helper.make_tensor_type_proto(etype, None)


def _unary_op(etype: int) -> str:
    return {FLOAT: "Neg", F16: "Abs", INT64: "Neg", BOOL: "Not", STRING: "Identity",
            DOUBLE: "Neg", INT32: "Neg", UINT8: "Abs"}[etype]


# producers: each adds nodes taking tensors the graph has, and outputs ---------------------------

def p_unary(b: Builder) -> None:
    t = b.pick(b.tensors)
    out = b.add(Tensor(b.fresh("u"), t.etype, t.dims))
    b.node(_unary_op(t.etype), [t.name], [out.name])
    b.tensor_output(out)


def p_identity_chain(b: Builder) -> None:
    t = b.pick(b.tensors)
    name = t.name
    for _ in range(int(b.rng.integers(1, 4))):
        nxt = b.fresh("i")
        b.node("Identity", [name], [nxt])
        name = nxt
    b.add(Tensor(name, t.etype, t.dims))
    b.tensor_output(Tensor(name, t.etype, t.dims))
    b.features.add("identity chain")


def p_cast(b: Builder) -> None:
    t = b.pick([t for t in b.tensors if t.etype != STRING] or b.tensors)
    if t.etype == STRING:
        return p_unary(b)
    to = b.pick([e for e in (FLOAT, INT64, F16, BOOL, STRING, DOUBLE, INT32, UINT8)
                 if e != t.etype])
    out = b.add(Tensor(b.fresh("cast"), to, t.dims))
    b.node("Cast", [t.name], [out.name], to=to)
    b.tensor_output(out)
    if to == STRING:
        b.features.add("string output")


def p_binary(b: Builder) -> None:
    t = b.pick([t for t in b.tensors if t.etype in (FLOAT, INT64)] or [b.data_input(FLOAT)])
    op = b.pick(["Add", "Mul", "Sub"])
    if b.chance(0.5):
        other = t.name  # the same tensor twice
    else:
        other = b.init(np.array(b.pick([1, 2, -1]), NUMPY[t.etype]))
    out = b.add(Tensor(b.fresh("bin"), t.etype, t.dims))
    b.node(op, [t.name, other], [out.name])
    b.tensor_output(out)


def p_compare(b: Builder) -> None:
    t = b.pick([t for t in b.tensors if t.etype in NUMERIC] or [b.data_input(FLOAT)])
    out = b.add(Tensor(b.fresh("gt"), BOOL, t.dims))
    b.node("Greater", [t.name, b.init(np.array(0, NUMPY[t.etype]))], [out.name])
    b.tensor_output(out)
    b.features.add("bool output")


def p_reduce(b: Builder) -> None:
    t = b.pick([t for t in b.tensors if t.etype in (FLOAT, INT64)] or [b.data_input(INT64)])
    keep = b.chance(0.5)
    # ReduceMax of nothing fails: only over dims that are never 0
    nonempty = t.dims is not None and all(
        d.fixed and d.at({n.name: n.fixed_size for n in b.dims}) > 0 for d in t.dims)
    op = b.pick(["ReduceSum", "ReduceMax"]) if nonempty else "ReduceSum"
    rank = len(t.dims) if t.dims is not None else None
    dims = None if rank is None else ([Const(1)] * rank if keep else [])
    out = b.add(Tensor(b.fresh("red"), t.etype, dims))
    b.node(op, [t.name], [out.name], keepdims=int(keep))
    b.tensor_output(out)
    b.features.add("scalar output" if not keep else "one-element output")


def p_shape(b: Builder) -> None:
    t = b.pick(b.tensors)
    if b.chance(0.5):
        out = b.add(Tensor(b.fresh("shape"), INT64,
                           None if t.dims is None else [Const(len(t.dims))]))
        b.node("Shape", [t.name], [out.name])
    else:
        out = b.add(Tensor(b.fresh("size"), INT64, []))
        b.node("Size", [t.name], [out.name])
        b.features.add("scalar output")
    b.tensor_output(out)


def p_nonzero(b: Builder) -> None:
    t = b.pick([t for t in b.tensors if t.etype in (FLOAT, INT64, BOOL)] or [b.data_input(BOOL)])
    out = b.add(Tensor(b.fresh("nz"), INT64, None))
    b.node("NonZero", [t.name], [out.name])
    b.tensor_output(out)
    b.features.add("value-dependent shape")


def p_unique(b: Builder) -> None:
    t = b.pick([t for t in b.tensors if t.etype in (FLOAT, INT64)] or [b.data_input(INT64)])
    names = [b.fresh("uq"), b.fresh("uqi"), b.fresh("uqv"), b.fresh("uqc")]
    wanted = [i for i in range(4) if i == 0 or b.chance(0.5)]
    outs = [n if i in wanted else "" for i, n in enumerate(names)]
    while outs and outs[-1] == "":
        outs.pop()
    b.node("Unique", [t.name], outs, sorted=int(b.chance(0.7)))
    for i in wanted:
        etype = t.etype if i == 0 else INT64
        b.add(Tensor(names[i], etype, None))
        if i == 0 or b.chance(0.7):
            b.output(names[i], tensor_type(etype))
    if len(wanted) < 4:
        b.features.add("optional node outputs left out")
    b.features.add("value-dependent shape")


def p_compress(b: Builder) -> None:
    t = b.pick([t for t in b.tensors if t.etype in (FLOAT, INT64) and t.dims != []]
               or [b.data_input(FLOAT, rank=1)])
    gt, flat = b.fresh("cond"), b.fresh("flat")
    b.node("Greater", [t.name, b.init(np.array(0, NUMPY[t.etype]))], [gt])
    b.node("Reshape", [gt, b.init(np.array([-1], np.int64))], [flat])
    out = b.add(Tensor(b.fresh("comp"), t.etype, None))
    b.node("Compress", [t.name, flat], [out.name])
    b.tensor_output(out)
    b.features.add("value-dependent shape")


def _known(b: Builder, min_rank: int = 1) -> Tensor:
    known = [t for t in b.tensors if t.dims is not None and len(t.dims) >= min_rank]
    return b.pick(known) if known else b.data_input(rank=max(min_rank, 1))


def p_slice(b: Builder) -> None:
    t = _known(b)
    axis = int(b.rng.integers(len(t.dims)))  # type: ignore[arg-type]
    dim = t.dims[axis]  # type: ignore[index]

    def bound(env: dict[str, int], rng: Any) -> np.ndarray:
        n = int(dim.at(env))
        return np.array([int(rng.integers(-n - 1, n + 2))], np.int64)

    starts = b.value_input("start", INT64, [1], bound)
    ends = b.value_input("end", INT64, [1], bound)
    ins = [t.name, starts, ends, b.init(np.array([axis], np.int64))]
    if b.chance(0.3):
        ins.append(b.init(np.array([b.pick([1, 2, -1])], np.int64)))
    out = b.add(Tensor(b.fresh("sl"), t.etype, None))
    b.node("Slice", ins, [out.name])
    b.tensor_output(out)
    b.features.add("shape from input values")


def p_reshape(b: Builder) -> None:
    t = _known(b, 0)

    def target(env: dict[str, int], rng: Any) -> np.ndarray:
        """A 2-element target shape for this call's size: [a, -1], [-1, 1], [size, 1]..."""
        size = int(np.prod(t.shape(env)))
        choices = [[-1, 1], [size, 1], [1, size]]
        choices += [[a, -1] for a in range(1, 5) if size % a == 0 and size > 0]
        return np.array(choices[int(rng.integers(len(choices)))], np.int64)

    shape = b.value_input("shape", INT64, [2], target)
    out = b.add(Tensor(b.fresh("rs"), t.etype, None))
    b.node("Reshape", [t.name, shape], [out.name])
    b.tensor_output(out)
    b.features.add("shape from input values")


def p_expand(b: Builder) -> None:
    t = _known(b, 0)
    rank = len(t.dims)  # type: ignore[arg-type]

    def target(env: dict[str, int], rng: Any) -> np.ndarray:
        return np.array([int(rng.integers(0, 4))] + [1] * max(rank, 1), np.int64)

    shape = b.value_input("eshape", INT64, [max(rank, 1) + 1], target)
    out = b.add(Tensor(b.fresh("ex"), t.etype, None))
    b.node("Expand", [t.name, shape], [out.name])
    b.tensor_output(out)
    b.features.add("shape from input values")


def p_tile(b: Builder) -> None:
    t = _known(b)
    rank = len(t.dims)  # type: ignore[arg-type]
    reps = b.value_input("reps", INT64, [rank],
                         lambda env, rng: rng.integers(0, 3, rank).astype(np.int64))
    out = b.add(Tensor(b.fresh("tile"), t.etype, None))
    b.node("Tile", [t.name, reps], [out.name])
    b.tensor_output(out)
    b.features.add("shape from input values")


def p_constant_of_shape(b: Builder) -> None:
    rank = int(b.rng.integers(0, 3))
    shape = b.value_input("cshape", INT64, [rank],
                          lambda env, rng: rng.integers(0, 4, rank).astype(np.int64))
    etype = b.pick([FLOAT, INT64, BOOL])
    out = b.add(Tensor(b.fresh("cos"), etype, None))
    b.node("ConstantOfShape", [shape], [out.name],
           value=numpy_helper.from_array(np.array([1], NUMPY[etype])))
    b.tensor_output(out)
    b.features.add("shape from input values")


def p_topk(b: Builder) -> None:
    known = [t for t in b.tensors if t.dims and t.etype in (FLOAT, INT64)]
    t = b.pick(known) if known else b.data_input(FLOAT, rank=int(b.rng.integers(1, 3)))
    last = t.dims[-1]  # type: ignore[index]
    k = b.value_input("k", INT64, [1], lambda env, rng: np.array(
        [int(rng.integers(0, int(last.at(env)) + 1))], np.int64))
    vals, idx = b.fresh("topv"), b.fresh("topi")
    b.node("TopK", [t.name, k], [vals, idx], largest=int(b.chance(0.5)))
    for name, etype in ((vals, t.etype), (idx, INT64)):
        b.add(Tensor(name, etype, None))
        if b.chance(0.7):
            b.output(name, tensor_type(etype))
    b.features.add("shape from input values")


def p_range(b: Builder) -> None:
    etype = b.pick([INT64, FLOAT])
    dt = NUMPY[etype]
    start = b.value_input("rstart", etype, [], lambda env, rng: np.array(
        int(rng.integers(-2, 3)), dt))
    limit = b.value_input("rlimit", etype, [], lambda env, rng: np.array(
        int(rng.integers(-2, 6)), dt))
    delta = b.init(np.array(b.pick([1, 2, -1]), dt))
    out = b.add(Tensor(b.fresh("range"), etype, None))
    b.node("Range", [start, limit, delta], [out.name])
    b.tensor_output(out)
    b.features.add("shape from input values")


def p_concat(b: Builder) -> None:
    t = _known(b)
    out = b.add(Tensor(b.fresh("cat"), t.etype, [Twice(t.dims[0]), *t.dims[1:]]))  # type: ignore
    b.node("Concat", [t.name, t.name], [out.name], axis=0)
    b.tensor_output(out)


def p_unsqueeze(b: Builder) -> None:
    t = _known(b, 0)
    out = b.add(Tensor(b.fresh("unsq"), t.etype, [Const(1), *t.dims]))  # type: ignore[misc]
    b.node("Unsqueeze", [t.name, b.init(np.array([0], np.int64))], [out.name])
    b.tensor_output(out)


def _branch(name: str, nodes: list[Any], outputs: list[tuple[str, Any]]) -> Any:
    return helper.make_graph(nodes, name, [], [helper.make_value_info(n, tp)
                                               for n, tp in outputs])


def p_if(b: Builder) -> None:
    t = _known(b, 0)
    cond = b.value_input("cond", BOOL, [], lambda env, rng: np.array(rng.random() < 0.5))
    rank = len(t.dims)  # type: ignore[arg-type]
    # then: t itself (through Identity: ORT refuses a branch returning an outer value as such)
    then_out = b.fresh("then")
    then_nodes = [helper.make_node("Identity", [t.name], [then_out])]
    # else: another shape (doubled along the first axis, or a 0 there), or another rank
    else_out = b.fresh("else")
    choice = b.pick(["double", "empty", "rank"] if rank else ["rank"])
    if choice == "double":
        else_nodes = [helper.make_node("Concat", [t.name, t.name], [else_out], axis=0)]
    elif choice == "empty":
        else_nodes = [helper.make_node("Slice", [t.name, b.init(np.array([0], np.int64)),
                                                 b.init(np.array([0], np.int64))], [else_out])]
    else:
        else_nodes = [helper.make_node("Unsqueeze", [t.name, b.init(np.array([0], np.int64))],
                                       [else_out])]
    tp = tensor_type(t.etype)
    out = b.add(Tensor(b.fresh("if"), t.etype, None))
    b.node("If", [cond], [out.name],
           then_branch=_branch("then", then_nodes, [(then_out, tp)]),
           else_branch=_branch("else", else_nodes, [(else_out, tp)]))
    b.tensor_output(out)
    b.features.add("If with shapes by condition")


def p_loop(b: Builder) -> None:
    # not of strings: ORT's Loop moves the strings out of an outer-scope tensor a body returns
    # through Identity as a scan output (later iterations get '', and so does the feed)
    known = [t for t in b.tensors if t.dims is not None and t.etype != STRING]
    t = b.pick(known) if known else b.data_input(FLOAT)
    m = b.value_input("trips", INT64, [], lambda env, rng: np.array(int(rng.integers(0, 4)),
                                                                   np.int64))
    tp = tensor_type(t.etype)
    carried = t.etype in (FLOAT, INT64)
    body_nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Identity", [t.name], ["scan_out"])]
    body_in = [helper.make_tensor_value_info("iter", INT64, []),
               helper.make_tensor_value_info("cond_in", BOOL, [])]
    body_out = [helper.make_tensor_value_info("cond_out", BOOL, [])]
    ins = [m, ""]
    outs = []
    if carried:
        body_in.append(helper.make_value_info("v_in", tp))
        body_nodes.append(helper.make_node("Add", ["v_in", t.name], ["v_out"]))
        body_out.append(helper.make_value_info("v_out", tp))
        ins.append(t.name)
        outs.append(b.fresh("loopv"))
    body_out.append(helper.make_value_info("scan_out", tp))
    outs.append(b.fresh("loops"))
    b.node("Loop", ins, outs, body=helper.make_graph(body_nodes, "body", body_in, body_out))
    for name in outs:
        b.add(Tensor(name, t.etype, None))
        b.output(name, tp)
    b.features.add("Loop with a count from an input")


def p_scan(b: Builder) -> None:
    known = [t for t in b.tensors if t.dims and t.etype == FLOAT]
    t = b.pick(known) if known else b.data_input(FLOAT, rank=int(b.rng.integers(1, 3)))
    state0 = b.fresh("s0")
    b.node("ReduceSum", [t.name, b.init(np.array([0], np.int64))], [state0], keepdims=0)
    tp = tensor_type(FLOAT)
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_in"], ["s_out"]),
         helper.make_node("Identity", ["x_in"], ["y_out"])], "scan_body",
        [helper.make_value_info("s_in", tp), helper.make_value_info("x_in", tp)],
        [helper.make_value_info("s_out", tp), helper.make_value_info("y_out", tp)])
    final, ys = b.fresh("sfinal"), b.fresh("sys")
    b.node("Scan", [state0, t.name], [final, ys], body=body, num_scan_inputs=1)
    for name in (final, ys):
        b.add(Tensor(name, FLOAT, None))
        b.output(name, tp)


def p_sequence(b: Builder) -> None:
    t = b.pick(b.tensors)
    out = b.fresh("seq")
    if t.dims and b.chance(0.5):
        b.node("SplitToSequence", [t.name], [out], keepdims=int(b.chance(0.5)))
    else:
        b.node("SequenceConstruct", [t.name] * int(b.rng.integers(1, 3)), [out])
    b.output(out, helper.make_sequence_type_proto(tensor_type(t.etype)))
    b.features.add("sequence output")


def p_map(b: Builder) -> None:
    n = b.dim()
    x = Tensor(b.fresh("probs"), FLOAT, [n, Const(3)])
    b.inputs.append(Input(x, [n.name, 3], lambda env, rng, feeds: _values(
        FLOAT, x.shape(env), rng)))
    out = b.fresh("zip")
    b.ml = True
    b.node("ZipMap", [x.name], [out], domain="ai.onnx.ml",
           classlabels_int64s=[10, 20, 30])
    b.output(out, helper.make_sequence_type_proto(
        helper.make_map_type_proto(INT64, tensor_type(FLOAT))))
    b.features.add("map output")


def p_optional(b: Builder) -> None:
    t = b.pick(b.tensors)
    tp = tensor_type(t.etype)
    out = b.fresh("opt")
    choice = b.pick(["empty", "full", "if"])
    if choice == "empty":
        b.node("Optional", [], [out], type=tp)
    elif choice == "full":
        b.node("Optional", [t.name], [out])
    else:
        cond = b.value_input("ocond", BOOL, [], lambda env, rng: np.array(rng.random() < 0.5))
        otp = helper.make_optional_type_proto(tp)
        b.node("If", [cond], [out],
               then_branch=_branch("full", [helper.make_node("Optional", [t.name], ["o1"])],
                                   [("o1", otp)]),
               else_branch=_branch("none", [helper.make_node("Optional", [], ["o2"], type=tp)],
                                   [("o2", otp)]))
    b.output(out, helper.make_optional_type_proto(tp))
    b.features.add("optional output")


def p_input_as_output(b: Builder) -> None:
    inputs = [i for i in b.inputs if i.twin_of is None]
    if not inputs:
        b.data_input()
        inputs = b.inputs
    i = b.pick(inputs)
    b.tensor_output(i.tensor)
    b.features.add("input as output")


def p_initializer_output(b: Builder) -> None:
    etype = b.pick([FLOAT, INT64, BOOL, F16, STRING])
    shape = b.pick([(), (0,), (1,), (3,), (2, 2)])
    rng = np.random.default_rng([*b.seed, 7])
    value = _values(etype, shape, rng)
    if etype == STRING:
        value = value.astype(object)
    name = b.init(value, "k")
    t = Tensor(name, etype, [Const(n) for n in shape])
    if b.chance(0.5):  # overridable: also an input, fed now and then
        b.overridable.append(name)
        b.features.add("overridable initializer output")
    else:
        b.features.add("constant output")
    b.add(t)
    b.tensor_output(t)


def p_twin(b: Builder) -> None:
    """An input with the same dims and dtype as another, fed the same array object."""
    sources = [i for i in b.inputs if i.twin_of is None and i.tensor.dims is not None]
    src = b.pick(sources) if sources else None
    if src is None:
        b.data_input()
        src = b.inputs[-1]
    st = src.tensor
    t = Tensor(b.fresh("twin"), st.etype, st.dims)
    b.inputs.append(Input(t, src.declared, lambda env, rng, feeds, n=st.name: feeds[n],
                          twin_of=st.name))
    b.tensors.append(t)
    out = b.add(Tensor(b.fresh("tw"), st.etype, st.dims))
    if st.etype in (FLOAT, INT64):
        b.node("Sub", [st.name, t.name], [out.name])
    else:
        b.node("Identity", [t.name], [out.name])
    b.tensor_output(out)
    b.features.add("one array fed to two inputs")


PRODUCERS: list[tuple[Callable[[Builder], None], float]] = [
    (p_unary, 2), (p_identity_chain, 2), (p_cast, 1.5), (p_binary, 1.5), (p_compare, 1),
    (p_reduce, 1.5), (p_shape, 1), (p_nonzero, 1.5), (p_unique, 1), (p_compress, 1),
    (p_slice, 1.5), (p_reshape, 1.5), (p_expand, 1), (p_tile, 1), (p_constant_of_shape, 1),
    (p_topk, 1), (p_range, 1), (p_concat, 1), (p_unsqueeze, 1), (p_if, 1.5), (p_loop, 1),
    (p_scan, 0.7), (p_sequence, 1), (p_map, 0.5), (p_optional, 1), (p_input_as_output, 1.5),
    (p_initializer_output, 1.5), (p_twin, 1),
]


# -- declared output shapes --------------------------------------------------------------------

def _declare(b: Builder, tp: Any, inferred: Any, first: Optional[tuple[int, ...]]) -> Any:
    """The output's type as the model declares it: the shape onnx infers, none, the first
    call's, or one that lies (an input's symbol for another size, another rank, one
    element); now and then another element type."""
    out = onnx.TypeProto()
    out.CopyFrom(tp)
    if out.WhichOneof("value") != "tensor_type":
        return out
    tt = out.tensor_type
    symbols = [d.name for d in b.dims] or ["n"]
    choice = b.pick(["inferred", "inferred", "none", "first", "mutated", "rank", "one"])
    dims: Optional[list[Any]]
    if choice == "inferred" and inferred is not None:
        dims = inferred
    elif choice == "first" and first is not None:
        dims = list(first)
        b.features.add("declared: first call's shape")
    elif choice == "mutated" and inferred is not None:
        dims = [b.pick([*symbols, None, 0, 1, 2, 3]) if b.chance(0.5) else d for d in inferred]
        b.features.add("declared: lying dims")
    elif choice == "rank":
        dims = [b.pick([*symbols, None, 1, 2]) for _ in range(int(b.rng.integers(0, 4)))]
        b.features.add("declared: random rank and dims")
    elif choice == "one":
        dims = b.pick([[], [1], [1, 1]])
        b.features.add("declared: one element")
    else:
        dims = None
    if dims is not None:
        tt.shape.CopyFrom(helper.make_tensor_type_proto(tt.elem_type, dims).tensor_type.shape)
    if b.chance(0.01):
        tt.elem_type = b.pick([e for e in (FLOAT, INT64, F16, BOOL) if e != tt.elem_type])
        b.features.add("declared: another element type")
    return out


def _inferred_dims(vi: Any) -> Optional[list[Any]]:
    tt = vi.type.tensor_type if vi.type.WhichOneof("value") == "tensor_type" else None
    if tt is None or not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else
            (d.dim_param if d.HasField("dim_param") else None) for d in tt.shape.dim]


# -- a case: a model and its calls -------------------------------------------------------------

@dataclass
class Case:
    seed: list[int]
    model: bytes
    inputs: list[Input]
    dims: list[Dim]
    calls: int
    names: list[Optional[list[str]]]  # requested outputs per call
    overridable: list[str]
    feed_overridable: list[bool]  # per call: feed the overridable initializers
    paths: list[str]
    tuning: str
    features: set[str] = field(default_factory=set)
    #: a call whose first numeric feed has another dtype than its input's (both refuse it)
    bad_call: Optional[int] = None
    #: the runs pass a RunOptions
    run_options: bool = False
    #: graph_optimization_level of every session (onnxruntime's and ortc's): None, the default
    optimization: Optional[int] = None

    def feeds(self, stream: int) -> list[dict[str, Any]]:
        """The canonical feeds of each call of ``stream`` (0: the main sequence; threads take
        their own): plain arrays, compared against; ``present`` passes them as the case says."""
        sizes = {d.name: d.sizes(stream, self.calls) for d in self.dims}
        out = []
        for k in range(self.calls):
            env = {n: s[k] for n, s in sizes.items()}
            feeds: dict[str, Any] = {}
            for j, inp in enumerate(self.inputs):
                same = inp.mode == "same"
                rng = np.random.default_rng([*self.seed, 1000 + stream, j] + ([] if same else [k]))
                feeds[inp.tensor.name] = inp.make(env, rng, feeds)
            if self.feed_overridable[k]:
                for name in self.overridable:
                    feeds[name] = self.override_value(name, k)
            if k == self.bad_call:
                for name, value in feeds.items():
                    if value.dtype in (np.float32, np.int64):
                        feeds[name] = value.astype(np.float64 if value.dtype == np.float32
                                                   else np.int32)
                        break
            out.append(feeds)
        return out

    def override_value(self, name: str, k: int) -> np.ndarray:
        model = onnx.load_from_string(self.model)
        init = next(i for i in model.graph.initializer if i.name == name)
        value = numpy_helper.to_array(init)
        rng = np.random.default_rng([*self.seed, 77, k])
        etype = init.data_type
        return _values(etype, value.shape, rng).astype(value.dtype) if etype != STRING \
            else _values(etype, value.shape, rng)

    def describe(self) -> str:
        model = onnx.load_from_string(self.model)
        modes = {i.tensor.name: i.mode for i in self.inputs}
        return (f"seed {self.seed}, tuning {self.tuning}, paths {self.paths}\n"
                f"dims {self.dims}\ninput modes {modes}\nnames per call {self.names}\n"
                f"feed overridable {self.feed_overridable}, bad call {self.bad_call}, "
                f"run options {self.run_options}, optimization {self.optimization}\n"
                + onnx.printer.to_text(model))


def make_case(seed: list[int]) -> Optional[Case]:
    rng = np.random.default_rng(seed)
    b = Builder(rng, seed)
    for _ in range(int(rng.integers(1, 3))):
        b.data_input()
    producers, weights = zip(*PRODUCERS)
    p = np.array(weights) / sum(weights)
    for _ in range(int(rng.integers(1, 5))):
        producers[int(rng.choice(len(producers), p=p))](b)
    if not b.outputs:
        p_unary(b)
    if b.chance(0.1):  # one tensor listed as two outputs
        b.outputs.append(b.pick(b.outputs))
        b.features.add("one tensor listed as two outputs")
    # the model, outputs typed without shapes: onnx infers them, then each is declared
    overridable_vis = []
    for name in b.overridable:
        init = next(i for i in b.inits if i.name == name)
        overridable_vis.append(helper.make_tensor_value_info(name, init.data_type,
                                                             list(init.dims)))
    graph_inputs = [helper.make_value_info(
        i.tensor.name, helper.make_tensor_type_proto(i.tensor.etype, i.declared))
        for i in b.inputs] + overridable_vis
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid("ai.onnx.ml", 3)]
                                                 if b.ml else [])

    def model_of(outputs: list[Any]) -> Any:
        graph = helper.make_graph(b.nodes, "g", graph_inputs, outputs, b.inits)
        return helper.make_model(graph, opset_imports=opsets, ir_version=8)

    plain = model_of([helper.make_value_info(n, tp) for n, tp in b.outputs])
    try:
        inferred = onnx.shape_inference.infer_shapes(plain, strict_mode=False)
        inferred_outs = {o.name: _inferred_dims(o) for o in inferred.graph.output}
    except Exception:  # noqa: BLE001 - an inference failure leaves nothing inferred
        inferred_outs = {}
    known = {t.name: t for t in b.tensors}
    first_env = {d.name: d.sizes(0, 1)[0] for d in b.dims}
    declared = []
    for name, tp in b.outputs:
        t = known.get(name)
        first = t.shape(first_env) if t is not None and t.dims is not None else None
        declared.append(helper.make_value_info(
            name, _declare(b, tp, inferred_outs.get(name), first)))
    model = model_of(declared).SerializeToString()

    # the calls
    calls = int(rng.integers(6, 15))
    for inp in b.inputs:
        fixed = inp.tensor.dims is not None and all(d.fixed for d in inp.tensor.dims)
        string = inp.tensor.etype == STRING
        if inp.twin_of is not None:
            inp.mode = "twice" if b.chance(0.7) else "fresh"
            continue
        modes = ["fresh", "fresh", "view", "strided", "fortran", "recycle", "feedback",
                 "value", "list"]
        if fixed:
            modes += ["same", "same", "mutate", "mutate"]
        if string:
            modes = ["fresh", "same", "value"] if fixed else ["fresh", "value"]
        inp.mode = b.pick(modes)
    for inp in b.inputs:
        if inp.twin_of is not None and inp.mode == "twice":
            src = next(i for i in b.inputs if i.tensor.name == inp.twin_of)
            if src.mode in ("strided", "fortran"):
                src.mode = "fresh"
    b.features.update(f"feeds {i.mode}" for i in b.inputs)
    all_names = [n for n, _ in b.outputs]
    unique = list(dict.fromkeys(all_names))

    def a_list() -> Optional[list[str]]:
        r = rng.random()
        if r < 0.4:
            return None
        if r < 0.7:
            return [unique[i] for i in rng.permutation(len(unique))[:rng.integers(1, len(unique) + 1)]]
        if r < 0.85:
            names = [b.pick(unique) for _ in range(int(rng.integers(1, 4)))]
            return names + [names[0]]  # a name asked for twice
        return list(all_names)

    pattern = b.pick(["fixed", "fixed", "alternate", "random"])
    lists = [a_list(), a_list()]
    names = [lists[0] if pattern == "fixed" else lists[k % 2] if pattern == "alternate"
             else a_list() for k in range(calls)]
    b.features.add(f"output lists {pattern}")
    if any(n is not None and len(set(n)) < len(n) for n in names):
        b.features.add("output name repeated")
    feed_overridable = [bool(b.overridable) and b.chance(0.5) for _ in range(calls)]
    paths = [p for p in PATHS if b.chance(0.6)] or ["run"]
    tuning = b.pick(list(TUNINGS))
    bad_call = int(rng.integers(1, calls)) if b.chance(0.1) else None
    if bad_call is not None:
        b.features.add("a call with a feed of another dtype")
    run_options = b.chance(0.2)
    if run_options:
        b.features.add("run options")
    optimization = b.pick([None, None, 0, 1])
    if optimization is not None:
        b.features.add(f"graph optimization level {optimization}")
    return Case(seed, model, b.inputs, b.dims, calls, names, b.overridable,
                feed_overridable, paths, tuning, b.features, bad_call, run_options,
                optimization)


# -- passing the feeds as the case says --------------------------------------------------------

class Presenter:
    """Turns canonical feeds into the objects a path passes: one per path and stream, so that
    'same', 'mutate' and 'recycle' hold their arrays (and memory) from call to call, and
    'feedback' passes an earlier result of the path (an output array fed back as an input,
    its values overwritten: that result is then no longer checked). The feeds' order in the
    dict changes from call to call."""

    def __init__(self, case: Case, stream: int = 0, native: bool = True) -> None:
        self.case = case
        #: a native path: 'value' passes an ortc.Value, 'list' Python lists (else arrays)
        self.native = native
        self.held: dict[str, np.ndarray] = {}
        self.pools = {i.tensor.name: [bytearray(4096), bytearray(4096)] for i in case.inputs}
        self.results: list[np.ndarray] = []  # earlier results 'feedback' may take
        self.consumed: list[np.ndarray] = []  # the results it took
        self.rng = np.random.default_rng([*case.seed, 3, stream])

    def offer(self, outputs: Any) -> None:
        for out in outputs or ():
            if type(out) is np.ndarray and out.dtype != object and out.flags.writeable \
                    and out.flags.c_contiguous and out.size:
                self.results.append(out)

    def __call__(self, k: int, feeds: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for inp in self.case.inputs:
            name = inp.tensor.name
            if name not in feeds:
                continue
            value = feeds[name]
            mode = inp.mode
            if k == self.case.bad_call and mode in ("list", "value"):
                mode = "fresh"  # (a list or a Value would carry the input's own dtype)
            if mode == "twice":
                out[name] = out[inp.twin_of] if inp.twin_of in out else value.copy()
                continue
            out[name] = self.present(name, mode, k, value)
        for name in self.case.overridable:
            if name in feeds:
                out[name] = feeds[name].copy()
        order = list(out)
        self.rng.shuffle(order)  # type: ignore[arg-type]
        return {n: out[n] for n in order}

    def present(self, name: str, mode: str, k: int, value: np.ndarray) -> np.ndarray:
        if mode in ("same", "mutate"):
            held = self.held.get(name)
            if held is None or held.shape != value.shape:
                held = self.held[name] = value.copy()
            elif held.dtype != value.dtype:
                return value.copy()  # (the call with a feed of another dtype)
            elif mode == "mutate" or not np.array_equal(held, value):
                held[...] = value  # (the values of a value input follow the shapes)
            return held
        if mode == "value" and self.native:
            return ortc.Value.from_numpy(value.copy())  # type: ignore[return-value]
        if mode == "list" and self.native and value.size and value.dtype != object:
            return value.tolist()  # type: ignore[return-value]
        if mode == "feedback":
            for j, result in enumerate(self.results):
                if result.dtype == value.dtype and result.shape == value.shape:
                    self.consumed.append(self.results.pop(j))
                    result[...] = value
                    return result
        if value.dtype == object or value.ndim == 0:
            return value.copy()
        if mode == "view":
            big = np.empty(value.size + 3, value.dtype)
            view = big[3:].reshape(value.shape)
            view[...] = value
            return view
        if mode == "strided" and value.size:
            big = np.empty(value.shape[:-1] + (2 * value.shape[-1],), value.dtype)
            view = big[..., ::2]
            view[...] = value
            return view
        if mode == "fortran":
            return np.asfortranarray(value)
        if mode == "recycle" and value.nbytes <= 4096:
            pool = self.pools[name][k % 2]
            arr = np.frombuffer(pool, value.dtype, value.size).reshape(value.shape)
            arr[...] = value
            return arr
        return value.copy()


# -- comparing ---------------------------------------------------------------------------------

def difference(want: Any, got: Any, where: str = "", skip: tuple[np.ndarray, ...] = ()
               ) -> Optional[str]:
    """Where ``got`` differs from onnxruntime's ``want``: type, dtype, shape, bytes (strings by
    value), lists and dicts item by item; arrays over the memory of one in ``skip`` (results
    fed back, which the caller wrote) are not compared."""
    if skip and isinstance(got, np.ndarray) and any(np.shares_memory(got, x) for x in skip):
        return None
    if isinstance(want, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"{where}: {type(got).__name__}, onnxruntime an array"
        if want.dtype.kind in "OU" or got.dtype.kind in "OU":
            if got.dtype.kind not in "OU" or want.shape != got.shape:
                return f"{where}: {got.dtype}{got.shape}, onnxruntime {want.dtype}{want.shape}"
            return None if want.tolist() == got.tolist() else f"{where}: strings differ"
        if want.dtype != got.dtype or want.shape != got.shape:
            return f"{where}: {got.dtype}{got.shape}, onnxruntime {want.dtype}{want.shape}"
        if want.tobytes() != np.ascontiguousarray(got).tobytes():
            return f"{where}: values differ: {got.ravel()[:8]} vs {want.ravel()[:8]}"
        return None
    if type(want) is not type(got):
        return f"{where}: {type(got).__name__}, onnxruntime {type(want).__name__}"
    if isinstance(want, list):
        if len(want) != len(got):
            return f"{where}: {len(got)} items, onnxruntime {len(want)}"
        for i, (w, g) in enumerate(zip(want, got)):
            d = difference(w, g, f"{where}[{i}]", skip)
            if d:
                return d
        return None
    if isinstance(want, dict):
        if list(want) != list(got):
            return f"{where}: keys {list(got)}, onnxruntime {list(want)}"
        for key in want:
            d = difference(want[key], got[key], f"{where}[{key!r}]")
            if d:
                return d
        return None
    return None if want == got else f"{where}: {got!r}, onnxruntime {want!r}"


def _copy(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, list):
        return [_copy(v) for v in x]
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    return x


# -- the paths ---------------------------------------------------------------------------------

@contextlib.contextmanager
def tuned(tuning: str) -> Iterator[None]:
    """ortc's value cache for one case: as shipped, or so small that it churns."""
    rn = ortc._run
    saved = rn._VALUE_CACHE_MAX
    try:
        if tuning == "eager":
            rn._VALUE_CACHE_MAX = 4
        yield
    finally:
        rn._VALUE_CACHE_MAX = saved


class Outcome:
    """One call's result: outputs, or the exception's class name."""

    def __init__(self, outputs: Any = None, error: Optional[BaseException] = None) -> None:
        self.outputs = outputs
        self.error = error

    def __repr__(self) -> str:
        return f"raised {type(self.error).__name__}: {self.error}" if self.error else "ok"


def _attempt(fn: Callable[[], Any]) -> Outcome:
    try:
        return Outcome(fn())
    except Exception as exc:  # noqa: BLE001 - compared with onnxruntime's outcome
        return Outcome(error=exc)


def _ort_session(case: Case, module: Any = None) -> Any:
    """An onnxruntime (or ``module``: ortc.compat) session of the case's model and options."""
    if module is None:
        import onnxruntime as module

        module.set_default_logger_severity(4)
    so = module.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    if case.optimization is not None:
        so.graph_optimization_level = module.GraphOptimizationLevel(case.optimization)
    return module.InferenceSession(case.model, so, providers=["CPUExecutionProvider"])


def _ortc_session(case: Case, threads: int = 1) -> Any:
    options: dict[str, Any] = {"intra_op_num_threads": threads}
    if case.optimization is not None:
        options["graph_optimization_level"] = ortc.GraphOptimizationLevel(case.optimization)
    return ortc.Session(case.model, **options)


def _values_out(values: list[Any]) -> list[Any]:
    out = []
    for v in values:
        if v is None:
            out.append(None)
        else:
            py = v.to_python()
            out.append(py)
    return out


def _bound_run(s: Any, binding: Any, names: Optional[list[str]], feeds: dict[str, Any],
               arrays: dict[str, np.ndarray]) -> list[Any]:
    """One run through an IoBinding: the feeds bound, the asked outputs bound to the caller's
    arrays (``arrays``: name -> an array of the shape onnxruntime's run gave) or to ORT's
    allocation; the results copied (the next run writes the same memory)."""
    binding.clear_binding_inputs()
    binding.clear_binding_outputs()
    for name, value in feeds.items():
        binding.bind_input(name, value)
    asked = names or [a.name for a in s.outputs]
    for name in dict.fromkeys(asked):
        if name in arrays:
            binding.bind_output(name, np.empty_like(arrays[name]))
        else:
            binding.bind_output(name)
    s.run_with_binding(binding)
    got = dict(zip(binding.output_names(), _copy(binding.get_outputs())))
    return [got[n] for n in asked]


def _ort_bound_run(sess: Any, names: Optional[list[str]], feeds: dict[str, Any],
                   arrays: dict[str, np.ndarray], binding: Any = None) -> list[Any]:
    """onnxruntime's IoBinding run with the same outputs bound to arrays (the expected outcome
    when a bound array's shape is one the model's declaration refuses); with ``sess`` an
    ortc.compat session and ``binding`` its IOBinding, the same calls through ortc.compat."""
    if binding is None:
        import onnxruntime as ort

        binding = sess.io_binding()
    else:
        import ortc.compat as ort  # type: ignore[no-redef]

        binding.clear_binding_inputs()
        binding.clear_binding_outputs()
    for name, value in feeds.items():
        binding.bind_cpu_input(name, value.copy(order="C"))  # (ascontiguousarray makes 0-d 1-d)
    asked = names or [a.name for a in sess.get_outputs()]
    for name in dict.fromkeys(asked):
        if name in arrays:
            binding.bind_ortvalue_output(name, ort.OrtValue.ortvalue_from_numpy(
                np.empty_like(arrays[name])))
        else:
            binding.bind_output(name, "cpu")
    sess.run_with_iobinding(binding)
    got = dict(zip(dict.fromkeys(asked), binding.copy_outputs_to_cpu()))
    return [got[n] for n in asked]


def _bound_arrays(names: Optional[list[str]], all_names: list[str], want: Outcome,
                  feeds: dict[str, Any], overridable: list[str], rng: Any, share: float = 0.5
                  ) -> dict[str, np.ndarray]:
    """Which outputs a bound run gives arrays of its own (about half the numeric tensors,
    never with a string feed, which onnxruntime's binding refuses, nor beside an output that is
    no numeric tensor: onnxruntime's binding crashes copying an empty optional or a string
    tensor out, nor with an initializer fed, which it refuses to bind)."""
    if want.outputs is None or any(v.dtype == object for v in feeds.values()) \
            or any(n in feeds for n in overridable) \
            or not all(isinstance(w, np.ndarray) and w.dtype.kind not in "OU"
                       for w in want.outputs):
        return {}
    return {n: w for n, w in zip(names or all_names, want.outputs)
            if isinstance(w, np.ndarray) and w.dtype.kind not in "OU" and rng.random() < share}


def _check(case: Case, path: str, k: int, want: Outcome, got: Outcome,
           faults: list[str], given: Optional[dict[str, Any]] = None) -> None:
    """Compare one call's outcome; with ``given`` (the objects fed), also hold the results to
    what onnxruntime's are: writeable arrays of their own, never over a feed's memory."""
    where = f"{path} call {k} names {case.names[k]}"
    if got.outputs is not None and not isinstance(got.outputs, list):
        faults.append(f"{where}: a {type(got.outputs).__name__}, not a list")
        return
    if want.error is not None or got.error is not None:
        if (want.error is None) != (got.error is None):
            faults.append(f"{where}: ortc {got!r}, onnxruntime {want!r}")
        return
    d = difference(want.outputs, got.outputs, "outputs")
    if d:
        faults.append(f"{where}: {d}")
    if given is not None:
        fed = [v for v in given.values() if isinstance(v, np.ndarray)]
        for i, out in enumerate(got.outputs):
            if isinstance(out, np.ndarray) and out.dtype != object:
                if not out.flags.writeable:
                    faults.append(f"{where}: outputs[{i}] is read-only")
                if any(np.shares_memory(out, x) for x in fed):
                    faults.append(f"{where}: outputs[{i}] is over a feed's memory")


def run_case(case: Case, paths: Optional[list[str]] = None) -> tuple[str, list[str]]:
    """('ok' | 'refused' (onnxruntime refuses the model, and ortc too), faults) for a case."""
    import ortc.compat as compat

    faults: list[str] = []
    try:
        ort_sess = _ort_session(case)
    except Exception:  # noqa: BLE001 - a model onnxruntime refuses: ortc must refuse it too
        try:
            _ortc_session(case)
        except ortc.OrtError:
            return "refused", []
        return "ok", ["ortc loaded a model onnxruntime refuses"]
    streams = {0: case.feeds(0)}
    if "threads" in (paths or case.paths):
        streams.update({s: case.feeds(s) for s in (1, 2, 3)})
    expected = {s: [_attempt(lambda f=f, k=k: ort_sess.run(case.names[k], {
        n: v.copy() for n, v in f.items()})) for k, f in enumerate(feeds)]
        for s, feeds in streams.items()}
    with tuned(case.tuning):
        for path in paths or case.paths:
            try:
                _run_path(case, path, streams, expected, faults, compat, ort_sess)
            except Exception:  # noqa: BLE001 - reported as a fault of the path
                faults.append(f"{path}: {traceback.format_exc(limit=6)}")
    return "ok", faults


def _run_path(case: Case, path: str, streams: dict[int, list[dict[str, Any]]],
              expected: dict[int, list[Outcome]], faults: list[str], compat: Any,
              ort_sess: Any) -> None:
    rng = np.random.default_rng([*case.seed, 5])
    if path == "threads":
        return _run_threads(case, streams, expected, faults)
    if path.startswith("compat"):
        try:
            cs = _ort_session(case, compat)
        except Exception as exc:  # noqa: BLE001
            faults.append(f"{path}: compat refused a model onnxruntime loads: {exc}")
            return
        compat_binding = cs.io_binding()  # one for every call, as an application keeps it
    else:
        try:
            s = _ortc_session(case, 2 if path in ("async", "mixed") else 1)
        except ortc.OrtError as exc:
            faults.append(f"{path}: ortc refused a model onnxruntime loads: {exc}")
            return
        binding = s.io_binding() if path in ("binding", "mixed") else None
    present = Presenter(case, native=not path.startswith("compat"))
    kept: list[tuple[int, Outcome, Outcome]] = []
    # run options, now and then: a stage's run then goes through Stage.call
    options = ortc.RunOptions() if case.run_options else None
    compat_options = compat.RunOptions() if case.run_options else None
    for k, feeds in enumerate(streams[0]):
        names: Any = case.names[k]
        if names is not None and rng.random() < 0.3:
            names = tuple(names)  # (a tuple is its own key in the engine's caches)
        given = present(k, feeds)
        want = expected[0][k]
        how = path
        if path == "mixed":
            how = ["run", "run", "values", "async", "binding"][int(rng.integers(5))]
        if how == "run":
            got = _attempt(lambda: s.run(names, given, options))
        elif how == "values":
            got = _attempt(lambda: _values_out(s.run_with_values(names, given)))
        elif how == "async":
            got = _attempt(lambda: s.run_async(names, given, options).result(timeout=60))
        elif how == "binding":
            arrays = _bound_arrays(names, [a.name for a in s.outputs], want, feeds,
                                   case.overridable, rng)
            if arrays:
                want = _attempt(lambda: _ort_bound_run(ort_sess, names, feeds, arrays))
            bound = {n: v if isinstance(v, (np.ndarray, ortc.Value)) else feeds[n]
                     for n, v in given.items()}  # (a binding takes no Python data)
            got = _attempt(lambda: _bound_run(s, binding, names, bound, arrays))
        elif how == "compat":
            got = _attempt(lambda: cs.run(names, given, compat_options))
        elif any(v.dtype == object for v in given.values()):
            continue  # onnxruntime makes no OrtValue of strings, nor binds them
        elif how == "compat_binding":
            arrays = _bound_arrays(names, [a.name for a in cs.get_outputs()], want, feeds,
                                   case.overridable, rng, 1.0)
            if not arrays:
                continue  # (onnxruntime's binding crashes on other outputs)
            arrays = {n: a for n, a in arrays.items() if rng.random() < 0.5}
            want = _attempt(lambda: _ort_bound_run(ort_sess, names, feeds, arrays))
            got = _attempt(lambda: _ort_bound_run(cs, names, given, arrays, compat_binding))
        else:  # compat_values
            def by_values() -> list[Any]:
                values = {n: compat.OrtValue.ortvalue_from_numpy(v) for n, v in given.items()}
                out = cs.run_with_ort_values(names, values)
                return [None if v is None or not v.has_value() else
                        v.numpy() if v.is_tensor() else _OPAQUE for v in out]
            got = _attempt(by_values)
            if got.outputs is not None and want.outputs is not None:
                want = Outcome([_OPAQUE if not (w is None or isinstance(w, np.ndarray)) else w
                                for w in want.outputs])
        _check(case, f"{path}({how})" if path == "mixed" else path, k, want, got, faults,
               given if how in ("run", "values", "async", "compat", "compat_values") else None)
        kept.append((k, want, got))
        present.offer(got.outputs)
    skip = tuple(present.consumed)
    for k, want, got in kept:  # no later call may have changed an earlier call's result
        if got.outputs is not None and want.outputs is not None:
            d = difference(want.outputs, got.outputs, "outputs", skip)
            if d:
                faults.append(f"{path} call {k}, read after the last call: {d}")
    if not path.startswith("compat"):
        faults.extend(_cache_faults(s, path))


_OPAQUE = "a sequence or map value"


def _cache_faults(s: Any, path: str) -> list[str]:
    """The cached values (every session's) whose shape is not their key's (a value ORT
    reshaped would be found by a later feed or buffer at its address)."""
    from ortc._numpy_bridge import tensor_shape_and_type
    from ortc._run import _value_caches

    faults = []
    for cache in list(_value_caches.values()):
        for (_address, shape, _et), owner in list(cache.items()):
            made = tensor_shape_and_type(s._engine.api, owner)[1]
            if made != shape:
                faults.append(f"{path}: a cached value of shape {made} under the key {shape}")
    return faults


def _run_threads(case: Case, streams: dict[int, list[dict[str, Any]]],
                 expected: dict[int, list[Outcome]], faults: list[str]) -> None:
    s = _ortc_session(case)
    barrier = threading.Barrier(3)

    def work(stream: int) -> None:
        present = Presenter(case, stream)
        kept = []
        try:
            barrier.wait(10)
        except threading.BrokenBarrierError:
            pass
        for k, feeds in enumerate(streams[stream]):
            names = case.names[k]
            given = present(k, feeds)
            got = _attempt(lambda: s.run(names, given))
            _check(case, f"threads[{stream}]", k, expected[stream][k], got, faults, given)
            kept.append((k, got))
            present.offer(got.outputs)
        skip = tuple(present.consumed)
        for k, got in kept:
            want = expected[stream][k]
            if got.outputs is not None and want.outputs is not None:
                d = difference(want.outputs, got.outputs, "outputs", skip)
                if d:
                    faults.append(f"threads[{stream}] call {k}, read after the last call: {d}")

    threads = [threading.Thread(target=work, args=(i,)) for i in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    faults.extend(_cache_faults(s, "threads"))


# -- the test and the command line -------------------------------------------------------------

def run_many(seed: int, cases: int, start: int = 0, out: Any = None
             ) -> tuple[dict[str, int], list[tuple[int, list[str]]]]:
    stats = {"ok": 0, "refused": 0, "unbuildable": 0, "faulty": 0}
    failed = []
    for i in range(start, start + cases):
        try:
            case = make_case([seed, i])
        except Exception:  # noqa: BLE001 - the generator's own failure: counted, not a fault
            if out is not None:
                print(f"case {i}: generator failed: {traceback.format_exc(limit=3)}", file=out)
            stats["unbuildable"] += 1
            continue
        assert case is not None
        status, faults = run_case(case)
        stats[status] += 1
        if faults:
            stats["faulty"] += 1
            failed.append((i, faults))
            if out is not None:
                print(f"case {i} ({sorted(case.features)}):\n  " + "\n  ".join(faults[:6]),
                      file=out, flush=True)
    return stats, failed


def test_every_run_path_agrees_with_onnxruntime_on_random_graphs() -> None:
    """A few seconds by default; ``ORTC_DIFF_CASES=5000`` (and another ``ORTC_DIFF_SEED``)
    for a longer run."""
    seed = int(os.environ.get("ORTC_DIFF_SEED", "0"))
    cases = int(os.environ.get("ORTC_DIFF_CASES", "200"))
    stats, failed = run_many(seed, cases)
    report = [f"case {i} (seed {seed}): " + "; ".join(f[:3]) for i, f in failed[:10]]
    assert not failed, (f"{len(failed)} of {cases} cases differ from onnxruntime (rerun one: "
                        f"python tests/test_differential.py --seed {seed} --case N --show)\n"
                        + "\n".join(report))
    assert stats["unbuildable"] == 0, stats  # (python tests/test_differential.py prints why)
    assert stats["ok"] >= cases * 0.8, stats  # most graphs are ones onnxruntime runs


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--case", type=int, help="run this one case")
    parser.add_argument("--show", action="store_true", help="print the case's graph and calls")
    args = parser.parse_args(argv)
    if args.case is not None:
        case = make_case([args.seed, args.case])
        assert case is not None
        if args.show:
            print(case.describe())
        status, faults = run_case(case)
        print(status, *faults, sep="\n")
        return 1 if faults else 0
    stats, failed = run_many(args.seed, args.cases, args.start, sys.stdout)
    print(stats)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
