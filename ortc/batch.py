"""A model over many rows, in batches: what the Dask and Ray helpers share.

>>> y = ortc.batch.run_batches(session, x, batch_size=4096)           # doctest: +SKIP

:func:`run_batches` feeds an array (or a dict of arrays, one per model input) to a session in
slices of ``batch_size`` rows along the first axis and joins the outputs along it: a model
whose inputs and outputs carry the batch first. :func:`keep` is the worker side of the
engines' helpers (ortc.dask, ortc.ray): a process keeps the first Session it ran for each
recipe until :func:`forget`, so later tasks, whose Sessions arrive unpickled anew, find its
ORT session alive and build nothing (without it, a worker whose tasks run one after another
would let each one's session go with the task and build the next). That is onnxruntime's
usual idiom (a session made once per worker and kept in a global), by content rather than by
path; the memory it keeps is listed in docs/CLUSTERS.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    from .session import Session

__all__ = ["run_batches", "keep", "forget", "kept", "kept_session", "single_input",
           "single_output"]

#: recipe key (model path, content digest, options) -> the Session this process keeps for it
_kept: dict[Any, Session] = {}


def _key(session: Session) -> Any:
    recipe = session._made_recipe()  # (an unpickled Session's is its recipe: no hash here)
    return (recipe.model_path, recipe.model_digest, recipe.options)


def keep(session: Session) -> Session:
    """The Session this process keeps for ``session``'s recipe: the first one given, kept
    until :func:`forget`; later ones of the same recipe use its ORT session."""
    return _kept.setdefault(_key(session), session)


def kept() -> int:
    """How many sessions this process keeps (one per recipe :func:`keep` was given)."""
    return len(_kept)


def kept_session() -> Session:
    """The one session this process keeps (a pool initializer's ``keep(session)``, so tasks
    need not carry it); ValueError when it keeps none or several."""
    sessions = list(_kept.values())
    if len(sessions) != 1:
        raise ValueError(f"this process keeps {len(sessions)} sessions, not one: "
                         f"ortc.batch.keep(session) first (a pool initializer), and pass "
                         f"the session to tasks when there are several models")
    return sessions[0]


def forget() -> int:
    """Let go of every kept session and of the process's idle one (see docs/CLUSTERS.md;
    each is released once nothing else uses it); returns how many kept sessions there were.
    Run it on each worker (``client.run(ortc.batch.forget)``)."""
    from .session import release_idle

    n = len(_kept)
    _kept.clear()
    release_idle()
    return n


def single_input(session: Session, name: str | None = None) -> str:
    """``name``, or the model's only input's name (ValueError naming them when it has
    several)."""
    return _single([i.name for i in session.inputs], name, "input", "the data feeds")


def single_output(session: Session, name: str | None = None) -> str:
    """``name``, or the model's only output's name (ValueError naming them when it has
    several)."""
    return _single([o.name for o in session.outputs], name, "output", "to return")


def _single(names: list[str], name: str | None, kind: str, role: str) -> str:
    if name is None:
        if len(names) != 1:
            raise ValueError(f"the model has {kind}s {names}: say which one {role} "
                             f"({kind}_name=...)")
        return names[0]
    if name not in names:
        raise ValueError(f"the model has no {kind} {name!r} (its {kind}s: {names})")
    return name


def run_batches(session: Session, data: Any, *, batch_size: int | None = None,
                input_name: str | None = None,
                output_names: str | Sequence[str] | None = None) -> Any:
    """Run ``session`` over ``data`` in slices of ``batch_size`` rows (all at once when None).

    ``data``: an array for the model's input (``input_name``, or its only one), or a dict of
    arrays, one per input, all with the same number of rows. ``output_names``: one name (an
    array is returned), a list (a dict of arrays), or None: the only output's array, or a
    dict of all of them. Rows run in order; the outputs are joined along their first axis.
    """
    if batch_size is not None and (type(batch_size) is not int or batch_size < 1):
        raise ValueError(f"batch_size must be a positive int or None, not {batch_size!r}")
    if isinstance(data, Mapping):
        feeds = {str(k): v for k, v in data.items()}
    else:
        feeds = {single_input(session, input_name): data}
    rows = {len(v) for v in feeds.values()}
    if len(rows) != 1:
        raise ValueError(f"the inputs have different numbers of rows: "
                         f"{ {k: len(v) for k, v in feeds.items()} }")
    [n] = rows
    one = isinstance(output_names, str)
    if output_names is None:
        names = [o.name for o in session.outputs]
        one = len(names) == 1
    else:
        names = [output_names] if isinstance(output_names, str) else list(output_names)
    step = batch_size or max(n, 1)
    parts: list[list[Any]] = []
    for start in range(0, max(n, 1), step):
        batch = {k: v[start:start + step] for k, v in feeds.items()}
        parts.append(session.run(names, batch))
    if len(parts) == 1:
        joined = parts[0]
    else:
        joined = [np.concatenate([p[i] for p in parts]) for i in range(len(names))]
    return joined[0] if one else dict(zip(names, joined))


def output_spec(session: Session, output_name: str, row_shape: tuple[int, ...],
                input_name: str) -> tuple[np.dtype[Any], tuple[int, ...]]:
    """(dtype, the shape of one row) of ``output_name`` for inputs whose rows have
    ``row_shape``: from the model's declared shape when every dim after the first is a
    number, else from one run on a row of zeros (here, in the calling process)."""
    arg = next(o for o in session.outputs if o.name == output_name)
    dtype = arg.dtype
    shape = arg.shape
    if dtype is None:
        raise ValueError(f"output {output_name!r} is not a tensor: batch helpers join tensors")
    if shape is not None and len(shape) >= 1 and all(type(d) is int for d in shape[1:]):
        return np.dtype(dtype), tuple(int(d) for d in shape[1:])  # type: ignore[arg-type]
    inp = next(i for i in session.inputs if i.name == input_name)
    probe = np.zeros((1, *row_shape), dtype=inp.dtype)
    [out] = session.run([output_name], {input_name: probe})
    if not isinstance(out, np.ndarray):
        raise ValueError(f"output {output_name!r} is not a tensor: batch helpers join tensors")
    return np.dtype(out.dtype), tuple(out.shape[1:])
