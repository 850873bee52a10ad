"""Sparse tensors (COO and CSR) as plain Python data, and their ORT values.

ORT copies the values and indices into its own memory when a sparse value is filled
(FillSparseTensorCoo / Csr), so a sparse value owns everything it needs; reading one copies
back out, since numpy has no sparse type of its own.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ._enums import SparseFormat, SparseIndicesFormat
from ._ffi import ffi
from ._loader import Api
from ._status import call_out, check
from .dtypes import dtype_for, element_type_for
from .errors import InvalidArgument

__all__ = ["SparseTensor", "sparse_to_python", "sparse_from_python"]


def _shape(dense_shape: Any) -> tuple[int, ...]:
    """The dense shape as ints; a dimension that is not an integer (2.5) is refused, not cut,
    and one negative or past int64 too (2**64 raised a bare OverflowError in the C call)."""
    try:
        dense = tuple(operator.index(d) for d in dense_shape)
    except TypeError:
        raise InvalidArgument(f"sparse tensor: the dense shape must be integers, got "
                              f"{dense_shape!r}") from None
    if any(not 0 <= d < 2**63 for d in dense):
        raise InvalidArgument(f"sparse tensor: dense shape {dense} has a dimension outside "
                              f"[0, 2**63)")
    return dense


def _indices_array(data: Any, what: str) -> np.ndarray[Any, Any]:
    """Indices as int64, refusing anything a conversion would change (floats, huge ints)."""
    arr = np.asarray(data)
    if arr.size == 0:
        return arr.astype(np.int64).reshape(arr.shape)
    if arr.dtype.kind not in "iu":
        raise InvalidArgument(f"sparse tensor {what}: expected integers, got {arr.dtype} data")
    if arr.dtype == np.uint64 and int(arr.max()) > np.iinfo(np.int64).max:
        raise InvalidArgument(f"sparse tensor {what}: index {int(arr.max())} is out of int64 "
                              f"range")
    return arr.astype(np.int64)


@dataclass(frozen=True)
class SparseTensor:
    """A sparse tensor: ``values`` at ``indices`` within ``dense_shape``.

    COO: ``indices`` is int64 of shape [nnz] (linear) or [nnz, rank]. CSR (2-D only):
    ``inner_indices`` (column of each value) and ``outer_indices`` (row starts, rows + 1).
    """

    format: SparseFormat
    dense_shape: tuple[int, ...]
    values: np.ndarray[Any, Any]
    indices: Optional[np.ndarray[Any, Any]] = None
    inner_indices: Optional[np.ndarray[Any, Any]] = None
    outer_indices: Optional[np.ndarray[Any, Any]] = None

    @classmethod
    def coo(cls, dense_shape: Any, values: Any, indices: Any) -> SparseTensor:
        return cls(SparseFormat.COO, _shape(dense_shape), np.asarray(values),
                   _indices_array(indices, "indices"))

    @classmethod
    def csr(cls, dense_shape: Any, values: Any, inner_indices: Any, outer_indices: Any
            ) -> SparseTensor:
        return cls(SparseFormat.CSRC, _shape(dense_shape), np.asarray(values),
                   inner_indices=_indices_array(inner_indices, "inner_indices"),
                   outer_indices=_indices_array(outer_indices, "outer_indices"))

    def to_dense(self) -> np.ndarray[Any, Any]:
        dense = np.zeros(self.dense_shape, self.values.dtype)
        flat = dense.reshape(-1)
        if self.format == SparseFormat.COO:
            assert self.indices is not None
            idx = self.indices
            if idx.size:  # ORT reports an empty COO's indices as [0, 2] whatever the rank
                linear = idx if idx.ndim == 1 else np.ravel_multi_index(idx.T, self.dense_shape)
                flat[linear] = self.values
        elif self.format == SparseFormat.CSRC:
            assert self.inner_indices is not None and self.outer_indices is not None
            cols = self.dense_shape[1]
            for row in range(len(self.outer_indices) - 1):
                lo, hi = self.outer_indices[row], self.outer_indices[row + 1]
                flat[row * cols + self.inner_indices[lo:hi]] = self.values[lo:hi]
        else:
            raise InvalidArgument(f"to_dense: {self.format.name} is not supported")
        return dense


def _info_shape(api: Api, info: Any) -> tuple[int, tuple[int, ...]]:
    try:
        et = ffi.new("ONNXTensorElementDataType*")
        check(api.GetTensorElementType(info, et))
        n = ffi.new("size_t*")
        check(api.GetDimensionsCount(info, n))
        dims = ffi.new("int64_t[]", max(n[0], 1))
        if n[0]:
            check(api.GetDimensions(info, dims, n[0]))
        return int(et[0]), tuple(dims[i] for i in range(n[0]))
    finally:
        api.ReleaseTensorTypeAndShapeInfo(info)


def _indices(api: Api, raw: Any, fmt: SparseIndicesFormat) -> np.ndarray[Any, Any]:
    info = call_out(api.GetSparseTensorIndicesTypeShape, "OrtTensorTypeAndShapeInfo*", raw,
                    int(fmt))
    et, shape = _info_shape(api, info)
    count = ffi.new("size_t*")
    ptr = ffi.new("void**")
    check(api.GetSparseTensorIndices(raw, int(fmt), count,
                                     ffi.cast("const void**", ptr)))
    dtype = dtype_for(et)
    assert dtype is not None
    n = int(np.prod(shape)) if shape else int(count[0])
    if not n:
        return np.zeros(shape, dtype)
    return np.frombuffer(ffi.buffer(ptr[0], n * dtype.itemsize), dtype).reshape(shape).copy()


def sparse_to_python(api: Api, raw: Any) -> SparseTensor:
    """Copy a sparse OrtValue into a :class:`SparseTensor`."""
    fmt_p = ffi.new("enum OrtSparseFormat*")
    check(api.GetSparseTensorFormat(raw, fmt_p))
    fmt = SparseFormat(fmt_p[0])
    dense_info = call_out(api.GetTensorTypeAndShape, "OrtTensorTypeAndShapeInfo*", raw)
    _, dense_shape = _info_shape(api, dense_info)
    vinfo = call_out(api.GetSparseTensorValuesTypeAndShape, "OrtTensorTypeAndShapeInfo*", raw)
    et, vshape = _info_shape(api, vinfo)
    dtype = dtype_for(et)
    assert dtype is not None
    nvals = int(np.prod(vshape)) if vshape else 0
    if nvals:
        vptr = ffi.new("void**")
        check(api.GetSparseTensorValues(raw, ffi.cast("const void**", vptr)))
        values = np.frombuffer(ffi.buffer(vptr[0], nvals * dtype.itemsize), dtype) \
            .reshape(vshape).copy()
    else:
        values = np.zeros(vshape, dtype)
    if fmt == SparseFormat.COO:
        return SparseTensor(fmt, dense_shape, values,
                            _indices(api, raw, SparseIndicesFormat.COO_INDICES))
    if fmt == SparseFormat.CSRC:
        return SparseTensor(fmt, dense_shape, values,
                            inner_indices=_indices(api, raw, SparseIndicesFormat.CSR_INNER_INDICES),
                            outer_indices=_indices(api, raw, SparseIndicesFormat.CSR_OUTER_INDICES))
    raise InvalidArgument(f"sparse format {fmt.name} is not converted by ortc")


def sparse_from_python(api: Api, sparse: SparseTensor, allocator: Any, memory_info: Any) -> Any:
    """A new sparse OrtValue (owned by the caller) filled with copies of ``sparse``'s data."""
    values = np.ascontiguousarray(sparse.values)
    if values.dtype.kind in "USO":
        raise InvalidArgument("sparse string tensors are not supported by ortc")
    et = element_type_for(values.dtype)
    # checked here too: a SparseTensor made directly, not through coo()/csr(), is not checked
    dense = _shape(sparse.dense_shape)
    _check_layout(sparse, values, dense)
    raw = call_out(api.CreateSparseTensorAsOrtValue, "OrtValue*", allocator, dense, len(dense),
                   int(et), context="CreateSparseTensorAsOrtValue")
    try:
        vshape = values.shape
        if sparse.format == SparseFormat.COO:
            if sparse.indices is None:
                raise InvalidArgument("a COO sparse tensor needs indices")
            idx = np.ascontiguousarray(_indices_array(sparse.indices, "indices"))
            _check_coo_bounds(idx, values.size, dense)
            check(api.FillSparseTensorCoo(raw, memory_info, vshape, len(vshape),
                                          ffi.from_buffer(values), ffi.from_buffer("int64_t[]", idx),
                                          idx.size), "sparse COO tensor")
        elif sparse.format == SparseFormat.CSRC:
            if sparse.inner_indices is None or sparse.outer_indices is None:
                raise InvalidArgument("a CSR sparse tensor needs inner and outer indices")
            inner = np.ascontiguousarray(_indices_array(sparse.inner_indices, "inner_indices"))
            outer = np.ascontiguousarray(_indices_array(sparse.outer_indices, "outer_indices"))
            _check_csr_bounds(inner, outer, values.size, dense)
            check(api.FillSparseTensorCsr(raw, memory_info, vshape, len(vshape),
                                          ffi.from_buffer(values), ffi.from_buffer("int64_t[]", inner),
                                          inner.size, ffi.from_buffer("int64_t[]", outer), outer.size),
                  "sparse CSR tensor")
        else:
            raise InvalidArgument(f"sparse format {sparse.format.name} is not supported")
    except BaseException:
        api.ReleaseValue(raw)
        raise
    return raw


_INT64_MAX = 2 ** 63 - 1


# What ORT would take without a word (a values array of any rank, flattened) or refuse as a
# FAIL naming its own source files (the element count's overflow, a CSR's rank and row
# count), said here as InvalidArgument naming the argument.
def _check_layout(sparse: SparseTensor, values: np.ndarray[Any, Any],
                  dense: tuple[int, ...]) -> None:
    if values.ndim != 1:
        raise InvalidArgument(f"sparse tensor: values must be 1-D (one value per index), got "
                              f"shape {values.shape}")
    if math.prod(dense) > _INT64_MAX:
        raise InvalidArgument(f"sparse tensor: dense shape {dense} has "
                              f"{math.prod(dense)} elements, more than int64 counts")
    if sparse.format == SparseFormat.COO and sparse.indices is not None:
        shape = np.shape(sparse.indices)  # ([nnz, 1]: linear, as np.argwhere gives them)
        if len(shape) > 2 or len(shape) == 2 and shape[1] != 1 and \
                (len(dense) != 2 or shape[1] != 2):
            raise InvalidArgument(
                f"sparse COO tensor: indices are [nnz] linear indices or, for a 2-D dense "
                f"shape, [nnz, 2] (row, column) pairs; got shape {shape} for dense shape "
                f"{dense}")
    elif sparse.format == SparseFormat.CSRC:
        if len(dense) != 2:
            raise InvalidArgument(f"sparse CSR tensor: the dense shape must be 2-D, got {dense}")
        outer = sparse.outer_indices
        if outer is not None and np.size(outer) not in (0, dense[0] + 1):
            raise InvalidArgument(f"sparse CSR tensor: {np.size(outer)} outer (row start) "
                                  f"indices for {dense[0]} rows; expected rows + 1 = "
                                  f"{dense[0] + 1}")


# Not every ORT version checks that FillSparseTensorCoo/Csr indices lie inside the dense shape;
# one that does not stores them, and whatever reads the value then indexes out of bounds
# (to_dense wrapped a negative index around). So ortc checks the bounds itself.
def _check_coo_bounds(idx: np.ndarray[Any, Any], nvalues: int, dense: tuple[int, ...]) -> None:
    if not idx.size:
        return
    flat = idx.reshape(-1)
    if flat.size == nvalues:
        size = math.prod(dense)  # a Python int: no overflow for huge dense shapes
        bad = (flat < 0) | (flat >= size) if size <= _INT64_MAX else flat < 0
        if bad.any():
            raise InvalidArgument(f"sparse COO tensor: linear index {int(flat[bad][0])} is "
                                  f"outside the dense shape {dense} ([0, {size}))")
    elif flat.size == 2 * nvalues and len(dense) == 2:
        pairs = flat.reshape(-1, 2)
        bad = (pairs < 0).any(axis=1) | (pairs[:, 0] >= dense[0]) | (pairs[:, 1] >= dense[1])
        if bad.any():
            row, col = (int(v) for v in pairs[bad][0])
            raise InvalidArgument(f"sparse COO tensor: index ({row}, {col}) is outside the "
                                  f"dense shape {dense}")
        flat = pairs[:, 0] * dense[1] + pairs[:, 1]  # in bounds: the linear index is exact
    else:
        return  # other counts and ranks: ORT's own check names them
    # a position given twice has two values: ORT keeps one without a word
    uniq, counts = np.unique(flat, return_counts=True)
    if (counts > 1).any():
        raise InvalidArgument(f"sparse COO tensor: the linear index {int(uniq[counts > 1][0])} "
                              f"is given more than once (each position takes one value)")


def _check_csr_bounds(inner: np.ndarray[Any, Any], outer: np.ndarray[Any, Any], nvalues: int,
                      dense: tuple[int, ...]) -> None:
    if len(dense) != 2 or not inner.size:
        return  # ORT's own checks name these
    bad = (inner < 0) | (inner >= dense[1])
    if bad.any():
        raise InvalidArgument(f"sparse CSR tensor: inner (column) index {int(inner[bad][0])} "
                              f"is outside [0, {dense[1]})")
    if outer.size and ((outer < 0).any() or (outer > nvalues).any()
                       or (np.diff(outer) < 0).any()):
        raise InvalidArgument(f"sparse CSR tensor: outer (row start) indices must rise from 0 "
                              f"to the value count {nvalues} without falling; got "
                              f"{outer.tolist()[:16]}")
    if outer.size != dense[0] + 1 or outer[0] != 0 or outer[-1] != inner.size:
        return  # ORT's own check names these
    # a column given twice in one row has two values: ORT keeps one without a word (as COO)
    rows = np.repeat(np.arange(dense[0], dtype=np.int64), np.diff(outer))
    linear = rows * dense[1] + inner
    uniq, counts = np.unique(linear, return_counts=True)
    if (counts > 1).any():
        row, col = divmod(int(uniq[counts > 1][0]), dense[1])
        raise InvalidArgument(f"sparse CSR tensor: column {col} of row {row} is given more "
                              f"than once (each position takes one value)")
