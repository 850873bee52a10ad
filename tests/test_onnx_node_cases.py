"""ONNX's own operator test cases (every case of onnx.backend.test.case.node, about 1,900, each a
model with its inputs) run through onnxruntime and through ortc.compat, side by side: the same
outputs bit for bit, or the same exception. The inputs go in as ONNX gives them (TensorProtos
as arrays, numpy scalars as 0-d arrays), and again as users also pass arrays: strided views,
Fortran order, read-only, and nested lists.

The one difference allowed is the documented one (docs/COMPAT.md, "Differences"): outputs of
types numpy has no dtype for (bfloat16, most float8, int4, int2...), which onnxruntime refuses
("No corresponding Numpy type") and ortc.compat returns as ml_dtypes arrays. A few seconds a
mode."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import onnx
import onnxruntime as real_ort
import pytest
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases

import ortc.compat as compat

#: onnxruntime's refusals of a type numpy has no dtype for (the allowed difference)
_NO_NUMPY_TYPE = ("No corresponding Numpy type", "can't be converted to MLDataType")


def _strided(v: np.ndarray) -> np.ndarray:
    big = np.empty(v.shape[:-1] + (v.shape[-1] * 2,), v.dtype)[..., ::2]
    big[...] = v
    return big


def _read_only(v: np.ndarray) -> np.ndarray:
    v = v.copy()
    v.flags.writeable = False
    return v


#: how an input array is passed: mode -> conversion (of numeric arrays of rank 1 and up)
MODES: dict[str, Callable[[np.ndarray], Any]] = {
    "as given": lambda v: v,
    "strided": _strided,
    "fortran": np.asfortranarray,
    "read-only": _read_only,
    "lists": lambda v: v.tolist(),
}


@pytest.fixture(scope="module")
def cases() -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = sorted((c for c in collect_testcases() if c.data_sets), key=lambda c: c.name)
    assert len(found) > 1000, len(found)  # the installed onnx ships its node cases
    return found


def _outcome(mod: Any, model: bytes, feeds: dict[str, Any]) -> tuple[Any, ...]:
    try:
        so = mod.SessionOptions()
        so.intra_op_num_threads = 1
        so.log_severity_level = 4
        sess = mod.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        return ("ok", sess.run(None, feeds))
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return ("raised", type(exc).__name__, str(exc))


def _difference(a: Any, b: Any, path: str = "outputs") -> str | None:
    """Where ``a`` and ``b`` differ (dtype, shape, bytes; lists and dicts item by item)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return f"{path}: {type(a).__name__} vs {type(b).__name__}"
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"{path}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype == object:
            return None if a.tolist() == b.tolist() else f"{path}: values differ"
        return None if a.tobytes() == b.tobytes() else f"{path}: values differ"
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        return next((d for i, (x, y) in enumerate(zip(a, b))
                     if (d := _difference(x, y, f"{path}[{i}]"))), None)
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys differ"
        return next((d for k in a if (d := _difference(a[k], b[k], f"{path}[{k!r}]"))), None)
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def _feeds(case: Any, convert: Callable[[np.ndarray], Any]) -> dict[str, Any]:
    names = [i.name for i in case.model.graph.input]
    feeds = {}
    for name, value in zip(names, case.data_sets[0][0]):
        if isinstance(value, onnx.TensorProto):
            value = numpy_helper.to_array(value)
        elif isinstance(value, np.generic):
            # a numpy scalar: onnxruntime refuses it, compat takes it (docs/COMPAT.md); both
            # take the 0-d array an onnxruntime user passes
            value = np.array(value)
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" \
                and value.dtype.itemsize <= 8 and value.ndim >= 1:
            value = convert(value)
        feeds[name] = value
    return feeds


@pytest.mark.parametrize("mode", list(MODES))
def test_onnx_node_cases_agree_with_onnxruntime(cases: list[Any], mode: str) -> None:
    disagreements = []
    allowed = agreed = 0
    for case in cases:
        model = case.model.SerializeToString()
        feeds = _feeds(case, MODES[mode])
        ort = _outcome(real_ort, model, feeds)
        ours = _outcome(compat, model, feeds)
        if ort[0] == ours[0] == "ok":
            diff = _difference(ort[1], ours[1])
        elif ort[0] == ours[0] == "raised":
            diff = None if ort[1] == ours[1] else f"onnxruntime {ort[1]}, compat {ours[1]}"
        elif ort[0] == "raised" and any(text in ort[2] for text in _NO_NUMPY_TYPE):
            allowed += 1
            continue
        else:
            diff = (f"onnxruntime {ort[0]} {ort[1:]!s:.200}, compat {ours[0]} "
                    f"{ours[1:]!s:.200}")
        if diff is None:
            agreed += 1
        else:
            disagreements.append(f"{case.name}: {diff}")
    assert not disagreements, (f"{len(disagreements)} of {len(cases)} cases differ ({mode}):\n"
                               + "\n".join(disagreements[:40]))
    assert agreed > 0.9 * len(cases), (agreed, allowed, len(cases))
