"""onnxruntime's ``IOBinding`` over :class:`ortc.IoBinding` (CPU memory)."""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

import numpy as np

import ortc
from ortc.dtypes import dtype_for

from ._device import cpu_only
from ._errors import shallow_copy, unpicklable
from ._ortvalue import OrtValue, c_element_type


def _array_at(address: int, element_type: Any, shape: Sequence[int]) -> np.ndarray[Any, Any]:
    """A numpy view of ``shape`` elements at a raw CPU address (onnxruntime's buffer_ptr)."""
    if isinstance(element_type, int) and not isinstance(element_type, bool):
        dtype = dtype_for(c_element_type(element_type))
    else:
        dtype = np.dtype(element_type)
    assert dtype is not None
    count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(int(address))
    return np.frombuffer(memoryview(raw).cast("B"), dtype=dtype, count=count).reshape(tuple(shape))


class IOBinding:
    """Inputs and outputs bound once to memory, for ``run_with_iobinding``."""

    # as onnxruntime: pickling refused, naming the session it holds (an extension object
    # there); copy.copy shares the native objects
    __reduce_ex__ = unpicklable("InferenceSession")
    __copy__ = shallow_copy

    def __init__(self, session: Any) -> None:
        self._session = session._sess
        self._binding = session._sess.io_binding()
        self._keep: dict[str, Any] = {}  # arrays whose memory is bound, kept alive

    def _call(self, method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except ortc.OrtError as err:  # (ortc's thread-rule and closed errors stay as they are)
            # onnxruntime's IOBinding methods raise a plain RuntimeError for every failure
            raise RuntimeError(err.message) from err

    def bind_cpu_input(self, name: str, arr_on_cpu: Any) -> None:
        arr = np.asarray(arr_on_cpu)
        self._keep[name] = arr
        self._call(self._binding.bind_input, name, arr)

    def bind_input(self, name: str, device_type: str, device_id: int, element_type: Any,
                   shape: Sequence[int], buffer_ptr: int) -> None:
        cpu_only(device_type, device_id, -1)
        arr = _array_at(buffer_ptr, element_type, shape)
        self._keep[name] = arr
        self._call(self._binding.bind_input, name, arr)

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        self._keep[name] = ortvalue
        self._call(self._binding.bind_input, name, ortvalue._value)

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0,
                    element_type: Any = None, shape: Sequence[int] | None = None,
                    buffer_ptr: int | None = None) -> None:
        cpu_only(device_type, device_id, -1)
        if buffer_ptr is None:
            self._call(self._binding.bind_output, name)
            return
        if element_type is None or shape is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated "
                             "memory is provided")
        arr = _array_at(buffer_ptr, element_type, shape)
        self._keep["out:" + name] = arr
        self._call(self._binding.bind_output, name, arr)

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        self._keep["out:" + name] = ortvalue
        self._call(self._binding.bind_output, name, ortvalue._value)

    def synchronize_inputs(self) -> None:
        self._call(self._binding.synchronize_inputs)

    def synchronize_outputs(self) -> None:
        self._call(self._binding.synchronize_outputs)

    def get_outputs(self) -> list[OrtValue]:
        return [OrtValue(v) for v in self._call(self._binding.get_output_values)]

    def copy_outputs_to_cpu(self) -> list[Any]:
        # copies, as the name says: get_outputs' arrays are views over the bound outputs,
        # which the next run with this binding writes again
        return [_copied(out) for out in self._call(self._binding.get_outputs)]

    def clear_binding_inputs(self) -> None:
        self._binding.clear_binding_inputs()
        self._keep = {k: v for k, v in self._keep.items() if k.startswith("out:")}

    def clear_binding_outputs(self) -> None:
        self._binding.clear_binding_outputs()
        self._keep = {k: v for k, v in self._keep.items() if not k.startswith("out:")}


def _copied(out: Any) -> Any:
    """An output (an array, or a list / dict holding arrays) with every array copied."""
    if isinstance(out, np.ndarray):
        return out.copy()
    if isinstance(out, list):
        return [_copied(item) for item in out]
    if isinstance(out, dict):
        return {key: _copied(item) for key, item in out.items()}
    return out
