"""A model over a Dask array or dataframe, in batches (Dask is imported here, on first use;
it is no dependency of ortc: ``pip install "dask[distributed]"``).

>>> y = ortc.dask.map_array(session, x, batch_size=4096)        # a dask array  # doctest: +SKIP
>>> out = ortc.dask.map_dataframe(session, df, batch_size=4096)  # doctest: +SKIP

The session goes into the graph once, as one key of its own (``dask.delayed(session)``, named
by its recipe's token, so the same session gives the same key): a worker that runs a block
gets it as a dependency, from the scheduler or from another worker, once per computation, and
keeps it (ortc.batch.keep): tasks of later computations reuse its ORT session, and only the
recipe travels. Nothing builds it but the workers that run blocks (unpickling builds nothing:
the scheduler does not need the model file). Each block runs in slices of ``batch_size`` rows
(all of it at once when None). Progress: the dashboard and ``distributed.progress`` show the
``ortc-run-...`` tasks; on the local schedulers, ``dask.diagnostics.ProgressBar``.

A lost worker loses nothing the graph cannot make again: the session's key is recomputed
from the graph (its recipe) on whichever worker needs it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .batch import keep, output_spec, run_batches, single_input, single_output

if TYPE_CHECKING:
    from .session import Session

__all__ = ["map_array", "map_dataframe", "session_key"]


def _engine(name: str) -> Any:
    """Dask's (or pandas') module ``name``, imported now, typed Any: ortc is checked and used
    without them installed."""
    return import_module(name)


def session_key(session: Session) -> Any:
    """``dask.delayed(session)`` under a name from its recipe: one key per model and options,
    so every graph built from the same session shares it (tokenizing builds nothing)."""
    from .recipe import recipe_token

    return _engine("dask").delayed(session, pure=True, name=recipe_token(session._made_recipe()))


def _run_block(block: np.ndarray[Any, Any], session: Session, batch_size: int | None,
               input_name: str, output_name: str) -> Any:
    """One block through this worker's session (kept for the next tasks)."""
    return run_batches(keep(session), block, batch_size=batch_size, input_name=input_name,
                       output_names=output_name)


def map_array(session: Session, x: Any, *, batch_size: int | None = None,
              input_name: str | None = None, output_name: str | None = None) -> Any:
    """The model's output for the rows of dask array ``x`` (the batch is axis 0), as a dask
    array with ``x``'s row chunks and the output's dtype; the other axes are one chunk (``x``
    is rechunked to that first). ``input_name``/``output_name``: needed when the model has
    several inputs/outputs. The output's row shape comes from the model, or from one run on a
    row of zeros here when the model leaves it symbolic."""
    da = _engine("dask.array")
    if not isinstance(x, da.Array):
        raise TypeError(f"x must be a dask array, not {type(x).__name__}")
    if x.ndim < 1:
        raise ValueError("x needs a batch axis (axis 0)")
    inp = single_input(session, input_name)
    out = single_output(session, output_name)
    if x.ndim > 1 and any(len(c) > 1 for c in x.chunks[1:]):
        x = x.rechunk({i: -1 for i in range(1, x.ndim)})
    dtype, row = output_spec(session, out, tuple(x.shape[1:]), inp)
    out_ndim = 1 + len(row)
    extra: dict[str, Any] = {}
    if out_ndim < x.ndim:
        extra["drop_axis"] = list(range(out_ndim, x.ndim))
    elif out_ndim > x.ndim:
        extra["new_axis"] = list(range(x.ndim, out_ndim))
    key = session_key(session)
    # the output's name: of this session over this array with these arguments (a name alone
    # would make two arrays' outputs the same keys)
    token = _engine("dask.base").tokenize(key.key, x.name, batch_size, inp, out)
    return da.map_blocks(
        _run_block, x, key, batch_size, inp, out, dtype=dtype,
        chunks=(x.chunks[0], *((d,) for d in row)),
        meta=np.empty((0,) * out_ndim, dtype), name=f"ortc-run-{token}", **extra)


def _run_partition(part: Any, session: Session, columns: list[Any], dtype: Any,
                   batch_size: int | None, input_name: str, output_name: str,
                   out_columns: list[str]) -> Any:
    pd = _engine("pandas")
    features = part[columns].to_numpy(dtype=dtype)
    y = run_batches(keep(session), features, batch_size=batch_size, input_name=input_name,
                    output_names=output_name)
    y = np.asarray(y).reshape(len(part), -1)
    return pd.DataFrame({c: y[:, i] for i, c in enumerate(out_columns)}, index=part.index)


def map_dataframe(session: Session, df: Any, columns: Sequence[Any] | None = None, *,
                  batch_size: int | None = None, input_name: str | None = None,
                  output_name: str | None = None,
                  output_columns: Sequence[str] | None = None) -> Any:
    """The model's output for the rows of dask dataframe ``df``: the ``columns`` (all when
    None, in that order) as the rows of a 2-D input of the input's dtype; the output, of
    shape [rows] or [rows, k], as a dask dataframe with ``df``'s partitions and index, one
    column per output value (``output_columns``, or ``<output>`` / ``<output>_<i>``)."""
    dd, pd = _engine("dask.dataframe"), _engine("pandas")
    if not isinstance(df, dd.DataFrame):
        raise TypeError(f"df must be a dask dataframe, not {type(df).__name__}")
    cols = list(df.columns if columns is None else columns)
    inp = single_input(session, input_name)
    out = single_output(session, output_name)
    in_dtype = next(i for i in session.inputs if i.name == inp).dtype
    dtype, row = output_spec(session, out, (len(cols),), inp)
    width = int(np.prod(row)) if row else 1
    names = list(output_columns) if output_columns is not None else (
        [out] if not row else [f"{out}_{i}" for i in range(width)])
    if len(names) != width:
        raise ValueError(f"output {out!r} has {width} values a row; {len(names)} column "
                         f"names given")
    meta = pd.DataFrame({c: np.empty(0, dtype) for c in names})
    return df.map_partitions(_run_partition, session_key(session), cols, in_dtype, batch_size,
                             inp, out, names, meta=meta)
