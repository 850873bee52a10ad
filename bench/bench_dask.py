"""What a Dask round trip costs against a local run of the same batch.

    PYTHONPATH=. python bench/bench_dask.py [--rows 20000] [--partitions 8] [--repeats 7]

One session (examples/dask_batch.py's MLP, 64 wide, 3 layers, intra-op threads 1), one batch of
``rows`` rows. Measured: the local run of the whole batch; the cluster run of the same batch in
``partitions`` blocks over a loopback LocalCluster (2 worker processes, 1 thread each), the
session scattered once beforehand (that time is reported separately, as is cluster start-up).
Medians of ``repeats`` warm rounds; the overhead is cluster minus local. Results are checked
bit-identical each round. Numbers are printed (and written as JSON with --json), never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, os.path.join(ROOT, "examples")):
    if path not in sys.path:
        sys.path.insert(0, path)

import numpy as np  # noqa: E402

import ortc  # noqa: E402
from dask_batch import build_model, infer_block, run_on_cluster, start_cluster  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args()

    x = np.random.default_rng(1).standard_normal((args.rows, 64)).astype(np.float32)
    session = ortc.Session(build_model(), intra_op_num_threads=1)
    want = infer_block(x, session)
    local = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        infer_block(x, session)
        local.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    cluster, client = start_cluster()
    startup = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        shipped = client.scatter(session, broadcast=True)
        scatter = time.perf_counter() - t0
        run_on_cluster(client, shipped, x, args.partitions)  # warm-up
        remote = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            got = run_on_cluster(client, shipped, x, args.partitions)
            remote.append(time.perf_counter() - t0)
            if got.tobytes() != want.tobytes():
                raise SystemExit("the cluster's results differ from the local run")
    finally:
        client.close()
        cluster.close()
    session.close()

    result = {
        "rows": args.rows, "partitions": args.partitions, "repeats": args.repeats,
        "cluster_startup_s": round(startup, 3), "scatter_session_ms": round(scatter * 1e3, 1),
        "local_ms": round(statistics.median(local) * 1e3, 2),
        "cluster_ms": round(statistics.median(remote) * 1e3, 2),
    }
    result["overhead_ms"] = round(result["cluster_ms"] - result["local_ms"], 2)
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
