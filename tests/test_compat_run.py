"""``python -m ortc.compat`` and ``ortc.compat.install()``: unmodified onnxruntime programs run
on ortc, in fresh interpreters, and onnxruntime's own extension module is never loaded."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

import models
from test_pypy import pypy_python  # noqa: F401 - the PyPy venv fixture

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "compat_apps", "ort_script.py")
PYBIND = "onnxruntime_pybind11_state"

# appended to a program's run: says whether onnxruntime's extension is loaded in the process
PROBE = f"""
import sys
with open("/proc/self/maps") as _maps:
    _loaded = "{PYBIND}" in _maps.read()
_mod = sys.modules.get("onnxruntime.capi.{PYBIND}")
sys.stderr.write(f"PROBE loaded={{_loaded}} module={{getattr(_mod, '__name__', None)}}\\n")
"""


def run(args: list[str], cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: Any) -> str:
    path = tmp_path_factory.mktemp("compat") / "add.onnx"
    path.write_bytes(models.add_model(__import__("numpy").float32, [3]))
    return str(path)


@pytest.fixture(scope="module")
def probed_script(tmp_path_factory: Any) -> str:
    path = tmp_path_factory.mktemp("compat") / "probed.py"
    with open(SCRIPT) as f:
        path.write_text(f.read() + PROBE)
    return str(path)


def test_script_same_output_as_onnxruntime(model_path: str, probed_script: str) -> None:
    plain = run([probed_script, model_path, "hello", "world"])
    compat = run(["-m", "ortc.compat", probed_script, model_path, "hello", "world"])
    assert plain.returncode == 0, plain.stderr
    assert compat.returncode == 0, compat.stderr
    assert compat.stdout == plain.stdout
    assert "name __main__ argv" in compat.stdout and "words HELLO WORLD" in compat.stdout
    assert "error InvalidArgument [ONNXRuntimeError] : 2 : INVALID_ARGUMENT :" in compat.stdout
    # the reference run used onnxruntime's extension; the compat run never loaded it
    assert f"PROBE loaded=True module=onnxruntime.capi.{PYBIND}" in plain.stderr
    assert "PROBE loaded=False module=ortc.compat" in compat.stderr


def test_module_form_and_exit_code(tmp_path: Any, model_path: str) -> None:
    (tmp_path / "ortapp.py").write_text(
        "import sys, onnxruntime\n"
        "print(__name__, sys.argv[0].endswith('ortapp.py'), sys.argv[1:], onnxruntime.__name__)\n"
        "sys.exit(3)\n")
    result = run(["-m", "ortc.compat", "-m", "ortapp", "x", "y"], cwd=str(tmp_path))
    assert result.returncode == 3, result.stderr
    # as "python -m ortapp x y": argv[0] is the module's file
    assert result.stdout.strip() == "__main__ True ['x', 'y'] ortc.compat"


def test_script_file_is_absolute_as_python_makes_it(tmp_path: Any) -> None:
    # a script that changes directory and then opens a file next to its __file__
    (tmp_path / "data.txt").write_text("found")
    (tmp_path / "app.py").write_text(
        "import os, sys\n"
        "os.chdir('/')\n"
        "print(__file__, sys.argv[0])\n"
        "print(open(os.path.join(os.path.dirname(__file__), 'data.txt')).read())\n")
    plain = run(["app.py"], cwd=str(tmp_path))
    compat = run(["-m", "ortc.compat", "app.py"], cwd=str(tmp_path))
    assert plain.returncode == 0, plain.stderr
    assert compat.returncode == 0, compat.stderr
    assert compat.stdout == plain.stdout == f"{tmp_path / 'app.py'} app.py\nfound\n"


def test_usage_without_arguments_and_a_missing_script() -> None:
    result = run(["-m", "ortc.compat"])
    assert result.returncode == 2 and "usage: python -m ortc.compat" in result.stderr
    result = run(["-m", "ortc.compat", "/nonexistent/app.py"])
    assert result.returncode == 2 and "can't open file '/nonexistent/app.py'" in result.stderr
    assert "Traceback" not in result.stderr


def test_install_resolves_every_module_path() -> None:
    code = (
        "import ortc.compat\n"
        "ortc.compat.install()\n"
        "import onnxruntime, onnxruntime.capi\n"
        "import onnxruntime.capi.onnxruntime_pybind11_state as S\n"
        "from onnxruntime.capi._pybind_state import Fail, InvalidArgument\n"
        "from onnxruntime.capi.onnxruntime_inference_collection import InferenceSession\n"
        "from onnxruntime import SessionOptions, OrtValue, IOBinding, NodeArg\n"
        "import ortc\n"
        "assert onnxruntime is ortc.compat and S is ortc.compat\n"
        "assert issubclass(Fail, ortc.Fail) and InferenceSession is ortc.compat.InferenceSession\n"
        "assert ortc.compat.installed()\n"
        "print(onnxruntime.__version__ == ortc.load().version)\n" + PROBE)
    result = run(["-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert "PROBE loaded=False module=ortc.compat" in result.stderr


def test_install_after_the_real_one_warns() -> None:
    code = ("import warnings, onnxruntime, ortc.compat\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    ortc.compat.install()\n"
            "import onnxruntime as again\n"
            "print(again is ortc.compat, [str(x.message)[:40] for x in w])\n")
    result = run(["-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("True [\"ortc.compat.install(): onnxruntime's own\"]")


def test_session_from_before_fork_works_in_fork_pool_workers() -> None:
    """The prefork pattern (gunicorn --preload, celery, a Pool after loading a model): a
    module-level InferenceSession used in multiprocessing fork workers. The child rebuilds the
    session from its recipe on first use; the parent's ORT objects are never touched there."""
    code = ("import multiprocessing as mp, os, sys, numpy as np\n"
            "sys.path.insert(0, 'tests')\n"
            "import models, ortc.compat as ort\n"
            "s = ort.InferenceSession(models.add_model(np.float32, [3]))\n"
            "def work(i):\n"
            "    x = np.full(3, float(i), np.float32)\n"
            "    return os.getpid(), s.run(None, {'a': x, 'b': x})[0].tolist()\n"
            "if __name__ == '__main__':\n"
            "    with mp.get_context('fork').Pool(2) as pool:\n"
            "        got = pool.map(work, range(6))\n"
            "    assert len({pid for pid, _ in got} - {os.getpid()}) >= 1\n"
            "    print([out for _, out in got], work(1)[1])\n")
    result = run(["-c", code], cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "[[0.0, 0.0, 0.0], [2.0, 2.0, 2.0], [4.0, 4.0, 4.0], [6.0, 6.0, 6.0], "
        "[8.0, 8.0, 8.0], [10.0, 10.0, 10.0]] [2.0, 2.0, 2.0]")


def test_onnxruntime_script_under_pypy(pypy_python: str, model_path: str) -> None:
    """The point of a compat layer: the same onnxruntime program on PyPy, which has no
    onnxruntime package, prints what it prints on CPython with onnxruntime."""
    import ortc

    plain = run([SCRIPT, model_path, "pypy"])
    assert plain.returncode == 0, plain.stderr
    env = dict(os.environ, PYTHONPATH=ROOT, ORTC_LIBRARY=ortc.version().library_path)
    pypy = subprocess.run([pypy_python, "-m", "ortc.compat", SCRIPT, model_path, "pypy"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert pypy.returncode == 0, pypy.stderr[-3000:]
    assert pypy.stdout == plain.stdout
