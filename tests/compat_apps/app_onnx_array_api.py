"""onnx-array-api, a numpy-like API whose tensors live in onnxruntime, used as its docs show: it
calls onnxruntime's C++ classes directly (``onnxruntime.capi._pybind_state``: an ``OrtDevice``
made as ``OrtDevice(OrtDevice.cpu(), OrtMemType.DEFAULT, 0)``, ``OrtValue.ortvalue_from_numpy(
array, device)``, the C++ session's ``run_with_ort_values`` over ``_outputs_meta``'s names),
evaluates its array API eagerly (each operation a model of its own in a session) and jitted
functions, reads ORT's optimized model back through ``optimized_model_filepath`` and parses the
profile ``end_profiling()`` writes. Run by tests/test_compat_apps.py under onnxruntime and under
``python -m ortc.compat``; the output must be identical."""

import hashlib

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx_array_api.array_api import onnx_ort as xp
from onnx_array_api.npx import absolute, eager_onnx, jit_onnx
from onnx_array_api.ort.ort_optimizers import ort_optimized_model
from onnx_array_api.ort.ort_profile import ort_profile
from onnx_array_api.ort.ort_tensors import EagerOrtTensor, JitOrtTensor, OrtTensor
from onnxruntime.capi._pybind_state import OrtValue as C_OrtValue


def show(v):
    v = np.asarray(v)
    digest = hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:16]
    return f"{v.dtype}{list(v.shape)}:{digest}:{v.ravel()[:3].tolist()!r}"


x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
t = OrtTensor.from_array(x)
print("tensor", t.shape, t.dtype, show(t.numpy()))

# the array API, each operation run eagerly in a session of its own
a = xp.asarray(x)
b = xp.asarray(np.ones((3, 4), np.float32))
ops = {"add": lambda: a + b, "mul": lambda: a * b, "abs": lambda: xp.abs(a),
       "sum": lambda: xp.sum(a), "reshape": lambda: xp.reshape(a, (4, 3)),
       "eye": lambda: xp.eye(3), "zeros": lambda: xp.zeros((2, 2)),
       "astype": lambda: xp.astype(a, xp.int64), "isnan": lambda: xp.isnan(a),
       "matmul": lambda: a @ xp.asarray(np.ones((4, 2), np.float32))}
for name, f in ops.items():
    r = f()
    print("xp", name, type(r).__name__, show(r.numpy()))


def l1_loss(x, y):
    return absolute(x - y).sum()


def l2_loss(x, y):
    return ((x - y) ** 2).sum()


for mode, wrap, cls in [("eager", eager_onnx, EagerOrtTensor), ("jit", jit_onnx, JitOrtTensor)]:
    l1 = wrap(l1_loss, cls, target_opsets={"": 17}, ir_version=8)
    l2 = wrap(l2_loss, cls, target_opsets={"": 17}, ir_version=8)
    for i in range(3):
        xx = cls(np.random.default_rng(i).standard_normal((5, 3)).astype(np.float32))
        yy = cls(np.random.default_rng(i + 10).standard_normal((5, 3)).astype(np.float32))
        print(mode, i, show(l1(xx, yy).numpy()), show(l2(xx, yy).numpy()))

# a small convolutional model: ORT's optimized graph read back, and its profile parsed
vi = helper.make_tensor_value_info
rng = np.random.default_rng(0)
model = helper.make_model(helper.make_graph(
    [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["r"]),
     helper.make_node("MaxPool", ["r"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
     helper.make_node("Flatten", ["m"], ["y"])], "conv",
    [vi("x", TensorProto.FLOAT, ["N", 3, 8, 8])], [vi("y", TensorProto.FLOAT, ["N", 64])],
    [onnx.numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W"),
     onnx.numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "B")]),
    opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
for level in ["ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED"]:
    optimized = ort_optimized_model(model, level=level)
    print("optimized", level, [n.op_type for n in optimized.graph.node])
feeds = {"x": rng.standard_normal((2, 3, 8, 8)).astype(np.float32)}
rows = ort_profile(model, feeds, repeat=3, as_df=False)
print("profile", sorted({r["cat"] for r in rows}),
      sorted({r["op_name"] for r in rows if r["cat"] == "Node" and "op_name" in r}))
cpu = OrtTensor.CPU  # OrtDevice(OrtDevice.cpu(), OrtMemType.DEFAULT, 0)
values = {"x": C_OrtValue.ortvalue_from_numpy(feeds["x"], cpu)}
rows = ort_profile(model, values, repeat=2, as_df=False, disable_optimization=True)
print("profile values", sorted({r["op_name"] for r in rows
                                if r["cat"] == "Node" and "op_name" in r}))
frame = ort_profile(model, feeds, repeat=2, agg=True)
print("frame", sorted(frame.columns.tolist())[:4], len(frame) > 0)
