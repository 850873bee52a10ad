"""Batch inference helpers: ortc.batch (engine-free), ortc.dask over a loopback LocalCluster of
worker processes, ortc.ray over a local Ray on 127.0.0.1 (each bounded in time)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import Any, Iterator

import numpy as np
import pytest

import models
import ortc
import ortc.batch
import ortc.recipe

F32 = np.float32
MODEL = models.mlp_model(3, 16, "batch")
X = np.random.default_rng(11).standard_normal((600, 16)).astype(F32)
LIMIT = 120  # seconds any one cluster call may take


@pytest.fixture(scope="module")
def session() -> Iterator[ortc.Session]:
    with ortc.Session(MODEL, intra_op_num_threads=1) as s:
        yield s


@pytest.fixture(scope="module")
def want(session: ortc.Session) -> np.ndarray:
    return session.run(None, {"x": X})[0].copy()


# -- ortc.batch ----------------------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [None, 1, 7, 600, 1000])
def test_run_batches_equals_one_run(session: ortc.Session, want: np.ndarray,
                                    batch_size: int | None) -> None:
    got = ortc.batch.run_batches(session, X, batch_size=batch_size)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if batch_size in (None, 600, 1000):
        assert got.tobytes() == want.tobytes()  # one run: the same run


def test_run_batches_with_several_inputs_and_outputs() -> None:
    with ortc.Session(models.add_model(F32, ["n"])) as s:
        a, b = np.arange(10, dtype=F32), np.ones(10, F32)
        assert ortc.batch.run_batches(s, {"a": a, "b": b}, batch_size=3).tolist() == \
            (a + b).tolist()
        assert list(ortc.batch.run_batches(s, {"a": a, "b": b}, output_names=["c"])) == ["c"]
        with pytest.raises(ValueError, match=r"inputs \['a', 'b'\].*input_name"):
            ortc.batch.run_batches(s, a)
        with pytest.raises(ValueError, match="different numbers of rows"):
            ortc.batch.run_batches(s, {"a": a, "b": b[:3]})
    with pytest.raises(ValueError, match="batch_size"):
        ortc.batch.run_batches(s, {"a": a, "b": b}, batch_size=0)


def test_keep_holds_one_session_per_recipe_until_forget() -> None:
    ortc.batch.forget()
    with ortc.Session(MODEL, intra_op_num_threads=1) as s:
        data = pickle.dumps(s)
    first, second = pickle.loads(data), pickle.loads(data)
    with pytest.raises(ValueError, match="keeps 0 sessions"):
        ortc.batch.kept_session()
    assert ortc.batch.keep(first) is first and ortc.batch.keep(second) is first
    assert ortc.batch.kept() == 1 and ortc.batch.kept_session() is first
    second.run(None, {"x": X[:2]})
    del first
    import gc

    gc.collect()
    live = ortc.live_handles()
    assert live.get("SharedSession") == 1  # the kept one's, under both
    second.close()
    gc.collect()
    assert ortc.live_handles().get("SharedSession") == 1  # (also the process's idle one)
    assert ortc.batch.forget() == 1  # lets go of both
    gc.collect()
    assert ortc.live_handles().get("SharedSession", 0) == 0


# -- Dask ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    pytest.importorskip("distributed", reason="the dask extra: make test installs it")
    pytest.importorskip("pandas", reason="the dask extra: make test installs it")
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0")
    c = Client(cluster, timeout=LIMIT)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def test_the_local_cluster_listens_on_loopback_only(client: Any) -> None:
    import psutil

    me = psutil.Process()
    addresses = {c.laddr.ip for p in [me, *me.children(recursive=True)]
                 for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN}
    assert addresses and addresses <= {"127.0.0.1", "::ffff:127.0.0.1", "::1"}, addresses


def _builds(client: Any) -> dict[str, int]:
    return client.run(lambda: ortc.live_handles().get("SharedSession", 0))  # type: ignore


def _forget(client: Any) -> None:
    """Each worker lets go of the sessions earlier tests kept (the counts start at 0). A worker
    may still hold an earlier test's task (and the session in its arguments) for a moment
    after its result came back: asked again until then, within a bound."""
    import gc
    import time

    deadline = time.monotonic() + LIMIT
    while True:
        client.run(ortc.batch.forget)
        client.run(gc.collect)
        counts = set(_builds(client).values())
        if counts == {0} or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert counts == {0}


def test_dask_array_in_batches_builds_once_per_worker(client: Any, session: ortc.Session,
                                                      want: np.ndarray) -> None:
    _forget(client)
    import dask.array as da

    import ortc.dask

    x = da.from_array(X, chunks=(50, 8))  # the feature axis is rechunked to one chunk
    y = ortc.dask.map_array(session, x, batch_size=16)
    assert y.dtype == F32 and y.shape == (600, 16) and y.chunks[0] == x.chunks[0]
    got = client.compute(y).result(timeout=LIMIT)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    got_whole = client.compute(ortc.dask.map_array(session, x)).result(timeout=LIMIT)
    # blocks of 50 rows in one run each: bit-identical to the same rows run locally
    assert got_whole[:50].tobytes() == session.run(None, {"x": X[:50]})[0].tobytes()
    builds = _builds(client)
    assert max(builds.values()) == 1 and sum(builds.values()) >= 1, builds
    assert ortc.live_handles().get("SharedSession", 0) == 0  # nor here (client, scheduler)


def test_two_arrays_through_one_session_in_one_graph_stay_apart(
        client: Any, session: ortc.Session) -> None:
    import dask
    import dask.array as da

    import ortc.dask

    a = da.from_array(X[:100], chunks=(50, 16))
    b = da.from_array(X[100:200], chunks=(50, 16))
    ya, yb = ortc.dask.map_array(session, a), ortc.dask.map_array(session, b)
    assert ya.name != yb.name and ortc.dask.session_key(session).key == \
        ortc.dask.session_key(session).key  # one key for the session, two outputs
    got_a, got_b = dask.compute(ya, yb, scheduler=client.get)
    for got, rows in ((got_a, X[:100]), (got_b, X[100:200])):
        # block by block, as the cluster ran them: bit-identical
        assert got.tobytes() == b"".join(session.run(None, {"x": rows[i:i + 50]})[0].tobytes()
                                         for i in (0, 50))


def test_a_model_file_gone_from_a_worker_is_named_by_the_task_error(
        client: Any, tmp_path: Any) -> None:
    """The scheduler needs no file (it does not build); the worker that does says which file
    it lacks, as the task's error, at the client."""
    import dask.array as da

    import ortc.dask

    path = tmp_path / "m.onnx"
    path.write_bytes(MODEL)
    with ortc.Session(str(path), intra_op_num_threads=1) as s:
        y = ortc.dask.map_array(s, da.from_array(X[:40], chunks=(20, 16)))
        os.remove(path)
        with pytest.raises(ortc.NoSuchFile, match="m.onnx"):
            client.compute(y).result(timeout=LIMIT)
        path.write_bytes(models.add_model(F32, ["n"]))  # another model at that path
        # (another graph: Dask keeps the failed keys of the first while its future lives)
        y = ortc.dask.map_array(s, da.from_array(X[:40], chunks=(10, 16)))
        with pytest.raises(ortc.recipe.RecipeError, match="not the model this recipe"):
            client.compute(y).result(timeout=LIMIT)


def test_dask_array_output_shape_from_a_run_when_the_model_leaves_it_symbolic(
        client: Any) -> None:
    import dask.array as da
    from onnx import TensorProto, helper

    import ortc.dask

    # y = Relu(x) over [batch, k] with k symbolic: the row shape comes from a probe run
    relu = models._bytes(models.make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "k"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "k"])]))
    with ortc.Session(relu) as s:
        x = np.random.default_rng(2).standard_normal((40, 3)).astype(F32)
        y = ortc.dask.map_array(s, da.from_array(x, chunks=(10, 3)), batch_size=4)
        assert y.shape == (40, 3) and y.chunks == ((10,) * 4, (3,)) and y.dtype == F32
        assert client.compute(y).result(timeout=LIMIT).tolist() == np.maximum(x, 0).tolist()
    with ortc.Session(models.add_model(F32, ["n", "m"])) as s:
        with pytest.raises(ValueError, match="input_name"):
            ortc.dask.map_array(s, da.from_array(np.ones((40, 3), F32), chunks=(10, 3)))
    with ortc.Session(MODEL) as s:
        with pytest.raises(TypeError, match="dask array"):
            ortc.dask.map_array(s, np.ones((4, 16), F32))


def test_dask_dataframe_in_batches_keeps_partitions_index_and_dtypes(
        client: Any, session: ortc.Session, want: np.ndarray) -> None:
    import dask.dataframe as dd
    import pandas as pd

    import ortc.dask

    pdf = pd.DataFrame(X, columns=[f"f{i}" for i in range(16)],
                       index=pd.RangeIndex(1000, 1600))
    pdf["label"] = "unused"
    df = dd.from_pandas(pdf, npartitions=4)
    out = ortc.dask.map_dataframe(session, df, [f"f{i}" for i in range(16)], batch_size=32)
    assert out.npartitions == 4 and list(out.columns) == [f"y_{i}" for i in range(16)]
    assert all(t == np.dtype(F32) for t in out._meta.dtypes)
    got = client.compute(out).result(timeout=LIMIT)
    assert list(got.index) == list(range(1000, 1600))
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="16 values a row; 2 column names"):
        ortc.dask.map_dataframe(session, df, [f"f{i}" for i in range(16)],
                                output_columns=["a", "b"])


def test_scatter_builds_nothing_in_the_client(client: Any, session: ortc.Session,
                                             want: np.ndarray) -> None:
    """Dask's tokenizer names the session from its recipe (no pickle round trip), and what
    the client or the scheduler (in this process for a LocalCluster) unpickles is not built:
    the client keeps its one session; each worker builds one when a task first uses it."""
    _forget(client)
    import gc

    import dask.array as da

    import ortc.dask  # noqa: F401

    gc.collect()
    before = ortc.live_handles()
    shipped = client.scatter(session, broadcast=True)
    x = da.from_array(X, chunks=(100, 16))
    y = x.map_blocks(lambda b, s: s.run(None, {"x": b})[0], shipped, dtype=F32)
    got = client.compute(y).result(timeout=LIMIT)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    gc.collect()
    after = ortc.live_handles()
    assert after.get("Session", 0) == before.get("Session", 0)
    assert after.get("SharedSession", 0) == 0
    assert max(_builds(client).values()) == 1
    del shipped


def test_a_lost_dask_worker_rebuilds_from_the_recipe(client: Any, session: ortc.Session,
                                                     want: np.ndarray) -> None:
    _forget(client)
    import dask.array as da

    import ortc.dask

    x = da.from_array(X, chunks=(100, 16))
    y = ortc.dask.map_array(session, x)
    client.compute(y).result(timeout=LIMIT)
    lost = sorted(_builds(client))[0]
    client.restart_workers([lost], timeout=LIMIT)  # the worker process dies and comes back
    client.wait_for_workers(2, timeout=LIMIT)
    got = client.compute(y).result(timeout=LIMIT)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert max(_builds(client).values()) == 1


# -- Ray -----------------------------------------------------------------------------------

RAY_SCRIPT = r"""
import os, sys, json
import numpy as np
sys.path.insert(0, {tests!r})
import models, ortc, ortc.ray, ortc.batch
import psutil
ortc.ray.init_local(num_cpus=2, log_to_driver=False)
import ray
s = ortc.Session(models.mlp_model(3, 16, "batch"), intra_op_num_threads=1)
x = np.random.default_rng(11).standard_normal((600, 16)).astype(np.float32)
want = s.run(None, {{"x": x}})[0]
res = {{}}
y = ortc.ray.run_tasks(s, x, batch_size=16, blocks=6, progress=True)
res["tasks"] = bool(np.allclose(y, want, rtol=1e-6, atol=1e-6)) and y.dtype == np.float32
y = ortc.ray.run_tasks(s, x, blocks=6)
res["tasks_exact"] = y.tobytes() == ortc.batch.run_batches(s, x, batch_size=100).tobytes()
y = ortc.ray.run_actors(s, x, actors=2, blocks=6)
res["actors"] = y.tobytes() == ortc.batch.run_batches(s, x, batch_size=100).tobytes()
@ray.remote
def builds():
    return os.getpid(), ortc.live_handles().get("SharedSession", 0)
res["builds"] = sorted(set(ray.get([builds.remote() for _ in range(8)])))
# lose the worker processes that built it: the next call builds again from the recipe in
# the object store, wherever its tasks run
@ray.remote(max_retries=0)
def die():
    os._exit(1)
lost = {{pid for pid, _ in res["builds"]}}
for _ in range(4):
    try:
        ray.get(die.remote())
    except Exception:
        pass
y = ortc.ray.run_tasks(s, x, blocks=6)
res["after_loss"] = y.tobytes() == ortc.batch.run_batches(s, x, batch_size=100).tobytes()
res["builds_after_loss"] = sorted(set(ray.get([builds.remote() for _ in range(8)])))
res["lost"] = sorted(lost)
import ray.data
rows = ortc.ray.map_dataset(s, ray.data.from_numpy(x), batch_size=150,
                            concurrency=1).take_all()
res["data"] = np.stack([r["output"] for r in rows]).tobytes() == \
    ortc.batch.run_batches(s, x, batch_size=150).tobytes()
listening = set()
for p in psutil.Process().children(recursive=True):
    try:
        for c in p.net_connections(kind="inet"):
            if c.status == psutil.CONN_LISTEN:
                listening.add(c.laddr.ip)
    except psutil.Error:
        pass
res["listening"] = sorted(listening)
ray.shutdown()
print("RESULT " + json.dumps(res))
"""


def test_ray_tasks_actors_and_data_on_a_loopback_ray() -> None:
    """In a process of its own (Ray's runtime stays out of the test process): a local Ray
    whose servers listen on loopback addresses only; tasks, actors and Ray Data's
    map_batches give the local results, and a worker process builds the session once."""
    pytest.importorskip("ray", reason="the ray extra: make test installs it")
    pytest.importorskip("pyarrow", reason="Ray Data: the ray extra (ray[data])")
    tests = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(tests)
    proc = subprocess.run([sys.executable, "-c", RAY_SCRIPT.format(tests=tests)],
                          env=dict(os.environ, PYTHONPATH=root), capture_output=True,
                          text=True, timeout=300)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert proc.returncode == 0 and line, proc.stdout[-2000:] + proc.stderr[-4000:]
    import json

    res = json.loads(line[7:])
    assert res["tasks"] and res["tasks_exact"] and res["actors"] and res["data"], res
    assert res["builds"] and all(n <= 1 for _, n in res["builds"]), res
    # the workers that held it are gone; the new ones built it (once each), results equal
    assert res["after_loss"], res
    assert not set(res["lost"]) & {pid for pid, _ in res["builds_after_loss"]}, res
    assert all(n <= 1 for _, n in res["builds_after_loss"]), res
    assert res["listening"] and all(ip in ("127.0.0.1", "::ffff:127.0.0.1", "::1")
                                    for ip in res["listening"]), res
    assert "ortc tasks: 6/6 blocks" in proc.stderr
