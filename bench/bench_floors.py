"""How far each per-call pattern sits above the floor of its own C calls, on the tiny model.

    PYTHONPATH=. python bench/bench_floors.py [--rounds 15] [--calls 2000]

For each pattern the bench's targets judge (bench/runner.py's loops, the same code), three
loops are timed in interleaved rounds: onnxruntime's, ortc's, and the C calls ortc's makes
for it, through the same cffi functions with nothing around them ("floor": no guard, run
context, Ctrl-C wiring, bookkeeping or checks; a failed status raises). The floor is what a
cffi binding making ortc's calls cannot go below; what ortc spends above it is Python, and
the guard's part of that is its entries per call (each a marked call's object or handle
argument, a run's Value, a hold taken) times their cost (bench/bench_guard.py).

Patterns (ortc's loop; onnxruntime's is the one the bench pairs with it):

* ``run``: ``run(None, feeds)`` with fresh arrays (floor: bench/runner.py ``_t_cffi_run``);
* ``bound``: ``run_with_binding`` of a binding bound once (floor: ``_t_cffi_bound``);
* ``arrays rebound``: both inputs and the output bound to fresh arrays every call, then a
  bound run (onnxruntime: the same by address, its pointer-rebinding pattern);
* ``Values rebound``: Values made once over the pools, bound every call, then a bound run;
* ``bind + copy out``: inputs bound, the output left to ORT, the run, the output copied out;
* ``Values per call``: a Value made for each input every call, ``run_with_values`` (its
  output a Value: the floor makes the input OrtValues, runs, and releases all three);
* ``made and dropped``: a session made from the model's bytes with one intra-op thread and
  dropped (floor: session options made and set, the session created, both released);
* ``new session + run``: the same session, its first ``run()``, dropped (floor: the above,
  the inputs, outputs and overridable initializers read as ortc reads them (names, types,
  shapes), then the C calls of ``run()``).

Figures are medians of round medians (µs per call); ratios are medians of per-round ratios.
Intra-op threads 1, main thread. The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import ortc  # noqa: E402
from ortc import _guard  # noqa: E402
from ortc._ffi import ffi  # noqa: E402
from ortc._numpy_bridge import PLAIN_DTYPES  # noqa: E402
from ortc.memory import cpu_memory_info, default_allocator  # noqa: E402

from bench import runner  # noqa: E402
from bench.models import add_model  # noqa: E402

Loop = Callable[[int], list[int]]
_NULL = ffi.NULL


def _ok(status: Any, what: str) -> None:
    if status:
        raise RuntimeError(f"{what} failed")  # (its status is left unreleased)


class _Floors:
    """The C calls of ortc's pattern loops, over one ortc session and its value pools."""

    def __init__(self, sess: Any) -> None:
        self.api = sess._api
        self.sess = sess._ptr
        self.cpu = cpu_memory_info()._ptr
        self.alloc = default_allocator()._ptr
        self.names = {name: name.encode() for name in ("a", "b", "c")}
        self.ets = {dt: et for et, dt in PLAIN_DTYPES.items()}
        self.cache: dict[Any, Any] = {}  # keyed as ortc's value cache
        self.made: list[Any] = []  # OrtValues made here, released by close()
        self.made_names: Any = None
        self.bindings: list[Any] = []
        #: the outputs the last bind-and-copy call copied out (checked once before timing)
        self.copies: list[np.ndarray[Any, Any]] = []
        self.elem = ffi.new("ONNXTensorElementDataType*")
        self.dims = ffi.new("int64_t**")
        self.dims_arg = ffi.cast("const int64_t**", self.dims)
        self.count = ffi.new("size_t*")
        self.data = ffi.new("void**")
        self.slots = ffi.new("OrtValue***")

    def binding(self, sess: Any) -> Any:
        """A new IoBinding's pointer (the binding kept until close())."""
        binding = sess.io_binding()
        self.bindings.append(binding)
        return binding._ptr

    def close(self) -> None:
        for binding in self.bindings:
            binding.close()
        for value in self.made:
            self.api.ReleaseValue(value)
        self.made = []

    def value(self, array: np.ndarray[Any, Any], cached: bool = True) -> Any:
        """An OrtValue over ``array`` (from the cache, as ortc's run and binding take one)."""
        buf = ffi.from_buffer(array)
        et = self.ets[array.dtype]
        key = (buf, array.shape, et)
        found = self.cache.get(key) if cached else None
        if found is None:
            out = ffi.new("OrtValue**")
            _ok(self.api.CreateTensorWithDataAsOrtValue(self.cpu, buf, array.nbytes,
                                                         array.shape, array.ndim, et, out),
                "CreateTensorWithDataAsOrtValue")
            found = out[0]
            if cached:
                self.cache[(ffi.cast("char*", buf), array.shape, et)] = found
                self.made.append(found)
        return found

    def copy_out(self, raw: Any) -> np.ndarray[Any, Any]:
        """An output's type and shape in one call, a new array and a memmove (ortc's copy)."""
        api = self.api
        _ok(api.GetTensorElementTypeAndShapeDataReference(raw, self.elem, self.dims_arg,
                                                           self.count), "shape query")
        n = self.count[0]
        copy = np.empty(tuple(ffi.unpack(self.dims[0], n)) if n else (), PLAIN_DTYPES[self.elem[0]])
        if copy.nbytes:
            _ok(api.GetTensorMutableData(raw, self.data), "GetTensorMutableData")
            ffi.memmove(copy, self.data[0], copy.nbytes)
        return copy

    def rebind_arrays(self, binding: Any, pool: list[Any], outs: list[Any]) -> Loop:
        api, names = self.api, self.names

        def one(i: int) -> None:
            for k, x in pool[i & 15].items():
                _ok(api.BindInput(binding, names[k], self.value(x)), "BindInput")
            for k, y in outs[i & 15].items():
                _ok(api.BindOutput(binding, names[k], self.value(y)), "BindOutput")
            _ok(api.RunWithBinding(self.sess, _NULL, binding), "RunWithBinding")

        return lambda n: _timed(n, one)

    def rebind_values(self, binding: Any, values: list[Any], outs: list[Any]) -> Loop:
        api, names = self.api, self.names
        ins = [{k: v._ptr for k, v in d.items()} for d in values]
        outv = [{k: v._ptr for k, v in d.items()} for d in outs]

        def one(i: int) -> None:
            for k, v in ins[i & 15].items():
                _ok(api.BindInput(binding, names[k], v), "BindInput")
            for k, v in outv[i & 15].items():
                _ok(api.BindOutput(binding, names[k], v), "BindOutput")
            _ok(api.RunWithBinding(self.sess, _NULL, binding), "RunWithBinding")

        return lambda n: _timed(n, one)

    def bind_copy(self, binding: Any, pool: list[Any]) -> Loop:
        api, names = self.api, self.names

        def one(i: int) -> None:
            for k, x in pool[i & 15].items():
                _ok(api.BindInput(binding, names[k], self.value(x)), "BindInput")
            _ok(api.BindOutputToDevice(binding, names["c"], self.cpu), "BindOutputToDevice")
            _ok(api.RunWithBinding(self.sess, _NULL, binding), "RunWithBinding")
            _ok(api.GetBoundOutputValues(binding, self.alloc, self.slots, self.count),
                "GetBoundOutputValues")
            slots = self.slots[0]
            self.copies = [self.copy_out(slots[j]) for j in range(self.count[0])]
            for j in range(self.count[0]):
                api.ReleaseValue(slots[j])
            api.AllocatorFree(self.alloc, slots)

        return lambda n: _timed(n, one)

    def new_session(self, model: bytes, pool: list[Any], run: bool) -> Loop:
        """A session made (options made and set to one intra-op thread, as ortc's keywords
        make them), then, with ``run``, its inputs, outputs and initializers read and a run
        (``_t_cffi_run``'s calls, new OrtValues over the inputs), then released."""
        api, cpu = self.api, self.cpu
        env = ortc.env.get_env()._ptr
        data = ffi.from_buffer(model)
        opts, sess_out = ffi.new("OrtSessionOptions**"), ffi.new("OrtSession**")
        in_names, out_list = self.made_names  # (the run's, kept alive by the caller)
        readers = [(api.SessionGetInputCount, api.SessionGetInputName,
                    api.SessionGetInputTypeInfo),
                   (api.SessionGetOutputCount, api.SessionGetOutputName,
                    api.SessionGetOutputTypeInfo),
                   (api.SessionGetOverridableInitializerCount,
                    api.SessionGetOverridableInitializerName,
                    api.SessionGetOverridableInitializerTypeInfo)]
        name_out, info_out = ffi.new("char**"), ffi.new("OrtTypeInfo**")
        kind, tinfo = ffi.new("ONNXType*"), ffi.new("OrtTensorTypeAndShapeInfo**")
        tinfo_arg = ffi.cast("const OrtTensorTypeAndShapeInfo**", tinfo)
        text, length = ffi.new("char**"), ffi.new("size_t*")
        text_arg = ffi.cast("const char**", text)
        dims = ffi.new("int64_t[8]")

        def read_io(sess: Any) -> None:
            for count_of, name_of, type_of in readers:
                _ok(count_of(sess, self.count), "count")
                for i in range(self.count[0]):
                    _ok(name_of(sess, i, self.alloc, name_out), "name")
                    ffi.string(name_out[0])
                    api.AllocatorFree(self.alloc, name_out[0])
                    _ok(type_of(sess, i, info_out), "type")
                    info = info_out[0]
                    _ok(api.GetOnnxTypeFromTypeInfo(info, kind), "kind")
                    _ok(api.GetDenotationFromTypeInfo(info, text_arg, length), "denotation")
                    _ok(api.CastTypeInfoToTensorInfo(info, tinfo_arg), "tensor info")
                    _ok(api.GetTensorElementType(tinfo[0], self.elem), "element type")
                    _ok(api.GetDimensionsCount(tinfo[0], self.count), "rank")
                    _ok(api.GetDimensions(tinfo[0], dims, self.count[0]), "dims")
                    api.ReleaseTypeInfo(info)

        out_names = out_list.names.ptr

        def one(i: int) -> None:
            _ok(api.CreateSessionOptions(opts), "CreateSessionOptions")
            _ok(api.SetIntraOpNumThreads(opts[0], 1), "SetIntraOpNumThreads")
            _ok(api.CreateSessionFromArray(env, data, len(model), opts[0], sess_out),
                "CreateSessionFromArray")
            api.ReleaseSessionOptions(opts[0])
            sess = sess_out[0]
            if run:
                read_io(sess)
                made = [self.value(x, cached=False) for x in pool[i & 15].values()]
                values = ffi.new("OrtValue*[]", made)
                slots = ffi.new("OrtValue*[]", 1)
                _ok(api.Run(sess, _NULL, in_names.ptr, values, len(made), out_names, 1, slots),
                    "Run")
                self.copy_out(slots[0])
                api.ReleaseValue(slots[0])
                for value in made:
                    api.ReleaseValue(value)
            api.ReleaseSession(sess)

        return lambda n: _timed(n, one)

    def values_per_call(self, in_names: Any, out_names: Any, pool: list[Any]) -> Loop:
        api = self.api

        def one(i: int) -> None:
            made = [self.value(x, cached=False) for x in pool[i & 15].values()]
            values = ffi.new("OrtValue*[]", made)
            slots = ffi.new("OrtValue*[]", 1)
            _ok(api.Run(self.sess, _NULL, in_names.ptr, values, len(made), out_names.ptr, 1,
                        slots), "Run")
            api.ReleaseValue(slots[0])  # (ortc hands the output out as a Value, uncopied)
            for value in made:
                api.ReleaseValue(value)

        return lambda n: _timed(n, one)


#: the rows whose calls make a session (timed over fewer calls per round)
SESSION_ROWS = ("made and dropped", "new session + run")


def _timed(n: int, one: Callable[[int], Any]) -> list[int]:
    pc = runner._pc
    out = [0] * n
    prev = pc()
    for i in range(n):
        one(i)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _paired_ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b))


def _guard_entries(loop: Callable[[int], Any]) -> int:
    """Guard entries (calls entered, holds taken) of one more call of ``loop``."""
    counted = [0]
    guard_class: Any = _guard.Guard
    enter, hold = guard_class.enter, guard_class.hold

    def counting(method: Any) -> Any:
        def call(self: Any, *a: Any, **k: Any) -> Any:
            counted[0] += 1
            return method(self, *a, **k)
        return call

    guard_class.enter, guard_class.hold = counting(enter), counting(hold)
    try:
        loop(1)
    finally:
        guard_class.enter, guard_class.hold = enter, hold
    return counted[0]


def patterns() -> tuple[list[tuple[str, Loop, Loop, Loop]], Callable[[], None]]:
    """(name, onnxruntime's loop, ortc's, the floor's) per pattern, and what to close after."""
    import onnxruntime as ort  # type: ignore[import-untyped]

    model = add_model().model
    rng = np.random.default_rng(0)
    pool = [{k: rng.random(1, np.float32) for k in ("a", "b")} for _ in range(16)]
    outs = [{"c": np.empty(1, np.float32)} for _ in range(16)]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    osess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    sess = ortc.Session(model, intra_op_num_threads=1)
    floors = _Floors(sess)
    mask = 15

    def loop(fn: Callable[..., list[int]], ctx: Any, data: list[Any] = pool) -> Loop:
        return lambda n: fn(ctx, data, mask, n)

    def ort_bound() -> Any:
        b = osess.io_binding()
        b.bind_cpu_input("a", pool[0]["a"])
        b.bind_cpu_input("b", pool[0]["b"])
        b.bind_output("c", "cpu", 0, np.float32, (1,), outs[0]["c"].ctypes.data)
        return b

    bound = sess.io_binding()
    bound.bind_input("a", pool[0]["a"])
    bound.bind_input("b", pool[0]["b"])
    bound.bind_output("c", outs[0]["c"])
    make_o, make_v = ort.OrtValue.ortvalue_from_numpy, ortc.Value.from_numpy
    o_values = [{k: make_o(x) for k, x in d.items()} for d in pool]
    o_outs = [{k: make_o(y) for k, y in d.items()} for d in outs]
    values = [{k: make_v(x) for k, x in d.items()} for d in pool]
    v_outs = [{k: make_v(y) for k, y in d.items()} for d in outs]
    engine = sess._engine
    in_names, out_list = engine.name_array(("a", "b")), engine.output_list(None)
    rows = [
        ("run", loop(runner._t_run, osess), loop(runner._t_run, sess),
         loop(runner._t_cffi_run, sess)),
        ("bound", loop(runner._t_ort_bound, osess, [ort_bound()] * 16),
         loop(runner._t_ortc_bound, sess, [bound] * 16),
         loop(runner._t_cffi_bound, sess, [bound] * 16)),
        ("arrays rebound", loop(runner._t_rebind_buffers, (osess, osess.io_binding(), outs)),
         loop(runner._t_ortc_rebind_buffers, (sess, sess.io_binding(), outs)),
         floors.rebind_arrays(floors.binding(sess), pool, outs)),
        ("Values rebound",
         loop(runner._t_rebind_ortvalues, (osess, osess.io_binding(), o_values, o_outs)),
         loop(runner._t_ortc_rebind_ortvalues, (sess, sess.io_binding(), values, v_outs)),
         floors.rebind_values(floors.binding(sess), values, v_outs)),
        ("bind + copy out", loop(runner._t_rebind_alloc_copy, (osess, osess.io_binding(), ["c"])),
         loop(runner._t_ortc_rebind_alloc_copy, (sess, sess.io_binding(), ["c"])),
         floors.bind_copy(floors.binding(sess), pool)),
        ("Values per call", loop(runner._t_values_per_call, (osess, ort.OrtValue)),
         loop(runner._t_ortc_values_per_call, (sess, ortc.Value)),
         floors.values_per_call(in_names, out_list.names, pool)),
    ]
    floors.made_names = (in_names, out_list)  # (their C arrays live as long as the loops)
    rows += [
        ("made and dropped", loop(runner._t_make_drop_session, (ort.InferenceSession, model, so)),
         loop(runner._t_ortc_make_drop_session, (ortc.Session, model)),
         floors.new_session(model, pool, run=False)),
        ("new session + run", loop(runner._t_new_session, (ort.InferenceSession, model, so)),
         loop(runner._t_ortc_new_session, (ortc.Session, model)),
         floors.new_session(model, pool, run=True)),
    ]
    _check_floors(rows, floors, pool, outs)
    return rows, floors.close


def _check_floors(rows: list[tuple[str, Loop, Loop, Loop]], floors: _Floors, pool: list[Any],
                  outs: list[Any]) -> None:
    """The floors that bind output memory write the sums into it (the output arrays, which the
    output Values are over too, cleared first), and the bind-and-copy floor copies them out:
    each floor does its pattern's work, not less."""
    floor = {name: loops[2] for name, *loops in rows}
    for name in ("arrays rebound", "Values rebound"):
        for out in outs:
            out["c"][...] = 0
        floor[name](16)
        for feeds, out in zip(pool, outs):
            assert out["c"] == feeds["a"] + feeds["b"], (name, out, feeds)
    floor["bind + copy out"](16)
    assert floors.copies[0] == pool[15]["a"] + pool[15]["b"], floors.copies


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args(argv)
    rows, close = patterns()
    try:
        medians: dict[tuple[str, int], list[float]] = {}
        for _ in range(args.rounds):
            for name, *loops in rows:
                # (a session pattern's call takes about 40 times a run's)
                calls = max(args.calls // 20, 5) if name in SESSION_ROWS else args.calls
                for k, run in enumerate(loops):
                    times = run(calls)
                    medians.setdefault((name, k), []).append(
                        statistics.median(times) / 1e3)  # ns -> µs
        print(f"per call, µs (medians of {args.rounds} rounds of {args.calls} calls); ratios "
              f"to onnxruntime's, paired per round")
        print(f"{'pattern':<18}{'onnxruntime':>12}{'floor':>9}{'ortc':>9}{'floor/ort':>11}"
              f"{'ortc/ort':>10}{'ortc-floor':>12}{'guard entries':>15}")
        for name, _ort_loop, ortc_loop, _floor_loop in rows:
            ort_r, ortc_r, floor_r = (medians[(name, k)] for k in range(3))
            print(f"{name:<18}{statistics.median(ort_r):>12.2f}"
                  f"{statistics.median(floor_r):>9.2f}{statistics.median(ortc_r):>9.2f}"
                  f"{_paired_ratio(floor_r, ort_r):>11.2f}{_paired_ratio(ortc_r, ort_r):>10.2f}"
                  f"{statistics.median(a - b for a, b in zip(ortc_r, floor_r)):>12.2f}"
                  f"{_guard_entries(ortc_loop):>15}")
    finally:
        close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
