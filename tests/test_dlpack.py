"""DLPack both ways (ortc/dlpack.py): zero copy on the CPU, dtypes kept exactly, feeds and
bound inputs/outputs from any producer. numpy is the producer and consumer here; torch's CPU
build is checked too where it is installed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import models
import ortc

F32 = np.float32


class Producer:
    """A DLPack producer that is not an ndarray and has no __array__: only the protocol."""

    def __init__(self, array: np.ndarray, device: tuple[int, int] = (1, 0)) -> None:
        self._array = array
        self._device = device

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.uint64,
                                   np.int32, np.bool_])
def test_numpy_reads_a_value_without_a_copy(dtype: Any) -> None:
    v = ortc.Value.from_numpy(np.arange(6).reshape(2, 3).astype(dtype))
    arr = np.from_dlpack(v)
    assert arr.dtype == dtype and arr.shape == (2, 3)
    assert np.shares_memory(arr, v.numpy())
    assert v.__dlpack_device__() == (1, 0)
    v.close()  # the consumer's array keeps the value's memory alive
    assert arr.tolist() == np.arange(6).reshape(2, 3).astype(dtype).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.bool_])
def test_value_from_dlpack_is_zero_copy_and_keeps_the_dtype(dtype: Any) -> None:
    src = np.arange(5).astype(dtype)
    v = ortc.Value.from_dlpack(Producer(src))
    assert v.dtype == dtype and np.shares_memory(v.numpy(), src)
    v2 = ortc.Value.from_dlpack(src)  # numpy arrays are producers too
    assert v2.dtype == dtype and np.shares_memory(v2.numpy(), src)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, "bfloat16"])
def test_value_from_dlpack_of_a_value_is_a_new_value_over_the_same_memory(dtype: Any) -> None:
    """It returned the Value itself: closing what the caller took for a new Value closed the
    original."""
    import gc

    import ml_dtypes

    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    data = np.arange(6).reshape(2, 3).astype(dt)
    source = ortc.Value.from_numpy(data)
    new = ortc.Value.from_dlpack(source)
    assert new is not source and new.element_type == source.element_type
    assert new.shape == (2, 3) and np.shares_memory(new.numpy(), source.numpy())
    new.close()
    assert not source.closed and np.array_equal(source.numpy(), data)
    again = ortc.Value.from_dlpack(source)
    source.close()  # the new Value keeps the memory it reads alive
    del source
    gc.collect()
    assert np.array_equal(again.numpy(), data.copy())
    with pytest.raises(ortc.InvalidArgument, match="is a sequence, not a tensor"):
        ortc.Value.from_dlpack(ortc.Value.from_sequence([np.ones(2, F32)]))
    closed = ortc.Value.from_numpy(np.ones(2, F32))
    closed.close()
    with pytest.raises(ortc.ClosedError):
        ortc.Value.from_dlpack(closed)


def test_a_producer_is_a_feed_without_a_copy_or_a_cast() -> None:
    with ortc.Session(models.add_model(F32, ["n"])) as s:
        a = np.arange(4, dtype=F32)
        [y] = s.run(None, {"a": Producer(a), "b": Producer(a)})
        assert y.tolist() == [0, 2, 4, 6]
        with pytest.raises(ortc.InvalidArgument, match="float64"):  # refused, never cast
            s.run(None, {"a": Producer(np.arange(4.0)), "b": a})


def test_a_producer_binds_as_input_and_output_in_place() -> None:
    with ortc.Session(models.add_model(F32, [3])) as s:
        b = s.io_binding()
        a = np.ones(3, F32)
        out = np.zeros(3, F32)
        b.bind_input("a", Producer(a))
        b.bind_input("b", Producer(a))
        b.bind_output("c", Producer(out))
        s.run_with_binding(b)
        assert out.tolist() == [2, 2, 2]  # ORT wrote into the producer's own memory
        a[:] = 5
        s.run_with_binding(b)
        assert out.tolist() == [10, 10, 10]  # and read the producer's memory in place
        with pytest.raises(ortc.InvalidArgument, match="float64"):
            b.bind_input("a", Producer(np.ones(3)))
        with pytest.raises(ortc.InvalidArgument, match="float64"):
            b.bind_output("c", Producer(np.ones(3)))
        b.close()


def test_other_devices_and_types_without_a_dlpack_form_are_refused() -> None:
    with pytest.raises(ortc.InvalidArgument, match=r"device \(2, 0\).*CPU"):
        ortc.Value.from_dlpack(Producer(np.ones(2, F32), device=(2, 0)))
    strings = ortc.Value.from_numpy(np.array(["a", "b"], object))
    with pytest.raises(BufferError, match="no DLPack form"):
        np.from_dlpack(strings)
    v = ortc.Value.from_numpy(np.ones(2, F32))
    with pytest.raises(BufferError, match="stream"):
        v.__dlpack__(stream=1)
    v.close()
    with pytest.raises(ortc.ClosedError):
        np.from_dlpack(v)


class Misbehaving(Producer):
    """A producer whose __dlpack_device__ returns ``device`` (or raises it, an exception) and
    whose __dlpack__ raises ``failure`` when one is given."""

    def __init__(self, device: Any, failure: BaseException | None = None) -> None:
        super().__init__(np.ones(2, F32))
        self._bad_device = device
        self._failure = failure

    def __dlpack__(self, **kwargs: Any) -> Any:
        if self._failure is not None:
            raise self._failure
        return super().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        if isinstance(self._bad_device, BaseException):
            raise self._bad_device
        return self._bad_device


@pytest.mark.parametrize("producer, named", [
    (Misbehaving("cpu"), r"__dlpack_device__\(\) of Misbehaving did not give a \(device type, "
                         r"device id\) pair of integers: TypeError"),
    (Misbehaving(None), "pair of integers: TypeError"),
    (Misbehaving(()), "pair of integers: ValueError"),
    (Misbehaving((1.0, 0)), "pair of integers: TypeError"),  # was read as the CPU
    (Misbehaving(ZeroDivisionError("no device")), "ZeroDivisionError: no device"),
    (Misbehaving((1, 0), KeyError("k")), r"\(Misbehaving\): KeyError: 'k'"),
    (Misbehaving((1, 0), AttributeError("gone")), "AttributeError: gone"),
    (Misbehaving((2, 0)), r"device \(2, 0\), not the CPU"),
], ids=["device-str", "device-None", "device-empty", "device-float", "device-raises",
        "dlpack-KeyError", "dlpack-AttributeError", "device-cuda"])
def test_a_misbehaving_producer_is_an_invalid_argument_wherever_it_is_given(
        producer: Any, named: str) -> None:
    """What a producer does wrong was a bare ValueError/KeyError/AttributeError from inside
    ortc (a device of ("cpu") failed on int('c')); Value.from_numpy skipped the device check."""
    with ortc.Session(models.identity_model(models.T.FLOAT, None)) as s:
        b = s.io_binding()
        calls = {"run": lambda: s.run(None, {"x": producer}),
                 "run_with_values": lambda: s.run_with_values(None, {"x": producer}),
                 "from_numpy": lambda: ortc.Value.from_numpy(producer),
                 "from_dlpack": lambda: ortc.Value.from_dlpack(producer),
                 "bind_input": lambda: b.bind_input("x", producer),
                 "bind_output": lambda: b.bind_output("y", producer)}
        for call, fn in calls.items():
            with pytest.raises(ortc.InvalidArgument, match=named):
                fn()
            print(call, "refused")
        b.close()


def test_torch_cpu_tensors_both_ways() -> None:
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    v = ortc.Value.from_dlpack(t)
    assert v.dtype == np.float64 and v.numpy().tolist() == t.tolist()
    t[0, 0] = 42
    assert v.numpy()[0, 0] == 42  # the same memory
    back = torch.from_dlpack(v)
    assert back.dtype == torch.float64 and back.data_ptr() == t.data_ptr()
    with ortc.Session(models.add_model(F32, ["n"])) as s:
        x = torch.ones(3, dtype=torch.float32)
        assert s.run(None, {"a": x, "b": x})[0].tolist() == [2, 2, 2]
        with pytest.raises(ortc.InvalidArgument, match="float64"):
            s.run(None, {"a": torch.ones(3, dtype=torch.float64), "b": x})
    with ortc.Session(models.add_model(F32, [3])) as s:
        b = s.io_binding()
        x = torch.ones(3, dtype=torch.float32)
        out = torch.zeros(3, dtype=torch.float32)
        b.bind_input("a", x)
        b.bind_input("b", x)
        b.bind_output("c", out)
        s.run_with_binding(b)
        assert out.tolist() == [2, 2, 2]  # written into the torch tensor's own memory
        b.close()
