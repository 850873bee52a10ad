"""Real applications that call onnxruntime's Python API (with the ONNX models their wheels ship,
or, for sklearn-onnx, onnxmltools and onnxruntime-extensions, models the script trains,
converts or builds) run unchanged under
``python -m ortc.compat``, printing exactly what they print under onnxruntime (labels, scores
and probabilities as repr'd floats: bit-for-bit results).

They need the ``apps`` extra (``pip install -e '.[apps]'``; ``make test-apps`` does it), so
the ``apps`` marker keeps them out of ``make test``. With CI set, a missing app fails rather
than skips.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

from test_compat_run import PROBE, ROOT, run

pytestmark = pytest.mark.apps

APPS = os.path.join(ROOT, "tests", "compat_apps")


def need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed: pip install -e '.[apps]' (make test-apps)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def same_run(tmp_path: Any, args: list[str], script: str | None = None) -> str:
    """Run ``args`` under onnxruntime and under ortc.compat; both must succeed and print the
    same; the compat run must not load onnxruntime's extension."""
    if script is not None:  # a copy of the script that reports what the process loaded
        probed = tmp_path / os.path.basename(script)
        with open(script) as f:
            probed.write_text(f.read() + PROBE)
        args = [str(probed), *args]
    # -X faulthandler: a crash while Python runs prints where each thread was
    plain = run(["-X", "faulthandler", *args])
    compat = run(["-X", "faulthandler", "-m", "ortc.compat", *args])
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert compat.returncode == 0, compat.stderr[-3000:]
    assert compat.stdout == plain.stdout
    if script is not None:
        assert "PROBE loaded=True" in plain.stderr
        assert "PROBE loaded=False module=ortc.compat" in compat.stderr
    return compat.stdout


def test_magika(tmp_path: Any) -> None:
    need("magika")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_magika.py"))
    lines = out.splitlines()
    assert len(lines) >= 8
    assert lines[0].startswith("python ok python python code text/x-python 0.99")


def test_magika_command_line(tmp_path: Any) -> None:
    need("magika")
    out = same_run(tmp_path, ["-m", "magika.cli.magika_client", "--no-colors",
                              os.path.join(APPS, "app_magika.py"), os.path.join(ROOT, "README.md")])
    assert "app_magika.py: Python source (code)" in out
    assert "README.md: Markdown document (text)" in out


def test_ddddocr(tmp_path: Any) -> None:
    need("ddddocr")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_ddddocr.py"))
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["ocr", "prob"] * 4 + ["old", "det"]
    assert lines[-1].startswith("det [[")


def test_faster_whisper_vad(tmp_path: Any) -> None:
    """Silero VAD v6 from faster-whisper's wheel: its speech spans, its batched probabilities,
    and the model streamed one frame per call with its recurrent state carried over."""
    need("faster_whisper")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_faster_whisper_vad.py"))
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines] == ["spans", "probs"] * 2 + ["stream"]
    assert lines[2].startswith("spans 1 [(") and lines[-1].startswith("stream 250 ")


def test_rapidocr(tmp_path: Any) -> None:
    """RapidOCR's three PP-OCR models (detection, angle, recognition) on drawn text."""
    need("rapidocr_onnxruntime")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_rapidocr.py"))
    assert "ocr 0 'ONNXRuntime' " in out and "ocr 2 'upside down text' " in out, out
    assert out.splitlines()[-1].startswith("det 3 ")


def test_sklearn_onnx(tmp_path: Any) -> None:
    """scikit-learn models converted by sklearn-onnx: ZipMap probabilities (sequences of maps
    keyed by int64 and by string), tree ensembles, a pipeline with a string column, a text
    pipeline with string tensors and ORT's tokenizer, a string label encoder, k-means."""
    need("skl2onnx")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_sklearn.py"))
    assert "output_probability seq(map(string,tensor(float))) []" in out
    assert "names -> object[5]:['setosa', 'setosa', 'versicolor', 'virginica', 'virginica'] | " \
           "[{'setosa': " in out
    assert "encoded -> int64[3]:[2, 1, 0]" in out
    assert "text -> int64[4]:[0, 1, 1, 0] | float32[4, 2]:" in out
    assert "pipeline -> int64[4]:" in out and "clusters -> int64[5]:" in out


def test_onnxruntime_extensions(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime-extensions: its custom-operator library registered in SessionOptions, its
    string and tokenizer operators, Python operators ORT calls back, string tensors.

    With CI set (as on a CI machine) the compat run crashed at exit every time while ortc let
    cffi unload ORT's library as the interpreter finalized: the extension's static destructors
    then released the custom-op domains ORT had made through unmapped code (SIGSEGV after the
    last line). The runs here set it, so the case is checked everywhere."""
    need("onnxruntime_extensions")
    monkeypatch.setenv("CI", "true")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_ort_extensions.py"))
    assert "StringECMARegexReplace |O[3]:['a#b#c#', 'no digits', '']" in out
    assert "BertTokenizer <i8[14]:[2, 5, 6, 7, 8, 9, 10, 11, 12, 5, 13, 14, 15, 3] |" in out
    assert out.count("session |O[2, 2]:[['THREE TWO ONE', 'Y X'], ") == 2
    assert "array([ 5, 10, 15], dtype=int64)" in out
    assert out.splitlines()[-1].startswith("no library Fail [ONNXRuntimeError] : 1 : FAIL")


def test_lightgbm_float16(tmp_path: Any) -> None:
    """LightGBM models converted by onnxmltools (metadata, session options, provider options)
    and a float16 network from onnxconverter-common (OrtValues, IOBinding, threads)."""
    need("onnxmltools")
    need("lightgbm")
    need("onnxconverter_common")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_lightgbm_fp16.py"))
    assert "meta OnnxMLTools test.lightgbm 7 iris classifier [('classes', " in out
    assert "labels array([0, 0, 0, 0, 0, 1, 1, 2, 1, 2, 2, 2, 2], dtype=int64)" in out, out
    assert "  X tensor(float16) [None, 10]" in out and "fp16 float16[142, 3]:" in out
    for line in ("ortvalue tensor(float16) [142, 3] True", "binding True tensor(float16)",
                 "binding ortvalues True", "binding pointers True", "run options True"):
        assert line in out
    assert out.splitlines()[-1].startswith("float32 fed InvalidArgument ")


def test_rapid_layout(tmp_path: Any) -> None:
    """rapid_layout's PP-Layout model on drawn pages: class names from the model's metadata,
    session options and a provider with options, two engines."""
    need("rapid_layout")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_rapid_layout.py"))
    assert out.startswith("classes ['text', 'title', 'figure', ")
    assert "page 0 3 ['text', 'title', 'table']" in out
    assert "file " in out and "tuned " in out


def test_onnxscript(tmp_path: Any) -> None:
    """onnxscript: functions evaluated eagerly (a session per operator, with Python control
    flow between them), the same functions as a model, optimized and fused for onnxruntime, and
    an eager call onnxruntime refuses (its exception class, module and message)."""
    need("onnxscript")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_onnxscript.py"))
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines] == [
        "gelu", "layer_norm", "attention", "steps", "block", "model", "inputs", "block",
        "optimized", "block", "fused", "block", "eager", "cause"]
    eager = lines[4].removeprefix("block eager ")
    assert lines[7] == f"block model {eager} True True"
    assert lines[9] == f"block optimized {eager}" and lines[11] == f"block fused {eager}"
    assert "FusedMatMul" in lines[10]
    assert lines[-1].startswith("cause onnxruntime.capi.onnxruntime_pybind11_state Fail "
                                "[ONNXRuntimeError] : 1 : FAIL : ")


def test_onnx_asr_whisper(tmp_path: Any) -> None:
    """onnx-asr's Whisper recognizer over a tiny Whisper-shaped transformer the script builds
    and saves (encoder, merged decoder with a key/value cache): IOBinding made per call, with
    OrtValues bound in and outputs bound by name and kept as OrtValues; onnx-asr's default
    providers, then session options; arrays, a batch, a WAV file, 22.05 kHz audio through
    onnx-asr's resampler; every step's logits and cache hashed. Then onnx-asr's feature
    extractors for its other models (ONNX models from its wheel), one split over threads."""
    need("onnx_asr")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_onnx_asr_whisper.py"))
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines] == [
        "encoder_model", "decoder_model_merged", "loaded", "default", "en", "en", "en", "detect",
        "batch", "wav", "22050", "steps", "encoded", "step", "cached", "session",
        *["features"] * 7]
    assert lines[2] == "loaded WhisperHf ['CPUExecutionProvider']"
    assert all(len(ln) > 20 for ln in lines[3:11]), out  # every transcript has words
    assert int(lines[11].split()[1]) > 100  # decoder steps, each through an IOBinding
    assert lines[12].startswith("encoded cpu [1, 300, 32] tensor(float) True ")
    assert lines[14].startswith("cached step (1, 1, 40) ")
    assert lines[14].endswith(" [1, 4, 5, 8] True")
    assert lines[16].startswith("features kaldi float32 (2, 120, 80) [120, 95] ")
    assert lines[-1].startswith("features threads (2, 80, 121) [120, 95] ")


def test_onnx_array_api(tmp_path: Any) -> None:
    """onnx-array-api: onnxruntime's C++ classes called directly (an OrtDevice made by the C++
    constructor, OrtValues made on it, the C++ session's run_with_ort_values), its array API
    evaluated eagerly a session per operation, jitted functions, ORT's optimized model read back
    and its profile parsed. Before compat had the C++ forms, its import raised AttributeError."""
    need("onnx_array_api")
    need("array_api_strict")
    out = same_run(tmp_path, [], os.path.join(APPS, "app_onnx_array_api.py"))
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines] == [
        "tensor", *["xp"] * 10, *["eager"] * 3, *["jit"] * 3, "optimized", "optimized",
        "profile", "profile", "frame"]
    assert lines[0] == "tensor (3, 4) DT1 float32[3, 4]:ec77d4c9ee3bf811:[-5.0, -4.0, -3.0]"
    assert [ln.split()[2:] for ln in lines[11:14]] == [ln.split()[2:] for ln in lines[14:17]]
    assert lines[-2] == "profile values ['Conv_0', 'Flatten_3', 'MaxPool_2', 'Relu_1']"
