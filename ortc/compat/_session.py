"""onnxruntime's ``InferenceSession`` over :class:`ortc.Session`.

The hot path is one Python call deep: ``run`` hands its arguments to the native session's
``run`` and does onnxruntime's checks (missing inputs, unknown names, wrong types) only when
that fails, to raise what onnxruntime raises, in its order, with its message. A session with a
sequence input checks those feeds first (native ortc takes Python data as a sequence's items,
which onnxruntime refuses).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, cast

import numpy as np

import ortc

from ._checks import (conversion_refused, explain, feed_refused, feedable, lists_converted,
                      sequence_feed_taken, sequence_type, validate_input, voids_as_strings)
from ._errors import (EPFail, InvalidArgument, _OrtStyle, report_unraisable, shallow_copy,
                      translate, unpicklable)
from ._functions import KNOWN_PROVIDERS
from ._nodes import ModelMetadata, NodeArg
from ._options import SessionOptions
from ._run_options import RunOptions
from ._ortvalue import OrtValue
from ._providers import normalize_providers


class InferenceSession:
    """onnxruntime.InferenceSession: ``InferenceSession(path_or_bytes, sess_options=None,
    providers=None, provider_options=None)``."""

    # as onnxruntime: pickling refused (its InferenceSession is an extension object); copy.copy
    # shares the native objects
    __reduce_ex__ = unpicklable("InferenceSession")
    __copy__ = shallow_copy

    def __init__(self, path_or_bytes: str | bytes | os.PathLike[str],
                 sess_options: SessionOptions | None = None,
                 providers: Sequence[Any] | None = None,
                 provider_options: Sequence[dict[Any, Any]] | None = None,
                 **kwargs: Any) -> None:
        self._enable_fallback = int(kwargs.get("enable_fallback", 1)) == 1
        # the model as onnxruntime keeps it (libraries read these two): a path as str, or the
        # bytes object given; the other None
        self._model_path: str | None = None
        self._model_bytes: bytes | None = None
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
            if not self._model_path:  # onnxruntime's class (an unset setting's "" is common)
                raise TypeError("InferenceSession: the model path is an empty string")
        elif isinstance(path_or_bytes, bytes):
            self._model_bytes = path_or_bytes
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise TypeError(f"sess_options must be an onnxruntime.SessionOptions, not "
                            f"{type(sess_options).__name__}")
        # the caller's options (None if none), from which every session of this object is made
        self._sess_options_initial = sess_options
        self._fallback_providers = ["CPUExecutionProvider"]
        try:
            self._create(providers, provider_options,
                         _optimizer_names(kwargs.get("disabled_optimizers")))
        except (ValueError, RuntimeError) as err:
            # onnxruntime retries on the CPU after a provider's failure (an unknown provider
            # name too); its own engine errors are not ValueError/RuntimeError there, so they
            # are not retried here either
            if not self._enable_fallback or isinstance(err, _OrtStyle):
                raise
            print("*************** EP Error ***************")
            print(f"EP Error {err} when using {providers}")
            print(f"Falling back to {self._fallback_providers} and retrying.")
            print("****************************************")
            try:
                self._create(self._fallback_providers, None)
            except Exception as fallback_error:  # as onnxruntime chains it
                raise fallback_error from err
            self._enable_fallback = False

    def _create(self, providers: Any, provider_options: Any,
                disabled_optimizers: list[str] | None = None) -> None:
        # onnxruntime reads the names first: a non-iterable raises TypeError here, unretried
        _ = [p[0] if isinstance(p, tuple) else p for p in providers or []]
        available = _available_providers()
        names, options = normalize_providers(providers, provider_options, available)
        initial = self._sess_options_initial
        compat_opts = initial if initial is not None else _DEFAULT_OPTIONS
        # options that are settings alone become keywords of ortc.Session (no native options
        # object made, filled and closed per session) when nothing else needs one
        keywords = None if disabled_optimizers else compat_opts.keywords()
        native_opts = compat_opts.native() if keywords is None else None
        try:
            # after the same warnings and the options' checks, onnxruntime's C++ session
            # refuses a name it does not know (a misspelling): a RuntimeError, which the
            # constructor's fallback retries on the CPU (onnxruntime finds a model that does
            # not load first; ortc cannot load it without making the session: COMPAT.md)
            unknown = [n for n in names if n not in available and n not in KNOWN_PROVIDERS]
            if unknown:
                raise RuntimeError(f"Unknown Provider Type: {unknown[0]}")
            usable = [(n, o) for n, o in zip(names, options) if n in available]
            if not usable and names:
                usable = [("CPUExecutionProvider", {})]
            appended = []
            for name, opts in usable:
                if name == "CPUExecutionProvider":  # onnxruntime ignores what it does not know
                    opts = {k: "0" if str(v) in ("0", "false", "False") else "1"
                            for k, v in opts.items() if k == "use_arena"}
                appended.append((name, opts))
            if native_opts is None and any(name != "CPUExecutionProvider" or opts
                                           for name, opts in appended):
                native_opts = compat_opts.native()  # (the CPU provider alone is ORT's default)
            if disabled_optimizers and native_opts is not None:
                # onnxruntime filters them through its C++ session; the C API's way is this
                # config entry, whose list ORT splits at ";" (its header's comment says ","; a
                # "," list disables nothing: tests/test_compat.py checks the split)
                before = native_opts.get_session_config_entry(_DISABLED_KEY)
                native_opts.add_session_config_entry(
                    _DISABLED_KEY, ";".join([before, *disabled_optimizers] if before
                                            else disabled_optimizers))
            model = self._model_path if self._model_path is not None else self._model_bytes
            if native_opts is None:
                sess = cast(Any, ortc.Session)(model, **(keywords or {}))
            else:
                for name, opts in appended:
                    native_opts.append_execution_provider(name, opts)
                sess = ortc.Session(model, native_opts)
        except ortc.Error as err:
            if self._model_bytes == b"" and isinstance(err, ortc.InvalidArgument):
                # ortc refuses empty bytes itself; ORT's parser finds no graph in them
                raise InvalidArgument("No graph was found in the protobuf.", 2) from None
            context = (f"loading model {self._model_path!r}" if self._model_path is not None
                       else "loading model from bytes")
            raise translate(err, context) from None
        finally:
            if native_opts is not None:
                native_opts.close()
        self._bind(sess)

    def _bind(self, sess: ortc.Session) -> None:
        self._native = sess  # first: a lazy attribute read of the session replaced is not kept
        d = self.__dict__
        for name in _LAZY:
            d.pop(name, None)
        # the session's own copy of its options, what get_session_options() returns: the same
        # object until set_providers() makes a new session (as in onnxruntime: an attribute set
        # on it reads back; the caller's options stay theirs). Made now: the caller may change
        # its options after this.
        initial = self._sess_options_initial
        if os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL") == "1":
            # ORT read the model's options as it made the session, and made it with them over
            # its defaults in place of the caller's: the session's options are those
            self._sess_options = SessionOptions()
            config = sess.metadata().custom_metadata_map.get("ort_config")
            if config is not None:
                self._sess_options.take_model_config(config)
        else:
            self._sess_options = (initial if initial is not None else _DEFAULT_OPTIONS).copy()
        self._providers = list(sess.providers)
        self._provider_options: dict[str, dict[str, str]] = {p: {} for p in self._providers}

    # What the session's inputs and outputs decide is read on first use (a session made and
    # dropped reads none of it): each is a _Lazy attribute, forgotten by _bind.
    if TYPE_CHECKING:
        _run: Callable[..., list[Any]] | None
        _inputs_meta: list[NodeArg]
        _outputs_meta: list[NodeArg]
        _overridable_initializers: list[NodeArg]
        _required: list[str]
        _model_meta: ModelMetadata

    # -- description ---------------------------------------------------------------------------
    # -- description ---------------------------------------------------------------------------
    def get_session_options(self) -> SessionOptions:
        return self._sess_options

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
        old = self._native
        self._create(providers, provider_options)
        try:
            old.close()
        except ortc.ConcurrentUseError:
            # other threads' runs are inside it, and onnxruntime lets them finish: the last of
            # them to return drops the old session, and its finalizer releases it
            pass

    def disable_fallback(self) -> None:
        self._enable_fallback = False

    def enable_fallback(self) -> None:
        self._enable_fallback = True

    # -- running -------------------------------------------------------------------------------
    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
            run_options: RunOptions | None = None) -> list[Any]:
        """Run the model: ``output_names`` None or empty for all outputs; returns arrays for
        tensors, lists for sequences, dicts for maps, None for empty optionals."""
        # the hot path: one Python call between the caller and ortc's run, and the run looked
        # up at each call (a method of the class, so subclasses, wrappers and mocks of it take
        # effect, ortc's compiled marker wrapper too)
        sess = self._native
        native_run = self._run or sess.run
        try:
            if output_names is not None and output_names.__class__ is not list:
                # read a generator once, here: a failed run's checks and retry read it again
                output_names = _names(output_names)
            if run_options is None:
                return native_run(output_names or None, input_feed)
            return native_run(output_names or None, input_feed, run_options._for_run())
        except BaseException as err:  # noqa: BLE001 - re-raised as onnxruntime raises it
            if isinstance(err, ortc.ClosedError) and sess is not self._native:
                # this call read the session just before set_providers() replaced it
                return _own_run(self, output_names, input_feed, run_options)
            return self._run_failed(err, output_names, input_feed, run_options)

    def _run_failed(self, err: BaseException, output_names: Any, input_feed: Any,
                    run_options: Any) -> list[Any]:
        if isinstance(err, (EPFail, ortc.EPFail)):
            return self._fall_back(err, lambda: _own_run(self, output_names, input_feed,
                                                         run_options))
        again = self._taken_as_pybind_takes(err, output_names, input_feed)
        if again is not None:
            return _own_run(self, again[0], again[1], run_options)
        raise explain(self._native, self._required, err, output_names, input_feed,
                      run_options) from None

    def _taken_as_pybind_takes(self, err: BaseException, output_names: Any,
                               feeds: Any) -> tuple[Any, Any] | None:
        """(output names, feeds) to run again with after ortc refused them (``err``) where
        onnxruntime's pybind layer takes them: None fed for a name the model lacks dropped (it
        skips None feeds), an OrtValue as its value (native ortc reads one as an array, which
        a sequence, map or optional input refuses), bytes names as text, lists converted to
        the inputs' types. None when none of these applies."""
        if isinstance(err, ortc.InvalidArgument) and not isinstance(err, _OrtStyle):
            if isinstance(feeds, Mapping):
                known = feedable(self._native)
                unfed = [k for k, v in feeds.items() if v is None and k not in known]
                if unfed:
                    return output_names, {k: v for k, v in feeds.items() if k not in unfed}
                if any(isinstance(v, OrtValue) for v in feeds.values()):
                    return output_names, {k: v._value if isinstance(v, OrtValue) else v
                                          for k, v in feeds.items()}
                voids = voids_as_strings(feeds)
                if voids is not None:  # read as strings, as onnxruntime reads them
                    return output_names, voids
            names = _decoded(output_names)
            if names is not None:
                return names, feeds
            converted = lists_converted(self._native, feeds)
            if converted is not None:
                return output_names, converted
        return None

    def run_with_ort_values(self, output_names: Sequence[str] | None,
                            input_dict_ort_values: Mapping[str, OrtValue],
                            run_options: RunOptions | None = None) -> list[OrtValue]:
        # as onnxruntime: its Python-side checks first, and each feed is asked for its value
        # (what is not an OrtValue raises AttributeError there)
        if type(input_dict_ort_values) is not dict:
            validate_input(self._required, list(input_dict_ort_values.keys()))
        else:
            for name in self._required:  # (what a dict finds, its key list holds too)
                if name not in input_dict_ort_values:
                    validate_input(self._required, list(input_dict_ort_values))
        feeds = {k: v._value if type(v) is OrtValue else v._get_c_value()._value
                 for k, v in input_dict_ort_values.items()}
        try:
            values = self._native.run_with_values(
                output_names or None, feeds, None if run_options is None else run_options._for_run())
        except BaseException as err:  # noqa: BLE001
            raise explain(self._native, self._required, err, output_names, input_dict_ort_values,
                          run_options) from None
        return [OrtValue(v) for v in values]

    def run_async(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
                  callback: Callable[[Any, Any, str], None], user_data: Any,
                  run_options: RunOptions | None = None) -> None:
        """Start a run; ``callback(results, user_data, err)`` is called on another thread, with
        ``err`` "" on success or the error's text on failure (then ``results`` is empty).

        As onnxruntime: what goes wrong converting the feeds raises here; what the run's own
        checks find (unknown names, wrong element types) goes to the callback."""
        validate_input(self._required, list(input_feed.keys()))
        if output_names is not None:
            output_names = _names(output_names)
        if callback is not None and not callable(callback):
            # onnxruntime's argument conversion refuses it before the run starts (None it
            # takes, and fails when the run ends, as here)
            raise TypeError(f"run_async(): incompatible function arguments: the callback must "
                            f"be callable, not {type(callback).__name__}")
        refused = conversion_refused(self._native, input_feed)
        if refused is not None:
            try:
                raise refused
            finally:  # (no frame keeps what its traceback holds: _status.raise_status)
                del refused
        try:
            future = self._start_async(output_names, input_feed, run_options)
        except ortc.OrtError as err:
            if not isinstance(err, _OrtStyle):
                raise
            # onnxruntime's run finds these after run_async returned: it calls back with the
            # text (its unknown-output text has a space the synchronous run's lacks)
            text = err.message.replace("Invalid output name:", "Invalid output name: ", 1)
            threading.Thread(target=_call_back, args=(callback, [], user_data, text),
                             daemon=True).start()
            return

        def done(fut: Any) -> None:
            err = fut.exception()
            if err is None:
                _call_back(callback, fut.result(), user_data, "")
            else:
                # onnxruntime passes the status message alone, without its class prefix
                _call_back(callback, [], user_data, err.message if isinstance(err, ortc.OrtError)
                           else str(err))

        future.add_done_callback(done)

    def _start_async(self, output_names: Any, feeds: Any, run_options: Any) -> Any:
        try:
            return self._native.run_async(output_names or None, feeds,
                                        None if run_options is None else run_options._for_run())
        except BaseException as err:  # noqa: BLE001 - re-raised as onnxruntime raises it
            again = self._taken_as_pybind_takes(err, output_names, feeds)
            if again is not None:  # as run() takes them
                return self._start_async(again[0], again[1], run_options)
            raise explain(self._native, self._required, err, output_names, feeds,
                          run_options) from None

    def io_binding(self) -> Any:
        from ._binding import IOBinding

        return IOBinding(self)

    def run_with_iobinding(self, iobinding: Any, run_options: RunOptions | None = None) -> None:
        # (read as onnxruntime reads it: what is no binding, None included, is AttributeError)
        if iobinding._session is not self._native:
            raise ValueError("IOBinding must be used with the session that created it.")
        try:
            self._native.run_with_binding(iobinding._binding,
                                        None if run_options is None else run_options._for_run())
        except ortc.OrtError as err:  # onnxruntime's words and class for a failure of the run
            raise RuntimeError(f"Error in execution: {err.message}") from err

    def create_ortvalue_from_shape_and_type(self, shape: Sequence[int], element_type: Any,
                                            device_type: str, device_id: int = 0,
                                            vendor_id: int = -1) -> OrtValue:
        """A zeroed CPU tensor (onnxruntime allocates it with the session's allocator)."""
        return OrtValue.ortvalue_from_shape_and_type(shape, element_type, device_type,
                                                     device_id, vendor_id)

    def end_profiling(self) -> str:
        return self._native.end_profiling()

    @property
    def _sess(self) -> _CSession:
        """Where onnxruntime keeps its C++ session, which applications call (see _CSession)."""
        return _CSession(self)

    def get_profiling_start_time_ns(self) -> int:
        return self._native.profiling_start_ns()

    def _fall_back(self, err: BaseException, again: Callable[[], list[Any]]) -> list[Any]:
        if not self._enable_fallback:
            raise translate(err) from None
        print(f"EP Error: {translate(err)!s} using {self._providers}")
        print(f"Falling back to {self._fallback_providers} and retrying.")
        self.set_providers(self._fallback_providers)
        self.disable_fallback()
        return again()


class _CSession:
    """What ``InferenceSession._sess`` is: onnxruntime keeps its C++ session there, and some
    applications call it directly for its argument order (``sess._sess.run_with_ort_values(
    feeds, output_names, run_options)``, the feeds' "C values" from ``v._ortvalue``) or its
    attributes (``inputs_meta``). Here its methods are the session's own, which read the
    session's current native one at each call (set_providers() replaces it). Made per read of
    ``_sess`` and holding the session: one kept in the session would be a reference cycle."""

    __slots__ = ("_owner",)

    def __init__(self, owner: InferenceSession) -> None:
        self._owner = owner

    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
            run_options: RunOptions | None = None) -> list[Any]:
        return _own_run(self._owner, output_names, input_feed, run_options)

    def run_with_ort_values(self, input_dict_ort_values: Mapping[str, OrtValue],
                            output_names: Sequence[str] | None,
                            run_options: RunOptions | None = None) -> list[OrtValue]:
        return _own_run_with_ort_values(self._owner, output_names, input_dict_ort_values,
                                        run_options)

    def run_with_iobinding(self, iobinding: Any, run_options: RunOptions | None = None
                           ) -> None:
        _own_run_with_iobinding(self._owner, iobinding, run_options)

    def run_async(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
                  callback: Callable[[Any, Any, str], None], user_data: Any,
                  run_options: RunOptions | None = None) -> None:
        _own_run_async(self._owner, output_names, input_feed, callback, user_data, run_options)

    def end_profiling(self) -> str:
        return self._owner.end_profiling()

    def get_providers(self) -> list[str]:
        return self._owner.get_providers()

    def get_provider_options(self) -> dict[str, dict[str, str]]:
        return self._owner.get_provider_options()

    @property
    def inputs_meta(self) -> list[NodeArg]:
        return self._owner.get_inputs()

    @property
    def outputs_meta(self) -> list[NodeArg]:
        return self._owner.get_outputs()

    @property
    def overridable_initializers(self) -> list[NodeArg]:
        return self._owner.get_overridable_initializers()

    @property
    def model_meta(self) -> ModelMetadata:
        return self._owner.get_modelmeta()

    @property
    def session_options(self) -> SessionOptions:
        return self._owner.get_session_options()

    @property
    def get_profiling_start_time_ns(self) -> int:  # (an attribute there, not a method)
        return self._owner.get_profiling_start_time_ns()


#: the providers the library was built with (a fact of the one library a process loads)
_available: list[list[str]] = []


def _available_providers() -> list[str]:
    if not _available:
        _available.append(ortc.available_providers())
    return list(_available[0])


def _native_run(self: InferenceSession, sess: ortc.Session
                ) -> Callable[..., list[Any]] | None:
    """What run() calls in place of the native session's run where onnxruntime's results or
    checks differ; None where they do not: run() then looks the session's run up at each call
    (a marked method's class swaps in its compiled wrapper after the method's first calls, and
    a bound method kept from a session's first run kept the slower general one for good)."""
    run: Callable[..., list[Any]] | None = None
    # onnxruntime hands float8e4m3fn outputs out as their uint8 bits (and refuses the
    # other 8-, 4- and 16-bit float types, which ortc returns as ml_dtypes arrays)
    bits = frozenset(a.name for a in sess.outputs
                     if a.element_type == ortc.ElementType.FLOAT8E4M3FN)
    if bits:
        run = _as_bits(sess, bits)
    sequences = {a.name: seq.element is not None
                 and seq.element.kind == ortc.ValueKind.TENSOR
                 for a, seq in ((a, sequence_type(a.type)) for a in sess.inputs)
                 if seq is not None}
    if sequences:
        run = _sequences_checked(run, sess, sequences)
    return run


class _Lazy:
    """An InferenceSession attribute computed from its native session on first use and kept
    in the instance (whose attribute then hides this descriptor: a plain read from then on).
    Two threads reading it at once keep the first value published. A value computed from a
    session that set_providers() replaced meanwhile (_bind: the new session first, then the
    attributes forgotten) is taken back and computed again: the reader publishes, then looks
    whether its session is still the one. No lock: one that a signal handler's exception left
    held on the main thread would stop every later first read of every session; a reader
    stopped between its publishing and its look leaves a value of the replaced session, as if
    it had been read just before set_providers() (that session's runs then raise ClosedError
    once it is closed, never crash). A read that finds its session closed by a set_providers()
    reads the new one."""

    __slots__ = ("name", "make")

    def __init__(self, name: str, make: Callable[[Any, ortc.Session], Any]) -> None:
        self.name = name
        self.make = make

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        d = obj.__dict__
        while True:
            sess = obj._native
            try:
                value = self.make(obj, sess)
            except ortc.ClosedError:
                if obj._native is sess:
                    raise
                continue  # set_providers() closed it meanwhile: read the new one
            kept = d.setdefault(self.name, value)
            if obj._native is sess:
                return kept
            if d.get(self.name) is value:  # ours, of the replaced session: take it back
                d.pop(self.name, None)


_LAZY = {
    "_run": _native_run,
    "_inputs_meta": lambda self, sess: [NodeArg(a) for a in sess.inputs],
    "_outputs_meta": lambda self, sess: [NodeArg(a) for a in sess.outputs],
    "_overridable_initializers": lambda self, sess: [NodeArg(a) for a in
                                                     sess.overridable_initializers],
    "_required": lambda self, sess: [a.name for a in sess.inputs
                                     if a.kind != ortc.ValueKind.OPTIONAL],
    "_model_meta": lambda self, sess: ModelMetadata(sess.metadata()),
}
for _name, _make in _LAZY.items():
    setattr(InferenceSession, _name, _Lazy(_name, _make))

#: InferenceSession's own run, for its retries: a subclass's or a wrapper's run (or a mock)
#: sees the caller's call once, not the internal ones
_own_run = InferenceSession.run
_own_run_with_ort_values = InferenceSession.run_with_ort_values
_own_run_with_iobinding = InferenceSession.run_with_iobinding
_own_run_async = InferenceSession.run_async

#: what a session is made with when it is given no options (never changed: only read)
_DEFAULT_OPTIONS = SessionOptions()

_DISABLED_KEY = "optimization.disable_specified_optimizers"


def _optimizer_names(names: Any) -> list[str] | None:
    """``disabled_optimizers=`` as onnxruntime takes it: any iterable of str (a set in its C++
    session), checked here as its pybind layer checks the conversion."""
    if names is None:
        return None
    if isinstance(names, (str, bytes)):
        raise TypeError(f"disabled_optimizers must be a set or list of optimizer names, not "
                        f"{type(names).__name__} {names!r}")
    unique = set(names)  # a set, as onnxruntime makes it
    for name in unique:
        if not isinstance(name, str) or not name or ";" in name:
            raise TypeError(f"disabled_optimizers: {name!r} is not an optimizer name")
    return sorted(unique)  # one order every time


def _names(output_names: Any) -> Any:
    """Output names as a list (a str stays a str: run() refuses it as onnxruntime does)."""
    return output_names if isinstance(output_names, str) else list(output_names)


def _decoded(output_names: Any) -> list[str] | None:
    """The names with UTF-8 bytes decoded, or None when none is bytes (or one does not
    decode): onnxruntime's pybind layer takes ``b"y"`` for ``"y"``."""
    if not isinstance(output_names, list) or not any(isinstance(n, bytes) for n in output_names):
        return None
    try:
        return [n.decode("utf-8") if isinstance(n, bytes) else n for n in output_names]
    except UnicodeDecodeError:
        return None


def _call_back(callback: Callable[[Any, Any, str], None], results: Any, user_data: Any,
               err: str) -> None:
    """A run_async callback, whose exception goes to ``sys.unraisablehook`` as onnxruntime
    reports it (not to concurrent.futures' logger, nor to threading's excepthook)."""
    try:
        callback(results, user_data, err)
    except Exception:  # noqa: BLE001 - reported, as onnxruntime reports it
        report_unraisable(callback, "Exception ignored in the run_async callback")


def _as_bits(sess: ortc.Session, names: frozenset[str]) -> Callable[..., list[Any]]:
    """``sess.run`` with the outputs ``names`` viewed as uint8."""
    all_names = [a.name for a in sess.outputs]

    def run(output_names: Any, feeds: Any, run_options: Any = None) -> list[Any]:
        out = sess.run(output_names, feeds, run_options)
        return [cast("np.ndarray[Any, Any]", o).view(np.uint8) if n in names else o
                for n, o in zip(output_names or all_names, out)]
    return run


def _sequences_checked(native_run: Callable[..., list[Any]] | None, sess: ortc.Session,
                       sequences: dict[str, bool]) -> Callable[..., list[Any]]:
    """``native_run`` (None: the session's own run) refusing first what native ortc takes for
    a sequence input and onnxruntime does not (``sequences``: each such input's name, and
    whether its items are tensors): a list item that is no numpy array (a nested list, a
    number, an OrtValue), a tuple. Only sessions with a sequence input pay for the check."""
    items = list(sequences.items())

    def run(output_names: Any, feeds: Any, run_options: Any = None) -> list[Any]:
        if isinstance(feeds, Mapping):
            for name, tensors in items:
                data = feeds.get(name)
                if data is not None and not sequence_feed_taken(tensors, data):
                    # (the run's failure path says what onnxruntime raises first, in its
                    # order; what its conversion takes, native ortc's run refuses too)
                    refused = feed_refused(feedable(sess).get(name), name, data)
                    if refused is not None:
                        try:
                            raise refused
                        finally:  # (see _status.raise_status)
                            del refused
        return (native_run or sess.run)(output_names, feeds, run_options)
    return run
