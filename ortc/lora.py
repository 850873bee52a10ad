"""LoraAdapter: named tensors (LoRA weights, or any set of fixed inputs) that runs can use.

>>> adapter = ortc.LoraAdapter("style.onnx_adapter")          # doctest: +SKIP
>>> ro = ortc.RunOptions(); ro.add_active_lora_adapter(adapter)  # doctest: +SKIP
>>> sess.run(None, feeds, ro)   # the adapter's tensors feed the inputs of their names  # doctest: +SKIP

The file format is ONNX Runtime's own (``.onnx_adapter``); onnxruntime's ``AdapterFormat``
writes it.
"""

from __future__ import annotations

import os
from typing import Any, Union

from . import _loader
from ._ffi import ffi
from ._handle import Handle
from ._status import call_out
from .errors import InvalidArgument

__all__ = ["LoraAdapter"]

AdapterSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


class LoraAdapter(Handle):
    """A LoRA adapter loaded from a file path or from the file's bytes (copied by ORT).

    Its tensors take the place of the model inputs (or overridable initializers) of the same
    names in every run whose RunOptions has the adapter active
    (:meth:`RunOptions.add_active_lora_adapter`); RunWithBinding ignores active adapters.

    Thread rules: Send and Sync: ORT only reads an adapter during runs, so many runs and
    RunOptions may share one. RunOptions that activated it keep it alive; closing it meanwhile
    defers its release until they are gone.
    """

    c_type = "OrtLoraAdapter"
    send = True
    sync = True
    evidence = ("runs only read an adapter; RunOptions keep it by pointer, so it must "
                "outlive every RunOptions it is active in")

    def __init__(self, source: AdapterSource) -> None:
        self._api = api = _loader.api()
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            if "\0" in str(path):
                raise InvalidArgument(f"adapter path {path!r} contains a NUL byte")
            raw = call_out(api.CreateLoraAdapter, "OrtLoraAdapter*", os.fsencode(path),
                           ffi.NULL, context=f"loading LoRA adapter {path!r}")
        elif isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            if not data:
                raise InvalidArgument("the LoRA adapter is empty (0 bytes)")
            raw = call_out(api.CreateLoraAdapterFromArray, "OrtLoraAdapter*",
                           ffi.from_buffer(data), len(data), ffi.NULL,
                           context="loading LoRA adapter from bytes")
        else:
            raise TypeError(f"a LoRA adapter comes from a path or bytes, not "
                            f"{type(source).__name__}")
        self._adopt(raw, api.ReleaseLoraAdapter)

    def __repr__(self) -> str:
        return "<ortc.LoraAdapter closed>" if self.closed else "<ortc.LoraAdapter>"


def check_adapter(adapter: Any) -> LoraAdapter:
    if not isinstance(adapter, LoraAdapter):
        raise TypeError(f"expected an ortc.LoraAdapter, not {type(adapter).__name__}")
    adapter._check_open()
    return adapter
