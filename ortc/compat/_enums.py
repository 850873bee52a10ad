"""onnxruntime's enums, with its member names (``ORT_SEQUENTIAL``, ``ORT_ENABLE_ALL``, ...)
and the C API's values."""

from __future__ import annotations

from enum import IntEnum

from ._errors import PYBIND_MODULE


class _OrtEnum(IntEnum):
    def __str__(self) -> str:  # onnxruntime prints "ExecutionMode.ORT_SEQUENTIAL"
        return f"{type(self).__name__}.{self.name}"


class ExecutionMode(_OrtEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(_OrtEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


class GraphOptimizationLevel(_OrtEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class OrtAllocatorType(_OrtEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


class OrtMemType(_OrtEnum):
    CPU_INPUT = -2
    CPU_OUTPUT = -1
    CPU = -1
    DEFAULT = 0


class OrtSparseFormat(_OrtEnum):
    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


class ArenaExtendStrategy(_OrtEnum):
    kNextPowerOfTwo = 0
    kSameAsRequested = 1


class OrtDeviceMemoryType(_OrtEnum):
    DEFAULT = 0
    HOST_ACCESSIBLE = 5


class OrtMemoryInfoDeviceType(_OrtEnum):
    CPU = 0
    GPU = 1
    FPGA = 2
    NPU = 3


ALL = (ExecutionMode, ExecutionOrder, GraphOptimizationLevel, OrtAllocatorType, OrtMemType,
       OrtSparseFormat, ArenaExtendStrategy, OrtDeviceMemoryType, OrtMemoryInfoDeviceType)
for _cls in ALL:
    _cls.__module__ = PYBIND_MODULE
