"""The four run entry points side by side: the same signature where they overlap, the same
checks, the same cleanup, and timeout= / Ctrl-C on each (python-soundfile tests its parallel
entry points the same way)."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np
import pytest

import models
import ortc
from conftest import ROOT

ONE = np.ones(1, np.float32)


def _slow() -> ortc.Session:
    # a Loop of 2**62 MatMuls: runs until stopped, on any machine
    return ortc.Session(models.endless_model(), intra_op_num_threads=2)


def _entries(s: ortc.Session, feeds: dict[str, Any]) -> dict[str, Callable[..., Any]]:
    """Each entry point as a call taking (run_options, **kw) that returns once the run ended."""
    def bound(run_options: Any = None, **kw: Any) -> Any:
        b = s.io_binding()
        for name, data in feeds.items():
            b.bind_input(name, data)
        for out in s.outputs:
            b.bind_output(out.name)
        try:
            return s.run_with_binding(b, run_options, **kw)
        finally:
            b.close()

    return {
        "run": lambda ro=None, **kw: s.run(None, feeds, ro, **kw),
        "run_with_values": lambda ro=None, **kw: s.run_with_values(None, feeds, ro, **kw),
        "run_async": lambda ro=None, **kw: s.run_async(None, feeds, ro, **kw).result(60),
        "run_with_binding": bound,
    }


ENTRY_NAMES = ["run", "run_with_values", "run_async", "run_with_binding"]


def test_signatures_agree() -> None:
    sigs = {n: inspect.signature(getattr(ortc.Session, n)) for n in ENTRY_NAMES}
    for name, sig in sigs.items():
        params = sig.parameters
        assert params["run_options"].default is None, name
        assert params["timeout"].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert params["timeout"].default is None, name
    for name in ("run", "run_with_values", "run_async"):
        assert list(sigs[name].parameters)[:4] == ["self", "output_names", "feeds",
                                                    "run_options"], name


@pytest.mark.parametrize("entry", ENTRY_NAMES)
def test_bad_run_options_is_a_type_error(entry: str) -> None:
    s = ortc.Session(models.add_model())
    with pytest.raises(TypeError, match="run_options must be an ortc.RunOptions"):
        _entries(s, {"a": ONE, "b": ONE})[entry]("fast please")


@pytest.mark.parametrize("entry", ENTRY_NAMES)
def test_closed_run_options_raise_closed_error(entry: str) -> None:
    s = ortc.Session(models.add_model())
    ro = ortc.RunOptions()
    ro.close()
    before = ortc.live_handles().get("Value", 0)
    with pytest.raises(ortc.ClosedError, match="RunOptions is closed"):
        _entries(s, {"a": ONE, "b": ONE})[entry](ro)
    assert ortc.live_handles().get("Value", 0) == before  # nothing left behind


@pytest.mark.parametrize("entry", ENTRY_NAMES)
@pytest.mark.parametrize("timeout", [-1, float("nan"), "1", True, np.bool_(True), np.float32(-1)])
def test_bad_timeout_is_a_value_error(entry: str, timeout: Any) -> None:
    s = ortc.Session(models.add_model())
    with pytest.raises(ValueError, match="timeout must be a number of seconds"):
        _entries(s, {"a": ONE, "b": ONE})[entry](timeout=timeout)


@pytest.mark.parametrize("entry", ENTRY_NAMES)
@pytest.mark.parametrize("timeout", [60, np.float32(60), np.int64(60), 10 ** 400],
                         ids=["int", "np.float32", "np.int64", "beyond-float"])
def test_generous_timeout_returns_the_same_result(entry: str, timeout: Any) -> None:
    """numpy's scalars are numbers of seconds too (a computed timeout often is one: they
    were refused as 'not a number'), and an int too large for a float is forever."""
    s = ortc.Session(models.add_model(), intra_op_num_threads=2)
    calls = _entries(s, {"a": ONE, "b": ONE})
    plain, timed = calls[entry](), calls[entry](timeout=timeout)
    if entry == "run_with_binding":
        assert plain is None and timed is None
    elif entry == "run_with_values":
        assert [v.numpy().tolist() for v in plain] == [v.numpy().tolist() for v in timed]
    else:
        assert [a.tolist() for a in plain] == [a.tolist() for a in timed] == [[2.0]]


@pytest.mark.parametrize("entry", ENTRY_NAMES)
@pytest.mark.parametrize("own_options", [False, True], ids=["private", "given"])
def test_timeout_stops_every_entry_point(entry: str, own_options: bool) -> None:
    s = _slow()
    ro = ortc.RunOptions() if own_options else None
    calls = _entries(s, {"x": np.ones((256, 256), np.float32)})
    t0 = time.monotonic()
    with pytest.raises(ortc.RunTimeout):
        calls[entry](ro, timeout=0.2)
    assert time.monotonic() - t0 < 20  # stopped (it has no natural end)
    if ro is not None:  # given options are re-armed: the next run is not terminated
        small = ortc.Session(models.add_model(), intra_op_num_threads=2)
        assert _entries(small, {"a": ONE, "b": ONE})[entry](ro) is not None or \
            entry == "run_with_binding"


CHILD = r'''
import json, sys, time, numpy as np, ortc, models
entry = sys.argv[1]
s = ortc.Session(models.endless_model(), intra_op_num_threads=1)
x = np.ones((256, 256), np.float32)
b = s.io_binding(); b.bind_input("x", x); b.bind_output(s.outputs[0].name)
calls = {"run": lambda: s.run(None, {"x": x}),
         "run_with_values": lambda: s.run_with_values(None, {"x": x}),
         "run_with_binding": lambda: s.run_with_binding(b)}
print("ready", flush=True)
t0 = time.time()
try:
    calls[entry]()
    outcome = "finished"
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
print(json.dumps({"outcome": outcome, "ran_for": time.time() - t0}), flush=True)
'''


@pytest.mark.parametrize("entry", ["run", "run_with_values", "run_with_binding"])
def test_ctrl_c_stops_every_blocking_entry_point(entry: str) -> None:
    """run_async is left out on purpose: its run is not on the main thread (Ctrl-C interrupts
    the wait on the Future; run_options.terminate() or timeout= stop the run)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests"))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, entry], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result["outcome"] == "KeyboardInterrupt"
    assert result["ran_for"] < 10


@pytest.mark.parametrize("entry", ["run", "run_with_values", "run_async"])
def test_output_names_are_read_once(entry: str) -> None:
    """Output names given as a one-shot iterable (a generator) are read once: run_async read
    them twice and converted nothing the second time."""
    s = ortc.Session(models.add_model(), intra_op_num_threads=2)
    names = (n for n in ["c"])
    feeds = {"a": ONE, "b": ONE}
    if entry == "run":
        out = s.run(names, feeds)
    elif entry == "run_with_values":
        out = [v.numpy() for v in s.run_with_values(names, feeds)]
    else:
        out = s.run_async(names, feeds).result(60)
    assert [a.tolist() for a in out] == [[2.0]]
