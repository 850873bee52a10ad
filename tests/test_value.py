"""Values: every element type both ways, zero copy where promised, sequences, maps, errors."""

from __future__ import annotations

import gc
import re
import weakref

import ml_dtypes
import numpy as np
import pytest

import models
import ortc
from ortc import ElementType, ValueKind
from ortc.dtypes import dtype_for, element_type_for, pack_subbyte, unpack_subbyte

NUMERIC = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8,
           np.uint16, np.uint32, np.uint64, np.bool_]
ML = [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
      ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz]
SUBBYTE = [(ml_dtypes.int4, ElementType.INT4, [-8, -1, 0, 1, 3, 7, 5]),
           (ml_dtypes.uint4, ElementType.UINT4, [0, 1, 7, 8, 15, 3, 9]),
           (ml_dtypes.float4_e2m1fn, ElementType.FLOAT4E2M1, [-6, -1, -0.5, 0, 0.5, 1.5, 6]),
           (ml_dtypes.int2, ElementType.INT2, [-2, -1, 0, 1, 1, 0, -2]),
           (ml_dtypes.uint2, ElementType.UINT2, [0, 1, 2, 3, 3, 2, 1])]


def _sample(dtype, shape=(2, 3)):
    rng = np.random.default_rng(1)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("dtype", NUMERIC + ML, ids=lambda d: np.dtype(d).name)
def test_numeric_round_trip_is_zero_copy(dtype) -> None:
    arr = _sample(dtype)
    v = ortc.Value.from_numpy(arr)
    assert v.kind == ValueKind.TENSOR and v.is_tensor and v.shape == (2, 3)
    assert v.dtype == np.dtype(dtype) and v.element_type == element_type_for(np.dtype(dtype))
    out = v.numpy()
    assert out.dtype == arr.dtype
    np.testing.assert_array_equal(out.view(np.uint8), arr.view(np.uint8))
    assert np.shares_memory(out, arr), "numpy -> Value -> numpy must not copy"


@pytest.mark.parametrize("dtype,et,values", SUBBYTE, ids=lambda x: getattr(x, "__name__", ""))
def test_subbyte_types_round_trip_packed(dtype, et, values) -> None:
    arr = np.array(values).astype(dtype)  # 7 elements: the last byte is partly used
    v = ortc.Value.from_numpy(arr)
    assert v.element_type == et and v.shape == arr.shape
    np.testing.assert_array_equal(v.numpy().view(np.uint8), arr.view(np.uint8))


def test_complex_tensors_are_refused_by_ort() -> None:
    # ONNX declares complex element types; ORT implements no tensor of them.
    for dtype in (np.complex64, np.complex128):
        with pytest.raises(ortc.OrtNotImplementedError, match="not supported"):
            ortc.Value.from_numpy(np.zeros(2, dtype))


def test_pack_layout_matches_ort() -> None:
    # two int4 per byte, first element in the low nibble
    arr = np.array([1, -1, 7], dtype=ml_dtypes.int4)
    assert pack_subbyte(arr, 4).tolist() == [0xF1, 0x07]
    back = unpack_subbyte(np.array([0xF1, 0x07], np.uint8), 4, 3, np.dtype(ml_dtypes.int4))
    assert back.astype(np.int8).tolist() == [1, -1, 7]


def test_strings_round_trip_unicode_and_empty() -> None:
    arr = np.array([["", "a", "été"], ["日本語", "x\x00y", "tab\t"]], dtype=object)
    v = ortc.Value.from_numpy(arr)
    assert v.element_type == ElementType.STRING and v.shape == (2, 3)
    out = v.numpy()
    assert out.dtype == object and out.tolist()[0] == ["", "a", "été"]
    assert out[1, 0] == "日本語"
    for kind in ("U", "S"):
        a2 = np.array(["ab", "cd"], dtype=kind)
        assert ortc.Value.from_numpy(a2).numpy().tolist() == ["ab", "cd"]


def test_non_utf8_bytes_are_refused() -> None:
    with pytest.raises(ortc.InvalidArgument, match="element 1 is not valid UTF-8"):
        ortc.Value.from_numpy(np.array([b"ok", b"\xff\xfe"], dtype=object))
    with pytest.raises(ortc.InvalidArgument, match="not encodable"):
        ortc.Value.from_numpy(np.array(["\udcff"], dtype=object))


def test_non_contiguous_is_copied_once_and_read_only_is_accepted() -> None:
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    view = base[:, ::2]
    v = ortc.Value.from_numpy(view)
    np.testing.assert_array_equal(v.numpy(), view)
    assert not np.shares_memory(v.numpy(), base)
    ro = np.arange(4, dtype=np.int64)
    ro.flags.writeable = False
    v2 = ortc.Value.from_numpy(ro)
    assert np.shares_memory(v2.numpy(), ro)


def test_zero_size_and_scalar() -> None:
    empty = np.zeros((0, 4), np.float32)
    v = ortc.Value.from_numpy(empty)
    assert v.shape == (0, 4) and v.numpy().shape == (0, 4)
    s = ortc.Value.from_numpy(np.float64(2.5))
    assert s.shape == () and s.numpy() == 2.5
    with pytest.raises(TypeError):
        len(s)


def test_value_keeps_its_array_and_array_keeps_its_value() -> None:
    arr = np.arange(5, dtype=np.float32)
    ref = weakref.ref(arr)
    v = ortc.Value.from_numpy(arr)
    del arr
    gc.collect()
    assert ref() is not None
    out = v.numpy()
    vref = weakref.ref(v)
    del v
    gc.collect()
    assert vref() is not None, "the array's base must keep the Value alive"
    assert out.tolist() == [0, 1, 2, 3, 4]
    del out
    gc.collect()
    assert vref() is None and ref() is None


def test_writes_through_the_numpy_view_reach_ort() -> None:
    v = ortc.Value.from_numpy(np.zeros(3, np.int32))
    v.fill([1, 2, 3])
    assert v.numpy().tolist() == [1, 2, 3]


@pytest.mark.parametrize("dtype,data,message", [
    (np.int32, np.array([2.7, 1e20, -1.5]), "cannot convert float64 data to INT32"),
    (np.uint8, np.array([-1.0, 300.0]), "cannot convert float64 data to UINT8"),
    (np.float32, ["1.5", "2"], "cannot convert <U3 data to FLOAT"),
    (np.int8, [1, 200], "value 200 is out of range for INT8"),
    (np.int32, np.array([2**40, 1], np.int64), "value 1099511627776 is out of range for INT32"),
    (np.float16, [1e6, 1.0], "value 1000000.0 is out of range for FLOAT16"),
    (np.float32, np.ones(4, np.float32), "could not broadcast"),
])
def test_fill_refuses_what_would_change_values(dtype: type, data: object, message: str) -> None:
    """fill() converts like a run's Python data: no floats into ints, no strings into numbers,
    nothing out of range. It used numpy's unsafe cast, which truncated, wrapped and parsed
    (found from outside: [2.7, 1e20, -1.5] into int32 gave [2, -2147483648, -1])."""
    v = ortc.Value.from_numpy(np.zeros(2 if np.ndim(data) and len(data) == 2 else 3, dtype))
    before = v.numpy().copy()
    with pytest.raises(ortc.InvalidArgument, match=re.escape(message)):
        v.fill(data)
    assert v.numpy().tolist() == before.tolist(), "a refused fill writes nothing"


def test_fill_takes_data_that_keeps_its_values() -> None:
    v = ortc.Value.from_numpy(np.zeros(3, np.float32))
    v.fill(np.array([1.5, 2.5, 3.5]))  # float64 into float32: the same kind
    v.fill(2.0)  # broadcast
    assert v.numpy().tolist() == [2, 2, 2]
    u = ortc.Value.from_numpy(np.zeros(3, np.uint8))
    u.fill([0, 255, 7])  # ints into an unsigned type, in range
    assert u.numpy().tolist() == [0, 255, 7]


@pytest.mark.parametrize("element_type, data, becomes", [
    (ElementType.FLOAT8E4M3FN, [1.0, float("inf")], "nan"),   # no infinities
    (ElementType.FLOAT8E4M3FNUZ, [float("-inf")], "nan"),
    (ElementType.FLOAT8E5M2FNUZ, [float("inf")], "nan"),
    (ElementType.FLOAT4E2M1, [float("inf")], "6.0"),           # no infinities, no NaN
    (ElementType.FLOAT4E2M1, [float("nan")], "-0.0"),
    (ElementType.FLOAT8E8M0, [0.0], "nan"),                    # no zero, no sign
    (ElementType.FLOAT8E8M0, [-2.0], "nan"),
])
def test_python_data_is_not_cast_to_another_kind_of_value(element_type: ElementType,
                                                           data: list[float], becomes: str
                                                           ) -> None:
    """Python data given as an ml_dtypes float type was cast by ml_dtypes, which makes NaN of
    an infinity, 6.0 of one and -0.0 of NaN in FLOAT4E2M1, NaN of zero and of negatives in
    FLOAT8E8M0: silently other values, now refused as other changes are (found from outside)."""
    bad = next(x for x in data if np.isinf(x) or np.isnan(x) or x <= 0)
    with pytest.raises(ortc.InvalidArgument, match=re.escape(
            f"value {bad} has no {element_type.name} equivalent (the cast makes {becomes}")):
        ortc.Value.from_numpy(data, element_type)
    with pytest.raises(ortc.InvalidArgument, match="has no"):
        ortc.Value.from_sequence([data], element_type)
    if element_type == ElementType.FLOAT8E4M3FN:  # (ORT's Identity lacks the float4/e8m0 types)
        with ortc.Session(models.identity_model(models.T.FLOAT8E4M3FN, None)) as s:
            with pytest.raises(ortc.InvalidArgument, match="input 'x'.*has no"):
                s.run(None, {"x": data})
            assert s.run(None, {"x": [1.0, -2.0]})[0].astype(float).tolist() == [1.0, -2.0]


def test_python_data_keeps_the_special_values_a_type_has() -> None:
    inf, nan = float("inf"), float("nan")
    for et, data in ((ElementType.FLOAT8E5M2, [inf, -inf, nan, -0.0]),
                     (ElementType.BFLOAT16, [inf, -inf, nan, -0.0]),
                     (ElementType.FLOAT8E4M3FN, [nan, -0.0, 448.0]),
                     (ElementType.FLOAT8E8M0, [nan, 2.0 ** -127, 0.25])):
        got = ortc.Value.from_numpy(data, et).numpy().astype(np.float64)
        np.testing.assert_array_equal(got, data, err_msg=et.name)
        assert np.signbit(got).tolist() == np.signbit(data).tolist(), et.name


def test_element_type_must_be_an_element_type() -> None:
    """A member of another of ortc's enums is refused even when its number is an element
    type's (ExecutionMode.PARALLEL is 1, FLOAT's number); found from outside. A wrongly typed
    value is a TypeError; a number that is no element type a ValueError (InvalidArgument)."""
    x = np.ones(2, np.float32)
    for make in (lambda et: ortc.Value.from_numpy(x, et),
                 lambda et: ortc.Value.from_sequence([x], et),
                 lambda et: ortc.Value.empty_sequence(et),
                 lambda et: ortc.Value.from_map({"k": 1.0}, value_type=et)):
        with pytest.raises(TypeError, match="expected a ElementType, got "
                                            "ExecutionMode.PARALLEL"):
            make(ortc.ExecutionMode.PARALLEL)
        with pytest.raises(ortc.InvalidArgument, match="999 is not a ElementType"):
            make(999)
        assert make(ElementType.FLOAT) is not None and make(1) is not None
    with pytest.raises(TypeError, match="from_map key_type: expected a ElementType"):
        ortc.Value.from_map({7: 1.0}, key_type=ortc.LoggingLevel.FATAL)  # 4, INT16's number


def test_sequence_and_map_values() -> None:
    seq = ortc.Value.from_sequence([np.array([1, 2], np.int64), np.array([3], np.int64)])
    assert seq.kind == ValueKind.SEQUENCE and len(seq) == 2
    assert [a.tolist() for a in seq.to_python()] == [[1, 2], [3]]
    assert seq.type_info.type_str == "seq(tensor(int64))"
    m = ortc.Value.from_map({1: 0.5, 2: 1.5})
    assert m.kind == ValueKind.MAP and m.to_python() == {1: 0.5, 2: 1.5}
    ms = ortc.Value.from_map({"a": 1.0})
    assert ms.to_python() == {"a": 1.0}
    seq_of_maps = ortc.Value.from_sequence([{1: 2.0}, {3: 4.0}])
    assert seq_of_maps.to_python() == [{1: 2.0}, {3: 4.0}]
    with pytest.raises(ortc.InvalidArgument, match="not a tensor"):
        seq.numpy()
    with pytest.raises(ortc.InvalidArgument):
        ortc.Value.from_sequence(np.zeros(2))  # type: ignore[arg-type]
    with pytest.raises(ortc.InvalidArgument):
        ortc.Value.from_map([1, 2])  # type: ignore[arg-type]


def test_from_sequence_element_type_converts_and_must_match() -> None:
    """element_type given for a non-empty sequence is used, never ignored: it converts Python
    data, and an item of another element type is refused (it was silently ignored: a
    float32 item made a seq(tensor(float)) though INT64 was asked for)."""
    seq = ortc.Value.from_sequence([[1.0, 2.0], [3.0]], ElementType.FLOAT)
    assert seq.type_info.type_str == "seq(tensor(float))"
    assert [a.tolist() for a in seq.to_python()] == [[1.0, 2.0], [3.0]]
    with pytest.raises(ortc.InvalidArgument, match="INT64"):
        ortc.Value.from_sequence([np.ones(2, np.float32)], ElementType.INT64)
    with pytest.raises(ortc.InvalidArgument, match="item 1 is a FLOAT Value"):
        ortc.Value.from_sequence([ortc.Value.from_numpy(np.ones(1, np.int64)),
                                  ortc.Value.from_numpy(np.ones(1, np.float32))],
                                 ElementType.INT64)
    with pytest.raises(ortc.InvalidArgument, match="item 0 is a dict"):
        ortc.Value.from_sequence([{1: 2.0}], ElementType.FLOAT)
    with pytest.raises(ortc.InvalidArgument, match="out of range"):
        ortc.Value.from_sequence([[1000]], ElementType.INT8)


def test_from_map_key_and_value_types_convert_python_data() -> None:
    """A dict's Python values take the declared type: ints among floats (or only ints) made a
    map of double (or int64) values, which run() fed to a map(int64, float) input and ORT
    refused, though a list of ints for a float tensor input is converted."""
    m = ortc.Value.from_map({1: 1.0, 2: 2}, ElementType.INT64, ElementType.FLOAT)
    assert m.type_info.type_str == "map(int64,tensor(float))" and m.to_python() == {1: 1.0, 2: 2.0}
    assert ortc.Value.from_map({}, ElementType.STRING, ElementType.INT64).type_info.type_str \
        == "map(string,tensor(int64))"
    with pytest.raises(ortc.InvalidArgument, match="from_map values: cannot convert strings"):
        ortc.Value.from_map({1: "1.0"}, ElementType.INT64, ElementType.FLOAT)
    with pytest.raises(ortc.InvalidArgument, match="from_map values.*out of range"):
        ortc.Value.from_map({1: 300}, ElementType.INT64, ElementType.INT8)
    with pytest.raises(ortc.InvalidArgument, match="from_map keys: expected strings"):
        ortc.Value.from_map({1: 1.0}, ElementType.STRING, ElementType.FLOAT)
    sess = ortc.Session(models.dict_vectorizer_model((1, 2, 3, 5)))
    [y] = sess.run(None, {"x": {1: 1.0, 5: 2}})
    assert y.tolist() == [[1.0, 0.0, 0.0, 2.0]]
    [y] = sess.run(None, {"x": {2: 3}})
    assert y.tolist() == [[0.0, 3.0, 0.0, 0.0]]


def test_a_map_from_keys_and_values_refuses_a_repeated_key() -> None:
    """ORT's map keeps one value per key: (keys, values) arrays with a key twice lost a value
    without a word ({1: 1.0} from keys [1, 1]; found from outside)."""
    with pytest.raises(ortc.InvalidArgument, match="the key 1 is given twice"):
        ortc.Value.from_map((np.array([1, 1, 2]), np.array([1.0, 2.0, 3.0], np.float32)))
    with pytest.raises(ortc.InvalidArgument, match="the key 'a' is given twice"):
        ortc.Value.from_map((np.array(["a", "b", "a"], object), np.ones(3, np.float32)))
    with ortc.Session(models.dict_vectorizer_model()) as s:  # map(int64, float) input
        with pytest.raises(ortc.InvalidArgument, match="given twice"):
            s.run(None, {"x": (np.array([1, 1]), np.array([1.0, 2.0], np.float32))})
        [y] = s.run(None, {"x": (np.array([5, 1]), np.array([1.0, 2.0], np.float32))})
        assert y.tolist() == [[2.0, 0.0, 0.0, 1.0]]


def test_a_sequence_of_maps_of_two_types_is_refused_naming_both() -> None:
    """ORT refuses it with its own C++ types and header path in the message
    ("ort_value.h:51 const T& OrtValue::Get() const [with T = std::map<long int, float>]")."""
    with pytest.raises(ortc.InvalidArgument, match=re.escape(
            "item 1 is a map(string,tensor(float)), item 0 a map(int64,tensor(float))")):
        ortc.Value.from_sequence([{1: 1.0}, {"a": 2.0}])
    floats = ortc.Value.from_map({1: 1.0})
    with pytest.raises(ortc.InvalidArgument, match=re.escape("item 2 is a map(int64,tensor(int64))")):
        ortc.Value.from_sequence([floats, {2: 2.0}, ortc.Value.from_map({3: 3}, value_type=ElementType.INT64)])
    assert ortc.Value.from_sequence([floats, {2: 2.0}]).to_python() == [{1: 1.0}, {2: 2.0}]


def test_bad_inputs_to_from_numpy() -> None:
    with pytest.raises(ortc.InvalidArgument, match="None"):
        ortc.Value.from_numpy(None)
    with pytest.raises(ortc.InvalidArgument, match="object array element 0 is a dict"):
        ortc.Value.from_numpy(np.array([{}], dtype=object))
    with pytest.raises(ortc.InvalidArgument, match="no ONNX Runtime element type"):
        ortc.Value.from_numpy(np.zeros(2, dtype="datetime64[s]"))
    with pytest.raises(TypeError, match="use Value.from_numpy"):
        ortc.Value()


def test_dtype_table_covers_every_element_type() -> None:
    for et in ElementType:
        if et in (ElementType.UNDEFINED, ElementType.STRING):
            continue
        dt = dtype_for(et, required=False)
        assert dt is not None, f"{et.name} has no dtype with ml_dtypes installed"
        assert element_type_for(dt) == et or et.name.startswith("FLOAT8E8M0")


def test_missing_ml_dtypes_gives_a_clear_error() -> None:
    from conftest import run_python

    code = ("import sys; sys.modules['ml_dtypes'] = None\n"
            "import ortc\nfrom ortc.dtypes import dtype_for\n"
            "try:\n dtype_for(ortc.ElementType.BFLOAT16)\nexcept TypeError as e:\n print(e)")
    proc = run_python(code)
    assert "needs ml_dtypes" in proc.stdout and "bfloat16" in proc.stdout, proc.stderr


def test_every_identity_case_round_trips_through_a_session() -> None:
    for case in models.identity_cases():
        s = ortc.Session(case.model)
        [y] = s.run(None, case.feeds)
        x = case.feeds["x"]
        assert y.dtype == x.dtype and y.shape == x.shape, case.name
        if x.dtype == object:
            assert y.tolist() == x.tolist(), case.name
        else:
            np.testing.assert_array_equal(y.reshape(-1).view(np.uint8),
                                          np.ascontiguousarray(x).reshape(-1).view(np.uint8),
                                          err_msg=case.name)


# -- empty sequences (CreateValue refuses zero items; a SequenceEmpty model makes them) --------
def _seq_length_model(elem: int) -> bytes:
    import onnx
    from onnx import TensorProto, helper

    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, None))
    graph = helper.make_graph(
        [helper.make_node("SequenceLength", ["seq"], ["n"]),
         helper.make_node("Identity", ["seq"], ["same"])], "g",
        [helper.make_value_info("seq", seq_type)],
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_value_info("same", seq_type)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    return model.SerializeToString()


@pytest.mark.parametrize("elem", [ortc.ElementType.FLOAT, ortc.ElementType.INT64,
                                  ortc.ElementType.STRING, ortc.ElementType.BOOL])
def test_empty_sequence_value_and_feed(elem: ortc.ElementType) -> None:
    v = ortc.Value.empty_sequence(elem)
    assert v.kind == ortc.ValueKind.SEQUENCE and len(v) == 0 and v.to_python() == []
    assert v.type_info.element is not None and v.type_info.element.element_type == elem
    sess = ortc.Session(_seq_length_model(int(elem)))
    n, same = sess.run(None, {"seq": []})  # the session knows the element type
    assert int(n) == 0 and same == []
    n2, _ = sess.run(None, {"seq": ortc.Value.from_sequence([], elem)})
    assert int(n2) == 0


def test_empty_sequence_needs_its_type() -> None:
    with pytest.raises(ortc.InvalidArgument, match="element_type"):
        ortc.Value.from_sequence([])


def test_a_masked_array_with_masked_elements_is_refused_not_read_through() -> None:
    """ORT has no mask: it would read whatever lies under the masked elements. Such an array is
    refused (run, Value.from_numpy, ortc.compat alike) with what to pass instead; a masked
    array with nothing masked is just its data."""
    import ortc.compat as compat

    s = ortc.Session(models.add_model(np.float32, (3,)))
    masked = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False], dtype=np.float32)
    b = np.ones(3, np.float32)
    with pytest.raises(ortc.InvalidArgument, match=r"input 'a': a masked array .*\.filled"):
        s.run(None, {"a": masked, "b": b})
    with pytest.raises(ortc.InvalidArgument, match="masked array"):
        ortc.Value.from_numpy(masked)
    cs = compat.InferenceSession(models.add_model(np.float32, (3,)),
                                 providers=["CPUExecutionProvider"])
    with pytest.raises(ortc.InvalidArgument, match="masked array"):
        cs.run(None, {"a": masked, "b": b})
    unmasked = np.ma.array([1.0, 2.0, 3.0], dtype=np.float32)
    np.testing.assert_array_equal(s.run(None, {"a": unmasked, "b": b})[0], [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(s.run(None, {"a": masked.filled(0.0), "b": b})[0],
                                  [2.0, 1.0, 4.0])
