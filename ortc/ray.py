"""A model over rows with Ray: tasks, actors, or Ray Data's ``map_batches`` (Ray is imported
here, on first use; it is no dependency of ortc: ``pip install ray``, ``"ray[data]"`` for
:func:`map_dataset`).

>>> ortc.ray.init_local(num_cpus=2)                 # a local Ray on 127.0.0.1 only  # doctest: +SKIP
>>> y = ortc.ray.run_tasks(session, x, batch_size=4096, blocks=8)   # doctest: +SKIP

The session goes to Ray's object store once (``ray.put``: its model bytes out of band, as one
buffer a worker on the same machine reads in place); each task or actor gets it from there and
keeps it (ortc.batch.keep), so a worker builds it once for all its tasks and a later task
copies nothing. A worker that dies takes its session with it; its next task, on whatever
worker, builds again from the recipe in the object store. Progress: ``progress=True`` prints
blocks done to stderr; Ray Data shows its own bars.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .batch import keep, run_batches

if TYPE_CHECKING:
    from .session import Session

__all__ = ["init_local", "run_tasks", "run_actors", "map_dataset"]


def _ray(name: str = "ray") -> Any:
    """Ray's module ``name``, imported now, typed Any: ortc is checked and used without it."""
    return import_module(name)


def init_local(num_cpus: int | None = None, **kwargs: Any) -> Any:
    """Start a local Ray whose servers listen on 127.0.0.1 only, and return ray.init's
    answer. Ray replaces 127.0.0.1 given as the node address with the machine's routable
    one, and then listens on every interface, unless it believes it is a single-machine
    setup (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, which its workers inherit): set here
    before Ray reads it. RuntimeError when Ray came up on another address anyway."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    constants: Any = sys.modules.get("ray._private.ray_constants")
    if constants is not None:  # Ray imported already: it read the variable then
        constants.ENABLE_RAY_CLUSTER = False
    ray = _ray()
    kwargs.setdefault("include_dashboard", False)
    info = ray.init(num_cpus=num_cpus, **kwargs)
    address = ray.util.get_node_ip_address()
    if address != "127.0.0.1":
        ray.shutdown()
        raise RuntimeError(f"Ray started on {address}, not on 127.0.0.1 only")
    return info


def _blocks(x: Any, blocks: int | None, block_rows: int | None) -> list[Any]:
    n = len(x)
    if block_rows is None:
        block_rows = -(-n // (blocks or 1)) if n else 1
    return [x[i:i + block_rows] for i in range(0, n, block_rows)] or [x[:0]]


def _run_block(session: Session, block: Any, batch_size: int | None, input_name: str | None,
               output_name: str | None) -> Any:
    return run_batches(keep(session), block, batch_size=batch_size, input_name=input_name,
                       output_names=output_name)


def _gather(refs: list[Any], progress: bool, what: str) -> list[Any]:
    """The results of ``refs`` in order, printing blocks done to stderr with ``progress``."""
    ray = _ray()
    if not progress:
        return list(ray.get(refs))
    pending = list(refs)
    done = 0
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        done += len(ready)
        print(f"\rortc {what}: {done}/{len(refs)} blocks", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return list(ray.get(refs))


_remote: dict[str, Any] = {}


def _remote_fn(name: str, make: Callable[[], Any]) -> Any:
    fn = _remote.get(name)
    if fn is None:
        fn = _remote[name] = make()
    return fn


def run_tasks(session: Session, x: np.ndarray[Any, Any], *, batch_size: int | None = None,
              blocks: int | None = None, block_rows: int | None = None,
              input_name: str | None = None, output_name: str | None = None,
              progress: bool = False) -> Any:
    """The model's output for the rows of ``x``: one Ray task per block (``blocks`` of them,
    or blocks of ``block_rows`` rows), each running its block in slices of ``batch_size``
    rows; joined in order. The session is put in the object store once."""
    ray = _ray()
    task = _remote_fn("task", lambda: ray.remote(_run_block))
    ref = ray.put(session)
    refs = [task.remote(ref, b, batch_size, input_name, output_name)
            for b in _blocks(x, blocks, block_rows)]
    return _join(_gather(refs, progress, "tasks"))


def _join(parts: list[Any]) -> Any:
    if isinstance(parts[0], dict):
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return np.concatenate(parts)


class _Runner:
    """An actor's state: the session, kept for the actor's life."""

    def __init__(self, session: Session) -> None:
        self.session = keep(session)

    def run(self, block: Any, batch_size: int | None, input_name: str | None,
            output_name: str | None) -> Any:
        return run_batches(self.session, block, batch_size=batch_size, input_name=input_name,
                           output_names=output_name)


def run_actors(session: Session, x: np.ndarray[Any, Any], *, actors: int = 2,
               batch_size: int | None = None, blocks: int | None = None,
               block_rows: int | None = None, input_name: str | None = None,
               output_name: str | None = None, progress: bool = False) -> Any:
    """Like :func:`run_tasks`, over ``actors`` long-lived actors (each builds the session
    once, from the one copy in the object store); the actors end with the call."""
    ray = _ray()
    runner = _remote_fn("actor", lambda: ray.remote(_Runner))
    ref = ray.put(session)
    pool = [runner.remote(ref) for _ in range(actors)]
    try:
        parts = _blocks(x, blocks or actors, block_rows)
        refs = [pool[i % actors].run.remote(b, batch_size, input_name, output_name)
                for i, b in enumerate(parts)]
        return _join(_gather(refs, progress, "actors"))
    finally:
        for a in pool:
            ray.kill(a)


class _Predictor:
    """Ray Data's callable class: one per actor, the session built once there."""

    def __init__(self, session: Session, column: str, output_column: str,
                 input_name: str | None, output_name: str | None, batch_size: int | None
                 ) -> None:
        self.session = keep(session)
        self.column, self.output_column = column, output_column
        self.input_name, self.output_name = input_name, output_name
        self.batch_size = batch_size

    def __call__(self, batch: dict[str, np.ndarray[Any, Any]]) -> dict[str, Any]:
        y = run_batches(self.session, batch[self.column], batch_size=self.batch_size,
                        input_name=self.input_name, output_names=self.output_name)
        return {**batch, self.output_column: y}


def map_dataset(session: Session, ds: Any, *, column: str = "data", batch_size: int = 1024,
                output_column: str = "output", concurrency: int = 2,
                input_name: str | None = None, output_name: str | None = None,
                run_batch_size: int | None = None) -> Any:
    """``ds.map_batches`` over the model: column ``column`` of each batch of ``batch_size``
    rows is the input, its output becomes ``output_column`` (the other columns are kept); on
    ``concurrency`` actors, each building the session once. ``run_batch_size`` splits a
    batch further into ORT runs. Lazy, like every Ray Data transform."""
    strategy = _ray("ray.data").ActorPoolStrategy
    return ds.map_batches(
        _Predictor, fn_constructor_args=(session, column, output_column, input_name,
                                         output_name, run_batch_size),
        batch_size=batch_size, batch_format="numpy",
        compute=strategy(size=concurrency))
