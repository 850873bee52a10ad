"""onnxruntime's ``OrtDevice``: where a value's memory is. ortc.compat places values on the CPU."""

from __future__ import annotations

import operator
from enum import IntEnum
from typing import Any, Callable

from ._errors import COLLECTION_MODULE, InvalidArgument, shallow_copy, unpicklable


class OrtDeviceVendorId(IntEnum):
    """The PCI vendor ids onnxruntime names (a plain IntEnum there too)."""
    NONE = 0
    AMD = 0x1002
    NVIDIA = 0x10DE
    ARM = 0x13B5
    MICROSOFT = 0x1414
    HUAWEI = 0x19E5
    QUALCOMM = 0x5143
    INTEL = 0x8086


OrtDeviceVendorId.__module__ = COLLECTION_MODULE

_DEVICE_TYPES = {"cpu": 0, "gpu": 1, "cuda": 1, "dml": 1, "webgpu": 1, "npu": 3, "cann": 3}
#: the PCI vendor id onnxruntime gives a device of these names (NVIDIA, Microsoft, Huawei)
#: unless one is given; a "dml" device is Microsoft's whatever is given
_VENDORS = {"cuda": int(OrtDeviceVendorId.NVIDIA), "dml": int(OrtDeviceVendorId.MICROSOFT),
            "cann": int(OrtDeviceVendorId.HUAWEI)}


def _number(value: int) -> Callable[[], int]:
    """A function returning ``value`` (the C++ device's static number methods)."""
    def number() -> int:
        return value
    return number


class OrtDevice:
    """A device description (type, id, vendor, memory type); ortc.compat places values on the
    CPU only, so only ``"cpu"`` devices hold data."""

    # as onnxruntime: pickling refused (its OrtDevice is an extension object); copy.copy
    # shares the native objects
    __reduce_ex__ = unpicklable("OrtDevice")
    __copy__ = shallow_copy

    _type: int
    _id: int
    _vendor: int
    _mem: int

    def __init__(self, *args: Any) -> None:
        """One class serves onnxruntime's two: ``OrtDevice(c_device)`` (its Python wrapper of
        the C++ device, which libraries make of what ``_get_c_device()`` gives) takes a
        device's fields; ``OrtDevice(device_type, mem_type, device_id)`` and
        ``OrtDevice(device_type, mem_type, vendor_id, device_id)`` (the C++ device, as
        ``onnxruntime.capi._pybind_state.OrtDevice``: onnx-array-api makes its CPU device so)
        make one, in that order."""
        if len(args) == 1 and isinstance(args[0], OrtDevice):
            other = args[0]
            self._type, self._id, self._vendor, self._mem = \
                other._type, other._id, other._vendor, other._mem
            return
        if len(args) not in (3, 4):
            raise TypeError(f"OrtDevice(): incompatible constructor arguments: an OrtDevice, "
                            f"or (device_type, mem_type[, vendor_id], device_id), not {args!r}")
        device_type = c_int(args[0], _INT8_MIN, _INT8_MAX, "OrtDevice", "device type")
        mem_type = c_int(args[1], _INT8_MIN, _INT8_MAX, "OrtDevice", "memory type")
        vendor_id = c_int(args[2], 0, _UINT32_MAX, "OrtDevice", "vendor id") \
            if len(args) == 4 else 0
        device_id = c_int(args[-1], _INT16_MIN, _INT16_MAX, "OrtDevice", "device id")
        if mem_type not in _MEM_TYPES:  # onnxruntime aborts the process (a C++ check)
            raise RuntimeError(f"OrtDevice(): invalid memory type: {mem_type} (the default, "
                               f"{_MEM_TYPES[0]}, or host accessible, {_MEM_TYPES[1]})")
        self._set(device_type, device_id, vendor_id, mem_type)

    def _set(self, device_type: int, device_id: int, vendor_id: int, mem_type: int) -> None:
        self._type, self._id, self._vendor, self._mem = device_type, device_id, vendor_id, mem_type

    @classmethod
    def _of(cls, device_type: int, device_id: int, vendor_id: int) -> OrtDevice:
        device = cls.__new__(cls)
        device._set(device_type, device_id, vendor_id, 0)
        return device

    # the C++ device's numbers for its device and memory types (static methods there)
    cpu = staticmethod(_number(0))
    cuda = gpu = webgpu = staticmethod(_number(1))
    fpga = staticmethod(_number(2))
    npu = cann = staticmethod(_number(3))
    dml = staticmethod(_number(4))
    default_memory = staticmethod(_number(0))

    @staticmethod
    def make(ort_device_name: str, device_id: int, vendor_id: int = -1) -> OrtDevice:
        name = ort_device_name  # (as onnxruntime: "CUDA" is no device name here)
        # onnxruntime's order: the vendor compared with 0 (a str or None: TypeError), the
        # name looked up (one that is no str: TypeError, as its message is built by +), then
        # its C device made of integers (pybind11's conversion: TypeError)
        negative = vendor_id < 0
        if name not in _DEVICE_TYPES:
            if not isinstance(name, str):
                raise TypeError(f"OrtDevice.make(): the device name must be a str, not "
                                f"{type(name).__name__}")
            raise Exception(f"Unsupported device type: {ort_device_name}")  # as onnxruntime
        vendor = 0 if negative else c_int(int(vendor_id), 0, _UINT32_MAX, "OrtDevice",
                                          "vendor id")
        if name == "dml" or negative:
            vendor = _VENDORS.get(name, 0)
        return OrtDevice._of(_DEVICE_TYPES[name],
                             c_int(device_id, _INT16_MIN, _INT16_MAX, "OrtDevice", "device id"),
                             vendor)

    def _get_c_device(self) -> OrtDevice:
        """Where onnxruntime keeps its C++ device, which its IOBinding passes on: the device
        itself here (its C++ device's method names are below too)."""
        return self

    def device_id(self) -> int:
        return self._id

    def device_type(self) -> int:
        return self._type

    def device_vendor_id(self) -> int:
        return self._vendor

    def device_mem_type(self) -> int:
        return self._mem

    # the names onnxruntime's C++ device (what _get_c_device() gives) has for these
    def vendor_id(self) -> int:
        return self._vendor

    def mem_type(self) -> int:
        return self._mem


def c_int(value: Any, low: int, high: int, where: str, what: str) -> int:
    """``value`` as pybind11 converts an argument to a C integer (onnxruntime's argument
    conversion): an int (a bool, a numpy integer) or another number int() takes but a float
    (numpy's float32 is one it takes, a Python float or numpy's float64 not), within the C
    type's range; anything else is its TypeError."""
    try:
        number = operator.index(value)
    except TypeError:
        number = None
        if not isinstance(value, (float, str, bytes, bytearray)):
            try:
                number = int(value)
            except (TypeError, ValueError):
                pass
    if number is None or not low <= number <= high:
        raise TypeError(f"{where}(): incompatible function arguments: {what} {value!r} is "
                        f"no integer in [{low}, {high}]")
    return number


#: the C types of a device's id (int16) and vendor id (uint32), device and memory types (int8)
_INT16_MIN, _INT16_MAX, _UINT32_MAX = -(1 << 15), (1 << 15) - 1, (1 << 32) - 1
_INT8_MIN, _INT8_MAX = -(1 << 7), (1 << 7) - 1
#: the memory types a device may have: the default and host accessible
_MEM_TYPES = (0, 5)


def cpu_only(device_type: str | OrtDevice, device_id: int, vendor_id: int) -> None:
    """Refuse a device other than the CPU: given by name (the Python API's arguments) or as
    an ``OrtDevice`` (the C++ API's, where the device object is the argument)."""
    if isinstance(device_type, OrtDevice):
        if device_type.device_type() != 0:
            raise InvalidArgument(f"ortc.compat places OrtValues on the CPU only, not on "
                                  f"device type {device_type.device_type()}", 2)
        return
    if device_type == "cpu" and type(device_id) is int and type(vendor_id) is int \
            and _INT16_MIN <= device_id <= _INT16_MAX and vendor_id <= _UINT32_MAX:
        return  # (what make() takes and places on the CPU, with no device object made: a
        # library makes an OrtValue per input per call)
    # the name as given: onnxruntime's OrtValue and IOBinding refuse "CPU" as OrtDevice.make
    # does (they took any case once; 1.32 does not)
    device = OrtDevice.make(device_type, device_id, vendor_id)
    if device.device_type() != 0:
        raise InvalidArgument(
            f"ortc.compat places OrtValues on the CPU only, not on {device_type!r}", 2)
