"""DLPack under ortc.compat for the element types numpy's own DLPack lacks (bfloat16, the float8
types), next to onnxruntime: the capsule an OrtValue exports (its type code, bits, lanes,
shape and bytes), OrtValue.from_dlpack of such a capsule, and the way torch's ONNXProgram reads
a bfloat16 output (``torch.from_dlpack(value._get_c_value())``), with a DLPack reader of the
test's own in torch's place."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import onnxruntime as real_ort
import pytest
from onnx import TensorProto, helper

import ml_dtypes
import models
import ortc.compat as compat

#: ONNX element type -> ml_dtypes dtype of the types here
TYPES = {TensorProto.BFLOAT16: ml_dtypes.bfloat16,
         TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
         TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
         TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
         TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
         TensorProto.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu}


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


def read_capsule(capsule: Any) -> tuple[Any, ...]:
    """What a DLPack consumer reads from a legacy capsule: name, device, type (code, bits,
    lanes), shape and the bytes (contiguous tensors)."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                  ctypes.c_char_p]
    name = get_name(capsule)
    t = _Tensor.from_address(get_pointer(capsule, name))
    shape = [t.shape[i] for i in range(t.ndim)]
    size = int(np.prod(shape)) * t.dtype.bits // 8
    data = ctypes.string_at(t.data + t.byte_offset, size)
    return (name, (t.device_type, t.device_id), (t.dtype.code, t.dtype.bits, t.dtype.lanes),
            shape, data)


def _value(ort: Any, onnx_type: int) -> Any:
    bits = np.array([[1.5, -2.0, 0.25], [4.0, 0.5, 8.0]], np.float32).astype(TYPES[onnx_type])
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
        bits.view(np.uint16 if bits.dtype.itemsize == 2 else np.uint8), onnx_type)


@pytest.mark.parametrize("onnx_type", list(TYPES), ids=lambda t: TensorProto.DataType.Name(t))
def test_the_exported_capsule_is_onnxruntimes(onnx_type: int) -> None:
    want = read_capsule(_value(real_ort, onnx_type)._get_c_value().__dlpack__())
    got = read_capsule(_value(compat, onnx_type)._get_c_value().__dlpack__())
    assert got == want
    assert want[2][0] not in (0, 1, 2)  # its own type code, not an int/uint/float one
    assert read_capsule(_value(compat, onnx_type).__dlpack__()) == want


@pytest.mark.parametrize("onnx_type", list(TYPES), ids=lambda t: TensorProto.DataType.Name(t))
@pytest.mark.parametrize("how", ["capsule", "producer"])
def test_from_dlpack_takes_what_onnxruntime_exports(onnx_type: int, how: str) -> None:
    def described(back: Any, data: bytes) -> tuple[Any, ...]:
        return back.data_type(), back.element_type(), back.shape(), data

    value = _value(real_ort, onnx_type)
    back = real_ort.OrtValue.from_dlpack(value.__dlpack__() if how == "capsule" else value)
    want = described(back, read_capsule(back.__dlpack__())[4])
    value = _value(compat, onnx_type)
    back = compat.OrtValue.from_dlpack(value.__dlpack__() if how == "capsule" else value)
    # (an import of a legacy capsule is read-only to numpy, which then exports it only in a
    # versioned capsule: the bytes are read here from the value itself)
    assert described(back, back._value.numpy().tobytes()) == want
    # a capsule onnxruntime made, read by compat, and the other way
    theirs = compat.OrtValue.from_dlpack(_value(real_ort, onnx_type).__dlpack__())
    assert described(theirs, theirs._value.numpy().tobytes()) == want
    ours = real_ort.OrtValue.from_dlpack(_value(compat, onnx_type).__dlpack__())
    assert described(ours, read_capsule(ours.__dlpack__())[4]) == want


def test_a_bfloat16_output_read_as_torchs_onnxprogram_reads_it() -> None:
    model = models._bytes(models.make_model(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [3])]))
    x = np.array([1.0, 2.5, -3.0], np.float32)
    read = []
    for ort in (real_ort, compat):
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        (y,) = sess.run_with_ort_values(None, {"x": ort.OrtValue.ortvalue_from_numpy(x)})
        assert y.element_type() == TensorProto.BFLOAT16
        c_value = y._get_c_value()
        assert c_value.__dlpack_device__() == (1, 0)
        read.append(read_capsule(c_value.__dlpack__()))
        # and an OrtValue made again of the C value, as onnxruntime's own code does
        assert ort.OrtValue(c_value).data_type() == "tensor(bfloat16)"
    assert read[0] == read[1]
    assert np.frombuffer(read[1][4], ml_dtypes.bfloat16).tolist() == [1.0, 2.5, -3.0]


def test_run_with_ort_values_still_takes_values_and_refuses_the_rest() -> None:
    sess = compat.InferenceSession(models.add_model(np.float32, [3]),
                                   providers=["CPUExecutionProvider"])
    a = compat.OrtValue.ortvalue_from_numpy(np.ones(3, np.float32))
    out = sess.run_with_ort_values(None, {"a": a, "b": compat.OrtValue(a._get_c_value())})
    assert out[0].numpy().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(AttributeError, match="_get_c_value"):
        sess.run_with_ort_values(None, {"a": a, "b": np.ones(3, np.float32)})
