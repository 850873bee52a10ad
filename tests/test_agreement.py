"""ortc must give bit-identical results to onnxruntime's own Python package.

Every operator-zoo case (``models.zoo_cases()``), every element-type identity
case (``models.identity_cases()``) and the named builders of ``models.py`` are
run through both bindings with one intra-op thread, and the outputs are
compared exactly: same Python container kind, same dtype, same shape and the
same bytes (NaNs included; strings compared as objects; sequences and maps
element by element).

onnxruntime's Python package cannot take or return bfloat16 / float8 / int4 /
uint4 arrays, so for models that use those types the reference side feeds raw
``OrtValue``s and reads the output buffers byte for byte (4-bit values are
unpacked from ORT's two-per-byte layout).  For the handful of models whose
*inputs* are strings and whose outputs are such types (``OrtValue`` cannot hold
strings), the reference model gets an extra exact widening ``Cast`` (float8 /
bfloat16 -> float32, int4 -> int8) per output and ortc's output is compared
after the same (lossless) widening.

Note: importing onnxruntime here is fine; other test files must never rely on
it (``tests/test_loader.py`` checks in a subprocess that ortc itself never
imports onnxruntime).
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ort = pytest.importorskip("onnxruntime")

import models  # noqa: E402  (tests/ is on sys.path under pytest's default import mode)
import ortc  # noqa: E402

T = TensorProto

# ---------------------------------------------------------------------------
# the cases
# ---------------------------------------------------------------------------


def _builder_cases() -> list[models.Case]:
    """Cases built from the named builders of models.py (not in the zoo)."""
    rng = np.random.default_rng(1234)
    f32 = np.float32
    C = models.Case
    cases = [
        C("add_float32", models.add_model(np.float32, [3]), {"a": rng.standard_normal(3).astype(f32),
                                                             "b": rng.standard_normal(3).astype(f32)}),
        C("add_float64_2d", models.add_model(np.float64, [2, 5]), {"a": rng.standard_normal((2, 5)),
                                                                   "b": rng.standard_normal((2, 5))}),
        C("add_int64_default_shape", models.add_model(np.int64), {"a": np.array([7], np.int64),
                                                                  "b": np.array([-9], np.int64)}),
        C("add_float16_symbolic", models.add_model(np.float16, ["n"]),
          {"a": rng.standard_normal(6).astype(np.float16), "b": rng.standard_normal(6).astype(np.float16)}),
        C("add_opset13_ir7", models.add_model(np.float32, [2], opset=13, ir_version=7),
          {"a": np.array([1.5, 2.5], f32), "b": np.array([0.25, -8.0], f32)}),
        C("matmul_2x3x4", models.matmul_model(2, 3, 4), {"a": rng.standard_normal((2, 3)).astype(f32),
                                                          "b": rng.standard_normal((3, 4)).astype(f32)}),
        C("matmul_symbolic", models.matmul_model("m", 8, "n"), {"a": rng.standard_normal((5, 8)).astype(f32),
                                                                 "b": rng.standard_normal((8, 3)).astype(f32)}),
        C("mlp_3x16_batch", models.mlp_model(3, 16, "batch"), {"x": rng.standard_normal((4, 16)).astype(f32)}),
        C("mlp_2x8_fixed", models.mlp_model(2, 8, 2), {"x": rng.standard_normal((2, 8)).astype(f32)}),
        C("mlp_none_batch_float64", models.mlp_model(2, 8, None, dtype=np.float64),
          {"x": rng.standard_normal((3, 8))}),
        C("matmul_chain_small", models.matmul_chain_model(4, 32), {"x": rng.standard_normal((32, 32)).astype(f32)}),
        C("symbolic_dim", models.symbolic_dim_model(), {"x": rng.standard_normal((3, 4)).astype(f32)}),
        C("symbolic_dim_batch0", models.symbolic_dim_model(), {"x": np.zeros((0, 4), f32)}),
        C("none_dim", models.none_dim_model(), {"x": rng.standard_normal((5, 3)).astype(f32)}),
        C("unknown_rank_3d", models.unknown_rank_model(), {"x": rng.standard_normal((2, 3, 2)).astype(f32)}),
        C("unknown_rank_scalar", models.unknown_rank_model(), {"x": np.array(-2.5, f32)}),
        C("multi_io", models.multi_io_model(),
          {"x": rng.standard_normal((2, 3)).astype(f32), "n": np.array([1, 2, 3, 40], np.int64),
           "s": np.array(["abc", "Été"], dtype=object)}),
        C("overridable_initializer_default", models.overridable_initializer_model(),
          {"x": np.array([0.5, 1.5, -2.0], f32)}),
        C("overridable_initializer_fed", models.overridable_initializer_model(),
          {"x": np.array([0.5, 1.5, -2.0], f32), "bias": np.array([10.0, 20.0, 30.0], f32)}),
        C("metadata_identity", models.metadata_model(), {"x": np.array([3.25], f32)}),
        C("sequence_construct_float32", models.sequence_construct_model(),
          {"a": rng.standard_normal((2, 2)).astype(f32), "b": rng.standard_normal(3).astype(f32),
           "c": np.array(1.0, f32)}),
        C("sequence_construct_string", models.sequence_construct_model(object),
          {"a": np.array(["x", "yy"], dtype=object), "b": np.array([["é"]], dtype=object),
           "c": np.array([], dtype=object)}),
        C("sequence_at_int64", models.sequence_at_model(np.int64),
          {"seq": [np.arange(3, dtype=np.int64), np.arange(5, dtype=np.int64).reshape(1, 5)],
           "i": np.array(1, np.int64)}),
        C("split_to_sequence_float32", models.split_to_sequence_model(np.float32, axis=1),
          {"x": rng.standard_normal((2, 4)).astype(f32)}),
        C("concat_from_sequence_new_axis", models.concat_from_sequence_model(np.float32, axis=0, new_axis=1),
          {"seq": [rng.standard_normal(3).astype(f32) for _ in range(4)]}),
        C("sequence_identity_float32", models.sequence_identity_model(),
          {"seq": [rng.standard_normal(2).astype(f32), rng.standard_normal((3, 1)).astype(f32)]}),
        C("sequence_identity_single_bool", models.sequence_identity_model(np.bool_),
          {"seq": [np.array([True, False])]}),
        C("zipmap_int", models.zipmap_model([1, 2]), {"x": rng.standard_normal((3, 2)).astype(f32)}),
        C("zipmap_str_one_row", models.zipmap_model(["only"]), {"x": np.array([[0.5]], f32)}),
        C("dict_vectorizer_int_empty_hits", models.dict_vectorizer_model([1, 2]), {"x": {7: 1.0}}),
        C("dict_vectorizer_str", models.dict_vectorizer_model(["a", "é"]), {"x": {"é": 2.0, "a": -0.5, "z": 9.0}}),
        C("castmap_float", models.castmap_model(3, "TO_FLOAT"), {"x": {1: 2.5}}),
        C("optional_model", models.optional_model(), {"x": np.array([np.nan, -0.0], f32)}),
    ]
    return cases


ZOO = models.zoo_cases()
IDENTITY = models.identity_cases()
BUILDERS = _builder_cases()
ALL_CASES = ZOO + IDENTITY + BUILDERS


def _params(cases: list[models.Case]) -> list[Any]:
    return [pytest.param(c, id=c.name) for c in cases]


# ---------------------------------------------------------------------------
# the reference side: onnxruntime's Python package
# ---------------------------------------------------------------------------

_EXOTIC = {
    "tensor(bfloat16)": np.dtype(ml_dtypes.bfloat16),
    "tensor(float8e4m3fn)": np.dtype(ml_dtypes.float8_e4m3fn),
    "tensor(float8e4m3fnuz)": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "tensor(float8e5m2)": np.dtype(ml_dtypes.float8_e5m2),
    "tensor(float8e5m2fnuz)": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "tensor(int4)": np.dtype(ml_dtypes.int4),
    "tensor(uint4)": np.dtype(ml_dtypes.uint4),
}
_FOUR_BIT = (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4))


def _ort_session(model: bytes) -> Any:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def _pack_4bit(arr: np.ndarray) -> np.ndarray:
    nib = (arr.astype(np.int8).reshape(-1).view(np.uint8) & 0x0F).astype(np.uint8)
    if nib.size % 2:
        nib = np.append(nib, np.uint8(0))
    return (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8)


def _unpack_4bit(raw: bytes, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    b = np.frombuffer(raw, np.uint8)
    nib = np.stack([b & 0x0F, b >> 4], axis=1).reshape(-1)[: math.prod(shape)].astype(np.int16)
    if dtype == np.dtype(ml_dtypes.int4):
        nib = np.where(nib >= 8, nib - 16, nib)
    return nib.astype(np.int8).astype(dtype).reshape(shape)


def _to_ortvalue(arr: np.ndarray, type_str: str) -> Any:
    dt = _EXOTIC.get(type_str)
    if dt is None:
        return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(arr))
    et = models.elem_type_of(dt)
    ov = ort.OrtValue.ortvalue_from_shape_and_type(list(arr.shape), et)
    raw = _pack_4bit(arr) if dt in _FOUR_BIT else np.ascontiguousarray(arr).view(np.uint8 if dt.itemsize == 1
                                                                                  else np.uint16)
    nbytes = raw.nbytes
    assert nbytes == ov.tensor_size_in_bytes(), (nbytes, ov.tensor_size_in_bytes())
    if nbytes:
        ctypes.memmove(ov.data_ptr(), raw.ctypes.data, nbytes)
    return ov


def _from_ortvalue(ov: Any) -> Any:
    type_str = ov.data_type()
    dt = _EXOTIC.get(type_str)
    if dt is None:
        return ov.numpy()
    shape = tuple(ov.shape())
    size = ov.tensor_size_in_bytes()
    raw = ctypes.string_at(ov.data_ptr(), size) if size else b""
    if dt in _FOUR_BIT:
        return _unpack_4bit(raw, dt, shape)
    return np.frombuffer(raw, np.uint8 if dt.itemsize == 1 else np.uint16).view(dt).reshape(shape).copy()


class Widened:
    """Expected value of an exotic output known only through an exact widening Cast."""

    def __init__(self, dtype: np.dtype, wide: np.ndarray) -> None:
        self.dtype = dtype
        self.wide = wide

    def __repr__(self) -> str:
        return f"Widened({self.dtype}, {self.wide!r})"


def _widen_model(model: bytes, exotic_outputs: list[str]) -> bytes:
    m = onnx.load_from_string(model)
    for name in exotic_outputs:
        out = next(o for o in m.graph.output if o.name == name)
        et = out.type.tensor_type.elem_type
        wide_t = T.INT8 if et in models.PACKED_4BIT_ELEM_TYPES else T.FLOAT
        m.graph.node.append(helper.make_node("Cast", [name], [name + "__wide"], to=wide_t))
        m.graph.output.append(helper.make_tensor_value_info(name + "__wide", wide_t, None))
    return m.SerializeToString()


def reference_run(model: bytes, feeds: dict[str, Any]) -> list[Any]:
    """Outputs of ``model`` on ``feeds`` computed by onnxruntime's Python package."""
    sess = _ort_session(model)
    in_types = {i.name: i.type for i in sess.get_inputs()}
    outs = sess.get_outputs()
    exotic_in = [k for k in feeds if in_types.get(k) in _EXOTIC]
    exotic_out = [o.name for o in outs if o.type in _EXOTIC]
    if not exotic_in and not exotic_out:
        return sess.run(None, feeds)
    has_string_in = any(isinstance(v, np.ndarray) and v.dtype == object for v in feeds.values())
    if not has_string_in:
        assert all(isinstance(v, np.ndarray) for v in feeds.values()), "raw path handles tensors only"
        ovs = {k: _to_ortvalue(v, in_types[k]) for k, v in feeds.items()}
        res = sess.run_with_ort_values(None, ovs)
        return [_from_ortvalue(r) for r in res]
    assert not exotic_in, "string and exotic inputs in one model are not supported by the reference"
    wsess = _ort_session(_widen_model(model, exotic_out))
    names = [o.name for o in outs]
    want = [n + "__wide" if n in exotic_out else n for n in names]
    res = wsess.run(want, feeds)
    return [Widened(_EXOTIC[o.type], r) if o.name in exotic_out else r for o, r in zip(outs, res)]


# ---------------------------------------------------------------------------
# the ortc side
# ---------------------------------------------------------------------------


def _ortc_session(model: bytes) -> Any:
    return ortc.Session(model, ortc.SessionOptions(intra_op_num_threads=1, inter_op_num_threads=1))


def _to_value(data: Any) -> Any:
    if data is None:
        return None
    if isinstance(data, dict):
        return ortc.Value.from_map(data)
    if isinstance(data, list):
        return ortc.Value.from_sequence(data)
    return ortc.Value.from_numpy(data)


# ---------------------------------------------------------------------------
# exact comparison
# ---------------------------------------------------------------------------


def _same_scalar(exp: Any, got: Any, where: str) -> None:
    assert type(got) is type(exp) or (isinstance(exp, float) and isinstance(got, (float, np.floating))) or (
        isinstance(exp, int) and isinstance(got, (int, np.integer))), (
        f"{where}: expected a {type(exp).__name__}, got {type(got).__name__} ({got!r})")
    if isinstance(exp, float):
        g = float(got)
        assert (math.isnan(exp) and math.isnan(g)) or (
            exp == g and math.copysign(1.0, exp) == math.copysign(1.0, g)), f"{where}: expected {exp!r}, got {got!r}"
    else:
        assert exp == got, f"{where}: expected {exp!r}, got {got!r}"


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype in _FOUR_BIT:
        return a.astype(np.int8)
    if a.dtype.kind == "b":
        return a.view(np.uint8)
    return a.view(f"u{a.dtype.itemsize}")


def assert_same(exp: Any, got: Any, where: str = "output") -> None:
    """Assert ``got`` (ortc) is exactly ``exp`` (onnxruntime), recursively."""
    if exp is None:
        assert got is None, f"{where}: expected None (empty optional), got {got!r}"
        return
    if isinstance(exp, Widened):
        assert isinstance(got, np.ndarray), f"{where}: expected an ndarray, got {type(got).__name__}"
        assert got.dtype == exp.dtype, f"{where}: dtype {got.dtype} != expected {exp.dtype}"
        assert got.shape == exp.wide.shape, f"{where}: shape {got.shape} != expected {exp.wide.shape}"
        wide = got.astype(exp.wide.dtype)
        np.testing.assert_array_equal(wide, exp.wide, err_msg=where)
        np.testing.assert_array_equal(_bits(wide), _bits(exp.wide), err_msg=f"{where} (bits)")
        return
    if isinstance(exp, dict):
        assert isinstance(got, dict), f"{where}: expected a dict, got {type(got).__name__}"
        assert list(got.keys()) == list(exp.keys()) or set(got.keys()) == set(exp.keys()), (
            f"{where}: keys {sorted(map(repr, got))} != expected {sorted(map(repr, exp))}")
        for k, v in exp.items():
            _same_scalar(k, next(g for g in got if g == k), f"{where}[key {k!r}]")
            if isinstance(v, np.ndarray):
                assert_same(v, got[k], f"{where}[{k!r}]")
            else:
                _same_scalar(v, got[k], f"{where}[{k!r}]")
        return
    if isinstance(exp, list):
        assert isinstance(got, list), f"{where}: expected a list, got {type(got).__name__}"
        assert len(got) == len(exp), f"{where}: length {len(got)} != expected {len(exp)}"
        for i, (e, g) in enumerate(zip(exp, got)):
            assert_same(e, g, f"{where}[{i}]")
        return
    assert isinstance(exp, np.ndarray), f"{where}: unexpected reference type {type(exp).__name__}"
    assert isinstance(got, np.ndarray), f"{where}: expected an ndarray, got {type(got).__name__} ({got!r})"
    assert got.dtype == exp.dtype, f"{where}: dtype {got.dtype} != expected {exp.dtype}"
    assert got.shape == exp.shape, f"{where}: shape {got.shape} != expected {exp.shape}"
    if exp.dtype == object:
        assert all(isinstance(s, str) for s in got.reshape(-1)), f"{where}: string tensor elements must be str"
        np.testing.assert_array_equal(got, exp, err_msg=where)
        return
    if exp.dtype.kind == "f":
        np.testing.assert_array_equal(got, exp, err_msg=where)  # NaNs compare equal here
    elif exp.dtype not in _FOUR_BIT and exp.dtype.kind != "V":
        np.testing.assert_array_equal(got, exp, err_msg=where)
    np.testing.assert_array_equal(_bits(got), _bits(exp), err_msg=f"{where} (bit patterns)")


def assert_outputs_same(expected: list[Any], got: list[Any]) -> None:
    assert isinstance(got, list), f"run() must return a list, got {type(got).__name__}"
    assert len(got) == len(expected), f"{len(got)} outputs != expected {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        assert_same(e, g, f"output {i}")


# ---------------------------------------------------------------------------
# caches (each model is loaded once per binding)
# ---------------------------------------------------------------------------

_BY_NAME = {c.name: c for c in ALL_CASES}
assert len(_BY_NAME) == len(ALL_CASES), "duplicate case names"


@functools.lru_cache(maxsize=None)
def _expected(name: str) -> list[Any]:
    case = _BY_NAME[name]
    return reference_run(case.model, case.feeds)


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------


def test_same_onnxruntime_version() -> None:
    """Bit-identity is only meaningful against the same ORT build."""
    info = ortc.library_info() if hasattr(ortc, "library_info") else ortc._loader.library_info()
    assert info.version == ort.__version__, (info.version, ort.__version__, info.path)


def test_zoo_is_broad() -> None:
    ops = models.zoo_operators()
    assert len(ops) >= 60, sorted(ops)
    for op in ("Conv", "NonZero", "Loop", "If", "Einsum", "TopK", "StringNormalizer", "Cast", "Resize",
               "LayerNormalization", "SequenceAt", "ai.onnx.ml.ZipMap", "OptionalGetElement"):
        assert op in ops, op
    assert len(ZOO) >= 500


@pytest.mark.parametrize("case", _params(ALL_CASES))
def test_run_agrees(case: models.Case) -> None:
    expected = _expected(case.name)
    sess = _ortc_session(case.model)
    got = sess.run(None, case.feeds)
    assert_outputs_same(expected, got)


@pytest.mark.parametrize("case", _params(ALL_CASES))
def test_run_with_values_agrees(case: models.Case) -> None:
    expected = _expected(case.name)
    sess = _ortc_session(case.model)
    feeds = {k: _to_value(v) for k, v in case.feeds.items() if v is not None}
    vals = sess.run_with_values(None, feeds)
    assert isinstance(vals, list) and len(vals) == len(expected)
    got = []
    for v in vals:
        if v is None:
            got.append(None)
            continue
        assert isinstance(v, ortc.Value), type(v)
        if not v.has_value():  # an empty optional comes back as a Value holding nothing
            assert v.to_python() is None
            got.append(None)
        elif v.kind == ortc.ValueKind.TENSOR:
            got.append(v.numpy())
        else:
            got.append(v.to_python())
    assert_outputs_same(expected, got)


_MULTI_OUTPUT = [c for c in ALL_CASES if len(onnx.load_from_string(c.model).graph.output) > 1]


@pytest.mark.parametrize("case", _params(_MULTI_OUTPUT))
def test_selected_outputs_agree(case: models.Case) -> None:
    """Asking for a subset of the outputs, in reverse order, gives those outputs."""
    expected = _expected(case.name)
    names = [o.name for o in onnx.load_from_string(case.model).graph.output]
    pick = list(range(len(names)))[::-2]
    sess = _ortc_session(case.model)
    got = sess.run([names[i] for i in pick], case.feeds)
    assert_outputs_same([expected[i] for i in pick], got)


def test_session_reuse_is_stable() -> None:
    """Many runs on one session, interleaved with other sessions, keep agreeing."""
    picks = [c for c in ZOO if c.name in ("Conv_float32", "MatMul_big_float32", "StringSplit", "Unique_string",
                                          "NonZero_float32", "Loop_float32", "ZipMap_string_labels")]
    assert len(picks) == 7
    sessions = [(_ortc_session(c.model), c) for c in picks]
    for _ in range(5):
        for sess, c in sessions:
            assert_outputs_same(_expected(c.name), sess.run(None, c.feeds))


def test_matmul_chain_agrees() -> None:
    x = np.random.default_rng(5).standard_normal((128, 128)).astype(np.float32)
    model = models.matmul_chain_model(16, 128)
    exp = reference_run(model, {"x": x})
    got = _ortc_session(model).run(None, {"x": x})
    assert_outputs_same(exp, got)


def test_io_metadata_agrees() -> None:
    """Input/output names, dtypes and shapes agree with onnxruntime's description."""
    for case in ZOO[::7] + IDENTITY + BUILDERS:
        ref = _ort_session(case.model)
        sess = _ortc_session(case.model)
        for mine, theirs in ((sess.inputs, ref.get_inputs()), (sess.outputs, ref.get_outputs())):
            assert [a.name for a in mine] == [a.name for a in theirs], case.name
            for a, b in zip(mine, theirs):
                if b.type.startswith("tensor("):
                    want = tuple(d if isinstance(d, (int, str)) or d is None else d for d in b.shape)
                    assert tuple(a.shape) == want, (case.name, a.name, a.shape, b.shape)
                    ref_dt = _EXOTIC.get(b.type) or models.np_dtype_of(_TYPE_STR_TO_ELEM[b.type])
                    assert a.dtype == ref_dt, (case.name, a.name, a.dtype, b.type)


_TYPE_STR_TO_ELEM = {
    f"tensor({n})": et for n, et in (
        ("float", T.FLOAT), ("double", T.DOUBLE), ("float16", T.FLOAT16), ("int8", T.INT8), ("int16", T.INT16),
        ("int32", T.INT32), ("int64", T.INT64), ("uint8", T.UINT8), ("uint16", T.UINT16), ("uint32", T.UINT32),
        ("uint64", T.UINT64), ("bool", T.BOOL), ("string", T.STRING))
}


# ---------------------------------------------------------------------------
# the comparison itself must be strict (otherwise everything above is vacuous)
# ---------------------------------------------------------------------------

_I4 = np.dtype(ml_dtypes.int4)
_BF = np.dtype(ml_dtypes.bfloat16)

_MISMATCHES = {
    "neg_zero": (np.array([0.0], np.float32), np.array([-0.0], np.float32)),
    "nan_vs_number": (np.array([np.nan], np.float32), np.array([1.0], np.float32)),
    "nan_payload": (np.array([0x7FC00000], np.uint32).view(np.float32),
                    np.array([0x7FC00001], np.uint32).view(np.float32)),
    "one_ulp": (np.array([1.0], np.float32), np.nextafter(np.array([1.0], np.float32), np.float32(2))),
    "dtype": (np.array([1.0], np.float32), np.array([1.0], np.float64)),
    "shape": (np.zeros((2, 3), np.int64), np.zeros((3, 2), np.int64)),
    "scalar_vs_1d": (np.array(1, np.int64), np.array([1], np.int64)),
    "numpy_scalar": (np.array(1.5, np.float32), np.float32(1.5)),
    "bool": (np.array([True, False]), np.array([True, True])),
    "string": (np.array(["a", "b"], dtype=object), np.array(["a", "B"], dtype=object)),
    "string_bytes": (np.array(["a"], dtype=object), np.array([b"a"], dtype=object)),
    "string_dtype_U": (np.array(["a"], dtype=object), np.array(["a"])),
    "bfloat16": (np.array([1, 2], _BF), np.array([1, 3], _BF)),
    "bfloat16_vs_float16": (np.array([1, 2], _BF), np.array([1, 2], np.float16)),
    "int4": (np.array([-8, 7], _I4), np.array([-8, 6], _I4)),
    "int4_vs_int8": (np.array([-8, 7], _I4), np.array([-8, 7], np.int8)),
    "list_length": ([np.zeros(1)], [np.zeros(1), np.zeros(1)]),
    "list_vs_tuple": ([np.zeros(1)], (np.zeros(1),)),
    "list_element": ([np.zeros(1), np.ones(1)], [np.zeros(1), np.zeros(1)]),
    "dict_value": ({1: 0.5}, {1: 0.25}),
    "dict_key": ({1: 0.5}, {2: 0.5}),
    "dict_key_type": ({1: 0.5}, {"1": 0.5}),
    "dict_neg_zero": ({"a": 0.0}, {"a": -0.0}),
    "none_vs_array": (None, np.zeros(1)),
    "array_vs_none": (np.zeros(1), None),
    "widened": (Widened(_BF, np.array([1.0, 2.0], np.float32)), np.array([1, 3], _BF)),
    "widened_dtype": (Widened(_BF, np.array([1.0, 2.0], np.float32)), np.array([1, 2], np.float32)),
}


@pytest.mark.parametrize("exp,got", list(_MISMATCHES.values()), ids=list(_MISMATCHES))
def test_comparison_rejects(exp: Any, got: Any) -> None:
    with pytest.raises(AssertionError):
        assert_same(exp, got)


def test_comparison_accepts_equal_values() -> None:
    nan = np.array([np.nan, -0.0, np.inf], np.float64)
    assert_same(nan, nan.copy())
    assert_same([{"a": 1.5, "b": float("nan")}], [{"b": float("nan"), "a": 1.5}])
    assert_same(np.array(["é", ""], dtype=object), np.array(["é", ""], dtype=object))
    assert_same(Widened(_I4, np.array([-8, 7], np.int8)), np.array([-8, 7], _I4))
    assert_same(None, None)


@pytest.mark.parametrize("dtype", [ml_dtypes.int4, ml_dtypes.uint4], ids=["int4", "uint4"])
@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_4bit_packing_roundtrip(dtype: Any, n: int) -> None:
    """The reference side's 4-bit (un)packing, checked against ORT itself."""
    dt = np.dtype(dtype)
    values = np.arange(n) % 16 - (8 if dt == _I4 else 0)
    arr = values.astype(dt)
    packed = _pack_4bit(arr)
    assert packed.nbytes == (n + 1) // 2
    assert packed[0] & 0x0F == (int(values[0]) & 0x0F)
    back = _unpack_4bit(packed.tobytes(), dt, (n,))
    assert back.dtype == dt
    np.testing.assert_array_equal(back.astype(np.int8), values.astype(np.int8))
    # through ORT: int4 -> Cast -> int8 must give the same numbers
    model = models.make_model(
        [helper.make_node("Cast", ["x"], ["y"], to=T.INT8)],
        [helper.make_tensor_value_info("x", models.elem_type_of(dt), [n])],
        [helper.make_tensor_value_info("y", T.INT8, [n])],
    ).SerializeToString()
    sess = _ort_session(model)
    (out,) = sess.run_with_ort_values(None, {"x": _to_ortvalue(arr, f"tensor({'int4' if dt == _I4 else 'uint4'})")})
    np.testing.assert_array_equal(out.numpy(), values.astype(np.int8))


@pytest.mark.parametrize("model", [
    pytest.param(models.metadata_model(), id="metadata_model"),
    pytest.param(models.metadata_model(custom={}, doc_string="", model_version=0, graph_doc_string=""), id="empty"),
    pytest.param(models.add_model(), id="add_model"),
])
def test_model_metadata_agrees(model: bytes) -> None:
    ref = _ort_session(model).get_modelmeta()
    md = _ortc_session(model).metadata()
    for field in ("producer_name", "graph_name", "domain", "description", "graph_description", "version",
                  "custom_metadata_map"):
        assert getattr(md, field) == getattr(ref, field), field


def test_overridable_initializers_agree() -> None:
    model = models.overridable_initializer_model()
    ref = _ort_session(model).get_overridable_initializers()
    mine = _ortc_session(model).overridable_initializers
    assert [a.name for a in mine] == [a.name for a in ref] == ["bias"]
    assert [tuple(a.shape) for a in mine] == [tuple(a.shape) for a in ref] == [(3,)]
