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


def test_the_drainer_delivers_ort_threads_messages_without_importing_logging() -> None:
    """A message of one of ORT's own threads is handed on by ortc's drainer thread, which never
    imports ``logging`` (an import there, cut by a fork on another thread, would leave the
    forked child's own import of it waiting for good). Before the application imports it
    nothing can have configured it, so the drainer sends WARNING and up where logging's
    last-resort handler would (stderr) and drops the rest; once it is imported, the messages
    go to the ``ortc.ort`` logger."""
    from conftest import run_python

    code = ("import sys, time, _thread, ortc.env as env\n"
            "env._queue((env._ORT_WARNING, 'pool warning', 'cat', 'id', 'loc'))\n"
            "env._queue((env._ORT_INFO, 'pool info', 'cat', 'id', 'loc'))\n"
            "end = time.monotonic() + 10\n"
            "while (env._queued or env._draining) and time.monotonic() < end:\n"
            "    time.sleep(0.01)\n"
            "time.sleep(0.1)\n"
            "print('logging' in sys.modules)\n"
            "import logging\n"
            "seen = []\n"
            "class Keep(logging.Handler):\n"
            "    def emit(self, record):\n"
            "        seen.append((record.getMessage(), record.threadName))\n"
            "logging.getLogger('ortc.ort').addHandler(Keep())\n"
            "env._queue((env._ORT_ERROR, 'pool error', 'cat', 'id', 'loc'))\n"
            "end = time.monotonic() + 10\n"
            "while not seen and time.monotonic() < end:\n"
            "    time.sleep(0.01)\n"
            "print(seen[0][0], seen[0][1].startswith('ORT-'))\n")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["False", "pool", "error", "True"], proc.stdout
    assert "pool warning" in proc.stderr and "pool info" not in proc.stderr, proc.stderr[-2000:]


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


_WAITS_FOR_LOGGING_POOL_THREADS = r"""
import faulthandler, gc, logging, sys, threading, time
import numpy as np, ortc, models
faulthandler.dump_traceback_later(30, exit=True)  # a deadlock prints every thread's stack
ortc.get_env().log_severity_level = ortc.LoggingLevel.VERBOSE
main = threading.get_ident()
# a session whose one intra-op pool thread logs as it starts (its thread affinity, at VERBOSE)
starting = ortc.SessionOptions(intra_op_num_threads=2)
starting.add_session_config_entry("session.intra_op_thread_affinities", "1")
# a session whose inter-op pool thread logs during its first run (the arena grows, at VERBOSE)
parallel = ortc.SessionOptions(execution_mode=ortc.ExecutionMode.PARALLEL,
                               inter_op_num_threads=2, intra_op_num_threads=1)
lock = threading.RLock()  # what the handler takes (reentrant: the main thread logs inside too)
records, step = [], []

class Handler(logging.Handler):
    def emit(self, record):
        with lock:
            records.append(record)
        if record.thread == main and not step:
            step.append(1)
            # on the main thread, holding this handler's lock: a session whose pool thread
            # logs as it starts, closed here (ReleaseSession joins that thread) ...
            ortc.Session(models.add_model(), starting).close()
            # ... and one released by a garbage collection here
            s = ortc.Session(models.add_model(), starting)
            s.cycle = s
            del s
            gc.collect()

log = logging.getLogger("ortc.ort")
log.addHandler(Handler())
log.setLevel(logging.DEBUG)
log.propagate = False
ortc.Session(models.add_model(), intra_op_num_threads=1).close()
# a run whose pool thread logs, made while holding the lock the handler takes
s = ortc.Session(models.mlp_model(3, 64, "batch"), parallel)
with lock:
    s.run(None, {"x": np.ones((256, 64), np.float32)})
print("finished", flush=True)
def pool():
    return [r for r in records if r.thread != main]
end = time.monotonic() + 10  # the messages of ORT's threads reach the handler asynchronously
while time.monotonic() < end and not (
        sum("affinity" in r.getMessage() for r in pool()) >= 2
        and any("Arena" in r.getMessage() for r in pool())):
    time.sleep(0.01)
print(sum("affinity" in r.getMessage() for r in pool()),
      any("Arena" in r.getMessage() for r in pool()),
      all(isinstance(r.ort_severity, int) and isinstance(r.ort_category, str)
          and isinstance(r.ort_logid, str) and isinstance(r.ort_code_location, str)
          for r in pool()),
      all(r.created <= time.time() and r.levelno == 10 + 10 * r.ort_severity for r in pool()))
"""


def test_a_thread_waiting_for_ort_threads_that_log_while_it_holds_a_logging_lock() -> None:
    """ORT's pool threads log (VERBOSE: a thread's affinity as it starts, the arena growing in
    a run). A thread that waits inside ORT for them (ReleaseSession joins the pool; Run waits
    for its inter-op threads) while it holds a lock the logging path takes (a handler's own
    lock when a session is closed or collected inside emit; a lock the handler takes around a
    run) deadlocked: the pool thread waited in the log callback for that lock. ortc queues the
    messages of ORT's own threads, and a Python thread hands them to logging, with their fields
    and the ORT thread as the record's thread."""
    from conftest import run_python

    proc = run_python(_WAITS_FOR_LOGGING_POOL_THREADS, timeout=90)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.split("\n")
    assert lines[0] == "finished", proc.stdout
    # both sessions' pool threads' affinity messages, the run's arena message, their fields
    assert lines[1].split() == ["2", "True", "True", "True"], proc.stdout
