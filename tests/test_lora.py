"""LoRA adapters: loaded from a file or bytes, made active through RunOptions, kept alive."""

from __future__ import annotations

import numpy as np
import pytest

import models
import ortc


@pytest.fixture(scope="module")
def adapter_bytes() -> bytes:
    """An adapter replacing the overridable initializer ``bias``."""
    return models.lora_adapter_bytes({"bias": np.array([100, 200, 300], np.float32)})


def test_active_adapter_feeds_its_tensors(adapter_bytes: bytes, tmp_path) -> None:
    s = ortc.Session(models.overridable_initializer_model())
    x = np.zeros(3, np.float32)
    path = tmp_path / "a.onnx_adapter"
    path.write_bytes(adapter_bytes)
    for adapter in (ortc.LoraAdapter(str(path)), ortc.LoraAdapter(adapter_bytes)):
        ro = ortc.RunOptions()
        ro.add_active_lora_adapter(adapter)
        np.testing.assert_array_equal(s.run(None, {"x": x}, ro)[0], [100, 200, 300])
        np.testing.assert_array_equal(s.run(None, {"x": x})[0], [1, 2, 3])  # not active
        ro.close()
        adapter.close()


def test_run_options_keep_their_adapter_alive(adapter_bytes: bytes) -> None:
    def live() -> int:
        return ortc.live_handles().get("LoraAdapter", 0)

    before = live()
    s = ortc.Session(models.overridable_initializer_model())
    adapter = ortc.LoraAdapter(adapter_bytes)
    ro = ortc.RunOptions()
    ro.add_active_lora_adapter(adapter)
    adapter.close()  # ORT still refers to it through the options: the release waits
    assert adapter.closed and live() == before + 1
    junk = [np.full(1 << 16, -1.0, np.float32) for _ in range(16)]  # reuse freed memory, if any
    np.testing.assert_array_equal(s.run(None, {"x": np.zeros(3, np.float32)}, ro)[0],
                                  [100, 200, 300])
    del junk
    ro.close()
    assert live() == before


def test_bad_adapters(tmp_path) -> None:
    with pytest.raises(ortc.OrtError):
        ortc.LoraAdapter(b"not an adapter")
    with pytest.raises(ortc.OrtError):
        ortc.LoraAdapter(str(tmp_path / "missing.onnx_adapter"))
    with pytest.raises(ortc.InvalidArgument):
        ortc.LoraAdapter(b"")
    with pytest.raises(TypeError):
        ortc.LoraAdapter(42)  # type: ignore[arg-type]
    ro = ortc.RunOptions()
    with pytest.raises(TypeError):
        ro.add_active_lora_adapter("adapter.onnx_adapter")
    closed = ortc.LoraAdapter.__new__(ortc.LoraAdapter)  # never opened: closed
    with pytest.raises(ortc.ClosedError):
        ro.add_active_lora_adapter(closed)


def test_adapter_shared_by_threads(adapter_bytes: bytes) -> None:
    """One adapter active in several RunOptions at once, each used by its own thread's runs
    on one session: every run sees the adapter's tensors (the adapter's Sync)."""
    import threading

    s = ortc.Session(models.overridable_initializer_model(), intra_op_num_threads=1)
    adapter = ortc.LoraAdapter(adapter_bytes)
    x = np.arange(3, dtype=np.float32)
    results: list[list[float]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def worker(active: bool) -> None:
        try:
            ro = ortc.RunOptions()
            if active:
                ro.add_active_lora_adapter(adapter)
            start.wait()
            for _ in range(50):
                results.append((active, s.run(None, {"x": x}, ro)[0].tolist()))
            ro.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i % 2 == 0,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 200
    for active, got in results:
        assert got == ([100.0, 201.0, 302.0] if active else [1.0, 3.0, 5.0]), (active, got)
    adapter.close()
    s.close()
