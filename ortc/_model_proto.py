"""What ortc needs to know of a serialized ONNX model beyond what ORT reports, read from its
protobuf without the onnx package: the initializers it declares (name -> element type, dims),
and the files its tensors keep their data in (external data locations).

ORT takes an initializer given through ``SessionOptions.add_initializer`` (or
``add_external_initializers``) in place of the model's without comparing the two: a name the
model does not have is ignored, another shape changes what the graph computes, and another
element type is read as the declared one, past the end of a smaller buffer (a crash with a
large tensor). The session checks the given values against what this reads.

Only the fields needed are decoded (ModelProto.graph = 7; GraphProto.initializer = 5;
TensorProto.dims = 1, data_type = 2, name = 8); every other
field is skipped by its length, so the cost follows the number of fields, not the model's size
(tensor data is never read).

External data: ORT reads a tensor's bytes from the file its ``location`` entry names, relative
to the model's folder, and checks that the file lies in that folder only from 1.25.1 (an older
library reads ``../../etc/passwd`` as readily as a weight file). ``external_locations`` lists
every such entry, wherever ORT may look for one: initializers and sparse initializers of every
graph, tensors and sparse tensors held by attributes (a Constant's value, a subgraph's), the
graphs of functions and training info. A small message whose bytes do not contain
``location`` holds no such entry and is skipped with one search; a large one is walked field by
field, tensor data skipped by its length, so a model without external data costs a search of
its small messages whatever the size of its weights.
"""

from __future__ import annotations

from typing import Any, Union

from .dtypes import PROTO_TO_C

__all__ = ["declared_initializers", "external_locations", "ProtoError"]

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
        else:  # fixed-size numbers; a group (deprecated, but protobuf takes an unknown one)
            pos = _skip(buf, pos, end, field, wire)
    if pos != end:
        raise ProtoError("a field runs past the end of its message")


def _skip(buf: Buffer, pos: int, end: int, field: int, wire: int) -> int:
    """The position after the value of a field that is not length-delimited."""
    if wire == 0:
        return _varint(buf, pos, end)[1]
    if wire == 1:
        return pos + 8
    if wire == 5:
        return pos + 4
    if wire == 3:
        return _skip_group(buf, pos, end, field)
    raise ProtoError(f"wire type {wire} is not one a model uses")


def _skip_group(buf: Buffer, pos: int, end: int, field: int) -> int:
    """The position after the end-group tag of ``field``, skipping the fields between."""
    depth = 0
    while pos < end:
        key, pos = _varint(buf, pos, end)
        f, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = _varint(buf, pos, end)
        elif wire == 2:
            size, pos = _varint(buf, pos, end)
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 3:
            depth += 1
        elif wire == 4:
            if depth == 0:
                if f != field:
                    raise ProtoError("a group ends with another field's tag")
                return pos
            depth -= 1
        else:
            raise ProtoError(f"wire type {wire} is not one a model uses")
    raise ProtoError("a group runs past the end of its message")


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


# -- external data ---------------------------------------------------------------------------

_LOCATION = b"location"
#: deeper than protobuf's own nesting limit (100): ORT refuses such a model before reading it
_MAX_DEPTH = 250
#: a message up to this size is searched for ``location`` whole (one C search) before it is
#: walked; a larger one (a graph, a big tensor) is walked, so tensor data is never scanned
_SEARCH_UP_TO = 1 << 16
#: a tensor with more fields holds unpacked numbers: the rest is searched, not walked
_TENSOR_FIELDS_WALKED = 64

Located = list[tuple[str, str]]


def _ext_tensor(buf: Any, start: int, end: int, out: Located) -> None:
    name = ""
    locations: list[str] = []
    pos, walked = start, 0
    while pos < end:
        walked += 1
        if walked == _TENSOR_FIELDS_WALKED and buf.find(_LOCATION, pos, end) == -1:
            break  # nothing after this holds a location
        key, pos = _varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if wire == 2:
            size, pos = _varint(buf, pos, end)
            value = (pos, pos + size)
            pos += size
            if pos > end:
                raise ProtoError("a field runs past the end of its message")
        else:  # a number (dims, data type, unpacked data), or a group
            pos = _skip(buf, pos, end, field, wire)
            if pos > end:
                raise ProtoError("a field runs past the end of its message")
            continue
        if field == 8:
            name = bytes(buf[value[0]:value[1]]).decode("utf-8", "surrogateescape")
        elif field == 13:  # external_data: StringStringEntryProto
            keys: list[bytes] = []
            values: list[bytes] = []
            for e_field, e_wire, e_value in _fields(buf, *value):
                if e_wire == 2 and e_field in (1, 2):
                    text = bytes(buf[e_value[0]:e_value[1]])
                    (keys if e_field == 1 else values).append(text)
            # a repeated scalar field keeps its last value; every value is checked, whichever
            # one a parser keeps
            if _LOCATION in keys:
                locations.extend(v.decode("utf-8", "surrogateescape") for v in values)
    out.extend((name, location) for location in locations)


def _ext_walk(buf: Any, start: int, end: int, kind: str, out: Located, depth: int) -> None:
    """Every external-data location inside the message of ``kind`` at buf[start:end]."""
    if depth > _MAX_DEPTH:
        raise ProtoError("messages nested too deeply")
    if end - start <= _SEARCH_UP_TO and buf.find(_LOCATION, start, end) == -1:
        return
    if kind == "tensor":
        _ext_tensor(buf, start, end, out)
        return
    children = _CHILDREN[kind]
    for field, wire, value in _fields(buf, start, end):
        if wire == 2:
            inner = children.get(field)
            if inner is not None:
                _ext_walk(buf, value[0], value[1], inner, out, depth + 1)


#: for each message kind, its fields that hold messages which may hold a tensor (onnx.proto's
#: field numbers)
_CHILDREN: dict[str, dict[int, str]] = {
    "model": {7: "graph", 25: "function", 20: "training"},
    "training": {1: "graph", 2: "graph"},  # initialization, algorithm
    "graph": {1: "node", 5: "tensor", 15: "sparse"},  # node, initializer, sparse_initializer
    "node": {5: "attribute"},
    "function": {7: "node", 11: "attribute"},  # node, attribute_proto (defaults)
    # t, g, tensors, graphs, sparse_tensor, sparse_tensors
    "attribute": {5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse",
                  23: "sparse"},
    "sparse": {1: "tensor", 2: "tensor"},  # values, indices
}


def external_locations(model: Any) -> Located:
    """(tensor name, location) of every external-data ``location`` entry in the model, in file
    order. ``model``: bytes, a bytearray or an mmap (anything with ``find`` and int items)."""
    out: Located = []
    _ext_walk(model, 0, len(model), "model", out, 0)
    return out
