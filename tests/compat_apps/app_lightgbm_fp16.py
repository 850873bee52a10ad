"""LightGBM models converted by onnxmltools, and a network converted to float16 by
onnxconverter-common, run with onnxruntime as those packages' docs show: a classifier (label
and probabilities) with the model's version, domain, description and custom metadata read
back through get_modelmeta, a regressor under SessionOptions knobs (one thread, optimizations
off, a session config entry) and a provider given with its options; a float16 model fed and
returning float16, the same with float32 inputs and outputs kept, and
auto_convert_mixed_precision, which builds and runs sessions of its own (some with outputs
that carry no type). The float16 model also runs through OrtValues (run_with_ort_values), an
IOBinding in its three forms, from several threads at once, and with RunOptions. Run by
tests/test_compat_apps.py under onnxruntime and under ``python -m ortc.compat``: the models
are trained the same way in both processes, and the output must be identical."""

import contextlib
import hashlib
import io
import threading

import lightgbm as lgb
import numpy as np
import onnx
import onnxruntime as rt
from onnx import TensorProto, helper, numpy_helper
from onnxconverter_common import float16
from onnxconverter_common.auto_mixed_precision import auto_convert_mixed_precision
from onnxmltools import convert_lightgbm
from onnxmltools.convert.common.data_types import FloatTensorType
from onnxmltools.utils import set_model_doc_string, set_model_domain, set_model_version
from sklearn.datasets import load_diabetes, load_iris


def show(v):
    digest = hashlib.sha256(v.tobytes()).hexdigest()[:16]
    return f"{v.dtype}{list(v.shape)}:{digest}:{v.ravel()[:4].tolist()!r}"


def describe(sess):
    for arg in sess.get_inputs() + sess.get_outputs():
        print(" ", arg.name, arg.type, arg.shape)


# a LightGBM classifier, with metadata
X, y = load_iris(return_X_y=True)
X = X.astype(np.float32)
clf = lgb.LGBMClassifier(n_estimators=12, num_leaves=7, min_child_samples=5, verbose=-1,
                         random_state=0).fit(X[::2], y[::2])
onx = convert_lightgbm(clf, initial_types=[("input", FloatTensorType([None, 4]))], zipmap=False)
set_model_version(onx, 7)
set_model_domain(onx, "test.lightgbm")
set_model_doc_string(onx, "iris classifier")
onnx.helper.set_model_props(onx, {"classes": "setosa,versicolor,virginica", "rows": "75"})
sess = rt.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
meta = sess.get_modelmeta()
print("meta", meta.producer_name, meta.domain, meta.version, meta.description,
      sorted(meta.custom_metadata_map.items()))
describe(sess)
label, proba = sess.run(None, {"input": X[1::2]})
print("classifier", show(label), show(proba))
print("labels", repr(label[::6]))

# a LightGBM regressor under session options, the provider with its options
Xd, yd = load_diabetes(return_X_y=True)
Xd = Xd.astype(np.float32)
reg = lgb.LGBMRegressor(n_estimators=20, num_leaves=15, verbose=-1, random_state=0)
reg.fit(Xd[:300], yd[:300])
so = rt.SessionOptions()
so.intra_op_num_threads = 1
so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
so.add_session_config_entry("session.intra_op.allow_spinning", "0")
onx = convert_lightgbm(reg, initial_types=[("X", FloatTensorType([None, 10]))])
sess = rt.InferenceSession(onx.SerializeToString(), so, providers=[
    ("CPUExecutionProvider", {"arena_extend_strategy": "kSameAsRequested"})])
print("providers", sess.get_providers(), sess.get_provider_options())
print("regressor", show(sess.run(None, {"X": Xd[300:]})[0]))

# a small network from the regressor's data, then float16
rng = np.random.default_rng(0)
w1, b1 = rng.normal(0, 0.3, (10, 16)), rng.normal(0, 0.1, 16)
w2, b2 = rng.normal(0, 0.3, (16, 3)), rng.normal(0, 0.1, 3)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W1"], ["h0"]), helper.make_node("Add", ["h0", "B1"], ["h1"]),
     helper.make_node("Relu", ["h1"], ["h2"]), helper.make_node("MatMul", ["h2", "W2"], ["o0"]),
     helper.make_node("Add", ["o0", "B2"], ["o1"]), helper.make_node("Softmax", ["o1"], ["Y"])],
    "mlp", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 10])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 3])],
    [numpy_helper.from_array(a.astype(np.float32), n)
     for a, n in ((w1, "W1"), (b1, "B1"), (w2, "W2"), (b2, "B2"))])
m32 = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
x32 = Xd[300:] * 20
x16 = x32.astype(np.float16)
sess = rt.InferenceSession(m32.SerializeToString(), providers=["CPUExecutionProvider"])
print("fp32", show(sess.run(None, {"X": x32})[0]))

sess = rt.InferenceSession(float16.convert_float_to_float16(m32).SerializeToString(),
                           providers=["CPUExecutionProvider"])
describe(sess)
ref = sess.run(None, {"X": x16})[0]
print("fp16", show(ref))
kept = float16.convert_float_to_float16(m32, keep_io_types=True)
print("fp16 io32", show(rt.InferenceSession(kept.SerializeToString(),
                                            providers=["CPUExecutionProvider"]).run(
    None, {"X": x32})[0]))
with contextlib.redirect_stdout(io.StringIO()):  # it prints its progress
    amp = auto_convert_mixed_precision(m32, {"X": x32[:10]}, rtol=0.01, atol=0.001,
                                       keep_io_types=True)
print("amp", [n.op_type for n in amp.graph.node])
print("amp", show(rt.InferenceSession(amp.SerializeToString(),
                                      providers=["CPUExecutionProvider"]).run(
    None, {"X": x32})[0]))

# the float16 model through OrtValues and IOBinding
value = rt.OrtValue.ortvalue_from_numpy(x16)
print("ortvalue", value.data_type(), value.shape(), value.device_name())
[out] = sess.run_with_ort_values(["Y"], {"X": value})
print("ortvalue", out.data_type(), out.shape(), np.array_equal(out.numpy(), ref))
binding = sess.io_binding()
binding.bind_cpu_input("X", x16)
binding.bind_output("Y")
sess.run_with_iobinding(binding)
print("binding", np.array_equal(binding.copy_outputs_to_cpu()[0], ref),
      binding.get_outputs()[0].data_type())
target = rt.OrtValue.ortvalue_from_shape_and_type(list(ref.shape), np.float16)
binding = sess.io_binding()
binding.bind_ortvalue_input("X", value)
binding.bind_ortvalue_output("Y", target)
sess.run_with_iobinding(binding)
print("binding ortvalues", np.array_equal(target.numpy(), ref))
buffer = np.empty(ref.shape, np.float16)
binding = sess.io_binding()
binding.bind_input("X", "cpu", 0, np.float16, list(x16.shape), x16.ctypes.data)
binding.bind_output("Y", "cpu", 0, np.float16, list(buffer.shape), buffer.ctypes.data)
sess.run_with_iobinding(binding)
print("binding pointers", np.array_equal(buffer, ref))

# several threads on the one session, and run options
results = {}


def work(i):
    results[i] = sess.run(None, {"X": x16 * np.float16(1 + i / 8)})[0]


threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads", [hashlib.sha256(results[i].tobytes()).hexdigest()[:12] for i in range(6)])
options = rt.RunOptions()
options.log_severity_level = 3
options.logid = "fp16"
print("run options", np.array_equal(sess.run(["Y"], {"X": x16}, options)[0], ref))
try:
    sess.run(None, {"X": x32})
except Exception as err:  # noqa: BLE001 - the error is part of the output compared
    print("float32 fed", type(err).__name__, err)
