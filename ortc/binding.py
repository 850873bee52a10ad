"""IoBinding: inputs and outputs bound once, runs that skip per-call value creation.

>>> b = sess.io_binding()                                   # doctest: +SKIP
>>> b.bind_input("x", x); b.bind_output("y", y)             # doctest: +SKIP
>>> sess.run_with_binding(b)    # y now holds the result    # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any, Callable, Tuple, TypeVar, cast

import numpy as np

from . import _loader
from ._ffi import ffi
from ._guard import Entries, Hold
from ._handle import Handle
from ._numpy_bridge import PLAIN_DTYPES, RunOutput, _Scratch, as_array, copy_plain_tensor, \
    exposes_memory, is_array_like, is_empty_optional, ortvalue_to_python, take_output, \
    tensor_copy_or_shape, value_kind
from .dlpack import dlpack_array, is_dlpack_producer
from .dtypes import STRING_KINDS, bits_for
from ._cstr import utf8
from ._enums import ElementType, ValueKind
from ._status import call_out, check, ignore
from .errors import InvalidArgument
from .memory import MemoryInfo, cpu_memory_info, default_allocator
from .threads import exclusive
from .value import Value

__all__ = ["IoBinding"]

T = TypeVar("T")


def _model_name(name: str) -> bytes:
    """An input or output name the model declares (checked by the caller), as its C string:
    a name that is not UTF-8 in the model reads back as surrogate escapes, which encode back to
    the model's own bytes (as the run paths' names do)."""
    return utf8(name, "name", surrogates=True)


_NULL = ffi.NULL

#: (no size limit for tensor_copy_or_shape: get_outputs(copy=True) copies every size)
_NO_LIMIT = 1 << 62


def _copied(out: Any) -> Any:
    """An output (an array, or a list / dict holding arrays) with every array copied."""
    if isinstance(out, np.ndarray):
        return out.copy()
    if isinstance(out, list):
        return [_copied(item) for item in out]
    if isinstance(out, dict):
        return {key: _copied(item) for key, item in out.items()}
    return out


def _discard(items: list[Any], item: Any) -> None:
    """Remove ``item`` from ``items`` if it is there (one step)."""
    try:
        items.remove(item)
    except ValueError:
        pass


def _free(api: Any, alloc: Any, ptr: Any) -> None:
    """Free a buffer ORT allocated for us (its contents already copied out)."""
    ignore(api.AllocatorFree(alloc, ptr))


def _release_outputs(api: Any, arr: Any, count: Any) -> None:
    """Release the bound output values nobody took, then ORT's array of them. Each step is
    done once (a slot or the array is cleared before its release), so an interrupted cleanup
    is run again to its end before the KeyboardInterrupt goes on."""
    try:
        _release_output_steps(api, arr, count)
    except KeyboardInterrupt:
        _release_output_steps(api, arr, count)
        raise


def _release_output_steps(api: Any, arr: Any, count: Any) -> None:
    slots = arr[0]
    if slots == _NULL:
        return
    for i in range(count[0]):
        raw = slots[i]
        if raw != _NULL:
            slots[i] = _NULL  # cleared first: released once
            api.ReleaseValue(raw)
    arr[0] = _NULL
    ignore(api.AllocatorFree(default_allocator()._ptr, slots))


class _OutScratch(_Scratch):
    """Out-parameters for one copy of the bound outputs (:meth:`IoBinding._plain_copies`): a
    shape query's (:class:`~ortc._numpy_bridge._Scratch`) and GetBoundOutputValues', taken
    from a pool and given back after use, so that no two calls share them (one that a signal
    handler makes on this thread in the middle of another)."""

    __slots__ = ("values", "output_count")

    def __init__(self) -> None:
        super().__init__()
        self.values = ffi.new("OrtValue***")
        self.output_count = ffi.new("size_t*")


#: free _OutScratch sets (list.pop and list.append are atomic)
_out_scratch: list[_OutScratch] = []


#: (numpy dtype, ORT element type, what a message calls the name, its C string, the context of
#: a failed bind) of one of the model's plain tensor inputs or outputs
_PlainSpec = Tuple[np.dtype[Any], int, str, bytes, str]


class _ArrayBound:
    """A numpy array bound as it is: the OrtValue over its memory (an owner that releases it)
    and the array, which stays referenced for as long as ORT's binding refers to its memory
    (and by every output array viewing it: see get_outputs); None for memory at an address
    its caller keeps alive (ortc.compat's pointers)."""

    __slots__ = ("_ptr", "array")

    def __init__(self, owner: Any, array: np.ndarray[Any, Any] | None) -> None:
        self._ptr = owner
        self.array = array


class IoBinding(Handle):
    """Inputs and outputs bound to a session, for :meth:`Session.run_with_binding`.

    Thread rules: Send, not Sync: every method, and a run with it, is exclusive. Threads
    sharing one binding get wrong outputs (conformance check thread.shared-binding); use one
    binding per thread. The binding keeps its session alive: ORT crashes when a binding is used
    after its session's release (life.binding-after-session-release). Bound arrays are kept
    alive by the binding until rebound or cleared. A caller's Value bound as an output is
    written by every run: the thread that binds it holds it exclusively until it is unbound
    or that thread ends, and a run from another thread holds it for the run instead (and the
    bound input Values, shared), so a use of them by the binding thread during that run is a
    conflict.
    """

    c_type = "OrtIoBinding"
    _not_picklable = ("it binds memory of this process to one session; make a new binding "
                      "from the unpickled session and bind there")
    send = True
    sync = False
    parents = ("OrtSession",)
    evidence = ("per-run state (bound inputs and outputs): threads sharing one binding get "
                "wrong results; it must not outlive its session")

    def __init__(self, session: Any) -> None:
        #: holds a bind has made and not yet recorded as an output's (see _bind_caller_output)
        self._pending_holds: list[Hold] = []
        session._check_open()
        self._api = api = _loader.api()
        raw = call_out(api.CreateIoBinding, "OrtIoBinding*", session._ptr)
        self._adopt(raw, api.ReleaseIoBinding, (session,))
        self._session = session
        self._bound_inputs: dict[str, Value] = {}
        self._bound_outputs: dict[str, Any] = {}
        #: input name -> a caller's Value bound to it (a run reads it: see _enter_bound)
        self._caller_inputs: dict[str, Value] = {}
        #: a caller's Value is bound (inputs or outputs), or an input whose name is also an
        #: output's: a run enters them (_enter_bound), or records them (_after_run)
        self._values_bound = False
        #: the outputs that are also inputs (or overridable initializers), for which ORT hands
        #: back the value bound as that input
        self._echo_names = session._engine.echoes
        #: input name -> the Value the last run read for it, when the name is also an output's:
        #: that output, as ORT holds it for get_outputs, is that Value's memory (_after_run)
        self._echoed: dict[str, Value] = {}
        self._engine = session._engine
        #: input (output) name -> what binding plain memory to that plain tensor needs (see
        #: _plain_spec), made once per name
        self._plain_inputs: dict[str, _PlainSpec] = {}
        self._plain_outputs: dict[str, _PlainSpec] = {}
        #: input (output) name -> (its C string, whether a Value bound to it must be a tensor,
        #: the context of a failure), once a caller's Value was bound to it through the general
        #: checks: the checks that depend on the name alone are not made again (libraries
        #: rebind Values every call)
        self._value_inputs: dict[str, tuple[bytes, bool, str]] = {}
        self._value_outputs: dict[str, tuple[bytes, bool, str]] = {}
        #: output name -> its C string and a failure's context, once bound to CPU memory ORT
        #: allocates
        self._device_outputs: dict[str, tuple[bytes, str]] = {}
        #: the process's CPU memory info (never released: see MemoryInfo's _process_wide)
        self._cpu_info_ptr = cpu_memory_info()._ptr
        #: ORT's default CPU allocator (process-wide too), which hands out the output values
        self._alloc_ptr = default_allocator()._ptr

    _holds = True  # bound values: ORT's binding refers to them until unbound
    #: output name -> the hold on a caller's Value bound to it, by the thread that bound it:
    #: every run with this binding writes that value, so other threads may not use it while it
    #: stays bound (this thread may read it between runs)
    _output_holds: dict[str, Hold] | None = None

    def _drop_references(self) -> None:
        # the bound values themselves were let go by the release (Handle._hold)
        self._session = None
        self._engine = None
        self._bound_inputs = {}
        self._bound_outputs = {}
        self._caller_inputs = {}
        self._echoed = {}
        self._release_output_holds()

    def _enter_bound(self, entries: Entries) -> dict[str, Value] | None:
        """For a run with this binding (:meth:`ortc._run.RunEngine.run_bound`): enter the
        caller's bound Values into the run's ``entries``: each input shared (the run reads
        it), and each output exclusively through the binding thread's hold (the run writes
        it) when the run is on another thread. On the holding thread the hold already keeps
        every other thread out of the output Value (and its own calls never conflict), so an
        entry there would add nothing. Another thread's use of one of them during the run is
        then a conflict like any other. A Value its user closed needs no entry: nobody can use
        it, and the binding keeps it alive for ORT. Returns the input Values whose names are
        also outputs', for :meth:`_after_run`: None when the model has no such name and no
        run of this binding kept any (nothing for _after_run to do)."""
        holds = self._output_holds
        if holds:
            bound = self._bound_outputs
            for name, hold in holds.items():
                if not hold.covers_this_thread():
                    value = bound[name]
                    if not value.closed:
                        entries.enter(value, True, through_holds=True)
        for value in self._caller_inputs.values():
            guard = value._guard
            if guard is not None and not guard.closed:  # (Value.closed, without its call)
                entries.enter(value)
        echo_names = self._echo_names  # (most models have none: no dict walk)
        if not echo_names:
            return {} if self._echoed else None
        return {n: v for n, v in self._bound_inputs.items() if n in echo_names}

    def _after_run(self, echoed: dict[str, Value]) -> None:
        """After a run: keep the input Values its outputs that are also inputs are (ORT hands
        the input's value back for such an output, over the memory of the Value bound as that
        input: the array a caller bound, which a rebind or a clear let go while ORT's output,
        and every array get_outputs made of it, still read it). Each is held until a later
        run no longer reads it, and is what those outputs' arrays and Values keep alive."""
        if not echoed and not self._echoed:
            return
        old, self._echoed = self._echoed, echoed
        for value in echoed.values():
            if isinstance(value, Value):
                self._hold(value)
        for value in old.values():
            if isinstance(value, Value):
                self._unhold(value)

    def _note_values_bound(self) -> None:
        self._values_bound = bool(self._caller_inputs or self._output_holds or (
            self._echo_names and not self._echo_names.isdisjoint(self._bound_inputs)))

    def _bind(self, table: dict[str, Any], name: str, value: Value | _ArrayBound | None
              ) -> None:
        """Record a bound value. ORT's binding refers to the value's memory until it is
        unbound, so the binding counts the value as a child: closing the value meanwhile
        defers its release (released at once, the next run read or wrote freed memory)."""
        if isinstance(value, Value):
            self._hold(value)
        old = table.get(name)
        table[name] = value
        if isinstance(old, Value):
            self._unhold(old)

    def _unbind_all(self, table: dict[str, Any]) -> None:
        held = list(table.values())
        table.clear()
        for value in held:
            if isinstance(value, Value):
                self._unhold(value)

    def _value_for(self, data: Any, what: str, tensor: bool = False, output: bool = False
                   ) -> Value | _ArrayBound:
        """What is bound for ``data``: a Value as it is; a C-contiguous array of a plain
        numeric dtype as an OrtValue over its memory (the value cache: rebinding
        arrays every call is what libraries written for onnxruntime do, and a Value handle per
        array cost most of such a call); any other array through a Value (a copy in ORT's
        layout where it needs one)."""
        if isinstance(data, Value):
            data._check_open()
            data._require_value(what)
            if tensor:  # another kind reached the kernel as its tensor (ORT 1.16: an output)
                data._require_tensor(what)
            return data
        if type(data) is np.ndarray:
            owner = self._session._engine.array_value(data, what, None, output)
            if owner is not None:
                return _ArrayBound(owner, data)
        return Value.from_numpy(data)

    @staticmethod
    def _array_for(data: Any, what: str) -> Any:
        """``data`` as a numpy array when it is an array producer (numpy, torch, DLPack, ...);
        a Value as it is; anything else (a string, a list, None) is refused: a binding takes
        memory to read or write, not data to convert."""
        if isinstance(data, Value) or type(data) is np.ndarray:
            return data
        if is_array_like(data) and not isinstance(data, np.generic):
            return as_array(data, what)[0]  # (a subclass, a masked array checked there too)
        raise InvalidArgument(f"{what}: expected a numpy array, another array or DLPack "
                              f"producer, or an ortc.Value, not {type(data).__name__}")

    def _arg(self, name: str, table: dict[str, Any], what: str) -> Any:
        arg = table.get(name)
        if arg is None:
            raise InvalidArgument(f"bind_{what}: unknown {what} name {name!r}; the model's "
                                  f"{what}s are {list(table)}")
        return arg

    @exclusive("BindInput", args={"data": "shared"})
    def bind_input(self, name: str, data: Any) -> None:
        """Bind an input to an array (used in place, no copy when C-contiguous) or a Value."""
        kind = type(data)
        if kind is np.ndarray:  # (the call libraries make every run: no detour)
            spec = self._plain_inputs.get(name) or self._plain_spec(name, False)
            if spec is not None and data.dtype is spec[0]:
                owner = self._engine.array_value(data, spec[2], spec[1])
                if owner is not None:
                    self._bind_plain(name, owner, data, spec, False)
                    return
        elif kind is Value:  # a Value bound to this name before (the wrapper found it open)
            known = self._value_inputs.get(name)
            if known is not None and (data._known_tensor or not known[1] and data._known_full):
                check(self._api.BindInput(self._ptr, known[0], data._ptr), known[2])
                self._bind_caller_input(name, data)
                return
        engine = self._engine
        arg = self._arg(name, engine.feedable, "input")
        if not isinstance(data, Value) and is_dlpack_producer(data):  # device checked there
            data = dlpack_array(data, f"bind_input {name!r}")
        data = self._array_for(data, f"bind_input {name!r}")
        if isinstance(data, np.ndarray) and arg.type.element_type is not None \
                and arg.dtype is not None and data.dtype != arg.dtype \
                and data.dtype.kind not in "USO":
            raise InvalidArgument(f"bind_input {name!r}: expected {arg.type.type_str}, got "
                                  f"dtype {data.dtype}")
        tensor = arg.type.kind == ValueKind.TENSOR
        value = self._value_for(data, f"input {name!r}", tensor)
        c_name = _model_name(name)
        check(self._api.BindInput(self._ptr, c_name, value._ptr), f"bind_input {name!r}")
        if isinstance(value, Value) and value is data:
            self._bind_caller_input(name, value)
            self._value_inputs[name] = (c_name, tensor, f"bind_input {name!r}")
            return
        self._bind(self._bound_inputs, name, value)
        self._caller_inputs.pop(name, None)
        self._note_values_bound()

    def _bind_caller_input(self, name: str, value: Value) -> None:
        """Record a caller's Value bound as input ``name`` (ORT's binding refers to it): held
        as the binding's child until unbound (see :meth:`_bind`), and entered by each run."""
        bound = self._bound_inputs
        old = bound.get(name)
        if old is not value:  # (the same Value again: already held once for this name)
            self._hold(value)
            bound[name] = value
            if isinstance(old, Value):
                self._unhold(old)
        self._caller_inputs[name] = value
        self._values_bound = True

    @exclusive("BindInput", "BindOutput")
    def _bind_address(self, name: str, address: int, nbytes: int, shape: tuple[int, ...],
                      element_type: int, output: bool) -> bool:
        """Bind ``name`` to ``nbytes`` at a raw CPU address (ortc.compat's IOBinding given a
        buffer_ptr: its caller vouches for the memory and keeps it alive, as onnxruntime's
        callers do), as a tensor of ``element_type``, which ORT checks at the run as
        onnxruntime's binding leaves it to. Only for a model input or output that is a plain
        tensor, and a plain element type; returns False (nothing bound) for anything else,
        which the caller binds the general way."""
        spec = (self._plain_outputs if output else self._plain_inputs).get(name) or \
            self._plain_spec(name, output)
        if spec is None or element_type not in PLAIN_DTYPES:
            return False
        self._bind_plain(name, self._engine.address_value(address, nbytes, shape, element_type,
                                                          spec[2], output), None, spec, output)
        return True

    def _plain_spec(self, name: str, output: bool) -> _PlainSpec | None:
        """What binding plain memory to ``name`` needs, when it is one of the model's plain
        tensor inputs (outputs), else None: made once per binding and name (libraries rebind
        every call)."""
        engine = self._engine
        fast = (engine.fast_outputs if output else engine.fast_inputs).get(name)
        if fast is None:
            return None
        what = f"output {name!r}" if output else f"input {name!r}"
        spec = (fast[0], fast[1], what, _model_name(name), f"bind_{what}")
        (self._plain_outputs if output else self._plain_inputs)[name] = spec
        return spec

    def _bind_plain(self, name: str, owner: Any, array: np.ndarray[Any, Any] | None,
                    spec: _PlainSpec, output: bool) -> None:
        """Bind an OrtValue over plain memory (an array's, or a caller's address) as input or
        output ``name``, one of the model's plain tensors (``spec``)."""
        if output:
            check(self._api.BindOutput(self._ptr, spec[3], owner), spec[4])
            bound = self._bound_outputs
        else:
            check(self._api.BindInput(self._ptr, spec[3], owner), spec[4])
            bound = self._bound_inputs
        old = bound.get(name)
        bound[name] = _ArrayBound(owner, array)
        if old is not None and type(old) is not _ArrayBound:
            self._unbound(name, old, output)
        elif not output and name in self._echo_names:  # (a run must keep it: _after_run)
            self._note_values_bound()

    def _unbound(self, name: str, old: Value, output: bool) -> None:
        """``old``, a caller's Value bound as ``name``, is no longer: let it go."""
        if output:
            self._set_output_hold(name, None)
        else:
            self._caller_inputs.pop(name, None)
            self._note_values_bound()
        self._unhold(old)

    @exclusive("BindOutput", "BindOutputToDevice", args={"data": "shared", "memory_info": "shared"})
    def bind_output(self, name: str, data: Any = None,
                    memory_info: MemoryInfo | None = None) -> None:
        """Bind an output to a preallocated array or Value (ORT writes into it), or, with no
        ``data``, let ORT allocate it on ``memory_info``'s device (CPU by default)."""
        kind = type(data)
        if memory_info is None:
            if data is None:  # ORT allocates it in CPU memory (every call, in libraries)
                device = self._device_outputs.get(name)
                if device is not None:
                    check(self._api.BindOutputToDevice(self._ptr, device[0], self._cpu_info_ptr),
                          device[1])
                    bound = self._bound_outputs
                    if bound.get(name, True) is not None or \
                            self._output_holds and name in self._output_holds:
                        self._bind(bound, name, None)  # (was bound to memory: let it go)
                        self._set_output_hold(name, None)
                    return
            elif kind is np.ndarray:  # (as bind_input's)
                spec = self._plain_outputs.get(name) or self._plain_spec(name, True)
                if spec is not None and data.dtype is spec[0] and data.flags.writeable:
                    owner = self._engine.array_value(data, spec[2], spec[1], True)
                    if owner is not None:
                        self._bind_plain(name, owner, data, spec, True)
                        return
            elif kind is Value:  # (as bind_input's)
                known = self._value_outputs.get(name)
                if known is not None and data._writable and (
                        data._known_tensor or not known[1] and data._known_full):
                    self._bind_caller_output(name, data, known[0], known[2])
                    return
        engine = self._engine
        arg = self._arg(name, engine.output_index, "output")
        if not isinstance(data, Value) and is_dlpack_producer(data):  # ORT writes into it
            data = dlpack_array(data, f"bind_output {name!r}")
        if data is not None:
            if memory_info is not None:
                raise InvalidArgument(f"bind_output {name!r}: memory_info is for an output ORT "
                                      f"allocates (no data); given data is where it is")
            if not isinstance(data, (Value, np.ndarray)) and is_array_like(data) and \
                    not exposes_memory(data):
                # __array__ is a conversion, free to hand over a copy: ORT would write the
                # outputs there, and the object bound would never see them
                raise InvalidArgument(
                    f"bind_output {name!r}: a {type(data).__name__} gives its data only through "
                    f"__array__, which may be a copy; ORT writes an output into the memory "
                    f"bound: bind a numpy array, a DLPack producer or a buffer over it")
            data = self._array_for(data, f"bind_output {name!r}")
            if isinstance(data, Value) and not data._writable:
                raise InvalidArgument(f"bind_output {name!r}: this Value is over read-only "
                                      f"memory (ORT writes into an output)")
            if isinstance(data, np.ndarray):
                if not data.flags.c_contiguous or not data.flags.writeable:
                    raise InvalidArgument(f"bind_output {name!r}: the array must be "
                                          f"C-contiguous and writeable (ORT writes into it)")
                et = arg.element_type
                if data.dtype.kind in STRING_KINDS or (et is not None and
                                                       (et == ElementType.STRING or bits_for(et))):
                    # such an array reaches ORT as a converted copy, which ORT would write
                    raise InvalidArgument(
                        f"bind_output {name!r}: ORT cannot write a {arg.type.type_str} output "
                        f"into a numpy array in place: bind it with no array and read "
                        f"get_outputs(), or bind an ortc.Value")
                if arg.dtype is not None and data.dtype != arg.dtype:
                    raise InvalidArgument(f"bind_output {name!r}: expected "
                                          f"{arg.type.type_str}, got dtype {data.dtype}")
            tensor = arg.type.kind == ValueKind.TENSOR
            value = self._value_for(data, f"output {name!r}", tensor, True)
            c_name = _model_name(name)
            if isinstance(data, Value):
                self._bind_caller_output(name, data, c_name, f"bind_output {name!r}")
                self._value_outputs[name] = (c_name, tensor, f"bind_output {name!r}")
                return
            check(self._api.BindOutput(self._ptr, c_name, value._ptr), f"bind_output {name!r}")
            self._bind(self._bound_outputs, name, value)  # an array's Value: ours alone
            self._set_output_hold(name, None)
        else:
            info = memory_info or cpu_memory_info()
            info._check_open()
            c_name = _model_name(name)
            check(self._api.BindOutputToDevice(self._ptr, c_name, info._ptr),
                  f"bind_output {name!r}")
            self._bind(self._bound_outputs, name, None)
            self._set_output_hold(name, None)
            if memory_info is None:
                self._device_outputs[name] = (c_name, f"bind_output {name!r}")

    def _bind_caller_output(self, name: str, value: Value, c_name: bytes, context: str
                            ) -> None:
        """Bind a caller's (open, checked) Value as output ``name``. Every run writes it while
        it is bound: this thread holds it from now on (a conflict raises before ORT refers to
        it), unless it already does, as that output."""
        holds = self._output_holds
        held = holds.get(name) if holds else None
        if held is not None and held.covers_this_thread() and \
                self._bound_outputs.get(name) is value:
            check(self._api.BindOutput(self._ptr, c_name, value._ptr), context)
            return
        hold = Hold(value)
        # listed before it is taken: whatever stops this bind, the next change of an output's
        # hold (_set_output_hold) or the binding's close lets it go
        self._pending_holds.append(hold)
        try:
            hold.take(value)
            check(self._api.BindOutput(self._ptr, c_name, value._ptr), context)
        except BaseException:
            hold.release()
            _discard(self._pending_holds, hold)
            raise
        self._bind(self._bound_outputs, name, value)
        self._set_output_hold(name, hold)

    def _release_pending_holds(self) -> None:
        """Let go of the listed holds not recorded as an output's (an interrupted bind's: a
        bind is exclusive, none is in progress on this binding now), and clear the list."""
        pending = self._pending_holds
        recorded = tuple((self._output_holds or {}).values())
        for hold in tuple(pending):
            if hold not in recorded:  # (a Hold compares by identity)
                hold.release()
            _discard(pending, hold)

    def _set_output_hold(self, name: str, hold: Hold | None) -> None:
        holds = self._output_holds
        if holds is None:
            holds = self._output_holds = {}
        old = holds.pop(name, None)
        if hold is not None:
            holds[name] = hold
            self._values_bound = True
            _discard(self._pending_holds, hold)  # recorded: no longer only listed
        else:
            self._note_values_bound()
        if old is not None:
            old.release()
        if self._pending_holds:
            self._release_pending_holds()

    def _release_output_holds(self) -> None:
        holds, self._output_holds = self._output_holds, None
        self._note_values_bound()
        for hold in [*(holds or {}).values(), *self._pending_holds]:
            hold.release()

    @exclusive("ClearBoundInputs")
    def clear_binding_inputs(self) -> None:
        self._api.ClearBoundInputs(self._ptr)
        self._unbind_all(self._bound_inputs)
        self._caller_inputs = {}
        self._note_values_bound()

    @exclusive("ClearBoundOutputs")
    def clear_binding_outputs(self) -> None:
        self._api.ClearBoundOutputs(self._ptr)
        self._unbind_all(self._bound_outputs)
        self._release_output_holds()

    @exclusive("SynchronizeBoundInputs")
    def synchronize_inputs(self) -> None:
        """Wait until bound inputs are ready on their devices (a no-op on CPU)."""
        check(self._api.SynchronizeBoundInputs(self._ptr))

    @exclusive("SynchronizeBoundOutputs")
    def synchronize_outputs(self) -> None:
        """Wait until bound outputs are ready (a no-op on CPU)."""
        check(self._api.SynchronizeBoundOutputs(self._ptr))

    @exclusive("GetBoundOutputNames")
    def output_names(self) -> list[str]:
        """Names of the bound outputs, in binding order."""
        return self._names()

    def _names(self) -> list[str]:
        api = self._api
        alloc = default_allocator()._ptr
        buf = ffi.new("char**")
        lengths = ffi.new("size_t**")
        count = ffi.new("size_t*")
        check(api.GetBoundOutputNames(self._ptr, alloc, buf, lengths, count))
        if not count[0]:
            return []
        try:
            names, pos = [], 0
            for i in range(count[0]):
                n = lengths[0][i]
                names.append(cast(bytes, ffi.unpack(buf[0] + pos, n)).decode())
                pos += n
            return names
        finally:
            _free(api, alloc, buf[0])
            _free(api, alloc, lengths[0])

    @exclusive("GetBoundOutputValues", "GetBoundOutputNames")
    def get_outputs(self, copy: bool = False) -> list[RunOutput]:
        """The bound outputs after a run, as numpy arrays (views; lists/dicts for other kinds,
        None for an empty optional: :data:`ortc.RunOutput`, as :meth:`Session.run` returns).

        A view keeps what it reads alive: the Value (or array) bound as that output, or the
        memory ORT allocated, even after the binding is cleared or rebound. The next run with
        this binding writes that same memory (ORT reuses the outputs it allocated when their
        shape matches): copy a result to keep it across runs, or ask for copies with
        ``copy=True`` (arrays of their own, made straight from ORT's memory)."""
        api = self._api
        if copy:
            if self._engine.fast_outputs.keys() >= self._bound_outputs.keys():
                return self._plain_copies()

        def convert(slots: Any, i: int, value: Value | _ArrayBound | None) -> Any:
            owner = take_output(api, slots, i)
            return ortvalue_to_python(api, owner, owner if value is None else value, True)

        def convert_copy(slots: Any, i: int, value: Value | _ArrayBound | None) -> Any:
            raw = slots[i]  # (left in its slot: released with the others)
            if raw != ffi.NULL and value_kind(api, raw) == ValueKind.TENSOR:
                _et, _shape, out = tensor_copy_or_shape(api, raw, _NO_LIMIT)
                if out is not None:
                    return out
            return _copied(convert(slots, i, value))

        return self._each_output(convert_copy if copy else convert)

    def _plain_copies(self) -> list[RunOutput]:
        """get_outputs(copy=True) when every bound output is one of the model's plain tensors:
        each copied straight from ORT's memory into a new array (its type and shape read in
        one call, its data with one memmove), with no look at the output names or kinds. An
        output no run wrote yet (ORT holds no tensor for it) is None, as get_outputs gives."""
        api = self._api
        pool = _out_scratch
        try:
            sc = pool.pop()
        except IndexError:
            sc = _OutScratch()
        arr, count = sc.values, sc.output_count
        try:
            self._output_values(arr, count)
            slots = arr[0]
            out: list[RunOutput] = []
            for i in range(count[0]):
                raw = slots[i]  # (left in its slot: released with the others)
                copy = None
                if raw != _NULL:
                    if api.fast_shape:
                        found = copy_plain_tensor(api, raw, sc, _NO_LIMIT, True)
                        copy = found[2] if found is not None else None
                    elif not is_empty_optional(api, raw):
                        copy = tensor_copy_or_shape(api, raw, _NO_LIMIT)[2]
                if copy is None:  # (none, or not a type numpy reads as it is)
                    owner = take_output(api, slots, i)
                    copy = _copied(ortvalue_to_python(api, owner, owner, True))
                out.append(copy)
        finally:
            _release_outputs(api, arr, count)
        pool.append(sc)
        return out

    @exclusive("GetBoundOutputValues", "GetBoundOutputNames")
    def get_output_values(self) -> list[Value]:
        """The bound outputs after a run, as ortc Values (each keeps the Value bound as that
        output alive: its memory is theirs)."""
        api = self._api
        return self._each_output(lambda slots, i, value: Value._take(
            api, slots, i, () if value is None else (value,)))

    def _each_output(self, convert: Callable[[Any, int, Value | _ArrayBound | None], T]
                     ) -> list[T]:
        """``convert(slots, i, bound value or None)`` for each bound output after a run; the
        slots ORT handed out and not taken are released, also on an error."""
        api = self._api
        bound = self._bound_per_output()
        out: list[T] = []
        arr = ffi.new("OrtValue***")
        count = ffi.new("size_t*")
        try:
            self._output_values(arr, count)
            slots = arr[0]
            for i in range(count[0]):
                out.append(convert(slots, i, bound[i] if i < len(bound) else None))
            return out
        finally:
            _release_outputs(api, arr, count)

    def _bound_per_output(self) -> list[Value | _ArrayBound | None]:
        """What each output's memory is, in ORT's binding order: the Value (or array) bound to
        it, or for an output that is also an input the input Value the last run read
        (:meth:`_after_run`); None: memory ORT allocated."""
        echoed = self._echoed
        if not echoed and not any(v is not None for v in self._bound_outputs.values()):
            return []
        bound = self._bound_outputs
        return [echoed[n] if n in echoed else bound.get(n) for n in self._names()]

    def _output_values(self, arr: Any, count: Any) -> None:
        """Fill ``arr``/``count`` with the bound output values. The caller takes them from
        ``arr[0]`` (its slots) and ends with :func:`_release_outputs`, also when interrupted
        right after this call: ORT's array stays in ``arr`` until then."""
        check(self._api.GetBoundOutputValues(self._ptr, default_allocator()._ptr, arr, count))
