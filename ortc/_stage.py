"""The paths for repeated runs: one C call a run, per thread and requested output list.

Creating and releasing an OrtValue per input and output costs more than the run itself on a
small model (bench: ~1.7 µs a pair through cffi), and the general path's Python around Run is
several µs. After a run whose outputs were all preallocated (the second such run of an output
list: a session run once pays for none), :meth:`ortc._run.Stages.offer` sets one of these up
for the next runs on the same thread (this module is imported then: a first session and its
first run need none of it):

* :class:`Stage`: every tensor small. OrtValues made once over numpy buffers it owns; each run
  copies the feeds in, makes the one Run call and returns copies of the outputs. It serves only
  feeds with the exact names, dtypes and shapes it was built for.
* :class:`Lane`: the same feeds, some tensors larger. The feeds' own memory and new output
  arrays, OrtValues from the engine's value cache.

When a stage or lane misses more runs than it serves (shapes that change from call to call),
:meth:`ortc._run.Stages.after_misses` replaces it: a stage by :class:`ShapeStages` (a stage per
tuple of feed shapes), that or a lane by an :class:`OpenLane` (any shapes, outputs derived per
run) when every output's shape follows from the inputs', else the general path for good.

An output of one element is the one a buffer of another shape can hold: ORT writes such a
result into such a buffer when either is a scalar, and gives the value the result's shape in
place. The run that sets a stage up read its shape back; while the feed shapes stay, only a
model whose ranks may follow the input values can change it (an If, a SequenceAt: see
:mod:`ortc._model_proto`), and for such a model alone every served run reads its outputs of
one element back (``Stage.single``); an open lane reads back any output that has one element.

All of them reach the session only through the :class:`~ortc._run.RunEngine` (names, memory
info, which inputs are plain arrays, the value cache, the Run call) and the session pointer
each run passes in; a run on this thread that starts while one is busy (a signal handler's)
takes the general path.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ._ffi import ffi
from ._status import error_from_status
from .env import hold_ort_logs, release_ort_logs
from ._plan import derived_shape, refused_buffer, this_threads
from .errors import InvalidArgument, OrtError

if TYPE_CHECKING:
    from ._plan import OutputPlan
    from ._run import RunEngine

__all__ = ["Lane", "OpenLane", "ShapeStages", "Stage", "STAGE_MAX_BYTES", "STAGE_MAX_MISSES"]

#: tensors up to this size may be staged (copying them costs less than a value per call)
STAGE_MAX_BYTES = 1 << 14
#: a stage that misses this many more runs than it serves (shapes keep changing) is given up,
#: for an open lane or the general path. A hit pays one miss back rather than all of them: two
#: shapes in turn, or a few at random, would otherwise make a new stage (its OrtValues made
#: anew) nearly every run and never give up
STAGE_MAX_MISSES = 8
#: stages kept per output list for shapes that change (ShapeStages); past this, it restarts
SHAPE_STAGES_MAX = 64
_ndarray = np.ndarray
_empty = np.empty
_shape_of = operator.attrgetter("shape")
_from_buffer = ffi.from_buffer


class Stage:
    """Buffers and OrtValues for one thread, session and output list."""

    #: whether it serves feeds of any shape (an :class:`OpenLane`)
    open = False
    #: misses beyond hits after which it is given up
    max_misses = STAGE_MAX_MISSES
    #: the outputs of one element whose shape ORT gave is read back after each run (see
    #: :meth:`_singles`)
    single: tuple[int, ...] = ()

    def __init__(self, engine: RunEngine, plan: OutputPlan, names: tuple[str, ...],
                 data: tuple[Any, ...], arrays: list[Any]) -> None:
        self._serve(engine, plan, names)
        #: input name -> (its buffer, the dtype and shape a feed must have)
        self.inputs: dict[str, tuple[np.ndarray[Any, Any], np.dtype[Any], tuple[int, ...]]] = {}
        owned = []
        for name, array in zip(names, data):
            buf = np.empty(array.shape, array.dtype)  # C order, whatever the feed's layout
            self.inputs[name] = (buf, buf.dtype, buf.shape)
            owned.append(engine.value_over(buf, engine.fast_inputs[name][1]))
        self.outputs = [np.empty(a.shape, a.dtype) for a in arrays]
        for i, buf in enumerate(self.outputs):
            owned.append(engine.value_over(buf, plan.etypes[i]))
        #: the plan, when some output shapes are learned ones (ORT may refuse them one day)
        self.guessed_for = plan if plan.learned is not None else None
        self.single = self._singles(arrays)
        #: a run without run options makes the C call itself (nothing to hold, retry or read)
        self.inline = self.guessed_for is None and not self.single
        self.owned = owned  # ffi.gc'd: released with the stage
        self._c_arrays(owned[:len(self.inputs)], owned[len(self.inputs):])
        self.only_output = self.outputs[0] if len(self.outputs) == 1 else None

    def _serve(self, engine: RunEngine, plan: OutputPlan, names: tuple[str, ...]) -> None:
        """What every stage and lane keeps: the engine, the plan, the input names in the order
        of its C array, and its state (busy: in a run; misses beyond hits)."""
        self.engine = engine
        self.run_c = engine.api.Run
        self.busy = False
        self.misses = 0
        self.plan = plan
        self.input_names = names
        self.names = engine.name_array(names)
        self.out_names = plan.names

    def _singles(self, arrays: list[Any]) -> tuple[int, ...]:
        """The outputs of one element, when the model may give them another shape by the input
        values (:meth:`~ortc._run.RunEngine.ranks_follow_values`): ORT writes a one-element
        result into a one-element buffer when either is a scalar, where it refuses any other
        shape, so only reading the shape back tells (RunEngine.as_ort_made). The run that
        made this stage read it for these input shapes; a model whose ranks follow only the
        input shapes cannot change it while they stay."""
        single = tuple(i for i, a in enumerate(arrays) if a.size == 1)
        return single if single and self.engine.ranks_follow_values() else ()

    def _c_arrays(self, inputs: Any, outputs: Any) -> None:
        """The C arrays of input and output values Run takes (``inputs``, ``outputs``: the
        values, or how many slots a lane fills per run), and Run's arguments after the session
        and the run options, read once (0.1 µs a run)."""
        self.values = ffi.new("OrtValue*[]", inputs)
        self.outvals = ffi.new("OrtValue*[]", outputs)
        self.c_args = (self.names.ptr, self.values, self.names.count, self.out_names.ptr,
                       self.out_names.count, self.outvals)

    def run(self, sess_ptr: Any, feeds: Mapping[str, Any], run_options: Any,
            raw_run_options: Any) -> list[Any] | None:
        """The outputs, or None when these feeds do not fit the stage."""
        inputs = self.inputs
        if type(feeds) is not dict or len(feeds) != len(inputs):
            self.misses += 1
            return None
        self.busy = True  # a run a signal handler starts on this thread takes the general path
        try:
            for name, data in feeds.items():
                spec = inputs.get(name)
                if spec is None or type(data) is not _ndarray:
                    self.misses += 1
                    return None
                buf, dtype, shape = spec
                if data.dtype is not dtype or data.shape != shape:
                    self.misses += 1
                    return None
                buf[...] = data
            if run_options is None and self.inline:
                # the common case inline: self.call's frame is 0.1 µs of a ~4 µs tiny run()
                status = self.run_c(sess_ptr, raw_run_options, *self.c_args)
                if status:  # raised, unless ORT refused a buffer: the general path runs then
                    self.refused(error_from_status(status))
                    return None
            elif not self.call(sess_ptr, run_options, raw_run_options, self.outputs,
                               self.single):
                return None
            if self.misses:  # a hit pays one miss back: see STAGE_MAX_MISSES
                self.misses -= 1
            only = self.only_output
            if only is not None:  # a comprehension's frame is 0.12 µs of a ~4 µs tiny run()
                return [only.copy()]
            return [b.copy() for b in self.outputs]
        finally:
            self.busy = False

    def call(self, sess_ptr: Any, run_options: Any, raw_run_options: Any,
             arrays: list[Any] | None = None, single: tuple[int, ...] | list[int] = ()
             ) -> bool:
        """ORT's Run over the stage's values: True when it worked, False when ORT refused an
        output buffer (a learned shape, an open lane's derived one, a declared one that does
        not hold for these input values) or gave one of the outputs ``single`` (of one
        element; ``arrays``: this run's output buffers) another shape: the stage is given up
        and the caller's general path runs the feeds again, without the guess. ORT's other
        errors are raised."""
        guessed = self.guessed_for
        # ORT's messages wait until it is known whether the run is made again (_run.py); not
        # an open lane's (0.25 µs a run): a refused derived shape is logged at ERROR once, as
        # the general path logs its own, and preallocation then stops for the session
        held = hold_ort_logs() if guessed is not None else None
        retry = False
        try:
            if run_options is None:  # the C call itself, not through engine.call's frame
                status = self.run_c(sess_ptr, raw_run_options, *self.c_args)
            else:
                status = self.engine.call(sess_ptr, self.names, self.values, self.out_names,
                                          self.outvals, run_options, raw_run_options)
            if status:
                err = error_from_status(status)
                retry = refused_buffer(err.message) or (
                    guessed is not None and isinstance(err, InvalidArgument))
        finally:
            if held is not None:
                release_ort_logs(held, retry)
        if status:
            if arrays is not None:  # a lane's: ORT may have given one of one element another
                for i, array in enumerate(arrays):  # shape before it failed (as_ort_made)
                    if array is not None and array.size == 1:
                        self.engine.forget_value(array, self.plan.etypes[i])
            self.refused(err, retry)
            return False
        if single and self.engine.as_ort_made(self.plan, self.outvals, list(arrays or ()),
                                              list(single)):
            self.misses = STAGE_MAX_MISSES + 1  # given up: the plan no longer guesses so
            return False
        return True

    def refused(self, err: OrtError, retry: bool | None = None) -> None:
        """After a failed run: raise ``err``, unless it refused an output buffer (``retry``;
        None: judged from its words). Then stop guessing: a learned shape followed the input
        values, and is never guessed again; a declared or derived one does not hold (a
        model's declaration that is wrong for some inputs): as when the general path meets it
        (_run.py), preallocation stops for the session. The stage is given up."""
        if retry is None:
            retry = refused_buffer(err.message)
        if not retry:
            raise err
        if self.guessed_for is not None:
            self.guessed_for.unlearn()
        else:
            self.engine.preallocate = False
        self.misses = STAGE_MAX_MISSES + 1  # given up


class Lane(Stage):
    """A stage for tensors too large to copy: the feeds' own memory goes to ORT, and each run
    writes into new output arrays.

    It serves the same feeds a stage would (exact names, dtypes and shapes, and C-contiguous),
    so it knows every output's shape without deriving it: per run, it takes an OrtValue per
    input and output from the engine's value cache (:meth:`~ortc._run.RunEngine.new_cached_value`:
    one C call saved per tensor whose address recurs, as a stream of fresh arrays' addresses
    do), fills the C arrays it keeps, and makes the one Run call. The general path does the
    same work in more steps (the feeds' snapshot, the plan's shape derivation, the release of
    what a run made): bench/bench_overhead.py measures both.
    """

    def __init__(self, engine: RunEngine, plan: OutputPlan, names: tuple[str, ...],
                 data: tuple[Any, ...], arrays: list[Any]) -> None:
        self._serve(engine, plan, names)
        fast = engine.fast_inputs
        #: input name -> (its index, the dtype and shape a feed must have, its element type)
        self.lanes: dict[str, tuple[int, np.dtype[Any], tuple[int, ...], int]] = {
            name: (i, array.dtype, array.shape, fast[name][1])
            for i, (name, array) in enumerate(zip(names, data))}
        #: (shape, dtype, element type) of each output
        self.made = [(a.shape, a.dtype, plan.etypes[i]) for i, a in enumerate(arrays)]
        self.guessed_for = plan if plan.learned is not None else None
        self.single = self._singles(arrays)
        #: this thread's value cache (a lane serves the thread that made it), kept rather than
        #: looked up per run; should the engine's tables restart, it goes on as this lane's own
        self.cache = this_threads(engine.value_cache)
        # filled per run with values from the cache: pointers only, nothing owned here
        self._c_arrays(len(names), len(arrays))

    def run(self, sess_ptr: Any, feeds: Mapping[str, Any], run_options: Any,
            raw_run_options: Any) -> list[Any] | None:
        """The outputs, or None when these feeds do not fit the lane."""
        lanes = self.lanes
        if type(feeds) is not dict or len(feeds) != len(lanes):
            self.misses += 1
            return None
        items = list(feeds.items())  # read once, and held: their memory is the run's input
        self.busy = True  # a run a signal handler starts on this thread takes the general path
        try:
            engine = self.engine
            cache = self.cache
            held: list[Any] = []  # this run's values: a cache restart must not release them
            values = self.values
            for name, data in items:
                spec = lanes.get(name)
                if spec is None or type(data) is not _ndarray:
                    self.misses += 1
                    return None
                index, dtype, shape, et = spec
                if data.dtype is not dtype or data.shape != shape:
                    self.misses += 1
                    return None
                try:  # numpy refuses a plain buffer of an array that is not C-contiguous
                    buf = _from_buffer(data)
                except ValueError:
                    self.misses += 1
                    return None
                owner = cache.get((buf, shape, et))
                if owner is None:
                    owner = engine.new_cached_value(data, buf, et, name, held, cache)
                else:
                    held.append(owner)
                values[index] = owner
            arrays = []
            outvals = self.outvals
            for index, (shape, dtype, et) in enumerate(self.made):
                array = _empty(shape, dtype)
                buf = _from_buffer(array)
                owner = cache.get((buf, shape, et))
                if owner is None:
                    owner = engine.new_cached_value(array, buf, et, None, held, cache)
                else:
                    held.append(owner)
                outvals[index] = owner
                arrays.append(array)
            if not self.call(sess_ptr, run_options, raw_run_options, arrays, self.single):
                return None
            if self.misses:  # a hit pays one miss back: see STAGE_MAX_MISSES
                self.misses -= 1
            return arrays
        finally:
            self.busy = False


class OpenLane(Lane):
    """A lane for feeds whose shapes change from run to run (a batch size, a sequence length),
    made once a stage or lane has missed too often, when every output's shape follows from the
    input shapes (the plan's ``preallocate``: fixed dims, or dims an input's dims name).

    Per run it derives each output's shape from the feeds' shapes, as the general path does, and
    takes every OrtValue from the engine's value cache: one C call when the feeds' addresses and
    shapes have been seen before, one more per tensor when not. Should ORT refuse a buffer (a
    model whose declared output shape is wrong for some input shapes), the lane is given up and
    the general path runs the feeds again, as it does on its own refusals.
    """

    open = True

    def __init__(self, engine: RunEngine, plan: OutputPlan,
                 names: tuple[str, ...]) -> None:  # not Lane's: nothing is pinned to a shape
        self._serve(engine, plan, names)
        fast = engine.fast_inputs
        #: input name -> (its index, the dtype a feed must have, its element type)
        self.open_lanes = {name: (i, *fast[name]) for i, name in enumerate(names)}
        self.specs = plan.preallocate  # (output index, dtype, element type, dims)
        self.count = plan.count
        self.guessed_for = None
        self.cache = this_threads(engine.value_cache)
        self._c_arrays(len(names), plan.count)

    def run(self, sess_ptr: Any, feeds: Mapping[str, Any], run_options: Any,
            raw_run_options: Any) -> list[Any] | None:
        """The outputs, or None when these feeds do not fit the lane."""
        lanes = self.open_lanes
        engine = self.engine
        if type(feeds) is not dict or len(feeds) != len(lanes) or not engine.preallocate:
            self.misses += 1
            return None
        items = list(feeds.items())  # read once, and held: their memory is the run's input
        self.busy = True  # a run a signal handler starts on this thread takes the general path
        try:
            cache = self.cache
            held: list[Any] = []  # this run's values: a cache restart must not release them
            values = self.values
            shapes = {}
            for name, data in items:
                spec = lanes.get(name)
                if spec is None or type(data) is not _ndarray or (
                        data.dtype is not spec[1] and data.dtype != spec[1]):  # C long long
                    self.misses += 1  # int64s (an output fed back) are equal, not the same
                    return None
                try:  # numpy refuses a plain buffer of an array that is not C-contiguous
                    buf = _from_buffer(data)
                except ValueError:
                    self.misses += 1
                    return None
                index, _dtype, et = spec
                shape = shapes[name] = data.shape
                owner = cache.get((buf, shape, et))
                if owner is None:
                    owner = engine.new_cached_value(data, buf, et, name, held, cache)
                else:
                    held.append(owner)
                values[index] = owner
            arrays: list[Any] = [None] * self.count
            outvals = self.outvals
            single = []  # the outputs of one element this run: ORT may give them another shape
            for index, dtype, et, dims in self.specs:
                out_shape = derived_shape(dims, shapes, dtype)
                if out_shape is None:  # the general path leaves such an output to ORT
                    self.misses += 1
                    return None
                array = _empty(out_shape, dtype)
                buf = _from_buffer(array)
                owner = cache.get((buf, array.shape, et))
                if owner is None:
                    owner = engine.new_cached_value(array, buf, et, None, held, cache)
                else:
                    held.append(owner)
                outvals[index] = owner
                arrays[index] = array
                if array.size == 1:
                    single.append(index)
            if not self.call(sess_ptr, run_options, raw_run_options, arrays, single):
                return None
            if self.misses:  # a hit pays one miss back: see STAGE_MAX_MISSES
                self.misses -= 1
            return arrays
        finally:
            self.busy = False


class ShapeStages:
    """Stages for small tensors whose shapes change from run to run among a few (a batch size,
    requests batched as they come): one :class:`Stage` per tuple of the feeds' shapes, found
    per run by that tuple. A shape not seen yet takes the general path once, after which
    :meth:`ortc._run.Stages.offer` adds its stage. Made when a stage misses more than it
    serves; when this misses more than it serves too (shapes that are new every time), an open
    lane or the general path takes over.
    """

    open = False
    busy = False  # its stages are; a nested run finds the one it needs busy and misses
    #: each shape's first run is a miss (the general path makes its stage): a few dozen
    #: shapes are its use, so it gives up only when new shapes keep coming past that
    max_misses = SHAPE_STAGES_MAX

    def __init__(self, first: Stage) -> None:
        self.plan = first.plan
        self.input_names = first.input_names
        self.misses = 0
        self.by_shape: dict[tuple[Any, ...], Stage] = {}
        self.add(first, tuple(first.inputs[n][2] for n in first.input_names))

    def add(self, stage: Stage, shapes: tuple[Any, ...]) -> None:
        if len(self.by_shape) >= SHAPE_STAGES_MAX:
            self.by_shape.clear()  # a stage in use is held by its run
        stage.misses = 0
        self.by_shape[shapes] = stage

    def run(self, sess_ptr: Any, feeds: Mapping[str, Any], run_options: Any,
            raw_run_options: Any) -> list[Any] | None:
        """The outputs, or None when no stage here fits these feeds."""
        stage = None
        if type(feeds) is dict:
            try:
                stage = self.by_shape.get(tuple(map(_shape_of, feeds.values())))
            except Exception:  # a feed that is not an array (its error is the general path's)
                pass
        if stage is None or stage.busy:
            self.misses += 1
            return None
        result: list[Any] | None = stage.run(sess_ptr, feeds, run_options, raw_run_options)
        if result is None:
            self.misses += 1
            if stage.misses > STAGE_MAX_MISSES:  # ORT refused a learned shape: not again
                self.by_shape = {k: v for k, v in self.by_shape.items() if v is not stage}
            return None
        if self.misses:  # a hit pays one miss back: see STAGE_MAX_MISSES
            self.misses -= 1
        return result
