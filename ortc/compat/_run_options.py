"""onnxruntime's ``RunOptions`` and ``LoraAdapter``. ``RunOptions`` wraps one native
:class:`ortc.RunOptions` from the start, because ``terminate`` must reach runs in flight."""

from __future__ import annotations

from typing import Any, cast

import ortc

from ._errors import PYBIND_MODULE, Fail, translate, unpicklable
from ._options import checked, config_key, config_pair, no_attribute


class RunOptions:
    """onnxruntime.RunOptions: a tag, log levels, config entries and ``terminate``."""

    # as onnxruntime: pickling refused (its RunOptions is an extension object)
    __reduce_ex__ = unpicklable("RunOptions")

    __slots__ = ("_native", "_log_severity_level", "_logid", "_only_fetches", "_adapters",
                 "_terminate")

    def __init__(self) -> None:
        object.__setattr__(self, "_native", ortc.RunOptions())
        object.__setattr__(self, "_log_severity_level", -1)
        object.__setattr__(self, "_logid", "")
        object.__setattr__(self, "_only_fetches", False)
        object.__setattr__(self, "_adapters", [])
        object.__setattr__(self, "_terminate", False)

    _ATTRS = ("log_severity_level", "log_verbosity_level", "logid",
              "only_execute_path_to_fetches", "terminate")

    def __getattr__(self, name: str) -> Any:
        if name == "log_severity_level":
            return self._log_severity_level
        if name == "log_verbosity_level":
            return self._native.log_verbosity_level
        if name == "logid":
            return self._logid
        if name == "only_execute_path_to_fetches":
            return self._only_fetches
        if name == "terminate":
            return self._terminate
        raise no_attribute(self, name, reading=True)

    def __setattr__(self, name: str, value: Any) -> None:
        native = self._native
        if name == "log_severity_level":
            # onnxruntime takes any int here; a run with one outside -1 and 0-4 fails (_for_run)
            value = checked("log_severity_level", value)
            if 0 <= value <= 4:
                native.log_severity_level = value
            object.__setattr__(self, "_log_severity_level", value)
        elif name == "log_verbosity_level":
            native.log_verbosity_level = checked("log_verbosity_level", value)
        elif name == "logid":
            value = checked("logid", value)  # (bytes read back as str, as there)
            native.tag = value
            object.__setattr__(self, "_logid", value)
        elif name == "only_execute_path_to_fetches":
            # ORT prunes nodes the fetches do not need; the outputs are the same either way,
            # and the C API has no switch for it, so the value is only recorded
            object.__setattr__(self, "_only_fetches", checked("enable_profiling", value))
            # (any bool attribute's check will do: "enable_profiling" is one)
        elif name == "terminate":
            flag = checked("enable_profiling", value)
            native.terminate() if flag else native.unset_terminate()
            object.__setattr__(self, "_terminate", flag)
        else:
            raise no_attribute(self, name)

    def _for_run(self) -> ortc.RunOptions:
        """The native options a run uses. A log severity outside -1 and 0-4 fails the run, as
        onnxruntime's run does (its setter accepts it)."""
        level = self._log_severity_level
        if not -1 <= level <= 4:
            raise Fail(f"Invalid run log severity level. Not a valid "
                       f"onnxruntime::logging::Severity value: {level}", 1)
        return cast(ortc.RunOptions, self._native)

    def __dir__(self) -> list[str]:
        return sorted({*object.__dir__(self), *self._ATTRS})

    def add_run_config_entry(self, key: str, value: str) -> None:
        key, value = config_pair("add_run_config_entry", key, value)
        try:
            self._native.add_run_config_entry(key, value)
        except ortc.Error as err:
            raise translate(err) from None

    def get_run_config_entry(self, key: str) -> str:
        key = config_key("get_run_config_entry", key)
        value = self._native.get_run_config_entry(key)
        if value is None:
            raise RuntimeError(f"RunOptions does not have configuration with key: {key}")
        return cast(str, value)

    def add_active_adapter(self, adapter: Any) -> None:
        native = getattr(adapter, "_native", adapter)  # a compat LoraAdapter or an ortc one
        if native is None:
            raise RuntimeError("add_active_adapter: the LoraAdapter has not been loaded")
        try:
            self._native.add_active_lora_adapter(native)
        except ortc.Error as err:
            raise translate(err) from None
        self._adapters.append(adapter)


RunOptions.__module__ = PYBIND_MODULE


class LoraAdapter:
    """onnxruntime.LoraAdapter: ``LoraAdapter()`` then ``Load(path)``, for
    ``RunOptions.add_active_adapter`` (an :class:`ortc.LoraAdapter` underneath)."""

    # as onnxruntime: pickling refused (its LoraAdapter is an extension object)
    __reduce_ex__ = unpicklable("LoraAdapter")

    def __init__(self) -> None:
        self._native: ortc.LoraAdapter | None = None

    def Load(self, path: str) -> None:  # noqa: N802 - onnxruntime's name
        try:
            self._native = ortc.LoraAdapter(path)
        except ortc.Error as err:
            raise translate(err) from None


LoraAdapter.__module__ = PYBIND_MODULE
