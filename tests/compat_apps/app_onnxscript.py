"""onnxscript, an authoring library whose programs run through onnxruntime, used as its docs
show: functions written in its Python subset are evaluated eagerly (each ONNX operator they call
becomes a one-node model run in its own onnxruntime InferenceSession, control flow included),
then turned into a model (to_model_proto), which an InferenceSession runs; the model is also
optimized by onnxscript's optimizer and rewritten by its onnxruntime fusions, and run again.
Run by tests/test_compat_apps.py under onnxruntime and under ``python -m ortc.compat``; the
output must be identical."""

import hashlib

import numpy as np
import onnxruntime as rt
from onnxscript import FLOAT, INT64, ir, optimizer, script
from onnxscript import opset18 as op
from onnxscript.rewriter.ort_fusions import optimize_for_ort


def show(v):
    v = np.asarray(v)
    digest = hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:16]
    return f"{v.dtype}{list(v.shape)}:{digest}:{v.ravel()[:3].tolist()!r}"


@script()
def gelu(x: FLOAT[...]) -> FLOAT[...]:
    cubic = op.Constant(value_float=0.044715) * x * x * x
    inner = op.Constant(value_float=0.7978845608) * (x + cubic)
    return op.Constant(value_float=0.5) * x * (op.Constant(value_float=1.0) + op.Tanh(inner))


@script()
def layer_norm(x: FLOAT["N", "D"], scale: FLOAT["D"], bias: FLOAT["D"]) -> FLOAT["N", "D"]:
    mean = op.ReduceMean(x, op.Constant(value_ints=[-1]), keepdims=1)
    centered = x - mean
    var = op.ReduceMean(centered * centered, op.Constant(value_ints=[-1]), keepdims=1)
    return centered / op.Sqrt(var + op.Constant(value_float=1e-5)) * scale + bias


@script()
def attention(q: FLOAT["N", "D"], k: FLOAT["N", "D"], v: FLOAT["N", "D"]) -> FLOAT["N", "D"]:
    scores = op.MatMul(q, op.Transpose(k, perm=[1, 0])) * op.Constant(value_float=0.25)
    return op.MatMul(op.Softmax(scores, axis=-1), v)


@script()
def clipped_steps(x: FLOAT["N"], steps: INT64) -> FLOAT["N"]:
    # a loop and a branch: in eager mode Python runs them, each op a session
    y = x
    for i in range(steps):
        y = y * op.Constant(value_float=1.5) - op.Constant(value_float=0.25)
        if op.ReduceMax(y, keepdims=0) > op.Constant(value_float=4.0):
            y = op.Clip(y, op.Constant(value_float=-4.0), op.Constant(value_float=4.0))
    return y


@script()
def block(x: FLOAT["N", 16], wq: FLOAT[16, 16], wk: FLOAT[16, 16], wv: FLOAT[16, 16],
          w1: FLOAT[16, 32], w2: FLOAT[32, 16], scale: FLOAT[16],
          bias: FLOAT[16]) -> FLOAT["N", 16]:
    h = layer_norm(x, scale, bias)
    a = x + attention(op.MatMul(h, wq), op.MatMul(h, wk), op.MatMul(h, wv))
    return a + op.MatMul(gelu(op.MatMul(layer_norm(a, scale, bias), w1)), w2)


rng = np.random.default_rng(0)
x = rng.standard_normal((6, 16)).astype(np.float32)
weights = {
    "wq": rng.normal(0, 0.3, (16, 16)), "wk": rng.normal(0, 0.3, (16, 16)),
    "wv": rng.normal(0, 0.3, (16, 16)), "w1": rng.normal(0, 0.3, (16, 32)),
    "w2": rng.normal(0, 0.3, (32, 16)), "scale": 1 + rng.normal(0, 0.1, 16),
    "bias": rng.normal(0, 0.1, 16)}
weights = {k: v.astype(np.float32) for k, v in weights.items()}

# eager: every operator through its own onnxruntime session
print("gelu", show(gelu(x)))
print("layer_norm", show(layer_norm(x, weights["scale"], weights["bias"])))
print("attention", show(attention(x, x[::-1].copy(), x * 2)))
print("steps", show(clipped_steps(x[0], 4)), show(clipped_steps(x[1] * 0.1, 2)))
eager = block(x, **weights)
print("block eager", show(eager))

# the same function as a model, run in one session
model = block.to_model_proto()
print("model", [n.op_type for n in model.graph.node],
      [f.name for f in model.functions])
sess = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
print("inputs", [(i.name, i.type, i.shape) for i in sess.get_inputs()])
[out] = sess.run(None, {"x": x, **weights})
print("block model", show(out), np.array_equal(out, eager),
      bool(np.allclose(out, eager, atol=1e-5)))

# onnxscript's optimizer inlines the functions; its ORT fusions rewrite for onnxruntime
optimized = optimizer.optimize(model)
print("optimized", [n.op_type for n in optimized.graph.node])
sess = rt.InferenceSession(optimized.SerializeToString(), providers=["CPUExecutionProvider"])
print("block optimized", show(sess.run(None, {"x": x, **weights})[0]))
fused_ir = ir.serde.deserialize_model(optimized)
optimize_for_ort(fused_ir)
fused = ir.serde.serialize_model(fused_ir)
print("fused", sorted({n.op_type for n in fused.graph.node}))
sess = rt.InferenceSession(fused.SerializeToString(), providers=["CPUExecutionProvider"])
print("block fused", show(sess.run(None, {"x": x, **weights})[0]))

# a bad eager call: onnxscript turns onnxruntime's error into its own
try:
    attention(x, x[:, :8].copy(), x)
except Exception as err:  # noqa: BLE001 - the error is part of the output compared
    print("eager error", type(err).__name__, str(err).splitlines()[0])
    print("cause", type(err.__cause__).__module__, type(err.__cause__).__name__, err.__cause__)
