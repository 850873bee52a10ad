"""What ortc needs to know of a serialized ONNX model beyond what ORT reports, read from its
protobuf without the onnx package: the initializers it declares (name -> element type, dims).

ORT takes an initializer given through ``SessionOptions.add_initializer`` (or
``add_external_initializers``) in place of the model's without comparing the two: a name the
model does not have is ignored, another shape changes what the graph computes, and another
element type is read as the declared one, past the end of a smaller buffer (a crash with a
large tensor). The session checks the given values against what this reads.

Only the fields needed are decoded (ModelProto.graph = 7; GraphProto.initializer = 5;
TensorProto.dims = 1, data_type = 2, name = 8); every other
field is skipped by its length, so the cost follows the number of fields, not the model's size
(tensor data is never read).
"""

from __future__ import annotations

from typing import Union

from .dtypes import PROTO_TO_C

__all__ = ["declared_initializers", "ProtoError"]

Buffer = Union[bytes, bytearray, memoryview]


class ProtoError(ValueError):
    """The bytes are not a well-formed protobuf message where one was expected."""


def _varint(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise ProtoError("truncated or overlong varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(buf: Buffer, pos: int, end: int):  # type: ignore[no-untyped-def]
    """(field number, wire type, value or (start, end) of a length-delimited field)."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos, end)
            yield field, wire, value
        elif wire == 2:
            size, pos = _varint(buf, pos, end)
            if pos + size > end:
                raise ProtoError("a field runs past the end of its message")
            yield field, wire, (pos, pos + size)
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ProtoError(f"wire type {wire} is not one a model uses")
    if pos != end:
        raise ProtoError("a field runs past the end of its message")


def _tensor(buf: Buffer, start: int, end: int) -> tuple[str, int, tuple[int, ...]]:
    name, data_type, dims = "", 0, []
    for field, wire, value in _fields(buf, start, end):
        if field == 1 and wire == 0:
            dims.append(value if value < 1 << 63 else value - (1 << 64))
        elif field == 1 and wire == 2:  # packed dims
            pos, stop = value
            while pos < stop:
                d, pos = _varint(buf, pos, stop)
                dims.append(d if d < 1 << 63 else d - (1 << 64))
        elif field == 2 and wire == 0:
            data_type = value
        elif field == 8 and wire == 2:
            name = bytes(buf[value[0]:value[1]]).decode("utf-8", "surrogateescape")
    return name, data_type, tuple(dims)


def _graph(buf: Buffer, start: int, end: int,
           out: dict[str, tuple[int, tuple[int, ...]]]) -> None:
    for field, wire, value in _fields(buf, start, end):
        if field == 5 and wire == 2:  # initializer
            name, data_type, dims = _tensor(buf, *value)
            out.setdefault(name, (PROTO_TO_C.get(data_type, data_type), dims))
        elif field == 1 and wire == 2:  # node: its attributes may hold subgraphs (If, Loop)
            for n_field, n_wire, n_value in _fields(buf, *value):
                if n_field == 5 and n_wire == 2:
                    for a_field, a_wire, a_value in _fields(buf, *n_value):
                        if a_field in (6, 11) and a_wire == 2:  # AttributeProto.g, .graphs
                            _graph(buf, a_value[0], a_value[1], out)


def declared_initializers(model: Buffer) -> dict[str, tuple[int, tuple[int, ...]]]:
    """Every initializer of the model's graphs (the main graph's first): name -> (element type
    as ortc.ElementType numbers it, dims)."""
    out: dict[str, tuple[int, tuple[int, ...]]] = {}
    for field, wire, value in _fields(model, 0, len(model)):
        if field == 7 and wire == 2:
            _graph(model, value[0], value[1], out)
    return out


#: operators whose output's rank may follow input values without a subgraph: an item of a
#: sequence, whose items may have any rank (a subgraph attribute counts on its own)
