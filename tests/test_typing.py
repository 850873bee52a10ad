"""Typing that reaches users: ``mypy --strict`` is clean on the package (configured in
pyproject.toml's [tool.mypy], with types-cffi), and a user's code keeps its types inside
``with`` blocks (``Handle.__enter__`` returns the object's own type)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SNIPPET = '''
import numpy as np
import ortc

x = np.ones((2, 3), np.float32)
with ortc.Session("model.onnx") as s:
    reveal_type(s)
    reveal_type(s.run(None, {"x": x}))
    reveal_type(s.inputs)
    with s.io_binding() as b:
        reveal_type(b)
    s.run(None, 3)                      # a wrong call is caught inside the with block
with ortc.SessionOptions(intra_op_num_threads=1) as o:
    reveal_type(o)
with ortc.RunOptions() as ro:
    reveal_type(ro)
with ortc.Value.from_numpy(x) as v:
    reveal_type(v)
    reveal_type(v.numpy())
reveal_type(ortc.rules())               # loaded on first use (ortc.__getattr__), still typed
reveal_type(ortc.SparseTensor.coo)
'''

REVEALED = [
    (7, "ortc.session.Session"),
    (8, "list[numpy.ndarray[Any, numpy.dtype[Any]] | list[numpy.ndarray[Any, numpy.dtype[Any]] "
         "| dict[str | int, int | float | str]] | dict[str | int, int | float | str] "
         "| ortc.sparse.SparseTensor | None]"),
    (9, "list[ortc.typeinfo.NodeArg]"),
    (11, "ortc.binding.IoBinding"),
    (14, "ortc.session_options.SessionOptions"),
    (16, "ortc.run_options.RunOptions"),
    (18, "ortc.value.Value"),
    (20, "list[dict[str, Any]]"),
]


def _mypy(*args: str, cwd: str = ROOT) -> subprocess.CompletedProcess[str]:
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is not installed: pip install -e '.[test]' (it brings mypy, types-cffi)")
    env = dict(os.environ, MYPYPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir",
                           os.path.join(ROOT, ".mypy_cache"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


def test_mypy_strict_is_clean_on_the_package() -> None:
    assert _has_types_cffi(), "types-cffi is not installed: pip install -e '.[test]'"
    # the settings (strict, files, python_version) come from pyproject.toml's [tool.mypy]
    proc = _mypy()
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert proc.stdout.startswith("Success: no issues found"), proc.stdout


def _has_types_cffi() -> bool:
    from importlib import metadata

    try:
        metadata.distribution("types-cffi")
    except metadata.PackageNotFoundError:
        return False
    return True


def test_user_code_keeps_its_types_inside_with(tmp_path: Path) -> None:
    snippet = tmp_path / "user.py"
    snippet.write_text(SNIPPET)
    proc = _mypy("--strict", "--follow-imports=silent", "--config-file",
                 os.path.join(ROOT, "pyproject.toml"), str(snippet), cwd=str(tmp_path))
    # (older mypy spells builtins with their module: builtins.list)
    notes = {int(m.group(1)): m.group(2).replace("builtins.", "") for m in
             re.finditer(r"user\.py:(\d+): note: Revealed type is \"(.*)\"", proc.stdout)}
    for line, expected in REVEALED:
        assert notes.get(line) == expected, (line, notes.get(line), proc.stdout)
    assert notes.get(19, "").startswith("numpy.ndarray"), proc.stdout
    assert notes.get(21, "").endswith("-> ortc.sparse.SparseTensor"), proc.stdout
    errors = [x for x in proc.stdout.splitlines() if ": error:" in x]
    assert len(errors) == 1 and "user.py:12:" in errors[0] and "run" in errors[0], proc.stdout
