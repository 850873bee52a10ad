"""What onnxruntime's own Python test-suite asserts about its CPU API, checked on ortc.compat.

onnxruntime's tests (onnxruntime/test/python in its repository) are the contract its users'
code leans on. Each test here takes one behaviour those tests assert, on models built here
with onnx.helper, and runs it with the real onnxruntime and with ortc.compat: the two must
give the same results, or raise the same class. Where compat differs on purpose, the test
asserts what docs/COMPAT.md says it does.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterator

import numpy as np
import onnx
import onnxruntime as real_ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import models
import ortc.compat as compat

CPU = ["CPUExecutionProvider"]


def _plain(x: Any) -> Any:
    """x with its arrays as (dtype, shape, items), for comparing results of both bindings."""
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tolist())
    if isinstance(x, (list, tuple)):
        return [_plain(i) for i in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _outcome(fn: Callable[[Any], Any], ort: Any) -> Any:
    try:
        return ("ok", _plain(fn(ort)))
    except Exception as err:  # noqa: BLE001 - the class is the outcome compared
        return ("raised", type(err).__name__)


def agree(fn: Callable[[Any], Any]) -> Any:
    """fn's outcome with onnxruntime and with compat, asserted equal; compat's returned."""
    expected, got = _outcome(fn, real_ort), _outcome(fn, compat)
    assert got == expected
    return got


def _square_model(meta: dict[str, str] | None = None) -> bytes:
    """y = x * w for x float [3, 2], w an initializer equal to x's test value."""
    w = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    graph = helper.make_graph(
        [helper.make_node("Mul", ["X", "W"], ["Y"])], "square",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    for key, value in (meta or {}).items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    return model.SerializeToString()


X = np.array([[1, 2], [3, 4], [5, 6]], np.float32)


# -- session options a model carries (ORT_LOAD_CONFIG_FROM_MODEL) ------------------------------
@pytest.fixture
def config_from_model() -> Iterator[None]:
    before = os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL")
    os.environ["ORT_LOAD_CONFIG_FROM_MODEL"] = "1"
    yield
    if before is None:
        del os.environ["ORT_LOAD_CONFIG_FROM_MODEL"]
    else:
        os.environ["ORT_LOAD_CONFIG_FROM_MODEL"] = before


def _reported_options(ort: Any, model: bytes) -> list[Any]:
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = 1, 2
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.logid = "mine"
    sess = ort.InferenceSession(model, so, providers=CPU)
    got = sess.get_session_options()
    profile = sess.end_profiling()
    if profile:
        os.remove(profile)
    return [got.inter_op_num_threads, got.intra_op_num_threads, str(got.execution_mode),
            str(got.graph_optimization_level), got.enable_profiling, got.logid, bool(profile),
            so.intra_op_num_threads]


@pytest.mark.usefixtures("config_from_model")
def test_a_models_ort_config_gives_the_options_the_session_reports() -> None:
    config = {"session_options": {"inter_op_num_threads": 5, "intra_op_num_threads": 2,
                                  "graph_optimization_level": 1, "enable_profiling": 1}}
    model = _square_model({"ort_config": json.dumps(config)})
    got = agree(lambda ort: _reported_options(ort, model))
    # the model's values over ORT's defaults, not over the caller's (execution_mode, logid);
    # the caller's own options object keeps its values
    assert got == ("ok", [5, 2, "ExecutionMode.ORT_SEQUENTIAL",
                          "GraphOptimizationLevel.ORT_ENABLE_BASIC", True, "", True, 1])


@pytest.mark.usefixtures("config_from_model")
def test_with_model_config_on_a_model_without_one_the_session_has_the_defaults() -> None:
    got = agree(lambda ort: _reported_options(ort, _square_model({"other": "x"})))
    assert got == ("ok", [0, 0, "ExecutionMode.ORT_SEQUENTIAL",
                          "GraphOptimizationLevel.ORT_ENABLE_ALL", False, "", False, 1])


def test_without_model_config_the_session_reports_the_callers_options() -> None:
    assert os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL", "0") != "1"
    model = _square_model({"ort_config": json.dumps({"session_options":
                                                     {"inter_op_num_threads": 5}})})
    got = agree(lambda ort: _reported_options(ort, model))
    assert got == ("ok", [2, 1, "ExecutionMode.ORT_PARALLEL",
                          "GraphOptimizationLevel.ORT_ENABLE_BASIC", False, "mine", False, 1])


# -- dicts fed for map inputs --------------------------------------------------------------------
INT_KEYS = models.dict_vectorizer_model([0, 1, 2])
STR_KEYS = models.dict_vectorizer_model(["a", "0", "1.5", "None", "True"])


def _feed(model: bytes, data: Any) -> Callable[[Any], Any]:
    return lambda ort: ort.InferenceSession(model, providers=CPU).run(None, {"x": data})


@pytest.mark.parametrize("data", [{0: 1.0, "a": 2.0}, {0: 1.0, b"a": 2.0}, {0: 1.0, None: 2.0},
                                  {0: 1.0, 1.5: 2.0}, {0: 1.0, 2**63: 2.0}, {1.5: 1.0},
                                  {b"a": 1.0}, {None: 1.0}, {0: "1.0"}, {0: None}])
@pytest.mark.parametrize("model", [INT_KEYS, STR_KEYS], ids=["int64_keys", "str_keys"])
def test_a_dict_with_a_key_or_value_onnxruntime_cannot_read_raises_runtime_error(
        model: bytes, data: dict[Any, Any]) -> None:
    # the first key decides how the keys are read: after an int, a str key is refused as a
    # RuntimeError (not as the type mismatch the map input's key type would make of it)
    assert agree(_feed(model, data)) == ("raised", "RuntimeError")
    with pytest.raises(RuntimeError):
        _feed(model, data)(compat)


@pytest.mark.parametrize("data", [{"a": 1.0, 0: 2.0}, {"a": 1.0, 1.5: 2.0},
                                  {"a": 1.0, None: 2.0}, {"a": 1.0, True: 2.0},
                                  {"a": 1.0, "0": 3.0, 0: 2.0}])
def test_after_a_str_key_every_key_is_read_as_its_str(data: dict[Any, Any]) -> None:
    got = agree(_feed(STR_KEYS, data))
    assert got[0] == "ok"


def test_after_a_str_key_a_number_key_still_mismatches_an_int64_map() -> None:
    assert agree(_feed(INT_KEYS, {"a": 1.0, 1.5: 2.0})) == ("raised", "InvalidArgument")


def test_dict_values_are_read_as_python_reads_numbers() -> None:
    got = agree(_feed(INT_KEYS, {0: np.array(2.0), 1: np.float16(3), 2: True}))
    assert got == ("ok", [("array", "<f4", (1, 3), [[2.0, 3.0, 1.0]])])
    # a complex is a number Python cannot make a float of: its TypeError, in onnxruntime's Fail
    assert agree(_feed(INT_KEYS, {0: 1 + 2j})) == ("raised", "Fail")


def test_dict_keys_of_numpy_integer_types_are_int64_keys() -> None:
    x = {0: 25.0, 1: 5.13, 2: 0.0}
    for keys in (np.int64, np.int32, np.uint8):
        got = agree(_feed(INT_KEYS, {keys(k): np.float64(v) for k, v in x.items()}))
        assert got[0] == "ok"


# -- devices and sparse tensors ------------------------------------------------------------------
def test_device_vendor_ids_are_an_int_enum_as_onnxruntimes() -> None:
    assert [(m.name, int(m)) for m in compat.OrtDeviceVendorId] == \
        [(m.name, int(m)) for m in real_ort.OrtDeviceVendorId]
    assert compat.OrtDeviceVendorId.__module__ == real_ort.OrtDeviceVendorId.__module__
    assert str(compat.OrtDeviceVendorId.NVIDIA) == str(real_ort.OrtDeviceVendorId.NVIDIA)
    assert repr(compat.OrtDeviceVendorId.NVIDIA) == repr(real_ort.OrtDeviceVendorId.NVIDIA)

    def vendors(ort: Any) -> list[Any]:
        cpu, cuda = ort.OrtDevice.make("cpu", 0), ort.OrtDevice.make("cuda", 0)
        return [cpu.device_vendor_id() == ort.OrtDeviceVendorId.NONE,
                cuda.device_vendor_id() == ort.OrtDeviceVendorId.NVIDIA,
                ort.OrtDeviceVendorId.NVIDIA == 0x10DE, type(cpu.device_vendor_id()).__name__]
    assert agree(vendors) == ("ok", [True, True, True, "int"])


def _coo(ort: Any) -> Any:
    return ort.SparseTensor.sparse_coo_from_numpy(
        [9, 9], np.array([1.0, 2.0], np.float32), np.array([3, 5], np.int64),
        ort.OrtDevice.make("cpu", 0))


def test_a_sparse_tensor_copied_to_cuda_raises_runtime_error_without_cuda() -> None:
    # (onnxruntime's CPU build; compat keeps sparse tensors in CPU memory whatever the build)
    assert agree(lambda ort: _coo(ort).to_cuda(ort.OrtDevice.make("cuda", 0))) == \
        ("raised", "RuntimeError")
    assert agree(lambda ort: _coo(ort).to_cuda("cuda")) == ("raised", "AttributeError")


def test_a_block_sparse_view_of_another_format_raises_runtime_error() -> None:
    assert agree(lambda ort: _coo(ort).as_blocksparse_view()) == ("raised", "RuntimeError")


# -- descriptions and runs the suite checks ------------------------------------------------------
def test_a_dimension_named_None_reads_as_that_string() -> None:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["None", 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["None", 1])],
        [numpy_helper.from_array(np.array([[1], [2]], np.float32), "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    data = model.SerializeToString()

    def shapes(ort: Any) -> Any:
        sess = ort.InferenceSession(data, providers=CPU)
        return [sess.get_inputs()[0].shape, sess.get_outputs()[0].shape,
                sess.run(None, {"X": X})]
    got = agree(shapes)
    assert got[1][:2] == [["None", 2], ["None", 1]]


def test_the_c_sessions_run_with_ort_values_returns_a_list_of_ortvalues() -> None:
    # onnxruntime returns its OrtValueVector there, which compat does not provide
    # (docs/COMPAT.md, "Not provided"): a list of OrtValue serves, indexed and sized alike
    sess = compat.InferenceSession(_square_model(), providers=CPU)
    value = compat.OrtValue.ortvalue_from_numpy(X)
    got = sess._sess.run_with_ort_values({"X": value._get_c_value()}, ["Y"],
                                         compat.capi.onnxruntime_pybind11_state.RunOptions())
    assert type(got) is list and len(got) == 1 and isinstance(got[0], compat.OrtValue)
    np.testing.assert_array_equal(got[0].numpy(), X * X)
    assert not hasattr(compat, "OrtValueVector")


def test_tree_ensemble_logistic_probabilities_are_onnxruntimes() -> None:
    def classifier(weights: list[float], base: float, split: bool) -> bytes:
        modes = ["BRANCH_LT", "LEAF", "LEAF"] if split else ["LEAF"]
        n = len(modes)
        node = helper.make_node(
            "TreeEnsembleClassifier", ["X"], ["label", "probs"], domain="ai.onnx.ml",
            nodes_treeids=[0] * n, nodes_nodeids=list(range(n)), nodes_featureids=[0] * n,
            nodes_values=[0.5, 0.0, 0.0][:n], nodes_modes=modes,
            nodes_truenodeids=[1, 0, 0][:n], nodes_falsenodeids=[2, 0, 0][:n],
            nodes_missing_value_tracks_true=[0] * n, nodes_hitrates=[1.0] * n,
            class_treeids=[0] * len(weights), class_nodeids=[1, 2] if split else [0],
            class_ids=[0] * len(weights), class_weights=weights, classlabels_int64s=[0, 1],
            post_transform="LOGISTIC", base_values=[base])
        graph = helper.make_graph(
            [node], "trees", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 3])],
            [helper.make_tensor_value_info("label", TensorProto.INT64, [None]),
             helper.make_tensor_value_info("probs", TensorProto.FLOAT, [None, 2])])
        return helper.make_model(graph, opset_imports=[
            helper.make_opsetid("", 15), helper.make_opsetid("ai.onnx.ml", 3)]).SerializeToString()
    feed = {"X": np.array([[0.1, 0.0, 0.0]], np.float32)}
    for weights, base, split in (([0.3, -0.3], -0.405, True), ([0.0], -0.405, False),
                                 ([-0.405], 0.0, False)):
        model = classifier(weights, base, split)
        got = agree(lambda ort: ort.InferenceSession(model).run(None, feed))
        assert got[0] == "ok"


def test_a_model_saved_optimized_with_external_initializers_loads_from_its_directory(
        tmp_path: Any) -> None:
    big = models.mlp_model(layers=2, width=16)

    def optimize(ort: Any) -> Any:
        where = tmp_path / ort.__name__
        where.mkdir()
        so = ort.SessionOptions()
        so.optimized_model_filepath = str(where / "opt.onnx")
        so.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                    "weights.bin")
        so.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "10")
        ort.InferenceSession(big, so, providers=CPU)
        files = sorted(os.listdir(where))
        again = ort.InferenceSession(str(where / "opt.onnx"), providers=CPU)
        return [files, [i.name for i in again.get_inputs()]]
    got = agree(optimize)
    assert got[1][0] == ["opt.onnx", "weights.bin"]
    assert onnx.load(str(tmp_path / "ortc.compat" / "opt.onnx"), load_external_data=False)


class _Index:
    def __index__(self) -> int:
        return 2


class _Falsy:
    def __bool__(self) -> bool:
        return False


@pytest.mark.parametrize("name, value", [
    ("intra_op_num_threads", np.True_), ("intra_op_num_threads", np.float32(2.5)),
    ("intra_op_num_threads", _Index()), ("intra_op_num_threads", np.array(2)),
    ("log_severity_level", np.float32(3.0)), ("intra_op_num_threads", 2.0),
    ("intra_op_num_threads", "2"), ("intra_op_num_threads", complex(2, 0)),
    ("enable_mem_pattern", np.array([1])), ("enable_cpu_mem_arena", complex(0, 0)),
    ("enable_mem_pattern", _Falsy()), ("enable_profiling", np.array([1, 2])),
    ("enable_profiling", [1]), ("enable_profiling", "1"), ("logid", b"\xff"),
])
def test_session_option_values_are_converted_as_onnxruntimes_setters_convert_them(
        name: str, value: Any) -> None:
    def made(ort: Any) -> Any:
        so = ort.SessionOptions()
        setattr(so, name, value)
        sess = ort.InferenceSession(_square_model(), so, providers=CPU)
        return [repr(getattr(so, name)), repr(getattr(sess.get_session_options(), name))]

    agree(made)


def _batch_model() -> bytes:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "batch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                             ir_version=10).SerializeToString()


@pytest.mark.parametrize("values", [(2, 3), (np.float32(2.0),), (np.int64(3), 3, 4), (2.0,),
                                    ("2",)])
def test_free_dimension_overrides_take_values_and_keep_the_first_as_onnxruntime(
        values: tuple[Any, ...]) -> None:
    def made(ort: Any) -> Any:
        so = ort.SessionOptions()
        for value in values:
            so.add_free_dimension_override_by_name("N", value)
        sess = ort.InferenceSession(_batch_model(), so, providers=CPU)
        return [sess.get_inputs()[0].shape, sess.get_outputs()[0].shape]

    agree(made)


@pytest.mark.parametrize("steps", [("init", "init"), ("ext", "ext"), ("ext2",), ("init", "ext"),
                                   ("ext", "init")])
def test_an_initializer_name_given_again_is_refused_as_onnxruntime_refuses_it(
        steps: tuple[str, ...]) -> None:
    arrays = [np.full((3, 2), k, np.float32) for k in (2, 3)]  # (alive past each session)

    def made(ort: Any) -> Any:
        so = ort.SessionOptions()
        values = [ort.OrtValue.ortvalue_from_numpy(a) for a in arrays]
        for step, value in zip(steps, values):
            if step == "init":
                so.add_initializer("W", value)
            elif step == "ext":
                so.add_external_initializers(["W"], [value])
            else:
                so.add_external_initializers(["W", "W"], values)
        return "added"

    agree(made)
