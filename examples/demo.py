"""Build a small model, run it with ortc, print the outputs and what ortc loaded.

Run with `make demo` (it creates .venv and installs ortc with onnxruntime's library).
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import ortc


def build_model() -> bytes:
    """A two-layer MLP with a symbolic batch dimension and fixed weights."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((8, 3)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
        helper.make_node("ArgMax", ["probs"], ["label"], axis=-1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "demo_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"])],
        initializer=[w1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="ortc-demo")
    model.ir_version = 8
    return model.SerializeToString()


def main() -> None:
    print(ortc.version())
    with ortc.Session(build_model(), intra_op_num_threads=1) as session:
        for arg in session.inputs + session.outputs:
            print(f"  {arg.name}: {arg.type.type_str} {arg.shape}")
        x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
        probs, label = session.run(None, {"x": x})
        print("probs =\n", probs)
        print("label =", label)
        print("metadata:", session.metadata().producer_name)


if __name__ == "__main__":
    main()
