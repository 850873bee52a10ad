"""DLPack both ways, CPU only, zero copy, dtype kept exactly.

>>> arr = np.from_dlpack(value)                 # an ortc tensor Value as a numpy array  # doctest: +SKIP
>>> v = ortc.Value.from_dlpack(torch_tensor)    # any CPU DLPack producer as a Value      # doctest: +SKIP

Both directions go through numpy's DLPack support (numpy >= 1.22): an ortc Value exports the
capsule of its numpy view (the view keeps the Value alive while the consumer holds the memory),
and a producer's capsule is read with ``np.from_dlpack``, which maps DLPack's dtypes one to one:
a float64 tensor stays float64 (a model input of another type then refuses it; nothing is cast).
Producers on another device are refused; copy them to the CPU first.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .errors import InvalidArgument

__all__ = ["DLPACK_CPU", "is_dlpack_producer", "dlpack_array", "export_capsule"]

#: DLPack's device type for CPU memory (kDLCPU)
DLPACK_CPU = 1


def is_dlpack_producer(obj: Any) -> bool:
    """True for an object that is not an ndarray but exports DLPack (a torch tensor, a JAX or
    CuPy array, another framework's CPU tensor)."""
    return not isinstance(obj, np.ndarray) and hasattr(obj, "__dlpack__") \
        and hasattr(obj, "__dlpack_device__")


def dlpack_array(obj: Any, what: str) -> np.ndarray[Any, Any]:
    """A numpy array over ``obj``'s memory (no copy), of exactly its dtype. Whatever the
    producer does wrong (a device that is not a pair of integers, an exception of its own from
    either method) is an InvalidArgument naming it."""
    try:
        device = tuple(obj.__dlpack_device__())
        device_type, _device_id = (operator.index(d) for d in device)
    except Exception as exc:  # noqa: BLE001 - a producer's own failure
        raise InvalidArgument(f"{what}: __dlpack_device__() of {type(obj).__name__} did not "
                              f"give a (device type, device id) pair of integers: "
                              f"{type(exc).__name__}: {exc}") from None
    if device_type != DLPACK_CPU:
        raise InvalidArgument(f"{what}: the DLPack tensor lives on device {device}, not the CPU "
                              f"(device type {DLPACK_CPU}); copy it to the CPU first")
    try:
        return np.from_dlpack(obj)
    except Exception as exc:  # noqa: BLE001 - numpy's refusal or the producer's own failure
        raise InvalidArgument(f"{what}: cannot read this DLPack tensor without a copy "
                              f"({type(obj).__name__}): {type(exc).__name__}: {exc}") from None


def export_capsule(view: np.ndarray[Any, Any], what: str, stream: Any, max_version: Any,
                   dl_device: Any, copy: Any) -> Any:
    """The DLPack capsule of ``view`` (a numpy view over a Value), passing on the keywords the
    consumer gave (numpy 1.x knows only ``stream``)."""
    if stream is not None:
        raise BufferError(f"{what}: stream must be None for CPU memory, got {stream!r}")
    if dl_device is not None and tuple(dl_device) != (DLPACK_CPU, 0):
        raise BufferError(f"{what}: only the CPU device (1, 0) is available, not {dl_device}")
    extra = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                               ("copy", copy)) if v is not None}
    try:
        return view.__dlpack__(**extra)
    except (BufferError, TypeError) as exc:
        raise BufferError(f"{what}: a {view.dtype} tensor has no DLPack form: {exc}") from None
