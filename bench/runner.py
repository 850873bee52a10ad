"""ortc's benchmark: per-call latency against onnxruntime's own binding and a C loop.

    python -m ortc bench [--quick | --smoke] [--json FILE] [--markdown FILE]
                         [--models tiny,mixed,batch,matmul,vad,silero,mlp,squeezenet,shufflenet]
                         [--processes N]

The models are in bench/models.py: an Add on one float, a mixed-dtype model, a small MLP whose
batch size changes from call to call, a MatMul, a
streaming voice-activity-like model whose outputs have no static shape (called once per frame,
its state fed back), an MLP, and two networks from the onnx package's test data.

Everything runs in one process, in interleaved rounds: every round runs each path once, in a shuffled order, so drift of
the machine (frequency, noisy neighbours) falls on all paths alike. Each call is timed on its own
(``perf_counter_ns`` around it, the C floor ``clock_gettime``); the timing loop's own overhead,
measured with an empty loop of the same shape, is subtracted. Latency runs use
``intra_op_num_threads=1``.

Paths (µs per call, median and p99 over all calls of all rounds):

* ``c_floor``: C code (bench/floor.c, compiled now with gcc against include/ortc_api.h and
  linked to the library ortc loads; called in this process through ctypes, so it is scheduled
  like the Python paths) that wraps fresh OrtValues over its input buffers, calls Run with
  ORT-allocated outputs and releases everything, per call, timing each call itself;
* ``ort_run`` / ``ort_run_reused``: onnxruntime's ``InferenceSession.run`` with a fresh input
  array each call / the same array every call; ``ort_iobinding``: its IOBinding with inputs and
  outputs bound once, ``run_with_iobinding`` per call; ``ort_run_with_ort_values``:
  ``run_with_ort_values`` with input OrtValues made once;
* ``ortc_run`` / ``ortc_run_reused``: ``Session.run`` likewise; ``ortc_run_nochecks``: the
  reused case with ``set_thread_checks("off")``; ``ortc_run_with_values``: ``run_with_values``
  with input Values made once (compared with ``ort_run_with_ort_values``); ``ortc_bound``:
  ``io_binding()`` bound once to numpy inputs and outputs, ``run_with_binding`` per call;
* ``cffi_bound`` / ``cffi_run`` (the tiny model): the C calls of ortc's bound run / of its
  ``run()`` (inputs' OrtValues from a cache keyed as ortc's, Run, each output's type and shape,
  a copy out, ReleaseValue), through the same cffi functions with nothing around them: what a
  cffi binding making those calls cannot go below (reported beside the tiny targets);
* ``compat_run``: ``ortc.compat.InferenceSession.run`` (onnxruntime's API over ortc) with fresh
  arrays, compared with ``ortc_run`` (its target: at most 5% slower);
* ``ort_run_aa``: onnxruntime's ``run()`` again, measured exactly as ``ort_run`` (the same pool,
  its own ``RUN_SESSIONS`` sessions, in the same shuffled rounds): an A/A pair, two paths that
  differ in nothing but their session objects and their places in the rounds.
  ``ort_iobinding_aa``: the same for the bound path (a second session, its own IOBinding bound
  once). What the A/A ratio strays from 1 is the noise band of the run (below).

Call patterns of real libraries (``PATTERN_MODELS``: the tiny model and the MLP), each timed as
onnxruntime (``ort_``), ortc.compat (``compat_``) and ortc's own API (``ortc_``), the compat and
the ortc path compared with the onnxruntime one (target: at most 1.00x, a tie within the band):

* ``*_values_per_call``: ``OrtValue.ortvalue_from_numpy`` for each input every call, then
  ``run_with_ort_values(None, ...)`` (ortc: ``Value.from_numpy`` and ``run_with_values``);
* ``*_rebind_buffers``: one IOBinding, every call ``bind_input(name, 'cpu', 0, np.float32, shape,
  x.ctypes.data)`` and ``bind_output(name, 'cpu', 0, np.float32, shape, y.ctypes.data)`` (a
  fresh output buffer from a pool too) and ``run_with_iobinding`` (ortc: ``bind_input(name, x)``,
  ``bind_output(name, y)``, ``run_with_binding``);
* ``*_rebind_ortvalues``: OrtValues made once (outside the timing) over each input set and
  output buffer of the pools, every call ``bind_ortvalue_input`` for each input,
  ``bind_ortvalue_output`` for each output and ``run_with_iobinding`` (ortc: Values from
  ``Value.from_numpy``, ``bind_input(name, value)``, ``bind_output(name, value)``);
* ``*_rebind_arrays``: every call ``bind_cpu_input(name, x)``, ``bind_output(name, 'cpu', 0,
  y.dtype, y.shape, y.ctypes.data)`` and ``run_with_iobinding`` (ortc: ``bind_input(name, x)``,
  ``bind_output(name, y)``, the same loop as its ``rebind_buffers``);
* ``*_rebind_alloc_copy``: every call ``bind_cpu_input(name, x)``, ``bind_output(name)`` (ORT
  allocates it), ``run_with_iobinding`` and ``copy_outputs_to_cpu()`` (ortc: ``bind_input``,
  ``bind_output(name)``, ``run_with_binding`` and ``get_outputs(copy=True)``);
* ``*_new_session``: a new session from the model's bytes and its first ``run()``, released at
  the end of the call;
* ``*_make_drop_session``: a new session from the model's bytes, released at once (no run): what
  making and releasing one costs.

The two session patterns have their own, smaller call count per round (a session costs a
millisecond or more). Before timing, each is checked to release its session when the last
reference goes, with the cyclic garbage collector off (else the loop would not time the release).
A pattern that raises (or gives outputs that disagree with ``run()``'s, or keeps its session) is
kept as a failed row: its error is in the output and its targets are judged "failed".

"Fresh" arrays come from a pool of distinct arrays made before timing (so their creation is
not timed) that is cycled through: no two consecutive calls see the same array object. The
streaming model has ``ortc_run``, ``compat_run`` and ``ort_run`` only, each a stream (the state
fed back), and so has the model whose batch size changes per call (each set of the pool its own
batch size); the C floor feeds fixed-shape float32 inputs only.

Also measured: throughput of one session driven by 1 and by 2 threads (C, onnxruntime, ortc)
on every model, and the cold start in fresh interpreters (numpy already imported, bytecode
cached): ``import``, first session, first run, resident memory. ``evaluate_targets`` judges
the run against the project's targets (docs/PERFORMANCE.md); with ``--processes N`` the whole
bench runs in N fresh processes and ``combine_targets`` judges each target over them.

The noise band and the verdicts. In each round the A/A pair gives a ratio; ``aa_band`` takes
their median ``m`` and the 95 % interval of that median by order statistics ``[lo, hi]``, and
the band is ``|m - 1| + (hi - lo) / 2``: how far two identical paths landed apart in this run,
widened by how precisely a median over this many rounds is known. A ratio target ``value <=
limit`` is then "met" when ``value <= limit``, a "tie" when ``limit < value <= limit * (1 +
band)`` (the run cannot tell the ratio from the limit), "missed" otherwise (``verdict_of``).
Each target uses the band of its own kind: the bound A/A pair's for the bound path's targets,
the ``run()`` pair's for every other ratio (the call patterns too); targets with no A/A pair
(thread scaling, cold start, the µs of the thread-rule checks) are met or missed only. Over
several processes (``combine_targets``) the band of a target is the widest of the processes'
bands, and the verdict is the same rule applied to the median of the processes' values.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

if __name__ == "__main__" and not __package__:  # ``python bench/runner.py``: one line, no traceback
    raise SystemExit("bench/runner.py is a module of the bench: run it as `python -m ortc bench "
                     "[options]` (or `make bench`) from a checkout")

from .models import MODEL_KEYS, BenchModel, add_model, all_models  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PATH_LABELS = {
    "c_floor": "C floor (fresh OrtValues)",
    "c_bound": "C floor, bound (RunWithBinding alone)",
    "cffi_bound": "ortc's RunWithBinding call alone, through cffi",
    "cffi_run": "ortc's run() C calls alone, through cffi",
    "ort_run": "onnxruntime run()",
    "ort_run_reused": "onnxruntime run(), same array",
    "ort_iobinding": "onnxruntime IOBinding (bound once)",
    "ort_run_with_ort_values": "onnxruntime run_with_ort_values (OrtValues made once)",
    "ortc_run": "ortc run()",
    "ortc_run_reused": "ortc run(), same array",
    "ortc_run_nochecks": "ortc run(), same array, checks off",
    "ortc_run_with_values": "ortc run_with_values (Values made once)",
    "ortc_bound": "ortc run_with_binding (bound once)",
    "compat_run": "ortc.compat InferenceSession.run()",
    "ort_run_aa": "onnxruntime run(), A/A twin",
    "ort_iobinding_aa": "onnxruntime IOBinding (bound once), A/A twin",
    "ort_values_per_call": "onnxruntime OrtValue per call + run_with_ort_values",
    "compat_values_per_call": "ortc.compat OrtValue per call + run_with_ort_values",
    "ortc_values_per_call": "ortc Value per call + run_with_values",
    "ort_rebind_buffers": "onnxruntime IOBinding rebound per call (pointers)",
    "compat_rebind_buffers": "ortc.compat IOBinding rebound per call (pointers)",
    "ortc_rebind_buffers": "ortc io_binding rebound per call (arrays)",
    "ort_rebind_alloc_copy": "onnxruntime bind_cpu_input + ORT output + copy_outputs_to_cpu",
    "compat_rebind_alloc_copy": "ortc.compat bind_cpu_input + ORT output + copy_outputs_to_cpu",
    "ortc_rebind_alloc_copy": "ortc bind_input + ORT output + get_outputs copied",
    "ort_new_session": "onnxruntime new session from bytes + first run()",
    "compat_new_session": "ortc.compat new session from bytes + first run()",
    "ortc_new_session": "ortc new Session from bytes + first run()",
    "ort_rebind_ortvalues": "onnxruntime IOBinding rebound per call (OrtValues)",
    "compat_rebind_ortvalues": "ortc.compat IOBinding rebound per call (OrtValues)",
    "ortc_rebind_ortvalues": "ortc io_binding rebound per call (Values)",
    "ort_rebind_arrays": "onnxruntime bind_cpu_input + output pointer, per call",
    "compat_rebind_arrays": "ortc.compat bind_cpu_input + output pointer, per call",
    "ortc_rebind_arrays": "ortc bind_input + bind_output of arrays, per call",
    "ort_make_drop_session": "onnxruntime session from bytes, made and dropped",
    "compat_make_drop_session": "ortc.compat session from bytes, made and dropped",
    "ortc_make_drop_session": "ortc Session from bytes, made and dropped",
}
#: the onnxruntime path each ortc path is compared with
ORT_PEER = {
    "ortc_run": "ort_run",
    "ortc_run_reused": "ort_run_reused",
    "ortc_run_nochecks": "ort_run_reused",
    "ortc_run_with_values": "ort_run_with_ort_values",
    "ortc_bound": "ort_iobinding",
    "cffi_bound": "ort_iobinding",
    "cffi_run": "ort_run",
}
#: the call patterns of real libraries, timed on PATTERN_MODELS in each binding
PATTERNS = ("values_per_call", "rebind_buffers", "rebind_ortvalues", "rebind_arrays",
            "rebind_alloc_copy", "new_session", "make_drop_session")
#: the patterns that make a session every call (their own, smaller call count per round)
SESSION_PATTERNS = ("new_session", "make_drop_session")
PATTERN_MODELS = ("tiny", "mlp")
#: each pattern path of ortc.compat and of ortc, and the onnxruntime path it is compared with
PATTERN_PEER = {f"{prefix}_{p}": f"ort_{p}" for p in PATTERNS for prefix in ("compat", "ortc")}
PATTERN_PATHS = frozenset(PATTERN_PEER) | {f"ort_{p}" for p in PATTERNS}
#: each A/A path and the path it is the twin of; the band of each kind (``aa_band``)
AA_PAIRS = {"run": ("ort_run_aa", "ort_run"), "bound": ("ort_iobinding_aa", "ort_iobinding")}
#: the paths whose targets are judged with the bound A/A pair's band (the others: run()'s)
BOUND_PATHS = ("ortc_bound", "cffi_bound", "c_bound")


@dataclass
class Config:
    mode: str
    rounds: int
    round_s: float  # time budget of one path in one round
    min_calls: int
    max_calls: int
    thread_rounds: int
    thread_round_s: float
    cold_start_runs: int

    @staticmethod
    def of(mode: str) -> Config:
        if mode == "smoke":
            return Config(mode, 2, 0.002, 3, 100, 1, 0.005, 1)
        if mode == "quick":
            return Config(mode, 10, 0.01, 3, 3000, 3, 0.05, 3)
        return Config(mode, 60, 0.02, 5, 20000, 12, 0.15, 7)


# -- timing loops ---------------------------------------------------------------------------------
# One function per path, with the call written out inline as a user would (no lambda, no extra
# frame). Each returns the per-call times in ns; the loop's own cost is measured by _t_empty,
# which has the same shape without the call.

_pc = time.perf_counter_ns


def _t_empty(pool: list[Any], mask: int, n: int) -> list[int]:
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        pool[i & mask]
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_run(sess: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        sess.run(None, pool[i & mask])
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_run_with_values(sess: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        sess.run_with_values(None, pool[i & mask])
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_ort_values(sess: Any, names: list[str], pool: list[Any], mask: int, n: int) -> list[int]:
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        sess.run_with_ort_values(names, pool[i & mask])
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_stream(sess: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """The streaming model (bench/models.py vad_model) as a user calls it, once per frame: a
    fresh frame and sample-rate array from the pool, the state the previous call returned.
    (The dict and two lookups, about 0.1 µs, are not in the empty loop; both bindings pay
    them.) Each call of this loop starts a new stream from the pool's zero state."""
    out = [0] * n
    pc = _pc
    state = pool[0]["state"]
    prev = pc()
    for i in range(n):
        f = pool[i & mask]
        prob, state = sess.run(None, {"input": f["input"], "state": state, "sr": f["sr"]})
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_silero(sess: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """Silero VAD (bench/models.py silero_model) streamed as a live-audio application calls it:
    a fresh frame from the pool each call, h and c from the previous call."""
    out = [0] * n
    pc = _pc
    h = c = pool[0]["h"]
    prev = pc()
    for i in range(n):
        prob, h, c = sess.run(None, {"input": pool[i & mask]["input"], "h": h, "c": c})
        t = pc()
        out[i] = t - prev
        prev = t
    return out


#: the loop of each streaming model (one with ``feedback``), written as its users call it
STREAM_LOOPS: dict[str, Callable[[Any, list[Any], int, int], list[int]]] = {
    "vad": _t_stream, "silero": _t_silero}


def loop_for(model: BenchModel) -> Callable[[Any, list[Any], int, int], list[int]]:
    """The timing loop of a model's ``run()`` paths: its stream loop, or the plain one."""
    return STREAM_LOOPS[model.key] if model.feedback else _t_run


def _t_ortc_bound(sess: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        sess.run_with_binding(pool[i & mask])
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_cffi_bound(sess: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """The bound run's one C call as ortc makes it (the cffi function of the RunWithBinding
    slot, no run options) with nothing around it: no guard, no run context, no Ctrl-C wiring,
    no checks. What a bound run through cffi cannot go below."""
    from ortc._ffi import ffi

    out = [0] * n
    pc = _pc
    run_c, sess_ptr, null = sess._api.RunWithBinding, sess._ptr, ffi.NULL
    ptrs = [b._ptr for b in pool]
    prev = pc()
    for i in range(n):
        if run_c(sess_ptr, null, ptrs[i & mask]):
            raise RuntimeError("RunWithBinding failed")  # (its status is left unreleased)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_cffi_run(sess: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """The C calls of ortc's ``run()`` of a plain-tensor model (fresh arrays from the pool, as
    ``ortc_run``), through the same cffi functions, with nothing around them: each input's
    OrtValue from a dict keyed as ortc's value cache is (the buffer, shape and element type),
    Run with ORT allocating the outputs, each output's type and shape in one call, a new array
    and a memmove of its bytes, ReleaseValue. No guard, run context, Ctrl-C wiring or checks
    (a failed status raises, unreleased). What a binding that makes ortc's calls through cffi
    and copies small outputs out cannot go below."""
    import numpy as np

    from ortc._ffi import ffi
    from ortc._numpy_bridge import PLAIN_DTYPES

    api = sess._api
    engine = sess._engine
    run_c, sess_ptr, null = api.Run, sess._ptr, ffi.NULL
    create = api.CreateTensorWithDataAsOrtValue
    shape_of, data_of, release = (api.GetTensorElementTypeAndShapeDataReference,
                                  api.GetTensorMutableData, api.ReleaseValue)
    cpu = engine.cpu_info_ptr
    dtypes = {dt: et for et, dt in PLAIN_DTYPES.items()}
    names = tuple(pool[0])
    in_names = engine.name_array(names)
    out_list = engine.output_list(None)
    out_names, n_out = out_list.names.ptr, out_list.count
    cache: dict[Any, Any] = {}
    keep: list[Any] = []  # the OrtValues made (released when the loop is done)
    elem, dims = ffi.new("ONNXTensorElementDataType*"), ffi.new("int64_t**")
    dims_arg, count, data = ffi.cast("const int64_t**", dims), ffi.new("size_t*"), \
        ffi.new("void**")
    out = [0] * n
    pc = _pc
    try:
        prev = pc()
        for i in range(n):
            feeds = pool[i & mask]
            values = ffi.new("OrtValue*[]", in_names.count)
            for j, name in enumerate(names):
                array = feeds[name]
                buf = ffi.from_buffer(array)
                et = dtypes[array.dtype]
                key = (buf, array.shape, et)
                value = cache.get(key)
                if value is None:
                    made = ffi.new("OrtValue**")
                    if create(cpu, buf, array.nbytes, array.shape, array.ndim, et, made):
                        raise RuntimeError("CreateTensorWithDataAsOrtValue failed")
                    value = cache[(ffi.cast("char*", buf), array.shape, et)] = made[0]
                    keep.append(value)
                values[j] = value
            slots = ffi.new("OrtValue*[]", n_out)
            if run_c(sess_ptr, null, in_names.ptr, values, in_names.count, out_names, n_out,
                     slots):
                raise RuntimeError("Run failed")
            for j in range(n_out):
                raw = slots[j]
                if shape_of(raw, elem, dims_arg, count):
                    raise RuntimeError("GetTensorElementTypeAndShapeDataReference failed")
                dtype = PLAIN_DTYPES[elem[0]]
                shape = tuple(ffi.unpack(dims[0], count[0])) if count[0] else ()
                copy = np.empty(shape, dtype)
                if copy.nbytes:
                    if data_of(raw, data):
                        raise RuntimeError("GetTensorMutableData failed")
                    ffi.memmove(copy, data[0], copy.nbytes)
                release(raw)
            t = pc()
            out[i] = t - prev
            prev = t
    finally:
        for value in keep:
            release(value)
    return out


def _t_ort_bound(sess: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        sess.run_with_iobinding(pool[i & mask])
        t = pc()
        out[i] = t - prev
        prev = t
    return out


# The call patterns of real libraries (PATTERNS). ``ctx`` holds what the caller made once (a
# session, a binding, the class whose constructor is called); the fresh input sets come from
# ``pool`` and, where the pattern binds output memory, the output buffers from a pool beside it.

def _t_values_per_call(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """onnxruntime and ortc.compat: an OrtValue made for each input every call."""
    sess, OrtValue = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        sess.run_with_ort_values(None, {k: OrtValue.ortvalue_from_numpy(x)
                                        for k, x in pool[i & mask].items()})
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_ortc_values_per_call(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    sess, Value = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        sess.run_with_values(None, {k: Value.from_numpy(x) for k, x in pool[i & mask].items()})
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_rebind_buffers(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """onnxruntime and ortc.compat: inputs and outputs bound by address every call (float32)."""
    sess, binding, outs = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        j = i & mask
        for name, x in pool[j].items():
            binding.bind_input(name, "cpu", 0, np.float32, x.shape, x.ctypes.data)
        for name, y in outs[j].items():
            binding.bind_output(name, "cpu", 0, np.float32, y.shape, y.ctypes.data)
        sess.run_with_iobinding(binding)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_ortc_rebind_buffers(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    sess, binding, outs = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        j = i & mask
        for name, x in pool[j].items():
            binding.bind_input(name, x)
        for name, y in outs[j].items():
            binding.bind_output(name, y)
        sess.run_with_binding(binding)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_rebind_ortvalues(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """onnxruntime and ortc.compat: OrtValues made once over each input set and output buffer
    of the pools, bound every call."""
    sess, binding, values, outs = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        j = i & mask
        for name, v in values[j].items():
            binding.bind_ortvalue_input(name, v)
        for name, v in outs[j].items():
            binding.bind_ortvalue_output(name, v)
        sess.run_with_iobinding(binding)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_ortc_rebind_ortvalues(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    sess, binding, values, outs = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        j = i & mask
        for name, v in values[j].items():
            binding.bind_input(name, v)
        for name, v in outs[j].items():
            binding.bind_output(name, v)
        sess.run_with_binding(binding)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_rebind_arrays(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """onnxruntime and ortc.compat: each input bound as an array, each output by the address
    of a buffer, every call. (ortc's own API binds arrays the same way for both: its loop is
    _t_ortc_rebind_buffers.)"""
    sess, binding, outs = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        j = i & mask
        for name, x in pool[j].items():
            binding.bind_cpu_input(name, x)
        for name, y in outs[j].items():
            binding.bind_output(name, "cpu", 0, y.dtype, y.shape, y.ctypes.data)
        sess.run_with_iobinding(binding)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_rebind_alloc_copy(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """onnxruntime and ortc.compat: inputs bound every call, outputs ORT allocates, copied out."""
    sess, binding, out_names = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        for name, x in pool[i & mask].items():
            binding.bind_cpu_input(name, x)
        for name in out_names:
            binding.bind_output(name)
        sess.run_with_iobinding(binding)
        binding.copy_outputs_to_cpu()
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_ortc_rebind_alloc_copy(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """ortc: the outputs copied straight from ORT's memory (get_outputs(copy=True)), as
    copy_outputs_to_cpu gives copies (get_outputs' views are written again by the next run)."""
    sess, binding, out_names = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        for name, x in pool[i & mask].items():
            binding.bind_input(name, x)
        for name in out_names:
            binding.bind_output(name)
        sess.run_with_binding(binding)
        binding.get_outputs(copy=True)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_new_session(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """onnxruntime and ortc.compat: a session made from bytes, its first run, its release (the
    session's last reference goes with the expression, inside the timed call)."""
    InferenceSession, model, so = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, pool[i & mask])
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_ortc_new_session(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    Session, model = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        Session(model, intra_op_num_threads=1).run(None, pool[i & mask])
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_make_drop_session(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    """onnxruntime and ortc.compat: a session made from bytes and released (its last reference
    goes with the expression), no run."""
    InferenceSession, model, so = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        InferenceSession(model, so, providers=["CPUExecutionProvider"])
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _t_ortc_make_drop_session(ctx: Any, pool: list[Any], mask: int, n: int) -> list[int]:
    Session, model = ctx
    out = [0] * n
    pc = _pc
    prev = pc()
    for i in range(n):
        Session(model, intra_op_num_threads=1)
        t = pc()
        out[i] = t - prev
        prev = t
    return out


def _pattern_once(path: str, ctx: Any, feeds: dict[str, Any], outs: dict[str, Any]
                  ) -> list[Any]:
    """One call of a pattern path as its loop makes it, returning the outputs as arrays (to
    check them against run()'s before timing)."""
    pattern = path.split("_", 1)[1]
    native = path.startswith("ortc_")
    if pattern == "values_per_call":
        sess, cls = ctx
        if native:
            return [v.numpy() for v in sess.run_with_values(
                None, {k: cls.from_numpy(x) for k, x in feeds.items()})]
        return [v.numpy() for v in sess.run_with_ort_values(
            None, {k: cls.ortvalue_from_numpy(x) for k, x in feeds.items()})]
    if pattern == "rebind_ortvalues":
        sess, binding, values, out_values = ctx
        for name, v in values[0].items():
            (binding.bind_input if native else binding.bind_ortvalue_input)(name, v)
        for name, v in out_values[0].items():
            (binding.bind_output if native else binding.bind_ortvalue_output)(name, v)
        (sess.run_with_binding if native else sess.run_with_iobinding)(binding)
        # read through the values the caller bound, as a library reads them
        return [v.numpy().copy() for v in out_values[0].values()]
    if pattern in ("rebind_buffers", "rebind_arrays"):
        sess, binding, _ = ctx
        for name, x in feeds.items():
            if native:
                binding.bind_input(name, x)
            elif pattern == "rebind_arrays":
                binding.bind_cpu_input(name, x)
            else:
                binding.bind_input(name, "cpu", 0, np.float32, x.shape, x.ctypes.data)
        for name, y in outs.items():
            if native:
                binding.bind_output(name, y)
            else:
                binding.bind_output(name, "cpu", 0, np.float32 if pattern == "rebind_buffers"
                                    else y.dtype, y.shape, y.ctypes.data)
        if native:
            sess.run_with_binding(binding)
        else:
            sess.run_with_iobinding(binding)
        return [y.copy() for y in outs.values()]
    if pattern == "rebind_alloc_copy":
        sess, binding, out_names = ctx
        for name, x in feeds.items():
            (binding.bind_input if native else binding.bind_cpu_input)(name, x)
        for name in out_names:
            binding.bind_output(name)
        if native:
            sess.run_with_binding(binding)
            return list(binding.get_outputs(copy=True))
        sess.run_with_iobinding(binding)
        return list(binding.copy_outputs_to_cpu())
    # new_session and make_drop_session: a session made as the loop makes it
    if native:
        Session, model = ctx

        def make() -> Any:
            return Session(model, intra_op_num_threads=1)
    else:
        InferenceSession, model, so = ctx

        def make() -> Any:
            return InferenceSession(model, so, providers=["CPUExecutionProvider"])
    # the loop times the release too: the session must go with its last reference, not later
    # in the cyclic garbage collector (which would free it in some other path's timed calls)
    _check_released(make, run=None if pattern == "make_drop_session" else feeds)
    return list(make().run(None, feeds))


def _check_released(make: Callable[[], Any], run: dict[str, Any] | None) -> None:
    """A session made by ``make`` (and run on ``run``'s feeds, when given) is released when its
    last reference goes, with the cyclic garbage collector off; AssertionError otherwise."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        sess = make()
        if run is not None:
            sess.run(None, run)
        ref = weakref.ref(sess)
        del sess
        if ref() is not None:
            raise AssertionError("the session outlives its last reference (only the cyclic "
                                 "garbage collector frees it), so the loop would not time its "
                                 "release")
    finally:
        if enabled:
            gc.enable()


#: each pattern's loop, for onnxruntime's API (onnxruntime and ortc.compat) and for ortc's
PATTERN_LOOPS: dict[str, tuple[Callable[..., list[int]], Callable[..., list[int]]]] = {
    "values_per_call": (_t_values_per_call, _t_ortc_values_per_call),
    "rebind_buffers": (_t_rebind_buffers, _t_ortc_rebind_buffers),
    "rebind_alloc_copy": (_t_rebind_alloc_copy, _t_ortc_rebind_alloc_copy),
    "new_session": (_t_new_session, _t_ortc_new_session),
    "rebind_ortvalues": (_t_rebind_ortvalues, _t_ortc_rebind_ortvalues),
    # (ortc binds an array as it binds a pointer's memory: the same loop as rebind_buffers)
    "rebind_arrays": (_t_rebind_arrays, _t_ortc_rebind_buffers),
    "make_drop_session": (_t_make_drop_session, _t_ortc_make_drop_session),
}


# -- the C floor ----------------------------------------------------------------------------------

def build_floor(workdir: str, library_path: str) -> tuple[str | None, str]:
    """Compile bench/floor.c into a shared library; returns (its path or None, message)."""
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None, "no C compiler (gcc) found"
    # The library's SONAME (libonnxruntime.so.1) may not exist beside the wheel's versioned
    # file: link through a symlink of that name in the build folder, found there at run time.
    # (In this process the loader then finds the copy ortc has already opened: one ORT.)
    link_dir = os.path.join(workdir, "lib")
    os.makedirs(link_dir, exist_ok=True)
    names = {os.path.basename(library_path)}
    if sys.platform.startswith("linux"):
        names |= {"libonnxruntime.so.1", "libonnxruntime.so"}
    for name in names:
        dst = os.path.join(link_dir, name)
        if not os.path.exists(dst):
            os.symlink(os.path.realpath(library_path), dst)
    out = os.path.join(workdir, "libortcfloor.so")
    cmd = [cc, "-O2", "-std=c11", "-shared", "-fPIC", "-I", os.path.join(ROOT, "include"),
           os.path.join(HERE, "floor.c"), "-o", out,
           os.path.join(link_dir, os.path.basename(library_path)),
           f"-Wl,-rpath,{link_dir}", "-lpthread"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"compiling the C floor failed: {proc.stderr.strip()[:2000]}"
    return out, " ".join(cmd)


class Floor:
    """The C floor for one model: bench/floor.c as a shared library, called through ctypes in
    this process (ctypes releases the GIL for the call), so that it is scheduled like the
    Python paths."""

    _libs: dict[str, Any] = {}

    def __init__(self, lib_path: str, model_path: str, model: BenchModel, threads: int = 1) -> None:
        import ctypes as C

        lib = self._libs.get(lib_path)
        if lib is None:
            lib = C.CDLL(lib_path)
            lib.floor_open.restype = C.c_void_p
            lib.floor_open.argtypes = [C.c_char_p, C.c_int, C.c_int, C.POINTER(C.c_char_p),
                                       C.POINTER(C.c_int), C.POINTER(C.c_longlong), C.c_int,
                                       C.POINTER(C.c_char_p)]
            lib.floor_error.restype = C.c_char_p
            lib.floor_error.argtypes = [C.c_void_p]
            for name in ("floor_lat", "floor_cal", "floor_bound"):
                getattr(lib, name).restype = C.c_int
                getattr(lib, name).argtypes = [C.c_void_p, C.c_long, C.POINTER(C.c_longlong)]
            lib.floor_tput.restype = C.c_longlong
            lib.floor_tput.argtypes = [C.c_void_p, C.c_int, C.c_long]
            lib.floor_close.restype = None
            lib.floor_close.argtypes = [C.c_void_p]
            self._libs[lib_path] = lib
        self._C = C
        self.lib = lib
        names = [n.encode() for n in model.inputs]
        ranks = [len(s) for s in model.inputs.values()]
        dims = [d for s in model.inputs.values() for d in s]
        outs = [n.encode() for n in model.outputs]
        self.handle = lib.floor_open(
            os.fsencode(model_path), threads, len(names), (C.c_char_p * max(1, len(names)))(*names),
            (C.c_int * max(1, len(ranks)))(*ranks), (C.c_longlong * max(1, len(dims)))(*dims),
            len(outs), (C.c_char_p * max(1, len(outs)))(*outs))
        self._check(0)
        self._buf = (C.c_longlong * 1)()

    def _check(self, rc: int) -> None:
        msg = self.lib.floor_error(self.handle)
        if rc or msg:
            raise RuntimeError(f"C floor: {msg.decode(errors='replace') or rc}")

    def _timed(self, fn: Any, n: int) -> list[int]:
        if len(self._buf) < n:
            self._buf = (self._C.c_longlong * n)()
        self._check(fn(self.handle, n, self._buf))
        return self._buf[:n]

    def lat(self, n: int) -> list[int]:
        return self._timed(self.lib.floor_lat, n)

    def cal(self, n: int) -> list[int]:
        return self._timed(self.lib.floor_cal, n)

    def bound(self, n: int) -> list[int]:
        """RunWithBinding alone, inputs and outputs bound once (floor.c ``floor_bound``)."""
        return self._timed(self.lib.floor_bound, n)

    def tput(self, threads: int, n: int) -> float:
        """Calls per second of ``threads`` threads each making ``n`` calls."""
        ns = self.lib.floor_tput(self.handle, threads, n)
        if ns < 0:
            self._check(-1)
        return float(threads * n / (ns * 1e-9))

    def close(self) -> None:
        if self.handle:
            self.lib.floor_close(self.handle)
            self.handle = None


# -- statistics -----------------------------------------------------------------------------------

def _summary(samples: list[float], round_medians: list[float]) -> dict[str, Any]:
    arr = np.asarray(samples, dtype=np.float64)
    return {
        "median_us": float(np.median(arr)) / 1e3,
        "p99_us": float(np.percentile(arr, 99)) / 1e3,
        "mean_us": float(arr.mean()) / 1e3,
        "calls": int(arr.size),
        "round_median_min_us": min(round_medians) / 1e3,
        "round_median_max_us": max(round_medians) / 1e3,
        "round_medians_us": [x / 1e3 for x in round_medians],
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return a / b


def _median_interval(sorted_xs: list[float]) -> tuple[float, float]:
    """The 95 % interval of the median of ``sorted_xs`` by order statistics (the ranks
    n/2 -+ 1.96 sqrt(n)/2; with few values, their range)."""
    n = len(sorted_xs)
    half = 1.96 * n ** 0.5 / 2
    lo = max(0, math.floor(n / 2 - half) - 1)  # 1-based ranks, made indices
    hi = min(n - 1, math.ceil(1 + n / 2 + half) - 1)
    return sorted_xs[lo], sorted_xs[hi]


def aa_band(paths: dict[str, Any], aa: str, ref: str) -> dict[str, Any] | None:
    """The noise band an A/A pair gives (module docstring): ``ratio`` the median over rounds of
    ``aa``'s round median over ``ref``'s, ``interval`` that median's 95 % interval, ``band``
    ``|ratio - 1|`` plus the interval's half width. None when either path is missing."""
    if aa not in paths or ref not in paths:
        return None
    ratios = sorted(x / y for x, y in zip(paths[aa]["round_medians_us"],
                                          paths[ref]["round_medians_us"]) if y > 0)
    if not ratios:
        return None
    median = float(statistics.median(ratios))
    lo, hi = _median_interval(ratios)
    return {"paths": [aa, ref], "ratio": median, "interval": [lo, hi],
            "band": abs(median - 1) + (hi - lo) / 2, "rounds": len(ratios)}


def verdict_of(value: float | None, limit: float, op: str, band: float | None = None
               ) -> str | None:
    """"met", "tie" or "missed" (None: not measured). ``<=``: met when ``value <= limit``, a tie
    when ``value <= limit * (1 + band)``; ``>=`` mirrored (``value >= limit * (1 - band)``).
    No band: met or missed."""
    if value is None:
        return None
    if value <= limit if op == "<=" else value >= limit:
        return "met"
    if band is not None and (value <= limit * (1 + band) if op == "<="
                             else value >= limit * (1 - band)):
        return "tie"
    return "missed"


# -- one model ------------------------------------------------------------------------------------

def _pool_size(model: BenchModel) -> int:
    """How many distinct input sets the "fresh" pool holds: up to 64, about 1 MB in all."""
    nbytes = model.input_bytes() or 4
    size = 2
    while size < 64 and (size * 2) * nbytes <= (1 << 20):
        size *= 2
    return size


def _describe_io(model: BenchModel, sess: Any, outputs: dict[str, Any]) -> dict[str, Any]:
    """What the ortc session reports of the model's inputs and outputs (dtype, shape known
    before the run: ints, symbolic names or None) and what a run returned, for the record and
    for the tests."""
    def dims(shape: Any) -> Any:
        return None if shape is None else [d if isinstance(d, (int, str)) else None
                                           for d in shape]

    return {
        "inputs": {a.name: {"dtype": str(a.dtype), "shape": dims(a.shape),
                            "declared_dtype": str(model.dtype(a.name))} for a in sess.inputs},
        "outputs": {a.name: {"dtype": str(a.dtype), "shape": dims(a.shape),
                             "declared_dtype": str(model.dtype(a.name)),
                             "static_shape": a.shape is not None
                             and all(isinstance(d, int) for d in a.shape),
                             "run_dtype": str(outputs[a.name].dtype),
                             "run_shape": list(outputs[a.name].shape)}
                    for a in sess.outputs},
    }


def _check_agree(model: BenchModel, ref: list[Any], got: list[Any]) -> None:
    """The two bindings' outputs agree (a benchmark of wrong answers measures nothing)."""
    for name, r, g in zip(model.outputs, ref, got):
        if g.dtype != r.dtype or g.shape != r.shape:
            raise AssertionError(f"{model.key}: output {name}: ortc gave {g.dtype} {g.shape}, "
                                 f"onnxruntime {r.dtype} {r.shape}")
        if r.dtype.kind == "f":
            tol = 1e-2 if r.dtype == np.float16 else 1e-4
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol / 10, err_msg=name)
        else:
            np.testing.assert_array_equal(g, r, err_msg=name)


def _stream(model: BenchModel, sess: Any, feeds: list[dict[str, Any]]) -> list[Any]:
    """A streaming model's outputs after a few frames, its state fed back."""
    carried = {inp: feeds[0][inp] for inp in model.feedback.values()}
    out: list[Any] = []
    for f in feeds:
        out = sess.run(None, {**f, **carried})
        named = dict(zip(model.outputs, out))
        carried = {inp: named[name] for name, inp in model.feedback.items()}
    return list(out)


#: sessions per binding behind each ``run()`` path, taken in turn, one per round: sessions of
#: one model differ in their run() time by more than the gaps judged here (the VAD-like model:
#: 2-4 % between four sessions of one binding in one process, a different spread in each
#: process; bench/bench_sessions.py), so one session per binding made the ratio of a
#: compute-bound row a draw between two sessions' luck
RUN_SESSIONS = 3


def _in_turn(loop: Callable[..., list[int]], sessions: list[Any], pool: list[Any], mask: int
             ) -> Callable[[int], list[int]]:
    """A path timing ``loop`` on each of ``sessions`` in turn, one call of the path each; every
    session has run a few calls first (its caches filled, its buffers allocated)."""
    for s in sessions:
        loop(s, pool, mask, 3)
    turn = itertools.cycle(sessions)
    return lambda n: loop(next(turn), pool, mask, n)


def bench_model(model: BenchModel, model_path: str, cfg: Config, floor_lib: str | None,
                ort: Any, ortc: Any, log: Callable[[str], None]) -> dict[str, Any]:
    pool_n = _pool_size(model)
    mask = pool_n - 1
    fresh = [model.feeds(seed=i) for i in range(pool_n)]
    same = [fresh[0]] * pool_n
    outputs = {}
    stream = bool(model.feedback)
    loop = loop_for(model)
    # a stream's later calls depend on the earlier ones, and a model whose shapes change per
    # call has no one shape to bind: both take run() only, as their users call them
    run_only = stream or model.shapes is not None

    # ortc
    sessions = [ortc.Session(model.model, intra_op_num_threads=1) for _ in range(RUN_SESSIONS)]
    sess = sessions[0]  # every other ortc path's, and the thread runs'
    for name, arr in zip(model.outputs, sess.run(None, fresh[0])):
        outputs[name] = arr
    paths: dict[str, Callable[[int], list[int]]] = {
        "ortc_run": _in_turn(loop, sessions, fresh, mask)}
    if not run_only:
        values = [{k: ortc.Value.from_numpy(v) for k, v in fresh[0].items()}] * pool_n
        binding = sess.io_binding()
        for k, v in fresh[0].items():
            binding.bind_input(k, v)
        for name, arr in outputs.items():
            binding.bind_output(name, np.empty_like(arr))
        bindings = [binding] * pool_n

        def nochecks(n: int) -> list[int]:
            old = ortc.set_thread_checks("off")
            try:
                return _t_run(sess, same, mask, n)
            finally:
                ortc.set_thread_checks(old)

        paths.update({
            "ortc_run_reused": lambda n: _t_run(sess, same, mask, n),
            "ortc_run_nochecks": nochecks,
            "ortc_run_with_values": lambda n: _t_run_with_values(sess, values, mask, n),
            "ortc_bound": lambda n: _t_ortc_bound(sess, bindings, mask, n),
            "cffi_bound": lambda n: _t_cffi_bound(sess, bindings, mask, n),
        })
        if model.key == "tiny":
            paths["cffi_run"] = lambda n: _t_cffi_run(sess, fresh, mask, n)

    # ortc.compat: onnxruntime's API over ortc
    import ortc.compat as compat

    cso = compat.SessionOptions()
    cso.intra_op_num_threads = 1
    csessions = [compat.InferenceSession(model.model, cso, providers=["CPUExecutionProvider"])
                 for _ in range(RUN_SESSIONS)]
    paths["compat_run"] = _in_turn(loop, csessions, fresh, mask)

    # onnxruntime
    osess = None
    osessions: list[Any] | None = None
    so = None
    keep: list[Any] = []  # output buffers bound by address: alive while the paths run
    if ort is not None:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        osessions = [ort.InferenceSession(model.model, so, providers=["CPUExecutionProvider"])
                     for _ in range(RUN_SESSIONS)]
        osess = osessions[0]
        paths["ort_run"] = _in_turn(loop, osessions, fresh, mask)
        # the A/A twin: the same path on sessions of its own (module docstring)
        aa_sessions = [ort.InferenceSession(model.model, so, providers=["CPUExecutionProvider"])
                       for _ in range(RUN_SESSIONS)]
        paths["ort_run_aa"] = _in_turn(loop, aa_sessions, fresh, mask)
        if stream:
            _check_agree(model, _stream(model, osess, fresh[:4]),
                         _stream(model, sess, fresh[:4]))
        elif run_only:
            for f in fresh[:4]:
                _check_agree(model, osess.run(None, f), sess.run(None, f))
        else:
            io = _ort_bound_once(osess, fresh[0], outputs, keep)
            ios = [io] * pool_n
            aa_sess = aa_sessions[0]
            ios_aa = [_ort_bound_once(aa_sess, fresh[0], outputs, keep)] * pool_n
            ort_values = [{k: ort.OrtValue.ortvalue_from_numpy(v)
                           for k, v in fresh[0].items()}] * pool_n
            out_names = list(model.outputs)
            paths["ort_run_reused"] = lambda n: _t_run(osess, same, mask, n)
            paths["ort_iobinding"] = lambda n: _t_ort_bound(osess, ios, mask, n)
            paths["ort_iobinding_aa"] = lambda n: _t_ort_bound(aa_sess, ios_aa, mask, n)
            paths["ort_run_with_ort_values"] = lambda n: _t_ort_values(osess, out_names,
                                                                       ort_values, mask, n)
            _check_agree(model, osess.run(None, fresh[1 % pool_n]),
                         sess.run(None, fresh[1 % pool_n]))

    failed: dict[str, str] = {}
    if model.key in PATTERN_MODELS and not run_only:
        apis: list[tuple[str, Any, list[Any], Any]] = [("ortc", ortc, sessions, None),
                                                      ("compat", compat, csessions, cso)]
        if osessions is not None:
            apis.insert(0, ("ort", ort, osessions, so))
        paths.update(_pattern_paths(model, apis, fresh, mask, outputs, failed))

    floor = None
    if floor_lib is not None and model.floor_feeds:
        floor = Floor(floor_lib, model_path, model)
        paths["c_floor"] = floor.lat
        if not run_only:
            paths["c_bound"] = floor.bound

    try:
        # warm up every path, then size the rounds from the slowest warm path of each group
        # (the call patterns and the new sessions have their own: they would shrink the other
        # paths' calls, and a new session costs a millisecond or more)
        est: dict[str, float] = {}
        for name, fn in list(paths.items()):
            try:
                fn(max(3, cfg.min_calls))
                t = float(np.median(fn(max(5, cfg.min_calls)))) * 1e-9
            except Exception as err:  # noqa: BLE001 - a pattern that fails is a failed row
                if name not in PATTERN_PATHS:
                    raise
                failed[name] = _error_text(err)
                del paths[name]
                continue
            est[_size_group(name)] = max(est.get(_size_group(name), 0.0), t)
        calls = {g: int(min(cfg.max_calls, max(cfg.min_calls, cfg.round_s / max(e, 1e-9))))
                 for g, e in est.items()}
        n = calls.get("paths", cfg.min_calls)
        py_cal = float(np.median(_t_empty(fresh, mask, 20000)))
        c_cal = float(np.median(floor.cal(20000))) if floor is not None else 0.0
        order = list(paths)
        samples: dict[str, list[float]] = {k: [] for k in order}
        medians: dict[str, list[float]] = {k: [] for k in order}
        gc.collect()
        # Each round in its own shuffled order (seeded: a rerun repeats it), so that no path
        # always runs right after the same other one, as in a rotated order: what ran just
        # before leaves the caches in its state, a bias the pairing per round cannot cancel.
        shuffle = random.Random(f"{model.key}:{cfg.rounds}").shuffle
        for r in range(cfg.rounds):
            round_order = list(order)
            shuffle(round_order)
            for name in round_order:
                raw = paths[name](calls[_size_group(name)])
                cal = c_cal if name.startswith("c_") else py_cal
                adj = [max(0.0, x - cal) for x in raw]
                samples[name] += adj
                medians[name].append(statistics.median(adj))
        res: dict[str, Any] = {
            "label": model.label,
            "note": model.note,
            "inputs": {k: list(v) for k, v in model.inputs.items()},
            "io": _describe_io(model, sess, outputs),
            "c_floor": "measured" if floor is not None else
                       ("not built" if floor_lib is None else
                        "not applicable (non-float32 inputs or state carried between calls)"),
            "calls_per_round": n,
            "rounds": cfg.rounds,
            "fresh_pool": pool_n,
            "timer_overhead_ns": {"python": py_cal, "c": c_cal},
            "paths": {k: dict(_summary(samples[k], medians[k]),
                              calls_per_round=calls[_size_group(k)]) for k in order},
            "failed": failed,
        }
    finally:
        if floor is not None:
            floor.close()
    log_line = ", ".join(f"{k} {v['median_us']:.2f}" for k, v in res["paths"].items())
    log(f"  {model.label}: {n} calls x {cfg.rounds} rounds; {log_line}")
    for name, error in failed.items():
        log(f"  {model.label}: {name} FAILED: {error}")
    res["ratios"] = _model_ratios(res["paths"])
    res["noise"] = {kind: aa_band(res["paths"], *pair) for kind, pair in AA_PAIRS.items()}
    # keep the sessions for the thread runs
    res["_sessions"] = (sessions, osessions)
    return res


def _ort_bound_once(osess: Any, feeds: dict[str, Any], outputs: dict[str, Any],
                    keep: list[Any]) -> Any:
    """An onnxruntime IOBinding of ``osess`` with ``feeds`` bound and each output bound to a
    new array shaped as ``outputs``' (by address: ``keep`` holds the arrays)."""
    io = osess.io_binding()
    for k, v in feeds.items():
        io.bind_cpu_input(k, v)
    for name, arr in outputs.items():
        buf = np.empty_like(arr)
        keep.append(buf)
        io.bind_output(name, "cpu", 0, buf.dtype, list(buf.shape), buf.ctypes.data)
    return io


def _error_text(err: BaseException) -> str:
    """A failed row's error on one line: its class and message."""
    return " ".join(f"{type(err).__name__}: {err}".split())


def _size_group(path: str) -> str:
    """The paths whose calls per round are sized together (bench_model)."""
    if path in PATTERN_PATHS:
        return "sessions" if path.split("_", 1)[1] in SESSION_PATTERNS else "patterns"
    return "paths"


def _pattern_contexts(prefix: str, pattern: str, mod: Any, sessions: list[Any], so: Any,
                      model: BenchModel, fresh: list[dict[str, Any]],
                      out_pool: list[dict[str, Any]]) -> list[Any]:
    """What a pattern's loop gets for each session it is taken on in turn (PATTERN_LOOPS)."""
    native = prefix == "ortc"
    if pattern in SESSION_PATTERNS:
        return [(mod.Session, model.model)] if native else [(mod.InferenceSession, model.model,
                                                             so)]
    if pattern == "values_per_call":
        return [(s, mod.Value if native else mod.OrtValue) for s in sessions]
    if pattern in ("rebind_buffers", "rebind_arrays"):
        return [(s, s.io_binding(), out_pool) for s in sessions]
    if pattern == "rebind_ortvalues":
        # made once, outside the timing, over the pools' arrays; each binding its own (ortc's
        # binding holds a Value bound as an output until it is rebound)
        make = mod.Value.from_numpy if native else mod.OrtValue.ortvalue_from_numpy
        return [(s, s.io_binding(), [{k: make(x) for k, x in f.items()} for f in fresh],
                 [{k: make(y) for k, y in o.items()} for o in out_pool]) for s in sessions]
    return [(s, s.io_binding(), list(model.outputs)) for s in sessions]


def _pattern_paths(model: BenchModel, apis: list[tuple[str, Any, list[Any], Any]],
                   fresh: list[dict[str, Any]], mask: int, outputs: dict[str, Any],
                   failed: dict[str, str]) -> dict[str, Callable[[int], list[int]]]:
    """The call-pattern paths of each API in ``apis`` (prefix, module, its run() sessions, its
    session options), each on those sessions in turn. A pattern whose set-up or first call
    raises, or whose outputs disagree with run()'s, goes to ``failed`` (its error) instead."""
    ref = [outputs[name] for name in model.outputs]
    # a fresh output buffer for every input set of the pool, for the patterns that bind them
    out_pool = [{name: np.empty_like(arr) for name, arr in outputs.items()} for _ in fresh]
    paths: dict[str, Callable[[int], list[int]]] = {}
    for prefix, mod, sessions, so in apis:
        for pattern in PATTERNS:
            name = f"{prefix}_{pattern}"
            try:
                contexts = _pattern_contexts(prefix, pattern, mod, sessions, so, model, fresh,
                                             out_pool)
                got = _pattern_once(name, contexts[0], fresh[0], out_pool[0])
                try:
                    _check_agree(model, ref, got)
                except AssertionError as err:
                    raise AssertionError(f"its outputs differ from run()'s: {err}") from None
                paths[name] = _in_turn(PATTERN_LOOPS[pattern][prefix == "ortc"], contexts,
                                       fresh, mask)
            except Exception as err:  # noqa: BLE001 - kept as a failed row, with its error
                failed[name] = _error_text(err)
    return paths


def _paired(paths: dict[str, Any], a: str, b: str, op: str = "ratio") -> float | None:
    """Median over rounds of (a's round median / b's round median), or of their difference in
    µs: both paths ran back to back in every round, so drift of the machine cancels."""
    if a not in paths or b not in paths:
        return None
    ra, rb = paths[a]["round_medians_us"], paths[b]["round_medians_us"]
    if op == "ratio":
        return float(statistics.median(x / y for x, y in zip(ra, rb) if y > 0))
    return float(statistics.median(x - y for x, y in zip(ra, rb)))


def _model_ratios(paths: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in ORT_PEER:
        if k in paths:
            out[k] = {"vs_onnxruntime": _paired(paths, k, ORT_PEER[k]),
                      "vs_c_floor": _paired(paths, k, "c_floor")}
    for k in ("ort_run", "ort_run_reused", "ort_iobinding", "ort_run_with_ort_values"):
        if k in paths:
            out[k] = {"vs_c_floor": _paired(paths, k, "c_floor")}
    if "c_bound" in paths:
        out["c_bound"] = {"vs_onnxruntime": _paired(paths, "c_bound", "ort_iobinding"),
                          "vs_c_floor": _paired(paths, "c_bound", "c_floor")}
    if "compat_run" in paths:
        out["compat_run"] = {"vs_ortc": _paired(paths, "compat_run", "ortc_run"),
                             "vs_c_floor": _paired(paths, "compat_run", "c_floor")}
    for aa, ref in AA_PAIRS.values():  # the A/A ratio, in the column of the others
        if aa in paths:
            out[aa] = {"vs_onnxruntime": _paired(paths, aa, ref)}
    for k, peer in PATTERN_PEER.items():
        if k in paths:
            out[k] = {"vs_onnxruntime": _paired(paths, k, peer)}
    return out


# -- threads --------------------------------------------------------------------------------------

def _py_tput(sess: Any, pools: list[list[dict[str, Any]]], threads: int, n: int,
             loop: Callable[[Any, list[Any], int, int], list[int]] = _t_run) -> float:
    """Calls per second of ``threads`` Python threads each calling sess.run ``n`` times over
    its own pool of feeds (of a power-of-two length; a streaming model: each thread its own
    stream). Each thread makes one call before the clock starts: a new thread's first run can
    take several ms more (seen on squeezenet in both bindings, against 4.5 ms a call and about
    30 calls a thread in a round), a slow start that fell on either measurement at random."""
    barrier = threading.Barrier(threads + 1)

    def work(pool: list[dict[str, Any]]) -> None:
        loop(sess, pool, len(pool) - 1, 1)
        barrier.wait()
        loop(sess, pool, len(pool) - 1, n)

    ts = [threading.Thread(target=work, args=(pools[i],)) for i in range(threads)]
    for t in ts:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    return threads * n / (time.perf_counter() - t0)


def bench_threads(model: BenchModel, model_path: str, res: dict[str, Any], cfg: Config,
                  floor_lib: str | None, log: Callable[[str], None]) -> dict[str, Any]:
    # the run() paths' sessions, one per round in turn (RUN_SESSIONS): one and two threads on
    # the same session back to back, so each round's ratio compares like with like
    sessions, osessions = res["_sessions"]
    # each thread its own feeds; shapes that change per call: a pool of them per thread
    per_thread = 16 if model.shapes is not None else 1
    feeds = [[model.feeds(seed=100 + per_thread * i + j) for j in range(per_thread)]
             for i in range(2)]
    est = max(v["median_us"] for k, v in res["paths"].items() if k not in PATTERN_PATHS) * 1e-6
    n = int(max(cfg.min_calls, min(50000, cfg.thread_round_s / max(est, 1e-9))))
    loop = loop_for(model)
    runners: dict[str, Callable[[int, int], float]] = {
        "ortc": lambda t, r: _py_tput(sessions[r % len(sessions)], feeds, t, n, loop)}
    if osessions is not None:
        runners["onnxruntime"] = lambda t, r: _py_tput(osessions[r % len(osessions)], feeds, t,
                                                       n, loop)
    floor = (Floor(floor_lib, model_path, model)
             if floor_lib is not None and model.floor_feeds else None)
    try:
        if floor is not None:
            runners["c"] = lambda t, r: floor.tput(t, n)
        for name, fn in runners.items():  # warm the threads' first calls, on every session
            for r in range(1 if name == "c" else RUN_SESSIONS):
                fn(1, r), fn(2, r)
        got: dict[str, dict[int, list[float]]] = {k: {1: [], 2: []} for k in runners}
        for r in range(cfg.thread_rounds):
            names = list(runners)
            k = r % len(names)
            for name in names[k:] + names[:k]:
                for t in ((1, 2) if r % 2 == 0 else (2, 1)):
                    got[name][t].append(runners[name](t, r))
    finally:
        if floor is not None:
            floor.close()
    out: dict[str, Any] = {"calls_per_thread": n, "rounds": cfg.thread_rounds}
    for name, by in got.items():
        one, two = statistics.median(by[1]), statistics.median(by[2])
        out[name] = {"calls_per_s_1": one, "calls_per_s_2": two,
                     # paired per round (1 and 2 threads ran back to back), like the latencies
                     "scaling": statistics.median(b / a for a, b in zip(by[1], by[2]))}
    if "onnxruntime" in got:
        # what two threads get done, ortc over onnxruntime, paired per round (reported, not a
        # target: the scaling targets divide by each binding's own one-thread figure, so the
        # binding with less Python per call scales less on the GIL-bound rows)
        out["ortc"]["vs_onnxruntime_2"] = statistics.median(
            a / b for a, b in zip(got["ortc"][2], got["onnxruntime"][2]))
    log(f"  {model.label} threads 1->2: " + ", ".join(
        f"{k} x{out[k]['scaling']:.2f}" for k in got))
    return out


# -- cold start: import, first session, first run -------------------------------------------------
# The one place this is measured (bench/bench_startup.py prints it on its own).

_PROBE = r"""
import json, os, sys, time
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")
tn = time.perf_counter()
import numpy as np
t0 = time.perf_counter()
c0 = time.process_time()
r0 = rss()
mod, path, feed = sys.argv[1], sys.argv[2], sys.argv[3] == "run"
if mod == "ortc":
    import ortc
    t1 = time.perf_counter()
    r1 = rss()
    s = ortc.Session(path)
else:
    import onnxruntime
    t1 = time.perf_counter()
    r1 = rss()
    s = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
t2 = time.perf_counter()
r2 = rss()
if feed:
    s.run(None, {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})
t3 = time.perf_counter()
c3 = time.process_time()
print(json.dumps({"numpy_ms": (t0 - tn) * 1e3, "import_ms": (t1 - t0) * 1e3,
                  "session_ms": (t2 - t1) * 1e3, "first_run_ms": (t3 - t2) * 1e3,
                  "total_ms": (t3 - t0) * 1e3, "cpu_ms": (c3 - c0) * 1e3, "rss_numpy_mib": r0,
                  "rss_after_import_mib": r1, "rss_after_session_mib": r2,
                  "modules": len(sys.modules)}))
"""

#: the figures of one fresh interpreter, in the order the tables show them
COLD_KEYS = ("import_ms", "session_ms", "first_run_ms", "total_ms", "cpu_ms", "numpy_ms",
             "process_ms")


def _env_with_root(root: str) -> dict[str, str]:
    """This process's environment with ``root`` first on PYTHONPATH (a child then imports the
    ortc and bench/ of that tree)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def cold_start_env(workdir: str, root: str | None = ROOT) -> dict[str, str]:
    """The children's environment: ``root`` first on PYTHONPATH (None: the caller's
    PYTHONPATH and working folder pick the ortc), and bytecode cached for both packages, as
    after a pip install (PYTHONDONTWRITEBYTECODE would have ortc, run from its source tree,
    compile every module on every import while onnxruntime's wheel ships .pyc): the warm-up
    start writes it into a private cache."""
    env = _env_with_root(root) if root is not None else dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # The same ORT work in both bindings: ORT's telemetry off (ortc's default, ortc/env.py;
    # onnxruntime's default starts it, about 3 ms of its import). Set, not inherited: a parent
    # that created an ortc env has it set already, any other parent may not.
    env["ORT_DISABLE_TELEMETRY"] = "1"
    # numpy's OpenBLAS starts a thread per core at import, and they spin (sched_yield) for about
    # 0.1 s before they sleep: the whole measured span. On two cores they took a third of the
    # CPU samples (perf) and swung the paired ratio between 1.05 and 1.24 from one run to the
    # next; with one BLAS thread both children's CPU time equals their wall time and three runs
    # agreed within 0.01. Neither binding calls BLAS here.
    env["OPENBLAS_NUM_THREADS"] = "1"
    env["PYTHONPYCACHEPREFIX"] = os.path.join(workdir, "pycache")
    return env


def _probe(env: dict[str, str], mod: str, path: str, run: bool = True) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _PROBE, mod, path, "run" if run else "norun"],
                          capture_output=True, text=True, env=env, timeout=300)
    wall = (time.perf_counter() - t0) * 1e3
    if proc.returncode != 0:
        raise RuntimeError(f"cold-start probe for {mod} failed: {proc.stderr[-2000:]}")
    return dict(json.loads(proc.stdout.splitlines()[-1]), process_ms=wall)


def bench_cold_start(runs: int, tiny_path: str, big_path: str | None, mods: list[str],
                     env: dict[str, str], warm: bool, log: Callable[[str], None]
                     ) -> dict[str, Any]:
    """Cold start of each binding in ``runs`` fresh interpreters each, interleaved (numpy
    already imported when the clock starts): ``import``, the first session on the tiny Add
    model (default options, as a user's first line), its first run, and their sum; medians.
    ``ratio_total``: ortc's sum over onnxruntime's, median over the pairs of starts made back
    to back. Also RSS, and the RSS with ``big_path``'s session."""
    if warm:
        for mod in mods:  # the file cache and the bytecode cache
            _probe(env, mod, tiny_path)
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in mods}
    for r in range(runs):
        for mod in (mods if r % 2 == 0 else mods[::-1]):
            rows[mod].append(_probe(env, mod, tiny_path))
    out: dict[str, Any] = {"runs": runs}
    for mod in mods:
        got = rows[mod]
        out[mod] = {k: statistics.median(x[k] for x in got) for k in got[0]}
        out[mod]["modules"] = int(got[0]["modules"])
        if big_path is not None and big_path != tiny_path:
            out[mod]["rss_after_big_session_mib"] = _probe(env, mod, big_path, False)[
                "rss_after_session_mib"]
    if "ortc" in rows and "onnxruntime" in rows:
        out["ratio_total"] = statistics.median(
            a["total_ms"] / b["total_ms"] for a, b in zip(rows["ortc"], rows["onnxruntime"]))
    log("  cold start (import + first session + first run): " + ", ".join(
        f"{m} {out[m]['total_ms']:.1f} ms" for m in mods))
    return out


# -- targets --------------------------------------------------------------------------------------

def evaluate_targets(models: dict[str, Any], threads: dict[str, Any],
                     cold: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The project's speed targets, each with its verdict and the figures it was judged on.

    ``verdict``: "met", "tie" (above the limit but within the A/A band: ``verdict_of``),
    "missed", "failed" (a call pattern raised) or None (not measured, or not judged); ``met``
    is whether the value is within the limit itself (None when there is no verdict), ``band``
    the A/A band the verdict used (None: the target has none)."""
    out: list[dict[str, Any]] = []

    def add(name: str, value: float | None, limit: float, op: str, detail: str = "",
            basis: str = "", band: float | None = None) -> dict[str, Any]:
        t = {"target": name, "value": value, "limit": limit, "op": op, "met": None,
             "verdict": None, "band": band, "detail": detail, "basis": basis}
        _judge(t)
        out.append(t)
        return t

    def band_of(res: dict[str, Any], path: str) -> float | None:
        """The A/A band a ratio of ``path`` is judged with (module docstring)."""
        noise = res.get("noise") or {}
        kind = noise.get("bound") if path in BOUND_PATHS else None
        kind = kind or noise.get("run")
        return None if kind is None else kind["band"]

    def us(res: dict[str, Any], path: str) -> str:
        st = res["paths"].get(path)
        return f"{PATH_LABELS[path]} {st['median_us']:.2f} µs" if st else \
            f"{PATH_LABELS[path]} not measured"

    def vs_ort(key: str, path: str, limit: float, what: str) -> dict[str, Any] | None:
        res = models.get(key)
        if res is None:
            return None
        peer = ORT_PEER[path]
        return add(f"{key}: {what} <= {limit:g}x {PATH_LABELS[peer]}",
            res["ratios"].get(path, {}).get("vs_onnxruntime"), limit, "<=",
            basis=f"{us(res, path)}, {us(res, peer)} (medians; the ratio is paired per round)",
            band=band_of(res, path))

    tiny = models.get("tiny")
    if tiny is not None:
        r, p = tiny["ratios"], tiny["paths"]
        run = vs_ort("tiny", "ortc_run", 0.75, "ortc run(), fresh array")
        if run is not None and "cffi_run" in p and "ort_run" in p:
            # what the target asks against what ortc's C calls alone, through cffi, take
            run["detail"] += ("; " if run["detail"] else "") + \
                f"the target is {0.75 * p['ort_run']['median_us']:.2f} µs; " \
                f"{PATH_LABELS['cffi_run']} {p['cffi_run']['median_us']:.2f} µs " \
                f"({_fmt(r.get('cffi_run', {}).get('vs_onnxruntime'), '.3f')}x)"
        vs_ort("tiny", "ortc_run_reused", 0.75, "ortc run(), same array (reported)")
        bound = vs_ort("tiny", "ortc_bound", 0.75, "ortc bound")
        if bound is not None and "ort_iobinding" in p:
            # what the target asks against what a bound run through cffi, and C, cannot go below
            limit_us = 0.75 * p["ort_iobinding"]["median_us"]
            bound["detail"] += ("; " if bound["detail"] else "") + \
                f"the target is {limit_us:.2f} µs; " + "; ".join(
                f"{PATH_LABELS[k]} {p[k]['median_us']:.2f} µs "
                f"({_fmt(r.get(k, {}).get('vs_onnxruntime'), '.3f')}x)"
                for k in ("cffi_bound", "c_bound") if k in p)
        vs_ort("tiny", "ortc_run_with_values", 1.0, "ortc run_with_values")
        add("tiny: ortc bound <= 1.25x C floor", r.get("ortc_bound", {}).get("vs_c_floor"),
            1.25, "<=", basis=f"{us(tiny, 'ortc_bound')}, {us(tiny, 'c_floor')}",
            band=band_of(tiny, "ortc_bound"))
        add("tiny: ortc.compat run() <= 1.05x ortc run(), fresh array",
            r.get("compat_run", {}).get("vs_ortc"), 1.05, "<=",
            basis=f"{us(tiny, 'compat_run')}, {us(tiny, 'ortc_run')}",
            band=band_of(tiny, "compat_run"))
        if "ortc_run_reused" in p and "ortc_run_nochecks" in p:
            add("tiny: thread-rule checks, µs per call (strict - off) <= 0.3",
                _paired(p, "ortc_run_reused", "ortc_run_nochecks", "diff"), 0.3, "<=",
                basis=f"{us(tiny, 'ortc_run_reused')}, {us(tiny, 'ortc_run_nochecks')}")
    for key in models:
        if key != "tiny":
            vs_ort(key, "ortc_run", 1.0, "ortc run()")
    # the call patterns of real libraries: ortc.compat, and ortc's own API, against onnxruntime
    for key, res in models.items():
        failed = res.get("failed") or {}
        for path, peer in PATTERN_PEER.items():
            if path not in res["paths"] and path not in failed:
                continue
            t = add(f"{key}: {PATH_LABELS[path]} <= 1x {PATH_LABELS[peer]}",
                    res["ratios"].get(path, {}).get("vs_onnxruntime"), 1.0, "<=",
                    basis=f"{us(res, path)}, {us(res, peer)} (medians; paired per round)",
                    band=band_of(res, path))
            if path in failed:
                t.update(verdict="failed", met=False, detail=f"it raised: {failed[path]}")
            elif peer in failed:
                t["detail"] = f"not judged: onnxruntime's path raised: {failed[peer]}"
    # Two threads can only scale when a second core is free: when even the C loop gains less
    # than x1.5 on every model, the machine was busy and the thread verdicts are left open.
    c_best = max((t["c"]["scaling"] for t in threads.values() if "c" in t), default=None)
    busy = c_best is not None and c_best < 1.5
    note = f"not judged: C itself scales at most x{c_best:.2f} (no free core)" if busy else ""
    first = len(out)
    for key, t in threads.items():
        o = t["ortc"]
        basis = f"ortc {o['calls_per_s_1']:.0f} -> {o['calls_per_s_2']:.0f} calls/s"
        if "onnxruntime" in t:
            x = t["onnxruntime"]
            add(f"{key}: 2-thread scaling ortc >= onnxruntime", o["scaling"], x["scaling"],
                ">=", note, basis + f", onnxruntime {x['calls_per_s_1']:.0f} -> "
                f"{x['calls_per_s_2']:.0f} calls/s")
        if key == "mlp":
            add("mlp: 2-thread scaling ortc >= 1.9", o["scaling"], 1.9, ">=", note, basis)
    if busy:
        for t in out[first:]:
            t["met"] = t["verdict"] = None
    if cold and "onnxruntime" in cold:
        o, x = cold["ortc"], cold["onnxruntime"]

        def parts(v: dict[str, Any]) -> str:
            return (f"{v['total_ms']:.1f} ms = import {v['import_ms']:.1f} + session "
                    f"{v['session_ms']:.1f} + run {v['first_run_ms']:.1f}")

        add("cold start: ortc import + first session + first run <= 1.0x onnxruntime's",
            cold.get("ratio_total"), 1.0, "<=",
            basis=f"ortc {parts(o)}; onnxruntime {parts(x)} (medians of {cold['runs']} fresh "
                  f"interpreters each; the ratio is paired per pair of starts)")
        add("cold start: import ortc faster than import onnxruntime (ms)", o["import_ms"],
            x["import_ms"], "<=", basis=f"ortc {o['import_ms']:.1f} ms, onnxruntime "
                                        f"{x['import_ms']:.1f} ms")
    return out


def _judge(t: dict[str, Any]) -> None:
    """Set a target's ``verdict`` and ``met`` from its value, limit and band, and say in its
    ``detail`` why a tie is one."""
    v = t["verdict"] = verdict_of(t["value"], t["limit"], t["op"], t.get("band"))
    t["met"] = None if v is None else v == "met"
    if v == "tie":
        edge = t["limit"] * (1 + t["band"] if t["op"] == "<=" else 1 - t["band"])
        note = f"tie: past the limit, within the A/A band (up to {edge:.3f})"
        t["detail"] = f"{note}; {t['detail']}" if t["detail"] else note


# -- reporting ------------------------------------------------------------------------------------

def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    if "model name" in fields:
        cpu = fields["model name"]
        extra = [f"family {fields['cpu family']} model {fields['model']}"
                 if "cpu family" in fields and "model" in fields else "",
                 f"{float(fields['cpu MHz']):.0f} MHz" if "cpu MHz" in fields else "",
                 f"cache {fields['cache size']}" if "cache size" in fields else "",
                 "/".join(x for x in ("avx2", "avx512f") if x in fields.get("flags", "").split())]
        cpu += " (" + ", ".join(x for x in extra if x) + ")"
    info: dict[str, Any] = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    for mod in ("onnx", "onnxruntime", "cffi"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - not installed
            info[mod] = None
    try:
        info["loadavg"] = list(os.getloadavg())
    except OSError:
        info["loadavg"] = None
    return info


def _default_sigint() -> str:
    """Give SIGINT Python's default handler (the disposition most users' processes have);
    returns what it replaced ("" when nothing)."""
    import signal

    was = signal.getsignal(signal.SIGINT)
    if was is signal.default_int_handler:
        return ""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if was is None:
        return "a handler not set from Python"
    if was == signal.SIG_IGN:
        return "SIGINT ignored"
    return "SIGINT's system default" if was == signal.SIG_DFL else "a handler of its own"


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "—" if x is None else format(x, spec)


def render(result: dict[str, Any]) -> str:
    lines: list[str] = []
    w = 2 + max([len(PATH_LABELS[k]) for res in result["models"].values()
                 for k in [*res["paths"], *(res.get("failed") or ())]] + [40])
    for key, res in result["models"].items():
        lines.append(f"\n{res['label']}  ({_calls_text(res)} x {res['rounds']} rounds per path, "
                     f"µs per call)")
        if res.get("note"):
            lines.append(f"  {res['note']}")
        lines.append(f"  {_io_line(res)}")
        lines.append(f"  {_noise_text(res)}")
        lines.append(f"  {'path':<{w}}{'median':>9}{'p99':>9}{'/ort':>7}{'/C':>7}")
        for name, s in res["paths"].items():
            r = res["ratios"].get(name, {})
            lines.append(f"  {PATH_LABELS[name]:<{w}}{s['median_us']:>9.2f}{s['p99_us']:>9.2f}"
                         f"{_fmt(r.get('vs_onnxruntime')):>7}{_fmt(r.get('vs_c_floor')):>7}")
        for name, err in (res.get("failed") or {}).items():
            lines.append(f"  {PATH_LABELS[name]:<{w}}FAILED: {err}")
    if result["threads"]:
        lines.append("\nOne session, 1 -> 2 threads (throughput, calls/s; intra-op threads 1)")
        lw = 2 + max(len(result["models"][key]["label"]) for key in result["threads"])
        lines.append(f"  {'model':<{lw}}{'C':>8}{'onnxruntime':>13}{'ortc':>8}"
                     f"{'2 threads, ortc/ort calls/s':>30}")
        for key, t in result["threads"].items():
            label = result["models"][key]["label"]
            lines.append(f"  {label:<{lw}}{_fmt(t.get('c', {}).get('scaling'), '.2f'):>8}"
                         f"{_fmt(t.get('onnxruntime', {}).get('scaling')):>13}"
                         f"{_fmt(t['ortc']['scaling']):>8}"
                         f"{_fmt(t['ortc'].get('vs_onnxruntime_2'), '.3f'):>30}")
    cold = result.get("cold_start")
    if cold:
        lines.append(f"\nCold start, ms (median of {cold['runs']} fresh interpreters each; numpy "
                     f"already imported, bytecode cached; tiny Add model)")
        lines.append(f"  {'':<12}{'import':>8}{'session':>9}{'1st run':>9}{'sum':>8}"
                     f"{'RSS import':>12}{'RSS session':>13}{'RSS last model':>16}")
        for mod in _cold_mods(cold):
            v = cold[mod]
            big = v.get("rss_after_big_session_mib")
            lines.append(f"  {mod:<12}{v['import_ms']:>8.1f}{v['session_ms']:>9.1f}"
                         f"{v['first_run_ms']:>9.1f}{v['total_ms']:>8.1f}"
                         f"{v['rss_after_import_mib']:>9.0f} MiB{v['rss_after_session_mib']:>9.0f}"
                         f" MiB{_fmt(big, '.0f'):>12} MiB")
        if cold.get("ratio_total") is not None:
            lines.append(f"  ortc / onnxruntime (sum, paired): {cold['ratio_total']:.2f}")
    lines.append("\nTargets")
    lines += _target_lines(result["targets"])
    return "\n".join(lines)


def _verdict(t: dict[str, Any]) -> str | None:
    """A target's verdict (a result written before verdicts had ties: from ``met``)."""
    if "verdict" in t:
        return t["verdict"]  # type: ignore[no-any-return]
    return {True: "met", False: "missed", None: None}[t["met"]]


def _mark(t: dict[str, Any], markdown: bool = False) -> str:
    v = _verdict(t)
    if v is None:
        return "n/a"
    if v in ("met", "tie"):
        return v
    return f"**{v}**" if markdown else v.upper()


def _limit_text(t: dict[str, Any]) -> str:
    """The limit, and the A/A band when the target has one."""
    text = f"{t['op']} {t['limit']:.3g}"
    return text + (f", A/A band {t['band']:.3f}" if t.get("band") is not None else "")


def _calls_text(res: dict[str, Any]) -> str:
    """Calls per round: the paths', and the call patterns' and new sessions' when theirs
    differ."""
    text = f"{res['calls_per_round']} calls"
    own = {}
    for name, st in res["paths"].items():
        group = _size_group(name)
        if group != "paths" and "calls_per_round" in st:
            own[group] = st["calls_per_round"]
    words = {"patterns": "the call patterns", "sessions": "the new sessions"}
    return text + (" (" + ", ".join(f"{words[g]} {n}" for g, n in own.items()) + ")"
                   if own else "")


def _noise_text(res: dict[str, Any]) -> str:
    """The run's A/A noise band, each kind with what it was made of."""
    noise = res.get("noise") or {}
    parts = []
    for kind, what in (("run", "run()"), ("bound", "bound")):
        b = noise.get(kind)
        if b is not None:
            parts.append(f"{what} {b['band']:.3f} ({PATH_LABELS[b['paths'][0]]} / "
                         f"{PATH_LABELS[b['paths'][1]]}: {b['ratio']:.3f}, the median's 95 % "
                         f"interval {b['interval'][0]:.3f}-{b['interval'][1]:.3f}, "
                         f"{b['rounds']} rounds)")
    if not parts:
        return "A/A noise band: not measured (onnxruntime's paths were not run)"
    return ("A/A noise band (|A/A - 1| + half the interval; a ratio past its limit by less is a "
            "tie): " + "; ".join(parts))


def _target_lines(targets: list[dict[str, Any]]) -> list[str]:
    """Each target's verdict line and, under it, what it was judged on."""
    lines = []
    for t in targets:
        lines.append(f"  [{_mark(t):>6}] {t['target']}: {_fmt(t['value'], '.3f')} "
                     f"({_limit_text(t)})" + (f"; {t['detail']}" if t["detail"] else ""))
        if t.get("basis"):
            lines.append(f"           {t['basis']}")
    return lines


def _cold_mods(cold: dict[str, Any]) -> list[str]:
    return [m for m in ("ortc", "onnxruntime") if m in cold]


def _io_line(res: dict[str, Any]) -> str:
    """The model's inputs and outputs in one line: name dtype shape (outputs whose shape is
    not known before the run say so)."""
    def one(name: str, d: dict[str, Any]) -> str:
        shape = d.get("run_shape", d["shape"])
        text = f"{name} {d['dtype']} {shape}"
        return text + (" (no static shape)" if d.get("static_shape") is False else "")

    io = res.get("io") or {"inputs": {}, "outputs": {}}
    return ("in: " + ", ".join(one(n, d) for n, d in io["inputs"].items()) + "; out: "
            + ", ".join(one(n, d) for n, d in io["outputs"].items()))


def render_markdown(result: dict[str, Any]) -> str:
    """The results as Markdown tables (for docs/PERFORMANCE.md)."""
    out: list[str] = []
    ms = result["machine"]
    load = ms.get("loadavg") or [float("nan")] * 3
    load_end = ms.get("loadavg_end") or [float("nan")] * 3
    out.append(f"- command: `{result['command']}` ({result['seconds']:.0f} s)")
    out.append(f"- machine: {ms['cpu']}, {ms['cores']} cores; {ms['platform']}")
    out.append(f"- python {ms['python']}, numpy {ms['numpy']}, onnx {ms['onnx']}, onnxruntime "
               f"{ms['onnxruntime']}, cffi {ms['cffi']}; ortc loads ONNX Runtime "
               f"{ms['library']['version']} (API {ms['library']['api']})")
    out.append(f"- load average (1/5/15 min): {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at "
               f"the start, {load_end[0]:.2f} / {load_end[1]:.2f} / {load_end[2]:.2f} at the end")
    compiled = any("c_floor" in res["paths"] for res in result["models"].values())
    out.append(f"- C floor: {'compiled' if compiled else result['c_floor']}")
    if ms.get("sigint"):
        out.append(f"- SIGINT: {ms['sigint']}")
    for key, res in result["models"].items():
        out.append(f"\n### {res['label']}\n")
        if res.get("note"):
            out.append(f"{res['note'][0].upper()}{res['note'][1:]}. {_io_line(res)}.\n")
        if "c_floor" not in res["paths"] and res.get("c_floor", "").startswith("not applicable"):
            out.append(f"C floor: {res['c_floor']}.\n")
        out.append(f"{_calls_text(res)} x {res['rounds']} rounds per path; µs per "
                   f"call (timing-loop overhead subtracted); a ratio is the median over rounds of the "
                   f"ratio of the two paths' medians in that round.\n")
        out.append(f"{_noise_text(res)}.\n")
        out.append("| path | median | p99 | round medians | / onnxruntime | / C floor |")
        out.append("|---|---:|---:|---|---:|---:|")
        for name, st in res["paths"].items():
            r = res["ratios"].get(name, {})
            out.append(f"| {PATH_LABELS[name]} | {st['median_us']:.2f} | {st['p99_us']:.2f} | "
                       f"{st['round_median_min_us']:.2f}–{st['round_median_max_us']:.2f} | "
                       f"{_fmt(r.get('vs_onnxruntime'))} | {_fmt(r.get('vs_c_floor'))} |")
        for name, err in (res.get("failed") or {}).items():
            out.append(f"| {PATH_LABELS[name]} | **failed**: {err.replace('|', '/')} | | | | |")
    if result["threads"]:
        out.append("\n### One session, 1 → 2 threads\n")
        out.append("Throughput with two threads calling run on one session over one thread "
                   "(intra-op threads 1; median over rounds of the per-round ratio); the last "
                   "column compares what two threads get done in each binding (paired per round; "
                   "reported, not a target).\n")
        out.append("| model | C | onnxruntime | ortc | ortc calls/s (1 → 2) | 2 threads: ortc / "
                   "onnxruntime calls/s |")
        out.append("|---|---:|---:|---:|---|---:|")
        for key, t in result["threads"].items():
            o = t["ortc"]
            out.append(f"| {result['models'][key]['label']} | "
                       f"{_fmt(t.get('c', {}).get('scaling'))} | "
                       f"{_fmt(t.get('onnxruntime', {}).get('scaling'))} | {o['scaling']:.2f} | "
                       f"{o['calls_per_s_1']:.0f} → {o['calls_per_s_2']:.0f} | "
                       f"{_fmt(o.get('vs_onnxruntime_2'), '.3f')} |")
    cold = result.get("cold_start")
    if cold:
        out.append("\n### Cold start\n")
        out.append(f"Fresh interpreters ({cold['runs']} per binding, interleaved), numpy already "
                   "imported when the clock starts, both packages' bytecode cached; the tiny Add "
                   "model, default session options; ORT's telemetry off in both "
                   "(ORT_DISABLE_TELEMETRY=1: ortc's default, onnxruntime's when set) and one "
                   "OpenBLAS thread (OPENBLAS_NUM_THREADS=1: numpy's BLAS threads spin through "
                   "the measured span otherwise); medians, ms.\n")
        out.append("| | import | first session | first run | sum | whole process | RSS after "
                   "import | RSS with the session | RSS with the last model's session |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for mod in _cold_mods(cold):
            v = cold[mod]
            big = v.get("rss_after_big_session_mib")
            out.append(f"| {mod} | {v['import_ms']:.1f} | {v['session_ms']:.1f} | "
                       f"{v['first_run_ms']:.1f} | {v['total_ms']:.1f} | {v['process_ms']:.1f} | "
                       f"{v['rss_after_import_mib']:.0f} MiB | "
                       f"{v['rss_after_session_mib']:.0f} MiB | "
                       f"{'—' if big is None else f'{big:.0f} MiB'} |")
        if cold.get("ratio_total") is not None:
            out.append(f"\nortc / onnxruntime, sum (median over pairs of starts): "
                       f"{cold['ratio_total']:.2f}")
    out.append("\n### Targets\n")
    out.append("| target | measured | limit | | judged on |")
    out.append("|---|---:|---:|---|---|")
    for t in result["targets"]:
        out.append(f"| {t['target']} | {_fmt(t['value'], '.3f')} | {_limit_text(t)} "
                   f"| {_mark(t, True)}{' (' + t['detail'] + ')' if t['detail'] else ''} "
                   f"| {t.get('basis', '')} |")
    return "\n".join(out) + "\n"


# -- several processes --------------------------------------------------------------------------
# What a verdict near its limit rests on differs more between processes than between the rounds
# of one: four full runs of the same code on one machine gave the tiny model's run() 0.731-0.775x
# onnxruntime, while the 60 rounds of each run put the median within +-0.003
# (docs/PERFORMANCE.md, the run of record). ``--processes N`` judges over N processes.

def combine_targets(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each target judged over several runs (each a separate process): its value and its limit
    are the medians over the runs that measured it, its A/A band the widest of theirs, the
    verdict (``verdict_of``) is theirs, and ``values``, ``limits``, ``bands`` and ``met_in`` /
    ``tie_in`` / ``judged_in`` keep each run's own. A target no run judged (a busy machine's
    thread rows) stays unjudged; a target a call pattern's error failed in any run is
    "failed"."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for targets in runs:
        for t in targets:
            by_name.setdefault(t["target"], []).append(t)
    out: list[dict[str, Any]] = []
    for name, ts in by_name.items():
        measured = [t for t in ts if t["value"] is not None]
        judged = [t for t in measured if t["met"] is not None]
        op = ts[0]["op"]
        value = statistics.median(t["value"] for t in measured) if measured else None
        limit = statistics.median(t["limit"] for t in measured) if measured else ts[0]["limit"]
        bands = [t["band"] for t in measured if t.get("band") is not None]
        values = [t["value"] for t in measured]
        met_in = sum(1 for t in judged if _verdict(t) == "met")
        tie_in = sum(1 for t in judged if _verdict(t) == "tie")
        row = {
            "target": name, "value": value, "limit": limit, "op": op, "met": None,
            "verdict": None, "band": max(bands) if bands else None,
            "values": values, "limits": [t["limit"] for t in measured], "bands": bands,
            "met_in": met_in, "tie_in": tie_in, "judged_in": len(judged),
            "detail": (f"not judged in {len(measured) - len(judged)} of {len(measured)} "
                       f"processes: {next(t['detail'] for t in measured if t['met'] is None)}"
                       if len(judged) < len(measured) else ""),
            "basis": (f"median over {len(measured)} processes: "
                      + ", ".join(f"{v:.3f}" for v in values)
                      + f"; met in {met_in} of {len(judged)}"
                      + (f", a tie in {tie_in}" if tie_in else ""))}
        if value is not None and 2 * len(judged) >= len(measured):
            _judge(row)
        failures = [t for t in ts if _verdict(t) == "failed"]
        if failures:
            row.update(verdict="failed", met=False,
                       detail=f"failed in {len(failures)} of {len(ts)} processes: "
                              f"{failures[0]['detail']}")
        out.append(row)
    return out


def _child_args(args: argparse.Namespace) -> list[str]:
    """The options of this command that each process repeats (not --processes, --json or
    --markdown)."""
    child = ["--smoke"] if args.smoke else ["--quick"] if args.quick else []
    if args.models:
        child += ["--models", args.models]
    if args.rounds:
        child += ["--rounds", str(args.rounds)]
    for flag in ("no_c", "no_onnxruntime", "no_threads", "no_cold_start"):
        if getattr(args, flag):
            child.append("--" + flag.replace("_", "-"))
    if args.cold_start_runs is not None:
        child += ["--cold-start-runs", str(args.cold_start_runs)]
    return child


def run_processes(n: int, args: argparse.Namespace, command: str,
                  log: Callable[[str], None]) -> dict[str, Any]:
    """The whole bench in ``n`` fresh processes, one after the other, and its targets judged
    over them (:func:`combine_targets`)."""
    env = _env_with_root(ROOT)
    started = time.time()
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ortc-bench-runs-") as work:
        for i in range(n):
            log(f"process {i + 1} of {n}")
            out = os.path.join(work, f"run{i}.json")
            # its report goes to the JSON; its progress to our stderr, as it happens
            proc = subprocess.run([sys.executable, "-m", "ortc", "bench", *_child_args(args),
                                   "--json", out], cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
            if proc.returncode != 0:
                raise RuntimeError(f"bench process {i + 1} of {n} failed (exit status "
                                   f"{proc.returncode}); its messages are above")
            with open(out) as f:
                runs.append(json.load(f))
    return {"command": command, "mode": runs[0]["mode"], "processes": n,
            "machine": runs[0]["machine"], "seconds": time.time() - started, "runs": runs,
            "targets": combine_targets([r["targets"] for r in runs])}


def render_processes(result: dict[str, Any]) -> str:
    return "\n".join([f"Targets judged over {result['processes']} processes (median of the "
                      f"processes' values; each process's below it)",
                      *_target_lines(result["targets"])])


def render_processes_markdown(result: dict[str, Any]) -> str:
    ms = result["machine"]
    out = [f"- command: `{result['command']}` ({result['seconds']:.0f} s, "
           f"{result['processes']} processes one after the other)",
           f"- machine: {ms['cpu']}, {ms['cores']} cores; {ms['platform']}",
           "\n### Targets over the processes\n",
           "| target | median | limit | | each process | met in |",
           "|---|---:|---:|---|---|---:|"]
    for t in result["targets"]:
        each = ", ".join(f"{v:.3f}" for v in t["values"])
        ties = f", a tie in {t['tie_in']}" if t.get("tie_in") else ""
        out.append(f"| {t['target']} | {_fmt(t['value'], '.3f')} | {_limit_text(t)} "
                   f"| {_mark(t, True)}{' (' + t['detail'] + ')' if t['detail'] else ''} | {each} "
                   f"| {t['met_in']} of {t['judged_in']}{ties} |")
    for i, run in enumerate(result["runs"]):
        out.append(f"\n## Process {i + 1}\n")
        out.append(render_markdown(run))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    from ortc._cmdline import UsageError, _Parser, prog

    p = _Parser(prog=prog("bench"), description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a short run (fewer, shorter rounds)")
    p.add_argument("--smoke", action="store_true",
                   help="a few iterations on the tiny model only (for tests)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the results as Markdown tables")
    p.add_argument("--models", help="comma-separated subset of " + ",".join(MODEL_KEYS)
                   + " (--smoke: tiny only unless given)")
    p.add_argument("--rounds", type=int, help="rounds per path (overrides the mode)")
    p.add_argument("--no-c", action="store_true", help="skip the C floor")
    p.add_argument("--no-onnxruntime", action="store_true", help="skip onnxruntime's paths")
    p.add_argument("--no-threads", action="store_true", help="skip the 1 vs 2 thread runs")
    p.add_argument("--no-cold-start", "--no-import", dest="no_cold_start", action="store_true",
                   help="skip the cold start (import, first session, first run) and memory")
    p.add_argument("--cold-start-runs", type=int, metavar="N",
                   help="fresh interpreters per binding for the cold start (default 7; --quick "
                        "3, --smoke 1)")
    p.add_argument("--processes", type=int, metavar="N",
                   help="run the whole bench in N fresh processes, one after the other, and "
                        "judge each target on the median over them (default 1: this process)")
    args = p.parse_args(argv)

    cfg = Config.of("smoke" if args.smoke else "quick" if args.quick else "full")
    if args.rounds:
        cfg.rounds = args.rounds
    if args.cold_start_runs is not None:
        if args.cold_start_runs < 1:
            raise UsageError(f"--cold-start-runs {args.cold_start_runs}: needs at least 1")
        cfg.cold_start_runs = args.cold_start_runs
    keys = ([k.strip() for k in args.models.split(",") if k.strip()] if args.models
            else (["tiny"] if args.smoke else None))
    for k in keys or ():
        if k not in MODEL_KEYS:
            raise UsageError(f"--models: unknown model {k!r}; choose from "
                             f"{','.join(MODEL_KEYS)}")
    if args.processes is not None and args.processes < 1:
        raise UsageError(f"--processes {args.processes}: needs at least 1")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    command = "python -m ortc bench " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.processes is not None and args.processes > 1:
        combined = run_processes(args.processes, args, command, log)
        return _report(args, combined, render_processes, render_processes_markdown)

    # The process's SIGINT disposition decides what a main-thread run of ortc does: with
    # Python's handler ortc bridges Ctrl-C (run options on every run), with SIGINT ignored (a
    # background job of a script) or a handler of the user's own it does not, and the bound
    # path was 2.3 µs instead of 2.7 (bench/bench_handlers.py). Measure the default, whatever
    # this process was started with.
    sigint_was = _default_sigint()

    import ortc

    lib = ortc.load()
    ort = None
    if not args.no_onnxruntime:
        try:
            import onnxruntime as ort  # type: ignore[import-untyped,no-redef]
        except ImportError:
            log("onnxruntime is not installed: its paths are skipped")
    machine = machine_info()
    machine["library"] = {"path": lib.path, "version": lib.version, "api": lib.api_version}
    machine["sigint"] = "Python's default handler (ortc bridges Ctrl-C)" + (
        f"; set by the bench, the process started with {sigint_was}" if sigint_was else "")
    started = time.time()
    log(f"ortc bench ({cfg.mode}): {machine['cpu']}, {machine['cores']} cores, "
        f"load {machine['loadavg']}")

    with tempfile.TemporaryDirectory(prefix="ortc-bench-") as work:
        floor_lib = None
        floor_note = "skipped (--no-c)"
        if not args.no_c:
            floor_lib, floor_note = build_floor(work, lib.path)
            if floor_lib is None:
                log(f"C floor skipped: {floor_note}")
        models = all_models(keys)
        for k in sorted(set(keys or MODEL_KEYS) - {m.key for m in models}):
            log(f"model {k} left out: " + (
                "faster-whisper, whose wheel ships the model, is not installed (pip install -e "
                "'.[apps]')"
                if k == "silero" else f"the installed onnx package does not ship "
                f"backend/test/data/light/light_{k}.onnx"))
        paths: dict[str, str] = {}
        for m in models:
            if m.path is None:
                m.path = os.path.join(work, f"{m.key}.onnx")
                with open(m.path, "wb") as f:
                    f.write(m.model)
            paths[m.key] = m.path
        results: dict[str, Any] = {}
        threads: dict[str, Any] = {}
        for m in models:
            log(f"model {m.label}")
            results[m.key] = bench_model(m, paths[m.key], cfg, floor_lib, ort, ortc, log)
            if not args.no_threads:
                threads[m.key] = bench_threads(m, paths[m.key], results[m.key], cfg, floor_lib,
                                               log)
            results[m.key].pop("_sessions")
            gc.collect()
        cold = None
        if not args.no_cold_start:
            tiny_path = paths.get("tiny")
            if tiny_path is None:
                tiny_path = os.path.join(work, "tiny.onnx")
                with open(tiny_path, "wb") as f:
                    f.write(add_model().model)
            big_path = paths[models[-1].key] if models else None
            log("cold start")
            cold = bench_cold_start(cfg.cold_start_runs, tiny_path, big_path,
                                    ["ortc"] + (["onnxruntime"] if ort is not None else []),
                                    cold_start_env(work), cfg.mode != "smoke", log)

    machine["loadavg_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    result = {
        "command": command,
        "mode": cfg.mode,
        "machine": machine,
        "c_floor": floor_note,
        "seconds": time.time() - started,
        "models": results,
        "threads": threads,
        "cold_start": cold,
    }
    result["targets"] = evaluate_targets(results, threads, cold)
    return _report(args, result, render, render_markdown)


def _report(args: argparse.Namespace, result: dict[str, Any],
            text: Callable[[dict[str, Any]], str],
            markdown: Callable[[dict[str, Any]], str]) -> int:
    """Print the report and write the files asked for."""
    print(text(result))
    if args.json:
        with open(args.json, "w") as jf:
            json.dump(result, jf, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as mf:
            mf.write(markdown(result))
    return 0
