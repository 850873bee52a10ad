"""onnxruntime's checks of a run's arguments, worked out only after ortc's ``run`` failed, so
that compat raises what onnxruntime raises (class, message, order) at no cost to a good run
(but for a sequence input's feed, checked before: sequence_feed_taken)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

import ortc
from ortc._numpy_bridge import exports_buffer, is_array_like
from ortc.dtypes import dtype_for, element_type_for

from ._errors import Fail, InvalidArgument, _OrtStyle, translate
from ._ortvalue import OrtValue
from ._run_options import RunOptions
from ._sparse import SparseTensor


def feedable(sess: ortc.Session) -> dict[str, ortc.NodeArg]:
    return {a.name: a for a in (*sess.inputs, *sess.overridable_initializers)}


def validate_input(required: Sequence[str], feed_names: list[Any]) -> None:
    """onnxruntime's Python-side check: every required (non-optional) input is fed."""
    missing = [n for n in required if n not in feed_names]
    if missing:
        raise ValueError(f"Required inputs ({missing}) are missing from input feed "
                         f"({feed_names}).")


def lists_converted(sess: ortc.Session, feeds: Any) -> dict[str, Any] | None:
    """onnxruntime makes a list feed of a tensor input into an array of the input's type with
    numpy's unchecked casts (``[1.5]`` for int64 is ``[1]``), and a string input's elements that
    are not strings into ``str(element)`` (``None`` is ``"None"``, ``nan`` is ``"nan"``: pandas
    columns with missing values); ortc refuses both. The feeds so converted, or None when there
    is nothing to convert or a list does not convert (explain() says what onnxruntime says)."""
    if not isinstance(feeds, Mapping):
        return None
    known = feedable(sess)
    out, changed = dict(feeds), False
    for name, data in feeds.items():
        arg = known.get(name)
        if arg is not None and arg.type.kind == ortc.ValueKind.MAP and isinstance(data, Mapping):
            as_map = _map_as(data, arg.type)
            if as_map is not None:
                out[name], changed = as_map, True
            continue
        dtype = _tensor_dtype(arg.type) if arg is not None else None
        if dtype is None:
            continue
        if dtype.kind in "OUS":
            strings = _as_strings(data)
            if strings is not None:
                out[name], changed = strings, True
        elif isinstance(data, (list, tuple)):
            converted = _list_as(data, dtype)
            if converted is None:
                return None
            out[name], changed = converted, True
    return out if changed else None


def _tensor_dtype(info: ortc.TypeInfo) -> np.dtype[Any] | None:
    """The dtype of the arrays an input of type ``info`` takes: a tensor's, or the tensor's
    an optional holds (onnxruntime converts lists for both); None for other inputs."""
    if info.kind == ortc.ValueKind.OPTIONAL and info.element is not None:
        info = info.element
    if info.kind != ortc.ValueKind.TENSOR or info.element_type is None:
        return None
    try:
        return dtype_for(info.element_type)
    except TypeError:  # (ml_dtypes missing)
        return None


def _list_as(data: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any] | None:
    """``data`` (a list) as an array of ``dtype`` the way onnxruntime converts it, or None when
    numpy cannot (ragged lists, ints out of the type's range, NaN for an int type)."""
    try:
        return np.array(data, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return None


def _int_key(key: Any) -> bool:
    return isinstance(key, (int, np.integer)) and -2**63 <= int(key) < 2**63


def _number(value: Any) -> bool:
    """A value onnxruntime reads as a number (Python's own test for one: an int, a float, a
    complex, a numpy scalar or 0-d array, a Decimal, ...); a str or None is none."""
    kind = type(value)
    return isinstance(value, complex) or hasattr(kind, "__float__") or hasattr(kind, "__index__")


def _dict_keys_are_ints(data: Mapping[Any, Any]) -> bool | None:
    """How onnxruntime reads a dict's keys, decided by its first key: as int64 (True: a number,
    and every key must then be an int64), as strings (False: a str; every later key is then
    read as its ``str()``), or not at all (None: any other first key)."""
    first = next(iter(data))
    if isinstance(first, str):
        return False
    return True if _number(first) else None


def _map_as(data: Mapping[Any, Any], info: ortc.TypeInfo) -> ortc.Value | None:
    """A dict for a map input as a map the way onnxruntime reads it: its keys as int64 or as
    strings as its first key says (``{"a": 1, 2: 3}`` has the keys "a" and "2"), its numbers
    converted to the map input's types (``{"a": 1}`` for map(string, float) is
    ``{"a": 1.0}``), or to float where the keys are not of the input's kind (the run then
    reports the type mismatch, as onnxruntime does); None when a key or value is not of a kind
    onnxruntime converts (it refuses those)."""
    if info.key_type is None or info.element is None or info.element.element_type is None \
            or not data:
        return None
    key_dtype, value_dtype = dtype_for(info.key_type), dtype_for(info.element.element_type)
    if key_dtype is None or value_dtype is None:
        return None
    ints = _dict_keys_are_ints(data)
    if ints is None:
        return None
    if ints != (key_dtype.kind != "O"):  # the keys make a map of another type than the input's
        key_dtype, value_dtype = np.dtype(np.int64 if ints else object), np.dtype(np.float32)
    items = list(data.items()) if ints else list({str(k): v for k, v in data.items()}.items())
    numbers = value_dtype.kind != "O"
    if not all((_int_key(k) or not ints) and (_number(v) if numbers else isinstance(v, str))
               for k, v in items):
        return None
    try:
        keys = np.array([k for k, _ in items], dtype=key_dtype)
        values = np.array([v for _, v in items], dtype=value_dtype)
    except (TypeError, ValueError, OverflowError):
        return None
    return ortc.Value.from_map((keys, values))


def _map_item_refused(data: Mapping[Any, Any], value_type: ortc.ElementType
                      ) -> BaseException | None:
    """What onnxruntime refuses in a dict fed for a map of ``value_type`` values (a dict fed
    for another input is read as for a map of floats), item by item in the dict's order: a
    first key neither a number nor a str; once the first key is a number, a key that is no int64
    (a str, a float, 2**70); a value that is no number for a map of numbers (a str, None),
    or a number that is no real number (a complex: Python's TypeError, within its Fail)."""
    ints = _dict_keys_are_ints(data)
    if ints is None:
        return RuntimeError(f"A map's first key decides its key type, int or str; "
                            f"{type(next(iter(data)))} is neither")
    numbers = value_type != ortc.ElementType.STRING
    for k, v in data.items():
        if ints and not _int_key(k):
            return RuntimeError(f"Unexpected key type {type(k)}, it cannot be an int64 map "
                                f"key")
        if numbers and not _number(v):
            return RuntimeError(f"Unexpected value type {type(v)}, it cannot be a value of a "
                                f"map of {value_type.name}")
        if numbers:
            try:
                float(v)
            except (TypeError, ValueError) as err:
                fail = Fail(f"{type(err)}: {err}", 1)
                fail.plain = True  # type: ignore[attr-defined]
                return fail
    return None


def _as_strings(data: Any) -> np.ndarray[Any, Any] | None:
    """A list or object array for a string input with ``str(x)`` for each element ``x`` that is
    neither str nor bytes, or an empty list as an empty string array (numpy makes float64 of
    it, which the input refuses); None when there is no such element (or no such array)."""
    listed = isinstance(data, (list, tuple))
    if listed:
        try:
            data = np.array(data, dtype=object)
        except (TypeError, ValueError):
            return None
    if not isinstance(data, np.ndarray) or data.dtype != object:
        return None
    if listed and data.size == 0:  # (an array is never converted again: no rerun loop)
        return data
    flat = data.reshape(-1).tolist()
    if all(isinstance(x, (str, bytes)) for x in flat):
        return None
    text = [x if isinstance(x, (str, bytes)) else str(x) for x in flat]
    out = np.empty(len(text), dtype=object)
    out[:] = text
    return out.reshape(data.shape)


def conversion_refused(sess: ortc.Session, feeds: Mapping[str, Any], failed: bool = False
                       ) -> BaseException | None:
    """onnxruntime's error for the first feed its conversion refuses before a run starts
    (run_async raises it at the call), or None. onnxruntime converts the feeds in the order
    of their names, before it looks at names the model lacks, at element types or at the
    output names: what is refused here is found first whatever else is wrong. ``failed``:
    the run failed, and what compat takes on purpose but onnxruntime refuses (an array
    producer that is no numpy array) is refused as onnxruntime refuses it."""
    known = feedable(sess)
    for name in sorted(feeds, key=str):
        refused = feed_refused(known.get(name), name, feeds[name], failed)
        if refused is not None:
            return refused
    return None


_NOT_A_LIST = "Input must be a list of dictionaries or a single numpy array for input '{}'."


def feed_refused(arg: ortc.NodeArg | None, name: str, data: Any, failed: bool = False
                 ) -> BaseException | None:
    """What onnxruntime's conversion of the feed ``name`` raises (``arg`` its input, None
    for a name the model lacks), or None where it converts it, and where compat takes it on
    purpose (COMPAT.md: a scalar for a scalar-shaped input, a tuple or a buffer or another
    array producer for a tensor input, a list of dicts for a sequence of maps). Once the run
    ``failed``, an array producer that is no numpy array gets onnxruntime's error too (as a
    buffer whose dtype does not fit does: COMPAT.md)."""
    info = arg.type if arg is not None else None
    if isinstance(data, np.ndarray):
        return _numpy_type_refused(data) or _text_refused(info, data)
    if data is None or isinstance(data, (OrtValue, ortc.Value)):
        return None
    if isinstance(data, (str, bytes)):
        return RuntimeError(_NOT_A_LIST.format(name))
    if isinstance(data, (float, int, np.generic, SparseTensor)):
        if arg is not None and arg.shape == () and not isinstance(data, SparseTensor):
            return None
        return RuntimeError(f"Unable to handle object of type {type(data)}")
    if isinstance(data, dict):
        return _dict_refused(info, name, data)
    if isinstance(data, list) or isinstance(data, tuple) and info is not None \
            and _tensor_dtype(info) is not None and not _python_map_type(data):
        return _list_refused(info, name, data)  # (compat takes such a tuple as a list)
    if isinstance(data, tuple) or failed or not _feedable_kind(data):
        try:
            items = iter(data)
        except TypeError:
            return RuntimeError(f"Unable to handle object of type {type(data)}")
        return _iterable_refused(name, items)
    return None


def _dict_refused(info: ortc.TypeInfo | None, name: str, data: dict[Any, Any]
                  ) -> BaseException | None:
    """onnxruntime makes a dict a map of str or int64 keys to floats, whatever the input (a
    map input's own types here: compat converts to them); what it refuses in one, or None."""
    if info is not None and info.kind == ortc.ValueKind.MAP:
        value_type = info.element.element_type if info.element is not None else None
        if not data:  # (an empty one for a map input runs: COMPAT.md)
            return None
        wrong = _map_item_refused(data, value_type or ortc.ElementType.FLOAT)
    elif not data:
        return RuntimeError("Size of dictionary is empty, unable to run the prediction.")
    else:
        wrong = _map_item_refused(data, ortc.ElementType.FLOAT)
    if wrong is None or isinstance(wrong, Fail):
        return wrong
    return RuntimeError(f"{wrong} for input '{name}'.")


def _list_refused(info: ortc.TypeInfo | None, name: str, data: Sequence[Any]
                  ) -> BaseException | None:
    """What onnxruntime raises converting the list ``data`` for an input of type ``info``
    (None: a name the model lacks), or None."""
    if info is None:  # it converts a list as the input's type says, and finds none
        return RuntimeError(f"Failed to find input with name: {name} in the model input def "
                            f"list")
    if info.kind == ortc.ValueKind.MAP:  # read as a tensor's, without a type
        return RuntimeError("The graph is missing type information needed to construct the "
                            "ORT tensor")
    sequence = sequence_type(info)
    if sequence is not None:
        return _items_refused(sequence, data)
    dtype = _tensor_dtype(info)
    if dtype is not None and dtype.kind not in "OUS" and _list_as(data, dtype) is None:
        return RuntimeError("Could not create tensor from given input list")
    return _text_refused(info, data)


def _text_refused(info: ortc.TypeInfo | None, data: Any) -> BaseException | None:
    """Python's own error where onnxruntime meets it reading the strings fed for a string
    input: UnicodeEncodeError for a str UTF-8 cannot encode (a lone surrogate; from a numpy
    'U' array, its engine's Fail carrying that error's text), UnicodeDecodeError for
    fixed-width bytes (numpy 'S') that are no UTF-8; None else."""
    dtype = _tensor_dtype(info) if info is not None else None
    if dtype is None or dtype.kind not in "OUS":
        return None
    try:
        arr = data if isinstance(data, np.ndarray) else np.asarray(data)
    except (TypeError, ValueError):
        return None
    if arr.dtype.kind not in "OUS":
        return None
    for item in arr.reshape(-1).tolist():
        try:
            if isinstance(item, str):
                item.encode("utf-8")
            elif isinstance(item, bytes) and arr.dtype.kind == "S":
                item.decode("utf-8")
        except UnicodeError as err:
            if isinstance(data, np.ndarray) and arr.dtype.kind == "U":
                fail = Fail(f"{type(err)}: {err}", 1)
                fail.plain = True  # type: ignore[attr-defined]
                return fail
            return err
    return None


def sequence_type(info: ortc.TypeInfo) -> ortc.TypeInfo | None:
    """The sequence type an input of type ``info`` takes a list for: its own, or the one an
    optional holds; None for other inputs."""
    if info.kind == ortc.ValueKind.OPTIONAL and info.element is not None:
        info = info.element
    return info if info.kind == ortc.ValueKind.SEQUENCE else None


def _items_refused(info: ortc.TypeInfo, data: Sequence[Any]) -> BaseException | None:
    """onnxruntime's error for a list fed for a sequence input: each item must be a numpy
    array (not a list, a number, a numpy scalar, an OrtValue; a 0-d array is one) of the
    sequence's element type. It makes no sequence of maps from a list (compat does, of
    dicts: COMPAT.md)."""
    element = info.element
    if element is None or element.kind != ortc.ValueKind.TENSOR:
        if data and all(isinstance(item, dict) for item in data):
            return None
        return RuntimeError("tensor type 0 is not supported")
    for item in data:
        if not isinstance(item, np.ndarray):
            return RuntimeError("CreateSequenceOfTensors: Input is not a tensor")
        refused = _numpy_type_refused(item)
        if refused is not None:
            return refused
        try:
            other = element_type_for(item.dtype) != element.element_type
        except TypeError:  # a dtype with no element type at all
            other = True
        if other:
            return RuntimeError("TensorSeq: tensor to be added has a different data type.")
    return None


def sequence_feed_taken(tensors: bool, data: Any) -> bool:
    """Whether onnxruntime's conversion takes ``data``, a list or tuple native ortc takes
    for a sequence input (of tensors if ``tensors``, else of maps), as it is: False for a
    list item that is no numpy array (a nested list, a number, an OrtValue), a tuple for a
    sequence of tensors, an empty or non-dict one for a sequence of maps (feed_refused says
    what it raises). Anything else is True: native ortc refuses what onnxruntime does."""
    if isinstance(data, list):
        if tensors:
            return all(isinstance(item, np.ndarray) for item in data)
        return bool(data) and all(isinstance(item, dict) for item in data)
    if isinstance(data, tuple):
        return not tensors and bool(data) and all(isinstance(item, dict) for item in data)
    return True


_EMPTY = object()


def _iterable_refused(name: str, data: Any) -> BaseException | None:
    """onnxruntime's error for an iterable that is neither a list, a dict nor an array (a
    tuple, a generator, a set, a range), judged by its first item: None when that is a dict
    (it makes a sequence of maps, which the run checks against the input's type)."""
    try:
        first = next(iter(data), _EMPTY)  # (an iterator is its own iter())
    except Exception:  # noqa: BLE001 - an iterable that fails to iterate is no list either
        return RuntimeError(_NOT_A_LIST.format(name))
    if first is _EMPTY:
        return RuntimeError(f"Input '{name}' must not be empty.")
    if isinstance(first, dict):
        return None
    if isinstance(first, np.ndarray):
        return RuntimeError(f"Iterable of {type(first)} should be given as array for input "
                            f"'{name}'.")
    return RuntimeError(_NOT_A_LIST.format(name))


def _numpy_type_refused(data: Any) -> RuntimeError | None:
    """onnxruntime's error for an array its numpy conversion has no type for (complex,
    datetime, timedelta), whatever the input's type; None for any other feed."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "cmM":
        return RuntimeError(f"Numpy_type {data.dtype.num} can't be converted to MLDataType.")
    return None


def explain(sess: ortc.Session, required: Sequence[str], err: BaseException,
            output_names: Any, feeds: Any, run_options: Any) -> BaseException:
    """What onnxruntime raises for the failed run, in its order: its Python-side check of
    the required inputs, its argument conversion (types of the arguments, then each feed's
    conversion, in the order of their names), then the run's checks of input names and
    types and of output names (ortc does some of them itself, in its own words). A
    KeyboardInterrupt (or another BaseException that is no Exception) stays what it is."""
    if not isinstance(err, Exception):
        return err
    try:
        validate_input(required, list(feeds.keys()))
    except (ValueError, AttributeError) as mine:
        return mine
    if run_options is not None and not isinstance(run_options, RunOptions):
        return TypeError(f"run(): incompatible function arguments: run_options must be an "
                         f"onnxruntime.RunOptions, not {type(run_options).__name__}")
    if isinstance(output_names, str) or (
            isinstance(output_names, (list, tuple))
            and not all(isinstance(n, (str, bytes)) for n in output_names)):
        return TypeError(f"run(): incompatible function arguments: output_names must be a "
                         f"sequence of str or None, not {output_names!r}")
    for name in feeds:
        if not isinstance(name, str):  # onnxruntime's pybind conversion of the feeds refuses it
            return TypeError(f"run(): incompatible function arguments: input names must be "
                             f"str, not {type(name).__name__} {name!r}")
    refused = conversion_refused(sess, feeds, failed=True)
    if refused is not None:
        return refused
    if isinstance(err, ortc.InvalidArgument) and not isinstance(err, _OrtStyle):
        known = feedable(sess)
        for name, data in feeds.items():
            arg = known.get(name)
            if arg is None:
                return InvalidArgument(f"Invalid input name: {name}", 2)
            wrong = kind_mismatch(arg, data) or type_mismatch(arg, data)
            if wrong:
                return InvalidArgument(wrong, 2)
        outputs = {a.name for a in sess.outputs}
        for name in output_names or ():
            if name not in outputs:
                return InvalidArgument(f"Invalid output name:{name}", 2)
    return translate(err)


def kind_mismatch(arg: ortc.NodeArg, data: Any) -> str | None:
    """onnxruntime's message when ``data`` is not of the input's kind: a tensor for a
    sequence, a map or an optional of either (its number is its type category: 3 a sequence
    of tensors, 5 an optional, 1 any other non-tensor), a dict or a tuple of dicts (a map of str or int64 keys to floats, or a
    sequence of them) for another input, or for a map of other keys."""
    info = arg.type
    if _is_tensor(data) and (info.kind in (ortc.ValueKind.SEQUENCE, ortc.ValueKind.MAP) or (
            info.kind == ortc.ValueKind.OPTIONAL and _tensor_dtype(info) is None)):
        category = 5 if info.kind == ortc.ValueKind.OPTIONAL else 3 \
            if info.kind == ortc.ValueKind.SEQUENCE and info.element is not None \
            and info.element.kind == ortc.ValueKind.TENSOR else 1
        return (f"input with name: '{arg.name}' expected to be of type: {category} but "
                f"received a tensor")
    actual = _python_map_type(data)
    if actual is None:
        return None
    expected = info.type_str
    if info.kind == ortc.ValueKind.MAP and isinstance(data, dict) or \
            info.kind == ortc.ValueKind.SEQUENCE and isinstance(data, tuple):
        # compat converts the values to the map's type: only the keys must agree
        if expected.split(",")[0] == actual.split(",")[0]:
            return None
    return f"Unexpected input data type. Actual: (({actual})) , expected: (({expected}))"


def _is_tensor(data: Any) -> bool:
    if isinstance(data, np.ndarray):
        return True
    value = data._value if isinstance(data, OrtValue) else data
    return isinstance(value, ortc.Value) and value.has_value() and value.is_tensor


def _python_map_type(data: Any) -> str | None:
    """The type onnxruntime makes of a (non-empty) dict, a map of str or int64 keys to
    floats, or of a tuple of dicts, a sequence of such maps; None for other data."""
    if isinstance(data, tuple) and data and isinstance(data[0], dict):
        inner = _python_map_type(data[0])
        return f"seq({inner})" if inner is not None else None
    if isinstance(data, dict) and data:
        key = "string" if isinstance(next(iter(data)), str) else "int64"
        return f"map({key},tensor(float))"
    return None


def _feedable_kind(data: Any) -> bool:
    """Whether ortc's run takes ``data`` as a feed at all (whatever its type or shape), and
    onnxruntime too: it has no conversion for what only exports the buffer protocol (a
    memoryview, array.array, a bytearray), which ortc reads in place (COMPAT.md)."""
    return (data is None or isinstance(data, (list, tuple, dict, ortc.Value, OrtValue))
            or (is_array_like(data) and not _buffer_only(data)))


def _buffer_only(data: Any) -> bool:
    return isinstance(data, memoryview) or (exports_buffer(data) and not any(
        hasattr(data, a) for a in ("__array_interface__", "__array_struct__", "__array__",
                                   "__dlpack__")))


def type_mismatch(arg: ortc.NodeArg, data: Any) -> str | None:
    """onnxruntime's message when ``data`` is an array of another element type."""
    if not isinstance(data, np.ndarray) or arg.type.kind != ortc.ValueKind.TENSOR:
        return None
    try:
        got = element_type_for(data.dtype)
    except TypeError:
        return None
    expected = arg.type.element_type
    if expected is None or got == expected:
        return None
    actual = ortc.TypeInfo(ortc.ValueKind.TENSOR, got).type_str
    return (f"Unexpected input data type. Actual: ({actual}) , expected: "
            f"({arg.type.type_str})")


def voids_as_strings(feeds: Mapping[str, Any]) -> dict[str, Any] | None:
    """The feeds with each numpy void array (raw-bytes items; a structured array too) as the
    strings onnxruntime reads it as: each item's bytes, all of them (NULs too), as UTF-8, and
    Python's UnicodeDecodeError for bytes that are not; None when no feed is one."""
    if not any(isinstance(v, np.ndarray) and v.dtype.kind == "V" for v in feeds.values()):
        return None
    out: dict[str, Any] = {}
    for name, data in feeds.items():
        if isinstance(data, np.ndarray) and data.dtype.kind == "V":
            raw, width = np.ascontiguousarray(data).tobytes(), data.dtype.itemsize
            strings = np.empty(data.size, dtype=object)
            strings[:] = [raw[i * width:(i + 1) * width].decode("utf-8")
                          for i in range(data.size)]
            data = strings.reshape(data.shape)
        out[name] = data
    return out
