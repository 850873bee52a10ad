"""The env and ORT's log messages in Python logging (logger ortc.ort)."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

import models
import ortc
from ortc import LoggingLevel


def test_ort_messages_reach_python_logging(caplog) -> None:
    env = ortc.get_env()
    old = env.log_severity_level
    try:
        env.log_severity_level = LoggingLevel.VERBOSE
        with caplog.at_level(logging.DEBUG, logger="ortc.ort"):
            ortc.Session(models.add_model(), logid="logging-test").close()
        records = [r for r in caplog.records if r.name == "ortc.ort"]
        assert records, "ORT logs at VERBOSE while creating a session"
        assert any(getattr(r, "ort_logid", "") for r in records)
        assert all(hasattr(r, "ort_category") and hasattr(r, "ort_code_location")
                   for r in records)
    finally:
        env.log_severity_level = old
    assert env.log_severity_level == old


def test_logging_from_many_threads_and_ort_threads(caplog) -> None:
    env = ortc.get_env()
    old = env.log_severity_level
    seen: set[int] = set()

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.add(record.thread)

    handler = Catch()
    logger = logging.getLogger("ortc.ort")
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        env.log_severity_level = LoggingLevel.VERBOSE
        s = ortc.Session(models.mlp_model(2, 8, "batch"), intra_op_num_threads=2)

        def work() -> None:
            for _ in range(5):
                s.run(None, {"x": np.ones((3, 8), np.float32)})

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        env.log_severity_level = old
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    assert len(seen) >= 2


def test_a_failing_log_handler_does_not_break_ort() -> None:
    class Boom(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            raise RuntimeError("handler failure")

        def handleError(self, record: logging.LogRecord) -> None:
            raise RuntimeError("handleError failure")

    logger = logging.getLogger("ortc.ort")
    h = Boom()
    logger.addHandler(h)
    env = ortc.get_env()
    old = env.log_severity_level
    try:
        env.log_severity_level = LoggingLevel.VERBOSE
        s = ortc.Session(models.add_model())
        a = np.ones(1, np.float32)
        assert s.run(None, {"a": a, "b": a})[0].tolist() == [2.0]
    finally:
        env.log_severity_level = old
        logger.removeHandler(h)


def test_logging_at_interpreter_exit_is_safe() -> None:
    from conftest import run_python

    code = ("import logging, numpy as np, ortc, models\n"
            "logging.basicConfig(level=logging.DEBUG)\n"
            "ortc.get_env().log_severity_level = ortc.LoggingLevel.VERBOSE\n"
            "s = ortc.Session(models.mlp_model(2, 8, 'batch'), intra_op_num_threads=2)\n"
            "s.run(None, {'x': np.ones((2, 8), np.float32)})\n"
            "print('done')\n")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("done")


def test_the_logging_contract_holds_when_the_application_never_imported_logging() -> None:
    """ortc imports ``logging`` only when ORT sends a message. Until the application imports
    it nobody can have configured it, so the env's severity is logging's default (WARNING), a
    session and its runs do not import it, and the first message ORT sends still reaches the
    ``ortc.ort`` logger (logging's last-resort handler prints WARNING and up to stderr)."""
    from conftest import run_python

    code = ("import sys, numpy as np, ortc, models\n"
            "s = ortc.Session(models.add_model())\n"
            "s.run(None, {'a': np.ones(1, np.float32), 'b': np.ones(1, np.float32)})\n"
            "s.recipe(); s.inputs; s.metadata; ortc.Value.from_numpy(np.ones(2))\n"
            "print(ortc.get_env().log_severity_level.name, 'logging' in sys.modules)\n"
            "stopped = ortc.Session(models.endless_model(64), intra_op_num_threads=1)\n"
            "try:\n"
            "    stopped.run(None, {'x': np.ones((64, 64), np.float32)}, timeout=0.05)\n"
            "except ortc.RunTimeout:\n"
            "    pass\n"
            "print('logging' in sys.modules)\n")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # a stopped Loop makes ORT log its failure at ERROR: logging is imported then, and its
    # last-resort handler prints the message
    assert proc.stdout.splitlines()[-2:] == ["WARNING False", "True"], proc.stdout
    assert "terminate" in proc.stderr.lower(), proc.stderr[-2000:]


def test_a_logger_configured_before_the_first_session_sets_the_env_severity() -> None:
    from conftest import run_python

    code = ("import numpy as np, ortc, models, logging\n"
            "logging.getLogger('ortc.ort').setLevel(logging.INFO)\n"
            "print(ortc.get_env().log_severity_level.name)\n")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["INFO"], proc.stdout


def test_telemetry_toggles() -> None:
    env = ortc.get_env()
    env.disable_telemetry()
    env.enable_telemetry()
    env.disable_telemetry()


def test_providers_listed() -> None:
    assert "CPUExecutionProvider" in ortc.get_env().providers()
    with pytest.raises(ValueError):
        ortc.get_env().log_severity_level = 9



_FORKS_AND_EXITS = r"""
import os, sys, time, numpy as np, ortc, models
s = ortc.Session(models.add_model())
s.run(None, {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})
print(os.environ.get("ORT_DISABLE_TELEMETRY"))
pid = os.fork()
if pid == 0:
    s.run(None, {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})  # rebuilt here
    sys.exit(0)  # a normal exit: ORT's exit handlers run in the child
end = time.monotonic() + 30
while time.monotonic() < end:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print("exited", os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    print("hung")
"""


def test_a_forked_child_exits_normally() -> None:
    """ORT 1.29 and later start a telemetry uploader thread in CreateEnv, and a child forked
    afterwards hangs in ORT's exit handlers when it leaves through exit() (conformance check
    env.fork-child-exits). ortc sets ORT_DISABLE_TELEMETRY=1 before it creates the env, unless
    the variable is set, so a forked child (one that even rebuilt and ran the session) exits.
    Run without the CI variables under which ORT keeps its telemetry off by itself."""
    import os
    import subprocess
    import sys

    from conftest import ROOT
    from ortc.conformance.checks.env import TELEMETRY_QUIETING

    env = {k: v for k, v in os.environ.items() if k not in TELEMETRY_QUIETING}
    env["PYTHONPATH"] = ROOT + os.pathsep + os.path.join(ROOT, "tests")
    proc = subprocess.run([sys.executable, "-c", _FORKS_AND_EXITS], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1", "exited", "0"], proc.stdout


def test_an_explicit_telemetry_choice_is_kept() -> None:
    """``ORT_DISABLE_TELEMETRY`` set by the user (0 keeps ORT's telemetry) is left as it is."""
    from conftest import run_python

    proc = run_python("import os, ortc\nortc.get_env()\nprint(os.environ['ORT_DISABLE_TELEMETRY'])\n",
                      env={"ORT_DISABLE_TELEMETRY": "0"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["0"]
