"""Output plans: what a run needs per requested output list, computed once per session and
list (the C array of names, which outputs are tensors, which can be preallocated and with what
shape), and the shapes a plan learns for outputs the model leaves open; with the helpers the
general path and the stages share to preallocate outputs (a shape derived per run, whether ORT
refused a buffer, the per-thread tables)."""

from __future__ import annotations

import _thread
from typing import Any

import numpy as np

from ._cstr import NameArray
from ._enums import ValueKind
from .dtypes import STRING_KINDS, bits_for
from .typeinfo import NodeArg

__all__ = ["OutputPlan", "derive_output_shapes", "LEARN_AFTER", "PREALLOCATE_MAX", "derived_shape",
           "refused_buffer", "this_threads"]

#: an output shape the model leaves open is preallocated once it came out the same this many
#: runs in a row for the same input shapes (see OutputPlan.learned)
LEARN_AFTER = 3
#: outputs above this size are left to ORT to allocate (bytes): a large output gains little, and
#: a model may declare an absurd shape (found by tests/test_malformed.py)
PREALLOCATE_MAX = 1 << 26

_get_ident = _thread.get_ident


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


def derived_shape(dims: tuple[Any, ...], shapes: dict[str, tuple[int, ...]],
                  dtype: np.dtype[Any]) -> list[int] | None:
    """An output's shape from a plan's dims (ints, or (input name, axis)) and this run's input
    shapes; None when it cannot be told this time (an input left out, a feed of another rank)
    or is above PREALLOCATE_MAX (ORT allocates it then)."""
    shape = []
    size = dtype.itemsize
    for d in dims:
        if type(d) is not int:
            source = shapes.get(d[0])
            if source is None or len(source) <= d[1]:
                return None
            d = source[d[1]]
        shape.append(d)
        size *= d
    return shape if size <= PREALLOCATE_MAX else None


def refused_buffer(message: str) -> bool:
    """Whether ORT refused a preallocated output for its shape (wording differs by version and
    by the check: a kernel's output, or the caller's buffers against the model's declared
    output shapes before the run)."""
    return ("pre-allocated" in message or "re-use buffer" in message
            or "OrtValue provided for output" in message
            or "Invalid rank for output" in message
            or "invalid dimensions for output" in message
            or "OrtValue shape verification failed" in message)  # older ORT's kernel check


class OutputPlan:
    """What a run needs per requested output list, computed once per session and list.

    Output shapes: ``preallocate`` holds the outputs whose shape the model declares (fixed dims,
    or dims named after an input's). The others (a streaming model's state, declared without a
    shape) ORT allocates, and each run pays for a value and its conversion; but their shape
    usually follows from the input shapes alone. So a plan learns: once an open output came out
    with the same shape ``LEARN_AFTER`` runs in a row for the same input shapes, later runs with
    those input shapes preallocate it (and a stage may then serve them). A shape that depends
    on the input *values* (NonZero, NonMaxSuppression) makes ORT refuse the buffer; the run is
    made again without the guess and this plan stops learning (ORT's message about that refusal
    comes at DEBUG: :func:`ortc.env.hold_ort_logs`).
    """

    __slots__ = ("names", "count", "tensor", "preallocate", "etypes", "learnable", "learned",
                 "seen", "stageable", "confirmed", "unique", "positions", "one_element",
                 "handed_back")

    def __init__(self, names: NameArray, tensor: list[bool],
                 preallocate: list[tuple[Any, ...]],
                 learnable: list[tuple[int, np.dtype[Any], int, Any]],
                 handed_back: tuple[int, ...] = ()) -> None:
        self.names = names
        #: indices of the outputs that are also inputs: ORT gives the fed value back, over the
        #: caller's memory, which the arrays made of it must not be views of (the caller may
        #: change or free it): they are copied
        self.handed_back = handed_back
        self.count = names.count
        self.tensor = tensor
        #: (output index, dtype, element type, dims: int or (input name, axis))
        self.preallocate = preallocate
        #: (output index, dtype, element type, declared shape or None) of the numeric tensor
        #: outputs whose shape is open
        self.learnable = learnable
        #: output index -> element type, for every output that can be preallocated
        self.etypes = {i: et for i, _dt, et, *_ in (*preallocate, *learnable)}
        #: (input shapes, [(output index, dtype, element type, shape)]) once learned
        self.learned: tuple[dict[str, tuple[int, ...]], list[tuple[Any, ...]]] | None = None
        #: (input shapes, output shapes, times in a row) while learning; False: stopped
        self.seen: Any = None if learnable else False
        #: every output can be preallocated (a stage may serve the runs)
        self.stageable = len(self.etypes) == self.count > 0
        #: a run on preallocated outputs has worked: the declared shapes hold (until then ORT's
        #: messages from such a run are held, as it may be refused and made again)
        self.confirmed = False
        #: indices of the preallocated outputs declared with one element (see one_element),
        #: which an open lane does not serve (the shape ORT gave an output of one element is
        #: read after each general-path run: RunEngine.as_ort_made)
        self.one_element = tuple(spec[0] for spec in preallocate if one_element(spec[3]))
        #: a list that names an output twice: the names once each, and for each requested
        #: position the index of its name among them. run() runs the names once (ORT writes
        #: one of two buffers given for one name) and fills every position (:meth:`repeat`).
        self.unique: tuple[str, ...] | None = None
        self.positions: tuple[int, ...] = ()

    def reshaped_by_ort(self, index: int) -> None:
        """ORT gave output ``index`` another shape than its buffer of one element had (see
        RunEngine.as_ort_made): a declared shape is learned from now on, a learned one is
        never guessed again (it followed the input values)."""
        if any(spec[0] == index for spec in self.preallocate):
            self.not_as_declared(index)
        else:
            self.unlearn()

    def not_as_declared(self, index: int) -> None:
        """Output ``index`` came out of ORT with another shape than its declaration: from now
        on it is learned, as an undeclared output is. (Once: two threads' runs may find it.)"""
        spec = next((s for s in self.preallocate if s[0] == index), None)
        if spec is None:
            return
        self.preallocate = [s for s in self.preallocate if s[0] != index]
        self.one_element = tuple(i for i in self.one_element if i != index)
        self.learnable = [*self.learnable, (index, spec[1], spec[2], None)]
        if self.seen is False:
            self.seen = None

    def repeat(self, arrays: list[Any]) -> list[Any]:
        """The results of a run of ``unique`` at every requested position: a repeated array
        as another view of the same memory, as onnxruntime gives it."""
        out, given = [], set()
        for j in self.positions:
            result = arrays[j]
            if j in given and isinstance(result, np.ndarray):
                result = result.view()
            given.add(j)
            out.append(result)
        return out

    def learn(self, shapes: dict[str, tuple[int, ...]], arrays: list[Any]) -> None:
        """After a run in which ORT allocated the open outputs: count the shapes they had."""
        seen = self.seen
        if seen is False:
            return
        observed = []
        for i, dtype, _et, declared in self.learnable:
            arr = arrays[i]
            if type(arr) is not np.ndarray:
                return
            shape = arr.shape
            if arr.dtype != dtype or declared is not None and (len(shape) != len(declared) or any(
                    type(d) is int and d != n for d, n in zip(declared, shape))):
                # The model declares a type or shape its output does not have (a real one,
                # found by the apps test: rank 2 declared, rank 3 made). ORT checks a caller's
                # buffer against the declaration and would refuse every guess: do not learn.
                self.unlearn()
                return
            observed.append(shape)
        if seen is not None and seen[1] == observed and seen[0] == shapes:
            if seen[2] + 1 >= LEARN_AFTER:
                self.learned = (shapes, [(i, dt, et, tuple(arrays[i].shape))
                                         for i, dt, et, _declared in self.learnable])
                self.seen = None
                return
            self.seen = (shapes, observed, seen[2] + 1)
        else:
            self.seen = (shapes, observed, 1)

    def unlearn(self) -> None:
        """A learned shape was refused: the output's shape depends on values. Stop for good."""
        self.seen = False
        self.learned = None


def derive_output_shapes(inputs: list[NodeArg], outputs: list[NodeArg],
                         initializers: list[NodeArg] | None = None
                         ) -> tuple[dict[str, tuple[np.dtype[Any], int, tuple[Any, ...]]],
                                    dict[str, tuple[np.dtype[Any], int, Any]]]:
    """(the outputs whose shape is known before a run: fixed dims, or symbolic dims that also
    name an input's dim (ONNX requires one symbol to mean one size within a model); the other
    numeric tensor outputs, whose shape a plan may learn: name -> (dtype, element type, the
    declared shape or None)).

    An output that is also an input or an overridable initializer (a graph that hands an input
    back) is in neither: ORT gives the fed value itself for it, in place of a buffer given for
    it, which stayed unwritten (its run returned uninitialized memory)."""
    fed = {a.name for a in (*inputs, *(initializers or ()))}
    symbols: dict[str, tuple[str, int]] = {}
    for a in inputs:
        for axis, d in enumerate(a.shape or ()):
            if isinstance(d, str):
                symbols.setdefault(d, (a.name, axis))
    out: dict[str, tuple[np.dtype[Any], int, tuple[Any, ...]]] = {}
    open_: dict[str, tuple[np.dtype[Any], int, Any]] = {}
    for a in outputs:
        dt = a.dtype
        if a.kind != ValueKind.TENSOR or dt is None or dt.kind in STRING_KINDS \
                or bits_for(a.element_type or 0) or a.name in fed:
            continue
        if a.shape is None:
            open_[a.name] = (dt, int(a.element_type), None)  # type: ignore[arg-type]
            continue
        dims: list[Any] = []
        for d in a.shape:
            if isinstance(d, int):
                dims.append(d)
            elif isinstance(d, str) and d in symbols:
                dims.append(symbols[d])
            else:
                break
        else:
            out[a.name] = (dt, int(a.element_type), tuple(dims))  # type: ignore[arg-type]
            continue
        open_[a.name] = (dt, int(a.element_type), tuple(a.shape))  # type: ignore[arg-type]
    return out, open_


def one_element(dims: tuple[Any, ...]) -> bool:
    """A declared shape of one element ((), (1,), (1, 1)). ORT writes a one-element result of
    any shape into a buffer of one element (a scalar fed as [1], a ReduceSum with keepdims
    declared scalar), where it refuses a buffer of any other wrong shape: so after a run on
    such a buffer the run engine reads the shape ORT gave (:meth:`OutputPlan.one_element`)."""
    return all(type(d) is int and d == 1 for d in dims)
