"""The example programs run and print what they promise."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(name: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_demo() -> None:
    out = _run("demo.py")
    assert "ONNX Runtime" in out and "probs =" in out and "metadata: ortc-demo" in out
    label = next(x for x in out.splitlines() if x.startswith("label ="))
    assert label.split("=", 1)[1].strip().startswith("[")


def test_threads_example() -> None:
    out = _run("threads.py")
    assert "'run': 'shared'" in out
    assert "8 of 8 outputs equal the serial ones" in out
    assert "rebinding a running binding from another thread: ConcurrentUseError" in out
    assert "the long run was stopped by terminate()" in out


def test_dask_batch_example() -> None:
    """A loopback LocalCluster of 2 worker processes: the session is shipped once (at most one
    session on each worker) and the results equal a local run bit for bit."""
    import pytest

    pytest.importorskip("distributed", reason="the dask extra: make test installs it")
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "dask_batch.py"),
                           "--rows", "3000", "--partitions", "6"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    # Each worker that ran a partition built the session once (the scheduler may give all six
    # partitions to one worker on a loaded machine: [0, 1]); never twice on one worker, not
    # even for the second computation.
    line = next(x for x in proc.stdout.splitlines() if x.startswith("workers: "))
    counts = [int(c) for c in line.split("[")[1].rstrip("]").split(",")]
    assert line.startswith("workers: 2,") and max(counts) == 1, proc.stdout
    assert "identical to the local run: True" in proc.stdout, proc.stdout


def test_ray_batch_example() -> None:
    """Optional (Ray is not a test dependency): two actors, one session built in each from the
    recipe, results equal to a local run bit for bit."""
    import pytest

    pytest.importorskip("ray", reason="the ray extra: make test installs it")
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "ray_batch.py"),
                           "--rows", "3000", "--partitions", "6"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    # one build in each worker process that ran blocks (a process Ray started later: none)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("worker processes: "))
    assert line.split(": ")[-1] in ("[1]", "[0, 1]"), proc.stdout
    assert "identical to the local run: True" in proc.stdout, proc.stdout


def test_ray_batch_example_without_ray_says_what_it_needs(tmp_path: Any) -> None:
    """Where Ray is not installed (it is no dependency of ortc), the example says so and how
    to get it, in one line, instead of a traceback. Ray is hidden here by a package of that
    name that cannot be imported, first on the path."""
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'ray'\")\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "ray_batch.py")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr == ("examples/ray_batch.py needs Ray, which ortc does not install: "
                           "pip install ray\n"), proc.stderr


def test_readme_use_example(tmp_path: Any) -> None:
    """The README's first example (section "Use") runs as written on a model of the kind it
    names, and prints ``sess.inputs`` as its comment shows."""
    import re

    from onnx import TensorProto, helper

    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    use = readme.split("\n## Use\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", use, re.S)
    assert code is not None, "no python block in the README's Use section"
    snippet = code.group(1)
    shape = ["batch", 3]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    (tmp_path / "model.onnx").write_bytes(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString())
    proc = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    shown = re.search(r"print\(sess\.inputs\)\n# (.*?)\.\.\.\)\)\]\n", snippet)
    assert shown is not None, "the Use example no longer shows what sess.inputs prints"
    assert proc.stdout.splitlines()[0].startswith(shown.group(1)), proc.stdout
