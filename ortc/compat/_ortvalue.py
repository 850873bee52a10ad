"""onnxruntime's ``OrtValue`` over :class:`ortc.Value` (CPU memory only)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import ortc
from ortc.dtypes import dtype_for, element_type_for

from ._device import cpu_only
from ._errors import translate
from ._sparse import SparseTensor


def _value_error(err: BaseException) -> RuntimeError:
    """onnxruntime's OrtValue methods raise a plain RuntimeError for every failure."""
    return RuntimeError(err.message if isinstance(err, ortc.OrtError) else str(err))


class OrtValue:
    """A tensor, sequence, map or optional value (onnxruntime.OrtValue over an ortc.Value)."""

    def __init__(self, ortvalue: ortc.Value, numpy_obj: np.ndarray[Any, Any] | None = None,
                 session: Any = None) -> None:
        if not isinstance(ortvalue, ortc.Value):
            raise ValueError("`Provided ortvalue` needs to be an ortc.Value")
        self._value = ortvalue
        self._numpy_obj = numpy_obj  # the array whose memory the value uses, kept alive

    def _get_c_value(self) -> ortc.Value:
        return self._value

    @classmethod
    def ortvalue_from_numpy(cls, numpy_obj: np.ndarray[Any, Any], /, device_type: str = "cpu",
                            device_id: int = 0, vendor_id: int = -1) -> OrtValue:
        cpu_only(device_type, device_id, vendor_id)
        try:
            return cls(ortc.Value.from_numpy(numpy_obj), numpy_obj)
        except ortc.OrtError as err:
            raise _value_error(err) from err

    @classmethod
    def ortvalue_from_numpy_with_onnx_type(cls, data: np.ndarray[Any, Any], /,
                                           onnx_element_type: int) -> OrtValue:
        try:
            return cls(ortc.Value.from_numpy(data, onnx_element_type), data)
        except ortc.OrtError as err:
            raise _value_error(err) from err

    @classmethod
    def ortvalue_from_shape_and_type(cls, shape: Sequence[int], element_type: Any,
                                     device_type: str = "cpu", device_id: int = 0,
                                     vendor_id: int = -1, memory_info: Any = None) -> OrtValue:
        cpu_only(device_type, device_id, vendor_id)
        try:
            if isinstance(element_type, int) and not isinstance(element_type, bool):
                onnx_type: Any = element_type
                dtype = dtype_for(element_type)
            else:
                dtype = np.dtype(element_type)
                onnx_type = element_type_for(dtype)
        except (TypeError, ValueError) as err:
            raise _value_error(err) from err
        try:
            buf = np.zeros(tuple(shape), dtype=dtype)
        except ValueError as err:  # a negative dimension
            raise _value_error(err) from err
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
        return SparseTensor(self._value.to_python())

    def data_ptr(self) -> int:
        return int(self.numpy().__array_interface__["data"][0])

    def device_name(self) -> str:
        return "cpu"

    def shape(self) -> list[int]:
        try:
            return list(self._value.shape)
        except ortc.OrtError as err:
            raise _value_error(err) from err

    def data_type(self) -> str:
        return self._value.type_info.type_str

    def element_type(self) -> int:
        return int(self._value.element_type)

    def tensor_size_in_bytes(self) -> int:
        return int(self.numpy().nbytes)

    def has_value(self) -> bool:
        return self._value.has_value()

    def is_tensor(self) -> bool:
        return self._value.is_tensor

    def is_sparse_tensor(self) -> bool:
        return self._value.has_value() and self._value.kind == ortc.ValueKind.SPARSETENSOR

    def is_tensor_sequence(self) -> bool:
        info = self._value.type_info
        return (info.kind == ortc.ValueKind.SEQUENCE and info.element is not None
                and info.element.kind == ortc.ValueKind.TENSOR)

    def numpy(self) -> np.ndarray[Any, Any]:
        try:
            return self._value.numpy()
        except ortc.OrtError as err:
            raise _value_error(err) from err

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        arr = self.numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def __dlpack__(self, *, stream: Any = None) -> Any:
        return self.numpy().__dlpack__(stream=stream)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU, device 0

    @classmethod
    def from_dlpack(cls, data: Any, /) -> OrtValue:
        return cls.ortvalue_from_numpy(np.from_dlpack(data))

    def update_inplace(self, data: np.ndarray[Any, Any]) -> None:
        if not isinstance(data, (np.ndarray, OrtValue)):
            raise TypeError("data must be a numpy.ndarray or an OrtValue.")
        if isinstance(data, OrtValue):
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
        np.copyto(view, data.reshape(view.shape), casting="no")

    def __repr__(self) -> str:
        return f"<onnxruntime.OrtValue over {self._value!r}>"
