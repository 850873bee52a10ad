"""The run pipeline: every run entry point (run, run_with_values, run_with_binding, run_async)
is one straight line through :class:`RunContext`:

    context (options, deadline, Ctrl-C)  ->  inputs  ->  one C call  ->  outputs  ->  close

The context holds everything a run takes (guard entries on the Values and options it uses, the
OrtValues it made, the outputs ORT handed back, the deadline, the main thread's Ctrl-C
registration) and :meth:`RunContext.close` gives all of it back, once, whatever stopped the
run. ORT allocates the outputs (a model runs once per call; nothing is guessed). The thread
guard of the session and of the arguments its marker names is entered by the marker's wrapper
before any of this (:func:`ortc._guard.guarded`).

Hot-path tuning stays in this file; docs/PERFORMANCE.md measures it.
"""

from __future__ import annotations

import _thread
import math
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ._cstr import NameArray, shared_name_array
from ._enums import ElementType, ValueKind
from ._ffi import ffi
from ._guard import Entries
from . import _interrupt, _process
from . import run_options as _run_options_module
from ._interrupt import Deadline, watcher
from ._loader import Api
from ._numpy_bridge import (PLAIN_DTYPES, PLAIN_ELEMENT_TYPES, PYTHON_DATA, array_to_ortvalue,
                            as_array, copy_plain_tensor, give_scratch, is_array_like,
                            ortvalue_to_python, take_output, take_scratch, tensor_copy_or_shape,
                            tensor_view, view_output)
from ._status import error_from_status, raise_status
from .dlpack import dlpack_array, is_dlpack_producer
from .dtypes import STRING_KINDS, bits_for, dtype_for, element_type_for, feed_dtype
from .errors import InvalidArgument, RunTimeout
from .memory import cpu_memory_info
from .run_options import (RunOptions, checked_run_options, checked_timeout, main_run_options,
                          worker_run_options)
from .typeinfo import NodeArg, TypeInfo
from .value import Value

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .binding import IoBinding

__all__ = ["RunEngine", "RunContext"]

#: OrtValues kept per thread for reuse (see RunEngine.input_value); past this, the cache restarts
_VALUE_CACHE_MAX = 256
_get_ident = _thread.get_ident
_getframe = sys._getframe
_NULL = ffi.NULL
_gc = ffi.gc
_ffi_release = ffi.release
_from_buffer = ffi.from_buffer
_cast = ffi.cast
_monotonic = time.monotonic
#: the C types of the arrays a run passes (parsed once: ffi.new of a type string parses it per call)
_VALUE_ARRAY = ffi.typeof("OrtValue*[]")
_VALUE_OUT = ffi.typeof("OrtValue**")

#: outputs of at most this many bytes are copied into a new array rather than viewed: for a
#: small tensor a copy costs less than the owner chain a view needs (docs/PERFORMANCE.md)
COPY_OUT_MAX = 1 << 16


def _tensor_element_type(info: TypeInfo | None) -> ElementType | None:
    """The element type of a tensor type (a sequence's item, a map's values), else None."""
    return info.element_type if info is not None and info.kind == ValueKind.TENSOR else None


#: element type -> (dtype, the type as an int) for the types a numpy array is read or written
#: as directly, None for the others (see _plain_tensors); filled as types are first met
_plain_specs: dict[Any, tuple[np.dtype[Any], int] | None] = {}


def _plain_tensors(args: Iterable[NodeArg]) -> dict[str, tuple[np.dtype[Any], int]]:
    """name -> (dtype, element type) of the ``args`` that are tensors of a type numpy holds as
    it is (no strings, no sub-byte packing, a dtype known: ml_dtypes' when it is there). The
    dtype is the one numpy gives callers' arrays (np.int64, not the equal C long long outputs
    come out as), so that the identity check in prepare_inputs holds."""
    found: dict[str, tuple[np.dtype[Any], int]] = {}
    for a in args:
        t = a.type
        if t.kind != ValueKind.TENSOR or t.element_type is None:
            continue
        et = t.element_type
        try:
            spec = _plain_specs[et]
        except KeyError:
            dt = dtype_for(et, required=False)
            spec = None if dt is None or dt.kind in STRING_KINDS or bits_for(et) \
                else (feed_dtype(dt), int(et))
            _plain_specs[et] = spec
        if spec is not None:
            found[a.name] = spec
    return found


#: the value cache (see RunEngine.prepare_inputs): thread id -> (address, shape, element type)
#: -> the owner of an OrtValue over that memory. One for every session: such a value holds an
#: address, a shape and a type and belongs to no session, so a session made per call (per task,
#: per operator) finds the values its predecessor made over the caller's buffers
_value_caches: dict[int, dict[Any, Any]] = _process.emptied(__name__, "_value_caches", {})
#: the same for one-element memory bound as an output (see _reshapeable): kept apart, and never
#: fed, since ORT may have given such a value another rank
_output_values: dict[int, dict[Any, Any]] = _process.emptied(__name__, "_output_values", {})


def _thread_values(tables: dict[int, dict[Any, Any]] = _value_caches) -> dict[Any, Any]:
    """This thread's table in ``tables`` (the value cache by default), made on first use;
    past 64 threads the mapping restarts (what a table holds is only ever a cache)."""
    tid = _get_ident()
    table = tables.get(tid)
    if table is None:
        if len(tables) > 64:
            tables.clear()
        table = tables[tid] = {}
    return table


def _reshapeable(shape: Sequence[int]) -> bool:
    """Whether ORT may give a value of ``shape`` bound as an output another shape in place: it
    writes a one-element result of another rank into a one-element value (a scalar into a
    [1], or the reverse) and reshapes that value. Such a value is kept in _output_values, not
    in the value cache: every session's feeds at that address would get the new shape
    (Unsqueeze's [1] fed back read as a scalar; a [1] bound for a Squeeze, then fed as a [1],
    refused as rank 0). As an output it may be bound again: ORT takes a one-element value of
    any rank for a one-element result."""
    return math.prod(shape) == 1


class RunContext:
    """What one run holds, and the one cleanup that gives it back (:meth:`close`).

    Made first thing in every run entry point, inside the ``try`` whose ``finally`` closes
    it: the run options (the caller's, a private one for a deadline, or the main thread's for
    Ctrl-C), the deadline, the main thread's Ctrl-C registration, guard entries on what the run
    uses beyond the marker's arguments (:class:`~ortc._guard.Entries`), the OrtValues made for
    it (``created``), what must stay alive until the C call returns (``keep``) and ORT's output
    slots. Every step of :meth:`close` is done at most once, so a close stopped by an interrupt
    is simply run again (and the finalizer runs it for a context nobody closed).
    """

    __slots__ = ("frame", "call", "job", "entries_made", "created", "keep", "outputs", "count",
                 "release", "run_options", "raw_run_options", "private", "source",
                 "private_claim", "deadline", "timeout", "main", "outer", "fired", "closed")

    def __init__(self, release: Any, frame: Any, call: str, job: bool = False) -> None:
        self.release = release
        self.frame = frame
        self.call = call
        self.job = job
        self.entries_made: Entries | None = None
        self.created: list[Any] | None = None  # (made by the first: most runs make none)
        self.keep: list[Any] = []
        self.outputs: Any = None
        self.count = 0
        self.run_options: RunOptions | None = None
        self.raw_run_options: Any = _NULL
        self.private: RunOptions | None = None
        self.source: RunOptions | None = None  # the caller's options ``private`` stands in for
        #: a one-item list when something besides this context may stop the private options
        #: (run_async's Future): whoever pops it owns them (see :meth:`stopper`)
        self.private_claim: list[bool] | None = None
        self.deadline: Deadline | None = None
        self.timeout = 0.0
        self.main = False
        self.outer: Any = None
        self.fired = False
        self.closed = False

    @property
    def entries(self) -> Entries:
        """The guard entries of what the run uses beyond the marker's arguments (made on first
        use: most runs feed arrays only)."""
        entries = self.entries_made
        if entries is None:
            entries = self.entries_made = Entries(self.frame, self.call, self.job)
        return entries

    def arm(self, run_options: Any, timeout: Any, ctrl_c: bool = True,
            own_options: bool = False) -> None:
        """Choose the run's options and wire in the deadline and, on the main thread, Ctrl-C.
        The caller's options were entered by the marker's wrapper (shared, for the call).
        ``own_options``: the run gets options of its own (run_async: its Future's cancel
        terminates them, and nobody else's run): new ones, or a stand-in for the caller's.
        A deadline's run gets them too; on the main thread, a run with the caller's options
        gets their main-thread stand-in, which Ctrl-C terminates (the caller's options may
        serve other threads' runs at once: ORT's terminate flag is the options'). A run left
        with none gets the workers' options, which the exit drain terminates (ORT cannot stop
        a run it was given no options for)."""
        ro = run_options
        if ro is not None:
            checked_run_options(ro)
            if own_options or timeout is not None:
                # a stand-in that the caller's terminate() reaches too
                self.source = ro
                ro = self.private = ro._stand_in(False)
        elif own_options:
            ro = self.private = RunOptions()
        main = ctrl_c and _get_ident() == _interrupt.MAIN_THREAD and (watcher.sigint_ready or
                                                                      watcher.ctrl_c_ready())
        if main and watcher.interrupted:  # options a Ctrl-C terminated that nobody re-armed
            watcher.rearm()  # yet; first: a deadline's immediate terminate below must stay
        if timeout is not None:
            seconds = checked_timeout(timeout)
            assert seconds is not None
            if ro is None:
                ro = self.private = RunOptions()
            self.timeout = seconds
            # kept before it is armed: an interrupt between leaves nothing armed unknown here
            deadline = self.deadline = watcher.deadline(_monotonic() + seconds, ro)
            watcher.add_deadline(deadline)
        if main:
            if ro is None:
                ro = _run_options_module._main_options or main_run_options()
            elif self.private is None:
                # the caller's options, which other threads' runs may use at once: Ctrl-C
                # stops the main thread's run alone (KeyboardInterrupt is the main thread's)
                ro = ro._stand_in(True)
            self.outer = watcher.main_run  # a run a signal handler started inside another
            self.main = True  # before the registration: close() undoes a half-made one
            watcher.main_run = ro
        elif ro is None:  # (no Ctrl-C wiring) options the exit drain can terminate
            ro = _run_options_module._worker_options or worker_run_options()
        if ro is not None:
            self.run_options = ro
            self.raw_run_options = ro._ptr

    def check(self, status: Any) -> None:
        """Raise what the run's C call ended in: first what a signal handler raised during it
        on the main thread (Ctrl-C's KeyboardInterrupt, an application's alarm, kept by ORT's
        log callback: it belongs to this call), with ORT's error as its context; then
        RunTimeout when the run's deadline stopped it; else ORT's error."""
        deferred = watcher.deferred is not None and _get_ident() == _interrupt.MAIN_THREAD
        if status:
            err = error_from_status(status)
            fired = False
            deadline = self.deadline
            if deadline is not None:  # finished again by close() if an interrupt cuts this
                fired = self.fired = watcher.finish_deadline(deadline) or self.fired
                self.deadline = None
            try:
                if deferred:
                    watcher.raise_deferred(err)
                if fired:
                    raise RunTimeout(f"the run did not finish within {self.timeout:g} s and "
                                     f"was terminated") from err
                raise err
            finally:  # (see _status.raise_status: no frame keeps what its traceback holds)
                del err
        if deferred:
            watcher.raise_deferred()

    def close(self) -> None:
        """Give back everything the run holds (idempotent; retried to the end when a signal
        handler's exception stops it, the first such exception then going on)."""
        try:
            self._close_steps()
        except KeyboardInterrupt as exc:
            while True:  # a storm of them may stop several attempts: the first goes on
                try:
                    self._close_steps()
                    break
                except KeyboardInterrupt:
                    pass
            raise exc

    def _close_steps(self) -> None:
        entries = self.entries_made
        if entries is not None:
            entries.leave()
        created = self.created
        if created is not None:
            for owner in created:
                _ffi_release(owner)  # idempotent: a cffi owner runs its destructor once
        outputs = self.outputs
        if outputs is not None:
            release = self.release
            for i in range(self.count):
                raw = outputs[i]
                if raw != _NULL:
                    outputs[i] = _NULL  # cleared first: a retry never releases it again
                    release(raw)
        if self.deadline is not None:
            self.settle_deadline()
        if self.main:
            watcher.end_main_run(self.outer)
            self.main = False  # (after: an interrupt between ends it again)
        if self.private is not None:
            private, self.private = self.private, None
            owned = True
            if self.private_claim is not None:
                try:
                    self.private_claim.pop()
                except IndexError:  # a cancel took them, and may be terminating them now:
                    owned = False  # they go with their last reference, the Future's
            source = self.source
            if source is not None:  # a stand-in: off the caller's list, closed if ours
                source._drop_copy(private, owned)
            elif owned:
                private.close()
        self.frame = None  # it holds this context among its locals
        # what the run held goes now, not with this context (which has a finalizer: PyPy
        # frees such an object one collection later, and its Values with it)
        self.keep.clear()
        if created is not None:
            created.clear()
        self.closed = True

    def stopper(self) -> Callable[[], None]:
        """What stops this run from another thread (run_async's Future.cancel): terminates
        the private options unless the run's close has taken them. One atomic step (popping
        ``private_claim``) decides between the two, so a close never meets a terminate inside
        the options (strict mode refuses such a close) and a terminate never meets closed
        options."""
        private = self.private
        assert private is not None
        claim = self.private_claim = [True]

        def stop() -> None:
            try:
                claim.pop()
            except IndexError:
                return  # the run is over: its close took the options
            private.terminate()

        return stop

    def settle_deadline(self) -> None:
        """Take the run's deadline off the watcher (idempotent); note whether it fired."""
        deadline = self.deadline
        if deadline is not None:
            self.fired = watcher.finish_deadline(deadline) or self.fired
            self.deadline = None

    def __del__(self) -> None:
        # the net for a close an interrupt stopped before its first step
        if self.closed:
            return
        try:
            self._close_steps()
        except BaseException:  # noqa: BLE001 - a finalizer has nobody to tell
            pass


class OutputList:
    """A requested output list, resolved once per session and list: the C array of its names
    without repeats, which are tensors, which are also inputs (ORT hands back the fed value:
    copied), and where each requested name's result is."""

    __slots__ = ("names", "count", "tensor", "handed_back", "positions")

    def __init__(self, engine: RunEngine, requested: tuple[str, ...]) -> None:
        unique = tuple(dict.fromkeys(requested))
        self.names = shared_name_array(unique)
        self.count = len(unique)
        self.tensor = [engine.output_index[n].kind == ValueKind.TENSOR for n in unique]
        self.handed_back = tuple(i for i, n in enumerate(unique) if n in engine.feedable)
        self.positions = None if len(unique) == len(requested) else \
            tuple(unique.index(n) for n in requested)


class RunEngine:
    """The run machinery of one session, built from its inputs and outputs."""

    def __init__(self, api: Api, inputs: list[NodeArg], outputs: list[NodeArg],
                 initializers: list[NodeArg]) -> None:
        self.api = api
        self.inputs = inputs
        feedable = self.feedable = {a.name: a for a in (*inputs, *initializers)}
        self.output_index = {a.name: a for a in outputs}
        self.all_outputs = tuple([a.name for a in outputs])
        overridable = {a.name for a in initializers}
        optional: list[str] = []
        required: list[str] = []
        for a in inputs:
            if a.type.kind == ValueKind.OPTIONAL:
                optional.append(a.name)
            elif a.name not in overridable:
                required.append(a.name)
        self.optional_inputs = frozenset(optional)
        self.required = tuple(required)
        self.names: dict[tuple[str, ...], NameArray] = {}
        self.lists: dict[Any, OutputList] = {}
        self.cpu_info = cpu_memory_info()
        self.cpu_info_ptr = self.cpu_info._ptr
        #: inputs that take a numpy array of one exact dtype directly: name -> (dtype, type)
        self.fast_inputs = _plain_tensors(feedable.values())
        #: outputs ORT can write into a numpy array of one exact dtype: name -> (dtype, type)
        self.fast_outputs = _plain_tensors(outputs)
        #: the outputs that are also inputs or overridable initializers (ORT hands back the
        #: fed value for them)
        self.echoes = frozenset(self.output_index.keys() & feedable.keys())

    # -- names ---------------------------------------------------------------------------------
    def name_array(self, names: tuple[str, ...]) -> NameArray:
        arr = self.names.get(names)
        if arr is None:
            for n in names:
                if not isinstance(n, str):
                    raise InvalidArgument(f"names must be str, got {type(n).__name__} {n!r}")
            if len(self.names) > 256:  # bound the cache for callers with ever-new name sets
                self.names.clear()
            arr = self.names[names] = shared_name_array(names)
        return arr

    def output_names(self, output_names: Sequence[str] | None) -> tuple[str, ...]:
        """The requested outputs as a tuple (taken once: any iterable is read a single time)."""
        if output_names is None:
            return self.all_outputs
        if isinstance(output_names, (str, bytes)):
            raise InvalidArgument(f"output_names must be a list of names or None, not a "
                                  f"single {type(output_names).__name__} {output_names!r}")
        names = output_names if type(output_names) is tuple else tuple(output_names)
        for n in names:
            if not isinstance(n, str):  # first: a list as a name is not even hashable
                raise InvalidArgument(f"output names must be str, got {type(n).__name__} {n!r}")
            if n not in self.output_index:
                raise InvalidArgument(f"unknown output name {n!r}; the model's outputs are "
                                      f"{list(self.output_index)}")
        return names

    def output_list(self, output_names: Sequence[str] | None) -> OutputList:
        key = output_names if output_names is None or type(output_names) is tuple \
            else self.output_names(output_names)
        try:
            found = self.lists.get(key)
        except TypeError:  # a tuple holding a name that is not hashable (so not a str)
            self.output_names(key)
            raise
        if found is None:
            found = OutputList(self, self.output_names(key))
            if len(self.lists) > 256:  # bound the cache for callers with ever-new name lists
                self.lists.clear()
            self.lists[key] = found
        return found

    # -- inputs --------------------------------------------------------------------------------
    def snapshot(self, feeds: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[Any, Any]]:
        """The feeds as (names, a dict of their own), read once: whatever the mapping does
        later (another thread editing it, a __getitem__ that builds arrays), the run uses these
        objects, and the run holds them, so every buffer stays alive until the C call
        returns."""
        if type(feeds) is dict:
            copy = feeds.copy()  # one call: a dict is copied atomically
        elif isinstance(feeds, Mapping):
            copy = dict(list(feeds.items()))  # (each item read once)
        else:
            raise InvalidArgument(f"feeds must be a dict of input name -> array, "
                                  f"not {type(feeds).__name__}")
        optional = self.optional_inputs
        if optional and any(v is None and k in optional for k, v in copy.items()):
            # an empty optional input is passed by leaving it out
            copy = {k: v for k, v in copy.items() if not (v is None and k in optional)}
        return tuple(copy), copy

    def input_names(self, names: tuple[Any, ...]) -> NameArray:
        """The C array of a run's input names, cached per name tuple once the tuple is known
        to name every required input (so a name set seen before costs one lookup)."""
        arr = self.names.get(names)
        if arr is None:
            for name in self.required:
                if name not in names:
                    for given in names:  # a misspelt name explains a missing one best
                        self.unknown_input(given)
                    missing = [n for n in self.required if n not in names]
                    raise InvalidArgument(f"missing input(s) {missing}: the model requires "
                                          f"{list(self.required)}, the feeds have "
                                          f"{list(names)}")
            arr = self.name_array(names)
        return arr

    def unknown_input(self, name: Any) -> None:
        if name not in self.feedable:
            if not isinstance(name, str):
                raise InvalidArgument(f"input names must be str, got {type(name).__name__}")
            raise InvalidArgument(f"unknown input name {name!r}; the model's inputs are "
                                  f"{[a.name for a in self.inputs]}")

    def prepare_inputs(self, feeds: Mapping[str, Any], ctx: RunContext
                       ) -> tuple[NameArray, list[Any]]:
        """An OrtValue per feed (read once: :meth:`snapshot`), into ``ctx``: the OrtValues
        made for this run only go to ``ctx.created``, what must stay alive (or entered) until
        the C call returns to ``ctx.keep`` (and ``ctx.entries``). The values come as a list,
        which cffi passes to Run as the C array (a C array of their own for RunAsync, which
        ORT may read after the call returns).

        An exact-dtype, C-contiguous numpy array takes the value cache: ORT's value over
        caller memory holds only the address, the shape and the type, so one made for an
        earlier run serves any later array at the same address with the same shape and type
        (numpy hands freed blocks out again). The cache is per thread and ``keep`` holds each
        value a run uses, so a cache restart never releases a value in use. A key is looked up
        with the buffer cdata itself (cffi hashes it by address: tests/test_run_pipeline.py,
        ``test_the_value_cache_finds_a_buffer_by_its_address``, holds cffi to that) and stored
        with a plain pointer, which does not keep the array alive."""
        names, data = self.snapshot(feeds)
        in_names = self.names.get(names)
        if in_names is None:
            in_names = self.input_names(names)
        keep = ctx.keep
        keep.append(data)
        values: list[Any] = []
        keep.append(values)  # (which holds each cached value the run uses)
        fast = self.fast_inputs
        cache: dict[Any, Any] | None = None  # this thread's value cache, looked up once
        for name, array in data.items():
            spec = fast.get(name)
            if spec is not None and type(array) is np.ndarray:
                dtype, et = spec
                if array.dtype is dtype or array.dtype == dtype:
                    try:
                        buf = _from_buffer(array)
                    except ValueError:  # not C-contiguous: the general path copies it
                        values.append(self.feed_value(name, array, ctx))
                        continue
                    if cache is None:
                        cache = _value_caches.get(_get_ident()) or _thread_values()
                    shape = array.shape
                    owner = cache.get((buf, shape, et))
                    if owner is None:
                        owner = self.cached_value(buf, array.nbytes, shape, et,
                                                  f"input {name!r}", cache)
                    values.append(owner)
                    continue
            values.append(self.feed_value(name, array, ctx))
        return in_names, values

    def array_value(self, array: np.ndarray[Any, Any], what: str, et: int | None = None,
                    output: bool = False) -> Any:
        """An OrtValue over ``array``'s memory (as element type ``et``, by default its dtype's)
        from this thread's value cache (see :meth:`prepare_inputs`), or None when the array
        is not one it takes (not C-contiguous, not of a plain numeric dtype). ``output``: ORT
        writes into it (a bound output): one of one element is kept apart from the value cache
        (see :func:`_reshapeable`)."""
        if et is None:
            et = PLAIN_ELEMENT_TYPES.get(array.dtype)
            if et is None:
                return None
        try:
            buf = _from_buffer(array)
        except ValueError:  # not C-contiguous
            return None
        shape = array.shape
        cache = _thread_values(_output_values if output and _reshapeable(shape)
                               else _value_caches)
        owner = cache.get((buf, shape, et))
        if owner is None:
            owner = self.cached_value(buf, array.nbytes, shape, et, what, cache)
        return owner

    def address_value(self, address: int, nbytes: int, shape: tuple[int, ...], et: int,
                      what: str, output: bool = False) -> Any:
        """An OrtValue over ``nbytes`` at a raw CPU address its caller vouches for (what
        onnxruntime's IOBinding takes from libraries that rebind pointers every call), from
        this thread's value cache (``output``: as in :meth:`array_value`)."""
        cache = _thread_values(_output_values if output and _reshapeable(shape)
                               else _value_caches)
        key = (address, shape, et)  # (an int: no pointer object made for a hit)
        owner = cache.get(key)
        if owner is None:
            owner = self.cached_value(_cast("char*", address), nbytes, shape, et, what, cache,
                                      key)
        return owner

    def cached_value(self, buf: Any, nbytes: int, shape: tuple[int, ...], et: int,
                     context: str, cache: dict[Any, Any], key: Any = None) -> Any:
        """A new OrtValue over ``nbytes`` at ``buf``, kept in this thread's value cache under
        ``key`` (by default the pointer's)."""
        out = ffi.new(_VALUE_OUT)
        status = self.api.CreateTensorWithDataAsOrtValue(
            self.cpu_info_ptr, buf, nbytes, shape, len(shape), et, out)
        if status:
            raise_status(status, context)
        owner = _gc(out[0], self.api.ReleaseValue)
        if len(cache) >= _VALUE_CACHE_MAX:
            cache.clear()  # entries in use are held by their runs' ``keep``
        cache[(_cast("char*", buf), shape, et) if key is None else key] = owner
        return owner

    def feed_value(self, name: str, data: Any, ctx: RunContext) -> Any:
        arg = self.feedable.get(name)
        if arg is None:
            self.unknown_input(name)
            raise AssertionError("unreachable")
        keep = ctx.keep
        if isinstance(data, Value):
            ctx.entries.enter(data)  # a shared use of the value until the run returns
            data._require_value(f"input {name!r} (pass None, or leave an optional input out)")
            return data._ptr
        declared = arg.type  # what an optional input holds when it holds something
        if declared.kind == ValueKind.OPTIONAL and declared.element is not None:
            declared = declared.element
        kind = declared.kind
        if kind == ValueKind.TENSOR:
            if type(data) is not np.ndarray and hasattr(data, "__dlpack__"):
                if is_dlpack_producer(data):  # torch & co: their memory, their dtype, no cast
                    data = dlpack_array(data, f"input {name!r}")
                    keep.append(data)
            if not isinstance(data, (np.ndarray, *PYTHON_DATA)) and is_array_like(data):
                # another array producer (__array_interface__, ...): held to the dtype like numpy's
                data = as_array(data, f"input {name!r}")[0]
                keep.append(data)
            expected = arg.type.element_type
            if isinstance(data, np.ndarray) and expected is not None:
                dt = data.dtype
                try:
                    got = element_type_for(dt)
                except TypeError:
                    got = None
                if got != expected and not (expected == ElementType.STRING
                                            and dt.kind in STRING_KINDS):
                    raise InvalidArgument(
                        f"input {name!r}: expected {arg.type.type_str}, got an array of dtype "
                        f"{dt} ({got.name if got is not None else 'no ORT type'})")
            raw, buf = array_to_ortvalue(self.api, data, f"input {name!r}",
                                         expected if expected is not None and
                                         expected != ElementType.STRING and
                                         not isinstance(data, np.ndarray) else None)
            owner = _gc(raw, self.api.ReleaseValue)
            created = ctx.created
            if created is None:
                created = ctx.created = []
            created.append(owner)
            keep.append(buf)
            return raw
        if kind == ValueKind.SEQUENCE:  # the item type converts Python data (and types [])
            v = Value.from_sequence(data, _tensor_element_type(declared.element))
        elif kind == ValueKind.MAP:
            v = Value.from_map(data, declared.key_type, _tensor_element_type(declared.element))
        elif kind == ValueKind.SPARSETENSOR:
            v = Value.from_sparse(data)
        else:
            raise InvalidArgument(f"input {name!r}: pass a Value for a {arg.type.type_str} input")
        keep.append(v)
        return v._ptr

    # -- outputs -------------------------------------------------------------------------------
    def take_outputs(self, wanted: OutputList, ctx: RunContext, as_values: bool) -> list[Any]:
        """The run's outputs (taken out of ``ctx.outputs``): arrays, lists, dicts or None, or
        Values; an output that is also an input copied (ORT hands back the fed value, whose
        memory may be the caller's)."""
        api = self.api
        outputs = ctx.outputs
        count = wanted.count
        result: list[Any] = [None] * count
        if as_values:
            take = Value._take
            for i in range(count):
                if outputs[i] != _NULL:
                    result[i] = take(api, outputs, i)
            for i in wanted.handed_back:
                result[i] = _copied_value(result[i])
        else:
            tensor = wanted.tensor
            # one set of out-parameters for every output's query (None: the library has no
            # one-call query)
            sc = take_scratch() if api.fast_shape else None
            for i in range(count):
                raw = outputs[i]
                if raw == _NULL:
                    continue
                if tensor[i]:
                    # small: a copy of its own (the value stays in its slot, for close() to
                    # release), cheaper than a view's owner chain
                    et, shape, out = tensor_copy_or_shape(api, raw, COPY_OUT_MAX) \
                        if sc is None else copy_plain_tensor(api, raw, sc, COPY_OUT_MAX, False)
                    if out is None:
                        dtype = PLAIN_DTYPES.get(et)
                        nbytes = math.prod(shape) * dtype.itemsize if dtype is not None else 0
                        if dtype is not None and nbytes:  # from here its owner releases it
                            out = view_output(api, outputs, i, dtype, shape, nbytes)
                        else:  # (strings, sub-byte types: converted)
                            owner = take_output(api, outputs, i)
                            out = tensor_view(api, owner, et, shape, owner, True)
                    result[i] = out
                else:
                    owner = take_output(api, outputs, i)
                    result[i] = ortvalue_to_python(api, owner, owner, True)
            if sc is not None:
                give_scratch(sc)
            for i in wanted.handed_back:
                if type(result[i]) is np.ndarray:
                    result[i] = result[i].copy()
        positions = wanted.positions
        if positions is None:
            return result
        # a name asked for twice: each position its own object, over the same data (as
        # onnxruntime returns it)
        repeated: list[Any] = []
        seen: set[int] = set()
        for p in positions:
            r = result[p]
            if p in seen and type(r) is np.ndarray:
                r = r.view()
            seen.add(p)
            repeated.append(r)
        return repeated

    # -- the entry points' work ------------------------------------------------------------------
    def run(self, sess_ptr: Any, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
            run_options: Any, timeout: Any, as_values: bool) -> list[Any]:
        """Session.run's and run_with_values's work: the straight line."""
        ctx = RunContext(self.api.ReleaseValue, _getframe(),
                         "Session.run_with_values" if as_values else "Session.run")
        try:
            ctx.arm(run_options, timeout)
            wanted = self.lists.get(output_names) if output_names is None else None
            if wanted is None:
                wanted = self.output_list(output_names)
            in_names, values = self.prepare_inputs(feeds, ctx)
            count = ctx.count = wanted.count
            outputs = ctx.outputs = ffi.new(_VALUE_ARRAY, count)
            out_names = wanted.names
            ctx.check(self.api.Run(sess_ptr, ctx.raw_run_options, in_names.ptr, values,
                                   in_names.count, out_names.ptr, count, outputs))
            return self.take_outputs(wanted, ctx, as_values)
        finally:
            ctx.close()

    def run_bound(self, sess_ptr: Any, binding: IoBinding, run_options: Any,
                  timeout: Any) -> None:
        """Session.run_with_binding's work: the caller's bound Values entered for the run (see
        IoBinding._enter_bound), then ORT's RunWithBinding."""
        ctx = RunContext(self.api.ReleaseValue, _getframe(), "Session.run_with_binding")
        try:
            ctx.arm(run_options, timeout)
            echoed = binding._enter_bound(ctx.entries) if binding._values_bound else None
            ctx.check(self.api.RunWithBinding(sess_ptr, ctx.raw_run_options, binding._ptr))
        finally:
            ctx.close()
        if echoed is not None or binding._echoed:
            binding._after_run(echoed or {})

    def start_async(self, session: Any, output_names: Sequence[str] | None,
                    feeds: Mapping[str, Any], run_options: Any, timeout: Any
                    ) -> Future[list[Any]]:
        """Session.run_async's work: start RunAsync, return the Future its completion fills.

        The job's context holds everything the run needs (input Values and options entered as
        the job's, the buffers, the session counted as having a child) until the completion
        has run on ORT's thread. Whether ORT got the job is settled by the job's claim
        (:class:`~ortc._callbacks.AsyncJob`): the hand-over (RunAsync and, if ORT refuses, the
        undoing) runs once, and on the main thread it runs on the starter thread, where no
        signal handler's exception can come between RunAsync's return and its status; a
        failure before the hand-over, or an interrupt while this thread waits for it, undoes
        the job here unless the hand-over already has it."""
        from ._callbacks import AsyncJob, releaser, run_async_callback, starter

        ctx = RunContext(self.api.ReleaseValue, _getframe(), "Session.run_async", job=True)
        #: the job's count on the session (Handle._retain): made in one step, undone by its mark
        retained = object()
        job: AsyncJob | None = None

        def undo() -> None:  # the job never reached ORT: everything goes back
            if job is not None:
                job.abandon()
            ctx.entries.accepted = False
            try:
                ctx.close()
            finally:
                session._unretain(retained)

        try:
            # not on this thread: no Ctrl-C; options of its own for the Future's cancel
            ctx.arm(run_options, timeout, ctrl_c=False, own_options=True)
            if run_options is not None:  # (the run uses a stand-in: ``ctx.source``)
                ctx.entries.enter(run_options)  # the job's until it completes
            wanted = self.output_list(output_names)
            in_names, listed = self.prepare_inputs(feeds, ctx)
            # ORT may read the arrays after RunAsync returned: the job's context keeps them
            values = ffi.new(_VALUE_ARRAY, listed)
            ctx.keep += (values, in_names)
            count = ctx.count = wanted.count
            outputs = ctx.outputs = ffi.new(_VALUE_ARRAY, count)

            def finish(_out_ptr: Any, _n: int, status: Any) -> list[Any]:
                # on an ORT thread, once: the run's holds end and its deadline is settled
                # before the Future completes, so a thread that waited for it finds the Values
                # and options free; their wake-ups (a release a close deferred) go to the
                # releaser thread
                ctx.entries.leave_quietly(releaser.submit)
                try:
                    ctx.check(status)
                    return self.take_outputs(wanted, ctx, False)
                finally:
                    ctx.settle_deadline()

            def done() -> None:  # on the ORT thread, after finish() and the Future
                releaser.submit(ctx.close)
                releaser.submit(lambda: session._unretain(retained))

            session._retain(retained)  # not released while ORT still runs the job
            job = AsyncJob(finish, (ctx,), done)
            if ctx.private is not None:  # the run's own options: cancel stops this run only
                job.future.stop = ctx.stopper()
            ctx.entries.accept()  # from the hand-over on, ORT may own the run (see Entries)
            handle = job.handle

            def hand_over() -> None:  # once, by whoever claims the job (AsyncJob.start)
                try:
                    status = self.api.RunAsync(session._ptr, ctx.raw_run_options, in_names.ptr,
                                               values, in_names.count, wanted.names.ptr, count,
                                               outputs, run_async_callback, handle)
                except BaseException:  # (before the C call: argument conversion)
                    undo()
                    raise
                if status:
                    undo()
                    raise_status(status, "RunAsync")

            start = job.start
            if _get_ident() == _interrupt.MAIN_THREAD:
                starter.submit(lambda: start(hand_over))
                job.started.acquire()  # an interrupt here: the finally below, or the starter, undoes
            else:
                start(hand_over)
            if job.start_error is not None:
                error, job.start_error = job.start_error, None
                try:
                    raise error
                finally:  # (see _status.raise_status)
                    del error
            return job.future
        finally:
            if job is None or job.claim_back():  # nobody handed it over: undone here
                undo()


def _copied_value(value: Value | None) -> Value | None:
    """An output that is also an input, as run_with_values returns it: a tensor copied into a
    Value of its own (ORT hands back the fed value, whose memory may be the caller's array)."""
    if value is None or not value.is_tensor:
        return value
    copy = Value.from_numpy(np.array(value.numpy(), copy=True), value.element_type)
    value.close()
    return copy
