"""An onnxruntime program using the wheel's pure-Python subpackages: quantization (dynamic, and
static with calibration runs), tools (graph optimization through a session), transformers (a
fusion pass and a float16 conversion), backend and datasets. It prints digests of what it
makes; tests/test_compat_subpackages.py runs it under plain python and under
``python -m ortc.compat`` and compares. Argument: a directory to write models in."""

from __future__ import annotations

import hashlib
import os
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnxruntime
import onnxruntime.backend
from onnxruntime.datasets import get_example
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_dynamic, quantize_static)
from onnxruntime.tools.onnx_model_utils import optimize_model
from onnxruntime.transformers.float16 import convert_float_to_float16
from onnxruntime.transformers.onnx_model import OnnxModel

work = pathlib.Path(sys.argv[1])
rng = np.random.default_rng(0)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def shown(arrays: list[np.ndarray]) -> list[str]:
    return [f"{a.dtype}{list(a.shape)}:{digest(np.ascontiguousarray(a).tobytes())}"
            for a in arrays]


def graph_of(path: pathlib.Path) -> list[str]:
    return [n.op_type for n in onnx.load(str(path)).graph.node]


def run(path: pathlib.Path, feeds: dict[str, np.ndarray]) -> list[str]:
    sess = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return shown(sess.run(None, feeds))


# a two-layer perceptron: MatMul, Add, Relu, MatMul
w1 = rng.standard_normal((64, 32)).astype(np.float32)
w2 = rng.standard_normal((32, 8)).astype(np.float32)
b1 = rng.standard_normal(32).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
     helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])],
    "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
    [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
     numpy_helper.from_array(w2, "w2")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
mlp = work / "mlp.onnx"
onnx.save(model, str(mlp))
x = rng.standard_normal((4, 64)).astype(np.float32)
print("float", run(mlp, {"x": x}))

# quantization: dynamic (weights only), then static with a calibration that runs the model
dynamic = work / "mlp.dynamic.onnx"
quantize_dynamic(str(mlp), str(dynamic), weight_type=QuantType.QUInt8)
print("dynamic", digest(dynamic.read_bytes()), graph_of(dynamic), run(dynamic, {"x": x}))


class Batches(CalibrationDataReader):
    def __init__(self) -> None:
        self.batches = iter([{"x": rng.standard_normal((2, 64)).astype(np.float32)}
                             for _ in range(4)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


static = work / "mlp.qdq.onnx"
quantize_static(str(mlp), str(static), Batches(), quant_format=QuantFormat.QDQ,
                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
print("static", digest(static.read_bytes()), graph_of(static), run(static, {"x": x}))

# tools: ORT's own graph optimizer, through a session that writes the optimized model
optimized = work / "mlp.opt.onnx"
optimize_model(mlp, optimized, level=onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
print("tools", graph_of(optimized), run(optimized, {"x": x}))

# transformers: its graph wrapper and its float16 conversion (kept float32 at the edges)
wrapped = OnnxModel(onnx.load(str(mlp)))
print("transformers", sorted(wrapped.get_graphs_input_names()), len(wrapped.nodes()))
half = work / "mlp.fp16.onnx"
onnx.save(convert_float_to_float16(onnx.load(str(mlp)), keep_io_types=True), str(half))
print("float16", graph_of(half), run(half, {"x": x}))

# the ONNX backend API and the wheel's example models
rep = onnxruntime.backend.prepare(onnx.load(str(mlp)), "CPU")
print("backend", onnxruntime.backend.supports_device("CPU"), shown(list(rep.run([x]))))
sigmoid = pathlib.Path(get_example("sigmoid.onnx"))
print("datasets", sigmoid.name, run(sigmoid, {"x": np.linspace(-2, 2, 60, dtype=np.float32)
                                             .reshape(3, 4, 5)}))
# the subpackages' own imports of onnxruntime are this program's onnxruntime
print("served by", onnxruntime.__name__, all([
    sys.modules["onnxruntime.quantization.calibrate"].onnxruntime is onnxruntime,
    sys.modules["onnxruntime.tools.onnx_model_utils"].ort is onnxruntime,
    sys.modules["onnxruntime.quantization.quant_utils"].InferenceSession
    is onnxruntime.InferenceSession,
    sys.modules["onnxruntime.backend.backend"].get_device is onnxruntime.get_device]))
