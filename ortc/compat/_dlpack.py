"""DLPack for the element types numpy's own DLPack support lacks, as onnxruntime exports and
imports them on the CPU: bfloat16 and the float8 types (torch's ONNXProgram reads such outputs
with ``torch.from_dlpack``).

numpy makes and consumes the capsule (its memory and its deleter); only the DLTensor's type
code differs: an export is numpy's capsule of the same bytes as unsigned integers with the
code set to the type's, an import sets the code back before numpy reads the capsule.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ortc import ElementType
from ortc.dtypes import dtype_for

#: DLPack's type code of each element type here, as onnxruntime exports them
_DL_CODES = {ElementType.BFLOAT16: 4, ElementType.FLOAT8E4M3FN: 10,
             ElementType.FLOAT8E4M3FNUZ: 11, ElementType.FLOAT8E5M2: 12,
             ElementType.FLOAT8E5M2FNUZ: 13, ElementType.FLOAT8E8M0: 14}
_ELEMENT_TYPES = {code: et for et, code in _DL_CODES.items()}
_DL_UINT = 1  # kDLUInt
_DL_CPU = 1  # kDLCPU


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensorVersioned(ctypes.Structure):
    # (the legacy DLManagedTensor starts with its DLTensor)
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


def _capsule_api() -> tuple[Any, Any] | None:
    try:
        api = ctypes.pythonapi
        get_name, get_pointer = api.PyCapsule_GetName, api.PyCapsule_GetPointer
    except (AttributeError, ValueError):  # an interpreter without the C API through ctypes
        return None
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get_name, get_pointer


_CAPSULE_API = _capsule_api()


def _data_type(capsule: Any) -> _DLDataType | None:
    """The DLTensor's type of an unconsumed capsule (in its memory: assigning writes there),
    or None for another object."""
    if _CAPSULE_API is None or type(capsule).__name__ != "PyCapsule":
        return None
    get_name, get_pointer = _CAPSULE_API
    name = get_name(capsule)
    if name == b"dltensor":
        tensor = _DLTensor.from_address(get_pointer(capsule, name))
    elif name == b"dltensor_versioned":
        tensor = _DLManagedTensorVersioned.from_address(get_pointer(capsule, name)).dl_tensor
    else:
        return None
    dtype: _DLDataType = tensor.dtype
    return dtype


def export(arr: np.ndarray[Any, Any], stream: Any = None, max_version: Any = None,
           dl_device: Any = None, copy: Any = None) -> Any:
    """The DLPack capsule of ``arr`` (a view of a CPU tensor), whatever its dtype onnxruntime
    exports; the keywords are the consumer's."""
    if stream is not None:
        raise BufferError(f"__dlpack__: stream must be None for CPU memory, got {stream!r}")
    if dl_device is not None and tuple(dl_device) != (_DL_CPU, 0):
        raise BufferError(f"__dlpack__: only the CPU device (1, 0) is available, not "
                          f"{dl_device}")
    extra = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                               ("copy", copy)) if v is not None}
    code = _code_of(arr.dtype)
    if code is None:
        return arr.__dlpack__(**extra)
    capsule = arr.view(np.dtype(f"u{arr.dtype.itemsize}")).__dlpack__(**extra)
    dtype = _data_type(capsule)
    if dtype is None or dtype.code != _DL_UINT:
        raise BufferError(f"__dlpack__: a {arr.dtype} tensor has no DLPack form here")
    dtype.code = code
    return capsule


class _Producer:
    """A capsule as numpy's ``from_dlpack`` asks for it (a CPU tensor's)."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **_: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_DL_CPU, 0)


def array_of(capsule: Any) -> np.ndarray[Any, Any]:
    """A numpy array over a DLPack capsule's CPU memory, of its exact element type (bfloat16
    and the float8 types too, as ml_dtypes arrays); ValueError for what is no capsule."""
    dtype = _data_type(capsule)
    element_type = _ELEMENT_TYPES.get(dtype.code) if dtype is not None else None
    if dtype is None or element_type is None:
        return np.from_dlpack(_Producer(capsule))
    target = dtype_for(element_type)  # (TypeError without ml_dtypes)
    assert target is not None
    if dtype.bits != 8 * target.itemsize or dtype.lanes != 1:
        raise BufferError(f"from_dlpack: a {element_type.name} tensor of {dtype.bits} bits "
                          f"and {dtype.lanes} lanes")
    code, dtype.code = dtype.code, _DL_UINT  # numpy reads the bytes; the view types them
    try:
        return np.from_dlpack(_Producer(capsule)).view(target)
    except BaseException:
        dtype.code = code  # the caller's capsule as it was (numpy did not take it)
        raise


def _code_of(dtype: np.dtype[Any]) -> int | None:
    """The DLPack type code of a dtype of ml_dtypes' here (None for numpy's own)."""
    if dtype.kind != "V" and type(dtype).__module__.startswith("numpy"):
        return None
    for element_type, code in _DL_CODES.items():
        if dtype_for(element_type, required=False) == dtype:
            return code
    return None
