"""A dataset through a model on process pools, Dask and Ray: ortc's patterns against
onnxruntime's idiom (a session made lazily once per worker from a path, kept in a global).

    PYTHONPATH=. python bench/bench_cluster.py [--rows 40000] [--blocks 16] [--hidden 2048]
        [--batch-size 1024] [--repeats 3] [--engines pool,fork,dask,ray] [--json out.json]

One MLP (64 -> hidden -> hidden -> 64, MatMul+Tanh, float32; 18 MB of weights at hidden
2048), intra-op threads 1 everywhere, 2 worker processes with 1 thread each, the rows in
``blocks`` blocks, each run in slices of ``batch-size`` rows. Per pattern: the first run
(cold: shipping and building included) and the median of ``repeats`` warm runs, as rows/s,
with the CPU seconds of every process of the job (this one and all it started) per warm run;
the sessions built in each worker, as (onnxruntime's, ortc's) pairs (a Ray or fork worker
serves several patterns: both count up); the memory the pattern added to the worker processes (USS,
unique set size, summed over this process's descendants, after its runs against before them).
Results are checked equal to a local run. Numbers are printed, never asserted (not a test).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# every worker process imports cluster_tasks by name: its globals live as long as the worker
os.environ["PYTHONPATH"] = os.pathsep.join(
    [HERE, ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import numpy as np  # noqa: E402

import cluster_tasks as tasks  # noqa: E402
import ortc  # noqa: E402
import ortc.batch  # noqa: E402

WORKERS = 2


def _tree() -> list[Any]:
    import psutil

    me = psutil.Process()
    return [me, *me.children(recursive=True)]


def _cpu() -> dict[int, float]:
    import psutil

    out = {}
    for p in _tree():
        try:
            t = p.cpu_times()
            out[p.pid] = t.user + t.system
        except psutil.Error:
            pass
    return out


def _cpu_since(before: dict[int, float]) -> float:
    after = _cpu()
    return sum(v - before.get(pid, 0.0) for pid, v in after.items())


def _uss() -> float:
    """MB of USS over this process's descendants (the workers and the engine's daemons)."""
    import psutil

    total = 0
    for p in _tree()[1:]:
        try:
            total += p.memory_full_info().uss
        except psutil.Error:
            pass
    return total / 2**20


def measure(name: str, run: Callable[[], np.ndarray], want: np.ndarray, rows: int,
            repeats: int, builds: Callable[[], Any]) -> dict[str, Any]:
    base_mem = _uss()
    t0 = time.perf_counter()
    got = run()
    cold = time.perf_counter() - t0
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
        raise SystemExit(f"{name}: the results differ from the local run")
    walls, cpus = [], []
    for _ in range(repeats):
        before = _cpu()
        t0 = time.perf_counter()
        run()
        walls.append(time.perf_counter() - t0)
        cpus.append(_cpu_since(before))
    wall = statistics.median(walls)
    row = {"pattern": name, "cold_s": round(cold, 2), "rows_per_s": round(rows / wall),
           "warm_s": round(wall, 3), "cpu_s": round(statistics.median(cpus), 2),
           "builds": builds(), "uss_added_mb": round(_uss() - base_mem)}
    print(json.dumps(row), flush=True)
    return row


def _blocks(x: np.ndarray, n: int) -> list[np.ndarray]:
    return np.array_split(x, n)


# -- process pools -----------------------------------------------------------------------------

def bench_pool(method: str, path: str, model: bytes, x: np.ndarray, want: np.ndarray,
               args: Any) -> list[dict[str, Any]]:
    ctx = multiprocessing.get_context(method)
    blocks = _blocks(x, args.blocks)
    bs = args.batch_size
    out = []

    def pids_builds(results: list[Any]) -> Any:
        return sorted({pid for pid, _ in results})

    def pool_run(pool: Any, fn: Any, items: list[Any]) -> np.ndarray:
        results = list(pool.map(fn, items))
        pool_run.pids = pids_builds(results)  # type: ignore[attr-defined]
        return np.concatenate([y for _, y in results])

    def states(pool: Any) -> Any:
        got = {s["pid"]: (s["ort_sessions"], s["ortc_sessions"])
               for s in pool.map(tasks.state_task, range(4 * WORKERS))}
        return sorted(got.values())

    with ProcessPoolExecutor(WORKERS, mp_context=ctx) as pool:
        list(pool.map(tasks.warm, range(WORKERS)))
        out.append(measure(f"{method} pool: onnxruntime, lazy global from a path",
                           lambda: pool_run(pool, tasks.ort_pool_task,
                                            [(path, b, bs) for b in blocks]),
                           want, len(x), args.repeats, lambda: states(pool)))
    session = ortc.Session(path, intra_op_num_threads=1)
    with ProcessPoolExecutor(WORKERS, mp_context=ctx) as pool:
        list(pool.map(tasks.warm, range(WORKERS)))
        out.append(measure(f"{method} pool: ortc, the Session passed to every task (path)",
                           lambda: pool_run(pool, tasks.ortc_pool_task,
                                            [(session, b, bs) for b in blocks]),
                           want, len(x), args.repeats, lambda: states(pool)))
    with ProcessPoolExecutor(WORKERS, mp_context=ctx, initializer=tasks.keep,
                             initargs=(ortc.Session(model, intra_op_num_threads=1),)) as pool:
        list(pool.map(tasks.warm, range(WORKERS)))
        out.append(measure(f"{method} pool: ortc, the Session (bytes) in the initializer",
                           lambda: pool_run(pool, tasks.ortc_kept_task,
                                            [(b, bs) for b in blocks]),
                           want, len(x), args.repeats, lambda: states(pool)))
    if method == "fork":
        tasks.INHERITED = session  # made before the pool forks: each child rebuilds it once
        with ProcessPoolExecutor(WORKERS, mp_context=ctx) as pool:
            list(pool.map(tasks.warm, range(WORKERS)))
            out.append(measure("fork pool: ortc, a module-level Session inherited",
                               lambda: pool_run(pool, tasks.inherited_task,
                                                [(b, bs) for b in blocks]),
                               want, len(x), args.repeats, lambda: states(pool)))
        tasks.INHERITED = None
    session.close()
    return out


# -- Dask --------------------------------------------------------------------------------------

def bench_dask(path: str, model: bytes, x: np.ndarray, want: np.ndarray,
               args: Any) -> list[dict[str, Any]]:
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    import ortc.dask

    out = []
    rows = -(-len(x) // args.blocks)
    xd = da.from_array(x, chunks=(rows, x.shape[1]))
    bs = args.batch_size

    def fresh() -> tuple[Any, Any]:
        cluster = LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
        client.run(tasks.warm)
        return cluster, client

    def builds(client: Any) -> Any:
        return sorted((s["ort_sessions"], s["ortc_sessions"])
                      for s in client.run(tasks.worker_state).values())

    cluster, client = fresh()
    try:
        y = xd.map_blocks(tasks.ort_block, path=path, batch_size=bs, dtype=np.float32)
        out.append(measure("dask: onnxruntime, lazy global from a path (map_blocks)",
                           lambda: client.compute(y).result(), want, len(x), args.repeats,
                           lambda: builds(client)))
    finally:
        client.close()
        cluster.close()
    for label, source in (("path", path), ("bytes", model)):
        session = ortc.Session(source, intra_op_num_threads=1)
        cluster, client = fresh()
        try:
            y = ortc.dask.map_array(session, xd, batch_size=bs)
            out.append(measure(f"dask: ortc.dask.map_array, Session from {label}",
                               lambda: client.compute(y).result(), want, len(x),
                               args.repeats, lambda: builds(client)))
        finally:
            client.close()
            cluster.close()
            session.close()
    session = ortc.Session(model, intra_op_num_threads=1)
    cluster, client = fresh()
    try:
        shipped = client.scatter(session, broadcast=True)
        y = xd.map_blocks(tasks.ortc_block, shipped, bs, dtype=np.float32)
        out.append(measure("dask: ortc, Session (bytes) scattered with broadcast, map_blocks",
                           lambda: client.compute(y).result(), want, len(x), args.repeats,
                           lambda: builds(client)))
    finally:
        client.close()
        cluster.close()
        session.close()
    return out


# -- Ray ---------------------------------------------------------------------------------------

def bench_ray(path: str, model: bytes, x: np.ndarray, want: np.ndarray,
              args: Any) -> list[dict[str, Any]]:
    import ortc.ray

    ortc.ray.init_local(num_cpus=WORKERS, log_to_driver=False)
    import ray

    out = []
    blocks = _blocks(x, args.blocks)
    bs = args.batch_size
    try:
        ray.get([ray.remote(tasks.warm).remote() for _ in range(WORKERS)])
        ort_task = ray.remote(tasks.ort_block)
        state = ray.remote(tasks.state_task)

        def builds() -> Any:
            got = ray.get([state.remote(0) for _ in range(4 * WORKERS)])
            return sorted({s["pid"]: (s["ort_sessions"], s["ortc_sessions"])
                           for s in got}.values())

        # every pattern passes the blocks as arrays (each call puts them in the object store)
        out.append(measure("ray tasks: onnxruntime, lazy global from a path",
                           lambda: np.concatenate(ray.get(
                               [ort_task.remote(b, path, bs) for b in blocks])),
                           want, len(x), args.repeats, builds))

        @ray.remote
        class OrtActor:
            def __init__(self, path: str) -> None:
                import onnxruntime as rt

                opts = rt.SessionOptions()
                opts.intra_op_num_threads = 1
                self.sess = rt.InferenceSession(path, opts, providers=["CPUExecutionProvider"])

            def run(self, block: np.ndarray) -> np.ndarray:
                n = len(block)
                return np.concatenate([self.sess.run(["y"], {"x": block[i:i + bs]})[0]
                                       for i in range(0, n, bs)])

        def ort_actors() -> np.ndarray:
            actors = [OrtActor.remote(path) for _ in range(WORKERS)]
            try:
                return np.concatenate(ray.get([actors[i % WORKERS].run.remote(b)
                                               for i, b in enumerate(blocks)]))
            finally:
                for a in actors:
                    ray.kill(a)

        out.append(measure("ray actors: onnxruntime, built from a path in each actor",
                           ort_actors, want, len(x), args.repeats, lambda: "per actor: 1"))
        session = ortc.Session(model, intra_op_num_threads=1)
        out.append(measure("ray tasks: ortc.ray.run_tasks, Session from bytes",
                           lambda: ortc.ray.run_tasks(session, x, blocks=args.blocks,
                                                      batch_size=bs),
                           want, len(x), args.repeats, builds))
        out.append(measure("ray actors: ortc.ray.run_actors, Session from bytes",
                           lambda: ortc.ray.run_actors(session, x, actors=WORKERS,
                                                       blocks=args.blocks, batch_size=bs),
                           want, len(x), args.repeats, lambda: "per actor: 1"))
        session.close()
    finally:
        ray.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40000)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engines", default="pool,fork,dask,ray")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()

    model = tasks.build_model(hidden=args.hidden)
    x = np.random.default_rng(1).standard_normal((args.rows, 64)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp.onnx")
        with open(path, "wb") as f:
            f.write(model)
        with ortc.Session(model, intra_op_num_threads=1) as local:
            want = ortc.batch.run_batches(local, x, batch_size=args.batch_size)
        print(json.dumps({"model_mb": round(len(model) / 2**20, 1), "rows": args.rows,
                          "blocks": args.blocks, "batch_size": args.batch_size,
                          "workers": WORKERS, "repeats": args.repeats}), flush=True)
        rows: list[dict[str, Any]] = []
        engines = args.engines.split(",")
        if "pool" in engines:
            rows += bench_pool("spawn", path, model, x, want, args)
        if "fork" in engines:
            rows += bench_pool("fork", path, model, x, want, args)
        if "dask" in engines:
            rows += bench_dask(path, model, x, want, args)
        if "ray" in engines:
            try:
                import ray  # noqa: F401
            except ImportError:
                print("ray: not installed, skipped", flush=True)
            else:
                rows += bench_ray(path, model, x, want, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
