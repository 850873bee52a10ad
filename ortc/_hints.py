"""Pointers for onnxruntime habits: the message of the AttributeError an onnxruntime name
raises on a native ortc object (``sess.get_inputs()`` -> use ``sess.inputs``).

Only missing names come here (a class's ``__getattr__`` runs after normal lookup failed), so
nothing on a working path pays for this table; it is imported on the first miss. The names are
onnxruntime's public Python API as its package spells them; docs/COMPAT.md has the same
migration as a table.
"""

from __future__ import annotations

from typing import Any, Iterable

from .errors import closest_name

__all__ = ["ORT_NAMES", "MODULE_NAMES", "no_attribute", "no_module_attribute"]

#: per ortc class: onnxruntime's name -> what to write with ortc instead
ORT_NAMES: dict[str, dict[str, str]] = {
    "Session": {
        "get_inputs": "sess.inputs (a property: a list of NodeArg)",
        "get_outputs": "sess.outputs (a property: a list of NodeArg)",
        "get_overridable_initializers": "sess.overridable_initializers (a property)",
        "get_modelmeta": "sess.metadata() (or the sess.model_metadata property)",
        "get_providers": "sess.providers (a property)",
        "get_provider_options": "sess.recipe().options.providers ((name, options) pairs)",
        "get_session_options": "sess.recipe().options (what the session was built with)",
        "get_profiling_start_time_ns": "sess.profiling_start_ns()",
        "run_with_ort_values": "sess.run_with_values(names, {name: ortc.Value})",
        "run_with_ortvaluevector": "sess.run_with_values(names, {name: ortc.Value})",
        "run_with_iobinding": "sess.run_with_binding(binding)",
        "set_providers": "a new ortc.Session(model, providers=[...]) (a session's providers "
                         "are fixed when it is made)",
        "enable_fallback": "a new ortc.Session with other providers where one fails: ortc "
                           "never retries on another provider by itself",
        "disable_fallback": "nothing: ortc never retries on another provider by itself",
        "create_ortvalue_from_shape_and_type":
            "ortc.Value.from_numpy(np.zeros(shape, dtype))",
    },
    "SessionOptions": {
        "add_free_dimension_override_by_denotation":
            "opts.add_free_dimension_override(denotation, size)",
        "use_per_session_threads": "opts.disable_per_session_threads() (for False)",
        "add_provider": "opts.append_execution_provider(name, options)",
        "has_providers": "opts.providers (the providers appended so far)",
    },
    "RunOptions": {
        "logid": "run_options.tag (or RunOptions(tag=...))",
        "add_active_adapter": "run_options.add_active_lora_adapter(ortc.LoraAdapter(path))",
    },
    "IoBinding": {
        "bind_cpu_input": "binding.bind_input(name, array)",
        "bind_ortvalue_input": "binding.bind_input(name, value)",
        "bind_ortvalue_output": "binding.bind_output(name, value)",
        "copy_outputs_to_cpu": "binding.get_outputs(copy=True) (numpy arrays of their own)",
        "get_outputs_as_ortvaluevector": "binding.get_output_values() (ortc Values)",
    },
    "Value": {
        "ortvalue_from_numpy": "ortc.Value.from_numpy(array)",
        "ortvalue_from_numpy_with_onnx_type": "ortc.Value.from_numpy(array, element_type)",
        "ortvalue_from_shape_and_type": "ortc.Value.from_numpy(np.zeros(shape, dtype))",
        "data_type": "value.type_info.type_str (onnxruntime's 'tensor(float)' spelling)",
        "device_name": "value.memory_info (ortc's values are on the CPU)",
        "is_tensor_sequence": "value.kind == ortc.ValueKind.SEQUENCE",
        "is_sparse_tensor": "value.kind == ortc.ValueKind.SPARSETENSOR",
        "as_sparse_tensor": "value.to_python() (an ortc.SparseTensor)",
        "data_ptr": "value.numpy().ctypes.data",
        "tensor_size_in_bytes": "value.numpy().nbytes",
        "update_inplace": "value.fill(array)",
    },
}

#: onnxruntime's module-level names -> ortc's
MODULE_NAMES: dict[str, str] = {
    "InferenceSession": "ortc.Session(model, options, providers=[...])",
    "OrtValue": "ortc.Value (ortc.Value.from_numpy(array))",
    "IOBinding": "ortc.IoBinding (sess.io_binding())",
    "SessionIOBinding": "ortc.IoBinding (sess.io_binding())",
    "get_available_providers": "ortc.available_providers()",
    "get_all_providers": "ortc.available_providers() (the providers this library has)",
    "get_device": "ortc.available_providers() (ortc runs what the library offers)",
    "get_version_string": "ortc.load().version (or ortc.version())",
    "get_build_info": "ortc.load().build_info",
    "set_default_logger_severity": "ortc.get_env().log_severity_level = level",
    "enable_telemetry_events": "ortc.get_env().enable_telemetry()",
    "disable_telemetry_events": "ortc.get_env().disable_telemetry()",
}

_COMPAT = "; or run onnxruntime code unchanged with ortc.compat (docs/COMPAT.md)"


def _public(names: Iterable[str]) -> list[str]:
    return [n for n in names if not n.startswith("_")]


def no_attribute(obj: Any, name: str) -> AttributeError:
    """The AttributeError for ``obj.name``: onnxruntime's name with its ortc counterpart, else
    the closest name the object has."""
    cls = type(obj) if not isinstance(obj, type) else obj
    what = cls.__name__
    for klass in cls.__mro__:
        hint = ORT_NAMES.get(klass.__name__, {}).get(name)
        if hint is not None:
            return AttributeError(f"ortc.{what} has no {name!r} (onnxruntime's name): use "
                                  f"{hint}{_COMPAT}")
    message = closest_name(name, _public(dir(cls)), f"attribute of ortc.{what}:")
    return AttributeError(message.replace(f"unknown attribute of ortc.{what}: ",
                                          f"ortc.{what} has no attribute "))


def no_module_attribute(name: str, names: Iterable[str]) -> AttributeError:
    """The AttributeError for ``ortc.name``."""
    hint = MODULE_NAMES.get(name)
    if hint is not None:
        return AttributeError(f"module 'ortc' has no attribute {name!r} (onnxruntime's name): "
                              f"use {hint}{_COMPAT}")
    message = closest_name(name, _public(names), "name")
    return AttributeError(message.replace("unknown name ", "module 'ortc' has no attribute "))
