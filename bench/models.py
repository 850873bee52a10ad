"""The benchmark's models, built in-process with ``onnx.helper`` (nothing is downloaded), and
real networks from the onnx package's test data.

Inputs have fixed shapes. Models whose inputs are all float32 are also fed by the C floor
(bench/floor.c); the others (the streaming and the mixed-dtype model) are compared with
onnxruntime only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

OPSET = 21
IR_VERSION = 10

Array = np.ndarray[Any, Any]


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
    #: numpy dtype of each input and output, by name (float32 when not listed)
    dtypes: dict[str, str] = field(default_factory=dict)
    #: how to make an input that random floats do not suit (indices, a sample rate), by name
    makers: dict[str, Callable[[np.random.Generator], Array]] = field(default_factory=dict)
    #: a streaming model: this output is fed back as this input on the next call
    feedback: dict[str, str] = field(default_factory=dict)
    #: one line saying what the row measures, shown with its table
    note: str = ""
    #: a model called with shapes that change from call to call: one call's input shapes (the
    #: ``inputs`` above are then the largest, for sizing the pool)
    shapes: Callable[[np.random.Generator], dict[str, tuple[int, ...]]] | None = None

    def dtype(self, name: str) -> np.dtype[Any]:
        return np.dtype(self.dtypes.get(name, "float32"))

    @property
    def floor_feeds(self) -> bool:
        """Whether the C floor can feed it (float32 inputs only, no state carried between
        calls)."""
        return not self.feedback and self.shapes is None and \
            all(self.dtype(n) == np.float32 for n in self.inputs)

    def input_bytes(self) -> int:
        return sum(int(np.prod(s)) * self.dtype(n).itemsize for n, s in self.inputs.items())

    def feeds(self, seed: int = 0) -> dict[str, Array]:
        """A fresh set of input arrays (new objects every call)."""
        rng = np.random.default_rng(seed)
        out: dict[str, Array] = {}
        shapes = self.inputs if self.shapes is None else self.shapes(rng)
        for name, shape in shapes.items():
            make = self.makers.get(name)
            dt = self.dtype(name)
            if make is not None:
                out[name] = make(rng)
            elif dt == np.bool_:
                out[name] = rng.random(shape) < 0.5
            elif dt.kind in "iu":
                out[name] = rng.integers(0, 100, shape).astype(dt)
            else:
                out[name] = rng.random(shape, dtype=np.float32).astype(dt, copy=False)
        return out


def _build(nodes: list[Any], inputs: Mapping[str, tuple[int, ...]],
           outputs: Mapping[str, tuple[int, ...]], initializers: Sequence[Any] = ()) -> bytes:
    return _build_typed(nodes, {n: (s, "float32") for n, s in inputs.items()},
                        {n: (s, "float32") for n, s in outputs.items()}, initializers)


def _build_typed(nodes: list[Any], inputs: Mapping[str, tuple[Any, str]],
                 outputs: Mapping[str, tuple[Any, str]], initializers: Sequence[Any] = ()
                 ) -> bytes:
    """A model from its nodes; inputs and outputs as name -> (shape, numpy dtype name), a
    shape's dims ints or symbolic names."""
    import onnx
    from onnx import helper

    def info(name: str, shape: Any, dtype: str) -> Any:
        elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        return helper.make_tensor_value_info(name, elem, list(shape))

    graph = helper.make_graph(
        nodes, "bench", [info(n, s, d) for n, (s, d) in inputs.items()],
        [info(n, s, d) for n, (s, d) in outputs.items()], list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=IR_VERSION)
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def add_model(shape: tuple[int, ...] = (1,)) -> BenchModel:
    """``c = a + b`` on ``shape``: the binding's own cost dominates."""
    from onnx import helper

    io = {"a": shape, "b": shape}
    data = _build([helper.make_node("Add", ["a", "b"], ["c"])], io, {"c": shape})
    dims = "x".join(map(str, shape))
    return BenchModel("tiny", f"Add [{dims}]", data, io, ["c"])


def tiny_bound_session(**options: Any) -> tuple[Any, dict[str, Array], Any]:
    """An ortc session of :func:`add_model` (``options`` as Session keywords), feeds of one
    array for both inputs, and an IoBinding with both inputs and the output bound once: the
    smallest run and bound run, for the scripts that time what ortc adds to them."""
    import ortc

    sess = ortc.Session(add_model().model, **options)
    a = np.ones(1, np.float32)
    binding = sess.io_binding()
    binding.bind_input("a", a)
    binding.bind_input("b", a)
    binding.bind_output("c", np.empty(1, np.float32))
    return sess, {"a": a, "b": a}, binding


def matmul_model(m: int = 64, k: int = 256, n: int = 256) -> BenchModel:
    """``y = a @ b`` with both operands as inputs."""
    from onnx import helper

    io: dict[str, tuple[int, ...]] = {"a": (m, k), "b": (k, n)}
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


def vad_model(hidden: int = 384, seed: int = 0) -> BenchModel:
    """A streaming voice-activity-like model, called once per audio frame with its recurrent
    state fed back: ``input`` float32 [1, 512] (one frame), ``state`` float32 [2, 1, 128]
    (h and c of an LSTM-like cell), ``sr`` int64 scalar (sample rate); outputs ``output``
    [batch, 1] (a speech probability) and ``stateN`` [2, batch, 128].

    frame * (sr / 16000) -> MatMul -> Relu -> MatMul -> Relu -> concat with h -> MatMul ->
    sigmoid/tanh gates -> new c and h -> MatMul -> Sigmoid. The outputs' first dim is reshaped
    with a size computed from ``sr`` at run time (sr / sr: 1), which shape inference cannot
    see through, as the sample-rate branch of a real VAD model hides its output shapes: ORT
    learns the output shapes only during the run, allocates the outputs itself, and the
    binding converts them.
    """
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)

    def weight(name: str, rows: int, cols: int) -> Any:
        w = (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32)
        return numpy_helper.from_array(w, name)

    def const(name: str, value: Any, dtype: Any) -> Any:
        return numpy_helper.from_array(np.array(value, dtype=dtype), name)

    inits = [weight("w1", 512, hidden), weight("w2", hidden, hidden),
             weight("wg", hidden + 128, 512), weight("wo", 128, 1),
             const("bg", np.zeros(512), np.float32), const("sr_ref", [16000.0], np.float32),
             const("hshape", [1, 128], np.int64), const("gsplit", [128] * 4, np.int64),
             const("axis0", [0], np.int64), const("hidden128", [128], np.int64)]
    N = helper.make_node
    nodes = [
        N("Cast", ["sr"], ["srf"], to=TensorProto.FLOAT), N("Div", ["srf", "sr_ref"], ["scale"]),
        N("Mul", ["input", "scale"], ["x"]),
        N("MatMul", ["x", "w1"], ["m1"]), N("Relu", ["m1"], ["a1"]),
        N("MatMul", ["a1", "w2"], ["m2"]), N("Relu", ["m2"], ["a2"]),
        N("Split", ["state"], ["s_h", "s_c"], axis=0, num_outputs=2),
        N("Reshape", ["s_h", "hshape"], ["h_prev"]), N("Reshape", ["s_c", "hshape"], ["c_prev"]),
        N("Concat", ["a2", "h_prev"], ["z"], axis=1),
        N("MatMul", ["z", "wg"], ["gm"]), N("Add", ["gm", "bg"], ["gates"]),
        N("Split", ["gates", "gsplit"], ["g_i", "g_f", "g_g", "g_o"], axis=1),
        N("Sigmoid", ["g_i"], ["i"]), N("Sigmoid", ["g_f"], ["f"]), N("Tanh", ["g_g"], ["g"]),
        N("Sigmoid", ["g_o"], ["o"]),
        N("Mul", ["f", "c_prev"], ["fc"]), N("Mul", ["i", "g"], ["ig"]),
        N("Add", ["fc", "ig"], ["c_new"]), N("Tanh", ["c_new"], ["tc"]),
        N("Mul", ["o", "tc"], ["h_new"]),
        # [batch, 128] with batch = sr / sr, known only at run time
        N("Div", ["sr", "sr"], ["batch"]), N("Unsqueeze", ["batch", "axis0"], ["batch1"]),
        N("Concat", ["batch1", "hidden128"], ["bshape"], axis=0),
        N("Reshape", ["h_new", "bshape"], ["h"]), N("Reshape", ["c_new", "bshape"], ["c"]),
        N("Unsqueeze", ["h", "axis0"], ["h3"]), N("Unsqueeze", ["c", "axis0"], ["c3"]),
        N("Concat", ["h3", "c3"], ["stateN"], axis=0),
        N("MatMul", ["h", "wo"], ["logit"]), N("Sigmoid", ["logit"], ["output"]),
    ]
    inputs = {"input": ((1, 512), "float32"), "state": ((2, 1, 128), "float32"),
              "sr": ((), "int64")}
    outputs = {"output": (("batch", 1), "float32"), "stateN": ((2, "batch", 128), "float32")}
    data = _build_typed(nodes, inputs, outputs, inits)
    return BenchModel(
        "vad", "VAD-like stream (frame [1,512], state fed back)", data,
        {n: s for n, (s, _) in inputs.items()}, list(outputs),
        dtypes={"sr": "int64"},
        makers={"sr": lambda rng: np.array(16000, dtype=np.int64),
                "input": lambda rng: rng.standard_normal((1, 512)).astype(np.float32),
                "state": lambda rng: np.zeros((2, 1, 128), dtype=np.float32)},
        feedback={"stateN": "state"},
        note="run() once per frame: a fresh frame and sr array each call, the state fed back "
             "from the previous call's stateN; outputs have no static shape (ORT allocates them)")


def mixed_model(rows: int = 8, cols: int = 32) -> BenchModel:
    """Small tensors of several dtypes in and out:

    ``x`` float32, ``h`` float16, ``mask`` bool [rows, cols], ``idx`` int64 [rows] ->
    ``y`` float32 = where(mask, x, h), ``z`` float16 = h + x, ``count`` int32 = mask's row
    sums, ``pick`` int64 = argmax(y, 1) + idx.
    """
    from onnx import TensorProto, helper, numpy_helper

    N = helper.make_node
    nodes = [
        N("Cast", ["h"], ["h32"], to=TensorProto.FLOAT),
        N("Where", ["mask", "x", "h32"], ["y"]),
        N("Cast", ["x"], ["x16"], to=TensorProto.FLOAT16), N("Add", ["h", "x16"], ["z"]),
        N("Cast", ["mask"], ["mask32"], to=TensorProto.INT32),
        N("ReduceSum", ["mask32", "axis1"], ["count"], keepdims=0),
        N("ArgMax", ["y"], ["best"], axis=1, keepdims=0), N("Add", ["best", "idx"], ["pick"]),
    ]
    inputs = {"x": ((rows, cols), "float32"), "h": ((rows, cols), "float16"),
              "mask": ((rows, cols), "bool"), "idx": ((rows,), "int64")}
    outputs = {"y": ((rows, cols), "float32"), "z": ((rows, cols), "float16"),
               "count": ((rows,), "int32"), "pick": ((rows,), "int64")}
    data = _build_typed(nodes, inputs, outputs,
                        [numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1")])
    dtypes = {n: d for n, (_, d) in list(inputs.items()) + list(outputs.items())}
    return BenchModel("mixed", f"mixed dtypes [{rows}x{cols}] (f32, f16, bool, i64 -> "
                      f"f32, f16, i32, i64)", data, {n: s for n, (s, _) in inputs.items()},
                      list(outputs), dtypes=dtypes,
                      note="4 inputs and 4 outputs of five dtypes, small tensors, run()")


def batch_model(width: int = 16, hidden: int = 32, max_batch: int = 32,
                seed: int = 0) -> BenchModel:
    """A small dense model called with a batch size that changes from call to call (requests
    batched as they arrive): ``x`` float32 [batch, width] -> MatMul -> Relu -> MatMul ->
    ``y`` [batch, 4]; each call's batch size is drawn from 1..max_batch. The output's shape
    follows from the input's (the symbol ``batch``), so a binding can allocate it before the
    run, but no two calls in a row need to have the same shapes."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(seed)
    w1 = numpy_helper.from_array(rng.standard_normal((width, hidden)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((hidden, 4)).astype(np.float32), "w2")
    N = helper.make_node
    nodes = [N("MatMul", ["x", "w1"], ["h"]), N("Relu", ["h"], ["r"]),
             N("MatMul", ["r", "w2"], ["y"])]
    data = _build(nodes, {"x": ("batch", width)}, {"y": ("batch", 4)},  # type: ignore[dict-item]
                  [w1, w2])
    return BenchModel(
        "batch", f"batch changing per call [1..{max_batch}x{width}]", data,
        {"x": (max_batch, width)}, ["y"],
        shapes=lambda r: {"x": (int(r.integers(1, max_batch + 1)), width)},
        note=f"2-layer MLP, x [batch, {width}] with the batch size drawn from 1..{max_batch} "
             f"for every call (the pool's inputs), run()")


#: the onnx package's test networks the bench runs (each loads in both bindings and runs in a
#: few ms on one thread); light_resnet50 and the others there take 25-250 ms a call
ONNX_TEST_MODELS = ("squeezenet", "shufflenet")


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
    return BenchModel(name, f"{name} (onnx test data)", data, inputs, outputs, path=path,
                      note=f"light_{name}.onnx from the onnx package, its own input shape, run()")


def silero_model() -> BenchModel | None:
    """Silero VAD v6 as faster-whisper ships it (an asset of its wheel: the apps extra), streamed
    as a live-audio application calls it, or None when faster-whisper is not installed. The
    package is located, not imported (its import loads ctranslate2 and av into the bench).

    ``input`` float32 [1, 576] (a 512-sample frame after 64 samples of context), ``h`` and
    ``c`` float32 [1, 1, 128] (the recurrent state); outputs ``speech_probs`` (its shape not
    static), ``hn`` and ``cn``, fed back as the next call's ``h`` and ``c``.
    """
    import importlib.util

    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "assets", "silero_vad_v6.onnx")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        data = f.read()
    return BenchModel(
        "silero", "Silero VAD v6 stream (faster-whisper's model)", data,
        {"input": (1, 576), "h": (1, 1, 128), "c": (1, 1, 128)}, ["speech_probs", "hn", "cn"],
        path=path,
        makers={"input": lambda rng: (0.1 * rng.standard_normal((1, 576))).astype(np.float32),
                "h": lambda rng: np.zeros((1, 1, 128), dtype=np.float32),
                "c": lambda rng: np.zeros((1, 1, 128), dtype=np.float32)},
        feedback={"hn": "h", "cn": "c"},
        note="the real model of the VAD-like row's kind: run() once per frame, a fresh frame "
             "each call, h and c fed back from the previous call (faster_whisper/assets)")


def all_models(keys: list[str] | None = None) -> list[BenchModel]:
    """The benchmark's models, smallest first (``keys`` picks some, by the names in MODEL_KEYS).
    A test network the installed onnx does not ship is left out, as is the Silero model
    without faster-whisper."""
    makers: dict[str, Callable[[], BenchModel | None]] = {
        "tiny": add_model, "mixed": mixed_model, "batch": batch_model, "matmul": matmul_model,
        "vad": vad_model, "silero": silero_model, "mlp": mlp_model}
    for name in ONNX_TEST_MODELS:
        makers[name] = lambda name=name: onnx_test_model(name)  # type: ignore[misc]
    out = []
    for key in keys or list(makers):
        if key not in makers:
            raise ValueError(f"unknown model {key!r}; choose from {', '.join(makers)}")
        m = makers[key]()
        if m is not None:
            out.append(m)
    return out


#: every model key --models accepts, in the order the bench runs them
MODEL_KEYS = ("tiny", "mixed", "batch", "matmul", "vad", "silero", "mlp") + ONNX_TEST_MODELS
