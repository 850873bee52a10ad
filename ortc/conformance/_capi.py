"""Thin helpers over the raw OrtApi table for the checks (no ortc wrappers on purpose).

Everything here calls slots of :func:`ortc._loader.api` with cffi arguments, so the kit states
what the C API does, not what ortc's wrappers make of it. :class:`Ctx` is what a check receives:
the facade, the process's env, the default allocator, and a scope that releases what the check
created, in reverse order, when it ends.
"""

from __future__ import annotations

import os
import struct
import sys
import tempfile
from typing import Any, Callable, Sequence, cast

from .._enums import ErrorCode
from .._ffi import ffi
from .._loader import api
from ._registry import Fail, Known

__all__ = ["Ctx", "code_name", "shared_env", "join_all", "WAIT"]

#: the longest a check waits for its own threads (a join, a barrier): no wait is unbounded
WAIT = 30.0

_env: Any = None

#: glibc's mallopt parameter that fills freed (and newly allocated) heap blocks with a byte
_M_PERTURB = -6
#: the byte: freed memory reads 0xa5 bytes (pointers into nowhere), fresh memory 0x5a
_POISON = 0xA5


def code_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"code {code}"


def join_all(threads: Sequence[Any], timeout: float = WAIT) -> None:
    """Join ``threads`` (threading.Thread) within ``timeout`` seconds in all; fail the check
    when any is still running then, instead of waiting for it for ever. A thread left behind
    should be a daemon: it may still be inside ORT, and the process may not be usable after."""
    import time

    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = sum(1 for t in threads if t.is_alive())
    if alive:
        raise Fail(f"{alive} of {len(threads)} threads still running after {timeout:.0f} s "
                   "(a hang)")


def together(n: int, target: Callable[[int], None], timeout: float = WAIT
             ) -> tuple[list[str], set[int]]:
    """Run ``target(i)`` on ``n`` daemon threads released at once (a barrier), for checks whose
    claim is that calls may overlap: (the errors they raised, their native thread ids). The
    barrier and the joins are bounded (:func:`join_all`): a thread still running after
    ``timeout`` fails the check."""
    import threading

    errors: list[str] = []
    tids: set[int] = set()
    start = threading.Barrier(n, timeout=timeout)

    def body(i: int) -> None:
        tids.add(threading.get_native_id())
        try:
            start.wait()
            target(i)
        except Exception as exc:  # noqa: BLE001 - collected and reported by the check
            errors.append(f"{type(exc).__name__}: {exc}"[:200])

    ts = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    join_all(ts, timeout)
    return errors, tids


def mlp_input(seed: int, batch: int = 4, width: int = 32) -> list[float]:
    """Deterministic inputs for the MLP test model, different for each seed."""
    return [((seed * 131 + i * 17) % 97) / 97.0 - 0.5 for i in range(batch * width)]


def shared_env() -> Any:
    """The env the in-process checks share, created once and never released.

    ORT's env is a process-wide singleton; when ortc (or another check) already created it,
    CreateEnv returns that one and ignores the arguments here.
    """
    global _env
    if _env is None:
        a = api()
        out = ffi.new("OrtEnv**")
        # FATAL: the checks provoke errors on purpose; ORT would print each one to stderr
        st = a.CreateEnv(4, b"ortc-conformance", out)
        if st:
            raise RuntimeError("CreateEnv failed: " + _take(st)[1])
        _env = out[0]
    return _env


def _take(status: Any) -> tuple[int, str]:
    a = api()
    code = int(a.GetErrorCode(status))
    raw = a.GetErrorMessage(status)
    msg = cast(bytes, ffi.string(raw)).decode("utf-8", "replace") if raw != ffi.NULL else ""
    a.ReleaseStatus(status)
    return code, msg


class Ctx:
    """What a check gets: ``ctx.api`` (the facade), ``ctx.env``, helpers, and a cleanup scope."""

    def __init__(self, in_child: bool = False, env: Any = None) -> None:
        self.api = api()
        self.ffi = ffi
        self.info = self.api.info
        self.in_child = in_child
        self._env = env
        self._cleanups: list[Callable[[], Any]] = []
        self._keep: list[Any] = []
        parts = []
        for p in self.info.version.split(".")[:3]:
            digits = "".join(ch for ch in p if ch.isdigit())
            parts.append(int(digits or 0))
        self.version: tuple[int, ...] = tuple(parts)
        self.api_version = self.api.version

    # ---- scope ----

    @property
    def env(self) -> Any:
        if self._env is None:
            self._env = shared_env()
        return self._env

    def defer(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` when the check ends (last deferred first)."""
        self._cleanups.append(lambda: fn(*args))

    def keep(self, obj: Any) -> Any:
        """Keep ``obj`` (a cdata buffer, a callback) alive until the check ends."""
        self._keep.append(obj)
        return obj

    def close(self) -> None:
        while self._cleanups:
            fn = self._cleanups.pop()
            try:
                fn()
            except Exception:  # noqa: BLE001 - a cleanup failure must not hide the result
                pass
        self._keep.clear()

    def step(self, text: str) -> None:
        """In a child: say how far it got (the parent quotes the last step after a crash)."""
        if self.in_child:  # flushed at once: the next call may kill the process
            from . import coverage
            coverage.flush()
            sys.stdout.write("STEP " + text.replace("\n", " ") + "\n")
            sys.stdout.flush()

    def poison_freed_memory(self) -> bool:
        """In a child: have the C heap fill what is freed from now on with one fixed byte
        (glibc's ``mallopt(M_PERTURB)``), so a use after free reads the same poison on every
        run instead of whatever the freed block happened to hold. Without it such a use gives
        an error, a crash or an endless loop depending on where address randomisation put the
        heap. False (nothing done) in process, or on a C library without M_PERTURB.

        Not every freed block is filled: glibc fills what ``free`` hands back to its bins, not
        what goes to its per-thread cache (small blocks; on glibc 2.36 blocks of up to about
        1 KiB stayed as they were in a C test). A check about a small object cannot count on
        the poison (editor.py probes reuse of the freed memory instead)."""
        if not self.in_child:  # it would slow and change every check that runs after
            return False
        import ctypes

        try:
            mallopt = ctypes.CDLL(None).mallopt
        except (OSError, AttributeError):
            return False
        mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        mallopt.restype = ctypes.c_int
        return bool(mallopt(_M_PERTURB, _POISON))

    def has(self, *slots: str) -> bool:
        return all(self.api.has(s) for s in slots)

    # ---- statuses ----

    def status(self, st: Any) -> tuple[int, str] | None:
        """(code, message) of a returned status (released), or None for success."""
        return None if not st else _take(st)

    def ok(self, st: Any, what: str = "call") -> None:
        """Fail the check when ``st`` is an error."""
        if st:
            code, msg = _take(st)
            raise Fail(f"{what} failed: {code_name(code)}: {msg[:300]}")

    def error(self, st: Any, expected: str | Sequence[str], what: str = "call") -> str:
        """Expect an error with code ``expected`` (a name or names); return 'CODE: message'."""
        names = (expected,) if isinstance(expected, str) else tuple(expected)
        if not st:
            raise Fail(f"{what} succeeded; expected {'/'.join(names)}")
        code, msg = _take(st)
        got = code_name(code)
        if got not in names:
            raise Fail(f"{what}: expected {'/'.join(names)}, got {got}: {msg[:300]}")
        return f"{got}: {short(msg)}"

    def out(self, fn: Any, ctype: str, *args: Any, what: str = "") -> Any:
        """Call a creating slot and return its out value (fails the check on error)."""
        box = ffi.new(ctype + "*")
        self.ok(fn(*args, box), what or getattr(fn, "__name__", "call"))
        return box[0]

    # ---- objects ----

    def options(self, intra: int = 1, *, release: bool = True,
                config: dict[str, str] | None = None) -> Any:
        """Session options: ``intra`` intra-op threads, one inter-op thread, config entries."""
        a = self.api
        so = self.out(a.CreateSessionOptions, "OrtSessionOptions*")
        if release:
            self.defer(a.ReleaseSessionOptions, so)
        self.ok(a.SetIntraOpNumThreads(so, intra), "SetIntraOpNumThreads")
        self.ok(a.SetInterOpNumThreads(so, 1), "SetInterOpNumThreads")
        for key, value in (config or {}).items():
            self.ok(a.AddSessionConfigEntry(so, key.encode(), str(value).encode()),
                    "AddSessionConfigEntry")
        return so

    def try_session(self, model: bytes, options: Any = None, *, env: Any = None
                    ) -> tuple[Any, tuple[int, str] | None]:
        """(session or NULL, error) for a model given as bytes."""
        a = self.api
        so = options if options is not None else self.options()
        buf = ffi.from_buffer(model)
        box = ffi.new("OrtSession**")
        err = self.status(a.CreateSessionFromArray(env or self.env, buf, len(model), so, box))
        return box[0], err

    def session(self, model: bytes, options: Any = None, *, release: bool = True,
                env: Any = None) -> Any:
        sess, err = self.try_session(model, options, env=env)
        if err:
            raise Fail(f"CreateSessionFromArray failed: {code_name(err[0])}: {err[1][:300]}")
        if release:
            self.defer(self.api.ReleaseSession, sess)
        return sess

    @property
    def cpu_info(self) -> Any:
        mi = getattr(self, "_cpu_info", None)
        if mi is None:
            mi = self.out(self.api.CreateCpuMemoryInfo, "OrtMemoryInfo*", 0, 0)  # device, default
            self.defer(self.api.ReleaseMemoryInfo, mi)
            self._cpu_info = mi
        return mi

    @property
    def allocator(self) -> Any:
        return self.out(self.api.GetAllocatorWithDefaultOptions, "OrtAllocator*")

    def tensor(self, elem: int, shape: Sequence[int], data: bytes | Any, *,
               release: bool = True) -> tuple[Any, Any]:
        """A tensor over a cffi buffer holding ``data``: (OrtValue*, buffer)."""
        if isinstance(data, (bytes, bytearray)):
            buf = ffi.new("uint8_t[]", max(len(data), 1))
            ffi.memmove(buf, data, len(data))
            nbytes = len(data)
        else:
            buf, nbytes = data, ffi.sizeof(data)
        self.keep(buf)
        shp = ffi.new("int64_t[]", list(shape) or [0])
        val = self.out(self.api.CreateTensorWithDataAsOrtValue, "OrtValue*", self.cpu_info, buf,
                       nbytes, shp, len(shape), elem, what="CreateTensorWithDataAsOrtValue")
        if release:
            self.defer(self.api.ReleaseValue, val)
        return val, buf

    def floats(self, values: Sequence[float], shape: Sequence[int] | None = None,
               *, release: bool = True) -> Any:
        data = struct.pack(f"<{len(values)}f", *values)
        return self.tensor(1, list(shape) if shape is not None else [len(values)], data,
                           release=release)[0]

    def string_tensor(self, strings: Sequence[str], shape: Sequence[int] | None = None) -> Any:
        a = self.api
        shp = list(shape) if shape is not None else [len(strings)]
        dims = ffi.new("int64_t[]", shp)
        val = self.out(a.CreateTensorAsOrtValue, "OrtValue*", self.allocator, dims, len(shp), 8)
        self.defer(a.ReleaseValue, val)
        items = [ffi.new("char[]", s.encode()) for s in strings]
        arr = ffi.new("char*[]", items)
        self.ok(a.FillStringTensor(val, arr, len(items)), "FillStringTensor")
        return val

    def try_run(self, sess: Any, feeds: dict[str, Any], outputs: Sequence[str],
                run_options: Any = None, preallocated: Sequence[Any] | None = None,
                ) -> tuple[list[Any], tuple[int, str] | None]:
        """Run; returns (output values, error). Outputs are released with the check."""
        a = self.api
        in_names = [ffi.new("char[]", k.encode()) for k in feeds]
        names_arr = ffi.new("char*[]", in_names) if in_names else ffi.NULL
        vals = ffi.new("OrtValue*[]", list(feeds.values())) if feeds else ffi.NULL
        out_names = [ffi.new("char[]", k.encode()) for k in outputs]
        out_arr = ffi.new("char*[]", out_names) if out_names else ffi.NULL
        res = ffi.new("OrtValue*[]", list(preallocated) if preallocated else max(len(outputs), 1))
        err = self.status(a.Run(sess, run_options or ffi.NULL, names_arr, vals, len(feeds),
                                out_arr, len(outputs), res))
        got = [res[i] for i in range(len(outputs))]
        if not err and not preallocated:
            for v in got:
                if v != ffi.NULL:
                    self.defer(a.ReleaseValue, v)
        return got, err

    def run(self, sess: Any, feeds: dict[str, Any], outputs: Sequence[str],
            run_options: Any = None) -> list[Any]:
        got, err = self.try_run(sess, feeds, outputs, run_options)
        if err:
            raise Fail(f"Run failed: {code_name(err[0])}: {err[1][:300]}")
        return got

    def shape_of(self, value: Any) -> tuple[int, list[int]]:
        """(element type, dims) of a tensor value."""
        a = self.api
        info = self.out(a.GetTensorTypeAndShape, "OrtTensorTypeAndShapeInfo*", value)
        try:
            return self.info_shape(info)
        finally:
            a.ReleaseTensorTypeAndShapeInfo(info)

    def info_shape(self, info: Any) -> tuple[int, list[int]]:
        """(element type, dims) an OrtTensorTypeAndShapeInfo holds."""
        a = self.api
        elem = ffi.new("ONNXTensorElementDataType*")
        self.ok(a.GetTensorElementType(info, elem))
        n = ffi.new("size_t*")
        self.ok(a.GetDimensionsCount(info, n))
        dims = ffi.new("int64_t[]", max(n[0], 1))
        self.ok(a.GetDimensions(info, dims, n[0]))
        return int(elem[0]), [dims[i] for i in range(n[0])]

    def data(self, value: Any, nbytes: int) -> bytes:
        p = self.out(self.api.GetTensorMutableData, "void*", value)
        return bytes(ffi.buffer(p, nbytes)) if nbytes else b""

    def read_floats(self, value: Any) -> list[float]:
        _, dims = self.shape_of(value)
        n = 1
        for d in dims:
            n *= d
        return list(struct.unpack(f"<{n}f", self.data(value, 4 * n)))

    def strings(self, value: Any) -> list[str]:
        a = self.api
        count = ffi.new("size_t*")
        info = self.out(a.GetTensorTypeAndShape, "OrtTensorTypeAndShapeInfo*", value)
        self.ok(a.GetTensorShapeElementCount(info, count))
        a.ReleaseTensorTypeAndShapeInfo(info)
        n = count[0]
        total = ffi.new("size_t*")
        self.ok(a.GetStringTensorDataLength(value, total))
        buf = ffi.new("char[]", max(total[0], 1))
        offsets = ffi.new("size_t[]", max(n, 1))
        self.ok(a.GetStringTensorContent(value, buf, total[0], offsets, n))
        raw = ffi.buffer(buf, total[0])[:]
        ends = [offsets[i] for i in range(1, n)] + [total[0]]
        return [raw[offsets[i]:ends[i]].decode() for i in range(n)]

    def c_string(self, p: Any) -> str:
        return cast(bytes, ffi.string(p)).decode("utf-8", "replace") if p != ffi.NULL else ""

    def pairs(self, kv: Any, release: bool = False) -> dict[str, str]:
        """The entries of an OrtKeyValuePairs* ({} for NULL); released after when ``release``
        (pairs the caller owns, not ones borrowed from a device)."""
        if kv == ffi.NULL:
            return {}
        keys, values = ffi.new("const char* const**"), ffi.new("const char* const**")
        n = ffi.new("size_t*")
        try:
            self.api.GetKeyValuePairs(kv, keys, values, n)
            return {self.c_string(keys[0][i]): self.c_string(values[0][i]) for i in range(n[0])}
        finally:
            if release:
                self.api.ReleaseKeyValuePairs(kv)

    def take_string(self, p: Any) -> str:
        """Read and free a string ORT allocated with the default allocator."""
        s = self.c_string(p)
        if p != ffi.NULL:
            self.ok(self.api.AllocatorFree(self.allocator, p))
        return s

    def tmpdir(self) -> str:
        d = tempfile.mkdtemp(prefix="ortc-conf-")
        import shutil
        self.defer(shutil.rmtree, d, True)
        return d

    def need_version(self, minimum: tuple[int, ...], what: str) -> None:
        """Raise Known when the library is older than ``minimum`` for a version-gated feature."""
        if self.version < minimum:
            raise Known(f"{what} arrived in ORT {'.'.join(map(str, minimum))}; "
                        f"this is {self.info.version}")


def float_custom_op(ctx: Ctx, name: bytes, version: int, **callbacks: Callable[..., Any]
                    ) -> tuple[Any, list[Any]]:
    """An ``OrtCustomOp`` struct (of struct version ``version``) for an op named ``name`` with
    one float input and one float output, its other fields (the kernel's, version bounds,
    shape inference) the Python functions ``callbacks`` names; returns the struct and what
    keeps its name and callbacks alive (as long as any session made with it)."""
    ffi = ctx.ffi
    fields = dict(ffi.typeof("struct OrtCustomOp").fields)
    op: Any = ffi.new("struct OrtCustomOp*")  # fields set by name
    op.version = version
    c_name = ffi.new("char[]", name)
    keep: list[Any] = [c_name]
    one_float: dict[str, Callable[..., Any]] = {
        "GetName": lambda _op: c_name,
        "GetExecutionProviderType": lambda _op: ffi.NULL,
        "GetInputType": lambda _op, _i: 1,  # FLOAT
        "GetInputTypeCount": lambda _op: 1,
        "GetOutputType": lambda _op, _i: 1,
        "GetOutputTypeCount": lambda _op: 1,
        "GetInputCharacteristic": lambda _op, _i: 0,
        "GetOutputCharacteristic": lambda _op, _i: 0,
        "GetInputMemoryType": lambda _op, _i: 0,
        "GetVariadicInputMinArity": lambda _op: 1,
        "GetVariadicInputHomogeneity": lambda _op: 1,
        "GetVariadicOutputMinArity": lambda _op: 1,
        "GetVariadicOutputHomogeneity": lambda _op: 1,
    }
    for field, fn in {**one_float, **callbacks}.items():
        c = ffi.callback(fields[field].type, fn)
        keep.append(c)
        setattr(op, field, c)
    return op, keep


def short(msg: str, n: int = 160) -> str:
    msg = " ".join(msg.split())
    return msg if len(msg) <= n else msg[: n - 1] + "…"


def stderr_captured(fn: Callable[[], Any]) -> tuple[Any, str]:
    """Run ``fn`` with fd 2 redirected to a temporary file; return (result, what it wrote)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            result = fn()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode("utf-8", "replace")
    return result, text
