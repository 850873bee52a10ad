"""ortc under PyPy: run by tests/test_pypy.py with a PyPy interpreter (numpy only, no onnx).

    pypy3 tests/pypy_check.py MODEL_DIR      # prints one JSON object: check name -> result

MODEL_DIR holds models built by the CPython side (PyPy has no onnx package) and the outputs
CPython's ortc gave for the same feeds (expected.json). Each check records what it saw; the
CPython test asserts on it, so a failure names the check.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import sys
import threading
import time
from typing import Any, Callable

import numpy as np

import ortc


def _load(directory: str, name: str) -> bytes:
    with open(os.path.join(directory, name + ".onnx"), "rb") as f:
        return f.read()


def in_forked_child(fn: Callable[[], Any]) -> Any:
    """``fn()`` run in a forked child, its JSON-able result (or its exception, as text) sent
    back through a pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            msg = json.dumps(fn())
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            msg = json.dumps(f"{type(exc).__name__}: {exc}")
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        result = json.loads(f.read())
    os.waitpid(pid, 0)
    return result


def compat_outputs(directory: str) -> dict[str, Any]:
    """A typical onnxruntime application's calls, through ``ortc.compat`` (run under PyPy by
    main(), and under CPython by tests/test_pypy.py): each output's bytes, as hex."""
    import ortc.compat as onnxruntime

    so = onnxruntime.SessionOptions()
    so.intra_op_num_threads = 1
    sess = onnxruntime.InferenceSession(os.path.join(directory, "mlp.onnx"), so,
                                        providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    x = (np.arange(3 * 16, dtype=np.float32).reshape(3, 16) / 7).astype(np.float32)
    out: dict[str, Any] = {
        "io": [[i.name, i.shape, i.type] for i in sess.get_inputs() + sess.get_outputs()],
        "run": sess.run(None, {name: x})[0].tobytes().hex()}
    io = sess.io_binding()
    io.bind_cpu_input(name, x)
    io.bind_output("y")
    sess.run_with_iobinding(io)
    out["iobinding"] = io.copy_outputs_to_cpu()[0].tobytes().hex()
    xv = onnxruntime.OrtValue.ortvalue_from_numpy(x)
    yv = onnxruntime.OrtValue.ortvalue_from_shape_and_type([3, 16], np.float32, "cpu", 0)
    io.bind_ortvalue_input(name, xv)
    io.bind_ortvalue_output("y", yv)
    sess.run_with_iobinding(io)
    out["ortvalue"] = yv.numpy().tobytes().hex()
    out["run_with_ort_values"] = sess.run_with_ort_values(
        ["y"], {name: xv})[0].numpy().tobytes().hex()
    try:
        sess.run(None, {name: x.astype(np.float64)})
    except Exception as exc:  # noqa: BLE001 - its class and message are compared
        out["wrong_type"] = f"{type(exc).__name__}: {exc}"
    return out


def main(directory: str) -> dict[str, Any]:
    with open(os.path.join(directory, "expected.json")) as f:
        expected = json.load(f)
    out: dict[str, Any] = {"implementation": platform.python_implementation(),
                           "library_version": ortc.version().library_version}
    # the process-wide objects (env, default allocator, CPU memory info, the run options of
    # the main thread's runs and of other threads' that pass none) come with the first runs;
    # the baseline is taken after one on each
    warm = ortc.Session(_load(directory, "add"))
    warm.run(None, {"a": np.zeros(4, np.float32), "b": np.zeros(4, np.float32)})
    worker = threading.Thread(target=warm.run, args=(
        None, {"a": np.zeros(4, np.float32), "b": np.zeros(4, np.float32)}))
    worker.start()
    worker.join()
    warm.close()
    del warm
    gc.collect()
    baseline = dict(ortc.live_handles())

    def check(name: str, fn: Callable[[], Any]) -> None:
        try:
            out[name] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the CPython side
            out[name] = f"raised {type(exc).__name__}: {exc}"

    add = ortc.Session(_load(directory, "add"), intra_op_num_threads=1)
    a = np.arange(4, dtype=np.float32)
    b = np.full(4, 10.0, np.float32)

    check("add_run", lambda: add.run(None, {"a": a, "b": b})[0].tolist())
    check("add_run_staged", lambda: [add.run(None, {"a": a + i, "b": b})[0].tolist()
                                     for i in range(3)][-1])

    def bound() -> list[float]:
        binding = add.io_binding()
        y = np.empty(4, np.float32)
        binding.bind_input("a", a)
        binding.bind_input("b", b)
        binding.bind_output("c", y)
        add.run_with_binding(binding)
        binding.close()
        return y.tolist()

    check("add_bound", bound)

    def zero_copy() -> list[bool]:
        v = ortc.Value.from_numpy(a)
        [res] = add.run_with_values(None, {"a": v, "b": ortc.Value.from_numpy(b)})
        view = res.numpy()
        return [bool(np.shares_memory(v.numpy(), a)), view.tolist() == expected["add"]]

    check("zero_copy", zero_copy)
    def value_input_let_go() -> list[Any]:
        # a Value fed to a run is leased for the run only: another thread may close it after
        # (the lease ends explicitly; PyPy would finalize a dropped one only at a collection)
        v = ortc.Value.from_numpy(a.copy())
        add.run(None, {"a": v, "b": b})
        add.run_with_values(None, {"a": v, "b": b})
        errors: list[str] = []

        def closer() -> None:
            try:
                v.close()
            except BaseException as exc:  # noqa: BLE001
                errors.append(type(exc).__name__)

        t = threading.Thread(target=closer)
        t.start()
        t.join(30)
        return [errors, v.closed]

    check("value_input_let_go", value_input_let_go)
    strings = ortc.Session(_load(directory, "strings"))
    check("strings", lambda: strings.run(
        None, {"x": np.array(["a", "bé", "a\0b"], dtype=object)})[0].tolist())
    seq = ortc.Session(_load(directory, "sequence"))
    check("sequence", lambda: [t.tolist() for t in seq.run(None, {"a": a, "b": b, "c": a})[0]])
    zipmap = ortc.Session(_load(directory, "zipmap"))
    check("map", lambda: [{str(k): round(float(v), 6) for k, v in m.items()} for m in
                          zipmap.run(None, {"x": np.array([[0.1, 0.2, 0.7]], np.float32)})[0]])

    def wrong_dtype() -> str:
        try:
            add.run(None, {"a": a.astype(np.float64), "b": b})
        except ortc.InvalidArgument as exc:
            return "InvalidArgument: " + str(exc)[:60]
        return "no error"

    check("wrong_dtype", wrong_dtype)

    def closed() -> str:
        s = ortc.Session(_load(directory, "add"))
        s.close()
        try:
            s.run(None, {"a": a, "b": b})
        except ortc.ClosedError:
            return "ClosedError"
        return "no error"

    check("closed", closed)

    def shared_binding() -> list[str]:
        # a run held inside ORT on one thread; the binding is not Sync, so a second call on it
        # from another thread is refused at once; terminate() ends the run
        chain = ortc.Session(_load(directory, "chain"), intra_op_num_threads=1)
        binding = chain.io_binding()
        x = np.ones((256, 256), np.float32)
        y = np.empty((256, 256), np.float32)
        binding.bind_input("x", x)
        binding.bind_output("y", y)
        ro = ortc.RunOptions()
        seen: list[str] = []

        def run() -> None:
            try:
                chain.run_with_binding(binding, ro)
                seen.append("finished")
            except ortc.OrtError as exc:
                seen.append(type(exc).__name__)

        t = threading.Thread(target=run)
        t.start()
        deadline = time.monotonic() + 30
        while not binding._guard.calls and time.monotonic() < deadline:
            time.sleep(0.001)
        try:
            binding.bind_input("x", x)
            seen.append("bind_input allowed")
        except ortc.ConcurrentUseError:
            seen.append("ConcurrentUseError")
        ro.terminate()
        t.join(60)
        binding.close()
        chain.close()
        ro.close()
        return seen

    check("shared_binding", shared_binding)

    def hold_of_ended_thread() -> Any:
        # a Value bound as an output on a worker thread that ended: PyPy drops the thread's
        # local data (whose going releases its holds) only at a collection; before one, the
        # main thread's read must not be refused by the ended thread's hold
        out_value = ortc.Value.from_numpy(np.zeros(4, np.float32))
        binding = add.io_binding()

        def worker() -> None:
            binding.bind_input("a", a)
            binding.bind_input("b", b)
            binding.bind_output("c", out_value)
            add.run_with_binding(binding)

        t = threading.Thread(target=worker)
        t.start()
        t.join(60)
        try:
            return out_value.numpy().tolist()
        except ortc.ThreadRuleError as exc:
            return type(exc).__name__
        finally:
            binding.close()

    check("hold_of_ended_thread", hold_of_ended_thread)

    def hold_of_dropped_binding() -> list[Any]:
        # a Value bound as an output of a binding dropped without close(): PyPy ends the
        # binding's hold only at a collection; until then another thread's use was refused
        # (ConcurrentUseError: "unbind it", through a binding nothing can reach)
        out_value = ortc.Value.from_numpy(np.zeros(4, np.float32))

        def bind_run_and_drop() -> None:
            binding = add.io_binding()
            binding.bind_input("a", a)
            binding.bind_input("b", b)
            binding.bind_output("c", out_value)
            add.run_with_binding(binding)

        bind_run_and_drop()
        seen: list[Any] = []

        def other() -> None:
            try:
                seen.append(out_value.numpy().tolist())
                out_value.close()
                seen.append(out_value.closed)
            except ortc.ThreadRuleError as exc:
                seen.append(type(exc).__name__)

        t = threading.Thread(target=other)
        t.start()
        t.join(60)
        return seen

    check("hold_of_dropped_binding", hold_of_dropped_binding)

    def concurrent_runs() -> bool:
        results: list[bool] = []

        def work(i: int) -> None:
            for j in range(50):
                y = add.run(None, {"a": a + i + j, "b": b})[0]
                results.append(y.tolist() == (a + i + j + b).tolist())

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        return len(results) == 200 and all(results)

    check("concurrent_runs", concurrent_runs)

    def pickle_and_fork() -> list[Any]:
        # a Session pickles as its recipe; one inherited through fork() is rebuilt in the child
        import pickle

        again = pickle.loads(pickle.dumps(add))
        pickled = again.run(None, {"a": a, "b": b})[0].tolist()
        again.close()
        forked = in_forked_child(lambda: add.run(None, {"a": a, "b": b})[0].tolist())
        return [pickled, forked]
    check("pickle_and_fork", pickle_and_fork)

    def dlpack() -> list[Any]:
        def both_ways() -> list[Any]:
            v = ortc.Value.from_numpy(np.arange(3, dtype=np.float64))
            arr = np.from_dlpack(v)
            back = ortc.Value.from_dlpack(arr)
            seen = [str(arr.dtype), bool(np.shares_memory(arr, v.numpy())), str(back.dtype),
                    bool(np.shares_memory(back.numpy(), arr))]
            back.close()
            v.close()  # released once numpy lets go of the capsule's view
            return seen

        # In a forked child: numpy under PyPy lets go of a consumed capsule's view through
        # cpyext, at a collection of its choosing (seen: not within 30 collections, in about
        # one run of three), and the closed Value waits for that view. Its release is not
        # this check's subject; handles_released below counts everything else.
        return in_forked_child(both_ways)
    check("dlpack", dlpack)

    def repeated_runs() -> int:
        # repeated runs by the shapes a caller feeds ("add_n": a dim n): the same large shape
        # (outputs viewed), large shapes in turn, small shapes in turn (outputs copied out);
        # every result checked, each against its own call
        wrong = 0
        for sizes in ([8192] * 6, [8192, 8200, 8208] * 12, [1, 2, 3] * 12):
            with ortc.Session(_load(directory, "add_n"), intra_op_num_threads=1) as s_n:
                results = []
                for k, n in enumerate(sizes):
                    x = np.full(n, float(k), np.float32)
                    [c] = s_n.run(None, {"a": x, "b": x})
                    results.append((k, n, c))
                for k, n, c in results:
                    wrong += c.shape != (n,) or not bool((c == 2.0 * k).all())
        return wrong

    check("repeated_runs", repeated_runs)

    def threads_now() -> int:
        """The process's threads (ORT's pool threads among them)."""
        return len(os.listdir("/proc/self/task"))

    no_spin = ortc.SessionOptions()  # (a pool spins after a run: kept short, not measured)
    no_spin.add_session_config_entry("session.intra_op.allow_spinning", "0")

    def sessions_closed_at_once() -> list[int]:
        # close() and a with-block release the session, its thread pool with it, at once:
        # no collection needed, as on CPython
        start = (ortc.live_handles().get("Session", 0), threads_now())
        grown = [0, 0]
        for _ in range(20):
            with ortc.Session(_load(directory, "add"), no_spin) as s_w:
                s_w.run(None, {"a": a, "b": b})
            s_c = ortc.Session(_load(directory, "add"), no_spin)
            s_c.run(None, {"a": a, "b": b})
            s_c.close()
            grown = [max(grown[0], ortc.live_handles().get("Session", 0) - start[0]),
                     max(grown[1], threads_now() - start[1])]
        return grown

    check("sessions_closed_at_once", sessions_closed_at_once)

    def dropped_sessions() -> list[int]:
        # sessions made per call and dropped without close(): PyPy frees them at a
        # collection only, and its collector would not count what they hold (ORT's memory,
        # a thread pool); ortc tells it, so they do not pile up (200 of them did)
        data = _load(directory, "add")
        start = (ortc.live_handles().get("Session", 0), threads_now())
        grown = [0, 0]
        for _ in range(200):
            s_d = ortc.Session(data, no_spin)
            s_d.run(None, {"a": a, "b": b})
            grown = [max(grown[0], ortc.live_handles().get("Session", 0) - start[0]),
                     max(grown[1], threads_now() - start[1])]
        return grown

    check("dropped_sessions", dropped_sessions)

    def dropped_outputs() -> dict[str, int]:
        # 16 MB outputs of ORT's memory dropped in a loop, as arrays (run) and as Values
        # (run_with_values): the most the process grew, in MB (before ortc told PyPy's
        # collector what they hold: by all of them, 960 MB each way)
        def rss_mb() -> int:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 2 ** 20

        def grown(how: str) -> int:
            gc.collect()
            with ortc.Session(_load(directory, "add_n"), intra_op_num_threads=1) as s_n:
                fn = getattr(s_n, how)
                x = np.ones(4_000_000, np.float32)
                start = most = rss_mb()
                for _ in range(60):
                    fn(None, {"a": x, "b": x})
                    most = max(most, rss_mb())
            return most - start

        # each in a child of its own: memory the first loop freed would serve the second
        return {how: in_forked_child(lambda: grown(how)) for how in ("run", "run_with_values")}

    check("dropped_outputs", dropped_outputs)
    no_spin.close()

    def compat_app() -> dict[str, Any]:
        # onnxruntime's API through ortc.compat: the outputs' bytes, to compare with CPython's
        return compat_outputs(directory)

    check("compat_app", compat_app)

    def handles_released() -> bool:
        # PyPy's GC is not reference counting: finalizers run at a collection
        for s in (add, strings, seq, zipmap):
            s.close()
        left: dict[str, int] = {}
        for _ in range(30):  # finalizers that release parents need more than one collection,
            gc.collect()     # and objects with finalizers (a run's context) one more each
            now = {k: v for k, v in ortc.live_handles().items() if v}
            left = {k: v for k, v in now.items() if v > baseline.get(k, 0)}  # what is left
            if not left:
                break
        return left

    check("handles_released", handles_released)
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
