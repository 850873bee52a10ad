"""An onnxruntime application as people write them, run by tests/test_compat_run.py with plain
python (the real onnxruntime) and with ``python -m ortc.compat`` (stdout must be identical).

usage: ort_script.py MODEL.onnx [WORDS...]
"""

import sys

import numpy as np
import onnxruntime as ort
from onnxruntime.capi import _pybind_state as C
from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument


def show(value):
    if isinstance(value, np.ndarray):
        return f"{value.dtype} {value.shape} {value.tobytes().hex()}"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return repr(value)


def main():
    print("name", __name__, "argv", sys.argv[1:])
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(sys.argv[1], sess_options=opts,
                                providers=ort.get_available_providers())
    for arg in sess.get_inputs() + sess.get_outputs():
        print(arg.name, arg.type, arg.shape)
    print("version", ort.__version__ == ort.get_version_string(), ort.get_device())
    x = np.linspace(-1, 1, 3, dtype=np.float32)
    print("run", show(sess.run(None, {"a": x, "b": x * 3})))
    print("names", show(sess.run([sess.get_outputs()[0].name], {"a": [1.0, 2, 3], "b": x})))
    try:
        sess.run(None, {"a": x.astype(np.float64), "b": x})
    except InvalidArgument as err:
        print("error", type(err).__name__, err)
    try:
        sess.run(["nope"], {"a": x, "b": x})
    except C.InvalidArgument as err:
        print("error", type(err).__name__, err)
    binding = sess.io_binding()
    binding.bind_cpu_input("a", x)
    binding.bind_cpu_input("b", x)
    binding.bind_output("c")
    sess.run_with_iobinding(binding)
    print("bound", show(binding.copy_outputs_to_cpu()))
    print("words", " ".join(sys.argv[2:]).upper())


if __name__ == "__main__":
    main()
