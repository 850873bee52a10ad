"""Batch inference over a Dask cluster: the session travels to each worker once, as its recipe.

    python examples/dask_batch.py [--rows 20000] [--partitions 8] [--batch-size 1024]

A :class:`ortc.Session` pickles as its recipe (the model bytes or path, every option), and is
built where it is first used, once per process and recipe. ``ortc.dask.map_array`` puts the
session into the graph as one key named by its recipe: a worker that runs a partition gets it
once (the scheduler only passes it on, unbuilt), builds it once, and keeps it for later
computations; each partition runs in slices of ``--batch-size`` rows. Sessions are Sync, so a
worker's threads share it. The results are checked against a local run of the same session
over the same slices: bit-identical. The cluster is a LocalCluster on 127.0.0.1.

Needs ``pip install "dask[distributed]"`` (ortc's ``dask`` extra).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import ortc
import ortc.batch


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
    """Map ``infer_block`` over ``partitions`` row blocks of ``x`` on the cluster, with a
    scattered session (a future): the hand-written pattern, kept for bench/bench_dask.py."""
    import dask.array as da

    rows = -(-x.shape[0] // partitions)
    blocks = da.from_array(x, chunks=(rows, x.shape[1]))
    y = blocks.map_blocks(infer_block, session=session_future, dtype=np.float32)
    return client.compute(y).result()  # type: ignore[no-any-return]


def run_with_helper(client: Any, session: ortc.Session, x: np.ndarray, partitions: int,
                    batch_size: int | None) -> np.ndarray:
    """The same with ortc.dask.map_array: ``partitions`` row blocks, each run in slices of
    ``batch_size`` rows."""
    import dask.array as da

    import ortc.dask

    rows = -(-x.shape[0] // partitions)
    y = ortc.dask.map_array(session, da.from_array(x, chunks=(rows, x.shape[1])),
                            batch_size=batch_size)
    return client.compute(y).result()  # type: ignore[no-any-return]


def start_cluster(workers: int = 2) -> tuple[Any, Any]:
    """A loopback LocalCluster of worker processes and a client to it."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0")
    return cluster, Client(cluster)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=1024)
    args = parser.parse_args()

    x = np.random.default_rng(1).standard_normal((args.rows, 64)).astype(np.float32)
    session = ortc.Session(build_model(), intra_op_num_threads=1)
    rows = -(-args.rows // args.partitions)
    t0 = time.perf_counter()
    # the same slices the cluster runs: ORT's kernels may round differently by batch size
    local = np.concatenate([ortc.batch.run_batches(session, x[i:i + rows],
                                                   batch_size=args.batch_size)
                            for i in range(0, args.rows, rows)])
    local_s = time.perf_counter() - t0

    cluster, client = start_cluster()
    try:
        t0 = time.perf_counter()
        remote = run_with_helper(client, session, x, args.partitions, args.batch_size)
        cluster_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = run_with_helper(client, session, x, args.partitions, args.batch_size)
        again_s = time.perf_counter() - t0
        built = client.run(lambda: ortc.live_handles().get("SharedSession", 0))
    finally:
        client.close()
        cluster.close()

    same = all(r.dtype == local.dtype and r.tobytes() == local.tobytes()
               for r in (remote, again))
    print(f"workers: {len(built)}, sessions built on each: {sorted(built.values())}")
    print(f"{args.rows} rows in {args.partitions} partitions, batches of {args.batch_size}")
    print(f"identical to the local run: {same}")
    print(f"local run: {local_s * 1e3:.1f} ms; cluster run: {cluster_s * 1e3:.1f} ms "
          f"(first), {again_s * 1e3:.1f} ms (again: nothing built)")
    session.close()
    if not same:
        raise SystemExit("the cluster's results differ from the local run")


if __name__ == "__main__":
    main()
