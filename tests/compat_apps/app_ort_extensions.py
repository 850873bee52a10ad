"""onnxruntime-extensions (Microsoft's custom-operator library for ONNX Runtime), used as its
docs show: its C++ string and tokenizer operators called one at a time through OrtPyFunction,
a model mixing them with Python operators (``@onnx_op``: ORT calls back into Python for them),
and the same model in an InferenceSession whose SessionOptions load the library with
``register_custom_ops_library``, several sessions sharing those options. String tensors in
and out, bool, int64 and double tensors, and empty inputs. Run by tests/test_compat_apps.py
under onnxruntime and under ``python -m ortc.compat``."""

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper
from onnxruntime_extensions import OrtPyFunction, PyCustomOpDef, get_library_path, onnx_op


def show(res):
    res = res if isinstance(res, (tuple, list)) else (res,)
    return " | ".join(f"{r.dtype.str}{list(r.shape)}:{r.tolist()!r}" for r in res)


# the library's own operators, one at a time
VOCAB = "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick", "brown", "fox",
                   "##es", "jump", "##ed", "over", "lazy", "dog", ".", ","]) + "\n"
CASES = [
    ("StringECMARegexReplace", {},
     [np.array(["a1b22c333", "no digits", ""]), np.array(["[0-9]+"]), np.array(["#"])]),
    ("StringMapping", {"map": {"a": "alpha", "b": "beta"}}, [np.array(["a", "b", "c"])]),
    ("MaskedFill", {}, [np.array(["x", "y", "z", "w"]), np.array([True, False, True, False])]),
    ("StringToVector", {"map": {"a": [1, 2], "b": [3, 4]}, "unk": [-1, -1]},
     [np.array(["a", "q", "b"])]),
    ("VectorToString", {"map": {"a": [1, 2], "b": [3, 4]}, "unk": "<unk>"},
     [np.array([[3, 4], [1, 2], [9, 9]], np.int64)]),
    ("BertTokenizer", {"vocab": VOCAB, "do_lower_case": 1},
     [np.array(["The quick brown foxes jumped over the lazy dog."])]),
    ("BertTokenizer", {"vocab": VOCAB, "do_lower_case": 1}, [np.array(["Quick, quick fox"])]),
    ("Inverse", {}, [np.array([[4.0, 7.0], [2.0, 6.0]], np.float32)]),
]
for op, attrs, args in CASES:
    print(op, show(OrtPyFunction.from_customop(op, **attrs)(*args)))


# Python operators, run by ORT through the library's callback
@onnx_op(op_type="ReverseWords", inputs=[PyCustomOpDef.dt_string],
         outputs=[PyCustomOpDef.dt_string])
def reverse_words(x):
    return np.array([" ".join(s.split()[::-1]) for s in x.ravel()], dtype=object).reshape(x.shape)


@onnx_op(op_type="Summary", inputs=[PyCustomOpDef.dt_int64, PyCustomOpDef.dt_string],
         outputs=[PyCustomOpDef.dt_int64, PyCustomOpDef.dt_string, PyCustomOpDef.dt_bool,
                  PyCustomOpDef.dt_double],
         attrs={"sep": PyCustomOpDef.dt_string, "n": PyCustomOpDef.dt_int64})
def summary(ids, words, **kwargs):
    return (ids * kwargs["n"], np.array([kwargs["sep"].join(words.tolist())]), ids > 1,
            (ids / 3.0).astype(np.float64))


def model():
    contrib = "ai.onnx.contrib"
    graph = helper.make_graph(
        [helper.make_node("ReverseWords", ["text"], ["reversed"], domain=contrib),
         helper.make_node("StringUpper", ["reversed"], ["upper"], domain=contrib),
         helper.make_node("StringLength", ["upper"], ["length"], domain=contrib),
         helper.make_node("Summary", ["ids", "words"], ["scaled", "joined", "big", "third"],
                          domain=contrib, sep="-", n=5)],
        "extensions_app",
        [helper.make_tensor_value_info("text", TensorProto.STRING, [None, None]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [None]),
         helper.make_tensor_value_info("words", TensorProto.STRING, [None])],
        [helper.make_tensor_value_info("upper", TensorProto.STRING, [None, None]),
         helper.make_tensor_value_info("length", TensorProto.INT64, [None, None]),
         helper.make_tensor_value_info("scaled", TensorProto.INT64, [None]),
         helper.make_tensor_value_info("joined", TensorProto.STRING, [None]),
         helper.make_tensor_value_info("big", TensorProto.BOOL, [None]),
         helper.make_tensor_value_info("third", TensorProto.DOUBLE, [None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(contrib, 1)])


FEEDS = [
    {"text": np.array([["one two three", "x y"], ["héllo wörld", ""]]),
     "ids": np.array([1, 2, 3]), "words": np.array(["x", "yy", "zzz"])},
    {"text": np.array([["a b c d"]], dtype=object), "ids": np.zeros(0, np.int64),
     "words": np.array([], dtype=object)},
]
function = OrtPyFunction.from_model(model())
print("function", function.input_names, function.output_names)
for feeds in FEEDS:
    print("function", show(function(*feeds.values())))

so = ort.SessionOptions()
so.register_custom_ops_library(get_library_path())
sessions = [ort.InferenceSession(model().SerializeToString(), so,
                                 providers=["CPUExecutionProvider"]) for _ in range(2)]
for arg in sessions[0].get_inputs() + sessions[0].get_outputs():
    print(" ", arg.name, arg.type, arg.shape)
for sess in sessions:
    for feeds in FEEDS:
        print("session", show(sess.run(None, feeds)))
    print("session", show(sess.run(["joined", "length"], {**FEEDS[0], "text": [["p q"]]})))
print("outputs", [repr(a) for a in sessions[0].run(["length", "scaled"], FEEDS[0])])

# without the library the contrib operators are unknown
try:
    ort.InferenceSession(model().SerializeToString(), providers=["CPUExecutionProvider"])
except Exception as err:  # noqa: BLE001 - the error is part of the output compared
    print("no library", type(err).__name__, str(err).splitlines()[0])
