"""The worker side of bench/bench_cluster.py: importable by name in every worker process (the
bench puts bench/ on PYTHONPATH before it starts any), so a module global lives as long as
the worker, as onnxruntime's idiom needs.

onnxruntime's idiom: a session made lazily, once per worker, from a path, kept in a global.
ortc's patterns: the Session object itself passed (pickled as its recipe), built on first use
once per process and recipe, kept by ortc.batch.keep.
"""

from __future__ import annotations

import os
import resource
from typing import Any

import numpy as np

#: onnxruntime's idiom: path -> the session this worker made from it
_ORT: dict[str, Any] = {}
#: the session a fork pool's children inherit (set in the parent before the pool starts)
INHERITED: Any = None


def build_model(width: int = 64, hidden: int = 2048, layers: int = 3) -> bytes:
    """An MLP ``x`` [batch, width] -> ``y`` [batch, width]: ``layers`` MatMul+Tanh, the inner
    ones ``hidden`` wide (fixed weights)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    dims = [width] + [hidden] * (layers - 1) + [width]
    nodes, inits, cur = [], [], "x"
    for i in range(layers):
        w = (rng.standard_normal((dims[i], dims[i + 1])) / np.sqrt(dims[i])).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        out = "y" if i == layers - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [cur, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [out]))
        cur = out
    graph = helper.make_graph(
        nodes, "cluster_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def _ort_session(path: str) -> Any:
    sess = _ORT.get(path)
    if sess is None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = _ORT[path] = ort.InferenceSession(path, opts,
                                                 providers=["CPUExecutionProvider"])
    return sess


def ort_block(block: np.ndarray, path: str, batch_size: int | None) -> np.ndarray:
    """onnxruntime's idiom: this worker's session for ``path``, made on its first block."""
    sess = _ort_session(path)
    n = len(block)
    step = batch_size or max(n, 1)
    parts = [sess.run(["y"], {"x": block[i:i + step]})[0] for i in range(0, max(n, 1), step)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def ort_pool_task(args: tuple[str, np.ndarray, int | None]) -> tuple[int, np.ndarray]:
    path, block, batch_size = args
    return os.getpid(), ort_block(block, path, batch_size)


def ortc_block(block: np.ndarray, session: Any, batch_size: int | None) -> np.ndarray:
    """ortc: the session that came with the task, kept by this worker (built once)."""
    import ortc.batch

    return ortc.batch.run_batches(ortc.batch.keep(session), block,  # type: ignore[no-any-return]
                                  batch_size=batch_size)


def ortc_pool_task(args: tuple[Any, np.ndarray, int | None]) -> tuple[int, np.ndarray]:
    session, block, batch_size = args
    return os.getpid(), ortc_block(block, session, batch_size)


def keep(session: Any) -> None:
    """A pool initializer: the session arrives once per worker and is kept."""
    import ortc.batch

    ortc.batch.keep(session)


def ortc_kept_task(args: tuple[np.ndarray, int | None]) -> tuple[int, np.ndarray]:
    """A task of a pool whose initializer kept the session: the one kept session."""
    import ortc.batch

    block, batch_size = args
    return os.getpid(), ortc.batch.run_batches(ortc.batch.kept_session(), block,
                                               batch_size=batch_size)


def inherited_task(args: tuple[np.ndarray, int | None]) -> tuple[int, np.ndarray]:
    """A fork pool's task: the session the parent made before the fork (rebuilt once in this
    child, from its recipe)."""
    import ortc.batch

    block, batch_size = args
    return os.getpid(), ortc.batch.run_batches(INHERITED, block, batch_size=batch_size)


def worker_state() -> dict[str, Any]:
    """This process: pid, USS and RSS (MB), CPU seconds so far, sessions built here."""
    import psutil

    me = psutil.Process()
    mem = me.memory_full_info()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    builds = 0
    import sys

    if "ortc.batch" in sys.modules:
        import ortc
        import ortc.batch

        # ORT sessions ortc built here: those under unpickled Sessions, and the Sessions
        # made before a fork that this child rebuilt (kept by an initializer, or inherited)
        own = [s for s in [*ortc.batch._kept.values(), INHERITED]
               if s is not None and not s._unpickled and not s.closed
               and s._guard.renewed_in_this_process() and s._guard.pid == os.getpid()]
        builds = ortc.live_handles().get("SharedSession", 0) + len(own)
    return {"pid": os.getpid(), "uss_mb": mem.uss / 2**20, "rss_mb": mem.rss / 2**20,
            "cpu_s": ru.ru_utime + ru.ru_stime, "ortc_sessions": builds,
            "ort_sessions": len(_ORT)}


def state_task(_: int) -> dict[str, Any]:
    import time

    time.sleep(0.05)  # (spread over the workers)
    return worker_state()


def warm(_: Any = None) -> int:
    """Import what every pattern imports (onnxruntime, ortc and its library), so the memory a
    pattern adds is its sessions' and its data's, not the imports'."""
    import time

    import onnxruntime  # noqa: F401

    import ortc

    ortc.version()
    time.sleep(0.2)  # (a pool starts a worker per waiting task: both get one)
    return os.getpid()
