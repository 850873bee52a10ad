"""Sparse tensors: COO and CSR values both ways, and a model with a sparse input."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import ortc
from ortc import SparseTensor, ValueKind
from ortc._enums import SparseFormat


def test_coo_round_trip() -> None:
    sp = SparseTensor.coo((3, 4), np.array([1.5, -2.0, 3.0], np.float32), [1, 6, 11])
    v = ortc.Value.from_sparse(sp)
    assert v.kind == ValueKind.SPARSETENSOR
    back = v.to_python()
    assert back.format == SparseFormat.COO and back.dense_shape == (3, 4)
    np.testing.assert_array_equal(back.values, sp.values)
    np.testing.assert_array_equal(back.indices, [1, 6, 11])
    dense = back.to_dense()
    assert dense[0, 1] == 1.5 and dense[1, 2] == -2.0 and dense[2, 3] == 3.0 and dense.sum() == 2.5


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2)])
def test_empty_coo_round_trip_is_all_zeros(shape: tuple[int, ...]) -> None:
    """A COO tensor with no values is all zeros; ORT reports its indices as [0, 2] whatever
    the rank, and to_dense raised numpy's ValueError on them."""
    sp = SparseTensor.coo(shape, np.array([], np.float32), np.array([], np.int64))
    back = ortc.Value.from_sparse(sp).to_python()
    assert back.values.size == 0 and back.indices is not None and back.indices.size == 0
    dense = back.to_dense()
    assert dense.shape == shape and dense.dtype == np.float32 and not dense.any()


def test_coo_2d_indices_and_csr_round_trip() -> None:
    sp = SparseTensor.coo((2, 3), np.array([7, 8], np.int32), [[0, 2], [1, 0]])
    back = ortc.Value.from_sparse(sp).to_python()
    np.testing.assert_array_equal(back.to_dense(), [[0, 0, 7], [8, 0, 0]])
    csr = SparseTensor.csr((2, 3), np.array([1.0, 2.0, 3.0]), [0, 2, 1], [0, 2, 3])
    back = ortc.Value.from_sparse(csr).to_python()
    assert back.format == SparseFormat.CSRC
    np.testing.assert_array_equal(back.to_dense(), [[1, 0, 2], [0, 3, 0]])


def test_bad_sparse_inputs() -> None:
    with pytest.raises(ortc.InvalidArgument, match="expected an ortc.SparseTensor"):
        ortc.Value.from_sparse(np.zeros(3))
    with pytest.raises(ortc.OrtError):  # an index outside the dense shape
        ortc.Value.from_sparse(SparseTensor.coo((2, 2), np.ones(1, np.float32), [9]))


@pytest.mark.parametrize("sparse, message", [
    (SparseTensor.coo((2, 2), np.ones(1, np.float32), [-1]), r"linear index -1 is outside"),
    (SparseTensor.coo((2, 2), np.ones(1, np.float32), [4]), r"linear index 4 is outside"),
    (SparseTensor.coo((2, 3), np.ones(2, np.float32), [[0, 0], [1, 3]]),
     r"index \(1, 3\) is outside"),
    (SparseTensor.coo((2, 3), np.ones(2, np.float32), [[0, 0], [-1, 0]]),
     r"index \(-1, 0\) is outside"),
    (SparseTensor.csr((2, 2), np.ones(2, np.float32), [0, 2], [0, 1, 2]),
     r"inner \(column\) index 2 is outside"),
    (SparseTensor.csr((2, 2), np.ones(2, np.float32), [0, 1], [0, 2, 1]),
     r"outer \(row start\) indices must rise"),
], ids=["coo-negative", "coo-past-end", "coo-2d-column", "coo-2d-negative-row",
        "csr-column", "csr-falling-rows"])
def test_sparse_indices_outside_the_dense_shape_are_refused(sparse: SparseTensor,
                                                             message: str) -> None:
    """ortc checks the bounds itself: not every ORT version does (one that does not stores
    the indices, and to_dense then wrapped a negative index around or raised IndexError)."""
    with pytest.raises(ortc.InvalidArgument, match=message):
        ortc.Value.from_sparse(sparse)
    big = SparseTensor.coo((2 ** 40, 2 ** 40), np.ones(1, np.float32), [2 ** 62])
    try:  # inside the shape: ortc's bound check must not overflow on 2**80 elements
        ortc.Value.from_sparse(big)
    except ortc.OrtError as refused:  # newer ORT refuses the size itself
        assert "outside" not in str(refused)


@pytest.mark.parametrize("sparse, message", [
    (SparseTensor.csr((1, 3), np.ones(2, np.float32), [1, 1], [0, 2]),
     r"column 1 of row 0 is given more than once"),
    (SparseTensor.coo((4,), np.ones((2, 1), np.float32), [0, 1]), r"values must be 1-D"),
    (SparseTensor.csr((2, 3), np.ones((2, 1), np.float32), [0, 1], [0, 1, 2]),
     r"values must be 1-D"),
    (SparseTensor.coo((2, 2, 2), np.ones(2, np.float32), [[0, 0, 0], [1, 1, 1]]),
     r"indices are \[nnz\] linear indices or"),
    (SparseTensor.coo((3, 3), np.ones(2, np.float32), np.zeros((2, 2, 1), np.int64)),
     r"got shape \(2, 2, 1\)"),
    (SparseTensor.csr((3, 3), np.ones(2, np.float32), [0, 1], [0, 1, 2]),
     r"3 outer \(row start\) indices for 3 rows"),
    (SparseTensor.csr((2, 3, 1), np.ones(2, np.float32), [0, 1], [0, 1, 2]),
     r"dense shape must be 2-D"),
    (SparseTensor.coo((2 ** 40, 2 ** 40), np.ones(1, np.float32), [0]),
     r"more than int64 counts"),
], ids=["csr-duplicate-column", "coo-2d-values", "csr-2d-values", "coo-rank3-coordinates",
        "coo-3d-indices", "csr-rows", "csr-rank3", "element-count-overflow"])
def test_sparse_layouts_ort_takes_silently_or_fails_on_are_refused(sparse: SparseTensor,
                                                                    message: str) -> None:
    """A CSR column given twice in a row was kept once without a word (a COO position given
    twice is refused), a values array of another rank was flattened, and a CSR of another
    rank or row count or a dense shape past int64 failed as FAIL naming ORT's source files:
    each is an InvalidArgument naming the argument."""
    with pytest.raises(ortc.InvalidArgument, match=message):
        ortc.Value.from_sparse(sparse)
    x = np.array([0, 3, 0, 4], np.float32)  # [nnz, 1] indices (np.argwhere's) stay linear
    back = ortc.Value.from_sparse(SparseTensor.coo(x.shape, x[x != 0], np.argwhere(x)))
    np.testing.assert_array_equal(back.to_python().to_dense(), x)


def test_model_with_a_sparse_input() -> None:
    a_type = helper.make_sparse_tensor_type_proto(TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph(
        [helper.make_node("SparseToDenseMatMul", ["a", "b"], ["y"], domain="com.microsoft")],
        "g", [helper.make_value_info("a", a_type),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    s = ortc.Session(model.SerializeToString())
    assert s.inputs[0].kind == ValueKind.SPARSETENSOR
    sp = SparseTensor.coo((2, 3), np.array([1.0, 2.0, 3.0], np.float32),
                          [[0, 0], [0, 2], [1, 1]])  # the kernel wants 2-D indices
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    [y] = s.run(None, {"a": sp, "b": b})
    np.testing.assert_array_equal(y, sp.to_dense() @ b)
