"""The benchmark runner works end to end (no timing assertions: numbers live in the bench)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.models import (ONNX_TEST_MODELS, all_models, batch_model, mixed_model,  # noqa: E402
                          silero_model, vad_model)

try:
    import onnxruntime  # noqa: F401
    HAVE_ORT = True
except ImportError:
    HAVE_ORT = False

#: every row the smoke run below asks for; the onnx package's networks when it ships them
SMOKE_MODELS = ["tiny", "mixed", "batch", "vad", "silero", *ONNX_TEST_MODELS]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("bench") / "out.json"
    md = out.with_suffix(".md")
    proc = subprocess.run([sys.executable, "-m", "ortc", "bench", "--smoke", "--models",
                           ",".join(SMOKE_MODELS), "--json", str(out), "--markdown", str(md)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Targets" in proc.stdout
    data = json.loads(out.read_text())
    data["_markdown"] = md.read_text()
    data["_stderr"] = proc.stderr
    return data, proc.stdout


def test_bench_smoke_writes_json(smoke: tuple[dict[str, Any], str]) -> None:
    data, _ = smoke
    assert data["mode"] == "smoke"
    for key in ("cpu", "cores", "python", "numpy", "library"):
        assert key in data["machine"]
    tiny = data["models"]["tiny"]
    paths = tiny["paths"]
    for name in ("ortc_run", "ortc_run_reused", "ortc_run_nochecks", "ortc_run_with_values",
                 "ortc_bound", "cffi_bound", "compat_run"):
        assert name in paths
    assert tiny["ratios"]["compat_run"]["vs_ortc"] > 0
    if HAVE_ORT:
        for name in ("ort_run", "ort_run_reused", "ort_iobinding", "ort_run_with_ort_values"):
            assert name in paths
        assert tiny["ratios"]["ortc_run"]["vs_onnxruntime"] > 0
        # run_with_values is compared with onnxruntime's run_with_ort_values
        assert tiny["ratios"]["ortc_run_with_values"]["vs_onnxruntime"] > 0
        assert "onnxruntime" in data["threads"]["tiny"]
        # two threads' throughput, ortc over onnxruntime, paired per round
        assert data["threads"]["tiny"]["ortc"]["vs_onnxruntime_2"] > 0
    for stats in paths.values():
        assert stats["calls"] > 0
        assert 0 < stats["median_us"] <= stats["p99_us"]
    if data["c_floor"].startswith(("no C compiler", "compiling")):
        assert "c_floor" not in paths
    else:
        assert "c_floor" in paths
        assert tiny["ratios"]["ortc_bound"]["vs_c_floor"] > 0
        # the bound floor: RunWithBinding alone in C, on inputs and outputs bound once
        assert "c_bound" in paths and tiny["ratios"]["c_bound"]["vs_c_floor"] > 0
    if HAVE_ORT:
        # the bound target says what it asks in µs against the floors under it
        bound = next(t for t in data["targets"] if t["target"].startswith("tiny: ortc bound <="))
        assert "the target is" in bound["detail"] and "through cffi" in bound["detail"]
    assert data["threads"]["tiny"]["ortc"]["scaling"] > 0
    for target in data["targets"]:
        assert set(target) >= {"target", "value", "limit", "met", "basis"}
        assert target["met"] in (True, False, None)
        assert (target["met"] is None) == (target["value"] is None) or target["detail"]


def test_bench_smoke_has_every_row(smoke: tuple[dict[str, Any], str]) -> None:
    data, stdout = smoke
    shipped = [m.key for m in all_models(SMOKE_MODELS)]
    assert len(shipped) >= 5  # tiny, mixed, batch, vad and a network of the onnx package
    assert list(data["models"]) == shipped
    for key in shipped:
        res = data["models"][key]
        assert res["label"] in stdout and res["label"] in data["_markdown"]
        assert res["paths"]["ortc_run"]["calls"] > 0
        assert data["threads"][key]["ortc"]["scaling"] > 0
        if HAVE_ORT:
            ratio = res["ratios"]["ortc_run"]["vs_onnxruntime"]
            assert isinstance(ratio, float) and ratio > 0, (key, ratio)
            assert data["threads"][key]["onnxruntime"]["scaling"] > 0
            targets = {t["target"]: t for t in data["targets"]}
            if key != "tiny":
                t = targets[f"{key}: ortc run() <= 1x onnxruntime run()"]
                assert t["value"] == ratio and t["met"] == (ratio <= 1.0)
                assert "ortc run()" in t["basis"] and "onnxruntime run()" in t["basis"]
            assert f"{key}: 2-thread scaling ortc >= onnxruntime" in targets
    # models with inputs the C floor cannot feed have no C floor row, and say why
    for key in ("mixed", "batch", "vad"):
        assert "c_floor" not in data["models"][key]["paths"]
        assert data["models"][key]["c_floor"].startswith("not applicable")


def test_vad_row_outputs_have_no_static_shape(smoke: tuple[dict[str, Any], str]) -> None:
    data, _ = smoke
    vad = data["models"]["vad"]
    # streamed: only run() (and compat's run) as a user streams, against onnxruntime's run()
    assert set(vad["paths"]) - {"c_floor"} == (
        {"ortc_run", "compat_run"} | ({"ort_run"} if HAVE_ORT else set()))
    ins, outs = vad["io"]["inputs"], vad["io"]["outputs"]
    assert ins["input"] == {"dtype": "float32", "shape": [1, 512], "declared_dtype": "float32"}
    assert ins["state"]["shape"] == [2, 1, 128]
    assert ins["sr"] == {"dtype": "int64", "shape": [], "declared_dtype": "int64"}
    for name, shape in (("output", [1, 1]), ("stateN", [2, 1, 128])):
        assert outs[name]["static_shape"] is False
        assert not all(isinstance(d, int) for d in outs[name]["shape"] or [None])
        assert outs[name]["run_shape"] == shape and outs[name]["run_dtype"] == "float32"


def test_silero_row_streams_the_real_model_or_says_why_not(
        smoke: tuple[dict[str, Any], str]) -> None:
    """Silero VAD v6 from faster-whisper's wheel (the apps extra), streamed with h and c fed
    back; without faster-whisper the bench says why the row is missing."""
    data, _ = smoke
    if silero_model() is None:
        assert "silero" not in data["models"]
        assert "model silero left out: faster-whisper" in data["_stderr"]
        return
    silero = data["models"]["silero"]
    assert set(silero["paths"]) - {"c_floor"} == (
        {"ortc_run", "compat_run"} | ({"ort_run"} if HAVE_ORT else set()))
    ins, outs = silero["io"]["inputs"], silero["io"]["outputs"]
    assert ins["input"]["shape"] == ["seq_len", 576] and ins["h"]["shape"] == [1, 1, 128]
    assert outs["speech_probs"]["static_shape"] is False
    assert outs["hn"]["run_shape"] == [1, 1, 128]


def test_batch_row_runs_changing_shapes(smoke: tuple[dict[str, Any], str]) -> None:
    """The row's calls are made with batch sizes that change from call to call (run() only, as
    users call such a model), and its output's shape follows the input's."""
    data, _ = smoke
    batch = data["models"]["batch"]
    assert set(batch["paths"]) == (
        {"ortc_run", "compat_run"} | ({"ort_run"} if HAVE_ORT else set()))
    assert batch["io"]["outputs"]["y"]["shape"] == ["batch", 4]
    m = batch_model()
    sizes = {m.feeds(seed)["x"].shape[0] for seed in range(16)}
    assert len(sizes) > 8 and all(1 <= b <= 32 for b in sizes)
    import ortc

    with ortc.Session(m.model) as sess:
        for seed in range(4):
            x = m.feeds(seed)["x"]
            assert sess.run(None, {"x": x})[0].shape == (x.shape[0], 4)


def test_vad_model_streams_its_state() -> None:
    """The model the row runs: its state changes from call to call and is what comes back."""
    import ortc

    m = vad_model()
    with ortc.Session(m.model) as sess:
        shapes = {a.name: a.shape for a in sess.outputs}
        assert shapes == {"output": ("batch", 1), "stateN": (2, "batch", 128)}
        state = m.feeds(0)["state"]
        assert not state.any()
        seen = []
        for seed in range(3):
            f = m.feeds(seed)
            prob, state = sess.run(None, {"input": f["input"], "state": state, "sr": f["sr"]})
            assert prob.shape == (1, 1) and 0 < prob[0, 0] < 1
            assert state.shape == (2, 1, 128) and state.any()
            seen.append(state.copy())
        assert not np.array_equal(seen[0], seen[1])


def test_mixed_row_dtypes_are_as_declared(smoke: tuple[dict[str, Any], str]) -> None:
    data, _ = smoke
    io = data["models"]["mixed"]["io"]
    declared = mixed_model().dtypes
    assert declared == {"x": "float32", "h": "float16", "mask": "bool", "idx": "int64",
                        "y": "float32", "z": "float16", "count": "int32", "pick": "int64"}
    for name, d in io["inputs"].items():
        assert d["dtype"] == d["declared_dtype"] == declared[name], name
    for name, d in io["outputs"].items():
        assert d["dtype"] == d["run_dtype"] == d["declared_dtype"] == declared[name], name
        assert d["static_shape"] is True
    assert set(io["inputs"]) | set(io["outputs"]) == set(declared)


def test_bench_smoke_cold_start(smoke: tuple[dict[str, Any], str]) -> None:
    data, stdout = smoke
    cold = data["cold_start"]
    assert cold["runs"] == 1
    mods = ["ortc"] + (["onnxruntime"] if HAVE_ORT else [])
    for mod in mods:
        v = cold[mod]
        for key in ("import_ms", "session_ms", "first_run_ms", "total_ms", "process_ms"):
            assert v[key] > 0, (mod, key)
        assert v["total_ms"] >= v["import_ms"] + v["session_ms"] - 1e-6
        assert v["rss_after_session_mib"] > 0
    assert "Cold start" in stdout and "### Cold start" in data["_markdown"]
    if HAVE_ORT:
        assert cold["ratio_total"] > 0
        [t] = [t for t in data["targets"] if t["target"].startswith("cold start: ortc import")]
        assert t["value"] == cold["ratio_total"] and "import" in t["basis"]


def test_cold_start_children_run_alike(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both bindings' cold-start children get the same conditions: bytecode cached (not the
    caller's PYTHONDONTWRITEBYTECODE), ORT's telemetry off, and one OpenBLAS thread (numpy's
    BLAS threads spin through the measured span otherwise), whatever the caller had set."""
    from bench.runner import cold_start_env

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "8")
    monkeypatch.delenv("ORT_DISABLE_TELEMETRY", raising=False)
    env = cold_start_env(str(tmp_path), root="/some/tree")
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env["ORT_DISABLE_TELEMETRY"] == "1"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == "/some/tree"
    assert env["PYTHONPYCACHEPREFIX"].startswith(str(tmp_path))


def test_targets_are_judged_on_the_median_over_processes() -> None:
    from bench.runner import combine_targets

    def t(name: str, value: float | None, limit: float, op: str = "<=",
          met: bool | None = True, detail: str = "") -> dict[str, Any]:
        if met is not None and value is not None:
            met = value <= limit if op == "<=" else value >= limit
        return {"target": name, "value": value, "limit": limit, "op": op, "met": met,
                "detail": detail, "basis": ""}

    busy = "not judged: C itself scales at most x1.20 (no free core)"
    runs = [[t("tiny", 0.74, 0.75), t("scaling", 1.8, 1.9, ">="),
             t("busy", 1.0, 1.1, ">=", None, busy), t("cold", None, 1.0)],
            [t("tiny", 0.77, 0.75), t("scaling", 1.95, 1.85, ">="),
             t("busy", 1.2, 1.0, ">="), t("cold", 1.2, 1.0)],
            [t("tiny", 0.76, 0.75), t("scaling", 1.9, 1.8, ">="),
             t("busy", 0.9, 1.0, ">=", None, busy), t("cold", 1.1, 1.0)]]
    got = {x["target"]: x for x in combine_targets(runs)}
    assert list(got) == ["tiny", "scaling", "busy", "cold"]
    tiny = got["tiny"]  # met in one process of three: the median (0.76) decides
    assert (tiny["value"], tiny["met"], tiny["met_in"], tiny["judged_in"]) == (0.76, False, 1, 3)
    assert tiny["values"] == [0.74, 0.77, 0.76] and tiny["detail"] == ""
    assert "0.740, 0.770, 0.760" in tiny["basis"] and "met in 1 of 3" in tiny["basis"]
    scaling = got["scaling"]  # a measured limit (onnxruntime's scaling): its median too
    assert (scaling["value"], scaling["limit"], scaling["met"]) == (1.9, 1.85, True)
    busy_row = got["busy"]  # judged in one process of three: left unjudged, and says why
    assert busy_row["met"] is None and busy_row["judged_in"] == 1
    assert busy_row["detail"] == f"not judged in 2 of 3 processes: {busy}"
    cold = got["cold"]  # one process did not measure it: the others decide
    assert (cold["value"], cold["met"], cold["values"]) == (1.15, False, [1.2, 1.1])


def test_bench_over_processes_writes_every_run_and_the_combined_verdicts(tmp_path) -> None:
    out, md = tmp_path / "p.json", tmp_path / "p.md"
    proc = subprocess.run([sys.executable, "-m", "ortc", "bench", "--smoke", "--models", "tiny",
                           "--no-cold-start", "--no-threads", "--processes", "2",
                           "--json", str(out), "--markdown", str(md)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Targets judged over 2 processes" in proc.stdout
    assert "process 1 of 2" in proc.stderr and "process 2 of 2" in proc.stderr
    data = json.loads(out.read_text())
    assert data["processes"] == 2 and len(data["runs"]) == 2
    assert all(r["mode"] == "smoke" and list(r["models"]) == ["tiny"] and not r["threads"]
               and r["cold_start"] is None for r in data["runs"])
    for target in data["targets"]:
        each = [next(x for x in r["targets"] if x["target"] == target["target"])
                for r in data["runs"]]
        assert target["values"] == [x["value"] for x in each]
        assert target["value"] == pytest.approx(float(np.median(target["values"])))
        op = (lambda a, b: a <= b) if target["op"] == "<=" else (lambda a, b: a >= b)
        assert target["met"] == op(target["value"], target["limit"])
        assert target["met_in"] == sum(bool(x["met"]) for x in each)
    text = md.read_text()
    assert "### Targets over the processes" in text and "## Process 2" in text
    assert text.count("### Add [1]") == 2


def test_bench_measures_with_pythons_sigint_handler_whatever_it_started_with(tmp_path) -> None:
    """A main-thread run of ortc takes another path when SIGINT is ignored (a background job of
    a script) than under Python's handler: the bench gives the process Python's handler, so
    runs started either way measure the same code, and records what it replaced."""
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-m", "ortc", "bench", "--smoke", "--no-c",
                           "--no-onnxruntime", "--no-threads", "--no-cold-start", "--json",
                           str(out)], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=300,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert proc.returncode == 0, proc.stderr[-3000:]
    sigint = json.loads(out.read_text())["machine"]["sigint"]
    assert sigint == ("Python's default handler (ortc bridges Ctrl-C); set by the bench, the "
                      "process started with SIGINT ignored"), sigint


def test_bench_processes_needs_at_least_one() -> None:
    proc = subprocess.run([sys.executable, "-m", "ortc", "bench", "--smoke", "--processes", "0"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--processes 0: needs at least 1" in proc.stderr


def test_bench_unknown_model_is_a_usage_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "ortc", "bench", "--smoke", "--models",
                           "tiny,nosuch"], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "unknown model 'nosuch'" in proc.stderr and "vad" in proc.stderr


def test_bench_interrupt_runs_every_case():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_interrupt.py"),
                           "--repeats", "1"], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for case in ("Ctrl-C", "deadline", "terminate()"):
        line = next(x for x in proc.stdout.splitlines() if x.strip().startswith(case))
        assert float(line.split("median")[1].split()[0]) >= 0, line


def test_bench_startup_runs() -> None:
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_startup.py"),
                           "--repeats", "1"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    mods = ["ortc"] + (["onnxruntime"] if HAVE_ORT else [])
    for mod in mods:
        line = next(x for x in lines if x.startswith(f"{mod}: "))
        assert line.startswith(f"{mod}: median of 1 fresh interpreters, ms: import "), line
        for key in ("session", "run", "sum", "cpu", "numpy", "process"):
            assert f" {key} " in line, (key, line)


def test_bench_startup_split_adds_up() -> None:
    """--split: each binding's start part by part, in more fresh interpreters; ortc's parts
    (import, library, CreateEnv, CreateSession, the rest of the session, first run) add up
    to its sum, which they are taken from."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_startup.py"),
                           "--repeats", "1", "--split"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()

    def parts(mod: str) -> dict[str, float]:
        line = next(x for x in lines if x.startswith(f"{mod}, part by part: "))
        pairs = line.split("ms: ", 1)[1].split(", ")
        return {p.rsplit(" ", 1)[0]: float(p.rsplit(" ", 1)[1]) for p in pairs}

    got = parts("ortc")
    assert list(got) == ["import (Python)", "find and open the library", "CreateEnv (ORT)",
                         "CreateSession (ORT)", "rest of the first session", "first run",
                         "sum"]
    assert all(v > 0 for k, v in got.items() if k != "rest of the first session"), got
    # one interpreter: the medians are its own figures, rounded to 0.1 ms each
    assert abs(sum(v for k, v in got.items() if k != "sum") - got["sum"]) < 0.5, got
    if HAVE_ORT:
        ort = parts("onnxruntime")
        assert list(ort) == ["import (Python)", "extension module (ORT and its env)", "first session",
                             "first run", "sum"]
        assert ort["extension module (ORT and its env)"] > 0 and ort["import (Python)"] > 0, ort
