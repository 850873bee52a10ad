"""onnxruntime's ``SparseTensor`` (COO and CSR, CPU memory) over :class:`ortc.SparseTensor`.

As in onnxruntime, a sparse input goes in through ``OrtValue.ort_value_from_sparse_tensor`` and
``run_with_ort_values``; ``OrtValue.as_sparse_tensor`` reads one back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ortc
from ortc.dtypes import element_type_for, feed_dtype

from ._enums import OrtSparseFormat
from ._device import OrtDevice, cpu_only
from ._errors import shallow_copy, unpicklable


def _pybind_array(arr: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``arr`` as onnxruntime's sparse views hand their arrays out: pybind11 arrays of C++'s
    int64_t and uint64_t, numpy's np.int64 and np.uint64 (C long 'l' where long has 64 bits),
    where dense tensors come out as C long long ('q': ortc.dtypes)."""
    if arr.dtype.kind in "OSU":  # strings: a new array of str objects (a writable copy)
        return np.array(arr.tolist(), dtype=object).reshape(arr.shape)
    arr = arr.view(feed_dtype(arr.dtype))  # (64-bit integers: the caller's dtype objects)
    arr.flags.writeable = False  # read-only views of the tensor's memory, as onnxruntime's
    return arr


class _CooView:
    def __init__(self, indices: np.ndarray[Any, Any]) -> None:
        self._indices = _pybind_array(indices)

    def indices(self) -> np.ndarray[Any, Any]:
        return self._indices


class _CsrView:
    def __init__(self, inner: np.ndarray[Any, Any], outer: np.ndarray[Any, Any]) -> None:
        self._inner, self._outer = _pybind_array(inner), _pybind_array(outer)

    def inner(self) -> np.ndarray[Any, Any]:
        return self._inner

    def outer(self) -> np.ndarray[Any, Any]:
        return self._outer


class SparseTensor:
    """A sparse tensor: ``values()`` within ``dense_shape()``, COO or CSR indices."""

    # as onnxruntime: pickling refused (its SparseTensor is an extension object); copy.copy
    # shares the native objects
    __reduce_ex__ = unpicklable("SparseTensor")
    __copy__ = shallow_copy

    def __init__(self, sparse_tensor: ortc.SparseTensor) -> None:
        if not isinstance(sparse_tensor, ortc.SparseTensor):
            raise ValueError("`Provided object` needs to be an ortc.SparseTensor")
        self._tensor = sparse_tensor

    def _get_c_tensor(self) -> ortc.SparseTensor:
        return self._tensor

    @classmethod
    def sparse_coo_from_numpy(cls, dense_shape: Any, values: np.ndarray[Any, Any],
                              coo_indices: np.ndarray[Any, Any], ort_device: OrtDevice
                              ) -> SparseTensor:
        cpu_only(_device_name(ort_device), ort_device.device_id(), -1)
        indices = np.asarray(coo_indices, dtype=np.int64)
        nnz = len(values)
        if indices.ndim == 1 and nnz and len(indices) == 2 * nnz:
            indices = indices.reshape(nnz, 2)  # pairs of coordinates, flattened
        return cls(ortc.SparseTensor.coo(list(dense_shape), values, indices))

    @classmethod
    def sparse_csr_from_numpy(cls, dense_shape: Any, values: np.ndarray[Any, Any],
                              inner_indices: np.ndarray[Any, Any],
                              outer_indices: np.ndarray[Any, Any], ort_device: OrtDevice
                              ) -> SparseTensor:
        cpu_only(_device_name(ort_device), ort_device.device_id(), -1)
        return cls(ortc.SparseTensor.csr(list(dense_shape), values, inner_indices,
                                         outer_indices))

    def values(self) -> np.ndarray[Any, Any]:
        return _pybind_array(self._tensor.values)

    def as_coo_view(self) -> _CooView:
        if self.format() != OrtSparseFormat.ORT_SPARSE_COO:
            raise RuntimeError("This sparse tensor does not contain COO format")
        assert self._tensor.indices is not None
        return _CooView(self._tensor.indices)

    def as_csrc_view(self) -> _CsrView:
        if self.format() != OrtSparseFormat.ORT_SPARSE_CSRC:
            raise RuntimeError("This sparse tensor does not contain CSR(C) format")
        assert self._tensor.inner_indices is not None and self._tensor.outer_indices is not None
        return _CsrView(self._tensor.inner_indices, self._tensor.outer_indices)

    def as_blocksparse_view(self) -> Any:
        # compat makes COO and CSR tensors only: never one of this format
        raise RuntimeError("This sparse tensor does not contain BlockSparse format")

    def to_cuda(self, ort_device: OrtDevice) -> SparseTensor:
        """As in an onnxruntime built without CUDA: compat keeps sparse tensors in CPU memory."""
        if not isinstance(ort_device, OrtDevice):
            raise AttributeError(f"to_cuda takes an OrtDevice, not {type(ort_device).__name__}")
        raise RuntimeError("ortc.compat keeps sparse tensors in CPU memory: no copy to CUDA")

    def format(self) -> OrtSparseFormat:
        return OrtSparseFormat(int(self._tensor.format))

    def dense_shape(self) -> list[int]:
        return list(self._tensor.dense_shape)

    def data_type(self) -> str:
        element = element_type_for(self._tensor.values.dtype)
        return ortc.TypeInfo(ortc.ValueKind.SPARSETENSOR, element).type_str

    def device_name(self) -> str:
        return "cpu"


def _device_name(device: OrtDevice) -> str:
    return {0: "cpu", 1: "gpu", 2: "fpga", 3: "npu"}.get(device.device_type(), "gpu")
