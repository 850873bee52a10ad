"""The numpy bridge: raw ``OrtValue*`` tensors to and from numpy arrays and Python data.

Numpy -> ORT: a C-contiguous array of a numeric type becomes a tensor over the array's own
memory (no copy; the caller keeps the array alive; read-only arrays are accepted, ORT only reads
inputs). Other layouts are copied once. Python data (lists, numbers) is converted to the element
type asked for only when no value changes. Strings are copied into ORT's string tensor.
ORT -> numpy: a tensor becomes an array over the value's memory (no copy; the array keeps its
owner alive through its base object). Sub-byte types and strings are copied. Sequences and maps
become lists and dicts.

These functions work on raw pointers; :class:`ortc.Value` wraps them for users, and the run
engine and bindings call them directly for feeds and outputs.
"""

from __future__ import annotations

import math
import sys
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Union, cast, overload

import numpy as np

from ._enums import ElementType, ValueKind
from ._ffi import ffi
from ._handle import PYPY, Handle
from ._loader import Api
from ._status import call_into, call_out, check, ignore, raise_status
from .dlpack import dlpack_array, is_dlpack_producer
from .dtypes import STRING_KINDS, bits_for, dtype_for, element_type_for, pack_subbyte, \
    plain_dtypes, unpack_subbyte
from .errors import InvalidArgument, OrtError
from .memory import cpu_memory_info, default_allocator

#: out-parameter types of the per-call paths (parsed once: ffi.new of a type string parses it
#: per call)
_VALUE_OUT = ffi.typeof("OrtValue**")
_DATA_OUT = ffi.typeof("void**")

if TYPE_CHECKING:
    from .sparse import SparseTensor

__all__ = ["RunOutput", "MapOutput", "PYTHON_DATA", "array_to_ortvalue", "as_array",
           "convert_python_data",
           "encode_strings", "held_bytes", "is_array_like", "is_empty_optional",
           "ortvalue_to_python", "own_value", "take_output", "tensor_shape_and_type",
           "tensor_to_numpy", "tensor_view",
           "value_count", "value_kind", "view_output"]

#: a map output (ONNX's map(K, V)) as Python: str or int keys, scalar values
MapOutput = Dict[Union[str, int], Union[int, float, str]]

#: one output of a run, by the output's kind (``Session.run``, ``IoBinding.get_outputs``,
#: ``Value.to_python``): a numpy array for a tensor, a list of arrays or maps for a sequence, a
#: dict for a map, a SparseTensor for a sparse tensor, None for an empty optional. A model's
#: outputs are known only at run time: narrow with ``isinstance`` (or ``typing.cast`` where
#: the model is known).
RunOutput = Union[np.ndarray[Any, np.dtype[Any]],
                  List[Union[np.ndarray[Any, np.dtype[Any]], MapOutput]],
                  MapOutput, "SparseTensor", None]

_NULL = ffi.NULL


def encode_strings(arr: np.ndarray[Any, Any], what: str) -> list[bytes]:
    """UTF-8 bytes of every element of a string array (str or bytes elements)."""
    return _encoded(arr.reshape(-1).tolist(), what)


#: the types of a string tensor's elements as a list holds them
_TEXT_TYPES = frozenset((str, bytes, bytearray))
_STR_ONLY = frozenset((str,))


def _only_text(items: list[Any]) -> bool:
    """Whether every item is a str, bytes or bytearray (not of a subclass: those are looked
    at one by one)."""
    return set(map(type, items)) <= _TEXT_TYPES


def _encoded(items: list[Any], what: str) -> list[bytes]:
    """UTF-8 bytes of every item (str or bytes)."""
    if set(map(type, items)) <= _STR_ONLY:  # text only, the usual case: encoded at C speed
        try:
            return list(map(str.encode, items))  # (UTF-8, strict)
        except UnicodeEncodeError:
            pass  # the loop below names the element
    out: list[bytes] = []
    for i, item in enumerate(items):
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
    """An array or another array producer (numpy's protocols, DLPack, the buffer protocol:
    a memoryview, array.array, a ctypes array, a bytearray)."""
    return (isinstance(data, (np.ndarray, np.generic, memoryview))
            or hasattr(data, "__array_interface__") or hasattr(data, "__array_struct__")
            or hasattr(data, "__array__") or hasattr(data, "__dlpack__")
            or exports_buffer(data))


def exposes_memory(data: Any) -> bool:
    """Whether ``data`` hands out its own memory (numpy's array interface, the buffer
    protocol), not only a conversion to an array (``__array__``, which may make a copy)."""
    return (isinstance(data, (np.ndarray, memoryview)) or hasattr(data, "__array_interface__")
            or hasattr(data, "__array_struct__") or exports_buffer(data))


def exports_buffer(data: Any) -> bool:
    """Whether ``data`` exports the buffer protocol (str and bytes aside: they are text)."""
    if isinstance(data, (str, bytes)):
        return False
    try:
        memoryview(data).release()
    except TypeError:
        return False
    return True


def as_array(data: Any, what: str) -> tuple[np.ndarray[Any, Any], bool]:
    """(array, from Python data): an array producer as an array over its own memory, or Python
    data (lists, tuples, scalars) as a new array. Anything else is refused."""
    if isinstance(data, np.ndarray):
        if type(data) is not np.ndarray and _has_masked_elements(data):
            raise InvalidArgument(
                f"{what}: a masked array with masked elements; ORT has no mask and would read "
                f"what lies under it: pass .filled(value) to choose what the masked elements "
                f"are, or .data to use what is there")
        return data, False
    if data is None:
        raise InvalidArgument(f"{what}: got None, expected an array")
    try:
        if isinstance(data, np.generic):
            return np.asarray(data), False
        if isinstance(data, PYTHON_DATA):
            arr = np.asarray(data)
            if arr.dtype.kind in "US" and isinstance(data, (list, tuple)):
                _refuse_numbers_among_strings(data, what)
            elif arr.dtype.kind == "O":
                _refuse_objects(arr, what)
            return arr, True
        if is_array_like(data):
            if hasattr(data, "__dlpack__") and not (hasattr(data, "__array_interface__") or
                                                    hasattr(data, "__array__")):
                if is_dlpack_producer(data):  # its device checked, its failures named
                    return dlpack_array(data, what), False
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


def _refuse_numbers_among_strings(data: list[Any] | tuple[Any, ...], what: str) -> None:
    """numpy makes strings of every element of a list that holds a string ('a', 1 as 'a', '1'):
    a value that would change, refused like any other (the compat layer makes onnxruntime's
    conversion itself)."""
    for i, x in enumerate(np.asarray(data, dtype=object).flat):
        if not isinstance(x, (str, bytes)):
            raise InvalidArgument(
                f"{what}: Python data mixing strings and other values (element {i} is {x!r}, "
                f"{type(x).__name__}); numpy would make a string of it: pass all strings")


def _refuse_objects(arr: np.ndarray[Any, Any], what: str) -> None:
    """Python data numpy could hold only as objects is strings of both kinds (a string tensor)
    or a mistake, named here: the object-array check would name the first element that is not
    a string, a float beside the None that made the array one of objects."""
    items = arr.reshape(-1).tolist()
    if all(isinstance(x, (str, bytes)) for x in items):
        return
    for i, x in enumerate(items):
        if x is None:
            raise InvalidArgument(f"{what}: Python data holding None (element {i}); a tensor "
                                  f"has no missing values")
        if isinstance(x, int) and not -2**63 <= x < 2**64:
            raise InvalidArgument(f"{what}: value {x} (element {i}) is too large for any "
                                  f"integer type")
    bad = next((i for i, x in enumerate(items) if not isinstance(x, (str, bytes, int, float))),
               0)  # (0: numbers numpy still keeps as objects, named by the first of them)
    raise InvalidArgument(f"{what}: Python data holding {items[bad]!r} (element {bad}, "
                          f"{type(items[bad]).__name__}), which numpy keeps as an object; pass "
                          f"numbers or strings")


def convert_python_data(arr: np.ndarray[Any, Any], want: np.dtype[Any], what: str,
                        type_name: str) -> np.ndarray[Any, Any]:
    """``arr`` (made from Python data) as dtype ``want``, refusing what would change a value:
    another kind (floats into ints, strings into numbers) or a number out of range."""
    got = arr.dtype
    if got == want:
        return arr
    if not arr.size:  # no value to change: ``[]`` is float64 to numpy whatever the input's type
        return arr.astype(want)
    if want.kind == "V":  # ml_dtypes' types, which numpy's kinds and can_cast do not describe
        return _convert_to_ml_dtype(arr, want, what, type_name)
    # ints into an unsigned type are not numpy's "same kind"; the range check below decides
    if got.kind == "O" or not (np.can_cast(got, want, "same_kind")
                               or (got.kind in "biu" and want.kind == "u")):
        detail = "numbers too large for any integer type" if got.kind == "O" else f"{got} data"
        raise InvalidArgument(f"{what}: cannot convert {detail} to {type_name} without "
                              f"changing values")
    if want.kind in "iu" and arr.size:
        info = np.iinfo(want)
        lo, hi = int(arr.min()), int(arr.max())  # Python ints: no overflow comparing with 2**64-1
        if lo < info.min or hi > info.max:
            raise InvalidArgument(f"{what}: value {lo if lo < info.min else hi} is out of range "
                                  f"for {type_name} ([{info.min}, {info.max}])")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        out = arr.astype(want)
    if want.kind == "f" and got.kind in "iuf" and arr.size:
        overflow = np.isfinite(arr) & ~np.isfinite(out)
        if overflow.any():
            raise InvalidArgument(f"{what}: value {arr[overflow].flat[0]} is out of range for "
                                  f"{type_name}")
    return out


def _convert_to_ml_dtype(arr: np.ndarray[Any, Any], want: np.dtype[Any], what: str,
                         type_name: str) -> np.ndarray[Any, Any]:
    """convert_python_data for bfloat16, float8/float4 and int4/int2 types: their casts wrap
    integers (100 as INT4 is 4) and saturate or make NaN of large floats, so the same rules
    are checked by hand: integers only into the integer types, every value in range."""
    import ml_dtypes

    try:
        info: Any = ml_dtypes.iinfo(want)  # type: ignore[no-untyped-call]
        kinds = "biu"
    except (ValueError, TypeError):
        info = ml_dtypes.finfo(want)  # type: ignore[no-untyped-call]
        kinds = "biuf"
    got = arr.dtype
    if got.kind not in kinds:
        raise InvalidArgument(f"{what}: cannot convert {got} data to {type_name} without "
                              f"changing values")
    if arr.size:
        bad: Any = None
        if kinds == "biu":
            lo, hi = int(arr.min()), int(arr.max())
            bad = lo if lo < int(info.min) else hi if hi > int(info.max) else None
            limits = f"[{int(info.min)}, {int(info.max)}]"
        else:
            outside = np.isfinite(arr) & (np.abs(arr) > float(info.max))
            if outside.any():
                bad = arr[outside].flat[0]
            limits = f"magnitude up to {float(info.max)}"
        if bad is not None:
            raise InvalidArgument(f"{what}: value {bad} is out of range for {type_name} "
                                  f"({limits})")
    out = arr.astype(want)
    if kinds == "biuf" and arr.size:
        # a type without infinities (the FN and FNUZ float8s), NaN (FLOAT4E2M1), or zero and
        # sign (FLOAT8E8M0) casts such a value to another kind of value: NaN, 6.0, -0.0
        src, back = arr.astype(np.float64), out.astype(np.float64)
        changed = (np.isnan(src) != np.isnan(back)) | (np.isinf(src) & (src != back))
        if changed.any():
            raise InvalidArgument(f"{what}: value {src[changed].flat[0]} has no {type_name} "
                                  f"equivalent (the cast makes {back[changed].flat[0]} of it)")
    return out


def _has_masked_elements(array: np.ndarray[Any, Any]) -> bool:
    # without numpy.ma imported no array can be a masked one (and the check imports nothing)
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(array, ma.MaskedArray) and bool(ma.is_masked(array))


def array_to_ortvalue(api: Api, data: Any, what: str = "value",
                      element_type: int | None = None) -> tuple[Any, Any]:
    """Make an ``OrtValue*`` tensor from an array; returns (raw value, object to keep alive).

    The caller owns the raw value (ReleaseValue) and must keep the second item alive as long.
    An array (numpy or another producer) must have ``element_type``'s dtype when one is given;
    Python data is converted to it, refusing any conversion that changes a value.
    """
    if type(data) is np.ndarray and element_type is None:
        # the usual case, a C-contiguous array of a plain dtype: a tensor over its memory as
        # it is (what the general steps below come to for it, without their looks)
        et = PLAIN_ELEMENT_TYPES.get(data.dtype)
        if et is not None and data.flags.c_contiguous:
            return _tensor_over(api, data, data.shape, et, what), data
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
    elif element_type == ElementType.STRING and dtype.kind not in STRING_KINDS:
        # never wrap other bytes as a string tensor: ORT would read them as string objects
        raise InvalidArgument(f"{what}: expected strings (str or bytes) for STRING, got dtype "
                              f"{dtype}")
    if dtype.kind in STRING_KINDS:
        items = arr.reshape(-1).tolist()
        if dtype.kind == "O" and not _only_text(items):
            for i, item in enumerate(items):
                if not isinstance(item, (str, bytes, bytearray)):
                    raise InvalidArgument(
                        f"{what}: object array element {i} is a {type(item).__name__}; only "
                        f"str/bytes object arrays (string tensors) are supported")
        return _string_tensor(api, arr.shape, _encoded(items, what), what), None
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
    return _tensor_over(api, buf, shape, int(et), what), buf


def _tensor_over(api: Api, buf: np.ndarray[Any, Any], shape: tuple[int, ...], et: int,
                 what: str) -> Any:
    """A new ``OrtValue*`` tensor of element type ``et`` and ``shape`` over ``buf``'s memory
    (C-contiguous, in ORT's layout); the caller keeps ``buf`` alive as long."""
    out = ffi.new(_VALUE_OUT)
    status = api.CreateTensorWithDataAsOrtValue(
        cpu_memory_info()._ptr, ffi.from_buffer(buf), buf.nbytes, shape, len(shape), et, out)
    if status:
        raise_status(status, what)
    return out[0]


def _string_tensor(api: Api, shape: tuple[int, ...], encoded: list[bytes], what: str) -> Any:
    raw = call_out(api.CreateTensorAsOrtValue, "OrtValue*", default_allocator()._ptr, shape,
                   len(shape), int(ElementType.STRING), context=what)
    try:
        count = len(encoded)
        if count:
            # one buffer of NUL-terminated strings, one after the other, and the address of
            # each (a cffi string object per element cost more than ORT's copy of it)
            blob = b"\0".join(encoded) + b"\0"
            held = ffi.from_buffer(blob)
            starts = _string_starts(int(ffi.cast("intptr_t", held)), encoded)
            check(api.FillStringTensor(raw, ffi.cast("const char* const*", starts), count),
                  what)
            # FillStringTensor reads C strings, which end at a NUL; ONNX strings (std::string)
            # may hold one, and onnxruntime's own binding keeps it: write those whole.
            if blob.count(b"\0") > count:
                for i, s in enumerate(encoded):
                    if b"\0" in s:
                        buf = ffi.new("char**")
                        check(api.GetResizedStringTensorElementBuffer(raw, i, len(s), buf),
                              what)
                        ffi.memmove(buf[0], s, len(s))
    except BaseException:
        api.ReleaseValue(raw)
        raise
    return raw


#: up to this many strings, their addresses are summed in Python: numpy's fixed cost is more
_FEW_STRINGS = 32
_plus_one = (1).__add__


def _string_starts(base: int, encoded: list[bytes]) -> Any:
    """A C array of the addresses of the strings ``encoded`` laid one after the other from the
    address ``base``, each followed by its NUL."""
    if len(encoded) <= _FEW_STRINGS:
        return ffi.new("intptr_t[]", list(accumulate(map(_plus_one, map(len, encoded)),
                                                     initial=base)))
    sizes = np.fromiter(map(len, encoded), np.intp, len(encoded))
    sizes += 1
    starts = np.add.accumulate(sizes)
    starts -= sizes
    starts += base
    return ffi.from_buffer("intptr_t[]", starts)


#: element type -> numpy dtype of the types whose bytes numpy reads as they are (no strings,
#: no sub-byte packing): the one table of them (the run engine and the binding read it too)
PLAIN_DTYPES = plain_dtypes()
#: the same, dtype -> element type
PLAIN_ELEMENT_TYPES: dict[np.dtype[Any], int] = {dt: et for et, dt in PLAIN_DTYPES.items()}


class _Scratch:
    """Out-parameters for one shape query. Taken from a pool and given back after use, so a
    call never shares them with an overlapping one on the same thread (a run that a signal
    handler starts while this thread is between the C call and reading its results)."""

    __slots__ = ("elem", "dims", "dims_arg", "count", "data")

    def __init__(self) -> None:
        self.elem = ffi.new("ONNXTensorElementDataType*")
        self.dims = ffi.new("int64_t**")
        self.dims_arg = ffi.cast("const int64_t**", self.dims)
        self.count = ffi.new("size_t*")
        self.data = ffi.new("void**")


#: free _Scratch sets; list.pop and list.append are atomic, with or without the GIL
_scratch_pool: list[_Scratch] = []
_unpack = ffi.unpack
_memmove = ffi.memmove
_empty = np.empty


def take_scratch() -> _Scratch:
    """A set of out-parameters from the pool (given back with :func:`give_scratch`; one
    lost to an exception is simply not given back: the pool makes another)."""
    try:
        return _scratch_pool.pop()
    except IndexError:
        return _Scratch()


give_scratch = _scratch_pool.append


def tensor_copy_or_shape(api: Api, raw: Any, max_bytes: int
                         ) -> tuple[int, tuple[int, ...], np.ndarray[Any, Any] | None]:
    """The element type and shape of the tensor ``raw``, and a new array holding a copy of
    its data when its type is one numpy reads as it is and it has at most ``max_bytes``
    (else None: the caller views it)."""
    if not api.fast_shape:
        et, shape = tensor_shape_and_type(api, raw)
        dtype = PLAIN_DTYPES.get(et)
        if dtype is None or dtype.itemsize * math.prod(shape) > max_bytes:
            return et, shape, None
        return et, shape, np.array(tensor_view(api, raw, et, shape, None, False), copy=True)
    sc = take_scratch()
    found = copy_plain_tensor(api, raw, sc, max_bytes, False)
    _scratch_pool.append(sc)
    return found


@overload
def copy_plain_tensor(api: Api, raw: Any, sc: _Scratch, max_bytes: int,
                      none_on_error: Literal[False]
                      ) -> tuple[int, tuple[int, ...], np.ndarray[Any, Any] | None]: ...


@overload
def copy_plain_tensor(api: Api, raw: Any, sc: _Scratch, max_bytes: int, none_on_error: bool
                      ) -> tuple[int, tuple[int, ...], np.ndarray[Any, Any] | None] | None: ...


def copy_plain_tensor(api: Api, raw: Any, sc: _Scratch, max_bytes: int, none_on_error: bool
                      ) -> tuple[int, tuple[int, ...], np.ndarray[Any, Any] | None] | None:
    """(The API 23+ core of tensor_copy_or_shape, out-parameters in ``sc``.) When ORT answers
    the type-and-shape query with an error (a value that holds no tensor, such as an output no
    run wrote yet): None if ``none_on_error`` (the status let go), else the error raised."""
    elem, count = sc.elem, sc.count
    status = api.GetTensorElementTypeAndShapeDataReference(raw, elem, sc.dims_arg, count)
    if status:
        if none_on_error:
            ignore(status, "GetTensorElementTypeAndShapeDataReference")
            return None
        raise_status(status)
    n = count[0]
    shape = tuple(_unpack(sc.dims[0], n)) if n else ()
    et = elem[0]  # (an int: cffi reads an enum as one)
    dtype = PLAIN_DTYPES.get(et)
    copy = None
    if dtype is not None:
        size = dtype.itemsize
        for d in shape:
            size *= d
        if size <= max_bytes:
            copy = _empty(shape, dtype)
            if size:
                data = sc.data
                status = api.GetTensorMutableData(raw, data)
                if status:
                    raise_status(status)
                _memmove(copy, data[0], size)
    return et, shape, copy


def tensor_shape_and_type(api: Api, raw: Any) -> tuple[int, tuple[int, ...]]:
    if api.fast_shape:
        # one call instead of five (GetTensorTypeAndShape ... Release), API 23+: the copy-out's
        # query, with a limit no tensor is under (nothing copied)
        et, shape, _ = tensor_copy_or_shape(api, raw, -1)
        return et, shape
    info = call_out(api.GetTensorTypeAndShape, "OrtTensorTypeAndShapeInfo*", raw)
    try:
        et_out = ffi.new("ONNXTensorElementDataType*")
        check(api.GetTensorElementType(info, et_out))
        n = ffi.new("size_t*")
        check(api.GetDimensionsCount(info, n))
        dims = ffi.new("int64_t[]", n[0])
        if n[0]:
            check(api.GetDimensions(info, dims, n[0]))
        return int(et_out[0]), tuple(dims)
    finally:
        api.ReleaseTensorTypeAndShapeInfo(info)


def _read_strings(api: Api, raw: Any, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    count = math.prod(shape)
    out = np.empty(count, dtype=object)
    if count:
        out[:] = _string_items(api, raw, count)
    return out.reshape(shape)


def _string_items(api: Api, raw: Any, count: int) -> list[str]:
    """The ``count`` > 0 strings of the string tensor ``raw``, in order."""
    total = ffi.new("size_t*")
    check(api.GetStringTensorDataLength(raw, total))
    size = total[0]
    buf = ffi.new("char[]", max(size, 1))
    offsets = ffi.new("size_t[]", count)
    check(api.GetStringTensorContent(raw, buf, size, offsets, count))
    data = cast(bytes, ffi.unpack(buf, size))
    # the offsets read in one call (an index per element cost a C-level access each)
    starts = cast("list[int]", ffi.unpack(offsets, count))
    ends = starts[1:]
    ends.append(size)
    return [data[a:b].decode("utf-8", "surrogateescape") for a, b in zip(starts, ends)]


def take_output(api: Api, slots: Any, index: int) -> Any:
    """Take the OrtValue in ``slots[index]`` (a run's output array): returns an owner (a cdata
    that releases it when collected) and sets the slot to NULL, the run's cleanup
    (:meth:`ortc._run.RunContext.close`) releasing only what is still in a slot.

    Interrupt safety (a KeyboardInterrupt from a signal handler, which may come between any
    two instructions on every interpreter): the slot is cleared before the owner is made, so
    the value is never released twice (by the cleanup and by the owner). An exception that
    lands between the two leaks this one value; no ORT call can hand the value over in one
    step, and a leak is the failure that cannot crash.
    """
    raw = slots[index]
    slots[index] = _NULL
    return ffi.gc(raw, api.ReleaseValue)


def view_output(api: Api, slots: Any, index: int, dtype: np.dtype[Any],
                shape: tuple[int, ...], nbytes: int) -> np.ndarray[Any, Any]:
    """A writable numpy view of the plain tensor in ``slots[index]`` (a run's output whose
    type and shape were just read: ``dtype``, ``shape``, ``nbytes`` > 0), which it takes
    (:func:`take_output`): :func:`tensor_view` without its general steps (about 1 us per
    output)."""
    owner = take_output(api, slots, index)
    return _plain_view(api, owner, dtype, shape, nbytes, owner, True)


def _plain_view(api: Api, raw: Any, dtype: np.dtype[Any], shape: tuple[int, ...], nbytes: int,
                keep: Any, writable: bool) -> np.ndarray[Any, Any]:
    """A numpy view of the ``nbytes`` > 0 of a plain tensor, whose base chain is buffer -> a
    pin over the data -> ``keep`` (see :func:`_pin`): the memory lives as long as the array."""
    data = ffi.new(_DATA_OUT)
    status = api.GetTensorMutableData(raw, data)
    if status:
        raise_status(status)
    # PyPy's collector is told of the memory an array over an output holds (see
    # _handle.PYPY); a Value's is told by the Value
    pin = ffi.gc(ffi.cast("char*", data[0]), _pin(keep),
                 0 if isinstance(keep, Handle) else nbytes)
    arr: np.ndarray[Any, Any] = np.ndarray(shape, dtype, ffi.buffer(pin, nbytes))
    if not writable:
        arr.flags.writeable = False
    return arr


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
    et, shape = tensor_shape_and_type(api, raw)
    return tensor_view(api, raw, et, shape, keep, owned)


def tensor_view(api: Api, raw: Any, et: int, shape: tuple[int, ...], keep: Any,
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
    return _plain_view(api, raw, dtype, shape, count * dtype.itemsize, keep, writable)


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


def held_bytes(api: Api, raw: Any) -> int:
    """About how many bytes of memory the OrtValue ``raw`` (a run's output) holds, for PyPy's
    collector (see ``_handle.PYPY``; 0 on CPython, which does not need it): its data for a
    tensor, 0 for other kinds or when ORT cannot say."""
    if not PYPY:
        return 0
    try:
        if value_kind(api, raw) != ValueKind.TENSOR:
            return 0
        et, shape = tensor_shape_and_type(api, raw)
    except OrtError:
        return 0
    dtype = PLAIN_DTYPES.get(et)
    return math.prod(shape) * (dtype.itemsize if dtype is not None else 8)


def value_kind(api: Api, raw: Any) -> int:
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
    kind = value_kind(api, raw)
    if kind == ValueKind.TENSOR:
        return tensor_to_numpy(api, raw, keep, owned)
    if kind == ValueKind.SEQUENCE:
        out: Any = _sequence_items(api, raw)
    elif kind == ValueKind.MAP:
        out = _map_items(api, raw)
    elif kind == ValueKind.OPTIONAL:
        out = None  # value_kind reports only empty optionals as OPTIONAL
    elif kind == ValueKind.SPARSETENSOR:
        out = _sparse_to_python(api, raw)
    else:
        raise InvalidArgument(f"cannot convert an ORT value of kind {ValueKind(kind).name}")
    if owned:
        ffi.release(raw)
    return out


def value_count(api: Api, raw: Any) -> int:
    n = ffi.new("size_t*")
    check(api.GetValueCount(raw, n))
    return int(n[0])


#: a sequence's tensors of at most this many bytes come out as arrays of their own (their
#: value released at once), as a run's small outputs do (_run.COPY_OUT_MAX): cheaper than a
#: view's owner chain. A sequence of many small tensors (SplitToSequence) paid that per item.
ITEM_COPY_MAX = 1 << 16


def _sequence_items(api: Api, raw: Any) -> list[Any]:
    """A sequence's items as Python (GetValue hands out a copy of each: each is its own). An
    ORT sequence holds tensors or maps, never both: the first item's kind is every item's."""
    reader = _Reader(api)
    get, out, alloc, release = api.GetValue, reader.out, reader.alloc, api.ReleaseValue
    items: list[Any] = []
    kind = None
    for i in range(value_count(api, raw)):
        item = ffi.gc(call_into(get, out, raw, i, alloc), release)
        if kind is None:
            kind = value_kind(api, item)
        if kind == ValueKind.TENSOR:
            et, shape, copy = reader.copy(item, ITEM_COPY_MAX)
            if copy is None:
                items.append(tensor_view(api, item, et, shape, item, True))
                continue
            ffi.release(item)
            items.append(copy)
        elif kind == ValueKind.MAP:
            items.append(reader.map(item))
            ffi.release(item)
        else:
            items.append(ortvalue_to_python(api, item, item, True))
    reader.done()
    return items


def _map_items(api: Api, raw: Any) -> dict[Any, Any]:
    reader = _Reader(api)
    out = reader.map(raw)
    reader.done()
    return out


class _Reader:
    """What reading a sequence's or a map's items takes, made once for all of them: a
    ZipMap's sequence holds a map per row, and each map a tensor of keys and one of values."""

    __slots__ = ("api", "out", "alloc", "scratch")

    def __init__(self, api: Api) -> None:
        self.api = api
        self.out = ffi.new(_VALUE_OUT)
        self.alloc = default_allocator()._ptr
        # (this reader's own: another call, even one a signal handler starts on this thread,
        # takes another from the pool)
        self.scratch = _scratch_pool.pop() if _scratch_pool else _Scratch()

    def done(self) -> None:
        """Give the out-parameters back to the pool (the reader is not used after)."""
        _scratch_pool.append(self.scratch)

    def copy(self, raw: Any, max_bytes: int
             ) -> tuple[int, tuple[int, ...], np.ndarray[Any, Any] | None]:
        """:func:`tensor_copy_or_shape` with this reader's out-parameters."""
        api = self.api
        if not api.fast_shape:
            return tensor_copy_or_shape(api, raw, max_bytes)
        found = copy_plain_tensor(api, raw, self.scratch, max_bytes, False)
        assert found is not None  # (an error status raised)
        return found

    def map(self, raw: Any) -> dict[Any, Any]:
        """A map as a dict. Its keys and its values are two tensors (copies ORT makes), each
        read into a list at once, through no kind query, view or owner chain."""
        api, out, alloc = self.api, self.out, self.alloc
        keys = self.flat(ffi.gc(call_into(api.GetValue, out, raw, 0, alloc), api.ReleaseValue))
        values = self.flat(ffi.gc(call_into(api.GetValue, out, raw, 1, alloc),
                                  api.ReleaseValue))
        return dict(zip(keys, values))

    def flat(self, owner: Any) -> list[Any]:
        """The elements of the tensor ``owner`` (one only this reader uses) as a flat list;
        the value released."""
        et, shape, copy = self.copy(owner, sys.maxsize)
        if copy is not None:
            items = copy.reshape(-1).tolist()
        elif et == ElementType.STRING:
            count = math.prod(shape)
            items = _string_items(self.api, owner, count) if count else []
        else:  # (sub-byte types: converted)
            return tensor_view(self.api, owner, et, shape, owner, True).reshape(-1).tolist()
        ffi.release(owner)
        return items


def _sparse_to_python(api: Api, raw: Any) -> Any:
    from .sparse import sparse_to_python

    return sparse_to_python(api, raw)
