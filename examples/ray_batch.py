"""Batch inference with Ray: one actor per worker builds the session once from its recipe.

    python examples/ray_batch.py [--rows 20000] [--partitions 8]

Ray passes arguments by pickling them, and a :class:`ortc.Session` pickles as its recipe. A task
that took the session itself would build it again for every call, so the session goes to a few
long-lived actors instead, once each (``Runner.remote(session.recipe())``), and the partitions
are spread over them with an ``ActorPool``. The results are checked bit-identical to a local
run. Needs ``pip install ray`` (not a dependency of ortc or of its tests).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import ortc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dask_batch import build_model, infer_block  # noqa: E402  (the same model and block step)


def main() -> None:
    try:
        import ray
        from ray.util import ActorPool
    except ImportError:
        raise SystemExit("examples/ray_batch.py needs Ray, which ortc does not install: "
                         "pip install ray") from None

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--actors", type=int, default=2)
    args = parser.parse_args()

    @ray.remote
    class Runner:
        def __init__(self, recipe: ortc.SessionRecipe) -> None:
            self.session = ortc.Session.from_recipe(recipe)  # built once per actor

        def run(self, block: np.ndarray) -> np.ndarray:
            return infer_block(block, self.session)

        def sessions(self) -> tuple[int, int]:
            return os.getpid(), ortc.live_handles().get("Session", 0)

    x = np.random.default_rng(1).standard_normal((args.rows, 64)).astype(np.float32)
    session = ortc.Session(build_model(), intra_op_num_threads=1)
    local = infer_block(x, session)

    ray.init(num_cpus=args.actors, include_dashboard=False, log_to_driver=False)
    try:
        recipe = ray.put(session.recipe())  # into the object store once
        runners = [Runner.remote(recipe) for _ in range(args.actors)]  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        pool = ActorPool(runners)
        blocks = np.array_split(x, args.partitions)
        remote = np.concatenate(list(pool.map(lambda a, b: a.run.remote(b), blocks)))
        ray_s = time.perf_counter() - t0
        built = ray.get([r.sessions.remote() for r in runners])
    finally:
        ray.shutdown()

    same = remote.dtype == local.dtype and remote.tobytes() == local.tobytes()
    print(f"actors: {len(built)}, sessions in each: {sorted(n for _, n in built)}")
    print(f"identical to the local run: {same}")
    print(f"ray run: {ray_s * 1e3:.1f} ms for {args.rows} rows in {args.partitions} partitions")
    session.close()
    if not same:
        raise SystemExit("Ray's results differ from the local run")


if __name__ == "__main__":
    main()
