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
from typing import Any, Mapping, Sequence, cast

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

_NULL = ffi.NULL


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


#: Python data (not an array): converted to the element type asked for, range-checked
PYTHON_DATA = (list, tuple, bool, int, float, complex, str, bytes)


def is_array_like(data: Any) -> bool:
    """An array or another array producer (numpy's protocols, DLPack, a memoryview)."""
    return (isinstance(data, (np.ndarray, np.generic, memoryview))
            or hasattr(data, "__array_interface__") or hasattr(data, "__array_struct__")
            or hasattr(data, "__array__") or hasattr(data, "__dlpack__"))


def as_array(data: Any, what: str) -> tuple[np.ndarray[Any, Any], bool]:
    """(array, from Python data): an array producer as an array over its own memory, or Python
    data (lists, tuples, scalars) as a new array. Anything else is refused."""
    if isinstance(data, np.ndarray):
        return data, False
    if data is None:
        raise InvalidArgument(f"{what}: got None, expected an array")
    try:
        if isinstance(data, np.generic):
            return np.asarray(data), False
        if isinstance(data, PYTHON_DATA):
            return np.asarray(data), True
        if is_array_like(data):
            if hasattr(data, "__dlpack__") and not (hasattr(data, "__array_interface__") or
                                                    hasattr(data, "__array__")):
                return np.from_dlpack(data), False
            arr = np.asarray(data)
            if isinstance(arr, np.ndarray):
                return arr, False
    except InvalidArgument:
        raise
    except Exception as exc:  # noqa: BLE001 - anything numpy refuses
        raise InvalidArgument(f"{what}: cannot convert {type(data).__name__} to an array: {exc}") \
            from None
    raise InvalidArgument(f"{what}: expected an array (numpy, an array or DLPack producer), a "
                          f"Value or Python data (lists, numbers), not {type(data).__name__}")


def convert_python_data(arr: np.ndarray[Any, Any], want: np.dtype[Any], what: str,
                        type_name: str) -> np.ndarray[Any, Any]:
    """``arr`` (made from Python data) as dtype ``want``, refusing what would change a value:
    another kind (floats into ints, strings into numbers) or a number out of range."""
    got = arr.dtype
    if got == want:
        return arr
    if got.kind == "O" or not np.can_cast(got, want, "same_kind"):
        detail = "numbers too large for any integer type" if got.kind == "O" else f"{got} data"
        raise InvalidArgument(f"{what}: cannot convert {detail} to {type_name} without "
                              f"changing values")
    if want.kind in "iu" and arr.size:
        info = np.iinfo(want)
        lo, hi = arr.min(), arr.max()
        if lo < info.min or hi > info.max:
            raise InvalidArgument(f"{what}: value {lo if lo < info.min else hi} is out of range "
                                  f"for {type_name} ([{info.min}, {info.max}])")
    out = arr.astype(want)
    if want.kind == "f" and got.kind in "iuf" and arr.size:
        overflow = np.isfinite(arr) & ~np.isfinite(out)
        if overflow.any():
            raise InvalidArgument(f"{what}: value {arr[overflow].flat[0]} is out of range for "
                                  f"{type_name}")
    return out


def array_to_ortvalue(api: Api, data: Any, what: str = "value",
                      element_type: int | None = None) -> tuple[Any, Any]:
    """Make an ``OrtValue*`` tensor from an array; returns (raw value, object to keep alive).

    The caller owns the raw value (ReleaseValue) and must keep the second item alive as long.
    An array (numpy or another producer) must have ``element_type``'s dtype when one is given;
    Python data is converted to it, refusing any conversion that changes a value.
    """
    arr, from_python = as_array(data, what)
    dtype = arr.dtype
    if element_type is not None and element_type != ElementType.STRING:
        want = dtype_for(element_type)
        if want is not None and dtype != want:
            type_name = ElementType(element_type).name
            if not from_python:
                raise InvalidArgument(f"{what}: expected an array of {type_name} ({want}), got "
                                      f"dtype {dtype}")
            if dtype.kind in STRING_KINDS and dtype.kind != "O":
                raise InvalidArgument(f"{what}: cannot convert strings to {type_name}")
            arr = convert_python_data(arr, want, what, type_name)
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


class _Scratch:
    """Out-parameters for one shape query. Taken from a pool and given back after use, so a
    call never shares them with an overlapping one on the same thread (a run that a signal
    handler starts while this thread is between the C call and reading its results)."""

    __slots__ = ("elem", "dims", "dims_arg", "count")

    def __init__(self) -> None:
        self.elem = ffi.new("ONNXTensorElementDataType*")
        self.dims = ffi.new("int64_t**")
        self.dims_arg = ffi.cast("const int64_t**", self.dims)
        self.count = ffi.new("size_t*")


#: free _Scratch sets; list.pop and list.append are atomic, with or without the GIL
_scratch_pool: list[_Scratch] = []


def _tensor_shape_and_type(api: Api, raw: Any) -> tuple[int, tuple[int, ...]]:
    if api.fast_shape:
        # one call instead of five (GetTensorTypeAndShape ... Release), API 23+
        pool = _scratch_pool
        try:
            sc = pool.pop()
        except IndexError:
            sc = _Scratch()
        status = api.GetTensorElementTypeAndShapeDataReference(raw, sc.elem, sc.dims_arg,
                                                               sc.count)
        if status:
            raise_status(status)
        n = sc.count[0]
        result = int(sc.elem[0]), tuple(ffi.unpack(sc.dims[0], n)) if n else ()
        pool.append(sc)
        return result
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


def take_output(api: Api, slots: Any, index: int) -> Any:
    """Take the OrtValue in ``slots[index]`` (a run's output array): returns an owner (a cdata
    that releases it when collected) and sets the slot to NULL, the run's cleanup
    (:func:`ortc._run.release_run`) releasing only what is still in a slot.

    Interrupt safety (a KeyboardInterrupt from a signal handler): CPython (3.11+) runs handlers
    only at a function's start, a backward jump or right after a call into C returns. The slot
    is cleared and the owner made with no such point between them, so a handler's exception
    either comes first (the slot still holds the value: the cleanup releases it) or after the
    owner exists (dropped, it releases the value through ORT's C function, no Python frame).
    Either way the value is released exactly once.
    """
    raw = slots[index]
    slots[index] = _NULL
    return ffi.gc(raw, api.ReleaseValue)


def own_value(api: Api, raw: Any) -> Any:
    """An owner for an OrtValue ORT just returned (see :func:`take_output`)."""
    return ffi.gc(raw, api.ReleaseValue)


def tensor_to_numpy(api: Api, raw: Any, keep: Any, owned: bool = False
                    ) -> np.ndarray[Any, Any]:
    """A numpy array for the tensor ``raw``.

    Numeric tensors: a view over ORT's memory whose base keeps ``keep`` alive (a Value: counted
    as its child; anything else, such as the owner from :func:`take_output`: referenced).
    Strings and sub-byte types are copied; when ``owned`` (``raw`` is an owner nobody else
    uses), the value is then released at once instead of when the owner is collected.
    """
    et, shape = _tensor_shape_and_type(api, raw)
    return _tensor_view(api, raw, et, shape, keep, owned)


def _tensor_view(api: Api, raw: Any, et: int, shape: tuple[int, ...], keep: Any,
                 owned: bool, writable: bool = True) -> np.ndarray[Any, Any]:
    if et == ElementType.STRING:
        out = _read_strings(api, raw, shape)
        if owned:
            ffi.release(raw)
        return out
    dtype = dtype_for(et)
    assert dtype is not None
    count = 1
    for d in shape:
        count *= d
    bits = bits_for(et)
    if bits or count == 0:
        if count == 0:
            return np.empty(shape, dtype)
        data = ffi.new("void**")
        check(api.GetTensorMutableData(raw, data))
        nbytes = (count * bits + 7) // 8
        packed = np.frombuffer(ffi.buffer(ffi.cast("char*", data[0]), nbytes), np.uint8)
        out = unpack_subbyte(packed, bits, count, dtype).reshape(shape)
        if owned:
            ffi.release(raw)
        return out
    data = ffi.new("void**")
    status = api.GetTensorMutableData(raw, data)
    if status:
        raise_status(status)
    # The array's base chain is buffer -> this gc'd pointer -> its finalizer, which holds
    # ``keep``: the memory lives exactly as long as the array.
    owner = ffi.gc(ffi.cast("char*", data[0]), _pin(keep))
    arr = np.frombuffer(ffi.buffer(owner, count * dtype.itemsize), dtype).reshape(shape)
    if not writable:
        arr.flags.writeable = False
    return arr


def _pin(keep: Any) -> Any:
    """The finalizer of an array that views ``keep``'s memory. A Value counts the array as a
    child, so closing the Value defers its release until the array is gone (released at once,
    it left the array over freed memory: reading an 8 MB one after close() segfaulted).
    Anything else is only referenced: the finalizer does no work, so an exception raised at
    its start (a signal handler's) loses nothing."""
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


def ortvalue_to_python(api: Api, raw: Any, keep: Any = None, owned: bool = False) -> Any:
    """Convert an ``OrtValue*`` to Python: ndarray, list (sequence), dict (map) or None.

    A tensor array is a view that keeps ``keep`` alive (see :func:`tensor_to_numpy`); other
    kinds are copies. ``owned``: ``raw`` is an owner only this call uses (from
    :func:`take_output`), released as soon as nothing views it.
    """
    kind = _value_kind(api, raw)
    if kind == ValueKind.TENSOR:
        return tensor_to_numpy(api, raw, keep, owned)
    if kind == ValueKind.SEQUENCE:
        out: Any = [_take_element(api, raw, i) for i in range(_value_count(api, raw))]
    elif kind == ValueKind.MAP:
        keys = _take_element(api, raw, 0)
        values = _take_element(api, raw, 1)
        out = dict(zip(keys.reshape(-1).tolist(), values.reshape(-1).tolist()))
    elif kind == ValueKind.OPTIONAL:
        out = None  # _value_kind reports only empty optionals as OPTIONAL
    elif kind == ValueKind.SPARSETENSOR:
        out = _sparse_to_python(api, raw)
    else:
        raise InvalidArgument(f"cannot convert an ORT value of kind {ValueKind(kind).name}")
    if owned:
        ffi.release(raw)
    return out


def _value_count(api: Api, raw: Any) -> int:
    n = ffi.new("size_t*")
    check(api.GetValueCount(raw, n))
    return int(n[0])


def _take_element(api: Api, raw: Any, index: int) -> Any:
    inner = own_value(api, call_out(api.GetValue, "OrtValue*", raw, index,
                                    default_allocator()._ptr))
    # GetValue builds a new value (a copy), so the element owns itself.
    return ortvalue_to_python(api, inner, inner, True)


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

    #: whether the memory may be written (False over a read-only array: np.frombuffer(bytes),
    #: a read-only mmap); nothing ortc does writes into a read-only value
    _writable = True
    #: known to hold a value (an empty optional never becomes non-empty, nor the reverse)
    _known_full = False

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
        self._adopt(slots[index], api.ReleaseValue, owners, slots, index)
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
        raw, keep = array_to_ortvalue(api, array, "Value.from_numpy", element_type)
        return cls._own(raw, keep, writable=keep is None or bool(keep.flags.writeable))

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
            items = list(mapping.items())  # one snapshot, whatever the mapping does later
            keys_list = [k for k, _ in items]
            values_list = [v for _, v in items]
            if keys_list and not all(isinstance(k, str) for k in keys_list):
                for k in keys_list:  # ONNX map keys are strings or integers: nothing else
                    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                        raise InvalidArgument(f"from_map: the keys must be all str or all int; "
                                              f"got the key {k!r} ({type(k).__name__})")
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
            p._require_value(what)
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
        self._require_value("type_info")
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

        self._require_value("memory_info")
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
        if not self.is_tensor:
            kind = self.kind
            what = "an empty optional" if kind == ValueKind.OPTIONAL else f"a {kind.name}"
            raise InvalidArgument(f"numpy(): this value is {what}, not a tensor; "
                                  f"use to_python()")
        api = self._api
        et, shape = _tensor_shape_and_type(api, self._ptr)
        return _tensor_view(api, self._ptr, et, shape, self, False, self._writable)

    @shared("GetValueType", "GetValueCount", "GetValue")
    def to_python(self) -> Any:
        """Any value as Python data: ndarray, list, dict or None."""
        if self.is_tensor:
            return self.numpy()  # read-only over read-only memory
        return ortvalue_to_python(self._api, self._ptr, self)

    @shared("GetValueCount")
    def __len__(self) -> int:
        self._require_value("len()")
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
        if not self._writable:
            raise InvalidArgument("fill(): this Value is over read-only memory")
        et = self.element_type
        if et == ElementType.STRING or bits_for(et):
            # numpy() returns a copy of these: filling it would change nothing
            raise InvalidArgument(f"fill(): only tensors of whole-byte numbers can be filled, "
                                  f"this one is {et.name}")
        view = self.numpy()
        np.copyto(view, np.asarray(data, dtype=view.dtype), casting="same_kind")

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
        return ("tensor", _tensor_view(api, raw, et, shape, keep, False), et)
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
