"""onnxruntime's ``OrtDevice``: where a value's memory is. ortc.compat places values on the CPU."""

from __future__ import annotations

from ._errors import InvalidArgument

_DEVICE_TYPES = {"cpu": 0, "gpu": 1, "cuda": 1, "dml": 1, "fpga": 2, "npu": 3, "cann": 3}


class OrtDevice:
    """A device description (type, id, vendor, memory type); ortc.compat places values on the
    CPU only, so only ``"cpu"`` devices hold data."""

    def __init__(self, device_type: int, device_id: int = 0, vendor_id: int = 0,
                 mem_type: int = 0) -> None:
        self._type, self._id, self._vendor, self._mem = device_type, device_id, vendor_id, mem_type

    @staticmethod
    def make(ort_device_name: str, device_id: int, vendor_id: int = -1) -> OrtDevice:
        name = ort_device_name.lower()
        if name not in _DEVICE_TYPES:
            raise Exception(f"Unsupported device type: {ort_device_name}")  # as onnxruntime
        return OrtDevice(_DEVICE_TYPES[name], int(device_id), max(int(vendor_id), 0))

    def device_id(self) -> int:
        return self._id

    def device_type(self) -> int:
        return self._type

    def device_vendor_id(self) -> int:
        return self._vendor

    def device_mem_type(self) -> int:
        return self._mem


def cpu_only(device_type: str, device_id: int, vendor_id: int) -> None:
    device = OrtDevice.make(device_type, device_id, vendor_id)
    if device.device_type() != 0:
        raise InvalidArgument(
            f"ortc.compat places OrtValues on the CPU only, not on {device_type!r}", 2)
