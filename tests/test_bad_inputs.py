"""The bad-input matrix: every input mistake we know of, with the exact exception it raises.

Each row is one mistake, a function that makes it, and the exception class expected (compared
with ``type(exc) is expected``; None: ortc accepts the input, converting or copying it, and the
row checks the result). docs/ERRORS.md is generated from this table:

    PYTHONPATH=.:tests .venv/bin/python tests/test_bad_inputs.py      # rewrites docs/ERRORS.md

and ``test_errors_doc_is_current`` fails when the file is stale.
"""

from __future__ import annotations

import functools
import io
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _p in (HERE, ROOT):
    if _p not in sys.path:
        sys.path.append(_p)

import models  # noqa: E402
import ortc  # noqa: E402
from ortc import (ClosedError, Fail, InvalidArgument, InvalidGraph, InvalidProtobuf,  # noqa: E402
                  NoSuchFile)

T = models.T
DOC = os.path.join(ROOT, "docs", "ERRORS.md")
F32 = np.float32


# -- the sessions the rows use (one each, built on first use) ---------------------------------

@functools.lru_cache(maxsize=None)
def session(kind: str) -> ortc.Session:
    build: dict[str, Callable[[], bytes]] = {
        "add": lambda: models.add_model(F32, ["n"]),          # a, b: float[n] -> c
        "fixed": lambda: models.identity_model(T.FLOAT, [2, 3]),  # x: float[2,3] -> y
        "str": lambda: models.identity_model(T.STRING, [2]),     # x: string[2] -> y
        "int4": lambda: models.identity_model(T.INT4, [2]),      # x: int4[2] -> y
        "seq": lambda: models.sequence_at_model(),                 # seq: seq(float), i -> y, len
        "seq_str": lambda: models.sequence_identity_model(np.str_),  # seq: seq(string) -> out
        "map": lambda: models.dict_vectorizer_model(),             # x: map(int64,float) -> y
        "opt": lambda: models.optional_input_model(),              # opt: optional(float[2])
        "expand": lambda: _expand_model(),                         # shape: int64[1] -> y
    }
    return ortc.Session(build[kind](), intra_op_num_threads=1)


def _expand_model() -> bytes:
    from onnx import helper, numpy_helper

    one = numpy_helper.from_array(np.array([1.0], F32), "one")
    return models.make_model([helper.make_node("Expand", ["one", "shape"], ["y"])],
                             [models._vi("shape", T.INT64, [1])], [models._vi("y", T.FLOAT, None)],
                             [one], check=False).SerializeToString()


def add(feeds: Any, output_names: Any = None, **kw: Any) -> Any:
    return session("add").run(output_names, feeds, **kw)


def ab(n: int = 3) -> dict[str, np.ndarray[Any, Any]]:
    return {"a": np.arange(n, dtype=F32), "b": np.ones(n, F32)}


def check_add(a: Any, b: Any) -> None:
    """Run the add model; the result must be a + b (for rows that are accepted)."""
    [c] = session("add").run(None, {"a": a, "b": b})
    np.testing.assert_array_equal(c, np.asarray(a, F32) + np.asarray(b, F32))


def huge(shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """An array that claims ``shape`` over 4 bytes of memory (zero strides)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, F32), shape=shape,
                                           strides=(0,) * len(shape))


def closed_value() -> ortc.Value:
    v = ortc.Value.from_numpy(np.zeros(3, F32))
    v.close()
    return v


def _in_range_subbyte() -> None:
    for et, data in ((ortc.ElementType.UINT4, [3, 15, 0]), (ortc.ElementType.UINT2, [3, 0]),
                     (ortc.ElementType.INT4, [-8, 7])):
        assert ortc.Value.from_numpy(data, et).to_python().tolist() == data, et


def _int4() -> Any:
    import ml_dtypes

    return ml_dtypes.int4


def _bind_output_of(kind: str, data: Any, memory_info: Any = None) -> None:
    with session(kind).io_binding() as b:
        b.bind_output("y", data, memory_info)


def bind(name: str, data: Any, output: bool = False) -> None:
    b = session("fixed").io_binding()
    try:
        if output:
            b.bind_output(name, data)
        else:
            b.bind_input(name, data)
    finally:
        b.close()


def bound_run(x: Any, y: Any) -> None:
    with session("fixed").io_binding() as b:
        b.bind_input("x", x)
        b.bind_output("y", y)
        session("fixed").run_with_binding(b)


def options(**kw: Any) -> None:
    ortc.SessionOptions(**kw).close()


def config(key: str, value: str, create: bool = False) -> None:
    with ortc.SessionOptions() as o:
        o.add_session_config_entry(key, value)
        if create:
            ortc.Session(models.add_model(), o).close()


def with_providers(providers: Any) -> None:
    ortc.Session(models.add_model(), providers=providers).close()


def suggests(name: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> None:
    """Call ``fn``; the exception it raises must name ``name`` (the closest valid spelling)."""
    try:
        fn(*args, **kw)
    except Exception as exc:
        assert name in str(exc), f"{name!r} not named in: {exc}"
        raise


def initializer(name: str, value: Any) -> None:
    with ortc.SessionOptions() as o:
        o.add_initializer(name, value)
        with ortc.Session(models.mlp_model(2, 8), o) as s:
            s.run(None, {"x": np.ones((2, 8), F32)})


def _external_initializer(value: Any) -> None:
    from onnx import helper

    w = helper.make_tensor("w", T.FLOAT, [4], np.zeros(4, F32))  # its data: given at load
    w.data_location = T.EXTERNAL
    w.ClearField("float_data")
    entry = w.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    model = models.make_model([helper.make_node("Add", ["x", "w"], ["y"])],
                              [models._vi("x", T.FLOAT, [4])], [models._vi("y", T.FLOAT, [4])],
                              [w], check=False).SerializeToString()
    with ortc.SessionOptions() as o:
        o.add_external_initializers({"w": value})
        ortc.Session(model, o).close()


def model_source(src: Any) -> None:
    ortc.Session(src).close()


# -- the table --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    area: str
    mistake: str
    call: Callable[[], Any]
    expected: Optional[type[BaseException]]
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.area}: {self.mistake}"


_GARBAGE = bytes(range(256)) * 4

ROWS: list[Row] = [
    # model sources
    Row("model", "empty bytes", lambda: model_source(b""), InvalidArgument),
    Row("model", "bytes that are not a model", lambda: model_source(_GARBAGE), InvalidProtobuf),
    Row("model", "a truncated model", lambda: model_source(models.mlp_model()[:-40]),
        InvalidProtobuf),
    Row("model", "a path that does not exist", lambda: model_source("/nonexistent/m.onnx"),
        NoSuchFile),
    Row("model", "a directory as the path", lambda: model_source(HERE), InvalidArgument),
    Row("model", "a text file as the path", lambda: model_source(__file__), InvalidProtobuf),
    Row("model", "a path with a NUL byte", lambda: model_source("/nonexistent\0.onnx"),
        InvalidArgument, "refused before C would cut the path at the NUL"),
    Row("model", "neither a path nor bytes (an int)", lambda: model_source(42), TypeError),
    Row("model", "a memoryview of the model's bytes",
        lambda: model_source(memoryview(models.add_model())), None),
    Row("model", "a file object opened in text mode",
        lambda: model_source(io.StringIO("model.onnx")), TypeError,
        "its text was taken as a path"),
    Row("model", "a graph whose node reads an undefined name",
        lambda: model_source(_undefined_input_model()), InvalidArgument),
    Row("model", "an operator that does not exist",
        lambda: model_source(_unknown_op_model()), InvalidGraph),
    Row("model", "an input name that is not UTF-8 (accepted: the name round-trips as "
        "surrogate escapes)", lambda: model_source(_non_utf8_model("name")), None),
    Row("model", "a symbolic dimension name that is not UTF-8 (read with U+FFFD)",
        lambda: _check(ortc.Session(_non_utf8_model("dim")).inputs[0].shape, ("n\ufffdn",)),
        None),

    # input and output names
    Row("names", "an unknown input name", lambda: add({**ab(), "z": np.ones(3, F32)}),
        InvalidArgument),
    Row("names", "a required input missing", lambda: add({"a": np.ones(3, F32)}),
        InvalidArgument),
    Row("names", "a misspelt input name (one missing, one unknown)",
        lambda: add({"a": np.ones(3, F32), "B": np.ones(3, F32)}), InvalidArgument),
    Row("names", "an input name that is not a str", lambda: add({**ab(), 1: np.ones(3, F32)}),
        InvalidArgument),
    Row("names", "an input name with a NUL byte", lambda: add({**ab(), "a\0": np.ones(3, F32)}),
        InvalidArgument),
    Row("names", "an input name that is not UTF-8 (lone surrogate)",
        lambda: add({**ab(), "\udc80": np.ones(3, F32)}), InvalidArgument),
    Row("names", "feeds as a list instead of a dict", lambda: add(list(ab().values())),
        InvalidArgument),
    Row("names", "feeds None", lambda: add(None), InvalidArgument),
    Row("names", "an unknown output name", lambda: add(ab(), ["z"]), InvalidArgument),
    Row("names", "an output name that is not a str", lambda: add(ab(), [0]), InvalidArgument),
    Row("names", "no output names (an empty list)", lambda: add(ab(), []), InvalidArgument),
    Row("names", "an output name twice", lambda: add(ab(), ["c", "c"]), None),

    # element types
    Row("dtype", "float64 for a float input", lambda: add({**ab(), "a": np.ones(3)}),
        InvalidArgument),
    Row("dtype", "int32 for a float input", lambda: add({**ab(), "a": np.ones(3, np.int32)}),
        InvalidArgument),
    Row("dtype", "bool for a float input", lambda: add({**ab(), "a": np.ones(3, bool)}),
        InvalidArgument),
    Row("dtype", "float16 for a float input", lambda: add({**ab(), "a": np.ones(3, np.float16)}),
        InvalidArgument),
    Row("dtype", "complex64 for a float input",
        lambda: add({**ab(), "a": np.ones(3, np.complex64)}), InvalidArgument),
    Row("dtype", "datetime64 (no ONNX type)",
        lambda: add({**ab(), "a": np.zeros(3, "datetime64[s]")}), InvalidArgument),
    Row("dtype", "a structured dtype",
        lambda: add({**ab(), "a": np.zeros(3, [("x", F32), ("y", F32)])}), InvalidArgument),
    Row("dtype", "a byte-swapped float32 array ('>f4')",
        lambda: add({**ab(), "a": np.ones(3, ">f4")}), InvalidArgument),
    Row("dtype", "bfloat16 (ml_dtypes) for a float input",
        lambda: add({**ab(), "a": np.ones(3, models.ml_dtypes.bfloat16)}), InvalidArgument),
    Row("dtype", "a str array for a float input", lambda: add({**ab(), "a": np.array(["1"] * 3)}),
        InvalidArgument),
    Row("dtype", "a list of floats for a float input (converted)",
        lambda: check_add([0.0, 1.0, 2.0], np.ones(3, F32)), None),
    Row("dtype", "a list of str for a float input", lambda: add({**ab(), "a": ["x", "y", "z"]}),
        InvalidArgument),
    Row("dtype", "a numeric array for a string input",
        lambda: session("str").run(None, {"x": np.ones(2, F32)}), InvalidArgument),

    # object arrays and strings
    Row("object", "an object array of floats for a float input",
        lambda: add({**ab(), "a": np.array([1.0, 2.0, 3.0], dtype=object)}), InvalidArgument),
    Row("object", "an object array holding ints, for a string input",
        lambda: session("str").run(None, {"x": np.array([1, 2], dtype=object)}),
        InvalidArgument),
    Row("object", "an object array holding None, for a string input",
        lambda: session("str").run(None, {"x": np.array([None, "a"], dtype=object)}),
        InvalidArgument),
    Row("object", "a list holding None for a float input (the message named element 0, a float)",
        lambda: suggests("holding None (element 1)", add, {**ab(2), "a": [1.0, None]}),
        InvalidArgument),
    Row("object", "a Python int beyond 64 bits in a list (was 'object array element 0 is a int')",
        lambda: suggests("value 1180591620717411303424 (element 1) is too large",
                         ortc.Value.from_numpy, [1, 2**70]), InvalidArgument),
    Row("object", "a list holding a Decimal",
        lambda: suggests("Decimal('1')", ortc.Value.from_numpy,
                         [1.5, __import__("decimal").Decimal(1)]), InvalidArgument),
    Row("object", "bytes that are not UTF-8 in a string input",
        lambda: session("str").run(None, {"x": np.array([b"\xff\xfe", b"a"], dtype=object)}),
        InvalidArgument),
    Row("object", "a str with a lone surrogate in a string input",
        lambda: session("str").run(None, {"x": np.array(["\udc80", "a"], dtype=object)}),
        InvalidArgument),
    Row("object", "a str with a NUL byte in a string input",
        lambda: _strings_round_trip(["a\0b", "c"]), None,
        "kept whole, as onnxruntime does"),
    Row("object", "a fixed-width bytes array ('S') for a string input",
        lambda: _strings_round_trip(np.array([b"ab", b"c"])), None),
    Row("object", "a list of a string and a number, for a string input (numpy: 'a', '1')",
        lambda: session("str").run(None, {"x": ["a", 1]}), InvalidArgument),
    Row("object", "Value.from_numpy of a list of a number and a string",
        lambda: ortc.Value.from_numpy([1.5, "b"]), InvalidArgument),
    Row("object", "a list of strings and bytes, for a string input",
        lambda: _strings_round_trip(["ab", b"c"]), None),

    # shapes and ranks
    Row("shape", "a wrong fixed dimension ([3, 2] for [2, 3])",
        lambda: session("fixed").run(None, {"x": np.zeros((3, 2), F32)}), InvalidArgument),
    Row("shape", "a wrong rank ([6] for [2, 3])",
        lambda: session("fixed").run(None, {"x": np.zeros(6, F32)}), InvalidArgument),
    Row("shape", "an extra dimension ([1, 2, 3] for [2, 3])",
        lambda: session("fixed").run(None, {"x": np.zeros((1, 2, 3), F32)}), InvalidArgument),
    Row("shape", "a 0-d scalar for a [n] input", lambda: add({**ab(), "a": np.float32(1)}),
        InvalidArgument),
    Row("shape", "a Python float for a [n] input", lambda: add({**ab(), "a": 1.0}),
        InvalidArgument),
    Row("shape", "shapes the model cannot broadcast ([2] + [3])",
        lambda: add({"a": np.ones(2, F32), "b": np.ones(3, F32)}), Fail),
    Row("shape", "one symbolic dimension given two sizes... that broadcast ([1] + [3])",
        lambda: check_add(np.ones(1, F32), np.ones(3, F32)), None),

    # zero-size and huge
    Row("size", "a zero-size array for a symbolic dimension",
        lambda: check_add(np.zeros(0, F32), np.zeros(0, F32)), None),
    Row("size", "a zero-size array for a fixed dimension",
        lambda: session("fixed").run(None, {"x": np.zeros((0, 3), F32)}), InvalidArgument),
    Row("size", "a 2**40-element array over 4 bytes (zero strides, copied)",
        lambda: add({"a": huge((1 << 40,)), "b": huge((1 << 40,))}), MemoryError,
        "numpy's MemoryError while making the array contiguous"),
    Row("size", "a model output of 2**40 floats (Expand)",
        lambda: session("expand").run(None, {"shape": np.array([1 << 40], np.int64)}), Fail),
    Row("size", "a model output with a negative dimension (Expand to [-5])",
        lambda: session("expand").run(None, {"shape": np.array([-5], np.int64)}), Fail),

    # memory layout
    Row("layout", "a non-contiguous (strided) array (copied)",
        lambda: check_add(np.arange(6, dtype=F32)[::2], np.ones(3, F32)), None),
    Row("layout", "a reversed view (negative stride, copied)",
        lambda: check_add(np.arange(3, dtype=F32)[::-1], np.ones(3, F32)), None),
    Row("layout", "a Fortran-ordered 2-D array (copied)",
        lambda: session("fixed").run(None, {"x": np.asfortranarray(np.ones((2, 3), F32))}),
        None),
    Row("layout", "a read-only array (ORT only reads inputs)",
        lambda: check_add(_readonly(np.arange(3, dtype=F32)), np.ones(3, F32)), None),
    Row("layout", "an unaligned float32 array",
        lambda: check_add(np.frombuffer(b"\0" + np.arange(3, dtype=F32).tobytes(), F32,
                                        offset=1), np.ones(3, F32)), None),
    Row("layout", "a read-only array bound as an output",
        lambda: bind("y", _readonly(np.zeros((2, 3), F32)), output=True), InvalidArgument),
    Row("layout", "a non-contiguous array bound as an output",
        lambda: bind("y", np.zeros((2, 6), F32)[:, ::2], output=True), InvalidArgument),
    Row("layout", "an output array of the wrong dtype",
        lambda: bind("y", np.zeros((2, 3)), output=True), InvalidArgument),
    Row("layout", "an output array of the wrong shape",
        lambda: bound_run(np.zeros((2, 3), F32), np.zeros((3, 2), F32)), InvalidArgument),

    # None and the wrong kind of value
    Row("kind", "None for a tensor input", lambda: add({**ab(), "a": None}), InvalidArgument),
    Row("kind", "None for an optional input (means: empty)",
        lambda: session("opt").run(None, {"opt": None}), None),
    Row("kind", "a float64 array for an optional float input",
        lambda: session("opt").run(None, {"opt": np.ones(2)}), InvalidArgument),
    Row("kind", "an array for a sequence input",
        lambda: session("seq").run(None, {"seq": np.ones((2, 2), F32),
                                          "i": np.array(0, np.int64)}), InvalidArgument),
    Row("kind", "a dict for a sequence input",
        lambda: session("seq").run(None, {"seq": {1: 2.0}, "i": np.array(0, np.int64)}),
        InvalidArgument),
    Row("kind", "an empty list for a sequence input, then SequenceAt(0) of it",
        lambda: session("seq").run(None, {"seq": [], "i": np.array(0, np.int64)}),
        InvalidArgument, "the empty sequence is accepted; ORT's SequenceAt refuses index 0"),
    Row("kind", "a sequence of tensors of mixed dtypes, for seq(float)",
        lambda: session("seq").run(None, {"seq": [np.ones(2, F32), np.ones(2)],
                                          "i": np.array(0, np.int64)}), InvalidArgument,
        "the float64 item is not the input's type"),
    Row("kind", "Value.from_sequence of tensors of mixed dtypes (refused by ORT's CreateValue)",
        lambda: ortc.Value.from_sequence([np.ones(2, F32), np.ones(2)]), Fail),
    Row("kind", "Value.from_sequence with an element_type its items lack",
        lambda: ortc.Value.from_sequence([np.ones(2, F32)], ortc.ElementType.INT64),
        InvalidArgument),
    Row("kind", "Value.from_numpy of a float array as STRING",
        lambda: ortc.Value.from_numpy(np.ones(2, F32), ortc.ElementType.STRING), InvalidArgument),
    Row("kind", "Value.from_numpy of 32-byte items as STRING",
        lambda: ortc.Value.from_numpy(np.zeros(2, "V32"), ortc.ElementType.STRING),
        InvalidArgument, "ORT would read the bytes as its string objects: SIGSEGV"),
    Row("kind", "a float array in a list for a seq(string) input",
        lambda: session("seq_str").run(None, {"seq": [np.ones(2, F32)]}), InvalidArgument),
    Row("kind", "a sequence of float64 for seq(float)",
        lambda: session("seq").run(None, {"seq": [np.ones(2)], "i": np.array(0, np.int64)}),
        InvalidArgument),
    Row("kind", "a list for a map input", lambda: session("map").run(None, {"x": [1.0, 2.0]}),
        InvalidArgument),
    Row("kind", "an array for a map input",
        lambda: session("map").run(None, {"x": np.ones(2, F32)}), InvalidArgument),
    Row("kind", "a map with str keys for map(int64, float)",
        lambda: session("map").run(None, {"x": {"a": 1.0}}), InvalidArgument),
    Row("kind", "a map with keys of mixed types",
        lambda: session("map").run(None, {"x": {1: 1.0, "b": 2.0}}), InvalidArgument),
    Row("kind", "an empty dict for a map input (all zeros)",
        lambda: _check(session("map").run(None, {"x": {}})[0], np.zeros((1, 4), F32)), None),
    Row("kind", "a map Value for a tensor input",
        lambda: add({**ab(), "a": ortc.Value.from_map({1: 1.0})}), InvalidArgument),
    Row("kind", "a sequence Value for a map input",
        lambda: session("map").run(None, {"x": ortc.Value.from_sequence([np.ones(1, F32)])}),
        InvalidArgument),
    Row("kind", "a closed Value as an input", lambda: add({**ab(), "a": closed_value()}),
        ClosedError),
    Row("kind", "a closed Value bound as an input", lambda: bind("x", closed_value()),
        ClosedError),
    Row("kind", "Value.from_sequence of a non-list",
        lambda: ortc.Value.from_sequence(np.ones(3)), InvalidArgument),
    Row("kind", "Value.from_map of a list", lambda: ortc.Value.from_map([1, 2]),
        InvalidArgument),
    Row("kind", "Value.numpy() of a sequence",
        lambda: ortc.Value.from_sequence([np.ones(1, F32)]).numpy(), InvalidArgument),
    Row("kind", "a plain object as an input", lambda: add({**ab(), "a": object()}),
        InvalidArgument),

    # IoBinding names
    Row("binding", "bind_input with an unknown name", lambda: bind("z", np.zeros((2, 3), F32)),
        InvalidArgument),
    Row("binding", "bind_output with an unknown name",
        lambda: bind("z", np.zeros((2, 3), F32), output=True), InvalidArgument),
    Row("binding", "bind_input with a wrong dtype", lambda: bind("x", np.zeros((2, 3))),
        InvalidArgument),
    Row("binding", "a binding run by another session",
        lambda: session("add").run_with_binding(session("fixed").io_binding()),
        InvalidArgument),

    # providers
    Row("providers", "an unknown provider name",
        lambda: with_providers(["NoSuchExecutionProvider"]), InvalidArgument),
    Row("providers", "a provider this build lacks (CUDA)",
        lambda: with_providers(["CUDAExecutionProvider"]), Fail),
    Row("providers", "an unknown option for the CPU provider",
        lambda: with_providers([("CPUExecutionProvider", {"no_such_option": "1"})]),
        InvalidArgument),
    Row("providers", "a provider given as an int", lambda: with_providers([42]), TypeError),
    Row("providers", "one provider name as a str, not in a list (read as its letters)",
        lambda: with_providers("CPUExecutionProvider"), TypeError),
    Row("providers", "a (name,) tuple without options",
        lambda: with_providers([("CPUExecutionProvider",)]), TypeError),
    Row("providers", "a (name, options, extra) tuple",
        lambda: with_providers([("CPUExecutionProvider", {}, 1)]), TypeError),
    Row("providers", "options as a str instead of a dict",
        lambda: with_providers([("CPUExecutionProvider", "use_arena=0")]), TypeError),
    Row("providers", "options as a str, to append_execution_provider",
        lambda: ortc.SessionOptions().append_execution_provider("CPUExecutionProvider",
                                                                "use_arena"), TypeError,
        "was AttributeError"),
    Row("providers", "an option value None (was written as 'None': the arena stayed on)",
        lambda: with_providers([("CPUExecutionProvider", {"use_arena": None})]),
        TypeError),
    Row("providers", "an option value True (ORT reads switches as '1' or '0')",
        lambda: with_providers([("CPUExecutionProvider", {"use_arena": True})]),
        TypeError),
    Row("providers", "use_arena 'off' (ORT reads '1' or '0': the arena stayed on)",
        lambda: with_providers([("CPUExecutionProvider", {"use_arena": "off"})]),
        InvalidArgument),
    Row("providers", "an option name that is not a str",
        lambda: with_providers([("CPUExecutionProvider", {1: "0"})]), TypeError),
    Row("providers", "a provider name as bytes",
        lambda: with_providers([b"CPUExecutionProvider"]), TypeError),
    Row("providers", "an option for a provider this build lacks (XNNPACK)",
        lambda: with_providers([("XnnpackExecutionProvider", {"intra_op_num_threads": "x"})]),
        InvalidArgument),

    # session options
    Row("options", "an unknown session option", lambda: options(intra_threads=1), TypeError),
    Row("options", "a misspelt session option keyword (intra_op_num_treads=1)",
        lambda: suggests("intra_op_num_threads", options, intra_op_num_treads=1), TypeError,
        "the message names the closest valid option"),
    Row("options", "a misspelt session option assigned (opts.intra_op_num_treads = 1)",
        lambda: suggests("intra_op_num_threads", setattr, ortc.SessionOptions(),
                         "intra_op_num_treads", 1), AttributeError,
        "the message names the closest valid option"),
    Row("options", "a negative thread count", lambda: options(intra_op_num_threads=-1),
        InvalidArgument),
    Row("options", "a thread count as a str", lambda: options(intra_op_num_threads="2"),
        TypeError),
    Row("options", "a thread count as a float", lambda: options(intra_op_num_threads=2.0),
        TypeError),
    Row("options", "an unknown optimization level", lambda: options(graph_optimization_level=5),
        InvalidArgument, "the message lists the levels"),
    Row("options", "an unknown execution mode", lambda: options(execution_mode=7),
        InvalidArgument),
    Row("options", "an unknown log severity", lambda: options(log_severity_level=9),
        InvalidArgument),
    Row("options", "a log verbosity of 2.5 (int() would make it 2)",
        lambda: options(log_verbosity_level=2.5), TypeError),
    Row("options", "a log verbosity beyond C's int", lambda: options(log_verbosity_level=2**40),
        InvalidArgument, "cffi's OverflowError named no option"),
    Row("options", "a non-bool flag", lambda: options(enable_profiling="yes"), TypeError),
    Row("options", "a negative free-dimension override",
        lambda: ortc.SessionOptions().add_free_dimension_override_by_name("n", -1),
        InvalidArgument),
    Row("options", "a free-dimension override beyond int64",
        lambda: ortc.SessionOptions().add_free_dimension_override_by_name("n", 2**70),
        InvalidArgument, "cffi's OverflowError named no option"),
    Row("options", "a free-dimension override of True",
        lambda: ortc.SessionOptions().add_free_dimension_override("DATA_BATCH", True),
        TypeError),
    Row("options", "options passed as a dict instead of SessionOptions",
        lambda: ortc.Session(models.add_model(), {"intra_op_num_threads": 1}), TypeError),
    Row("options", "a closed SessionOptions",
        lambda: ortc.Session(models.add_model(), _closed(ortc.SessionOptions())), ClosedError),
    Row("options", "an initializer for a name the model lacks (ORT ignored it)",
        lambda: initializer("nope", np.zeros(8, F32)), InvalidArgument),
    Row("options", "an initializer of the wrong shape (ORT computed another graph)",
        lambda: initializer("b0", np.zeros(3, F32)), InvalidArgument),
    Row("options", "an initializer of the wrong dtype (ORT read past its buffer)",
        lambda: initializer("b0", np.zeros(8)), InvalidArgument),
    Row("options", "a [8, 1] initializer for a [8] one (ORT broadcast it: another result shape)",
        lambda: initializer("b0", np.zeros((8, 1), F32)), InvalidArgument),
    Row("options", "an external initializer of the wrong dtype",
        lambda: _external_initializer(np.zeros(4)), InvalidArgument),

    # config keys
    Row("config", "an unknown session config key (ORT stores any key)",
        lambda: config("no.such.key", "1", create=True), None),
    Row("config", "an empty session config key", lambda: config("", "1"), InvalidArgument),
    Row("config", "a bad value for a known key (allow_spinning = 'maybe'; ORT ignores it)",
        lambda: config("session.intra_op.allow_spinning", "maybe", create=True), None),
    Row("config", "a config key that is not UTF-8 (lone surrogate)",
        lambda: config("\udc80", "1"), InvalidArgument),
    Row("config", "an unknown run config key (ORT stores any key)",
        lambda: _run_config("no.such.key", "1"), None),
    Row("config", "an empty run config key", lambda: _run_config("", "1"), InvalidArgument),
    Row("config", "a bool as a config value (stored as 'True', which ORT reads as off)",
        lambda: config("session.disable_prepacking", True), TypeError),
    Row("config", "None as a config value", lambda: config("session.disable_prepacking", None),
        TypeError),
    Row("config", "a bool as a run config value",
        lambda: _run_config("memory.enable_memory_arena_shrinkage", True), TypeError),
    Row("config", "an int as a config value (written out: 1 is '1')",
        lambda: config("session.disable_prepacking", 1, create=True), None),

    # run options and run arguments
    Row("run", "an unknown RunOptions keyword", lambda: ortc.RunOptions(tagg="x"), TypeError),
    Row("run", "a misspelt RunOptions attribute assigned (ro.log_severity_levle = 1)",
        lambda: suggests("log_severity_level", setattr, ortc.RunOptions(),
                         "log_severity_levle", 1), AttributeError,
        "the message names the closest valid option"),
    Row("run", "ro.terminate = True (terminate is a method, not a flag)",
        lambda: suggests("terminate()", setattr, ortc.RunOptions(), "terminate", True),
        AttributeError, "the message says to call terminate()"),
    Row("run", "an unknown run log severity", lambda: ortc.RunOptions(log_severity_level=42),
        InvalidArgument),
    Row("run", "a run log verbosity of 2.5", lambda: ortc.RunOptions(log_verbosity_level=2.5),
        TypeError),
    Row("run", "a closed RunOptions", lambda: add(ab(), run_options=_closed(ortc.RunOptions())),
        ClosedError),
    Row("run", "run_options that are not RunOptions (a str)",
        lambda: add(ab(), run_options="fast"), TypeError),
    Row("run", "run_with_binding given something that is not an IoBinding (a dict)",
        lambda: ortc.Session(models.add_model()).run_with_binding({"a": 1}), TypeError),
    Row("run", "a negative timeout", lambda: add(ab(), timeout=-1), ValueError),
    Row("run", "a timeout that is not a number", lambda: add(ab(), timeout="1"), ValueError),
    Row("run", "a closed session", lambda: _closed(ortc.Session(models.add_model())).run(
        None, ab()), ClosedError),

    # memory
    Row("memory", "an unknown device name for MemoryInfo",
        lambda: ortc.MemoryInfo("NoSuchDevice"), InvalidArgument),
    Row("memory", "a negative allocation size", lambda: ortc.default_allocator().alloc(-1),
        InvalidArgument),
    Row("memory", "an allocation size beyond size_t",
        lambda: ortc.default_allocator().alloc(2**64), InvalidArgument),
    Row("memory", "an unknown allocator type for MemoryInfo (ORT stored it)",
        lambda: ortc.MemoryInfo("Cpu", 5), InvalidArgument),
    Row("memory", "a MemoryInfo device id beyond C's int",
        lambda: ortc.MemoryInfo("Cpu", ortc.AllocatorType.DEVICE_ALLOCATOR, 2**40),
        InvalidArgument),
    Row("memory", "an unknown memory type for MemoryInfo.cpu",
        lambda: ortc.MemoryInfo.cpu(mem_type=9), InvalidArgument),

    # processes: recipes, pickling, DLPack
    Row("processes", "the first use of an unpickled session whose model file is gone",
        lambda: _gone_model(), NoSuchFile, "unpickling needs no file: the first use builds"),
    Row("processes", "the first use of an unpickled session whose model file was replaced",
        lambda: _replaced_model(), ortc.RecipeError,
        "the recipe names the model's sha256; another model at the path is refused"),
    Row("processes", "a recipe naming a custom-op library that is not there",
        lambda: _missing_library(), NoSuchFile),
    Row("processes", "ortc.batch.run_batches with a batch size of 0",
        lambda: _batches(batch_size=0), ValueError),
    Row("processes", "ortc.batch.run_batches of one array into a model of two inputs",
        lambda: _batches(), ValueError, "the message names the inputs: say input_name"),
    Row("processes", "a recipe from a newer ortc (format version)",
        lambda: ortc.Session.from_recipe(_newer_recipe()), ortc.RecipeError),
    Row("processes", "a pickled recipe with a callable as a setting",
        lambda: _recipe_from_state(1, None, b"x", ((("logid", print),),) + _NO_OPTIONS[1:]),
        ortc.RecipeError),
    Row("processes", "Session.from_recipe of something not a recipe (a dict)",
        lambda: ortc.Session.from_recipe({"model_path": "m.onnx"}), TypeError),
    Row("processes", "pickling an IoBinding", lambda: _pickle(session("add").io_binding()),
        TypeError),
    Row("processes", "pickling a closed Session",
        lambda: _pickle(_closed(ortc.Session(models.add_model()))), TypeError),
    Row("processes", "a float64 DLPack tensor for a float input",
        lambda: add({**ab(), "a": _Producer(np.arange(3.0))}), InvalidArgument),
    Row("processes", "a DLPack tensor on another device (CUDA)",
        lambda: ortc.Value.from_dlpack(_Producer(np.ones(2, F32), (2, 0))), InvalidArgument),
    Row("processes", "a string Value exported through DLPack",
        lambda: np.from_dlpack(ortc.Value.from_numpy(np.array(["a"], object))), BufferError),
    Row("memory", "freeing an address twice", lambda: _free_twice(), InvalidArgument),
    Row("memory", "freeing an address this allocator did not hand out",
        lambda: ortc.default_allocator().free(0x1234560), InvalidArgument),
    Row("memory", "a read-only Value bound as an output",
        lambda: bind("y", ortc.Value.from_numpy(_readonly(np.zeros((2, 3), F32))), output=True),
        InvalidArgument),
    Row("memory", "fill() on a Value over read-only memory",
        lambda: ortc.Value.from_numpy(_readonly(np.zeros(3, F32))).fill(np.ones(3, F32)),
        InvalidArgument),
    Row("memory", "fill() on a string tensor (its numpy() is a copy)",
        lambda: ortc.Value.from_numpy(np.array(["a"], dtype=object)).fill(["b"]),
        InvalidArgument),

    # conversions of Python data and foreign arrays
    Row("convert", "a list of ints out of the input's range (2**40 into int32)",
        lambda: ortc.Session(models.identity_model(T.INT32, [3])).run(
            None, {"x": [2**40, -1, 3]}), InvalidArgument),
    Row("convert", "a list of floats for an int input",
        lambda: ortc.Session(models.identity_model(T.INT32, [3])).run(
            None, {"x": [1.5, 2.0, 3.0]}), InvalidArgument),
    Row("convert", "a list of Python numbers for a float input (converted)",
        lambda: _check(add({"a": [1, 2.5, 3], "b": [0.0, 0.0, 0.0]})[0],
                       np.array([1, 2.5, 3], F32)), None),
    Row("convert", "a float64 array from another producer (array interface) for float32",
        lambda: add({"a": _InterfaceProducer(np.zeros(3)), "b": np.ones(3, F32)}),
        InvalidArgument),
    Row("convert", "a string bound as an output", lambda: bind("y", "cpu", output=True),
        InvalidArgument),
    Row("convert", "a list bound as an input", lambda: bind("x", [[1.0] * 3] * 2),
        InvalidArgument),
    Row("convert", "float map keys", lambda: ortc.Value.from_map({1.5: 1.0}), InvalidArgument),
    Row("convert", "a string array bound as a string output (ORT would write a copy)",
        lambda: _bind_output_of("str", np.array(["", ""], dtype=object)), InvalidArgument),
    Row("convert", "an int4 array bound as an int4 output (ORT would write a packed copy)",
        lambda: _bind_output_of("int4", np.zeros(2, _int4())), InvalidArgument),
    Row("convert", "bind_output with an array and a memory_info (which only ORT's allocation uses)",
        lambda: _bind_output_of("fixed", np.empty((2, 3), F32), ortc.MemoryInfo.cpu()),
        InvalidArgument),
    Row("convert", "map values of strings and numbers (numpy would make '2' of 2)",
        lambda: ortc.Value.from_map({"a": "x", "b": 2}), InvalidArgument),
    Row("convert", "a map value None", lambda: ortc.Value.from_map({1: None}), InvalidArgument),
    Row("convert", "a map key beyond int64 (was told the keys must be all int)",
        lambda: ortc.Value.from_map({2**70: 1.0}), InvalidArgument),
    Row("convert", "float indices in a SparseTensor made directly (were cut to ints)",
        lambda: ortc.Value.from_sparse(ortc.SparseTensor(
            ortc._enums.SparseFormat.COO, (4,), np.ones(2, F32), indices=np.array([0.7, 2.9]))),
        InvalidArgument),
    Row("convert", "a COO index given twice (ORT kept one of the two values)",
        lambda: ortc.Value.from_sparse(ortc.SparseTensor.coo((4,), np.ones(2, F32), [1, 1])),
        InvalidArgument),
    Row("convert", "a sparse dense shape of 2**64 (was a bare OverflowError)",
        lambda: ortc.Value.from_sparse(ortc.SparseTensor.coo((2**64,), np.ones(1, F32), [0])),
        InvalidArgument),
    Row("kind", "a list inside a tuple of output names (was TypeError: unhashable)",
        lambda: add(ab(), (["c"],)), InvalidArgument),
    Row("convert", "a Python float map value beyond float's range (astype made inf)",
        lambda: ortc.Value.from_map({"a": 1e300}), InvalidArgument),
    Row("convert", "100 as INT4 (the cast wraps it to 4)",
        lambda: ortc.Value.from_numpy([1, 2, 100], ortc.ElementType.INT4), InvalidArgument),
    Row("convert", "1000.0 as FLOAT8E4M3FN (the cast makes NaN)",
        lambda: ortc.Value.from_numpy([1000.0], ortc.ElementType.FLOAT8E4M3FN), InvalidArgument),
    Row("convert", "100.0 as FLOAT4E2M1 (the cast saturates to 6)",
        lambda: ortc.Value.from_numpy([100.0], ortc.ElementType.FLOAT4E2M1), InvalidArgument),
    Row("convert", "1.5 as INT4", lambda: ortc.Value.from_numpy([1.5], ortc.ElementType.INT4),
        InvalidArgument),
    Row("convert", "3 as UINT4 and UINT2 (in range: was refused)",
        lambda: _in_range_subbyte(), None),
    Row("convert", "a map value that is a list", lambda: ortc.Value.from_map({1: [1.0, 2.0]}),
        InvalidArgument),
    Row("convert", "copy.copy of a RunOptions (a copy by value, never the same handle)",
        lambda: _copied_run_options(), None),
]

_NO_OPTIONS = ortc.recipe.OptionsRecipe().__reduce__()[1][1]
_recipe_from_state = ortc.recipe._recipe_from_state


class _Producer:
    """A DLPack producer that is not an ndarray (a torch CPU tensor stands like this)."""

    def __init__(self, array: np.ndarray[Any, Any], device: tuple[int, int] = (1, 0)) -> None:
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


def _pickle(obj: Any) -> bytes:
    import pickle

    return pickle.dumps(obj)


def _gone_model() -> None:
    import pickle
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        with open(path, "wb") as f:
            f.write(models.add_model())
        with ortc.Session(path) as s:
            data = pickle.dumps(s)
    shipped = pickle.loads(data)
    shipped.run(None, ab())


def _replaced_model() -> None:
    import pickle
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        with open(path, "wb") as f:
            f.write(models.add_model())
        with ortc.Session(path) as s:
            data = pickle.dumps(s)
        with open(path, "wb") as f:
            f.write(models.add_model(np.float64))
        shipped = pickle.loads(data)
        shipped.run(None, ab())


def _missing_library() -> None:
    import dataclasses

    r = ortc.Session(models.add_model()).recipe()
    ortc.Session.from_recipe(dataclasses.replace(r, options=dataclasses.replace(
        r.options, custom_op_libraries=("/nonexistent/libcustom.so",))))


def _batches(batch_size: Any = None) -> None:
    import ortc.batch

    ortc.batch.run_batches(session("add"), np.ones(3, F32), batch_size=batch_size)


def _newer_recipe() -> Any:
    import dataclasses

    with ortc.Session(models.add_model()) as s:
        return dataclasses.replace(s.recipe(), format=ortc.recipe.RECIPE_FORMAT + 1)


class _InterfaceProducer:
    """An array producer through numpy's array interface, not numpy itself."""

    def __init__(self, a: np.ndarray[Any, Any]) -> None:
        self.a = a
        self.__array_interface__ = a.__array_interface__


def _copied_run_options() -> None:
    import copy

    ro = ortc.RunOptions(tag="t")
    dup = copy.copy(ro)
    assert dup is not ro and dup._ptr != ro._ptr and dup.tag == "t"
    ro.close()
    assert dup.tag == "t"  # closing the original leaves the copy whole


def _free_twice() -> None:
    alloc = ortc.default_allocator()
    p = alloc.alloc(8)
    alloc.free(p)
    alloc.free(p)


def _check(got: Any, want: Any) -> None:
    np.testing.assert_array_equal(got, want)


def _readonly(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    a.flags.writeable = False
    return a


def _closed(h: Any) -> Any:
    h.close()
    return h


def _strings_round_trip(data: Any, want: Any = None) -> None:
    [y] = session("str").run(None, {"x": data})
    if want is None:
        want = [s.decode() if isinstance(s, bytes) else s for s in list(data)]
    assert y.tolist() == want, (y.tolist(), want)


def _run_config(key: str, value: str) -> None:
    with ortc.RunOptions() as ro:
        ro.add_run_config_entry(key, value)
        add(ab(), run_options=ro)


def _undefined_input_model() -> bytes:
    from onnx import helper

    m = models.make_model([helper.make_node("Relu", ["missing"], ["y"])],
                          [models._vi("x", T.FLOAT, [2])], [models._vi("y", T.FLOAT, [2])],
                          check=False)
    return m.SerializeToString()


def _non_utf8_model(where: str) -> bytes:
    """The Abs model with an input name or a dimension name made of invalid UTF-8 (protobuf
    does not check; only byte surgery can make one)."""
    from onnx import helper

    name, dim = ("aQa", "n") if where == "name" else ("x", "nQn")
    m = models.make_model([helper.make_node("Abs", [name], ["y"])],
                          [models._vi(name, T.FLOAT, [dim])], [models._vi("y", T.FLOAT, [dim])],
                          check=False).SerializeToString()
    bad = (name if where == "name" else dim).encode()
    assert bad in m
    return m.replace(bad, bad.replace(b"Q", b"\xff"))


def _unknown_op_model() -> bytes:
    from onnx import helper

    m = models.make_model([helper.make_node("NoSuchOp", ["x"], ["y"])],
                          [models._vi("x", T.FLOAT, [2])], [models._vi("y", T.FLOAT, [2])],
                          check=False)
    return m.SerializeToString()


# -- the tests --------------------------------------------------------------------------------

def outcome(row: Row) -> Optional[BaseException]:
    try:
        row.call()
    except BaseException as exc:  # noqa: BLE001 - every outcome is compared with the table
        return exc
    return None


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_input(row: Row) -> None:
    exc = outcome(row)
    got = None if exc is None else type(exc)
    if row.expected is MemoryError and exc is not None:
        got = MemoryError if isinstance(exc, MemoryError) else got  # numpy's subclass
    assert got is row.expected, f"{row.id}: expected {_cls(row.expected)}, got {_cls(got)}: {exc}"


def test_every_area_is_covered() -> None:
    areas = {r.area for r in ROWS}
    assert {"names", "dtype", "shape", "layout", "object", "size", "kind", "providers",
            "options", "config", "model", "binding"} <= areas
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids)), "row ids must be unique"


def test_errors_doc_is_current() -> None:
    with open(DOC, encoding="utf-8") as f:
        current = f.read()
    assert current == render(), ("docs/ERRORS.md is stale: regenerate it with "
                                 "`PYTHONPATH=.:tests .venv/bin/python tests/test_bad_inputs.py`")


# -- docs/ERRORS.md ---------------------------------------------------------------------------

AREAS = {
    "model": "Model sources", "names": "Input and output names", "dtype": "Element types",
    "object": "Object arrays and strings", "shape": "Shapes and ranks",
    "size": "Zero-size and huge", "layout": "Memory layout", "kind": "None and value kinds",
    "binding": "IoBinding", "providers": "Execution providers", "options": "Session options",
    "config": "Config entries", "run": "Run options and run arguments", "memory": "Memory",
    "processes": "Recipes, pickling and DLPack",
    "convert": "Conversions and copies",
}


def _cls(cls: Optional[type[BaseException]]) -> str:
    if cls is None:
        return "accepted"
    return f"ortc.{cls.__name__}" if cls.__module__.startswith("ortc") else cls.__name__


def _bases(cls: Optional[type[BaseException]]) -> str:
    if cls is None or not issubclass(cls, ortc.Error):
        return ""
    builtins = [b.__name__ for b in cls.__mro__[1:]
                if b.__module__ == "builtins" and b not in (Exception, BaseException, object)]
    return ", ".join(["ortc.Error"] + builtins[:1])


def render() -> str:
    lines = [
        "# Input mistakes and the exceptions they raise",
        "",
        "Generated from the table in `tests/test_bad_inputs.py` (each row is a test; regenerate",
        "with `PYTHONPATH=.:tests .venv/bin/python tests/test_bad_inputs.py`). *accepted* means",
        "ortc takes the input as it is or converts/copies it, and the row checks the result.",
        "Every `ortc.*` class derives from `ortc.Error`; the OrtError subclasses also derive from",
        "the built-in named in the last column, so `except ValueError` catches an",
        "`ortc.InvalidArgument`. Mistakes found in Python before ORT is called raise the class",
        "ORT would raise for them.",
        "",
    ]
    for area, title in AREAS.items():
        rows = [r for r in ROWS if r.area == area]
        if not rows:
            continue
        lines += [f"## {title}", "", "| mistake | raises | also catchable as |", "|---|---|---|"]
        for r in rows:
            text = r.mistake + (f" ({r.note})" if r.note else "")
            lines.append(f"| {text.replace('|', '/')} | {_cls(r.expected)} | "
                         f"{_bases(r.expected)} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(render())
    print(f"wrote {DOC} ({len(ROWS)} rows)")


def _wrong_enum_calls() -> list[Any]:
    from ortc._enums import AllocatorType, ExecutionMode, GraphOptimizationLevel, LoggingLevel, \
        MemType

    def run_options_level(v: Any) -> None:
        ortc.RunOptions().log_severity_level = v

    # each: a member of another enum whose number the target enum has
    return [
        pytest.param(lambda v: ortc.MemoryInfo.cpu(v), MemType.DEFAULT, id="cpu-allocator_type"),
        pytest.param(lambda v: ortc.MemoryInfo.cpu(mem_type=v), AllocatorType.DEVICE_ALLOCATOR,
                     id="cpu-mem_type"),
        pytest.param(lambda v: ortc.MemoryInfo("Cpu", v), MemType.DEFAULT, id="allocator_type"),
        pytest.param(lambda v: ortc.MemoryInfo("Cpu", mem_type=v),
                     AllocatorType.DEVICE_ALLOCATOR, id="mem_type"),
        pytest.param(lambda v: ortc.SessionOptions(graph_optimization_level=v),
                     ExecutionMode.PARALLEL, id="graph_optimization_level"),
        pytest.param(lambda v: ortc.SessionOptions(execution_mode=v),
                     GraphOptimizationLevel.ENABLE_BASIC, id="execution_mode"),
        pytest.param(lambda v: ortc.SessionOptions(log_severity_level=v),
                     GraphOptimizationLevel.ENABLE_BASIC, id="session-log_severity_level"),
        pytest.param(run_options_level, ExecutionMode.PARALLEL, id="run-log_severity_level"),
        pytest.param(lambda v: ortc.SessionOptions(execution_mode=v), LoggingLevel.INFO,
                     id="execution_mode-from-logging"),
    ]


@pytest.mark.parametrize("call, member", _wrong_enum_calls())
def test_a_member_of_another_enum_is_refused_even_when_its_number_fits(call: Any,
                                                                         member: Any) -> None:
    # swapped arguments (MemoryInfo.cpu(MemType.DEFAULT, AllocatorType...)) were accepted; a
    # wrongly typed value is a TypeError, as Python's convention is
    with pytest.raises(TypeError, match=type(member).__name__) as caught:
        call(member)
    assert not isinstance(caught.value, ValueError)
    call(int(member))  # its number alone is a member of the target enum: accepted


def test_compat_enums_and_plain_ints_still_reach_the_native_enums() -> None:
    from ortc.compat import ExecutionMode as OrtExecutionMode, OrtMemType

    assert ortc.MemoryInfo.cpu(mem_type=OrtMemType.DEFAULT).mem_type == 0
    assert ortc.SessionOptions(execution_mode=OrtExecutionMode.ORT_PARALLEL).execution_mode == 1
