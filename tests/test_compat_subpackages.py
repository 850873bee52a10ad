"""The onnxruntime wheel's pure-Python subpackages (quantization, tools, transformers, backend,
datasets) under ortc.compat: loaded from the wheel's own files, their ``import onnxruntime``
resolving to ortc.compat, and what they make (quantized, optimized, converted models and
their outputs) the same as with onnxruntime. Each run is a fresh interpreter: installing
compat as ``onnxruntime`` is for a whole process."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

import ortc.compat
from ortc.compat._install import WheelSubpackages, wheel_directory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = os.path.join(ROOT, "tests", "compat_apps", "ort_subpackages.py")
PROBE = ("import sys\n"
         "with open('/proc/self/maps') as _maps:\n"
         "    _loaded = 'onnxruntime_pybind11_state' in _maps.read()\n"
         "sys.stderr.write(f'PROBE loaded={_loaded}\\n')\n")


def python(args: list[str], cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def test_the_subpackages_make_and_run_the_same_models(tmp_path: Any) -> None:
    app = tmp_path / "app.py"
    with open(APP) as f:
        app.write_text(f.read() + PROBE)
    (tmp_path / "plain").mkdir()
    (tmp_path / "compat").mkdir()
    plain = python([str(app), str(tmp_path / "plain")])
    compat = python(["-m", "ortc.compat", str(app), str(tmp_path / "compat")])
    assert plain.returncode == 0, plain.stderr
    assert compat.returncode == 0, compat.stderr
    assert "PROBE loaded=True" in plain.stderr and "PROBE loaded=False" in compat.stderr
    got, want = compat.stdout.splitlines(), plain.stdout.splitlines()
    assert got[-1] == "served by ortc.compat True" and want[-1] == "served by onnxruntime True"
    # the quantized models are the same files (static quantization's ranges come from runs of
    # the model through the session), and every model gives the same outputs, bit for bit
    assert got[:-1] == want[:-1]
    assert [line.split()[0] for line in got[:-1]] == [
        "float", "dynamic", "static", "tools", "transformers", "float16", "backend", "datasets"]


def test_subpackages_load_the_wheels_files_and_never_its_extension() -> None:
    code = ("import sys, ortc.compat\n"
            "ortc.compat.install()\n"
            "import onnxruntime.quantization.calibrate as qu, onnxruntime.tools as tools\n"
            "from onnxruntime import transformers\n"  # (the from-import form, too)
            "from ortc.compat._install import wheel_directory\n"
            "root = wheel_directory()\n"
            "print(qu.__file__.startswith(root), tools.__file__.startswith(root),\n"
            "      transformers.__file__.startswith(root), qu.onnxruntime is ortc.compat)\n"
            "print(sorted(n for n in sys.modules if n.startswith('onnxruntime.capi')))\n"
            "try:\n"
            "    import onnxruntime.no_such_subpackage\n"
            "except ModuleNotFoundError as err:\n"
            "    print(err.name)\n" + PROBE)
    result = python(["-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "True True True True",
        "['onnxruntime.capi', 'onnxruntime.capi._pybind_state', "
        "'onnxruntime.capi.onnxruntime_inference_collection', "
        "'onnxruntime.capi.onnxruntime_pybind11_state']",
        "onnxruntime.no_such_subpackage"]
    assert "PROBE loaded=False" in result.stderr


def test_an_extension_function_compat_lacks_is_an_import_error() -> None:
    # 4-bit weight packing (bitsandbytes' format) is C++ in onnxruntime's extension
    code = ("import ortc.compat\n"
            "ortc.compat.install()\n"
            "try:\n"
            "    import onnxruntime.quantization.matmul_bnb4_quantizer\n"
            "except ImportError as err:\n"
            "    print(type(err).__name__, err.name, 'quantize_matmul_bnb4' in str(err))\n")
    result = python(["-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ImportError", "ortc.compat", "True"]


def test_the_finder_serves_only_while_compat_is_installed() -> None:
    # in this process onnxruntime is the real one (the tests compare against it)
    assert not ortc.compat.installed()
    finder = WheelSubpackages()
    assert finder.find_spec("onnxruntime.quantization") is None


@pytest.mark.parametrize("name", ["onnxruntime.quantization", "onnxruntime.tools",
                                  "onnxruntime.datasets", "onnxruntime.capi", "onnxruntime.nope",
                                  "onnxruntime.quantization.calibrate", "quantization"])
def test_what_the_finder_serves(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    import ortc.compat._install as install_module

    monkeypatch.setattr(install_module, "installed", lambda: True)
    spec = WheelSubpackages().find_spec(name)
    root = wheel_directory()
    assert root is not None and os.path.isfile(os.path.join(root, "capi", "__init__.py"))
    if name.count(".") != 1 or name.endswith((".capi", ".nope")):
        # capi is never served (its extension must not load); deeper names are the
        # subpackage's own to find, through its __path__
        assert spec is None
    else:
        sub = name.rpartition(".")[2]
        assert spec.name == name
        assert spec.origin == os.path.join(root, sub, "__init__.py")
        assert spec.submodule_search_locations == [os.path.join(root, sub)]
