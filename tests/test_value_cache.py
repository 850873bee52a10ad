"""The per-thread cache of OrtValues over caller memory (``ortc._run._value_caches``, filled by
RunEngine.cached_value), which every session's runs and bindings share: an OrtValue is reused
only for the same address, shape and type, results are never shared or stale, and the cache
stays bounded."""

from __future__ import annotations

import threading

import numpy as np

import models
import ortc
from ortc._run import _VALUE_CACHE_MAX, _value_caches

N = 8192  # 32 KB float32 tensors


def _creates(s: ortc.Session, monkeypatch) -> list[int]:
    """Count CreateTensorWithDataAsOrtValue calls made by the session's engine."""
    calls: list[int] = []
    api = s._engine.api
    real = api.CreateTensorWithDataAsOrtValue

    class Counting:
        def __getattr__(self, name: str):
            return getattr(api, name)

        def CreateTensorWithDataAsOrtValue(self, *args):  # noqa: N802 - ORT's name
            calls.append(1)
            return real(*args)

    monkeypatch.setattr(s._engine, "api", Counting())
    return calls


def test_fresh_arrays_at_a_reused_address_reuse_the_value_and_results_stay_right(monkeypatch) -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    calls = _creates(s, monkeypatch)
    rng = np.random.default_rng(0)
    # the inputs: new array objects every call over two fixed blocks of memory, as an
    # allocator that hands a freed block out again makes them (not left to numpy's allocator
    # here, so the count below does not depend on it)
    memory_a, memory_b = bytearray(4 * N), bytearray(4 * N)
    results = []
    for k in range(40):
        a = np.frombuffer(memory_a, np.float32)
        a[:] = rng.standard_normal(N)
        b = np.frombuffer(memory_b, np.float32)
        b[:] = k
        [c] = s.run(None, {"a": a, "b": b})
        np.testing.assert_array_equal(c, a + b)
        results.append((a.copy(), k, c))
        del a, b
    # every result is its own array, never overwritten by a later run through a reused value
    for a, k, c in results:
        np.testing.assert_array_equal(c, a + np.float32(k))
    assert len({id(c) for _, _, c in results}) == 40
    # 40 runs of 3 tensors would be 120 creates: the inputs take 2 in all, and the outputs
    # (new numpy arrays, while the caller keeps every earlier one) at most 40
    assert len(calls) <= 42, len(calls)


def test_a_reused_address_with_another_shape_or_type_gets_its_own_value() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    buf = np.arange(N, dtype=np.float32)
    for n in (N, N // 2, 7, N):  # views of one buffer: the same address, other shapes
        a = buf[:n]
        np.testing.assert_array_equal(s.run(None, {"a": a, "b": a})[0], 2 * a)
    t = ortc.Session(models.add_model(np.int32, ["n"]))
    ints = buf.view(np.int32)  # the same memory as int32
    np.testing.assert_array_equal(t.run(None, {"a": ints, "b": ints})[0], 2 * ints)
    np.testing.assert_array_equal(s.run(None, {"a": buf, "b": buf})[0], 2 * buf)


def test_the_cache_is_bounded_and_per_thread() -> None:
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    keep = []
    for n in range(N, N + 3 * _VALUE_CACHE_MAX):  # new shapes and live arrays: all misses
        a = np.ones(n, np.float32)
        keep.append(a)
        assert s.run(None, {"a": a, "b": a})[0][0] == 2.0
    mine = _value_caches[threading.get_ident()]
    assert 0 < len(mine) <= _VALUE_CACHE_MAX
    seen: list[int] = []

    def other() -> None:
        a = np.ones(N, np.float32)
        assert s.run(None, {"a": a, "b": a})[0][0] == 2.0
        seen.append(threading.get_ident())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen and seen[0] in _value_caches
    assert _value_caches[seen[0]] is not mine


def test_outputs_fed_back_as_inputs() -> None:
    """A recurrent use: each output array is the next run's input (its address was cached as
    an output value, then is looked up as an input)."""
    s = ortc.Session(models.add_model(np.float32, ["n"]))
    one = np.ones(N, np.float32)
    state = np.zeros(N, np.float32)
    for k in range(1, 30):
        [state] = s.run(None, {"a": state, "b": one})
        assert state[0] == k and state[-1] == k


def _cached_shapes_hold() -> list[str]:
    """The cached values whose shape is not their key's (ORT reshaped one in place)."""
    from ortc._numpy_bridge import tensor_shape_and_type

    api = ortc._loader.api()
    return [f"{shape} made {tensor_shape_and_type(api, owner)[1]}"
            for cache in list(_value_caches.values())
            for (_address, shape, _et), owner in list(cache.items())
            if tensor_shape_and_type(api, owner)[1] != shape]


def test_one_element_outputs_rebound_every_call_reuse_their_values(monkeypatch) -> None:
    """One-element outputs are kept apart from the value cache (ORT may give such a value
    another rank), not made anew at every bind: a library rebinding a pool of output buffers
    every call (a VAD's [1, 1] probability) makes one value per buffer, and the results stay
    right."""
    s = ortc.Session(models.add_model(np.float32, [1]))
    calls = _creates(s, monkeypatch)
    b = s.io_binding()
    ins = [np.full(1, k, np.float32) for k in range(4)]
    outs = [np.zeros(1, np.float32) for _ in range(4)]
    for k in range(40):
        b.bind_input("a", ins[k % 4])
        b.bind_input("b", ins[k % 4])
        b.bind_output("c", outs[k % 4])
        s.run_with_binding(b)
        assert outs[k % 4].tolist() == [2.0 * (k % 4)]
    assert len(calls) <= 8, len(calls)  # four inputs, four outputs
    assert not _cached_shapes_hold()


def test_a_one_element_output_ort_reshaped_is_never_fed_at_its_address() -> None:
    """ORT writes a one-element result of another rank into a one-element array bound as an
    output and gives the bound value that rank in place. That value came from the value cache
    (every session's): a later feed of the array at its own shape, in the same session or
    another, was given the reshaped value (a [1] bound for a Squeeze's scalar, fed as a [1],
    was refused as rank 0; a scalar bound for an Unsqueeze's [1], fed as a scalar, was read
    as a [1]). onnxruntime reads the array at its own shape."""
    import onnxruntime as ort
    import ortc.compat as compat
    from test_run_pipeline import _one_element_model

    squeeze = _one_element_model(["n"], "Squeeze")  # a [1] in, a scalar out
    unsqueeze = _one_element_model([], "Unsqueeze")  # a scalar in, a [1] out
    identity = models.identity_model(np.float32, None)
    for model, bound_shape in ((squeeze, (1,)), (unsqueeze, ())):
        fed = np.full(bound_shape, 3.0, np.float32)
        for how in ("array", "address"):
            s = ortc.Session(model)
            out = np.zeros(bound_shape, np.float32)
            if how == "array":
                b = s.io_binding()
                b.bind_input("x", fed)
                b.bind_output("y", out)
                s.run_with_binding(b)
            else:  # onnxruntime's raw pointers, through ortc.compat
                cs = compat.InferenceSession(model)
                cb = cs.io_binding()
                cb.bind_cpu_input("x", fed)
                cb.bind_output("y", "cpu", 0, np.float32, list(bound_shape), out.ctypes.data)
                cs.run_with_iobinding(cb)
            assert out.tolist() == fed.tolist()
            assert not _cached_shapes_hold()
            for other in (model, identity):  # the array fed at its own shape, anywhere
                want = ort.InferenceSession(other).run(None, {"x": out})[0]
                got = ortc.Session(other).run(None, {"x": out})[0]
                assert got.shape == want.shape and got.tolist() == want.tolist(), (how, other)
            assert s.run(None, {"x": out})[0].shape == \
                ort.InferenceSession(model).run(None, {"x": out})[0].shape
