"""onnxruntime's ``InferenceSession`` over :class:`ortc.Session`.

The hot path is one Python call deep: ``run`` hands its arguments to the native session's
``run`` and does onnxruntime's checks (missing inputs, unknown names, wrong types) only when
that fails, to raise what onnxruntime raises, in its order, with its message.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence as _SequenceABC
from typing import Any, Callable, Mapping, Sequence

import numpy as np

import ortc
from ortc.dtypes import element_type_for

from ._errors import PYBIND_MODULE, EPFail, InvalidArgument, _OrtStyle, translate
from ._options import RunOptions, SessionOptions
from ._ortvalue import OrtValue
from ._sparse import SparseTensor


class NodeArg:
    """An input or output: ``name``, ``type`` as onnxruntime spells it, ``shape`` as a list
    (ints, symbolic names as str, None for unknown dims; [] when the type has no shape)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, arg: ortc.NodeArg) -> None:
        info = arg.type
        self.name = arg.name
        self.type = info.type_str
        if info.kind == ortc.ValueKind.OPTIONAL and info.element is not None:
            info = info.element  # onnxruntime shows an optional tensor's shape
        self.shape: list[Any] = list(info.shape or ()) if info.kind in (
            ortc.ValueKind.TENSOR, ortc.ValueKind.SPARSETENSOR) else []

    def __str__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"

    __repr__ = __str__


class ModelMetadata:
    """The model's metadata, with onnxruntime's attribute names."""

    def __init__(self, md: ortc.ModelMetadata) -> None:
        self.producer_name = md.producer_name
        self.graph_name = md.graph_name
        self.domain = md.domain
        self.description = md.description
        self.graph_description = md.graph_description
        self.version = md.version
        self.custom_metadata_map = dict(md.custom_metadata_map)


for _cls in (NodeArg, ModelMetadata):
    _cls.__module__ = PYBIND_MODULE


def normalize_providers(providers: Any, provider_options: Any, available: Sequence[str]
                        ) -> tuple[list[str], list[dict[str, str]]]:
    """onnxruntime's rules for ``providers`` / ``provider_options``: names or (name, dict)
    pairs, or names plus a parallel list of dicts; a provider not in the build warns."""
    if providers is None:
        return [], []
    chosen: dict[str, dict[str, str]] = {}

    def add(name: str, options: Mapping[Any, Any]) -> None:
        if name not in available:
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{', '.join(available)}'")
        if name in chosen:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            return
        chosen[name] = {str(k): str(v) for k, v in options.items()}

    if not isinstance(providers, _SequenceABC):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if not isinstance(provider_options, _SequenceABC):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if "
                             "both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if "
                             "'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        for name, options in zip(providers, provider_options):
            add(name, options)
    else:
        for p in providers:
            if isinstance(p, str):
                add(p, {})
            elif isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) \
                    and isinstance(p[1], dict):
                add(p[0], p[1])
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) "
                                 "tuples.")
    return list(chosen), list(chosen.values())


class InferenceSession:
    """onnxruntime.InferenceSession: ``InferenceSession(path_or_bytes, sess_options=None,
    providers=None, provider_options=None)``."""

    def __init__(self, path_or_bytes: str | bytes | os.PathLike[str],
                 sess_options: SessionOptions | None = None,
                 providers: Sequence[Any] | None = None,
                 provider_options: Sequence[dict[Any, Any]] | None = None,
                 **kwargs: Any) -> None:
        self._enable_fallback = int(kwargs.get("enable_fallback", 1)) == 1
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model: Any = os.fspath(path_or_bytes)
        elif isinstance(path_or_bytes, bytes):
            self._model = path_or_bytes
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise TypeError(f"sess_options must be an onnxruntime.SessionOptions, not "
                            f"{type(sess_options).__name__}")
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._fallback_providers = ["CPUExecutionProvider"]
        try:
            self._create(providers, provider_options)
        except (ValueError, RuntimeError) as err:
            # onnxruntime retries on the CPU after a provider's failure; its own engine errors
            # are not ValueError/RuntimeError there, so they are not retried here either
            if not self._enable_fallback or isinstance(err, _OrtStyle):
                raise
            print("*************** EP Error ***************")
            print(f"EP Error {err} when using {providers}")
            print(f"Falling back to {self._fallback_providers} and retrying.")
            print("****************************************")
            self._create(self._fallback_providers, None)
            self._enable_fallback = False

    def _create(self, providers: Any, provider_options: Any) -> None:
        # onnxruntime reads the names first: a non-iterable raises TypeError here, unretried
        _ = [p[0] if isinstance(p, tuple) else p for p in providers or []]
        available = ortc.available_providers()
        names, options = normalize_providers(providers, provider_options, available)
        native_opts = self._sess_options.native()
        try:
            usable = [(n, o) for n, o in zip(names, options) if n in available]
            if not usable and names:
                usable = [("CPUExecutionProvider", {})]
            for name, opts in usable:
                if name == "CPUExecutionProvider":  # onnxruntime ignores what it does not know
                    opts = {k: v for k, v in opts.items() if k == "use_arena"}
                native_opts.append_execution_provider(name, opts)
            sess = ortc.Session(self._model, native_opts)
        except ortc.Error as err:
            context = (f"loading model {self._model!r}" if isinstance(self._model, str)
                       else "loading model from bytes")
            raise translate(err, context) from None
        finally:
            native_opts.close()
        self._bind(sess)

    def _bind(self, sess: ortc.Session) -> None:
        self._sess = sess
        self._run: Callable[..., list[Any]] = sess.run
        # onnxruntime hands float8e4m3fn outputs out as their uint8 bits (and refuses the
        # other 8-, 4- and 16-bit float types, which ortc returns as ml_dtypes arrays)
        bits = frozenset(a.name for a in sess.outputs
                         if a.element_type == ortc.ElementType.FLOAT8E4M3FN)
        if bits:
            self._run = _as_bits(sess, bits)
        self.run = self._fast_run(self._run)  # type: ignore[method-assign]
        self._inputs_meta = [NodeArg(a) for a in sess.inputs]
        self._outputs_meta = [NodeArg(a) for a in sess.outputs]
        self._overridable_initializers = [NodeArg(a) for a in sess.overridable_initializers]
        self._required = [a.name for a in self._inputs_meta if not a.type.startswith("optional")]
        self._model_meta = ModelMetadata(sess.metadata())
        self._providers = list(sess.providers)
        self._provider_options: dict[str, dict[str, str]] = {p: {} for p in self._providers}

    # -- description ---------------------------------------------------------------------------
    def get_session_options(self) -> SessionOptions:
        return self._sess_options.copy()  # as onnxruntime: the session's copy, not the input

    def get_inputs(self) -> list[NodeArg]:
        return self._inputs_meta

    def get_outputs(self) -> list[NodeArg]:
        return self._outputs_meta

    def get_overridable_initializers(self) -> list[NodeArg]:
        return self._overridable_initializers

    def get_modelmeta(self) -> ModelMetadata:
        return self._model_meta

    def get_providers(self) -> list[str]:
        return self._providers

    def get_provider_options(self) -> dict[str, dict[str, str]]:
        return self._provider_options

    def set_providers(self, providers: Sequence[Any] | None = None,
                      provider_options: Sequence[dict[Any, Any]] | None = None) -> None:
        old = self._sess
        self._create(providers, provider_options)
        old.close()

    def disable_fallback(self) -> None:
        self._enable_fallback = False

    def enable_fallback(self) -> None:
        self._enable_fallback = True

    # -- running -------------------------------------------------------------------------------
    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
            run_options: RunOptions | None = None) -> list[Any]:
        """Run the model: ``output_names`` None or empty for all outputs; returns arrays for
        tensors, lists for sequences, dicts for maps, None for empty optionals. (Each session
        replaces this method by the closure :meth:`_fast_run` makes; the same code.)"""
        return self._fast_run(self._run)(output_names, input_feed, run_options)

    def _fast_run(self, native_run: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
        # A closure stored on the instance: one Python call between the caller and ortc's run,
        # with no attribute lookups (this is the path the 5% budget is about)
        def run(output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
                run_options: RunOptions | None = None) -> list[Any]:
            try:
                if run_options is None:
                    return native_run(output_names or None, input_feed)
                return native_run(output_names or None, input_feed, run_options._native)
            except BaseException as err:  # noqa: BLE001 - re-raised as onnxruntime raises it
                return self._run_failed(err, output_names, input_feed, run_options)
        run.__doc__ = InferenceSession.run.__doc__
        return run

    def _run_failed(self, err: BaseException, output_names: Any, input_feed: Any,
                    run_options: Any) -> list[Any]:
        if isinstance(err, (EPFail, ortc.EPFail)):
            return self._fall_back(err, lambda: self.run(output_names, input_feed, run_options))
        if isinstance(err, ortc.InvalidArgument) and not isinstance(err, _OrtStyle):
            converted = self._lists_as_onnxruntime_converts(input_feed)
            if converted is not None:  # run again with the lists converted as onnxruntime does
                return self.run(output_names, converted, run_options)
        raise self._explain(err, output_names, input_feed, run_options) from None

    def _lists_as_onnxruntime_converts(self, feeds: Any) -> dict[str, Any] | None:
        """onnxruntime makes a list feed of a tensor input into an array of the input's type
        with numpy's unchecked casts (``[1.5]`` for int64 is ``[1]``); ortc refuses casts that
        lose data. The feeds so converted, or None when there is nothing to convert."""
        if not isinstance(feeds, Mapping):
            return None
        known = {a.name: a for a in (*self._sess.inputs, *self._sess.overridable_initializers)}
        out, changed = dict(feeds), False
        for name, data in feeds.items():
            arg = known.get(name)
            if isinstance(data, (list, tuple)) and arg is not None \
                    and arg.type.kind == ortc.ValueKind.TENSOR and arg.dtype is not None \
                    and arg.dtype.kind not in "OUS":
                try:
                    out[name] = np.array(data, dtype=arg.dtype)
                except (TypeError, ValueError):
                    return None
                changed = True
        return out if changed else None

    def run_with_ort_values(self, output_names: Sequence[str] | None,
                            input_dict_ort_values: Mapping[str, OrtValue],
                            run_options: RunOptions | None = None) -> list[OrtValue]:
        try:
            feeds = {k: v._value for k, v in input_dict_ort_values.items()}
            values = self._sess.run_with_values(
                output_names or None, feeds, None if run_options is None else run_options._native)
        except BaseException as err:  # noqa: BLE001
            raise self._explain(err, output_names, input_dict_ort_values, run_options) from None
        return [OrtValue(v) if v is not None else None for v in values]  # type: ignore[misc]

    def run_async(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
                  callback: Callable[[Any, Any, str], None], user_data: Any,
                  run_options: RunOptions | None = None) -> None:
        """Start a run; ``callback(results, user_data, err)`` is called on an ORT thread, with
        ``err`` "" on success or the error's text on failure (then ``results`` is empty)."""
        self._validate_input(list(input_feed.keys()))
        try:
            future = self._sess.run_async(output_names or None, input_feed,
                                          None if run_options is None else run_options._native)
        except BaseException as err:  # noqa: BLE001
            raise self._explain(err, output_names, input_feed, run_options) from None

        def done(fut: Any) -> None:
            err = fut.exception()
            if err is None:
                callback(fut.result(), user_data, "")
            else:
                # onnxruntime passes the status message alone, without its class prefix
                callback([], user_data, err.message if isinstance(err, ortc.OrtError)
                         else str(err))

        future.add_done_callback(done)

    def io_binding(self) -> Any:
        from ._binding import IOBinding

        return IOBinding(self)

    def run_with_iobinding(self, iobinding: Any, run_options: RunOptions | None = None) -> None:
        if getattr(iobinding, "_session", None) is not self._sess:
            raise ValueError("IOBinding must be used with the session that created it.")
        try:
            self._sess.run_with_binding(iobinding._binding,
                                        None if run_options is None else run_options._native)
        except ortc.Error as err:
            raise translate(err) from None

    def create_ortvalue_from_shape_and_type(self, shape: Sequence[int], element_type: Any,
                                            device_type: str, device_id: int = 0,
                                            vendor_id: int = -1) -> OrtValue:
        """A zeroed CPU tensor (onnxruntime allocates it with the session's allocator)."""
        return OrtValue.ortvalue_from_shape_and_type(shape, element_type, device_type,
                                                     device_id, vendor_id)

    def end_profiling(self) -> str:
        return self._sess.end_profiling()

    def get_profiling_start_time_ns(self) -> int:
        return self._sess.profiling_start_ns()

    # -- onnxruntime's checks, on the failure path only -----------------------------------------
    def _validate_input(self, feed_names: list[Any]) -> None:
        missing = [n for n in self._required if n not in feed_names]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed "
                             f"({feed_names}).")

    def _explain(self, err: BaseException, output_names: Any, feeds: Any,
                 run_options: Any) -> BaseException:
        """What onnxruntime raises for the failed run: its Python-side checks first, then the
        engine's checks of names and types (ortc does some of them itself, with its own words)."""
        try:
            self._validate_input(list(feeds.keys()))
        except (ValueError, AttributeError) as mine:
            return mine
        if run_options is not None and not isinstance(run_options, RunOptions):
            return TypeError(f"run(): incompatible function arguments: run_options must be an "
                             f"onnxruntime.RunOptions, not {type(run_options).__name__}")
        if isinstance(err, ortc.InvalidArgument) and not isinstance(err, _OrtStyle):
            known = {a.name: a for a in (*self._sess.inputs,
                                         *self._sess.overridable_initializers)}
            for name, data in feeds.items():
                if name not in known:
                    return InvalidArgument(f"Invalid input name: {name}", 2)
            outputs = {a.name for a in self._outputs_meta}
            for name in output_names or ():
                if name not in outputs:
                    return InvalidArgument(f"Invalid output name:{name}", 2)
            for name, data in feeds.items():
                wrong = _type_mismatch(known[name], data)
                if wrong:
                    return InvalidArgument(wrong, 2)
        for name, data in feeds.items():
            if isinstance(data, (str, bytes)):
                return RuntimeError(f"Input must be a list of dictionaries or a single numpy "
                                    f"array for input '{name}'.")
            if isinstance(data, (float, int, np.generic, SparseTensor)):  # nor sparse ones
                return RuntimeError(f"Unable to handle object of type {type(data)}")
        return translate(err)

    def _fall_back(self, err: BaseException, again: Callable[[], list[Any]]) -> list[Any]:
        if not self._enable_fallback:
            raise translate(err) from None
        print(f"EP Error: {translate(err)!s} using {self._providers}")
        print(f"Falling back to {self._fallback_providers} and retrying.")
        self.set_providers(self._fallback_providers)
        self.disable_fallback()
        return again()


def _as_bits(sess: ortc.Session, names: frozenset[str]) -> Callable[..., list[Any]]:
    """``sess.run`` with the outputs ``names`` viewed as uint8."""
    all_names = [a.name for a in sess.outputs]

    def run(output_names: Any, feeds: Any, run_options: Any = None) -> list[Any]:
        out = sess.run(output_names, feeds, run_options)
        return [o.view(np.uint8) if n in names else o
                for n, o in zip(output_names or all_names, out)]
    return run


def _type_mismatch(arg: ortc.NodeArg, data: Any) -> str | None:
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
