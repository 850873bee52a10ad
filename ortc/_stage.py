"""The staged path: per-thread buffers that serve repeated runs on small tensors.

Creating and releasing an OrtValue per input and output costs more than the run itself on a
small model (bench: ~1.7 µs a pair through cffi). After a run whose tensors were all small and
whose outputs were all preallocated, a :class:`Stage` creates those OrtValues once, over numpy
buffers it owns: each later run copies the feeds into the input buffers, makes the one Run
call, and returns copies of the output buffers. It serves only feeds with the exact names,
dtypes and shapes it was built for; anything else takes the general path.

A stage reaches its session only through the :class:`~ortc._run.RunEngine` (names, memory info,
which inputs are plain arrays, the Run call) and the session pointer each run passes in.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ._ffi import ffi
from ._status import error_from_status
from .env import hold_ort_logs, release_ort_logs
from .errors import InvalidArgument

if TYPE_CHECKING:
    from ._plan import OutputPlan
    from ._run import RunEngine

__all__ = ["Stage", "Stages", "STAGE_MAX_BYTES", "STAGE_MAX_MISSES", "refused_buffer",
           "this_threads"]

#: tensors up to this size may be staged (copying them costs less than a value per call)
STAGE_MAX_BYTES = 1 << 14
#: a stage that misses this many runs in a row (shapes keep changing) is given up
STAGE_MAX_MISSES = 8

_get_ident = threading.get_ident
_ndarray = np.ndarray


def this_threads(tables: dict[int, dict[Any, Any]]) -> dict[Any, Any]:
    """This thread's table in ``tables`` (thread id -> dict), made on first use. Past 64
    threads the whole mapping restarts: threads come and go, and it must not grow without
    bound (what a table holds is only ever a cache)."""
    tid = _get_ident()
    table = tables.get(tid)
    if table is None:
        if len(tables) > 64:
            tables.clear()
        table = tables[tid] = {}
    return table


def refused_buffer(message: str) -> bool:
    """Whether ORT refused a preallocated output for its shape (wording differs by version and
    by the check: a kernel's output, or the caller's buffers against the model's declared
    output shapes before the run)."""
    return ("pre-allocated" in message or "re-use buffer" in message
            or "OrtValue provided for output" in message
            or "Invalid rank for output" in message
            or "invalid dimensions for output" in message
            or "OrtValue shape verification failed" in message)  # older ORT's kernel check


class Stage:
    """Buffers and OrtValues for one thread, session and output list."""

    def __init__(self, engine: RunEngine, plan: OutputPlan, names: tuple[str, ...],
                 data: tuple[Any, ...], arrays: list[Any]) -> None:
        self.engine = engine
        self.run_c = engine.api.Run
        self.busy = False
        self.misses = 0
        self.names = engine.name_array(names)
        self.out_names = plan.names
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
        self.owned = owned  # ffi.gc'd: released with the stage
        self.values = ffi.new("OrtValue*[]", owned[:len(self.inputs)])
        self.outvals = ffi.new("OrtValue*[]", owned[len(self.inputs):])

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
            # learned shapes may be refused: ORT's messages wait until that is known (_run.py)
            held = hold_ort_logs() if self.guessed_for is not None else None
            retry = False
            try:
                if run_options is None:  # the C call itself: engine.call's frame costs 0.1 µs
                    status = self.run_c(sess_ptr, raw_run_options, self.names.ptr, self.values,
                                        self.names.count, self.out_names.ptr,
                                        self.out_names.count, self.outvals)
                else:
                    status = self.engine.call(sess_ptr, self.names, self.values,
                                              self.out_names, self.outvals, run_options,
                                              raw_run_options)
                if status:
                    err = error_from_status(status)
                    retry = self.guessed_for is not None and (isinstance(err, InvalidArgument)
                                                              or refused_buffer(err.message))
            finally:
                if held is not None:
                    release_ort_logs(held, retry)
            if status:
                if retry:
                    # a learned shape that depends on the input values: the general path runs
                    # these feeds again without the guess, and this stage is given up
                    self.guessed_for.unlearn()  # type: ignore[union-attr]
                    self.misses = STAGE_MAX_MISSES + 1
                    return None
                raise err
            self.misses = 0
            return [b.copy() for b in self.outputs]
        finally:
            self.busy = False


class Stages:
    """A session's stages: thread id -> output-list key -> Stage (False: given up)."""

    def __init__(self, engine: RunEngine) -> None:
        self.engine = engine
        self.by_thread: dict[int, dict[Any, Any]] = {}
        #: False turns staging off for the session (tests compare both paths)
        self.active = True

    def offer(self, key: Any, plan: OutputPlan, names: tuple[str, ...], data: tuple[Any, ...],
              arrays: list[Any]) -> None:
        """After a run whose outputs were all preallocated: stage the next runs with the same
        input shapes on this thread, when every tensor is small."""
        stages = this_threads(self.by_thread)
        old = stages.get(key)
        if old is False or (old is not None and old.busy):
            return
        fast = self.engine.fast_inputs
        for name, array in zip(names, data):
            spec = fast.get(name)
            if spec is None or type(array) is not np.ndarray or array.dtype is not spec[0]:
                return
            if array.nbytes > STAGE_MAX_BYTES:
                self._refused(plan)
                return
        if any(a.nbytes > STAGE_MAX_BYTES for a in arrays):
            self._refused(plan)
            return
        stage = Stage(self.engine, plan, names, data, arrays)
        if old is not None:
            stage.misses = old.misses
        stages[key] = stage

    @staticmethod
    def _refused(plan: OutputPlan) -> None:
        # A model whose tensors are large (the usual case: one shape) would try, and fail, to
        # stage after every run; past a few such runs, stop trying for this output list.
        plan.too_big += 1
        if plan.too_big > STAGE_MAX_MISSES:
            plan.stageable = False

    def clear(self) -> None:
        self.by_thread = {}  # their OrtValues are over numpy buffers: freed with them
