"""compat's IOBinding, and the OrtValues it hands out, held to the contract onnxruntime's own
IOBinding tests exercise on the CPU: an array bound as input and the output left to ORT, a
raw address bound each way, OrtValues bound each way and rebound between runs, outputs read
as OrtValues, copies and views; then the argument handling of ``bind_input``/``bind_output``
(element types, shapes, devices) and ``OrtDevice.make``.

Each comparison runs the same function with the real onnxruntime and with ortc.compat and
requires the same outcome: arrays equal in dtype, shape and bytes, other results equal,
exceptions of the same class (texts differ: docs/COMPAT.md). Where compat deliberately
differs, the test asserts compat's documented behaviour."""

from __future__ import annotations

import collections
import gc
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import onnxruntime as real_ort
import pytest
from onnx import TensorProto, helper

import models
import ortc.compat as compat

#: a float tensor [n, 2] squared elementwise (Y = X * X), and twice it (Z = X + X), and
#: its items as text (S): a dynamic first dimension, so rebinding to a new shape is possible
SQUARE = models._bytes(models.make_model(
    [helper.make_node("Mul", ["X", "X"], ["Y"]), helper.make_node("Add", ["X", "X"], ["Z"]),
     helper.make_node("Cast", ["X"], ["S"], to=TensorProto.STRING)],
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 2])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 2]),
     helper.make_tensor_value_info("Z", TensorProto.FLOAT, [None, 2]),
     helper.make_tensor_value_info("S", TensorProto.STRING, [None, 2])]))
X = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
X2 = np.array([[2, 4], [6, 8], [10, 12]], np.float32)


def _session(ort: Any) -> Any:
    return ort.InferenceSession(SQUARE, providers=["CPUExecutionProvider"])


def _bound_x(ort: Any) -> tuple[Any, Any]:
    """A session of the test model and an IOBinding of it with X bound from the CPU."""
    sess = _session(ort)
    b = sess.io_binding()
    b.bind_cpu_input("X", X)
    return sess, b


def _plain(result: Any) -> Any:
    """A result in comparable terms: an array as (dtype, shape, items), an OrtValue as its
    type, shape and array, containers item by item."""
    if isinstance(result, np.ndarray):
        return ("array", result.dtype.str, result.shape, result.tolist())
    if isinstance(result, (list, tuple)):
        return (type(result).__name__, [_plain(r) for r in result])
    if type(result).__name__ == "OrtValue":
        return ("OrtValue", result.data_type(), result.shape(), result.device_name(),
                _plain(result.numpy()))
    return result


def _outcome(fn: Callable[[Any], Any], ort: Any) -> Any:
    try:
        return _plain(fn(ort))
    except Exception as err:  # noqa: BLE001 - the class is the outcome compared
        return ("raised", type(err).__name__)


def _agree(fn: Callable[[Any], Any]) -> Any:
    """``fn``'s outcome with onnxruntime, asserted to be compat's too."""
    want = _outcome(fn, real_ort)
    got = _outcome(fn, compat)
    assert got == want
    return want


# -- the CPU paths of onnxruntime's IOBinding tests --------------------------------------------
def test_an_array_bound_as_input_with_the_output_left_to_ort() -> None:
    def run(ort: Any) -> Any:
        sess = _session(ort)
        b = sess.io_binding()
        b.bind_cpu_input("X", X.copy())
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        b.synchronize_outputs()
        return b.copy_outputs_to_cpu()

    assert _agree(run) == ("list", [_plain(X * X)])


def test_addresses_bound_each_way_on_the_cpu_device() -> None:
    # the input by address, the output into preallocated memory by address; then the input's
    # address rebound to other data and run again: the same output memory holds the new result
    def run(ort: Any) -> Any:
        sess = _session(ort)
        b = sess.io_binding()
        source = ort.OrtValue.ortvalue_from_numpy(X, "cpu", 0)
        out = ort.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32, "cpu", 0)
        b.bind_input("X", "cpu", 0, np.float32, [3, 2], source.data_ptr())
        b.bind_output("Y", "cpu", 0, np.float32, [3, 2], out.data_ptr())
        b.synchronize_inputs()
        sess.run_with_iobinding(b)
        b.synchronize_outputs()
        first = [b.copy_outputs_to_cpu(), out.numpy().copy(),
                 b.get_outputs()[0].data_ptr() == out.data_ptr()]
        other = ort.OrtValue.ortvalue_from_numpy(X2, "cpu", 0)
        b.bind_input("X", "cpu", 0, np.float32, [3, 2], other.data_ptr())
        sess.run_with_iobinding(b)
        return first + [out.numpy().copy(), b.copy_outputs_to_cpu()]

    got = _agree(run)
    assert got[1][1] == _plain(X * X) and got[1][3] == _plain(X2 * X2)
    assert got[1][2] is True


def test_an_output_bound_to_a_device_only_is_read_as_often_as_asked() -> None:
    # the output left to ORT on the 'cpu' device: get_outputs gives it as an OrtValue on
    # every call (the same memory each time); the input rebound, the next run's result
    def run(ort: Any) -> Any:
        sess = _session(ort)
        b = sess.io_binding()
        value = ort.OrtValue.ortvalue_from_numpy(X, "cpu", 0)
        b.bind_input("X", "cpu", 0, np.float32, [3, 2], value.data_ptr())
        b.bind_output("Y", "cpu")
        sess.run_with_iobinding(b)
        first, again = b.get_outputs(), b.get_outputs()
        same_memory = first[0].data_ptr() == again[0].data_ptr()
        got = [len(first), first, again, same_memory, first[0] is again[0]]
        other = ort.OrtValue.ortvalue_from_numpy(X2, "cpu", 0)
        b.bind_input("X", "cpu", 0, np.float32, [3, 2], other.data_ptr())
        sess.run_with_iobinding(b)
        return got + [b.get_outputs()]

    got = _agree(run)
    assert got[1][3:5] == [True, False]


def test_ortvalues_bound_each_way_and_the_input_rebound() -> None:
    def run(ort: Any) -> Any:
        sess = _session(ort)
        b = sess.io_binding()
        out = ort.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32, "cpu", 0)
        b.bind_ortvalue_input("X", ort.OrtValue.ortvalue_from_numpy(X, "cpu", 0))
        b.bind_ortvalue_output("Y", out)
        sess.run_with_iobinding(b)
        first = out.numpy().copy()
        b.bind_ortvalue_input("X", ort.OrtValue.ortvalue_from_numpy(X2, "cpu", 0))
        sess.run_with_iobinding(b)
        return [first, out.numpy().copy(), b.get_outputs()[0].data_ptr() == out.data_ptr()]

    assert _agree(run)[1][2] is True


# -- what the outputs are ----------------------------------------------------------------------
def test_outputs_alias_the_bindings_memory_and_runs_reuse_it() -> None:
    """get_outputs' OrtValues and their arrays are views of the binding's outputs: a write
    through one is what copy_outputs_to_cpu copies; a run writes the memory the last run
    allocated, so an OrtValue taken before shows the new result; copies stay as they were."""
    def run(ort: Any) -> Any:
        sess, b = _bound_x(ort)
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        before = b.get_outputs()[0]
        copied = b.copy_outputs_to_cpu()[0]
        view = before.numpy()
        view[0, 0] = 100.0
        written = [b.copy_outputs_to_cpu(), view.flags.owndata, view.flags.writeable]
        before.update_inplace(np.full((3, 2), 7, np.float32))
        updated = b.copy_outputs_to_cpu()
        b.bind_cpu_input("X", X2)
        sess.run_with_iobinding(b)
        return [written, updated, before.numpy().copy(), copied,
                before.data_ptr() == b.get_outputs()[0].data_ptr()]

    got = _agree(run)
    assert got[1][2] == _plain(X2 * X2) and got[1][3] == _plain(X * X)


def test_an_output_rebound_is_new_memory_and_the_old_value_lives_on() -> None:
    def run(ort: Any) -> Any:
        sess, b = _bound_x(ort)
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        old = b.get_outputs()[0]
        b.bind_output("Y")
        b.bind_cpu_input("X", X2)
        sess.run_with_iobinding(b)
        new = b.get_outputs()[0]
        return [old, new, old.data_ptr() == new.data_ptr()]

    assert _agree(run)[1][2] is False


def test_outputs_outlive_their_binding_and_session() -> None:
    def run(ort: Any) -> Any:
        sess, b = _bound_x(ort)
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        [value] = b.get_outputs()
        del b, sess
        gc.collect()
        return value.numpy().copy()

    _agree(run)


def test_a_new_input_shape_needs_the_output_bound_again() -> None:
    """An output ORT allocated in a run stays bound at that shape: a run with an input of
    another shape fails (RuntimeError) until the output is bound again or cleared and bound."""
    bigger = np.ones((5, 2), np.float32)

    def run(ort: Any) -> Any:
        sess, b = _bound_x(ort)
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        b.bind_cpu_input("X", bigger)
        got: list[Any] = []
        try:
            sess.run_with_iobinding(b)
            got.append("ran")
        except RuntimeError:
            got.append("RuntimeError")
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        got.append(b.copy_outputs_to_cpu())
        b.bind_input("X", "cpu", 0, np.float32, (1, 2), X2.ctypes.data)
        b.clear_binding_outputs()
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        return got + [b.copy_outputs_to_cpu()]

    assert _agree(run)[1][0] == "RuntimeError"


def test_outputs_come_in_the_order_they_were_bound() -> None:
    def run(ort: Any) -> Any:
        sess, b = _bound_x(ort)
        b.bind_output("Z")
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        first = b.copy_outputs_to_cpu()
        b.bind_output("Z")  # bound again: it keeps its place
        sess.run_with_iobinding(b)
        return [first, b.copy_outputs_to_cpu(), [v.shape() for v in b.get_outputs()]]

    _agree(run)


def test_nothing_bound_nothing_out() -> None:
    def run(ort: Any) -> Any:
        sess = _session(ort)
        b = sess.io_binding()
        b.synchronize_inputs()
        b.synchronize_outputs()
        got: list[Any] = [b.get_outputs(), b.copy_outputs_to_cpu()]
        b.bind_cpu_input("X", X)
        got.append(b.get_outputs())
        try:
            sess.run_with_iobinding(b)  # no output bound
        except RuntimeError:
            got.append("RuntimeError")
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        b.clear_binding_outputs()
        got += [b.get_outputs(), b.copy_outputs_to_cpu()]
        b.clear_binding_inputs()
        b.bind_output("Y")
        try:
            sess.run_with_iobinding(b)  # no input bound
        except RuntimeError:
            got.append("RuntimeError")
        return got

    assert _agree(run)[1][3] == "RuntimeError"


def test_a_string_output_read_as_an_ortvalue() -> None:
    def run(ort: Any) -> Any:
        sess, b = _bound_x(ort)
        b.bind_output("S")
        sess.run_with_iobinding(b)
        [value] = b.get_outputs()
        return [value.data_type(), value.shape(), value.numpy()]

    _agree(run)


def test_a_string_output_copied_to_the_cpu() -> None:
    """onnxruntime's copy_outputs_to_cpu crashes the process on a string output (documented
    in docs/COMPAT.md); compat's gives the strings as the object array get_outputs has."""
    sess, b = _bound_x(compat)
    b.bind_output("S")
    sess.run_with_iobinding(b)
    [copied] = b.copy_outputs_to_cpu()
    assert copied.dtype == object and copied.tolist() == [["1", "2"], ["3", "4"], ["5", "6"]]
    assert copied.tolist() == b.get_outputs()[0].numpy().tolist()


# -- arguments -----------------------------------------------------------------------------------
def _bind_by_address(element_type: Any = np.float32, shape: Any = (3, 2),
                     device: tuple[Any, Any] = ("cpu", 0), output: bool = False
                     ) -> Callable[[Any], Any]:
    """A run with X bound by address (or, with ``output``, Y bound into memory by address)
    given these arguments, read back by copy."""
    def run(ort: Any) -> Any:
        sess = _session(ort)
        b = sess.io_binding()
        out = np.zeros((3, 2), np.float32)
        if output:
            b.bind_cpu_input("X", X)
            b.bind_output("Y", device[0], device[1], element_type, shape, out.ctypes.data)
        else:
            b.bind_input("X", device[0], device[1], element_type, shape, X.ctypes.data)
            b.bind_output("Y")
        sess.run_with_iobinding(b)
        return out if output else b.copy_outputs_to_cpu()
    return run


ELEMENT_TYPES = {
    "numpy type": np.float32, "dtype": np.dtype(np.float32), "type name": "float32",
    "ONNX number": TensorProto.FLOAT, "numpy integer": np.int64(1), "bool": True,
    "numpy float scalar": np.float32(1), "other type": np.float64, "ONNX DOUBLE": 11,
    "False": False, "unknown number": 99, "negative number": -1, "UNDEFINED": 0,
    "COMPLEX64": 14, "STRING": TensorProto.STRING, "past int32": 2**31, "a float": 1.0,
    "unknown name": "nope", "object": object, "str type": np.str_, "bytes type": np.bytes_,
    "complex type": np.complex64, "datetime type": np.datetime64, "a list": [1]}


@pytest.mark.parametrize("name", sorted(ELEMENT_TYPES))
@pytest.mark.parametrize("output", [False, True], ids=["input", "output"])
def test_element_types_read_as_onnxruntime_reads_them(name: str, output: bool) -> None:
    """An integer (a bool, a numpy integer) is an ONNX type number, anything else a numpy
    type; what makes no bindable tensor is a RuntimeError. (compat once read a numpy
    integer as its numpy type, and raised TypeError or ValueError for the rest)"""
    _agree(_bind_by_address(element_type=ELEMENT_TYPES[name], output=output))


def test_a_float_equal_to_a_type_number_is_not_that_number() -> None:
    # (compat keeps what it read of each element type: a float or a numpy scalar equal to a
    # number it read before must not find that number's entry)
    def run(ort: Any) -> Any:
        _bind_by_address(element_type=7)(ort)  # INT64, refused at the run or the bind
    _agree(run)
    for element_type in (7.0, np.float64(7), np.float32(7)):  # numpy types: no number
        _agree(_bind_by_address(element_type=element_type))


SHAPES: dict[str, Callable[[], Any]] = {
    "tuple": lambda: (3, 2), "list": lambda: [3, 2], "array": lambda: np.array([3, 2]),
    "numpy integers": lambda: [np.int32(3), np.int64(2)], "range": lambda: range(3, 1, -1),
    "iterator": lambda: iter([3, 2]), "generator": lambda: (d for d in (3, 2)),
    "map": lambda: map(int, "32"), "a set": lambda: {6}, "dict keys": lambda: {3: 0, 2: 0}.keys(),
    "deque": lambda: collections.deque([3, 2]), "memoryview": lambda: memoryview(bytes([3, 2])),
    "an iterable": lambda: _Iterable(), "sequence protocol": lambda: _Sequence(),
    "uint64 array": lambda: np.array([3, 2], np.uint64),
    "float32 items": lambda: [np.float32(3), 2], "a fraction": lambda: [Fraction(3), 2],
    "bools": lambda: [True, 6], "floats": lambda: [3.0, 2.0], "a half": lambda: [2.5, 2],
    "float64 items": lambda: [np.float64(3), 2],
    "float array": lambda: np.array([3.0, 2.0]), "str": lambda: "32", "bytes": lambda: b"\x03\x02",
    "str items": lambda: ["3", "2"], "a dict": lambda: {3: 0, 2: 0}, "an int": lambda: 6,
    "None": lambda: None, "None item": lambda: [None, 2], "nested": lambda: [[3], [2]],
    "complex item": lambda: [3 + 0j, 2], "past int64": lambda: [2**63, 2],
    "below int64": lambda: [-(2**63) - 1, 2], "zero and past int64": lambda: [0, 2**64],
    "too few elements": lambda: [2, 2], "wrong rank": lambda: [6]}


class _Iterable:
    def __iter__(self) -> Any:
        return iter([3, 2])


class _Sequence:
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> int:
        return (3, 2)[i]


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("output", [False, True], ids=["input", "output"])
def test_shapes_read_as_onnxruntime_reads_them(name: str, output: bool) -> None:
    """A shape is a sequence (but a str or bytes), a generator, a set, a dict's view or a map
    object, of integers or numbers int() takes but floats; anything else (an iterator, a
    dict), or a dimension past int64, is a TypeError. (compat once truncated 2.5 to 2 and
    read "32" as [3, 2])"""
    def run(ort: Any) -> Any:
        return _bind_by_address(shape=SHAPES[name](), output=output)(ort)
    _agree(run)


def test_integral_float_tuples_bind_once_an_equal_int_tuple_has() -> None:
    """Documented (docs/COMPAT.md): compat reads each shape tuple once; a tuple of floats
    equal to one it read (``(3.0, 2.0)`` after ``(3, 2)``) binds as that one, where
    onnxruntime raises TypeError. Not yet seen, it is refused as there."""
    sess = _session(compat)
    b = sess.io_binding()
    with pytest.raises(TypeError):
        b.bind_input("X", "cpu", 0, np.float32, (3.0, 1.0), X.ctypes.data)
    b.bind_input("X", "cpu", 0, np.float32, (3, 2), X.ctypes.data)
    b.bind_input("X", "cpu", 0, np.float32, (3.0, 2.0), X.ctypes.data)
    b.bind_output("Y")
    sess.run_with_iobinding(b)
    assert b.copy_outputs_to_cpu()[0].tolist() == (X * X).tolist()


DEVICES = {"cpu": ("cpu", 0), "cpu 1": ("cpu", 1), "negative id": ("cpu", -1),
           "numpy id": ("cpu", np.int64(0)), "bool id": ("cpu", True),
           "float32 id": ("cpu", np.float32(0)), "float id": ("cpu", 0.0), "str id": ("cpu", "0"),
           "None id": ("cpu", None), "id past int16": ("cpu", 1 << 15),
           "id below int16": ("cpu", -(1 << 15) - 1), "CPU": ("CPU", 0), "bytes": (b"cpu", 0),
           "None": (None, 0), "unknown": ("tpu", 0)}


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_devices_read_as_onnxruntime_reads_them(name: str) -> None:
    device = DEVICES[name]
    _agree(_bind_by_address(device=device))
    _agree(_bind_by_address(device=device, output=True))

    def output_left_to_ort(ort: Any) -> Any:
        sess, b = _bound_x(ort)
        b.bind_output("Y", *device)
        sess.run_with_iobinding(b)
        return b.copy_outputs_to_cpu()
    _agree(output_left_to_ort)


MAKE_ARGS = {"cpu": ("cpu", 0), "cpu vendor": ("cpu", 0, 7), "cuda": ("cuda", 1),
             "float vendor": ("cpu", 0, 1.5), "bool vendor": ("cpu", 0, True),
             "top vendor": ("cpu", 0, (1 << 32) - 1), "vendor past uint32": ("cpu", 0, 1 << 32),
             "str vendor": ("cpu", 0, "1"), "None vendor": ("cpu", 0, None),
             "top id": ("cpu", (1 << 15) - 1), "id past int16": ("cpu", 1 << 15),
             "float id": ("gpu", 1.0), "float32 id": ("npu", np.float32(2)),
             "str id": ("cpu", "0"), "None name": (None, 0), "bytes name": (b"cpu", 0),
             "unknown name": ("fpga", 0)}


@pytest.mark.parametrize("name", sorted(MAKE_ARGS))
def test_ort_device_make_reads_its_arguments_as_onnxruntime(name: str) -> None:
    def make(ort: Any) -> Any:
        d = ort.OrtDevice.make(*MAKE_ARGS[name])
        return [d.device_type(), d.device_id(), d.device_vendor_id(), d.device_mem_type()]
    _agree(make)


def test_ort_device_hands_out_its_c_device() -> None:
    # what onnxruntime's IOBinding passes on: an object with the C device's method names
    def read(ort: Any) -> Any:
        c = ort.OrtDevice.make("cpu", 3, 5)._get_c_device()
        return [c.device_type(), c.device_id(), c.vendor_id(), c.mem_type()]
    assert _agree(read) == ("list", [0, 3, 5, 0])


def test_a_binding_takes_lists_and_scalars_as_run_does() -> None:
    """Documented (docs/COMPAT.md): bind_cpu_input takes what run() takes (a list, a numpy
    scalar for a scalar input); onnxruntime's takes numpy arrays only (RuntimeError)."""
    ints = models._bytes(models.make_model(
        [helper.make_node("Identity", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [None])]))
    for ort, expected in ((real_ort, "RuntimeError"), (compat, [[4, 5]])):
        sess = ort.InferenceSession(ints, providers=["CPUExecutionProvider"])
        b = sess.io_binding()
        b.bind_output("y")
        try:
            b.bind_cpu_input("x", [4, 5])
            sess.run_with_iobinding(b)
            got: Any = [a.tolist() for a in b.copy_outputs_to_cpu()]
        except RuntimeError:
            got = "RuntimeError"
        assert got == expected, ort.__name__


def test_big_endian_memory_is_refused_not_misread() -> None:
    """Documented (docs/COMPAT.md, faults of onnxruntime's binding): onnxruntime reads a
    big-endian array bound with bind_cpu_input, or memory bound by address with a big-endian
    element type, as native floats; compat raises RuntimeError for both."""
    sess = _session(compat)
    b = sess.io_binding()
    with pytest.raises(RuntimeError, match=">f4"):
        b.bind_cpu_input("X", X.astype(">f4"))
    for bind in (lambda: b.bind_input("X", "cpu", 0, np.dtype(">f4"), [3, 2], X.ctypes.data),
                 lambda: b.bind_output("Y", "cpu", 0, np.dtype(">f4"), [3, 2], X2.ctypes.data)):
        with pytest.raises(RuntimeError, match=">f4"):
            bind()


def test_an_ortvalue_input_updated_in_place_is_read_by_the_next_run() -> None:
    def run(ort: Any) -> Any:
        sess = _session(ort)
        b = sess.io_binding()
        value = ort.OrtValue.ortvalue_from_numpy(X.copy())
        b.bind_ortvalue_input("X", value)
        b.bind_output("Y")
        sess.run_with_iobinding(b)
        first = b.copy_outputs_to_cpu()
        value.update_inplace(X2)
        sess.run_with_iobinding(b)
        return [first, b.copy_outputs_to_cpu()]

    assert _agree(run)[1][1] == ("list", [_plain(X2 * X2)])


def test_running_with_what_is_no_binding_of_this_session() -> None:
    """None or another object where the binding goes is AttributeError, another session's
    binding ValueError, as onnxruntime's run_with_iobinding reads its argument."""
    for bad in (None, "binding", object()):
        def run(ort: Any, bad: Any = bad) -> Any:
            _session(ort).run_with_iobinding(bad)
        assert _agree(run) == ("raised", "AttributeError")

    def other(ort: Any) -> Any:
        _session(ort).run_with_iobinding(_bound_x(ort)[1])
    assert _agree(other) == ("raised", "ValueError")


# -- the C++ classes (onnxruntime.capi._pybind_state), which libraries call directly --------
def _c_api(ort: Any) -> Any:
    """The module of onnxruntime's C++ classes: its extension's, or compat itself (what
    install() registers as onnxruntime.capi._pybind_state)."""
    if ort is real_ort:
        from onnxruntime.capi import _pybind_state
        return _pybind_state
    return compat


def _fields(d: Any) -> list[int]:
    return [d.device_type(), d.mem_type(), d.vendor_id(), d.device_id()]


def test_the_c_device_class_makes_devices_as_onnxruntime() -> None:
    """onnx-array-api makes its CPU device as ``C.OrtDevice(C.OrtDevice.cpu(),
    OrtMemType.DEFAULT, 0)``; compat's OrtDevice had neither the static type numbers nor the
    C++ constructor's argument order (device type, memory type[, vendor], device id)."""
    def make(ort: Any) -> Any:
        C = _c_api(ort)
        D = C.OrtDevice
        numbers = [D.cpu(), D.cuda(), D.gpu(), D.fpga(), D.npu(), D.dml(), D.cann(),
                   D.webgpu(), D.default_memory()]
        cpu = D(D.cpu(), C.OrtMemType.DEFAULT, 0)
        wrapped = ort.OrtDevice(D(1, 5, 0x10DE, 2))  # the Python class over a C++ device
        return [numbers, _fields(cpu), _fields(D(9, 0, 3)), _fields(D(0, 5, 7, 1)),
                _fields(D(0, 0, -1)), [wrapped.device_type(), wrapped.device_id(),
                                       wrapped.device_vendor_id(), wrapped.device_mem_type()]]
    assert _agree(make) == ("list", [("list", [0, 1, 1, 2, 3, 4, 3, 1, 0]),
                                     ("list", [0, 0, 0, 0]), ("list", [9, 0, 0, 3]),
                                     ("list", [0, 5, 7, 1]), ("list", [0, 0, 0, -1]),
                                     ("list", [1, 2, 0x10DE, 5])])
    for args in [(0, 0), (0, 0, 1 << 15), (0, 0, -1, 0), (0, 0, 0, 1 << 15), (1.5, 0, 0),
                 ("a", 0, 0)]:
        _agree(lambda ort, args=args: _c_api(ort).OrtDevice(*args))  # TypeError in both


def test_a_c_device_of_another_memory_type_raises() -> None:
    """Documented (docs/COMPAT.md): onnxruntime aborts the process (a C++ check) for a
    memory type other than the default (0) and host accessible (5); compat raises."""
    for mem in (-1, 1, 4):
        with pytest.raises(RuntimeError, match="memory type"):
            compat.OrtDevice(0, mem, 0)


def test_c_ortvalue_factories_take_a_device() -> None:
    """The C++ OrtValue's factories take an OrtDevice where the Python class takes a device
    name and id: ``ortvalue_from_numpy(array, device)`` (onnx-array-api's tensors),
    ``ortvalue_from_shape_and_type(shape, numpy_type, device)`` and
    ``ortvalue_from_shape_and_onnx_type(shape, onnx_type, device)``."""
    def make(ort: Any) -> Any:
        C = _c_api(ort)
        cpu = C.OrtDevice(C.OrtDevice.cpu(), C.OrtMemType.DEFAULT, 0)
        v = C.OrtValue.ortvalue_from_numpy(X, cpu)
        shaped = C.OrtValue.ortvalue_from_shape_and_type([2, 5], np.int64, cpu)
        onnx_typed = C.OrtValue.ortvalue_from_shape_and_onnx_type([4], TensorProto.DOUBLE, cpu)
        # the Python class over the C++ value (what onnxruntime's OrtValue(c_value) makes)
        return [v.numpy(), v.shape(), shaped.shape(), shaped.element_type(),
                onnx_typed.shape(), onnx_typed.element_type(), ort.OrtValue(v).numpy()]
    _agree(make)
    with pytest.raises(compat.InvalidArgument, match="CPU only"):  # documented: CPU only
        compat.OrtValue.ortvalue_from_numpy(X, compat.OrtDevice(1, 0, 0))


def test_the_c_binding_forms() -> None:
    """``IOBinding._iobinding`` (compat: the binding itself) in the C++ binding's forms:
    ``bind_input(name, array)``, ``bind_output(name, device)``, and ``bind_input``/
    ``bind_output(name, device, element_type, shape, buffer_ptr)``, run through the C++
    session's ``run_with_iobinding(binding, run_options)``."""
    def run(ort: Any) -> Any:
        C = _c_api(ort)
        cpu = C.OrtDevice(C.OrtDevice.cpu(), C.OrtDevice.default_memory(), 0)
        sess = _session(ort)
        cb = sess.io_binding()._iobinding
        cb.bind_input("X", X)
        cb.bind_output("Y", cpu)
        sess._sess.run_with_iobinding(cb, None)
        first = [v.numpy() for v in cb.get_outputs()]
        cb.clear_binding_inputs()
        cb.clear_binding_outputs()
        out = np.zeros((3, 2), np.float32)
        cb.bind_input("X", cpu, np.float32, [3, 2], X2.ctypes.data)
        cb.bind_output("Z", cpu, np.float32, [3, 2], out.ctypes.data)
        sess._sess.run_with_iobinding(cb, None)
        return [first, out]
    assert _agree(run) == ("list", [("list", [_plain(X * X)]), _plain(X2 + X2)])
