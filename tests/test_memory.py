"""MemoryInfo and allocators: attributes, comparisons, alloc/free, stats, lifetimes."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import models
import ortc
from ortc import AllocatorType, MemType


def test_cpu_memory_info_attributes() -> None:
    info = ortc.MemoryInfo.cpu(AllocatorType.ARENA_ALLOCATOR, MemType.DEFAULT)
    assert info.name == "Cpu" and info.device_id == 0
    assert info.allocator_type == AllocatorType.ARENA_ALLOCATOR and info.mem_type == MemType.DEFAULT
    same = ortc.MemoryInfo("Cpu", AllocatorType.ARENA_ALLOCATOR, 0, MemType.DEFAULT)
    assert info == same and info.same_as(same)
    other = ortc.MemoryInfo.cpu(AllocatorType.DEVICE_ALLOCATOR, MemType.DEFAULT)
    assert "Cpu" in repr(other)


def test_equal_memory_infos_hash_alike() -> None:
    """== is ORT's comparison, so equal infos must hash alike: hash was identity, and a set
    of two equal infos held both (a dict lookup by an equal info missed). The hash holds
    after close(), so a container keeps finding the object."""
    a = ortc.MemoryInfo("Cpu", AllocatorType.ARENA_ALLOCATOR, 0, MemType.DEFAULT)
    b = ortc.MemoryInfo.cpu(AllocatorType.ARENA_ALLOCATOR, MemType.DEFAULT)
    c = ortc.MemoryInfo.cpu(AllocatorType.DEVICE_ALLOCATOR, MemType.DEFAULT)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert {a: "arena"}[b] == "arena"
    assert a != c and len({a, b, c}) == 2
    assert ortc.default_allocator().memory_info in {ortc.default_allocator().memory_info}
    held = {a: 1}
    a.close()
    assert held[a] == 1 and a in held
    with pytest.raises(TypeError, match="ortc.MemoryInfo"):  # was AttributeError
        b.same_as("Cpu")  # type: ignore[arg-type]


def test_unknown_memory_name_is_refused() -> None:
    with pytest.raises(ortc.OrtError):
        ortc.MemoryInfo("NoSuchDevice", AllocatorType.DEVICE_ALLOCATOR, 0, MemType.DEFAULT)


def test_default_allocator() -> None:
    alloc = ortc.default_allocator()
    assert alloc is ortc.default_allocator()
    addr = alloc.alloc(1024)
    assert addr != 0 and addr % 16 == 0
    alloc.free(addr)
    assert alloc.memory_info.name == "Cpu"
    with pytest.raises(ValueError):
        alloc.alloc(-1)


def test_session_allocator_keeps_its_session_alive() -> None:
    s = ortc.Session(models.add_model())
    ref = weakref.ref(s)
    alloc = s.allocator()
    del s
    gc.collect()
    assert ref() is not None
    addr = alloc.alloc(4096)
    stats = alloc.stats()
    assert isinstance(stats, dict) and stats  # the CPU arena reports its counters
    assert int(stats.get("NumAllocs", stats.get("num_allocs", "1"))) >= 1
    alloc.free(addr)
    alloc.close()
    gc.collect()
    assert ref() is None


def test_value_memory_is_cpu() -> None:
    v = ortc.Value.from_numpy(np.zeros(3, np.float32))
    assert v.type_info.type_str == "tensor(float)"
    info = v.memory_info
    assert info.name == "Cpu" and info.device_id == 0
    ref = weakref.ref(v)
    del v
    gc.collect()
    assert ref() is not None, "a borrowed MemoryInfo keeps its value alive"
    del info
    gc.collect()
    assert ref() is None


def test_device_allocators_are_not_sync() -> None:
    """An allocator for non-CPU memory is Send but not Sync (no GPU evidence yet): a second
    thread's call while one is in flight is refused. A CPU build cannot make a device allocator,
    so the session's CPU arena is wrapped a second time (borrowed) under a device label."""
    import threading

    from ortc.memory import Allocator
    import sys

    from ortc._guard import Entries

    s = ortc.Session(models.add_model())
    cpu = s.allocator()
    assert cpu._guard.sync and cpu._guard.send
    dev = Allocator._wrap(cpu._ptr, None, (cpu,), "CudaPinned")
    assert not dev._guard.sync and dev._guard.send
    errors: list[BaseException] = []

    def other_thread() -> None:
        try:
            dev.alloc(16)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    held = Entries(sys._getframe(), "test")
    held.enter(dev)  # a call in flight on this thread
    t = threading.Thread(target=other_thread)
    t.start()
    t.join(30)
    held.leave()
    assert len(errors) == 1 and isinstance(errors[0], ortc.ConcurrentUseError), errors
    address = dev.alloc(16)  # alone, from any thread, it works
    dev.free(address)
    dev.close()
    # the same overlap on the CPU arena is allowed
    done: list[int] = []
    held = Entries(sys._getframe(), "test")
    held.enter(cpu)
    t = threading.Thread(target=lambda: done.append(cpu.alloc(16)))
    t.start()
    t.join(30)
    held.leave()
    assert len(done) == 1 and done[0]
    cpu.free(done[0])
    cpu.close()
