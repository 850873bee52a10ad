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
from ._status import call_out, check, ignore
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


def tensor_shape(api: Api, info: Any) -> tuple[Dim, ...]:
    """Shape of an OrtTensorTypeAndShapeInfo: ints, symbolic names, or None for unknown."""
    n = ffi.new("size_t*")
    check(api.GetDimensionsCount(info, n))
    count = n[0]
    if not count:
        return ()
    dims = ffi.new("int64_t[]", count)
    check(api.GetDimensions(info, dims, count))
    if all(d >= 0 for d in dims):  # (a name is only read for a dimension with no size)
        return tuple(dims)
    names = ffi.new("char*[]", count)
    check(api.GetSymbolicDimensions(info, ffi.cast("const char**", names), count))
    out: list[Dim] = []
    for i in range(count):
        d = dims[i]
        if d >= 0:
            out.append(int(d))
        else:
            # a malformed model may name a dimension in bytes that are not UTF-8
            name = cast(bytes, ffi.string(names[i])).decode("utf-8", "replace") \
                if names[i] != ffi.NULL else ""
            out.append(name or None)
    return tuple(out)


def convert_type_info(api: Api, info: Any) -> TypeInfo:
    """Copy an ``OrtTypeInfo*`` (not released here) into a :class:`TypeInfo`."""
    kind_p = ffi.new("ONNXType*")
    check(api.GetOnnxTypeFromTypeInfo(info, kind_p))
    kind = _kind(kind_p[0])
    denotation = ""
    text = ffi.new("char**")
    length = ffi.new("size_t*")
    status = api.GetDenotationFromTypeInfo(info, ffi.cast("const char**", text), length)
    if status:  # a denotation is optional: read a failure as none
        ignore(status, "GetDenotationFromTypeInfo")
    elif text[0] != ffi.NULL and length[0]:
        denotation = cast(bytes, ffi.unpack(text[0], length[0])).decode("utf-8", "replace")
    if kind in (ValueKind.TENSOR, ValueKind.SPARSETENSOR):
        tinfo = ffi.new("OrtTensorTypeAndShapeInfo**")
        check(api.CastTypeInfoToTensorInfo(info, ffi.cast("const OrtTensorTypeAndShapeInfo**",
                                                          tinfo)))
        if tinfo[0] == ffi.NULL:
            return TypeInfo(kind, denotation=denotation)
        et = ffi.new("ONNXTensorElementDataType*")
        check(api.GetTensorElementType(tinfo[0], et))
        return TypeInfo(kind, element_type=_element(et[0]), shape=tensor_shape(api, tinfo[0]),
                        denotation=denotation)
    if kind == ValueKind.SEQUENCE:
        seq = _cast(api.CastTypeInfoToSequenceTypeInfo, info, "OrtSequenceTypeInfo")
        return TypeInfo(kind, element=_inner(api, api.GetSequenceElementType, seq),
                        denotation=denotation)
    if kind == ValueKind.MAP:
        mp = _cast(api.CastTypeInfoToMapTypeInfo, info, "OrtMapTypeInfo")
        key = ffi.new("ONNXTensorElementDataType*")
        check(api.GetMapKeyType(mp, key))
        return TypeInfo(kind, key_type=_element(key[0]),
                        element=_inner(api, api.GetMapValueType, mp), denotation=denotation)
    if kind == ValueKind.OPTIONAL:
        op = _cast(api.CastTypeInfoToOptionalTypeInfo, info, "OrtOptionalTypeInfo")
        return TypeInfo(kind, element=_inner(api, api.GetOptionalContainedTypeInfo, op),
                        denotation=denotation)
    return TypeInfo(kind, denotation=denotation)


def _cast(slot: Any, info: Any, c_type: str) -> Any:
    """A borrowed view of ``info`` as a container type info (valid while ``info`` lives)."""
    out = ffi.new(c_type + "**")
    check(slot(info, ffi.cast(f"const {c_type}**", out)))
    return out[0]


def _inner(api: Api, getter: Any, container: Any) -> TypeInfo:
    """Convert the owned type info ``getter`` returns for a container's element/value."""
    return take_type_info(api, call_out(getter, "OrtTypeInfo*", container))


def take_type_info(api: Api, info: Any) -> TypeInfo:
    """Convert and release an owned ``OrtTypeInfo*``."""
    try:
        return convert_type_info(api, info)
    finally:
        api.ReleaseTypeInfo(info)
