"""onnx-asr's Whisper recognizer (the class it uses for Whisper models exported by Hugging Face's
optimum: an encoder and a merged decoder with a key/value cache) over a tiny Whisper-shaped
transformer built here with onnx.helper and saved as the files onnx-asr expects
(encoder_model.onnx, decoder_model_merged.onnx, config.json, vocab.json, added_tokens.json):
a strided-convolution front end, two encoder layers (self-attention and MLP), two decoder layers
(causal self-attention with a cache, cross-attention, MLP), logits from an output projection.
The weights are random, seeded; a bias that grows with the position on the end-of-text logit
makes every transcript end within a few dozen tokens.

onnx-asr drives the sessions through IOBinding, made anew for each call: the encoder's
features bound as an OrtValue and its output bound by name to the session's device and kept as
an OrtValue, which the decoder gets bound (bind_ortvalue_input) at every step; the decoder's
tokens and cache flag bound from numpy (bind_cpu_input), its cache bound in as the previous
step's output OrtValues and out by name; OrtValue.numpy on the logits. Audio goes in as arrays,
as a batch of two, as a WAV file and at 22.05 kHz (onnx-asr's resampler, an ONNX model from its
wheel, run by its own session). Run by tests/test_compat_apps.py under onnxruntime and under
``python -m ortc.compat``; the output must be identical."""

import hashlib
import json
import pathlib
import tempfile
import wave

import numpy as np
import onnx
import onnx_asr
import onnxruntime as rt
from onnx import TensorProto, helper, numpy_helper
from onnx_asr.preprocessors.preprocessor import ConcurrentPreprocessor, OnnxPreprocessor

D, HEADS, MLP, LAYERS, FRAMES, STRIDE, MAX_POS = 32, 4, 64, 2, 3000, 10, 448
HEAD = D // HEADS
CTX = FRAMES // STRIDE
WORDS = ["Ġthe", "Ġcat", "Ġsat", "Ġon", "Ġa", "Ġmat", "Ġand", "Ġdog", "Ġran", "Ġhome", "s", "ed",
         "ing", ".", ",", "!", "Ġhello", "Ġworld", "Ġonnx", "Ġruntime", "Ġtiny", "Ġmodel", "er",
         "Ġ", "Ġwh", "isper", "Ġspeech", "Ġtext", "Ġfast", "Ġslow", "Ġcaf\u00c3\u00a9", "Ġ42"]
SPECIAL = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|de|>", "<|fr|>", "<|transcribe|>",
           "<|translate|>", "<|notimestamps|>"]
VOCAB = len(WORDS) + len(SPECIAL)
EOS = len(WORDS)
rng = np.random.default_rng(7)


class Graph:
    """Nodes and initializers of one (sub)graph; value names carry the graph's prefix so the
    two branches of the decoder's If never share one."""

    def __init__(self, prefix, weights):
        self.prefix, self.nodes, self.weights, self.count = prefix, [], weights, 0

    def __call__(self, op, *inputs, outputs=1, **attrs):
        names = [f"{self.prefix}{op.lower()}_{self.count}_{i}" for i in range(outputs)]
        self.count += 1
        self.nodes.append(helper.make_node(op, list(inputs), names, **attrs))
        return names[0] if outputs == 1 else names

    def const(self, name, value, dtype=np.float32):
        if name not in self.weights:
            self.weights[name] = numpy_helper.from_array(np.asarray(value, dtype), name)
        return name

    def param(self, name, shape, scale):
        return self.const(name, rng.normal(0, scale, shape))

    def linear(self, x, name, n_in, n_out):
        w = self.param(f"{name}.w", (n_in, n_out), n_in ** -0.5)
        return self("Add", self("MatMul", x, w), self.param(f"{name}.b", (n_out,), 0.02))

    def norm(self, x, name):
        return self("LayerNormalization", x, self.const(f"{name}.g", np.ones(D)),
                    self.const(f"{name}.beta", np.zeros(D)), axis=-1, epsilon=1e-5)

    def heads(self, x):  # [B, T, D] -> [B, H, T, Dh]
        shape = self.const("heads_shape", [0, -1, HEADS, HEAD], np.int64)
        return self("Transpose", self("Reshape", x, shape), perm=[0, 2, 1, 3])

    def attend(self, q, k, v, name, mask=None):
        scores = self("Mul", self("MatMul", q, self("Transpose", k, perm=[0, 1, 3, 2])),
                      self.const("scale", HEAD ** -0.5))
        if mask is not None:
            scores = self("Add", scores, mask)
        merged = self("Transpose", self("MatMul", self("Softmax", scores, axis=-1), v),
                      perm=[0, 2, 1, 3])
        merged = self("Reshape", merged, self.const("merge_shape", [0, -1, D], np.int64))
        return self.linear(merged, f"{name}.out", D, D)

    def mlp(self, x, name):
        h = self.linear(self.norm(x, f"{name}.ln"), f"{name}.fc1", D, MLP)
        gelu = self("Mul", self("Mul", h, self.const("half", 0.5)),
                    self("Add", self("Erf", self("Div", h, self.const("sqrt2", 2 ** 0.5))),
                         self.const("one", 1.0)))
        return self("Add", x, self.linear(gelu, f"{name}.fc2", MLP, D))


def model(graph, inputs, outputs, weights, path):
    proto = helper.make_model(
        helper.make_graph(graph.nodes, path.stem, inputs, outputs, list(weights.values())),
        opset_imports=[helper.make_opsetid("", 17)], producer_name="ortc tests")
    proto.ir_version = 8
    onnx.checker.check_model(proto, full_check=True)
    onnx.save(proto, str(path))


def encoder(path):
    weights = {}
    g = Graph("", weights)
    conv = g("Conv", "input_features", g.param("conv.w", (D, 80, STRIDE), (80 * STRIDE) ** -0.5),
             g.param("conv.b", (D,), 0.02), strides=[STRIDE])
    x = g("Add", g("Transpose", g("Relu", conv), perm=[0, 2, 1]), g.param("pos", (CTX, D), 0.1))
    for i in range(LAYERS):
        h = g.norm(x, f"enc{i}.ln1")
        q, k, v = (g.heads(g.linear(h, f"enc{i}.{n}", D, D)) for n in "qkv")
        x = g.mlp(g("Add", x, g.attend(q, k, v, f"enc{i}.attn")), f"enc{i}.mlp")
    g.nodes.append(helper.make_node("Identity", [g.norm(x, "enc.ln")], ["last_hidden_state"]))
    model(g, [helper.make_tensor_value_info("input_features", TensorProto.FLOAT,
                                            ["batch", 80, FRAMES])],
          [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                         ["batch", CTX, D])], weights, path)


def cache_names(kind):
    return [f"{kind}.{i}.{part}.{kv}" for i in range(LAYERS)
            for part in ("decoder", "encoder") for kv in ("key", "value")]


def decoder_branch(weights, cached):
    g = Graph("c_" if cached else "n_", weights)
    ids = "input_ids"
    past = dict(zip(cache_names("past"), cache_names("past_key_values")))
    if cached:  # positions continue after the cached ones
        start = g("Gather", g("Shape", past["past.0.decoder.key"]),
                  g.const("two", 2, np.int64), axis=0)
    else:
        start = g.const("zero", 0, np.int64)
    stop = g("Add", start, g("Gather", g("Shape", ids), g.const("one_i", 1, np.int64), axis=0))
    positions = g("Range", start, stop, g.const("one_i", 1, np.int64))
    x = g("Add", g("Gather", g.param("embed", (VOCAB, D), 0.5), ids),
          g("Gather", g.param("dec.pos", (MAX_POS, D), 0.1), positions))
    keys = g("Range", g.const("zero", 0, np.int64), stop, g.const("one_i", 1, np.int64))
    future = g("Less", g("Unsqueeze", positions, g.const("axis1", [1], np.int64)),
               g("Unsqueeze", keys, g.const("axis0", [0], np.int64)))
    mask = g("Where", future, g.const("neg", -1e9), g.const("zero_f", 0.0))
    presents = []
    for i in range(LAYERS):
        h = g.norm(x, f"dec{i}.ln1")
        q, k, v = (g.heads(g.linear(h, f"dec{i}.self.{n}", D, D)) for n in "qkv")
        if cached:
            k = g("Concat", past[f"past.{i}.decoder.key"], k, axis=2)
            v = g("Concat", past[f"past.{i}.decoder.value"], v, axis=2)
        x = g("Add", x, g.attend(q, k, v, f"dec{i}.self", mask))
        if cached:
            ck, cv = past[f"past.{i}.encoder.key"], past[f"past.{i}.encoder.value"]
        else:
            ck, cv = (g.heads(g.linear("encoder_hidden_states", f"dec{i}.cross.{n}", D, D))
                      for n in "kv")
        q = g.heads(g.linear(g.norm(x, f"dec{i}.ln2"), f"dec{i}.cross.q", D, D))
        x = g.mlp(g("Add", x, g.attend(q, ck, cv, f"dec{i}.cross")), f"dec{i}.mlp")
        presents += [g("Identity", t) for t in (k, v, ck, cv)]
    logits = g("MatMul", g.norm(x, "dec.ln"), g.param("lm_head", (D, VOCAB), 0.6))
    ramp = np.zeros(VOCAB, np.float32)
    ramp[EOS] = 0.3
    suppressed = np.zeros(VOCAB, np.float32)  # special tokens but end-of-text, as Whisper does
    suppressed[EOS + 1:] = -1e4
    late = g("Mul", g("Unsqueeze", g("Cast", positions, to=TensorProto.FLOAT),
                      g.const("axis1", [1], np.int64)), g.const("eos_ramp", ramp))
    biased = g("Add", g("Add", logits, late), g.const("suppressed", suppressed))
    outputs = [biased, *presents]
    value_infos = [helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                 [None] * (3 if i == 0 else 4))
                   for i, name in enumerate(outputs)]
    return helper.make_graph(g.nodes, "cached" if cached else "first", [], value_infos)


def decoder(path):
    weights = {}
    cached, first = decoder_branch(weights, True), decoder_branch(weights, False)
    out_names = ["logits", *cache_names("present")]
    g = Graph("", weights)
    g.nodes.append(helper.make_node("If", ["use_cache_branch"], out_names,
                                    then_branch=cached, else_branch=first))
    cache = [helper.make_tensor_value_info(n, TensorProto.FLOAT,
                                           ["batch", HEADS, "past" if ".decoder." in n else
                                            "encoder", HEAD])
             for n in cache_names("past_key_values")]
    model(g, [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
              helper.make_tensor_value_info("encoder_hidden_states", TensorProto.FLOAT,
                                            ["batch", CTX, D]), *cache,
              helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1])],
          [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                         ["batch", "tokens", VOCAB]),
           *(helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", HEADS, None, HEAD])
             for n in cache_names("present"))], weights, path)


def tone(seconds, rate, freqs, seed):
    t = np.arange(int(seconds * rate)) / rate
    noise = np.random.default_rng(seed).normal(0, 0.02, t.shape)
    return (sum(np.sin(2 * np.pi * f * t) for f in freqs) * 0.3 + noise).astype(np.float32)


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


with tempfile.TemporaryDirectory() as tmp:
    folder = pathlib.Path(tmp, "whisper-tiny-local")
    (folder / "onnx").mkdir(parents=True)
    encoder(folder / "onnx" / "encoder_model.onnx")
    decoder(folder / "onnx" / "decoder_model_merged.onnx")
    (folder / "config.json").write_text(json.dumps({"model_type": "whisper", "num_mel_bins": 80}))
    (folder / "vocab.json").write_text(json.dumps({w: i for i, w in enumerate(WORDS)}))
    (folder / "added_tokens.json").write_text(
        json.dumps({w: EOS + i for i, w in enumerate(SPECIAL)}))
    for name in ("encoder_model", "decoder_model_merged"):
        print(name, digest((folder / "onnx" / f"{name}.onnx").read_bytes()))

    # onnx-asr's defaults: the providers onnxruntime reports, no session options
    asr = onnx_asr.load_model("whisper", folder)
    print("loaded", type(asr.asr).__name__, asr.asr._encoder.get_providers())
    print("default", repr(asr.recognize(tone(1.0, 16_000, (500,), 5), language="en")))
    options = rt.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = rt.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    asr = onnx_asr.load_model("whisper", folder, sess_options=options,
                              providers=["CPUExecutionProvider"])
    # every encoder output and decoder step's logits the library computes, hashed (bit for bit)
    steps, calls = hashlib.sha256(), []
    library_encode, library_decode = asr.asr._encode, asr.asr._decode

    def encode(*args):
        value = library_encode(*args)
        steps.update(value.numpy().tobytes())
        return value

    def decode(*args):
        logits, state = library_decode(*args)
        calls.append(logits.shape)
        steps.update(logits.tobytes())
        for value in state.values():
            steps.update(value.numpy().tobytes())
        return logits, state

    asr.asr._encode, asr.asr._decode = encode, decode
    speech = [tone(1.5, 16_000, (220, 330), 1), tone(0.7, 16_000, (440, 1250, 3000), 2),
              tone(2.0, 16_000, (90,), 3)]
    for i, audio in enumerate(speech):
        print("en", i, repr(asr.recognize(audio, language="en")))
    print("detect", repr(asr.recognize(speech[0])))
    print("batch", [repr(r) for r in asr.recognize(speech[:2], language="de")])
    wav = pathlib.Path(tmp, "speech.wav")
    with wave.open(str(wav), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(16_000)
        f.writeframes((speech[2] * 32767).astype("<i2").tobytes())
    print("wav", repr(asr.recognize(str(wav), language="fr")))
    print("22050", repr(asr.recognize(tone(1.0, 22_050, (300, 700), 4), sample_rate=22_050,
                                      language="en")))
    print("steps", len(calls), steps.hexdigest()[:16])
    asr.asr._encode, asr.asr._decode = library_encode, library_decode

    # the same encoder and decoder steps as onnx-asr makes them, checked against a plain run
    whisper = asr.asr
    features, _ = whisper._preprocessor(speech[0][None], np.array([len(speech[0])]))
    encoded = whisper._encode(speech[0][None], np.array([len(speech[0])]))
    plain = whisper._encoder.run(None, {"input_features": features})[0]
    print("encoded", encoded.device_name(), encoded.shape(), encoded.data_type(),
          np.array_equal(encoded.numpy(), plain), digest(plain.tobytes()))
    tokens = np.array([[EOS + 1, EOS + 2, EOS + 5, EOS + 7]], np.int64)
    logits, state = whisper._decode(tokens, whisper._create_state(), encoded)
    print("step", logits.shape, digest(logits.tobytes()),
          [(k, v.shape()) for k, v in list(state.items())[:2]])
    nxt = np.hstack((tokens, logits[:, -1].argmax(-1)[:, None]))
    logits2, state = whisper._decode(nxt, state, encoded)
    full = whisper._decoder.run(["logits"], {
        "input_ids": nxt, "encoder_hidden_states": plain, "use_cache_branch": np.array([False]),
        **{k: np.zeros((1, HEADS, 0, HEAD), np.float32) for k in cache_names("past_key_values")}})
    print("cached step", logits2.shape, digest(logits2.tobytes()),
          state["past_key_values.0.decoder.key"].shape(),
          bool(np.allclose(logits2[0, -1], full[0][0, -1], atol=1e-4)))
    print("session", rt.get_device(), whisper._decoder.get_providers(),
          [i.name for i in whisper._decoder.get_inputs()][:3])

# onnx-asr's feature extractors for its other models: ONNX models from its wheel (STFT, mel
# filter banks), each run by its own session, one also split over threads as onnx-asr does
batch = np.stack([tone(1.2, 16_000, (200, 900), 6), tone(1.2, 16_000, (350,), 7)])
lengths = np.array([batch.shape[1], batch.shape[1] - 4000], np.int64)
cpu = {"providers": ["CPUExecutionProvider"]}
for name in ("kaldi", "kaldi_conv", "nemo80", "nemo128_conv", "gigaam_v2", "gigaam_v3_conv"):
    features, features_lens = OnnxPreprocessor(name, cpu)(batch, lengths)
    print("features", name, features.dtype, features.shape, features_lens.tolist(),
          digest(features.tobytes()))
features, features_lens = ConcurrentPreprocessor(OnnxPreprocessor("nemo80", cpu), 2)(batch, lengths)
print("features threads", features.shape, features_lens.tolist(), digest(features.tobytes()))
