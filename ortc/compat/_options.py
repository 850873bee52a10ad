"""onnxruntime's ``SessionOptions``: its attribute names and defaults.

A compat ``SessionOptions`` records what is set and builds a native :class:`ortc.SessionOptions`
for each session made with it (ORT copies options into a session, so this is the same contract:
changing the options afterwards does not change existing sessions).
"""

from __future__ import annotations

import operator
import os
from typing import Any, cast

import numpy as np

import ortc

from ._enums import ExecutionMode, ExecutionOrder, GraphOptimizationLevel
from ._errors import PYBIND_MODULE, InvalidArgument, NotImplemented as OrtNotImplemented, ort_error, \
    translate, unpicklable
from ._ortvalue import OrtValue

#: attribute -> default, as onnxruntime 1.32's SessionOptions has them
_SESSION_DEFAULTS: dict[str, Any] = {
    "enable_cpu_mem_arena": True,
    "enable_mem_pattern": True,
    "enable_mem_reuse": True,
    "enable_profiling": False,
    "execution_mode": ExecutionMode.ORT_SEQUENTIAL,
    "execution_order": ExecutionOrder.DEFAULT,
    "graph_optimization_level": GraphOptimizationLevel.ORT_ENABLE_ALL,
    "inter_op_num_threads": 0,
    "intra_op_num_threads": 0,
    "log_severity_level": -1,
    "log_verbosity_level": 0,
    "logid": "",
    "optimized_model_filepath": "",
    "profile_file_prefix": "onnxruntime_profile_",
    "use_deterministic_compute": False,
    "use_per_session_threads": True,
}
#: the session options ORT reads from a model's "ort_config" metadata
_MODEL_CONFIG_KEYS = ("intra_op_num_threads", "inter_op_num_threads", "execution_mode",
                      "graph_optimization_level", "enable_profiling")

_ENUM_ATTRS = {"execution_mode": ExecutionMode, "execution_order": ExecutionOrder,
               "graph_optimization_level": GraphOptimizationLevel}
_BOOL_ATTRS = {"enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse",
               "enable_profiling", "use_deterministic_compute", "use_per_session_threads"}
_INT_ATTRS = {"inter_op_num_threads", "intra_op_num_threads", "log_severity_level",
              "log_verbosity_level"}


def no_attribute(obj: object, name: str, reading: bool = False) -> AttributeError:
    # onnxruntime's classes are extension types: reading an unknown attribute gets CPython's
    # message, which cuts the type's name at 50 characters; setting one gets pybind11's
    full = f"{PYBIND_MODULE}.{type(obj).__name__}"
    return AttributeError(f"'{full[:50] if reading else full}' object has no attribute "
                          f"{name!r}")


def checked(name: str, value: Any) -> Any:
    """The value as onnxruntime's setter takes it, converted as pybind11 converts it: a flag
    from None or anything with a truth value of its own (``1``, ``np.array([1])``, not a str
    or a list), an int from an int (a bool too) or what ``int()`` reads as a number (a numpy
    bool or float, a Decimal: truncated; not a Python float) in the C int range, a str from a
    str or UTF-8 bytes (others: UnicodeDecodeError, as onnxruntime raises reading them back);
    else TypeError."""
    if name in _ENUM_ATTRS:
        if not isinstance(value, _ENUM_ATTRS[name]):
            raise TypeError(f"{name} must be an onnxruntime.{_ENUM_ATTRS[name].__name__}, not "
                            f"{type(value).__name__} {value!r}")
    elif name in _BOOL_ATTRS:
        if value is not None:
            value = _flag(name, value)
        value = bool(value)
    elif name in _INT_ATTRS:
        number = _c_int(value)
        if number is None:
            raise TypeError(f"{name} must be an int (a C int), not {type(value).__name__} "
                            f"{value!r}")
        value = number
    elif isinstance(value, bytes):
        value = value.decode("utf-8")
    elif not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def _flag(name: str, value: Any) -> bool:
    """pybind11's bool conversion: the truth value of a type that defines one (a list's comes
    from its length, which pybind11 does not read); one that fails is a TypeError."""
    if not hasattr(type(value), "__bool__"):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - an array of several elements: no truth value
        raise TypeError(f"{name} must be a bool, not {type(value).__name__} {value!r}"
                        ) from None


def _c_int(value: Any, low: int = -2**31, high: int = 2**31) -> int | None:
    """pybind11's conversion to a C integer in ``[low, high)`` (a C int unless told), or
    None: an integer (``__index__``), else, but for a Python float, what ``int()`` makes of a
    number (numpy's bool and float scalars, Decimal, Fraction: truncated, as pybind11 falls
    back to it)."""
    if isinstance(value, float):
        return None
    try:
        number = operator.index(value)
    except TypeError:
        kind = type(value)
        if not (isinstance(value, complex) or any(hasattr(kind, attr) for attr in (
                "__index__", "__int__", "__float__"))):
            return None
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):
            return None
    return number if low <= number < high else None


def _config_text(text: Any) -> str | None:
    """A config key or value as onnxruntime's binding takes it (a str, or bytes, which must be
    UTF-8 here: UnicodeDecodeError, as onnxruntime raises reading such an entry back), else
    None."""
    if isinstance(text, bytes):
        return text.decode("utf-8")
    return text if isinstance(text, str) else None


def config_pair(method: str, key: Any, value: Any) -> tuple[str, str]:
    """(key, value) of a config entry: str or UTF-8 bytes, TypeError for anything else (a
    number, a bool, None). A NUL inside either raises InvalidArgument here: ORT reads C
    strings, so onnxruntime stores only what comes before it, silently."""
    key_text, value_text = _config_text(key), _config_text(value)
    if key_text is None or value_text is None:
        raise TypeError(f"{method}(): incompatible function arguments: the key and the value "
                        f"must be str (or UTF-8 bytes), not {type(key).__name__} and "
                        f"{type(value).__name__}")
    if not key_text or len(key_text.encode("utf-8", "surrogatepass")) > 1024:  # ORT's check
        # (bytes), which onnxruntime makes at the call
        raise RuntimeError("Config key is empty or longer than maximum length 1024")
    for what, text in (("key", key_text), ("value", value_text)):
        if "\0" in text:
            raise InvalidArgument(f"config {what} {text!r} contains a NUL byte: ORT would read "
                                  f"only what comes before it", 2)
    return key_text, value_text


def config_key(method: str, key: Any) -> str:
    """The key of a config lookup: str or UTF-8 bytes; None raises onnxruntime's class for it
    (RuntimeError), anything else its TypeError."""
    if key is None:
        raise RuntimeError(f"{method}(): the key is None, not a str")
    text = _config_text(key)
    if text is None:
        raise TypeError(f"{method}(): incompatible function arguments: the key must be a str, "
                        f"not {type(key).__name__}")
    return text


def _added_already(name: str) -> RuntimeError:
    """What onnxruntime raises for an initializer name given again (the later value would
    otherwise replace the first silently)."""
    return RuntimeError(f"[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : An OrtValue for this "
                        f"name has already been added: {name}")


def _require_tensor(name: str, value: OrtValue) -> None:
    """onnxruntime hands an initializer to ORT at once, which refuses what is not a tensor
    (and crashes on an empty optional): refused here, at the same call."""
    try:
        value._value._require_tensor(f"initializer {name!r}")
    except ortc.Error as err:
        raise translate(err) from None


class SessionOptions:
    """onnxruntime.SessionOptions: how sessions are built (see the module docstring)."""

    # as onnxruntime: pickling refused (its SessionOptions is an extension object)
    __reduce_ex__ = unpicklable("SessionOptions")

    __slots__ = ("_values", "_config", "_initializers", "_external", "_dim_names",
                 "_dim_denotations", "_custom_op_libraries", "_keywords_made")
    _keywords_made: tuple[tuple[Any, ...], dict[str, Any]] | None

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(_SESSION_DEFAULTS))
        object.__setattr__(self, "_config", {})
        object.__setattr__(self, "_initializers", {})
        object.__setattr__(self, "_external", {})
        object.__setattr__(self, "_dim_names", {})
        object.__setattr__(self, "_dim_denotations", {})
        object.__setattr__(self, "_custom_op_libraries", [])
        #: (the settings' values, what keywords() made of them): a session per call asks again
        object.__setattr__(self, "_keywords_made", None)

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise no_attribute(self, name, reading=True)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _SESSION_DEFAULTS:
            raise no_attribute(self, name)
        self._values[name] = checked(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*object.__dir__(self), *_SESSION_DEFAULTS})

    def add_session_config_entry(self, key: str, value: str) -> None:
        key, value = config_pair("add_session_config_entry", key, value)
        self._config[key] = value

    def get_session_config_entry(self, key: str) -> str:
        key = config_key("get_session_config_entry", key)
        if key not in self._config:
            raise RuntimeError(f"SessionOptions does not have configuration with key: {key}")
        return cast(str, self._config[key])

    def add_initializer(self, name: str, ortvalue: Any) -> None:
        # onnxruntime checks both here (a value that is not an OrtValue failed only when a
        # session was made, with an AttributeError)
        if not isinstance(name, str):
            raise TypeError(f"add_initializer(): incompatible function arguments: the name "
                            f"must be a str, not {type(name).__name__}")
        if not isinstance(ortvalue, OrtValue):
            raise RuntimeError("The provided Python object must be an OrtValue")
        _require_tensor(name, ortvalue)
        if name in self._initializers:  # (ORT refuses it at once, for onnxruntime)
            raise _added_already(name)
        self._initializers[name] = ortvalue

    def add_external_initializers(self, names: list[str], ortvalues: list[Any]) -> None:
        for value in ortvalues:
            if not isinstance(value, OrtValue):
                # onnxruntime's Python layer reads each value's ``_ortvalue`` first: the same
                # AttributeError, with CPython's text
                getattr(value, "_ortvalue")
                raise RuntimeError("The provided Python object must be an OrtValue")
        if len(names) != len(ortvalues):
            raise RuntimeError("Expecting names and ort_values lists to have equal length")
        if not all(isinstance(n, str) for n in names):
            raise TypeError("add_external_initializers(): incompatible function arguments: the "
                            "names must be str")
        for name, value in zip(names, ortvalues):
            _require_tensor(name, value)
        seen = set(self._external)
        for name in names:
            if name in seen:
                raise _added_already(name)
            seen.add(name)
        for name, value in zip(names, ortvalues):
            self._external[name] = value

    # (ORT applies a name's first override and ignores later ones, in onnxruntime too)
    def add_free_dimension_override_by_name(self, name: str, value: int) -> None:
        self._dim_names.setdefault(
            name, _dim_override("add_free_dimension_override_by_name", name, value))

    def add_free_dimension_override_by_denotation(self, denotation: str, value: int) -> None:
        self._dim_denotations.setdefault(denotation, _dim_override(
            "add_free_dimension_override_by_denotation", denotation, value))

    def register_custom_ops_library(self, path: str) -> None:
        path = os.fspath(path)
        # onnxruntime loads the library now, so a bad path fails here, not when a session is made
        with ortc.SessionOptions() as trial:
            try:
                trial.register_custom_ops_library(path)
            except ortc.LibraryNotFoundError as err:  # a file cut short: onnxruntime's class
                raise ort_error(int(ortc.ErrorCode.FAIL), str(err)) from None
            except ortc.Error as err:
                raise translate(err, f"custom op library {path!r}") from None
        self._custom_op_libraries.append(path)

    def has_providers(self) -> bool:
        return False  # providers are only given to InferenceSession here (no add_provider)

    def copy(self) -> SessionOptions:
        """An independent copy (what a session reports as its options: one per session made,
        so each field is set through its slot, not the checked ``__setattr__``)."""
        new = object.__new__(SessionOptions)
        values, config, initializers, external, dim_names, dim_denotations, libraries, \
            keywords_made = _SLOT_SETTERS
        values(new, self._values.copy())
        config(new, self._config.copy())
        initializers(new, self._initializers.copy())
        external(new, self._external.copy())
        dim_names(new, self._dim_names.copy())
        dim_denotations(new, self._dim_denotations.copy())
        libraries(new, self._custom_op_libraries.copy())
        keywords_made(new, self._keywords_made)
        return new

    def take_model_config(self, text: str) -> None:
        """Set what a model's ``ort_config`` metadata (JSON) gives its "session_options":
        with ORT_LOAD_CONFIG_FROM_MODEL=1 ORT makes the session with those values over the
        caller's, and onnxruntime's session reports them as its options. The session was
        made, so ORT took every value; what is no integer it read is left as it is."""
        import json

        try:
            given = json.loads(text).get("session_options", {})
        except (ValueError, AttributeError):
            return
        if not isinstance(given, dict):
            return
        for name in _MODEL_CONFIG_KEYS:
            value = given.get(name)
            if type(value) is not int:
                continue
            if name in _ENUM_ATTRS:
                try:
                    value = _ENUM_ATTRS[name](value)
                except ValueError:
                    continue
            self._values[name] = checked(name, value)

    def _settings(self, v: dict[str, Any] | None = None) -> dict[str, Any]:
        """The native settings (keywords of ortc.SessionOptions) of the attributes (or of
        ``v``, a copy of their values), after onnxruntime's checks of them: only those that
        differ from a new native options object's values (which are ORT's and onnxruntime's
        defaults too): each is a call into ORT."""
        if v is None:
            v = self._values
        if not v["enable_mem_reuse"] or v["execution_order"] != ExecutionOrder.DEFAULT:
            raise OrtNotImplemented("enable_mem_reuse=False and a non-default execution_order "
                                    "have no C API setter: ortc.compat cannot apply them", 9)
        severity = v["log_severity_level"]
        if not -1 <= severity <= 4:  # onnxruntime's session constructor checks it
            raise RuntimeError(f"Invalid session log severity level {severity}: -1 (the "
                               f"default logger's) or 0 (verbose) to 4 (fatal)")
        settings = {name: value for name, value in (
            ("intra_op_num_threads", max(v["intra_op_num_threads"], 0)),
            ("inter_op_num_threads", max(v["inter_op_num_threads"], 0)),
            ("execution_mode", int(v["execution_mode"])),
            ("graph_optimization_level", int(v["graph_optimization_level"])),
            ("enable_mem_pattern", v["enable_mem_pattern"]),
            ("enable_cpu_mem_arena", v["enable_cpu_mem_arena"]),
            ("log_verbosity_level", v["log_verbosity_level"]),
            ("use_deterministic_compute", v["use_deterministic_compute"]),
            ("profile_file_prefix", v["profile_file_prefix"]),
            ("enable_profiling", v["enable_profiling"])) if value != _NATIVE_DEFAULTS[name]}
        if severity >= 0:  # -1: the environment's level
            settings["log_severity_level"] = severity
        if v["logid"]:
            settings["logid"] = v["logid"]
        if v["optimized_model_filepath"]:
            settings["optimized_model_filepath"] = v["optimized_model_filepath"]
        return settings

    def keywords(self) -> dict[str, Any] | None:
        """The options as keywords of ``ortc.Session`` (checked and converted as native()
        checks them, with its errors) when they are settings alone, else None (native())."""
        if self._config or self._dim_names or self._dim_denotations or self._initializers or \
                self._external or self._custom_op_libraries:
            self._settings()  # (its errors first, as native() raises them)
            return None
        # the values, in their dict's fixed order (every key is there from __init__): equal
        # values make equal keywords
        values = tuple(self._values.values())
        made = self._keywords_made
        if made is not None and made[0] == values:
            return made[1]
        # made from the very values they are kept under, whatever another thread sets meanwhile
        current = dict(zip(self._values, values))
        settings = self._settings(current)
        if not current["use_per_session_threads"]:
            return None
        try:
            keywords = ortc.SessionOptions._converted(settings)
        except BaseException as err:
            raise translate(err) from None
        object.__setattr__(self, "_keywords_made", (values, keywords))
        return keywords

    def native(self) -> ortc.SessionOptions:
        """A new :class:`ortc.SessionOptions` with everything set here (the caller closes it)."""
        settings = self._settings()
        v = self._values
        opts = ortc.SessionOptions()
        try:
            opts._update(settings)
            if not v["use_per_session_threads"]:
                opts.disable_per_session_threads()
            for key, value in self._config.items():
                opts.add_session_config_entry(key, value)
            for name, size in self._dim_names.items():
                opts.add_free_dimension_override_by_name(name, size)
            for denotation, size in self._dim_denotations.items():
                opts.add_free_dimension_override(denotation, size)
            for name, value in self._initializers.items():
                opts.add_initializer(name, value._value)
            if self._external:
                opts.add_external_initializers({k: x._value for k, x in self._external.items()})
            for path in self._custom_op_libraries:
                opts.register_custom_ops_library(path)
        except BaseException as err:
            opts.close()
            raise translate(err) from None
        return opts


#: the setter of each slot of SessionOptions, in the order copy() unpacks them
_SLOT_SETTERS = tuple(SessionOptions.__dict__[name].__set__ for name in (
    "_values", "_config", "_initializers", "_external", "_dim_names", "_dim_denotations",
    "_custom_op_libraries", "_keywords_made"))
assert len(_SLOT_SETTERS) == len(SessionOptions.__slots__)  # a new slot: copy() sets it too


SessionOptions.__module__ = PYBIND_MODULE

#: the value a new ortc.SessionOptions has for each setting native() passes on (read back
#: from one in tests/test_compat_objects.py)
_NATIVE_DEFAULTS: dict[str, Any] = {
    "intra_op_num_threads": 0, "inter_op_num_threads": 0, "execution_mode": 0,
    "graph_optimization_level": 99, "enable_mem_pattern": True, "enable_cpu_mem_arena": True,
    "log_verbosity_level": 0, "use_deterministic_compute": False,
    "profile_file_prefix": "onnxruntime_profile_", "enable_profiling": False,
}


def get_default_session_options() -> SessionOptions:
    return SessionOptions()


def _dim_override(method: str, name: Any, value: Any) -> int:
    """onnxruntime's argument rules for a free dimension override: a str and an integer that
    fits int64, converted as pybind11 converts it (see _c_int: a numpy float too, not a Python
    float or a str); its TypeError otherwise."""
    number = _c_int(value, -2**63, 2**63)
    if not isinstance(name, str) or number is None:
        raise TypeError(f"{method}(): incompatible function arguments. The following argument "
                        f"types are supported: (self, arg0: str, arg1: int) -> None; invoked "
                        f"with: {name!r}, {value!r}")
    return number
