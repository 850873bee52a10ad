"""onnxruntime's ``IOBinding`` over :class:`ortc.IoBinding` (CPU memory)."""

from __future__ import annotations

import errno
import math
import mmap
import operator
import types
from numbers import Number
from typing import Any, Sequence

import cffi
import numpy as np

import ortc
from ortc._ffi import ffi
from ortc.dtypes import dtype_for, element_type_for

from ._device import OrtDevice, c_int, cpu_only
from ._errors import shallow_copy, unpicklable
from ._ortvalue import _NO_TENSOR_OF, _ONNX_TYPES, OrtValue, c_element_type

#: ONNX's number of the string element type
_STRING_NUMBER = 8
#: an argument not given (the forms of onnxruntime's C++ binding leave them out)
_UNSET: Any = object()


def _memory_at(address: Any, element_type: Any, shape: Sequence[int], what: str
               ) -> tuple[int, np.dtype[Any], int, tuple[int, ...], int]:
    """(address, dtype, ORT element type or -1, dims, size in bytes) of ``shape`` elements at
    a raw CPU address (onnxruntime's buffer_ptr), once the address is known to be usable.

    An address that cannot be one is refused as onnxruntime refuses it: not an integer, or
    past int64, TypeError (its argument conversion); 0 RuntimeError (its check of output
    pointers, here of inputs too, whose 0 it read and crashed on). So is memory this process
    has not mapped, where the same crash would follow (a negative or made-up address).
    Libraries rebind pointers before every run: the common arguments (a plain int, a list of
    ints, a dtype seen before) take no detour."""
    if type(address) is not int:
        if isinstance(address, (bool, np.bool_)) or not isinstance(address, (int, np.integer)):
            raise TypeError(f"{what}(): incompatible function arguments: buffer_ptr must be "
                            f"an int, not {type(address).__name__}")
        address = int(address)
    if address >= 1 << 63 or address < -(1 << 63):
        raise TypeError(f"{what}(): incompatible function arguments: buffer_ptr {address} "
                        f"does not fit int64")
    try:  # (an ONNX number only as an int: a float or numpy scalar equal to one is no key)
        dtype, et = _BY_NUMBER[element_type] if type(element_type) is int \
            else _DTYPES[element_type]
    except (KeyError, TypeError):  # (an unhashable element type is left to np.dtype)
        dtype, et = _dtype_of(element_type, what)
    try:
        dims, count = _SHAPES[shape]
    except (KeyError, TypeError):  # (a list: unhashable)
        dims, count = _dims_of(shape, what)
    if count < 0:  # onnxruntime's class for a negative dimension
        raise RuntimeError(f"{what}: shape {list(dims)} has a negative dimension")
    size = count * dtype.itemsize
    if address <= 0:
        raise RuntimeError(f"{what}: buffer_ptr {address}: pointer to data memory is not valid")
    if size and not _mapped(address, size):
        raise RuntimeError(f"{what}: buffer_ptr {address:#x}: no memory of this process is "
                           f"mapped at all of its {size} bytes ({list(dims)} of {dtype}): "
                           f"pointer to data memory is not valid")
    return address, dtype, et, dims, size


#: element type as onnxruntime's callers give it (a numpy type, a dtype, a type name) ->
#: (numpy dtype, ORT element type or -1), filled as they come; numbers are never keys here
#: (a numpy scalar or a float equal to an ONNX number would find that number's entry)
_DTYPES: dict[Any, tuple[np.dtype[Any], int]] = {}
#: an ONNX element type number given as a Python int -> the same
_BY_NUMBER: dict[int, tuple[np.dtype[Any], int]] = {}


#: shape tuple (as its caller gives it) -> (dims, element count, or -1 with a negative
#: dimension), filled as they come. (A tuple of floats equal to one seen, (3.0, 2.0) after
#: (3, 2), finds its entry and binds as it: docs/COMPAT.md)
_SHAPES: dict[Any, tuple[tuple[int, ...], int]] = {}
_INT64 = 1 << 63
#: the iterables without __getitem__ that pybind11 takes for a vector argument
_ITERABLES_TAKEN: tuple[type, ...] = (types.GeneratorType, set, frozenset, type({}.keys()),
                                      type({}.values()), type({}.items()), map, zip)


def _dims_of(shape: Sequence[int], what: str) -> tuple[tuple[int, ...], int]:
    """(dims, element count or -1) of a shape read as onnxruntime's argument conversion reads
    it (pybind11's, to a vector of int64): a sequence but a str or bytes (an object with
    __getitem__ but a dict), a generator, a set, a dict's view or a map object, of integers
    (numpy's too) or other numbers int() takes but floats; anything else (an iterator such as
    iter(list)), or a dimension past int64, is its TypeError."""
    items: Any = shape
    if type(shape) is not list and type(shape) is not tuple:
        if isinstance(shape, (str, bytes, dict)) or not (
                hasattr(type(shape), "__getitem__") or isinstance(shape, _ITERABLES_TAKEN)):
            raise TypeError(f"{what}(): incompatible function arguments: the shape must be a "
                            f"sequence of integers, not {type(shape).__name__}")
        items = list(shape)  # (a generator is read once)
    try:
        dims = tuple(map(operator.index, items))  # (an int as it is, a numpy integer as an int)
    except TypeError:
        dims = tuple(c_int(d, -_INT64, _INT64 - 1, what, "shape") for d in items)
    if not dims:
        count = 1
    elif min(dims) < 0:
        if min(dims) < -_INT64:
            raise TypeError(f"{what}(): incompatible function arguments: dimension "
                            f"{min(dims)} does not fit int64")
        count = -1
    else:
        count = math.prod(dims)
        if (count >= _INT64 or count == 0) and max(dims) >= _INT64:
            raise TypeError(f"{what}(): incompatible function arguments: dimension "
                            f"{max(dims)} does not fit int64")
    found = dims, count
    if isinstance(shape, tuple) and len(_SHAPES) < 64:  # (an array's, torch's: a tuple)
        try:
            _SHAPES[shape] = found
        except TypeError:  # an unhashable item
            pass
    return found


def _dtype_of(element_type: Any, what: str) -> tuple[np.dtype[Any], int]:
    """(numpy dtype, ORT element type or -1) of an element type as onnxruntime reads it: an
    integer (a bool, a numpy integer too) is an ONNX type number, anything else what
    np.dtype makes of it; what makes no tensor it can bind is its RuntimeError."""
    if isinstance(element_type, (int, np.integer)):
        number = int(element_type)
        if not -(1 << 31) <= number < 1 << 31:  # (no int32: it tries it as a numpy type)
            raise RuntimeError(f"{what}: element type {number} is not a valid numpy type")
        if number not in _ONNX_TYPES or number in _NO_TENSOR_OF:
            raise RuntimeError(f"{what}: tensor type {number} is not supported")
        if number == _STRING_NUMBER:
            raise RuntimeError(f"{what}: only tensors of numbers can be bound by address, "
                               f"not strings")
        try:
            dtype = dtype_for(c_element_type(number))
        except TypeError as err:  # (ml_dtypes missing)
            raise RuntimeError(f"{what}: {err}") from None
    else:
        try:
            dtype = np.dtype(element_type)
        except (TypeError, ValueError):
            raise RuntimeError(f"{what}: element type {element_type!r} is not a valid numpy "
                               f"type") from None
        if dtype.kind in "OSUV":
            raise RuntimeError(f"{what}: only tensors of numbers can be bound by address, "
                               f"not {dtype}")
    assert dtype is not None
    try:
        et = int(element_type_for(dtype))
    except Exception:  # noqa: BLE001 - no ORT type: the general path says what is wrong
        et = -1
    if type(element_type) is int:
        if len(_BY_NUMBER) < 64:
            _BY_NUMBER[element_type] = (dtype, et)
    elif not isinstance(element_type, (Number, np.generic)) and len(_DTYPES) < 64:
        try:
            _DTYPES[element_type] = (dtype, et)
        except TypeError:  # unhashable
            pass
    return dtype, et


#: mincore's result vector for ranges of up to 4096 pages, shared: nothing reads it, so
#: threads writing it at once do no harm
_VEC: Any = None
#: libc's mincore, declared for cffi (a cffi call costs a third of a ctypes one, and libraries
#: rebind pointers every run), its address as an integer: a pointer argument and an integer
#: one of its width travel alike on every ABI Linux runs on (LP64 and ILP32), and no cast
#: object is made per call
_libc_ffi = cffi.FFI()
_libc_ffi.cdef("int mincore(uintptr_t addr, size_t length, unsigned char *vec);"
               "uintptr_t sbrk(intptr_t increment);")
#: mincore, False where it cannot be had, None until first asked
_mincore: Any = None
#: where the process's brk heap starts (past every address where it is not known) and libc's
#: sbrk: [start, sbrk(0)) is one mapping by construction, so memory there (malloc's, most
#: small arrays') is known mapped without mincore's system call
_heap_start = 1 << 64
_sbrk: Any = None
_PAGE_MASK = mmap.PAGESIZE - 1
_PAGE_START = ~_PAGE_MASK
#: the longest range _VEC takes
_VEC_SPAN = 4096 * mmap.PAGESIZE


def _mapped(address: int, size: int) -> bool:
    """Whether every page of [address, address + size) is mapped in this process (Linux's
    mincore fails with ENOMEM on a range with an unmapped page: a made-up address is found
    without touching it). True where the question cannot be asked."""
    global _mincore, _VEC, _heap_start, _sbrk
    if _mincore is None:
        try:
            libc = _libc_ffi.dlopen(None)
            fn = getattr(libc, "mincore")
            _VEC = _libc_ffi.new("unsigned char[]", 4096)
            _mincore = fn
        except (AttributeError, OSError):
            _mincore = False
        if _mincore:
            try:  # (start_brk, field 47 of /proc/self/stat since Linux 3.5)
                with open("/proc/self/stat", "rb") as f:
                    start = int(f.read().rsplit(b")", 1)[1].split()[44])
                _sbrk = getattr(libc, "sbrk")
                if 0 < start <= _sbrk(0):
                    _heap_start = start
            except (OSError, IndexError, ValueError, AttributeError):
                pass
    if _heap_start <= address and address + size <= _sbrk(0):
        return True
    if not _mincore:
        return True
    start = address & ~_PAGE_MASK
    length = address + size - start
    if address + size > 1 << 64:
        return False
    vec = _VEC if length <= _VEC_SPAN else \
        _libc_ffi.new("unsigned char[]", (length + _PAGE_MASK) // (_PAGE_MASK + 1))
    if _mincore(start, length, vec) == 0:
        return True
    return _libc_ffi.errno != errno.ENOMEM


class IOBinding:
    """Inputs and outputs bound once to memory, for ``run_with_iobinding``."""

    # as onnxruntime: pickling refused, naming the session it holds (an extension object
    # there); copy.copy shares the native objects
    __reduce_ex__ = unpicklable("InferenceSession")
    __copy__ = shallow_copy

    def __init__(self, session: Any) -> None:
        self._session = session._native
        self._binding = session._native.io_binding()
        self._keep: dict[str, Any] = {}  # arrays whose memory is bound, kept alive

    @property
    def _iobinding(self) -> IOBinding:
        """Where onnxruntime keeps its C++ binding, which applications pass to
        ``session._sess.run_with_iobinding``: the binding itself here."""
        return self

    def _call(self, method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except ortc.OrtError as err:  # (ortc's thread-rule and closed errors stay as they are)
            # onnxruntime's IOBinding methods raise a plain RuntimeError for every failure
            raise RuntimeError(err.message) from err

    # (the binds and copies libraries make every run call the native binding straight, with
    # the translation of _call written out: no frame of their own in between)
    def bind_cpu_input(self, name: str, arr_on_cpu: Any) -> None:
        arr = arr_on_cpu if type(arr_on_cpu) is np.ndarray else np.asarray(arr_on_cpu)
        self._keep[name] = arr
        try:
            self._binding.bind_input(name, arr)
        except ortc.OrtError as err:
            raise RuntimeError(err.message) from err

    def bind_input(self, name: str, device_type: Any, device_id: Any = _UNSET,
                   element_type: Any = _UNSET, shape: Any = _UNSET,
                   buffer_ptr: Any = _UNSET) -> None:
        if device_id is _UNSET or buffer_ptr is _UNSET or device_type != "cpu" \
                or type(device_id) is not int or not -32768 <= device_id < 32768:  # (int16)
            self._bind_input_as_given(name, device_type, device_id, element_type, shape,
                                      buffer_ptr)
            return
        self._bind_pointer(name, buffer_ptr, element_type, shape, False)

    def _bind_input_as_given(self, name: str, device_type: Any, device_id: Any,
                             element_type: Any, shape: Any, buffer_ptr: Any) -> None:
        """``bind_input`` but for its common form: the forms of onnxruntime's C++ binding
        (``IOBinding._iobinding``, this object too), which libraries call directly:
        ``(name, array)`` and ``(name, OrtDevice, element_type, shape, buffer_ptr)``; and
        another device than the CPU or arguments missing."""
        given = (device_id, element_type, shape, buffer_ptr)
        if all(v is _UNSET for v in given):
            self.bind_cpu_input(name, device_type)
            return
        if isinstance(device_type, OrtDevice) and buffer_ptr is _UNSET \
                and shape is not _UNSET:
            cpu_only(device_type, 0, -1)
            self._bind_pointer(name, shape, device_id, element_type, False)
            return
        missing = [repr(n) for n, v in zip(("device_id", "element_type", "shape",
                                            "buffer_ptr"), given) if v is _UNSET]
        if missing:
            raise TypeError(f"IOBinding.bind_input() missing {len(missing)} required "
                            f"positional argument{'s' if len(missing) > 1 else ''}: "
                            f"{', '.join(missing)}")
        cpu_only(device_type, device_id, -1)
        self._bind_pointer(name, buffer_ptr, element_type, shape, False)

    def _bind_pointer(self, name: str, buffer_ptr: Any, element_type: Any,
                      shape: Sequence[int], output: bool) -> None:
        """Bind ``name`` to memory at a raw address (onnxruntime's buffer_ptr), checked as
        :func:`_memory_at`: as an OrtValue over it straight away (what libraries rebinding
        pointers every call need), or, for what that does not take, through a numpy view of
        it and the general bind."""
        # (the arguments libraries pass every call, an int address, a known type and shape,
        # over mapped memory, checked here without _memory_at's frames; anything else, or any
        # doubt, goes through _memory_at, which checks in onnxruntime's order)
        try:
            if type(buffer_ptr) is not int or not 0 < buffer_ptr < _INT64:
                raise KeyError
            dtype, et = _BY_NUMBER[element_type] if type(element_type) is int \
                else _DTYPES[element_type]
            dims, count = _SHAPES[shape]
            size = count * dtype.itemsize
            start = buffer_ptr & _PAGE_START
            length = buffer_ptr + size - start
            if count < 0 or size and not (_heap_start <= buffer_ptr and
                                          buffer_ptr + size <= _sbrk(0)) \
                    and (not _mincore or length > _VEC_SPAN or _mincore(start, length, _VEC)):
                raise KeyError
            address = buffer_ptr
        except (KeyError, TypeError):
            address, dtype, et, dims, size = _memory_at(
                buffer_ptr, element_type, shape, "bind_output" if output else "bind_input")
        key = "out:" + name if output else name
        try:
            bound = self._binding._bind_address(name, address, size, dims, et, output)
        except ortc.OrtError as err:
            raise RuntimeError(err.message) from err
        if bound:
            self._keep.pop(key, None)
            return
        arr = np.frombuffer(ffi.buffer(ffi.cast("char*", address), size), dtype,
                            math.prod(dims)).reshape(dims)
        self._keep[key] = arr
        self._call(self._binding.bind_output if output else self._binding.bind_input, name, arr)

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        self._keep[name] = ortvalue
        try:
            self._binding.bind_input(name, ortvalue._value)
        except ortc.OrtError as err:
            raise RuntimeError(err.message) from err

    def bind_output(self, name: str, device_type: str | OrtDevice = "cpu", device_id: Any = 0,
                    element_type: Any = None, shape: Any = None,
                    buffer_ptr: int | None = None) -> None:
        if device_type != "cpu" or type(device_id) is not int \
                or not -32768 <= device_id < 32768:  # (an int16 there)
            if isinstance(device_type, OrtDevice) and element_type is not None \
                    and buffer_ptr is None:
                # the C++ binding's (name, OrtDevice, element_type, shape, buffer_ptr)
                cpu_only(device_type, 0, -1)
                self._bind_pointer(name, shape, device_id, element_type, True)
                return
            cpu_only(device_type, device_id, -1)  # (an OrtDevice alone: the C++ form too)
        if buffer_ptr is None:
            try:
                self._binding.bind_output(name)
            except ortc.OrtError as err:
                raise RuntimeError(err.message) from err
            return
        if element_type is None or shape is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated "
                             "memory is provided")
        self._bind_pointer(name, buffer_ptr, element_type, shape, True)

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        self._keep["out:" + name] = ortvalue
        try:
            self._binding.bind_output(name, ortvalue._value)
        except ortc.OrtError as err:
            raise RuntimeError(err.message) from err

    def synchronize_inputs(self) -> None:
        self._call(self._binding.synchronize_inputs)

    def synchronize_outputs(self) -> None:
        self._call(self._binding.synchronize_outputs)

    def get_outputs(self) -> list[OrtValue]:
        return [OrtValue(v) for v in self._call(self._binding.get_output_values)]

    def copy_outputs_to_cpu(self) -> list[Any]:
        # copies, as the name says: get_outputs' arrays are views over the bound outputs,
        # which the next run with this binding writes again
        try:
            copies: list[Any] = self._binding.get_outputs(True)
        except ortc.OrtError as err:
            raise RuntimeError(err.message) from err
        return copies

    def clear_binding_inputs(self) -> None:
        self._binding.clear_binding_inputs()
        self._keep = {k: v for k, v in self._keep.items() if k.startswith("out:")}

    def clear_binding_outputs(self) -> None:
        self._binding.clear_binding_outputs()
        self._keep = {k: v for k, v in self._keep.items() if not k.startswith("out:")}
