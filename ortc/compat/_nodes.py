"""onnxruntime's ``NodeArg`` and ``ModelMetadata``, with its attribute names and rules.

Callers edit what they read (``shape = arg.shape; shape[0] = 1``, a metadata dict updated):
as in onnxruntime, each read of ``NodeArg.shape`` and ``ModelMetadata.custom_metadata_map``
gives a new list or dict, so the session's description stays as the model says."""

from __future__ import annotations

import operator
from typing import Any

import ortc

from ._errors import PYBIND_MODULE, unpicklable


class NodeArg:
    """An input or output: ``name``, ``type`` as onnxruntime spells it, ``shape`` as a list
    (ints, symbolic names as str, None for unknown dims; [] when the type has no shape).
    Read-only, as onnxruntime's."""

    # as onnxruntime: pickling refused (its NodeArg is an extension object)
    __reduce_ex__ = unpicklable("NodeArg")

    __slots__ = ("_name", "_type", "_shape")

    def __init__(self, arg: ortc.NodeArg) -> None:
        info = arg.type
        self._name: str = arg.name
        self._type: str = info.type_str
        if info.kind == ortc.ValueKind.OPTIONAL and info.element is not None:
            info = info.element  # onnxruntime shows an optional tensor's shape
        self._shape: tuple[Any, ...] = tuple(info.shape or ()) if info.kind in (
            ortc.ValueKind.TENSOR, ortc.ValueKind.SPARSETENSOR) else ()

    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    @property
    def shape(self) -> list[Any]:
        return list(self._shape)

    def __str__(self) -> str:
        return f"NodeArg(name={self._name!r}, type={self._type!r}, shape={list(self._shape)!r})"

    __repr__ = __str__


def _converted(name: str, kind: type, value: Any) -> Any:
    """A metadata field's new value as onnxruntime's setter converts it (a str from a str or
    UTF-8 bytes, an int64 from anything with ``__index__``, a dict of str to str); its
    TypeError otherwise."""
    try:
        if kind is str:
            if isinstance(value, bytes):
                value = value.decode("utf-8")
            if isinstance(value, str):
                return value
        elif kind is int:
            number = operator.index(value)
            if -2**63 <= number < 2**63:
                return number
        elif isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in value.items()):
            return dict(value)
    except (TypeError, UnicodeDecodeError):
        pass
    expected = {str: "a str", int: "an int64", dict: "a dict of str to str"}[kind]
    raise TypeError(f"ModelMetadata.{name} must be {expected}, not {type(value).__name__}")


def _field(name: str, kind: type) -> property:
    def get(self: ModelMetadata) -> Any:
        value = self._fields[name]
        return dict(value) if kind is dict else value  # a new dict each read, as there

    def set_(self: ModelMetadata, value: Any) -> None:
        self._fields[name] = _converted(name, kind, value)
    return property(get, set_)


class ModelMetadata:
    """The model's metadata, with onnxruntime's attribute names (writable, as there; the
    session's ``get_modelmeta()`` returns this same object each time)."""

    # as onnxruntime: pickling refused (its ModelMetadata is an extension object)
    __reduce_ex__ = unpicklable("ModelMetadata")

    __slots__ = ("_fields",)

    def __init__(self, md: ortc.ModelMetadata) -> None:
        self._fields: dict[str, Any] = {
            "producer_name": md.producer_name, "graph_name": md.graph_name,
            "domain": md.domain, "description": md.description,
            "graph_description": md.graph_description, "version": md.version,
            "custom_metadata_map": dict(md.custom_metadata_map)}

    producer_name = _field("producer_name", str)
    graph_name = _field("graph_name", str)
    domain = _field("domain", str)
    description = _field("description", str)
    graph_description = _field("graph_description", str)
    version = _field("version", int)
    custom_metadata_map = _field("custom_metadata_map", dict)


for _cls in (NodeArg, ModelMetadata):
    _cls.__module__ = PYBIND_MODULE
