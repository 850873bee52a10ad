"""ORT values (``OrtValue``): tensors, sequences, maps and optionals, and the numpy bridge.

Numpy -> ORT: a C-contiguous array of a numeric type becomes a tensor over the array's own
memory (no copy; the Value keeps the array alive; read-only arrays are accepted, ORT only reads
inputs). Other layouts are copied once. Strings are copied into ORT's string tensor.
ORT -> numpy: a tensor becomes an array over the Value's memory (no copy; the array keeps the
Value alive through its base object). Sub-byte types and strings are copied.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Mapping, Sequence, cast

import numpy as np

from . import _loader
from ._enums import ElementType, ValueKind
from ._ffi import ffi
from ._handle import Handle
from ._loader import Api
from ._status import call_out, check, raise_status
from .dtypes import STRING_KINDS, bits_for, dtype_for, element_type_for, pack_subbyte, \
    unpack_subbyte
from .env import get_env
from .errors import InvalidArgument
from .memory import cpu_memory_info, default_allocator
from .threads import exclusive, shared
from .typeinfo import TypeInfo, take_type_info

__all__ = ["Value", "array_to_ortvalue", "ortvalue_to_python", "encode_strings"]


def encode_strings(arr: np.ndarray[Any, Any], what: str) -> list[bytes]:
    """UTF-8 bytes of every element of a string array (str or bytes elements)."""
    out: list[bytes] = []
    for i, item in enumerate(arr.reshape(-1).tolist()):
        if isinstance(item, str):
            try:
                out.append(item.encode("utf-8"))
            except UnicodeEncodeError as exc:
                raise InvalidArgument(f"{what}: element {i} is not encodable as UTF-8: {exc}") \
                    from None
        elif isinstance(item, (bytes, bytearray)):
            try:
                bytes(item).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidArgument(f"{what}: element {i} is not valid UTF-8 ({exc}); ONNX "
                                      f"strings are UTF-8") from None
            out.append(bytes(item))
        else:
            raise InvalidArgument(f"{what}: element {i} is a {type(item).__name__}, expected "
                                  f"str or bytes in a string tensor")
    return out


def _as_array(data: Any, what: str) -> np.ndarray[Any, Any]:
    if isinstance(data, np.ndarray):
        return data
    if data is None:
        raise InvalidArgument(f"{what}: got None, expected a numpy array")
    try:
        arr = np.asarray(data)
    except Exception as exc:  # noqa: BLE001 - anything numpy refuses
        raise InvalidArgument(f"{what}: cannot convert {type(data).__name__} to an array: {exc}") \
            from None
    return arr


def array_to_ortvalue(api: Api, data: Any, what: str = "value",
                      element_type: int | None = None) -> tuple[Any, Any]:
    """Make an ``OrtValue*`` tensor from an array; returns (raw value, object to keep alive).

    The caller owns the raw value (ReleaseValue) and must keep the second item alive as long.
    """
    arr = _as_array(data, what)
    dtype = arr.dtype
    if dtype.kind in STRING_KINDS:
        if dtype.kind == "O":
            for i, item in enumerate(arr.reshape(-1).tolist()):
                if not isinstance(item, (str, bytes, bytearray)):
                    raise InvalidArgument(
                        f"{what}: object array element {i} is a {type(item).__name__}; only "
                        f"str/bytes object arrays (string tensors) are supported")
        return _string_tensor(api, arr, what), None
    try:
        et = element_type_for(dtype) if element_type is None else element_type
    except TypeError as exc:
        raise InvalidArgument(f"{what}: {exc}") from None
    if element_type is not None:
        want = dtype_for(et)
        if dtype != want:  # e.g. a list of floats for a float32 input
            try:
                arr = arr.astype(want, casting="same_kind")
            except TypeError as exc:
                raise InvalidArgument(f"{what}: cannot convert {dtype} data to "
                                      f"{ElementType(et).name}: {exc}") from None
    bits = bits_for(et)
    if bits:
        buf = pack_subbyte(arr, bits)
        shape = arr.shape
    else:
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        buf = arr
        shape = arr.shape
    for d in shape:
        if d < 0:
            raise InvalidArgument(f"{what}: negative dimension in shape {shape}")
    out = ffi.new("OrtValue**")
    status = api.CreateTensorWithDataAsOrtValue(
        cpu_memory_info()._ptr, ffi.from_buffer(buf), buf.nbytes, shape, len(shape), int(et), out)
    if status:
        raise_status(status, what)
    return out[0], buf


def _string_tensor(api: Api, arr: np.ndarray[Any, Any], what: str) -> Any:
    encoded = encode_strings(arr, what)
    shape = arr.shape
    raw = call_out(api.CreateTensorAsOrtValue, "OrtValue*", default_allocator()._ptr, shape,
                   len(shape), int(ElementType.STRING), context=what)
    try:
        if encoded:
            keep = [ffi.new("char[]", s) for s in encoded]  # NUL-terminated copies
            ptrs = ffi.new("char*[]", keep)
            check(api.FillStringTensor(raw, ffi.cast("const char* const*", ptrs), len(keep)),
                  what)
            # FillStringTensor reads C strings, which end at a NUL; ONNX strings (std::string)
            # may hold one, and onnxruntime's own binding keeps it: write those whole.
            for i, s in enumerate(encoded):
                if b"\0" in s:
                    buf = ffi.new("char**")
                    check(api.GetResizedStringTensorElementBuffer(raw, i, len(s), buf), what)
                    ffi.memmove(buf[0], s, len(s))
    except BaseException:
        api.ReleaseValue(raw)
        raise
    return raw


class _Scratch(threading.local):
    """Per-thread out-parameters, allocated once per thread instead of once per call."""

    def __init__(self) -> None:
        self.elem = ffi.new("ONNXTensorElementDataType*")
        self.dims = ffi.new("int64_t**")
        self.count = ffi.new("size_t*")
        self.data = ffi.new("void**")
        self.value = ffi.new("OrtValue**")


scratch = _Scratch()


def _tensor_shape_and_type(api: Api, raw: Any) -> tuple[int, tuple[int, ...]]:
    if api.fast_shape:
        # one call instead of five (GetTensorTypeAndShape ... Release), API 23+
        sc = scratch
        status = api.GetTensorElementTypeAndShapeDataReference(
            raw, sc.elem, ffi.cast("const int64_t**", sc.dims), sc.count)
        if status:
            raise_status(status)
        n = sc.count[0]
        return int(sc.elem[0]), tuple(ffi.unpack(sc.dims[0], n)) if n else ()
    info = call_out(api.GetTensorTypeAndShape, "OrtTensorTypeAndShapeInfo*", raw)
    try:
        et = ffi.new("ONNXTensorElementDataType*")
        check(api.GetTensorElementType(info, et))
        n = ffi.new("size_t*")
        check(api.GetDimensionsCount(info, n))
        dims = ffi.new("int64_t[]", n[0])
        if n[0]:
            check(api.GetDimensions(info, dims, n[0]))
        return int(et[0]), tuple(dims)
    finally:
        api.ReleaseTensorTypeAndShapeInfo(info)


def _read_strings(api: Api, raw: Any, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    count = 1
    for d in shape:
        count *= d
    out = np.empty(count, dtype=object)
    if count:
        total = ffi.new("size_t*")
        check(api.GetStringTensorDataLength(raw, total))
        buf = ffi.new("char[]", max(total[0], 1))
        offsets = ffi.new("size_t[]", count)
        check(api.GetStringTensorContent(raw, buf, total[0], offsets, count))
        data = cast(bytes, ffi.unpack(buf, total[0]))
        for i in range(count):
            end = offsets[i + 1] if i + 1 < count else total[0]
            out[i] = data[offsets[i]:end].decode("utf-8", "surrogateescape")
    return out.reshape(shape)


def tensor_to_numpy(api: Api, raw: Any, keep: Any, release: Any = None) -> np.ndarray[Any, Any]:
    """A numpy array for the tensor ``raw``.

    Numeric tensors: a view over ORT's memory. The view's base keeps ``keep`` alive and, when
    ``release`` is given, calls it with ``raw`` once the array is gone (the array then owns the
    value). Strings and sub-byte types are copied (``release`` runs at once).
    """
    try:
        et, shape = _tensor_shape_and_type(api, raw)
    except BaseException:
        if release is not None:  # the caller handed ``raw`` over: free it on failure too
            release(raw)
        raise
    return _tensor_view(api, raw, et, shape, keep, release)


def _tensor_view(api: Api, raw: Any, et: int, shape: tuple[int, ...], keep: Any,
                 release: Any) -> np.ndarray[Any, Any]:
    if et == ElementType.STRING:
        try:
            return _read_strings(api, raw, shape)
        finally:
            if release is not None:
                release(raw)
    dtype = dtype_for(et)
    assert dtype is not None
    count = 1
    for d in shape:
        count *= d
    bits = bits_for(et)
    if bits or count == 0:
        try:
            if count == 0:
                return np.empty(shape, dtype)
            data = ffi.new("void**")
            check(api.GetTensorMutableData(raw, data))
            nbytes = (count * bits + 7) // 8
            packed = np.frombuffer(ffi.buffer(ffi.cast("char*", data[0]), nbytes), np.uint8)
            return unpack_subbyte(packed, bits, count, dtype).reshape(shape)
        finally:
            if release is not None:
                release(raw)
    data = scratch.data
    status = api.GetTensorMutableData(raw, data)
    if status:
        if release is not None:
            release(raw)
        raise_status(status)
    # The array's base chain is buffer -> this gc'd pointer -> its finalizer, which holds
    # (and, given ``release``, frees) the value: the memory lives exactly as long as the array.
    if release is not None:
        def free(_p: Any, r: Any = raw, f: Callable[[Any], Any] = release) -> None:
            f(r)

        owner = ffi.gc(ffi.cast("char*", data[0]), free)
    else:
        owner = ffi.gc(ffi.cast("char*", data[0]), _pin(keep))
    return np.frombuffer(ffi.buffer(owner, count * dtype.itemsize), dtype).reshape(shape)


def _pin(keep: Any) -> Any:
    """The finalizer of an array that views ``keep``'s memory. A Value counts the array as a
    child, so closing the Value defers its release until the array is gone (released at once,
    it left the array over freed memory: reading an 8 MB one after close() segfaulted)."""
    if isinstance(keep, Handle):
        keep._retain()
        return lambda _p: keep._child_released()
    return lambda _p, k=keep: None


def is_empty_optional(api: Api, raw: Any) -> bool:
    """True for an OrtValue that holds nothing (an empty optional)."""
    out = ffi.new("int*")
    check(api.HasValue(raw, out))
    return not out[0]


def _value_kind(api: Api, raw: Any) -> int:
    # ORT crashes (SIGSEGV, ORT 1.32) when GetValueType reads an empty optional value, so
    # ask HasValue first; an empty value reports as OPTIONAL.
    if is_empty_optional(api, raw):
        return int(ValueKind.OPTIONAL)
    out = ffi.new("ONNXType*")
    check(api.GetValueType(raw, out))
    return int(out[0])


def ortvalue_to_python(api: Api, raw: Any, keep: Any = None, release: Any = None) -> Any:
    """Convert an ``OrtValue*`` to Python: ndarray, list (sequence), dict (map) or None.

    When ``release`` is given, ownership of ``raw`` passes to this function (a tensor array
    keeps it; anything copied releases it here).
    """
    try:
        kind = _value_kind(api, raw)
    except BaseException:
        if release is not None:
            release(raw)
        raise
    if kind == ValueKind.TENSOR:
        return tensor_to_numpy(api, raw, keep, release)
    try:
        if kind == ValueKind.SEQUENCE:
            return [_take_element(api, raw, i) for i in range(_value_count(api, raw))]
        if kind == ValueKind.MAP:
            keys = _take_element(api, raw, 0)
            values = _take_element(api, raw, 1)
            return dict(zip(keys.reshape(-1).tolist(), values.reshape(-1).tolist()))
        if kind == ValueKind.OPTIONAL:
            return None  # _value_kind reports only empty optionals as OPTIONAL
        if kind == ValueKind.SPARSETENSOR:
            return _sparse_to_python(api, raw)
        raise InvalidArgument(f"cannot convert an ORT value of kind {ValueKind(kind).name}")
    finally:
        if release is not None:
            release(raw)


def _value_count(api: Api, raw: Any) -> int:
    n = ffi.new("size_t*")
    check(api.GetValueCount(raw, n))
    return int(n[0])


def _take_element(api: Api, raw: Any, index: int) -> Any:
    inner = call_out(api.GetValue, "OrtValue*", raw, index, default_allocator()._ptr)
    # GetValue builds a new value (a copy), so the element owns itself.
    return ortvalue_to_python(api, inner, None, api.ReleaseValue)


def _sparse_to_python(api: Api, raw: Any) -> Any:
    from .sparse import sparse_to_python

    return sparse_to_python(api, raw)


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


_empty_lock = threading.Lock()
#: (pid, element type) -> OrtSession*; kept for the process (like the env they belong to), and
#: made anew in a forked child, which must not use its parent's
_empty_sessions: dict[tuple[int, int], Any] = {}
_SEQUENCE_NAME = ffi.new("char[]", b"s")


def _empty_sequence_session(api: Api, element_type: int) -> Any:
    key = (os.getpid(), element_type)
    with _empty_lock:
        session = _empty_sessions.get(key)
        if session is None:
            model = _sequence_empty_model(element_type)
            opts = call_out(api.CreateSessionOptions, "OrtSessionOptions*")
            try:
                check(api.SetIntraOpNumThreads(opts, 1))  # no thread pool to carry across fork
                session = call_out(api.CreateSessionFromArray, "OrtSession*", get_env()._ptr,
                                   ffi.from_buffer(model), len(model), opts,
                                   context="empty_sequence")
            finally:
                api.ReleaseSessionOptions(opts)
            _empty_sessions[key] = session
    return session


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

    def __init__(self) -> None:
        raise TypeError("use Value.from_numpy, Value.from_sequence or Value.from_map")

    @classmethod
    def _own(cls, raw: Any, keep: Any = None, owners: tuple[Any, ...] = ()) -> Value:
        self = object.__new__(cls)
        self._api = _loader.api()
        self._keep = keep
        self._adopt(raw, self._api.ReleaseValue, owners)
        return self

    def _drop_references(self) -> None:
        self._keep = None

    @classmethod
    def from_numpy(cls, array: Any, element_type: ElementType | int | None = None) -> Value:
        """A tensor over ``array``'s memory (copied only when not C-contiguous, or sub-byte)."""
        api = _loader.api()
        raw, keep = array_to_ortvalue(api, array, "Value.from_numpy", element_type)
        return cls._own(raw, keep)

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
        one needs ``element_type``, the element type of its (tensor) items."""
        if not isinstance(items, (list, tuple)):
            raise InvalidArgument(f"from_sequence: expected a list, got {type(items).__name__}")
        if not items:
            if element_type is None:
                raise InvalidArgument("from_sequence: an empty sequence needs its "
                                      "element_type (e.g. ortc.ElementType.FLOAT)")
            return cls.empty_sequence(element_type)
        api = _loader.api()
        parts = [it if isinstance(it, Value) else
                 (cls.from_map(it) if isinstance(it, Mapping) else cls.from_numpy(it))
                 for it in items]
        return cls._compose(api, parts, ValueKind.SEQUENCE, "from_sequence")

    @classmethod
    def empty_sequence(cls, element_type: ElementType | int) -> Value:
        """An empty sequence of tensors of ``element_type``. CreateValue refuses zero items,
        so the value comes from running ONNX's SequenceEmpty in a cached one-node session."""
        et = ElementType(element_type)
        if et == ElementType.UNDEFINED:
            raise InvalidArgument("empty_sequence: element_type must be a tensor element type")
        api = _loader.api()
        session = _empty_sequence_session(api, int(et))
        names = ffi.new("char*[1]", [_SEQUENCE_NAME])
        out = ffi.new("OrtValue*[1]")
        check(api.Run(session, ffi.NULL, ffi.NULL, ffi.NULL, 0, names, 1, out), "empty_sequence")
        return cls._own(out[0])

    @classmethod
    def from_map(cls, mapping: Mapping[Any, Any] | tuple[Any, Any]) -> Value:
        """A map from a dict (or a (keys array, values array) pair)."""
        api = _loader.api()
        if isinstance(mapping, Mapping):
            keys_list = list(mapping.keys())
            values_list = list(mapping.values())
            try:
                if keys_list and all(isinstance(k, str) for k in keys_list):
                    keys = np.array(keys_list, dtype=object)
                else:
                    keys = np.array(keys_list, dtype=np.int64)
                values = np.array(values_list)
            except (TypeError, ValueError, OverflowError) as exc:  # e.g. mixed key types
                raise InvalidArgument(f"from_map: the keys must be all str or all int, the "
                                      f"values all of one type: {exc}") from None
            if values.dtype == np.float64 and all(isinstance(v, float) for v in values_list):
                values = values.astype(np.float32)
        elif isinstance(mapping, tuple) and len(mapping) == 2:
            keys, values = (np.asarray(x) for x in mapping)
        else:
            raise InvalidArgument(f"from_map: expected a dict, got {type(mapping).__name__}")
        parts = [cls.from_numpy(keys.reshape(-1)), cls.from_numpy(values.reshape(-1))]
        return cls._compose(api, parts, ValueKind.MAP, "from_map")

    @classmethod
    def _compose(cls, api: Api, parts: list[Value], kind: ValueKind, what: str) -> Value:
        for p in parts:
            p._check_open()
        arr = ffi.new("OrtValue*[]", [p._ptr for p in parts])
        raw = call_out(api.CreateValue, "OrtValue*", ffi.cast("const OrtValue* const*", arr),
                       len(parts), int(kind), context=what)
        return cls._own(raw, parts)

    # -- reads ---------------------------------------------------------------------------------
    @property
    @shared("GetValueType")
    def kind(self) -> ValueKind:
        """TENSOR, SEQUENCE, MAP, OPTIONAL, SPARSETENSOR, ..."""
        return ValueKind(_value_kind(self._api, self._ptr))

    @property
    @shared("GetTypeInfo")
    def type_info(self) -> TypeInfo:
        raw = call_out(self._api.GetTypeInfo, "OrtTypeInfo*", self._ptr)
        return take_type_info(self._api, raw)

    @property
    @shared("IsTensor")
    def is_tensor(self) -> bool:
        if is_empty_optional(self._api, self._ptr):
            return False
        out = ffi.new("int*")
        check(self._api.IsTensor(self._ptr, out))
        return bool(out[0])

    @property
    @shared("GetTensorTypeAndShape", "GetDimensions")
    def shape(self) -> tuple[int, ...]:
        """A tensor's shape."""
        return _tensor_shape_and_type(self._api, self._ptr)[1]

    @property
    @shared("GetTensorTypeAndShape", "GetTensorElementType")
    def element_type(self) -> ElementType:
        """A tensor's element type."""
        return ElementType(_tensor_shape_and_type(self._api, self._ptr)[0])

    @property
    @shared("GetTensorMemoryInfo")
    def memory_info(self) -> Any:
        """Where a tensor's memory lives (a MemoryInfo borrowed from, and keeping, this value)."""
        from .memory import MemoryInfo

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
        alive); strings and sub-byte types are copies."""
        if not self.is_tensor:
            kind = self.kind
            what = "an empty optional" if kind == ValueKind.OPTIONAL else f"a {kind.name}"
            raise InvalidArgument(f"numpy(): this value is {what}, not a tensor; "
                                  f"use to_python()")
        return tensor_to_numpy(self._api, self._ptr, self)

    @shared("GetValueType", "GetValueCount", "GetValue")
    def to_python(self) -> Any:
        """Any value as Python data: ndarray, list, dict or None."""
        return ortvalue_to_python(self._api, self._ptr, self)

    @shared("GetValueCount")
    def __len__(self) -> int:
        kind = self.kind
        if kind == ValueKind.TENSOR:
            shape = self.shape
            if not shape:
                raise TypeError("len() of a 0-d tensor")
            return shape[0]
        return _value_count(self._api, self._ptr)

    @shared("HasValue")
    def has_value(self) -> bool:
        """False for an empty optional value, True otherwise."""
        out = ffi.new("int*")
        check(self._api.HasValue(self._ptr, out))
        return bool(out[0])

    @exclusive("GetTensorMutableData")
    def fill(self, data: Any) -> None:
        """Copy ``data`` into this (numeric) tensor's memory; a writer, hence exclusive."""
        view = self.numpy()
        np.copyto(view, np.asarray(data, dtype=view.dtype), casting="same_kind")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        arr = self.numpy()
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
        C-contiguous, its dtype kept exactly."""
        from .dlpack import dlpack_array

        if isinstance(obj, Value):
            return obj
        arr = obj if isinstance(obj, np.ndarray) else dlpack_array(obj, "Value.from_dlpack")
        return cls.from_numpy(arr)


def _value_state(api: Api, raw: Any, keep: Any) -> tuple[Any, ...]:
    """A value as plain data: ("tensor", array, element type), ("sequence", (states, ...)) or
    ("map", keys state, values state)."""
    kind = _value_kind(api, raw)
    if kind == ValueKind.TENSOR:
        et, shape = _tensor_shape_and_type(api, raw)
        return ("tensor", _tensor_view(api, raw, et, shape, keep, None), et)
    if kind in (ValueKind.SEQUENCE, ValueKind.MAP):
        parts = []
        for i in range(_value_count(api, raw) if kind == ValueKind.SEQUENCE else 2):
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
