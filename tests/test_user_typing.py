"""Typing as a user's strict script sees it: ``mypy --strict`` on scripts written against the
installed API (every Python block of the README among them) passes, shows the types an editor
would show for results and options (``reveal_type``), and flags a misspelt option, a wrongly
typed option value and providers given positionally before anything runs.

One mypy run checks every script (a run costs seconds); each assertion reads its file's lines.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

NDARRAY = "numpy.ndarray[Any, numpy.dtype[Any]]"
MAP = "dict[str | int, int | float | str]"
#: ortc.RunOutput as mypy spells it out
RUN_OUTPUT = f"{NDARRAY} | list[{NDARRAY} | {MAP}] | {MAP} | ortc.sparse.SparseTensor | None"

# what an editor shows, line by line (reveal_type's notes)
REVEALS = '''\
from concurrent.futures import Future
import numpy as np
import ortc

x = np.ones((2, 3), np.float32)
s = ortc.Session("model.onnx", intra_op_num_threads=1, providers=["CPUExecutionProvider"])
reveal_type(s.run(None, {"x": x}))
reveal_type(s.run_with_values(None, {"x": x}))
reveal_type(s.run_async(None, {"x": x}))
b = s.io_binding()
reveal_type(b.get_outputs())
reveal_type(b.get_output_values())
reveal_type(ortc.Value.from_numpy(x).to_python())
o = ortc.SessionOptions(intra_op_num_threads=1, graph_optimization_level=1)
reveal_type(o.intra_op_num_threads)
reveal_type(o.graph_optimization_level)
reveal_type(o.execution_mode)
reveal_type(o.enable_profiling)
reveal_type(o.optimized_model_filepath)
reveal_type(o.log_severity_level)
ro = ortc.RunOptions(tag="batch-7", log_severity_level=ortc.LoggingLevel.ERROR)
reveal_type(ro.tag)
reveal_type(ro.log_severity_level)
reveal_type(ro.log_verbosity_level)
reveal_type(o.update(logid="a"))
[out] = s.run_with_values(None, {"x": x})
reveal_type(out.numpy())
[y] = s.run(None, {"x": x})
if isinstance(y, np.ndarray):
    reveal_type(y)
'''

REVEALED = {
    7: f"list[{RUN_OUTPUT}]",
    8: "list[ortc.value.Value]",
    9: f"concurrent.futures._base.Future[list[{RUN_OUTPUT}]]",
    11: f"list[{RUN_OUTPUT}]",
    12: "list[ortc.value.Value]",
    13: RUN_OUTPUT,
    15: "int",
    16: "ortc._enums.GraphOptimizationLevel",
    17: "ortc._enums.ExecutionMode",
    18: "bool",
    19: "str | os.PathLike[str]",
    20: "ortc._enums.LoggingLevel",
    22: "str",
    23: "ortc._enums.LoggingLevel | None",  # None until set (the session's level)
    24: "int",
    25: "ortc.session_options.SessionOptions",
    27: "numpy.ndarray[Any, Any]",
    30: NDARRAY,
}

# each marked line must be a mypy error of that code; unmarked lines must pass
MISTAKES = '''\
import numpy as np
import ortc

ortc.SessionOptions(intra_op_num_thread=1)                 # E: arg-type  misspelt keyword
ortc.SessionOptions(intra_op_num_threads="2")              # E: arg-type  a str thread count
o = ortc.SessionOptions()
o.intra_op_num_thread = 1                                  # E: attr-defined  misspelt attribute
o.intra_op_num_threads = "2"                               # E: assignment  wrongly typed value
o.enable_profiling = "yes"                                 # E: assignment
o.graph_optimization_level = "all"                         # E: assignment
o.update(logd="x")                                         # E: arg-type
o.update(logid=3)                                          # E: arg-type
ortc.Session("m.onnx", intra_op_num_thred=1)               # E: arg-type
ortc.Session("m.onnx", enable_profiling="yes")             # E: arg-type
ortc.Session("m.onnx", None, ["CPUExecutionProvider"])     # E: arg-type  providers positionally
ortc.Session("m.onnx", ["CPUExecutionProvider"])           # E: arg-type  in the options' place
ro = ortc.RunOptions(tg="x")                               # E: arg-type
ro.tga = "x"                                               # E: attr-defined
ro.log_verbosity_level = 2.5                               # E: assignment
ro.terminate = True                                        # E: method-assign
ortc.RunOptions(log_severity_level="2")                    # E: arg-type
s = ortc.Session("m.onnx", intra_op_num_threads=1, enable_cpu_mem_arena=False)
ortc.SessionOptions().graph_optimization_level = ortc.GraphOptimizationLevel.ENABLE_ALL
ortc.SessionOptions().graph_optimization_level = 2
[y] = s.run(None, {"x": np.ones(3, np.float32)})
y.sum()                                                    # E: union-attr  may be a list
'''


def _readme_blocks() -> list[str]:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[int, list[str]]]:
    """mypy --strict's notes and errors per file and line, for every script here."""
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is not installed: pip install -e '.[test]'")
    tmp = tmp_path_factory.mktemp("user_typing")
    files = {"reveals.py": REVEALS, "mistakes.py": MISTAKES}
    files.update({f"readme_{i}.py": block for i, block in enumerate(_readme_blocks())})
    for name, text in files.items():
        (tmp / name).write_text(text)
    # the user's view: ortc as an installed, typed package (py.typed), numpy's own stubs;
    # the checkout's [tool.mypy] names the Python version its stubs need (see pyproject.toml)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--config-file",
         os.path.join(ROOT, "pyproject.toml"), "--cache-dir", os.path.join(ROOT, ".mypy_cache"),
         *files], cwd=str(tmp), env=dict(os.environ, MYPYPATH=ROOT), capture_output=True,
        text=True, timeout=900)
    found: dict[str, dict[int, list[str]]] = {name: {} for name in files}
    for m in re.finditer(r"^(\w+\.py):(\d+): (note|error): (.*)$", proc.stdout, re.M):
        found[m.group(1)].setdefault(int(m.group(2)), []).append(f"{m.group(3)}: {m.group(4)}")
    assert "Found" in proc.stdout or "Success" in proc.stdout, proc.stdout + proc.stderr
    found["_stdout"] = {0: [proc.stdout]}
    return found


def test_the_readme_blocks_pass_mypy_strict(checked: dict[str, dict[int, list[str]]]) -> None:
    blocks = [name for name in checked if name.startswith("readme_")]
    assert len(blocks) >= 2, "the README's Python blocks were not found"
    for name in blocks:
        errors = [f"{line}: {e}" for line, items in checked[name].items() for e in items
                  if e.startswith("error")]
        assert not errors, (name, errors, checked["_stdout"][0])


def test_an_editor_shows_precise_types(checked: dict[str, dict[int, list[str]]]) -> None:
    notes = {line: [n.split("Revealed type is ", 1)[1].strip('"').replace("builtins.", "")
                    for n in items if "Revealed type is" in n]
             for line, items in checked["reveals.py"].items()}
    for line, expected in REVEALED.items():
        assert notes.get(line) == [expected], (line, REVEALS.splitlines()[line - 1],
                                               notes.get(line))
    shown = " ".join(t for ts in notes.values() for t in ts)
    # no Any but numpy's own (an array of any shape and dtype)
    assert "Any" not in shown.replace("[Any, numpy.dtype[Any]]", "").replace("[Any, Any]", ""), \
        shown
    errors = [e for items in checked["reveals.py"].values() for e in items if e.startswith("error")]
    assert not errors, errors


def test_a_misspelt_option_or_a_wrongly_typed_value_is_a_mypy_error(
        checked: dict[str, dict[int, list[str]]]) -> None:
    got = checked["mistakes.py"]
    for number, line in enumerate(MISTAKES.splitlines(), 1):
        errors = [e for e in got.get(number, []) if e.startswith("error")]
        marker = re.search(r"# E: ([\w-]+)", line)
        if marker is None:
            assert not errors, (number, line, errors)
        else:
            assert any(e.endswith(f"[{marker.group(1)}]") for e in errors), (number, line, errors)


def test_the_keywords_are_the_attributes() -> None:
    """SessionOptions' keywords (its constructor, update, Session's) and RunOptions' are its
    settable attributes, with the same types: the three signatures cannot drift apart."""
    import inspect

    import ortc
    from ortc import run_options, session_options

    settings = session_options._SETTINGS
    for fn, skip in ((ortc.SessionOptions.__init__, ()), (ortc.SessionOptions.update, ()),
                     (ortc.Session.__init__, ("model", "options", "positional", "providers"))):
        params = inspect.signature(fn).parameters
        keywords = {n: p.annotation for n, p in params.items()
                    if p.kind is p.KEYWORD_ONLY and n not in skip}
        assert set(keywords) == settings, (fn, set(keywords) ^ settings)
        assert params["unknown"].kind is inspect.Parameter.VAR_KEYWORD
        for name, annotation in keywords.items():
            setter = ortc.SessionOptions.__annotations__[name]
            assert setter.startswith(f"Setting[{annotation},"), (fn, name, annotation, setter)
    params = inspect.signature(ortc.RunOptions.__init__).parameters
    assert {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY} == run_options._SETTINGS
