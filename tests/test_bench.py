"""The benchmark runner works end to end (no timing assertions: numbers live in the bench)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_bench_smoke_writes_json(tmp_path):
    out = tmp_path / "out.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "ortc", "bench", "--smoke", "--json", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Targets" in proc.stdout
    data = json.loads(out.read_text())

    assert data["mode"] == "smoke"
    for key in ("cpu", "cores", "python", "numpy", "library"):
        assert key in data["machine"]
    assert list(data["models"]) == ["tiny"]
    tiny = data["models"]["tiny"]
    paths = tiny["paths"]
    for name in ("ortc_run", "ortc_run_reused", "ortc_run_nochecks", "ortc_run_with_values",
                 "ortc_bound", "compat_run"):
        assert name in paths
    assert tiny["ratios"]["compat_run"]["vs_ortc"] > 0
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pass
    else:
        for name in ("ort_run", "ort_run_reused", "ort_iobinding"):
            assert name in paths
        assert tiny["ratios"]["ortc_run"]["vs_onnxruntime"] > 0
        assert "onnxruntime" in data["threads"]["tiny"]
        assert "onnxruntime" in data["import"]
    for stats in paths.values():
        assert stats["calls"] > 0
        assert 0 < stats["median_us"] <= stats["p99_us"]
    if data["c_floor"].startswith(("no C compiler", "compiling")):
        assert "c_floor" not in paths
    else:
        assert "c_floor" in paths
        assert tiny["ratios"]["ortc_bound"]["vs_c_floor"] > 0
    assert data["threads"]["tiny"]["ortc"]["scaling"] > 0
    assert data["import"]["ortc"]["import_ms"] > 0
    for target in data["targets"]:
        assert set(target) >= {"target", "value", "limit", "met"}
        assert target["met"] in (True, False, None)


def test_bench_interrupt_runs_every_case():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_interrupt.py"),
                           "--repeats", "1"], cwd=ROOT, env=env, capture_output=True, text=True,
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
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith("median of 1 fresh interpreters, ms: numpy "), line
    for key in ("ortc", "session", "run", "after_numpy", "cpu_after_numpy", "process"):
        assert f" {key} " in line, (key, line)
