"""ORT's type objects, converted at once into immutable records (``_record.Record``).

``OrtTypeInfo`` is a read-only snapshot in ORT (Send and Sync). ortc copies it into Python
values and releases the C object immediately, so nothing here holds a handle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union, cast

import numpy as np

from ._enums import ElementType, ValueKind
from ._ffi import ffi
from ._loader import Api
from ._record import Record
from ._status import call_into, check, ignore
from .dtypes import dtype_for

__all__ = ["TypeInfo", "NodeArg", "Dim"]

#: a dimension: an int when fixed, the symbolic name when named, None when unknown
Dim = Union[int, str, None]

_TYPE_STR = {
    ElementType.FLOAT: "float", ElementType.DOUBLE: "double", ElementType.FLOAT16: "float16",
    ElementType.BOOL: "bool", ElementType.STRING: "string",
}


class TypeInfo(Record):
    """The type of a model input/output or a value.

    ``kind`` says which fields apply: tensors and sparse tensors have ``element_type``,
    ``dtype`` and ``shape``; sequences and optionals have ``element`` (the contained type);
    maps have ``key_type`` and ``element`` (the value type).

    onnxruntime's ``NodeArg.type`` is a string (``"tensor(float)"``); this is a record, whose
    :attr:`type_str` is that string. Comparing a TypeInfo with a string raises TypeError
    saying so, rather than be silently False: equality with a string would have to ignore the
    shape that TypeInfos compare by (two unequal TypeInfos equal to one string) and hash as
    the string does.
    """

    __slots__ = ("kind", "element_type", "shape", "element", "key_type", "denotation")
    kind: ValueKind
    element_type: Optional[ElementType]
    shape: Optional[tuple[Dim, ...]]
    element: Optional[TypeInfo]
    key_type: Optional[ElementType]
    denotation: str

    def __init__(self, kind: ValueKind, element_type: Optional[ElementType] = None,
                 shape: Optional[tuple[Dim, ...]] = None, element: Optional[TypeInfo] = None,
                 key_type: Optional[ElementType] = None, denotation: str = "") -> None:
        self._init(kind, element_type, shape, element, key_type, denotation)

    @property
    def dtype(self) -> np.dtype[Any] | None:
        """The numpy dtype of a tensor's elements, or None (no tensor, or no numpy dtype)."""
        if self.element_type is None:
            return None
        return dtype_for(self.element_type, required=False)

    @property
    def type_str(self) -> str:
        """onnxruntime's spelling, e.g. ``tensor(float)`` or ``seq(map(string,tensor(float)))``."""
        def elem(t: ElementType | None) -> str:
            if t is None:
                return "undefined"
            return _TYPE_STR.get(t, t.name.lower())
        if self.kind == ValueKind.TENSOR:
            return f"tensor({elem(self.element_type)})"
        if self.kind == ValueKind.SPARSETENSOR:
            return f"sparse_tensor({elem(self.element_type)})"
        if self.kind == ValueKind.SEQUENCE:
            return f"seq({self.element.type_str if self.element else '?'})"
        if self.kind == ValueKind.MAP:
            return f"map({elem(self.key_type)},{self.element.type_str if self.element else '?'})"
        if self.kind == ValueKind.OPTIONAL:
            return f"optional({self.element.type_str if self.element else '?'})"
        return self.kind.name.lower()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            raise TypeError(f"an ortc.TypeInfo is compared with the string {other!r}: compare "
                            f"its .type_str ({self.type_str!r}), onnxruntime's spelling of the "
                            f"type, or its fields (kind, element_type, shape)")
        return Record.__eq__(self, other)

    __hash__ = Record.__hash__  # defining __eq__ would drop it

    if not TYPE_CHECKING:  # a type checker must still flag a missing name
        def __getattr__(self, name: str) -> Any:
            # only names TypeInfo lacks: a string method is onnxruntime's habit (its
            # NodeArg.type is a str), whose string is .type_str here
            if name[:1] != "_" and hasattr(str, name):
                raise AttributeError(f"ortc.TypeInfo has no {name!r}: it is a record, not "
                                     f"onnxruntime's type string; use .type_str.{name} "
                                     f"({self.type_str!r})")
            raise AttributeError(f"'TypeInfo' object has no attribute {name!r}")


class NodeArg(Record):
    """A model input, output or overridable initializer: its name and type."""

    __slots__ = ("name", "type")
    name: str
    type: TypeInfo

    def __init__(self, name: str, type: TypeInfo) -> None:  # noqa: A002 - the field's name
        self._init(name, type)

    @property
    def dtype(self) -> np.dtype[Any] | None:
        return self.type.dtype

    @property
    def shape(self) -> tuple[Dim, ...] | None:
        return self.type.shape

    @property
    def element_type(self) -> ElementType | None:
        return self.type.element_type

    @property
    def kind(self) -> ValueKind:
        return self.type.kind


#: the C enums' values -> their members (a dict lookup: calling the Enum class costs about a
#: microsecond, paid several times per input and output a session describes)
_KINDS: dict[int, ValueKind] = {int(k): k for k in ValueKind}
_ELEMENTS: dict[int, ElementType] = {int(e): e for e in ElementType}


def _kind(value: int) -> ValueKind:
    return _KINDS.get(value, ValueKind.UNKNOWN)


def _element(value: int) -> ElementType | None:
    return _ELEMENTS.get(value)


#: the rank up to which a shape is read into the scratch's own arrays (past it: arrays made
#: for the call)
_SCRATCH_RANK = 8


class _Scratch:
    """Out-parameters for reading type infos, made once and reused: taken from a pool and given
    back after use, so a call never shares them with an overlapping one on the same thread (a
    signal handler's own read in the middle of this one, a container's element read while the
    container's scratch is held). The pointer casts ORT's const parameters need are made once
    here too."""

    __slots__ = ("kind", "text", "text_arg", "length", "tensor", "tensor_arg", "elem", "count",
                 "dims", "names", "names_arg", "name", "info")

    def __init__(self) -> None:
        self.kind = ffi.new("ONNXType*")
        self.text = ffi.new("char**")
        self.text_arg = ffi.cast("const char**", self.text)
        self.length = ffi.new("size_t*")
        self.tensor = ffi.new("OrtTensorTypeAndShapeInfo**")
        self.tensor_arg = ffi.cast("const OrtTensorTypeAndShapeInfo**", self.tensor)
        self.elem = ffi.new("ONNXTensorElementDataType*")
        self.count = ffi.new("size_t*")
        self.dims = ffi.new("int64_t[]", _SCRATCH_RANK)
        self.names = ffi.new("char*[]", _SCRATCH_RANK)
        self.names_arg = ffi.cast("const char**", self.names)
        self.name = ffi.new("char**")
        self.info = ffi.new("OrtTypeInfo**")


#: free _Scratch sets; list.pop and list.append are atomic, with or without the GIL
_scratch_pool: list[_Scratch] = []
_NULL = ffi.NULL
_unpack = ffi.unpack
_string = ffi.string


def _take_scratch() -> _Scratch:
    try:
        return _scratch_pool.pop()
    except IndexError:
        return _Scratch()


def tensor_shape(api: Api, info: Any, sc: _Scratch) -> tuple[Dim, ...]:
    """Shape of an OrtTensorTypeAndShapeInfo: ints, symbolic names, or None for unknown
    (out-parameters in ``sc``)."""
    check(api.GetDimensionsCount(info, sc.count))
    count = sc.count[0]
    if not count:
        return ()
    dims = sc.dims if count <= _SCRATCH_RANK else ffi.new("int64_t[]", count)
    check(api.GetDimensions(info, dims, count))
    sizes = cast("list[int]", _unpack(dims, count))
    if min(sizes) >= 0:  # (a name is only read for a dimension with no size)
        return tuple(sizes)
    if count <= _SCRATCH_RANK:
        names, names_arg = sc.names, sc.names_arg
    else:
        names = ffi.new("char*[]", count)
        names_arg = ffi.cast("const char**", names)
    check(api.GetSymbolicDimensions(info, names_arg, count))
    out: list[Dim] = []
    for i, d in enumerate(sizes):
        if d >= 0:
            out.append(d)
        else:
            # a malformed model may name a dimension in bytes that are not UTF-8
            name = cast(bytes, _string(names[i])).decode("utf-8", "replace") \
                if names[i] != _NULL else ""
            out.append(name or None)
    return tuple(out)


def convert_type_info(api: Api, info: Any) -> TypeInfo:
    """Copy an ``OrtTypeInfo*`` (not released here) into a :class:`TypeInfo`."""
    sc = _take_scratch()
    try:
        return _convert(api, info, sc)
    finally:
        _scratch_pool.append(sc)


def _convert(api: Api, info: Any, sc: _Scratch) -> TypeInfo:
    """convert_type_info's work, out-parameters in ``sc``."""
    check(api.GetOnnxTypeFromTypeInfo(info, sc.kind))
    kind = _kind(sc.kind[0])
    denotation = ""
    status = api.GetDenotationFromTypeInfo(info, sc.text_arg, sc.length)
    if status:  # a denotation is optional: read a failure as none
        ignore(status, "GetDenotationFromTypeInfo")
    else:
        text, length = sc.text[0], sc.length[0]
        if text != _NULL and length:
            denotation = cast(bytes, _unpack(text, length)).decode("utf-8", "replace")
    if kind is ValueKind.TENSOR or kind is ValueKind.SPARSETENSOR:
        check(api.CastTypeInfoToTensorInfo(info, sc.tensor_arg))
        tinfo = sc.tensor[0]
        if tinfo == _NULL:
            return TypeInfo(kind, denotation=denotation)
        check(api.GetTensorElementType(tinfo, sc.elem))
        return TypeInfo(kind, element_type=_element(sc.elem[0]),
                        shape=tensor_shape(api, tinfo, sc), denotation=denotation)
    if kind is ValueKind.SEQUENCE:
        seq = _cast(api.CastTypeInfoToSequenceTypeInfo, info, "OrtSequenceTypeInfo")
        return TypeInfo(kind, element=_inner(api, api.GetSequenceElementType, seq, sc),
                        denotation=denotation)
    if kind is ValueKind.MAP:
        mp = _cast(api.CastTypeInfoToMapTypeInfo, info, "OrtMapTypeInfo")
        check(api.GetMapKeyType(mp, sc.elem))
        return TypeInfo(kind, key_type=_element(sc.elem[0]),
                        element=_inner(api, api.GetMapValueType, mp, sc), denotation=denotation)
    if kind is ValueKind.OPTIONAL:
        op = _cast(api.CastTypeInfoToOptionalTypeInfo, info, "OrtOptionalTypeInfo")
        return TypeInfo(kind, element=_inner(api, api.GetOptionalContainedTypeInfo, op, sc),
                        denotation=denotation)
    return TypeInfo(kind, denotation=denotation)


def _cast(slot: Any, info: Any, c_type: str) -> Any:
    """A borrowed view of ``info`` as a container type info (valid while ``info`` lives)."""
    out = ffi.new(c_type + "**")
    check(slot(info, ffi.cast(f"const {c_type}**", out)))
    return out[0]


def _inner(api: Api, getter: Any, container: Any, sc: _Scratch) -> TypeInfo:
    """Convert the owned type info ``getter`` returns for a container's element/value (its
    own conversion takes another scratch: ``sc`` is only the getter's out-parameter)."""
    return take_type_info(api, call_into(getter, sc.info, container))


def take_type_info(api: Api, info: Any) -> TypeInfo:
    """Convert and release an owned ``OrtTypeInfo*``."""
    try:
        return convert_type_info(api, info)
    finally:
        api.ReleaseTypeInfo(info)


def read_node_args(api: Api, session: Any, count_slot: Any, name_slot: Any, type_slot: Any,
                   alloc: Any) -> list[NodeArg]:
    """A session's inputs, outputs or overridable initializers (``session``: the OrtSession;
    the slots: that list's count, name and type getters; ``alloc``: the allocator ORT makes
    the names with), with one scratch for the whole list."""
    sc = _take_scratch()
    try:
        check(count_slot(session, sc.count))
        args = []
        for i in range(sc.count[0]):  # (the range is made before the count slot is reused)
            raw_name = call_into(name_slot, sc.name, session, i, alloc)
            try:
                # names that are not UTF-8 round-trip as surrogate escapes (see NameArray)
                name = cast(bytes, _string(raw_name)).decode("utf-8", "surrogateescape")
            finally:
                ignore(api.AllocatorFree(alloc, raw_name))
            info = call_into(type_slot, sc.info, session, i)
            try:
                type_info = _convert(api, info, sc)
            finally:
                api.ReleaseTypeInfo(info)
            args.append(NodeArg(name, type_info))
        return args
    finally:
        _scratch_pool.append(sc)
