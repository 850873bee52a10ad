"""Sessions across processes: fork and spawn pools, ProcessPoolExecutor, a module-level session.

A Session made before fork() is rebuilt in the child from its recipe on first use (once per
child, whichever thread comes first); other inherited handles raise ForkedHandleError. Spawned
children get sessions by pickling (the recipe) or by importing the module that makes them.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pytest

import _pool_worker as worker
import models
import ortc

BATCHES = [np.random.default_rng(k).standard_normal((4, 16)).astype(np.float32)
           for k in range(6)]


def _local() -> list[np.ndarray]:
    with ortc.Session(worker.MODEL, intra_op_num_threads=1) as s:
        return [s.run(None, {"x": x})[0] for x in BATCHES]


def _same(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes()  # bit-identical


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_pool_runs_the_module_level_session(method: str) -> None:
    with multiprocessing.get_context(method).Pool(2) as pool:
        results = pool.map(worker.infer, BATCHES, chunksize=1)
    pids = {pid for pid, _ in results}
    assert os.getpid() not in pids
    _same([y for _, y in results], _local())
    _same([worker.infer(x)[1] for x in BATCHES], _local())  # the parent's is untouched


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_process_pool_executor_with_a_pickled_session(method: str) -> None:
    with ortc.Session(worker.MODEL, intra_op_num_threads=1) as s:
        ctx = multiprocessing.get_context(method)
        with ProcessPoolExecutor(2, mp_context=ctx) as pool:
            got = list(pool.map(worker.infer_with, [(s, x) for x in BATCHES]))
            inherited = list(pool.map(worker.infer, BATCHES))
        _same(got, _local())
        _same([y for _, y in inherited], _local())
        _same([s.run(None, {"x": x})[0] for x in BATCHES], _local())


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_session_shipped_with_every_task_is_built_once_per_worker(method: str) -> None:
    """A pool drops each task's arguments when it ends, so the unpickled Session, the last user
    of the worker's ORT session, went with every task, and the next task built (and hashed)
    the model again: 1.3-1.6x onnxruntime's own new session per task. The worker now keeps
    the last one idle (session._idle): one build per worker."""
    with ortc.Session(worker.MODEL, intra_op_num_threads=1) as s:
        ctx = multiprocessing.get_context(method)
        with ProcessPoolExecutor(1, mp_context=ctx) as pool:
            results = list(pool.map(worker.infer_counting_builds, [(s, x) for x in BATCHES]))
    assert [n for _, n, _ in results] == [1] * len(BATCHES)
    _same([y for _, _, y in results], _local())


def test_a_pool_initializer_ships_the_session_once_per_worker() -> None:
    with ortc.Session(worker.MODEL, intra_op_num_threads=1) as s:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(2, mp_context=ctx, initializer=worker.install,
                                 initargs=(s,)) as pool:
            results = list(pool.map(worker.infer_installed, BATCHES))
    assert {n for _, n, _ in results} == {1}  # one session per worker, for every task
    _same([y for _, _, y in results], _local())


def test_fork_rebuilds_once_per_child_under_concurrent_first_use() -> None:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2, maxtasksperchild=1) as pool:  # a fresh child per task
        results = pool.map(worker.first_use_from_threads, BATCHES[:4], chunksize=1)
    want = _local()[:4]
    assert len({pid for pid, _, _ in results}) == 4
    for (_, created, outs), w in zip(results, want):
        assert created == 1  # 8 threads, one rebuild
        _same(outs, [w] * len(outs))


def test_other_inherited_handles_still_raise_in_the_child() -> None:
    ctx = multiprocessing.get_context("fork")
    kinds = ["binding", "value", "options", "run_options", "allocator", "memory_info", "env",
             "closed-session"]
    with ctx.Pool(1) as pool:
        got = dict(zip(kinds, pool.map(worker.use_inherited, kinds)))
    assert got == {**{k: "ForkedHandleError" for k in kinds[:6]}, "env": "",
                   "closed-session": "ClosedError"}


def _in_a_forked_child(work: Any) -> str:
    """``work()`` in a forked child: "ran: <its result>", or the class and text of what it
    raised (reported through a pipe; the child exits at once)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            msg = f"ran: {work()}"
        except BaseException as exc:  # noqa: BLE001
            msg = f"{type(exc).__name__} {exc}"
        os.write(w, msg.encode()[:4000])
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read().decode()
    os.waitpid(pid, 0)
    return msg


def test_rebuild_failure_in_the_child_names_the_missing_file(tmp_path: Any) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(worker.MODEL)
    s = ortc.Session(str(path), intra_op_num_threads=1)
    x = BATCHES[0]
    want = s.run(None, {"x": x})[0]
    os.remove(path)  # the child rebuilds from the path, which is gone
    msg = _in_a_forked_child(lambda: s.run(None, {"x": x}))
    assert msg.startswith("NoSuchFile") and str(path) in msg, msg
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], want)  # the parent's still works
    s.close()


def test_a_child_refuses_to_rebuild_from_a_model_file_that_changed(tmp_path: Any) -> None:
    """A forked child rebuilds its inherited sessions from the model file. Replaced after the
    parent loaded it (a deploy writing the next model to the same path), the child ran the new
    model with the parent's session object, silently (found from outside: an Add session gave
    a Sub's results). Now its first use raises RecipeError naming the file; the parent's
    session is untouched."""
    from onnx import TensorProto, helper

    def model(op: str) -> bytes:
        vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "abc"]
        return models._bytes(models.make_model([helper.make_node(op, ["a", "b"], ["c"])],
                                               vi[:2], vi[2:]))

    path = tmp_path / "m.onnx"
    path.write_bytes(model("Add"))
    s = ortc.Session(str(path), intra_op_num_threads=1)
    feeds = {"a": np.ones(3, np.float32), "b": np.ones(3, np.float32)}
    assert s.run(None, feeds)[0].tolist() == [2, 2, 2]
    path.write_bytes(model("Sub"))
    msg = _in_a_forked_child(lambda: s.run(None, feeds)[0].tolist())
    assert msg.startswith("RecipeError") and str(path) in msg and "changed" in msg, msg
    assert s.run(None, feeds)[0].tolist() == [2, 2, 2]  # the parent's still runs its model
    s.close()

