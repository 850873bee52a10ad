"""onnxruntime's ``OrtValue`` over :class:`ortc.Value` (CPU memory only)."""

from __future__ import annotations

import operator
from typing import Any, Sequence, cast

import numpy as np

import ortc
from ortc.dtypes import PROTO_TO_C, bits_for, dtype_for, element_type_for, unpack_subbyte

from ._device import OrtDevice, cpu_only
from ._dlpack import array_of as dlpack_array, export as dlpack_export
from ._errors import shallow_copy, translate, unpicklable
from ._sparse import SparseTensor


_C_TO_PROTO = {c: proto for proto, c in PROTO_TO_C.items()}
_ELEMENT_TYPES = frozenset(int(t) for t in ortc.ElementType)
#: the ONNX element type numbers onnxruntime 1.32 knows (others are "not valid"), and those of
#: them it makes no tensor of from an array (undefined, the complex types, the 6-bit floats)
_ONNX_TYPES = range(0, 29)
_NO_TENSOR_OF = frozenset((0, 14, 15, 27, 28))
#: the dtype kinds ortvalue_from_numpy takes with no question (bool, integers, floats)
_PLAIN_KINDS = frozenset("biuf")
_Value = ortc.Value
#: the item size onnxruntime requires of an array for a STRING tensor: its C++ string object's
_STRING_ITEM_SIZE = 32


def c_element_type(onnx_element_type: int) -> int:
    """The C API's number of an ONNX element type number."""
    return PROTO_TO_C.get(onnx_element_type, onnx_element_type)


def onnx_element_type(element_type: int) -> int:
    """The ONNX element type number of a C API element type."""
    return _C_TO_PROTO.get(int(element_type), int(element_type))


def _reinterpreted(data: np.ndarray[Any, Any], element_type: ortc.ElementType
                   ) -> np.ndarray[Any, Any]:
    """``data``'s bytes as an array of ``element_type`` of the same shape, as onnxruntime
    takes them: the item sizes must agree (a sub-byte type's is 1: it copies the packed
    bytes a tensor of that shape holds from the array's first bytes)."""
    try:
        target = dtype_for(element_type)
    except TypeError as err:  # (ml_dtypes missing)
        raise RuntimeError(str(err)) from None
    assert target is not None
    bits = bits_for(element_type)
    size = 1 if bits else target.itemsize
    if data.dtype.itemsize != size:
        raise RuntimeError(f"Items size in the incoming array: {data.dtype.itemsize} "
                           f"specified by onnxtype: {size}")
    if data.dtype == target:
        return data
    if data.dtype.kind == "O":  # its items are pointers to Python objects
        raise RuntimeError(f"an object array cannot be read as {element_type.name}")
    if bits:
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        return unpack_subbyte(raw[:(data.size * bits + 7) // 8], bits, data.size,
                              target).reshape(data.shape)
    return data.view(target)


def _value_error(err: BaseException) -> RuntimeError:
    """onnxruntime's OrtValue methods raise a plain RuntimeError for every failure."""
    return RuntimeError(err.message if isinstance(err, ortc.OrtError) else str(err))


def _dtype_and_type(element_type: Any) -> tuple[np.dtype[Any], Any]:
    """(numpy dtype, element type) of ``ortvalue_from_shape_and_type``'s element type, as
    onnxruntime reads it: an ONNX type number (a Python int, a bool too), or a numpy type of
    either byte order (a new tensor has no bytes to misread), not a string or object type
    (no tensor of those is made from a shape)."""
    if isinstance(element_type, int):
        onnx_type: Any = c_element_type(int(element_type))
        return cast("np.dtype[Any]", dtype_for(onnx_type)), onnx_type  # (required: never None)
    dtype = np.dtype(element_type)
    if dtype.kind in "OSU":
        raise RuntimeError("Creation of OrtValues is currently only supported from "
                           "non-string numpy arrays")
    dtype = dtype.newbyteorder("=")
    return dtype, element_type_for(dtype)


class OrtValue:
    """A tensor, sequence, map or optional value (onnxruntime.OrtValue over an ortc.Value)."""

    # as onnxruntime: pickling refused (its OrtValue is an extension object); copy.copy
    # shares the native objects
    __reduce_ex__ = unpicklable("OrtValue")
    __copy__ = shallow_copy

    def __init__(self, ortvalue: ortc.Value | OrtValue,
                 numpy_obj: np.ndarray[Any, Any] | None = None, session: Any = None) -> None:
        if type(ortvalue) is not _Value:  # (compat's own calls give a Value)
            if isinstance(ortvalue, OrtValue):  # what _get_c_value() gave (onnxruntime's C value)
                numpy_obj = ortvalue._numpy_obj
                ortvalue = ortvalue._value
            if not isinstance(ortvalue, ortc.Value):
                raise ValueError("`Provided ortvalue` needs to be an ortc.Value")
        self._value: ortc.Value = ortvalue
        #: the array whose memory the value uses, kept alive
        self._numpy_obj: np.ndarray[Any, Any] | None = numpy_obj

    def _get_c_value(self) -> OrtValue:
        """What stands for onnxruntime's C value: this object, whose methods have its names
        (``torch.from_dlpack(v._get_c_value())``, ``OrtValue(v._get_c_value())`` work)."""
        return self

    @property
    def _ortvalue(self) -> OrtValue:
        """The attribute onnxruntime keeps its C value in, which applications read
        (``v._ortvalue.data_ptr()``, ``.update_inplace(a)``, ``.to_dlpack()``): as
        ``_get_c_value()``, this object."""
        return self

    def to_dlpack(self) -> Any:
        """The C value's name for the DLPack capsule ``__dlpack__()`` gives."""
        return self.__dlpack__()

    @classmethod
    def ortvalue_from_numpy(cls, numpy_obj: np.ndarray[Any, Any], /,
                            device_type: str | OrtDevice = "cpu", device_id: int = 0,
                            vendor_id: int = -1) -> OrtValue:
        # device_type an OrtDevice: the C++ OrtValue's form, (array, device), which libraries
        # call through onnxruntime.capi._pybind_state (this class is that one too)
        cpu_only(device_type, device_id, vendor_id)
        if type(numpy_obj) is np.ndarray and numpy_obj.dtype.kind in _PLAIN_KINDS:
            pass  # (what libraries make an OrtValue of per input per call: no more checks)
        elif isinstance(numpy_obj, np.ndarray) and numpy_obj.dtype.kind == "c":
            raise RuntimeError(f"Numpy_type {numpy_obj.dtype.num} can't be converted to "
                               f"MLDataType.")
        elif not isinstance(numpy_obj, np.ndarray) or numpy_obj.dtype.kind in "OSUmMV":
            # onnxruntime's words: a list, a numpy scalar, a string array (and the other
            # dtypes with no element type: datetime, void) are refused there
            raise RuntimeError("Creation of OrtValues is currently only supported from "
                               "non-string numpy arrays")
        try:
            return cls(_Value.from_numpy(numpy_obj), numpy_obj)
        except ortc.OrtError as err:
            raise _value_error(err) from err

    @classmethod
    def ortvalue_from_numpy_with_onnx_type(cls, data: np.ndarray[Any, Any], /,
                                           onnx_element_type: int) -> OrtValue:
        """A tensor of ``onnx_element_type`` over ``data``'s bytes: onnxruntime reinterprets
        any array whose item size is the type's (uint16 bits as bfloat16, uint8 255 as int8
        -1). It makes no string tensor this way (the item size it wants is that of its C++
        string object), and neither does compat."""
        if not isinstance(data, np.ndarray) or isinstance(onnx_element_type, bool) \
                or not isinstance(onnx_element_type, (int, np.integer)) \
                or not -2**31 <= int(onnx_element_type) < 2**31:  # (an int32 there)
            raise TypeError(f"ortvalue_from_numpy_with_onnx_type(): incompatible function "
                            f"arguments: (numpy.ndarray, int32) expected, got "
                            f"{type(data).__name__}, {onnx_element_type!r}")
        number = int(onnx_element_type)
        element_type = c_element_type(number)
        if number not in _ONNX_TYPES:
            raise RuntimeError(f"Not a valid ONNX Tensor data type: {number}")
        if number in _NO_TENSOR_OF or element_type not in _ELEMENT_TYPES:
            raise RuntimeError(f"tensor type {number} is not supported")
        if element_type == ortc.ElementType.STRING:
            if data.dtype.itemsize != _STRING_ITEM_SIZE:
                raise RuntimeError(f"Items size in the incoming array: {data.dtype.itemsize} "
                                   f"specified by onnxtype: {_STRING_ITEM_SIZE}")
            # onnxruntime would read the array's bytes as its string objects (garbage, or a
            # crash when the tensor is read)
            raise RuntimeError("Items size in the incoming array: 32 is taken for string "
                               "objects, which an array's bytes are not: no STRING tensor is "
                               "made from an array")
        data = _reinterpreted(data, ortc.ElementType(element_type))
        try:
            return cls(ortc.Value.from_numpy(data, element_type), data)
        except ortc.OrtError as err:
            raise _value_error(err) from err

    @classmethod
    def ortvalue_from_shape_and_onnx_type(cls, shape: Sequence[int], onnx_element_type: int,
                                          device: OrtDevice, /) -> OrtValue:
        """The C++ OrtValue's factory of a tensor of an ONNX element type number on a device
        (onnxruntime's ``ortvalue_from_shape_and_type`` calls it for a number)."""
        if isinstance(onnx_element_type, bool) \
                or not isinstance(onnx_element_type, (int, np.integer)):
            raise TypeError(f"ortvalue_from_shape_and_onnx_type(): incompatible function "
                            f"arguments: the element type must be an int, not "
                            f"{type(onnx_element_type).__name__}")
        if not isinstance(device, OrtDevice):
            raise TypeError(f"ortvalue_from_shape_and_onnx_type(): incompatible function "
                            f"arguments: the device must be an OrtDevice, not "
                            f"{type(device).__name__}")
        return cls.ortvalue_from_shape_and_type(shape, int(onnx_element_type), device)

    @classmethod
    def ortvalue_from_shape_and_type(cls, shape: Sequence[int], element_type: Any,
                                     device_type: str | OrtDevice = "cpu", device_id: int = 0,
                                     vendor_id: int = -1, memory_info: Any = None) -> OrtValue:
        cpu_only(device_type, device_id, vendor_id)
        try:  # the shape first, as onnxruntime's argument conversion: integers only
            dims = tuple(operator.index(d) for d in shape)
        except TypeError:
            raise TypeError(f"ortvalue_from_shape_and_type(): incompatible function arguments: "
                            f"the shape must be a sequence of integers, not {shape!r}") from None
        if isinstance(element_type, int) and not -2**31 <= element_type < 2**31:
            raise TypeError(f"ortvalue_from_shape_and_type(): incompatible function arguments: "
                            f"the element type {element_type} is no int32")
        try:
            dtype, onnx_type = _dtype_and_type(element_type)
        except (TypeError, ValueError) as err:
            raise _value_error(err) from err
        try:
            buf = np.zeros(dims, dtype=dtype)
        except ValueError as err:  # a negative dimension
            raise _value_error(err) from err
        except MemoryError:  # numpy's subclass: onnxruntime's is the built-in class
            raise MemoryError("std::bad_alloc") from None
        try:
            return cls(ortc.Value.from_numpy(buf, onnx_type), buf)
        except ortc.OrtError as err:
            raise _value_error(err) from err

    @classmethod
    def ort_value_from_sparse_tensor(cls, sparse_tensor: SparseTensor) -> OrtValue:
        try:
            return cls(ortc.Value.from_sparse(sparse_tensor._get_c_tensor()))
        except ortc.Error as err:
            raise translate(err) from None

    def as_sparse_tensor(self) -> SparseTensor:
        if not self.is_sparse_tensor():
            raise RuntimeError("OrtValue does not contain a SparseTensor")
        return SparseTensor(cast(ortc.SparseTensor, self._value.to_python()))

    def data_ptr(self) -> int:
        return int(self.numpy().__array_interface__["data"][0])

    def device_name(self) -> str:
        if self._value.kind not in (ortc.ValueKind.TENSOR, ortc.ValueKind.SPARSETENSOR):
            raise RuntimeError("Only OrtValues that are Tensors/SparseTensors are currently "
                               "supported")
        return "cpu"

    def shape(self) -> list[int]:
        try:
            return list(self._value.shape)
        except ortc.OrtError as err:
            raise _value_error(err) from err

    def _require_value(self) -> None:
        # onnxruntime reads an empty optional's missing data here (and crashes)
        if not self._value.has_value():
            raise RuntimeError("This OrtValue is an empty optional: it holds no value")

    def data_type(self) -> str:
        self._require_value()
        value = self._value
        if value.is_tensor:  # its element type alone: no type info built (GetTypeInfo & co)
            return ortc.TypeInfo(ortc.ValueKind.TENSOR, value.element_type).type_str
        return value.type_info.type_str

    def element_type(self) -> int:
        """The element type of a tensor, a sparse tensor or a sequence of tensors."""
        self._require_value()
        if self._value.is_tensor:  # (as data_type())
            return onnx_element_type(self._value.element_type)
        info = self._value.type_info
        if info.kind == ortc.ValueKind.SEQUENCE and info.element is not None:
            info = info.element
        if info.kind not in (ortc.ValueKind.TENSOR, ortc.ValueKind.SPARSETENSOR) \
                or info.element_type is None:
            raise RuntimeError("Tensor proto_type is unavailable for this value.")
        return onnx_element_type(info.element_type)

    def tensor_size_in_bytes(self) -> int:
        return int(self.numpy().nbytes)

    def has_value(self) -> bool:
        return self._value.has_value()

    def is_tensor(self) -> bool:
        return self._value.is_tensor

    def is_sparse_tensor(self) -> bool:
        return self._value.has_value() and self._value.kind == ortc.ValueKind.SPARSETENSOR

    def is_tensor_sequence(self) -> bool:
        if not self._value.has_value():  # an empty optional
            return False
        info = self._value.type_info
        return (info.kind == ortc.ValueKind.SEQUENCE and info.element is not None
                and info.element.kind == ortc.ValueKind.TENSOR)

    def numpy(self) -> np.ndarray[Any, Any]:
        try:
            arr = self._value.numpy()
        except ortc.OrtError as err:
            raise _value_error(err) from err
        # onnxruntime hands float8e4m3fn out as its uint8 bits, as run() does (an ml_dtypes
        # type: of kind "V", whose name numpy works out at each read)
        dtype = arr.dtype
        return arr.view(np.uint8) if dtype.kind == "V" and dtype.name == "float8_e4m3fn" \
            else arr

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        arr = self.numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """The tensor's DLPack capsule, zero copy, for every element type onnxruntime exports
        but the sub-byte ones (bfloat16 and the float8 types with their DLPack codes)."""
        if not self._value.is_tensor:
            raise RuntimeError("Only tensor type OrtValues are supported")
        try:
            arr = self._value.numpy()
        except ortc.OrtError as err:
            raise _value_error(err) from err
        return dlpack_export(arr, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        if not self._value.is_tensor:
            raise RuntimeError("Only tensor type OrtValues are supported")
        return (1, 0)  # kDLCPU, device 0

    @classmethod
    def from_dlpack(cls, data: Any, /) -> OrtValue:
        """An OrtValue over what ``data`` holds: an object with ``__dlpack__`` (an array, an
        OrtValue) or a DLPack capsule (what ``__dlpack__()`` returned), as onnxruntime takes."""
        if isinstance(data, np.ndarray):
            return cls.ortvalue_from_numpy(np.from_dlpack(data))
        if hasattr(data, "__dlpack__"):
            try:
                on_cpu = tuple(data.__dlpack_device__()) == (1, 0)
            except Exception:  # noqa: BLE001 - numpy's from_dlpack reports it
                on_cpu = False
            return cls._over(dlpack_array(data.__dlpack__()) if on_cpu
                             else np.from_dlpack(data))
        refused = "from_dlpack expected a valid DLPack capsule named 'dltensor'"
        if type(data).__name__ != "PyCapsule":
            raise TypeError(refused)
        try:  # (one already consumed is named 'used_dltensor')
            return cls._over(dlpack_array(data))
        except ValueError:
            raise TypeError(refused) from None

    @classmethod
    def _over(cls, arr: np.ndarray[Any, Any]) -> OrtValue:
        """An OrtValue over a DLPack import's array (of ml_dtypes' types too)."""
        if arr.dtype.kind == "V" and not type(arr.dtype).__module__.startswith("numpy"):
            try:
                return cls(ortc.Value.from_numpy(arr), arr)
            except ortc.OrtError as err:
                raise _value_error(err) from err
        return cls.ortvalue_from_numpy(arr)

    def update_inplace(self, data: np.ndarray[Any, Any]) -> None:
        if not isinstance(data, (np.ndarray, OrtValue)):
            raise TypeError("data must be a numpy.ndarray or an OrtValue.")
        if not self._value.is_tensor:
            # onnxruntime's classes: ValueError where it reads an element type (a sequence of
            # tensors, a sparse tensor), RuntimeError for the rest
            what = "an empty optional" if not self._value.has_value() else self.data_type()
            cls = ValueError if self.is_tensor_sequence() or self.is_sparse_tensor() \
                else RuntimeError
            raise cls(f"update_inplace: this OrtValue is {what}, not a tensor")
        if isinstance(data, OrtValue):
            if not data._value.is_tensor:
                raise RuntimeError("The source OrtValue must contain a Tensor")
            data = data.numpy()
        view = self.numpy()
        # onnxruntime's rules: numeric data of as many elements (any shape: the value keeps
        # its own). A string tensor's numpy() is a copy: writing it would update nothing.
        if data.dtype.kind in "OSU" or view.dtype.kind in "OSU":
            raise RuntimeError("Inplace update of OrtValues is currently only supported from "
                               "non-string numpy arrays")
        if data.size != view.size:
            raise RuntimeError("The input size of numpy arrays does not match the size of the "
                               "OrtValue.")
        if not view.flags.writeable:
            # (onnxruntime writes it anyway, into a read-only array or a bytes object)
            raise RuntimeError("update_inplace: this OrtValue is over read-only memory (made "
                               "of a read-only array)")
        np.copyto(view, data.reshape(view.shape), casting="no")

    def __repr__(self) -> str:
        return f"<onnxruntime.OrtValue over {self._value!r}>"

