"""The run pipeline (ortc/_run.py): one straight line, inputs -> one Run -> outputs, for any
model and any feeds. What the tests here hold it to:

* a model runs once per call (tests/test_run_calls.py counts the Runs over random graphs), and
  a model whose output declarations are wrong runs as onnxruntime runs it;
* every result is an array of its own: small outputs copied out of ORT's memory, larger ones
  viewed, neither ever overwritten by a later run nor aliasing a feed;
* feeds of every kind (C-contiguous arrays through the value cache, strided, Fortran-ordered,
  read-only, Values, Python lists) give the same results.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import models
import ortc
from ortc import _run


def _ab(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"a": rng.standard_normal(n).astype(np.float32),
            "b": rng.standard_normal(n).astype(np.float32)}


def _big(seed: int, n: int = 64 * 1024) -> dict[str, np.ndarray]:
    return _ab(n, seed)  # 256 KiB a feed: outputs above the copy-out limit


def _misdeclared_model() -> bytes:
    """``y = Reshape(x, shape)`` declared rank 2 (``["a", "b"]``), while the caller's ``shape``
    makes it rank 3: ORT runs it (it checks only buffers a caller hands it against the
    declaration), as real models with a wrong declared output shape run (one of the apps)."""
    from onnx import TensorProto, helper

    return models._bytes(models.make_model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])], []))


def _one_element_model(y_shape: Any, op: str) -> bytes:
    """``y`` of one element whose shape is not the declared ``y_shape``: ``Unsqueeze`` of a
    scalar (a [1]), ``Squeeze`` of x declared ``["n"]`` (a scalar when n is 1), or
    ``SequenceAt(i)`` of ``[x, Unsqueeze(x)]`` with x a scalar (a scalar or a [1], by the
    value of i; x declared without a shape, else ORT reports the first item's for y)."""
    from onnx import TensorProto, helper, numpy_helper

    x_shape: Any = {"Squeeze": ["n"], "Unsqueeze": []}.get(op)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    axes = [numpy_helper.from_array(np.array([0], np.int64), "axes")]
    if op == "Unsqueeze":
        nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["y"])]
    elif op == "Squeeze":
        nodes = [helper.make_node("Squeeze", ["x"], ["y"])]
        axes = []
    else:
        inputs.append(helper.make_tensor_value_info("i", TensorProto.INT64, []))
        nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["x1"]),
                 helper.make_node("SequenceConstruct", ["x", "x1"], ["seq"]),
                 helper.make_node("SequenceAt", ["seq", "i"], ["y"])]
    return models._bytes(models.make_model(
        nodes, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], axes,
        check=False))


def test_input_changes_after_the_call_do_not_leak_into_outputs() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    a = np.ones(3, np.float32)
    b = np.ones(3, np.float32)
    s.run(None, {"a": a, "b": b})
    [c] = s.run(None, {"a": a, "b": b})
    a[:] = 100
    assert c.tolist() == [2.0, 2.0, 2.0]


def test_other_feed_kinds_are_converted() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    s.run(None, _ab(3, 0))
    s.run(None, _ab(3, 1))
    # a Value, a list, a float64 array that is refused, a non-contiguous view
    v = ortc.Value.from_numpy(np.ones(3, np.float32))
    assert s.run(None, {"a": v, "b": np.ones(3, np.float32)})[0].tolist() == [2, 2, 2]
    assert s.run(None, {"a": [1.0, 2.0, 3.0], "b": np.ones(3, np.float32)})[0].tolist() == \
        [2, 3, 4]
    strided = np.arange(6, dtype=np.float32)[::2]
    assert s.run(None, {"a": strided, "b": np.zeros(3, np.float32)})[0].tolist() == [0, 2, 4]
    try:
        s.run(None, {"a": np.ones(3), "b": np.ones(3, np.float32)})
    except ortc.InvalidArgument:
        pass
    else:
        raise AssertionError("a float64 feed for a float input must be refused")


def test_fortran_ordered_feeds_are_read_in_c_order() -> None:
    s = ortc.Session(models.add_model(np.float32, [2, 3]))
    a = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(3):
        [c] = s.run(None, {"a": a, "b": a})
        np.testing.assert_array_equal(c, a * 2)


def test_a_refused_first_run_prints_nothing_when_logging_is_not_configured() -> None:
    """What a user sees: ORT's binding prints nothing for such a model, nor does ortc."""
    from conftest import run_python

    proc = run_python(
        "import numpy as np, ortc, models\n"
        "case = next(c for c in models.zoo_cases() if c.name == 'SVMRegressor')\n"
        "s = ortc.Session(case.model)\n"
        "print(s.run(None, case.feeds)[0].shape, s.run(None, case.feeds)[0].shape)\n")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["(4,", "1)", "(4,", "1)"], proc.stdout
    assert proc.stderr == "", proc.stderr[-2000:]


def test_feeds_the_value_cache_cannot_take_are_converted() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    feeds = _big(0)
    s.run(None, feeds)
    n = feeds["a"].size
    strided = np.arange(2 * n, dtype=np.float32)[::2]  # not contiguous: copied
    other = _big(1, n // 2)                           # another shape
    read_only = _big(2)
    for arr in read_only.values():
        arr.flags.writeable = False                   # ORT only reads inputs: taken as is
    for f in ({"a": strided, "b": feeds["b"]}, other, read_only, feeds,
              {"a": feeds["a"].astype(np.float64), "b": feeds["b"]}):
        try:
            [c] = s.run(None, f)
        except ortc.InvalidArgument:
            assert f["a"].dtype == np.float64
            continue
        np.testing.assert_array_equal(c, f["a"] + f["b"])


def test_the_value_cache_finds_a_buffer_by_its_address() -> None:
    """The value cache looks a key up with ``ffi.from_buffer``'s cdata and stores it with a
    plain pointer (RunEngine.cached_value): cffi must compare and hash both by address, and the
    stored key must not keep the array alive."""
    import sys

    from ortc._ffi import ffi

    arr = np.ones(8, np.float32)
    buf = ffi.from_buffer(arr)
    stored = ffi.cast("char*", buf)
    assert stored == buf and hash(stored) == hash(buf)
    assert {(stored, (8,), 1): "owner"}.get((ffi.from_buffer(arr), (8,), 1)) == "owner"
    assert ffi.from_buffer(arr[1:]) != stored
    refs = sys.getrefcount(arr)
    del buf
    assert sys.getrefcount(arr) == refs - 1  # only the buffer cdata held the array


def test_a_value_ort_reshaped_is_never_fed_at_its_old_address_and_shape() -> None:
    """A scalar declared and a [1] made: ORT gave the buffer's value the shape [1] in place,
    and the value cache kept it under the buffer's address and the shape ()... so a scalar fed
    at that address later (the result, read as a scalar) was read as a [1] (found by
    tests/test_differential.py: a Unsqueeze of such a feed made a [1, 1])."""
    s = ortc.Session(_one_element_model([], "Unsqueeze"))
    [y] = s.run(None, {"x": np.array(3, np.float32)})
    assert y.shape == (1,) and y.tolist() == [3.0]
    for k in range(6):
        fed = y.reshape(())  # the result's own memory, as a scalar
        [y] = s.run(None, {"x": fed})
        assert y.shape == (1,) and y.tolist() == [3.0], k


def test_repeated_runs_return_arrays_of_their_own() -> None:
    for n in (4, _run.COPY_OUT_MAX // 4 + 1):  # copied out, and viewed
        s = ortc.Session(models.add_model(np.float32, ["n"]))
        results = []
        for seed in range(5):
            feeds = _ab(n, seed)
            [c] = s.run(None, feeds)
            np.testing.assert_array_equal(c, feeds["a"] + feeds["b"])
            assert c.flags.writeable and c.flags.c_contiguous
            results.append(c)
        for seed, c in enumerate(results):  # no later run overwrote an earlier result
            feeds = _ab(n, seed)
            np.testing.assert_array_equal(c, feeds["a"] + feeds["b"])
        assert len({id(c) for c in results}) == 5


def test_an_output_whose_declared_shape_is_wrong_runs_from_the_first_call() -> None:
    s = ortc.Session(_misdeclared_model())
    shape = np.array([2, 3, 1], np.int64)
    for k in range(4):
        x = np.arange(6, dtype=np.float32) + k
        [y] = s.run(None, {"x": x, "shape": shape})
        np.testing.assert_array_equal(y, x.reshape(2, 3, 1))


def test_each_thread_gets_its_own_results() -> None:
    s = ortc.Session(models.mlp_model(2, 8, "batch"), intra_op_num_threads=1)
    x = {i: np.random.default_rng(i).standard_normal((2, 8)).astype(np.float32)
         for i in range(4)}
    expected = {i: ortc.Session(models.mlp_model(2, 8, "batch")).run(None, {"x": x[i]})[0]
                for i in range(4)}
    errors: list[str] = []

    def work(i: int) -> None:
        for _ in range(200):
            [y] = s.run(None, {"x": x[i]})
            if not np.array_equal(y, expected[i]):
                errors.append(f"thread {i}: wrong result")
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_, np.float16,
                                   np.uint8, np.int32])
def test_copied_and_viewed_outputs_agree(dtype: Any) -> None:
    """An Identity of every plain dtype, at a size copied out and one viewed: the same bytes,
    shape and dtype as the feed, in an array that is not the feed's memory."""
    for n in (3, _run.COPY_OUT_MAX + 1):
        s = ortc.Session(models.identity_model(dtype, ["n"]))
        x = (np.arange(n) % 7).astype(dtype)
        [y] = s.run(None, {s.inputs[0].name: x})
        assert y.dtype == x.dtype and y.shape == x.shape
        assert y.tobytes() == x.tobytes()
        assert not np.shares_memory(x, y)
