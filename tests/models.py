"""Small ONNX model builders for the ortc test-suite.

Every model is built in-process with ``onnx.helper`` / ``onnx.numpy_helper``;
nothing is ever downloaded.  Every builder returns the serialized model
(``bytes``), ready to be handed to ``ortc.Session`` or
``onnxruntime.InferenceSession``.

Defaults: ``opset=21`` for the default domain and ``ir_version=10`` so that
ONNX Runtime 1.16+ can load the models (the builders take ``opset`` and
``ir_version`` keyword arguments to override this).  Models that use the
``ai.onnx.ml`` domain import it at ``ml_opset`` (3 by default).

Naming conventions (unless a docstring says otherwise): single-input models
take ``"x"`` and produce ``"y"``.

The second half of the module is the *operator zoo*: :func:`zoo_cases`
returns a list of :class:`Case` ``(name, model, feeds)`` covering well over
a hundred distinct operators across the dtypes ONNX Runtime's CPU provider
implements for them.  Every case in the zoo has been checked to load and run
(deterministically) with onnxruntime 1.32 on the CPU provider; combinations
that ORT does not implement are left out rather than marked as skipped.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Iterable, NamedTuple, Sequence

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

T = TensorProto

DEFAULT_OPSET = 21
DEFAULT_IR_VERSION = 10
DEFAULT_ML_OPSET = 3

#: locale for every StringNormalizer node.  ORT's default (en_US.UTF-8) is often
#: not installed (minimal containers), and then session creation fails -- with
#: ORT 1.32 repeated failures even abort the process.  C.UTF-8 is always there
#: and still case-maps non-ASCII letters.
STRING_LOCALE = "C.UTF-8"

__all__ = [
    "DEFAULT_OPSET",
    "DEFAULT_IR_VERSION",
    "DEFAULT_ML_OPSET",
    "Case",
    "ELEM_TYPE_TO_NP",
    "IDENTITY_ELEM_TYPES",
    "PACKED_4BIT_ELEM_TYPES",
    "elem_type_of",
    "np_dtype_of",
    "sample_array",
    "make_model",
    "add_model",
    "endless_model",
    "loop_chain_model",
    "loop_iterations_for",
    "identity_model",
    "identity_cases",
    "matmul_model",
    "mlp_model",
    "matmul_chain_model",
    "symbolic_dim_model",
    "none_dim_model",
    "unknown_rank_model",
    "multi_io_model",
    "overridable_initializer_model",
    "metadata_model",
    "sequence_construct_model",
    "sequence_at_model",
    "split_to_sequence_model",
    "concat_from_sequence_model",
    "sequence_identity_model",
    "zipmap_model",
    "dict_vectorizer_model",
    "castmap_model",
    "optional_model",
    "optional_input_model",
    "empty_optional_model",
    "external_data_model",
    "EXTERNAL_DATA_PLACES",
    "zoo_cases",
    "zoo_operators",
]


# ---------------------------------------------------------------------------
# dtype helpers
# ---------------------------------------------------------------------------

#: TensorProto element type -> numpy dtype (ml_dtypes for the exotic ones).
ELEM_TYPE_TO_NP: dict[int, np.dtype] = {
    T.FLOAT: np.dtype(np.float32),
    T.UINT8: np.dtype(np.uint8),
    T.INT8: np.dtype(np.int8),
    T.UINT16: np.dtype(np.uint16),
    T.INT16: np.dtype(np.int16),
    T.INT32: np.dtype(np.int32),
    T.INT64: np.dtype(np.int64),
    T.STRING: np.dtype(object),
    T.BOOL: np.dtype(np.bool_),
    T.FLOAT16: np.dtype(np.float16),
    T.DOUBLE: np.dtype(np.float64),
    T.UINT32: np.dtype(np.uint32),
    T.UINT64: np.dtype(np.uint64),
    T.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    T.FLOAT8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    T.FLOAT8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    T.FLOAT8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    T.FLOAT8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    T.UINT4: np.dtype(ml_dtypes.uint4),
    T.INT4: np.dtype(ml_dtypes.int4),
    T.FLOAT4E2M1: np.dtype(ml_dtypes.float4_e2m1fn),
}

_NP_TO_ELEM_TYPE: dict[np.dtype, int] = {v: k for k, v in ELEM_TYPE_TO_NP.items()}
_NP_TO_ELEM_TYPE[np.dtype(np.str_)] = T.STRING

#: Element types that ORT stores packed two-per-byte.
PACKED_4BIT_ELEM_TYPES = (T.INT4, T.UINT4)

#: Element types for which ORT 1.32's CPU provider can run ``identity_model``
#: (COMPLEX64/128 are not registered in ORT; FLOAT4E2M1 and newer types have
#: no CPU kernels for any data-movement op).  INT4/UINT4 have no Identity
#: kernel, so ``identity_model`` uses an identity ``Transpose`` for them.
IDENTITY_ELEM_TYPES: tuple[int, ...] = (
    T.FLOAT,
    T.UINT8,
    T.INT8,
    T.UINT16,
    T.INT16,
    T.INT32,
    T.INT64,
    T.STRING,
    T.BOOL,
    T.FLOAT16,
    T.DOUBLE,
    T.UINT32,
    T.UINT64,
    T.BFLOAT16,
    T.FLOAT8E4M3FN,
    T.FLOAT8E4M3FNUZ,
    T.FLOAT8E5M2,
    T.FLOAT8E5M2FNUZ,
    T.UINT4,
    T.INT4,
)


def elem_type_of(dtype: Any) -> int:
    """TensorProto element type for a numpy / ml_dtypes dtype (or an int)."""
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return int(dtype)
    dt = np.dtype(dtype)
    if dt.kind == "U":
        return T.STRING
    try:
        return _NP_TO_ELEM_TYPE[dt]
    except KeyError:
        raise TypeError(f"no ONNX element type for numpy dtype {dt!r}") from None


def np_dtype_of(elem_type: Any) -> np.dtype:
    """numpy dtype for a TensorProto element type (or a dtype-like)."""
    if isinstance(elem_type, (int, np.integer)) and not isinstance(elem_type, bool):
        return ELEM_TYPE_TO_NP[int(elem_type)]
    return np.dtype(elem_type)


def _dtname(dtype: Any) -> str:
    dt = np_dtype_of(dtype)
    return "string" if dt == np.dtype(object) else dt.name


_STRINGS = np.array(
    ["", "a", "abc", "Hello", "WORLD", "été", "日本語", "x y z", "tab\tsep", "0", "-1.5", "42"],
    dtype=object,
)


def sample_array(dtype: Any, shape: Sequence[int], seed: int = 0, kind: str = "normal") -> np.ndarray:
    """Deterministic sample data of ``dtype`` (numpy/ml_dtypes dtype or elem type).

    ``kind``: ``"normal"`` (signed, moderate), ``"pos"`` (strictly positive),
    ``"unit"`` (inside (-1, 1)), ``"ge1"`` (>= 1), ``"small"`` (small ints,
    also as floats), ``"special"`` (floats incl. nan/inf/-0/huge/tiny).
    """
    dt = np_dtype_of(dtype)
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in shape)
    size = int(np.prod(shape, dtype=np.int64))
    if dt == np.dtype(object):
        return np.asarray(rng.choice(_STRINGS, size=shape)).astype(object)
    if dt == np.dtype(np.bool_):
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind in "iu" and dt.itemsize >= 1 and dt in (
        np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
    ):
        if kind == "pos":
            lo, hi = 1, 10
        elif kind == "small":
            lo, hi = 0, 8
        elif dt.kind == "u":
            lo, hi = 0, 50
        else:
            lo, hi = -50, 50
        return np.asarray(rng.integers(lo, hi, size=shape)).astype(dt)
    if dt in (np.dtype(ml_dtypes.int4),):
        return np.asarray(rng.integers(-8, 8, size=shape)).astype(dt)
    if dt in (np.dtype(ml_dtypes.uint4),):
        return np.asarray(rng.integers(0, 16, size=shape)).astype(dt)
    # floating point (numpy or ml_dtypes)
    if kind == "pos":
        v = rng.uniform(0.1, 5.0, size=shape)
    elif kind == "unit":
        v = rng.uniform(-0.95, 0.95, size=shape)
    elif kind == "ge1":
        v = rng.uniform(1.0, 6.0, size=shape)
    elif kind == "small":
        v = rng.integers(0, 8, size=shape) + rng.choice([0.0, 0.25, 0.5, 0.75], size=shape)
    elif kind == "halves":
        v = rng.integers(-8, 8, size=shape) / 2.0
    elif kind == "special":
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-30, 3.0e38, -7e5, 0.5, -2.5, 65504.0, 448.0, 1e-7])
        v = rng.choice(specials, size=shape)
        flat = v.reshape(-1)
        flat[: min(size, len(specials))] = specials[: min(size, len(specials))]
    else:
        v = rng.standard_normal(size=shape) * 3.0
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(v).astype(dt)


# ---------------------------------------------------------------------------
# generic model construction
# ---------------------------------------------------------------------------


def _opsets(opset: int, ml_opset: int | None, extra: dict[str, int] | None = None):
    ops = [helper.make_opsetid("", opset)]
    if ml_opset is not None:
        ops.append(helper.make_opsetid("ai.onnx.ml", ml_opset))
    for dom, ver in (extra or {}).items():
        ops.append(helper.make_opsetid(dom, ver))
    return ops


def _value_type(value: Any, shape: Sequence[Any] | None = None) -> onnx.TypeProto:
    """ONNX TypeProto describing a feed value (array, list -> sequence, dict -> map, None)."""
    if isinstance(value, onnx.TypeProto):
        return value
    if isinstance(value, dict):
        k0, v0 = next(iter(value.items()))
        kt = T.STRING if isinstance(k0, str) else T.INT64
        vt = T.STRING if isinstance(v0, str) else (T.INT64 if isinstance(v0, (int, np.integer)) else T.FLOAT)
        return helper.make_map_type_proto(kt, helper.make_tensor_type_proto(vt, []))
    if isinstance(value, list):
        first = value[0]
        inner = _value_type(first)
        if inner.HasField("tensor_type"):
            # element shapes may differ: declare the rank only
            rank = np.asarray(first).ndim
            inner = helper.make_tensor_type_proto(inner.tensor_type.elem_type, [None] * rank)
        return helper.make_sequence_type_proto(inner)
    arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    return helper.make_tensor_type_proto(elem_type_of(arr.dtype), list(arr.shape) if shape is None else list(shape))


def _tensor(name: str, arr: Any, dtype: Any = None) -> onnx.TensorProto:
    a = np.asarray(arr) if dtype is None else np.asarray(arr).astype(np_dtype_of(dtype))
    return numpy_helper.from_array(a, name)


def make_model(
    nodes: Iterable[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto | str],
    initializers: Sequence[onnx.TensorProto] = (),
    *,
    opset: int = DEFAULT_OPSET,
    ir_version: int = DEFAULT_IR_VERSION,
    ml_opset: int | None = None,
    extra_opsets: dict[str, int] | None = None,
    graph_name: str = "g",
    infer: bool = True,
    check: bool = True,
    **model_kwargs: Any,
) -> onnx.ModelProto:
    """Assemble a ModelProto.

    ``outputs`` may mix ValueInfoProtos and plain names; plain names get their
    type from ONNX shape inference (only the element type / rank is kept, the
    dims are left symbolic-free so no runtime shape check can trip).
    """
    out_vis: list[onnx.ValueInfoProto] = []
    untyped: list[str] = []
    for o in outputs:
        if isinstance(o, str):
            out_vis.append(helper.make_value_info(o, onnx.TypeProto()))
            untyped.append(o)
        else:
            out_vis.append(o)
    graph = helper.make_graph(list(nodes), graph_name, list(inputs), out_vis, list(initializers))
    model = helper.make_model(
        graph, opset_imports=_opsets(opset, ml_opset, extra_opsets), ir_version=ir_version, **model_kwargs
    )
    if untyped and infer:
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        except onnx.shape_inference.InferenceError:
            # some function ops (e.g. MeanVarianceNormalization) trip strict mode
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
        by_name = {o.name: o for o in inferred.graph.output}
        for o in model.graph.output:
            if o.name in untyped:
                t = by_name[o.name].type
                if not t.WhichOneof("value"):
                    raise ValueError(f"could not infer the type of output {o.name!r}")
                o.type.CopyFrom(t)
                _strip_dims(o.type)
    if check:
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError as exc:
            # Unknown-rank tensors (no ``shape`` field) are legal for ONNX Runtime
            # but the checker insists on the field; anything else is a real error.
            if "Field 'shape' of 'type' is required" not in str(exc):
                raise
    return model


def _strip_dims(tp: onnx.TypeProto) -> None:
    """Replace inferred symbolic dims (``unk__N``) with unknown dims."""
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        if tp.tensor_type.HasField("shape"):
            for d in tp.tensor_type.shape.dim:
                if d.HasField("dim_param"):
                    d.ClearField("dim_param")
    elif which == "sequence_type":
        _strip_dims(tp.sequence_type.elem_type)
    elif which == "optional_type":
        _strip_dims(tp.optional_type.elem_type)
    elif which == "map_type":
        _strip_dims(tp.map_type.value_type)


def _bytes(model: onnx.ModelProto) -> bytes:
    return model.SerializeToString()


def _vi(name: str, elem_type: Any, shape: Sequence[Any] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type_of(elem_type), None if shape is None else list(shape))


# ---------------------------------------------------------------------------
# simple builders
# ---------------------------------------------------------------------------


def add_model(dtype: Any = np.float32, shape: Sequence[Any] = (1,), *, opset: int = DEFAULT_OPSET,
              ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """``c = a + b``; inputs ``"a"``, ``"b"``, output ``"c"``, all of ``dtype`` / ``shape``."""
    et = elem_type_of(dtype)
    return _bytes(
        make_model(
            [helper.make_node("Add", ["a", "b"], ["c"])],
            [_vi("a", et, shape), _vi("b", et, shape)],
            [_vi("c", et, shape)],
            opset=opset,
            ir_version=ir_version,
        )
    )


def identity_model(elem_type: Any, shape: Sequence[Any] | None = (2, 3), *, opset: int = DEFAULT_OPSET,
                   ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """``y = x`` for any element type in :data:`IDENTITY_ELEM_TYPES`.

    INT4/UINT4 have no CPU ``Identity`` kernel in ORT, so for them the model
    is a ``Transpose`` with the identity permutation (same semantics).
    ``shape=None`` declares an unknown-rank tensor.
    """
    et = elem_type_of(elem_type)
    if et in PACKED_4BIT_ELEM_TYPES:
        if shape is None:
            raise ValueError("4-bit identity needs a known rank")
        node = helper.make_node("Transpose", ["x"], ["y"], perm=list(range(len(shape))))
    else:
        node = helper.make_node("Identity", ["x"], ["y"])
    return _bytes(
        make_model([node], [_vi("x", et, shape)], [_vi("y", et, shape)], opset=opset, ir_version=ir_version)
    )


def identity_cases() -> list["Case"]:
    """One identity case per (supported element type, shape) incl. scalars and empties."""
    cases = []
    for et in IDENTITY_ELEM_TYPES:
        name = _dtname(et)
        for shape, seed in (((2, 3), 1), ((), 2), ((0, 4), 3), ((7,), 4), ((2, 1, 3, 2), 5)):
            if et in PACKED_4BIT_ELEM_TYPES and shape == ():
                shape = (1,)
            kind = "special" if np_dtype_of(et).kind == "f" or et in (
                T.BFLOAT16, T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ) else "normal"
            x = sample_array(et, shape, seed=seed, kind=kind)
            sid = "x".join(map(str, shape)) or "scalar"
            cases.append(Case(f"identity_{name}_{sid}", identity_model(et, shape), {"x": x}))
    return cases


def matmul_model(m: Any = 2, k: Any = 3, n: Any = 4, dtype: Any = np.float32, *, opset: int = DEFAULT_OPSET,
                 ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """``y = a @ b`` with inputs ``"a"`` [m, k] and ``"b"`` [k, n]; dims may be ints or names."""
    et = elem_type_of(dtype)
    return _bytes(
        make_model(
            [helper.make_node("MatMul", ["a", "b"], ["y"])],
            [_vi("a", et, [m, k]), _vi("b", et, [k, n])],
            [_vi("y", et, [m, n])],
            opset=opset,
            ir_version=ir_version,
        )
    )


def mlp_model(layers: int = 3, width: int = 16, batch: Any = "batch", *, seed: int = 0,
              dtype: Any = np.float32, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """MLP ``x`` [batch, width] -> ``y`` [batch, width]: (MatMul + Add + Relu) * layers.

    Weights ``w{i}``/``b{i}`` are fixed seeded initializers; ``batch`` may be an
    int, a symbolic name or ``None``.
    """
    et = elem_type_of(dtype)
    dt = np_dtype_of(dtype)
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    cur = "x"
    for i in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(dt)
        b = (rng.standard_normal((width,)) * 0.1).astype(dt)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("MatMul", [cur, f"w{i}"], [f"mm{i}"]))
        last = i == layers - 1
        nodes.append(helper.make_node("Add", [f"mm{i}", f"b{i}"], ["y" if last else f"pre{i}"]))
        if not last:
            nodes.append(helper.make_node("Relu", [f"pre{i}"], [f"h{i}"]))
            cur = f"h{i}"
    return _bytes(
        make_model(nodes, [_vi("x", et, [batch, width])], [_vi("y", et, [batch, width])], inits,
                   opset=opset, ir_version=ir_version)
    )


def matmul_chain_model(n: int = 512, size: int = 256, *, seed: int = 0, opset: int = DEFAULT_OPSET,
                       ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Deliberately slow model: ``x`` [size, size] float32 -> ``y``; ``n`` chained
    ``MatMul``s (each followed by ``Tanh`` to keep values bounded) sharing one
    seeded weight (so the model stays ~0.3 MB).  Cost is 2*n*size**3 FLOP: the
    default (n=512, size=256) is ~17 GFLOP, about 0.2 s on one AVX-512 core and
    up to ~1 s on slower ones.  The weight's gain (1.5) keeps activations O(1)
    all along the chain (no decay into denormals)."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((size, size)) * (1.5 / np.sqrt(size))).astype(np.float32)
    nodes = []
    cur = "x"
    for i in range(n):
        out = "y" if i == n - 1 else f"t{i}"
        nodes.append(helper.make_node("MatMul", [cur, "w"], [f"m{i}"]))
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [out]))
        cur = out
    return _bytes(
        make_model(nodes, [_vi("x", T.FLOAT, [size, size])], [_vi("y", T.FLOAT, [size, size])],
                   [numpy_helper.from_array(w, "w")], opset=opset, ir_version=ir_version)
    )


def loop_chain_model(size: int = 256, *, iterations: int | None = None, seed: int = 0,
                     opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """A run whose length the test chooses, not the CPU: ``x`` [size, size] float32 -> ``y``
    through one ``Loop`` whose body is ``Tanh(x @ w)``.  With ``iterations=None`` the trip count
    is the int64 scalar input ``n`` (see :func:`loop_iterations_for`); otherwise it is built in.
    ORT checks RunOptions' terminate flag between the body's runs, so a terminate, a deadline or
    Ctrl-C stops it within one iteration (well under a millisecond at size 256)."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((size, size)) * (1.5 / np.sqrt(size))).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("MatMul", ["x_in", "w"], ["m"]),
         helper.make_node("Tanh", ["m"], ["x_out"])],
        "body",
        [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), _vi("x_in", T.FLOAT, [size, size])],
        [_vi("cond_out", T.BOOL, []), _vi("x_out", T.FLOAT, [size, size])])
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(True), "cond")]
    inputs = [_vi("x", T.FLOAT, [size, size])]
    if iterations is None:
        inputs.append(_vi("n", T.INT64, []))
    else:
        inits.append(numpy_helper.from_array(np.array(iterations, np.int64), "n"))
    return _bytes(make_model([helper.make_node("Loop", ["n", "cond", "x"], ["y"], body=body)],
                             inputs, [_vi("y", T.FLOAT, [size, size])], inits,
                             opset=opset, ir_version=ir_version))


def endless_model(size: int = 256) -> bytes:
    """:func:`loop_chain_model` with 2**62 iterations: a run that lasts until it is stopped, on
    any machine (a fixed chain of MatMuls finishes early on a fast core and the test then
    measures nothing)."""
    return loop_chain_model(size, iterations=2 ** 62)


def loop_iterations_for(session: Any, seconds: float, size: int = 256) -> int:
    """The trip count ``n`` that makes a :func:`loop_chain_model` session run about ``seconds``
    on this machine now (timed on a short run; load only makes the real run longer)."""
    import time

    x = np.ones((size, size), np.float32)
    probe = 50
    t0 = time.perf_counter()
    session.run(None, {"x": x, "n": np.array(probe, np.int64)})
    per_iteration = max((time.perf_counter() - t0) / probe, 1e-6)
    return max(probe, int(seconds / per_iteration))


def symbolic_dim_model(*, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """``y = x * 2`` with ``x``/``y`` float32 of shape ["batch", 4]."""
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    return _bytes(
        make_model([helper.make_node("Mul", ["x", "two"], ["y"])],
                   [_vi("x", T.FLOAT, ["batch", 4])], [_vi("y", T.FLOAT, ["batch", 4])], [two],
                   opset=opset, ir_version=ir_version)
    )


def none_dim_model(*, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """``y = x + 1`` with ``x``/``y`` float32 of shape [None, 3] (dim with neither value nor name)."""
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    return _bytes(
        make_model([helper.make_node("Add", ["x", "one"], ["y"])],
                   [_vi("x", T.FLOAT, [None, 3])], [_vi("y", T.FLOAT, [None, 3])], [one],
                   opset=opset, ir_version=ir_version)
    )


def unknown_rank_model(*, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """``y = Abs(x)`` float32 with no shape at all (unknown rank) on input and output."""
    return _bytes(
        make_model([helper.make_node("Abs", ["x"], ["y"])],
                   [_vi("x", T.FLOAT, None)], [_vi("y", T.FLOAT, None)], opset=opset, ir_version=ir_version)
    )


def multi_io_model(*, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Three inputs of different kinds, four outputs.

    inputs:  ``"x"`` float32 [2, 3], ``"n"`` int64 ["batch"], ``"s"`` string [2]
    outputs: ``"sum"`` float32 [2, 3] (x + x), ``"count"`` int64 [] (ReduceSum n),
             ``"upper"`` string [2] (StringNormalizer UPPER), ``"mask"`` bool [2, 3] (x > 0)
    """
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    nodes = [
        helper.make_node("Add", ["x", "x"], ["sum"]),
        helper.make_node("ReduceSum", ["n"], ["count"], keepdims=0),
        helper.make_node("StringNormalizer", ["s"], ["upper"], case_change_action="UPPER",
                         locale=STRING_LOCALE),
        helper.make_node("Greater", ["x", "zero"], ["mask"]),
    ]
    return _bytes(
        make_model(
            nodes,
            [_vi("x", T.FLOAT, [2, 3]), _vi("n", T.INT64, ["batch"]), _vi("s", T.STRING, [2])],
            [_vi("sum", T.FLOAT, [2, 3]), _vi("count", T.INT64, []), _vi("upper", T.STRING, [2]),
             _vi("mask", T.BOOL, [2, 3])],
            [zero],
            opset=opset,
            ir_version=ir_version,
        )
    )


def overridable_initializer_model(*, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """``y = x + bias`` where ``bias`` (float32 [3], default [1, 2, 3]) is an
    initializer that is *also* a graph input, so it may be fed to override it."""
    bias = numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "bias")
    return _bytes(
        make_model([helper.make_node("Add", ["x", "bias"], ["y"])],
                   [_vi("x", T.FLOAT, [3]), _vi("bias", T.FLOAT, [3])], [_vi("y", T.FLOAT, [3])], [bias],
                   opset=opset, ir_version=ir_version)
    )


def metadata_model(
    *,
    producer_name: str = "ortc-tests",
    producer_version: str = "1.2.3",
    domain: str = "org.ortc.test",
    doc_string: str = "A model with metadata.",
    graph_name: str = "metadata_graph",
    graph_doc_string: str = "The graph's description.",
    model_version: int = 42,
    custom: dict[str, str] | None = None,
    opset: int = DEFAULT_OPSET,
    ir_version: int = DEFAULT_IR_VERSION,
) -> bytes:
    """Identity float32 [1] model carrying producer, domain, description, graph
    name / description, version and custom metadata props (default
    ``{"author": "ortc", "license": "MIT", "unicode": "été ✓"}``)."""
    custom = {"author": "ortc", "license": "MIT", "unicode": "été ✓"} if custom is None else custom
    model = make_model(
        [helper.make_node("Identity", ["x"], ["y"])],
        [_vi("x", T.FLOAT, [1])],
        [_vi("y", T.FLOAT, [1])],
        opset=opset,
        ir_version=ir_version,
        graph_name=graph_name,
        producer_name=producer_name,
        producer_version=producer_version,
        domain=domain,
        doc_string=doc_string,
        model_version=model_version,
    )
    model.graph.doc_string = graph_doc_string
    helper.set_model_props(model, dict(custom))
    return _bytes(model)


# ---------------------------------------------------------------------------
# sequences, maps, optionals
# ---------------------------------------------------------------------------


def _seq_vi(name: str, elem_type: Any, rank: int | None = None) -> onnx.ValueInfoProto:
    shape = None if rank is None else [None] * rank
    return helper.make_value_info(
        name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem_type_of(elem_type), shape)))


def sequence_construct_model(dtype: Any = np.float32, *, opset: int = DEFAULT_OPSET,
                             ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Tensors ``"a"``, ``"b"``, ``"c"`` (any shapes, one dtype) -> sequence output ``"seq"``."""
    et = elem_type_of(dtype)
    return _bytes(
        make_model([helper.make_node("SequenceConstruct", ["a", "b", "c"], ["seq"])],
                   [_vi("a", et, None), _vi("b", et, None), _vi("c", et, None)],
                   [_seq_vi("seq", et)], opset=opset, ir_version=ir_version)
    )


def sequence_at_model(dtype: Any = np.float32, *, opset: int = DEFAULT_OPSET,
                      ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Sequence input ``"seq"`` + int64 scalar ``"i"`` -> ``"y"`` = seq[i] and ``"len"`` = len(seq)."""
    et = elem_type_of(dtype)
    return _bytes(
        make_model([helper.make_node("SequenceAt", ["seq", "i"], ["y"]),
                    helper.make_node("SequenceLength", ["seq"], ["len"])],
                   [_seq_vi("seq", et), _vi("i", T.INT64, [])],
                   [_vi("y", et, None), _vi("len", T.INT64, [])], opset=opset, ir_version=ir_version)
    )


def split_to_sequence_model(dtype: Any = np.float32, axis: int = 0, *, opset: int = DEFAULT_OPSET,
                            ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """``"x"`` -> sequence ``"seq"`` of its slices along ``axis`` (keepdims=1, chunks of 1)."""
    et = elem_type_of(dtype)
    return _bytes(
        make_model([helper.make_node("SplitToSequence", ["x"], ["seq"], axis=axis)],
                   [_vi("x", et, None)], [_seq_vi("seq", et)], opset=opset, ir_version=ir_version)
    )


def concat_from_sequence_model(dtype: Any = np.float32, axis: int = 0, new_axis: int = 0, *,
                               opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Sequence input ``"seq"`` -> ``"y"`` = ConcatFromSequence(seq, axis, new_axis)."""
    et = elem_type_of(dtype)
    return _bytes(
        make_model([helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=axis, new_axis=new_axis)],
                   [_seq_vi("seq", et)], [_vi("y", et, None)], opset=opset, ir_version=ir_version)
    )


def sequence_identity_model(dtype: Any = np.float32, *, opset: int = DEFAULT_OPSET,
                            ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Sequence input ``"seq"`` -> sequence output ``"out"`` (Identity on the sequence)
    plus ``"more"`` = seq with a copy of its first element appended (SequenceInsert)."""
    et = elem_type_of(dtype)
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    return _bytes(
        make_model([helper.make_node("Identity", ["seq"], ["out"]),
                    helper.make_node("SequenceAt", ["seq", "zero"], ["first"]),
                    helper.make_node("SequenceInsert", ["seq", "first"], ["more"])],
                   [_seq_vi("seq", et)], [_seq_vi("out", et), _seq_vi("more", et)], [zero],
                   opset=opset, ir_version=ir_version)
    )


def _seq_map_vi(name: str, key_type: int, value_type: int = T.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_value_info(
        name,
        helper.make_sequence_type_proto(
            helper.make_map_type_proto(key_type, helper.make_tensor_type_proto(value_type, []))),
    )


def _map_vi(name: str, key_type: int, value_type: int) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, helper.make_map_type_proto(key_type, helper.make_tensor_type_proto(value_type, [])))


def zipmap_model(labels: Sequence[int] | Sequence[str] = (10, 20, 30), *, opset: int = DEFAULT_OPSET,
                 ml_opset: int = DEFAULT_ML_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """float32 ``"x"`` [N, len(labels)] -> ``"y"``: sequence of maps label -> float
    (``ai.onnx.ml`` ZipMap).  Integer labels give map(int64, float), string
    labels map(string, float)."""
    labels = list(labels)
    if all(isinstance(v, str) for v in labels):
        attrs, kt = {"classlabels_strings": labels}, T.STRING
    else:
        attrs, kt = {"classlabels_int64s": [int(v) for v in labels]}, T.INT64
    return _bytes(
        make_model([helper.make_node("ZipMap", ["x"], ["y"], domain="ai.onnx.ml", **attrs)],
                   [_vi("x", T.FLOAT, [None, len(labels)])], [_seq_map_vi("y", kt)],
                   opset=opset, ml_opset=ml_opset, ir_version=ir_version)
    )


def dict_vectorizer_model(vocabulary: Sequence[int] | Sequence[str] = (1, 2, 3, 5), *,
                          opset: int = DEFAULT_OPSET, ml_opset: int = DEFAULT_ML_OPSET,
                          ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Map input ``"x"`` (int64 -> float or string -> float) -> float32 ``"y"`` [1, len(vocab)]
    (``ai.onnx.ml`` DictVectorizer)."""
    vocab = list(vocabulary)
    if all(isinstance(v, str) for v in vocab):
        attrs, kt = {"string_vocabulary": vocab}, T.STRING
    else:
        attrs, kt = {"int64_vocabulary": [int(v) for v in vocab]}, T.INT64
    return _bytes(
        make_model([helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml", **attrs)],
                   [_map_vi("x", kt, T.FLOAT)], [_vi("y", T.FLOAT, [1, len(vocab)])],
                   opset=opset, ml_opset=ml_opset, ir_version=ir_version)
    )


def castmap_model(max_map: int = 5, cast_to: str = "TO_INT64", *, opset: int = DEFAULT_OPSET,
                  ml_opset: int = DEFAULT_ML_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Map input ``"x"`` (int64 -> float) -> ``"y"`` [1, max_map] (``ai.onnx.ml`` CastMap, SPARSE form).

    ``cast_to`` is ``"TO_FLOAT"``, ``"TO_INT64"`` or ``"TO_STRING"``.
    """
    out_t = {"TO_FLOAT": T.FLOAT, "TO_INT64": T.INT64, "TO_STRING": T.STRING}[cast_to]
    return _bytes(
        make_model([helper.make_node("CastMap", ["x"], ["y"], domain="ai.onnx.ml", cast_to=cast_to,
                                     map_form="SPARSE", max_map=max_map)],
                   [_map_vi("x", T.INT64, T.FLOAT)], [_vi("y", out_t, [1, max_map])],
                   opset=opset, ml_opset=ml_opset, ir_version=ir_version)
    )


def optional_model(*, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """float32 ``"x"`` [2] -> ``"opt"`` (optional(tensor), Optional(x)), ``"has"`` (bool scalar,
    OptionalHasElement) and ``"y"`` (OptionalGetElement, == x)."""
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(T.FLOAT, [2]))
    return _bytes(
        make_model([helper.make_node("Optional", ["x"], ["opt"]),
                    helper.make_node("OptionalHasElement", ["opt"], ["has"]),
                    helper.make_node("OptionalGetElement", ["opt"], ["y"])],
                   [_vi("x", T.FLOAT, [2])],
                   [helper.make_value_info("opt", opt_t), _vi("has", T.BOOL, []), _vi("y", T.FLOAT, [2])],
                   opset=opset, ir_version=ir_version)
    )


def optional_input_model(*, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """Optional(tensor(float)) input ``"opt"`` [2] -> bool scalar ``"has"`` (OptionalHasElement).
    Feeding ``None`` or omitting ``"opt"`` gives False."""
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(T.FLOAT, [2]))
    return _bytes(
        make_model([helper.make_node("OptionalHasElement", ["opt"], ["has"])],
                   [helper.make_value_info("opt", opt_t)], [_vi("has", T.BOOL, [])],
                   opset=opset, ir_version=ir_version)
    )


def empty_optional_model(*, opset: int = DEFAULT_OPSET, ir_version: int = DEFAULT_IR_VERSION) -> bytes:
    """float32 ``"x"`` [2] (unused except for ``"y"`` = x) -> ``"none"``: an *empty*
    optional(tensor(float)) output (onnxruntime returns ``None`` for it)."""
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(T.FLOAT, [2]))
    return _bytes(
        make_model([helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(T.FLOAT, [2])),
                    helper.make_node("Identity", ["x"], ["y"])],
                   [_vi("x", T.FLOAT, [2])], [helper.make_value_info("none", opt_t), _vi("y", T.FLOAT, [2])],
                   opset=opset, ir_version=ir_version)
    )


def _external_tensor(name: str, location: str, n: int, elem_type: int = T.UINT8,
                     offset: int = 0) -> onnx.TensorProto:
    t = TensorProto(name=name, data_type=elem_type, dims=[n], data_location=T.EXTERNAL)
    t.external_data.add(key="location", value=location)
    if offset:
        t.external_data.add(key="offset", value=str(offset))
    return t


#: where :func:`external_data_model` puts the tensor stored outside the model
EXTERNAL_DATA_PLACES = ("initializer", "subgraph", "sparse", "constant", "function",
                        "training")


def external_data_model(location: str, n: int = 8, *, place: str = "initializer",
                        opset: int = 17, ir_version: int = 8) -> bytes:
    """No inputs -> uint8 ``"y"`` [n], the bytes of a tensor whose data is in the file
    ``location`` (an external-data entry, not checked here: the tests give escapes).

    ``place``: where the tensor is: a main-graph ``"initializer"``; an initializer of an If's
    branches (``"subgraph"``, the condition an initializer true); the values of a
    ``"sparse"`` initializer (all n elements listed); a Constant node's ``"constant"`` value;
    a Constant inside a model-local ``"function"`` the graph calls; the initialization graph
    of ``"training"`` info (ORT ignores it; the main graph is a plain Identity of n zeros)."""
    y = _vi("y", T.UINT8, [n])
    functions = []
    training = []
    extra_opsets: dict[str, int] = {}
    inits: list[onnx.TensorProto] = []
    sparse: list[onnx.SparseTensorProto] = []
    if place == "initializer":
        inits, nodes = [_external_tensor("w", location, n)], [helper.make_node("Identity", ["w"], ["y"])]
    elif place == "subgraph":
        def branch(tag: str) -> onnx.GraphProto:
            return helper.make_graph([helper.make_node("Identity", [f"w_{tag}"], [f"y_{tag}"])],
                                     tag, [], [_vi(f"y_{tag}", T.UINT8, [n])],
                                     [_external_tensor(f"w_{tag}", location, n)])
        inits = [numpy_helper.from_array(np.array(True), "cond")]
        nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=branch("then"),
                                  else_branch=branch("else"))]
    elif place == "sparse":
        values = _external_tensor("w", location, n)
        indices = numpy_helper.from_array(np.arange(n, dtype=np.int64), "w_indices")
        sparse = [helper.make_sparse_tensor(values, indices, [n])]
        nodes = [helper.make_node("Identity", ["w"], ["y"])]
    elif place == "constant":
        nodes = [helper.make_node("Constant", [], ["y"], value=_external_tensor("w", location, n))]
    elif place == "function":
        body = [helper.make_node("Constant", [], ["c"], value=_external_tensor("w", location, n))]
        functions = [helper.make_function("local", "Weights", [], ["c"], body,
                                          [helper.make_opsetid("", opset)])]
        extra_opsets = {"local": 1}
        nodes = [helper.make_node("Weights", [], ["y"], domain="local")]
    elif place == "training":
        inits = [numpy_helper.from_array(np.zeros(n, np.uint8), "w")]
        nodes = [helper.make_node("Identity", ["w"], ["y"])]
        init_graph = helper.make_graph([], "init", [], [], [_external_tensor("v", location, n)])
        training = [onnx.TrainingInfoProto(initialization=init_graph)]
    else:
        raise ValueError(f"unknown place {place!r}")
    graph = helper.make_graph(nodes, "g", [], [y], inits, sparse_initializer=sparse)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets.items()]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=ir_version, functions=functions)
    model.training_info.extend(training)
    return _bytes(model)


# ---------------------------------------------------------------------------
# operator zoo
# ---------------------------------------------------------------------------


class Case(NamedTuple):
    """One zoo case: a test id, serialized model and the feeds to run it with."""

    name: str
    model: bytes
    feeds: dict[str, Any]


N = helper.make_node

F = (np.float32, np.float64, np.float16)
SI = (np.int8, np.int16, np.int32, np.int64)
UI = (np.uint8, np.uint16, np.uint32, np.uint64)
INTS = SI + UI
NUM = F + INTS
BF16 = ml_dtypes.bfloat16
F8 = (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz)
STR = object
#: every element type that can travel through a data-movement op in ORT
ALL_TYPES = NUM + (np.bool_, STR, BF16) + F8


_COLLECT_BUILD_ERRORS: list | None = None


class _Zoo:
    def __init__(self) -> None:
        self.cases: list[Case] = []
        self._names: set[str] = set()

    def add(self, name: str, nodes: Sequence[onnx.NodeProto], feeds: dict[str, Any],
            outputs: Sequence[Any], inits: dict[str, Any] | None = None, *, opset: int = DEFAULT_OPSET,
            ml_opset: int | None = None, input_types: dict[str, onnx.TypeProto] | None = None,
            ir_version: int = DEFAULT_IR_VERSION) -> None:
        if name in self._names:
            raise ValueError(f"duplicate zoo case {name!r}")
        self._names.add(name)
        input_types = input_types or {}
        inputs = [helper.make_value_info(k, input_types.get(k) or _value_type(v)) for k, v in feeds.items()]
        initializers = [_tensor(k, v) for k, v in (inits or {}).items()]
        uses_ml = any(n.domain == "ai.onnx.ml" for n in nodes)
        if uses_ml and ml_opset is None:
            ml_opset = DEFAULT_ML_OPSET
        try:
            model = make_model(nodes, inputs, outputs, initializers, opset=opset, ml_opset=ml_opset,
                               ir_version=ir_version, graph_name=name)
        except Exception as exc:  # pragma: no cover - surfaced when building the zoo
            if _COLLECT_BUILD_ERRORS is not None:
                _COLLECT_BUILD_ERRORS.append((name, repr(exc)[:300]))
                return
            raise ValueError(f"zoo case {name!r} failed to build: {exc}") from exc
        self.cases.append(Case(name, _bytes(model), feeds))


def _x(dtype: Any, shape: Sequence[int] = (3, 4), seed: int = 0, kind: str = "normal") -> np.ndarray:
    return sample_array(dtype, shape, seed=seed, kind=kind)


def _i64(v: Any) -> np.ndarray:
    return np.asarray(v, dtype=np.int64)


def _f32(v: Any) -> np.ndarray:
    return np.asarray(v, dtype=np.float32)


def _unary(z: _Zoo) -> None:
    table: list[tuple[str, Sequence[Any], str, dict[str, Any]]] = [
        ("Abs", NUM, "normal", {}),
        ("Neg", F + SI, "normal", {}),
        ("Sqrt", F, "pos", {}),
        ("Exp", F, "normal", {}),
        ("Log", F, "pos", {}),
        ("Reciprocal", F, "pos", {}),
        ("Floor", F, "normal", {}),
        ("Ceil", F, "normal", {}),
        ("Round", F, "halves", {}),
        ("Sign", NUM, "normal", {}),
        ("Sin", F, "normal", {}),
        ("Cos", F, "normal", {}),
        ("Tan", F, "unit", {}),
        ("Asin", F, "unit", {}),
        ("Acos", F, "unit", {}),
        ("Atan", F, "normal", {}),
        ("Sinh", F, "unit", {}),
        ("Cosh", F, "unit", {}),
        ("Asinh", F, "normal", {}),
        ("Acosh", F, "ge1", {}),
        ("Atanh", F, "unit", {}),
        ("Erf", F, "normal", {}),
        ("Relu", F + SI, "normal", {}),
        ("Sigmoid", F, "normal", {}),
        ("Tanh", F, "normal", {}),
        ("Softplus", F, "normal", {}),
        ("Softsign", F, "normal", {}),
        ("Elu", F, "normal", {"alpha": 0.5}),
        ("Selu", F, "normal", {}),
        ("Celu", F, "normal", {"alpha": 1.5}),
        ("LeakyRelu", F, "normal", {"alpha": 0.1}),
        ("ThresholdedRelu", F, "normal", {"alpha": 0.5}),
        ("HardSigmoid", F, "normal", {"alpha": 0.3, "beta": 0.4}),
        ("HardSwish", F, "normal", {}),
        ("Mish", F, "normal", {}),
        ("Gelu", F, "normal", {}),
        ("Shrink", NUM, "normal", {"lambd": 1.5, "bias": 0.5}),
        ("Softmax", F, "normal", {"axis": -1}),
        ("LogSoftmax", F, "normal", {"axis": -1}),
        ("Hardmax", F, "normal", {"axis": -1}),
        ("BitwiseNot", INTS, "normal", {}),
        ("Identity", ALL_TYPES, "normal", {}),
    ]
    for op, dtypes, kind, attrs in table:
        for i, dt in enumerate(dtypes):
            x = _x(dt, (3, 4), seed=i, kind=kind)
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["x"], ["y"], **attrs)], {"x": x}, ["y"])
    # attribute variants
    z.add("Gelu_tanh_float32", [N("Gelu", ["x"], ["y"], approximate="tanh")], {"x": _x(np.float32)}, ["y"])
    for op in ("Softmax", "LogSoftmax", "Hardmax"):
        z.add(f"{op}_axis0_float32", [N(op, ["x"], ["y"], axis=0)], {"x": _x(np.float32, (3, 4, 2))}, ["y"])
    z.add("Not_bool", [N("Not", ["x"], ["y"])], {"x": _x(np.bool_)}, ["y"])
    # special values (nan / inf / -0 / subnormal / huge)
    for op in ("Abs", "Neg", "Exp", "Log", "Sqrt", "Floor", "Ceil", "Round", "Sign", "Reciprocal", "Relu",
               "Sigmoid", "Tanh", "Erf", "Sin", "Softplus", "IsNaN", "IsInf"):
        for dt in (np.float32, np.float64):
            z.add(f"{op}_special_{_dtname(dt)}", [N(op, ["x"], ["y"])], {"x": _x(dt, (4, 5), kind="special")}, ["y"])
    z.add("IsNaN_float16", [N("IsNaN", ["x"], ["y"])], {"x": _x(np.float16, (4, 5), kind="special")}, ["y"])
    z.add("IsInf_negonly_float32", [N("IsInf", ["x"], ["y"], detect_positive=0)],
          {"x": _x(np.float32, (4, 5), kind="special")}, ["y"])
    z.add("Softmax_special_float32", [N("Softmax", ["x"], ["y"])], {"x": _x(np.float32, (4, 5), kind="special")},
          ["y"])


def _binary(z: _Zoo) -> None:
    for op in ("Add", "Sub", "Mul", "Div"):
        for i, dt in enumerate(NUM):
            a = _x(dt, (3, 4), seed=i, kind="small" if np.dtype(dt).kind == "u" else "normal")
            b = _x(dt, (4,), seed=100 + i, kind="pos" if op in ("Div",) else "small")
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["a", "b"], ["c"])], {"a": a, "b": b}, ["c"])
        z.add(f"{op}_bcast3d_float32", [N(op, ["a", "b"], ["c"])],
              {"a": _x(np.float32, (2, 1, 4), 1), "b": _x(np.float32, (3, 1), 2, kind="pos")}, ["c"])
        z.add(f"{op}_special_float32", [N(op, ["a", "b"], ["c"])],
              {"a": _x(np.float32, (4, 5), 3, kind="special"), "b": _x(np.float32, (4, 5), 4, kind="special")}, ["c"])
    for op in ("Add", "Mul"):
        z.add(f"{op}_bfloat16", [N(op, ["a", "b"], ["c"])], {"a": _x(BF16, (3, 4), 5), "b": _x(BF16, (3, 4), 6)},
              ["c"])
    for ta, tb in ((np.float32, np.float32), (np.float64, np.float64), (np.float32, np.int64),
                   (np.float32, np.int32), (np.int32, np.int32), (np.int64, np.int64), (np.int64, np.float32),
                   (np.float64, np.int64), (np.float16, np.float16), (np.int32, np.float32)):
        a = _x(ta, (3, 4), 7, kind="pos" if np.dtype(ta).kind == "f" else "small")
        b = _x(tb, (3, 4), 8, kind="small")
        z.add(f"Pow_{_dtname(ta)}_{_dtname(tb)}", [N("Pow", ["a", "b"], ["c"])], {"a": a, "b": b}, ["c"])
    for i, dt in enumerate(INTS):
        a = _x(dt, (3, 4), 10 + i)
        b = _x(dt, (3, 4), 20 + i, kind="pos")
        z.add(f"Mod_{_dtname(dt)}", [N("Mod", ["a", "b"], ["c"])], {"a": a, "b": b}, ["c"])
        z.add(f"Mod_fmod_{_dtname(dt)}", [N("Mod", ["a", "b"], ["c"], fmod=1)], {"a": a, "b": b}, ["c"])
    for i, dt in enumerate(F):
        z.add(f"Mod_fmod_{_dtname(dt)}", [N("Mod", ["a", "b"], ["c"], fmod=1)],
              {"a": _x(dt, (3, 4), 30 + i), "b": _x(dt, (3, 4), 40 + i, kind="pos")}, ["c"])
    for op in ("Max", "Min"):
        for i, dt in enumerate(NUM):
            feeds = {"a": _x(dt, (3, 4), i), "b": _x(dt, (4,), 50 + i), "c": _x(dt, (3, 1), 60 + i)}
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["a", "b", "c"], ["y"])], feeds, ["y"])
        z.add(f"{op}_special_float32", [N(op, ["a", "b"], ["y"])],
              {"a": _x(np.float32, (4, 5), 1, kind="special"), "b": _x(np.float32, (4, 5), 2, kind="special")}, ["y"])
    for op in ("Sum", "Mean"):
        for i, dt in enumerate(F):
            feeds = {"a": _x(dt, (3, 4), i), "b": _x(dt, (4,), 50 + i), "c": _x(dt, (3, 1), 60 + i)}
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["a", "b", "c"], ["y"])], feeds, ["y"])
    for i, dt in enumerate(UI):
        for direction in ("LEFT", "RIGHT"):
            z.add(f"BitShift_{direction.lower()}_{_dtname(dt)}", [N("BitShift", ["a", "b"], ["c"], direction=direction)],
                  {"a": _x(dt, (3, 4), i), "b": _x(dt, (3, 4), 9 + i, kind="small")}, ["c"])
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        for i, dt in enumerate(INTS):
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["a", "b"], ["c"])], {"a": _x(dt, (3, 4), i), "b": _x(dt, (4,), 70 + i)},
                  ["c"])
    for op in ("And", "Or", "Xor"):
        z.add(f"{op}_bool", [N(op, ["a", "b"], ["c"])], {"a": _x(np.bool_, (3, 4), 1), "b": _x(np.bool_, (4,), 2)},
              ["c"])
    for op in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"):
        types = NUM + ((np.bool_, STR) if op == "Equal" else ())
        for i, dt in enumerate(types):
            a = _x(dt, (3, 4), i, kind="small")
            b = _x(dt, (4,), 80 + i, kind="small")
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["a", "b"], ["c"])], {"a": a, "b": b}, ["c"])
        z.add(f"{op}_special_float32", [N(op, ["a", "b"], ["c"])],
              {"a": _x(np.float32, (4, 5), 1, kind="special"), "b": _x(np.float32, (4, 5), 2, kind="special")}, ["c"])
    z.add("PRelu_float32", [N("PRelu", ["x", "slope"], ["y"])],
          {"x": _x(np.float32), "slope": _x(np.float32, (4,), 1)}, ["y"])
    for i, dt in enumerate(F + (np.int32, np.int64)):
        z.add(f"PRelu_{_dtname(dt)}_init", [N("PRelu", ["x", "slope"], ["y"])], {"x": _x(dt, (3, 4), i)}, ["y"],
              {"slope": _x(dt, (4,), 5 + i)})
    for i, dt in enumerate(NUM + (np.bool_, STR, BF16)):
        feeds = {"cond": _x(np.bool_, (3, 4), i), "a": _x(dt, (3, 4), 10 + i), "b": _x(dt, (4,), 20 + i)}
        z.add(f"Where_{_dtname(dt)}", [N("Where", ["cond", "a", "b"], ["y"])], feeds, ["y"])
    for i, dt in enumerate(NUM):
        lo, hi = (np.array(-2, dt), np.array(3, dt)) if np.dtype(dt).kind != "u" else (np.array(2, dt), np.array(30, dt))
        z.add(f"Clip_{_dtname(dt)}", [N("Clip", ["x", "lo", "hi"], ["y"])], {"x": _x(dt, (3, 4), i)}, ["y"],
              {"lo": lo, "hi": hi})
    z.add("Clip_nomin_float32", [N("Clip", ["x", "", "hi"], ["y"])], {"x": _x(np.float32)}, ["y"],
          {"hi": np.array(1.0, np.float32)})


def _reductions(z: _Zoo) -> None:
    ops = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
    for op in ops:
        for i, dt in enumerate(F + (np.int32, np.int64, np.uint8, np.int8)):
            kind = "pos" if op == "ReduceLogSum" else ("small" if np.dtype(dt).kind in "iu" else "normal")
            x = _x(dt, (2, 3, 4), i, kind=kind)
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["x", "axes"], ["y"], keepdims=1)], {"x": x}, ["y"],
                  {"axes": _i64([1])})
        x = _x(np.float32, (2, 3, 4), 9, kind="pos")
        z.add(f"{op}_axes02_nokeep_float32", [N(op, ["x", "axes"], ["y"], keepdims=0)], {"x": x}, ["y"],
              {"axes": _i64([0, -1])})
        z.add(f"{op}_all_float32", [N(op, ["x"], ["y"], keepdims=0)], {"x": x}, ["y"])
    z.add("ReduceSum_noop_float32", [N("ReduceSum", ["x", "axes"], ["y"], noop_with_empty_axes=1)],
          {"x": _x(np.float32, (2, 3))}, ["y"], {"axes": _i64([])})
    z.add("ReduceSum_empty_float32", [N("ReduceSum", ["x", "axes"], ["y"], keepdims=1)],
          {"x": np.zeros((2, 0, 3), np.float32)}, ["y"], {"axes": _i64([1])})
    for op in ("ArgMax", "ArgMin"):
        for i, dt in enumerate(NUM):
            x = _x(dt, (3, 4, 5), i, kind="small")
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["x"], ["y"], axis=1)], {"x": x}, ["y"])
        x = _x(np.float32, (3, 4, 5), 3, kind="small")
        z.add(f"{op}_last_nokeep_float32", [N(op, ["x"], ["y"], axis=-1, keepdims=0, select_last_index=1)],
              {"x": x}, ["y"])


def _nn(z: _Zoo) -> None:
    f32 = np.float32
    # Conv family
    for i, dt in enumerate(F):
        z.add(f"Conv_{_dtname(dt)}", [N("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])],
              {"x": _x(dt, (1, 2, 5, 5), i)}, ["y"], {"w": _x(dt, (4, 2, 3, 3), 10 + i), "b": _x(dt, (4,), 20 + i)})
    z.add("Conv_strided_dilated_grouped_float32",
          [N("Conv", ["x", "w"], ["y"], strides=[2, 1], dilations=[1, 2], group=2, auto_pad="NOTSET",
             pads=[0, 1, 1, 0])],
          {"x": _x(f32, (2, 4, 7, 6), 1), "w": _x(f32, (6, 2, 3, 2), 2)}, ["y"])
    z.add("Conv_1d_same_float32", [N("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2])],
          {"x": _x(f32, (1, 3, 9), 3)}, ["y"], {"w": _x(f32, (2, 3, 4), 4)})
    z.add("Conv_3d_float32", [N("Conv", ["x", "w"], ["y"])], {"x": _x(f32, (1, 1, 4, 4, 4), 5)}, ["y"],
          {"w": _x(f32, (2, 1, 2, 2, 2), 6)})
    z.add("ConvTranspose_float32", [N("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], output_padding=[1, 1])],
          {"x": _x(f32, (1, 2, 3, 3), 7)}, ["y"], {"w": _x(f32, (2, 3, 3, 3), 8), "b": _x(f32, (3,), 9)})
    z.add("ConvInteger_uint8", [N("ConvInteger", ["x", "w", "xz"], ["y"])],
          {"x": _x(np.uint8, (1, 1, 4, 4), 1)}, ["y"], {"w": _x(np.uint8, (2, 1, 2, 2), 2), "xz": np.array(3, np.uint8)})
    # pooling
    for i, dt in enumerate(F + (np.int8, np.uint8)):
        z.add(f"MaxPool_{_dtname(dt)}", [N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
              {"x": _x(dt, (1, 2, 5, 5), i)}, ["y"])
    z.add("MaxPool_indices_float32", [N("MaxPool", ["x"], ["y", "idx"], kernel_shape=[3, 3], strides=[1, 2],
                                         pads=[1, 1, 1, 1], storage_order=0)],
          {"x": _x(f32, (2, 2, 6, 5), 3)}, ["y", "idx"])
    z.add("MaxPool_1d_dilated_ceil_float32",
          [N("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2], dilations=[2], ceil_mode=1)],
          {"x": _x(f32, (1, 3, 11), 4)}, ["y"])
    for i, dt in enumerate(F):
        z.add(f"AveragePool_{_dtname(dt)}", [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
              {"x": _x(dt, (1, 2, 5, 5), i)}, ["y"])
    z.add("AveragePool_include_pad_float32",
          [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1, strides=[2, 2])],
          {"x": _x(f32, (1, 2, 6, 6), 5)}, ["y"])
    for op in ("GlobalAveragePool", "GlobalMaxPool"):
        for i, dt in enumerate(F):
            z.add(f"{op}_{_dtname(dt)}", [N(op, ["x"], ["y"])], {"x": _x(dt, (2, 3, 4, 5), i)}, ["y"])
    z.add("LpPool_float32", [N("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=3)], {"x": _x(f32, (1, 2, 4, 4))}, ["y"])
    z.add("GlobalLpPool_float32", [N("GlobalLpPool", ["x"], ["y"], p=2)], {"x": _x(f32, (1, 2, 4, 4))}, ["y"])
    x = _x(f32, (1, 1, 4, 4), 11)
    z.add("MaxUnpool_float32", [N("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2]),
                                N("MaxUnpool", ["p", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])], {"x": x}, ["y"])
    # normalization
    for i, dt in enumerate(F):
        z.add(f"BatchNormalization_{_dtname(dt)}",
              [N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)],
              {"x": _x(dt, (2, 3, 4, 4), i)}, ["y"],
              {"s": _x(dt, (3,), 1), "b": _x(dt, (3,), 2), "m": _x(dt, (3,), 3), "v": _x(dt, (3,), 4, kind="pos")})
        z.add(f"InstanceNormalization_{_dtname(dt)}", [N("InstanceNormalization", ["x", "s", "b"], ["y"])],
              {"x": _x(dt, (2, 3, 4, 4), i)}, ["y"], {"s": _x(dt, (3,), 5), "b": _x(dt, (3,), 6)})
        z.add(f"LayerNormalization_{_dtname(dt)}", [N("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1)],
              {"x": _x(dt, (2, 3, 8), i)}, ["y"], {"s": _x(dt, (8,), 7), "b": _x(dt, (8,), 8)})
    z.add("LayerNormalization_axis1_outputs_float32",
          [N("LayerNormalization", ["x", "s"], ["y", "mean", "inv"], axis=1, epsilon=1e-2)],
          {"x": _x(f32, (2, 3, 4), 9)}, ["y", "mean", "inv"], {"s": _x(f32, (3, 4), 10)})
    z.add("GroupNormalization_float32", [N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
          {"x": _x(f32, (2, 4, 3, 3), 11)}, [_vi("y", T.FLOAT, [2, 4, 3, 3])], {"s": _x(f32, (4,), 12), "b": _x(f32, (4,), 13)})
    z.add("LpNormalization_float32", [N("LpNormalization", ["x"], ["y"], axis=1, p=1)], {"x": _x(f32)}, ["y"])
    z.add("LpNormalization_l2_float64", [N("LpNormalization", ["x"], ["y"], axis=-1, p=2)], {"x": _x(np.float64)},
          ["y"])
    z.add("LRN_float32", [N("LRN", ["x"], ["y"], size=3, alpha=1e-2, beta=0.75, bias=1.0)],
          {"x": _x(f32, (1, 5, 3, 3))}, ["y"])
    z.add("MeanVarianceNormalization_float32", [N("MeanVarianceNormalization", ["x"], ["y"])],
          {"x": _x(f32, (2, 3, 4, 4))}, ["y"])
    z.add("Dropout_float32", [N("Dropout", ["x"], ["y", "mask"])], {"x": _x(f32)}, ["y", "mask"])
    # dense
    for i, dt in enumerate(F):
        z.add(f"Gemm_{_dtname(dt)}", [N("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
              {"a": _x(dt, (3, 4), i), "b": _x(dt, (5, 4), 10 + i)}, ["y"], {"c": _x(dt, (5,), 20 + i)})
    z.add("Gemm_transA_float32", [N("Gemm", ["a", "b"], ["y"], transA=1)],
          {"a": _x(f32, (4, 3)), "b": _x(f32, (4, 5), 1)}, ["y"])
    for i, dt in enumerate(F + (np.int32, np.int64, np.uint32, np.uint64)):
        z.add(f"MatMul_{_dtname(dt)}", [N("MatMul", ["a", "b"], ["y"])],
              {"a": _x(dt, (2, 3, 4), i, kind="small"), "b": _x(dt, (4, 5), 10 + i, kind="small")}, ["y"])
    z.add("MatMul_vec_float32", [N("MatMul", ["a", "b"], ["y"])], {"a": _x(f32, (4,)), "b": _x(f32, (2, 4, 3), 1)},
          ["y"])
    z.add("MatMul_big_float32", [N("MatMul", ["a", "b"], ["y"])],
          {"a": _x(f32, (33, 65), 2), "b": _x(f32, (65, 17), 3)}, ["y"])
    for ta, tb in ((np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)):
        z.add(f"MatMulInteger_{_dtname(ta)}_{_dtname(tb)}", [N("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
              {"a": _x(ta, (3, 4), 1), "b": _x(tb, (4, 2), 2)}, ["y"], {"az": np.array(2, ta), "bz": np.array(1, tb)})
    # quantization
    for dt in (np.uint8, np.int8, np.uint16, np.int16):
        z.add(f"QuantizeLinear_{_dtname(dt)}", [N("QuantizeLinear", ["x", "s", "zp"], ["y"])],
              {"x": _x(f32, (3, 4), 1) * 10}, ["y"], {"s": np.array(0.25, f32), "zp": np.array(3, dt)})
        z.add(f"DequantizeLinear_{_dtname(dt)}", [N("DequantizeLinear", ["x", "s", "zp"], ["y"])],
              {"x": _x(dt, (3, 4), 2)}, ["y"], {"s": np.array(0.25, f32), "zp": np.array(3, dt)})
    z.add("QuantizeLinear_per_axis_uint8", [N("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=1)],
          {"x": _x(f32, (3, 4), 3) * 10}, ["y"], {"s": _f32([0.1, 0.2, 0.3, 0.4]), "zp": np.array([0, 10, 20, 30], np.uint8)})
    z.add("DequantizeLinear_int32", [N("DequantizeLinear", ["x", "s"], ["y"])], {"x": _x(np.int32, (3, 4), 4)}, ["y"],
          {"s": np.array(0.5, f32)})
    for dt in F8:
        z.add(f"QuantizeLinear_{_dtname(dt)}", [N("QuantizeLinear", ["x", "s", "zp"], ["y"])],
              {"x": _x(f32, (4, 5), 5, kind="special")}, ["y"], {"s": np.array(0.5, f32), "zp": np.zeros((), dt)})
        z.add(f"DequantizeLinear_{_dtname(dt)}", [N("DequantizeLinear", ["x", "s"], ["y"])],
              {"x": _x(dt, (4, 5), 6, kind="special")}, ["y"], {"s": np.array(2.0, f32)})
    for dt in (ml_dtypes.int4, ml_dtypes.uint4):
        z.add(f"QuantizeLinear_{_dtname(dt)}", [N("QuantizeLinear", ["x", "s", "zp"], ["y"])],
              {"x": _x(f32, (3, 5), 7) * 3}, ["y"], {"s": np.array(0.5, f32), "zp": np.array(1, dt)})
        z.add(f"DequantizeLinear_{_dtname(dt)}", [N("DequantizeLinear", ["x", "s", "zp"], ["y"])],
              {"x": _x(dt, (3, 5), 8)}, ["y"], {"s": np.array(0.5, f32), "zp": np.array(1, dt)})
    z.add("DynamicQuantizeLinear_float32", [N("DynamicQuantizeLinear", ["x"], ["y", "s", "zp"])],
          {"x": _x(f32, (3, 4), 9)}, ["y", "s", "zp"])
    z.add("QLinearMatMul_uint8", [N("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])],
          {"a": _x(np.uint8, (3, 4), 1), "b": _x(np.uint8, (4, 2), 2)}, ["y"],
          {"as": np.array(0.1, f32), "az": np.array(5, np.uint8), "bs": np.array(0.2, f32),
           "bz": np.array(7, np.uint8), "ys": np.array(0.3, f32), "yz": np.array(9, np.uint8)})
    z.add("QLinearConv_uint8", [N("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"])],
          {"x": _x(np.uint8, (1, 1, 4, 4), 3)}, ["y"],
          {"xs": np.array(0.1, f32), "xz": np.array(5, np.uint8), "w": _x(np.uint8, (2, 1, 2, 2), 4),
           "ws": np.array(0.2, f32), "wz": np.array(7, np.uint8), "ys": np.array(0.3, f32), "yz": np.array(9, np.uint8)})
    # spatial
    for mode in ("DCR", "CRD"):
        z.add(f"DepthToSpace_{mode}_float32", [N("DepthToSpace", ["x"], ["y"], blocksize=2, mode=mode)],
              {"x": _x(f32, (1, 8, 2, 3))}, ["y"])
    z.add("SpaceToDepth_float32", [N("SpaceToDepth", ["x"], ["y"], blocksize=2)], {"x": _x(f32, (1, 2, 4, 6))}, ["y"])
    resize_variants = [
        ("nearest", {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}),
        ("nearest_round", {"mode": "nearest"}),
        ("linear", {"mode": "linear"}),
        ("linear_align", {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
        ("cubic", {"mode": "cubic", "cubic_coeff_a": -0.5}),
    ]
    for tag, attrs in resize_variants:
        z.add(f"Resize_{tag}_float32", [N("Resize", ["x", "", "scales"], ["y"], **attrs)],
              {"x": _x(f32, (1, 2, 3, 4))}, ["y"], {"scales": _f32([1, 1, 2.0, 1.5])})
    z.add("Resize_sizes_linear_float32", [N("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")],
          {"x": _x(f32, (1, 2, 4, 4))}, ["y"], {"sizes": _i64([1, 2, 3, 7])})
    z.add("Resize_nearest_uint8", [N("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
          {"x": _x(np.uint8, (1, 1, 3, 3))}, ["y"], {"scales": _f32([1, 1, 2, 2])})
    z.add("GridSample_float32", [N("GridSample", ["x", "grid"], ["y"], mode="linear", align_corners=1)],
          {"x": _x(f32, (1, 2, 4, 4)), "grid": _x(f32, (1, 3, 3, 2), 1, kind="unit")}, ["y"], opset=20)
    z.add("AffineGrid_float32", [N("AffineGrid", ["theta", "size"], ["y"], align_corners=0)],
          {"theta": _x(f32, (2, 2, 3), kind="unit")}, ["y"], {"size": _i64([2, 1, 3, 4])}, opset=20)
    z.add("RoiAlign_float32", [N("RoiAlign", ["x", "rois", "bi"], ["y"], output_height=2, output_width=2,
                                 sampling_ratio=2, spatial_scale=1.0)],
          {"x": _x(f32, (1, 2, 6, 6)), "rois": _f32([[0, 0, 3, 3], [1, 1, 5, 4]])}, ["y"], {"bi": _i64([0, 0])})
    z.add("NonMaxSuppression_float32",
          [N("NonMaxSuppression", ["boxes", "scores", "maxout", "iou", "sthr"], ["sel"])],
          {"boxes": _f32([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                          [0, 100, 1, 101]]]),
           "scores": _f32([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]])}, ["sel"],
          {"maxout": _i64([3]), "iou": _f32([0.5]), "sthr": _f32([0.0])})
    z.add("Col2Im_float32", [N("Col2Im", ["x", "img", "blk"], ["y"])], {"x": _x(f32, (1, 4, 9))}, ["y"],
          {"img": _i64([4, 4]), "blk": _i64([2, 2])})
    z.add("CenterCropPad_float32", [N("CenterCropPad", ["x", "shape"], ["y"])], {"x": _x(f32, (5, 3))}, ["y"],
          {"shape": _i64([3, 6])})
    z.add("TopK_float32", [N("TopK", ["x", "k"], ["v", "i"], axis=-1)], {"x": _x(f32, (3, 6))}, ["v", "i"],
          {"k": _i64([3])})
    for i, dt in enumerate((np.float64, np.float16, np.int32, np.int64, np.int8, np.uint8)):
        z.add(f"TopK_{_dtname(dt)}", [N("TopK", ["x", "k"], ["v", "i"], axis=1, largest=0)],
              {"x": _x(dt, (3, 6, 2), i, kind="small")}, ["v", "i"], {"k": _i64([4])})
    z.add("TopK_unsorted_float32", [N("TopK", ["x", "k"], ["v", "i"], axis=0, sorted=0)],
          {"x": _x(f32, (7, 2), 3)}, ["v", "i"], {"k": _i64([2])})
    z.add("Einsum_matmul_float32", [N("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")],
          {"a": _x(f32, (3, 4)), "b": _x(f32, (4, 5), 1)}, ["y"])
    z.add("Einsum_batch_float64", [N("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")],
          {"a": _x(np.float64, (2, 3, 4)), "b": _x(np.float64, (2, 4, 5), 1)}, ["y"])
    z.add("Einsum_diag_float32", [N("Einsum", ["a"], ["y"], equation="ii->i")], {"a": _x(f32, (4, 4))}, ["y"])
    z.add("Einsum_transpose_int64", [N("Einsum", ["a"], ["y"], equation="ij->ji")], {"a": _x(np.int64, (3, 5))}, ["y"])
    z.add("Einsum_outer_sum_int32", [N("Einsum", ["a", "b"], ["y"], equation="i,j->")],
          {"a": _x(np.int32, (3,)), "b": _x(np.int32, (4,), 1)}, ["y"])
    z.add("Det_float32", [N("Det", ["x"], ["y"])], {"x": _x(f32, (2, 3, 3))}, ["y"])
    z.add("DFT_float32", [N("DFT", ["x", "", "axis"], ["y"])], {"x": _x(f32, (2, 8, 1))}, ["y"],
          {"axis": np.array(1, np.int64)}, opset=20)
    z.add("DFT_inverse_onesided_float32", [N("DFT", ["x", "", "axis"], ["y"], onesided=1)],
          {"x": _x(f32, (1, 10, 1))}, ["y"], {"axis": np.array(1, np.int64)}, opset=20)
    z.add("STFT_float32", [N("STFT", ["x", "step", "win"], ["y"])], {"x": _x(f32, (1, 32, 1))}, ["y"],
          {"step": np.array(4, np.int64), "win": np.hanning(8).astype(f32)})
    for op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        z.add(f"{op}_float32", [N(op, ["n"], ["y"], periodic=0)], {"n": np.array(10, np.int32)}, ["y"])
    z.add("MelWeightMatrix_float32", [N("MelWeightMatrix", ["nb", "dl", "sr", "lo", "hi"], ["y"])],
          {"nb": np.array(8, np.int64), "dl": np.array(16, np.int64), "sr": np.array(8000, np.int64),
           "lo": np.array(0.0, f32), "hi": np.array(4000.0, f32)}, ["y"])


def _tensor_ops(z: _Zoo) -> None:
    f32 = np.float32
    for i, dt in enumerate(ALL_TYPES):
        n = _dtname(dt)
        x = _x(dt, (2, 3, 4), i)
        z.add(f"Reshape_{n}", [N("Reshape", ["x", "shape"], ["y"])], {"x": x}, ["y"], {"shape": _i64([3, -1, 0])})
        z.add(f"Transpose_{n}", [N("Transpose", ["x"], ["y"], perm=[2, 0, 1])], {"x": x}, ["y"])
        z.add(f"Concat_{n}", [N("Concat", ["a", "b"], ["y"], axis=1)], {"a": x, "b": _x(dt, (2, 1, 4), 50 + i)}, ["y"])
        z.add(f"Slice_{n}", [N("Slice", ["x", "st", "en", "ax", "stp"], ["y"])], {"x": x}, ["y"],
              {"st": _i64([-1, 0]), "en": _i64([-100, 4]), "ax": _i64([1, 2]), "stp": _i64([-2, 3])})
        z.add(f"Gather_{n}", [N("Gather", ["x", "idx"], ["y"], axis=1)], {"x": x, "idx": _i64([[2, 0], [-1, 1]])}, ["y"])
        z.add(f"Split_{n}", [N("Split", ["x", "sp"], ["p", "q"], axis=2)], {"x": x}, ["p", "q"], {"sp": _i64([1, 3])})
        z.add(f"Squeeze_Unsqueeze_{n}", [N("Unsqueeze", ["x", "ax"], ["u"]), N("Squeeze", ["u", "ax0"], ["y"])],
              {"x": x}, ["u", "y"], {"ax": _i64([0, 3]), "ax0": _i64([0])})
        z.add(f"Flatten_{n}", [N("Flatten", ["x"], ["y"], axis=2)], {"x": x}, ["y"])
        z.add(f"Expand_{n}", [N("Expand", ["x", "shape"], ["y"])], {"x": _x(dt, (3, 1), 70 + i)}, ["y"],
              {"shape": _i64([2, 3, 4])})
        z.add(f"Tile_{n}", [N("Tile", ["x", "rep"], ["y"])], {"x": _x(dt, (2, 3), 80 + i)}, ["y"], {"rep": _i64([2, 3])})
        z.add(f"GatherElements_{n}", [N("GatherElements", ["x", "idx"], ["y"], axis=0)],
              {"x": _x(dt, (3, 3), 90 + i), "idx": _i64([[1, 2, 0], [2, 0, -1]])}, ["y"])
        z.add(f"GatherND_{n}", [N("GatherND", ["x", "idx"], ["y"])],
              {"x": _x(dt, (2, 2, 3), 95 + i), "idx": _i64([[0, 1], [1, 0]])}, ["y"])
        z.add(f"ScatterElements_{n}", [N("ScatterElements", ["x", "idx", "u"], ["y"], axis=1)],
              {"x": _x(dt, (3, 4), 100 + i), "idx": _i64([[1, 3], [0, 2], [3, 0]]), "u": _x(dt, (3, 2), 110 + i)}, ["y"])
        z.add(f"ScatterND_{n}", [N("ScatterND", ["x", "idx", "u"], ["y"])],
              {"x": _x(dt, (4, 3), 120 + i), "idx": _i64([[1], [3]]), "u": _x(dt, (2, 3), 130 + i)}, ["y"])
        z.add(f"Compress_{n}", [N("Compress", ["x", "c"], ["y"], axis=1)],
              {"x": x, "c": np.array([True, False, True])}, ["y"])
        z.add(f"Shape_Size_{n}", [N("Shape", ["x"], ["s"]), N("Size", ["x"], ["n"]),
                                  N("Shape", ["x"], ["s2"], start=1, end=-1)], {"x": x}, ["s", "n", "s2"])
        z.add(f"ReverseSequence_{n}", [N("ReverseSequence", ["x", "lens"], ["y"], batch_axis=1, time_axis=0)],
              {"x": _x(dt, (4, 3), 140 + i), "lens": _i64([4, 2, 1])}, ["y"])
    for i, dt in enumerate(NUM + (np.bool_,)):
        n = _dtname(dt)
        z.add(f"Pad_constant_{n}", [N("Pad", ["x", "pads", "v"], ["y"], mode="constant")], {"x": _x(dt, (2, 3), i)},
              ["y"], {"pads": _i64([1, 0, 0, 2]), "v": np.ones((), dt)})
        z.add(f"Trilu_{n}", [N("Trilu", ["x", "k"], ["y"], upper=i % 2)], {"x": _x(dt, (3, 4, 5), i)}, ["y"],
              {"k": np.array(1 - i % 3, np.int64)})
    for i, dt in enumerate(F + (np.int32, np.int64, np.uint8)):
        n = _dtname(dt)
        for mode in ("reflect", "edge", "wrap"):
            z.add(f"Pad_{mode}_{n}", [N("Pad", ["x", "pads"], ["y"], mode=mode)], {"x": _x(dt, (3, 4), i)},
                  ["y"], {"pads": _i64([2, 1, 1, 3])})
    z.add("Pad_axes_float32", [N("Pad", ["x", "pads", "", "axes"], ["y"])], {"x": _x(f32, (2, 3, 4))}, ["y"],
          {"pads": _i64([1, 2]), "axes": _i64([-1])})
    for red in ("add", "mul", "max", "min"):
        for i, dt in enumerate((np.float32, np.float64, np.int32, np.int64)):
            n = _dtname(dt)
            z.add(f"ScatterElements_{red}_{n}", [N("ScatterElements", ["x", "idx", "u"], ["y"], axis=0, reduction=red)],
                  {"x": _x(dt, (3, 3), i, kind="small"), "idx": _i64([[1, 1, 0], [1, 2, 0]]),
                   "u": _x(dt, (2, 3), 10 + i, kind="small")}, ["y"])
            z.add(f"ScatterND_{red}_{n}", [N("ScatterND", ["x", "idx", "u"], ["y"], reduction=red)],
                  {"x": _x(dt, (4, 3), i, kind="small"), "idx": _i64([[1], [1], [3]]),
                   "u": _x(dt, (3, 3), 20 + i, kind="small")}, ["y"])
    z.add("GatherND_batch_dims_float32", [N("GatherND", ["x", "idx"], ["y"], batch_dims=1)],
          {"x": _x(f32, (2, 3, 4)), "idx": _i64([[[1, 2]], [[0, 3]]])}, ["y"])
    z.add("Split_num_outputs_float32", [N("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3)],
          {"x": _x(f32, (7, 2))}, ["a", "b", "c"])
    z.add("Reshape_allowzero_float32", [N("Reshape", ["x", "shape"], ["y"], allowzero=1)],
          {"x": np.zeros((0, 3), f32)}, ["y"], {"shape": _i64([3, 0])})
    for i, dt in enumerate((np.float32, np.float64, np.int32, np.int64, np.int16)):
        n = _dtname(dt)
        z.add(f"Range_{n}", [N("Range", ["a", "b", "d"], ["y"])],
              {"a": np.array(1, dt), "b": np.array(17, dt), "d": np.array(3, dt)}, ["y"])
    z.add("Range_negative_float32", [N("Range", ["a", "b", "d"], ["y"])],
          {"a": np.array(2.5, f32), "b": np.array(-3.0, f32), "d": np.array(-0.75, f32)}, ["y"])
    for i, dt in enumerate((np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8, np.float16, np.int8)):
        n = _dtname(dt)
        z.add(f"ConstantOfShape_{n}", [N("ConstantOfShape", ["s"], ["y"],
                                          value=numpy_helper.from_array(np.array([1], dtype=dt)))],
              {"s": _i64([2, 3])}, ["y"])
    z.add("ConstantOfShape_default_float32", [N("ConstantOfShape", ["s"], ["y"])], {"s": _i64([0, 3])}, ["y"])
    for i, (it, vt) in enumerate(((np.int64, np.float32), (np.int32, np.int64), (np.float32, np.float32),
                                  (np.int64, np.int32), (np.int64, np.float64))):
        z.add(f"OneHot_{_dtname(it)}_{_dtname(vt)}", [N("OneHot", ["idx", "depth", "vals"], ["y"], axis=-1)],
              {"idx": np.array([[0, 2], [-1, 5]], it)}, ["y"],
              {"depth": np.array(4, np.int64), "vals": np.array([-1, 7], vt)})
    for i, dt in enumerate((np.float32, np.float64, np.int32, np.int64)):
        z.add(f"EyeLike_{_dtname(dt)}", [N("EyeLike", ["x"], ["y"], k=1)], {"x": _x(dt, (3, 4), i)}, ["y"])
    z.add("EyeLike_dtype_float32_to_int64", [N("EyeLike", ["x"], ["y"], k=-1, dtype=T.INT64)],
          {"x": _x(f32, (4, 3))}, ["y"])
    for i, dt in enumerate((np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64, np.float16)):
        n = _dtname(dt)
        z.add(f"CumSum_{n}", [N("CumSum", ["x", "ax"], ["y"])], {"x": _x(dt, (3, 4), i, kind="small")}, ["y"],
              {"ax": np.array(1, np.int64)})
    z.add("CumSum_exclusive_reverse_float32", [N("CumSum", ["x", "ax"], ["y"], exclusive=1, reverse=1)],
          {"x": _x(f32, (3, 4))}, ["y"], {"ax": np.array(0, np.int32)})
    for i, dt in enumerate((np.float32, np.float64, np.int64, np.int8, STR)):
        n = _dtname(dt)
        z.add(f"Unique_{n}", [N("Unique", ["x"], ["y", "idx", "inv", "cnt"], sorted=1)],
              {"x": _x(dt, (12,), i, kind="small")}, ["y", "idx", "inv", "cnt"])
    z.add("Unique_axis_unsorted_float32", [N("Unique", ["x"], ["y", "idx", "inv", "cnt"], sorted=0, axis=0)],
          {"x": np.array([[1, 2], [3, 4], [1, 2], [0, 0], [3, 4]], f32)}, ["y", "idx", "inv", "cnt"])
    for i, dt in enumerate((np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8, np.int8, np.float16)):
        n = _dtname(dt)
        z.add(f"NonZero_{n}", [N("NonZero", ["x"], ["y"])], {"x": _x(dt, (3, 4, 2), i, kind="small")}, ["y"])
    z.add("NonZero_all_zero_float32", [N("NonZero", ["x"], ["y"])], {"x": np.zeros((2, 3), f32)}, ["y"])
    z.add("NonZero_then_Gather_float32",
          [N("NonZero", ["m"], ["nz"]), N("Transpose", ["nz"], ["nzt"]), N("GatherND", ["x", "nzt"], ["y"])],
          {"x": _x(f32, (3, 4), 1), "m": _x(np.bool_, (3, 4), 2)}, ["y"])
    z.add("Constant_CastLike_float32", [N("Constant", [], ["c"], value=numpy_helper.from_array(_f32([1.5, -2.5]))),
                                        N("CastLike", ["c", "like"], ["y"])], {"like": _x(np.int32, (1,))}, ["y"])
    for i, (src, dst) in enumerate(((np.float32, np.float16), (np.int64, np.float64), (np.float32, BF16),
                                    (np.int32, STR), (np.float64, np.int8))):
        z.add(f"CastLike_{_dtname(src)}_{_dtname(dst)}", [N("CastLike", ["x", "like"], ["y"])],
              {"x": _x(src, (3, 4), i, kind="small"), "like": _x(dst, (1,), i)}, ["y"])


#: element types that take part in the Cast matrix
CAST_TYPES: tuple[Any, ...] = NUM + (np.bool_, STR, BF16) + F8 + (ml_dtypes.int4, ml_dtypes.uint4)


def _cast(z: _Zoo) -> None:
    """``Cast`` between every pair of castable element types (incl. string, bool,
    bfloat16, float8 and 4-bit ints), plus special values and ``saturate=0``."""
    for i, src in enumerate(CAST_TYPES):
        sdt = np.dtype(src)
        if sdt == np.dtype(object):
            x = np.array([["0", "1", "7", "3"], ["5", "2", "6", "4"]], dtype=object)
        elif sdt == np.dtype(np.bool_):
            x = _x(np.bool_, (2, 4), i)
        else:
            x = _x(src, (2, 4), i, kind="small")
        for dst in CAST_TYPES:
            z.add(f"Cast_{_dtname(src)}_to_{_dtname(dst)}", [N("Cast", ["x"], ["y"], to=elem_type_of(dst))],
                  {"x": x}, ["y"])
    floats = (np.float32, np.float64, np.float16, BF16) + F8
    for src in (np.float32, np.float64, np.float16, BF16):
        x = _x(src, (4, 5), 3, kind="special")
        for dst in floats:
            if dst == src:
                continue
            z.add(f"Cast_special_{_dtname(src)}_to_{_dtname(dst)}", [N("Cast", ["x"], ["y"], to=elem_type_of(dst))],
                  {"x": x}, ["y"])
            if dst in F8:
                z.add(f"Cast_special_nosat_{_dtname(src)}_to_{_dtname(dst)}",
                      [N("Cast", ["x"], ["y"], to=elem_type_of(dst), saturate=0)], {"x": x}, ["y"])
        z.add(f"Cast_special_{_dtname(src)}_to_string", [N("Cast", ["x"], ["y"], to=T.STRING)], {"x": x}, ["y"])
    x = np.array(["1.5", "-0", "nan", "-INF", "1e-3", "3.4e38", "  7", "0x10"], dtype=object)
    for dst in (np.float32, np.float64):
        z.add(f"Cast_string_parse_to_{_dtname(dst)}", [N("Cast", ["x"], ["y"], to=elem_type_of(dst))], {"x": x}, ["y"])
    x = np.array(["-128", "127", "0", "-1", "42", "+5", "007", "-0"], dtype=object)
    z.add("Cast_string_parse_to_int64", [N("Cast", ["x"], ["y"], to=T.INT64)], {"x": x}, ["y"])
    x = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, 0, 2**53 + 1], np.int64)
    for dst in (np.float32, np.float64, np.int32, np.uint64, STR):
        z.add(f"Cast_int64_extremes_to_{_dtname(dst)}", [N("Cast", ["x"], ["y"], to=elem_type_of(dst))], {"x": x}, ["y"])


def _strings(z: _Zoo) -> None:
    s = np.array(["Hello", "WORLD", "été", "x y z", "", "MiXeD"], dtype=object)
    for action in ("LOWER", "UPPER", "NONE"):
        z.add(f"StringNormalizer_{action.lower()}", [N("StringNormalizer", ["x"], ["y"], case_change_action=action,
                                                                   locale=STRING_LOCALE)],
              {"x": s}, ["y"])
    z.add("StringNormalizer_stopwords", [N("StringNormalizer", ["x"], ["y"], case_change_action="LOWER", locale=STRING_LOCALE,
                                           is_case_sensitive=0, stopwords=["world", "mixed"])],
          {"x": s.reshape(1, 6)}, ["y"])
    z.add("StringNormalizer_all_stopped", [N("StringNormalizer", ["x"], ["y"], stopwords=["a", "b"], locale=STRING_LOCALE)],
          {"x": np.array(["a", "b"], dtype=object)}, ["y"])
    z.add("RegexFullMatch", [N("RegexFullMatch", ["x"], ["y"], pattern=r"[a-zA-Z ]+")], {"x": s.reshape(2, 3)}, ["y"],
          opset=20)
    z.add("StringConcat", [N("StringConcat", ["a", "b"], ["y"])],
          {"a": s.reshape(2, 3), "b": np.array(["-", "日本", ""], dtype=object)}, ["y"], opset=20)
    z.add("StringSplit", [N("StringSplit", ["x"], ["y", "n"], delimiter=" ", maxsplit=2)],
          {"x": np.array(["a b c d", "one", "", "x  y"], dtype=object)}, ["y", "n"], opset=20)
    z.add("StringSplit_whitespace", [N("StringSplit", ["x"], ["y", "n"])],
          {"x": np.array([["a b", " c  d "], ["", "e"]], dtype=object)}, ["y", "n"], opset=20)
    z.add("Concat_Gather_string", [N("Concat", ["a", "b"], ["c"], axis=0), N("Gather", ["c", "i"], ["y"])],
          {"a": s, "b": s[::-1].copy(), "i": _i64([0, 11, 5, 6])}, ["y"])
    z.add("LabelEncoder_string_to_int64",
          [N("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_strings=["Hello", "été", ""],
             values_int64s=[1, 2, 3], default_int64=-7)], {"x": s}, ["y"], ml_opset=2)
    z.add("LabelEncoder_int64_to_string",
          [N("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_int64s=[1, 2, 3],
             values_strings=["one", "two", "three"], default_string="?")], {"x": _i64([[3, 1], [9, 2]])}, ["y"],
          ml_opset=2)
    z.add("LabelEncoder_float_to_float",
          [N("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_floats=[0.5, 1.5], values_floats=[10.0, 20.0],
             default_float=-1.0)], {"x": _f32([0.5, 1.5, 2.5, 0.5])}, ["y"], ml_opset=2)
    z.add("LabelEncoder_v4_tensor_attrs",
          [N("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_tensor=numpy_helper.from_array(_i64([1, 2, 3])),
             values_tensor=numpy_helper.from_array(np.array([1.5, 2.5, 3.5], np.float64)),
             default_tensor=numpy_helper.from_array(np.array([-1.0], np.float64)))],
          {"x": _i64([3, 4, 1, 1])}, ["y"], ml_opset=4)
    z.add("TfIdfVectorizer_int64",
          [N("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0,
             ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7])],
          {"x": _i64([[1, 1, 3, 3, 3, 7], [8, 6, 7, 5, 6, 8]])}, ["y"])
    z.add("TfIdfVectorizer_string",
          [N("TfIdfVectorizer", ["x"], ["y"], mode="TFIDF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
             ngram_counts=[0], ngram_indexes=[0, 1, 2], pool_strings=["a", "b", "c"], weights=[0.5, 1.0, 2.0])],
          {"x": np.array(["a", "c", "c", "d", "a", "b", "c"], dtype=object)}, ["y"])


def _control_flow(z: _Zoo) -> None:
    f32 = np.float32
    then_g = helper.make_graph([N("Mul", ["x", "x"], ["r"])], "then", [], [_vi("r", T.FLOAT, [3])])
    else_g = helper.make_graph([N("Neg", ["x"], ["r"])], "else", [], [_vi("r", T.FLOAT, [3])])
    for flag in (True, False):
        z.add(f"If_{str(flag).lower()}", [N("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
              {"c": np.array(flag), "x": _x(f32, (3,))}, ["y"])
    # Loop: 5 iterations, carried accumulator + per-iteration scan output
    body = helper.make_graph(
        [N("Identity", ["cond_in"], ["cond_out"]),
         N("Add", ["acc_in", "x"], ["acc_out"]),
         N("Cast", ["i"], ["fi"], to=T.FLOAT),
         N("Mul", ["acc_out", "fi"], ["scan_out"])],
        "body",
        [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), _vi("acc_in", T.FLOAT, [2])],
        [_vi("cond_out", T.BOOL, []), _vi("acc_out", T.FLOAT, [2]), _vi("scan_out", T.FLOAT, [2])],
    )
    z.add("Loop_float32", [N("Loop", ["M", "cond", "acc0"], ["acc", "scans"], body=body)],
          {"M": np.array(5, np.int64), "cond": np.array(True), "acc0": _x(f32, (2,), 1), "x": _x(f32, (2,), 2)},
          ["acc", "scans"])
    # Loop terminated by condition (while acc < limit)
    body2 = helper.make_graph(
        [N("Add", ["v_in", "one"], ["v_out"]), N("Less", ["v_out", "limit"], ["cond_out"])],
        "body2",
        [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), _vi("v_in", T.INT64, [])],
        [_vi("cond_out", T.BOOL, []), _vi("v_out", T.INT64, [])],
    )
    z.add("Loop_while_int64", [N("Loop", ["", "cond", "v0"], ["v"], body=body2)],
          {"cond": np.array(True), "v0": np.array(3, np.int64), "limit": np.array(11, np.int64)}, ["v"],
          {"one": np.array(1, np.int64)})
    scan_body = helper.make_graph(
        [N("Add", ["s_in", "xi"], ["s_out"]), N("Identity", ["s_out"], ["y_i"])],
        "scan_body",
        [_vi("s_in", T.FLOAT, [2]), _vi("xi", T.FLOAT, [2])],
        [_vi("s_out", T.FLOAT, [2]), _vi("y_i", T.FLOAT, [2])],
    )
    z.add("Scan_cumsum_float32", [N("Scan", ["s0", "xs"], ["s", "ys"], body=scan_body, num_scan_inputs=1)],
          {"s0": np.zeros(2, f32), "xs": _x(f32, (4, 2))}, ["s", "ys"])


def _sequences(z: _Zoo) -> None:
    f32 = np.float32
    for i, dt in enumerate((np.float32, np.int64, STR, np.bool_, np.float64, np.int32, np.uint8, np.float16)):
        n = _dtname(dt)
        a, b, c = _x(dt, (2, 3), i), _x(dt, (1, 3), 10 + i), _x(dt, (4, 3), 20 + i)
        seq_t = helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem_type_of(dt), [None, 3]))
        z.add(f"SequenceConstruct_{n}", [N("SequenceConstruct", ["a", "b", "c"], ["seq"])], {"a": a, "b": b, "c": c},
              [helper.make_value_info("seq", seq_t)])
        z.add(f"SequenceAt_Length_{n}", [N("SequenceAt", ["seq", "i"], ["y"]), N("SequenceLength", ["seq"], ["len"])],
              {"seq": [a, b, c], "i": np.array(-2, np.int64)}, ["y", "len"])
        z.add(f"SequenceInput_identity_{n}", [N("Identity", ["seq"], ["out"])], {"seq": [a, b, c]},
              [helper.make_value_info("out", seq_t)])
        z.add(f"ConcatFromSequence_{n}", [N("ConcatFromSequence", ["seq"], ["y"], axis=0)], {"seq": [a, b, c]}, ["y"])
        z.add(f"SplitToSequence_{n}", [N("SplitToSequence", ["x", "sp"], ["seq"], axis=0)], {"x": c}, ["seq"],
              {"sp": _i64([1, 3])})
    z.add("SplitToSequence_nokeep_float32", [N("SplitToSequence", ["x"], ["seq"], axis=1, keepdims=0)],
          {"x": _x(f32, (2, 3))}, ["seq"])
    z.add("ConcatFromSequence_new_axis_float32", [N("ConcatFromSequence", ["seq"], ["y"], axis=1, new_axis=1)],
          {"seq": [_x(f32, (2, 3), 1), _x(f32, (2, 3), 2)]}, ["y"])
    seq_t = helper.make_sequence_type_proto(helper.make_tensor_type_proto(T.FLOAT, None))
    z.add("SequenceInsert_Erase_float32",
          [N("SequenceInsert", ["seq", "x", "pos"], ["s1"]), N("SequenceErase", ["s1", "zero"], ["s2"]),
           N("SequenceLength", ["s2"], ["len"])],
          {"seq": [_x(f32, (2,), 1), _x(f32, (3,), 2)], "x": _x(f32, (4,), 3)},
          [helper.make_value_info("s1", seq_t), helper.make_value_info("s2", seq_t), "len"],
          {"pos": np.array(1, np.int64), "zero": np.array(0, np.int64)})
    z.add("SequenceEmpty_Insert_int64",
          [N("SequenceEmpty", [], ["e"], dtype=T.INT64), N("SequenceInsert", ["e", "x"], ["seq"]),
           N("SequenceLength", ["e"], ["len0"])],
          {"x": _i64([1, 2, 3])}, [helper.make_value_info("seq", helper.make_sequence_type_proto(
              helper.make_tensor_type_proto(T.INT64, None))), "len0"])
    z.add("SequenceEmpty_output_float32", [N("SequenceEmpty", [], ["e"], dtype=T.FLOAT), N("Identity", ["x"], ["y"])],
          {"x": _f32([1.0])}, [helper.make_value_info("e", seq_t), "y"])
    z.add("SequenceInput_empty_list_int64", [N("SequenceLength", ["seq"], ["len"])], {"seq": [_i64([1])]}, ["len"])
    body = helper.make_graph([N("ReduceSum", ["t"], ["r"], keepdims=0)], "smap", [_vi("t", T.FLOAT, None)],
                             [_vi("r", T.FLOAT, [])])
    z.add("SequenceMap_float32", [N("SequenceMap", ["seq"], ["out"], body=body)],
          {"seq": [_x(f32, (2, 3), 1), _x(f32, (5,), 2)]}, ["out"])


def _optionals(z: _Zoo) -> None:
    z.cases.append(Case("Optional_wrap_unwrap", optional_model(), {"x": _f32([1.5, -2.0])}))
    z.cases.append(Case("Optional_empty_output", empty_optional_model(), {"x": _f32([3.0, 4.0])}))
    z.cases.append(Case("OptionalHasElement_input_present", optional_input_model(), {"opt": _f32([1.0, 2.0])}))
    z.cases.append(Case("OptionalHasElement_input_none", optional_input_model(), {"opt": None}))
    z.cases.append(Case("OptionalHasElement_input_omitted", optional_input_model(), {}))
    seq_opt = helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(T.INT64, None)))
    z.add("Optional_sequence", [N("SequenceConstruct", ["a", "b"], ["seq"]), N("Optional", ["seq"], ["opt"]),
                                N("OptionalGetElement", ["opt"], ["out"]), N("OptionalHasElement", ["opt"], ["has"])],
          {"a": _i64([1, 2]), "b": _i64([3])},
          [helper.make_value_info("opt", seq_opt), "has",
           helper.make_value_info("out", helper.make_sequence_type_proto(helper.make_tensor_type_proto(T.INT64, None)))])
    _register_names(z)


def _register_names(z: _Zoo) -> None:
    """Record the names of cases appended directly to ``z.cases`` (duplicate guard)."""
    for c in z.cases:
        z._names.add(c.name)


def _random(z: _Zoo) -> None:
    f32 = np.float32
    z.add("RandomNormal_seeded", [N("RandomNormal", [], ["r"], shape=[3, 4], seed=3.0, mean=1.0, scale=2.0),
                                  N("Add", ["r", "x"], ["y"])], {"x": _x(f32, (3, 4))}, ["y"])
    z.add("RandomUniform_seeded", [N("RandomUniform", [], ["r"], shape=[3, 4], seed=5.0, low=-1.0, high=3.0),
                                   N("Add", ["r", "x"], ["y"])], {"x": _x(f32, (3, 4))}, ["y"])
    z.add("RandomNormalLike_seeded", [N("RandomNormalLike", ["x"], ["y"], seed=7.0)], {"x": _x(f32, (3, 4))}, ["y"])
    z.add("RandomUniformLike_seeded_float64", [N("RandomUniformLike", ["x"], ["y"], seed=11.0)],
          {"x": _x(np.float64, (3, 4))}, ["y"])
    z.add("Bernoulli_seeded", [N("Bernoulli", ["x"], ["y"], seed=13.0)], {"x": _x(f32, (4, 5), kind="unit") ** 2},
          ["y"])
    z.add("Multinomial_seeded", [N("Multinomial", ["x"], ["y"], seed=17.0, sample_size=6)],
          {"x": np.log(_x(f32, (2, 4), kind="pos"))}, ["y"])


def _ml(z: _Zoo) -> None:
    f32 = np.float32
    z.cases.append(Case("ZipMap_int64_labels", zipmap_model((10, 20, 30)), {"x": _x(f32, (4, 3))}))
    z.cases.append(Case("ZipMap_string_labels", zipmap_model(("cat", "dog", "été")), {"x": _x(f32, (2, 3))}))
    z.cases.append(Case("DictVectorizer_int64", dict_vectorizer_model((1, 2, 3, 5)), {"x": {1: 2.5, 5: -1.0, 7: 3.0}}))
    z.cases.append(Case("DictVectorizer_string", dict_vectorizer_model(("a", "b", "c")), {"x": {"c": 2.5, "a": -1.0}}))
    for cast_to in ("TO_FLOAT", "TO_INT64", "TO_STRING"):
        z.cases.append(Case(f"CastMap_{cast_to.lower()}", castmap_model(5, cast_to), {"x": {0: 1.5, 3: -2.0, 4: 7.0}}))
    _register_names(z)
    ml = "ai.onnx.ml"
    z.add("Binarizer", [N("Binarizer", ["x"], ["y"], domain=ml, threshold=0.5)], {"x": _x(f32)}, ["y"])
    for norm in ("MAX", "L1", "L2"):
        z.add(f"Normalizer_{norm}", [N("Normalizer", ["x"], ["y"], domain=ml, norm=norm)], {"x": _x(f32)},
              [_vi("y", T.FLOAT, None)])
    z.add("Scaler", [N("Scaler", ["x"], ["y"], domain=ml, offset=[0.5, 1.0, -1.0, 0.0], scale=[2.0, 0.5, 1.0, 3.0])],
          {"x": _x(f32)}, [_vi("y", T.FLOAT, None)])
    z.add("Scaler_int64", [N("Scaler", ["x"], ["y"], domain=ml, offset=[1.0], scale=[0.5])],
          {"x": _x(np.int64, (3, 4))}, [_vi("y", T.FLOAT, None)])
    z.add("OneHotEncoder_int64", [N("OneHotEncoder", ["x"], ["y"], domain=ml, cats_int64s=[1, 3, 5], zeros=1)],
          {"x": _i64([[1, 5], [3, 9]])}, [_vi("y", T.FLOAT, None)])
    z.add("OneHotEncoder_string", [N("OneHotEncoder", ["x"], ["y"], domain=ml, cats_strings=["a", "b"], zeros=1)],
          {"x": np.array([["a"], ["b"], ["c"]], dtype=object)}, [_vi("y", T.FLOAT, None)])
    z.add("ArrayFeatureExtractor", [N("ArrayFeatureExtractor", ["x", "idx"], ["y"], domain=ml)],
          {"x": _x(f32, (3, 5)), "idx": _i64([4, 0, 2])}, [_vi("y", T.FLOAT, None)])
    z.add("ArrayFeatureExtractor_string", [N("ArrayFeatureExtractor", ["x", "idx"], ["y"], domain=ml)],
          {"x": _x(STR, (2, 4)), "idx": _i64([1, 3])}, [_vi("y", T.STRING, None)])
    z.add("Imputer", [N("Imputer", ["x"], ["y"], domain=ml, imputed_value_floats=[9.0], replaced_value_float=0.0)],
          {"x": _f32([[0, 1, 0], [2, 0, 3]])}, [_vi("y", T.FLOAT, None)])
    z.add("FeatureVectorizer", [N("FeatureVectorizer", ["a", "b"], ["y"], domain=ml, inputdimensions=[2, 3])],
          {"a": _x(f32, (2, 2)), "b": _x(f32, (2, 3), 1)}, [_vi("y", T.FLOAT, None)])
    z.add("LinearRegressor", [N("LinearRegressor", ["x"], ["y"], domain=ml, coefficients=[0.5, -1.0, 2.0, 0.25],
                                intercepts=[1.0], targets=1)], {"x": _x(f32)}, [_vi("y", T.FLOAT, None)])
    coefs = list(np.round(_x(np.float64, (12,), 5), 3))
    lc = N("LinearClassifier", ["x"], ["label", "prob"], domain=ml, coefficients=coefs, intercepts=[0.1, -0.2, 0.3],
           classlabels_ints=[7, 8, 9], post_transform="SOFTMAX")
    zm = N("ZipMap", ["prob"], ["probs"], domain=ml, classlabels_int64s=[7, 8, 9])
    z.add("LinearClassifier_ZipMap", [lc, zm], {"x": _x(f32, (5, 4))},
          [_vi("label", T.INT64, None), _seq_map_vi("probs", T.INT64)])
    lc_s = N("LinearClassifier", ["x"], ["label", "prob"], domain=ml, coefficients=coefs[:8], intercepts=[0.0, 0.5],
             classlabels_strings=["no", "yes"], post_transform="LOGISTIC")
    zm_s = N("ZipMap", ["prob"], ["probs"], domain=ml, classlabels_strings=["no", "yes"])
    z.add("LinearClassifier_strings_ZipMap", [lc_s, zm_s], {"x": _x(f32, (3, 4))},
          [_vi("label", T.STRING, None), _seq_map_vi("probs", T.STRING)])
    z.add("SVMRegressor", [N("SVMRegressor", ["x"], ["y"], domain=ml, kernel_type="RBF", kernel_params=[0.5, 0.0, 3.0],
                             support_vectors=list(np.round(_x(np.float64, (6,), 6), 2)), n_supports=3,
                             coefficients=[0.5, -0.25, 1.0], rho=[0.1])],
          {"x": _x(f32, (4, 2))}, [_vi("y", T.FLOAT, None)])
    z.add("SVMClassifier", [N("SVMClassifier", ["x"], ["label", "score"], domain=ml, kernel_type="LINEAR",
                              kernel_params=[0.5, 0.0, 3.0], classlabels_ints=[0, 1], support_vectors=[1.0, 0.0, 0.0, 1.0, -1.0, -1.0],
                              vectors_per_class=[1, 2], coefficients=[1.0, -0.5, -0.5], rho=[0.0])],
          {"x": _x(f32, (5, 2))}, [_vi("label", T.INT64, None), _vi("score", T.FLOAT, None)])
    tree = dict(nodes_treeids=[0, 0, 0, 1, 1, 1], nodes_nodeids=[0, 1, 2, 0, 1, 2],
                nodes_featureids=[0, 0, 0, 1, 0, 0], nodes_values=[0.5, 0.0, 0.0, -0.25, 0.0, 0.0],
                nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"],
                nodes_truenodeids=[1, 0, 0, 1, 0, 0], nodes_falsenodeids=[2, 0, 0, 2, 0, 0])
    z.add("TreeEnsembleRegressor", [N("TreeEnsembleRegressor", ["x"], ["y"], domain=ml, n_targets=1,
                                      target_treeids=[0, 0, 1, 1], target_nodeids=[1, 2, 1, 2], target_ids=[0, 0, 0, 0],
                                      target_weights=[1.0, -1.0, 0.5, 2.0], aggregate_function="SUM", **tree)],
          {"x": _x(f32, (6, 2))}, [_vi("y", T.FLOAT, None)])
    z.add("TreeEnsembleClassifier", [N("TreeEnsembleClassifier", ["x"], ["label", "prob"], domain=ml,
                                       classlabels_int64s=[0, 1], class_treeids=[0, 0, 1, 1],
                                       class_nodeids=[1, 2, 1, 2], class_ids=[0, 1, 0, 1],
                                       class_weights=[0.8, 0.6, 0.3, 0.9], post_transform="NONE", **tree)],
          {"x": _x(f32, (6, 2))}, [_vi("label", T.INT64, None), _vi("prob", T.FLOAT, None)])


_SECTIONS = (_unary, _binary, _reductions, _nn, _tensor_ops, _cast, _strings, _control_flow, _sequences,
             _optionals, _random, _ml)


@functools.lru_cache(maxsize=1)
def _zoo_cached() -> tuple[Case, ...]:
    z = _Zoo()
    for section in _SECTIONS:
        section(z)
    cases = [c for c in z.cases if c.name not in UNSUPPORTED_BY_ORT]
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate zoo case names"
    return tuple(cases)


def zoo_cases() -> list[Case]:
    """All operator-zoo cases (fresh list; models/feeds are shared, treat them as read-only)."""
    return list(_zoo_cached())


def zoo_operators() -> set[str]:
    """Distinct ``(domain, op_type)`` names exercised by the zoo (incl. subgraphs)."""
    ops: set[str] = set()

    def walk(graph: onnx.GraphProto) -> None:
        for node in graph.node:
            ops.add(f"{node.domain + '.' if node.domain else ''}{node.op_type}")
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                for g in attr.graphs:
                    walk(g)

    for case in _zoo_cached():
        walk(onnx.load_from_string(case.model).graph)
    return ops


#: Zoo candidates that ORT 1.32's CPU provider does not implement (no kernel
#: for that op/dtype, or the op's schema rejects the type).  Determined by
#: running every candidate with onnxruntime; kept out of the zoo, not skipped.
_NO_FLOAT64 = ("Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf", "Softplus",
               "Softsign", "Elu", "Selu", "Celu", "LeakyRelu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Mish",
               "Gelu", "Hardmax", "Erf_special", "Softplus_special", "Mean", "Conv", "AveragePool",
               "GlobalAveragePool", "GlobalMaxPool", "InstanceNormalization", "NonZero")
_NO_F8_MOVES = ("Concat", "Slice", "Gather", "Split", "Squeeze_Unsqueeze", "Flatten", "Expand", "Tile",
                "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Compress", "Shape_Size",
                "ReverseSequence")
UNSUPPORTED_BY_ORT: frozenset[str] = frozenset(
    [f"{op}_float64" for op in _NO_FLOAT64]
    + [f"{op}_{_dtname(dt)}" for op in _NO_F8_MOVES for dt in F8]
    + [f"{op}_bfloat16" for op in ("Add", "Mul", "Where", "Expand", "Tile", "Compress", "Shape_Size",
                                   "ReverseSequence")]
    + [f"{op}_{t}" for op in ("Max", "Min", "Where", "Clip", "ArgMax", "ArgMin", "Pad_constant")
       for t in ("int16", "uint16")]
    + [f"{op}_{t}" for op in ("ArgMax", "ArgMin", "CumSum") for t in ("uint32", "uint64")]
    + [f"Trilu_{t}" for t in ("int8", "int16", "uint8", "uint16", "uint32", "uint64")]
    + [f"Reduce{op}_{t}" for op in ("Sum", "Mean", "Prod", "L1", "L2", "LogSum", "LogSumExp", "SumSquare")
       for t in ("int8", "uint8")]
    + ["Celu_float16", "Relu_int16", "Relu_int64", "PRelu_float64_init", "PRelu_int32_init", "PRelu_int64_init",
       "Where_uint64", "Where_bool", "NonZero_int8", "SplitToSequence_uint8", "OneHot_int32_int64",
       "OneHot_float32_float32", "OneHot_int64_int32", "OneHot_int64_float64"]
)


def lora_adapter_bytes(params: dict[str, np.ndarray]) -> bytes:
    """An ONNX Runtime LoRA adapter file (``.onnx_adapter``) holding ``params``, written by
    onnxruntime's AdapterFormat (the format is ORT's own; ortc only reads it)."""
    import tempfile

    import onnxruntime

    fmt = onnxruntime.AdapterFormat()
    fmt.set_adapter_version(1)
    fmt.set_model_version(1)
    fmt.set_parameters({k: onnxruntime.OrtValue.ortvalue_from_numpy(v) for k, v in params.items()})
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "adapter.onnx_adapter")
        fmt.export_adapter(path)
        with open(path, "rb") as f:
            return f.read()
