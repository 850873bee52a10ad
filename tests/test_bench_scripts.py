"""The bench scripts beside the runner: bench_file.py (a user's own model file, both bindings,
outputs fed back), bench_guard.py (the guard's cost), bench_overhead.py (a run's time inside
ORT's Run and around it), bench_sessions.py (how sessions of one model differ),
bench_handlers.py (a run under each SIGINT disposition), bench_floors.py (each
per-call pattern against the floor of its own C calls), bench_two_threads.py (one thread
against two on one session), bench_first_run.py (a new session's steps) and bench_containers.py
(sequences, maps and strings against onnxruntime) and bench_tasks.py (a session shipped with
each task): they run and print what they claim."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

import models
from conftest import ROOT

try:
    import onnxruntime  # noqa: F401

    HAVE_ORT = True
except ImportError:
    HAVE_ORT = False


def _recurrent_model() -> bytes:
    """``h = tanh(x + state)``, returned both as ``y`` and ``stateN`` (declared with no shape),
    plus an unused int64 scalar ``sr``, the inputs a streaming model takes."""
    f = TensorProto.FLOAT
    return models._bytes(models.make_model(
        [helper.make_node("Add", ["x", "state"], ["s"]), helper.make_node("Tanh", ["s"], ["y"]),
         helper.make_node("Identity", ["y"], ["stateN"])],
        [helper.make_tensor_value_info("x", f, [1, 8]),
         helper.make_tensor_value_info("state", f, [1, 8]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", f, None),
         helper.make_tensor_value_info("stateN", f, None)], []))


def _script(name: str, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    """bench/``name`` run with ``args`` from the checkout (its stdout and stderr kept);
    ``ok``: it must exit 0."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", name), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return _script("bench_file.py", *args, ok=False)


def test_bench_file_times_both_bindings_with_feedback(tmp_path) -> None:
    path = tmp_path / "recurrent.onnx"
    path.write_bytes(_recurrent_model())
    proc = _bench(str(path), "--feed", "sr=:int64=16000", "--feedback", "stateN=state",
                  "--calls", "50", "--rounds", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "outputs differ" not in proc.stderr
    lines = proc.stdout.strip().splitlines()
    times = {line.split()[0]: float(line.split()[1]) for line in lines[1:3]}
    assert set(times) == {"ortc", "onnxruntime"} and all(t > 0 for t in times.values()), lines
    ratio = float(lines[3].split(":")[1])
    assert np.isclose(ratio, times["ortc"] / times["onnxruntime"], rtol=0.01), lines


def test_bench_file_refuses_a_malformed_feed(tmp_path) -> None:
    path = tmp_path / "recurrent.onnx"
    path.write_bytes(_recurrent_model())
    proc = _bench(str(path), "--feed", "sr")
    assert proc.returncode != 0 and "expected NAME=SHAPE:DTYPE" in proc.stderr, proc.stderr
    # a shape written with commas, an unknown dtype, a value that is not a number: one line
    # naming the feed and the format, no traceback
    for feed in ("input=1,512:float32", "input=1x512:floaty", "sr=:int64=abc", "x=-1:float32"):
        proc = _bench(str(path), "--feed", feed)
        assert proc.returncode == 1 and proc.stderr.startswith(f"--feed {feed!r}: expected") \
            and "SHAPE as 1x512" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_bench_guard_runs_every_variant() -> None:
    proc = _script("bench_guard.py", "--rounds", "1", "--calls", "50")
    for variant in ("run raw", "run strict", "run off", "binding raw", "binding strict",
                    "guard shared", "guard exclusive", "method bare", "marked",
                    "marked arg None", "marked with arg"):
        line = next(x for x in proc.stdout.splitlines() if x.strip().startswith(variant + " "))
        per_call = re.search(r"([0-9.]+) us/call", line)
        assert per_call is not None and float(per_call.group(1)) > 0, line


def test_bench_two_threads_times_every_variant_with_one_and_two_threads() -> None:
    proc = _script("bench_two_threads.py", "--calls", "200", "--repeats", "1", "--gc-off",
                   "--switch-interval", "0.001")
    for variant in ("cffi Run", "cffi Run + copy", "cffi Run + copy + Python",
                    "cffi Run + copy + Python, spread", "ortc run()", "ortc run(), checks off",
                    "ortc run(), a session per thread", "onnxruntime run()"):
        line = next(x for x in proc.stdout.splitlines()
                    if re.match(re.escape(variant) + r" +[0-9]", x))
        one, two, ratio = (float(v) for v in line[len(variant):].split())
        assert one > 0 and two > 0 and abs(ratio - two / one) < 0.01, line


def test_bench_first_run_times_each_step_of_a_new_session() -> None:
    proc = _script("bench_first_run.py", "--sessions", "5")
    lines = proc.stdout.splitlines()
    for binding in ("ortc", "compat", "onnxruntime"):
        row = next(x for x in lines if x.startswith(binding + " "))
        assert all(float(v) > 0 for v in row.split()[1:]), row
        make, first, drop, whole, ratio = map(float, row.split()[1:])
        assert whole >= max(make, first, drop), row
        assert ratio == 1.0 if binding == "onnxruntime" else 0.2 < ratio < 10, row
    for step in ("inputs and outputs read", "run engine", "provider rule", "output list",
                 "input names", "first run (the above in place)", "second run"):
        row = next(x for x in lines if x.strip().startswith(step))
        assert float(row.split()[-1]) > 0, row


def test_bench_overhead_splits_each_run_into_inside_and_around() -> None:
    proc = _script("bench_overhead.py", "--rounds", "1", "--calls", "20")
    rows = {}
    for line in proc.stdout.splitlines()[1:]:
        *name, plain, total, inside, around = line.split()
        rows[" ".join(name)] = (float(plain), float(total), float(inside), float(around))
    assert set(rows) == {"add copy-out", "add view", "matmul 16x64x64 copy-out",
                         "matmul 64x256x256 view", "matmul 64x256x256 copy-out",
                         "mlp 3x512 b32 view", "mlp 3x512 b32 copy-out"}, proc.stdout
    for name, (plain, total, inside, around) in rows.items():
        # every run went through the timed Run (inside > 0) and took longer than it
        assert 0 < inside < total and plain > 0, (name, proc.stdout)
        assert np.isclose(around, total - inside, atol=0.011), (name, proc.stdout)


def test_bench_overhead_crossover_times_copied_and_viewed_outputs_per_size() -> None:
    # (each loop checks copy or view)
    proc = _script("bench_overhead.py", "--crossover", "4", "256", "--rounds", "1", "--calls", "20")
    rows = [line.split() for line in proc.stdout.splitlines()[1:]]
    assert [r[:2] for r in rows] == [["4", "KiB"], ["256", "KiB"]], proc.stdout
    assert all(float(v) > 0 for r in rows for v in r[2:]), proc.stdout


def test_bench_floors_times_each_pattern_against_its_c_calls() -> None:
    """bench_floors.py times onnxruntime's, ortc's and the bare C calls' loop of every pattern
    (the floors that bind output memory are checked to write the results before timing) and
    counts ortc's guard entries per call: a Value argument is entered, an array is not."""
    proc = _script("bench_floors.py", "--rounds", "1", "--calls", "20")
    rows = {}
    for line in proc.stdout.splitlines()[2:]:
        name, numbers = re.fullmatch(r"(.+?) +([-0-9. ]+)", line).groups()  # type: ignore[union-attr]
        rows[name] = [float(x) for x in numbers.split()]
    assert list(rows) == ["run", "bound", "arrays rebound", "Values rebound", "bind + copy out",
                          "Values per call", "made and dropped", "new session + run"], proc.stdout
    for name, (ort_us, floor_us, ortc_us, _fr, _or, _diff, entries) in rows.items():
        assert ort_us > 0 and floor_us > 0 and ortc_us > 0, (name, proc.stdout)
        assert entries == int(entries) and entries >= 1, (name, proc.stdout)
    # each bind of a Value enters it beside the binding, and a bound run enters the input
    # Values it reads: more entries than the same pattern over arrays
    assert rows["Values rebound"][-1] > rows["arrays rebound"][-1] + 3, proc.stdout
    assert rows["run"][-1] == 1, proc.stdout  # the session (its run context enters nothing)
    # a session's first run reads its inputs and outputs: the floor's C calls and ortc's both
    # take longer than making and dropping a session
    assert rows["new session + run"][1] > rows["made and dropped"][1], proc.stdout
    assert rows["new session + run"][2] > rows["made and dropped"][2], proc.stdout


@pytest.mark.parametrize("model, order", [("vad", "fixed"), ("matmul", "shuffled")])
def test_bench_sessions_times_every_session_of_both_bindings(model: str, order: str) -> None:
    """bench_sessions.py times each of the sessions of each binding (the stream with its state
    fed back) and prints each binding's spread."""
    proc = _script("bench_sessions.py", "--model", model, "--order", order, "--sessions", "2",
                   "--rounds", "2", "--calls", "5")
    lines = proc.stdout.splitlines()
    assert f"2 sessions per binding, {order} order" in lines[0]
    bindings = ["ortc"] + (["onnxruntime"] if HAVE_ORT else [])
    for b in bindings:
        for i in range(2):
            [line] = [x for x in lines if x.strip().startswith(f"{b} {i}:")]
            us, faults = re.fullmatch(r".*: ([0-9.]+) \(([0-9.]+) page faults per call\)",
                                      line).groups()  # type: ignore[union-attr]
            assert float(us) > 0 and float(faults) >= 0, line
        assert any(x.startswith(f"{b}: ") and "spread" in x for x in lines), proc.stdout


def test_bench_handlers_runs_each_sigint_disposition() -> None:
    """bench_handlers.py: each disposition in its own interpreter; ortc bridges Ctrl-C under
    Python's handler only, and says so."""
    proc = _script("bench_handlers.py", "--rounds", "1", "--calls", "200")
    lines = {line.split(":")[0]: line for line in proc.stdout.strip().splitlines()}
    assert set(lines) == {"default", "ignored", "handler"}, proc.stdout
    assert "Ctrl-C bridged yes" in lines["default"], proc.stdout
    for name in ("ignored", "handler"):
        assert "Ctrl-C bridged no" in lines[name], proc.stdout
    for line in lines.values():
        figures = re.findall(r"(?:run\(\)|bound|ns:) ([0-9.]+)", line)
        assert len(figures) == 3 and all(float(x) > 0 for x in figures), line


def test_bench_runner_run_as_a_script_says_how_to_run_it() -> None:
    """``python bench/runner.py`` (what a newcomer tries after reading that bench/runner.py is the
    bench) says in one line how it is run, instead of an ImportError from its relative import."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "runner.py"), "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ("bench/runner.py is a module of the bench: run it as `python -m ortc "
                           "bench [options]` (or `make bench`) from a checkout\n"), proc.stderr


def test_bench_containers_compares_every_case_with_onnxruntime() -> None:
    proc = _script("bench_containers.py", "--rounds", "1", "--seconds", "0.01")
    rows = proc.stdout.splitlines()[1:]
    names = [re.split(r"\s{2,}", r.strip())[0] for r in rows]
    assert names == ["zipmap int, 1 rows", "zipmap str, 1 rows", "zipmap int, 100 rows",
                     "zipmap str, 100 rows", "split to sequence, 3", "concat from sequence, 3",
                     "split to sequence, 100", "concat from sequence, 100",
                     "string identity, 100", "string identity, 10000", "dict vectorizer"], names
    for row in rows:
        us, compat, native = row.split()[-3:]
        assert float(us) > 0 and 0.1 < float(compat[:-1]) < 1000 and \
            0.1 < float(native[:-1]) < 1000, row


def test_bench_tasks_times_a_shipped_session_against_new_sessions() -> None:
    proc = _script("bench_tasks.py", "--rounds", "3")
    rows = [r.split() for r in proc.stdout.splitlines()[1:]]
    assert [r[0] for r in rows] == ["dropped"] * 3 + ["kept"] * 3, rows
    for r in rows:
        assert float(r[-2]) > 0 and float(r[-1][:-1]) > 0, r
    assert [float(r[-1][:-1]) for r in rows if r[1] == "onnxruntime,"] == [1.0, 1.0], rows


def test_bench_ab_times_two_trees_in_turn() -> None:
    """bench_ab.py: a process per tree, the rows asked of each in turn; the same tree twice is
    the A/A."""
    proc = _script("bench_ab.py", ROOT, ROOT, "--rounds", "2", "--calls", "20")
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]]
            for line in proc.stdout.splitlines()[2:]}
    assert list(rows) == ["run", "run3", "values", "bound"], proc.stdout
    for name, (base, new, ratio, base_cpu, new_cpu, cpu_ratio) in rows.items():
        assert base > 0 and new > 0 and base_cpu > 0 and new_cpu > 0, (name, proc.stdout)
        assert 0.2 < ratio < 5 and 0.2 < cpu_ratio < 5, (name, proc.stdout)
    assert rows["run3"][0] > rows["run"][0] * 0.8, proc.stdout  # (three outputs to convert)
    proc = _script("bench_ab.py", ROOT, ROOT, "--rows", "run,nope", ok=False)
    assert proc.returncode == 2 and "unknown rows ['nope']" in proc.stderr, proc.stderr
