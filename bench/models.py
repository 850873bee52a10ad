"""The benchmark's models, built in-process with ``onnx.helper`` (nothing is downloaded).

Every model has float32 inputs of fixed shape so that the C floor program can feed it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

OPSET = 21
IR_VERSION = 10


@dataclass
class BenchModel:
    """One model of the benchmark: its bytes, its inputs (name -> shape) and output names."""

    key: str
    label: str
    model: bytes
    inputs: dict[str, tuple[int, ...]]
    outputs: list[str]
    #: where the model lies on disk, when it came from a file
    path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def feeds(self, seed: int = 0) -> dict[str, np.ndarray[Any, Any]]:
        """A fresh set of input arrays (new objects every call)."""
        rng = np.random.default_rng(seed)
        return {name: rng.random(shape, dtype=np.float32) for name, shape in self.inputs.items()}


def _build(nodes: list[Any], inputs: dict[str, tuple[int, ...]],
           outputs: dict[str, tuple[int, ...]], initializers: list[Any] = ()) -> bytes:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes, "bench",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in outputs.items()],
        list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def add_model(shape: tuple[int, ...] = (1,)) -> BenchModel:
    """``c = a + b`` on ``shape``: the binding's own cost dominates."""
    from onnx import helper

    io = {"a": shape, "b": shape}
    data = _build([helper.make_node("Add", ["a", "b"], ["c"])], io, {"c": shape})
    dims = "x".join(map(str, shape))
    return BenchModel("tiny", f"Add [{dims}]", data, io, ["c"])


def matmul_model(m: int = 64, k: int = 256, n: int = 256) -> BenchModel:
    """``y = a @ b`` with both operands as inputs."""
    from onnx import helper

    io = {"a": (m, k), "b": (k, n)}
    data = _build([helper.make_node("MatMul", ["a", "b"], ["y"])], io, {"y": (m, n)})
    return BenchModel("matmul", f"MatMul {m}x{k}x{n}", data, io, ["y"])


def mlp_model(layers: int = 3, width: int = 512, batch: int = 32, seed: int = 0) -> BenchModel:
    """(MatMul + Add + Relu) x layers on ``x`` [batch, width], seeded weights."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    cur = "x"
    for i in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        b = (rng.standard_normal((width,)) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("MatMul", [cur, f"w{i}"], [f"mm{i}"]))
        last = i == layers - 1
        nodes.append(helper.make_node("Add", [f"mm{i}", f"b{i}"], ["y" if last else f"pre{i}"]))
        if not last:
            nodes.append(helper.make_node("Relu", [f"pre{i}"], [f"h{i}"]))
            cur = f"h{i}"
    data = _build(nodes, {"x": (batch, width)}, {"y": (batch, width)}, inits)
    return BenchModel("mlp", f"MLP {layers}x{width} batch {batch}", data, {"x": (batch, width)},
                      ["y"])


def onnx_test_model(name: str = "squeezenet") -> BenchModel | None:
    """A real network from the onnx package's test data (``light_<name>.onnx``), or None when
    the installed onnx does not ship it."""
    try:
        import onnx
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                        f"light_{name}.onnx")
    if not os.path.exists(path):
        return None
    model = onnx.load(path)
    inits = {i.name for i in model.graph.initializer}
    inputs: dict[str, tuple[int, ...]] = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if tt.elem_type != onnx.TensorProto.FLOAT or not all(d.HasField("dim_value")
                                                             for d in tt.shape.dim):
            return None  # the C floor feeds fixed-shape float32 inputs only
        inputs[vi.name] = tuple(d.dim_value for d in tt.shape.dim)
    outputs = [vo.name for vo in model.graph.output]
    with open(path, "rb") as f:
        data = f.read()
    return BenchModel(name, f"{name} (onnx test data)", data, inputs, outputs, path=path)


def all_models(keys: list[str] | None = None) -> list[BenchModel]:
    """The benchmark's models, smallest first (``keys`` picks some: tiny, matmul, mlp,
    squeezenet)."""
    makers = {"tiny": add_model, "matmul": matmul_model, "mlp": mlp_model,
              "squeezenet": onnx_test_model}
    out = []
    for key in keys or list(makers):
        if key not in makers:
            raise ValueError(f"unknown model {key!r}; choose from {', '.join(makers)}")
        m = makers[key]()
        if m is not None:
            out.append(m)
    return out
