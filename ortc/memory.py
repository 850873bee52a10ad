"""Memory descriptions (``OrtMemoryInfo``) and allocators (``OrtAllocator``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from . import _enums, _loader
from ._cstr import INT32, c_enum, c_integer, read_key_values, utf8
from ._ffi import ffi
from ._handle import Handle
from ._status import call_out, check
from .errors import InvalidArgument
from .threads import shared

if TYPE_CHECKING:
    from ._enums import AllocatorType, MemType

# OrtAllocatorType's OrtDeviceAllocator and OrtArenaAllocator, OrtMemType's OrtMemTypeDefault
# (the AllocatorType and MemType enums are made on first use: a first session needs neither)
_DEVICE_ALLOCATOR, _ARENA_ALLOCATOR, _MEM_TYPE_DEFAULT = 0, 1, 0

__all__ = ["MemoryInfo", "Allocator", "cpu_memory_info", "default_allocator"]


class MemoryInfo(Handle):
    """Where a tensor's memory lives: device name, id, allocator kind and memory type.

    Thread rules: Send and Sync; it is immutable once created (all getters are shared). One
    returned by ORT for another object (a tensor's, an allocator's) is borrowed from it and
    keeps that owner alive.
    """

    c_type = "OrtMemoryInfo"
    send = True
    sync = True
    evidence = "immutable after creation: every getter only reads"

    def __init__(self, name: str = "Cpu", allocator_type: AllocatorType | int = _DEVICE_ALLOCATOR,
                 device_id: int = 0, mem_type: MemType | int = _MEM_TYPE_DEFAULT) -> None:
        self._api = _loader.api()
        raw = call_out(self._api.CreateMemoryInfo, "OrtMemoryInfo*", utf8(name, "memory name"),
                       c_enum(allocator_type, _enums.AllocatorType, "MemoryInfo allocator_type"),
                       c_integer(device_id, "MemoryInfo device_id", *INT32),
                       c_enum(mem_type, _enums.MemType, "MemoryInfo mem_type"),
                       context=f"CreateMemoryInfo({name!r})")
        self._adopt(raw, self._api.ReleaseMemoryInfo)

    @classmethod
    def cpu(cls, allocator_type: AllocatorType | int = _DEVICE_ALLOCATOR,
            mem_type: MemType | int = _MEM_TYPE_DEFAULT) -> MemoryInfo:
        """CPU memory (CreateCpuMemoryInfo)."""
        allocator = c_enum(allocator_type, _enums.AllocatorType, "MemoryInfo allocator_type")
        return cls._cpu(int(allocator), int(c_enum(mem_type, _enums.MemType, "MemoryInfo mem_type")))

    @classmethod
    def _cpu(cls, allocator_type: int, mem_type: int) -> MemoryInfo:
        self = cls.__new__(cls)
        self._api = _loader.api()
        raw = call_out(self._api.CreateCpuMemoryInfo, "OrtMemoryInfo*", allocator_type, mem_type)
        self._adopt(raw, self._api.ReleaseMemoryInfo)
        return self

    @classmethod
    def _borrow(cls, raw: Any, owner: Any) -> MemoryInfo:
        self = cls.__new__(cls)
        self._api = _loader.api()
        self._adopt(raw, None, (owner,))
        return self

    @property
    @shared("MemoryInfoGetName")
    def name(self) -> str:
        out = ffi.new("char**")
        check(self._api.MemoryInfoGetName(self._ptr, ffi.cast("const char**", out)))
        return cast(bytes, ffi.string(out[0])).decode()

    @property
    @shared("MemoryInfoGetId")
    def device_id(self) -> int:
        out = ffi.new("int*")
        check(self._api.MemoryInfoGetId(self._ptr, out))
        return int(out[0])

    @property
    @shared("MemoryInfoGetMemType")
    def mem_type(self) -> MemType:
        out = ffi.new("OrtMemType*")
        check(self._api.MemoryInfoGetMemType(self._ptr, out))
        return _enums.MemType(out[0])

    @property
    @shared("MemoryInfoGetType")
    def allocator_type(self) -> AllocatorType:
        out = ffi.new("OrtAllocatorType*")
        check(self._api.MemoryInfoGetType(self._ptr, out))
        return _enums.AllocatorType(out[0])

    @shared("CompareMemoryInfo", args={"other": "shared"})
    def same_as(self, other: MemoryInfo) -> bool:
        """Whether both describe the same memory (CompareMemoryInfo)."""
        if not isinstance(other, MemoryInfo):
            raise TypeError(f"same_as: expected an ortc.MemoryInfo, not {type(other).__name__}")
        other._check_open()
        out = ffi.new("int*")
        check(self._api.CompareMemoryInfo(self._ptr, other._ptr, out))
        return bool(out[0] == 0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryInfo):
            return NotImplemented
        return self.same_as(other)

    def __hash__(self) -> int:
        # Equal infos must hash alike (== is ORT's comparison, not identity). Only the fields
        # every ORT version compares (the allocator and memory types; which of name, id and
        # device count varies), read once: a dict or set holding it must find it after close().
        cached = self._hash
        if cached is None:
            cached = self._hash = hash((int(self.allocator_type), int(self.mem_type)))
        return cached

    _hash: int | None = None

    def __repr__(self) -> str:
        if self.closed:
            return "<ortc.MemoryInfo closed>"
        return (f"<ortc.MemoryInfo {self.name} id={self.device_id} {self.allocator_type.name} "
                f"{self.mem_type.name}>")


class Allocator(Handle):
    """An ORT allocator: the default CPU one, or one created for a session.

    Thread rules: Send. Sync for the default CPU allocator (a stateless aligned malloc,
    conformance check thread.default-allocator) and for session CPU arenas (the arena has a
    mutex: thread.session-allocator). An allocator for other memory (a device: ``Cuda``,
    ``CudaPinned``, ...) is Send but not Sync, per instance:
    nothing here has tested one from several threads (pykeio/ort reported CUDA allocator races).
    A session's allocator keeps its session alive and must go before it.
    """

    c_type = "OrtAllocator"
    _not_picklable = ("it hands out memory of this process (its session's or device's); "
                      "ask the unpickled session for one")
    send = True
    sync = True
    parents = ("OrtSession",)
    evidence = ("CPU allocators (the static default one, session arenas) serve threads at "
                "once; an allocator for non-CPU memory is not Sync, per instance")

    #: addresses :meth:`alloc` handed out and :meth:`free` has not yet freed (set.add and
    #: set.remove are atomic, so a Sync allocator needs no lock for them)
    _addresses: set[int]

    @classmethod
    def _wrap(cls, raw: Any, release: Any, owners: tuple[Any, ...],
              memory: str = "Cpu") -> Allocator:
        self = cls.__new__(cls)
        self._api = _loader.api()
        self._addresses = set()
        if memory != "Cpu":
            self.sync = False  # type: ignore[misc]  # read by the guard at _adopt
        self._adopt(raw, release, owners)
        return self

    @shared("AllocatorAlloc")
    def alloc(self, nbytes: int) -> int:
        """Allocate ``nbytes``; returns the address (free it with :meth:`free`)."""
        size = c_integer(nbytes, "alloc size", 0, (1 << 64) - 1)
        out = ffi.new("void**")
        check(self._api.AllocatorAlloc(self._ptr, size, out))
        address = int(ffi.cast("uintptr_t", out[0]))
        if address:
            self._addresses.add(address)
        return address

    @shared("AllocatorFree")
    def free(self, address: int) -> None:
        """Free memory returned by this allocator's :meth:`alloc`. Any other address (made
        up, another allocator's, already freed) is refused: ORT would free it blindly
        (SIGABRT or SIGSEGV inside the C library)."""
        if type(address) is not int:
            raise TypeError(f"free: expected an int address from alloc(), got "
                            f"{type(address).__name__}")
        if address == 0:
            return  # freeing NULL does nothing
        try:
            self._addresses.remove(address)  # claimed first: two frees cannot both pass
        except KeyError:
            raise InvalidArgument(f"free: {address:#x} was not allocated by this allocator, or "
                                  f"was already freed") from None
        check(self._api.AllocatorFree(self._ptr, ffi.cast("void*", address)))

    @property
    @shared("AllocatorGetInfo")
    def memory_info(self) -> MemoryInfo:
        out = ffi.new("OrtMemoryInfo**")
        check(self._api.AllocatorGetInfo(self._ptr, ffi.cast("const OrtMemoryInfo**", out)))
        return MemoryInfo._borrow(out[0], self)

    @shared("AllocatorGetStats")
    def stats(self) -> dict[str, str]:
        """The allocator's statistics (arena allocators report bytes in use, allocations, ...)."""

        out = ffi.new("OrtKeyValuePairs**")
        check(self._api.AllocatorGetStats(self._ptr, out))
        return read_key_values(self._api, out[0], release=True)


_cpu_info: MemoryInfo | None = None
_default_allocator: Allocator | None = None


def cpu_memory_info() -> MemoryInfo:
    """The shared CPU memory description used for tensors over numpy memory (process-wide,
    never released: its close() does nothing)."""
    global _cpu_info
    if _cpu_info is None:
        info = MemoryInfo._cpu(_ARENA_ALLOCATOR, _MEM_TYPE_DEFAULT)
        info._process_wide = True
        _cpu_info = info
    return _cpu_info


def default_allocator() -> Allocator:
    """ORT's default CPU allocator (process-wide, never released: its close() does nothing)."""
    global _default_allocator
    if _default_allocator is None:
        raw = call_out(_loader.api().GetAllocatorWithDefaultOptions, "OrtAllocator*")
        alloc = Allocator._wrap(raw, None, ())
        alloc._process_wide = True
        _default_allocator = alloc
    return _default_allocator
