"""The core's protocols, each under every interpreter ortc declares (this CPython, CPython 3.9,
PyPy 3.9), through tests/core_check.py:

* a storm of KeyboardInterrupts over ``run``, ``run_with_values``, ``run_with_binding`` and a
  binding rebound to Values before each of its runs (the marker's entries on a handle
  argument) leaves no guard counting a call in flight, never turns into another exception,
  and leaves everything closable from another thread (an entry lives only while the frame
  that made it is on its thread's stack: ortc/_guard.py);
* Ctrl-C stops a run after another part of the application (asyncio) set the signal wakeup
  fd, and that part's own signals still reach it (ortc/_interrupt.py chains the two);
* run_async failing anywhere between its start and ORT's RunAsync leaves nothing in use and
  the session releasable (ortc/_run.py: one context, closed here on failure); a Ctrl-C the
  moment ORT took the job leaves it to its completion (the job's claim, ortc/_callbacks.py:
  before that claim, an interrupt made run_async release what ORT was running, and the
  process aborted);
* a handle argument a marker names is held for the call: closing it from another thread during
  the run is refused.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import interpreters
import models

WHICH = ["this", "cpython3.9", "pypy"]


@pytest.fixture(scope="module")
def model_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("core")
    add, endless = folder / "add.onnx", folder / "endless.onnx"
    add.write_bytes(models.add_model(np.float32, [4]))
    endless.write_bytes(models.endless_model())
    return str(add), str(endless)


def _check(which: str, case: str, files: tuple[str, str]) -> dict[str, Any]:
    python = {"this": lambda: sys.executable, "cpython3.9": interpreters.cpython39,
              "pypy": interpreters.pypy}[which]()
    proc = interpreters.run_script(python, "core_check.py", case, *files, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = {"this": "CPython", "cpython3.9": "CPython 3.9", "pypy": "PyPy"}[which]
    assert got["python"].startswith(expected), got["python"]
    return got


@pytest.mark.parametrize("which", WHICH)
def test_an_interrupt_storm_leaves_no_call_in_flight(which: str, model_files: Any) -> None:
    got = _check(which, "storm", model_files)
    assert got["interrupted"] >= 300 and got["completed"] >= 300, got
    assert got["others"] == [], got  # every exception was the KeyboardInterrupt itself
    assert not any(got["busy"].values()), got
    assert got["right"] is True and got["closed"] == ["ok"], got


@pytest.mark.parametrize("which", WHICH)
def test_ctrl_c_stops_a_run_after_asyncio_took_the_wakeup_fd(which: str,
                                                             model_files: Any) -> None:
    got = _check(which, "wakeup", model_files)
    assert got["outcome"] == "KeyboardInterrupt", got
    assert got["seconds"] < 30, got
    assert got["asyncio_handler"] is True, got


@pytest.mark.parametrize("which", WHICH)
def test_a_run_async_that_fails_before_ort_takes_it_leaves_nothing_in_use(
        which: str, model_files: Any) -> None:
    got = _check(which, "async_setup", model_files)
    for step in ("prepare", "run_async", "deadline"):
        assert got[step] == "Injected", (step, got)
        assert got[step + "_busy"] == [] and got[step + "_children"] == 0, (step, got)
    assert got["works"] == [2.0] * 4 and got["released"] is True, got


@pytest.mark.parametrize("which", WHICH)
def test_a_ctrl_c_the_moment_ort_took_a_run_async_job_leaves_the_job_to_its_completion(
        which: str, model_files: Any) -> None:
    got = _check(which, "async_interrupt", model_files)
    assert got["outcome"] == "KeyboardInterrupt", got
    assert got["pending"] == 0 and got["busy"] == [] and got["children"] == 0, got
    assert got["works"] == [2.0] * 4 and got["released"] is True, got


@pytest.mark.parametrize("which", WHICH)
def test_an_argument_in_use_by_a_run_cannot_be_closed(which: str, model_files: Any) -> None:
    got = _check(which, "arguments", model_files)
    assert got["close"] == "ConcurrentUseError" and got["closed_meanwhile"] is False, got
    assert got["run"] == ["Fail"] and got["closed_after"] is True, got
