"""Strings and integers for C: the one checker every string or integer a user passes to ORT
goes through.

ORT reads a ``const char*`` up to its first NUL, so a Python string with a NUL inside would reach
ORT cut short: another file, another initializer's name, another library. :func:`utf8` and
:func:`fspath` refuse such strings with InvalidArgument naming what the string was for; the
helpers below build C string arrays and key/value pairs on top of them.

A value of the wrong type (a str for a count, an int for a name) is a TypeError, as Python's
own functions raise; a value of the right type that C cannot take (out of range, a NUL inside,
no member of the enum) is InvalidArgument, a ValueError.

An integer parameter takes what ``operator.index`` takes (ints, numpy integers), within the C
type's range (:func:`c_integer`; cffi's own OverflowError named no parameter, and ``int()``
truncated 2.5 and parsed "3"), and an enum parameter a member of its enum (:func:`c_enum`:
ORT stored an unknown memory type as it was given).
"""

from __future__ import annotations

import operator
import os
from enum import IntEnum
from typing import Any, Iterable, Mapping, Sequence, TypeVar, cast

from ._ffi import ffi
from ._loader import Api
from .errors import InvalidArgument

__all__ = ["utf8", "config_value", "fspath", "c_strings", "key_value_arrays", "NameArray",
           "read_key_values", "c_integer", "c_enum", "INT32", "INT64", "UNSET", "given_options"]

#: the ranges of C's int (32 bits on every platform ORT supports) and int64_t
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)

E = TypeVar("E", bound=IntEnum)


class _Unset:
    """The default of a keyword option not given (None may be a value: it is refused there)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


#: typed Any so that it is the default of a parameter of any type (``threads: int = UNSET``)
UNSET: Any = _Unset()


def given_options(params: Mapping[str, Any], unknown: Mapping[str, Any],
                  skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keyword options a call was given, from its ``locals()`` taken first thing (its
    parameters, in order): those not left UNSET, then the ``unknown`` ones its ``**unknown``
    caught (its caller names the closest valid one). ``self`` and ``skip`` are not options."""
    given = {k: v for k, v in params.items()
             if v is not UNSET and k not in skip and k not in ("self", "unknown")}
    given.update(unknown)
    return given


def c_integer(value: Any, what: str, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``, or InvalidArgument naming ``what``. Bools are
    refused (``True`` is no count), as is anything without ``__index__`` (floats, strings):
    TypeError."""
    if isinstance(value, bool):
        raise TypeError(f"{what}: expected an int, got bool {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what}: expected an int, got {type(value).__name__} "
                        f"{value!r}") from None
    if not low <= number <= high:
        raise InvalidArgument(f"{what}: {number} is out of range ({low} to {high})")
    return number


def c_enum(value: Any, enum: type[E], what: str) -> E:
    """``value`` as a member of ``enum`` (a member or its int), or InvalidArgument naming
    ``what`` and the members; TypeError for what is no int, and for a member of another of
    ortc's enums, even when its number is one of ``enum``'s (``MemoryInfo.cpu(MemType.DEFAULT,
    AllocatorType.DEVICE_ALLOCATOR)``, its arguments swapped, was accepted as both are 0);
    ortc.compat's mirrors of onnxruntime's enums (``OrtMemType`` for ``MemType``) are the same
    enum. Other IntEnums pass by number."""
    kind = type(value)
    if isinstance(value, IntEnum) and kind is not enum and \
            kind.__module__.split(".")[0] == "ortc" and _enum_name(kind) != _enum_name(enum):
        raise TypeError(f"{what}: expected a {enum.__name__}, got {kind.__name__}."
                        f"{value.name} ({', '.join(f'{m.value} {m.name}' for m in enum)})")
    number = c_integer(value, what, *INT32)
    try:
        return enum(number)
    except ValueError:
        raise InvalidArgument(f"{what}: {number} is not a {enum.__name__} "
                              f"({', '.join(f'{m.value} {m.name}' for m in enum)})") from None


def utf8(text: Any, what: str, *, surrogates: bool = False) -> bytes:
    """``text`` as the NUL-free UTF-8 C string ORT takes, or InvalidArgument naming ``what``.

    ``surrogates``: names read from a model that are not valid UTF-8 come back to Python as
    surrogate escapes; they are encoded back to the model's own bytes.
    """
    if not isinstance(text, str):
        raise TypeError(f"{what} must be str, got {type(text).__name__}")
    try:
        data = text.encode("utf-8", "surrogateescape" if surrogates else "strict")
    except UnicodeEncodeError as exc:
        raise InvalidArgument(f"{what} {text!r} is not encodable as UTF-8: {exc}") from None
    if b"\0" in data:
        raise InvalidArgument(f"{what} {text!r} contains a NUL byte")
    return data


def config_value(value: Any, what: str) -> str:
    """A config entry's value as the text ORT stores: a str, or an int written out. ORT reads
    switches as "1"/"0" only, so ``True`` (which would be stored as "True") and ``None`` are
    refused, not stored as words ORT silently reads as off."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise TypeError(f"{what} must be a str (switches are '1' or '0'), got "
                    f"{type(value).__name__} {value!r}")


def fspath(path: Any, what: str) -> bytes:
    """A file system path (str, bytes or os.PathLike) as a NUL-free C string."""
    try:
        data = os.fsencode(path)
    except TypeError:
        raise TypeError(f"{what} must be a path (str or os.PathLike), "
                        f"not {type(path).__name__}") from None
    if b"\0" in data:
        raise InvalidArgument(f"{what} {os.fsdecode(data)!r} contains a NUL byte")
    return data


def c_strings(items: Iterable[Any], what: str) -> tuple[Any, list[Any]]:
    """A ``const char* const*`` array and the buffers it points into (keep both alive)."""
    bufs = [ffi.new("char[]", utf8(s, what)) for s in items]
    array = ffi.new("char*[]", bufs)
    return ffi.cast("const char* const*", array), [array, *bufs]  # a cast owns nothing


def key_value_arrays(pairs: Mapping[str, str], what: str) -> tuple[Any, Any, list[Any]]:
    """(keys array, values array, buffers to keep alive) for ORT's ``keys, values, n`` form."""
    keys, kb = c_strings(pairs, f"{what} key")
    values, vb = c_strings(pairs.values(), f"{what} value")
    return keys, values, [keys, values, kb, vb]


class NameArray:
    """A C array of input or output names with its buffers (cached per session, never
    mutated). Names come from the model, so ones that are not UTF-8 round-trip as surrogate
    escapes."""

    __slots__ = ("ptr", "bufs", "count")

    def __init__(self, names: Sequence[str]) -> None:
        self.bufs = [ffi.new("char[]", utf8(n, "name", surrogates=True)) for n in names]
        self.ptr = ffi.new("char*[]", self.bufs)  # owns its memory; bufs keep the strings
        self.count = len(names)


#: name tuple -> its NameArray, shared by every session: code that makes a session per call
#: meets the same names each time (a NameArray is never mutated, so sharing is safe)
_NAME_ARRAYS: dict[tuple[str, ...], NameArray] = {}


def shared_name_array(names: tuple[str, ...]) -> NameArray:
    """The NameArray of ``names`` (str only), made once per process (the cache restarts past
    1024 name tuples; arrays in use are held by their users)."""
    arr = _NAME_ARRAYS.get(names)
    if arr is None:
        if len(_NAME_ARRAYS) > 1024:
            _NAME_ARRAYS.clear()
        arr = _NAME_ARRAYS.setdefault(names, NameArray(names))
    return arr


def read_key_values(api: Api, kvp: Any, release: bool) -> dict[str, str]:
    """Copy an ``OrtKeyValuePairs*`` into a dict (and release it when asked)."""
    try:
        keys = ffi.new("char***")
        values = ffi.new("char***")
        n = ffi.new("size_t*")
        api.GetKeyValuePairs(kvp, ffi.cast("const char* const**", keys),
                             ffi.cast("const char* const**", values), n)
        return {cast(bytes, ffi.string(keys[0][i])).decode():
                cast(bytes, ffi.string(values[0][i])).decode() for i in range(n[0])}
    finally:
        if release:
            api.ReleaseKeyValuePairs(kvp)


def _enum_name(kind: type) -> str:
    # ortc.compat spells the C enums as onnxruntime does (OrtMemType where ortc has MemType)
    name = kind.__name__
    return name[3:] if name.startswith("Ort") else name
