"""Sessions: creation from every source, descriptions, options, run and its errors."""

from __future__ import annotations

import gc
import io
import json
import os
import re
from typing import Any

import numpy as np
import pytest

import models
import ortc
from ortc import ElementType, ExecutionMode, GraphOptimizationLevel, LoggingLevel, ValueKind


def _feeds_add(n: int = 3) -> dict[str, np.ndarray]:
    a = np.arange(n, dtype=np.float32)
    return {"a": a, "b": a * 10}


@pytest.mark.parametrize("source", ["path", "bytes", "bytearray", "memoryview", "file"])
def test_session_from_every_source(source: str, tmp_path) -> None:
    data = models.add_model(np.float32, ["n"])
    path = tmp_path / "add.onnx"
    path.write_bytes(data)
    model = {"path": str(path), "bytes": data, "bytearray": bytearray(data),
             "memoryview": memoryview(data), "file": io.BytesIO(data)}[source]
    with ortc.Session(model) as s:
        [c] = s.run(None, _feeds_add())
    np.testing.assert_array_equal(c, [0, 11, 22])


def test_pathlib_path(tmp_path) -> None:
    path = tmp_path / "add.onnx"
    path.write_bytes(models.add_model())
    with ortc.Session(path) as s:
        assert [a.name for a in s.inputs] == ["a", "b"]


def test_inputs_outputs_describe_types_and_symbolic_shapes() -> None:
    s = ortc.Session(models.multi_io_model())
    ins = {a.name: a for a in s.inputs}
    assert ins["x"].dtype == np.float32 and ins["x"].shape == (2, 3)
    assert ins["n"].element_type == ElementType.INT64 and ins["n"].shape == ("batch",)
    assert ins["s"].dtype == np.dtype(object) and ins["s"].type.type_str == "tensor(string)"
    outs = {a.name: a for a in s.outputs}
    assert outs["count"].shape == () and outs["mask"].dtype == np.bool_
    assert [a.name for a in s.outputs] == ["sum", "count", "upper", "mask"]


def test_unknown_dims_are_none_and_unknown_rank_is_none() -> None:
    s = ortc.Session(models.none_dim_model())
    assert None in s.inputs[0].shape
    s2 = ortc.Session(models.unknown_rank_model())
    assert s2.inputs[0].shape is None or s2.inputs[0].shape == ()


@pytest.mark.parametrize("shape", [
    [2, "batch", None, 4, 5, 6, 7, 8],                  # the scratch's own arrays, full
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],                 # past them: arrays made for the read
    ["n", 2, None, 4, 5, 6, 7, 8, 9, "m", 1],            # past them, with names and unknowns
], ids=["rank8-named", "rank11", "rank11-named"])
def test_shapes_of_any_rank_are_read_whole(shape: list[Any]) -> None:
    """typeinfo reads a shape of rank 8 or less into its reused scratch arrays and a longer one
    into arrays of its own: either way every dimension, name and unknown comes back, on every
    session (the scratch is reused from one read to the next)."""
    want = tuple(shape)
    for _ in range(2):
        s = ortc.Session(models.add_model(np.float32, shape))
        assert [a.shape for a in (*s.inputs, *s.outputs)] == [want] * 3
        assert all(a.dtype == np.float32 for a in s.inputs)


def test_a_failed_type_read_raises_and_gives_its_scratch_back() -> None:
    """A read that ORT fails midway (here GetDimensions) raises ORT's error, and the out-
    parameters it took go back to the pool: the next session reads its types whole."""
    from ortc import typeinfo
    from ortc._loader import api

    a = api()
    before = len(typeinfo._scratch_pool)

    def wrap(name: str, original: Any) -> Any:
        def failing(*args: Any) -> Any:
            return a.CreateStatus(int(ortc.ErrorCode.FAIL), b"injected")
        return failing

    s = ortc.Session(models.add_model(np.float32, [2, "n"]))
    undo = a.instrument(wrap, ["GetDimensions"])
    try:
        with pytest.raises(ortc.errors.Fail, match="injected"):
            s.inputs
    finally:
        undo()
    assert len(typeinfo._scratch_pool) == max(before, 1)
    assert [x.shape for x in s.inputs] == [(2, "n"), (2, "n")]


def test_sequence_and_map_type_info() -> None:
    s = ortc.Session(models.zipmap_model())
    out = s.outputs[0].type
    assert out.kind == ValueKind.SEQUENCE and out.element.kind == ValueKind.MAP
    assert out.element.key_type == ElementType.INT64
    assert out.type_str == "seq(map(int64,tensor(float)))"


def test_overridable_initializer_listed_and_overridden() -> None:
    s = ortc.Session(models.overridable_initializer_model())
    assert [a.name for a in s.overridable_initializers] == ["bias"]
    x = np.zeros(3, np.float32)
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], [1, 2, 3])
    np.testing.assert_array_equal(
        s.run(None, {"x": x, "bias": np.array([5, 6, 7], np.float32)})[0], [5, 6, 7])


def test_metadata() -> None:
    s = ortc.Session(models.metadata_model())
    md = s.metadata()
    assert md.producer_name == "ortc-tests" and md.domain == "org.ortc.test"
    assert md.description == "A model with metadata." and md.graph_name == "metadata_graph"
    assert md.graph_description == "The graph's description." and md.version == 42
    assert md.custom_metadata_map == {"author": "ortc", "license": "MIT", "unicode": "été ✓"}


def test_output_selection_and_order() -> None:
    s = ortc.Session(models.multi_io_model())
    feeds = {"x": np.array([[1, -2, 3], [-4, 5, -6]], np.float32),
             "n": np.array([1, 2, 3], np.int64), "s": np.array(["ab", "Cd"], dtype=object)}
    mask, upper = s.run(["mask", "upper"], feeds)
    np.testing.assert_array_equal(mask, feeds["x"] > 0)
    assert upper.tolist() == ["AB", "CD"]
    assert s.run(["count"], feeds)[0] == 6


def test_run_errors_name_the_problem(add_session) -> None:
    a = np.ones(2, np.float32)
    with pytest.raises(ortc.InvalidArgument, match="unknown input name 'zz'"):
        add_session.run(None, {"a": a, "b": a, "zz": a})
    with pytest.raises(ortc.InvalidArgument, match="unknown output name 'nope'"):
        add_session.run(["nope"], {"a": a, "b": a})
    with pytest.raises(ortc.InvalidArgument, match=r"input 'b': expected tensor\(float\), got "
                                                   r"an array of dtype float64"):
        add_session.run(None, {"a": a, "b": a.astype(np.float64)})
    with pytest.raises(ortc.InvalidArgument, match=r"missing input\(s\) \['b'\]"):
        add_session.run(None, {"a": a})
    with pytest.raises(ortc.InvalidArgument, match="a"):
        add_session.run(None, {"a": np.ones((2, 2), np.float32), "b": a})
    with pytest.raises(ortc.InvalidArgument, match="feeds must be a dict"):
        add_session.run(None, [a, a])  # type: ignore[arg-type]
    with pytest.raises(ortc.InvalidArgument, match="input 'a'.*None"):
        add_session.run(None, {"a": None, "b": a})
    with pytest.raises(ortc.InvalidArgument, match="input 'a'.*dtype object"):
        add_session.run(None, {"a": np.array([object()]), "b": a})
    # the session is still usable and nothing leaked into the live-handle count
    before = ortc.live_handles()
    np.testing.assert_array_equal(add_session.run(None, {"a": a, "b": a})[0], [2, 2])
    assert ortc.live_handles() == before


def test_lists_are_accepted_as_tensor_feeds(add_session) -> None:
    [c] = add_session.run(None, {"a": [1.0, 2.0], "b": [3.0, 4.0]})
    assert c.dtype == np.float32 and c.tolist() == [4.0, 6.0]


def test_missing_file_and_bad_bytes() -> None:
    with pytest.raises(ortc.NoSuchFile, match="missing.onnx") as info:
        ortc.Session("/nonexistent/missing.onnx")
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(ortc.InvalidProtobuf):
        ortc.Session(b"this is not a model")
    with pytest.raises(ortc.InvalidArgument, match="empty"):
        ortc.Session(b"")
    with pytest.raises(TypeError, match="model must be"):
        ortc.Session(12345)  # type: ignore[arg-type]


def test_session_options_attributes_and_keywords(tmp_path) -> None:
    opts = ortc.SessionOptions(intra_op_num_threads=1, execution_mode=ExecutionMode.SEQUENTIAL)
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = GraphOptimizationLevel.ENABLE_BASIC
    opts.enable_mem_pattern = False
    opts.enable_cpu_mem_arena = False
    opts.logid = "test-session"
    opts.log_severity_level = LoggingLevel.ERROR
    opts.log_verbosity_level = 0
    opts.use_deterministic_compute = True
    opts.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    assert opts.intra_op_num_threads == 1 and opts.enable_cpu_mem_arena is False
    assert opts.graph_optimization_level == GraphOptimizationLevel.ENABLE_BASIC
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert opts.get_session_config_entry("session.not.set") is None
    s = ortc.Session(models.add_model(), opts)
    assert os.path.getsize(tmp_path / "optimized.onnx") > 0
    np.testing.assert_array_equal(s.run(None, _feeds_add(1))[0], [0])
    with pytest.raises(TypeError, match="unknown session option 'intra_threads'"):
        ortc.SessionOptions(intra_threads=1)
    with pytest.raises(ValueError):
        opts.intra_op_num_threads = -1
    with pytest.raises(ValueError):
        opts.execution_mode = 7


def test_options_closed_after_session_creation_and_clone() -> None:
    opts = ortc.SessionOptions(intra_op_num_threads=1)
    clone = opts.clone()
    s = ortc.Session(models.add_model(), opts)
    opts.close()
    with pytest.raises(ortc.ClosedError):
        opts.intra_op_num_threads = 2
    np.testing.assert_array_equal(s.run(None, _feeds_add(1))[0], [0])
    assert clone.intra_op_num_threads == 1
    ortc.Session(models.add_model(), clone).close()


def test_free_dimension_override() -> None:
    opts = ortc.SessionOptions()
    opts.add_free_dimension_override_by_name("batch", 4)
    s = ortc.Session(models.symbolic_dim_model(), opts)
    assert s.inputs[0].shape[0] in (4, "batch")
    [y] = s.run(None, {"x": np.ones((4, 4), np.float32)})
    assert y.shape == (4, 4)
    with pytest.raises(ortc.InvalidArgument):
        s.run(None, {"x": np.ones((3, 4), np.float32)})
    opts2 = ortc.SessionOptions()
    opts2.add_free_dimension_override("DATA_BATCH", 2)  # accepted; no denotation in this model
    ortc.Session(models.symbolic_dim_model(), opts2).close()


def test_add_initializer_overrides_and_is_kept_alive() -> None:
    opts = ortc.SessionOptions()
    opts.add_initializer("bias", np.array([7, 8, 9], np.float32))
    s = ortc.Session(models.overridable_initializer_model(), opts)
    del opts
    import gc
    gc.collect()
    np.testing.assert_array_equal(s.run(None, {"x": np.zeros(3, np.float32)})[0], [7, 8, 9])


def _live_values() -> int:
    return ortc.live_handles().get("Value", 0)


def test_initializer_value_closed_early_is_released_last() -> None:
    """A Value given to add_initializer and closed before the session is made stays alive for
    ORT (released at once, CreateSession read freed memory: a segfault with an 8 MB value)
    until the options, their clone and the session are all gone."""
    before = _live_values()
    opts = ortc.SessionOptions()
    v = ortc.Value.from_numpy(np.array([7, 8, 9], np.float32))
    opts.add_initializer("bias", v)
    clone = opts.clone()
    v.close()
    assert v.closed and _live_values() == before + 1  # closed for use, its release deferred
    with pytest.raises(ortc.ClosedError):
        v.numpy()
    junk = [np.full(1 << 18, -1.0, np.float32) for _ in range(8)]  # reuse freed memory, if any
    s = ortc.Session(models.overridable_initializer_model(), opts)
    opts.close()
    s2 = ortc.Session(models.overridable_initializer_model(), clone)
    clone.close()
    del junk
    assert _live_values() == before + 1
    for sess in (s, s2):
        np.testing.assert_array_equal(sess.run(None, {"x": np.zeros(3, np.float32)})[0],
                                      [7, 8, 9])
    s.close()
    assert _live_values() == before + 1  # s2 still refers to it
    s2.close()
    assert _live_values() == before


def test_held_values_are_let_go_when_the_holder_is_collected() -> None:
    """Dropping (not closing) the options or a binding that holds a closed Value lets the
    Value's deferred release run: the finalizer lets held children go too."""
    import gc

    before = _live_values()
    opts = ortc.SessionOptions()
    v = ortc.Value.from_numpy(np.array([7, 8, 9], np.float32))
    opts.add_initializer("bias", v)
    v.close()
    assert _live_values() == before + 1
    del opts
    gc.collect()
    assert _live_values() == before

    s = ortc.Session(models.add_model(np.float32, [3]))
    b = s.io_binding()
    a = ortc.Value.from_numpy(np.ones(3, np.float32))
    b.bind_input("a", a)
    b.bind_input("b", a)
    a.close()
    assert _live_values() == before + 1
    b.bind_input("a", np.ones(3, np.float32))  # rebinding lets one hold go, not the value
    assert _live_values() == before + 1  # (an array is bound without a Value of its own)
    del b
    gc.collect()
    assert _live_values() == before
    s.close()


def test_external_initializers(tmp_path) -> None:
    import onnx
    from onnx import helper, numpy_helper

    w = np.arange(4, dtype=np.float32)
    tensor = numpy_helper.from_array(w, "w")
    tensor.data_location = onnx.TensorProto.EXTERNAL
    tensor.ClearField("raw_data")
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])],
                              initializer=[tensor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    opts = ortc.SessionOptions()
    opts.add_external_initializers({"w": np.array([10, 20, 30, 40], np.float32)})
    s = ortc.Session(model.SerializeToString(), opts)
    np.testing.assert_array_equal(s.run(None, {"x": np.ones(4, np.float32)})[0], [11, 21, 31, 41])


def test_providers() -> None:
    assert "CPUExecutionProvider" in ortc.available_providers()
    s = ortc.Session(models.add_model(), providers=["CPUExecutionProvider"])
    assert s.providers == ["CPUExecutionProvider"]
    assert s.thread_rules()["run"] == "shared"
    opts = ortc.SessionOptions()
    with pytest.raises(ortc.OrtError, match="NoSuchProvider"):
        opts.append_execution_provider("NoSuchProviderExecutionProvider")
    with pytest.raises(ortc.InvalidArgument, match="unknown options"):
        opts.append_execution_provider("CPUExecutionProvider", {"bogus": 1})


def test_custom_ops_library_missing_file() -> None:
    opts = ortc.SessionOptions()
    with pytest.raises(ortc.OrtError, match="no_such_custom_ops.so"):
        opts.register_custom_ops_library("/nonexistent/no_such_custom_ops.so")


def test_profiling(tmp_path) -> None:
    opts = ortc.SessionOptions(profile_file_prefix=str(tmp_path / "prof"), enable_profiling=True)
    s = ortc.Session(models.add_model(), opts)
    s.run(None, _feeds_add(1))
    assert s.profiling_start_ns() > 0
    path = s.end_profiling()
    assert path.startswith(str(tmp_path / "prof"))
    events = json.load(open(path))
    assert any(e.get("name", "").endswith("kernel_time") or e.get("cat") == "Node" for e in events)


def test_run_options() -> None:
    ro = ortc.RunOptions(tag="t1", log_severity_level=LoggingLevel.ERROR)
    assert ro.tag == "t1" and ro.log_severity_level == LoggingLevel.ERROR
    ro.log_verbosity_level = 1
    assert ro.log_verbosity_level == 1
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    assert ro.get_run_config_entry("unset.key") is None
    s = ortc.Session(models.add_model())
    assert s.run(None, _feeds_add(1), ro)[0].tolist() == [0]
    ro.terminate()
    with pytest.raises(ortc.Fail, match="terminate flag"):  # ORT reports FAIL, not a
        s.run(None, _feeds_add(1), ro)                      # RUNTIME_EXCEPTION
    ro.unset_terminate()
    assert s.run(None, _feeds_add(1), ro)[0].tolist() == [0]
    ro.close()
    with pytest.raises(ortc.ClosedError):
        s.run(None, _feeds_add(1), ro)
    with pytest.raises(TypeError):
        ortc.RunOptions(bogus=1)


def test_run_options_severity_reads_none_until_set() -> None:
    """ORT keeps -1 (the session's level applies) until a severity is set: a fresh RunOptions'
    log_severity_level raised ValueError (-1 is no LoggingLevel). It reads None, and None
    sets it back; copies and pickles keep it unset."""
    import copy
    import pickle

    ro = ortc.RunOptions()
    assert ro.log_severity_level is None
    ro.log_severity_level = LoggingLevel.INFO
    assert ro.log_severity_level == LoggingLevel.INFO
    ro.log_severity_level = None
    assert ro.log_severity_level is None
    assert copy.copy(ro).log_severity_level is None
    assert pickle.loads(pickle.dumps(ro)).log_severity_level is None
    assert ortc.RunOptions(log_severity_level=None).log_severity_level is None
    s = ortc.Session(models.add_model())
    assert s.run(None, _feeds_add(1), ro)[0].tolist() == [0]
    with pytest.raises(ortc.InvalidArgument):
        ro.log_severity_level = -1  # an int is a level: None, not -1, means unset


def test_terminate_from_another_thread_stops_a_long_run() -> None:
    import threading
    import time

    s = ortc.Session(models.endless_model(), intra_op_num_threads=1)
    ro = ortc.RunOptions()
    x = np.ones((256, 256), np.float32)
    timer = threading.Timer(0.02, ro.terminate)
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(ortc.Fail, match="terminate flag"):
        s.run(None, {"x": x}, ro)
    timer.join()
    stopped_after = time.perf_counter() - t0
    ro.unset_terminate()
    # the same options run again once unset (a short model keeps the test fast)
    small = ortc.Session(models.add_model())
    assert small.run(None, _feeds_add(1), ro)[0].tolist() == [0]
    assert stopped_after < 30  # generous: only proves the run did stop


def test_run_with_values_returns_values(add_session) -> None:
    a = ortc.Value.from_numpy(np.array([1, 2], np.float32))
    [c] = add_session.run_with_values(None, {"a": a, "b": np.array([3, 4], np.float32)})
    assert isinstance(c, ortc.Value) and c.kind == ValueKind.TENSOR
    np.testing.assert_array_equal(c.numpy(), [4, 6])


def test_sequence_map_and_optional_runs() -> None:
    s = ortc.Session(models.zipmap_model())
    x = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32)
    [maps] = s.run(None, {"x": x})
    assert isinstance(maps, list) and len(maps) == 2
    assert maps[0] == pytest.approx({10: 0.1, 20: 0.2, 30: 0.7})
    s2 = ortc.Session(models.empty_optional_model())
    none, y = s2.run(None, {"x": np.array([1, 2], np.float32)})
    assert none is None and y.tolist() == [1, 2]
    s3 = ortc.Session(models.optional_input_model())
    assert s3.run(None, {"opt": None})[0] == False  # noqa: E712 - numpy bool
    assert s3.run(None, {"opt": np.array([1, 2], np.float32)})[0] == True  # noqa: E712
    s4 = ortc.Session(models.sequence_construct_model())
    names = [a.name for a in s4.inputs]
    feeds = {n: np.full(2, i, np.float32) for i, n in enumerate(names)}
    [seq] = s4.run(None, feeds)
    assert [t.tolist() for t in seq] == [feeds[n].tolist() for n in names]


def test_a_wrong_declared_output_shape_runs_as_the_model_computes_it() -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Add", ["a", "a"], ["c"])], "g",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    s = ortc.Session(model.SerializeToString())
    for _ in range(2):
        [c] = s.run(None, {"a": np.ones(3, np.float32)})
        assert c.tolist() == [2.0, 2.0, 2.0]


def test_failing_run_is_not_retried() -> None:
    calls = []
    s = ortc.Session(models.add_model(np.float32, [2]))
    api = ortc._loader.api()

    def count(name, fn):
        def wrapper(*args):
            calls.append(name)
            return fn(*args)
        return wrapper

    undo = api.instrument(count, ["Run"])
    try:
        with pytest.raises(ortc.InvalidArgument):
            s.run(None, {"a": np.ones(3, np.float32), "b": np.ones(3, np.float32)})
    finally:
        undo()
    assert calls == ["Run"]


def test_custom_ops_library_registers_real_kernels() -> None:
    # onnxruntime-extensions' shared library exports RegisterCustomOps (test dependency)
    import glob
    from importlib import metadata

    from onnx import TensorProto, helper

    pkg = metadata.distribution("onnxruntime-extensions").locate_file("onnxruntime_extensions")
    [lib] = glob.glob(os.path.join(str(pkg), "_extensions_pydll*.so"))
    opts = ortc.SessionOptions()
    opts.register_custom_ops_library(lib)
    graph = helper.make_graph(
        [helper.make_node("StringUpper", ["s"], ["u"], domain="ai.onnx.contrib")], "g",
        [helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("u", TensorProto.STRING, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ai.onnx.contrib", 1)])
    model.ir_version = 8
    s = ortc.Session(model.SerializeToString(), opts)
    [u] = s.run(None, {"s": np.array(["ab", "Cd"], dtype=object)})
    assert u.tolist() == ["AB", "CD"]
    with pytest.raises(ortc.OrtError):  # without the library the domain is unknown
        ortc.Session(model.SerializeToString())


def test_provider_names_short_and_long() -> None:
    for name in ("AzureExecutionProvider", "AZURE", "azure"):
        opts = ortc.SessionOptions()
        opts.append_execution_provider(name)
        assert opts.providers == ["AzureExecutionProvider"]
    s = ortc.Session(models.add_model(), providers=["AzureExecutionProvider",
                                                     "CPUExecutionProvider"])
    assert s.providers == ["AzureExecutionProvider", "CPUExecutionProvider"]
    rules = s.thread_rules()
    assert rules["run"] == "exclusive" and "AzureExecutionProvider" in rules["reasons"][0]
    one = np.ones(1, np.float32)
    assert s.run(None, {"a": one, "b": one})[0].tolist() == [2.0]
    with pytest.raises(ortc.OrtError, match="not (supported|enabled) in this build"):
        ortc.SessionOptions().append_execution_provider("CUDAExecutionProvider")


@pytest.mark.parametrize("extra", [{"intra_op_num_threads": 1},
                                   {"providers": ["CPUExecutionProvider"]}],
                         ids=["keyword", "providers"])
def test_options_plus_keywords_keep_the_initializers_alive(extra: dict[str, Any]) -> None:
    """Session(model, opts, **keywords) builds from a temporary copy of ``opts``: the session
    must take over what that copy references (the initializer Value) before the copy is
    closed. It once closed the copy first and kept nothing, so after the user closed ``opts``
    and the value, ORT read freed memory (garbage outputs, or a crash)."""
    before = _live_values()
    opts = ortc.SessionOptions()
    v = ortc.Value.from_numpy(np.array([7.0, 8.0, 9.0], np.float32))
    opts.add_initializer("bias", v)
    s = ortc.Session(models.overridable_initializer_model(), opts, **extra)
    opts.close()
    v.close()
    gc.collect()
    assert _live_values() == before + 1  # held by the session, released with it
    junk = [np.full(3, -1.0, np.float32) for _ in range(1000)]  # reuse freed memory, if any
    np.testing.assert_array_equal(s.run(None, {"x": np.zeros(3, np.float32)})[0], [7, 8, 9])
    del junk
    s.close()
    gc.collect()
    assert _live_values() == before


def test_buffer_protocol_feeds_are_read_in_place_with_their_own_dtype() -> None:
    """What exports the buffer protocol (array.array, a ctypes array, a bytearray, a
    memoryview) is a feed like a numpy array over the same memory: its format is its dtype
    (checked against the input's, never converted), later writes to it are seen by the next run,
    and IoBinding and Value.from_numpy take it the same way."""
    import array
    import ctypes

    s = ortc.Session(models.add_model(np.float32, ["n"]))
    one = np.ones(2, np.float32)
    a = array.array("f", [1, 2])
    assert s.run(None, {"a": a, "b": one})[0].tolist() == [2, 3]
    a[0] = 10
    assert s.run(None, {"a": a, "b": one})[0].tolist() == [11, 3]
    c = (ctypes.c_float * 2)(3, 4)
    assert s.run(None, {"a": c, "b": memoryview(one)})[0].tolist() == [4, 5]
    for wrong, dtype in [(array.array("d", [1, 2]), "float64"), (bytearray(8), "uint8")]:
        with pytest.raises(ortc.InvalidArgument, match=f"expected tensor\\(float\\), got an "
                                                       f"array of dtype {dtype}"):
            s.run(None, {"a": wrong, "b": one})
    b = s.io_binding()
    b.bind_input("a", array.array("f", [5, 6]))
    b.bind_input("b", one)
    out = (ctypes.c_float * 2)()
    b.bind_output("c", out)
    s.run_with_binding(b)
    assert list(out) == [6, 7]  # written into the ctypes array's own memory
    v = ortc.Value.from_numpy(array.array("f", [7, 8]))
    assert v.numpy().tolist() == [7, 8]
    # bytes and str stay Python data (string tensors), not memory
    with pytest.raises(ortc.InvalidArgument):
        s.run(None, {"a": b"\0\0\0\0\0\0\0\0", "b": one})


@pytest.mark.parametrize("shape", [[3], ["n"]])
def test_an_output_named_twice_is_at_both_positions_in_every_run(shape: list[Any]) -> None:
    # ORT fills one of two buffers given for one name: the other came back as np.empty's
    # memory (an earlier run's data), in every run and after a stage took over
    import onnxruntime

    model = models.add_model(np.float32, shape)
    ref = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    with ortc.Session(model) as s:
        for i in range(40):
            x = np.full(3, i, np.float32)
            got = s.run(["c", "c", "c"], {"a": x, "b": x})
            single = s.run(["c"], {"a": x, "b": x})  # the names once: may be staged
            want = ref.run(["c", "c", "c"], {"a": x, "b": x})
            assert [g.tolist() for g in got] == [w.tolist() for w in want] == [(2 * x).tolist()] * 3
            assert single[0].tolist() == (2 * x).tolist()
            assert got[0] is not got[1] and np.shares_memory(got[0], got[1])  # as onnxruntime
        values = s.run_with_values(["c", "c"], {"a": x, "b": x})
        assert [v.numpy().tolist() for v in values] == [(2 * x).tolist()] * 2


@pytest.mark.parametrize("shape", [[2], ["n"], None])
def test_an_input_handed_back_as_an_output_is_its_value_copied(shape: Any) -> None:
    # A graph that returns an input (as such, or beside another output): ORT hands back the
    # fed value in place of a buffer given for that output, which came back unwritten
    # (np.empty's memory) from the second run on. Nor is the result a view of the caller's
    # array, which the caller may change or free (onnxruntime copies too)
    from onnx import helper

    x = models._vi("x", models.T.FLOAT, shape)
    alone = models.make_model([], [x], [x]).SerializeToString()
    beside = models.make_model([helper.make_node("Neg", ["x"], ["y"])], [x],
                               [models._vi("y", models.T.FLOAT, shape), x]).SerializeToString()
    for model, names in ((alone, None), (beside, None), (beside, ["x"]), (beside, ["x", "y"])):
        with ortc.Session(model) as s:
            for i in range(12):  # past the runs after which a shape is learned and staged
                xs = np.array([i, -i], np.float32)
                got = s.run(names, {"x": xs})
                want = {"x": [i, -i], "y": [-i, i]}
                assert [g.tolist() for g in got] == [
                    want[n] for n in names or [a.name for a in s.outputs]]
                assert not any(np.shares_memory(g, xs) for g in got)
            later = s.run_async(names, {"x": xs}).result()
            assert not any(np.shares_memory(g, xs) for g in later)
            assert [g.tolist() for g in later] == [g.tolist() for g in got]


@pytest.mark.parametrize("feed", ["array", "strided", "Value", "int4"])
def test_run_with_values_gives_an_input_handed_back_as_a_value_of_its_own(feed: str) -> None:
    # ORT hands back the fed value itself: a Value over the caller's array (or over the copy
    # the run made of a strided one, freed when the run returned), which nothing kept alive.
    # Found by tests/test_differential.py: an earlier run's Value changed when the caller
    # wrote to the array it had fed (recycled memory); reading it after the caller dropped a
    # 4 MB array segfaulted
    import gc

    et = models.T.INT4 if feed == "int4" else models.T.FLOAT
    x = models._vi("x", et, ["n"])
    model = models.make_model([], [x], [x], check=False).SerializeToString()
    with ortc.Session(model) as s:
        kept = []
        for i in range(3):
            data = np.full(8, i, np.float32)
            if feed == "int4":
                import ml_dtypes

                data = data.astype(ml_dtypes.int4)
            fed: Any = {"array": data, "int4": data, "strided": np.repeat(data, 2)[::2],
                        "Value": ortc.Value.from_numpy(data)}[feed]
            [v] = s.run_with_values(None, {"x": fed})
            want = data.tolist()
            assert v.numpy().tolist() == want
            if isinstance(fed, np.ndarray):
                fed[...] = 7  # the caller reuses its memory: no earlier result changes
                assert not np.shares_memory(v.numpy(), fed)
            else:
                fed.close()
            kept.append((v, want))
            del fed, data
        gc.collect()
        for v, want in kept:
            assert v.numpy().tolist() == want


def test_a_one_element_output_has_the_shape_ort_made_not_the_declared_one() -> None:
    # ORT writes a one-element result of any shape into a one-element buffer: preallocated
    # with the declared shape, the array kept it ((), where ORT and onnxruntime give (1,))
    import onnxruntime
    from onnx import helper

    def model(x_shape: list[int], node: Any) -> bytes:
        return models.make_model([node], [models._vi("x", models.T.FLOAT, x_shape)],
                                 [models._vi("y", models.T.FLOAT, [])],
                                 check=False).SerializeToString()

    cases = [(model([], helper.make_node("Neg", ["x"], ["y"])),  # a scalar fed as [1]
              [np.array(2.0, np.float32), np.array([2.0], np.float32)]),
             (model([3], helper.make_node("ReduceSum", ["x"], ["y"], keepdims=1)),
              [np.ones(3, np.float32)])]
    for m, xs in cases:
        ref = onnxruntime.InferenceSession(m, providers=["CPUExecutionProvider"])
        with ortc.Session(m) as s:
            for _ in range(12):  # past learning and staging
                for x in xs:
                    [got], [want] = s.run(None, {"x": x}), ref.run(None, {"x": x})
                    assert got.shape == want.shape and got.tolist() == want.tolist(), (got, want)


def test_given_initializers_are_checked_against_the_models(tmp_path) -> None:
    # ORT takes them without comparing: a name it lacks is ignored, another shape computes
    # another graph, another dtype is read as the declared one past a smaller buffer (a crash)
    from onnx import helper, numpy_helper

    def branch(name: str) -> Any:
        k = numpy_helper.from_array(np.array([5.0], np.float32), "k")
        return helper.make_graph([helper.make_node("Add", ["x", "k"], [name])], name, [],
                                 [models._vi(name, models.T.FLOAT, [1])], [k])

    node = helper.make_node("If", ["c"], ["y"], then_branch=branch("t"), else_branch=branch("e"))
    model = models.make_model([node], [models._vi("c", models.T.BOOL, []),
                                       models._vi("x", models.T.FLOAT, [1])],
                              [models._vi("y", models.T.FLOAT, [1])],
                              check=False).SerializeToString()
    path = tmp_path / "if.onnx"
    path.write_bytes(model)
    feeds = {"c": np.array(True), "x": np.ones(1, np.float32)}
    for source in (model, str(path), path):
        opts = ortc.SessionOptions()
        opts.add_initializer("k", np.array([100.0], np.float32))  # a subgraph's: ORT uses it
        with ortc.Session(source, opts) as s:
            assert s.run(None, feeds)[0].tolist() == [101.0]
        for name, value, words in (("kk", np.ones(1, np.float32), "unknown initializer 'kk'; "
                                                                  "did you mean 'k'?"),
                                   ("k", np.ones(1), "declares FLOAT [1], given DOUBLE [1]"),
                                   ("k", np.ones((1, 1), np.float32), "given FLOAT [1, 1]")):
            opts = ortc.SessionOptions()
            opts.add_initializer(name, value)
            with pytest.raises(ortc.InvalidArgument, match=re.escape(words)):
                ortc.Session(source, opts)


def test_switch_options_read_back_as_bools() -> None:
    opts = ortc.SessionOptions(enable_profiling=0, enable_cpu_mem_arena=2,
                               use_deterministic_compute=np.bool_(True))
    opts.enable_mem_pattern = 0
    got = (opts.enable_profiling, opts.enable_cpu_mem_arena, opts.use_deterministic_compute,
           opts.enable_mem_pattern)
    assert got == (False, True, True, False) and all(type(v) is bool for v in got), got


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.int8, np.uint16, np.float16])
def test_an_empty_list_is_an_empty_tensor_of_the_inputs_type(dtype: Any) -> None:
    """``[]`` is float64 to numpy, and converting it changes no value: it feeds an int64 or
    bool input as onnxruntime's run takes it (it was refused as float data)."""
    s = ortc.Session(models.identity_model(dtype, ["n"]))
    [y] = s.run(None, {"x": []})
    assert y.dtype == np.dtype(dtype) and y.shape == (0,)
    v = ortc.Value.from_numpy([], s.inputs[0].element_type)
    assert v.numpy().dtype == np.dtype(dtype) and v.shape == (0,)


def test_an_initializer_array_stays_shared_with_the_session() -> None:
    """Documented (SessionOptions.add_initializer, docs/COMPAT.md), as onnxruntime does it:
    ORT reads a given initializer from the caller's array while the session lives, and a
    pickle carries its contents at the time of pickling."""
    import pickle

    bias = np.array([10, 20, 30], np.float32)
    opts = ortc.SessionOptions()
    opts.add_initializer("bias", bias)
    s = ortc.Session(models.overridable_initializer_model(), opts)
    x = np.zeros(3, np.float32)
    assert s.run(None, {"x": x})[0].tolist() == [10, 20, 30]
    bias[:] = [7, 8, 9]
    assert s.run(None, {"x": x})[0].tolist() == [7, 8, 9]
    blob = pickle.dumps(s)
    bias[:] = [1, 1, 1]
    assert pickle.loads(blob).run(None, {"x": x})[0].tolist() == [7, 8, 9]
    external = np.array([4, 5, 6], np.float32)
    opts = ortc.SessionOptions()
    opts.add_initializer("bias", external.copy())  # a copy keeps them apart
    s2 = ortc.Session(models.overridable_initializer_model(), opts)
    external[:] = 0
    assert s2.run(None, {"x": x})[0].tolist() == [4, 5, 6]


#: the session config keys with which ORT reads an ORT-format model's bytes in place for the
#: session's life instead of copying them (its session options config keys header)
IN_PLACE_MODEL_BYTES_KEYS = ("session.use_ort_model_bytes_directly",
                             "session.use_ort_model_bytes_for_initializers")


def test_model_bytes_read_in_place_live_as_long_as_the_session(tmp_path) -> None:
    """With the in-place keys ORT keeps pointing into the model bytes after Session()
    returns: the initializers of an ORT-format model are read from them by every run. The
    Session keeps the bytes object it was given: the caller's last reference may go (its
    buffer is then not freed and reused), and it goes with the session. A session that did not
    keep them read freed memory: its bytes were finalized here and its outputs were garbage
    (inf) after the freed buffer was reused."""
    onnx_model = models.mlp_model(layers=2, width=128, batch=4)
    ort_path = tmp_path / "mlp.ort"
    saving = ortc.SessionOptions(optimized_model_filepath=str(ort_path))
    saving.add_session_config_entry("session.save_model_format", "ORT")
    ortc.Session(onnx_model, saving).close()
    ort_bytes = ort_path.read_bytes()
    assert ort_bytes[4:8] == b"ORTM"  # the ORT format's file identifier
    x = models.sample_array(np.float32, [4, 128], seed=1)
    want = ortc.Session(onnx_model).run(None, {"x": x})[0]

    finalized: list[bool] = []

    class TrackedBytes(bytes):
        def __del__(self) -> None:
            finalized.append(True)

    opts = ortc.SessionOptions()
    for key in IN_PLACE_MODEL_BYTES_KEYS:
        opts.add_session_config_entry(key, "1")
    # weights packed at creation would be copies: left unpacked, every run reads the bytes
    opts.add_session_config_entry("session.disable_prepacking", "1")
    s = ortc.Session(TrackedBytes(ort_bytes), opts)
    gc.collect()
    assert finalized == [], "the session let its model bytes go while ORT reads them"
    # what a freed buffer of this size would be reused for
    reuse = [bytes([0x7F]) * len(ort_bytes) for _ in range(20)]
    assert np.array_equal(s.run(None, {"x": x})[0], want)
    del reuse
    s.close()
    gc.collect()
    assert finalized == [True], "the model bytes outlived the session"
    # a mutable buffer is copied once: the caller may rewrite it while the session reads its copy
    for make in (bytearray, lambda b: memoryview(bytearray(b))):
        buf = make(ort_bytes)
        s = ortc.Session(buf, opts)
        buf[:] = bytes(len(ort_bytes))
        assert np.array_equal(s.run(None, {"x": x})[0], want)
        s.close()


# -- what a session reads from ORT on first use ------------------------------------------------

def _slot_calls(action: Any, names: tuple[str, ...]) -> tuple[Any, dict[str, int]]:
    """``action()``'s result, and how often it called each OrtApi slot of ``names``."""
    from ortc._loader import api

    counts = dict.fromkeys(names, 0)

    def wrap(name: str, original: Any) -> Any:
        def call(*args: Any) -> Any:
            counts[name] += 1
            return original(*args)
        return call

    undo = api().instrument(wrap, names)
    try:
        return action(), counts
    finally:
        undo()


_IO_SLOTS = ("SessionGetInputCount", "SessionGetOutputCount",
             "SessionGetOverridableInitializerCount", "SessionGetInputTypeInfo")


def test_inputs_and_outputs_are_read_from_ort_on_first_use_only() -> None:
    """A session made (and dropped) asks ORT nothing about its inputs; the first description
    or run reads them once, for every later use (and for later sessions of the model: the
    shared descriptions are emptied first, as another test may have made this model)."""
    import ortc.session as session_module

    session_module._DESCRIPTIONS.clear()
    s, counts = _slot_calls(lambda: ortc.Session(models.add_model(), intra_op_num_threads=1),
                            _IO_SLOTS)
    assert counts == dict.fromkeys(_IO_SLOTS, 0)
    names, counts = _slot_calls(lambda: [a.name for a in s.inputs], _IO_SLOTS)
    assert names == ["a", "b"] and counts == {"SessionGetInputCount": 1,
                                              "SessionGetOutputCount": 1,
                                              "SessionGetOverridableInitializerCount": 1,
                                              "SessionGetInputTypeInfo": 2}
    a = np.ones(1, np.float32)
    out, counts = _slot_calls(lambda: (s.run(None, {"a": a, "b": a}), s.outputs), _IO_SLOTS)
    assert out[0][0].tolist() == [2.0] and [o.name for o in out[1]] == ["c"]
    assert counts == dict.fromkeys(_IO_SLOTS, 0)
    # a first run reads them too: here, the description the first session read
    s2 = ortc.Session(models.add_model(), intra_op_num_threads=1)
    [out2], counts = _slot_calls(lambda: s2.run(None, {"a": a, "b": a}), _IO_SLOTS)
    assert out2.tolist() == [2.0] and counts == dict.fromkeys(_IO_SLOTS, 0)
    assert s2.inputs == s.inputs and s2.outputs == s.outputs
    session_module._DESCRIPTIONS.clear()
    s3 = ortc.Session(models.add_model(), intra_op_num_threads=1)
    [out3], counts = _slot_calls(lambda: s3.run(None, {"a": a, "b": a}), _IO_SLOTS)
    assert out3.tolist() == [2.0] and counts["SessionGetInputTypeInfo"] == 2


def test_threads_reading_a_new_sessions_inputs_at_once_get_the_same_answer() -> None:
    """Threads that describe and run a new session at once, each the first to, all see the one
    reading: the same inputs, outputs and run engine, and correct results."""
    import threading

    a = np.arange(4, dtype=np.float32)
    for _ in range(20):
        s = ortc.Session(models.add_model(np.float32, ["n"]), intra_op_num_threads=1)
        barrier = threading.Barrier(6)
        seen: list[Any] = []
        errors: list[BaseException] = []

        def use(i: int) -> None:
            try:
                barrier.wait()
                if i % 3 == 0:
                    seen.append(("inputs", s.inputs, s._engine))
                elif i % 3 == 1:
                    seen.append(("outputs", s.outputs, s._engine))
                else:
                    seen.append(("run", s.run(None, {"a": a, "b": a})[0].tolist(), s._engine))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=use, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        engines = {id(e) for _, _, e in seen}
        assert len(seen) == 6 and len(engines) == 1, "one run engine for every thread"
        for what, value, _ in seen:
            if what == "inputs":
                assert [(x.name, x.shape) for x in value] == [("a", ("n",)), ("b", ("n",))]
            elif what == "outputs":
                assert [(x.name, x.shape) for x in value] == [("c", ("n",))]
            else:
                assert value == [0.0, 2.0, 4.0, 6.0]
        s.close()


def test_description_of_a_closed_session_raises_closed_error_read_or_not() -> None:
    """inputs, outputs, overridable_initializers and metadata() of a closed session raise
    ClosedError, whether they were read before the close or never."""
    never = ortc.Session(models.add_model(), intra_op_num_threads=1)
    read = ortc.Session(models.add_model(), intra_op_num_threads=1)
    assert [a.name for a in read.inputs] == ["a", "b"]
    for s in (never, read):
        s.close()
        for attribute in ("inputs", "outputs", "overridable_initializers"):
            with pytest.raises(ortc.ClosedError, match="Session is closed"):
                getattr(s, attribute)
        with pytest.raises(ortc.ClosedError, match="Session is closed"):
            s.metadata()
        with pytest.raises(ortc.ClosedError, match="Session is closed"):
            s.run(None, {})


def test_a_session_never_described_is_released_with_its_last_reference() -> None:
    """Nothing read on first use ties a session to itself: made and dropped with the cyclic
    collector off, it is released at once, read or not."""
    import weakref

    enabled = gc.isenabled()
    gc.disable()
    try:
        for describe in (False, True):
            s = ortc.Session(models.add_model(), intra_op_num_threads=1)
            if describe:
                assert len(s.inputs) == 2
            ref = weakref.ref(s)
            del s
            assert ref() is None
    finally:
        if enabled:
            gc.enable()


def test_keyword_options_alone_are_applied_as_session_options_apply_them(tmp_path) -> None:
    """Keywords without options or providers go to a bare ORT options object (no
    SessionOptions handle is made): checked with SessionOptions' messages, applied, and
    recorded as SessionOptions would record them."""
    model = models.add_model()
    kw = dict(intra_op_num_threads=1, execution_mode=ExecutionMode.SEQUENTIAL,
              graph_optimization_level=GraphOptimizationLevel.ENABLE_BASIC,
              log_severity_level=LoggingLevel.ERROR, enable_mem_pattern=False)
    gc.collect()
    before = ortc.live_handles().get("SessionOptions", 0)
    bare = ortc.Session(model, **kw)
    assert ortc.live_handles().get("SessionOptions", 0) == before
    with ortc.SessionOptions(**kw) as opts:
        made = ortc.Session(model, opts)
    assert bare.recipe().options == made.recipe().options
    assert dict(bare.recipe().options.settings)["graph_optimization_level"] == 1
    assert bare.providers == made.providers == ["CPUExecutionProvider"]
    a = np.ones(1, np.float32)
    assert bare.run(None, {"a": a, "b": a})[0].tolist() == [2.0]
    for bad, error, message in (
            ({"intra_op_num_threads": -1}, ortc.InvalidArgument, "intra_op_num_threads"),
            ({"intra_op_num_threads": 1.5}, TypeError, "intra_op_num_threads"),
            ({"execution_mode": 7}, ortc.InvalidArgument, "execution_mode"),
            ({"intra_op_num_threadz": 1}, TypeError, "intra_op_num_threads")):
        with pytest.raises(error, match=message):
            ortc.Session(model, **bad)
    gc.collect()
    assert ortc.live_handles().get("SessionOptions", 0) == before
    # profiling set by keywords: the prefix reaches ORT whichever keyword comes first
    prefix = str(tmp_path / "kw_profile")
    s = ortc.Session(model, profile_file_prefix=prefix, enable_profiling=True)
    s.run(None, {"a": a, "b": a})
    assert os.path.basename(s.end_profiling()).startswith("kw_profile")


def test_keyword_options_made_again_convert_each_value_as_new_options_would() -> None:
    """Sessions made per call with equal keywords reuse one bare ORT options object, but only
    for values that convert alike every time: a member whose conversion is its own (an
    Enum's ``__index__`` that counts, an IntEnum's ``__bool__``) was converted once and that
    first result reused (1, 1, 1 where SessionOptions took 1, 2, 3). A refused value raises
    every time, also after an equal value of another type was accepted."""
    import enum
    import itertools

    model = models.add_model()
    numbers = itertools.count(1)

    class Counting(enum.Enum):
        A = "a"

        def __index__(self) -> int:
            return next(numbers)

    took = []
    for _ in range(3):
        with ortc.Session(model, intra_op_num_threads=Counting.A) as s:
            took.append(dict(s.recipe().options.settings)["intra_op_num_threads"])
        with ortc.SessionOptions(intra_op_num_threads=Counting.A) as opts:
            took.append(opts.intra_op_num_threads)
    assert took == sorted(set(took)), took  # each a new number, in turn

    class Flipping(enum.IntEnum):  # a switch whose truth is its own
        ON = 1

        def __bool__(self) -> bool:
            return next(numbers) % 2 == 0

    switched = []
    for _ in range(4):
        with ortc.Session(model, enable_mem_pattern=Flipping.ON) as s:
            switched.append(dict(s.recipe().options.settings)["enable_mem_pattern"])
    assert len(set(switched)) == 2, switched

    class Other(enum.IntEnum):  # converts as its int: made once, reused
        TWO = 2

    for _ in range(2):
        with ortc.Session(model, intra_op_num_threads=Other.TWO) as s:
            assert dict(s.recipe().options.settings) == {"intra_op_num_threads": 2}
    for _ in range(2):
        ortc.Session(model, enable_profiling=0).close()  # an int switch: accepted
        ortc.Session(model, intra_op_num_threads=2).close()
        with pytest.raises(TypeError, match="bool"):
            ortc.Session(model, enable_profiling=0.0)
        with pytest.raises(TypeError, match="intra_op_num_threads"):
            ortc.Session(model, intra_op_num_threads=2.0)
        with pytest.raises(TypeError, match="intra_op_num_threads"):
            ortc.Session(model, intra_op_num_threads=True)
        with pytest.raises(TypeError, match="graph_optimization_level"):
            ortc.Session(model, graph_optimization_level=ExecutionMode.PARALLEL)


def test_each_session_keyword_sets_its_own_option(tmp_path) -> None:
    # Session() gathers its keywords in _SESSION_KEYWORDS' order: each must land on its name
    import inspect

    from ortc.session import _SESSION_KEYWORDS

    signature = inspect.signature(ortc.Session.__init__)
    keywords = [n for n, p in signature.parameters.items()
                if p.kind is p.KEYWORD_ONLY and n != "providers"]
    assert list(_SESSION_KEYWORDS) == keywords
    values = {"intra_op_num_threads": 3, "inter_op_num_threads": 2,
              "execution_mode": ExecutionMode.PARALLEL,
              "graph_optimization_level": GraphOptimizationLevel.ENABLE_BASIC,
              "optimized_model_filepath": str(tmp_path / "opt.onnx"), "enable_profiling": False,
              "profile_file_prefix": str(tmp_path / "prof"), "enable_mem_pattern": False,
              "enable_cpu_mem_arena": False, "logid": "kw-test",
              "log_severity_level": LoggingLevel.ERROR, "log_verbosity_level": 1,
              "use_deterministic_compute": True}
    assert sorted(values) == sorted(keywords)
    for name, value in values.items():
        s = ortc.Session(models.add_model(), **{name: value})
        settings = dict(s.recipe().options.settings)
        assert settings == {name: value}, (name, settings)
        s.close()


@pytest.mark.parametrize("name", ["intra_op_num_threads", "inter_op_num_threads",
                                  "log_verbosity_level"])
def test_a_member_of_ortcs_enums_is_no_plain_integer_option(name: str) -> None:
    import ortc.compat as compat

    for member in (ExecutionMode.PARALLEL, LoggingLevel.ERROR, compat.ExecutionMode.ORT_PARALLEL):
        with pytest.raises(TypeError, match=f"{name}.*{member.name}"):
            ortc.Session(models.add_model(), **{name: member})
        with pytest.raises(TypeError, match=member.name):
            setattr(ortc.SessionOptions(), name, member)
    with ortc.SessionOptions() as opts, pytest.raises(TypeError, match="PARALLEL"):
        opts.add_free_dimension_override_by_name("N", ExecutionMode.PARALLEL)
    assert ortc.Session(models.add_model(), **{name: np.int64(1)}).run(None, _feeds_add(1))


def test_providers_are_read_once_as_entries_and_no_options_are_dropped() -> None:
    cpu = "CPUExecutionProvider"
    feeds = _feeds_add(1)
    # an array of names (no truth value of its own), a generator, a tuple
    for given in (np.array([cpu, cpu]), np.array([], dtype=str), (n for n in [cpu]), (cpu,)):
        s = ortc.Session(models.add_model(), providers=given)
        assert s.providers == [cpu]
        assert s.run(None, feeds)[0].tolist() == [0.0]
    # a dict's iteration gives its names alone: the options would be dropped
    with pytest.raises(TypeError, match=r"items\(\)"):
        ortc.Session(models.add_model(), providers={cpu: {"use_arena": "0"}})
    # named twice with other options: the second would silently replace the first
    with pytest.raises(ortc.InvalidArgument, match="named twice"):
        ortc.Session(models.add_model(),
                     providers=[(cpu, {"use_arena": "0"}), ("CPU", {"use_arena": "1"})])
    # named twice alike (an option as the number or its text): one provider
    s = ortc.Session(models.add_model(),
                     providers=[("CPU", {"use_arena": 1}), (cpu, {"use_arena": "1"})])
    assert s.providers == [cpu]


def test_a_free_dimension_overridden_again_with_another_value_is_refused() -> None:
    # ORT keeps the first override: the second was ignored by the session and taken by one
    # made from its recipe (a pickled session had another input shape)
    for add in ("add_free_dimension_override_by_name", "add_free_dimension_override"):
        with ortc.SessionOptions() as opts:
            getattr(opts, add)("N" if add.endswith("name") else "DATA_BATCH", 2)
            getattr(opts, add)("N" if add.endswith("name") else "DATA_BATCH", np.int64(2))
            with pytest.raises(ortc.InvalidArgument, match="first override"):
                getattr(opts, add)("N" if add.endswith("name") else "DATA_BATCH", 3)
    with ortc.SessionOptions() as opts:
        opts.add_free_dimension_override_by_name("N", 2)
        with pytest.raises(ortc.InvalidArgument):
            opts.add_free_dimension_override_by_name("N", 3)
        model = models.add_model(shape=("N",))
        s = ortc.Session(model, opts)
        with ortc.SessionOptions.from_recipe(opts.recipe()) as again:
            assert ortc.Session(model, again).inputs[0].shape == s.inputs[0].shape == (2,)


@pytest.mark.parametrize("bad", [{"execution_mode": 5}, {"logid": "a\0b"},
                                 {"optimized_model_filepath": 5},
                                 {"profile_file_prefix": "p\0"}])
def test_update_with_a_bad_value_changes_nothing(bad: dict[str, Any]) -> None:
    with ortc.SessionOptions() as opts:
        with pytest.raises((TypeError, ValueError)):
            opts.update(intra_op_num_threads=2, enable_mem_pattern=False, **bad)
        assert opts.intra_op_num_threads == 0 and opts.enable_mem_pattern is True
        assert dict(opts.recipe().settings) == {}
