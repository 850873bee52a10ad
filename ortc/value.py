"""ORT values (``OrtValue``): tensors, sequences, maps and optionals.

A :class:`Value` owns one ``OrtValue``; its conversions to and from numpy arrays and Python data
are the numpy bridge's (:mod:`ortc._numpy_bridge`: zero copy both ways for numeric tensors).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Mapping, Sequence, cast

import numpy as np

from . import _loader
from ._enums import ElementType, ValueKind
from ._ffi import ffi
from ._cstr import c_enum
from ._guard import Entries
from ._handle import PYPY, Handle
from ._loader import Api
from ._numpy_bridge import RunOutput, array_to_ortvalue, as_array, convert_python_data, \
    held_bytes, is_empty_optional, ortvalue_to_python, tensor_shape_and_type, tensor_view, \
    value_count, value_kind
from ._status import call_out, check
from .dtypes import bits_for, dtype_for
from .env import get_env
from .errors import InvalidArgument
from .memory import cpu_memory_info, default_allocator
from .threads import exclusive, shared
from .typeinfo import TypeInfo, take_type_info

__all__ = ["Value"]


def _field(number: int, payload: bytes | int) -> bytes:
    """One protobuf field: a varint (int) or a length-delimited payload (bytes)."""
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            byte, n = n & 0x7F, n >> 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out)
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _sequence_empty_model(element_type: int) -> bytes:
    """ModelProto bytes of one SequenceEmpty node (opset 12) whose output "s" is an empty
    seq(tensor(element_type)); written by hand, ortc depending on no onnx package."""
    attr = _field(1, b"dtype") + _field(3, element_type) + _field(20, 2)  # type INT
    node = _field(2, b"s") + _field(4, b"SequenceEmpty") + _field(5, attr)
    tensor_type = _field(1, _field(1, element_type))
    value_type = _field(4, _field(1, tensor_type))  # TypeProto.sequence_type.elem_type
    graph = _field(1, node) + _field(2, b"empty") + _field(12, _field(1, b"s") +
                                                            _field(2, value_type))
    return _field(1, 7) + _field(7, graph) + _field(8, _field(1, b"") + _field(2, 12))


#: (pid, element type) -> OrtSession*; kept for the process (like the env they belong to), and
#: made anew in a forked child, which must not use its parent's. No lock (one a signal handler's
#: exception left held would stop every later empty sequence): two threads making the same one at
#: once each build a session, the first stored is kept and the other released.
_empty_sessions: dict[tuple[int, int], Any] = {}
_SEQUENCE_NAME = ffi.new("char[]", b"s")


def _empty_sequence_session(api: Api, element_type: int) -> Any:
    key = (os.getpid(), element_type)
    session = _empty_sessions.get(key)
    if session is None:
        model = _sequence_empty_model(element_type)
        opts = call_out(api.CreateSessionOptions, "OrtSessionOptions*")
        try:
            check(api.SetIntraOpNumThreads(opts, 1))  # no thread pool to carry across fork
            made = call_out(api.CreateSessionFromArray, "OrtSession*", get_env()._ptr,
                            ffi.from_buffer(model), len(model), opts, context="empty_sequence")
        finally:
            api.ReleaseSessionOptions(opts)
        session = _empty_sessions.setdefault(key, made)
        if session is not made:
            api.ReleaseSession(made)
    return session


def _python_data_as(arr: np.ndarray[Any, Any], element_type: ElementType,
                    what: str) -> np.ndarray[Any, Any]:
    """A dict's keys or values (an array made from Python data) as ``element_type``'s dtype;
    strings stay as they are (the string check comes later), an empty array takes the dtype."""
    if element_type == ElementType.STRING:
        return arr if arr.size else np.empty(0, object)
    want = cast("np.dtype[Any]", dtype_for(element_type))  # required: raises, never None
    if not arr.size:
        return np.empty(0, want)
    if arr.dtype.kind in "OSU":
        raise InvalidArgument(f"{what}: cannot convert strings to {element_type.name}")
    return convert_python_data(arr, want, what, element_type.name)


def _map_value_kind(v: Any) -> str | None:
    if isinstance(v, (str, bytes, np.str_, np.bytes_)):
        return "strings"
    if isinstance(v, (int, float, np.number, np.bool_)):  # bool is an int
        return "numbers"
    return None


def _check_map_values(items: list[tuple[Any, Any]]) -> None:
    """A dict's values are all numbers or all strings: numpy would make strings of a mix
    ({'a': 'x', 'b': 2} as 'x', '2') and a 2-D array of lists, silently or for ORT to refuse."""
    first = None
    for k, v in items:
        kind = _map_value_kind(v)
        if kind is None or (first is not None and kind != first):
            expected = f"all {first}, as the first" if first else "all numbers or all strings"
            raise InvalidArgument(f"from_map: the value for key {k!r} is {v!r} "
                                  f"({type(v).__name__}); a map's values must be {expected}")
        first = kind


def _refuse_mixed_maps(parts: list[Value]) -> None:
    """The maps of a sequence have one type: ORT refuses others with a message that names its
    C++ types and header (map(int64, float) then map(string, float))."""
    first: tuple[int, TypeInfo] | None = None
    for i, part in enumerate(parts):
        if part._known_tensor or part.kind != ValueKind.MAP:
            continue
        info = part.type_info
        if first is None:
            first = (i, info)
        elif info != first[1]:
            raise InvalidArgument(f"from_sequence: item {i} is a {info.type_str}, item "
                                  f"{first[0]} a {first[1].type_str}; a sequence's maps have "
                                  f"one type")


#: how a message names a Value of each kind that is not a tensor
_KIND_NAMES: dict[int, str] = {ValueKind.SEQUENCE: "sequence", ValueKind.MAP: "map",
               ValueKind.SPARSETENSOR: "sparse tensor", ValueKind.OPAQUE: "opaque value",
               ValueKind.OPTIONAL: "optional"}


class Value(Handle):
    """An ORT value: a tensor, a sequence, a map or an optional.

    Create one with :meth:`from_numpy` (tensor), :meth:`from_sequence`, :meth:`from_map`;
    read it with :meth:`numpy` (tensors) or :meth:`to_python` (any kind).

    >>> v = ortc.Value.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> v.shape, v.element_type.name
    ((2, 3), 'FLOAT')

    Thread rules: Send and Sync. Reads (shape, type, numpy views) are shared; a value that
    a run writes to (a bound or preallocated output) is used exclusively by that run. A value
    over numpy memory keeps that array alive; an array from :meth:`numpy` keeps the value alive.
    """

    c_type = "OrtValue"
    send = True
    sync = True
    evidence = ("reads are shared; a value a run writes (a bound or preallocated output) is "
                "exclusive while it is written")

    #: whether the memory may be written (False over a read-only array: np.frombuffer(bytes),
    #: a read-only mmap); nothing ortc does writes into a read-only value
    _writable = True
    #: known to hold a value (an empty optional never becomes non-empty, nor the reverse)
    _known_full = False
    _known_tensor = False

    def __init__(self) -> None:
        raise TypeError("use Value.from_numpy, Value.from_sequence or Value.from_map")

    @classmethod
    def _own(cls, raw: Any, keep: Any = None, owners: tuple[Any, ...] = (),
             writable: bool = True) -> Value:
        self = object.__new__(cls)
        self._api = _loader.api()
        self._keep = keep
        self._writable = writable
        self._adopt(raw, self._api.ReleaseValue, owners)
        return self

    @classmethod
    def _take(cls, api: Api, slots: Any, index: int, owners: tuple[Any, ...] = ()) -> Value:
        """A Value owning the OrtValue in ``slots[index]`` (a run's output), taken as
        :func:`take_output` takes one: an interrupt never leaves it both owned and in its slot.
        ``owners``: Values whose memory it uses (counted as its parents)."""
        self = object.__new__(cls)
        self._api = api
        self._keep = None
        self._adopt(slots[index], api.ReleaseValue, owners, slots, index,
                    held_bytes(api, slots[index]) if PYPY else 0)
        return self

    @property
    def writable(self) -> bool:
        """False for a tensor over read-only memory: it cannot be an output or be filled, and
        its :meth:`numpy` view is read-only."""
        return self._writable

    def _require_value(self, what: str) -> None:
        """Refuse an empty optional before a C call that ORT would crash on (ORT 1.32
        dereferences the missing value in GetTypeInfo, GetValueCount, GetTensorMemoryInfo and
        when one is a Run input)."""
        if self._known_full:
            return
        if is_empty_optional(self._api, self._ptr):
            raise InvalidArgument(f"{what}: this Value is an empty optional (it holds no value)")
        self._known_full = True

    def __copy__(self) -> Value:
        return self._copy_by_value()

    def __deepcopy__(self, memo: Any) -> Value:
        return self._copy_by_value()

    def _copy_by_value(self) -> Value:
        """A tensor copies as a new Value over a copy of its data; sharing the handle would let
        closing one change the other. Other kinds are refused (see Handle._copy_by_value)."""
        self._check_open()
        if self.is_tensor:
            copy = Value.from_numpy(np.array(self.numpy(), copy=True))
            return copy
        return cast(Value, super()._copy_by_value())

    def _drop_references(self) -> None:
        self._keep = None

    @classmethod
    def from_numpy(cls, array: Any, element_type: ElementType | int | None = None) -> Value:
        """A tensor over ``array``'s memory (copied only when not C-contiguous, or sub-byte)."""
        api = _loader.api()
        if element_type is not None:  # a member of another of ortc's enums is refused
            element_type = c_enum(element_type, ElementType, "Value.from_numpy element_type")
        raw, keep = array_to_ortvalue(api, array, "Value.from_numpy", element_type)
        value = cls._own(raw, keep, writable=keep is None or bool(keep.flags.writeable))
        # a dense tensor from the start: no run or bind asks ORT what it holds (a Value made
        # per call, as libraries feed them, saves a HasValue call per run)
        value._known_full = value._known_tensor = True
        return value

    from_array = from_numpy

    @classmethod
    def from_sparse(cls, sparse: Any) -> Value:
        """A sparse tensor value from an :class:`ortc.SparseTensor` (COO or CSR; copied)."""
        from .sparse import SparseTensor, sparse_from_python

        if not isinstance(sparse, SparseTensor):
            raise InvalidArgument(f"from_sparse: expected an ortc.SparseTensor, "
                                  f"got {type(sparse).__name__}")
        api = _loader.api()
        raw = sparse_from_python(api, sparse, default_allocator()._ptr, cpu_memory_info()._ptr)
        return cls._own(raw)

    @classmethod
    def from_sequence(cls, items: Sequence[Any],
                      element_type: ElementType | int | None = None) -> Value:
        """A sequence of tensors (or of maps) built from arrays, dicts or Values. An empty
        one needs ``element_type``, the element type of its (tensor) items; given for a
        non-empty one, it converts Python data (lists, numbers) and every item must have it."""
        if not isinstance(items, (list, tuple)):
            raise InvalidArgument(f"from_sequence: expected a list, got {type(items).__name__}")
        if element_type is not None:
            element_type = c_enum(element_type, ElementType, "from_sequence element_type")
        if not items:
            if element_type is None:
                raise InvalidArgument("from_sequence: an empty sequence needs its "
                                      "element_type (e.g. ortc.ElementType.FLOAT)")
            return cls.empty_sequence(element_type)
        api = _loader.api()
        if element_type is None:
            parts = [it if isinstance(it, Value) else
                     (cls.from_map(it) if isinstance(it, Mapping) else cls.from_numpy(it))
                     for it in items]
            _refuse_mixed_maps(parts)
            return cls._compose(api, parts, ValueKind.SEQUENCE, "from_sequence")
        # it converts Python data and must match every item; never silently ignored
        et = element_type  # an ElementType (c_enum above)
        made: list[Any] = []
        keep: list[Any] = []
        for i, it in enumerate(items):
            if isinstance(it, Mapping):
                raise InvalidArgument(f"from_sequence: element_type {et.name} is for "
                                      f"tensor items; item {i} is a dict")
            if isinstance(it, Value):
                if not it.is_tensor or it.element_type != et:
                    what = (it.element_type.name if it.is_tensor else it.kind.name)
                    raise InvalidArgument(f"from_sequence: element_type is {et.name} but "
                                          f"item {i} is a {what} Value")
                made.append(it)
            else:  # a tensor of ``et`` (converted to it, or refused)
                raw, buf = array_to_ortvalue(api, it, f"from_sequence item {i}", et)
                made.append(ffi.gc(raw, api.ReleaseValue))
                keep.append(buf)
        return cls._compose(api, made, ValueKind.SEQUENCE, "from_sequence", keep)

    @classmethod
    def empty_sequence(cls, element_type: ElementType | int) -> Value:
        """An empty sequence of tensors of ``element_type``. CreateValue refuses zero items,
        so the value comes from running ONNX's SequenceEmpty in a cached one-node session."""
        et = c_enum(element_type, ElementType, "empty_sequence element_type")
        if et == ElementType.UNDEFINED:
            raise InvalidArgument("empty_sequence: element_type must be a tensor element type")
        api = _loader.api()
        session = _empty_sequence_session(api, int(et))
        names = ffi.new("char*[1]", [_SEQUENCE_NAME])
        out = ffi.new("OrtValue*[1]")
        check(api.Run(session, ffi.NULL, ffi.NULL, ffi.NULL, 0, names, 1, out), "empty_sequence")
        return cls._own(out[0])

    @classmethod
    def from_map(cls, mapping: Mapping[Any, Any] | tuple[Any, Any],
                 key_type: ElementType | int | None = None,
                 value_type: ElementType | int | None = None) -> Value:
        """A map from a dict (or a (keys array, values array) pair). ``key_type`` and
        ``value_type``, when given, convert a dict's Python keys and values to them (as
        :meth:`from_numpy` converts Python data; a value that would change is refused) and
        every key / value array must have them."""
        api = _loader.api()
        kt = None if key_type is None else c_enum(key_type, ElementType, "from_map key_type")
        vt = None if value_type is None else c_enum(value_type, ElementType,
                                                      "from_map value_type")
        if isinstance(mapping, Mapping):
            items = list(mapping.items())  # one snapshot, whatever the mapping does later
            keys_list = [k for k, _ in items]
            values_list = [v for _, v in items]
            if keys_list and not all(isinstance(k, str) for k in keys_list):
                for k in keys_list:  # ONNX map keys are strings or integers: nothing else
                    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                        raise InvalidArgument(f"from_map: the keys must be all str or all int; "
                                              f"got the key {k!r} ({type(k).__name__})")
                    if not -2**63 <= k < 2**63:
                        raise InvalidArgument(f"from_map: the key {k} is out of int64's range")
            _check_map_values(items)
            try:
                if keys_list and all(isinstance(k, str) for k in keys_list):
                    keys = np.array(keys_list, dtype=object)
                else:
                    keys = np.array(keys_list, dtype=np.int64)
                values = np.array(values_list)
            except (TypeError, ValueError, OverflowError) as exc:  # e.g. mixed key types
                raise InvalidArgument(f"from_map: the keys must be all str or all int, the "
                                      f"values all of one type: {exc}") from None
            if kt is not None:
                keys = _python_data_as(keys, kt, "from_map keys")
            if vt is not None:  # the declared type decides, not the Python values' types
                values = _python_data_as(values, vt, "from_map values")
            elif values.dtype == np.float64 and all(isinstance(v, float) for v in values_list):
                # Python floats make a float map, as from_numpy's data does: a value out of
                # float's range is refused (astype made inf of it)
                values = convert_python_data(values, np.dtype(np.float32), "from_map values",
                                             "FLOAT")
        elif isinstance(mapping, tuple) and len(mapping) == 2:
            keys, values = (np.asarray(x) for x in mapping)
            seen: set[Any] = set()
            for k in keys.reshape(-1).tolist():  # ORT's map keeps one value per key, silently
                if k in seen:
                    raise InvalidArgument(f"from_map: the key {k!r} is given twice; a map "
                                          f"holds one value per key")
                seen.add(k)
        else:
            raise InvalidArgument(f"from_map: expected a dict, got {type(mapping).__name__}")
        parts: list[Any] = []
        bufs: list[Any] = []
        for arr, et, what in ((keys, kt, "from_map keys"), (values, vt, "from_map values")):
            raw, buf = array_to_ortvalue(api, arr.reshape(-1), what, et)
            parts.append(ffi.gc(raw, api.ReleaseValue))
            bufs.append(buf)
        return cls._compose(api, parts, ValueKind.MAP, "from_map", bufs)

    @classmethod
    def _compose(cls, api: Api, parts: list[Any], kind: ValueKind, what: str,
                 keep: Any = None) -> Value:
        """A sequence or map of ``parts``: Values (the caller's, or made here) or the owners
        of OrtValues made for it from arrays (``keep``: their arrays), which nobody else sees:
        a Value each cost more than the item (a sequence fed per run, a dict per row)."""
        entries = Entries(sys._getframe(), f"Value.{what}")  # the parts are in (shared) use while ORT reads them
        try:
            for p in parts:
                if isinstance(p, Value):
                    entries.enter(p)
                    p._require_value(what)
            arr = ffi.new("OrtValue*[]", [p._ptr if isinstance(p, Value) else p for p in parts])
            raw = call_out(api.CreateValue, "OrtValue*", ffi.cast("const OrtValue* const*", arr),
                           len(parts), int(kind), context=what)
        finally:
            entries.leave()
        return cls._own(raw, (parts, keep))

    # -- reads ---------------------------------------------------------------------------------
    @property
    @shared("GetValueType")
    def kind(self) -> ValueKind:
        """TENSOR, SEQUENCE, MAP, OPTIONAL, SPARSETENSOR, ..."""
        return ValueKind(value_kind(self._api, self._ptr))

    @property
    @shared("GetTypeInfo")
    def type_info(self) -> TypeInfo:
        self._require_value("type_info")
        raw = call_out(self._api.GetTypeInfo, "OrtTypeInfo*", self._ptr)
        return take_type_info(self._api, raw)

    @property
    @shared("IsTensor")
    def is_tensor(self) -> bool:
        if self._known_tensor:  # (what a value holds never changes: asked once)
            return True
        if is_empty_optional(self._api, self._ptr):
            return False
        out = ffi.new("int*")
        check(self._api.IsTensor(self._ptr, out))
        if out[0]:
            self._known_full = self._known_tensor = True
        return bool(out[0])

    def _require_tensor(self, what: str, sparse: bool = False) -> None:
        """Refuse a Value that is not a (dense, or with ``sparse`` also a sparse) tensor where
        one is needed: an empty optional crashes ORT in several calls (ORT 1.32's AddInitializer
        among them, GetTensorTypeAndShape up to 1.22), and ORT's errors for the other kinds
        name its own source files or nothing at all."""
        if self._known_tensor:
            return
        self._require_value(what)
        kind = value_kind(self._api, self._ptr)
        if kind == ValueKind.TENSOR:
            self._known_tensor = True
        elif not (sparse and kind == ValueKind.SPARSETENSOR):
            name = _KIND_NAMES.get(kind, f"value of kind {kind}")
            raise InvalidArgument(f"{what}: this Value is a {name}, not a tensor")

    def _shape_and_type(self, what: str) -> tuple[int, tuple[int, ...]]:
        if not self._known_tensor:
            self._require_tensor(what, sparse=True)  # a sparse tensor has a dense shape
        return tensor_shape_and_type(self._api, self._ptr)

    @property
    @shared("GetTensorTypeAndShape", "GetDimensions")
    def shape(self) -> tuple[int, ...]:
        """A tensor's shape (a sparse tensor's dense shape)."""
        return self._shape_and_type("shape")[1]

    @property
    @shared("GetTensorTypeAndShape", "GetTensorElementType")
    def element_type(self) -> ElementType:
        """A tensor's element type."""
        return ElementType(self._shape_and_type("element_type")[0])

    @property
    @shared("GetTensorMemoryInfo")
    def memory_info(self) -> Any:
        """Where a tensor's memory lives (a MemoryInfo borrowed from, and keeping, this value)."""
        from .memory import MemoryInfo

        self._require_tensor("memory_info")
        out = ffi.new("OrtMemoryInfo**")
        check(self._api.GetTensorMemoryInfo(self._ptr, ffi.cast("const OrtMemoryInfo**", out)))
        return MemoryInfo._borrow(out[0], self)

    @property
    def dtype(self) -> np.dtype[Any]:
        """A tensor's numpy dtype (object for strings)."""
        dt = dtype_for(self.element_type)
        assert dt is not None
        return dt

    @shared("GetTensorMutableData", "GetStringTensorContent")
    def numpy(self) -> np.ndarray[Any, Any]:
        """The tensor as a numpy array: a view over the value's memory (it keeps the value
        alive; read-only when the value's memory is); strings and sub-byte types are copies."""
        if not (self._known_tensor or self.is_tensor):
            kind = self.kind
            what = "an empty optional" if kind == ValueKind.OPTIONAL else f"a {kind.name}"
            raise InvalidArgument(f"numpy(): this value is {what}, not a tensor; "
                                  f"use to_python()")
        api = self._api
        et, shape = tensor_shape_and_type(api, self._ptr)
        return tensor_view(api, self._ptr, et, shape, self, False, self._writable)

    @shared("GetValueType", "GetValueCount", "GetValue")
    def to_python(self) -> RunOutput:
        """Any value as Python data: ndarray, list, dict, SparseTensor or None (what
        ``Session.run`` returns for it)."""
        if self.is_tensor:
            return self.numpy()  # read-only over read-only memory
        return cast("RunOutput", ortvalue_to_python(self._api, self._ptr, self))

    @shared("GetValueCount")
    def __len__(self) -> int:
        self._require_value("len()")
        kind = self.kind
        if kind == ValueKind.SPARSETENSOR:
            raise TypeError("len() of a sparse tensor: use shape, or to_python()")
        if kind == ValueKind.TENSOR:
            shape = self.shape
            if not shape:
                raise TypeError("len() of a 0-d tensor")
            return shape[0]
        return value_count(self._api, self._ptr)

    @shared("HasValue")
    def has_value(self) -> bool:
        """False for an empty optional value, True otherwise."""
        out = ffi.new("int*")
        check(self._api.HasValue(self._ptr, out))
        return bool(out[0])

    @exclusive("GetTensorMutableData")
    def fill(self, data: Any) -> None:
        """Copy ``data`` into this (numeric) tensor's memory; a writer, hence exclusive."""
        self._require_tensor("fill()")
        if not self._writable:
            raise InvalidArgument("fill(): this Value is over read-only memory")
        et = self.element_type
        if et == ElementType.STRING or bits_for(et):
            # numpy() returns a copy of these: filling it would change nothing
            raise InvalidArgument(f"fill(): only tensors of whole-byte numbers can be filled, "
                                  f"this one is {et.name}")
        view = self.numpy()
        # the conversions of a run's Python data: none that changes a value (floats into ints,
        # strings into numbers, numbers out of range; numpy's own cast wrapped and truncated)
        arr = convert_python_data(as_array(data, "fill()")[0], view.dtype, "fill()", et.name)
        try:
            np.copyto(view, arr)
        except ValueError as exc:  # shapes that do not broadcast
            raise InvalidArgument(f"fill(): {exc}") from None

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        arr = self.numpy()
        if copy:
            return np.array(arr, dtype=dtype, copy=True)
        return arr if dtype is None else arr.astype(dtype)

    def __repr__(self) -> str:
        if self.closed:
            return "<ortc.Value closed>"
        kind = self.kind
        if kind == ValueKind.TENSOR:
            return f"<ortc.Value tensor {self.element_type.name} {list(self.shape)}>"
        return f"<ortc.Value {kind.name.lower()}>"

    # -- pickling and DLPack (see ortc/dlpack.py) ----------------------------------------------
    @shared("GetValueType", "GetValue", "GetTensorMutableData")
    def __reduce__(self) -> tuple[Any, ...]:
        # by value: a tensor as its array, a sequence or map as its parts (dtypes exact)
        return (_value_from_state, (_value_state(self._api, self._ptr, self),))

    @shared("GetTensorMutableData")
    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """DLPack export of a CPU tensor: zero copy (the consumer's tensor keeps this value
        alive), so ``np.from_dlpack(value)`` and ``torch.from_dlpack(value)`` work."""
        from .dlpack import export_capsule

        return export_capsule(self.numpy(), "Value.__dlpack__", stream, max_version,
                              dl_device, copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(1, 0): ortc's tensors are in CPU memory."""
        from .dlpack import DLPACK_CPU

        self._check_open()
        return (DLPACK_CPU, 0)

    @classmethod
    def from_dlpack(cls, obj: Any) -> Value:
        """A tensor over a DLPack producer's CPU memory (numpy, torch, ...): no copy when it is
        C-contiguous, its dtype kept exactly. Given a Value, a new Value over the same memory
        (closing either leaves the other usable: the new one keeps the source alive)."""
        from .dlpack import dlpack_array

        if isinstance(obj, Value):
            obj._check_open()
            obj._require_tensor("Value.from_dlpack")
            return cls.from_numpy(obj.numpy())  # a view that keeps ``obj`` alive
        arr = obj if isinstance(obj, np.ndarray) else dlpack_array(obj, "Value.from_dlpack")
        return cls.from_numpy(arr)


def _value_state(api: Api, raw: Any, keep: Any) -> tuple[Any, ...]:
    """A value as plain data: ("tensor", array, element type), ("sequence", (states, ...)) or
    ("map", keys state, values state)."""
    kind = value_kind(api, raw)
    if kind == ValueKind.TENSOR:
        et, shape = tensor_shape_and_type(api, raw)
        return ("tensor", tensor_view(api, raw, et, shape, keep, False), et)
    if kind in (ValueKind.SEQUENCE, ValueKind.MAP):
        parts = []
        for i in range(value_count(api, raw) if kind == ValueKind.SEQUENCE else 2):
            inner = call_out(api.GetValue, "OrtValue*", raw, i, default_allocator()._ptr)
            try:
                part = _value_state(api, inner, None)
                if part[0] == "tensor":  # a view over ``inner``: copy it before the release
                    part = ("tensor", np.array(part[1]), part[2])
                parts.append(part)
            finally:
                api.ReleaseValue(inner)
        if kind == ValueKind.MAP:
            return ("map", parts[0], parts[1])
        return ("sequence", tuple(parts))
    what = "an empty optional" if kind == ValueKind.OPTIONAL else f"a {ValueKind(kind).name}"
    raise TypeError(f"cannot pickle ortc.Value: it holds {what}, which has no plain form")


def _value_from_state(state: Any) -> Value:
    """Unpickling a Value: build it from checked plain state (arrays, element types)."""
    if type(state) is not tuple or not state:
        raise TypeError("malformed pickled ortc.Value")
    if state[0] == "tensor" and len(state) == 3:
        _, arr, et = state
        if type(arr) is not np.ndarray or type(et) is not int or (arr.dtype == object and not all(
                type(s) in (str, bytes) for s in arr.reshape(-1).tolist())):
            raise TypeError("malformed pickled ortc.Value tensor")
        return Value.from_numpy(arr, et)
    if state[0] == "sequence" and len(state) == 2 and type(state[1]) is tuple:
        return Value.from_sequence([_value_from_state(p) for p in state[1]])
    if state[0] == "map" and len(state) == 3:
        keys, values = (_value_from_state(p).numpy() for p in state[1:])
        return Value.from_map((keys, values))
    raise TypeError(f"malformed pickled ortc.Value (kind {state[0]!r})")
