"""onnxruntime's ``NodeArg`` and ``ModelMetadata``: plain objects with its attribute names."""

from __future__ import annotations

from typing import Any

import ortc

from ._errors import PYBIND_MODULE, unpicklable


class NodeArg:
    """An input or output: ``name``, ``type`` as onnxruntime spells it, ``shape`` as a list
    (ints, symbolic names as str, None for unknown dims; [] when the type has no shape)."""

    # as onnxruntime: pickling refused (its NodeArg is an extension object)
    __reduce_ex__ = unpicklable("NodeArg")

    __slots__ = ("name", "type", "shape")

    def __init__(self, arg: ortc.NodeArg) -> None:
        info = arg.type
        self.name = arg.name
        self.type = info.type_str
        if info.kind == ortc.ValueKind.OPTIONAL and info.element is not None:
            info = info.element  # onnxruntime shows an optional tensor's shape
        self.shape: list[Any] = list(info.shape or ()) if info.kind in (
            ortc.ValueKind.TENSOR, ortc.ValueKind.SPARSETENSOR) else []

    def __str__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"

    __repr__ = __str__


class ModelMetadata:
    """The model's metadata, with onnxruntime's attribute names."""

    # as onnxruntime: pickling refused (its ModelMetadata is an extension object)
    __reduce_ex__ = unpicklable("ModelMetadata")

    def __init__(self, md: ortc.ModelMetadata) -> None:
        self.producer_name = md.producer_name
        self.graph_name = md.graph_name
        self.domain = md.domain
        self.description = md.description
        self.graph_description = md.graph_description
        self.version = md.version
        self.custom_metadata_map = dict(md.custom_metadata_map)


for _cls in (NodeArg, ModelMetadata):
    _cls.__module__ = PYBIND_MODULE
