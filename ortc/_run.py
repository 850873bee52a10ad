"""The run engine: everything between a run entry point's arguments and ORT's Run call.

One :class:`RunEngine` per session holds what does not change from run to run (the C arrays of
names, the per-output-list plans, which inputs take an array as it is, which outputs can be
allocated before the run) and does the per-run work: it snapshots the feeds, makes an OrtValue
per input, preallocates the outputs whose shape is known, calls Run, and converts the outputs.
Every entry point ends through :func:`release_run`, the one cleanup path. The thread guard, the
deadline and Ctrl-C live in :mod:`ortc.session`; the staged path for small tensors in
:mod:`ortc._stage`.

Hot-path tuning stays in this file (and _stage.py); docs/PERFORMANCE.md measures it.
"""

from __future__ import annotations

import _thread
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from ._cstr import NameArray
from ._enums import ElementType, ValueKind
from ._ffi import ffi
from ._guard import Lease
from ._handle import Handle
from ._loader import Api
from ._numpy_bridge import (PYTHON_DATA, array_to_ortvalue, as_array, is_array_like,
                            ortvalue_to_python, take_output, tensor_shape_and_type,
                            tensor_to_numpy)
from ._plan import OutputPlan, derive_output_shapes, derived_shape, refused_buffer, this_threads
from ._status import error_from_status, raise_status
from .env import hold_ort_logs, release_ort_logs
from .dtypes import STRING_KINDS, bits_for, element_type_for, feed_dtype
from ._interrupt import watcher
from .errors import ClosedError, InvalidArgument, OrtError, RunTimeout
from .memory import cpu_memory_info
from .run_options import RunOptions, checked_timeout
from .typeinfo import NodeArg, TypeInfo

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ._stage import ShapeStages, Stage
    from .value import Value

__all__ = ["RunEngine", "Stages", "release_run"]

#: OrtValues kept per thread for reuse (see RunEngine.new_cached_value); past this, the cache restarts
_VALUE_CACHE_MAX = 256
_get_ident = _thread.get_ident
_NULL = ffi.NULL
_gc = ffi.gc
ffi_release = ffi.release
_from_buffer = ffi.from_buffer
_cast = ffi.cast


#: ortc.value's Value once a run needed it (_value_type)
_value_class: type[Value] | None = None


def _value_type() -> type[Value]:
    """ortc.value's Value. Imported where a run needs it, not with this module: a first session
    and its first run need none (a feed can be a Value only once the module is loaded). Kept
    in a global: an import statement run per call cost run_with_values 3.8 µs of 15."""
    global _value_class
    if _value_class is None:
        from .value import Value
        _value_class = Value
    return _value_class


def _tensor_element_type(info: TypeInfo | None) -> ElementType | None:
    """The element type of a tensor type (a sequence's item, a map's values), else None."""
    return info.element_type if info is not None and info.kind == ValueKind.TENSOR else None


def release_run(release: Callable[[Any], None], created: list[Any], keep: list[Any],
                outputs: Any = None, count: int = 0, taken: list[Any] | None = None) -> None:
    """The one cleanup of every run entry point, on success and on every error.

    Ends the leases among ``keep`` (Value inputs, shared until Run returned: explicitly, since
    PyPy finalizes a dropped list only at a collection), releases the OrtValues made for the
    run (``created``: owners of inputs and of the values over preallocated arrays), and
    releases the outputs ORT made that nobody took (``outputs[i]`` not NULL and ``taken[i]``
    None; a conversion takes one with :func:`ortc._numpy_bridge.take_output`).

    Every step runs at most once (a lease ends once, an owner is released once, an output
    slot is cleared before its release), so when a KeyboardInterrupt from a signal handler
    stops the cleanup, it is run again, as often as it takes, to the end before the (first)
    interrupt goes on. An interrupt can also come at this function's very start (CPython runs
    signal handlers at every function's first instruction), before any step: so the run entry
    points call it once more when it raises one. (Under a SIGALRM every 50 µs that raised
    KeyboardInterrupt, both left an input Value's shared entry behind: the leases were then
    left to ``Lease.__del__``, which the next interrupt stops at its own start.) The owners in
    ``created`` release their values in any case when the run's frame drops them, through
    ORT's C function.
    """
    interrupted: BaseException | None = None
    while True:  # each attempt resumes where the last stopped: interrupts cannot outlast it
        try:
            _release_steps(release, created, keep, outputs, count, taken)
            break
        except KeyboardInterrupt as exc:  # a storm of them (a short interval timer) may
            interrupted = interrupted or exc  # stop several attempts in a row: the first goes on
    if interrupted is not None:
        raise interrupted


def _release_steps(release: Callable[[Any], None], created: list[Any], keep: list[Any],
                   outputs: Any, count: int, taken: list[Any] | None) -> None:
    for held in keep:
        if type(held) is Lease:
            held.release()
    for owner in created:
        ffi_release(owner)  # idempotent: a cffi owner runs its destructor once
    if outputs is not None:
        for i in range(count):
            raw = outputs[i]
            if raw != _NULL and (taken is None or taken[i] is None):
                outputs[i] = _NULL  # cleared first: a retry never releases it again
                release(raw)


def handed_back(result: Any) -> Any:
    """An output that is also an input, as the run returns it: an array copied (ORT hands back
    the fed value, whose memory may be the caller's array), anything else as it is."""
    return result.copy() if type(result) is np.ndarray else result


def handed_back_value(value: Value | None) -> Value | None:
    """An output that is also an input, as run_with_values returns it: a tensor copied into a
    Value of its own. ORT hands back the fed value, whose memory may be the caller's array
    (or a copy the run made of it, freed when the run ends): a Value over it read freed
    memory once the caller dropped the array, and changed when the caller wrote to it."""
    if value is None or not value.is_tensor:
        return value
    copy = _value_type().from_numpy(np.array(value.numpy(), copy=True), value.element_type)
    value.close()
    return copy


class Stages:
    """A session's stages: thread id -> output-list key -> what serves its runs (a Stage, Lane,
    ShapeStages or OpenLane of :mod:`ortc._stage`; False: given up, the general path). That
    module is imported by the first offer: a first session and its first run make no stage."""

    def __init__(self, engine: RunEngine) -> None:
        self.engine = engine
        self.by_thread: dict[int, dict[Any, Any]] = {}
        #: False turns staging off for the session (tests compare both paths)
        self.active = True

    def offer(self, key: Any, plan: OutputPlan, names: tuple[str, ...], data: tuple[Any, ...],
              arrays: list[Any]) -> None:
        """After a run whose outputs were all preallocated: serve the next runs with the same
        input shapes on this thread by a stage when every tensor is small, else by a lane."""
        stages = this_threads(self.by_thread)
        old = stages.get(key)
        if old is False or (old is not None and (old.busy or old.open)):
            return  # given up, in use (a nested run), or an open lane: it stays
        kind = self._kind(names, data, arrays)
        if kind is None:
            return  # a feed that is not a plain array (a list, a Value...): nothing to learn
        # here, not at the top: a first run makes no stage; few runs reach this line, and most
        # that do make a stage (tens of µs)
        from ._stage import ShapeStages, Stage
        if type(old) is ShapeStages:
            shapes = tuple(a.shape for a in data)
            there = old.by_shape.get(shapes)
            if kind is Stage and (there is None or not there.busy):
                old.add(Stage(self.engine, plan, names, data, arrays), shapes)
            return
        stage = kind(self.engine, plan, names, data, arrays)
        if old is not None:
            stage.misses = old.misses
        stages[key] = stage

    def _kind(self, names: tuple[str, ...], data: tuple[Any, ...],
              arrays: list[Any]) -> type[Stage] | None:
        """What may serve runs with these feeds and outputs: a Stage when every tensor is
        small, a Lane when some are larger and every feed is C-contiguous (a lane passes the
        feed's own memory), None when a feed is not a plain array of its input's dtype."""
        fast = self.engine.fast_inputs
        largest = 0
        contiguous = True
        for name, array in zip(names, data):
            spec = fast.get(name)
            if spec is None or type(array) is not np.ndarray or array.dtype != spec[0]:
                return None
            largest = max(largest, array.nbytes)
            contiguous = contiguous and array.flags.c_contiguous
        from ._stage import STAGE_MAX_BYTES, Lane, Stage  # (feeds no stage takes returned above)
        if largest <= STAGE_MAX_BYTES and all(a.nbytes <= STAGE_MAX_BYTES for a in arrays):
            return Stage
        return Lane if contiguous else None

    def after_misses(self, missed: Stage | ShapeStages) -> Stage | ShapeStages | bool:
        """What serves an output list after its stage or lane missed more than it served: a
        stage per shape after a stage (small tensors, shapes among a few), then an open lane
        when every output's shape follows from the input shapes, else False (the general
        path)."""
        from ._stage import OpenLane, ShapeStages, Stage
        if type(missed) is Stage:
            return ShapeStages(missed)
        plan = missed.plan
        if missed.open or len(plan.preallocate) != plan.count or plan.one_element \
                or not self.engine.preallocate \
                or any(n not in self.engine.fast_inputs for n in missed.input_names):
            return False
        return OpenLane(self.engine, plan, missed.input_names)

    def clear(self) -> None:
        self.by_thread = {}  # their OrtValues are over numpy buffers: freed with them


class RunEngine:
    """The run machinery of one session, built from its inputs and outputs."""

    def __init__(self, api: Api, inputs: list[NodeArg], outputs: list[NodeArg],
                 initializers: list[NodeArg]) -> None:
        self.api = api
        self.inputs = inputs
        self.feedable = {a.name: a for a in (*inputs, *initializers)}
        self.output_index = {a.name: a for a in outputs}
        self.all_outputs = tuple(a.name for a in outputs)
        self.optional_inputs = frozenset(a.name for a in inputs if a.kind == ValueKind.OPTIONAL)
        overridable = {a.name for a in initializers}
        self.required = tuple(a.name for a in inputs
                              if a.kind != ValueKind.OPTIONAL and a.name not in overridable)
        self.names: dict[tuple[str, ...], NameArray] = {}
        self.plans: dict[Any, OutputPlan] = {}
        #: False once ORT refused a preallocated buffer (a model's declared shape was wrong)
        self.preallocate = True
        self.cpu_info = cpu_memory_info()
        self.cpu_info_ptr = self.cpu_info._ptr
        # inputs that take a numpy array of one exact dtype directly: name -> (dtype, type);
        # the dtype is the one numpy gives callers' arrays (np.int64, not the equal C long
        # long outputs come out as), so that the identity check below holds for them
        self.fast_inputs: dict[str, tuple[np.dtype[Any], int]] = {}
        for a in self.feedable.values():
            dt = a.dtype
            if a.kind == ValueKind.TENSOR and dt is not None and dt.kind not in STRING_KINDS \
                    and not bits_for(a.element_type or 0):
                self.fast_inputs[a.name] = (feed_dtype(dt),
                                            int(a.element_type))  # type: ignore[arg-type]
        self.output_alloc, self.output_open = derive_output_shapes(inputs, outputs, initializers)
        #: the outputs that are also inputs or overridable initializers (ORT hands back the
        #: fed value for them: see derive_output_shapes)
        self.echoes = frozenset(n for n in self.output_index if n in self.feedable)
        self.stages = Stages(self)
        #: whether a tensor's rank may follow input values, or how to find out (ranks_follow_values)
        self.model_ranks: bool | Callable[[], bool] = True
        #: thread id -> (address, shape, element type) -> the owner of an OrtValue over it
        self.value_cache: dict[int, dict[Any, Any]] = {}

    # -- names and plans -----------------------------------------------------------------------
    def name_array(self, names: tuple[str, ...]) -> NameArray:
        arr = self.names.get(names)
        if arr is None:
            for n in names:
                if not isinstance(n, str):
                    raise InvalidArgument(f"names must be str, got {type(n).__name__} {n!r}")
            if len(self.names) > 256:  # bound the cache for callers with ever-new name sets
                self.names.clear()
            arr = self.names[names] = NameArray(names)
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

    def plan(self, output_names: Sequence[str] | None) -> tuple[Any, OutputPlan]:
        """(cache key, plan) for a requested output list."""
        key = output_names if output_names is None or type(output_names) is tuple \
            else self.output_names(output_names)
        try:
            plan = self.plans.get(key)
        except TypeError:  # a tuple holding a name that is not hashable (so not a str)
            self.output_names(key)
            raise
        if plan is None:
            names = self.output_names(key)
            plan = OutputPlan(self.name_array(names),
                              [self.output_index[n].kind == ValueKind.TENSOR for n in names],
                              [(i, *self.output_alloc[n]) for i, n in enumerate(names)
                               if n in self.output_alloc],
                              [(i, *self.output_open[n]) for i, n in enumerate(names)
                               if n in self.output_open],
                              tuple(i for i, n in enumerate(names) if n in self.feedable))
            if len(set(names)) < len(names):
                plan.unique = unique = tuple(dict.fromkeys(names))
                plan.positions = tuple(unique.index(n) for n in names)
            if len(self.plans) > 256:  # bound the cache for callers with ever-new name lists
                self.plans.clear()
            self.plans[key] = plan
        return key, plan

    # -- inputs --------------------------------------------------------------------------------
    def snapshot(self, feeds: Mapping[str, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The feeds as (names, data), read once: whatever the mapping does later (another
        thread editing it, a __getitem__ that builds arrays), the run uses these objects, and
        the caller holds them, so every buffer stays alive until Run returns."""
        if type(feeds) is dict or isinstance(feeds, Mapping):
            items = list(feeds.items())  # one call: a dict is copied atomically
        else:
            raise InvalidArgument(f"feeds must be a dict of input name -> array, "
                                  f"not {type(feeds).__name__}")
        optional = self.optional_inputs
        if optional and any(v is None and k in optional for k, v in items):
            # an empty optional input is passed by leaving it out
            items = [(k, v) for k, v in items if not (v is None and k in optional)]
        if not items:
            names: tuple[Any, ...] = ()
            data: tuple[Any, ...] = ()
        else:
            names, data = zip(*items)
        for name in self.required:
            if name not in names:
                for given in names:  # a misspelt name explains a missing one best
                    self.unknown_input(given)
                missing = [n for n in self.required if n not in names]
                raise InvalidArgument(f"missing input(s) {missing}: the model requires "
                                      f"{list(self.required)}, the feeds have {list(names)}")
        return names, data

    def unknown_input(self, name: Any) -> None:
        if name not in self.feedable:
            if not isinstance(name, str):
                raise InvalidArgument(f"input names must be str, got {type(name).__name__}")
            raise InvalidArgument(f"unknown input name {name!r}; the model's inputs are "
                                  f"{[a.name for a in self.inputs]}")

    def drop_caches(self) -> None:
        """Release the OrtValues kept for later runs (stages, the value cache): on close."""
        self.stages.clear()
        self.value_cache = {}  # non-owning values over caller memory: released with the dict

    def value_over(self, array: np.ndarray[Any, Any], et: int, context: str | None = None,
                   buf: Any = None) -> Any:
        """A new OrtValue over ``array``'s memory (a C-contiguous numpy array of ORT type
        ``et``; ``buf``: its ``ffi.from_buffer`` when the caller has it), as an owner that
        releases it (the stages' values, the value cache's)."""
        out = ffi.new("OrtValue**")
        shape = array.shape
        status = self.api.CreateTensorWithDataAsOrtValue(
            self.cpu_info_ptr, _from_buffer(array) if buf is None else buf, array.nbytes, shape,
            len(shape), et, out)
        if status:
            raise_status(status, context)
        return _gc(out[0], self.api.ReleaseValue)

    def new_cached_value(self, array: np.ndarray[Any, Any], buf: Any, et: int,
                         name: str | None, keep: list[Any], cache: dict[Any, Any]) -> Any:
        """A new OrtValue over ``array``'s memory (a C-contiguous numpy array of ORT type
        ``et``; ``buf`` its ``ffi.from_buffer``), kept in this thread's value cache (``cache``,
        :func:`~ortc._plan.this_threads` of ``value_cache``) for later runs: what a run path
        calls when its lookup of ``(buf, shape, et)`` there missed.

        ORT's value over caller memory holds only the address, the shape and the type, so one
        made for an earlier run serves any later array at the same address with the same shape
        and type (numpy hands freed blocks out again: a stream of fresh arrays of one shape
        comes back to a few addresses). Reusing it saves a create and a release, two C calls
        and two GIL hand-offs each (bench: ~1 µs an input on the MatMul). The cache is per
        thread, so no two threads share an entry; ``keep`` holds the owner until the run
        returns, so a cache restart (or a nested run from a signal handler restarting it)
        never releases a value a run is using.

        A key is (address, shape, element type). Looked up with the buffer itself: cffi
        compares and hashes a pointer or buffer cdata by its address (tests/test_staging.py
        holds cffi to that), which spares a cast per tensor (0.1 µs); stored with a plain
        pointer, which does not keep the array alive as the buffer would. The run paths look
        a hit up themselves (a frame less per tensor). ``name``: the input's, or None for an
        output (for the error message).
        """
        owner = self.value_over(array, et, "preallocating an output" if name is None
                                else f"input {name!r}", buf)
        if len(cache) >= _VALUE_CACHE_MAX:
            cache.clear()  # entries in use are held by their runs' ``keep``
        cache[(_cast("char*", buf), array.shape, et)] = owner
        keep.append(owner)
        return owner

    def prepare_inputs(self, names: tuple[Any, ...], data: tuple[Any, ...], created: list[Any],
                       keep: list[Any]) -> tuple[NameArray, Any, dict[str, tuple[int, ...]]]:
        """OrtValues for a :meth:`snapshot`. Returns (names, values array, input shapes); every
        OrtValue made here for this run only goes to ``created``, and what must stay alive (or
        leased) until Run returns to ``keep``: the caller passes both to :func:`release_run`."""
        in_names = self.name_array(names)
        count = in_names.count
        values = ffi.new("OrtValue*[]", count)
        shapes: dict[str, tuple[int, ...]] = {}
        fast = self.fast_inputs
        cache: dict[Any, Any] | None = None  # this thread's value cache, looked up once
        for i in range(count):
            name = names[i]
            array = data[i]
            spec = fast.get(name)
            # fast path: an exact-dtype, C-contiguous array over its own memory, no checks left
            # (an equal dtype that is another object: an int64 output fed back, C long long)
            if spec is not None and type(array) is np.ndarray \
                    and (array.dtype is spec[0] or array.dtype == spec[0]) \
                    and array.flags.c_contiguous:
                if cache is None:
                    cache = this_threads(self.value_cache)
                shape = array.shape
                buf = _from_buffer(array)
                owner = cache.get((buf, shape, spec[1]))
                if owner is None:
                    owner = self.new_cached_value(array, buf, spec[1], name, keep, cache)
                else:
                    keep.append(owner)
                values[i] = owner
                shapes[name] = shape
            else:
                values[i] = self.feed_value(name, array, keep, created)
                if isinstance(array, np.ndarray):
                    shapes[name] = array.shape
        return in_names, values, shapes

    def feed_value(self, name: str, data: Any, keep: list[Any], created: list[Any]) -> Any:
        arg = self.feedable.get(name)
        if arg is None:
            self.unknown_input(name)
            raise AssertionError("unreachable")
        if isinstance(data, Handle) and isinstance(data, _value_type()):  # (no call for arrays)
            Lease(data, False, keep)  # a shared use of the value until the run returns
            data._require_value(f"input {name!r} (pass None, or leave an optional input out)")
            return data._ptr
        declared = arg.type  # what an optional input holds when it holds something
        if declared.kind == ValueKind.OPTIONAL and declared.element is not None:
            declared = declared.element
        kind = declared.kind
        if kind == ValueKind.TENSOR:
            if type(data) is not np.ndarray and hasattr(data, "__dlpack__"):
                # ortc.dlpack loads with the first such feed: a first session has no use for it
                from .dlpack import dlpack_array, is_dlpack_producer

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
            created.append(_gc(raw, self.api.ReleaseValue))
            keep.append(buf)
            return raw
        value_type = _value_type()
        if kind == ValueKind.SEQUENCE:  # the item type converts Python data (and types [])
            v = value_type.from_sequence(data, _tensor_element_type(declared.element))
        elif kind == ValueKind.MAP:
            v = value_type.from_map(data, declared.key_type, _tensor_element_type(declared.element))
        elif kind == ValueKind.SPARSETENSOR:
            v = value_type.from_sparse(data)
        else:
            raise InvalidArgument(f"input {name!r}: pass a Value for a {arg.type.type_str} input")
        keep.append(v)
        return v._ptr

    # -- outputs -------------------------------------------------------------------------------
    def preallocate_outputs(self, specs: list[tuple[Any, ...]],
                            shapes: dict[str, tuple[int, ...]], outputs: Any, arrays: list[Any],
                            keep: list[Any], single: list[int]) -> int:
        """Give ORT new numpy arrays for the outputs whose shape is known (``specs``: a plan's
        ``preallocate`` or learned shapes); returns how many. Their values' owners go to
        ``keep`` (they may live on in the value cache: never released by the run); the
        indices of the arrays of one element to ``single`` (see :meth:`as_ort_made`)."""
        made = 0
        cache: dict[Any, Any] | None = None  # this thread's value cache, looked up once
        for index, dtype, et, dims in specs:
            shape = derived_shape(dims, shapes, dtype)
            if shape is not None:  # else ORT allocates this output
                arr = np.empty(shape, dtype)
                if cache is None:
                    cache = this_threads(self.value_cache)
                buf = _from_buffer(arr)
                owner = cache.get((buf, arr.shape, et))
                if owner is None:
                    owner = self.new_cached_value(arr, buf, et, None, keep, cache)
                else:
                    keep.append(owner)
                # The slot is filled only now, with its array, both with no point between them
                # where an interrupt could surface: release_run releases a slot whose array is
                # unset, and the owner (held by ``keep`` and the cache) releases this value,
                # so filling the slot first (and being interrupted before the array was set)
                # released it twice, and now would release a value the cache still holds.
                outputs[index] = owner
                arrays[index] = arr
                made += 1
                if arr.size == 1:
                    single.append(index)
        return made

    def as_ort_made(self, plan: OutputPlan, outputs: Any, arrays: list[Any],
                    single: list[int]) -> bool:
        """Give the preallocated outputs of one element (``single``) the shape ORT made; True
        when one differed, which the plan then no longer preallocates with that shape.

        ORT refuses a buffer of another shape than the result's, except where both hold one
        element and either is a scalar: it writes the result and gives the value the result's
        shape in place. So a scalar declared and a [1] made (or the other way round), a
        declaration of [n] that is a scalar when n is 1 (a Squeeze), a learned shape that
        another branch of an If makes: each came back with the buffer's shape. The value is
        also dropped from the value cache: its key (the buffer's address and shape) no longer
        says its shape, and a later feed at that address and of that shape was read with
        ORT's."""
        changed = False
        for i in single:
            arr = arrays[i]
            shape = tensor_shape_and_type(self.api, outputs[i])[1]
            if shape != arr.shape:
                arrays[i] = arr.reshape(shape)
                self.forget_value(arr, plan.etypes[i])
                plan.reshaped_by_ort(i)
                changed = True
        return changed

    def forget_value(self, array: np.ndarray[Any, Any], et: int) -> None:
        """Drop this thread's cached value over ``array`` (made for its shape: ORT has given it
        another, see :meth:`as_ort_made`)."""
        this_threads(self.value_cache).pop((_from_buffer(array), array.shape, et), None)

    def ranks_follow_values(self) -> bool:
        """Whether a tensor's rank in the model may follow input values (read from the model
        when first asked: :func:`ortc._model_proto.rank_may_follow_values`); True when the
        session gave no way to read it. A stage or lane then reads back the shape ORT gave
        each output of one element after every run."""
        known = self.model_ranks
        if not isinstance(known, bool):
            known = self.model_ranks = bool(known())
        return known

    # -- the C call ----------------------------------------------------------------------------
    def call(self, sess_ptr: Any, in_names: NameArray, values: Any, out_names: NameArray,
             outputs: Any, run_options: Any, raw_run_options: Any = _NULL) -> Any:
        """ORT's Run; a RunOptions is in (shared) use for the call's duration."""
        if run_options is None:
            return self.api.Run(sess_ptr, raw_run_options, in_names.ptr, values,
                                in_names.count, out_names.ptr, out_names.count, outputs)
        ro_guard = run_options._guard
        if ro_guard is None:
            raise ClosedError("RunOptions is closed")
        token = ro_guard.enter_shared(run_options)
        try:
            return self.api.Run(sess_ptr, run_options._ptr, in_names.ptr, values,
                                in_names.count, out_names.ptr, out_names.count, outputs)
        finally:
            try:  # inline, one C call: see Guard.leave
                ro_guard.users.remove(token)
            finally:
                if ro_guard.watch:
                    ro_guard._wake()

    # -- the run entry points' bodies ----------------------------------------------------------
    def run(self, sess_ptr: Any, output_names: Sequence[str] | None, feeds: Mapping[str, Any],
            run_options: Any, raw_run_options: Any) -> list[Any]:
        """Session.run's work: outputs as arrays, lists, dicts or None."""
        # The plan and the stage are looked up here, not through plan() and Stages.run: on a
        # small model two frames fewer are 0.1-0.2 µs of a ~3 µs run (bench: tiny run()).
        key = output_names
        if key is not None and type(key) is not tuple:
            key = self.output_names(key)  # any iterable, read once
        stages = self.stages.by_thread.get(_get_ident())
        if stages is not None:  # (a stage exists only for a key that has a plan)
            try:
                stage = stages.get(key)
            except TypeError:  # an unhashable name: plan() below says what is wrong
                stage = None
            if stage and not stage.busy:
                result: list[Any] | None = stage.run(sess_ptr, feeds, run_options,
                                                     raw_run_options)
                if result is not None:
                    return result
                if stage.misses > stage.max_misses:  # shapes keep changing: stop staging
                    stages[key] = self.stages.after_misses(stage)  # an open lane, or False
        try:
            plan = self.plans.get(key)
        except TypeError:
            plan = None
        if plan is None:
            key, plan = self.plan(key)
        if plan.unique is not None:  # an output named twice
            return plan.repeat(self.run(sess_ptr, plan.unique, feeds, run_options,
                                        raw_run_options))
        api = self.api
        release = api.ReleaseValue
        created: list[Any] = []
        keep: list[Any] = []
        count = plan.count
        outputs = ffi.new("OrtValue*[]", count)
        arrays: list[Any] = [None] * count
        # Every release sits in release_run, called from the finally: KeyboardInterrupt may
        # surface at any point after Run returns (Python runs its SIGINT handler at the next
        # bytecode check).
        try:
            names, data = self.snapshot(feeds)  # held until the end: data's buffers live on
            in_names, values, shapes = self.prepare_inputs(names, data, created, keep)
            made = 0
            guessed = False
            single: list[int] = []  # the preallocated outputs of one element (as_ort_made)
            if self.preallocate:
                if plan.preallocate:
                    made = self.preallocate_outputs(plan.preallocate, shapes, outputs, arrays,
                                                    keep, single)
                learned = plan.learned
                if learned is not None and learned[0] == shapes:
                    made += self.preallocate_outputs(learned[1], shapes, outputs, arrays,
                                                     keep, single)
                    guessed = True
            # A run on buffers ortc guessed may be refused and made again: ORT's messages from
            # it are held until that is known (ortc.env.hold_ort_logs). Declared shapes count
            # as guessed until a run has confirmed them.
            held = hold_ort_logs() if guessed or (made and not plan.confirmed) else None
            err = None
            guess_refused = buffer_refused = False  # what the retries below answer
            try:
                status = self.call(sess_ptr, in_names, values, plan.names, outputs, run_options,
                                   raw_run_options)
                if status:
                    err = error_from_status(status)  # releases the status
                    buffer_refused = bool((made or guessed) and refused_buffer(err.message))
                    guess_refused = guessed and (buffer_refused
                                                 or isinstance(err, InvalidArgument))
            finally:
                if held is not None:
                    release_ort_logs(held, guess_refused or buffer_refused)
            changed = first_confirmed = False
            if err is None:
                if made:
                    first_confirmed = not plan.confirmed
                    plan.confirmed = True
                    if single:
                        changed = self.as_ort_made(plan, outputs, arrays, single)
            else:
                for i in single:  # ORT may have given one another shape before it failed
                    self.forget_value(arrays[i], plan.etypes[i])  # (see as_ort_made)
                if guess_refused:
                    # A learned shape may be what ORT refused, whatever its wording (a shape
                    # that depends on the input values, a declaration ORT checks buffers
                    # against): run again without guessing. Guessing stops for good when that
                    # run works; when it fails too, the guess was not the cause.
                    before = plan.learned, plan.seen
                    plan.unlearn()
                    try:
                        return self.run(sess_ptr, key, feeds, run_options, raw_run_options)
                    except OrtError:
                        plan.learned, plan.seen = before
                        raise
                if buffer_refused and made:
                    # a model whose declared output shape is wrong makes ORT refuse our
                    # preallocated buffer: stop preallocating for this session, run again
                    self.preallocate = False
                    return self.run(sess_ptr, key, feeds, run_options, raw_run_options)
                raise err
            tensor = plan.tensor
            for i in range(count):
                if arrays[i] is not None or outputs[i] == _NULL:
                    continue
                owner = take_output(api, outputs, i)  # from here the owner releases it
                if tensor[i]:  # declared a tensor: skip the kind queries
                    arrays[i] = tensor_to_numpy(api, owner, owner, True)
                else:
                    arrays[i] = ortvalue_to_python(api, owner, owner, True)
            for i in plan.handed_back:
                arrays[i] = handed_back(arrays[i])
            if made < count:
                if plan.seen is not False and len(shapes) == len(names) and self.preallocate:
                    plan.learn(shapes, arrays)  # every input's shape is in ``shapes``
            elif plan.stageable and self.stages.active and not changed and not first_confirmed:
                # every output was preallocated, and not for the first time: a stage may serve
                # the next runs. Not after the first such run: a session run once (a command
                # line tool, the cold start) would pay for a stage nothing uses (0.5-1 ms of
                # the tiny model's first run: its OrtValues, the model read for value-dependent
                # ranks; bench/bench_startup.py)
                self.stages.offer(key, plan, names, data, arrays)
            return arrays
        finally:
            try:
                release_run(release, created, keep, outputs, count, arrays)
            except KeyboardInterrupt:  # possibly at its entry, before any step: see release_run
                release_run(release, created, keep, outputs, count, arrays)
                raise

    def run_values(self, sess_ptr: Any, output_names: Sequence[str] | None,
                   feeds: Mapping[str, Any], run_options: Any, raw_run_options: Any
                   ) -> list[Value | None]:
        """Session.run_with_values's work: outputs as Values, no conversion."""
        _key, plan = self.plan(output_names)  # the names read once, as run() reads them
        out_names = plan.names
        api = self.api
        created: list[Any] = []
        keep: list[Any] = []
        count = out_names.count
        outputs = ffi.new("OrtValue*[]", count)
        result: list[Any] = [None] * count
        take = _value_type()._take
        try:
            names, data = self.snapshot(feeds)
            in_names, values, _shapes = self.prepare_inputs(names, data, created, keep)
            status = self.call(sess_ptr, in_names, values, out_names, outputs, run_options,
                               raw_run_options)
            if status:
                raise_status(status)
            for i in range(count):
                if outputs[i] != _NULL:
                    result[i] = take(api, outputs, i)
            for i in plan.handed_back:
                result[i] = handed_back_value(result[i])
            return result
        finally:
            try:
                release_run(api.ReleaseValue, created, keep, outputs, count, result)
            except KeyboardInterrupt:  # possibly at its entry, before any step: see release_run
                release_run(api.ReleaseValue, created, keep, outputs, count, result)
                raise


    def call_bound(self, run_c: Any, sess_ptr: Any, binding_ptr: Any, run_options: Any,
                   raw_run_options: Any) -> None:
        """ORT's RunWithBinding (``run_c``), raising on failure; a RunOptions is in shared
        use meanwhile."""
        if run_options is None:
            status = run_c(sess_ptr, raw_run_options, binding_ptr)
        else:
            ro_guard = run_options._guard
            if ro_guard is None:
                raise ClosedError("RunOptions is closed")
            token = ro_guard.enter_shared(run_options)
            try:
                status = run_c(sess_ptr, run_options._ptr, binding_ptr)
            finally:
                try:  # inline, one C call: see Guard.leave
                    ro_guard.users.remove(token)
                finally:
                    if ro_guard.watch:
                        ro_guard._wake()
        if status:
            raise_status(status)

    def start_async(self, session: Any, output_names: Sequence[str] | None,
                    feeds: Mapping[str, Any], run_options: Any, timeout: float | None
                    ) -> Future[list[Any]]:
        """Session.run_async's work: start RunAsync, return the Future its completion fills.

        Everything the run needs (the input values and buffers, the options, the session,
        counted as having a child meanwhile) is held by the job until the completion has run
        on ORT's thread; the completion releases through :func:`release_run` like every run.
        """
        _key, plan = self.plan(output_names)  # the names read once, as run() reads them
        out_names, tensor = plan.names, plan.tensor
        count = out_names.count
        timeout = checked_timeout(timeout)
        # here, not at the top: it imports concurrent.futures, which `import ortc` avoids
        from ._callbacks import AsyncJob, releaser, run_async_callback

        if run_options is not None and run_options.closed:  # before any value is made
            raise ClosedError("RunOptions is closed")
        api = self.api
        release = api.ReleaseValue
        created: list[Any] = []
        keep: list[Any] = []
        try:
            names, data = self.snapshot(feeds)
            keep.append(data)
            in_names, values, _shapes = self.prepare_inputs(names, data, created, keep)
        except BaseException:
            try:
                release_run(release, created, keep)
            except KeyboardInterrupt:  # possibly at its entry, before any step: see release_run
                release_run(release, created, keep)
            raise
        private = run_options is None and timeout is not None
        ro = RunOptions() if private else run_options
        ro_guard = ro._guard if ro is not None else None
        outputs = ffi.new("OrtValue*[]", count)
        result: list[Any] = [None] * count
        deadline = [-1]
        ro_hold: list[int | None] = [None]  # the job's entry in the options' guard, until ended

        def finish(_out_ptr: Any, _n: int, status: Any) -> list[Any]:
            # runs on an ORT thread, once; releases everything the run needed
            try:
                if status:
                    err = error_from_status(status)
                    if deadline[0] >= 0 and watcher.finish_deadline(deadline[0]):
                        deadline[0] = -2  # fired
                        if not private:  # re-armed before the Future wakes its waiter
                            ro._unset_now()
                        raise RunTimeout(f"the run did not finish within {timeout:g} s and "
                                         f"was terminated") from err
                    raise err
                for i in range(count):
                    if outputs[i] != _NULL:
                        owner = take_output(api, outputs, i)
                        result[i] = (tensor_to_numpy if tensor[i] else ortvalue_to_python)(
                            api, owner, owner, True)
                for i in plan.handed_back:
                    result[i] = handed_back(result[i])
                return result
            finally:
                # The run holds nothing once it is done: its holds end before the Future
                # completes, so a thread that waited for it finds the Values and options free
                # (they ended on the releaser, after the result: a fill() right after result()
                # was refused). Their wake-ups may release what a close deferred: not here.
                for held in keep:
                    if type(held) is Lease:
                        held.end_quietly(releaser.submit)
                ro_token, ro_hold[0] = ro_hold[0], None
                if ro_token is not None:
                    ro_guard.leave_quietly(ro_token, releaser.submit)  # type: ignore[union-attr]
                release_run(release, created, [], outputs, count, result)

        def done() -> None:  # on the ORT thread, after finish()
            fired = False
            if deadline[0] >= 0:  # the run ended (well or not) before finish saw the deadline
                fired = watcher.finish_deadline(deadline[0])
            # ending a lease may run a deferred release, and releasing the session's last
            # child may release the session: neither on ORT's own thread
            releaser.submit(lambda: release_run(release, [], keep))
            if private:
                releaser.submit(ro.close)
            elif fired:
                ro._unset_now()
            releaser.submit(session._child_released)

        # The run goes on without this thread: its holds on the options and the input Values
        # become the job's, so this thread's own fill() or close() of them meanwhile conflicts
        # as another thread's would (as this thread's entries they passed as re-entry)
        if ro_guard is not None:
            ro_hold[0] = ro_guard.hand_off(ro_guard.enter_shared(ro))
        for held in keep:
            if type(held) is Lease:
                held.hand_off()
        session._retain()  # the session is not released while ORT still runs the job
        job = AsyncJob(finish, (in_names, values, keep, outputs, ro, session), done)
        if timeout is not None:
            deadline[0] = watcher.add_deadline(time.monotonic() + timeout, ro)
        status = api.RunAsync(session._ptr, ro._ptr if ro is not None else _NULL, in_names.ptr,
                              values, in_names.count, out_names.ptr, count, outputs,
                              run_async_callback, job.handle)
        if status:
            job.abandon()
            if deadline[0] >= 0:
                watcher.finish_deadline(deadline[0])
            release_run(release, created, keep)
            ro_token, ro_hold[0] = ro_hold[0], None
            if ro_token is not None:
                ro_guard.leave(ro_token)  # type: ignore[union-attr]
            if private:
                ro.close()
            session._child_released()
            raise_status(status, "RunAsync")
        return job.future
