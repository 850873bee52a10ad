"""A dataset through a model on process pools, Dask and Ray: ortc's patterns against
onnxruntime's idiom (a session made lazily once per worker from a path, kept in a global).

    PYTHONPATH=. python bench/bench_cluster.py [--rows 40000] [--blocks 16] [--hidden 2048]
        [--batch-size 1024] [--repeats 3] [--engines pool,fork,forkmem,dask,ray]
        [--json out.json]

One MLP (64 -> hidden -> hidden -> 64, MatMul+Tanh, float32; 18 MB of weights at hidden
2048), intra-op threads 1 everywhere, 2 worker processes with 1 thread each, the rows in
``blocks`` blocks, each run in slices of ``batch-size`` rows. Per pattern: the first run
(cold: shipping and building included) and the median of ``repeats`` warm runs, as rows/s,
with the CPU seconds of every process of the job (this one and all it started) per warm run;
the patterns of an engine run side by side (each its own pool or cluster, Ray's one), their
warm runs interleaved round by round;
the sessions built in each worker, as (onnxruntime's, ortc's) pairs (a Ray or fork worker
serves several patterns: both count up); the memory its first run added to its worker processes (USS,
unique set size, summed over them; for Ray, whose tasks share workers, over every process Ray
started).
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


def _uss(pids: list[int] | None) -> float:
    """MB of USS of ``pids``, or (None) of every descendant of this process."""
    import psutil

    procs = _tree()[1:] if pids is None else [psutil.Process(p) for p in pids]
    total = 0
    for p in procs:
        try:
            total += p.memory_full_info().uss
        except psutil.Error:
            pass
    return total / 2**20


class Pattern:
    """One way to run the job: ``run()`` gives the outputs; ``builds()`` the sessions each
    worker built, as (onnxruntime's, ortc's); ``pids()`` its worker processes (None: they
    are shared with the other patterns, and the memory is every descendant's)."""

    def __init__(self, name: str, run: Callable[[], np.ndarray], builds: Callable[[], Any],
                 pids: Callable[[], list[int] | None] = lambda: None) -> None:
        self.name, self.run, self.builds, self.pids = name, run, builds, pids
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.cold = 0.0
        self.uss_added = 0.0


def measure(patterns: list[Pattern], want: np.ndarray, rows: int,
            repeats: int) -> list[dict[str, Any]]:
    """Each pattern's cold run (memory measured around it), then ``repeats`` rounds in which
    every pattern runs once, the order reversed every other round: a machine that gets
    busier or calmer meanwhile weighs on all of them alike."""
    for p in patterns:
        pids = p.pids()
        base = _uss(pids)
        t0 = time.perf_counter()
        got = p.run()
        p.cold = time.perf_counter() - t0
        p.uss_added = _uss(pids) - base
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
            raise SystemExit(f"{p.name}: the results differ from the local run")
    for r in range(repeats):
        for p in (patterns if r % 2 == 0 else patterns[::-1]):
            before = _cpu()
            t0 = time.perf_counter()
            p.run()
            p.walls.append(time.perf_counter() - t0)
            p.cpus.append(_cpu_since(before))
    out = []
    for p in patterns:
        wall = statistics.median(p.walls)
        row = {"pattern": p.name, "cold_s": round(p.cold, 2), "rows_per_s": round(rows / wall),
               "warm_s": round(wall, 3), "cpu_s": round(statistics.median(p.cpus), 2),
               "builds": p.builds(), "uss_added_mb": round(p.uss_added)}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def _blocks(x: np.ndarray, n: int) -> list[np.ndarray]:
    return np.array_split(x, n)


# -- process pools -----------------------------------------------------------------------------

def bench_pool(method: str, path: str, model: bytes, x: np.ndarray, want: np.ndarray,
               args: Any) -> list[dict[str, Any]]:
    from contextlib import ExitStack

    ctx = multiprocessing.get_context(method)
    blocks = _blocks(x, args.blocks)
    bs = args.batch_size

    def pool_run(pool: Any, fn: Any, items: list[Any]) -> np.ndarray:
        return np.concatenate([y for _, y in pool.map(fn, items)])

    def builds(pool: Any) -> Callable[[], Any]:
        def count() -> Any:
            got = {s["pid"]: (s["ort_sessions"], s["ortc_sessions"])
                   for s in pool.map(tasks.state_task, range(4 * WORKERS))}
            return sorted(got.values())
        return count

    session = ortc.Session(path, intra_op_num_threads=1)
    if method == "fork":
        tasks.INHERITED = session  # made before the pools fork: each child rebuilds it once
    with ExitStack() as stack:
        def pool(**kw: Any) -> tuple[Any, list[int]]:
            p = stack.enter_context(ProcessPoolExecutor(WORKERS, mp_context=ctx, **kw))
            return p, sorted(set(p.map(tasks.warm, range(WORKERS))))

        ort_pool, ort_pids = pool()
        per_task, per_task_pids = pool()
        init, init_pids = pool(initializer=tasks.keep,
                               initargs=(ortc.Session(model, intra_op_num_threads=1),))
        patterns = [
            Pattern(f"{method} pool: onnxruntime, lazy global from a path",
                    lambda: pool_run(ort_pool, tasks.ort_pool_task,
                                     [(path, b, bs) for b in blocks]),
                    builds(ort_pool), lambda: ort_pids),
            Pattern(f"{method} pool: ortc, the Session passed to every task (path)",
                    lambda: pool_run(per_task, tasks.ortc_pool_task,
                                     [(session, b, bs) for b in blocks]),
                    builds(per_task), lambda: per_task_pids),
            Pattern(f"{method} pool: ortc, the Session (bytes) in the initializer",
                    lambda: pool_run(init, tasks.ortc_kept_task, [(b, bs) for b in blocks]),
                    builds(init), lambda: init_pids)]
        if method == "fork":
            inherit, inherit_pids = pool()
            patterns.append(Pattern(
                "fork pool: ortc, a module-level Session inherited",
                lambda: pool_run(inherit, tasks.inherited_task, [(b, bs) for b in blocks]),
                builds(inherit), lambda: inherit_pids))
        rows = measure(patterns, want, len(x), args.repeats)
    tasks.INHERITED = None
    session.close()
    return rows


# -- Dask --------------------------------------------------------------------------------------

def bench_dask(path: str, model: bytes, x: np.ndarray, want: np.ndarray,
               args: Any) -> list[dict[str, Any]]:
    from contextlib import ExitStack

    import dask.array as da
    from dask.distributed import Client, LocalCluster

    import ortc.dask

    rows = -(-len(x) // args.blocks)
    xd = da.from_array(x, chunks=(rows, x.shape[1]))
    bs = args.batch_size

    def builds(client: Any) -> Callable[[], Any]:
        return lambda: sorted((s["ort_sessions"], s["ortc_sessions"])
                              for s in client.run(tasks.worker_state).values())

    with ExitStack() as stack:
        def fresh() -> tuple[Any, Callable[[], list[int]]]:
            cluster = stack.enter_context(LocalCluster(
                n_workers=WORKERS, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address="127.0.0.1:0"))
            client = stack.enter_context(Client(cluster))
            pids = sorted(client.run(tasks.warm).values())
            return client, lambda: pids

        patterns = []
        client, pids = fresh()
        y_ort = xd.map_blocks(tasks.ort_block, path=path, batch_size=bs, dtype=np.float32)
        patterns.append(Pattern("dask: onnxruntime, lazy global from a path (map_blocks)",
                                lambda c=client, y=y_ort: c.compute(y).result(),
                                builds(client), pids))
        for label, source in (("path", path), ("bytes", model)):
            session = ortc.Session(source, intra_op_num_threads=1)
            client, pids = fresh()
            y = ortc.dask.map_array(session, xd, batch_size=bs)
            patterns.append(Pattern(f"dask: ortc.dask.map_array, Session from {label}",
                                    lambda c=client, y=y: c.compute(y).result(),
                                    builds(client), pids))
        session = ortc.Session(model, intra_op_num_threads=1)
        client, pids = fresh()
        shipped = client.scatter(session, broadcast=True)
        y_sc = xd.map_blocks(tasks.ortc_block, shipped, bs, dtype=np.float32)
        patterns.append(Pattern(
            "dask: ortc, Session (bytes) scattered with broadcast, map_blocks",
            lambda c=client, y=y_sc: c.compute(y).result(), builds(client), pids))
        return measure(patterns, want, len(x), args.repeats)


# -- Ray ---------------------------------------------------------------------------------------

def bench_ray(path: str, model: bytes, x: np.ndarray, want: np.ndarray,
              args: Any) -> list[dict[str, Any]]:
    import ortc.ray

    ortc.ray.init_local(num_cpus=WORKERS, log_to_driver=False)
    import ray

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

        session = ortc.Session(model, intra_op_num_threads=1)
        # every pattern passes the blocks as arrays (each call puts them in the object store);
        # tasks share the worker processes: their memory is every Ray process's
        patterns = [
            Pattern("ray tasks: onnxruntime, lazy global from a path",
                    lambda: np.concatenate(ray.get(
                        [ort_task.remote(b, path, bs) for b in blocks])), builds),
            Pattern("ray tasks: ortc.ray.run_tasks, Session from bytes",
                    lambda: ortc.ray.run_tasks(session, x, blocks=args.blocks,
                                               batch_size=bs), builds),
            Pattern("ray actors (made per call): onnxruntime, built from a path in each",
                    ort_actors, lambda: "1 per actor"),
            Pattern("ray actors (made per call): ortc.ray.run_actors, Session from bytes",
                    lambda: ortc.ray.run_actors(session, x, actors=WORKERS,
                                                blocks=args.blocks, batch_size=bs),
                    lambda: "1 per actor")]
        rows = measure(patterns, want, len(x), args.repeats)
        session.close()
        return rows
    finally:
        ray.shutdown()


def bench_fork_memory(path: str, model: bytes, x: np.ndarray) -> list[dict[str, Any]]:
    """What a forked child's first run adds to its USS, with a session made in the parent:
    onnxruntime's (used as it is in the child: the parent's pages, shared until written) and
    ortc's (rebuilt in the child from its recipe: the child's own copy of the model)."""
    import onnxruntime as ort
    import psutil

    block = x[:256]
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    made = {"onnxruntime, from a path": ort.InferenceSession(
                path, opts, providers=["CPUExecutionProvider"]),
            "ortc, from a path": ortc.Session(path, intra_op_num_threads=1),
            "ortc, from bytes": ortc.Session(model, intra_op_num_threads=1)}
    out = []
    for name, sess in made.items():
        sess.run(None, {"x": block})  # the parent has run it too
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its USS before and after its first run
            try:
                me = psutil.Process()
                before = me.memory_full_info().uss
                sess.run(None, {"x": block})
                after = me.memory_full_info().uss
                os.write(w, f"{(after - before) / 2**20:.1f}".encode())
            finally:
                os._exit(0)
        os.close(w)
        with os.fdopen(r) as f:
            added = float(f.read() or "nan")
        os.waitpid(pid, 0)
        row = {"pattern": f"fork: a session made in the parent ({name}), its first run in "
               f"the child", "child_uss_added_mb": added}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40000)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engines", default="pool,fork,dask,ray,forkmem")
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
        if "forkmem" in engines:
            rows += bench_fork_memory(path, model, x)
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
