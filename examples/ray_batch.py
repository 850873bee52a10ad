"""Batch inference with Ray: the session goes to the object store once and is built once per
worker process, by tasks, actors and Ray Data alike.

    python examples/ray_batch.py [--rows 20000] [--partitions 8] [--batch-size 1024]

Ray passes arguments by pickling them, and a :class:`ortc.Session` pickles as its recipe: its
model bytes out of band, so ``ray.put`` stores them once and workers on this machine read them
in place. An unpickled session is built on its first use, once per process and recipe, and the
helpers keep it (ortc.batch.keep), so later tasks on that worker build nothing.
``ortc.ray.init_local`` starts Ray on 127.0.0.1 only. The results are checked bit-identical to
a local run over the same slices. Needs ``pip install "ray[data]"`` (not a dependency of ortc;
its ``ray`` extra).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import ortc
import ortc.batch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dask_batch import build_model  # noqa: E402  (the same model)


def main() -> None:
    try:
        import ray
    except ImportError:
        raise SystemExit("examples/ray_batch.py needs Ray, which ortc does not install: "
                         "pip install ray") from None
    import ortc.ray

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--actors", type=int, default=2)
    args = parser.parse_args()

    x = np.random.default_rng(1).standard_normal((args.rows, 64)).astype(np.float32)
    session = ortc.Session(build_model(), intra_op_num_threads=1)
    rows = -(-args.rows // args.partitions)
    local = np.concatenate([ortc.batch.run_batches(session, x[i:i + rows],
                                                   batch_size=args.batch_size)
                            for i in range(0, args.rows, rows)])

    ortc.ray.init_local(num_cpus=args.actors, log_to_driver=False)
    try:
        t0 = time.perf_counter()
        by_tasks = ortc.ray.run_tasks(session, x, blocks=args.partitions,
                                      batch_size=args.batch_size)
        tasks_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        by_actors = ortc.ray.run_actors(session, x, actors=args.actors,
                                        blocks=args.partitions, batch_size=args.batch_size)
        actors_s = time.perf_counter() - t0
        count = ray.remote(_count)
        built = ray.get([count.remote() for _ in range(4 * args.actors)])
    finally:
        ray.shutdown()

    same = all(r.dtype == local.dtype and r.tobytes() == local.tobytes()
               for r in (by_tasks, by_actors))
    print(f"worker processes: {len(set(built))}, sessions built in each: "
          f"{sorted({n for _, n in built})}")
    print(f"identical to the local run: {same}")
    print(f"tasks: {tasks_s * 1e3:.1f} ms, actors: {actors_s * 1e3:.1f} ms for {args.rows} rows "
          f"in {args.partitions} blocks")
    session.close()
    if not same:
        raise SystemExit("Ray's results differ from the local run")


def _count() -> tuple[int, int]:
    return os.getpid(), ortc.live_handles().get("SharedSession", 0)

if __name__ == "__main__":
    main()
