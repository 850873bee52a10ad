"""onnxruntime's checks of a run's arguments, worked out only after ortc's ``run`` failed, so
that compat raises what onnxruntime raises (class, message, order) at no cost to a good run."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

import ortc
from ortc.dtypes import element_type_for

from ._errors import InvalidArgument, _OrtStyle, translate
from ._run_options import RunOptions
from ._sparse import SparseTensor


def feedable(sess: ortc.Session) -> dict[str, ortc.NodeArg]:
    return {a.name: a for a in (*sess.inputs, *sess.overridable_initializers)}


def validate_input(required: Sequence[str], feed_names: list[Any]) -> None:
    """onnxruntime's Python-side check: every required (non-optional) input is fed."""
    missing = [n for n in required if n not in feed_names]
    if missing:
        raise ValueError(f"Required inputs ({missing}) are missing from input feed "
                         f"({feed_names}).")


def lists_converted(sess: ortc.Session, feeds: Any) -> dict[str, Any] | None:
    """onnxruntime makes a list feed of a tensor input into an array of the input's type with
    numpy's unchecked casts (``[1.5]`` for int64 is ``[1]``); ortc refuses casts that lose
    data. The feeds so converted, or None when there is nothing to convert."""
    if not isinstance(feeds, Mapping):
        return None
    known = feedable(sess)
    out, changed = dict(feeds), False
    for name, data in feeds.items():
        arg = known.get(name)
        if isinstance(data, (list, tuple)) and arg is not None \
                and arg.type.kind == ortc.ValueKind.TENSOR and arg.dtype is not None \
                and arg.dtype.kind not in "OUS":
            try:
                out[name] = np.array(data, dtype=arg.dtype)
            except (TypeError, ValueError):
                return None
            changed = True
    return out if changed else None


def explain(sess: ortc.Session, required: Sequence[str], err: BaseException,
            output_names: Any, feeds: Any, run_options: Any) -> BaseException:
    """What onnxruntime raises for the failed run: its Python-side checks first, then the
    engine's checks of names and types (ortc does some of them itself, in its own words)."""
    try:
        validate_input(required, list(feeds.keys()))
    except (ValueError, AttributeError) as mine:
        return mine
    if run_options is not None and not isinstance(run_options, RunOptions):
        return TypeError(f"run(): incompatible function arguments: run_options must be an "
                         f"onnxruntime.RunOptions, not {type(run_options).__name__}")
    if isinstance(err, ortc.InvalidArgument) and not isinstance(err, _OrtStyle):
        known = feedable(sess)
        for name in feeds:
            if name not in known:
                return InvalidArgument(f"Invalid input name: {name}", 2)
        outputs = {a.name for a in sess.outputs}
        for name in output_names or ():
            if name not in outputs:
                return InvalidArgument(f"Invalid output name:{name}", 2)
        for name, data in feeds.items():
            wrong = type_mismatch(known[name], data)
            if wrong:
                return InvalidArgument(wrong, 2)
    for name, data in feeds.items():
        if isinstance(data, (str, bytes)):
            return RuntimeError(f"Input must be a list of dictionaries or a single numpy "
                                f"array for input '{name}'.")
        if isinstance(data, (float, int, np.generic, SparseTensor)):  # no scalars, no sparse
            return RuntimeError(f"Unable to handle object of type {type(data)}")
    return translate(err)


def type_mismatch(arg: ortc.NodeArg, data: Any) -> str | None:
    """onnxruntime's message when ``data`` is an array of another element type."""
    if not isinstance(data, np.ndarray) or arg.type.kind != ortc.ValueKind.TENSOR:
        return None
    try:
        got = element_type_for(data.dtype)
    except TypeError:
        return None
    expected = arg.type.element_type
    if expected is None or got == expected:
        return None
    actual = ortc.TypeInfo(ortc.ValueKind.TENSOR, got).type_str
    return (f"Unexpected input data type. Actual: ({actual}) , expected: "
            f"({arg.type.type_str})")
