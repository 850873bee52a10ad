"""The element-type table: ORT element types <-> numpy dtypes, and sub-byte packing.

Types numpy lacks (bfloat16, the float8 family, int4/uint4, float4, int2/uint2) map to
ml_dtypes' dtypes when ml_dtypes is installed; without it, using one raises a clear TypeError.
Sub-byte types are packed in ORT (two 4-bit or four 2-bit elements per byte, first element in
the lowest bits) and unpacked one element per byte in ml_dtypes, so they are copied both ways.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._enums import ElementType

__all__ = ["dtype_for", "feed_dtype", "element_type_for", "bits_for", "pack_subbyte", "unpack_subbyte",
           "STRING_KINDS", "PROTO_TO_C"]

# 64-bit integers are numpy's C long long ('q', 'Q'), as onnxruntime's Python binding makes
# them (NPY_LONGLONG): np.int64 is C long ('l') where long has 64 bits (Linux, macOS), an equal
# dtype with another character and number, which repr(array) shows ("dtype=int64")
_NUMPY: dict[str, Any] = {
    "FLOAT": np.float32, "DOUBLE": np.float64, "FLOAT16": np.float16,
    "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.longlong,
    "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.ulonglong,
    "BOOL": np.bool_, "COMPLEX64": np.complex64, "COMPLEX128": np.complex128,
}
_ML_DTYPES: dict[str, str] = {
    "BFLOAT16": "bfloat16",
    "FLOAT8E4M3FN": "float8_e4m3fn", "FLOAT8E4M3FNUZ": "float8_e4m3fnuz",
    "FLOAT8E5M2": "float8_e5m2", "FLOAT8E5M2FNUZ": "float8_e5m2fnuz",
    "FLOAT8E8M0": "float8_e8m0fnu",
    "INT4": "int4", "UINT4": "uint4", "FLOAT4E2M1": "float4_e2m1fn",
    "INT2": "int2", "UINT2": "uint2",
}
_SUBBYTE_BITS = {"INT4": 4, "UINT4": 4, "FLOAT4E2M1": 4, "INT2": 2, "UINT2": 2}

#: numpy dtype kinds that become string tensors
STRING_KINDS = frozenset("USO")

#: the ONNX (TensorProto) element type numbers, which models and onnxruntime's Python API use,
#: that the C API's enum (and so ElementType) numbers otherwise: 24-26, added to the C API in
#: another order than to ONNX. A number not here is the same in both.
PROTO_TO_C = {24: int(ElementType.FLOAT8E8M0), 25: int(ElementType.UINT2),
              26: int(ElementType.INT2)}

_TO_DTYPE: dict[int, np.dtype[Any]] = {}
_FROM_DTYPE: dict[np.dtype[Any], ElementType] = {}
_BITS: dict[int, int] = {}
_MISSING: dict[int, str] = {}  # element type -> ml_dtypes name, when ml_dtypes is absent

for _et in ElementType:
    if _et.name in _NUMPY:
        _dt = np.dtype(_NUMPY[_et.name])
        _TO_DTYPE[int(_et)] = _dt
        _FROM_DTYPE.setdefault(_dt, _et)
    if _et.name in _SUBBYTE_BITS:
        _BITS[int(_et)] = _SUBBYTE_BITS[_et.name]

# ml_dtypes takes most of a second to import: it is loaded on first need (an element type that
# needs it), or registered at once when the caller already imported it (an ml_dtypes array).
_ml_state = {"loaded": False}


def _load_ml_dtypes() -> None:
    if _ml_state["loaded"]:
        return
    _ml_state["loaded"] = True
    ml: Any
    try:
        import ml_dtypes as ml
    except ImportError:  # optional dependency
        ml = None
    for et in ElementType:
        name = _ML_DTYPES.get(et.name)
        if name is None:
            continue
        if ml is None or not hasattr(ml, name):
            _MISSING[int(et)] = name
            continue
        dt = np.dtype(getattr(ml, name))
        _TO_DTYPE[int(et)] = dt
        _FROM_DTYPE.setdefault(dt, et)


def dtype_for(element_type: int, required: bool = True) -> np.dtype[Any] | None:
    """The numpy dtype for an ORT element type (object for strings)."""
    dt = _TO_DTYPE.get(int(element_type))
    if dt is not None:
        return dt
    if int(element_type) == ElementType.STRING:
        return np.dtype(object)
    if not _ml_state["loaded"]:
        _load_ml_dtypes()
        return dtype_for(element_type, required)
    if not required:
        return None
    if int(element_type) in _MISSING:
        raise TypeError(f"element type {ElementType(element_type).name} needs ml_dtypes "
                        f"(pip install ml_dtypes) for its numpy dtype "
                        f"ml_dtypes.{_MISSING[int(element_type)]}")
    try:
        name = ElementType(element_type).name
    except ValueError:
        name = f"#{int(element_type)}"
    raise TypeError(f"element type {name} has no numpy equivalent")


def feed_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype numpy gives the arrays callers make of ``dtype``'s type: np.int64 and
    np.uint64 (C long where long has 64 bits) for the table's C long long, which compare equal
    to it but are other objects (identity checks on feeds look for this one); any other dtype
    is itself."""
    return _FEED_DTYPE.get(dtype, dtype)


_FEED_DTYPE: dict[np.dtype[Any], np.dtype[Any]] = {
    np.dtype(np.longlong): np.dtype(np.int64), np.dtype(np.ulonglong): np.dtype(np.uint64)}


def element_type_for(dtype: np.dtype[Any]) -> ElementType:
    """The ORT element type for a numpy dtype; strings (U, S, O) are STRING."""
    et = _FROM_DTYPE.get(dtype)
    if et is not None:
        return et
    if dtype.kind in STRING_KINDS:
        return ElementType.STRING
    if not _ml_state["loaded"]:
        _load_ml_dtypes()
        return element_type_for(dtype)
    raise TypeError(f"numpy dtype {dtype} has no ONNX Runtime element type")


def plain_dtypes() -> dict[int, np.dtype[Any]]:
    """Element type -> dtype of the tensors whose bytes numpy reads as they are (numbers and
    bool: no strings, no sub-byte packing), among the types known now."""
    return {et: dt for et, dt in _TO_DTYPE.items() if dt.kind not in STRING_KINDS
            and not _BITS.get(et, 0)}


def bits_for(element_type: int) -> int:
    """Bits per element of a sub-byte type, 0 for every other type."""
    return _BITS.get(int(element_type), 0)


def pack_subbyte(arr: np.ndarray[Any, Any], bits: int) -> np.ndarray[Any, Any]:
    """Pack an ml_dtypes sub-byte array (one element per byte) into ORT's layout."""
    per = 8 // bits
    flat = np.ascontiguousarray(arr).reshape(-1).view(np.uint8) & ((1 << bits) - 1)
    pad = (-flat.size) % per
    if pad:
        flat = np.concatenate([flat, np.zeros(pad, np.uint8)])
    groups = flat.reshape(-1, per).astype(np.uint8)
    out = np.zeros(groups.shape[0], np.uint8)
    for i in range(per):
        out |= groups[:, i] << (bits * i)
    return out


def unpack_subbyte(raw: np.ndarray[Any, Any], bits: int, count: int,
                   dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """Unpack ORT's packed bytes into ``count`` one-byte ml_dtypes elements."""
    per = 8 // bits
    mask = (1 << bits) - 1
    cols = [(raw >> (bits * i)) & mask for i in range(per)]
    return np.stack(cols, axis=1).reshape(-1)[:count].astype(np.uint8).view(dtype)
