"""API-misuse fuzzing: a hypothesis state machine over every ortc wrapper, run in child processes.

The machine creates, uses, closes, drops, re-uses after close, closes parents before children,
uses objects from other threads and from forked children, and races close against calls. Every
step is an op, a JSON list such as ``["run", 7, "values", 3, null]``, executed by :class:`World`,
which also predicts each op's outcome (ok, ClosedError, InvalidArgument, ...) from its model of
the objects and fails on any other outcome, on wrong output data, and on live handles left over
at the end of a sequence.

A crash cannot be caught in-process, so sequences run in child processes, a batch of sequences
per child (child start-up costs more than a hundred sequences). Before executing an op the child
appends it to a log file; when a child dies, the parent splits the log into sequences and
replays them one by one in fresh children to find the one that crashes on its own, and prints
it. Entry points:

    python tests/test_fuzz.py fuzz --sequences 100000    # what `make fuzz` runs
    python tests/test_fuzz.py replay FILE.json           # a printed sequence (list of ops) or
                                                          # a list of sequences
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if HERE not in sys.path:  # run as a script: make `models` and `ortc` importable
    sys.path.insert(0, HERE)
if ROOT not in sys.path:
    sys.path.append(ROOT)  # after PYTHONPATH, which may name another checkout of ortc

import ortc  # noqa: E402
from ortc import InvalidArgument, ValueKind  # noqa: E402

# -- models and data -------------------------------------------------------------------------

_MODELS: dict[str, bytes] = {}


def model_bytes(name: str) -> bytes:
    if name not in _MODELS:
        import models

        build: dict[str, Callable[[], bytes]] = {
            "add": lambda: models.add_model(np.float32, ["n"]),
            "mlp": lambda: models.mlp_model(2, 8),
            "zipmap": lambda: models.zipmap_model(),
            "seqat": lambda: models.sequence_at_model(),
            "dictvec": lambda: models.dict_vectorizer_model(),
            "opt": lambda: models.optional_input_model(),
            "str": lambda: models.identity_model(models.T.STRING, [2, 3]),
            "slow": lambda: models.matmul_chain_model(24, 64),
        }
        _MODELS[name] = build[name]()
    return _MODELS[name]


MODEL_NAMES = ("add", "mlp", "zipmap", "seqat", "dictvec", "opt", "str", "slow")
#: input name -> value kind, per model
MODEL_INPUTS: dict[str, dict[str, str]] = {
    "add": {"a": "f3", "b": "f3"}, "mlp": {"x": "x8"}, "zipmap": {"x": "z3"},
    "seqat": {"seq": "seq", "i": "i0"}, "dictvec": {"x": "map"}, "opt": {"opt": "f2"},
    "str": {"x": "str"}, "slow": {"x": "m64"},
}
#: output name -> (kind of numpy array bound for it, or None: bind to the device only)
MODEL_OUTPUTS: dict[str, dict[str, Optional[tuple[tuple[int, ...], Any]]]] = {
    "add": {"c": ((3,), np.float32)}, "mlp": {"y": ((2, 8), np.float32)},
    "zipmap": {"y": None}, "seqat": {"y": None, "len": ((), np.int64)},
    "dictvec": {"y": ((1, 4), np.float32)}, "opt": {"has": ((), np.bool_)},
    "str": {"y": None}, "slow": {"y": ((64, 64), np.float32)},
}


def make_data(kind: str, d: int) -> Any:
    """Deterministic input data of a kind (d: 0..3 varies the contents)."""
    if kind == "f3":
        return np.arange(3, dtype=np.float32) + d
    if kind == "f2":
        return np.arange(2, dtype=np.float32) - d
    if kind == "x8":
        return (np.arange(16, dtype=np.float32).reshape(2, 8) / 16 + d).astype(np.float32)
    if kind == "z3":
        return (np.arange(6, dtype=np.float32).reshape(2, 3) + d).astype(np.float32)
    if kind == "b0":
        return np.full(8, 0.5 + d, np.float32)
    if kind == "big":  # 8 MB: numpy gets it from mmap, so freed memory is unmapped (a UAF faults)
        return np.full(1 << 20, float(d + 1), np.float64)
    if kind == "m64":
        return (np.arange(64 * 64, dtype=np.float32).reshape(64, 64) % 7 / 7 + d).astype(
            np.float32)
    if kind == "str":
        return np.array([["a", "é", str(d)], ["", "xyz", "日本"]], dtype=object)
    if kind == "seq":
        return [np.arange(2, dtype=np.float32) + d, np.arange(3, dtype=np.float32)]
    if kind == "i0":
        return np.array(d % 2, np.int64)
    if kind == "map":
        return {1: 1.0 + d, 3: 2.0}
    raise KeyError(kind)


VALUE_KINDS = ("f3", "f2", "x8", "z3", "b0", "big", "str", "seq", "map", "m64")


def feeds_for(model: str, d: int) -> dict[str, Any]:
    return {name: make_data(kind, d + i) for i, (name, kind) in
            enumerate(MODEL_INPUTS[model].items())}


def same(a: Any, b: Any) -> bool:
    """Deep equality of run results (arrays, lists, dicts, None)."""
    if isinstance(a, ortc.Value):
        a = a.to_python()
    if isinstance(b, ortc.Value):
        b = b.to_python()
    if a is None or b is None:
        return a is b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            np.isclose(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype == object or b.dtype == object:
        return a.tolist() == b.tolist()
    return bool(np.allclose(a, b))


# -- the op interpreter and its model of the objects ------------------------------------------

OK = "ok"
ANY_ORT = "ok|OrtError"  # ORT's answer depends on state the model does not track
OPTION_SETS: list[dict[str, Any]] = [
    {}, {"intra_op_num_threads": 1}, {"graph_optimization_level": 0},
    {"enable_mem_pattern": False, "enable_cpu_mem_arena": False},
    {"execution_mode": 1, "inter_op_num_threads": 1}, {"log_severity_level": 3, "logid": "fz"},
]
SETTERS: list[tuple[str, Any]] = [
    ("intra_op_num_threads", 1), ("intra_op_num_threads", 2), ("graph_optimization_level", 98),
    ("enable_mem_pattern", True), ("use_deterministic_compute", True), ("logid", "x"),
    ("enable_cpu_mem_arena", False), ("log_severity_level", 2),
]
CONFIG = [("session.intra_op.allow_spinning", "0"), ("session.use_env_allocators", "0"),
          ("ortc.fuzz.unknown", "é")]
SESSION_KWARGS: list[dict[str, Any]] = [
    {"intra_op_num_threads": 1}, {"providers": ["CPUExecutionProvider"]}, {},
    {"providers": [("CPUExecutionProvider", {"use_arena": "0"})], "intra_op_num_threads": 1},
    {"graph_optimization_level": 1, "providers": ["CPUExecutionProvider"],
     "enable_cpu_mem_arena": False},
]
#: run() feed modes that must give the reference outputs: plain dicts of arrays, Values, a
#: Mapping whose __getitem__ builds new arrays, read-only arrays, foreign array producers
GOOD_FEEDS = ("arrays", "values", "mapping", "readonly", "foreign")
#: runs interrupted by a KeyboardInterrupt at a random point (the "kint" op); on unless
#: ORTC_FUZZ_INTERRUPTS=0 (to tell a fault of another op from one of an interrupt)
INTERRUPTS = os.environ.get("ORTC_FUZZ_INTERRUPTS", "1") != "0"
#: value kinds whose data is a numeric array (read-only copies, fill())
NUMERIC_KINDS = ("f3", "f2", "x8", "z3", "b0", "m64")


#: model files with external data (the "ext_model" op): where the tensor is, where its data
#: is said to be (inside the model's folder, or an escape: refused), how the model is given
EXT_PLACES = ("initializer", "subgraph", "sparse", "constant", "function", "training")
EXT_LOCATIONS: list[tuple[str, Optional[bool]]] = [
    # a symbolic link inside the folder: ortc lets it through, ORT 1.32 refuses it in subgraphs
    ("w.bin", True), ("sub/w.bin", True), ("./sub/../w.bin", True), ("inner.bin", None),
    ("../secret.bin", False), ("sub/../../secret.bin", False), ("link.bin", False),
    ("linked/w.bin", False), ("ABS", False), ("*/_ORT_MEM_ADDR_/*", False), ("fifo.bin", False),
]
EXT_SOURCES = ("path", "bytes", "file", "folder")
EXT_DATA = b"inside!!"
#: shared objects cut short (the "lib" op): lengths, as fractions of the real file's
LIB_CUTS = (64, 1000, 100_000, 0.5, -1)
#: compat IOBinding raw pointers (the "compat_ptr" op): value, class for an input, for an output
COMPAT_POINTERS: list[tuple[Any, Any, Any]] = [
    (0, RuntimeError, RuntimeError), (-1, RuntimeError, RuntimeError),
    (4096, RuntimeError, RuntimeError), (1.5, TypeError, TypeError), ("x", TypeError, TypeError),
    (None, TypeError, "ok"), (2 ** 64, TypeError, TypeError), ("valid", "ok", "ok"),
]


class FreshMapping(Mapping):  # type: ignore[type-arg]
    """Feeds whose every lookup builds a new array (and drops it once the caller does)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def __getitem__(self, k: str) -> Any:
        v = self.data[k]
        return v.copy() if isinstance(v, np.ndarray) else v

    def __iter__(self) -> Any:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


class Producer:
    """An array producer that is not numpy (as a torch tensor is): numpy's array interface."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self.__array_interface__ = a.__array_interface__


def _read_only(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        a = a.copy()
        a.flags.writeable = False
    return a


#: SessionOptions.add_initializer(name, value) followed by value.close() before the session is
#: created made ORT read freed memory (a segfault with an 8 MB value) until the options counted
#: the value as a child; the machine closes such values again since then.
INITIALIZER_CLOSE_IS_SAFE = True


class Mismatch(AssertionError):
    """An op's outcome differed from the model's prediction."""


@dataclass
class Entry:
    kind: str  # opts sess ro val bind alloc mi arr
    obj: Any
    closed: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def _name(exc: BaseException | None) -> str:
    return "ok" if exc is None else type(exc).__name__


class World:
    """Executes ops and checks their outcomes; one per child process, reused by sequences."""

    def __init__(self, log_fd: int = -1) -> None:
        self.log_fd = log_fd
        self.objs: dict[int, Entry] = {}
        self.next_id = 1
        self.sequence = 0
        self.ops: list[list[Any]] = []
        self.steps = 0
        self.outcomes: dict[str, int] = {}
        self.forks = 0
        self.first_failure: tuple[str, list[list[Any]]] | None = None
        self._refs: dict[tuple[str, int, Any], Any] = {}
        self._ref_sessions: dict[tuple[str, Any], Any] = {}
        # warm every process-wide singleton, so the baseline holds them
        ortc.get_env()
        ortc.memory.cpu_memory_info()
        ortc.default_allocator()
        for m in MODEL_NAMES:
            for d in range(4):
                self.reference(m, feeds_for(m, d), None)
        for d in range(4):
            self.reference("mlp", feeds_for("mlp", 0), d)
        with ortc.RunOptions() as ro:  # the deadline path's watcher thread
            self._ref_session("add", None).run(None, feeds_for("add", 0), ro, timeout=60)
        # the run options of runs off the main thread that pass none (the exit stops them)
        worker = threading.Thread(target=self._ref_session("add", None).run,
                                  args=(None, feeds_for("add", 0)))
        worker.start()
        worker.join()
        self._files = self._make_files()
        from ortc import compat

        self._compat = compat.InferenceSession(model_bytes("add"))
        self._asyncs = False  # a run_async in this sequence: its releases are awaited at the end
        gc.collect()
        self.baseline = ortc.live_handles()
        gc.freeze()  # later collections skip everything imported so far: 10x faster

    # -- reference outputs, from sessions private to the world (part of the baseline)
    def _ref_session(self, model: str, override: Any) -> Any:
        key = (model, override)
        s = self._ref_sessions.get(key)
        if s is None:
            opts = ortc.SessionOptions(intra_op_num_threads=1)
            if override is not None:
                opts.add_initializer("b0", make_data("b0", override))
            s = self._ref_sessions[key] = ortc.Session(model_bytes(model), opts)
            opts.close()
        return s

    def reference(self, model: str, feeds: dict[str, Any], override: Any) -> list[Any]:
        key = (model, repr(sorted((k, repr(v)) for k, v in feeds.items())), override)
        out = self._refs.get(key)
        if out is None:
            out = self._refs[key] = self._ref_session(model, override).run(None, feeds)
        return out

    # -- sequences
    def begin(self) -> None:
        self.sequence += 1
        self.ops = []
        self.next_id = 1
        self._log({"seq": self.sequence})

    def end(self) -> None:
        """Forget every object; nothing may stay alive."""
        try:
            self._end()
        except Mismatch as exc:
            self._failed(exc)
            raise

    def _end(self) -> None:
        asyncs, self._asyncs = self._asyncs, False
        if asyncs:
            self._settle_async()
        self.objs.clear()
        live = ortc.live_handles()
        if live != self.baseline:
            gc.collect()
            live = ortc.live_handles()
        # the last releases of a run_async run on ortc's releaser thread: give them a moment
        # (nothing else may keep what they release: a reference the thread kept was a leak)
        end = time.monotonic() + (5 if asyncs else 0)
        while live != self.baseline and time.monotonic() < end:
            time.sleep(0.002)
            live = ortc.live_handles()
        if live != self.baseline:
            msg = f"leak after sequence {self.sequence}: live handles {live}, baseline " \
                  f"{self.baseline}"
            self.baseline = live  # report each leak once, in the sequence that made it
            raise Mismatch(msg)

    def _log(self, record: Any) -> None:
        if self.log_fd >= 0:
            os.write(self.log_fd, (json.dumps(record) + "\n").encode())

    def do(self, op: list[Any]) -> None:
        op = list(op)
        self.ops.append(op)
        self._log(op)
        self.steps += 1
        try:
            getattr(self, "op_" + op[0])(*op[1:])
        except Mismatch as exc:
            self._failed(exc)
            raise

    def _failed(self, exc: BaseException) -> None:
        if self.first_failure is None:
            self.first_failure = (str(exc), list(self.ops))

    # -- helpers
    def ids(self, *kinds: str) -> list[int]:
        return sorted(i for i, e in self.objs.items() if e.kind in kinds)

    def get(self, i: Any) -> Entry | None:
        return self.objs.get(i) if i is not None else None

    def add(self, i: int, kind: str, obj: Any, **info: Any) -> None:
        self.objs[i] = Entry(kind, obj, info=info)
        self.next_id = max(self.next_id, i + 1)

    def expect(self, op: str, allowed: Any, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Run ``fn``; its outcome must be in ``allowed`` (OK, ANY_ORT, an exception class, or a
        tuple of those). Returns (succeeded, result)."""
        allowed = allowed if isinstance(allowed, tuple) else (allowed,)
        try:
            result = fn()
        except BaseException as exc:  # noqa: BLE001 - every outcome is checked
            name = type(exc).__name__
            self.outcomes[name] = self.outcomes.get(name, 0) + 1
            for a in allowed:
                if isinstance(a, type) and type(exc) is a:
                    return False, exc
                if a == ANY_ORT and isinstance(exc, ortc.OrtError):
                    return False, exc
            raise Mismatch(f"{op}: expected {self._show(allowed)}, got {name}: {exc}") from exc
        self.outcomes["ok"] = self.outcomes.get("ok", 0) + 1
        if OK not in allowed and ANY_ORT not in allowed:
            raise Mismatch(f"{op}: expected {self._show(allowed)}, it succeeded")
        return True, result

    @staticmethod
    def _show(allowed: tuple[Any, ...]) -> str:
        return " or ".join(a.__name__ if isinstance(a, type) else str(a) for a in allowed)

    def closed_or(self, *entries: Entry | None, then: Any = OK) -> Any:
        return ortc.ClosedError if any(e is not None and e.closed for e in entries) else then

    # -- SessionOptions
    def op_opts_new(self, i: int, k: int) -> None:
        ok, o = self.expect("SessionOptions()", OK, lambda: ortc.SessionOptions(**OPTION_SETS[k]))
        self.add(i, "opts", o, override=None)

    def op_opts_set(self, i: int, k: int) -> None:
        e = self.objs[i]
        name, value = SETTERS[k]
        bad = ortc.InvalidArgument if name == "graph_optimization_level" and value == 98 else OK
        self.expect(f"opts.{name} = {value!r}", self.closed_or(e, then=bad),
                    lambda: setattr(e.obj, name, value))

    def op_opts_config(self, i: int, k: int) -> None:
        e = self.objs[i]
        key, value = CONFIG[k]

        def go() -> None:
            e.obj.add_session_config_entry(key, value)
            got = e.obj.get_session_config_entry(key)
            if got != value:
                raise Mismatch(f"config entry {key!r}: set {value!r}, read {got!r}")

        self.expect("add_session_config_entry", self.closed_or(e), go)

    def op_opts_clone(self, i: int, src: int) -> None:
        e = self.objs[src]
        ok, o = self.expect("opts.clone()", self.closed_or(e), lambda: e.obj.clone())
        if ok:
            self.add(i, "opts", o, override=e.info["override"])

    def op_opts_init(self, i: int, vid: int) -> None:
        e, v = self.objs[i], self.objs[vid]
        twice = InvalidArgument if e.info["override"] is not None else OK  # one per name
        ok, _ = self.expect("opts.add_initializer('b0', value)", self.closed_or(e, v, then=twice),
                            lambda: e.obj.add_initializer("b0", v.obj))
        if ok:
            e.info["override"] = v.info["d"]
            v.info["initializer"] = True

    # -- Session
    def op_sess_new(self, i: int, model: str, oid: Any, k: int) -> None:
        o = self.get(oid)
        kwargs = SESSION_KWARGS[k]
        # an initializer the model lacks ("b0" is the mlp's) is refused, not ignored by ORT
        lacks = o is not None and o.info["override"] is not None and model != "mlp"
        ok, s = self.expect(f"Session({model})",
                            self.closed_or(o, then=InvalidArgument if lacks else OK),
                            lambda: ortc.Session(model_bytes(model), o.obj if o else None,
                                                 **kwargs))
        if ok:
            override = o.info["override"] if o is not None and model == "mlp" else None
            self.add(i, "sess", s, model=model, override=override)

    def _feeds(self, s: Entry, mode: str, pick: int) -> tuple[dict[str, Any], dict[str, Any],
                                                             list[Entry]]:
        """(feeds, the data they stand for, the Value entries used)."""
        model = s.info["model"]
        data = feeds_for(model, pick % 4)
        if mode == "mapping":
            return FreshMapping(data), data, []  # type: ignore[return-value]
        if mode == "readonly":
            return {k: _read_only(v) for k, v in data.items()}, data, []
        if mode == "foreign":
            return {k: Producer(v) if isinstance(v, np.ndarray) and v.dtype.kind in "fiub"
                    else v for k, v in data.items()}, data, []
        if mode == "pairs":  # not a mapping: refused
            return list(data.items()), data, []  # type: ignore[return-value]
        if mode != "values":
            return dict(data), data, []
        feeds, used = {}, []
        for n, (name, kind) in enumerate(MODEL_INPUTS[model].items()):
            cands = [v for v in (self.objs[j] for j in self.ids("val"))
                     if v.info.get("vkind") == kind]
            if cands:
                v = cands[(pick + n) % len(cands)]
                feeds[name] = v.obj
                data[name] = v.info["data"]
                used.append(v)
            else:
                feeds[name] = data[name]
        return feeds, data, used

    def _check_outputs(self, what: str, s_info: dict[str, Any], data: dict[str, Any],
                       got: list[Any]) -> None:
        want = self.reference(s_info["model"], data, s_info["override"])
        if not same(got, want):
            raise Mismatch(f"{what}: wrong outputs {got!r}, expected {want!r}")

    def op_run(self, sid: int, mode: str, pick: int, roid: Any, timeout: Any = None) -> None:
        s, ro = self.objs[sid], self.get(roid)
        feeds, data, used = self._feeds(s, mode, pick)
        expected: Any = OK
        if mode == "pairs":
            expected = ortc.InvalidArgument
        elif mode == "badname":
            feeds["nope"] = np.zeros(1, np.float32)
            expected = ortc.InvalidArgument
        elif mode == "baddtype":
            name = next(iter(MODEL_INPUTS[s.info["model"]]))
            feeds[name] = np.zeros(3, np.float64)
            expected = ortc.InvalidArgument
        elif any(v.closed for v in used):
            expected = ortc.ClosedError
        elif ro is not None and ro.info["terminated"]:
            expected = (OK, ortc.Fail)
        if s.closed or (ro is not None and ro.closed):
            # the marker's guard entries (the session, its run options) come before the feeds
            expected = ortc.ClosedError
        ok, out = self.expect(f"run({mode})", expected, lambda: s.obj.run(
            None, feeds, ro.obj if ro else None, timeout=timeout))
        if ok and mode in GOOD_FEEDS:
            self._check_outputs("run", s.info, data, out)

    def op_kint(self, sid: int, pick: int, delay_us: int) -> None:
        """A run that a KeyboardInterrupt from a signal handler may stop at any point: it ends
        with the right outputs or KeyboardInterrupt, and leaves no guard entry behind (the
        end of the sequence checks that nothing leaked)."""
        s = self.objs[sid]
        feeds, data, _ = self._feeds(s, "arrays", pick)
        armed = [False]

        def interrupt(_signum: int, _frame: Any) -> None:
            if armed[0]:  # only inside the run: the harness itself is not under test
                raise KeyboardInterrupt

        def go() -> Any:
            armed[0] = True
            try:
                return s.obj.run(None, feeds)
            finally:
                armed[0] = False

        old = signal.signal(signal.SIGALRM, interrupt)
        try:
            signal.setitimer(signal.ITIMER_REAL, max(delay_us, 1) * 1e-6)
            ok, out = self.expect("run (interrupted)", (self.closed_or(s), KeyboardInterrupt), go)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        guard = s.obj._guard
        if guard is not None and guard.busy():
            raise Mismatch(f"an interrupted run left guard entries {dict(guard.calls)}")
        if ok:
            self._check_outputs("run (interrupted)", s.info, data, out)

    def op_run_values(self, sid: int, first: int, pick: int) -> None:
        s = self.objs[sid]
        feeds, data, used = self._feeds(s, "values", pick)
        expected = self.closed_or(s, *used)
        ok, out = self.expect("run_with_values", expected,
                              lambda: s.obj.run_with_values(None, feeds))
        if ok:
            want = self.reference(s.info["model"], data, s.info["override"])
            for n, (v, w) in enumerate(zip(out, want)):
                if v is None:
                    raise Mismatch("run_with_values returned None for a tensor output")
                self.add(first + n, "val", v, vkind="out", d=None, data=w)
            if not same(out, want):
                raise Mismatch("run_with_values: wrong outputs")

    def op_meta(self, sid: int, what: str) -> None:
        s = self.objs[sid]
        calls: dict[str, Callable[[], Any]] = {
            "inputs": lambda: s.obj.inputs, "outputs": lambda: s.obj.outputs,
            "metadata": lambda: s.obj.metadata(), "providers": lambda: s.obj.providers,
            "overridable": lambda: s.obj.overridable_initializers,
            "profiling": lambda: s.obj.profiling_start_ns(), "repr": lambda: repr(s.obj),
            "rules": lambda: s.obj.thread_rules(),
        }
        expected = OK if what in ("repr", "rules") else self.closed_or(s)
        ok, out = self.expect(f"session.{what}", expected, calls[what])
        if ok and what == "inputs" and [a.name for a in out] != list(
                MODEL_INPUTS[s.info["model"]]):
            raise Mismatch(f"inputs {out}")

    # -- IoBinding
    def op_bind_new(self, i: int, sid: int) -> None:
        s = self.objs[sid]
        ok, b = self.expect("io_binding()", self.closed_or(s), lambda: s.obj.io_binding())
        if ok:
            self.add(i, "bind", b, sid=sid, sess=s.obj, model=s.info["model"],
                     override=s.info["override"], inputs={}, outputs={}, ran=False)

    def op_bind_in(self, bid: int, n: int, src: Any, d: int) -> None:
        b = self.objs[bid]
        name, kind = list(MODEL_INPUTS[b.info["model"]].items())[n % len(
            MODEL_INPUTS[b.info["model"]])]
        v = self.get(src)
        if v is not None:
            obj, data = v.obj, v.info["data"]
        else:
            obj = data = make_data(kind, d)
        # bind_input takes arrays and Values; a list or dict (run() takes those for sequence
        # and map inputs) is refused
        plain = InvalidArgument if isinstance(obj, (list, dict)) else OK
        ok, _ = self.expect(f"bind_input({name!r})", self.closed_or(b, v, then=plain),
                            lambda: b.obj.bind_input(name, obj))
        if ok:
            b.info["inputs"][name] = data

    def op_bind_out(self, bid: int, n: int, mode: str) -> None:
        b = self.objs[bid]
        outs = MODEL_OUTPUTS[b.info["model"]]
        name = list(outs)[n % len(outs)]
        spec = outs[name]
        arr = np.empty(*spec) if spec is not None and mode == "array" else None
        ok, _ = self.expect(f"bind_output({name!r}, {mode})", self.closed_or(b),
                            lambda: b.obj.bind_output(name, arr))
        if ok:
            b.info["outputs"][name] = arr

    def op_run_bind(self, sid: int, bid: int, roid: Any) -> None:
        s, b, ro = self.objs[sid], self.objs[bid], self.get(roid)
        model = b.info["model"]
        complete = set(b.info["inputs"]) >= set(MODEL_INPUTS[model]) and b.info["outputs"]
        if s.closed or b.closed:
            expected: Any = ortc.ClosedError
        elif b.info["sess"] is not s.obj:
            expected = ortc.InvalidArgument
        elif ro is not None and ro.closed:
            expected = ortc.ClosedError
        elif not complete:
            expected = ANY_ORT
        elif ro is not None and ro.info["terminated"]:
            expected = (OK, ortc.Fail)
        else:
            expected = OK

        def go() -> Any:
            s.obj.run_with_binding(b.obj, ro.obj if ro else None)
            return b.obj.get_outputs()

        ok, got = self.expect("run_with_binding", expected, go)
        if ok and complete:
            b.info["ran"] = True
            want = self.reference(model, b.info["inputs"], b.info["override"])
            names = list(MODEL_OUTPUTS[model])
            for name, g in zip(b.obj.output_names(), got):
                if not same(g, want[names.index(name)]):
                    raise Mismatch(f"run_with_binding: output {name!r} is {g!r}, expected "
                                   f"{want[names.index(name)]!r}")
                arr = b.info["outputs"].get(name)
                if arr is not None and not same(arr, want[names.index(name)]):
                    raise Mismatch(f"run_with_binding: bound array {name!r} not written")

    def op_bind_get(self, bid: int, how: str, first: int) -> None:
        b = self.objs[bid]
        calls = {"outputs": lambda: b.obj.get_outputs(),
                 "values": lambda: b.obj.get_output_values(),
                 "names": lambda: b.obj.output_names(),
                 "sync": lambda: (b.obj.synchronize_inputs(), b.obj.synchronize_outputs())}
        ok, out = self.expect(f"binding.{how}", self.closed_or(b), calls[how])
        if ok and how == "values":
            for n, v in enumerate(out):
                self.add(first + n, "val", v, vkind="opaque", d=None, data=None)

    def op_bind_clear(self, bid: int, which: str) -> None:
        b = self.objs[bid]
        fn = b.obj.clear_binding_inputs if which == "inputs" else b.obj.clear_binding_outputs
        ok, _ = self.expect(f"clear_binding_{which}", self.closed_or(b), fn)
        if ok:
            b.info[which] = {}

    # -- RunOptions
    def op_ro_new(self, i: int, k: int) -> None:
        kw = [{}, {"tag": "fuzz"}, {"log_severity_level": 3}][k]
        ok, ro = self.expect("RunOptions()", OK, lambda: ortc.RunOptions(**kw))
        self.add(i, "ro", ro, terminated=False)

    def op_ro_set(self, i: int, k: int) -> None:
        e = self.objs[i]
        calls: list[Callable[[], Any]] = [
            lambda: setattr(e.obj, "tag", "t"), lambda: e.obj.tag,
            lambda: setattr(e.obj, "log_severity_level", 2), lambda: e.obj.log_verbosity_level,
            # (not memory.enable_memory_arena_shrinkage: runs of arena-less sessions refuse it)
            lambda: e.obj.add_run_config_entry("ortc.fuzz.entry", "é"),
            lambda: repr(e.obj),
        ]
        self.expect(f"run options #{k}", OK if k == 5 else self.closed_or(e), calls[k])

    def op_ro_term(self, i: int, on: bool) -> None:
        e = self.objs[i]
        ok, _ = self.expect("terminate" if on else "unset_terminate", self.closed_or(e),
                            e.obj.terminate if on else e.obj.unset_terminate)
        if ok:
            e.info["terminated"] = on

    # -- Value
    def op_val_new(self, i: int, vkind: str, d: int) -> None:
        data = make_data(vkind, d)
        make = (ortc.Value.from_sequence if vkind == "seq" else
                ortc.Value.from_map if vkind == "map" else ortc.Value.from_numpy)
        # pass a copy: the Value alone keeps its buffer alive
        src = ([x.copy() for x in data] if isinstance(data, list) else
               dict(data) if isinstance(data, dict) else data.copy())
        ok, v = self.expect(f"Value({vkind})", OK, lambda: make(src))
        del src
        self.add(i, "val", v, vkind=vkind, d=d, data=data)

    def op_val_ro(self, i: int, vkind: str, d: int) -> None:
        """A tensor Value over read-only memory: usable as an input, never written."""
        data = make_data(vkind, d)
        ok, v = self.expect(f"Value(read-only {vkind})", OK,
                            lambda: ortc.Value.from_numpy(_read_only(data)))
        if v.writable or v.numpy().flags.writeable:
            raise Mismatch("a Value over read-only memory reports writable memory")
        self.add(i, "val", v, vkind=vkind, d=d, data=data, readonly=True)

    def op_val_copy(self, vid: int, new: int, deep: bool) -> None:
        import copy as copy_module

        v = self.objs[vid]
        data = v.info["data"]
        tensor = isinstance(data, np.ndarray) and v.info["vkind"] != "opaque"
        if v.closed:
            expected: Any = ortc.ClosedError
        elif v.info["vkind"] == "opaque":
            expected = (OK, TypeError)
        else:
            # sequences and maps copy by value (as they pickle: their parts); what cannot be
            # rebuilt (an empty optional, a sparse tensor) raises TypeError
            expected = OK if tensor else (OK, TypeError)
        ok, c = self.expect("copy(value)", expected,
                            lambda: (copy_module.deepcopy if deep else copy_module.copy)(v.obj))
        if ok:
            if c is v.obj or c._ptr == v.obj._ptr:
                raise Mismatch("a copy of a Value shares its handle")
            self.add(new, "val", c, vkind=v.info["vkind"], d=v.info["d"], data=data)

    def op_val_read(self, vid: int, how: str, new: int) -> None:
        v = self.objs[vid]
        tensor = not isinstance(v.info["data"], (list, dict)) and v.info["vkind"] != "opaque"
        opaque = v.info["vkind"] == "opaque"
        calls: dict[str, Callable[[], Any]] = {
            "numpy": v.obj.numpy, "to_python": v.obj.to_python, "shape": lambda: v.obj.shape,
            "kind": lambda: v.obj.kind, "len": lambda: len(v.obj),
            "type_info": lambda: v.obj.type_info, "memory_info": lambda: v.obj.memory_info,
            "repr": lambda: repr(v.obj), "has_value": v.obj.has_value,
            "is_tensor": lambda: v.obj.is_tensor, "dtype": lambda: v.obj.dtype,
            "fill": lambda: v.obj.fill(v.info["data"]),  # the same data: the model stays true
        }
        expected: Any = OK
        if how in ("numpy", "shape", "dtype", "memory_info") and not tensor:
            expected = ANY_ORT if how != "numpy" else ortc.InvalidArgument
        if opaque or (how == "len" and tensor and np.ndim(v.info["data"]) == 0):
            expected = (OK, ANY_ORT, TypeError)
        if how == "fill":
            numeric = tensor and np.asarray(v.info["data"]).dtype.kind in "fiub"
            expected = (OK if numeric and not v.info.get("readonly")
                        else ortc.InvalidArgument)
            if opaque:
                expected = (OK, ortc.InvalidArgument, ANY_ORT)
        if how != "repr" and v.closed:
            expected = ortc.ClosedError
        ok, out = self.expect(f"value.{how}", expected, calls[how])
        if not ok or opaque:
            if ok and how == "memory_info":
                self.add(new, "mi", out)
            return
        if how == "numpy":
            if not same(out, v.info["data"]):
                raise Mismatch(f"value.numpy(): {out!r} != {v.info['data']!r}")
            self.add(new, "arr", out, data=v.info["data"])
        elif how == "to_python" and not same(out, v.info["data"]):
            raise Mismatch(f"value.to_python(): {out!r} != {v.info['data']!r}")
        elif how == "memory_info":
            self.add(new, "mi", out)
        elif how == "kind" and out != (ValueKind.TENSOR if tensor else
                                       ValueKind.SEQUENCE if isinstance(v.info["data"], list)
                                       else ValueKind.MAP):
            raise Mismatch(f"value.kind: {out}")

    def op_arr_check(self, aid: int) -> None:
        a = self.objs[aid]
        if not same(a.obj, a.info["data"]):
            raise Mismatch("an array from Value.numpy() changed: it views freed memory")
        self.expect("array read", OK, lambda: float(np.asarray(a.obj, dtype=object).size))

    # -- Allocator and MemoryInfo
    def op_alloc_new(self, i: int, sid: int) -> None:
        s = self.objs[sid]
        ok, a = self.expect("session.allocator()", self.closed_or(s), lambda: s.obj.allocator())
        if ok:
            self.add(i, "alloc", a)

    def op_alloc_use(self, i: int, how: str, new: int) -> None:
        a = self.objs[i]

        def alloc_free() -> None:
            p = a.obj.alloc(64)
            a.obj.free(p)

        calls = {"alloc": alloc_free, "stats": a.obj.stats,
                 "memory_info": lambda: a.obj.memory_info}
        ok, out = self.expect(f"allocator.{how}", self.closed_or(a), calls[how])
        if ok and how == "memory_info":
            self.add(new, "mi", out)

    def op_mi_new(self, i: int, how: str) -> None:
        make = ortc.MemoryInfo.cpu if how == "cpu" else (lambda: ortc.MemoryInfo("Cpu"))
        ok, m = self.expect(f"MemoryInfo({how})", OK, make)
        self.add(i, "mi", m)

    def op_mi_use(self, i: int, other: int, how: str) -> None:
        m, o = self.objs[i], self.objs[other]
        calls = {"name": lambda: m.obj.name, "id": lambda: m.obj.device_id,
                 "type": lambda: (m.obj.allocator_type, m.obj.mem_type),
                 "same": lambda: m.obj == o.obj, "repr": lambda: repr(m.obj)}
        entries = (m, o) if how == "same" else (m,)
        expected = OK if how == "repr" else self.closed_or(*entries)
        self.expect(f"memory_info.{how}", expected, calls[how])

    # -- lifetimes
    def op_close(self, i: int) -> None:
        e = self.objs[i]
        if e.kind in ("arr", "fut"):
            del self.objs[i]
            return
        self.expect(f"{e.kind}.close()", OK, e.obj.close)
        e.closed = True

    def op_drop(self, i: int) -> None:
        del self.objs[i]

    def op_gc(self) -> None:
        gc.collect()

    def op_env(self, k: int) -> None:
        calls = [lambda: ortc.get_env().providers(), lambda: ortc.get_env().close(),
                 ortc.available_providers, lambda: ortc.get_env().log_severity_level]
        self.expect("env", OK, calls[k])

    # -- threads
    def op_thread(self, inner: list[Any]) -> None:
        """Run one op on another thread (every ortc type is Send)."""
        err: list[BaseException] = []

        def target() -> None:
            try:
                getattr(self, "op_" + inner[0])(*inner[1:])
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                err.append(exc)

        t = threading.Thread(target=target)
        t.start()
        t.join()
        if err:
            raise err[0]

    def op_race(self, sid: int, what: str, policy: str, other: Any) -> None:
        """A thread runs ``sid`` in a loop while the main thread closes it (or ``other``), or
        runs a binding concurrently; outcomes depend on timing, so the model is resynced."""
        s = self.objs[sid]
        o = self.get(other)
        feeds = feeds_for(s.info["model"], 0)
        ro = o.obj if o is not None and o.kind == "ro" else None
        b = o.obj if o is not None and o.kind == "bind" else None
        old = ortc.set_thread_checks(policy)
        errors: list[BaseException] = []
        started = threading.Event()

        def loop() -> None:
            try:
                for _ in range(20):
                    started.set()
                    if b is not None:
                        s.obj.run_with_binding(b)
                    else:
                        s.obj.run(None, feeds, ro)
            except (ortc.ClosedError, ortc.ConcurrentUseError, ortc.InvalidArgument, ortc.Fail):
                pass
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
            finally:
                started.set()

        t = threading.Thread(target=loop)
        try:
            t.start()
            started.wait()
            main_allowed = (OK, ortc.ConcurrentUseError, ortc.ClosedError,
                            ortc.InvalidArgument, ortc.Fail)
            if what == "close":
                self.expect("close() racing a run", main_allowed, s.obj.close)
            elif what == "close_other" and o is not None:
                self.expect("close() racing a run", main_allowed, o.obj.close)
            elif what == "run":
                if b is not None:
                    self.expect("binding run racing", main_allowed,
                                lambda: s.obj.run_with_binding(b))
                else:
                    self.expect("run racing a run", main_allowed,
                                lambda: s.obj.run(None, feeds, ro))
        finally:
            t.join()
            ortc.set_thread_checks(old)
        if errors:
            raise Mismatch(f"racing thread raised {errors[0]!r}") from errors[0]
        # whatever the timing, end in one state (hypothesis replays sequences and wants the
        # same preconditions each time): what the main thread tried to close is closed
        target = s if what == "close" else o if what == "close_other" else None
        if target is not None:
            self.expect("close() after the race", OK, target.obj.close)
            target.closed = True

    # -- fork
    def op_fork(self) -> None:
        """In a forked child every inherited handle raises ForkedHandleError (ClosedError when
        closed) but an open Session, which is rebuilt from its recipe and works; nothing
        crashes or hangs, and new objects work."""
        r, w = os.pipe()
        self.forks += 1
        pid = os.fork()
        if pid == 0:  # the child: report through the pipe, never return into the caller
            msg = ""
            try:
                msg = self._forked_checks()
            except BaseException as exc:  # noqa: BLE001
                msg = f"{type(exc).__name__}: {exc}"
            os.write(w, msg.encode()[:4000] or b"")
            os._exit(1 if msg else 0)
        os.close(w)
        import select

        # the child closes the pipe when it exits: wait for that, up to a minute
        ready, _, _ = select.select([r], [], [], 60)
        msg = os.read(r, 4096).decode(errors="replace") if ready else ""
        if not ready:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(r)
        if not ready:
            raise Mismatch("a forked child hung")
        if os.WIFSIGNALED(status):
            raise Mismatch(f"a forked child died of signal {os.WTERMSIG(status)}")
        if os.WEXITSTATUS(status):
            raise Mismatch(f"in a forked child: {msg}")

    def _forked_checks(self) -> str:
        problems = []
        uses: dict[str, Callable[[Any], Any]] = {
            "opts": lambda o: setattr(o, "intra_op_num_threads", 1),
            "sess": lambda o: o.metadata(), "ro": lambda o: o.tag,
            "val": lambda o: o.shape, "bind": lambda o: o.output_names(),
            "alloc": lambda o: o.stats(), "mi": lambda o: o.name,
        }
        for i, e in sorted(self.objs.items()):
            if e.kind == "fut":  # the parent's run: its completion never comes here
                continue
            if e.kind == "arr":
                if not same(e.obj, e.info["data"]):
                    problems.append(f"array {i} changed")
                continue
            want = ortc.ClosedError if e.closed else ortc.ForkedHandleError
            try:
                uses[e.kind](e.obj)
                if e.kind != "sess" or e.closed:  # an open session is rebuilt: no error
                    problems.append(f"{e.kind} {i}: no error")
            except BaseException as exc:  # noqa: BLE001
                if type(exc) is not want or (e.kind == "sess" and not e.closed):
                    problems.append(f"{e.kind} {i}: {type(exc).__name__}: {exc}")
            e.obj.close()  # releases nothing in the child (the pid check), must not crash
        v = ortc.Value.from_numpy(np.arange(3.0))
        if v.numpy().tolist() != [0.0, 1.0, 2.0]:
            problems.append("a new Value in the child")
        try:  # the process-wide Env predates the fork: ortc may refuse new sessions
            with ortc.Session(model_bytes("add"), intra_op_num_threads=1) as s:
                f = feeds_for("add", 0)
                if not same(s.run(None, f), [f["a"] + f["b"]]):
                    problems.append("a new Session in the child")
        except ortc.ForkedHandleError:
            pass
        return "; ".join(problems)

    # -- model files, library files, asynchronous runs, compat pointers
    def _make_files(self) -> dict[str, str]:
        """A folder tree for the ops below: top/secret.bin outside, top/m the model's folder
        (w.bin, sub/w.bin, a symlink inside, one out, a symlinked folder out, a FIFO), and
        custom-op libraries cut short."""
        import atexit

        top = tempfile.mkdtemp(prefix="ortc-fuzz-")
        pid = os.getpid()
        atexit.register(lambda: os.getpid() == pid and shutil.rmtree(top, True))
        m = os.path.join(top, "m")
        os.makedirs(os.path.join(m, "sub"))
        os.makedirs(os.path.join(top, "out"))
        for path, data in [("secret.bin", b"SECRET!!"), ("out/w.bin", b"SECRET!!"),
                           ("m/w.bin", EXT_DATA), ("m/sub/w.bin", EXT_DATA)]:
            with open(os.path.join(top, path), "wb") as f:
                f.write(data)
        os.symlink(os.path.join(m, "sub", "w.bin"), os.path.join(m, "inner.bin"))
        os.symlink(os.path.join(top, "secret.bin"), os.path.join(m, "link.bin"))
        os.symlink(os.path.join(top, "out"), os.path.join(m, "linked"))
        os.mkfifo(os.path.join(m, "fifo.bin"))
        files = {"top": top, "m": m}
        try:
            import glob
            from importlib import metadata

            pkg = metadata.distribution("onnxruntime-extensions").locate_file(
                "onnxruntime_extensions")
            [lib] = glob.glob(os.path.join(str(pkg), "_extensions_pydll*.so"))
        except (ImportError, ValueError, metadata.PackageNotFoundError):
            lib = ortc.version().library_path  # any shared object will do, cut short
        with open(lib, "rb") as f:
            whole = f.read()
        for k, cut in enumerate(LIB_CUTS):
            n = int(len(whole) * cut) if isinstance(cut, float) else cut
            path = os.path.join(top, f"cut{k}.so")
            with open(path, "wb") as f:
                f.write(whole[:n])
            files[f"cut{k}"] = path
        return files

    def op_ext_model(self, place: int, loc: int, src: str) -> None:
        """A model whose tensor's data is in a file: read when it is in the model's folder (or
        the folder the options name), refused naming the location otherwise."""
        import models

        location, inside = EXT_LOCATIONS[loc]
        if location == "ABS":
            location = os.path.join(self._files["top"], "secret.bin")
        model = models.external_data_model(location, place=EXT_PLACES[place])
        m = self._files["m"]
        path = os.path.join(m, f"model{place}_{loc}.onnx")
        with open(path, "wb") as f:
            f.write(model)
        opts = None
        if src == "folder":  # bytes, with the folder named (the current folder counts too)
            opts = ortc.SessionOptions()
            opts.add_session_config_entry(
                "session.model_external_initializers_file_folder_path", m)
        source: Any = {"path": path, "bytes": model, "folder": model}.get(src)
        if src == "file":
            import io

            source = io.BytesIO(model)
        here = os.getcwd()
        if src in ("bytes", "file"):
            os.chdir(m)  # where ORT looks for the data of a model from bytes
        try:
            expected = OK if inside else (OK, ANY_ORT) if inside is None else ortc.InvalidArgument
            ok, sess = self.expect("Session(external data)", expected,
                                   lambda: ortc.Session(source, opts))
            if not ok and inside is None:
                if isinstance(sess, ortc.InvalidArgument) and "external data location" in str(sess):
                    raise Mismatch(f"external data {location!r}: refused by ortc: {sess}")
                return
            if ok:
                try:
                    got = bytes(sess.run(None, {})[0])
                finally:
                    sess.close()
                want = bytes(8) if EXT_PLACES[place] == "training" else EXT_DATA
                if got != want:
                    raise Mismatch(f"external data {location!r}: read {got!r}")
            elif f"external data location {location!r}" not in str(sess):
                raise Mismatch(f"external data {location!r}: refused without naming it: {sess}")
        finally:
            os.chdir(here)
            if opts is not None:
                opts.close()

    def op_lib(self, k: int, how: str) -> None:
        """A shared object cut short is refused as ortc.load refuses one (a SIGBUS before)."""
        path = self._files[f"cut{k}"]
        with ortc.SessionOptions() as opts:
            if how == "custom_ops":
                call: Callable[[], Any] = lambda: opts.register_custom_ops_library(path)
            else:
                call = lambda: opts.append_execution_provider("QNN", {"backend_path": path})
            ok, exc = self.expect(f"{how}(cut{k})", (ortc.LibraryNotFoundError, ANY_ORT), call)
            if not ok and isinstance(exc, ortc.LibraryNotFoundError) and "truncated" not in str(exc):
                raise Mismatch(f"{how}(cut{k}): {exc}")
            if not ok and not isinstance(exc, ortc.LibraryNotFoundError) and LIB_CUTS[k] != 64:
                raise Mismatch(f"{how}(cut{k}): not refused as truncated: {exc}")

    def op_run_async(self, i: int, sid: int, pick: int, mode: str) -> None:
        """Start a run_async; its Future is an object the sequence may wait on, drop, or
        outlive its session through (dropped or closed at any step)."""
        s = self.objs[sid]
        self._asyncs = True
        data = feeds_for(s.info["model"], pick % 4)
        feeds = dict(data)
        expected: Any = (OK, ANY_ORT)  # one intra-op thread: RunAsync refuses at once
        if mode == "baddtype":
            name = next(iter(MODEL_INPUTS[s.info["model"]]))
            feeds[name] = np.zeros(3, np.float64)
            # an optional input's type is left to ORT, which may report it on completion
            expected = (ortc.InvalidArgument, OK) if s.info["model"] == "opt" \
                else ortc.InvalidArgument
        if s.closed:
            expected = ortc.ClosedError
        ok, fut = self.expect(f"run_async({mode})", expected,
                              lambda: s.obj.run_async(None, feeds))
        if ok and mode == "baddtype":
            self.expect("run_async(baddtype).result()", ortc.InvalidArgument,
                        lambda: fut.result(60))
        elif ok:
            self.add(i, "fut", fut, data=data, model=s.info["model"],
                     override=s.info["override"])

    def op_fut_wait(self, fid: int) -> None:
        f = self.objs[fid]
        ok, out = self.expect("future.result()", OK, lambda: f.obj.result(60))
        if ok:
            self._check_outputs("run_async", f.info, f.info["data"], out)

    def _settle_async(self) -> None:
        """Wait for every run_async of the sequence to complete and for ortc's releaser thread
        to take the releases its completion queued (no sentinel is queued behind them: the
        thread keeping the last job it ran is one of the faults looked for)."""
        from ortc._callbacks import pending_jobs, releaser

        end = time.monotonic() + 60
        while (pending_jobs() or not releaser.queue.empty()) and time.monotonic() < end:
            time.sleep(0.001)

    def op_compat_ptr(self, k: int, which: str) -> None:
        """compat's IOBinding given a raw pointer: one it cannot use raises onnxruntime's class
        (onnxruntime itself binds 0, negative and unmapped input pointers, then crashes)."""
        value, for_input, for_output = COMPAT_POINTERS[k]
        b = self._compat.io_binding()
        a = np.arange(3, dtype=np.float32)
        out = np.zeros(3, np.float32)
        ptr = (a if which == "in" else out).ctypes.data if value == "valid" else value
        if which == "in":
            call: Callable[[], Any] = lambda: b.bind_input("a", "cpu", 0, np.float32, [3], ptr)
        else:
            call = lambda: b.bind_output("c", "cpu", 0, np.float32, [3], ptr)
        ok, _ = self.expect(f"compat bind_{which}({value!r})",
                            for_input if which == "in" else for_output, call)
        if ok:
            if which == "in":
                b.bind_cpu_input("b", a)
                b.bind_output("c")
            else:
                b.bind_cpu_input("a", a)
                b.bind_cpu_input("b", a)
            self._compat.run_with_iobinding(b)
            got = b.copy_outputs_to_cpu()[0]
            if got.tolist() != (a + a).tolist() or (which == "out" and value == "valid"
                                                    and out.tolist() != (a + a).tolist()):
                raise Mismatch(f"compat bound run: {got!r}")

    # -- self-test of the crash machinery (never generated by the machine)
    def op_boom(self) -> None:
        import ctypes

        ctypes.string_at(0)


# -- the hypothesis state machine -------------------------------------------------------------

def make_machine(world: World) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

    ints = st.integers(0, 1 << 16)

    def pick(ids: list[int], n: int) -> int:
        return ids[n % len(ids)]

    def has(*kinds: str) -> Callable[[Any], bool]:
        return lambda self: bool(world.ids(*kinds))

    class OrtcMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            world.begin()
            self.forked = False

        def teardown(self) -> None:
            world.end()

        def _id(self) -> int:
            return world.next_id

        def _maybe(self, kinds: tuple[str, ...], n: int) -> Any:
            ids = world.ids(*kinds)
            return pick(ids, n) if ids and n % 3 else None

        # SessionOptions
        @rule(k=st.integers(0, len(OPTION_SETS) - 1))
        def opts_new(self, k: int) -> None:
            world.do(["opts_new", self._id(), k])

        @precondition(has("opts"))
        @rule(n=ints, k=st.integers(0, len(SETTERS) - 1))
        def opts_set(self, n: int, k: int) -> None:
            world.do(["opts_set", pick(world.ids("opts"), n), k])

        @precondition(has("opts"))
        @rule(n=ints, k=st.integers(0, len(CONFIG) - 1))
        def opts_config(self, n: int, k: int) -> None:
            world.do(["opts_config", pick(world.ids("opts"), n), k])

        @precondition(has("opts"))
        @rule(n=ints)
        def opts_clone(self, n: int) -> None:
            world.do(["opts_clone", self._id(), pick(world.ids("opts"), n)])

        @precondition(lambda self: bool(world.ids("opts")) and any(
            world.objs[i].info.get("vkind") == "b0" for i in world.ids("val")))
        @rule(n=ints, m=ints)
        def opts_init(self, n: int, m: int) -> None:
            b0 = [i for i in world.ids("val") if world.objs[i].info.get("vkind") == "b0"]
            world.do(["opts_init", pick(world.ids("opts"), n), pick(b0, m)])

        # Session
        @rule(model=st.sampled_from(MODEL_NAMES), n=ints,
              k=st.integers(0, len(SESSION_KWARGS) - 1))
        def sess_new(self, model: str, n: int, k: int) -> None:
            world.do(["sess_new", self._id(), model, self._maybe(("opts",), n), k])

        @precondition(has("sess"))
        @rule(n=ints, mode=st.sampled_from(["arrays", "values", "values", "badname",
                                            "baddtype", "mapping", "readonly", "foreign",
                                            "pairs"]),
              p=ints, r=ints, timeout=st.sampled_from([None, None, None, 60]))
        def run(self, n: int, mode: str, p: int, r: int, timeout: Any) -> None:
            world.do(["run", pick(world.ids("sess"), n), mode, p % 4,
                      self._maybe(("ro",), r), timeout])

        @precondition(lambda self: INTERRUPTS and bool(world.ids("sess")))
        @rule(n=ints, p=ints, delay=st.integers(0, 400))
        def kint(self, n: int, p: int, delay: int) -> None:
            world.do(["kint", pick(world.ids("sess"), n), p % 4, delay])

        @precondition(has("sess"))
        @rule(n=ints, p=ints)
        def run_values(self, n: int, p: int) -> None:
            world.do(["run_values", pick(world.ids("sess"), n), self._id(), p % 4])

        @precondition(has("sess"))
        @rule(n=ints, what=st.sampled_from(["inputs", "outputs", "metadata", "providers",
                                            "overridable", "profiling", "repr", "rules"]))
        def meta(self, n: int, what: str) -> None:
            world.do(["meta", pick(world.ids("sess"), n), what])

        # IoBinding
        @precondition(has("sess"))
        @rule(n=ints)
        def bind_new(self, n: int) -> None:
            world.do(["bind_new", self._id(), pick(world.ids("sess"), n)])

        @precondition(has("bind"))
        @rule(n=ints, k=ints, v=ints, d=st.integers(0, 3))
        def bind_in(self, n: int, k: int, v: int, d: int) -> None:
            bid = pick(world.ids("bind"), n)
            model = world.objs[bid].info["model"]
            names = list(MODEL_INPUTS[model].items())
            kind = names[k % len(names)][1]
            vals = [i for i in world.ids("val") if world.objs[i].info.get("vkind") == kind]
            src = pick(vals, v) if vals and v % 2 else None
            world.do(["bind_in", bid, k % len(names), src, d])

        @precondition(has("bind"))
        @rule(n=ints, k=ints, mode=st.sampled_from(["device", "array"]))
        def bind_out(self, n: int, k: int, mode: str) -> None:
            world.do(["bind_out", pick(world.ids("bind"), n), k % 4, mode])

        @precondition(has("bind"))
        @rule(n=ints, m=ints, r=ints)
        def run_bind(self, n: int, m: int, r: int) -> None:
            bid = pick(world.ids("bind"), n)
            own = world.objs[bid].info["sid"]
            sessions = world.ids("sess")
            sid = own if own in world.objs and m % 4 else (pick(sessions, m) if sessions
                                                            else None)
            if sid is None:
                return
            world.do(["run_bind", sid, bid, self._maybe(("ro",), r)])

        @precondition(has("bind"))
        @rule(n=ints, how=st.sampled_from(["outputs", "values", "names", "sync"]))
        def bind_get(self, n: int, how: str) -> None:
            world.do(["bind_get", pick(world.ids("bind"), n), how, self._id()])

        @precondition(has("bind"))
        @rule(n=ints, which=st.sampled_from(["inputs", "outputs"]))
        def bind_clear(self, n: int, which: str) -> None:
            world.do(["bind_clear", pick(world.ids("bind"), n), which])

        # RunOptions
        @rule(k=st.integers(0, 2))
        def ro_new(self, k: int) -> None:
            world.do(["ro_new", self._id(), k])

        @precondition(has("ro"))
        @rule(n=ints, k=st.integers(0, 5))
        def ro_set(self, n: int, k: int) -> None:
            world.do(["ro_set", pick(world.ids("ro"), n), k])

        @precondition(has("ro"))
        @rule(n=ints, on=st.booleans())
        def ro_term(self, n: int, on: bool) -> None:
            world.do(["ro_term", pick(world.ids("ro"), n), on])

        # Value
        @rule(kind=st.sampled_from(VALUE_KINDS), d=st.integers(0, 3))
        def val_new(self, kind: str, d: int) -> None:
            world.do(["val_new", self._id(), kind, d])

        @rule(kind=st.sampled_from(NUMERIC_KINDS), d=st.integers(0, 3))
        def val_ro(self, kind: str, d: int) -> None:
            world.do(["val_ro", self._id(), kind, d])

        @precondition(has("val"))
        @rule(n=ints, deep=st.booleans())
        def val_copy(self, n: int, deep: bool) -> None:
            world.do(["val_copy", pick(world.ids("val"), n), self._id(), deep])

        @precondition(has("val"))
        @rule(n=ints, how=st.sampled_from(["numpy", "numpy", "to_python", "shape", "kind",
                                           "len", "type_info", "memory_info", "repr",
                                           "has_value", "is_tensor", "dtype", "fill"]))
        def val_read(self, n: int, how: str) -> None:
            world.do(["val_read", pick(world.ids("val"), n), how, self._id()])

        @precondition(has("arr"))
        @rule(n=ints)
        def arr_check(self, n: int) -> None:
            world.do(["arr_check", pick(world.ids("arr"), n)])

        # Allocator, MemoryInfo
        @precondition(has("sess"))
        @rule(n=ints)
        def alloc_new(self, n: int) -> None:
            world.do(["alloc_new", self._id(), pick(world.ids("sess"), n)])

        @precondition(has("alloc"))
        @rule(n=ints, how=st.sampled_from(["alloc", "stats", "memory_info"]))
        def alloc_use(self, n: int, how: str) -> None:
            world.do(["alloc_use", pick(world.ids("alloc"), n), how, self._id()])

        @rule(how=st.sampled_from(["cpu", "named"]))
        def mi_new(self, how: str) -> None:
            world.do(["mi_new", self._id(), how])

        @precondition(has("mi"))
        @rule(n=ints, m=ints, how=st.sampled_from(["name", "id", "type", "same", "repr"]))
        def mi_use(self, n: int, m: int, how: str) -> None:
            ids = world.ids("mi")
            world.do(["mi_use", pick(ids, n), pick(ids, m), how])

        # model files, library files, asynchronous runs, compat pointers
        @rule(place=st.integers(0, len(EXT_PLACES) - 1),
              loc=st.integers(0, len(EXT_LOCATIONS) - 1), src=st.sampled_from(EXT_SOURCES))
        def ext_model(self, place: int, loc: int, src: str) -> None:
            world.do(["ext_model", place, loc, src])

        @rule(k=st.integers(0, len(LIB_CUTS) - 1),
              how=st.sampled_from(["custom_ops", "provider_option"]))
        def lib(self, k: int, how: str) -> None:
            world.do(["lib", k, how])

        @precondition(has("sess"))
        @rule(n=ints, p=ints, mode=st.sampled_from(["arrays", "arrays", "baddtype"]))
        def run_async(self, n: int, p: int, mode: str) -> None:
            world.do(["run_async", self._id(), pick(world.ids("sess"), n), p, mode])

        @precondition(has("fut"))
        @rule(n=ints)
        def fut_wait(self, n: int) -> None:
            world.do(["fut_wait", pick(world.ids("fut"), n)])

        @rule(k=st.integers(0, len(COMPAT_POINTERS) - 1), which=st.sampled_from(["in", "out"]))
        def compat_ptr(self, k: int, which: str) -> None:
            world.do(["compat_ptr", k, which])

        # lifetimes
        @precondition(lambda self: bool(world.objs))
        @rule(n=ints)
        def close(self, n: int) -> None:
            i = pick(sorted(world.objs), n)
            if world.objs[i].info.get("initializer") and not INITIALIZER_CLOSE_IS_SAFE:
                return
            world.do(["close", i])

        @precondition(lambda self: bool(world.objs))
        @rule(n=ints)
        def close_parent(self, n: int) -> None:
            # close a session that has children (bindings, allocators) first
            parents = sorted({e.info["sid"] for e in world.objs.values()
                              if e.kind == "bind" and e.info["sid"] in world.objs})
            if parents:
                world.do(["close", pick(parents, n)])

        @precondition(lambda self: bool(world.objs))
        @rule(n=ints, collect=st.booleans())
        def drop(self, n: int, collect: bool) -> None:
            world.do(["drop", pick(sorted(world.objs), n)])
            if collect:  # finalizers of whatever the drop made unreachable
                world.do(["gc"])

        @precondition(lambda self: bool(world.objs))
        @rule(k=st.integers(0, 3))
        def env(self, k: int) -> None:
            world.do(["env", k])

        # threads and processes
        @precondition(lambda self: bool(world.ids("sess", "val", "bind")))
        @rule(n=ints, what=st.sampled_from(["run", "val_read", "close", "run_bind", "meta"]))
        def on_thread(self, n: int, what: str) -> None:
            inner: list[Any] | None = None
            if what == "run" and world.ids("sess"):
                inner = ["run", pick(world.ids("sess"), n), "arrays", n % 4, None, None]
            elif what == "val_read" and world.ids("val"):
                inner = ["val_read", pick(world.ids("val"), n), "numpy", self._id()]
            elif what == "close":
                inner = ["close", pick(sorted(world.objs), n)]
            elif what == "run_bind" and world.ids("bind"):
                bid = pick(world.ids("bind"), n)
                sid = world.objs[bid].info["sid"]
                if sid in world.objs:
                    inner = ["run_bind", sid, bid, None]
            elif what == "meta" and world.ids("sess"):
                inner = ["meta", pick(world.ids("sess"), n), "inputs"]
            if inner is not None:
                world.do(["thread", inner])

        @precondition(has("sess"))
        @rule(n=ints, m=ints, what=st.sampled_from(["close", "run", "close_other"]),
              policy=st.sampled_from(["strict", "strict", "serialize", "off"]))
        def race(self, n: int, m: int, what: str, policy: str) -> None:
            sid = pick(world.ids("sess"), n)
            binds = [i for i in world.ids("bind") if world.objs[i].info["sid"] == sid]
            others = world.ids("ro") + binds
            other = pick(others, m) if others and m % 2 else None
            world.do(["race", sid, what, policy, other])

        @precondition(lambda self: not self.forked and bool(world.objs))
        @rule(k=st.integers(0, 3))
        def fork(self, k: int) -> None:
            self.forked = True  # forks are slow (a 7 ms fork, a child that starts a session)
            if k == 3:
                world.do(["fork"])

    return OrtcMachine


# -- child process entry points --------------------------------------------------------------

def child_batch(seed: int, sequences: int, steps: int, log: str) -> int:
    """Run ``sequences`` hypothesis examples; print a JSON summary line."""
    import hypothesis
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    import logging

    logging.getLogger("ortc.ort").setLevel(logging.CRITICAL)  # ORT's error logs: expected here
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    world = World(fd)
    machine = make_machine(world)
    conf = settings(max_examples=sequences, stateful_step_count=steps, deadline=None,
                    database=None, suppress_health_check=list(HealthCheck),
                    phases=[Phase.generate, Phase.shrink], print_blob=False)
    hypothesis.core.global_force_seed = seed  # what --hypothesis-seed sets: one seed per batch
    started = time.monotonic()
    try:
        run_state_machine_as_test(machine, settings=conf)
    except BaseException as exc:  # noqa: BLE001 - reported with the sequence that failed
        import traceback

        print(f"FAILED after {world.sequence} sequences:", file=sys.stderr)
        print("".join(traceback.format_exception(exc))[-8000:], file=sys.stderr)
        if world.first_failure is not None:
            msg, ops = world.first_failure
            print(f"first failure: {msg}\nin the sequence (replay it with `python "
                  f"tests/test_fuzz.py replay FILE`):\n{json.dumps(ops)}", file=sys.stderr)
        return 1
    print(json.dumps({"sequences": world.sequence, "steps": world.steps, "forks": world.forks,
                      "outcomes": world.outcomes,
                      "seconds": round(time.monotonic() - started, 2)}))
    return 0


def child_replay(path: str) -> int:
    """Replay a list of ops, or a list of sequences (lists of ops), in this process."""
    import logging

    logging.getLogger("ortc.ort").setLevel(logging.CRITICAL)
    with open(path) as f:
        data = json.load(f)
    seqs = [data] if data and isinstance(data[0][0], str) else data
    world = World()
    for ops in seqs:
        world.begin()
        try:
            for op in ops:
                world.do(op)
            world.end()
        except Mismatch as exc:
            print(f"FAILED: {exc}\nsequence: {json.dumps(world.ops)}", file=sys.stderr)
            return 1
    print(json.dumps({"sequences": len(seqs)}))
    return 0


# -- the parent: batches in parallel, crash triage --------------------------------------------

def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [env.get("PYTHONPATH", ""), ROOT, HERE] if p)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    return env


def parse_log(path: str) -> list[list[list[Any]]]:
    """The sequences of a batch log, in order; the last one was running when it stopped."""
    seqs: list[list[list[Any]]] = []
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut by the crash
            if isinstance(rec, dict):
                seqs.append([])
            elif seqs:
                seqs[-1].append(rec)
    return seqs


def describe(ops: list[list[Any]]) -> str:
    return "\n".join(f"  {i:3d}: {json.dumps(op)}" for i, op in enumerate(ops))


def _died(rc: int) -> bool:
    return rc < 0 or rc in (124, 137, 134, 139)


def run_replay(seqs: list[list[list[Any]]], workdir: str, timeout: float = 300
               ) -> tuple[int, str]:
    fd, path = tempfile.mkstemp(suffix=".json", dir=workdir)
    with os.fdopen(fd, "w") as f:
        json.dump(seqs, f)
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "replay", path],
                           capture_output=True, text=True, env=_env(), timeout=timeout)
        return p.returncode, p.stderr[-3000:]
    except subprocess.TimeoutExpired:
        return -signal.SIGKILL, "timed out"


def triage(log: str, workdir: str, max_single: int = 40) -> str:
    """Find the sequence of a crashed batch that crashes alone; describe it."""
    seqs = parse_log(log)
    if not seqs:
        return "the child died before its first sequence"
    order = list(range(len(seqs) - 1, -1, -1))[:max_single]  # the one in flight first
    for i in order:
        rc, err = run_replay([seqs[i]], workdir)
        if _died(rc):
            return (f"sequence {i + 1} of the batch crashes alone (exit {rc}); replay it with "
                    f"`python tests/test_fuzz.py replay FILE` on:\n{json.dumps(seqs[i])}\n"
                    f"{describe(seqs[i])}\n{err}")
    rc, err = run_replay(seqs, workdir)
    if _died(rc):
        return (f"the crash needs the history of the batch ({len(seqs)} sequences); the log "
                f"{log} reproduces it (exit {rc}):\n{err}")
    return (f"the crash did not reproduce in replays ({len(seqs)} sequences; the last one "
            f"was):\n{describe(seqs[-1])}")


@dataclass
class Report:
    sequences: int = 0
    steps: int = 0
    forks: int = 0
    batches: int = 0
    seconds: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)
    crashes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def summary(self) -> str:
        top = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items(),
                                                      key=lambda kv: -kv[1]))
        return (f"{self.sequences} sequences ({self.steps} ops, {self.forks} forks) in "
                f"{self.batches} child processes, {self.seconds:.0f} s; crashes: "
                f"{len(self.crashes)}, failures: {len(self.failures)}; outcomes: {top}")


def fuzz(sequences: int, jobs: int = 2, per_batch: int = 250, steps: int = 25, seed: int = 0,
         workdir: str | None = None, batch_timeout: float = 900, verbose: bool = False
         ) -> Report:
    """Run ``sequences`` sequences in batches of ``per_batch``, ``jobs`` children at once."""
    workdir = workdir or tempfile.mkdtemp(prefix="ortc-fuzz-")
    report = Report()
    started = time.monotonic()
    todo = [(seed * 100003 + b, min(per_batch, sequences - b * per_batch))
            for b in range((sequences + per_batch - 1) // per_batch)]
    running: list[tuple[subprocess.Popen[str], str, int, float]] = []
    while todo or running:
        while todo and len(running) < jobs:
            bseed, n = todo.pop(0)
            log = os.path.join(workdir, f"batch-{bseed}.log")
            p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "batch",
                                  "--seed", str(bseed), "--sequences", str(n), "--steps",
                                  str(steps), "--log", log], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=_env())
            running.append((p, log, bseed, time.monotonic()))
        time.sleep(0.05)
        for item in list(running):
            p, log, bseed, t0 = item
            if p.poll() is None:
                if time.monotonic() - t0 > batch_timeout:
                    p.kill()
                else:
                    continue
            out, err = p.communicate()
            running.remove(item)
            report.batches += 1
            rc = p.returncode
            if rc == 0:
                os.unlink(log)  # kept only for batches that failed
                s = json.loads(out.strip().splitlines()[-1])
                report.sequences += s["sequences"]
                report.steps += s["steps"]
                report.forks += s["forks"]
                for k, v in s["outcomes"].items():
                    report.outcomes[k] = report.outcomes.get(k, 0) + v
                if verbose:
                    print(f"batch {bseed}: {s['sequences']} sequences in {s['seconds']} s",
                          flush=True)
            elif _died(rc):
                report.sequences += len(parse_log(log))
                msg = f"batch seed {bseed} died (exit {rc}):\n{err[-3000:]}\n" + triage(
                    log, workdir)
                report.crashes.append(msg)
                if verbose:
                    print(msg, flush=True)
            else:
                report.sequences += len(parse_log(log))
                report.failures.append(f"batch seed {bseed} (exit {rc}):\n{err[-6000:]}")
                if verbose:
                    print(report.failures[-1], flush=True)
    report.seconds = time.monotonic() - started
    if not report.crashes and not report.failures:
        shutil.rmtree(workdir, ignore_errors=True)
    return report


# -- pytest ----------------------------------------------------------------------------------

CI_SEQUENCES = 2000


def test_fuzz_api_misuse() -> None:
    """>= 2,000 random misuse sequences in child processes: no crash, every outcome as the
    model predicts, no live handle left after a sequence."""
    report = fuzz(CI_SEQUENCES, jobs=max(2, min(4, os.cpu_count() or 2)), per_batch=250,
                  steps=25, seed=int(os.environ.get("ORTC_FUZZ_SEED", "1")))
    print(report.summary())
    assert not report.crashes, "\n\n".join(report.crashes)
    assert not report.failures, "\n\n".join(report.failures)
    assert report.sequences >= CI_SEQUENCES
    for outcome in ("ClosedError", "InvalidArgument", "ok"):
        assert report.outcomes.get(outcome, 0) > 0, report.outcomes


def test_a_crash_is_caught_and_its_sequence_found(tmp_path: Any) -> None:
    """The triage replays a dead batch's sequences one by one and names the one that crashes."""
    log = tmp_path / "batch.log"
    seqs = [[["val_new", 1, "f3", 0], ["val_read", 1, "numpy", 2]],
            [["ro_new", 1, 0], ["boom"]],
            [["val_new", 1, "f3", 1]]]
    with open(log, "w") as f:
        for n, ops in enumerate(seqs[:2]):
            f.write(json.dumps({"seq": n + 1}) + "\n")
            for op in ops:
                f.write(json.dumps(op) + "\n")
    text = triage(str(log), str(tmp_path))
    assert "sequence 2 of the batch crashes alone" in text, text
    assert '["boom"]' in text
    rc, _ = run_replay([seqs[0], seqs[2]], str(tmp_path))
    assert rc == 0


# -- regressions: what the fuzzer found, each as a small program ------------------------------

def _child_ok(code: str) -> None:
    from conftest import run_python

    p = run_python(code, timeout=120)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), (p.returncode, p.stderr[-2000:])


def test_regression_array_outlives_its_closed_value() -> None:
    """Value.numpy() then Value.close(): the array stays valid (it read freed memory)."""
    _child_ok("import numpy as np, ortc, gc\n"
              "v = ortc.Value.from_numpy(np.full(1 << 21, 3.0))\n"
              "a = v.numpy(); v.close(); gc.collect()\n"
              "assert a.sum() == 3.0 * (1 << 21)\n"
              "del a; gc.collect(); assert 'Value' not in ortc.live_handles()\n"
              "print('ok')")


def test_regression_bound_value_outlives_close() -> None:
    """A Value bound to an IoBinding and then closed stays alive until unbound (a run used
    to read freed memory)."""
    _child_ok("import numpy as np, ortc, gc, models\n"
              "s = ortc.Session(models.add_model(np.float32, ['n']), intra_op_num_threads=1)\n"
              "b = s.io_binding(); n = 1 << 21\n"
              "v = ortc.Value.from_numpy(np.full(n, 2.0, np.float32))\n"
              "b.bind_input('a', v); b.bind_input('b', np.ones(n, np.float32))\n"
              "b.bind_output('c'); v.close(); gc.collect()\n"
              "s.run_with_binding(b); assert (b.get_outputs()[0] == 3.0).all()\n"
              "b.clear_binding_inputs(); gc.collect()\n"
              "assert ortc.live_handles().get('Value', 0) == 0, ortc.live_handles()\n"
              "print('ok')")


def test_regression_gc_inside_the_tree_lock() -> None:
    """A collection that starts while ortc holds its tree lock runs finalizers that take it
    again: with a plain Lock that deadlocked (here within a few iterations)."""
    _child_ok("import gc, numpy as np, ortc\n"
              "class Cycle: pass\n"
              "vals = [ortc.Value.from_numpy(np.zeros(3)) for _ in range(400)]\n"
              "gc.set_threshold(1)\n"
              "for i in range(400):\n"
              "    c = Cycle(); c.self = c; c.v = vals.pop()\n"
              "    pad = [[] for _ in range(i % 3)]\n"
              "    del c, pad\n"
              "    ortc.live_handles()\n"
              "gc.set_threshold(700)\n"
              "print('ok')")


def test_regression_cancelled_deadlines_release_their_run_options() -> None:
    """run(timeout=...) that finishes in time: its RunOptions is released at once (the
    deadline heap held it until the deadline passed)."""
    import models

    with ortc.Session(models.add_model(np.float32, ["n"]), intra_op_num_threads=1) as s:
        f = feeds_for("add", 0)
        s.run(None, f, timeout=3600)
        gc.collect()
        before = ortc.live_handles().get("RunOptions", 0)
        for _ in range(50):
            s.run(None, f, timeout=3600)
        gc.collect()
        assert ortc.live_handles().get("RunOptions", 0) == before


# -- command line ----------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("batch", help="(child) run one batch of sequences")
    b.add_argument("--seed", type=int, required=True)
    b.add_argument("--sequences", type=int, required=True)
    b.add_argument("--steps", type=int, default=25)
    b.add_argument("--log", required=True)
    r = sub.add_parser("replay", help="replay a sequence (list of ops) or a list of sequences")
    r.add_argument("file")
    f = sub.add_parser("fuzz", help="run many sequences in parallel child processes")
    f.add_argument("--sequences", type=int, default=100_000)
    f.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    f.add_argument("--per-batch", type=int, default=500)
    f.add_argument("--steps", type=int, default=25)
    f.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    args = ap.parse_args(argv)
    if args.cmd == "batch":
        return child_batch(args.seed, args.sequences, args.steps, args.log)
    if args.cmd == "replay":
        return child_replay(args.file)
    print(f"fuzz: {args.sequences} sequences, seed {args.seed}, {args.jobs} jobs", flush=True)
    report = fuzz(args.sequences, args.jobs, args.per_batch, args.steps, args.seed,
                  verbose=True)
    print(report.summary())
    for text in report.crashes + report.failures:
        print(text)
    return 1 if report.crashes or report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
