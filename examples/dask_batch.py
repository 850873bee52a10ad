"""Batch inference over a Dask cluster: the session travels to each worker once, as its recipe.

    python examples/dask_batch.py [--rows 20000] [--partitions 8]

A :class:`ortc.Session` pickles as its recipe (the model bytes or path, every option), so Dask
can ship it like any other data: ``client.scatter(session, broadcast=True)`` sends it to every
worker once, where it is unpickled (the session built) once and kept; each task over an array
partition then gets that worker's session. Sessions are Sync, so a worker's threads share it.
The results are checked against a local run of the same session: bit-identical.

Needs ``pip install "dask[distributed]"`` (ortc's ``dask`` extra).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import ortc


def build_model(width: int = 64, layers: int = 3) -> bytes:
    """An MLP ``x`` [batch, width] -> ``y`` [batch, width] with fixed weights."""
    rng = np.random.default_rng(0)
    nodes, inits, cur = [], [], "x"
    for i in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        out = "y" if i == layers - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [cur, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [out]))
        cur = out
    graph = helper.make_graph(
        nodes, "dask_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def infer_block(block: np.ndarray, session: ortc.Session) -> np.ndarray:
    """One partition through the worker's session (runs on a worker thread)."""
    return session.run(["y"], {"x": block})[0]


def run_on_cluster(client: Any, session_future: Any, x: np.ndarray,
                   partitions: int) -> np.ndarray:
    """Map ``infer_block`` over ``partitions`` row blocks of ``x`` on the cluster."""
    import dask.array as da

    rows = -(-x.shape[0] // partitions)
    blocks = da.from_array(x, chunks=(rows, x.shape[1]))
    y = blocks.map_blocks(infer_block, session=session_future, dtype=np.float32)
    return client.compute(y).result()  # type: ignore[no-any-return]


def start_cluster(workers: int = 2) -> tuple[Any, Any]:
    """A loopback LocalCluster of worker processes and a client to it."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None)
    return cluster, Client(cluster)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--partitions", type=int, default=8)
    args = parser.parse_args()

    x = np.random.default_rng(1).standard_normal((args.rows, 64)).astype(np.float32)
    session = ortc.Session(build_model(), intra_op_num_threads=1)
    t0 = time.perf_counter()
    local = infer_block(x, session)
    local_s = time.perf_counter() - t0

    cluster, client = start_cluster()
    try:
        t0 = time.perf_counter()
        # the session goes to every worker once; tasks get the worker's copy
        shipped = client.scatter(session, broadcast=True)
        scatter_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        remote = run_on_cluster(client, shipped, x, args.partitions)
        cluster_s = time.perf_counter() - t0
        built = client.run(lambda: ortc.live_handles().get("Session", 0))
    finally:
        client.close()
        cluster.close()

    same = remote.dtype == local.dtype and remote.tobytes() == local.tobytes()
    print(f"workers: {len(built)}, sessions on each: {sorted(built.values())}")
    print(f"{args.rows} rows in {args.partitions} partitions")
    print(f"identical to the local run: {same}")
    print(f"local run: {local_s * 1e3:.1f} ms; scatter: {scatter_s * 1e3:.1f} ms; "
          f"cluster run: {cluster_s * 1e3:.1f} ms")
    session.close()
    if not same:
        raise SystemExit("the cluster's results differ from the local run")


if __name__ == "__main__":
    main()
