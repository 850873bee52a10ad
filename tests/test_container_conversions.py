"""Sequences, maps and string tensors in and out of a run, and what reading a Value takes: the
results, and the work each conversion does counted (C calls, Values, cffi allocations), so a
conversion that goes back to asking ORT per item what it already knows shows here. A ZipMap's
sequence of maps (what scikit-learn classifiers converted with skl2onnx return, one map per
row), a sequence fed per run and a batch of strings pay it per item.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import models
import ortc
from ortc import _handle, _loader, _numpy_bridge
from ortc._ffi import ffi

#: the C calls counted
_COUNTED = ("GetValue", "HasValue", "GetValueType", "GetValueCount", "IsTensor",
            "GetTensorElementTypeAndShapeDataReference", "GetTensorMutableData", "ReleaseValue",
            "FillStringTensor", "GetResizedStringTensorElementBuffer", "GetTypeInfo")


class _Calls:
    """The counted C calls made inside a ``with`` block."""

    def __init__(self) -> None:
        self.count: Counter[str] = Counter()
        self._undo: Callable[[], None] | None = None

    def __enter__(self) -> Counter[str]:
        count = self.count

        def wrap(name: str, fn: Any) -> Any:
            def call(*args: Any) -> Any:
                count[name] += 1
                return fn(*args)
            return call

        self._undo = _loader.api().instrument(wrap, _COUNTED)
        return count

    def __exit__(self, *exc: Any) -> None:
        assert self._undo is not None
        self._undo()


def _rows(n: int) -> np.ndarray:
    return (np.arange(n * 3, dtype=np.float32) / 7).reshape(n, 3)


@pytest.mark.parametrize("labels", [(10, 20, 30), ("cat", "dog", "é")])
def test_a_zipmap_output_is_a_dict_per_row_read_without_asking_each_map_its_kind(
        labels: tuple[Any, ...]) -> None:
    s = ortc.Session(models.zipmap_model(labels))
    x = _rows(40)
    s.run(None, {"x": x})
    with _Calls() as calls:
        (maps,) = s.run(None, {"x": x})
    assert maps == [{k: float(v) for k, v in zip(labels, row)} for row in x]
    assert all(type(k) is type(labels[0]) and type(v) is float for m in maps for k, v in m.items())
    # per map: the map, its keys and its values taken (copies ORT makes), and released
    assert calls["GetValue"] == 3 * len(x)
    assert calls["ReleaseValue"] == 3 * len(x) + 1
    # the kind asked of the sequence and of its first map only: an ORT sequence holds one kind
    # (it was asked of every map, of its keys and of its values: 3 a row)
    assert calls["GetValueType"] == 2 and calls["HasValue"] == 2


def test_a_map_output_of_no_items_and_a_zipmap_of_no_rows() -> None:
    s = ortc.Session(models.zipmap_model((1, 2, 3)))
    assert s.run(None, {"x": np.zeros((0, 3), np.float32)}) == [[]]
    v = ortc.Value.from_map({}, ortc.ElementType.INT64, ortc.ElementType.FLOAT)
    assert v.to_python() == {}


@pytest.mark.parametrize("width", [3, _numpy_bridge.ITEM_COPY_MAX // 4 + 1])
def test_sequence_items_are_arrays_of_their_own_small_ones_copied(width: int) -> None:
    """A sequence's small tensors come out as copies (their values released at once), large
    ones as views; either way an array of its own, writable, holding the item's values."""
    s = ortc.Session(models.split_to_sequence_model())
    x = (np.arange(8 * width, dtype=np.float32) / 3).reshape(8, width)
    s.run(None, {"x": x})
    with _Calls() as calls:
        (items,) = s.run(None, {"x": x})
    assert len(items) == 8
    for i, item in enumerate(items):
        assert item.dtype == np.float32 and item.shape == (1, width)
        assert item.tobytes() == x[i:i + 1].tobytes()
        assert item.flags.writeable
    items[0][...] = -1.0
    assert all((item >= 0).all() for item in items[1:])
    assert calls["GetValue"] == 8 and calls["GetValueType"] == 2 and calls["HasValue"] == 2
    if width == 3:  # copied: each item's value released within the run
        assert calls["ReleaseValue"] == 8 + 1
        assert all(item.base is None for item in items)


def test_a_sequence_of_strings_and_of_sub_byte_tensors_is_converted_as_before() -> None:
    s = ortc.Session(models.split_to_sequence_model(np.dtype(object)))
    x = np.array([["a", "bé"], ["", "x\x00y"]], dtype=object)
    (items,) = s.run(None, {"x": x})
    assert [i.tolist() for i in items] == [[["a", "bé"]], [["", "x\x00y"]]]
    assert all(i.dtype == object for i in items)


_STRING_FEEDS = [
    np.array(["a", "bé", "", "日本語", "z"], dtype=object),
    np.array([b"a", "b", bytearray(b"c"), b"d\x00e"], dtype=object),
    np.array(["x\x00y", "\x00", "ok"]),  # NULs inside: written whole
    np.array([b"q", b""]),
    np.array([f"word{i}" * (i % 5) for i in range(300)], dtype=object),  # past _FEW_STRINGS
    np.array([], dtype=object),
]


def _string_identity() -> ortc.Session:
    from onnx import TensorProto, helper

    vi = [helper.make_tensor_value_info(n, TensorProto.STRING, [None]) for n in ("x", "y")]
    return ortc.Session(models._bytes(models.make_model(
        [helper.make_node("Identity", ["x"], ["y"])], [vi[0]], [vi[1]])))


@pytest.mark.parametrize("feed", _STRING_FEEDS, ids=range(len(_STRING_FEEDS)))
def test_string_tensors_go_in_and_out_unchanged(feed: np.ndarray) -> None:
    s = _string_identity()
    expected = [v.decode() if isinstance(v, (bytes, bytearray)) else v for v in feed.tolist()]
    nuls = sum("\x00" in v for v in expected)
    with _Calls() as calls:
        (y,) = s.run(None, {"x": feed})
    assert y.dtype == object and y.shape == feed.shape
    assert y.tolist() == expected
    assert all(type(v) is str for v in y.tolist())
    assert calls["FillStringTensor"] == (1 if len(feed) else 0)
    assert calls["GetResizedStringTensorElementBuffer"] == nuls


class _CountingFfi:
    """The bridge's ``ffi``, counting ``new`` (a cffi allocation each)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.news = 0

    def new(self, *args: Any) -> Any:
        self.news += 1
        return self.real.new(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_string_feed_makes_no_cffi_string_per_element(monkeypatch: pytest.MonkeyPatch) -> None:
    """The strings are laid in one buffer: a cffi object per element cost more than ORT's
    own copy of them (10000 strings took 14x onnxruntime's run)."""
    s = _string_identity()
    counting = _CountingFfi(_numpy_bridge.ffi)
    monkeypatch.setattr(_numpy_bridge, "ffi", counting)
    feed = np.array([f"w{i}" for i in range(2000)], dtype=object)
    (y,) = s.run(None, {"x": feed})
    assert y.tolist() == feed.tolist()
    assert counting.news < 20, counting.news


@pytest.mark.parametrize("feed, message", [
    (np.array(["ok", 3], dtype=object), "object array element 1 is a int"),
    (np.array(["ok", "\ud800", 3], dtype=object), "object array element 2 is a int"),
    (np.array(["ok", "\ud800"], dtype=object), "element 1 is not encodable as UTF-8"),
    (np.array([b"ok", b"\xff"], dtype=object), "element 1 is not valid UTF-8"),
])
def test_a_string_feed_refused_names_the_element_as_before(feed: np.ndarray,
                                                            message: str) -> None:
    with pytest.raises(ortc.InvalidArgument, match=message):
        _string_identity().run(None, {"x": feed})


def test_a_str_subclass_element_is_encoded_by_its_own_method() -> None:
    class Text(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            return b"own"

    feed = np.array([Text("a"), "b"], dtype=object)
    assert _string_identity().run(None, {"x": feed})[0].tolist() == ["own", "b"]


@pytest.fixture
def adopted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The class name of every ORT object wrapped (a Value, ...) while the test runs."""
    made: list[str] = []
    real = _handle.Handle._adopt

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(type(self).__name__)
        real(self, *args, **kwargs)

    monkeypatch.setattr(_handle.Handle, "_adopt", counting)
    yield made


def test_a_sequence_fed_makes_one_value_not_one_per_item(adopted: list[str]) -> None:
    s = ortc.Session(models.concat_from_sequence_model())
    items = [np.full((1, 4), i, np.float32) for i in range(50)]
    adopted.clear()
    (y,) = s.run(None, {"seq": items})
    assert y.tobytes() == np.concatenate(items).tobytes()
    assert adopted.count("Value") == 1


def test_a_sequence_fed_with_values_among_arrays_and_python_data() -> None:
    s = ortc.Session(models.concat_from_sequence_model())
    v = ortc.Value.from_numpy(np.full((1, 2), 7, np.float32))
    (y,) = s.run(None, {"seq": [np.ones((1, 2), np.float32), v, [[2, 3]]]})
    assert y.tolist() == [[1, 1], [7, 7], [2, 3]]
    wrong = ortc.Value.from_numpy(np.ones((1, 2), np.int64))
    with pytest.raises(ortc.InvalidArgument, match="element_type is FLOAT but item 1 is a INT64"):
        ortc.Value.from_sequence([np.ones((1, 2), np.float32), wrong], ortc.ElementType.FLOAT)
    with pytest.raises(ortc.InvalidArgument, match="from_sequence item 0"):
        ortc.Value.from_sequence([np.ones(2, np.int64)], ortc.ElementType.FLOAT)
    seq = ortc.Value.from_sequence([np.ones(2, np.float32), [1.5, 2]], ortc.ElementType.FLOAT)
    assert [a.tolist() for a in seq.to_python()] == [[1, 1], [1.5, 2]]
    # a caller's Value in it is no parent of the sequence (which holds a copy): closed, it is
    # released at once
    part = ortc.Value.from_numpy(np.full(2, 4, np.float32))
    seq = ortc.Value.from_sequence([part, np.zeros(2, np.float32)], ortc.ElementType.FLOAT)
    part.close()
    assert part._ptr == ffi.NULL
    assert [a.tolist() for a in seq.to_python()] == [[4, 4], [0, 0]]


def test_a_map_fed_makes_one_value(adopted: list[str]) -> None:
    s = ortc.Session(models.dict_vectorizer_model(("a", "b", "c")))
    adopted.clear()
    (y,) = s.run(None, {"x": {"c": 3.5, "a": 1.25}})
    assert y.tolist() == [[1.25, 0.0, 3.5]]
    assert adopted.count("Value") == 1
    m = ortc.Value.from_map({3: 0.5, 1: 2.5})
    assert m.to_python() == {3: 0.5, 1: 2.5}


def test_reading_a_tensor_value_again_asks_ort_nothing_about_its_kind() -> None:
    """What a value holds never changes: once known a tensor (made from an array, or asked
    once), ``is_tensor`` and ``numpy()`` ask ORT no more (compat's ``OrtValue.numpy()`` took
    30x onnxruntime's, four of its C calls these)."""
    made = ortc.Value.from_numpy(np.arange(6, dtype=np.float32))
    s = ortc.Session(models.add_model(np.float32, [3]))
    (out,) = s.run_with_values(None, {"a": np.ones(3, np.float32), "b": np.ones(3, np.float32)})
    with _Calls() as calls:
        for _ in range(5):
            assert made.is_tensor and made.numpy().tolist() == [0, 1, 2, 3, 4, 5]
    assert calls["IsTensor"] == 0 and calls["HasValue"] == 0
    with _Calls() as calls:
        for _ in range(5):
            assert out.is_tensor and out.numpy().tolist() == [2, 2, 2]
    assert calls["IsTensor"] == 1 and calls["HasValue"] == 1
    empty = ortc.Session(models.empty_optional_model()).run_with_values(
        ["none"], {"x": np.ones(2, np.float32)})[0]
    for _ in range(2):
        assert not empty.is_tensor
        with pytest.raises(ortc.InvalidArgument, match="an empty optional, not a tensor"):
            empty.numpy()


def test_compat_ortvalue_types_of_a_tensor_need_no_type_info() -> None:
    """``data_type()`` and ``element_type()`` of a tensor come from its element type alone
    (building the whole type info took 60x onnxruntime's call); other kinds read it."""
    import ortc.compat as ort

    cases = [(np.float32, "tensor(float)", 1), (np.int64, "tensor(int64)", 7),
             (np.float16, "tensor(float16)", 10), (np.bool_, "tensor(bool)", 9)]
    for dtype, text, number in cases:
        v = ort.OrtValue.ortvalue_from_numpy(np.ones((2, 3), dtype))
        with _Calls() as calls:
            assert (v.data_type(), v.element_type()) == (text, number)
        assert calls["GetTypeInfo"] == 0
    bits = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.zeros(4, np.uint8), 17)
    assert (bits.data_type(), bits.element_type()) == ("tensor(float8e4m3fn)", 17)
    s = ort.InferenceSession(models.zipmap_model((1, 2)))
    (maps,) = s.run_with_ort_values(["y"], {"x": ort.OrtValue.ortvalue_from_numpy(
        np.ones((1, 2), np.float32))})
    assert maps.data_type() == "seq(map(int64,tensor(float)))"
    with pytest.raises(RuntimeError, match="unavailable"):
        maps.element_type()
