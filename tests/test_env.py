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
